/*
 * metrics.h — column metrics for manifests: the metrics modes of the table
 * properties (write.metadata.metrics.*), bound truncation, name mappings,
 * and turning a Parquet footer into a data file entry (add-files; the
 * writer's own metrics reuse the same rules).
 *
 * spec: "Metrics", ../shared/iceberg-notes.md sections 5.2 and 8.4.
 */
#ifndef FLOE_ICEBERG_METRICS_H
#define FLOE_ICEBERG_METRICS_H

#include "iceberg/manifest.h"
#include "iceberg/metadata.h"
#include "parquet/schema.h"
#include "util/stream.h"

typedef enum floe_metrics_mode_kind {
	FLOE_METRICS_NONE = 0,
	FLOE_METRICS_COUNTS,
	FLOE_METRICS_TRUNCATE,
	FLOE_METRICS_FULL,
} floe_metrics_mode_kind;

typedef struct floe_metrics_mode {
	floe_metrics_mode_kind kind;
	int32_t length; /* truncate(N) */
} floe_metrics_mode;

/* Parse "none", "counts", "truncate(16)", "full". */
int floe_metrics_mode_parse(floe_metrics_mode *out, const char *s, floe_error *err) FLOE_WUR;
/* The mode of a column (by field id) under the table's properties, the
 * 100-column inference limit and the sort-order promotion. */
floe_metrics_mode floe_metrics_mode_for(const floe_metadata *m, const floe_schema *schema,
				       int32_t field_id);

/*
 * A Parquet statistics value — the PLAIN bytes of leaf's physical type, as
 * in Statistics.min_value/max_value or a writer's column result — as an
 * Iceberg value of type t: units of times and timestamps converted, decimals
 * from INT32/INT64/FIXED/BINARY, float widened to double for promoted
 * columns. String/binary values point into p. false when there is no such
 * value (NaN, unsigned integer annotations, INT96, a type mismatch).
 */
bool floe_parquet_stat_value(floe_value *out, const floe_parquet_node *leaf, const floe_type *t,
			     const uint8_t *p, size_t n);

/*
 * The manifest bound of column id: v in the binary single-value form,
 * strings and binaries truncated per mode (truncate(N): a lower bound is a
 * prefix, an upper bound a prefix incremented — none when that is
 * impossible). The bytes are copied into arena a. *written is false when
 * the column gets no bound. FLOE_ENOMEM.
 */
int floe_metrics_bound(floe_id_bytes *dst, floe_arena *a, int32_t id, const floe_value *v,
		       floe_metrics_mode mode, bool upper, bool *written) FLOE_WUR;

/*
 * Both bounds of column id (floe_metrics_bound for each), made safe for every
 * reader: a float or double zero lower bound is written -0.0 and a zero upper
 * bound +0.0 (SQL has -0.0 = 0.0, and a bound's sign must not prune it), and
 * UUID bounds are ones that hold in Java's order too
 * (floe_uuid_bounds_both_orders: none when the values straddle the top bit).
 * lo / hi may be NULL (no value for that side). Appends to lower[*n_lower]
 * and upper[*n_upper]. FLOE_ENOMEM.
 */
int floe_metrics_bounds(floe_id_bytes *lower, size_t *n_lower, floe_id_bytes *upper,
			size_t *n_upper, floe_arena *a, int32_t id, const floe_value *lo,
			const floe_value *hi, floe_metrics_mode mode) FLOE_WUR;

/* Truncated lower bound: the first n code points (strings) or bytes. */
size_t floe_truncate_lower(const floe_value *v, int32_t n);
/* Truncated upper bound: first n code points/bytes with the last one
 * incremented (carrying left); false when no upper bound exists. Writes into
 * out (cap >= 4n+4), sets *len. */
bool floe_truncate_upper(const floe_value *v, int32_t n, uint8_t *out, size_t cap, size_t *len);

/* ---- name mapping (schema.name-mapping.default) ---- */

typedef struct floe_name_mapping floe_name_mapping;
struct floe_name_mapping {
	int32_t field_id; /* -1 when absent */
	const char **names;
	size_t n_names;
	floe_name_mapping *fields; /* nested mappings */
	size_t n_fields;
};

/* Parse the property's JSON (a list of mappings) into *out (n entries). */
int floe_name_mapping_parse(floe_name_mapping **out, size_t *n, floe_arena *a, const char *json,
			    floe_error *err) FLOE_WUR;
/* The mapping JSON Java would create for a schema (names = field names). */
int floe_name_mapping_from_schema(floe_buf *out, const floe_schema *s) FLOE_WUR;

/*
 * Build the manifest entry of an existing Parquet file (add-files): record
 * count and size, split offsets, column sizes, value/null counts and bounds
 * (by field id; by the table's name mapping or by name when the file has no
 * ids), and the partition tuple for spec computed from the bounds of each
 * source column (a file must hold a single partition), or for identity
 * fields from "name=value" segments of the path.
 */
int floe_parquet_data_file(floe_data_file *out, floe_arena *a, floe_input *in, const char *path,
			   const floe_metadata *m, const floe_partition_spec *spec,
			   floe_error *err) FLOE_WUR;

#endif
