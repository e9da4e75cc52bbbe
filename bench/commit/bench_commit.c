/*
 * bench_commit.c — the CPU cost of one commit against the size of a table's
 * history, in-process (no process start): an append of one one-row data file
 * (a placeholder entry) to a v2 table in a SQLite catalog, on top of a history
 * of N snapshots.
 *
 *   bench_commit <dir> <snapshots> <commits> [setup|measure]
 *
 * The history is made quickly: real commits up to 50 snapshots, then the
 * metadata of the last one is grown to N snapshots with the builder (each a
 * copy of the last real append: its summary, its manifest list), so the
 * metadata file has the size a table that made N real commits has. Then
 * <commits> commits are measured one by one: CPU time of the process
 * (CLOCK_PROCESS_CPUTIME_ID) and wall time, on a table handle loaded once
 * (as a pipeline holds it) and on a fresh load each time (as a command does:
 * load + commit). Prints one JSON line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>

#include "iceberg/metadata.h"
#include "table/commit.h"
#include "table/create.h"
#include "util/alloc.h"
#include "util/timeutil.h"

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, const floe_error *err)
{
	fprintf(stderr, "bench_commit: %s: %s\n", what, err->msg);
	exit(1);
}

static int append_one(floe_table *t, int k, floe_error *err)
{
	floe_append *ap = NULL;
	floe_data_file f;
	char path[512];
	floe_data_file_init(&f);
	f.content = FLOE_CONTENT_DATA;
	snprintf(path, sizeof(path), "%s/data/f-%d.parquet", floe_table_metadata(t)->location, k);
	f.file_path = path;
	f.record_count = 1;
	f.file_size_in_bytes = 420;
	f.spec_id = 0;
	int rc = floe_append_new(&ap, t, NULL, err);
	if (!rc)
		rc = floe_append_add_file(ap, &f, err);
	if (!rc)
		rc = floe_append_set_summary(ap, "floe.pipeline-id", "bench", err);
	if (!rc)
		rc = floe_append_commit(ap, NULL, err);
	floe_append_free(ap);
	return rc;
}

/* Grow t's history to n snapshots by copying its current snapshot. */
static void grow(floe_catalog *cat, floe_table *t, int64_t n)
{
	floe_error err = {0};
	const floe_metadata *base = floe_table_metadata(t);
	const floe_snapshot *last = floe_metadata_current_snapshot(base);
	floe_metadata_builder *b = NULL;
	floe_metadata *next = NULL;
	char *loc = NULL;
	if (floe_metadata_builder_from(&b, base, &err))
		die("builder", &err);
	int64_t have = (int64_t)base->n_snapshots, seq = base->last_sequence_number;
	int64_t parent = last->snapshot_id, ts = last->timestamp_ms;
	for (int64_t i = have; i < n; i++) {
		floe_snapshot s = *last;
		s.json = NULL;
		s.snapshot_id = 0x10000000LL + i;
		s.parent_id = parent;
		s.sequence_number = ++seq;
		s.timestamp_ms = ++ts;
		if (floe_mb_add_snapshot(b, &s, &err))
			die("add snapshot", &err);
		floe_snapshot_ref ref = {"main", s.snapshot_id, false, -1, -1, -1};
		if (floe_mb_set_ref(b, &ref, &err))
			die("set ref", &err);
		parent = s.snapshot_id;
	}
	if (floe_metadata_builder_finish(&next, b, base->metadata_location, base->last_updated_ms,
					 &err))
		die("finish", &err);
	if (floe_catalog_commit_table(cat, "db", "t", base, next, &loc, &err))
		die("commit grown history", &err);
	floe_metadata_free(next);
	floe_free(loc);
	if (floe_table_refresh(t, &err))
		die("refresh", &err);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: bench_commit <dir> <snapshots> <commits> [setup|measure]\n");
		return 2;
	}
	/* setup: make the history and stop; measure: use a history made before
	 * (so that a profile of the measured commits holds nothing else) */
	const char *mode = argc == 5 ? argv[4] : "both";
	/* as the floe command sets them (src/cli/main.c) */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	const char *dir = argv[1];
	int64_t n = atoll(argv[2]);
	int k = atoi(argv[3]);
	char uri[1024], wh[1024];
	floe_error err = {0};
	floe_catalog *cat = NULL;
	floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
	snprintf(uri, sizeof(uri), "%s/catalog.db", dir);
	snprintf(wh, sizeof(wh), "file://%s/wh", dir);
	o.uri = uri;
	o.warehouse = wh;
	if (floe_sql_catalog_open(&cat, &o, &err))
		die("catalog", &err);
	floe_table *t = NULL;
	if (strcmp(mode, "measure") != 0) {
		if (floe_catalog_create_namespace(cat, "db", NULL, 0, &err))
			die("namespace", &err);
		floe_table_create_opts co = FLOE_TABLE_CREATE_OPTS_INIT;
		co.schema = "id long, ts timestamptz, kind string";
		if (floe_table_create(&t, cat, "db", "t", &co, &err))
			die("create", &err);
		int real = n < 50 ? (int)n : 50;
		for (int i = 0; i < real; i++)
			if (append_one(t, i, &err))
				die("append", &err);
		if (n > real)
			grow(cat, t, n);
		if (!strcmp(mode, "setup")) {
			floe_table_free(t);
			floe_catalog_free(cat);
			return 0;
		}
	} else if (floe_table_load(&t, cat, "db", "t", &err)) {
		die("load", &err);
	}
	size_t meta_bytes = 0;
	{
		FILE *f = fopen(floe_io_local_path(floe_table_metadata(t)->metadata_location), "rb");
		if (f) {
			fseek(f, 0, SEEK_END);
			meta_bytes = (size_t)ftell(f);
			fclose(f);
		}
	}
	/* a held table handle (a pipeline's committer) */
	double *held = calloc((size_t)k, sizeof(double)), *fresh = calloc((size_t)k, sizeof(double));
	double *held_wall = calloc((size_t)k, sizeof(double));
	for (int i = 0; i < k; i++) {
		double c0 = cpu_ms(), w0 = wall_ms();
		if (append_one(t, 1000000 + i, &err))
			die("measured append", &err);
		held[i] = cpu_ms() - c0;
		held_wall[i] = wall_ms() - w0;
	}
	/* load + commit (a command) */
	for (int i = 0; i < k; i++) {
		floe_table *t2 = NULL;
		double c0 = cpu_ms();
		if (floe_table_load(&t2, cat, "db", "t", &err) || append_one(t2, 2000000 + i, &err))
			die("load and append", &err);
		fresh[i] = cpu_ms() - c0;
		floe_table_free(t2);
	}
	qsort(held, (size_t)k, sizeof(double), cmp);
	qsort(fresh, (size_t)k, sizeof(double), cmp);
	qsort(held_wall, (size_t)k, sizeof(double), cmp);
	printf("{\"snapshots\": %lld, \"metadata_bytes\": %zu, \"commits\": %d, "
	       "\"held_cpu_ms_median\": %.2f, \"held_cpu_ms_best\": %.2f, \"held_wall_ms_median\": %.2f, "
	       "\"load_and_commit_cpu_ms_median\": %.2f, \"load_and_commit_cpu_ms_best\": %.2f}\n",
	       (long long)n, meta_bytes, k, held[k / 2], held[0], held_wall[k / 2], fresh[k / 2],
	       fresh[0]);
	free(held);
	free(fresh);
	free(held_wall);
	floe_table_free(t);
	floe_catalog_free(cat);
	return 0;
}
