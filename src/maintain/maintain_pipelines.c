/*
 * maintain_pipelines.c — the pipelines that write a table, as their state
 * snapshots show them (floe pipelines list), forgetting one (floe pipelines
 * forget), and the rule expiry applies to their state.
 *
 * DESIGN: a pipeline's state is its newest snapshot (floe.pipeline-id): the
 * summary holds its committed source offsets, and a restart resumes there.
 * Expiry holds that snapshot while the pipeline may still restart: always
 * for a pipeline whose last commit was not the end of its input (running,
 * following, interrupted), and for history.expire.keep-pipeline-state-for
 * (7 days) after a completed one-shot load (floe.load-complete), so a re-run
 * within that window adds nothing. A forgotten pipeline's snapshots no
 * longer count as its state at all (table property
 * floe.pipeline.forget.<id>: the sequence number they end at).
 */
#include <stdio.h>
#include <string.h>

#include "iceberg/metadata.h"
#include "maintain/maintain_int.h"
#include "table/table_impl.h"
#include "util/str.h"
#include "util/timeutil.h"

#define DAY_MS INT64_C(86400000)

int floe_maint__pipelines(const floe_metadata *m, int64_t now, floe_maint_pstate_fn fn, void *payload)
{
	int64_t keep_state = floe_metadata_property_duration_ms(
		m, "history.expire.keep-pipeline-state-for", 7 * DAY_MS);
	for (size_t i = 0; i < m->n_snapshots; i++) {
		const floe_snapshot *s = &m->snapshots[i];
		const char *pid = floe_snapshot_summary(s, "floe.pipeline-id");
		if (!pid || !floe_pipeline_snapshot_counts(m, s, pid))
			continue;
		const floe_snapshot *newest = s;
		for (size_t k = 0; k < m->n_snapshots; k++) {
			const floe_snapshot *x = &m->snapshots[k];
			if (!floe_pipeline_snapshot_counts(m, x, pid))
				continue;
			if (x->sequence_number > newest->sequence_number ||
			    (x->sequence_number == newest->sequence_number &&
			     x->timestamp_ms > newest->timestamp_ms))
				newest = x;
		}
		if (newest != s)
			continue; /* each pipeline once, at its newest */
		const char *done = floe_snapshot_summary(s, "floe.load-complete");
		floe_maint_pstate st = {s, pid, done && !strcmp(done, "true"), true, -1};
		if (st.complete) {
			st.held_until_ms = s->timestamp_ms + keep_state;
			st.held = now < st.held_until_ms;
		}
		int rc = fn(&st, payload);
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

typedef struct list_ctx {
	floe_pipeline_state_fn fn;
	void *payload;
} list_ctx;

static int list_one(const floe_maint_pstate *st, void *payload)
{
	list_ctx *c = payload;
	const char *ck = floe_snapshot_summary(st->s, "floe.checkpoint-id");
	floe_pipeline_state out = {0};
	out.pipeline_id = st->pipeline_id;
	out.snapshot_id = st->s->snapshot_id;
	out.checkpoint_id = -1;
	if (ck && !floe_parse_i64(ck, strlen(ck), &out.checkpoint_id))
		out.checkpoint_id = -1;
	out.timestamp_ms = st->s->timestamp_ms;
	out.source_offsets = floe_snapshot_summary(st->s, "floe.source-offsets");
	out.complete = st->complete;
	out.held = st->held;
	out.held_until_ms = st->held_until_ms;
	return c->fn(&out, c->payload);
}

int floe_table_pipelines(floe_table *t, floe_pipeline_state_fn fn, void *payload, floe_error *err)
{
	list_ctx c = {fn, payload};
	(void)err;
	return floe_maint__pipelines(floe_table_metadata(t), floe_now_ms(), list_one, &c);
}

typedef struct find_ctx {
	const char *id;
	bool found;
} find_ctx;

static int find_one(const floe_maint_pstate *st, void *payload)
{
	find_ctx *c = payload;
	if (!strcmp(st->pipeline_id, c->id))
		c->found = true;
	return 0;
}

int floe_table_forget_pipeline(floe_table *t, const char *pipeline_id, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t);
	find_ctx c = {pipeline_id, false};
	char key[600], seq[32];
	(void)floe_maint__pipelines(m, floe_now_ms(), find_one, &c);
	if (!c.found)
		return floe_error_set(err, FLOE_ENOTFOUND,
				      "no pipeline '%s' holds state in this table (floe pipelines list "
				      "shows those that do)",
				      pipeline_id);
	if ((size_t)snprintf(key, sizeof(key), "floe.pipeline.forget.%s", pipeline_id) >= sizeof(key))
		return floe_error_set(err, FLOE_EINVAL, "pipeline id too long");
	snprintf(seq, sizeof(seq), "%lld", (long long)m->last_sequence_number);
	floe_prop p = {key, seq};
	return floe_table_set_properties(t, &p, 1, NULL, 0, err);
}

int floe_table_pipeline_checkpoint_snapshot(floe_table *t, const char *pipeline_id,
					    int64_t checkpoint_id, int64_t *snapshot_id,
					    int64_t *checkpoint_used, floe_error *err)
{
	if (!t || !pipeline_id || !snapshot_id)
		return floe_error_set(err, FLOE_EINVAL, "pipeline checkpoint: no table, pipeline "
				      "id or result");
	const floe_metadata *m = floe_table_metadata(t);
	int64_t newest_ck = -1, oldest_ck = -1;
	size_t steps = 0;
	/* the main branch's history, newest first; a cap against parent loops */
	for (const floe_snapshot *s = floe_metadata_snapshot(m, m->current_snapshot_id);
	     s && steps <= m->n_snapshots; s = floe_metadata_snapshot(m, s->parent_id), steps++) {
		const char *pid = floe_snapshot_summary(s, "floe.pipeline-id");
		const char *ck = floe_snapshot_summary(s, "floe.checkpoint-id");
		int64_t c;
		if (!pid || strcmp(pid, pipeline_id) || !ck || !floe_parse_i64(ck, strlen(ck), &c))
			continue;
		if (newest_ck < 0)
			newest_ck = c;
		oldest_ck = c;
		if (checkpoint_id < 0 || c <= checkpoint_id) {
			*snapshot_id = s->snapshot_id;
			if (checkpoint_used)
				*checkpoint_used = c;
			return FLOE_OK;
		}
	}
	if (newest_ck < 0)
		return floe_error_set(err, FLOE_ENOTFOUND,
				      "pipeline '%s' has no checkpoint commits in the table's "
				      "history (floe pipelines list shows the pipelines that write it)",
				      pipeline_id);
	return floe_error_set(err, FLOE_ENOTFOUND,
			      "pipeline '%s' has no snapshot at or before checkpoint %lld left in "
			      "the table's history (its checkpoints there: %lld to %lld)",
			      pipeline_id, (long long)checkpoint_id, (long long)oldest_ck,
			      (long long)newest_ck);
}
