/*
 * bench_write.c — the task writer's throughput on a 10-column event table
 * (the Parquet benchmark's table, bench/parquet/README.md) into a zstd
 * table, one thread. See bench/write/README.md.
 *
 *   bench_write <rows> <partitioning> <out dir> [batch rows]
 *
 * partitioning: none | bucket4 (bucket(4, user_id): 4 partitions) |
 * day_country (day(ts), country: ~20 partitions per day).
 *
 * Batches of `batch rows` (65536) are generated untimed, then handed to
 * floe_task_writer_write; complete() (closing every file) is timed too. Files
 * go to <out dir> through the local FileIO (page cache). Prints one JSON line:
 * rows, Arrow bytes, seconds, rows/s, MB/s, files, bytes written, peak RSS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "arrow/arrow_build.h"
#include "iceberg/arrow_schema.h"
#include "iceberg/metadata.h"
#include "util/alloc.h"
#include "util/str.h"
#include "write/write.h"

static uint64_t mix(uint64_t i, uint64_t salt)
{
	uint64_t z = (i + salt * 0x632BE59BD9B4E019ULL) * 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this process: on a shared machine, the per-core figure. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *countries[] = {"US", "DE", "FR", "GB", "JP", "BR", "IN", "CN", "CA", "AU",
				  "ES", "IT", "NL", "SE", "NO", "PL", "MX", "AR", "ZA", "KR"};
static const char *types[] = {"click", "view", "purchase", "signup", "logout",
			      "search", "share", "like", "comment", "scroll"};

static size_t arrow_bytes;

static uint8_t *validity(int64_t from, int64_t n, uint64_t salt, int every, int64_t *nulls)
{
	uint8_t *b = floe_calloc(1, (size_t)(n + 7) / 8);
	*nulls = 0;
	for (int64_t i = 0; i < n; i++) {
		if (mix((uint64_t)(from + i), salt) % (uint64_t)every)
			b[i >> 3] |= (uint8_t)(1 << (i & 7));
		else
			(*nulls)++;
	}
	arrow_bytes += (size_t)(n + 7) / 8;
	return b;
}

static void fixed(struct ArrowArray *a, void *vals, size_t width, int64_t from, int64_t n,
		  int null_every, uint64_t salt)
{
	int64_t nulls = 0;
	if (floe_arrow_array_init(a, 2, 0))
		abort();
	a->length = n;
	if (null_every)
		floe_arrow_array_set_buffer(a, 0, validity(from, n, salt, null_every, &nulls));
	a->null_count = nulls;
	floe_arrow_array_set_buffer(a, 1, vals);
	arrow_bytes += width * (size_t)n;
}

static void strings(struct ArrowArray *a, int64_t from, int64_t n, int kind)
{
	int32_t *off = floe_malloc(sizeof(int32_t) * (size_t)(n + 1));
	size_t cap = (size_t)n * (kind >= 2 ? 48 : 10) + 64;
	char *d = floe_malloc(cap);
	off[0] = 0;
	for (int64_t k = 0; k < n; k++) {
		uint64_t i = (uint64_t)(from + k);
		char *p = d + off[k];
		int len;
		uint64_t r = mix(i, 10 + (uint64_t)kind);
		if (kind == 0) {
			const char *c = countries[r % 20];
			len = (int)strlen(c);
			memcpy(p, c, (size_t)len);
		} else if (kind == 1) {
			const char *c = types[r % 10];
			len = (int)strlen(c);
			memcpy(p, c, (size_t)len);
		} else if (kind == 2) {
			static const char hex[] = "0123456789abcdef";
			uint64_t r2 = mix(i, 99);
			for (int q = 0; q < 16; q++) {
				p[q] = hex[(r >> (4 * q)) & 15];
				p[16 + q] = hex[(r2 >> (4 * q)) & 15];
			}
			len = 32;
		} else {
			len = snprintf(p, 48, "/product/%llu/item?ref=%llu",
				       (unsigned long long)(r % 100000),
				       (unsigned long long)(mix(i, 77) % 1000));
		}
		off[k + 1] = off[k] + len;
	}
	if (floe_arrow_array_init(a, 3, 0))
		abort();
	a->length = n;
	floe_arrow_array_set_buffer(a, 1, off);
	floe_arrow_array_set_buffer(a, 2, d);
	arrow_bytes += sizeof(int32_t) * (size_t)(n + 1) + (size_t)off[n];
}

/* Rows [from, from + n) of the event table; ts continues from *t. */
static void make_batch(struct ArrowArray *a, int64_t from, int64_t n, int64_t *t)
{
	int64_t *event_id = floe_malloc(8 * (size_t)n), *user_id = floe_malloc(8 * (size_t)n),
		*ts = floe_malloc(8 * (size_t)n);
	double *amount = floe_malloc(8 * (size_t)n), *score = floe_malloc(8 * (size_t)n);
	int32_t *qty = floe_malloc(4 * (size_t)n);
	for (int64_t k = 0; k < n; k++) {
		uint64_t i = (uint64_t)(from + k);
		event_id[k] = (int64_t)i;
		user_id[k] = (int64_t)(mix(i, 1) % 1000000);
		/* ~10 ms apart on average: 10M rows span ~1.2 days */
		*t += (int64_t)(mix(i, 2) % 20000);
		ts[k] = *t;
		amount[k] = (double)(mix(i, 3) % 1000000) / 100.0;
		score[k] = (double)(mix(i, 4) >> 11) * 0x1.0p-53;
		qty[k] = (int32_t)(mix(i, 5) % 100);
	}
	if (floe_arrow_array_init(a, 1, 10))
		abort();
	a->length = n;
	fixed(a->children[0], event_id, 8, from, n, 0, 0);
	fixed(a->children[1], user_id, 8, from, n, 0, 0);
	fixed(a->children[2], ts, 8, from, n, 0, 0);
	fixed(a->children[3], amount, 8, from, n, 20, 6);
	fixed(a->children[4], score, 8, from, n, 0, 0);
	fixed(a->children[5], qty, 4, from, n, 20, 7);
	strings(a->children[6], from, n, 0);
	strings(a->children[7], from, n, 1);
	strings(a->children[8], from, n, 2);
	strings(a->children[9], from, n, 3);
}

static void die(const char *what, const floe_error *err)
{
	fprintf(stderr, "bench_write: %s: %s\n", what, err->msg);
	exit(1);
}

typedef struct out_stats {
	int64_t files, bytes;
} out_stats;

int main(int argc, char **argv)
{
	floe_error err = {0};
	floe_arena a;
	floe_schema *schema = NULL;
	floe_partition_spec *spec = NULL;
	floe_metadata_builder *mb = NULL;
	floe_metadata *m = NULL;
	floe_write_config cfg;
	floe_task_writer *tw = NULL;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	struct ArrowSchema as;
	floe_strmap props;
	char loc[4096];
	int32_t lp = 999;
	if (argc < 4) {
		fprintf(stderr, "usage: bench_write <rows> none|bucket4|day_country <out dir> "
				"[batch rows]\n");
		return 2;
	}
	int64_t rows = strtoll(argv[1], NULL, 10);
	const char *mode = argv[2];
	int64_t batch_rows = argc > 4 ? strtoll(argv[4], NULL, 10) : 65536;
	const char *expr = strcmp(mode, "bucket4") == 0	      ? "bucket(4, user_id)"
			   : strcmp(mode, "day_country") == 0 ? "day(ts), country"
							      : NULL;
	floe_arena_init(&a, 0);
	floe_strmap_init(&props);
	snprintf(loc, sizeof(loc), "file://%s", argv[3]);
	if (floe_schema_parse_compact(&schema, &a,
				      "event_id long not null, user_id long not null, ts timestamptz "
				      "not null, amount double, score double not null, qty int, "
				      "country string not null, event_type string not null, "
				      "session_id string not null, url string not null",
				      &err))
		die("schema", &err);
	if (expr && floe_spec_parse_expr(&spec, &a, expr, schema, 0, &lp, &err))
		die("spec", &err);
	/* Iceberg's defaults: zstd (level: the codec's default), 128 MiB row groups */
	if (floe_metadata_builder_new_table(&mb, 2, loc, NULL, schema, spec, NULL, &props, &err) ||
	    floe_metadata_builder_finish(&m, mb, NULL, 0, &err))
		die("metadata", &err);
	if (floe_write_config_from(&cfg, &a, m, &err))
		die("config", &err);
	floe_fileio *io = floe_io_local_new();
	if (floe_iceberg_arrow_schema(&as, floe_metadata_current_schema(m), &err))
		die("arrow schema", &err);
	if (floe_task_writer_new(&tw, io, m, &cfg, &o, &err))
		die("task writer", &err);

	double timed = 0, cpu = 0;
	int64_t t = 1700000000000000LL;
	for (int64_t from = 0; from < rows; from += batch_rows) {
		int64_t n = rows - from < batch_rows ? rows - from : batch_rows;
		struct ArrowArray b;
		make_batch(&b, from, n, &t);
		double t0 = now(), c0 = cpu_now();
		if (floe_task_writer_write(tw, &b, &as, &err))
			die("write", &err);
		timed += now() - t0;
		cpu += cpu_now() - c0;
		floe_arrow_array_release(&b);
	}
	floe_data_file *files = NULL;
	size_t n_files = 0;
	double t0 = now(), c0 = cpu_now();
	if (floe_task_writer_complete(tw, &files, &n_files, &a, &err))
		die("complete", &err);
	timed += now() - t0;
	cpu += cpu_now() - c0;
	int64_t out_bytes = 0;
	for (size_t i = 0; i < n_files; i++)
		out_bytes += files[i].file_size_in_bytes;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"bench\": \"write\", \"partitioning\": \"%s\", \"rows\": %lld, \"batch_rows\": "
	       "%lld, \"arrow_bytes\": %zu, \"seconds\": %.3f, \"cpu_seconds\": %.3f, "
	       "\"rows_per_s\": %.0f, \"mb_per_s\": %.1f, \"rows_per_cpu_s\": %.0f, "
	       "\"mb_per_cpu_s\": %.1f, \"files\": %zu, \"bytes_written\": %lld, "
	       "\"peak_rss_mb\": %.1f}\n",
	       mode, (long long)rows, (long long)batch_rows, arrow_bytes, timed, cpu,
	       (double)rows / timed, (double)arrow_bytes / timed / 1e6, (double)rows / cpu,
	       (double)arrow_bytes / cpu / 1e6, n_files,
	       (long long)out_bytes, (double)ru.ru_maxrss / 1024.0);
	floe_free(files);
	floe_task_writer_free(tw);
	floe_arrow_schema_release(&as);
	floe_metadata_free(m);
	floe_io_free(io);
	floe_strmap_reset(&props);
	floe_arena_reset(&a);
	return 0;
}
