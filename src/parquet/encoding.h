/*
 * encoding.h — Parquet value and level encodings, semi-private to the
 * parquet component: encoders used by the writer (enc_*.c) and decoders used
 * by the reader (dec_*.c), one file per encoding.
 *
 * spec: parquet-format Encodings.md.
 *
 * Decoders read from a bounded cursor over one page's bytes and never read
 * past it; a malformed encoding is FLOE_ECORRUPT with a short reason that
 * the caller prefixes with the file, column and page.
 */
#ifndef FLOE_PARQUET_ENCODING_H
#define FLOE_PARQUET_ENCODING_H

#include "floe/common.h"
#include "util/buf.h"

/* A borrowed byte string (BYTE_ARRAY value). */
typedef struct floe_parquet_view {
	const uint8_t *p;
	size_t n;
} floe_parquet_view;

/*
 * Append n bytes to b without initialising them (the caller writes every
 * one); NULL when the buffer's cap is reached. floe_buf_extend zeroes, which
 * the hot paths do not need.
 */
static inline uint8_t *floe_parquet__extend(floe_buf *b, size_t n)
{
	uint8_t *p;
	if (floe_buf_reserve(b, n))
		return NULL;
	p = b->data + b->len;
	b->len += n;
	b->data[b->len] = 0;
	return p;
}

/* 8 bytes as a big-endian word (compilers turn this into one load and a
 * byte swap): comparing such words orders bytes lexicographically. */
static inline uint64_t floe_parquet__load_be64(const uint8_t *p)
{
	return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
	       (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
	       (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

/* Unsigned lexicographic order of byte strings (<0, 0, >0); a prefix sorts
 * first. Inline, 8 bytes a step: statistics compare every value. */
static inline int floe_parquet__bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t n = an < bn ? an : bn, i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x = floe_parquet__load_be64(a + i), y = floe_parquet__load_be64(b + i);
		if (x != y)
			return x < y ? -1 : 1;
	}
	for (; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return an < bn ? -1 : an > bn;
}

/* ---- encoders ----------------------------------------------------------- */

/* RLE/bit-packed hybrid of n values of bit width w (no length prefix). */
int floe_parquet__rle_encode16(floe_buf *out, const uint16_t *v, size_t n, unsigned w) FLOE_WUR;
int floe_parquet__rle_encode32(floe_buf *out, const uint32_t *v, size_t n, unsigned w) FLOE_WUR;

/* PLAIN booleans from 0/1 bytes (bit-packed, LSB first). */
int floe_parquet__plain_put_bools(floe_buf *out, const uint8_t *v, size_t n) FLOE_WUR;
/* PLAIN BYTE_ARRAY: 4-byte little-endian length + bytes, for each value. */
int floe_parquet__plain_put_bytes(floe_buf *out, const floe_parquet_view *v, size_t n) FLOE_WUR;

/*
 * A dictionary being built for one column chunk: distinct values in first-
 * seen order, with a hash index. Fixed-width values (width > 0) or byte
 * strings (width 0).
 */
typedef struct floe_parquet_dict {
	int width;        /* bytes per value, 0 for byte strings */
	uint32_t *slots;  /* hash index: entry + 1, 0 = empty */
	size_t n_slots;   /* power of two */
	uint32_t *hashes; /* per entry */
	size_t n_entries;
	size_t cap_entries;
	floe_buf values;   /* fixed: entries * width bytes; strings: concatenated bytes */
	size_t *offsets;   /* strings: start of entry i in values (n_entries + 1) */
	size_t plain_size; /* PLAIN-encoded size of the entries */
} floe_parquet_dict;

void floe_parquet__dict_init(floe_parquet_dict *d, int width);
void floe_parquet__dict_reset(floe_parquet_dict *d); /* frees */
/* Memory held (for the memory budget). */
size_t floe_parquet__dict_memory(const floe_parquet_dict *d);

/*
 * Look up / insert n fixed-width values (d->width bytes each, contiguous),
 * writing their indices. Stops before an insertion that would make the
 * PLAIN size exceed max_plain_bytes; *done receives how many were handled.
 */
int floe_parquet__dict_put_fixed(floe_parquet_dict *d, const uint8_t *v, size_t n, uint32_t *idx,
				 size_t *done, size_t max_plain_bytes) FLOE_WUR;
int floe_parquet__dict_put_bytes(floe_parquet_dict *d, const floe_parquet_view *v, size_t n,
				 uint32_t *idx, size_t *done, size_t max_plain_bytes) FLOE_WUR;

/* PLAIN-encode the entries (the dictionary page body). Booleans never use a
 * dictionary. */
int floe_parquet__dict_write(const floe_parquet_dict *d, floe_buf *out) FLOE_WUR;

/* ---- decoders ----------------------------------------------------------- */

/*
 * RLE/bit-packed hybrid decoder (levels, dictionary indices, RLE booleans).
 * A trailing bit-packed run shorter than its header claims is accepted
 * (values past the data are an error only if asked for).
 */
typedef struct floe_parquet_rle {
	const uint8_t *p;
	size_t n;
	size_t off;
	unsigned w;
	uint32_t rle_left; /* values left in the current RLE run */
	uint32_t rle_val;
	uint32_t bp_left;     /* values left in the current bit-packed run */
	const uint8_t *bp;    /* next bit-packed group */
	size_t bp_bytes_left; /* bytes of the bit-packed run that are present */
	uint32_t buf[8];      /* a partly consumed group */
	unsigned buf_pos, buf_len;
} floe_parquet_rle;

void floe_parquet__rle_init(floe_parquet_rle *r, const uint8_t *p, size_t n, unsigned w);
/* Decode exactly n values; FLOE_ECORRUPT when the data ends first or a run
 * header is malformed. */
int floe_parquet__rle_get32(floe_parquet_rle *r, uint32_t *out, size_t n) FLOE_WUR;
int floe_parquet__rle_get16(floe_parquet_rle *r, uint16_t *out, size_t n) FLOE_WUR;

/* BIT_PACKED (deprecated levels): MSB-first packing of n values of width w. */
int floe_parquet__bitpacked_be_get16(const uint8_t *p, size_t len, unsigned w, uint16_t *out,
				     size_t n) FLOE_WUR;

/* DELTA_BINARY_PACKED: decode n values (32- or 64-bit) from p; *used gets
 * the bytes consumed. */
int floe_parquet__delta_get32(const uint8_t *p, size_t len, int32_t *out, size_t n,
			      size_t *used) FLOE_WUR;
int floe_parquet__delta_get64(const uint8_t *p, size_t len, int64_t *out, size_t n,
			      size_t *used) FLOE_WUR;
/* Number of values a DELTA_BINARY_PACKED stream declares (header only). */
int floe_parquet__delta_count(const uint8_t *p, size_t len, size_t *count) FLOE_WUR;

/*
 * Byte-array decoders produce views into a caller buffer. DELTA_BYTE_ARRAY
 * needs to build each value from a prefix of the previous one, so it writes
 * the values into `store` (bounded) and the views point there.
 */
int floe_parquet__delta_length_get(const uint8_t *p, size_t len, floe_parquet_view *out, size_t n,
				   floe_buf *scratch) FLOE_WUR;
/* DELTA_LENGTH_BYTE_ARRAY views, with the bytes consumed. */
int floe_parquet__delta_length_views(const uint8_t *p, size_t len, floe_parquet_view *out,
				     size_t n, floe_buf *scratch, size_t *used) FLOE_WUR;
int floe_parquet__delta_bytes_get(const uint8_t *p, size_t len, floe_parquet_view *out, size_t n,
				  floe_buf *store, floe_buf *scratch) FLOE_WUR;

/* BYTE_STREAM_SPLIT of n values of width w bytes into out (n * w bytes). */
int floe_parquet__bss_get(const uint8_t *p, size_t len, unsigned w, uint8_t *out,
			  size_t n) FLOE_WUR;

/* PLAIN BYTE_ARRAY: n views into p. *used receives the bytes consumed. */
int floe_parquet__plain_get_bytes(const uint8_t *p, size_t len, floe_parquet_view *out, size_t n,
				  size_t *used) FLOE_WUR;

#endif
