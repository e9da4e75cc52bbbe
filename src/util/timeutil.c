/*
 * timeutil.c — clocks and calendar arithmetic.
 *
 * Civil-date conversion after Howard Hinnant's public-domain algorithms
 * (days_from_civil / civil_from_days), which are exact for the proleptic
 * Gregorian calendar over the whole int64 range we use.
 */
#include "util/timeutil.h"

#include <stdio.h>
#include <time.h>

int64_t floe_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t floe_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t floe_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t floe_process_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t floe_days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = floe_floordiv(y, 400);
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void floe_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = floe_floordiv(z, 146097);
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = yoe + era * 400;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int dd = (int)(doy - (153 * mp + 2) / 5 + 1);
	int mm = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yy + (mm <= 2);
	*m = mm;
	*d = dd;
}

size_t floe_format_date(char *out, size_t cap, int64_t days)
{
	int64_t y;
	int m, d;
	int n;
	floe_civil_from_days(days, &y, &m, &d);
	if (y >= 0 && y <= 9999)
		n = snprintf(out, cap, "%04lld-%02d-%02d", (long long)y, m, d);
	else if (y < 0)
		n = snprintf(out, cap, "-%04lld-%02d-%02d", (long long)-y, m, d);
	else
		n = snprintf(out, cap, "+%lld-%02d-%02d", (long long)y, m, d);
	return n < 0 ? 0 : (size_t)n;
}

/* Fraction of `units` sub-second ticks with `digits` total digits. */
static size_t format_frac(char *out, size_t cap, int64_t frac, int scale_digits, int want)
{
	char buf[16];
	int digits = want;
	if (frac == 0 && want == 0)
		return 0;
	snprintf(buf, sizeof(buf), "%0*lld", scale_digits, (long long)frac);
	if (want == 0) {
		/* minimal: 3, 6 or 9 digits like java.time's ISO formatter */
		digits = scale_digits;
		while (digits > 3 && buf[digits - 1] == '0' && buf[digits - 2] == '0' &&
		       buf[digits - 3] == '0')
			digits -= 3;
	}
	if (digits > scale_digits) {
		int n = snprintf(out, cap, ".%s%0*d", buf, digits - scale_digits, 0);
		return n < 0 ? 0 : (size_t)n;
	}
	int n = snprintf(out, cap, ".%.*s", digits, buf);
	return n < 0 ? 0 : (size_t)n;
}

static size_t format_tod(char *out, size_t cap, int64_t sec_of_day, int64_t frac, int scale_digits,
			 int want)
{
	int n = snprintf(out, cap, "%02d:%02d:%02d", (int)(sec_of_day / 3600),
			 (int)(sec_of_day / 60 % 60), (int)(sec_of_day % 60));
	if (n < 0 || (size_t)n >= cap)
		return 0;
	return (size_t)n + format_frac(out + n, cap - (size_t)n, frac, scale_digits, want);
}

size_t floe_format_time_us(char *out, size_t cap, int64_t us, int frac_digits)
{
	int64_t sec = floe_floordiv(us, 1000000), rem = us % 1000000;
	return format_tod(out, cap, sec, rem < 0 ? rem + 1000000 : rem, 6, frac_digits);
}

static size_t format_ts(char *out, size_t cap, int64_t sec, int64_t frac, int scale_digits, int want)
{
	int64_t days = floe_floordiv(sec, 86400);
	size_t n = floe_format_date(out, cap, days);
	if (n + 1 >= cap)
		return n;
	out[n++] = 'T';
	return n + format_tod(out + n, cap - n, sec - days * 86400, frac, scale_digits, want);
}

size_t floe_format_timestamp_us(char *out, size_t cap, int64_t us, int frac_digits)
{
	int64_t sec = floe_floordiv(us, 1000000), rem = us % 1000000;
	return format_ts(out, cap, sec, rem < 0 ? rem + 1000000 : rem, 6, frac_digits);
}

size_t floe_format_timestamp_ns(char *out, size_t cap, int64_t ns, int frac_digits)
{
	int64_t sec = floe_floordiv(ns, 1000000000), rem = ns % 1000000000;
	return format_ts(out, cap, sec, rem < 0 ? rem + 1000000000 : rem, 9, frac_digits);
}

/* ---- parsing ------------------------------------------------------------ */

static bool digits(const char *s, size_t n, size_t *i, int count, int64_t *v)
{
	int64_t x = 0;
	for (int k = 0; k < count; k++) {
		if (*i >= n || s[*i] < '0' || s[*i] > '9')
			return false;
		x = x * 10 + (s[*i] - '0');
		(*i)++;
	}
	*v = x;
	return true;
}

static bool parse_date_at(const char *s, size_t n, size_t *i, int64_t *days)
{
	int64_t y, m, d;
	bool neg = false;
	if (*i < n && (s[*i] == '-' || s[*i] == '+')) {
		neg = s[*i] == '-';
		(*i)++;
	}
	/* 4+ digit year */
	size_t start = *i;
	y = 0;
	while (*i < n && s[*i] >= '0' && s[*i] <= '9' && *i - start < 9) {
		y = y * 10 + (s[*i] - '0');
		(*i)++;
	}
	if (*i - start < 4)
		return false;
	if (neg)
		y = -y;
	if (*i >= n || s[*i] != '-')
		return false;
	(*i)++;
	if (!digits(s, n, i, 2, &m) || *i >= n || s[*i] != '-')
		return false;
	(*i)++;
	if (!digits(s, n, i, 2, &d))
		return false;
	if (m < 1 || m > 12 || d < 1 || d > 31)
		return false;
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (d > mdays[m - 1])
		return false;
	if (m == 2 && d == 29) {
		bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
		if (!leap)
			return false;
	}
	*days = floe_days_from_civil(y, (int)m, (int)d);
	return true;
}

bool floe_parse_date(const char *s, size_t n, int64_t *days)
{
	size_t i = 0;
	return parse_date_at(s, n, &i, days) && i == n;
}

static bool parse_time_at(const char *s, size_t n, size_t *i, int64_t *ns)
{
	int64_t h, mi, sec = 0, frac = 0;
	if (!digits(s, n, i, 2, &h) || *i >= n || s[*i] != ':')
		return false;
	(*i)++;
	if (!digits(s, n, i, 2, &mi))
		return false;
	if (*i < n && s[*i] == ':') {
		(*i)++;
		if (!digits(s, n, i, 2, &sec))
			return false;
		if (*i < n && (s[*i] == '.' || s[*i] == ',')) {
			int nd = 0;
			(*i)++;
			while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
				if (nd < 9) {
					frac = frac * 10 + (s[*i] - '0');
					nd++;
				}
				(*i)++;
			}
			if (nd == 0)
				return false;
			while (nd++ < 9)
				frac *= 10;
		}
	}
	if (h > 23 || mi > 59 || sec > 60)
		return false;
	if (sec == 60)
		sec = 59; /* leap second: clamp like most engines */
	*ns = ((h * 60 + mi) * 60 + sec) * INT64_C(1000000000) + frac;
	return true;
}

bool floe_parse_time_ns(const char *s, size_t n, int64_t *ns)
{
	size_t i = 0;
	return parse_time_at(s, n, &i, ns) && i == n;
}

static bool parse_ts_parts(const char *s, size_t n, int64_t *days, int64_t *tod_ns,
			   int64_t *off_min, bool *had_zone)
{
	size_t i = 0;
	bool zone = false;
	*tod_ns = 0;
	*off_min = 0;
	if (!parse_date_at(s, n, &i, days))
		return false;
	if (i < n && (s[i] == 'T' || s[i] == 't' || s[i] == ' ')) {
		i++;
		if (!parse_time_at(s, n, &i, tod_ns))
			return false;
	}
	if (i < n) {
		if (s[i] == 'Z' || s[i] == 'z') {
			zone = true;
			i++;
		} else if (s[i] == '+' || s[i] == '-') {
			int64_t oh, om = 0;
			int sign = s[i] == '-' ? -1 : 1;
			i++;
			if (!digits(s, n, &i, 2, &oh))
				return false;
			if (i < n && s[i] == ':')
				i++;
			if (i < n && !digits(s, n, &i, 2, &om))
				return false;
			if (oh > 18 || om > 59)
				return false;
			*off_min = sign * (oh * 60 + om);
			zone = true;
		}
	}
	if (i != n)
		return false;
	if (had_zone)
		*had_zone = zone;
	return true;
}

bool floe_parse_timestamp_ns(const char *s, size_t n, int64_t *ns, bool *had_zone)
{
	int64_t days, tod, off;
	if (!parse_ts_parts(s, n, &days, &tod, &off, had_zone))
		return false;
	/* int64 nanoseconds cover 1677..2262 */
	if (days > 106750 || days < -106750)
		return false;
	*ns = days * INT64_C(86400000000000) + tod - off * INT64_C(60000000000);
	return true;
}

bool floe_parse_timestamp_us(const char *s, size_t n, int64_t *us, bool *had_zone)
{
	int64_t days, tod, off;
	if (!parse_ts_parts(s, n, &days, &tod, &off, had_zone))
		return false;
	if (days > 106751991 || days < -106751991)
		return false;
	/* sub-microsecond digits are truncated toward negative infinity */
	*us = days * FLOE_US_PER_DAY + floe_floordiv(tod, 1000) - off * INT64_C(60000000);
	return true;
}
