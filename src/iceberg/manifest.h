/*
 * manifest.h — manifest lists and manifests (Avro), read and written exactly
 * as Java Iceberg does for format versions 1, 2 and 3.
 *
 * Reading resolves Avro fields by field id (so manifest lists written by Java
 * 1.4 and 1.5, whose count fields have different names, both read) and
 * applies the spec's inheritance rules: a null snapshot id or sequence number
 * in an entry takes the manifest's; v3 first_row_id is assigned from the
 * manifest's first_row_id.
 *
 * spec: "Manifests", "Manifest Lists", "Sequence Numbers", "Row Lineage";
 * ../shared/iceberg-notes.md sections 2 and 3.
 */
#ifndef FLOE_ICEBERG_MANIFEST_H
#define FLOE_ICEBERG_MANIFEST_H

#include "iceberg/metadata.h"
#include "iceberg/spec.h"
#include "util/stream.h"

enum {
	FLOE_CONTENT_DATA = 0,
	FLOE_CONTENT_POSITION_DELETES = 1,
	FLOE_CONTENT_EQUALITY_DELETES = 2,
};

enum {
	FLOE_ENTRY_EXISTING = 0,
	FLOE_ENTRY_ADDED = 1,
	FLOE_ENTRY_DELETED = 2,
};

/* Manifest content (the manifest list's "content" field). */
enum {
	FLOE_MANIFEST_DATA = 0,
	FLOE_MANIFEST_DELETES = 1,
};

typedef struct floe_id_long {
	int32_t id;
	int64_t value;
} floe_id_long;

typedef struct floe_id_bytes {
	int32_t id;
	const uint8_t *p;
	size_t n;
} floe_id_bytes;

typedef struct floe_data_file {
	int content; /* FLOE_CONTENT_* */
	const char *file_path;
	const char *file_format; /* "PARQUET", "AVRO", "ORC", "PUFFIN" (as written) */
	int32_t spec_id;
	floe_partition partition;
	int64_t record_count;
	int64_t file_size_in_bytes;
	floe_id_long *column_sizes;
	size_t n_column_sizes;
	floe_id_long *value_counts;
	size_t n_value_counts;
	floe_id_long *null_value_counts;
	size_t n_null_value_counts;
	floe_id_long *nan_value_counts;
	size_t n_nan_value_counts;
	floe_id_bytes *lower_bounds;
	size_t n_lower_bounds;
	floe_id_bytes *upper_bounds;
	size_t n_upper_bounds;
	/* FLOE_METRICS_ABSENT_* bits: metric maps the manifest stores as null
	 * (or lacks), as opposed to present and empty; read from manifests
	 * for the metadata tables, which show null and [] as Java does. The
	 * writer writes an empty map as null either way. */
	unsigned absent_metrics;
	const uint8_t *key_metadata;
	size_t key_metadata_len;
	int64_t *split_offsets;
	size_t n_split_offsets;
	int32_t *equality_ids;
	size_t n_equality_ids;
	bool has_sort_order_id;
	int32_t sort_order_id;
	int64_t first_row_id; /* -1 = null */
	const char *referenced_data_file;
	int64_t content_offset;        /* -1 = null */
	int64_t content_size_in_bytes; /* -1 = null */
} floe_data_file;

#define FLOE_METRICS_ABSENT_COLUMN_SIZES 0x01u
#define FLOE_METRICS_ABSENT_VALUE_COUNTS 0x02u
#define FLOE_METRICS_ABSENT_NULL_COUNTS 0x04u
#define FLOE_METRICS_ABSENT_NAN_COUNTS 0x08u
#define FLOE_METRICS_ABSENT_LOWER_BOUNDS 0x10u
#define FLOE_METRICS_ABSENT_UPPER_BOUNDS 0x20u

/* Initialise optional fields to "absent". */
void floe_data_file_init(floe_data_file *f);
/* Deep copy into an arena. */
int floe_data_file_copy(floe_data_file *dst, floe_arena *a, const floe_data_file *src) FLOE_WUR;

typedef struct floe_manifest_entry {
	int status;                   /* FLOE_ENTRY_* */
	int64_t snapshot_id;          /* after inheritance */
	int64_t sequence_number;      /* data sequence number, after inheritance */
	int64_t file_sequence_number; /* after inheritance; -1 when unknown */
	floe_data_file file;
} floe_manifest_entry;

typedef struct floe_field_summary {
	bool contains_null;
	int8_t contains_nan; /* -1 unknown, 0, 1 */
	const uint8_t *lower;
	size_t lower_len;
	const uint8_t *upper;
	size_t upper_len;
	bool has_lower, has_upper;
} floe_field_summary;

typedef struct floe_manifest_file {
	const char *path;
	int64_t length;
	int32_t spec_id;
	int content; /* FLOE_MANIFEST_* */
	int64_t sequence_number;
	int64_t min_sequence_number;
	int64_t added_snapshot_id;
	int32_t added_files_count; /* -1 when unknown (old v1) */
	int32_t existing_files_count;
	int32_t deleted_files_count;
	int64_t added_rows_count; /* -1 when unknown */
	int64_t existing_rows_count;
	int64_t deleted_rows_count;
	floe_field_summary *partitions;
	size_t n_partitions;
	bool partitions_present;
	const uint8_t *key_metadata;
	size_t key_metadata_len;
	int64_t first_row_id; /* v3; -1 = null */
	const char *recorded_path; /* manifest_path as the list records it (path: relocated) */
} floe_manifest_file;

/* ---- path relocation for reading tables copied from elsewhere --------------- */

typedef struct floe_path_rule {
	const char *from; /* recorded prefix */
	const char *to;   /* actual prefix */
} floe_path_rule;

typedef struct floe_path_map {
	const floe_path_rule *rules;
	size_t n;
} floe_path_map;

/* Apply the first matching rule (NULL map = identity); result in arena. */
const char *floe_path_map_apply(const floe_path_map *map, floe_arena *a, const char *path);

/* ---- reading ----------------------------------------------------------------- */

/*
 * Read a manifest list file into an arena array (entries in file order).
 * Paths are relocated by map (may be NULL). in is not closed.
 */
int floe_manifest_list_read(floe_manifest_file **out, size_t *n, floe_arena *a, floe_input *in,
			    const floe_path_map *map, floe_error *err) FLOE_WUR;

/*
 * A list entry for a v1 snapshot that embeds manifest paths instead of a
 * manifest list: reads the manifest's header for its spec id and content.
 */
int floe_manifest_file_from_header(floe_manifest_file *out, floe_arena *a, floe_input *in,
				   const char *path, int64_t snapshot_id, floe_error *err) FLOE_WUR;

/* Called per entry; entry memory is valid only during the call. Non-zero stops. */
typedef int (*floe_entry_fn)(const floe_manifest_entry *e, void *payload);

/*
 * Stream the entries of manifest mf read from in. The partition spec is
 * looked up in m by mf->spec_id (falling back to the manifest header);
 * partition values are decoded with the spec's result types. Paths are
 * relocated by map. in is not closed.
 */
int floe_manifest_read(floe_input *in, const floe_metadata *m, const floe_manifest_file *mf,
		       const floe_path_map *map, floe_entry_fn fn, void *payload,
		       floe_error *err) FLOE_WUR;

/* ---- what the metadata promises ------------------------------------------------ */

/* Entries of a manifest as they are decoded, by status (FLOE_ENTRY_*). */
typedef struct floe_manifest_tally {
	int64_t files[3];
	int64_t rows[3]; /* record counts */
} floe_manifest_tally;

static inline void floe_manifest_tally_add(floe_manifest_tally *t, int status, int64_t rows)
{
	if (status >= 0 && status <= 2) {
		t->files[status]++;
		t->rows[status] += rows;
	}
}

/*
 * A manifest read to its end must hold what its manifest list entry says:
 * in all (added, existing and deleted together, of the counts the list
 * records) at least as many entries and rows. A manifest cut back to its
 * header, cut mid-block or with a block dropped is still a valid Avro file;
 * this is what tells. FLOE_ECORRUPT ("holds 0 added ... entries where the
 * manifest list promises 3 added, ..."). More than promised is no loss, and
 * counts filed under another status (some writers do) are none: neither is
 * refused.
 */
int floe_manifest_check_tally(const floe_manifest_file *mf, const floe_manifest_tally *t,
			      floe_error *err) FLOE_WUR;

/*
 * A snapshot's manifest list against its summary: the live data files and
 * records of its data manifests (added + existing) must reach the summary's
 * total-data-files and total-records, its delete manifests' live files
 * total-delete-files (each checked when the summary has it and every
 * manifest of that content records its counts); a list without manifests
 * where the summary says files were added is corrupt too. `path` names the list in
 * the message. FLOE_ECORRUPT.
 */
int floe_manifest_list_check(const floe_snapshot *snap, const floe_manifest_file *mfs, size_t n,
			     const char *path, floe_error *err) FLOE_WUR;

/* ---- writing ------------------------------------------------------------------- */

typedef struct floe_manifest_writer floe_manifest_writer;

/*
 * Start a manifest on out (the writer owns it from then on) for spec (of
 * schema) in format version fv; path is its location (recorded in the list).
 * content: FLOE_MANIFEST_DATA or FLOE_MANIFEST_DELETES. snapshot_id is the
 * committing snapshot (used for the list entry). codec: Avro codec name
 * (NULL = "deflate", from write.manifest.compression-codec).
 */
int floe_manifest_writer_open(floe_manifest_writer **w, floe_output *out, const char *path,
			      int fv, const floe_schema *schema, const floe_partition_spec *spec,
			      int content, int64_t snapshot_id, const char *codec,
			      floe_error *err) FLOE_WUR;
/*
 * Add an entry. For ADDED entries of the committing snapshot pass -1 for the
 * sequence numbers and snapshot id (they are written as null and inherited);
 * EXISTING and DELETED entries must carry explicit values. A data sequence
 * number may be given for an ADDED entry (compaction keeps the old one).
 */
int floe_manifest_writer_add(floe_manifest_writer *w, int status, int64_t snapshot_id,
			     int64_t sequence_number, int64_t file_sequence_number,
			     const floe_data_file *f, floe_error *err) FLOE_WUR;
/* Entries written so far and the size estimate (for rolling manifests). */
uint64_t floe_manifest_writer_entries(const floe_manifest_writer *w);
uint64_t floe_manifest_writer_size_estimate(const floe_manifest_writer *w);
/*
 * Close: fills *out (allocated in arena a) with the manifest list entry:
 * exact length, counts, partition summaries; sequence numbers are -1
 * ("assign at commit"). The writer is freed.
 */
int floe_manifest_writer_close(floe_manifest_writer *w, floe_manifest_file *out, floe_arena *a,
			       floe_error *err) FLOE_WUR;
void floe_manifest_writer_abort(floe_manifest_writer *w);

/*
 * Write a manifest list to out (closed here, also on failure). Manifests with sequence_number -1 get seq (and
 * min_sequence_number seq when -1). In v3, data manifests without
 * first_row_id get one starting at first_row_id (the snapshot's); *next_row_id
 * (may be NULL) receives the row id after the last one assigned. *length
 * receives the file size.
 */
int floe_manifest_list_write(floe_output *out, int fv, int64_t snapshot_id,
			     int64_t parent_id, int64_t seq, int64_t first_row_id,
			     floe_manifest_file *manifests, size_t n, int64_t *next_row_id,
			     int64_t *length, floe_error *err) FLOE_WUR;

/* "data" / "deletes" / "position-deletes"... for messages. */
const char *floe_content_name(int content);

#endif
