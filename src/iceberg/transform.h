/*
 * transform.h — partition transforms: identity, bucket[N], truncate[W],
 * year, month, day, hour, void (and unknown ones carried through for v3
 * readers).
 *
 * spec: "Partition Transforms", Appendix B (32-bit hash requirements).
 */
#ifndef FLOE_ICEBERG_TRANSFORM_H
#define FLOE_ICEBERG_TRANSFORM_H

#include "iceberg/types.h"
#include "iceberg/value.h"

typedef enum floe_transform_kind {
	FLOE_TR_IDENTITY = 0,
	FLOE_TR_BUCKET,
	FLOE_TR_TRUNCATE,
	FLOE_TR_YEAR,
	FLOE_TR_MONTH,
	FLOE_TR_DAY,
	FLOE_TR_HOUR,
	FLOE_TR_VOID,
	FLOE_TR_UNKNOWN,
} floe_transform_kind;

typedef struct floe_transform {
	floe_transform_kind kind;
	int32_t param;    /* N for bucket, W for truncate */
	const char *text; /* original text for unknown transforms */
} floe_transform;

/* Parse "bucket[16]", "truncate[4]", "day", ...; unknown names become
 * FLOE_TR_UNKNOWN (text kept) — callers that write must reject those. */
int floe_transform_parse(floe_transform *out, floe_arena *a, const char *s, floe_error *err)
	FLOE_WUR;
int floe_transform_format(floe_buf *out, const floe_transform *t) FLOE_WUR;

/* Can this transform apply to a source of type src? */
bool floe_transform_can_apply(const floe_transform *t, const floe_type *src);
/* Result type (day -> date; bucket, year, month, hour -> int; identity,
 * truncate -> source). For void: the source type. */
const floe_type *floe_transform_result_type(const floe_transform *t, const floe_type *src);

/* 32-bit Murmur3 hash of a value as the bucket transform defines it. */
int32_t floe_bucket_hash(const floe_value *v, const floe_type *t);

/*
 * Apply the transform. String/binary results of truncate point into the
 * source value (not copied). Null in, null out; void is always null.
 */
int floe_transform_apply(floe_value *out, const floe_transform *t, const floe_type *src,
			 const floe_value *in, floe_error *err) FLOE_WUR;

/* Human string of a transform result: year "2017", month "2017-11", day
 * "2017-11-16", hour "2017-11-16-22"; others as floe_value_human. */
int floe_transform_human(floe_buf *out, const floe_transform *t, const floe_type *src,
			 const floe_value *result) FLOE_WUR;

/* Does `t` preserve order (identity, truncate, temporal)? */
bool floe_transform_preserves_order(const floe_transform *t);

#endif
