/*
 * value_json.c — generic Avro values as JSON text (floe avro cat, tests).
 */
#include <math.h>
#include <string.h>

#include "avro/avro_datum.h"

static void put_latin1(floe_jw *w, const uint8_t *p, size_t n)
{
	floe_buf tmp;
	floe_buf_init(&tmp, 0);
	for (size_t i = 0; i < n && !w->rc; i++) {
		uint8_t c = p[i];
		int rc = c < 0x80 ? floe_buf_putc(&tmp, (char)c)
				  : floe_buf_putc(&tmp, (char)(0xc0 | c >> 6)) ||
					    floe_buf_putc(&tmp, (char)(0x80 | (c & 0x3f)));
		if (rc)
			w->rc = rc;
	}
	floe_jw_strn(w, floe_buf_cstr(&tmp), tmp.len);
	floe_buf_reset(&tmp);
}

static void put_double(floe_jw *w, double d)
{
	if (isnan(d))
		floe_jw_str(w, "NaN");
	else if (isinf(d))
		floe_jw_str(w, d > 0 ? "Infinity" : "-Infinity");
	else
		floe_jw_double(w, d);
}

static void write_rec(floe_jw *w, const floe_avro_schema *s, const floe_avro_value *v, int depth)
{
	if (w->rc)
		return;
	if (!s || !v || depth > 200) {
		w->rc = FLOE_EINVAL;
		return;
	}
	if (s->type == FLOE_AVRO_UNION) {
		const floe_avro_schema *b = NULL;
		if (v->branch >= 0 && (size_t)v->branch < s->n_branches)
			b = s->branches[v->branch];
		for (size_t i = 0; !b && i < s->n_branches; i++)
			if (s->branches[i]->type == v->type)
				b = s->branches[i];
		write_rec(w, b, v, depth + 1);
		return;
	}
	if (s->type != v->type) {
		w->rc = FLOE_EINVAL;
		return;
	}
	switch (v->type) {
	case FLOE_AVRO_NULL: floe_jw_null(w); return;
	case FLOE_AVRO_BOOLEAN: floe_jw_bool(w, v->u.b); return;
	case FLOE_AVRO_INT: floe_jw_i64(w, v->u.i); return;
	case FLOE_AVRO_LONG: floe_jw_i64(w, v->u.l); return;
	case FLOE_AVRO_FLOAT: put_double(w, v->u.f); return;
	case FLOE_AVRO_DOUBLE: put_double(w, v->u.d); return;
	case FLOE_AVRO_STRING: floe_jw_strn(w, (const char *)v->u.bytes.p, v->u.bytes.len); return;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_FIXED: put_latin1(w, v->u.bytes.p, v->u.bytes.len); return;
	case FLOE_AVRO_ENUM:
		if (v->u.i < 0 || (size_t)v->u.i >= s->n_symbols) {
			w->rc = FLOE_EINVAL;
			return;
		}
		floe_jw_str(w, s->symbols[v->u.i]);
		return;
	case FLOE_AVRO_ARRAY:
		floe_jw_arr_begin(w);
		for (size_t i = 0; i < v->u.list.n; i++)
			write_rec(w, s->items, &v->u.list.items[i], depth + 1);
		floe_jw_arr_end(w);
		return;
	case FLOE_AVRO_MAP:
		floe_jw_obj_begin(w);
		for (size_t i = 0; i < v->u.map.n; i++) {
			const floe_avro_map_entry *e = &v->u.map.entries[i];
			char *k = floe_strndup((const char *)e->key, e->key_len);
			if (!k) {
				w->rc = FLOE_ENOMEM;
				return;
			}
			floe_jw_key(w, k);
			floe_free(k);
			write_rec(w, s->items, &e->value, depth + 1);
		}
		floe_jw_obj_end(w);
		return;
	case FLOE_AVRO_RECORD:
		if (v->u.list.n != s->n_fields) {
			w->rc = FLOE_EINVAL;
			return;
		}
		floe_jw_obj_begin(w);
		for (size_t i = 0; i < s->n_fields; i++) {
			floe_jw_key(w, s->fields[i].name);
			write_rec(w, s->fields[i].type, &v->u.list.items[i], depth + 1);
		}
		floe_jw_obj_end(w);
		return;
	case FLOE_AVRO_UNION: w->rc = FLOE_EINVAL; return;
	}
}

void floe_avro_value_write_json(floe_jw *w, const floe_avro_schema *s, const floe_avro_value *v)
{
	write_rec(w, s, v, 0);
}
