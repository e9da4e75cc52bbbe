/*
 * fuzz_avro_schema.c — arbitrary bytes as an Avro schema: what parses must
 * serialize, parse back to an equal tree and serialize to the same text.
 */
#include <stdlib.h>
#include <string.h>

#include "avro/avro_schema.h"

const char *const *floe_fuzz_seeds(void);
const char *const *floe_fuzz_seeds(void)
{
	static const char *const seeds[] = {
		"iceberg-rust/crates/iceberg/testdata/avro_schema_manifest_entry.json",
		"iceberg-rust/crates/iceberg/testdata/avro_schema_manifest_file_v1.json",
		"iceberg-rust/crates/iceberg/testdata/avro_schema_manifest_file_v2.json",
		NULL,
	};
	return seeds;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_arena a;
	floe_avro_schema *s = NULL, *s2 = NULL;
	floe_buf b1, b2;
	if (size > (1 << 20))
		return 0;
	floe_arena_init(&a, 0);
	floe_buf_init(&b1, 0);
	floe_buf_init(&b2, 0);
	if (floe_avro_schema_parse(&s, &a, (const char *)data, size, NULL, NULL) == 0 &&
	    floe_avro_schema_to_json(&b1, s, NULL) == 0) {
		if (floe_avro_schema_parse(&s2, &a, (const char *)b1.data, b1.len, NULL, NULL) != 0)
			abort();
		if (!floe_avro_schema_equal(s, s2))
			abort();
		if (floe_avro_schema_to_json(&b2, s2, NULL) != 0 || b1.len != b2.len ||
		    memcmp(b1.data, b2.data, b1.len) != 0)
			abort();
		/* lookups on whatever came out */
		if (s->type == FLOE_AVRO_RECORD && s->n_fields) {
			if (floe_avro_field_by_name(s, s->fields[0].name) != &s->fields[0])
				abort();
			(void)floe_avro_field_by_id(s, s->fields[0].field_id);
		}
	}
	floe_buf_reset(&b1);
	floe_buf_reset(&b2);
	floe_arena_reset(&a);
	return 0;
}
