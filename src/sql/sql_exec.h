/*
 * sql_exec.h — the SQL session shared by the executor's files: catalogs,
 * the current catalog and database, source tables, SET options, output.
 *
 * sql_exec.c runs catalogs, DDL, SET and SHOW/DESCRIBE; sql_run.c runs
 * INSERT (compiled onto a streaming pipeline) and SELECT (a scan).
 */
#ifndef FLOE_SQL_SQL_EXEC_H
#define FLOE_SQL_SQL_EXEC_H

#include <stdatomic.h>

#include "floe/pipeline.h"
#include "floe/scan.h"
#include "floe/sql.h"
#include "iceberg/types.h"
#include "sql/sql_ast.h"
#include "util/buf.h"
#include "util/str.h"

typedef struct sql_catalog {
	char *name;
	floe_catalog *cat;
	bool owned;
	char *type;      /* "sql", "filesystem" */
	char *uri;       /* sql: the database; NULL for filesystem */
	char *warehouse;
	char *default_db;
	bool planned; /* floe_sql_pipelines: an Iceberg catalog not opened (cat NULL) */
} sql_catalog;

/* floe_sql_pipelines: an Iceberg table its script creates (in memory only). */
typedef struct sql_planned {
	char *catalog, *db, *name;
	const sql_stmt *def; /* CREATE TABLE (in a script the session keeps) */
} sql_planned;

/* A source table (connector filesystem or datagen): lives in the session. */
typedef struct sql_source {
	char *catalog, *db, *name;
	const sql_stmt *def; /* CREATE TABLE (in a script the session keeps) */
	const sql_script *script;
} sql_source;

/* A 'connector'='iceberg' table: a name in the session for a table of a catalog. */
typedef struct sql_alias {
	char *catalog, *db, *name;          /* as the session names it */
	char *to_catalog, *to_db, *to_name; /* the Iceberg table */
} sql_alias;

struct floe_sql {
	sql_alias *aliases;
	size_t n_aliases;
	floe_sql_opts opts;
	sql_catalog **cats;
	size_t n_cats;
	size_t cur_cat;
	char *cur_db;
	sql_source *sources;
	size_t n_sources;
	floe_strmap set; /* SET 'k' = 'v' */
	sql_script **scripts; /* kept: source tables point into them */
	size_t n_scripts;
	char **texts;
	_Atomic(floe_pipeline *) running;
	atomic_int stop_req; /* 1 stop, 2 cancel */
	/* floe_sql_pipelines: DDL in memory, each INSERT job's YAML to plan_fn */
	bool planning;
	floe_sql_pipeline_fn plan_fn;
	void *plan_payload;
	sql_planned *planned;
	size_t n_planned;
};

/* The current statement while it runs (for errors). */
typedef struct sql_ctx {
	floe_sql *s;
	const sql_script *sc;
	const sql_stmt *st;
	floe_error *err;
	floe_arena *a; /* scratch for this statement */
	/* a streaming SELECT's poll: read only the appends after inc_after (-1: from
	 * the first snapshot) through inc_end; else (inc_end >= 0) the table at inc_end */
	bool inc;
	int64_t inc_after, inc_end;
	bool inc_skip; /* skip overwrite and delete snapshots */
} sql_ctx;

/* An error pointing at off in the script. */
int sql_err(sql_ctx *c, int code, uint32_t off, const char *fmt, ...) FLOE_PRINTF(4, 5);
/* Write text to the session's output. */
int sql_out(floe_sql *s, const char *text, size_t n);
int sql_outf(floe_sql *s, const char *fmt, ...) FLOE_PRINTF(2, 3);

/* A result set printed as Flink's SQL client prints it (tableau). */
typedef struct sql_rows {
	floe_arena *a;
	const char **cols;
	size_t n_cols;
	/* per column, for --format json: 'n' number, 'b' boolean, 'j' JSON text
	 * (nested values), else a string; NULL: every column a string */
	const char *kinds;
	const char ***rows;
	size_t n_rows, cap;
} sql_rows;
int sql_rows_init(sql_rows *r, floe_arena *a, const char *const *cols, size_t n_cols) FLOE_WUR;
int sql_rows_add(sql_rows *r, const char *const *cells) FLOE_WUR;
int sql_rows_print(floe_sql *s, const sql_rows *r) FLOE_WUR;

/* A resolved table name. meta: "snapshots" for db.t$snapshots, else NULL. */
typedef struct sql_ref {
	sql_catalog *cat;
	const char *db, *table, *meta;
} sql_ref;
int sql_resolve(sql_ctx *c, const sql_name *nm, sql_ref *out) FLOE_WUR;
/* An error unless cat is an Iceberg catalog (default_catalog may hold only
 * source tables). */
int sql_need_catalog(sql_ctx *c, const sql_catalog *cat, uint32_t off) FLOE_WUR;
/* The source table a name refers to, or NULL. */
const sql_source *sql_find_source(floe_sql *s, const sql_ref *r);
/* An Iceberg table an INSERT reads, as a source table (connector 'floe-iceberg'). */
int sql_iceberg_source(sql_ctx *c, const sql_ref *r, const sql_opt *hints, size_t n_hints, uint32_t off,
		       const sql_source **out) FLOE_WUR;
/* A source table named like r: these columns, these WITH options (text). */
int sql_make_source(sql_ctx *c, const sql_ref *r, const floe_field *const *fields, size_t n_fields,
		    const char *with, const sql_source **out) FLOE_WUR;
/* rows as JSON lines (--format json's form) */
int sql_rows_json(floe_buf *b, const sql_rows *r) FLOE_WUR;
/* rows as CSV (--format csv's form), the header line first when header */
int sql_rows_csv(floe_buf *b, const sql_rows *r, bool header) FLOE_WUR;
/* The value of option key in opts (NULL when absent). */
const char *sql_opt_get(const sql_opt *opts, size_t n, const char *key);
/* Flink type -> Iceberg type ("STRING" -> string); ids from *next_id. */
int sql_iceberg_type(sql_ctx *c, const sql_type *t, int32_t *next_id, const floe_type **out) FLOE_WUR;

/* The Iceberg schema of a CREATE TABLE's columns (in c->a). */
int sql_build_schema(sql_ctx *c, const sql_stmt *st, floe_schema **out) FLOE_WUR;
/* PARTITIONED BY (...) as floe's partition expression text. */
int sql_partition_text(sql_ctx *c, const sql_stmt *st, floe_buf *b) FLOE_WUR;
/* The table a planning session's script created, or NULL. */
const sql_planned *sql_find_planned(floe_sql *s, const sql_ref *r);

/* sql_run.c */
int sql_run_insert(sql_ctx *c, const sql_stmt *const *inserts, size_t n) FLOE_WUR;
int sql_run_select(sql_ctx *c, const sql_select *q) FLOE_WUR;
/* Render a WHERE as floe's filter text (scan: the scan dialect). */
int sql_filter_text(sql_ctx *c, const sql_expr *e, bool scan, floe_buf *out) FLOE_WUR;

#endif
