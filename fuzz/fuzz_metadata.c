/*
 * fuzz_metadata.c — table metadata JSON: parse arbitrary bytes (gzip and
 * zstd detected); whatever parses must write, parse again and write the same
 * bytes; a builder round trip must not fail on accepted input.
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"

const char *const *floe_fuzz_seeds(void);
const char *const *floe_fuzz_seeds(void)
{
	static const char *const seeds[] = {
		"apache-iceberg/core/src/test/resources",
		"iceberg-go/table/testdata",
		"iceberg-rust/crates/iceberg/testdata/table_metadata",
		"duckdb-iceberg/data/persistent/iceberg",
		"impala/testdata/data/iceberg_test/iceberg_v3/iceberg_v3_deletion_vectors/metadata",
		NULL,
	};
	return seeds;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_metadata *m = NULL, *m2 = NULL;
	floe_buf a, b;
	if (size > (4u << 20))
		return 0;
	if (floe_metadata_parse_file_bytes(&m, data, size, NULL) != 0)
		return 0;
	floe_buf_init(&a, 0);
	floe_buf_init(&b, 0);
	if (floe_metadata_write(&a, m, 0) != 0)
		abort();
	if (floe_metadata_parse(&m2, (const char *)a.data, a.len, NULL) != 0)
		abort(); /* what we write must read back */
	if (floe_metadata_write(&b, m2, 0) != 0 || a.len != b.len || memcmp(a.data, b.data, a.len))
		abort();
	floe_metadata_builder *mb = NULL;
	floe_metadata *m3 = NULL;
	if (floe_metadata_builder_from(&mb, m, NULL) != 0)
		abort();
	if (floe_metadata_builder_finish(&m3, mb, "s3://x/metadata/00001-y.metadata.json",
					 m->last_updated_ms, NULL) != 0)
		abort();
	floe_metadata_free(m3);
	floe_metadata_free(m2);
	floe_metadata_free(m);
	floe_buf_reset(&a);
	floe_buf_reset(&b);
	return 0;
}
