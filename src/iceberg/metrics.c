/*
 * metrics.c — metrics modes, bound truncation and name mappings.
 */
#include "iceberg/metrics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/cursor.h"
#include "util/str.h"
#include "util/timeutil.h"

int floe_metrics_mode_parse(floe_metrics_mode *out, const char *s, floe_error *err)
{
	int32_t n;
	if (floe_str_ieq(s, "none")) {
		*out = (floe_metrics_mode){FLOE_METRICS_NONE, 0};
	} else if (floe_str_ieq(s, "counts")) {
		*out = (floe_metrics_mode){FLOE_METRICS_COUNTS, 0};
	} else if (floe_str_ieq(s, "full")) {
		*out = (floe_metrics_mode){FLOE_METRICS_FULL, 0};
	} else if (strncmp(s, "truncate(", 9) == 0 && floe_str_endswith(s, ")") &&
		   floe_parse_i32(s + 9, strlen(s) - 10, &n) && n > 0) {
		*out = (floe_metrics_mode){FLOE_METRICS_TRUNCATE, n};
	} else {
		return floe_error_set(err, FLOE_EINVAL,
				      "bad metrics mode '%s' (none, counts, truncate(N) or full)", s);
	}
	return FLOE_OK;
}

floe_metrics_mode floe_metrics_mode_for(const floe_metadata *m, const floe_schema *schema,
				       int32_t field_id)
{
	floe_metrics_mode mode = {FLOE_METRICS_TRUNCATE, 16};
	const floe_schema_entry *e = floe_schema_find(schema, field_id);
	const char *dflt = floe_metadata_property(m, "write.metadata.metrics.default");
	char key[512];
	if (dflt) {
		if (floe_metrics_mode_parse(&mode, dflt, NULL))
			mode = (floe_metrics_mode){FLOE_METRICS_TRUNCATE, 16};
	} else {
		/* Java: with more columns than the limit and no explicit default,
		 * only the first ones get metrics */
		int64_t limit = floe_metadata_property_i64(
			m, "write.metadata.metrics.max-inferred-column-defaults", 100);
		if ((int64_t)schema->n_index > limit) {
			size_t pos = e ? (size_t)(e - schema->index) : schema->n_index;
			if ((int64_t)pos >= limit)
				mode = (floe_metrics_mode){FLOE_METRICS_NONE, 0};
		}
	}
	if (e) {
		snprintf(key, sizeof(key), "write.metadata.metrics.column.%s", e->full_name);
		const char *col = floe_metadata_property(m, key);
		floe_metrics_mode cm;
		if (col && floe_metrics_mode_parse(&cm, col, NULL) == 0)
			return cm;
	}
	/* columns of the sort order get at least truncate(16) */
	const floe_sort_order *o = floe_metadata_sort_order(m, m->default_sort_order_id);
	if (o && (mode.kind == FLOE_METRICS_NONE || mode.kind == FLOE_METRICS_COUNTS))
		for (size_t i = 0; i < o->n_fields; i++)
			if (o->fields[i].source_id == field_id)
				return (floe_metrics_mode){FLOE_METRICS_TRUNCATE, 16};
	return mode;
}

/* ---- Parquet statistics as Iceberg values; manifest bounds ------------------------ */

static int64_t scale_time(int64_t v, int from_unit, floe_type_id to)
{
	bool to_ns = to == FLOE_T_TIMESTAMP_NS || to == FLOE_T_TIMESTAMPTZ_NS;
	int64_t from_per_s = from_unit == FLOE_PARQUET_MILLIS ? 1000
			     : from_unit == FLOE_PARQUET_NANOS ? 1000000000
							       : 1000000;
	int64_t to_per_s = to_ns ? 1000000000 : 1000000;
	if (from_per_s == to_per_s)
		return v;
	if (from_per_s < to_per_s)
		return v * (to_per_s / from_per_s);
	return floe_floordiv(v, from_per_s / to_per_s);
}

bool floe_parquet_stat_value(floe_value *out, const floe_parquet_node *leaf, const floe_type *t,
			     const uint8_t *p, size_t n)
{
	memset(out, 0, sizeof(*out));
	out->type = t->id;
	switch (leaf->physical) {
	case FLOE_PARQUET_BOOLEAN:
		if (n != 1 || t->id != FLOE_T_BOOLEAN)
			return false;
		out->v.b = p[0] != 0;
		return true;
	case FLOE_PARQUET_INT32: {
		if (n != 4)
			return false;
		int32_t x = (int32_t)floe_load_u32le(p);
		if (leaf->logical.kind == FLOE_PARQUET_LT_INTEGER && !leaf->logical.is_signed)
			return false;
		switch (t->id) {
		case FLOE_T_INT:
		case FLOE_T_DATE: out->v.i32 = x; return true;
		case FLOE_T_LONG: out->v.i64 = x; return true;
		case FLOE_T_DECIMAL: out->v.dec = x; return true;
		default: return false;
		}
	}
	case FLOE_PARQUET_INT64: {
		if (n != 8)
			return false;
		int64_t x = (int64_t)floe_load_u64le(p);
		if (leaf->logical.kind == FLOE_PARQUET_LT_INTEGER && !leaf->logical.is_signed)
			return false;
		switch (t->id) {
		case FLOE_T_LONG: out->v.i64 = x; return true;
		case FLOE_T_DECIMAL: out->v.dec = x; return true;
		case FLOE_T_TIME:
		case FLOE_T_TIMESTAMP:
		case FLOE_T_TIMESTAMPTZ:
		case FLOE_T_TIMESTAMP_NS:
		case FLOE_T_TIMESTAMPTZ_NS: {
			int unit = leaf->logical.kind == FLOE_PARQUET_LT_TIMESTAMP ||
					   leaf->logical.kind == FLOE_PARQUET_LT_TIME
				   ? leaf->logical.unit
				   : FLOE_PARQUET_MICROS;
			out->v.i64 = scale_time(x, unit, t->id);
			return true;
		}
		default: return false;
		}
	}
	case FLOE_PARQUET_FLOAT: {
		if (n != 4)
			return false;
		uint32_t b = floe_load_u32le(p);
		float f;
		memcpy(&f, &b, 4);
		if (isnan(f))
			return false;
		if (t->id == FLOE_T_FLOAT)
			out->v.f32 = f;
		else if (t->id == FLOE_T_DOUBLE)
			out->v.f64 = f;
		else
			return false;
		return true;
	}
	case FLOE_PARQUET_DOUBLE: {
		if (n != 8 || t->id != FLOE_T_DOUBLE)
			return false;
		uint64_t b = floe_load_u64le(p);
		memcpy(&out->v.f64, &b, 8);
		return !isnan(out->v.f64);
	}
	case FLOE_PARQUET_BYTE_ARRAY:
	case FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY:
		if (t->id == FLOE_T_DECIMAL) {
			if (n == 0 || n > 16)
				return false;
			out->v.dec = floe_i128_from_be(p, n);
			return true;
		}
		if (t->id == FLOE_T_UUID && n != 16)
			return false;
		if (t->id != FLOE_T_STRING && t->id != FLOE_T_BINARY && t->id != FLOE_T_FIXED &&
		    t->id != FLOE_T_UUID)
			return false;
		out->v.bin.p = p;
		out->v.bin.n = n;
		return true;
	default: return false; /* INT96: no bounds */
	}
}


int floe_metrics_bound(floe_id_bytes *dst, floe_arena *a, int32_t id, const floe_value *v,
		       floe_metrics_mode mode, bool upper, bool *written)
{
	floe_buf b;
	uint8_t *p;
	*written = false;
	if (mode.kind == FLOE_METRICS_NONE || mode.kind == FLOE_METRICS_COUNTS || v->is_null)
		return FLOE_OK;
	if ((v->type == FLOE_T_STRING || v->type == FLOE_T_BINARY) &&
	    mode.kind == FLOE_METRICS_TRUNCATE) {
		size_t len;
		if (upper) {
			size_t cap = (size_t)mode.length * 4 + 8;
			p = floe_arena_alloc(a, cap);
			if (!p)
				return FLOE_ENOMEM;
			if (!floe_truncate_upper(v, mode.length, p, cap, &len))
				return FLOE_OK; /* no upper bound possible */
		} else {
			len = floe_truncate_lower(v, mode.length);
			p = floe_arena_memdup(a, len ? v->v.bin.p : (const uint8_t *)"", len ? len : 1);
			if (!p)
				return FLOE_ENOMEM;
		}
		*dst = (floe_id_bytes){id, p, len};
		*written = true;
		return FLOE_OK;
	}
	floe_buf_init(&b, 0);
	if (floe_value_to_bytes(&b, v)) {
		floe_buf_reset(&b);
		return FLOE_OK; /* no single-value form: no bound */
	}
	p = floe_arena_memdup(a, b.len ? b.data : (const uint8_t *)"", b.len ? b.len : 1);
	*dst = (floe_id_bytes){id, p, b.len};
	floe_buf_reset(&b);
	if (!p)
		return FLOE_ENOMEM;
	*written = true;
	return FLOE_OK;
}

int floe_metrics_bounds(floe_id_bytes *lower, size_t *n_lower, floe_id_bytes *upper,
			size_t *n_upper, floe_arena *a, int32_t id, const floe_value *lo,
			const floe_value *hi, floe_metrics_mode mode)
{
	floe_value l, h;
	uint8_t ub[2][16];
	bool w;
	int rc;
	if (lo)
		l = *lo;
	if (hi)
		h = *hi;
	if ((lo && lo->type == FLOE_T_UUID) || (hi && hi->type == FLOE_T_UUID)) {
		/* notes 5.1 / apache/iceberg#14216: Java orders UUIDs as signed longs */
		bool has_l, has_h;
		if (!lo || !hi || lo->is_null || hi->is_null || lo->v.bin.n != 16 || hi->v.bin.n != 16)
			return FLOE_OK;
		floe_uuid_bounds_both_orders(lo->v.bin.p, hi->v.bin.p, ub[0], ub[1], &has_l, &has_h);
		l.v.bin.p = ub[0];
		h.v.bin.p = ub[1];
		lo = has_l ? &l : NULL;
		hi = has_h ? &h : NULL;
	}
	/* a zero bound covers both zeros */
	if (lo && !lo->is_null) {
		if (l.type == FLOE_T_FLOAT && l.v.f32 == 0.0f)
			l.v.f32 = -0.0f;
		else if (l.type == FLOE_T_DOUBLE && l.v.f64 == 0.0)
			l.v.f64 = -0.0;
	}
	if (hi && !hi->is_null) {
		if (h.type == FLOE_T_FLOAT && h.v.f32 == 0.0f)
			h.v.f32 = 0.0f;
		else if (h.type == FLOE_T_DOUBLE && h.v.f64 == 0.0)
			h.v.f64 = 0.0;
	}
	if (lo) {
		if ((rc = floe_metrics_bound(&lower[*n_lower], a, id, &l, mode, false, &w)))
			return rc;
		*n_lower += w;
	}
	if (hi) {
		if ((rc = floe_metrics_bound(&upper[*n_upper], a, id, &h, mode, true, &w)))
			return rc;
		*n_upper += w;
	}
	return FLOE_OK;
}

/* bytes of the first n code points */
static size_t cp_prefix(const uint8_t *s, size_t len, int32_t n, int32_t *count)
{
	size_t i = 0;
	int32_t c = 0;
	while (i < len && c < n) {
		uint8_t b = s[i];
		size_t k = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
		if (i + k > len)
			break;
		i += k;
		c++;
	}
	if (count)
		*count = c;
	return i;
}

size_t floe_truncate_lower(const floe_value *v, int32_t n)
{
	if (v->type == FLOE_T_STRING)
		return cp_prefix(v->v.bin.p, v->v.bin.n, n, NULL);
	return v->v.bin.n < (size_t)n ? v->v.bin.n : (size_t)n;
}

static size_t put_cp(uint8_t *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (uint8_t)(0xc0 | (cp >> 6));
		o[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (uint8_t)(0xe0 | (cp >> 12));
		o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (uint8_t)(0xf0 | (cp >> 18));
	o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

bool floe_truncate_upper(const floe_value *v, int32_t n, uint8_t *out, size_t cap, size_t *len)
{
	if (v->type != FLOE_T_STRING) {
		size_t m = v->v.bin.n < (size_t)n ? v->v.bin.n : (size_t)n;
		if (m > cap)
			return false;
		memcpy(out, v->v.bin.p, m);
		if (m == v->v.bin.n) {
			*len = m;
			return true;
		}
		/* increment the last byte, carrying left past 0xff */
		while (m > 0) {
			if (out[m - 1] != 0xff) {
				out[m - 1]++;
				*len = m;
				return true;
			}
			m--;
		}
		return false;
	}
	/* strings: code points */
	uint32_t cps[256];
	int32_t count;
	size_t pre = cp_prefix(v->v.bin.p, v->v.bin.n, n, &count);
	if (pre == v->v.bin.n) {
		if (pre > cap)
			return false;
		memcpy(out, v->v.bin.p, pre);
		*len = pre;
		return true;
	}
	if (count > 256)
		return false;
	/* decode the prefix */
	size_t i = 0;
	for (int32_t k = 0; k < count; k++) {
		uint8_t b = v->v.bin.p[i];
		uint32_t cp;
		size_t l;
		if (b < 0x80) {
			cp = b;
			l = 1;
		} else if (b < 0xe0) {
			cp = (uint32_t)(b & 0x1f) << 6 | (v->v.bin.p[i + 1] & 0x3f);
			l = 2;
		} else if (b < 0xf0) {
			cp = (uint32_t)(b & 0x0f) << 12 | (uint32_t)(v->v.bin.p[i + 1] & 0x3f) << 6 |
			     (v->v.bin.p[i + 2] & 0x3f);
			l = 3;
		} else {
			cp = (uint32_t)(b & 0x07) << 18 | (uint32_t)(v->v.bin.p[i + 1] & 0x3f) << 12 |
			     (uint32_t)(v->v.bin.p[i + 2] & 0x3f) << 6 | (v->v.bin.p[i + 3] & 0x3f);
			l = 4;
		}
		cps[k] = cp;
		i += l;
	}
	/* increment the last code point, skipping surrogates; drop on overflow */
	int32_t last = count - 1;
	while (last >= 0) {
		uint32_t c = cps[last] + 1;
		if (c == 0xd800)
			c = 0xe000;
		if (c <= 0x10ffff) {
			cps[last] = c;
			break;
		}
		last--;
	}
	if (last < 0)
		return false;
	size_t o = 0;
	for (int32_t k = 0; k <= last; k++) {
		if (o + 4 > cap)
			return false;
		o += put_cp(out + o, cps[k]);
	}
	*len = o;
	return true;
}

/* ---- name mapping ---------------------------------------------------------------- */

static int parse_mappings(floe_name_mapping **out, size_t *n, floe_arena *a, const floe_json *arr,
			  int depth, floe_error *err)
{
	size_t i = 0;
	if (depth > 64)
		return floe_error_corrupt(err, "name mapping nested too deeply");
	if (!arr || arr->type != FLOE_JSON_ARRAY)
		return floe_error_corrupt(err, "a name mapping must be a JSON array");
	*out = floe_arena_calloc(a, arr->len ? arr->len : 1, sizeof(floe_name_mapping));
	if (!*out)
		return FLOE_ENOMEM;
	for (const floe_json *c = arr->child; c; c = c->next, i++) {
		floe_name_mapping *nm = &(*out)[i];
		const floe_json *id = floe_json_get(c, "field-id");
		const floe_json *names = floe_json_get(c, "names");
		nm->field_id = -1;
		if (id && floe_json_as_i32(id, &nm->field_id))
			return floe_error_corrupt(err, "name mapping: bad field-id");
		if (names && names->type == FLOE_JSON_ARRAY) {
			nm->names = floe_arena_calloc(a, names->len ? names->len : 1, sizeof(char *));
			if (!nm->names)
				return FLOE_ENOMEM;
			for (const floe_json *s = names->child; s; s = s->next)
				if (s->type == FLOE_JSON_STRING)
					nm->names[nm->n_names++] = s->s;
		}
		const floe_json *fields = floe_json_get(c, "fields");
		if (fields && fields->type == FLOE_JSON_ARRAY) {
			int rc = parse_mappings(&nm->fields, &nm->n_fields, a, fields, depth + 1, err);
			if (rc)
				return rc;
		}
	}
	*n = i;
	return FLOE_OK;
}

int floe_name_mapping_parse(floe_name_mapping **out, size_t *n, floe_arena *a, const char *json,
			    floe_error *err)
{
	floe_json *j;
	int rc = floe_json_parse(&j, a, json, strlen(json), NULL, err);
	if (rc)
		return floe_error_prefix(err, rc, "schema.name-mapping.default: ");
	return parse_mappings(out, n, a, j, 0, err);
}

static void map_type(floe_jw *w, const floe_type *t);

static void map_field(floe_jw *w, int32_t id, const char *name, const floe_type *t)
{
	floe_jw_obj_begin(w);
	floe_jw_kv_i64(w, "field-id", id);
	floe_jw_key(w, "names");
	floe_jw_arr_begin(w);
	floe_jw_str(w, name);
	floe_jw_arr_end(w);
	if (floe_type_is_nested(t)) {
		floe_jw_key(w, "fields");
		map_type(w, t);
	}
	floe_jw_obj_end(w);
}

static void map_type(floe_jw *w, const floe_type *t)
{
	floe_jw_arr_begin(w);
	if (t->id == FLOE_T_STRUCT) {
		for (size_t i = 0; i < t->n_fields; i++)
			map_field(w, t->fields[i].id, t->fields[i].name, t->fields[i].type);
	} else if (t->id == FLOE_T_LIST) {
		map_field(w, t->element_id, "element", t->element);
	} else if (t->id == FLOE_T_MAP) {
		map_field(w, t->key_id, "key", t->key);
		map_field(w, t->value_id, "value", t->value);
	}
	floe_jw_arr_end(w);
}

int floe_name_mapping_from_schema(floe_buf *out, const floe_schema *s)
{
	floe_jw w;
	floe_jw_init(&w, out, 0);
	map_type(&w, s->root);
	return floe_jw_finish(&w);
}
