/*
 * dec_delta.c — DELTA_BINARY_PACKED decoding (INT32, INT64, and the lengths
 * inside DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY).
 *
 * spec: Encodings.md "Delta Encoding (DELTA_BINARY_PACKED = 5)": header
 * <block size> <miniblocks per block> <total values> <first value>, then
 * blocks of <min delta> <one bit width per miniblock> <miniblocks>. Values
 * wrap in two's complement (computed modulo 2^64, then narrowed). In the last
 * block the miniblocks that hold no value are absent (their widths present).
 */
#include <string.h>

#include "parquet/encoding.h"
#include "util/alloc.h"
#include "util/bitpack.h"

typedef struct dcur {
	const uint8_t *p;
	size_t n, off;
} dcur;

static int uvar(dcur *c, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		uint8_t b;
		if (c->off >= c->n)
			return FLOE_ECORRUPT;
		b = c->p[c->off++];
		if (shift == 63 && b > 1)
			return FLOE_ECORRUPT;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return FLOE_OK;
		}
	}
	return FLOE_ECORRUPT;
}

static int zz(dcur *c, int64_t *v)
{
	uint64_t u;
	if (uvar(c, &u))
		return FLOE_ECORRUPT;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return FLOE_OK;
}

typedef struct dhdr {
	uint64_t block, minis, total;
	int64_t first;
} dhdr;

static int header(dcur *c, dhdr *h)
{
	if (uvar(c, &h->block) || uvar(c, &h->minis) || uvar(c, &h->total) || zz(c, &h->first))
		return FLOE_ECORRUPT;
	if (h->block == 0 || h->block > (1u << 20) || h->block % 128 != 0 || h->minis == 0 ||
	    h->block % h->minis != 0 || (h->block / h->minis) % 8 != 0)
		return FLOE_ECORRUPT;
	if (h->total > INT32_MAX)
		return FLOE_ECORRUPT;
	return FLOE_OK;
}

int floe_parquet__delta_count(const uint8_t *p, size_t len, size_t *count)
{
	dcur c = {p, len, 0};
	dhdr h;
	if (header(&c, &h))
		return FLOE_ECORRUPT;
	*count = (size_t)h.total;
	return FLOE_OK;
}

/* Decode all of a stream's values into out (room for the header's total,
 * which the caller bounded with floe_parquet__delta_count). */
static int decode(const uint8_t *p, size_t len, uint64_t *out, size_t cap, size_t *n_out,
		  size_t *used)
{
	dcur c = {p, len, 0};
	dhdr h;
	uint64_t prev;
	size_t got = 0, per_mini;
	uint8_t widths[256];

	if (header(&c, &h) || h.total > cap || h.minis > sizeof(widths))
		return FLOE_ECORRUPT;
	per_mini = (size_t)(h.block / h.minis);
	prev = (uint64_t)h.first;
	if (h.total > 0)
		out[got++] = prev;
	while (got < h.total) {
		int64_t min_delta;
		if (zz(&c, &min_delta) || h.minis > c.n - c.off)
			return FLOE_ECORRUPT;
		memcpy(widths, c.p + c.off, (size_t)h.minis);
		c.off += (size_t)h.minis;
		for (uint64_t m = 0; m < h.minis && got < h.total; m++) {
			unsigned w = widths[m];
			size_t bytes = per_mini / 8 * w, take = (size_t)h.total - got;
			if (take > per_mini)
				take = per_mini;
			if (w > 64)
				return FLOE_ECORRUPT;
			if (bytes > c.n - c.off) {
				/* tolerate a short last miniblock that still holds its values */
				if (floe_bitpack_bytes(take, w) > c.n - c.off)
					return FLOE_ECORRUPT;
				bytes = c.n - c.off;
			}
			floe_bitunpack64(out + got, c.p + c.off, take, w);
			for (size_t j = 0; j < take; j++) {
				prev += (uint64_t)min_delta + out[got + j];
				out[got + j] = prev;
			}
			got += take;
			c.off += bytes;
		}
	}
	*n_out = got;
	*used = c.off;
	return FLOE_OK;
}

int floe_parquet__delta_get64(const uint8_t *p, size_t len, int64_t *out, size_t n, size_t *used)
{
	size_t got;
	/* out has room for n values and n is the stream's total (checked) */
	if (decode(p, len, (uint64_t *)out, n, &got, used) || got != n)
		return FLOE_ECORRUPT;
	return FLOE_OK;
}

int floe_parquet__delta_get32(const uint8_t *p, size_t len, int32_t *out, size_t n, size_t *used)
{
	uint64_t stack[1024], *tmp = stack;
	size_t got;
	int rc;
	if (n > 1024) {
		tmp = floe_malloc(n * sizeof(uint64_t));
		if (!tmp)
			return FLOE_ENOMEM;
	}
	rc = decode(p, len, tmp, n, &got, used);
	if (rc == 0 && got != n)
		rc = FLOE_ECORRUPT;
	if (rc == 0)
		for (size_t i = 0; i < n; i++)
			out[i] = (int32_t)(uint32_t)tmp[i];
	if (tmp != stack)
		floe_free(tmp);
	return rc;
}
