/*
 * schema_evolve.h — schema evolution: the changes a writer may make to a
 * table's schema on its own (add a column, widen a type, make a column
 * optional), as Java's SchemaUpdate / Flink's dynamic sink allow them, and
 * the merge of a wanted struct (a record's inferred fields) into a schema.
 *
 * Nothing is ever dropped, renamed or narrowed. New columns are optional
 * (a required column cannot be added to a table that may hold rows) and get
 * fresh ids after the table's last-column-id, nested ones as Java assigns
 * them (a struct's direct fields first, then their nested types).
 *
 * spec: "Schema Evolution" (valid type promotions: int -> long, float ->
 * double, decimal(P, S) -> decimal(P', S) with P' > P; v3 adds date ->
 * timestamp / timestamp_ns); ../shared/iceberg-notes.md section 1.
 *
 * Usage: floe_evo_begin on the current schema, any number of changes,
 * floe_evo_finish. Errors are FLOE_EINVAL naming the field path. All memory
 * is in the caller's arena. Not thread-safe (one evolution per thread).
 */
#ifndef FLOE_ICEBERG_SCHEMA_EVOLVE_H
#define FLOE_ICEBERG_SCHEMA_EVOLVE_H

#include "iceberg/types.h"

typedef struct floe_schema_evo {
	floe_arena *a;
	const floe_schema *base;
	floe_type *root; /* a mutable deep copy of base's struct */
	int32_t last_id;
	int format_version;
	size_t n_changes;
	floe_buf text; /* "add column a.b long; widen x int -> long; ..." */
} floe_schema_evo;

/* Whether a column of type `from` may become `to` (equal types too). */
bool floe_type_promotable(const floe_type *from, const floe_type *to, int format_version);

int floe_evo_begin(floe_schema_evo *e, floe_arena *a, const floe_schema *base,
		   int32_t last_column_id, int format_version, floe_error *err) FLOE_WUR;
void floe_evo_reset(floe_schema_evo *e);

/* Add an optional column at a dotted path ("payload.geo.lat"); its parent must
 * be a struct ("a.element" / "m.value" for a list's or map's struct). */
int floe_evo_add_column(floe_schema_evo *e, const char *path, const floe_type *type,
			const char *doc, floe_error *err) FLOE_WUR;
/* Widen a primitive column's type (floe_type_promotable). */
int floe_evo_update_type(floe_schema_evo *e, const char *path, const floe_type *type,
			 floe_error *err) FLOE_WUR;
/* Make a required column (or list element / map value) optional. */
int floe_evo_make_optional(floe_schema_evo *e, const char *path, floe_error *err) FLOE_WUR;

/*
 * Merge `want` (a struct; its ids and required flags are ignored, except
 * that absent members do not count) into the schema: members the schema
 * lacks are added (nested structs and lists of structs too; optional at
 * every level, as later records may lack them), wider
 * primitives widen their column, and with `missing_optional` every
 * required column that want lacks becomes optional. A member whose type
 * cannot become the column's (string into a long, a struct into an int)
 * is FLOE_EINVAL naming it; nothing is changed then.
 */
int floe_evo_merge(floe_schema_evo *e, const floe_type *want, bool missing_optional,
		   floe_error *err) FLOE_WUR;

/* The evolved schema (schema id base's + 1; the catalog renumbers it) and
 * the new last-column-id; *out NULL when nothing changed. */
int floe_evo_finish(floe_schema **out, int32_t *last_column_id, floe_schema_evo *e,
		    floe_error *err) FLOE_WUR;

/* What changed so far ("" when nothing). */
const char *floe_evo_describe(const floe_schema_evo *e);

#endif
