/*
 * commit.h — snapshot producers and the commit loop.
 *
 * A producer (floe_snapshot_op) writes the manifests of the files it adds
 * once, then for each attempt: reads the current head of its branch,
 * validates (files it removes must still be live; for rewrites, no delete
 * file committed meanwhile may target a file it replaces), rewrites the
 * manifests that hold removed files (those entries become DELETED, the rest
 * EXISTING), writes the manifest list (new manifests first, then the
 * rewritten and kept ones), builds the next metadata and asks the catalog
 * to swap it in. A lost race (FLOE_ECONFLICT, FLOE_ETIMEDOUT) refreshes the
 * table and tries again with exponential backoff and jitter, re-applying the
 * change on the new base, so the other writer's snapshot is always kept. A
 * failed validation is final (FLOE_ECONFLICT, not retryable). On a definite
 * failure everything the producer wrote is deleted; when the outcome is
 * unknown (the catalog's non-retryable FLOE_EIO) nothing is.
 *
 * Kinds and the operation they record (Java's SnapshotSummary):
 *   APPEND     add data files                        "append"
 *   OVERWRITE  add and remove data/delete files      "overwrite"
 *   DELETE     remove data files / add deletes       "delete"
 *   REPLACE    rewrite files, same data (compaction) "replace"
 *   ROW_DELTA  add data and delete files (upserts)   append/delete/overwrite by content
 *
 * spec: "Snapshots", "Sequence Numbers", "Row Lineage", "Manifests" (status,
 * inheritance); ../shared/iceberg-notes.md sections 3 and 6.
 *
 * Thread-safety: one thread per producer; the table must not be used by
 * another thread meanwhile.
 */
#ifndef FLOE_TABLE_COMMIT_H
#define FLOE_TABLE_COMMIT_H

#include "table/table_impl.h"

typedef enum floe_op_kind {
	FLOE_OP_APPEND = 0,
	FLOE_OP_OVERWRITE,
	FLOE_OP_DELETE,
	FLOE_OP_REPLACE,
	FLOE_OP_ROW_DELTA,
} floe_op_kind;

typedef struct floe_snapshot_op floe_snapshot_op;

/* Start an operation on table t (which must outlive it). branch NULL = main. */
int floe_op_new(floe_snapshot_op **out, floe_table *t, floe_op_kind kind, const char *branch,
		floe_error *err) FLOE_WUR;
/* Add a data or delete file (copied; content decides). Its spec_id must name
 * a spec of the table. */
int floe_op_add_file(floe_snapshot_op *op, const floe_data_file *f, floe_error *err) FLOE_WUR;
/* Remove a live file (matched by content and path; copied). */
int floe_op_remove_file(floe_snapshot_op *op, const floe_data_file *f, floe_error *err) FLOE_WUR;
/* Added data files get this data sequence number instead of the commit's
 * (a rewrite keeps the sequence number of the snapshot it started from, so
 * equality deletes committed meanwhile still apply to the new files). */
void floe_op_set_data_sequence_number(floe_snapshot_op *op, int64_t seq);
/* The files added were written by this process (a pipeline's checkpoint, a
 * compaction): before each swap the commit checks they still exist and fails
 * cleanly (FLOE_ENOTFOUND, nothing committed) if one was deleted meanwhile.
 * The manifests and the list it writes itself are always checked (and
 * written again when gone). */
void floe_op_verify_added(floe_snapshot_op *op);
/* Commit a snapshot even when the operation adds and removes nothing (its
 * summary is the change: a pipeline's source offsets moved without rows,
 * as Flink's committer commits empty checkpoints). */
void floe_op_allow_empty(floe_snapshot_op *op);
/* Validate against every snapshot committed after this one (REPLACE,
 * OVERWRITE, DELETE): a new delete file targeting a removed data file fails
 * the commit. -1 = the base the first attempt sees. */
void floe_op_validate_from(floe_snapshot_op *op, int64_t snapshot_id);
/*
 * REPLACE of manifests (rewrite-manifests): the snapshot lists `fresh`
 * (already written, holding the same live entries as EXISTING) instead of
 * `old`; every old manifest must still be in the base (else a final
 * FLOE_ECONFLICT). Cannot be combined with adding or removing files.
 */
int floe_op_replace_manifests(floe_snapshot_op *op, const floe_manifest_file *old, size_t n_old,
			      const floe_manifest_file *fresh, size_t n_fresh,
			      floe_error *err) FLOE_WUR;
/*
 * Fence a pipeline's commit: every attempt requires that the newest
 * snapshot of `pipeline_id` (summary floe.pipeline-id) in the branch's
 * ancestry is `expected` (FLOE_NO_SNAPSHOT: none) — the snapshot this
 * process resumed from or committed last. Otherwise the commit fails with
 * a final FLOE_ECONFLICT naming the other process's snapshot.
 */
int floe_op_fence_pipeline(floe_snapshot_op *op, const char *pipeline_id, int64_t expected,
			   floe_error *err) FLOE_WUR;
/*
 * A caller's own check of every attempt's base (after the pipeline fence):
 * fn returns 0 to go on, or an error that ends the commit (a final
 * FLOE_ECONFLICT unless it sets retryable). The Kafka source's per-
 * partition fence (src/stream/stream_split_fence.c) is one.
 */
typedef int (*floe_op_check_fn)(void *payload, const floe_metadata *base,
				const floe_snapshot *parent, floe_error *err);
void floe_op_set_check(floe_snapshot_op *op, floe_op_check_fn fn, void *payload);
/* The newest snapshot of pipeline_id from head back (FLOE_NO_SNAPSHOT);
 * snapshots the pipeline was told to forget do not count. */
int64_t floe_pipeline_last_snapshot(const floe_metadata *m, const floe_snapshot *head,
				    const char *pipeline_id);
/*
 * `floe pipelines forget`: the table property floe.pipeline.forget.<id>
 * holds the table's last sequence number at the time; the pipeline's
 * snapshots up to it are no longer its state (a restart starts from
 * nothing, expiry does not hold them). Returns that number, or -1.
 */
int64_t floe_pipeline_forgotten_seq(const floe_metadata *m, const char *pipeline_id);
/* Whether s is a snapshot of pipeline_id that still counts as its state. */
bool floe_pipeline_snapshot_counts(const floe_metadata *m, const floe_snapshot *s,
				   const char *pipeline_id);
/*
 * Overwrite (an OVERWRITE operation): replace what the scope selects, with
 * the conflict validations of Java's ReplacePartitions / OverwriteFiles.
 *  - dynamic: the partitions (spec and tuple) of the data files added here
 *    (Spark's dynamic mode, Flink's overwrite; an unpartitioned table is
 *    replaced whole);
 *  - filter: a row filter decided per file by `filter` (a higher layer's
 *    evaluator): FLOE_SCOPE_ALL removes the file, FLOE_SCOPE_SOME fails
 *    ("some, but not all, rows match", as overwriteByRowFilter), and every
 *    data file added here must be FLOE_SCOPE_ALL
 *    (validateAddedFilesMatchOverwriteFilter).
 * The first attempt removes the live data and delete files in the scope of
 * its base whose data sequence number is <= base_seq (-1: all; a pipeline
 * keeps its own earlier checkpoints of the same load). Every attempt fails
 * with a final FLOE_ECONFLICT when a snapshot after base_snapshot (not one
 * of own_pipeline's) added a data file in the scope (validateNoConflictingData
 * from the starting snapshot; FLOE_NO_SNAPSHOT: the table had none, the
 * whole ancestry is validated),
 * and the producer's validation of removed files applies from there too.
 */
enum { FLOE_SCOPE_NONE = 0, FLOE_SCOPE_SOME = 1, FLOE_SCOPE_ALL = 2 };
typedef int (*floe_op_scope_fn)(void *payload, const floe_data_file *f);
typedef struct floe_overwrite_scope {
	bool dynamic;
	floe_op_scope_fn filter; /* when not dynamic */
	void *filter_payload;
	const char *filter_text; /* for messages (copied) */
	int64_t base_snapshot;   /* the head the overwrite saw (FLOE_NO_SNAPSHOT: none) */
	int64_t base_seq;        /* -1: every live file of the scope */
	const char *own_pipeline; /* (copied; NULL: none) */
} floe_overwrite_scope;
int floe_op_set_overwrite(floe_snapshot_op *op, const floe_overwrite_scope *scope,
			  floe_error *err) FLOE_WUR;
/* The id the snapshot will have. */
int64_t floe_op_snapshot_id(const floe_snapshot_op *op);
/* A new manifest writer at <metadata>/<commit uuid>-m<N>.avro for the
 * table's current schema and `spec`, headed with this snapshot's id. */
int floe_op_open_manifest(floe_snapshot_op *op, const floe_partition_spec *spec, int content,
			  floe_manifest_writer **w, floe_error *err) FLOE_WUR;
/* Extra snapshot summary properties (e.g. floe.pipeline-id). */
int floe_op_set_summary(floe_snapshot_op *op, const char *key, const char *value,
			floe_error *err) FLOE_WUR;
/*
 * Commit. On success *snapshot_id (optional) receives the new snapshot and
 * the table holds the new metadata. An operation that adds and removes
 * nothing commits nothing (FLOE_OK, *snapshot_id = -1).
 */
int floe_op_commit(floe_snapshot_op *op, int64_t *snapshot_id, floe_error *err) FLOE_WUR;
void floe_op_free(floe_snapshot_op *op);

/* Files added/removed so far (for callers' reports). */
size_t floe_op_added(const floe_snapshot_op *op);
size_t floe_op_removed(const floe_snapshot_op *op);

/* ---- the fast append (an APPEND operation) ------------------------------------ */

typedef floe_snapshot_op floe_append;

static inline int floe_append_new(floe_append **out, floe_table *t, const char *branch,
				  floe_error *err)
{
	return floe_op_new(out, t, FLOE_OP_APPEND, branch, err);
}
static inline int floe_append_add_file(floe_append *ap, const floe_data_file *f, floe_error *err)
{
	if (f->content != FLOE_CONTENT_DATA)
		return floe_error_set(err, FLOE_EINVAL, "an append adds data files only ('%s')",
				      f->file_path);
	return floe_op_add_file(ap, f, err);
}
static inline int floe_append_set_summary(floe_append *ap, const char *key, const char *value,
					  floe_error *err)
{
	return floe_op_set_summary(ap, key, value, err);
}
static inline int floe_append_commit(floe_append *ap, int64_t *snapshot_id, floe_error *err)
{
	return floe_op_commit(ap, snapshot_id, err);
}
static inline void floe_append_free(floe_append *ap)
{
	floe_op_free(ap);
}

/* Retry policy read from table properties (commit.retry.*, and
 * commit.status-check.* for swaps whose outcome is unknown). */
typedef struct floe_retry_policy {
	int num_retries;
	int64_t min_wait_ms, max_wait_ms, total_timeout_ms;
	int status_checks;
	int64_t status_wait_ms;
} floe_retry_policy;

void floe_retry_policy_from(floe_retry_policy *p, const floe_metadata *m);

/* ---- the commit path (commit_path.c) ------------------------------------------- */

/*
 * What a change to a table's metadata supplies to the commit path. Every
 * metadata change goes through floe_table__commit: creation, property
 * updates, snapshot producers, snapshot expiry.
 */
typedef struct floe_commit_fns {
	/*
	 * Build the next metadata on `base` (the table's current metadata, NULL
	 * for a create; attempt counts from 1). FLOE_OK with *next NULL: there
	 * is nothing to commit. A failed validation returns a non-retryable
	 * error; a retryable one refreshes and builds again.
	 */
	int (*build)(void *payload, const floe_metadata *base, int attempt, floe_metadata **next,
		     floe_error *err);
	/* The attempt's swap definitely failed: remove what only that attempt
	 * wrote (optional). Never called for an attempt that may be current. */
	void (*drop_attempt)(void *payload, int attempt);
	/* Does `cur` hold the change (its snapshot id, table uuid, properties)?
	 * Resolves an unknown outcome; without it the metadata file's location
	 * decides, which is not proof for a catalog that reuses locations. */
	bool (*landed)(void *payload, const floe_metadata *cur);
} floe_commit_fns;

/*
 * Commit a change: build on the current metadata, swap through the catalog,
 * retry lost races (the catalog's retryable errors) with exponential backoff
 * and jitter inside commit.retry.*, and resolve an unknown outcome by
 * re-reading the catalog (commit_path.c DESIGN). On success the table holds
 * the new metadata. Errors: the build's, a final ECONFLICT, or
 * ECOMMITUNKNOWN (nothing may be deleted: the change may be current).
 * `what` names the change in messages ("append to").
 */
int floe_table__commit(floe_table *t, const char *what, const floe_commit_fns *fns, void *payload,
		       floe_error *err) FLOE_WUR;

/*
 * Commit a change to each of n tables in one catalog transaction, all or
 * nothing (pipeline.atomic-commit): every attempt builds each table's next
 * metadata on its current base, then the catalog swaps them together. A
 * lost race on any table refreshes them all and builds again; an unknown
 * outcome re-reads every table (each fns->landed decides) and deletes
 * nothing until the catalog tells. The tables must share one catalog
 * object, which must have transactions (FLOE_EUNSUPPORTED otherwise); each
 * build must produce a change (no creates, no empty changes).
 */
int floe_table__commit_multi(floe_table **ts, size_t n, const char *what,
			     const floe_commit_fns *fns, void **payloads, floe_error *err) FLOE_WUR;

/*
 * Commit n snapshot operations on n different tables of one catalog in one
 * transaction (floe_table__commit_multi). snapshot_ids (optional) receives
 * each new snapshot. Every operation must add or remove something. On a
 * definite failure every operation's files are removed; on
 * FLOE_ECOMMITUNKNOWN none.
 */
int floe_op_commit_all(floe_snapshot_op **ops, size_t n, int64_t *snapshot_ids,
		       floe_error *err) FLOE_WUR;

#endif
