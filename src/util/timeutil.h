/*
 * timeutil.h — clocks and proleptic-Gregorian calendar arithmetic on epoch
 * days, micros and nanos (floor semantics for negative instants, as Iceberg
 * requires), ISO-8601 formatting and parsing.
 */
#ifndef FLOE_UTIL_TIMEUTIL_H
#define FLOE_UTIL_TIMEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int64_t floe_now_ms(void);       /* wall clock, epoch ms */
int64_t floe_now_us(void);       /* wall clock, epoch µs */
int64_t floe_monotonic_ns(void); /* for durations */
/* CPU time of the process, all threads (0 where the clock is missing) */
int64_t floe_process_cpu_ns(void);

/* Floor division and modulo (the C operators truncate toward zero). */
static inline int64_t floe_floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}
static inline int64_t floe_floormod(int64_t a, int64_t b)
{
	int64_t m = a % b;
	if (m != 0 && ((m < 0) != (b < 0)))
		m += b;
	return m;
}

/* Days since 1970-01-01 <-> civil date (month 1..12, day 1..31). */
int64_t floe_days_from_civil(int64_t y, int m, int d);
void floe_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

#define FLOE_US_PER_DAY INT64_C(86400000000)
#define FLOE_US_PER_HOUR INT64_C(3600000000)

/*
 * Format into out (>= 40 bytes):
 *  date "2017-11-16"; time "22:31:08[.ffffff]"; timestamp
 *  "2017-11-16T22:31:08[.ffffff]" — fraction digits: `frac_digits` = 0 means
 *  minimal (Java's ISO form: omitted when zero, else 3/6/9 digits), or an
 *  exact count (6 or 9).
 */
size_t floe_format_date(char *out, size_t cap, int64_t days);
size_t floe_format_time_us(char *out, size_t cap, int64_t us, int frac_digits);
size_t floe_format_timestamp_us(char *out, size_t cap, int64_t us, int frac_digits);
size_t floe_format_timestamp_ns(char *out, size_t cap, int64_t ns, int frac_digits);

/*
 * Parse ISO-8601: "YYYY-MM-DD", "HH:MM[:SS[.f{1,9}]]",
 * "YYYY-MM-DD[T| ]HH:MM[:SS[.f]][Z|±HH[:MM]]". The zone, when present, is
 * applied (result in UTC); *had_zone tells whether one was present.
 * Return false when malformed.
 */
bool floe_parse_date(const char *s, size_t n, int64_t *days);
bool floe_parse_time_ns(const char *s, size_t n, int64_t *ns);
bool floe_parse_timestamp_ns(const char *s, size_t n, int64_t *ns, bool *had_zone);
bool floe_parse_timestamp_us(const char *s, size_t n, int64_t *us, bool *had_zone);

#endif
