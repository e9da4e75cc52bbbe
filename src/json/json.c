/*
 * json.c — bounded JSON reader and writer.
 *
 * DESIGN: recursive descent with an explicit depth limit; nodes come from the
 * caller's arena, so a whole metadata tree is freed in one call. Strings are
 * unescaped into the arena; UTF-8 is validated (overlongs, surrogates and
 * lone \u surrogates are rejected).
 */
#include "json/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/str.h"

typedef struct parser {
	const char *p;
	size_t n;
	size_t off;
	floe_arena *a;
	floe_json_limits lim;
	size_t nodes;
	floe_error *err;
} parser;

static int fail(parser *ps, const char *msg, const char *detail)
{
	size_t line = 1, col = 1;
	for (size_t i = 0; i < ps->off && i < ps->n; i++) {
		if (ps->p[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return floe_error_corrupt(ps->err, "json line %zu column %zu: %s%s", line, col,
			      msg, detail ? detail : "");
}

static void skip_ws(parser *ps)
{
	while (ps->off < ps->n) {
		char c = ps->p[ps->off];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		ps->off++;
	}
}

static floe_json *new_node(parser *ps, floe_json_type t)
{
	floe_json *j;
	if (++ps->nodes > ps->lim.max_nodes)
		return NULL;
	j = floe_arena_calloc(ps->a, 1, sizeof(*j));
	if (j)
		j->type = t;
	return j;
}

/* Length of a valid UTF-8 sequence at p (max n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && p[1] < 0xa0)
			return 0; /* overlong */
		if (c == 0xed && p[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && p[1] < 0x90)
			return 0;
		if (c == 0xf4 && p[1] >= 0x90)
			return 0;
		return 4;
	}
	return 0;
}

static int hex4(const char *p, unsigned *v)
{
	unsigned x = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			x |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*v = x;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Parse a string literal at ps->off (pointing at the opening quote). */
static int parse_string(parser *ps, const char **out, size_t *out_len)
{
	size_t start = ++ps->off, end = start;
	bool escapes = false;
	/* first pass: find the end, validate */
	while (end < ps->n && ps->p[end] != '"') {
		unsigned char c = (unsigned char)ps->p[end];
		if (c == '\\') {
			escapes = true;
			end += 2;
			continue;
		}
		if (c < 0x20) {
			ps->off = end;
			return fail(ps, "control character in string", NULL);
		}
		if (c >= 0x80) {
			size_t k = utf8_len((const unsigned char *)ps->p + end, ps->n - end);
			if (!k) {
				ps->off = end;
				return fail(ps, "invalid UTF-8 in string", NULL);
			}
			end += k;
			continue;
		}
		end++;
	}
	if (end >= ps->n) {
		ps->off = start - 1;
		return fail(ps, "unterminated string", NULL);
	}
	if (end - start > ps->lim.max_string)
		return fail(ps, "string longer than the limit", NULL);
	char *o = floe_arena_alloc(ps->a, end - start + 1);
	if (!o)
		return floe_error_oomf(ps->err, "out of memory parsing json");
	if (!escapes) {
		memcpy(o, ps->p + start, end - start);
		o[end - start] = 0;
		*out = o;
		*out_len = end - start;
		ps->off = end + 1;
		return FLOE_OK;
	}
	size_t w = 0, i = start;
	while (i < end) {
		char c = ps->p[i];
		if (c != '\\') {
			o[w++] = c;
			i++;
			continue;
		}
		ps->off = i;
		if (i + 1 >= end)
			return fail(ps, "bad escape", NULL);
		c = ps->p[i + 1];
		i += 2;
		switch (c) {
		case '"': o[w++] = '"'; break;
		case '\\': o[w++] = '\\'; break;
		case '/': o[w++] = '/'; break;
		case 'b': o[w++] = '\b'; break;
		case 'f': o[w++] = '\f'; break;
		case 'n': o[w++] = '\n'; break;
		case 'r': o[w++] = '\r'; break;
		case 't': o[w++] = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (i + 4 > end || hex4(ps->p + i, &cp))
				return fail(ps, "bad \\u escape", NULL);
			i += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (i + 6 > end || ps->p[i] != '\\' || ps->p[i + 1] != 'u' ||
				    hex4(ps->p + i + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return fail(ps, "unpaired surrogate in \\u escape", NULL);
				i += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				return fail(ps, "unpaired surrogate in \\u escape", NULL);
			}
			/* a 6-byte escape always yields at most 4 bytes: fits in place */
			w += put_utf8(o + w, cp);
			break;
		}
		default: return fail(ps, "bad escape", NULL);
		}
	}
	o[w] = 0;
	*out = o;
	*out_len = w;
	ps->off = end + 1;
	return FLOE_OK;
}

size_t floe_json_number_len(const char *p, size_t n)
{
	/* spec: RFC 8259 section 6: number = [ "-" ] int [ frac ] [ exp ];
	 * int = "0" / digit1-9 *DIGIT; frac = "." 1*DIGIT;
	 * exp = ("e" / "E") [ "-" / "+" ] 1*DIGIT */
	size_t i = 0;
	if (i < n && p[i] == '-')
		i++;
	if (i >= n || p[i] < '0' || p[i] > '9')
		return 0;
	if (p[i] == '0') {
		i++;
		if (i < n && p[i] >= '0' && p[i] <= '9')
			return 0; /* a leading zero */
	} else {
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	if (i < n && p[i] == '.') {
		i++;
		if (i >= n || p[i] < '0' || p[i] > '9')
			return 0;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i >= n || p[i] < '0' || p[i] > '9')
			return 0;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	/* a number runs into nothing that could continue it ("1.e5", "0x1", "1e5.0") */
	if (i < n && ((p[i] >= '0' && p[i] <= '9') || p[i] == '.' || p[i] == 'e' ||
		      p[i] == 'E' || p[i] == '+' || p[i] == '-' || p[i] == 'x' || p[i] == 'X'))
		return 0;
	return i;
}

static int parse_number(parser *ps, floe_json *j)
{
	size_t s = ps->off;
	size_t len = floe_json_number_len(ps->p + s, ps->n - s);
	if (!len)
		return fail(ps, "invalid number (RFC 8259: no leading zeros, '+', bare '.' or "
				"empty exponent)",
			    NULL);
	size_t i = s + len;
	bool integral = true;
	for (size_t k = s; k < i; k++)
		if (ps->p[k] == '.' || ps->p[k] == 'e' || ps->p[k] == 'E')
			integral = false;
	if (i - s > 400)
		return fail(ps, "number too long", NULL);
	char *t = floe_arena_strndup(ps->a, ps->p + s, i - s);
	if (!t)
		return floe_error_oomf(ps->err, "out of memory parsing json");
	j->s = t;
	j->len = i - s;
	j->is_int = integral && floe_parse_i64(t, i - s, &j->i);
	if (integral && !j->is_int && t[0] != '-') {
		/* above INT64_MAX but within uint64: some writers put unsigned 64-bit ids
		 * in metadata; keep the bits (Java would reject these) */
		uint64_t u;
		if (floe_parse_u64(t, i - s, &u)) {
			j->is_int = true;
			j->i = (int64_t)u;
		}
	}
	/* an int64 converts exactly as strtod would round it; strtod only for
	 * the rest (it dominated parsing metadata full of ids) */
	j->d = j->is_int && !(integral && t[0] != '-' && j->i < 0) ? (double)j->i : strtod(t, NULL);
	ps->off = i;
	return FLOE_OK;
}

static int parse_value(parser *ps, floe_json **out, size_t depth);

static int parse_container(parser *ps, floe_json *j, size_t depth, bool is_obj)
{
	floe_json *last = NULL;
	char close = is_obj ? '}' : ']';
	size_t start = ps->off;
	int rc;
	ps->off++; /* [ or { */
	skip_ws(ps);
	j->text = ps->p + start;
	if (ps->off < ps->n && ps->p[ps->off] == close) {
		ps->off++;
		j->text_len = ps->off - start;
		return FLOE_OK;
	}
	for (;;) {
		const char *key = NULL;
		size_t klen = 0;
		floe_json *v;
		skip_ws(ps);
		if (is_obj) {
			if (ps->off >= ps->n || ps->p[ps->off] != '"')
				return fail(ps, "expected a member name", NULL);
			if ((rc = parse_string(ps, &key, &klen)))
				return rc;
			skip_ws(ps);
			if (ps->off >= ps->n || ps->p[ps->off] != ':')
				return fail(ps, "expected ':'", NULL);
			ps->off++;
		}
		if ((rc = parse_value(ps, &v, depth + 1)))
			return rc;
		v->key = key;
		v->key_len = klen;
		if (last)
			last->next = v;
		else
			j->child = v;
		last = v;
		j->len++;
		skip_ws(ps);
		if (ps->off >= ps->n)
			return fail(ps, "unexpected end of input in an ", is_obj ? "object" : "array");
		if (ps->p[ps->off] == ',') {
			ps->off++;
			continue;
		}
		if (ps->p[ps->off] == close) {
			ps->off++;
			j->text_len = ps->off - start;
			return FLOE_OK;
		}
		return fail(ps, "expected ',' or ", is_obj ? "'}'" : "']'");
	}
}

static int parse_value(parser *ps, floe_json **out, size_t depth)
{
	floe_json *j;
	int rc;
	if (depth > ps->lim.max_depth)
		return fail(ps, "nesting deeper than the limit", NULL);
	skip_ws(ps);
	if (ps->off >= ps->n)
		return fail(ps, "unexpected end of input", NULL);
	char c = ps->p[ps->off];
	switch (c) {
	case '{':
	case '[':
		j = new_node(ps, c == '{' ? FLOE_JSON_OBJECT : FLOE_JSON_ARRAY);
		if (!j)
			goto nomem;
		if ((rc = parse_container(ps, j, depth, c == '{')))
			return rc;
		break;
	case '"':
		j = new_node(ps, FLOE_JSON_STRING);
		if (!j)
			goto nomem;
		if ((rc = parse_string(ps, &j->s, &j->len)))
			return rc;
		break;
	case 't':
	case 'f':
	case 'n': {
		const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
		size_t ln = strlen(lit);
		if (ps->n - ps->off < ln || memcmp(ps->p + ps->off, lit, ln) != 0)
			return fail(ps, "invalid literal", NULL);
		j = new_node(ps, c == 'n' ? FLOE_JSON_NULL : FLOE_JSON_BOOL);
		if (!j)
			goto nomem;
		j->b = c == 't';
		ps->off += ln;
		break;
	}
	default:
		if (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')) {
			j = new_node(ps, FLOE_JSON_NUMBER);
			if (!j)
				goto nomem;
			if ((rc = parse_number(ps, j)))
				return rc;
			break;
		}
		return fail(ps, "unexpected character", NULL);
	}
	*out = j;
	return FLOE_OK;
nomem:
	if (ps->nodes > ps->lim.max_nodes)
		return fail(ps, "more nodes than the limit", NULL);
	return floe_error_oomf(ps->err, "out of memory parsing json");
}

int floe_json_parse(floe_json **out, floe_arena *a, const char *p, size_t n,
		    const floe_json_limits *lim, floe_error *err)
{
	parser ps = {p, n, 0, a, {128, (size_t)16 << 20, (size_t)64 << 20}, 0, err};
	floe_json *j;
	int rc;
	if (lim) {
		if (lim->max_depth)
			ps.lim.max_depth = lim->max_depth;
		if (lim->max_nodes)
			ps.lim.max_nodes = lim->max_nodes;
		if (lim->max_string)
			ps.lim.max_string = lim->max_string;
	}
	/* a UTF-8 byte-order mark is tolerated */
	if (n >= 3 && (unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbb &&
	    (unsigned char)p[2] == 0xbf)
		ps.off = 3;
	if ((rc = parse_value(&ps, &j, 0)))
		return rc;
	skip_ws(&ps);
	if (ps.off != n)
		return fail(&ps, "trailing characters after the JSON value", NULL);
	*out = j;
	return FLOE_OK;
}

floe_json *floe_json_get(const floe_json *obj, const char *key)
{
	size_t kl;
	if (!obj || obj->type != FLOE_JSON_OBJECT)
		return NULL;
	kl = strlen(key);
	for (floe_json *c = obj->child; c; c = c->next)
		if (c->key_len == kl && memcmp(c->key, key, kl) == 0)
			return c;
	return NULL;
}

floe_json *floe_json_at(const floe_json *arr, size_t i)
{
	floe_json *c;
	if (!arr || arr->type != FLOE_JSON_ARRAY)
		return NULL;
	for (c = arr->child; c && i > 0; c = c->next)
		i--;
	return c;
}

floe_json *floe_json_copy(floe_arena *a, const floe_json *j)
{
	floe_json *c, *last = NULL;
	if (!j)
		return NULL;
	c = floe_arena_memdup(a, j, sizeof(*j));
	if (!c)
		return NULL;
	c->next = NULL;
	c->child = NULL;
	c->text = NULL; /* the source text is the parser's, not the copy's */
	c->text_len = 0;
	if (j->key && !(c->key = floe_arena_strndup(a, j->key, j->key_len)))
		return NULL;
	if (j->s && !(c->s = floe_arena_strndup(a, j->s, j->len)))
		return NULL;
	for (const floe_json *k = j->child; k; k = k->next) {
		floe_json *kc = floe_json_copy(a, k);
		if (!kc)
			return NULL;
		if (last)
			last->next = kc;
		else
			c->child = kc;
		last = kc;
	}
	return c;
}

const char *floe_json_type_name(floe_json_type t)
{
	switch (t) {
	case FLOE_JSON_NULL: return "null";
	case FLOE_JSON_BOOL: return "boolean";
	case FLOE_JSON_NUMBER: return "number";
	case FLOE_JSON_STRING: return "string";
	case FLOE_JSON_ARRAY: return "array";
	case FLOE_JSON_OBJECT: return "object";
	}
	return "?";
}

static int wrong_type(const char *key, const char *what, const char *want, const floe_json *j,
		      floe_error *err)
{
	return floe_error_corrupt(err, "%s%s'%s' must be %s, found %s", what ? what : "",
			      what ? ": " : "", key, want, floe_json_type_name(j->type));
}

int floe_json_as_i64(const floe_json *j, int64_t *out)
{
	if (!j || j->type != FLOE_JSON_NUMBER || !j->is_int)
		return FLOE_ECORRUPT;
	*out = j->i;
	return FLOE_OK;
}

int floe_json_as_i32(const floe_json *j, int32_t *out)
{
	if (!j || j->type != FLOE_JSON_NUMBER || !j->is_int || j->i < INT32_MIN || j->i > INT32_MAX)
		return FLOE_ECORRUPT;
	*out = (int32_t)j->i;
	return FLOE_OK;
}

int floe_json_get_i64(const floe_json *obj, const char *key, int64_t *out, const char *what,
		      floe_error *err)
{
	floe_json *j = floe_json_get(obj, key);
	if (floe_json_is_null(j))
		return floe_error_set(err, FLOE_ENOTFOUND, "%s%s'%s' is missing", what ? what : "",
				      what ? ": " : "", key);
	if (floe_json_as_i64(j, out))
		return wrong_type(key, what, "an integer", j, err);
	return FLOE_OK;
}

int floe_json_get_i32(const floe_json *obj, const char *key, int32_t *out, const char *what,
		      floe_error *err)
{
	floe_json *j = floe_json_get(obj, key);
	if (floe_json_is_null(j))
		return floe_error_set(err, FLOE_ENOTFOUND, "%s%s'%s' is missing", what ? what : "",
				      what ? ": " : "", key);
	if (floe_json_as_i32(j, out))
		return wrong_type(key, what, "a 32-bit integer", j, err);
	return FLOE_OK;
}

int floe_json_get_bool(const floe_json *obj, const char *key, bool *out, const char *what,
		       floe_error *err)
{
	floe_json *j = floe_json_get(obj, key);
	if (floe_json_is_null(j))
		return floe_error_set(err, FLOE_ENOTFOUND, "%s%s'%s' is missing", what ? what : "",
				      what ? ": " : "", key);
	if (j->type != FLOE_JSON_BOOL)
		return wrong_type(key, what, "a boolean", j, err);
	*out = j->b;
	return FLOE_OK;
}

int floe_json_get_str(const floe_json *obj, const char *key, const char **out, const char *what,
		      floe_error *err)
{
	floe_json *j = floe_json_get(obj, key);
	if (floe_json_is_null(j))
		return floe_error_set(err, FLOE_ENOTFOUND, "%s%s'%s' is missing", what ? what : "",
				      what ? ": " : "", key);
	if (j->type != FLOE_JSON_STRING)
		return wrong_type(key, what, "a string", j, err);
	*out = j->s;
	return FLOE_OK;
}

/* ---- writer ---------------------------------------------------------------- */

/* Bytes that need an escape inside a JSON string: control characters, '"'
 * and '\\'. */
static const uint8_t NEEDS_ESCAPE[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
};

int floe_json_escape(floe_buf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	/* the common case, nothing to escape: one reservation, one copy */
	size_t first = 0;
	while (first < n && !NEEDS_ESCAPE[(unsigned char)s[first]])
		first++;
	int rc = floe_buf_reserve(out, n + 2);
	if (rc)
		return rc;
	uint8_t *d = out->data + out->len;
	d[0] = '"';
	memcpy(d + 1, s, first);
	out->len += first + 1;
	if (first == n) {
		out->data[out->len++] = '"';
		out->data[out->len] = 0;
		return FLOE_OK;
	}
	size_t run = first;
	for (size_t i = first; i < n && !rc; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!NEEDS_ESCAPE[c])
			continue;
		if (i > run)
			rc = floe_buf_append(out, s + run, i - run);
		run = i + 1;
		if (rc)
			break;
		switch (c) {
		case '"': rc = floe_buf_append(out, "\\\"", 2); break;
		case '\\': rc = floe_buf_append(out, "\\\\", 2); break;
		case '\n': rc = floe_buf_append(out, "\\n", 2); break;
		case '\r': rc = floe_buf_append(out, "\\r", 2); break;
		case '\t': rc = floe_buf_append(out, "\\t", 2); break;
		case '\b': rc = floe_buf_append(out, "\\b", 2); break;
		case '\f': rc = floe_buf_append(out, "\\f", 2); break;
		default: {
			char t[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			rc = floe_buf_append(out, t, 6);
		}
		}
	}
	if (!rc && n > run)
		rc = floe_buf_append(out, s + run, n - run);
	if (!rc)
		rc = floe_buf_putc(out, '"');
	return rc;
}

size_t floe_json_format_double(char *buf, size_t cap, double v)
{
	int n = 0;
	if (isnan(v) || isinf(v))
		return (size_t)snprintf(buf, cap, "null");
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(buf, cap, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* keep it recognisably a float: 1 -> 1.0 (as Java prints doubles) */
	if (n > 0 && (size_t)n + 2 < cap && !strpbrk(buf, ".eEn")) {
		buf[n++] = '.';
		buf[n++] = '0';
		buf[n] = 0;
	}
	return n < 0 ? 0 : (size_t)n;
}

void floe_jw_init(floe_jw *w, floe_buf *out, int indent)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->indent = indent;
	w->first[0] = true;
}

static void jw_put(floe_jw *w, const char *s, size_t n)
{
	if (!w->rc)
		w->rc = floe_buf_append(w->out, s, n);
}

static void jw_newline(floe_jw *w)
{
	if (!w->indent)
		return;
	jw_put(w, "\n", 1);
	for (int i = 0; i < w->depth * w->indent; i++)
		jw_put(w, " ", 1);
}

/* Called before any value or key: separators and indentation. */
static void jw_sep(floe_jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (!w->first[w->depth])
			jw_put(w, ",", 1);
		jw_newline(w);
	}
	w->first[w->depth] = false;
}

static void jw_open(floe_jw *w, char c)
{
	jw_sep(w);
	jw_put(w, &c, 1);
	if (w->depth + 1 >= FLOE_JW_MAX_DEPTH) {
		w->rc = w->rc ? w->rc : FLOE_EINVAL;
		return;
	}
	w->depth++;
	w->first[w->depth] = true;
}

static void jw_close(floe_jw *w, char c)
{
	bool empty;
	if (w->depth <= 0) {
		w->rc = w->rc ? w->rc : FLOE_EINVAL;
		return;
	}
	empty = w->first[w->depth];
	w->depth--;
	if (!empty)
		jw_newline(w);
	jw_put(w, &c, 1);
}

void floe_jw_obj_begin(floe_jw *w)
{
	jw_open(w, '{');
}
void floe_jw_obj_end(floe_jw *w)
{
	jw_close(w, '}');
}
void floe_jw_arr_begin(floe_jw *w)
{
	jw_open(w, '[');
}
void floe_jw_arr_end(floe_jw *w)
{
	jw_close(w, ']');
}

void floe_jw_key(floe_jw *w, const char *key)
{
	jw_sep(w);
	if (!w->rc)
		w->rc = floe_json_escape(w->out, key, strlen(key));
	jw_put(w, w->indent ? ": " : ":", w->indent ? 2 : 1);
	w->after_key = true;
}

void floe_jw_strn(floe_jw *w, const char *s, size_t n)
{
	jw_sep(w);
	if (!w->rc)
		w->rc = floe_json_escape(w->out, s, n);
}

void floe_jw_str(floe_jw *w, const char *s)
{
	if (!s) {
		floe_jw_null(w);
		return;
	}
	floe_jw_strn(w, s, strlen(s));
}

void floe_jw_i64(floe_jw *w, int64_t v)
{
	char t[24];
	size_t n = 0;
	/* digits backwards (no printf: metadata holds tens of thousands) */
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	char *e = t + sizeof(t);
	do {
		*--e = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--e = '-';
	n = (size_t)(t + sizeof(t) - e);
	jw_sep(w);
	jw_put(w, e, n);
}

void floe_jw_double(floe_jw *w, double v)
{
	char t[40];
	size_t n = floe_json_format_double(t, sizeof(t), v);
	jw_sep(w);
	jw_put(w, t, n);
}

void floe_jw_bool(floe_jw *w, bool v)
{
	jw_sep(w);
	jw_put(w, v ? "true" : "false", v ? 4 : 5);
}

void floe_jw_null(floe_jw *w)
{
	jw_sep(w);
	jw_put(w, "null", 4);
}

void floe_jw_raw(floe_jw *w, const char *json, size_t n)
{
	jw_sep(w);
	jw_put(w, json, n);
}

void floe_jw_value(floe_jw *w, const floe_json *j)
{
	if (!j) {
		floe_jw_null(w);
		return;
	}
	switch (j->type) {
	case FLOE_JSON_NULL: floe_jw_null(w); break;
	case FLOE_JSON_BOOL: floe_jw_bool(w, j->b); break;
	case FLOE_JSON_NUMBER: floe_jw_raw(w, j->s, j->len); break;
	case FLOE_JSON_STRING: floe_jw_strn(w, j->s, j->len); break;
	case FLOE_JSON_ARRAY:
		floe_jw_arr_begin(w);
		for (floe_json *c = j->child; c; c = c->next)
			floe_jw_value(w, c);
		floe_jw_arr_end(w);
		break;
	case FLOE_JSON_OBJECT:
		floe_jw_obj_begin(w);
		for (floe_json *c = j->child; c; c = c->next) {
			jw_sep(w);
			if (!w->rc)
				w->rc = floe_json_escape(w->out, c->key, c->key_len);
			jw_put(w, w->indent ? ": " : ":", w->indent ? 2 : 1);
			w->after_key = true;
			floe_jw_value(w, c);
		}
		floe_jw_obj_end(w);
		break;
	}
}

void floe_jw_kv_str(floe_jw *w, const char *key, const char *s)
{
	floe_jw_key(w, key);
	floe_jw_str(w, s);
}

void floe_jw_kv_i64(floe_jw *w, const char *key, int64_t v)
{
	floe_jw_key(w, key);
	floe_jw_i64(w, v);
}

void floe_jw_kv_bool(floe_jw *w, const char *key, bool v)
{
	floe_jw_key(w, key);
	floe_jw_bool(w, v);
}

int floe_jw_finish(floe_jw *w)
{
	if (!w->rc && w->depth != 0)
		w->rc = FLOE_EINVAL;
	return w->rc;
}
