/*
 * test_sort.c — floe_sort_u64 / floe_sort_unique_u64 (src/util/sort.c)
 * against qsort: random, narrow (positions), wide, presorted, reversed and
 * repeated values, sizes around the insertion-sort cut-off.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/alloc.h"
#include "util/sort.h"

static uint64_t xs = 0x2545f4914f6cdd1dULL;
static uint64_t next_rand(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}

static int cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* kind 0 random 64-bit, 1 below 2^20, 2 few distinct, 3 ascending, 4 descending,
 * 5 file << 38 | pos, 6 dense above 2^40 (the bitmap path, off zero) */
static void fill(uint64_t *a, size_t n, int kind)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next_rand();
		switch (kind) {
		case 0: a[i] = r; break;
		case 1: a[i] = r & 0xfffff; break;
		case 2: a[i] = r % 5; break;
		case 3: a[i] = i * 3; break;
		case 4: a[i] = (n - i) * 7; break;
		case 5: a[i] = (r % 4) << 38 | ((r >> 8) & 0xffffff); break;
		default: a[i] = (UINT64_C(1) << 40) + r % (n * 3 + 1); break;
		}
	}
}

static void test_sort_matches_qsort(void)
{
	static const size_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 100000};
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si];
		uint64_t *a = floe_malloc((n + 1) * 8), *b = floe_malloc((n + 1) * 8);
		T_CHECK(a && b);
		for (int kind = 0; kind < 7; kind++) {
			fill(a, n, kind);
			memcpy(b, a, n * 8);
			floe_sort_u64(a, n);
			qsort(b, n, 8, cmp);
			T_EQ_MEM(a, b, n * 8);
			fill(a, n, kind);
			memcpy(b, a, n * 8);
			size_t k = floe_sort_unique_u64(a, n);
			qsort(b, n, 8, cmp);
			size_t m = 0;
			for (size_t i = 0; i < n; i++)
				if (m == 0 || b[i] != b[m - 1])
					b[m++] = b[i];
			T_EQ_INT(k, m);
			T_EQ_MEM(a, b, m * 8);
		}
		floe_free(a);
		floe_free(b);
	}
}

int main(void)
{
	T_RUN(test_sort_matches_qsort);
	return t_finish();
}
