/*
 * bench_decode.c — the JSON-lines decoder alone: a file of records into the
 * column builders of a schema, batches viewed and the builders reused every
 * 8 MiB (as the tasks do), one thread. Prints records/s and MB/s (for profiling the decoder
 * apart from the Parquet writer).
 *   bench_decode <file.jsonl> '<schema columns>'
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/stream_decode.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	floe_arena a;
	floe_schema *s = NULL;
	floe_error err = {0};
	stream_col root;
	stream_json_dec d;
	if (argc < 3) {
		fprintf(stderr, "usage: bench_decode <file.jsonl> '<columns>'\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		return 1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		return 1;
	fclose(f);
	floe_arena_init(&a, 65536);
	if (floe_schema_parse_compact(&s, &a, argv[2], &err) ||
	    stream_col_init(&root, s->root, NULL, 0, false, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	stream_json_dec_init(&d, NULL);
	long records = 0, bad = 0;
	double t0 = now_s();
	const char *p = buf, *end = buf + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		if (stream_json_decode(&d, &root, p, len))
			bad++;
		records++;
		p += len;
		if ((records & 255) == 0 && stream_col_bytes(&root) >= ((size_t)8 << 20)) {
			struct ArrowArray out;
			if (stream_col_view(&root, &out))
				return 1;
			out.release(&out);
			stream_col_truncate(&root, 0);
		}
	}
	double dt = now_s() - t0;
	printf("{\"records\": %ld, \"bad\": %ld, \"seconds\": %.3f, \"records_per_s\": %.0f, "
	       "\"mb_per_s\": %.1f}\n",
	       records, bad, dt, (double)records / dt, (double)n / dt / 1e6);
	stream_col_reset(&root);
	stream_json_dec_reset(&d);
	floe_arena_reset(&a);
	free(buf);
	return 0;
}
