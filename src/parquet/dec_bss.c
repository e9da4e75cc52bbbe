/*
 * dec_bss.c — BYTE_STREAM_SPLIT decoding: byte k of value i is at
 * k * n + i (FLOAT, DOUBLE, INT32, INT64, FIXED_LEN_BYTE_ARRAY).
 *
 * spec: Encodings.md "Byte Stream Split (BYTE_STREAM_SPLIT = 9)".
 */
#include "parquet/encoding.h"

int floe_parquet__bss_get(const uint8_t *p, size_t len, unsigned w, uint8_t *out, size_t n)
{
	if (w == 0 || n > len / w)
		return FLOE_ECORRUPT;
	if (w == 4 || w == 8) {
		for (size_t i = 0; i < n; i++)
			for (unsigned k = 0; k < w; k++)
				out[i * w + k] = p[k * n + i];
		return FLOE_OK;
	}
	for (unsigned k = 0; k < w; k++)
		for (size_t i = 0; i < n; i++)
			out[i * w + k] = p[k * n + i];
	return FLOE_OK;
}
