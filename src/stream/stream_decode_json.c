/*
 * stream_decode_json.c — the schema-directed JSON-lines decoder.
 *
 * DESIGN: one pass over the record's bytes with the schema as the guide.
 * Object members are looked up in the struct's field index (the key order
 * of the previous record is tried first: producers repeat it), values are
 * parsed by the target column's type and appended in place; strings
 * without escapes are copied once, from the input into the column. Unknown
 * members are skipped by a validating skipper. Numbers of at most 18
 * digits without an exponent going to long, int or double columns are
 * validated and converted in the pass that scans them (the common case);
 * the rest are scanned, checked against RFC 8259, then converted. Nothing
 * is allocated per record except column growth. On a bad value the top-level columns are
 * truncated to where the record began.
 *
 * spec: RFC 8259 (JSON). Strings must be valid UTF-8; \u escapes (with
 * surrogate pairs) are decoded; raw control characters are rejected.
 */
#include <stdio.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "json/json.h"
#include "stream/stream_decode.h"

typedef struct jcur {
	const char *p, *end, *start;
} jcur;

/* 1 for bytes that end the fast string scan: '"', '\\', and controls. */
static const uint8_t str_stop[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
};

void stream_json_dec_init(stream_json_dec *d, const stream_coerce_opts *opts)
{
	memset(d, 0, sizeof(*d));
	if (opts)
		d->opts = *opts;
	floe_buf_init(&d->scratch, (size_t)64 << 20);
}

void stream_json_dec_reset(stream_json_dec *d)
{
	floe_buf_reset(&d->scratch);
}

static inline void skip_ws(jcur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static int syntax(stream_json_dec *d, jcur *c, const char *what)
{
	d->err_at = (size_t)(c->p - c->start);
	if (c->p >= c->end)
		stream_reason_set(&d->why, "JSON syntax error at byte %zu: %s (end of record)",
				  d->err_at, what);
	else
		stream_reason_set(&d->why, "JSON syntax error at byte %zu: %s", d->err_at, what);
	return FLOE_EINVAL;
}

/* Prefix the reason with a field name: "a: why" then "b.a: why". */
static void prefix_path(stream_json_dec *d, const char *name, size_t n)
{
	stream_reason_prefix(&d->why, name, n, d->pathed ? "." : ": ");
	d->pathed = true;
}

static int hexdig(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static bool read_u4(const char *p, const char *end, uint32_t *out)
{
	uint32_t v = 0;
	if (end - p < 4)
		return false;
	for (int i = 0; i < 4; i++) {
		int h = hexdig(p[i]);
		if (h < 0)
			return false;
		v = v << 4 | (uint32_t)h;
	}
	*out = v;
	return true;
}

/*
 * Scan a string starting after its opening quote. On return c->p is past
 * the closing quote; *raw and *raw_n give the raw content; *esc tells whether it
 * has escapes; *hi whether it has bytes >= 0x80.
 */
static int scan_string(stream_json_dec *d, jcur *c, const char **raw, size_t *raw_n, bool *esc,
		       bool *hi)
{
	const char *s = c->p;
	const uint8_t *p = (const uint8_t *)c->p, *end = (const uint8_t *)c->end;
	uint8_t acc = 0;
	*esc = false;
	for (;;) {
#if defined(__SSE2__)
		/* 16 bytes at a time: stop at '"', '\\' or a control character */
		{
			const __m128i quote = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
			const __m128i ctl = _mm_set1_epi8(0x1F);
			int hib = 0;
			while (end - p >= 16) {
				__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
				__m128i m = _mm_or_si128(
					_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bs)),
					_mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
				int mask = _mm_movemask_epi8(m);
				if (mask) {
					int k = __builtin_ctz((unsigned)mask);
					hib |= _mm_movemask_epi8(v) & ((1 << k) - 1);
					p += k;
					break;
				}
				hib |= _mm_movemask_epi8(v);
				p += 16;
			}
			if (hib)
				acc |= 0x80;
		}
#else
		/* 8 bytes at a time while none is '"', '\\' or a control */
		while (end - p >= 8) {
			uint64_t w, q, b, c;
			memcpy(&w, p, 8);
			q = w ^ UINT64_C(0x2222222222222222);
			b = w ^ UINT64_C(0x5C5C5C5C5C5C5C5C);
			q = (q - UINT64_C(0x0101010101010101)) & ~q;
			b = (b - UINT64_C(0x0101010101010101)) & ~b;
			c = (w - UINT64_C(0x2020202020202020)) & ~w;
			if ((q | b | c) & UINT64_C(0x8080808080808080))
				break;
			acc |= (uint8_t)(((w & UINT64_C(0x8080808080808080)) != 0) << 7);
			p += 8;
		}
#endif
		while (p < end && !str_stop[*p]) {
			acc |= *p;
			p++;
		}
		if (p >= end) {
			c->p = (const char *)p;
			return syntax(d, c, "unterminated string");
		}
		if (*p == '"')
			break;
		if (*p == '\\') {
			*esc = true;
			if (p + 1 >= end) {
				c->p = (const char *)p;
				return syntax(d, c, "unterminated string");
			}
			p += 2;
			continue;
		}
		c->p = (const char *)p;
		return syntax(d, c, "control character in a string");
	}
	*raw = s;
	*raw_n = (size_t)((const char *)p - s);
	*hi = (acc & 0x80) != 0;
	c->p = (const char *)p + 1;
	return FLOE_OK;
}

/* Decode escapes of raw[0..n) into out (capacity >= n); *out_n gets the
 * length. */
static bool unescape(const char *raw, size_t n, uint8_t *out, size_t *out_n)
{
	size_t k = 0;
	const char *p = raw, *end = raw + n;
	while (p < end) {
		if (*p != '\\') {
			out[k++] = (uint8_t)*p++;
			continue;
		}
		p++;
		char e = *p++;
		switch (e) {
		case '"':
		case '\\':
		case '/':
			out[k++] = (uint8_t)e;
			break;
		case 'b':
			out[k++] = '\b';
			break;
		case 'f':
			out[k++] = '\f';
			break;
		case 'n':
			out[k++] = '\n';
			break;
		case 'r':
			out[k++] = '\r';
			break;
		case 't':
			out[k++] = '\t';
			break;
		case 'u': {
			uint32_t cp, lo;
			if (!read_u4(p, end, &cp))
				return false;
			p += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
				    !read_u4(p + 2, end, &lo) || lo < 0xDC00 || lo > 0xDFFF)
					return false;
				p += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				return false;
			}
			/* \uXXXX is 6 input bytes, at most 3 output bytes; a pair is 12 -> 4 */
			if (cp < 0x80) {
				out[k++] = (uint8_t)cp;
			} else if (cp < 0x800) {
				out[k++] = (uint8_t)(0xC0 | cp >> 6);
				out[k++] = (uint8_t)(0x80 | (cp & 0x3F));
			} else if (cp < 0x10000) {
				out[k++] = (uint8_t)(0xE0 | cp >> 12);
				out[k++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
				out[k++] = (uint8_t)(0x80 | (cp & 0x3F));
			} else {
				out[k++] = (uint8_t)(0xF0 | cp >> 18);
				out[k++] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
				out[k++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
				out[k++] = (uint8_t)(0x80 | (cp & 0x3F));
			}
			break;
		}
		default:
			return false;
		}
	}
	*out_n = k;
	return true;
}

/* A string's content as text: zero-copy, or unescaped into the scratch. */
static int string_text(stream_json_dec *d, jcur *c, const char *raw, size_t n, bool esc, bool hi,
		       const char **s, size_t *sn)
{
	if (!esc) {
		if (hi && !stream_utf8_valid((const uint8_t *)raw, n)) {
			stream_reason_set(&d->why, "string is not valid UTF-8");
			return FLOE_EINVAL;
		}
		*s = raw;
		*sn = n;
		return FLOE_OK;
	}
	floe_buf_clear(&d->scratch);
	uint8_t *out = floe_buf_extend(&d->scratch, n + 1);
	if (!out)
		return FLOE_ENOMEM;
	if (!unescape(raw, n, out, sn))
		return syntax(d, c, "bad escape in a string");
	if (!stream_utf8_valid(out, *sn)) {
		stream_reason_set(&d->why, "string is not valid UTF-8");
		return FLOE_EINVAL;
	}
	*s = (const char *)out;
	return FLOE_OK;
}

static int skip_value(stream_json_dec *d, jcur *c, int depth);

/* Is the member name at p (after its opening quote) exactly k's name? */
static inline bool key_is(const char *p, const char *end, const stream_col *k)
{
	size_t n = k->name_len;
	if ((size_t)(end - p) <= n || p[n] != '"')
		return false;
	if (n <= 16 && end - p >= 16) {
		uint64_t a, b, m0, m1;
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		m0 = n >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * n)) - 1;
		m1 = n >= 16 ? ~UINT64_C(0) : n <= 8 ? 0 : (UINT64_C(1) << (8 * (n - 8))) - 1;
		return ((a ^ k->name8[0]) & m0) == 0 && ((b ^ k->name8[1]) & m1) == 0;
	}
	return memcmp(p, k->name, n) == 0;
}

static int skip_number(stream_json_dec *d, jcur *c)
{
	const char *s = c->p;
	while (c->p < c->end) {
		char ch = *c->p;
		if ((ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.' || ch == 'e' ||
		    ch == 'E')
			c->p++;
		else
			break;
	}
	if (floe_json_number_len(s, (size_t)(c->p - s)) != (size_t)(c->p - s)) {
		c->p = s;
		return syntax(d, c, "bad number (RFC 8259)");
	}
	return FLOE_OK;
}

static int literal(stream_json_dec *d, jcur *c, const char *lit, size_t n)
{
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return syntax(d, c, "unexpected character");
	c->p += n;
	return FLOE_OK;
}

static int skip_value(stream_json_dec *d, jcur *c, int depth)
{
	int rc;
	const char *raw;
	size_t rn;
	bool esc, hi;
	if (depth > STREAM_JSON_MAX_DEPTH)
		return syntax(d, c, "nesting too deep");
	skip_ws(c);
	if (c->p >= c->end)
		return syntax(d, c, "expected a value");
	switch (*c->p) {
	case '"':
		c->p++;
		if ((rc = scan_string(d, c, &raw, &rn, &esc, &hi)))
			return rc;
		if (hi && !stream_utf8_valid((const uint8_t *)raw, rn)) {
			stream_reason_set(&d->why, "string is not valid UTF-8");
			return FLOE_EINVAL;
		}
		return FLOE_OK;
	case '{':
		c->p++;
		skip_ws(c);
		if (c->p < c->end && *c->p == '}') {
			c->p++;
			return FLOE_OK;
		}
		for (;;) {
			skip_ws(c);
			if (c->p >= c->end || *c->p != '"')
				return syntax(d, c, "expected a member name");
			c->p++;
			if ((rc = scan_string(d, c, &raw, &rn, &esc, &hi)))
				return rc;
			skip_ws(c);
			if (c->p >= c->end || *c->p != ':')
				return syntax(d, c, "expected ':'");
			c->p++;
			if ((rc = skip_value(d, c, depth + 1)))
				return rc;
			skip_ws(c);
			if (c->p < c->end && *c->p == ',') {
				c->p++;
				continue;
			}
			if (c->p < c->end && *c->p == '}') {
				c->p++;
				return FLOE_OK;
			}
			return syntax(d, c, "expected ',' or '}'");
		}
	case '[':
		c->p++;
		skip_ws(c);
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			return FLOE_OK;
		}
		for (;;) {
			if ((rc = skip_value(d, c, depth + 1)))
				return rc;
			skip_ws(c);
			if (c->p < c->end && *c->p == ',') {
				c->p++;
				continue;
			}
			if (c->p < c->end && *c->p == ']') {
				c->p++;
				return FLOE_OK;
			}
			return syntax(d, c, "expected ',' or ']'");
		}
	case 't':
		return literal(d, c, "true", 4);
	case 'f':
		return literal(d, c, "false", 5);
	case 'n':
		return literal(d, c, "null", 4);
	default:
		/* '+' and '.' start no JSON value: refused as numbers, by name */
		if (*c->p == '-' || *c->p == '+' || *c->p == '.' || (*c->p >= '0' && *c->p <= '9'))
			return skip_number(d, c);
		return syntax(d, c, "unexpected character");
	}
}

static int parse_value(stream_json_dec *d, jcur *c, stream_col *col, int depth);

static int parse_object(stream_json_dec *d, jcur *c, stream_col *col, int depth)
{
	/* c->p is at '{'; the struct's row is already open */
	uint64_t gen = ++d->gen;
	int rc;
	const char *raw, *key;
	size_t rn, kn;
	bool esc, hi;
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
	} else {
		/* the previous object began with this member too (past its last
		 * member, the hint would point nowhere) */
		col->next_hint = col->first_hint;
		for (bool first = true;; first = false) {
			skip_ws(c);
			if (c->p >= c->end || *c->p != '"')
				return syntax(d, c, "expected a member name");
			c->p++;
			int idx = -1;
			/* producers repeat their key order: try the expected field's
			 * name in place before scanning */
			if (col->next_hint < col->n_kids) {
				const stream_col *k = &col->kids[col->next_hint];
				if (key_is(c->p, c->end, k)) {
					idx = (int)col->next_hint;
					col->next_hint++;
					c->p += k->name_len + 1;
				}
			}
			if (idx < 0) {
				if ((rc = scan_string(d, c, &raw, &rn, &esc, &hi)))
					return rc;
				key = raw;
				kn = rn;
				if (esc || hi) {
					if ((rc = string_text(d, c, raw, rn, esc, hi, &key, &kn)))
						return rc;
				}
				idx = stream_col_field(col, key, kn);
			}
			if (first && idx >= 0)
				col->first_hint = (uint32_t)idx;
			skip_ws(c);
			if (c->p >= c->end || *c->p != ':')
				return syntax(d, c, "expected ':'");
			c->p++;
			if (idx < 0 && d->reject_unknown) {
				stream_reason_set(&d->why, "unknown field '%.*s'", (int)(kn > 64 ? 64 : kn),
						  key);
				return FLOE_EINVAL;
			}
			if (idx < 0) {
				if ((rc = skip_value(d, c, depth + 1)))
					return rc;
			} else {
				stream_col *kid = &col->kids[idx];
				if (kid->seen == gen) {
					stream_reason_set(&d->why, "duplicate member '%.*s'",
							  (int)(kid->name_len > 64 ? 64 : kid->name_len),
							  kid->name);
					return FLOE_EINVAL;
				}
				kid->seen = gen;
				if ((rc = parse_value(d, c, kid, depth + 1))) {
					if (rc == FLOE_EINVAL)
						prefix_path(d, kid->name, kid->name_len);
					return rc;
				}
			}
			skip_ws(c);
			if (c->p < c->end && *c->p == ',') {
				c->p++;
				continue;
			}
			if (c->p < c->end && *c->p == '}') {
				c->p++;
				break;
			}
			return syntax(d, c, "expected ',' or '}'");
		}
	}
	for (size_t i = 0; i < col->n_kids; i++) {
		stream_col *kid = &col->kids[i];
		if (kid->seen == gen)
			continue;
		if (!kid->nullable) {
			stream_reason_set(&d->why, "missing required field '%.*s'",
					  (int)(kid->name_len > 64 ? 64 : kid->name_len), kid->name);
			return FLOE_EINVAL;
		}
		if (stream_col_put_null(kid))
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

static int parse_list(stream_json_dec *d, jcur *c, stream_col *col, int depth)
{
	int rc;
	if (stream_col_list_begin(col))
		return FLOE_ENOMEM;
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return stream_col_list_end(col);
	}
	for (;;) {
		if ((rc = parse_value(d, c, &col->kids[0], depth + 1)))
			return rc;
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			return stream_col_list_end(col);
		}
		return syntax(d, c, "expected ',' or ']'");
	}
}

static int parse_map_object(stream_json_dec *d, jcur *c, stream_col *col, int depth)
{
	int rc;
	const char *raw, *key;
	size_t rn, kn;
	bool esc, hi;
	if (stream_col_list_begin(col))
		return FLOE_ENOMEM;
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return stream_col_list_end(col);
	}
	for (;;) {
		skip_ws(c);
		if (c->p >= c->end || *c->p != '"')
			return syntax(d, c, "expected a member name");
		c->p++;
		if ((rc = scan_string(d, c, &raw, &rn, &esc, &hi)) ||
		    (rc = string_text(d, c, raw, rn, esc, hi, &key, &kn)))
			return rc;
		if ((rc = stream_coerce_text(&col->kids[0], key, kn, &d->opts, &d->why))) {
			if (rc == FLOE_EINVAL)
				prefix_path(d, "key", 3);
			return rc;
		}
		skip_ws(c);
		if (c->p >= c->end || *c->p != ':')
			return syntax(d, c, "expected ':'");
		c->p++;
		if ((rc = parse_value(d, c, &col->kids[1], depth + 1)))
			return rc;
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == '}') {
			c->p++;
			return stream_col_list_end(col);
		}
		return syntax(d, c, "expected ',' or '}'");
	}
}

/* A map from [[k, v], ...]. */
static int parse_map_array(stream_json_dec *d, jcur *c, stream_col *col, int depth)
{
	int rc;
	if (stream_col_list_begin(col))
		return FLOE_ENOMEM;
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return stream_col_list_end(col);
	}
	for (;;) {
		skip_ws(c);
		if (c->p >= c->end || *c->p != '[') {
			stream_reason_set(&d->why, "a map entry must be a [key, value] pair");
			return FLOE_EINVAL;
		}
		c->p++;
		if ((rc = parse_value(d, c, &col->kids[0], depth + 2)))
			return rc;
		skip_ws(c);
		if (c->p >= c->end || *c->p != ',')
			return syntax(d, c, "expected ',' in a [key, value] pair");
		c->p++;
		if ((rc = parse_value(d, c, &col->kids[1], depth + 2)))
			return rc;
		skip_ws(c);
		if (c->p >= c->end || *c->p != ']')
			return syntax(d, c, "expected ']' after a [key, value] pair");
		c->p++;
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			return stream_col_list_end(col);
		}
		return syntax(d, c, "expected ',' or ']'");
	}
}

static int put_string(stream_json_dec *d, jcur *c, stream_col *col, const char *raw, size_t n,
		      bool esc, bool hi)
{
	if (!esc) {
		if (hi && !stream_utf8_valid((const uint8_t *)raw, n)) {
			stream_reason_set(&d->why, "string is not valid UTF-8");
			return FLOE_EINVAL;
		}
		return stream_col_put_bin(col, raw, n);
	}
	uint8_t *out = stream_col_bin_begin(col, n);
	size_t k;
	if (!out)
		return FLOE_ENOMEM;
	if (!unescape(raw, n, out, &k))
		return syntax(d, c, "bad escape in a string");
	if (!stream_utf8_valid(out, k)) {
		stream_reason_set(&d->why, "string is not valid UTF-8");
		return FLOE_EINVAL;
	}
	stream_col_bin_end(col, k);
	return FLOE_OK;
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,	 1e7,
				     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				     1e16, 1e17, 1e18};

static inline bool num_char(char x)
{
	return (x >= '0' && x <= '9') || x == '-' || x == '+' || x == '.' || x == 'e' || x == 'E';
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight ASCII digits at p as their value, or false (SWAR: one load). A
 * byte is a digit when its high nibble is 3 and stays 3 after adding 6;
 * a carry out of a byte happens only from one that fails already. */
static inline bool eight_digits(const char *p, uint64_t *v)
{
	uint64_t w;
	memcpy(&w, p, 8);
	if (((w & UINT64_C(0xF0F0F0F0F0F0F0F0)) |
	     (((w + UINT64_C(0x0606060606060606)) & UINT64_C(0xF0F0F0F0F0F0F0F0)) >> 4)) !=
	    UINT64_C(0x3333333333333333))
		return false;
	w = (w & UINT64_C(0x0F0F0F0F0F0F0F0F)) * 2561 >> 8;
	w = (w & UINT64_C(0x00FF00FF00FF00FF)) * 6553601 >> 16;
	*v = (w & UINT64_C(0x0000FFFF0000FFFF)) * UINT64_C(42949672960001) >> 32;
	return true;
}
#define EIGHT_DIGITS(p, end, nd, m)                                                           \
	do {                                                                                  \
		uint64_t v8_;                                                                 \
		while ((end) - (p) >= 8 && (nd) + 8 <= 18 && eight_digits((p), &v8_)) {      \
			(m) = (m) * 100000000 + v8_;                                          \
			(nd) += 8;                                                            \
			(p) += 8;                                                             \
		}                                                                             \
	} while (0)
#else
#define EIGHT_DIGITS(p, end, nd, m) ((void)0)
#endif

size_t stream_json__fast_number(const char *p, const char *end, bool *is_int, int64_t *i,
				bool *d_ok, double *d)
{
	const char *s = p;
	bool neg = false;
	uint64_t m = 0;
	int nd = 0, fd = 0;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	const char *d0 = p;
	EIGHT_DIGITS(p, end, nd, m);
	while (p < end && (unsigned)(*p - '0') <= 9) {
		if (++nd > 18)
			return 0;
		m = m * 10 + (uint64_t)(*p++ - '0');
	}
	if (nd == 0 || (nd > 1 && *d0 == '0'))
		return 0; /* not a number, or a leading zero: the general path says so */
	if (p < end && *p == '.') {
		const char *f0 = ++p;
		EIGHT_DIGITS(p, end, nd, m);
		while (p < end && (unsigned)(*p - '0') <= 9) {
			if (++nd > 18)
				return 0;
			m = m * 10 + (uint64_t)(*p++ - '0');
		}
		fd = (int)(p - f0);
		if (fd == 0)
			return 0;
	}
	if (p < end && num_char(*p))
		return 0; /* an exponent, or text the general scanner would take on */
	*is_int = fd == 0;
	*i = neg ? -(int64_t)m : (int64_t)m;
	*d_ok = m <= (UINT64_C(1) << 53);
	if (*d_ok) {
		double v = fd ? (double)m / pow10_exact[fd] : (double)m;
		*d = neg ? -v : v;
	}
	return (size_t)(p - s);
}

/* A number into a long, int or double column in one pass; false: the
 * general path (other types, exponents, long or malformed numbers). */
static inline bool fast_number(jcur *c, stream_col *col, int *rc)
{
	int id = col->type->id;
	bool is_int, d_ok;
	int64_t i;
	double v;
	if (id != FLOE_T_LONG && id != FLOE_T_INT && id != FLOE_T_DOUBLE)
		return false;
	size_t n = stream_json__fast_number(c->p, c->end, &is_int, &i, &d_ok, &v);
	if (!n)
		return false;
	if (id == FLOE_T_DOUBLE) {
		if (!d_ok)
			return false;
		*rc = stream_col_put_fixed(col, &v);
	} else if (!is_int || (id == FLOE_T_INT && (i < INT32_MIN || i > INT32_MAX))) {
		return false; /* 3.0 is an int too, 3.5 and 2^40 are errors: as the general path says */
	} else if (id == FLOE_T_INT) {
		*rc = stream_col_put_i32(col, (int32_t)i);
	} else {
		*rc = stream_col_put_i64(col, i);
	}
	c->p += n;
	return true;
}

static int parse_value(stream_json_dec *d, jcur *c, stream_col *col, int depth)
{
	int rc;
	const char *raw, *s;
	size_t rn, sn;
	bool esc, hi;
	if (depth > STREAM_JSON_MAX_DEPTH)
		return syntax(d, c, "nesting too deep");
	skip_ws(c);
	if (c->p >= c->end)
		return syntax(d, c, "expected a value");
	char ch = *c->p;
	if (ch == '"') {
		c->p++;
		if ((rc = scan_string(d, c, &raw, &rn, &esc, &hi)))
			return rc;
		if (col->type->id == FLOE_T_STRING)
			return put_string(d, c, col, raw, rn, esc, hi);
		if (col->kind == SB_STRUCT || col->kind == SB_LIST || col->kind == SB_MAP) {
			stream_reason_set(&d->why, "expected %s, found a string",
					  col->kind == SB_STRUCT ? "an object" :
					  col->kind == SB_LIST	 ? "an array" :
								   "an object");
			return FLOE_EINVAL;
		}
		if ((rc = string_text(d, c, raw, rn, esc, hi, &s, &sn)))
			return rc;
		return stream_coerce_text(col, s, sn, &d->opts, &d->why);
	}
	if (ch == 'n') {
		if ((rc = literal(d, c, "null", 4)))
			return rc;
		if (!col->nullable) {
			stream_reason_set(&d->why, "null in a required field");
			return FLOE_EINVAL;
		}
		return stream_col_put_null(col) ? FLOE_ENOMEM : FLOE_OK;
	}
	if (col->type->id == FLOE_T_STRING && (ch == '{' || ch == '[')) {
		const char *s0 = c->p;
		if ((rc = skip_value(d, c, depth)))
			return rc;
		return stream_col_put_bin(col, s0, (size_t)(c->p - s0));
	}
	switch (ch) {
	case '{':
		if (col->kind == SB_STRUCT) {
			if (stream_col_struct_begin(col))
				return FLOE_ENOMEM;
			return parse_object(d, c, col, depth);
		}
		if (col->kind == SB_MAP)
			return parse_map_object(d, c, col, depth);
		stream_reason_set(&d->why, "an object cannot be a %s",
				  col->kind == SB_LIST ? "list" : "primitive value");
		return FLOE_EINVAL;
	case '[':
		if (col->kind == SB_LIST)
			return parse_list(d, c, col, depth);
		if (col->kind == SB_MAP)
			return parse_map_array(d, c, col, depth);
		stream_reason_set(&d->why, "an array cannot be a %s",
				  col->kind == SB_STRUCT ? "struct" : "primitive value");
		return FLOE_EINVAL;
	case 't':
	case 'f':
		if ((rc = literal(d, c, ch == 't' ? "true" : "false", ch == 't' ? 4 : 5)))
			return rc;
		return stream_coerce_bool(col, ch == 't', &d->why);
	default:
		break;
	}
	if (ch == '-' || ch == '+' || ch == '.' || (ch >= '0' && ch <= '9')) {
		const char *s0 = c->p;
		if (fast_number(c, col, &rc))
			return rc;
		while (c->p < c->end && num_char(*c->p))
			c->p++;
		/* spec: RFC 8259 numbers only: "01", "1.", "-", "1e", "+1" and ".5"
		 * are refused as Jackson and Flink's JSON format refuse them */
		if (floe_json_number_len(s0, (size_t)(c->p - s0)) != (size_t)(c->p - s0)) {
			int len = (int)(c->p - s0 > 40 ? 40 : c->p - s0);
			c->p = s0;
			d->err_at = (size_t)(c->p - c->start);
			stream_reason_set(&d->why,
					  "JSON syntax error at byte %zu: '%.*s' is not a JSON number "
					  "(RFC 8259)",
					  d->err_at, len, s0);
			return FLOE_EINVAL;
		}
		if (col->kind == SB_STRUCT || col->kind == SB_LIST || col->kind == SB_MAP) {
			stream_reason_set(&d->why, "a number cannot be a %s",
					  col->kind == SB_STRUCT ? "struct" :
					  col->kind == SB_LIST	 ? "list" :
								   "map");
			return FLOE_EINVAL;
		}
		return stream_coerce_number(col, s0, (size_t)(c->p - s0), &d->opts, &d->why);
	}
	return syntax(d, c, "unexpected character");
}

int stream_json_decode(stream_json_dec *d, stream_col *root, const char *p, size_t n)
{
	jcur c = {p, p + n, p};
	int64_t rows = root->len;
	int rc;
	d->why.msg[0] = 0;
	d->err_at = 0;
	skip_ws(&c);
	if (c.p >= c.end || *c.p != '{') {
		rc = syntax(d, &c, "a record must be a JSON object");
		goto fail;
	}
	d->pathed = false;
	if ((rc = stream_col_struct_begin(root)))
		goto fail;
	if ((rc = parse_object(d, &c, root, 0)))
		goto fail;
	skip_ws(&c);
	if (c.p != c.end) {
		rc = syntax(d, &c, "trailing characters after the record");
		goto fail;
	}
	return FLOE_OK;
fail:
	stream_col_truncate(root, rows);
	if (rc == FLOE_ENOMEM)
		stream_reason_set(&d->why, "out of memory");
	return rc;
}

int stream_json_decode_value(stream_json_dec *d, stream_col *col, const char *p, size_t n)
{
	jcur c = {p, p + n, p};
	int rc;
	d->why.msg[0] = 0;
	d->pathed = false;
	if ((rc = parse_value(d, &c, col, 0)))
		return rc;
	skip_ws(&c);
	if (c.p != c.end)
		return syntax(d, &c, "trailing characters after the value");
	return FLOE_OK;
}
