/*
 * test_dml.c — floe_dml_delete/update/merge: both modes give the same rows,
 * nothing matched commits nothing, bad input is refused before anything is
 * written, and the conflict checks of Java's row-level operations (a
 * concurrent delete of the same file, serializable vs snapshot isolation
 * against a concurrent append) — the concurrent commit lands through the
 * before-commit hook, between the read and the commit.
 */
#include "dml/dml_int.h"
#include "floe/scan.h"
#include "test_write_util.h"

static const char *cols = "id long not null, region string not null, name string, v long";

static int collect(const char *data, size_t n, void *payload)
{
	return floe_buf_append(payload, data, n);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The table's rows as sorted CSV lines. */
static void table_text(wenv *e, const char *name, floe_buf *out)
{
	floe_table *t = NULL;
	floe_scan *sc = NULL;
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	floe_error err = {0};
	floe_buf raw;
	floe_buf_init(&raw, 0);
	out->len = 0;
	if (out->data)
		out->data[0] = 0;
	T_OK(floe_table_load(&t, e->cat, "db", name, &err), &err);
	T_OK(floe_scan_open(&sc, t, &so, &err), &err);
	T_OK(floe_scan_write(sc, FLOE_OUTPUT_CSV, collect, &raw, &err), &err);
	floe_scan_free(sc);
	floe_table_free(t);
	char *lines[1024];
	size_t n = 0;
	char *p = (char *)floe_buf_cstr(&raw);
	bool header = true;
	while (p && *p && n < 1024) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (!header && *p)
			lines[n++] = p;
		header = false;
		p = nl ? nl + 1 : NULL;
	}
	qsort(lines, n, sizeof(char *), cmp_line);
	for (size_t i = 0; i < n; i++)
		T_EQ_INT(floe_buf_printf(out, "%s\n", lines[i]), 0);
	(void)floe_buf_cstr(out);
	floe_buf_reset(&raw);
}

static int src_n;
static const char *src_dir;

/* Merge JSON lines into the table on id; returns the new snapshot. */
static int merge_text(floe_table *t, const char *text, floe_dml_result *r, floe_error *err)
{
	char path[1024];
	if (!src_dir)
		src_dir = t_tmpdir();
	snprintf(path, sizeof(path), "%s/src%d.jsonl", src_dir, src_n++);
	FILE *f = fopen(path, "w");
	T_CHECK(f != NULL);
	if (!f)
		return FLOE_EIO;
	fputs(text, f);
	fclose(f);
	const char *on[] = {"id"};
	return floe_dml_merge(t, path, NULL, on, 1, NULL, r, err);
}

static const char *seed =
	"{\"id\":1,\"region\":\"eu\",\"name\":\"a\",\"v\":10}\n"
	"{\"id\":2,\"region\":\"eu\",\"name\":\"b\",\"v\":20}\n"
	"{\"id\":3,\"region\":\"us\",\"name\":\"c\",\"v\":30}\n"
	"{\"id\":4,\"region\":\"us\",\"name\":null,\"v\":40}\n";

static floe_table *seeded(wenv *e, const char *name, int fv)
{
	floe_table *t = make_table(e, name, cols, "region", NULL, fv);
	floe_dml_result r;
	floe_error err = {0};
	T_OK(merge_text(t, seed, &r, &err), &err);
	T_EQ_INT(r.rows_inserted, 4);
	floe_dml_result_reset(&r);
	return t;
}

static size_t delete_files(floe_table *t)
{
	floe_file_counts c;
	floe_error err = {0};
	T_OK(floe_table_count_files(&c, t, NULL, &err), &err);
	return (size_t)(c.position_delete_files + c.equality_delete_files + c.dvs);
}

/* The same operations in both modes give the same rows; copy-on-write
 * leaves no delete file, merge-on-read adds DVs (v3) or position deletes. */
static void test_modes(void)
{
	wenv e;
	floe_buf want, got;
	floe_error err = {0};
	env_open(&e, true);
	floe_buf_init(&want, 0);
	floe_buf_init(&got, 0);
	for (int fv = 2; fv <= 3; fv++)
		for (int mor = 0; mor < 2; mor++) {
			char name[32];
			snprintf(name, sizeof(name), "m%d%d", fv, mor);
			floe_table *t = seeded(&e, name, fv);
			floe_dml_opts o = FLOE_DML_OPTS_INIT;
			floe_dml_result r;
			o.mode = mor ? FLOE_DML_MERGE_ON_READ : FLOE_DML_COPY_ON_WRITE;
			T_OK(floe_dml_delete(t, "id = 1 OR v >= 40", &o, &r, &err), &err);
			T_EQ_INT(r.rows_deleted, 2);
			T_EQ_INT((int64_t)r.n_files, 2);
			T_CHECK(r.snapshot_id > 0);
			floe_dml_result_reset(&r);
			floe_dml_set set[] = {{"v", "v * 2 + 1"}};
			T_CHECK(floe_dml_update(t, set, 1, "id = 2", &o, &r, &err) == FLOE_EINVAL);
			set[0].expr = "v * 2";
			floe_dml_set set2[] = {{"v", "v * 2"}, {"name", "'upd'"}};
			T_OK(floe_dml_update(t, set2, 2, "id >= 2", &o, &r, &err), &err);
			T_EQ_INT(r.rows_updated, 2);
			floe_dml_result_reset(&r);
			T_OK(merge_text(t,
					"{\"id\":3,\"region\":\"us\",\"name\":\"m\",\"v\":7}\n"
					"{\"id\":9,\"region\":\"eu\",\"name\":\"new\",\"v\":null}\n",
					&r, &err),
			     &err);
			T_EQ_INT(r.rows_updated, 1);
			T_EQ_INT(r.rows_inserted, 1);
			floe_dml_result_reset(&r);
			table_text(&e, name, &got);
			if (fv == 2 && !mor) {
				T_EQ_STR((const char *)floe_buf_cstr(&got),
					 "2,eu,upd,40\n3,us,m,7\n9,eu,new,\n");
				T_EQ_INT(floe_buf_append(&want, got.data, got.len), 0);
			} else {
				T_EQ_STR((const char *)floe_buf_cstr(&got),
					 (const char *)floe_buf_cstr(&want));
			}
			floe_table_free(t);
			T_OK(floe_table_load(&t, e.cat, "db", name, &err), &err);
			if (mor)
				T_CHECK(delete_files(t) > 0);
			else
				T_EQ_INT((int64_t)delete_files(t), 0);
			floe_table_free(t);
		}
	floe_buf_reset(&want);
	floe_buf_reset(&got);
	env_close(&e);
}

static int64_t n_snapshots(floe_table *t)
{
	return (int64_t)floe_table_metadata(t)->n_snapshots;
}

/* Refusals before anything is written; nothing matched commits nothing. */
static void test_refusals(void)
{
	wenv e;
	floe_error err = {0};
	floe_dml_result r;
	env_open(&e, true);
	floe_table *t = seeded(&e, "r", 2);
	int64_t before = n_snapshots(t);
	T_EQ_INT(floe_dml_delete(t, "nope = 1", NULL, &r, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "nope") != NULL);
	T_EQ_INT(floe_dml_delete(t, "", NULL, &r, &err), FLOE_EINVAL);
	floe_dml_set bad[] = {{"id", "NULL"}};
	T_EQ_INT(floe_dml_update(t, bad, 1, "id = 1", NULL, &r, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "required") != NULL);
	floe_dml_set bad2[] = {{"name", "v"}};
	T_EQ_INT(floe_dml_update(t, bad2, 1, "id = 1", NULL, &r, &err), FLOE_EINVAL);
	T_EQ_INT(merge_text(t, "{\"id\":1,\"region\":\"eu\"}\n{\"id\":1,\"region\":\"us\"}\n", &r,
			    &err),
		 FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "same key") != NULL);
	T_OK(floe_dml_delete(t, "id > 100", NULL, &r, &err), &err);
	T_EQ_INT(r.snapshot_id, -1);
	T_EQ_INT(r.rows_deleted, 0);
	floe_dml_result_reset(&r);
	floe_dml_opts o = FLOE_DML_OPTS_INIT;
	o.dry_run = true;
	T_OK(floe_dml_delete(t, "region = 'eu'", &o, &r, &err), &err);
	T_EQ_INT(r.rows_deleted, 2);
	T_EQ_INT((int64_t)r.n_files, 1);
	T_EQ_INT(r.files[0].record_count, 2);
	T_EQ_INT(r.snapshot_id, -1);
	floe_dml_result_reset(&r);
	T_OK(floe_table_refresh(t, &err), &err);
	T_EQ_INT(n_snapshots(t), before);
	floe_table_free(t);
	env_close(&e);
}

/* ---- conflicts ------------------------------------------------------------------------- */

typedef struct race {
	wenv *e;
	const char *name;
	int kind; /* 0 delete (CoW), 1 delete (MoR), 2 append eu, 3 append us */
	const char *where;
} race;

static void concurrent(void *payload)
{
	race *rc = payload;
	floe_table *t = NULL;
	floe_error err = {0};
	floe_dml_result r;
	floe_dml__before_commit = NULL; /* once */
	T_OK(floe_table_load(&t, rc->e->cat, "db", rc->name, &err), &err);
	if (rc->kind < 2) {
		floe_dml_opts o = FLOE_DML_OPTS_INIT;
		o.mode = rc->kind ? FLOE_DML_MERGE_ON_READ : FLOE_DML_COPY_ON_WRITE;
		T_OK(floe_dml_delete(t, rc->where, &o, &r, &err), &err);
	} else {
		T_OK(merge_text(t,
				rc->kind == 2 ? "{\"id\":50,\"region\":\"eu\",\"v\":1}\n"
					      : "{\"id\":51,\"region\":\"us\",\"v\":1}\n",
				&r, &err),
		     &err);
	}
	T_CHECK(r.snapshot_id > 0);
	floe_dml_result_reset(&r);
	floe_table_free(t);
}

static int race_delete(wenv *e, const char *name, race *rc, floe_dml_mode mode,
		       floe_dml_isolation iso, const char *where, floe_error *err)
{
	floe_table *t = NULL;
	floe_dml_result r;
	floe_dml_opts o = FLOE_DML_OPTS_INIT;
	o.mode = mode;
	o.isolation = iso;
	T_OK(floe_table_load(&t, e->cat, "db", name, err), err);
	floe_dml__before_commit = concurrent;
	floe_dml__before_commit_payload = rc;
	int ret = floe_dml_delete(t, where, &o, &r, err);
	floe_dml__before_commit = NULL;
	floe_dml_result_reset(&r);
	floe_table_free(t);
	return ret;
}

static void test_conflicts(void)
{
	wenv e;
	floe_error err = {0};
	floe_buf got;
	env_open(&e, true);
	floe_buf_init(&got, 0);
	for (int fv = 2; fv <= 3; fv++) {
		char name[16];
		/* copy-on-write: a concurrent delete removed the file this one rewrites */
		snprintf(name, sizeof(name), "c%d", fv);
		floe_table_free(seeded(&e, name, fv));
		race r1 = {&e, name, 0, "id = 1"};
		T_EQ_INT(race_delete(&e, name, &r1, FLOE_DML_COPY_ON_WRITE, FLOE_DML_SNAPSHOT, "id = 2",
				     &err),
			 FLOE_ECONFLICT);
		T_CHECK(!err.retryable);
		table_text(&e, name, &got);
		T_EQ_STR((const char *)floe_buf_cstr(&got), "2,eu,b,20\n3,us,c,30\n4,us,,40\n");
		/* merge-on-read: a concurrent delete of the same file */
		race r2 = {&e, name, 1, "id = 3"};
		T_EQ_INT(race_delete(&e, name, &r2, FLOE_DML_MERGE_ON_READ, FLOE_DML_SNAPSHOT, "id = 4",
				     &err),
			 FLOE_ECONFLICT);
		table_text(&e, name, &got);
		T_EQ_STR((const char *)floe_buf_cstr(&got), "2,eu,b,20\n4,us,,40\n");
		/* ... of another file (partition) is fine */
		race r3 = {&e, name, 1, "id = 4"};
		T_OK(race_delete(&e, name, &r3, FLOE_DML_MERGE_ON_READ, FLOE_DML_SNAPSHOT, "id = 2",
				 &err),
		     &err);
		table_text(&e, name, &got);
		T_EQ_STR((const char *)floe_buf_cstr(&got), "");
	}
	/* serializable: a concurrent append that may hold matching rows fails the
	 * delete; snapshot isolation allows it; an append the condition rules out
	 * (another partition) is fine under both */
	for (int mor = 0; mor < 2; mor++) {
		floe_dml_mode mode = mor ? FLOE_DML_MERGE_ON_READ : FLOE_DML_COPY_ON_WRITE;
		char name[16];
		snprintf(name, sizeof(name), "sa%d", mor);
		floe_table_free(seeded(&e, name, 2));
		race ra = {&e, name, 2, NULL};
		T_EQ_INT(race_delete(&e, name, &ra, mode, FLOE_DML_SERIALIZABLE, "region = 'eu'", &err),
			 FLOE_ECONFLICT);
		T_CHECK(strstr(err.msg, "serializable") != NULL);
		snprintf(name, sizeof(name), "sb%d", mor);
		floe_table_free(seeded(&e, name, 2));
		race rb = {&e, name, 3, NULL};
		T_OK(race_delete(&e, name, &rb, mode, FLOE_DML_SERIALIZABLE, "region = 'eu'", &err),
		     &err);
		table_text(&e, name, &got);
		T_EQ_STR((const char *)floe_buf_cstr(&got), "3,us,c,30\n4,us,,40\n51,us,,1\n");
		snprintf(name, sizeof(name), "sc%d", mor);
		floe_table_free(seeded(&e, name, 2));
		race rc = {&e, name, 2, NULL};
		T_OK(race_delete(&e, name, &rc, mode, FLOE_DML_SNAPSHOT, "region = 'eu'", &err), &err);
		table_text(&e, name, &got);
		/* the row appended meanwhile was not seen, so not deleted */
		T_EQ_STR((const char *)floe_buf_cstr(&got), "3,us,c,30\n4,us,,40\n50,eu,,1\n");
	}
	floe_buf_reset(&got);
	env_close(&e);
}

/* id,_row_id,_last_updated_sequence_number lines, sorted. */
static void lineage_text(wenv *e, const char *name, floe_buf *out)
{
	floe_table *t = NULL;
	floe_scan *sc = NULL;
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	floe_error err = {0};
	const char *c[] = {"id", "_row_id", "_last_updated_sequence_number"};
	so.columns = c;
	so.n_columns = 3;
	out->len = 0;
	if (out->data)
		out->data[0] = 0;
	T_OK(floe_table_load(&t, e->cat, "db", name, &err), &err);
	T_OK(floe_scan_open(&sc, t, &so, &err), &err);
	T_OK(floe_scan_write(sc, FLOE_OUTPUT_CSV, collect, out, &err), &err);
	floe_scan_free(sc);
	floe_table_free(t);
}

/* v3: rows copied by copy-on-write keep their row ids and sequence numbers;
 * updated rows (either mode) keep their row ids with the new sequence
 * number; merged-in rows get new ids. */
static void test_lineage(void)
{
	wenv e;
	floe_buf got;
	floe_error err = {0};
	floe_dml_result r;
	env_open(&e, true);
	floe_buf_init(&got, 0);
	floe_table *t = make_table(&e, "lin", cols, NULL, NULL, 3); /* one data file */
	T_OK(merge_text(t, seed, &r, &err), &err); /* seq 1: row ids 0..3 */
	floe_dml_result_reset(&r);
	floe_dml_opts o = FLOE_DML_OPTS_INIT;
	T_OK(floe_dml_delete(t, "id = 1", &o, &r, &err), &err); /* seq 2, CoW */
	floe_dml_result_reset(&r);
	lineage_text(&e, "lin", &got);
	T_EQ_STR((const char *)floe_buf_cstr(&got),
		 "id,_row_id,_last_updated_sequence_number\n2,1,1\n3,2,1\n4,3,1\n");
	floe_dml_set set[] = {{"v", "v + 1"}};
	T_OK(floe_dml_update(t, set, 1, "id = 2", &o, &r, &err), &err); /* seq 3, CoW */
	floe_dml_result_reset(&r);
	o.mode = FLOE_DML_MERGE_ON_READ;
	T_OK(floe_dml_update(t, set, 1, "id = 4", &o, &r, &err), &err); /* seq 4, MoR */
	floe_dml_result_reset(&r);
	lineage_text(&e, "lin", &got); /* (file order: the MoR update's new file last) */
	const char *g0 = (const char *)floe_buf_cstr(&got);
	T_CHECK(strstr(g0, "\n2,1,3\n") && strstr(g0, "\n3,2,1\n") && strstr(g0, "\n4,3,4\n"));
	T_OK(merge_text(t, "{\"id\":3,\"region\":\"us\",\"v\":0}\n{\"id\":8,\"region\":\"us\"}\n",
			&r, &err),
	     &err); /* seq 5, CoW: 3 keeps its id, 8 gets the next one */
	floe_dml_result_reset(&r);
	lineage_text(&e, "lin", &got);
	const char *g = (const char *)floe_buf_cstr(&got);
	T_CHECK(strstr(g, "\n2,1,3\n") && strstr(g, "\n3,2,5\n") && strstr(g, "\n4,3,4\n"));
	T_CHECK(strstr(g, "\n8,") != NULL && strstr(g, "\n8,1,") == NULL &&
		strstr(g, "\n8,2,") == NULL && strstr(g, "\n8,3,") == NULL);
	floe_table_free(t);
	floe_buf_reset(&got);
	env_close(&e);
}

/* A v2 table upgraded to v3: a DV hides the file's position delete files,
 * so the first merge-on-read delete on v3 folds their positions in. */
static void test_upgrade_folds_position_deletes(void)
{
	wenv e;
	floe_buf got;
	floe_error err = {0};
	floe_dml_result r;
	floe_dml_opts o = FLOE_DML_OPTS_INIT;
	o.mode = FLOE_DML_MERGE_ON_READ;
	env_open(&e, true);
	floe_buf_init(&got, 0);
	floe_table *t = seeded(&e, "up", 2);
	T_OK(floe_dml_delete(t, "id = 1", &o, &r, &err), &err); /* a position delete file */
	floe_dml_result_reset(&r);
	floe_prop fv3 = {"format-version", "3"};
	T_OK(floe_table_set_properties(t, &fv3, 1, NULL, 0, &err), &err);
	T_EQ_INT(floe_table_format_version(t), 3);
	T_OK(floe_dml_delete(t, "id = 2", &o, &r, &err), &err); /* a DV for the same file */
	floe_dml_result_reset(&r);
	table_text(&e, "up", &got);
	T_EQ_STR((const char *)floe_buf_cstr(&got), "3,us,c,30\n4,us,,40\n");
	floe_table_free(t);
	floe_buf_reset(&got);
	env_close(&e);
}

int main(void)
{
	T_RUN(test_modes);
	T_RUN(test_refusals);
	T_RUN(test_conflicts);
	T_RUN(test_lineage);
	T_RUN(test_upgrade_folds_position_deletes);
	return t_finish();
}
