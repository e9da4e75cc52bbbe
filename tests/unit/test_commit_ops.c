/*
 * test_commit_ops.c — snapshot producers beyond append: replace (compaction
 * keeping data sequence numbers), delete, overwrite, row deltas with delete
 * files; manifests rewritten with DELETED entries; validation against
 * concurrent commits; retries that keep the other writer's snapshot.
 */
#include <stdlib.h>

#include "harness.h"
#include "table/commit.h"
#include "table/create.h"

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
	return cat;
}

static floe_data_file mkfile(floe_arena *a, floe_table *t, int content, const char *name,
			     int64_t rows)
{
	floe_data_file f;
	floe_data_file_init(&f);
	f.content = content;
	f.file_path = floe_arena_sprintf(a, "%s/data/%s.parquet", floe_table_metadata(t)->location,
					 name);
	f.record_count = rows;
	f.file_size_in_bytes = 100 * rows;
	f.spec_id = 0;
	if (content == FLOE_CONTENT_EQUALITY_DELETES) {
		static int32_t ids[] = {1};
		f.equality_ids = ids;
		f.n_equality_ids = 1;
	}
	return f;
}

static int64_t commit_one(floe_table *t, floe_op_kind kind, const floe_data_file *add, size_t n_add,
			  const floe_data_file *rm, size_t n_rm, int64_t data_seq, int64_t validate,
			  int expect_rc)
{
	floe_snapshot_op *op;
	floe_error err = {0};
	int64_t sid = -1;
	T_OK(floe_op_new(&op, t, kind, NULL, &err), &err);
	for (size_t i = 0; i < n_add; i++)
		T_OK(floe_op_add_file(op, &add[i], &err), &err);
	for (size_t i = 0; i < n_rm; i++)
		T_OK(floe_op_remove_file(op, &rm[i], &err), &err);
	if (data_seq >= 0)
		floe_op_set_data_sequence_number(op, data_seq);
	if (validate != -2)
		floe_op_validate_from(op, validate);
	int rc = floe_op_commit(op, &sid, &err);
	if (rc != expect_rc)
		t_fail(__FILE__, __LINE__, "commit -> %s (%s), expected %s", floe_strerror(rc), err.msg,
		       floe_strerror(expect_rc));
	t_checks++;
	floe_op_free(op);
	return sid;
}

typedef struct seen {
	int live_data, live_deletes;
	int64_t seq_of_c;
	int deleted_entries;
} seen;

static int seen_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	seen *s = payload;
	(void)mf;
	if (e->status == FLOE_ENTRY_DELETED) {
		s->deleted_entries++;
		return 0;
	}
	if (e->file.content == FLOE_CONTENT_DATA)
		s->live_data++;
	else
		s->live_deletes++;
	if (strstr(e->file.file_path, "/c.parquet"))
		s->seq_of_c = e->sequence_number;
	return 0;
}

static seen look(floe_table *t)
{
	seen s = {0, 0, -1, 0};
	floe_error err = {0};
	T_OK(floe_table_walk(t, NULL, FLOE_WALK_DATA | FLOE_WALK_DELETES | FLOE_WALK_ALL_ENTRIES,
			     seen_cb, &s, &err),
	     &err);
	return s;
}

static floe_table *new_table(floe_catalog *cat, floe_arena *a, const char *name)
{
	floe_error err = {0};
	floe_schema *s;
	floe_table *t = NULL;
	T_OK(floe_schema_parse_compact(&s, a, "id long, v string", &err), &err);
	floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
	ts.schema = s;
	T_OK(floe_table__create(&t, cat, "db", name, &ts, &err), &err);
	return t;
}

static void test_replace_keeps_sequence_numbers(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog__create_namespace(cat, "db", NULL, &err), &err);
	floe_table *t = new_table(cat, &a, "r");
	floe_data_file fa = mkfile(&a, t, FLOE_CONTENT_DATA, "a", 10);
	floe_data_file fb = mkfile(&a, t, FLOE_CONTENT_DATA, "b", 20);
	floe_data_file fc = mkfile(&a, t, FLOE_CONTENT_DATA, "c", 30);
	commit_one(t, FLOE_OP_APPEND, &fa, 1, NULL, 0, -1, -2, 0);
	int64_t s2 = commit_one(t, FLOE_OP_APPEND, &fb, 1, NULL, 0, -1, -2, 0);
	int64_t seq2 = floe_metadata_snapshot(floe_table_metadata(t), s2)->sequence_number;
	/* compaction of a and b into c, started at snapshot 2: c keeps seq 2 */
	floe_data_file rm[] = {fa, fb};
	int64_t s3 = commit_one(t, FLOE_OP_REPLACE, &fc, 1, rm, 2, seq2, s2, 0);
	const floe_snapshot *snap = floe_metadata_snapshot(floe_table_metadata(t), s3);
	T_EQ_STR(floe_snapshot_summary(snap, "operation"), "replace");
	T_EQ_STR(floe_snapshot_summary(snap, "deleted-data-files"), "2");
	T_EQ_STR(floe_snapshot_summary(snap, "added-data-files"), "1");
	T_EQ_STR(floe_snapshot_summary(snap, "total-data-files"), "1");
	T_EQ_STR(floe_snapshot_summary(snap, "total-records"), "30");
	seen s = look(t);
	T_EQ_INT(s.live_data, 1);
	T_EQ_INT(s.deleted_entries, 2);
	T_EQ_INT(s.seq_of_c, seq2);
	T_EQ_INT(snap->sequence_number, seq2 + 1);
	/* removing a file that is gone is a final conflict */
	commit_one(t, FLOE_OP_DELETE, NULL, 0, &fa, 1, -1, -2, FLOE_ECONFLICT);
	/* DELETED entries stay in manifests nobody rewrites (as in Java); a
	 * manifest that is rewritten drops its older DELETED entries */
	floe_data_file fd = mkfile(&a, t, FLOE_CONTENT_DATA, "d", 5);
	commit_one(t, FLOE_OP_DELETE, NULL, 0, &fc, 1, -1, -2, 0);
	commit_one(t, FLOE_OP_APPEND, &fd, 1, NULL, 0, -1, -2, 0);
	s = look(t);
	T_EQ_INT(s.live_data, 1);
	T_EQ_INT(s.deleted_entries, 3); /* a, b (from the replace) and c */
	const floe_snapshot *cur = floe_metadata_current_snapshot(floe_table_metadata(t));
	T_EQ_STR(floe_snapshot_summary(cur, "total-records"), "5");
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void test_row_delta_and_validation(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog__create_namespace(cat, "db", NULL, &err), &err);
	floe_table *t = new_table(cat, &a, "d");
	floe_data_file fa = mkfile(&a, t, FLOE_CONTENT_DATA, "a", 10);
	int64_t s1 = commit_one(t, FLOE_OP_APPEND, &fa, 1, NULL, 0, -1, -2, 0);
	/* upsert: new data plus an equality delete -> overwrite */
	floe_data_file rows[] = {mkfile(&a, t, FLOE_CONTENT_DATA, "b", 3),
				 mkfile(&a, t, FLOE_CONTENT_EQUALITY_DELETES, "eq1", 3)};
	int64_t s2 = commit_one(t, FLOE_OP_ROW_DELTA, rows, 2, NULL, 0, -1, -2, 0);
	const floe_snapshot *snap = floe_metadata_snapshot(floe_table_metadata(t), s2);
	T_EQ_STR(floe_snapshot_summary(snap, "operation"), "overwrite");
	T_EQ_STR(floe_snapshot_summary(snap, "added-equality-delete-files"), "1");
	T_EQ_STR(floe_snapshot_summary(snap, "total-equality-deletes"), "3");
	T_EQ_STR(floe_snapshot_summary(snap, "total-delete-files"), "1");
	/* a position delete for a -> then a compaction of a started before it fails */
	floe_data_file pd = mkfile(&a, t, FLOE_CONTENT_POSITION_DELETES, "pos1", 1);
	pd.referenced_data_file = fa.file_path;
	int64_t s3 = commit_one(t, FLOE_OP_ROW_DELTA, &pd, 1, NULL, 0, -1, -2, 0);
	T_EQ_STR(floe_snapshot_summary(floe_metadata_snapshot(floe_table_metadata(t), s3),
				       "operation"),
		 "delete");
	floe_data_file fc = mkfile(&a, t, FLOE_CONTENT_DATA, "c", 10);
	commit_one(t, FLOE_OP_REPLACE, &fc, 1, &fa, 1, 1, s1, FLOE_ECONFLICT);
	/* started after the delete, with the delete file removed too: fine */
	floe_data_file rm[] = {fa, pd};
	commit_one(t, FLOE_OP_REPLACE, &fc, 1, rm, 2, -1, s3, 0);
	seen s = look(t);
	T_EQ_INT(s.live_data, 2);
	T_EQ_INT(s.live_deletes, 1); /* the equality delete stays */
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

/* Java's row-delta validation: a position delete / DV whose data file a
 * concurrent commit removed fails cleanly; so does a DV for a data file
 * that a concurrent commit gave a DV; deletes of files the same row delta
 * adds, and of files still live, commit. */
static void test_row_delta_validates_targets(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog__create_namespace(cat, "db", NULL, &err), &err);
	floe_schema *sch;
	T_OK(floe_schema_parse_compact(&sch, &a, "id long, v string", &err), &err);
	floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
	ts.schema = sch;
	ts.format_version = 3;
	floe_table *t = NULL;
	T_OK(floe_table__create(&t, cat, "db", "v", &ts, &err), &err);
	floe_data_file fa = mkfile(&a, t, FLOE_CONTENT_DATA, "a", 10);
	floe_data_file fb = mkfile(&a, t, FLOE_CONTENT_DATA, "b", 10);
	floe_data_file both[] = {fa, fb};
	int64_t s1 = commit_one(t, FLOE_OP_APPEND, both, 2, NULL, 0, -1, -2, 0);
	/* t2 knows snapshot s1 only */
	floe_table *t2 = NULL;
	T_OK(floe_table_load(&t2, cat, "db", "v", &err), &err);
	floe_data_file fc = mkfile(&a, t, FLOE_CONTENT_DATA, "c", 10);
	commit_one(t, FLOE_OP_REPLACE, &fc, 1, &fa, 1, 1, s1, 0);
	/* a DV for a (now compacted away) from the stale handle: refused */
	floe_data_file dv = mkfile(&a, t, FLOE_CONTENT_POSITION_DELETES, "dv1", 1);
	dv.file_path = floe_arena_sprintf(&a, "%s/data/dv1.puffin", floe_table_metadata(t)->location);
	dv.file_format = "PUFFIN";
	dv.content_offset = 4;
	dv.content_size_in_bytes = 40;
	dv.referenced_data_file = fa.file_path;
	floe_snapshot_op *op = NULL;
	T_OK(floe_op_new(&op, t2, FLOE_OP_ROW_DELTA, NULL, &err), &err);
	T_OK(floe_op_add_file(op, &dv, &err), &err);
	T_EQ_INT(floe_op_commit(op, NULL, &err), FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "removed data file") && strstr(err.msg, "/data/a.parquet"));
	T_CHECK(!err.retryable);
	floe_op_free(op);
	/* a DV for b (still live) from a handle that has not seen the replace: fine */
	floe_table_free(t2);
	T_OK(floe_table_load(&t2, cat, "db", "v", &err), &err);
	floe_table *t3 = NULL;
	T_OK(floe_table_load(&t3, cat, "db", "v", &err), &err);
	dv.referenced_data_file = fb.file_path;
	commit_one(t2, FLOE_OP_ROW_DELTA, &dv, 1, NULL, 0, -1, -2, 0);
	/* t3 (stale) adds another DV for b: a second DV for one data file */
	floe_data_file dv2 = dv;
	dv2.file_path = floe_arena_sprintf(&a, "%s/data/dv2.puffin", floe_table_metadata(t)->location);
	T_OK(floe_op_new(&op, t3, FLOE_OP_ROW_DELTA, NULL, &err), &err);
	T_OK(floe_op_add_file(op, &dv2, &err), &err);
	T_EQ_INT(floe_op_commit(op, NULL, &err), FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "added a deletion vector for"));
	floe_op_free(op);
	/* new data and a DV for it in the same row delta: nothing to check */
	floe_data_file fd = mkfile(&a, t, FLOE_CONTENT_DATA, "d", 10);
	floe_data_file dv3 = dv;
	dv3.file_path = floe_arena_sprintf(&a, "%s/data/dv3.puffin", floe_table_metadata(t)->location);
	dv3.referenced_data_file = fd.file_path;
	floe_data_file delta[] = {fd, dv3};
	commit_one(t3, FLOE_OP_ROW_DELTA, delta, 2, NULL, 0, -1, -2, 0);
	floe_table_free(t3);
	floe_table_free(t2);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

static void test_replace_retries_onto_new_base(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_error err = {0};
	floe_arena a;
	floe_arena_init(&a, 0);
	T_OK(floe_catalog__create_namespace(cat, "db", NULL, &err), &err);
	floe_table *t = new_table(cat, &a, "c");
	floe_data_file fa = mkfile(&a, t, FLOE_CONTENT_DATA, "a", 10);
	floe_data_file fb = mkfile(&a, t, FLOE_CONTENT_DATA, "b", 10);
	int64_t s1 = commit_one(t, FLOE_OP_APPEND, &fa, 1, NULL, 0, -1, -2, 0);
	/* a second handle appends after t loaded: t's replace must retry */
	floe_table *t2;
	T_OK(floe_table_load(&t2, cat, "db", "c", &err), &err);
	commit_one(t2, FLOE_OP_APPEND, &fb, 1, NULL, 0, -1, -2, 0);
	floe_data_file fc = mkfile(&a, t, FLOE_CONTENT_DATA, "c", 10);
	commit_one(t, FLOE_OP_REPLACE, &fc, 1, &fa, 1, 1, s1, 0);
	seen s = look(t);
	T_EQ_INT(s.live_data, 2); /* b (the other writer's) and c */
	T_EQ_INT(floe_table_metadata(t)->n_snapshots, 3);
	floe_table_free(t2);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_arena_reset(&a);
}

int main(void)
{
	T_RUN(test_replace_keeps_sequence_numbers);
	T_RUN(test_row_delta_and_validation);
	T_RUN(test_row_delta_validates_targets);
	T_RUN(test_replace_retries_onto_new_base);
	return t_finish();
}
