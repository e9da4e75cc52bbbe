/*
 * fuzz_parquet_file.c — the whole reader on arbitrary files: open, every
 * column, every batch (small batches, CRC checks on), JSON rendering of what
 * was read. Errors are fine; crashes, leaks and sanitizer reports are not.
 */
#include <stdint.h>

#include "arrow/arrow_build.h"
#include "parquet/pjson.h"
#include "parquet/reader.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *const *floe_fuzz_seeds(void);

const char *const *floe_fuzz_seeds(void)
{
	static const char *const seeds[] = {"parquet-testing/data", "parquet-testing/bad_data",
					    "parquet-testing/shredded_variant",
					    "apache-iceberg/parquet/src/testFixtures/resources/encodings",
					    NULL};
	return seeds;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sink = 0;
	floe_input *in = floe_input_memory(data, size, "fuzz.parquet");
	floe_parquet_reader *r = NULL;
	floe_parquet_reader_opts o = FLOE_PARQUET_READER_OPTS_INIT;
	struct ArrowSchema s = {0};
	struct ArrowArray a = {0};
	floe_error err = {0};
	floe_buf json;
	int rc;
	if (!in)
		return 0;
	o.batch_rows = 50;
	o.verify_checksums = true;
	o.max_page_bytes = 64 << 20;
	o.max_page_values = 1 << 22;
	floe_buf_init(&json, 1 << 26);
	rc = floe_parquet_reader_open(&r, in, &o, &err);
	if (!rc)
		rc = floe_parquet_reader_arrow_schema(r, &s, &err);
	for (int batches = 0; !rc && batches < 1000; batches++) {
		bool eof;
		if ((rc = floe_parquet_reader_next(r, &a, &eof, &err)) || eof)
			break;
		floe_buf_clear(&json);
		sink |= floe_parquet__json_rows(&json, &s, &a, 0, a.length, &err);
		floe_arrow_array_release(&a);
	}
	floe_arrow_schema_release(&s);
	floe_parquet_reader_free(r);
	floe_input_close(in);
	floe_buf_reset(&json);
	return sink & 0;
}
