/*
 * floe/pipeline.h — streaming ingest: sources (files and folders of JSON
 * lines or CSV, stdin, a generator) into Iceberg tables with exactly-once
 * checkpoint commits. What `floe run pipeline.yaml` and `floe ingest` run.
 *
 * Every checkpoint interval the pipeline stops reading at a source offset,
 * its writer tasks close their files, and one snapshot per table commits
 * them with the pipeline id, the checkpoint id and the source offsets in the
 * snapshot summary (floe.pipeline-id, floe.checkpoint-id,
 * floe.source-offsets, flink.job-id, flink.max-committed-checkpoint-id).
 * Opening a pipeline reads those back from each table's snapshot ancestry
 * and resumes exactly there, so a crash at any point loses and duplicates
 * nothing (stdin from a pipe excepted: it cannot be rewound). Files written
 * after the last commit are orphans for orphan cleanup.
 *
 * The configuration is YAML (docs/configuration.md, or
 * floe_pipeline_config_reference); `floe ingest` builds the same YAML from
 * its flags.
 *
 * Errors: FLOE_EINVAL for configuration mistakes (the message names the
 * line and the key, and the nearest valid key for unknown ones),
 * FLOE_ENOTFOUND for missing tables (without a schema to create them) or
 * input paths, FLOE_ECORRUPT for a dead-lettered record under
 * errors: fail, and the catalog's and FileIO's errors.
 *
 * Thread-safety: a pipeline is driven by one thread (floe_pipeline_run);
 * floe_pipeline_stop and floe_pipeline_cancel may be called from any thread
 * and from signal handlers; floe_pipeline_get_stats from any thread.
 */
#ifndef FLOE_PIPELINE_H
#define FLOE_PIPELINE_H

#include "floe/catalog.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floe_pipeline floe_pipeline;

typedef struct floe_pipeline_stats {
	int64_t records_in;        /* records read from the sources */
	int64_t records_written;   /* rows handed to writers (not yet committed included) */
	int64_t records_committed; /* rows in committed snapshots */
	int64_t records_dead;      /* records sent to the dead-letter file */
	int64_t bytes_in;
	int64_t checkpoints;        /* checkpoints committed (or empty) in this run */
	int64_t last_checkpoint_id;
	int64_t files_committed;
	int64_t elapsed_ms;
	int metrics_port; /* 0 when the endpoint is off */
	int64_t maintenance_runs;            /* embedded maintenance runs completed */
	int64_t maintenance_files_rewritten; /* data files compaction replaced */
	bool maintenance_running;
	int64_t records_filtered; /* read, and excluded by a table's filter */
	int64_t records_skipped;  /* read, and already committed by an earlier run */
	int64_t resumed_checkpoint_id; /* the checkpoint a restart resumed after; -1: none */
	const char *pipeline_id;       /* owned by the pipeline */
	const char *dead_letter_path;  /* owned by the pipeline; NULL when none was written */
} floe_pipeline_stats;

typedef void (*floe_pipeline_progress_fn)(const floe_pipeline_stats *s, void *payload);

typedef struct floe_pipeline_opts {
	int version;                  /* 1 */
	const char *base_dir;         /* relative paths in the config resolve here (NULL: cwd) */
	floe_pipeline_progress_fn progress; /* called from the run thread; may be NULL */
	void *progress_payload;
	int64_t progress_interval_ms; /* 0 = 500 */
} floe_pipeline_opts;
#define FLOE_PIPELINE_OPTS_INIT {1, NULL, NULL, NULL, 0}

/*
 * Parse and check a YAML configuration, open its sources, load (or create)
 * its tables in cat (or in the catalog the config names, which then wins),
 * and read each table's committed offsets. cat must outlive the pipeline.
 */
FLOE_EXPORT int floe_pipeline_open(floe_pipeline **out, floe_catalog *cat, const char *yaml, size_t n,
		       const floe_pipeline_opts *opts, floe_error *err) FLOE_WUR;

/* Parse and check a configuration only (no catalog, no files touched). */
FLOE_EXPORT int floe_pipeline_check(const char *yaml, size_t n, floe_error *err) FLOE_WUR;

/*
 * Run until the sources end (files without follow, a bounded generator,
 * stdin at end of file), floe_pipeline_stop (a last checkpoint commits), or
 * an error (nothing after the last commit is committed). Returns 0 after a
 * clean end or stop, FLOE_ECANCELED after floe_pipeline_cancel.
 */
FLOE_EXPORT int floe_pipeline_run(floe_pipeline *p, floe_error *err) FLOE_WUR;

/* Finish the current checkpoint and end (async-signal-safe). */
FLOE_EXPORT void floe_pipeline_stop(floe_pipeline *p);
/* End as soon as possible without another commit (async-signal-safe). */
FLOE_EXPORT void floe_pipeline_cancel(floe_pipeline *p);

FLOE_EXPORT void floe_pipeline_get_stats(const floe_pipeline *p, floe_pipeline_stats *out);

FLOE_EXPORT void floe_pipeline_free(floe_pipeline *p);

/*
 * After floe_pipeline_run returned 0: whether the run ended to let a schema
 * update land first (a table with unknown-fields: evolve got records its
 * schema could not hold; the update is committed). Free the pipeline and
 * open it again: it resumes from the tables and replays those records with
 * the new schema.
 */
FLOE_EXPORT bool floe_pipeline_restart_wanted(const floe_pipeline *p);

/* The reference of every configuration key as Markdown. */
FLOE_EXPORT int floe_pipeline_config_reference(floe_write_fn fn, void *payload, floe_error *err) FLOE_WUR;

#ifdef __cplusplus
}
#endif
#endif
