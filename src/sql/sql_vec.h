/*
 * sql_vec.h — floe sql's query executor: SELECT with computed expressions,
 * functions, aggregates, GROUP BY / HAVING, DISTINCT, ORDER BY,
 * LIMIT / OFFSET and hash joins, evaluated a column at a time over the
 * scan's Arrow batches.
 *
 * DESIGN: floe's own executor rather than an embedded engine (see
 * docs/architecture.md, "SQL"): the scan already produces typed Arrow
 * batches with pruning and deletes applied, and the types (exact decimals,
 * microsecond timestamps) are Iceberg's. Each batch's columns become
 * typed value vectors; an expression is bound once (names, types, implicit
 * casts; errors point at the expression with a caret) and evaluated per
 * batch into a vector. WHERE conjuncts that floe's filter grammar can say
 * are also pushed into scan planning (pruning files and row groups); the
 * executor evaluates the whole WHERE again, so pushing is only an
 * optimisation. Aggregation hashes the group keys' bytes; joins build a
 * hash table on the right side's equality keys and evaluate any other ON
 * condition on the candidate pairs. SQL's three-valued logic holds: NULL
 * propagates through operators and functions, AND/OR follow Kleene's
 * tables, WHERE/HAVING/ON keep only TRUE.
 *
 * Thread-safety: one statement at a time, as the session.
 */
#ifndef FLOE_SQL_SQL_VEC_H
#define FLOE_SQL_SQL_VEC_H

#include "sql/sql_exec.h"
#include "stream/stream_project.h"

/* True when q needs the executor (anything beyond columns, a pushed filter
 * and LIMIT). */
bool sql_vec_needed(const sql_select *q);
/* Run q and print its rows. */
int sql_vec_select(sql_ctx *c, const sql_select *q) FLOE_WUR;
/* INSERT ... VALUES: each row (a ROW(...) call of the parser) evaluated, as
 * JSON lines keyed by names (one per value) into out. */
int sql_vec_values(sql_ctx *c, sql_expr *const *rows, size_t n_rows, const char *const *names,
		   size_t n_names, floe_buf *out) FLOE_WUR;
/* What a query may hold (SET 'sql.memory-budget', floe_sql_opts.memory_budget, or half the
 * machine's memory), and the error past it (at q). */
int64_t sql_query_budget(const sql_ctx *c);
int sql_budget_err(sql_ctx *c, const sql_select *q, int64_t budget) FLOE_WUR;

/*
 * A streaming INSERT's computed projection: SELECT item i (items[i], or
 * source column star_col[i] when items[i] is NULL) goes to the table's
 * column cols[i] (ts: the table's schema); the table's other columns get
 * NULL; q: the INSERT's SELECT (its WHERE's columns are decoded too; its
 * position is that of errors no item has; t.col names its FROM's alias);
 * with_where: the projection evaluates q's WHERE too (a row it does not keep
 * is neither written nor a dead letter). Names bind against the source's columns (src), types are checked
 * and an assignment cast added now — an unknown function, column or a type
 * that cannot go into its column is an error at the item. Lives in c->a
 * and reads c->sc's text (both must outlive the job); sql_proj_free frees
 * what the arena does not hold.
 */
typedef struct sql_proj sql_proj;
int sql_proj_new(sql_ctx *c, const sql_source *src, const sql_expr *const *items,
		 const int *star_col, const char *const *cols, size_t n, const sql_select *q,
		 bool with_where, const floe_schema *ts, sql_proj **out) FLOE_WUR;
/* The runtime's hook (stream_table_cfg.project): apply is thread-safe. */
const stream_project *sql_proj_hook(const sql_proj *p);
void sql_proj_free(sql_proj *p);

#endif
