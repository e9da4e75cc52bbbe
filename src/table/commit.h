/*
 * commit.h — snapshot producers and the commit loop.
 *
 * A producer writes its new manifests once, then for each attempt: reads the
 * current state of its branch, decides the snapshot's manifest list (new
 * manifests first, then the ones it keeps), writes the list, builds the next
 * metadata and asks the catalog to swap it in. A lost race
 * (FLOE_ECONFLICT/ETIMEDOUT) refreshes the table and tries again with
 * exponential backoff and jitter, re-validating first; so the other writer's
 * snapshot is always kept. On a definite failure everything the producer
 * wrote is deleted; when the outcome is unknown nothing is.
 *
 * Operations: fast append now; row deltas, rewrites and expiry build on the
 * same loop.
 */
#ifndef FLOE_TABLE_COMMIT_H
#define FLOE_TABLE_COMMIT_H

#include "table/table_impl.h"

typedef struct floe_append floe_append;

/* Start a fast append on table t (t must outlive it). branch NULL = main. */
int floe_append_new(floe_append **out, floe_table *t, const char *branch,
		    floe_error *err) FLOE_WUR;
/* Add a data file (copied). Its spec_id must name a spec of the table. */
int floe_append_add_file(floe_append *ap, const floe_data_file *f, floe_error *err) FLOE_WUR;
/* Extra snapshot summary properties (e.g. floe.pipeline-id). */
int floe_append_set_summary(floe_append *ap, const char *key, const char *value,
			    floe_error *err) FLOE_WUR;
/*
 * Commit. On success *snapshot_id (optional) receives the new snapshot and
 * the table holds the new metadata. An append of no files commits nothing
 * (returns FLOE_OK with *snapshot_id = -1).
 */
int floe_append_commit(floe_append *ap, int64_t *snapshot_id, floe_error *err) FLOE_WUR;
void floe_append_free(floe_append *ap);

/* Retry policy read from table properties (commit.retry.*). */
typedef struct floe_retry_policy {
	int num_retries;
	int64_t min_wait_ms, max_wait_ms, total_timeout_ms;
} floe_retry_policy;

void floe_retry_policy_from(floe_retry_policy *p, const floe_metadata *m);

#endif
