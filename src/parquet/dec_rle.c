/*
 * dec_rle.c — decoding the RLE/bit-packed hybrid (levels, dictionary
 * indices, RLE booleans) and the deprecated BIT_PACKED level encoding.
 *
 * spec: Encodings.md "Run Length Encoding / Bit-Packing Hybrid (RLE = 3)" and
 * "Bit-packed (Deprecated) (BIT_PACKED = 4)".
 * Untrusted input: run headers are bounds-checked; a bit-packed run whose
 * groups extend past the data is cut to the bytes present (writers pad the
 * last group, some truncate it); asking for more values than the data holds
 * is FLOE_ECORRUPT.
 */
#include <string.h>

#include "parquet/encoding.h"
#include "util/bitpack.h"

void floe_parquet__rle_init(floe_parquet_rle *r, const uint8_t *p, size_t n, unsigned w)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->n = n;
	r->w = w;
}

static int next_run(floe_parquet_rle *r)
{
	uint64_t h = 0;
	unsigned shift = 0;
	for (;;) {
		uint8_t b;
		if (r->off >= r->n)
			return FLOE_ECORRUPT;
		b = r->p[r->off++];
		if (shift >= 63 && b > 1)
			return FLOE_ECORRUPT;
		h |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
		if (shift > 63)
			return FLOE_ECORRUPT;
	}
	if (h & 1) {
		uint64_t groups = h >> 1, bytes;
		size_t left = r->n - r->off;
		if (groups == 0)
			return next_run(r); /* an empty run: tolerated */
		bytes = groups * r->w;
		if (groups > UINT32_MAX / 8)
			return FLOE_ECORRUPT;
		if (bytes > left) {
			/* a truncated last run: keep the whole groups that are present */
			if (r->w == 0)
				return FLOE_ECORRUPT;
			groups = left / r->w;
			bytes = groups * r->w;
			if (groups == 0)
				return FLOE_ECORRUPT;
		}
		r->bp = r->p + r->off;
		r->bp_left = (uint32_t)(groups * 8);
		r->bp_bytes_left = (size_t)bytes;
		r->off += (size_t)bytes;
	} else {
		uint64_t count = h >> 1;
		unsigned nb = (r->w + 7) / 8;
		uint32_t v = 0;
		if (count == 0 || count > UINT32_MAX)
			return count == 0 ? next_run(r) : FLOE_ECORRUPT;
		if (nb > r->n - r->off)
			return FLOE_ECORRUPT;
		for (unsigned i = 0; i < nb; i++)
			v |= (uint32_t)r->p[r->off + i] << (8 * i);
		r->off += nb;
		if (r->w < 32 && (v >> r->w) != 0)
			return FLOE_ECORRUPT; /* value wider than the bit width */
		r->rle_left = (uint32_t)count;
		r->rle_val = v;
	}
	return FLOE_OK;
}

int floe_parquet__rle_get32(floe_parquet_rle *r, uint32_t *out, size_t n)
{
	size_t got = 0;
	while (got < n) {
		if (r->buf_pos < r->buf_len) {
			size_t k = r->buf_len - r->buf_pos;
			if (k > n - got)
				k = n - got;
			memcpy(out + got, r->buf + r->buf_pos, k * sizeof(uint32_t));
			r->buf_pos += (unsigned)k;
			got += k;
			continue;
		}
		if (r->rle_left) {
			size_t k = r->rle_left < n - got ? r->rle_left : n - got;
			for (size_t i = 0; i < k; i++)
				out[got + i] = r->rle_val;
			r->rle_left -= (uint32_t)k;
			got += k;
			continue;
		}
		if (r->bp_left) {
			size_t want = n - got, groups = want / 8;
			if (groups > r->bp_left / 8)
				groups = r->bp_left / 8;
			if (groups) {
				floe_bitunpack32(out + got, r->bp, groups * 8, r->w);
				r->bp += groups * r->w;
				r->bp_left -= (uint32_t)(groups * 8);
				got += groups * 8;
				continue;
			}
			/* a partial group: unpack it into the buffer */
			floe_bitunpack32(r->buf, r->bp, 8, r->w);
			r->bp += r->w;
			r->bp_left -= 8;
			r->buf_pos = 0;
			r->buf_len = 8;
			continue;
		}
		if (next_run(r))
			return FLOE_ECORRUPT;
	}
	return FLOE_OK;
}

int floe_parquet__rle_get16(floe_parquet_rle *r, uint16_t *out, size_t n)
{
	uint32_t tmp[512];
	size_t done = 0;
	while (done < n) {
		size_t k = n - done < 512 ? n - done : 512;
		/* runs are common for levels: fill directly while in an RLE run */
		if (r->rle_left && r->buf_pos >= r->buf_len) {
			size_t m = r->rle_left < n - done ? r->rle_left : n - done;
			for (size_t i = 0; i < m; i++)
				out[done + i] = (uint16_t)r->rle_val;
			r->rle_left -= (uint32_t)m;
			done += m;
			continue;
		}
		if (floe_parquet__rle_get32(r, tmp, k))
			return FLOE_ECORRUPT;
		for (size_t i = 0; i < k; i++)
			out[done + i] = (uint16_t)tmp[i];
		done += k;
	}
	return FLOE_OK;
}

int floe_parquet__bitpacked_be_get16(const uint8_t *p, size_t len, unsigned w, uint16_t *out,
				     size_t n)
{
	size_t bits = 0;
	if (w > 16)
		return FLOE_ECORRUPT;
	if (w == 0) {
		memset(out, 0, n * sizeof(*out));
		return FLOE_OK;
	}
	if ((n * w + 7) / 8 > len)
		return FLOE_ECORRUPT;
	for (size_t i = 0; i < n; i++) {
		uint32_t v = 0;
		for (unsigned b = 0; b < w; b++, bits++)
			v = v << 1 | ((p[bits >> 3] >> (7 - (bits & 7))) & 1);
		out[i] = (uint16_t)v;
	}
	return FLOE_OK;
}
