/*
 * json.h — a bounded JSON reader (document tree in an arena) and a writer.
 *
 * Used for table metadata, REST payloads, manifest headers, configuration
 * and Avro schemas — all untrusted. The reader enforces depth, size and node
 * limits, validates UTF-8, keeps integers exact (int64) and keeps every
 * number's text so callers can re-read it with other rules (decimals).
 * The per-record JSON decoder of the ingest path is elsewhere (src/stream):
 * it builds no tree.
 *
 * Thread-safety: a parsed tree is immutable and may be shared; a writer is
 * single-threaded.
 */
#ifndef FLOE_JSON_H
#define FLOE_JSON_H

#include "floe/common.h"
#include "util/alloc.h"
#include "util/buf.h"

typedef enum floe_json_type {
	FLOE_JSON_NULL = 0,
	FLOE_JSON_BOOL,
	FLOE_JSON_NUMBER,
	FLOE_JSON_STRING,
	FLOE_JSON_ARRAY,
	FLOE_JSON_OBJECT,
} floe_json_type;

typedef struct floe_json floe_json;
struct floe_json {
	floe_json_type type;
	bool b;         /* BOOL */
	bool is_int;    /* NUMBER: integral text that fits int64 */
	int64_t i;      /* NUMBER when is_int */
	double d;       /* NUMBER (always set) */
	const char *s;  /* STRING: unescaped, NUL-terminated; NUMBER: its text */
	size_t len;     /* STRING/NUMBER: byte length of s; ARRAY/OBJECT: child count */
	const char *key; /* member name when this node is an object member */
	size_t key_len;
	floe_json *child; /* first child (ARRAY/OBJECT) */
	floe_json *next;  /* next sibling */
	/* ARRAY/OBJECT from floe_json_parse: its source text, pointing into the
	 * parser's input (valid while that is; NULL in copies) */
	const char *text;
	size_t text_len;
};

typedef struct floe_json_limits {
	size_t max_depth;  /* default 128 */
	size_t max_nodes;  /* default 16M */
	size_t max_string; /* default 64 MiB */
} floe_json_limits;

/*
 * Parse p[0..n) into a tree allocated in arena a. lim may be NULL (defaults).
 * FLOE_ECORRUPT with "line L column C: ..." on malformed input.
 */
int floe_json_parse(floe_json **out, floe_arena *a, const char *p, size_t n,
		    const floe_json_limits *lim, floe_error *err) FLOE_WUR;

/*
 * The length of the JSON number at p[0..n) under RFC 8259's grammar
 * (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), or 0 when p does not
 * start with one or the number runs on into characters that would continue
 * it ("01", "1.", "1.e5", "0x1"): "+1", ".5", "-" and "1e" are not numbers.
 * Java's Jackson and Flink's JSON format refuse the same.
 */
size_t floe_json_number_len(const char *p, size_t n);

/* Member lookup (NULL when absent or obj is not an object). */
floe_json *floe_json_get(const floe_json *obj, const char *key);
/* i-th array element, or NULL. O(i). */
floe_json *floe_json_at(const floe_json *arr, size_t i);
const char *floe_json_type_name(floe_json_type t);

static inline bool floe_json_is_null(const floe_json *j)
{
	return !j || j->type == FLOE_JSON_NULL;
}

/*
 * Typed member readers. Each returns FLOE_OK, FLOE_ENOTFOUND when the member is
 * absent (or JSON null), or FLOE_ECORRUPT when it has the wrong type; the
 * error message names the key. `what` (may be NULL) names the enclosing
 * object for messages ("snapshot", "schema field").
 */
int floe_json_get_i64(const floe_json *obj, const char *key, int64_t *out, const char *what,
		      floe_error *err) FLOE_WUR;
int floe_json_get_i32(const floe_json *obj, const char *key, int32_t *out, const char *what,
		      floe_error *err) FLOE_WUR;
int floe_json_get_bool(const floe_json *obj, const char *key, bool *out, const char *what,
		       floe_error *err) FLOE_WUR;
int floe_json_get_str(const floe_json *obj, const char *key, const char **out, const char *what,
		      floe_error *err) FLOE_WUR;
/* The same, for a node itself. */
int floe_json_as_i64(const floe_json *j, int64_t *out);
int floe_json_as_i32(const floe_json *j, int32_t *out);

/* Deep copy of a tree into another arena (NULL on ENOMEM or NULL input). */
floe_json *floe_json_copy(floe_arena *a, const floe_json *j);

/* ---- writer --------------------------------------------------------------- */

#define FLOE_JW_MAX_DEPTH 64

typedef struct floe_jw {
	floe_buf *out;
	int rc;     /* sticky: first failure */
	int depth;
	int indent; /* 0 = compact; else spaces per level */
	bool first[FLOE_JW_MAX_DEPTH];
	bool after_key;
} floe_jw;

void floe_jw_init(floe_jw *w, floe_buf *out, int indent);
void floe_jw_obj_begin(floe_jw *w);
void floe_jw_obj_end(floe_jw *w);
void floe_jw_arr_begin(floe_jw *w);
void floe_jw_arr_end(floe_jw *w);
void floe_jw_key(floe_jw *w, const char *key);
void floe_jw_str(floe_jw *w, const char *s);
void floe_jw_strn(floe_jw *w, const char *s, size_t n);
void floe_jw_i64(floe_jw *w, int64_t v);
/* Shortest text that reads back to the same double; NaN/Inf become null. */
void floe_jw_double(floe_jw *w, double v);
void floe_jw_bool(floe_jw *w, bool v);
void floe_jw_null(floe_jw *w);
/* Pre-serialized JSON text (caller guarantees validity). */
void floe_jw_raw(floe_jw *w, const char *json, size_t n);
/* Re-serialize a parsed node. */
void floe_jw_value(floe_jw *w, const floe_json *j);
/* Convenience members. */
void floe_jw_kv_str(floe_jw *w, const char *key, const char *s);
void floe_jw_kv_i64(floe_jw *w, const char *key, int64_t v);
void floe_jw_kv_bool(floe_jw *w, const char *key, bool v);
int floe_jw_finish(floe_jw *w); /* the sticky status; checks nesting is closed */

/* Append s as a JSON string literal (quotes and escapes) to out. */
int floe_json_escape(floe_buf *out, const char *s, size_t n) FLOE_WUR;
/* Shortest round-trip formatting of a double into buf (>= 32 bytes). */
size_t floe_json_format_double(char *buf, size_t cap, double v);

#endif
