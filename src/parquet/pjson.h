/*
 * pjson.h — semi-private: Arrow batches to JSON lines, for `floe parquet
 * cat` and tests. One object per row of a struct batch, keys in schema
 * order. Values: integers as numbers; floats as the shortest "%.*g" that
 * reads back to the same value ("NaN", "Infinity", "-Infinity" as strings);
 * decimals as strings with exactly `scale` fraction digits; dates
 * "YYYY-MM-DD"; times "HH:MM:SS" plus 3/6/9 fraction digits by unit;
 * timestamps "YYYY-MM-DDTHH:MM:SS[.fff...]" plus "Z" when zoned; strings as
 * JSON strings; binary and fixed as base64; lists as arrays; maps as arrays
 * of [key, value] pairs; structs as objects.
 */
#ifndef FLOE_PARQUET_PJSON_H
#define FLOE_PARQUET_PJSON_H

#include "floe/arrow.h"
#include "floe/common.h"
#include "util/buf.h"

/* Append rows [from, to) of a struct batch as JSON lines. */
int floe_parquet__json_rows(floe_buf *out, const struct ArrowSchema *s, const struct ArrowArray *a,
			    int64_t from, int64_t to, floe_error *err) FLOE_WUR;

#endif
