/*
 * scan_arrow.c — Arrow arrays shaped by Iceberg types: nulls, constants,
 * defaults, conversion of file arrays to table types, take, values.
 */
#include "scan/scan_arrow.h"

#include <stdio.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_fmt.h"
#include "iceberg/variant.h"
#include "util/timeutil.h"

typedef enum lay {
	L_NULL,
	L_BOOL,
	L_FIXED, /* width bytes */
	L_VARBIN,
	L_STRUCT,
	L_LIST, /* also maps */
} lay;

static lay layout_of(const floe_type *t, size_t *width)
{
	*width = 0;
	switch (t->id) {
	case FLOE_T_BOOLEAN: return L_BOOL;
	case FLOE_T_INT:
	case FLOE_T_DATE:
	case FLOE_T_FLOAT: *width = 4; return L_FIXED;
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
	case FLOE_T_DOUBLE: *width = 8; return L_FIXED;
	case FLOE_T_DECIMAL:
	case FLOE_T_UUID: *width = 16; return L_FIXED;
	case FLOE_T_FIXED: *width = (size_t)(t->length > 0 ? t->length : 0); return L_FIXED;
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
	case FLOE_T_GEOMETRY:
	case FLOE_T_GEOGRAPHY:
	case FLOE_T_VARIANT: return L_VARBIN; /* a variant is read as its JSON text */
	case FLOE_T_STRUCT: return L_STRUCT;
	case FLOE_T_LIST:
	case FLOE_T_MAP: return L_LIST;
	default: return L_NULL;
	}
}

static int oom(floe_error *err)
{
	return floe_error_oom(err);
}

static int n_buffers(lay l)
{
	switch (l) {
	case L_NULL: return 0;
	case L_STRUCT: return 1;
	case L_VARBIN: return 3;
	default: return 2;
	}
}

static void *zalloc(size_t a, size_t b)
{
	size_t n;
	if (!floe_size_mul(&n, a, b))
		return NULL;
	return floe_calloc(1, n ? n : 1);
}

/* ---- nulls and constants ---------------------------------------------------------------- */

int floe_sa_nulls(struct ArrowArray *out, const floe_type *t, int64_t n, floe_error *err)
{
	size_t w;
	lay l = layout_of(t, &w);
	int rc;
	int64_t nch = l == L_STRUCT ? (int64_t)t->n_fields : l == L_LIST ? 1 : 0;
	if ((rc = floe_arrow_array_init(out, n_buffers(l), nch)))
		return oom(err);
	out->length = n;
	out->null_count = l == L_NULL ? n : n;
	if (l == L_NULL)
		return FLOE_OK;
	void *valid = zalloc((size_t)(n + 7) / 8, 1);
	if (!valid)
		goto fail;
	floe_arrow_array_set_buffer(out, 0, valid);
	switch (l) {
	case L_BOOL: {
		void *b = zalloc((size_t)(n + 7) / 8, 1);
		if (!b)
			goto fail;
		floe_arrow_array_set_buffer(out, 1, b);
		break;
	}
	case L_FIXED: {
		void *b = zalloc((size_t)n, w ? w : 1);
		if (!b)
			goto fail;
		floe_arrow_array_set_buffer(out, 1, b);
		break;
	}
	case L_VARBIN: {
		void *o = zalloc((size_t)n + 1, 4), *d = zalloc(1, 1);
		if (!o || !d) {
			floe_free(o);
			floe_free(d);
			goto fail;
		}
		floe_arrow_array_set_buffer(out, 1, o);
		floe_arrow_array_set_buffer(out, 2, d);
		break;
	}
	case L_STRUCT:
		for (size_t i = 0; i < t->n_fields; i++)
			if ((rc = floe_sa_nulls(out->children[i], t->fields[i].type, n, err)))
				goto fail_quiet;
		break;
	case L_LIST: {
		void *o = zalloc((size_t)n + 1, 4);
		if (!o)
			goto fail;
		floe_arrow_array_set_buffer(out, 1, o);
		if (t->id == FLOE_T_LIST) {
			if ((rc = floe_sa_nulls(out->children[0], t->element, 0, err)))
				goto fail_quiet;
		} else {
			struct ArrowArray *e = out->children[0];
			if (floe_arrow_array_init(e, 1, 2))
				goto fail;
			if ((rc = floe_sa_nulls(e->children[0], t->key, 0, err)) ||
			    (rc = floe_sa_nulls(e->children[1], t->value, 0, err)))
				goto fail_quiet;
		}
		break;
	}
	default: break;
	}
	return FLOE_OK;
fail:
	floe_arrow_array_release(out);
	return oom(err);
fail_quiet:
	floe_arrow_array_release(out);
	return rc;
}

static void put_value(uint8_t *dst, const floe_value *v, size_t w)
{
	switch (v->type) {
	case FLOE_T_INT:
	case FLOE_T_DATE: memcpy(dst, &v->v.i32, 4); break;
	case FLOE_T_FLOAT: memcpy(dst, &v->v.f32, 4); break;
	case FLOE_T_DOUBLE: memcpy(dst, &v->v.f64, 8); break;
	case FLOE_T_DECIMAL: memcpy(dst, &v->v.dec, 16); break;
	case FLOE_T_UUID:
	case FLOE_T_FIXED: memcpy(dst, v->v.bin.p, v->v.bin.n < w ? v->v.bin.n : w); break;
	default: memcpy(dst, &v->v.i64, 8); break;
	}
}

int floe_sa_const(struct ArrowArray *out, const floe_type *t, const floe_value *v, int64_t n,
		  floe_error *err)
{
	size_t w;
	lay l = layout_of(t, &w);
	if (!v || v->is_null || l == L_NULL || l == L_STRUCT || l == L_LIST)
		return floe_sa_nulls(out, t, n, err);
	if (floe_arrow_array_init(out, n_buffers(l), 0))
		return oom(err);
	out->length = n;
	out->null_count = 0;
	if (l == L_BOOL) {
		uint8_t *b = zalloc((size_t)(n + 7) / 8, 1);
		if (!b)
			goto fail;
		if (v->v.b)
			memset(b, 0xff, (size_t)(n + 7) / 8);
		floe_arrow_array_set_buffer(out, 1, b);
	} else if (l == L_FIXED) {
		uint8_t *b = zalloc((size_t)n, w ? w : 1);
		if (!b)
			goto fail;
		for (int64_t i = 0; i < n; i++)
			put_value(b + (size_t)i * w, v, w);
		floe_arrow_array_set_buffer(out, 1, b);
	} else {
		size_t total;
		int32_t *o = zalloc((size_t)n + 1, 4);
		if (!o || !floe_size_mul(&total, v->v.bin.n, (size_t)n) || total > INT32_MAX) {
			floe_free(o);
			goto fail;
		}
		uint8_t *d = floe_malloc(total ? total : 1);
		if (!d) {
			floe_free(o);
			goto fail;
		}
		for (int64_t i = 0; i < n; i++) {
			memcpy(d + (size_t)i * v->v.bin.n, v->v.bin.p, v->v.bin.n);
			o[i + 1] = (int32_t)((size_t)(i + 1) * v->v.bin.n);
		}
		floe_arrow_array_set_buffer(out, 1, o);
		floe_arrow_array_set_buffer(out, 2, d);
	}
	return FLOE_OK;
fail:
	floe_arrow_array_release(out);
	return oom(err);
}

int floe_sa_default(struct ArrowArray *out, const floe_field *f, int64_t n, floe_error *err)
{
	const floe_type *t = f->type;
	int rc;
	if (!f->initial_default || floe_json_is_null(f->initial_default))
		return floe_sa_nulls(out, t, n, err);
	if (t->id == FLOE_T_STRUCT) {
		/* spec: a struct's only non-null default is {}; the fields carry their own */
		if (floe_arrow_array_init(out, 1, (int64_t)t->n_fields))
			return oom(err);
		out->length = n;
		out->null_count = 0;
		for (size_t i = 0; i < t->n_fields; i++)
			if ((rc = floe_sa_default(out->children[i], &t->fields[i], n, err))) {
				floe_arrow_array_release(out);
				return rc;
			}
		return FLOE_OK;
	}
	if (!floe_type_is_primitive(t))
		return floe_sa_nulls(out, t, n, err);
	floe_arena a;
	floe_value v;
	floe_arena_init(&a, 1024);
	rc = floe_value_from_json(&v, &a, t, f->initial_default, err);
	if (rc)
		floe_error_prefix(err, rc, "initial-default of '%s': ", f->name);
	else
		rc = floe_sa_const(out, t, &v, n, err);
	floe_arena_reset(&a);
	return rc;
}

/* ---- values and take ------------------------------------------------------------------------ */

void floe_sa_value(floe_value *out, const struct ArrowArray *a, const floe_type *t, int64_t i)
{
	size_t w;
	lay l = layout_of(t, &w);
	memset(out, 0, sizeof(*out));
	out->type = t->id;
	if (l == L_NULL || !floe_sa_valid(a, i)) {
		out->is_null = true;
		return;
	}
	if (l == L_STRUCT || l == L_LIST)
		return; /* a present struct, list or map: not null (no scalar value) */
	int64_t j = i + a->offset;
	const uint8_t *b = a->buffers[1];
	switch (l) {
	case L_BOOL: out->v.b = (b[j >> 3] >> (j & 7)) & 1; return;
	case L_FIXED:
		switch (t->id) {
		case FLOE_T_INT:
		case FLOE_T_DATE: memcpy(&out->v.i32, b + j * 4, 4); return;
		case FLOE_T_FLOAT: memcpy(&out->v.f32, b + j * 4, 4); return;
		case FLOE_T_DOUBLE: memcpy(&out->v.f64, b + j * 8, 8); return;
		case FLOE_T_DECIMAL: memcpy(&out->v.dec, b + j * 16, 16); return;
		case FLOE_T_UUID:
		case FLOE_T_FIXED:
			out->v.bin.p = b + (size_t)j * w;
			out->v.bin.n = w;
			return;
		default: memcpy(&out->v.i64, b + j * 8, 8); return;
		}
	case L_VARBIN: {
		const int32_t *o = a->buffers[1];
		out->v.bin.p = (const uint8_t *)a->buffers[2] + o[j];
		out->v.bin.n = (size_t)(o[j + 1] - o[j]);
		return;
	}
	default: out->is_null = true; return;
	}
}

static int take_validity(struct ArrowArray *out, const struct ArrowArray *src, const int64_t *idx,
			 int64_t n, floe_error *err)
{
	int64_t nulls = 0;
	if (src->null_count == 0 || !src->buffers[0]) {
		out->null_count = 0;
		return FLOE_OK;
	}
	uint8_t *v = zalloc((size_t)(n + 7) / 8, 1);
	if (!v)
		return oom(err);
	for (int64_t i = 0; i < n; i++) {
		if (floe_sa_valid(src, idx[i]))
			v[i >> 3] |= (uint8_t)(1u << (i & 7));
		else
			nulls++;
	}
	floe_arrow_array_set_buffer(out, 0, v);
	out->null_count = nulls;
	return FLOE_OK;
}

int floe_sa_take(struct ArrowArray *out, const struct ArrowArray *src, const floe_type *t,
		 const int64_t *idx, int64_t n, floe_error *err)
{
	size_t w;
	lay l = layout_of(t, &w);
	int rc;
	int64_t nch = l == L_STRUCT ? (int64_t)t->n_fields : l == L_LIST ? 1 : 0;
	if (floe_arrow_array_init(out, n_buffers(l), nch))
		return oom(err);
	out->length = n;
	if (l == L_NULL) {
		out->null_count = n;
		return FLOE_OK;
	}
	if ((rc = take_validity(out, src, idx, n, err)))
		goto fail;
	int64_t off = src->offset;
	switch (l) {
	case L_BOOL: {
		const uint8_t *sb = src->buffers[1];
		uint8_t *b = zalloc((size_t)(n + 7) / 8, 1);
		if (!b)
			goto oom_fail;
		for (int64_t i = 0; i < n; i++) {
			int64_t j = idx[i] + off;
			if ((sb[j >> 3] >> (j & 7)) & 1)
				b[i >> 3] |= (uint8_t)(1u << (i & 7));
		}
		floe_arrow_array_set_buffer(out, 1, b);
		break;
	}
	case L_FIXED: {
		const uint8_t *sb = src->buffers[1];
		uint8_t *b = zalloc((size_t)n, w ? w : 1);
		if (!b)
			goto oom_fail;
		for (int64_t i = 0; i < n; i++)
			memcpy(b + (size_t)i * w, sb + (size_t)(idx[i] + off) * w, w);
		floe_arrow_array_set_buffer(out, 1, b);
		break;
	}
	case L_VARBIN: {
		const int32_t *so = src->buffers[1];
		const uint8_t *sd = src->buffers[2];
		int32_t *o = zalloc((size_t)n + 1, 4);
		size_t total = 0;
		if (!o)
			goto oom_fail;
		for (int64_t i = 0; i < n; i++)
			total += (size_t)(so[idx[i] + off + 1] - so[idx[i] + off]);
		uint8_t *d = floe_malloc(total ? total : 1);
		if (!d || total > INT32_MAX) {
			floe_free(o);
			floe_free(d);
			goto oom_fail;
		}
		size_t pos = 0;
		for (int64_t i = 0; i < n; i++) {
			int64_t j = idx[i] + off;
			size_t len = (size_t)(so[j + 1] - so[j]);
			memcpy(d + pos, sd + so[j], len);
			pos += len;
			o[i + 1] = (int32_t)pos;
		}
		floe_arrow_array_set_buffer(out, 1, o);
		floe_arrow_array_set_buffer(out, 2, d);
		break;
	}
	case L_STRUCT: {
		/* children are indexed like the parent (offset applies to both) */
		int64_t *cidx = NULL;
		if (off) {
			cidx = floe_malloc((size_t)(n ? n : 1) * sizeof(int64_t));
			if (!cidx)
				goto oom_fail;
			for (int64_t i = 0; i < n; i++)
				cidx[i] = idx[i] + off;
		}
		for (size_t c = 0; c < t->n_fields; c++)
			if ((rc = floe_sa_take(out->children[c], src->children[c], t->fields[c].type,
					       cidx ? cidx : idx, n, err))) {
				floe_free(cidx);
				goto fail;
			}
		floe_free(cidx);
		break;
	}
	case L_LIST: {
		const int32_t *so = src->buffers[1];
		int32_t *o = zalloc((size_t)n + 1, 4);
		size_t total = 0;
		if (!o)
			goto oom_fail;
		for (int64_t i = 0; i < n; i++)
			total += (size_t)(so[idx[i] + off + 1] - so[idx[i] + off]);
		int64_t *cidx = floe_malloc((total ? total : 1) * sizeof(int64_t));
		if (!cidx || total > INT32_MAX) {
			floe_free(o);
			floe_free(cidx);
			goto oom_fail;
		}
		size_t pos = 0;
		for (int64_t i = 0; i < n; i++) {
			int64_t j = idx[i] + off;
			for (int32_t k = so[j]; k < so[j + 1]; k++)
				cidx[pos++] = k;
			o[i + 1] = (int32_t)pos;
		}
		floe_arrow_array_set_buffer(out, 1, o);
		if (t->id == FLOE_T_LIST) {
			rc = floe_sa_take(out->children[0], src->children[0], t->element, cidx,
					  (int64_t)total, err);
		} else {
			struct ArrowArray *e = out->children[0];
			const struct ArrowArray *se = src->children[0];
			int64_t *eidx = cidx;
			rc = floe_arrow_array_init(e, 1, 2) ? oom(err) : FLOE_OK;
			if (!rc) {
				e->length = (int64_t)total;
				e->null_count = 0;
				if (se->offset)
					for (size_t k = 0; k < total; k++)
						eidx[k] += se->offset;
				if (!(rc = floe_sa_take(e->children[0], se->children[0], t->key, eidx,
							(int64_t)total, err)))
					rc = floe_sa_take(e->children[1], se->children[1], t->value,
							  eidx, (int64_t)total, err);
			}
		}
		floe_free(cidx);
		if (rc)
			goto fail;
		break;
	}
	default: break;
	}
	return FLOE_OK;
oom_fail:
	rc = oom(err);
fail:
	floe_arrow_array_release(out);
	return rc;
}

/* ---- conversion ----------------------------------------------------------------------------- */

int32_t floe_sa_field_id(const struct ArrowSchema *s)
{
	size_t n;
	const char *v = floe_arrow_metadata_get(s->metadata, "PARQUET:field_id", &n);
	int32_t id = 0;
	if (!v || n == 0 || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		id = id * 10 + (v[i] - '0');
	}
	return id;
}

static int unsupported(const char *what, const char *fmt, const floe_type *t, floe_error *err)
{
	floe_buf b;
	floe_buf_init(&b, 128);
	int rc = floe_type_format(&b, t);
	rc = floe_error_set(err, FLOE_EUNSUPPORTED,
			    "column '%s': the file's Arrow type '%s' does not convert to %s",
			    what ? what : "?", fmt, rc ? "the table type" : floe_buf_cstr(&b));
	floe_buf_reset(&b);
	return rc;
}

/* copy validity (and offsets for lists) of src into a new array */
static int copy_validity(struct ArrowArray *out, const struct ArrowArray *src, floe_error *err)
{
	out->length = src->length;
	out->null_count = src->null_count;
	out->offset = src->offset;
	if (src->null_count != 0 && src->n_buffers > 0 && src->buffers[0]) {
		size_t nb = (size_t)(src->length + src->offset + 7) / 8;
		uint8_t *v = floe_malloc(nb ? nb : 1);
		if (!v)
			return oom(err);
		memcpy(v, src->buffers[0], nb);
		floe_arrow_array_set_buffer(out, 0, v);
	} else {
		out->null_count = 0;
	}
	return FLOE_OK;
}

/* fixed-width numeric widening: read elements of src_w bytes, write dst_w bytes */
typedef int64_t (*rd_fn)(const uint8_t *p);
static int64_t rd_i8(const uint8_t *p) { return (int8_t)p[0]; }
static int64_t rd_u8(const uint8_t *p) { return p[0]; }
static int64_t rd_i16(const uint8_t *p) { int16_t x; memcpy(&x, p, 2); return x; }
static int64_t rd_u16(const uint8_t *p) { uint16_t x; memcpy(&x, p, 2); return x; }
static int64_t rd_i32(const uint8_t *p) { int32_t x; memcpy(&x, p, 4); return x; }
static int64_t rd_u32(const uint8_t *p) { uint32_t x; memcpy(&x, p, 4); return x; }
static int64_t rd_i64(const uint8_t *p) { int64_t x; memcpy(&x, p, 8); return x; }

static int widen(struct ArrowArray *out, struct ArrowArray *src, rd_fn rd, size_t sw, size_t dw,
		 int64_t mul, int64_t div, floe_error *err)
{
	int rc;
	if (floe_arrow_array_init(out, 2, 0))
		return oom(err);
	if ((rc = copy_validity(out, src, err)))
		goto fail;
	int64_t n = src->length + out->offset;
	uint8_t *b = zalloc((size_t)(n ? n : 1), dw);
	if (!b) {
		rc = oom(err);
		goto fail;
	}
	const uint8_t *sb = src->buffers[1];
	for (int64_t i = 0; i < n; i++) {
		int64_t x = rd(sb + (size_t)i * sw);
		x = div > 1 ? floe_floordiv(x, div) : x * mul;
		if (dw == 4) {
			int32_t y = (int32_t)x;
			memcpy(b + i * 4, &y, 4);
		} else {
			memcpy(b + i * 8, &x, 8);
		}
	}
	floe_arrow_array_set_buffer(out, 1, b);
	floe_arrow_array_release(src);
	return FLOE_OK;
fail:
	floe_arrow_array_release(out);
	floe_arrow_array_release(src);
	return rc;
}

static int float_to_double(struct ArrowArray *out, struct ArrowArray *src, floe_error *err)
{
	int rc;
	if (floe_arrow_array_init(out, 2, 0))
		return oom(err);
	if ((rc = copy_validity(out, src, err)))
		goto fail;
	int64_t n = src->length + out->offset;
	double *b = zalloc((size_t)(n ? n : 1), 8);
	if (!b) {
		rc = oom(err);
		goto fail;
	}
	const float *sb = src->buffers[1];
	for (int64_t i = 0; i < n; i++)
		b[i] = sb[i];
	floe_arrow_array_set_buffer(out, 1, b);
	floe_arrow_array_release(src);
	return FLOE_OK;
fail:
	floe_arrow_array_release(out);
	floe_arrow_array_release(src);
	return rc;
}

static int unit_factor(floe_arrow_unit u, bool nanos_target, int64_t *mul, int64_t *div)
{
	static const int64_t per_sec[] = {1, 1000, 1000000, 1000000000};
	int64_t have = per_sec[u], want = nanos_target ? 1000000000 : 1000000;
	*mul = 1;
	*div = 1;
	if (have < want)
		*mul = want / have;
	else if (have > want)
		*div = have / want;
	return FLOE_OK;
}

static const floe_name_mapping *map_find(const floe_name_mapping *m, size_t n, int32_t id,
					 const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (id >= 0 && m[i].field_id == id)
			return &m[i];
		if (name)
			for (size_t k = 0; k < m[i].n_names; k++)
				if (!strcmp(m[i].names[k], name))
					return &m[i];
	}
	return NULL;
}

static bool has_name(const floe_name_mapping *e, const char *name)
{
	for (size_t k = 0; name && k < e->n_names; k++)
		if (!strcmp(e->names[k], name))
			return true;
	return false;
}

/* does some schema of the table give field `id` this name? */
static bool id_named(const floe_metadata *meta, int32_t id, const char *name)
{
	if (!meta)
		return true;
	for (size_t i = 0; i < meta->n_schemas; i++) {
		const floe_schema_entry *e = floe_schema_find(meta->schemas[i], id);
		if (e && e->field && name && !strcmp(e->field->name, name))
			return true;
	}
	return false;
}

const floe_name_mapping *floe_sa_mapping_lookup(const floe_name_mapping *m, size_t n, int32_t id,
					       const char *name, const floe_metadata *meta)
{
	const floe_name_mapping *by_id = NULL, *by_name = NULL;
	for (size_t i = 0; i < n; i++) {
		if (m[i].field_id == id && !by_id)
			by_id = &m[i];
		if (has_name(&m[i], name) && !by_name)
			by_name = &m[i];
	}
	if (by_id && has_name(by_id, name))
		return by_id;
	if (by_name && by_name != by_id && !id_named(meta, by_name->field_id, name))
		return by_name;
	return by_id;
}

/* the src child of a struct that holds table field (id, name) */
static int64_t find_child(const struct ArrowSchema *ss, const floe_sa_match *m, int32_t id,
			  const char *fname, const floe_name_mapping **sub)
{
	*sub = NULL;
	if (m->by_id) {
		for (int64_t i = 0; i < ss->n_children; i++)
			if (floe_sa_field_id(ss->children[i]) == id)
				return i;
		return -1;
	}
	const floe_name_mapping *nm = floe_sa_mapping_lookup(m->mapping, m->n_mapping, id, fname, m->meta);
	if (!nm)
		return -1;
	for (int64_t i = 0; i < ss->n_children; i++)
		for (size_t k = 0; k < nm->n_names; k++)
			if (ss->children[i]->name && !strcmp(ss->children[i]->name, nm->names[k])) {
				*sub = nm;
				return i;
			}
	return -1;
}

static floe_sa_match sub_match(const floe_sa_match *m, const floe_name_mapping *nm)
{
	floe_sa_match r = *m;
	if (m->by_id)
		return r;
	r.mapping = nm ? nm->fields : NULL;
	r.n_mapping = nm ? nm->n_fields : 0;
	return r;
}

static int convert_struct(struct ArrowArray *out, struct ArrowArray *src,
			  const struct ArrowSchema *ss, const floe_type *t, const floe_sa_match *m,
			  const char *what, floe_error *err)
{
	int rc;
	if (floe_arrow_array_init(out, 1, (int64_t)t->n_fields)) {
		floe_arrow_array_release(src);
		return oom(err);
	}
	if ((rc = copy_validity(out, src, err)))
		goto fail;
	if (out->offset) {
		/* children of an offset struct are offset too; keep it simple: refuse */
		rc = floe_error_set(err, FLOE_EUNSUPPORTED, "column '%s': offset struct arrays", what);
		goto fail;
	}
	for (size_t i = 0; i < t->n_fields; i++) {
		const floe_field *f = &t->fields[i];
		const floe_name_mapping *nm;
		int64_t c = find_child(ss, m, f->id, f->name, &nm);
		if (c < 0) {
			rc = floe_sa_default(out->children[i], f, src->length, err);
		} else {
			struct ArrowArray moved;
			floe_sa_match sm = sub_match(m, nm);
			floe_arrow_array_move(&moved, src->children[c]);
			rc = floe_sa_convert(out->children[i], &moved, ss->children[c], f->type, &sm,
					     f->name, err);
		}
		if (rc)
			goto fail;
	}
	floe_arrow_array_release(src);
	return FLOE_OK;
fail:
	floe_arrow_array_release(out);
	floe_arrow_array_release(src);
	return rc;
}

static int convert_list(struct ArrowArray *out, struct ArrowArray *src,
			const struct ArrowSchema *ss, const floe_type *t, const floe_sa_match *m,
			const char *what, floe_error *err)
{
	int rc;
	if (floe_arrow_array_init(out, 2, 1)) {
		floe_arrow_array_release(src);
		return oom(err);
	}
	if ((rc = copy_validity(out, src, err)))
		goto fail;
	size_t no = (size_t)(src->length + src->offset + 1);
	int32_t *o = floe_malloc(no * 4);
	if (!o) {
		rc = oom(err);
		goto fail;
	}
	memcpy(o, src->buffers[1], no * 4);
	floe_arrow_array_set_buffer(out, 1, o);
	struct ArrowArray moved;
	floe_arrow_array_move(&moved, src->children[0]);
	const struct ArrowSchema *cs = ss->children[0];
	if (t->id == FLOE_T_LIST) {
		floe_sa_match sm = *m;
		/* the mapping of a list holds its element under the name "element" */
		if (!m->by_id) {
			const floe_name_mapping *el = map_find(m->mapping, m->n_mapping, -1, "element");
			sm.mapping = el ? el->fields : NULL;
			sm.n_mapping = el ? el->n_fields : 0;
		}
		rc = floe_sa_convert(out->children[0], &moved, cs, t->element, &sm, what, err);
	} else {
		/* map: entries struct {key, value} matched by position */
		struct ArrowArray *e = out->children[0];
		if (cs->n_children != 2 || moved.n_children != 2) {
			floe_arrow_array_release(&moved);
			rc = floe_error_corrupt(err, "column '%s': map entries are not a pair",
					    what);
			goto fail;
		}
		if (floe_arrow_array_init(e, 1, 2)) {
			floe_arrow_array_release(&moved);
			rc = oom(err);
			goto fail;
		}
		e->length = moved.length;
		e->null_count = 0;
		floe_sa_match km = *m, vm = *m;
		if (!m->by_id) {
			const floe_name_mapping *k = map_find(m->mapping, m->n_mapping, -1, "key");
			const floe_name_mapping *v = map_find(m->mapping, m->n_mapping, -1, "value");
			km.mapping = k ? k->fields : NULL;
			km.n_mapping = k ? k->n_fields : 0;
			vm.mapping = v ? v->fields : NULL;
			vm.n_mapping = v ? v->n_fields : 0;
		}
		struct ArrowArray mk, mv;
		floe_arrow_array_move(&mk, moved.children[0]);
		floe_arrow_array_move(&mv, moved.children[1]);
		floe_arrow_array_release(&moved);
		rc = floe_sa_convert(e->children[0], &mk, cs->children[0], t->key, &km, what, err);
		if (rc)
			floe_arrow_array_release(&mv);
		else
			rc = floe_sa_convert(e->children[1], &mv, cs->children[1], t->value, &vm, what,
					     err);
	}
	if (rc)
		goto fail;
	floe_arrow_array_release(src);
	return FLOE_OK;
fail:
	floe_arrow_array_release(out);
	floe_arrow_array_release(src);
	return rc;
}

/* Bytes of row i of a binary ("z") array. */
static const uint8_t *bin_at(const struct ArrowArray *a, int64_t i, size_t *n)
{
	const int32_t *o = a->buffers[1];
	int64_t k = i + a->offset;
	*n = (size_t)(o[k + 1] - o[k]);
	return (const uint8_t *)a->buffers[2] + o[k];
}

/*
 * A variant read from Parquet (a group of binary metadata and value) into
 * the string of its JSON text (iceberg/variant.h). Shredded variants
 * (typed_value) are refused by name.
 */
static int convert_variant(struct ArrowArray *out, struct ArrowArray *src,
			   const struct ArrowSchema *src_schema, const char *what, floe_error *err)
{
	int64_t mi = -1, vi = -1;
	bool typed = false;
	for (int64_t k = 0; k < src_schema->n_children; k++) {
		const char *nm = src_schema->children[k]->name;
		const char *fmt = src_schema->children[k]->format;
		bool bin = fmt && !strcmp(fmt, "z");
		if (nm && !strcmp(nm, "metadata") && bin)
			mi = k;
		else if (nm && !strcmp(nm, "value") && bin)
			vi = k;
		else if (nm && !strcmp(nm, "typed_value"))
			typed = true;
	}
	if (typed || mi < 0 || vi < 0) {
		floe_arrow_array_release(src);
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "column '%s': %s", what ? what : "?",
				      typed ? "shredded variants (typed_value) are not read yet"
					    : "a variant needs binary 'metadata' and 'value' fields");
	}
	const struct ArrowArray *m = src->children[mi], *v = src->children[vi];
	int64_t n = src->length;
	floe_buf offs, data, valid;
	int rc = FLOE_OK;
	int64_t nulls = 0;
	floe_buf_init(&offs, 0);
	floe_buf_init(&data, 0);
	floe_buf_init(&valid, 0);
	if (floe_buf_reserve(&offs, (size_t)(n + 1) * 4) ||
	    floe_buf_reserve(&valid, (size_t)(n + 7) / 8 + 1)) {
		rc = oom(err);
		goto done;
	}
	memset(valid.data, 0, (size_t)(n + 7) / 8 + 1);
	int32_t *o = (int32_t *)(void *)offs.data;
	o[0] = 0;
	for (int64_t i = 0; i < n && !rc; i++) {
		int64_t row = src->offset + i;
		if (floe_sa_valid(src, i) && floe_sa_valid(m, row) && floe_sa_valid(v, row)) {
			size_t mn, vn;
			const uint8_t *mp = bin_at(m, row, &mn), *vp = bin_at(v, row, &vn);
			if ((rc = floe_variant_to_json(&data, mp, mn, vp, vn, err)))
				floe_error_prefix(err, rc, "column '%s': row %lld: ", what ? what : "?",
						  (long long)i);
			valid.data[i >> 3] |= (uint8_t)(1u << (i & 7));
		} else {
			nulls++;
		}
		if (!rc && data.len > INT32_MAX)
			rc = floe_error_set(err, FLOE_EUNSUPPORTED,
					    "column '%s': over 2 GiB of variant text in one batch",
					    what ? what : "?");
		o[i + 1] = (int32_t)data.len;
	}
	offs.len = (size_t)(n + 1) * 4;
	valid.len = (size_t)(n + 7) / 8 + 1;
	if (!rc && floe_arrow_array_init(out, 3, 0))
		rc = oom(err);
	if (!rc) {
		out->length = n;
		out->null_count = nulls;
		if ((nulls && floe_arrow_array_take_buf(out, 0, &valid)) ||
		    floe_arrow_array_take_buf(out, 1, &offs) ||
		    floe_arrow_array_take_buf(out, 2, &data)) {
			floe_arrow_array_release(out);
			rc = oom(err);
		}
	}
done:
	floe_buf_reset(&offs);
	floe_buf_reset(&data);
	floe_buf_reset(&valid);
	floe_arrow_array_release(src);
	return rc;
}

int floe_sa_convert(struct ArrowArray *out, struct ArrowArray *src,
		    const struct ArrowSchema *src_schema, const floe_type *t,
		    const floe_sa_match *match, const char *what, floe_error *err)
{
	floe_arrow_fmt f;
	int rc = floe_arrow_fmt_parse(&f, src_schema->format, NULL);
	if (rc) {
		floe_arrow_array_release(src);
		return unsupported(what, src_schema->format, t, err);
	}
	if (f.type == FLOE_ARROW_NA) {
		int64_t n = src->length;
		floe_arrow_array_release(src);
		return floe_sa_nulls(out, t, n, err);
	}
	switch (t->id) {
	case FLOE_T_VARIANT:
		if (f.type != FLOE_ARROW_STRUCT)
			break;
		return convert_variant(out, src, src_schema, what, err);
	case FLOE_T_STRUCT:
		if (f.type != FLOE_ARROW_STRUCT)
			break;
		return convert_struct(out, src, src_schema, t, match, what, err);
	case FLOE_T_LIST:
		if (f.type != FLOE_ARROW_LIST)
			break;
		return convert_list(out, src, src_schema, t, match, what, err);
	case FLOE_T_MAP:
		if (f.type != FLOE_ARROW_MAP)
			break;
		return convert_list(out, src, src_schema, t, match, what, err);
	case FLOE_T_BOOLEAN:
		if (f.type != FLOE_ARROW_BOOL)
			break;
		floe_arrow_array_move(out, src);
		return FLOE_OK;
	case FLOE_T_INT:
		switch (f.type) {
		case FLOE_ARROW_INT32: floe_arrow_array_move(out, src); return FLOE_OK;
		case FLOE_ARROW_INT8: return widen(out, src, rd_i8, 1, 4, 1, 1, err);
		case FLOE_ARROW_UINT8: return widen(out, src, rd_u8, 1, 4, 1, 1, err);
		case FLOE_ARROW_INT16: return widen(out, src, rd_i16, 2, 4, 1, 1, err);
		case FLOE_ARROW_UINT16: return widen(out, src, rd_u16, 2, 4, 1, 1, err);
		case FLOE_ARROW_UINT32: floe_arrow_array_move(out, src); return FLOE_OK;
		default: break;
		}
		break;
	case FLOE_T_LONG:
		switch (f.type) {
		case FLOE_ARROW_INT64:
		case FLOE_ARROW_UINT64: floe_arrow_array_move(out, src); return FLOE_OK;
		case FLOE_ARROW_INT32: return widen(out, src, rd_i32, 4, 8, 1, 1, err);
		case FLOE_ARROW_UINT32: return widen(out, src, rd_u32, 4, 8, 1, 1, err);
		case FLOE_ARROW_INT16: return widen(out, src, rd_i16, 2, 8, 1, 1, err);
		case FLOE_ARROW_UINT16: return widen(out, src, rd_u16, 2, 8, 1, 1, err);
		case FLOE_ARROW_INT8: return widen(out, src, rd_i8, 1, 8, 1, 1, err);
		case FLOE_ARROW_UINT8: return widen(out, src, rd_u8, 1, 8, 1, 1, err);
		default: break;
		}
		break;
	case FLOE_T_FLOAT:
		if (f.type != FLOE_ARROW_FLOAT)
			break;
		floe_arrow_array_move(out, src);
		return FLOE_OK;
	case FLOE_T_DOUBLE:
		if (f.type == FLOE_ARROW_DOUBLE) {
			floe_arrow_array_move(out, src);
			return FLOE_OK;
		}
		if (f.type == FLOE_ARROW_FLOAT)
			return float_to_double(out, src, err);
		break;
	case FLOE_T_DECIMAL:
		if (f.type != FLOE_ARROW_DECIMAL128 || f.scale != t->scale)
			break;
		floe_arrow_array_move(out, src);
		return FLOE_OK;
	case FLOE_T_DATE:
		if (f.type == FLOE_ARROW_DATE32 || f.type == FLOE_ARROW_INT32) {
			floe_arrow_array_move(out, src);
			return FLOE_OK;
		}
		if (f.type == FLOE_ARROW_DATE64)
			return widen(out, src, rd_i64, 8, 4, 1, 86400000, err);
		break;
	case FLOE_T_TIME: {
		int64_t mul, div;
		if (f.type != FLOE_ARROW_TIME32 && f.type != FLOE_ARROW_TIME64)
			break;
		unit_factor(f.unit, false, &mul, &div);
		if (f.type == FLOE_ARROW_TIME32)
			return widen(out, src, rd_i32, 4, 8, mul, div, err);
		if (mul == 1 && div == 1) {
			floe_arrow_array_move(out, src);
			return FLOE_OK;
		}
		return widen(out, src, rd_i64, 8, 8, mul, div, err);
	}
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: {
		bool ns = t->id == FLOE_T_TIMESTAMP_NS || t->id == FLOE_T_TIMESTAMPTZ_NS;
		int64_t mul, div;
		if (f.type == FLOE_ARROW_DATE32)
			/* v3 promotion date -> timestamp */
			return widen(out, src, rd_i32, 4, 8, ns ? 86400 * INT64_C(1000000000)
							       : FLOE_US_PER_DAY,
				     1, err);
		if (f.type == FLOE_ARROW_INT64) {
			floe_arrow_array_move(out, src);
			return FLOE_OK;
		}
		if (f.type != FLOE_ARROW_TIMESTAMP)
			break;
		unit_factor(f.unit, ns, &mul, &div);
		if (mul == 1 && div == 1) {
			floe_arrow_array_move(out, src);
			return FLOE_OK;
		}
		return widen(out, src, rd_i64, 8, 8, mul, div, err);
	}
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
	case FLOE_T_GEOMETRY:
	case FLOE_T_GEOGRAPHY:
		if (f.type != FLOE_ARROW_STRING && f.type != FLOE_ARROW_BINARY)
			break;
		floe_arrow_array_move(out, src);
		return FLOE_OK;
	case FLOE_T_UUID:
		if (f.type != FLOE_ARROW_FIXED_BINARY || f.width != 16)
			break;
		floe_arrow_array_move(out, src);
		return FLOE_OK;
	case FLOE_T_FIXED:
		if (f.type != FLOE_ARROW_FIXED_BINARY || f.width != t->length)
			break;
		floe_arrow_array_move(out, src);
		return FLOE_OK;
	case FLOE_T_UNKNOWN: {
		int64_t n = src->length;
		floe_arrow_array_release(src);
		return floe_sa_nulls(out, t, n, err);
	}
	default: break;
	}
	floe_arrow_array_release(src);
	return unsupported(what, src_schema->format, t, err);
}
