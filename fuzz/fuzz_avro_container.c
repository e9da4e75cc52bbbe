/*
 * fuzz_avro_container.c — arbitrary bytes as an Avro container file: open,
 * look up metadata, decode every record generically, render it as JSON.
 * Must never crash, leak or hang; errors are fine.
 */
#include <string.h>

#include "avro/avro_reader.h"

const char *const *floe_fuzz_seeds(void);
const char *const *floe_fuzz_seeds(void)
{
	static const char *const seeds[] = {
		"arrow-testing/data/avro",
		"iceberg-rust/crates/iceberg/testdata/manifests_lists",
		"iceberg-go/testdata",
		"glaredb/testdata/iceberg",
		"impala/testdata/data/iceberg_test/iceberg_v3/iceberg_v3_deletion_vectors",
		"impala/testdata/data/iceberg_test/hadoop_catalog/ice/iceberg_v2_delete_equality_partitioned",
		"duckdb-iceberg/data/persistent/equality_delete_extra_column",
		NULL,
	};
	return seeds;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_avro_reader_opts o = FLOE_AVRO_READER_OPTS_INIT;
	floe_avro_reader *r = NULL;
	floe_input *in;
	floe_buf out;
	if (size > (4 << 20))
		return 0;
	o.max_header = 1 << 20;
	o.max_block_bytes = 4 << 20;
	o.max_block_count = 1 << 16;
	o.read_chunk = 4096; /* exercise the read-ahead window */
	o.decoder.max_items = 1 << 16;
	if (!(in = floe_input_memory(data, size, "fuzz.avro")))
		return 0;
	floe_buf_init(&out, 1 << 24);
	if (floe_avro_reader_open(&r, in, &o, NULL) == 0) {
		const char *k, *v;
		size_t len;
		(void)floe_avro_reader_meta(r, "format-version", &len);
		for (size_t i = 0; floe_avro_reader_meta_at(r, i, &k, &v, &len); i++)
			;
		for (long n = 0; n < 100000; n++) {
			floe_avro_value val;
			floe_jw w;
			bool eof;
			if (floe_avro_reader_next(&val, &eof, r, NULL) || eof)
				break;
			floe_buf_clear(&out);
			floe_jw_init(&w, &out, 0);
			floe_avro_value_write_json(&w, floe_avro_reader_schema(r), &val);
			if (floe_jw_finish(&w))
				break;
		}
	}
	floe_buf_reset(&out);
	floe_avro_reader_free(r);
	floe_input_close(in);
	return 0;
}
