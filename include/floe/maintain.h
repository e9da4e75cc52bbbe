/*
 * floe/maintain.h — table maintenance: rewrite data files (compaction),
 * expire snapshots, delete orphan files, rewrite manifests, and the
 * per-table lock that keeps two maintainers (floe or Iceberg Flink) apart.
 *
 * floe_maintain() runs the steps in the only safe order — compact, expire,
 * delete orphans, rewrite manifests — under the table's lock. Compaction
 * leaves the replaced files reachable from older snapshots; expiry drops
 * those snapshots and deletes what only they reached; orphan cleanup then
 * removes what no metadata reaches at all (failed writes, crashed commits);
 * rewriting manifests last packs the entries that survived. The single
 * steps are public for callers that schedule them themselves; they do not
 * take the lock.
 *
 * Thread-safety: one maintainer per table at a time (take the lock); the
 * table handle is used by one thread.
 */
#ifndef FLOE_MAINTAIN_H
#define FLOE_MAINTAIN_H

#include "floe/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- rewrite data files (compaction) ----------------------------------------------- */

typedef struct floe_compact_opts {
	int version;               /* 1 */
	int64_t target_file_size;  /* -1 = write.target-file-size-bytes (512 MiB) */
	int64_t min_file_size;     /* files below are candidates; -1 = 75% of the target */
	int64_t max_file_size;     /* files above are split; -1 = 180% of the target */
	int min_input_files;       /* a group of fewer candidates is left alone unless it
				      has deletes or more than a target of data (5) */
	int delete_file_threshold; /* a file with at least this many delete files (or a
				      deletion vector) attached is a candidate (1) */
	int64_t max_bytes;         /* cap on bytes read per run; -1 = none */
	int64_t max_group_bytes;   /* a file group is at most this much input (100 GiB) */
	int max_commits;           /* partial progress: commit every group as it
				      finishes, at most this many commits (0 = one commit) */
	bool sort;                 /* sort rows by the table's sort order */
	bool dry_run;              /* plan and report; write nothing */
	const char *branch;        /* compact this branch's head (NULL: main) */
} floe_compact_opts;
#define FLOE_COMPACT_OPTS_INIT {1, -1, -1, -1, 5, 1, -1, INT64_C(107374182400), 0, false, false, NULL}

typedef struct floe_compact_result {
	size_t groups, groups_committed, groups_failed;
	size_t data_files_rewritten, data_files_added, delete_files_removed;
	int64_t bytes_rewritten, bytes_added, records_rewritten;
	size_t commits;
} floe_compact_result;

/* ---- expire snapshots ------------------------------------------------------------ */

typedef struct floe_expire_opts {
	int version;           /* 1 */
	int64_t older_than_ms; /* expire snapshots older than this (epoch ms); -1 = now -
				  history.expire.max-snapshot-age-ms (5 days) */
	int retain_last;       /* keep at least this many per branch; -1 = the table's
				  history.expire.min-snapshots-to-keep (1) */
	bool clean_files;      /* delete files no retained snapshot reaches (true) */
	bool dry_run;          /* decide and report; change nothing */
	size_t delete_batch;   /* files deleted per batch (1000) */
} floe_expire_opts;
#define FLOE_EXPIRE_OPTS_INIT {1, -1, -1, true, false, 1000}

typedef struct floe_expire_result {
	size_t snapshots_expired;
	size_t manifest_lists_deleted, manifests_deleted, data_files_deleted, delete_files_deleted,
		other_files_deleted;
	int64_t bytes_deleted;
	/* snapshots kept only as a pipeline's state (its newest, holding its
	 * committed offsets: held while the pipeline runs or until
	 * history.expire.keep-pipeline-state-for after a completed load) */
	size_t snapshots_held_for_pipelines;
} floe_expire_result;

/* ---- pipelines and their state ------------------------------------------------------ */

/* A pipeline that writes the table, as its newest snapshot shows it. */
typedef struct floe_pipeline_state {
	const char *pipeline_id;
	int64_t snapshot_id;
	int64_t checkpoint_id; /* -1 unknown */
	int64_t timestamp_ms;  /* its last commit */
	const char *source_offsets; /* JSON: the committed offsets (may be NULL) */
	bool complete;  /* a one-shot load that read all of its input */
	bool held;      /* expiry keeps the snapshot (the pipeline may resume from it) */
	int64_t held_until_ms; /* complete loads: until then; -1: until forgotten */
} floe_pipeline_state;
typedef int (*floe_pipeline_state_fn)(const floe_pipeline_state *s, void *payload);

/* Every pipeline with state in the table (strings valid during the call;
 * fn's non-zero return stops and is returned). */
FLOE_EXPORT int floe_table_pipelines(floe_table *t, floe_pipeline_state_fn fn, void *payload,
				     floe_error *err) FLOE_WUR;
/* The snapshot a pipeline left the table in at a checkpoint: the newest
 * snapshot of the main branch's history (the current snapshot and its
 * ancestors) written by pipeline_id (summary floe.pipeline-id) whose
 * floe.checkpoint-id is <= checkpoint_id (< 0: the newest checkpoint).
 * *snapshot_id receives it and *checkpoint_used (may be NULL) its checkpoint
 * id. Used to read tables of one pipeline at the same checkpoint when their
 * commits are not atomic (floe scan --consistent-with). FLOE_ENOTFOUND when
 * no such snapshot is left. */
FLOE_EXPORT int floe_table_pipeline_checkpoint_snapshot(floe_table *t, const char *pipeline_id,
						      int64_t checkpoint_id, int64_t *snapshot_id,
						      int64_t *checkpoint_used,
						      floe_error *err) FLOE_WUR;
/* Forget a pipeline's state: a restart of it starts from nothing, and expiry
 * no longer holds its snapshot (a table property commit). FLOE_ENOTFOUND
 * when no pipeline of that id has state here. */
FLOE_EXPORT int floe_table_forget_pipeline(floe_table *t, const char *pipeline_id,
					   floe_error *err) FLOE_WUR;

/* ---- delete orphan files ---------------------------------------------------------- */

typedef struct floe_orphan_opts {
	int version;           /* 1 */
	int64_t older_than_ms; /* only files last modified before this; -1 = now - 3 days */
	const char *location;  /* where to look (NULL = the table location) */
	bool dry_run;          /* list, delete nothing */
} floe_orphan_opts;
#define FLOE_ORPHAN_OPTS_INIT {1, -1, NULL, false}

typedef struct floe_orphan_result {
	size_t files_found, files_deleted;
	int64_t bytes;
	size_t files_scanned, files_too_young;
	size_t files_leased; /* not referenced, but newer than a live writer's lease */
} floe_orphan_result;

/* Called for each orphan (before it is deleted, or instead in a dry run). */
typedef int (*floe_orphan_fn)(const char *path, uint64_t size, int64_t mtime_ms, void *payload);

/* ---- rewrite manifests -------------------------------------------------------------- */

typedef struct floe_rewrite_manifests_opts {
	int version;          /* 1 */
	int64_t target_bytes; /* -1 = commit.manifest.target-size-bytes (8 MiB) */
	bool dry_run;
} floe_rewrite_manifests_opts;
#define FLOE_REWRITE_MANIFESTS_OPTS_INIT {1, -1, false}

typedef struct floe_rewrite_manifests_result {
	size_t manifests_before, manifests_after, entries;
	int64_t snapshot_id; /* -1 when nothing changed */
} floe_rewrite_manifests_result;

/* ---- equality deletes turned into DVs / position deletes ------------------------- */

typedef struct floe_convert_deletes_opts {
	int version; /* 1 */
	bool dry_run;
} floe_convert_deletes_opts;
#define FLOE_CONVERT_DELETES_OPTS_INIT {1, false}

typedef struct floe_convert_deletes_result {
	int64_t data_files_read;     /* with equality deletes attached */
	int64_t bytes_read;          /* their sizes */
	int64_t data_files_touched;  /* got a DV / position delete */
	int64_t rows_converted;
	int64_t delete_files_written;
	int64_t equality_delete_files_removed;
	int64_t snapshot_id;         /* -1: nothing committed */
	int64_t duration_ms;
} floe_convert_deletes_result;

/* ---- the steps ---------------------------------------------------------------------- */

/*
 * Compaction: bin-pack, within each partition, small files and files with
 * deletes attached into files near the target size (deletes applied; delete
 * files that no longer apply to any live file are dropped). New files keep
 * the data sequence number of the snapshot the rewrite started from, so
 * equality deletes committed meanwhile still apply; the commit validates
 * that no delete file committed meanwhile targets a replaced file (else the
 * group is given up, its files deleted, nothing lost).
 */
FLOE_EXPORT int floe_compact(floe_table *t, const floe_compact_opts *opts, floe_compact_result *res,
		 floe_error *err) FLOE_WUR;

/*
 * Expire snapshots: never the current snapshot or a branch/tag head; per
 * branch keep its last `retain_last` ancestors and those newer than the
 * cutoff (branch-level min-snapshots-to-keep / max-snapshot-age-ms win;
 * refs past max-ref-age-ms are removed); keep the newest snapshot of every
 * pipeline that writes the table (floe.pipeline-id: its offsets are its
 * state). Then delete the files only expired snapshots reached.
 */
FLOE_EXPORT int floe_expire_snapshots(floe_table *t, const floe_expire_opts *opts, floe_expire_result *res,
			  floe_error *err) FLOE_WUR;

/*
 * Delete files under the table location that no snapshot, manifest,
 * metadata file, metadata-log entry or statistics file reaches and that
 * are older than the cutoff (younger files may belong to a commit in
 * progress). Whatever the cutoff, files being written (names starting with
 * '.') are kept for a day, and no file newer than a live writer lease (a
 * floe writer's promise that its files since then may still be committed)
 * is deleted. fn (may be NULL) sees each orphan.
 */
FLOE_EXPORT int floe_delete_orphan_files(floe_table *t, const floe_orphan_opts *opts, floe_orphan_fn fn,
			     void *payload, floe_orphan_result *res, floe_error *err) FLOE_WUR;

/*
 * Regroup the live entries of the current snapshot's small manifests,
 * clustered by partition, into manifests near the target size in one
 * "replace" snapshot (data and delete manifests apart, per spec).
 */
FLOE_EXPORT int floe_rewrite_manifests(floe_table *t, const floe_rewrite_manifests_opts *opts,
			   floe_rewrite_manifests_result *res, floe_error *err) FLOE_WUR;

/*
 * Convert deletes: the rows each live equality delete matches in the data
 * files it applies to (data sequence number lower than the delete's, same
 * partition unless the delete's spec is unpartitioned) become DVs (v3,
 * merged with existing ones) or position deletes (v2), and every equality
 * delete file is removed — one row delta, no data file rewritten. Only
 * appends may land meanwhile (else FLOE_ECONFLICT, nothing committed).
 */
FLOE_EXPORT int floe_convert_deletes(floe_table *t, const floe_convert_deletes_opts *opts,
			 floe_convert_deletes_result *res, floe_error *err) FLOE_WUR;

/* ---- all of it, in order, under the lock ------------------------------------------ */

typedef enum floe_maintain_step {
	FLOE_STEP_COMPACT = 1,
	FLOE_STEP_EXPIRE = 2,
	FLOE_STEP_ORPHANS = 4,
	FLOE_STEP_REWRITE_MANIFESTS = 8,
	FLOE_STEP_ALL = 15,
	/* opt-in (not in ALL): runs first, before compaction */
	FLOE_STEP_CONVERT_DELETES = 16,
} floe_maintain_step;

/* Progress: `done` of `total` units (files, or 0/0 when unknown) of a step. */
typedef void (*floe_maintain_progress_fn)(floe_maintain_step step, const char *what, int64_t done,
					  int64_t total, void *payload);

typedef struct floe_maintain_opts {
	int version;     /* 1 */
	unsigned steps;  /* FLOE_STEP_* bits (FLOE_STEP_ALL) */
	floe_compact_opts compact;
	floe_expire_opts expire;
	floe_orphan_opts orphans;
	floe_rewrite_manifests_opts manifests;
	bool dry_run;              /* every step */
	const char *lock_uri;      /* NULL = the catalog's lock database */
	const char *lock_id;       /* NULL = "<catalog>.<namespace>.<table>" */
	int64_t lock_stale_ms;     /* a floe holder silent this long is dead (10 min) */
	bool no_lock;              /* run without the lock (the caller holds it) */
	floe_maintain_progress_fn progress;
	floe_orphan_fn orphan_fn;  /* sees each orphan (listed in a dry run) */
	void *payload;             /* of progress, orphan_fn and interrupted */
	/* Asked between steps and between compaction groups: non-zero stops the
	 * run with FLOE_ECANCELED (what was committed stays; nothing is left
	 * half-written). May be NULL. */
	int (*interrupted)(void *payload);
} floe_maintain_opts;
#define FLOE_MAINTAIN_OPTS_INIT                                                                   \
	{1,                                                                                       \
	 FLOE_STEP_ALL,                                                                           \
	 FLOE_COMPACT_OPTS_INIT,                                                                  \
	 FLOE_EXPIRE_OPTS_INIT,                                                                   \
	 FLOE_ORPHAN_OPTS_INIT,                                                                   \
	 FLOE_REWRITE_MANIFESTS_OPTS_INIT,                                                        \
	 false,                                                                                   \
	 NULL,                                                                                    \
	 NULL,                                                                                    \
	 600000,                                                                                  \
	 false,                                                                                   \
	 NULL,                                                                                    \
	 NULL,                                                                                    \
	 NULL,                                                                                    \
	 NULL}

typedef struct floe_maintain_result {
	floe_compact_result compact;
	floe_expire_result expire;
	floe_orphan_result orphans;
	floe_rewrite_manifests_result manifests;
	unsigned steps_run; /* FLOE_STEP_* bits */
	floe_convert_deletes_result convert;
	int64_t duration_ms;
	bool lock_held;     /* FLOE_ECONFLICT because another maintainer holds the lock */
} floe_maintain_result;

/*
 * Run the chosen steps in order under the table's maintenance lock
 * (FLOE_ECONFLICT, naming the holder, when another maintainer has it).
 * A failed step stops the run: later steps depend on earlier ones.
 */
FLOE_EXPORT int floe_maintain(floe_table *t, const floe_maintain_opts *opts, floe_maintain_result *res,
		  floe_error *err) FLOE_WUR;

/*
 * Parse a comma-separated step list ("compact,expire", Iceberg's action
 * names rewrite-data-files, expire-snapshots, delete-orphan-files and
 * rewrite-manifests too; spaces allowed) into FLOE_STEP_* bits. False for
 * an unknown name or an empty list.
 */
FLOE_EXPORT bool floe_maintain_parse_steps(const char *list, unsigned *out);

/* ---- the lock ------------------------------------------------------------------------ */

typedef struct floe_maint_lock floe_maint_lock;

/*
 * Take the maintenance lock lock_id in the SQL database at uri: a row
 * (LOCK_TYPE 'm', LOCK_ID, INSTANCE_ID) of flink_maintenance_lock — the
 * table Iceberg Flink's JdbcLockFactory uses, so floe and a Java maintenance
 * job with the same lock id never maintain one table at once; a Flink
 * recovery lock ('r') counts as held too. FLOE_ECONFLICT when another
 * instance holds it. A lock whose floe holder died is recovered: floe keeps
 * a heartbeat row (floe_maintenance_heartbeat) fresh from a background
 * thread; a holder silent for stale_after_ms, or a process on this host that
 * no longer exists, loses its lock. Locks held by Java (no heartbeat) are
 * never broken automatically.
 */
FLOE_EXPORT int floe_maint_lock_acquire(floe_maint_lock **out, const char *uri, const char *lock_id,
			    int64_t stale_after_ms, floe_error *err) FLOE_WUR;
/* FLOE_ECONFLICT when the lock was broken and taken by another instance. */
FLOE_EXPORT int floe_maint_lock_check(floe_maint_lock *l, floe_error *err) FLOE_WUR;
/* Release (only our own row is deleted) and free. Accepts NULL. */
FLOE_EXPORT void floe_maint_lock_release(floe_maint_lock *l);
/* Remove any holder's lock (the operator's escape hatch for a dead Java holder). */
FLOE_EXPORT int floe_maint_lock_break(const char *uri, const char *lock_id, floe_error *err) FLOE_WUR;
/* The lock database and default lock id of a table (caller frees with floe_free);
 * *uri is NULL when the catalog has no lock database. */
FLOE_EXPORT int floe_maint_lock_target(floe_table *t, char **uri, char **lock_id, floe_error *err) FLOE_WUR;

#ifdef __cplusplus
}
#endif
#endif
