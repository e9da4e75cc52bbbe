/*
 * test_errors.c — the error contract: a failure is never reported as
 * success, whether or not the caller passed an error record.
 *
 * Each site below once returned `rc ? floe_error_prefix(err, ...) : OK`,
 * which was 0 when err was NULL (floe_error_prefix returned err->code). Each
 * is driven into a failure here twice, with and without a record, and must
 * return the same non-zero code both times.
 */
#include <unistd.h>

#include "catalog/sqldb.h"
#include "floe/pipeline.h"
#include "maintain/maintain_int.h"
#include "test_write_util.h"
#include "util/timeutil.h"

/* A table with two snapshots whose current manifest list is gone. */
static floe_table *broken_table(wenv *e, const char *name)
{
	floe_error err = {0};
	floe_table *t = make_table(e, name, "id long, s string", NULL, NULL, 2);
	const char *rows[] = {"{\"id\": 1, \"s\": \"a\"}"};
	struct ArrowArray b;
	struct ArrowSchema bs;
	floe_write_config cfg;
	for (int k = 0; k < 2; k++) {
		floe_data_writer *w = NULL;
		floe_data_file df;
		floe_append *ap = NULL;
		char path[256];
		const floe_metadata *m = floe_table_metadata(t);
		snprintf(path, sizeof(path), "%s/data/f%d.parquet", m->location, k);
		T_OK(floe_write_config_from(&cfg, &e->a, m, &err), &err);
		make_batch(floe_metadata_current_schema(m), rows, 1, &b, &bs);
		T_OK(floe_data_writer_open(&w, floe_table_io(t), path, m,
					   floe_metadata_current_schema(m), NULL, NULL, &cfg, NULL, &err),
		     &err);
		T_OK(floe_data_writer_write(w, &b, &bs, &err), &err);
		T_OK(floe_data_writer_close(w, &df, &e->a, &err), &err);
		b.release(&b);
		bs.release(&bs);
		T_OK(floe_append_new(&ap, t, NULL, &err), &err);
		T_OK(floe_append_add_file(ap, &df, &err), &err);
		T_OK(floe_append_commit(ap, NULL, &err), &err);
		floe_append_free(ap);
	}
	const floe_snapshot *s = floe_metadata_current_snapshot(floe_table_metadata(t));
	T_OK(floe_io_remove(floe_table_io(t), s->manifest_list, &err), &err);
	return t;
}


static void test_pipeline_check_without_record(void)
{
	const char *bad = "tables:\n  - name: [\n";
	floe_error err = {0};
	int with = floe_pipeline_check(bad, strlen(bad), &err);
	T_CHECK(with != 0);
	T_CHECK(err.msg[0] != '\0');
	T_EQ_INT(floe_pipeline_check(bad, strlen(bad), NULL), with);
}

static void test_maintenance_steps_without_record(void)
{
	wenv e;
	env_open(&e, false);
	floe_table *t = broken_table(&e, "m");
	floe_error err = {0};

	floe_compact_result cr;
	int with = floe_compact(t, NULL, &cr, &err);
	T_CHECK(with != 0);
	T_CHECK(strstr(err.msg, "compact: ") == err.msg);
	T_EQ_INT(floe_compact(t, NULL, &cr, NULL), with);

	floe_orphan_opts oo = FLOE_ORPHAN_OPTS_INIT;
	floe_orphan_result orr;
	oo.dry_run = true;
	floe_error_clear(&err);
	with = floe_delete_orphan_files(t, &oo, NULL, NULL, &orr, &err);
	T_CHECK(with != 0);
	T_CHECK(strstr(err.msg, "delete orphan files: ") == err.msg);
	T_EQ_INT(floe_delete_orphan_files(t, &oo, NULL, NULL, &orr, NULL), with);

	floe_rewrite_manifests_opts mo = FLOE_REWRITE_MANIFESTS_OPTS_INIT;
	floe_rewrite_manifests_result mr;
	floe_error_clear(&err);
	with = floe_rewrite_manifests(t, &mo, &mr, &err);
	T_CHECK(with != 0);
	T_EQ_INT(floe_rewrite_manifests(t, &mo, &mr, NULL), with);

	floe_maintain_opts ma = FLOE_MAINTAIN_OPTS_INIT;
	floe_maintain_result mres;
	ma.no_lock = true;
	floe_error_clear(&err);
	with = floe_maintain(t, &ma, &mres, &err);
	T_CHECK(with != 0);
	T_CHECK(strstr(err.msg, "maintain db.m: ") == err.msg);
	T_EQ_INT(floe_maintain(t, &ma, &mres, NULL), with);

	/* reachability of a snapshot whose manifest list is gone */
	floe_reach r;
	const floe_snapshot *s = floe_metadata_current_snapshot(floe_table_metadata(t));
	floe_reach_init(&r, false, true);
	floe_error_clear(&err);
	with = floe_reach_snapshot(&r, t, s, &err);
	T_CHECK(with != 0);
	floe_reach_reset(&r);
	floe_reach_init(&r, false, true);
	T_EQ_INT(floe_reach_snapshot(&r, t, s, NULL), with);
	floe_reach_reset(&r);

	floe_table_free(t);
	env_close(&e);
}

static void test_expire_cleanup_without_record(void)
{
	wenv e;
	env_open(&e, false);
	floe_table *t = broken_table(&e, "x");
	floe_error err = {0};
	floe_expire_opts eo = FLOE_EXPIRE_OPTS_INIT;
	floe_expire_result er;
	/* expire everything but the current snapshot: the cleanup must read the
	 * current snapshot's (missing) manifest list to know what stays */
	eo.older_than_ms = floe_now_ms() + 1000;
	eo.retain_last = 1;
	int with = floe_expire_snapshots(t, &eo, &er, &err);
	T_CHECK(with != 0);
	T_CHECK(err.msg[0] != '\0');
	/* the first call committed the expiry; a fresh table with the same
	 * damage fails the same way without a record */
	floe_table_free(t);
	t = broken_table(&e, "y");
	T_EQ_INT(floe_expire_snapshots(t, &eo, &er, NULL), with);
	floe_table_free(t);
	env_close(&e);
}

static void test_lock_without_record(void)
{
	const char *dir = t_tmpdir();
	char path[1024];
	floe_sqldb *db = NULL;
	floe_error err = {0};
	/* a lock table of the wrong shape: opening works, reading the holder
	 * fails */
	snprintf(path, sizeof(path), "%s/locks.db", dir);
	T_OK(floe_sqldb_open_sqlite(&db, path, 1000, &err), &err);
	if (!db)
		return;
	T_OK(floe_sql_exec(db, "CREATE TABLE flink_maintenance_lock (x INTEGER)", NULL, 0, NULL, NULL,
			   NULL, &err),
	     &err);
	db->ops->close(db);
	int with = floe_maint_lock_break(path, "c.db.t", &err);
	T_CHECK(with != 0);
	T_CHECK(strstr(err.msg, "maintenance lock 'c.db.t': ") == err.msg);
	T_EQ_INT(floe_maint_lock_break(path, "c.db.t", NULL), with);
}

static void test_data_writer_without_record(void)
{
	wenv e;
	floe_error err = {0};
	floe_write_config cfg;
	floe_data_writer *w = NULL;
	struct ArrowArray b;
	struct ArrowSchema bs;
	floe_data_file df;
	env_open(&e, false);
	floe_table *t = make_table(&e, "w", "id long not null", NULL, NULL, 2);
	const floe_metadata *m = floe_table_metadata(t);
	const char *rows[] = {"{\"id\": 1}", "{\"id\": 2}"};
	T_OK(floe_write_config_from(&cfg, &e.a, m, &err), &err);
	make_batch(floe_metadata_current_schema(m), rows, 2, &b, &bs);
	T_OK(floe_data_writer_open(&w, floe_table_io(t), "mem://wh/db/w/data/a.parquet", m,
				   floe_metadata_current_schema(m), NULL, NULL, &cfg, NULL, &err),
	     &err);
	T_OK(floe_data_writer_write(w, &b, &bs, &err), &err);
	/* flushing a row group fails for want of memory: ENOMEM, record or not */
	floe_alloc__fail_after(1);
	int rc = floe_data_writer_flush(w, NULL);
	floe_alloc__fail_after(0);
	T_EQ_INT(rc, FLOE_ENOMEM);
	floe_data_writer_abort(w);
	/* the publish fails: the code comes back without a record too */
	T_OK(floe_data_writer_open(&w, floe_table_io(t), "mem://wh/db/w/data/b.parquet", m,
				   floe_metadata_current_schema(m), NULL, NULL, &cfg, NULL, &err),
	     &err);
	T_OK(floe_data_writer_write(w, &b, &bs, &err), &err);
	floe_io_memory_fail(e.mem, "close", 1, FLOE_EIO);
	T_EQ_INT(floe_data_writer_close(w, &df, &e.a, NULL), FLOE_EIO);
	floe_io_memory_fail(e.mem, "close", 0, 0);
	b.release(&b);
	bs.release(&bs);
	floe_table_free(t);
	env_close(&e);
}

int main(void)
{
	T_RUN(test_pipeline_check_without_record);
	T_RUN(test_maintenance_steps_without_record);
	T_RUN(test_expire_cleanup_without_record);
	T_RUN(test_lock_without_record);
	T_RUN(test_data_writer_without_record);
	return t_finish();
}
