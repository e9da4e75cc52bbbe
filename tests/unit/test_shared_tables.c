/*
 * test_shared_tables.c — floe reads the metadata, manifest lists and
 * manifests of every table in ../shared/testdata (written by Spark, Flink,
 * Impala, Trino, Hive, PyIceberg, DuckDB) and finds the live data, position
 * delete, equality delete and deletion-vector file counts and the row totals
 * that _derived/table_summaries.tsv records for the current snapshot.
 */
#include <stdlib.h>

#include "harness.h"
#include "table/table_impl.h"

static char *field(char *line, int idx)
{
	char *p = line;
	for (int i = 0; i < idx && p; i++) {
		p = strchr(p, '\t');
		if (p)
			p++;
	}
	if (!p)
		return NULL;
	size_t n = strcspn(p, "\t\n");
	static char out[16][2048];
	static int slot;
	char *o = out[slot++ % 16];
	snprintf(o, 2048, "%.*s", (int)n, p);
	return o;
}

static void check_table(floe_fileio *io, char *line)
{
	char *dir = field(line, 0), *meta = field(line, 1), *recorded = field(line, 3);
	long long want_data = atoll(field(line, 6)), want_pos = atoll(field(line, 7)),
		  want_eq = atoll(field(line, 8)), want_dv = atoll(field(line, 9)),
		  want_rows = atoll(field(line, 10));
	long long unresolved = atoll(field(line, 14));
	char abs_dir[2048], metapath[4096];
	char r1[2048], r2[2048], r3[2048], r4[2048], r5[2048], r6[2048];
	snprintf(abs_dir, sizeof(abs_dir), "%s", t_testdata(dir));
	snprintf(metapath, sizeof(metapath), "%s/metadata/%s", abs_dir, meta);
	/* relocation rules: the recorded location and its spelling variants */
	snprintf(r1, sizeof(r1), "%s", recorded);
	snprintf(r2, sizeof(r2), "%s", strncmp(recorded, "./", 2) == 0 ? recorded + 2 : recorded);
	snprintf(r3, sizeof(r3), "%s",
		 strncmp(recorded, "file://", 7) == 0 ? recorded + 7 : recorded);
	snprintf(r4, sizeof(r4), "%s", t_testdata("duckdb-iceberg/data/persistent/"));
	snprintf(r5, sizeof(r5), "%s", t_testdata("glaredb/testdata/iceberg/"));
	snprintf(r6, sizeof(r6), "%s", t_testdata("glaredb/testdata/wh/"));
	floe_path_rule rules[] = {
		{r1, abs_dir},
		{r2, abs_dir},
		{r3, abs_dir},
		{"data/persistent/", r4},
		{"./iceberg/", r5},
		{"wh/", r6},
	};
	floe_path_map map = {rules, sizeof(rules) / sizeof(rules[0])};
	floe_table *t = NULL;
	floe_error err = {0};
	floe_file_counts c;
	if (floe_table_load_path(&t, io, metapath, &map, &err)) {
		t_fail(__FILE__, __LINE__, "%s: %s", dir, err.msg);
		return;
	}
	int rc = floe_table_count_files(&c, t, NULL, &err);
	if (rc && unresolved > 0) {
		/* generated_bounds: its files are absent by design */
		T_CHECK(rc == FLOE_ENOTFOUND);
	} else if (rc) {
		t_fail(__FILE__, __LINE__, "%s: %s", dir, err.msg);
	} else {
		if (c.data_files != want_data || c.position_delete_files != want_pos ||
		    c.equality_delete_files != want_eq || c.dvs != want_dv ||
		    c.data_records != want_rows)
			t_fail(__FILE__, __LINE__,
			       "%s: data/pos/eq/dv/rows %lld/%lld/%lld/%lld/%lld, expected "
			       "%lld/%lld/%lld/%lld/%lld",
			       dir, (long long)c.data_files, (long long)c.position_delete_files,
			       (long long)c.equality_delete_files, (long long)c.dvs,
			       (long long)c.data_records, want_data, want_pos, want_eq, want_dv,
			       want_rows);
		t_checks++;
	}
	floe_table_free(t);
}

static void test_every_shared_table(void)
{
	size_t n;
	char *tsv = (char *)t_read_file(t_testdata("_derived/table_summaries.tsv"), &n);
	floe_fileio *io = floe_io_router_new(floe_io_local_new(), NULL, NULL);
	int tables = 0;
	T_CHECK(tsv != NULL);
	if (!tsv)
		return;
	char *save = NULL;
	for (char *line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || strncmp(line, "table_dir", 9) == 0)
			continue;
		check_table(io, line);
		tables++;
	}
	printf("  %d tables\n", tables);
	T_CHECK(tables >= 100);
	floe_io_free(io);
	free(tsv);
}

int main(void)
{
	T_RUN(test_every_shared_table);
	return t_finish();
}
