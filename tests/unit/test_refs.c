/*
 * test_refs.c — branches and tags (refs.c: Java's ManageSnapshots rules),
 * commits to a branch, cherry-pick, expiry honouring per-ref retention, and
 * the overwrite scope of the producer (dynamic and filtered, with Java's
 * validateAddedDataFiles conflict), on tables of placeholder files.
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/sqldb.h"
#include "floe/maintain.h"
#include "harness.h"
#include "table/commit.h"
#include "util/alloc.h"
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
	o.schema = "id long, p long";
	o.partition_by = partition_by;
	T_OK(floe_table_create(&t, cat, "db", name, &o, &err), &err);
	return t;
}

static int n_files;

/* A placeholder data file in partition `part` (-1: unpartitioned). */
static floe_data_file put_file(floe_arena *a, floe_table *t, int64_t part)
{
	floe_data_file f;
	floe_data_file_init(&f);
	f.content = FLOE_CONTENT_DATA;
	const char *loc = floe_io_local_path(floe_table_metadata(t)->location);
	char dir[2048];
	snprintf(dir, sizeof(dir), "%s/data", loc);
	mkdir(dir, 0755);
	f.file_path = floe_arena_sprintf(a, "%s/data/f%d.parquet", loc, n_files++);
	f.record_count = 10;
	f.file_size_in_bytes = 6;
	f.spec_id = floe_table_metadata(t)->default_spec_id;
	if (part >= 0) {
		f.partition.n = 1;
		f.partition.values = floe_arena_calloc(a, 1, sizeof(floe_value));
		f.partition.values[0].type = FLOE_T_LONG;
		f.partition.values[0].v.i64 = part;
	}
	FILE *fp = fopen(f.file_path, "w");
	T_CHECK(fp != NULL);
	if (fp) {
		fputs("dummy\n", fp);
		fclose(fp);
	}
	return f;
}

static int64_t append(floe_table *t, const char *branch, const floe_data_file *f)
{
	floe_snapshot_op *op;
	floe_error err = {0};
	int64_t sid = -1;
	T_OK(floe_op_new(&op, t, FLOE_OP_APPEND, branch, &err), &err);
	T_OK(floe_op_add_file(op, f, &err), &err);
	T_OK(floe_op_commit(op, &sid, &err), &err);
	floe_op_free(op);
	return sid;
}

static int ref_change(floe_table *t, int action, const char *name, int64_t snap, const char *from,
		      floe_error *err)
{
	floe_ref_opts o = FLOE_REF_OPTS_INIT;
	o.action = action;
	o.name = name;
	o.snapshot_id = snap;
	o.from = from;
	return floe_table_manage_ref(t, &o, err);
}

static int64_t head_of(floe_table *t, const char *name)
{
	int64_t id = -1;
	bool tag = false;
	(void)floe_table_ref(t, name, &id, &tag);
	return id;
}

static void test_ref_rules(void)
{
	floe_catalog *cat = open_cat(t_tmpdir());
	floe_table *t = new_table(cat, "rules", NULL);
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	/* nothing to point at yet */
	T_ERR(ref_change(t, FLOE_REF_CREATE_BRANCH, "b", -1, NULL, &err), FLOE_ENOTFOUND);
	floe_data_file f0 = put_file(&a, t, -1);
	int64_t s0 = append(t, NULL, &f0);
	T_OK(ref_change(t, FLOE_REF_CREATE_BRANCH, "b", -1, NULL, &err), &err);
	T_EQ_INT(head_of(t, "b"), s0);
	T_ERR(ref_change(t, FLOE_REF_CREATE_BRANCH, "b", -1, NULL, &err), FLOE_EEXISTS);
	T_EQ_MSG(err.msg, "update the refs of db.rules (attempt 1): Ref b already exists");
	T_ERR(ref_change(t, FLOE_REF_CREATE_TAG, "b", -1, NULL, &err), FLOE_EEXISTS);
	T_ERR(ref_change(t, FLOE_REF_CREATE_TAG, "main", -1, NULL, &err), FLOE_EEXISTS);
	T_ERR(ref_change(t, FLOE_REF_CREATE_TAG, "t", 12345, NULL, &err), FLOE_ENOTFOUND);
	T_OK(ref_change(t, FLOE_REF_CREATE_TAG, "t", s0, NULL, &err), &err);
	T_ERR(ref_change(t, FLOE_REF_DROP_BRANCH, "main", -1, NULL, &err), FLOE_EINVAL);
	T_ERR(ref_change(t, FLOE_REF_DROP_BRANCH, "t", -1, NULL, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "Ref t is a tag not a branch") != NULL);
	T_ERR(ref_change(t, FLOE_REF_DROP_TAG, "nope", -1, NULL, &err), FLOE_ENOTFOUND);
	/* a tag has no snapshot retention */
	floe_ref_opts o = FLOE_REF_OPTS_INIT;
	o.action = FLOE_REF_CREATE_TAG;
	o.name = "t2";
	o.min_snapshots_to_keep = 3;
	T_ERR(floe_table_manage_ref(t, &o, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "Tags do not support") != NULL);
	o.version = 7;
	T_ERR(floe_table_manage_ref(t, &o, &err), FLOE_EINVAL);
	/* commits to b leave main alone; main fast-forwards to b */
	floe_data_file f1 = put_file(&a, t, -1), f2 = put_file(&a, t, -1);
	int64_t s1 = append(t, "b", &f1);
	int64_t s2 = append(t, "b", &f2);
	T_EQ_INT(head_of(t, "main"), s0);
	T_EQ_INT(head_of(t, "b"), s2);
	T_OK(ref_change(t, FLOE_REF_FAST_FORWARD, "main", -1, "b", &err), &err);
	T_EQ_INT(head_of(t, "main"), s2);
	T_EQ_INT(floe_table_metadata(t)->current_snapshot_id, s2);
	/* diverged: main gets s3, b is no descendant of it */
	floe_data_file f3 = put_file(&a, t, -1);
	int64_t s3 = append(t, NULL, &f3);
	T_ERR(ref_change(t, FLOE_REF_FAST_FORWARD, "b", -1, "t", &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "Cannot fast-forward: b is not an ancestor of t") != NULL);
	/* replace moves anywhere */
	T_OK(ref_change(t, FLOE_REF_REPLACE_BRANCH, "b", s1, NULL, &err), &err);
	T_EQ_INT(head_of(t, "b"), s1);
	T_OK(ref_change(t, FLOE_REF_FAST_FORWARD, "b", -1, "main", &err), &err);
	T_EQ_INT(head_of(t, "b"), s3);
	/* the snapshot log stays sorted */
	const floe_metadata *m = floe_table_metadata(t);
	for (size_t i = 1; i < m->n_snapshot_log; i++)
		T_CHECK(m->snapshot_log[i].timestamp_ms >= m->snapshot_log[i - 1].timestamp_ms);
	T_OK(ref_change(t, FLOE_REF_DROP_BRANCH, "b", -1, NULL, &err), &err);
	T_EQ_INT(head_of(t, "b"), -1);
	/* replace needs the branch; fast-forward makes a missing one (as Java) */
	T_ERR(ref_change(t, FLOE_REF_REPLACE_BRANCH, "b", s1, NULL, &err), FLOE_ENOTFOUND);
	T_OK(ref_change(t, FLOE_REF_FAST_FORWARD, "b", -1, "t", &err), &err);
	T_EQ_INT(head_of(t, "b"), s0);
	T_OK(ref_change(t, FLOE_REF_DROP_BRANCH, "b", -1, NULL, &err), &err);
	/* a commit to a branch that does not exist makes it from main */
	floe_data_file f4 = put_file(&a, t, -1);
	int64_t s4 = append(t, "fresh", &f4);
	T_EQ_INT(floe_metadata_snapshot(floe_table_metadata(t), s4)->parent_id, s3);
	T_EQ_INT(head_of(t, "main"), s3);
	/* commits to a tag are refused */
	floe_snapshot_op *op;
	floe_data_file f5 = put_file(&a, t, -1);
	T_OK(floe_op_new(&op, t, FLOE_OP_APPEND, "t", &err), &err);
	T_OK(floe_op_add_file(op, &f5, &err), &err);
	T_ERR(floe_op_commit(op, NULL, &err), FLOE_EINVAL);
	floe_op_free(op);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void test_cherry_pick(void)
{
	floe_catalog *cat = open_cat(t_tmpdir());
	floe_table *t = new_table(cat, "pick", NULL);
	floe_arena a;
	floe_error err = {0};
	int64_t out = -1;
	floe_arena_init(&a, 4096);
	floe_data_file f0 = put_file(&a, t, -1), f1 = put_file(&a, t, -1), f2 = put_file(&a, t, -1);
	int64_t s0 = append(t, NULL, &f0);
	int64_t s1 = append(t, "staging", &f1); /* parent s0 = main's head */
	T_OK(floe_table_cherry_pick(t, s1, NULL, &out, &err), &err);
	T_EQ_INT(out, s1); /* fast-forward */
	T_ERR(floe_table_cherry_pick(t, s1, NULL, &out, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "already an ancestor") != NULL);
	int64_t s2 = append(t, "staging", &f2);
	floe_data_file f3 = put_file(&a, t, -1);
	int64_t s3 = append(t, NULL, &f3); /* main moves on */
	T_OK(floe_table_cherry_pick(t, s2, NULL, &out, &err), &err);
	T_CHECK(out != s2 && out > 0);
	const floe_snapshot *p = floe_metadata_snapshot(floe_table_metadata(t), out);
	T_EQ_INT(p->parent_id, s3);
	T_EQ_STR(floe_snapshot_summary(p, "operation"), "append");
	char num[32];
	snprintf(num, sizeof(num), "%lld", (long long)s2);
	T_EQ_STR(floe_snapshot_summary(p, "source-snapshot-id"), num);
	floe_file_counts c;
	T_OK(floe_table_count_files(&c, t, NULL, &err), &err);
	T_EQ_INT(c.data_files, 4);
	T_ERR(floe_table_cherry_pick(t, s2, NULL, &out, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "already picked") != NULL);
	T_ERR(floe_table_cherry_pick(t, 42, NULL, &out, &err), FLOE_ENOTFOUND);
	(void)s0;
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void test_expire_honours_ref_retention(void)
{
	floe_catalog *cat = open_cat(t_tmpdir());
	floe_table *t = new_table(cat, "ret", NULL);
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	int64_t m[3], b[4];
	for (int i = 0; i < 3; i++) {
		floe_data_file f = put_file(&a, t, -1);
		m[i] = append(t, NULL, &f);
	}
	/* branch b: 4 snapshots of its own, keeps 3 */
	floe_ref_opts o = FLOE_REF_OPTS_INIT;
	o.action = FLOE_REF_CREATE_BRANCH;
	o.name = "b";
	o.min_snapshots_to_keep = 3;
	T_OK(floe_table_manage_ref(t, &o, &err), &err);
	for (int i = 0; i < 4; i++) {
		floe_data_file f = put_file(&a, t, -1);
		b[i] = append(t, "b", &f);
	}
	/* tags: one that lives, one that ages out at once */
	T_OK(ref_change(t, FLOE_REF_CREATE_TAG, "keep", m[0], NULL, &err), &err);
	o = (floe_ref_opts)FLOE_REF_OPTS_INIT;
	o.action = FLOE_REF_CREATE_TAG;
	o.name = "old";
	o.snapshot_id = m[1];
	o.max_ref_age_ms = 1;
	T_OK(floe_table_manage_ref(t, &o, &err), &err);
	usleep(5000);
	floe_expire_opts eo = FLOE_EXPIRE_OPTS_INIT;
	floe_expire_result r;
	eo.older_than_ms = floe_now_ms() + 1000;
	eo.retain_last = 1;
	T_OK(floe_expire_snapshots(t, &eo, &r, &err), &err);
	const floe_metadata *md = floe_table_metadata(t);
	/* main keeps m2; b keeps b1..b3; tag keep keeps m0; m1 (old's) and b0 go */
	T_CHECK(floe_metadata_snapshot(md, m[0]) != NULL);
	T_CHECK(floe_metadata_snapshot(md, m[1]) == NULL);
	T_CHECK(floe_metadata_snapshot(md, m[2]) != NULL);
	T_CHECK(floe_metadata_snapshot(md, b[0]) == NULL);
	for (int i = 1; i < 4; i++)
		T_CHECK(floe_metadata_snapshot(md, b[i]) != NULL);
	T_CHECK(floe_metadata_ref(md, "old") == NULL);
	T_CHECK(floe_metadata_ref(md, "keep") != NULL);
	T_EQ_INT(head_of(t, "b"), b[3]);
	/* the branch still reads all its files (its snapshots keep them) */
	floe_file_counts c;
	T_OK(floe_table_count_files(&c, t, floe_metadata_snapshot(md, b[3]), &err), &err);
	T_EQ_INT(c.data_files, 7);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* ---- overwrite ------------------------------------------------------------------------ */

static int64_t overwrite(floe_table *t, const floe_data_file *add, size_t n, int64_t base,
			 floe_op_scope_fn filter, floe_error *err, int *rc_out)
{
	floe_snapshot_op *op;
	int64_t sid = -1;
	T_OK(floe_op_new(&op, t, FLOE_OP_OVERWRITE, NULL, err), err);
	for (size_t i = 0; i < n; i++)
		T_OK(floe_op_add_file(op, &add[i], err), err);
	floe_overwrite_scope s = {filter == NULL, filter, NULL, "p = 1", base, -1, NULL};
	T_OK(floe_op_set_overwrite(op, &s, err), err);
	*rc_out = floe_op_commit(op, &sid, err);
	floe_op_free(op);
	return sid;
}

static int p_is_1(void *payload, const floe_data_file *f)
{
	(void)payload;
	return f->partition.n == 1 && f->partition.values[0].v.i64 == 1 ? FLOE_SCOPE_ALL
									: FLOE_SCOPE_NONE;
}

static void test_overwrite_scopes_and_conflicts(void)
{
	floe_catalog *cat = open_cat(t_tmpdir());
	floe_table *t = new_table(cat, "ow", "p");
	floe_arena a;
	floe_error err = {0};
	int rc;
	floe_arena_init(&a, 4096);
	floe_data_file p1 = put_file(&a, t, 1), p2 = put_file(&a, t, 2), p1b = put_file(&a, t, 1);
	append(t, NULL, &p1);
	append(t, NULL, &p2);
	int64_t base = append(t, NULL, &p1b);
	/* dynamic: partition 1 is replaced, 2 kept */
	floe_data_file n1 = put_file(&a, t, 1);
	int64_t s = overwrite(t, &n1, 1, base, NULL, &err, &rc);
	T_OK(rc, &err);
	const floe_snapshot *snap = floe_metadata_snapshot(floe_table_metadata(t), s);
	T_EQ_STR(floe_snapshot_summary(snap, "operation"), "overwrite");
	T_EQ_STR(floe_snapshot_summary(snap, "deleted-data-files"), "2");
	T_EQ_STR(floe_snapshot_summary(snap, "replace-partitions"), "true");
	floe_file_counts c;
	T_OK(floe_table_count_files(&c, t, NULL, &err), &err);
	T_EQ_INT(c.data_files, 2);
	/* an append into partition 1 after the base: Java's conflict */
	base = s;
	floe_data_file late = put_file(&a, t, 1), other = put_file(&a, t, 2);
	append(t, NULL, &other); /* another partition: no conflict */
	floe_data_file n2 = put_file(&a, t, 1);
	int64_t ok = overwrite(t, &n2, 1, base, NULL, &err, &rc);
	T_OK(rc, &err);
	T_CHECK(ok > 0);
	base = ok;
	append(t, NULL, &late);
	floe_data_file n3 = put_file(&a, t, 1);
	(void)overwrite(t, &n3, 1, base, NULL, &err, &rc);
	T_EQ_INT(rc, FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "Found conflicting files that can contain records matching "
				"partitions") != NULL);
	T_CHECK(strstr(err.msg, late.file_path) != NULL);
	/* filtered: p = 1 replaced from the current head; a file outside it refused */
	int64_t head = floe_table_metadata(t)->current_snapshot_id;
	floe_data_file n4 = put_file(&a, t, 1);
	(void)overwrite(t, &n4, 1, head, p_is_1, &err, &rc);
	T_OK(rc, &err);
	T_OK(floe_table_count_files(&c, t, NULL, &err), &err);
	T_EQ_INT(c.data_files, 3); /* n4 + two of partition 2 */
	head = floe_table_metadata(t)->current_snapshot_id;
	floe_data_file bad = put_file(&a, t, 2);
	(void)overwrite(t, &bad, 1, head, p_is_1, &err, &rc);
	T_EQ_INT(rc, FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "Cannot append file with rows that do not match filter") != NULL);
	/* an empty filtered overwrite deletes what matches */
	(void)overwrite(t, NULL, 0, head, p_is_1, &err, &rc);
	T_OK(rc, &err);
	T_OK(floe_table_count_files(&c, t, NULL, &err), &err);
	T_EQ_INT(c.data_files, 2);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

int main(void)
{
	T_RUN(test_ref_rules);
	T_RUN(test_cherry_pick);
	T_RUN(test_expire_honours_ref_retention);
	T_RUN(test_overwrite_scopes_and_conflicts);
	return t_finish();
}
