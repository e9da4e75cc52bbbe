/*
 * cursor.h — a bounds-checked read cursor for binary parsers.
 *
 * A cursor advances only on success (curl's strparse rule): a failed read
 * leaves `off` where it was, so the caller can report the offset of the bad
 * field. Lengths read from input are checked against what remains before they
 * size anything.
 */
#ifndef FLOE_UTIL_CURSOR_H
#define FLOE_UTIL_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct floe_cursor {
	const uint8_t *p;
	size_t n;
	size_t off;
} floe_cursor;

static inline void floe_cursor_init(floe_cursor *c, const void *p, size_t n)
{
	c->p = p;
	c->n = n;
	c->off = 0;
}

static inline size_t floe_cursor_left(const floe_cursor *c)
{
	return c->n - c->off;
}

static inline bool floe_cursor_u8(floe_cursor *c, uint8_t *v)
{
	if (c->off >= c->n)
		return false;
	*v = c->p[c->off++];
	return true;
}

static inline bool floe_cursor_skip(floe_cursor *c, size_t n)
{
	if (n > c->n - c->off)
		return false;
	c->off += n;
	return true;
}

/* Borrow n bytes (no copy). */
static inline bool floe_cursor_bytes(floe_cursor *c, size_t n, const uint8_t **out)
{
	if (n > c->n - c->off)
		return false;
	*out = c->p + c->off;
	c->off += n;
	return true;
}

static inline bool floe_cursor_u32le(floe_cursor *c, uint32_t *v)
{
	if (c->n - c->off < 4)
		return false;
	const uint8_t *p = c->p + c->off;
	*v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	c->off += 4;
	return true;
}

static inline bool floe_cursor_u64le(floe_cursor *c, uint64_t *v)
{
	if (c->n - c->off < 8)
		return false;
	uint64_t x = 0;
	for (int i = 7; i >= 0; i--)
		x = x << 8 | c->p[c->off + (size_t)i];
	*v = x;
	c->off += 8;
	return true;
}

/* Unsigned LEB128, at most 10 bytes. */
static inline bool floe_cursor_uvarint(floe_cursor *c, uint64_t *v)
{
	uint64_t x = 0;
	size_t i = c->off;
	for (int shift = 0; shift < 70; shift += 7) {
		if (i >= c->n)
			return false;
		uint8_t b = c->p[i++];
		if (shift == 63 && b > 1)
			return false;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			c->off = i;
			*v = x;
			return true;
		}
	}
	return false;
}

static inline bool floe_cursor_zigzag(floe_cursor *c, int64_t *v)
{
	uint64_t u;
	if (!floe_cursor_uvarint(c, &u))
		return false;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return true;
}

static inline uint32_t floe_load_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint32_t floe_load_u32be(const uint8_t *p)
{
	return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}
static inline uint64_t floe_load_u64le(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return x; /* little-endian hosts only; checked in CMake */
}
static inline void floe_store_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
static inline void floe_store_u64le(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#endif
