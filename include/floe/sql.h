/*
 * floe/sql.h — Flink SQL on floe: `floe sql -f job.sql` runs a script of
 * catalog and table DDL, SET, streaming INSERT ... SELECT jobs, statement
 * sets and SELECT queries (docs/sql.md).
 *
 * A session holds the catalogs (CREATE CATALOG ... WITH ('type'='iceberg',
 * 'catalog-type'='hadoop'|'jdbc'|'rest'|'glue', ...)), the current catalog and database,
 * the source tables (CREATE TABLE ... WITH ('connector'='filesystem' |
 * 'datagen')) and the SET options. Its first catalog, `default_catalog`,
 * is the one the caller passes.
 *
 * A script is parsed whole before anything runs: a syntax error anywhere
 * changes nothing. Errors say where: "job.sql: line 3, column 14: unknown
 * column 'x'" followed by the source line and a caret.
 *
 * Errors: FLOE_EINVAL (bad SQL, unknown names, bad options: the message
 * points at the statement), FLOE_EUNSUPPORTED (valid Flink SQL that floe
 * does not run yet: the message says what), and the catalog's, the
 * pipeline's and the scan's errors.
 *
 * Thread-safety: a session is used by one thread; floe_sql_stop may be
 * called from any thread and from a signal handler.
 */
#ifndef FLOE_SQL_H
#define FLOE_SQL_H

#include "floe/catalog.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floe_sql floe_sql;

/* Result sets: Flink's tableau (aligned, +---+ rules), or one JSON object per
 * row (numbers and booleans as JSON values, the rest as strings, NULL as
 * null), or CSV with a header line (RFC 4180 quoting, NULL as an empty
 * field). */
typedef enum floe_sql_format { FLOE_SQL_TABLEAU = 0, FLOE_SQL_JSON, FLOE_SQL_CSV } floe_sql_format;

typedef struct floe_sql_opts {
	int version;            /* 1 */
	floe_catalog *catalog;  /* default_catalog (borrowed; must outlive the session); may be NULL */
	const char *base_dir;   /* relative paths (source 'path') resolve here; NULL = cwd */
	floe_write_fn out;      /* results (aligned tables, messages); NULL = discarded */
	void *out_payload;
	bool quiet;             /* no "[OK]" lines, no job summaries */
	/* from=to rules for tables read by path (FROM '/data/t'), as floe scan's
	 * --path-map (floe_table_open_path) */
	const char *const *path_map;
	size_t n_path_map;
	floe_sql_format format; /* how result sets print */
	const char *errors;     /* INSERT jobs' bad records: "dead-letter" (NULL) or "fail";
				   SET 'errors' wins */
	int64_t memory_budget;  /* a query's working memory in bytes (0: half the machine's);
				   SET 'sql.memory-budget' wins */
} floe_sql_opts;
#define FLOE_SQL_OPTS_INIT {1, NULL, NULL, NULL, NULL, false, NULL, 0, FLOE_SQL_TABLEAU, NULL, 0}

FLOE_EXPORT int floe_sql_new(floe_sql **out, const floe_sql_opts *opts, floe_error *err) FLOE_WUR;
FLOE_EXPORT void floe_sql_free(floe_sql *s);

/*
 * Parse and run a script (statements separated by ';'). origin (may be
 * NULL) names it in messages ("job.sql"). Stops at the first failing
 * statement; what earlier statements did stays done.
 */
FLOE_EXPORT int floe_sql_exec(floe_sql *s, const char *text, size_t n, const char *origin,
			      floe_error *err) FLOE_WUR;

/* Parse only (no catalog touched). */
FLOE_EXPORT int floe_sql_check(const char *text, size_t n, const char *origin,
			       floe_error *err) FLOE_WUR;

/*
 * Plan only: parse the script and interpret its catalog and table DDL and
 * SET in memory — no catalog is opened, created or changed, no source is
 * read — and give each INSERT job (or statement set) as the pipeline YAML
 * floe sql would run (floe/pipeline.h's format), to fn in script order.
 * Beyond what the run path writes, the YAML carries what the target
 * tables' CREATE TABLE says (partition-by, PRIMARY KEY as
 * equality-field-columns, WITH properties such as write.upsert.enabled and
 * write.distribution-mode), so floe_plan_run can predict it. A target
 * table must be created by the script (CREATE TABLE [IF NOT EXISTS]):
 * FLOE_EUNSUPPORTED otherwise. SHOW, DESCRIBE, SELECT, ALTER TABLE and
 * DROP TABLE of Iceberg tables are skipped. job: "sql-<id>", the id floe
 * sql gives the job; line: its statement's first line. fn's non-zero
 * return stops and is returned. What `floe plan job.sql` runs.
 */
typedef int (*floe_sql_pipeline_fn)(const char *job, unsigned line, const char *yaml, size_t n,
				    void *payload);
FLOE_EXPORT int floe_sql_pipelines(const char *text, size_t n, const char *origin,
				   floe_sql_pipeline_fn fn, void *payload, floe_error *err) FLOE_WUR;

/* A running INSERT job finishes its current checkpoint and ends
 * (async-signal-safe); cancel: ends without another commit. */
FLOE_EXPORT void floe_sql_stop(floe_sql *s);
FLOE_EXPORT void floe_sql_cancel(floe_sql *s);

#ifdef __cplusplus
}
#endif
#endif
