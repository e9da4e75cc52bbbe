/*
 * manifest_scan.h — the fast manifest entry reader used by scan planning.
 *
 * floe_manifest_read() (manifest.h) decodes every field of every entry
 * through the generic schema-resolving Avro decoder into value trees and
 * copies each string: right for tools, too slow to plan a million files.
 * This reader compiles the manifest's own writer schema once into a decode
 * plan specialised for manifest_entry: fields the caller does not need are
 * skipped in place (the metric maps with a dedicated skipper), metrics are
 * collected only for the column ids the filter references, strings point
 * into a scratch buffer, and nothing is allocated per entry — the entry
 * handed to the callback reuses per-reader buffers.
 *
 * Semantics match floe_manifest_read: fields resolve by Avro field id (by
 * name in manifests written without ids), partition values convert to the
 * spec's result types (promotions included), null snapshot ids and sequence
 * numbers are inherited from the manifest list entry (data sequence numbers
 * only for ADDED entries or v1 manifests), v3 first_row_id is assigned from
 * the manifest's. Differences: paths are the RAW recorded strings (the
 * caller relocates what it keeps with floe_path_map_apply), and metric maps
 * hold only the requested ids unless all_metrics is set.
 *
 * spec: "Manifests", "Sequence Numbers", "Row Lineage"; notes sections 2-3.
 * Thread-safety: reentrant; each call owns its state (manifests may be read
 * on several threads at once over a shared, immutable floe_metadata).
 */
#ifndef FLOE_ICEBERG_MANIFEST_SCAN_H
#define FLOE_ICEBERG_MANIFEST_SCAN_H

#include "iceberg/manifest.h"

typedef struct floe_mscan_opts {
	int version;               /* 1 */
	const int32_t *metric_ids; /* collect counts and bounds for these column ids */
	size_t n_metric_ids;
	bool all_metrics;   /* every metric of every column (inspection) */
	bool column_sizes;  /* also column_sizes (only with all_metrics or metric_ids) */
	bool split_offsets; /* decode split_offsets */
	bool key_metadata;  /* decode key_metadata */
	bool deleted;       /* also deliver DELETED entries */
	/* the manifests' parsed Avro schemas, shared by the calls given it (NULL: none) */
	struct floe_avro_schema_cache *schema_cache;
} floe_mscan_opts;
#define FLOE_MSCAN_OPTS_INIT {1, NULL, 0, false, false, false, false, false, NULL}

/* Statistics of one call (for benchmarks and EXPLAIN). */
typedef struct floe_mscan_stats {
	uint64_t entries;   /* decoded */
	uint64_t delivered; /* passed to the callback */
	uint64_t bytes;     /* decompressed block bytes */
} floe_mscan_stats;

/*
 * Stream the entries of manifest mf (read from in) to fn. The entry and
 * everything it points to is valid only during the call; a non-zero return
 * from fn stops the read and is returned. m gives the partition spec (by
 * mf->spec_id, else the manifest header's) and the schema for result types.
 * stats may be NULL. Errors: FLOE_ECORRUPT naming the manifest, block and
 * record; FLOE_EUNSUPPORTED (codec); FLOE_EIO; FLOE_ENOMEM.
 */
int floe_manifest_scan(floe_input *in, const floe_metadata *m, const floe_manifest_file *mf,
		       const floe_mscan_opts *opts, floe_entry_fn fn, void *payload,
		       floe_mscan_stats *stats, floe_error *err) FLOE_WUR;

#endif
