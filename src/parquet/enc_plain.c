/*
 * enc_plain.c — PLAIN encoding of booleans and byte arrays. Fixed-width
 * values are PLAIN-encoded by appending their little-endian bytes, which the
 * writer does directly.
 *
 * spec: Encodings.md "Plain (PLAIN = 0)".
 */
#include <string.h>

#include "parquet/encoding.h"
#include "util/alloc.h"
#include "util/cursor.h"

int floe_parquet__plain_put_bools(floe_buf *out, const uint8_t *v, size_t n)
{
	uint8_t *dst = floe_buf_extend(out, (n + 7) / 8);
	if (!dst)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n; i++)
		dst[i >> 3] |= (uint8_t)((v[i] & 1) << (i & 7));
	return FLOE_OK;
}

int floe_parquet__plain_put_bytes(floe_buf *out, const floe_parquet_view *v, size_t n)
{
	size_t total = 0;
	uint8_t *dst;
	for (size_t i = 0; i < n; i++) {
		if (v[i].n > UINT32_MAX || !floe_size_add(&total, total, 4 + v[i].n))
			return FLOE_EINVAL;
	}
	if (floe_buf_reserve(out, total))
		return FLOE_ENOMEM;
	dst = out->data + out->len;
	for (size_t i = 0; i < n; i++) {
		floe_store_u32le(dst, (uint32_t)v[i].n);
		if (v[i].n)
			memcpy(dst + 4, v[i].p, v[i].n);
		dst += 4 + v[i].n;
	}
	out->len += total;
	out->data[out->len] = 0;
	return FLOE_OK;
}
