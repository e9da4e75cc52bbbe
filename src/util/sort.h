/*
 * sort.h — sorting 64-bit unsigned integers (deleted row positions, packed
 * file/position pairs): an LSD radix sort over the bytes that differ, O(n)
 * where qsort's comparison calls were most of a DV's cost.
 *
 * Thread-safe (no state).
 */
#ifndef FLOE_UTIL_SORT_H
#define FLOE_UTIL_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sort a[0..n) ascending. Allocates n * 8 bytes of scratch for large n;
 * without memory it sorts in place with qsort (same result). */
void floe_sort_u64(uint64_t *a, size_t n);

/* Sort ascending and drop repeats; returns the count kept. */
size_t floe_sort_unique_u64(uint64_t *a, size_t n);

#endif
