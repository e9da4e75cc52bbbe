/*
 * create.c — table creation and property updates, both through the commit
 * path (commit_path.c).
 */
#include "table/create.h"

#include <string.h>

#include "iceberg/props.h"
#include "table/commit.h"
#include "util/alloc.h"
#include "util/rand.h"

typedef struct create_ctx {
	const floe_table_spec *ts;
	int fv;
	const char *location;
	char uuid[37]; /* the same in every attempt: how a create whose answer was lost is known */
} create_ctx;

/*
 * The properties a new table gets before the caller's: the registry's
 * FLOE_PROP_CREATE entries with their defaults, as Java 1.10 writes them
 * (TableMetadata.newTableMetadata -> persistedProperties: the Parquet codec
 * of Iceberg 1.4 and later, so Java's and Spark's writers use zstd on floe's
 * tables as on their own; without the key they fall back to gzip). The
 * caller's properties win.
 */
static int creation_properties(floe_strmap *out, const floe_strmap *asked)
{
	size_t n;
	const floe_prop_def *defs = floe_prop_all(&n);
	int rc = FLOE_OK;
	for (size_t i = 0; !rc && i < n; i++)
		if ((defs[i].flags & FLOE_PROP_CREATE) && defs[i].dflt &&
		    !(defs[i].flags & FLOE_PROP_PREFIX))
			rc = floe_strmap_set(out, defs[i].key, defs[i].dflt);
	for (size_t i = 0; !rc && asked && i < asked->len; i++)
		rc = floe_strmap_set(out, asked->items[i].key, asked->items[i].value);
	return rc;
}

static int build_create(void *payload, const floe_metadata *base, int attempt, floe_metadata **next,
			floe_error *err)
{
	create_ctx *c = payload;
	floe_metadata_builder *b = NULL;
	floe_strmap props;
	(void)base;
	(void)attempt;
	floe_strmap_init(&props);
	if (creation_properties(&props, c->ts->properties)) {
		floe_strmap_reset(&props);
		return floe_error_oom(err);
	}
	int rc = floe_metadata_builder_new_table(&b, c->fv, c->location, c->uuid, c->ts->schema,
						 c->ts->spec, c->ts->sort_order, &props, err);
	floe_strmap_reset(&props);
	if (rc) {
		floe_metadata_builder_free(b);
		return rc;
	}
	return floe_metadata_builder_finish(next, b, NULL, 0, err);
}

/* A table with this create's uuid is this create's table. */
static bool create_landed(void *payload, const floe_metadata *cur)
{
	create_ctx *c = payload;
	return cur->table_uuid && strcmp(cur->table_uuid, c->uuid) == 0;
}

int floe_table__create(floe_table **out, floe_catalog *cat, const char *ns, const char *name,
		       const floe_table_spec *ts, floe_error *err)
{
	floe_table *t = NULL;
	char *loc = NULL;
	int fv = ts->format_version;
	int rc;
	if (out)
		*out = NULL;
	if (!ts->schema)
		return floe_error_set(err, FLOE_EINVAL, "a table needs a schema");
	for (size_t i = 0; ts->properties && i < ts->properties->len; i++)
		if ((rc = floe_prop_check(ts->properties->items[i].key, ts->properties->items[i].value,
					  err)))
			return floe_error_prefix(err, rc, "create table %s.%s: ", ns, name);
	if (fv == 0 && ts->properties) {
		const char *v = floe_strmap_get(ts->properties, "format-version");
		int64_t x;
		if (v && (!floe_parse_i64(v, strlen(v), &x) || x < 1 || x > 3))
			return floe_error_set(err, FLOE_EINVAL, "format-version must be 1, 2 or 3, not '%s'",
					      v);
		if (v)
			fv = (int)x;
	}
	if (fv == 0)
		fv = 2; /* Java's default */
	if (ts->location) {
		size_t n = strlen(ts->location);
		while (n > 1 && ts->location[n - 1] == '/')
			n--;
		loc = floe_strndup(ts->location, n);
		if (!loc)
			return floe_error_oom(err);
	} else if ((rc = floe_catalog_default_location(cat, ns, name, &loc, err))) {
		return rc;
	}
	create_ctx c = {ts, fv, loc, {0}};
	floe_uuid_v4_str(c.uuid);
	static const floe_commit_fns fns = {build_create, NULL, create_landed};
	rc = floe_table__new_unloaded(&t, cat, ns, name, err);
	if (!rc)
		rc = floe_table__commit(t, "create table", &fns, &c, err);
	floe_free(loc);
	if (rc) {
		floe_table_free(t);
		return rc;
	}
	if (out)
		*out = t;
	else
		floe_table_free(t);
	return FLOE_OK;
}

typedef struct props_ctx {
	const floe_strmap *set;
	const char *const *remove;
	size_t n_remove;
} props_ctx;

/* A format-version among the properties upgrades the table, as Java's
 * UpdateProperties does (downgrades are refused). 0: not asked. */
static int asked_format_version(const floe_strmap *set)
{
	const char *v = set ? floe_strmap_get(set, "format-version") : NULL;
	int64_t x;
	return v && floe_parse_i64(v, strlen(v), &x) ? (int)x : 0;
}

static int build_props(void *payload, const floe_metadata *base, int attempt, floe_metadata **next,
		       floe_error *err)
{
	props_ctx *c = payload;
	floe_metadata_builder *b = NULL;
	(void)attempt;
	int fv = asked_format_version(c->set);
	if (fv && fv < base->format_version)
		return floe_error_set(err, FLOE_EINVAL,
				      "format-version %d: a table cannot be downgraded (it is at %d)",
				      fv, base->format_version);
	int rc = floe_metadata_builder_from(&b, base, err);
	if (!rc && fv > base->format_version)
		rc = floe_mb_upgrade_format_version(b, fv, err);
	if (!rc && c->set)
		rc = floe_mb_set_properties(b, c->set, err);
	if (!rc && c->n_remove)
		rc = floe_mb_remove_properties(b, c->remove, c->n_remove, err);
	if (rc) {
		floe_metadata_builder_free(b);
		return rc;
	}
	return floe_metadata_builder_finish(next, b, base->metadata_location, base->last_updated_ms,
					    err);
}

/* The properties are as asked (the change is idempotent). */
static bool props_landed(void *payload, const floe_metadata *cur)
{
	props_ctx *c = payload;
	int fv = asked_format_version(c->set);
	if (fv && cur->format_version != fv)
		return false;
	for (size_t i = 0; c->set && i < c->set->len; i++) {
		const floe_prop_def *d = floe_prop_find(c->set->items[i].key);
		if (d && (d->flags & FLOE_PROP_RESERVED))
			continue;
		const char *v = floe_metadata_property(cur, c->set->items[i].key);
		if (!v || strcmp(v, c->set->items[i].value) != 0)
			return false;
	}
	for (size_t i = 0; i < c->n_remove; i++)
		if (floe_metadata_property(cur, c->remove[i]))
			return false;
	return true;
}

int floe_table_update_properties(floe_table *t, const floe_strmap *set, const char *const *remove,
				 size_t n_remove, floe_error *err)
{
	props_ctx c = {set, remove, n_remove};
	static const floe_commit_fns fns = {build_props, NULL, props_landed};
	/* every value is checked before anything is written */
	for (size_t i = 0; set && i < set->len; i++) {
		int rc = floe_prop_check(set->items[i].key, set->items[i].value, err);
		if (rc)
			return rc;
	}
	return floe_table__commit(t, "set properties of", &fns, &c, err);
}
