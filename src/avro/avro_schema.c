/*
 * schema.c — Avro schema JSON parser, lookups and structural equality.
 *
 * spec: Avro 1.12 "Schema Declaration" and "Names". The parser is lenient
 * where real writers are (a name is not checked against the [A-Za-z_]...
 * pattern, unknown attributes are kept, defaults are validated only when a
 * resolution needs them) and strict where a mistake would mis-decode data
 * (unknown types, redefined names, duplicate fields or union branches, bad id
 * attributes, negative fixed sizes).
 */
#include "avro/avro_int.h"
#include "avro/avro_schema.h"

#include <stdarg.h>
#include <string.h>

#include "util/hmap.h"
#include "util/str.h"

enum { MARK_NONE = 0, MARK_OPEN = 1, MARK_DONE = 2 };

typedef struct sparser {
	floe_arena *a;
	floe_error *err;
	floe_avro_schema_limits lim;
	size_t nodes;
	uint32_t next_id;
	floe_hmap names; /* fullname -> floe_avro_schema * */
} sparser;

const char *floe_avro_type_name(floe_avro_type t)
{
	switch (t) {
	case FLOE_AVRO_NULL: return "null";
	case FLOE_AVRO_BOOLEAN: return "boolean";
	case FLOE_AVRO_INT: return "int";
	case FLOE_AVRO_LONG: return "long";
	case FLOE_AVRO_FLOAT: return "float";
	case FLOE_AVRO_DOUBLE: return "double";
	case FLOE_AVRO_BYTES: return "bytes";
	case FLOE_AVRO_STRING: return "string";
	case FLOE_AVRO_RECORD: return "record";
	case FLOE_AVRO_ENUM: return "enum";
	case FLOE_AVRO_ARRAY: return "array";
	case FLOE_AVRO_MAP: return "map";
	case FLOE_AVRO_UNION: return "union";
	case FLOE_AVRO_FIXED: return "fixed";
	}
	return "unknown";
}

static bool primitive_by_name(const char *s, size_t n, floe_avro_type *t)
{
	static const struct {
		const char *name;
		floe_avro_type t;
	} prims[] = {
		{"null", FLOE_AVRO_NULL},     {"boolean", FLOE_AVRO_BOOLEAN},
		{"int", FLOE_AVRO_INT},       {"long", FLOE_AVRO_LONG},
		{"float", FLOE_AVRO_FLOAT},   {"double", FLOE_AVRO_DOUBLE},
		{"bytes", FLOE_AVRO_BYTES},   {"string", FLOE_AVRO_STRING},
	};
	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (floe_slice_eq(s, n, prims[i].name)) {
			*t = prims[i].t;
			return true;
		}
	return false;
}

static int corrupt(sparser *ps, const char *fmt, ...) FLOE_PRINTF(2, 3);
static int corrupt(sparser *ps, const char *fmt, ...)
{
	va_list ap;
	int rc;
	va_start(ap, fmt);
	rc = floe_error_setv(ps->err, FLOE_ECORRUPT, fmt, ap);
	va_end(ap);
	return rc;
}

static int nomem(sparser *ps)
{
	return floe_error_oomf(ps->err, "out of memory parsing an Avro schema");
}

static floe_avro_schema *new_node(sparser *ps, floe_avro_type t)
{
	floe_avro_schema *s;
	if (++ps->nodes > ps->lim.max_nodes)
		return NULL;
	s = floe_arena_calloc(ps->a, 1, sizeof(*s));
	if (!s)
		return NULL;
	s->type = t;
	s->element_id = s->key_id = s->value_id = FLOE_AVRO_ID_NONE;
	s->precision = s->scale = FLOE_AVRO_ID_NONE;
	s->adjust_to_utc = -1;
	return s;
}

static int node_fail(sparser *ps)
{
	if (ps->nodes > ps->lim.max_nodes)
		return floe_error_corrupt(ps->err, "schema has more than %zu nodes", ps->lim.max_nodes);
	return nomem(ps);
}

/* An id attribute: a JSON integer in int32 range (INT32_MIN is reserved). */
static int read_id(sparser *ps, const floe_json *v, const char *key, int32_t *out)
{
	if (v->type != FLOE_JSON_NUMBER || !v->is_int || v->i <= INT32_MIN || v->i > INT32_MAX)
		return corrupt(ps, "'%s' must be an integer in the int32 range", key);
	*out = (int32_t)v->i;
	return FLOE_OK;
}

static int add_attr(sparser *ps, floe_avro_attr **attrs, size_t *n, const floe_json *v,
		    size_t cap_hint)
{
	if (!*attrs) {
		*attrs = floe_arena_calloc(ps->a, cap_hint, sizeof(**attrs));
		if (!*attrs)
			return nomem(ps);
	}
	(*attrs)[*n].key = v->key;
	(*attrs)[*n].value = v;
	(*n)++;
	return FLOE_OK;
}

static int read_aliases(sparser *ps, const floe_json *v, const char ***out, size_t *n)
{
	size_t i = 0;
	if (v->type != FLOE_JSON_ARRAY)
		return corrupt(ps, "'%s' must be an array of strings", "aliases");
	*out = floe_arena_calloc(ps->a, v->len ? v->len : 1, sizeof(char *));
	if (!*out)
		return nomem(ps);
	for (const floe_json *c = v->child; c; c = c->next) {
		if (c->type != FLOE_JSON_STRING || c->len == 0)
			return corrupt(ps, "'%s' must be an array of strings", "aliases");
		(*out)[i++] = c->s;
	}
	*n = i;
	return FLOE_OK;
}

/* Name and namespace of a named type; registers the full name. */
static int read_name(sparser *ps, const floe_json *j, const char *enc_ns, floe_avro_schema *s)
{
	const floe_json *nm = floe_json_get(j, "name"), *ns = floe_json_get(j, "namespace");
	const char *dot;
	floe_avro_type prim;
	bool existed = false;
	if (!nm || nm->type != FLOE_JSON_STRING || nm->len == 0)
		return corrupt(ps, "a %s needs a non-empty string \"name\"",
			       floe_avro_type_name(s->type));
	if (memchr(nm->s, '\0', nm->len))
		return corrupt(ps, "bad name '%s'", nm->s);
	dot = strrchr(nm->s, '.');
	if (dot) {
		/* spec: a dotted name is a full name; "namespace" is then ignored */
		s->name = dot + 1;
		s->space = dot == nm->s ? NULL
					: floe_arena_strndup(ps->a, nm->s, (size_t)(dot - nm->s));
		if (dot != nm->s && !s->space)
			return nomem(ps);
		if (!*s->name)
			return corrupt(ps, "bad name '%s'", nm->s);
	} else {
		s->name = nm->s;
		if (ns && ns->type == FLOE_JSON_STRING)
			s->space = ns->len ? ns->s : NULL;
		else if (ns && ns->type != FLOE_JSON_NULL)
			return corrupt(ps, "'%s' must be a string", "namespace");
		else
			s->space = enc_ns;
	}
	if (primitive_by_name(s->name, strlen(s->name), &prim))
		return corrupt(ps, "a named type may not be called '%s'", s->name);
	s->fullname = s->space ? floe_arena_sprintf(ps->a, "%s.%s", s->space, s->name) : s->name;
	if (!s->fullname)
		return nomem(ps);
	if (floe_hmap_put(&ps->names, s->fullname, strlen(s->fullname), (uint64_t)(uintptr_t)s,
			  &existed))
		return nomem(ps);
	if (existed)
		return corrupt(ps, "named type '%s' is defined twice", s->fullname);
	return FLOE_OK;
}

static int parse_node(sparser *ps, const floe_json *j, const char *enc_ns,
		      floe_avro_schema **out);

static int resolve_ref(sparser *ps, const char *name, size_t n, const char *enc_ns,
		       floe_avro_schema **out)
{
	uint64_t v = 0;
	bool found = false;
	if (memchr(name, '.', n) || !enc_ns) {
		found = floe_hmap_get(&ps->names, name, n, &v);
	} else {
		char *full = floe_arena_sprintf(ps->a, "%s.%.*s", enc_ns, (int)n, name);
		if (!full)
			return nomem(ps);
		found = floe_hmap_get(&ps->names, full, strlen(full), &v);
		if (!found) /* the null namespace, as Java also allows */
			found = floe_hmap_get(&ps->names, name, n, &v);
	}
	if (!found)
		return corrupt(ps, "unknown type '%s'", name);
	*out = (floe_avro_schema *)(uintptr_t)v;
	if ((*out)->mark == MARK_OPEN)
		return floe_error_set(ps->err, FLOE_EUNSUPPORTED,
				      "recursive schemas are not supported (type '%s' refers to itself)",
				      name);
	return FLOE_OK;
}

static int parse_field(sparser *ps, const floe_json *fj, const char *enc_ns, floe_avro_field *f,
		       size_t nth)
{
	const floe_json *nm, *ty;
	int rc;
	if (fj->type != FLOE_JSON_OBJECT)
		return floe_error_corrupt(ps->err, "field %zu is not an object", nth);
	nm = floe_json_get(fj, "name");
	if (!nm || nm->type != FLOE_JSON_STRING || nm->len == 0)
		return floe_error_corrupt(ps->err, "field %zu needs a non-empty string \"name\"", nth);
	f->name = nm->s;
	f->field_id = FLOE_AVRO_ID_NONE;
	ty = floe_json_get(fj, "type");
	if (!ty)
		return floe_error_corrupt(ps->err, "field '%s' has no \"type\"", f->name);
	if ((rc = parse_node(ps, ty, enc_ns, &f->type)))
		return AVRO_PREFIX(rc, ps->err, "field '%s': ", f->name);
	for (const floe_json *c = fj->child; c; c = c->next) {
		if (floe_slice_eq(c->key, c->key_len, "name") ||
		    floe_slice_eq(c->key, c->key_len, "type"))
			continue;
		if (floe_slice_eq(c->key, c->key_len, "doc") && c->type == FLOE_JSON_STRING) {
			f->doc = c->s;
		} else if (floe_slice_eq(c->key, c->key_len, "default")) {
			f->default_value = c;
		} else if (floe_slice_eq(c->key, c->key_len, "field-id")) {
			if ((rc = read_id(ps, c, "field-id", &f->field_id)))
				return AVRO_PREFIX(rc, ps->err, "field '%s': ", f->name);
		} else if (floe_slice_eq(c->key, c->key_len, "aliases")) {
			if ((rc = read_aliases(ps, c, &f->aliases, &f->n_aliases)))
				return AVRO_PREFIX(rc, ps->err, "field '%s': ", f->name);
		} else if ((rc = add_attr(ps, &f->attrs, &f->n_attrs, c, fj->len))) {
			return rc;
		}
	}
	return FLOE_OK;
}

static int parse_record(sparser *ps, const floe_json *j, floe_avro_schema *s)
{
	const floe_json *fl = floe_json_get(j, "fields");
	size_t i = 0;
	int rc;
	if (!fl || fl->type != FLOE_JSON_ARRAY)
		return corrupt(ps, "record '%s' needs a \"fields\" array", s->fullname);
	if (fl->len > ps->lim.max_nodes - ps->nodes)
		return node_fail(ps);
	ps->nodes += fl->len;
	s->fields = floe_arena_calloc(ps->a, fl->len ? fl->len : 1, sizeof(*s->fields));
	if (!s->fields)
		return nomem(ps);
	for (const floe_json *c = fl->child; c; c = c->next, i++) {
		if ((rc = parse_field(ps, c, s->space, &s->fields[i], i)))
			return rc;
		for (size_t k = 0; k < i; k++)
			if (strcmp(s->fields[k].name, s->fields[i].name) == 0)
				return corrupt(ps, "duplicate field name '%s'", s->fields[i].name);
	}
	s->n_fields = i;
	s->fields_cap = i;
	return FLOE_OK;
}

static int parse_enum(sparser *ps, const floe_json *j, floe_avro_schema *s)
{
	const floe_json *sy = floe_json_get(j, "symbols"), *d = floe_json_get(j, "default");
	size_t i = 0;
	if (!sy || sy->type != FLOE_JSON_ARRAY)
		return corrupt(ps, "enum '%s' needs a \"symbols\" array", s->fullname);
	s->symbols = floe_arena_calloc(ps->a, sy->len ? sy->len : 1, sizeof(char *));
	if (!s->symbols)
		return nomem(ps);
	for (const floe_json *c = sy->child; c; c = c->next, i++) {
		if (c->type != FLOE_JSON_STRING || c->len == 0)
			return corrupt(ps, "enum '%s': symbols must be non-empty strings",
				       s->fullname);
		s->symbols[i] = c->s;
		for (size_t k = 0; k < i; k++)
			if (strcmp(s->symbols[k], c->s) == 0)
				return corrupt(ps, "duplicate enum symbol '%s'", c->s);
	}
	s->n_symbols = i;
	if (d) {
		bool ok = false;
		if (d->type != FLOE_JSON_STRING)
			return corrupt(ps, "enum '%s': default must be a symbol", s->fullname);
		for (size_t k = 0; k < i; k++)
			ok = ok || strcmp(s->symbols[k], d->s) == 0;
		if (!ok)
			return corrupt(ps, "enum default '%s' is not a symbol", d->s);
		s->enum_default = d->s;
	}
	return FLOE_OK;
}

/* Is this member consumed by the node itself (not kept as an attribute)? */
static bool known_key(const floe_avro_schema *s, const floe_json *c)
{
	const char *k = c->key;
	size_t n = c->key_len;
	if (floe_slice_eq(k, n, "type"))
		return true;
	switch (s->type) {
	case FLOE_AVRO_RECORD:
		return floe_slice_eq(k, n, "name") || floe_slice_eq(k, n, "namespace") ||
		       floe_slice_eq(k, n, "fields") || floe_slice_eq(k, n, "aliases") ||
		       (floe_slice_eq(k, n, "doc") && c->type == FLOE_JSON_STRING);
	case FLOE_AVRO_ENUM:
		return floe_slice_eq(k, n, "name") || floe_slice_eq(k, n, "namespace") ||
		       floe_slice_eq(k, n, "symbols") || floe_slice_eq(k, n, "aliases") ||
		       floe_slice_eq(k, n, "default") ||
		       (floe_slice_eq(k, n, "doc") && c->type == FLOE_JSON_STRING);
	case FLOE_AVRO_FIXED:
		return floe_slice_eq(k, n, "name") || floe_slice_eq(k, n, "namespace") ||
		       floe_slice_eq(k, n, "size") || floe_slice_eq(k, n, "aliases") ||
		       (floe_slice_eq(k, n, "doc") && c->type == FLOE_JSON_STRING);
	case FLOE_AVRO_ARRAY: return floe_slice_eq(k, n, "items");
	case FLOE_AVRO_MAP: return floe_slice_eq(k, n, "values");
	default: return false;
	}
}

/* Attributes common to every object schema: logicalType, its parameters,
 * the Iceberg ids; the rest is kept in attrs. */
static int read_attrs(sparser *ps, const floe_json *j, floe_avro_schema *s)
{
	int rc;
	for (const floe_json *c = j->child; c; c = c->next) {
		const char *k = c->key;
		size_t n = c->key_len;
		if (known_key(s, c))
			continue;
		if (floe_slice_eq(k, n, "logicalType") && c->type == FLOE_JSON_STRING) {
			s->logical_type = c->s;
		} else if ((floe_slice_eq(k, n, "precision") ||
			    floe_slice_eq(k, n, "scale")) &&
			   c->type == FLOE_JSON_NUMBER && c->is_int && c->i >= 0 &&
			   c->i <= INT32_MAX) {
			if (k[0] == 'p')
				s->precision = (int32_t)c->i;
			else
				s->scale = (int32_t)c->i;
		} else if (floe_slice_eq(k, n, "adjust-to-utc") && c->type == FLOE_JSON_BOOL) {
			s->adjust_to_utc = c->b ? 1 : 0;
		} else if (s->type == FLOE_AVRO_ARRAY && floe_slice_eq(k, n, "element-id")) {
			if ((rc = read_id(ps, c, "element-id", &s->element_id)))
				return rc;
		} else if (s->type == FLOE_AVRO_MAP && floe_slice_eq(k, n, "key-id")) {
			if ((rc = read_id(ps, c, "key-id", &s->key_id)))
				return rc;
		} else if (s->type == FLOE_AVRO_MAP && floe_slice_eq(k, n, "value-id")) {
			if ((rc = read_id(ps, c, "value-id", &s->value_id)))
				return rc;
		} else if ((rc = add_attr(ps, &s->attrs, &s->n_attrs, c, j->len))) {
			return rc;
		}
	}
	return FLOE_OK;
}

static int parse_object(sparser *ps, const floe_json *j, const char *enc_ns,
			floe_avro_schema **out)
{
	const floe_json *ty = floe_json_get(j, "type"), *c;
	floe_avro_schema *s = NULL;
	floe_avro_type t;
	int rc;

	if (!ty)
		return corrupt(ps, "schema object has no \"%s\"", "type");
	if (ty->type != FLOE_JSON_STRING)
		/* {"type": {...}} or {"type": [...]}: the inner schema (Java accepts it) */
		return parse_node(ps, ty, enc_ns, out);
	if (primitive_by_name(ty->s, ty->len, &t)) {
	} else if (floe_slice_eq(ty->s, ty->len, "record") ||
		   floe_slice_eq(ty->s, ty->len, "error")) {
		t = FLOE_AVRO_RECORD;
	} else if (floe_slice_eq(ty->s, ty->len, "enum")) {
		t = FLOE_AVRO_ENUM;
	} else if (floe_slice_eq(ty->s, ty->len, "array")) {
		t = FLOE_AVRO_ARRAY;
	} else if (floe_slice_eq(ty->s, ty->len, "map")) {
		t = FLOE_AVRO_MAP;
	} else if (floe_slice_eq(ty->s, ty->len, "fixed")) {
		t = FLOE_AVRO_FIXED;
	} else {
		/* {"type": "SomeName"}: a reference */
		return resolve_ref(ps, ty->s, ty->len, enc_ns, out);
	}
	if (!(s = new_node(ps, t)))
		return node_fail(ps);
	s->node_id = ps->next_id++;
	if (t == FLOE_AVRO_RECORD || t == FLOE_AVRO_ENUM || t == FLOE_AVRO_FIXED) {
		if ((rc = read_name(ps, j, enc_ns, s)))
			return rc;
		if ((c = floe_json_get(j, "doc")) && c->type == FLOE_JSON_STRING)
			s->doc = c->s;
		if ((c = floe_json_get(j, "aliases")) &&
		    (rc = read_aliases(ps, c, &s->aliases, &s->n_aliases)))
			return rc;
	}
	s->mark = MARK_OPEN;
	switch (t) {
	case FLOE_AVRO_RECORD:
		if ((rc = parse_record(ps, j, s)))
			return AVRO_PREFIX(rc, ps->err, "record '%s': ", s->fullname);
		break;
	case FLOE_AVRO_ENUM:
		if ((rc = parse_enum(ps, j, s)))
			return rc;
		break;
	case FLOE_AVRO_ARRAY:
		if (!(c = floe_json_get(j, "items")))
			return corrupt(ps, "array schema has no \"%s\"", "items");
		if ((rc = parse_node(ps, c, enc_ns, &s->items)))
			return AVRO_PREFIX(rc, ps->err, "array items: ");
		break;
	case FLOE_AVRO_MAP:
		if (!(c = floe_json_get(j, "values")))
			return corrupt(ps, "map schema has no \"%s\"", "values");
		if ((rc = parse_node(ps, c, enc_ns, &s->items)))
			return AVRO_PREFIX(rc, ps->err, "map values: ");
		break;
	case FLOE_AVRO_FIXED:
		c = floe_json_get(j, "size");
		if (!c || c->type != FLOE_JSON_NUMBER || !c->is_int || c->i < 0 ||
		    c->i > INT32_MAX)
			return corrupt(ps, "fixed '%s' needs a non-negative integer \"size\"",
				       s->fullname);
		s->size = (size_t)c->i;
		break;
	default: break;
	}
	if ((rc = read_attrs(ps, j, s)))
		return rc;
	s->mark = MARK_DONE;
	*out = s;
	return FLOE_OK;
}

/* Two union branches that Avro forbids together: same unnamed type or the
 * same full name. */
static bool same_branch_kind(const floe_avro_schema *a, const floe_avro_schema *b)
{
	if (a->type != b->type)
		return false;
	if (a->type == FLOE_AVRO_RECORD || a->type == FLOE_AVRO_ENUM || a->type == FLOE_AVRO_FIXED)
		return strcmp(a->fullname, b->fullname) == 0;
	return true;
}

static int parse_union(sparser *ps, const floe_json *j, const char *enc_ns,
		       floe_avro_schema **out)
{
	floe_avro_schema *s = new_node(ps, FLOE_AVRO_UNION);
	size_t i = 0;
	int rc;
	if (!s)
		return node_fail(ps);
	s->node_id = ps->next_id++;
	s->branches = floe_arena_calloc(ps->a, j->len ? j->len : 1, sizeof(*s->branches));
	if (!s->branches)
		return nomem(ps);
	for (const floe_json *c = j->child; c; c = c->next, i++) {
		if ((rc = parse_node(ps, c, enc_ns, &s->branches[i])))
			return AVRO_PREFIX(rc, ps->err, "union branch %zu: ", i);
		if (s->branches[i]->type == FLOE_AVRO_UNION)
			return floe_error_corrupt(ps->err, "union branch %zu: unions may not contain unions", i);
		for (size_t k = 0; k < i; k++)
			if (same_branch_kind(s->branches[k], s->branches[i]))
				return floe_error_corrupt(ps->err, "union has two branches of type '%s'",
						      s->branches[i]->fullname
							      ? s->branches[i]->fullname
							      : floe_avro_type_name(s->branches[i]->type));
	}
	s->n_branches = i;
	s->mark = MARK_DONE;
	*out = s;
	return FLOE_OK;
}

static int parse_node(sparser *ps, const floe_json *j, const char *enc_ns, floe_avro_schema **out)
{
	floe_avro_type t;
	switch (j->type) {
	case FLOE_JSON_STRING:
		if (primitive_by_name(j->s, j->len, &t)) {
			floe_avro_schema *s = new_node(ps, t);
			if (!s)
				return node_fail(ps);
			s->node_id = ps->next_id++;
			s->mark = MARK_DONE;
			*out = s;
			return FLOE_OK;
		}
		return resolve_ref(ps, j->s, j->len, enc_ns, out);
	case FLOE_JSON_OBJECT: return parse_object(ps, j, enc_ns, out);
	case FLOE_JSON_ARRAY: return parse_union(ps, j, enc_ns, out);
	default:
		return corrupt(ps, "a schema must be a string, object or array, found %s",
			       floe_json_type_name(j->type));
	}
}

static void limits_init(floe_avro_schema_limits *l, const floe_avro_schema_limits *in)
{
	l->max_depth = 64;
	l->max_nodes = 100000;
	l->max_text = (size_t)16 << 20;
	if (in) {
		if (in->max_depth)
			l->max_depth = in->max_depth;
		if (in->max_nodes)
			l->max_nodes = in->max_nodes;
		if (in->max_text)
			l->max_text = in->max_text;
	}
}

int floe_avro_schema_from_json(floe_avro_schema **out, floe_arena *a, const floe_json *j,
			       const floe_avro_schema_limits *lim, floe_error *err)
{
	sparser ps;
	int rc;
	memset(&ps, 0, sizeof(ps));
	ps.a = a;
	ps.err = err;
	limits_init(&ps.lim, lim);
	floe_hmap_init(&ps.names);
	rc = parse_node(&ps, j, NULL, out);
	floe_hmap_reset(&ps.names);
	if (rc)
		return AVRO_PREFIX(rc, err, "avro schema: ");
	(*out)->tree_nodes = ps.next_id;
	return FLOE_OK;
}

int floe_avro_schema_parse(floe_avro_schema **out, floe_arena *a, const char *p, size_t n,
			   const floe_avro_schema_limits *lim, floe_error *err)
{
	floe_avro_schema_limits l;
	floe_json_limits jl = {0};
	floe_json *j = NULL;
	int rc;
	limits_init(&l, lim);
	if (n > l.max_text)
		return floe_error_corrupt(err, "avro schema: %zu bytes exceeds the limit of %zu", n,
				      l.max_text);
	jl.max_depth = l.max_depth;
	jl.max_nodes = l.max_nodes * 8;
	jl.max_string = l.max_text;
	if ((rc = floe_json_parse(&j, a, p, n, &jl, err)))
		return AVRO_PREFIX(rc, err, "avro schema: ");
	return floe_avro_schema_from_json(out, a, j, &l, err);
}

/* ---- lookup --------------------------------------------------------------- */

const floe_avro_field *floe_avro_field_by_name(const floe_avro_schema *rec, const char *name)
{
	if (!rec || rec->type != FLOE_AVRO_RECORD || !name)
		return NULL;
	for (size_t i = 0; i < rec->n_fields; i++)
		if (strcmp(rec->fields[i].name, name) == 0)
			return &rec->fields[i];
	return NULL;
}

const floe_avro_field *floe_avro_field_by_id(const floe_avro_schema *rec, int32_t field_id)
{
	if (!rec || rec->type != FLOE_AVRO_RECORD || field_id == FLOE_AVRO_ID_NONE)
		return NULL;
	for (size_t i = 0; i < rec->n_fields; i++)
		if (rec->fields[i].field_id == field_id)
			return &rec->fields[i];
	return NULL;
}

static const floe_json *attr_in(const floe_avro_attr *attrs, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(attrs[i].key, key) == 0)
			return attrs[i].value;
	return NULL;
}

const floe_json *floe_avro_schema_attr(const floe_avro_schema *s, const char *key)
{
	return s ? attr_in(s->attrs, s->n_attrs, key) : NULL;
}

const floe_json *floe_avro_field_attr(const floe_avro_field *f, const char *key)
{
	return f ? attr_in(f->attrs, f->n_attrs, key) : NULL;
}

const floe_avro_schema *floe_avro_union_nonnull(const floe_avro_schema *s)
{
	if (!s || s->type != FLOE_AVRO_UNION || s->n_branches != 2)
		return NULL;
	if (s->branches[0]->type == FLOE_AVRO_NULL && s->branches[1]->type != FLOE_AVRO_NULL)
		return s->branches[1];
	if (s->branches[1]->type == FLOE_AVRO_NULL && s->branches[0]->type != FLOE_AVRO_NULL)
		return s->branches[0];
	return NULL;
}

bool floe_avro_is_nullable(const floe_avro_schema *s)
{
	if (!s)
		return false;
	if (s->type == FLOE_AVRO_NULL)
		return true;
	if (s->type != FLOE_AVRO_UNION)
		return false;
	for (size_t i = 0; i < s->n_branches; i++)
		if (s->branches[i]->type == FLOE_AVRO_NULL)
			return true;
	return false;
}

uint32_t floe_avro_schema_node_count(const floe_avro_schema *root)
{
	return root ? root->tree_nodes : 0;
}

/* ---- equality ------------------------------------------------------------- */

static bool json_equal(const floe_json *a, const floe_json *b)
{
	if (!a || !b)
		return a == b;
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case FLOE_JSON_NULL: return true;
	case FLOE_JSON_BOOL: return a->b == b->b;
	case FLOE_JSON_NUMBER:
		if (a->is_int != b->is_int)
			return false;
		return a->is_int ? a->i == b->i : a->d == b->d;
	case FLOE_JSON_STRING: return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
	case FLOE_JSON_ARRAY:
	case FLOE_JSON_OBJECT: {
		const floe_json *x = a->child, *y = b->child;
		for (; x && y; x = x->next, y = y->next) {
			if (a->type == FLOE_JSON_OBJECT &&
			    (x->key_len != y->key_len || memcmp(x->key, y->key, x->key_len) != 0))
				return false;
			if (!json_equal(x, y))
				return false;
		}
		return !x && !y;
	}
	}
	return false;
}

static bool attrs_equal(const floe_avro_attr *a, size_t na, const floe_avro_attr *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i].key, b[i].key) != 0 || !json_equal(a[i].value, b[i].value))
			return false;
	return true;
}

static bool strs_equal(const char **a, size_t na, const char **b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

static bool opt_str_equal(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool equal_rec(const floe_avro_schema *a, const floe_avro_schema *b, int depth)
{
	if (a == b)
		return true;
	if (!a || !b || depth > 256)
		return false;
	if (a->type != b->type || !opt_str_equal(a->logical_type, b->logical_type) ||
	    !opt_str_equal(a->fullname, b->fullname) || !opt_str_equal(a->doc, b->doc) ||
	    a->precision != b->precision || a->scale != b->scale ||
	    a->adjust_to_utc != b->adjust_to_utc || a->element_id != b->element_id ||
	    a->key_id != b->key_id || a->value_id != b->value_id || a->size != b->size ||
	    !opt_str_equal(a->enum_default, b->enum_default) ||
	    !strs_equal(a->aliases, a->n_aliases, b->aliases, b->n_aliases) ||
	    !strs_equal(a->symbols, a->n_symbols, b->symbols, b->n_symbols) ||
	    !attrs_equal(a->attrs, a->n_attrs, b->attrs, b->n_attrs) ||
	    a->n_fields != b->n_fields || a->n_branches != b->n_branches)
		return false;
	for (size_t i = 0; i < a->n_fields; i++) {
		const floe_avro_field *x = &a->fields[i], *y = &b->fields[i];
		if (strcmp(x->name, y->name) != 0 || x->field_id != y->field_id ||
		    !opt_str_equal(x->doc, y->doc) || !json_equal(x->default_value, y->default_value) ||
		    !strs_equal(x->aliases, x->n_aliases, y->aliases, y->n_aliases) ||
		    !attrs_equal(x->attrs, x->n_attrs, y->attrs, y->n_attrs) ||
		    !equal_rec(x->type, y->type, depth + 1))
			return false;
	}
	for (size_t i = 0; i < a->n_branches; i++)
		if (!equal_rec(a->branches[i], b->branches[i], depth + 1))
			return false;
	if ((a->items || b->items) && !equal_rec(a->items, b->items, depth + 1))
		return false;
	return true;
}

bool floe_avro_schema_equal(const floe_avro_schema *a, const floe_avro_schema *b)
{
	return equal_rec(a, b, 0);
}
