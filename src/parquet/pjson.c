/*
 * pjson.c — Arrow batches to JSON lines (see pjson.h for the value forms).
 */
#include "parquet/pjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_check.h"
#include "arrow/arrow_fmt.h"
#include "util/alloc.h"
#include "util/str.h"
#include "util/timeutil.h"

typedef struct jnode jnode;
struct jnode {
	floe_arrow_fmt f;
	const char *name;
	int n;
	jnode *c;
};

static void jfree(jnode *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->n; i++)
		jfree(&j->c[i]);
	floe_free(j->c);
}

static int jbuild(jnode *j, const struct ArrowSchema *s, int depth, floe_error *err)
{
	int rc;
	memset(j, 0, sizeof(*j));
	if (depth > 64)
		return floe_error_set(err, FLOE_EINVAL, "schema nested too deeply");
	if ((rc = floe_arrow_fmt_parse(&j->f, s->format, err)))
		return rc;
	j->name = s->name ? s->name : "";
	if (s->n_children > 0) {
		j->c = floe_calloc((size_t)s->n_children, sizeof(*j->c));
		if (!j->c)
			return floe_error_oom(err);
		for (int64_t i = 0; i < s->n_children; i++) {
			j->n = (int)i + 1;
			if ((rc = jbuild(&j->c[i], s->children[i], depth + 1, err)))
				return rc;
		}
	}
	return FLOE_OK;
}

static int put_str(floe_buf *o, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t start = 0;
	if (floe_buf_putc(o, '"'))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = p[i];
		char esc[7];
		size_t el = 0;
		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		switch (ch) {
		case '"': memcpy(esc, "\\\"", 2), el = 2; break;
		case '\\': memcpy(esc, "\\\\", 2), el = 2; break;
		case '\n': memcpy(esc, "\\n", 2), el = 2; break;
		case '\r': memcpy(esc, "\\r", 2), el = 2; break;
		case '\t': memcpy(esc, "\\t", 2), el = 2; break;
		case '\b': memcpy(esc, "\\b", 2), el = 2; break;
		case '\f': memcpy(esc, "\\f", 2), el = 2; break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[ch >> 4];
			esc[5] = hex[ch & 15];
			el = 6;
			break;
		}
		if (floe_buf_append(o, p + start, i - start) || floe_buf_append(o, esc, el))
			return FLOE_ENOMEM;
		start = i + 1;
	}
	if (floe_buf_append(o, p + start, n - start) || floe_buf_putc(o, '"'))
		return FLOE_ENOMEM;
	return FLOE_OK;
}

static int put_cstr(floe_buf *o, const char *s)
{
	return put_str(o, (const uint8_t *)s, strlen(s));
}

static int put_double(floe_buf *o, double d)
{
	char buf[64];
	if (isnan(d))
		return floe_buf_puts(o, "\"NaN\"");
	if (isinf(d))
		return floe_buf_puts(o, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return floe_buf_puts(o, buf);
}

static int put_float(floe_buf *o, float f)
{
	char buf[64];
	if (isnan(f))
		return floe_buf_puts(o, "\"NaN\"");
	if (isinf(f))
		return floe_buf_puts(o, f > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	for (int p = 1; p <= 9; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, (double)f);
		if ((float)strtod(buf, NULL) == f)
			break;
	}
	return floe_buf_puts(o, buf);
}

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	float f;
	if (exp == 0) {
		if (man == 0) {
			bits = sign;
		} else {
			/* subnormal: normalise */
			exp = 1;
			while (!(man & 0x400)) {
				man <<= 1;
				exp--;
			}
			man &= 0x3ff;
			bits = sign | (exp + 112) << 23 | man << 13;
		}
	} else if (exp == 31) {
		bits = sign | 0x7f800000u | man << 13;
	} else {
		bits = sign | (exp + 112) << 23 | man << 13;
	}
	memcpy(&f, &bits, 4);
	return f;
}

/* 128-bit two's complement (little-endian) as decimal text with a scale. */
static int put_decimal(floe_buf *o, const uint8_t *p, int width, int scale)
{
	uint64_t lo, hi;
	bool neg;
	char digits[160];
	int nd = 0;
	if (width == 16) {
		memcpy(&lo, p, 8);
		memcpy(&hi, p + 8, 8);
	} else {
		return floe_buf_puts(o, "null");
	}
	neg = hi >> 63;
	if (neg) {
		lo = ~lo + 1;
		hi = ~hi + (lo == 0);
	}
	do {
		uint64_t r = hi % 10, x, y;
		hi /= 10;
		x = (r << 32) | (lo >> 32);
		uint64_t q1 = x / 10;
		r = x % 10;
		y = (r << 32) | (lo & 0xffffffffu);
		lo = (q1 << 32) | (y / 10);
		digits[nd++] = (char)('0' + y % 10);
	} while (hi || lo);
	while (nd <= scale)
		digits[nd++] = '0';
	if (floe_buf_putc(o, '"') || (neg && floe_buf_putc(o, '-')))
		return FLOE_ENOMEM;
	for (int i = nd - 1; i >= 0; i--) {
		if (floe_buf_putc(o, digits[i]))
			return FLOE_ENOMEM;
		if (i == scale && scale > 0 && floe_buf_putc(o, '.'))
			return FLOE_ENOMEM;
	}
	return floe_buf_putc(o, '"');
}

static int put_time(floe_buf *o, int64_t v, floe_arrow_unit u)
{
	char buf[64];
	int64_t ns;
	int digits;
	switch (u) {
	case FLOE_ARROW_SECOND: ns = v * 1000000000; digits = 0; break;
	case FLOE_ARROW_MILLI: ns = v * 1000000; digits = 3; break;
	case FLOE_ARROW_MICRO: ns = v * 1000; digits = 6; break;
	default: ns = v; digits = 9; break;
	}
	int64_t sec = floe_floordiv(ns, 1000000000), frac = ns - sec * 1000000000;
	int n = snprintf(buf, sizeof(buf), "\"%02d:%02d:%02d", (int)(sec / 3600), (int)(sec / 60 % 60),
			 (int)(sec % 60));
	if (digits)
		snprintf(buf + n, sizeof(buf) - (size_t)n, ".%09lld", (long long)frac);
	if (digits)
		buf[n + 1 + digits] = 0;
	return floe_buf_puts(o, buf) || floe_buf_putc(o, '"') ? FLOE_ENOMEM : FLOE_OK;
}

static int put_timestamp(floe_buf *o, int64_t v, const floe_arrow_fmt *f)
{
	char buf[64];
	size_t n;
	switch (f->unit) {
	case FLOE_ARROW_SECOND:
		n = floe_format_timestamp_us(buf, sizeof(buf), v * 1000000, 0);
		if ((v * 1000000) / 1000000 != v)
			n = (size_t)snprintf(buf, sizeof(buf), "%lld", (long long)v);
		break;
	case FLOE_ARROW_MILLI:
		n = floe_format_timestamp_us(buf, sizeof(buf), v * 1000, 3);
		break;
	case FLOE_ARROW_MICRO: n = floe_format_timestamp_us(buf, sizeof(buf), v, 6); break;
	default: n = floe_format_timestamp_ns(buf, sizeof(buf), v, 9); break;
	}
	if (f->tz && *f->tz && n + 1 < sizeof(buf)) {
		buf[n++] = 'Z';
		buf[n] = 0;
	}
	if (floe_buf_putc(o, '"') || floe_buf_append(o, buf, n) || floe_buf_putc(o, '"'))
		return FLOE_ENOMEM;
	return FLOE_OK;
}

static int put_value(floe_buf *o, const jnode *j, const struct ArrowArray *a, int64_t i);

static int put_object(floe_buf *o, const jnode *j, const struct ArrowArray *a, int64_t idx)
{
	if (floe_buf_putc(o, '{'))
		return FLOE_ENOMEM;
	for (int k = 0; k < j->n; k++) {
		if ((k && floe_buf_putc(o, ',')) || put_cstr(o, j->c[k].name) || floe_buf_putc(o, ':'))
			return FLOE_ENOMEM;
		if (put_value(o, &j->c[k], a->children[k], idx))
			return FLOE_ENOMEM;
	}
	return floe_buf_putc(o, '}');
}

static int put_value(floe_buf *o, const jnode *j, const struct ArrowArray *a, int64_t i)
{
	const floe_arrow_fmt *f = &j->f;
	int64_t idx = i + a->offset;
	const uint8_t *b1 = a->n_buffers > 1 ? a->buffers[1] : NULL;
	if (f->type == FLOE_ARROW_NA || !floe_arrow_is_valid(a, i))
		return floe_buf_puts(o, "null");
	switch (f->type) {
	case FLOE_ARROW_BOOL:
		return floe_buf_puts(o, (b1[idx >> 3] >> (idx & 7)) & 1 ? "true" : "false");
	case FLOE_ARROW_INT8: return floe_buf_printf(o, "%d", (int)((const int8_t *)b1)[idx]);
	case FLOE_ARROW_UINT8: return floe_buf_printf(o, "%u", (unsigned)b1[idx]);
	case FLOE_ARROW_INT16: return floe_buf_printf(o, "%d", (int)((const int16_t *)(const void *)b1)[idx]);
	case FLOE_ARROW_UINT16:
		return floe_buf_printf(o, "%u", (unsigned)((const uint16_t *)(const void *)b1)[idx]);
	case FLOE_ARROW_INT32: return floe_buf_printf(o, "%d", ((const int32_t *)(const void *)b1)[idx]);
	case FLOE_ARROW_UINT32: return floe_buf_printf(o, "%u", ((const uint32_t *)(const void *)b1)[idx]);
	case FLOE_ARROW_INT64:
		return floe_buf_printf(o, "%lld", (long long)((const int64_t *)(const void *)b1)[idx]);
	case FLOE_ARROW_UINT64:
		return floe_buf_printf(o, "%llu",
				       (unsigned long long)((const uint64_t *)(const void *)b1)[idx]);
	case FLOE_ARROW_HALF_FLOAT: {
		uint16_t h;
		memcpy(&h, b1 + 2 * idx, 2);
		return put_float(o, half_to_float(h));
	}
	case FLOE_ARROW_FLOAT: return put_float(o, ((const float *)(const void *)b1)[idx]);
	case FLOE_ARROW_DOUBLE: return put_double(o, ((const double *)(const void *)b1)[idx]);
	case FLOE_ARROW_DECIMAL128: return put_decimal(o, b1 + 16 * idx, 16, f->scale);
	case FLOE_ARROW_DATE32: {
		char buf[40];
		size_t n = floe_format_date(buf, sizeof(buf), ((const int32_t *)(const void *)b1)[idx]);
		return floe_buf_putc(o, '"') || floe_buf_append(o, buf, n) || floe_buf_putc(o, '"')
			       ? FLOE_ENOMEM
			       : FLOE_OK;
	}
	case FLOE_ARROW_DATE64: {
		char buf[40];
		int64_t ms = ((const int64_t *)(const void *)b1)[idx];
		size_t n = floe_format_date(buf, sizeof(buf), floe_floordiv(ms, 86400000));
		return floe_buf_putc(o, '"') || floe_buf_append(o, buf, n) || floe_buf_putc(o, '"')
			       ? FLOE_ENOMEM
			       : FLOE_OK;
	}
	case FLOE_ARROW_TIME32: return put_time(o, ((const int32_t *)(const void *)b1)[idx], f->unit);
	case FLOE_ARROW_TIME64: return put_time(o, ((const int64_t *)(const void *)b1)[idx], f->unit);
	case FLOE_ARROW_TIMESTAMP: return put_timestamp(o, ((const int64_t *)(const void *)b1)[idx], f);
	case FLOE_ARROW_DURATION:
		return floe_buf_printf(o, "%lld", (long long)((const int64_t *)(const void *)b1)[idx]);
	case FLOE_ARROW_STRING:
	case FLOE_ARROW_BINARY: {
		const int32_t *off = (const int32_t *)(const void *)b1;
		const uint8_t *data = a->buffers[2];
		size_t n = (size_t)(off[idx + 1] - off[idx]);
		if (f->type == FLOE_ARROW_STRING)
			return put_str(o, data + off[idx], n);
		return floe_buf_putc(o, '"') || floe_base64_encode(o, data + off[idx], n) ||
			       floe_buf_putc(o, '"')
			       ? FLOE_ENOMEM
			       : FLOE_OK;
	}
	case FLOE_ARROW_LARGE_STRING:
	case FLOE_ARROW_LARGE_BINARY: {
		const int64_t *off = (const int64_t *)(const void *)b1;
		const uint8_t *data = a->buffers[2];
		size_t n = (size_t)(off[idx + 1] - off[idx]);
		if (f->type == FLOE_ARROW_LARGE_STRING)
			return put_str(o, data + off[idx], n);
		return floe_buf_putc(o, '"') || floe_base64_encode(o, data + off[idx], n) ||
			       floe_buf_putc(o, '"')
			       ? FLOE_ENOMEM
			       : FLOE_OK;
	}
	case FLOE_ARROW_FIXED_BINARY:
		return floe_buf_putc(o, '"') ||
			       floe_base64_encode(o, b1 + (size_t)f->width * (size_t)idx, (size_t)f->width) ||
			       floe_buf_putc(o, '"')
			       ? FLOE_ENOMEM
			       : FLOE_OK;
	case FLOE_ARROW_STRUCT: return put_object(o, j, a, idx);
	case FLOE_ARROW_LIST:
	case FLOE_ARROW_LARGE_LIST:
	case FLOE_ARROW_MAP: {
		int64_t s, e;
		const jnode *c = &j->c[0];
		const struct ArrowArray *ca = a->children[0];
		if (f->type == FLOE_ARROW_LARGE_LIST) {
			s = ((const int64_t *)(const void *)b1)[idx];
			e = ((const int64_t *)(const void *)b1)[idx + 1];
		} else {
			s = ((const int32_t *)(const void *)b1)[idx];
			e = ((const int32_t *)(const void *)b1)[idx + 1];
		}
		if (floe_buf_putc(o, '['))
			return FLOE_ENOMEM;
		for (int64_t k = s; k < e; k++) {
			if (k > s && floe_buf_putc(o, ','))
				return FLOE_ENOMEM;
			if (f->type == FLOE_ARROW_MAP) {
				int64_t ck = k + ca->offset;
				if (floe_buf_putc(o, '[') || put_value(o, &c->c[0], ca->children[0], ck) ||
				    floe_buf_putc(o, ',') || put_value(o, &c->c[1], ca->children[1], ck) ||
				    floe_buf_putc(o, ']'))
					return FLOE_ENOMEM;
			} else if (put_value(o, c, ca, k)) {
				return FLOE_ENOMEM;
			}
		}
		return floe_buf_putc(o, ']');
	}
	case FLOE_ARROW_FIXED_LIST: {
		int64_t w = f->width;
		if (floe_buf_putc(o, '['))
			return FLOE_ENOMEM;
		for (int64_t k = 0; k < w; k++) {
			if ((k && floe_buf_putc(o, ',')) || put_value(o, &j->c[0], a->children[0], idx * w + k))
				return FLOE_ENOMEM;
		}
		return floe_buf_putc(o, ']');
	}
	default: return floe_buf_puts(o, "null");
	}
}

int floe_parquet__json_rows(floe_buf *out, const struct ArrowSchema *s, const struct ArrowArray *a,
			    int64_t from, int64_t to, floe_error *err)
{
	jnode j;
	int rc;
	if ((rc = floe_arrow_check(s, a, err)))
		return rc;
	if ((rc = jbuild(&j, s, 0, err)))
		goto done;
	if (j.f.type != FLOE_ARROW_STRUCT) {
		rc = floe_error_set(err, FLOE_EINVAL, "JSON rows need a struct batch");
		goto done;
	}
	for (int64_t i = from; i < to && i < a->length; i++) {
		if (put_object(out, &j, a, i + a->offset) || floe_buf_putc(out, '\n')) {
			rc = floe_error_oom(err);
			break;
		}
	}
done:
	jfree(&j);
	return rc;
}
