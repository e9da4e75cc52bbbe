/*
 * sort.c — radix sort of uint64 arrays (sort.h).
 *
 * DESIGN: least significant digit first, 8-bit digits, one counting pass
 * for all eight histograms; a digit that is the same in every value (the
 * high bytes of row positions, usually five of eight) costs no pass. Small
 * arrays go to insertion sort, where the passes would cost more than the
 * comparisons.
 */
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/sort.h"

#define SMALL 64

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static void insertion(uint64_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t v = a[i];
		size_t j = i;
		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

void floe_sort_u64(uint64_t *a, size_t n)
{
	if (n < 2)
		return;
	if (n <= SMALL) {
		insertion(a, n);
		return;
	}
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = a[i - 1] <= a[i];
	if (sorted)
		return;
	uint64_t *tmp = floe_malloc(n * sizeof(uint64_t));
	if (!tmp) {
		qsort(a, n, sizeof(uint64_t), cmp_u64);
		return;
	}
	size_t (*cnt)[256] = floe_calloc(8, sizeof(*cnt));
	if (!cnt) {
		floe_free(tmp);
		qsort(a, n, sizeof(uint64_t), cmp_u64);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t v = a[i];
		for (int d = 0; d < 8; d++)
			cnt[d][(v >> (8 * d)) & 0xff]++;
	}
	uint64_t *src = a, *dst = tmp;
	for (int d = 0; d < 8; d++) {
		size_t *c = cnt[d];
		if (c[(src[0] >> (8 * d)) & 0xff] == n)
			continue; /* one value of this digit: nothing moves */
		size_t sum = 0;
		for (int b = 0; b < 256; b++) {
			size_t k = c[b];
			c[b] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t v = src[i];
			dst[c[(v >> (8 * d)) & 0xff]++] = v;
		}
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(uint64_t));
	floe_free(cnt);
	floe_free(tmp);
}

/*
 * Values in a range of at most 64 per value (a DV's positions: a file's rows,
 * a good share of them deleted): one bit each in a bitmap of the range, read
 * back in order. No larger than the radix sort's buffer; no pass per byte.
 * false when the range is too wide or there is no memory (then sort).
 */
static bool unique_by_bitmap(uint64_t *a, size_t n, size_t *k_out)
{
	uint64_t lo = a[0], hi = a[0];
	for (size_t i = 1; i < n; i++) {
		lo = a[i] < lo ? a[i] : lo;
		hi = a[i] > hi ? a[i] : hi;
	}
	uint64_t words = (hi - lo) / 64 + 1;
	if (hi - lo >= UINT64_MAX - 64 || words > n)
		return false;
	uint64_t *bits = floe_calloc((size_t)words, sizeof(uint64_t));
	if (!bits)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = a[i] - lo;
		bits[d >> 6] |= UINT64_C(1) << (d & 63);
	}
	size_t k = 0;
	for (uint64_t w = 0; w < words; w++)
		for (uint64_t b = bits[w]; b; b &= b - 1)
			a[k++] = lo + w * 64 + (uint64_t)__builtin_ctzll(b);
	floe_free(bits);
	*k_out = k;
	return true;
}

size_t floe_sort_unique_u64(uint64_t *a, size_t n)
{
	size_t k = 0;
	bool strict = true;
	for (size_t i = 1; i < n && strict; i++)
		strict = a[i - 1] < a[i];
	if (strict)
		return n; /* already sorted and unique: one position delete file's, a merge of DVs */
	if (n > SMALL && unique_by_bitmap(a, n, &k))
		return k;
	floe_sort_u64(a, n);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || a[i] != a[k - 1])
			a[k++] = a[i];
	return k;
}
