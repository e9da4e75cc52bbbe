/*
 * spec.c — partition specs, partition tuples and paths, sort orders.
 */
#include "iceberg/spec.h"

#include <stdio.h>
#include <string.h>

#include "util/hash.h"
#include "util/str.h"

static int transform_from_json(floe_transform *t, floe_arena *a, const floe_json *obj,
			       const char *what, floe_error *err)
{
	const char *s;
	int rc = floe_json_get_str(obj, "transform", &s, what, err);
	if (rc)
		return FLOE_ECORRUPT;
	return floe_transform_parse(t, a, s, err);
}

int floe_spec_from_json(floe_partition_spec **out, floe_arena *a, const floe_json *j,
			int32_t spec_id, floe_error *err)
{
	const floe_json *fields = j;
	floe_partition_spec *s;
	size_t i = 0;
	int rc;
	if (j && j->type == FLOE_JSON_OBJECT) {
		rc = floe_json_get_i32(j, "spec-id", &spec_id, "partition spec", err);
		if (rc && rc != FLOE_ENOTFOUND)
			return rc;
		fields = floe_json_get(j, "fields");
	}
	if (!fields || fields->type != FLOE_JSON_ARRAY)
		return floe_error_corrupt(err, "partition spec %d: 'fields' must be an array",
				      spec_id);
	s = floe_arena_calloc(a, 1, sizeof(*s));
	if (!s)
		return FLOE_ENOMEM;
	s->spec_id = spec_id;
	s->n_fields = fields->len;
	s->fields = floe_arena_calloc(a, fields->len ? fields->len : 1, sizeof(*s->fields));
	if (!s->fields)
		return FLOE_ENOMEM;
	for (const floe_json *f = fields->child; f; f = f->next, i++) {
		floe_partition_field *pf = &s->fields[i];
		const char *name;
		if ((rc = floe_json_get_str(f, "name", &name, "partition field", err)))
			goto bad;
		pf->name = name;
		rc = floe_json_get_i32(f, "source-id", &pf->source_id, "partition field", err);
		if (rc == FLOE_ENOTFOUND) {
			/* v3 multi-argument form */
			const floe_json *ids = floe_json_get(f, "source-ids");
			if (!ids || ids->type != FLOE_JSON_ARRAY || ids->len == 0)
				goto bad;
			int32_t *arr = floe_arena_calloc(a, ids->len, sizeof(int32_t));
			size_t k = 0;
			if (!arr)
				return FLOE_ENOMEM;
			for (const floe_json *c = ids->child; c; c = c->next)
				if (floe_json_as_i32(c, &arr[k++]))
					goto bad;
			pf->source_ids = arr;
			pf->n_source_ids = ids->len;
			pf->source_id = arr[0];
		} else if (rc) {
			goto bad;
		}
		rc = floe_json_get_i32(f, "field-id", &pf->field_id, "partition field", err);
		if (rc == FLOE_ENOTFOUND)
			pf->field_id = FLOE_PARTITION_FIELD_ID_START + (int32_t)i; /* v1 */
		else if (rc)
			goto bad;
		if ((rc = transform_from_json(&pf->transform, a, f, "partition field", err)))
			return floe_error_prefix(err, rc, "partition spec %d: ", spec_id);
	}
	floe_error_clear(err);
	*out = s;
	return FLOE_OK;
bad:
	return floe_error_prefix(err, FLOE_ECORRUPT, "partition spec %d field %zu: ", spec_id, i);
}

static void write_transform(floe_jw *w, const floe_transform *t)
{
	floe_buf b;
	floe_buf_init(&b, 256);
	if (floe_transform_format(&b, t) == 0)
		floe_jw_str(w, floe_buf_cstr(&b));
	else if (!w->rc)
		w->rc = FLOE_ENOMEM;
	floe_buf_reset(&b);
}

void floe_spec_write_fields_json(floe_jw *w, const floe_partition_spec *s)
{
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < s->n_fields; i++) {
		const floe_partition_field *f = &s->fields[i];
		floe_jw_obj_begin(w);
		floe_jw_kv_str(w, "name", f->name);
		floe_jw_key(w, "transform");
		write_transform(w, &f->transform);
		if (f->n_source_ids > 1) {
			floe_jw_key(w, "source-ids");
			floe_jw_arr_begin(w);
			for (size_t k = 0; k < f->n_source_ids; k++)
				floe_jw_i64(w, f->source_ids[k]);
			floe_jw_arr_end(w);
		} else {
			floe_jw_kv_i64(w, "source-id", f->source_id);
		}
		floe_jw_kv_i64(w, "field-id", f->field_id);
		floe_jw_obj_end(w);
	}
	floe_jw_arr_end(w);
}

void floe_spec_write_json(floe_jw *w, const floe_partition_spec *s)
{
	floe_jw_obj_begin(w);
	floe_jw_kv_i64(w, "spec-id", s->spec_id);
	floe_jw_key(w, "fields");
	floe_spec_write_fields_json(w, s);
	floe_jw_obj_end(w);
}

const floe_type *floe_spec_field_type(const floe_partition_spec *s, size_t i,
				      const floe_schema *schema)
{
	const floe_partition_field *f = &s->fields[i];
	const floe_schema_entry *e = floe_schema_find(schema, f->source_id);
	if (!e) {
		if (f->transform.kind == FLOE_TR_BUCKET || f->transform.kind == FLOE_TR_YEAR ||
		    f->transform.kind == FLOE_TR_MONTH || f->transform.kind == FLOE_TR_HOUR)
			return floe_type_primitive(FLOE_T_INT);
		if (f->transform.kind == FLOE_TR_DAY)
			return floe_type_primitive(FLOE_T_DATE);
		return NULL;
	}
	return floe_transform_result_type(&f->transform, e->type);
}

int floe_spec_validate(const floe_partition_spec *s, const floe_schema *schema, floe_error *err)
{
	for (size_t i = 0; i < s->n_fields; i++) {
		const floe_partition_field *f = &s->fields[i];
		const floe_schema_entry *e = floe_schema_find(schema, f->source_id);
		if (!e)
			return floe_error_set(err, FLOE_EINVAL,
					      "partition field '%s': source column %d does not exist",
					      f->name, f->source_id);
		if (f->transform.kind == FLOE_TR_UNKNOWN)
			return floe_error_set(err, FLOE_EUNSUPPORTED,
					      "partition field '%s': unknown transform '%s'", f->name,
					      f->transform.text);
		if (!floe_transform_can_apply(&f->transform, e->type))
			return floe_error_set(err, FLOE_EINVAL,
					      "partition field '%s': the transform cannot apply to "
					      "column '%s'",
					      f->name, e->full_name);
		if (e->in_repeated)
			return floe_error_set(err, FLOE_EINVAL,
					      "partition field '%s': source '%s' is inside a list or map",
					      f->name, e->full_name);
		for (size_t k = 0; k < i; k++)
			if (strcmp(s->fields[k].name, f->name) == 0)
				return floe_error_set(err, FLOE_EINVAL,
						      "partition field name '%s' is used twice",
						      f->name);
	}
	return FLOE_OK;
}

bool floe_spec_is_unpartitioned(const floe_partition_spec *s)
{
	for (size_t i = 0; i < s->n_fields; i++)
		if (s->fields[i].transform.kind != FLOE_TR_VOID)
			return false;
	return true;
}

static bool transform_eq(const floe_transform *a, const floe_transform *b)
{
	if (a->kind != b->kind || a->param != b->param)
		return false;
	return a->kind != FLOE_TR_UNKNOWN || floe_str_eq(a->text, b->text);
}

bool floe_spec_equivalent(const floe_partition_spec *a, const floe_partition_spec *b)
{
	if (a->n_fields != b->n_fields)
		return false;
	for (size_t i = 0; i < a->n_fields; i++) {
		const floe_partition_field *x = &a->fields[i], *y = &b->fields[i];
		if (x->source_id != y->source_id || x->field_id != y->field_id ||
		    strcmp(x->name, y->name) != 0 || !transform_eq(&x->transform, &y->transform))
			return false;
	}
	return true;
}

int32_t floe_spec_max_field_id(const floe_partition_spec *s)
{
	int32_t m = FLOE_PARTITION_FIELD_ID_START - 1;
	for (size_t i = 0; i < s->n_fields; i++)
		if (s->fields[i].field_id > m)
			m = s->fields[i].field_id;
	return m;
}

/* ---- partition expression ------------------------------------------------ */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return p;
}

static const char *ident_end(const char *p)
{
	while (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	       (*p >= '0' && *p <= '9') || *p == '.' || (unsigned char)*p >= 0x80)
		p++;
	return p;
}

/* One term "func(args)" or "col"; fills kind, param and the source column. */
static int parse_term(const char **pp, floe_transform *tr, char *col, size_t colcap,
		      floe_error *err)
{
	const char *p = skip_ws(*pp), *e = ident_end(p);
	char word[64];
	if (e == p)
		return floe_error_set(err, FLOE_EINVAL, "expected a column or transform at '%s'", p);
	snprintf(word, sizeof(word), "%.*s", (int)(e - p), p);
	memset(tr, 0, sizeof(*tr));
	p = skip_ws(e);
	if (*p != '(') {
		tr->kind = FLOE_TR_IDENTITY;
		snprintf(col, colcap, "%s", word);
		*pp = p;
		return FLOE_OK;
	}
	p = skip_ws(p + 1);
	/* arguments: up to two, a number and/or a column */
	char args[2][256];
	int nargs = 0;
	while (*p && *p != ')' && nargs < 2) {
		const char *s = p;
		if (*p == '-' || (*p >= '0' && *p <= '9')) {
			p++;
			while (*p >= '0' && *p <= '9')
				p++;
		} else {
			p = ident_end(p);
		}
		if (p == s)
			return floe_error_set(err, FLOE_EINVAL, "bad argument in '%s(...)'", word);
		snprintf(args[nargs++], sizeof(args[0]), "%.*s", (int)(p - s), s);
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
	}
	if (*p != ')')
		return floe_error_set(err, FLOE_EINVAL, "expected ')' after '%s(...'", word);
	*pp = p + 1;
	const char *colarg = NULL;
	int32_t num = 0;
	bool have_num = false;
	for (int i = 0; i < nargs; i++) {
		if ((args[i][0] >= '0' && args[i][0] <= '9') || args[i][0] == '-') {
			if (!floe_parse_i32(args[i], strlen(args[i]), &num))
				return floe_error_set(err, FLOE_EINVAL, "bad number '%s'", args[i]);
			have_num = true;
		} else {
			colarg = args[i];
		}
	}
	if (!colarg)
		return floe_error_set(err, FLOE_EINVAL, "'%s(...)' needs a column", word);
	if (strlen(colarg) >= colcap)
		return floe_error_set(err, FLOE_EINVAL, "column name too long in '%s(...)'", word);
	memcpy(col, colarg, strlen(colarg) + 1);
	if (floe_str_ieq(word, "bucket") || floe_str_ieq(word, "truncate") ||
	    floe_str_ieq(word, "trunc")) {
		if (!have_num || num <= 0)
			return floe_error_set(err, FLOE_EINVAL, "'%s' needs a positive width", word);
		tr->kind = floe_str_ieq(word, "bucket") ? FLOE_TR_BUCKET : FLOE_TR_TRUNCATE;
		tr->param = num;
		return FLOE_OK;
	}
	if (have_num)
		return floe_error_set(err, FLOE_EINVAL, "'%s' takes no number", word);
	static const struct {
		const char *w;
		floe_transform_kind k;
	} words[] = {{"identity", FLOE_TR_IDENTITY}, {"year", FLOE_TR_YEAR},
		     {"years", FLOE_TR_YEAR},	     {"month", FLOE_TR_MONTH},
		     {"months", FLOE_TR_MONTH},	     {"day", FLOE_TR_DAY},
		     {"days", FLOE_TR_DAY},	     {"date", FLOE_TR_DAY},
		     {"hour", FLOE_TR_HOUR},	     {"hours", FLOE_TR_HOUR},
		     {"void", FLOE_TR_VOID}};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (floe_str_ieq(word, words[i].w)) {
			tr->kind = words[i].k;
			return FLOE_OK;
		}
	return floe_error_set(err, FLOE_EINVAL,
			      "unknown partition transform '%s' (use identity, bucket, truncate, "
			      "year, month, day, hour or void)",
			      word);
}

static const char *default_name(floe_arena *a, const char *col, const floe_transform *t)
{
	switch (t->kind) {
	case FLOE_TR_IDENTITY: return floe_arena_strdup(a, col);
	case FLOE_TR_BUCKET: return floe_arena_sprintf(a, "%s_bucket", col);
	case FLOE_TR_TRUNCATE: return floe_arena_sprintf(a, "%s_trunc", col);
	case FLOE_TR_YEAR: return floe_arena_sprintf(a, "%s_year", col);
	case FLOE_TR_MONTH: return floe_arena_sprintf(a, "%s_month", col);
	case FLOE_TR_DAY: return floe_arena_sprintf(a, "%s_day", col);
	case FLOE_TR_HOUR: return floe_arena_sprintf(a, "%s_hour", col);
	case FLOE_TR_VOID: return floe_arena_sprintf(a, "%s_null", col);
	default: return NULL;
	}
}

int floe_spec_parse_expr(floe_partition_spec **out, floe_arena *a, const char *expr,
			 const floe_schema *schema, int32_t spec_id, int32_t *last_partition_id,
			 floe_error *err)
{
	floe_partition_field tmp[256];
	size_t n = 0;
	const char *p = skip_ws(expr ? expr : "");
	floe_partition_spec *s;
	int rc;
	while (*p) {
		char col[256];
		floe_transform tr;
		if (n == 256)
			return floe_error_set(err, FLOE_EINVAL, "too many partition fields");
		if ((rc = parse_term(&p, &tr, col, sizeof(col), err)))
			return rc;
		const floe_schema_entry *e = floe_schema_find_name(schema, col, false);
		if (!e)
			e = floe_schema_find_name(schema, col, true);
		if (!e)
			return floe_error_set(err, FLOE_EINVAL, "partition column '%s' does not exist",
					      col);
		floe_partition_field *f = &tmp[n++];
		memset(f, 0, sizeof(*f));
		f->source_id = e->id;
		f->transform = tr;
		p = skip_ws(p);
		if ((p[0] == 'a' || p[0] == 'A') && (p[1] == 's' || p[1] == 'S') &&
		    (p[2] == ' ' || p[2] == '\t')) {
			const char *ns = skip_ws(p + 2), *ne = ident_end(ns);
			if (ne == ns)
				return floe_error_set(err, FLOE_EINVAL, "expected a name after AS");
			f->name = floe_arena_strndup(a, ns, (size_t)(ne - ns));
			p = skip_ws(ne);
		} else {
			f->name = default_name(a, e->full_name, &tr);
		}
		if (!f->name)
			return FLOE_ENOMEM;
		f->field_id = ++*last_partition_id;
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p)
			return floe_error_set(err, FLOE_EINVAL, "expected ',' in partition list at '%s'",
					      p);
	}
	s = floe_arena_calloc(a, 1, sizeof(*s));
	if (!s)
		return FLOE_ENOMEM;
	s->spec_id = spec_id;
	s->n_fields = n;
	s->fields = floe_arena_memdup(a, tmp, (n ? n : 1) * sizeof(tmp[0]));
	if (!s->fields)
		return FLOE_ENOMEM;
	if ((rc = floe_spec_validate(s, schema, err)))
		return rc;
	*out = s;
	return FLOE_OK;
}

/* ---- tuples and paths ------------------------------------------------------- */

int floe_partition_path(floe_buf *out, const floe_partition_spec *s, const floe_schema *schema,
			const floe_partition *p)
{
	floe_buf hv;
	int rc = FLOE_OK;
	floe_buf_init(&hv, 0);
	for (size_t i = 0; i < s->n_fields && !rc; i++) {
		const floe_partition_field *f = &s->fields[i];
		const floe_schema_entry *e = floe_schema_find(schema, f->source_id);
		floe_buf_clear(&hv);
		if (i > 0)
			rc = floe_buf_putc(out, '/');
		if (!rc)
			rc = floe_urlencode_form(out, f->name, strlen(f->name));
		if (!rc)
			rc = floe_buf_putc(out, '=');
		if (!rc)
			rc = floe_transform_human(&hv, &f->transform, e ? e->type : NULL,
						  &p->values[i]);
		if (!rc)
			rc = floe_urlencode_form(out, (const char *)hv.data, hv.len);
	}
	floe_buf_reset(&hv);
	return rc;
}

int floe_partition_compute(floe_partition *out, floe_arena *a, const floe_partition_spec *s,
			   const floe_schema *schema, floe_source_lookup_fn fn, void *payload,
			   floe_error *err)
{
	out->n = s->n_fields;
	out->values = floe_arena_calloc(a, s->n_fields ? s->n_fields : 1, sizeof(floe_value));
	if (!out->values)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < s->n_fields; i++) {
		const floe_partition_field *f = &s->fields[i];
		const floe_schema_entry *e = floe_schema_find(schema, f->source_id);
		const floe_value *src;
		floe_value nullv;
		int rc;
		if (!e)
			return floe_error_set(err, FLOE_EINVAL, "partition source %d is not in the schema",
					      f->source_id);
		src = fn(f->source_id, payload);
		if (!src) {
			nullv = floe_value_null(e->type->id);
			src = &nullv;
		}
		if ((rc = floe_transform_apply(&out->values[i], &f->transform, e->type, src, err)))
			return floe_error_prefix(err, rc, "partition field '%s': ", f->name);
	}
	return FLOE_OK;
}

bool floe_partition_equal(const floe_partition *a, const floe_partition *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!floe_value_equal(&a->values[i], &b->values[i]))
			return false;
	return true;
}

uint64_t floe_partition_hash(const floe_partition *p)
{
	uint64_t h = 0x12345;
	for (size_t i = 0; i < p->n; i++)
		h = floe_hash_u64(h ^ floe_value_hash(&p->values[i]));
	return h;
}

/* ---- sort orders ------------------------------------------------------------ */

int floe_sort_order_from_json(floe_sort_order **out, floe_arena *a, const floe_json *j,
			      floe_error *err)
{
	floe_sort_order *o;
	const floe_json *fields;
	size_t i = 0;
	int rc;
	o = floe_arena_calloc(a, 1, sizeof(*o));
	if (!o)
		return FLOE_ENOMEM;
	if ((rc = floe_json_get_i32(j, "order-id", &o->order_id, "sort order", err)))
		return FLOE_ECORRUPT;
	fields = floe_json_get(j, "fields");
	if (!fields || fields->type != FLOE_JSON_ARRAY)
		return floe_error_corrupt(err, "sort order %d: 'fields' must be an array",
				      o->order_id);
	o->n_fields = fields->len;
	o->fields = floe_arena_calloc(a, fields->len ? fields->len : 1, sizeof(*o->fields));
	if (!o->fields)
		return FLOE_ENOMEM;
	for (const floe_json *f = fields->child; f; f = f->next, i++) {
		floe_sort_field *sf = &o->fields[i];
		const char *dir, *nulls;
		if ((rc = transform_from_json(&sf->transform, a, f, "sort field", err)) ||
		    (rc = floe_json_get_i32(f, "source-id", &sf->source_id, "sort field", err)) ||
		    (rc = floe_json_get_str(f, "direction", &dir, "sort field", err)) ||
		    (rc = floe_json_get_str(f, "null-order", &nulls, "sort field", err))) {
			return floe_error_prefix(err, FLOE_ECORRUPT, "sort order %d: ", o->order_id);
		}
		sf->descending = floe_str_ieq(dir, "desc");
		sf->nulls_first = floe_str_ieq(nulls, "nulls-first");
	}
	*out = o;
	return FLOE_OK;
}

void floe_sort_order_write_json(floe_jw *w, const floe_sort_order *o)
{
	floe_jw_obj_begin(w);
	floe_jw_kv_i64(w, "order-id", o->order_id);
	floe_jw_key(w, "fields");
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < o->n_fields; i++) {
		const floe_sort_field *f = &o->fields[i];
		floe_jw_obj_begin(w);
		floe_jw_key(w, "transform");
		write_transform(w, &f->transform);
		floe_jw_kv_i64(w, "source-id", f->source_id);
		floe_jw_kv_str(w, "direction", f->descending ? "desc" : "asc");
		floe_jw_kv_str(w, "null-order", f->nulls_first ? "nulls-first" : "nulls-last");
		floe_jw_obj_end(w);
	}
	floe_jw_arr_end(w);
	floe_jw_obj_end(w);
}

bool floe_sort_order_equivalent(const floe_sort_order *a, const floe_sort_order *b)
{
	if (a->n_fields != b->n_fields)
		return false;
	for (size_t i = 0; i < a->n_fields; i++) {
		const floe_sort_field *x = &a->fields[i], *y = &b->fields[i];
		if (x->source_id != y->source_id || x->descending != y->descending ||
		    x->nulls_first != y->nulls_first || !transform_eq(&x->transform, &y->transform))
			return false;
	}
	return true;
}

static bool word_ieq(const char *w, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	if (n != m)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = w[i] >= 'A' && w[i] <= 'Z' ? (char)(w[i] + 32) : w[i];
		if (c != lit[i])
			return false;
	}
	return true;
}

int floe_sort_order_parse_expr(floe_sort_order **out, floe_arena *a, const char *expr,
			       const floe_schema *schema, int32_t order_id, floe_error *err)
{
	floe_sort_field tmp[128];
	size_t n = 0;
	const char *p = skip_ws(expr ? expr : "");
	floe_sort_order *o;
	int rc;
	while (*p) {
		char col[256];
		floe_sort_field *f;
		if (n == 128)
			return floe_error_set(err, FLOE_EINVAL, "too many sort fields");
		f = &tmp[n++];
		memset(f, 0, sizeof(*f));
		if ((rc = parse_term(&p, &f->transform, col, sizeof(col), err)))
			return rc;
		const floe_schema_entry *e = floe_schema_find_name(schema, col, false);
		if (!e)
			return floe_error_set(err, FLOE_EINVAL, "sort column '%s' does not exist", col);
		f->source_id = e->id;
		f->nulls_first = true; /* Iceberg default for ASC */
		for (;;) {
			p = skip_ws(p);
			const char *w = p, *we = ident_end(p);
			size_t wl = (size_t)(we - w);
			if (word_ieq(w, wl, "asc")) {
				f->descending = false;
			} else if (word_ieq(w, wl, "desc")) {
				f->descending = true;
				f->nulls_first = false;
			} else if (word_ieq(w, wl, "nulls")) {
				const char *x = skip_ws(we), *xe = ident_end(x);
				if (word_ieq(x, (size_t)(xe - x), "first"))
					f->nulls_first = true;
				else if (word_ieq(x, (size_t)(xe - x), "last"))
					f->nulls_first = false;
				else
					return floe_error_set(err, FLOE_EINVAL,
							      "expected FIRST or LAST after NULLS");
				we = xe;
			} else {
				break;
			}
			p = we;
		}
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p)
			return floe_error_set(err, FLOE_EINVAL, "expected ',' in sort order at '%s'", p);
	}
	o = floe_arena_calloc(a, 1, sizeof(*o));
	if (!o)
		return FLOE_ENOMEM;
	o->order_id = order_id;
	o->n_fields = n;
	o->fields = floe_arena_memdup(a, tmp, (n ? n : 1) * sizeof(tmp[0]));
	if (!o->fields)
		return FLOE_ENOMEM;
	*out = o;
	return FLOE_OK;
}

/* ---- copies -------------------------------------------------------------------- */

static bool copy_transform(floe_arena *a, floe_transform *t)
{
	return !t->text || (t->text = floe_arena_strdup(a, t->text)) != NULL;
}

floe_partition_spec *floe_spec_copy(floe_arena *a, const floe_partition_spec *s)
{
	floe_partition_spec *c = floe_arena_memdup(a, s, sizeof(*s));
	if (!c)
		return NULL;
	c->fields = floe_arena_memdup(a, s->fields, (s->n_fields ? s->n_fields : 1) *
							 sizeof(*s->fields));
	if (!c->fields)
		return NULL;
	for (size_t i = 0; i < s->n_fields; i++) {
		floe_partition_field *f = &c->fields[i];
		if (!(f->name = floe_arena_strdup(a, f->name)) || !copy_transform(a, &f->transform))
			return NULL;
		if (f->source_ids && !(f->source_ids = floe_arena_memdup(
					       a, f->source_ids, f->n_source_ids * sizeof(int32_t))))
			return NULL;
	}
	return c;
}

floe_sort_order *floe_sort_order_copy(floe_arena *a, const floe_sort_order *o)
{
	floe_sort_order *c = floe_arena_memdup(a, o, sizeof(*o));
	if (!c)
		return NULL;
	c->fields = floe_arena_memdup(a, o->fields, (o->n_fields ? o->n_fields : 1) *
							 sizeof(*o->fields));
	if (!c->fields)
		return NULL;
	for (size_t i = 0; i < o->n_fields; i++)
		if (!copy_transform(a, &c->fields[i].transform))
			return NULL;
	return c;
}
