/*
 * enc_rle.c — the RLE/bit-packed hybrid encoder (definition and repetition
 * levels, dictionary indices).
 *
 * spec: Encodings.md "Run Length Encoding / Bit-Packing Hybrid (RLE = 3)".
 * DESIGN: values are scanned for runs; a run of 8 or more equal values
 * becomes an RLE run, everything else accumulates as literals written as
 * one bit-packed run. Literal counts must be a multiple of 8 except at the
 * very end, so before an RLE run the literals borrow the first values of the
 * run to complete their last group; the final group is zero-padded.
 */
#include <string.h>

#include "parquet/encoding.h"
#include "util/bitpack.h"

static int put_uvarint(floe_buf *out, uint64_t v)
{
	return floe_buf_put_uvarint(out, v);
}

static int put_rle_run(floe_buf *out, uint32_t value, size_t count, unsigned w)
{
	uint8_t b[4];
	unsigned nb = (w + 7) / 8;
	int rc = put_uvarint(out, (uint64_t)count << 1);
	if (rc)
		return rc;
	for (unsigned i = 0; i < nb; i++)
		b[i] = (uint8_t)(value >> (8 * i));
	return floe_buf_append(out, b, nb);
}

#define DEFINE_RLE_ENCODER(NAME, T)                                                           \
	static int NAME##_literals(floe_buf *out, const T *v, size_t n, unsigned w)           \
	{                                                                                     \
		size_t groups = (n + 7) / 8, bytes = groups * w;                              \
		uint8_t *dst;                                                                 \
		uint32_t tmp[256];                                                            \
		int rc = put_uvarint(out, (uint64_t)groups << 1 | 1);                         \
		if (rc)                                                                       \
			return rc;                                                            \
		if (!(dst = floe_parquet__extend(out, bytes)))                                \
			return FLOE_ENOMEM;                                                   \
		/* the last group is padded with zeros */                                     \
		memset(dst + floe_bitpack_bytes(n, w), 0, bytes - floe_bitpack_bytes(n, w));  \
		for (size_t i = 0; i < n; i += 256) {                                         \
			size_t k = n - i < 256 ? n - i : 256;                                 \
			for (size_t j = 0; j < k; j++)                                        \
				tmp[j] = v[i + j];                                            \
			floe_bitpack32(dst + (i / 8) * w, tmp, k, w);                         \
		}                                                                             \
		return FLOE_OK;                                                               \
	}                                                                                     \
	int NAME(floe_buf *out, const T *v, size_t n, unsigned w)                             \
	{                                                                                     \
		size_t i = 0, lit_start = 0, lit_n = 0;                                       \
		int rc;                                                                       \
		while (i < n) {                                                               \
			size_t j = i + 1, r;                                                  \
			while (j < n && v[j] == v[i])                                         \
				j++;                                                          \
			r = j - i;                                                            \
			if (r >= 8) {                                                         \
				size_t pad = (8 - lit_n % 8) % 8;                             \
				if (lit_n > 0 && pad > 0) {                                   \
					size_t absorb = pad < r ? pad : r;                    \
					lit_n += absorb;                                      \
					i += absorb;                                          \
					r -= absorb;                                          \
				}                                                             \
				if (r >= 8) {                                                 \
					if (lit_n &&                                          \
					    (rc = NAME##_literals(out, v + lit_start, lit_n, w))) \
						return rc;                                    \
					if ((rc = put_rle_run(out, v[i], r, w)))              \
						return rc;                                    \
					lit_n = 0;                                            \
					lit_start = j;                                        \
				} else {                                                      \
					lit_n += r;                                           \
				}                                                             \
			} else {                                                              \
				lit_n += r;                                                   \
			}                                                                     \
			i = j;                                                                \
		}                                                                             \
		if (lit_n)                                                                    \
			return NAME##_literals(out, v + lit_start, lit_n, w);                 \
		return FLOE_OK;                                                               \
	}

DEFINE_RLE_ENCODER(floe_parquet__rle_encode16, uint16_t)
DEFINE_RLE_ENCODER(floe_parquet__rle_encode32, uint32_t)
