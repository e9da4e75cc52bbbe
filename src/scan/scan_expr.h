/*
 * scan_expr.h — filter expressions: parsed from SQL text, NOT pushed down,
 * bound to a schema (names -> field ids, literals coerced to the column
 * types), projected through partition transforms and evaluated against
 * partition tuples, manifest partition summaries, file metrics and rows.
 *
 * The model follows Java's org.apache.iceberg.expressions: predicates on one
 * column (IS NULL, NOT NULL, IS NAN, NOT NAN, <, <=, >, >=, =, !=, IN, NOT IN,
 * STARTS WITH, NOT STARTS WITH) combined with AND, OR, NOT and the constants
 * TRUE and FALSE.
 *
 * SQL semantics: a row passes when the filter is TRUE; comparisons with NULL
 * are unknown. NOT is pushed to the leaves (floe_expr_rewrite_not) BEFORE
 * binding, so a bound expression has no NOT and unknown can be folded into
 * FALSE (in a NOT-free formula they select the same rows): "x = NULL" binds
 * to FALSE, "NOT (x = NULL)" becomes "x != NULL" and binds to FALSE too.
 *
 * Untrusted input: the parser bounds text length, nesting and list sizes;
 * errors are FLOE_EINVAL with the column of the problem ("expression: at 14:
 * expected a literal after '='").
 *
 * Ownership: every tree lives in the caller's arena. Bound trees are
 * immutable and may be shared by threads.
 */
#ifndef FLOE_SCAN_EXPR_H
#define FLOE_SCAN_EXPR_H

#include "iceberg/manifest.h"
#include "iceberg/spec.h"
#include "iceberg/types.h"
#include "iceberg/value.h"
#include "util/alloc.h"
#include "util/buf.h"

#define FLOE_EXPR_MAX_TEXT ((size_t)1 << 20)
#define FLOE_EXPR_MAX_DEPTH 200
#define FLOE_EXPR_MAX_IN 100000
/* Java's limit: IN lists longer than this are not used for pruning. */
#define FLOE_EXPR_IN_PRUNE_LIMIT 200

typedef enum floe_expr_kind {
	FLOE_EX_TRUE = 0,
	FLOE_EX_FALSE,
	FLOE_EX_AND,
	FLOE_EX_OR,
	FLOE_EX_NOT,
	FLOE_EX_PRED,
} floe_expr_kind;

typedef enum floe_expr_op {
	FLOE_OP_IS_NULL = 0,
	FLOE_OP_NOT_NULL,
	FLOE_OP_IS_NAN,
	FLOE_OP_NOT_NAN,
	FLOE_OP_LT,
	FLOE_OP_LT_EQ,
	FLOE_OP_GT,
	FLOE_OP_GT_EQ,
	FLOE_OP_EQ,
	FLOE_OP_NOT_EQ,
	FLOE_OP_IN,
	FLOE_OP_NOT_IN,
	FLOE_OP_STARTS_WITH,
	FLOE_OP_NOT_STARTS_WITH,
	/* SQL LIKE with wildcards inside the pattern ('%' any text, '_' one
	 * character, '\' escapes): decided per row; pruning uses the literal
	 * prefix before the first wildcard as STARTS WITH */
	FLOE_OP_LIKE,
	FLOE_OP_NOT_LIKE,
} floe_expr_op;

typedef enum floe_lit_kind {
	FLOE_LIT_NULL = 0,
	FLOE_LIT_BOOL,
	FLOE_LIT_NUMBER,    /* text: "-12.5e3" */
	FLOE_LIT_STRING,    /* text: unescaped */
	FLOE_LIT_DATE,      /* DATE '2024-01-01' */
	FLOE_LIT_TIME,      /* TIME '12:00:00' */
	FLOE_LIT_TIMESTAMP, /* TIMESTAMP '...' (no zone: local/UTC as the column says) */
	FLOE_LIT_TIMESTAMPTZ,
	FLOE_LIT_BINARY,    /* X'cafe': text holds the bytes */
} floe_lit_kind;

typedef struct floe_literal {
	floe_lit_kind kind;
	bool b;
	const char *text;
	size_t len;
	size_t at; /* offset in the source text, for messages */
} floe_literal;

typedef struct floe_expr floe_expr;
struct floe_expr {
	floe_expr_kind kind;
	floe_expr *left, *right; /* AND/OR; NOT uses left */
	/* predicates */
	floe_expr_op op;
	const char *name;      /* unbound: column name as written ("a.b") */
	floe_literal *lits;    /* unbound literals */
	size_t n_lits;
	size_t at;             /* offset of the predicate in the text */
	/* bound */
	int32_t field_id;      /* table field id; for projected predicates the partition field id */
	const floe_type *type; /* column type (or partition result type) */
	bool in_repeated;      /* inside a list or map: no metrics */
	bool optional_parent;  /* inside an optional struct: counts may omit the
				* rows where the struct is null (Java writes 0/0) */
	floe_value *values;    /* one literal, or an IN set sorted ascending, no duplicates */
	size_t n_values;
	int32_t pos;           /* projected predicates: index of the field in the spec */
};

/* ---- building -------------------------------------------------------------------- */

floe_expr *floe_expr_const(floe_arena *a, bool value);
/* AND/OR with constant folding (TRUE AND x = x, ...). NULL on ENOMEM. */
floe_expr *floe_expr_and(floe_arena *a, floe_expr *l, floe_expr *r);
floe_expr *floe_expr_or(floe_arena *a, floe_expr *l, floe_expr *r);
floe_expr *floe_expr_not(floe_arena *a, floe_expr *e);
/* A bound predicate (values copied). */
floe_expr *floe_expr_bound_pred(floe_arena *a, floe_expr_op op, int32_t field_id,
				const floe_type *t, const floe_value *values, size_t n);

/* ---- parsing ----------------------------------------------------------------------- */

/*
 * Parse SQL filter text:
 *   expr := expr OR expr | expr AND expr | NOT expr | ( expr ) | TRUE | FALSE | pred
 *   pred := col op lit | lit op col | col [NOT] IN (lit, ...) | col IS [NOT] NULL
 *         | col IS [NOT] NAN | col [NOT] BETWEEN lit AND lit | col [NOT] LIKE 'pattern'
 *         | col IS [NOT] DISTINCT FROM lit
 *         | col [NOT] STARTS WITH 'abc' | starts_with(col, 'abc') | is_nan(col)
 *   op   := = == != <> < <= > >=
 *   col  := name(.name)* | "quoted" | `quoted`
 *   lit  := number | 'string' ('' escapes a quote) | TRUE | FALSE | NULL
 *         | DATE 'x' | TIME 'x' | TIMESTAMP 'x' | TIMESTAMPTZ 'x' | X'hex'
 *         | CAST(lit AS type) | -number
 * LIKE 'abc%' becomes STARTS WITH, a pattern without wildcards =, any other
 * pattern LIKE. x IS [NOT] DISTINCT FROM lit compares with NULL as a value.
 * Keywords are case-insensitive. FLOE_EINVAL names the offset of the error.
 */
int floe_expr_parse(floe_expr **out, floe_arena *a, const char *text, size_t n,
		    floe_error *err) FLOE_WUR;

/* Push NOT down to the predicates (new tree; the input is not changed). */
floe_expr *floe_expr_rewrite_not(floe_arena *a, const floe_expr *e);

/*
 * Bind an unbound, NOT-free expression to schema: column names resolve to
 * field ids (case-insensitively unless case_sensitive; nested names by
 * dotted path), literals convert to the column type (strings to dates,
 * timestamps, uuids, decimals; numbers to any numeric type). Out-of-range
 * and inexact literals fold the way Java's binding does (x < 1e30 on an int
 * is NOT NULL; x = 1.5 on an int is FALSE; x <= 1.5 is x <= 1). IS NULL on a
 * required top-level column is FALSE. FLOE_EINVAL for an unknown column, a
 * predicate on a struct/list/map, IS NAN on a non-float column, STARTS WITH
 * on a non-string column, or a literal that cannot be converted (the
 * message names the column and the literal).
 */
int floe_expr_bind(floe_expr **out, floe_arena *a, const floe_expr *unbound,
		   const floe_schema *schema, bool case_sensitive, floe_error *err) FLOE_WUR;

/* Parse, push NOT down and bind in one call. */
int floe_expr_compile(floe_expr **out, floe_arena *a, const char *text,
		      const floe_schema *schema, bool case_sensitive, floe_error *err) FLOE_WUR;

/* Text form of an expression (bound: "id >= 10 AND s IN ('a', 'b')"). */
int floe_expr_format(floe_buf *out, const floe_expr *e, const floe_schema *schema) FLOE_WUR;

/* Call fn for every field id a bound expression references (with repeats). */
void floe_expr_field_ids(const floe_expr *e, void (*fn)(int32_t id, void *payload),
			 void *payload);

bool floe_expr_is_true(const floe_expr *e);
bool floe_expr_is_false(const floe_expr *e);

/* ---- values ------------------------------------------------------------------------- */

/* Compare as Java orders a type's bounds; for uuid, signed-long order
 * (signed_uuid) or unsigned bytes. Non-null values of one type. */
int floe_expr_cmp(const floe_value *a, const floe_value *b, bool signed_uuid);

/* ---- projection and evaluation (scan_eval.c) ------------------------------------------- */

/*
 * Inclusive projection of a bound filter onto partition spec `spec` (Java's
 * Projections.inclusive): every predicate on a source column becomes the
 * AND of its projections through each partition field of that column
 * (identity: itself; bucket: = and IN only; truncate and the temporal
 * transforms: order-preserving with Java's boundary adjustments, including
 * fixInclusiveTimeProjection for pre-1970 values); a predicate with no
 * projection becomes TRUE. Projected predicates carry `pos` (the field's
 * index in the spec) and the field's result type.
 */
int floe_expr_project(floe_expr **out, floe_arena *a, const floe_expr *bound,
		      const floe_partition_spec *spec, const floe_schema *schema,
		      floe_error *err) FLOE_WUR;

/* Might a file with this partition tuple hold matching rows? (projected expr) */
bool floe_eval_partition(const floe_expr *projected, const floe_partition *p);

/* Might a manifest with these partition summaries hold matching files? The
 * summaries are decoded with each field's result type (types[i]). */
bool floe_eval_summaries(const floe_expr *projected, const floe_field_summary *s,
			 size_t n, const floe_type *const *types);

/*
 * Might a data file with these metrics hold matching rows? (Java's
 * InclusiveMetricsEvaluator.) Metric arrays are (id, value) pairs.
 */
typedef struct floe_file_metrics {
	int64_t record_count;
	const floe_id_long *value_counts;
	size_t n_value_counts;
	const floe_id_long *null_counts;
	size_t n_null_counts;
	const floe_id_long *nan_counts;
	size_t n_nan_counts;
	const floe_id_bytes *lower;
	size_t n_lower;
	const floe_id_bytes *upper;
	size_t n_upper;
} floe_file_metrics;

bool floe_eval_metrics(const floe_expr *bound, const floe_file_metrics *m);

/*
 * The residual of a bound filter for a file of spec `spec` with partition p:
 * predicates on columns that are identity partition fields are decided by
 * the partition value (the rows of the file all share it).
 */
floe_expr *floe_expr_residual(floe_arena *a, const floe_expr *bound,
			      const floe_partition_spec *spec, const floe_partition *p);

/* Evaluate a bound predicate on one value (NULL value: is_null set). */
bool floe_eval_value(const floe_expr *pred, const floe_value *v);

/* SQL LIKE: '%' any text, '_' one UTF-8 character, '\\' escapes the next one. */
bool floe_like_match(const uint8_t *s, size_t n, const uint8_t *pat, size_t pn);
/* The literal prefix of a LIKE pattern (before the first unescaped wildcard),
 * unescaped into out (cap >= pn); its length. */
size_t floe_like_prefix(const uint8_t *pat, size_t pn, uint8_t *out);

#endif
