/*
 * fuzz_parquet_footer.c — the footer parser, schema tree and serialiser on
 * arbitrary bytes: parse (Thrift, limits), build the schema tree, write the
 * footer back and parse that again (it must succeed and agree). Inputs that
 * end in "PAR1" are treated as whole files (the footer is taken from the
 * tail), so whole Parquet files are good seeds too.
 */
#include <stdint.h>
#include <string.h>

#include "parquet/meta.h"
#include "parquet/schema.h"
#include "util/alloc.h"
#include "util/cursor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *const *floe_fuzz_seeds(void);

const char *const *floe_fuzz_seeds(void)
{
	static const char *const seeds[] = {"parquet-testing/data", "parquet-testing/bad_data",
					    "parquet-testing/data/geospatial", NULL};
	return seeds;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_arena a, a2;
	floe_parquet_file_meta *m = NULL, *m2 = NULL;
	floe_parquet_schema *s = NULL;
	floe_error err = {0};
	floe_buf out;
	if (size >= 12 && memcmp(data + size - 4, "PAR1", 4) == 0) {
		uint32_t flen = floe_load_u32le(data + size - 8);
		if (flen <= size - 8) {
			data = data + size - 8 - flen;
			size = flen;
		}
	}
	floe_arena_init(&a, 0);
	floe_arena_init(&a2, 0);
	floe_buf_init(&out, 0);
	if (floe_parquet_meta_parse(&m, &a, data, size, "fuzz", &err) == 0) {
		if (floe_parquet_schema_from_meta(&s, m, "fuzz", &err) == 0 &&
		    s->n_nodes != (int)m->n_schema)
			__builtin_trap();
		if (floe_parquet_meta_write(&out, m, &err) == 0 &&
		    floe_parquet_meta_parse(&m2, &a2, out.data, out.len, "again", &err) != 0)
			__builtin_trap(); /* what we write, we must read */
		if (m2 && (m2->n_schema != m->n_schema || m2->n_row_groups != m->n_row_groups))
			__builtin_trap();
	}
	floe_parquet_schema_free(s);
	floe_buf_reset(&out);
	floe_arena_reset(&a);
	floe_arena_reset(&a2);
	return 0;
}
