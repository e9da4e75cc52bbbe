/*
 * types.c — Iceberg types: type strings, schema JSON, the id index, fresh id
 * assignment and the compact column-list syntax.
 */
#include "iceberg/types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/str.h"

static const floe_type PRIMS[] = {
	[FLOE_T_BOOLEAN] = {.id = FLOE_T_BOOLEAN},
	[FLOE_T_INT] = {.id = FLOE_T_INT},
	[FLOE_T_LONG] = {.id = FLOE_T_LONG},
	[FLOE_T_FLOAT] = {.id = FLOE_T_FLOAT},
	[FLOE_T_DOUBLE] = {.id = FLOE_T_DOUBLE},
	[FLOE_T_DATE] = {.id = FLOE_T_DATE},
	[FLOE_T_TIME] = {.id = FLOE_T_TIME},
	[FLOE_T_TIMESTAMP] = {.id = FLOE_T_TIMESTAMP},
	[FLOE_T_TIMESTAMPTZ] = {.id = FLOE_T_TIMESTAMPTZ},
	[FLOE_T_TIMESTAMP_NS] = {.id = FLOE_T_TIMESTAMP_NS},
	[FLOE_T_TIMESTAMPTZ_NS] = {.id = FLOE_T_TIMESTAMPTZ_NS},
	[FLOE_T_STRING] = {.id = FLOE_T_STRING},
	[FLOE_T_UUID] = {.id = FLOE_T_UUID},
	[FLOE_T_BINARY] = {.id = FLOE_T_BINARY},
	[FLOE_T_UNKNOWN] = {.id = FLOE_T_UNKNOWN},
	[FLOE_T_VARIANT] = {.id = FLOE_T_VARIANT},
};

static const struct {
	const char *name;
	floe_type_id id;
} SIMPLE_NAMES[] = {
	{"boolean", FLOE_T_BOOLEAN},	  {"int", FLOE_T_INT},
	{"long", FLOE_T_LONG},		  {"float", FLOE_T_FLOAT},
	{"double", FLOE_T_DOUBLE},	  {"date", FLOE_T_DATE},
	{"time", FLOE_T_TIME},		  {"timestamp", FLOE_T_TIMESTAMP},
	{"timestamptz", FLOE_T_TIMESTAMPTZ}, {"timestamp_ns", FLOE_T_TIMESTAMP_NS},
	{"timestamptz_ns", FLOE_T_TIMESTAMPTZ_NS}, {"string", FLOE_T_STRING},
	{"uuid", FLOE_T_UUID},		  {"binary", FLOE_T_BINARY},
	{"unknown", FLOE_T_UNKNOWN},	  {"variant", FLOE_T_VARIANT},
};

const floe_type *floe_type_primitive(floe_type_id id)
{
	if ((size_t)id < sizeof(PRIMS) / sizeof(PRIMS[0]) && PRIMS[id].id == id)
		return &PRIMS[id];
	return NULL;
}

const floe_type *floe_type_decimal(floe_arena *a, int32_t precision, int32_t scale)
{
	floe_type *t = floe_arena_calloc(a, 1, sizeof(*t));
	if (t) {
		t->id = FLOE_T_DECIMAL;
		t->precision = precision;
		t->scale = scale;
	}
	return t;
}

const floe_type *floe_type_fixed(floe_arena *a, int32_t length)
{
	floe_type *t = floe_arena_calloc(a, 1, sizeof(*t));
	if (t) {
		t->id = FLOE_T_FIXED;
		t->length = length;
	}
	return t;
}

bool floe_type_is_nested(const floe_type *t)
{
	return t->id == FLOE_T_STRUCT || t->id == FLOE_T_LIST || t->id == FLOE_T_MAP;
}

bool floe_type_is_primitive(const floe_type *t)
{
	return !floe_type_is_nested(t) && t->id != FLOE_T_VARIANT;
}

int floe_type_min_format_version(const floe_type *t)
{
	int v = 1;
	switch (t->id) {
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
	case FLOE_T_UNKNOWN:
	case FLOE_T_VARIANT:
	case FLOE_T_GEOMETRY:
	case FLOE_T_GEOGRAPHY: return 3;
	case FLOE_T_STRUCT:
		for (size_t i = 0; i < t->n_fields; i++) {
			int f = floe_type_min_format_version(t->fields[i].type);
			if (f > v)
				v = f;
			if (t->fields[i].initial_default || t->fields[i].write_default)
				v = 3;
		}
		return v;
	case FLOE_T_LIST: return floe_type_min_format_version(t->element);
	case FLOE_T_MAP: {
		int a = floe_type_min_format_version(t->key), b = floe_type_min_format_version(t->value);
		return a > b ? a : b;
	}
	default: return 1;
	}
}

int floe_type_format(floe_buf *out, const floe_type *t)
{
	switch (t->id) {
	case FLOE_T_DECIMAL: return floe_buf_printf(out, "decimal(%d, %d)", t->precision, t->scale);
	case FLOE_T_FIXED: return floe_buf_printf(out, "fixed[%d]", t->length);
	case FLOE_T_GEOMETRY:
		return floe_buf_printf(out, "geometry(%s)", t->crs ? t->crs : "OGC:CRS84");
	case FLOE_T_GEOGRAPHY:
		return floe_buf_printf(out, "geography(%s, %s)", t->crs ? t->crs : "OGC:CRS84",
				       t->algorithm ? t->algorithm : "spherical");
	case FLOE_T_STRUCT: return floe_buf_puts(out, "struct");
	case FLOE_T_LIST: return floe_buf_puts(out, "list");
	case FLOE_T_MAP: return floe_buf_puts(out, "map");
	default:
		for (size_t i = 0; i < sizeof(SIMPLE_NAMES) / sizeof(SIMPLE_NAMES[0]); i++)
			if (SIMPLE_NAMES[i].id == t->id)
				return floe_buf_puts(out, SIMPLE_NAMES[i].name);
	}
	return FLOE_EINVAL;
}

/* Case-insensitive prefix match; returns chars consumed or 0. */
static size_t ci_prefix(const char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	if (n < m)
		return 0;
	for (size_t i = 0; i < m; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		if (c != lit[i])
			return 0;
	}
	return m;
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

static bool parse_int_arg(const char *s, size_t n, int32_t *v)
{
	trim(&s, &n);
	return floe_parse_i32(s, n, v);
}

int floe_type_parse_primitive(const floe_type **out, floe_arena *a, const char *s, size_t n,
			      floe_error *err)
{
	size_t k;
	trim(&s, &n);
	for (size_t i = 0; i < sizeof(SIMPLE_NAMES) / sizeof(SIMPLE_NAMES[0]); i++) {
		if (n == strlen(SIMPLE_NAMES[i].name) && ci_prefix(s, n, SIMPLE_NAMES[i].name)) {
			*out = floe_type_primitive(SIMPLE_NAMES[i].id);
			return FLOE_OK;
		}
	}
	if ((k = ci_prefix(s, n, "decimal"))) {
		const char *p = s + k;
		size_t m = n - k;
		trim(&p, &m);
		if (m >= 2 && p[0] == '(' && p[m - 1] == ')') {
			const char *comma = memchr(p, ',', m);
			int32_t prec, scale;
			if (comma && parse_int_arg(p + 1, (size_t)(comma - p - 1), &prec) &&
			    parse_int_arg(comma + 1, (size_t)(p + m - 1 - comma - 1), &scale)) {
				if (prec < 1 || prec > 38 || scale < 0 || scale > prec)
					return floe_error_corrupt(err, "decimal(%d, %d): precision must be 1..38 "
							      "and scale 0..precision",
							      prec, scale);
				*out = floe_type_decimal(a, prec, scale);
				return *out ? FLOE_OK : FLOE_ENOMEM;
			}
		}
	} else if ((k = ci_prefix(s, n, "fixed"))) {
		const char *p = s + k;
		size_t m = n - k;
		int32_t len;
		trim(&p, &m);
		if (m >= 2 && ((p[0] == '[' && p[m - 1] == ']') || (p[0] == '(' && p[m - 1] == ')')) &&
		    parse_int_arg(p + 1, m - 2, &len) && len > 0) {
			*out = floe_type_fixed(a, len);
			return *out ? FLOE_OK : FLOE_ENOMEM;
		}
	} else if ((k = ci_prefix(s, n, "geometry")) || (k = ci_prefix(s, n, "geography"))) {
		bool geog = n >= 9 && ci_prefix(s, n, "geography");
		const char *p = s + k;
		size_t m = n - k;
		floe_type *t = floe_arena_calloc(a, 1, sizeof(*t));
		if (!t)
			return FLOE_ENOMEM;
		t->id = geog ? FLOE_T_GEOGRAPHY : FLOE_T_GEOMETRY;
		trim(&p, &m);
		if (m >= 2 && p[0] == '(' && p[m - 1] == ')') {
			const char *comma = memchr(p, ',', m);
			const char *c = p + 1;
			size_t cl = comma ? (size_t)(comma - c) : m - 2;
			trim(&c, &cl);
			t->crs = floe_arena_strndup(a, c, cl);
			if (comma && geog) {
				const char *al = comma + 1;
				size_t alen = (size_t)(p + m - 1 - al);
				trim(&al, &alen);
				t->algorithm = floe_arena_strndup(a, al, alen);
			}
		} else if (m != 0) {
			goto bad;
		}
		*out = t;
		return FLOE_OK;
	}
bad:
	return floe_error_corrupt(err, "unknown type '%.*s'", (int)(n > 64 ? 64 : n), s);
}

bool floe_type_equal(const floe_type *a, const floe_type *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->id != b->id)
		return false;
	switch (a->id) {
	case FLOE_T_DECIMAL: return a->precision == b->precision && a->scale == b->scale;
	case FLOE_T_FIXED: return a->length == b->length;
	case FLOE_T_GEOMETRY:
	case FLOE_T_GEOGRAPHY:
		return floe_str_eq(a->crs, b->crs) && floe_str_eq(a->algorithm, b->algorithm);
	case FLOE_T_STRUCT:
		if (a->n_fields != b->n_fields)
			return false;
		for (size_t i = 0; i < a->n_fields; i++) {
			const floe_field *x = &a->fields[i], *y = &b->fields[i];
			if (x->id != y->id || x->required != y->required ||
			    strcmp(x->name, y->name) != 0 || !floe_type_equal(x->type, y->type))
				return false;
		}
		return true;
	case FLOE_T_LIST:
		return a->element_id == b->element_id && a->element_required == b->element_required &&
		       floe_type_equal(a->element, b->element);
	case FLOE_T_MAP:
		return a->key_id == b->key_id && a->value_id == b->value_id &&
		       a->value_required == b->value_required && floe_type_equal(a->key, b->key) &&
		       floe_type_equal(a->value, b->value);
	default: return true;
	}
}

/* ---- JSON ------------------------------------------------------------------- */

#define MAX_TYPE_DEPTH 64

static int type_from_json(const floe_type **out, floe_arena *a, const floe_json *j, int depth,
			  floe_error *err);

static int struct_from_json(floe_type **out, floe_arena *a, const floe_json *j, int depth,
			    floe_error *err)
{
	floe_json *fields = floe_json_get(j, "fields");
	floe_type *t;
	size_t i = 0;
	int rc;
	if (!fields || fields->type != FLOE_JSON_ARRAY)
		return floe_error_corrupt(err, "struct: 'fields' must be an array");
	t = floe_arena_calloc(a, 1, sizeof(*t));
	if (!t)
		return FLOE_ENOMEM;
	t->id = FLOE_T_STRUCT;
	t->n_fields = fields->len;
	t->fields = floe_arena_calloc(a, fields->len ? fields->len : 1, sizeof(floe_field));
	if (!t->fields)
		return FLOE_ENOMEM;
	for (floe_json *f = fields->child; f; f = f->next, i++) {
		floe_field *fd = &t->fields[i];
		const char *name;
		if (f->type != FLOE_JSON_OBJECT)
			return floe_error_corrupt(err, "struct field %zu is not an object", i);
		if ((rc = floe_json_get_i32(f, "id", &fd->id, "schema field", err)) ||
		    (rc = floe_json_get_str(f, "name", &name, "schema field", err)))
			return floe_error_prefix(err, FLOE_ECORRUPT, "schema: ");
		fd->name = name;
		if ((rc = floe_json_get_bool(f, "required", &fd->required, "schema field", err))) {
			floe_error_corrupt(err, "field '%s': 'required' must be a boolean",
				       name);
			return FLOE_ECORRUPT;
		}
		floe_json *ty = floe_json_get(f, "type");
		if (!ty)
			return floe_error_corrupt(err, "field '%s': 'type' is missing", name);
		if ((rc = type_from_json(&fd->type, a, ty, depth + 1, err)))
			return floe_error_prefix(err, rc, "field '%s': ", name);
		floe_json *doc = floe_json_get(f, "doc");
		if (doc && doc->type == FLOE_JSON_STRING)
			fd->doc = doc->s;
		fd->initial_default = floe_json_get(f, "initial-default");
		fd->write_default = floe_json_get(f, "write-default");
	}
	*out = t;
	return FLOE_OK;
}

static int type_from_json(const floe_type **out, floe_arena *a, const floe_json *j, int depth,
			  floe_error *err)
{
	const char *kind;
	int rc;
	if (depth > MAX_TYPE_DEPTH)
		return floe_error_corrupt(err, "type nesting deeper than %d", MAX_TYPE_DEPTH);
	if (j->type == FLOE_JSON_STRING)
		return floe_type_parse_primitive(out, a, j->s, j->len, err);
	if (j->type != FLOE_JSON_OBJECT)
		return floe_error_corrupt(err, "a type must be a string or an object");
	if ((rc = floe_json_get_str(j, "type", &kind, "type", err)))
		return FLOE_ECORRUPT;
	if (floe_str_ieq(kind, "struct")) {
		floe_type *t;
		if ((rc = struct_from_json(&t, a, j, depth, err)))
			return rc;
		*out = t;
		return FLOE_OK;
	}
	floe_type *t = floe_arena_calloc(a, 1, sizeof(*t));
	if (!t)
		return FLOE_ENOMEM;
	if (floe_str_ieq(kind, "list")) {
		t->id = FLOE_T_LIST;
		floe_json *el = floe_json_get(j, "element");
		if ((rc = floe_json_get_i32(j, "element-id", &t->element_id, "list", err)) ||
		    (rc = floe_json_get_bool(j, "element-required", &t->element_required, "list",
					     err)))
			return FLOE_ECORRUPT;
		if (!el)
			return floe_error_corrupt(err, "list: 'element' is missing");
		if ((rc = type_from_json(&t->element, a, el, depth + 1, err)))
			return rc;
	} else if (floe_str_ieq(kind, "map")) {
		t->id = FLOE_T_MAP;
		floe_json *k = floe_json_get(j, "key"), *v = floe_json_get(j, "value");
		if ((rc = floe_json_get_i32(j, "key-id", &t->key_id, "map", err)) ||
		    (rc = floe_json_get_i32(j, "value-id", &t->value_id, "map", err)) ||
		    (rc = floe_json_get_bool(j, "value-required", &t->value_required, "map", err)))
			return FLOE_ECORRUPT;
		if (!k || !v)
			return floe_error_corrupt(err, "map: 'key' and 'value' are required");
		if ((rc = type_from_json(&t->key, a, k, depth + 1, err)) ||
		    (rc = type_from_json(&t->value, a, v, depth + 1, err)))
			return rc;
	} else {
		return floe_error_corrupt(err, "unknown nested type '%s'", kind);
	}
	*out = t;
	return FLOE_OK;
}

/* ---- index ---------------------------------------------------------------- */

typedef struct index_builder {
	floe_arena *a;
	floe_schema_entry *items;
	size_t len, cap;
	int rc;
	floe_error *err;
} index_builder;

static void index_add(index_builder *b, int32_t id, const floe_field *f, const floe_type *t,
		      const char *name, int32_t parent, bool required, bool repeated)
{
	if (b->rc)
		return;
	if (id <= 0) {
		b->rc = floe_error_corrupt(b->err, "field '%s' has invalid id %d", name, id);
		return;
	}
	if (b->len == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 32;
		floe_schema_entry *n = floe_arena_alloc(b->a, ncap * sizeof(*n));
		if (!n) {
			b->rc = FLOE_ENOMEM;
			return;
		}
		if (b->len)
			memcpy(n, b->items, b->len * sizeof(*n));
		b->items = n;
		b->cap = ncap;
	}
	b->items[b->len++] = (floe_schema_entry){id, f, t, name, parent, required, repeated};
}

static void index_type(index_builder *b, const floe_type *t, const char *prefix, int32_t parent,
		       bool repeated)
{
	if (b->rc)
		return;
	if (t->id == FLOE_T_STRUCT) {
		for (size_t i = 0; i < t->n_fields; i++) {
			const floe_field *f = &t->fields[i];
			const char *name = prefix ? floe_arena_sprintf(b->a, "%s.%s", prefix, f->name)
						  : f->name;
			if (!name) {
				b->rc = FLOE_ENOMEM;
				return;
			}
			index_add(b, f->id, f, f->type, name, parent, f->required, repeated);
			index_type(b, f->type, name, f->id, repeated);
		}
	} else if (t->id == FLOE_T_LIST) {
		const char *name = floe_arena_sprintf(b->a, "%s.element", prefix ? prefix : "");
		if (!name) {
			b->rc = FLOE_ENOMEM;
			return;
		}
		index_add(b, t->element_id, NULL, t->element, name, parent, t->element_required, true);
		index_type(b, t->element, name, t->element_id, true);
	} else if (t->id == FLOE_T_MAP) {
		const char *kn = floe_arena_sprintf(b->a, "%s.key", prefix ? prefix : "");
		const char *vn = floe_arena_sprintf(b->a, "%s.value", prefix ? prefix : "");
		if (!kn || !vn) {
			b->rc = FLOE_ENOMEM;
			return;
		}
		index_add(b, t->key_id, NULL, t->key, kn, parent, true, true);
		index_type(b, t->key, kn, t->key_id, true);
		index_add(b, t->value_id, NULL, t->value, vn, parent, t->value_required, true);
		index_type(b, t->value, vn, t->value_id, true);
	}
}

static int cmp_entry(const void *x, const void *y)
{
	const floe_schema_entry *a = x, *b = y;
	return a->id < b->id ? -1 : a->id > b->id;
}

int floe_schema_make(floe_schema **out, floe_arena *a, int32_t schema_id, const floe_type *root,
		     const int32_t *identifier_ids, size_t n_identifier, floe_error *err)
{
	floe_schema *s;
	index_builder b = {a, NULL, 0, 0, 0, err};
	if (!root || root->id != FLOE_T_STRUCT)
		return floe_error_corrupt(err, "a schema must be a struct");
	s = floe_arena_calloc(a, 1, sizeof(*s));
	if (!s)
		return FLOE_ENOMEM;
	s->schema_id = schema_id;
	s->root = root;
	if (n_identifier) {
		s->identifier_field_ids = floe_arena_memdup(a, identifier_ids,
							    n_identifier * sizeof(int32_t));
		if (!s->identifier_field_ids)
			return FLOE_ENOMEM;
		s->n_identifier_field_ids = n_identifier;
	}
	index_type(&b, root, NULL, 0, false);
	if (b.rc)
		return b.rc == FLOE_ENOMEM ? floe_error_oom(err) : b.rc;
	if (b.len)
		qsort(b.items, b.len, sizeof(*b.items), cmp_entry);
	for (size_t i = 1; i < b.len; i++)
		if (b.items[i].id == b.items[i - 1].id)
			return floe_error_corrupt(err, "schema %d: field id %d is used by '%s' and '%s'",
					      schema_id, b.items[i].id, b.items[i - 1].full_name,
					      b.items[i].full_name);
	s->index = b.items;
	s->n_index = b.len;
	s->highest_field_id = b.len ? b.items[b.len - 1].id : 0;
	for (size_t i = 0; i < n_identifier; i++) {
		const floe_schema_entry *e = floe_schema_find(s, identifier_ids[i]);
		if (!e)
			return floe_error_corrupt(err, "schema %d: identifier field %d does not exist", schema_id,
					      identifier_ids[i]);
	}
	*out = s;
	return FLOE_OK;
}

int floe_schema_from_json(floe_schema **out, floe_arena *a, const floe_json *j, floe_error *err)
{
	floe_type *root;
	int32_t schema_id = 0;
	int32_t *ids = NULL;
	size_t n_ids = 0;
	int rc;
	if (!j || j->type != FLOE_JSON_OBJECT)
		return floe_error_corrupt(err, "schema must be an object");
	rc = floe_json_get_i32(j, "schema-id", &schema_id, "schema", err);
	if (rc && rc != FLOE_ENOTFOUND)
		return rc;
	floe_error_clear(err);
	const char *kind = NULL;
	if (floe_json_get_str(j, "type", &kind, "schema", NULL) != 0 || !floe_str_ieq(kind, "struct"))
		return floe_error_corrupt(err, "schema %d: 'type' must be \"struct\"",
				      schema_id);
	if ((rc = struct_from_json(&root, a, j, 0, err)))
		return floe_error_prefix(err, rc, "schema %d: ", schema_id);
	floe_json *ident = floe_json_get(j, "identifier-field-ids");
	if (ident && ident->type == FLOE_JSON_ARRAY && ident->len) {
		ids = floe_arena_calloc(a, ident->len, sizeof(int32_t));
		if (!ids)
			return FLOE_ENOMEM;
		for (floe_json *c = ident->child; c; c = c->next)
			if (floe_json_as_i32(c, &ids[n_ids++]))
				return floe_error_corrupt(err, "schema %d: bad identifier-field-ids", schema_id);
	}
	return floe_schema_make(out, a, schema_id, root, ids, n_ids, err);
}

const floe_schema_entry *floe_schema_find(const floe_schema *s, int32_t id)
{
	size_t lo = 0, hi = s->n_index;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->index[mid].id == id)
			return &s->index[mid];
		if (s->index[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const floe_schema_entry *floe_schema_find_name(const floe_schema *s, const char *name, bool ci)
{
	for (size_t i = 0; i < s->n_index; i++) {
		const char *fn = s->index[i].full_name;
		if (ci ? floe_str_ieq(fn, name) : strcmp(fn, name) == 0)
			return &s->index[i];
	}
	return NULL;
}

const floe_field *floe_schema_field(const floe_schema *s, const char *name)
{
	for (size_t i = 0; i < s->root->n_fields; i++)
		if (strcmp(s->root->fields[i].name, name) == 0)
			return &s->root->fields[i];
	return NULL;
}

static void write_fields(floe_jw *w, const floe_type *t)
{
	floe_jw_key(w, "fields");
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < t->n_fields; i++) {
		const floe_field *f = &t->fields[i];
		floe_jw_obj_begin(w);
		floe_jw_kv_i64(w, "id", f->id);
		floe_jw_kv_str(w, "name", f->name);
		floe_jw_kv_bool(w, "required", f->required);
		floe_jw_key(w, "type");
		floe_type_write_json(w, f->type);
		if (f->doc)
			floe_jw_kv_str(w, "doc", f->doc);
		if (f->initial_default) {
			floe_jw_key(w, "initial-default");
			floe_jw_value(w, f->initial_default);
		}
		if (f->write_default) {
			floe_jw_key(w, "write-default");
			floe_jw_value(w, f->write_default);
		}
		floe_jw_obj_end(w);
	}
	floe_jw_arr_end(w);
}

void floe_type_write_json(floe_jw *w, const floe_type *t)
{
	switch (t->id) {
	case FLOE_T_STRUCT:
		floe_jw_obj_begin(w);
		floe_jw_kv_str(w, "type", "struct");
		write_fields(w, t);
		floe_jw_obj_end(w);
		break;
	case FLOE_T_LIST:
		floe_jw_obj_begin(w);
		floe_jw_kv_str(w, "type", "list");
		floe_jw_kv_i64(w, "element-id", t->element_id);
		floe_jw_key(w, "element");
		floe_type_write_json(w, t->element);
		floe_jw_kv_bool(w, "element-required", t->element_required);
		floe_jw_obj_end(w);
		break;
	case FLOE_T_MAP:
		floe_jw_obj_begin(w);
		floe_jw_kv_str(w, "type", "map");
		floe_jw_kv_i64(w, "key-id", t->key_id);
		floe_jw_key(w, "key");
		floe_type_write_json(w, t->key);
		floe_jw_kv_i64(w, "value-id", t->value_id);
		floe_jw_key(w, "value");
		floe_type_write_json(w, t->value);
		floe_jw_kv_bool(w, "value-required", t->value_required);
		floe_jw_obj_end(w);
		break;
	default: {
		floe_buf b;
		floe_buf_init(&b, 256);
		int frc = floe_type_format(&b, t);
		if (frc == 0)
			floe_jw_strn(w, (const char *)b.data, b.len);
		else if (!w->rc)
			w->rc = frc; /* ENOMEM stays ENOMEM (torture test) */
		floe_buf_reset(&b);
	}
	}
}

/* Java key order: type, schema-id, identifier-field-ids, fields. */
void floe_schema_write_json(floe_jw *w, const floe_schema *s)
{
	floe_jw_obj_begin(w);
	floe_jw_kv_str(w, "type", "struct");
	floe_jw_kv_i64(w, "schema-id", s->schema_id);
	if (s->n_identifier_field_ids) {
		floe_jw_key(w, "identifier-field-ids");
		floe_jw_arr_begin(w);
		for (size_t i = 0; i < s->n_identifier_field_ids; i++)
			floe_jw_i64(w, s->identifier_field_ids[i]);
		floe_jw_arr_end(w);
	}
	write_fields(w, s->root);
	floe_jw_obj_end(w);
}

const char *floe_schema_to_json_str(floe_arena *a, const floe_schema *s)
{
	floe_buf b;
	floe_jw w;
	const char *out = NULL;
	floe_buf_init(&b, 0);
	floe_jw_init(&w, &b, 0);
	floe_schema_write_json(&w, s);
	if (floe_jw_finish(&w) == 0)
		out = floe_arena_strndup(a, (const char *)b.data, b.len);
	floe_buf_reset(&b);
	return out;
}

/* ---- copying and fresh ids ------------------------------------------------- */

static const floe_type *type_copy(floe_arena *a, const floe_type *t)
{
	floe_type *c;
	if (floe_type_primitive(t->id) == t)
		return t;
	c = floe_arena_memdup(a, t, sizeof(*t));
	if (!c)
		return NULL;
	if (t->crs && !(c->crs = floe_arena_strdup(a, t->crs)))
		return NULL;
	if (t->algorithm && !(c->algorithm = floe_arena_strdup(a, t->algorithm)))
		return NULL;
	switch (t->id) {
	case FLOE_T_STRUCT:
		c->fields = floe_arena_calloc(a, t->n_fields ? t->n_fields : 1, sizeof(floe_field));
		if (!c->fields)
			return NULL;
		for (size_t i = 0; i < t->n_fields; i++) {
			const floe_field *f = &t->fields[i];
			floe_field *g = &c->fields[i];
			*g = *f;
			if (!(g->name = floe_arena_strdup(a, f->name)) ||
			    !(g->type = type_copy(a, f->type)))
				return NULL;
			if (f->doc && !(g->doc = floe_arena_strdup(a, f->doc)))
				return NULL;
			if (f->initial_default &&
			    !(g->initial_default = floe_json_copy(a, f->initial_default)))
				return NULL;
			if (f->write_default && !(g->write_default = floe_json_copy(a, f->write_default)))
				return NULL;
		}
		break;
	case FLOE_T_LIST:
		if (!(c->element = type_copy(a, t->element)))
			return NULL;
		break;
	case FLOE_T_MAP:
		if (!(c->key = type_copy(a, t->key)) || !(c->value = type_copy(a, t->value)))
			return NULL;
		break;
	default: break;
	}
	return c;
}

floe_schema *floe_schema_copy(floe_arena *a, const floe_schema *s)
{
	floe_schema *out;
	const floe_type *root = type_copy(a, s->root);
	if (!root)
		return NULL;
	if (floe_schema_make(&out, a, s->schema_id, root, s->identifier_field_ids,
			     s->n_identifier_field_ids, NULL))
		return NULL;
	return out;
}

typedef struct id_map {
	int32_t *old_ids;
	int32_t *new_ids;
	size_t len, cap;
} id_map;

/* Re-id a type in place (c is a fresh copy). */
static int reassign(floe_arena *a, floe_type *c, int32_t *next, id_map *m)
{
	if (c->id == FLOE_T_STRUCT) {
		for (size_t i = 0; i < c->n_fields; i++) {
			if (m->len < m->cap) {
				m->old_ids[m->len] = c->fields[i].id;
				m->new_ids[m->len++] = *next + 1;
			}
			c->fields[i].id = ++*next;
		}
		for (size_t i = 0; i < c->n_fields; i++)
			if (floe_type_is_nested(c->fields[i].type))
				reassign(a, (floe_type *)c->fields[i].type, next, m);
	} else if (c->id == FLOE_T_LIST) {
		c->element_id = ++*next;
		if (floe_type_is_nested(c->element))
			reassign(a, (floe_type *)c->element, next, m);
	} else if (c->id == FLOE_T_MAP) {
		c->key_id = ++*next;
		c->value_id = ++*next;
		if (floe_type_is_nested(c->key))
			reassign(a, (floe_type *)c->key, next, m);
		if (floe_type_is_nested(c->value))
			reassign(a, (floe_type *)c->value, next, m);
	}
	return FLOE_OK;
}

int floe_schema_assign_fresh_ids(floe_schema **out, floe_arena *a, const floe_schema *in,
				 int32_t schema_id, int32_t *last_id, floe_error *err)
{
	floe_type *root = (floe_type *)type_copy(a, in->root);
	id_map m = {0};
	int32_t *ident = NULL;
	if (!root)
		return floe_error_oom(err);
	m.cap = in->n_index + 1;
	m.old_ids = floe_arena_calloc(a, m.cap, sizeof(int32_t));
	m.new_ids = floe_arena_calloc(a, m.cap, sizeof(int32_t));
	if (!m.old_ids || !m.new_ids)
		return floe_error_oom(err);
	reassign(a, root, last_id, &m);
	if (in->n_identifier_field_ids) {
		ident = floe_arena_calloc(a, in->n_identifier_field_ids, sizeof(int32_t));
		if (!ident)
			return floe_error_oom(err);
		for (size_t i = 0; i < in->n_identifier_field_ids; i++) {
			ident[i] = -1;
			for (size_t k = 0; k < m.len; k++)
				if (m.old_ids[k] == in->identifier_field_ids[i])
					ident[i] = m.new_ids[k];
			if (ident[i] < 0)
				return floe_error_set(err, FLOE_EINVAL,
						      "identifier field %d must be a top-level field",
						      in->identifier_field_ids[i]);
		}
	}
	return floe_schema_make(out, a, schema_id, root, ident, in->n_identifier_field_ids, err);
}

bool floe_schema_same_structure(const floe_schema *a, const floe_schema *b)
{
	if (a->n_identifier_field_ids != b->n_identifier_field_ids)
		return false;
	for (size_t i = 0; i < a->n_identifier_field_ids; i++)
		if (a->identifier_field_ids[i] != b->identifier_field_ids[i])
			return false;
	return floe_type_equal(a->root, b->root);
}

/* ---- compact column syntax ------------------------------------------------- */

typedef struct compact {
	const char *s;
	size_t i, n;
	floe_arena *a;
	floe_error *err;
	int32_t next_id;
	int depth;
} compact;

static void c_ws(compact *c)
{
	while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n'))
		c->i++;
}

static bool c_ident(compact *c, const char **out, size_t *len)
{
	c_ws(c);
	size_t st = c->i;
	if (c->i < c->n && c->s[c->i] == '`') {
		c->i++;
		st = c->i;
		while (c->i < c->n && c->s[c->i] != '`')
			c->i++;
		if (c->i >= c->n)
			return false;
		*out = c->s + st;
		*len = c->i - st;
		c->i++;
		return *len > 0;
	}
	while (c->i < c->n && (c->s[c->i] == '_' || (c->s[c->i] >= 'a' && c->s[c->i] <= 'z') ||
			       (c->s[c->i] >= 'A' && c->s[c->i] <= 'Z') ||
			       (c->s[c->i] >= '0' && c->s[c->i] <= '9') ||
			       (unsigned char)c->s[c->i] >= 0x80))
		c->i++;
	*out = c->s + st;
	*len = c->i - st;
	return *len > 0;
}

static bool c_kw(compact *c, const char *kw)
{
	size_t save = c->i, m;
	c_ws(c);
	m = ci_prefix(c->s + c->i, c->n - c->i, kw);
	if (m && (c->i + m == c->n || !((c->s[c->i + m] >= 'a' && c->s[c->i + m] <= 'z') ||
					 (c->s[c->i + m] >= 'A' && c->s[c->i + m] <= 'Z') ||
					 c->s[c->i + m] == '_'))) {
		c->i += m;
		return true;
	}
	c->i = save;
	return false;
}

static bool c_char(compact *c, char ch)
{
	c_ws(c);
	if (c->i < c->n && c->s[c->i] == ch) {
		c->i++;
		return true;
	}
	return false;
}

static int c_fail(compact *c, const char *what)
{
	return floe_error_set(c->err, FLOE_EINVAL, "column list at character %zu: %s", c->i + 1,
			      what);
}

static int c_type(compact *c, const floe_type **out);

static int c_fields(compact *c, floe_type **out, char close)
{
	floe_field tmp[1024];
	size_t nf = 0;
	floe_type *t;
	int rc;
	do {
		const char *nm;
		size_t nl;
		if (close == 0 && nf > 0) {
			/* Flink's "PRIMARY KEY (a, b) [NOT ENFORCED]" ends the list */
			size_t save = c->i;
			if (c_kw(c, "primary") && c_kw(c, "key")) {
				c->i = save;
				break;
			}
			c->i = save;
		}
		if (nf == sizeof(tmp) / sizeof(tmp[0]))
			return c_fail(c, "too many columns");
		if (!c_ident(c, &nm, &nl))
			return c_fail(c, "expected a column name");
		if (!floe_utf8_valid(nm, nl))
			return c_fail(c, "a column name must be UTF-8");
		if (close == '>')
			c_char(c, ':');
		floe_field *f = &tmp[nf++];
		memset(f, 0, sizeof(*f));
		if (!(f->name = floe_arena_strndup(c->a, nm, nl)))
			return FLOE_ENOMEM;
		if ((rc = c_type(c, &f->type)))
			return rc;
		if (c_kw(c, "not")) {
			if (!c_kw(c, "null"))
				return c_fail(c, "expected NULL after NOT");
			f->required = true;
		} else if (c_kw(c, "required")) {
			f->required = true;
		} else {
			(void)(c_kw(c, "null") || c_kw(c, "optional"));
		}
		if (c_kw(c, "comment")) {
			c_ws(c);
			if (c->i >= c->n || c->s[c->i] != '\'')
				return c_fail(c, "expected a quoted comment");
			size_t st = ++c->i;
			while (c->i < c->n && c->s[c->i] != '\'')
				c->i++;
			if (c->i >= c->n)
				return c_fail(c, "unterminated comment");
			f->doc = floe_arena_strndup(c->a, c->s + st, c->i - st);
			c->i++;
		}
	} while (c_char(c, ','));
	if (close && !c_char(c, close))
		return c_fail(c, close == '>' ? "expected '>'" : "expected ')'");
	t = floe_arena_calloc(c->a, 1, sizeof(*t));
	if (!t)
		return FLOE_ENOMEM;
	t->id = FLOE_T_STRUCT;
	t->n_fields = nf;
	t->fields = floe_arena_memdup(c->a, tmp, nf * sizeof(floe_field));
	if (!t->fields)
		return FLOE_ENOMEM;
	*out = t;
	return FLOE_OK;
}

static int c_type(compact *c, const floe_type **out)
{
	static const struct {
		const char *alias;
		floe_type_id id;
	} aliases[] = {
		{"bigint", FLOE_T_LONG},	  {"integer", FLOE_T_INT},    {"bool", FLOE_T_BOOLEAN},
		{"varchar", FLOE_T_STRING},	  {"text", FLOE_T_STRING},    {"bytes", FLOE_T_BINARY},
		{"varbinary", FLOE_T_BINARY},	  {"real", FLOE_T_FLOAT},
		{"timestamp_ltz", FLOE_T_TIMESTAMPTZ},
	};
	int rc;
	if (++c->depth > MAX_TYPE_DEPTH)
		return c_fail(c, "types nested too deeply");
	c_ws(c);
	if (c_kw(c, "list") || c_kw(c, "array")) {
		floe_type *t = floe_arena_calloc(c->a, 1, sizeof(*t));
		if (!t)
			return FLOE_ENOMEM;
		t->id = FLOE_T_LIST;
		if (!c_char(c, '<'))
			return c_fail(c, "expected '<'");
		if ((rc = c_type(c, &t->element)))
			return rc;
		t->element_required = c_kw(c, "not") ? c_kw(c, "null") : false;
		if (!c_char(c, '>'))
			return c_fail(c, "expected '>'");
		*out = t;
	} else if (c_kw(c, "map")) {
		floe_type *t = floe_arena_calloc(c->a, 1, sizeof(*t));
		if (!t)
			return FLOE_ENOMEM;
		t->id = FLOE_T_MAP;
		if (!c_char(c, '<'))
			return c_fail(c, "expected '<'");
		if ((rc = c_type(c, &t->key)))
			return rc;
		if (!c_char(c, ','))
			return c_fail(c, "expected ','");
		if ((rc = c_type(c, &t->value)))
			return rc;
		t->value_required = c_kw(c, "not") ? c_kw(c, "null") : false;
		if (!c_char(c, '>'))
			return c_fail(c, "expected '>'");
		*out = t;
	} else if (c_kw(c, "struct") || c_kw(c, "row")) {
		floe_type *t;
		if (!c_char(c, '<'))
			return c_fail(c, "expected '<'");
		if ((rc = c_fields(c, &t, '>')))
			return rc;
		*out = t;
	} else {
		/* primitive: a word plus an optional (...) or [...] argument */
		size_t st = c->i;
		const char *w;
		size_t wl;
		if (!c_ident(c, &w, &wl))
			return c_fail(c, "expected a type");
		c_ws(c);
		if (c->i < c->n && (c->s[c->i] == '(' || c->s[c->i] == '[')) {
			char close = c->s[c->i] == '(' ? ')' : ']';
			while (c->i < c->n && c->s[c->i] != close)
				c->i++;
			if (c->i >= c->n)
				return c_fail(c, "unterminated type argument");
			c->i++;
		}
		for (size_t k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++)
			if (wl == strlen(aliases[k].alias) && ci_prefix(w, wl, aliases[k].alias) &&
			    c->i == (size_t)(w - c->s) + wl) {
				*out = floe_type_primitive(aliases[k].id);
				c->depth--;
				return FLOE_OK;
			}
		if ((rc = floe_type_parse_primitive(out, c->a, c->s + st, c->i - st, c->err)))
			return floe_error_prefix(c->err, rc, "column list at character %zu: ", st + 1);
	}
	c->depth--;
	return FLOE_OK;
}

int floe_schema_parse_compact(floe_schema **out, floe_arena *a, const char *s, floe_error *err)
{
	compact c = {s, 0, strlen(s), a, err, 0, 0};
	floe_type *root;
	floe_schema *tmp = NULL;
	int32_t last = 0;
	int rc;
	if ((rc = c_fields(&c, &root, 0)))
		return rc;
	/* PRIMARY KEY (a, b) [NOT ENFORCED]: the schema's identifier fields
	 * (required, as Flink makes its primary key columns) */
	const char *pk[64];
	size_t pkl[64], n_pk = 0;
	if (c_kw(&c, "primary")) {
		if (!c_kw(&c, "key") || !c_char(&c, '('))
			return c_fail(&c, "expected PRIMARY KEY (column, ...)");
		do {
			if (n_pk == sizeof(pk) / sizeof(pk[0]))
				return c_fail(&c, "too many primary key columns");
			if (!c_ident(&c, &pk[n_pk], &pkl[n_pk]))
				return c_fail(&c, "expected a primary key column");
			n_pk++;
		} while (c_char(&c, ','));
		if (!c_char(&c, ')'))
			return c_fail(&c, "expected ')' after the primary key columns");
		if (c_kw(&c, "not") && !c_kw(&c, "enforced"))
			return c_fail(&c, "expected ENFORCED after NOT");
	}
	c_ws(&c);
	if (c.i != c.n)
		return c_fail(&c, "unexpected text after the column list");
	/* give temporary unique ids, then Java's fresh-id order */
	int32_t tmp_id = 1000000;
	struct stack {
		floe_type *t;
	} st[256];
	size_t sp = 0;
	st[sp++].t = root;
	while (sp) {
		floe_type *t = st[--sp].t;
		if (t->id == FLOE_T_STRUCT) {
			for (size_t i = 0; i < t->n_fields; i++) {
				t->fields[i].id = tmp_id++;
				if (floe_type_is_nested(t->fields[i].type) && sp < 256)
					st[sp++].t = (floe_type *)t->fields[i].type;
			}
		} else if (t->id == FLOE_T_LIST) {
			t->element_id = tmp_id++;
			if (floe_type_is_nested(t->element) && sp < 256)
				st[sp++].t = (floe_type *)t->element;
		} else if (t->id == FLOE_T_MAP) {
			t->key_id = tmp_id++;
			t->value_id = tmp_id++;
			if (!floe_type_is_primitive(t->key))
				return floe_error_set(err, FLOE_EINVAL, "map keys must be primitive");
			if (floe_type_is_nested(t->value) && sp < 256)
				st[sp++].t = (floe_type *)t->value;
		}
	}
	int32_t pk_ids[64];
	for (size_t k = 0; k < n_pk; k++) {
		floe_field *f = NULL;
		for (size_t i = 0; i < root->n_fields && !f; i++)
			if (strlen(root->fields[i].name) == pkl[k] &&
			    memcmp(root->fields[i].name, pk[k], pkl[k]) == 0)
				f = &root->fields[i];
		if (!f)
			return floe_error_set(err, FLOE_EINVAL,
					      "primary key column '%.*s' is not a top-level column",
					      (int)pkl[k], pk[k]);
		if (!floe_type_is_primitive(f->type) || f->type->id == FLOE_T_FLOAT ||
		    f->type->id == FLOE_T_DOUBLE)
			return floe_error_set(err, FLOE_EINVAL,
					      "primary key column '%s' must be a primitive type other "
					      "than float and double (Iceberg identifier fields)",
					      f->name);
		for (size_t j = 0; j < k; j++)
			if (pk_ids[j] == f->id)
				return floe_error_set(err, FLOE_EINVAL,
						      "primary key column '%s' named twice", f->name);
		f->required = true;
		pk_ids[k] = f->id;
	}
	if ((rc = floe_schema_make(&tmp, a, 0, root, n_pk ? pk_ids : NULL, n_pk, err)))
		return rc;
	return floe_schema_assign_fresh_ids(out, a, tmp, 0, &last, err);
}
