/*
 * str.h — string helpers: strict number parsing, slices, encodings
 * (Java form-URL, base64, hex) and an ordered string->string map used for
 * properties and summaries.
 */
#ifndef FLOE_UTIL_STR_H
#define FLOE_UTIL_STR_H

#include "floe/common.h"
#include "util/alloc.h"
#include "util/buf.h"

/* Strict parsing: the whole slice must be a number, no spaces. */
bool floe_parse_i64(const char *s, size_t n, int64_t *out);
bool floe_parse_i32(const char *s, size_t n, int32_t *out);
bool floe_parse_u64(const char *s, size_t n, uint64_t *out);
bool floe_parse_double(const char *s, size_t n, double *out);
/* floe_parse_duration_ms and floe_parse_size are public (floe/common.h). */

bool floe_str_eq(const char *a, const char *b);   /* NULL-safe */
bool floe_str_ieq(const char *a, const char *b);  /* ASCII case-insensitive */
bool floe_str_startswith(const char *s, const char *prefix);
bool floe_str_endswith(const char *s, const char *suffix);
bool floe_slice_eq(const char *s, size_t n, const char *lit);
/* Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF). */
bool floe_utf8_valid(const void *s, size_t n);

/* Java URLEncoder (HTML form): keep A-Za-z0-9 . - * _, space -> +, else %XX. */
int floe_urlencode_form(floe_buf *out, const char *s, size_t n) FLOE_WUR;
/* Percent-encode for URL paths (RFC 3986 unreserved kept). */
int floe_urlencode_path(floe_buf *out, const char *s, size_t n) FLOE_WUR;

int floe_base64_encode(floe_buf *out, const uint8_t *p, size_t n) FLOE_WUR;
/* Returns FLOE_ECORRUPT on malformed input. */
int floe_base64_decode(floe_buf *out, const char *s, size_t n) FLOE_WUR;
int floe_hex_encode(floe_buf *out, const uint8_t *p, size_t n) FLOE_WUR;
int floe_hex_decode(floe_buf *out, const char *s, size_t n) FLOE_WUR;

/* Edit distance (for "did you mean" messages). */
size_t floe_levenshtein(const char *a, const char *b);

/*
 * Ordered string map (insertion order kept; small: linear lookup). Strings
 * are copied into the map's own storage.
 */
typedef struct floe_strmap_entry {
	char *key;
	char *value;
} floe_strmap_entry;

typedef struct floe_strmap {
	floe_strmap_entry *items;
	size_t len, cap;
} floe_strmap;

void floe_strmap_init(floe_strmap *m);
void floe_strmap_reset(floe_strmap *m);
const char *floe_strmap_get(const floe_strmap *m, const char *key);
/* Replace or append. */
int floe_strmap_set(floe_strmap *m, const char *key, const char *value) FLOE_WUR;
int floe_strmap_setf(floe_strmap *m, const char *key, const char *fmt, ...) FLOE_PRINTF(3, 4)
	FLOE_WUR;
bool floe_strmap_remove(floe_strmap *m, const char *key);
int floe_strmap_copy(floe_strmap *dst, const floe_strmap *src) FLOE_WUR;
/* Typed reads with defaults; a malformed value yields the default. */
int64_t floe_strmap_get_i64(const floe_strmap *m, const char *key, int64_t dflt);
bool floe_strmap_get_bool(const floe_strmap *m, const char *key, bool dflt);

#endif
