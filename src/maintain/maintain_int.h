/*
 * maintain_int.h — table maintenance (the public floe/maintain.h) inside the
 * library, and what its steps share: the set of files a group of snapshots
 * reaches.
 *
 * Layering: maintenance sits above the write and scan layers (compaction
 * reads and writes data files) and below the streaming runtime, which runs
 * it embedded after commits.
 */
#ifndef FLOE_MAINTAIN_MAINTAIN_INT_H
#define FLOE_MAINTAIN_MAINTAIN_INT_H

#include "floe/maintain.h"
#include "table/commit.h"
#include "util/hmap.h"

/* maintain_pipelines.c: each pipeline's state snapshot, with whether
 * expiry holds it (held_until_ms -1: until forgotten). */
typedef struct floe_maint_pstate {
	const floe_snapshot *s;
	const char *pipeline_id;
	bool complete, held;
	int64_t held_until_ms;
} floe_maint_pstate;
typedef int (*floe_maint_pstate_fn)(const floe_maint_pstate *st, void *payload);
int floe_maint__pipelines(const floe_metadata *m, int64_t now, floe_maint_pstate_fn fn,
			  void *payload);
/* Summary key of the snapshots a maintenance run commits ("compact",
 * "rewrite-manifests"): the embedded runner counts what came after the
 * newest one, so its triggers survive restarts. */
#define FLOE_MAINTENANCE_SUMMARY_KEY "floe.maintenance"

/* Kinds stored as the value of a reach set's entries. */
enum {
	FLOE_REACH_DATA = 1,
	FLOE_REACH_POS_DELETES = 2,
	FLOE_REACH_EQ_DELETES = 3,
	FLOE_REACH_MANIFEST_LIST = 4,
	FLOE_REACH_MANIFEST = 5,
	FLOE_REACH_METADATA = 6, /* metadata JSON, statistics, hints */
};

/*
 * The files some snapshots reach. Each distinct manifest is read once, so
 * adding every retained snapshot of a long history costs one read per
 * manifest, not one per snapshot. With `normalize`, keys are in a normal
 * form (floe_reach_key) so differently spelled URIs of one file meet.
 */
typedef struct floe_reach {
	floe_hmap files;
	bool live_only; /* skip DELETED manifest entries */
	bool normalize;
} floe_reach;

void floe_reach_init(floe_reach *r, bool live_only, bool normalize);
void floe_reach_reset(floe_reach *r);
int floe_reach_add(floe_reach *r, const char *path, int kind) FLOE_WUR;
int floe_reach_snapshot(floe_reach *r, floe_table *t, const floe_snapshot *s,
			floe_error *err) FLOE_WUR;
/* Every file the metadata itself names: its own file, the metadata log,
 * statistics and partition statistics files. */
int floe_reach_metadata(floe_reach *r, const floe_metadata *m) FLOE_WUR;
bool floe_reach_has(const floe_reach *r, const char *path);

/*
 * The normal form of a file URI: local files as absolute paths ("file:/x",
 * "file:///x" and "/x" are one file), the S3 family ("s3", "s3a", "s3n") as
 * "bucket/key"; anything else unchanged. Points into `path`.
 */
const char *floe_reach_key(const char *path);

/* Compaction with progress reports and interruption between groups
 * (floe_compact without them); callbacks may be NULL. */
int floe_compact__run(floe_table *t, const floe_compact_opts *opts,
		      floe_maintain_progress_fn progress, int (*interrupted)(void *payload),
		      void *payload, floe_compact_result *res, floe_error *err) FLOE_WUR;

#endif
