/*
 * floe/scan.h — reading Iceberg tables: scan planning with pruning, row
 * filters, deletes, time travel, incremental append reads, metadata tables,
 * and tables opened from a path (with relocation rules for tables copied
 * from elsewhere).
 *
 * A scan is opened on a loaded table with options (filter text, columns,
 * which snapshot); opening plans it: the snapshot's manifests are read in
 * parallel, pruned by partition summaries, partition values (the filter
 * projected through every transform) and column metrics, and each data file
 * gets the deletes that apply to it (position delete files, deletion
 * vectors, equality deletes; spec "Scan Planning"). Rows then come out as
 * Arrow batches (the C Data Interface, floe/arrow.h) in the table schema's
 * types — schema evolution, name mapping, identity partition values and
 * initial defaults applied — or rendered as CSV, JSON lines, an aligned
 * table, or a Parquet file.
 *
 * Filters are SQL text: "id >= 10 AND s IN ('a', 'b')", "ts < '2024-01-01
 * 10:00:00'", "name STARTS WITH 'x'" / "name LIKE 'x%'", "v IS NULL", "d
 * IS NAN", NOT, OR, parentheses, BETWEEN; literals convert to the column's
 * type (dates, timestamps, decimals, uuids as strings; X'0a0b' bytes).
 *
 * Errors a caller can act on: FLOE_EINVAL (bad filter, unknown column,
 * conflicting options: the message says which), FLOE_ENOTFOUND (no such
 * snapshot, branch, tag, metadata table, or a file the table references),
 * FLOE_ECORRUPT (a damaged file; the message names it — with
 * verify_checksums, a Parquet page whose CRC-32 does not match), FLOE_EUNSUPPORTED
 * (ORC or Avro data files, an incremental read meeting an overwrite or
 * delete snapshot, a column type floe cannot convert).
 *
 * Thread-safety: a scan is used by one thread at a time (planning uses
 * worker threads internally). The table must outlive its scans and must not
 * be refreshed while a scan is open.
 */
#ifndef FLOE_SCAN_H
#define FLOE_SCAN_H

#include "floe/arrow.h"
#include "floe/table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floe_scan floe_scan;

/* Where an incremental append read starts (Flink's StreamingStartingStrategy). */
typedef enum floe_scan_start {
	FLOE_START_NONE = 0,         /* not incremental: a table scan */
	FLOE_START_TABLE_THEN_INCREMENTAL, /* a table scan, then (follow) appends after it */
	FLOE_START_LATEST,           /* appends after the current snapshot */
	FLOE_START_EARLIEST,         /* appends from the first snapshot on (inclusive) */
	FLOE_START_SNAPSHOT_ID,      /* appends from start_snapshot_id on (inclusive) */
	FLOE_START_TIMESTAMP,        /* appends from the first snapshot at/after start_timestamp_ms */
} floe_scan_start;

typedef struct floe_scan_opts {
	int version;                /* 1 */
	const char *where;          /* filter (SQL text); NULL = every row */
	const char *const *columns; /* projection: names, dotted for nested fields, and the
				       metadata columns _file, _pos, _spec_id, _row_id,
				       _last_updated_sequence_number; NULL = all columns */
	size_t n_columns;
	bool ignore_case;           /* match column names case-insensitively */
	/* which snapshot (at most one of these) */
	int64_t snapshot_id;        /* -1: not given */
	int64_t as_of_ms;           /* the snapshot current at this time; -1: not given */
	const char *branch;         /* head of a branch (the table's current schema) */
	const char *tag;            /* a tag's snapshot (that snapshot's schema) */
	int64_t limit;              /* rows at most; -1 = all */
	int threads;                /* planning threads; 0 = one per CPU */
	int64_t batch_rows;         /* rows per Parquet read batch; 0 = default */
	/* incremental append reads */
	floe_scan_start start;
	int64_t start_snapshot_id;  /* FLOE_START_SNAPSHOT_ID */
	int64_t start_timestamp_ms; /* FLOE_START_TIMESTAMP */
	int64_t end_snapshot_id;    /* inclusive end; -1 = current (or the branch head) */
	bool skip_overwrites;       /* skip overwrite/delete snapshots instead of failing */
	bool no_row_group_pruning;  /* read every row group (else: skipped by statistics) */
	/* A manifest list or manifest that holds less than its metadata promises
	 * (truncated, a block lost) fails the scan with FLOE_ECORRUPT naming the
	 * file; with skip_corrupt the scan reads what is there instead, skipping
	 * each corrupt manifest whole and logging a warning that names it and
	 * what it lacks (floe_scan_stats.manifests_corrupt counts them). */
	bool skip_corrupt;
	/* check the CRC-32 of every Parquet page that carries one (data and delete
	 * files); a mismatch is FLOE_ECORRUPT naming the file, row group, column
	 * and page. Off by default (as Spark/parquet-java read); compaction
	 * turns it on. Avro sync markers and deletion-vector CRCs are always
	 * checked. */
	bool verify_checksums;
} floe_scan_opts;

#define FLOE_SCAN_OPTS_INIT                                                                   \
	{1, NULL, NULL, 0, false, -1, -1, NULL, NULL, -1, 0, 0, FLOE_START_NONE, -1, -1, -1, false, \
	 false, false, false}

/* Plan a scan of t. The caller frees *out with floe_scan_free. */
FLOE_EXPORT int floe_scan_open(floe_scan **out, floe_table *t, const floe_scan_opts *opts,
		   floe_error *err) FLOE_WUR;
FLOE_EXPORT void floe_scan_free(floe_scan *s);

/* The snapshot the scan reads (the end snapshot for incremental reads);
 * -1 for a table without snapshots. */
FLOE_EXPORT int64_t floe_scan_snapshot_id(const floe_scan *s);

typedef struct floe_scan_stats {
	uint64_t manifests;          /* in the snapshot's manifest list(s) */
	uint64_t manifests_skipped;  /* pruned by partition summaries */
	uint64_t entries;            /* manifest entries decoded */
	uint64_t data_files;         /* planned */
	uint64_t data_files_skipped; /* pruned by partition values or metrics */
	uint64_t delete_files;       /* planned (applying to some planned data file) */
	uint64_t delete_files_skipped;
	uint64_t plan_ns;            /* wall time of planning */
	uint64_t files_read, rows_read, rows_deleted, rows_filtered, rows_out;
	uint64_t row_groups;         /* of the data files read, when a filter applies */
	uint64_t row_groups_skipped; /* pruned by their column statistics */
	uint64_t manifests_corrupt;  /* skipped (skip_corrupt): manifest lists count too */
	uint64_t files_deleted;      /* not read: their position deletes or DV remove every row */
} floe_scan_stats;

FLOE_EXPORT void floe_scan_get_stats(const floe_scan *s, floe_scan_stats *out);

/* One planned data file. Strings are valid while the scan lives. */
typedef struct floe_scan_task {
	const char *path;
	const char *format;
	int32_t spec_id;
	const char *partition; /* "a=1/ts_day=2024-01-01" */
	int64_t record_count;
	int64_t file_size_in_bytes;
	int64_t data_sequence_number;
	size_t position_deletes; /* delete files (and DVs) that apply */
	size_t equality_deletes;
	const char *residual; /* the filter left for its rows ("TRUE": none) */
} floe_scan_task;

typedef int (*floe_scan_task_fn)(const floe_scan_task *task, void *payload);

/* The planned data files, in plan order (manifest list order, then entries). */
FLOE_EXPORT int floe_scan_tasks(floe_scan *s, floe_scan_task_fn fn, void *payload, floe_error *err) FLOE_WUR;

/* The Arrow schema of the batches (a "+s" struct of the columns). */
FLOE_EXPORT int floe_scan_arrow_schema(floe_scan *s, struct ArrowSchema *out, floe_error *err) FLOE_WUR;
/* The next batch (caller releases it); *eof at the end (out released). */
FLOE_EXPORT int floe_scan_next(floe_scan *s, struct ArrowArray *out, bool *eof, floe_error *err) FLOE_WUR;
/* Count the rows (deletes and filter applied) without materialising columns
 * where metadata suffices. Consumes the scan. */
FLOE_EXPORT int floe_scan_count(floe_scan *s, int64_t *out, floe_error *err) FLOE_WUR;

typedef enum floe_output_format {
	FLOE_OUTPUT_CSV = 0,   /* header line, RFC 4180 quoting, NULL as empty */
	FLOE_OUTPUT_JSON,      /* JSON lines, one object per row */
	FLOE_OUTPUT_TABLE,     /* aligned text for people */
	FLOE_OUTPUT_TABLE_WIDE, /* the same, long cells in full (TABLE cuts cells past 60
				   bytes to 57 and "...") */
} floe_output_format;

/*
 * Render every remaining row (at most the scan's limit). Values: numbers as
 * numbers; decimals as strings with the column's scale; dates, times and
 * timestamps ISO-8601 ("2024-01-01T10:00:00", "+00:00" for timestamptz);
 * uuids canonical; binary and fixed base64; NaN/Infinity as strings in
 * JSON; structs as objects, lists as arrays, maps as arrays of [key, value]
 * (JSON) — in CSV and table output nested values appear as JSON text.
 * A non-zero return of fn stops the output and is returned.
 */
FLOE_EXPORT int floe_scan_write(floe_scan *s, floe_output_format fmt, floe_write_fn fn, void *payload,
		    floe_error *err) FLOE_WUR;
/* Write the rows to a new Parquet file at path (with field ids). */
FLOE_EXPORT int floe_scan_write_parquet(floe_scan *s, const char *path, floe_error *err) FLOE_WUR;

/*
 * Follow a table: an incremental append read from opts->start (or the table
 * scan first, with FLOE_START_TABLE_THEN_INCREMENTAL), then every
 * interval_ms refresh the table and emit only the rows of snapshots
 * appended since. Stops after max_polls refreshes (0: never) or when fn
 * returns non-zero. Overwrite and delete snapshots fail with
 * FLOE_EUNSUPPORTED unless opts->skip_overwrites. The table is refreshed.
 */
FLOE_EXPORT int floe_scan_follow(floe_table *t, const floe_scan_opts *opts, int64_t interval_ms,
		     int64_t max_polls, floe_output_format fmt, floe_write_fn fn, void *payload,
		     floe_error *err) FLOE_WUR;

/*
 * Changelog reads (Spark's changelog view): the rows each snapshot in
 * (from, to] of to's ancestry changed, oldest first, as a scan whose
 * batches are every column of the table's current schema followed by
 * _change_type (string: INSERT, DELETE, UPDATE_BEFORE, UPDATE_AFTER),
 * _change_ordinal (int: the snapshot's place in the range, from
 * ordinal_base) and _commit_snapshot_id (long). A snapshot's changes are its
 * rows minus its parent's (INSERT) and its parent's minus its own (DELETE),
 * as multisets of whole rows, so a rewritten file's unchanged rows
 * (copy-on-write) cancel out as Spark's carry-over removal does; only the
 * data files whose delete files or presence differ between the two
 * snapshots are read. Replace (compaction) snapshots change nothing and
 * take no ordinal. With identifier columns (the schema's identifier fields,
 * or identifier_columns), a DELETE and an INSERT of one key in one snapshot
 * become UPDATE_BEFORE and UPDATE_AFTER; two deleted rows of one key in
 * one snapshot fail with FLOE_EINVAL, as Spark does.
 *
 * from / to name a snapshot: "ID" or "snapshot:ID", "timestamp:TIME" (the
 * snapshot current at TIME: epoch ms or ISO-8601), "tag:NAME" or
 * "branch:NAME", or a bare ref name. from NULL or "earliest": from the
 * start of the table; to NULL: the current snapshot.
 */
typedef struct floe_changelog_opts {
	int version;                           /* 1 */
	const char *from;                      /* exclusive */
	const char *to;                        /* inclusive */
	const char *const *identifier_columns; /* NULL: the schema's identifier fields */
	size_t n_identifier_columns;
	bool no_updates;                       /* DELETE/INSERT only */
	int64_t ordinal_base;                  /* the first snapshot's _change_ordinal (0) */
	int threads;                           /* planning threads; 0 = one per CPU */
} floe_changelog_opts;

#define FLOE_CHANGELOG_OPTS_INIT {1, NULL, NULL, NULL, 0, false, 0, 0}

/* Open a changelog read (rows via floe_scan_next / floe_scan_write). The
 * caller frees *out with floe_scan_free. FLOE_ENOTFOUND: a from/to that
 * names no snapshot; FLOE_EINVAL: from is not an ancestor of to. */
FLOE_EXPORT int floe_scan_changelog_open(floe_scan **out, floe_table *t,
					 const floe_changelog_opts *opts, floe_error *err) FLOE_WUR;

/* Called after the changes of one commit were all written (follow mode):
 * the position to resume from is (snapshot_id, next_ordinal). Non-zero stops. */
typedef int (*floe_changelog_commit_fn)(int64_t snapshot_id, int64_t next_ordinal, void *payload);

/*
 * Follow a table's changelog: the changes after opts->from (NULL: every
 * change from the table's start) one commit at a time — fn receives the
 * commit's rows (in CSV only the first commit has a header), then done its
 * position — then every interval_ms the table is refreshed and each new
 * commit is emitted the same way. Stops after max_polls refreshes (0:
 * never) or when fn/done return non-zero. The table is refreshed.
 */
FLOE_EXPORT int floe_scan_changelog_follow(floe_table *t, const floe_changelog_opts *opts,
					   int64_t interval_ms, int64_t max_polls,
					   floe_output_format fmt, floe_write_fn fn,
					   floe_changelog_commit_fn done, void *payload,
					   floe_error *err) FLOE_WUR;

/*
 * A metadata table as a scan (rows from floe_scan_next / floe_scan_write):
 * "snapshots", "history", "refs", "metadata_log_entries", "manifests",
 * "files", "data_files", "delete_files", "entries", "partitions" — the
 * columns PyIceberg's tbl.inspect and Java's metadata tables expose.
 * snapshot_id -1 = current (for manifests, files, entries, partitions).
 */
FLOE_EXPORT int floe_inspect_open(floe_scan **out, floe_table *t, const char *name, int64_t snapshot_id,
		      floe_error *err) FLOE_WUR;

/*
 * floe_inspect_open with a projection: columns names the columns wanted
 * ("*" or NULL: every column; names of no column are ignored). The files,
 * data_files, delete_files and entries tables (and their all_* forms) then
 * build only those columns and decode only what they need from the
 * manifests (the metric maps, most of a manifest, only for the metric and
 * readable_metrics columns); the rows are the same. A dotted name of a
 * primitive field inside a struct column ("partition.region",
 * "readable_metrics.id.lower_bound", "data_file.content") keeps that column
 * and adds the field as a column of its own named so, after the others, as
 * floe_scan_open projects struct fields. Other tables show every column.
 * columns is read only during the call.
 */
FLOE_EXPORT int floe_inspect_open_columns(floe_scan **out, floe_table *t, const char *name,
					  int64_t snapshot_id, const char *const *columns,
					  size_t n_columns, floe_error *err) FLOE_WUR;

/*
 * Open a path-based table: a table directory (version-hint.text / .txt, or
 * the highest vN.metadata.json / NNNNN-*.metadata.json) or a metadata file.
 * path_map holds "from=to" rules: every path read from metadata (manifest
 * lists, manifests, data and delete files) that starts with `from` has that
 * prefix replaced by `to` (first match wins) — for tables copied from
 * elsewhere. Delete files and deletion vectors match data files by their
 * paths after relocation (Impala's copied tables record a data file as
 * "/test-warehouse/x" in manifests and "hdfs://host/test-warehouse/x" in
 * delete files: rules for both prefixes make them match). Relative paths
 * and relative rule targets are taken from the working directory. Free
 * with floe_table_free.
 */
FLOE_EXPORT int floe_table_open_path(floe_table **out, const char *path, const char *const *path_map,
			 size_t n_map, floe_error *err) FLOE_WUR;

#ifdef __cplusplus
}
#endif
#endif
