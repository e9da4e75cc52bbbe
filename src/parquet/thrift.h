/*
 * thrift.h — the Thrift compact protocol, as Parquet uses it for its footer
 * and page headers: a pull reader over untrusted bytes and a writer into a
 * bounded buffer.
 *
 * spec: Thrift compact protocol (thrift/doc/specs/thrift-compact-protocol.md).
 *
 * DESIGN: the reader is pull-style: a struct parser loops over
 * floe_thrift_next_field() and dispatches on the field id, reading values
 * with the typed readers or skipping with floe_thrift_skip(). A value whose
 * wire type differs from the one asked for is skipped (what generated Thrift
 * code does), so a reader asks with floe_thrift_read_*() which report
 * *present = false in that case. Every list/map count and binary length is
 * checked against the bytes that remain before the caller can size anything
 * from it; nesting depth and element counts are capped. Errors carry the
 * byte offset ("at offset 1234") and are FLOE_ECORRUPT.
 *
 * The writer keeps the first error sticky in w->rc, so encoders write a whole
 * structure and check once.
 */
#ifndef FLOE_PARQUET_THRIFT_H
#define FLOE_PARQUET_THRIFT_H

#include "floe/common.h"
#include "util/buf.h"

enum {
	FLOE_THRIFT_STOP = 0,
	FLOE_THRIFT_TRUE = 1, /* bool field, value true */
	FLOE_THRIFT_FALSE = 2,
	FLOE_THRIFT_I8 = 3,
	FLOE_THRIFT_I16 = 4,
	FLOE_THRIFT_I32 = 5,
	FLOE_THRIFT_I64 = 6,
	FLOE_THRIFT_DOUBLE = 7,
	FLOE_THRIFT_BINARY = 8,
	FLOE_THRIFT_LIST = 9,
	FLOE_THRIFT_SET = 10,
	FLOE_THRIFT_MAP = 11,
	FLOE_THRIFT_STRUCT = 12,
	FLOE_THRIFT_UUID = 13,
	/* writer-side name for a bool element type in list headers */
	FLOE_THRIFT_BOOL = 1,
};

#define FLOE_THRIFT_MAX_DEPTH 64

typedef struct floe_thrift_limits {
	int max_depth;         /* nesting of structs/lists/maps (<= FLOE_THRIFT_MAX_DEPTH) */
	size_t max_list;       /* elements of one list/set/map */
	size_t max_string;     /* bytes of one binary/string */
	size_t max_total_elems; /* list elements over the whole message */
} floe_thrift_limits;

#define FLOE_THRIFT_LIMITS_INIT {FLOE_THRIFT_MAX_DEPTH, (size_t)1 << 24, (size_t)1 << 28, (size_t)1 << 26}

typedef struct floe_thrift_reader {
	const uint8_t *p;
	size_t n;
	size_t off;
	floe_thrift_limits lim;
	size_t elems; /* list elements seen so far */
	int depth;
	int16_t last_fid[FLOE_THRIFT_MAX_DEPTH + 1];
	int bool_val; /* value of the pending bool field (-1 none) */
	const char *what; /* "footer", "page header": used in messages */
	floe_error *err;
} floe_thrift_reader;

void floe_thrift_reader_init(floe_thrift_reader *r, const void *p, size_t n,
			     const floe_thrift_limits *lim, const char *what, floe_error *err);

/* Report a corruption at the reader's current offset. Returns FLOE_ECORRUPT. */
int floe_thrift_corrupt(floe_thrift_reader *r, const char *fmt, ...) FLOE_PRINTF(2, 3);

/* Enter a struct (depth checked). */
int floe_thrift_struct_begin(floe_thrift_reader *r) FLOE_WUR;
/*
 * Next field header of the current struct. At the end (*type ==
 * FLOE_THRIFT_STOP) the struct is left (depth restored).
 */
int floe_thrift_next_field(floe_thrift_reader *r, int16_t *fid, int *type) FLOE_WUR;
/* Skip one value of a wire type (any type, nested values included). */
int floe_thrift_skip(floe_thrift_reader *r, int type) FLOE_WUR;

/*
 * Typed readers for a field value of wire type `type`. When the type does not
 * match, the value is skipped and *present is set to false (the field is
 * treated as absent); otherwise *present = true. present may be NULL.
 */
int floe_thrift_read_bool(floe_thrift_reader *r, int type, bool *v, bool *present) FLOE_WUR;
int floe_thrift_read_i32(floe_thrift_reader *r, int type, int32_t *v, bool *present) FLOE_WUR;
int floe_thrift_read_i64(floe_thrift_reader *r, int type, int64_t *v, bool *present) FLOE_WUR;
int floe_thrift_read_double(floe_thrift_reader *r, int type, double *v, bool *present) FLOE_WUR;
/* Borrow the bytes of a binary/string value (no copy; valid while the input is). */
int floe_thrift_read_binary(floe_thrift_reader *r, int type, const uint8_t **v, size_t *len,
			    bool *present) FLOE_WUR;

/*
 * A list or set header: element wire type and count. The count is checked
 * against the remaining bytes (each element takes at least one byte) and the
 * limits; the list's depth is entered and must be left with
 * floe_thrift_list_end after reading the elements.
 */
int floe_thrift_list_begin(floe_thrift_reader *r, int *elem_type, size_t *count) FLOE_WUR;
void floe_thrift_list_end(floe_thrift_reader *r);

/* Element readers (inside a list: no field header, types fixed by the list). */
int floe_thrift_elem_i32(floe_thrift_reader *r, int32_t *v) FLOE_WUR;
int floe_thrift_elem_i64(floe_thrift_reader *r, int64_t *v) FLOE_WUR;
int floe_thrift_elem_bool(floe_thrift_reader *r, bool *v) FLOE_WUR;
int floe_thrift_elem_binary(floe_thrift_reader *r, const uint8_t **v, size_t *len) FLOE_WUR;

/* ---- writer ---------------------------------------------------------- */

typedef struct floe_thrift_writer {
	floe_buf *out;
	int rc; /* first error, sticky */
	int depth;
	int16_t last_fid[FLOE_THRIFT_MAX_DEPTH + 1];
} floe_thrift_writer;

void floe_thrift_writer_init(floe_thrift_writer *w, floe_buf *out);

/* Field headers + values. */
void floe_thrift_put_bool(floe_thrift_writer *w, int16_t fid, bool v);
void floe_thrift_put_i8(floe_thrift_writer *w, int16_t fid, int8_t v);
void floe_thrift_put_i16(floe_thrift_writer *w, int16_t fid, int16_t v);
void floe_thrift_put_i32(floe_thrift_writer *w, int16_t fid, int32_t v);
void floe_thrift_put_i64(floe_thrift_writer *w, int16_t fid, int64_t v);
void floe_thrift_put_double(floe_thrift_writer *w, int16_t fid, double v);
void floe_thrift_put_binary(floe_thrift_writer *w, int16_t fid, const void *p, size_t n);
void floe_thrift_put_string(floe_thrift_writer *w, int16_t fid, const char *s);
/* A struct-valued field: header, then fields, then floe_thrift_struct_end. */
void floe_thrift_put_struct_begin(floe_thrift_writer *w, int16_t fid);
/* A list-valued field header with n elements of elem_type. */
void floe_thrift_put_list_begin(floe_thrift_writer *w, int16_t fid, int elem_type, size_t n);

/* Begin a top-level struct or a struct element of a list. */
void floe_thrift_struct_begin_w(floe_thrift_writer *w);
/* Write STOP and leave the struct. */
void floe_thrift_struct_end(floe_thrift_writer *w);

/* List elements. */
void floe_thrift_elem_put_i32(floe_thrift_writer *w, int32_t v);
void floe_thrift_elem_put_i64(floe_thrift_writer *w, int64_t v);
void floe_thrift_elem_put_bool(floe_thrift_writer *w, bool v);
void floe_thrift_elem_put_binary(floe_thrift_writer *w, const void *p, size_t n);

#endif
