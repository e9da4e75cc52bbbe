/*
 * scan_expr.c — filter expressions: constructors, the SQL text parser, NOT
 * push-down, binding to a schema, and the text form.
 *
 * DESIGN: binding converts each literal once into the column's floe_value
 * (strings to dates/timestamps/uuids/decimals, numbers to any numeric type);
 * evaluation later never parses. Inexact and out-of-range literals are
 * folded at bind time, as Java's Literal conversions and BoundPredicate
 * rules do, so evaluators only see literals of the column's own type.
 */
#include "scan/scan_expr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/str.h"
#include "util/timeutil.h"

/* ---- building --------------------------------------------------------------------------- */

static floe_expr *node(floe_arena *a, floe_expr_kind k)
{
	floe_expr *e = floe_arena_calloc(a, 1, sizeof(*e));
	if (e)
		e->kind = k;
	return e;
}

floe_expr *floe_expr_const(floe_arena *a, bool value)
{
	return node(a, value ? FLOE_EX_TRUE : FLOE_EX_FALSE);
}

bool floe_expr_is_true(const floe_expr *e)
{
	return e && e->kind == FLOE_EX_TRUE;
}

bool floe_expr_is_false(const floe_expr *e)
{
	return e && e->kind == FLOE_EX_FALSE;
}

floe_expr *floe_expr_and(floe_arena *a, floe_expr *l, floe_expr *r)
{
	if (!l || !r)
		return NULL;
	if (floe_expr_is_false(l) || floe_expr_is_true(r))
		return l;
	if (floe_expr_is_false(r) || floe_expr_is_true(l))
		return r;
	floe_expr *e = node(a, FLOE_EX_AND);
	if (e) {
		e->left = l;
		e->right = r;
	}
	return e;
}

floe_expr *floe_expr_or(floe_arena *a, floe_expr *l, floe_expr *r)
{
	if (!l || !r)
		return NULL;
	if (floe_expr_is_true(l) || floe_expr_is_false(r))
		return l;
	if (floe_expr_is_true(r) || floe_expr_is_false(l))
		return r;
	floe_expr *e = node(a, FLOE_EX_OR);
	if (e) {
		e->left = l;
		e->right = r;
	}
	return e;
}

floe_expr *floe_expr_not(floe_arena *a, floe_expr *x)
{
	if (!x)
		return NULL;
	if (x->kind == FLOE_EX_TRUE || x->kind == FLOE_EX_FALSE)
		return floe_expr_const(a, x->kind == FLOE_EX_FALSE);
	floe_expr *e = node(a, FLOE_EX_NOT);
	if (e)
		e->left = x;
	return e;
}

floe_expr *floe_expr_bound_pred(floe_arena *a, floe_expr_op op, int32_t field_id,
				const floe_type *t, const floe_value *values, size_t n)
{
	floe_expr *e = node(a, FLOE_EX_PRED);
	if (!e)
		return NULL;
	e->op = op;
	e->field_id = field_id;
	e->type = t;
	e->pos = -1;
	if (n) {
		e->values = floe_arena_alloc(a, n * sizeof(floe_value));
		if (!e->values)
			return NULL;
		memcpy(e->values, values, n * sizeof(floe_value));
		e->n_values = n;
	}
	return e;
}

static floe_expr_op negate_op(floe_expr_op op)
{
	switch (op) {
	case FLOE_OP_IS_NULL: return FLOE_OP_NOT_NULL;
	case FLOE_OP_NOT_NULL: return FLOE_OP_IS_NULL;
	case FLOE_OP_IS_NAN: return FLOE_OP_NOT_NAN;
	case FLOE_OP_NOT_NAN: return FLOE_OP_IS_NAN;
	case FLOE_OP_LT: return FLOE_OP_GT_EQ;
	case FLOE_OP_LT_EQ: return FLOE_OP_GT;
	case FLOE_OP_GT: return FLOE_OP_LT_EQ;
	case FLOE_OP_GT_EQ: return FLOE_OP_LT;
	case FLOE_OP_EQ: return FLOE_OP_NOT_EQ;
	case FLOE_OP_NOT_EQ: return FLOE_OP_EQ;
	case FLOE_OP_IN: return FLOE_OP_NOT_IN;
	case FLOE_OP_NOT_IN: return FLOE_OP_IN;
	case FLOE_OP_STARTS_WITH: return FLOE_OP_NOT_STARTS_WITH;
	case FLOE_OP_NOT_STARTS_WITH: return FLOE_OP_STARTS_WITH;
	case FLOE_OP_LIKE: return FLOE_OP_NOT_LIKE;
	case FLOE_OP_NOT_LIKE: return FLOE_OP_LIKE;
	}
	return op;
}

/* flip for "lit op col" */
static floe_expr_op flip_op(floe_expr_op op)
{
	switch (op) {
	case FLOE_OP_LT: return FLOE_OP_GT;
	case FLOE_OP_LT_EQ: return FLOE_OP_GT_EQ;
	case FLOE_OP_GT: return FLOE_OP_LT;
	case FLOE_OP_GT_EQ: return FLOE_OP_LT_EQ;
	default: return op;
	}
}

static floe_expr *rewrite(floe_arena *a, const floe_expr *e, bool neg, int depth)
{
	floe_expr *c;
	if (!e || depth > FLOE_EXPR_MAX_DEPTH * 2)
		return NULL;
	switch (e->kind) {
	case FLOE_EX_TRUE:
	case FLOE_EX_FALSE: return floe_expr_const(a, (e->kind == FLOE_EX_TRUE) != neg);
	case FLOE_EX_NOT: return rewrite(a, e->left, !neg, depth + 1);
	case FLOE_EX_AND:
	case FLOE_EX_OR: {
		floe_expr *l = rewrite(a, e->left, neg, depth + 1);
		floe_expr *r = rewrite(a, e->right, neg, depth + 1);
		bool is_and = (e->kind == FLOE_EX_AND) != neg;
		return is_and ? floe_expr_and(a, l, r) : floe_expr_or(a, l, r);
	}
	case FLOE_EX_PRED:
		if (!(c = floe_arena_alloc(a, sizeof(*c))))
			return NULL;
		*c = *e;
		if (neg)
			c->op = negate_op(e->op);
		return c;
	}
	return NULL;
}

floe_expr *floe_expr_rewrite_not(floe_arena *a, const floe_expr *e)
{
	return rewrite(a, e, false, 0);
}

/* ---- lexer ------------------------------------------------------------------------------ */

typedef enum tok_kind {
	T_END = 0,
	T_IDENT,
	T_QIDENT,
	T_NUMBER,
	T_STRING,
	T_HEX,
	T_OP, /* = != < <= > >= */
	T_LPAREN,
	T_RPAREN,
	T_COMMA,
	T_DOT,
	T_MINUS,
	T_PLUS,
} tok_kind;

typedef struct tok {
	tok_kind kind;
	const char *p; /* source text of the token (for STRING/QIDENT: unescaped, in the arena) */
	size_t n;
	size_t at;
	floe_expr_op op;
} tok;

typedef struct parser {
	floe_arena *a;
	const char *s;
	size_t n, i;
	tok t;        /* current token */
	floe_error *err;
	int rc;
	int depth;
} parser;

static int perr(parser *ps, size_t at, const char *fmt, ...) FLOE_PRINTF(3, 4);
static int perr(parser *ps, size_t at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!ps->rc)
		ps->rc = floe_error_set(ps->err, FLOE_EINVAL, "expression: at %zu: %s", at + 1, msg);
	return ps->rc;
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (unsigned char)c >= 0x80;
}

static bool is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/* quoted text with a doubled quote as escape; result in the arena */
static int lex_quoted(parser *ps, char q, tok *t)
{
	size_t start = ps->i++;
	char *out = floe_arena_alloc(ps->a, ps->n - start + 1);
	size_t o = 0;
	if (!out)
		return ps->rc = floe_error_oom(ps->err);
	for (;;) {
		if (ps->i >= ps->n)
			return perr(ps, start, "unterminated %s", q == '\'' ? "string" : "quoted name");
		char c = ps->s[ps->i++];
		if (c == q) {
			if (ps->i < ps->n && ps->s[ps->i] == q) {
				out[o++] = q;
				ps->i++;
				continue;
			}
			break;
		}
		out[o++] = c;
	}
	out[o] = 0;
	t->p = out;
	t->n = o;
	t->at = start;
	return FLOE_OK;
}

static int next(parser *ps)
{
	tok *t = &ps->t;
	memset(t, 0, sizeof(*t));
	while (ps->i < ps->n && (ps->s[ps->i] == ' ' || ps->s[ps->i] == '\t' ||
				 ps->s[ps->i] == '\n' || ps->s[ps->i] == '\r'))
		ps->i++;
	t->at = ps->i;
	if (ps->i >= ps->n) {
		t->kind = T_END;
		return FLOE_OK;
	}
	const char *s = ps->s;
	char c = s[ps->i];
	if ((c == 'x' || c == 'X') && ps->i + 1 < ps->n && s[ps->i + 1] == '\'') {
		ps->i++;
		if (lex_quoted(ps, '\'', t))
			return ps->rc;
		t->kind = T_HEX;
		t->at--;
		return FLOE_OK;
	}
	if (is_ident_start(c)) {
		size_t st = ps->i;
		while (ps->i < ps->n && is_ident_char(s[ps->i]))
			ps->i++;
		t->kind = T_IDENT;
		t->p = s + st;
		t->n = ps->i - st;
		return FLOE_OK;
	}
	if ((c >= '0' && c <= '9') ||
	    (c == '.' && ps->i + 1 < ps->n && s[ps->i + 1] >= '0' && s[ps->i + 1] <= '9')) {
		size_t st = ps->i;
		while (ps->i < ps->n && ((s[ps->i] >= '0' && s[ps->i] <= '9') || s[ps->i] == '.'))
			ps->i++;
		if (ps->i < ps->n && (s[ps->i] == 'e' || s[ps->i] == 'E')) {
			size_t save = ps->i++;
			if (ps->i < ps->n && (s[ps->i] == '+' || s[ps->i] == '-'))
				ps->i++;
			if (ps->i < ps->n && s[ps->i] >= '0' && s[ps->i] <= '9') {
				while (ps->i < ps->n && s[ps->i] >= '0' && s[ps->i] <= '9')
					ps->i++;
			} else {
				ps->i = save;
			}
		}
		t->kind = T_NUMBER;
		t->p = s + st;
		t->n = ps->i - st;
		if (ps->i < ps->n && is_ident_char(s[ps->i]))
			return perr(ps, st, "malformed number '%.*s'", (int)(ps->i - st + 1), s + st);
		return FLOE_OK;
	}
	if (c == '\'') {
		t->kind = T_STRING;
		return lex_quoted(ps, '\'', t);
	}
	if (c == '"' || c == '`') {
		t->kind = T_QIDENT;
		return lex_quoted(ps, c, t);
	}
	ps->i++;
	t->p = s + t->at;
	t->n = 1;
	switch (c) {
	case '(': t->kind = T_LPAREN; return FLOE_OK;
	case ')': t->kind = T_RPAREN; return FLOE_OK;
	case ',': t->kind = T_COMMA; return FLOE_OK;
	case '.': t->kind = T_DOT; return FLOE_OK;
	case '-': t->kind = T_MINUS; return FLOE_OK;
	case '+': t->kind = T_PLUS; return FLOE_OK;
	case '=':
		t->kind = T_OP;
		t->op = FLOE_OP_EQ;
		if (ps->i < ps->n && s[ps->i] == '=')
			ps->i++;
		return FLOE_OK;
	case '!':
		if (ps->i < ps->n && s[ps->i] == '=') {
			ps->i++;
			t->kind = T_OP;
			t->op = FLOE_OP_NOT_EQ;
			return FLOE_OK;
		}
		break;
	case '<':
		t->kind = T_OP;
		t->op = FLOE_OP_LT;
		if (ps->i < ps->n && s[ps->i] == '=') {
			ps->i++;
			t->op = FLOE_OP_LT_EQ;
		} else if (ps->i < ps->n && s[ps->i] == '>') {
			ps->i++;
			t->op = FLOE_OP_NOT_EQ;
		}
		return FLOE_OK;
	case '>':
		t->kind = T_OP;
		t->op = FLOE_OP_GT;
		if (ps->i < ps->n && s[ps->i] == '=') {
			ps->i++;
			t->op = FLOE_OP_GT_EQ;
		}
		return FLOE_OK;
	default: break;
	}
	return perr(ps, t->at, "unexpected character '%c'", c);
}

static bool kw(const tok *t, const char *word)
{
	return t->kind == T_IDENT && strlen(word) == t->n && strncasecmp(t->p, word, t->n) == 0;
}

static bool accept_kw(parser *ps, const char *word)
{
	if (!kw(&ps->t, word))
		return false;
	next(ps);
	return true;
}

static int expect_kw(parser *ps, const char *word)
{
	if (accept_kw(ps, word))
		return ps->rc;
	return perr(ps, ps->t.at, "expected %s", word);
}

static int expect(parser *ps, tok_kind k, const char *what)
{
	if (ps->t.kind != k)
		return perr(ps, ps->t.at, "expected %s", what);
	return next(ps);
}

static const char *const RESERVED[] = {"and", "or",      "not",	  "in",	 "is",	    "null",
				       "nan", "true",    "false",   "between", "like", "starts",
				       "with", "date",    "timestamp", "timestamptz", "time", "cast",
				       "distinct", NULL};

static bool reserved(const tok *t)
{
	for (size_t i = 0; RESERVED[i]; i++)
		if (kw(t, RESERVED[i]))
			return true;
	return false;
}

/* ---- parser ----------------------------------------------------------------------------- */

static floe_expr *parse_or(parser *ps);

static char *dup_tok(parser *ps, const tok *t)
{
	char *s = floe_arena_strndup(ps->a, t->p, t->n);
	if (!s && !ps->rc)
		ps->rc = floe_error_oom(ps->err);
	return s;
}

/* a column reference: name(.name)* ; NULL (no error) when the token is not one */
static char *parse_column(parser *ps, bool *is_col)
{
	floe_buf b;
	*is_col = false;
	if (!(ps->t.kind == T_QIDENT || (ps->t.kind == T_IDENT && !reserved(&ps->t))))
		return NULL;
	*is_col = true;
	floe_buf_init(&b, 4096);
	for (;;) {
		if (floe_buf_append(&b, ps->t.p, ps->t.n)) {
			bool too_long = b.len + ps->t.n > 4096;
			floe_buf_reset(&b);
			if (!too_long) { /* out of memory, not the name's fault */
				if (!ps->rc)
					ps->rc = floe_error_oom(ps->err);
				return NULL;
			}
			perr(ps, ps->t.at, "column name too long");
			return NULL;
		}
		next(ps);
		if (ps->t.kind != T_DOT)
			break;
		next(ps);
		if (ps->t.kind != T_IDENT && ps->t.kind != T_QIDENT) {
			floe_buf_reset(&b);
			perr(ps, ps->t.at, "expected a name after '.'");
			return NULL;
		}
		if (floe_buf_putc(&b, '.')) {
			bool too_long = b.len + 1 > 4096;
			floe_buf_reset(&b);
			if (!too_long) {
				if (!ps->rc)
					ps->rc = floe_error_oom(ps->err);
				return NULL;
			}
			perr(ps, ps->t.at, "column name too long");
			return NULL;
		}
	}
	char *s = floe_arena_strndup(ps->a, floe_buf_cstr(&b), b.len);
	floe_buf_reset(&b);
	if (!s && !ps->rc)
		ps->rc = floe_error_oom(ps->err);
	return s;
}

static const struct {
	const char *word;
	floe_lit_kind kind;
} TYPED[] = {
	{"date", FLOE_LIT_DATE},
	{"time", FLOE_LIT_TIME},
	{"timestamp", FLOE_LIT_TIMESTAMP},
	{"timestamptz", FLOE_LIT_TIMESTAMPTZ},
	{"timestamp_ntz", FLOE_LIT_TIMESTAMP},
	{"timestamp_ltz", FLOE_LIT_TIMESTAMPTZ},
};

static int decode_hex(parser *ps, floe_literal *l, const tok *t)
{
	floe_buf b;
	floe_buf_init(&b, 0);
	if (floe_hex_decode(&b, t->p, t->n)) {
		floe_buf_reset(&b);
		return perr(ps, t->at, "bad hex literal");
	}
	l->text = floe_arena_memdup(ps->a, b.data ? b.data : (const uint8_t *)"", b.len + 1);
	l->len = b.len;
	floe_buf_reset(&b);
	if (!l->text && !ps->rc)
		ps->rc = floe_error_oom(ps->err);
	return ps->rc;
}

/* a literal; *ok false (no error) when the current token does not start one */
static int parse_literal(parser *ps, floe_literal *l, bool *ok)
{
	memset(l, 0, sizeof(*l));
	*ok = true;
	l->at = ps->t.at;
	if (ps->t.kind == T_MINUS || ps->t.kind == T_PLUS) {
		bool minus = ps->t.kind == T_MINUS;
		size_t at = ps->t.at;
		next(ps);
		if (ps->t.kind != T_NUMBER)
			return perr(ps, at, "expected a number after '%c'", minus ? '-' : '+');
		char *s = floe_arena_sprintf(ps->a, "%s%.*s", minus ? "-" : "", (int)ps->t.n, ps->t.p);
		if (!s)
			return ps->rc = floe_error_oom(ps->err);
		l->kind = FLOE_LIT_NUMBER;
		l->text = s;
		l->len = strlen(s);
		l->at = at;
		return next(ps);
	}
	if (ps->t.kind == T_NUMBER) {
		l->kind = FLOE_LIT_NUMBER;
		if (!(l->text = dup_tok(ps, &ps->t)))
			return ps->rc;
		l->len = ps->t.n;
		return next(ps);
	}
	if (ps->t.kind == T_STRING) {
		l->kind = FLOE_LIT_STRING;
		l->text = ps->t.p;
		l->len = ps->t.n;
		return next(ps);
	}
	if (ps->t.kind == T_HEX) {
		l->kind = FLOE_LIT_BINARY;
		if (decode_hex(ps, l, &ps->t))
			return ps->rc;
		return next(ps);
	}
	if (accept_kw(ps, "null")) {
		l->kind = FLOE_LIT_NULL;
		return ps->rc;
	}
	if (kw(&ps->t, "true") || kw(&ps->t, "false")) {
		l->kind = FLOE_LIT_BOOL;
		l->b = kw(&ps->t, "true");
		return next(ps);
	}
	for (size_t i = 0; i < sizeof(TYPED) / sizeof(TYPED[0]); i++) {
		if (kw(&ps->t, TYPED[i].word)) {
			size_t at = ps->t.at;
			next(ps);
			if (ps->t.kind != T_STRING)
				return perr(ps, at, "expected a quoted value after %s", TYPED[i].word);
			l->kind = TYPED[i].kind;
			l->text = ps->t.p;
			l->len = ps->t.n;
			l->at = at;
			return next(ps);
		}
	}
	if (kw(&ps->t, "cast")) {
		size_t at = ps->t.at;
		bool inner;
		next(ps);
		if (expect(ps, T_LPAREN, "'(' after CAST"))
			return ps->rc;
		if (parse_literal(ps, l, &inner))
			return ps->rc;
		if (!inner)
			return perr(ps, ps->t.at, "CAST takes a literal");
		if (expect_kw(ps, "as"))
			return ps->rc;
		if (ps->t.kind != T_IDENT)
			return perr(ps, ps->t.at, "expected a type name");
		for (size_t i = 0; i < sizeof(TYPED) / sizeof(TYPED[0]); i++)
			if (kw(&ps->t, TYPED[i].word) && l->kind == FLOE_LIT_STRING)
				l->kind = TYPED[i].kind;
		/* other target types: the column's type decides the conversion */
		int parens = 0;
		next(ps);
		while (ps->t.kind != T_END && !(ps->t.kind == T_RPAREN && parens == 0)) {
			if (ps->t.kind == T_LPAREN)
				parens++;
			if (ps->t.kind == T_RPAREN)
				parens--;
			next(ps);
		}
		l->at = at;
		return expect(ps, T_RPAREN, "')' closing CAST");
	}
	*ok = false;
	return FLOE_OK;
}

static floe_expr *make_pred(parser *ps, floe_expr_op op, const char *col, size_t at,
			    floe_literal *lits, size_t n)
{
	floe_expr *e = node(ps->a, FLOE_EX_PRED);
	if (!e) {
		ps->rc = floe_error_oom(ps->err);
		return NULL;
	}
	e->op = op;
	e->name = col;
	e->at = at;
	e->pos = -1;
	if (n) {
		e->lits = floe_arena_alloc(ps->a, n * sizeof(floe_literal));
		if (!e->lits) {
			ps->rc = floe_error_oom(ps->err);
			return NULL;
		}
		memcpy(e->lits, lits, n * sizeof(floe_literal));
		e->n_lits = n;
	}
	return e;
}

/* LIKE 'pattern': a prefix pattern becomes STARTS WITH, a plain one =, others LIKE */
static floe_expr *like_pred(parser *ps, const char *col, size_t at, bool negate)
{
	floe_literal l;
	bool ok;
	size_t pat_at = ps->t.at;
	if (parse_literal(ps, &l, &ok))
		return NULL;
	if (!ok || l.kind != FLOE_LIT_STRING) {
		perr(ps, pat_at, "LIKE takes a quoted pattern");
		return NULL;
	}
	size_t n = l.len;
	/* the literal prefix, and whether anything but a trailing '%' is a wildcard */
	bool inner = false, trailing = false;
	for (size_t i = 0; i < n; i++) {
		char c = l.text[i];
		if (c == '\\') {
			i++;
			continue;
		}
		if (c == '%' && i + 1 == n)
			trailing = true;
		else if (c == '%' || c == '_')
			inner = true;
	}
	if (inner)
		return make_pred(ps, negate ? FLOE_OP_NOT_LIKE : FLOE_OP_LIKE, col, at, &l, 1);
	uint8_t *plain = floe_arena_alloc(ps->a, n + 1);
	if (!plain) {
		ps->rc = floe_error_oom(ps->err);
		return NULL;
	}
	size_t body = floe_like_prefix((const uint8_t *)l.text, n, plain);
	plain[body] = 0;
	l.text = (const char *)plain;
	l.len = body;
	if (trailing && body == 0) /* LIKE '%': every non-null value; NOT LIKE '%': none */
		return negate ? floe_expr_const(ps->a, false)
			      : make_pred(ps, FLOE_OP_NOT_NULL, col, at, NULL, 0);
	floe_expr_op op = trailing ? FLOE_OP_STARTS_WITH : FLOE_OP_EQ;
	return make_pred(ps, negate ? negate_op(op) : op, col, at, &l, 1);
}

size_t floe_like_prefix(const uint8_t *pat, size_t pn, uint8_t *out)
{
	size_t o = 0;
	for (size_t i = 0; i < pn; i++) {
		if (pat[i] == '%' || pat[i] == '_')
			break;
		if (pat[i] == '\\' && i + 1 < pn)
			i++;
		out[o++] = pat[i];
	}
	return o;
}

static size_t utf8_len(uint8_t c)
{
	return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

bool floe_like_match(const uint8_t *s, size_t n, const uint8_t *pat, size_t pn)
{
	size_t si = 0, pi = 0, star_p = (size_t)-1, star_s = 0;
	while (si < n) {
		if (pi < pn && pat[pi] == '%') {
			star_p = ++pi;
			star_s = si;
			continue;
		}
		if (pi < pn && pat[pi] == '_') {
			si += utf8_len(s[si]);
			pi++;
			continue;
		}
		if (pi < pn) {
			size_t q = pi;
			if (pat[q] == '\\' && q + 1 < pn)
				q++;
			if (pat[q] == s[si]) {
				si++;
				pi = q + 1;
				continue;
			}
		}
		if (star_p == (size_t)-1)
			return false;
		/* backtrack: the last '%' takes one more character */
		star_s += utf8_len(s[star_s]);
		si = star_s;
		pi = star_p;
	}
	while (pi < pn && pat[pi] == '%')
		pi++;
	return pi == pn;
}

static floe_expr *parse_in_list(parser *ps, const char *col, size_t at, bool negate)
{
	floe_literal *lits = NULL;
	size_t n = 0, cap = 0;
	floe_expr *e = NULL;
	if (expect(ps, T_LPAREN, "'(' after IN"))
		return NULL;
	for (;;) {
		floe_literal l;
		bool ok;
		if (parse_literal(ps, &l, &ok))
			goto done;
		if (!ok) {
			perr(ps, ps->t.at, "expected a literal in the IN list");
			goto done;
		}
		if (n >= FLOE_EXPR_MAX_IN) {
			perr(ps, l.at, "IN list longer than %d values", FLOE_EXPR_MAX_IN);
			goto done;
		}
		if (FLOE_ARRAY_RESERVE(lits, cap, n + 1)) {
			ps->rc = floe_error_oom(ps->err);
			goto done;
		}
		lits[n++] = l;
		if (ps->t.kind == T_COMMA) {
			next(ps);
			continue;
		}
		if (expect(ps, T_RPAREN, "',' or ')' in the IN list"))
			goto done;
		break;
	}
	e = make_pred(ps, negate ? FLOE_OP_NOT_IN : FLOE_OP_IN, col, at, lits, n);
done:
	floe_free(lits);
	return ps->rc ? NULL : e;
}

/* predicate after a column reference */
static floe_expr *parse_col_pred(parser *ps, const char *col, size_t at)
{
	floe_literal l[2];
	bool ok, negate = false;
	if (ps->t.kind == T_OP) {
		floe_expr_op op = ps->t.op;
		next(ps);
		if (parse_literal(ps, &l[0], &ok))
			return NULL;
		if (!ok) {
			perr(ps, ps->t.at, "expected a literal (comparisons between columns are not "
					   "supported)");
			return NULL;
		}
		return make_pred(ps, op, col, at, l, 1);
	}
	if (accept_kw(ps, "is")) {
		bool is_not = accept_kw(ps, "not");
		if (accept_kw(ps, "distinct")) {
			/* x IS DISTINCT FROM v: x != v, with NULL a value like any other */
			if (expect_kw(ps, "from") || parse_literal(ps, &l[0], &ok))
				return NULL;
			if (!ok) {
				perr(ps, ps->t.at, "expected a literal after DISTINCT FROM");
				return NULL;
			}
			if (l[0].kind == FLOE_LIT_NULL)
				return make_pred(ps, is_not ? FLOE_OP_IS_NULL : FLOE_OP_NOT_NULL, col, at, NULL,
						 0);
			floe_expr *cmp = make_pred(ps, is_not ? FLOE_OP_EQ : FLOE_OP_NOT_EQ, col, at, l, 1);
			if (is_not || !cmp)
				return cmp;
			return floe_expr_or(ps->a, cmp, make_pred(ps, FLOE_OP_IS_NULL, col, at, NULL, 0));
		}
		if (accept_kw(ps, "null"))
			return make_pred(ps, is_not ? FLOE_OP_NOT_NULL : FLOE_OP_IS_NULL, col, at, NULL,
					 0);
		if (accept_kw(ps, "nan"))
			return make_pred(ps, is_not ? FLOE_OP_NOT_NAN : FLOE_OP_IS_NAN, col, at, NULL, 0);
		perr(ps, ps->t.at, "expected NULL, NAN or DISTINCT FROM after IS%s", is_not ? " NOT" : "");
		return NULL;
	}
	if (accept_kw(ps, "not"))
		negate = true;
	if (accept_kw(ps, "in"))
		return parse_in_list(ps, col, at, negate);
	if (accept_kw(ps, "like"))
		return like_pred(ps, col, at, negate);
	if (accept_kw(ps, "starts")) {
		if (expect_kw(ps, "with") || parse_literal(ps, &l[0], &ok))
			return NULL;
		if (!ok || l[0].kind != FLOE_LIT_STRING) {
			perr(ps, l[0].at, "STARTS WITH takes a quoted string");
			return NULL;
		}
		return make_pred(ps, negate ? FLOE_OP_NOT_STARTS_WITH : FLOE_OP_STARTS_WITH, col, at,
				 l, 1);
	}
	if (accept_kw(ps, "between")) {
		if (parse_literal(ps, &l[0], &ok))
			return NULL;
		if (!ok) {
			perr(ps, ps->t.at, "expected a literal after BETWEEN");
			return NULL;
		}
		if (expect_kw(ps, "and") || parse_literal(ps, &l[1], &ok))
			return NULL;
		if (!ok) {
			perr(ps, ps->t.at, "expected a literal after BETWEEN ... AND");
			return NULL;
		}
		floe_expr *lo = make_pred(ps, FLOE_OP_GT_EQ, col, at, &l[0], 1);
		floe_expr *hi = make_pred(ps, FLOE_OP_LT_EQ, col, at, &l[1], 1);
		floe_expr *e = floe_expr_and(ps->a, lo, hi);
		return negate ? floe_expr_not(ps->a, e) : e;
	}
	perr(ps, ps->t.at, "expected a comparison, IN, IS, BETWEEN, LIKE or STARTS WITH after '%s'",
	     col);
	return NULL;
}

/* starts_with(col, 'x'), is_nan(col), isnan(col), not_nan(col) */
static floe_expr *parse_function(parser *ps, const tok *fn)
{
	size_t at = fn->at;
	bool is_col;
	char *col;
	floe_literal l;
	bool ok;
	next(ps); /* '(' */
	if (!(col = parse_column(ps, &is_col))) {
		if (!ps->rc)
			perr(ps, ps->t.at, "expected a column");
		return NULL;
	}
	if (kw(fn, "starts_with") || kw(fn, "startswith")) {
		if (expect(ps, T_COMMA, "','") || parse_literal(ps, &l, &ok))
			return NULL;
		if (!ok || l.kind != FLOE_LIT_STRING) {
			perr(ps, ps->t.at, "starts_with takes a quoted string");
			return NULL;
		}
		if (expect(ps, T_RPAREN, "')'"))
			return NULL;
		return make_pred(ps, FLOE_OP_STARTS_WITH, col, at, &l, 1);
	}
	if (expect(ps, T_RPAREN, "')'"))
		return NULL;
	if (kw(fn, "not_nan") || kw(fn, "notnan"))
		return make_pred(ps, FLOE_OP_NOT_NAN, col, at, NULL, 0);
	return make_pred(ps, FLOE_OP_IS_NAN, col, at, NULL, 0);
}

static bool is_function_name(const tok *t)
{
	return kw(t, "starts_with") || kw(t, "startswith") || kw(t, "is_nan") || kw(t, "isnan") ||
	       kw(t, "not_nan") || kw(t, "notnan");
}

static floe_expr *parse_primary(parser *ps)
{
	if (ps->rc)
		return NULL;
	if (++ps->depth > FLOE_EXPR_MAX_DEPTH) {
		perr(ps, ps->t.at, "nested deeper than %d levels", FLOE_EXPR_MAX_DEPTH);
		return NULL;
	}
	floe_expr *e = NULL;
	if (accept_kw(ps, "not")) {
		e = parse_primary(ps);
		e = e ? floe_expr_not(ps->a, e) : NULL;
	} else if (ps->t.kind == T_LPAREN) {
		next(ps);
		e = parse_or(ps);
		if (e && expect(ps, T_RPAREN, "')'"))
			e = NULL;
	} else if (kw(&ps->t, "true") || kw(&ps->t, "false")) {
		bool v = kw(&ps->t, "true");
		next(ps);
		e = floe_expr_const(ps->a, v);
	} else if (ps->t.kind == T_IDENT && is_function_name(&ps->t)) {
		tok fn = ps->t;
		size_t save = ps->i;
		next(ps);
		if (ps->t.kind == T_LPAREN) {
			e = parse_function(ps, &fn);
		} else {
			/* a column that happens to be called like a function */
			ps->i = save;
			ps->t = fn;
			bool is_col;
			size_t at = ps->t.at;
			char *col = parse_column(ps, &is_col);
			e = col ? parse_col_pred(ps, col, at) : NULL;
		}
	} else {
		bool is_col;
		size_t at = ps->t.at;
		char *col = parse_column(ps, &is_col);
		if (col) {
			e = parse_col_pred(ps, col, at);
		} else if (!ps->rc) {
			/* lit op col */
			floe_literal l;
			bool ok;
			if (!parse_literal(ps, &l, &ok) && ok && ps->t.kind == T_OP) {
				floe_expr_op op = flip_op(ps->t.op);
				next(ps);
				size_t cat = ps->t.at;
				col = parse_column(ps, &is_col);
				if (col)
					e = make_pred(ps, op, col, cat, &l, 1);
				else
					perr(ps, cat, "expected a column");
			} else if (!ps->rc) {
				perr(ps, ps->t.at, ps->t.kind == T_END ? "unexpected end of the expression"
								       : "expected a predicate");
			}
		}
	}
	ps->depth--;
	if (!e && !ps->rc)
		ps->rc = floe_error_oom(ps->err);
	return ps->rc ? NULL : e;
}

/* Terms of a chain as a balanced tree of `kind` nodes (their order kept). */
static floe_expr *balance(parser *ps, floe_expr_kind kind, floe_expr **items, size_t n)
{
	if (n == 1)
		return items[0];
	floe_expr *l = balance(ps, kind, items, n / 2);
	floe_expr *r = l ? balance(ps, kind, items + n / 2, n - n / 2) : NULL;
	floe_expr *e = r ? node(ps->a, kind) : NULL;
	if (e) {
		e->left = l;
		e->right = r;
	}
	return e;
}

/*
 * "x AND y AND z ..." (or OR): a chain is built as a balanced tree, not a
 * left-deep one, so its depth grows with the logarithm of its length and a
 * long chain ("id = 1 OR id = 2 OR ..." with thousands of terms) stays far
 * inside the depth limit of the later passes — a left-deep chain of 401
 * terms used to exceed it and was reported as "out of memory".
 */
static floe_expr *parse_chain(parser *ps, floe_expr_kind kind, const char *word,
			      floe_expr *(*operand)(parser *ps))
{
	floe_expr *first = operand(ps), *out = NULL;
	floe_expr **items = NULL;
	size_t n = 0, cap = 0;
	if (!first || !kw(&ps->t, word))
		return first;
	if (FLOE_ARRAY_RESERVE(items, cap, 16))
		goto oom;
	items[n++] = first;
	while (kw(&ps->t, word)) {
		next(ps);
		floe_expr *r = operand(ps);
		if (!r)
			goto done;
		if (FLOE_ARRAY_RESERVE(items, cap, n + 1))
			goto oom;
		items[n++] = r;
	}
	if ((out = balance(ps, kind, items, n)))
		goto done;
oom:
	if (!ps->rc)
		ps->rc = floe_error_oom(ps->err);
done:
	floe_free(items);
	return ps->rc ? NULL : out;
}

static floe_expr *parse_and(parser *ps)
{
	return parse_chain(ps, FLOE_EX_AND, "and", parse_primary);
}

static floe_expr *parse_or(parser *ps)
{
	return parse_chain(ps, FLOE_EX_OR, "or", parse_and);
}

int floe_expr_parse(floe_expr **out, floe_arena *a, const char *text, size_t n, floe_error *err)
{
	parser ps = {a, text, n, 0, {0}, err, 0, 0};
	*out = NULL;
	if (n > FLOE_EXPR_MAX_TEXT)
		return floe_error_set(err, FLOE_EINVAL, "expression: longer than %zu bytes",
				      FLOE_EXPR_MAX_TEXT);
	for (size_t i = 0; i < n; i++)
		if (text[i] == 0)
			return floe_error_set(err, FLOE_EINVAL, "expression: NUL byte at %zu", i + 1);
	if (next(&ps))
		return ps.rc;
	if (ps.t.kind == T_END)
		return floe_error_set(err, FLOE_EINVAL, "expression: empty");
	floe_expr *e = parse_or(&ps);
	if (!ps.rc && e && ps.t.kind != T_END)
		perr(&ps, ps.t.at, "unexpected '%.*s' after the expression", (int)(ps.t.n ? ps.t.n : 1),
		     ps.t.p ? ps.t.p : "?");
	if (ps.rc)
		return ps.rc;
	if (!e)
		return floe_error_oom(err);
	*out = e;
	return FLOE_OK;
}

/* ---- numbers ---------------------------------------------------------------------------- */

/* A decimal number: unscaled * 10^-scale; `big` when it does not fit 38 digits. */
typedef struct num {
	floe_i128 unscaled;
	int32_t scale;
	bool big;
	int sign; /* for big numbers */
	double d;
} num;

static const floe_i128 TEN38 = (floe_i128)100000000000000000LL * 100000000000000000LL * 10000;

static floe_i128 pow10_i128(int n)
{
	floe_i128 r = 1;
	while (n-- > 0)
		r *= 10;
	return r;
}

static bool parse_num(const char *s, size_t n, num *out)
{
	size_t i = 0;
	bool neg = false, digits = false, dot = false;
	int32_t frac = 0, exp = 0, nd = 0;
	floe_i128 v = 0;
	memset(out, 0, sizeof(*out));
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	for (; i < n; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			digits = true;
			if (nd < 38 && (v || c != '0')) {
				v = v * 10 + (c - '0');
				nd++;
				if (dot)
					frac++;
			} else if (v || c != '0') {
				/* digits past 38: count them for the magnitude only */
				if (!dot)
					exp++;
			} else if (dot) {
				frac++;
			}
		} else if (c == '.' && !dot) {
			dot = true;
		} else {
			break;
		}
	}
	if (!digits)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		int64_t e;
		if (!floe_parse_i64(s + i + 1, n - i - 1, &e) || e > 10000 || e < -10000)
			return false;
		exp += (int32_t)e;
		i = n;
	}
	if (i != n)
		return false;
	char buf[128];
	snprintf(buf, sizeof(buf), "%.*s", (int)(n < 120 ? n : 120), s);
	out->d = strtod(buf, NULL);
	out->sign = v == 0 ? 0 : (neg ? -1 : 1);
	int32_t scale = frac - exp;
	/* normalise: scale may be negative (1e3) */
	if (scale < 0) {
		if (nd - scale > 38) {
			out->big = true;
			return true;
		}
		v *= pow10_i128(-scale);
		scale = 0;
	}
	out->unscaled = neg ? -v : v;
	out->scale = scale;
	return true;
}

/* floor(num * 10^target) and whether it was exact; false when it overflows 38 digits */
static bool num_rescale(const num *x, int32_t target, floe_i128 *out, bool *exact)
{
	*exact = true;
	if (x->big)
		return false;
	if (x->scale <= target) {
		int32_t d = target - x->scale;
		if (d > 38)
			return x->unscaled == 0 ? (*out = 0, true) : false;
		floe_i128 m = pow10_i128(d);
		floe_i128 a = x->unscaled < 0 ? -x->unscaled : x->unscaled;
		if (a != 0 && a > (TEN38 - 1) / m)
			return false;
		*out = x->unscaled * m;
		return true;
	}
	int32_t d = x->scale - target;
	if (d > 38) {
		*out = x->unscaled < 0 ? -1 : 0;
		*exact = x->unscaled == 0;
		return true;
	}
	floe_i128 m = pow10_i128(d);
	floe_i128 q = x->unscaled / m, r = x->unscaled % m;
	if (r != 0) {
		*exact = false;
		if (r < 0)
			q -= 1; /* floor */
	}
	*out = q;
	return true;
}

/* ---- binding ------------------------------------------------------------------------------ */

typedef struct binder {
	floe_arena *a;
	const floe_schema *schema;
	bool ci;
	floe_error *err;
} binder;

/* outcome of converting one literal for one predicate */
enum { LIT_OK, LIT_FALSE, LIT_NOT_NULL };

static int lit_err(binder *b, const floe_expr *p, const floe_literal *l, const char *why)
{
	char ty[64];
	floe_buf tb;
	floe_buf_init(&tb, 64);
	if (floe_type_format(&tb, p->type))
		floe_buf_clear(&tb);
	snprintf(ty, sizeof(ty), "%s", floe_buf_cstr(&tb));
	floe_buf_reset(&tb);
	const char *q = l->kind == FLOE_LIT_STRING ? "'" : "";
	const char *text = l->kind == FLOE_LIT_BOOL   ? (l->b ? "TRUE" : "FALSE")
			   : l->kind == FLOE_LIT_NULL ? "NULL"
			   : l->kind == FLOE_LIT_BINARY ? "X'...'"
							: l->text;
	return floe_error_set(b->err, FLOE_EINVAL,
			      "expression: at %zu: cannot compare column '%s' (%s) with %s%s%s%s",
			      l->at + 1, p->name, ty, q, text, q, why);
}

/*
 * Integer-like conversion with Java's folding rules. v is floor(literal) in
 * the column's units and exact says whether literal == v; lo..hi the type's
 * range. Adjusts *op and fills *out (an i128) or returns LIT_FALSE /
 * LIT_NOT_NULL.
 */
static int fold_integer(floe_expr_op *op, floe_i128 v, bool exact, bool overflow, int sign,
			floe_i128 lo, floe_i128 hi, floe_i128 *out)
{
	if (overflow)
		v = sign < 0 ? lo - 1 : hi + 1;
	if (!exact) {
		switch (*op) {
		case FLOE_OP_LT: *op = FLOE_OP_LT_EQ; break;
		case FLOE_OP_LT_EQ: break;
		case FLOE_OP_GT:
		case FLOE_OP_GT_EQ:
			*op = FLOE_OP_GT_EQ;
			v += 1;
			break;
		case FLOE_OP_EQ:
		case FLOE_OP_IN: return LIT_FALSE;
		case FLOE_OP_NOT_EQ:
		case FLOE_OP_NOT_IN: return LIT_NOT_NULL;
		default: break;
		}
	}
	if (v > hi) {
		switch (*op) {
		case FLOE_OP_LT:
		case FLOE_OP_LT_EQ:
		case FLOE_OP_NOT_EQ:
		case FLOE_OP_NOT_IN: return LIT_NOT_NULL;
		default: return LIT_FALSE;
		}
	}
	if (v < lo) {
		switch (*op) {
		case FLOE_OP_GT:
		case FLOE_OP_GT_EQ:
		case FLOE_OP_NOT_EQ:
		case FLOE_OP_NOT_IN: return LIT_NOT_NULL;
		default: return LIT_FALSE;
		}
	}
	*out = v;
	return LIT_OK;
}

static bool text_is(const floe_literal *l, const char *s)
{
	return l->text && strlen(s) == l->len && strncasecmp(l->text, s, l->len) == 0;
}

static bool parse_uuid(const char *s, size_t n, uint8_t out[16])
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int d;
		if (c == '-')
			continue;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		if (k >= 32)
			return false;
		if (k % 2 == 0)
			out[k / 2] = (uint8_t)(d << 4);
		else
			out[k / 2] |= (uint8_t)d;
		k++;
	}
	return k == 32;
}

/* Convert literal l for predicate p (op may be adjusted). */
static int convert(binder *b, floe_expr *p, floe_expr_op *op, const floe_literal *l,
		   floe_value *v, int *outcome)
{
	const floe_type *t = p->type;
	*outcome = LIT_OK;
	memset(v, 0, sizeof(*v));
	v->type = t->id;
	if (l->kind == FLOE_LIT_NULL) {
		*outcome = LIT_FALSE; /* comparisons with NULL are unknown */
		return FLOE_OK;
	}
	switch (t->id) {
	case FLOE_T_BOOLEAN:
		if (l->kind == FLOE_LIT_BOOL)
			v->v.b = l->b;
		else if (l->kind == FLOE_LIT_STRING && (text_is(l, "true") || text_is(l, "false")))
			v->v.b = text_is(l, "true");
		else if (l->kind == FLOE_LIT_NUMBER && (text_is(l, "1") || text_is(l, "0")))
			v->v.b = text_is(l, "1");
		else
			return lit_err(b, p, l, "");
		return FLOE_OK;
	case FLOE_T_INT:
	case FLOE_T_LONG:
	case FLOE_T_DECIMAL: {
		num x;
		if ((l->kind != FLOE_LIT_NUMBER && l->kind != FLOE_LIT_STRING) ||
		    !parse_num(l->text, l->len, &x))
			return lit_err(b, p, l, ": not a number");
		int32_t scale = t->id == FLOE_T_DECIMAL ? t->scale : 0;
		floe_i128 lo, hi, r = 0;
		bool exact;
		if (t->id == FLOE_T_INT) {
			lo = INT32_MIN;
			hi = INT32_MAX;
		} else if (t->id == FLOE_T_LONG) {
			lo = INT64_MIN;
			hi = INT64_MAX;
		} else {
			hi = pow10_i128(t->precision) - 1;
			lo = -hi;
		}
		bool ok = num_rescale(&x, scale, &r, &exact);
		int sign = x.big ? x.sign : (x.unscaled < 0 ? -1 : 1);
		*outcome = fold_integer(op, r, exact, !ok, sign, lo, hi, &r);
		if (t->id == FLOE_T_INT)
			v->v.i32 = (int32_t)r;
		else if (t->id == FLOE_T_LONG)
			v->v.i64 = (int64_t)r;
		else
			v->v.dec = r;
		return FLOE_OK;
	}
	case FLOE_T_FLOAT:
	case FLOE_T_DOUBLE: {
		num x;
		double d;
		if ((l->kind == FLOE_LIT_NUMBER || l->kind == FLOE_LIT_STRING) &&
		    parse_num(l->text, l->len, &x))
			d = x.d;
		else if (l->kind == FLOE_LIT_STRING && (text_is(l, "nan") || text_is(l, "inf") ||
							text_is(l, "infinity") || text_is(l, "-inf") ||
							text_is(l, "-infinity")))
			d = text_is(l, "nan") ? NAN : (l->text[0] == '-' ? -INFINITY : INFINITY);
		else
			return lit_err(b, p, l, ": not a number");
		if (t->id == FLOE_T_FLOAT)
			v->v.f32 = (float)d;
		else
			v->v.f64 = d;
		return FLOE_OK;
	}
	case FLOE_T_DATE: {
		int64_t days, us;
		bool zone;
		if (l->kind != FLOE_LIT_STRING && l->kind != FLOE_LIT_DATE &&
		    l->kind != FLOE_LIT_TIMESTAMP && l->kind != FLOE_LIT_TIMESTAMPTZ)
			return lit_err(b, p, l, ": expected a date");
		if (floe_parse_date(l->text, l->len, &days)) {
			*outcome = fold_integer(op, days, true, false, 1, INT32_MIN, INT32_MAX,
						&(floe_i128){0});
			v->v.i32 = (int32_t)days;
			return FLOE_OK;
		}
		if (!floe_parse_timestamp_us(l->text, l->len, &us, &zone))
			return lit_err(b, p, l, ": not a date");
		floe_i128 r;
		days = floe_floordiv(us, FLOE_US_PER_DAY);
		*outcome = fold_integer(op, days, us % FLOE_US_PER_DAY == 0, false, 1, INT32_MIN,
					INT32_MAX, &r);
		v->v.i32 = (int32_t)r;
		return FLOE_OK;
	}
	case FLOE_T_TIME: {
		int64_t ns;
		if ((l->kind != FLOE_LIT_STRING && l->kind != FLOE_LIT_TIME) ||
		    !floe_parse_time_ns(l->text, l->len, &ns))
			return lit_err(b, p, l, ": not a time of day");
		v->v.i64 = ns / 1000;
		return FLOE_OK;
	}
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: {
		int64_t x, days;
		bool zone, ns = t->id == FLOE_T_TIMESTAMP_NS || t->id == FLOE_T_TIMESTAMPTZ_NS;
		if (l->kind != FLOE_LIT_STRING && l->kind != FLOE_LIT_DATE &&
		    l->kind != FLOE_LIT_TIMESTAMP && l->kind != FLOE_LIT_TIMESTAMPTZ)
			return lit_err(b, p, l, ": expected a timestamp");
		if (floe_parse_date(l->text, l->len, &days))
			x = days * (ns ? FLOE_US_PER_DAY * 1000 : FLOE_US_PER_DAY);
		else if (!(ns ? floe_parse_timestamp_ns(l->text, l->len, &x, &zone)
			      : floe_parse_timestamp_us(l->text, l->len, &x, &zone)))
			return lit_err(b, p, l, ": not a timestamp");
		v->v.i64 = x;
		return FLOE_OK;
	}
	case FLOE_T_STRING:
		if (l->kind == FLOE_LIT_BOOL || l->kind == FLOE_LIT_BINARY)
			return lit_err(b, p, l, ": expected a string");
		v->v.bin.p = (const uint8_t *)l->text;
		v->v.bin.n = l->len;
		return FLOE_OK;
	case FLOE_T_UUID: {
		uint8_t *u = floe_arena_alloc(b->a, 16);
		if (!u)
			return floe_error_oom(b->err);
		if (l->kind == FLOE_LIT_BINARY && l->len == 16)
			memcpy(u, l->text, 16);
		else if (l->kind != FLOE_LIT_STRING || !parse_uuid(l->text, l->len, u))
			return lit_err(b, p, l, ": not a uuid");
		v->v.bin.p = u;
		v->v.bin.n = 16;
		return FLOE_OK;
	}
	case FLOE_T_FIXED:
	case FLOE_T_BINARY:
		if (l->kind != FLOE_LIT_BINARY && l->kind != FLOE_LIT_STRING)
			return lit_err(b, p, l, ": expected X'..' bytes or a string");
		if (t->id == FLOE_T_FIXED && l->len != (size_t)t->length) {
			/* a fixed column never equals a value of another length */
			switch (*op) {
			case FLOE_OP_EQ:
			case FLOE_OP_IN: *outcome = LIT_FALSE; return FLOE_OK;
			case FLOE_OP_NOT_EQ:
			case FLOE_OP_NOT_IN: *outcome = LIT_NOT_NULL; return FLOE_OK;
			default: break;
			}
		}
		v->v.bin.p = (const uint8_t *)l->text;
		v->v.bin.n = l->len;
		return FLOE_OK;
	default: break;
	}
	return lit_err(b, p, l, ": comparisons on this type are not supported");
}

static int cmp_values_sort(const void *x, const void *y)
{
	return floe_expr_cmp(x, y, false);
}

/* required all the way up to the top level? */
static bool never_null(const floe_schema *s, const floe_schema_entry *e)
{
	while (e) {
		if (!e->required)
			return false;
		if (e->parent_id == 0)
			return true;
		e = floe_schema_find(s, e->parent_id);
	}
	return false;
}

/* below an optional struct? (the field itself may be required) */
static bool under_optional(const floe_schema *s, const floe_schema_entry *e)
{
	for (int depth = 0; e && e->parent_id != 0 && depth < 1000; depth++) {
		e = floe_schema_find(s, e->parent_id);
		if (e && !e->required)
			return true;
	}
	return false;
}

static bool is_float(const floe_type *t)
{
	return t->id == FLOE_T_FLOAT || t->id == FLOE_T_DOUBLE;
}

static int bind_pred(binder *b, const floe_expr *u, floe_expr **out)
{
	const floe_schema_entry *se = floe_schema_find_name(b->schema, u->name, b->ci);
	floe_expr *p;
	int rc;
	*out = NULL;
	if (!se) {
		/* suggest the closest top-level name */
		const char *best = NULL;
		size_t bd = (size_t)-1;
		for (size_t i = 0; i < b->schema->n_index; i++) {
			const char *fn = b->schema->index[i].full_name;
			if (!fn)
				continue;
			size_t d = floe_levenshtein(fn, u->name);
			if (d < bd) {
				bd = d;
				best = fn;
			}
		}
		return floe_error_set(b->err, FLOE_EINVAL, "expression: at %zu: no column '%s'%s%s%s",
				      u->at + 1, u->name, best && bd <= 3 ? " (did you mean '" : "",
				      best && bd <= 3 ? best : "", best && bd <= 3 ? "'?)" : "");
	}
	if (!floe_type_is_primitive(se->type) || se->type->id == FLOE_T_VARIANT ||
	    se->type->id == FLOE_T_GEOMETRY || se->type->id == FLOE_T_GEOGRAPHY) {
		if (u->op != FLOE_OP_IS_NULL && u->op != FLOE_OP_NOT_NULL)
			return floe_error_set(b->err, FLOE_EINVAL,
					      "expression: at %zu: column '%s' is not a primitive "
					      "column",
					      u->at + 1, u->name);
	}
	if (!(p = floe_arena_alloc(b->a, sizeof(*p))))
		return floe_error_oom(b->err);
	*p = *u;
	p->field_id = se->id;
	p->type = se->type;
	p->in_repeated = se->in_repeated;
	p->optional_parent = under_optional(b->schema, se);
	p->lits = NULL;
	p->n_lits = 0;
	p->pos = -1;
	switch (u->op) {
	case FLOE_OP_IS_NULL:
	case FLOE_OP_NOT_NULL:
		if (!se->in_repeated && never_null(b->schema, se)) {
			*out = floe_expr_const(b->a, u->op == FLOE_OP_NOT_NULL);
			return *out ? FLOE_OK : floe_error_oom(b->err);
		}
		*out = p;
		return FLOE_OK;
	case FLOE_OP_IS_NAN:
	case FLOE_OP_NOT_NAN:
		if (!is_float(se->type))
			return floe_error_set(b->err, FLOE_EINVAL,
					      "expression: at %zu: IS NAN needs a float or double "
					      "column, '%s' is not one",
					      u->at + 1, u->name);
		*out = p;
		return FLOE_OK;
	case FLOE_OP_STARTS_WITH:
	case FLOE_OP_NOT_STARTS_WITH:
	case FLOE_OP_LIKE:
	case FLOE_OP_NOT_LIKE:
		if (se->type->id != FLOE_T_STRING)
			return floe_error_set(b->err, FLOE_EINVAL,
					      "expression: at %zu: %s needs a string column, '%s' is not "
					      "one",
					      u->at + 1,
					      u->op == FLOE_OP_LIKE || u->op == FLOE_OP_NOT_LIKE ? "LIKE"
												  : "STARTS WITH",
					      u->name);
		break;
	default: break;
	}
	if (!floe_type_is_primitive(se->type))
		return floe_error_set(b->err, FLOE_EINVAL,
				      "expression: at %zu: column '%s' is not a primitive column",
				      u->at + 1, u->name);
	bool set = u->op == FLOE_OP_IN || u->op == FLOE_OP_NOT_IN;
	p->values = floe_arena_calloc(b->a, u->n_lits ? u->n_lits : 1, sizeof(floe_value));
	if (!p->values)
		return floe_error_oom(b->err);
	size_t n = 0;
	for (size_t i = 0; i < u->n_lits; i++) {
		floe_expr_op op = u->op;
		int outcome;
		if ((rc = convert(b, p, &op, &u->lits[i], &p->values[n], &outcome)))
			return rc;
		if (set) {
			/* IN drops values that cannot match; NOT IN with NULL is never TRUE */
			if (u->lits[i].kind == FLOE_LIT_NULL && u->op == FLOE_OP_NOT_IN) {
				*out = floe_expr_const(b->a, false);
				return *out ? FLOE_OK : floe_error_oomf(b->err, "oom");
			}
			if (outcome == LIT_OK)
				n++;
			continue;
		}
		if (outcome != LIT_OK) {
			if (outcome == LIT_FALSE)
				*out = floe_expr_const(b->a, false);
			else
				*out = floe_expr_bound_pred(b->a, FLOE_OP_NOT_NULL, se->id, se->type,
							    NULL, 0);
			if (*out) {
				(*out)->in_repeated = se->in_repeated;
				(*out)->optional_parent = p->optional_parent;
				(*out)->name = u->name;
			}
			return *out ? FLOE_OK : floe_error_oom(b->err);
		}
		p->op = op;
		n++;
	}
	if (set) {
		qsort(p->values, n, sizeof(floe_value), cmp_values_sort);
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (k == 0 || floe_expr_cmp(&p->values[k - 1], &p->values[i], false) != 0)
				p->values[k++] = p->values[i];
		n = k;
		if (n == 0) {
			*out = u->op == FLOE_OP_IN ? floe_expr_const(b->a, false)
						   : floe_expr_bound_pred(b->a, FLOE_OP_NOT_NULL,
									  se->id, se->type, NULL, 0);
			if (*out && u->op != FLOE_OP_IN) {
				(*out)->in_repeated = se->in_repeated;
				(*out)->optional_parent = p->optional_parent;
			}
			return *out ? FLOE_OK : floe_error_oom(b->err);
		}
		if (n == 1)
			p->op = u->op == FLOE_OP_IN ? FLOE_OP_EQ : FLOE_OP_NOT_EQ;
	}
	p->n_values = n;
	/* NaN literals: x = NaN is IS NAN (Java requires isNaN; be lenient) */
	if (is_float(se->type) && n == 1 && (p->op == FLOE_OP_EQ || p->op == FLOE_OP_NOT_EQ)) {
		double d = se->type->id == FLOE_T_FLOAT ? p->values[0].v.f32 : p->values[0].v.f64;
		if (isnan(d)) {
			p->op = p->op == FLOE_OP_EQ ? FLOE_OP_IS_NAN : FLOE_OP_NOT_NAN;
			p->n_values = 0;
		}
	}
	*out = p;
	return FLOE_OK;
}

static int bind_rec(binder *b, const floe_expr *u, floe_expr **out, int depth)
{
	int rc;
	floe_expr *l, *r;
	*out = NULL;
	if (depth > FLOE_EXPR_MAX_DEPTH * 2)
		return floe_error_set(b->err, FLOE_EINVAL, "expression: nested too deeply");
	switch (u->kind) {
	case FLOE_EX_TRUE:
	case FLOE_EX_FALSE: *out = floe_expr_const(b->a, u->kind == FLOE_EX_TRUE); break;
	case FLOE_EX_NOT:
		return floe_error_set(b->err, FLOE_EINVAL,
				      "expression: NOT must be pushed down before binding");
	case FLOE_EX_AND:
	case FLOE_EX_OR:
		if ((rc = bind_rec(b, u->left, &l, depth + 1)) ||
		    (rc = bind_rec(b, u->right, &r, depth + 1)))
			return rc;
		*out = u->kind == FLOE_EX_AND ? floe_expr_and(b->a, l, r) : floe_expr_or(b->a, l, r);
		break;
	case FLOE_EX_PRED: return bind_pred(b, u, out);
	}
	return *out ? FLOE_OK : floe_error_oom(b->err);
}

int floe_expr_bind(floe_expr **out, floe_arena *a, const floe_expr *unbound,
		   const floe_schema *schema, bool case_sensitive, floe_error *err)
{
	binder b = {a, schema, !case_sensitive, err};
	return bind_rec(&b, unbound, out, 0);
}

int floe_expr_compile(floe_expr **out, floe_arena *a, const char *text,
		      const floe_schema *schema, bool case_sensitive, floe_error *err)
{
	floe_expr *u;
	int rc = floe_expr_parse(&u, a, text, strlen(text), err);
	if (rc)
		return rc;
	floe_expr *nn = floe_expr_rewrite_not(a, u);
	if (!nn)
		return floe_error_oom(err);
	return floe_expr_bind(out, a, nn, schema, case_sensitive, err);
}

/* ---- values ------------------------------------------------------------------------------ */

int floe_expr_cmp(const floe_value *a, const floe_value *b, bool signed_uuid)
{
	if (a->type == FLOE_T_UUID && signed_uuid && a->v.bin.n == 16 && b->v.bin.n == 16) {
		/* Java's UUID.compareTo: most then least significant 64 bits, signed */
		for (int half = 0; half < 2; half++) {
			int64_t x = 0, y = 0;
			for (int k = 0; k < 8; k++) {
				x = (int64_t)((uint64_t)x << 8 | a->v.bin.p[half * 8 + k]);
				y = (int64_t)((uint64_t)y << 8 | b->v.bin.p[half * 8 + k]);
			}
			if (x != y)
				return x < y ? -1 : 1;
		}
		return 0;
	}
	return floe_value_compare(a, b);
}

/* ---- text form ------------------------------------------------------------------------- */

static const char *op_text(floe_expr_op op)
{
	switch (op) {
	case FLOE_OP_IS_NULL: return "IS NULL";
	case FLOE_OP_NOT_NULL: return "IS NOT NULL";
	case FLOE_OP_IS_NAN: return "IS NAN";
	case FLOE_OP_NOT_NAN: return "IS NOT NAN";
	case FLOE_OP_LT: return "<";
	case FLOE_OP_LT_EQ: return "<=";
	case FLOE_OP_GT: return ">";
	case FLOE_OP_GT_EQ: return ">=";
	case FLOE_OP_EQ: return "=";
	case FLOE_OP_NOT_EQ: return "!=";
	case FLOE_OP_IN: return "IN";
	case FLOE_OP_NOT_IN: return "NOT IN";
	case FLOE_OP_STARTS_WITH: return "STARTS WITH";
	case FLOE_OP_NOT_STARTS_WITH: return "NOT STARTS WITH";
	case FLOE_OP_LIKE: return "LIKE";
	case FLOE_OP_NOT_LIKE: return "NOT LIKE";
	}
	return "?";
}

static int fmt_value(floe_buf *out, const floe_value *v, const floe_type *t)
{
	bool quote = t && t->id != FLOE_T_BOOLEAN && t->id != FLOE_T_INT && t->id != FLOE_T_LONG &&
		     t->id != FLOE_T_FLOAT && t->id != FLOE_T_DOUBLE && t->id != FLOE_T_DECIMAL;
	/* Infinity / NaN are not number literals: quote them (they parse back as strings) */
	if (t && ((t->id == FLOE_T_FLOAT && !isfinite(v->v.f32)) ||
		  (t->id == FLOE_T_DOUBLE && !isfinite(v->v.f64))))
		quote = true;
	int rc;
	if (!t)
		return floe_buf_puts(out, "?");
	if (quote && (rc = floe_buf_putc(out, '\'')))
		return rc;
	if (t->id == FLOE_T_STRING) {
		for (size_t i = 0; i < v->v.bin.n; i++) {
			char c = (char)v->v.bin.p[i];
			if ((rc = floe_buf_putc(out, c)) || (c == '\'' && (rc = floe_buf_putc(out, c))))
				return rc;
		}
	} else if ((rc = floe_value_human(out, v, t))) {
		return rc;
	}
	return quote ? floe_buf_putc(out, '\'') : FLOE_OK;
}

static int fmt(floe_buf *out, const floe_expr *e, const floe_schema *s, int depth)
{
	int rc;
	if (depth > FLOE_EXPR_MAX_DEPTH * 2)
		return floe_buf_puts(out, "...");
	switch (e->kind) {
	case FLOE_EX_TRUE: return floe_buf_puts(out, "TRUE");
	case FLOE_EX_FALSE: return floe_buf_puts(out, "FALSE");
	case FLOE_EX_NOT:
		if ((rc = floe_buf_puts(out, "NOT (")) || (rc = fmt(out, e->left, s, depth + 1)))
			return rc;
		return floe_buf_putc(out, ')');
	case FLOE_EX_AND:
	case FLOE_EX_OR: {
		bool paren_l = e->left->kind == (e->kind == FLOE_EX_AND ? FLOE_EX_OR : FLOE_EX_AND);
		bool paren_r = e->right->kind == (e->kind == FLOE_EX_AND ? FLOE_EX_OR : FLOE_EX_AND);
		if ((paren_l && (rc = floe_buf_putc(out, '('))) ||
		    (rc = fmt(out, e->left, s, depth + 1)) ||
		    (paren_l && (rc = floe_buf_putc(out, ')'))) ||
		    (rc = floe_buf_puts(out, e->kind == FLOE_EX_AND ? " AND " : " OR ")) ||
		    (paren_r && (rc = floe_buf_putc(out, '('))) ||
		    (rc = fmt(out, e->right, s, depth + 1)))
			return rc;
		return paren_r ? floe_buf_putc(out, ')') : FLOE_OK;
	}
	case FLOE_EX_PRED: break;
	}
	const char *name = e->name;
	const floe_schema_entry *se = s && e->pos < 0 && e->type ? floe_schema_find(s, e->field_id)
								  : NULL;
	if (se && se->full_name)
		name = se->full_name;
	if (!name)
		rc = floe_buf_printf(out, e->pos >= 0 ? "partition[%d]" : "field#%d",
				     e->pos >= 0 ? e->pos : e->field_id);
	else
		rc = floe_buf_puts(out, name);
	if (rc || (rc = floe_buf_printf(out, " %s", op_text(e->op))))
		return rc;
	if (!e->type) {
		/* unbound: literal texts */
		for (size_t i = 0; i < e->n_lits; i++) {
			const floe_literal *l = &e->lits[i];
			bool q = l->kind != FLOE_LIT_NUMBER && l->kind != FLOE_LIT_BOOL &&
				 l->kind != FLOE_LIT_NULL;
			if ((rc = floe_buf_puts(out, i ? ", " : (e->op == FLOE_OP_IN ||
								  e->op == FLOE_OP_NOT_IN
							  ? " ("
							  : " "))) ||
			    (rc = floe_buf_printf(out, "%s%s%s", q ? "'" : "",
						  l->kind == FLOE_LIT_NULL ? "NULL"
						  : l->kind == FLOE_LIT_BOOL ? (l->b ? "TRUE" : "FALSE")
									     : l->text,
						  q ? "'" : "")))
				return rc;
		}
		if (e->op == FLOE_OP_IN || e->op == FLOE_OP_NOT_IN)
			return floe_buf_putc(out, ')');
		return FLOE_OK;
	}
	bool set = e->op == FLOE_OP_IN || e->op == FLOE_OP_NOT_IN;
	for (size_t i = 0; i < e->n_values; i++)
		if ((rc = floe_buf_puts(out, i ? ", " : (set ? " (" : " "))) ||
		    (rc = fmt_value(out, &e->values[i], e->type)))
			return rc;
	return set ? floe_buf_putc(out, ')') : FLOE_OK;
}

int floe_expr_format(floe_buf *out, const floe_expr *e, const floe_schema *schema)
{
	return fmt(out, e, schema, 0);
}

void floe_expr_field_ids(const floe_expr *e, void (*fn)(int32_t id, void *payload),
			 void *payload)
{
	if (!e)
		return;
	if (e->kind == FLOE_EX_PRED) {
		fn(e->field_id, payload);
		return;
	}
	floe_expr_field_ids(e->left, fn, payload);
	floe_expr_field_ids(e->right, fn, payload);
}
