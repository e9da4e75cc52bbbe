/*
 * sqlite.c — the SQLite driver for the SQL catalog (and the SQL lock table).
 *
 * The database is opened in WAL mode with a busy timeout, so several floe
 * processes (and PyIceberg, and Java's JdbcCatalog through xerial's driver)
 * can share one catalog file: writers serialise on SQLite's lock, readers
 * never block.
 */
#include <sqlite3.h>
#include <string.h>

#include "catalog/sqldb.h"
#include "util/alloc.h"

typedef struct sqlite_db {
	floe_sqldb base;
	sqlite3 *db;
	char *path;
} sqlite_db;

static int map_rc(sqlite_db *s, int rc, const char *sql, floe_error *err)
{
	int ext = sqlite3_extended_errcode(s->db);
	if (rc == SQLITE_CONSTRAINT || ext == SQLITE_CONSTRAINT_PRIMARYKEY ||
	    ext == SQLITE_CONSTRAINT_UNIQUE)
		return floe_error_set(err, FLOE_EEXISTS, "sqlite '%s': %s", s->path,
				      sqlite3_errmsg(s->db));
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return floe_error_set_retryable(err, FLOE_ETIMEDOUT, "sqlite '%s': database is locked",
				      s->path);
	if (rc == SQLITE_NOMEM)
		return floe_error_oomf(err, "sqlite: out of memory");
	if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB)
		return floe_error_corrupt(err, "sqlite '%s': %s", s->path,
				      sqlite3_errmsg(s->db));
	(void)sql;
	return floe_error_set(err, FLOE_EIO, "sqlite '%s': %s", s->path, sqlite3_errmsg(s->db));
}

static int s_exec(floe_sqldb *db, const char *sql, const char *const *params, size_t n_params,
		  floe_sql_row_fn fn, void *payload, long *changes, floe_error *err)
{
	sqlite_db *s = (sqlite_db *)db;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	int status = FLOE_OK;
	if (rc != SQLITE_OK)
		return map_rc(s, rc, sql, err);
	for (size_t i = 0; i < n_params; i++) {
		if (params[i])
			rc = sqlite3_bind_text(st, (int)i + 1, params[i], -1, SQLITE_TRANSIENT);
		else
			rc = sqlite3_bind_null(st, (int)i + 1);
		if (rc != SQLITE_OK) {
			status = map_rc(s, rc, sql, err);
			goto done;
		}
	}
	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			status = map_rc(s, rc, sql, err);
			goto done;
		}
		if (fn) {
			const char *cells[32];
			int nc = sqlite3_column_count(st);
			if (nc > 32)
				nc = 32;
			for (int i = 0; i < nc; i++)
				cells[i] = (const char *)sqlite3_column_text(st, i);
			if ((status = fn(cells, (size_t)nc, payload)))
				goto done;
		}
	}
	if (changes)
		*changes = (long)sqlite3_changes(s->db);
done:
	sqlite3_finalize(st);
	return status;
}

static int s_has_column(floe_sqldb *db, const char *table, const char *column, bool *out,
			floe_error *err)
{
	sqlite_db *s = (sqlite_db *)db;
	int rc = sqlite3_table_column_metadata(s->db, NULL, table, column, NULL, NULL, NULL, NULL,
					       NULL);
	(void)err;
	*out = rc == SQLITE_OK;
	return FLOE_OK;
}

static void s_close(floe_sqldb *db)
{
	sqlite_db *s = (sqlite_db *)db;
	sqlite3_close_v2(s->db);
	floe_free(s->path);
	floe_free(s);
}

static const floe_sqldb_ops sqlite_ops = {s_exec, s_has_column, s_close};

int floe_sqldb_open_sqlite(floe_sqldb **out, const char *path, int busy_timeout_ms,
			   floe_error *err)
{
	sqlite_db *s = floe_calloc(1, sizeof(*s));
	int rc;
	if (!s || !(s->path = floe_strdup(path && *path ? path : ":memory:"))) {
		floe_free(s);
		return floe_error_oom(err);
	}
	rc = sqlite3_open_v2(s->path, &s->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			     NULL);
	if (rc != SQLITE_OK) {
		int code = floe_error_set(err, FLOE_EIO, "cannot open sqlite database '%s': %s",
					  s->path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
		sqlite3_close_v2(s->db);
		floe_free(s->path);
		floe_free(s);
		return code;
	}
	sqlite3_busy_timeout(s->db, busy_timeout_ms > 0 ? busy_timeout_ms : 30000);
	s->base.ops = &sqlite_ops;
	s->base.dialect = "sqlite";
	if (strcmp(s->path, ":memory:") != 0) {
		/* WAL lets readers run beside a writer; ignore failure (e.g. network fs) */
		sqlite3_exec(s->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
		sqlite3_exec(s->db, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
	}
	*out = &s->base;
	return FLOE_OK;
}
