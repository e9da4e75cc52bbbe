/*
 * create.c — table creation and property updates.
 */
#include "table/create.h"

#include <string.h>

#include "table/commit.h"
#include "util/alloc.h"

int floe_table__create(floe_table **out, floe_catalog *cat, const char *ns, const char *name,
		       const floe_table_spec *ts, floe_error *err)
{
	floe_metadata_builder *b = NULL;
	floe_metadata *m = NULL;
	char *loc = NULL, *meta_loc = NULL;
	int fv = ts->format_version;
	int rc;
	if (!ts->schema)
		return floe_error_set(err, FLOE_EINVAL, "a table needs a schema");
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
			return floe_error_set(err, FLOE_ENOMEM, "out of memory");
	} else if ((rc = floe_catalog_default_location(cat, ns, name, &loc, err))) {
		return rc;
	}
	rc = floe_metadata_builder_new_table(&b, fv, loc, NULL, ts->schema, ts->spec, ts->sort_order,
					     ts->properties, err);
	if (!rc)
		rc = floe_metadata_builder_finish(&m, b, NULL, 0, err);
	else
		floe_metadata_builder_free(b);
	if (!rc)
		rc = floe_catalog_commit_table(cat, ns, name, NULL, m, &meta_loc, err);
	floe_metadata_free(m);
	floe_free(meta_loc);
	floe_free(loc);
	if (rc)
		return floe_error_prefix(err, "create table %s.%s: ", ns, name), rc;
	if (out)
		return floe_table_load(out, cat, ns, name, err);
	return FLOE_OK;
}

int floe_table_update_properties(floe_table *t, const floe_strmap *set, const char *const *remove,
				 size_t n_remove, floe_error *err)
{
	floe_retry_policy pol;
	floe_retry_policy_from(&pol, floe_table_metadata(t));
	for (int attempt = 0;; attempt++) {
		const floe_metadata *base = floe_table_metadata(t);
		floe_metadata_builder *b = NULL;
		floe_metadata *next = NULL;
		char *loc = NULL;
		int rc = floe_metadata_builder_from(&b, base, err);
		if (!rc && set)
			rc = floe_mb_set_properties(b, set, err);
		if (!rc && n_remove)
			rc = floe_mb_remove_properties(b, remove, n_remove, err);
		if (!rc) {
			rc = floe_metadata_builder_finish(&next, b, base->metadata_location,
							  base->last_updated_ms, err);
			b = NULL;
		}
		if (!rc)
			rc = floe_catalog_commit_table(floe_table_catalog(t), floe_table_namespace(t),
						       floe_table_name(t), base, next, &loc, err);
		floe_metadata_builder_free(b);
		if (!rc) {
			next->metadata_location = floe_arena_strdup(&next->arena, loc);
			floe_free(loc);
			if (!next->metadata_location) {
				floe_metadata_free(next);
				return floe_table_refresh(t, err);
			}
			floe_table__set_metadata(t, next);
			return FLOE_OK;
		}
		floe_metadata_free(next);
		if ((rc != FLOE_ECONFLICT && rc != FLOE_ETIMEDOUT) || attempt >= pol.num_retries)
			return rc;
		floe_error_clear(err);
		if ((rc = floe_table_refresh(t, err)))
			return rc;
	}
}
