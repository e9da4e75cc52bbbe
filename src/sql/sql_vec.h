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

/* True when q needs the executor (anything beyond columns, a pushed filter
 * and LIMIT). */
bool sql_vec_needed(const sql_select *q);
/* Run q and print its rows. */
int sql_vec_select(sql_ctx *c, const sql_select *q) FLOE_WUR;

#endif
