/*
 * sqldb.c — open a SQL database by the URI forms floe, Java and PyIceberg
 * use for catalogs.
 */
#include <string.h>

#include "catalog/sqldb.h"
#include "io/aws_secret.h"

static int open_uri(floe_sqldb **out, const char *uri, int busy_timeout_ms, floe_error *err);

/* A ${secret:...} in the URI (a lock database's, "postgresql://floe:
 * ${secret:pg#password}@db/locks") is resolved here; each secret is asked
 * once per process (io/aws_secret.h). */
int floe_sqldb_open_uri(floe_sqldb **out, const char *uri, int busy_timeout_ms, floe_error *err)
{
	char *full = NULL;
	int rc = floe_secret_expand(&full, uri, true, err);
	if (rc)
		return floe_error_prefix(err, rc, "database URI: ");
	rc = open_uri(out, full ? full : uri, busy_timeout_ms, err);
	floe_secret_free(full);
	return rc;
}

static int open_uri(floe_sqldb **out, const char *uri, int busy_timeout_ms, floe_error *err)
{
	if (strncmp(uri, "postgresql://", 13) == 0 || strncmp(uri, "postgres://", 11) == 0 ||
	    strncmp(uri, "jdbc:postgresql:", 16) == 0)
		return floe_sqldb_open_postgres(out, strncmp(uri, "jdbc:", 5) == 0 ? uri + 5 : uri,
						err);
	const char *path = uri;
	if (strncmp(path, "sqlite:///", 10) == 0)
		path += 9;
	else if (strncmp(path, "sqlite://", 9) == 0)
		path += 9;
	else if (strncmp(path, "jdbc:sqlite:", 12) == 0)
		path += 12;
	else if (strncmp(path, "sqlite:", 7) == 0)
		path += 7;
	return floe_sqldb_open_sqlite(out, path, busy_timeout_ms, err);
}
