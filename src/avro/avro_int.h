/*
 * avro/avro_int.h — internal helpers shared by the avro/ files (not for
 * other components): inline hot-path decoders and semi-private functions.
 */
#ifndef FLOE_AVRO_INT_H
#define FLOE_AVRO_INT_H

#include "avro/avro_schema.h"
#include "util/cursor.h"
#include "util/str.h"

/*
 * zig-zag long. spec: at most 10 bytes. Like Java's BinaryDecoder (and
 * DuckDB), bits above the 64th in the 10th byte are dropped rather than
 * rejected: some writers encode uint64 snapshot ids that way (DuckDB's
 * equality_delete_extra_column table), and Java reads them.
 */
static inline bool avro_dec_long(floe_cursor *c, int64_t *v)
{
	const uint8_t *p = c->p + c->off;
	size_t left = c->n - c->off;
	uint64_t u = 0;
	if (left && p[0] < 0x80) {
		u = p[0];
		c->off++;
	} else {
		size_t i = 0;
		for (int shift = 0;; shift += 7) {
			if (i >= left || i >= 10)
				return false;
			uint8_t b = p[i++];
			u |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
		}
		c->off += i;
	}
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return true;
}

/* zig-zag int: the varint must fit 32 bits (spec: int is 32-bit). */
static inline bool avro_dec_int(floe_cursor *c, int32_t *v)
{
	size_t save = c->off;
	uint64_t u;
	if (c->off < c->n && c->p[c->off] < 0x80) {
		u = c->p[c->off++];
		*v = (int32_t)((uint32_t)(u >> 1) ^ (uint32_t) - (int32_t)(u & 1));
		return true;
	}
	if (!floe_cursor_uvarint(c, &u))
		return false;
	if (u > UINT32_MAX) {
		c->off = save;
		return false;
	}
	*v = (int32_t)((uint32_t)(u >> 1) ^ (uint32_t) - (int32_t)(u & 1));
	return true;
}

/* bytes/string: a non-negative long length no larger than what is left. */
static inline bool avro_dec_bytes(floe_cursor *c, const uint8_t **p, size_t *n)
{
	size_t save = c->off;
	int64_t len;
	if (!avro_dec_long(c, &len))
		return false;
	if (len < 0 || (uint64_t)len > floe_cursor_left(c)) {
		c->off = save;
		return false;
	}
	*p = c->p + c->off;
	*n = (size_t)len;
	c->off += (size_t)len;
	return true;
}

/* Array/map block header; see floe_avro_dec_block. */
static inline bool avro_dec_block(floe_cursor *c, int64_t *count, int64_t *block_bytes)
{
	size_t save = c->off;
	int64_t n, sz = -1;
	if (!avro_dec_long(c, &n))
		return false;
	if (n < 0) {
		if (n == INT64_MIN || !avro_dec_long(c, &sz) || sz < 0 ||
		    (uint64_t)sz > floe_cursor_left(c)) {
			c->off = save;
			return false;
		}
		n = -n;
	}
	*count = n;
	*block_bytes = sz;
	return true;
}

/* Add context to err and return rc. */
#define AVRO_PREFIX(rc, err, ...) floe_error_prefix((err), (rc), __VA_ARGS__)

bool floe_avro__default_matches(const floe_avro_schema *s, const floe_json *j, int depth);

#endif
