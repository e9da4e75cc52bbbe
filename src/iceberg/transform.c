/*
 * transform.c — partition transforms.
 *
 * spec: "Partition Transforms" and Appendix B. Integers, dates, times and
 * timestamps hash as 8-byte little-endian longs; nanosecond timestamps are
 * floor-divided to microseconds first; decimals hash their minimal
 * big-endian two's-complement unscaled bytes; truncate uses floor semantics.
 */
#include "iceberg/transform.h"

#include <math.h>
#include <string.h>

#include "util/hash.h"
#include "util/str.h"
#include "util/timeutil.h"

int floe_transform_parse(floe_transform *out, floe_arena *a, const char *s, floe_error *err)
{
	static const struct {
		const char *name;
		floe_transform_kind kind;
	} simple[] = {{"identity", FLOE_TR_IDENTITY}, {"year", FLOE_TR_YEAR},
		      {"month", FLOE_TR_MONTH},	      {"day", FLOE_TR_DAY},
		      {"hour", FLOE_TR_HOUR},	      {"void", FLOE_TR_VOID},
		      {"years", FLOE_TR_YEAR},	      {"months", FLOE_TR_MONTH},
		      {"days", FLOE_TR_DAY},	      {"hours", FLOE_TR_HOUR}};
	size_t n = strlen(s);
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		if (floe_str_ieq(s, simple[i].name)) {
			out->kind = simple[i].kind;
			return FLOE_OK;
		}
	const char *lb = strchr(s, '[');
	if (lb && n > 0 && s[n - 1] == ']') {
		int32_t p;
		size_t wl = (size_t)(lb - s);
		if (floe_parse_i32(lb + 1, n - wl - 2, &p) && p > 0) {
			if (wl == 6 && strncmp(s, "bucket", 6) == 0) {
				out->kind = FLOE_TR_BUCKET;
				out->param = p;
				return FLOE_OK;
			}
			if (wl == 8 && strncmp(s, "truncate", 8) == 0) {
				out->kind = FLOE_TR_TRUNCATE;
				out->param = p;
				return FLOE_OK;
			}
		} else if ((wl == 6 && strncmp(s, "bucket", 6) == 0) ||
			   (wl == 8 && strncmp(s, "truncate", 8) == 0)) {
			return floe_error_corrupt(err, "transform '%s': the parameter must be a positive integer",
					      s);
		}
	}
	out->kind = FLOE_TR_UNKNOWN;
	out->text = floe_arena_strdup(a, s);
	return out->text ? FLOE_OK : FLOE_ENOMEM;
}

int floe_transform_format(floe_buf *out, const floe_transform *t)
{
	switch (t->kind) {
	case FLOE_TR_IDENTITY: return floe_buf_puts(out, "identity");
	case FLOE_TR_BUCKET: return floe_buf_printf(out, "bucket[%d]", t->param);
	case FLOE_TR_TRUNCATE: return floe_buf_printf(out, "truncate[%d]", t->param);
	case FLOE_TR_YEAR: return floe_buf_puts(out, "year");
	case FLOE_TR_MONTH: return floe_buf_puts(out, "month");
	case FLOE_TR_DAY: return floe_buf_puts(out, "day");
	case FLOE_TR_HOUR: return floe_buf_puts(out, "hour");
	case FLOE_TR_VOID: return floe_buf_puts(out, "void");
	case FLOE_TR_UNKNOWN: return floe_buf_puts(out, t->text ? t->text : "unknown");
	}
	return FLOE_EINVAL;
}

static bool is_temporal_date(floe_type_id id)
{
	return id == FLOE_T_DATE || id == FLOE_T_TIMESTAMP || id == FLOE_T_TIMESTAMPTZ ||
	       id == FLOE_T_TIMESTAMP_NS || id == FLOE_T_TIMESTAMPTZ_NS;
}

static bool is_ts(floe_type_id id)
{
	return id == FLOE_T_TIMESTAMP || id == FLOE_T_TIMESTAMPTZ || id == FLOE_T_TIMESTAMP_NS ||
	       id == FLOE_T_TIMESTAMPTZ_NS;
}

bool floe_transform_can_apply(const floe_transform *t, const floe_type *src)
{
	floe_type_id id = src->id;
	switch (t->kind) {
	case FLOE_TR_IDENTITY:
		return floe_type_is_primitive(src) && id != FLOE_T_GEOMETRY &&
		       id != FLOE_T_GEOGRAPHY && id != FLOE_T_UNKNOWN;
	case FLOE_TR_BUCKET:
		return id == FLOE_T_INT || id == FLOE_T_LONG || id == FLOE_T_DECIMAL ||
		       id == FLOE_T_DATE || id == FLOE_T_TIME || is_ts(id) || id == FLOE_T_STRING ||
		       id == FLOE_T_UUID || id == FLOE_T_FIXED || id == FLOE_T_BINARY;
	case FLOE_TR_TRUNCATE:
		return id == FLOE_T_INT || id == FLOE_T_LONG || id == FLOE_T_DECIMAL ||
		       id == FLOE_T_STRING || id == FLOE_T_BINARY;
	case FLOE_TR_YEAR:
	case FLOE_TR_MONTH:
	case FLOE_TR_DAY: return is_temporal_date(id);
	case FLOE_TR_HOUR: return is_ts(id);
	case FLOE_TR_VOID: return true;
	case FLOE_TR_UNKNOWN: return false;
	}
	return false;
}

const floe_type *floe_transform_result_type(const floe_transform *t, const floe_type *src)
{
	switch (t->kind) {
	case FLOE_TR_BUCKET:
	case FLOE_TR_YEAR:
	case FLOE_TR_MONTH:
	case FLOE_TR_HOUR: return floe_type_primitive(FLOE_T_INT);
	case FLOE_TR_DAY: return floe_type_primitive(FLOE_T_DATE);
	default: return src;
	}
}

bool floe_transform_preserves_order(const floe_transform *t)
{
	return t->kind == FLOE_TR_IDENTITY || t->kind == FLOE_TR_TRUNCATE ||
	       t->kind == FLOE_TR_YEAR || t->kind == FLOE_TR_MONTH || t->kind == FLOE_TR_DAY ||
	       t->kind == FLOE_TR_HOUR;
}

static int32_t hash_long(int64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)((uint64_t)v >> (8 * i));
	return (int32_t)floe_murmur3_32(b, 8, 0);
}

int32_t floe_bucket_hash(const floe_value *v, const floe_type *t)
{
	(void)t;
	switch (v->type) {
	case FLOE_T_BOOLEAN: return hash_long(v->v.b ? 1 : 0);
	case FLOE_T_INT:
	case FLOE_T_DATE: return hash_long(v->v.i32);
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ: return hash_long(v->v.i64);
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: return hash_long(floe_floordiv(v->v.i64, 1000));
	case FLOE_T_FLOAT:
	case FLOE_T_DOUBLE: {
		double d = v->type == FLOE_T_FLOAT ? (double)v->v.f32 : v->v.f64;
		int64_t bits;
		if (d == 0.0)
			d = 0.0; /* -0.0 hashes like 0.0 */
		if (isnan(d))
			bits = INT64_C(0x7ff8000000000000);
		else
			memcpy(&bits, &d, 8);
		return hash_long(bits);
	}
	case FLOE_T_DECIMAL: {
		uint8_t b[16];
		size_t n = floe_i128_to_be_min(v->v.dec, b);
		return (int32_t)floe_murmur3_32(b, n, 0);
	}
	default: return (int32_t)floe_murmur3_32(v->v.bin.p, v->v.bin.n, 0);
	}
}

/* Number of bytes of the first w code points of s (never splits a sequence). */
static size_t utf8_prefix(const uint8_t *s, size_t n, int32_t w)
{
	size_t i = 0;
	int32_t cps = 0;
	while (i < n && cps < w) {
		uint8_t c = s[i];
		size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		if (i + k > n)
			k = n - i;
		i += k;
		cps++;
	}
	return i;
}

/* Months since 1970-01 of a day number (floor). */
static int32_t months_of_days(int64_t days)
{
	int64_t y;
	int m, d;
	floe_civil_from_days(days, &y, &m, &d);
	return (int32_t)((y - 1970) * 12 + (m - 1));
}

static int64_t micros_of(const floe_value *in)
{
	if (in->type == FLOE_T_TIMESTAMP_NS || in->type == FLOE_T_TIMESTAMPTZ_NS)
		return floe_floordiv(in->v.i64, 1000);
	return in->v.i64;
}

int floe_transform_apply(floe_value *out, const floe_transform *t, const floe_type *src,
			 const floe_value *in, floe_error *err)
{
	const floe_type *rt = floe_transform_result_type(t, src);
	if (t->kind == FLOE_TR_UNKNOWN)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "unknown transform '%s'",
				      t->text ? t->text : "?");
	*out = floe_value_null(rt->id);
	if (in->is_null || t->kind == FLOE_TR_VOID)
		return FLOE_OK;
	out->is_null = false;
	switch (t->kind) {
	case FLOE_TR_IDENTITY: *out = *in; return FLOE_OK;
	case FLOE_TR_BUCKET:
		out->v.i32 = (int32_t)(((uint32_t)floe_bucket_hash(in, src) & 0x7fffffffu) %
				       (uint32_t)t->param);
		return FLOE_OK;
	case FLOE_TR_TRUNCATE:
		*out = *in;
		switch (in->type) {
		case FLOE_T_INT: {
			/* Java int arithmetic (wraps); floor toward negative infinity */
			int64_t v = in->v.i32, w = t->param;
			out->v.i32 = (int32_t)(v - floe_floormod(v, w));
			return FLOE_OK;
		}
		case FLOE_T_LONG: {
			int64_t v = in->v.i64, w = t->param;
			out->v.i64 = (int64_t)((uint64_t)v - (uint64_t)floe_floormod(v, w));
			return FLOE_OK;
		}
		case FLOE_T_DECIMAL: {
			floe_i128 v = in->v.dec, w = t->param, m = v % w;
			if (m < 0)
				m += w;
			out->v.dec = v - m;
			/* a negative value can round down past the precision
			 * (truncate[100] of -99999999.99 is -100000000.00, 11 digits in
			 * decimal(10, 2)): Java cannot write that partition value and
			 * refuses the record; so does floe */
			if (src && src->id == FLOE_T_DECIMAL && src->precision > 0 &&
			    src->precision < 39) {
				floe_i128 lim = 1;
				for (int32_t k = 0; k < src->precision; k++)
					lim *= 10;
				if (out->v.dec <= -lim || out->v.dec >= lim) {
					char a[64], b[64];
					floe_decimal_format(a, sizeof(a), v, src->scale);
					floe_decimal_format(b, sizeof(b), out->v.dec, src->scale);
					return floe_error_set(err, FLOE_EINVAL,
							      "truncate[%d] of %s is %s, which does not "
							      "fit decimal(%d, %d)",
							      (int)t->param, a, b, (int)src->precision,
							      (int)src->scale);
				}
			}
			return FLOE_OK;
		}
		case FLOE_T_STRING:
			out->v.bin.n = utf8_prefix(in->v.bin.p, in->v.bin.n, t->param);
			return FLOE_OK;
		case FLOE_T_BINARY:
			if (out->v.bin.n > (size_t)t->param)
				out->v.bin.n = (size_t)t->param;
			return FLOE_OK;
		default: break;
		}
		break;
	case FLOE_TR_YEAR:
	case FLOE_TR_MONTH:
	case FLOE_TR_DAY:
	case FLOE_TR_HOUR: {
		int64_t days, us = 0;
		if (in->type == FLOE_T_DATE) {
			if (t->kind == FLOE_TR_HOUR)
				break;
			days = in->v.i32;
		} else if (is_ts(in->type)) {
			us = micros_of(in);
			days = floe_floordiv(us, FLOE_US_PER_DAY);
		} else {
			break;
		}
		if (t->kind == FLOE_TR_DAY) {
			out->v.i32 = (int32_t)days;
		} else if (t->kind == FLOE_TR_HOUR) {
			out->v.i32 = (int32_t)floe_floordiv(us, FLOE_US_PER_HOUR);
		} else if (t->kind == FLOE_TR_MONTH) {
			out->v.i32 = months_of_days(days);
		} else {
			out->v.i32 = (int32_t)floe_floordiv(months_of_days(days), 12);
		}
		return FLOE_OK;
	}
	default: break;
	}
	return floe_error_set(err, FLOE_EINVAL, "transform cannot apply to this value type");
}

int floe_transform_human(floe_buf *out, const floe_transform *t, const floe_type *src,
			 const floe_value *result)
{
	if (result->is_null)
		return floe_buf_puts(out, "null");
	switch (t->kind) {
	case FLOE_TR_YEAR: return floe_buf_printf(out, "%04d", 1970 + result->v.i32);
	case FLOE_TR_MONTH: {
		int64_t y = 1970 + floe_floordiv(result->v.i32, 12);
		int m = (int)floe_floormod(result->v.i32, 12) + 1;
		return floe_buf_printf(out, "%04lld-%02d", (long long)y, m);
	}
	case FLOE_TR_DAY: {
		floe_value d = *result;
		d.type = FLOE_T_DATE;
		return floe_value_human(out, &d, floe_type_primitive(FLOE_T_DATE));
	}
	case FLOE_TR_HOUR: {
		int64_t days = floe_floordiv(result->v.i32, 24);
		int64_t y;
		int m, d;
		floe_civil_from_days(days, &y, &m, &d);
		return floe_buf_printf(out, "%04lld-%02d-%02d-%02d", (long long)y, m, d,
				       (int)floe_floormod(result->v.i32, 24));
	}
	case FLOE_TR_BUCKET: return floe_buf_printf(out, "%d", result->v.i32);
	default: return floe_value_human(out, result, floe_transform_result_type(t, src));
	}
}
