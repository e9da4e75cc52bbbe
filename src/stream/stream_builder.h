/*
 * stream_builder.h — Arrow column builders for decoded records, shaped by
 * the table schema (floe_iceberg_arrow_schema's layout), with per-record
 * rollback; and the value coercions every decoder shares (text and numbers
 * into Iceberg types).
 *
 * DESIGN: a decoder appends a record's values straight into the columns as
 * it parses (no row object, no document tree). A record that turns out not
 * to fit is rolled back by truncating the top-level columns to the row count
 * before it: nested children are truncated through their parents' offsets,
 * so a rollback needs no saved state below the root. Struct fields a record
 * does not mention are filled with nulls when the struct closes; the `seen`
 * generation stamp on each field tells which ones were set (and catches
 * duplicate keys).
 *
 * Finishing moves the buffers into an owned ArrowArray (arrow_build.h); the
 * builder starts the next batch empty, sized from the last one.
 *
 * Thread-safety: a builder belongs to one thread.
 */
#ifndef FLOE_STREAM_BUILDER_H
#define FLOE_STREAM_BUILDER_H

#include <string.h>

#include "floe/arrow.h"
#include "iceberg/types.h"
#include "iceberg/value.h"
#include "util/alloc.h"

typedef enum sb_kind {
	SB_BOOL = 0,
	SB_I32,   /* int, date */
	SB_I64,   /* long, time, timestamps */
	SB_F32,
	SB_F64,
	SB_DEC,   /* decimal128, little-endian */
	SB_FIXED, /* uuid, fixed[L] */
	SB_BIN,   /* string, binary */
	SB_STRUCT,
	SB_LIST,
	SB_MAP,
} sb_kind;

typedef struct stream_col stream_col;
struct stream_col {
	sb_kind kind;
	const floe_type *type; /* the Iceberg type */
	const char *name;      /* field name; "element", "key", "value" */
	size_t name_len;
	uint64_t name8[2];     /* the first 16 bytes of the name, zero-padded (fast compare) */
	int32_t id;
	bool nullable;
	uint32_t width; /* bytes per value of fixed kinds */
	int64_t len, cap;
	uint8_t *valid; /* validity bitmap (nullable columns) */
	uint8_t *vals;  /* fixed-width values (SB_BOOL: bitmap) */
	int32_t *offs;  /* SB_BIN/LIST/MAP: len+1 offsets */
	uint8_t *data;  /* SB_BIN bytes */
	size_t data_len, data_cap;
	stream_col *kids; /* struct fields; list: element; map: key, value */
	size_t n_kids;
	int64_t hint_rows; /* capacity to start the next batch with */
	size_t hint_data;
	/* decoding support */
	uint64_t seen;       /* generation stamp of the object that set this field */
	uint32_t *slots;     /* struct: open-addressing name index (kid+1, 0 empty) */
	uint32_t slot_mask;
	uint32_t next_hint;  /* struct: kid expected next (records repeat key order) */
	uint32_t first_hint; /* struct: kid of the previous object's first member */
};

/* Maximum bytes in one column of one batch (offsets are int32). */
#define STREAM_COL_MAX_DATA ((size_t)INT32_MAX)

/* Build the columns of a struct type (the root: a schema's struct). */
int stream_col_init(stream_col *c, const floe_type *t, const char *name, int32_t id, bool nullable,
		    floe_error *err) FLOE_WUR;
void stream_col_reset(stream_col *c); /* frees everything */

/* Make room for one more row (and its offset). */
int stream_col__grow(stream_col *c) FLOE_WUR;
int stream_col__grow_data(stream_col *c, size_t extra) FLOE_WUR;

static inline int stream_col_reserve(stream_col *c)
{
	return c->len < c->cap ? 0 : stream_col__grow(c);
}

static inline void stream_col__set_valid(stream_col *c, int64_t i, bool v)
{
	if (c->valid) {
		uint8_t bit = (uint8_t)(1u << (i & 7));
		if (v)
			c->valid[i >> 3] |= bit;
		else
			c->valid[i >> 3] &= (uint8_t)~bit;
	}
}

/* Fixed-width append (i32/i64/f32/f64/dec/fixed): value bytes of `width`. */
static inline int stream_col_put_fixed(stream_col *c, const void *v)
{
	if (stream_col_reserve(c))
		return FLOE_ENOMEM;
	memcpy(c->vals + (size_t)c->len * c->width, v, c->width);
	stream_col__set_valid(c, c->len, true);
	c->len++;
	return 0;
}

static inline int stream_col_put_i32(stream_col *c, int32_t v)
{
	if (stream_col_reserve(c))
		return FLOE_ENOMEM;
	((int32_t *)(void *)c->vals)[c->len] = v;
	stream_col__set_valid(c, c->len, true);
	c->len++;
	return 0;
}

static inline int stream_col_put_i64(stream_col *c, int64_t v)
{
	if (stream_col_reserve(c))
		return FLOE_ENOMEM;
	((int64_t *)(void *)c->vals)[c->len] = v;
	stream_col__set_valid(c, c->len, true);
	c->len++;
	return 0;
}

static inline int stream_col_put_bool(stream_col *c, bool v)
{
	if (stream_col_reserve(c))
		return FLOE_ENOMEM;
	uint8_t bit = (uint8_t)(1u << (c->len & 7));
	if (v)
		c->vals[c->len >> 3] |= bit;
	else
		c->vals[c->len >> 3] &= (uint8_t)~bit;
	stream_col__set_valid(c, c->len, true);
	c->len++;
	return 0;
}

/* Variable-length append: reserve n bytes at the end of the data. */
static inline uint8_t *stream_col_bin_begin(stream_col *c, size_t n)
{
	if (stream_col_reserve(c))
		return NULL;
	if ((c->data_cap - c->data_len < n || !c->data) && stream_col__grow_data(c, n))
		return NULL;
	return c->data + c->data_len;
}
/* Finish a value of n bytes written at stream_col_bin_begin's pointer. */
static inline void stream_col_bin_end(stream_col *c, size_t n)
{
	c->data_len += n;
	c->offs[c->len + 1] = (int32_t)c->data_len;
	stream_col__set_valid(c, c->len, true);
	c->len++;
}
static inline int stream_col_put_bin(stream_col *c, const void *p, size_t n)
{
	uint8_t *d = stream_col_bin_begin(c, n);
	if (!d)
		return FLOE_ENOMEM;
	if (n)
		memcpy(d, p, n);
	stream_col_bin_end(c, n);
	return 0;
}

/* A null (a zero value when the column is not nullable: used under a null
 * parent). Structs get a null in every child. */
int stream_col_put_null(stream_col *c) FLOE_WUR;
/* Open a struct row (validity set); the caller then appends one value to
 * each child (stream_col_put_null for those absent). */
int stream_col_struct_begin(stream_col *c) FLOE_WUR;
/* Open a list/map row: the caller appends elements to the child(ren) and
 * closes it with stream_col_list_end. */
int stream_col_list_begin(stream_col *c) FLOE_WUR;
int stream_col_list_end(stream_col *c) FLOE_WUR; /* FLOE_ENOMEM past int32 offsets */

/* Roll back to n rows (children follow through offsets). */
void stream_col_truncate(stream_col *c, int64_t n);

/* Open n struct rows at once (each child then takes n values). */
int stream_col_struct_rows(stream_col *c, int64_t n) FLOE_WUR;
/* Exchange the rows (buffers and counts) of two primitive columns of the same
 * kind, width and nullability; false (nothing done) when they differ. */
bool stream_col_swap_rows(stream_col *a, stream_col *b);

/* Append row r of src (same shape) to dst. */
int stream_col_copy_row(stream_col *dst, const stream_col *src, int64_t r) FLOE_WUR;

/* Is row r null? */
static inline bool stream_col_is_null(const stream_col *c, int64_t r)
{
	return c->valid && !(c->valid[r >> 3] & (1u << (r & 7)));
}

/* Row r of a primitive column as a floe_value (strings point into the
 * builder; valid until the next append). */
void stream_col_value(const stream_col *c, int64_t r, floe_value *out);

/*
 * Move the rows into out (an owned struct/array per floe_iceberg_arrow_schema)
 * and start an empty batch. For the root (a non-nullable struct) out is the
 * record batch.
 */
int stream_col_finish(stream_col *c, struct ArrowArray *out) FLOE_WUR;

/*
 * A view of the rows as an ArrowArray that borrows the builder's buffers
 * (its release frees only the structure). Use it, release it, then
 * stream_col_truncate(c, 0) to start the next batch in the same memory:
 * no allocation and no page faults per batch.
 */
int stream_col_view(stream_col *c, struct ArrowArray *out) FLOE_WUR;

/* Bytes the column holds (for batch sizing). */
size_t stream_col_bytes(const stream_col *c);

/* Struct field lookup by name (exact, then ASCII case-insensitive); -1. */
int stream_col_field(stream_col *c, const char *name, size_t n);

/* ---- coercions ---------------------------------------------------------------------- */

/* How to read numbers as instants. */
typedef enum stream_epoch_unit {
	STREAM_EPOCH_MS = 0,
	STREAM_EPOCH_S,
	STREAM_EPOCH_US,
	STREAM_EPOCH_NS,
} stream_epoch_unit;

typedef struct stream_coerce_opts {
	stream_epoch_unit epoch_unit; /* numbers into timestamp columns */
} stream_coerce_opts;

/* A reason why a value does not fit (for the dead-letter file). */
typedef struct stream_reason {
	char msg[256];
} stream_reason;

void stream_reason_set(stream_reason *r, const char *fmt, ...) FLOE_PRINTF(2, 3);
/* Prepend name (at most 64 bytes) and sep: "user" + ": " + "why". */
void stream_reason_prefix(stream_reason *r, const char *name, size_t n, const char *sep);

/*
 * Append text s[0..n) (a JSON string's content or a CSV cell) to primitive
 * column c, coerced to its type: numbers, booleans (true/false/1/0), decimal
 * text (rounded half-up to the scale), ISO-8601 dates, times and timestamps
 * (a zone is applied; none means UTC) or epoch numbers, canonical UUIDs,
 * base64 binary/fixed. Returns 0, FLOE_ENOMEM, or FLOE_EINVAL with *why set.
 */
int stream_coerce_text(stream_col *c, const char *s, size_t n, const stream_coerce_opts *o,
		       stream_reason *why) FLOE_WUR;
/* Append a JSON number token s[0..n) to primitive column c. */
int stream_coerce_number(stream_col *c, const char *s, size_t n, const stream_coerce_opts *o,
			 stream_reason *why) FLOE_WUR;
/* Append a JSON boolean. */
int stream_coerce_bool(stream_col *c, bool v, stream_reason *why) FLOE_WUR;

/* Parse decimal text (digits, '.', exponent) into an unscaled value at
 * scale, rounding half-up; false when malformed or over precision. */
bool stream_parse_decimal(const char *s, size_t n, int32_t precision, int32_t scale,
			  floe_i128 *out);
/* Fast strict number parsing (whole slice). */
bool stream_parse_i64(const char *s, size_t n, int64_t *out);
bool stream_parse_f64(const char *s, size_t n, double *out);
/* Check UTF-8 (fast path for ASCII). */
bool stream_utf8_valid(const uint8_t *p, size_t n);

#endif
