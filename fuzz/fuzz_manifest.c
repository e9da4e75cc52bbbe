/*
 * fuzz_manifest.c — manifest lists and manifests from arbitrary bytes: both
 * readers on every input (against a metadata with a partitioned schema, and
 * without metadata so the manifest's own header is used).
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/manifest.h"

const char *const *floe_fuzz_seeds(void);
const char *const *floe_fuzz_seeds(void)
{
	static const char *const seeds[] = {
		"iceberg-rust/crates/iceberg/testdata",
		"iceberg-go",
		"duckdb-iceberg/data/persistent/equality_deletes/warehouse/mydb/mytable/metadata",
		"duckdb-iceberg/data/persistent/partition_decimal_hugeint/metadata",
		"impala/testdata/data/iceberg_test/iceberg_v3/iceberg_v3_deletion_vectors/metadata",
		"impala/testdata/data/iceberg_test/hadoop_catalog/ice/iceberg_v2_delete_equality_partitioned/metadata",
		NULL,
	};
	return seeds;
}

static const char META[] =
	"{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
	"\"location\":\"s3://b/t\",\"last-sequence-number\":5,\"last-updated-ms\":1,"
	"\"last-column-id\":3,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
	"\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\",\"required\":false,\"type\":"
	"\"long\"},{\"id\":2,\"name\":\"d\",\"required\":false,\"type\":\"date\"},{\"id\":3,"
	"\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}],\"default-spec-id\":0,"
	"\"partition-specs\":[{\"spec-id\":0,\"fields\":[{\"name\":\"d\",\"transform\":"
	"\"identity\",\"source-id\":2,\"field-id\":1000}]}],\"last-partition-id\":1000,"
	"\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}]}";

static int count_entry(const floe_manifest_entry *e, void *payload)
{
	(void)e;
	(*(long *)payload)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static floe_metadata *m;
	floe_arena a;
	floe_manifest_file *mfs;
	size_t n;
	long entries = 0;
	if (size > (8u << 20))
		return 0;
	if (!m && floe_metadata_parse(&m, META, strlen(META), NULL) != 0)
		abort();
	floe_arena_init(&a, 0);
	floe_input *in = floe_input_memory(data, size, "fuzz");
	if (!in)
		return 0;
	if (floe_manifest_list_read(&mfs, &n, &a, in, NULL, NULL) == 0)
		for (size_t i = 0; i < n; i++)
			(void)mfs[i].path;
	floe_manifest_file mf;
	memset(&mf, 0, sizeof(mf));
	mf.path = "fuzz.avro";
	mf.sequence_number = 3;
	mf.added_snapshot_id = 7;
	mf.first_row_id = 10;
	int rc1 = floe_manifest_read(in, m, &mf, NULL, count_entry, &entries, NULL);
	mf.spec_id = 99; /* not in the metadata: the manifest's header decides */
	int rc2 = floe_manifest_read(in, NULL, &mf, NULL, count_entry, &entries, NULL);
	(void)rc1;
	(void)rc2;
	floe_input_close(in);
	floe_arena_reset(&a);
	return 0;
}
