/*
 * stream_filter.c — compile and evaluate routing filters (stream_filter.h).
 *
 * DESIGN: a small recursive-descent parser builds a tree of nodes; each
 * comparison holds the path of child indices from the root to its field and
 * its literals, already coerced into one-column builders of the field's
 * type, so evaluation is a value read and floe_value_compare.
 */
#include <stdio.h>
#include <strings.h>

#include "stream/stream_filter.h"

enum { F_OR, F_AND, F_NOT, F_CMP, F_IN, F_ISNULL };
enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

typedef struct fnode fnode;
struct fnode {
	int kind;
	int op;
	bool negate; /* NOT IN, IS NOT NULL */
	fnode *a, *b;
	int path[8];
	int depth;
	stream_col lits; /* literal values (one row each) */
	bool numeric;    /* string field, number literals: compare as numbers */
	double nums[64];
	int n_nums;
};

struct stream_filter {
	fnode *root;
};

typedef struct fparser {
	const char *s, *p;
	const floe_type *root;
	floe_error *err;
	int nodes;
	bool collect; /* record unknown top-level names instead of failing */
	char **names;
	size_t n_names, cap_names;
} fparser;

static void node_free(fnode *n)
{
	if (!n)
		return;
	node_free(n->a);
	node_free(n->b);
	stream_col_reset(&n->lits);
	floe_free(n);
}

void stream_filter_free(stream_filter *f)
{
	if (!f)
		return;
	node_free(f->root);
	floe_free(f);
}

static void ws(fparser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int fail(fparser *ps, const char *what)
{
	return floe_error_set(ps->err, FLOE_EINVAL, "filter '%s': %s at column %d", ps->s, what,
			      (int)(ps->p - ps->s) + 1);
}

static bool is_ident(char ch, bool first)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
	       (!first && ch >= '0' && ch <= '9');
}

/* A keyword (whole word, case-insensitive). */
static bool kw(fparser *ps, const char *word)
{
	size_t n = strlen(word);
	ws(ps);
	if (strncasecmp(ps->p, word, n) == 0 && !is_ident(ps->p[n], false)) {
		ps->p += n;
		return true;
	}
	return false;
}

static fnode *node_new(fparser *ps, int kind)
{
	fnode *n;
	if (++ps->nodes > 1000)
		return NULL;
	n = floe_calloc(1, sizeof(*n));
	if (n)
		n->kind = kind;
	return n;
}

static int parse_expr(fparser *ps, fnode **out, int depth);

/* field path -> child indices; *type the field's type */
static int parse_field(fparser *ps, fnode *n, const floe_type **type)
{
	const floe_type *t = ps->root;
	ws(ps);
	for (;;) {
		const char *start;
		size_t len;
		if (*ps->p == '"' || *ps->p == '`') {
			char q = *ps->p++;
			start = ps->p;
			while (*ps->p && *ps->p != q)
				ps->p++;
			if (!*ps->p)
				return fail(ps, "unterminated quoted name");
			len = (size_t)(ps->p - start);
			ps->p++;
		} else {
			if (!is_ident(*ps->p, true))
				return fail(ps, "expected a field name");
			start = ps->p;
			while (is_ident(*ps->p, false))
				ps->p++;
			len = (size_t)(ps->p - start);
		}
		if (t->id != FLOE_T_STRUCT || n->depth >= 8)
			return fail(ps, "only struct fields can be named here");
		int idx = -1;
		for (size_t i = 0; i < t->n_fields; i++) {
			if (strlen(t->fields[i].name) == len && !strncmp(t->fields[i].name, start, len)) {
				idx = (int)i;
				break;
			}
		}
		for (size_t i = 0; i < t->n_fields && idx < 0; i++)
			if (strlen(t->fields[i].name) == len &&
			    !strncasecmp(t->fields[i].name, start, len))
				idx = (int)i;
		if (idx < 0 && ps->collect && n->depth == 0) {
			bool dup = false;
			for (size_t i = 0; i < ps->n_names; i++)
				dup = dup || (strlen(ps->names[i]) == len && !strncmp(ps->names[i], start, len));
			if (!dup) {
				if (FLOE_ARRAY_RESERVE(ps->names, ps->cap_names, ps->n_names + 1) ||
				    !(ps->names[ps->n_names] = floe_strndup(start, len)))
					return floe_error_oom(ps->err);
				ps->n_names++;
			}
			while (*ps->p == '.' || is_ident(*ps->p, false))
				ps->p++;
			*type = floe_type_primitive(FLOE_T_STRING);
			return FLOE_OK;
		}
		if (idx < 0) {
			ps->p = start;
			return fail(ps, "no such field");
		}
		n->path[n->depth++] = idx;
		t = t->fields[idx].type;
		if (*ps->p != '.')
			break;
		ps->p++;
	}
	if (!floe_type_is_primitive(t))
		return fail(ps, "a nested field cannot be compared");
	*type = t;
	return FLOE_OK;
}

/* Read a literal and append it (coerced) to n->lits. */
static int parse_literal(fparser *ps, fnode *n)
{
	char buf[1024];
	size_t k = 0;
	stream_reason why;
	ws(ps);
	if (*ps->p == '\'') {
		ps->p++;
		for (;;) {
			if (!*ps->p)
				return fail(ps, "unterminated string");
			if (*ps->p == '\'') {
				if (ps->p[1] == '\'') {
					if (k < sizeof(buf))
						buf[k++] = '\'';
					ps->p += 2;
					continue;
				}
				ps->p++;
				break;
			}
			if (k < sizeof(buf))
				buf[k++] = *ps->p;
			ps->p++;
		}
		if (k >= sizeof(buf))
			return fail(ps, "string literal too long");
	} else {
		const char *start = ps->p;
		while (*ps->p && *ps->p != ' ' && *ps->p != ')' && *ps->p != ',' && *ps->p != '\t')
			ps->p++;
		k = (size_t)(ps->p - start);
		if (k == 0 || k >= sizeof(buf))
			return fail(ps, "expected a literal");
		memcpy(buf, start, k);
		double num;
		if (n->lits.type->id == FLOE_T_STRING && stream_parse_f64(buf, k, &num)) {
			if (n->n_nums >= 64)
				return fail(ps, "at most 64 numbers in a list");
			n->numeric = true;
			n->nums[n->n_nums++] = num;
		}
	}
	int rc = stream_coerce_text(&n->lits, buf, k, NULL, &why);
	if (rc == FLOE_ENOMEM)
		return floe_error_set(ps->err, rc, "out of memory");
	if (rc) {
		char msg[300];
		snprintf(msg, sizeof(msg), "literal does not fit the field (%s)", why.msg);
		return fail(ps, msg);
	}
	return FLOE_OK;
}

static int parse_factor(fparser *ps, fnode **out, int depth)
{
	fnode *n = NULL;
	const floe_type *t = NULL;
	int rc;
	*out = NULL;
	if (depth > 32)
		return fail(ps, "nesting too deep");
	if (kw(ps, "not")) {
		if (!(n = node_new(ps, F_NOT)))
			return fail(ps, "too complex");
		if ((rc = parse_factor(ps, &n->a, depth + 1))) {
			node_free(n);
			return rc;
		}
		*out = n;
		return FLOE_OK;
	}
	ws(ps);
	if (*ps->p == '(') {
		ps->p++;
		if ((rc = parse_expr(ps, out, depth + 1)))
			return rc;
		ws(ps);
		if (*ps->p != ')') {
			node_free(*out);
			*out = NULL;
			return fail(ps, "expected ')'");
		}
		ps->p++;
		return FLOE_OK;
	}
	if (!(n = node_new(ps, F_CMP)))
		return fail(ps, "too complex");
	if ((rc = parse_field(ps, n, &t)))
		goto fail;
	if ((rc = stream_col_init(&n->lits, t, "literal", 0, true, ps->err)))
		goto fail;
	if (kw(ps, "is")) {
		n->kind = F_ISNULL;
		n->negate = kw(ps, "not");
		if (!kw(ps, "null")) {
			rc = fail(ps, "expected 'null'");
			goto fail;
		}
		*out = n;
		return FLOE_OK;
	}
	bool neg = kw(ps, "not");
	if (kw(ps, "in")) {
		n->kind = F_IN;
		n->negate = neg;
		ws(ps);
		if (*ps->p != '(') {
			rc = fail(ps, "expected '('");
			goto fail;
		}
		ps->p++;
		for (;;) {
			if ((rc = parse_literal(ps, n)))
				goto fail;
			ws(ps);
			if (*ps->p == ',') {
				ps->p++;
				continue;
			}
			if (*ps->p == ')') {
				ps->p++;
				break;
			}
			rc = fail(ps, "expected ',' or ')'");
			goto fail;
		}
		*out = n;
		return FLOE_OK;
	}
	if (neg) {
		rc = fail(ps, "expected 'in'");
		goto fail;
	}
	ws(ps);
	static const struct {
		const char *s;
		int op;
	} ops[] = {{"==", OP_EQ}, {"!=", OP_NE}, {"<>", OP_NE}, {"<=", OP_LE},
		   {">=", OP_GE}, {"=", OP_EQ},	 {"<", OP_LT},	{">", OP_GT}};
	bool found = false;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t l = strlen(ops[i].s);
		if (!strncmp(ps->p, ops[i].s, l)) {
			n->op = ops[i].op;
			ps->p += l;
			found = true;
			break;
		}
	}
	if (!found) {
		rc = fail(ps, "expected a comparison");
		goto fail;
	}
	if ((rc = parse_literal(ps, n)))
		goto fail;
	*out = n;
	return FLOE_OK;
fail:
	node_free(n);
	return rc;
}

static int parse_chain(fparser *ps, fnode **out, int depth, bool is_or)
{
	fnode *left = NULL, *right = NULL, *n;
	int rc = is_or ? parse_chain(ps, &left, depth, false) : parse_factor(ps, &left, depth);
	if (rc)
		return rc;
	while (kw(ps, is_or ? "or" : "and")) {
		rc = is_or ? parse_chain(ps, &right, depth, false) : parse_factor(ps, &right, depth);
		if (rc) {
			node_free(left);
			return rc;
		}
		if (!(n = node_new(ps, is_or ? F_OR : F_AND))) {
			node_free(left);
			node_free(right);
			return fail(ps, "too complex");
		}
		n->a = left;
		n->b = right;
		left = n;
	}
	*out = left;
	return FLOE_OK;
}

static int parse_expr(fparser *ps, fnode **out, int depth)
{
	return parse_chain(ps, out, depth, true);
}

int stream_filter_compile(stream_filter **out, const char *text, const floe_type *root,
			  floe_error *err)
{
	fparser ps = {text, text, root, err, 0, false, NULL, 0, 0};
	stream_filter *f;
	int rc;
	*out = NULL;
	if (!text || strlen(text) > 65536)
		return floe_error_set(err, FLOE_EINVAL, "filter: empty or longer than 64 KiB");
	f = floe_calloc(1, sizeof(*f));
	if (!f)
		return floe_error_oom(err);
	if ((rc = parse_expr(&ps, &f->root, 0))) {
		stream_filter_free(f);
		return rc;
	}
	ws(&ps);
	if (*ps.p) {
		rc = fail(&ps, "unexpected text");
		stream_filter_free(f);
		return rc;
	}
	*out = f;
	return FLOE_OK;
}

static const stream_col *field_col(const fnode *n, const stream_col *root, int64_t r, bool *null)
{
	const stream_col *c = root;
	*null = false;
	for (int i = 0; i < n->depth; i++) {
		c = &c->kids[n->path[i]];
		if (stream_col_is_null(c, r)) {
			*null = true;
			return c;
		}
	}
	return c;
}

static bool eval(const fnode *n, const stream_col *root, int64_t r)
{
	switch (n->kind) {
	case F_OR:
		return eval(n->a, root, r) || eval(n->b, root, r);
	case F_AND:
		return eval(n->a, root, r) && eval(n->b, root, r);
	case F_NOT:
		return !eval(n->a, root, r);
	default:
		break;
	}
	bool null;
	const stream_col *c = field_col(n, root, r, &null);
	if (n->kind == F_ISNULL)
		return null != n->negate;
	if (null)
		return false;
	floe_value v, lit;
	stream_col_value(c, r, &v);
	if (n->numeric) {
		double x;
		int cmp;
		if (!stream_parse_f64((const char *)v.v.bin.p, v.v.bin.n, &x))
			return false;
		if (n->kind == F_IN) {
			bool hit = false;
			for (int i = 0; i < n->n_nums && !hit; i++)
				hit = x == n->nums[i];
			return hit != n->negate;
		}
		cmp = x < n->nums[0] ? -1 : x > n->nums[0] ? 1 : 0;
		switch (n->op) {
		case OP_EQ:
			return cmp == 0;
		case OP_NE:
			return cmp != 0;
		case OP_LT:
			return cmp < 0;
		case OP_LE:
			return cmp <= 0;
		case OP_GT:
			return cmp > 0;
		default:
			return cmp >= 0;
		}
	}
	if (n->kind == F_IN) {
		bool hit = false;
		for (int64_t i = 0; i < n->lits.len && !hit; i++) {
			stream_col_value(&n->lits, i, &lit);
			hit = floe_value_compare(&v, &lit) == 0;
		}
		return hit != n->negate;
	}
	stream_col_value(&n->lits, 0, &lit);
	int cmp = floe_value_compare(&v, &lit);
	switch (n->op) {
	case OP_EQ:
		return cmp == 0;
	case OP_NE:
		return cmp != 0;
	case OP_LT:
		return cmp < 0;
	case OP_LE:
		return cmp <= 0;
	case OP_GT:
		return cmp > 0;
	default:
		return cmp >= 0;
	}
}

int stream_filter_unknown_fields(char ***names, size_t *n, const char *text, const floe_type *root,
				 floe_error *err)
{
	fparser ps = {text, text, root, err, 0, true, NULL, 0, 0};
	fnode *tree = NULL;
	int rc;
	*names = NULL;
	*n = 0;
	if (!text || strlen(text) > 65536)
		return floe_error_set(err, FLOE_EINVAL, "filter: empty or longer than 64 KiB");
	rc = parse_expr(&ps, &tree, 0);
	node_free(tree);
	if (rc) {
		for (size_t i = 0; i < ps.n_names; i++)
			floe_free(ps.names[i]);
		floe_free(ps.names);
		return rc;
	}
	*names = ps.names;
	*n = ps.n_names;
	return FLOE_OK;
}

static void mark_used(const fnode *n, bool *used, size_t n_root)
{
	if (!n)
		return;
	if (n->depth > 0 && n->path[0] >= 0 && (size_t)n->path[0] < n_root)
		used[n->path[0]] = true;
	mark_used(n->a, used, n_root);
	mark_used(n->b, used, n_root);
}

void stream_filter_fields_used(const stream_filter *f, bool *used, size_t n_root)
{
	if (f)
		mark_used(f->root, used, n_root);
}

bool stream_filter_match(const stream_filter *f, const stream_col *root, int64_t r)
{
	return !f || eval(f->root, root, r);
}
