/*
 * postgres.c — the PostgreSQL driver for the SQL catalog (libpq). `?`
 * placeholders are rewritten to $1..$n; text parameters and results.
 */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/sqldb.h"
#include "util/alloc.h"
#include "util/buf.h"

typedef struct pg_db {
	floe_sqldb base;
	PGconn *conn;
} pg_db;

static int rewrite(const char *sql, floe_buf *out)
{
	int n = 0, rc = 0;
	bool quoted = false;
	for (const char *p = sql; *p && !rc; p++) {
		if (*p == '\'')
			quoted = !quoted;
		if (*p == '?' && !quoted)
			rc = floe_buf_printf(out, "$%d", ++n);
		else
			rc = floe_buf_putc(out, *p);
	}
	return rc;
}

static int pg_exec(floe_sqldb *db, const char *sql, const char *const *params, size_t n_params,
		   floe_sql_row_fn fn, void *payload, long *changes, floe_error *err)
{
	pg_db *g = (pg_db *)db;
	floe_buf q;
	PGresult *res;
	int status = FLOE_OK;
	floe_buf_init(&q, 0);
	if (rewrite(sql, &q)) {
		floe_buf_reset(&q);
		return floe_error_oom(err);
	}
	/* a connection lost earlier (server restart, network): reconnect; until
	 * the statement is sent, nothing has happened */
	if (PQstatus(g->conn) != CONNECTION_OK) {
		PQreset(g->conn);
		if (PQstatus(g->conn) != CONNECTION_OK) {
			floe_buf_reset(&q);
			return floe_error_set_retryable(err, FLOE_EIO, "postgresql: cannot reconnect: %s",
							PQerrorMessage(g->conn));
		}
	}
	res = PQexecParams(g->conn, floe_buf_cstr(&q), (int)n_params, NULL, params, NULL, NULL, 0);
	floe_buf_reset(&q);
	ExecStatusType st = PQresultStatus(res);
	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && PQstatus(g->conn) != CONNECTION_OK) {
		/* The connection broke while the statement was out: the server may
		 * have run it. For a read that is only a failure; for a write
		 * (a catalog swap) the outcome is unknown. */
		bool read = strncmp(sql, "SELECT", 6) == 0;
		status = read ? floe_error_set_retryable(err, FLOE_EIO, "postgresql: connection lost: %s",
							 PQerrorMessage(g->conn))
			      : floe_error_set(err, FLOE_ECOMMITUNKNOWN,
					       "postgresql: connection lost while the statement was "
					       "running, its outcome is unknown: %s",
					       PQerrorMessage(g->conn));
		PQclear(res);
		return status;
	}
	if (st == PGRES_TUPLES_OK) {
		int rows = PQntuples(res), cols = PQnfields(res);
		if (cols > 32)
			cols = 32;
		for (int r = 0; r < rows && fn && !status; r++) {
			const char *cells[32];
			for (int c = 0; c < cols; c++)
				cells[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
			status = fn(cells, (size_t)cols, payload);
		}
	} else if (st == PGRES_COMMAND_OK) {
		if (changes) {
			const char *t = PQcmdTuples(res);
			*changes = t && *t ? strtol(t, NULL, 10) : 0;
		}
	} else {
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		int code = state && strcmp(state, "23505") == 0 ? FLOE_EEXISTS : FLOE_EIO;
		status = floe_error_set(err, code, "postgresql: %s", PQerrorMessage(g->conn));
	}
	PQclear(res);
	return status;
}

static int pg_has_column(floe_sqldb *db, const char *table, const char *column, bool *out,
			 floe_error *err)
{
	const char *p[] = {table, column};
	PGresult *res = PQexecParams(((pg_db *)db)->conn,
				     "SELECT count(*) FROM information_schema.columns WHERE "
				     "table_name = $1 AND column_name = $2",
				     2, NULL, p, NULL, NULL, 0);
	int rc = FLOE_OK;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = floe_error_set(err, FLOE_EIO, "postgresql: %s",
				    PQerrorMessage(((pg_db *)db)->conn));
	else
		*out = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "0") != 0;
	PQclear(res);
	return rc;
}

static void pg_close(floe_sqldb *db)
{
	pg_db *g = (pg_db *)db;
	PQfinish(g->conn);
	floe_free(g);
}

static const floe_sqldb_ops pg_ops = {pg_exec, pg_has_column, pg_close};

int floe_sqldb_open_postgres(floe_sqldb **out, const char *conninfo, floe_error *err)
{
	pg_db *g = floe_calloc(1, sizeof(*g));
	if (!g)
		return floe_error_oom(err);
	g->conn = PQconnectdb(conninfo);
	if (!g->conn || PQstatus(g->conn) != CONNECTION_OK) {
		int rc = floe_error_set(err, FLOE_EIO, "postgresql: %s",
					g->conn ? PQerrorMessage(g->conn) : "out of memory");
		PQfinish(g->conn);
		floe_free(g);
		return rc;
	}
	g->base.ops = &pg_ops;
	g->base.dialect = "postgresql";
	*out = &g->base;
	return FLOE_OK;
}
