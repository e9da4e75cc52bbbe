/*
 * stream_coerce.c — value coercions shared by the decoders: text and JSON
 * numbers into Iceberg-typed columns.
 *
 * What users expect from Flink's JSON and CSV formats, with Iceberg's types:
 * ISO-8601 timestamps with or without a zone (a zone is applied, none means
 * UTC), epoch numbers in a configured unit, decimals from strings or numbers
 * rounded half-up to the scale (Flink's DecimalData rule) and rejected when
 * they overflow the precision, dates from "YYYY-MM-DD" (or a timestamp's UTC
 * date, or epoch days), canonical UUIDs, base64 binary.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "stream/stream_builder.h"
#include "util/rand.h"
#include "util/timeutil.h"

void stream_reason_set(stream_reason *r, const char *fmt, ...)
{
	va_list ap;
	if (!r)
		return;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
}

void stream_reason_prefix(stream_reason *r, const char *name, size_t n, const char *sep)
{
	char tmp[sizeof(r->msg)];
	size_t k = 0, sl = strlen(sep), ml = strlen(r->msg);
	if (n > 64)
		n = 64;
	memcpy(tmp, name, n);
	k = n;
	memcpy(tmp + k, sep, sl);
	k += sl;
	if (ml > sizeof(tmp) - 1 - k)
		ml = sizeof(tmp) - 1 - k;
	memcpy(tmp + k, r->msg, ml);
	k += ml;
	tmp[k] = 0;
	memcpy(r->msg, tmp, k + 1);
}

bool stream_parse_i64(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	uint64_t v = 0;
	if (n == 0)
		return false;
	if (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-';
		i = 1;
		if (n == 1)
			return false;
	}
	for (; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9)
			return false;
		if (v > (UINT64_C(9223372036854775808) - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (neg) {
		*out = v == UINT64_C(9223372036854775808) ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return false;
		*out = (int64_t)v;
	}
	return true;
}

static const double pow10_tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

bool stream_parse_f64(const char *s, size_t n, double *out)
{
	/* Clinger's fast path: a mantissa below 2^53 scaled by an exact power
	 * of ten is correctly rounded; everything else goes to strtod. */
	size_t i = 0;
	bool neg = false;
	uint64_t m = 0;
	int digits = 0, exp10 = 0;
	if (n == 0)
		return false;
	if (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-';
		i++;
	}
	size_t start = i;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		if (digits < 19) {
			m = m * 10 + (uint64_t)(s[i] - '0');
			if (m)
				digits++;
		} else {
			exp10++;
			digits++;
		}
		i++;
	}
	bool any = i > start;
	if (i < n && s[i] == '.') {
		i++;
		size_t fs = i;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			if (digits < 19) {
				m = m * 10 + (uint64_t)(s[i] - '0');
				if (m)
					digits++;
				exp10--;
			} else {
				digits++;
			}
			i++;
		}
		any = any || i > fs;
	}
	if (!any)
		goto slow;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		int64_t e = 0;
		bool eneg = false;
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+')) {
			eneg = s[i] == '-';
			i++;
		}
		size_t es = i;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			if (e < 100000)
				e = e * 10 + (s[i] - '0');
			i++;
		}
		if (i == es)
			return false;
		exp10 += (int)(eneg ? -e : e);
	}
	if (i != n)
		goto slow;
	if (digits <= 15 && m < (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22) {
		double d = (double)m;
		d = exp10 < 0 ? d / pow10_tab[-exp10] : d * pow10_tab[exp10];
		*out = neg ? -d : d;
		return true;
	}
slow:;
	char tmp[512];
	char *end;
	if (n >= sizeof(tmp))
		return false;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	if (tmp[0] == ' ' || tmp[0] == '\t' || tmp[0] == '\n')
		return false;
	errno = 0;
	double v = strtod(tmp, &end);
	if (end != tmp + n)
		return false;
	*out = v;
	return true;
}

static floe_i128 pow10_i128(int k)
{
	floe_i128 v = 1;
	for (int i = 0; i < k; i++)
		v *= 10;
	return v;
}

bool stream_parse_decimal(const char *s, size_t n, int32_t precision, int32_t scale,
			  floe_i128 *out)
{
	size_t i = 0;
	bool neg = false, round_up = false, any = false;
	floe_i128 m = 0;
	int sig = 0;
	int64_t exp10 = 0;
	if (n == 0 || precision < 1 || precision > 38 || scale < 0 || scale > precision)
		return false;
	if (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-';
		i++;
	}
	{
		/* fast path: plain "123.45" with at most 18 digits and no more
		 * fraction digits than the scale */
		uint64_t u = 0;
		size_t k = i, digits = 0, frac = 0;
		bool dot = false;
		for (; k < n; k++) {
			unsigned dg = (unsigned)(s[k] - '0');
			if (dg <= 9) {
				u = u * 10 + dg;
				digits++;
				frac += dot;
			} else if (s[k] == '.' && !dot) {
				dot = true;
			} else {
				break;
			}
		}
		if (k == n && digits > 0 && digits <= 18 && frac <= (size_t)scale &&
		    !(dot && frac == 0 && digits == 0)) {
			static const uint64_t p10[19] = {1ULL,
							 10ULL,
							 100ULL,
							 1000ULL,
							 10000ULL,
							 100000ULL,
							 1000000ULL,
							 10000000ULL,
							 100000000ULL,
							 1000000000ULL,
							 10000000000ULL,
							 100000000000ULL,
							 1000000000000ULL,
							 10000000000000ULL,
							 100000000000000ULL,
							 1000000000000000ULL,
							 10000000000000000ULL,
							 100000000000000000ULL,
							 1000000000000000000ULL};
			size_t up = (size_t)scale - frac;
			if (digits + up <= 18) {
				uint64_t v = u * p10[up];
				if (precision >= 19 || v < p10[precision]) {
					*out = neg ? -(floe_i128)v : (floe_i128)v;
					return true;
				}
				return false;
			}
		}
	}
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		any = true;
		if (sig < 38) {
			m = m * 10 + (s[i] - '0');
			if (m)
				sig++;
		} else {
			return false; /* more than 38 integer digits */
		}
	}
	if (i < n && s[i] == '.') {
		i++;
		bool dropped = false;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			any = true;
			if (sig < 38 && !dropped) {
				m = m * 10 + (s[i] - '0');
				if (m)
					sig++;
				exp10--;
			} else if (!dropped) {
				dropped = true;
				round_up = s[i] >= '5';
			}
		}
	}
	if (!any)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		int64_t e = 0;
		bool eneg = false;
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+')) {
			eneg = s[i] == '-';
			i++;
		}
		size_t es = i;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (e < 1000)
				e = e * 10 + (s[i] - '0');
		if (i == es)
			return false;
		exp10 += eneg ? -e : e;
	}
	if (i != n)
		return false;
	if (round_up)
		m += 1;
	int64_t shift = exp10 + scale;
	if (shift >= 0) {
		if (m != 0 && shift > 38)
			return false;
		floe_i128 p = pow10_i128((int)shift);
		if (m != 0 && m > pow10_i128(38) / p)
			return false;
		m *= p;
	} else {
		int64_t k = -shift;
		if (k > 38) {
			m = 0;
		} else {
			floe_i128 p = pow10_i128((int)k);
			floe_i128 q = m / p, r = m % p;
			if (r * 2 >= p)
				q++;
			m = q;
		}
	}
	if (m >= pow10_i128(precision))
		return false;
	*out = neg ? -m : m;
	return true;
}

bool stream_utf8_valid(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		/* ASCII fast path, 8 bytes at a time */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (w & UINT64_C(0x8080808080808080))
				break;
			i += 8;
		}
		if (i >= n)
			break;
		uint8_t c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		uint32_t cp;
		if ((c & 0xE0) == 0xC0) {
			len = 2;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			len = 3;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (i + len > n)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((p[i + k] & 0xC0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3F);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += len;
	}
	return true;
}

static const char *type_name(const stream_col *c)
{
	switch (c->type->id) {
	case FLOE_T_BOOLEAN:
		return "boolean";
	case FLOE_T_INT:
		return "int";
	case FLOE_T_LONG:
		return "long";
	case FLOE_T_FLOAT:
		return "float";
	case FLOE_T_DOUBLE:
		return "double";
	case FLOE_T_DECIMAL:
		return "decimal";
	case FLOE_T_DATE:
		return "date";
	case FLOE_T_TIME:
		return "time";
	case FLOE_T_TIMESTAMP:
		return "timestamp";
	case FLOE_T_TIMESTAMPTZ:
		return "timestamptz";
	case FLOE_T_TIMESTAMP_NS:
		return "timestamp_ns";
	case FLOE_T_TIMESTAMPTZ_NS:
		return "timestamptz_ns";
	case FLOE_T_STRING:
		return "string";
	case FLOE_T_UUID:
		return "uuid";
	case FLOE_T_FIXED:
		return "fixed";
	case FLOE_T_BINARY:
		return "binary";
	case FLOE_T_STRUCT:
		return "struct";
	case FLOE_T_LIST:
		return "list";
	case FLOE_T_MAP:
		return "map";
	default:
		return "?";
	}
}

/* Quote at most 40 bytes of a value for a reason message. */
static void excerpt(char *out, size_t cap, const char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 4 < cap && i < 40; i++) {
		char ch = s[i];
		out[k++] = (ch >= 0x20 && ch < 0x7f) ? ch : '?';
	}
	if (n > 40 && k + 4 < cap) {
		out[k++] = '.';
		out[k++] = '.';
		out[k++] = '.';
	}
	out[k] = 0;
}

static int bad(stream_reason *why, const stream_col *c, const char *s, size_t n, const char *what)
{
	char ex[64];
	excerpt(ex, sizeof(ex), s, n);
	stream_reason_set(why, "'%s' is not %s%s", ex, what ? what : "a valid ", what ? "" : type_name(c));
	return FLOE_EINVAL;
}

static bool epoch_to_unit(int64_t v, stream_epoch_unit u, bool nanos, int64_t *out)
{
	/* to micros (nanos when the column is a _ns type) */
	int64_t mul = 1, div = 1;
	switch (u) {
	case STREAM_EPOCH_S:
		mul = nanos ? 1000000000 : 1000000;
		break;
	case STREAM_EPOCH_MS:
		mul = nanos ? 1000000 : 1000;
		break;
	case STREAM_EPOCH_US:
		mul = nanos ? 1000 : 1;
		break;
	case STREAM_EPOCH_NS:
		if (nanos)
			mul = 1;
		else
			div = 1000;
		break;
	}
	if (div > 1) {
		*out = floe_floordiv(v, div);
		return true;
	}
	return !__builtin_mul_overflow(v, mul, out);
}

static bool epoch_double(double d, stream_epoch_unit u, bool nanos, int64_t *out)
{
	static const double per_s[] = {1e3, 1, 1e6, 1e9}; /* units per second, by enum */
	double target = nanos ? 1e9 : 1e6;
	double v = d / per_s[u] * target;
	if (!(v > -9.2e18 && v < 9.2e18))
		return false;
	*out = (int64_t)floor(v);
	return true;
}

static int put_epoch(stream_col *c, const char *s, size_t n, const stream_coerce_opts *o,
		     stream_reason *why)
{
	bool nanos = c->type->id == FLOE_T_TIMESTAMP_NS || c->type->id == FLOE_T_TIMESTAMPTZ_NS;
	int64_t v, r;
	double d;
	stream_epoch_unit u = o ? o->epoch_unit : STREAM_EPOCH_MS;
	if (stream_parse_i64(s, n, &v)) {
		if (!epoch_to_unit(v, u, nanos, &r))
			return bad(why, c, s, n, "an epoch time in range");
		return stream_col_put_i64(c, r);
	}
	if (stream_parse_f64(s, n, &d) && epoch_double(d, u, nanos, &r))
		return stream_col_put_i64(c, r);
	return bad(why, c, s, n, NULL);
}

static const int8_t hexv[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* The canonical 8-4-4-4-12 form, case-insensitive (hexv holds digit + 1). */
static bool uuid_parse_fast(const char *s, size_t n, uint8_t out[16])
{
	static const uint8_t pos[16] = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};
	int bad = 0;
	if (n != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
		return false;
	for (int i = 0; i < 16; i++) {
		int hi = hexv[(uint8_t)s[pos[i]]], lo = hexv[(uint8_t)s[pos[i] + 1]];
		bad |= !hi | !lo;
		out[i] = (uint8_t)(((unsigned)(hi - 1) & 0xFu) << 4 | ((unsigned)(lo - 1) & 0xFu));
	}
	return !bad;
}

static inline bool dig2(const char *p, int *v)
{
	unsigned a = (unsigned)(p[0] - '0'), b = (unsigned)(p[1] - '0');
	if (a > 9 || b > 9)
		return false;
	*v = (int)(a * 10 + b);
	return true;
}

/*
 * The common shape "YYYY-MM-DD[T ]HH:MM:SS[.fraction][Z|+HH:MM|+HHMM]" at
 * fixed positions, without the generic parser's calls; false for anything
 * else (the caller falls back to floe_parse_timestamp_us).
 */
static bool ts_fast_us(const char *s, size_t n, int64_t *us)
{
	static const int mdays[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y1, y2, mo, d, h, mi, se;
	if (n < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' ||
	    s[16] != ':' || !dig2(s, &y1) || !dig2(s + 2, &y2) || !dig2(s + 5, &mo) ||
	    !dig2(s + 8, &d) || !dig2(s + 11, &h) || !dig2(s + 14, &mi) || !dig2(s + 17, &se))
		return false;
	int y = y1 * 100 + y2;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo] + (mo == 2 && leap) || h > 23 || mi > 59 ||
	    se > 59)
		return false;
	size_t i = 19;
	int64_t frac = 0;
	if (i < n && s[i] == '.') {
		int k = 0;
		i++;
		while (i < n && (unsigned)(s[i] - '0') <= 9) {
			if (k < 6)
				frac = frac * 10 + (s[i] - '0');
			k++;
			i++;
		}
		if (k == 0 || k > 9)
			return false;
		for (; k < 6; k++)
			frac *= 10;
	}
	int64_t off = 0;
	if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
		i++;
	} else if (i < n && (s[i] == '+' || s[i] == '-')) {
		int oh, om = 0;
		int sign = s[i] == '-' ? -1 : 1;
		if (n - i < 3 || !dig2(s + i + 1, &oh))
			return false;
		i += 3;
		if (i < n && s[i] == ':')
			i++;
		if (i < n) {
			if (n - i < 2 || !dig2(s + i, &om))
				return false;
			i += 2;
		}
		if (oh > 18 || om > 59)
			return false;
		off = sign * (oh * 60 + om);
	}
	if (i != n)
		return false;
	int64_t days = floe_days_from_civil(y, mo, d);
	*us = days * FLOE_US_PER_DAY + ((int64_t)((h * 60 + mi) * 60 + se)) * 1000000 + frac -
	      off * INT64_C(60000000);
	return true;
}

static int b64val(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+' || ch == '-')
		return 62;
	if (ch == '/' || ch == '_')
		return 63;
	return -1;
}

/* Decode base64 (standard or URL alphabet, padding optional) into d; the
 * decoded length goes to *len. */
static bool b64_decode(uint8_t *d, size_t *len, const char *s, size_t n)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t k = 0, i;
	for (i = 0; i < n && s[i] != '='; i++) {
		int v = b64val(s[i]);
		if (v < 0)
			return false;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			d[k++] = (uint8_t)(acc >> bits);
		}
	}
	for (; i < n; i++)
		if (s[i] != '=')
			return false;
	*len = k;
	return true;
}

int stream_coerce_text(stream_col *c, const char *s, size_t n, const stream_coerce_opts *o,
		       stream_reason *why)
{
	int64_t v;
	double d;
	switch (c->type->id) {
	case FLOE_T_BOOLEAN:
		if ((n == 4 && !strncasecmp(s, "true", 4)) || (n == 1 && s[0] == '1'))
			return stream_col_put_bool(c, true);
		if ((n == 5 && !strncasecmp(s, "false", 5)) || (n == 1 && s[0] == '0'))
			return stream_col_put_bool(c, false);
		return bad(why, c, s, n, "a boolean");
	case FLOE_T_INT:
		if (!stream_parse_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX)
			return bad(why, c, s, n, "an int");
		return stream_col_put_i32(c, (int32_t)v);
	case FLOE_T_LONG:
		if (!stream_parse_i64(s, n, &v))
			return bad(why, c, s, n, "a long");
		return stream_col_put_i64(c, v);
	case FLOE_T_FLOAT:
	case FLOE_T_DOUBLE:
		if (!stream_parse_f64(s, n, &d)) {
			const char *t = s;
			size_t k = n;
			bool neg = false;
			if (k && (t[0] == '-' || t[0] == '+')) {
				neg = t[0] == '-';
				t++;
				k--;
			}
			if ((k == 3 && !strncasecmp(t, "nan", 3)) && !neg)
				d = NAN;
			else if ((k == 8 && !strncasecmp(t, "infinity", 8)) ||
				 (k == 3 && !strncasecmp(t, "inf", 3)))
				d = neg ? -INFINITY : INFINITY;
			else
				return bad(why, c, s, n, "a number");
		}
		if (c->type->id == FLOE_T_FLOAT) {
			float f = (float)d;
			return stream_col_put_fixed(c, &f);
		}
		return stream_col_put_fixed(c, &d);
	case FLOE_T_DECIMAL: {
		floe_i128 dec;
		if (!stream_parse_decimal(s, n, c->type->precision, c->type->scale, &dec)) {
			char ex[64];
			excerpt(ex, sizeof(ex), s, n);
			stream_reason_set(why, "'%s' is not a decimal(%d, %d)", ex,
					  (int)c->type->precision, (int)c->type->scale);
			return FLOE_EINVAL;
		}
		return stream_col_put_fixed(c, &dec);
	}
	case FLOE_T_DATE: {
		int64_t days, us;
		bool zone;
		if (floe_parse_date(s, n, &days) ||
		    (floe_parse_timestamp_us(s, n, &us, &zone) &&
		     ((days = floe_floordiv(us, FLOE_US_PER_DAY)), true)) ||
		    stream_parse_i64(s, n, &days)) {
			if (days < INT32_MIN || days > INT32_MAX)
				return bad(why, c, s, n, "a date in range");
			return stream_col_put_i32(c, (int32_t)days);
		}
		return bad(why, c, s, n, "a date");
	}
	case FLOE_T_TIME: {
		int64_t ns;
		if (floe_parse_time_ns(s, n, &ns))
			return stream_col_put_i64(c, floe_floordiv(ns, 1000));
		if (stream_parse_i64(s, n, &v) && v >= 0 && v < FLOE_US_PER_DAY)
			return stream_col_put_i64(c, v);
		return bad(why, c, s, n, "a time");
	}
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ: {
		bool zone;
		if (n >= 10 && s[4] == '-') {
			if (ts_fast_us(s, n, &v) || floe_parse_timestamp_us(s, n, &v, &zone))
				return stream_col_put_i64(c, v);
			int64_t days;
			if (floe_parse_date(s, n, &days))
				return stream_col_put_i64(c, days * FLOE_US_PER_DAY);
			return bad(why, c, s, n, "an ISO-8601 timestamp");
		}
		return put_epoch(c, s, n, o, why);
	}
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: {
		bool zone;
		if (n >= 10 && s[4] == '-') {
			if (floe_parse_timestamp_ns(s, n, &v, &zone))
				return stream_col_put_i64(c, v);
			return bad(why, c, s, n, "an ISO-8601 timestamp");
		}
		return put_epoch(c, s, n, o, why);
	}
	case FLOE_T_STRING:
		if (!stream_utf8_valid((const uint8_t *)s, n)) {
			stream_reason_set(why, "string is not valid UTF-8");
			return FLOE_EINVAL;
		}
		return stream_col_put_bin(c, s, n);
	case FLOE_T_UUID: {
		uint8_t u[16];
		if (!uuid_parse_fast(s, n, u))
			return bad(why, c, s, n, "a UUID");
		return stream_col_put_fixed(c, u);
	}
	case FLOE_T_FIXED:
	case FLOE_T_BINARY: {
		size_t cap = n / 4 * 3 + 3, got = 0;
		if (c->kind == SB_FIXED) {
			uint8_t tmp[256];
			uint8_t *buf = cap <= sizeof(tmp) ? tmp : floe_malloc(cap);
			if (!buf)
				return FLOE_ENOMEM;
			bool ok = b64_decode(buf, &got, s, n) && got == c->width;
			int rc = ok ? stream_col_put_fixed(c, buf) : FLOE_EINVAL;
			if (buf != tmp)
				floe_free(buf);
			if (!ok) {
				stream_reason_set(why, "expected base64 of %u bytes for fixed[%u]",
						  c->width, c->width);
				return FLOE_EINVAL;
			}
			return rc;
		}
		uint8_t *dst = stream_col_bin_begin(c, cap);
		if (!dst)
			return FLOE_ENOMEM;
		if (!b64_decode(dst, &got, s, n))
			return bad(why, c, s, n, "base64");
		stream_col_bin_end(c, got);
		return FLOE_OK;
	}
	default:
		stream_reason_set(why, "a %s value cannot come from text", type_name(c));
		return FLOE_EINVAL;
	}
}

int stream_coerce_number(stream_col *c, const char *s, size_t n, const stream_coerce_opts *o,
			 stream_reason *why)
{
	int64_t v;
	double d;
	switch (c->type->id) {
	case FLOE_T_BOOLEAN:
		if (n == 1 && (s[0] == '0' || s[0] == '1'))
			return stream_col_put_bool(c, s[0] == '1');
		return bad(why, c, s, n, "a boolean");
	case FLOE_T_INT:
	case FLOE_T_LONG:
		if (!stream_parse_i64(s, n, &v)) {
			/* 3.0 or 1e3 are integers too; 3.5 is not */
			if (!stream_parse_f64(s, n, &d) || d != floor(d) || d < -9.2e18 || d > 9.2e18)
				return bad(why, c, s, n, c->type->id == FLOE_T_INT ? "an int" : "a long");
			v = (int64_t)d;
		}
		if (c->type->id == FLOE_T_INT) {
			if (v < INT32_MIN || v > INT32_MAX)
				return bad(why, c, s, n, "an int");
			return stream_col_put_i32(c, (int32_t)v);
		}
		return stream_col_put_i64(c, v);
	case FLOE_T_FLOAT:
	case FLOE_T_DOUBLE:
	case FLOE_T_DECIMAL:
	case FLOE_T_STRING:
		return stream_coerce_text(c, s, n, o, why);
	case FLOE_T_DATE:
		if (!stream_parse_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX)
			return bad(why, c, s, n, "a number of days");
		return stream_col_put_i32(c, (int32_t)v);
	case FLOE_T_TIME:
		if (!stream_parse_i64(s, n, &v) || v < 0 || v >= FLOE_US_PER_DAY)
			return bad(why, c, s, n, "microseconds of a day");
		return stream_col_put_i64(c, v);
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		return put_epoch(c, s, n, o, why);
	default:
		stream_reason_set(why, "a number cannot be a %s", type_name(c));
		return FLOE_EINVAL;
	}
}

int stream_coerce_bool(stream_col *c, bool v, stream_reason *why)
{
	switch (c->type->id) {
	case FLOE_T_BOOLEAN:
		return stream_col_put_bool(c, v);
	case FLOE_T_STRING:
		return stream_col_put_bin(c, v ? "true" : "false", v ? 4 : 5);
	default:
		stream_reason_set(why, "a boolean cannot be a %s", type_name(c));
		return FLOE_EINVAL;
	}
}
