/*
 * test_iceberg_metadata.c — table metadata: every metadata file in the shared
 * test data parses (or fails for the reason its name says), writing is
 * stable, Java's validation rules, and the builder.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdlib.h>

#include "harness.h"
#include "iceberg/metadata.h"

static int n_files, n_ok;

/* Files that must be rejected (hand-made invalid fixtures). */
static bool expect_invalid(const char *path)
{
	static const char *bad[] = {"MissingSchemaType", "UnsupportedVersion", "CurrentSchemaNotFound",
				    "MissingLastPartitionId", "MissingPartitionSpecs",
				    "MissingSchemas", "MissingSortOrder",
				    "big_query_error/metadata/v0.metadata.json", NULL};
	for (int i = 0; bad[i]; i++)
		if (strstr(path, bad[i]))
			return true;
	return false;
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag != FTW_F)
		return 0;
	bool is_meta = strstr(path, ".metadata.json") != NULL ||
		       (strstr(path, "TableMetadata") && strstr(path, ".json"));
	if (!is_meta || strstr(path, "view"))
		return 0;
	size_t n;
	unsigned char *p = t_read_file(path, &n);
	floe_metadata *m = NULL;
	floe_error err = {0};
	n_files++;
	int rc = floe_metadata_parse_file_bytes(&m, p, n, &err);
	if (expect_invalid(path)) {
		if (rc == 0)
			t_fail(__FILE__, __LINE__, "accepted invalid metadata %s", path);
	} else if (rc) {
		t_fail(__FILE__, __LINE__, "%s: %s", path, err.msg);
	} else {
		n_ok++;
		/* write, parse again, write again: identical */
		floe_buf a, b;
		floe_metadata *m2 = NULL;
		floe_buf_init(&a, 0);
		floe_buf_init(&b, 0);
		if (floe_metadata_write(&a, m, 0) ||
		    floe_metadata_parse(&m2, (const char *)a.data, a.len, &err) ||
		    floe_metadata_write(&b, m2, 0) || a.len != b.len ||
		    memcmp(a.data, b.data, a.len) != 0)
			t_fail(__FILE__, __LINE__, "%s: write/parse round trip differs: %s", path,
			       err.msg);
		floe_metadata_free(m2);
		floe_buf_reset(&a);
		floe_buf_reset(&b);
	}
	floe_metadata_free(m);
	free(p);
	return 0;
}

static void test_all_shared_metadata(void)
{
	n_files = n_ok = 0;
	nftw(t_testdata(""), visit, 16, FTW_PHYS);
	printf("  %d metadata files, %d parsed\n", n_files, n_ok);
	T_CHECK(n_files > 250);
}

static floe_metadata *load(const char *rel, floe_error *err)
{
	size_t n;
	unsigned char *p = t_read_file(t_testdata(rel), &n);
	floe_metadata *m = NULL;
	if (!p) {
		t_fail(__FILE__, __LINE__, "cannot read %s", rel);
		return NULL;
	}
	if (floe_metadata_parse_file_bytes(&m, p, n, err))
		t_fail(__FILE__, __LINE__, "%s: %s", rel, err->msg);
	free(p);
	return m;
}

static void test_v2_valid_fields(void)
{
	floe_error err = {0};
	floe_metadata *m = load("apache-iceberg/core/src/test/resources/TableMetadataV2Valid.json", &err);
	if (!m)
		return;
	T_EQ_INT(m->format_version, 2);
	T_EQ_STR(m->table_uuid, "9c12d441-03fe-4693-9a96-a0705ddf69c1");
	T_EQ_STR(m->location, "s3://bucket/test/location");
	T_EQ_INT(m->last_sequence_number, 34);
	T_EQ_INT(m->current_schema_id, 1);
	T_EQ_INT(m->n_schemas, 2);
	T_EQ_INT(m->current_snapshot_id, 3055729675574597004);
	T_EQ_INT(m->n_snapshots, 2);
	const floe_snapshot *s = floe_metadata_current_snapshot(m);
	T_CHECK(s && s->parent_id == 3051729675574597004);
	T_EQ_INT(s->sequence_number, 1);
	T_EQ_STR(floe_snapshot_summary(s, "operation"), "append");
	const floe_partition_spec *spec = floe_metadata_default_spec(m);
	T_CHECK(spec && spec->n_fields == 1 && spec->fields[0].transform.kind == FLOE_TR_IDENTITY);
	const floe_sort_order *o = floe_metadata_sort_order(m, m->default_sort_order_id);
	T_CHECK(o && o->n_fields == 2);
	T_CHECK(o->fields[1].transform.kind == FLOE_TR_BUCKET && o->fields[1].descending);
	const floe_schema *cs = floe_metadata_current_schema(m);
	T_EQ_INT(cs->n_identifier_field_ids, 2);
	T_CHECK(floe_metadata_ref(m, "main") != NULL);
	floe_metadata_free(m);
}

static void test_v1_and_gzip(void)
{
	floe_error err = {0};
	floe_metadata *m = load("apache-iceberg/core/src/test/resources/TableMetadataV1Valid.json", &err);
	if (m) {
		T_EQ_INT(m->format_version, 1);
		T_EQ_INT(m->n_schemas, 1);
		T_EQ_INT(m->n_specs, 1);
		T_EQ_INT(m->last_partition_id, 1000);
		floe_buf b;
		floe_buf_init(&b, 0);
		T_OK(floe_metadata_write(&b, m, 0), NULL);
		/* v1 writes the deprecated single schema and spec too */
		T_CHECK(strstr((char *)b.data, "\"schema\":{") != NULL);
		T_CHECK(strstr((char *)b.data, "\"partition-spec\":[") != NULL);
		T_CHECK(strstr((char *)b.data, "last-sequence-number") == NULL);
		floe_buf_reset(&b);
		floe_metadata_free(m);
	}
	m = load("duckdb-iceberg/data/persistent/iceberg/lineitem_iceberg_gz/metadata/v2.gz.metadata.json",
		 &err);
	if (m) {
		T_EQ_INT(m->format_version, 1);
		T_CHECK(m->n_snapshots >= 1);
		floe_metadata_free(m);
	}
	m = load("iceberg-go/table/testdata/TableMetadataV2Valid.zstd.metadata.json", &err);
	floe_metadata_free(m);
}

static void test_validation_rules(void)
{
	static const struct {
		const char *json;
		int code;
		const char *msg;
	} cases[] = {
		{"{\"format-version\": 4}", FLOE_EUNSUPPORTED, "format version 4"},
		{"{\"format-version\": 2, \"location\": \"x\"}", FLOE_ECORRUPT, "table-uuid"},
		{"[1]", FLOE_ECORRUPT, "object"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		floe_metadata *m = NULL;
		floe_error err = {0};
		int rc = floe_metadata_parse(&m, cases[i].json, strlen(cases[i].json), &err);
		T_EQ_INT(rc, cases[i].code);
		if (!strstr(err.msg, cases[i].msg))
			t_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", err.msg, cases[i].msg);
		floe_metadata_free(m);
	}
}

static void test_builder_new_table(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_schema *s;
	floe_partition_spec *spec;
	floe_sort_order *order;
	floe_metadata_builder *b;
	floe_metadata *m;
	int32_t lp = 999;
	floe_arena_init(&a, 0);
	T_OK(floe_schema_parse_compact(&s, &a,
				       "id long not null, ts timestamptz, name string, "
				       "loc struct<lat: double, lon: double>, tags list<string>",
				       &err),
	     &err);
	T_EQ_INT(s->root->n_fields, 5);
	T_EQ_INT(s->root->fields[3].id, 4);
	T_EQ_INT(s->root->fields[3].type->fields[0].id, 6); /* after top-level 1..5 */
	T_EQ_INT(s->root->fields[4].type->element_id, 8);
	T_OK(floe_spec_parse_expr(&spec, &a, "bucket(16, id), day(ts), truncate(4, name)", s, 0, &lp,
				  &err),
	     &err);
	T_EQ_STR(spec->fields[0].name, "id_bucket");
	T_EQ_STR(spec->fields[1].name, "ts_day");
	T_EQ_STR(spec->fields[2].name, "name_trunc");
	T_EQ_INT(spec->fields[2].field_id, 1002);
	T_OK(floe_sort_order_parse_expr(&order, &a, "id desc nulls last, name", s, 1, &err), &err);
	floe_strmap props;
	floe_strmap_init(&props);
	T_OK(floe_strmap_set(&props, "format-version", "2"), NULL); /* reserved: dropped */
	T_OK(floe_strmap_set(&props, "write.format.default", "parquet"), NULL);
	T_OK(floe_metadata_builder_new_table(&b, 2, "file:///tmp/wh/db/t/", NULL, s, spec, order,
					     &props, &err),
	     &err);
	T_OK(floe_metadata_builder_finish(&m, b, NULL, 0, &err), &err);
	T_EQ_STR(m->location, "file:///tmp/wh/db/t");
	T_EQ_INT(m->last_column_id, 8);
	T_EQ_INT(m->last_partition_id, 1002);
	T_EQ_INT(m->default_sort_order_id, 1);
	T_EQ_INT(m->n_properties, 1);
	T_EQ_INT(m->current_snapshot_id, FLOE_NO_SNAPSHOT);

	/* add a snapshot through a builder, then check logs */
	floe_metadata_builder *b2;
	T_OK(floe_metadata_builder_from(&b2, m, &err), &err);
	floe_snapshot snap = {0};
	floe_kv summ[] = {{"operation", "append"}, {"added-records", "3"}};
	snap.snapshot_id = floe_new_snapshot_id();
	snap.parent_id = FLOE_NO_SNAPSHOT;
	snap.sequence_number = 1;
	snap.timestamp_ms = 1700000000000;
	snap.manifest_list = "file:///tmp/wh/db/t/metadata/snap-1.avro";
	snap.summary = summ;
	snap.n_summary = 2;
	snap.schema_id = 0;
	snap.first_row_id = -1;
	snap.added_rows = -1;
	T_OK(floe_mb_add_snapshot(b2, &snap, &err), &err);
	floe_snapshot_ref main = {"main", snap.snapshot_id, false, -1, -1, -1};
	T_OK(floe_mb_set_ref(b2, &main, &err), &err);
	floe_metadata *m2;
	T_OK(floe_metadata_builder_finish(&m2, b2, "file:///tmp/wh/db/t/metadata/00000-x.metadata.json",
					  m->last_updated_ms, &err),
	     &err);
	T_EQ_INT(m2->current_snapshot_id, snap.snapshot_id);
	T_EQ_INT(m2->last_sequence_number, 1);
	T_EQ_INT(m2->n_snapshot_log, 1);
	T_EQ_INT(m2->n_metadata_log, 1);
	/* sequence numbers must grow */
	floe_metadata_builder *b3;
	T_OK(floe_metadata_builder_from(&b3, m2, &err), &err);
	snap.snapshot_id++;
	snap.parent_id = m2->current_snapshot_id;
	T_ERR(floe_mb_add_snapshot(b3, &snap, &err), FLOE_ECONFLICT);
	floe_metadata_builder_free(b3);
	floe_metadata_free(m);
	floe_metadata_free(m2);
	floe_strmap_reset(&props);
	floe_arena_reset(&a);
}

static void test_compact_schema_errors(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_schema *s;
	floe_arena_init(&a, 0);
	T_ERR(floe_schema_parse_compact(&s, &a, "id lng", &err), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "unknown type 'lng'") != NULL);
	T_ERR(floe_schema_parse_compact(&s, &a, "id long,", &err), FLOE_EINVAL);
	T_OK(floe_schema_parse_compact(&s, &a, "a decimal(38, 10), b fixed[16], c map<string, int>",
				       &err),
	     &err);
	T_EQ_INT(s->root->fields[0].type->precision, 38);
	T_EQ_INT(s->root->fields[2].type->key_id, 4);
	T_EQ_INT(s->root->fields[2].type->value_id, 5);
	floe_arena_reset(&a);
}

/* Flink's PRIMARY KEY (...) NOT ENFORCED: identifier fields, made required */
static void test_compact_schema_primary_key(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_schema *s;
	floe_arena_init(&a, 0);
	T_OK(floe_schema_parse_compact(&s, &a,
				       "id long, name string, region string, "
				       "PRIMARY KEY (region, id) NOT ENFORCED",
				       &err),
	     &err);
	T_EQ_INT(s->root->n_fields, 3);
	T_EQ_INT(s->n_identifier_field_ids, 2);
	T_EQ_INT(s->identifier_field_ids[0], 3);
	T_EQ_INT(s->identifier_field_ids[1], 1);
	T_CHECK(s->root->fields[0].required && !s->root->fields[1].required &&
		s->root->fields[2].required);
	T_OK(floe_schema_parse_compact(&s, &a, "id long not null, primary key(id)", &err), &err);
	T_EQ_INT(s->n_identifier_field_ids, 1);
	T_OK(floe_schema_parse_compact(&s, &a, "id long, primary_key string", &err), &err);
	T_EQ_INT(s->n_identifier_field_ids, 0);
	T_ERR(floe_schema_parse_compact(&s, &a, "id long, PRIMARY KEY (nope)", &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "'nope' is not a top-level column") != NULL);
	T_ERR(floe_schema_parse_compact(&s, &a, "d double, PRIMARY KEY (d)", &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "other than float and double") != NULL);
	T_ERR(floe_schema_parse_compact(&s, &a, "id long, PRIMARY KEY (id, id)", &err), FLOE_EINVAL);
	T_ERR(floe_schema_parse_compact(&s, &a, "id long, PRIMARY KEY id", &err), FLOE_EINVAL);
	T_ERR(floe_schema_parse_compact(&s, &a, "id long, PRIMARY KEY (id) NOT", &err),
	      FLOE_EINVAL);
	floe_arena_reset(&a);
}

int main(void)
{
	T_RUN(test_all_shared_metadata);
	T_RUN(test_v2_valid_fields);
	T_RUN(test_v1_and_gzip);
	T_RUN(test_validation_rules);
	T_RUN(test_builder_new_table);
	T_RUN(test_compact_schema_errors);
	T_RUN(test_compact_schema_primary_key);
	return t_finish();
}
