/*
 * maintain_runner.h — maintenance embedded in a streaming pipeline: a
 * background thread per table that runs floe_maintain when the commits
 * since its last run reach a trigger, as Iceberg Flink's TableMaintenance
 * does (its trigger names and defaults).
 *
 * The counts start from the table's history (the commits on main after the
 * newest snapshot a maintenance run committed, summary floe.maintenance, or
 * any "replace"), so restarts do not reset them; then the committer reports
 * each commit (floe_maint_runner_note_commit) and the runner's thread
 * decides: a run is due when any trigger is reached (commit
 * count, data files, data bytes, position or equality delete files added,
 * or the interval since the last run with at least one commit), not before
 * the rate limit has passed since the last run ended, and, when another
 * maintainer holds the table's lock, again after the lock-check delay. The
 * run uses a catalog object and table handle of its own, so the pipeline's
 * commits go on meanwhile (compaction validates against them).
 *
 * Thread-safety: note_commit, get_stats and request from any thread;
 * stop and free from the owner.
 */
#ifndef FLOE_MAINTAIN_MAINTAIN_RUNNER_H
#define FLOE_MAINTAIN_MAINTAIN_RUNNER_H

#include "floe/maintain.h"

typedef struct floe_maint_schedule {
	int version;                 /* 1 */
	int64_t commit_count;        /* commits since the last run (10; 0 = off) */
	int64_t data_file_count;     /* data files committed since (1000; 0 = off) */
	int64_t data_file_size;      /* bytes of data files committed since (100 GiB; 0 = off) */
	int64_t pos_delete_file_count; /* position delete files and DVs since (0 = off) */
	int64_t eq_delete_file_count;  /* equality delete files since (0 = off) */
	int64_t interval_ms;         /* time since the last run, with a commit since (10 min; 0 = off) */
	int64_t rate_limit_ms;       /* at least this between the end of a run and the next (60 s) */
	int64_t lock_check_delay_ms; /* the lock is held elsewhere: look again after this (30 s) */
	bool on_finish;              /* run once more when the pipeline ends cleanly (true) */
	int64_t expire_age_ms;       /* expire snapshots older than this at each run (-1: the
					opts' older_than_ms) */
	int64_t orphan_age_ms;       /* delete orphans older than this at each run (-1: the
					opts' older_than_ms) */
	int64_t orphan_interval_ms;  /* the orphan step (a listing of the table location)
					runs at most this often (1 day; 0 = every run) */
} floe_maint_schedule;
#define FLOE_MAINT_SCHEDULE_INIT                                                              \
	{1, 10, 1000, INT64_C(107374182400), 0, 0, 600000, 60000, 30000, true, -1, -1, 86400000}

/* What one commit added. */
typedef struct floe_maint_commit {
	int64_t data_files, data_bytes, pos_delete_files, eq_delete_files;
} floe_maint_commit;

typedef struct floe_maint_runner_stats {
	int64_t runs, failures, lock_waits, commits_pending;
	int64_t last_run_end_ms, last_duration_ms;
	int64_t data_files_rewritten, data_files_added, bytes_rewritten, delete_files_removed;
	int64_t snapshots_expired, files_expired, orphans_deleted, manifests_rewritten;
	bool running;
	char last_error[256];
	/* who held the table's maintenance lock when last looked at: the
	 * message of a run put off ("table 'db.t' is being maintained by floe
	 * instance ... (host, pid, heartbeat)"), or this runner after its run */
	char lock_holder[320];
} floe_maint_runner_stats;

typedef struct floe_maint_runner floe_maint_runner;

/*
 * Start a runner for table ns.name of cat (reopened for the runner's own
 * thread). opts: the steps and their options (copied; strings must outlive
 * the runner; progress/orphan callbacks are not used). ident names the
 * table in logs.
 */
int floe_maint_runner_start(floe_maint_runner **out, const floe_catalog *cat, const char *ns,
			    const char *name, const floe_maintain_opts *opts,
			    const floe_maint_schedule *sched, floe_error *err) FLOE_WUR;
void floe_maint_runner_note_commit(floe_maint_runner *r, const floe_maint_commit *c);
void floe_maint_runner_get_stats(floe_maint_runner *r, floe_maint_runner_stats *out);
/*
 * Stop the thread and free the runner. finish: when the schedule says
 * on_finish and anything was committed since the last run, run once more
 * (waiting for it, the lock and rate limit not waited for); else a run in
 * progress is interrupted between steps or compaction groups. last (may be
 * NULL) receives the final statistics. r may be NULL.
 */
void floe_maint_runner_stop(floe_maint_runner *r, bool finish, floe_maint_runner_stats *last);

#endif
