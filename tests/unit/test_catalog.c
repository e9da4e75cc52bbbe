/*
 * test_catalog.c — SQL (SQLite) and file-system catalogs: namespaces,
 * tables, creates, fast appends with sequence numbers and summaries,
 * concurrent writers racing on one table (none may lose a snapshot), and
 * injected I/O failures.
 */
#include <pthread.h>
#include <stdlib.h>

#include "harness.h"
#include "catalog/catalog_impl.h"
#include "json/json.h"
#include "table/commit.h"
#include "table/create.h"

static int collect_cb(const char *ns, const char *name, void *payload)
{
	char *buf = payload;
	size_t n = strlen(buf);
	snprintf(buf + n, 1024 - n, "%s%s%s;", ns, name ? "." : "", name ? name : "");
	return 0;
}

static floe_catalog *open_sql(const char *dir, floe_fileio *io)
{
	char uri[1024], wh[1024];
	floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
	floe_catalog *cat = NULL;
	floe_error err = {0};
	snprintf(uri, sizeof(uri), "sqlite:///%s/catalog.db", dir);
	snprintf(wh, sizeof(wh), "file://%s/warehouse", dir);
	o.uri = uri;
	o.warehouse = wh;
	o.io = io;
	if (floe_sql_catalog_open(&cat, &o, &err))
		t_fail(__FILE__, __LINE__, "open: %s", err.msg);
	return cat;
}

static floe_data_file fake_file(floe_arena *a, const char *loc, int i, int64_t rows,
				floe_value *part, size_t n_part)
{
	floe_data_file f;
	floe_data_file_init(&f);
	f.file_path = floe_arena_sprintf(a, "%s/data/file-%d.parquet", loc, i);
	f.record_count = rows;
	f.file_size_in_bytes = 1000 + i;
	f.partition.values = part;
	f.partition.n = n_part;
	return f;
}

static floe_schema *schema_of(floe_arena *a, const char *cols)
{
	floe_schema *s = NULL;
	floe_error err = {0};
	if (floe_schema_parse_compact(&s, a, cols, &err))
		t_fail(__FILE__, __LINE__, "schema: %s", err.msg);
	return s;
}

static void test_namespaces_and_tables(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_sql(dir, NULL);
	floe_error err = {0};
	floe_arena a;
	char buf[1024] = "";
	floe_arena_init(&a, 0);
	floe_strmap props;
	floe_strmap_init(&props);
	T_OK(floe_strmap_set(&props, "owner", "floe"), NULL);
	T_OK(floe_catalog__create_namespace(cat, "db", &props, &err), &err);
	T_ERR(floe_catalog__create_namespace(cat, "db", NULL, &err), FLOE_EEXISTS);
	T_OK(floe_catalog__create_namespace(cat, "db.sub", NULL, &err), &err);
	T_OK(floe_catalog__create_namespace(cat, "other", NULL, &err), &err);
	T_OK(floe_catalog_list_namespaces(cat, NULL, collect_cb, buf, &err), &err);
	T_EQ_STR(buf, "db;other;");
	buf[0] = 0;
	T_OK(floe_catalog_list_namespaces(cat, "db", collect_cb, buf, &err), &err);
	T_EQ_STR(buf, "db.sub;");
	floe_strmap got;
	floe_strmap_init(&got);
	T_OK(floe_catalog_load_namespace_properties(cat, "db", &got, &err), &err);
	T_EQ_STR(floe_strmap_get(&got, "owner"), "floe");
	T_EQ_INT(got.len, 1);
	floe_strmap_reset(&got);

	floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
	ts.schema = schema_of(&a, "id long not null, name string");
	T_OK(floe_table__create(NULL, cat, "db", "t1", &ts, &err), &err);
	T_ERR(floe_table__create(NULL, cat, "db", "t1", &ts, &err), FLOE_EEXISTS);
	T_ERR(floe_table__create(NULL, cat, "nope", "t1", &ts, &err), FLOE_ENOTFOUND);
	T_OK(floe_table__create(NULL, cat, "db", "t2", &ts, &err), &err);
	buf[0] = 0;
	T_OK(floe_catalog_list_tables(cat, "db", collect_cb, buf, &err), &err);
	T_EQ_STR(buf, "db.t1;db.t2;");
	T_ERR(floe_catalog_drop_namespace(cat, "db", &err), FLOE_EINVAL);
	T_OK(floe_catalog_rename_table(cat, "db", "t2", "other", "t3", &err), &err);
	T_ERR(floe_catalog_rename_table(cat, "db", "t1", "other", "t3", &err), FLOE_EEXISTS);
	floe_table *t;
	T_OK(floe_table_load(&t, cat, "other", "t3", &err), &err);
	T_CHECK(strstr(floe_table_metadata(t)->metadata_location, "/warehouse/db/t2/metadata/00000-"));
	floe_table_free(t);
	T_OK(floe_catalog__drop_table(cat, "other", "t3", &err), &err);
	T_ERR(floe_catalog__drop_table(cat, "other", "t3", &err), FLOE_ENOTFOUND);
	T_OK(floe_catalog_drop_namespace(cat, "other", &err), &err);
	T_OK(floe_catalog_drop_namespace(cat, "db.sub", &err), &err);
	floe_strmap_reset(&props);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void append_n(floe_catalog *cat, const char *ns, const char *name, int n, int base,
		     floe_error *err)
{
	floe_arena a;
	floe_arena_init(&a, 0);
	for (int i = 0; i < n; i++) {
		floe_table *t;
		floe_append *ap;
		if (floe_table_load(&t, cat, ns, name, err)) {
			t_fail(__FILE__, __LINE__, "load: %s", err->msg);
			break;
		}
		const floe_metadata *m = floe_table_metadata(t);
		floe_data_file f = fake_file(&a, m->location, base + i, 10, NULL, 0);
		f.spec_id = m->default_spec_id;
		int rc = floe_append_new(&ap, t, NULL, err);
		rc = rc ? rc : floe_append_add_file(ap, &f, err);
		rc = rc ? rc : floe_append_commit(ap, NULL, err);
		if (rc)
			t_fail(__FILE__, __LINE__, "append %d: %s", base + i, err->msg);
		floe_append_free(ap);
		floe_table_free(t);
	}
	floe_arena_reset(&a);
}

static void check_history(floe_catalog *cat, const char *ns, const char *name, int expect)
{
	floe_table *t;
	floe_error err = {0};
	floe_file_counts c;
	if (floe_table_load(&t, cat, ns, name, &err)) {
		t_fail(__FILE__, __LINE__, "load: %s", err.msg);
		return;
	}
	const floe_metadata *m = floe_table_metadata(t);
	T_EQ_INT(m->n_snapshots, expect);
	/* one unbroken ancestry holding every snapshot */
	int chain = 0;
	for (const floe_snapshot *s = floe_metadata_current_snapshot(m); s;
	     s = floe_metadata_snapshot(m, s->parent_id))
		chain++;
	T_EQ_INT(chain, expect);
	if (m->format_version >= 2)
		T_EQ_INT(m->last_sequence_number, expect);
	T_OK(floe_table_count_files(&c, t, NULL, &err), &err);
	T_EQ_INT(c.data_files, expect);
	T_EQ_INT(c.data_records, expect * 10);
	const floe_snapshot *cur = floe_metadata_current_snapshot(m);
	if (cur) {
		char want[32];
		snprintf(want, sizeof(want), "%d", expect);
		T_EQ_STR(floe_snapshot_summary(cur, "total-data-files"), want);
		snprintf(want, sizeof(want), "%d", expect * 10);
		T_EQ_STR(floe_snapshot_summary(cur, "total-records"), want);
		T_EQ_STR(floe_snapshot_summary(cur, "operation"), "append");
	}
	floe_table_free(t);
}

static void test_appends_each_version(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_sql(dir, NULL);
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog__create_namespace(cat, "db", NULL, &err), &err);
	for (int fv = 1; fv <= 3; fv++) {
		char name[16];
		floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
		ts.schema = schema_of(&a, "id long, ts timestamptz");
		ts.format_version = fv;
		snprintf(name, sizeof(name), "v%d", fv);
		T_OK(floe_table__create(NULL, cat, "db", name, &ts, &err), &err);
		append_n(cat, "db", name, 5, 0, &err);
		check_history(cat, "db", name, 5);
		if (fv == 3) {
			floe_table *t;
			T_OK(floe_table_load(&t, cat, "db", name, &err), &err);
			T_EQ_INT(floe_table_metadata(t)->next_row_id, 50);
			const floe_snapshot *s = floe_metadata_current_snapshot(floe_table_metadata(t));
			T_EQ_INT(s->first_row_id, 40);
			T_EQ_INT(s->added_rows, 10);
			floe_table_free(t);
		}
	}
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

typedef struct writer_arg {
	const char *dir;
	int id;
	int n;
	bool fs;
} writer_arg;

static floe_catalog *open_fs(const char *dir)
{
	char wh[1024];
	floe_fs_catalog_opts o = FLOE_FS_CATALOG_OPTS_INIT;
	floe_catalog *cat = NULL;
	floe_error err = {0};
	snprintf(wh, sizeof(wh), "file://%s/fswh", dir);
	o.warehouse = wh;
	if (floe_fs_catalog_open(&cat, &o, &err))
		t_fail(__FILE__, __LINE__, "open: %s", err.msg);
	return cat;
}

static void *writer_main(void *p)
{
	writer_arg *w = p;
	floe_error err = {0};
	floe_catalog *cat = w->fs ? open_fs(w->dir) : open_sql(w->dir, NULL);
	append_n(cat, "db", "t", w->n, w->id * 1000, &err);
	floe_catalog_free(cat);
	return NULL;
}

static void race(bool fs)
{
	const char *dir = t_tmpdir();
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	floe_catalog *cat = fs ? open_fs(dir) : open_sql(dir, NULL);
	T_OK(floe_catalog__create_namespace(cat, "db", NULL, &err), &err);
	floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
	ts.schema = schema_of(&a, "id long");
	floe_strmap props;
	floe_strmap_init(&props);
	T_OK(floe_strmap_set(&props, "commit.retry.num-retries", "100"), NULL);
	T_OK(floe_strmap_set(&props, "commit.retry.min-wait-ms", "5"), NULL);
	T_OK(floe_strmap_set(&props, "commit.retry.max-wait-ms", "200"), NULL);
	ts.properties = &props;
	T_OK(floe_table__create(NULL, cat, "db", "t", &ts, &err), &err);
	pthread_t th[4];
	writer_arg args[4];
	for (int i = 0; i < 4; i++) {
		args[i] = (writer_arg){dir, i + 1, 15, fs};
		pthread_create(&th[i], NULL, writer_main, &args[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	check_history(cat, "db", "t", 60);
	floe_strmap_reset(&props);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* The metadata log keeps the previous metadata files, oldest first, trimmed
 * to write.metadata.previous-versions-max (Java's TableMetadata rule). */
static void test_metadata_log_trimmed(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_sql(dir, NULL);
	floe_error err = {0};
	floe_arena a;
	char locs[8][1024];
	floe_arena_init(&a, 0);
	T_OK(floe_catalog__create_namespace(cat, "db", NULL, &err), &err);
	floe_strmap props;
	floe_strmap_init(&props);
	T_OK(floe_strmap_set(&props, "write.metadata.previous-versions-max", "3"), NULL);
	floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
	ts.schema = schema_of(&a, "id long");
	ts.properties = &props;
	floe_table *t;
	T_OK(floe_table__create(&t, cat, "db", "ml", &ts, &err), &err);
	snprintf(locs[0], sizeof(locs[0]), "%s", floe_table_metadata(t)->metadata_location);
	floe_table_free(t);
	for (int i = 1; i <= 5; i++) {
		append_n(cat, "db", "ml", 1, i, &err);
		T_OK(floe_table_load(&t, cat, "db", "ml", &err), &err);
		const floe_metadata *m = floe_table_metadata(t);
		snprintf(locs[i], sizeof(locs[i]), "%s", m->metadata_location);
		/* the log holds every earlier version until it is full */
		T_EQ_INT(m->n_metadata_log, i < 3 ? i : 3);
		floe_table_free(t);
	}
	T_OK(floe_table_load(&t, cat, "db", "ml", &err), &err);
	const floe_metadata *m = floe_table_metadata(t);
	T_EQ_INT(m->n_metadata_log, 3);
	for (size_t k = 0; k < m->n_metadata_log && k < 3; k++) {
		/* versions 2, 3 and 4 of 0..5: the newest three before the current */
		T_EQ_STR(m->metadata_log[k].metadata_file, locs[2 + k]);
		if (k > 0)
			T_CHECK(m->metadata_log[k].timestamp_ms >= m->metadata_log[k - 1].timestamp_ms);
	}
	floe_table_free(t);
	floe_strmap_reset(&props);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void test_concurrent_writers_sql(void)
{
	race(false);
}

static void test_concurrent_writers_fs(void)
{
	race(true);
}

static void test_partitioned_append_and_summaries(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_sql(dir, NULL);
	floe_error err = {0};
	floe_arena a;
	floe_partition_spec *spec;
	int32_t lp = 999;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog__create_namespace(cat, "db", NULL, &err), &err);
	floe_schema *s = schema_of(&a, "id long, region string");
	T_OK(floe_spec_parse_expr(&spec, &a, "bucket(4, id), region", s, 0, &lp, &err), &err);
	floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
	ts.schema = s;
	ts.spec = spec;
	floe_table *t;
	T_OK(floe_table__create(&t, cat, "db", "p", &ts, &err), &err);
	floe_append *ap;
	T_OK(floe_append_new(&ap, t, NULL, &err), &err);
	for (int i = 0; i < 6; i++) {
		floe_value *pv = floe_arena_calloc(&a, 2, sizeof(floe_value));
		pv[0].type = FLOE_T_INT;
		pv[0].v.i32 = i % 3;
		pv[1].type = FLOE_T_STRING;
		pv[1].v.bin.p = (const uint8_t *)(i % 2 ? "eu" : "us");
		pv[1].v.bin.n = 2;
		if (i == 5)
			pv[1].is_null = true;
		floe_data_file f = fake_file(&a, floe_table_metadata(t)->location, i, 7, pv, 2);
		f.spec_id = 0;
		T_OK(floe_append_add_file(ap, &f, &err), &err);
	}
	T_OK(floe_append_set_summary(ap, "floe.pipeline-id", "p1", &err), &err);
	int64_t sid;
	T_OK(floe_append_commit(ap, &sid, &err), &err);
	floe_append_free(ap);
	const floe_snapshot *cur = floe_metadata_current_snapshot(floe_table_metadata(t));
	T_EQ_INT(cur->snapshot_id, sid);
	T_EQ_STR(floe_snapshot_summary(cur, "added-data-files"), "6");
	T_EQ_STR(floe_snapshot_summary(cur, "added-records"), "42");
	T_EQ_STR(floe_snapshot_summary(cur, "changed-partition-count"), "6");
	T_EQ_STR(floe_snapshot_summary(cur, "floe.pipeline-id"), "p1");
	/* the manifest's partition summaries */
	floe_manifest_file *mfs;
	size_t n;
	T_OK(floe_table_manifests(&mfs, &n, &a, t, cur, &err), &err);
	T_EQ_INT(n, 1);
	T_EQ_INT(mfs[0].n_partitions, 2);
	T_CHECK(!mfs[0].partitions[0].contains_null);
	T_CHECK(mfs[0].partitions[1].contains_null);
	T_EQ_INT(mfs[0].partitions[0].lower_len, 4);
	T_EQ_INT(mfs[0].partitions[0].upper[0], 2);
	T_EQ_INT(mfs[0].sequence_number, 1);
	T_EQ_INT(mfs[0].added_files_count, 6);
	T_EQ_INT(mfs[0].added_rows_count, 42);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static int count_files(const floe_file_info *fi, void *payload)
{
	if (getenv("FLOE_TEST_VERBOSE"))
		printf("  file %s\n", fi->path);
	(*(int *)payload)++;
	return 0;
}

static void test_injected_failures(void)
{
	floe_fileio *mem = floe_io_memory_new();
	floe_fileio *io = floe_io_router_new(floe_io_local_new(), mem, NULL);
	const char *dir = t_tmpdir();
	char uri[1024];
	floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
	floe_catalog *cat = NULL;
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	snprintf(uri, sizeof(uri), "%s/catalog.db", dir);
	o.uri = uri;
	o.warehouse = "mem://wh";
	o.io = io;
	T_OK(floe_sql_catalog_open(&cat, &o, &err), &err);
	T_OK(floe_catalog__create_namespace(cat, "db", NULL, &err), &err);
	floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
	ts.schema = schema_of(&a, "id long");
	floe_table *t;
	T_OK(floe_table__create(&t, cat, "db", "t", &ts, &err), &err);
	/* the writer lease first (its file is written once per handle) */
	T_OK(floe_table__lease_hold(t, "test", &err), &err);
	for (int step = 1; step <= 3; step++) {
		/* fail the manifest (1), the manifest list (2), the metadata file (3) */
		floe_append *ap;
		floe_data_file f = fake_file(&a, "mem://wh/db/t", step, 5, NULL, 0);
		floe_io_memory_fail(mem, "close", step, FLOE_EIO);
		T_OK(floe_append_new(&ap, t, NULL, &err), &err);
		T_OK(floe_append_add_file(ap, &f, &err), &err);
		T_ERR(floe_append_commit(ap, NULL, &err), FLOE_EIO);
		floe_append_free(ap);
		floe_io_memory_fail(mem, "close", 0, 0);
		T_OK(floe_table_refresh(t, &err), &err);
		T_EQ_INT(floe_table_metadata(t)->n_snapshots, 0);
	}
	/* nothing but the table's first metadata file is left behind (the lease
	 * goes with the handle) */
	floe_table__lease_drop(t, false);
	floe_table_free(t);
	int files = 0;
	T_OK(floe_io_list(mem, "mem://wh", count_files, &files, &err), &err);
	T_EQ_INT(files, 1);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* ---- floe_catalog__list_pages: the loop the Glue and REST listings share ---- */

typedef struct fake_pages {
	const char *const *docs; /* page i's JSON */
	size_t n;
	size_t fetched;
	char tokens[8][64]; /* the token each fetch was given ("" for none) */
	int items, stop_at_item, fail_page;
} fake_pages;

static int fake_page(void *payload, const char *token, floe_arena *a, const floe_json **doc,
		     floe_error *err)
{
	fake_pages *f = payload;
	floe_json *j;
	size_t i = f->fetched++;
	snprintf(f->tokens[i < 8 ? i : 7], sizeof(f->tokens[0]), "%s", token ? token : "");
	if ((int)i == f->fail_page)
		return floe_error_set(err, FLOE_EIO, "page %zu failed", i);
	if (i >= f->n)
		return floe_error_set(err, FLOE_EINVAL, "asked for page %zu of %zu", i, f->n);
	int rc = floe_json_parse(&j, a, f->docs[i], strlen(f->docs[i]), NULL, err);
	*doc = j;
	return rc;
}

static int fake_items(void *payload, const floe_json *doc, floe_arena *a, floe_error *err)
{
	fake_pages *f = payload;
	const floe_json *l = floe_json_get(doc, "items");
	(void)a;
	for (const floe_json *it = l ? l->child : NULL; it; it = it->next)
		if (++f->items == f->stop_at_item)
			return floe_error_set(err, FLOE_ECANCELED, "stopped at item %d", f->items);
	return FLOE_OK;
}

static void test_list_pages(void)
{
	floe_error err = {0};
	/* three pages; the last has an empty token; a non-string token ends too */
	const char *const three[] = {"{\"items\":[1,2],\"next\":\"a b&c\"}",
				     "{\"items\":[3],\"next\":\"t2\"}",
				     "{\"items\":[4,5],\"next\":\"\"}"};
	fake_pages f = {three, 3, 0, {{0}}, 0, 0, -1};
	T_OK(floe_catalog__list_pages("next", fake_page, fake_items, &f, &err), &err);
	T_EQ_INT((int64_t)f.fetched, 3);
	T_EQ_INT(f.items, 5);
	T_EQ_STR(f.tokens[0], "");
	T_EQ_STR(f.tokens[1], "a b&c");
	T_EQ_STR(f.tokens[2], "t2");
	const char *const odd[] = {"{\"items\":[1],\"next\":7}"};
	fake_pages g = {odd, 1, 0, {{0}}, 0, 0, -1};
	T_OK(floe_catalog__list_pages("next", fake_page, fake_items, &g, &err), &err);
	T_EQ_INT((int64_t)g.fetched, 1);
	/* a callback's error stops the listing and is returned */
	fake_pages h = {three, 3, 0, {{0}}, 0, 3, -1};
	T_ERR(floe_catalog__list_pages("next", fake_page, fake_items, &h, &err), FLOE_ECANCELED);
	T_EQ_INT((int64_t)h.fetched, 2);
	fake_pages k = {three, 3, 0, {{0}}, 0, 0, 1};
	T_ERR(floe_catalog__list_pages("next", fake_page, fake_items, &k, &err), FLOE_EIO);
	T_EQ_INT(k.items, 2);
}

int main(void)
{
	T_RUN(test_list_pages);
	T_RUN(test_namespaces_and_tables);
	T_RUN(test_appends_each_version);
	T_RUN(test_partitioned_append_and_summaries);
	T_RUN(test_metadata_log_trimmed);
	T_RUN(test_concurrent_writers_sql);
	T_RUN(test_concurrent_writers_fs);
	T_RUN(test_injected_failures);
	return t_finish();
}
