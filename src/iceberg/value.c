/*
 * value.c — single values: binary and JSON single-value serialization, human
 * strings, comparison.
 */
#include "iceberg/value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/rand.h"
#include "util/str.h"
#include "util/timeutil.h"

/* ---- 128-bit helpers --------------------------------------------------------- */

size_t floe_i128_to_be_min(floe_i128 v, uint8_t out[16])
{
	uint8_t full[16];
	floe_u128 u = (floe_u128)v;
	size_t start = 0;
	for (int i = 15; i >= 0; i--) {
		full[i] = (uint8_t)u;
		u >>= 8;
	}
	/* drop leading bytes that are pure sign extension */
	while (start < 15) {
		uint8_t b = full[start], next = full[start + 1];
		if ((b == 0x00 && !(next & 0x80)) || (b == 0xff && (next & 0x80)))
			start++;
		else
			break;
	}
	memcpy(out, full + start, 16 - start);
	return 16 - start;
}

floe_i128 floe_i128_from_be(const uint8_t *p, size_t n)
{
	floe_u128 u = 0;
	if (n == 0)
		return 0;
	if (n > 16)
		n = 16;
	u = (p[0] & 0x80) ? ~(floe_u128)0 : 0;
	for (size_t i = 0; i < n; i++)
		u = (u << 8) | p[i];
	return (floe_i128)u;
}

size_t floe_decimal_format(char *out, size_t cap, floe_i128 unscaled, int32_t scale)
{
	char digits[48];
	size_t nd = 0, o = 0;
	bool neg = unscaled < 0;
	floe_u128 u = neg ? -(floe_u128)unscaled : (floe_u128)unscaled;
	do {
		digits[nd++] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (scale < 0) {
		/* BigDecimal.toString: unscaled "E+" -scale */
		if (neg && o + 1 < cap)
			out[o++] = '-';
		while (nd && o + 1 < cap)
			out[o++] = digits[--nd];
		int n = snprintf(out + o, cap - o, "E+%d", -scale);
		return o + (n > 0 ? (size_t)n : 0);
	}
	while (nd <= (size_t)scale)
		digits[nd++] = '0';
	if (neg && o + 1 < cap)
		out[o++] = '-';
	for (size_t i = nd; i > 0; i--) {
		if (i == (size_t)scale && scale > 0 && o + 1 < cap)
			out[o++] = '.';
		if (o + 1 < cap)
			out[o++] = digits[i - 1];
	}
	if (cap)
		out[o < cap ? o : cap - 1] = 0;
	return o;
}

int floe_decimal_parse(floe_i128 *out, const char *s, size_t n, int32_t precision, int32_t scale)
{
	floe_u128 u = 0;
	int ndig = 0, frac = 0;
	bool neg = false, dot = false, any = false;
	int64_t exp = 0;
	size_t i = 0;
	if (n && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i++;
	}
	for (; i < n; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			any = true;
			if (u == 0 && c == '0' && !dot)
				continue; /* leading zeros */
			if (ndig >= 39)
				return FLOE_EINVAL;
			u = u * 10 + (unsigned)(c - '0');
			if (u != 0 || dot)
				ndig++;
			if (dot)
				frac++;
		} else if (c == '.' && !dot) {
			dot = true;
		} else if ((c == 'e' || c == 'E') && any) {
			if (!floe_parse_i64(s + i + 1, n - i - 1, &exp) || exp > 100 || exp < -100)
				return FLOE_EINVAL;
			break;
		} else {
			return FLOE_EINVAL;
		}
	}
	if (!any)
		return FLOE_EINVAL;
	int64_t shift = scale - (frac - exp); /* multiply by 10^shift */
	while (shift > 0) {
		if (u > ((floe_u128)1 << 126) / 5)
			return FLOE_EINVAL;
		u *= 10;
		shift--;
	}
	while (shift < 0) {
		if (u % 10 != 0)
			return FLOE_EINVAL; /* would lose precision */
		u /= 10;
		shift++;
	}
	/* precision check */
	floe_u128 limit = 1;
	for (int k = 0; k < precision; k++)
		limit *= 10;
	if (u >= limit)
		return FLOE_EINVAL;
	*out = neg ? -(floe_i128)u : (floe_i128)u;
	return FLOE_OK;
}

/* ---- binary single-value serialization -------------------------------------- */

int floe_value_to_bytes(floe_buf *out, const floe_value *v)
{
	uint8_t t[16];
	switch (v->type) {
	case FLOE_T_BOOLEAN: t[0] = v->v.b ? 1 : 0; return floe_buf_append(out, t, 1);
	case FLOE_T_INT:
	case FLOE_T_DATE: return floe_buf_put_u32le(out, (uint32_t)v->v.i32);
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: return floe_buf_put_u64le(out, (uint64_t)v->v.i64);
	case FLOE_T_FLOAT: {
		uint32_t b;
		memcpy(&b, &v->v.f32, 4);
		return floe_buf_put_u32le(out, b);
	}
	case FLOE_T_DOUBLE: {
		uint64_t b;
		memcpy(&b, &v->v.f64, 8);
		return floe_buf_put_u64le(out, b);
	}
	case FLOE_T_DECIMAL: {
		size_t n = floe_i128_to_be_min(v->v.dec, t);
		return floe_buf_append(out, t, n);
	}
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
	case FLOE_T_FIXED:
	case FLOE_T_UUID: return floe_buf_append(out, v->v.bin.p, v->v.bin.n);
	default: return FLOE_EUNSUPPORTED;
	}
}

static int bad_len(floe_error *err, const floe_type *t, size_t n)
{
	floe_buf b;
	int rc;
	floe_buf_init(&b, 64);
	if (floe_type_format(&b, t))
		floe_buf_clear(&b);
	rc = floe_error_corrupt(err, "a %s value cannot be %zu bytes long",
			    floe_buf_cstr(&b), n);
	floe_buf_reset(&b);
	return rc;
}

int floe_value_from_bytes(floe_value *out, const floe_type *t, const uint8_t *p, size_t n,
			  floe_error *err)
{
	memset(out, 0, sizeof(*out));
	out->type = t->id;
	switch (t->id) {
	case FLOE_T_BOOLEAN:
		if (n != 1)
			return bad_len(err, t, n);
		out->v.b = p[0] != 0;
		return FLOE_OK;
	case FLOE_T_INT:
	case FLOE_T_DATE:
		if (n != 4)
			return bad_len(err, t, n);
		out->v.i32 = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				       (uint32_t)p[3] << 24);
		return FLOE_OK;
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		if (n == 4 && t->id != FLOE_T_TIME) {
			/* promoted: int -> long, or date -> timestamp */
			int32_t x = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
					      (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
			if (t->id == FLOE_T_LONG)
				out->v.i64 = x;
			else if (t->id == FLOE_T_TIMESTAMP_NS || t->id == FLOE_T_TIMESTAMPTZ_NS)
				out->v.i64 = (int64_t)x * 86400 * INT64_C(1000000000);
			else
				out->v.i64 = (int64_t)x * FLOE_US_PER_DAY;
			return FLOE_OK;
		}
		if (n != 8)
			return bad_len(err, t, n);
		{
			uint64_t x = 0;
			for (int i = 7; i >= 0; i--)
				x = x << 8 | p[i];
			out->v.i64 = (int64_t)x;
		}
		return FLOE_OK;
	case FLOE_T_FLOAT:
		if (n != 4)
			return bad_len(err, t, n);
		{
			uint32_t x = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24;
			memcpy(&out->v.f32, &x, 4);
		}
		return FLOE_OK;
	case FLOE_T_DOUBLE:
		if (n == 4) { /* promoted from float */
			uint32_t x = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24;
			float f;
			memcpy(&f, &x, 4);
			out->v.f64 = f;
			return FLOE_OK;
		}
		if (n != 8)
			return bad_len(err, t, n);
		{
			uint64_t x = 0;
			for (int i = 7; i >= 0; i--)
				x = x << 8 | p[i];
			memcpy(&out->v.f64, &x, 8);
		}
		return FLOE_OK;
	case FLOE_T_DECIMAL:
		if (n == 0 || n > 16)
			return bad_len(err, t, n);
		out->v.dec = floe_i128_from_be(p, n);
		return FLOE_OK;
	case FLOE_T_UUID:
		if (n != 16)
			return bad_len(err, t, n);
		out->v.bin.p = p;
		out->v.bin.n = n;
		return FLOE_OK;
	case FLOE_T_FIXED:
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
		out->v.bin.p = p;
		out->v.bin.n = n;
		return FLOE_OK;
	default:
		return floe_error_set(err, FLOE_EUNSUPPORTED, "no single-value form for this type");
	}
}

/* ---- text forms --------------------------------------------------------------- */

/* Java's Float/Double.toString: shortest round-trip digits; plain notation for
 * 1e-3 <= |v| < 1e7 with at least one fraction digit, else d.dddE[-]n. */
static size_t java_float_str(char *out, size_t cap, double v, bool is_float)
{
	char t[64];
	int prec;
	if (isnan(v))
		return (size_t)snprintf(out, cap, "NaN");
	if (isinf(v))
		return (size_t)snprintf(out, cap, v > 0 ? "Infinity" : "-Infinity");
	if (v == 0)
		return (size_t)snprintf(out, cap, signbit(v) ? "-0.0" : "0.0");
	for (prec = 1; prec <= 17; prec++) {
		snprintf(t, sizeof(t), "%.*e", prec - 1, v);
		if (is_float ? (float)strtod(t, NULL) == (float)v : strtod(t, NULL) == v)
			break;
	}
	/* t = "-d.ddde+XX" */
	char *e = strchr(t, 'e');
	int exp = (int)strtol(e + 1, NULL, 10);
	*e = 0;
	char digits[32];
	size_t nd = 0;
	bool neg = t[0] == '-';
	for (char *c = t; *c; c++)
		if (*c >= '0' && *c <= '9')
			digits[nd++] = *c;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = 0;
	double av = fabs(v);
	size_t o = 0;
	char buf[80];
	if (neg)
		buf[o++] = '-';
	if (av >= 1e-3 && av < 1e7) {
		if (exp >= 0) {
			for (int i = 0; i <= exp; i++)
				buf[o++] = (size_t)i < nd ? digits[i] : '0';
			buf[o++] = '.';
			if ((size_t)exp + 1 < nd)
				for (size_t i = (size_t)exp + 1; i < nd; i++)
					buf[o++] = digits[i];
			else
				buf[o++] = '0';
		} else {
			buf[o++] = '0';
			buf[o++] = '.';
			for (int i = 0; i < -exp - 1; i++)
				buf[o++] = '0';
			for (size_t i = 0; i < nd; i++)
				buf[o++] = digits[i];
		}
		buf[o] = 0;
	} else {
		buf[o++] = digits[0];
		buf[o++] = '.';
		if (nd > 1)
			for (size_t i = 1; i < nd; i++)
				buf[o++] = digits[i];
		else
			buf[o++] = '0';
		buf[o] = 0;
		snprintf(buf + o, sizeof(buf) - o, "E%d", exp);
	}
	return (size_t)snprintf(out, cap, "%s", buf);
}

/* Java LocalTime.toString style: HH:mm[:ss[.SSS|.SSSSSS|.SSSSSSSSS]] */
static size_t java_tod(char *out, size_t cap, int64_t nanos_of_day)
{
	int64_t sec = nanos_of_day / 1000000000, nano = nanos_of_day % 1000000000;
	int n = snprintf(out, cap, "%02d:%02d", (int)(sec / 3600), (int)(sec / 60 % 60));
	if (n < 0)
		return 0;
	if (sec % 60 || nano) {
		n += snprintf(out + n, cap - (size_t)n, ":%02d", (int)(sec % 60));
		if (nano) {
			if (nano % 1000000 == 0)
				n += snprintf(out + n, cap - (size_t)n, ".%03d", (int)(nano / 1000000));
			else if (nano % 1000 == 0)
				n += snprintf(out + n, cap - (size_t)n, ".%06d", (int)(nano / 1000));
			else
				n += snprintf(out + n, cap - (size_t)n, ".%09d", (int)nano);
		}
	}
	return (size_t)n;
}

/*
 * Java's DateTimeFormatter.ISO_LOCAL_TIME, which DateTimeUtil.microsToIso-
 * Timestamp[tz] (the human string of timestamps) uses: seconds always, the
 * fraction with its trailing zeros stripped (appendFraction(NANO, 0, 9)).
 * LocalTime.toString() (java_tod, used for time values) drops zero seconds.
 */
static size_t java_iso_tod(char *out, size_t cap, int64_t nanos_of_day)
{
	int64_t sec = nanos_of_day / 1000000000, nano = nanos_of_day % 1000000000;
	int digits = 9;
	int n = snprintf(out, cap, "%02d:%02d:%02d", (int)(sec / 3600), (int)(sec / 60 % 60),
			 (int)(sec % 60));
	if (n < 0)
		return 0;
	if (nano) {
		while (nano % 10 == 0) {
			nano /= 10;
			digits--;
		}
		n += snprintf(out + n, cap - (size_t)n, ".%0*d", digits, (int)nano);
	}
	return (size_t)n;
}

static size_t java_datetime(char *out, size_t cap, int64_t v, bool nanos)
{
	int64_t per_day = nanos ? INT64_C(86400000000000) : FLOE_US_PER_DAY;
	int64_t days = floe_floordiv(v, per_day);
	int64_t rem = v - days * per_day;
	size_t n = floe_format_date(out, cap, days);
	if (n + 1 < cap)
		out[n++] = 'T';
	return n + java_iso_tod(out + n, cap - n, nanos ? rem : rem * 1000);
}

int floe_value_human(floe_buf *out, const floe_value *v, const floe_type *t)
{
	char tmp[96];
	size_t n;
	if (v->is_null)
		return floe_buf_puts(out, "null");
	switch (v->type) {
	case FLOE_T_BOOLEAN: return floe_buf_puts(out, v->v.b ? "true" : "false");
	case FLOE_T_INT: return floe_buf_printf(out, "%d", v->v.i32);
	case FLOE_T_LONG: return floe_buf_printf(out, "%lld", (long long)v->v.i64);
	case FLOE_T_FLOAT:
		n = java_float_str(tmp, sizeof(tmp), v->v.f32, true);
		return floe_buf_append(out, tmp, n);
	case FLOE_T_DOUBLE:
		n = java_float_str(tmp, sizeof(tmp), v->v.f64, false);
		return floe_buf_append(out, tmp, n);
	case FLOE_T_DECIMAL:
		n = floe_decimal_format(tmp, sizeof(tmp), v->v.dec, t ? t->scale : 0);
		return floe_buf_append(out, tmp, n);
	case FLOE_T_DATE:
		n = floe_format_date(tmp, sizeof(tmp), v->v.i32);
		return floe_buf_append(out, tmp, n);
	case FLOE_T_TIME:
		n = java_tod(tmp, sizeof(tmp), v->v.i64 * 1000);
		return floe_buf_append(out, tmp, n);
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
		n = java_datetime(tmp, sizeof(tmp), v->v.i64, false);
		if (v->type == FLOE_T_TIMESTAMPTZ)
			n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "+00:00");
		return floe_buf_append(out, tmp, n);
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		n = java_datetime(tmp, sizeof(tmp), v->v.i64, true);
		if (v->type == FLOE_T_TIMESTAMPTZ_NS)
			n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "+00:00");
		return floe_buf_append(out, tmp, n);
	case FLOE_T_STRING: return floe_buf_append(out, v->v.bin.p, v->v.bin.n);
	case FLOE_T_UUID: {
		char u[37];
		if (v->v.bin.n != 16)
			return FLOE_EINVAL;
		floe_uuid_format(v->v.bin.p, u);
		return floe_buf_puts(out, u);
	}
	case FLOE_T_BINARY:
	case FLOE_T_FIXED: return floe_base64_encode(out, v->v.bin.p, v->v.bin.n);
	default: return FLOE_EUNSUPPORTED;
	}
}

/* ---- JSON single-value form ----------------------------------------------- */

void floe_value_write_json(floe_jw *w, const floe_value *v, const floe_type *t)
{
	char tmp[96];
	size_t n;
	if (v->is_null) {
		floe_jw_null(w);
		return;
	}
	switch (v->type) {
	case FLOE_T_BOOLEAN: floe_jw_bool(w, v->v.b); break;
	case FLOE_T_INT: floe_jw_i64(w, v->v.i32); break;
	case FLOE_T_LONG: floe_jw_i64(w, v->v.i64); break;
	case FLOE_T_FLOAT: floe_jw_double(w, v->v.f32); break;
	case FLOE_T_DOUBLE: floe_jw_double(w, v->v.f64); break;
	case FLOE_T_DECIMAL:
		n = floe_decimal_format(tmp, sizeof(tmp), v->v.dec, t ? t->scale : 0);
		floe_jw_strn(w, tmp, n);
		break;
	case FLOE_T_DATE:
		n = floe_format_date(tmp, sizeof(tmp), v->v.i32);
		floe_jw_strn(w, tmp, n);
		break;
	case FLOE_T_TIME:
		n = floe_format_time_us(tmp, sizeof(tmp), v->v.i64, 6);
		floe_jw_strn(w, tmp, n);
		break;
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
		n = floe_format_timestamp_us(tmp, sizeof(tmp), v->v.i64, 6);
		if (v->type == FLOE_T_TIMESTAMPTZ)
			n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "+00:00");
		floe_jw_strn(w, tmp, n);
		break;
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		n = floe_format_timestamp_ns(tmp, sizeof(tmp), v->v.i64, 9);
		if (v->type == FLOE_T_TIMESTAMPTZ_NS)
			n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "+00:00");
		floe_jw_strn(w, tmp, n);
		break;
	case FLOE_T_STRING: floe_jw_strn(w, (const char *)v->v.bin.p, v->v.bin.n); break;
	case FLOE_T_UUID: {
		char u[37];
		floe_uuid_format(v->v.bin.p, u);
		floe_jw_str(w, u);
		break;
	}
	case FLOE_T_BINARY:
	case FLOE_T_FIXED: {
		floe_buf b;
		floe_buf_init(&b, 0);
		if (floe_hex_encode(&b, v->v.bin.p, v->v.bin.n) == 0)
			floe_jw_strn(w, floe_buf_cstr(&b), b.len);
		else if (!w->rc)
			w->rc = FLOE_ENOMEM;
		floe_buf_reset(&b);
		break;
	}
	default:
		if (!w->rc)
			w->rc = FLOE_EUNSUPPORTED;
	}
}

static int json_bad(floe_error *err, const floe_type *t, const char *why)
{
	floe_buf b;
	int rc;
	floe_buf_init(&b, 64);
	if (floe_type_format(&b, t))
		floe_buf_clear(&b);
	rc = floe_error_corrupt(err, "bad %s value: %s", floe_buf_cstr(&b), why);
	floe_buf_reset(&b);
	return rc;
}

int floe_value_from_json(floe_value *out, floe_arena *a, const floe_type *t, const floe_json *j,
			 floe_error *err)
{
	memset(out, 0, sizeof(*out));
	out->type = t->id;
	if (floe_json_is_null(j)) {
		out->is_null = true;
		return FLOE_OK;
	}
	switch (t->id) {
	case FLOE_T_BOOLEAN:
		if (j->type != FLOE_JSON_BOOL)
			return json_bad(err, t, "expected true or false");
		out->v.b = j->b;
		return FLOE_OK;
	case FLOE_T_INT:
		if (floe_json_as_i32(j, &out->v.i32))
			return json_bad(err, t, "expected a 32-bit integer");
		return FLOE_OK;
	case FLOE_T_LONG:
		if (floe_json_as_i64(j, &out->v.i64))
			return json_bad(err, t, "expected an integer");
		return FLOE_OK;
	case FLOE_T_FLOAT:
	case FLOE_T_DOUBLE:
		if (j->type != FLOE_JSON_NUMBER)
			return json_bad(err, t, "expected a number");
		if (t->id == FLOE_T_FLOAT)
			out->v.f32 = (float)j->d;
		else
			out->v.f64 = j->d;
		return FLOE_OK;
	default: break;
	}
	if (j->type != FLOE_JSON_STRING)
		return json_bad(err, t, "expected a string");
	switch (t->id) {
	case FLOE_T_DECIMAL:
		if (floe_decimal_parse(&out->v.dec, j->s, j->len, t->precision, t->scale))
			return json_bad(err, t, j->s);
		return FLOE_OK;
	case FLOE_T_DATE: {
		int64_t d;
		if (!floe_parse_date(j->s, j->len, &d))
			return json_bad(err, t, j->s);
		out->v.i32 = (int32_t)d;
		return FLOE_OK;
	}
	case FLOE_T_TIME: {
		int64_t ns;
		if (!floe_parse_time_ns(j->s, j->len, &ns))
			return json_bad(err, t, j->s);
		out->v.i64 = ns / 1000;
		return FLOE_OK;
	}
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ: {
		bool z;
		if (!floe_parse_timestamp_us(j->s, j->len, &out->v.i64, &z))
			return json_bad(err, t, j->s);
		return FLOE_OK;
	}
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: {
		bool z;
		if (!floe_parse_timestamp_ns(j->s, j->len, &out->v.i64, &z))
			return json_bad(err, t, j->s);
		return FLOE_OK;
	}
	case FLOE_T_STRING:
		out->v.bin.p = (const uint8_t *)j->s;
		out->v.bin.n = j->len;
		return floe_value_own(out, a);
	case FLOE_T_UUID: {
		uint8_t *u = floe_arena_alloc(a, 16);
		if (!u)
			return FLOE_ENOMEM;
		if (!floe_uuid_parse(j->s, j->len, u))
			return json_bad(err, t, j->s);
		out->v.bin.p = u;
		out->v.bin.n = 16;
		return FLOE_OK;
	}
	case FLOE_T_BINARY:
	case FLOE_T_FIXED: {
		floe_buf b;
		floe_buf_init(&b, 0);
		if (floe_hex_decode(&b, j->s, j->len)) {
			floe_buf_reset(&b);
			return json_bad(err, t, "expected a hex string");
		}
		out->v.bin.n = b.len;
		out->v.bin.p = floe_arena_memdup(a, b.data ? b.data : (const uint8_t *)"", b.len);
		floe_buf_reset(&b);
		return out->v.bin.p ? FLOE_OK : FLOE_ENOMEM;
	}
	default: return floe_error_set(err, FLOE_EUNSUPPORTED, "no JSON single-value form");
	}
}

/* ---- comparison --------------------------------------------------------------- */

static int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;
	if (c)
		return c < 0 ? -1 : 1;
	return an < bn ? -1 : an > bn;
}

static int cmp_double(double a, double b)
{
	bool na = isnan(a), nb = isnan(b);
	if (na || nb)
		return na == nb ? 0 : na ? 1 : -1;
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	/* -0.0 < +0.0 */
	return signbit(a) == signbit(b) ? 0 : signbit(a) ? -1 : 1;
}

int floe_value_compare(const floe_value *a, const floe_value *b)
{
	switch (a->type) {
	case FLOE_T_BOOLEAN: return (int)a->v.b - (int)b->v.b;
	case FLOE_T_INT:
	case FLOE_T_DATE: return a->v.i32 < b->v.i32 ? -1 : a->v.i32 > b->v.i32;
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: return a->v.i64 < b->v.i64 ? -1 : a->v.i64 > b->v.i64;
	case FLOE_T_FLOAT: return cmp_double(a->v.f32, b->v.f32);
	case FLOE_T_DOUBLE: return cmp_double(a->v.f64, b->v.f64);
	case FLOE_T_DECIMAL: return a->v.dec < b->v.dec ? -1 : a->v.dec > b->v.dec;
	default: return cmp_bytes(a->v.bin.p, a->v.bin.n, b->v.bin.p, b->v.bin.n);
	}
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t x = 0;
	for (int i = 0; i < 8; i++)
		x = x << 8 | p[i];
	return x;
}

static void put_be64(uint8_t *p, uint64_t x)
{
	for (int i = 7; i >= 0; i--, x >>= 8)
		p[i] = (uint8_t)x;
}

void floe_uuid_bounds_both_orders(const uint8_t lo[16], const uint8_t hi[16], uint8_t out_lo[16],
				  uint8_t out_hi[16], bool *has_lo, bool *has_hi)
{
	memcpy(out_lo, lo, 16);
	memcpy(out_hi, hi, 16);
	*has_lo = *has_hi = false;
	/* values on both sides of the top bit: below 0x80.. in one order, above it
	 * in the other; no pair of bounds covers them in both (Java's issue #14216) */
	if ((lo[0] ^ hi[0]) & 0x80)
		return;
	/* all share the top bit, so the high halves order alike; values with the
	 * same high half order by their low halves, alike only when those share
	 * their top bit too */
	bool same_msb = memcmp(lo, hi, 8) == 0;
	uint64_t lm = be64(lo), hm = be64(hi);
	*has_lo = true;
	if (!(lo[8] & 0x80) && !(same_msb && !(hi[8] & 0x80))) {
		/* a value (lm, 8x..) may lie below lo in Java's order: step the high half
		 * down, unless that crosses the top bit */
		if (lm == 0 || lm == 0x8000000000000000ull) {
			*has_lo = false;
		} else {
			put_be64(out_lo, lm - 1);
			memset(out_lo + 8, 0xff, 8);
		}
	}
	*has_hi = true;
	if ((hi[8] & 0x80) && !(same_msb && (lo[8] & 0x80))) {
		/* a value (hm, 0x..) may lie above hi in Java's order */
		if (hm == 0x7fffffffffffffffull || hm == 0xffffffffffffffffull) {
			*has_hi = false;
		} else {
			put_be64(out_hi, hm + 1);
			memset(out_hi + 8, 0, 8);
		}
	}
}

bool floe_value_equal(const floe_value *a, const floe_value *b)
{
	if (a->is_null || b->is_null)
		return a->is_null && b->is_null;
	if (a->type != b->type)
		return false;
	if (a->type == FLOE_T_FLOAT || a->type == FLOE_T_DOUBLE) {
		double x = a->type == FLOE_T_FLOAT ? a->v.f32 : a->v.f64;
		double y = b->type == FLOE_T_FLOAT ? b->v.f32 : b->v.f64;
		if (isnan(x) || isnan(y))
			return isnan(x) && isnan(y);
		uint64_t bx, by;
		memcpy(&bx, &x, 8);
		memcpy(&by, &y, 8);
		return bx == by;
	}
	return floe_value_compare(a, b) == 0;
}

uint64_t floe_value_hash(const floe_value *v)
{
	if (v->is_null)
		return 0x9e3779b97f4a7c15ULL;
	switch (v->type) {
	case FLOE_T_BOOLEAN: return floe_hash_u64(v->v.b);
	case FLOE_T_INT:
	case FLOE_T_DATE: return floe_hash_u64((uint64_t)(int64_t)v->v.i32);
	case FLOE_T_FLOAT:
	case FLOE_T_DOUBLE: {
		double d = v->type == FLOE_T_FLOAT ? v->v.f32 : v->v.f64;
		uint64_t b;
		if (isnan(d))
			d = NAN;
		memcpy(&b, &d, 8);
		return floe_hash_u64(b);
	}
	case FLOE_T_DECIMAL: {
		uint64_t lo = (uint64_t)v->v.dec, hi = (uint64_t)((floe_u128)v->v.dec >> 64);
		return floe_hash_u64(lo ^ floe_hash_u64(hi));
	}
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
	case FLOE_T_FIXED:
	case FLOE_T_UUID: return floe_hash64(v->v.bin.p, v->v.bin.n);
	default: return floe_hash_u64((uint64_t)v->v.i64);
	}
}

int floe_value_own(floe_value *v, floe_arena *a)
{
	switch (v->type) {
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
	case FLOE_T_FIXED:
	case FLOE_T_UUID:
		if (v->is_null)
			return FLOE_OK;
		{
			uint8_t *p = floe_arena_alloc(a, v->v.bin.n + 1);
			if (!p)
				return FLOE_ENOMEM;
			if (v->v.bin.n)
				memcpy(p, v->v.bin.p, v->v.bin.n);
			p[v->v.bin.n] = 0;
			v->v.bin.p = p;
		}
		return FLOE_OK;
	default: return FLOE_OK;
	}
}
