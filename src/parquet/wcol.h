/*
 * wcol.h — semi-private to the parquet writer: one leaf column's writer
 * (open page, dictionary, buffered compressed pages of the current row
 * group, statistics) and the statistics accumulator.
 */
#ifndef FLOE_PARQUET_WCOL_H
#define FLOE_PARQUET_WCOL_H

#include "codec/codec.h"
#include "parquet/encoding.h"
#include "parquet/meta.h"
#include "parquet/schema.h"
#include "parquet/writer.h"
#include "util/stream.h"

/* How a column's values are ordered for statistics (spec: ColumnOrder
 * TypeDefinedOrder, per physical and logical type). */
enum {
	FLOE_PQ_ORD_NONE = 0, /* no statistics (INT96, INTERVAL) */
	FLOE_PQ_ORD_BOOL,
	FLOE_PQ_ORD_I32,
	FLOE_PQ_ORD_U32,
	FLOE_PQ_ORD_I64,
	FLOE_PQ_ORD_U64,
	FLOE_PQ_ORD_FLOAT,
	FLOE_PQ_ORD_DOUBLE,
	FLOE_PQ_ORD_FLOAT16,
	FLOE_PQ_ORD_BYTES,        /* unsigned lexicographic */
	FLOE_PQ_ORD_SIGNED_BYTES, /* big-endian two's complement (decimals) */
};

typedef struct floe_parquet__stats {
	int order;
	bool has;         /* min/max hold a value */
	floe_buf min, max; /* PLAIN bytes of the physical value */
	int64_t nan_count;
} floe_parquet__stats;

int floe_parquet__order_of(const floe_parquet_node *leaf);
void floe_parquet__stats_init(floe_parquet__stats *s, int order);
void floe_parquet__stats_reset(floe_parquet__stats *s); /* frees */
void floe_parquet__stats_clear(floe_parquet__stats *s); /* keeps memory */
/* n values of `width` bytes (bool: one 0/1 byte each). */
int floe_parquet__stats_update_fixed(floe_parquet__stats *s, const uint8_t *v, size_t n,
				     int width) FLOE_WUR;
int floe_parquet__stats_update_views(floe_parquet__stats *s, const floe_parquet_view *v,
				     size_t n) FLOE_WUR;
int floe_parquet__stats_merge(floe_parquet__stats *dst, const floe_parquet__stats *src) FLOE_WUR;
/* Compare two PLAIN values under an order (<0, 0, >0). */
int floe_parquet__stats_cmp(int order, const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

/*
 * Truncate a min bound to at most cap bytes (a prefix, at a UTF-8 code point
 * boundary when utf8). Returns the new length.
 */
size_t floe_parquet__trunc_min(const uint8_t *p, size_t n, size_t cap, bool utf8);
/*
 * An upper bound of at most cap bytes for a value longer than cap: a prefix
 * with its last byte (or code point, when utf8) incremented, carrying left.
 * Writes into out (cap bytes); returns its length, 0 when impossible.
 */
size_t floe_parquet__trunc_max(const uint8_t *p, size_t n, size_t cap, bool utf8, uint8_t *out);

/* A finished page of the current chunk: its header and (compressed) body. */
typedef struct floe_parquet__page {
	floe_buf hdr, data;
} floe_parquet__page;

typedef struct floe_parquet__wcol {
	const floe_parquet_node *leaf;
	const floe_parquet_writer_opts *opts;
	int physical;
	int width; /* fixed bytes per value (bool: 1), 0 for BYTE_ARRAY */
	int max_def, max_rep;
	floe_codec codec;

	/* the open page */
	uint16_t *def, *rep;
	size_t n_levels, cap_levels;
	size_t page_values, page_rows;
	size_t page_plain_size; /* PLAIN size of the page's values */
	floe_buf plain;
	uint32_t *idx;
	size_t n_idx, cap_idx;
	bool dict_mode;   /* the open page is dictionary-encoded */
	bool dict_off;    /* no dictionary for the rest of this chunk */
	floe_parquet_dict dict;

	/* the current row group's chunk: finished pages (their buffers are
	 * swapped in, not copied, and reused by the next row group) */
	floe_parquet__page *pages;
	size_t n_pages, cap_pages;
	size_t chunk_bytes; /* headers + bodies buffered */
	int64_t chunk_values, chunk_nulls, chunk_uncompressed;
	int n_dict_pages_used; /* data pages encoded with the dictionary */
	int n_plain_pages;
	floe_parquet__stats chunk_stats;

	/* file totals */
	int64_t total_values, total_nulls, total_nan, total_compressed, total_uncompressed;
	floe_parquet__stats file_stats;

	floe_buf body, comp, hdr; /* scratch */
} floe_parquet__wcol;

int floe_parquet__wcol_init(floe_parquet__wcol *c, const floe_parquet_node *leaf,
			    const floe_parquet_writer_opts *opts, floe_error *err) FLOE_WUR;
void floe_parquet__wcol_reset(floe_parquet__wcol *c);

/*
 * Append n_levels levels (rep may be NULL when max_rep == 0, def NULL when
 * max_def == 0) and the n_vals non-null values they define: fixed-width
 * bytes (width each; bool one 0/1 byte each) or floe_parquet_view for
 * BYTE_ARRAY. The input ends on a row boundary.
 */
int floe_parquet__wcol_write(floe_parquet__wcol *c, const uint16_t *def, const uint16_t *rep,
			     size_t n_levels, const void *vals, size_t n_vals,
			     floe_error *err) FLOE_WUR;

/* Estimated bytes of the current chunk (buffered pages, open page, dictionary). */
size_t floe_parquet__wcol_estimate(const floe_parquet__wcol *c);
/* The part of the estimate not yet compressed: the open page and the
 * dictionary (the rest, chunk_bytes, is exact). */
size_t floe_parquet__wcol_open_estimate(const floe_parquet__wcol *c);
/* Memory held. */
size_t floe_parquet__wcol_memory(const floe_parquet__wcol *c);

/*
 * Write the chunk (dictionary page, then the buffered data pages) to out and
 * fill *cc (strings and arrays from arena). Resets the chunk.
 */
int floe_parquet__wcol_flush(floe_parquet__wcol *c, floe_output *out, floe_arena *arena,
			     floe_parquet_column_chunk *cc, floe_error *err) FLOE_WUR;

/* Free the buffers kept for reuse (after a flush, when memory is tight). */
void floe_parquet__wcol_trim(floe_parquet__wcol *c);

/* The codec for a Parquet codec id; false when floe cannot handle it. */
bool floe_parquet__codec_of(int parquet_codec, floe_codec *out);

#endif
