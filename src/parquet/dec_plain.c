/*
 * dec_plain.c — PLAIN decoding of byte arrays (fixed-width PLAIN values are
 * used in place by the column reader).
 *
 * spec: Encodings.md "Plain (PLAIN = 0)": BYTE_ARRAY is a 4-byte little-endian
 * length followed by the bytes. Every length is checked against what is left.
 */
#include "parquet/encoding.h"
#include "util/cursor.h"

int floe_parquet__plain_get_bytes(const uint8_t *p, size_t len, floe_parquet_view *out, size_t n,
				  size_t *used)
{
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t l;
		if (len - off < 4)
			return FLOE_ECORRUPT;
		l = floe_load_u32le(p + off);
		off += 4;
		if (l > len - off)
			return FLOE_ECORRUPT;
		out[i].p = p + off;
		out[i].n = l;
		off += l;
	}
	*used = off;
	return FLOE_OK;
}
