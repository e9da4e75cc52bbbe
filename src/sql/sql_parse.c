/*
 * sql_parse.c — the lexer and recursive-descent parser of floe's SQL (Flink's
 * dialect); see sql_ast.h for the tree and the DESIGN note.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sql/sql_ast.h"
#include "util/buf.h"
#include "util/str.h"

typedef enum tok_kind {
	TK_EOF = 0,
	TK_WORD,   /* bare identifier or keyword */
	TK_QIDENT, /* `quoted` */
	TK_STRING, /* 'text' */
	TK_NUMBER,
	TK_HINT,     /* the opening of a hint: / *+ */
	TK_HINT_END, /* * / inside a hint */
	TK_PUNCT,    /* operators and punctuation (text in the source) */
} tok_kind;

typedef struct tok {
	tok_kind kind;
	uint32_t off, len;
	const char *val; /* decoded text of QIDENT / STRING (arena), else NULL */
} tok;

typedef struct parser {
	const char *s;
	size_t n, pos;
	const char *origin;
	floe_arena *a;
	floe_error *err;
	tok t;          /* current token */
	bool in_hint;
	int depth;
	int rc;
} parser;

/* ---- errors ------------------------------------------------------------------ */

int floe_sql__error_at(floe_error *err, int code, const char *text, size_t n, const char *origin,
		       uint32_t off, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	size_t line = 1, col = 1, ls = 0, le, i;
	if (off > n)
		off = (uint32_t)n;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
			ls = i + 1;
		} else if (((unsigned char)text[i] & 0xC0) != 0x80) {
			col++;
		}
	}
	for (le = ls; le < n && text[le] != '\n' && text[le] != '\r'; le++)
		;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* the source line, cut to 160 bytes around the column */
	size_t from = ls, to = le;
	if (off - ls > 100)
		from = off - 80;
	while (from > ls && ((unsigned char)text[from] & 0xC0) == 0x80)
		from--;
	if (to - from > 160)
		to = from + 160;
	while (to > from && to < le && ((unsigned char)text[to] & 0xC0) == 0x80)
		to--;
	char caret[200];
	size_t c = 0;
	for (i = from; i < off && c + 2 < sizeof(caret); i++) {
		if (((unsigned char)text[i] & 0xC0) == 0x80)
			continue;
		caret[c++] = text[i] == '\t' ? '\t' : ' ';
	}
	caret[c++] = '^';
	caret[c] = 0;
	return floe_error_set(err, code, "%s%sline %zu, column %zu: %s\n  %s%.*s\n  %s%s",
			      origin ? origin : "", origin ? ": " : "", line, col, msg,
			      from > ls ? "..." : "", (int)(to - from), text + from,
			      from > ls ? "   " : "", caret);
}

static int perr(parser *p, uint32_t off, const char *fmt, ...) FLOE_PRINTF(3, 4);
static int perr(parser *p, uint32_t off, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	if (p->rc)
		return p->rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->rc = floe_sql__error_at(p->err, FLOE_EINVAL, p->s, p->n, p->origin, off, "%s", msg);
	return p->rc;
}

static int poom(parser *p)
{
	if (!p->rc)
		p->rc = floe_error_oom(p->err);
	return p->rc;
}

/* What the current token looks like in a message. */
static const char *tok_desc(parser *p, char *buf, size_t cap)
{
	if (p->t.kind == TK_EOF)
		return "the end of the input";
	if (p->t.kind == TK_HINT)
		return "a hint '/*+'";
	size_t len = p->t.len > 40 ? 40 : p->t.len;
	snprintf(buf, cap, "'%.*s%s'", (int)len, p->s + p->t.off, p->t.len > 40 ? "..." : "");
	return buf;
}

/* ---- lexer ------------------------------------------------------------------- */

static bool is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static bool is_ident_char(unsigned char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}
static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* A quoted token: q is the quote, doubled inside for itself. */
static int lex_quoted(parser *p, char q, tok_kind kind)
{
	size_t start = p->pos, i = p->pos + 1;
	floe_buf b;
	floe_buf_init(&b, p->n + 1);
	for (;;) {
		if (i >= p->n) {
			floe_buf_reset(&b);
			return perr(p, (uint32_t)start, "unterminated %s",
				    q == '\'' ? "string literal" : "quoted identifier");
		}
		if (p->s[i] == q) {
			if (i + 1 < p->n && p->s[i + 1] == q) {
				if (floe_buf_putc(&b, q))
					goto oom;
				i += 2;
				continue;
			}
			i++;
			break;
		}
		if (floe_buf_putc(&b, p->s[i]))
			goto oom;
		i++;
	}
	if (kind == TK_QIDENT && b.len == 0) {
		floe_buf_reset(&b);
		return perr(p, (uint32_t)start, "empty quoted identifier");
	}
	if (!floe_utf8_valid(b.data ? (const char *)b.data : "", b.len)) {
		floe_buf_reset(&b);
		return perr(p, (uint32_t)start, "invalid UTF-8 in a %s",
			    q == '\'' ? "string literal" : "quoted identifier");
	}
	p->t.val = floe_arena_strndup(p->a, b.data ? (const char *)b.data : "", b.len);
	floe_buf_reset(&b);
	if (!p->t.val)
		return poom(p);
	p->t.kind = kind;
	p->t.off = (uint32_t)start;
	p->t.len = (uint32_t)(i - start);
	p->pos = i;
	return 0;
oom:
	floe_buf_reset(&b);
	return poom(p);
}

static int next(parser *p)
{
	const char *s = p->s;
	size_t n = p->n;
	if (p->rc)
		return p->rc;
	p->t.val = NULL;
	for (;;) {
		while (p->pos < n && (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' ||
				      s[p->pos] == '\r' || s[p->pos] == '\f'))
			p->pos++;
		if (p->pos + 1 < n && s[p->pos] == '-' && s[p->pos + 1] == '-') {
			while (p->pos < n && s[p->pos] != '\n')
				p->pos++;
			continue;
		}
		if (p->pos + 1 < n && s[p->pos] == '/' && s[p->pos + 1] == '*' &&
		    !(p->pos + 2 < n && s[p->pos + 2] == '+')) {
			size_t start = p->pos;
			p->pos += 2;
			while (p->pos + 1 < n && !(s[p->pos] == '*' && s[p->pos + 1] == '/'))
				p->pos++;
			if (p->pos + 1 >= n)
				return perr(p, (uint32_t)start, "unterminated comment");
			p->pos += 2;
			continue;
		}
		break;
	}
	size_t i = p->pos;
	p->t.off = (uint32_t)i;
	if (i >= n) {
		p->t.kind = TK_EOF;
		p->t.len = 0;
		return 0;
	}
	unsigned char c = (unsigned char)s[i];
	if (c == '/' && i + 2 < n && s[i + 1] == '*' && s[i + 2] == '+') {
		if (p->in_hint)
			return perr(p, (uint32_t)i, "a hint cannot hold another hint");
		p->t.kind = TK_HINT;
		p->t.len = 3;
		p->pos = i + 3;
		return 0;
	}
	if (p->in_hint && c == '*' && i + 1 < n && s[i + 1] == '/') {
		p->t.kind = TK_HINT_END;
		p->t.len = 2;
		p->pos = i + 2;
		return 0;
	}
	if (c == '\'')
		return lex_quoted(p, '\'', TK_STRING);
	if (c == '`')
		return lex_quoted(p, '`', TK_QIDENT);
	if (c == '"')
		return perr(p, (uint32_t)i, "double quotes are not a string: use 'text' for strings "
					    "and `name` for identifiers");
	if (is_ident_start(c)) {
		size_t j = i + 1;
		while (j < n && is_ident_char((unsigned char)s[j]))
			j++;
		if (!floe_utf8_valid(s + i, j - i))
			return perr(p, (uint32_t)i, "invalid UTF-8 in an identifier");
		p->t.kind = TK_WORD;
		p->t.len = (uint32_t)(j - i);
		p->pos = j;
		return 0;
	}
	if (is_digit(c) || (c == '.' && i + 1 < n && is_digit((unsigned char)s[i + 1]))) {
		size_t j = i;
		while (j < n && is_digit((unsigned char)s[j]))
			j++;
		if (j < n && s[j] == '.') {
			j++;
			while (j < n && is_digit((unsigned char)s[j]))
				j++;
		}
		if (j < n && (s[j] == 'e' || s[j] == 'E')) {
			size_t k = j + 1;
			if (k < n && (s[k] == '+' || s[k] == '-'))
				k++;
			if (k < n && is_digit((unsigned char)s[k])) {
				while (k < n && is_digit((unsigned char)s[k]))
					k++;
				j = k;
			}
		}
		if (j < n && is_ident_start((unsigned char)s[j]))
			return perr(p, (uint32_t)i, "malformed number");
		p->t.kind = TK_NUMBER;
		p->t.len = (uint32_t)(j - i);
		p->pos = j;
		return 0;
	}
	static const char *const two[] = {"<=", ">=", "<>", "!=", "||", "=="};
	for (size_t k = 0; k < sizeof(two) / sizeof(two[0]); k++) {
		if (i + 1 < n && s[i] == two[k][0] && s[i + 1] == two[k][1]) {
			p->t.kind = TK_PUNCT;
			p->t.len = 2;
			p->pos = i + 2;
			return 0;
		}
	}
	if (strchr("(),;.=<>+-*/%[]:", c) && c) {
		p->t.kind = TK_PUNCT;
		p->t.len = 1;
		p->pos = i + 1;
		return 0;
	}
	if (c < 0x20 || c == 0x7f)
		return perr(p, (uint32_t)i, "unexpected control character 0x%02x", c);
	return perr(p, (uint32_t)i, "unexpected character '%c'", c);
}

/* ---- token tests ------------------------------------------------------------- */

static bool is_kw(const parser *p, const char *kw)
{
	return p->t.kind == TK_WORD && strlen(kw) == p->t.len &&
	       !strncasecmp(p->s + p->t.off, kw, p->t.len);
}
static bool is_p(const parser *p, const char *punct)
{
	return p->t.kind == TK_PUNCT && strlen(punct) == p->t.len &&
	       !memcmp(p->s + p->t.off, punct, p->t.len);
}
static bool accept_kw(parser *p, const char *kw)
{
	if (!is_kw(p, kw))
		return false;
	return next(p) == 0;
}
static bool accept_p(parser *p, const char *punct)
{
	if (!is_p(p, punct))
		return false;
	return next(p) == 0;
}
static int expect_kw(parser *p, const char *kw)
{
	char b[64];
	if (p->rc)
		return p->rc;
	if (!is_kw(p, kw))
		return perr(p, p->t.off, "expected %s, found %s", kw, tok_desc(p, b, sizeof(b)));
	return next(p);
}
static int expect_p(parser *p, const char *punct)
{
	char b[64];
	if (p->rc)
		return p->rc;
	if (!is_p(p, punct))
		return perr(p, p->t.off, "expected '%s', found %s", punct, tok_desc(p, b, sizeof(b)));
	return next(p);
}

/* Upper-case copy of the current word. */
static char *word_upper(parser *p)
{
	char *w = floe_arena_strndup(p->a, p->s + p->t.off, p->t.len);
	if (!w) {
		poom(p);
		return NULL;
	}
	for (char *c = w; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	return w;
}

/* Words that end a select item or a table reference: never bare aliases. */
static bool is_clause_word(const parser *p)
{
	static const char *const words[] = {"FROM",  "WHERE", "GROUP", "ORDER",  "LIMIT", "HAVING",
					    "UNION", "JOIN",  "INNER", "LEFT",   "RIGHT", "FULL",
					    "CROSS", "ON",    "AS",    "EXCEPT", "INTERSECT", "OFFSET",
					    "FETCH", "WINDOW", "END", "USING", "MINUS"};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (is_kw(p, words[i]))
			return true;
	return false;
}

/* An identifier (bare or quoted): arena copy. */
static const char *ident(parser *p, const char *what)
{
	char b[64];
	const char *v;
	if (p->rc)
		return NULL;
	if (p->t.kind == TK_QIDENT) {
		v = p->t.val;
	} else if (p->t.kind == TK_WORD) {
		v = floe_arena_strndup(p->a, p->s + p->t.off, p->t.len);
		if (!v) {
			poom(p);
			return NULL;
		}
	} else {
		perr(p, p->t.off, "expected %s, found %s", what, tok_desc(p, b, sizeof(b)));
		return NULL;
	}
	if (next(p))
		return NULL;
	return v;
}

static const char *string_lit(parser *p, const char *what)
{
	char b[64];
	if (p->rc)
		return NULL;
	if (p->t.kind != TK_STRING) {
		perr(p, p->t.off, "expected %s (a 'quoted string'), found %s", what,
		     tok_desc(p, b, sizeof(b)));
		return NULL;
	}
	const char *v = p->t.val;
	if (next(p))
		return NULL;
	return v;
}

/* A growable arena array of pointers or structs. */
typedef struct vec {
	void *data;
	size_t n, cap, elem;
} vec;

static void *vec_push(parser *p, vec *v)
{
	if (p->rc)
		return NULL;
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 4;
		void *d = floe_arena_calloc(p->a, cap, v->elem);
		if (!d) {
			poom(p);
			return NULL;
		}
		if (v->n)
			memcpy(d, v->data, v->n * v->elem);
		v->data = d;
		v->cap = cap;
	}
	void *slot = (char *)v->data + v->n * v->elem;
	v->n++;
	return slot;
}

static int name_parse(parser *p, sql_name *out, const char *what)
{
	vec v = {NULL, 0, 0, sizeof(const char *)};
	out->off = p->t.off;
	do {
		const char **slot = vec_push(p, &v);
		if (!slot)
			return p->rc;
		if (!(*slot = ident(p, what)))
			return p->rc;
	} while (accept_p(p, "."));
	if (v.n > 3)
		return perr(p, out->off, "%s has more than three parts (catalog.database.table)",
			    what);
	out->parts = v.data;
	out->n = v.n;
	return p->rc;
}

/* A table in FROM or JOIN: a dotted name, or a 'quoted path' of a table
 * directory or metadata file (as floe scan takes, and DuckDB's FROM 'x'). */
static int table_func_parse(parser *p, sql_name *out);

/* an option's value: a 'string', or a number or TRUE/FALSE as its text (Flink
 * wants strings; these are accepted as written) */
static int opt_value(parser *p, const char **out, const char *what)
{
	if (p->t.kind == TK_NUMBER || (p->t.kind == TK_WORD && (is_kw(p, "TRUE") || is_kw(p, "FALSE")))) {
		if (!(*out = floe_arena_strndup(p->a, p->s + p->t.off, p->t.len)))
			return poom(p);
		return next(p);
	}
	*out = string_lit(p, what);
	return p->rc;
}

static int table_name_parse(parser *p, sql_name *out)
{
	if (p->t.kind != TK_STRING) {
		if (name_parse(p, out, "a table name"))
			return p->rc;
		return out->n == 1 && is_p(p, "(") ? table_func_parse(p, out) : p->rc;
	}
	out->off = p->t.off;
	out->path = true;
	out->n = 1;
	if (!(out->parts = floe_arena_calloc(p->a, 1, sizeof(char *))))
		return poom(p);
	out->parts[0] = string_lit(p, "a table path");
	if (!p->rc && !*out->parts[0])
		return perr(p, out->off, "a table path is empty");
	return p->rc;
}

/*
 * name('path' [, key = value ...]): a table function over a table by path
 * (DuckDB's iceberg_metadata and friends). The values are literals: 'text',
 * numbers, TRUE and FALSE, kept as their text.
 */
static int table_func_parse(parser *p, sql_name *out)
{
	char b[64];
	const char *fn = out->parts[0];
	char *lower = floe_arena_strdup(p->a, fn);
	if (!lower)
		return poom(p);
	for (char *c = lower; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	out->func = lower;
	out->path = true;
	if (next(p))
		return p->rc;
	if (p->t.kind != TK_STRING)
		return perr(p, p->t.off, "%s takes a table path (a 'quoted string') first, found %s", fn,
			    tok_desc(p, b, sizeof(b)));
	if (!(out->parts[0] = string_lit(p, "a table path")))
		return p->rc;
	if (!*out->parts[0])
		return perr(p, out->off, "a table path is empty");
	vec v = {NULL, 0, 0, sizeof(sql_opt)};
	while (accept_p(p, ",")) {
		sql_opt *o = vec_push(p, &v);
		if (!o)
			return p->rc;
		o->off = p->t.off;
		const char *k = ident(p, "an argument name");
		if (!k)
			return p->rc;
		char *lk = floe_arena_strdup(p->a, k);
		if (!lk)
			return poom(p);
		for (char *c = lk; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		o->key = lk;
		if (expect_p(p, "="))
			return p->rc;
		if (opt_value(p, &o->value, "an argument value"))
			return p->rc;
		for (size_t i = 0; i + 1 < v.n; i++)
			if (!strcmp(((sql_opt *)v.data)[i].key, o->key))
				return perr(p, o->off, "argument '%s' is given twice", o->key);
	}
	out->args = v.data;
	out->n_args = v.n;
	return expect_p(p, ")");
}

const char *floe_sql__name_str(floe_arena *a, const sql_name *nm)
{
	floe_buf b;
	floe_buf_init(&b, 0);
	for (size_t i = 0; i < nm->n; i++)
		if ((i && floe_buf_putc(&b, '.')) || floe_buf_puts(&b, nm->parts[i]))
			break;
	const char *s = floe_arena_strndup(a, b.data ? (const char *)b.data : "", b.len);
	floe_buf_reset(&b);
	return s ? s : "?";
}

/* ( 'k' = 'v', ... ) */
static int options_parse(parser *p, sql_opt **out, size_t *n_out)
{
	vec v = {NULL, 0, 0, sizeof(sql_opt)};
	if (expect_p(p, "("))
		return p->rc;
	if (!is_p(p, ")")) {
		do {
			sql_opt *o = vec_push(p, &v);
			if (!o)
				return p->rc;
			o->off = p->t.off;
			if (!(o->key = string_lit(p, "an option key")))
				return p->rc;
			if (expect_p(p, "="))
				return p->rc;
			if (opt_value(p, &o->value, "an option value"))
				return p->rc;
			for (size_t i = 0; i + 1 < v.n; i++)
				if (!strcmp(((sql_opt *)v.data)[i].key, o->key))
					return perr(p, o->off, "option '%s' is given twice", o->key);
		} while (accept_p(p, ","));
	}
	if (expect_p(p, ")"))
		return p->rc;
	*out = v.data;
	*n_out = v.n;
	return 0;
}

/* / *+ OPTIONS('k'='v', ...) * / — the only hint floe knows. */
static int hint_parse(parser *p, sql_opt **out, size_t *n_out)
{
	uint32_t off = p->t.off;
	p->in_hint = true;
	if (next(p))
		return p->rc;
	do {
		if (!is_kw(p, "OPTIONS")) {
			char b[64];
			return perr(p, p->t.off, "unknown hint %s (floe knows OPTIONS('key'='value', ...))",
				    tok_desc(p, b, sizeof(b)));
		}
		if (next(p))
			return p->rc;
		sql_opt *o = NULL;
		size_t n = 0;
		if (options_parse(p, &o, &n))
			return p->rc;
		if (*n_out) /* a second OPTIONS in the same hint: concatenate */
		{
			sql_opt *all = floe_arena_calloc(p->a, *n_out + n, sizeof(sql_opt));
			if (!all)
				return poom(p);
			memcpy(all, *out, *n_out * sizeof(sql_opt));
			memcpy(all + *n_out, o, n * sizeof(sql_opt));
			*out = all;
			*n_out += n;
		} else {
			*out = o;
			*n_out = n;
		}
	} while (accept_p(p, ","));
	if (p->t.kind != TK_HINT_END) {
		char b[64];
		return perr(p, p->t.kind == TK_EOF ? off : p->t.off,
			    "expected '*/' to end the hint, found %s", tok_desc(p, b, sizeof(b)));
	}
	p->in_hint = false;
	return next(p);
}

/* ---- types ------------------------------------------------------------------- */

static int type_parse(parser *p, sql_type **out);

static int int_arg(parser *p, int32_t *out, const char *what)
{
	char b[64];
	if (p->t.kind != TK_NUMBER || !floe_parse_i32(p->s + p->t.off, p->t.len, out) || *out < 0)
		return perr(p, p->t.off, "expected %s (a number), found %s", what,
			    tok_desc(p, b, sizeof(b)));
	return next(p);
}

static int row_fields(parser *p, sql_type *t, const char *close)
{
	vec v = {NULL, 0, 0, sizeof(sql_column)};
	if (!is_p(p, close)) {
		do {
			sql_column *c = vec_push(p, &v);
			if (!c)
				return p->rc;
			c->off = p->t.off;
			if (!(c->name = ident(p, "a field name")))
				return p->rc;
			accept_p(p, ":");
			if (type_parse(p, &c->type))
				return p->rc;
			if (p->t.kind == TK_STRING) { /* ROW<a INT 'doc'> */
				c->comment = p->t.val;
				if (next(p))
					return p->rc;
			}
			for (size_t i = 0; i + 1 < v.n; i++)
				if (!strcasecmp(((sql_column *)v.data)[i].name, c->name))
					return perr(p, c->off, "field '%s' appears twice", c->name);
		} while (accept_p(p, ","));
	}
	if (expect_p(p, close))
		return p->rc;
	t->fields = v.data;
	t->n_fields = v.n;
	return 0;
}

static int type_parse(parser *p, sql_type **out)
{
	char b[64];
	if (p->rc)
		return p->rc;
	if (++p->depth > SQL_MAX_DEPTH)
		return perr(p, p->t.off, "types nest too deeply (at most %d levels)", SQL_MAX_DEPTH);
	sql_type *t = floe_arena_calloc(p->a, 1, sizeof(*t));
	if (!t)
		return poom(p);
	t->p = t->s = -1;
	t->off = p->t.off;
	if (p->t.kind != TK_WORD)
		return perr(p, p->t.off, "expected a data type, found %s", tok_desc(p, b, sizeof(b)));
	if (!(t->name = word_upper(p)) || next(p))
		return p->rc;
	const char *nm = t->name;
	if (!strcmp(nm, "DOUBLE")) {
		accept_kw(p, "PRECISION");
	} else if (!strcmp(nm, "CHARACTER")) {
		if (accept_kw(p, "VARYING"))
			t->name = "VARCHAR";
		else
			t->name = "CHAR";
	} else if (!strcmp(nm, "ARRAY") || !strcmp(nm, "MULTISET")) {
		if (expect_p(p, "<") || type_parse(p, &t->elem) || expect_p(p, ">"))
			return p->rc;
		goto done;
	} else if (!strcmp(nm, "MAP")) {
		if (expect_p(p, "<") || type_parse(p, &t->key) || expect_p(p, ",") ||
		    type_parse(p, &t->value) || expect_p(p, ">"))
			return p->rc;
		goto done;
	} else if (!strcmp(nm, "ROW")) {
		if (accept_p(p, "<")) {
			if (row_fields(p, t, ">"))
				return p->rc;
		} else if (expect_p(p, "(") || row_fields(p, t, ")")) {
			return p->rc;
		}
		goto done;
	}
	if (accept_p(p, "(")) {
		if (int_arg(p, &t->p, "a length or precision"))
			return p->rc;
		if (accept_p(p, ",") && int_arg(p, &t->s, "a scale"))
			return p->rc;
		if (expect_p(p, ")"))
			return p->rc;
	}
	if (!strcmp(t->name, "TIMESTAMP") || !strcmp(t->name, "TIME")) {
		if (is_kw(p, "WITH") || is_kw(p, "WITHOUT")) {
			bool with = is_kw(p, "WITH");
			if (next(p))
				return p->rc;
			bool local = with && accept_kw(p, "LOCAL");
			if (expect_kw(p, "TIME") || expect_kw(p, "ZONE"))
				return p->rc;
			if (with && !local)
				return perr(p, t->off, "TIMESTAMP WITH TIME ZONE is not a Flink type: use "
						       "TIMESTAMP_LTZ (TIMESTAMP WITH LOCAL TIME ZONE)");
			if (local)
				t->name = "TIMESTAMP_LTZ";
		}
	}
done:
	if (is_kw(p, "NOT")) {
		/* NOT NULL belongs to the type (nested types carry it too) */
		uint32_t off = p->t.off;
		if (next(p))
			return p->rc;
		if (!is_kw(p, "NULL"))
			return perr(p, off, "expected NOT NULL");
		if (next(p))
			return p->rc;
		t->not_null = true;
	} else if (is_kw(p, "NULL")) {
		if (next(p))
			return p->rc;
	}
	p->depth--;
	*out = t;
	return 0;
}

/* ---- expressions ------------------------------------------------------------- */

static int expr_parse(parser *p, sql_expr **out);
static int select_parse(parser *p, sql_select **out);

static sql_expr *enew(parser *p, sql_expr_kind k, uint32_t off)
{
	sql_expr *e = floe_arena_calloc(p->a, 1, sizeof(*e));
	if (!e) {
		poom(p);
		return NULL;
	}
	e->kind = k;
	e->off = off;
	return e;
}

static int set_args(parser *p, sql_expr *e, sql_expr **args, size_t n)
{
	e->args = floe_arena_calloc(p->a, n ? n : 1, sizeof(sql_expr *));
	if (!e->args)
		return poom(p);
	if (n)
		memcpy(e->args, args, n * sizeof(sql_expr *));
	e->n_args = n;
	return 0;
}

static sql_expr *binary(parser *p, const char *op, sql_expr *l, sql_expr *r)
{
	sql_expr *e = enew(p, SQL_E_BINARY, l->off);
	sql_expr *args[2] = {l, r};
	if (!e || set_args(p, e, args, 2))
		return NULL;
	e->op = op;
	e->end = r->end;
	return e;
}

static int expr_list(parser *p, vec *v)
{
	do {
		sql_expr **slot = vec_push(p, v);
		if (!slot || expr_parse(p, slot))
			return p->rc;
	} while (accept_p(p, ","));
	return p->rc;
}

static int primary(parser *p, sql_expr **out)
{
	char b[64];
	uint32_t off = p->t.off;
	sql_expr *e = NULL;
	if (p->rc)
		return p->rc;
	switch (p->t.kind) {
	case TK_STRING:
		if (!(e = enew(p, SQL_E_STR, off)))
			return p->rc;
		e->text = p->t.val;
		break;
	case TK_NUMBER:
		if (!(e = enew(p, SQL_E_NUM, off)) ||
		    !(e->text = floe_arena_strndup(p->a, p->s + off, p->t.len)))
			return poom(p);
		break;
	case TK_PUNCT:
		if (is_p(p, "(")) {
			if (next(p))
				return p->rc;
			if (is_kw(p, "SELECT")) {
				/* a scalar subquery */
				if (!(e = enew(p, SQL_E_SUBQUERY, off)) || select_parse(p, &e->sub))
					return p->rc;
				e->end = p->t.off + p->t.len;
				if (expect_p(p, ")"))
					return p->rc;
				*out = e;
				return 0;
			}
			if (expr_parse(p, &e) || expect_p(p, ")"))
				return p->rc;
			e->off = off;
			e->end = (uint32_t)(p->t.off); /* approximately: up to the next token */
			*out = e;
			return 0;
		}
		if (is_p(p, "*")) {
			if (!(e = enew(p, SQL_E_STAR, off)))
				return p->rc;
			break;
		}
		return perr(p, off, "expected an expression, found %s", tok_desc(p, b, sizeof(b)));
	case TK_QIDENT:
	case TK_WORD: {
		if (p->t.kind == TK_WORD) {
			if (is_clause_word(p) && !is_kw(p, "LEFT") && !is_kw(p, "RIGHT"))
				return perr(p, off, "expected an expression, found %s",
					    tok_desc(p, b, sizeof(b)));
			if (is_kw(p, "NULL") || is_kw(p, "TRUE") || is_kw(p, "FALSE")) {
				if (!(e = enew(p, is_kw(p, "NULL") ? SQL_E_NULL : SQL_E_BOOL, off)) ||
				    !(e->text = word_upper(p)))
					return p->rc;
				break;
			}
			if (is_kw(p, "EXISTS")) {
				if (!(e = enew(p, SQL_E_EXISTS, off)) || next(p) || expect_p(p, "("))
					return p->rc;
				if (!is_kw(p, "SELECT"))
					return perr(p, p->t.off, "expected SELECT after EXISTS (, found %s",
						    tok_desc(p, b, sizeof(b)));
				if (select_parse(p, &e->sub))
					return p->rc;
				e->end = p->t.off + p->t.len;
				if (expect_p(p, ")"))
					return p->rc;
				*out = e;
				return 0;
			}
			if (is_kw(p, "CAST") || is_kw(p, "TRY_CAST")) {
				if (!(e = enew(p, SQL_E_CAST, off)) || !(e->text = word_upper(p)))
					return p->rc;
				sql_expr *arg;
				if (next(p) || expect_p(p, "(") || expr_parse(p, &arg) ||
				    expect_kw(p, "AS") || type_parse(p, &e->type) || set_args(p, e, &arg, 1))
					return p->rc;
				e->end = p->t.off + p->t.len;
				if (expect_p(p, ")"))
					return p->rc;
				*out = e;
				return 0;
			}
			if (is_kw(p, "CASE")) {
				vec v = {NULL, 0, 0, sizeof(sql_expr *)};
				if (!(e = enew(p, SQL_E_CASE, off)) || next(p))
					return p->rc;
				sql_expr **slot = vec_push(p, &v);
				if (!slot)
					return p->rc;
				if (!is_kw(p, "WHEN") && expr_parse(p, slot))
					return p->rc;
				if (!is_kw(p, "WHEN"))
					return perr(p, p->t.off, "expected WHEN, found %s",
						    tok_desc(p, b, sizeof(b)));
				while (accept_kw(p, "WHEN")) {
					sql_expr **w = vec_push(p, &v);
					if (!w || expr_parse(p, w) || expect_kw(p, "THEN"))
						return p->rc;
					sql_expr **t = vec_push(p, &v);
					if (!t || expr_parse(p, t))
						return p->rc;
				}
				sql_expr **el = vec_push(p, &v);
				if (!el)
					return p->rc;
				if (accept_kw(p, "ELSE") && expr_parse(p, el))
					return p->rc;
				e->end = p->t.off + p->t.len;
				if (expect_kw(p, "END") || set_args(p, e, v.data, v.n))
					return p->rc;
				*out = e;
				return 0;
			}
			if (is_kw(p, "INTERVAL")) {
				if (!(e = enew(p, SQL_E_INTERVAL, off)) || next(p))
					return p->rc;
				if (!(e->text = string_lit(p, "the interval's value")))
					return p->rc;
				if (p->t.kind != TK_WORD)
					return perr(p, p->t.off, "expected an interval unit (SECOND, MINUTE, "
								 "HOUR, DAY, MONTH, YEAR), found %s",
						    tok_desc(p, b, sizeof(b)));
				if (!(e->op = word_upper(p)))
					return p->rc;
				break;
			}
			if (is_kw(p, "DATE") || is_kw(p, "TIME") || is_kw(p, "TIMESTAMP") ||
			    is_kw(p, "TIMESTAMP_LTZ")) {
				/* a typed literal when a string follows, else a column named so */
				size_t save_pos = p->pos;
				tok save = p->t;
				const char *kw = word_upper(p);
				if (!kw || next(p))
					return p->rc;
				if (p->t.kind == TK_STRING) {
					sql_expr *lit;
					if (!(e = enew(p, SQL_E_TYPED, off)) || !(lit = enew(p, SQL_E_STR, p->t.off)))
						return p->rc;
					e->text = kw;
					lit->text = p->t.val;
					lit->end = p->t.off + p->t.len;
					if (set_args(p, e, &lit, 1))
						return p->rc;
					break;
				}
				p->pos = save_pos;
				p->t = save;
			}
		}
		/* a name, a function call, or name.* */
		sql_name nm = {NULL, 0, off, false, NULL, NULL, 0};
		vec v = {NULL, 0, 0, sizeof(const char *)};
		for (;;) {
			const char **slot = vec_push(p, &v);
			if (!slot || !(*slot = ident(p, "a name")))
				return p->rc;
			if (!is_p(p, "."))
				break;
			if (next(p))
				return p->rc;
			if (is_p(p, "*")) {
				if (!(e = enew(p, SQL_E_STAR, off)))
					return p->rc;
				e->name.parts = v.data;
				e->name.n = v.n;
				e->name.off = off;
				e->end = p->t.off + 1;
				if (next(p))
					return p->rc;
				*out = e;
				return 0;
			}
		}
		nm.parts = v.data;
		nm.n = v.n;
		if (is_p(p, "(") && nm.n == 1) {
			if (!(e = enew(p, SQL_E_CALL, off)))
				return p->rc;
			char *fn = floe_arena_strdup(p->a, nm.parts[0]);
			if (!fn)
				return poom(p);
			for (char *c = fn; *c; c++)
				if (*c >= 'a' && *c <= 'z')
					*c = (char)(*c - 'a' + 'A');
			e->text = fn;
			e->name = nm;
			if (next(p))
				return p->rc;
			vec args = {NULL, 0, 0, sizeof(sql_expr *)};
			if (is_p(p, "*")) {
				e->star = true;
				if (next(p))
					return p->rc;
			} else if (!strcmp(fn, "EXTRACT")) {
				/* EXTRACT(unit FROM e): args 'UNIT', e */
				sql_expr **u = vec_push(p, &args), **x;
				if (!u || !(*u = enew(p, SQL_E_STR, p->t.off)))
					return p->rc;
				if (p->t.kind != TK_WORD)
					return perr(p, p->t.off, "expected a time unit (YEAR, MONTH, DAY, "
								 "HOUR, ...), found %s",
						    tok_desc(p, b, sizeof(b)));
				if (!((*u)->text = word_upper(p)) || next(p) || expect_kw(p, "FROM") ||
				    !(x = vec_push(p, &args)) || expr_parse(p, x))
					return p->rc;
			} else if (!is_p(p, ")")) {
				if (accept_kw(p, "DISTINCT"))
					e->distinct = true;
				if (expr_list(p, &args))
					return p->rc;
				bool fl = !strcmp(fn, "FLOOR") || !strcmp(fn, "CEIL") || !strcmp(fn, "CEILING");
				if (fl && args.n == 1 && is_kw(p, "TO")) {
					/* FLOOR(ts TO HOUR): args ts, 'HOUR' */
					sql_expr **u;
					if (next(p) || !(u = vec_push(p, &args)) ||
					    !(*u = enew(p, SQL_E_STR, p->t.off)))
						return p->rc;
					if (p->t.kind != TK_WORD)
						return perr(p, p->t.off, "expected a time unit, found %s",
							    tok_desc(p, b, sizeof(b)));
					if (!((*u)->text = word_upper(p)) || next(p))
						return p->rc;
				}
				bool sub = !strcmp(fn, "SUBSTRING") || !strcmp(fn, "SUBSTR");
				if (sub && args.n == 1 && accept_kw(p, "FROM")) {
					/* SUBSTRING(s FROM start [FOR len]) */
					sql_expr **x = vec_push(p, &args);
					if (!x || expr_parse(p, x))
						return p->rc;
					if (accept_kw(p, "FOR") && (!(x = vec_push(p, &args)) || expr_parse(p, x)))
						return p->rc;
				}
			}
			if (set_args(p, e, args.data, args.n))
				return p->rc;
			e->end = p->t.off + p->t.len;
			if (expect_p(p, ")"))
				return p->rc;
			*out = e;
			return 0;
		}
		if (!(e = enew(p, SQL_E_COL, off)))
			return p->rc;
		e->name = nm;
		e->end = (uint32_t)(p->t.off);
		/* end: the last name part's end; recompute from the source */
		{
			size_t end = off;
			const char *last = NULL;
			(void)last;
			/* the previous token ended before whitespace: scan back */
			end = p->t.off;
			while (end > off && (p->s[end - 1] == ' ' || p->s[end - 1] == '\t' ||
					     p->s[end - 1] == '\n' || p->s[end - 1] == '\r'))
				end--;
			e->end = (uint32_t)end;
		}
		*out = e;
		return 0;
	}
	default:
		return perr(p, off, "expected an expression, found %s", tok_desc(p, b, sizeof(b)));
	}
	e->end = p->t.off + p->t.len;
	if (next(p))
		return p->rc;
	*out = e;
	return 0;
}

static int unary(parser *p, sql_expr **out)
{
	uint32_t off = p->t.off;
	if (is_p(p, "-") || is_p(p, "+")) {
		const char *op = is_p(p, "-") ? "-" : "+";
		sql_expr *e, *arg;
		if (++p->depth > SQL_MAX_DEPTH)
			return perr(p, off, "expression nests too deeply");
		if (next(p) || unary(p, &arg) || !(e = enew(p, SQL_E_UNARY, off)) ||
		    set_args(p, e, &arg, 1))
			return p->rc;
		p->depth--;
		e->op = op;
		e->end = arg->end;
		*out = e;
		return 0;
	}
	if (primary(p, out))
		return p->rc;
	/* subscripts: map['key'], array[1] (Flink's ITEM) */
	while (is_p(p, "[")) {
		sql_expr *idx, *e;
		if (next(p) || expr_parse(p, &idx))
			return p->rc;
		sql_expr *args[2] = {*out, idx};
		if (!(e = enew(p, SQL_E_CALL, off)) || set_args(p, e, args, 2))
			return p->rc;
		e->text = "ITEM";
		e->end = p->t.off + p->t.len;
		if (expect_p(p, "]"))
			return p->rc;
		*out = e;
	}
	return 0;
}

static int mul(parser *p, sql_expr **out)
{
	sql_expr *l, *r;
	if (unary(p, &l))
		return p->rc;
	while (is_p(p, "*") || is_p(p, "/") || is_p(p, "%")) {
		const char *op = is_p(p, "*") ? "*" : is_p(p, "/") ? "/" : "%";
		if (next(p) || unary(p, &r) || !(l = binary(p, op, l, r)))
			return p->rc;
	}
	*out = l;
	return 0;
}

static int add(parser *p, sql_expr **out)
{
	sql_expr *l, *r;
	if (mul(p, &l))
		return p->rc;
	while (is_p(p, "+") || is_p(p, "-") || is_p(p, "||")) {
		const char *op = is_p(p, "+") ? "+" : is_p(p, "-") ? "-" : "||";
		if (next(p) || mul(p, &r) || !(l = binary(p, op, l, r)))
			return p->rc;
	}
	*out = l;
	return 0;
}

static int comparison(parser *p, sql_expr **out)
{
	sql_expr *l, *r, *e;
	char b[64];
	if (add(p, &l))
		return p->rc;
	static const char *const ops[] = {"=", "==", "<>", "!=", "<=", ">=", "<", ">"};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (is_p(p, ops[i])) {
			const char *op = !strcmp(ops[i], "==") ? "=" : !strcmp(ops[i], "!=") ? "<>" : ops[i];
			if (next(p) || add(p, &r) || !(l = binary(p, op, l, r)))
				return p->rc;
			*out = l;
			return 0;
		}
	}
	if (is_kw(p, "IS")) {
		if (next(p) || !(e = enew(p, SQL_E_IS, l->off)))
			return p->rc;
		e->negated = accept_kw(p, "NOT");
		if (!is_kw(p, "NULL") && !is_kw(p, "TRUE") && !is_kw(p, "FALSE"))
			return perr(p, p->t.off, "expected NULL, TRUE or FALSE after IS, found %s",
				    tok_desc(p, b, sizeof(b)));
		if (!(e->text = word_upper(p)) || set_args(p, e, &l, 1))
			return p->rc;
		e->end = p->t.off + p->t.len;
		if (next(p))
			return p->rc;
		*out = e;
		return 0;
	}
	bool neg = false;
	uint32_t not_off = p->t.off;
	if (is_kw(p, "NOT")) {
		neg = true;
		if (next(p))
			return p->rc;
		if (!is_kw(p, "IN") && !is_kw(p, "BETWEEN") && !is_kw(p, "LIKE"))
			return perr(p, not_off, "expected IN, BETWEEN or LIKE after NOT");
	}
	if (is_kw(p, "IN")) {
		vec v = {NULL, 0, 0, sizeof(sql_expr *)};
		sql_expr **first = vec_push(p, &v);
		if (!first)
			return p->rc;
		*first = l;
		if (next(p) || !(e = enew(p, SQL_E_IN, l->off)) || expect_p(p, "("))
			return p->rc;
		if (is_kw(p, "SELECT")) {
			/* x IN (SELECT ...) */
			if (select_parse(p, &e->sub))
				return p->rc;
		} else if (expr_list(p, &v)) {
			return p->rc;
		}
		e->end = p->t.off + p->t.len;
		if (expect_p(p, ")") || set_args(p, e, v.data, v.n))
			return p->rc;
		e->negated = neg;
		*out = e;
		return 0;
	}
	if (is_kw(p, "BETWEEN")) {
		sql_expr *args[3] = {l, NULL, NULL};
		if (next(p) || !(e = enew(p, SQL_E_BETWEEN, l->off)) || add(p, &args[1]) ||
		    expect_kw(p, "AND") || add(p, &args[2]) || set_args(p, e, args, 3))
			return p->rc;
		e->negated = neg;
		e->end = args[2]->end;
		*out = e;
		return 0;
	}
	if (is_kw(p, "LIKE")) {
		sql_expr *args[2] = {l, NULL};
		if (next(p) || !(e = enew(p, SQL_E_LIKE, l->off)) || add(p, &args[1]) ||
		    set_args(p, e, args, 2))
			return p->rc;
		e->negated = neg;
		e->end = args[1]->end;
		*out = e;
		return 0;
	}
	*out = l;
	return 0;
}

static int not_expr(parser *p, sql_expr **out)
{
	uint32_t off = p->t.off;
	if (is_kw(p, "NOT")) {
		sql_expr *arg, *e;
		if (++p->depth > SQL_MAX_DEPTH)
			return perr(p, off, "expression nests too deeply");
		if (next(p) || not_expr(p, &arg) || !(e = enew(p, SQL_E_UNARY, off)) ||
		    set_args(p, e, &arg, 1))
			return p->rc;
		p->depth--;
		e->op = "NOT";
		e->end = arg->end;
		*out = e;
		return 0;
	}
	return comparison(p, out);
}

static int and_expr(parser *p, sql_expr **out)
{
	sql_expr *l, *r;
	if (not_expr(p, &l))
		return p->rc;
	while (is_kw(p, "AND")) {
		if (next(p) || not_expr(p, &r) || !(l = binary(p, "AND", l, r)))
			return p->rc;
	}
	*out = l;
	return 0;
}

static int expr_parse(parser *p, sql_expr **out)
{
	sql_expr *l, *r;
	if (p->rc)
		return p->rc;
	if (++p->depth > SQL_MAX_DEPTH)
		return perr(p, p->t.off, "expression nests too deeply (at most %d levels)",
			    SQL_MAX_DEPTH);
	if (and_expr(p, &l))
		return p->rc;
	while (is_kw(p, "OR")) {
		if (next(p) || and_expr(p, &r) || !(l = binary(p, "OR", l, r)))
			return p->rc;
	}
	p->depth--;
	*out = l;
	return 0;
}

/* ---- SELECT ------------------------------------------------------------------ */

/* ( SELECT ... ) in FROM or JOIN */
static int select_parse(parser *p, sql_select **out);

/* VALUES (e, ...), (e, ...): a SELECT of each row, UNION ALL of them (the
 * columns named col0, col1, ... unless the alias names them) */
static int values_parse(parser *p, sql_select **out)
{
	char b[64];
	uint32_t off = p->t.off;
	if (next(p))
		return p->rc;
	sql_select *first = NULL, *prev = NULL;
	size_t width = 0;
	do {
		uint32_t row_off = p->t.off;
		vec v = {NULL, 0, 0, sizeof(sql_expr *)};
		if (expect_p(p, "(") || expr_list(p, &v) || expect_p(p, ")"))
			return p->rc;
		if (first && v.n != width)
			return perr(p, row_off, "a VALUES row of %zu values; the first has %zu", v.n, width);
		sql_select *q = floe_arena_calloc(p->a, 1, sizeof(*q));
		const char **al = floe_arena_calloc(p->a, v.n + 1, sizeof(char *));
		if (!q || !al)
			return poom(p);
		q->limit = q->u_limit = -1;
		q->off = row_off;
		q->items = v.data;
		q->n_items = v.n;
		q->aliases = al;
		for (size_t i = 0; i < v.n; i++)
			if (!(al[i] = floe_arena_sprintf(p->a, "col%zu", i)))
				return poom(p);
		if (!first) {
			first = q;
			width = v.n;
		} else {
			prev->union_next = q;
			prev->union_all = true;
			prev->set_op = 'U';
		}
		prev = q;
	} while (accept_p(p, ","));
	if (!first)
		return perr(p, off, "expected a row after VALUES, found %s", tok_desc(p, b, sizeof(b)));
	*out = first;
	return p->rc;
}

static int subquery_parse(parser *p, sql_select **out)
{
	char b[64];
	if (expect_p(p, "("))
		return p->rc;
	if (is_kw(p, "VALUES"))
		return values_parse(p, out) ? p->rc : expect_p(p, ")");
	if (!is_kw(p, "SELECT"))
		return perr(p, p->t.off, "expected SELECT in a subquery, found %s",
			    tok_desc(p, b, sizeof(b)));
	if (select_parse(p, out))
		return p->rc;
	return expect_p(p, ")");
}

static int ident_list(parser *p, const char ***out, size_t *n_out, const char *what);

/* UNNEST(expr) [WITH ORDINALITY] [[AS] alias [(c1, c2, ...)]] */
static int unnest_parse(parser *p, sql_join *j)
{
	if (next(p) || expect_p(p, "(") || expr_parse(p, &j->unnest) || expect_p(p, ")"))
		return p->rc;
	if (accept_kw(p, "WITH")) {
		if (expect_kw(p, "ORDINALITY"))
			return p->rc;
		j->ordinality = true;
	}
	if (accept_kw(p, "AS")) {
		if (!(j->alias = ident(p, "an alias")))
			return p->rc;
	} else if ((p->t.kind == TK_WORD && !is_clause_word(p)) || p->t.kind == TK_QIDENT) {
		if (!(j->alias = ident(p, "an alias")))
			return p->rc;
	}
	if (j->alias && is_p(p, "(") &&
	    ident_list(p, &j->col_names, &j->n_col_names, "a column name"))
		return p->rc;
	return p->rc;
}

/* OFFSET n [ROWS]: after LIMIT, or before it (as DuckDB and PostgreSQL take it) */
static int offset_parse(parser *p, sql_select *q)
{
	char b[64];
	if (next(p))
		return p->rc;
	if (p->t.kind != TK_NUMBER || !floe_parse_i64(p->s + p->t.off, p->t.len, &q->offset) ||
	    q->offset < 0)
		return perr(p, p->t.off, "expected a row count after OFFSET, found %s",
			    tok_desc(p, b, sizeof(b)));
	if (next(p))
		return p->rc;
	if (!accept_kw(p, "ROWS"))
		accept_kw(p, "ROW");
	return p->rc;
}

/* q's u_* take an ORDER BY, LIMIT and OFFSET from a branch (which loses them) */
static void move_tail(sql_select *q, sql_order **order_by, size_t *n, int64_t *limit, int64_t *offset)
{
	q->u_order_by = *order_by;
	q->n_u_order_by = *n;
	q->u_limit = *limit;
	q->u_offset = *offset;
	*order_by = NULL;
	*n = 0;
	*limit = -1;
	*offset = 0;
}

static int select_parse(parser *p, sql_select **out)
{
	char b[64];
	sql_select *q = floe_arena_calloc(p->a, 1, sizeof(*q));
	if (!q)
		return poom(p);
	if (++p->depth > SQL_MAX_DEPTH)
		return perr(p, p->t.off, "the query nests too deeply (at most %d levels)",
			    SQL_MAX_DEPTH);
	q->limit = -1;
	q->u_limit = -1;
	q->off = p->t.off;
	if (expect_kw(p, "SELECT"))
		return p->rc;
	if (accept_kw(p, "DISTINCT"))
		q->distinct = true;
	else
		accept_kw(p, "ALL");
	vec items = {NULL, 0, 0, sizeof(sql_expr *)}, aliases = {NULL, 0, 0, sizeof(const char *)};
	do {
		sql_expr **slot = vec_push(p, &items);
		const char **al = vec_push(p, &aliases);
		if (!slot || !al || expr_parse(p, slot))
			return p->rc;
		if (accept_kw(p, "AS")) {
			if (!(*al = ident(p, "an alias")))
				return p->rc;
		} else if ((p->t.kind == TK_WORD && !is_clause_word(p)) || p->t.kind == TK_QIDENT) {
			if (!(*al = ident(p, "an alias")))
				return p->rc;
		}
	} while (accept_p(p, ","));
	q->items = items.data;
	q->aliases = aliases.data;
	q->n_items = items.n;
	if (accept_kw(p, "FROM")) {
		if (is_p(p, "(")) {
			if (subquery_parse(p, &q->from_sub))
				return p->rc;
		} else if (table_name_parse(p, &q->from)) {
			return p->rc;
		}
		if (p->t.kind == TK_HINT && hint_parse(p, &q->hints, &q->n_hints))
			return p->rc;
		/* an alias */
		if (accept_kw(p, "AS")) {
			if (!(q->from_alias = ident(p, "a table alias")))
				return p->rc;
		} else if ((p->t.kind == TK_WORD && !is_clause_word(p)) || p->t.kind == TK_QIDENT) {
			if (!(q->from_alias = ident(p, "a table alias")))
				return p->rc;
		}
		if (q->from_alias && q->from_sub && is_p(p, "(") &&
		    ident_list(p, &q->from_cols, &q->n_from_cols, "a column name"))
			return p->rc;
		vec joins = {NULL, 0, 0, sizeof(sql_join)};
		for (;;) {
			uint32_t joff = p->t.off;
			char kind;
			if (accept_p(p, ",")) {
				kind = 'C';
			} else if (accept_kw(p, "CROSS")) {
				kind = 'C';
				if (expect_kw(p, "JOIN"))
					return p->rc;
			} else if (accept_kw(p, "JOIN")) {
				kind = 'I';
			} else if (accept_kw(p, "INNER")) {
				kind = 'I';
				if (expect_kw(p, "JOIN"))
					return p->rc;
			} else if (is_kw(p, "LEFT") || is_kw(p, "RIGHT") || is_kw(p, "FULL")) {
				kind = is_kw(p, "LEFT") ? 'L' : is_kw(p, "RIGHT") ? 'R' : 'F';
				if (next(p))
					return p->rc;
				accept_kw(p, "OUTER");
				if (expect_kw(p, "JOIN"))
					return p->rc;
			} else {
				break;
			}
			if (p->rc)
				return p->rc;
			if (!q->has_join) {
				q->has_join = true;
				q->join_off = joff;
			}
			sql_join *j = vec_push(p, &joins);
			if (!j)
				return p->rc;
			j->kind = kind;
			j->off = joff;
			if (is_kw(p, "UNNEST")) {
				if (kind != 'C')
					return perr(p, p->t.off, "UNNEST joins as CROSS JOIN UNNEST(...) or "
								 "', UNNEST(...)'");
				if (unnest_parse(p, j))
					return p->rc;
				continue;
			}
			if (is_p(p, "(")) {
				if (subquery_parse(p, &j->sub))
					return p->rc;
			} else if (table_name_parse(p, &j->table)) {
				return p->rc;
			}
			if (p->t.kind == TK_HINT && hint_parse(p, &j->hints, &j->n_hints))
				return p->rc;
			if (accept_kw(p, "AS")) {
				if (!(j->alias = ident(p, "a table alias")))
					return p->rc;
			} else if ((p->t.kind == TK_WORD && !is_clause_word(p)) ||
				   p->t.kind == TK_QIDENT) {
				if (!(j->alias = ident(p, "a table alias")))
					return p->rc;
			}
			if (j->alias && j->sub && is_p(p, "(") &&
			    ident_list(p, &j->col_names, &j->n_col_names, "a column name"))
				return p->rc;
			if (kind != 'C') {
				if (is_kw(p, "USING")) {
					/* USING (a, b): ON l.a = r.a AND l.b = r.b, l the table before */
					uint32_t uoff = p->t.off;
					const char **cols;
					size_t nc;
					if (next(p) || ident_list(p, &cols, &nc, "a column name"))
						return p->rc;
					const char *lq = joins.n >= 2 ? ((sql_join *)joins.data)[joins.n - 2].alias
							 : q->from_alias;
					if (!lq && joins.n < 2 && !q->from_sub && q->from.n && !q->from.path)
						lq = q->from.parts[q->from.n - 1];
					if (!lq && joins.n >= 2 && ((sql_join *)joins.data)[joins.n - 2].table.n &&
					    !((sql_join *)joins.data)[joins.n - 2].table.path)
						lq = ((sql_join *)joins.data)[joins.n - 2].table
							     .parts[((sql_join *)joins.data)[joins.n - 2].table.n - 1];
					const char *rq = j->alias ? j->alias
							 : j->table.n && !j->table.path ? j->table.parts[j->table.n - 1]
											 : NULL;
					if (!lq || !rq)
						return perr(p, uoff, "USING needs both tables named (give each an alias)");
					sql_expr *on = NULL;
					for (size_t k = 0; k < nc; k++) {
						sql_expr *l = enew(p, SQL_E_COL, uoff), *r = enew(p, SQL_E_COL, uoff);
						const char **lp = floe_arena_calloc(p->a, 2, sizeof(char *));
						const char **rp = floe_arena_calloc(p->a, 2, sizeof(char *));
						if (!l || !r || !lp || !rp)
							return poom(p);
						lp[0] = lq;
						lp[1] = rp[1] = cols[k];
						rp[0] = rq;
						l->name = (sql_name){lp, 2, uoff, false, NULL, NULL, 0};
						r->name = (sql_name){rp, 2, uoff, false, NULL, NULL, 0};
						sql_expr *eq = binary(p, "=", l, r);
						if (!eq || (on && !(eq = binary(p, "AND", on, eq))))
							return p->rc ? p->rc : poom(p);
						on = eq;
					}
					j->on = on;
				} else if (expect_kw(p, "ON") || expr_parse(p, &j->on)) {
					return p->rc;
				}
			}
		}
		q->joins = joins.data;
		q->n_joins = joins.n;
	}
	if (accept_kw(p, "WHERE") && expr_parse(p, &q->where))
		return p->rc;
	if (accept_kw(p, "GROUP")) {
		vec v = {NULL, 0, 0, sizeof(sql_expr *)};
		if (expect_kw(p, "BY"))
			return p->rc;
		if (is_kw(p, "ALL")) {
			q->group_all = true;
			if (next(p))
				return p->rc;
		} else if (expr_list(p, &v)) {
			return p->rc;
		}
		q->group_by = v.data;
		q->n_group_by = v.n;
	}
	if (accept_kw(p, "HAVING") && expr_parse(p, &q->having))
		return p->rc;
	if (accept_kw(p, "ORDER")) {
		vec v = {NULL, 0, 0, sizeof(sql_order)};
		if (expect_kw(p, "BY"))
			return p->rc;
		do {
			sql_order *o = vec_push(p, &v);
			if (!o)
				return p->rc;
			if (v.n == 1 && is_kw(p, "ALL")) {
				/* ORDER BY ALL [ASC|DESC] [NULLS ...]: alone */
				o->all = true;
				if (next(p))
					return p->rc;
			} else if (expr_parse(p, &o->expr)) {
				return p->rc;
			}
			if (accept_kw(p, "DESC"))
				o->desc = true;
			else
				accept_kw(p, "ASC");
			if (accept_kw(p, "NULLS")) {
				if (accept_kw(p, "FIRST"))
					o->nulls = 1;
				else if (accept_kw(p, "LAST"))
					o->nulls = 2;
				else
					return perr(p, p->t.off, "expected FIRST or LAST after NULLS, "
								 "found %s", tok_desc(p, b, sizeof(b)));
			}
		} while (!((sql_order *)v.data)[0].all && accept_p(p, ","));
		q->order_by = v.data;
		q->n_order_by = v.n;
	}
	bool offset_first = is_kw(p, "OFFSET");
	if (offset_first && offset_parse(p, q))
		return p->rc;
	if (is_kw(p, "LIMIT")) {
		if (next(p))
			return p->rc;
		q->limit_off = p->t.off;
		if (p->t.kind != TK_NUMBER || !floe_parse_i64(p->s + p->t.off, p->t.len, &q->limit) ||
		    q->limit < 0)
			return perr(p, p->t.off, "expected a row count after LIMIT, found %s",
				    tok_desc(p, b, sizeof(b)));
		if (next(p))
			return p->rc;
	}
	if (!offset_first && is_kw(p, "OFFSET") && offset_parse(p, q))
		return p->rc;
	if (is_kw(p, "UNION") || is_kw(p, "EXCEPT") || is_kw(p, "MINUS") || is_kw(p, "INTERSECT")) {
		uint32_t op_off = p->t.off;
		q->set_op = is_kw(p, "UNION") ? 'U' : is_kw(p, "INTERSECT") ? 'I' : 'E';
		if (q->n_order_by || q->limit >= 0 || q->offset)
			return perr(p, p->t.off, "ORDER BY, LIMIT or OFFSET before %s: they go after "
						 "the last SELECT",
				    q->set_op == 'U' ? "UNION" : q->set_op == 'I' ? "INTERSECT" : "EXCEPT");
		if (next(p))
			return p->rc;
		q->union_all = accept_kw(p, "ALL");
		if (!q->union_all)
			accept_kw(p, "DISTINCT");
		if (!is_kw(p, "SELECT"))
			return perr(p, p->t.off, "expected SELECT after UNION, found %s",
				    tok_desc(p, b, sizeof(b)));
		sql_select *nx;
		if (select_parse(p, &nx))
			return p->rc;
		/* left to right; INTERSECT binds tighter than UNION and EXCEPT in SQL,
		 * so a mix of them needs a derived table to say which is meant */
		if (nx->union_next && (nx->set_op == 'I') != (q->set_op == 'I'))
			return perr(p, op_off, "INTERSECT mixed with UNION or EXCEPT: group the "
					       "branches with FROM (SELECT ...)");
		q->union_next = nx;
		/* the tail after the last branch belongs to the whole set operation */
		if (nx->union_next)
			move_tail(q, &nx->u_order_by, &nx->n_u_order_by, &nx->u_limit, &nx->u_offset);
		else
			move_tail(q, &nx->order_by, &nx->n_order_by, &nx->limit, &nx->offset);
	}
	p->depth--;
	*out = q;
	return 0;
}

/* ---- statements -------------------------------------------------------------- */

static int column_def(parser *p, sql_column *c, sql_stmt *st)
{
	c->off = p->t.off;
	if (!(c->name = ident(p, "a column name")))
		return p->rc;
	if (accept_kw(p, "AS")) {
		if (expr_parse(p, &c->expr))
			return p->rc;
	} else if (type_parse(p, &c->type)) {
		return p->rc;
	}
	for (;;) {
		if (is_kw(p, "METADATA")) {
			if (next(p))
				return p->rc;
			c->metadata = "";
			if (accept_kw(p, "FROM") && !(c->metadata = string_lit(p, "a metadata key")))
				return p->rc;
			accept_kw(p, "VIRTUAL");
		} else if (is_kw(p, "PRIMARY")) {
			if (next(p) || expect_kw(p, "KEY") || expect_kw(p, "NOT") ||
			    expect_kw(p, "ENFORCED"))
				return p->rc;
			c->primary_key = true;
			if (c->type)
				c->type->not_null = true;
		} else if (is_kw(p, "COMMENT")) {
			if (next(p) || !(c->comment = string_lit(p, "a comment")))
				return p->rc;
		} else if (is_kw(p, "NOT") && c->type && !c->type->not_null) {
			if (next(p) || expect_kw(p, "NULL"))
				return p->rc;
			c->type->not_null = true;
		} else {
			break;
		}
	}
	(void)st;
	return 0;
}

static int ident_list(parser *p, const char ***out, size_t *n_out, const char *what)
{
	vec v = {NULL, 0, 0, sizeof(const char *)};
	if (expect_p(p, "("))
		return p->rc;
	do {
		const char **slot = vec_push(p, &v);
		if (!slot || !(*slot = ident(p, what)))
			return p->rc;
	} while (accept_p(p, ","));
	if (expect_p(p, ")"))
		return p->rc;
	*out = v.data;
	*n_out = v.n;
	return 0;
}

static int create_table(parser *p, sql_stmt *st)
{
	char b[64];
	st->kind = SQL_S_CREATE_TABLE;
	if (accept_kw(p, "IF")) {
		if (expect_kw(p, "NOT") || expect_kw(p, "EXISTS"))
			return p->rc;
		st->if_not_exists = true;
	}
	if (name_parse(p, &st->name, "a table name"))
		return p->rc;
	if (is_kw(p, "LIKE")) {
		if (next(p) || name_parse(p, &st->like, "a table name"))
			return p->rc;
	} else {
		vec cols = {NULL, 0, 0, sizeof(sql_column)};
		if (expect_p(p, "("))
			return p->rc;
		do {
			if (is_kw(p, "PRIMARY")) {
				if (st->pk)
					return perr(p, p->t.off, "the primary key is given twice");
				st->pk_off = p->t.off;
				if (next(p) || expect_kw(p, "KEY") ||
				    ident_list(p, &st->pk, &st->n_pk, "a column name"))
					return p->rc;
				if (!is_kw(p, "NOT"))
					return perr(p, p->t.off, "expected NOT ENFORCED: Flink does not "
								 "enforce primary keys, and neither does "
								 "Iceberg");
				if (next(p) || expect_kw(p, "ENFORCED"))
					return p->rc;
			} else if (is_kw(p, "CONSTRAINT")) {
				if (next(p) || !ident(p, "a constraint name"))
					return p->rc;
				if (!is_kw(p, "PRIMARY"))
					return perr(p, p->t.off, "expected PRIMARY KEY, found %s",
						    tok_desc(p, b, sizeof(b)));
				st->pk_off = p->t.off;
				if (next(p) || expect_kw(p, "KEY") ||
				    ident_list(p, &st->pk, &st->n_pk, "a column name") ||
				    expect_kw(p, "NOT") || expect_kw(p, "ENFORCED"))
					return p->rc;
			} else if (is_kw(p, "WATERMARK")) {
				/* WATERMARK FOR col AS expr: event time for Flink's windows */
				sql_expr *e;
				if (next(p) || expect_kw(p, "FOR") || !ident(p, "a column name") ||
				    expect_kw(p, "AS") || expr_parse(p, &e))
					return p->rc;
				st->has_watermark = true;
			} else {
				sql_column *c = vec_push(p, &cols);
				if (!c || column_def(p, c, st))
					return p->rc;
				for (size_t i = 0; i + 1 < cols.n; i++)
					if (!strcasecmp(((sql_column *)cols.data)[i].name, c->name))
						return perr(p, c->off, "column '%s' appears twice",
							    c->name);
			}
		} while (accept_p(p, ","));
		if (expect_p(p, ")"))
			return p->rc;
		st->cols = cols.data;
		st->n_cols = cols.n;
	}
	if (accept_kw(p, "COMMENT") && !(st->comment = string_lit(p, "a comment")))
		return p->rc;
	if (accept_kw(p, "PARTITIONED")) {
		vec v = {NULL, 0, 0, sizeof(sql_expr *)};
		if (expect_kw(p, "BY") || expect_p(p, "(") || expr_list(p, &v) || expect_p(p, ")"))
			return p->rc;
		st->partition = v.data;
		st->n_partition = v.n;
	}
	if (accept_kw(p, "WITH") && options_parse(p, &st->opts, &st->n_opts))
		return p->rc;
	return p->rc;
}

/*
 * The text of an expression list as written, up to (not including) one of
 * the words `stop` at parenthesis depth 0 or the statement's end, with
 * backquotes dropped: a partition expression or a sort order for floe's own
 * parser of them (the same grammar `floe table alter` takes).
 */
static const char *raw_text(parser *p, const char *const *stop, const char *what)
{
	char b[64];
	uint32_t start = p->t.off, end = start;
	int depth = 0;
	for (;;) {
		if (p->t.kind == TK_EOF || (depth == 0 && is_p(p, ";")))
			break;
		bool stopped = false;
		for (size_t i = 0; depth == 0 && stop && stop[i]; i++)
			stopped |= is_kw(p, stop[i]);
		if (stopped)
			break;
		if (is_p(p, "("))
			depth++;
		else if (is_p(p, ")") && --depth < 0)
			break;
		end = p->t.off + p->t.len;
		if (next(p))
			return NULL;
	}
	if (end == start) {
		perr(p, p->t.off, "expected %s, found %s", what, tok_desc(p, b, sizeof(b)));
		return NULL;
	}
	char *t = floe_arena_alloc(p->a, end - start + 1);
	if (!t) {
		poom(p);
		return NULL;
	}
	size_t n = 0;
	for (uint32_t i = start; i < end; i++)
		if (p->s[i] != '`')
			t[n++] = p->s[i];
	t[n] = 0;
	return t;
}

/* a count: a plain number */
static int count_parse(parser *p, int64_t *out, const char *what)
{
	char b[64];
	if (p->t.kind != TK_NUMBER || !floe_parse_i64(p->s + p->t.off, p->t.len, out) || *out < 0)
		return perr(p, p->t.off, "expected %s, found %s", what, tok_desc(p, b, sizeof(b)));
	return next(p);
}

/* n DAYS|HOURS|MINUTES -> ms */
static int duration_parse(parser *p, int64_t *ms)
{
	char b[64];
	int64_t n;
	if (count_parse(p, &n, "a number of days, hours or minutes"))
		return p->rc;
	int64_t unit = accept_kw(p, "DAYS") || accept_kw(p, "DAY")	   ? 86400000
		       : accept_kw(p, "HOURS") || accept_kw(p, "HOUR")	   ? 3600000
		       : accept_kw(p, "MINUTES") || accept_kw(p, "MINUTE") ? 60000
									   : 0;
	if (!unit)
		return perr(p, p->t.off, "expected DAYS, HOURS or MINUTES, found %s", tok_desc(p, b, sizeof(b)));
	if (n > INT64_MAX / unit)
		return perr(p, p->t.off, "the duration is too long");
	*ms = n * unit;
	return p->rc;
}

/* [CREATE [OR REPLACE]] BRANCH|TAG [IF NOT EXISTS] name [AS OF VERSION n] [RETAIN d]
 * [WITH SNAPSHOT RETENTION [n SNAPSHOTS] [d]] — Spark's Iceberg SQL extensions */
static int ref_parse(parser *p, sql_stmt *st, bool create)
{
	bool tag = is_kw(p, "TAG");
	if (!tag && !is_kw(p, "BRANCH"))
		return perr(p, p->t.off, "expected BRANCH or TAG");
	if (next(p))
		return p->rc;
	st->alter = create ? (tag ? SQL_A_CREATE_TAG : SQL_A_CREATE_BRANCH)
			   : (tag ? SQL_A_DROP_TAG : SQL_A_DROP_BRANCH);
	if (accept_kw(p, "IF")) {
		if (create && (expect_kw(p, "NOT") || expect_kw(p, "EXISTS")))
			return p->rc;
		if (!create && expect_kw(p, "EXISTS"))
			return p->rc;
		if (create)
			st->ref_if_not_exists = true;
		else
			st->ref_if_exists = true;
	}
	if (!(st->col = ident(p, tag ? "a tag name" : "a branch name")) || !create)
		return p->rc;
	if (accept_kw(p, "AS")) {
		if (expect_kw(p, "OF") || expect_kw(p, "VERSION") ||
		    count_parse(p, &st->ref_snapshot, "a snapshot id"))
			return p->rc;
	}
	if (accept_kw(p, "RETAIN") && duration_parse(p, &st->ref_retain_ms))
		return p->rc;
	if (accept_kw(p, "WITH")) {
		if (tag)
			return perr(p, p->t.off, "a tag has no snapshot retention (RETAIN sets how long it lives)");
		if (expect_kw(p, "SNAPSHOT") || expect_kw(p, "RETENTION"))
			return p->rc;
		int64_t n;
		if (count_parse(p, &n, "a number of snapshots or days"))
			return p->rc;
		if (accept_kw(p, "SNAPSHOTS")) {
			st->ref_keep = n;
			if (p->t.kind == TK_NUMBER && duration_parse(p, &st->ref_keep_ms))
				return p->rc;
		} else {
			/* only an age: put the number back into a duration */
			int64_t unit = accept_kw(p, "DAYS") || accept_kw(p, "DAY")	   ? 86400000
				       : accept_kw(p, "HOURS") || accept_kw(p, "HOUR")	   ? 3600000
				       : accept_kw(p, "MINUTES") || accept_kw(p, "MINUTE") ? 60000
											   : 0;
			if (!unit)
				return perr(p, p->t.off, "expected SNAPSHOTS, DAYS, HOURS or MINUTES");
			st->ref_keep_ms = n * unit;
		}
	}
	return p->rc;
}

/* col type ... | (col type ..., ...): ALTER TABLE's ADD and MODIFY */
static int column_defs(parser *p, sql_stmt *st)
{
	vec cols = {NULL, 0, 0, sizeof(sql_column)};
	bool paren = accept_p(p, "(");
	do {
		sql_column *c = vec_push(p, &cols);
		if (!c || column_def(p, c, st))
			return p->rc;
	} while (paren && accept_p(p, ","));
	if (paren && expect_p(p, ")"))
		return p->rc;
	st->cols = cols.data;
	st->n_cols = cols.n;
	return 0;
}

static int alter_table(parser *p, sql_stmt *st)
{
	char b[64];
	st->kind = SQL_S_ALTER_TABLE;
	if (accept_kw(p, "IF")) {
		if (expect_kw(p, "EXISTS"))
			return p->rc;
		st->if_exists = true;
	}
	if (name_parse(p, &st->name, "a table name"))
		return p->rc;
	st->ref_snapshot = st->ref_retain_ms = st->ref_keep = st->ref_keep_ms = -1;
	if (accept_kw(p, "MODIFY")) {
		/* Flink's MODIFY col type | MODIFY (col type, ...) */
		st->alter = SQL_A_MODIFY;
		return column_defs(p, st);
	}
	if (accept_kw(p, "WRITE")) {
		st->alter = SQL_A_WRITE_ORDER;
		if (accept_kw(p, "UNORDERED")) {
			st->text = "unsorted";
			return p->rc;
		}
		accept_kw(p, "LOCALLY");
		if (expect_kw(p, "ORDERED") || expect_kw(p, "BY"))
			return p->rc;
		st->text = raw_text(p, NULL, "a sort order (col [ASC|DESC] [NULLS FIRST|LAST], ...)");
		return p->rc;
	}
	if (accept_kw(p, "REPLACE")) {
		if (is_kw(p, "BRANCH")) {
			st->ref_or_replace = true;
			return ref_parse(p, st, true);
		}
		if (expect_kw(p, "PARTITION") || expect_kw(p, "FIELD"))
			return p->rc;
		static const char *const with[] = {"WITH", NULL};
		st->alter = SQL_A_REPLACE_PARTITION;
		if (!(st->text = raw_text(p, with, "a partition field")) || expect_kw(p, "WITH"))
			return p->rc;
		st->text2 = raw_text(p, NULL, "a partition expression");
		return p->rc;
	}
	if (accept_kw(p, "CREATE")) {
		if (accept_kw(p, "OR")) {
			if (expect_kw(p, "REPLACE"))
				return p->rc;
			st->ref_or_replace = true;
		}
		return ref_parse(p, st, true);
	}
	if (is_kw(p, "DROP") || is_kw(p, "ADD")) {
		/* DROP BRANCH|TAG, ADD|DROP PARTITION FIELD: look one word further */
		bool add = is_kw(p, "ADD");
		parser save = *p;
		if (next(p))
			return p->rc;
		if (!add && (is_kw(p, "BRANCH") || is_kw(p, "TAG")))
			return ref_parse(p, st, false);
		if (accept_kw(p, "PARTITION")) {
			if (expect_kw(p, "FIELD"))
				return p->rc;
			st->alter = add ? SQL_A_ADD_PARTITION : SQL_A_DROP_PARTITION;
			static const char *const as[] = {"AS", NULL};
			if (!(st->text = raw_text(p, as, "a partition expression")))
				return p->rc;
			if (is_kw(p, "AS"))
				return perr(p, p->t.off, "a partition field takes the transform's name "
							 "(id_bucket, ts_day, ...): AS is not supported yet");
			return p->rc;
		}
		*p = save;
	}
	if (accept_kw(p, "SET")) {
		st->alter = SQL_A_SET;
		return options_parse(p, &st->opts, &st->n_opts);
	}
	if (accept_kw(p, "RESET")) {
		vec v = {NULL, 0, 0, sizeof(const char *)};
		st->alter = SQL_A_RESET;
		if (expect_p(p, "("))
			return p->rc;
		do {
			const char **slot = vec_push(p, &v);
			if (!slot || !(*slot = string_lit(p, "an option key")))
				return p->rc;
		} while (accept_p(p, ","));
		st->keys = v.data;
		st->n_keys = v.n;
		return expect_p(p, ")");
	}
	if (accept_kw(p, "RENAME")) {
		if (accept_kw(p, "TO")) {
			st->alter = SQL_A_RENAME;
			return name_parse(p, &st->to, "a table name");
		}
		accept_kw(p, "COLUMN");
		st->alter = SQL_A_RENAME_COLUMN;
		if (!(st->col = ident(p, "a column name")) || expect_kw(p, "TO") ||
		    !(st->new_col = ident(p, "a column name")))
			return p->rc;
		return 0;
	}
	if (accept_kw(p, "ADD")) {
		st->alter = SQL_A_ADD_COLUMN;
		if (!accept_kw(p, "COLUMN"))
			(void)accept_kw(p, "COLUMNS");
		return column_defs(p, st);
	}
	if (accept_kw(p, "DROP")) {
		st->alter = SQL_A_DROP_COLUMN;
		if (!accept_kw(p, "COLUMN"))
			(void)accept_kw(p, "COLUMNS");
		if (is_p(p, "("))
			return ident_list(p, &st->keys, &st->n_keys, "a column name");
		const char **one = floe_arena_calloc(p->a, 1, sizeof(*one));
		if (!one)
			return poom(p);
		if (!(one[0] = ident(p, "a column name")))
			return p->rc;
		st->keys = one;
		st->n_keys = 1;
		return 0;
	}
	return perr(p, p->t.off,
		    "expected SET, RESET, RENAME, ADD, DROP, MODIFY, ADD|DROP|REPLACE PARTITION FIELD, "
		    "WRITE ORDERED BY, CREATE|DROP BRANCH|TAG after ALTER TABLE, found %s",
		    tok_desc(p, b, sizeof(b)));
}

static int insert_parse(parser *p, sql_stmt *st)
{
	char b[64];
	st->kind = SQL_S_INSERT;
	if (expect_kw(p, "INSERT"))
		return p->rc;
	if (accept_kw(p, "OVERWRITE")) {
		st->overwrite = true;
		accept_kw(p, "INTO");
	} else if (expect_kw(p, "INTO")) {
		return p->rc;
	}
	if (name_parse(p, &st->name, "a table name"))
		return p->rc;
	if (p->t.kind == TK_HINT && hint_parse(p, &st->opts, &st->n_opts))
		return p->rc;
	if (is_kw(p, "PARTITION")) {
		/* PARTITION (k = 'v', ...): a static partition (refused when run) */
		vec v = {NULL, 0, 0, sizeof(sql_expr *)};
		st->partition_off = p->t.off;
		if (next(p) || expect_p(p, "(") || expr_list(p, &v) || expect_p(p, ")"))
			return p->rc;
		st->partition = v.data;
		st->n_partition = v.n;
	}
	if (is_p(p, "(") && ident_list(p, &st->insert_cols, &st->n_insert_cols, "a column name"))
		return p->rc;
	if (is_kw(p, "VALUES")) {
		/* VALUES (row), ...: parsed, refused when run */
		vec rows = {NULL, 0, 0, sizeof(sql_expr *)};
		st->values_off = p->t.off;
		if (next(p))
			return p->rc;
		do {
			vec row = {NULL, 0, 0, sizeof(sql_expr *)};
			if (expect_p(p, "(") || expr_list(p, &row) || expect_p(p, ")"))
				return p->rc;
			sql_expr *e = enew(p, SQL_E_CALL, st->values_off);
			sql_expr **slot = vec_push(p, &rows);
			if (!e || !slot || set_args(p, e, row.data, row.n))
				return p->rc;
			e->text = "ROW";
			*slot = e;
		} while (accept_p(p, ","));
		st->values = rows.data;
		st->n_values = rows.n;
		/* the job reads them as SELECT * of a source of the rows (sql_run.c) */
		sql_select *q = floe_arena_calloc(p->a, 1, sizeof(*q));
		sql_expr **items = floe_arena_calloc(p->a, 1, sizeof(*items));
		if (!q || !items || !(items[0] = enew(p, SQL_E_STAR, st->values_off)))
			return poom(p);
		q->limit = q->u_limit = -1;
		q->off = st->values_off;
		q->items = items;
		q->n_items = 1;
		st->select = q;
		return 0;
	}
	if (!is_kw(p, "SELECT"))
		return perr(p, p->t.off, "expected SELECT, found %s", tok_desc(p, b, sizeof(b)));
	return select_parse(p, &st->select);
}

static int stmt_parse(parser *p, sql_stmt **out);

static int statement_set(parser *p, sql_stmt *st)
{
	vec v = {NULL, 0, 0, sizeof(sql_stmt *)};
	st->kind = SQL_S_STATEMENT_SET;
	if (expect_kw(p, "BEGIN"))
		return p->rc;
	while (!is_kw(p, "END")) {
		char b[64];
		if (p->t.kind == TK_EOF)
			return perr(p, st->off, "the statement set has no END");
		if (accept_p(p, ";"))
			continue;
		if (!is_kw(p, "INSERT"))
			return perr(p, p->t.off, "a statement set holds only INSERT statements, found %s",
				    tok_desc(p, b, sizeof(b)));
		sql_stmt **slot = vec_push(p, &v);
		if (!slot || stmt_parse(p, slot))
			return p->rc;
		if (!is_p(p, ";"))
			return perr(p, p->t.off, "expected ';' after the INSERT, found %s",
				    tok_desc(p, b, sizeof(b)));
	}
	if (!v.n)
		return perr(p, st->off, "the statement set is empty");
	st->stmts = v.data;
	st->n_stmts = v.n;
	return next(p);
}

static int stmt_parse(parser *p, sql_stmt **out)
{
	char b[64];
	sql_stmt *st = floe_arena_calloc(p->a, 1, sizeof(*st));
	if (!st)
		return poom(p);
	st->off = p->t.off;
	if (is_kw(p, "CREATE")) {
		if (next(p))
			return p->rc;
		if (accept_kw(p, "TEMPORARY"))
			st->temporary = true;
		if (accept_kw(p, "CATALOG")) {
			st->kind = SQL_S_CREATE_CATALOG;
			if (accept_kw(p, "IF")) {
				if (expect_kw(p, "NOT") || expect_kw(p, "EXISTS"))
					return p->rc;
				st->if_not_exists = true;
			}
			if (name_parse(p, &st->name, "a catalog name") || expect_kw(p, "WITH") ||
			    options_parse(p, &st->opts, &st->n_opts))
				return p->rc;
		} else if (accept_kw(p, "DATABASE") || accept_kw(p, "SCHEMA")) {
			st->kind = SQL_S_CREATE_DATABASE;
			if (accept_kw(p, "IF")) {
				if (expect_kw(p, "NOT") || expect_kw(p, "EXISTS"))
					return p->rc;
				st->if_not_exists = true;
			}
			if (name_parse(p, &st->name, "a database name"))
				return p->rc;
			if (accept_kw(p, "COMMENT") && !(st->comment = string_lit(p, "a comment")))
				return p->rc;
			if (accept_kw(p, "WITH") && options_parse(p, &st->opts, &st->n_opts))
				return p->rc;
		} else if (accept_kw(p, "TABLE")) {
			if (create_table(p, st))
				return p->rc;
		} else {
			return perr(p, p->t.off, "expected CATALOG, DATABASE or TABLE after CREATE, "
						 "found %s",
				    tok_desc(p, b, sizeof(b)));
		}
	} else if (is_kw(p, "DROP")) {
		if (next(p))
			return p->rc;
		if (accept_kw(p, "TEMPORARY"))
			st->temporary = true;
		if (accept_kw(p, "TABLE"))
			st->kind = SQL_S_DROP_TABLE;
		else if (accept_kw(p, "DATABASE") || accept_kw(p, "SCHEMA"))
			st->kind = SQL_S_DROP_DATABASE;
		else if (accept_kw(p, "CATALOG"))
			st->kind = SQL_S_DROP_CATALOG;
		else
			return perr(p, p->t.off, "expected TABLE, DATABASE or CATALOG after DROP, "
						 "found %s",
				    tok_desc(p, b, sizeof(b)));
		if (accept_kw(p, "IF")) {
			if (expect_kw(p, "EXISTS"))
				return p->rc;
			st->if_exists = true;
		}
		if (name_parse(p, &st->name, "a name"))
			return p->rc;
		if (st->kind == SQL_S_DROP_DATABASE) {
			if (accept_kw(p, "CASCADE"))
				st->cascade = true;
			else
				accept_kw(p, "RESTRICT");
		}
	} else if (is_kw(p, "ALTER")) {
		if (next(p) || expect_kw(p, "TABLE") || alter_table(p, st))
			return p->rc;
	} else if (is_kw(p, "USE")) {
		if (next(p))
			return p->rc;
		if (accept_kw(p, "CATALOG")) {
			st->kind = SQL_S_USE_CATALOG;
			if (name_parse(p, &st->name, "a catalog name"))
				return p->rc;
		} else {
			st->kind = SQL_S_USE;
			if (name_parse(p, &st->name, "a database name"))
				return p->rc;
		}
	} else if (is_kw(p, "SHOW")) {
		if (next(p))
			return p->rc;
		if (accept_kw(p, "CREATE")) {
			st->kind = SQL_S_SHOW_CREATE_TABLE;
			if (expect_kw(p, "TABLE") || name_parse(p, &st->name, "a table name"))
				return p->rc;
		} else if (accept_kw(p, "CURRENT")) {
			st->kind = SQL_S_SHOW;
			if (accept_kw(p, "CATALOG"))
				st->what = "CURRENT_CATALOG";
			else if (accept_kw(p, "DATABASE"))
				st->what = "CURRENT_DATABASE";
			else
				return perr(p, p->t.off, "expected CATALOG or DATABASE after SHOW CURRENT");
		} else if (is_kw(p, "CATALOGS") || is_kw(p, "DATABASES") || is_kw(p, "TABLES") ||
			   is_kw(p, "SCHEMAS")) {
			st->kind = SQL_S_SHOW;
			st->what = is_kw(p, "SCHEMAS") ? "DATABASES" : word_upper(p);
			if (!st->what || next(p))
				return p->rc;
			if ((accept_kw(p, "FROM") || accept_kw(p, "IN")) &&
			    name_parse(p, &st->name, "a name"))
				return p->rc;
		} else {
			return perr(p, p->t.off, "expected CATALOGS, DATABASES, TABLES, CURRENT or "
						 "CREATE TABLE after SHOW, found %s",
				    tok_desc(p, b, sizeof(b)));
		}
	} else if (is_kw(p, "DESCRIBE") || is_kw(p, "DESC")) {
		st->kind = SQL_S_DESCRIBE;
		if (next(p))
			return p->rc;
		accept_kw(p, "EXTENDED");
		accept_kw(p, "TABLE");
		if (name_parse(p, &st->name, "a table name"))
			return p->rc;
	} else if (is_kw(p, "SET")) {
		st->kind = SQL_S_SET;
		if (next(p))
			return p->rc;
		if (p->t.kind == TK_STRING || p->t.kind == TK_WORD) {
			uint32_t koff = p->t.off;
			if (p->t.kind == TK_STRING) {
				st->key = p->t.val;
				if (next(p))
					return p->rc;
			} else {
				/* SET key = value without quotes (the SQL client's older form) */
				floe_buf kb;
				floe_buf_init(&kb, 4096);
				while (p->t.kind == TK_WORD || is_p(p, ".") || is_p(p, "-")) {
					if (floe_buf_append(&kb, p->s + p->t.off, p->t.len) || next(p)) {
						floe_buf_reset(&kb);
						return p->rc ? p->rc : poom(p);
					}
				}
				st->key = floe_arena_strndup(p->a, kb.data ? (const char *)kb.data : "",
							     kb.len);
				floe_buf_reset(&kb);
				if (!st->key)
					return poom(p);
			}
			if (expect_p(p, "="))
				return p->rc;
			if (p->t.kind == TK_STRING) {
				st->value = p->t.val;
			} else if (p->t.kind == TK_NUMBER || p->t.kind == TK_WORD) {
				if (!(st->value = floe_arena_strndup(p->a, p->s + p->t.off, p->t.len)))
					return poom(p);
			} else {
				return perr(p, p->t.off, "expected a value for '%s', found %s", st->key,
					    tok_desc(p, b, sizeof(b)));
			}
			(void)koff;
			if (next(p))
				return p->rc;
		}
	} else if (is_kw(p, "RESET")) {
		st->kind = SQL_S_RESET;
		if (next(p))
			return p->rc;
		if (p->t.kind == TK_STRING && !(st->key = string_lit(p, "a key")))
			return p->rc;
	} else if (is_kw(p, "INSERT")) {
		if (insert_parse(p, st))
			return p->rc;
	} else if (is_kw(p, "EXECUTE")) {
		if (next(p))
			return p->rc;
		if (accept_kw(p, "STATEMENT")) {
			if (expect_kw(p, "SET") || statement_set(p, st))
				return p->rc;
		} else if (is_kw(p, "INSERT")) {
			if (insert_parse(p, st))
				return p->rc;
		} else {
			return perr(p, p->t.off, "expected STATEMENT SET or INSERT after EXECUTE");
		}
	} else if (is_kw(p, "BEGIN")) {
		/* the SQL client's older spelling: BEGIN STATEMENT SET; ... END; */
		if (next(p) || expect_kw(p, "STATEMENT") || expect_kw(p, "SET"))
			return p->rc;
		accept_p(p, ";");
		{
			vec v = {NULL, 0, 0, sizeof(sql_stmt *)};
			st->kind = SQL_S_STATEMENT_SET;
			while (!is_kw(p, "END")) {
				if (p->t.kind == TK_EOF)
					return perr(p, st->off, "the statement set has no END");
				if (accept_p(p, ";"))
					continue;
				if (!is_kw(p, "INSERT"))
					return perr(p, p->t.off, "a statement set holds only INSERT "
								 "statements, found %s",
						    tok_desc(p, b, sizeof(b)));
				sql_stmt **slot = vec_push(p, &v);
				if (!slot || stmt_parse(p, slot))
					return p->rc;
			}
			if (!v.n)
				return perr(p, st->off, "the statement set is empty");
			st->stmts = v.data;
			st->n_stmts = v.n;
			if (next(p))
				return p->rc;
		}
	} else if (is_kw(p, "SELECT")) {
		st->kind = SQL_S_SELECT;
		if (select_parse(p, &st->select))
			return p->rc;
	} else {
		return perr(p, p->t.off, "expected a statement (CREATE, DROP, ALTER, USE, SHOW, "
					 "DESCRIBE, SET, RESET, INSERT, EXECUTE, SELECT), found %s",
			    tok_desc(p, b, sizeof(b)));
	}
	if (p->rc)
		return p->rc;
	/* the span ends at the last token before the ';' */
	size_t end = p->t.off;
	while (end > st->off && (p->s[end - 1] == ' ' || p->s[end - 1] == '\t' ||
				 p->s[end - 1] == '\n' || p->s[end - 1] == '\r'))
		end--;
	st->end = (uint32_t)end;
	*out = st;
	return 0;
}

int floe_sql__parse(sql_script **out, const char *text, size_t n, const char *origin,
		    floe_error *err_out)
{
	floe_error local, *err = err_out ? err_out : &local;
	*out = NULL;
	if (n > SQL_MAX_TEXT)
		return floe_error_set(err, FLOE_EINVAL, "SQL text of %zu bytes is larger than %zu",
				      n, SQL_MAX_TEXT);
	sql_script *sc = floe_calloc(1, sizeof(*sc));
	if (!sc)
		return floe_error_oom(err);
	floe_arena_init(&sc->arena, 16384);
	sc->text = text;
	sc->n = n;
	if (origin && !(sc->origin = floe_arena_strdup(&sc->arena, origin))) {
		floe_sql__script_free(sc);
		return floe_error_oom(err);
	}
	parser p = {.s = text, .n = n, .origin = sc->origin, .a = &sc->arena, .err = err};
	vec v = {NULL, 0, 0, sizeof(sql_stmt *)};
	if (next(&p))
		goto fail;
	while (p.t.kind != TK_EOF) {
		char b[64];
		if (accept_p(&p, ";"))
			continue;
		if (p.rc)
			goto fail;
		sql_stmt **slot = vec_push(&p, &v);
		if (!slot || stmt_parse(&p, slot))
			goto fail;
		if (p.t.kind != TK_EOF && !is_p(&p, ";")) {
			perr(&p, p.t.off, "expected ';' or the end of the statement, found %s",
			     tok_desc(&p, b, sizeof(b)));
			goto fail;
		}
	}
	if (p.rc)
		goto fail;
	sc->stmts = v.data;
	sc->n_stmts = v.n;
	*out = sc;
	return 0;
fail:
	floe_sql__script_free(sc);
	return p.rc ? p.rc : floe_error_set(err, FLOE_EINVAL, "SQL parse failed");
}

void floe_sql__script_free(sql_script *s)
{
	if (!s)
		return;
	floe_arena_reset(&s->arena);
	floe_free(s);
}
