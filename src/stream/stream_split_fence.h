/*
 * stream_split_fence.h — positions and fencing per split when several
 * processes of one pipeline share a source's splits (Kafka partitions in a
 * consumer group). See stream_split_fence.c for the model.
 *
 * Thread-safety: a state has its own lock: the coordinator (assignments,
 * rewinds) and the committer (commit checks) use it at once.
 */
#ifndef FLOE_STREAM_SPLIT_FENCE_H
#define FLOE_STREAM_SPLIT_FENCE_H

#include "iceberg/metadata.h"
#include "stream/stream_source.h"
#include "util/thread.h"

typedef struct stream_split_state {
	floe_mutex mu;
	/* held across a commit (refresh of the base, check, merge) and across a
	 * refresh from the catalog: the two never interleave */
	floe_mutex commit_mu;
	stream_offsets merged; /* every split's newest committed position, as of `at` */
	int64_t at;            /* FLOE_NO_SNAPSHOT: nothing merged yet */
	stream_offsets expect; /* the splits this process owns: their table position as it knows it */
	char *group;           /* the consumer group (floe.kafka.group-id) */
	const char *branch;    /* the table's branch (not owned; NULL: main) */
} stream_split_state;

int stream_split_state_new(stream_split_state **out, const char *group, floe_error *err) FLOE_WUR;
void stream_split_state_free(stream_split_state *s);

/* Bring merged up to m's main head (walking back to `at`, or everything).
 * *last_ckpt (optional) is raised to the newest checkpoint id seen. */
int stream_split_refresh(stream_split_state *st, const floe_metadata *m, const char *pipeline_id,
			 int64_t *last_ckpt, floe_error *err) FLOE_WUR;
/* The split's committed position (-1: never). */
int64_t stream_split_committed(stream_split_state *st, const char *split);
/* This process now owns split from pos (-1: never committed). */
int stream_split_expect(stream_split_state *st, const char *split, int64_t pos) FLOE_WUR;
/* After a rewind: every owned split expects the merged position. */
int stream_split_expect_all(stream_split_state *st) FLOE_WUR;

/* One commit's check (floe_op_set_check payload). */
typedef struct stream_split_check_ctx {
	stream_split_state *st;
	const char *pipeline_id;
	const stream_offsets *commit; /* the positions this commit records */
	stream_offsets seen;          /* the last attempt's walk */
	bool complete;                /* it walked the whole ancestry */
	bool conflict;                /* it found another process's commit of a split of ours */
} stream_split_check_ctx;

int stream_split_check(void *payload, const floe_metadata *base, const floe_snapshot *parent,
		       floe_error *err);
/* The commit made snapshot_id (-1: nothing): merge what it saw and wrote. */
int stream_split_check_done(stream_split_check_ctx *ck, int64_t snapshot_id) FLOE_WUR;
void stream_split_check_reset(stream_split_check_ctx *ck);

#endif
