/*
 * fuzz_json.c — the JSON reader on arbitrary bytes; what parses must
 * re-serialize and parse again to the same text.
 */
#include <stdlib.h>
#include <string.h>

#include "json/json.h"

const char *const *floe_fuzz_seeds(void);
const char *const *floe_fuzz_seeds(void)
{
	static const char *const seeds[] = {
		"apache-iceberg/core/src/test/resources",
		"iceberg-rust",
		"impala/testdata/data/iceberg_test/iceberg_v3",
		NULL,
	};
	return seeds;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_arena a;
	floe_json *j, *j2;
	floe_buf b1, b2;
	floe_jw w;
	if (size > (1 << 20))
		return 0;
	floe_arena_init(&a, 0);
	floe_buf_init(&b1, 0);
	floe_buf_init(&b2, 0);
	if (floe_json_parse(&j, &a, (const char *)data, size, NULL, NULL) == 0) {
		floe_jw_init(&w, &b1, 0);
		floe_jw_value(&w, j);
		if (floe_jw_finish(&w) == 0) {
			if (floe_json_parse(&j2, &a, (const char *)b1.data, b1.len, NULL, NULL) != 0)
				abort();
			floe_jw_init(&w, &b2, 0);
			floe_jw_value(&w, j2);
			if (floe_jw_finish(&w) != 0 || b1.len != b2.len ||
			    memcmp(b1.data, b2.data, b1.len) != 0)
				abort();
		}
	}
	floe_buf_reset(&b1);
	floe_buf_reset(&b2);
	floe_arena_reset(&a);
	return 0;
}
