/*
 * test_commit_path.c — the one commit path under injected catalog faults
 * (FLOE_TEST_CATALOG_FAULT, catalog.c): for the SQLite and the file-system
 * catalog, a swap that fails before it is sent, a swap that happens and whose
 * answer is lost, and a swap lost on its way. Each ends with the table at
 * the old or the new version, never with a deleted file that a version that
 * may be current needs, and with a table the next commit can build on.
 * Also: pipeline fencing, the retry budget, and creation through the path.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "table/commit.h"
#include "table/create.h"

enum { SQL, FS };

static floe_catalog *open_kind(int kind, const char *dir)
{
	char uri[1024], wh[1024];
	floe_catalog *cat = NULL;
	floe_error err = {0};
	snprintf(wh, sizeof(wh), "file://%s/wh", dir);
	if (kind == SQL) {
		floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
		snprintf(uri, sizeof(uri), "%s/catalog.db", dir);
		o.uri = uri;
		o.warehouse = wh;
		if (floe_sql_catalog_open(&cat, &o, &err))
			t_fail(__FILE__, __LINE__, "open: %s", err.msg);
	} else {
		floe_fs_catalog_opts o = FLOE_FS_CATALOG_OPTS_INIT;
		o.warehouse = wh;
		if (floe_fs_catalog_open(&cat, &o, &err))
			t_fail(__FILE__, __LINE__, "open: %s", err.msg);
	}
	return cat;
}

static bool exists(const char *path)
{
	const char *l = floe_io_local_path(path);
	return access(l ? l : path, F_OK) == 0;
}

static floe_data_file mkfile(floe_arena *a, floe_table *t, const char *name)
{
	floe_data_file f;
	floe_data_file_init(&f);
	f.content = FLOE_CONTENT_DATA;
	f.file_path = floe_arena_sprintf(a, "%s/data/%s.parquet", floe_table_metadata(t)->location,
					 name);
	f.record_count = 7;
	f.file_size_in_bytes = 700;
	f.spec_id = 0;
	return f;
}

static floe_table *fresh_table(floe_catalog *cat, const char *name)
{
	floe_error err = {0};
	floe_table *t = NULL;
	floe_table_create_opts o = FLOE_TABLE_CREATE_OPTS_INIT;
	/* status checks without the production waits (1 s, 2 s, ...) */
	floe_prop props[] = {{"commit.status-check.min-wait-ms", "5"},
			     {"commit.retry.min-wait-ms", "1"}};
	o.schema = "id long";
	o.properties = props;
	o.n_properties = 2;
	T_OK(floe_table_create(&t, cat, "db", name, &o, &err), &err);
	return t;
}

/* Everything a metadata version references exists. */
static void check_readable(floe_catalog *cat, const char *name, int64_t want_snapshots)
{
	floe_table *t = NULL;
	floe_error err = {0};
	T_OK(floe_table_load(&t, cat, "db", name, &err), &err);
	if (!t)
		return;
	const floe_metadata *m = floe_table_metadata(t);
	T_EQ_INT((int64_t)m->n_snapshots, want_snapshots);
	T_CHECK(exists(m->metadata_location));
	for (size_t i = 0; i < m->n_snapshots; i++)
		T_CHECK(exists(m->snapshots[i].manifest_list));
	floe_file_counts c;
	T_OK(floe_table_count_files(&c, t, NULL, &err), &err);
	T_EQ_INT(c.data_files, want_snapshots);
	floe_table_free(t);
}

static int append(floe_table *t, floe_arena *a, const char *file, int64_t *sid, floe_error *err)
{
	floe_append *ap = NULL;
	floe_data_file f = mkfile(a, t, file);
	int rc = floe_append_new(&ap, t, NULL, err);
	if (!rc)
		rc = floe_append_add_file(ap, &f, err);
	if (!rc)
		rc = floe_append_commit(ap, sid, err);
	floe_append_free(ap);
	return rc;
}

static size_t count_in(const char *dir, const char *suffix)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "ls '%s' 2>/dev/null | grep -c -- '%s$'", dir, suffix);
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	if (p) {
		if (fscanf(p, "%zu", &n) != 1)
			n = 0;
		pclose(p);
	}
	return n;
}

static void run_faults(int kind)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_kind(kind, dir);
	floe_error err = {0};
	floe_arena a;
	int64_t sid;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	floe_table *t = fresh_table(cat, "t");
	T_OK(append(t, &a, "f0", &sid, &err), &err);
	const char *loc = floe_io_local_path(floe_table_metadata(t)->location);
	char mdir[1200];
	snprintf(mdir, sizeof(mdir), "%s/metadata", loc);

	/* 1. a definite failure before the swap: old version, nothing left */
	size_t lists = count_in(mdir, ".avro");
	setenv("FLOE_TEST_CATALOG_FAULT", "before-swap:*", 1);
	floe_error_clear(&err);
	T_EQ_INT(append(t, &a, "f1", &sid, &err), FLOE_EIO);
	T_CHECK(strstr(err.msg, "injected") != NULL);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	T_EQ_INT((int64_t)count_in(mdir, ".avro"), (int64_t)lists); /* its manifest and list removed */
	check_readable(cat, "t", 1);

	/* 2. the swap happened and its answer was lost: resolved as committed */
	setenv("FLOE_TEST_CATALOG_FAULT", "after-swap:*", 1);
	floe_error_clear(&err);
	T_OK(append(t, &a, "f2", &sid, &err), &err);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	T_CHECK(sid > 0);
	T_CHECK(floe_metadata_snapshot(floe_table_metadata(t), sid) != NULL);
	check_readable(cat, "t", 2);

	/* 3. the swap was lost on its way: unknown, nothing deleted, old version */
	setenv("FLOE_TEST_CATALOG_FAULT", "lose-swap:*", 1);
	lists = count_in(mdir, ".avro");
	floe_error_clear(&err);
	T_EQ_INT(append(t, &a, "f3", &sid, &err), FLOE_ECOMMITUNKNOWN);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	T_CHECK(strstr(err.msg, "commit state unknown") != NULL);
	T_CHECK(strstr(err.msg, "metadata '") != NULL);
	/* the attempt's manifest and manifest list are still there (they would
	 * be needed had the swap landed) */
	T_EQ_INT((int64_t)count_in(mdir, ".avro"), (int64_t)lists + 2);
	if (kind == SQL) {
		/* and so is the metadata file it names */
		const char *q = strstr(err.msg, "metadata '");
		char path[1024] = {0};
		if (q && sscanf(q + 10, "%1023[^']", path) == 1)
			T_CHECK(exists(path));
	}
	check_readable(cat, "t", 2);

	/* the next commit builds on whatever is current */
	T_OK(floe_table_refresh(t, &err), &err);
	T_OK(append(t, &a, "f4", &sid, &err), &err);
	check_readable(cat, "t", 3);

	/* 4. only the first attempt's answer is lost, and another writer
	 * committed meanwhile: the base moved on, so the unknown attempt can
	 * never land; it is retried and the other writer's snapshot is kept */
	floe_catalog *cat2 = open_kind(kind, dir);
	floe_table *t2 = NULL;
	T_OK(floe_table_load(&t2, cat2, "db", "t", &err), &err);
	T_OK(append(t2, &a, "other", &sid, &err), &err); /* t is now stale */
	setenv("FLOE_TEST_CATALOG_FAULT", "lose-swap:1", 1);
	cat->n_commits = 0;
	floe_error_clear(&err);
	T_OK(append(t, &a, "f5", &sid, &err), &err);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	check_readable(cat, "t", 5);
	floe_table_free(t2);
	floe_catalog_free(cat2);

	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void test_faults_sqlite(void)
{
	run_faults(SQL);
}

static void test_faults_filesystem(void)
{
	run_faults(FS);
}

/* A create whose answer is lost is recognised by its table uuid. */
static void test_create_answer_lost(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_kind(SQL, dir);
	floe_error err = {0};
	floe_table *t = NULL;
	floe_table_create_opts o = FLOE_TABLE_CREATE_OPTS_INIT;
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	o.schema = "id long";
	setenv("FLOE_TEST_CATALOG_FAULT", "after-swap:*", 1);
	T_OK(floe_table_create(&t, cat, "db", "c", &o, &err), &err);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	T_CHECK(t != NULL);
	floe_table_free(t);
	t = NULL;
	/* creating it again is EEXISTS, never retried into success */
	T_ERR(floe_table_create(&t, cat, "db", "c", &o, &err), FLOE_EEXISTS);
	floe_catalog_free(cat);
}

/* A new table carries the properties Java writes at creation (Java's and
 * Spark's writers fall back to gzip without the codec); asked ones win. */
static void test_create_properties(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_kind(SQL, dir);
	floe_error err = {0};
	floe_table *t = NULL;
	floe_table_create_opts o = FLOE_TABLE_CREATE_OPTS_INIT;
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	o.schema = "id long";
	T_OK(floe_table_create(&t, cat, "db", "plain", &o, &err), &err);
	const char *v = t ? floe_metadata_property(floe_table_metadata(t),
						   "write.parquet.compression-codec")
			  : NULL;
	T_EQ_STR(v ? v : "(none)", "zstd");
	floe_table_free(t);
	t = NULL;
	floe_prop props[] = {{"write.parquet.compression-codec", "snappy"}};
	o.properties = props;
	o.n_properties = 1;
	T_OK(floe_table_create(&t, cat, "db", "snappy", &o, &err), &err);
	v = t ? floe_metadata_property(floe_table_metadata(t), "write.parquet.compression-codec")
	      : NULL;
	T_EQ_STR(v ? v : "(none)", "snappy");
	floe_table_free(t);
	floe_catalog_free(cat);
}

/* Two processes of one pipeline: the stale one's commit is refused. */
static void test_pipeline_fencing(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_kind(SQL, dir);
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	floe_table *t1 = fresh_table(cat, "p"), *t2 = NULL;
	T_OK(floe_table_load(&t2, cat, "db", "p", &err), &err);
	/* both "processes" start with nothing committed */
	int64_t known1 = FLOE_NO_SNAPSHOT, known2 = FLOE_NO_SNAPSHOT, sid = -1;
	for (int k = 0; k < 2; k++) {
		floe_append *ap = NULL;
		floe_data_file f = mkfile(&a, t1, k ? "b" : "a");
		T_OK(floe_append_new(&ap, t1, NULL, &err), &err);
		T_OK(floe_append_add_file(ap, &f, &err), &err);
		T_OK(floe_append_set_summary(ap, "floe.pipeline-id", "pipe", &err), &err);
		T_OK(floe_op_fence_pipeline(ap, "pipe", known1, &err), &err);
		T_OK(floe_append_commit(ap, &sid, &err), &err);
		known1 = sid;
		floe_append_free(ap);
	}
	/* process 2 still believes nothing was committed */
	floe_append *ap = NULL;
	floe_data_file f = mkfile(&a, t2, "c");
	T_OK(floe_append_new(&ap, t2, NULL, &err), &err);
	T_OK(floe_append_add_file(ap, &f, &err), &err);
	T_OK(floe_append_set_summary(ap, "floe.pipeline-id", "pipe", &err), &err);
	T_OK(floe_op_fence_pipeline(ap, "pipe", known2, &err), &err);
	T_ERR(floe_append_commit(ap, &sid, &err), FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "pipeline 'pipe' is fenced") != NULL);
	T_CHECK(!err.retryable);
	floe_append_free(ap);
	/* another pipeline's snapshots do not fence it */
	T_OK(floe_table_refresh(t2, &err), &err);
	T_EQ_INT(floe_pipeline_last_snapshot(floe_table_metadata(t2),
					     floe_metadata_current_snapshot(floe_table_metadata(t2)),
					     "pipe"),
		 known1);
	T_EQ_INT((int64_t)floe_table_metadata(t2)->n_snapshots, 2);
	floe_table_free(t1);
	floe_table_free(t2);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* A lost race is retried within commit.retry.num-retries, then given up. */
static void test_retry_budget(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_kind(SQL, dir);
	floe_error err = {0};
	floe_arena a;
	int64_t sid;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	floe_table *t = fresh_table(cat, "r");
	floe_strmap set;
	floe_strmap_init(&set);
	T_CHECK(floe_strmap_set(&set, "commit.retry.num-retries", "2") == 0);
	T_OK(floe_table_update_properties(t, &set, NULL, 0, &err), &err);
	floe_strmap_reset(&set);
	/* every swap loses a race: the third attempt gives up with the race's
	 * error, and the files of every attempt are gone */
	const char *loc = floe_io_local_path(floe_table_metadata(t)->location);
	char mdir[1200];
	snprintf(mdir, sizeof(mdir), "%s/metadata", loc);
	size_t before = count_in(mdir, ".avro");
	setenv("FLOE_TEST_CATALOG_FAULT", "conflict:*", 1);
	T_ERR(append(t, &a, "x", &sid, &err), FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "(attempt 3)") != NULL);
	T_EQ_INT((int64_t)count_in(mdir, ".avro"), (int64_t)before);
	/* two lost races, then it lands */
	cat->n_commits = 0;
	setenv("FLOE_TEST_CATALOG_FAULT", "conflict:1,conflict:2", 1);
	T_OK(append(t, &a, "y", &sid, &err), &err);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	T_CHECK(floe_metadata_snapshot(floe_table_metadata(t), sid) != NULL);
	T_EQ_INT((int64_t)count_in(mdir, ".avro"), (int64_t)before + 2);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

int main(void)
{
	T_RUN(test_faults_sqlite);
	T_RUN(test_faults_filesystem);
	T_RUN(test_create_answer_lost);
	T_RUN(test_create_properties);
	T_RUN(test_pipeline_fencing);
	T_RUN(test_retry_budget);
	return t_finish();
}
