/*
 * schema_build.c — building Avro schemas in C, checking them
 * (floe_avro_schema_finish) and writing them as JSON.
 *
 * DESIGN: constructors return NULL on any failure and accept NULL children,
 * so a whole schema can be written as nested calls and checked once by
 * floe_avro_schema_finish(). Two distinct nodes may carry the same full name
 * only when they are structurally equal (the Iceberg layer may build
 * "decimal_9_2" twice); the JSON writer then defines the name once and
 * references it afterwards, exactly like a shared node.
 */
#include <string.h>

#include "avro/avro_int.h"
#include "avro/avro_schema.h"
#include "util/hmap.h"
#include "util/str.h"

/* ---- constructors --------------------------------------------------------- */

static floe_avro_schema *node(floe_arena *a, floe_avro_type t)
{
	floe_avro_schema *s = floe_arena_calloc(a, 1, sizeof(*s));
	if (!s)
		return NULL;
	s->type = t;
	s->element_id = s->key_id = s->value_id = FLOE_AVRO_ID_NONE;
	s->precision = s->scale = FLOE_AVRO_ID_NONE;
	s->adjust_to_utc = -1;
	return s;
}

floe_avro_schema *floe_avro_new_primitive(floe_arena *a, floe_avro_type t)
{
	if (t > FLOE_AVRO_STRING)
		return NULL;
	return node(a, t);
}

floe_avro_schema *floe_avro_new_logical(floe_arena *a, floe_avro_type t, const char *logical)
{
	floe_avro_schema *s = floe_avro_new_primitive(a, t);
	if (s && logical && floe_avro_schema_set_logical(a, s, logical))
		return NULL;
	return s;
}

static int set_name(floe_arena *a, floe_avro_schema *s, const char *name, const char *space)
{
	const char *dot;
	if (!name)
		return FLOE_EINVAL;
	dot = strrchr(name, '.');
	if (dot) {
		s->name = floe_arena_strdup(a, dot + 1);
		s->space = floe_arena_strndup(a, name, (size_t)(dot - name));
		if (!s->name || !s->space)
			return FLOE_ENOMEM;
	} else {
		s->name = floe_arena_strdup(a, name);
		if (!s->name)
			return FLOE_ENOMEM;
		if (space && *space && !(s->space = floe_arena_strdup(a, space)))
			return FLOE_ENOMEM;
	}
	s->fullname = s->space ? floe_arena_sprintf(a, "%s.%s", s->space, s->name) : s->name;
	return s->fullname ? FLOE_OK : FLOE_ENOMEM;
}

floe_avro_schema *floe_avro_new_record(floe_arena *a, const char *name, const char *space)
{
	floe_avro_schema *s = node(a, FLOE_AVRO_RECORD);
	if (!s || set_name(a, s, name, space))
		return NULL;
	return s;
}

floe_avro_schema *floe_avro_new_enum(floe_arena *a, const char *name, const char *const *symbols,
				     size_t n)
{
	floe_avro_schema *s = node(a, FLOE_AVRO_ENUM);
	if (!s || set_name(a, s, name, NULL) || (n && !symbols))
		return NULL;
	s->symbols = floe_arena_calloc(a, n ? n : 1, sizeof(char *));
	if (!s->symbols)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!symbols[i] || !(s->symbols[i] = floe_arena_strdup(a, symbols[i])))
			return NULL;
	s->n_symbols = n;
	return s;
}

floe_avro_schema *floe_avro_new_fixed(floe_arena *a, const char *name, size_t size)
{
	floe_avro_schema *s = node(a, FLOE_AVRO_FIXED);
	if (!s || set_name(a, s, name, NULL) || size > INT32_MAX)
		return NULL;
	s->size = size;
	return s;
}

floe_avro_schema *floe_avro_new_decimal_fixed(floe_arena *a, const char *name, size_t size,
					      int32_t precision, int32_t scale)
{
	floe_avro_schema *s = floe_avro_new_fixed(a, name, size);
	if (!s || floe_avro_schema_set_logical(a, s, "decimal"))
		return NULL;
	s->precision = precision;
	s->scale = scale;
	return s;
}

floe_avro_schema *floe_avro_new_array(floe_arena *a, floe_avro_schema *items)
{
	floe_avro_schema *s;
	if (!items || !(s = node(a, FLOE_AVRO_ARRAY)))
		return NULL;
	s->items = items;
	return s;
}

floe_avro_schema *floe_avro_new_map(floe_arena *a, floe_avro_schema *values)
{
	floe_avro_schema *s;
	if (!values || !(s = node(a, FLOE_AVRO_MAP)))
		return NULL;
	s->items = values;
	return s;
}

floe_avro_schema *floe_avro_new_union(floe_arena *a, floe_avro_schema *const *branches, size_t n)
{
	floe_avro_schema *s = node(a, FLOE_AVRO_UNION);
	if (!s || (n && !branches))
		return NULL;
	s->branches = floe_arena_calloc(a, n ? n : 1, sizeof(*s->branches));
	if (!s->branches)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(s->branches[i] = branches[i]))
			return NULL;
	s->n_branches = n;
	return s;
}

floe_avro_schema *floe_avro_new_optional(floe_arena *a, floe_avro_schema *t)
{
	floe_avro_schema *b[2];
	if (!t)
		return NULL;
	b[0] = floe_avro_new_primitive(a, FLOE_AVRO_NULL);
	b[1] = t;
	return b[0] ? floe_avro_new_union(a, b, 2) : NULL;
}

floe_avro_field *floe_avro_record_add(floe_arena *a, floe_avro_schema *rec, const char *name,
				      floe_avro_schema *type)
{
	floe_avro_field *f;
	if (!rec)
		return NULL;
	if (rec->type != FLOE_AVRO_RECORD || !name || !type)
		goto fail;
	if (rec->n_fields == rec->fields_cap) {
		size_t cap = rec->fields_cap ? rec->fields_cap * 2 : 8;
		floe_avro_field *nf = floe_arena_calloc(a, cap, sizeof(*nf));
		if (!nf)
			goto fail;
		if (rec->n_fields)
			memcpy(nf, rec->fields, rec->n_fields * sizeof(*nf));
		rec->fields = nf;
		rec->fields_cap = cap;
	}
	f = &rec->fields[rec->n_fields];
	memset(f, 0, sizeof(*f));
	if (!(f->name = floe_arena_strdup(a, name)))
		goto fail;
	f->type = type;
	f->field_id = FLOE_AVRO_ID_NONE;
	rec->n_fields++;
	return f;
fail:
	rec->broken = true;
	return NULL;
}

int floe_avro_field_set_doc(floe_arena *a, floe_avro_field *f, const char *doc)
{
	if (!f || !doc)
		return FLOE_EINVAL;
	return (f->doc = floe_arena_strdup(a, doc)) ? FLOE_OK : FLOE_ENOMEM;
}

int floe_avro_field_set_default_json(floe_arena *a, floe_avro_field *f, const char *json_text)
{
	floe_json *j = NULL;
	int rc;
	if (!f || !json_text)
		return FLOE_EINVAL;
	if ((rc = floe_json_parse(&j, a, json_text, strlen(json_text), NULL, NULL)))
		return rc == FLOE_ENOMEM ? rc : FLOE_EINVAL;
	f->default_value = j;
	return FLOE_OK;
}

int floe_avro_field_set_default_null(floe_arena *a, floe_avro_field *f)
{
	return floe_avro_field_set_default_json(a, f, "null");
}

static int push_attr(floe_arena *a, floe_avro_attr **attrs, size_t *n, const char *key,
		     const floe_json *v)
{
	floe_avro_attr *na = floe_arena_calloc(a, *n + 1, sizeof(*na));
	char *k = floe_arena_strdup(a, key);
	if (!na || !k)
		return FLOE_ENOMEM;
	if (*n)
		memcpy(na, *attrs, *n * sizeof(*na));
	na[*n].key = k;
	na[*n].value = v;
	*attrs = na;
	(*n)++;
	return FLOE_OK;
}

int floe_avro_field_add_attr_str(floe_arena *a, floe_avro_field *f, const char *key,
				 const char *value)
{
	floe_json *j;
	if (!f || !key || !value)
		return FLOE_EINVAL;
	if (!(j = floe_arena_calloc(a, 1, sizeof(*j))))
		return FLOE_ENOMEM;
	j->type = FLOE_JSON_STRING;
	j->len = strlen(value);
	if (!(j->s = floe_arena_strndup(a, value, j->len)))
		return FLOE_ENOMEM;
	return push_attr(a, &f->attrs, &f->n_attrs, key, j);
}

int floe_avro_schema_set_logical(floe_arena *a, floe_avro_schema *s, const char *logical)
{
	if (!s || !logical)
		return FLOE_EINVAL;
	return (s->logical_type = floe_arena_strdup(a, logical)) ? FLOE_OK : FLOE_ENOMEM;
}

int floe_avro_schema_add_attr_json(floe_arena *a, floe_avro_schema *s, const char *key,
				   const char *json_text)
{
	floe_json *j = NULL;
	int rc;
	if (!s || !key || !json_text)
		return FLOE_EINVAL;
	if ((rc = floe_json_parse(&j, a, json_text, strlen(json_text), NULL, NULL)))
		return rc == FLOE_ENOMEM ? rc : FLOE_EINVAL;
	return push_attr(a, &s->attrs, &s->n_attrs, key, j);
}

/* ---- default values -------------------------------------------------------- */

/* spec: bytes and fixed defaults are JSON strings whose code points 0-255
 * are the byte values. Returns the byte count or -1. */
static long latin1_len(const char *s, size_t n)
{
	long len = 0;
	for (size_t i = 0; i < n; len++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80)
			i++;
		else if ((c == 0xc2 || c == 0xc3) && i + 1 < n)
			i += 2;
		else
			return -1;
	}
	return len;
}

bool floe_avro__default_matches(const floe_avro_schema *s, const floe_json *j, int depth)
{
	if (!s || !j || depth > 128)
		return false;
	switch (s->type) {
	case FLOE_AVRO_NULL: return j->type == FLOE_JSON_NULL;
	case FLOE_AVRO_BOOLEAN: return j->type == FLOE_JSON_BOOL;
	case FLOE_AVRO_INT:
		return j->type == FLOE_JSON_NUMBER && j->is_int && j->i >= INT32_MIN &&
		       j->i <= INT32_MAX;
	case FLOE_AVRO_LONG: return j->type == FLOE_JSON_NUMBER && j->is_int;
	case FLOE_AVRO_FLOAT:
	case FLOE_AVRO_DOUBLE:
		return j->type == FLOE_JSON_NUMBER ||
		       (j->type == FLOE_JSON_STRING &&
			(floe_slice_eq(j->s, j->len, "NaN") ||
			 floe_slice_eq(j->s, j->len, "Infinity") ||
			 floe_slice_eq(j->s, j->len, "-Infinity")));
	case FLOE_AVRO_STRING: return j->type == FLOE_JSON_STRING;
	case FLOE_AVRO_BYTES: return j->type == FLOE_JSON_STRING && latin1_len(j->s, j->len) >= 0;
	case FLOE_AVRO_FIXED:
		return j->type == FLOE_JSON_STRING && latin1_len(j->s, j->len) == (long)s->size;
	case FLOE_AVRO_ENUM:
		if (j->type != FLOE_JSON_STRING)
			return false;
		for (size_t i = 0; i < s->n_symbols; i++)
			if (floe_slice_eq(j->s, j->len, s->symbols[i]))
				return true;
		return false;
	case FLOE_AVRO_ARRAY:
		if (j->type != FLOE_JSON_ARRAY)
			return false;
		for (const floe_json *c = j->child; c; c = c->next)
			if (!floe_avro__default_matches(s->items, c, depth + 1))
				return false;
		return true;
	case FLOE_AVRO_MAP:
		if (j->type != FLOE_JSON_OBJECT)
			return false;
		for (const floe_json *c = j->child; c; c = c->next)
			if (!floe_avro__default_matches(s->items, c, depth + 1))
				return false;
		return true;
	case FLOE_AVRO_RECORD:
		if (j->type != FLOE_JSON_OBJECT)
			return false;
		for (size_t i = 0; i < s->n_fields; i++) {
			const floe_json *v = floe_json_get(j, s->fields[i].name);
			if (v ? !floe_avro__default_matches(s->fields[i].type, v, depth + 1)
			      : !s->fields[i].default_value)
				return false;
		}
		return true;
	case FLOE_AVRO_UNION:
		/* spec 1.12: a union default may match any branch (earlier specs: the
		 * first); readers accept either. */
		for (size_t i = 0; i < s->n_branches; i++)
			if (floe_avro__default_matches(s->branches[i], j, depth + 1))
				return true;
		return false;
	}
	return false;
}

/* ---- finish ------------------------------------------------------------------ */

typedef struct finisher {
	floe_error *err;
	floe_imap seen; /* node pointer -> 1 open, 2 done */
	floe_hmap names; /* fullname -> node */
	uint32_t next_id;
	int depth;
} finisher;

static bool valid_name(const char *s)
{
	if (!s || !*s)
		return false;
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static bool valid_space(const char *s)
{
	char part[256];
	if (!s)
		return true;
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t n = dot ? (size_t)(dot - s) : strlen(s);
		if (n == 0 || n >= sizeof(part))
			return false;
		memcpy(part, s, n);
		part[n] = '\0';
		if (!valid_name(part))
			return false;
		s += n + (dot ? 1 : 0);
		if (dot && !*s)
			return false;
	}
	return true;
}

static int finish_rec(finisher *f, floe_avro_schema *s);

static int finish_named(finisher *f, floe_avro_schema *s)
{
	uint64_t v;
	bool existed = false;
	if (!valid_name(s->name) || !valid_space(s->space))
		return floe_error_set(f->err, FLOE_EINVAL, "invalid Avro name '%s'",
				      s->fullname ? s->fullname : "(null)");
	if (floe_hmap_get(&f->names, s->fullname, strlen(s->fullname), &v)) {
		const floe_avro_schema *o = (const floe_avro_schema *)(uintptr_t)v;
		if (o != s && !floe_avro_schema_equal(o, s))
			return floe_error_set(f->err, FLOE_EINVAL,
					      "two different types are named '%s'", s->fullname);
		return FLOE_OK;
	}
	if (floe_hmap_put(&f->names, s->fullname, strlen(s->fullname), (uint64_t)(uintptr_t)s,
			  &existed))
		return floe_error_oom(f->err);
	return FLOE_OK;
}

static int finish_body(finisher *f, floe_avro_schema *s)
{
	int rc;
	if (s->broken)
		return floe_error_oomf(f->err, "out of memory building the schema");
	switch (s->type) {
	case FLOE_AVRO_RECORD:
		if ((rc = finish_named(f, s)))
			return rc;
		for (size_t i = 0; i < s->n_fields; i++) {
			floe_avro_field *fl = &s->fields[i];
			if (!valid_name(fl->name))
				return floe_error_set(f->err, FLOE_EINVAL,
						      "record '%s': invalid field name '%s'",
						      s->fullname, fl->name ? fl->name : "(null)");
			for (size_t k = 0; k < i; k++)
				if (strcmp(s->fields[k].name, fl->name) == 0)
					return floe_error_set(f->err, FLOE_EINVAL,
							      "record '%s': duplicate field '%s'",
							      s->fullname, fl->name);
			if ((rc = finish_rec(f, fl->type)))
				return AVRO_PREFIX(rc, f->err, "field '%s': ", fl->name);
			if (fl->default_value &&
			    !floe_avro__default_matches(fl->type, fl->default_value, 0))
				return floe_error_set(f->err, FLOE_EINVAL,
						      "field '%s': default does not match its type",
						      fl->name);
		}
		return FLOE_OK;
	case FLOE_AVRO_ENUM:
		if ((rc = finish_named(f, s)))
			return rc;
		for (size_t i = 0; i < s->n_symbols; i++) {
			if (!valid_name(s->symbols[i]))
				return floe_error_set(f->err, FLOE_EINVAL,
						      "enum '%s': invalid symbol", s->fullname);
			for (size_t k = 0; k < i; k++)
				if (strcmp(s->symbols[k], s->symbols[i]) == 0)
					return floe_error_set(f->err, FLOE_EINVAL,
							      "enum '%s': duplicate symbol '%s'",
							      s->fullname, s->symbols[i]);
		}
		return FLOE_OK;
	case FLOE_AVRO_FIXED: return finish_named(f, s);
	case FLOE_AVRO_ARRAY:
	case FLOE_AVRO_MAP:
		if (!s->items)
			return floe_error_set(f->err, FLOE_EINVAL, "%s without an item type",
					      floe_avro_type_name(s->type));
		return finish_rec(f, s->items);
	case FLOE_AVRO_UNION:
		for (size_t i = 0; i < s->n_branches; i++) {
			const floe_avro_schema *b = s->branches[i];
			if (!b)
				return floe_error_set(f->err, FLOE_EINVAL, "union branch %zu is missing", i);
			if (b->type == FLOE_AVRO_UNION)
				return floe_error_set(f->err, FLOE_EINVAL, "union inside a union");
			for (size_t k = 0; k < i; k++) {
				const floe_avro_schema *o = s->branches[k];
				bool named = b->type == FLOE_AVRO_RECORD ||
					     b->type == FLOE_AVRO_ENUM || b->type == FLOE_AVRO_FIXED;
				if (o->type == b->type &&
				    (!named || strcmp(o->fullname, b->fullname) == 0))
					return floe_error_set(f->err, FLOE_EINVAL,
							      "union has two %s branches",
							      floe_avro_type_name(b->type));
			}
			if ((rc = finish_rec(f, s->branches[i])))
				return rc;
		}
		return FLOE_OK;
	default: return FLOE_OK;
	}
}

static int finish_rec(finisher *f, floe_avro_schema *s)
{
	uint64_t st = 0;
	int rc;
	if (!s)
		return floe_error_oomf(f->err, "out of memory building the schema");
	if (floe_imap_get(&f->seen, (int64_t)(intptr_t)s, &st))
		return st == 1 ? floe_error_set(f->err, FLOE_EINVAL, "the schema contains a cycle")
			       : FLOE_OK;
	if (++f->depth > 200)
		return floe_error_set(f->err, FLOE_EINVAL, "schema nested too deeply");
	if (floe_imap_put(&f->seen, (int64_t)(intptr_t)s, 1))
		return floe_error_oom(f->err);
	s->node_id = f->next_id++;
	if ((rc = finish_body(f, s)))
		return rc;
	if (floe_imap_put(&f->seen, (int64_t)(intptr_t)s, 2))
		return floe_error_oom(f->err);
	f->depth--;
	return FLOE_OK;
}

int floe_avro_schema_finish(floe_avro_schema *root, floe_error *err)
{
	finisher f;
	int rc;
	memset(&f, 0, sizeof(f));
	f.err = err;
	floe_imap_init(&f.seen);
	floe_hmap_init(&f.names);
	rc = finish_rec(&f, root);
	if (!rc)
		root->tree_nodes = f.next_id;
	floe_imap_reset(&f.seen);
	floe_hmap_reset(&f.names);
	if (rc)
		return AVRO_PREFIX(rc, err, "avro schema: ");
	return FLOE_OK;
}

/* ---- JSON ------------------------------------------------------------------------ */

typedef struct jwriter {
	floe_jw *w;
	floe_hmap defined; /* full names already written */
	int rc;
} jwriter;

static void write_attrs(floe_jw *w, const floe_avro_attr *attrs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		floe_jw_key(w, attrs[i].key);
		floe_jw_value(w, attrs[i].value);
	}
}

static void write_strs(floe_jw *w, const char *key, const char **v, size_t n)
{
	floe_jw_key(w, key);
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < n; i++)
		floe_jw_str(w, v[i]);
	floe_jw_arr_end(w);
}

static void write_logical(floe_jw *w, const floe_avro_schema *s)
{
	if (s->logical_type)
		floe_jw_kv_str(w, "logicalType", s->logical_type);
	if (s->precision != FLOE_AVRO_ID_NONE)
		floe_jw_kv_i64(w, "precision", s->precision);
	if (s->scale != FLOE_AVRO_ID_NONE)
		floe_jw_kv_i64(w, "scale", s->scale);
	if (s->adjust_to_utc >= 0)
		floe_jw_kv_bool(w, "adjust-to-utc", s->adjust_to_utc != 0);
}

static bool is_named(const floe_avro_schema *s)
{
	return s->type == FLOE_AVRO_RECORD || s->type == FLOE_AVRO_ENUM || s->type == FLOE_AVRO_FIXED;
}

static void write_node(jwriter *jw, const floe_avro_schema *s, const char *enc_ns, int depth);

static void write_named_head(jwriter *jw, const floe_avro_schema *s, const char *enc_ns)
{
	floe_jw *w = jw->w;
	floe_jw_kv_str(w, "type", floe_avro_type_name(s->type));
	floe_jw_kv_str(w, "name", s->name);
	if (s->space && (!enc_ns || strcmp(s->space, enc_ns) != 0))
		floe_jw_kv_str(w, "namespace", s->space);
	else if (!s->space && enc_ns)
		floe_jw_kv_str(w, "namespace", "");
	if (s->doc)
		floe_jw_kv_str(w, "doc", s->doc);
	if (s->n_aliases)
		write_strs(w, "aliases", s->aliases, s->n_aliases);
}

static void write_node(jwriter *jw, const floe_avro_schema *s, const char *enc_ns, int depth)
{
	floe_jw *w = jw->w;
	if (!s || depth > 200) {
		jw->rc = FLOE_EINVAL;
		floe_jw_null(w);
		return;
	}
	if (is_named(s)) {
		bool existed = false;
		if (floe_hmap_has(&jw->defined, s->fullname, strlen(s->fullname))) {
			floe_jw_str(w, s->fullname);
			return;
		}
		if (floe_hmap_put(&jw->defined, s->fullname, strlen(s->fullname), 1, &existed))
			jw->rc = FLOE_ENOMEM;
	}
	switch (s->type) {
	case FLOE_AVRO_UNION:
		floe_jw_arr_begin(w);
		for (size_t i = 0; i < s->n_branches; i++)
			write_node(jw, s->branches[i], enc_ns, depth + 1);
		floe_jw_arr_end(w);
		return;
	case FLOE_AVRO_RECORD:
		floe_jw_obj_begin(w);
		write_named_head(jw, s, enc_ns);
		floe_jw_key(w, "fields");
		floe_jw_arr_begin(w);
		for (size_t i = 0; i < s->n_fields; i++) {
			const floe_avro_field *f = &s->fields[i];
			floe_jw_obj_begin(w);
			floe_jw_kv_str(w, "name", f->name);
			floe_jw_key(w, "type");
			write_node(jw, f->type, s->space, depth + 1);
			if (f->doc)
				floe_jw_kv_str(w, "doc", f->doc);
			if (f->default_value) {
				floe_jw_key(w, "default");
				floe_jw_value(w, f->default_value);
			}
			if (f->field_id != FLOE_AVRO_ID_NONE)
				floe_jw_kv_i64(w, "field-id", f->field_id);
			if (f->n_aliases)
				write_strs(w, "aliases", f->aliases, f->n_aliases);
			write_attrs(w, f->attrs, f->n_attrs);
			floe_jw_obj_end(w);
		}
		floe_jw_arr_end(w);
		write_logical(w, s);
		write_attrs(w, s->attrs, s->n_attrs);
		floe_jw_obj_end(w);
		return;
	case FLOE_AVRO_ENUM:
		floe_jw_obj_begin(w);
		write_named_head(jw, s, enc_ns);
		write_strs(w, "symbols", s->symbols, s->n_symbols);
		if (s->enum_default)
			floe_jw_kv_str(w, "default", s->enum_default);
		write_logical(w, s);
		write_attrs(w, s->attrs, s->n_attrs);
		floe_jw_obj_end(w);
		return;
	case FLOE_AVRO_FIXED:
		floe_jw_obj_begin(w);
		write_named_head(jw, s, enc_ns);
		floe_jw_kv_i64(w, "size", (int64_t)s->size);
		write_logical(w, s);
		write_attrs(w, s->attrs, s->n_attrs);
		floe_jw_obj_end(w);
		return;
	case FLOE_AVRO_ARRAY:
	case FLOE_AVRO_MAP:
		floe_jw_obj_begin(w);
		floe_jw_kv_str(w, "type", floe_avro_type_name(s->type));
		floe_jw_key(w, s->type == FLOE_AVRO_ARRAY ? "items" : "values");
		write_node(jw, s->items, enc_ns, depth + 1);
		if (s->element_id != FLOE_AVRO_ID_NONE)
			floe_jw_kv_i64(w, "element-id", s->element_id);
		if (s->key_id != FLOE_AVRO_ID_NONE)
			floe_jw_kv_i64(w, "key-id", s->key_id);
		if (s->value_id != FLOE_AVRO_ID_NONE)
			floe_jw_kv_i64(w, "value-id", s->value_id);
		write_logical(w, s);
		write_attrs(w, s->attrs, s->n_attrs);
		floe_jw_obj_end(w);
		return;
	default:
		if (!s->logical_type && s->precision == FLOE_AVRO_ID_NONE &&
		    s->scale == FLOE_AVRO_ID_NONE && s->adjust_to_utc < 0 && s->n_attrs == 0) {
			floe_jw_str(w, floe_avro_type_name(s->type));
			return;
		}
		floe_jw_obj_begin(w);
		floe_jw_kv_str(w, "type", floe_avro_type_name(s->type));
		write_logical(w, s);
		write_attrs(w, s->attrs, s->n_attrs);
		floe_jw_obj_end(w);
		return;
	}
}

void floe_avro_schema_write(floe_jw *w, const floe_avro_schema *s)
{
	jwriter jw = {w, {0}, 0};
	floe_hmap_init(&jw.defined);
	write_node(&jw, s, NULL, 0);
	floe_hmap_reset(&jw.defined);
	if (jw.rc && !w->rc)
		w->rc = jw.rc;
}

int floe_avro_schema_to_json(floe_buf *out, const floe_avro_schema *s, floe_error *err)
{
	floe_jw w;
	size_t start = out->len;
	int rc;
	floe_jw_init(&w, out, 0);
	floe_avro_schema_write(&w, s);
	if ((rc = floe_jw_finish(&w))) {
		out->len = start;
		if (out->data)
			out->data[start] = 0;
		return floe_error_set(err, rc,
				      rc == FLOE_ENOMEM ? "avro schema: out of memory writing JSON"
							: "avro schema: cannot be written as JSON "
							  "(missing node or nested too deeply)");
	}
	return FLOE_OK;
}
