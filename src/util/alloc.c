/*
 * alloc.c — the allocation hook and arenas. The only file in src/ that calls
 * malloc/realloc/free directly.
 */
#include "util/alloc.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *default_malloc(size_t n, void *payload)
{
	(void)payload;
	return malloc(n);
}
static void *default_realloc(void *p, size_t n, void *payload)
{
	(void)payload;
	return realloc(p, n);
}
static void default_free(void *p, void *payload)
{
	(void)payload;
	free(p);
}

static floe_allocator g_alloc = {default_malloc, default_realloc, default_free, NULL};
static atomic_long g_fail_after;
static atomic_long g_live;
static atomic_long g_count;

void floe_set_allocator(const floe_allocator *alloc)
{
	if (alloc)
		g_alloc = *alloc;
	else
		g_alloc = (floe_allocator){default_malloc, default_realloc, default_free, NULL};
}

void floe_alloc__fail_after(long n)
{
	atomic_store(&g_fail_after, n);
}

long floe_alloc__live(void)
{
	return atomic_load(&g_live);
}

long floe_alloc__count(void)
{
	return atomic_load(&g_count);
}

static bool should_fail(void)
{
	atomic_fetch_add(&g_count, 1);
	long n = atomic_load(&g_fail_after);
	if (n <= 0)
		return false;
	if (n == 1)
		return true; /* stays at 1: every later allocation fails too */
	atomic_fetch_sub(&g_fail_after, 1);
	return false;
}

void *floe_malloc(size_t n)
{
	void *p;
	if (should_fail())
		return NULL;
	p = g_alloc.malloc_fn(n ? n : 1, g_alloc.payload);
	if (p)
		atomic_fetch_add(&g_live, 1);
	return p;
}

void *floe_calloc(size_t count, size_t size)
{
	size_t n;
	void *p;
	if (!floe_size_mul(&n, count, size))
		return NULL;
	p = floe_malloc(n);
	if (p)
		memset(p, 0, n);
	return p;
}

void *floe_realloc(void *p, size_t n)
{
	void *q;
	if (!p)
		return floe_malloc(n);
	if (should_fail())
		return NULL;
	q = g_alloc.realloc_fn(p, n ? n : 1, g_alloc.payload);
	return q;
}

void floe_free(void *p)
{
	if (!p)
		return;
	atomic_fetch_sub(&g_live, 1);
	g_alloc.free_fn(p, g_alloc.payload);
}

char *floe_strndup(const char *s, size_t n)
{
	char *p = floe_malloc(n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *floe_strdup(const char *s)
{
	return s ? floe_strndup(s, strlen(s)) : NULL;
}

void *floe_memdup(const void *p, size_t n)
{
	void *q = floe_malloc(n);
	if (q && n)
		memcpy(q, p, n);
	return q;
}

int floe_array_grow(void **data, size_t *cap, size_t elem, size_t need)
{
	size_t ncap, bytes;
	void *p;
	if (need <= *cap)
		return FLOE_OK;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (!floe_size_mul(&ncap, ncap, 2))
			return FLOE_ENOMEM;
	}
	if (!floe_size_mul(&bytes, ncap, elem))
		return FLOE_ENOMEM;
	p = floe_realloc(*data, bytes);
	if (!p)
		return FLOE_ENOMEM;
	*data = p;
	*cap = ncap;
	return FLOE_OK;
}

/* ---- arenas ---------------------------------------------------------- */

struct floe_arena_chunk {
	floe_arena_chunk *next;
	size_t size; /* usable bytes in data */
	size_t off;  /* next free byte */
	_Alignas(16) unsigned char data[];
};

#define ARENA_ALIGN 16

void floe_arena_init(floe_arena *a, size_t chunk_size)
{
	a->head = NULL;
	a->chunk_size = chunk_size ? chunk_size : 16384;
	a->used = 0;
	a->cap = 0;
	a->prefault = false;
}

void floe_arena_reset(floe_arena *a)
{
	floe_arena_chunk *c, *next;
	if (!a)
		return;
	for (c = a->head; c; c = next) {
		next = c->next;
		floe_free(c);
	}
	a->head = NULL;
	a->used = 0;
}

void *floe_arena_alloc(floe_arena *a, size_t n)
{
	floe_arena_chunk *c = a->head;
	size_t need, size, total;
	void *p;

	if (!floe_size_add(&need, n, ARENA_ALIGN - 1))
		return NULL;
	need &= ~(size_t)(ARENA_ALIGN - 1);
	if (need == 0)
		need = ARENA_ALIGN;
	if (a->cap && (need > a->cap || a->used > a->cap - need))
		return NULL;
	if (!c || c->size - c->off < need) {
		size = need > a->chunk_size / 2 ? need : a->chunk_size;
		if (!floe_size_add(&total, sizeof(floe_arena_chunk), size))
			return NULL;
		c = floe_malloc(total);
		if (!c)
			return NULL;
		c->size = size;
		c->off = 0;
#ifdef MADV_POPULATE_WRITE
		if (a->prefault) {
			/* the whole pages of the chunk; failure (older kernels) is harmless */
			uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
			uintptr_t lo = ((uintptr_t)c + pg - 1) & ~(pg - 1);
			uintptr_t hi = ((uintptr_t)c->data + size) & ~(pg - 1);
			if (hi > lo)
				(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
		}
#endif
		if (a->head && size == need && a->head->size - a->head->off >= ARENA_ALIGN) {
			/* A big one-off block: keep the current chunk in front so its
			 * remaining space is still used. */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->data + c->off;
	c->off += need;
	a->used += need;
	return p;
}

void *floe_arena_calloc(floe_arena *a, size_t count, size_t size)
{
	size_t n;
	void *p;
	if (!floe_size_mul(&n, count, size))
		return NULL;
	p = floe_arena_alloc(a, n);
	if (p)
		memset(p, 0, n);
	return p;
}

char *floe_arena_strndup(floe_arena *a, const char *s, size_t n)
{
	char *p;
	size_t m;
	if (!floe_size_add(&m, n, 1))
		return NULL;
	p = floe_arena_alloc(a, m);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *floe_arena_strdup(floe_arena *a, const char *s)
{
	return s ? floe_arena_strndup(a, s, strlen(s)) : NULL;
}

void *floe_arena_memdup(floe_arena *a, const void *p, size_t n)
{
	void *q = floe_arena_alloc(a, n);
	if (q && n) {
		if (p)
			memcpy(q, p, n);
		else
			memset(q, 0, n); /* an empty array's NULL copies as zeroes */
	}
	return q;
}

char *floe_arena_sprintf(floe_arena *a, const char *fmt, ...)
{
	va_list ap, ap2;
	int n;
	char *p;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		va_end(ap2);
		return NULL;
	}
	p = floe_arena_alloc(a, (size_t)n + 1);
	if (p)
		vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

floe_arena *floe_arena_new(size_t chunk_size)
{
	floe_arena *a = floe_malloc(sizeof(*a));
	if (a)
		floe_arena_init(a, chunk_size);
	return a;
}

void floe_arena_free(floe_arena *a)
{
	if (!a)
		return;
	floe_arena_reset(a);
	floe_free(a);
}
