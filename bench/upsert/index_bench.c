/*
 * index_bench.c — the key index's cost (src/write/write_index.c): bytes per
 * key and lookups per second, in memory and spilled (budget 1/8 of the
 * keys' memory). Built by bench/upsert/index_bench.sh against the release
 * library; prints one JSON line per case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "write/write_index.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t enc(unsigned char *b, long long v)
{
	b[0] = 1;
	memcpy(b + 1, &v, 8);
	return 9;
}

static void run(size_t n, size_t budget, const char *label)
{
	floe_key_index *ix = NULL;
	floe_error err;
	unsigned char kb[16];
	if (floe_key_index_new(&ix, true, budget, NULL, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	double t0 = now_s();
	for (size_t i = 0; i < n; i++)
		if (floe_key_index_put(ix, kb, enc(kb, (long long)(i * 2654435761u)), 1, i, &err))
			exit(1);
	double t1 = now_s();
	floe_key_index_stats st;
	floe_key_index_get_stats(ix, &st);
	size_t look = n < 2000000 ? n : 2000000, hits = 0;
	unsigned long long x = 88172645463325252ULL;
	double t2 = now_s();
	for (size_t i = 0; i < look; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bool found;
		uint32_t f;
		uint64_t p;
		size_t k = (size_t)(x % (2 * n)); /* half hit, half miss */
		if (floe_key_index_get(ix, kb, enc(kb, (long long)(k * 2654435761u)), &found, &f, &p,
				       &err))
			exit(1);
		hits += found;
	}
	double t3 = now_s();
	floe_key_index_stats st2;
	floe_key_index_get_stats(ix, &st2);
	printf("{\"case\": \"%s\", \"keys\": %zu, \"budget\": %zu, \"bytes_per_key_in_memory\": %.1f, "
	       "\"runs\": %zu, \"puts_per_s\": %.0f, \"lookups_per_s\": %.0f, \"hit_ratio\": %.2f, "
	       "\"block_reads_per_lookup\": %.2f}\n",
	       label, n, budget, (double)st.memory / (double)n,
	       st2.runs, (double)n / (t1 - t0), (double)look / (t3 - t2),
	       (double)hits / (double)look, (double)(st2.disk_reads - st.disk_reads) / (double)look);
	floe_key_index_free(ix);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 10000000;
	run(n, 0, "memory");
	run(n, n * 24 / 8, "spilled");
	return 0;
}
