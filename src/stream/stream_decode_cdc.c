/*
 * stream_decode_cdc.c — Debezium JSON change events and row-kind columns
 * (see stream_decode_cdc.h).
 *
 * DESIGN: the envelope is scanned, not built: one validating pass over the
 * record's top-level object (and the payload's, and the source's) notes
 * where the members this decoder needs start and end; every other value is
 * skipped with the JSON grammar checked (depth at most
 * STREAM_JSON_MAX_DEPTH). The before/after images are then decoded straight
 * into the table's columns by the schema-directed JSON decoder, so a
 * Debezium record costs one scan plus the decode of its images.
 */
#include <string.h>

#include "stream/stream_decode_cdc.h"
#include "write/write.h"

/* ---- a validating scanner -------------------------------------------------------------- */

typedef struct scur {
	const char *p;
	size_t n, i;
	const char *err;
	size_t err_at;
} scur;

static void ws(scur *c)
{
	while (c->i < c->n &&
	       (c->p[c->i] == ' ' || c->p[c->i] == '\t' || c->p[c->i] == '\n' || c->p[c->i] == '\r'))
		c->i++;
}

static bool fail(scur *c, const char *what)
{
	if (!c->err) {
		c->err = what;
		c->err_at = c->i;
	}
	return false;
}

static bool hexd(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* A string at c->i: its content is [*s, *e) (escapes left in); *esc says
 * whether it has any. */
static bool scan_string(scur *c, size_t *s, size_t *e, bool *esc)
{
	if (c->i >= c->n || c->p[c->i] != '"')
		return fail(c, "expected a string");
	c->i++;
	*s = c->i;
	*esc = false;
	while (c->i < c->n) {
		unsigned char ch = (unsigned char)c->p[c->i];
		if (ch == '"') {
			*e = c->i++;
			return true;
		}
		if (ch < 0x20)
			return fail(c, "control character in a string");
		if (ch == '\\') {
			*esc = true;
			if (c->i + 1 >= c->n)
				break;
			char x = c->p[c->i + 1];
			if (x == 'u') {
				if (c->i + 6 > c->n || !hexd(c->p[c->i + 2]) || !hexd(c->p[c->i + 3]) ||
				    !hexd(c->p[c->i + 4]) || !hexd(c->p[c->i + 5]))
					return fail(c, "bad \\u escape");
				c->i += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", x) || x == 0)
				return fail(c, "bad escape");
			c->i += 2;
			continue;
		}
		c->i++;
	}
	return fail(c, "unterminated string");
}

static bool digits(scur *c)
{
	size_t k = c->i;
	while (c->i < c->n && c->p[c->i] >= '0' && c->p[c->i] <= '9')
		c->i++;
	return c->i > k;
}

static bool scan_number(scur *c)
{
	if (c->i < c->n && c->p[c->i] == '-')
		c->i++;
	if (c->i < c->n && c->p[c->i] == '0')
		c->i++;
	else if (!digits(c))
		return fail(c, "bad number");
	if (c->i < c->n && c->p[c->i] == '.') {
		c->i++;
		if (!digits(c))
			return fail(c, "bad number");
	}
	if (c->i < c->n && (c->p[c->i] == 'e' || c->p[c->i] == 'E')) {
		c->i++;
		if (c->i < c->n && (c->p[c->i] == '+' || c->p[c->i] == '-'))
			c->i++;
		if (!digits(c))
			return fail(c, "bad number");
	}
	return true;
}

static bool literal(scur *c, const char *w)
{
	size_t k = strlen(w);
	if (c->n - c->i < k || memcmp(c->p + c->i, w, k) != 0)
		return fail(c, "unexpected character");
	c->i += k;
	return true;
}

static bool skip_value(scur *c, int depth)
{
	size_t s, e;
	bool esc;
	ws(c);
	if (c->i >= c->n)
		return fail(c, "unexpected end");
	if (depth > STREAM_JSON_MAX_DEPTH)
		return fail(c, "nesting too deep");
	char ch = c->p[c->i];
	if (ch == '"')
		return scan_string(c, &s, &e, &esc);
	if (ch == '{' || ch == '[') {
		char close = ch == '{' ? '}' : ']';
		c->i++;
		ws(c);
		if (c->i < c->n && c->p[c->i] == close) {
			c->i++;
			return true;
		}
		for (;;) {
			if (ch == '{') {
				ws(c);
				if (!scan_string(c, &s, &e, &esc))
					return false;
				ws(c);
				if (c->i >= c->n || c->p[c->i] != ':')
					return fail(c, "expected ':'");
				c->i++;
			}
			if (!skip_value(c, depth + 1))
				return false;
			ws(c);
			if (c->i < c->n && c->p[c->i] == ',') {
				c->i++;
				continue;
			}
			if (c->i < c->n && c->p[c->i] == close) {
				c->i++;
				return true;
			}
			return fail(c, ch == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
		}
	}
	if (ch == 't')
		return literal(c, "true");
	if (ch == 'f')
		return literal(c, "false");
	if (ch == 'n')
		return literal(c, "null");
	if (ch == '-' || (ch >= '0' && ch <= '9'))
		return scan_number(c);
	return fail(c, "unexpected character");
}

/* The members of an object the decoder wants: value ranges, absent = 0. */
typedef struct span {
	size_t s, e;
	bool set;
} span;

typedef struct want {
	const char *name;
	span *out;
} want;

/* Scan the object at [s, e) (its whole text), noting the wanted members.
 * A member given twice is refused (which image would count?). */
static bool scan_object(scur *c, size_t s, size_t e, const want *w, size_t n_w)
{
	scur sub = {c->p, e, s, NULL, 0};
	ws(&sub);
	if (sub.i >= sub.n || sub.p[sub.i] != '{') {
		c->err = "expected an object";
		c->err_at = sub.i;
		return false;
	}
	sub.i++;
	ws(&sub);
	if (sub.i < sub.n && sub.p[sub.i] == '}') {
		sub.i++;
		goto end;
	}
	for (;;) {
		size_t ks, ke;
		bool esc;
		ws(&sub);
		if (!scan_string(&sub, &ks, &ke, &esc))
			goto bad;
		ws(&sub);
		if (sub.i >= sub.n || sub.p[sub.i] != ':') {
			fail(&sub, "expected ':'");
			goto bad;
		}
		sub.i++;
		ws(&sub);
		size_t vs = sub.i;
		if (!skip_value(&sub, 2))
			goto bad;
		for (size_t k = 0; k < n_w && !esc; k++) {
			size_t kl = strlen(w[k].name);
			if (ke - ks == kl && memcmp(sub.p + ks, w[k].name, kl) == 0) {
				if (w[k].out->set) {
					sub.i = ks;
					fail(&sub, "a member is given twice");
					goto bad;
				}
				w[k].out->s = vs;
				w[k].out->e = sub.i;
				w[k].out->set = true;
			}
		}
		ws(&sub);
		if (sub.i < sub.n && sub.p[sub.i] == ',') {
			sub.i++;
			continue;
		}
		if (sub.i < sub.n && sub.p[sub.i] == '}') {
			sub.i++;
			break;
		}
		fail(&sub, "expected ',' or '}'");
		goto bad;
	}
end:
	ws(&sub);
	if (sub.i != sub.n) {
		fail(&sub, "text after the object");
		goto bad;
	}
	return true;
bad:
	c->err = sub.err;
	c->err_at = sub.err_at;
	return false;
}

static bool is_null(const char *p, const span *v)
{
	return v->set && v->e - v->s == 4 && memcmp(p + v->s, "null", 4) == 0;
}

static bool is_object(const char *p, const span *v)
{
	return v->set && p[v->s] == '{';
}

/* ---- kinds ------------------------------------------------------------------------------ */

static bool word_eq(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);
	if (n != k)
		return false;
	for (size_t i = 0; i < n; i++) {
		char a = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : s[i];
		if (a != w[i])
			return false;
	}
	return true;
}

bool stream_cdc_parse_kind(const char *s, size_t n, uint8_t *kind)
{
	static const struct {
		const char *w;
		uint8_t k;
	} words[] = {
		{"+i", FLOE_ROW_INSERT},	   {"-u", FLOE_ROW_UPDATE_BEFORE},
		{"+u", FLOE_ROW_UPDATE_AFTER},	   {"-d", FLOE_ROW_DELETE},
		{"i", FLOE_ROW_INSERT},		   {"u", FLOE_ROW_UPDATE_AFTER},
		{"d", FLOE_ROW_DELETE},		   {"insert", FLOE_ROW_INSERT},
		{"upsert", FLOE_ROW_INSERT},	   {"update", FLOE_ROW_UPDATE_AFTER},
		{"update_after", FLOE_ROW_UPDATE_AFTER}, {"update_before", FLOE_ROW_UPDATE_BEFORE},
		{"delete", FLOE_ROW_DELETE},
	};
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (word_eq(s, n, words[i].w)) {
			*kind = words[i].k;
			return true;
		}
	return false;
}

static bool whole_row(const stream_cdc_plan *pl, uint8_t kind)
{
	if (kind == FLOE_ROW_INSERT || kind == FLOE_ROW_UPDATE_AFTER)
		return true;
	return !pl->upsert; /* a CDC delete writes the whole row */
}

int stream_cdc_check_row(stream_cdc_dec *d, const stream_col *root, int64_t row, uint8_t kind)
{
	const stream_cdc_plan *pl = d->plan;
	for (size_t k = 0; k < pl->n_keys; k++) {
		const stream_col *c = &root->kids[pl->keys[k]];
		if (stream_col_is_null(c, row)) {
			stream_reason_set(&d->why, "change record without its key: '%.*s' is missing or "
					  "null",
					  (int)(c->name_len > 64 ? 64 : c->name_len), c->name);
			return FLOE_EINVAL;
		}
	}
	if (!whole_row(pl, kind))
		return FLOE_OK;
	for (size_t k = 0; k < pl->n_required; k++) {
		const stream_col *c = &root->kids[pl->required[k]];
		if (stream_col_is_null(c, row)) {
			stream_reason_set(&d->why, "%.*s: missing required field",
					  (int)(c->name_len > 64 ? 64 : c->name_len), c->name);
			return FLOE_EINVAL;
		}
	}
	return FLOE_OK;
}

int stream_cdc_row_kind(stream_cdc_dec *d, const stream_col *root, int64_t row, uint8_t *kind)
{
	const stream_cdc_plan *pl = d->plan;
	const stream_col *c = &root->kids[pl->kind_field];
	int cn = (int)(c->name_len > 64 ? 64 : c->name_len);
	if (stream_col_is_null(c, row)) {
		stream_reason_set(&d->why, "no change kind: '%.*s' is missing or null", cn, c->name);
		return FLOE_EINVAL;
	}
	const char *s = (const char *)c->data + c->offs[row];
	size_t n = (size_t)(c->offs[row + 1] - c->offs[row]);
	if (!stream_cdc_parse_kind(s, n, kind)) {
		stream_reason_set(&d->why,
				  "unknown change kind '%.*s' in '%.*s' (expected +I, -U, +U, -D, "
				  "insert, update or delete)",
				  (int)(n > 32 ? 32 : n), s, cn, c->name);
		return FLOE_EINVAL;
	}
	return stream_cdc_check_row(d, root, row, *kind);
}

/* ---- Debezium ------------------------------------------------------------------------------ */

/* Decode one image [v.s, v.e) as a row of kind k. */
static int image(stream_cdc_dec *d, stream_col *root, const char *p, const span *v, uint8_t k,
		 const char *what, const span *ts)
{
	int rc = stream_json_decode(d->json, root, p + v->s, v->e - v->s);
	if (rc == FLOE_EINVAL) {
		d->why = d->json->why;
		stream_reason_prefix(&d->why, what, strlen(what), ": ");
		return rc;
	}
	if (rc)
		return rc;
	int64_t row = root->len - 1;
	if (d->plan->ts_field >= 0 && ts->set &&
	    (k == FLOE_ROW_INSERT || k == FLOE_ROW_UPDATE_AFTER)) {
		/* source.ts_ms (milliseconds) replaces what the new image had */
		stream_col *c = &root->kids[d->plan->ts_field];
		stream_coerce_opts ms = {STREAM_EPOCH_MS};
		stream_reason why;
		stream_col_truncate(c, row);
		rc = stream_coerce_number(c, p + ts->s, ts->e - ts->s, &ms, &why);
		if (rc == FLOE_EINVAL) {
			d->why = why;
			stream_reason_prefix(&d->why, "source.ts_ms", 12, ": ");
		}
		if (rc)
			return rc;
	}
	return stream_cdc_check_row(d, root, row, k);
}

int stream_cdc_decode_debezium(stream_cdc_dec *d, stream_col *root, const char *p, size_t n,
			       uint8_t kinds[2], int *n_rows)
{
	const stream_cdc_plan *pl = d->plan;
	scur c = {p, n, 0, NULL, 0};
	span schema = {0}, payload = {0}, op = {0}, before = {0}, after = {0}, source = {0},
	     ts = {0};
	int64_t len0 = root->len;
	int rc = FLOE_EINVAL;
	*n_rows = 0;
	d->why.msg[0] = 0;
	ws(&c);
	size_t end = n;
	while (end > c.i && (p[end - 1] == ' ' || p[end - 1] == '\t' || p[end - 1] == '\n' ||
			     p[end - 1] == '\r'))
		end--;
	if (c.i == end || (end - c.i == 4 && memcmp(p + c.i, "null", 4) == 0))
		return FLOE_OK; /* a tombstone: no change */
	const want top[] = {{"schema", &schema}, {"payload", &payload}, {"op", &op},
			    {"before", &before},  {"after", &after},     {"source", &source}};
	if (!scan_object(&c, c.i, end, top, 6))
		goto syntax;
	if (payload.set && schema.set) {
		if (is_null(p, &payload))
			return FLOE_OK;
		if (!is_object(p, &payload)) {
			stream_reason_set(&d->why, "Debezium envelope: \"payload\" is not an object");
			return FLOE_EINVAL;
		}
		span none = {0};
		op = before = after = source = none;
		const want pw[] = {{"op", &op}, {"before", &before}, {"after", &after},
				   {"source", &source}};
		if (!scan_object(&c, payload.s, payload.e, pw, 4))
			goto syntax;
	} else if (pl->schema_include) {
		stream_reason_set(&d->why, "debezium-json.schema-include is true but the record has "
			      "no {\"schema\", \"payload\"} envelope");
		return FLOE_EINVAL;
	}
	if (!op.set || p[op.s] != '"') {
		stream_reason_set(&d->why, "not a Debezium change event: no \"op\" string");
		return FLOE_EINVAL;
	}
	if (is_object(p, &source)) {
		const want sw[] = {{"ts_ms", &ts}};
		if (!scan_object(&c, source.s, source.e, sw, 1))
			goto syntax;
		if (ts.set && !(p[ts.s] == '-' || (p[ts.s] >= '0' && p[ts.s] <= '9')))
			ts.set = false; /* null or not a number: not used */
	}
	const char *o = p + op.s + 1;
	size_t on = op.e - op.s - 2;
	if (on == 1 && (o[0] == 'c' || o[0] == 'r')) {
		if (!is_object(p, &after)) {
			stream_reason_set(&d->why, "op '%c' without an \"after\" image", o[0]);
			return FLOE_EINVAL;
		}
		kinds[0] = FLOE_ROW_INSERT;
		if ((rc = image(d, root, p, &after, FLOE_ROW_INSERT, "after", &ts)))
			goto undo;
		*n_rows = 1;
		return FLOE_OK;
	}
	if (on == 1 && o[0] == 'u') {
		if (!is_object(p, &after)) {
			stream_reason_set(&d->why, "op 'u' without an \"after\" image");
			return FLOE_EINVAL;
		}
		int k = 0;
		if (!pl->upsert) {
			/* Flink: the before image is needed to delete the old row (a
			 * Postgres table needs REPLICA IDENTITY FULL) */
			if (!is_object(p, &before)) {
				stream_reason_set(&d->why, "op 'u' without a \"before\" image (needed "
						  "outside upsert mode: a Postgres source needs "
						  "REPLICA IDENTITY FULL)");
				return FLOE_EINVAL;
			}
			kinds[k++] = FLOE_ROW_UPDATE_BEFORE;
			if ((rc = image(d, root, p, &before, FLOE_ROW_UPDATE_BEFORE, "before", &ts)))
				goto undo;
		}
		kinds[k++] = FLOE_ROW_UPDATE_AFTER;
		if ((rc = image(d, root, p, &after, FLOE_ROW_UPDATE_AFTER, "after", &ts)))
			goto undo;
		*n_rows = k;
		return FLOE_OK;
	}
	if (on == 1 && o[0] == 'd') {
		if (!is_object(p, &before)) {
			stream_reason_set(&d->why, "op 'd' without a \"before\" image (the delete's key)");
			return FLOE_EINVAL;
		}
		kinds[0] = FLOE_ROW_DELETE;
		if ((rc = image(d, root, p, &before, FLOE_ROW_DELETE, "before", &ts)))
			goto undo;
		*n_rows = 1;
		return FLOE_OK;
	}
	stream_reason_set(&d->why, "unknown Debezium op '%.*s' (expected c, r, u or d)",
			  (int)(on > 16 ? 16 : on), o);
	return FLOE_EINVAL;
undo:
	stream_col_truncate(root, len0);
	*n_rows = 0;
	return rc;
syntax:
	stream_reason_set(&d->why, "JSON at byte %zu: %s", c.err_at, c.err ? c.err : "syntax error");
	return FLOE_EINVAL;
}

/* ---- keys ----------------------------------------------------------------------------------- */

int stream_cdc_decode_key(stream_cdc_dec *d, stream_col *root, const char *p, size_t n)
{
	scur c = {p, n, 0, NULL, 0};
	span schema = {0}, payload = {0};
	d->why.msg[0] = 0;
	ws(&c);
	size_t end = n;
	while (end > c.i && (p[end - 1] == ' ' || p[end - 1] == '\t' || p[end - 1] == '\n' ||
			     p[end - 1] == '\r'))
		end--;
	const want top[] = {{"schema", &schema}, {"payload", &payload}};
	if (!scan_object(&c, c.i, end, top, 2)) {
		stream_reason_set(&d->why, "the key: JSON at byte %zu: %s", c.err_at,
				  c.err ? c.err : "syntax error");
		return FLOE_EINVAL;
	}
	size_t s = c.i, e = end;
	if (schema.set && payload.set) {
		/* Kafka Connect's envelope (schemas.enable=true) */
		if (!is_object(p, &payload)) {
			stream_reason_set(&d->why, "the key's \"payload\" is not an object");
			return FLOE_EINVAL;
		}
		s = payload.s;
		e = payload.e;
	}
	int rc = stream_json_decode(d->json, root, p + s, e - s);
	if (rc == FLOE_EINVAL) {
		d->why = d->json->why;
		stream_reason_prefix(&d->why, "the key", 7, ": ");
	}
	return rc;
}
