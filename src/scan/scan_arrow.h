/*
 * scan_arrow.h — Arrow arrays shaped by Iceberg types, as the scan needs
 * them: constant and all-null columns (partition values, initial defaults,
 * columns a file lacks), conversion of what a Parquet file holds into the
 * table's current type (promotions, unit changes, evolved structs by field
 * id or name mapping), gathering rows by index, and reading one value.
 *
 * Layout per Iceberg type (scan_arrow.c keeps to it everywhere): boolean
 * bits; int/date 4 bytes; long/time/timestamps 8; float 4; double 8;
 * decimal 16 (decimal128); uuid 16 and fixed[L] L (fixed-size binary);
 * string/binary int32 offsets + data; unknown: no buffers; struct validity +
 * children; list validity + int32 offsets + element; map the same with an
 * "entries" struct of key and value. Arrays built here have offset 0.
 *
 * Ownership: every function fills a caller-provided ArrowArray that the
 * caller releases; inputs marked "moved" are released (or moved from) here.
 */
#ifndef FLOE_SCAN_ARROW_H
#define FLOE_SCAN_ARROW_H

#include "floe/arrow.h"
#include "iceberg/metrics.h"
#include "iceberg/types.h"
#include "iceberg/value.h"

/* An array of n nulls of type t. */
int floe_sa_nulls(struct ArrowArray *out, const floe_type *t, int64_t n, floe_error *err) FLOE_WUR;

/* n copies of a primitive value (null: all nulls). */
int floe_sa_const(struct ArrowArray *out, const floe_type *t, const floe_value *v, int64_t n,
		  floe_error *err) FLOE_WUR;

/* n copies of field f's initial-default (nested struct defaults included);
 * all nulls when it has none. */
int floe_sa_default(struct ArrowArray *out, const floe_field *f, int64_t n, floe_error *err) FLOE_WUR;

/* How file columns are matched to table fields below the top level. */
typedef struct floe_sa_match {
	bool by_id;                        /* the file carries field ids */
	const floe_name_mapping *mapping;  /* else: the name mapping at this level */
	size_t n_mapping;
	const floe_metadata *meta;         /* to tell consistent mapping ids from foreign ones */
} floe_sa_match;

/*
 * Convert src (moved; described by src_schema) into an array of type t:
 * integer/float widening, decimal precision, date -> timestamp, time and
 * timestamp units, binary <-> string, and structs/lists/maps rebuilt by
 * field id (or name mapping), with missing nested fields filled with their
 * initial-default or nulls. `what` names the column for errors
 * (FLOE_EUNSUPPORTED for a file type that does not convert).
 */
int floe_sa_convert(struct ArrowArray *out, struct ArrowArray *src,
		    const struct ArrowSchema *src_schema, const floe_type *t,
		    const floe_sa_match *match, const char *what, floe_error *err) FLOE_WUR;

/*
 * The name-mapping entry of table field (id, name) among m[0..n): the one
 * with its field id. Mappings whose ids disagree with the schema exist
 * (Impala's migrated tables: Hive wrote the mapping with its own numbering),
 * so when no entry with the id carries the name but one entry carries the
 * name under an id that no schema of the table gives a field of that name,
 * that entry is used. A mapping that keeps an old column's id under its old
 * name (dropped and re-added columns) stays exact. NULL if none.
 */
const floe_name_mapping *floe_sa_mapping_lookup(const floe_name_mapping *m, size_t n, int32_t id,
					       const char *name, const floe_metadata *meta);

/* The field id of an Arrow field from its "PARQUET:field_id" metadata; -1 when absent. */
int32_t floe_sa_field_id(const struct ArrowSchema *s);

/* Rows idx[0..n) of src (type t) into out. */
int floe_sa_take(struct ArrowArray *out, const struct ArrowArray *src, const floe_type *t,
		 const int64_t *idx, int64_t n, floe_error *err) FLOE_WUR;

/* Row i of an array as a value (strings point into the array). A struct, list
 * or map row gives only whether it is null (IS NULL on such a column). */
void floe_sa_value(floe_value *out, const struct ArrowArray *a, const floe_type *t, int64_t i);

/* Is row i of a valid (not null)? */
static inline bool floe_sa_valid(const struct ArrowArray *a, int64_t i)
{
	const uint8_t *v = a->n_buffers > 0 ? (const uint8_t *)a->buffers[0] : NULL;
	int64_t j = i + a->offset;
	return a->null_count == 0 || !v || ((v[j >> 3] >> (j & 7)) & 1);
}

#endif
