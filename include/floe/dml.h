/*
 * floe/dml.h — user-issued row-level changes: DELETE ... WHERE, UPDATE ...
 * SET ... WHERE, and MERGE (upserts of a file of rows on a key), each one
 * atomic snapshot, in the mode the table asks for as Java Iceberg does:
 *
 *   copy-on-write (the default): every data file holding an affected row is
 *     rewritten without it (and with the new versions of updated rows); the
 *     snapshot is an overwrite that removes the old files — no delete file.
 *   merge-on-read: the affected rows are deleted by position — position
 *     delete files (v2) or deletion vectors (v3, merged with the file's
 *     existing DV, which the same commit replaces) — and new row versions
 *     are added in new data files: one row delta.
 *
 * The modes come from write.delete.mode, write.update.mode and
 * write.merge.mode; the isolation level from write.delete.isolation-level,
 * write.update.isolation-level and write.merge.isolation-level
 * (serializable, the default, or snapshot). Conflict detection against
 * commits that landed after the snapshot the operation read, as Java's
 * (SparkPositionDeltaWrite / SparkWrite's copy-on-write commit):
 *   - a data file this operation rewrites or deletes from was removed
 *     meanwhile (a concurrent delete, update, merge or compaction of the
 *     same file): FLOE_ECONFLICT;
 *   - a delete file was added meanwhile that could apply to a data file
 *     this operation touches (concurrent deletes of the same rows, an
 *     equality delete of a streaming upsert): FLOE_ECONFLICT;
 *   - serializable only: a data file was added meanwhile that may hold rows
 *     matching the condition (for a merge: any data file — its condition is
 *     the join): FLOE_ECONFLICT. Snapshot isolation allows these.
 * A conflict is final (not retryable): run the operation again.
 *
 * Errors a caller can act on: FLOE_EINVAL (a bad condition, an unknown
 * column — named in the message —, a SET of a missing or nested column, a
 * NULL for a required one, duplicate keys in a merge source, a bad record
 * in it with its line), FLOE_ECONFLICT (above), FLOE_ECOMMITUNKNOWN (the
 * commit was sent and not answered: nothing it wrote was deleted),
 * FLOE_EUNSUPPORTED (format v1 tables take no row-level deletes in
 * merge-on-read mode).
 *
 * Thread-safety: the table handle is used by one thread during the call.
 */
#ifndef FLOE_DML_H
#define FLOE_DML_H

#include "floe/table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum floe_dml_mode {
	FLOE_DML_MODE_TABLE = 0,     /* the table's write.<op>.mode */
	FLOE_DML_COPY_ON_WRITE,
	FLOE_DML_MERGE_ON_READ,
} floe_dml_mode;

typedef enum floe_dml_isolation {
	FLOE_DML_ISOLATION_TABLE = 0, /* the table's write.<op>.isolation-level */
	FLOE_DML_SERIALIZABLE,
	FLOE_DML_SNAPSHOT,
} floe_dml_isolation;

typedef struct floe_dml_opts {
	int version;                  /* 1 */
	floe_dml_mode mode;           /* override the table's mode */
	floe_dml_isolation isolation; /* override the table's isolation level */
	bool dry_run;                 /* find the affected files and rows; write nothing */
	bool ignore_case;             /* column names case-insensitively */
} floe_dml_opts;
#define FLOE_DML_OPTS_INIT {1, FLOE_DML_MODE_TABLE, FLOE_DML_ISOLATION_TABLE, false, false}

/* A data file with affected rows. */
typedef struct floe_dml_file {
	char *path;
	int64_t record_count; /* rows in the file (its manifest entry) */
	int64_t rows;         /* affected (deleted or replaced) rows */
} floe_dml_file;

typedef struct floe_dml_result {
	floe_dml_mode mode;           /* the mode used (COPY_ON_WRITE or MERGE_ON_READ) */
	floe_dml_isolation isolation; /* the level used */
	int64_t rows_deleted;         /* rows removed (delete), replaced (update, merge) */
	int64_t rows_updated;         /* update and merge: rows given new values */
	int64_t rows_inserted;        /* merge: source rows without a match */
	int64_t rows_rewritten;       /* copy-on-write: untouched rows copied to new files */
	size_t data_files_added, data_files_removed;
	size_t delete_files_added, delete_files_removed;
	int64_t base_snapshot_id;     /* the snapshot read (-1: an empty table) */
	int64_t snapshot_id;          /* the new snapshot; -1 when nothing was committed */
	floe_dml_file *files;         /* the affected data files, in path order */
	size_t n_files;
} floe_dml_result;

/* Free what a result holds (its files); the struct may be reused. */
FLOE_EXPORT void floe_dml_result_reset(floe_dml_result *res);

/*
 * DELETE FROM t WHERE `where` (floe scan's filter syntax, floe/scan.h; NULL
 * or "" is refused — pass "true" to delete every row). Rows where the
 * condition is not TRUE (false or unknown) stay. Zero matching rows commit
 * nothing (res->snapshot_id = -1). res is filled (reset it afterwards).
 */
FLOE_EXPORT int floe_dml_delete(floe_table *t, const char *where, const floe_dml_opts *opts,
				floe_dml_result *res, floe_error *err) FLOE_WUR;

/* One assignment of an update: column = expr, where expr is a literal
 * (42, -1.5, 'text', TRUE, NULL, DATE '2024-01-01', ...), another column of
 * the same type, or column/literal +, -, * column/literal for int, long,
 * float and double columns (SQL NULL propagation; integer overflow is
 * FLOE_EINVAL). */
typedef struct floe_dml_set {
	const char *column;
	const char *expr;
} floe_dml_set;

/*
 * UPDATE t SET set[0..n_set) WHERE `where` (as floe_dml_delete's). The new
 * values are computed from the old row; every assignment reads the old
 * values (SQL semantics).
 */
FLOE_EXPORT int floe_dml_update(floe_table *t, const floe_dml_set *set, size_t n_set,
				const char *where, const floe_dml_opts *opts,
				floe_dml_result *res, floe_error *err) FLOE_WUR;

/*
 * MERGE INTO t USING <source> ON t.key = s.key (for every column of on[])
 * WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *: the rows of
 * the source file — JSON lines (".json", ".jsonl", ".ndjson") or CSV with a
 * header (".csv"); format "json"/"csv" overrides the extension — replace the
 * table rows with the same key and the rest are inserted. Keys with a NULL
 * never match (SQL equality). A key twice in the source is FLOE_EINVAL (a
 * target row would match two source rows: Java's cardinality check).
 */
FLOE_EXPORT int floe_dml_merge(floe_table *t, const char *source_path, const char *format,
			       const char *const *on, size_t n_on, const floe_dml_opts *opts,
			       floe_dml_result *res, floe_error *err) FLOE_WUR;

/* "copy-on-write" / "merge-on-read"; "serializable" / "snapshot". */
FLOE_EXPORT const char *floe_dml_mode_name(floe_dml_mode m);
FLOE_EXPORT const char *floe_dml_isolation_name(floe_dml_isolation i);

#ifdef __cplusplus
}
#endif
#endif
