/*
 * schema.c — the Parquet schema tree: building, finishing (levels, leaves,
 * paths), conversion from and to the flat SchemaElement list, printing.
 */
#include "parquet/schema.h"

#include <stdio.h>
#include <string.h>

static double log10_2(void)
{
	return 0.30102999566398119521;
}

/* Largest decimal precision a two's-complement value of n bytes holds. */
static int32_t decimal_max_precision(int32_t n)
{
	if (n <= 0)
		return 0;
	if (n > 64)
		n = 64;
	return (int32_t)((8.0 * n - 1) * log10_2());
}

int32_t floe_parquet_decimal_bytes(int32_t precision)
{
	int32_t n = 1;
	while (decimal_max_precision(n) < precision && n < 64)
		n++;
	return n;
}

/* Whether a logical annotation fits a node (physical -1: a group). */
static bool annotation_fits(int physical, int32_t type_length, const floe_parquet_logical *lt)
{
	switch (lt->kind) {
	case FLOE_PARQUET_LT_NONE: return true;
	case FLOE_PARQUET_LT_STRING:
	case FLOE_PARQUET_LT_ENUM:
	case FLOE_PARQUET_LT_JSON:
	case FLOE_PARQUET_LT_BSON:
	case FLOE_PARQUET_LT_GEOMETRY:
	case FLOE_PARQUET_LT_GEOGRAPHY: return physical == FLOE_PARQUET_BYTE_ARRAY;
	case FLOE_PARQUET_LT_MAP:
	case FLOE_PARQUET_LT_LIST:
	case FLOE_PARQUET_LT_VARIANT: return physical < 0;
	case FLOE_PARQUET_LT_DECIMAL:
		if (lt->precision < 1 || lt->scale < 0 || lt->scale > lt->precision)
			return false;
		switch (physical) {
		case FLOE_PARQUET_INT32: return lt->precision <= 9;
		case FLOE_PARQUET_INT64: return lt->precision <= 18;
		case FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY:
			return lt->precision <= decimal_max_precision(type_length);
		case FLOE_PARQUET_BYTE_ARRAY: return true;
		default: return false;
		}
	case FLOE_PARQUET_LT_DATE: return physical == FLOE_PARQUET_INT32;
	case FLOE_PARQUET_LT_TIME:
		if (lt->unit == FLOE_PARQUET_MILLIS)
			return physical == FLOE_PARQUET_INT32;
		return physical == FLOE_PARQUET_INT64 &&
		       (lt->unit == FLOE_PARQUET_MICROS || lt->unit == FLOE_PARQUET_NANOS);
	case FLOE_PARQUET_LT_TIMESTAMP:
		return physical == FLOE_PARQUET_INT64 && lt->unit >= FLOE_PARQUET_MILLIS &&
		       lt->unit <= FLOE_PARQUET_NANOS;
	case FLOE_PARQUET_LT_INTEGER:
		if (lt->bit_width == 64)
			return physical == FLOE_PARQUET_INT64;
		return physical == FLOE_PARQUET_INT32 &&
		       (lt->bit_width == 8 || lt->bit_width == 16 || lt->bit_width == 32);
	case FLOE_PARQUET_LT_UUID:
		return physical == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY && type_length == 16;
	case FLOE_PARQUET_LT_FLOAT16:
		return physical == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY && type_length == 2;
	case FLOE_PARQUET_LT_UNKNOWN: return physical >= 0;
	default: return false;
	}
}

/* spec: LogicalTypes.md "backward compatibility": the converted type that a
 * logical type implies, if any. TIME/TIMESTAMP only when UTC-adjusted. */
static int converted_for(const floe_parquet_logical *lt)
{
	switch (lt->kind) {
	case FLOE_PARQUET_LT_STRING: return FLOE_PARQUET_CT_UTF8;
	case FLOE_PARQUET_LT_MAP: return FLOE_PARQUET_CT_MAP;
	case FLOE_PARQUET_LT_LIST: return FLOE_PARQUET_CT_LIST;
	case FLOE_PARQUET_LT_ENUM: return FLOE_PARQUET_CT_ENUM;
	case FLOE_PARQUET_LT_DECIMAL: return FLOE_PARQUET_CT_DECIMAL;
	case FLOE_PARQUET_LT_DATE: return FLOE_PARQUET_CT_DATE;
	case FLOE_PARQUET_LT_JSON: return FLOE_PARQUET_CT_JSON;
	case FLOE_PARQUET_LT_BSON: return FLOE_PARQUET_CT_BSON;
	case FLOE_PARQUET_LT_TIME:
		if (!lt->utc)
			return FLOE_PARQUET_CT_NONE;
		return lt->unit == FLOE_PARQUET_MILLIS	 ? FLOE_PARQUET_CT_TIME_MILLIS
		       : lt->unit == FLOE_PARQUET_MICROS ? FLOE_PARQUET_CT_TIME_MICROS
							 : FLOE_PARQUET_CT_NONE;
	case FLOE_PARQUET_LT_TIMESTAMP:
		if (!lt->utc)
			return FLOE_PARQUET_CT_NONE;
		return lt->unit == FLOE_PARQUET_MILLIS	 ? FLOE_PARQUET_CT_TIMESTAMP_MILLIS
		       : lt->unit == FLOE_PARQUET_MICROS ? FLOE_PARQUET_CT_TIMESTAMP_MICROS
							 : FLOE_PARQUET_CT_NONE;
	case FLOE_PARQUET_LT_INTEGER: {
		int base = lt->is_signed ? FLOE_PARQUET_CT_INT_8 : FLOE_PARQUET_CT_UINT_8;
		int k = lt->bit_width == 8 ? 0 : lt->bit_width == 16 ? 1 : lt->bit_width == 32 ? 2 : 3;
		return base + k;
	}
	default: return FLOE_PARQUET_CT_NONE;
	}
}

int floe_parquet_schema_new(floe_parquet_schema **out, const char *root_name, floe_error *err)
{
	floe_parquet_schema *s = floe_calloc(1, sizeof(*s));
	if (!s)
		return floe_error_oomf(err, "parquet schema: out of memory");
	floe_arena_init(&s->arena, 8192);
	s->root = floe_arena_calloc(&s->arena, 1, sizeof(*s->root));
	if (!s->root || !(s->root->name = floe_arena_strdup(&s->arena, root_name ? root_name : "schema"))) {
		floe_parquet_schema_free(s);
		return floe_error_oomf(err, "parquet schema: out of memory");
	}
	s->root->repetition = FLOE_PARQUET_REQUIRED;
	s->root->physical = -1;
	s->root->converted = FLOE_PARQUET_CT_NONE;
	s->root->logical.algorithm = -1;
	s->root->leaf_index = -1;
	*out = s;
	return FLOE_OK;
}

void floe_parquet_schema_free(floe_parquet_schema *s)
{
	if (!s)
		return;
	floe_arena_reset(&s->arena);
	floe_free(s);
}

static floe_parquet_node *new_node(floe_parquet_schema *s, floe_parquet_node *parent,
				   const floe_parquet_field *f, const char *name)
{
	floe_parquet_node *n = floe_arena_calloc(&s->arena, 1, sizeof(*n));
	if (!n)
		return NULL;
	n->name = floe_arena_strdup(&s->arena, name);
	if (!n->name)
		return NULL;
	n->repetition = f->repetition;
	n->physical = f->physical;
	n->type_length = f->type_length;
	n->logical = f->logical;
	if (f->logical.crs && !(n->logical.crs = floe_arena_strdup(&s->arena, f->logical.crs)))
		return NULL;
	n->converted = f->converted == FLOE_PARQUET_CT_AUTO ? converted_for(&f->logical)
							    : f->converted;
	n->has_field_id = f->has_field_id;
	n->field_id = f->field_id;
	n->leaf_index = -1;
	n->parent = parent;
	if (parent->b_last)
		parent->b_last->b_next = n;
	else
		parent->b_first = n;
	parent->b_last = n;
	parent->n_children++;
	return n;
}

static int add_named(floe_parquet_schema *s, floe_parquet_node *parent,
		     const floe_parquet_field *f, const char *name, floe_parquet_node **out,
		     floe_error *err)
{
	floe_parquet_node *n;
	if (s->finished)
		return floe_error_set(err, FLOE_EINVAL, "parquet schema: already finished");
	if (!parent)
		parent = s->root;
	if (parent->physical >= 0)
		return floe_error_set(err, FLOE_EINVAL, "parquet schema: '%s' is not a group",
				      parent->name);
	if (!name || !*name)
		return floe_error_set(err, FLOE_EINVAL, "parquet schema: a field has no name");
	if (f->repetition < FLOE_PARQUET_REQUIRED || f->repetition > FLOE_PARQUET_REPEATED)
		return floe_error_set(err, FLOE_EINVAL, "parquet schema: '%s': bad repetition",
				      name);
	if (f->physical == FLOE_PARQUET_INT96)
		return floe_error_set(err, FLOE_EINVAL,
				      "parquet schema: '%s': INT96 is deprecated and never written",
				      name);
	if (f->physical < -1 || f->physical > FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY)
		return floe_error_set(err, FLOE_EINVAL, "parquet schema: '%s': bad physical type",
				      name);
	if (f->physical == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY && f->type_length <= 0)
		return floe_error_set(err, FLOE_EINVAL,
				      "parquet schema: '%s': FIXED_LEN_BYTE_ARRAY needs a length",
				      name);
	if (!annotation_fits(f->physical, f->type_length, &f->logical))
		return floe_error_set(err, FLOE_EINVAL,
				      "parquet schema: '%s': logical type %d does not fit %s", name,
				      f->logical.kind,
				      f->physical < 0 ? "a group" : floe_parquet_type_name(f->physical));
	n = new_node(s, parent, f, name);
	if (!n)
		return floe_error_oomf(err, "parquet schema: out of memory");
	if (out)
		*out = n;
	return FLOE_OK;
}

int floe_parquet_schema_add(floe_parquet_schema *s, floe_parquet_node *parent,
			    const floe_parquet_field *f, floe_parquet_node **out, floe_error *err)
{
	return add_named(s, parent, f, f->name, out, err);
}

int floe_parquet_schema_add_list_node(floe_parquet_schema *s, floe_parquet_node *parent,
				      const floe_parquet_field *list, floe_parquet_node **list_out,
				      floe_parquet_node **repeated_out, floe_error *err)
{
	floe_parquet_field outer = *list, mid = FLOE_PARQUET_FIELD_INIT;
	floe_parquet_node *o = NULL;
	int rc;
	outer.physical = -1;
	outer.logical = (floe_parquet_logical){FLOE_PARQUET_LT_LIST, 0, 0, 0, false, 0, false, NULL, -1};
	outer.converted = FLOE_PARQUET_CT_LIST;
	mid.repetition = FLOE_PARQUET_REPEATED;
	mid.converted = FLOE_PARQUET_CT_NONE;
	if ((rc = add_named(s, parent, &outer, list->name, &o, err)) ||
	    (rc = add_named(s, o, &mid, "list", repeated_out, err)))
		return rc;
	if (list_out)
		*list_out = o;
	return FLOE_OK;
}

int floe_parquet_schema_add_map_node(floe_parquet_schema *s, floe_parquet_node *parent,
				     const floe_parquet_field *map, floe_parquet_node **map_out,
				     floe_parquet_node **repeated_out, floe_error *err)
{
	floe_parquet_field outer = *map, mid = FLOE_PARQUET_FIELD_INIT;
	floe_parquet_node *o = NULL;
	int rc;
	outer.physical = -1;
	outer.logical = (floe_parquet_logical){FLOE_PARQUET_LT_MAP, 0, 0, 0, false, 0, false, NULL, -1};
	outer.converted = FLOE_PARQUET_CT_MAP;
	mid.repetition = FLOE_PARQUET_REPEATED;
	mid.converted = FLOE_PARQUET_CT_NONE;
	if ((rc = add_named(s, parent, &outer, map->name, &o, err)) ||
	    (rc = add_named(s, o, &mid, "key_value", repeated_out, err)))
		return rc;
	if (map_out)
		*map_out = o;
	return FLOE_OK;
}

int floe_parquet_schema_add_list(floe_parquet_schema *s, floe_parquet_node *parent,
				 const floe_parquet_field *list, const floe_parquet_field *element,
				 floe_parquet_node **list_out, floe_parquet_node **element_out,
				 floe_error *err)
{
	floe_parquet_node *m = NULL;
	int rc = floe_parquet_schema_add_list_node(s, parent, list, list_out, &m, err);
	return rc ? rc : add_named(s, m, element, "element", element_out, err);
}

int floe_parquet_schema_add_map(floe_parquet_schema *s, floe_parquet_node *parent,
				const floe_parquet_field *map, const floe_parquet_field *key,
				const floe_parquet_field *value, floe_parquet_node **map_out,
				floe_parquet_node **key_out, floe_parquet_node **value_out,
				floe_error *err)
{
	floe_parquet_field k = *key;
	floe_parquet_node *m = NULL;
	int rc;
	k.repetition = FLOE_PARQUET_REQUIRED;
	if ((rc = floe_parquet_schema_add_map_node(s, parent, map, map_out, &m, err)) ||
	    (rc = add_named(s, m, &k, "key", key_out, err)) ||
	    (rc = add_named(s, m, value, "value", value_out, err)))
		return rc;
	return FLOE_OK;
}

/* Depth-first numbering: count nodes and leaves, check depth. */
static int count_nodes(floe_parquet_node *n, int depth, int *nodes, int *leaves, floe_error *err)
{
	if (depth > FLOE_PARQUET_MAX_DEPTH)
		return floe_error_set(err, FLOE_EINVAL, "parquet schema: nested deeper than %d levels",
				      FLOE_PARQUET_MAX_DEPTH);
	(*nodes)++;
	if (n->physical >= 0) {
		(*leaves)++;
		return FLOE_OK;
	}
	for (floe_parquet_node *c = n->b_first; c; c = c->b_next) {
		int rc = count_nodes(c, depth + 1, nodes, leaves, err);
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

static int link_nodes(floe_parquet_schema *s, floe_parquet_node *n, int depth)
{
	floe_parquet_node *p = n->parent;
	int i = 0;
	n->index = s->n_nodes;
	s->nodes[s->n_nodes++] = n;
	n->depth = depth;
	if (p) {
		n->def_level = p->def_level + (n->repetition != FLOE_PARQUET_REQUIRED);
		n->rep_level = p->rep_level + (n->repetition == FLOE_PARQUET_REPEATED);
		n->path = floe_arena_calloc(&s->arena, (size_t)depth, sizeof(char *));
		if (!n->path)
			return FLOE_ENOMEM;
		for (int d = 0; d < depth - 1; d++)
			n->path[d] = p->path[d];
		n->path[depth - 1] = n->name;
	}
	n->first_leaf = s->n_leaves;
	if (n->physical >= 0) {
		n->leaf_index = s->n_leaves;
		s->leaves[s->n_leaves++] = n;
		n->n_leaves = 1;
		return FLOE_OK;
	}
	if (n->n_children > 0) {
		n->children = floe_arena_calloc(&s->arena, (size_t)n->n_children, sizeof(*n->children));
		if (!n->children)
			return FLOE_ENOMEM;
	}
	for (floe_parquet_node *c = n->b_first; c; c = c->b_next) {
		int rc;
		n->children[i++] = c;
		if ((rc = link_nodes(s, c, depth + 1)))
			return rc;
	}
	n->n_leaves = s->n_leaves - n->first_leaf;
	return FLOE_OK;
}

static int finish(floe_parquet_schema *s, bool allow_empty_groups, floe_error *err)
{
	int nodes = 0, leaves = 0, rc;
	if (s->finished)
		return FLOE_OK;
	if ((rc = count_nodes(s->root, 0, &nodes, &leaves, err)))
		return rc;
	s->nodes = floe_arena_calloc(&s->arena, (size_t)nodes, sizeof(*s->nodes));
	s->leaves = floe_arena_calloc(&s->arena, (size_t)(leaves ? leaves : 1), sizeof(*s->leaves));
	if (!s->nodes || !s->leaves)
		return floe_error_oomf(err, "parquet schema: out of memory");
	if (link_nodes(s, s->root, 0))
		return floe_error_oomf(err, "parquet schema: out of memory");
	if (!allow_empty_groups) {
		for (int i = 0; i < s->n_nodes; i++)
			if (s->nodes[i]->physical < 0 && s->nodes[i]->n_children == 0)
				return floe_error_set(err, FLOE_EINVAL,
						      "parquet schema: group '%s' has no fields",
						      s->nodes[i]->name);
	}
	s->finished = true;
	return FLOE_OK;
}

int floe_parquet_schema_finish(floe_parquet_schema *s, floe_error *err)
{
	return finish(s, false, err);
}

/* Build nodes from elements [*pos...] recursively. */
static int from_elems(floe_parquet_schema *s, floe_parquet_node *parent,
		      const floe_parquet_file_meta *m, size_t *pos, int depth, const char *name,
		      floe_error *err)
{
	const floe_parquet_schema_elem *e = &m->schema[*pos];
	floe_parquet_field f = FLOE_PARQUET_FIELD_INIT;
	floe_parquet_node *n;
	bool group;
	int32_t nc;

	if (depth > FLOE_PARQUET_MAX_DEPTH)
		return floe_error_corrupt(err, "'%s': schema nested deeper than %d levels",
				      name, FLOE_PARQUET_MAX_DEPTH);
	group = e->has_num_children && (e->num_children > 0 || e->type < 0);
	nc = group ? e->num_children : 0;
	if (!group && e->type < 0)
		return floe_error_corrupt(err, "'%s': schema element %zu ('%s') is neither a group nor typed",
				      name, *pos, e->name);
	if ((size_t)nc > m->n_schema - *pos - 1)
		return floe_error_corrupt(err, "'%s': schema element %zu ('%s') claims %d children, only %zu "
				      "elements follow",
				      name, *pos, e->name, (int)nc, m->n_schema - *pos - 1);
	f.repetition = e->repetition < 0 ? FLOE_PARQUET_REQUIRED : e->repetition;
	f.has_field_id = e->has_field_id;
	f.field_id = e->field_id;
	f.physical = group ? -1 : e->type;
	f.type_length = e->has_type_length ? e->type_length : 0;
	f.logical = e->logical;
	f.converted = e->converted;
	if (!group && f.physical == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY && f.type_length <= 0)
		return floe_error_corrupt(err, "'%s': column '%s' is FIXED_LEN_BYTE_ARRAY without a length",
				      name, e->name);
	if (!annotation_fits(f.physical, f.type_length, &f.logical))
		f.logical.kind = FLOE_PARQUET_LT_NONE; /* read as the physical type */
	if (parent) {
		if (!(n = new_node(s, parent, &f, e->name)))
			return floe_error_oom(err);
	} else {
		n = s->root;
		n->has_field_id = f.has_field_id;
		n->field_id = f.field_id;
	}
	(*pos)++;
	for (int32_t i = 0; i < nc; i++) {
		int rc;
		if (*pos >= m->n_schema)
			return floe_error_corrupt(err, "'%s': schema list ends early", name);
		if ((rc = from_elems(s, n, m, pos, depth + 1, name, err)))
			return rc;
	}
	return FLOE_OK;
}

int floe_parquet_schema_from_meta(floe_parquet_schema **out, const floe_parquet_file_meta *m,
				  const char *name, floe_error *err)
{
	floe_parquet_schema *s = NULL;
	size_t pos = 0;
	int rc;
	if (!name)
		name = "parquet";
	if (m->n_schema == 0)
		return floe_error_corrupt(err, "'%s': empty schema", name);
	if ((rc = floe_parquet_schema_new(&s, m->schema[0].name, err)))
		return rc;
	if (!m->schema[0].has_num_children)
		rc = floe_error_corrupt(err, "'%s': the schema root is not a group", name);
	else
		rc = from_elems(s, NULL, m, &pos, 0, name, err);
	if (!rc && pos != m->n_schema)
		rc = floe_error_corrupt(err, "'%s': schema has %zu elements but the tree uses %zu", name,
				    m->n_schema, pos);
	if (!rc && (rc = finish(s, true, err)) == FLOE_EINVAL)
		rc = floe_error_corrupt(err, "'%s': %s", name, err ? err->msg : "");
	if (rc) {
		floe_parquet_schema_free(s);
		return rc;
	}
	*out = s;
	return FLOE_OK;
}

int floe_parquet_schema_to_elems(const floe_parquet_schema *s, floe_arena *a,
				 floe_parquet_schema_elem **out, size_t *n)
{
	floe_parquet_schema_elem *e;
	if (!s->finished)
		return FLOE_EINVAL;
	e = floe_arena_calloc(a, (size_t)s->n_nodes, sizeof(*e));
	if (!e)
		return FLOE_ENOMEM;
	for (int i = 0; i < s->n_nodes; i++) {
		const floe_parquet_node *nd = s->nodes[i];
		floe_parquet_schema_elem *x = &e[i];
		x->name = nd->name;
		x->type = nd->physical;
		x->repetition = nd == s->root ? -1 : nd->repetition;
		x->has_type_length = nd->physical == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY;
		x->type_length = nd->type_length;
		x->has_num_children = nd->physical < 0;
		x->num_children = nd->n_children;
		x->converted = nd->converted;
		if (nd->converted == FLOE_PARQUET_CT_DECIMAL) {
			x->has_scale = x->has_precision = true;
			x->scale = nd->logical.scale;
			x->precision = nd->logical.precision;
		}
		x->has_field_id = nd->has_field_id;
		x->field_id = nd->field_id;
		x->logical = nd->logical;
	}
	*out = e;
	*n = (size_t)s->n_nodes;
	return FLOE_OK;
}

floe_parquet_node *floe_parquet_schema_find_id(const floe_parquet_schema *s, int32_t field_id)
{
	for (int i = 1; i < s->n_nodes; i++)
		if (s->nodes[i]->has_field_id && s->nodes[i]->field_id == field_id)
			return s->nodes[i];
	return NULL;
}

const char *floe_parquet_node_path(const floe_parquet_node *n, char *buf, size_t cap)
{
	size_t off = 0;
	if (cap == 0)
		return buf;
	buf[0] = 0;
	for (int i = 0; i < n->depth && off < cap; i++) {
		int k = snprintf(buf + off, cap - off, "%s%s", i ? "." : "", n->path[i]);
		if (k < 0)
			break;
		off += (size_t)k;
	}
	return buf;
}

static const char *unit_name(int unit)
{
	return unit == FLOE_PARQUET_MILLIS ? "MILLIS" : unit == FLOE_PARQUET_MICROS ? "MICROS" : "NANOS";
}

static int print_annotation(const floe_parquet_node *n, floe_buf *out)
{
	const floe_parquet_logical *lt = &n->logical;
	switch (lt->kind) {
	case FLOE_PARQUET_LT_NONE:
		if (n->converted != FLOE_PARQUET_CT_NONE && n->converted != FLOE_PARQUET_CT_MAP_KEY_VALUE)
			return floe_buf_printf(out, " (%s)", floe_parquet_converted_name(n->converted));
		return FLOE_OK;
	case FLOE_PARQUET_LT_STRING: return floe_buf_puts(out, " (STRING)");
	case FLOE_PARQUET_LT_MAP: return floe_buf_puts(out, " (MAP)");
	case FLOE_PARQUET_LT_LIST: return floe_buf_puts(out, " (LIST)");
	case FLOE_PARQUET_LT_ENUM: return floe_buf_puts(out, " (ENUM)");
	case FLOE_PARQUET_LT_DECIMAL:
		return floe_buf_printf(out, " (DECIMAL(%d,%d))", (int)lt->precision, (int)lt->scale);
	case FLOE_PARQUET_LT_DATE: return floe_buf_puts(out, " (DATE)");
	case FLOE_PARQUET_LT_TIME:
		return floe_buf_printf(out, " (TIME(%s,%s))", unit_name(lt->unit),
				       lt->utc ? "true" : "false");
	case FLOE_PARQUET_LT_TIMESTAMP:
		return floe_buf_printf(out, " (TIMESTAMP(%s,%s))", unit_name(lt->unit),
				       lt->utc ? "true" : "false");
	case FLOE_PARQUET_LT_INTEGER:
		return floe_buf_printf(out, " (INTEGER(%d,%s))", (int)lt->bit_width,
				       lt->is_signed ? "true" : "false");
	case FLOE_PARQUET_LT_UNKNOWN: return floe_buf_puts(out, " (UNKNOWN)");
	case FLOE_PARQUET_LT_JSON: return floe_buf_puts(out, " (JSON)");
	case FLOE_PARQUET_LT_BSON: return floe_buf_puts(out, " (BSON)");
	case FLOE_PARQUET_LT_UUID: return floe_buf_puts(out, " (UUID)");
	case FLOE_PARQUET_LT_FLOAT16: return floe_buf_puts(out, " (FLOAT16)");
	case FLOE_PARQUET_LT_VARIANT: return floe_buf_puts(out, " (VARIANT)");
	case FLOE_PARQUET_LT_GEOMETRY: return floe_buf_puts(out, " (GEOMETRY)");
	case FLOE_PARQUET_LT_GEOGRAPHY: return floe_buf_puts(out, " (GEOGRAPHY)");
	default: return FLOE_OK;
	}
}

static int print_node(const floe_parquet_node *n, int indent, floe_buf *out)
{
	static const char *types[] = {"boolean", "int32",  "int64",  "int96",
				      "float",	 "double", "binary", "fixed_len_byte_array"};
	int rc;
	if ((rc = floe_buf_printf(out, "%*s%s ", indent * 2, "",
				  floe_parquet_repetition_name(n->repetition))))
		return rc;
	if (n->physical < 0)
		rc = floe_buf_printf(out, "group %s", n->name);
	else if (n->physical == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY)
		rc = floe_buf_printf(out, "fixed_len_byte_array(%d) %s", (int)n->type_length, n->name);
	else
		rc = floe_buf_printf(out, "%s %s", types[n->physical], n->name);
	if (rc || (rc = print_annotation(n, out)))
		return rc;
	if (n->has_field_id && (rc = floe_buf_printf(out, " = %d", (int)n->field_id)))
		return rc;
	if (n->physical >= 0)
		return floe_buf_puts(out, ";\n");
	if ((rc = floe_buf_puts(out, " {\n")))
		return rc;
	for (int i = 0; i < n->n_children; i++)
		if ((rc = print_node(n->children[i], indent + 1, out)))
			return rc;
	return floe_buf_printf(out, "%*s}\n", indent * 2, "");
}

int floe_parquet_schema_print(const floe_parquet_schema *s, floe_buf *out)
{
	int rc = floe_buf_printf(out, "message %s {\n", s->root->name);
	for (int i = 0; !rc && i < s->root->n_children; i++)
		rc = print_node(s->root->children[i], 1, out);
	if (!rc)
		rc = floe_buf_puts(out, "}\n");
	return rc;
}
