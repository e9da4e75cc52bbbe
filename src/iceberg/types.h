/*
 * types.h — the Iceberg type system and schemas.
 *
 * Types and schemas are immutable trees allocated in an arena owned by
 * whatever holds them (usually a table metadata object). Primitive types
 * without parameters are static singletons (floe_type_primitive()).
 *
 * spec: Iceberg table spec "Schemas and Data Types", Appendix C (JSON).
 */
#ifndef FLOE_ICEBERG_TYPES_H
#define FLOE_ICEBERG_TYPES_H

#include "floe/common.h"
#include "json/json.h"
#include "util/alloc.h"
#include "util/buf.h"

typedef enum floe_type_id {
	FLOE_T_BOOLEAN = 1,
	FLOE_T_INT,
	FLOE_T_LONG,
	FLOE_T_FLOAT,
	FLOE_T_DOUBLE,
	FLOE_T_DECIMAL,
	FLOE_T_DATE,
	FLOE_T_TIME,
	FLOE_T_TIMESTAMP,
	FLOE_T_TIMESTAMPTZ,
	FLOE_T_TIMESTAMP_NS,
	FLOE_T_TIMESTAMPTZ_NS,
	FLOE_T_STRING,
	FLOE_T_UUID,
	FLOE_T_FIXED,
	FLOE_T_BINARY,
	FLOE_T_UNKNOWN,   /* v3 */
	FLOE_T_VARIANT,   /* v3 */
	FLOE_T_GEOMETRY,  /* v3 */
	FLOE_T_GEOGRAPHY, /* v3 */
	FLOE_T_STRUCT,
	FLOE_T_LIST,
	FLOE_T_MAP,
} floe_type_id;

typedef struct floe_type floe_type;

typedef struct floe_field {
	int32_t id;
	const char *name;
	bool required;
	const floe_type *type;
	const char *doc;                 /* may be NULL */
	const floe_json *initial_default; /* v3, JSON single-value form; NULL = none */
	const floe_json *write_default;   /* v3 */
} floe_field;

struct floe_type {
	floe_type_id id;
	int32_t precision, scale; /* decimal */
	int32_t length;           /* fixed */
	/* struct */
	floe_field *fields;
	size_t n_fields;
	/* list */
	int32_t element_id;
	bool element_required;
	const floe_type *element;
	/* map */
	int32_t key_id, value_id;
	bool value_required;
	const floe_type *key, *value;
	/* geometry / geography */
	const char *crs;
	const char *algorithm;
};

/* One field of a schema, found through the id index. */
typedef struct floe_schema_entry {
	int32_t id;
	const floe_field *field;    /* NULL for list elements and map keys/values */
	const floe_type *type;      /* the field's / element's type */
	const char *full_name;      /* "a.b.element" style, for messages and name lookup */
	int32_t parent_id;          /* 0 at top level */
	bool required;
	bool in_repeated;           /* inside a list or map */
} floe_schema_entry;

typedef struct floe_schema {
	int32_t schema_id;
	const floe_type *root; /* STRUCT */
	int32_t *identifier_field_ids;
	size_t n_identifier_field_ids;
	/* index, sorted by id */
	floe_schema_entry *index;
	size_t n_index;
	int32_t highest_field_id;
} floe_schema;

/* Static primitive singleton (not for decimal/fixed/geo/struct/list/map). */
const floe_type *floe_type_primitive(floe_type_id id);
const floe_type *floe_type_decimal(floe_arena *a, int32_t precision, int32_t scale);
const floe_type *floe_type_fixed(floe_arena *a, int32_t length);

bool floe_type_is_primitive(const floe_type *t);
bool floe_type_is_nested(const floe_type *t);
/* Minimal format version that can hold the type (1 or 3). */
int floe_type_min_format_version(const floe_type *t);
/* "decimal(9, 2)", "fixed[16]", "timestamptz", "struct", ... (Java's spelling). */
int floe_type_format(floe_buf *out, const floe_type *t) FLOE_WUR;
/* Parse a primitive type string, case-insensitive, whitespace-tolerant:
 * "decimal( 9 ,2)", "fixed[16]", "geometry(OGC:CRS84)". */
int floe_type_parse_primitive(const floe_type **out, floe_arena *a, const char *s, size_t n,
			      floe_error *err) FLOE_WUR;
/* Same structure and parameters (ids compared too). */
bool floe_type_equal(const floe_type *a, const floe_type *b);

/* ---- schema JSON ---------------------------------------------------------- */

/* Parse a schema object (struct + schema-id + identifier-field-ids). */
int floe_schema_from_json(floe_schema **out, floe_arena *a, const floe_json *j, floe_error *err)
	FLOE_WUR;
/* Build a schema over an existing struct type (computes the index). */
int floe_schema_make(floe_schema **out, floe_arena *a, int32_t schema_id, const floe_type *root,
		     const int32_t *identifier_ids, size_t n_identifier, floe_error *err) FLOE_WUR;
/* Write the schema JSON in Java's key order. */
void floe_schema_write_json(floe_jw *w, const floe_schema *s);
void floe_type_write_json(floe_jw *w, const floe_type *t);
/* The schema's JSON as a string (arena). */
const char *floe_schema_to_json_str(floe_arena *a, const floe_schema *s);

/* Lookup by field id (binary search); NULL when absent. */
const floe_schema_entry *floe_schema_find(const floe_schema *s, int32_t id);
/* Lookup by dotted name ("a.b"); case-sensitive unless ci. */
const floe_schema_entry *floe_schema_find_name(const floe_schema *s, const char *name, bool ci);
/* Top-level field by name. */
const floe_field *floe_schema_field(const floe_schema *s, const char *name);

/*
 * Assign fresh ids like Java's TypeUtil.assignFreshIds on table creation: each
 * struct's direct fields get consecutive ids first, then their nested types in
 * field order (list element; map key then value), recursively, starting after
 * *last_id. Returns a new tree (arena) and updates *last_id. Identifier ids
 * are remapped.
 */
int floe_schema_assign_fresh_ids(floe_schema **out, floe_arena *a, const floe_schema *in,
				 int32_t schema_id, int32_t *last_id, floe_error *err) FLOE_WUR;

/*
 * Parse a compact column list: "id long not null, ts timestamptz, amount
 * decimal(10,2), tags list<string>, attrs map<string, int>, loc struct<lat:
 * double, lon: double>". Field ids are assigned as Java does on create.
 * A trailing "PRIMARY KEY (id, region) [NOT ENFORCED]" (Flink's DDL) makes
 * those top-level columns required and the schema's identifier fields.
 */
int floe_schema_parse_compact(floe_schema **out, floe_arena *a, const char *s, floe_error *err)
	FLOE_WUR;

/* Deep copy into another arena. */
floe_schema *floe_schema_copy(floe_arena *a, const floe_schema *s);

/* Same fields and identifier ids, ignoring schema ids. */
bool floe_schema_same_structure(const floe_schema *a, const floe_schema *b);

#endif
