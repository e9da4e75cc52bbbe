/*
 * alloc.h — the one allocation hook, and arenas.
 *
 * All heap memory in src/ comes from floe_malloc & co (alloc.c is the only
 * file that calls the C library's allocator). Arenas hold memory with one
 * lifetime — a parsed metadata tree, a manifest's entries, a batch — and free
 * it in one call.
 */
#ifndef FLOE_UTIL_ALLOC_H
#define FLOE_UTIL_ALLOC_H

#include "floe/common.h"

/* floe_malloc, floe_calloc, floe_realloc, floe_free, floe_strdup: floe/common.h */
char *floe_strndup(const char *s, size_t n) FLOE_WUR;
void *floe_memdup(const void *p, size_t n) FLOE_WUR;

/* Overflow-checked size arithmetic: return false on overflow. */
static inline bool floe_size_mul(size_t *out, size_t a, size_t b)
{
	return !__builtin_mul_overflow(a, b, out);
}
static inline bool floe_size_add(size_t *out, size_t a, size_t b)
{
	return !__builtin_add_overflow(a, b, out);
}

/*
 * Grow a plain array so it can hold `need` elements of `elem` bytes.
 * *data and *cap are updated; returns FLOE_OK or FLOE_ENOMEM.
 */
int floe_array_grow(void **data, size_t *cap, size_t elem, size_t need) FLOE_WUR;

/* Push helper: FLOE_ARRAY_PUSH(arr, len, cap, value) -> status. */
#define FLOE_ARRAY_RESERVE(arr, cap, need)                                                    \
	floe_array_grow((void **)&(arr), &(cap), sizeof(*(arr)), (need))

/* Test hook: make the n-th next allocation (1-based) and all after it fail;
 * 0 disables. Used by the "torture" tests. */
void floe_alloc__fail_after(long n);
/* Number of live allocations made through the hook (for leak checks). */
long floe_alloc__live(void);
/* Allocation calls (malloc and realloc) so far: the failure points a torture
 * loop steps through. */
long floe_alloc__count(void);

/*
 * Arena: bump allocation in chunks; individual frees are not possible.
 * Caller storage: floe_arena_init / floe_arena_reset.
 */
typedef struct floe_arena_chunk floe_arena_chunk;
typedef struct floe_arena {
	floe_arena_chunk *head;
	size_t chunk_size; /* default size of a new chunk */
	size_t used;       /* total bytes handed out */
	size_t cap;        /* maximum total bytes (0 = unlimited) */
	/* fault a new chunk's pages in with one call (Linux MADV_POPULATE_WRITE)
	 * instead of one page fault per page: for arenas that fill every chunk
	 * they take, such as a scan plan of millions of files */
	bool prefault;
} floe_arena;

void floe_arena_init(floe_arena *a, size_t chunk_size);
/* Free all memory; the arena can be used again afterwards. */
void floe_arena_reset(floe_arena *a);
/* 16-byte aligned; NULL when out of memory or over the cap. */
void *floe_arena_alloc(floe_arena *a, size_t n) FLOE_WUR;
void *floe_arena_calloc(floe_arena *a, size_t count, size_t size) FLOE_WUR;
char *floe_arena_strdup(floe_arena *a, const char *s) FLOE_WUR;
char *floe_arena_strndup(floe_arena *a, const char *s, size_t n) FLOE_WUR;
void *floe_arena_memdup(floe_arena *a, const void *p, size_t n) FLOE_WUR;
char *floe_arena_sprintf(floe_arena *a, const char *fmt, ...) FLOE_PRINTF(2, 3) FLOE_WUR;

/* Heap-allocated arena, for objects that own one. */
floe_arena *floe_arena_new(size_t chunk_size) FLOE_WUR;
void floe_arena_free(floe_arena *a);

#endif
