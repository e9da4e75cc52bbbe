/*
 * rcol.h — semi-private to the parquet reader: one selected leaf column of
 * the current row group. It walks the column chunk's pages through a bounded
 * read window, decodes levels and values (one decoder file per encoding),
 * converts values to their Arrow representation, and hands out the levels
 * and dense (non-null) values of a number of whole rows.
 */
#ifndef FLOE_PARQUET_RCOL_H
#define FLOE_PARQUET_RCOL_H

#include "arrow/arrow_fmt.h"
#include "codec/codec.h"
#include "parquet/encoding.h"
#include "parquet/meta.h"
#include "parquet/reader.h"
#include "parquet/schema.h"
#include "util/stream.h"

/* How a leaf's physical values become Arrow values. */
enum {
	FLOE_PQ_OUT_NULL = 0, /* "n": only nulls */
	FLOE_PQ_OUT_BOOL,     /* dense: one 0/1 byte per value */
	FLOE_PQ_OUT_COPY,     /* same bytes (ints, floats, fixed binary) */
	FLOE_PQ_OUT_I8,       /* INT32 narrowed */
	FLOE_PQ_OUT_I16,
	FLOE_PQ_OUT_DEC32,    /* INT32 -> decimal128 */
	FLOE_PQ_OUT_DEC64,
	FLOE_PQ_OUT_DECFIXED, /* big-endian fixed -> decimal128 */
	FLOE_PQ_OUT_DECBYTES, /* big-endian bytes -> decimal128 */
	FLOE_PQ_OUT_INT96,    /* -> timestamp ns / us */
	FLOE_PQ_OUT_BINARY,   /* views -> offsets + data */
};

typedef struct floe_parquet__leafout {
	int kind;
	int phys_width;  /* bytes of a physical value (0 BYTE_ARRAY, bool 0) */
	int out_width;   /* bytes of an Arrow value (bool 1: dense bytes) */
	floe_arrow_fmt fmt;
	char format[32]; /* Arrow format string */
	bool int96_us;
} floe_parquet__leafout;

/* Work out the Arrow output of a leaf; FLOE_EUNSUPPORTED when there is none. */
int floe_parquet__leafout_init(floe_parquet__leafout *o, const floe_parquet_node *leaf,
			       bool int96_us, floe_error *err) FLOE_WUR;

typedef struct floe_parquet__rcol {
	floe_input *in;
	const floe_parquet_reader_opts *opts;
	const floe_parquet_node *leaf;
	floe_parquet__leafout out;
	const floe_parquet_column_meta *meta;
	char ctx[400]; /* "'file' column 'a.b' row group 2" */
	floe_codec codec;
	bool pad_dict_header; /* PARQUET-816 writer: chunk sizes miss a header */

	/* chunk range and read window */
	uint64_t pos, end; /* next page, end of chunk */
	floe_buf win;      /* bytes [win_start, win_start + win.len) of the file */
	uint64_t win_start;
	int page_no;

	/* dictionary (Arrow representation) */
	bool has_dict;
	size_t dict_n;
	floe_buf dict_vals;  /* fixed: dict_n * out_width bytes */
	floe_buf dict_views; /* binary: floe_parquet_view[dict_n] into dict_store */
	floe_buf dict_store;

	/* the current page */
	floe_buf page, vbuf, tmp, store, scratch;
	floe_buf pdef, prep; /* uint16 levels */
	size_t page_levels, page_pos;
	floe_buf pvals;  /* fixed: dense values, out_width each */
	floe_buf pviews; /* binary: floe_parquet_view per dense value */
	size_t page_nvals, page_vpos;
	bool page_loaded;
	bool chunk_done;
	bool chunk_first; /* no data page with levels seen yet */

	/* what the current batch has taken */
	floe_buf bdef, brep; /* uint16 */
	floe_buf bvals;      /* fixed */
	floe_buf blens;      /* binary: int32 lengths */
	floe_buf bdata;      /* binary bytes */
	size_t b_levels, b_vals;

	floe_error *err;
} floe_parquet__rcol;

void floe_parquet__rcol_init(floe_parquet__rcol *c, floe_input *in,
			     const floe_parquet_reader_opts *opts, const floe_parquet_node *leaf);
void floe_parquet__rcol_reset(floe_parquet__rcol *c); /* frees */

/* Start a column chunk (the leaf's chunk in a row group). */
int floe_parquet__rcol_start(floe_parquet__rcol *c, const floe_parquet_column_chunk *cc,
			     int row_group, floe_error *err) FLOE_WUR;

/* Clear the batch buffers (keeps memory). */
void floe_parquet__rcol_batch_clear(floe_parquet__rcol *c);

/* Append the levels and dense values of the next `rows` rows. */
int floe_parquet__rcol_read(floe_parquet__rcol *c, size_t rows, floe_error *err) FLOE_WUR;

#endif
