/*
 * bench_scan.c — scan planning benchmark.
 *
 *   bench_scan gen <dir> <files> <manifests>
 *       write a path-based v2 table at <dir>: one append snapshot whose
 *       manifests (deflate, Java's schema) hold <files> data files in all,
 *       <files>/<manifests> each; schema (id long, ts timestamptz, region
 *       string, value double), partitioned by day(ts) and region; manifest
 *       m holds day m (so a day filter prunes manifests), files rotate over
 *       8 regions (a region filter prunes entries), every file carries Java's
 *       metrics for the 4 columns (sizes, counts, NaN counts, bounds).
 *       The data files do not exist: planning never opens them.
 *   bench_scan plan <dir> <threads> <filter|-> [runs]
 *       plan with floe_scan_open and print one JSON line: wall time of the
 *       best run, CPU time, entries decoded, files planned.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "floe/scan.h"
#include "iceberg/manifest.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"
#include "util/cursor.h"
#include "util/timeutil.h"

static const char *REGIONS[8] = {"af", "ap", "eu", "me", "na", "oc", "sa", "us"};

static void die(const char *what, const floe_error *err)
{
	fprintf(stderr, "bench_scan: %s: %s\n", what, err ? err->msg : "");
	exit(1);
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static int gen(const char *dir, long n_files, long n_manifests)
{
	floe_error err = {0};
	floe_arena a;
	floe_fileio *io = floe_io_router_new(floe_io_local_new(), NULL, NULL);
	floe_schema *schema;
	floe_partition_spec *spec;
	floe_metadata_builder *b;
	char path[4096];
	int32_t last_pid = 999;
	floe_arena_init(&a, 1 << 20);
	snprintf(path, sizeof(path), "%s/metadata", dir);
	mkdir(dir, 0755);
	mkdir(path, 0755);
	if (floe_schema_parse_compact(&schema, &a,
				      "id long not null, ts timestamptz, region string, value double",
				      &err) ||
	    floe_spec_parse_expr(&spec, &a, "day(ts), region", schema, 0, &last_pid, &err))
		die("schema", &err);
	if (floe_metadata_builder_new_table(&b, 2, dir, NULL, schema, spec, NULL, NULL, &err))
		die("metadata", &err);
	const floe_metadata *pm = floe_metadata_builder_peek(b);
	schema = floe_schema_copy(&a, floe_metadata_current_schema(pm));
	spec = floe_spec_copy(&a, floe_metadata_default_spec(pm));
	int64_t snap = 4242424242LL;
	long per = n_files / n_manifests;
	floe_manifest_file *mfs = calloc((size_t)n_manifests, sizeof(*mfs));
	int64_t day0 = 19000; /* 2022-01-08 */
	for (long m = 0; m < n_manifests; m++) {
		floe_manifest_writer *w;
		floe_output *out;
		snprintf(path, sizeof(path), "%s/metadata/bench-m%ld.avro", dir, m);
		if (floe_io_create(io, path, true, &out, &err) ||
		    floe_manifest_writer_open(&w, out, path, 2, schema, spec, FLOE_MANIFEST_DATA, snap,
					      "deflate", &err))
			die("manifest", &err);
		for (long f = 0; f < per; f++) {
			long k = m * per + f;
			floe_data_file df;
			floe_value pv[2];
			floe_id_long cs[4], vc[4], nc[4], nan[1];
			floe_id_bytes lo[4], hi[4];
			uint8_t b_id_lo[8], b_id_hi[8], b_ts_lo[8], b_ts_hi[8], b_v_lo[8], b_v_hi[8];
			char fp[256];
			int64_t day = day0 + m;
			/* file f of the day covers 80 of its 86.4 seconds */
			int64_t ts_lo = day * FLOE_US_PER_DAY + f * (FLOE_US_PER_DAY / per);
			int64_t ts_hi = ts_lo + FLOE_US_PER_DAY / per * 80 / 86;
			int64_t id_lo = k * 2000, id_hi = k * 2000 + 999; /* gaps between files */
			double v_lo = (double)(k % 1000), v_hi = v_lo + 100.5;
			const char *region = REGIONS[k % 8];
			char dstr[16];
			floe_format_date(dstr, sizeof(dstr), day);
			snprintf(fp, sizeof(fp),
				 "%s/data/ts_day=%s/region=%s/00000-%ld-5f3c2a1e-9b1d-4c7e-8f2a-bench-%05ld.parquet",
				 dir, dstr, region, k % 64, k);
			floe_data_file_init(&df);
			df.content = FLOE_CONTENT_DATA;
			df.file_path = fp;
			df.file_format = "PARQUET";
			df.spec_id = spec->spec_id;
			pv[0] = (floe_value){.type = FLOE_T_DATE};
			pv[0].v.i32 = (int32_t)day;
			pv[1] = (floe_value){.type = FLOE_T_STRING};
			pv[1].v.bin.p = (const uint8_t *)region;
			pv[1].v.bin.n = strlen(region);
			df.partition.values = pv;
			df.partition.n = 2;
			df.record_count = 1000 + k % 100;
			df.file_size_in_bytes = 40000 + k % 5000;
			for (int c = 0; c < 4; c++) {
				cs[c] = (floe_id_long){c + 1, 9000 + c * 100};
				vc[c] = (floe_id_long){c + 1, df.record_count};
				nc[c] = (floe_id_long){c + 1, c == 3 ? 7 : 0};
			}
			nan[0] = (floe_id_long){4, 0};
			floe_store_u64le(b_id_lo, (uint64_t)id_lo);
			floe_store_u64le(b_id_hi, (uint64_t)id_hi);
			floe_store_u64le(b_ts_lo, (uint64_t)ts_lo);
			floe_store_u64le(b_ts_hi, (uint64_t)ts_hi);
			memcpy(b_v_lo, &v_lo, 8);
			memcpy(b_v_hi, &v_hi, 8);
			lo[0] = (floe_id_bytes){1, b_id_lo, 8};
			hi[0] = (floe_id_bytes){1, b_id_hi, 8};
			lo[1] = (floe_id_bytes){2, b_ts_lo, 8};
			hi[1] = (floe_id_bytes){2, b_ts_hi, 8};
			lo[2] = (floe_id_bytes){3, (const uint8_t *)region, 2};
			hi[2] = (floe_id_bytes){3, (const uint8_t *)region, 2};
			lo[3] = (floe_id_bytes){4, b_v_lo, 8};
			hi[3] = (floe_id_bytes){4, b_v_hi, 8};
			df.column_sizes = cs;
			df.n_column_sizes = 4;
			df.value_counts = vc;
			df.n_value_counts = 4;
			df.null_value_counts = nc;
			df.n_null_value_counts = 4;
			df.nan_value_counts = nan;
			df.n_nan_value_counts = 1;
			df.lower_bounds = lo;
			df.n_lower_bounds = 4;
			df.upper_bounds = hi;
			df.n_upper_bounds = 4;
			int64_t split = 4;
			df.split_offsets = &split;
			df.n_split_offsets = 1;
			df.has_sort_order_id = true;
			df.sort_order_id = 0;
			if (floe_manifest_writer_add(w, FLOE_ENTRY_ADDED, -1, -1, -1, &df, &err))
				die("entry", &err);
		}
		if (floe_manifest_writer_close(w, &mfs[m], &a, &err))
			die("manifest close", &err);
	}
	floe_output *lo;
	int64_t len;
	snprintf(path, sizeof(path), "%s/metadata/snap-%" PRId64 "-1-bench.avro", dir, snap);
	if (floe_io_create(io, path, true, &lo, &err) ||
	    floe_manifest_list_write(lo, 2, snap, -1, 1, 0, mfs, (size_t)n_manifests, NULL, &len, &err))
		die("manifest list", &err);
	floe_kv summary[] = {{"operation", "append"}};
	floe_snapshot s = {0};
	s.snapshot_id = snap;
	s.parent_id = FLOE_NO_SNAPSHOT;
	s.sequence_number = 1;
	s.timestamp_ms = floe_now_ms();
	s.manifest_list = path;
	s.summary = summary;
	s.n_summary = 1;
	s.schema_id = schema->schema_id;
	s.first_row_id = -1;
	s.added_rows = -1;
	floe_snapshot_ref ref = {"main", snap, false, -1, -1, -1};
	floe_metadata *m;
	floe_buf json;
	if (floe_mb_add_snapshot(b, &s, &err) || floe_mb_set_ref(b, &ref, &err) ||
	    floe_metadata_builder_finish(&m, b, NULL, 0, &err))
		die("snapshot", &err);
	floe_buf_init(&json, 0);
	if (floe_metadata_write(&json, m, 0))
		die("metadata json", NULL);
	snprintf(path, sizeof(path), "%s/metadata/v1.metadata.json", dir);
	if (floe_io_write_all(io, path, json.data, json.len, true, &err))
		die("write metadata", &err);
	snprintf(path, sizeof(path), "%s/metadata/version-hint.text", dir);
	if (floe_io_write_all(io, path, "1", 1, true, &err))
		die("write hint", &err);
	printf("{\"generated\": \"%s\", \"files\": %ld, \"manifests\": %ld}\n", dir, n_files,
	       n_manifests);
	floe_buf_reset(&json);
	floe_metadata_free(m);
	free(mfs);
	floe_io_free(io);
	floe_arena_reset(&a);
	return 0;
}

static int plan(const char *dir, int threads, const char *filter, int runs)
{
	floe_error err = {0};
	floe_table *t;
	double best = 1e99, cpu_best = 0;
	floe_scan_stats st = {0};
	if (floe_table_open_path(&t, dir, NULL, 0, &err))
		die("open", &err);
	for (int r = 0; r < runs; r++) {
		floe_scan_opts o = FLOE_SCAN_OPTS_INIT;
		floe_scan *s;
		o.threads = threads;
		o.where = strcmp(filter, "-") ? filter : NULL;
		double c0 = cpu_seconds();
		int64_t t0 = floe_monotonic_ns();
		if (floe_scan_open(&s, t, &o, &err))
			die("plan", &err);
		double wall = (double)(floe_monotonic_ns() - t0) / 1e9;
		double cpu = cpu_seconds() - c0;
		floe_scan_get_stats(s, &st);
		floe_scan_free(s);
		if (wall < best) {
			best = wall;
			cpu_best = cpu;
		}
	}
	printf("{\"engine\": \"floe\", \"threads\": %d, \"filter\": \"%s\", \"seconds\": %.3f, "
	       "\"cpu_seconds\": %.3f, \"manifests_read\": %" PRIu64 ", \"entries\": %" PRIu64
	       ", \"files\": %" PRIu64 "}\n",
	       threads, filter, best, cpu_best, st.manifests - st.manifests_skipped, st.entries,
	       st.data_files);
	floe_table_free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "gen"))
		return gen(argv[2], atol(argv[3]), atol(argv[4]));
	if (argc >= 5 && !strcmp(argv[1], "plan"))
		return plan(argv[2], atoi(argv[3]), argv[4], argc > 5 ? atoi(argv[5]) : 3);
	fprintf(stderr, "usage: bench_scan gen <dir> <files> <manifests>\n"
			"       bench_scan plan <dir> <threads> <filter|-> [runs]\n");
	return 2;
}
