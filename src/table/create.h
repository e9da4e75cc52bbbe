/*
 * create.h — creating tables, and the table-level updates that are not
 * snapshots (properties, schema, spec, sort order).
 */
#ifndef FLOE_TABLE_CREATE_H
#define FLOE_TABLE_CREATE_H

#include "table/table_impl.h"

typedef struct floe_table_spec {
	int version;
	const floe_schema *schema;         /* ids are reassigned as Java does */
	const floe_partition_spec *spec;   /* NULL: unpartitioned (source ids refer to schema) */
	const floe_sort_order *sort_order; /* NULL: unsorted */
	const floe_strmap *properties;     /* may carry "format-version" */
	int format_version;                /* 0: properties' format-version, else 2 */
	const char *location;              /* NULL: the catalog's default */
} floe_table_spec;
#define FLOE_TABLE_SPEC_INIT {1, NULL, NULL, NULL, NULL, 0, NULL}

/* Create a table; on success *out (may be NULL) is the loaded table. */
int floe_table__create(floe_table **out, floe_catalog *cat, const char *ns, const char *name,
		       const floe_table_spec *ts, floe_error *err) FLOE_WUR;

/* Set and remove table properties in one commit (retried on conflict). */
int floe_table_update_properties(floe_table *t, const floe_strmap *set, const char *const *remove,
				 size_t n_remove, floe_error *err) FLOE_WUR;

/*
 * A pipeline's schema update from its records: merge `want` into the current
 * schema (floe_evo_merge: new columns, wider types, and with
 * missing_optional required columns want lacks made optional), fenced as
 * the pipeline's data commits (pipeline_id's newest snapshot must be
 * `expected`, else a final FLOE_ECONFLICT). Nothing to commit when the
 * table holds the change already. *summary (optional; floe_free) says what
 * changed.
 */
int floe_table__evolve_schema(floe_table *t, const floe_type *want, bool missing_optional,
			      const char *pipeline_id, int64_t expected, char **summary,
			      floe_error *err) FLOE_WUR;

#endif
