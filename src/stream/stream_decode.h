/*
 * stream_decode.h — record decoders: JSON lines and CSV into the column
 * builders of a table schema (stream_builder.h).
 *
 * Both decode one record at a time straight into the columns; a record that
 * does not fit is rolled back (the columns are as before it) and the reason
 * is left in the decoder for the dead-letter file. The caller owns the
 * columns; a decoder only borrows them.
 *
 * JSON (schema-directed, no tree): a record is one JSON object. Members
 * are matched to fields by name (exact, then ASCII case-insensitive);
 * unknown members are skipped; a missing optional field is null; a missing
 * or null required field rejects the record; a duplicate member rejects it.
 * Nested structs come from objects, lists from arrays, maps from objects
 * (keys coerced from their text) or arrays of [key, value] pairs. A string
 * column takes any JSON value: strings as their text, other values as their
 * JSON text (Flink's JSON format does the same).
 *
 * CSV (RFC 4180): fields separated by a delimiter, optionally quoted with
 * doubled quotes inside; a quoted field may span lines. With a header, the
 * header's names map columns to fields (unknown names are ignored);
 * without one, columns map to the top-level fields in order. An empty
 * unquoted field (or the configured null literal) is null. Nested fields
 * take JSON text.
 *
 * Thread-safety: a decoder belongs to one thread.
 */
#ifndef FLOE_STREAM_DECODE_H
#define FLOE_STREAM_DECODE_H

#include "stream/stream_builder.h"
#include "util/buf.h"

#define STREAM_JSON_MAX_DEPTH 64

typedef struct stream_json_dec {
	stream_coerce_opts opts;
	uint64_t gen;
	floe_buf scratch; /* unescaped keys and non-string values */
	stream_reason why;
	size_t err_at;    /* byte offset in the record of a syntax error */
	bool pathed;      /* why already starts with a field path */
	bool reject_unknown; /* a member the schema lacks rejects the record
			      * (unknown-fields: evolve, dead-letter) */
} stream_json_dec;

void stream_json_dec_init(stream_json_dec *d, const stream_coerce_opts *opts);
void stream_json_dec_reset(stream_json_dec *d);

/*
 * Decode one record p[0..n) (a JSON object; surrounding whitespace allowed)
 * as one row of root (a non-nullable struct column). 0 on success;
 * FLOE_EINVAL when the record does not fit (columns rolled back, d->why
 * says why); FLOE_ENOMEM.
 */
int stream_json_decode(stream_json_dec *d, stream_col *root, const char *p, size_t n) FLOE_WUR;
/* Decode one JSON value (text p[0..n)) into column c (CSV's nested cells). */
int stream_json_decode_value(stream_json_dec *d, stream_col *c, const char *p, size_t n) FLOE_WUR;

/*
 * The decoder's one-pass number path (semi-private; tests and the fuzz
 * target check it against the general path). At p: an RFC 8259 number
 * without an exponent and with at most 18 digits, ending where the general
 * scanner would end it. Returns its length, 0 when it is anything else
 * (the general path then validates and converts it). *is_int: no fraction,
 * *i its value; *d_ok: *d is its nearest double (mantissa <= 2^53, exact
 * power of ten: Clinger's fast path, as stream_parse_f64).
 */
size_t stream_json__fast_number(const char *p, const char *end, bool *is_int, int64_t *i,
				bool *d_ok, double *d);

/* ---- CSV ------------------------------------------------------------------------- */

typedef struct stream_csv_opts {
	char delimiter;          /* ',' */
	char quote;              /* '"'; 0 = no quoting */
	bool header;             /* first line names the columns (true) */
	const char *null_literal; /* an unquoted field equal to it is null (NULL: "") */
	bool allow_comments;     /* lines starting with '#' are skipped */
} stream_csv_opts;

typedef struct stream_csv_dec {
	stream_csv_opts o;
	stream_coerce_opts copts;
	int32_t *map; /* CSV column -> top-level field index, -1 ignored */
	size_t n_map;
	bool have_map;
	floe_buf cell; /* unquoted copy of a quoted field */
	stream_json_dec json;
	uint64_t gen;
	stream_reason why;
} stream_csv_dec;

void stream_csv_dec_init(stream_csv_dec *d, const stream_csv_opts *o, const stream_coerce_opts *co);
void stream_csv_dec_reset(stream_csv_dec *d);
/* Use a header line (names) for the column mapping; FLOE_EINVAL with why
 * when it names no field of root or a name twice. */
int stream_csv_set_header(stream_csv_dec *d, const stream_col *root, const char *p, size_t n)
	FLOE_WUR;
/* Map columns to fields in order (no header). */
int stream_csv_set_positional(stream_csv_dec *d, const stream_col *root) FLOE_WUR;
/* Decode one record (without its line end). As stream_json_decode. */
int stream_csv_decode(stream_csv_dec *d, stream_col *root, const char *p, size_t n) FLOE_WUR;

/*
 * Length of the record that starts at p (its line end included) within
 * p[0..n), honouring quotes: a newline inside a quoted field does not end
 * the record. *complete is false when the record runs past n (then the
 * whole of n is returned).
 */
size_t stream_csv_record_len(const char *p, size_t n, char quote, bool *complete);

#endif
