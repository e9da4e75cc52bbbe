/*
 * scan_eval.c — evaluating bound filters without reading rows: inclusive
 * projection through partition transforms, partition tuples, manifest
 * partition summaries, file column metrics, and residuals.
 *
 * Every evaluator answers "might match" (true) or "cannot match" (false);
 * when in doubt (a bound that does not decode, a NaN bound, a missing
 * metric, an IN list longer than Java's 200) it answers true, so pruning
 * never drops a file that holds a matching row.
 *
 * spec: Java's Projections / ProjectionUtil, ManifestEvaluator,
 * InclusiveMetricsEvaluator, ResidualEvaluator; ../shared/iceberg-notes.md
 * 5.1 (truncated string bounds, UUID order).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/transform.h"
#include "scan/scan_expr.h"

/* ---- values -------------------------------------------------------------------------- */

static bool value_is_nan(const floe_value *v)
{
	if (v->is_null)
		return false;
	if (v->type == FLOE_T_FLOAT)
		return isnan(v->v.f32);
	if (v->type == FLOE_T_DOUBLE)
		return isnan(v->v.f64);
	return false;
}

static double as_double(const floe_value *v)
{
	return v->type == FLOE_T_FLOAT ? (double)v->v.f32 : v->v.f64;
}

/* Row-level comparison: IEEE for floats (NaN compares false), else the type order. */
static bool compare_op(floe_expr_op op, const floe_value *x, const floe_value *lit)
{
	int c;
	if (x->type == FLOE_T_FLOAT || x->type == FLOE_T_DOUBLE) {
		double a = as_double(x), b = as_double(lit);
		switch (op) {
		case FLOE_OP_LT: return a < b;
		case FLOE_OP_LT_EQ: return a <= b;
		case FLOE_OP_GT: return a > b;
		case FLOE_OP_GT_EQ: return a >= b;
		case FLOE_OP_EQ: return a == b;
		case FLOE_OP_NOT_EQ: return a != b;
		default: return false;
		}
	}
	c = floe_expr_cmp(x, lit, false);
	switch (op) {
	case FLOE_OP_LT: return c < 0;
	case FLOE_OP_LT_EQ: return c <= 0;
	case FLOE_OP_GT: return c > 0;
	case FLOE_OP_GT_EQ: return c >= 0;
	case FLOE_OP_EQ: return c == 0;
	case FLOE_OP_NOT_EQ: return c != 0;
	default: return false;
	}
}

static bool in_set(const floe_expr *p, const floe_value *x)
{
	if (value_is_nan(x))
		return false;
	if (x->type == FLOE_T_FLOAT || x->type == FLOE_T_DOUBLE) {
		for (size_t i = 0; i < p->n_values; i++)
			if (as_double(&p->values[i]) == as_double(x))
				return true;
		return false;
	}
	size_t lo = 0, hi = p->n_values;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = floe_expr_cmp(&p->values[mid], x, false);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool has_prefix(const floe_value *x, const floe_value *prefix)
{
	return x->v.bin.n >= prefix->v.bin.n &&
	       memcmp(x->v.bin.p, prefix->v.bin.p, prefix->v.bin.n) == 0;
}

bool floe_eval_value(const floe_expr *p, const floe_value *v)
{
	switch (p->op) {
	case FLOE_OP_IS_NULL: return v->is_null;
	case FLOE_OP_NOT_NULL: return !v->is_null;
	default: break;
	}
	if (v->is_null)
		return false;
	switch (p->op) {
	case FLOE_OP_IS_NAN: return value_is_nan(v);
	case FLOE_OP_NOT_NAN: return !value_is_nan(v);
	case FLOE_OP_IN: return in_set(p, v);
	case FLOE_OP_NOT_IN: return !value_is_nan(v) ? !in_set(p, v) : true;
	case FLOE_OP_STARTS_WITH: return has_prefix(v, &p->values[0]);
	case FLOE_OP_NOT_STARTS_WITH: return !has_prefix(v, &p->values[0]);
	case FLOE_OP_LIKE:
	case FLOE_OP_NOT_LIKE:
		return floe_like_match(v->v.bin.p, v->v.bin.n, p->values[0].v.bin.p,
				       p->values[0].v.bin.n) == (p->op == FLOE_OP_LIKE);
	default: return p->n_values ? compare_op(p->op, v, &p->values[0]) : false;
	}
}

/* ---- projection ------------------------------------------------------------------------ */

typedef struct projector {
	floe_arena *a;
	const floe_partition_spec *spec;
	const floe_schema *schema;
	floe_error *err;
	int rc;
} projector;

static floe_expr *proj_pred(projector *pj, const floe_expr *p, size_t pos, floe_expr_op op,
			    const floe_value *vals, size_t n)
{
	const floe_partition_field *f = &pj->spec->fields[pos];
	floe_expr *e = floe_expr_bound_pred(pj->a, op, f->field_id,
					    floe_spec_field_type(pj->spec, pos, pj->schema), vals, n);
	if (e) {
		e->pos = (int32_t)pos;
		e->name = f->name;
	}
	(void)p;
	return e;
}

static bool is_temporal(floe_transform_kind k)
{
	return k == FLOE_TR_YEAR || k == FLOE_TR_MONTH || k == FLOE_TR_DAY || k == FLOE_TR_HOUR;
}

/* v +/- 1 unit of its type; false on overflow */
static bool step(floe_value *out, const floe_value *v, int d)
{
	*out = *v;
	switch (v->type) {
	case FLOE_T_INT:
	case FLOE_T_DATE:
		if ((d < 0 && v->v.i32 == INT32_MIN) || (d > 0 && v->v.i32 == INT32_MAX))
			return false;
		out->v.i32 += d;
		return true;
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		if ((d < 0 && v->v.i64 == INT64_MIN) || (d > 0 && v->v.i64 == INT64_MAX))
			return false;
		out->v.i64 += d;
		return true;
	case FLOE_T_DECIMAL: out->v.dec += d; return true;
	default: return false;
	}
}

static int cmp_sort(const void *x, const void *y)
{
	return floe_expr_cmp(x, y, false);
}

/* apply the transform to every value; optionally add r+1 for negative temporal results */
static floe_expr *proj_set(projector *pj, const floe_expr *p, size_t pos, floe_expr_op op,
			   bool fix_time)
{
	const floe_partition_field *f = &pj->spec->fields[pos];
	const floe_type *src = p->type;
	size_t cap = p->n_values * (fix_time ? 2 : 1);
	floe_value *vals = floe_arena_calloc(pj->a, cap ? cap : 1, sizeof(floe_value));
	size_t n = 0;
	if (!vals)
		return NULL;
	for (size_t i = 0; i < p->n_values; i++) {
		floe_value r;
		if (floe_transform_apply(&r, &f->transform, src, &p->values[i], NULL))
			return floe_expr_const(pj->a, true);
		vals[n++] = r;
		if (fix_time && r.v.i32 < 0) {
			floe_value r1 = r;
			r1.v.i32 += 1;
			vals[n++] = r1;
		}
	}
	qsort(vals, n, sizeof(floe_value), cmp_sort);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (k == 0 || floe_expr_cmp(&vals[k - 1], &vals[i], false) != 0)
			vals[k++] = vals[i];
	if (k == 1 && op == FLOE_OP_IN)
		op = FLOE_OP_EQ;
	return proj_pred(pj, p, pos, op, vals, k);
}

static size_t code_points(const floe_value *v)
{
	size_t n = 0;
	for (size_t i = 0; i < v->v.bin.n; i++)
		n += (v->v.bin.p[i] & 0xC0) != 0x80;
	return n;
}

/* Projection of one predicate through partition field pos (NULL = no projection, i.e. TRUE). */
static floe_expr *project_one(projector *pj, const floe_expr *p, size_t pos)
{
	const floe_partition_field *f = &pj->spec->fields[pos];
	const floe_transform *tr = &f->transform;
	const floe_type *src = p->type;
	floe_value r;
	if (!floe_spec_field_type(pj->spec, pos, pj->schema))
		return NULL;
	if (tr->kind == FLOE_TR_VOID || tr->kind == FLOE_TR_UNKNOWN)
		return NULL;
	switch (p->op) {
	case FLOE_OP_IS_NULL:
	case FLOE_OP_NOT_NULL: return proj_pred(pj, p, pos, p->op, NULL, 0);
	case FLOE_OP_IS_NAN:
	case FLOE_OP_NOT_NAN:
		return tr->kind == FLOE_TR_IDENTITY ? proj_pred(pj, p, pos, p->op, NULL, 0) : NULL;
	default: break;
	}
	if (tr->kind == FLOE_TR_IDENTITY)
		return proj_pred(pj, p, pos, p->op, p->values, p->n_values);
	if (tr->kind == FLOE_TR_BUCKET) {
		if (p->op == FLOE_OP_EQ || p->op == FLOE_OP_IN)
			return proj_set(pj, p, pos, p->op, false);
		return NULL;
	}
	bool temporal = is_temporal(tr->kind);
	if (tr->kind != FLOE_TR_TRUNCATE && !temporal)
		return NULL;
	bool bytes = src->id == FLOE_T_STRING || src->id == FLOE_T_BINARY;
	if (p->op == FLOE_OP_IN)
		return proj_set(pj, p, pos, FLOE_OP_IN, temporal);
	if (p->op == FLOE_OP_NOT_EQ || p->op == FLOE_OP_NOT_IN)
		return NULL;
	if (p->op == FLOE_OP_STARTS_WITH || p->op == FLOE_OP_NOT_STARTS_WITH) {
		if (!bytes || tr->kind != FLOE_TR_TRUNCATE)
			return NULL;
		if (p->op == FLOE_OP_NOT_STARTS_WITH) {
			/* spec (Java): only a prefix shorter than the width projects */
			if (code_points(&p->values[0]) < (size_t)tr->param)
				return proj_pred(pj, p, pos, p->op, p->values, 1);
			return NULL;
		}
		if (floe_transform_apply(&r, tr, src, &p->values[0], NULL))
			return NULL;
		return proj_pred(pj, p, pos, FLOE_OP_STARTS_WITH, &r, 1);
	}
	/* order-preserving transforms: truncate and the temporal ones */
	floe_value b = p->values[0];
	floe_expr_op op = p->op;
	if (!bytes) {
		/* integers, decimals, dates, timestamps: LT x -> LT_EQ T(x - 1), GT x -> GT_EQ T(x + 1) */
		if (op == FLOE_OP_LT) {
			if (!step(&b, &p->values[0], -1))
				return NULL;
			op = FLOE_OP_LT_EQ;
		} else if (op == FLOE_OP_GT) {
			if (!step(&b, &p->values[0], +1))
				return NULL;
			op = FLOE_OP_GT_EQ;
		}
	} else {
		/* strings and binaries: LT/LT_EQ -> LT_EQ T(x), GT/GT_EQ -> GT_EQ T(x) */
		if (op == FLOE_OP_LT)
			op = FLOE_OP_LT_EQ;
		else if (op == FLOE_OP_GT)
			op = FLOE_OP_GT_EQ;
	}
	if (floe_transform_apply(&r, tr, src, &b, NULL))
		return NULL;
	if (temporal) {
		/* Java's fixInclusiveTimeProjection: files written by old writers
		 * may carry pre-1970 partition values one too large */
		if (op == FLOE_OP_LT_EQ && r.v.i32 < 0) {
			r.v.i32 += 1;
		} else if (op == FLOE_OP_EQ && r.v.i32 < 0) {
			floe_value two[2] = {r, r};
			two[1].v.i32 += 1;
			return proj_pred(pj, p, pos, FLOE_OP_IN, two, 2);
		}
	}
	return proj_pred(pj, p, pos, op, &r, 1);
}

/* LIKE 'ab%c': rows that match start with "ab" — prune as that STARTS WITH */
static const floe_expr *like_as_prefix(floe_arena *a, const floe_expr *e)
{
	if (e->kind != FLOE_EX_PRED || (e->op != FLOE_OP_LIKE && e->op != FLOE_OP_NOT_LIKE))
		return e;
	if (e->op == FLOE_OP_NOT_LIKE)
		return NULL;
	uint8_t *buf = floe_arena_alloc(a, e->values[0].v.bin.n + 1);
	if (!buf)
		return NULL;
	size_t n = floe_like_prefix(e->values[0].v.bin.p, e->values[0].v.bin.n, buf);
	if (n == 0)
		return NULL;
	floe_value v = e->values[0];
	v.v.bin.p = buf;
	v.v.bin.n = n;
	floe_expr *x = floe_expr_bound_pred(a, FLOE_OP_STARTS_WITH, e->field_id, e->type, &v, 1);
	if (x)
		x->in_repeated = e->in_repeated;
	return x;
}

static floe_expr *project_rec(projector *pj, const floe_expr *e, int depth)
{
	if (depth > FLOE_EXPR_MAX_DEPTH * 2)
		return floe_expr_const(pj->a, true);
	switch (e->kind) {
	case FLOE_EX_TRUE:
	case FLOE_EX_FALSE: return floe_expr_const(pj->a, e->kind == FLOE_EX_TRUE);
	case FLOE_EX_AND:
		return floe_expr_and(pj->a, project_rec(pj, e->left, depth + 1),
				     project_rec(pj, e->right, depth + 1));
	case FLOE_EX_OR:
		return floe_expr_or(pj->a, project_rec(pj, e->left, depth + 1),
				    project_rec(pj, e->right, depth + 1));
	case FLOE_EX_NOT: return floe_expr_const(pj->a, true);
	case FLOE_EX_PRED: break;
	}
	if (!(e = like_as_prefix(pj->a, e)))
		return floe_expr_const(pj->a, true);
	floe_expr *acc = floe_expr_const(pj->a, true);
	for (size_t i = 0; i < pj->spec->n_fields && acc; i++) {
		const floe_partition_field *f = &pj->spec->fields[i];
		if (f->source_id != e->field_id || f->n_source_ids > 1)
			continue;
		floe_expr *x = project_one(pj, e, i);
		if (x)
			acc = floe_expr_and(pj->a, acc, x);
	}
	return acc;
}

int floe_expr_project(floe_expr **out, floe_arena *a, const floe_expr *bound,
		      const floe_partition_spec *spec, const floe_schema *schema, floe_error *err)
{
	projector pj = {a, spec, schema, err, 0};
	*out = project_rec(&pj, bound, 0);
	return *out ? FLOE_OK : floe_error_oom(err);
}

/* ---- partition tuples ------------------------------------------------------------------- */

static bool eval_tuple(const floe_expr *e, const floe_partition *p, int depth)
{
	switch (e->kind) {
	case FLOE_EX_TRUE: return true;
	case FLOE_EX_FALSE: return false;
	case FLOE_EX_AND: return eval_tuple(e->left, p, depth + 1) && eval_tuple(e->right, p, depth + 1);
	case FLOE_EX_OR: return eval_tuple(e->left, p, depth + 1) || eval_tuple(e->right, p, depth + 1);
	case FLOE_EX_NOT: return true;
	case FLOE_EX_PRED: break;
	}
	if (e->pos < 0 || (size_t)e->pos >= p->n)
		return true;
	const floe_value *v = &p->values[e->pos];
	if (!v->is_null && e->type && v->type != e->type->id)
		return true; /* decoded with another type: cannot judge */
	return floe_eval_value(e, v);
}

bool floe_eval_partition(const floe_expr *projected, const floe_partition *p)
{
	return eval_tuple(projected, p, 0);
}

/* ---- manifest partition summaries ----------------------------------------------------- */

/* A bound as a value; upper says which. A zero bound is taken to cover both
 * zeros (a lower +0.0 as -0.0, an upper -0.0 as +0.0): Java's writers keep
 * the sign, and SQL's -0.0 = 0.0 must not be pruned by it. */
static bool decode_bound(floe_value *out, const floe_type *t, const uint8_t *p, size_t n,
			 bool upper)
{
	if (!t || floe_value_from_bytes(out, t, p, n, NULL) != FLOE_OK)
		return false;
	if (out->type == FLOE_T_FLOAT && out->v.f32 == 0.0f)
		out->v.f32 = upper ? 0.0f : -0.0f;
	else if (out->type == FLOE_T_DOUBLE && out->v.f64 == 0.0)
		out->v.f64 = upper ? 0.0 : -0.0;
	return !value_is_nan(out);
}

/* comparison pruning with one ordering (signed: Java's UUID order) */
static bool bounds_might(const floe_expr *e, const floe_value *lo, bool has_lo,
			 const floe_value *hi, bool has_hi, bool signed_uuid)
{
	const floe_value *v = &e->values[0];
	switch (e->op) {
	case FLOE_OP_LT: return !has_lo || floe_expr_cmp(lo, v, signed_uuid) < 0;
	case FLOE_OP_LT_EQ: return !has_lo || floe_expr_cmp(lo, v, signed_uuid) <= 0;
	case FLOE_OP_GT: return !has_hi || floe_expr_cmp(hi, v, signed_uuid) > 0;
	case FLOE_OP_GT_EQ: return !has_hi || floe_expr_cmp(hi, v, signed_uuid) >= 0;
	case FLOE_OP_EQ:
		if (has_lo && floe_expr_cmp(lo, v, signed_uuid) > 0)
			return false;
		return !has_hi || floe_expr_cmp(hi, v, signed_uuid) >= 0;
	case FLOE_OP_IN: {
		if (e->n_values > FLOE_EXPR_IN_PRUNE_LIMIT)
			return true;
		for (size_t i = 0; i < e->n_values; i++) {
			const floe_value *x = &e->values[i];
			if (has_lo && floe_expr_cmp(x, lo, signed_uuid) < 0)
				continue;
			if (has_hi && floe_expr_cmp(x, hi, signed_uuid) > 0)
				continue;
			return true;
		}
		return false;
	}
	default: return true;
	}
}

/*
 * UUID bounds (notes 5.1, apache/iceberg#14216): Java 1.10 writes and prunes
 * them in signed-long order, the spec, Parquet and PyIceberg in unsigned
 * byte order. Bounds out of order in the spec's order (Java's over values on
 * both sides of the top bit) never prune; others prune only when both
 * orders rule the value out.
 */
static bool uuid_bounds_might(const floe_expr *e, const floe_value *lo, bool has_lo,
			      const floe_value *hi, bool has_hi)
{
	if (has_lo && has_hi && floe_expr_cmp(lo, hi, false) > 0)
		return true;
	return bounds_might(e, lo, has_lo, hi, has_hi, false) ||
	       bounds_might(e, lo, has_lo, hi, has_hi, true);
}

static bool is_float_type(const floe_type *t)
{
	return t && (t->id == FLOE_T_FLOAT || t->id == FLOE_T_DOUBLE);
}

/* compare a truncated bound with a prefix: bound[:len(prefix)] vs prefix */
static int cmp_prefix(const floe_value *bound, const floe_value *prefix)
{
	size_t n = bound->v.bin.n < prefix->v.bin.n ? bound->v.bin.n : prefix->v.bin.n;
	int c = memcmp(bound->v.bin.p, prefix->v.bin.p, n);
	if (c)
		return c;
	if (bound->v.bin.n < prefix->v.bin.n)
		return -1;
	return 0;
}

static bool summary_might(const floe_expr *e, const floe_field_summary *fs, const floe_type *t)
{
	floe_value lo, hi;
	bool has_lo = fs->has_lower && decode_bound(&lo, t, fs->lower, fs->lower_len, false);
	bool has_hi = fs->has_upper && decode_bound(&hi, t, fs->upper, fs->upper_len, true);
	/* lower is absent only when every value is null (or NaN) */
	bool all_null = fs->contains_null && !fs->has_lower &&
			!(is_float_type(t) && fs->contains_nan != 0);
	bool nan_only = fs->contains_nan == 1 && !fs->contains_null && !fs->has_lower &&
			!fs->has_upper;
	switch (e->op) {
	case FLOE_OP_IS_NULL: return fs->contains_null;
	case FLOE_OP_NOT_NULL: return !all_null;
	case FLOE_OP_IS_NAN: return fs->contains_nan != 0 && !all_null;
	case FLOE_OP_NOT_NAN: return !nan_only;
	case FLOE_OP_NOT_EQ:
	case FLOE_OP_NOT_IN: return true;
	default: break;
	}
	if (!fs->has_lower) /* all null or NaN: no comparison can hold */
		return e->op == FLOE_OP_NOT_STARTS_WITH;
	const floe_value *v = e->n_values ? &e->values[0] : NULL;
	if (!v)
		return true;
	if (t && t->id == FLOE_T_UUID)
		return uuid_bounds_might(e, &lo, has_lo, &hi, has_hi);
	switch (e->op) {
	case FLOE_OP_LT: return !has_lo || floe_expr_cmp(&lo, v, false) < 0;
	case FLOE_OP_LT_EQ: return !has_lo || floe_expr_cmp(&lo, v, false) <= 0;
	case FLOE_OP_GT: return !has_hi || floe_expr_cmp(&hi, v, false) > 0;
	case FLOE_OP_GT_EQ: return !has_hi || floe_expr_cmp(&hi, v, false) >= 0;
	case FLOE_OP_EQ:
		if (has_lo && floe_expr_cmp(&lo, v, false) > 0)
			return false;
		return !has_hi || floe_expr_cmp(&hi, v, false) >= 0;
	case FLOE_OP_IN:
		if (e->n_values > FLOE_EXPR_IN_PRUNE_LIMIT)
			return true;
		if (has_lo && floe_expr_cmp(&e->values[e->n_values - 1], &lo, false) < 0)
			return false;
		if (has_hi && floe_expr_cmp(&e->values[0], &hi, false) > 0)
			return false;
		return true;
	case FLOE_OP_STARTS_WITH:
		if (has_lo && cmp_prefix(&lo, v) > 0)
			return false;
		if (has_hi && cmp_prefix(&hi, v) < 0)
			return false;
		return true;
	case FLOE_OP_NOT_STARTS_WITH:
		if (fs->contains_null)
			return true;
		return !(has_lo && has_hi && has_prefix(&lo, v) && has_prefix(&hi, v));
	default: return true;
	}
}

static bool eval_summ(const floe_expr *e, const floe_field_summary *s, size_t n,
		      const floe_type *const *types, int depth)
{
	switch (e->kind) {
	case FLOE_EX_TRUE: return true;
	case FLOE_EX_FALSE: return false;
	case FLOE_EX_AND:
		return eval_summ(e->left, s, n, types, depth + 1) &&
		       eval_summ(e->right, s, n, types, depth + 1);
	case FLOE_EX_OR:
		return eval_summ(e->left, s, n, types, depth + 1) ||
		       eval_summ(e->right, s, n, types, depth + 1);
	case FLOE_EX_NOT: return true;
	case FLOE_EX_PRED: break;
	}
	if (e->pos < 0 || (size_t)e->pos >= n)
		return true;
	return summary_might(e, &s[e->pos], types ? types[e->pos] : e->type);
}

bool floe_eval_summaries(const floe_expr *projected, const floe_field_summary *s, size_t n,
			 const floe_type *const *types)
{
	return eval_summ(projected, s, n, types, 0);
}

/* ---- file metrics ---------------------------------------------------------------------- */

static int64_t find_long(const floe_id_long *m, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].id == id)
			return m[i].value;
	return -1;
}

static const floe_id_bytes *find_bytes(const floe_id_bytes *m, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].id == id)
			return &m[i];
	return NULL;
}

static bool metrics_might(const floe_expr *e, const floe_file_metrics *m)
{
	if (e->in_repeated)
		return true;
	int32_t id = e->field_id;
	int64_t vc = find_long(m->value_counts, m->n_value_counts, id);
	int64_t nc = find_long(m->null_counts, m->n_null_counts, id);
	int64_t nanc = find_long(m->nan_counts, m->n_nan_counts, id);
	if (e->optional_parent) {
		/* Java does not count a field inside a null struct as null: Spark 3.5
		 * with Iceberg 1.10 writes n values / 0 nulls for a file of null
		 * structs, Java's generic writer 0 / 0. Under an optional parent a zero
		 * null count proves nothing, and the value count only when it covers
		 * every row (as floe's and Parquet's do) */
		if (nc == 0)
			nc = -1;
		if (vc != m->record_count)
			vc = nc = -1;
	}
	bool nulls_only = vc >= 0 && nc >= 0 && vc == nc;
	bool nans_only = vc >= 0 && nanc >= 0 && vc == nanc;
	switch (e->op) {
	case FLOE_OP_IS_NULL: return nc != 0;
	case FLOE_OP_NOT_NULL: return !nulls_only;
	case FLOE_OP_IS_NAN: return nanc != 0 && !nulls_only;
	case FLOE_OP_NOT_NAN: return !nans_only;
	case FLOE_OP_NOT_EQ:
	case FLOE_OP_NOT_IN: return true;
	default: break;
	}
	if (nulls_only || nans_only)
		return e->op == FLOE_OP_NOT_STARTS_WITH && nulls_only ? true : false;
	if (!e->n_values || !e->type)
		return true;
	const floe_id_bytes *lb = find_bytes(m->lower, m->n_lower, id);
	const floe_id_bytes *ub = find_bytes(m->upper, m->n_upper, id);
	floe_value lo, hi;
	bool has_lo = lb && decode_bound(&lo, e->type, lb->p, lb->n, false);
	bool has_hi = ub && decode_bound(&hi, e->type, ub->p, ub->n, true);
	if (!has_lo && !has_hi)
		return true;
	const floe_value *v = &e->values[0];
	switch (e->op) {
	case FLOE_OP_STARTS_WITH:
		if (has_lo && cmp_prefix(&lo, v) > 0)
			return false;
		if (has_hi && cmp_prefix(&hi, v) < 0)
			return false;
		return true;
	case FLOE_OP_NOT_STARTS_WITH:
		if (nc != 0)
			return true;
		return !(has_lo && has_hi && has_prefix(&lo, v) && has_prefix(&hi, v));
	default: break;
	}
	if (e->type->id == FLOE_T_UUID)
		return uuid_bounds_might(e, &lo, has_lo, &hi, has_hi);
	return bounds_might(e, &lo, has_lo, &hi, has_hi, false);
}

static bool eval_metrics(const floe_expr *e, const floe_file_metrics *m, int depth)
{
	switch (e->kind) {
	case FLOE_EX_TRUE: return true;
	case FLOE_EX_FALSE: return false;
	case FLOE_EX_AND: return eval_metrics(e->left, m, depth + 1) && eval_metrics(e->right, m, depth + 1);
	case FLOE_EX_OR: return eval_metrics(e->left, m, depth + 1) || eval_metrics(e->right, m, depth + 1);
	case FLOE_EX_NOT: return true;
	case FLOE_EX_PRED:
		if (e->op == FLOE_OP_LIKE || e->op == FLOE_OP_NOT_LIKE) {
			/* the prefix bound lives only for this call: a small stack copy */
			uint8_t buf[256];
			size_t pn = e->values[0].v.bin.n;
			if (e->op == FLOE_OP_NOT_LIKE || pn > sizeof(buf))
				return true;
			size_t n = floe_like_prefix(e->values[0].v.bin.p, pn, buf);
			if (n == 0)
				return true;
			floe_expr x = *e;
			floe_value v = e->values[0];
			v.v.bin.p = buf;
			v.v.bin.n = n;
			x.op = FLOE_OP_STARTS_WITH;
			x.values = &v;
			x.n_values = 1;
			return metrics_might(&x, m);
		}
		return metrics_might(e, m);
	}
	return true;
}

bool floe_eval_metrics(const floe_expr *bound, const floe_file_metrics *m)
{
	if (m->record_count == 0)
		return false; /* an empty file holds no matching row */
	if (m->record_count < 0)
		return true;
	return eval_metrics(bound, m, 0);
}

/* ---- residuals ------------------------------------------------------------------------- */

static floe_expr *residual_rec(floe_arena *a, const floe_expr *e, const floe_partition_spec *spec,
			       const floe_partition *p, int depth)
{
	switch (e->kind) {
	case FLOE_EX_TRUE:
	case FLOE_EX_FALSE: return (floe_expr *)e;
	case FLOE_EX_AND:
	case FLOE_EX_OR: {
		floe_expr *l = residual_rec(a, e->left, spec, p, depth + 1);
		floe_expr *r = residual_rec(a, e->right, spec, p, depth + 1);
		if (l == e->left && r == e->right)
			return (floe_expr *)e; /* unchanged: no allocation per file */
		return e->kind == FLOE_EX_AND ? floe_expr_and(a, l, r) : floe_expr_or(a, l, r);
	}
	case FLOE_EX_NOT:
	case FLOE_EX_PRED: break;
	}
	if (e->kind == FLOE_EX_PRED && spec && p) {
		for (size_t i = 0; i < spec->n_fields && i < p->n; i++) {
			const floe_partition_field *f = &spec->fields[i];
			if (f->source_id != e->field_id || f->transform.kind != FLOE_TR_IDENTITY)
				continue;
			const floe_value *v = &p->values[i];
			if (!v->is_null && e->type && v->type != e->type->id)
				break; /* promoted since: let the rows decide */
			return floe_expr_const(a, floe_eval_value(e, v));
		}
	}
	return (floe_expr *)e;
}

floe_expr *floe_expr_residual(floe_arena *a, const floe_expr *bound,
			      const floe_partition_spec *spec, const floe_partition *p)
{
	return residual_rec(a, bound, spec, p, 0);
}
