/*
 * sql_vec.c — the vectorised SELECT executor (sql_vec.h has the design).
 *
 * Stages: bind (sql_expr -> xn: names resolved, types inferred, implicit
 * casts inserted), read (scan batches -> typed vectors), evaluate (an xn
 * over a batch -> a vector), then filter, aggregate, join, sort, slice and
 * print.
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "iceberg/metadata.h"
#include "iceberg/value.h"
#include "json/json.h"
#include "scan/scan_arrow.h"
#include "scan/scan_expr.h"
#include "scan/scan_impl.h"
#include "sql/sql_vec.h"
#include "table/table_impl.h"
#include "util/hmap.h"
#include "util/rand.h"
#include "util/timeutil.h"

/* ---- values ------------------------------------------------------------------------- */

typedef enum vt {
	VT_NULL = 0,
	VT_BOOL,
	VT_INT,    /* p: bits 8/16/32/64 */
	VT_DOUBLE, /* p: 32 for FLOAT */
	VT_DEC,    /* p, s */
	VT_STR,
	VT_BIN,
	VT_DATE,   /* days */
	VT_TIME,   /* µs */
	VT_TS,     /* µs */
	VT_TSTZ,   /* µs; s = 1: print with Z (metadata tables) */
	VT_IVL,    /* day-time interval, µs */
	VT_IVM,    /* year-month interval, months */
	VT_TEXT,   /* a nested value shown as JSON text; p 1: a variant */
} vt;

typedef struct vty {
	vt k;
	int32_t p, s;
} vty;

typedef struct sv {
	bool null;
	union {
		int64_t i;
		double f;
		floe_i128 d;
		struct {
			const char *p;
			size_t n;
		} s;
	} u;
} sv;

/* A batch or a relation: columns of n values. */
typedef struct vrel {
	size_t n_cols;
	const char **names, **quals;
	vty *types;
	const floe_type **ft; /* a table column's Iceberg type (UNNEST needs it); NULL: unknown */
	sv **cols;
	size_t n, cap;
} vrel;

/* ---- expressions -------------------------------------------------------------------- */

typedef enum xop {
	X_COL = 1,
	X_CONST,
	X_NEG,
	X_NOT,
	X_AND,
	X_OR,
	X_CMP,
	X_ARITH,
	X_CONCAT,
	X_CAST,
	X_CASE,
	X_IS,
	X_IN,
	X_LIKE,
	X_FN,
} xop;

typedef struct xn {
	xop op;
	vty t;
	uint32_t off;
	int col;        /* X_COL */
	sv k;           /* X_CONST */
	struct xn **a;  /* operands */
	size_t n;
	int fn;         /* X_FN */
	char cmp[3];    /* X_CMP: = <> < <= > >= */
	char arith;     /* + - * / % */
	bool neg, try_; /* NOT IN / IS NOT / NOT LIKE; TRY_CAST */
	bool has_else;  /* X_CASE */
	const char *what; /* X_IS: NULL TRUE FALSE; X_FN: name */
	regex_t *re;    /* a constant pattern, compiled once */
} xn;

/* An aggregate call in a grouped query. */
typedef enum agg_kind { AG_COUNT_STAR = 1, AG_COUNT, AG_SUM, AG_MIN, AG_MAX, AG_AVG } agg_kind;

typedef struct agg_spec {
	agg_kind kind;
	bool distinct;
	const sql_expr *src;
	xn *arg; /* bound on the input */
	vty t;   /* result */
} agg_spec;

typedef struct agg_state {
	int64_t cnt;
	bool any;
	sv acc;      /* MIN/MAX, SUM of ints (i) and decimals (d) */
	double fsum; /* SUM/AVG of doubles, AVG of everything */
	floe_i128 dsum;
} agg_state;

#define MAX_AGGS 64
#define MAX_REGEX 64
#define MAX_JOIN_ROWS ((size_t)50 << 20)

typedef struct vx {
	sql_ctx *c;
	floe_arena *a;  /* statement lifetime */
	floe_arena *ba; /* the current batch */
	const vrel *in; /* the schema names bind against */
	const vrel *rows_in; /* the input's (aggregate arguments bind against it) */
	bool grouped;   /* binding in the grouped context */
	const sql_select *q;
	agg_spec aggs[MAX_AGGS];
	size_t n_aggs;
	sql_expr *const *keys;
	size_t n_keys;
	regex_t *res[MAX_REGEX];
	size_t n_res;
	int64_t now_us;
} vx;

#define ERR(off, ...) sql_err(x->c, FLOE_EINVAL, (off), __VA_ARGS__)

static const char *vt_name(vty t)
{
	switch (t.k) {
	case VT_NULL: return "NULL";
	case VT_BOOL: return "BOOLEAN";
	case VT_INT: return t.p == 64 ? "BIGINT" : t.p == 16 ? "SMALLINT" : t.p == 8 ? "TINYINT" : "INT";
	case VT_DOUBLE: return t.p == 32 ? "FLOAT" : "DOUBLE";
	case VT_DEC: return "DECIMAL";
	case VT_STR: return "STRING";
	case VT_BIN: return "BYTES";
	case VT_DATE: return "DATE";
	case VT_TIME: return "TIME";
	case VT_TS: return "TIMESTAMP";
	case VT_TSTZ: return "TIMESTAMP_LTZ";
	case VT_IVL: return "INTERVAL DAY TO SECOND";
	case VT_IVM: return "INTERVAL YEAR TO MONTH";
	case VT_TEXT: return "a nested type";
	}
	return "?";
}

static vty T(vt k, int32_t p, int32_t s)
{
	vty t = {k, p, s};
	return t;
}

static bool is_num(vty t)
{
	return t.k == VT_INT || t.k == VT_DOUBLE || t.k == VT_DEC;
}

static bool is_time(vty t)
{
	return t.k == VT_DATE || t.k == VT_TS || t.k == VT_TSTZ || t.k == VT_TIME;
}

static const floe_i128 P10[39] = {
	(floe_i128)1,
	(floe_i128)10,
	(floe_i128)100,
	(floe_i128)1000,
	(floe_i128)10000,
	(floe_i128)100000,
	(floe_i128)1000000,
	(floe_i128)10000000,
	(floe_i128)100000000,
	(floe_i128)1000000000,
	(floe_i128)10000000000LL,
	(floe_i128)100000000000LL,
	(floe_i128)1000000000000LL,
	(floe_i128)10000000000000LL,
	(floe_i128)100000000000000LL,
	(floe_i128)1000000000000000LL,
	(floe_i128)10000000000000000LL,
	(floe_i128)100000000000000000LL,
	(floe_i128)1000000000000000000LL,
	(floe_i128)1000000000000000000LL * 10,
	(floe_i128)1000000000000000000LL * 100,
	(floe_i128)1000000000000000000LL * 1000,
	(floe_i128)1000000000000000000LL * 10000,
	(floe_i128)1000000000000000000LL * 100000,
	(floe_i128)1000000000000000000LL * 1000000,
	(floe_i128)1000000000000000000LL * 10000000,
	(floe_i128)1000000000000000000LL * 100000000,
	(floe_i128)1000000000000000000LL * 1000000000,
	(floe_i128)1000000000000000000LL * 10000000000LL,
	(floe_i128)1000000000000000000LL * 100000000000LL,
	(floe_i128)1000000000000000000LL * 1000000000000LL,
	(floe_i128)1000000000000000000LL * 10000000000000LL,
	(floe_i128)1000000000000000000LL * 100000000000000LL,
	(floe_i128)1000000000000000000LL * 1000000000000000LL,
	(floe_i128)1000000000000000000LL * 10000000000000000LL,
	(floe_i128)1000000000000000000LL * 100000000000000000LL,
	(floe_i128)1000000000000000000LL * 1000000000000000000LL,
	(floe_i128)1000000000000000000LL * 1000000000000000000LL * 10,
	(floe_i128)1000000000000000000LL * 1000000000000000000LL * 100,
};

/* rescale an unscaled decimal from scale a to b, rounding half away from zero */
static bool dec_rescale(floe_i128 v, int32_t from, int32_t to, floe_i128 *out)
{
	if (to >= from) {
		if (to - from > 38)
			return false;
		return !__builtin_mul_overflow(v, P10[to - from], out);
	}
	if (from - to > 38) {
		*out = 0;
		return true;
	}
	floe_i128 d = P10[from - to], q = v / d, r = v % d;
	if (r < 0)
		r = -r;
	if (r * 2 >= d)
		q += v < 0 ? -1 : 1;
	*out = q;
	return true;
}

static bool dec_fits(floe_i128 v, int32_t p)
{
	if (p >= 38)
		return true;
	return v < P10[p] && v > -P10[p];
}

static double dec_to_double(floe_i128 v, int32_t s)
{
	return (double)v / (double)P10[s > 38 ? 38 : s];
}

/* Format a value into the arena (NULL for a NULL). */
static const char *sv_text(floe_arena *a, vty t, const sv *v)
{
	char tmp[96];
	size_t n;
	if (v->null || t.k == VT_NULL)
		return NULL;
	switch (t.k) {
	case VT_BOOL: return v->u.i ? "true" : "false";
	case VT_INT: snprintf(tmp, sizeof(tmp), "%lld", (long long)v->u.i); break;
	case VT_DOUBLE:
		if (isnan(v->u.f))
			return "NaN";
		if (isinf(v->u.f))
			return v->u.f > 0 ? "Infinity" : "-Infinity";
		n = floe_json_format_double(tmp, sizeof(tmp), t.p == 32 ? (double)(float)v->u.f : v->u.f);
		tmp[n < sizeof(tmp) ? n : sizeof(tmp) - 1] = 0;
		break;
	case VT_DEC:
		n = floe_decimal_format(tmp, sizeof(tmp), v->u.d, t.s);
		tmp[n < sizeof(tmp) ? n : sizeof(tmp) - 1] = 0;
		break;
	case VT_DATE:
		n = floe_format_date(tmp, sizeof(tmp), v->u.i);
		tmp[n < sizeof(tmp) ? n : sizeof(tmp) - 1] = 0;
		break;
	case VT_TIME:
		n = floe_format_time_us(tmp, sizeof(tmp), v->u.i, 0);
		tmp[n < sizeof(tmp) ? n : sizeof(tmp) - 1] = 0;
		break;
	case VT_TS:
	case VT_TSTZ:
		n = floe_format_timestamp_us(tmp, sizeof(tmp) - 8, v->u.i, 0);
		if (n > sizeof(tmp) - 8)
			n = sizeof(tmp) - 8;
		snprintf(tmp + n, 8, "%s", t.k == VT_TS ? "" : t.s ? "Z" : "+00:00");
		break;
	case VT_IVL: {
		int64_t us = v->u.i, neg = us < 0;
		if (neg)
			us = -us;
		snprintf(tmp, sizeof(tmp), "%s%lld %02lld:%02lld:%02lld.%03lld", neg ? "-" : "+",
			 (long long)(us / 86400000000LL), (long long)(us / 3600000000LL % 24),
			 (long long)(us / 60000000 % 60), (long long)(us / 1000000 % 60),
			 (long long)(us / 1000 % 1000));
		break;
	}
	case VT_IVM:
		snprintf(tmp, sizeof(tmp), "%s%lld-%02lld", v->u.i < 0 ? "-" : "+",
			 (long long)llabs(v->u.i / 12), (long long)llabs(v->u.i % 12));
		break;
	case VT_BIN: {
		floe_buf b;
		floe_buf_init(&b, 0);
		if (floe_base64_encode(&b, (const uint8_t *)v->u.s.p, v->u.s.n)) {
			floe_buf_reset(&b);
			return NULL;
		}
		char *r = floe_arena_strndup(a, b.data ? (const char *)b.data : "", b.len);
		floe_buf_reset(&b);
		return r;
	}
	default: return floe_arena_strndup(a, v->u.s.p ? v->u.s.p : "", v->u.s.n);
	}
	return floe_arena_strdup(a, tmp);
}

static bool is_var(vty t)
{
	return t.k == VT_STR || t.k == VT_BIN || t.k == VT_TEXT;
}

/* Keep a value beyond its batch (strings copied). */
static int sv_keep(floe_arena *a, vty t, sv *v)
{
	if (v->null || !is_var(t))
		return 0;
	const char *p = floe_arena_memdup(a, v->u.s.n ? v->u.s.p : "", v->u.s.n ? v->u.s.n : 1);
	if (!p)
		return FLOE_ENOMEM;
	v->u.s.p = p;
	return 0;
}

static int sv_cmp(vty t, const sv *a, const sv *b)
{
	switch (t.k) {
	case VT_DOUBLE:
		if (isnan(a->u.f) || isnan(b->u.f))
			return isnan(a->u.f) - isnan(b->u.f);
		return a->u.f < b->u.f ? -1 : a->u.f > b->u.f;
	case VT_DEC: return a->u.d < b->u.d ? -1 : a->u.d > b->u.d;
	case VT_STR:
	case VT_BIN:
	case VT_TEXT: {
		size_t n = a->u.s.n < b->u.s.n ? a->u.s.n : b->u.s.n;
		int r = n ? memcmp(a->u.s.p, b->u.s.p, n) : 0;
		if (r)
			return r < 0 ? -1 : 1;
		return a->u.s.n < b->u.s.n ? -1 : a->u.s.n > b->u.s.n;
	}
	case VT_NULL: return 0;
	default: return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
	}
}

/* Bytes of a value for hashing (a NULL is one marker byte). */
static int sv_key(floe_buf *b, vty t, const sv *v)
{
	if (v->null)
		return floe_buf_putc(b, 0);
	int rc = floe_buf_putc(b, 1);
	if (rc)
		return rc;
	switch (t.k) {
	case VT_DOUBLE: {
		double f = v->u.f == 0 ? 0.0 : v->u.f; /* -0 = +0 */
		return floe_buf_append(b, &f, sizeof(f));
	}
	case VT_DEC: return floe_buf_append(b, &v->u.d, sizeof(v->u.d));
	case VT_STR:
	case VT_BIN:
	case VT_TEXT: {
		uint64_t n = v->u.s.n;
		rc = floe_buf_append(b, &n, sizeof(n));
		return rc ? rc : floe_buf_append(b, v->u.s.p, v->u.s.n);
	}
	default: return floe_buf_append(b, &v->u.i, sizeof(v->u.i));
	}
}

/* ---- casts -------------------------------------------------------------------------- */

static bool ieq(const char *p, size_t n, const char *w)
{
	return strlen(w) == n && !strncasecmp(p, w, n);
}

static void trim(const char **p, size_t *n)
{
	while (*n && ((*p)[0] == ' ' || (*p)[0] == '\t' || (*p)[0] == '\n'))
		(*p)++, (*n)--;
	while (*n && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t' || (*p)[*n - 1] == '\n'))
		(*n)--;
}

static int64_t days_us(int64_t d)
{
	return d * 86400000000LL;
}

/* Cast one value; false when it does not convert (out of range, bad text). */
static bool cast1(floe_arena *a, vty from, vty to, const sv *in, sv *out)
{
	*out = *in;
	if (in->null)
		return true;
	if (from.k == to.k && from.k != VT_DEC && from.k != VT_INT && from.k != VT_DOUBLE)
		return true;
	if (from.k == VT_NULL) {
		out->null = true;
		return true;
	}
	if (to.k == VT_STR) {
		if (from.k == VT_BOOL) {
			out->u.s.p = in->u.i ? "TRUE" : "FALSE";
			out->u.s.n = strlen(out->u.s.p);
			return true;
		}
		if (from.k == VT_BIN || from.k == VT_TEXT)
			return true;
		const char *t = sv_text(a, from, in);
		if (!t)
			return false;
		out->u.s.p = t;
		out->u.s.n = strlen(t);
		return true;
	}
	if (from.k == VT_STR) {
		const char *p = in->u.s.p;
		size_t n = in->u.s.n;
		trim(&p, &n);
		switch (to.k) {
		case VT_BOOL:
			if (ieq(p, n, "true") || ieq(p, n, "1"))
				out->u.i = 1;
			else if (ieq(p, n, "false") || ieq(p, n, "0"))
				out->u.i = 0;
			else
				return false;
			return true;
		case VT_INT: {
			if (!floe_parse_i64(p, n, &out->u.i))
				return false;
			sv t = *out;
			return cast1(a, T(VT_INT, 64, 0), to, &t, out);
		}
		case VT_DOUBLE: return floe_parse_double(p, n, &out->u.f);
		case VT_DEC: {
			floe_i128 d;
			/* parse at a larger scale, then round to the target's */
			int32_t s = to.s + 10 > 38 ? 38 : to.s + 10;
			if (floe_decimal_parse(&d, p, n, 38, s))
				return false;
			if (!dec_rescale(d, s, to.s, &out->u.d))
				return false;
			return dec_fits(out->u.d, to.p);
		}
		case VT_DATE: return floe_parse_date(p, n, &out->u.i);
		case VT_TIME: {
			int64_t ns;
			if (!floe_parse_time_ns(p, n, &ns))
				return false;
			out->u.i = ns / 1000;
			return true;
		}
		case VT_TS:
		case VT_TSTZ: {
			bool z;
			if (floe_parse_timestamp_us(p, n, &out->u.i, &z))
				return true;
			int64_t d;
			if (!floe_parse_date(p, n, &d))
				return false;
			out->u.i = days_us(d);
			return true;
		}
		case VT_BIN: return true;
		default: return false;
		}
	}
	switch (to.k) {
	case VT_BOOL:
		if (from.k == VT_INT) {
			out->u.i = in->u.i != 0;
			return true;
		}
		return false;
	case VT_INT: {
		int64_t v;
		if (from.k == VT_INT || from.k == VT_BOOL) {
			v = in->u.i;
		} else if (from.k == VT_DOUBLE) {
			double f = trunc(in->u.f);
			if (!(f >= -9.2233720368547758e18 && f < 9.2233720368547758e18))
				return false;
			v = (int64_t)f;
		} else if (from.k == VT_DEC) {
			floe_i128 q = in->u.d / P10[from.s > 38 ? 38 : from.s];
			if (q > INT64_MAX || q < INT64_MIN)
				return false;
			v = (int64_t)q;
		} else {
			return false;
		}
		int bits = to.p ? to.p : 64;
		if (bits < 64 && (v >= ((int64_t)1 << (bits - 1)) || v < -((int64_t)1 << (bits - 1))))
			return false;
		out->u.i = v;
		return true;
	}
	case VT_DOUBLE:
		if (from.k == VT_INT || from.k == VT_BOOL)
			out->u.f = (double)in->u.i;
		else if (from.k == VT_DEC)
			out->u.f = dec_to_double(in->u.d, from.s);
		else if (from.k == VT_DOUBLE)
			out->u.f = in->u.f;
		else
			return false;
		if (to.p == 32)
			out->u.f = (double)(float)out->u.f;
		return true;
	case VT_DEC:
		if (from.k == VT_INT) {
			if (!dec_rescale((floe_i128)in->u.i, 0, to.s, &out->u.d))
				return false;
		} else if (from.k == VT_DEC) {
			if (!dec_rescale(in->u.d, from.s, to.s, &out->u.d))
				return false;
		} else if (from.k == VT_DOUBLE) {
			double f = in->u.f * (double)P10[to.s > 38 ? 38 : to.s];
			if (!(fabs(f) < 1.7e38))
				return false;
			out->u.d = (floe_i128)(f < 0 ? f - 0.5 : f + 0.5);
		} else {
			return false;
		}
		return dec_fits(out->u.d, to.p);
	case VT_DATE:
		if (from.k == VT_TS || from.k == VT_TSTZ) {
			out->u.i = floe_floordiv(in->u.i, 86400000000LL);
			return true;
		}
		return false;
	case VT_TS:
	case VT_TSTZ:
		if (from.k == VT_DATE) {
			out->u.i = days_us(in->u.i);
			return true;
		}
		return from.k == VT_TS || from.k == VT_TSTZ;
	case VT_TIME:
		if (from.k == VT_TS || from.k == VT_TSTZ) {
			out->u.i = floe_floormod(in->u.i, 86400000000LL);
			return true;
		}
		return false;
	default: return false;
	}
}

static int type_of(vx *x, const sql_type *st, vty *out)
{
	const char *n = st->name;
	if (!strcmp(n, "BOOLEAN"))
		*out = T(VT_BOOL, 0, 0);
	else if (!strcmp(n, "TINYINT"))
		*out = T(VT_INT, 8, 0);
	else if (!strcmp(n, "SMALLINT"))
		*out = T(VT_INT, 16, 0);
	else if (!strcmp(n, "INT") || !strcmp(n, "INTEGER"))
		*out = T(VT_INT, 32, 0);
	else if (!strcmp(n, "BIGINT"))
		*out = T(VT_INT, 64, 0);
	else if (!strcmp(n, "FLOAT") || !strcmp(n, "REAL"))
		*out = T(VT_DOUBLE, 32, 0);
	else if (!strcmp(n, "DOUBLE"))
		*out = T(VT_DOUBLE, 64, 0);
	else if (!strcmp(n, "DECIMAL") || !strcmp(n, "DEC") || !strcmp(n, "NUMERIC")) {
		int32_t p = st->p < 0 ? 10 : st->p, s = st->s < 0 ? 0 : st->s;
		if (p < 1 || p > 38 || s > p)
			return ERR(st->off, "DECIMAL(%d, %d): precision is 1 to 38 and scale at most it",
				   p, s);
		*out = T(VT_DEC, p, s);
	} else if (!strcmp(n, "STRING") || !strcmp(n, "VARCHAR") || !strcmp(n, "CHAR"))
		*out = T(VT_STR, 0, 0);
	else if (!strcmp(n, "BYTES") || !strcmp(n, "BINARY") || !strcmp(n, "VARBINARY"))
		*out = T(VT_BIN, 0, 0);
	else if (!strcmp(n, "DATE"))
		*out = T(VT_DATE, 0, 0);
	else if (!strcmp(n, "TIME"))
		*out = T(VT_TIME, 0, 0);
	else if (!strcmp(n, "TIMESTAMP"))
		*out = T(VT_TS, 0, 0);
	else if (!strcmp(n, "TIMESTAMP_LTZ"))
		*out = T(VT_TSTZ, 0, 0);
	else
		return sql_err(x->c, FLOE_EUNSUPPORTED, st->off, "CAST to %s is not supported yet", n);
	return 0;
}

/* ---- binding ------------------------------------------------------------------------ */

static xn *xnew(vx *x, xop op, vty t, uint32_t off, size_t n)
{
	xn *e = floe_arena_calloc(x->a, 1, sizeof(*e));
	if (!e)
		return NULL;
	e->op = op;
	e->t = t;
	e->off = off;
	e->col = -1;
	if (n && !(e->a = floe_arena_calloc(x->a, n, sizeof(xn *))))
		return NULL;
	e->n = n;
	return e;
}

#define NEW(var, op, t, off, n) \
	do { \
		if (!((var) = xnew(x, (op), (t), (off), (n)))) \
			return floe_error_oom(x->c->err); \
	} while (0)

static int cast_to(vx *x, xn **e, vty to, bool try_)
{
	xn *c;
	if ((*e)->t.k == to.k && to.k != VT_DEC && to.k != VT_INT && to.k != VT_DOUBLE)
		return 0;
	if ((*e)->t.k == to.k && (*e)->t.p == to.p && (*e)->t.s == to.s)
		return 0;
	if ((*e)->op == X_CONST) {
		/* fold: a literal converts now, or its position is the error */
		sv out;
		if (!cast1(x->a, (*e)->t, to, &(*e)->k, &out)) {
			if (!try_)
				return ERR((*e)->off, "cannot convert this %s to %s", vt_name((*e)->t),
					   vt_name(to));
			out.null = true;
		}
		if (sv_keep(x->a, to, &out))
			return floe_error_oom(x->c->err);
		(*e)->k = out;
		(*e)->t = to;
		return 0;
	}
	NEW(c, X_CAST, to, (*e)->off, 1);
	c->a[0] = *e;
	c->try_ = try_;
	*e = c;
	return 0;
}

static vty dec_of_int(vty t)
{
	return T(VT_DEC, t.p == 64 ? 19 : t.p == 16 ? 5 : t.p == 8 ? 3 : 10, 0);
}

/* The type two operands meet at (comparison, CASE, COALESCE, IN). */
static int common(vx *x, uint32_t off, vty a, vty b, vty *out)
{
	if (a.k == VT_NULL) {
		*out = b;
		return 0;
	}
	if (b.k == VT_NULL || (a.k == b.k && a.k != VT_DEC && a.k != VT_INT && a.k != VT_DOUBLE)) {
		*out = a;
		return 0;
	}
	if (is_num(a) && is_num(b)) {
		if (a.k == VT_DOUBLE || b.k == VT_DOUBLE)
			*out = T(VT_DOUBLE, (a.k == VT_DOUBLE && a.p == 64) || (b.k == VT_DOUBLE && b.p == 64) ? 64 : (a.k == VT_DOUBLE ? a.p : b.p), 0);
		else if (a.k == VT_INT && b.k == VT_INT)
			*out = T(VT_INT, a.p > b.p ? a.p : b.p, 0);
		else {
			vty da = a.k == VT_INT ? dec_of_int(a) : a, db = b.k == VT_INT ? dec_of_int(b) : b;
			int32_t s = da.s > db.s ? da.s : db.s;
			int32_t ip = da.p - da.s > db.p - db.s ? da.p - da.s : db.p - db.s;
			int32_t p = ip + s > 38 ? 38 : ip + s;
			*out = T(VT_DEC, p, s);
		}
		return 0;
	}
	if (a.k == VT_STR && b.k != VT_TEXT) {
		*out = b;
		return 0;
	}
	if (b.k == VT_STR && a.k != VT_TEXT) {
		*out = a;
		return 0;
	}
	if (is_time(a) && is_time(b) && a.k != VT_TIME && b.k != VT_TIME) {
		*out = a.k == VT_TSTZ || b.k == VT_TSTZ ? T(VT_TSTZ, 0, 0) : T(VT_TS, 0, 0);
		return 0;
	}
	if ((a.k == VT_BOOL && b.k == VT_INT) || (a.k == VT_INT && b.k == VT_BOOL)) {
		*out = T(VT_BOOL, 0, 0);
		return 0;
	}
	return ERR(off, "%s and %s cannot be compared or combined", vt_name(a), vt_name(b));
}

static int bind(vx *x, const sql_expr *e, xn **out);
static int query_rel(sql_ctx *c, const sql_select *q, vrel *out);

static bool expr_eq(const sql_expr *a, const sql_expr *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->n_args != b->n_args || a->negated != b->negated ||
	    a->distinct != b->distinct || a->star != b->star)
		return false;
	if ((a->op || b->op) && (!a->op || !b->op || strcmp(a->op, b->op)))
		return false;
	if (a->kind == SQL_E_COL) {
		/* t.col and col are the same column when the names end alike */
		if (strcmp(a->name.parts[a->name.n - 1], b->name.parts[b->name.n - 1]))
			return false;
		if (a->name.n > 1 && b->name.n > 1 &&
		    strcmp(a->name.parts[a->name.n - 2], b->name.parts[b->name.n - 2]))
			return false;
		return true;
	}
	if ((a->text || b->text) && (!a->text || !b->text || strcasecmp(a->text, b->text)))
		return false;
	if (a->kind == SQL_E_CAST && (strcmp(a->type->name, b->type->name) ||
				      a->type->p != b->type->p || a->type->s != b->type->s))
		return false;
	for (size_t i = 0; i < a->n_args; i++)
		if (!expr_eq(a->args[i], b->args[i]))
			return false;
	return true;
}

static bool is_agg_name(const char *f)
{
	return !strcmp(f, "COUNT") || !strcmp(f, "SUM") || !strcmp(f, "MIN") || !strcmp(f, "MAX") ||
	       !strcmp(f, "AVG");
}

static bool has_agg(const sql_expr *e)
{
	if (!e)
		return false;
	if (e->kind == SQL_E_CALL && is_agg_name(e->text))
		return true;
	for (size_t i = 0; i < e->n_args; i++)
		if (has_agg(e->args[i]))
			return true;
	return false;
}

/* the column named name (and of table qual, when given); -1: none */
static int find_named(vx *x, const sql_expr *e, const char *name, const char *qual, int *out)
{
	int found = -1;
	for (size_t i = 0; i < x->in->n_cols; i++) {
		if (strcmp(x->in->names[i], name))
			continue;
		if (qual && (!x->in->quals[i] || strcmp(x->in->quals[i], qual)))
			continue;
		if (found >= 0)
			return ERR(e->off, "column '%s' is ambiguous (qualify it: t.%s)", name, name);
		found = (int)i;
	}
	*out = found;
	return 0;
}

static int find_col(vx *x, const sql_expr *e, int *out)
{
	const sql_name *nm = &e->name;
	int rc = find_named(x, e, nm->parts[nm->n - 1], nm->n > 1 ? nm->parts[nm->n - 2] : NULL, out);
	if (rc || *out >= 0 || nm->n < 2)
		return rc;
	/* a struct field: "a.b.c" of any table, or "b.c" of table a */
	char path[1024];
	for (size_t from = 0; from < 2 && from + 1 < nm->n; from++) {
		size_t len = 0;
		for (size_t i = from; i < nm->n && len < sizeof(path); i++)
			len += (size_t)snprintf(path + len, sizeof(path) - len, "%s%s", i > from ? "." : "",
						nm->parts[i]);
		if (len >= sizeof(path))
			break;
		if ((rc = find_named(x, e, path, from ? nm->parts[0] : NULL, out)) || *out >= 0)
			return rc;
	}
	return 0;
}

/* the functions */
typedef enum fn_id {
	F_UPPER = 1, F_LOWER, F_LENGTH, F_SUBSTRING, F_CONCAT, F_CONCAT_WS, F_TRIM, F_LTRIM, F_RTRIM,
	F_REPLACE, F_LPAD, F_RPAD, F_REPEAT, F_REVERSE, F_INITCAP, F_LOCATE, F_SPLIT_INDEX,
	F_REGEXP_EXTRACT, F_REGEXP_REPLACE, F_REGEXP, F_COALESCE, F_NULLIF, F_IF, F_ABS, F_CEIL,
	F_FLOOR, F_ROUND, F_TRUNCATE, F_MOD, F_POWER, F_SQRT, F_EXP, F_LN, F_LOG10, F_LOG2, F_SIGN,
	F_GREATEST, F_LEAST, F_DATE_FORMAT, F_TO_TIMESTAMP, F_TO_DATE, F_EXTRACT, F_FLOOR_TO,
	F_CEIL_TO, F_NOW, F_CURRENT_DATE, F_JSON_VALUE, F_FROM_UNIXTIME, F_UNIX_TIMESTAMP,
	F_STARTS_WITH, F_ENDS_WITH, F_PI, F_ITEM,
} fn_id;

static const struct {
	const char *name;
	fn_id id;
	int min, max; /* argument counts (-1: any) */
} FNS[] = {
	{"UPPER", F_UPPER, 1, 1},        {"LOWER", F_LOWER, 1, 1},
	{"CHAR_LENGTH", F_LENGTH, 1, 1}, {"CHARACTER_LENGTH", F_LENGTH, 1, 1},
	{"LENGTH", F_LENGTH, 1, 1},      {"SUBSTRING", F_SUBSTRING, 2, 3},
	{"SUBSTR", F_SUBSTRING, 2, 3},   {"CONCAT", F_CONCAT, 1, -1},
	{"CONCAT_WS", F_CONCAT_WS, 2, -1}, {"TRIM", F_TRIM, 1, 1},
	{"BTRIM", F_TRIM, 1, 1},         {"LTRIM", F_LTRIM, 1, 1},
	{"RTRIM", F_RTRIM, 1, 1},        {"REPLACE", F_REPLACE, 3, 3},
	{"LPAD", F_LPAD, 3, 3},          {"RPAD", F_RPAD, 3, 3},
	{"REPEAT", F_REPEAT, 2, 2},      {"REVERSE", F_REVERSE, 1, 1},
	{"INITCAP", F_INITCAP, 1, 1},    {"LOCATE", F_LOCATE, 2, 2},
	{"SPLIT_INDEX", F_SPLIT_INDEX, 3, 3}, {"REGEXP_EXTRACT", F_REGEXP_EXTRACT, 2, 3},
	{"REGEXP_REPLACE", F_REGEXP_REPLACE, 3, 3}, {"REGEXP", F_REGEXP, 2, 2},
	{"COALESCE", F_COALESCE, 1, -1}, {"IFNULL", F_COALESCE, 2, 2},
	{"NULLIF", F_NULLIF, 2, 2},      {"IF", F_IF, 3, 3},
	{"ABS", F_ABS, 1, 1},            {"CEIL", F_CEIL, 1, 2},
	{"CEILING", F_CEIL, 1, 2},       {"FLOOR", F_FLOOR, 1, 2},
	{"ROUND", F_ROUND, 1, 2},        {"TRUNCATE", F_TRUNCATE, 1, 2},
	{"MOD", F_MOD, 2, 2},            {"POWER", F_POWER, 2, 2},
	{"POW", F_POWER, 2, 2},          {"SQRT", F_SQRT, 1, 1},
	{"EXP", F_EXP, 1, 1},            {"LN", F_LN, 1, 1},
	{"LOG10", F_LOG10, 1, 1},        {"LOG2", F_LOG2, 1, 1},
	{"SIGN", F_SIGN, 1, 1},          {"GREATEST", F_GREATEST, 1, -1},
	{"LEAST", F_LEAST, 1, -1},       {"DATE_FORMAT", F_DATE_FORMAT, 2, 2},
	{"TO_TIMESTAMP", F_TO_TIMESTAMP, 1, 2}, {"TO_DATE", F_TO_DATE, 1, 2},
	{"EXTRACT", F_EXTRACT, 2, 2},    {"NOW", F_NOW, 0, 0},
	{"CURRENT_TIMESTAMP", F_NOW, 0, 0}, {"LOCALTIMESTAMP", F_NOW, 0, 0},
	{"CURRENT_DATE", F_CURRENT_DATE, 0, 0}, {"JSON_VALUE", F_JSON_VALUE, 2, 2},
	{"FROM_UNIXTIME", F_FROM_UNIXTIME, 1, 2}, {"UNIX_TIMESTAMP", F_UNIX_TIMESTAMP, 0, 2},
	{"STARTS_WITH", F_STARTS_WITH, 2, 2}, {"ENDS_WITH", F_ENDS_WITH, 2, 2},
	{"PI", F_PI, 0, 0},              {"ITEM", F_ITEM, 2, 2},
	/* EXTRACT's shorthands */
	{"YEAR", F_EXTRACT, 1, 1},       {"QUARTER", F_EXTRACT, 1, 1},
	{"MONTH", F_EXTRACT, 1, 1},      {"WEEK", F_EXTRACT, 1, 1},
	{"DAYOFMONTH", F_EXTRACT, 1, 1}, {"DAYOFYEAR", F_EXTRACT, 1, 1},
	{"DAYOFWEEK", F_EXTRACT, 1, 1},  {"HOUR", F_EXTRACT, 1, 1},
	{"MINUTE", F_EXTRACT, 1, 1},     {"SECOND", F_EXTRACT, 1, 1},
};

static const char *const UNITS[] = {"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE",
				    "SECOND", "MILLISECOND", "MICROSECOND", "DOY", "DOW",
				    "EPOCH", "DAYOFMONTH", "DAYOFYEAR", "DAYOFWEEK", NULL};

static int unit_id(const char *u)
{
	for (int i = 0; UNITS[i]; i++)
		if (!strcasecmp(UNITS[i], u))
			return i;
	return -1;
}

static int bind_fn(vx *x, const sql_expr *e, xn **out)
{
	size_t k = 0;
	const size_t nf = sizeof(FNS) / sizeof(FNS[0]);
	while (k < nf && strcmp(FNS[k].name, e->text))
		k++;
	if (k == nf)
		return ERR(e->off, "unknown function '%s'", e->name.n ? e->name.parts[0] : e->text);
	if ((int)e->n_args < FNS[k].min || (FNS[k].max >= 0 && (int)e->n_args > FNS[k].max))
		return ERR(e->off, "%s takes %d%s argument%s, not %zu", e->text, FNS[k].min,
			   FNS[k].max < 0 ? " or more" : FNS[k].max != FNS[k].min ? " or more" : "",
			   FNS[k].min == 1 && FNS[k].max == 1 ? "" : "s", e->n_args);
	fn_id id = FNS[k].id;
	bool shorthand = id == F_EXTRACT && e->n_args == 1;
	size_t n = e->n_args + (shorthand ? 1 : 0);
	xn *f;
	int rc;
	NEW(f, X_FN, T(VT_STR, 0, 0), e->off, n);
	f->fn = id;
	f->what = e->text;
	for (size_t i = 0; i < e->n_args; i++)
		if ((rc = bind(x, e->args[i], &f->a[i + (shorthand ? 1 : 0)])))
			return rc;
	if (shorthand) {
		NEW(f->a[0], X_CONST, T(VT_STR, 0, 0), e->off, 0);
		const char *u = !strcmp(e->text, "DAYOFMONTH") ? "DAY" : e->text;
		f->a[0]->k.u.s.p = u;
		f->a[0]->k.u.s.n = strlen(u);
	}
	if ((id == F_CEIL || id == F_FLOOR) && e->n_args == 2) {
		f->fn = id = id == F_CEIL ? F_CEIL_TO : F_FLOOR_TO;
	}
	xn **a = f->a;
#define NEED_STR(i) \
	do { \
		if (a[i]->t.k != VT_STR && a[i]->t.k != VT_NULL && (rc = cast_to(x, &a[i], T(VT_STR, 0, 0), false))) \
			return rc; \
	} while (0)
#define NEED_NUM(i) \
	do { \
		if (!is_num(a[i]->t) && a[i]->t.k != VT_NULL) \
			return ERR(a[i]->off, "%s needs a number here, not %s", e->text, vt_name(a[i]->t)); \
	} while (0)
#define NEED_INT(i) \
	do { \
		if (a[i]->t.k != VT_INT && a[i]->t.k != VT_NULL) \
			return ERR(a[i]->off, "%s needs an integer here, not %s", e->text, vt_name(a[i]->t)); \
		if ((rc = cast_to(x, &a[i], T(VT_INT, 64, 0), false))) \
			return rc; \
	} while (0)
	switch (id) {
	case F_UPPER: case F_LOWER: case F_TRIM: case F_LTRIM: case F_RTRIM: case F_REVERSE:
	case F_INITCAP:
		NEED_STR(0);
		break;
	case F_LENGTH:
		NEED_STR(0);
		f->t = T(VT_INT, 32, 0);
		break;
	case F_SUBSTRING:
		NEED_STR(0);
		for (size_t i = 1; i < n; i++)
			NEED_INT(i);
		break;
	case F_CONCAT: case F_CONCAT_WS:
		for (size_t i = 0; i < n; i++)
			NEED_STR(i);
		break;
	case F_REPLACE: case F_SPLIT_INDEX:
		NEED_STR(0);
		NEED_STR(1);
		if (id == F_REPLACE)
			NEED_STR(2);
		else
			NEED_INT(2);
		break;
	case F_LPAD: case F_RPAD:
		NEED_STR(0);
		NEED_INT(1);
		NEED_STR(2);
		break;
	case F_REPEAT:
		NEED_STR(0);
		NEED_INT(1);
		break;
	case F_LOCATE:
		NEED_STR(0);
		NEED_STR(1);
		f->t = T(VT_INT, 32, 0);
		break;
	case F_STARTS_WITH: case F_ENDS_WITH:
		NEED_STR(0);
		NEED_STR(1);
		f->t = T(VT_BOOL, 0, 0);
		break;
	case F_REGEXP_EXTRACT: case F_REGEXP_REPLACE: case F_REGEXP: {
		NEED_STR(0);
		NEED_STR(1);
		if (id == F_REGEXP_EXTRACT && n == 3)
			NEED_INT(2);
		if (id == F_REGEXP_REPLACE)
			NEED_STR(2);
		if (id == F_REGEXP)
			f->t = T(VT_BOOL, 0, 0);
		if (a[1]->op != X_CONST || a[1]->k.null)
			return sql_err(x->c, FLOE_EUNSUPPORTED, a[1]->off,
				       "%s takes a constant pattern", e->text);
		if (x->n_res == MAX_REGEX)
			return sql_err(x->c, FLOE_EUNSUPPORTED, e->off, "too many patterns");
		regex_t *re = floe_arena_calloc(x->a, 1, sizeof(*re));
		char *pat = floe_arena_strndup(x->a, a[1]->k.u.s.p, a[1]->k.u.s.n);
		if (!re || !pat)
			return floe_error_oom(x->c->err);
		int rr = regcomp(re, pat, REG_EXTENDED);
		if (rr) {
			char m[128];
			regerror(rr, re, m, sizeof(m));
			return ERR(a[1]->off, "bad regular expression: %s", m);
		}
		x->res[x->n_res++] = re;
		f->re = re;
		break;
	}
	case F_COALESCE: case F_NULLIF: case F_GREATEST: case F_LEAST: case F_IF: {
		size_t from = id == F_IF ? 1 : 0;
		if (id == F_IF && a[0]->t.k != VT_BOOL && a[0]->t.k != VT_NULL)
			return ERR(a[0]->off, "IF needs a condition (BOOLEAN), not %s", vt_name(a[0]->t));
		vty t = a[from]->t;
		for (size_t i = from + 1; i < n; i++)
			if ((rc = common(x, a[i]->off, t, a[i]->t, &t)))
				return rc;
		for (size_t i = from; i < n; i++)
			if ((rc = cast_to(x, &a[i], t, false)))
				return rc;
		f->t = t;
		break;
	}
	case F_ABS: case F_SIGN:
		NEED_NUM(0);
		f->t = a[0]->t;
		break;
	case F_CEIL: case F_FLOOR:
		NEED_NUM(0);
		f->t = a[0]->t.k == VT_DEC ? T(VT_DEC, a[0]->t.p - a[0]->t.s + 1 > 38 ? 38 : a[0]->t.p - a[0]->t.s + 1, 0) : a[0]->t;
		break;
	case F_ROUND: case F_TRUNCATE:
		NEED_NUM(0);
		if (n == 2) {
			NEED_INT(1);
			if (a[1]->op != X_CONST)
				return sql_err(x->c, FLOE_EUNSUPPORTED, a[1]->off,
					       "%s takes a constant number of digits", e->text);
		}
		f->t = a[0]->t;
		if (f->t.k == VT_DEC) {
			int64_t d = n == 2 && !a[1]->k.null ? a[1]->k.u.i : 0;
			if (d < 0)
				d = 0;
			if (d < f->t.s)
				f->t = T(VT_DEC, f->t.p - f->t.s + (int32_t)d + 1 > 38 ? 38 : f->t.p - f->t.s + (int32_t)d + 1, (int32_t)d);
		}
		break;
	case F_MOD:
		NEED_NUM(0);
		NEED_NUM(1);
		if (a[0]->t.k != VT_INT || a[1]->t.k != VT_INT)
			return sql_err(x->c, FLOE_EUNSUPPORTED, e->off, "MOD takes integers");
		f->t = a[1]->t;
		break;
	case F_POWER: case F_SQRT: case F_EXP: case F_LN: case F_LOG10: case F_LOG2:
		for (size_t i = 0; i < n; i++) {
			NEED_NUM(i);
			if ((rc = cast_to(x, &a[i], T(VT_DOUBLE, 64, 0), false)))
				return rc;
		}
		f->t = T(VT_DOUBLE, 64, 0);
		break;
	case F_PI:
		f->t = T(VT_DOUBLE, 64, 0);
		break;
	case F_DATE_FORMAT:
		if (a[0]->t.k == VT_STR && (rc = cast_to(x, &a[0], T(VT_TS, 0, 0), false)))
			return rc;
		if (!is_time(a[0]->t) && a[0]->t.k != VT_NULL)
			return ERR(a[0]->off, "DATE_FORMAT needs a timestamp or date, not %s",
				   vt_name(a[0]->t));
		NEED_STR(1);
		break;
	case F_TO_TIMESTAMP: case F_TO_DATE:
		NEED_STR(0);
		if (n == 2)
			NEED_STR(1);
		f->t = id == F_TO_DATE ? T(VT_DATE, 0, 0) : T(VT_TS, 0, 0);
		break;
	case F_FROM_UNIXTIME:
		NEED_INT(0);
		if (n == 2)
			NEED_STR(1);
		break;
	case F_UNIX_TIMESTAMP:
		if (n >= 1)
			NEED_STR(0);
		if (n == 2)
			NEED_STR(1);
		f->t = T(VT_INT, 64, 0);
		break;
	case F_EXTRACT:
		if (a[0]->op != X_CONST || unit_id(a[0]->k.u.s.p ? a[0]->k.u.s.p : "") < 0)
			return ERR(a[0]->off, "unknown time unit");
		if (a[1]->t.k == VT_STR && (rc = cast_to(x, &a[1], T(VT_TS, 0, 0), false)))
			return rc;
		if (!is_time(a[1]->t) && a[1]->t.k != VT_NULL)
			return ERR(a[1]->off, "%s needs a date or timestamp, not %s", e->text,
				   vt_name(a[1]->t));
		f->t = T(VT_INT, 64, 0);
		break;
	case F_FLOOR_TO: case F_CEIL_TO:
		if (a[1]->op != X_CONST || unit_id(a[1]->k.u.s.p ? a[1]->k.u.s.p : "") < 0)
			return ERR(a[1]->off, "unknown time unit");
		if (a[0]->t.k != VT_TS && a[0]->t.k != VT_TSTZ && a[0]->t.k != VT_DATE)
			return ERR(a[0]->off, "%s(... TO unit) needs a date or timestamp, not %s",
				   e->text, vt_name(a[0]->t));
		f->t = a[0]->t;
		break;
	case F_NOW:
		f->t = T(VT_TSTZ, 0, 0);
		break;
	case F_CURRENT_DATE:
		f->t = T(VT_DATE, 0, 0);
		break;
	case F_JSON_VALUE:
		NEED_STR(0);
		NEED_STR(1);
		break;
	case F_ITEM:
		/* map['k'], array[i] on a nested column (held as its JSON text) */
		if (a[0]->t.k != VT_TEXT && a[0]->t.k != VT_NULL)
			return ERR(e->off, "[...] needs a map or an array, not %s", vt_name(a[0]->t));
		if (a[1]->t.k != VT_INT)
			NEED_STR(1);
		break;
	}
#undef NEED_STR
#undef NEED_NUM
#undef NEED_INT
	*out = f;
	return 0;
}

static int bind_arith(vx *x, const sql_expr *e, xn *l, xn *r, xn **out)
{
	char op = e->op[0];
	xn *b;
	int rc;
	vty t;
	/* time arithmetic */
	if ((is_time(l->t) || l->t.k == VT_IVL || l->t.k == VT_IVM) ||
	    (is_time(r->t) || r->t.k == VT_IVL || r->t.k == VT_IVM)) {
		if (op == '+' && (r->t.k != VT_IVL && r->t.k != VT_IVM) &&
		    (l->t.k == VT_IVL || l->t.k == VT_IVM)) {
			xn *tmp = l;
			l = r;
			r = tmp;
		}
		if ((op == '+' || op == '-') && is_time(l->t) && (r->t.k == VT_IVL || r->t.k == VT_IVM))
			t = l->t;
		else if (op == '-' && l->t.k == VT_DATE && r->t.k == VT_DATE)
			t = T(VT_INT, 32, 0);
		else
			return ERR(e->off, "%s %c %s is not defined", vt_name(l->t), op, vt_name(r->t));
		NEW(b, X_ARITH, t, e->off, 2);
		b->arith = op;
		b->a[0] = l;
		b->a[1] = r;
		*out = b;
		return 0;
	}
	if (l->t.k == VT_STR && r->t.k != VT_STR && (rc = cast_to(x, &l, r->t, false)))
		return rc;
	if (r->t.k == VT_STR && l->t.k != VT_STR && (rc = cast_to(x, &r, l->t, false)))
		return rc;
	if ((!is_num(l->t) && l->t.k != VT_NULL) || (!is_num(r->t) && r->t.k != VT_NULL))
		return ERR(e->off, "'%c' needs numbers, not %s and %s", op, vt_name(l->t), vt_name(r->t));
	if (l->t.k == VT_NULL && r->t.k == VT_NULL)
		l->t = r->t = T(VT_INT, 32, 0);
	if ((rc = common(x, e->off, l->t, r->t, &t)))
		return rc;
	if (t.k == VT_DEC) {
		vty lt = l->t.k == VT_INT ? dec_of_int(l->t) : l->t.k == VT_NULL ? t : l->t;
		vty rt = r->t.k == VT_INT ? dec_of_int(r->t) : r->t.k == VT_NULL ? t : r->t;
		if ((rc = cast_to(x, &l, lt, false)) || (rc = cast_to(x, &r, rt, false)))
			return rc;
		if (op == '+' || op == '-') {
			t.p = t.p + 1 > 38 ? 38 : t.p + 1;
			if ((rc = cast_to(x, &l, T(VT_DEC, t.p, t.s), false)) ||
			    (rc = cast_to(x, &r, T(VT_DEC, t.p, t.s), false)))
				return rc;
		} else if (op == '*') {
			int32_t s = lt.s + rt.s, p = lt.p + rt.p;
			if (s > 38)
				s = 38;
			t = T(VT_DEC, p > 38 ? 38 : p, s);
		} else if (op == '/') {
			/* Calcite's rule: scale max(6, s1 + p2 + 1) */
			int32_t s = lt.s + rt.p + 1 < 6 ? 6 : lt.s + rt.p + 1;
			int32_t p = lt.p - lt.s + rt.s + s;
			if (p > 38) {
				s -= p - 38;
				if (s < 6)
					s = 6;
				p = 38;
			}
			t = T(VT_DEC, p, s);
		} else {
			t = rt;
			if ((rc = cast_to(x, &l, T(VT_DEC, 38, rt.s), false)))
				return rc;
		}
	} else {
		if ((rc = cast_to(x, &l, t, false)) || (rc = cast_to(x, &r, t, false)))
			return rc;
		if (t.k == VT_INT && op != '/' && op != '%')
			t.p = 64 > t.p ? (t.p == 64 ? 64 : 32 > t.p ? 32 : t.p) : 64;
	}
	NEW(b, X_ARITH, t, e->off, 2);
	b->arith = op;
	b->a[0] = l;
	b->a[1] = r;
	*out = b;
	return 0;
}

static int need_bool(vx *x, xn *e, const char *what)
{
	if (e->t.k != VT_BOOL && e->t.k != VT_NULL)
		return ERR(e->off, "%s needs a condition (BOOLEAN), not %s", what, vt_name(e->t));
	return 0;
}

static int bind_agg(vx *x, const sql_expr *e, xn **out)
{
	agg_spec sp = {0};
	int rc;
	if (!x->grouped)
		return ERR(e->off, "aggregate %s is not allowed here", e->text);
	for (size_t i = 0; i < x->n_aggs; i++)
		if (expr_eq(x->aggs[i].src, e)) {
			NEW(*out, X_COL, x->aggs[i].t, e->off, 0);
			(*out)->col = (int)(x->n_keys + i);
			return 0;
		}
	if (x->n_aggs == MAX_AGGS)
		return sql_err(x->c, FLOE_EUNSUPPORTED, e->off, "more than %d aggregates", MAX_AGGS);
	sp.src = e;
	sp.distinct = e->distinct;
	const char *f = e->text;
	if (e->star) {
		if (strcmp(f, "COUNT"))
			return ERR(e->off, "%s(*) is not defined (COUNT(*) is)", f);
		sp.kind = AG_COUNT_STAR;
		sp.t = T(VT_INT, 64, 0);
	} else {
		if (e->n_args != 1)
			return ERR(e->off, "%s takes one argument", f);
		for (size_t i = 0; i < e->n_args; i++)
			if (has_agg(e->args[i]))
				return ERR(e->args[i]->off, "aggregates do not nest");
		const vrel *g = x->in;
		x->grouped = false;
		x->in = x->rows_in;
		rc = bind(x, e->args[0], &sp.arg);
		x->grouped = true;
		x->in = g;
		if (rc)
			return rc;
		vty at = sp.arg->t;
		if (!strcmp(f, "COUNT")) {
			sp.kind = AG_COUNT;
			sp.t = T(VT_INT, 64, 0);
		} else if (!strcmp(f, "MIN") || !strcmp(f, "MAX")) {
			sp.kind = f[1] == 'I' ? AG_MIN : AG_MAX;
			sp.t = at;
		} else {
			if (!is_num(at) && at.k != VT_NULL)
				return ERR(e->args[0]->off, "%s needs numbers, not %s", f, vt_name(at));
			if (!strcmp(f, "SUM")) {
				sp.kind = AG_SUM;
				sp.t = at.k == VT_INT || at.k == VT_NULL ? T(VT_INT, 64, 0) :
				       at.k == VT_DEC ? T(VT_DEC, 38, at.s) : T(VT_DOUBLE, 64, 0);
			} else {
				/* as DuckDB: the average is a DOUBLE */
				sp.kind = AG_AVG;
				sp.t = T(VT_DOUBLE, 64, 0);
			}
		}
	}
	x->aggs[x->n_aggs] = sp;
	NEW(*out, X_COL, sp.t, e->off, 0);
	(*out)->col = (int)(x->n_keys + x->n_aggs);
	x->n_aggs++;
	return 0;
}

static int bind(vx *x, const sql_expr *e, xn **out)
{
	xn *r = NULL, *l;
	int rc;
	if (x->grouped) {
		for (size_t i = 0; i < x->n_keys; i++)
			if (expr_eq(x->keys[i], e)) {
				NEW(r, X_COL, x->in->types[i], e->off, 0);
				r->col = (int)i;
				*out = r;
				return 0;
			}
	}
	switch (e->kind) {
	case SQL_E_COL: {
		if (x->grouped) {
			/* a SELECT alias used in HAVING / ORDER BY of a grouped query is bound by the caller */
			return ERR(e->off, "column '%s' must be in GROUP BY or inside an aggregate",
				   e->name.parts[e->name.n - 1]);
		}
		int col;
		if ((rc = find_col(x, e, &col)))
			return rc;
		if (col < 0) {
			const char *nm = e->name.parts[0];
			if (e->name.n == 1 && (!strcasecmp(nm, "CURRENT_TIMESTAMP") ||
					       !strcasecmp(nm, "LOCALTIMESTAMP") ||
					       !strcasecmp(nm, "CURRENT_DATE") || !strcasecmp(nm, "NOW"))) {
				NEW(r, X_FN, strcasecmp(nm, "CURRENT_DATE") ? T(VT_TSTZ, 0, 0) : T(VT_DATE, 0, 0), e->off, 0);
				r->fn = strcasecmp(nm, "CURRENT_DATE") ? F_NOW : F_CURRENT_DATE;
				break;
			}
			return ERR(e->off, "unknown column '%s'", e->name.parts[e->name.n - 1]);
		}
		NEW(r, X_COL, x->in->types[col], e->off, 0);
		r->col = col;
		break;
	}
	case SQL_E_STAR: return ERR(e->off, "'*' is not allowed here");
	case SQL_E_STR:
		NEW(r, X_CONST, T(VT_STR, 0, 0), e->off, 0);
		r->k.u.s.p = e->text;
		r->k.u.s.n = strlen(e->text);
		break;
	case SQL_E_NUM: {
		const char *s = e->text;
		size_t n = strlen(s);
		int64_t i;
		if (!strpbrk(s, ".eE") && floe_parse_i64(s, n, &i)) {
			NEW(r, X_CONST, T(VT_INT, i > INT32_MAX || i < INT32_MIN ? 64 : 32, 0), e->off, 0);
			r->k.u.i = i;
		} else if (strpbrk(s, "eE")) {
			NEW(r, X_CONST, T(VT_DOUBLE, 64, 0), e->off, 0);
			if (!floe_parse_double(s, n, &r->k.u.f))
				return ERR(e->off, "bad number '%s'", s);
		} else {
			const char *dot = strchr(s, '.');
			int32_t sc = dot ? (int32_t)(n - (size_t)(dot - s) - 1) : 0;
			int32_t p = (int32_t)n - (dot ? 1 : 0);
			if (p > 38 || sc > 38)
				return ERR(e->off, "number '%s' has more than 38 digits", s);
			NEW(r, X_CONST, T(VT_DEC, p < 1 ? 1 : p, sc), e->off, 0);
			if (floe_decimal_parse(&r->k.u.d, s, n, 38, sc))
				return ERR(e->off, "bad number '%s'", s);
		}
		break;
	}
	case SQL_E_BOOL:
		NEW(r, X_CONST, T(VT_BOOL, 0, 0), e->off, 0);
		r->k.u.i = e->text[0] == 'T';
		break;
	case SQL_E_NULL:
		NEW(r, X_CONST, T(VT_NULL, 0, 0), e->off, 0);
		r->k.null = true;
		break;
	case SQL_E_TYPED: {
		vty t = !strcmp(e->text, "DATE") ? T(VT_DATE, 0, 0) :
			!strcmp(e->text, "TIME") ? T(VT_TIME, 0, 0) :
			!strcmp(e->text, "TIMESTAMP") ? T(VT_TS, 0, 0) : T(VT_TSTZ, 0, 0);
		if ((rc = bind(x, e->args[0], &r)) || (rc = cast_to(x, &r, t, false)))
			return rc;
		r->off = e->off;
		break;
	}
	case SQL_E_INTERVAL: {
		int64_t v;
		const char *u = e->op;
		const char *s = e->text;
		bool neg = *s == '-';
		if (neg || *s == '+')
			s++;
		if (!floe_parse_i64(s, strlen(s), &v))
			return sql_err(x->c, FLOE_EUNSUPPORTED, e->off,
				       "INTERVAL '%s' %s: only whole numbers of one unit are supported yet",
				       e->text, u);
		if (neg)
			v = -v;
		static const struct {
			const char *u;
			int64_t us;
			bool months;
		} IU[] = {{"SECOND", 1000000, false}, {"MINUTE", 60000000, false},
			  {"HOUR", 3600000000LL, false}, {"DAY", 86400000000LL, false},
			  {"WEEK", 7 * 86400000000LL, false}, {"MONTH", 1, true},
			  {"YEAR", 12, true}, {"SECONDS", 1000000, false},
			  {"MINUTES", 60000000, false}, {"HOURS", 3600000000LL, false},
			  {"DAYS", 86400000000LL, false}, {"MONTHS", 1, true}, {"YEARS", 12, true}};
		size_t k = 0;
		while (k < sizeof(IU) / sizeof(IU[0]) && strcmp(IU[k].u, u))
			k++;
		if (k == sizeof(IU) / sizeof(IU[0]))
			return ERR(e->off, "unknown interval unit '%s'", u);
		NEW(r, X_CONST, IU[k].months ? T(VT_IVM, 0, 0) : T(VT_IVL, 0, 0), e->off, 0);
		if (__builtin_mul_overflow(v, IU[k].us, &r->k.u.i))
			return ERR(e->off, "interval out of range");
		break;
	}
	case SQL_E_UNARY:
		if ((rc = bind(x, e->args[0], &l)))
			return rc;
		if (!strcmp(e->op, "NOT")) {
			if ((rc = need_bool(x, l, "NOT")))
				return rc;
			NEW(r, X_NOT, T(VT_BOOL, 0, 0), e->off, 1);
		} else if (!strcmp(e->op, "-")) {
			if (!is_num(l->t) && l->t.k != VT_IVL && l->t.k != VT_IVM && l->t.k != VT_NULL)
				return ERR(e->off, "'-' needs a number, not %s", vt_name(l->t));
			if (l->op == X_CONST && !l->k.null) {
				if (l->t.k == VT_DEC)
					l->k.u.d = -l->k.u.d;
				else if (l->t.k == VT_DOUBLE)
					l->k.u.f = -l->k.u.f;
				else
					l->k.u.i = -l->k.u.i;
				l->off = e->off;
				r = l;
				break;
			}
			NEW(r, X_NEG, l->t, e->off, 1);
		} else {
			r = l;
			break;
		}
		r->a[0] = l;
		break;
	case SQL_E_BINARY: {
		xn *rr;
		const char *op = e->op;
		if ((rc = bind(x, e->args[0], &l)) || (rc = bind(x, e->args[1], &rr)))
			return rc;
		if (!strcmp(op, "AND") || !strcmp(op, "OR")) {
			if ((rc = need_bool(x, l, op)) || (rc = need_bool(x, rr, op)))
				return rc;
			NEW(r, op[0] == 'A' ? X_AND : X_OR, T(VT_BOOL, 0, 0), e->off, 2);
		} else if (!strcmp(op, "||")) {
			if ((rc = cast_to(x, &l, T(VT_STR, 0, 0), false)) ||
			    (rc = cast_to(x, &rr, T(VT_STR, 0, 0), false)))
				return rc;
			NEW(r, X_CONCAT, T(VT_STR, 0, 0), e->off, 2);
		} else if (strchr("=<>", op[0])) {
			vty t;
			if ((rc = common(x, e->off, l->t, rr->t, &t)) || (rc = cast_to(x, &l, t, false)) ||
			    (rc = cast_to(x, &rr, t, false)))
				return rc;
			if (t.k == VT_TEXT)
				return sql_err(x->c, FLOE_EUNSUPPORTED, e->off,
					       "nested values cannot be compared yet");
			NEW(r, X_CMP, T(VT_BOOL, 0, 0), e->off, 2);
			snprintf(r->cmp, sizeof(r->cmp), "%s", op);
		} else {
			return bind_arith(x, e, l, rr, out);
		}
		r->a[0] = l;
		r->a[1] = rr;
		break;
	}
	case SQL_E_CALL:
		if (is_agg_name(e->text))
			return bind_agg(x, e, out);
		return bind_fn(x, e, out);
	case SQL_E_CAST: {
		vty t;
		if ((rc = bind(x, e->args[0], &l)) || (rc = type_of(x, e->type, &t)))
			return rc;
		bool try_ = !strcmp(e->text, "TRY_CAST");
		if (l->t.k == VT_TEXT || (l->t.k == VT_BIN && t.k != VT_STR && t.k != VT_BIN))
			return ERR(e->off, "cannot CAST %s to %s", vt_name(l->t), vt_name(t));
		if (l->op == X_CONST) {
			if ((rc = cast_to(x, &l, t, try_)))
				return rc;
			r = l;
			break;
		}
		NEW(r, X_CAST, t, e->off, 1);
		r->a[0] = l;
		r->try_ = try_;
		break;
	}
	case SQL_E_CASE: {
		/* args: operand|NULL, (when, then)*, else|NULL */
		size_t nw = (e->n_args - 2) / 2;
		xn *operand = NULL;
		if (e->args[0] && (rc = bind(x, e->args[0], &operand)))
			return rc;
		NEW(r, X_CASE, T(VT_NULL, 0, 0), e->off, nw * 2 + 1);
		vty t = T(VT_NULL, 0, 0);
		for (size_t i = 0; i < nw; i++) {
			xn *w, *th;
			if ((rc = bind(x, e->args[1 + 2 * i], &w)) || (rc = bind(x, e->args[2 + 2 * i], &th)))
				return rc;
			if (operand) {
				vty ct;
				xn *cmp, *o = operand;
				if ((rc = common(x, w->off, o->t, w->t, &ct)) || (rc = cast_to(x, &o, ct, false)) ||
				    (rc = cast_to(x, &w, ct, false)))
					return rc;
				NEW(cmp, X_CMP, T(VT_BOOL, 0, 0), w->off, 2);
				memcpy(cmp->cmp, "=", 2);
				cmp->a[0] = o;
				cmp->a[1] = w;
				w = cmp;
			} else if ((rc = need_bool(x, w, "WHEN"))) {
				return rc;
			}
			if ((rc = common(x, th->off, t, th->t, &t)))
				return rc;
			r->a[2 * i] = w;
			r->a[2 * i + 1] = th;
		}
		xn *el;
		if (e->args[e->n_args - 1]) {
			if ((rc = bind(x, e->args[e->n_args - 1], &el)) || (rc = common(x, el->off, t, el->t, &t)))
				return rc;
		} else {
			NEW(el, X_CONST, T(VT_NULL, 0, 0), e->off, 0);
			el->k.null = true;
		}
		r->a[2 * nw] = el;
		for (size_t i = 0; i < nw; i++)
			if ((rc = cast_to(x, &r->a[2 * i + 1], t, false)))
				return rc;
		if ((rc = cast_to(x, &r->a[2 * nw], t, false)))
			return rc;
		r->t = t;
		break;
	}
	case SQL_E_IS:
		if ((rc = bind(x, e->args[0], &l)))
			return rc;
		if (strcmp(e->text, "NULL") && (rc = need_bool(x, l, "IS TRUE / IS FALSE")))
			return rc;
		NEW(r, X_IS, T(VT_BOOL, 0, 0), e->off, 1);
		r->a[0] = l;
		r->what = e->text;
		r->neg = e->negated;
		break;
	case SQL_E_SUBQUERY:
	case SQL_E_EXISTS: {
		/* uncorrelated: run once, its value is a constant */
		vrel sub;
		if ((rc = query_rel(x->c, e->sub, &sub)))
			return rc;
		if (e->kind == SQL_E_EXISTS) {
			NEW(r, X_CONST, T(VT_BOOL, 0, 0), e->off, 0);
			r->k.u.i = sub.n > 0;
			break;
		}
		if (sub.n_cols != 1)
			return ERR(e->off, "a subquery used as a value gives one column, not %zu",
				   sub.n_cols);
		if (sub.n > 1)
			return ERR(e->off, "a subquery used as a value gave %zu rows (at most one)", sub.n);
		NEW(r, X_CONST, sub.types[0], e->off, 0);
		if (sub.n)
			r->k = sub.cols[0][0];
		else
			r->k.null = true;
		break;
	}
	case SQL_E_IN: {
		if (e->sub) {
			/* x IN (SELECT ...): the subquery's values as the list */
			vrel sub;
			if ((rc = query_rel(x->c, e->sub, &sub)))
				return rc;
			if (sub.n_cols != 1)
				return ERR(e->off, "the subquery of IN gives one column, not %zu", sub.n_cols);
			NEW(r, X_IN, T(VT_BOOL, 0, 0), e->off, sub.n + 1);
			vty t = sub.types[0];
			if ((rc = bind(x, e->args[0], &r->a[0])) || (rc = common(x, e->off, r->a[0]->t, t, &t)) ||
			    (rc = cast_to(x, &r->a[0], t, false)))
				return rc;
			for (size_t i = 0; i < sub.n; i++) {
				NEW(r->a[i + 1], X_CONST, sub.types[0], e->off, 0);
				r->a[i + 1]->k = sub.cols[0][i];
				if ((rc = cast_to(x, &r->a[i + 1], t, false)))
					return rc;
			}
			r->neg = e->negated;
			break;
		}
		NEW(r, X_IN, T(VT_BOOL, 0, 0), e->off, e->n_args);
		vty t = T(VT_NULL, 0, 0);
		for (size_t i = 0; i < e->n_args; i++) {
			if ((rc = bind(x, e->args[i], &r->a[i])) || (rc = common(x, r->a[i]->off, t, r->a[i]->t, &t)))
				return rc;
		}
		for (size_t i = 0; i < e->n_args; i++)
			if ((rc = cast_to(x, &r->a[i], t, false)))
				return rc;
		r->neg = e->negated;
		break;
	}
	case SQL_E_BETWEEN: {
		/* x BETWEEN a AND b = x >= a AND x <= b (NULLs as AND's) */
		xn *v, *lo, *hi, *c1, *c2;
		vty t;
		if ((rc = bind(x, e->args[0], &v)) || (rc = bind(x, e->args[1], &lo)) ||
		    (rc = bind(x, e->args[2], &hi)))
			return rc;
		if ((rc = common(x, e->off, v->t, lo->t, &t)) || (rc = common(x, e->off, t, hi->t, &t)) ||
		    (rc = cast_to(x, &v, t, false)) || (rc = cast_to(x, &lo, t, false)) ||
		    (rc = cast_to(x, &hi, t, false)))
			return rc;
		NEW(c1, X_CMP, T(VT_BOOL, 0, 0), e->off, 2);
		NEW(c2, X_CMP, T(VT_BOOL, 0, 0), e->off, 2);
		memcpy(c1->cmp, ">=", 3);
		memcpy(c2->cmp, "<=", 3);
		c1->a[0] = v;
		c1->a[1] = lo;
		c2->a[0] = v;
		c2->a[1] = hi;
		NEW(r, X_AND, T(VT_BOOL, 0, 0), e->off, 2);
		r->a[0] = c1;
		r->a[1] = c2;
		if (e->negated) {
			xn *nt;
			NEW(nt, X_NOT, T(VT_BOOL, 0, 0), e->off, 1);
			nt->a[0] = r;
			r = nt;
		}
		break;
	}
	case SQL_E_LIKE: {
		xn *p;
		if ((rc = bind(x, e->args[0], &l)) || (rc = bind(x, e->args[1], &p)) ||
		    (rc = cast_to(x, &l, T(VT_STR, 0, 0), false)) ||
		    (rc = cast_to(x, &p, T(VT_STR, 0, 0), false)))
			return rc;
		NEW(r, X_LIKE, T(VT_BOOL, 0, 0), e->off, 2);
		r->a[0] = l;
		r->a[1] = p;
		r->neg = e->negated;
		break;
	}
	}
	if (!r)
		return ERR(e->off, "this expression is not supported");
	*out = r;
	return 0;
}

/* ---- evaluation --------------------------------------------------------------------- */

typedef struct vec {
	sv *v;
} vec;

static int eval(vx *x, const xn *e, const vrel *b, sv **out);

static size_t utf8_len(const char *p, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += ((unsigned char)p[i] & 0xC0) != 0x80;
	return k;
}

/* byte offset of character c (0-based) */
static size_t utf8_off(const char *p, size_t n, size_t c)
{
	size_t i = 0;
	while (i < n && c) {
		i++;
		while (i < n && ((unsigned char)p[i] & 0xC0) == 0x80)
			i++;
		c--;
	}
	return i;
}

static int set_str(vx *x, sv *o, floe_buf *b)
{
	char *p = floe_arena_memdup(x->ba, b->len ? (const char *)b->data : "", b->len ? b->len : 1);
	if (!p)
		return FLOE_ENOMEM;
	o->null = false;
	o->u.s.p = p;
	o->u.s.n = b->len;
	return 0;
}

/* v >= 0 in decimal, zero-padded to at least width digits */
static int put_digits(floe_buf *b, int64_t v, int width)
{
	char t[24];
	int n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < 20);
	while (n < width && n < 20)
		t[n++] = '0';
	int rc = 0;
	while (n && !rc)
		rc = floe_buf_putc(b, t[--n]);
	return rc;
}

/* Java's SimpleDateFormat letters, the common ones */
static int date_format(floe_buf *b, int64_t us, const char *f, size_t fn)
{
	int64_t days = floe_floordiv(us, 86400000000LL), rem = floe_floormod(us, 86400000000LL);
	int64_t y;
	int m, d;
	floe_civil_from_days(days, &y, &m, &d);
	int hh = (int)(rem / 3600000000LL), mi = (int)(rem / 60000000 % 60),
	    ss = (int)(rem / 1000000 % 60), ms = (int)(rem / 1000 % 1000);
	int rc = 0;
	for (size_t i = 0; i < fn && !rc;) {
		char ch = f[i];
		size_t k = i;
		while (k < fn && f[k] == ch)
			k++;
		size_t w = k - i;
		if (ch == '\'') {
			size_t j = i + 1;
			while (j < fn && f[j] != '\'')
				rc = floe_buf_putc(b, f[j++]);
			i = j + 1;
			continue;
		}
		switch (ch) {
		case 'y':
			rc = w == 2 ? put_digits(b, (y % 100 + 100) % 100, 2)
			     : y < 0 ? floe_buf_printf(b, "%04lld", (long long)y) : put_digits(b, y, 4);
			break;
		case 'M': rc = put_digits(b, m, w >= 2 ? 2 : 1); break;
		case 'd': rc = put_digits(b, d, w >= 2 ? 2 : 1); break;
		case 'H': rc = put_digits(b, hh, w >= 2 ? 2 : 1); break;
		case 'm': rc = put_digits(b, mi, w >= 2 ? 2 : 1); break;
		case 's': rc = put_digits(b, ss, w >= 2 ? 2 : 1); break;
		case 'S': rc = put_digits(b, ms, 3); break;
		default:
			for (size_t j = i; j < k && !rc; j++)
				rc = floe_buf_putc(b, ch);
		}
		i = k;
	}
	return rc;
}

/* parse text by a Java pattern (yyyy MM dd HH mm ss SSS and literals) */
static bool date_parse(const char *s, size_t n, const char *f, size_t fn, int64_t *us)
{
	int64_t y = 1970;
	int m = 1, d = 1, hh = 0, mi = 0, ss = 0, ms = 0;
	size_t j = 0;
	for (size_t i = 0; i < fn;) {
		char ch = f[i];
		size_t k = i;
		while (k < fn && f[k] == ch)
			k++;
		size_t w = k - i;
		if (strchr("yMdHmsS", ch)) {
			int64_t v = 0;
			size_t dig = 0, maxd = ch == 'y' && w != 2 ? 4 : ch == 'S' ? 3 : 2;
			while (j < n && dig < maxd && s[j] >= '0' && s[j] <= '9')
				v = v * 10 + (s[j++] - '0'), dig++;
			if (!dig)
				return false;
			switch (ch) {
			case 'y': y = w == 2 ? 2000 + v : v; break;
			case 'M': m = (int)v; break;
			case 'd': d = (int)v; break;
			case 'H': hh = (int)v; break;
			case 'm': mi = (int)v; break;
			case 's': ss = (int)v; break;
			default: ms = (int)v; break;
			}
		} else {
			for (size_t t = i; t < k; t++) {
				if (ch == '\'')
					continue;
				if (j >= n || s[j] != ch)
					return false;
				j++;
			}
		}
		i = k;
	}
	if (j != n || m < 1 || m > 12 || d < 1 || d > 31 || hh > 23 || mi > 59 || ss > 60)
		return false;
	*us = days_us(floe_days_from_civil(y, m, d)) + hh * 3600000000LL + mi * 60000000LL +
	      ss * 1000000LL + ms * 1000LL;
	return true;
}

static int64_t add_months(int64_t us, int64_t months, bool date)
{
	int64_t days = date ? us : floe_floordiv(us, 86400000000LL);
	int64_t rem = date ? 0 : floe_floormod(us, 86400000000LL);
	int64_t y;
	int m, d;
	floe_civil_from_days(days, &y, &m, &d);
	int64_t mm = y * 12 + (m - 1) + months;
	y = floe_floordiv(mm, 12);
	m = (int)floe_floormod(mm, 12) + 1;
	static const int ml[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int last = ml[m - 1] + (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
	if (d > last)
		d = last;
	days = floe_days_from_civil(y, m, d);
	return date ? days : days_us(days) + rem;
}

static int64_t extract(int unit, vty t, int64_t v)
{
	int64_t us = t.k == VT_DATE ? days_us(v) : t.k == VT_TIME ? v : v;
	int64_t days = floe_floordiv(us, 86400000000LL), rem = floe_floormod(us, 86400000000LL);
	int64_t y;
	int m, d;
	floe_civil_from_days(days, &y, &m, &d);
	switch (unit) {
	case 0: return y;
	case 1: return (m - 1) / 3 + 1;
	case 2: return m;
	case 3: { /* ISO week */
		int64_t wd = floe_floormod(days + 3, 7); /* 0 = Monday */
		int64_t thu = days - wd + 3;
		int64_t ty;
		int tm, td;
		floe_civil_from_days(thu, &ty, &tm, &td);
		return (thu - floe_days_from_civil(ty, 1, 1)) / 7 + 1;
	}
	case 4: case 13: return d;
	case 5: return rem / 3600000000LL;
	case 6: return rem / 60000000 % 60;
	case 7: return rem / 1000000 % 60;
	case 8: return rem / 1000 % 60000;
	case 9: return rem % 60000000;
	case 10: case 14: return days - floe_days_from_civil(y, 1, 1) + 1;
	case 11: case 15: return floe_floormod(days + 4, 7) + 1; /* Sunday = 1 */
	case 12: return floe_floordiv(us, 1000000);
	}
	return 0;
}

static int64_t floor_to(int unit, vty t, int64_t v, bool ceil_)
{
	bool date = t.k == VT_DATE;
	int64_t us = date ? days_us(v) : v;
	int64_t days = floe_floordiv(us, 86400000000LL);
	int64_t y;
	int m, d;
	int64_t r;
	floe_civil_from_days(days, &y, &m, &d);
	switch (unit) {
	case 0: r = days_us(floe_days_from_civil(y, 1, 1)); break;
	case 1: r = days_us(floe_days_from_civil(y, ((m - 1) / 3) * 3 + 1, 1)); break;
	case 2: r = days_us(floe_days_from_civil(y, m, 1)); break;
	case 3: r = days_us(days - floe_floormod(days + 3, 7)); break;
	case 4: r = days_us(days); break;
	case 5: r = us - floe_floormod(us, 3600000000LL); break;
	case 6: r = us - floe_floormod(us, 60000000LL); break;
	case 7: r = us - floe_floormod(us, 1000000LL); break;
	default: r = us;
	}
	if (ceil_ && r != us) {
		switch (unit) {
		case 0: r = add_months(r, 12, false); break;
		case 1: r = add_months(r, 3, false); break;
		case 2: r = add_months(r, 1, false); break;
		case 3: r += 7 * 86400000000LL; break;
		case 4: r += 86400000000LL; break;
		case 5: r += 3600000000LL; break;
		case 6: r += 60000000LL; break;
		case 7: r += 1000000LL; break;
		}
	}
	return date ? floe_floordiv(r, 86400000000LL) : r;
}

static const char *json_path(floe_arena *a, const char *doc, size_t n, const char *path,
			     size_t pn, size_t *out_n)
{
	floe_json *j;
	if (floe_json_parse(&j, a, doc, n, NULL, NULL))
		return NULL;
	size_t i = 0;
	if (i < pn && path[i] == '$')
		i++;
	while (i < pn && j) {
		if (path[i] == '.') {
			size_t k = ++i;
			while (k < pn && path[k] != '.' && path[k] != '[')
				k++;
			char *key = floe_arena_strndup(a, path + i, k - i);
			if (!key || j->type != FLOE_JSON_OBJECT)
				return NULL;
			j = floe_json_get(j, key);
			i = k;
		} else if (path[i] == '[') {
			size_t k = ++i;
			int64_t idx = 0;
			while (k < pn && path[k] >= '0' && path[k] <= '9')
				idx = idx * 10 + (path[k++] - '0');
			if (k >= pn || path[k] != ']' || j->type != FLOE_JSON_ARRAY)
				return NULL;
			j = floe_json_at(j, (size_t)idx);
			i = k + 1;
		} else {
			return NULL;
		}
	}
	if (!j || j->type == FLOE_JSON_NULL || j->type == FLOE_JSON_ARRAY || j->type == FLOE_JSON_OBJECT)
		return NULL;
	if (j->type == FLOE_JSON_BOOL) {
		*out_n = j->b ? 4 : 5;
		return j->b ? "true" : "false";
	}
	*out_n = j->len;
	return j->s;
}

static int eval_fn(vx *x, const xn *e, sv **av, size_t n, sv *o)
{
	floe_buf b;
	int rc = 0;
	floe_buf_init(&b, 0);
	o->null = false;
	/* NULL in, NULL out, except for these */
	if (e->fn != F_COALESCE && e->fn != F_CONCAT_WS && e->fn != F_IF && e->fn != F_NULLIF &&
	    e->fn != F_NOW && e->fn != F_CURRENT_DATE && e->fn != F_PI && e->fn != F_UNIX_TIMESTAMP) {
		for (size_t i = 0; i < e->n; i++)
			if (av[i][n].null) {
				o->null = true;
				return 0;
			}
	}
#define A(i) (&av[i][n])
#define S(i) A(i)->u.s.p, A(i)->u.s.n
	switch ((fn_id)e->fn) {
	case F_UPPER: case F_LOWER: {
		/* ASCII letters change; the bytes are written once, into the batch arena */
		size_t len = A(0)->u.s.n;
		char *out = floe_arena_alloc(x->ba, len ? len : 1);
		if (!out) {
			rc = FLOE_ENOMEM;
			break;
		}
		const char *in = A(0)->u.s.p;
		if (e->fn == F_UPPER)
			for (size_t i = 0; i < len; i++)
				out[i] = in[i] >= 'a' && in[i] <= 'z' ? (char)(in[i] - 32) : in[i];
		else
			for (size_t i = 0; i < len; i++)
				out[i] = in[i] >= 'A' && in[i] <= 'Z' ? (char)(in[i] + 32) : in[i];
		o->u.s.p = out;
		o->u.s.n = len;
		break;
	}
	case F_INITCAP: {
		bool start = true;
		for (size_t i = 0; i < A(0)->u.s.n && !rc; i++) {
			char ch = A(0)->u.s.p[i];
			bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
			if (start && ch >= 'a' && ch <= 'z')
				ch = (char)(ch - 32);
			else if (!start && ch >= 'A' && ch <= 'Z')
				ch = (char)(ch + 32);
			start = !alnum;
			rc = floe_buf_putc(&b, ch);
		}
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	}
	case F_LENGTH: o->u.i = (int64_t)utf8_len(S(0)); break;
	case F_SUBSTRING: {
		size_t len = utf8_len(S(0));
		int64_t st = A(1)->u.i, cnt = e->n == 3 ? A(2)->u.i : INT64_MAX;
		if (st < 0)
			st = (int64_t)len + st + 1;
		else if (st == 0)
			st = 1;
		if (cnt < 0) {
			o->null = true;
			break;
		}
		int64_t end = cnt == INT64_MAX || st > INT64_MAX - cnt ? INT64_MAX : st + cnt;
		if (st < 1)
			st = 1;
		if (st > (int64_t)len || end <= st) {
			o->u.s.p = "";
			o->u.s.n = 0;
			break;
		}
		size_t b0 = utf8_off(S(0), (size_t)(st - 1));
		size_t b1 = end > (int64_t)len ? A(0)->u.s.n : utf8_off(S(0), (size_t)(end - 1));
		o->u.s.p = A(0)->u.s.p + b0;
		o->u.s.n = b1 - b0;
		break;
	}
	case F_CONCAT:
		for (size_t i = 0; i < e->n && !rc; i++)
			rc = floe_buf_append(&b, S(i));
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	case F_CONCAT_WS: {
		if (A(0)->null) {
			o->null = true;
			break;
		}
		bool first = true;
		for (size_t i = 1; i < e->n && !rc; i++) {
			if (A(i)->null)
				continue;
			if (!first)
				rc = floe_buf_append(&b, S(0));
			if (!rc)
				rc = floe_buf_append(&b, S(i));
			first = false;
		}
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	}
	case F_TRIM: case F_LTRIM: case F_RTRIM: {
		const char *p = A(0)->u.s.p;
		size_t len = A(0)->u.s.n;
		if (e->fn != F_RTRIM)
			while (len && *p == ' ')
				p++, len--;
		if (e->fn != F_LTRIM)
			while (len && p[len - 1] == ' ')
				len--;
		o->u.s.p = p;
		o->u.s.n = len;
		break;
	}
	case F_REPLACE: {
		const char *p = A(0)->u.s.p;
		size_t len = A(0)->u.s.n, fl = A(1)->u.s.n;
		for (size_t i = 0; i < len && !rc;) {
			if (fl && i + fl <= len && !memcmp(p + i, A(1)->u.s.p, fl)) {
				rc = floe_buf_append(&b, S(2));
				i += fl;
			} else {
				rc = floe_buf_putc(&b, p[i++]);
			}
		}
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	}
	case F_LPAD: case F_RPAD: {
		int64_t want = A(1)->u.i;
		size_t len = utf8_len(S(0));
		if (want < 0 || want > (1 << 24)) {
			o->null = true;
			break;
		}
		if ((size_t)want <= len) {
			o->u.s.p = A(0)->u.s.p;
			o->u.s.n = utf8_off(S(0), (size_t)want);
			break;
		}
		size_t padn = (size_t)want - len, pl = A(2)->u.s.n;
		if (!pl) {
			*o = *A(0);
			break;
		}
		if (e->fn == F_RPAD)
			rc = floe_buf_append(&b, S(0));
		for (size_t i = 0; i < padn && !rc; i++)
			rc = floe_buf_putc(&b, A(2)->u.s.p[i % pl]);
		if (!rc && e->fn == F_LPAD)
			rc = floe_buf_append(&b, S(0));
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	}
	case F_REPEAT:
		if (A(1)->u.i < 0 || (double)A(1)->u.i * (double)A(0)->u.s.n > (double)(1 << 24)) {
			o->null = true;
			break;
		}
		for (int64_t i = 0; i < A(1)->u.i && !rc; i++)
			rc = floe_buf_append(&b, S(0));
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	case F_REVERSE:
		for (size_t i = A(0)->u.s.n; i > 0 && !rc; i--)
			rc = floe_buf_putc(&b, A(0)->u.s.p[i - 1]);
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	case F_LOCATE: {
		const char *h = A(1)->u.s.p;
		size_t hn = A(1)->u.s.n, nn = A(0)->u.s.n;
		o->u.i = 0;
		for (size_t i = 0; i + nn <= hn; i++)
			if (!nn || !memcmp(h + i, A(0)->u.s.p, nn)) {
				o->u.i = (int64_t)utf8_len(h, i) + 1;
				break;
			}
		break;
	}
	case F_STARTS_WITH: case F_ENDS_WITH: {
		size_t hn = A(0)->u.s.n, nn = A(1)->u.s.n;
		o->u.i = nn <= hn && (!nn || !memcmp(A(0)->u.s.p + (e->fn == F_ENDS_WITH ? hn - nn : 0),
						    A(1)->u.s.p, nn));
		break;
	}
	case F_SPLIT_INDEX: {
		const char *p = A(0)->u.s.p;
		size_t len = A(0)->u.s.n, dl = A(1)->u.s.n;
		int64_t want = A(2)->u.i, k = 0;
		size_t st = 0;
		o->null = true;
		if (!dl || want < 0)
			break;
		for (size_t i = 0; i <= len; i++) {
			if (i == len || (i + dl <= len && !memcmp(p + i, A(1)->u.s.p, dl))) {
				if (k == want) {
					o->null = false;
					o->u.s.p = p + st;
					o->u.s.n = i - st;
					break;
				}
				k++;
				if (i < len) {
					i += dl - 1;
					st = i + 1;
				}
			}
		}
		break;
	}
	case F_REGEXP_EXTRACT: case F_REGEXP_REPLACE: case F_REGEXP: {
		char *s = floe_arena_strndup(x->ba, S(0));
		regmatch_t mt[10];
		if (!s)
			return FLOE_ENOMEM;
		if (e->fn == F_REGEXP) {
			o->u.i = regexec(e->re, s, 0, NULL, 0) == 0;
			break;
		}
		if (e->fn == F_REGEXP_EXTRACT) {
			int64_t g = e->n == 3 ? A(2)->u.i : 0;
			if (g < 0 || g > 9 || regexec(e->re, s, 10, mt, 0) || mt[g].rm_so < 0) {
				o->null = true;
				break;
			}
			o->u.s.p = s + mt[g].rm_so;
			o->u.s.n = (size_t)(mt[g].rm_eo - mt[g].rm_so);
			break;
		}
		const char *p = s;
		while (!rc && *p && !regexec(e->re, p, 1, mt, p == s ? 0 : REG_NOTBOL)) {
			rc = floe_buf_append(&b, p, (size_t)mt[0].rm_so);
			if (!rc)
				rc = floe_buf_append(&b, S(2));
			if (mt[0].rm_eo == mt[0].rm_so) {
				if (!rc)
					rc = floe_buf_putc(&b, p[mt[0].rm_eo]);
				p += mt[0].rm_eo + 1;
			} else {
				p += mt[0].rm_eo;
			}
		}
		if (!rc)
			rc = floe_buf_puts(&b, p);
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	}
	case F_COALESCE:
		o->null = true;
		for (size_t i = 0; i < e->n; i++)
			if (!A(i)->null) {
				*o = *A(i);
				break;
			}
		break;
	case F_NULLIF:
		*o = *A(0);
		if (!A(0)->null && !A(1)->null && !sv_cmp(e->t, A(0), A(1)))
			o->null = true;
		break;
	case F_IF: *o = !A(0)->null && A(0)->u.i ? *A(1) : *A(2); break;
	case F_GREATEST: case F_LEAST:
		*o = *A(0);
		for (size_t i = 1; i < e->n; i++) {
			int c = sv_cmp(e->t, A(i), o);
			if (e->fn == F_GREATEST ? c > 0 : c < 0)
				*o = *A(i);
		}
		break;
	case F_ABS:
		*o = *A(0);
		if (e->t.k == VT_DOUBLE)
			o->u.f = fabs(o->u.f);
		else if (e->t.k == VT_DEC)
			o->u.d = o->u.d < 0 ? -o->u.d : o->u.d;
		else
			o->u.i = o->u.i < 0 ? -o->u.i : o->u.i;
		break;
	case F_SIGN:
		*o = *A(0);
		if (e->t.k == VT_DOUBLE)
			o->u.f = o->u.f > 0 ? 1 : o->u.f < 0 ? -1 : 0;
		else if (e->t.k == VT_DEC)
			o->u.d = (o->u.d > 0 ? 1 : o->u.d < 0 ? -1 : 0) * P10[e->t.s];
		else
			o->u.i = o->u.i > 0 ? 1 : o->u.i < 0 ? -1 : 0;
		break;
	case F_CEIL: case F_FLOOR: {
		vty at = e->a[0]->t;
		*o = *A(0);
		if (at.k == VT_DOUBLE) {
			o->u.f = e->fn == F_CEIL ? ceil(o->u.f) : floor(o->u.f);
		} else if (at.k == VT_DEC) {
			floe_i128 d = P10[at.s], q = o->u.d / d, r = o->u.d % d;
			if (r && e->fn == F_CEIL && o->u.d > 0)
				q++;
			if (r && e->fn == F_FLOOR && o->u.d < 0)
				q--;
			o->u.d = q;
		}
		break;
	}
	case F_ROUND: case F_TRUNCATE: {
		int64_t dg = e->n == 2 ? A(1)->u.i : 0;
		vty at = e->a[0]->t;
		*o = *A(0);
		if (at.k == VT_DOUBLE) {
			double pw = pow(10.0, (double)dg), v = o->u.f * pw;
			v = e->fn == F_ROUND ? round(v) : trunc(v);
			o->u.f = v / pw;
		} else if (at.k == VT_DEC) {
			if (dg < at.s) {
				int32_t k = at.s - (int32_t)(dg < 0 ? 0 : dg);
				floe_i128 q;
				if (e->fn == F_ROUND) {
					if (!dec_rescale(o->u.d, at.s, at.s - k, &q))
						q = 0;
				} else {
					q = o->u.d / P10[k];
				}
				o->u.d = q;
			}
		} else if (dg < 0 && dg > -19) {
			int64_t pw = 1;
			for (int64_t i = 0; i < -dg; i++)
				pw *= 10;
			int64_t q = o->u.i / pw, r = o->u.i % pw;
			if (e->fn == F_ROUND && (r < 0 ? -r : r) * 2 >= pw)
				q += o->u.i < 0 ? -1 : 1;
			o->u.i = q * pw;
		}
		break;
	}
	case F_MOD:
		if (!A(1)->u.i) {
			o->null = true;
			break;
		}
		o->u.i = A(1)->u.i == -1 ? 0 : A(0)->u.i % A(1)->u.i;
		break;
	case F_POWER: o->u.f = pow(A(0)->u.f, A(1)->u.f); break;
	case F_SQRT: o->u.f = sqrt(A(0)->u.f); break;
	case F_EXP: o->u.f = exp(A(0)->u.f); break;
	case F_LN: o->u.f = log(A(0)->u.f); break;
	case F_LOG10: o->u.f = log10(A(0)->u.f); break;
	case F_LOG2: o->u.f = log2(A(0)->u.f); break;
	case F_PI: o->u.f = 3.14159265358979323846; break;
	case F_DATE_FORMAT: {
		vty at = e->a[0]->t;
		int64_t us = at.k == VT_DATE ? days_us(A(0)->u.i) : A(0)->u.i;
		rc = date_format(&b, us, S(1));
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	}
	case F_TO_TIMESTAMP: case F_TO_DATE: {
		int64_t us;
		bool ok;
		if (e->n == 2) {
			ok = date_parse(S(0), S(1), &us);
		} else {
			sv t;
			ok = cast1(x->ba, T(VT_STR, 0, 0), T(VT_TS, 0, 0), A(0), &t);
			us = t.u.i;
		}
		if (!ok) {
			o->null = true;
			break;
		}
		o->u.i = e->fn == F_TO_DATE ? floe_floordiv(us, 86400000000LL) : us;
		break;
	}
	case F_FROM_UNIXTIME: {
		int64_t us;
		if (__builtin_mul_overflow(A(0)->u.i, (int64_t)1000000, &us)) {
			o->null = true;
			break;
		}
		rc = e->n == 2 ? date_format(&b, us, S(1)) : date_format(&b, us, "yyyy-MM-dd HH:mm:ss", 19);
		if (!rc)
			rc = set_str(x, o, &b);
		break;
	}
	case F_UNIX_TIMESTAMP: {
		if (e->n == 0) {
			o->u.i = floe_floordiv(x->now_us, 1000000);
			break;
		}
		if (A(0)->null || (e->n == 2 && A(1)->null)) {
			o->null = true;
			break;
		}
		int64_t us;
		bool ok = e->n == 2 ? date_parse(S(0), S(1), &us)
				    : date_parse(S(0), "yyyy-MM-dd HH:mm:ss", 19, &us);
		if (!ok) {
			o->null = true;
			break;
		}
		o->u.i = floe_floordiv(us, 1000000);
		break;
	}
	case F_EXTRACT: o->u.i = extract(unit_id(e->a[0]->k.u.s.p), e->a[1]->t, A(1)->u.i); break;
	case F_FLOOR_TO: case F_CEIL_TO:
		o->u.i = floor_to(unit_id(e->a[1]->k.u.s.p), e->a[0]->t, A(0)->u.i, e->fn == F_CEIL_TO);
		break;
	case F_NOW: o->u.i = x->now_us; break;
	case F_CURRENT_DATE: o->u.i = floe_floordiv(x->now_us, 86400000000LL); break;
	case F_ITEM: {
		floe_json *j, *hit = NULL;
		if (floe_json_parse(&j, x->ba, S(0), NULL, NULL)) {
			o->null = true;
			break;
		}
		bool by_index = e->a[1]->t.k == VT_INT;
		if (j->type == FLOE_JSON_OBJECT && !by_index) {
			char *key = floe_arena_strndup(x->ba, S(1));
			if (!key)
				return FLOE_ENOMEM;
			hit = floe_json_get(j, key);
		} else if (j->type == FLOE_JSON_ARRAY && by_index) {
			hit = A(1)->u.i >= 1 ? floe_json_at(j, (size_t)(A(1)->u.i - 1)) : NULL; /* 1-based */
		} else if (j->type == FLOE_JSON_ARRAY) {
			/* a map as [[key, value], ...] */
			for (floe_json *pr = j->child; pr && !hit; pr = pr->next)
				if (pr->type == FLOE_JSON_ARRAY && pr->child &&
				    pr->child->type == FLOE_JSON_STRING && pr->child->len == A(1)->u.s.n &&
				    !memcmp(pr->child->s, A(1)->u.s.p, A(1)->u.s.n))
					hit = pr->child->next;
		}
		if (!hit || hit->type == FLOE_JSON_NULL) {
			o->null = true;
		} else if (hit->type == FLOE_JSON_BOOL) {
			o->u.s.p = hit->b ? "true" : "false";
			o->u.s.n = strlen(o->u.s.p);
		} else if (hit->type == FLOE_JSON_ARRAY || hit->type == FLOE_JSON_OBJECT) {
			o->u.s.p = hit->text;
			o->u.s.n = hit->text ? hit->text_len : 0;
		} else {
			o->u.s.p = hit->s;
			o->u.s.n = hit->len;
		}
		break;
	}
	case F_JSON_VALUE: {
		size_t on = 0;
		const char *v = json_path(x->ba, S(0), S(1), &on);
		if (!v) {
			o->null = true;
			break;
		}
		o->u.s.p = v;
		o->u.s.n = on;
		break;
	}
	}
#undef A
#undef S
	floe_buf_reset(&b);
	return rc ? FLOE_ENOMEM : 0;
}

static int eval(vx *x, const xn *e, const vrel *b, sv **out)
{
	size_t n = b->n;
	sv *o;
	sv *av[64];
	int rc;
	if (e->op == X_COL) {
		*out = b->cols[e->col];
		return 0;
	}
	if (!(o = floe_arena_calloc(x->ba, n ? n : 1, sizeof(sv))))
		return floe_error_oom(x->c->err);
	*out = o;
	if (e->op == X_CONST) {
		for (size_t i = 0; i < n; i++)
			o[i] = e->k;
		return 0;
	}
	if (e->n > 64)
		return sql_err(x->c, FLOE_EUNSUPPORTED, e->off, "more than 64 operands");
	if (e->op != X_CASE) {
		for (size_t i = 0; i < e->n; i++)
			if ((rc = eval(x, e->a[i], b, &av[i])))
				return rc;
	}
	switch (e->op) {
	case X_NEG:
		for (size_t i = 0; i < n; i++) {
			o[i] = av[0][i];
			if (o[i].null)
				continue;
			if (e->t.k == VT_DOUBLE)
				o[i].u.f = -o[i].u.f;
			else if (e->t.k == VT_DEC)
				o[i].u.d = -o[i].u.d;
			else if (__builtin_sub_overflow((int64_t)0, o[i].u.i, &o[i].u.i))
				return sql_err(x->c, FLOE_EINVAL, e->off, "integer overflow");
		}
		break;
	case X_NOT:
		for (size_t i = 0; i < n; i++) {
			o[i].null = av[0][i].null;
			o[i].u.i = !av[0][i].u.i;
		}
		break;
	case X_AND:
	case X_OR:
		for (size_t i = 0; i < n; i++) {
			const sv *l = &av[0][i], *r = &av[1][i];
			bool dom = e->op == X_AND ? false : true; /* the dominating value */
			if ((!l->null && (bool)l->u.i == dom) || (!r->null && (bool)r->u.i == dom)) {
				o[i].u.i = dom;
			} else if (l->null || r->null) {
				o[i].null = true;
			} else {
				o[i].u.i = !dom;
			}
		}
		break;
	case X_CMP: {
		const char *c = e->cmp;
		vty t = e->a[0]->t.k == VT_NULL ? e->a[1]->t : e->a[0]->t;
		for (size_t i = 0; i < n; i++) {
			if (av[0][i].null || av[1][i].null) {
				o[i].null = true;
				continue;
			}
			int r = sv_cmp(t, &av[0][i], &av[1][i]);
			/* NaN = NaN is false in SQL comparisons of doubles */
			if (t.k == VT_DOUBLE && (isnan(av[0][i].u.f) || isnan(av[1][i].u.f)))
				r = 2;
			bool v = c[0] == '=' ? r == 0 : c[0] == '<' && c[1] == '>' ? r != 0 :
				 c[0] == '<' ? (c[1] == '=' ? r <= 0 : r < 0) :
				 (c[1] == '=' ? (r >= 0 && r != 2) : (r > 0 && r != 2));
			if (r == 2)
				v = c[0] == '<' && c[1] == '>';
			o[i].u.i = v;
		}
		break;
	}
	case X_ARITH: {
		char op = e->arith;
		vty lt = e->a[0]->t, rt = e->a[1]->t;
		for (size_t i = 0; i < n; i++) {
			const sv *l = &av[0][i], *r = &av[1][i];
			if (l->null || r->null) {
				o[i].null = true;
				continue;
			}
			bool ovf = false;
			if (is_time(lt) || lt.k == VT_IVL || lt.k == VT_IVM) {
				if (lt.k == VT_DATE && rt.k == VT_DATE) {
					o[i].u.i = l->u.i - r->u.i;
				} else if (rt.k == VT_IVM) {
					o[i].u.i = add_months(l->u.i, op == '-' ? -r->u.i : r->u.i, lt.k == VT_DATE);
				} else if (lt.k == VT_DATE) {
					int64_t dd = r->u.i / 86400000000LL;
					o[i].u.i = op == '-' ? l->u.i - dd : l->u.i + dd;
				} else {
					ovf = op == '-' ? __builtin_sub_overflow(l->u.i, r->u.i, &o[i].u.i)
							: __builtin_add_overflow(l->u.i, r->u.i, &o[i].u.i);
				}
			} else if (e->t.k == VT_DOUBLE) {
				double a = l->u.f, bb = r->u.f;
				o[i].u.f = op == '+' ? a + bb : op == '-' ? a - bb : op == '*' ? a * bb :
					   op == '/' ? a / bb : fmod(a, bb);
				if (e->t.p == 32)
					o[i].u.f = (double)(float)o[i].u.f;
			} else if (e->t.k == VT_DEC) {
				floe_i128 a = l->u.d, bb = r->u.d, res = 0;
				switch (op) {
				case '+': ovf = __builtin_add_overflow(a, bb, &res); break;
				case '-': ovf = __builtin_sub_overflow(a, bb, &res); break;
				case '*': ovf = __builtin_mul_overflow(a, bb, &res); break;
				case '/': {
					if (!bb) {
						o[i].null = true;
						continue;
					}
					/* a / 10^sa / (b / 10^sb) at scale s: a * 10^(s - sa + sb + 1) / b, rounded */
					int32_t k = e->t.s - lt.s + rt.s + 1;
					floe_i128 num;
					if (k < 0 || k > 38 || __builtin_mul_overflow(a, P10[k], &num)) {
						ovf = true;
						break;
					}
					floe_i128 q = num / bb;
					q = q >= 0 ? (q + 5) / 10 : (q - 5) / 10;
					res = q;
					break;
				}
				default: /* % at the right's scale: the left was cast to it */
					if (!bb) {
						o[i].null = true;
						continue;
					}
					res = a % bb;
				}
				if (!ovf && !dec_fits(res, e->t.p))
					ovf = true;
				o[i].u.d = res;
			} else {
				int64_t a = l->u.i, bb = r->u.i;
				switch (op) {
				case '+': ovf = __builtin_add_overflow(a, bb, &o[i].u.i); break;
				case '-': ovf = __builtin_sub_overflow(a, bb, &o[i].u.i); break;
				case '*': ovf = __builtin_mul_overflow(a, bb, &o[i].u.i); break;
				default:
					if (!bb || (a == INT64_MIN && bb == -1)) {
						o[i].null = true;
						continue;
					}
					o[i].u.i = op == '/' ? a / bb : a % bb;
				}
			}
			if (ovf)
				return sql_err(x->c, FLOE_EINVAL, e->off,
					       "numeric overflow: the result does not fit %s%s",
					       vt_name(e->t), e->t.k == VT_DEC ? " (at most 38 digits)" : "");
		}
		break;
	}
	case X_CONCAT:
		for (size_t i = 0; i < n; i++) {
			if (av[0][i].null || av[1][i].null) {
				o[i].null = true;
				continue;
			}
			size_t ln = av[0][i].u.s.n, rn = av[1][i].u.s.n;
			char *p = floe_arena_alloc(x->ba, ln + rn + 1);
			if (!p)
				return floe_error_oom(x->c->err);
			memcpy(p, av[0][i].u.s.p, ln);
			memcpy(p + ln, av[1][i].u.s.p, rn);
			o[i].u.s.p = p;
			o[i].u.s.n = ln + rn;
		}
		break;
	case X_CAST:
		for (size_t i = 0; i < n; i++)
			if (!cast1(x->ba, e->a[0]->t, e->t, &av[0][i], &o[i])) {
				if (e->try_) {
					o[i].null = true;
					continue;
				}
				const char *t = sv_text(x->ba, e->a[0]->t, &av[0][i]);
				return sql_err(x->c, FLOE_EINVAL, e->off, "cannot CAST '%s' to %s",
					       t ? t : "?", vt_name(e->t));
			}
		break;
	case X_CASE: {
		/* evaluate every branch on the whole batch, then pick (no side effects) */
		size_t nw = (e->n - 1) / 2;
		sv *w, *th;
		bool *done = floe_arena_calloc(x->ba, n ? n : 1, sizeof(bool));
		if (!done)
			return floe_error_oom(x->c->err);
		for (size_t i = 0; i < n; i++)
			o[i].null = true;
		for (size_t k = 0; k < nw; k++) {
			if ((rc = eval(x, e->a[2 * k], b, &w)) || (rc = eval(x, e->a[2 * k + 1], b, &th)))
				return rc;
			for (size_t i = 0; i < n; i++)
				if (!done[i] && !w[i].null && w[i].u.i) {
					o[i] = th[i];
					done[i] = true;
				}
		}
		if ((rc = eval(x, e->a[2 * nw], b, &th)))
			return rc;
		for (size_t i = 0; i < n; i++)
			if (!done[i])
				o[i] = th[i];
		break;
	}
	case X_IS:
		for (size_t i = 0; i < n; i++) {
			bool v;
			if (e->what[0] == 'N')
				v = av[0][i].null;
			else if (e->what[0] == 'T')
				v = !av[0][i].null && av[0][i].u.i;
			else
				v = !av[0][i].null && !av[0][i].u.i;
			o[i].u.i = e->neg ? !v : v;
		}
		break;
	case X_IN: {
		vty t = e->a[0]->t;
		for (size_t i = 0; i < n; i++) {
			if (av[0][i].null) {
				o[i].null = true;
				continue;
			}
			bool found = false, saw_null = false;
			for (size_t k = 1; k < e->n && !found; k++) {
				if (av[k][i].null)
					saw_null = true;
				else if (!sv_cmp(t, &av[0][i], &av[k][i]))
					found = true;
			}
			if (!found && saw_null)
				o[i].null = true;
			else
				o[i].u.i = e->neg ? !found : found;
		}
		break;
	}
	case X_LIKE:
		for (size_t i = 0; i < n; i++) {
			if (av[0][i].null || av[1][i].null) {
				o[i].null = true;
				continue;
			}
			bool m = floe_like_match((const uint8_t *)av[0][i].u.s.p, av[0][i].u.s.n,
						 (const uint8_t *)av[1][i].u.s.p, av[1][i].u.s.n);
			o[i].u.i = e->neg ? !m : m;
		}
		break;
	case X_FN:
		for (size_t i = 0; i < n; i++)
			if ((rc = eval_fn(x, e, av, i, &o[i])))
				return floe_error_oom(x->c->err);
		if (e->n == 0 && n == 0)
			break;
		break;
	default: return sql_err(x->c, FLOE_EUNSUPPORTED, e->off, "cannot evaluate this yet");
	}
	return 0;
}

/* ---- relations ---------------------------------------------------------------------- */

static int rel_init(vx *x, vrel *r, size_t n_cols)
{
	memset(r, 0, sizeof(*r));
	r->n_cols = n_cols;
	r->names = floe_arena_calloc(x->a, n_cols + 1, sizeof(char *));
	r->quals = floe_arena_calloc(x->a, n_cols + 1, sizeof(char *));
	r->types = floe_arena_calloc(x->a, n_cols + 1, sizeof(vty));
	r->cols = floe_arena_calloc(x->a, n_cols + 1, sizeof(sv *));
	r->ft = floe_arena_calloc(x->a, n_cols + 1, sizeof(floe_type *));
	if (!r->names || !r->quals || !r->types || !r->cols || !r->ft)
		return floe_error_oom(x->c->err);
	return 0;
}

/* Append row i of columns src (kept in the statement arena). */
static int rel_push(vx *x, vrel *r, sv *const *src, size_t i)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		for (size_t c = 0; c < r->n_cols; c++) {
			sv *d = floe_arena_alloc(x->a, cap * sizeof(sv));
			if (!d)
				return floe_error_oom(x->c->err);
			if (r->n)
				memcpy(d, r->cols[c], r->n * sizeof(sv));
			r->cols[c] = d;
		}
		r->cap = cap;
	}
	for (size_t c = 0; c < r->n_cols; c++) {
		sv v = src ? src[c][i] : (sv){.null = true};
		if (sv_keep(x->a, r->types[c], &v))
			return floe_error_oom(x->c->err);
		r->cols[c][r->n] = v;
	}
	r->n++;
	return 0;
}

static vty vty_of(const floe_type *t, bool meta)
{
	switch (t->id) {
	case FLOE_T_BOOLEAN: return T(VT_BOOL, 0, 0);
	case FLOE_T_INT: return T(VT_INT, 32, 0);
	case FLOE_T_LONG: return T(VT_INT, 64, 0);
	case FLOE_T_FLOAT: return T(VT_DOUBLE, 32, 0);
	case FLOE_T_DOUBLE: return T(VT_DOUBLE, 64, 0);
	case FLOE_T_DECIMAL: return T(VT_DEC, t->precision, t->scale);
	case FLOE_T_DATE: return T(VT_DATE, 0, 0);
	case FLOE_T_TIME: return T(VT_TIME, 0, 0);
	case FLOE_T_TIMESTAMP: case FLOE_T_TIMESTAMP_NS: return T(VT_TS, 0, 0);
	case FLOE_T_TIMESTAMPTZ: case FLOE_T_TIMESTAMPTZ_NS: return T(VT_TSTZ, 0, meta);
	case FLOE_T_STRING: case FLOE_T_UUID: return T(VT_STR, 0, 0);
	case FLOE_T_BINARY: case FLOE_T_FIXED: return T(VT_BIN, 0, 0);
	case FLOE_T_VARIANT: return T(VT_TEXT, 1, 0); /* p 1: a variant's JSON is a string value */
	default: return T(VT_TEXT, 0, 0);
	}
}

/* One scan batch as columns (values in the batch arena). */
static int batch_cols(vx *x, floe_scan *s, const struct ArrowArray *b, vrel *out)
{
	floe_buf cell;
	floe_buf_init(&cell, 0);
	out->n = (size_t)b->length;
	for (size_t c = 0; c < s->n_cols; c++) {
		const floe_type *t = s->cols[c].type;
		const struct ArrowArray *a = b->children[c];
		vty vt_ = out->types[c];
		sv *v = floe_arena_calloc(x->ba, out->n ? out->n : 1, sizeof(sv));
		if (!v)
			goto oom;
		for (int64_t i = 0; i < b->length; i++) {
			if (!floe_sa_valid(a, i) || t->id == FLOE_T_UNKNOWN) {
				v[i].null = true;
				continue;
			}
			if (vt_.k == VT_TEXT || t->id == FLOE_T_UUID) {
				bool null;
				floe_buf_clear(&cell);
				if (floe_scan__cell_text(&cell, a, t, i, s->meta_style, &null))
					goto oom;
				v[i].null = null;
				v[i].u.s.n = cell.len;
				if (!(v[i].u.s.p = floe_arena_memdup(x->ba, cell.len ? (const char *)cell.data : "", cell.len ? cell.len : 1)))
					goto oom;
				continue;
			}
			floe_value fv;
			floe_sa_value(&fv, a, t, i);
			switch (t->id) {
			case FLOE_T_BOOLEAN: v[i].u.i = fv.v.b; break;
			case FLOE_T_INT: case FLOE_T_DATE: v[i].u.i = fv.v.i32; break;
			case FLOE_T_FLOAT: v[i].u.f = fv.v.f32; break;
			case FLOE_T_DOUBLE: v[i].u.f = fv.v.f64; break;
			case FLOE_T_DECIMAL: v[i].u.d = fv.v.dec; break;
			case FLOE_T_TIMESTAMP_NS: case FLOE_T_TIMESTAMPTZ_NS:
				v[i].u.i = floe_floordiv(fv.v.i64, 1000);
				break;
			case FLOE_T_STRING: case FLOE_T_BINARY: case FLOE_T_FIXED:
				v[i].u.s.p = (const char *)fv.v.bin.p;
				v[i].u.s.n = fv.v.bin.n;
				break;
			default: v[i].u.i = fv.v.i64; break;
			}
		}
		out->cols[c] = v;
	}
	floe_buf_reset(&cell);
	return 0;
oom:
	floe_buf_reset(&cell);
	return floe_error_oom(x->c->err);
}

/* ---- reading a table ---------------------------------------------------------------- */

typedef struct source {
	const sql_name *name;
	const char *alias;
	const sql_opt *hints;
	size_t n_hints;
	const sql_select *sub; /* FROM (SELECT ...): its rows are in rel */
	const char *const *col_names; /* FROM (...) x (c1, ...): sub's columns renamed */
	size_t n_col_names;
	floe_table *t;
	floe_scan *scan;
	vrel schema; /* names, quals, types (no rows) */
	vrel rel;    /* a subquery's result */
} source;

static int select_rel(sql_ctx *c, const sql_select *q, vrel *out);

static void collect_cols(const sql_expr *e, floe_strmap *m, bool *star)
{
	if (!e)
		return;
	if (e->kind == SQL_E_STAR)
		*star = true;
	if (e->kind == SQL_E_COL && floe_strmap_set(m, e->name.parts[e->name.n - 1], "1"))
		*star = true; /* out of memory: read every column */
	if (e->kind == SQL_E_COL && e->name.n > 1) {
		/* a.b.c may be a struct field (the scan projects it as a column
		 * named "a.b.c"), or t.a.b one of table t: both dotted forms */
		char path[1024];
		for (size_t from = 0; from + 1 < e->name.n && from < 2; from++) {
			size_t len = 0;
			for (size_t i = from; i < e->name.n && len < sizeof(path); i++)
				len += (size_t)snprintf(path + len, sizeof(path) - len, "%s%s",
							i > from ? "." : "", e->name.parts[i]);
			if (len < sizeof(path) && floe_strmap_set(m, path, "1"))
				*star = true;
			/* and the top-level column, for a qualified plain reference */
			if (floe_strmap_set(m, e->name.parts[from], "1"))
				*star = true;
		}
	}
	for (size_t i = 0; i < e->n_args; i++)
		collect_cols(e->args[i], m, star);
}

/* the conjuncts of a WHERE floe's scan filter can take, as its text */
static void pushdown(vx *x, const sql_expr *e, floe_buf *out)
{
	if (!e)
		return;
	if (e->kind == SQL_E_BINARY && !strcmp(e->op, "AND")) {
		pushdown(x, e->args[0], out);
		pushdown(x, e->args[1], out);
		return;
	}
	floe_error scratch = {0};
	sql_ctx sc = *x->c;
	sc.err = &scratch;
	floe_buf t;
	floe_buf_init(&t, 1 << 20);
	if (!sql_filter_text(&sc, e, true, &t)) {
		if (out->len && floe_buf_puts(out, " AND "))
			goto done;
		if (floe_buf_putc(out, '(') || floe_buf_append(out, t.data, t.len) || floe_buf_putc(out, ')'))
			floe_buf_clear(out);
	}
done:
	floe_buf_reset(&t);
}

/* a dotted name that is a field inside a struct column of the table */
static bool is_nested(const floe_schema *ts, const char *key)
{
	const char *dot = strchr(key, '.');
	if (!dot || !floe_schema_find_name(ts, key, false))
		return false;
	for (size_t i = 0; i < ts->root->n_fields; i++) {
		const floe_field *f = &ts->root->fields[i];
		if (strlen(f->name) == (size_t)(dot - key) && !strncmp(f->name, key, (size_t)(dot - key)))
			return f->type->id == FLOE_T_STRUCT;
	}
	return false;
}

static bool has_nested(const floe_schema *ts, const floe_strmap *need)
{
	for (size_t i = 0; i < need->len; i++)
		if (is_nested(ts, need->items[i].key))
			return true;
	return false;
}

/* append the struct fields need names (as "a.b.c" columns) to cols */
static size_t nested_cols(const floe_schema *ts, const floe_strmap *need, const char **cols,
			  size_t nc)
{
	for (size_t i = 0; i < need->len; i++)
		if (is_nested(ts, need->items[i].key))
			cols[nc++] = need->items[i].key;
	return nc;
}

/* the OPTIONS of a streaming read (Flink's Iceberg source options) */
static bool is_stream_hint(const char *k)
{
	static const char *const keys[] = {"streaming",
					   "monitor-interval",
					   "starting-strategy",
					   "start-snapshot-id",
					   "start-snapshot-timestamp",
					   "streaming-skip-overwrite-snapshots",
					   "streaming-skip-delete-snapshots"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(k, keys[i]))
			return true;
	return false;
}

/*
 * A table function in FROM: DuckDB's iceberg_scan and its metadata functions
 * over a table by path, with DuckDB's arguments: version (a metadata version
 * number, '?' for the newest), version_name_format ("v%s%s.metadata.json":
 * the version, then the compression suffix), metadata_compression_codec
 * ('gzip'), snapshot_from_id, snapshot_from_timestamp, allow_moved_paths
 * (accepted: floe relocates with --path-map rules).
 */
static int table_func(vx *x, const sql_name *nm, const char **meta, int64_t *snap, int64_t *as_of,
		      floe_table **out)
{
	static const char *const funcs[][2] = {{"iceberg_scan", NULL},
					       {"iceberg_metadata", "duckdb.iceberg_metadata"},
					       {"iceberg_snapshots", "duckdb.iceberg_snapshots"},
					       {"iceberg_column_stats", "duckdb.iceberg_column_stats"},
					       {"iceberg_partition_stats", "duckdb.iceberg_partition_stats"}};
	sql_ctx *c = x->c;
	const floe_sql_opts *o = &c->s->opts;
	size_t fi = 0;
	while (fi < sizeof(funcs) / sizeof(funcs[0]) && strcmp(funcs[fi][0], nm->func))
		fi++;
	if (fi == sizeof(funcs) / sizeof(funcs[0]))
		return sql_err(c, FLOE_EINVAL, nm->off,
			       "unknown table function '%s' (there are iceberg_scan, iceberg_metadata, "
			       "iceberg_snapshots, iceberg_column_stats, iceberg_partition_stats)",
			       nm->func);
	*meta = funcs[fi][1];
	const char *version = NULL, *format = NULL, *codec = NULL;
	for (size_t i = 0; i < nm->n_args; i++) {
		const sql_opt *a = &nm->args[i];
		int64_t v;
		if (!strcmp(a->key, "version"))
			version = strcmp(a->value, "?") ? a->value : NULL;
		else if (!strcmp(a->key, "version_name_format"))
			format = a->value;
		else if (!strcmp(a->key, "metadata_compression_codec"))
			codec = strcasecmp(a->value, "none") ? a->value : NULL;
		else if (!strcmp(a->key, "allow_moved_paths"))
			continue;
		else if (!strcmp(a->key, "snapshot_from_id") && floe_parse_i64(a->value, strlen(a->value), &v))
			*snap = v;
		else if (!strcmp(a->key, "snapshot_from_timestamp")) {
			int64_t ns;
			bool zone;
			if (!floe_parse_timestamp_ns(a->value, strlen(a->value), &ns, &zone))
				return sql_err(c, FLOE_EINVAL, a->off, "snapshot_from_timestamp '%s' is not a timestamp",
					       a->value);
			*as_of = ns / 1000000;
		} else
			return sql_err(c, FLOE_EINVAL, a->off,
				       "%s has no argument '%s' (version, version_name_format, "
				       "metadata_compression_codec, allow_moved_paths, snapshot_from_id, "
				       "snapshot_from_timestamp)",
				       nm->func, a->key);
	}
	if (codec && strcasecmp(codec, "gzip"))
		return sql_err(c, FLOE_EINVAL, nm->off, "metadata_compression_codec '%s': floe reads 'gzip' or 'none'",
			       codec);
	const char *path = nm->parts[0];
	if (path[0] != '/' && !strstr(path, "://") && o->base_dir &&
	    !(path = floe_arena_sprintf(c->a, "%s/%s", o->base_dir, path)))
		return floe_error_oom(c->err);
	int rc;
	if (!version && !format && !codec) {
		rc = floe_table_open_path(out, path, o->path_map, o->n_path_map, c->err);
	} else {
		/* the metadata file of that version, by each name format in turn */
		const char *v = version;
		if (!v) {
			/* the version the table's hint names */
			rc = floe_table_open_path(out, path, o->path_map, o->n_path_map, c->err);
			if (rc)
				goto failed;
			const char *loc = floe_table_metadata_location(*out);
			const char *base = loc ? strrchr(loc, '/') : NULL;
			char *num = floe_arena_strdup(c->a, base ? base + 1 : "");
			if (!num)
				return floe_error_oom(c->err);
			size_t k = 0;
			while (num[k] == 'v')
				memmove(num, num + 1, strlen(num));
			while (num[k] >= '0' && num[k] <= '9')
				k++;
			num[k] = 0;
			floe_table_free(*out);
			*out = NULL;
			v = num;
		}
		const char *fmts = format ? format : "v%s%s.metadata.json,%s%s.metadata.json";
		const char *suffix = codec ? ".gz" : "";
		rc = FLOE_ENOTFOUND;
		for (const char *f = fmts; rc == FLOE_ENOTFOUND && *f;) {
			const char *end = strchr(f, ',');
			size_t fl = end ? (size_t)(end - f) : strlen(f);
			floe_buf name;
			floe_buf_init(&name, 0);
			int args = 0;
			for (size_t i = 0; i < fl; i++) {
				if (f[i] == '%' && i + 1 < fl && f[i + 1] == 's') {
					if (floe_buf_puts(&name, args++ == 0 ? v : suffix))
						break;
					i++;
				} else if (floe_buf_putc(&name, f[i])) {
					break;
				}
			}
			const char *file = floe_arena_sprintf(c->a, "%s/metadata/%.*s", path, (int)name.len,
							      name.data ? (const char *)name.data : "");
			floe_buf_reset(&name);
			if (!file)
				return floe_error_oom(c->err);
			rc = floe_table_open_path(out, file, o->path_map, o->n_path_map, c->err);
			f += fl + (end ? 1 : 0);
		}
		if (rc == FLOE_ENOTFOUND)
			return sql_err(c, FLOE_EINVAL, nm->off,
				       "%s: no metadata file for version '%s' with name format(s) '%s'%s",
				       nm->func, v, fmts, codec ? " and gzip compression" : "");
	}
failed:
	if (rc) {
		char inner[FLOE_ERROR_MSG_MAX];
		snprintf(inner, sizeof(inner), "%s", c->err->msg);
		return sql_err(c, rc == FLOE_ENOTFOUND ? FLOE_EINVAL : rc, nm->off, "%s", inner);
	}
	return FLOE_OK;
}

static int open_source(vx *x, source *src, const char *where, const floe_strmap *need, bool star)
{
	sql_ctx *c = x->c;
	sql_ref r = {0};
	int rc;
	if (src->sub) {
		/* a derived table: run it; its columns are qualified by the alias */
		if ((rc = query_rel(c, src->sub, &src->rel)))
			return rc;
		if (src->n_col_names && src->n_col_names != src->rel.n_cols)
			return sql_err(c, FLOE_EINVAL, src->sub->off,
				       "the alias names %zu columns; the derived table has %zu",
				       src->n_col_names, src->rel.n_cols);
		for (size_t i = 0; i < src->rel.n_cols; i++) {
			src->rel.quals[i] = src->alias;
			if (src->n_col_names)
				src->rel.names[i] = src->col_names[i];
		}
		src->schema = src->rel;
		src->schema.n = 0;
		return 0;
	}
	const char *func_meta = NULL;
	int64_t func_snap = -1, func_as_of = -1;
	if (src->name->func) {
		if ((rc = table_func(x, src->name, &func_meta, &func_snap, &func_as_of, &src->t)))
			return rc;
	} else if (src->name->path) {
		/* a table directory or metadata file, as floe scan opens it */
		const floe_sql_opts *o = &c->s->opts;
		const char *path = src->name->parts[0];
		if (path[0] != '/' && !strstr(path, "://") && o->base_dir &&
		    !(path = floe_arena_sprintf(c->a, "%s/%s", o->base_dir, path)))
			return floe_error_oom(c->err);
		rc = floe_table_open_path(&src->t, path, o->path_map, o->n_path_map, c->err);
		if (rc) {
			char inner[FLOE_ERROR_MSG_MAX];
			snprintf(inner, sizeof(inner), "%s", c->err->msg);
			/* not a catalog lookup: no "not found in the catalog" hint */
			return sql_err(c, rc == FLOE_ENOTFOUND ? FLOE_EINVAL : rc, src->name->off, "%s",
				       inner);
		}
	} else {
		if ((rc = sql_resolve(c, src->name, &r)))
			return rc;
		if (sql_find_source(c->s, &r))
			return sql_err(c, FLOE_EUNSUPPORTED, src->name->off,
				       "SELECT from a source table is not supported yet");
		if ((rc = sql_need_catalog(c, r.cat, src->name->off)))
			return rc;
		rc = floe_table_load(&src->t, r.cat->cat, r.db, r.table, c->err);
		if (rc == FLOE_ENOTFOUND)
			return sql_err(c, rc, src->name->off, "table '%s' does not exist",
				       floe_sql__name_str(c->a, src->name));
		if (rc)
			return floe_error_prefix(c->err, rc, "SELECT: ");
	}
	int64_t snap = func_snap, as_of = func_as_of;
	const char *branch = NULL, *tag = NULL;
	for (size_t i = 0; i < src->n_hints; i++) {
		const sql_opt *o = &src->hints[i];
		int64_t v;
		if (!strcmp(o->key, "snapshot-id") && floe_parse_i64(o->value, strlen(o->value), &v))
			snap = v;
		else if (!strcmp(o->key, "as-of-timestamp") && floe_parse_i64(o->value, strlen(o->value), &v))
			as_of = v;
		else if (!strcmp(o->key, "branch"))
			branch = o->value;
		else if (!strcmp(o->key, "tag"))
			tag = o->value;
		else if (!strcmp(o->key, "streaming") && !strcasecmp(o->value, "false"))
			continue;
		else if (!strcmp(o->key, "streaming") && c->inc_end < 0 && !c->inc)
			return sql_err(c, FLOE_EUNSUPPORTED, o->off,
				       "'streaming'='%s' here: a streaming SELECT reads one table with a "
				       "projection and a WHERE (no joins, aggregates, ORDER BY or subqueries "
				       "yet)",
				       o->value);
		else if (!is_stream_hint(o->key))
			return sql_err(c, FLOE_EUNSUPPORTED, o->off,
				       "read option '%s' = '%s' is not supported yet (snapshot-id, "
				       "as-of-timestamp, branch, tag, and for 'streaming'='true': "
				       "monitor-interval, starting-strategy, start-snapshot-id, "
				       "start-snapshot-timestamp, streaming-skip-overwrite-snapshots, "
				       "streaming-skip-delete-snapshots)",
				       o->key, o->value);
	}
	if (c->inc_end >= 0 && !c->inc)
		snap = c->inc_end; /* a streaming SELECT's first read: the table at its start */
	const char *qual = src->alias        ? src->alias
			   : src->name->path ? NULL /* a path names no table: t.x needs an alias */
					     : src->name->parts[src->name->n - 1];
	if (func_meta) {
		rc = floe_inspect_open(&src->scan, src->t, func_meta, snap, c->err);
	} else if (r.meta) {
		/* only the columns the query names (the metric maps of $files are most of it) */
		const char **cols = floe_arena_calloc(c->a, need->len + 2, sizeof(char *));
		if (!cols)
			return floe_error_oom(c->err);
		for (size_t i = 0; i < need->len; i++)
			cols[i] = need->items[i].key;
		if (star)
			cols[need->len] = "*"; /* every column, and the struct fields named */
		rc = floe_inspect_open_columns(&src->scan, src->t, r.meta, snap, cols,
					       need->len + star, c->err);
		if (rc == FLOE_ENOTFOUND)
			return sql_err(c, rc, src->name->off, "unknown metadata table '$%s'", r.meta);
	} else {
		const floe_schema *ts = floe_metadata_current_schema(floe_table_metadata(src->t));
		const char **cols = NULL;
		size_t nc = 0;
		if (!star) {
			cols = floe_arena_calloc(c->a, ts->root->n_fields + need->len + 1, sizeof(char *));
			if (!cols)
				return floe_error_oom(c->err);
			for (size_t i = 0; i < ts->root->n_fields; i++)
				if (floe_strmap_get(need, ts->root->fields[i].name))
					cols[nc++] = ts->root->fields[i].name;
			/* metadata columns: _file, _pos, ... */
			for (size_t i = 0; i < need->len; i++)
				if (need->items[i].key[0] == '_' && !floe_schema_find_name(ts, need->items[i].key, false))
					cols[nc++] = need->items[i].key;
			nc = nested_cols(ts, need, cols, nc);
			if (!nc && ts->root->n_fields)
				cols[nc++] = ts->root->fields[0].name; /* COUNT(*): one column */
		}
		if (star && has_nested(ts, need)) {
			/* every column, and the struct fields named as columns */
			cols = floe_arena_calloc(c->a, ts->root->n_fields + need->len + 1, sizeof(char *));
			if (!cols)
				return floe_error_oom(c->err);
			for (size_t i = 0; i < ts->root->n_fields; i++)
				cols[nc++] = ts->root->fields[i].name;
			nc = nested_cols(ts, need, cols, nc);
		}
		floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
		so.where = where;
		so.columns = cols;
		so.n_columns = nc;
		so.snapshot_id = snap;
		so.as_of_ms = as_of;
		so.branch = branch;
		so.tag = tag;
		if (c->inc) {
			/* a streaming SELECT's poll: the appends of (inc_after, inc_end] */
			const floe_metadata *m = floe_table_metadata(src->t);
			const floe_snapshot *sn = floe_metadata_snapshot(m, c->inc_end), *first = NULL;
			while (sn && sn->snapshot_id != c->inc_after) {
				first = sn;
				sn = sn->parent_id == FLOE_NO_SNAPSHOT ? NULL : floe_metadata_snapshot(m, sn->parent_id);
			}
			if (!first)
				return sql_err(c, FLOE_ENOTFOUND, src->name->off,
					       "snapshot %lld is no longer in the table's history", (long long)c->inc_end);
			so.snapshot_id = -1;
			so.as_of_ms = -1;
			so.tag = NULL;
			so.start = FLOE_START_SNAPSHOT_ID;
			so.start_snapshot_id = first->snapshot_id;
			so.end_snapshot_id = c->inc_end;
			so.skip_overwrites = c->inc_skip;
		}
		rc = floe_scan_open(&src->scan, src->t, &so, c->err);
	}
	if (rc) {
		char inner[FLOE_ERROR_MSG_MAX];
		snprintf(inner, sizeof(inner), "%s", c->err->msg);
		return sql_err(c, rc, src->name->off, "%s", inner);
	}
	floe_scan *s = src->scan;
	if ((rc = rel_init(x, &src->schema, s->n_cols)))
		return rc;
	for (size_t i = 0; i < s->n_cols; i++) {
		src->schema.names[i] = s->cols[i].name;
		src->schema.quals[i] = qual;
		src->schema.types[i] = vty_of(s->cols[i].type, s->meta_style);
		src->schema.ft[i] = s->cols[i].type;
	}
	return 0;
}

/* read every row of a source into a relation */
static int read_all(vx *x, source *src, vrel *out)
{
	if (src->sub) {
		*out = src->rel;
		return 0;
	}
	int rc = rel_init(x, out, src->schema.n_cols);
	if (rc)
		return rc;
	memcpy(out->names, src->schema.names, src->schema.n_cols * sizeof(char *));
	memcpy(out->quals, src->schema.quals, src->schema.n_cols * sizeof(char *));
	memcpy(out->types, src->schema.types, src->schema.n_cols * sizeof(vty));
	memcpy(out->ft, src->schema.ft, src->schema.n_cols * sizeof(floe_type *));
	vrel b = src->schema;
	b.cols = floe_arena_calloc(x->a, b.n_cols + 1, sizeof(sv *));
	if (!b.cols)
		return floe_error_oom(x->c->err);
	for (;;) {
		struct ArrowArray arr;
		bool eof;
		if ((rc = floe_scan_next(src->scan, &arr, &eof, x->c->err)))
			return rc;
		if (eof)
			break;
		rc = batch_cols(x, src->scan, &arr, &b);
		for (size_t i = 0; !rc && i < b.n; i++)
			rc = rel_push(x, out, b.cols, i);
		floe_arena_reset(x->ba);
		arr.release(&arr);
		if (rc)
			return rc;
		if (out->n > MAX_JOIN_ROWS)
			return sql_err(x->c, FLOE_EUNSUPPORTED, src->name->off,
				       "a joined table has more than %zu rows", MAX_JOIN_ROWS);
	}
	return 0;
}

/* does e name only columns of cols [lo, hi) of rel? */
static bool refs_within(vx *x, const sql_expr *e, const vrel *rel, size_t lo, size_t hi, bool *any)
{
	if (!e)
		return true;
	if (e->kind == SQL_E_COL) {
		const vrel *save = x->in;
		int col;
		sql_ctx sc = *x->c;
		floe_error scratch = {0};
		sc.err = &scratch;
		sql_ctx *sv_c = x->c;
		x->c = &sc;
		x->in = rel;
		int rc = find_col(x, e, &col);
		x->in = save;
		x->c = sv_c;
		if (rc || col < 0)
			return false;
		*any = true;
		return (size_t)col >= lo && (size_t)col < hi;
	}
	for (size_t i = 0; i < e->n_args; i++)
		if (!refs_within(x, e->args[i], rel, lo, hi, any))
			return false;
	return true;
}

static void conjuncts(const sql_expr *e, const sql_expr **out, size_t *n, size_t cap)
{
	if (e && e->kind == SQL_E_BINARY && !strcmp(e->op, "AND")) {
		conjuncts(e->args[0], out, n, cap);
		conjuncts(e->args[1], out, n, cap);
	} else if (e && *n < cap) {
		out[(*n)++] = e;
	}
}

/* left ⋈ right: a hash join on the ON condition's equalities between the sides */
static int join(vx *x, const sql_join *j, vrel *l, vrel *r, vrel *out)
{
	int rc;
	size_t nl = l->n_cols, nr = r->n_cols;
	vrel both;
	if ((rc = rel_init(x, &both, nl + nr)))
		return rc;
	for (size_t i = 0; i < nl + nr; i++) {
		const vrel *s = i < nl ? l : r;
		size_t k = i < nl ? i : i - nl;
		both.names[i] = s->names[k];
		both.quals[i] = s->quals[k];
		both.types[i] = s->types[k];
		both.ft[i] = s->ft[k];
	}
	/* split ON into key pairs and the rest */
	const sql_expr *cj[64];
	size_t ncj = 0;
	conjuncts(j->on, cj, &ncj, 64);
	xn *lk[64], *rk[64];
	size_t nk = 0;
	const sql_expr *rest[64];
	size_t nrest = 0;
	for (size_t i = 0; i < ncj; i++) {
		const sql_expr *e = cj[i];
		bool a1 = false, a2 = false, b1 = false, b2 = false;
		if (e->kind == SQL_E_BINARY && !strcmp(e->op, "=")) {
			bool ll = refs_within(x, e->args[0], &both, 0, nl, &a1) && a1;
			bool rr = refs_within(x, e->args[1], &both, nl, nl + nr, &b1) && b1;
			bool lr = refs_within(x, e->args[0], &both, nl, nl + nr, &a2) && a2;
			bool rl = refs_within(x, e->args[1], &both, 0, nl, &b2) && b2;
			if ((ll && rr) || (lr && rl)) {
				const sql_expr *le = ll && rr ? e->args[0] : e->args[1];
				const sql_expr *re = ll && rr ? e->args[1] : e->args[0];
				vty t;
				x->in = l;
				rc = bind(x, le, &lk[nk]);
				if (!rc) {
					x->in = r;
					rc = bind(x, re, &rk[nk]);
				}
				if (!rc)
					rc = common(x, e->off, lk[nk]->t, rk[nk]->t, &t);
				if (!rc)
					rc = cast_to(x, &lk[nk], t, false);
				if (!rc)
					rc = cast_to(x, &rk[nk], t, false);
				if (rc)
					return rc;
				nk++;
				continue;
			}
		}
		rest[nrest++] = e;
	}
	xn *resid = NULL;
	x->in = &both;
	for (size_t i = 0; i < nrest; i++) {
		xn *p, *a2;
		if ((rc = bind(x, rest[i], &p)) || (rc = need_bool(x, p, "ON")))
			return rc;
		if (!resid) {
			resid = p;
			continue;
		}
		NEW(a2, X_AND, T(VT_BOOL, 0, 0), p->off, 2);
		a2->a[0] = resid;
		a2->a[1] = p;
		resid = a2;
	}
	/* keys of both sides */
	sv *lkv[64], *rkv[64];
	for (size_t i = 0; i < nk; i++) {
		if ((rc = eval(x, lk[i], l, &lkv[i])) || (rc = eval(x, rk[i], r, &rkv[i])))
			return rc;
	}
	floe_hmap h;
	floe_hmap_init(&h);
	floe_buf kb;
	floe_buf_init(&kb, 0);
	/* right rows by key: a chain through next[] */
	int64_t *next = floe_arena_alloc(x->ba, (r->n + 1) * sizeof(int64_t));
	if (!next) {
		rc = floe_error_oom(x->c->err);
		goto done;
	}
	for (size_t i = 0; i < r->n && nk; i++) {
		bool null = false;
		floe_buf_clear(&kb);
		for (size_t k = 0; k < nk; k++) {
			null |= rkv[k][i].null;
			if (sv_key(&kb, rk[k]->t, &rkv[k][i])) {
				rc = floe_error_oom(x->c->err);
				goto done;
			}
		}
		next[i] = -1;
		if (null)
			continue;
		uint64_t *slot;
		bool existed;
		if (floe_hmap_upsert(&h, kb.data, kb.len, &slot, &existed)) {
			rc = floe_error_oom(x->c->err);
			goto done;
		}
		if (existed)
			next[i] = (int64_t)*slot;
		*slot = i;
	}
	/* candidate pairs, in chunks */
	if ((rc = rel_init(x, out, nl + nr)))
		goto done;
	memcpy(out->names, both.names, (nl + nr) * sizeof(char *));
	memcpy(out->quals, both.quals, (nl + nr) * sizeof(char *));
	memcpy(out->types, both.types, (nl + nr) * sizeof(vty));
	memcpy(out->ft, both.ft, (nl + nr) * sizeof(floe_type *));
	size_t cap = 4096, np = 0;
	size_t *pl = floe_arena_alloc(x->a, cap * sizeof(size_t)), *pr = floe_arena_alloc(x->a, cap * sizeof(size_t));
	bool *matched = floe_arena_calloc(x->a, l->n + 1, sizeof(bool));
	bool *rmatched = floe_arena_calloc(x->a, r->n + 1, sizeof(bool));
	vrel pairs = both;
	pairs.cols = floe_arena_calloc(x->a, nl + nr + 1, sizeof(sv *));
	sv *nullcol = NULL;
	if (!pl || !pr || !matched || !rmatched || !pairs.cols) {
		rc = floe_error_oom(x->c->err);
		goto done;
	}
	size_t li = 0;
	int64_t cur = -1;
	size_t ri = 0;
	bool more = l->n > 0;
	while (more || np) {
		/* fill pairs */
		while (more && np < cap) {
			if (!nk) {
				/* cross: every right row */
				if (ri < r->n) {
					pl[np] = li;
					pr[np++] = ri++;
					continue;
				}
				ri = 0;
				if (++li >= l->n)
					more = false;
				continue;
			}
			if (cur == -1 && ri == 0) {
				bool null = false;
				floe_buf_clear(&kb);
				for (size_t k = 0; k < nk; k++) {
					null |= lkv[k][li].null;
					if (sv_key(&kb, lk[k]->t, &lkv[k][li])) {
						rc = floe_error_oom(x->c->err);
						goto done;
					}
				}
				uint64_t v;
				cur = !null && floe_hmap_get(&h, kb.data, kb.len, &v) ? (int64_t)v : -2;
				ri = 1;
			}
			if (cur >= 0) {
				pl[np] = li;
				pr[np++] = (size_t)cur;
				cur = next[cur];
				continue;
			}
			cur = -1;
			ri = 0;
			if (++li >= l->n)
				more = false;
		}
		if (!np)
			break;
		/* materialise the pairs and check the rest of ON */
		pairs.n = np;
		for (size_t c2 = 0; c2 < nl + nr; c2++) {
			sv *col = floe_arena_alloc(x->ba, np * sizeof(sv));
			if (!col) {
				rc = floe_error_oom(x->c->err);
				goto done;
			}
			for (size_t i = 0; i < np; i++)
				col[i] = c2 < nl ? l->cols[c2][pl[i]] : r->cols[c2 - nl][pr[i]];
			pairs.cols[c2] = col;
		}
		sv *ok = NULL;
		if (resid && (rc = eval(x, resid, &pairs, &ok)))
			goto done;
		for (size_t i = 0; i < np; i++) {
			if (ok && (ok[i].null || !ok[i].u.i))
				continue;
			matched[pl[i]] = true;
			rmatched[pr[i]] = true;
			if ((rc = rel_push(x, out, pairs.cols, i)))
				goto done;
			if (out->n > MAX_JOIN_ROWS) {
				rc = sql_err(x->c, FLOE_EUNSUPPORTED, j->off,
					     "the join has more than %zu rows", MAX_JOIN_ROWS);
				goto done;
			}
		}
		np = 0;
	}
	if (j->kind == 'L' || j->kind == 'R' || j->kind == 'F') {
		/* the rows of the outer side(s) without a match, with NULLs on the other */
		if (!(nullcol = floe_arena_calloc(x->a, 1, sizeof(sv)))) {
			rc = floe_error_oom(x->c->err);
			goto done;
		}
		nullcol->null = true;
		sv **row = floe_arena_calloc(x->a, nl + nr + 1, sizeof(sv *));
		if (!row) {
			rc = floe_error_oom(x->c->err);
			goto done;
		}
		for (size_t i = 0; j->kind != 'R' && i < l->n; i++) {
			if (matched[i])
				continue;
			for (size_t c2 = 0; c2 < nl + nr; c2++)
				row[c2] = c2 < nl ? &l->cols[c2][i] : nullcol;
			if ((rc = rel_push(x, out, row, 0)))
				goto done;
		}
		for (size_t i = 0; j->kind != 'L' && i < r->n; i++) {
			if (rmatched[i])
				continue;
			for (size_t c2 = 0; c2 < nl + nr; c2++)
				row[c2] = c2 < nl ? nullcol : &r->cols[c2 - nl][i];
			if ((rc = rel_push(x, out, row, 0)))
				goto done;
		}
	}
done:
	floe_hmap_reset(&h);
	floe_buf_reset(&kb);
	floe_arena_reset(x->ba);
	return rc;
}

/* An element of an array (or a map's key or value) from its JSON text, as
 * type t / vt: scalars read with CAST's rules from their text. */
static int json_sv(vx *x, const floe_json *j, vty want, uint32_t off, sv *out)
{
	memset(out, 0, sizeof(*out));
	if (floe_json_is_null(j)) {
		out->null = true;
		return 0;
	}
	if (want.k == VT_TEXT) {
		/* a nested value (or a variant): its JSON text */
		const char *txt = j->text ? j->text : j->s;
		size_t n = j->text ? j->text_len : j->len;
		if (j->type == FLOE_JSON_BOOL)
			txt = j->b ? "true" : "false", n = strlen(txt);
		out->u.s.p = txt ? txt : "";
		out->u.s.n = txt ? n : 0;
		return 0;
	}
	if (want.k == VT_BOOL && j->type == FLOE_JSON_BOOL) {
		out->u.i = j->b;
		return 0;
	}
	if (j->type != FLOE_JSON_NUMBER && j->type != FLOE_JSON_STRING)
		return ERR(off, "UNNEST: an element is not a %s", vt_name(want));
	sv text = {0};
	text.u.s.p = j->s;
	text.u.s.n = j->len;
	if (!cast1(x->a, T(VT_STR, 0, 0), want, &text, out))
		return ERR(off, "UNNEST: element '%.*s' is not a %s", (int)(j->len > 40 ? 40 : j->len),
			   j->s, vt_name(want));
	return 0;
}

/* left ⋈ UNNEST(expr): each left row once per element of its array (or
 * entry of its map); a NULL or empty collection gives no row */
static int unnest_join(vx *x, const sql_join *j, vrel *l, vrel *out)
{
	int rc;
	xn *e;
	x->in = l;
	if ((rc = bind(x, j->unnest, &e)))
		return rc;
	const floe_type *ct = e->op == X_COL && l->ft ? l->ft[e->col] : NULL;
	if (!ct || (ct->id != FLOE_T_LIST && ct->id != FLOE_T_MAP))
		return ERR(j->unnest->off, "UNNEST takes an array or map column");
	/* the new columns: the element (a struct's fields), or key and value; then the ordinality */
	const floe_type *el = ct->id == FLOE_T_LIST ? ct->element : NULL;
	bool fields = el && el->id == FLOE_T_STRUCT;
	size_t nn = ct->id == FLOE_T_MAP ? 2 : fields ? el->n_fields : 1;
	size_t nl = l->n_cols, nt = nn + (j->ordinality ? 1 : 0);
	if (j->col_names && j->n_col_names != nt)
		return ERR(j->off, "UNNEST gives %zu columns; the alias names %zu", nt, j->n_col_names);
	if ((rc = rel_init(x, out, nl + nt)))
		return rc;
	for (size_t i = 0; i < nl; i++) {
		out->names[i] = l->names[i];
		out->quals[i] = l->quals[i];
		out->types[i] = l->types[i];
		out->ft[i] = l->ft[i];
	}
	for (size_t k = 0; k < nt; k++) {
		const floe_type *t = k == nn		       ? NULL
				     : ct->id == FLOE_T_MAP ? (k ? ct->value : ct->key)
				     : fields		       ? el->fields[k].type
							       : el;
		const char *name = k == nn		  ? "ordinality"
				   : ct->id == FLOE_T_MAP ? (k ? "value" : "key")
				   : fields		  ? el->fields[k].name
							  : "item";
		out->names[nl + k] = j->col_names ? j->col_names[k] : name;
		out->quals[nl + k] = j->alias;
		out->types[nl + k] = t ? vty_of(t, false) : T(VT_INT, 64, 0);
		out->ft[nl + k] = t;
	}
	sv *vals;
	if ((rc = eval(x, e, l, &vals)))
		return rc;
	sv *nv = floe_arena_calloc(x->a, nt + 1, sizeof(sv));
	sv **row = floe_arena_calloc(x->a, nl + nt + 1, sizeof(sv *));
	if (!nv || !row)
		return floe_error_oom(x->c->err);
	for (size_t k = 0; k < nt; k++)
		row[nl + k] = &nv[k];
	floe_arena ja;
	floe_arena_init(&ja, 1 << 12);
	for (size_t i = 0; !rc && i < l->n; i++) {
		if (vals[i].null)
			continue;
		floe_json *doc;
		floe_arena_reset(&ja);
		if ((rc = floe_json_parse(&doc, &ja, vals[i].u.s.p, vals[i].u.s.n, NULL, x->c->err)))
			break;
		for (size_t c2 = 0; c2 < nl; c2++)
			row[c2] = &l->cols[c2][i];
		int64_t ord = 0;
		for (const floe_json *el_j = doc->type == FLOE_JSON_ARRAY ? doc->child : NULL; !rc && el_j;
		     el_j = el_j->next) {
			for (size_t k = 0; !rc && k < nn; k++) {
				const floe_json *v = el_j;
				if (ct->id == FLOE_T_MAP) /* [key, value] */
					v = floe_json_at(el_j, k);
				else if (fields)
					v = floe_json_get(el_j, el->fields[k].name);
				rc = json_sv(x, v, out->types[nl + k], j->unnest->off, &nv[k]);
			}
			if (j->ordinality) {
				memset(&nv[nn], 0, sizeof(sv));
				nv[nn].u.i = ++ord; /* 1-based, as SQL's WITH ORDINALITY */
			}
			if (!rc)
				rc = rel_push(x, out, row, 0);
			if (!rc && out->n > MAX_JOIN_ROWS)
				rc = ERR(j->off, "the UNNEST has more than %zu rows", MAX_JOIN_ROWS);
		}
	}
	floe_arena_reset(&ja);
	return rc;
}

/* ---- the query ---------------------------------------------------------------------- */

/* Is column k a struct field projected as "a.b" beside its table's column a? */
static bool is_field_col(const vrel *in, size_t k)
{
	const char *dot = strchr(in->names[k], '.');
	if (!dot)
		return false;
	size_t n = (size_t)(dot - in->names[k]);
	for (size_t i = 0; i < in->n_cols; i++)
		if (i != k && strlen(in->names[i]) == n && !strncmp(in->names[i], in->names[k], n) &&
		    (in->quals[i] == in->quals[k] ||
		     (in->quals[i] && in->quals[k] && !strcmp(in->quals[i], in->quals[k]))))
			return true;
	return false;
}

bool sql_vec_needed(const sql_select *q)
{
	if (!q->from.n && !q->from_sub)
		return true; /* no FROM: the executor's one empty row */
	for (size_t i = 0; i < q->n_hints; i++)
		if (!strcmp(q->hints[i].key, "streaming") && !strcasecmp(q->hints[i].value, "true"))
			return true; /* the streaming read is the executor's */
	if (q->from.path || q->from_sub || q->union_next || q->has_join || q->n_group_by || q->group_all || q->having || q->n_order_by || q->distinct || q->offset)
		return true;
	for (size_t i = 0; i < q->n_items; i++)
		if (q->items[i]->kind != SQL_E_COL && q->items[i]->kind != SQL_E_STAR)
			return true;
	if (q->n_items > 1)
		for (size_t i = 0; i < q->n_items; i++)
			if (q->items[i]->kind == SQL_E_STAR)
				return true;
	/* a struct field of a metadata table (partition.region of t$files): the executor's
	 * projection makes it a column */
	if (q->from.n && strchr(q->from.parts[q->from.n - 1], '$'))
		for (size_t i = 0; i < q->n_items; i++)
			if (q->items[i]->kind == SQL_E_COL && q->items[i]->name.n > 1)
				return true;
	return false;
}

typedef struct sort_ctx {
	const vrel *rel;
	size_t first, n;      /* the key columns */
	const sql_order *ord;
} sort_ctx;

static int row_cmp(const sort_ctx *s, size_t a, size_t b)
{
	for (size_t k = 0; k < s->n; k++) {
		const sv *x = &s->rel->cols[s->first + k][a], *y = &s->rel->cols[s->first + k][b];
		bool nulls_first = s->ord[k].nulls == 1;
		int r;
		if (x->null || y->null) {
			if (x->null && y->null)
				continue;
			r = x->null ? (nulls_first ? -1 : 1) : (nulls_first ? 1 : -1);
			return r; /* NULLS LAST unless FIRST, whatever the direction (as DuckDB) */
		}
		r = sv_cmp(s->rel->types[s->first + k], x, y);
		if (r)
			return s->ord[k].desc ? -r : r;
	}
	return a < b ? -1 : a > b; /* stable */
}

static void msort(const sort_ctx *s, size_t *v, size_t *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	msort(s, v, tmp, h);
	msort(s, v + h, tmp, n - h);
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = row_cmp(s, v[i], v[j]) <= 0 ? v[i++] : v[j++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(size_t));
}

static const char *item_name(vx *x, const sql_select *q, size_t i)
{
	const sql_expr *e = q->items[i];
	if (q->aliases[i])
		return q->aliases[i];
	if (e->kind == SQL_E_COL)
		return e->name.parts[e->name.n - 1];
	const char *t = x->c->sc->text;
	uint32_t a = e->off, b = e->end > e->off ? e->end : e->off;
	if (b > x->c->sc->n)
		b = (uint32_t)x->c->sc->n;
	while (b > a && (t[b - 1] == ' ' || t[b - 1] == '\n' || t[b - 1] == '\t'))
		b--;
	const char *r = floe_arena_strndup(x->a, t + a, b - a);
	return r ? r : "?";
}

/* update the aggregate states of rows [0, n) whose groups are gid */
static int agg_update(vx *x, agg_state *st, const size_t *gid, const bool *keep, sv **args,
		      size_t n, floe_hmap *dist)
{
	floe_buf kb;
	floe_buf_init(&kb, 0);
	int rc = 0;
	for (size_t a = 0; a < x->n_aggs && !rc; a++) {
		agg_spec *sp = &x->aggs[a];
		vty at = sp->arg ? sp->arg->t : T(VT_NULL, 0, 0);
		for (size_t i = 0; i < n && !rc; i++) {
			if (keep && !keep[i])
				continue;
			agg_state *s = &st[gid[i] * x->n_aggs + a];
			if (sp->kind == AG_COUNT_STAR) {
				s->cnt++;
				continue;
			}
			sv *v = &args[a][i];
			if (v->null)
				continue;
			if (sp->distinct) {
				bool existed;
				floe_buf_clear(&kb);
				uint64_t g = gid[i], ai = a;
				if (floe_buf_append(&kb, &g, sizeof(g)) || floe_buf_append(&kb, &ai, sizeof(ai)) ||
				    sv_key(&kb, at, v) || floe_hmap_put(dist, kb.data, kb.len, 1, &existed)) {
					rc = floe_error_oom(x->c->err);
					break;
				}
				if (existed)
					continue;
			}
			s->cnt++;
			switch (sp->kind) {
			case AG_MIN: case AG_MAX:
				if (!s->any || (sp->kind == AG_MIN ? sv_cmp(at, v, &s->acc) < 0 : sv_cmp(at, v, &s->acc) > 0)) {
					s->acc = *v;
					if (sv_keep(x->a, at, &s->acc))
						rc = floe_error_oom(x->c->err);
				}
				break;
			case AG_SUM: case AG_AVG:
				if (at.k == VT_DOUBLE) {
					s->fsum += v->u.f;
				} else if (at.k == VT_DEC) {
					if (__builtin_add_overflow(s->dsum, v->u.d, &s->dsum))
						rc = sql_err(x->c, FLOE_EINVAL, sp->src->off, "numeric overflow in %s", sp->src->text);
				} else if (__builtin_add_overflow(s->acc.u.i, v->u.i, &s->acc.u.i)) {
					rc = sql_err(x->c, FLOE_EINVAL, sp->src->off, "integer overflow in %s", sp->src->text);
				}
				break;
			default: break;
			}
			s->any = true;
		}
	}
	floe_buf_reset(&kb);
	return rc;
}

static void agg_final(const agg_spec *sp, const agg_state *s, sv *out)
{
	vty at = sp->arg ? sp->arg->t : T(VT_NULL, 0, 0);
	memset(out, 0, sizeof(*out));
	switch (sp->kind) {
	case AG_COUNT_STAR: case AG_COUNT: out->u.i = s->cnt; return;
	case AG_MIN: case AG_MAX:
		if (!s->any)
			out->null = true;
		else
			*out = s->acc;
		return;
	case AG_SUM:
		if (!s->any) {
			out->null = true;
			return;
		}
		if (at.k == VT_DOUBLE)
			out->u.f = s->fsum;
		else if (at.k == VT_DEC)
			out->u.d = s->dsum;
		else
			out->u.i = s->acc.u.i;
		return;
	case AG_AVG:
		if (!s->cnt) {
			out->null = true;
			return;
		}
		if (at.k == VT_DOUBLE)
			out->u.f = s->fsum / (double)s->cnt;
		else if (at.k == VT_DEC)
			out->u.f = dec_to_double(s->dsum, at.s) / (double)s->cnt;
		else
			out->u.f = (double)s->acc.u.i / (double)s->cnt;
		return;
	}
}

/* ORDER BY k / alias -> the item it names, else -1 */
static int order_item(const sql_select *q, const sql_expr *e)
{
	if (e->kind == SQL_E_NUM) {
		int64_t k;
		if (floe_parse_i64(e->text, strlen(e->text), &k) && k >= 1 && (size_t)k <= q->n_items)
			return (int)(k - 1);
		return -2;
	}
	if (e->kind == SQL_E_COL && e->name.n == 1)
		for (size_t i = 0; i < q->n_items; i++)
			if (q->aliases[i] && !strcmp(q->aliases[i], e->name.parts[0]))
				return (int)i;
	for (size_t i = 0; i < q->n_items; i++)
		if (expr_eq(q->items[i], e))
			return (int)i;
	return -1;
}

/* The query's working memory: SET 'sql.memory-budget', floe sql --memory-budget, or half the
 * machine's memory. */
int64_t sql_query_budget(const sql_ctx *c)
{
	const char *v = floe_strmap_get(&c->s->set, "sql.memory-budget");
	int64_t b;
	if (v && floe_parse_size(v, &b) && b > 0)
		return b;
	if (c->s->opts.memory_budget > 0)
		return c->s->opts.memory_budget;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	return pages > 0 && page > 0 ? (int64_t)pages * page / 2 : (int64_t)4 << 30;
}

/* What the query holds beyond the statement's start: kept rows and groups (the
 * statement arena), the group and DISTINCT hash maps, the aggregate states. */
static int64_t query_bytes(const floe_arena *a, size_t base, const floe_hmap *g,
			   const floe_hmap *d, size_t states)
{
	return (int64_t)(a->used - base) +
	       (int64_t)((g->cap + d->cap) * sizeof(floe_hmap_slot) + g->keys.used + d->keys.used) +
	       (int64_t)(states * sizeof(agg_state));
}

int sql_budget_err(sql_ctx *c, const sql_select *q, int64_t budget)
{
	char size[32];
	if (budget >= (int64_t)1 << 30)
		snprintf(size, sizeof(size), "%.1f GiB", (double)budget / (1 << 30));
	else if (budget >= (int64_t)1 << 20)
		snprintf(size, sizeof(size), "%.1f MiB", (double)budget / (1 << 20));
	else
		snprintf(size, sizeof(size), "%lld KiB", (long long)(budget >> 10));
	return sql_err(c, FLOE_ENOMEM, q->off,
		       "the query needs more memory than its budget (%s) to hold its groups, "
		       "sorted, distinct or joined rows and its result: raise SET "
		       "'sql.memory-budget' (or floe sql --memory-budget), or narrow the query",
		       size);
}

/* Run one SELECT (no UNION) into out: its items' columns, named as they
 * print, after ORDER BY, OFFSET and LIMIT (values in c->a). */
static int select_rel(sql_ctx *c, const sql_select *q, vrel *out)
{
	sql_select qa;
	if (q->group_all) {
		/* GROUP BY ALL: the items without an aggregate, as if listed */
		qa = *q;
		qa.group_all = false;
		qa.group_by = floe_arena_calloc(c->a, q->n_items + 1, sizeof(sql_expr *));
		if (!qa.group_by)
			return floe_error_oom(c->err);
		qa.n_group_by = 0;
		for (size_t i = 0; i < q->n_items; i++) {
			if (q->items[i]->kind == SQL_E_STAR)
				return sql_err(c, FLOE_EINVAL, q->items[i]->off, "GROUP BY ALL with '*': list the columns");
			if (!has_agg(q->items[i]))
				qa.group_by[qa.n_group_by++] = q->items[i];
		}
		q = &qa;
	}
	vx xs, *x = &xs;
	memset(x, 0, sizeof(*x));
	x->c = c;
	x->a = c->a;
	x->q = q;
	x->now_us = floe_now_us();
	floe_arena batch_arena;
	floe_arena_init(&batch_arena, 1 << 16);
	x->ba = &batch_arena;
	/* the memory budget: the statement arena is capped, the rest counted per batch */
	int64_t budget = sql_query_budget(c);
	size_t base = c->a->used, old_cap = c->a->cap;
	c->a->cap = c->a->used + (size_t)budget;
	size_t n_src = 1 + q->n_joins;
	source *srcs = floe_arena_calloc(c->a, n_src, sizeof(source));
	floe_strmap need;
	floe_strmap_init(&need);
	floe_buf where;
	floe_buf_init(&where, 1 << 20);
	floe_hmap groups, dist;
	floe_hmap_init(&groups);
	floe_hmap_init(&dist);
	agg_state *st = NULL;
	size_t n_groups = 0, st_cap = 0;
	int rc = 0;
	if (!srcs) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	bool no_from = !q->from.n && !q->from_sub; /* SELECT 1 + 1, a VALUES row: one empty row */
	/* what to read */
	bool star = false;
	for (size_t i = 0; i < q->n_items; i++)
		collect_cols(q->items[i], &need, &star);
	collect_cols(q->where, &need, &star);
	collect_cols(q->having, &need, &star);
	for (size_t i = 0; i < q->n_group_by; i++)
		collect_cols(q->group_by[i], &need, &star);
	for (size_t i = 0; i < q->n_order_by; i++)
		collect_cols(q->order_by[i].expr, &need, &star);
	for (size_t i = 0; i < q->n_joins; i++) {
		collect_cols(q->joins[i].on, &need, &star);
		collect_cols(q->joins[i].unnest, &need, &star);
	}
	srcs[0].name = &q->from;
	srcs[0].alias = q->from_alias;
	srcs[0].hints = q->hints;
	srcs[0].n_hints = q->n_hints;
	srcs[0].sub = q->from_sub;
	srcs[0].col_names = q->from_cols;
	srcs[0].n_col_names = q->n_from_cols;
	for (size_t i = 0; i < q->n_joins; i++) {
		srcs[i + 1].name = &q->joins[i].table;
		srcs[i + 1].alias = q->joins[i].alias;
		srcs[i + 1].hints = q->joins[i].hints;
		srcs[i + 1].n_hints = q->joins[i].n_hints;
		srcs[i + 1].sub = q->joins[i].sub;
		if (q->joins[i].sub) {
			srcs[i + 1].col_names = q->joins[i].col_names;
			srcs[i + 1].n_col_names = q->joins[i].n_col_names;
		}
	}
	if (!q->n_joins && !q->from_sub && !no_from)
		pushdown(x, q->where, &where);
	for (size_t i = no_from ? 1 : 0; i < n_src; i++)
		if ((i == 0 || !q->joins[i - 1].unnest) &&
		    (rc = open_source(x, &srcs[i], i == 0 && where.len ? floe_buf_cstr(&where) : NULL,
				      &need, star)))
			goto done;
	/* the input relation: one table read batch by batch, or the joined tables */
	vrel joined, *in = &srcs[0].schema;
	if (no_from) {
		if ((rc = rel_init(x, &joined, 0)))
			goto done;
		joined.n = 1;
		in = &joined;
	} else if (q->n_joins || q->from_sub) {
		if ((rc = read_all(x, &srcs[0], &joined)))
			goto done;
		for (size_t i = 0; i < q->n_joins; i++) {
			vrel right, res;
			if (q->joins[i].unnest)
				rc = unnest_join(x, &q->joins[i], &joined, &res);
			else if (!(rc = read_all(x, &srcs[i + 1], &right)))
				rc = join(x, &q->joins[i], &joined, &right, &res);
			if (rc)
				goto done;
			joined = res;
		}
		in = &joined;
	}
	x->in = in;
	x->rows_in = in;
	/* bind */
	bool grouped = q->n_group_by > 0 || q->having;
	for (size_t i = 0; i < q->n_items && !grouped; i++)
		grouped = has_agg(q->items[i]);
	for (size_t i = 0; i < q->n_order_by && !grouped; i++)
		grouped = has_agg(q->order_by[i].expr);
	if (q->where && has_agg(q->where)) {
		rc = sql_err(c, FLOE_EINVAL, q->where->off, "aggregates are not allowed in WHERE (use HAVING)");
		goto done;
	}
	xn *where_x = NULL;
	if (q->where && ((rc = bind(x, q->where, &where_x)) || (rc = need_bool(x, where_x, "WHERE"))))
		goto done;
	/* expand * into columns */
	size_t n_items = 0;
	const sql_expr **items = floe_arena_calloc(c->a, q->n_items + in->n_cols + 1, sizeof(void *));
	const char **heads = floe_arena_calloc(c->a, q->n_items + in->n_cols + 1, sizeof(char *));
	int *star_col = floe_arena_calloc(c->a, q->n_items + in->n_cols + 1, sizeof(int));
	if (!items || !heads || !star_col) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	for (size_t i = 0; i < q->n_items; i++) {
		const sql_expr *e = q->items[i];
		if (e->kind == SQL_E_STAR) {
			if (grouped) {
				rc = sql_err(c, FLOE_EINVAL, e->off, "'*' in a grouped query");
				goto done;
			}
			const char *qual = e->name.n ? e->name.parts[e->name.n - 1] : NULL;
			size_t before = n_items;
			for (size_t k = 0; k < in->n_cols; k++) {
				if (qual && (!in->quals[k] || strcmp(in->quals[k], qual)))
					continue;
				if (is_field_col(in, k))
					continue; /* a struct field read for an expression */
				items[n_items] = NULL;
				star_col[n_items] = (int)k;
				heads[n_items++] = in->names[k];
			}
			if (qual && n_items == before) {
				rc = sql_err(c, FLOE_EINVAL, e->off, "no table '%s' in FROM", qual);
				goto done;
			}
			continue;
		}
		items[n_items] = e;
		star_col[n_items] = -1;
		heads[n_items++] = item_name(x, q, i);
	}
	/* group keys: expressions (a SELECT alias or position names an item) */
	sql_expr **keys = floe_arena_calloc(c->a, q->n_group_by + q->n_items + 1, sizeof(sql_expr *));
	size_t n_keys = 0;
	if (!keys) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	for (size_t i = 0; i < q->n_group_by; i++) {
		sql_expr *g = q->group_by[i];
		int it = -1;
		int col = -1;
		if (g->kind == SQL_E_COL && (rc = find_col(x, g, &col)))
			goto done;
		if (col < 0)
			it = order_item(q, g);
		if (it >= 0 && q->items[it]->kind != SQL_E_STAR)
			g = q->items[it];
		if (has_agg(g)) {
			rc = sql_err(c, FLOE_EINVAL, g->off, "aggregates are not allowed in GROUP BY");
			goto done;
		}
		keys[n_keys++] = g;
	}
	bool distinct_groups = q->distinct && !grouped;
	if (distinct_groups) {
		/* SELECT DISTINCT a, b = GROUP BY a, b */
		for (size_t i = 0; i < n_items; i++) {
			if (!items[i]) {
				rc = sql_err(c, FLOE_EUNSUPPORTED, q->off, "SELECT DISTINCT * is not supported yet");
				goto done;
			}
			keys[n_keys++] = (sql_expr *)items[i];
		}
		grouped = true;
	}
	xn **kx = floe_arena_calloc(c->a, n_keys + 1, sizeof(xn *));
	if (!kx) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	for (size_t i = 0; i < n_keys; i++)
		if ((rc = bind(x, keys[i], &kx[i])))
			goto done;
	vrel gschema; /* the grouped relation: keys, then aggregates */
	if (grouped) {
		if ((rc = rel_init(x, &gschema, n_keys + MAX_AGGS)))
			goto done;
		for (size_t i = 0; i < n_keys; i++) {
			gschema.types[i] = kx[i]->t;
			gschema.names[i] = "";
		}
		x->keys = keys;
		x->n_keys = n_keys;
		x->grouped = true;
		x->in = &gschema;
	}
	/* items, HAVING, ORDER BY keys: bound on the input or the groups */
	bool ord_all = q->n_order_by == 1 && q->order_by[0].all;
	size_t n_ord = ord_all ? n_items : q->n_order_by;
	const sql_order *ords = q->order_by;
	xn **ix = floe_arena_calloc(c->a, n_items + n_ord + 1, sizeof(xn *));
	if (!ix) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	if (ord_all) {
		/* ORDER BY ALL: every output column, left to right, the one direction */
		sql_order *all = floe_arena_calloc(c->a, n_ord + 1, sizeof(*all));
		if (!all) {
			rc = floe_error_oom(c->err);
			goto done;
		}
		for (size_t k = 0; k < n_ord; k++)
			all[k] = q->order_by[0];
		ords = all;
	}
	for (size_t i = 0; i < n_items; i++) {
		if (!items[i]) {
			NEW(ix[i], X_COL, in->types[star_col[i]], q->off, 0);
			ix[i]->col = star_col[i];
			continue;
		}
		if ((rc = bind(x, items[i], &ix[i])))
			goto done;
	}
	xn *having_x = NULL;
	if (q->having && ((rc = bind(x, q->having, &having_x)) || (rc = need_bool(x, having_x, "HAVING"))))
		goto done;
	for (size_t k = 0; k < n_ord; k++) {
		if (ord_all) {
			ix[n_items + k] = ix[k];
			continue;
		}
		const sql_expr *e = q->order_by[k].expr;
		int it = order_item(q, e);
		if (it == -2) {
			rc = sql_err(c, FLOE_EINVAL, e->off, "ORDER BY position %s is not in the SELECT list", e->text);
			goto done;
		}
		if (it >= 0) {
			/* the item's position among the expanded ones */
			size_t pos = 0;
			for (int i = 0; i < it; i++)
				pos += q->items[i]->kind == SQL_E_STAR ? 0 : 1;
			if (q->items[it]->kind == SQL_E_STAR) {
				rc = sql_err(c, FLOE_EINVAL, e->off, "ORDER BY names '*'");
				goto done;
			}
			ix[n_items + k] = ix[pos + (n_items - q->n_items + 0 > 0 ? 0 : 0)];
			/* with * expanded, positions shift: find the item whose source is it */
			for (size_t i = 0; i < n_items; i++)
				if (items[i] == q->items[it])
					ix[n_items + k] = ix[i];
			continue;
		}
		if (distinct_groups) {
			rc = sql_err(c, FLOE_EINVAL, e->off, "with SELECT DISTINCT, ORDER BY takes items of the SELECT list");
			goto done;
		}
		if ((rc = bind(x, e, &ix[n_items + k])))
			goto done;
	}
	if (grouped) {
		for (size_t a = 0; a < x->n_aggs; a++)
			gschema.types[n_keys + a] = x->aggs[a].t;
		gschema.n_cols = n_keys + x->n_aggs;
	}
	/* run: the input batch by batch (or the joined relation at once) */
	vrel res; /* items then order keys, per output row */
	if ((rc = rel_init(x, &res, n_items + n_ord)))
		goto done;
	for (size_t i = 0; i < n_items + n_ord; i++)
		res.types[i] = ix[i]->t;
	vrel b = *in;
	bool in_memory = q->n_joins || q->from_sub || no_from; /* else the scan, batch by batch */
	if (!in_memory && !(b.cols = floe_arena_calloc(c->a, in->n_cols + 1, sizeof(sv *)))) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	floe_buf kb;
	floe_buf_init(&kb, 0);
	for (bool first = true;; first = false) {
		struct ArrowArray arr;
		bool have = false;
		if (in_memory) {
			if (!first)
				break;
		} else {
			bool eof;
			if ((rc = floe_scan_next(srcs[0].scan, &arr, &eof, c->err)))
				break;
			if (eof)
				break;
			have = true;
			if ((rc = batch_cols(x, srcs[0].scan, &arr, &b))) {
				arr.release(&arr);
				break;
			}
		}
		x->in = in;
		/* WHERE */
		bool *keep = floe_arena_alloc(x->ba, (b.n ? b.n : 1) * sizeof(bool));
		if (!keep) {
			rc = floe_error_oom(c->err);
			goto batch_done;
		}
		sv *w = NULL;
		if (where_x && (rc = eval(x, where_x, &b, &w)))
			goto batch_done;
		for (size_t i = 0; i < b.n; i++)
			keep[i] = !w || (!w[i].null && w[i].u.i);
		if (grouped) {
			sv **kv = floe_arena_calloc(x->ba, n_keys + 1, sizeof(sv *));
			sv **av = floe_arena_calloc(x->ba, x->n_aggs + 1, sizeof(sv *));
			size_t *gid = floe_arena_alloc(x->ba, (b.n ? b.n : 1) * sizeof(size_t));
			if (!kv || !av || !gid) {
				rc = floe_error_oom(c->err);
				goto batch_done;
			}
			x->grouped = false;
			for (size_t k = 0; k < n_keys && !rc; k++)
				rc = eval(x, kx[k], &b, &kv[k]);
			for (size_t a = 0; a < x->n_aggs && !rc; a++)
				if (x->aggs[a].arg)
					rc = eval(x, x->aggs[a].arg, &b, &av[a]);
			x->grouped = true;
			if (rc)
				goto batch_done;
			for (size_t i = 0; i < b.n; i++) {
				if (!keep[i])
					continue;
				floe_buf_clear(&kb);
				for (size_t k = 0; k < n_keys; k++)
					if (sv_key(&kb, kx[k]->t, &kv[k][i])) {
						rc = floe_error_oom(c->err);
						goto batch_done;
					}
				uint64_t *slot;
				bool existed;
				if (floe_hmap_upsert(&groups, kb.len ? kb.data : (const void *)"", kb.len, &slot, &existed)) {
					rc = floe_error_oom(c->err);
					goto batch_done;
				}
				if (!existed) {
					*slot = n_groups;
					if (n_groups == st_cap) {
						size_t cap2 = st_cap ? st_cap * 2 : 64;
						agg_state *s2 = floe_realloc(st, cap2 * (x->n_aggs ? x->n_aggs : 1) * sizeof(agg_state));
						if (!s2) {
							rc = floe_error_oom(c->err);
							goto batch_done;
						}
						memset(s2 + st_cap * x->n_aggs, 0, (cap2 - st_cap) * x->n_aggs * sizeof(agg_state));
						st = s2;
						st_cap = cap2;
					}
					gschema.n_cols = n_keys;
					if ((rc = rel_push(x, &gschema, kv, i)))
						goto batch_done;
					gschema.n_cols = n_keys + x->n_aggs;
					n_groups++;
				}
				gid[i] = *slot;
			}
			rc = agg_update(x, st, gid, keep, av, b.n, &dist);
		} else {
			sv **ov = floe_arena_calloc(x->ba, n_items + n_ord + 1, sizeof(sv *));
			if (!ov) {
				rc = floe_error_oom(c->err);
				goto batch_done;
			}
			for (size_t i = 0; i < n_items + n_ord && !rc; i++)
				rc = eval(x, ix[i], &b, &ov[i]);
			for (size_t i = 0; i < b.n && !rc; i++)
				if (keep[i])
					rc = rel_push(x, &res, ov, i);
		}
	batch_done:
		floe_arena_reset(x->ba);
		if (have)
			arr.release(&arr);
		if (!rc && query_bytes(c->a, base, &groups, &dist, st_cap * x->n_aggs) > budget)
			rc = FLOE_ENOMEM;
		if (rc)
			break;
		/* without ORDER BY, a LIMIT stops the reading early */
		if (!grouped && !n_ord && q->limit >= 0 && res.n >= (size_t)(q->limit + q->offset))
			break;
	}
	floe_buf_reset(&kb);
	if (rc)
		goto done;
	if (grouped) {
		/* no GROUP BY: one group even over no rows */
		if (!n_groups && !q->n_group_by && !distinct_groups) {
			st = floe_calloc(x->n_aggs ? x->n_aggs : 1, sizeof(agg_state));
			if (!st) {
				rc = floe_error_oom(c->err);
				goto done;
			}
			gschema.n_cols = n_keys;
			if ((rc = rel_push(x, &gschema, NULL, 0)))
				goto done;
			gschema.n_cols = n_keys + x->n_aggs;
			n_groups = 1;
		}
		for (size_t a = 0; a < x->n_aggs; a++) {
			sv *col = floe_arena_calloc(c->a, n_groups + 1, sizeof(sv));
			if (!col) {
				rc = floe_error_oom(c->err);
				goto done;
			}
			for (size_t g = 0; g < n_groups; g++)
				agg_final(&x->aggs[a], &st[g * x->n_aggs + a], &col[g]);
			gschema.cols[n_keys + a] = col;
		}
		gschema.n = n_groups;
		x->in = &gschema;
		sv *h = NULL;
		if (having_x && (rc = eval(x, having_x, &gschema, &h)))
			goto done;
		sv **ov = floe_arena_calloc(c->a, n_items + n_ord + 1, sizeof(sv *));
		if (!ov) {
			rc = floe_error_oom(c->err);
			goto done;
		}
		for (size_t i = 0; i < n_items + n_ord && !rc; i++)
			rc = eval(x, ix[i], &gschema, &ov[i]);
		for (size_t g = 0; g < n_groups && !rc; g++)
			if (!h || (!h[g].null && h[g].u.i))
				rc = rel_push(x, &res, ov, g);
		floe_arena_reset(x->ba);
		if (rc)
			goto done;
	}
	/* ORDER BY, OFFSET, LIMIT */
	size_t *order = floe_arena_alloc(c->a, (res.n + 1) * sizeof(size_t));
	size_t *tmp = floe_arena_alloc(c->a, (res.n + 1) * sizeof(size_t));
	if (!order || !tmp) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	for (size_t i = 0; i < res.n; i++)
		order[i] = i;
	if (n_ord) {
		sort_ctx sc = {&res, n_items, n_ord, ords};
		msort(&sc, order, tmp, res.n);
	}
	size_t from = (size_t)q->offset < res.n ? (size_t)q->offset : res.n;
	size_t to = res.n;
	if (q->limit >= 0 && from + (size_t)q->limit < to)
		to = from + (size_t)q->limit;
	if ((rc = rel_init(x, out, n_items)))
		goto done;
	for (size_t i = 0; i < n_items; i++) {
		/* (a column's name may belong to the scan, freed below) */
		if (!(out->names[i] = floe_arena_strdup(c->a, heads[i] ? heads[i] : ""))) {
			rc = floe_error_oom(c->err);
			goto done;
		}
		out->types[i] = res.types[i];
		if (!(out->cols[i] = floe_arena_alloc(c->a, (to - from + 1) * sizeof(sv)))) {
			rc = floe_error_oom(c->err);
			goto done;
		}
		for (size_t r = from; r < to; r++)
			out->cols[i][r - from] = res.cols[i][order[r]];
	}
	out->n = out->cap = to - from;
done:
	/* out of memory with the budget spent (the arena's cap, or the count): say so */
	if (rc == FLOE_ENOMEM &&
	    (c->a->used + ((size_t)1 << 20) > c->a->cap ||
	     query_bytes(c->a, base, &groups, &dist, st_cap * x->n_aggs) > budget))
		rc = sql_budget_err(c, q, budget);
	c->a->cap = old_cap;
	for (size_t i = 0; srcs && i < n_src; i++) {
		floe_scan_free(srcs[i].scan);
		floe_table_free(srcs[i].t);
	}
	for (size_t i = 0; i < x->n_res; i++)
		regfree(x->res[i]);
	floe_free(st);
	floe_hmap_reset(&groups);
	floe_hmap_reset(&dist);
	floe_strmap_reset(&need);
	floe_buf_reset(&where);
	floe_arena_reset(&batch_arena);
	return rc;
}

/* the row key of rel row r (NULLs equal, as set operations compare) */
static int row_key(const vrel *rel, size_t r, floe_buf *kb)
{
	floe_buf_clear(kb);
	for (size_t i = 0; i < rel->n_cols; i++) {
		const sv *v = &rel->cols[i][r];
		if (floe_buf_putc(kb, v->null ? 0 : 1) || (!v->null && sv_key(kb, rel->types[i], v)))
			return FLOE_ENOMEM;
	}
	return 0;
}

/* acc holds the left rows [0, n_left) then the right ones: keep what the
 * set operation op ('U', 'E', 'I') gives, distinct unless all (then
 * counted: EXCEPT ALL removes one left row per right row, INTERSECT ALL
 * keeps the smaller count), in the left rows' order */
static int set_rows(vx *x, vrel *acc, size_t n_left, char op, bool all, floe_hmap *seen, floe_buf *kb)
{
	int rc = 0;
	vrel d;
	if ((rc = rel_init(x, &d, acc->n_cols)))
		return rc;
	memcpy(d.names, acc->names, acc->n_cols * sizeof(char *));
	memcpy(d.types, acc->types, acc->n_cols * sizeof(vty));
	floe_hmap_reset(seen);
	floe_hmap_init(seen);
	/* the right side's count per key (EXCEPT, INTERSECT) */
	for (size_t r = n_left; op != 'U' && r < acc->n; r++) {
		uint64_t *slot;
		bool existed;
		if (row_key(acc, r, kb) || floe_hmap_upsert(seen, kb->data, kb->len, &slot, &existed))
			return floe_error_oom(x->c->err);
		*slot = existed ? *slot + 1 : 1;
	}
	floe_hmap emitted;
	floe_hmap_init(&emitted);
	size_t end = op == 'U' ? acc->n : n_left;
	for (size_t r = 0; !rc && r < end; r++) {
		uint64_t *done;
		uint64_t right = 0;
		bool existed;
		if (row_key(acc, r, kb)) {
			rc = floe_error_oom(x->c->err);
			break;
		}
		if (op != 'U') {
			uint64_t v;
			right = floe_hmap_get(seen, kb->data, kb->len, &v) ? v : 0;
		}
		if (floe_hmap_upsert(&emitted, kb->data, kb->len, &done, &existed)) {
			rc = floe_error_oom(x->c->err);
			break;
		}
		uint64_t nth = existed ? *done + 1 : 1; /* this key's occurrence on the left */
		*done = nth;
		bool keep;
		if (op == 'U')
			keep = nth == 1;
		else if (op == 'E')
			keep = all ? nth > right : (nth == 1 && right == 0);
		else
			keep = all ? nth <= right : (nth == 1 && right > 0);
		if (keep)
			rc = rel_push(x, &d, acc->cols, r);
	}
	floe_hmap_reset(&emitted);
	*acc = d;
	return rc;
}

/* the rows of a union: branch after branch (UNION without ALL: distinct rows) */
static int union_rel(sql_ctx *c, const sql_select *q, vx *x, vrel *out)
{
	int rc = select_rel(c, q, out);
	floe_hmap seen;
	floe_hmap_init(&seen);
	floe_buf kb;
	floe_buf_init(&kb, 0);
	for (const sql_select *b = q; !rc && b->union_next; b = b->union_next) {
		vrel next;
		if ((rc = select_rel(c, b->union_next, &next)))
			break;
		if (next.n_cols != out->n_cols) {
			rc = sql_err(c, FLOE_EINVAL, b->union_next->off,
				     "the branches of a UNION have %zu and %zu columns", out->n_cols,
				     next.n_cols);
			break;
		}
		vrel acc;
		if ((rc = rel_init(x, &acc, out->n_cols)))
			break;
		for (size_t i = 0; !rc && i < out->n_cols; i++) {
			acc.names[i] = out->names[i];
			rc = common(x, b->union_next->off, out->types[i], next.types[i], &acc.types[i]);
		}
		/* both sides in the common types, then the rows of each */
		for (int side = 0; !rc && side < 2; side++) {
			const vrel *from = side ? &next : out;
			sv **row = floe_arena_calloc(c->a, acc.n_cols + 1, sizeof(sv *));
			if (!row) {
				rc = floe_error_oom(c->err);
				break;
			}
			for (size_t i = 0; !rc && i < acc.n_cols; i++) {
				if (!(row[i] = floe_arena_alloc(c->a, (from->n + 1) * sizeof(sv))))
					rc = floe_error_oom(c->err);
				for (size_t r = 0; !rc && r < from->n; r++)
					if (!cast1(c->a, from->types[i], acc.types[i], &from->cols[i][r],
						   &row[i][r]))
						rc = sql_err(c, FLOE_EINVAL, b->union_next->off,
							     "UNION: column %zu (%s) does not convert to %s",
							     i + 1, acc.names[i], vt_name(acc.types[i]));
			}
			for (size_t r = 0; !rc && r < from->n; r++)
				rc = rel_push(x, &acc, row, r);
		}
		if (!rc && (!b->union_all || b->set_op != 'U'))
			rc = set_rows(x, &acc, out->n, b->set_op, b->union_all, &seen, &kb);
		*out = acc;
	}
	floe_hmap_reset(&seen);
	floe_buf_reset(&kb);
	return rc;
}

/* ORDER BY output columns (names or positions), OFFSET, LIMIT of a union */
static int union_tail(sql_ctx *c, const sql_select *q, vx *x, vrel *rel)
{
	int rc;
	size_t nk = q->n_u_order_by, n = rel->n_cols;
	if (!nk && !q->u_offset && q->u_limit < 0)
		return 0;
	bool ord_all = nk == 1 && q->u_order_by[0].all;
	const sql_order *ords = q->u_order_by;
	if (ord_all) {
		sql_order *all = floe_arena_calloc(c->a, n + 1, sizeof(*all));
		if (!all)
			return floe_error_oom(c->err);
		for (size_t j = 0; j < n; j++)
			all[j] = q->u_order_by[0];
		ords = all;
		nk = n;
	}
	vrel k;
	if ((rc = rel_init(x, &k, n + nk)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		k.names[i] = rel->names[i];
		k.types[i] = rel->types[i];
		k.cols[i] = rel->cols[i];
	}
	for (size_t j = 0; j < nk; j++) {
		const sql_expr *e = ords[j].expr;
		int col = ord_all ? (int)j : -1;
		int64_t pos;
		if (!ord_all && e->kind == SQL_E_NUM && floe_parse_i64(e->text, strlen(e->text), &pos) && pos >= 1 &&
		    (size_t)pos <= n)
			col = (int)(pos - 1);
		for (size_t i = 0; col < 0 && !ord_all && e->kind == SQL_E_COL && e->name.n == 1 && i < n; i++)
			if (rel->names[i] && !strcasecmp(rel->names[i], e->name.parts[0]))
				col = (int)i;
		if (col < 0)
			return sql_err(c, FLOE_EINVAL, e->off,
				       "ORDER BY of a UNION names an output column (by name or position)");
		k.names[n + j] = rel->names[col];
		k.types[n + j] = rel->types[col];
		k.cols[n + j] = rel->cols[col];
	}
	k.n = rel->n;
	size_t *order = floe_arena_alloc(c->a, (k.n + 1) * sizeof(size_t));
	size_t *tmp = floe_arena_alloc(c->a, (k.n + 1) * sizeof(size_t));
	if (!order || !tmp)
		return floe_error_oom(c->err);
	for (size_t i = 0; i < k.n; i++)
		order[i] = i;
	if (nk) {
		sort_ctx sc = {&k, n, nk, ords};
		msort(&sc, order, tmp, k.n);
	}
	size_t from = (size_t)q->u_offset < k.n ? (size_t)q->u_offset : k.n, to = k.n;
	if (q->u_limit >= 0 && from + (size_t)q->u_limit < to)
		to = from + (size_t)q->u_limit;
	for (size_t i = 0; i < n; i++) {
		sv *col = floe_arena_alloc(c->a, (to - from + 1) * sizeof(sv));
		if (!col)
			return floe_error_oom(c->err);
		for (size_t r = from; r < to; r++)
			col[r - from] = rel->cols[i][order[r]];
		rel->cols[i] = col;
	}
	rel->n = rel->cap = to - from;
	return 0;
}

/* a SELECT or a UNION of them */
static int query_rel(sql_ctx *c, const sql_select *q, vrel *out)
{
	if (!q->union_next)
		return select_rel(c, q, out);
	vx xs, *x = &xs;
	memset(x, 0, sizeof(*x));
	x->c = c;
	x->a = c->a;
	x->q = q;
	int rc = union_rel(c, q, x, out);
	return rc ? rc : union_tail(c, q, x, out);
}

/* ---- streaming SELECT: rows as commits arrive ---------------------------------------- */

/* per output column, its JSON form (sql_rows.kinds) */
static const char *out_kinds(sql_ctx *c, const vrel *res)
{
	char *kinds = floe_arena_calloc(c->a, res->n_cols + 1, 1);
	for (size_t i = 0; kinds && i < res->n_cols; i++) {
		vt k = res->types[i].k;
		kinds[i] = k == VT_BOOL				       ? 'b'
			   : k == VT_INT || k == VT_DOUBLE || k == VT_DEC ? 'n'
			   : k == VT_TEXT && res->types[i].p != 1	       ? 'j'
									       : 's';
	}
	return kinds;
}

/* rows [from, from + n) of res as printable rows named names (NULL: res's) */
static int rel_rows(sql_ctx *c, const vrel *res, size_t from, size_t n, const char *const *names,
		    sql_rows *out)
{
	const char **cells = floe_arena_calloc(c->a, res->n_cols + 1, sizeof(char *));
	if (!cells || sql_rows_init(out, c->a, names ? names : res->names, res->n_cols) ||
	    !(out->kinds = out_kinds(c, res)))
		return floe_error_oom(c->err);
	for (size_t r = from; r < from + n; r++) {
		for (size_t i = 0; i < res->n_cols; i++)
			cells[i] = sv_text(c->a, res->types[i], &res->cols[i][r]);
		if (sql_rows_add(out, cells))
			return floe_error_oom(c->err);
	}
	return FLOE_OK;
}

static const char *hint_of(const sql_select *q, const char *key)
{
	for (size_t i = 0; i < q->n_hints; i++)
		if (!strcmp(q->hints[i].key, key))
			return q->hints[i].value;
	return NULL;
}

/* rc's message, at off */
static int stream_err(sql_ctx *c, int rc, uint32_t off)
{
	char inner[FLOE_ERROR_MSG_MAX];
	snprintf(inner, sizeof(inner), "%s", c->err && c->err->msg[0] ? c->err->msg : "failed");
	return sql_err(c, rc == FLOE_ENOTFOUND ? FLOE_EINVAL : rc, off, "%s", inner);
}

/* the table a streaming SELECT polls (its catalog's or its path's) */
static int stream_table(sql_ctx *c, const sql_select *q, floe_table **out)
{
	const floe_sql_opts *o = &c->s->opts;
	*out = NULL;
	if (q->from.func)
		return sql_err(c, FLOE_EUNSUPPORTED, q->from.off, "a streaming SELECT reads a table, not %s",
			       q->from.func);
	if (q->from.path) {
		const char *path = q->from.parts[0];
		if (path[0] != '/' && !strstr(path, "://") && o->base_dir &&
		    !(path = floe_arena_sprintf(c->a, "%s/%s", o->base_dir, path)))
			return floe_error_oom(c->err);
		int rc = floe_table_open_path(out, path, o->path_map, o->n_path_map, c->err);
		return rc ? stream_err(c, rc, q->from.off) : FLOE_OK;
	}
	sql_ref r;
	int rc = sql_resolve(c, &q->from, &r);
	if (!rc && r.meta)
		return sql_err(c, FLOE_EUNSUPPORTED, q->from.off, "a streaming SELECT reads a table, not $%s",
			       r.meta);
	if (!rc)
		rc = sql_need_catalog(c, r.cat, q->from.off);
	if (!rc && (rc = floe_table_load(out, r.cat->cat, r.db, r.table, c->err)))
		rc = stream_err(c, rc, q->from.off);
	return rc;
}

/* Flink's streaming tableau: a header once, then "+I" rows as they come */
static int stream_print(sql_ctx *c, const vrel *res, size_t from, size_t n, bool *header, size_t *w)
{
	floe_buf b;
	int rc = 0;
	floe_buf_init(&b, 0);
	if (c->s->opts.format != FLOE_SQL_TABLEAU) {
		/* json: the rows; csv: the header once, then each poll's rows */
		sql_rows rows;
		if ((rc = rel_rows(c, res, from, n, NULL, &rows)))
			return rc;
		rc = c->s->opts.format == FLOE_SQL_CSV ? sql_rows_csv(&b, &rows, !*header) : sql_rows_json(&b, &rows);
		if (rc)
			rc = floe_error_oom(c->err);
		*header = true;
		if (!rc && b.len)
			rc = sql_out(c->s, floe_buf_cstr(&b), b.len);
		floe_buf_reset(&b);
		return rc;
	}
#define PUT(x) \
	do { \
		if (!rc) \
			rc = (x); \
	} while (0)
	if (!*header) {
		*header = true;
		w[0] = 2;
		for (size_t i = 0; i < res->n_cols; i++) {
			w[i + 1] = strlen(res->names[i]) > 20 ? strlen(res->names[i]) : 20;
		}
		for (int line = 0; line < 3; line++) {
			for (size_t i = 0; i <= res->n_cols; i++) {
				if (line == 1) {
					const char *v = i ? res->names[i - 1] : "op";
					PUT(floe_buf_printf(&b, "| %*s ", (int)w[i], v));
				} else {
					PUT(floe_buf_putc(&b, '+'));
					for (size_t k = 0; k < w[i] + 2; k++)
						PUT(floe_buf_putc(&b, '-'));
				}
			}
			PUT(floe_buf_puts(&b, line == 1 ? "|\n" : "+\n"));
		}
	}
	for (size_t r = from; r < from + n; r++) {
		PUT(floe_buf_printf(&b, "| %*s ", (int)w[0], "+I"));
		for (size_t i = 0; i < res->n_cols; i++) {
			const char *v = sv_text(c->a, res->types[i], &res->cols[i][r]);
			PUT(floe_buf_printf(&b, "| %*s ", (int)w[i + 1], v ? v : "<NULL>"));
		}
		PUT(floe_buf_puts(&b, "|\n"));
	}
#undef PUT
	if (!rc && b.len)
		rc = sql_out(c->s, floe_buf_cstr(&b), b.len);
	floe_buf_reset(&b);
	return rc ? FLOE_ENOMEM : FLOE_OK;
}

/*
 * SELECT ... FROM t with the hint OPTIONS('streaming'='true', ...) [WHERE ...] [LIMIT n]:
 * Flink's streaming read of an Iceberg table. Per starting-strategy (Flink's
 * names; TABLE_SCAN_THEN_INCREMENTAL by default) the table as it is, then
 * every monitor-interval (60 s by default, as Flink's) the rows of the
 * snapshots appended since, printed as they come, until LIMIT rows were
 * printed or the session is stopped (Ctrl-C). An overwrite or delete
 * snapshot stops it with an error unless streaming-skip-*-snapshots says
 * to skip them.
 */
static int stream_select(sql_ctx *c, const sql_select *q)
{
	int64_t interval = 60000;
	const char *v;
	if ((v = hint_of(q, "monitor-interval")) && (!floe_parse_duration_ms(v, &interval) || interval <= 0))
		return sql_err(c, FLOE_EINVAL, q->from.off, "monitor-interval '%s' is not a duration ('10s', '1 min')",
			       v);
	if (q->union_next || q->has_join || q->n_group_by || q->group_all || q->having || q->n_order_by ||
	    q->distinct || q->offset || q->from_sub)
		return sql_err(c, FLOE_EUNSUPPORTED, q->off,
			       "a streaming SELECT takes a projection, a WHERE and a LIMIT (joins, "
			       "aggregates, ORDER BY, DISTINCT and OFFSET over a stream are not supported "
			       "yet)");
	for (size_t i = 0; i < q->n_items; i++)
		if (has_agg(q->items[i]))
			return sql_err(c, FLOE_EUNSUPPORTED, q->items[i]->off,
				       "aggregates over a stream are not supported yet");
	const char *strategy = hint_of(q, "starting-strategy");
	const char *sid = hint_of(q, "start-snapshot-id"), *sts = hint_of(q, "start-snapshot-timestamp");
	if (!strategy)
		strategy = sid ? "INCREMENTAL_FROM_SNAPSHOT_ID"
			   : sts ? "INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP"
				 : "TABLE_SCAN_THEN_INCREMENTAL";
	bool skip = ((v = hint_of(q, "streaming-skip-overwrite-snapshots")) && !strcasecmp(v, "true")) ||
		    ((v = hint_of(q, "streaming-skip-delete-snapshots")) && !strcasecmp(v, "true"));
	const char *branch = hint_of(q, "branch");
	floe_table *t = NULL;
	int rc = stream_table(c, q, &t);
	if (rc)
		return rc;
	const floe_metadata *m = floe_table_metadata(t);
	const floe_snapshot *head = branch ? floe_metadata_branch_head(m, branch) : floe_metadata_current_snapshot(m);
	int64_t last = head ? head->snapshot_id : -1;
	bool table_scan = !strcasecmp(strategy, "TABLE_SCAN_THEN_INCREMENTAL");
	if (!strcasecmp(strategy, "INCREMENTAL_FROM_EARLIEST_SNAPSHOT")) {
		last = -1;
	} else if (!strcasecmp(strategy, "INCREMENTAL_FROM_SNAPSHOT_ID") ||
		   !strcasecmp(strategy, "INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP")) {
		bool by_id = !strcasecmp(strategy, "INCREMENTAL_FROM_SNAPSHOT_ID");
		int64_t x;
		const char *arg = by_id ? sid : sts;
		if (!arg || !floe_parse_i64(arg, strlen(arg), &x)) {
			rc = sql_err(c, FLOE_EINVAL, q->from.off, "%s needs '%s' (a number)", strategy,
				     by_id ? "start-snapshot-id" : "start-snapshot-timestamp");
			goto done;
		}
		/* the first snapshot read: that one, or the first at or after the time (ms) */
		const floe_snapshot *start = NULL;
		for (const floe_snapshot *sn = head; sn;
		     sn = sn->parent_id == FLOE_NO_SNAPSHOT ? NULL : floe_metadata_snapshot(m, sn->parent_id))
			if (by_id ? sn->snapshot_id == x : sn->timestamp_ms >= x)
				start = sn;
			else if (!by_id)
				break;
		if (by_id && !start) {
			rc = sql_err(c, FLOE_EINVAL, q->from.off,
				     "start-snapshot-id %lld is not a snapshot of the table's history", (long long)x);
			goto done;
		}
		last = !start ? (head ? head->snapshot_id : -1)
		       : start->parent_id == FLOE_NO_SNAPSHOT ? -1
							     : start->parent_id;
	} else if (strcasecmp(strategy, "INCREMENTAL_FROM_LATEST_SNAPSHOT") && !table_scan) {
		rc = sql_err(c, FLOE_EINVAL, q->from.off,
			     "starting-strategy '%s' (TABLE_SCAN_THEN_INCREMENTAL, "
			     "INCREMENTAL_FROM_LATEST_SNAPSHOT, INCREMENTAL_FROM_EARLIEST_SNAPSHOT, "
			     "INCREMENTAL_FROM_SNAPSHOT_ID, INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP)",
			     strategy);
		goto done;
	}
	size_t *w = floe_arena_calloc(c->a, q->n_items + 256, sizeof(size_t));
	if (!w) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	bool header = false;
	int64_t printed = 0;
	bool first = true;
	for (;;) {
		int64_t at = head ? head->snapshot_id : -1;
		if ((first && table_scan && at >= 0) || (at >= 0 && at != last)) {
			vrel res;
			floe_arena pa; /* one poll's: released after its rows are printed */
			floe_arena_init(&pa, 1 << 16);
			sql_ctx pc = *c;
			pc.a = &pa;
			pc.inc = !(first && table_scan);
			pc.inc_after = last;
			pc.inc_end = at;
			pc.inc_skip = skip;
			if ((rc = query_rel(&pc, q, &res))) {
				floe_arena_reset(&pa);
				goto done;
			}
			size_t n = res.n;
			if (q->limit >= 0 && (int64_t)n > q->limit - printed)
				n = (size_t)(q->limit - printed);
			if (res.n_cols + 1 > q->n_items + 256)
				rc = sql_err(c, FLOE_EUNSUPPORTED, q->off, "a streaming SELECT of more than %zu columns",
					     q->n_items + 255);
			if (!rc)
				rc = stream_print(&pc, &res, 0, n, &header, w);
			floe_arena_reset(&pa);
			if (rc)
				goto done;
			printed += (int64_t)n;
			last = at;
		}
		first = false;
		if (q->limit >= 0 && printed >= q->limit)
			break;
		/* wait, a tenth of a second at a time, for the next poll or a stop */
		for (int64_t waited = 0; waited < interval && !atomic_load(&c->s->stop_req); waited += 100) {
			struct timespec ts = {0, (long)((interval - waited < 100 ? interval - waited : 100) * 1000000L)};
			nanosleep(&ts, NULL);
		}
		if (atomic_load(&c->s->stop_req))
			break;
		if ((rc = floe_table_refresh(t, c->err))) {
			rc = stream_err(c, rc, q->from.off);
			goto done;
		}
		m = floe_table_metadata(t);
		head = branch ? floe_metadata_branch_head(m, branch) : floe_metadata_current_snapshot(m);
	}
	if (c->s->opts.format == FLOE_SQL_TABLEAU)
		rc = sql_outf(c->s, "Received a total of %lld row%s\n", (long long)printed, printed == 1 ? "" : "s");
done:
	floe_table_free(t);
	return rc;
}

static bool is_streaming(const sql_select *q)
{
	const char *v = hint_of(q, "streaming");
	return v && !strcasecmp(v, "true");
}

int sql_vec_select(sql_ctx *c, const sql_select *q)
{
	if (is_streaming(q))
		return stream_select(c, q);
	vrel res;
	int rc = query_rel(c, q, &res);
	if (rc)
		return rc;
	sql_rows rows;
	if ((rc = rel_rows(c, &res, 0, res.n, NULL, &rows)))
		return rc;
	return sql_rows_print(c->s, &rows);
}

int sql_vec_values(sql_ctx *c, sql_expr *const *rows, size_t n_rows, const char *const *names,
		   size_t n_names, floe_buf *out)
{
	/* one SELECT per row, UNION ALL of them: the rows' values take common types */
	sql_select *first = NULL, *prev = NULL;
	for (size_t r = 0; r < n_rows; r++) {
		const sql_expr *row = rows[r];
		if (row->n_args != n_names)
			return sql_err(c, FLOE_EINVAL, row->off, "a VALUES row of %zu values for %zu columns",
				       row->n_args, n_names);
		sql_select *q = floe_arena_calloc(c->a, 1, sizeof(*q));
		if (!q)
			return floe_error_oom(c->err);
		q->limit = q->u_limit = -1;
		q->off = row->off;
		q->items = row->args;
		q->n_items = row->n_args;
		const char **al = floe_arena_calloc(c->a, n_names + 1, sizeof(char *));
		if (!al)
			return floe_error_oom(c->err);
		memcpy(al, names, n_names * sizeof(char *));
		q->aliases = al;
		if (!first) {
			first = q;
		} else {
			prev->union_next = q;
			prev->union_all = true;
			prev->set_op = 'U';
		}
		prev = q;
	}
	if (!first)
		return FLOE_OK;
	vrel res;
	int rc = query_rel(c, first, &res);
	if (rc)
		return rc;
	sql_rows sr;
	if ((rc = rel_rows(c, &res, 0, res.n, names, &sr)))
		return rc;
	return sql_rows_json(out, &sr) ? floe_error_oom(c->err) : FLOE_OK;
}

/* ---- INSERT projections (sql_vec.h: sql_proj) -------------------------------------- */

struct sql_proj {
	stream_project hook;
	vx x;       /* bound against the input (statement arena) */
	sql_ctx c;  /* each call formats its errors in its own copy */
	vrel in;    /* the input's names, quals and types (no rows) */
	const floe_type *root; /* the table's */
	xn **items; /* per table field: its expression (NULL: NULL, or pass) */
	int *pass;  /* per table field: an input column copied as it is (-1: none) */
	bool *used; /* input columns the expressions or copies read */
	bool *evals; /* input columns the expressions read (made values per batch) */
	int *kid;   /* per input column: its index in the decoded struct (-1: not decoded) */
	xn *where;  /* the WHERE, when the projection evaluates it */
	const char **what; /* per table field: its name (dead letters) */
};

/* May a value of type from go into a column of type to (an assignment)? */
static bool assignable(vty from, vty to)
{
	if (from.k == VT_NULL || from.k == to.k)
		return true;
	if (is_num(from) && is_num(to))
		return true; /* checked per value: one that does not fit is a dead letter */
	if ((from.k == VT_TS || from.k == VT_TSTZ) && (to.k == VT_TS || to.k == VT_TSTZ))
		return true;
	return false;
}

static bool reads_nested(const xn *e, const vrel *in)
{
	if (e->op == X_COL && in->types[e->col].k == VT_TEXT)
		return true;
	for (size_t i = 0; i < e->n; i++)
		if (e->a[i] && reads_nested(e->a[i], in))
			return true;
	return false;
}

static void mark_used(const xn *e, bool *used)
{
	if (e->op == X_COL && e->col >= 0)
		used[e->col] = true;
	for (size_t i = 0; i < e->n; i++)
		if (e->a[i])
			mark_used(e->a[i], used);
}

static int proj_apply(void *ctx, stream_col *in, stream_col *out, stream_project_bad_fn bad,
		      void *payload, floe_error *err);

/* Mark the source columns e names. */
static void mark_names(const sql_expr *e, const vrel *in, bool *used)
{
	if (!e)
		return;
	if (e->kind == SQL_E_COL)
		for (size_t k = 0; k < in->n_cols; k++)
			if (!strcmp(in->names[k], e->name.parts[e->name.n - 1]))
				used[k] = true;
	for (size_t i = 0; i < e->n_args; i++)
		mark_names(e->args[i], in, used);
}

int sql_proj_new(sql_ctx *c, const sql_source *src, const sql_expr *const *items,
		 const int *star_col, const char *const *cols, size_t n, const sql_select *q,
		 bool with_where, const floe_schema *ts, sql_proj **out)
{
	const sql_expr *where = q->where;
	uint32_t off0 = q->off;
	const sql_stmt *d = src->def;
	sql_proj *pj = floe_arena_calloc(c->a, 1, sizeof(*pj));
	floe_type *it = floe_arena_calloc(c->a, 1, sizeof(*it));
	floe_field *fs = floe_arena_calloc(c->a, d->n_cols + 1, sizeof(*fs));
	const floe_type *root = ts->root;
	*out = NULL;
	if (!pj || !it || !fs)
		return floe_error_oom(c->err);
	pj->x.c = c;
	pj->x.a = c->a;
	if (rel_init(&pj->x, &pj->in, d->n_cols) ||
	    !(pj->items = floe_arena_calloc(c->a, root->n_fields + 1, sizeof(xn *))) ||
	    !(pj->pass = floe_arena_calloc(c->a, root->n_fields + 1, sizeof(int))) ||
	    !(pj->what = floe_arena_calloc(c->a, root->n_fields + 1, sizeof(char *))) ||
	    !(pj->used = floe_arena_calloc(c->a, d->n_cols + 1, sizeof(bool))))
		return floe_error_oom(c->err);
	vx *x = &pj->x;
	x->c = c;
	x->a = c->a;
	x->in = &pj->in;
	x->rows_in = &pj->in;
	/* the input: the source's columns, as records decode into them */
	int32_t next_id = 1;
	for (size_t i = 0; i < d->n_cols; i++)
		fs[i].id = next_id++;
	for (size_t i = 0; i < d->n_cols; i++) {
		const sql_column *col = &d->cols[i];
		sql_ctx sc = *c;
		sc.sc = src->script;
		if (col->expr)
			return sql_err(&sc, FLOE_EUNSUPPORTED, col->off,
				       "computed source column '%s' is not supported yet", col->name);
		int rc = sql_iceberg_type(&sc, col->type, &next_id, &fs[i].type);
		if (rc)
			return rc;
		fs[i].name = col->name;
		pj->in.names[i] = col->name;
		pj->in.quals[i] = q->from_alias ? q->from_alias : src->name;
		pj->in.types[i] = vty_of(fs[i].type, false);
	}
	it->id = FLOE_T_STRUCT;
	it->fields = fs;
	it->n_fields = d->n_cols;
	pj->root = root;
	for (size_t j = 0; j < root->n_fields; j++) {
		pj->pass[j] = -1;
		pj->what[j] = root->fields[j].name;
	}
	/* each item onto its column */
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < root->n_fields && strcmp(root->fields[j].name, cols[i]))
			j++;
		uint32_t off = items[i] ? items[i]->off : off0;
		if (j == root->n_fields)
			return sql_err(c, FLOE_EINVAL, off, "the table has no column '%s'", cols[i]);
		if (pj->items[j] || pj->pass[j] >= 0)
			return sql_err(c, FLOE_EINVAL, off, "column '%s' is written twice", cols[i]);
		const floe_field *tf = &root->fields[j];
		vty tt = vty_of(tf->type, false);
		int k = star_col[i];
		if (items[i] && items[i]->kind == SQL_E_COL) {
			int rc = find_col(x, items[i], &k);
			if (rc)
				return rc;
			if (k < 0)
				return sql_err(c, FLOE_EINVAL, off, "unknown column '%s' (not a column of "
								    "'%s')",
					       items[i]->name.parts[items[i]->name.n - 1], src->name);
		} else if (items[i]) {
			k = -1;
		}
		if (k >= 0 && tt.k != VT_TEXT && pj->in.types[k].k != VT_TEXT &&
		    floe_type_equal(fs[k].type, tf->type)) {
			pj->pass[j] = k; /* the column as it is: its values are copied */
			continue;
		}
		if (k >= 0 && (tt.k == VT_TEXT || pj->in.types[k].k == VT_TEXT)) {
			/* a nested column goes as it is, when its shape is the table's */
			const floe_type *st = fs[k].type;
			if (st->id != tf->type->id || pj->in.types[k].k != tt.k)
				return sql_err(c, FLOE_EINVAL, off,
					       "column '%s' has another type than the table's '%s'",
					       fs[k].name, tf->name);
			pj->pass[j] = k;
			continue;
		}
		xn *e;
		int rc;
		if (k < 0 && has_agg(items[i]))
			return sql_err(c, FLOE_EUNSUPPORTED, off,
				       "aggregates in a streaming INSERT are not supported yet");
		if (k >= 0) {
			NEW(e, X_COL, pj->in.types[k], off, 0);
			e->col = k;
		} else if ((rc = bind(x, items[i], &e))) {
			return rc;
		}
		if (reads_nested(e, &pj->in))
			return sql_err(c, FLOE_EUNSUPPORTED, off,
				       "expressions over nested columns are not supported yet "
				       "(select the column as it is)");
		if (!assignable(e->t, tt))
			return sql_err(c, FLOE_EINVAL, off,
				       "this is %s and column '%s' is %s: CAST it", vt_name(e->t),
				       tf->name, vt_name(tt));
		if (e->t.k == VT_NULL && tf->required)
			return sql_err(c, FLOE_EINVAL, off, "column '%s' is NOT NULL", tf->name);
		if ((rc = cast_to(x, &e, tt, false)))
			return rc;
		mark_used(e, pj->used);
		pj->items[j] = e;
	}
	if (with_where && where) {
		int rc;
		if (has_agg(where))
			return sql_err(c, FLOE_EINVAL, where->off,
				       "aggregates are not allowed in WHERE");
		if ((rc = bind(x, where, &pj->where)) || (rc = need_bool(x, pj->where, "WHERE")))
			return rc;
		if (reads_nested(pj->where, &pj->in))
			return sql_err(c, FLOE_EUNSUPPORTED, where->off,
				       "expressions over nested columns are not supported yet");
		mark_used(pj->where, pj->used);
	}
	for (size_t j = 0; j < root->n_fields; j++)
		if (!pj->items[j] && pj->pass[j] < 0 && root->fields[j].required)
			return sql_err(c, FLOE_EINVAL, off0,
				       "the SELECT gives no value for column '%s', which is NOT NULL",
				       root->fields[j].name);
	if (!(pj->evals = floe_arena_calloc(c->a, d->n_cols + 1, sizeof(bool))))
		return floe_error_oom(c->err);
	memcpy(pj->evals, pj->used, d->n_cols * sizeof(bool));
	for (size_t j = 0; j < root->n_fields; j++)
		if (pj->pass[j] >= 0)
			pj->used[pj->pass[j]] = true;
	/* records decode into the columns the job reads (the SELECT's, the
	 * WHERE's, metadata columns); JSON skips the others by name, while a
	 * positional format (CSV, the generator's rows) keeps them all */
	const char *conn = sql_opt_get(d->opts, d->n_opts, "connector");
	const char *fmt = sql_opt_get(d->opts, d->n_opts, "format");
	if (!fmt)
		fmt = sql_opt_get(d->opts, d->n_opts, "value.format");
	bool by_name = conn && fmt && !strcmp(fmt, "json") &&
		       (!strcmp(conn, "filesystem") || !strcmp(conn, "kafka") ||
			!strcmp(conn, "kinesis"));
	bool *keep = floe_arena_calloc(c->a, d->n_cols + 1, sizeof(bool));
	floe_field *kf = floe_arena_calloc(c->a, d->n_cols + 1, sizeof(*kf));
	if (!(pj->kid = floe_arena_calloc(c->a, d->n_cols + 1, sizeof(int))) || !keep || !kf)
		return floe_error_oom(c->err);
	memcpy(keep, pj->used, d->n_cols * sizeof(bool));
	mark_names(where, &pj->in, keep);
	size_t nk = 0;
	for (size_t k = 0; k < d->n_cols; k++) {
		pj->kid[k] = -1;
		if (by_name && !keep[k] && !d->cols[k].metadata)
			continue;
		pj->kid[k] = (int)nk;
		kf[nk++] = fs[k];
	}
	if (nk == 0) /* nothing read: one column all the same, to count records */
		kf[nk++] = fs[0];
	it->fields = kf;
	it->n_fields = nk;
	pj->c = *c;
	pj->hook.input = it;
	pj->hook.apply = proj_apply;
	pj->hook.ctx = pj;
	*out = pj;
	return 0;
}

const stream_project *sql_proj_hook(const sql_proj *pj)
{
	return &pj->hook;
}

void sql_proj_free(sql_proj *pj)
{
	/* the patterns its expressions compiled */
	for (size_t i = 0; pj && i < pj->x.n_res; i++)
		regfree(pj->x.res[i]);
	if (pj)
		pj->x.n_res = 0;
}

/* Input column k of the decoded rows as values (in the call's arena). */
static int proj_col(floe_arena *a, const stream_col *kid, size_t n, sv **out)
{
	sv *v = floe_arena_alloc(a, (n ? n : 1) * sizeof(sv));
	if (!v)
		return FLOE_ENOMEM;
	const uint8_t *vals = kid->vals;
	floe_type_id id = kid->type->id;
	for (size_t i = 0; i < n; i++) {
		int64_t r = (int64_t)i;
		v[i].null = stream_col_is_null(kid, r);
		if (v[i].null) {
			v[i].u.d = 0;
			continue;
		}
		switch (kid->kind) {
		case SB_BOOL: v[i].u.i = (vals[r >> 3] >> (r & 7)) & 1; break;
		case SB_I32: {
			int32_t x;
			memcpy(&x, vals + i * 4, 4);
			v[i].u.i = x;
			break;
		}
		case SB_I64:
			memcpy(&v[i].u.i, vals + i * 8, 8);
			if (id == FLOE_T_TIMESTAMP_NS || id == FLOE_T_TIMESTAMPTZ_NS)
				v[i].u.i = floe_floordiv(v[i].u.i, 1000);
			break;
		case SB_F32: {
			float x;
			memcpy(&x, vals + i * 4, 4);
			v[i].u.f = x;
			break;
		}
		case SB_F64: memcpy(&v[i].u.f, vals + i * 8, 8); break;
		case SB_DEC: memcpy(&v[i].u.d, vals + i * 16, 16); break;
		case SB_FIXED:
			if (id == FLOE_T_UUID) {
				char *u = floe_arena_alloc(a, 37);
				if (!u)
					return FLOE_ENOMEM;
				floe_uuid_format(vals + i * kid->width, u);
				v[i].u.s.p = u;
				v[i].u.s.n = 36;
			} else {
				v[i].u.s.p = (const char *)vals + i * kid->width;
				v[i].u.s.n = kid->width;
			}
			break;
		case SB_BIN:
			v[i].u.s.p = (const char *)kid->data + kid->offs[i];
			v[i].u.s.n = (size_t)(kid->offs[i + 1] - kid->offs[i]);
			break;
		default: v[i].null = true; break;
		}
	}
	*out = v;
	return 0;
}

/* Append v (of the column's type, cast already) to column c; false with why
 * when it cannot go there. */
static int proj_put(stream_col *c, const floe_field *f, const sv *v, char *why, size_t cap,
		    bool *ok)
{
	*ok = true;
	if (v->null) {
		if (f->required) {
			*ok = false;
			snprintf(why, cap, "column '%s' is NOT NULL and the value is NULL", f->name);
			return 0;
		}
		return stream_col_put_null(c);
	}
	switch (f->type->id) {
	case FLOE_T_BOOLEAN: return stream_col_put_bool(c, v->u.i != 0);
	case FLOE_T_INT: case FLOE_T_DATE: return stream_col_put_i32(c, (int32_t)v->u.i);
	case FLOE_T_LONG: case FLOE_T_TIME: case FLOE_T_TIMESTAMP: case FLOE_T_TIMESTAMPTZ:
		return stream_col_put_i64(c, v->u.i);
	case FLOE_T_TIMESTAMP_NS: case FLOE_T_TIMESTAMPTZ_NS: {
		int64_t ns;
		if (__builtin_mul_overflow(v->u.i, (int64_t)1000, &ns)) {
			*ok = false;
			snprintf(why, cap, "column '%s': the timestamp is out of range", f->name);
			return 0;
		}
		return stream_col_put_i64(c, ns);
	}
	case FLOE_T_FLOAT: {
		float x = (float)v->u.f;
		return stream_col_put_fixed(c, &x);
	}
	case FLOE_T_DOUBLE: return stream_col_put_fixed(c, &v->u.f);
	case FLOE_T_DECIMAL: return stream_col_put_fixed(c, &v->u.d);
	case FLOE_T_UUID: {
		uint8_t u[16];
		if (!floe_uuid_parse(v->u.s.p, v->u.s.n, u)) {
			*ok = false;
			snprintf(why, cap, "column '%s': '%.*s' is not a uuid", f->name,
				 (int)(v->u.s.n > 64 ? 64 : v->u.s.n), v->u.s.p);
			return 0;
		}
		return stream_col_put_fixed(c, u);
	}
	case FLOE_T_FIXED:
		if (v->u.s.n != (size_t)f->type->length) {
			*ok = false;
			snprintf(why, cap, "column '%s' is fixed[%d] and the value has %zu bytes",
				 f->name, f->type->length, v->u.s.n);
			return 0;
		}
		return stream_col_put_fixed(c, v->u.s.p);
	default: return stream_col_put_bin(c, v->u.s.p, v->u.s.n);
	}
}

/*
 * One row's value of e (b: one row), AND, OR and CASE short-circuited as
 * Flink's generated code does: a part after a FALSE (AND) or TRUE (OR), a
 * CASE branch not taken, is not evaluated, so its errors (a failed CAST) do
 * not make a dead letter.
 */
static int eval_row(vx *x, const xn *e, const vrel *b, sv **out)
{
	if (e->op == X_CASE) { /* only the branch taken */
		size_t nw = (e->n - 1) / 2;
		int rc;
		for (size_t k = 0; k < nw; k++) {
			sv *w;
			if ((rc = eval_row(x, e->a[2 * k], b, &w)))
				return rc;
			if (!w->null && w->u.i)
				return eval_row(x, e->a[2 * k + 1], b, out);
		}
		return eval_row(x, e->a[2 * nw], b, out);
	}
	if (e->op != X_AND && e->op != X_OR)
		return eval(x, e, b, out);
	bool dom = e->op == X_OR;
	sv *l, *r, *o = floe_arena_calloc(x->ba, 1, sizeof(sv));
	int rc;
	if (!o)
		return floe_error_oom(x->c->err);
	if ((rc = eval_row(x, e->a[0], b, &l)))
		return rc;
	if (!l->null && (bool)l->u.i == dom) {
		o->u.i = dom;
	} else {
		if ((rc = eval_row(x, e->a[1], b, &r)))
			return rc;
		if (!r->null && (bool)r->u.i == dom)
			o->u.i = dom;
		else if (l->null || r->null)
			o->null = true;
		else
			o->u.i = !dom;
	}
	*out = o;
	return 0;
}

/* Would proj_put take v (no dead letter)? */
static bool proj_fits(const floe_field *f, const sv *v)
{
	if (v->null)
		return !f->required;
	switch (f->type->id) {
	case FLOE_T_TIMESTAMP_NS: case FLOE_T_TIMESTAMPTZ_NS: {
		int64_t ns;
		return !__builtin_mul_overflow(v->u.i, (int64_t)1000, &ns);
	}
	case FLOE_T_UUID: {
		uint8_t u[16];
		return floe_uuid_parse(v->u.s.p, v->u.s.n, u);
	}
	case FLOE_T_FIXED: return v->u.s.n == (size_t)f->type->length;
	default: return true;
	}
}

/*
 * The batch column by column, when every value fits: computed columns
 * appended a column at a time, source columns taken whole (their buffers
 * swapped into the table's column when one column is that column's only
 * copy) or copied. false: some row needs the row-by-row path.
 */
static int proj_columns(const sql_proj *pj, stream_col *in, stream_col *out, sv **res, size_t n,
			bool *done)
{
	const floe_type *root = pj->root;
	size_t nf = root->n_fields;
	*done = false;
	if (out->len)
		return 0;
	for (size_t j = 0; j < nf; j++) {
		const floe_field *f = &root->fields[j];
		if (pj->pass[j] >= 0) {
			const stream_col *src = &in->kids[pj->kid[pj->pass[j]]];
			for (size_t i = 0; f->required && i < n; i++)
				if (stream_col_is_null(src, (int64_t)i))
					return 0;
			continue;
		}
		if (!res[j])
			continue; /* NULL for an optional column (compile time said so) */
		for (size_t i = 0; i < n; i++)
			if (!proj_fits(f, &res[j][i]))
				return 0;
	}
	if (stream_col_struct_rows(out, (int64_t)n))
		return FLOE_ENOMEM;
	char why[8];
	bool ok;
	sv nul = {.null = true};
	for (size_t j = 0; j < nf; j++) {
		stream_col *kid = &out->kids[j];
		if (pj->pass[j] >= 0)
			continue;
		for (size_t i = 0; i < n; i++)
			if (proj_put(kid, &root->fields[j], res[j] ? &res[j][i] : &nul, why, sizeof(why),
				     &ok))
				return FLOE_ENOMEM;
	}
	/* the source columns last (computed values may point into their bytes) */
	for (size_t j = 0; j < nf; j++) {
		if (pj->pass[j] < 0)
			continue;
		stream_col *kid = &out->kids[j], *src = &in->kids[pj->kid[pj->pass[j]]];
		size_t uses = 0;
		for (size_t k = 0; k < nf; k++)
			uses += pj->pass[k] == pj->pass[j];
		if (uses == 1 && src->len == (int64_t)n &&
		    stream_col_swap_rows(kid, src))
			continue;
		for (size_t i = 0; i < n; i++)
			if (stream_col_copy_row(kid, src, (int64_t)i))
				return FLOE_ENOMEM;
	}
	*done = true;
	return 0;
}

/* The message of a failed row: its first line ("line L, column C: ..."). */
static const char *first_line(char *msg)
{
	char *nl = strchr(msg, '\n');
	if (nl)
		*nl = 0;
	return msg;
}

static int proj_apply(void *ctx, stream_col *in, stream_col *out, stream_project_bad_fn bad,
		      void *payload, floe_error *err)
{
	const sql_proj *pj = ctx;
	const floe_type *root = pj->root;
	size_t n = (size_t)in->len, nf = root->n_fields;
	floe_arena ba, ra; /* the batch's columns and values; one row's (after a failure) */
	floe_arena_init(&ba, 1 << 16);
	floe_arena_init(&ra, 1 << 12);
	floe_error e2;
	floe_error_clear(&e2);
	sql_ctx c = pj->c;
	c.err = &e2;
	vx xs = pj->x, *x = &xs;
	x->c = &c;
	x->ba = &ba;
	x->now_us = floe_now_us();
	vrel b = pj->in;
	sv **res = NULL;
	char why[FLOE_ERROR_MSG_MAX];
	int rc = 0;
	b.n = n;
	if (!(b.cols = floe_arena_calloc(&ba, b.n_cols + 1, sizeof(sv *))) ||
	    !(res = floe_arena_calloc(&ba, nf + 1, sizeof(sv *))))
		goto oom;
	for (size_t k = 0; k < b.n_cols; k++)
		if (pj->evals[k] && pj->in.types[k].k != VT_TEXT &&
		    proj_col(&ba, &in->kids[pj->kid[k]], n, &b.cols[k]))
			goto oom;
	/* the whole batch at once; when a row fails, row by row */
	bool rows = false, all = true;
	sv *w = NULL;
	if (pj->where) {
		rc = eval(x, pj->where, &b, &w);
		if (rc == FLOE_ENOMEM)
			goto oom;
		rows = rc != 0;
		for (size_t i = 0; !rows && i < n; i++)
			all &= !w[i].null && w[i].u.i;
	}
	for (size_t j = 0; j < nf && !rows; j++) {
		if (!pj->items[j])
			continue;
		rc = eval(x, pj->items[j], &b, &res[j]);
		if (rc == FLOE_ENOMEM)
			goto oom;
		rows = rc != 0;
	}
	if (!rows && all) {
		bool done;
		if ((rc = proj_columns(pj, in, out, res, n, &done)))
			goto oom;
		if (done)
			goto done;
	}
	if (rows)
		x->ba = &ra;
	sv **one = floe_arena_calloc(&ba, b.n_cols + 1, sizeof(sv *));
	sv **val = floe_arena_calloc(&ba, nf + 1, sizeof(sv *));
	if (!one || !val)
		goto oom;
	vrel r1 = b;
	r1.n = 1;
	r1.cols = one;
	for (size_t i = 0; i < n; i++) {
		bool ok = true, kept = !w || (!w[i].null && w[i].u.i);
		if (rows) {
			/* row i alone */
			for (size_t k = 0; k < b.n_cols; k++)
				one[k] = b.cols[k] ? b.cols[k] + i : NULL;
			if (pj->where) {
				sv *w1;
				floe_error_clear(&e2);
				rc = eval_row(x, pj->where, &r1, &w1);
				if (rc == FLOE_ENOMEM)
					goto oom;
				if (rc) {
					ok = false;
					snprintf(why, sizeof(why), "%s", first_line(e2.msg));
				}
				kept = !ok || (!w1->null && w1->u.i);
			}
			for (size_t j = 0; j < nf && ok && kept; j++) {
				if (!pj->items[j])
					continue;
				floe_error_clear(&e2);
				rc = eval_row(x, pj->items[j], &r1, &val[j]);
				if (rc == FLOE_ENOMEM)
					goto oom;
				if (rc) {
					ok = false;
					snprintf(why, sizeof(why), "%s", first_line(e2.msg));
				}
			}
		} else {
			for (size_t j = 0; j < nf; j++)
				val[j] = res[j] ? res[j] + i : NULL;
		}
		if (ok && !kept) { /* the WHERE leaves it out: no row, no dead letter */
			if ((rc = bad(payload, (int64_t)i, NULL)))
				goto done;
			if (rows)
				floe_arena_reset(&ra);
			continue;
		}
		int64_t len0 = out->len;
		if (ok && stream_col_struct_begin(out))
			goto oom;
		for (size_t j = 0; j < nf && ok; j++) {
			stream_col *kid = &out->kids[j];
			if (pj->pass[j] >= 0) {
				const stream_col *src = &in->kids[pj->kid[pj->pass[j]]];
				if (root->fields[j].required && stream_col_is_null(src, (int64_t)i)) {
					ok = false;
					snprintf(why, sizeof(why),
						 "column '%s' is NOT NULL and the value is NULL",
						 root->fields[j].name);
				} else if (stream_col_copy_row(kid, src, (int64_t)i)) {
					goto oom;
				}
				continue;
			}
			sv nul = {.null = true};
			if (proj_put(kid, &root->fields[j], val[j] ? val[j] : &nul, why, sizeof(why),
				     &ok))
				goto oom;
		}
		if (!ok) {
			stream_col_truncate(out, len0);
			if ((rc = bad(payload, (int64_t)i, why)))
				goto done;
		}
		if (rows)
			floe_arena_reset(&ra);
	}
	rc = 0;
	goto done;
oom:
	rc = floe_error_oom(err);
done:
	floe_arena_reset(&ra);
	floe_arena_reset(&ba);
	return rc;
}
