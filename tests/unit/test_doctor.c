/*
 * test_doctor.c — floe doctor's checks on a table built to trip them (120
 * small files in one partition from a pipeline's commits, an old orphan),
 * judged at a chosen clock; its JSON parses and its HTML has the plots.
 * Data files are placeholders: the checks read metadata and the listing.
 */
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <utime.h>

#include "catalog/sqldb.h"
#include "floe/doctor.h"
#include "harness.h"
#include "json/json.h"
#include "table/commit.h"
#include "table/table_impl.h"
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

static void put(const char *path, const char *text, int64_t age_s)
{
	FILE *fp = fopen(path, "w");
	T_CHECK(fp != NULL);
	if (!fp)
		return;
	fputs(text, fp);
	fclose(fp);
	struct utimbuf u;
	u.actime = u.modtime = time(NULL) - age_s;
	T_CHECK(utime(path, &u) == 0);
}

static const floe_health_check *find(const floe_doctor_report *r, const char *id)
{
	for (size_t i = 0; i < floe_doctor_n_checks(r); i++)
		if (!strcmp(floe_doctor_check(r, i)->id, id))
			return floe_doctor_check(r, i);
	t_fail(__FILE__, __LINE__, "no check %s", id);
	return NULL;
}

static int to_buf(const char *data, size_t n, void *payload)
{
	return floe_buf_append(payload, data, n);
}

static void test_checks(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *t = NULL;
	floe_error err = {0};
	floe_table_create_opts co = FLOE_TABLE_CREATE_OPTS_INIT;
	co.schema = "id long, v string";
	co.partition_by = "id";
	T_OK(floe_table_create(&t, cat, "db", "sick", &co, &err), &err);
	char loc[1024], path[2048];
	/* a copy: each commit replaces the metadata */
	snprintf(loc, sizeof(loc), "%s", floe_io_local_path(floe_table_metadata(t)->location));
	snprintf(path, sizeof(path), "%s/data", loc);
	mkdir(path, 0755);
	floe_arena a;
	floe_arena_init(&a, 4096);
	for (int i = 0; i < 120; i++) {
		floe_data_file f;
		floe_data_file_init(&f);
		f.content = FLOE_CONTENT_DATA;
		f.file_path = floe_arena_sprintf(&a, "%s/data/f%03d.parquet", loc, i);
		f.record_count = 10;
		f.file_size_in_bytes = 6;
		f.spec_id = floe_table_metadata(t)->default_spec_id;
		f.partition.n = 1;
		f.partition.values = floe_arena_calloc(&a, 1, sizeof(floe_value));
		f.partition.values[0].type = FLOE_T_LONG;
		f.partition.values[0].v.i64 = 7;
		put(f.file_path, "dummy\n", 0);
		floe_snapshot_op *op;
		T_OK(floe_op_new(&op, t, FLOE_OP_APPEND, NULL, &err), &err);
		T_OK(floe_op_add_file(op, &f, &err), &err);
		T_OK(floe_op_set_summary(op, "floe.pipeline-id", "p1", &err), &err);
		T_OK(floe_op_commit(op, NULL, &err), &err);
		floe_op_free(op);
	}
	snprintf(path, sizeof(path), "%s/data/crashed.parquet", loc);
	put(path, "0123456789", 4 * 86400); /* an orphan older than the 3-day cutoff */

	floe_doctor_opts o = FLOE_DOCTOR_OPTS_INIT;
	o.now_ms = floe_now_ms() + 60000; /* a minute after the last commit */
	o.checkpoint_interval_ms = 1000;
	floe_doctor_report *r = NULL;
	T_OK(floe_doctor_run(&r, t, &o, &err), &err);
	T_EQ_STR(floe_doctor_table(r), "db.sick");
	const floe_health_check *c = find(r, "small-files");
	T_EQ_INT((int)c->value, 120);
	T_EQ_INT(c->severity, FLOE_HEALTH_WARN);
	c = find(r, "partition-files");
	T_EQ_INT((int)c->value, 1);
	T_EQ_INT(c->severity, FLOE_HEALTH_WARN);
	T_CHECK(strstr(c->detail, "id=7 with 120 files") != NULL);
	c = find(r, "orphan-bytes");
	T_EQ_INT((int)c->value, 10);
	T_EQ_INT(c->severity, FLOE_HEALTH_WARN); /* under the live bytes (720) */
	c = find(r, "storage-ratio");
	T_EQ_INT((int)(c->value * 10), 986); /* 720 of 730 */
	c = find(r, "commit-age");
	T_CHECK(c->applicable && c->value >= 60);
	T_EQ_INT(c->severity, FLOE_HEALTH_CRITICAL);
	T_CHECK(c->fix[0] != 0);
	c = find(r, "snapshot-count");
	T_EQ_INT((int)c->value, 120);
	T_EQ_INT(c->severity, FLOE_HEALTH_OK);
	T_CHECK(c->fix[0] == 0);
	T_EQ_INT(floe_doctor_severity(r), FLOE_HEALTH_CRITICAL);

	/* the interval inferred from the pipeline's commits (they came quickly) */
	floe_doctor_report *r2 = NULL;
	o.checkpoint_interval_ms = -1;
	o.scan_storage = false;
	T_OK(floe_doctor_run(&r2, t, &o, &err), &err);
	T_CHECK(find(r2, "commit-age")->applicable);
	T_CHECK(!find(r2, "orphan-bytes")->applicable);
	floe_doctor_report_free(r2);

	floe_buf b;
	floe_buf_init(&b, 0);
	T_OK(floe_doctor_write_json(r, to_buf, &b, &err), &err);
	floe_arena ja;
	floe_arena_init(&ja, 4096);
	floe_json *j = NULL;
	T_OK(floe_json_parse(&j, &ja, (const char *)b.data, b.len, NULL, &err), &err);
	const char *sev = NULL;
	T_OK(floe_json_get_str(j, "severity", &sev, "doctor", &err), &err);
	T_EQ_STR(sev, "critical");
	int64_t small = 0;
	T_OK(floe_json_get_i64(floe_json_get(j, "stats"), "small_files", &small, "stats", &err), &err);
	T_EQ_INT((int)small, 120);
	floe_arena_reset(&ja);
	floe_buf_clear(&b);
	const floe_doctor_report *const reps[] = {r};
	T_OK(floe_doctor_write_html(reps, 1, to_buf, &b, &err), &err);
	const char *html = floe_buf_cstr(&b);
	T_CHECK(strstr(html, "<svg id=\"size-histogram\"") != NULL);
	T_CHECK(strstr(html, "<svg id=\"partition-files\"") != NULL);
	T_CHECK(strstr(html, "data-check=\"commit-age\" class=\"critical\"") != NULL);
	floe_buf_reset(&b);

	floe_doctor_report_free(r);
	floe_arena_reset(&a);
	floe_table_free(t);
	floe_catalog_free(cat);
}

static void test_empty_table(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_table *t = NULL;
	floe_error err = {0};
	floe_table_create_opts co = FLOE_TABLE_CREATE_OPTS_INIT;
	co.schema = "id long";
	T_OK(floe_table_create(&t, cat, "db", "empty", &co, &err), &err);
	floe_doctor_report *r = NULL;
	T_OK(floe_doctor_run(&r, t, NULL, &err), &err);
	T_EQ_INT(floe_doctor_severity(r), FLOE_HEALTH_OK);
	T_CHECK(!find(r, "commit-age")->applicable);
	floe_buf b;
	floe_buf_init(&b, 0);
	const floe_doctor_report *const reps[] = {r};
	T_OK(floe_doctor_write_html(reps, 1, to_buf, &b, &err), &err);
	floe_buf_reset(&b);
	floe_doctor_report_free(r);
	floe_table_free(t);
	floe_catalog_free(cat);
}

int main(void)
{
	T_RUN(test_checks);
	T_RUN(test_empty_table);
	return t_finish();
}
