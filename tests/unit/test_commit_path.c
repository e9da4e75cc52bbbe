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
#include "table/lease.h"

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

static size_t count_leases(const char *dir)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "ls -A '%s' 2>/dev/null | grep -c '^\\.floe-lease-.*\\.json$'",
		 dir);
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	if (p) {
		if (fscanf(p, "%zu", &n) != 1)
			n = 0;
		pclose(p);
	}
	return n;
}

/* expires-ms of the one lease file in dir (-1: none) */
static int64_t lease_expires(const char *dir)
{
	char cmd[1400], buf[4096] = {0};
	snprintf(cmd, sizeof(cmd), "cat '%s'/.floe-lease-*.json 2>/dev/null", dir);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, p);
	pclose(p);
	buf[n] = 0;
	const char *q = strstr(buf, "\"expires-ms\":");
	long long v = -1;
	if (!q || sscanf(q + 13, "%lld", &v) != 1)
		return -1;
	return v;
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
	/* and so is the lease protecting them, left to expire */
	T_EQ_INT((int64_t)count_leases(mdir), 1);

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

/* The run mode: the command runs before the n-th swap only, and the swap
 * goes ahead after it; a command that fails fails the commit before
 * anything is sent. */
static void test_run_before_swap(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_kind(SQL, dir);
	floe_error err = {0};
	floe_arena a;
	int64_t sid;
	char cmd[1400], mark[1200];
	floe_arena_init(&a, 0);
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	floe_table *t = fresh_table(cat, "run");
	snprintf(mark, sizeof(mark), "%s/ran", dir);
	snprintf(cmd, sizeof(cmd), "echo x >> '%s'", mark);
	cat->n_commits = 0;
	setenv("FLOE_TEST_CATALOG_FAULT", "run:2", 1);
	setenv("FLOE_TEST_CATALOG_RUN", cmd, 1);
	T_OK(append(t, &a, "f0", &sid, &err), &err);
	T_CHECK(!exists(mark));
	T_OK(append(t, &a, "f1", &sid, &err), &err);
	T_CHECK(exists(mark));
	T_OK(append(t, &a, "f2", &sid, &err), &err);
	FILE *f = fopen(mark, "r");
	char line[16];
	int64_t runs = 0;
	while (f && fgets(line, sizeof(line), f))
		runs++;
	if (f)
		fclose(f);
	T_EQ_INT(runs, 1); /* the second commit's only */
	check_readable(cat, "run", 3);
	/* a command that fails: EIO, the table as it was */
	cat->n_commits = 0;
	setenv("FLOE_TEST_CATALOG_FAULT", "run:1", 1);
	setenv("FLOE_TEST_CATALOG_RUN", "exit 3", 1);
	floe_error_clear(&err);
	T_ERR(append(t, &a, "f3", &sid, &err), FLOE_EIO);
	T_CHECK(strstr(err.msg, "FLOE_TEST_CATALOG_RUN 'exit 3' failed") != NULL);
	unsetenv("FLOE_TEST_CATALOG_RUN");
	cat->n_commits = 0;
	floe_error_clear(&err);
	T_ERR(append(t, &a, "f4", &sid, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "needs FLOE_TEST_CATALOG_RUN") != NULL);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	check_readable(cat, "run", 3);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* ---- files a commit reuses across attempts --------------------------------------- */


typedef struct sabotage {
	char mdir[1200];
	char data[1200];
	bool manifests, data_file;
	int fired;
} sabotage;

static sabotage g_sab;

/* Between two attempts (the commit path logs the lost race) delete what the
 * first attempt wrote, as an orphan cleanup that knows nothing of the
 * commit would. */
static void sabotage_log(floe_log_level level, const char *msg, void *payload)
{
	sabotage *s = payload;
	(void)level;
	if (!strstr(msg, "lost a race"))
		return;
	s->fired++;
	if (s->data_file)
		unlink(s->data);
	if (!s->manifests)
		return;
	char cmd[2600];
	snprintf(cmd, sizeof(cmd), "find '%s' -name '*-m*.avro' -newer '%s/catalog.stamp' -delete",
		 s->mdir, s->mdir);
	if (system(cmd) != 0)
		t_fail(__FILE__, __LINE__, "find failed");
}

static void test_reused_files_checked(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_kind(SQL, dir);
	floe_error err = {0};
	floe_arena a;
	int64_t sid;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	floe_table *t = fresh_table(cat, "re");
	char loc[1024];
	snprintf(loc, sizeof(loc), "%s", floe_io_local_path(floe_table_metadata(t)->location));
	memset(&g_sab, 0, sizeof(g_sab));
	snprintf(g_sab.mdir, sizeof(g_sab.mdir), "%s/metadata", loc);
	char stamp[1300];
	snprintf(stamp, sizeof(stamp), "touch -d '1 minute ago' '%s/catalog.stamp'", g_sab.mdir);
	T_EQ_INT(system(stamp), 0);

	/* 1. the first attempt's manifest is deleted before the second attempt
	 * reuses it: it is written again, and the snapshot names files that exist */
	g_sab.manifests = true;
	floe_set_logger(sabotage_log, &g_sab, FLOE_LOG_DEBUG);
	setenv("FLOE_TEST_CATALOG_FAULT", "conflict:1", 1);
	cat->n_commits = 0;
	T_OK(append(t, &a, "m1", &sid, &err), &err);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	T_EQ_INT(g_sab.fired, 1);
	check_readable(cat, "re", 1);

	/* 2. a data file the commit adds (and wrote itself) is deleted between
	 * attempts: the commit fails cleanly, nothing dangling is committed */
	floe_data_file f = mkfile(&a, t, "d2");
	snprintf(g_sab.data, sizeof(g_sab.data), "%s", floe_io_local_path(f.file_path));
	char mk[1300];
	snprintf(mk, sizeof(mk), "mkdir -p '%s/data'", loc);
	T_EQ_INT(system(mk), 0);
	FILE *fp = fopen(g_sab.data, "w");
	T_CHECK(fp != NULL);
	if (fp) {
		fputs("x", fp);
		fclose(fp);
	}
	g_sab.manifests = false;
	g_sab.data_file = true;
	g_sab.fired = 0;
	floe_snapshot_op *op = NULL;
	T_OK(floe_op_new(&op, t, FLOE_OP_APPEND, NULL, &err), &err);
	T_OK(floe_op_add_file(op, &f, &err), &err);
	floe_op_verify_added(op);
	setenv("FLOE_TEST_CATALOG_FAULT", "conflict:1", 1);
	cat->n_commits = 0;
	T_ERR(floe_op_commit(op, &sid, &err), FLOE_ENOTFOUND);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	T_CHECK(strstr(err.msg, "d2.parquet") != NULL);
	T_CHECK(strstr(err.msg, "nothing was committed") != NULL);
	floe_op_free(op);
	floe_set_logger(NULL, NULL, FLOE_LOG_WARN);
	T_EQ_INT(g_sab.fired, 1);
	T_OK(floe_table_refresh(t, &err), &err);
	T_EQ_INT((int64_t)floe_table_metadata(t)->n_snapshots, 1);
	check_readable(cat, "re", 1);

	/* 3. a handle that commits keeps one lease in the metadata directory (not
	 * one per commit), and removes it when it is freed */
	T_OK(floe_table__lease_hold(t, "test", &err), &err);
	T_EQ_INT((int64_t)count_leases(g_sab.mdir), 1);
	T_OK(append(t, &a, "m3", &sid, &err), &err);
	T_EQ_INT((int64_t)count_leases(g_sab.mdir), 1);
	floe_table__lease_drop(t, false);
	T_OK(append(t, &a, "m4", &sid, &err), &err);
	T_EQ_INT((int64_t)count_leases(g_sab.mdir), 1);
	floe_table_free(t);
	T_EQ_INT((int64_t)count_leases(g_sab.mdir), 0);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* A lease left to expire (its writer's commit has an unknown outcome) lives a
 * whole time to live from then, not from its last renewal: a handle keeps its
 * lease between commits, so that renewal may be half a life ago. */
static void test_kept_lease_renewed(void)
{
	const char *dir = t_tmpdir();
	floe_fileio *io = floe_io_local_new();
	floe_error err = {0};
	floe_lease *l = NULL;
	T_OK(floe_lease_take(&l, io, dir, "test", 3000, false, &err), &err);
	int64_t first = lease_expires(dir);
	T_CHECK(first > 0);
	usleep(700 * 1000);
	floe_lease_release(l, true);
	T_EQ_INT((int64_t)count_leases(dir), 1);
	T_CHECK(lease_expires(dir) >= first + 600);
	floe_io_free(io);
}

/* ---- pipeline.atomic-commit: several tables in one transaction ---- */

static int commit_three(floe_table **ts, floe_arena *a, const char *tag, const char *fence_b,
			int64_t b_expected, floe_error *err)
{
	floe_snapshot_op *ops[3] = {NULL, NULL, NULL};
	int64_t sids[3];
	int rc = FLOE_OK;
	for (int i = 0; i < 3 && !rc; i++) {
		floe_data_file f = mkfile(a, ts[i], floe_arena_sprintf(a, "%s-%d", tag, i));
		rc = floe_op_new(&ops[i], ts[i], FLOE_OP_APPEND, NULL, err);
		rc = rc ? rc : floe_op_add_file(ops[i], &f, err);
		rc = rc ? rc : floe_op_set_summary(ops[i], "floe.pipeline-id", "pipe", err);
		if (!rc && i == 1 && fence_b)
			rc = floe_op_fence_pipeline(ops[i], fence_b, b_expected, err);
	}
	rc = rc ? rc : floe_op_commit_all(ops, 3, sids, err);
	for (int i = 0; i < 3; i++)
		floe_op_free(ops[i]);
	return rc;
}

static void test_atomic_commit_all_or_nothing(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_kind(SQL, dir);
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	floe_table *ts[3] = {fresh_table(cat, "ta"), fresh_table(cat, "tb"), fresh_table(cat, "tc")};
	T_OK(commit_three(ts, &a, "one", NULL, 0, &err), &err);
	check_readable(cat, "ta", 1);
	check_readable(cat, "tb", 1);
	check_readable(cat, "tc", 1);
	/* another writer commits to tb: the transaction's stale base of tb loses
	 * the race, and the retry builds all three on fresh bases */
	floe_table *other = NULL;
	T_OK(floe_table_load(&other, cat, "db", "tb", &err), &err);
	T_OK(append(other, &a, "other", NULL, &err), &err);
	T_OK(commit_three(ts, &a, "two", NULL, 0, &err), &err);
	check_readable(cat, "ta", 2);
	check_readable(cat, "tb", 3);
	check_readable(cat, "tc", 2);
	/* a final failure on one table (tb's fence) commits none of them */
	T_ERR(commit_three(ts, &a, "three", "pipe", FLOE_NO_SNAPSHOT, &err), FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "fenced") != NULL);
	check_readable(cat, "ta", 2);
	check_readable(cat, "tb", 3);
	check_readable(cat, "tc", 2);
	/* the answer of a transaction that happened is lost: re-reading every
	 * table finds all three changes */
	setenv("FLOE_TEST_CATALOG_FAULT", "after-swap:*", 1);
	int rc = commit_three(ts, &a, "four", NULL, 0, &err);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	T_OK(rc, &err);
	check_readable(cat, "ta", 3);
	check_readable(cat, "tb", 4);
	check_readable(cat, "tc", 3);
	/* a transaction lost on its way: the tables stay at their bases, the
	 * caller learns the outcome is unknown and nothing of it is deleted */
	setenv("FLOE_TEST_CATALOG_FAULT", "lose-swap:*", 1);
	rc = commit_three(ts, &a, "five", NULL, 0, &err);
	unsetenv("FLOE_TEST_CATALOG_FAULT");
	T_ERR(rc, FLOE_ECOMMITUNKNOWN);
	char mdir[2048];
	snprintf(mdir, sizeof(mdir), "%s/wh/db/ta/metadata", dir);
	T_EQ_INT((int64_t)count_in(mdir, ".metadata.json"), 5); /* create, 3 commits, the lost one */
	check_readable(cat, "ta", 3);
	check_readable(cat, "tc", 3);
	for (int i = 0; i < 3; i++)
		floe_table_free(ts[i]);
	floe_table_free(other);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void test_atomic_commit_refused_by_filesystem(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_kind(FS, dir);
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	floe_table *ts[3] = {fresh_table(cat, "ta"), fresh_table(cat, "tb"), fresh_table(cat, "tc")};
	T_ERR(commit_three(ts, &a, "one", NULL, 0, &err), FLOE_EUNSUPPORTED);
	T_CHECK(strstr(err.msg, "cannot commit several tables in one transaction") != NULL);
	check_readable(cat, "ta", 0);
	for (int i = 0; i < 3; i++)
		floe_table_free(ts[i]);
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
	T_RUN(test_run_before_swap);
	T_RUN(test_reused_files_checked);
	T_RUN(test_kept_lease_renewed);
	T_RUN(test_atomic_commit_all_or_nothing);
	T_RUN(test_atomic_commit_refused_by_filesystem);
	return t_finish();
}
