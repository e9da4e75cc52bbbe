/*
 * catalog.c — catalog dispatch and identifier helpers.
 */
#include "catalog/catalog_impl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "catalog/glue.h"
#include "catalog/rest.h"
#include "util/alloc.h"
#include "util/str.h"

#define NOT_SUPPORTED(cat, what)                                                              \
	floe_error_set(err, FLOE_EUNSUPPORTED, "the %s catalog cannot %s", (cat)->kind, what)

int floe_catalog__create_namespace(floe_catalog *cat, const char *ns, const floe_strmap *props,
				   floe_error *err)
{
	if (!ns || !*ns)
		return floe_error_set(err, FLOE_EINVAL, "a namespace needs a name");
	return cat->ops->create_namespace(cat, ns, props, err);
}

int floe_catalog_list_namespaces(floe_catalog *cat, const char *parent, floe_name_fn fn,
				 void *payload, floe_error *err)
{
	return cat->ops->list_namespaces(cat, parent, fn, payload, err);
}

int floe_catalog_drop_namespace(floe_catalog *cat, const char *ns, floe_error *err)
{
	return cat->ops->drop_namespace(cat, ns, err);
}

int floe_catalog_namespace_exists(floe_catalog *cat, const char *ns, bool *exists,
				  floe_error *err)
{
	return cat->ops->namespace_exists(cat, ns, exists, err);
}

int floe_catalog_load_namespace_properties(floe_catalog *cat, const char *ns, floe_strmap *out,
					   floe_error *err)
{
	return cat->ops->load_namespace_properties(cat, ns, out, err);
}

int floe_catalog_update_namespace_properties(floe_catalog *cat, const char *ns,
					     const floe_strmap *set, const char *const *remove,
					     size_t n_remove, floe_error *err)
{
	if (!cat->ops->update_namespace_properties)
		return NOT_SUPPORTED(cat, "store namespace properties");
	return cat->ops->update_namespace_properties(cat, ns, set, remove, n_remove, err);
}

int floe_catalog_list_tables(floe_catalog *cat, const char *ns, floe_name_fn fn, void *payload,
			     floe_error *err)
{
	return cat->ops->list_tables(cat, ns, fn, payload, err);
}

int floe_catalog_load_table(floe_catalog *cat, const char *ns, const char *name,
			    floe_metadata **out, floe_error *err)
{
	return cat->ops->load_table(cat, ns, name, out, err);
}

static bool in_log(const floe_metadata *m, const char *path)
{
	for (size_t i = 0; i < m->n_metadata_log; i++)
		if (strcmp(m->metadata_log[i].metadata_file, path) == 0)
			return true;
	return false;
}

/*
 * write.metadata.delete-after-commit.enabled (Java's default: false): after
 * a commit, delete the metadata files the new metadata log no longer lists
 * (its length is write.metadata.previous-versions-max).
 */
static void delete_old_metadata(floe_catalog *cat, const floe_metadata *base,
				const floe_metadata *next, const char *new_location)
{
	const char *v = floe_metadata_property(next, "write.metadata.delete-after-commit.enabled");
	if (!base || !v || !floe_str_ieq(v, "true"))
		return;
	for (size_t i = 0; i < base->n_metadata_log + 1; i++) {
		const char *p = i < base->n_metadata_log ? base->metadata_log[i].metadata_file
							 : base->metadata_location;
		if (p && strcmp(p, new_location) != 0 && !in_log(next, p))
			floe_io_remove_quiet(cat->io, p);
	}
}

/*
 * Test hook: FLOE_TEST_CATALOG_FAULT="<mode>:<n>[,<mode>:<n>...]" makes the
 * n-th commit of each catalog object (each swap attempt, a transaction one;
 * n "*": every commit) fail, or meet another writer (run):
 *   before-swap  a definite failure before anything is sent (EIO);
 *   after-swap   the swap happens, then its answer is lost (ECOMMITUNKNOWN);
 *   lose-swap    the metadata file is written, the swap never reaches the
 *                catalog, and the caller cannot know (ECOMMITUNKNOWN);
 *   conflict     a lost race (a retryable ECONFLICT), nothing written;
 *   run          the shell command in FLOE_TEST_CATALOG_RUN runs to its end
 *                (another writer's commit), then the swap goes ahead on the
 *                base the caller built on, which may now be stale: the
 *                catalog's own conflict check and the caller's retry run.
 *                A command that cannot run or exits non-zero fails the
 *                commit (EIO) before anything is sent. It inherits this
 *                environment: a floe it runs needs FLOE_TEST_CATALOG_FAULT
 *                unset.
 * The tests of the commit path use it with every catalog; nothing else reads
 * it.
 */
enum { FAULT_NONE, FAULT_BEFORE, FAULT_AFTER, FAULT_LOSE, FAULT_CONFLICT, FAULT_RUN };

static int fault_for(floe_catalog *cat)
{
	const char *spec = getenv("FLOE_TEST_CATALOG_FAULT");
	int64_t n = ++cat->n_commits;
	if (!spec || !*spec)
		return FAULT_NONE;
	for (const char *p = spec; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *colon = memchr(p, ':', len);
		if (colon) {
			size_t ml = (size_t)(colon - p);
			const char *num = colon + 1;
			size_t nl = len - ml - 1;
			int64_t at = -1;
			bool every = nl == 1 && *num == '*';
			if (every || (floe_parse_i64(num, nl, &at) && at == n)) {
				if (ml == 11 && !strncmp(p, "before-swap", ml))
					return FAULT_BEFORE;
				if (ml == 10 && !strncmp(p, "after-swap", ml))
					return FAULT_AFTER;
				if (ml == 9 && !strncmp(p, "lose-swap", ml))
					return FAULT_LOSE;
				if (ml == 8 && !strncmp(p, "conflict", ml))
					return FAULT_CONFLICT;
				if (ml == 3 && !strncmp(p, "run", ml))
					return FAULT_RUN;
			}
		}
		p += len + (end ? 1 : 0);
	}
	return FAULT_NONE;
}

/* FAULT_RUN: FLOE_TEST_CATALOG_RUN, synchronously, before the swap. */
static int fault_run(floe_error *err)
{
	const char *cmd = getenv("FLOE_TEST_CATALOG_RUN");
	if (!cmd || !*cmd)
		return floe_error_set(err, FLOE_EINVAL,
				      "injected fault: FLOE_TEST_CATALOG_FAULT run needs "
				      "FLOE_TEST_CATALOG_RUN");
	int st = system(cmd);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return floe_error_set(err, FLOE_EIO,
				      "injected fault: FLOE_TEST_CATALOG_RUN '%s' "
				      "failed (status %d)",
				      cmd, st);
	return FLOE_OK;
}

bool floe_catalog__fault_lose_swap(floe_catalog *cat)
{
	bool lose = cat->fault_lose_swap;
	cat->fault_lose_swap = false;
	return lose;
}

int floe_catalog_commit_table(floe_catalog *cat, const char *ns, const char *name,
			      const floe_metadata *base, const floe_metadata *next, char **location,
			      floe_error *err)
{
	int fault = fault_for(cat);
	*location = NULL;
	if (fault == FAULT_BEFORE)
		return floe_error_set(err, FLOE_EIO, "injected fault: the catalog refused the swap");
	if (fault == FAULT_CONFLICT)
		return floe_error_set_retryable(err, FLOE_ECONFLICT,
						"injected fault: another writer committed first");
	if (fault == FAULT_RUN) {
		int rrc = fault_run(err);
		if (rrc)
			return rrc;
	}
	cat->fault_lose_swap = fault == FAULT_LOSE;
	int rc = cat->ops->commit_table(cat, ns, name, base, next, location, err);
	cat->fault_lose_swap = false;
	if (rc == FLOE_OK && fault == FAULT_AFTER)
		return floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				      "injected fault: the swap's answer was lost");
	if (rc == FLOE_OK && *location)
		delete_old_metadata(cat, base, next, *location);
	return rc;
}

bool floe_catalog_has_transactions(const floe_catalog *cat)
{
	return cat && cat->ops->commit_tables != NULL && !cat->no_transactions;
}

int floe_catalog_commit_tables(floe_catalog *cat, floe_catalog_change *ch, size_t n,
			       floe_error *err)
{
	for (size_t i = 0; i < n; i++)
		ch[i].location = NULL;
	if (cat->ops->commit_tables && cat->no_transactions)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "%s", cat->no_transactions);
	if (!cat->ops->commit_tables)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "the %s catalog cannot commit several tables in one "
				      "transaction",
				      cat->kind);
	for (size_t i = 0; i < n; i++)
		if (!ch[i].base)
			return floe_error_set(err, FLOE_EINVAL,
					      "a multi-table commit cannot create table '%s.%s'",
					      ch[i].ns, ch[i].name);
	int fault = fault_for(cat);
	if (fault == FAULT_BEFORE)
		return floe_error_set(err, FLOE_EIO, "injected fault: the catalog refused the swap");
	if (fault == FAULT_CONFLICT)
		return floe_error_set_retryable(err, FLOE_ECONFLICT,
						"injected fault: another writer committed first");
	if (fault == FAULT_RUN) {
		int rrc = fault_run(err);
		if (rrc)
			return rrc;
	}
	cat->fault_lose_swap = fault == FAULT_LOSE;
	int rc = cat->ops->commit_tables(cat, ch, n, err);
	cat->fault_lose_swap = false;
	if (rc == FLOE_OK && fault == FAULT_AFTER)
		return floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				      "injected fault: the transaction's answer was lost");
	if (rc == FLOE_OK)
		for (size_t i = 0; i < n; i++)
			if (ch[i].location)
				delete_old_metadata(cat, ch[i].base, ch[i].next, ch[i].location);
	return rc;
}

int floe_catalog__drop_table(floe_catalog *cat, const char *ns, const char *name, floe_error *err)
{
	return cat->ops->drop_table(cat, ns, name, err);
}

int floe_catalog_rename_table(floe_catalog *cat, const char *from_ns, const char *from_name,
			      const char *to_ns, const char *to_name, floe_error *err)
{
	if (!cat->ops->rename_table)
		return NOT_SUPPORTED(cat, "rename tables");
	return cat->ops->rename_table(cat, from_ns, from_name, to_ns, to_name, err);
}

int floe_catalog_default_location(floe_catalog *cat, const char *ns, const char *name, char **out,
				  floe_error *err)
{
	return cat->ops->default_location(cat, ns, name, out, err);
}

void floe_catalog_free(floe_catalog *cat)
{
	if (cat)
		cat->ops->free(cat);
}

void floe_free_string(char *s)
{
	floe_free(s);
}

static int props_to_map(floe_strmap *m, const floe_prop *props, size_t n, floe_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (floe_strmap_set(m, props[i].key, props[i].value))
			return floe_error_oom(err);
	return FLOE_OK;
}

int floe_catalog_create_namespace(floe_catalog *cat, const char *ns, const floe_prop *props,
				  size_t n_props, floe_error *err)
{
	floe_strmap m;
	floe_strmap_init(&m);
	int rc = props_to_map(&m, props, n_props, err);
	if (!rc)
		rc = floe_catalog__create_namespace(cat, ns, n_props ? &m : NULL, err);
	floe_strmap_reset(&m);
	return rc;
}

int floe_catalog_namespace_properties(floe_catalog *cat, const char *ns, floe_prop_fn fn,
				      void *payload, floe_error *err)
{
	floe_strmap m;
	floe_strmap_init(&m);
	int rc = floe_catalog_load_namespace_properties(cat, ns, &m, err);
	for (size_t i = 0; i < m.len && !rc; i++)
		rc = fn(m.items[i].key, m.items[i].value, payload);
	floe_strmap_reset(&m);
	return rc;
}

int floe_catalog_set_namespace_properties(floe_catalog *cat, const char *ns,
					  const floe_prop *set, size_t n_set,
					  const char *const *remove, size_t n_remove,
					  floe_error *err)
{
	floe_strmap m;
	floe_strmap_init(&m);
	int rc = props_to_map(&m, set, n_set, err);
	if (!rc)
		rc = floe_catalog_update_namespace_properties(cat, ns, &m, remove, n_remove, err);
	floe_strmap_reset(&m);
	return rc;
}

int floe_catalog_split_ident(const char *ident, const char *dflt, char **ns, char **name,
			     floe_error *err)
{
	const char *dot = ident ? strrchr(ident, '.') : NULL;
	*ns = NULL;
	*name = NULL;
	if (!ident || !*ident)
		return floe_error_set(err, FLOE_EINVAL, "empty table name");
	if (dot) {
		if (dot == ident || !dot[1])
			return floe_error_set(err, FLOE_EINVAL, "bad table name '%s'", ident);
		*ns = floe_strndup(ident, (size_t)(dot - ident));
		*name = floe_strdup(dot + 1);
	} else {
		if (!dflt)
			return floe_error_set(err, FLOE_EINVAL,
					      "'%s' has no namespace (write it as namespace.table)",
					      ident);
		*ns = floe_strdup(dflt);
		*name = floe_strdup(ident);
	}
	if (!*ns || !*name) {
		floe_free(*ns);
		floe_free(*name);
		*ns = *name = NULL;
		return floe_error_oom(err);
	}
	return FLOE_OK;
}

int floe_catalog_reopen(const floe_catalog *cat, floe_catalog **out, floe_error *err)
{
	if (strcmp(cat->kind, "sql") == 0) {
		floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
		o.name = cat->name;
		o.uri = cat->open_uri;
		o.warehouse = cat->open_warehouse;
		return floe_sql_catalog_open(out, &o, err);
	}
	if (strcmp(cat->kind, "filesystem") == 0) {
		floe_fs_catalog_opts o = FLOE_FS_CATALOG_OPTS_INIT;
		o.name = cat->name;
		o.warehouse = cat->open_warehouse;
		return floe_fs_catalog_open(out, &o, err);
	}
	if (strcmp(cat->kind, "rest") == 0) {
		floe_rest_catalog_opts o = FLOE_REST_CATALOG_OPTS_INIT;
		o.name = cat->name;
		o.uri = cat->open_uri;
		o.warehouse = cat->open_warehouse;
		o.props = &cat->open_props;
		return floe_rest_catalog_open(out, &o, err);
	}
	if (strcmp(cat->kind, "glue") == 0) {
		floe_glue_catalog_opts o = FLOE_GLUE_CATALOG_OPTS_INIT;
		o.name = cat->name;
		o.uri = cat->open_uri;
		o.warehouse = cat->open_warehouse;
		o.props = &cat->open_props;
		return floe_glue_catalog_open(out, &o, err);
	}
	return floe_error_set(err, FLOE_EUNSUPPORTED, "cannot reopen a %s catalog", cat->kind);
}
