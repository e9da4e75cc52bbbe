/*
 * stream_split_fence.c — positions and fencing per split, for sources
 * whose splits several processes of one pipeline share (Kafka partitions
 * through a consumer group).
 *
 * DESIGN: the pipeline id names the group of processes. Each process's
 * commit records only the splits it owns (the partitions assigned to it),
 * so a table's position of split X is the newest snapshot of the pipeline
 * in the branch's ancestry that names X. `merged` holds that for every
 * split as of snapshot `at`; it is built by one walk of the whole ancestry
 * at start and afterwards brought up to date by walking only from the new
 * head back to `at` (newer snapshots win).
 *
 * The fence: `expect` holds, for each split this process owns, the
 * position it believes is the table's (where it resumed, or what it
 * committed last). Every commit attempt walks its base from the parent back
 * to `at` and fails with a final FLOE_ECONFLICT when any split of the
 * commit was committed meanwhile at another position — another process
 * owned the partition (a rebalance this process missed: it was stopped,
 * cut off, or too slow to poll). The pipeline then drops what it holds and
 * every partition re-seeks to the table's offsets (a rewind). Two
 * processes owning different partitions never conflict: the whole-pipeline
 * fence (floe_op_fence_pipeline) is not used for such tables.
 *
 * A snapshot of the pipeline written under another consumer group
 * (floe.kafka.group-id) is refused outright: two groups would each read
 * every partition.
 */
#include <string.h>

#include "stream/stream_runtime.h"
#include "stream/stream_split_fence.h"
#include "table/commit.h"
#include "util/log.h"

#define SPLIT_WALK_GUARD 10000000

int stream_split_state_new(stream_split_state **out, const char *group, floe_error *err)
{
	stream_split_state *s = floe_calloc(1, sizeof(*s));
	*out = NULL;
	if (!s || floe_mutex_init(&s->mu)) {
		floe_free(s);
		return floe_error_oom(err);
	}
	if (floe_mutex_init(&s->commit_mu)) {
		floe_mutex_destroy(&s->mu);
		floe_free(s);
		return floe_error_oom(err);
	}
	stream_offsets_init(&s->merged);
	stream_offsets_init(&s->expect);
	s->at = FLOE_NO_SNAPSHOT;
	s->group = group ? floe_strdup(group) : NULL;
	if (group && !s->group) {
		stream_split_state_free(s);
		return floe_error_oom(err);
	}
	*out = s;
	return FLOE_OK;
}

void stream_split_state_free(stream_split_state *s)
{
	if (!s)
		return;
	stream_offsets_reset(&s->merged);
	stream_offsets_reset(&s->expect);
	floe_free(s->group);
	floe_mutex_destroy(&s->commit_mu);
	floe_mutex_destroy(&s->mu);
	floe_free(s);
}

/* Walk from head back to `at` (exclusive) collecting the newest position of
 * every split into seen; *reached says whether `at` was met. */
static int walk(stream_split_state *st, const floe_metadata *m, const floe_snapshot *head,
		const char *pipeline_id, stream_offsets *seen, bool *reached, int64_t *last_ckpt,
		int64_t *newest, floe_error *err)
{
	stream_offsets one;
	int rc = FLOE_OK;
	long guard = 0;
	*reached = false;
	stream_offsets_init(&one);
	for (const floe_snapshot *s = head; s && guard++ < SPLIT_WALK_GUARD;
	     s = floe_metadata_parent(m, s)) {
		if (st->at != FLOE_NO_SNAPSHOT && s->snapshot_id == st->at) {
			*reached = true;
			break;
		}
		const char *id = floe_snapshot_summary(s, "floe.pipeline-id");
		if (!id || strcmp(id, pipeline_id))
			continue;
		const char *g = floe_snapshot_summary(s, "floe.kafka.group-id");
		if (st->group && g && strcmp(g, st->group)) {
			rc = floe_error_set(err, FLOE_ECONFLICT,
					    "pipeline '%s' is also read by the consumer group '%s' "
					    "(snapshot %lld), not only '%s': every group reads every "
					    "partition, so the records would be committed twice; give "
					    "the processes of one pipeline one properties.group.id",
					    pipeline_id, g, (long long)s->snapshot_id, st->group);
			break;
		}
		const char *offs = floe_snapshot_summary(s, "floe.source-offsets");
		if (newest && *newest == FLOE_NO_SNAPSHOT)
			*newest = s->snapshot_id;
		if (last_ckpt) {
			const char *ck = floe_snapshot_summary(s, "floe.checkpoint-id");
			int64_t v;
			if (ck && floe_parse_i64(ck, strlen(ck), &v) && v > *last_ckpt)
				*last_ckpt = v;
		}
		if (!offs)
			continue;
		stream_offsets_reset(&one);
		stream_offsets_init(&one);
		if ((rc = stream_offsets_parse_json(&one, offs, strlen(offs), err))) {
			rc = floe_error_prefix(err, rc, "snapshot %lld: floe.source-offsets: ",
					       (long long)s->snapshot_id);
			break;
		}
		for (size_t i = 0; i < one.n && !rc; i++)
			if (!stream_offsets_has(seen, one.items[i].split))
				rc = stream_offsets_set(seen, one.items[i].split, one.items[i].pos);
		if (rc && rc != FLOE_ECORRUPT)
			rc = floe_error_oom(err);
	}
	stream_offsets_reset(&one);
	return rc;
}

int stream_split_refresh(stream_split_state *st, const floe_metadata *m, const char *pipeline_id,
			 int64_t *last_ckpt, floe_error *err)
{
	const floe_snapshot *head = floe_metadata_branch_head(m, st->branch);
	if (!head && st->branch)
		head = floe_metadata_branch_head(m, NULL); /* the branch starts from main */
	stream_offsets seen;
	bool reached;
	int rc;
	stream_offsets_init(&seen);
	floe_mutex_lock(&st->mu);
	rc = walk(st, m, head, pipeline_id, &seen, &reached, last_ckpt, NULL, err);
	if (!rc) {
		if (!reached) {
			/* the whole ancestry (first time, or `at` expired): seen is complete */
			stream_offsets_reset(&st->merged);
			stream_offsets_init(&st->merged);
		}
		for (size_t i = 0; i < seen.n && !rc; i++)
			rc = stream_offsets_set(&st->merged, seen.items[i].split, seen.items[i].pos);
		if (rc)
			rc = floe_error_oom(err);
		else
			st->at = head ? head->snapshot_id : FLOE_NO_SNAPSHOT;
	}
	floe_mutex_unlock(&st->mu);
	stream_offsets_reset(&seen);
	return rc;
}

int64_t stream_split_committed(stream_split_state *st, const char *split)
{
	floe_mutex_lock(&st->mu);
	int64_t v = stream_offsets_get(&st->merged, split, -1);
	floe_mutex_unlock(&st->mu);
	return v;
}

int stream_split_expect(stream_split_state *st, const char *split, int64_t pos)
{
	floe_mutex_lock(&st->mu);
	int rc = stream_offsets_set(&st->expect, split, pos);
	floe_mutex_unlock(&st->mu);
	return rc;
}

int stream_split_expect_all(stream_split_state *st)
{
	int rc = FLOE_OK;
	floe_mutex_lock(&st->mu);
	for (size_t i = 0; i < st->expect.n && !rc; i++)
		rc = stream_offsets_set(&st->expect, st->expect.items[i].split,
					stream_offsets_get(&st->merged, st->expect.items[i].split, -1));
	floe_mutex_unlock(&st->mu);
	return rc;
}

/* ---- the commit check ------------------------------------------------------------------ */

int stream_split_check(void *payload, const floe_metadata *base, const floe_snapshot *parent,
		       floe_error *err)
{
	stream_split_check_ctx *ck = payload;
	stream_split_state *st = ck->st;
	bool reached;
	int rc;
	stream_offsets_reset(&ck->seen);
	stream_offsets_init(&ck->seen);
	ck->conflict = false;
	floe_mutex_lock(&st->mu);
	rc = walk(st, base, parent, ck->pipeline_id, &ck->seen, &reached, NULL, NULL, err);
	ck->complete = !reached;
	for (size_t i = 0; !rc && i < ck->commit->n; i++) {
		const char *x = ck->commit->items[i].split;
		if (x[0] == STREAM_PARAM_PREFIX)
			continue;
		int64_t have = stream_offsets_get(&ck->seen, x, -2);
		if (have == -2)
			have = reached ? stream_offsets_get(&st->merged, x, -1) : -1;
		int64_t want = stream_offsets_get(&st->expect, x, -1);
		if (have != want) {
			ck->conflict = true;
			rc = floe_error_set(err, FLOE_ECONFLICT,
					    "pipeline '%s': split %s was committed at %lld by another "
					    "process of the pipeline, while this one holds it from "
					    "%lld (it missed a rebalance): its records are read again "
					    "from the table's offset",
					    ck->pipeline_id, x, (long long)have, (long long)want);
		}
	}
	floe_mutex_unlock(&st->mu);
	return rc;
}

int stream_split_check_done(stream_split_check_ctx *ck, int64_t snapshot_id)
{
	stream_split_state *st = ck->st;
	int rc = FLOE_OK;
	floe_mutex_lock(&st->mu);
	if (ck->complete) {
		stream_offsets_reset(&st->merged);
		stream_offsets_init(&st->merged);
	}
	for (size_t i = 0; i < ck->seen.n && !rc; i++)
		rc = stream_offsets_set(&st->merged, ck->seen.items[i].split, ck->seen.items[i].pos);
	for (size_t i = 0; i < ck->commit->n && !rc; i++) {
		const stream_offset *o = &ck->commit->items[i];
		rc = stream_offsets_set(&st->merged, o->split, o->pos);
		if (!rc && o->split[0] != STREAM_PARAM_PREFIX)
			rc = stream_offsets_set(&st->expect, o->split, o->pos);
	}
	if (!rc && snapshot_id >= 0)
		st->at = snapshot_id;
	floe_mutex_unlock(&st->mu);
	return rc;
}

void stream_split_check_reset(stream_split_check_ctx *ck)
{
	stream_offsets_reset(&ck->seen);
}
