/*
 * dec_delta_len.c — DELTA_LENGTH_BYTE_ARRAY decoding: the lengths as one
 * DELTA_BINARY_PACKED stream, then all the bytes concatenated.
 *
 * spec: Encodings.md "Delta-length byte array (DELTA_LENGTH_BYTE_ARRAY = 6)".
 */
#include <string.h>

#include "parquet/encoding.h"
#include "util/alloc.h"

/* Decode n lengths and n views; *used receives the bytes consumed. */
static int get_views(const uint8_t *p, size_t len, floe_parquet_view *out, size_t n,
		     floe_buf *scratch, size_t *used)
{
	size_t total, hdr_used = 0, off;
	int64_t *lens;
	if (floe_parquet__delta_count(p, len, &total) || total != n)
		return FLOE_ECORRUPT;
	floe_buf_clear(scratch);
	if (floe_buf_reserve(scratch, n * sizeof(int64_t) + 8))
		return FLOE_ENOMEM;
	lens = (int64_t *)(void *)scratch->data;
	if (floe_parquet__delta_get64(p, len, lens, n, &hdr_used))
		return FLOE_ECORRUPT;
	off = hdr_used;
	for (size_t i = 0; i < n; i++) {
		if (lens[i] < 0 || (uint64_t)lens[i] > len - off)
			return FLOE_ECORRUPT;
		out[i].p = p + off;
		out[i].n = (size_t)lens[i];
		off += (size_t)lens[i];
	}
	*used = off;
	return FLOE_OK;
}

int floe_parquet__delta_length_get(const uint8_t *p, size_t len, floe_parquet_view *out, size_t n,
				   floe_buf *scratch)
{
	size_t used;
	return get_views(p, len, out, n, scratch, &used);
}

int floe_parquet__delta_length_views(const uint8_t *p, size_t len, floe_parquet_view *out,
				     size_t n, floe_buf *scratch, size_t *used)
{
	return get_views(p, len, out, n, scratch, used);
}
