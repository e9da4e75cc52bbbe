/*
 * test_maintain.c — expire snapshots, delete orphan files, rewrite
 * manifests and the maintenance lock, on tables whose data files are
 * placeholders (the steps read metadata only; file contents do not matter).
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>
#include <utime.h>

#include "catalog/sqldb.h"
#include "harness.h"
#include "maintain/maintain_int.h"
#include "maintain/maintain_runner.h"
#include "table/create.h"
#include "table/lease.h"
#include "util/alloc.h"
#include "util/thread.h"
#include "util/timeutil.h"

static floe_catalog *open_cat(const char *dir)
{
	char uri[1024], wh[1024];
	floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
	floe_catalog *cat = NULL;
	floe_error err = {0};
	snprintf(uri, sizeof(uri), "%s/catalog.db", dir);
	snprintf(wh, sizeof(wh), "file://%s/wh", dir);
	o.uri = uri;
	o.warehouse = wh;
	if (floe_sql_catalog_open(&cat, &o, &err))
		t_fail(__FILE__, __LINE__, "open: %s", err.msg);
	T_OK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err), &err);
	return cat;
}

static floe_table *new_table(floe_catalog *cat, const char *name, const char *partition_by)
{
	floe_error err = {0};
	floe_table *t = NULL;
	floe_table_create_opts o = FLOE_TABLE_CREATE_OPTS_INIT;
	o.schema = "id long, v string";
	o.partition_by = partition_by;
	T_OK(floe_table_create(&t, cat, "db", name, &o, &err), &err);
	return t;
}

/* A placeholder file on disk (content irrelevant) and its data file entry. */
static floe_data_file put_file(floe_arena *a, floe_table *t, const char *name, int64_t part)
{
	floe_data_file f;
	floe_data_file_init(&f);
	f.content = FLOE_CONTENT_DATA;
	const char *loc = floe_io_local_path(floe_table_metadata(t)->location);
	f.file_path = floe_arena_sprintf(a, "%s/data/%s.parquet", loc, name);
	f.record_count = 10;
	f.file_size_in_bytes = 6;
	f.spec_id = floe_table_metadata(t)->default_spec_id;
	if (part >= 0) {
		f.partition.n = 1;
		f.partition.values = floe_arena_calloc(a, 1, sizeof(floe_value));
		f.partition.values[0].type = FLOE_T_LONG;
		f.partition.values[0].v.i64 = part;
	}
	char dir[2048];
	snprintf(dir, sizeof(dir), "%s/data", loc);
	mkdir(dir, 0755);
	FILE *fp = fopen(f.file_path, "w");
	T_CHECK(fp != NULL);
	if (fp) {
		fputs("dummy\n", fp);
		fclose(fp);
	}
	return f;
}

static int64_t commit(floe_table *t, floe_op_kind kind, const floe_data_file *add,
		      const floe_data_file *rm, const char *pipeline)
{
	floe_snapshot_op *op;
	floe_error err = {0};
	int64_t sid = -1;
	T_OK(floe_op_new(&op, t, kind, NULL, &err), &err);
	if (add)
		T_OK(floe_op_add_file(op, add, &err), &err);
	if (rm)
		T_OK(floe_op_remove_file(op, rm, &err), &err);
	if (pipeline)
		T_OK(floe_op_set_summary(op, "floe.pipeline-id", pipeline, &err), &err);
	T_OK(floe_op_commit(op, &sid, &err), &err);
	floe_op_free(op);
	return sid;
}

static bool exists(const char *path)
{
	const char *l = floe_io_local_path(path);
	return access(l ? l : path, F_OK) == 0;
}

static void make_old(const char *path, int64_t age_s)
{
	struct utimbuf u;
	u.actime = u.modtime = time(NULL) - age_s;
	T_CHECK(utime(path, &u) == 0);
}

static int count_live(floe_table *t)
{
	floe_file_counts c;
	floe_error err = {0};
	T_OK(floe_table_count_files(&c, t, NULL, &err), &err);
	return (int)c.data_files;
}

/* ---- expire -------------------------------------------------------------------------- */

static void test_expire_retains_and_cleans(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *t = new_table(cat, "e", NULL);
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	floe_data_file f[6];
	int64_t sid[6];
	char name[16];
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		f[i] = put_file(&a, t, name, -1);
		sid[i] = commit(t, FLOE_OP_APPEND, &f[i], NULL, i == 1 ? "pipe-a" : NULL);
	}
	/* remove f0: it stays reachable from the snapshots before */
	sid[5] = commit(t, FLOE_OP_DELETE, NULL, &f[0], NULL);
	const floe_metadata *m = floe_table_metadata(t);
	T_EQ_INT(m->n_snapshots, 6);
	char *lists[6];
	for (int i = 0; i < 6; i++)
		lists[i] = floe_arena_strdup(&a, floe_metadata_snapshot(m, sid[i])->manifest_list);

	/* dry run: decides, changes nothing */
	floe_expire_opts o = FLOE_EXPIRE_OPTS_INIT;
	floe_expire_result r;
	o.older_than_ms = floe_now_ms() + 1000;
	o.retain_last = 2;
	o.dry_run = true;
	T_OK(floe_expire_snapshots(t, &o, &r, &err), &err);
	T_EQ_INT(r.snapshots_expired, 3); /* s0, s2, s3: s1 is pipe-a's newest */
	T_EQ_INT(floe_table_metadata(t)->n_snapshots, 6);

	o.dry_run = false;
	T_OK(floe_expire_snapshots(t, &o, &r, &err), &err);
	m = floe_table_metadata(t);
	T_EQ_INT(r.snapshots_expired, 3);
	T_EQ_INT(m->n_snapshots, 3);
	T_CHECK(floe_metadata_snapshot(m, sid[1]) != NULL);
	T_CHECK(floe_metadata_snapshot(m, sid[4]) != NULL);
	T_CHECK(floe_metadata_snapshot(m, sid[5]) != NULL);
	T_EQ_INT(r.manifest_lists_deleted, 3);
	T_CHECK(!exists(lists[0]) && !exists(lists[2]) && !exists(lists[3]));
	T_CHECK(exists(lists[1]) && exists(lists[4]) && exists(lists[5]));
	/* f0 is still reachable from pipe-a's snapshot s1 */
	T_CHECK(exists(f[0].file_path));
	T_EQ_INT(r.data_files_deleted, 0);

	/* the pipeline moves on: now s1 can go, and f0 with it */
	floe_data_file g = put_file(&a, t, "g", -1);
	commit(t, FLOE_OP_APPEND, &g, NULL, "pipe-a");
	o.retain_last = 1;
	T_OK(floe_expire_snapshots(t, &o, &r, &err), &err);
	m = floe_table_metadata(t);
	T_EQ_INT(m->n_snapshots, 1);
	T_CHECK(!exists(f[0].file_path));
	T_EQ_INT(r.data_files_deleted, 1);
	for (int i = 1; i < 5; i++)
		T_CHECK(exists(f[i].file_path));
	T_CHECK(exists(g.file_path));
	T_EQ_INT(count_live(t), 5);
	/* nothing left to expire */
	T_OK(floe_expire_snapshots(t, &o, &r, &err), &err);
	T_EQ_INT(r.snapshots_expired, 0);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void test_expire_keeps_tag_heads_and_young(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *t = new_table(cat, "tags", NULL);
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	int64_t sid[4];
	char name[16];
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		floe_data_file f = put_file(&a, t, name, -1);
		sid[i] = commit(t, FLOE_OP_APPEND, &f, NULL, NULL);
	}
	/* tag s0 */
	floe_metadata_builder *b;
	floe_metadata *next;
	char *loc = NULL;
	const floe_metadata *base = floe_table_metadata(t);
	T_OK(floe_metadata_builder_from(&b, base, &err), &err);
	floe_snapshot_ref ref = {0};
	ref.name = "v1";
	ref.snapshot_id = sid[0];
	ref.is_tag = true;
	ref.max_ref_age_ms = -1;
	ref.max_snapshot_age_ms = -1;
	ref.min_snapshots_to_keep = -1;
	T_OK(floe_mb_set_ref(b, &ref, &err), &err);
	T_OK(floe_metadata_builder_finish(&next, b, base->metadata_location, base->last_updated_ms,
					  &err),
	     &err);
	T_OK(floe_catalog_commit_table(cat, "db", "tags", base, next, &loc, &err), &err);
	floe_metadata_free(next);
	floe_free(loc);
	T_OK(floe_table_refresh(t, &err), &err);

	/* default cutoff (5 days): everything is young, nothing expires */
	floe_expire_opts o = FLOE_EXPIRE_OPTS_INIT;
	floe_expire_result r;
	T_OK(floe_expire_snapshots(t, &o, &r, &err), &err);
	T_EQ_INT(r.snapshots_expired, 0);
	/* expire all but the last: the tagged s0 stays */
	o.older_than_ms = floe_now_ms() + 1000;
	o.retain_last = 1;
	T_OK(floe_expire_snapshots(t, &o, &r, &err), &err);
	const floe_metadata *m = floe_table_metadata(t);
	T_EQ_INT(r.snapshots_expired, 2);
	T_CHECK(floe_metadata_snapshot(m, sid[0]) != NULL);
	T_CHECK(floe_metadata_snapshot(m, sid[3]) != NULL);
	T_EQ_INT(m->current_snapshot_id, sid[3]);
	T_EQ_INT(count_live(t), 4);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* ---- orphans ----------------------------------------------------------------------- */

typedef struct seen_orphans {
	int n;
	bool saw_young, saw_old;
} seen_orphans;

static int orphan_cb(const char *path, uint64_t size, int64_t mtime_ms, void *payload)
{
	seen_orphans *s = payload;
	(void)size;
	(void)mtime_ms;
	s->n++;
	if (strstr(path, "young"))
		s->saw_young = true;
	if (strstr(path, "old-stray"))
		s->saw_old = true;
	return 0;
}

static void test_orphans(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *t = new_table(cat, "o", NULL);
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	floe_data_file f[3];
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "f%d", i);
		f[i] = put_file(&a, t, name, -1);
		commit(t, FLOE_OP_APPEND, &f[i], NULL, NULL);
	}
	const char *loc = floe_io_local_path(floe_table_metadata(t)->location);
	/* everything the table wrote is old; strays old and young */
	char path[2048], cmd[4096];
	snprintf(cmd, sizeof(cmd), "find '%s' -type f -exec touch -d '10 days ago' {} +", loc);
	T_EQ_INT(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/data/old-stray.parquet", loc);
	FILE *fp = fopen(path, "w");
	fputs("x", fp);
	fclose(fp);
	make_old(path, 5 * 86400);
	char old_stray[2048];
	snprintf(old_stray, sizeof(old_stray), "%s", path);
	snprintf(path, sizeof(path), "%s/metadata/old-stray-m0.avro", loc);
	fp = fopen(path, "w");
	fputs("x", fp);
	fclose(fp);
	make_old(path, 5 * 86400);
	snprintf(path, sizeof(path), "%s/data/young.parquet", loc);
	fp = fopen(path, "w");
	fputs("x", fp);
	fclose(fp);

	floe_orphan_opts o = FLOE_ORPHAN_OPTS_INIT;
	floe_orphan_result r;
	seen_orphans s = {0};
	o.dry_run = true;
	T_OK(floe_delete_orphan_files(t, &o, orphan_cb, &s, &r, &err), &err);
	T_EQ_INT(r.files_found, 2);
	T_EQ_INT(r.files_deleted, 0);
	T_EQ_INT(r.files_too_young, 1);
	T_CHECK(s.saw_old && !s.saw_young);
	T_CHECK(exists(old_stray));

	o.dry_run = false;
	T_OK(floe_delete_orphan_files(t, &o, NULL, NULL, &r, &err), &err);
	T_EQ_INT(r.files_deleted, 2);
	T_CHECK(!exists(old_stray));
	T_CHECK(exists(path)); /* young */
	for (int i = 0; i < 3; i++)
		T_CHECK(exists(f[i].file_path));
	/* every referenced file survived: the table still loads and counts */
	T_OK(floe_table_refresh(t, &err), &err);
	T_EQ_INT(count_live(t), 3);
	/* referenced through another spelling of the URI: still not an orphan */
	T_OK(floe_delete_orphan_files(t, &o, NULL, NULL, &r, &err), &err);
	T_EQ_INT(r.files_found, 0);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void write_stray(const char *path, int64_t age_s)
{
	FILE *fp = fopen(path, "w");
	T_CHECK(fp != NULL);
	if (!fp)
		return;
	fputs("x", fp);
	fclose(fp);
	if (age_s)
		make_old(path, age_s);
}

/* In-progress files survive any cutoff: names starting with '.' for a day,
 * and whatever is newer than a live writer lease until the lease goes. */
static void test_orphans_in_progress(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *t = new_table(cat, "ip", NULL);
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	floe_data_file f = put_file(&a, t, "f0", -1);
	/* the committing handle keeps its lease, but cleaning up through it
	 * releases it first (it is writing nothing) */
	commit(t, FLOE_OP_APPEND, &f, NULL, NULL);
	char loc[1024], young_tmp[1200], old_tmp[1200], written[1200], older[1200];
	snprintf(loc, sizeof(loc), "%s", floe_io_local_path(floe_table_metadata(t)->location));
	snprintf(young_tmp, sizeof(young_tmp), "%s/data/.w.parquet.1234.tmp", loc);
	snprintf(old_tmp, sizeof(old_tmp), "%s/metadata/.abc.metadata.json.tmp", loc);
	snprintf(written, sizeof(written), "%s/data/uncommitted.parquet", loc);
	snprintf(older, sizeof(older), "%s/data/stray.parquet", loc);
	write_stray(young_tmp, 3600);   /* an hour old: still in progress */
	write_stray(old_tmp, 2 * 86400); /* two days: a crashed writer's */
	write_stray(older, 3 * 3600);    /* before the lease (and its margin) */

	/* a writer (another handle: another process) takes its lease, then
	 * writes a file it will commit later */
	floe_table *w = NULL;
	T_OK(floe_table_load(&w, cat, "db", "ip", &err), &err);
	T_OK(floe_table__lease_keep_alive(w, "test writer", 600000, &err), &err);
	write_stray(written, 0);

	floe_orphan_opts o = FLOE_ORPHAN_OPTS_INIT;
	floe_orphan_result r;
	o.older_than_ms = floe_now_ms() + 1000; /* an age of zero, and then some */
	T_OK(floe_delete_orphan_files(t, &o, NULL, NULL, &r, &err), &err);
	T_CHECK(exists(young_tmp));
	T_CHECK(!exists(old_tmp));
	T_CHECK(!exists(older));
	T_CHECK(exists(written)); /* the lease keeps it */
	T_CHECK(r.files_leased >= 1);
	T_CHECK(exists(f.file_path));

	/* the writer is done (say its commit failed): its file is an orphan now */
	floe_table__lease_drop(w, false);
	T_CHECK(exists(written));
	T_OK(floe_delete_orphan_files(t, &o, NULL, NULL, &r, &err), &err);
	T_CHECK(!exists(written));
	T_CHECK(exists(young_tmp));
	T_CHECK(exists(f.file_path));
	T_EQ_INT(count_live(t), 1);

	/* a lease that cannot be read protects everything young */
	char bad[1200];
	snprintf(bad, sizeof(bad), "%s/metadata/.floe-lease-broken.json", loc);
	write_stray(bad, 0);
	write_stray(written, 60);
	T_OK(floe_delete_orphan_files(t, &o, NULL, NULL, &r, &err), &err);
	T_CHECK(exists(written));
	unlink(bad);
	floe_table_free(w);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static int count_lease_cb(const floe_file_info *fi, void *payload)
{
	if (floe_lease_is_lease(fi->path))
		(*(int *)payload)++;
	return 0;
}

static int count_leases(floe_table *t)
{
	floe_error err = {0};
	int n = 0;
	char *mdir = floe_metadata_dir(floe_table_metadata(t));
	T_OK(floe_io_list(floe_table_io(t), mdir, count_lease_cb, &n, &err), &err);
	floe_free(mdir);
	return n;
}

/* A handle that committed keeps its lease while it lives: another handle's
 * cleanup keeps what it writes next, and never deletes a live lease however
 * old its file looks; freed, the handle's lease is gone and so is the
 * protection. */
static void test_orphans_commit_lease(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *w = new_table(cat, "cl", NULL);
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	floe_data_file f = put_file(&a, w, "f0", -1);
	commit(w, FLOE_OP_APPEND, &f, NULL, NULL);
	floe_data_file g = put_file(&a, w, "f1", -1);
	commit(w, FLOE_OP_APPEND, &g, NULL, NULL);
	T_EQ_INT(count_leases(w), 1); /* one for the handle, not one per commit */

	char loc[1024], next[1200], fake[1200];
	snprintf(loc, sizeof(loc), "%s", floe_io_local_path(floe_table_metadata(w)->location));
	snprintf(next, sizeof(next), "%s/data/next-commit.parquet", loc);
	snprintf(fake, sizeof(fake), "%s/metadata/.floe-lease-old-file.json", loc);
	write_stray(next, 0); /* what w writes for its next commit */

	floe_table *c = NULL;
	T_OK(floe_table_load(&c, cat, "db", "cl", &err), &err);
	floe_orphan_opts o = FLOE_ORPHAN_OPTS_INIT;
	floe_orphan_result r;
	o.older_than_ms = floe_now_ms() + 1000;
	T_OK(floe_delete_orphan_files(c, &o, NULL, NULL, &r, &err), &err);
	T_CHECK(exists(next));
	T_EQ_INT(count_leases(w), 1);

	/* a live lease whose file is two days old (a clock far off, a copied
	 * directory) is still a lease, not an orphan */
	FILE *fp = fopen(fake, "w");
	T_CHECK(fp != NULL);
	if (fp) {
		fprintf(fp, "{\"since-ms\": %lld, \"expires-ms\": %lld}",
			(long long)floe_now_ms(), (long long)(floe_now_ms() + 3600000));
		fclose(fp);
	}
	make_old(fake, 2 * 86400);
	T_OK(floe_delete_orphan_files(c, &o, NULL, NULL, &r, &err), &err);
	T_CHECK(exists(fake));
	T_CHECK(exists(next));
	unlink(fake);

	/* the writer goes: its lease with it, and its stray file is an orphan */
	floe_table_free(w);
	T_EQ_INT(count_leases(c), 0);
	T_OK(floe_delete_orphan_files(c, &o, NULL, NULL, &r, &err), &err);
	T_CHECK(!exists(next));
	T_CHECK(exists(f.file_path));
	T_CHECK(exists(g.file_path));
	T_EQ_INT(count_live(c), 2);
	floe_table_free(c);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void test_reach_keys(void)
{
	T_EQ_STR(floe_reach_key("file:/a/b"), "/a/b");
	T_EQ_STR(floe_reach_key("file:///a/b"), "/a/b");
	T_EQ_STR(floe_reach_key("/a/b"), "/a/b");
	T_EQ_STR(floe_reach_key("s3://bk/x/y"), "bk/x/y");
	T_EQ_STR(floe_reach_key("s3a://bk/x/y"), "bk/x/y");
	T_EQ_STR(floe_reach_key("mem://x"), "mem://x");
}

/* ---- rewrite manifests ------------------------------------------------------------ */

typedef struct entry_info {
	char path[512];
	int64_t snapshot_id, seq, file_seq;
} entry_info;

typedef struct entries {
	entry_info v[64];
	int n;
} entries;

static int entries_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	entries *s = payload;
	(void)mf;
	if (s->n < 64) {
		snprintf(s->v[s->n].path, sizeof(s->v[s->n].path), "%s", e->file.file_path);
		s->v[s->n].snapshot_id = e->snapshot_id;
		s->v[s->n].seq = e->sequence_number;
		s->v[s->n].file_seq = e->file_sequence_number;
		s->n++;
	}
	return 0;
}

static int cmp_info(const void *a, const void *b)
{
	return strcmp(((const entry_info *)a)->path, ((const entry_info *)b)->path);
}

static void test_rewrite_manifests(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *t = new_table(cat, "rm", "identity(id)");
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	for (int i = 0; i < 12; i++) {
		char name[16];
		snprintf(name, sizeof(name), "f%d", i);
		floe_data_file f = put_file(&a, t, name, i % 3);
		commit(t, FLOE_OP_APPEND, &f, NULL, NULL);
	}
	entries before = {0}, after = {0};
	T_OK(floe_table_walk(t, NULL, FLOE_WALK_DATA, entries_cb, &before, &err), &err);
	int64_t seq_before = floe_metadata_current_snapshot(floe_table_metadata(t))->sequence_number;

	floe_rewrite_manifests_opts o = FLOE_REWRITE_MANIFESTS_OPTS_INIT;
	floe_rewrite_manifests_result r;
	o.dry_run = true;
	T_OK(floe_rewrite_manifests(t, &o, &r, &err), &err);
	T_EQ_INT(r.manifests_before, 12);
	T_EQ_INT(r.manifests_after, 1);
	T_EQ_INT(r.snapshot_id, -1);
	o.dry_run = false;
	T_OK(floe_rewrite_manifests(t, &o, &r, &err), &err);
	T_EQ_INT(r.manifests_before, 12);
	T_EQ_INT(r.manifests_after, 1);
	T_EQ_INT(r.entries, 12);
	T_CHECK(r.snapshot_id > 0);
	const floe_snapshot *cur = floe_metadata_current_snapshot(floe_table_metadata(t));
	T_EQ_STR(floe_snapshot_summary(cur, "operation"), "replace");
	T_EQ_STR(floe_snapshot_summary(cur, "manifests-replaced"), "12");
	T_EQ_INT(cur->sequence_number, seq_before + 1);
	T_OK(floe_table_walk(t, NULL, FLOE_WALK_DATA, entries_cb, &after, &err), &err);
	T_EQ_INT(after.n, 12);
	/* same files, same snapshot ids and sequence numbers */
	qsort(before.v, (size_t)before.n, sizeof(entry_info), cmp_info);
	qsort(after.v, (size_t)after.n, sizeof(entry_info), cmp_info);
	for (int i = 0; i < 12 && i < after.n; i++) {
		T_EQ_STR(after.v[i].path, before.v[i].path);
		T_EQ_INT(after.v[i].snapshot_id, before.v[i].snapshot_id);
		T_EQ_INT(after.v[i].seq, before.v[i].seq);
		T_EQ_INT(after.v[i].file_seq, before.v[i].file_seq);
	}
	/* clustered by partition: the walk sees id 0s, then 1s, then 2s */
	floe_manifest_file *mfs;
	size_t n;
	T_OK(floe_table_manifests(&mfs, &n, &a, t, cur, &err), &err);
	T_EQ_INT(n, 1);
	/* a second run has nothing to do */
	T_OK(floe_rewrite_manifests(t, &o, &r, &err), &err);
	T_EQ_INT(r.snapshot_id, -1);
	/* a tiny target splits the entries over several manifests */
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "g%d", i);
		floe_data_file f = put_file(&a, t, name, i);
		commit(t, FLOE_OP_APPEND, &f, NULL, NULL);
	}
	o.target_bytes = 4096;
	T_OK(floe_rewrite_manifests(t, &o, &r, &err), &err);
	T_EQ_INT(r.entries, 15);
	T_CHECK(r.manifests_after >= 2);
	T_EQ_INT(count_live(t), 15);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* ---- the lock ------------------------------------------------------------------------ */

static void test_lock_exclusive(void)
{
	const char *dir = t_tmpdir();
	char uri[1024];
	floe_error err = {0};
	floe_maint_lock *a = NULL, *b = NULL;
	snprintf(uri, sizeof(uri), "sqlite://%s/locks.db", dir);
	T_OK(floe_maint_lock_acquire(&a, uri, "cat.db.t", 60000, &err), &err);
	T_EQ_INT(floe_maint_lock_acquire(&b, uri, "cat.db.t", 60000, &err), FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "being maintained by floe instance") != NULL);
	/* another table is independent */
	T_OK(floe_maint_lock_acquire(&b, uri, "cat.db.u", 60000, &err), &err);
	floe_maint_lock_release(b);
	T_OK(floe_maint_lock_check(a, &err), &err);
	floe_maint_lock_release(a);
	T_OK(floe_maint_lock_acquire(&b, uri, "cat.db.t", 60000, &err), &err);
	floe_maint_lock_release(b);
}

static void sql(const char *uri, const char *stmt, const char *const *p, size_t n)
{
	floe_sqldb *db;
	floe_error err = {0};
	T_OK(floe_sqldb_open_uri(&db, uri, 5000, &err), &err);
	T_OK(floe_sql_exec(db, stmt, p, n, NULL, NULL, NULL, &err), &err);
	db->ops->close(db);
}

static void test_lock_recovery(void)
{
	const char *dir = t_tmpdir();
	char uri[1024], old[32];
	floe_error err = {0};
	floe_maint_lock *a = NULL;
	snprintf(uri, sizeof(uri), "%s/locks.db", dir);
	/* create the tables */
	T_OK(floe_maint_lock_acquire(&a, uri, "x", 60000, &err), &err);
	floe_maint_lock_release(a);

	/* a floe holder that went silent long ago */
	snprintf(old, sizeof(old), "%lld", (long long)(floe_now_ms() - 3600 * 1000));
	const char *hb[] = {"11111111-1111-1111-1111-111111111111", "t1", "elsewhere", "1", old};
	sql(uri,
	    "INSERT INTO floe_maintenance_heartbeat (INSTANCE_ID, LOCK_ID, HOST, PID, "
	    "HEARTBEAT_MS) VALUES (?, ?, ?, ?, ?)",
	    hb, 5);
	const char *l1[] = {"m", "t1", "11111111-1111-1111-1111-111111111111"};
	sql(uri, "INSERT INTO flink_maintenance_lock VALUES (?, ?, ?)", l1, 3);
	T_OK(floe_maint_lock_acquire(&a, uri, "t1", 60000, &err), &err);
	floe_maint_lock_release(a);

	/* a holder on this host whose process is gone */
	char host[256] = "", now[32];
	gethostname(host, sizeof(host));
	snprintf(now, sizeof(now), "%lld", (long long)floe_now_ms());
	const char *hb2[] = {"22222222-2222-2222-2222-222222222222", "t2", host, "999999999", now};
	sql(uri,
	    "INSERT INTO floe_maintenance_heartbeat (INSTANCE_ID, LOCK_ID, HOST, PID, "
	    "HEARTBEAT_MS) VALUES (?, ?, ?, ?, ?)",
	    hb2, 5);
	const char *l2[] = {"m", "t2", "22222222-2222-2222-2222-222222222222"};
	sql(uri, "INSERT INTO flink_maintenance_lock VALUES (?, ?, ?)", l2, 3);
	T_OK(floe_maint_lock_acquire(&a, uri, "t2", 60000, &err), &err);
	floe_maint_lock_release(a);

	/* a Java holder (no heartbeat) is never broken automatically */
	const char *l3[] = {"m", "t3", "33333333-3333-3333-3333-333333333333"};
	sql(uri, "INSERT INTO flink_maintenance_lock VALUES (?, ?, ?)", l3, 3);
	T_EQ_INT(floe_maint_lock_acquire(&a, uri, "t3", 1, &err), FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "no floe heartbeat") != NULL);
	/* ... but an operator can */
	T_OK(floe_maint_lock_break(uri, "t3", &err), &err);
	T_OK(floe_maint_lock_acquire(&a, uri, "t3", 60000, &err), &err);
	floe_maint_lock_release(a);

	/* Flink's recovery lock blocks */
	const char *r4[] = {"r", "t4", "44444444-4444-4444-4444-444444444444"};
	sql(uri, "INSERT INTO flink_maintenance_lock VALUES (?, ?, ?)", r4, 3);
	T_EQ_INT(floe_maint_lock_acquire(&a, uri, "t4", 60000, &err), FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "recovering") != NULL);

	/* a live holder whose lock was broken learns it on the next check */
	T_OK(floe_maint_lock_acquire(&a, uri, "t5", 400, &err), &err);
	T_OK(floe_maint_lock_break(uri, "t5", &err), &err);
	floe_maint_lock *b = NULL;
	T_OK(floe_maint_lock_acquire(&b, uri, "t5", 60000, &err), &err);
	floe_sleep_ms(600);
	T_EQ_INT(floe_maint_lock_check(a, &err), FLOE_ECONFLICT);
	floe_maint_lock_release(a); /* must not delete b's row */
	floe_maint_lock *c = NULL;
	T_EQ_INT(floe_maint_lock_acquire(&c, uri, "t5", 60000, &err), FLOE_ECONFLICT);
	floe_maint_lock_release(b);
}

/* ---- embedded maintenance ------------------------------------------------------------ */

static size_t n_manifests(floe_table *t)
{
	floe_arena a;
	floe_manifest_file *mfs;
	size_t n = 0;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	T_OK(floe_table_refresh(t, &err), &err);
	T_OK(floe_table_manifests(&mfs, &n, &a, t,
				  floe_metadata_current_snapshot(floe_table_metadata(t)), &err),
	     &err);
	floe_arena_reset(&a);
	return n;
}

static void wait_runs(floe_maint_runner *r, int64_t runs, int64_t lock_waits)
{
	floe_maint_runner_stats st;
	for (int i = 0; i < 500; i++) {
		floe_maint_runner_get_stats(r, &st);
		if (st.runs >= runs && st.lock_waits >= lock_waits && !st.running)
			return;
		floe_sleep_ms(20);
	}
	t_fail(__FILE__, __LINE__, "runner: %lld runs, %lld lock waits (%s)", (long long)st.runs,
	       (long long)st.lock_waits, st.last_error);
}

static void test_runner_triggers_and_lock(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *t = new_table(cat, "run", NULL);
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	floe_maintain_opts o = FLOE_MAINTAIN_OPTS_INIT;
	o.steps = FLOE_STEP_REWRITE_MANIFESTS | FLOE_STEP_ORPHANS;
	floe_maint_schedule sc = FLOE_MAINT_SCHEDULE_INIT;
	sc.orphan_age_ms = 86400000;
	sc.commit_count = 3;
	sc.rate_limit_ms = 0;
	sc.lock_check_delay_ms = 100;
	floe_maint_runner *r;
	T_OK(floe_maint_runner_start(&r, cat, "db", "run", &o, &sc, &err), &err);
	floe_maint_commit mc = {1, 6, 0, 0};
	char name[16];
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		floe_data_file f = put_file(&a, t, name, -1);
		commit(t, FLOE_OP_APPEND, &f, NULL, NULL);
		floe_maint_runner_note_commit(r, &mc);
	}
	wait_runs(r, 1, 0);
	T_EQ_INT(n_manifests(t), 1);
	/* an orphan appears after the first run: the orphan step (which lists
	 * the table location) waits for its own interval, a day */
	char stray[2048];
	snprintf(stray, sizeof(stray), "%s/data/stray.parquet",
		 floe_io_local_path(floe_table_metadata(t)->location));
	FILE *fp = fopen(stray, "w");
	T_CHECK(fp != NULL);
	if (fp) {
		fputs("x", fp);
		fclose(fp);
	}
	make_old(stray, 5 * 86400);

	/* another maintainer holds the lock: the runner waits and tries again */
	char *uri, *id;
	floe_maint_lock *held;
	T_OK(floe_maint_lock_target(t, &uri, &id, &err), &err);
	T_OK(floe_maint_lock_acquire(&held, uri, id, 60000, &err), &err);
	for (int i = 3; i < 6; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		floe_data_file f = put_file(&a, t, name, -1);
		commit(t, FLOE_OP_APPEND, &f, NULL, NULL);
		floe_maint_runner_note_commit(r, &mc);
	}
	wait_runs(r, 1, 1);
	T_EQ_INT(n_manifests(t), 4);
	floe_maint_lock_release(held);
	wait_runs(r, 2, 1);
	T_EQ_INT(n_manifests(t), 1);

	/* one commit short of the trigger: the final run on a clean stop */
	snprintf(name, sizeof(name), "g");
	floe_data_file g = put_file(&a, t, name, -1);
	commit(t, FLOE_OP_APPEND, &g, NULL, NULL);
	floe_maint_runner_note_commit(r, &mc);
	floe_maint_runner_stats st;
	floe_maint_runner_stop(r, true, &st);
	T_EQ_INT(st.runs, 3);
	T_EQ_INT(st.orphans_deleted, 0);
	T_CHECK(exists(stray));
	T_EQ_INT(n_manifests(t), 1);
	T_EQ_INT(count_live(t), 7);
	/* a new runner's first run includes the orphan step */
	T_OK(floe_maint_runner_start(&r, cat, "db", "run", &o, &sc, &err), &err);
	floe_maint_runner_note_commit(r, &mc);
	floe_maint_runner_stop(r, true, &st);
	T_EQ_INT(st.orphans_deleted, 1);
	T_CHECK(!exists(stray));
	T_EQ_INT(count_live(t), 7);
	floe_free(uri);
	floe_free(id);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* The triggers count from the table's history: a pipeline restarted more
 * often than its commit count still gets maintained. */
static void test_runner_counts_history(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *t = new_table(cat, "hist", NULL);
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	floe_maintain_opts o = FLOE_MAINTAIN_OPTS_INIT;
	o.steps = FLOE_STEP_REWRITE_MANIFESTS;
	floe_maint_schedule sc = FLOE_MAINT_SCHEDULE_INIT;
	sc.commit_count = 3;
	sc.rate_limit_ms = 0;
	sc.on_finish = false;
	floe_maint_commit mc = {1, 6, 0, 0};
	char name[16];
	int k = 0;
	/* an earlier process committed twice and stopped */
	for (; k < 2; k++) {
		snprintf(name, sizeof(name), "h%d", k);
		floe_data_file f = put_file(&a, t, name, -1);
		commit(t, FLOE_OP_APPEND, &f, NULL, NULL);
	}
	/* this one commits once: three since the table was last maintained */
	floe_maint_runner *r;
	floe_maint_runner_stats st;
	T_OK(floe_maint_runner_start(&r, cat, "db", "hist", &o, &sc, &err), &err);
	floe_maint_runner_get_stats(r, &st);
	T_EQ_INT(st.commits_pending, 2);
	snprintf(name, sizeof(name), "h%d", k++);
	floe_data_file g = put_file(&a, t, name, -1);
	commit(t, FLOE_OP_APPEND, &g, NULL, NULL);
	floe_maint_runner_note_commit(r, &mc);
	wait_runs(r, 1, 0);
	floe_maint_runner_stop(r, false, &st);
	T_EQ_INT(st.runs, 1);
	T_OK(floe_table_refresh(t, &err), &err);
	T_EQ_INT(n_manifests(t), 1);
	const floe_snapshot *head = floe_metadata_current_snapshot(floe_table_metadata(t));
	T_CHECK(head && floe_snapshot_summary(head, "floe.maintenance") != NULL);

	/* after the maintenance snapshot the count starts again: two commits in
	 * a process that stops are two, and the next process's one makes three */
	T_OK(floe_maint_runner_start(&r, cat, "db", "hist", &o, &sc, &err), &err);
	for (int i = 0; i < 2; i++, k++) {
		snprintf(name, sizeof(name), "h%d", k);
		floe_data_file f = put_file(&a, t, name, -1);
		commit(t, FLOE_OP_APPEND, &f, NULL, NULL);
		floe_maint_runner_note_commit(r, &mc);
	}
	floe_sleep_ms(200);
	floe_maint_runner_stop(r, false, &st);
	T_EQ_INT(st.runs, 0);
	T_OK(floe_maint_runner_start(&r, cat, "db", "hist", &o, &sc, &err), &err);
	floe_maint_runner_get_stats(r, &st);
	T_EQ_INT(st.commits_pending, 2);
	snprintf(name, sizeof(name), "h%d", k++);
	floe_data_file h = put_file(&a, t, name, -1);
	commit(t, FLOE_OP_APPEND, &h, NULL, NULL);
	floe_maint_runner_note_commit(r, &mc);
	wait_runs(r, 1, 0);
	floe_maint_runner_stop(r, false, &st);
	T_EQ_INT(st.runs, 1);
	T_OK(floe_table_refresh(t, &err), &err);
	T_EQ_INT(n_manifests(t), 1);
	T_EQ_INT(count_live(t), 6);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

int main(void)
{
	T_RUN(test_reach_keys);
	T_RUN(test_expire_retains_and_cleans);
	T_RUN(test_expire_keeps_tag_heads_and_young);
	T_RUN(test_orphans);
	T_RUN(test_orphans_in_progress);
	T_RUN(test_orphans_commit_lease);
	T_RUN(test_rewrite_manifests);
	T_RUN(test_lock_exclusive);
	T_RUN(test_lock_recovery);
	T_RUN(test_runner_triggers_and_lock);
	T_RUN(test_runner_counts_history);
	return t_finish();
}
