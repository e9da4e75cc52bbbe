/*
 * thrift.c — Thrift compact protocol reader and writer.
 */
#include "parquet/thrift.h"

#include <stdio.h>
#include <string.h>

void floe_thrift_reader_init(floe_thrift_reader *r, const void *p, size_t n,
			     const floe_thrift_limits *lim, const char *what, floe_error *err)
{
	static const floe_thrift_limits dflt = FLOE_THRIFT_LIMITS_INIT;
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->n = n;
	r->lim = lim ? *lim : dflt;
	if (r->lim.max_depth > FLOE_THRIFT_MAX_DEPTH || r->lim.max_depth <= 0)
		r->lim.max_depth = FLOE_THRIFT_MAX_DEPTH;
	r->bool_val = -1;
	r->what = what ? what : "thrift";
	r->err = err;
}

int floe_thrift_corrupt(floe_thrift_reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return floe_error_corrupt(r->err, "%s at offset %zu: %s", r->what, r->off, msg);
}

static int get_u8(floe_thrift_reader *r, uint8_t *v)
{
	if (r->off >= r->n)
		return floe_thrift_corrupt(r, "unexpected end of data");
	*v = r->p[r->off++];
	return FLOE_OK;
}

static int get_uvarint(floe_thrift_reader *r, uint64_t *v)
{
	uint64_t x = 0;
	size_t i = r->off;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		uint8_t b = 0;
		if (i >= r->n)
			return floe_thrift_corrupt(r, "truncated varint");
		b = r->p[i++];
		if (shift == 63 && b > 1)
			return floe_thrift_corrupt(r, "varint overflows 64 bits");
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			r->off = i;
			*v = x;
			return FLOE_OK;
		}
	}
	return floe_thrift_corrupt(r, "varint too long");
}

static int get_zigzag(floe_thrift_reader *r, int64_t *v)
{
	uint64_t u = 0;
	int rc = get_uvarint(r, &u);
	if (rc)
		return rc;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return FLOE_OK;
}

int floe_thrift_struct_begin(floe_thrift_reader *r)
{
	if (r->depth >= r->lim.max_depth)
		return floe_thrift_corrupt(r, "nesting deeper than %d", r->lim.max_depth);
	r->depth++;
	r->last_fid[r->depth] = 0;
	return FLOE_OK;
}

int floe_thrift_next_field(floe_thrift_reader *r, int16_t *fid, int *type)
{
	uint8_t b = 0;
	int rc = get_u8(r, &b);
	if (rc)
		return rc;
	if (b == 0) {
		*type = FLOE_THRIFT_STOP;
		*fid = 0;
		if (r->depth > 0)
			r->depth--;
		return FLOE_OK;
	}
	*type = b & 0x0f;
	if (b >> 4) {
		int v = r->last_fid[r->depth] + (b >> 4);
		if (v > INT16_MAX)
			return floe_thrift_corrupt(r, "field id overflows");
		*fid = (int16_t)v;
	} else {
		int64_t v;
		if ((rc = get_zigzag(r, &v)))
			return rc;
		if (v < INT16_MIN || v > INT16_MAX)
			return floe_thrift_corrupt(r, "field id %lld out of range", (long long)v);
		*fid = (int16_t)v;
	}
	r->last_fid[r->depth] = *fid;
	if (*type == FLOE_THRIFT_TRUE || *type == FLOE_THRIFT_FALSE)
		r->bool_val = *type == FLOE_THRIFT_TRUE;
	else if (*type > FLOE_THRIFT_UUID)
		return floe_thrift_corrupt(r, "unknown field type %d", *type);
	return FLOE_OK;
}

static int skip_elem(floe_thrift_reader *r, int type);

int floe_thrift_list_begin(floe_thrift_reader *r, int *elem_type, size_t *count)
{
	uint8_t b = 0;
	uint64_t n = 0;
	int rc = get_u8(r, &b);
	if (rc)
		return rc;
	n = b >> 4;
	if (n == 15 && (rc = get_uvarint(r, &n)))
		return rc;
	*elem_type = b & 0x0f;
	if (n > 0 && (*elem_type == FLOE_THRIFT_STOP || *elem_type > FLOE_THRIFT_UUID))
		return floe_thrift_corrupt(r, "unknown list element type %d", *elem_type);
	if (n > r->n - r->off)
		return floe_thrift_corrupt(r, "list of %llu elements exceeds the %zu bytes left",
					   (unsigned long long)n, r->n - r->off);
	if (n > r->lim.max_list || r->elems + n > r->lim.max_total_elems)
		return floe_thrift_corrupt(r, "list of %llu elements exceeds the limit",
					   (unsigned long long)n);
	if (r->depth >= r->lim.max_depth)
		return floe_thrift_corrupt(r, "nesting deeper than %d", r->lim.max_depth);
	r->elems += n;
	r->depth++;
	r->last_fid[r->depth] = 0;
	*count = (size_t)n;
	return FLOE_OK;
}

void floe_thrift_list_end(floe_thrift_reader *r)
{
	if (r->depth > 0)
		r->depth--;
}

static int get_binary(floe_thrift_reader *r, const uint8_t **v, size_t *len)
{
	uint64_t n = 0;
	int rc = get_uvarint(r, &n);
	if (rc)
		return rc;
	if (n > r->n - r->off)
		return floe_thrift_corrupt(r, "binary of %llu bytes exceeds the %zu bytes left",
					   (unsigned long long)n, r->n - r->off);
	if (n > r->lim.max_string)
		return floe_thrift_corrupt(r, "binary of %llu bytes exceeds the limit",
					   (unsigned long long)n);
	*v = r->p + r->off;
	*len = (size_t)n;
	r->off += (size_t)n;
	return FLOE_OK;
}

static int skip_bytes(floe_thrift_reader *r, size_t n)
{
	if (n > r->n - r->off)
		return floe_thrift_corrupt(r, "unexpected end of data");
	r->off += n;
	return FLOE_OK;
}

/* Skip a value; `in_field` says whether a bool is carried by the field header. */
static int skip_value(floe_thrift_reader *r, int type, bool in_field)
{
	int64_t i64;
	const uint8_t *p;
	size_t n;
	int rc;
	switch (type) {
	case FLOE_THRIFT_TRUE:
	case FLOE_THRIFT_FALSE: return in_field ? FLOE_OK : skip_bytes(r, 1);
	case FLOE_THRIFT_I8: return skip_bytes(r, 1);
	case FLOE_THRIFT_I16:
	case FLOE_THRIFT_I32:
	case FLOE_THRIFT_I64: return get_zigzag(r, &i64);
	case FLOE_THRIFT_DOUBLE: return skip_bytes(r, 8);
	case FLOE_THRIFT_UUID: return skip_bytes(r, 16);
	case FLOE_THRIFT_BINARY: return get_binary(r, &p, &n);
	case FLOE_THRIFT_LIST:
	case FLOE_THRIFT_SET: {
		int et;
		size_t cnt;
		if ((rc = floe_thrift_list_begin(r, &et, &cnt)))
			return rc;
		for (size_t i = 0; i < cnt; i++)
			if ((rc = skip_elem(r, et)))
				return rc;
		floe_thrift_list_end(r);
		return FLOE_OK;
	}
	case FLOE_THRIFT_MAP: {
		uint64_t cnt = 0;
		uint8_t kv = 0;
		if ((rc = get_uvarint(r, &cnt)))
			return rc;
		if (cnt == 0)
			return FLOE_OK;
		if ((rc = get_u8(r, &kv)))
			return rc;
		if (cnt > r->n - r->off || cnt > r->lim.max_list ||
		    r->elems + cnt > r->lim.max_total_elems)
			return floe_thrift_corrupt(r, "map of %llu entries is too large",
						   (unsigned long long)cnt);
		if (r->depth >= r->lim.max_depth)
			return floe_thrift_corrupt(r, "nesting deeper than %d", r->lim.max_depth);
		r->elems += cnt;
		r->depth++;
		for (uint64_t i = 0; i < cnt; i++) {
			if ((rc = skip_elem(r, kv >> 4)) || (rc = skip_elem(r, kv & 0x0f)))
				return rc;
		}
		r->depth--;
		return FLOE_OK;
	}
	case FLOE_THRIFT_STRUCT: {
		int16_t fid;
		int t;
		if ((rc = floe_thrift_struct_begin(r)))
			return rc;
		for (;;) {
			if ((rc = floe_thrift_next_field(r, &fid, &t)))
				return rc;
			if (t == FLOE_THRIFT_STOP)
				return FLOE_OK;
			if ((rc = skip_value(r, t, true)))
				return rc;
		}
	}
	default: return floe_thrift_corrupt(r, "unknown type %d", type);
	}
}

static int skip_elem(floe_thrift_reader *r, int type)
{
	return skip_value(r, type, false);
}

int floe_thrift_skip(floe_thrift_reader *r, int type)
{
	return skip_value(r, type, true);
}

int floe_thrift_read_bool(floe_thrift_reader *r, int type, bool *v, bool *present)
{
	if (type != FLOE_THRIFT_TRUE && type != FLOE_THRIFT_FALSE) {
		if (present)
			*present = false;
		return floe_thrift_skip(r, type);
	}
	*v = type == FLOE_THRIFT_TRUE;
	if (present)
		*present = true;
	return FLOE_OK;
}

static int read_int(floe_thrift_reader *r, int type, int64_t *v, bool *present, int64_t lo,
		    int64_t hi)
{
	int rc;
	if (type == FLOE_THRIFT_I8) {
		uint8_t b = 0;
		if ((rc = get_u8(r, &b)))
			return rc;
		*v = (int8_t)b;
	} else if (type == FLOE_THRIFT_I16 || type == FLOE_THRIFT_I32 || type == FLOE_THRIFT_I64) {
		if ((rc = get_zigzag(r, v)))
			return rc;
	} else {
		if (present)
			*present = false;
		return floe_thrift_skip(r, type);
	}
	if (*v < lo || *v > hi)
		return floe_thrift_corrupt(r, "integer %lld out of range", (long long)*v);
	if (present)
		*present = true;
	return FLOE_OK;
}

int floe_thrift_read_i32(floe_thrift_reader *r, int type, int32_t *v, bool *present)
{
	int64_t x = 0;
	bool pr = false;
	int rc = read_int(r, type, &x, &pr, INT32_MIN, INT32_MAX);
	if (rc == 0 && pr)
		*v = (int32_t)x;
	if (present)
		*present = pr;
	return rc;
}

int floe_thrift_read_i64(floe_thrift_reader *r, int type, int64_t *v, bool *present)
{
	int64_t x = 0;
	bool pr = false;
	int rc = read_int(r, type, &x, &pr, INT64_MIN, INT64_MAX);
	if (rc == 0 && pr)
		*v = x;
	if (present)
		*present = pr;
	return rc;
}

int floe_thrift_read_double(floe_thrift_reader *r, int type, double *v, bool *present)
{
	if (type != FLOE_THRIFT_DOUBLE) {
		if (present)
			*present = false;
		return floe_thrift_skip(r, type);
	}
	if (r->n - r->off < 8)
		return floe_thrift_corrupt(r, "unexpected end of data");
	memcpy(v, r->p + r->off, 8);
	r->off += 8;
	if (present)
		*present = true;
	return FLOE_OK;
}

int floe_thrift_read_binary(floe_thrift_reader *r, int type, const uint8_t **v, size_t *len,
			    bool *present)
{
	if (type != FLOE_THRIFT_BINARY) {
		if (present)
			*present = false;
		return floe_thrift_skip(r, type);
	}
	if (present)
		*present = true;
	return get_binary(r, v, len);
}

int floe_thrift_elem_i32(floe_thrift_reader *r, int32_t *v)
{
	int64_t x;
	int rc = get_zigzag(r, &x);
	if (rc)
		return rc;
	if (x < INT32_MIN || x > INT32_MAX)
		return floe_thrift_corrupt(r, "i32 %lld out of range", (long long)x);
	*v = (int32_t)x;
	return FLOE_OK;
}

int floe_thrift_elem_i64(floe_thrift_reader *r, int64_t *v)
{
	return get_zigzag(r, v);
}

int floe_thrift_elem_bool(floe_thrift_reader *r, bool *v)
{
	uint8_t b = 0;
	int rc = get_u8(r, &b);
	if (rc)
		return rc;
	*v = b == FLOE_THRIFT_TRUE;
	return FLOE_OK;
}

int floe_thrift_elem_binary(floe_thrift_reader *r, const uint8_t **v, size_t *len)
{
	return get_binary(r, v, len);
}

/* ---- writer ---------------------------------------------------------- */

void floe_thrift_writer_init(floe_thrift_writer *w, floe_buf *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

static void w_bytes(floe_thrift_writer *w, const void *p, size_t n)
{
	if (w->rc == 0 && floe_buf_append(w->out, p, n))
		w->rc = FLOE_ENOMEM;
}

static void w_u8(floe_thrift_writer *w, uint8_t b)
{
	w_bytes(w, &b, 1);
}

static void w_uvarint(floe_thrift_writer *w, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	while (v >= 0x80) {
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	w_bytes(w, t, n);
}

static void w_zigzag(floe_thrift_writer *w, int64_t v)
{
	w_uvarint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void w_field(floe_thrift_writer *w, int16_t fid, int type)
{
	int16_t last = w->last_fid[w->depth];
	if (fid > last && fid - last <= 15) {
		w_u8(w, (uint8_t)((fid - last) << 4 | type));
	} else {
		w_u8(w, (uint8_t)type);
		w_zigzag(w, fid);
	}
	w->last_fid[w->depth] = fid;
}

void floe_thrift_put_bool(floe_thrift_writer *w, int16_t fid, bool v)
{
	w_field(w, fid, v ? FLOE_THRIFT_TRUE : FLOE_THRIFT_FALSE);
}

void floe_thrift_put_i8(floe_thrift_writer *w, int16_t fid, int8_t v)
{
	w_field(w, fid, FLOE_THRIFT_I8);
	w_u8(w, (uint8_t)v);
}

void floe_thrift_put_i16(floe_thrift_writer *w, int16_t fid, int16_t v)
{
	w_field(w, fid, FLOE_THRIFT_I16);
	w_zigzag(w, v);
}

void floe_thrift_put_i32(floe_thrift_writer *w, int16_t fid, int32_t v)
{
	w_field(w, fid, FLOE_THRIFT_I32);
	w_zigzag(w, v);
}

void floe_thrift_put_i64(floe_thrift_writer *w, int16_t fid, int64_t v)
{
	w_field(w, fid, FLOE_THRIFT_I64);
	w_zigzag(w, v);
}

void floe_thrift_put_double(floe_thrift_writer *w, int16_t fid, double v)
{
	w_field(w, fid, FLOE_THRIFT_DOUBLE);
	w_bytes(w, &v, 8);
}

void floe_thrift_put_binary(floe_thrift_writer *w, int16_t fid, const void *p, size_t n)
{
	w_field(w, fid, FLOE_THRIFT_BINARY);
	w_uvarint(w, n);
	w_bytes(w, p, n);
}

void floe_thrift_put_string(floe_thrift_writer *w, int16_t fid, const char *s)
{
	floe_thrift_put_binary(w, fid, s, strlen(s));
}

void floe_thrift_struct_begin_w(floe_thrift_writer *w)
{
	if (w->depth >= FLOE_THRIFT_MAX_DEPTH) {
		if (w->rc == 0)
			w->rc = FLOE_EINVAL;
		return;
	}
	w->depth++;
	w->last_fid[w->depth] = 0;
}

void floe_thrift_put_struct_begin(floe_thrift_writer *w, int16_t fid)
{
	w_field(w, fid, FLOE_THRIFT_STRUCT);
	floe_thrift_struct_begin_w(w);
}

void floe_thrift_struct_end(floe_thrift_writer *w)
{
	w_u8(w, 0);
	if (w->depth > 0)
		w->depth--;
}

void floe_thrift_put_list_begin(floe_thrift_writer *w, int16_t fid, int elem_type, size_t n)
{
	w_field(w, fid, FLOE_THRIFT_LIST);
	if (n < 15) {
		w_u8(w, (uint8_t)(n << 4 | (size_t)elem_type));
	} else {
		w_u8(w, (uint8_t)(0xf0 | elem_type));
		w_uvarint(w, n);
	}
}

void floe_thrift_elem_put_i32(floe_thrift_writer *w, int32_t v)
{
	w_zigzag(w, v);
}

void floe_thrift_elem_put_i64(floe_thrift_writer *w, int64_t v)
{
	w_zigzag(w, v);
}

void floe_thrift_elem_put_bool(floe_thrift_writer *w, bool v)
{
	w_u8(w, v ? FLOE_THRIFT_TRUE : FLOE_THRIFT_FALSE);
}

void floe_thrift_elem_put_binary(floe_thrift_writer *w, const void *p, size_t n)
{
	w_uvarint(w, n);
	w_bytes(w, p, n);
}
