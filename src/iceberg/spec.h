/*
 * spec.h — partition specs, partition tuples and paths, sort orders.
 *
 * spec: "Partitioning", "Sorting", Appendix C (JSON).
 */
#ifndef FLOE_ICEBERG_SPEC_H
#define FLOE_ICEBERG_SPEC_H

#include "iceberg/transform.h"
#include "iceberg/types.h"
#include "iceberg/value.h"

#define FLOE_PARTITION_FIELD_ID_START 1000

typedef struct floe_partition_field {
	int32_t source_id;
	const int32_t *source_ids; /* v3 multi-argument transforms; NULL otherwise */
	size_t n_source_ids;
	int32_t field_id;
	const char *name;
	floe_transform transform;
} floe_partition_field;

typedef struct floe_partition_spec {
	int32_t spec_id;
	floe_partition_field *fields;
	size_t n_fields;
} floe_partition_spec;

/* A partition tuple: one value per spec field, in spec order. */
typedef struct floe_partition {
	floe_value *values;
	size_t n;
} floe_partition;

typedef struct floe_sort_field {
	floe_transform transform;
	int32_t source_id;
	bool descending;
	bool nulls_first;
} floe_sort_field;

typedef struct floe_sort_order {
	int32_t order_id;
	floe_sort_field *fields;
	size_t n_fields;
} floe_sort_order;

/*
 * Parse a spec object ({"spec-id", "fields"}) or, for v1 "partition-spec"
 * and manifest headers, a bare fields array (then spec_id is used). Field
 * ids missing in v1 are numbered 1000, 1001, ...
 */
int floe_spec_from_json(floe_partition_spec **out, floe_arena *a, const floe_json *j,
			int32_t spec_id, floe_error *err) FLOE_WUR;
void floe_spec_write_json(floe_jw *w, const floe_partition_spec *s);
/* Just the fields array (manifest header "partition-spec"). */
void floe_spec_write_fields_json(floe_jw *w, const floe_partition_spec *s);
/* Check every field's source exists in schema and the transform applies. */
int floe_spec_validate(const floe_partition_spec *s, const floe_schema *schema, floe_error *err)
	FLOE_WUR;
bool floe_spec_is_unpartitioned(const floe_partition_spec *s);
/* Same fields (source, transform, name, id), ignoring spec ids. */
bool floe_spec_equivalent(const floe_partition_spec *a, const floe_partition_spec *b);
/* Result type of field i under the schema (NULL when the source is missing:
 * then callers treat the field as unknown). */
const floe_type *floe_spec_field_type(const floe_partition_spec *s, size_t i,
				      const floe_schema *schema);
int32_t floe_spec_max_field_id(const floe_partition_spec *s);

/*
 * Parse a user partition expression: "bucket(16, id), day(ts), truncate(4,
 * name), region" (also "ts_day=day(ts)" style aliases are not supported;
 * names are generated as Java does: id_bucket, ts_day, name_trunc, region).
 * Field ids start after *last_partition_id, which is updated.
 */
int floe_spec_parse_expr(floe_partition_spec **out, floe_arena *a, const char *expr,
			 const floe_schema *schema, int32_t spec_id, int32_t *last_partition_id,
			 floe_error *err) FLOE_WUR;

/*
 * Partition path "a=1/ts_day=2017-11-16" with Java form-URL encoding of
 * names and human values. Appends to out.
 */
int floe_partition_path(floe_buf *out, const floe_partition_spec *s, const floe_schema *schema,
			const floe_partition *p) FLOE_WUR;

/* Compute the partition tuple of a row from source values by field id:
 * lookup(id) returns the source value (or NULL for null). */
typedef const floe_value *(*floe_source_lookup_fn)(int32_t field_id, void *payload);
int floe_partition_compute(floe_partition *out, floe_arena *a, const floe_partition_spec *s,
			   const floe_schema *schema, floe_source_lookup_fn fn, void *payload,
			   floe_error *err) FLOE_WUR;
bool floe_partition_equal(const floe_partition *a, const floe_partition *b);
uint64_t floe_partition_hash(const floe_partition *p);

/* Sort orders. */
int floe_sort_order_from_json(floe_sort_order **out, floe_arena *a, const floe_json *j,
			      floe_error *err) FLOE_WUR;
void floe_sort_order_write_json(floe_jw *w, const floe_sort_order *o);
bool floe_sort_order_equivalent(const floe_sort_order *a, const floe_sort_order *b);
/* "id DESC NULLS LAST, bucket(4, name)" */
int floe_sort_order_parse_expr(floe_sort_order **out, floe_arena *a, const char *expr,
			       const floe_schema *schema, int32_t order_id, floe_error *err) FLOE_WUR;

/* Deep copies. */
floe_partition_spec *floe_spec_copy(floe_arena *a, const floe_partition_spec *s);
floe_sort_order *floe_sort_order_copy(floe_arena *a, const floe_sort_order *o);

#endif
