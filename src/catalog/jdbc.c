/*
 * jdbc.c — the SQL catalog: the tables and compare-and-swap of Java's
 * JdbcCatalog and PyIceberg's SqlCatalog, on SQLite or PostgreSQL, so each of
 * them opens the catalog the others write.
 *
 * spec: ../shared/iceberg-notes.md section 7.4. Namespace strings are levels
 * joined by '.'; a namespace exists when any table row or property row names
 * it (or a child of it); the commit is
 *   UPDATE iceberg_tables SET metadata_location = new, previous_metadata_location = old
 *    WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?
 *      AND metadata_location = old
 * and exactly one changed row means the swap won.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_impl.h"
#include "catalog/sqldb.h"
#include "util/alloc.h"
#include "util/rand.h"

typedef struct jdbc_catalog {
	floe_catalog base;
	floe_sqldb *db;
	char *name;
	char *warehouse;
} jdbc_catalog;

#define TABLE_PRED "(iceberg_type = 'TABLE' OR iceberg_type IS NULL)"

static int init_schema(jdbc_catalog *c, floe_error *err)
{
	bool has;
	int rc = floe_sql_exec(c->db,
			       "CREATE TABLE IF NOT EXISTS iceberg_tables ("
			       "catalog_name VARCHAR(255) NOT NULL, "
			       "table_namespace VARCHAR(255) NOT NULL, "
			       "table_name VARCHAR(255) NOT NULL, "
			       "metadata_location VARCHAR(1000), "
			       "previous_metadata_location VARCHAR(1000), "
			       "iceberg_type VARCHAR(5), "
			       "PRIMARY KEY (catalog_name, table_namespace, table_name))",
			       NULL, 0, NULL, NULL, NULL, err);
	if (rc)
		return rc;
	rc = floe_sql_exec(c->db,
			   "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
			   "catalog_name VARCHAR(255) NOT NULL, "
			   "namespace VARCHAR(255) NOT NULL, "
			   "property_key VARCHAR(255) NOT NULL, "
			   "property_value VARCHAR(1000), "
			   "PRIMARY KEY (catalog_name, namespace, property_key))",
			   NULL, 0, NULL, NULL, NULL, err);
	if (rc)
		return rc;
	/* a Java "V0" catalog has no iceberg_type column: add it, as PyIceberg does
	 * (Java notices the column and switches to V1 semantics) */
	if ((rc = c->db->ops->has_column(c->db, "iceberg_tables", "iceberg_type", &has, err)))
		return rc;
	if (!has)
		rc = floe_sql_exec(c->db, "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)",
				   NULL, 0, NULL, NULL, NULL, err);
	return rc;
}

/* LIKE pattern for "children of ns": escape ! _ % with !, append ".%". */
static char *child_pattern(const char *ns)
{
	size_t n = strlen(ns);
	char *p = floe_malloc(2 * n + 3), *o = p;
	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (ns[i] == '!' || ns[i] == '_' || ns[i] == '%')
			*o++ = '!';
		*o++ = ns[i];
	}
	*o++ = '.';
	*o++ = '%';
	*o = 0;
	return p;
}

static int found_cb(const char *const *cells, size_t n, void *payload)
{
	(void)cells;
	(void)n;
	*(bool *)payload = true;
	return 1; /* stop */
}

static int ns_exists(jdbc_catalog *c, const char *ns, bool *exists, floe_error *err)
{
	char *pat = child_pattern(ns);
	int rc;
	*exists = false;
	if (!pat)
		return floe_error_oom(err);
	const char *p[] = {c->name, ns, pat};
	rc = floe_sql_exec(c->db,
			   "SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND "
			   "(table_namespace = ? OR table_namespace LIKE ? ESCAPE '!') LIMIT 1",
			   p, 3, found_cb, exists, NULL, err);
	if (rc == 1)
		rc = 0;
	if (!rc && !*exists) {
		rc = floe_sql_exec(c->db,
				   "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? "
				   "AND (namespace = ? OR namespace LIKE ? ESCAPE '!') LIMIT 1",
				   p, 3, found_cb, exists, NULL, err);
		if (rc == 1)
			rc = 0;
	}
	floe_free(pat);
	return rc;
}

static int j_namespace_exists(floe_catalog *cat, const char *ns, bool *exists, floe_error *err)
{
	return ns_exists((jdbc_catalog *)cat, ns, exists, err);
}

static int put_prop(jdbc_catalog *c, const char *ns, const char *k, const char *v,
		    floe_error *err)
{
	/* one statement: a DELETE then an INSERT let a second process's DELETE
	 * remove the first's row between them, and the first then found no
	 * namespace for the table it was creating (SQLite >= 3.24, PostgreSQL) */
	const char *ins[] = {c->name, ns, k, v};
	return floe_sql_exec(c->db,
			     "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, "
			     "property_key, property_value) VALUES (?, ?, ?, ?) ON CONFLICT "
			     "(catalog_name, namespace, property_key) DO UPDATE SET "
			     "property_value = excluded.property_value",
			     ins, 4, NULL, NULL, NULL, err);
}

static int j_create_namespace(floe_catalog *cat, const char *ns, const floe_strmap *props,
			      floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	bool exists;
	int rc;
	if (strstr(ns, "..") || ns[0] == '.' || ns[strlen(ns) - 1] == '.')
		return floe_error_set(err, FLOE_EINVAL, "bad namespace '%s'", ns);
	if ((rc = ns_exists(c, ns, &exists, err)))
		return rc;
	if (exists)
		return floe_error_set(err, FLOE_EEXISTS, "namespace '%s' already exists", ns);
	if (props && props->len) {
		for (size_t i = 0; i < props->len && !rc; i++)
			rc = put_prop(c, ns, props->items[i].key, props->items[i].value, err);
	} else {
		rc = put_prop(c, ns, "exists", "true", err);
	}
	return rc;
}

typedef struct ns_list {
	const char *parent;
	char **items;
	size_t n, cap;
	int rc;
} ns_list;

static int ns_collect(const char *const *cells, size_t n, void *payload)
{
	ns_list *l = payload;
	const char *ns = n ? cells[0] : NULL;
	size_t pl = l->parent ? strlen(l->parent) : 0;
	const char *rest;
	if (!ns)
		return 0;
	if (pl) {
		if (strncmp(ns, l->parent, pl) != 0 || ns[pl] != '.')
			return 0;
		rest = ns + pl + 1;
	} else {
		rest = ns;
	}
	const char *dot = strchr(rest, '.');
	size_t cl = (size_t)(rest - ns) + (dot ? (size_t)(dot - rest) : strlen(rest));
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->items[i]) == cl && strncmp(l->items[i], ns, cl) == 0)
			return 0;
	if (FLOE_ARRAY_RESERVE(l->items, l->cap, l->n + 1) ||
	    !(l->items[l->n] = floe_strndup(ns, cl))) {
		l->rc = FLOE_ENOMEM;
		return 1;
	}
	l->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int j_list_namespaces(floe_catalog *cat, const char *parent, floe_name_fn fn,
			     void *payload, floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	ns_list l = {parent && *parent ? parent : NULL, NULL, 0, 0, 0};
	const char *p[] = {c->name};
	int rc = floe_sql_exec(c->db,
			       "SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name = ?",
			       p, 1, ns_collect, &l, NULL, err);
	if (!rc)
		rc = floe_sql_exec(c->db,
				   "SELECT DISTINCT namespace FROM iceberg_namespace_properties WHERE "
				   "catalog_name = ?",
				   p, 1, ns_collect, &l, NULL, err);
	if (!rc && l.rc)
		rc = floe_error_set(err, l.rc, "out of memory");
	if (!rc && l.n)
		qsort(l.items, l.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < l.n && !rc; i++)
		rc = fn(l.items[i], NULL, payload);
	for (size_t i = 0; i < l.n; i++)
		floe_free(l.items[i]);
	floe_free(l.items);
	return rc;
}

typedef struct name_list {
	char **items;
	size_t n, cap;
	int rc;
} name_list;

static int name_collect(const char *const *cells, size_t n, void *payload)
{
	name_list *l = payload;
	if (!n || !cells[0])
		return 0;
	if (FLOE_ARRAY_RESERVE(l->items, l->cap, l->n + 1) ||
	    !(l->items[l->n] = floe_strdup(cells[0]))) {
		l->rc = FLOE_ENOMEM;
		return 1;
	}
	l->n++;
	return 0;
}

static void name_list_free(name_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		floe_free(l->items[i]);
	floe_free(l->items);
}

static int j_list_tables(floe_catalog *cat, const char *ns, floe_name_fn fn, void *payload,
			 floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	name_list l = {0};
	const char *p[] = {c->name, ns};
	bool exists;
	int rc = ns_exists(c, ns, &exists, err);
	if (!rc && !exists)
		rc = floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns);
	if (!rc)
		rc = floe_sql_exec(c->db,
				   "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND "
				   "table_namespace = ? AND " TABLE_PRED " ORDER BY table_name",
				   p, 2, name_collect, &l, NULL, err);
	if (l.rc) /* name_collect stopped the query (rc 1) */
		rc = floe_error_oom(err);
	for (size_t i = 0; i < l.n && !rc; i++)
		rc = fn(ns, l.items[i], payload);
	name_list_free(&l);
	return rc;
}

static int j_drop_namespace(floe_catalog *cat, const char *ns, floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	bool exists, has_tables = false;
	char *pat;
	int rc = ns_exists(c, ns, &exists, err);
	if (rc)
		return rc;
	if (!exists)
		return floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns);
	pat = child_pattern(ns);
	if (!pat)
		return floe_error_oom(err);
	const char *p[] = {c->name, ns, pat};
	rc = floe_sql_exec(c->db,
			   "SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND "
			   "(table_namespace = ? OR table_namespace LIKE ? ESCAPE '!') LIMIT 1",
			   p, 3, found_cb, &has_tables, NULL, err);
	if (rc == 1)
		rc = 0;
	if (!rc && !has_tables) {
		bool child = false;
		const char *q[] = {c->name, pat};
		rc = floe_sql_exec(c->db,
				   "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? "
				   "AND namespace LIKE ? ESCAPE '!' LIMIT 1",
				   q, 2, found_cb, &child, NULL, err);
		if (rc == 1)
			rc = 0;
		has_tables = child;
	}
	floe_free(pat);
	if (rc)
		return rc;
	if (has_tables)
		return floe_error_set(err, FLOE_EINVAL,
				      "namespace '%s' is not empty (drop its tables and namespaces "
				      "first)",
				      ns);
	const char *d[] = {c->name, ns};
	return floe_sql_exec(c->db,
			     "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND "
			     "namespace = ?",
			     d, 2, NULL, NULL, NULL, err);
}

typedef struct prop_read {
	floe_strmap *out;
	int rc;
} prop_read;

static int prop_collect(const char *const *cells, size_t n, void *payload)
{
	prop_read *r = payload;
	if (n < 2 || !cells[0])
		return 0;
	if (strcmp(cells[0], "exists") == 0)
		return 0; /* bookkeeping, hidden like Java and PyIceberg do */
	if (floe_strmap_set(r->out, cells[0], cells[1] ? cells[1] : "")) {
		r->rc = FLOE_ENOMEM;
		return 1;
	}
	return 0;
}

static int j_load_ns_props(floe_catalog *cat, const char *ns, floe_strmap *out, floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	bool exists;
	prop_read r = {out, 0};
	int rc = ns_exists(c, ns, &exists, err);
	if (rc)
		return rc;
	if (!exists)
		return floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns);
	const char *p[] = {c->name, ns};
	rc = floe_sql_exec(c->db,
			   "SELECT property_key, property_value FROM iceberg_namespace_properties "
			   "WHERE catalog_name = ? AND namespace = ? ORDER BY property_key",
			   p, 2, prop_collect, &r, NULL, err);
	if (!rc && r.rc)
		rc = floe_error_oom(err);
	return rc;
}

static int j_update_ns_props(floe_catalog *cat, const char *ns, const floe_strmap *set,
			     const char *const *remove, size_t n_remove, floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	bool exists;
	int rc = ns_exists(c, ns, &exists, err);
	if (rc)
		return rc;
	if (!exists)
		return floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns);
	for (size_t i = 0; set && i < set->len && !rc; i++)
		rc = put_prop(c, ns, set->items[i].key, set->items[i].value, err);
	for (size_t i = 0; i < n_remove && !rc; i++) {
		const char *p[] = {c->name, ns, remove[i]};
		rc = floe_sql_exec(c->db,
				   "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? "
				   "AND namespace = ? AND property_key = ?",
				   p, 3, NULL, NULL, NULL, err);
	}
	return rc;
}

static int one_string(const char *const *cells, size_t n, void *payload)
{
	char **out = payload;
	if (n && cells[0] && !*out && !(*out = floe_strdup(cells[0])))
		return FLOE_ENOMEM; /* never "not found" for want of memory */
	return 0;
}

static int table_location(jdbc_catalog *c, const char *ns, const char *name, char **loc,
			  floe_error *err)
{
	const char *p[] = {c->name, ns, name};
	*loc = NULL;
	int rc = floe_sql_exec(c->db,
			       "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? "
			       "AND table_namespace = ? AND table_name = ? AND " TABLE_PRED,
			       p, 3, one_string, loc, NULL, err);
	if (rc)
		return rc;
	if (!*loc)
		return floe_error_set(err, FLOE_ENOTFOUND, "table '%s.%s' does not exist", ns, name);
	return FLOE_OK;
}

static int j_load_table(floe_catalog *cat, const char *ns, const char *name, floe_metadata **out,
			floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	char *loc;
	int rc = table_location(c, ns, name, &loc, err);
	if (rc)
		return rc;
	rc = floe_metadata_read(cat->io, loc, out, err);
	floe_free(loc);
	if (rc)
		floe_error_prefix(err, rc, "table '%s.%s': ", ns, name);
	return rc;
}

/* Write next's metadata file with Java's catalog naming; *out = its location. */
static int write_metadata_file(floe_fileio *io, const floe_metadata *base,
			       const floe_metadata *next, char **out, floe_error *err)
{
	int64_t v = base ? floe_metadata_file_version(base->metadata_location) + 1 : 0;
	char *dir = floe_metadata_dir(next);
	char uuid[37];
	int rc;
	if (!dir)
		return floe_error_oom(err);
	if (v < 0)
		v = 0;
	floe_uuid_v4_str(uuid);
	size_t n = strlen(dir) + 80;
	*out = floe_malloc(n);
	if (!*out) {
		floe_free(dir);
		return floe_error_oom(err);
	}
	snprintf(*out, n, "%s/%05lld-%s%s", dir, (long long)v, uuid,
		 floe_metadata_file_suffix(next));
	floe_free(dir);
	rc = floe_metadata_write_file(io, *out, next, err);
	if (rc) {
		floe_free(*out);
		*out = NULL;
	}
	return rc;
}

static int j_commit(floe_catalog *cat, const char *ns, const char *name, const floe_metadata *base,
		    const floe_metadata *next, char **location, floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	char *loc = NULL;
	long changes = 0;
	int rc;
	if (!base) {
		bool exists;
		if ((rc = ns_exists(c, ns, &exists, err)))
			return rc;
		if (!exists)
			return floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns);
		char *cur = NULL;
		rc = table_location(c, ns, name, &cur, NULL);
		floe_free(cur);
		if (rc == 0)
			return floe_error_set(err, FLOE_EEXISTS, "table '%s.%s' already exists", ns,
					      name);
	}
	if ((rc = write_metadata_file(cat->io, base, next, &loc, err)))
		return rc;
	if (floe_catalog__fault_lose_swap(cat)) {
		*location = loc;
		return floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				      "injected fault: the swap was lost on its way to the catalog");
	}
	if (!base) {
		const char *p[] = {c->name, ns, name, loc};
		rc = floe_sql_exec(c->db,
				   "INSERT INTO iceberg_tables (catalog_name, table_namespace, "
				   "table_name, metadata_location, previous_metadata_location, "
				   "iceberg_type) VALUES (?, ?, ?, ?, NULL, 'TABLE')",
				   p, 4, NULL, NULL, NULL, err);
		if (rc == FLOE_EEXISTS)
			floe_error_set(err, FLOE_EEXISTS, "table '%s.%s' already exists", ns, name);
	} else {
		const char *p[] = {loc, base->metadata_location, c->name, ns, name,
				   base->metadata_location};
		rc = floe_sql_exec(c->db,
				   "UPDATE iceberg_tables SET metadata_location = ?, "
				   "previous_metadata_location = ? WHERE catalog_name = ? AND "
				   "table_namespace = ? AND table_name = ? AND metadata_location = ? "
				   "AND " TABLE_PRED,
				   p, 6, NULL, NULL, &changes, err);
		if (!rc && changes != 1) {
			char *cur = NULL;
			int lr = table_location(c, ns, name, &cur, NULL);
			floe_free(cur);
			rc = lr == FLOE_ENOTFOUND
				     ? floe_error_set(err, FLOE_ENOTFOUND,
						      "table '%s.%s' was dropped meanwhile", ns, name)
				     : floe_error_set_retryable(err, FLOE_ECONFLICT,
								"table '%s.%s' changed since it was "
								"loaded (another writer committed "
								"first)",
								ns, name);
		}
	}
	if (rc == FLOE_ECOMMITUNKNOWN) {
		/* the statement may have run: the file may be current */
		*location = loc;
		return rc;
	}
	if (rc) {
		/* a statement that failed changed nothing: the file is ours to remove */
		floe_io_remove_quiet(cat->io, loc);
		floe_free(loc);
		return rc;
	}
	*location = loc;
	return FLOE_OK;
}

/*
 * Every table's compare-and-swap in one transaction (pipeline.atomic-commit):
 * the metadata files are written first, then BEGIN, one UPDATE per table
 * (each must change exactly one row), COMMIT. Any lost swap rolls the whole
 * transaction back (a retryable ECONFLICT); only a COMMIT whose answer was
 * lost is ECOMMITUNKNOWN (a statement before it that lost its connection
 * leaves a transaction the server rolls back). SQLite takes the write lock
 * up front (BEGIN IMMEDIATE), so two writers wait for each other through
 * the busy timeout instead of deadlocking on an upgrade.
 */
static int j_commit_tables(floe_catalog *cat, floe_catalog_change *ch, size_t n, floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	bool sqlite = !strcmp(c->db->dialect, "sqlite");
	size_t written = 0;
	int rc = FLOE_OK;
	for (; written < n; written++)
		if ((rc = write_metadata_file(cat->io, ch[written].base, ch[written].next,
					      &ch[written].location, err)))
			goto fail;
	if (floe_catalog__fault_lose_swap(cat))
		return floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				      "injected fault: the transaction was lost on its way to the "
				      "catalog");
	if ((rc = floe_sql_exec(c->db, sqlite ? "BEGIN IMMEDIATE" : "BEGIN", NULL, 0, NULL, NULL,
				NULL, err))) {
		if (rc == FLOE_ECOMMITUNKNOWN)
			rc = floe_error_set(err, FLOE_EIO, "BEGIN: %s", err ? err->msg : "");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		long changes = 0;
		const char *p[] = {ch[i].location, ch[i].base->metadata_location, c->name, ch[i].ns,
				   ch[i].name, ch[i].base->metadata_location};
		rc = floe_sql_exec(c->db,
				   "UPDATE iceberg_tables SET metadata_location = ?, "
				   "previous_metadata_location = ? WHERE catalog_name = ? AND "
				   "table_namespace = ? AND table_name = ? AND metadata_location = ? "
				   "AND " TABLE_PRED,
				   p, 6, NULL, NULL, &changes, err);
		if (rc == FLOE_ECOMMITUNKNOWN)
			rc = floe_error_set(err, FLOE_EIO, "table '%s.%s': %s", ch[i].ns, ch[i].name,
					    err ? err->msg : "");
		if (!rc && changes != 1)
			rc = floe_error_set_retryable(err, FLOE_ECONFLICT,
						      "table '%s.%s' changed since it was loaded "
						      "(another writer committed first, or it was "
						      "dropped): nothing of the transaction committed",
						      ch[i].ns, ch[i].name);
		if (rc) {
			floe_sql_exec(c->db, "ROLLBACK", NULL, 0, NULL, NULL, NULL, NULL);
			goto fail;
		}
	}
	rc = floe_sql_exec(c->db, "COMMIT", NULL, 0, NULL, NULL, NULL, err);
	if (rc == FLOE_ECOMMITUNKNOWN)
		return rc; /* the locations stay: any of them may be current */
	if (rc) {
		floe_sql_exec(c->db, "ROLLBACK", NULL, 0, NULL, NULL, NULL, NULL);
		goto fail;
	}
	return FLOE_OK;
fail:
	/* nothing committed: the files are ours to remove */
	for (size_t i = 0; i < written; i++) {
		floe_io_remove_quiet(cat->io, ch[i].location);
		floe_free(ch[i].location);
		ch[i].location = NULL;
	}
	return rc;
}

static int j_drop_table(floe_catalog *cat, const char *ns, const char *name, floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	long changes = 0;
	const char *p[] = {c->name, ns, name};
	int rc = floe_sql_exec(c->db,
			       "DELETE FROM iceberg_tables WHERE catalog_name = ? AND "
			       "table_namespace = ? AND table_name = ? AND " TABLE_PRED,
			       p, 3, NULL, NULL, &changes, err);
	if (!rc && changes == 0)
		rc = floe_error_set(err, FLOE_ENOTFOUND, "table '%s.%s' does not exist", ns, name);
	return rc;
}

static int j_rename(floe_catalog *cat, const char *fns, const char *fname, const char *tns,
		    const char *tname, floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	bool exists;
	long changes = 0;
	int rc = ns_exists(c, tns, &exists, err);
	if (rc)
		return rc;
	if (!exists)
		return floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", tns);
	const char *p[] = {tns, tname, c->name, fns, fname};
	rc = floe_sql_exec(c->db,
			   "UPDATE iceberg_tables SET table_namespace = ?, table_name = ? WHERE "
			   "catalog_name = ? AND table_namespace = ? AND table_name = ? AND " TABLE_PRED,
			   p, 5, NULL, NULL, &changes, err);
	if (rc == FLOE_EEXISTS)
		return floe_error_set(err, FLOE_EEXISTS, "table '%s.%s' already exists", tns, tname);
	if (!rc && changes == 0)
		rc = floe_error_set(err, FLOE_ENOTFOUND, "table '%s.%s' does not exist", fns, fname);
	return rc;
}

static int j_default_location(floe_catalog *cat, const char *ns, const char *name, char **out,
			      floe_error *err)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	floe_strmap props;
	int rc;
	floe_strmap_init(&props);
	rc = j_load_ns_props(cat, ns, &props, NULL);
	const char *nsloc = rc == 0 ? floe_strmap_get(&props, "location") : NULL;
	floe_buf b;
	floe_buf_init(&b, 0);
	if (nsloc && *nsloc) {
		size_t n = strlen(nsloc);
		while (n > 1 && nsloc[n - 1] == '/')
			n--;
		rc = floe_buf_printf(&b, "%.*s/%s", (int)n, nsloc, name);
	} else if (c->warehouse) {
		rc = floe_buf_puts(&b, c->warehouse);
		if (!rc)
			rc = floe_buf_putc(&b, '/');
		for (const char *p = ns; *p && !rc; p++)
			rc = floe_buf_putc(&b, *p == '.' ? '/' : *p);
		if (!rc)
			rc = floe_buf_printf(&b, "/%s", name);
	} else {
		floe_strmap_reset(&props);
		return floe_error_set(err, FLOE_EINVAL,
				      "catalog '%s' has no warehouse: give the table a location",
				      c->name);
	}
	floe_strmap_reset(&props);
	if (rc) {
		floe_buf_reset(&b);
		return floe_error_oom(err);
	}
	*out = floe_buf_detach(&b, NULL);
	return *out ? FLOE_OK : floe_error_oom(err);
}

static void j_free(floe_catalog *cat)
{
	jdbc_catalog *c = (jdbc_catalog *)cat;
	if (c->db)
		c->db->ops->close(c->db);
	floe_io_free(cat->io);
	floe_free(cat->lock_uri);
	floe_free(cat->open_uri);
	floe_free(cat->open_warehouse);
	floe_free(c->name);
	floe_free(c->warehouse);
	floe_free(c);
}

static const floe_catalog_ops jdbc_ops = {
	j_create_namespace, j_list_namespaces, j_drop_namespace,  j_namespace_exists,
	j_load_ns_props,    j_update_ns_props, j_list_tables,	  j_load_table,
	j_commit,	    j_drop_table,      j_rename,	  j_default_location,
	j_free,		    j_commit_tables,
};

int floe_sql_catalog_open(floe_catalog **out, const floe_sql_catalog_opts *opts, floe_error *err)
{
	jdbc_catalog *c;
	const char *uri = opts->uri;
	int rc;
	if (!uri || !*uri)
		return floe_error_set(err, FLOE_EINVAL, "the SQL catalog needs a uri");
	c = floe_calloc(1, sizeof(*c));
	if (!c)
		return floe_error_oom(err);
	c->name = floe_strdup(opts->name && *opts->name ? opts->name : "default");
	if (opts->warehouse) {
		size_t n = strlen(opts->warehouse);
		while (n > 1 && opts->warehouse[n - 1] == '/')
			n--;
		c->warehouse = floe_strndup(opts->warehouse, n);
	}
	c->base.ops = &jdbc_ops;
	c->base.name = c->name;
	c->base.kind = "sql";
	c->base.io = opts->io;
	if (!c->base.io) {
		int iorc = floe_io_default_new(&c->base.io, NULL, err);
		if (iorc) {
			j_free(&c->base);
			return iorc;
		}
	}
	c->base.lock_uri = floe_strdup(uri);
	c->base.open_uri = floe_strdup(uri);
	c->base.open_warehouse = opts->warehouse ? floe_strdup(opts->warehouse) : NULL;
	if (!c->name || (opts->warehouse && !c->warehouse) || !c->base.io || !c->base.lock_uri ||
	    !c->base.open_uri || (opts->warehouse && !c->base.open_warehouse)) {
		j_free(&c->base);
		return floe_error_oom(err);
	}
	rc = floe_sqldb_open_uri(&c->db, uri, opts->busy_timeout_ms, err);
	if (!rc)
		rc = init_schema(c, err);
	if (rc) {
		j_free(&c->base);
		return floe_error_prefix(err, rc, "SQL catalog '%s': ", uri);
	}
	*out = &c->base;
	return FLOE_OK;
}
