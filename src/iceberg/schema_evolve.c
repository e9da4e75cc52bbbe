/*
 * schema_evolve.c — adding columns, widening types and making columns
 * optional on a mutable copy of a schema; merging a wanted struct into it.
 *
 * DESIGN: floe_evo_begin deep-copies every struct, list and map node of the
 * schema into the caller's arena (primitives stay shared singletons), so a
 * change is a plain edit of that copy; a path is resolved to a "slot" (the
 * type pointer and required flag of a field, a list's element or a map's
 * value) and the slot is replaced. floe_evo_finish rebuilds the id index.
 */
#include "iceberg/schema_evolve.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_PATH_DEPTH 64

typedef struct slot {
	const floe_type **type;
	bool *required;
	floe_field *field; /* NULL for a list element / map value */
} slot;

static floe_type *mclone(floe_arena *a, const floe_type *t)
{
	if (!floe_type_is_nested(t))
		return (floe_type *)t; /* never written: replaced, not edited */
	floe_type *c = floe_arena_calloc(a, 1, sizeof(*c));
	if (!c)
		return NULL;
	*c = *t;
	switch (t->id) {
	case FLOE_T_STRUCT:
		if (t->n_fields) {
			c->fields = floe_arena_calloc(a, t->n_fields, sizeof(*c->fields));
			if (!c->fields)
				return NULL;
			memcpy(c->fields, t->fields, t->n_fields * sizeof(*c->fields));
			for (size_t i = 0; i < t->n_fields; i++)
				if (!(c->fields[i].type = mclone(a, t->fields[i].type)))
					return NULL;
		}
		break;
	case FLOE_T_LIST:
		if (!(c->element = mclone(a, t->element)))
			return NULL;
		break;
	case FLOE_T_MAP:
		if (!(c->key = mclone(a, t->key)) || !(c->value = mclone(a, t->value)))
			return NULL;
		break;
	default:
		break;
	}
	return c;
}

/* Fresh ids for a new type as Java's assignFreshIds: a struct's direct
 * fields first, then their nested types in order. */
static void fresh_ids(floe_type *t, int32_t *last)
{
	switch (t->id) {
	case FLOE_T_STRUCT:
		for (size_t i = 0; i < t->n_fields; i++)
			t->fields[i].id = ++*last;
		for (size_t i = 0; i < t->n_fields; i++)
			if (floe_type_is_nested(t->fields[i].type))
				fresh_ids((floe_type *)t->fields[i].type, last);
		break;
	case FLOE_T_LIST:
		t->element_id = ++*last;
		if (floe_type_is_nested(t->element))
			fresh_ids((floe_type *)t->element, last);
		break;
	case FLOE_T_MAP:
		t->key_id = ++*last;
		t->value_id = ++*last;
		if (floe_type_is_nested(t->key))
			fresh_ids((floe_type *)t->key, last);
		if (floe_type_is_nested(t->value))
			fresh_ids((floe_type *)t->value, last);
		break;
	default:
		break;
	}
}

bool floe_type_promotable(const floe_type *from, const floe_type *to, int format_version)
{
	if (floe_type_equal(from, to))
		return true;
	switch (from->id) {
	case FLOE_T_INT:
		return to->id == FLOE_T_LONG;
	case FLOE_T_FLOAT:
		return to->id == FLOE_T_DOUBLE;
	case FLOE_T_DECIMAL:
		return to->id == FLOE_T_DECIMAL && to->scale == from->scale &&
		       to->precision >= from->precision;
	case FLOE_T_DATE: /* spec: v3 adds date -> timestamp, timestamp_ns */
		return format_version >= 3 &&
		       (to->id == FLOE_T_TIMESTAMP || to->id == FLOE_T_TIMESTAMP_NS);
	default:
		return false;
	}
}

int floe_evo_begin(floe_schema_evo *e, floe_arena *a, const floe_schema *base,
		   int32_t last_column_id, int format_version, floe_error *err)
{
	memset(e, 0, sizeof(*e));
	e->a = a;
	e->base = base;
	e->last_id = last_column_id > base->highest_field_id ? last_column_id : base->highest_field_id;
	e->format_version = format_version;
	floe_buf_init(&e->text, 1 << 16);
	if (!(e->root = mclone(a, base->root)))
		return floe_error_oom(err);
	return FLOE_OK;
}

void floe_evo_reset(floe_schema_evo *e)
{
	floe_buf_reset(&e->text);
}

static int note(floe_schema_evo *e, floe_error *err, const char *verb, const char *path,
		const floe_type *t1, const floe_type *t2)
{
	floe_buf b1, b2;
	floe_buf_init(&b1, 256);
	floe_buf_init(&b2, 256);
	int rc = (t1 && floe_type_format(&b1, t1)) || (t2 && floe_type_format(&b2, t2));
	if (!rc) {
		char line[768];
		if (t2)
			snprintf(line, sizeof(line), "%s %s %s -> %s", verb, path, floe_buf_cstr(&b1),
				 floe_buf_cstr(&b2));
		else if (t1)
			snprintf(line, sizeof(line), "%s %s %s", verb, path, floe_buf_cstr(&b1));
		else
			snprintf(line, sizeof(line), "%s %s", verb, path);
		rc = (e->text.len && floe_buf_puts(&e->text, "; ")) || floe_buf_puts(&e->text, line);
	}
	floe_buf_reset(&b1);
	floe_buf_reset(&b2);
	e->n_changes++;
	return rc ? floe_error_oom(err) : FLOE_OK;
}

static floe_field *find_member(floe_type *st, const char *name, size_t n)
{
	for (size_t i = 0; i < st->n_fields; i++)
		if (strlen(st->fields[i].name) == n && !memcmp(st->fields[i].name, name, n))
			return &st->fields[i];
	/* the JSON decoder matches names case-insensitively too */
	for (size_t i = 0; i < st->n_fields; i++)
		if (strlen(st->fields[i].name) == n && !strncasecmp(st->fields[i].name, name, n))
			return &st->fields[i];
	return NULL;
}

/* Resolve a dotted path to its slot. */
static int resolve(floe_schema_evo *e, const char *path, size_t n, slot *out, floe_error *err)
{
	const floe_type *cur = e->root;
	const char *p = path, *end = path + n;
	bool first = true;
	memset(out, 0, sizeof(*out));
	while (p <= end) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		size_t len = dot ? (size_t)(dot - p) : (size_t)(end - p);
		floe_type *mt = (floe_type *)cur;
		if (cur->id == FLOE_T_STRUCT) {
			floe_field *f = find_member(mt, p, len);
			if (!f)
				return floe_error_set(err, FLOE_EINVAL, "column '%.*s': no such field%s",
						      (int)((p - path) + len), path,
						      first ? "" : " in its struct");
			out->type = &f->type;
			out->required = &f->required;
			out->field = f;
		} else if (cur->id == FLOE_T_LIST && len == 7 && !memcmp(p, "element", 7)) {
			out->type = &mt->element;
			out->required = &mt->element_required;
			out->field = NULL;
		} else if (cur->id == FLOE_T_MAP && len == 5 && !memcmp(p, "value", 5)) {
			out->type = &mt->value;
			out->required = &mt->value_required;
			out->field = NULL;
		} else {
			int pre = p > path ? (int)(p - path - 1) : 0;
			return floe_error_set(err, FLOE_EINVAL,
					      "column '%.*s': '%.*s' is not a struct (a list's struct "
					      "is 'element', a map's 'value')",
					      (int)((p - path) + len), path, pre, path);
		}
		cur = *out->type;
		first = false;
		if (!dot)
			return FLOE_OK;
		p = dot + 1;
	}
	return floe_error_set(err, FLOE_EINVAL, "column '%s': bad path", path);
}

static bool is_identifier(const floe_schema_evo *e, int32_t id)
{
	for (size_t i = 0; i < e->base->n_identifier_field_ids; i++)
		if (e->base->identifier_field_ids[i] == id)
			return true;
	return false;
}

/* Every field, element and value of a new type optional (a merged record's
 * members: later records may lack them). */
static void relax(floe_type *t)
{
	switch (t->id) {
	case FLOE_T_STRUCT:
		for (size_t i = 0; i < t->n_fields; i++) {
			t->fields[i].required = false;
			if (floe_type_is_nested(t->fields[i].type))
				relax((floe_type *)t->fields[i].type);
		}
		break;
	case FLOE_T_LIST:
		t->element_required = false;
		if (floe_type_is_nested(t->element))
			relax((floe_type *)t->element);
		break;
	case FLOE_T_MAP:
		t->value_required = false;
		if (floe_type_is_nested(t->value))
			relax((floe_type *)t->value);
		break;
	default:
		break;
	}
}

static int add_at(floe_schema_evo *e, floe_type *parent, const char *path, const char *name,
		  size_t name_len, const floe_type *type, const char *doc, bool relaxed,
		  floe_error *err)
{
	if (find_member(parent, name, name_len))
		return floe_error_set(err, FLOE_EINVAL, "column '%s' exists already", path);
	if (!name_len)
		return floe_error_set(err, FLOE_EINVAL, "column '%s': empty name", path);
	if (floe_type_min_format_version(type) > e->format_version)
		return floe_error_set(err, FLOE_EINVAL,
				      "column '%s': its type needs format version %d (the table is "
				      "version %d)",
				      path, floe_type_min_format_version(type), e->format_version);
	floe_field *fs = floe_arena_calloc(e->a, parent->n_fields + 1, sizeof(*fs));
	floe_type *nt = mclone(e->a, type);
	char *nm = floe_arena_alloc(e->a, name_len + 1);
	if (!fs || !nt || !nm)
		return floe_error_oom(err);
	memcpy(nm, name, name_len);
	nm[name_len] = 0;
	if (parent->n_fields)
		memcpy(fs, parent->fields, parent->n_fields * sizeof(*fs));
	floe_field *f = &fs[parent->n_fields];
	f->id = ++e->last_id;
	f->name = nm;
	f->required = false; /* a table's existing rows have no value */
	f->type = nt;
	f->doc = doc && *doc ? floe_arena_strdup(e->a, doc) : NULL;
	if (floe_type_is_nested(nt)) {
		fresh_ids(nt, &e->last_id);
		if (relaxed)
			relax(nt);
	}
	parent->fields = fs;
	parent->n_fields++;
	return note(e, err, "add column", path, type, NULL);
}

int floe_evo_add_column(floe_schema_evo *e, const char *path, const floe_type *type,
			const char *doc, floe_error *err)
{
	const char *dot = strrchr(path, '.');
	floe_type *parent = e->root;
	int rc;
	if (dot) {
		slot s;
		if ((rc = resolve(e, path, (size_t)(dot - path), &s, err)))
			return rc;
		if ((*s.type)->id != FLOE_T_STRUCT)
			return floe_error_set(err, FLOE_EINVAL,
					      "column '%s': its parent '%.*s' is not a struct", path,
					      (int)(dot - path), path);
		parent = (floe_type *)*s.type;
	}
	const char *name = dot ? dot + 1 : path;
	return add_at(e, parent, path, name, strlen(name), type, doc, false, err);
}

static int widen_slot(floe_schema_evo *e, slot *s, const char *path, const floe_type *to,
		      floe_error *err)
{
	const floe_type *from = *s->type;
	if (floe_type_equal(from, to))
		return FLOE_OK;
	if (!floe_type_is_primitive(from) || !floe_type_promotable(from, to, e->format_version)) {
		floe_buf b1, b2;
		floe_buf_init(&b1, 256);
		floe_buf_init(&b2, 256);
		if (floe_type_format(&b1, from) || floe_type_format(&b2, to)) {
			floe_buf_reset(&b1);
			floe_buf_reset(&b2);
			return floe_error_oom(err);
		}
		int rc = floe_error_set(err, FLOE_EINVAL,
					"column '%s': %s cannot become %s (allowed: int -> long, "
					"float -> double, decimal(P,S) -> decimal(P2,S) with P2 > P%s)",
					path, floe_buf_cstr(&b1), floe_buf_cstr(&b2),
					e->format_version >= 3 ? ", date -> timestamp" : "");
		floe_buf_reset(&b1);
		floe_buf_reset(&b2);
		return rc;
	}
	const floe_type *c = to;
	if (to->id == FLOE_T_DECIMAL && !(c = floe_type_decimal(e->a, to->precision, to->scale)))
		return floe_error_oom(err);
	*s->type = c;
	return note(e, err, "widen", path, from, to);
}

int floe_evo_update_type(floe_schema_evo *e, const char *path, const floe_type *type,
			 floe_error *err)
{
	slot s;
	int rc = resolve(e, path, strlen(path), &s, err);
	return rc ? rc : widen_slot(e, &s, path, type, err);
}

static int optional_slot(floe_schema_evo *e, slot *s, const char *path, floe_error *err)
{
	if (!*s->required)
		return FLOE_OK;
	if (s->field && is_identifier(e, s->field->id))
		return floe_error_set(err, FLOE_EINVAL,
				      "column '%s' is an identifier field (a row key): it stays "
				      "required",
				      path);
	*s->required = false;
	return note(e, err, "make optional", path, NULL, NULL);
}

int floe_evo_make_optional(floe_schema_evo *e, const char *path, floe_error *err)
{
	slot s;
	int rc = resolve(e, path, strlen(path), &s, err);
	return rc ? rc : optional_slot(e, &s, path, err);
}

/* ---- merge ------------------------------------------------------------------------- */

/* A value of type w is written into a column of type c as it is. */
static bool fits(const floe_type *c, const floe_type *w)
{
	if (c->id == FLOE_T_STRING) /* a string column takes any JSON value as text */
		return true;
	switch (w->id) {
	case FLOE_T_INT:
		return c->id == FLOE_T_LONG || c->id == FLOE_T_FLOAT || c->id == FLOE_T_DOUBLE ||
		       c->id == FLOE_T_DECIMAL;
	case FLOE_T_LONG:
		return c->id == FLOE_T_FLOAT || c->id == FLOE_T_DOUBLE || c->id == FLOE_T_DECIMAL;
	case FLOE_T_FLOAT:
		return c->id == FLOE_T_DOUBLE;
	default:
		return false;
	}
}

static int merge_type(floe_schema_evo *e, slot *s, char *path, size_t plen, const floe_type *w,
		      bool missing_optional, floe_error *err);

static int merge_struct(floe_schema_evo *e, floe_type *c, char *path, size_t plen,
			const floe_type *w, bool missing_optional, floe_error *err)
{
	int rc;
	for (size_t i = 0; i < w->n_fields; i++) {
		const floe_field *wf = &w->fields[i];
		size_t nl = strlen(wf->name);
		size_t at = plen ? plen + 1 : 0;
		if (at + nl + 1 > 1024)
			return floe_error_set(err, FLOE_EINVAL, "column '%.64s...': path too long", path);
		if (plen)
			path[plen] = '.';
		memcpy(path + at, wf->name, nl + 1);
		floe_field *cf = find_member(c, wf->name, nl);
		if (!cf) {
			if ((rc = add_at(e, c, path, wf->name, nl, wf->type, NULL, true, err)))
				return rc;
			continue;
		}
		slot s = {&cf->type, &cf->required, cf};
		if ((rc = merge_type(e, &s, path, at + nl, wf->type, missing_optional, err)))
			return rc;
		/* present but optional (a null value): the column becomes optional */
		if (missing_optional && !wf->required && cf->required &&
		    (rc = optional_slot(e, &s, path, err)))
			return rc;
		path[at + nl] = 0;
	}
	if (missing_optional) {
		for (size_t i = 0; i < c->n_fields; i++) {
			floe_field *cf = &c->fields[i];
			bool present = false;
			for (size_t k = 0; k < w->n_fields && !present; k++)
				present = !strcasecmp(w->fields[k].name, cf->name);
			if (present || !cf->required)
				continue;
			size_t nl = strlen(cf->name), at = plen ? plen + 1 : 0;
			if (at + nl + 1 > 1024)
				return floe_error_set(err, FLOE_EINVAL, "path too long");
			if (plen)
				path[plen] = '.';
			memcpy(path + at, cf->name, nl + 1);
			slot s = {&cf->type, &cf->required, cf};
			if ((rc = optional_slot(e, &s, path, err)))
				return rc;
		}
	}
	path[plen] = 0;
	return FLOE_OK;
}

static int sub_slot(floe_schema_evo *e, const floe_type **t, bool *req, char *path, size_t plen,
		    const char *what, const floe_type *w, bool missing_optional, floe_error *err)
{
	size_t wl = strlen(what);
	if (plen + wl + 2 > 1024)
		return floe_error_set(err, FLOE_EINVAL, "path too long");
	path[plen] = '.';
	memcpy(path + plen + 1, what, wl + 1);
	slot s = {t, req, NULL};
	int rc = merge_type(e, &s, path, plen + 1 + wl, w, missing_optional, err);
	path[plen] = 0;
	return rc;
}

static int merge_type(floe_schema_evo *e, slot *s, char *path, size_t plen, const floe_type *w,
		      bool missing_optional, floe_error *err)
{
	const floe_type *c = *s->type;
	if (c->id == FLOE_T_STRUCT && w->id == FLOE_T_STRUCT)
		return merge_struct(e, (floe_type *)c, path, plen, w, missing_optional, err);
	if (c->id == FLOE_T_LIST && w->id == FLOE_T_LIST) {
		floe_type *mc = (floe_type *)c;
		return sub_slot(e, &mc->element, &mc->element_required, path, plen, "element",
				w->element, missing_optional, err);
	}
	if (c->id == FLOE_T_MAP && w->id == FLOE_T_MAP) {
		floe_type *mc = (floe_type *)c;
		return sub_slot(e, &mc->value, &mc->value_required, path, plen, "value", w->value,
				missing_optional, err);
	}
	if (floe_type_is_primitive(c) && floe_type_is_primitive(w)) {
		if (floe_type_equal(c, w) || fits(c, w))
			return FLOE_OK;
		if (c->id == FLOE_T_DECIMAL && w->id == FLOE_T_DECIMAL) {
			/* the value keeps the column's scale (rounded); its integer
			 * digits decide the precision */
			int32_t digits = w->precision - w->scale;
			if (c->precision - c->scale >= digits)
				return FLOE_OK;
			int32_t p = digits + c->scale;
			if (p > 38)
				return floe_error_set(err, FLOE_EINVAL,
						      "column '%s': a value with %d integer digits "
						      "needs decimal(%d, %d), beyond precision 38",
						      path, (int)digits, (int)p, (int)c->scale);
			const floe_type *nt = floe_type_decimal(e->a, p, c->scale);
			if (!nt)
				return floe_error_oom(err);
			return widen_slot(e, s, path, nt, err);
		}
		if (floe_type_promotable(c, w, e->format_version))
			return widen_slot(e, s, path, w, err);
	}
	floe_buf b1, b2;
	floe_buf_init(&b1, 256);
	floe_buf_init(&b2, 256);
	if (floe_type_format(&b1, c) || floe_type_format(&b2, w)) {
		floe_buf_reset(&b1);
		floe_buf_reset(&b2);
		return floe_error_oom(err);
	}
	int rc = floe_error_set(err, FLOE_EINVAL, "column '%s' is %s: a %s value cannot evolve it",
				path, floe_buf_cstr(&b1), floe_buf_cstr(&b2));
	floe_buf_reset(&b1);
	floe_buf_reset(&b2);
	return rc;
}

int floe_evo_merge(floe_schema_evo *e, const floe_type *want, bool missing_optional,
		   floe_error *err)
{
	char path[1024];
	path[0] = 0;
	if (want->id != FLOE_T_STRUCT)
		return floe_error_set(err, FLOE_EINVAL, "a record is a struct");
	/* all or nothing: merge into a scratch copy first */
	floe_type *save = e->root;
	int32_t save_last = e->last_id;
	size_t save_n = e->n_changes, save_len = e->text.len;
	floe_type *work = mclone(e->a, e->root);
	if (!work)
		return floe_error_oom(err);
	e->root = work;
	int rc = merge_struct(e, work, path, 0, want, missing_optional, err);
	if (rc) {
		e->root = save;
		e->last_id = save_last;
		e->n_changes = save_n;
		e->text.len = save_len;
		if (e->text.data)
			e->text.data[save_len] = 0;
	}
	return rc;
}

int floe_evo_finish(floe_schema **out, int32_t *last_column_id, floe_schema_evo *e,
		    floe_error *err)
{
	*out = NULL;
	if (last_column_id)
		*last_column_id = e->last_id;
	if (!e->n_changes)
		return FLOE_OK;
	int rc = floe_schema_make(out, e->a, e->base->schema_id + 1, e->root,
				  e->base->identifier_field_ids, e->base->n_identifier_field_ids,
				  err);
	if (!rc)
		rc = floe_schema_check_names(*out, false, err);
	if (rc)
		*out = NULL;
	return rc;
}

const char *floe_evo_describe(const floe_schema_evo *e)
{
	return floe_buf_cstr(&e->text);
}
