/*
 * avro/avro_schema.h — Avro schemas: parse from JSON into an arena tree, look
 * things up, build one in C, and serialize it back to JSON for a container
 * header.
 *
 * A schema is a tree of floe_avro_schema nodes allocated in one caller-owned
 * arena. A named type (record, enum, fixed) that is referenced by name again
 * is the *same node* (the tree is a DAG); serialization writes its full
 * definition at the first occurrence and its full name afterwards, as Avro
 * requires (spec: "a name ... may only be defined once").
 *
 * Extra attributes are kept: Iceberg's "field-id" (record fields),
 * "element-id" (arrays), "key-id"/"value-id" (maps) are parsed into int32
 * members (FLOE_AVRO_ID_NONE when absent); logicalType and its decimal and
 * timestamp attributes into members; every other attribute ("doc" aside) in
 * `attrs`, in source order, as parsed JSON values.
 *
 * DESIGN: recursive schemas (a record that contains itself through a
 * reference) are valid Avro but are rejected with FLOE_EUNSUPPORTED: nothing
 * floe reads uses them, and refusing them keeps the tree acyclic, so every
 * walk (serialize, skip, resolve, decode) is bounded by the schema's depth.
 *
 * Thread-safety: a finished schema is immutable and may be shared by threads.
 */
#ifndef FLOE_AVRO_SCHEMA_H
#define FLOE_AVRO_SCHEMA_H

#include "floe/common.h"
#include "json/json.h"
#include "util/alloc.h"
#include "util/buf.h"

typedef enum floe_avro_type {
	FLOE_AVRO_NULL = 0,
	FLOE_AVRO_BOOLEAN,
	FLOE_AVRO_INT,
	FLOE_AVRO_LONG,
	FLOE_AVRO_FLOAT,
	FLOE_AVRO_DOUBLE,
	FLOE_AVRO_BYTES,
	FLOE_AVRO_STRING,
	FLOE_AVRO_RECORD,
	FLOE_AVRO_ENUM,
	FLOE_AVRO_ARRAY,
	FLOE_AVRO_MAP,
	FLOE_AVRO_UNION,
	FLOE_AVRO_FIXED,
} floe_avro_type;

/* "int", "record", ... */
const char *floe_avro_type_name(floe_avro_type t);

/* An absent id attribute ("field-id", "element-id", "key-id", "value-id")
 * and absent decimal precision/scale. */
#define FLOE_AVRO_ID_NONE INT32_MIN

/* An attribute not otherwise modelled ("iceberg-field-name", "order", ...). */
typedef struct floe_avro_attr {
	const char *key;
	const floe_json *value;
} floe_avro_attr;

typedef struct floe_avro_schema floe_avro_schema;

typedef struct floe_avro_field {
	const char *name;
	floe_avro_schema *type;
	const char *doc;              /* NULL when absent */
	const floe_json *default_value; /* NULL when absent (JSON null: a FLOE_JSON_NULL node) */
	int32_t field_id;             /* "field-id", FLOE_AVRO_ID_NONE when absent */
	const char **aliases;
	size_t n_aliases;
	floe_avro_attr *attrs; /* other attributes, source order */
	size_t n_attrs;
} floe_avro_field;

struct floe_avro_schema {
	floe_avro_type type;
	const char *logical_type; /* "logicalType", NULL when absent */

	/* record, enum, fixed */
	const char *name;     /* simple name */
	const char *space;    /* namespace, NULL for the null namespace */
	const char *fullname; /* namespace.name */
	const char *doc;
	const char **aliases; /* as written (simple or full names) */
	size_t n_aliases;

	/* record */
	floe_avro_field *fields;
	size_t n_fields;

	/* enum */
	const char **symbols;
	size_t n_symbols;
	const char *enum_default; /* NULL when absent */

	/* array items / map values */
	floe_avro_schema *items;
	int32_t element_id; /* array "element-id" */
	int32_t key_id;     /* map "key-id" */
	int32_t value_id;   /* map "value-id" */

	/* union */
	floe_avro_schema **branches;
	size_t n_branches;

	/* fixed */
	size_t size;

	/* logical-type attributes */
	int32_t precision;     /* decimal; FLOE_AVRO_ID_NONE when absent */
	int32_t scale;         /* decimal; FLOE_AVRO_ID_NONE when absent (spec: means 0) */
	int8_t adjust_to_utc;  /* Iceberg "adjust-to-utc": -1 absent, 0 false, 1 true */

	floe_avro_attr *attrs; /* other attributes, source order */
	size_t n_attrs;

	/* set by parse / floe_avro_schema_finish */
	uint32_t node_id;    /* dense 0..n-1 over distinct nodes (plan caches) */
	uint32_t tree_nodes; /* on the root: number of distinct nodes */
	size_t fields_cap;   /* builder bookkeeping */
	bool broken;         /* builder: an allocation below this node failed */
	uint8_t mark;        /* walk state (parse / finish) */
};

typedef struct floe_avro_schema_limits {
	size_t max_depth; /* JSON nesting of the schema text; default 64 */
	size_t max_nodes; /* schema nodes incl. fields; default 100000 */
	size_t max_text;  /* schema JSON bytes; default 16 MiB */
} floe_avro_schema_limits;

/* ---- parse ---------------------------------------------------------------- */

/*
 * Parse schema JSON text p[0..n) into a tree in arena a. lim may be NULL.
 * Named types are registered by full name; a reference resolves by full name
 * (a dotted name), else in the enclosing namespace, then the null namespace.
 * Errors: FLOE_ECORRUPT (malformed JSON or schema: unknown type, bad name,
 * duplicate field, redefined name, bad id attribute, limits) with a message
 * that names the path ("field 'data_file' > field 'partition': ...");
 * FLOE_EUNSUPPORTED for a recursive schema; FLOE_ENOMEM.
 * The tree and everything it points to live in a; the caller owns a.
 */
int floe_avro_schema_parse(floe_avro_schema **out, floe_arena *a, const char *p, size_t n,
			   const floe_avro_schema_limits *lim, floe_error *err) FLOE_WUR;

/* The same from an already parsed JSON value (which must live at least as
 * long as the schema: attribute and default values point into it). */
int floe_avro_schema_from_json(floe_avro_schema **out, floe_arena *a, const floe_json *j,
			       const floe_avro_schema_limits *lim, floe_error *err) FLOE_WUR;

/* ---- serialize ------------------------------------------------------------ */

/*
 * Append the schema as compact JSON to out. A named type is defined at its
 * first occurrence and referenced by full name afterwards. Keys are written
 * in a fixed order: records "type","name","namespace","doc","aliases",
 * "fields", extra attrs; fields "name","type","doc","default","field-id",
 * "aliases", extra attrs; arrays "type","items","element-id","logicalType";
 * maps "type","values","key-id","value-id"; fixed "type","name","namespace",
 * "size","logicalType","precision","scale". A primitive without attributes
 * is written as a bare string ("int").
 * Errors: FLOE_EINVAL (schema too deep for the JSON writer), FLOE_ENOMEM.
 */
int floe_avro_schema_to_json(floe_buf *out, const floe_avro_schema *s, floe_error *err) FLOE_WUR;

/* Write the schema as the next value of a JSON writer (sticky errors). */
void floe_avro_schema_write(floe_jw *w, const floe_avro_schema *s);

/* Structural equality: types, names, fields (names, ids, defaults, docs),
 * symbols, sizes, logical types, ids and attributes. */
bool floe_avro_schema_equal(const floe_avro_schema *a, const floe_avro_schema *b);

/* ---- lookup --------------------------------------------------------------- */

/* Record field by name (or NULL). Linear; records are small. */
const floe_avro_field *floe_avro_field_by_name(const floe_avro_schema *rec, const char *name);
/* Record field by its "field-id" (or NULL). */
const floe_avro_field *floe_avro_field_by_id(const floe_avro_schema *rec, int32_t field_id);
/* Index of f within rec->fields. */
static inline size_t floe_avro_field_index(const floe_avro_schema *rec, const floe_avro_field *f)
{
	return (size_t)(f - rec->fields);
}
/* An extra attribute of a node or field (NULL when absent). */
const floe_json *floe_avro_schema_attr(const floe_avro_schema *s, const char *key);
const floe_json *floe_avro_field_attr(const floe_avro_field *f, const char *key);

/* For ["null", T] or [T, "null"]: T; NULL for anything else. */
const floe_avro_schema *floe_avro_union_nonnull(const floe_avro_schema *s);
/* True for a union that has a null branch. */
bool floe_avro_is_nullable(const floe_avro_schema *s);

/* ---- build ---------------------------------------------------------------- */
/*
 * A small builder for schemas made in C (the Iceberg layer's manifest
 * schemas). Every constructor allocates in arena a and returns NULL when out
 * of memory or when an argument is NULL, so calls nest without checks;
 * floe_avro_schema_finish() on the root reports any failure once.
 * Scalars (field_id, element_id, key_id, value_id, precision, scale,
 * adjust_to_utc) are plain members: set them directly.
 *
 *   floe_avro_schema *r = floe_avro_new_record(a, "r102", NULL);
 *   floe_avro_field *f = floe_avro_record_add(a, r, "ts_day",
 *       floe_avro_new_optional(a, floe_avro_new_logical(a, FLOE_AVRO_INT, "date")));
 *   if (f) { f->field_id = 1000; floe_avro_field_set_default_null(a, f); }
 *   rc = floe_avro_schema_finish(r, err);
 */
floe_avro_schema *floe_avro_new_primitive(floe_arena *a, floe_avro_type t);
/* A primitive with a logicalType ("date", "timestamp-micros", ...). */
floe_avro_schema *floe_avro_new_logical(floe_arena *a, floe_avro_type t, const char *logical);
/* name may be a full name ("ns.x"); space may be NULL. */
floe_avro_schema *floe_avro_new_record(floe_arena *a, const char *name, const char *space);
floe_avro_schema *floe_avro_new_enum(floe_arena *a, const char *name, const char *const *symbols,
				     size_t n);
floe_avro_schema *floe_avro_new_fixed(floe_arena *a, const char *name, size_t size);
/* fixed "decimal_P_S"-style node with logicalType decimal (name given). */
floe_avro_schema *floe_avro_new_decimal_fixed(floe_arena *a, const char *name, size_t size,
					      int32_t precision, int32_t scale);
floe_avro_schema *floe_avro_new_array(floe_arena *a, floe_avro_schema *items);
floe_avro_schema *floe_avro_new_map(floe_arena *a, floe_avro_schema *values);
floe_avro_schema *floe_avro_new_union(floe_arena *a, floe_avro_schema *const *branches, size_t n);
/* ["null", t] */
floe_avro_schema *floe_avro_new_optional(floe_arena *a, floe_avro_schema *t);
/* Append a field to a record; NULL (and the record marked broken) on failure. */
floe_avro_field *floe_avro_record_add(floe_arena *a, floe_avro_schema *rec, const char *name,
				      floe_avro_schema *type);
/* Field / node attributes. Strings are copied into a. json_text is parsed. */
int floe_avro_field_set_doc(floe_arena *a, floe_avro_field *f, const char *doc) FLOE_WUR;
int floe_avro_field_set_default_null(floe_arena *a, floe_avro_field *f) FLOE_WUR;
int floe_avro_field_set_default_json(floe_arena *a, floe_avro_field *f, const char *json_text)
	FLOE_WUR;
int floe_avro_field_add_attr_str(floe_arena *a, floe_avro_field *f, const char *key,
				 const char *value) FLOE_WUR;
int floe_avro_schema_set_logical(floe_arena *a, floe_avro_schema *s, const char *logical) FLOE_WUR;
int floe_avro_schema_add_attr_json(floe_arena *a, floe_avro_schema *s, const char *key,
				   const char *json_text) FLOE_WUR;

/*
 * Check a built (or parsed) tree and number its nodes: every node non-NULL,
 * names valid ([A-Za-z_][A-Za-z0-9_]*), no duplicate field names or enum
 * symbols, a full name defined by one node only, no cycles, unions without
 * nested unions or duplicate unnamed branch types, defaults that match their
 * field's type. Idempotent. Errors: FLOE_EINVAL naming the place, FLOE_ENOMEM
 * (a constructor failed).
 */
int floe_avro_schema_finish(floe_avro_schema *root, floe_error *err) FLOE_WUR;

/* Number of distinct nodes (valid after parse/finish). */
uint32_t floe_avro_schema_node_count(const floe_avro_schema *root);

#endif
