/*
 * variant.c — variant values to JSON text (see variant.h).
 *
 * spec: Parquet VariantEncoding.md. Layout reminders: the metadata starts
 * with a header byte (version 1 in the low 4 bits, the offset size minus one
 * in bits 6-7), the dictionary size and size+1 offsets into the string
 * bytes. A value's first byte holds the basic type (low 2 bits) and a 6-bit
 * header: the primitive type id, the short string's length, or the sizes
 * of an object's (field id, offset) or an array's offset fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/value.h"
#include "iceberg/variant.h"
#include "json/json.h"
#include "util/str.h"
#include "util/timeutil.h"

typedef struct vctx {
	const uint8_t *meta;
	size_t meta_len;
	unsigned dict_off_size;
	uint64_t dict_size;
	const uint8_t *dict_offsets, *dict_bytes;
	size_t dict_bytes_len;
	floe_buf *out;
	floe_error *err;
} vctx;

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int bad(vctx *c, const char *what)
{
	return floe_error_corrupt(c->err, "variant: %s", what);
}

static int put(vctx *c, const char *s, size_t n)
{
	return floe_buf_append(c->out, s, n) ? floe_error_oom(c->err)
					     : FLOE_OK;
}

static int put_str(vctx *c, const uint8_t *p, size_t n)
{
	return floe_json_escape(c->out, (const char *)p, n)
		       ? floe_error_oom(c->err)
		       : FLOE_OK;
}

static int open_metadata(vctx *c)
{
	if (c->meta_len < 1)
		return bad(c, "empty metadata");
	uint8_t h = c->meta[0];
	if ((h & 0x0f) != 1)
		return bad(c, "metadata version is not 1");
	c->dict_off_size = (unsigned)((h >> 6) & 3) + 1;
	size_t pos = 1;
	if (c->meta_len - pos < c->dict_off_size)
		return bad(c, "metadata too short");
	c->dict_size = le(c->meta + pos, c->dict_off_size);
	pos += c->dict_off_size;
	if (c->dict_size > (c->meta_len - pos) / c->dict_off_size ||
	    (c->dict_size + 1) * c->dict_off_size > c->meta_len - pos)
		return bad(c, "metadata dictionary larger than the metadata");
	c->dict_offsets = c->meta + pos;
	pos += (size_t)(c->dict_size + 1) * c->dict_off_size;
	c->dict_bytes = c->meta + pos;
	c->dict_bytes_len = c->meta_len - pos;
	return FLOE_OK;
}

static int dict_key(vctx *c, uint64_t id, const uint8_t **p, size_t *n)
{
	if (id >= c->dict_size)
		return bad(c, "field id outside the metadata dictionary");
	uint64_t a = le(c->dict_offsets + id * c->dict_off_size, c->dict_off_size);
	uint64_t b = le(c->dict_offsets + (id + 1) * c->dict_off_size, c->dict_off_size);
	if (a > b || b > c->dict_bytes_len)
		return bad(c, "metadata string offsets out of range");
	*p = c->dict_bytes + a;
	*n = (size_t)(b - a);
	return FLOE_OK;
}

static int render(vctx *c, const uint8_t *p, size_t n, int depth);

static int put_timestamp(vctx *c, int64_t v, bool nanos, bool utc)
{
	char t[64];
	size_t k = nanos ? floe_format_timestamp_ns(t, sizeof(t), v, 9)
			 : floe_format_timestamp_us(t, sizeof(t), v, 6);
	if (k == 0 || k + 10 > sizeof(t))
		return bad(c, "timestamp out of range");
	char *tee = memchr(t, 'T', k);
	if (tee)
		*tee = ' ';
	if (!nanos) { /* nine digits, as for nanoseconds */
		memcpy(t + k, "000", 3);
		k += 3;
	}
	if (utc) {
		memcpy(t + k, "+00:00", 6);
		k += 6;
	}
	return put_str(c, (const uint8_t *)t, k);
}

static int primitive(vctx *c, unsigned type, const uint8_t *p, size_t n, size_t *used)
{
	static const size_t width[] = {0, 0, 0, 1, 2, 4, 8, 8, 5, 9, 17, 4, 8, 8, 4, 4, 4, 8, 8, 8, 16};
	char t[64];
	if (type >= sizeof(width) / sizeof(width[0]))
		return bad(c, "unknown primitive type");
	if (n < width[type])
		return bad(c, "value shorter than its type");
	*used = width[type];
	switch (type) {
	case 0: return put(c, "null", 4);
	case 1: return put(c, "true", 4);
	case 2: return put(c, "false", 5);
	case 3:
	case 4:
	case 5:
	case 6: {
		unsigned w = (unsigned)width[type];
		uint64_t u = le(p, w);
		int64_t v;
		if (w < 8 && (u >> (8 * w - 1)) & 1)
			u |= ~(uint64_t)0 << (8 * w); /* sign-extend */
		memcpy(&v, &u, 8);
		int k = snprintf(t, sizeof(t), "%lld", (long long)v);
		return put(c, t, (size_t)k);
	}
	case 7:
	case 14: {
		double d;
		if (type == 7) {
			uint64_t u = le(p, 8);
			memcpy(&d, &u, 8);
		} else {
			uint32_t u = (uint32_t)le(p, 4);
			float f;
			memcpy(&f, &u, 4);
			if (f == f && f - f == 0) {
				/* the shortest text that reads back as this float */
				for (int prec = 1; prec <= 9; prec++) {
					int k = snprintf(t, sizeof(t), "%.*g", prec, (double)f);
					if (k > 0 && strtof(t, NULL) == f)
						return put(c, t, (size_t)k);
				}
			}
			d = f;
		}
		if (d != d || d - d != 0)
			return put(c, "null", 4); /* JSON has no NaN or infinities */
		size_t k = floe_json_format_double(t, sizeof(t), d);
		return put(c, t, k);
	}
	case 8:
	case 9:
	case 10: {
		unsigned w = type == 8 ? 4 : type == 9 ? 8 : 16;
		uint8_t scale = p[0];
		if (scale > 38)
			return bad(c, "decimal scale above 38");
		floe_i128 v;
		if (w == 16) {
			uint64_t lo = le(p + 1, 8), hi = le(p + 9, 8);
			int64_t shi;
			memcpy(&shi, &hi, 8);
			v = (floe_i128)shi * ((floe_i128)1 << 64) + (floe_i128)lo;
		} else {
			uint64_t u = le(p + 1, w);
			if (w < 8 && (u >> (8 * w - 1)) & 1)
				u |= ~(uint64_t)0 << (8 * w); /* sign-extend */
			int64_t sv;
			memcpy(&sv, &u, 8);
			v = sv;
		}
		size_t k = floe_decimal_format(t, sizeof(t), v, scale);
		return put(c, t, k);
	}
	case 11: {
		uint32_t u = (uint32_t)le(p, 4);
		int32_t days;
		memcpy(&days, &u, 4);
		size_t k = floe_format_date(t, sizeof(t), days);
		return put_str(c, (const uint8_t *)t, k);
	}
	case 12:
	case 13:
	case 18:
	case 19: {
		uint64_t u = le(p, 8);
		int64_t v;
		memcpy(&v, &u, 8);
		return put_timestamp(c, v, type >= 18, type == 12 || type == 18);
	}
	case 17: {
		uint64_t u = le(p, 8);
		int64_t v;
		memcpy(&v, &u, 8);
		size_t k = floe_format_time_us(t, sizeof(t), v, 6);
		if (k == 0)
			return bad(c, "time out of range");
		return put_str(c, (const uint8_t *)t, k);
	}
	case 15:
	case 16: {
		uint64_t len = le(p, 4);
		if (len > n - 4)
			return bad(c, "string or binary longer than the value");
		*used = 4 + (size_t)len;
		if (type == 16) {
			if (!floe_utf8_valid(p + 4, (size_t)len))
				return bad(c, "string is not UTF-8");
			return put_str(c, p + 4, (size_t)len);
		}
		floe_buf b64;
		floe_buf_init(&b64, 0);
		int rc = floe_base64_encode(&b64, p + 4, (size_t)len);
		if (!rc)
			rc = put_str(c, b64.data, b64.len);
		else
			rc = floe_error_oom(c->err);
		floe_buf_reset(&b64);
		return rc;
	}
	case 20: {
		static const char hex[] = "0123456789abcdef";
		size_t k = 0;
		for (int i = 0; i < 16; i++) {
			if (i == 4 || i == 6 || i == 8 || i == 10)
				t[k++] = '-';
			t[k++] = hex[p[i] >> 4];
			t[k++] = hex[p[i] & 15];
		}
		return put_str(c, (const uint8_t *)t, k);
	}
	default: return bad(c, "unknown primitive type");
	}
}

/* An object or array: count, [ids,] offsets, then the values. */
static int container(vctx *c, bool object, unsigned vh, const uint8_t *p, size_t n, int depth)
{
	unsigned off_size = (vh & 3) + 1;
	unsigned id_size = object ? ((vh >> 2) & 3) + 1 : 0;
	bool large = object ? (vh >> 4) & 1 : (vh >> 2) & 1;
	unsigned count_size = large ? 4 : 1;
	if (n < count_size)
		return bad(c, "container shorter than its header");
	uint64_t count = le(p, count_size);
	size_t pos = count_size;
	uint64_t per = (uint64_t)id_size + off_size;
	if (count > (n - pos) / (per ? per : 1) || count * per + off_size > n - pos)
		return bad(c, "container larger than the value");
	const uint8_t *ids = p + pos;
	const uint8_t *offs = ids + count * id_size;
	const uint8_t *vals = offs + (count + 1) * off_size;
	size_t vals_len = n - (size_t)(vals - p);
	uint64_t total = le(offs + count * off_size, off_size);
	if (total > vals_len)
		return bad(c, "container values past the end");
	int rc = put(c, object ? "{" : "[", 1);
	for (uint64_t i = 0; i < count && !rc; i++) {
		if (i)
			rc = put(c, ",", 1);
		if (!rc && object) {
			const uint8_t *k = NULL;
			size_t kn = 0;
			rc = dict_key(c, le(ids + i * id_size, id_size), &k, &kn);
			if (!rc && !floe_utf8_valid(k, kn))
				rc = bad(c, "field name is not UTF-8");
			if (!rc)
				rc = put_str(c, k, kn);
			if (!rc)
				rc = put(c, ":", 1);
		}
		if (rc)
			break;
		uint64_t off = le(offs + i * off_size, off_size);
		if (off >= total)
			return bad(c, "container offset out of range");
		rc = render(c, vals + off, (size_t)(total - off), depth + 1);
	}
	return rc ? rc : put(c, object ? "}" : "]", 1);
}

static int render(vctx *c, const uint8_t *p, size_t n, int depth)
{
	if (depth > FLOE_VARIANT_MAX_DEPTH)
		return bad(c, "nested too deeply");
	if (n < 1)
		return bad(c, "empty value");
	unsigned basic = p[0] & 3, vh = p[0] >> 2;
	size_t used;
	switch (basic) {
	case 0: return primitive(c, vh, p + 1, n - 1, &used);
	case 1:
		if (vh > n - 1)
			return bad(c, "short string longer than the value");
		if (!floe_utf8_valid(p + 1, vh))
			return bad(c, "string is not UTF-8");
		return put_str(c, p + 1, vh);
	case 2: return container(c, true, vh, p + 1, n - 1, depth);
	default: return container(c, false, vh, p + 1, n - 1, depth);
	}
}

int floe_variant_to_json(floe_buf *out, const uint8_t *metadata, size_t metadata_len,
			 const uint8_t *value, size_t value_len, floe_error *err)
{
	vctx c;
	memset(&c, 0, sizeof(c));
	c.meta = metadata;
	c.meta_len = metadata_len;
	c.out = out;
	c.err = err;
	int rc = open_metadata(&c);
	return rc ? rc : render(&c, value, value_len, 0);
}
