/*
 * floe/parquet.h — Parquet files for operators' tools: open a local file,
 * describe its footer and schema, dump its rows as JSON lines, and rewrite
 * it with other writer settings (codec, page version, dictionary, sizes).
 *
 * The engine itself uses the internal API (src/parquet/reader.h, writer.h)
 * over floe_input/floe_output; this header is the small surface the command
 * line (floe parquet ...) is built on.
 *
 * Output goes through a callback (the library never prints): fn receives
 * chunks of text and returns 0, or non-zero to stop (reported as EIO).
 *
 * Errors: ENOTFOUND (no such file), EIO, ECORRUPT (the file is damaged: the
 * message names the file, column, row group and page), EUNSUPPORTED
 * (encrypted files, external column chunks, codecs such as LZO), EINVAL.
 * Thread-safety: a floe_parquet_file is used by one thread at a time.
 */
#ifndef FLOE_PARQUET_H
#define FLOE_PARQUET_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floe_parquet_file floe_parquet_file;

typedef int (*floe_parquet_out_fn)(const char *p, size_t n, void *payload);

/* Open a local file and read its footer. Close with floe_parquet_file_close. */
FLOE_EXPORT int floe_parquet_file_open(floe_parquet_file **out, const char *path, floe_error *err) FLOE_WUR;
FLOE_EXPORT void floe_parquet_file_close(floe_parquet_file *f); /* accepts NULL */

FLOE_EXPORT int64_t floe_parquet_file_num_rows(const floe_parquet_file *f);

/* The footer as one JSON document: version, created_by, num_rows, key/value
 * metadata, and per row group and column chunk the type, path, codec,
 * encodings, encoding stats, sizes, offsets and statistics. */
FLOE_EXPORT int floe_parquet_file_meta_json(floe_parquet_file *f, floe_parquet_out_fn fn, void *payload,
			   floe_error *err) FLOE_WUR;

/* The schema in parquet-mr's "message" text form (with field ids). */
FLOE_EXPORT int floe_parquet_file_schema_text(floe_parquet_file *f, floe_parquet_out_fn fn, void *payload,
			     floe_error *err) FLOE_WUR;

typedef struct floe_parquet_cat_opts {
	int version;             /* 1 */
	const char *columns;     /* comma-separated dotted paths, NULL = all */
	const int *row_groups;   /* NULL = all */
	size_t n_row_groups;
	int64_t limit;           /* rows to print, -1 = all */
	int64_t batch_rows;      /* 0 = default */
	bool verify_crc;         /* check page CRCs */
	bool int96_as_micros;
} floe_parquet_cat_opts;

#define FLOE_PARQUET_CAT_OPTS_INIT {1, NULL, NULL, 0, -1, 0, false, false}

/*
 * Rows as JSON lines, one object per row: integers as numbers; floats as the
 * shortest %g form that reads back exactly ("NaN"/"Infinity" as strings);
 * decimals as strings with the column's scale; dates, times and timestamps
 * ISO-8601 (3/6/9 fraction digits by unit, "Z" when UTC-adjusted); strings
 * as JSON strings; binary and fixed as base64; lists as arrays; maps as
 * arrays of [key, value]; structs as objects.
 */
FLOE_EXPORT int floe_parquet_file_cat(floe_parquet_file *f, const floe_parquet_cat_opts *opts,
			  floe_parquet_out_fn fn, void *payload, floe_error *err) FLOE_WUR;

typedef struct floe_parquet_rewrite_opts {
	int version;            /* 1 */
	const char *codec;      /* "uncompressed", "snappy", "gzip", "zstd", "brotli", "lz4_raw" */
	int level;              /* 0 = codec default */
	int page_version;       /* 1 or 2 */
	bool dictionary;
	int64_t row_group_bytes; /* 0 = default (128 MiB) */
	int64_t row_group_rows;  /* 0 = no limit */
	int64_t page_bytes;      /* 0 = default (1 MiB) */
	int64_t page_rows;       /* 0 = default (20000) */
	int64_t dict_bytes;      /* 0 = default (2 MiB) */
	int64_t batch_rows;      /* rows read per batch, 0 = default */
} floe_parquet_rewrite_opts;

#define FLOE_PARQUET_REWRITE_OPTS_INIT {1, "zstd", 0, 1, true, 0, 0, 0, 0, 0, 0}

/*
 * Read every row of f and write them to a new file at out_path with floe's
 * writer: the schema is derived from the data's Arrow types (lists become
 * 3-level LISTs, INT96 becomes TIMESTAMP(NANOS), field ids are kept). The
 * output is removed on failure. *rows_out (optional) gets the rows written.
 */
FLOE_EXPORT int floe_parquet_file_rewrite(floe_parquet_file *f, const char *out_path,
			      const floe_parquet_rewrite_opts *opts, int64_t *rows_out,
			      floe_error *err) FLOE_WUR;

/* Codec name ("zstd") -> Parquet codec id; -1 when unknown. */
FLOE_EXPORT int floe_parquet_codec_from_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
