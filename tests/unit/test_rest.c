/*
 * test_rest.c — the REST catalog client without a server: the commit
 * request computed from two metadata versions (requirements and updates),
 * and the reading of answers. The client against Iceberg's REST server is
 * tests/interop/test_rest_catalog.py.
 */
#include <stdlib.h>
#include <string.h>

#include "catalog/rest.h"
#include "harness.h"
#include "json/json.h"

static floe_metadata *load(const char *path)
{
	size_t n;
	unsigned char *p = t_read_file(path, &n);
	floe_metadata *m = NULL;
	floe_error err = {0};
	T_CHECK(p != NULL);
	if (p)
		T_OK(floe_metadata_parse(&m, (const char *)p, n, &err), &err);
	free(p);
	return m;
}

static bool has(const char *body, const char *s)
{
	bool ok = strstr(body, s) != NULL;
	if (!ok)
		printf("  missing %s in %s\n", s, body);
	return ok;
}

static void test_commit_body(void)
{
	floe_metadata *base = load("fuzz/corpus/metadata/v2valid.json");
	floe_error err = {0};
	floe_buf b;
	floe_buf_init(&b, 0);
	if (!base)
		return;
	/* a create: assert-create and the whole table as updates */
	T_OK(floe_rest__commit_body(&b, "a.b", "t", NULL, base, &err), &err);
	const char *s = floe_buf_cstr(&b);
	T_CHECK(has(s, "\"identifier\":{\"namespace\":[\"a\",\"b\"],\"name\":\"t\"}"));
	T_CHECK(has(s, "\"requirements\":[{\"type\":\"assert-create\"}]"));
	T_CHECK(has(s, "{\"action\":\"assign-uuid\",\"uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\"}"));
	T_CHECK(has(s, "{\"action\":\"upgrade-format-version\",\"format-version\":2}"));
	T_CHECK(has(s, "\"action\":\"add-schema\",\"schema\":{\"type\":\"struct\",\"schema-id\":0"));
	T_CHECK(has(s, "\"last-column-id\":3}"));
	T_CHECK(has(s, "{\"action\":\"set-current-schema\",\"schema-id\":-1}"));
	T_CHECK(has(s, "{\"action\":\"set-default-spec\",\"spec-id\":-1}"));
	T_CHECK(has(s, "{\"action\":\"set-default-sort-order\",\"sort-order-id\":-1}"));
	T_CHECK(has(s, "{\"action\":\"set-location\",\"location\":\"s3://bucket/test/location\"}"));
	T_CHECK(has(s, "\"action\":\"add-snapshot\",\"snapshot\":{\"snapshot-id\":3051729675574597004"));
	T_CHECK(has(s, "\"action\":\"set-snapshot-ref\",\"ref-name\":\"main\",\"snapshot-id\":3055729675574597004"));

	/* an update: a property set, one removed, a snapshot expired */
	floe_metadata_builder *mb;
	floe_metadata *next = NULL;
	floe_strmap props;
	floe_strmap_init(&props);
	T_OK(floe_strmap_set(&props, "k", "v"), NULL);
	T_OK(floe_metadata_builder_from(&mb, base, &err), &err);
	T_OK(floe_mb_set_properties(mb, &props, &err), &err);
	int64_t old = 3051729675574597004LL;
	T_OK(floe_mb_remove_snapshots(mb, &old, 1, &err), &err);
	T_OK(floe_metadata_builder_finish(&next, mb, base->metadata_location, 0, &err), &err);
	floe_buf_clear(&b);
	T_OK(floe_rest__commit_body(&b, "db", "t", base, next, &err), &err);
	s = floe_buf_cstr(&b);
	T_CHECK(has(s, "\"requirements\":[{\"type\":\"assert-table-uuid\",\"uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\"}]"));
	T_CHECK(has(s, "{\"action\":\"set-properties\",\"updates\":{\"k\":\"v\"}}"));
	T_CHECK(has(s, "{\"action\":\"remove-snapshots\",\"snapshot-ids\":[3051729675574597004]}"));
	T_CHECK(strstr(s, "add-schema") == NULL && strstr(s, "add-snapshot") == NULL);
	floe_metadata_free(next);
	floe_strmap_reset(&props);

	/* a new snapshot on main: the ref must still be where the base saw it */
	T_OK(floe_metadata_builder_from(&mb, base, &err), &err);
	floe_snapshot snap = *floe_metadata_current_snapshot(floe_metadata_builder_peek(mb));
	snap.json = NULL; /* serialised anew */
	snap.json_len = 0;
	snap.snapshot_id = 77;
	snap.parent_id = 3055729675574597004LL;
	snap.sequence_number = floe_metadata_builder_peek(mb)->last_sequence_number + 1;
	T_OK(floe_mb_add_snapshot(mb, &snap, &err), &err);
	floe_snapshot_ref ref = {"main", 77, false, -1, -1, -1};
	T_OK(floe_mb_set_ref(mb, &ref, &err), &err);
	T_OK(floe_metadata_builder_finish(&next, mb, base->metadata_location, 0, &err), &err);
	floe_buf_clear(&b);
	T_OK(floe_rest__commit_body(&b, "db", "t", base, next, &err), &err);
	s = floe_buf_cstr(&b);
	T_CHECK(has(s, "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":3055729675574597004}"));
	T_CHECK(has(s, "\"action\":\"add-snapshot\",\"snapshot\":{\"snapshot-id\":77"));
	T_CHECK(has(s, "\"action\":\"set-snapshot-ref\",\"ref-name\":\"main\",\"snapshot-id\":77"));
	floe_metadata_free(next);
	floe_metadata_free(base);
	floe_buf_reset(&b);
}

static void test_answers(void)
{
	floe_error err = {0};
	const char *ok[][2] = {
		{"namespaces", "{\"namespaces\":[[\"a\"],[\"a\",\"b\"]]}"},
		{"tables", "{\"identifiers\":[{\"namespace\":[\"db\"],\"name\":\"t\"}]}"},
		{"config", "{\"defaults\":{},\"overrides\":{\"prefix\":\"p\"}}"},
		{"token", "{\"access_token\":\"x\",\"token_type\":\"bearer\"}"},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		T_OK(floe_rest__parse(ok[i][0], ok[i][1], strlen(ok[i][1]), &err), &err);
	{
		const char *t = "{\"identifiers\":[{\"name\":\"t\"}]}";
		T_ERR(floe_rest__parse("tables", t, strlen(t), &err), FLOE_ECORRUPT);
	}
	{
		const char *l = "{\"metadata-location\":\"x\"}";
		T_ERR(floe_rest__parse("load", l, strlen(l), &err), FLOE_ECORRUPT);
	}
	T_EQ_MSG(err.msg, "REST catalog: an answer without metadata");
	T_ERR(floe_rest__parse("token", "{}", 2, &err), FLOE_ECORRUPT);
	const char *e = "{\"error\":{\"message\":\"Table does not exist: db.t\",\"type\":"
			"\"NoSuchTableException\",\"code\":404}}";
	T_ERR(floe_rest__parse("error", e, strlen(e), &err), FLOE_EIO);
	T_EQ_STR(err.msg, "NoSuchTableException: Table does not exist: db.t");
}

/* CatalogConfig.endpoints and LoadCredentialsResponse */
static void test_endpoints_and_credentials(void)
{
	floe_error err = {0};
	const char *ok[][2] = {
		{"config", "{\"defaults\":{},\"overrides\":{},\"endpoints\":[\"GET "
			   "/v1/{prefix}/namespaces\",\"post /v1/{prefix}/tables/rename\",\"PATCH /x\"]}"},
		{"config", "{\"defaults\":{},\"overrides\":{},\"endpoints\":null}"},
		{"config", "{\"defaults\":{},\"overrides\":{},\"endpoints\":[]}"},
		{"credentials", "{\"storage-credentials\":[]}"},
		{"credentials",
		 "{\"storage-credentials\":[{\"prefix\":\"s3://b/\",\"config\":{\"s3.access-key-id\":"
		 "\"A\",\"s3.secret-access-key\":\"s\"}},{\"prefix\":\"s3://b/wh/t\",\"config\":{"
		 "\"s3.access-key-id\":\"B\",\"s3.secret-access-key\":\"t\",\"s3.session-token-"
		 "expires-at-ms\":\"1\"}},{\"prefix\":\"gs://g/\",\"config\":{\"gcs.oauth2.token\":"
		 "\"x\"}}]}"},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		T_OK(floe_rest__parse(ok[i][0], ok[i][1], strlen(ok[i][1]), &err), &err);
	const char *bad[][2] = {
		{"config", "{\"endpoints\":\"GET /v1/config\"}"},
		{"config", "{\"endpoints\":[\"GET/v1/{prefix}/namespaces\"]}"},
		{"config", "{\"endpoints\":[42]}"},
		{"credentials", "{}"},
		{"credentials", "{\"storage-credentials\":{}}"},
		{"credentials", "{\"storage-credentials\":[{\"config\":{}}]}"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		T_ERR(floe_rest__parse(bad[i][0], bad[i][1], strlen(bad[i][1]), &err), FLOE_ECORRUPT);
}

int main(void)
{
	T_RUN(test_commit_body);
	T_RUN(test_answers);
	T_RUN(test_endpoints_and_credentials);
	return t_finish();
}
