/*
 * json_batch.c — Arrow batches from JSON rows (json_batch.h).
 */
#include "json_batch.h"

#include <math.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "iceberg/arrow_schema.h"
#include "iceberg/value.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/str.h"

typedef struct jcol jcol;
struct jcol {
	const floe_type *t;
	const char *name;
	floe_buf valid; /* one byte per slot */
	floe_buf data;  /* fixed-width values, or bytes of strings */
	floe_buf offs;  /* int32 offsets: strings, lists, maps */
	int64_t len, nulls;
	jcol *kids; /* struct fields; list element; map key, value */
	size_t n_kids;
};

struct json_batch {
	const floe_schema *schema;
	jcol root;
	floe_arena tmp;
};

static int col_init(jcol *c, const floe_type *t, const char *name)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->name = name;
	floe_buf_init(&c->valid, 0);
	floe_buf_init(&c->data, 0);
	floe_buf_init(&c->offs, 0);
	switch (t->id) {
	case FLOE_T_STRUCT:
		c->n_kids = t->n_fields;
		c->kids = floe_calloc(t->n_fields + 1, sizeof(jcol));
		if (!c->kids)
			return FLOE_ENOMEM;
		for (size_t i = 0; i < t->n_fields; i++)
			if (col_init(&c->kids[i], t->fields[i].type, t->fields[i].name))
				return FLOE_ENOMEM;
		break;
	case FLOE_T_LIST:
		c->n_kids = 1;
		c->kids = floe_calloc(1, sizeof(jcol));
		if (!c->kids || col_init(&c->kids[0], t->element, "element"))
			return FLOE_ENOMEM;
		break;
	case FLOE_T_MAP:
		c->n_kids = 2;
		c->kids = floe_calloc(2, sizeof(jcol));
		if (!c->kids || col_init(&c->kids[0], t->key, "key") ||
		    col_init(&c->kids[1], t->value, "value"))
			return FLOE_ENOMEM;
		break;
	default: break;
	}
	return FLOE_OK;
}

static void col_reset(jcol *c)
{
	for (size_t i = 0; i < c->n_kids; i++)
		col_reset(&c->kids[i]);
	floe_free(c->kids);
	floe_buf_reset(&c->valid);
	floe_buf_reset(&c->data);
	floe_buf_reset(&c->offs);
}

static int width_of(const floe_type *t)
{
	switch (t->id) {
	case FLOE_T_BOOLEAN: return 1;
	case FLOE_T_INT:
	case FLOE_T_DATE:
	case FLOE_T_FLOAT: return 4;
	case FLOE_T_LONG:
	case FLOE_T_DOUBLE:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: return 8;
	case FLOE_T_DECIMAL: return 16;
	case FLOE_T_UUID: return 16;
	case FLOE_T_FIXED: return t->length;
	default: return 0;
	}
}

static bool var_width(const floe_type *t)
{
	return t->id == FLOE_T_STRING || t->id == FLOE_T_BINARY || t->id == FLOE_T_LIST ||
	       t->id == FLOE_T_MAP;
}

static int put_offset(jcol *c)
{
	int32_t at;
	if (c->t->id == FLOE_T_LIST)
		at = (int32_t)c->kids[0].len;
	else if (c->t->id == FLOE_T_MAP)
		at = (int32_t)c->kids[0].len;
	else
		at = (int32_t)c->data.len;
	if (c->offs.len == 0 && floe_buf_put_u32le(&c->offs, 0))
		return FLOE_ENOMEM;
	return floe_buf_put_u32le(&c->offs, (uint32_t)at);
}

static int col_append(jcol *c, const floe_json *j, floe_arena *tmp, floe_error *err);

static int append_null(jcol *c, floe_arena *tmp, floe_error *err)
{
	int w = width_of(c->t);
	if (floe_buf_putc(&c->valid, 0))
		return FLOE_ENOMEM;
	c->len++;
	c->nulls++;
	if (w && !floe_buf_extend(&c->data, (size_t)w))
		return FLOE_ENOMEM;
	if (var_width(c->t))
		return put_offset(c);
	if (c->t->id == FLOE_T_STRUCT)
		for (size_t i = 0; i < c->n_kids; i++) {
			int rc = append_null(&c->kids[i], tmp, err);
			if (rc)
				return rc;
		}
	return FLOE_OK;
}

static int bad(floe_error *err, const jcol *c, const char *what)
{
	return floe_error_set(err, FLOE_EINVAL, "field '%s': %s", c->name, what);
}

static int append_map(jcol *c, const floe_json *j, floe_arena *tmp, floe_error *err)
{
	const floe_json *keys = floe_json_get(j, "keys"), *vals = floe_json_get(j, "values");
	int rc;
	if (j->type != FLOE_JSON_OBJECT)
		return bad(err, c, "expected an object");
	if (keys && vals && keys->type == FLOE_JSON_ARRAY && vals->type == FLOE_JSON_ARRAY &&
	    j->len == 2) {
		if (keys->len != vals->len)
			return bad(err, c, "keys and values differ in length");
		for (const floe_json *k = keys->child, *v = vals->child; k; k = k->next, v = v->next)
			if ((rc = col_append(&c->kids[0], k, tmp, err)) ||
			    (rc = col_append(&c->kids[1], v, tmp, err)))
				return rc;
	} else {
		for (const floe_json *m = j->child; m; m = m->next) {
			floe_json k;
			memset(&k, 0, sizeof(k));
			k.type = FLOE_JSON_STRING;
			k.s = m->key;
			k.len = m->key_len;
			if (c->t->key->id != FLOE_T_STRING) {
				/* a number key written as a member name */
				k.type = FLOE_JSON_NUMBER;
				k.is_int = floe_parse_i64(m->key, m->key_len, &k.i);
				k.d = (double)k.i;
			}
			if ((rc = col_append(&c->kids[0], &k, tmp, err)) ||
			    (rc = col_append(&c->kids[1], m, tmp, err)))
				return rc;
		}
	}
	if (floe_buf_putc(&c->valid, 1))
		return FLOE_ENOMEM;
	c->len++;
	return put_offset(c);
}

static int col_append(jcol *c, const floe_json *j, floe_arena *tmp, floe_error *err)
{
	floe_value v;
	int rc;
	if (floe_json_is_null(j) || c->t->id == FLOE_T_UNKNOWN)
		return append_null(c, tmp, err);
	switch (c->t->id) {
	case FLOE_T_STRUCT:
		if (j->type != FLOE_JSON_OBJECT)
			return bad(err, c, "expected an object");
		for (size_t i = 0; i < c->n_kids; i++)
			if ((rc = col_append(&c->kids[i], floe_json_get(j, c->kids[i].name), tmp, err)))
				return rc;
		break;
	case FLOE_T_LIST:
		if (j->type != FLOE_JSON_ARRAY)
			return bad(err, c, "expected an array");
		for (const floe_json *e = j->child; e; e = e->next)
			if ((rc = col_append(&c->kids[0], e, tmp, err)))
				return rc;
		if (floe_buf_putc(&c->valid, 1))
			return FLOE_ENOMEM;
		c->len++;
		return put_offset(c);
	case FLOE_T_MAP: return append_map(c, j, tmp, err);
	case FLOE_T_FLOAT:
	case FLOE_T_DOUBLE:
		if (j->type == FLOE_JSON_STRING) {
			double d = strcmp(j->s, "NaN") == 0	       ? NAN
				   : strcmp(j->s, "Infinity") == 0  ? INFINITY
				   : strcmp(j->s, "-Infinity") == 0 ? -INFINITY
								    : 0.0;
			if (d == 0.0)
				return bad(err, c, "expected a number");
			v.type = c->t->id;
			if (c->t->id == FLOE_T_FLOAT)
				v.v.f32 = (float)d;
			else
				v.v.f64 = d;
			break;
		}
		FLOE_FALLTHROUGH;
	default:
		if ((rc = floe_value_from_json(&v, tmp, c->t, j, err)))
			return floe_error_prefix(err, rc, "field '%s': ", c->name);
		break;
	}
	if (floe_buf_putc(&c->valid, 1))
		return FLOE_ENOMEM;
	c->len++;
	switch (c->t->id) {
	case FLOE_T_STRUCT: return FLOE_OK;
	case FLOE_T_BOOLEAN: return floe_buf_putc(&c->data, v.v.b ? 1 : 0);
	case FLOE_T_INT:
	case FLOE_T_DATE: return floe_buf_put_u32le(&c->data, (uint32_t)v.v.i32);
	case FLOE_T_FLOAT: return floe_buf_append(&c->data, &v.v.f32, 4);
	case FLOE_T_DOUBLE: return floe_buf_append(&c->data, &v.v.f64, 8);
	case FLOE_T_DECIMAL: return floe_buf_append(&c->data, &v.v.dec, 16);
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
		if (floe_buf_append(&c->data, v.v.bin.p, v.v.bin.n))
			return FLOE_ENOMEM;
		return put_offset(c);
	case FLOE_T_UUID:
	case FLOE_T_FIXED:
		if ((int)v.v.bin.n != width_of(c->t))
			return bad(err, c, "wrong length");
		return floe_buf_append(&c->data, v.v.bin.p, v.v.bin.n);
	default: return floe_buf_put_u64le(&c->data, (uint64_t)v.v.i64);
	}
}

static uint8_t *bits_of(const floe_buf *bytes, int64_t n)
{
	uint8_t *b = floe_calloc(1, (size_t)(n + 7) / 8 + 1);
	if (!b)
		return NULL;
	for (int64_t i = 0; i < n; i++)
		if (bytes->data[i])
			b[i >> 3] |= (uint8_t)(1u << (i & 7));
	return b;
}

static void *take(floe_buf *b)
{
	void *p = floe_buf_detach(b, NULL);
	floe_buf_init(b, 0);
	return p;
}

static int col_finish(jcol *c, struct ArrowArray *a)
{
	int nb, rc;
	int64_t nk = (int64_t)c->n_kids;
	switch (c->t->id) {
	case FLOE_T_UNKNOWN: nb = 0; break;
	case FLOE_T_STRUCT: nb = 1; break;
	case FLOE_T_STRING:
	case FLOE_T_BINARY: nb = 3; break;
	default: nb = 2; break;
	}
	if (c->t->id == FLOE_T_MAP)
		nk = 1;
	if ((rc = floe_arrow_array_init(a, nb, nk)))
		return rc;
	a->length = c->len;
	a->null_count = c->nulls;
	if (nb > 0 && c->nulls) {
		uint8_t *bits = bits_of(&c->valid, c->len);
		if (!bits)
			return FLOE_ENOMEM;
		floe_arrow_array_set_buffer(a, 0, bits);
	}
	switch (c->t->id) {
	case FLOE_T_UNKNOWN: break;
	case FLOE_T_STRUCT:
		for (size_t i = 0; i < c->n_kids; i++)
			if ((rc = col_finish(&c->kids[i], a->children[i])))
				return rc;
		break;
	case FLOE_T_BOOLEAN: {
		uint8_t *bits = bits_of(&c->data, c->len);
		if (!bits)
			return FLOE_ENOMEM;
		floe_arrow_array_set_buffer(a, 1, bits);
		break;
	}
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
		if (c->offs.len == 0 && floe_buf_put_u32le(&c->offs, 0))
			return FLOE_ENOMEM;
		floe_arrow_array_set_buffer(a, 1, take(&c->offs));
		floe_arrow_array_set_buffer(a, 2, take(&c->data));
		break;
	case FLOE_T_LIST:
		if (c->offs.len == 0 && floe_buf_put_u32le(&c->offs, 0))
			return FLOE_ENOMEM;
		floe_arrow_array_set_buffer(a, 1, take(&c->offs));
		if ((rc = col_finish(&c->kids[0], a->children[0])))
			return rc;
		break;
	case FLOE_T_MAP: {
		struct ArrowArray *e = a->children[0];
		if (c->offs.len == 0 && floe_buf_put_u32le(&c->offs, 0))
			return FLOE_ENOMEM;
		floe_arrow_array_set_buffer(a, 1, take(&c->offs));
		if ((rc = floe_arrow_array_init(e, 1, 2)))
			return rc;
		e->length = c->kids[0].len;
		if ((rc = col_finish(&c->kids[0], e->children[0])) ||
		    (rc = col_finish(&c->kids[1], e->children[1])))
			return rc;
		break;
	}
	default:
		if (!c->data.data && !floe_buf_extend(&c->data, 1))
			return FLOE_ENOMEM;
		floe_arrow_array_set_buffer(a, 1, take(&c->data));
		break;
	}
	/* start over */
	floe_buf_clear(&c->valid);
	floe_buf_reset(&c->data);
	floe_buf_reset(&c->offs);
	c->len = c->nulls = 0;
	return FLOE_OK;
}

int json_batch_new(json_batch **out, const floe_schema *s, floe_error *err)
{
	json_batch *b = floe_calloc(1, sizeof(*b));
	if (!b)
		return floe_error_set(err, FLOE_ENOMEM, "out of memory");
	b->schema = s;
	floe_arena_init(&b->tmp, 0);
	if (col_init(&b->root, s->root, "$")) {
		json_batch_free(b);
		return floe_error_set(err, FLOE_ENOMEM, "out of memory");
	}
	*out = b;
	return FLOE_OK;
}

void json_batch_free(json_batch *b)
{
	if (!b)
		return;
	col_reset(&b->root);
	floe_arena_reset(&b->tmp);
	floe_free(b);
}

int json_batch_append(json_batch *b, const floe_json *row, floe_error *err)
{
	if (!row || row->type != FLOE_JSON_OBJECT)
		return floe_error_set(err, FLOE_EINVAL, "a row must be a JSON object");
	return col_append(&b->root, row, &b->tmp, err);
}

int json_batch_append_text(json_batch *b, const char *text, size_t n, floe_error *err)
{
	floe_json *j;
	int rc = floe_json_parse(&j, &b->tmp, text, n, NULL, err);
	return rc ? rc : json_batch_append(b, j, err);
}

int64_t json_batch_rows(const json_batch *b)
{
	return b->root.len;
}

int json_batch_finish(json_batch *b, struct ArrowArray *out, struct ArrowSchema *schema,
		      floe_error *err)
{
	int rc;
	/* the batch itself has no nulls */
	b->root.nulls = 0;
	if ((rc = col_finish(&b->root, out))) {
		floe_arrow_array_release(out);
		return floe_error_set(err, rc, "out of memory");
	}
	floe_arena_reset(&b->tmp);
	if (schema && (rc = floe_iceberg_arrow_schema(schema, b->schema, err))) {
		floe_arrow_array_release(out);
		return rc;
	}
	return FLOE_OK;
}
