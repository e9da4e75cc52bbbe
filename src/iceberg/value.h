/*
 * value.h — single typed values: partition values, bounds, literals and
 * defaults, with the spec's binary single-value serialization (bounds and
 * partition summaries), JSON single-value serialization (defaults, REST) and
 * the "human string" used in partition paths.
 *
 * A value's meaning depends on its Iceberg type, which callers pass alongside
 * (the value itself records only the type id).
 */
#ifndef FLOE_ICEBERG_VALUE_H
#define FLOE_ICEBERG_VALUE_H

#include "floe/common.h"
#include "iceberg/types.h"
#include "json/json.h"
#include "util/buf.h"

__extension__ typedef __int128 floe_i128;
__extension__ typedef unsigned __int128 floe_u128;

typedef struct floe_value {
	floe_type_id type; /* the Iceberg type id of the value */
	bool is_null;
	union {
		bool b;
		int32_t i32; /* int, date (days) */
		int64_t i64; /* long, time (µs), timestamp (µs), timestamp_ns (ns) */
		float f32;
		double f64;
		floe_i128 dec; /* unscaled decimal */
		struct {
			const uint8_t *p; /* string (UTF-8), binary, fixed, uuid (16 bytes BE) */
			size_t n;
		} bin;
	} v;
} floe_value;

static inline floe_value floe_value_null(floe_type_id t)
{
	floe_value v = {.type = t, .is_null = true};
	return v;
}

/*
 * Binary single-value serialization (spec Appendix D): int/date 4 bytes LE,
 * long/time/timestamps 8 bytes LE, float/double IEEE LE, decimal minimal
 * two's-complement big-endian, uuid 16 bytes BE, string/binary/fixed raw.
 */
int floe_value_to_bytes(floe_buf *out, const floe_value *v) FLOE_WUR;
/*
 * Decode bytes as type t. Promoted types are inferred from the length (a
 * 4-byte long bound is an int, a 4-byte double a float, a 4-byte timestamp a
 * date). String/binary values point into p (not copied).
 */
int floe_value_from_bytes(floe_value *out, const floe_type *t, const uint8_t *p, size_t n,
			  floe_error *err) FLOE_WUR;

/* Minimal big-endian two's-complement bytes of a 128-bit integer (1..16). */
size_t floe_i128_to_be_min(floe_i128 v, uint8_t out[16]);
/* Sign-extending big-endian decode of 1..16 bytes. */
floe_i128 floe_i128_from_be(const uint8_t *p, size_t n);
/* Decimal text with exactly `scale` fraction digits ("-14.20"). */
size_t floe_decimal_format(char *out, size_t cap, floe_i128 unscaled, int32_t scale);
/* Parse "14.2" / "-0.05" / "1e3" into an unscaled value at `scale`;
 * FLOE_EINVAL on bad text, too many digits or lost precision. */
int floe_decimal_parse(floe_i128 *out, const char *s, size_t n, int32_t precision, int32_t scale)
	FLOE_WUR;

/* JSON single-value serialization (defaults, REST literals). */
void floe_value_write_json(floe_jw *w, const floe_value *v, const floe_type *t);
/* Parse a JSON single value of primitive type t; strings/binaries go to arena a. */
int floe_value_from_json(floe_value *out, floe_arena *a, const floe_type *t, const floe_json *j,
			 floe_error *err) FLOE_WUR;

/*
 * Human string (partition paths): date "2017-11-16", timestamp
 * "2017-11-16T22:31:08[.f]" (+ "+00:00" for tz), time "22:31:08[.f]",
 * decimal plain, binary/fixed base64, uuid canonical, null "null".
 */
int floe_value_human(floe_buf *out, const floe_value *v, const floe_type *t) FLOE_WUR;

/* Compare two non-null values of the same type: <0, 0, >0. Floats order
 * -0.0 < +0.0 and NaN last; strings and binaries by unsigned bytes; uuids by
 * unsigned bytes. */
int floe_value_compare(const floe_value *a, const floe_value *b);

/*
 * UUID bounds that hold under both orders readers use: the spec's (unsigned
 * bytes; Parquet, PyIceberg, floe) and Java's (two signed longs; Java 1.10
 * and later up to apache/iceberg#14216 / #14500 write and prune with it). lo
 * and hi are the unsigned min and max of some UUIDs; the bounds written are
 * out_lo / out_hi, possibly widened ((msb - 1, ff..) below, (msb + 1, 00..)
 * above) where the low halves' sign bits would order some value outside
 * them in Java's order. *has_lo / *has_hi are false when no such bound
 * exists — always both when the values straddle the top bit, where no pair
 * of bounds is valid in both orders.
 */
void floe_uuid_bounds_both_orders(const uint8_t lo[16], const uint8_t hi[16], uint8_t out_lo[16],
				  uint8_t out_hi[16], bool *has_lo, bool *has_hi);

/* Equality for partition tuples: nulls equal, floats by canonical bits. */
bool floe_value_equal(const floe_value *a, const floe_value *b);
uint64_t floe_value_hash(const floe_value *v);

/* Copy string/binary payloads into arena a so the value outlives its source. */
int floe_value_own(floe_value *v, floe_arena *a) FLOE_WUR;

#endif
