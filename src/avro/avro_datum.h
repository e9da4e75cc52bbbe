/*
 * avro/avro_datum.h — Avro binary encoding: primitive encoders and decoders, a
 * skipper for any schema, the generic value tree, and the schema-resolving
 * decoder.
 *
 * spec: Avro 1.12 "Binary Encoding" and "Schema Resolution".
 *
 * Decoding is two-step: floe_avro_decoder_new() compares a reader schema with
 * a writer schema once (per file) and builds a plan; floe_avro_decode() then
 * runs the plan over one encoded datum at a time, writing a floe_avro_value
 * tree into a caller arena. Nothing is malloc'd per value; bytes and strings
 * point into the input buffer (they are NOT NUL-terminated).
 *
 * Thread-safety: a decoder (plan) is immutable after creation and may be
 * shared by threads; each thread uses its own cursor and arena.
 */
#ifndef FLOE_AVRO_DATUM_H
#define FLOE_AVRO_DATUM_H

#include "avro/avro_schema.h"
#include "floe/common.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cursor.h"

/* ---- primitive encoders: append to a bounded buffer (FLOE_ENOMEM at its cap) */

int floe_avro_enc_long(floe_buf *b, int64_t v) FLOE_WUR;  /* zig-zag varint */
int floe_avro_enc_int(floe_buf *b, int32_t v) FLOE_WUR;   /* zig-zag varint */
int floe_avro_enc_bool(floe_buf *b, bool v) FLOE_WUR;
int floe_avro_enc_float(floe_buf *b, float v) FLOE_WUR;   /* 4 bytes LE */
int floe_avro_enc_double(floe_buf *b, double v) FLOE_WUR; /* 8 bytes LE */
/* bytes and string: long length, then the bytes */
int floe_avro_enc_bytes(floe_buf *b, const void *p, size_t n) FLOE_WUR;
int floe_avro_enc_string(floe_buf *b, const char *s, size_t n) FLOE_WUR;
/* fixed: the bytes only (the schema gives the size) */
int floe_avro_enc_fixed(floe_buf *b, const void *p, size_t n) FLOE_WUR;
/* union branch index / enum symbol index: a long */
int floe_avro_enc_union(floe_buf *b, size_t branch) FLOE_WUR;
int floe_avro_enc_enum(floe_buf *b, size_t index) FLOE_WUR;
/* Array and map blocks: floe_avro_enc_block_count(b, n) before n items, and
 * floe_avro_enc_block_count(b, 0) to end (an empty array is just the 0). */
int floe_avro_enc_block_count(floe_buf *b, size_t n) FLOE_WUR;

/* ---- primitive decoders: advance the cursor only on success ----------------
 * false on truncation, a varint longer than 10 bytes (a long's bits past the
 * 64th are dropped, as Java does), an int outside int32, a boolean
 * byte other than 0/1, a negative length, or a length larger than what is
 * left. */

bool floe_avro_dec_long(floe_cursor *c, int64_t *v);
bool floe_avro_dec_int(floe_cursor *c, int32_t *v);
bool floe_avro_dec_bool(floe_cursor *c, bool *v);
bool floe_avro_dec_float(floe_cursor *c, float *v);
bool floe_avro_dec_double(floe_cursor *c, double *v);
/* bytes / string: borrows the bytes from the cursor's buffer (no copy). */
bool floe_avro_dec_bytes(floe_cursor *c, const uint8_t **p, size_t *n);
bool floe_avro_dec_fixed(floe_cursor *c, size_t size, const uint8_t **p);
/* A union index checked against n_branches. */
bool floe_avro_dec_union(floe_cursor *c, size_t n_branches, size_t *branch);
/*
 * The header of an array/map block: *count items follow (0 = end of the
 * array). A negative count on the wire is turned into its absolute value and
 * its byte size is returned in *block_bytes (else *block_bytes = -1).
 */
bool floe_avro_dec_block(floe_cursor *c, int64_t *count, int64_t *block_bytes);

/*
 * Skip one datum of schema s. Errors: FLOE_ECORRUPT with the offset.
 * Uses the byte sizes of negative-count blocks when present.
 */
int floe_avro_skip(floe_cursor *c, const floe_avro_schema *s, floe_error *err) FLOE_WUR;

/* ---- generic values --------------------------------------------------------- */

typedef struct floe_avro_value floe_avro_value;
typedef struct floe_avro_map_entry floe_avro_map_entry;

struct floe_avro_value {
	floe_avro_type type; /* never FLOE_AVRO_UNION: the selected branch's type */
	int32_t branch;      /* union branch index in the (reader) schema, -1 when not in a union */
	union {
		bool b;
		int32_t i;  /* INT, and ENUM symbol index */
		int64_t l;
		float f;
		double d;
		struct {
			const uint8_t *p; /* BYTES, STRING, FIXED; not NUL-terminated */
			size_t len;
		} bytes;
		struct {
			floe_avro_value *items; /* RECORD fields (reader order), ARRAY items */
			size_t n;
		} list;
		struct {
			floe_avro_map_entry *entries;
			size_t n;
		} map;
	} u;
};

struct floe_avro_map_entry {
	const uint8_t *key; /* not NUL-terminated */
	size_t key_len;
	floe_avro_value value;
};

/* Accessors that tolerate the wrong type (return NULL / false). */
static inline const floe_avro_value *floe_avro_value_field(const floe_avro_value *rec, size_t i)
{
	return rec && rec->type == FLOE_AVRO_RECORD && i < rec->u.list.n ? &rec->u.list.items[i]
									 : NULL;
}
static inline bool floe_avro_value_is_null(const floe_avro_value *v)
{
	return !v || v->type == FLOE_AVRO_NULL;
}
/* int, long (widened) */
bool floe_avro_value_get_long(const floe_avro_value *v, int64_t *out);
/* A NUL-terminated copy of a string/bytes/fixed value in arena a (NULL on ENOMEM or type). */
char *floe_avro_value_strdup(floe_arena *a, const floe_avro_value *v);

/*
 * Encode a generic value against schema s into b. For a union, v->branch
 * selects the branch when it is valid, else the first branch whose type
 * matches v->type (a record/enum/fixed matches the first branch of that type).
 * Errors: FLOE_EINVAL (value does not match the schema: message names the
 * place), FLOE_ENOMEM.
 */
int floe_avro_encode_value(floe_buf *b, const floe_avro_schema *s, const floe_avro_value *v,
			   floe_error *err) FLOE_WUR;

/*
 * The value of a JSON default for schema s (bytes/fixed: code points 0-255),
 * allocated in a. FLOE_EINVAL when the default does not match.
 */
int floe_avro_value_from_json(floe_avro_value *out, floe_arena *a, const floe_avro_schema *s,
			      const floe_json *j, floe_error *err) FLOE_WUR;

/*
 * Write v (shaped by schema s) as JSON in Avro's JSON conventions without
 * union wrappers: records as objects, maps as objects, bytes and fixed as
 * strings of code points U+0000..U+00FF, enums as their symbol, NaN and
 * infinities as the strings "NaN", "Infinity", "-Infinity". Sticky errors
 * in w (FLOE_EINVAL when v does not match s).
 */
void floe_avro_value_write_json(floe_jw *w, const floe_avro_schema *s, const floe_avro_value *v);

/* ---- resolving decoder ------------------------------------------------------- */

typedef struct floe_avro_decoder floe_avro_decoder;

typedef struct floe_avro_decoder_opts {
	int version;             /* 1 */
	size_t max_items;        /* items in one array/map (all blocks); default 64M */
	size_t max_depth;        /* nesting of values; default 100 */
	bool validate_utf8;      /* check strings are UTF-8; default true */
} floe_avro_decoder_opts;
#define FLOE_AVRO_DECODER_OPTS_INIT {1, 0, 0, true}

/*
 * Build a plan decoding data written with `writer` into values shaped by
 * `reader` (reader NULL = the writer schema itself). Both schemas must
 * outlive the decoder.
 *
 * Record fields are matched by "field-id" when the reader field has one and
 * the writer record carries ids; otherwise by name, then by the reader
 * field's aliases. Writer fields without a reader field are skipped; reader
 * fields without a writer field take their default (an optional field with
 * no default reads as null). Promotions: int->long/float/double,
 * long->float/double, float->double, string<->bytes. Unions on either side
 * are resolved per writer branch; a writer branch with no reader match fails
 * only when such a datum is decoded. Enums map by symbol (unknown symbols
 * take the reader's enum default). Record names are not compared (Iceberg
 * names nested records after field ids).
 *
 * Errors: FLOE_ECORRUPT when the schemas cannot be resolved (message names
 * the field path), FLOE_ENOMEM. The caller owns *out (floe_avro_decoder_free).
 */
int floe_avro_decoder_new(floe_avro_decoder **out, const floe_avro_schema *reader,
			  const floe_avro_schema *writer, const floe_avro_decoder_opts *opts,
			  floe_error *err) FLOE_WUR;
void floe_avro_decoder_free(floe_avro_decoder *d);
const floe_avro_schema *floe_avro_decoder_reader_schema(const floe_avro_decoder *d);

/*
 * Decode one datum from c into *out. Containers (record fields, array items,
 * map entries) are allocated in a; bytes and strings point into c's buffer;
 * fields filled from reader defaults point into the decoder (valid until
 * floe_avro_decoder_free).
 * Errors: FLOE_ECORRUPT ("at offset N: ..." relative to the cursor's buffer),
 * FLOE_ENOMEM (arena cap). On error the cursor position is unspecified.
 */
int floe_avro_decode(floe_avro_value *out, const floe_avro_decoder *d, floe_cursor *c,
		     floe_arena *a, floe_error *err) FLOE_WUR;

/* Smallest encoded size of a datum of s (0 for null and empty records); used
 * to bound counts read from input. */
size_t floe_avro_min_size(const floe_avro_schema *s);

#endif
