/*
 * sqldb.h — the small SQL interface the JDBC-compatible catalog runs on
 * (SQLite embedded, PostgreSQL over libpq). Statements use `?` placeholders;
 * parameters and result cells are text (NULL allowed).
 */
#ifndef FLOE_CATALOG_SQLDB_H
#define FLOE_CATALOG_SQLDB_H

#include "floe/common.h"

typedef struct floe_sqldb floe_sqldb;

/* One result row: n cells, each a string or NULL. Non-zero stops. */
typedef int (*floe_sql_row_fn)(const char *const *cells, size_t n, void *payload);

typedef struct floe_sqldb_ops {
	/* Run one statement; rows go to fn (may be NULL); *changes receives the
	 * number of rows an INSERT/UPDATE/DELETE touched (may be NULL).
	 * A unique-key violation is FLOE_EEXISTS; a busy/locked database after
	 * the timeout is a retryable FLOE_ETIMEDOUT; a connection lost while a
	 * write statement was out is FLOE_ECOMMITUNKNOWN (the server may have
	 * run it). */
	int (*exec)(floe_sqldb *db, const char *sql, const char *const *params, size_t n_params,
		    floe_sql_row_fn fn, void *payload, long *changes, floe_error *err);
	/* Does table `table` have column `column`? */
	int (*has_column)(floe_sqldb *db, const char *table, const char *column, bool *out,
			  floe_error *err);
	void (*close)(floe_sqldb *db);
} floe_sqldb_ops;

struct floe_sqldb {
	const floe_sqldb_ops *ops;
	const char *dialect; /* "sqlite" or "postgresql" */
};

/* path: a file path ("" or ":memory:" for a private in-memory database). */
int floe_sqldb_open_sqlite(floe_sqldb **out, const char *path, int busy_timeout_ms,
			   floe_error *err) FLOE_WUR;
/* conninfo: a libpq connection string or postgresql:// URI. */
int floe_sqldb_open_postgres(floe_sqldb **out, const char *conninfo, floe_error *err) FLOE_WUR;

/* By URI: "postgresql://…", "postgres://…", "jdbc:postgresql:…" (libpq);
 * "sqlite:///path", "jdbc:sqlite:path", "sqlite:path" or a plain path. */
int floe_sqldb_open_uri(floe_sqldb **out, const char *uri, int busy_timeout_ms,
			floe_error *err) FLOE_WUR;

static inline int floe_sql_exec(floe_sqldb *db, const char *sql, const char *const *params,
				size_t n, floe_sql_row_fn fn, void *payload, long *changes,
				floe_error *err)
{
	return db->ops->exec(db, sql, params, n, fn, payload, changes, err);
}

#endif
