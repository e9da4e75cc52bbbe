/*
 * metadata.h — table metadata (format versions 1, 2 and 3): parse, validate,
 * write (Java's key order), and build new versions.
 *
 * A floe_metadata is immutable once built and owns one arena with everything
 * in it; it may be shared between threads. Changes go through a
 * floe_metadata_builder, which starts from a base, applies updates (the same
 * set as the REST catalog's TableUpdate actions) and produces a new object.
 *
 * spec: "Table Metadata", Appendix C; ../shared/iceberg-notes.md section 1.
 */
#ifndef FLOE_ICEBERG_METADATA_H
#define FLOE_ICEBERG_METADATA_H

#include "iceberg/spec.h"
#include "iceberg/types.h"
#include "json/json.h"
#include "util/str.h"

#define FLOE_FORMAT_VERSION_MAX 3
#define FLOE_NO_SNAPSHOT (-1)

typedef struct floe_kv {
	const char *key;
	const char *value;
} floe_kv;

typedef struct floe_snapshot {
	int64_t snapshot_id;
	int64_t parent_id; /* FLOE_NO_SNAPSHOT when none */
	int64_t sequence_number; /* 0 in v1 */
	int64_t timestamp_ms;
	const char *manifest_list;    /* NULL for v1 snapshots with embedded manifests */
	const char **v1_manifests;    /* legacy "manifests" list */
	size_t n_v1_manifests;
	floe_kv *summary; /* includes "operation" */
	size_t n_summary;
	int32_t schema_id; /* -1 when absent */
	int64_t first_row_id; /* v3; -1 when absent */
	int64_t added_rows;   /* v3; -1 when absent */
	const char *key_id;   /* v3 encryption; may be NULL */
	/* The snapshot's JSON object as it was read (snapshots never change):
	 * written back verbatim, so writing a long history is a copy. NULL for
	 * a snapshot made here (then it is serialised). */
	const char *json;
	size_t json_len;
} floe_snapshot;

typedef struct floe_snapshot_ref {
	const char *name;
	int64_t snapshot_id;
	bool is_tag;
	int32_t min_snapshots_to_keep; /* -1 = absent */
	int64_t max_snapshot_age_ms;   /* -1 = absent */
	int64_t max_ref_age_ms;        /* -1 = absent */
} floe_snapshot_ref;

typedef struct floe_snapshot_log_entry {
	int64_t timestamp_ms;
	int64_t snapshot_id;
} floe_snapshot_log_entry;

typedef struct floe_metadata_log_entry {
	int64_t timestamp_ms;
	const char *metadata_file;
} floe_metadata_log_entry;

typedef struct floe_metadata {
	floe_arena arena;
	int format_version;
	const char *table_uuid; /* may be NULL in v1 */
	const char *location;
	int64_t last_sequence_number;
	int64_t last_updated_ms;
	int32_t last_column_id;
	floe_schema **schemas;
	size_t n_schemas;
	int32_t current_schema_id;
	floe_partition_spec **specs;
	size_t n_specs;
	int32_t default_spec_id;
	int32_t last_partition_id;
	floe_sort_order **sort_orders;
	size_t n_sort_orders;
	int32_t default_sort_order_id;
	floe_kv *properties;
	size_t n_properties;
	int64_t current_snapshot_id; /* FLOE_NO_SNAPSHOT when none */
	floe_snapshot *snapshots;
	size_t n_snapshots;
	floe_snapshot_ref *refs;
	size_t n_refs;
	floe_snapshot_log_entry *snapshot_log;
	size_t n_snapshot_log;
	floe_metadata_log_entry *metadata_log;
	size_t n_metadata_log;
	/* kept verbatim (JSON trees in the arena) and written back unchanged */
	floe_json **statistics;
	size_t n_statistics;
	floe_json **partition_statistics;
	size_t n_partition_statistics;
	floe_json **encryption_keys;
	size_t n_encryption_keys;
	int64_t next_row_id; /* v3; 0 otherwise */
	/* where this version was read from / written to (not part of the JSON) */
	const char *metadata_location;
} floe_metadata;

/*
 * Parse metadata JSON (plain text; callers gunzip first — see
 * floe_metadata_parse_file_bytes). Validates the rules Java enforces on read.
 * The result is owned by the caller (floe_metadata_free).
 */
int floe_metadata_parse(floe_metadata **out, const char *json, size_t n, floe_error *err) FLOE_WUR;
/* Like floe_metadata_parse, but detects gzip or zstd (magic bytes) and inflates. */
int floe_metadata_parse_file_bytes(floe_metadata **out, const uint8_t *p, size_t n,
				   floe_error *err) FLOE_WUR;
void floe_metadata_free(floe_metadata *m);

/* Write the metadata JSON (Java's key order); pretty when indent > 0. */
int floe_metadata_write(floe_buf *out, const floe_metadata *m, int indent) FLOE_WUR;

/* Lookups; NULL when absent. */
const floe_schema *floe_metadata_schema(const floe_metadata *m, int32_t schema_id);
const floe_schema *floe_metadata_current_schema(const floe_metadata *m);
const floe_partition_spec *floe_metadata_spec(const floe_metadata *m, int32_t spec_id);
const floe_partition_spec *floe_metadata_default_spec(const floe_metadata *m);
const floe_sort_order *floe_metadata_sort_order(const floe_metadata *m, int32_t order_id);
const floe_snapshot *floe_metadata_snapshot(const floe_metadata *m, int64_t snapshot_id);
/* The parent of s in m (NULL for a root or a parent that expired); s must
 * be one of m's snapshots. Walking an ancestry with it is linear. */
const floe_snapshot *floe_metadata_parent(const floe_metadata *m, const floe_snapshot *s);
const floe_snapshot *floe_metadata_current_snapshot(const floe_metadata *m);
const floe_snapshot_ref *floe_metadata_ref(const floe_metadata *m, const char *name);
/* Head of a branch (main when name is NULL): NULL when the branch is absent. */
const floe_snapshot *floe_metadata_branch_head(const floe_metadata *m, const char *branch);
const char *floe_metadata_property(const floe_metadata *m, const char *key);
int64_t floe_metadata_property_i64(const floe_metadata *m, const char *key, int64_t dflt);
/* "7d", "36h", "500ms" or milliseconds (floe_parse_duration_ms) */
int64_t floe_metadata_property_duration_ms(const floe_metadata *m, const char *key, int64_t dflt);
bool floe_metadata_property_bool(const floe_metadata *m, const char *key, bool dflt);
/* Snapshot summary value, or NULL. */
const char *floe_snapshot_summary(const floe_snapshot *s, const char *key);
/* Snapshot schema, falling back to the current schema. */
const floe_schema *floe_snapshot_schema(const floe_metadata *m, const floe_snapshot *s);

/* ---- building new versions ---------------------------------------------- */

typedef struct floe_metadata_builder floe_metadata_builder;

/* Start a new table: format version, location, uuid (NULL = random). The
 * schema gets fresh ids as Java assigns them; spec and sort order (may be
 * NULL) are rebound to the new ids by column name. */
int floe_metadata_builder_new_table(floe_metadata_builder **out, int format_version,
				    const char *location, const char *uuid,
				    const floe_schema *schema, const floe_partition_spec *spec,
				    const floe_sort_order *order, const floe_strmap *properties,
				    floe_error *err) FLOE_WUR;
/* Start from an existing version (deep-copied). */
int floe_metadata_builder_from(floe_metadata_builder **out, const floe_metadata *base,
			       floe_error *err) FLOE_WUR;
void floe_metadata_builder_free(floe_metadata_builder *b);
/* The metadata being built (valid until the next builder call). */
const floe_metadata *floe_metadata_builder_peek(const floe_metadata_builder *b);
floe_arena *floe_metadata_builder_arena(floe_metadata_builder *b);

int floe_mb_set_properties(floe_metadata_builder *b, const floe_strmap *updates,
			   floe_error *err) FLOE_WUR;
int floe_mb_remove_properties(floe_metadata_builder *b, const char *const *keys, size_t n,
			      floe_error *err) FLOE_WUR;
int floe_mb_upgrade_format_version(floe_metadata_builder *b, int version, floe_error *err) FLOE_WUR;
/* Add a schema (ids must already be assigned consistently); *out_id receives
 * the schema id (an equal existing schema is reused). */
int floe_mb_add_schema(floe_metadata_builder *b, const floe_schema *s, int32_t *out_id,
		       floe_error *err) FLOE_WUR;
int floe_mb_set_current_schema(floe_metadata_builder *b, int32_t schema_id, floe_error *err) FLOE_WUR;
int floe_mb_add_spec(floe_metadata_builder *b, const floe_partition_spec *s, int32_t *out_id,
		     floe_error *err) FLOE_WUR;
int floe_mb_set_default_spec(floe_metadata_builder *b, int32_t spec_id, floe_error *err) FLOE_WUR;
int floe_mb_add_sort_order(floe_metadata_builder *b, const floe_sort_order *o, int32_t *out_id,
			   floe_error *err) FLOE_WUR;
int floe_mb_set_default_sort_order(floe_metadata_builder *b, int32_t order_id,
				   floe_error *err) FLOE_WUR;
/* Add a snapshot (copied). Its sequence number must be last+1 (v2+). */
int floe_mb_add_snapshot(floe_metadata_builder *b, const floe_snapshot *s, floe_error *err) FLOE_WUR;
/* Point a branch or tag at a snapshot; updates current-snapshot-id and the
 * snapshot log for main. */
int floe_mb_set_ref(floe_metadata_builder *b, const floe_snapshot_ref *ref, floe_error *err) FLOE_WUR;
int floe_mb_remove_ref(floe_metadata_builder *b, const char *name, floe_error *err) FLOE_WUR;
int floe_mb_remove_snapshots(floe_metadata_builder *b, const int64_t *ids, size_t n,
			     floe_error *err) FLOE_WUR;
int floe_mb_set_location(floe_metadata_builder *b, const char *location, floe_error *err) FLOE_WUR;
/* v3 row lineage: advance next-row-id. */
void floe_mb_set_next_row_id(floe_metadata_builder *b, int64_t next_row_id);

/*
 * Finish: set last-updated-ms, append `previous_location` (when not NULL) to
 * the metadata log trimmed to write.metadata.previous-versions-max, and
 * return the new immutable metadata (caller owns it). The builder is freed.
 */
int floe_metadata_builder_finish(floe_metadata **out, floe_metadata_builder *b,
				 const char *previous_location, int64_t previous_updated_ms,
				 floe_error *err) FLOE_WUR;

/* A fresh positive snapshot id (Java: random UUID bits, masked positive). */
int64_t floe_new_snapshot_id(void);

#endif
