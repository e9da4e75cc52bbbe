/*
 * schema.h — the Parquet schema as a tree: groups and leaf columns with
 * name, repetition, field id, physical and logical type, and the derived
 * max definition/repetition levels and paths.
 *
 * The same structure serves the writer (built with floe_parquet_schema_add*,
 * then floe_parquet_schema_finish) and the reader (built from the footer's
 * flat SchemaElement list with floe_parquet_schema_from_meta). It knows
 * nothing about Iceberg: the Iceberg layer maps its types to fields here and
 * resolves field ids / name mappings against the tree.
 *
 * Ownership: the schema owns every node and string (one arena);
 * floe_parquet_schema_free releases all. A finished schema is immutable and
 * may be shared between threads.
 */
#ifndef FLOE_PARQUET_SCHEMA_H
#define FLOE_PARQUET_SCHEMA_H

#include "floe/arrow.h"
#include "parquet/meta.h"

#define FLOE_PARQUET_MAX_DEPTH 64 /* nesting levels below the root */

/* converted value asking the builder to derive the legacy converted type
 * from the logical type (the default). */
#define FLOE_PARQUET_CT_AUTO (-2)

typedef struct floe_parquet_node floe_parquet_node;
struct floe_parquet_node {
	const char *name;
	int index;      /* position in the flat SchemaElement list (depth-first, root = 0) */
	int repetition; /* FLOE_PARQUET_REQUIRED/OPTIONAL/REPEATED (root: REQUIRED) */
	int physical;   /* FLOE_PARQUET_INT32..., -1 for a group */
	int32_t type_length;
	floe_parquet_logical logical; /* kind NONE when absent */
	int converted;                /* FLOE_PARQUET_CT_* (NONE when absent) */
	bool has_field_id;
	int32_t field_id;
	floe_parquet_node *parent;
	floe_parquet_node **children;
	int n_children;
	int def_level; /* max definition level of this node */
	int rep_level; /* max repetition level of this node */
	int depth;     /* root 0 */
	int leaf_index; /* column index within a row group, -1 for groups */
	int first_leaf; /* leaves below (a leaf: itself) */
	int n_leaves;
	const char **path; /* names from the top-level field down, depth entries */
	/* builder links */
	floe_parquet_node *b_first, *b_last, *b_next;
};

typedef struct floe_parquet_schema {
	floe_arena arena;
	floe_parquet_node *root;
	floe_parquet_node **nodes; /* by index */
	int n_nodes;
	floe_parquet_node **leaves; /* by leaf index */
	int n_leaves;
	bool finished;
} floe_parquet_schema;

/* What a new node is. physical -1 makes a group. */
typedef struct floe_parquet_field {
	const char *name;
	int repetition;
	bool has_field_id;
	int32_t field_id;
	int physical;
	int32_t type_length; /* FIXED_LEN_BYTE_ARRAY */
	floe_parquet_logical logical;
	int converted; /* FLOE_PARQUET_CT_AUTO (default), _NONE or a value */
} floe_parquet_field;

#define FLOE_PARQUET_FIELD_INIT                                                               \
	{NULL, FLOE_PARQUET_OPTIONAL, false, 0, -1, 0, {0, 0, 0, 0, false, 0, false, NULL, -1},    \
	 FLOE_PARQUET_CT_AUTO}

/* A new empty schema whose root message is called root_name ("table"). */
int floe_parquet_schema_new(floe_parquet_schema **out, const char *root_name,
			    floe_error *err) FLOE_WUR;
void floe_parquet_schema_free(floe_parquet_schema *s);

/*
 * Add a node under parent (NULL = the root). The field's strings are copied.
 * *out (optional) receives the new node, to add children to a group.
 * FLOE_EINVAL for an invalid field (empty name, INT96, a logical type that
 * does not fit the physical type, DECIMAL precision too large...).
 */
int floe_parquet_schema_add(floe_parquet_schema *s, floe_parquet_node *parent,
			    const floe_parquet_field *f, floe_parquet_node **out,
			    floe_error *err) FLOE_WUR;

/*
 * The standard 3-level LIST:
 *   <rep> group <name> (LIST) [= field_id] { repeated group list { <element> } }
 * element describes the element node (named "element" whatever its name);
 * *element_out receives it (add children to it when it is a group).
 */
int floe_parquet_schema_add_list(floe_parquet_schema *s, floe_parquet_node *parent,
				 const floe_parquet_field *list, const floe_parquet_field *element,
				 floe_parquet_node **list_out, floe_parquet_node **element_out,
				 floe_error *err) FLOE_WUR;

/*
 * The standard MAP:
 *   <rep> group <name> (MAP) { repeated group key_value { required <key>; <value> } }
 * The key is made required; names are "key" and "value".
 */
int floe_parquet_schema_add_map(floe_parquet_schema *s, floe_parquet_node *parent,
				const floe_parquet_field *map, const floe_parquet_field *key,
				const floe_parquet_field *value, floe_parquet_node **map_out,
				floe_parquet_node **key_out, floe_parquet_node **value_out,
				floe_error *err) FLOE_WUR;

/*
 * The LIST and MAP wrappers alone, for nested elements: add_list_node makes
 *   <rep> group <name> (LIST) { repeated group list { } }
 * and returns the repeated node, under which the caller adds exactly one
 * child named "element" (a leaf, a group, or another LIST/MAP).
 * add_map_node makes <rep> group <name> (MAP) { repeated group key_value { } }
 * and returns key_value, under which the caller adds a required "key" and a
 * "value".
 */
int floe_parquet_schema_add_list_node(floe_parquet_schema *s, floe_parquet_node *parent,
				      const floe_parquet_field *list, floe_parquet_node **list_out,
				      floe_parquet_node **repeated_out, floe_error *err) FLOE_WUR;
int floe_parquet_schema_add_map_node(floe_parquet_schema *s, floe_parquet_node *parent,
				     const floe_parquet_field *map, floe_parquet_node **map_out,
				     floe_parquet_node **repeated_out, floe_error *err) FLOE_WUR;

/* Arrow schema -> Parquet schema, for generic tools (see schema_arrow.c for
 * the mapping); field ids from "PARQUET:field_id" metadata. */
int floe_parquet_schema_from_arrow(floe_parquet_schema **out, const struct ArrowSchema *s,
				   floe_error *err) FLOE_WUR;

/* Compute indexes, levels, paths and leaves; after this the schema is
 * immutable. FLOE_EINVAL when a group has no children or nesting is too deep. */
int floe_parquet_schema_finish(floe_parquet_schema *s, floe_error *err) FLOE_WUR;

/*
 * Build the tree of a parsed footer. Annotations that do not fit their
 * physical type are dropped (read as the physical type), as other readers
 * do. FLOE_ECORRUPT (naming `name`) when the element list is not a tree,
 * nesting is too deep, or a leaf has no type.
 */
int floe_parquet_schema_from_meta(floe_parquet_schema **out, const floe_parquet_file_meta *m,
				  const char *name, floe_error *err) FLOE_WUR;

/* The flat SchemaElement list of a finished schema, allocated from a. */
int floe_parquet_schema_to_elems(const floe_parquet_schema *s, floe_arena *a,
				 floe_parquet_schema_elem **out, size_t *n) FLOE_WUR;

/* The node with a field id (first in depth-first order), or NULL. */
floe_parquet_node *floe_parquet_schema_find_id(const floe_parquet_schema *s, int32_t field_id);

/* Dotted path of a node ("a.list.element") into buf; returns buf. */
const char *floe_parquet_node_path(const floe_parquet_node *n, char *buf, size_t cap);

/* Append a text rendering of the schema (parquet-mr's "message" syntax). */
int floe_parquet_schema_print(const floe_parquet_schema *s, floe_buf *out) FLOE_WUR;

/* Minimum FIXED_LEN_BYTE_ARRAY length holding a decimal of this precision. */
int32_t floe_parquet_decimal_bytes(int32_t precision);

#endif
