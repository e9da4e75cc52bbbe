/*
 * writer.h — writing Parquet files from Arrow batches.
 *
 * A writer takes a finished schema (schema.h) and an output stream; the
 * caller passes batches as a struct ArrowArray + ArrowSchema whose children
 * map positionally to the schema's top-level fields, and closes the writer to
 * get the footer written and per-column results for Iceberg metrics.
 *
 * DESIGN (memory): values are encoded into the open page of each column as
 * rows arrive; a full page is compressed at once and kept until its row group
 * is flushed; each column keeps one dictionary. Nothing holds raw rows, so a
 * writer's memory is about one compressed row group plus one open page and
 * one dictionary per column. Several writers can share a budget
 * (floe_parquet_budget): when the writers' buffered bytes together pass its
 * limit, the largest is flushed first — by the owner's callback, or, without
 * one, by the largest writer itself at its next write.
 *
 * spec: parquet-format (File format, Encodings, LogicalTypes). Never writes
 * INT96. Every page (dictionary, v1 and v2 data) carries the CRC-32 of the
 * bytes that follow its header, as written (after compression; for v2 the
 * levels and the values), unless page_crc is turned off. Statistics: min_value/max_value (NaN excluded; -0.0/+0.0 per the
 * spec's rule in the footer), null_count, column_orders = TypeDefinedOrder.
 *
 * Thread-safety: a writer is used by one thread at a time. A budget may be
 * shared by writers on different threads (internally locked).
 */
#ifndef FLOE_PARQUET_WRITER_H
#define FLOE_PARQUET_WRITER_H

#include "floe/arrow.h"
#include "floe/common.h"
#include "parquet/meta.h"
#include "parquet/schema.h"
#include "util/stream.h"

typedef struct floe_parquet_writer floe_parquet_writer;
typedef struct floe_parquet_budget floe_parquet_budget;

typedef struct floe_parquet_writer_opts {
	int version;                /* of this struct: 1 */
	int64_t row_group_bytes;    /* write.parquet.row-group-size-bytes (128 MiB) */
	int64_t row_group_rows;     /* 0 = no row limit */
	int64_t page_bytes;         /* write.parquet.page-size-bytes (1 MiB) */
	int64_t page_rows;          /* write.parquet.page-row-limit (20000) */
	int64_t dict_bytes;         /* write.parquet.dict-size-bytes (2 MiB) */
	int codec;                  /* write.parquet.compression-codec (FLOE_PARQUET_ZSTD) */
	int level;                  /* write.parquet.compression-level (0 = codec default) */
	int page_version;           /* 1 (DATA_PAGE) or 2 (DATA_PAGE_V2) */
	bool dictionary;            /* try RLE_DICTIONARY first (true) */
	bool page_crc;              /* write page CRCs (true, as parquet-java does) */
	size_t stats_max_bytes;     /* footer min/max longer than this are truncated (4096) */
	size_t bounds_max_bytes;    /* result min/max longer than this are truncated (1024) */
	const char *created_by;     /* NULL = "floe version x" */
	floe_parquet_budget *budget; /* optional shared memory budget */
} floe_parquet_writer_opts;

#define FLOE_PARQUET_WRITER_OPTS_INIT                                                         \
	{1,                                                                                   \
	 (int64_t)128 << 20,                                                                  \
	 0,                                                                                   \
	 (int64_t)1 << 20,                                                                    \
	 20000,                                                                               \
	 (int64_t)2 << 20,                                                                    \
	 FLOE_PARQUET_ZSTD,                                                                   \
	 0,                                                                                   \
	 1,                                                                                   \
	 true,                                                                                \
	 true,                                                                                \
	 4096,                                                                                \
	 1024,                                                                                \
	 NULL,                                                                                \
	 NULL}

/* Per leaf column, over the whole file: what Iceberg metrics are made of. */
typedef struct floe_parquet_column_result {
	const floe_parquet_node *leaf; /* in the writer's schema */
	int64_t value_count;           /* levels written, nulls included (num_values) */
	int64_t null_count;
	int64_t nan_count;             /* float/double; 0 otherwise */
	int64_t compressed_size;       /* sum of total_compressed_size over row groups */
	int64_t uncompressed_size;
	/*
	 * Bounds over non-null, non-NaN values (-0.0 < +0.0), as the PLAIN bytes
	 * of the physical type: INT32/INT64/FLOAT/DOUBLE little-endian, BOOLEAN
	 * one byte, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY the raw bytes (decimals
	 * big-endian two's complement at the column's width). Values longer than
	 * bounds_max_bytes are truncated: min to a prefix, max to a prefix
	 * incremented (code points for STRING) — *_exact tells.
	 */
	bool has_min, has_max, min_exact, max_exact;
	floe_parquet_bytes min, max;
} floe_parquet_column_result;

typedef struct floe_parquet_file_result {
	int64_t record_count;
	int64_t file_size;      /* exact bytes written, footer and magic included */
	int64_t *split_offsets; /* start offset of each row group */
	size_t n_row_groups;
	floe_parquet_column_result *columns; /* one per leaf, in leaf order */
	size_t n_columns;
} floe_parquet_file_result;

/*
 * Create a writer. schema must be finished and outlive the writer; out is
 * written to but never closed (the caller closes or aborts it after
 * floe_parquet_writer_close). FLOE_EINVAL for bad options or a schema the
 * writer cannot write (a repeated field outside a LIST/MAP layout).
 */
int floe_parquet_writer_new(floe_parquet_writer **w, floe_output *out,
			    const floe_parquet_schema *schema, const floe_parquet_writer_opts *opts,
			    floe_error *err) FLOE_WUR;

/* Add a footer key/value (e.g. "iceberg.schema"); copied. Before close. */
int floe_parquet_writer_set_kv(floe_parquet_writer *w, const char *key, const char *value,
			       floe_error *err) FLOE_WUR;

/*
 * Write a batch: a struct array ("+s") whose children map positionally to
 * the schema's top-level fields. The batch stays owned by the caller (it is
 * not released; it may be reused once this returns).
 * Errors: FLOE_EINVAL when the batch's types do not fit the schema (found
 * before anything is encoded: the writer stays usable) or when a null
 * appears in a required field (found while encoding: the writer is then
 * failed); FLOE_EIO from the output; FLOE_ENOMEM. After a failure, free the
 * writer and abort the output.
 */
int floe_parquet_writer_write(floe_parquet_writer *w, const struct ArrowArray *batch,
			      const struct ArrowSchema *batch_schema, floe_error *err) FLOE_WUR;

/* Close the current row group now (no-op when it is empty). */
int floe_parquet_writer_flush_row_group(floe_parquet_writer *w, floe_error *err) FLOE_WUR;

/* Bytes this writer buffers (compressed pages, open pages, dictionaries). */
size_t floe_parquet_writer_buffered(const floe_parquet_writer *w);

/*
 * Estimated size of the file if it were closed now, footer aside: bytes
 * written so far plus the open row group (its compressed pages, open pages
 * and dictionaries at their encoded, not yet compressed, size) — what Java's
 * rolling compares. Callers that want more precision scale the open part by
 * what they observe (src/write does).
 */
int64_t floe_parquet_writer_estimated_size(const floe_parquet_writer *w);
/* The estimate in two parts: *exact, bytes whose final size is known (in
 * the output, or finished compressed pages); *open, the open pages and
 * dictionaries at their uncompressed size. Callers that learn how much the
 * open part shrinks (rolling at a target size) scale only that part. */
void floe_parquet_writer_size_parts(const floe_parquet_writer *w, int64_t *exact, int64_t *open);

/*
 * Flush the last row group and write the footer. *result (optional) points
 * to results owned by the writer, valid until floe_parquet_writer_free.
 */
int floe_parquet_writer_close(floe_parquet_writer *w, const floe_parquet_file_result **result,
			      floe_error *err) FLOE_WUR;

void floe_parquet_writer_free(floe_parquet_writer *w);

/*
 * A memory budget shared by writers. over_fn (optional) is called by the
 * writing thread, without locks held, when the writers' buffered bytes
 * exceed limit; it names the largest writer, which the owner should flush
 * (floe_parquet_writer_flush_row_group on that writer's thread). Without a
 * callback the largest writer flushes itself at its next write.
 */
typedef void (*floe_parquet_budget_fn)(floe_parquet_budget *b, floe_parquet_writer *largest,
				       void *payload);
int floe_parquet_budget_new(floe_parquet_budget **out, uint64_t limit,
			    floe_parquet_budget_fn over_fn, void *payload) FLOE_WUR;
void floe_parquet_budget_free(floe_parquet_budget *b); /* after its writers */
uint64_t floe_parquet_budget_used(floe_parquet_budget *b);
uint64_t floe_parquet_budget_limit(const floe_parquet_budget *b);
/* The writer buffering the most bytes (NULL when none). */
floe_parquet_writer *floe_parquet_budget_largest(floe_parquet_budget *b);

#endif
