/*
 * stream_coord.c — the checkpoint coordinator and the committer.
 *
 * The coordinator (the thread that calls floe_pipeline_run) reads the
 * sources and admits their blocks to the tasks; every checkpoint interval
 * (and never sooner than min-pause after the last one) it stops reading,
 * waits until every admitted block is in a task writer, records each
 * source's position, asks every task to close its files, and hands files
 * and positions to the committer. The committer commits one fast-append
 * snapshot per table with the pipeline id, checkpoint id and that table's
 * source positions in its summary; a table with no files is not committed
 * (empty checkpoints commit nothing).
 *
 * spec: ../shared/design.md section 3 (checkpoint and commit). Restart:
 * each table's current snapshot's ancestry is walked for the newest
 * snapshot with this pipeline id; its positions say which records the table
 * holds. A source starts at the smallest position over the tables it feeds,
 * and each table skips what it holds, so every table resumes exactly where
 * it stopped.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "arrow/arrow_build.h"
#include "iceberg/arrow_schema.h"
#include "io/aws_secret.h"
#include "stream/stream_kafka.h"
#include "stream/stream_kinesis.h"
#include "stream/stream_runtime.h"
#include "table/commit.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/timeutil.h"

static int64_t now_ms(void)
{
	return floe_monotonic_ns() / 1000000;
}

/* ---- metrics ----------------------------------------------------------------------- */

static int64_t elapsed_since_commit(void *payload)
{
	rt_table *tb = payload;
	int64_t last = atomic_load(&tb->last_commit_ms);
	return last ? (floe_now_ms() - last) / 1000 : 0;
}

/* Embedded maintenance, read from the runner at each scrape. */
static floe_maint_runner_stats maint_stats(const rt_table *t)
{
	floe_maint_runner_stats st = t->maint_last;
	if (t->maint_lock) {
		floe_mutex_lock(t->maint_lock);
		if (t->maint)
			floe_maint_runner_get_stats(t->maint, &st);
		else
			st = t->maint_last;
		floe_mutex_unlock(t->maint_lock);
	}
	return st;
}

static int64_t maint_runs(void *t)
{
	return maint_stats(t).runs;
}

static int64_t maint_failures(void *t)
{
	return maint_stats(t).failures;
}

static int64_t maint_duration(void *t)
{
	return maint_stats(t).last_duration_ms;
}

static int64_t maint_rewritten(void *t)
{
	return maint_stats(t).data_files_rewritten;
}

static int64_t maint_lock_waits(void *t)
{
	return maint_stats(t).lock_waits;
}

#define MAINT_METRICS 5
static const struct {
	const char *name, *help;
	floe_metric_fn fn;
} maint_metrics[MAINT_METRICS] = {
	{"floe_maintenance_runs_total", "embedded maintenance runs completed", maint_runs},
	{"floe_maintenance_failures_total", "embedded maintenance runs that failed", maint_failures},
	{"floe_maintenance_last_run_duration_ms", "duration of the last maintenance run (ms)",
	 maint_duration},
	{"floe_maintenance_data_files_rewritten_total", "data files compaction replaced", maint_rewritten},
	{"floe_maintenance_lock_waits_total", "runs put off because another maintainer held the lock",
	 maint_lock_waits},
};

static int setup_metrics(floe_pipeline *p, floe_error *err)
{
	static const int64_t size_buckets[] = {
		(int64_t)1 << 16, (int64_t)1 << 20,   (int64_t)4 << 20,	  (int64_t)16 << 20,
		(int64_t)64 << 20, (int64_t)128 << 20, (int64_t)256 << 20, (int64_t)512 << 20,
		(int64_t)1 << 30};
	int rc = floe_metrics_new(&p->metrics);
	if (rc)
		return floe_error_set(err, rc, "out of memory");
	const char *pl[] = {"pipeline", p->pipeline_id};
	rc = floe_metrics_add(&p->m_ckpts, p->metrics, FLOE_METRIC_COUNTER, "floe_checkpoints_total",
			      "checkpoints completed by this run", pl, 1, NULL, 0);
	rc = rc ? rc
		: floe_metrics_add(&p->m_ckpt_id, p->metrics, FLOE_METRIC_GAUGE,
				   "floe_last_checkpoint_id", "id of the last completed checkpoint", pl,
				   1, NULL, 0);
	for (size_t i = 0; i < p->n_sources && !rc; i++) {
		rt_source *s = &p->sources[i];
		const char *l[] = {"pipeline", p->pipeline_id, "source", s->cfg->name};
		rc = floe_metrics_add(&s->m_in, p->metrics, FLOE_METRIC_COUNTER, "floe_records_in_total",
				      "records read from the source", l, 2, NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&s->m_bytes, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_bytes_in_total", "bytes read from the source", l, 2,
					   NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&s->m_dead, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_records_dead_lettered_total",
					   "records that did not fit and went to the dead-letter file",
					   l, 2, NULL, 0);
	}
	for (size_t i = 0; i < p->n_sources && !rc; i++)
		if (p->sources[i].cfg->type == STREAM_SRC_KAFKA && p->sources[i].src)
			rc = stream_kafka_metrics(p->sources[i].src, p->metrics, p->pipeline_id, NULL);
		else if (p->sources[i].cfg->type == STREAM_SRC_KINESIS && p->sources[i].src)
			rc = stream_kinesis_metrics(p->sources[i].src, p->metrics, p->pipeline_id,
						    NULL);
	for (size_t i = 0; i < p->n_tables && !rc; i++) {
		rt_table *t = &p->tables[i];
		const char *l[] = {"pipeline", p->pipeline_id, "table", t->ident};
		if (!rc && !(t->m_task_rows = floe_calloc((size_t)p->n_tasks, sizeof(floe_metric *))))
			rc = FLOE_ENOMEM;
		for (int k = 0; k < p->n_tasks && !rc; k++) {
			char task[16];
			snprintf(task, sizeof(task), "%d", k);
			const char *lt[] = {"pipeline", p->pipeline_id, "table", t->ident, "task", task};
			rc = floe_metrics_add(&t->m_task_rows[k], p->metrics, FLOE_METRIC_COUNTER,
					      "floe_writer_records_total",
					      "rows routed to each writer task (the distribution's load)",
					      lt, 3, NULL, 0);
		}
		rc = rc ? rc : floe_metrics_add_fn(&t->m_elapsed, p->metrics,
					 "floe_elapsed_seconds_since_last_successful_commit",
					 "seconds since the last successful commit", l, 2,
					 elapsed_since_commit, t);
		rc = rc ? rc
			: floe_metrics_add(&t->m_commit_ms, p->metrics, FLOE_METRIC_GAUGE,
					   "floe_last_commit_duration_ms",
					   "duration of the last commit (ms)", l, 2, NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&t->m_flush_ms, p->metrics, FLOE_METRIC_GAUGE,
					   "floe_last_flush_duration_ms",
					   "time the tasks took to close their files at the last "
					   "checkpoint (ms)",
					   l, 2, NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&t->m_files, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_committed_data_files_total", "data files committed", l,
					   2, NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&t->m_records, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_committed_data_files_records_total",
					   "records in committed data files", l, 2, NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&t->m_bytes, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_committed_data_files_bytes_total",
					   "bytes of committed data files", l, 2, NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&t->m_del_files, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_committed_delete_files_total",
					   "delete files committed (equality, position, DVs)", l, 2,
					   NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&t->m_del_records, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_committed_delete_files_records_total",
					   "deletes in committed delete files", l, 2, NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&t->m_del_bytes, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_committed_delete_files_bytes_total",
					   "bytes of committed delete files (a DV: its blob)", l, 2, NULL,
					   0);
		rc = rc ? rc
			: floe_metrics_add(&t->m_hist, p->metrics, FLOE_METRIC_HISTOGRAM,
					   "floe_data_file_size_bytes",
					   "sizes of committed data files (bytes)", l, 2, size_buckets,
					   sizeof(size_buckets) / sizeof(size_buckets[0]));
		rc = rc ? rc
			: floe_metrics_add(&t->m_out, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_records_out_total", "records committed to the table", l, 2,
					   NULL, 0);
		rc = rc ? rc
			: floe_metrics_add(&t->m_dead, p->metrics, FLOE_METRIC_COUNTER,
					   "floe_table_records_dead_lettered_total",
					   "records dead-lettered for this table", l, 2, NULL, 0);
		for (size_t k = 0; t->cfg->maint.mode && !rc && k < MAINT_METRICS; k++)
			rc = (strstr(maint_metrics[k].name, "_total") ? floe_metrics_add_counter_fn
								      : floe_metrics_add_fn)(
				&t->m_maint[k], p->metrics, maint_metrics[k].name, maint_metrics[k].help,
				l, 2, maint_metrics[k].fn, t);
	}
	if (rc)
		return floe_error_set(err, rc, "metrics: cannot register");
	if (p->cfg->metrics_port > 0) {
		if ((rc = floe_metrics_http_start(&p->http, p->metrics, p->cfg->metrics_bind,
						  (int)p->cfg->metrics_port, &p->http_port, err)))
			return rc;
	}
	return FLOE_OK;
}

/* ---- opening ------------------------------------------------------------------------ */

static bool find_path(const floe_type *t, int32_t id, int *path, int *depth)
{
	if (t->id != FLOE_T_STRUCT || *depth >= 8)
		return false;
	for (size_t i = 0; i < t->n_fields; i++) {
		path[*depth] = (int)i;
		if (t->fields[i].id == id) {
			(*depth)++;
			return true;
		}
		(*depth)++;
		if (find_path(t->fields[i].type, id, path, depth))
			return true;
		(*depth)--;
	}
	return false;
}

/* The offsets a table holds (the baseline of offset-only commits). */
static int set_committed(rt_table *t, const stream_offsets *o)
{
	stream_offsets_reset(&t->committed);
	stream_offsets_init(&t->committed);
	return stream_offsets_copy(&t->committed, o);
}

/* Whether a split of pos that the table holds moved from its committed
 * position (a split the table never committed does not count: re-reading
 * it after a restart finds the same nothing). */
static bool offsets_moved(const rt_table *t, const stream_offsets *pos)
{
	for (size_t i = 0; i < pos->n; i++) {
		const stream_offset *o = &pos->items[i];
		if (!stream_offsets_has(&t->committed, o->split))
			continue;
		const char *was = stream_offsets_tok(&t->committed, o->split);
		if (stream_offsets_get(&t->committed, o->split, 0) != o->pos ||
		    (was == NULL) != (o->tok == NULL) || (was && strcmp(was, o->tok)))
			return true;
	}
	return false;
}

/* A split-fenced table (Kafka): every split's newest committed position,
 * merged over the pipeline's snapshots (stream_split_fence.c). */
static int restore_splits(floe_pipeline *p, rt_table *t, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t->commit_t);
	int rc = stream_split_refresh(t->splits, m, p->pipeline_id, &t->last_ckpt, err);
	if (rc)
		return floe_error_prefix(err, rc, "table %s: ", t->ident);
	stream_offsets_reset(&t->skip);
	stream_offsets_init(&t->skip);
	floe_mutex_lock(&t->splits->mu);
	rc = stream_offsets_copy(&t->skip, &t->splits->merged);
	floe_mutex_unlock(&t->splits->mu);
	if (rc)
		return floe_error_oom(err);
	t->skipping = t->skip.n > 0;
	t->fence_snap = FLOE_NO_SNAPSHOT;
	if ((rc = set_committed(t, &t->skip)))
		return floe_error_oom(err);
	if (t->skip.n)
		FLOE_INFO("table %s: pipeline '%s' holds %zu partitions' offsets (newest checkpoint "
			  "%lld)",
			  t->ident, p->pipeline_id, t->skip.n, (long long)t->last_ckpt);
	return FLOE_OK;
}

/* The head of the table's branch; a branch not created yet starts from
 * main's head (its first commit creates it there). */
static const floe_snapshot *table_head(rt_table *t)
{
	const floe_metadata *m = floe_table_metadata(t->commit_t);
	const floe_snapshot *s = floe_metadata_branch_head(m, t->cfg->branch);
	if (!s && t->cfg->branch && !floe_metadata_ref(m, t->cfg->branch))
		s = floe_metadata_branch_head(m, NULL);
	return s;
}

/* An overwrite resumed in the middle of its load keeps the base it started
 * from (else its second half would replace its first half). */
static void restore_overwrite_base(rt_table *t, const floe_snapshot *s)
{
	const char *ob = floe_snapshot_summary(s, "floe.overwrite-base");
	const char *done = floe_snapshot_summary(s, "floe.load-complete");
	int64_t id, seq;
	if (!t->overwrite || !ob || (done && !strcmp(done, "true")))
		return;
	const char *colon = strchr(ob, ':');
	if (colon && floe_parse_i64(ob, (size_t)(colon - ob), &id) &&
	    floe_parse_i64(colon + 1, strlen(colon + 1), &seq)) {
		t->ow_base = id;
		t->ow_base_seq = seq;
	}
}

/* The committed state of this pipeline in table t (newest first). */
/* A routed table's floe.route-start.<pipeline> (stream_route.c). */
static int load_route_start(floe_pipeline *p, rt_table *t, floe_error *err)
{
	char key[300];
	snprintf(key, sizeof(key), "floe.route-start.%s", p->pipeline_id);
	const char *v = floe_metadata_property(floe_table_metadata(t->commit_t), key);
	int rc;
	if (v && (rc = stream_offsets_parse_json(&t->route_start, v, strlen(v), err)))
		return floe_error_prefix(err, rc, "table %s: property %s: ", t->ident, key);
	return FLOE_OK;
}

static int restore_table(floe_pipeline *p, rt_table *t, floe_error *err)
{
	if (t->split_fence)
		return restore_splits(p, t, err);
	const floe_metadata *m = floe_table_metadata(t->commit_t);
	const floe_snapshot *s = table_head(t);
	int guard = 0;
	t->fence_snap = FLOE_NO_SNAPSHOT;
	t->ow_base = s ? s->snapshot_id : FLOE_NO_SNAPSHOT;
	t->ow_base_seq = s ? s->sequence_number : 0;
	while (s && guard++ < 1000000) {
		if (floe_pipeline_snapshot_counts(m, s, p->pipeline_id)) {
			t->fence_snap = s->snapshot_id;
			restore_overwrite_base(t, s);
			const char *offs = floe_snapshot_summary(s, "floe.source-offsets");
			const char *ck = floe_snapshot_summary(s, "floe.checkpoint-id");
			int rc;
			if (!offs)
				return floe_error_corrupt(err, "table %s: snapshot %lld of pipeline '%s' has no "
						      "floe.source-offsets",
						      t->ident, (long long)s->snapshot_id, p->pipeline_id);
			if ((rc = stream_offsets_parse_json(&t->skip, offs, strlen(offs), err)))
				return floe_error_prefix(err, rc, "table %s: snapshot %lld: ", t->ident,
							 (long long)s->snapshot_id);
			if (ck && !floe_parse_i64(ck, strlen(ck), &t->last_ckpt))
				t->last_ckpt = 0;
			if ((rc = set_committed(t, &t->skip)))
				return floe_error_oom(err);
			t->skipping = true;
			if (t->last_ckpt > p->resumed_ckpt)
				p->resumed_ckpt = t->last_ckpt;
			FLOE_INFO("table %s: pipeline '%s' resumes after checkpoint %lld (snapshot %lld)",
				  t->ident, p->pipeline_id, (long long)t->last_ckpt,
				  (long long)s->snapshot_id);
			return FLOE_OK;
		}
		s = floe_metadata_parent(m, s);
	}
	if (t->route_start.n) {
		/* created by the route, nothing committed yet: every record before
		 * where that run started was routed before the table existed */
		if (stream_offsets_copy(&t->skip, &t->route_start))
			return floe_error_oom(err);
		t->skipping = true;
	}
	return FLOE_OK;
}

int stream_table__create(floe_table **out, floe_catalog *cat, const stream_table_cfg *tc,
			 const floe_prop *extra, floe_error *err)
{
	char *ns = NULL, *name = NULL;
	floe_prop *props = NULL;
	size_t np = tc->properties.len;
	int rc;
	*out = NULL;
	if ((rc = floe_catalog_split_ident(tc->name, NULL, &ns, &name, err)))
		return rc;
	rc = floe_catalog_create_namespace(cat, ns, NULL, 0, err);
	if (rc == FLOE_EEXISTS) {
		floe_error_clear(err);
		rc = FLOE_OK;
	}
	if (!rc && !(props = floe_calloc(np + 1, sizeof(*props))))
		rc = floe_error_oom(err);
	for (size_t i = 0; !rc && i < np; i++) {
		props[i].key = tc->properties.items[i].key;
		props[i].value = tc->properties.items[i].value;
	}
	if (!rc && extra)
		props[np++] = *extra;
	if (!rc) {
		floe_table_create_opts co = FLOE_TABLE_CREATE_OPTS_INIT;
		co.schema = tc->schema;
		co.partition_by = tc->partition_by;
		co.sort_by = tc->sort_by;
		co.properties = props;
		co.n_properties = np;
		co.format_version = tc->format_version;
		co.location = tc->location;
		rc = floe_table_create(out, cat, ns, name, &co, err);
		if (rc == FLOE_EEXISTS) { /* created meanwhile by another run */
			floe_error_clear(err);
			rc = floe_table_load(out, cat, ns, name, err);
		} else if (!rc) {
			FLOE_INFO("created table %s", tc->name);
		}
	}
	floe_free(props);
	floe_free_string(ns);
	floe_free_string(name);
	return rc;
}

/*
 * A table that exists keeps its schema and partitioning: the configured ones
 * apply at creation only. Say so when they differ, instead of ignoring them
 * without a word (a column list is compared; schema JSON is not).
 */
static void warn_if_config_differs(rt_table *t, const stream_table_cfg *tc)
{
	const floe_metadata *m = floe_table_metadata(t->commit_t);
	const floe_schema *cur = floe_metadata_current_schema(m);
	const floe_partition_spec *spec = floe_metadata_default_spec(m);
	floe_arena a;
	floe_schema *want = NULL;
	floe_partition_spec *ps = NULL;
	int32_t last = 1000;
	if (!cur)
		return;
	floe_arena_init(&a, 4096);
	if (tc->schema && tc->schema[0] != '{' &&
	    !floe_schema_parse_compact(&want, &a, tc->schema, NULL) &&
	    !floe_schema_same_structure(want, cur))
		FLOE_WARN("table %s exists with another schema than the configured one "
			  "(--create-schema / schema:, used only to create the table): writing with "
			  "the table's own schema",
			  t->ident);
	if (tc->partition_by && spec &&
	    !floe_spec_parse_expr(&ps, &a, tc->partition_by, cur, 0, &last, NULL)) {
		bool same = ps->n_fields == spec->n_fields;
		for (size_t i = 0; same && i < ps->n_fields; i++)
			same = ps->fields[i].source_id == spec->fields[i].source_id &&
			       ps->fields[i].transform.kind == spec->fields[i].transform.kind &&
			       ps->fields[i].transform.param == spec->fields[i].transform.param;
		if (!same)
			FLOE_WARN("table %s exists with another partitioning than the configured '%s' "
				  "(--partition-by / partition-by:, used only to create the table): "
				  "writing with the table's own spec",
				  t->ident, tc->partition_by);
	}
	floe_arena_reset(&a);
}

/* The consumer group of a Kafka source: properties.group.id, else the pipeline id. */
static const char *kafka_group(const floe_pipeline *p, const stream_source_cfg *sc)
{
	const char *g = floe_strmap_get(&sc->kafka_props, "properties.group.id");
	return g ? g : p->pipeline_id;
}

/*
 * A table fed by Kafka or Kinesis: its metadata columns (filled from the
 * record, so the decoder sees them as optional); Kafka's also its
 * per-partition positions.
 */
static int open_kafka_table(floe_pipeline *p, rt_table *t, const stream_source_cfg *sc,
			    floe_error *err)
{
	int rc;
	if (sc->type == STREAM_SRC_KAFKA) {
		t->split_fence = true;
		if ((rc = stream_split_state_new(&t->splits, kafka_group(p, sc), err)))
			return rc;
		t->splits->branch = t->cfg->branch;
	}
	if (!sc->metadata.len)
		return FLOE_OK;
	const floe_type *dt = t->decode_type;
	floe_type *nt = floe_arena_calloc(&t->warena, 1, sizeof(*nt));
	floe_field *fs = floe_arena_calloc(&t->warena, dt->n_fields + 1, sizeof(*fs));
	t->meta_kind = floe_arena_calloc(&t->warena, dt->n_fields + 1, 1);
	t->meta_cols = floe_arena_calloc(&t->warena, dt->n_fields + 1, sizeof(bool));
	if (!nt || !fs || !t->meta_kind || !t->meta_cols)
		return floe_error_oom(err);
	*nt = *dt;
	memcpy(fs, dt->fields, dt->n_fields * sizeof(*fs));
	nt->fields = fs;
	for (size_t i = 0; i < sc->metadata.len; i++) {
		const char *what = sc->metadata.items[i].key + strlen("metadata.");
		const char *col = sc->metadata.items[i].value;
		size_t k = 0;
		while (k < dt->n_fields && strcmp(fs[k].name, col))
			k++;
		if (k == dt->n_fields)
			return floe_error_set(err, FLOE_EINVAL,
					      "table %s: metadata.%s names column '%s', which the "
					      "table does not have (a top-level column)",
					      t->ident, what, col);
		int kind = stream_meta_kind(what);
		const floe_type *ct = fs[k].type;
		bool ok;
		switch (kind) {
		case STREAM_META_TOPIC:
		case STREAM_META_TS_TYPE:
		case STREAM_META_STREAM:
		case STREAM_META_SHARD:
		case STREAM_META_SEQ:
			ok = ct->id == FLOE_T_STRING;
			break;
		case STREAM_META_PARTITION:
		case STREAM_META_OFFSET:
			ok = ct->id == FLOE_T_INT || ct->id == FLOE_T_LONG || ct->id == FLOE_T_STRING;
			break;
		case STREAM_META_TIMESTAMP:
			ok = ct->id == FLOE_T_LONG || ct->id == FLOE_T_TIMESTAMP ||
			     ct->id == FLOE_T_TIMESTAMPTZ || ct->id == FLOE_T_TIMESTAMP_NS ||
			     ct->id == FLOE_T_TIMESTAMPTZ_NS;
			break;
		case STREAM_META_KEY:
			ok = ct->id == FLOE_T_STRING || ct->id == FLOE_T_BINARY;
			break;
		case STREAM_META_HEADERS:
			ok = ct->id == FLOE_T_STRING || ct->id == FLOE_T_MAP;
			break;
		default:
			ok = false;
		}
		if (!ok)
			return floe_error_set(err, FLOE_EINVAL,
					      "table %s: column '%s' cannot take metadata.%s (topic, "
					      "timestamp-type, stream, shard-id, sequence-number: string; partition, offset: int, long or "
					      "string; timestamp: long or timestamp; key: string or "
					      "binary; headers: string or map)",
					      t->ident, col, what);
		fs[k].required = false; /* the decoder leaves it; the runtime fills it */
		t->meta_kind[k] = (uint8_t)kind;
		t->meta_cols[k] = true;
	}
	t->decode_type = nt;
	return FLOE_OK;
}

/* ---- RANGE distribution (stream_range.h) ----------------------------------------------- */

/* The sort key's fields: the partition tuple, then the default sort order's
 * fields (through their transforms, descending ones inverted). */
static int range_setup(rt_table *t, floe_error *err)
{
	const floe_sort_order *so =
		floe_metadata_sort_order(t->meta, t->meta->default_sort_order_id);
	size_t n_sort = so ? so->n_fields : 0;
	t->rplan = floe_calloc(t->n_pplan + n_sort + 1, sizeof(rt_pfield));
	if (!t->rplan)
		return floe_error_oom(err);
	for (size_t i = 0; i < t->n_pplan; i++)
		t->rplan[t->n_rplan++] = t->pplan[i];
	for (size_t i = 0; i < n_sort; i++) {
		const floe_sort_field *sf = &so->fields[i];
		const floe_schema_entry *e = floe_schema_find(t->schema, sf->source_id);
		rt_pfield *f = &t->rplan[t->n_rplan];
		floe_partition_field *pf = floe_arena_calloc(&t->warena, 1, sizeof(*pf));
		if (!pf)
			return floe_error_oom(err);
		if (!e || !find_path(t->schema->root, sf->source_id, f->path, &f->depth))
			continue;
		pf->source_id = sf->source_id;
		pf->transform = sf->transform;
		pf->name = "sort";
		f->src_type = e->type;
		f->pf = pf;
		f->desc = sf->descending;
		t->n_rplan++;
	}
	return FLOE_OK;
}

/* At the checkpoint barrier (the tasks idle): the tasks' statistics merged,
 * the assignment the next checkpoint's rows are routed by. */
static int range_reassign(floe_pipeline *p, floe_error *err)
{
	for (size_t i = 0; i < p->n_tables; i++) {
		rt_table *tb = &p->tables[i];
		if (tb->dist != STREAM_DIST_RANGE || p->n_tasks < 2)
			continue;
		stream_range_stats all;
		stream_range_stats_init(&all);
		int rc = FLOE_OK;
		for (int k = 0; k < p->n_tasks && !rc; k++) {
			rc = stream_range_stats_merge(&all, &p->tasks[k].rstats[i]);
			stream_range_stats_reset(&p->tasks[k].rstats[i]);
		}
		stream_range_assign *a = NULL;
		if (!rc && all.total > 0)
			rc = stream_range_assign_new(&a, &all, p->n_tasks);
		size_t keys = all.n;
		bool sampled = all.sampled;
		stream_range_stats_free(&all);
		if (rc)
			return floe_error_oomf(err, "table %s: range statistics", tb->ident);
		if (!a)
			continue; /* no rows: the assignment stays */
		stream_range_assign_free(tb->range);
		tb->range = a;
		FLOE_DEBUG("table %s: range assignment over %d tasks from %zu %s keys (%zu split "
			   "slots)",
			   tb->ident, p->n_tasks, keys, sampled ? "sampled" : "counted", a->n_slots);
	}
	return FLOE_OK;
}

static int open_table(floe_pipeline *p, rt_table *t, const stream_table_cfg *tc, floe_error *err)
{
	int rc;
	t->cfg = tc;
	floe_arena_init(&t->warena, 4096);
	stream_offsets_init(&t->skip);
	stream_offsets_init(&t->route_start);
	stream_offsets_init(&t->committed);
	floe_buf_init(&t->evo_recs, (size_t)32 << 20);
	floe_imap_init(&t->owners);
	if ((rc = floe_catalog_split_ident(tc->name, NULL, &t->ns, &t->name, err)))
		return floe_error_prefix(err, rc, "table '%s': ", tc->name);
	if (!(t->ident = floe_strdup(tc->name)))
		return floe_error_oom(err);
	rc = floe_table_load(&t->commit_t, p->cat, t->ns, t->name, err);
	if (rc == FLOE_ENOTFOUND && tc->schema) {
		floe_error_clear(err);
		rc = stream_table__create(&t->commit_t, p->cat, tc, NULL, err);
	} else if (rc == FLOE_ENOTFOUND) {
		floe_error_clear(err);
		return floe_error_set(err, FLOE_ENOTFOUND,
				      "table %s does not exist: give its schema to create it "
				      "(--create-schema COLUMNS for floe ingest; the table's schema: "
				      "in a pipeline file)",
				      t->ident);
	} else if (!rc && !(tc->route_template && tc->unknown_fields == STREAM_UNKNOWN_EVOLVE)) {
		/* (a routed table that evolves differs from its template by design) */
		warn_if_config_differs(t, tc);
	}
	if (rc)
		return floe_error_prefix(err, rc, "table %s: ", t->ident);
	if ((rc = floe_table_load(&t->write_t, p->cat, t->ns, t->name, err)))
		return floe_error_prefix(err, rc, "table %s: ", t->ident);
	t->meta = floe_table_metadata(t->write_t);
	t->schema = floe_metadata_current_schema(t->meta);
	t->spec = floe_metadata_default_spec(t->meta);
	if (!t->schema || !t->spec)
		return floe_error_corrupt(err, "table %s: no current schema or spec",
				      t->ident);
	if ((rc = floe_iceberg_arrow_schema(&t->aschema, t->schema, err)) ||
	    (rc = floe_write_config_from(&t->wcfg, &t->warena, t->meta, err)))
		return floe_error_prefix(err, rc, "table %s: ", t->ident);
	t->decode_type = t->schema->root;
	if ((t->project = tc->project)) {
		/* records decode into the projection's input; it makes the table's rows */
		if (tc->unknown_fields == STREAM_UNKNOWN_EVOLVE)
			return floe_error_set(err, FLOE_EUNSUPPORTED,
					      "table %s: unknown-fields: evolve with a computed "
					      "projection",
					      t->ident);
		t->decode_type = t->project->input;
	}
	if (tc->filter) {
		/* fields the filter tests but the table lacks are decoded as extra
		 * string columns that are never written */
		char **names = NULL;
		size_t n_names = 0;
		if ((rc = stream_filter_unknown_fields(&names, &n_names, tc->filter, t->decode_type,
						       err)))
			return floe_error_prefix(err, rc, "table %s: ", t->ident);
		if (n_names) {
			const floe_type *root = t->decode_type;
			floe_type *ext = floe_arena_calloc(&t->warena, 1, sizeof(*ext));
			floe_field *fs = floe_arena_calloc(&t->warena, root->n_fields + n_names,
							   sizeof(*fs));
			if (!ext || !fs)
				rc = floe_error_oom(err);
			for (size_t i = 0; !rc && i < n_names; i++) {
				floe_field *f = &fs[root->n_fields + i];
				f->id = INT32_MAX - (int32_t)i;
				f->type = floe_type_primitive(FLOE_T_STRING);
				if (!(f->name = floe_arena_strdup(&t->warena, names[i])))
					rc = floe_error_oom(err);
			}
			if (!rc) {
				*ext = *root;
				memcpy(fs, root->fields, root->n_fields * sizeof(*fs));
				ext->fields = fs;
				ext->n_fields = root->n_fields + n_names;
				t->decode_type = ext;
				t->n_extra = n_names;
			}
		}
		for (size_t i = 0; i < n_names; i++)
			floe_free(names[i]);
		floe_free(names);
		if (rc)
			return rc;
		if ((rc = stream_filter_compile(&t->filter, tc->filter, t->decode_type, err)))
			return floe_error_prefix(err, rc, "table %s: ", t->ident);
		/* the struct of only the fields the filter reads */
		const floe_type *dt = t->decode_type;
		bool *used = floe_calloc(dt->n_fields + 1, sizeof(bool));
		floe_type *pt = floe_arena_calloc(&t->warena, 1, sizeof(*pt));
		floe_field *pf = floe_arena_calloc(&t->warena, dt->n_fields + 1, sizeof(*pf));
		if (!used || !pt || !pf) {
			floe_free(used);
			return floe_error_oom(err);
		}
		stream_filter_fields_used(t->filter, used, dt->n_fields);
		*pt = *dt;
		pt->fields = pf;
		pt->n_fields = 0;
		for (size_t i = 0; i < dt->n_fields; i++)
			if (used[i])
				pf[pt->n_fields++] = dt->fields[i];
		floe_free(used);
		t->pre_type = pt;
		if ((rc = stream_filter_compile(&t->pre_filter, tc->filter, pt, err)))
			return floe_error_prefix(err, rc, "table %s: ", t->ident);
	}
	/* Before the first data file: the writer lease. Its files exist a whole
	 * checkpoint before the snapshot naming them; orphan cleanup (this
	 * pipeline's own maintenance, floe maintain, another pipeline's) leaves
	 * what is newer than the lease alone. Renewed by its thread, advanced as
	 * checkpoints commit, removed when the pipeline ends. */
	int64_t ttl = 4 * p->cfg->checkpoint_interval_ms;
	if ((rc = floe_table__lease_keep_alive(t->commit_t, "pipeline", ttl > 600000 ? ttl : 600000,
					       err)))
		return floe_error_prefix(err, rc, "table %s: ", t->ident);
	/* a table whose head lost entries (a truncated manifest list or manifest)
	 * is not written: a commit on top would make the loss permanent */
	if ((rc = floe_table__verify_snapshot(t->commit_t, table_head(t), err)))
		return rc;
	if (tc->branch) {
		const floe_snapshot_ref *ref =
			floe_metadata_ref(floe_table_metadata(t->commit_t), tc->branch);
		if (ref && ref->is_tag)
			return floe_error_set(err, FLOE_EINVAL,
					      "table %s: '%s' is a tag, not a branch: a pipeline writes "
					      "to a branch",
					      t->ident, tc->branch);
	}
	t->overwrite = tc->write_mode == 1;
	if (tc->overwrite_where &&
	    (rc = stream_ow_filter_new(&t->ow_filter, t->commit_t, tc->overwrite_where, err)))
		return floe_error_prefix(err, rc, "table %s: ", t->ident);
	const stream_source_cfg *sc = stream_config_source(p->cfg, tc->source);
	if (sc && (sc->type == STREAM_SRC_KAFKA || sc->type == STREAM_SRC_KINESIS) &&
	    (rc = open_kafka_table(p, t, sc, err)))
		return rc;
	t->dist = tc->distribution;
	if (t->dist == STREAM_DIST_UNSET) {
		const char *dm = floe_metadata_property(t->meta, "write.distribution-mode");
		t->dist = dm && !strcmp(dm, "hash")    ? STREAM_DIST_HASH
			  : dm && !strcmp(dm, "range") ? STREAM_DIST_RANGE
						       : STREAM_DIST_NONE;
	}
	if ((rc = stream_delta_setup(p, t, err)))
		return rc;
	if (t->project && t->delta)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "table %s: a computed projection into an upsert or change-stream "
				      "table is not supported yet (select the source's columns)",
				      t->ident);
	if ((t->dist == STREAM_DIST_HASH || t->dist == STREAM_DIST_RANGE) && t->spec->n_fields) {
		t->pplan = floe_calloc(t->spec->n_fields, sizeof(rt_pfield));
		if (!t->pplan)
			return floe_error_oom(err);
		for (size_t i = 0; i < t->spec->n_fields; i++) {
			const floe_partition_field *pf = &t->spec->fields[i];
			const floe_schema_entry *e = floe_schema_find(t->schema, pf->source_id);
			rt_pfield *f = &t->pplan[t->n_pplan];
			if (!e || !find_path(t->schema->root, pf->source_id, f->path, &f->depth))
				continue; /* void or dropped source: every row is the same there */
			f->src_type = e->type;
			f->pf = pf;
			t->n_pplan++;
		}
	}
	if (t->dist == STREAM_DIST_RANGE && (rc = range_setup(t, err)))
		return rc;
	for (size_t i = 0; i < t->spec->n_fields; i++) {
		const floe_partition_field *pf = &t->spec->fields[i];
		const floe_schema_entry *e = floe_schema_find(t->schema, pf->source_id);
		if (!e || e->type->id != FLOE_T_DECIMAL || pf->transform.kind != FLOE_TR_TRUNCATE)
			continue;
		if (!t->pcheck && !(t->pcheck = floe_calloc(t->spec->n_fields, sizeof(rt_pfield))))
			return floe_error_oom(err);
		rt_pfield *f = &t->pcheck[t->n_pcheck];
		if (!find_path(t->schema->root, pf->source_id, f->path, &f->depth))
			continue;
		f->src_type = e->type;
		f->pf = pf;
		t->n_pcheck++;
	}
	if (tc->route_template && (rc = load_route_start(p, t, err)))
		return rc;
	return restore_table(p, t, err);
}

/* ---- Kafka: partitions assigned and revoked ----------------------------------------- */

typedef struct kafka_hook {
	floe_pipeline *p;
	size_t src;
} kafka_hook;

/* checkpoint(): dropped, a record needs a schema update first */
#define CKPT_EVOLVE 1
static int checkpoint(floe_pipeline *p, floe_error *err);

/* Wait until every admitted block is in a task writer (the tasks are idle). */
static void wait_drained(floe_pipeline *p)
{
	floe_mutex_lock(&p->lock);
	while ((p->units > 0 || p->raw_len > 0) && !atomic_load(&p->cancel))
		floe_cond_wait(&p->hub_cv, &p->lock);
	floe_mutex_unlock(&p->lock);
}

/* Bring table t's per-partition state up to the catalog's head (a fresh
 * load: the committer's handle is the committer's). */
static int refresh_splits(floe_pipeline *p, rt_table *t, floe_error *err)
{
	floe_table *fresh = NULL;
	floe_mutex_lock(&t->splits->commit_mu); /* not while a commit is in flight */
	int rc = floe_table_load(&fresh, p->cat, t->ns, t->name, err);
	if (!rc)
		rc = stream_split_refresh(t->splits, floe_table_metadata(fresh), p->pipeline_id, NULL,
					  err);
	floe_mutex_unlock(&t->splits->commit_mu);
	floe_table_free(fresh);
	return rc ? floe_error_prefix(err, rc, "table %s: ", t->ident) : FLOE_OK;
}

/*
 * Partitions were assigned: each resumes at the smallest offset its tables
 * committed (-1 when one of them never did: the startup mode); each table
 * skips what it holds and fences its commits on that offset.
 */
static int kafka_assigned(void *payload, const char *const *splits, size_t n, int64_t *pos,
			  floe_error *err)
{
	kafka_hook *h = payload;
	floe_pipeline *p = h->p;
	rt_source *s = &p->sources[h->src];
	int rc = FLOE_OK;
	if (p->threads_started)
		wait_drained(p); /* the tasks read the skips: change them while they are idle */
	for (size_t i = 0; i < n; i++)
		pos[i] = INT64_MAX;
	for (size_t k = 0; k < s->n_tables && !rc; k++) {
		rt_table *t = &p->tables[s->tables[k]];
		if ((rc = refresh_splits(p, t, err)))
			break;
		for (size_t i = 0; i < n && !rc; i++) {
			int64_t c = stream_split_committed(t->splits, splits[i]);
			rc = stream_split_expect(t->splits, splits[i], c);
			/* a routed table that committed nothing: where the run that
			 * created it started (restore_table) */
			if (c < 0)
				c = stream_offsets_get(&t->route_start, splits[i], -1);
			rc = rc ? rc : stream_offsets_set(&t->skip, splits[i], c < 0 ? 0 : c);
			if (rc)
				rc = floe_error_oom(err);
			if (c > 0)
				t->skipping = true;
			if (c < pos[i])
				pos[i] = c;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (pos[i] == INT64_MAX)
			pos[i] = -1;
		if (!rc && pos[i] >= 0 && stream_offsets_set(&s->run_start, splits[i], pos[i]))
			rc = floe_error_oom(err);
	}
	return rc;
}

/* Partitions are about to be revoked: commit everything read so far, so the
 * next owner starts where this process stopped. */
static int kafka_revoking(void *payload, const char *const *splits, size_t n, floe_error *err)
{
	kafka_hook *h = payload;
	floe_pipeline *p = h->p;
	int rc;
	(void)splits;
	if (!p->threads_started || atomic_load(&p->cancel))
		return FLOE_OK;
	FLOE_INFO("source '%s': %zu partitions are being revoked: checkpoint now",
		  p->sources[h->src].cfg->name, n);
	if ((rc = checkpoint(p, err)))
		return rc == FLOE_ECANCELED ? FLOE_OK : rc;
	floe_mutex_lock(&p->lock);
	while (p->pending && !atomic_load(&p->cancel))
		floe_cond_wait(&p->commit_cv, &p->lock);
	floe_mutex_unlock(&p->lock);
	return FLOE_OK; /* a failed commit fails the pipeline on its own */
}

/*
 * A rewind: a commit was refused because another process of the pipeline
 * committed a partition of ours. Drop everything held (the open files
 * become orphans), bring every table's positions up to the catalog, and
 * seek every source there.
 */
static int rewind_pipeline(floe_pipeline *p, floe_error *err)
{
	int rc = FLOE_OK;
	floe_mutex_lock(&p->lock);
	while (p->pending && !atomic_load(&p->cancel))
		floe_cond_wait(&p->commit_cv, &p->lock);
	floe_mutex_unlock(&p->lock);
	wait_drained(p);
	floe_mutex_lock(&p->lock);
	for (int i = 0; i < p->n_tasks; i++) {
		p->tasks[i].abort_req = true;
		p->tasks[i].abort_done = false;
		floe_cond_signal(&p->tasks[i].cv);
	}
	for (;;) {
		bool all = true;
		for (int i = 0; i < p->n_tasks; i++)
			all = all && p->tasks[i].abort_done;
		if (all || atomic_load(&p->cancel))
			break;
		floe_cond_wait(&p->hub_cv, &p->lock);
	}
	p->rewind = false;
	p->rewinds++;
	/* the tasks' next files must not take the names of the dropped ones */
	floe_uuid_v4_str(p->op_id);
	floe_mutex_unlock(&p->lock);
	if (atomic_load(&p->cancel))
		return FLOE_ECANCELED;
	for (size_t i = 0; i < p->n_sources && !rc; i++) {
		rt_source *s = &p->sources[i];
		stream_offsets start;
		stream_offsets_init(&start);
		bool first = true;
		for (size_t k = 0; k < s->n_tables && !rc; k++) {
			rt_table *t = &p->tables[s->tables[k]];
			if (!t->split_fence)
				continue;
			if ((rc = refresh_splits(p, t, err)) || (rc = stream_split_expect_all(t->splits)))
				break;
			floe_mutex_lock(&t->splits->mu);
			stream_offsets_reset(&t->skip);
			stream_offsets_init(&t->skip);
			rc = stream_offsets_copy(&t->skip, &t->splits->merged);
			if (!rc)
				rc = first ? stream_offsets_copy(&start, &t->splits->merged)
					   : stream_offsets_min(&start, &t->splits->merged);
			floe_mutex_unlock(&t->splits->mu);
			t->skipping = true;
			first = false;
			if (rc)
				rc = floe_error_oom(err);
		}
		if (!rc && !first)
			rc = s->src->ops->seek(s->src, &start, err);
		stream_offsets_reset(&start);
	}
	FLOE_WARN("pipeline '%s': rewound to the tables' offsets (rewind %lld)", p->pipeline_id,
		  (long long)p->rewinds);
	return rc;
}

/* A files source (a hybrid's second source too). */
static int open_files(floe_pipeline *p, stream_source **out, const stream_source_cfg *sc,
		      floe_arena *a, floe_error *err)
{
	stream_file_opts fo = {0};
	char **abs = floe_arena_calloc(a, sc->n_paths ? sc->n_paths : 1, sizeof(char *));
	if (!abs)
		return floe_error_oom(err);
	for (size_t i = 0; i < sc->n_paths; i++) {
		const char *path = sc->paths[i];
		if (path[0] != '/' && p->cfg->base_dir)
			abs[i] = floe_arena_sprintf(a, "%s/%s", p->cfg->base_dir, path);
		else
			abs[i] = floe_arena_strdup(a, path);
		if (!abs[i])
			return floe_error_oom(err);
	}
	fo.paths = (const char *const *)abs;
	fo.n_paths = sc->n_paths;
	fo.pattern = sc->pattern;
	fo.follow = sc->follow;
	fo.monitor_interval_ms = sc->monitor_interval_ms;
	fo.format = (stream_format)sc->format;
	fo.block_bytes = (size_t)sc->block_bytes;
	fo.max_record_bytes = (size_t)sc->max_record_bytes;
	fo.csv_quote = sc->csv_quote;
	fo.csv_header = sc->csv_header;
	return stream_source_files_new(out, sc->name, &fo, err);
}

/* A Kafka source with these assignment hooks. */
static int open_kafka(floe_pipeline *p, stream_source **out, const stream_source_cfg *sc,
		      const stream_kafka_hooks *hooks, floe_error *err)
{
	stream_kafka_opts ko = {0};
	ko.topics = sc->topics;
	ko.n_topics = sc->n_topics;
	ko.topic_pattern = sc->topic_pattern;
	ko.props = &sc->kafka_props;
	ko.group_id = kafka_group(p, sc);
	ko.startup_mode = sc->startup_mode;
	ko.startup_ts_ms = sc->startup_ts_ms;
	ko.specific_offsets = sc->specific_offsets;
	ko.bounded_mode = sc->bounded_mode;
	ko.commit_offsets = sc->commit_offsets;
	ko.block_bytes = (size_t)sc->block_bytes;
	ko.max_record_bytes = (size_t)sc->max_record_bytes;
	/* librdkafka parses a message's headers on demand: ask only if read */
	ko.want_headers = floe_strmap_get(&sc->metadata, "metadata.headers") != NULL;
	ko.hooks = *hooks;
	return stream_source_kafka_new(out, sc->name, &ko, err);
}

static int open_kinesis(stream_source **out, const stream_source_cfg *sc, floe_error *err)
{
	stream_kinesis_opts kn = {0};
	kn.stream = sc->kinesis_stream;
	kn.initpos = sc->kinesis_initpos;
	kn.initpos_ts_ms = sc->startup_ts_ms;
	kn.max_records = sc->kinesis_max_records;
	kn.interval_ms = sc->kinesis_interval_ms;
	kn.discovery_ms = sc->kinesis_discovery_ms;
	kn.block_bytes = (size_t)sc->block_bytes;
	kn.max_record_bytes = (size_t)sc->max_record_bytes;
	kn.aws.region = floe_strmap_get(&sc->aws_props, "aws.region");
	kn.aws.endpoint = floe_strmap_get(&sc->aws_props, "aws.endpoint");
	kn.aws.provider = floe_strmap_get(&sc->aws_props, "aws.credentials.provider");
	kn.aws.access_key = floe_strmap_get(&sc->aws_props, "aws.credentials.basic.accesskeyid");
	kn.aws.secret_key = floe_strmap_get(&sc->aws_props, "aws.credentials.basic.secretkey");
	kn.aws.profile = floe_strmap_get(&sc->aws_props, "aws.credentials.profile.name");
	kn.aws.profile_path = floe_strmap_get(&sc->aws_props, "aws.credentials.profile.path");
	return stream_source_kinesis_new(out, sc->name, &kn, err);
}

/* A hybrid's Kafka phase: partitions start where the hybrid says (the
 * bootstrap snapshot's offsets, or the table's after the switch). */
typedef struct hybrid_hook {
	stream_source *hybrid; /* set once the hybrid exists */
} hybrid_hook;

static int hybrid_kafka_assigned(void *payload, const char *const *splits, size_t n, int64_t *pos,
				 floe_error *err)
{
	hybrid_hook *h = payload;
	(void)err;
	for (size_t i = 0; i < n; i++)
		pos[i] = h->hybrid ? stream_source_hybrid_start(h->hybrid, splits[i]) : -1;
	return FLOE_OK;
}

static int open_hybrid(floe_pipeline *p, rt_source *s, const stream_source_cfg *sc,
		       floe_arena *a, floe_error *err)
{
	stream_source *then = NULL;
	hybrid_hook *hh = NULL;
	int rc;
	switch (sc->hybrid_then) {
	case STREAM_SRC_KAFKA: {
		stream_kafka_hooks hooks = {0};
		if (!(hh = floe_arena_calloc(a, 1, sizeof(*hh))))
			return floe_error_oom(err);
		hooks.assigned = hybrid_kafka_assigned;
		hooks.payload = hh;
		rc = open_kafka(p, &then, sc, &hooks, err);
		break;
	}
	case STREAM_SRC_KINESIS:
		rc = open_kinesis(&then, sc, err);
		break;
	default:
		rc = open_files(p, &then, sc, a, err);
		break;
	}
	if (rc)
		return rc;
	stream_iceberg_opts io = {0};
	io.cat = p->cat;
	io.table = sc->iceberg_table;
	io.monitor_interval_ms = sc->monitor_interval_ms;
	io.block_bytes = (size_t)sc->block_bytes;
	if ((rc = stream_source_hybrid_new(&s->src, sc->name, &io, then, err)))
		return rc;
	if (hh)
		hh->hybrid = s->src;
	return FLOE_OK;
}

static int open_source(floe_pipeline *p, rt_source *s, const stream_source_cfg *sc,
		       floe_arena *a, floe_error *err)
{
	int rc;
	s->cfg = sc;
	switch (sc->type) {
	case STREAM_SRC_FILES:
		rc = open_files(p, &s->src, sc, a, err);
		break;
	case STREAM_SRC_HYBRID:
		rc = open_hybrid(p, s, sc, a, err);
		break;
	case STREAM_SRC_STDIN: {
		stream_stdin_opts so = {0, (stream_format)sc->format, (size_t)sc->block_bytes,
					(size_t)sc->max_record_bytes, sc->csv_quote, sc->csv_header};
		rc = stream_source_stdin_new(&s->src, sc->name, &so, err);
		break;
	}
	case STREAM_SRC_GENERATOR: {
		stream_gen_opts go = {0};
		floe_schema *gs = NULL;
		if (sc->schema) {
			if ((rc = floe_schema_parse_compact(&gs, a, sc->schema, err)))
				return floe_error_prefix(err, rc, "source '%s': schema: ", sc->name);
			go.schema = gs;
		} else if (s->n_tables) {
			go.schema = p->tables[s->tables[0]].schema;
		} else {
			return floe_error_set(err, FLOE_EINVAL, "source '%s' feeds no table", sc->name);
		}
		if (sc->rows_per_second < 0)
			return floe_error_set(err, FLOE_EINVAL,
					      "source '%s': rows-per-second: %lld is not a rate (0 = as "
					      "fast as possible, or more)",
					      sc->name, (long long)sc->rows_per_second);
		/* INT64_MIN: not given (no end); an explicit -1 used to run forever */
		if (sc->number_of_rows < 0 && sc->number_of_rows != INT64_MIN)
			return floe_error_set(err, FLOE_EINVAL,
					      "source '%s': number-of-rows: %lld is not a row count (0 "
					      "or more; leave it out for no end)",
					      sc->name, (long long)sc->number_of_rows);
		go.rows_per_second = sc->rows_per_second;
		go.number_of_rows = sc->number_of_rows == INT64_MIN ? -1 : sc->number_of_rows;
		go.seed = (uint64_t)sc->seed;
		go.fields = &sc->gen_fields;
		rc = stream_source_gen_new(&s->src, sc->name, &go, err);
		break;
	}
	case STREAM_SRC_KAFKA: {
		stream_kafka_hooks hooks = {0};
		kafka_hook *h = floe_arena_calloc(a, 1, sizeof(*h));
		if (!h)
			return floe_error_oom(err);
		h->p = p;
		h->src = (size_t)(s - p->sources);
		hooks.assigned = kafka_assigned;
		hooks.revoking = kafka_revoking;
		hooks.payload = h;
		rc = open_kafka(p, &s->src, sc, &hooks, err);
		break;
	}
	case STREAM_SRC_KINESIS:
		rc = open_kinesis(&s->src, sc, err);
		break;
	case STREAM_SRC_ICEBERG: {
		stream_iceberg_opts io = {0};
		io.cat = p->cat;
		io.table = sc->iceberg_table;
		io.mode = sc->iceberg_mode;
		io.start = sc->iceberg_start;
		io.start_snapshot_id = sc->iceberg_start_snapshot;
		io.start_timestamp_ms = sc->iceberg_start_ts;
		io.streaming = sc->iceberg_streaming;
		io.skip_overwrites = sc->iceberg_skip_overwrites;
		io.monitor_interval_ms = sc->monitor_interval_ms;
		io.block_bytes = (size_t)sc->block_bytes;
		io.watermark_column = sc->watermark_column;
		io.watermark_unit_ns = sc->watermark_unit_ns;
		rc = stream_source_iceberg_new(&s->src, sc->name, &io, err);
		break;
	}
	default:
		return floe_error_set(err, FLOE_EUNSUPPORTED, "source '%s': unknown source type",
				      sc->name);
	}
	return rc;
}

/* Where each source starts: the smallest committed position over its tables. */
static int seek_sources(floe_pipeline *p, floe_error *err)
{
	for (size_t i = 0; i < p->n_sources; i++) {
		rt_source *s = &p->sources[i];
		stream_offsets start, params;
		int rc = FLOE_OK;
		stream_offsets_init(&start);
		stream_offsets_init(&params);
		for (size_t k = 0; k < s->n_tables && !rc; k++) {
			const stream_offsets *o = &p->tables[s->tables[k]].skip;
			for (size_t j = 0; j < o->n && !rc; j++)
				if (o->items[j].split[0] == STREAM_PARAM_PREFIX)
					rc = stream_offsets_set(&params, o->items[j].split + 1,
								o->items[j].pos);
			if (!rc)
				rc = k == 0 ? stream_offsets_copy(&start, o) : stream_offsets_min(&start, o);
		}
		for (size_t j = 0; j < params.n && !rc; j++)
			rc = stream_offsets_set(&start, params.items[j].split, params.items[j].pos);
		if (!rc)
			rc = stream_offsets_copy(&s->run_start, &start);
		if (rc)
			rc = floe_error_oom(err);
		else
			rc = s->src->ops->seek(s->src, &start, err);
		stream_offsets_reset(&start);
		stream_offsets_reset(&params);
		if (rc)
			return floe_error_prefix(err, rc, "source '%s': ", s->cfg->name);
	}
	return FLOE_OK;
}

int stream_pipeline_open(floe_pipeline **out, stream_config *cfg, floe_catalog *cat,
			 const stream_sink_ops *sink, const floe_pipeline_opts *opts,
			 floe_error *err)
{
	floe_pipeline *p;
	int rc;
	*out = NULL;
	p = floe_calloc(1, sizeof(*p));
	if (!p) {
		stream_config_free(cfg);
		return floe_error_oom(err);
	}
	p->cfg = cfg;
	p->cat = cat;
	p->sink = sink ? sink : &stream_sink_task_writers;
	p->dlq_fd = -1;
	p->start_ns = floe_monotonic_ns();
	p->resumed_ckpt = -1;
	if (opts)
		p->opts = *opts;
	if (!p->opts.progress_interval_ms)
		p->opts.progress_interval_ms = 500;
	floe_uuid_v4_str(p->op_id);
	if (floe_mutex_init(&p->lock) || floe_cond_init(&p->hub_cv) || floe_cond_init(&p->commit_cv) ||
	    floe_mutex_init(&p->dlq_lock) || floe_mutex_init(&p->owner_lock)) {
		rc = floe_error_oom(err);
		goto fail;
	}
	p->pipeline_id = floe_strdup(cfg->pipeline_id);
	p->dlq_path = floe_strdup(cfg->dead_letter_path);
	if (!p->pipeline_id || !p->dlq_path) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if (cfg->has_catalog) {
		floe_catalog_config cc = FLOE_CATALOG_CONFIG_INIT;
		cc.type = cfg->catalog_type;
		cc.uri = cfg->catalog_uri;
		cc.name = cfg->catalog_name;
		cc.warehouse = cfg->catalog_warehouse;
		floe_prop *props = NULL;
		if (cfg->catalog_props.len) {
			props = floe_calloc(cfg->catalog_props.len, sizeof(*props));
			if (!props) {
				rc = floe_error_oom(err);
				goto fail;
			}
			for (size_t i = 0; i < cfg->catalog_props.len; i++) {
				/* stored as catalog.properties.<key> */
				props[i].key = cfg->catalog_props.items[i].key + 19;
				props[i].value = cfg->catalog_props.items[i].value;
			}
			cc.props = props;
			cc.n_props = cfg->catalog_props.len;
		}
		rc = floe_catalog_open(&p->cat, &cc, err);
		floe_free(props);
		if (rc)
			goto fail;
		p->own_cat = true;
	}
	if (!p->cat) {
		rc = floe_error_set(err, FLOE_EINVAL, "no catalog");
		goto fail;
	}
	if (cfg->atomic_commit && !floe_catalog_has_transactions(p->cat) &&
	    p->cat->no_transactions) {
		rc = floe_error_set(err, FLOE_EINVAL, "pipeline.atomic-commit: %s",
				    p->cat->no_transactions);
		goto fail;
	}
	if (cfg->atomic_commit && !floe_catalog_has_transactions(p->cat)) {
		rc = floe_error_set(err, FLOE_EINVAL,
				    "pipeline.atomic-commit: the %s catalog cannot commit several "
				    "tables in one transaction (use a SQL or REST catalog)",
				    p->cat->kind);
		goto fail;
	}
	/* name templates: the tables they have so far */
	if ((rc = stream_route_expand(cfg, p->cat, err)))
		goto fail;
	if (cfg->n_routes &&
	    !(p->routes = floe_calloc(cfg->n_routes, sizeof(rt_route)))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	for (size_t r = 0; r < cfg->n_routes; r++) {
		p->routes[r].tpl = &cfg->routes[r];
		for (size_t k = 0; k < cfg->n_sources; k++)
			if (!strcmp(cfg->sources[k].name, cfg->routes[r].source))
				p->routes[r].src = k;
		p->n_routes = r + 1;
	}
	p->n_tasks = (int)cfg->parallelism;
	p->max_units = cfg->max_buffered_blocks > 0 ? cfg->max_buffered_blocks : p->n_tasks + 2;
	p->raw_cap = (size_t)p->max_units + 1;
	p->raw = floe_calloc(p->raw_cap, sizeof(raw_item));
	p->tables = floe_calloc(cfg->n_tables ? cfg->n_tables : 1, sizeof(rt_table));
	p->sources = floe_calloc(cfg->n_sources ? cfg->n_sources : 1, sizeof(rt_source));
	p->tasks = floe_calloc((size_t)p->n_tasks, sizeof(rt_task));
	if (!p->raw || !p->tables || !p->sources || !p->tasks) {
		rc = floe_error_oom(err);
		goto fail;
	}
	p->n_sources = cfg->n_sources;
	/* upserts and change records: their rules, before any table is created */
	if ((rc = stream_delta_precheck(cfg, p->cat, err)))
		goto fail;
	/* a lock database's ${secret:...}: asked now (and kept for the process),
	 * so that a missing secret stops the start, not the first maintenance */
	for (size_t i = 0; i < cfg->n_tables; i++) {
		char *lu = NULL;
		const char *u = cfg->tables[i].maint.lock_uri;
		if (u && (rc = floe_secret_expand(&lu, u, true, err))) {
			rc = floe_error_prefix(err, rc, "table '%s': maintenance.lock-uri: ",
					       cfg->tables[i].name);
			goto fail;
		}
		floe_secret_free(lu);
	}
	for (size_t i = 0; i < cfg->n_tables; i++) {
		rt_table *t = &p->tables[i];
		p->n_tables = i + 1;
		if ((rc = open_table(p, t, &cfg->tables[i], err)))
			goto fail;
		for (size_t k = 0; k < cfg->n_sources; k++)
			if (!strcmp(cfg->sources[k].name, cfg->tables[i].source))
				t->src = k;
		if (t->last_ckpt >= p->next_ckpt)
			p->next_ckpt = t->last_ckpt;
		p->io = floe_table_io(t->write_t);
	}
	p->next_ckpt++;
	p->run_id = p->next_ckpt;
	for (size_t k = 0; k < cfg->n_sources; k++)
		stream_offsets_init(&p->sources[k].run_start);
	for (size_t k = 0; k < cfg->n_sources; k++) {
		rt_source *s = &p->sources[k];
		s->tables = floe_calloc(cfg->n_tables ? cfg->n_tables : 1, sizeof(size_t));
		if (!s->tables) {
			rc = floe_error_oom(err);
			goto fail;
		}
		for (size_t i = 0; i < p->n_tables; i++)
			if (p->tables[i].src == k)
				s->tables[s->n_tables++] = i;
		if ((rc = open_source(p, s, &cfg->sources[k], &cfg->arena, err))) {
			if (!strstr(err ? err->msg : "", "source '"))
				floe_error_prefix(err, rc, "source '%s': ", cfg->sources[k].name);
			goto fail;
		}
	}
	if ((rc = seek_sources(p, err)))
		goto fail;
	if ((rc = floe_parquet_budget_new(&p->budget, (uint64_t)cfg->memory_budget, NULL, NULL))) {
		rc = floe_error_set(err, rc, "out of memory");
		goto fail;
	}
	if ((rc = setup_metrics(p, err)))
		goto fail;
	for (int i = 0; i < p->n_tasks; i++)
		if ((rc = stream_task_init(&p->tasks[i], p, i, err)))
			goto fail;
	*out = p;
	return FLOE_OK;
fail:
	floe_pipeline_free(p);
	return rc;
}

/* ---- the committer -------------------------------------------------------------------- */

static void ckpt_free(ckpt_item *c, size_t n_tables, size_t n_sources)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_arenas; i++)
		floe_arena_free(c->arenas[i]);
	floe_free(c->arenas);
	for (size_t i = 0; i < c->n_idx_arenas; i++)
		floe_arena_free(c->idx_arenas[i]);
	floe_free(c->idx_arenas);
	for (size_t i = 0; c->files && i < n_tables; i++)
		floe_free(c->files[i]);
	floe_free(c->files);
	floe_free(c->n_files);
	for (size_t i = 0; c->offsets && i < n_tables; i++)
		floe_free(c->offsets[i]);
	floe_free(c->offsets);
	floe_free(c->moved);
	for (size_t i = 0; c->positions && i < n_sources; i++)
		stream_offsets_reset(&c->positions[i]);
	floe_free(c->positions);
	floe_free(c);
}

/*
 * One snapshot for the table's files of a checkpoint: a fast append when
 * they are all data files, else a row delta (Flink's committer: RowDelta,
 * "overwrite", or "delete" when it adds only deletes) — fenced on the
 * pipeline's last snapshot either way. A row delta validates as Java's
 * (producer.c): its position deletes and DVs name only data files of the
 * same commit (the delta writer deletes positions of rows it wrote in this
 * checkpoint), so no concurrent commit can have removed them, and a
 * concurrent compaction keeps its data sequence number, so the equality
 * deletes committed here still apply to the rows it rewrote.
 */
/* index mode: every attempt's base must be the snapshot the index describes */
typedef struct idx_check {
	int64_t expect;
	bool failed;
} idx_check;

static int idx_check_cb(void *payload, const floe_metadata *base, const floe_snapshot *parent,
			floe_error *err)
{
	idx_check *ic = payload;
	int64_t head = parent ? parent->snapshot_id : FLOE_NO_SNAPSHOT;
	(void)base;
	if (head == ic->expect)
		return FLOE_OK;
	ic->failed = true;
	return floe_error_set(err, FLOE_ECONFLICT,
			      "snapshot %lld landed after the key index's snapshot %lld",
			      (long long)head, (long long)ic->expect);
}

/* Whether file f of an index-mode checkpoint goes into the commit. */
static bool idx_take(const floe_data_file *f, bool dv_mode)
{
	unsigned tag = f->absent_metrics & FLOE_DELTA_TAGS;
	if (tag & FLOE_DELTA_TAG_FALLBACK)
		return !dv_mode;
	if (tag & (FLOE_DELTA_TAG_INDEX | FLOE_DELTA_TAG_REMOVE))
		return dv_mode;
	return true;
}

/* After an index-mode commit: delete what was written and not committed (the
 * equality deletes, or the index's DVs). Never after an unknown outcome. */
static void idx_discard(rt_table *t, const floe_data_file *files, size_t n, bool dv_mode)
{
	floe_hmap seen;
	floe_hmap_init(&seen);
	for (size_t i = 0; i < n; i++) {
		const floe_data_file *f = &files[i];
		unsigned tag = f->absent_metrics & FLOE_DELTA_TAGS;
		if (!tag || (tag & FLOE_DELTA_TAG_REMOVE) || idx_take(f, dv_mode))
			continue;
		if (floe_hmap_get_str(&seen, f->file_path, NULL))
			continue; /* DVs share one Puffin file */
		if (floe_hmap_put_str(&seen, f->file_path, 1))
			break;
		floe_io_remove_quiet(floe_table_io(t->commit_t), f->file_path);
	}
	floe_hmap_reset(&seen);
}

/* A watermarked source's checkpoint (its @watermark parameter): the commit
 * carries floe.watermark, epoch ms — every row of the source with an earlier
 * event time not in this snapshot or an older one is late. */
static int set_watermark(floe_snapshot_op *op, const stream_offsets *pos, floe_error *err)
{
	char num[32];
	if (!stream_offsets_has(pos, "@watermark"))
		return FLOE_OK;
	snprintf(num, sizeof(num), "%lld", (long long)stream_offsets_get(pos, "@watermark", 0));
	return floe_op_set_summary(op, "floe.watermark", num, err);
}

/*
 * Vended credentials (a REST catalog's, with s3.session-token-expires-at-ms)
 * that expire within three checkpoint intervals (at least 5 minutes) are
 * renewed before the commit: through the FileIO's renewer (the REST
 * catalog's loadCredentials, or a loadTable when the server does not offer
 * it), else by loading the table again. The FileIO every writer task signs
 * with gets the new ones, so the files of the next checkpoints are written
 * under credentials that outlive them; requests between commits (long
 * uploads, scans, maintenance) renew through the same renewer when they
 * find the credentials due (io/fileio.h floe_io_set_renewer).
 */
static int renew_credentials(floe_pipeline *p, rt_table *t, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t->commit_t);
	floe_fileio *io = floe_table_io(t->commit_t);
	int64_t exp = m && m->location ? floe_io_credentials_expire_ms(io, m->location) : 0;
	if (exp <= 0)
		return FLOE_OK;
	int64_t margin = 3 * p->cfg->checkpoint_interval_ms, now = floe_now_ms();
	if (margin < 300000)
		margin = 300000;
	if (exp - now > margin)
		return FLOE_OK;
	FLOE_INFO("table %s: its vended credentials expire in %lld s: renewing them", t->ident,
		  (long long)((exp - now) / 1000));
	floe_error e;
	floe_error_clear(&e);
	int rc = floe_io_renew_credentials(io, m->location, &e);
	if (rc == FLOE_EUNSUPPORTED) /* no renewer: a load vends new ones */
		rc = floe_table_refresh(t->commit_t, err);
	else if (rc && err)
		*err = e;
	return rc ? floe_error_prefix(err, rc, "table %s: renewing its vended credentials: ",
				      t->ident)
		  : FLOE_OK;
}

/* index mode, a commit without the index's DVs: the equality deletes of the
 * keys the writers kept instead of writing them (floe_delta_index_fallback) */
static int idx_fallback(rt_table *t, ckpt_item *c, size_t ti, floe_error *err)
{
	floe_arena *ia = floe_arena_new(65536);
	if (!ia || FLOE_ARRAY_RESERVE(c->idx_arenas, c->cap_idx_arenas, c->n_idx_arenas + 1)) {
		floe_arena_free(ia);
		return floe_error_oom(err);
	}
	c->idx_arenas[c->n_idx_arenas++] = ia;
	return floe_delta_index_fallback(t->index, &c->files[ti], &c->n_files[ti], ia, err);
}

/*
 * A checkpoint's files of table ti into ap (of an index-mode table those the
 * commit takes: idx_take) and the pipeline's summary: its id and checkpoint
 * (also under Flink's names), the source's offsets, the watermark.
 */
static int add_checkpoint(floe_pipeline *p, rt_table *t, ckpt_item *c, size_t ti,
			  floe_snapshot_op *ap, bool dv_mode, floe_error *err)
{
	char num[32];
	int rc = FLOE_OK;
	for (size_t i = 0; i < c->n_files[ti] && !rc; i++) {
		floe_data_file f = c->files[ti][i];
		if (t->index_mode && !idx_take(&f, dv_mode))
			continue;
		unsigned tag = f.absent_metrics & FLOE_DELTA_TAGS;
		f.absent_metrics &= ~FLOE_DELTA_TAGS;
		rc = tag & FLOE_DELTA_TAG_REMOVE ? floe_op_remove_file(ap, &f, err)
						 : floe_op_add_file(ap, &f, err);
	}
	if (!rc && t->index_mode)
		rc = floe_op_set_summary(ap, "floe.upsert-mode", dv_mode ? "index" : "index-fallback",
					 err);
	snprintf(num, sizeof(num), "%lld", (long long)c->id);
	rc = rc ? rc : floe_op_set_summary(ap, "floe.pipeline-id", p->pipeline_id, err);
	rc = rc ? rc : floe_op_set_summary(ap, "floe.checkpoint-id", num, err);
	rc = rc ? rc : floe_op_set_summary(ap, "floe.source", p->sources[t->src].cfg->name, err);
	rc = rc ? rc : floe_op_set_summary(ap, "floe.source-offsets", c->offsets[ti], err);
	rc = rc ? rc : set_watermark(ap, &c->positions[t->src], err);
	/* a one-shot load that read all its input: its state may expire after
	 * history.expire.keep-pipeline-state-for (a running pipeline's never) */
	if (c->complete)
		rc = rc ? rc : floe_op_set_summary(ap, "floe.load-complete", "true", err);
	rc = rc ? rc : floe_op_set_summary(ap, "flink.job-id", p->pipeline_id, err);
	rc = rc ? rc : floe_op_set_summary(ap, "flink.max-committed-checkpoint-id", num, err);
	return rc;
}

static int commit_table(floe_pipeline *p, rt_table *t, ckpt_item *c, size_t ti, bool *conflict,
			floe_error *err)
{
	bool dv_mode = false;
	int rc_r = renew_credentials(p, t, err);
	if (rc_r)
		return rc_r;
	idx_check ic = {0, false};
	char kpath[1024] = ""; /* helper-idxpersist: the key index persisted with this commit */
	if (t->index_mode) {
		int rc0 = floe_table_refresh(t->commit_t, err);
		if (rc0)
			return floe_error_prefix(err, rc0, "checkpoint %lld: table %s: ",
						 (long long)c->id, t->ident);
		const floe_snapshot *h =
			floe_metadata_branch_head(floe_table_metadata(t->commit_t), NULL);
		int64_t head = h ? h->snapshot_id : FLOE_NO_SNAPSHOT;
		dv_mode = !t->idx_stale && t->index && head == t->idx_expect;
		ic.expect = t->idx_expect;
		if (!dv_mode && t->index && (rc0 = idx_fallback(t, c, ti, err)))
			return floe_error_prefix(err, rc0, "checkpoint %lld: table %s: ",
						 (long long)c->id, t->ident);
	}
again:;
	floe_snapshot_op *ap = NULL;
	stream_split_check_ctx ck;
	memset(&ck, 0, sizeof(ck));
	ck.st = t->splits;
	ck.pipeline_id = p->pipeline_id;
	ck.commit = &c->positions[t->src];
	stream_offsets_init(&ck.seen);
	int64_t snap = -1, t0 = now_ms(), records = 0, bytes = 0;
	int64_t n_data = 0, n_pos = 0, n_eq = 0, del_records = 0, del_bytes = 0;
	int rc;
	size_t n = c->n_files[ti];
	if (n == 0 && !c->moved[ti])
		return FLOE_OK; /* empty checkpoint: nothing to commit */
	for (size_t i = 0; i < n; i++) {
		const floe_data_file *f = &c->files[ti][i];
		if (t->index_mode && !idx_take(f, dv_mode))
			continue;
		if (f->absent_metrics & FLOE_DELTA_TAG_REMOVE)
			continue;
		if (f->content == FLOE_CONTENT_DATA) {
			n_data++;
			records += f->record_count;
			bytes += f->file_size_in_bytes;
			continue;
		}
		if (f->content == FLOE_CONTENT_EQUALITY_DELETES)
			n_eq++;
		else
			n_pos++;
		del_records += f->record_count;
		del_bytes += f->content_size_in_bytes > 0 ? f->content_size_in_bytes
							  : f->file_size_in_bytes;
	}
	FLOE_DEBUG("checkpoint %lld: committing %zu files to %s", (long long)c->id, n, t->ident);
	if (t->split_fence) {
		/* the per-partition state may be newer than the committer's handle
		 * (a rebalance read the catalog): the base must be at least as new */
		floe_mutex_lock(&t->splits->commit_mu);
		if ((rc = floe_table_refresh(t->commit_t, err)))
			goto done;
	}
	if ((rc = floe_op_new(&ap, t->commit_t,
			      t->overwrite	? FLOE_OP_OVERWRITE
			      : n_pos + n_eq ? FLOE_OP_ROW_DELTA
					     : FLOE_OP_APPEND,
			      t->cfg->branch, err)))
		goto done;
	if (t->overwrite) {
		floe_overwrite_scope os = {!t->ow_filter,
					   t->ow_filter ? stream_ow_filter_scope : NULL,
					   t->ow_filter,
					   t->cfg->overwrite_where,
					   t->ow_base,
					   t->ow_base == FLOE_NO_SNAPSHOT ? 0 : t->ow_base_seq,
					   p->pipeline_id};
		char ob[48];
		snprintf(ob, sizeof(ob), "%lld:%lld", (long long)t->ow_base,
			 (long long)t->ow_base_seq);
		if ((rc = floe_op_set_overwrite(ap, &os, err)) ||
		    (rc = floe_op_set_summary(ap, "floe.overwrite-base", ob, err)))
			goto done;
	}
	rc = rc ? rc : add_checkpoint(p, t, c, ti, ap, dv_mode, err);
	if (t->split_fence) {
		/* each process of the pipeline commits its own partitions: fenced per
		 * partition, not on the pipeline's newest snapshot */
		rc = rc ? rc
			: floe_append_set_summary(ap, "floe.kafka.group-id", t->splits->group, err);
		floe_op_set_check(ap, stream_split_check, &ck);
	} else {
		rc = rc ? rc : floe_op_fence_pipeline(ap, p->pipeline_id, t->fence_snap, err);
		if (dv_mode)
			floe_op_set_check(ap, idx_check_cb, &ic);
	}
	/* helper-idxpersist: the index as of after this commit, named in its summary */
	if (!rc && dv_mode && stream_index_persist_wanted(t, c->complete)) {
		floe_error pe;
		floe_error_clear(&pe);
		if (stream_index_persist_write(p, t, ap, c->files[ti], n, c->id, kpath,
					       sizeof(kpath), &pe))
			FLOE_WARN("table %s: checkpoint %lld: the key index is not persisted: %s",
				  t->ident, (long long)c->id, pe.msg);
	}
	if (p->sink == &stream_sink_task_writers)
		floe_op_verify_added(ap); /* its files: they must still be there */
	if (n == 0)
		floe_op_allow_empty(ap); /* the offsets moved: they are the change */
	rc = rc ? rc : floe_op_commit(ap, &snap, err);
	if (rc && dv_mode && ic.failed) {
		/* another commit landed meanwhile: this checkpoint's equality
		 * deletes instead, and an index rebuilt after it */
		FLOE_INFO("table %s: checkpoint %lld: %s; committing its equality deletes "
			  "instead of the index's deletion vectors",
			  t->ident, (long long)c->id, err ? err->msg : "a concurrent commit");
		floe_error_clear(err);
		floe_op_free(ap);
		ap = NULL;
		stream_split_check_reset(&ck);
		stream_index_persist_after(t, kpath, false, true); /* helper-idxpersist */
		kpath[0] = 0;
		dv_mode = false;
		ic.failed = false;
		if ((rc = idx_fallback(t, c, ti, err)))
			goto done;
		goto again;
	}
	if (!rc && t->index_mode && dv_mode)
		stream_index_persist_after(t, kpath, snap >= 0, false); /* helper-idxpersist */
	if (!rc && t->index_mode) {
		idx_discard(t, c->files[ti], n, dv_mode);
		if (dv_mode)
			floe_delta_index_forget(t->index);
		if (dv_mode && snap >= 0) {
			t->idx_expect = snap;
			t->idx_dv_commits++;
		} else if (!dv_mode) {
			t->idx_stale = true;
			t->idx_fallbacks++;
		}
	}
	if (rc) {
		if (t->split_fence && ck.conflict)
			*conflict = true;
		goto done;
	}
	if (snap >= 0)
		t->fence_snap = snap;
	if (set_committed(t, &c->positions[t->src])) {
		rc = floe_error_oom(err);
		goto done;
	}
	if (t->split_fence && (rc = stream_split_check_done(&ck, snap))) {
		rc = floe_error_oom(err);
		goto done;
	}
	int64_t dt = now_ms() - t0;
	atomic_store(&t->last_commit_ms, floe_now_ms());
	floe_metric_set(t->m_commit_ms, dt);
	floe_metric_set(t->m_flush_ms, c->flush_ms);
	floe_metric_add(t->m_files, n_data);
	floe_metric_add(t->m_records, records);
	floe_metric_add(t->m_bytes, bytes);
	floe_metric_add(t->m_del_files, n_pos + n_eq);
	floe_metric_add(t->m_del_records, del_records);
	floe_metric_add(t->m_del_bytes, del_bytes);
	floe_metric_add(t->m_out, records);
	for (size_t i = 0; i < n; i++)
		if (c->files[ti][i].content == FLOE_CONTENT_DATA)
			floe_metric_observe(t->m_hist, c->files[ti][i].file_size_in_bytes);
	atomic_fetch_add(&p->records_out, records);
	atomic_fetch_add(&p->files_committed, (int64_t)n);
	if (t->maint) {
		floe_maint_commit mc = {n_data, bytes, n_pos, n_eq};
		floe_maint_runner_note_commit(t->maint, &mc);
		/* the web console shows who holds the maintenance lock */
		floe_maint_runner_stats ms;
		floe_maint_runner_get_stats(t->maint, &ms);
		if (ms.lock_holder[0]) {
			char key[300];
			snprintf(key, sizeof(key), "maintenance-lock:%s", t->ident);
			floe_metrics_note(p->metrics, key, ms.lock_holder);
		}
	}
	if (n_pos + n_eq)
		FLOE_INFO("table %s: checkpoint %lld committed as snapshot %lld (%lld data files, "
			  "%lld records; %lld equality delete files, %lld position delete files/DVs; "
			  "%lld ms)",
			  t->ident, (long long)c->id, (long long)snap, (long long)n_data,
			  (long long)records, (long long)n_eq, (long long)n_pos, (long long)dt);
	else
		FLOE_INFO("table %s: checkpoint %lld committed as snapshot %lld (%zu files, %lld "
			  "records, %lld ms)",
			  t->ident, (long long)c->id, (long long)snap, n, (long long)records,
			  (long long)dt);
done:
	if (t->split_fence)
		floe_mutex_unlock(&t->splits->commit_mu);
	floe_op_free(ap);
	stream_split_check_reset(&ck);
	if (rc)
		floe_error_prefix(err, rc, "checkpoint %lld: table %s: ", (long long)c->id, t->ident);
	return rc;
}

/*
 * pipeline.atomic-commit: every table with files in the checkpoint commits
 * in one catalog transaction (floe_op_commit_all), each snapshot fenced and
 * summarised as commit_table's, so after any crash every table is at the
 * same checkpoint (a table without rows in it gets no snapshot).
 *
 * An index-mode table takes part as in commit_table: its DVs only while the
 * table's head is the snapshot its index describes (checked on every
 * attempt of the transaction), else its equality deletes; a transaction
 * refused because another commit landed on such a table is built again with
 * that table's equality deletes, and its index is rebuilt after it.
 */
typedef struct atomic_tbl {
	bool dv_mode;
	idx_check ic;
	char kpath[1024]; /* the key index persisted with this commit */
	bool in_op;       /* has an operation in this attempt */
	bool fallen;      /* its equality deletes were made (idx_fallback) */
} atomic_tbl;

static int atomic_op(floe_pipeline *p, ckpt_item *c, size_t ti, atomic_tbl *at,
		     stream_split_check_ctx *ck, floe_snapshot_op **out, floe_error *err)
{
	rt_table *t = &p->tables[ti];
	bool deletes = false;
	size_t taken = 0;
	int rc;
	*out = NULL;
	for (size_t i = 0; i < c->n_files[ti]; i++) {
		const floe_data_file *f = &c->files[ti][i];
		if (t->index_mode && !idx_take(f, at->dv_mode))
			continue;
		taken++;
		deletes = deletes || f->content != FLOE_CONTENT_DATA;
	}
	if (!taken)
		return FLOE_OK; /* e.g. only deletes of keys the table did not hold */
	if (t->split_fence) {
		ck->st = t->splits;
		ck->pipeline_id = p->pipeline_id;
		ck->commit = &c->positions[t->src];
		if ((rc = floe_table_refresh(t->commit_t, err)))
			return rc;
	}
	if ((rc = floe_op_new(out, t->commit_t, deletes ? FLOE_OP_ROW_DELTA : FLOE_OP_APPEND, NULL,
			      err)))
		return rc;
	floe_snapshot_op *ap = *out;
	rc = add_checkpoint(p, t, c, ti, ap, at->dv_mode, err);
	rc = rc ? rc : floe_op_set_summary(ap, "floe.atomic-commit", "true", err);
	if (t->split_fence) {
		rc = rc ? rc : floe_op_set_summary(ap, "floe.kafka.group-id", t->splits->group, err);
		floe_op_set_check(ap, stream_split_check, ck);
	} else {
		rc = rc ? rc : floe_op_fence_pipeline(ap, p->pipeline_id, t->fence_snap, err);
		if (at->dv_mode)
			floe_op_set_check(ap, idx_check_cb, &at->ic);
	}
	if (!rc && at->dv_mode && stream_index_persist_wanted(t, c->complete)) {
		floe_error pe;
		floe_error_clear(&pe);
		if (stream_index_persist_write(p, t, ap, c->files[ti], c->n_files[ti], c->id,
					       at->kpath, sizeof(at->kpath), &pe))
			FLOE_WARN("table %s: checkpoint %lld: the key index is not persisted: %s",
				  t->ident, (long long)c->id, pe.msg);
	}
	if (p->sink == &stream_sink_task_writers)
		floe_op_verify_added(ap);
	if (rc)
		floe_error_prefix(err, rc, "table %s: ", t->ident);
	return rc;
}

/* An index-mode table of the checkpoint after its part of the transaction
 * committed (or had nothing to commit): as commit_table's. */
static void atomic_index_done(rt_table *t, ckpt_item *c, size_t ti, atomic_tbl *at, int64_t snap)
{
	if (at->dv_mode)
		stream_index_persist_after(t, at->kpath, snap >= 0, false);
	idx_discard(t, c->files[ti], c->n_files[ti], at->dv_mode);
	if (at->dv_mode) {
		floe_delta_index_forget(t->index);
		if (snap >= 0) {
			t->idx_expect = snap;
			t->idx_dv_commits++;
		}
	} else {
		t->idx_stale = true;
		t->idx_fallbacks++;
	}
}

static int commit_atomic(floe_pipeline *p, ckpt_item *c, bool *conflict, floe_error *err)
{
	size_t n = 0, nt = p->n_tables, n_ops = 0;
	floe_snapshot_op **ops = floe_calloc(nt ? nt : 1, sizeof(*ops));
	size_t *which = floe_calloc(nt ? nt : 1, sizeof(*which));
	size_t *op_ti = floe_calloc(nt ? nt : 1, sizeof(*op_ti));
	int64_t *snaps = floe_calloc(nt ? nt : 1, sizeof(*snaps));
	stream_split_check_ctx *cks = floe_calloc(nt ? nt : 1, sizeof(*cks));
	atomic_tbl *ats = floe_calloc(nt ? nt : 1, sizeof(*ats));
	size_t locked = 0;
	int64_t t0 = now_ms();
	int rc = FLOE_OK;
	if (!ops || !which || !op_ti || !snaps || !cks || !ats) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t ti = 0; ti < nt; ti++) {
		stream_offsets_init(&cks[ti].seen);
		if (c->n_files[ti])
			which[n++] = ti;
	}
	for (size_t k = 0; k < n && !rc; k++) {
		size_t ti = which[k];
		rt_table *t = &p->tables[ti];
		if (t->split_fence)
			floe_mutex_lock(&t->splits->commit_mu);
		locked = k + 1;
		if ((rc = renew_credentials(p, t, err)) || !t->index_mode)
			continue;
		/* index mode: DVs only while the head is the index's snapshot */
		if ((rc = floe_table_refresh(t->commit_t, err))) {
			floe_error_prefix(err, rc, "table %s: ", t->ident);
			break;
		}
		const floe_snapshot *h = floe_metadata_branch_head(floe_table_metadata(t->commit_t), NULL);
		int64_t head = h ? h->snapshot_id : FLOE_NO_SNAPSHOT;
		ats[ti].dv_mode = !t->idx_stale && t->index && head == t->idx_expect;
		ats[ti].ic.expect = t->idx_expect;
		if (!ats[ti].dv_mode && t->index) {
			if ((rc = idx_fallback(t, c, ti, err)))
				floe_error_prefix(err, rc, "table %s: ", t->ident);
			ats[ti].fallen = true;
		}
	}
again:
	n_ops = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		size_t ti = which[k];
		floe_snapshot_op *op = NULL;
		rc = atomic_op(p, c, ti, &ats[ti], &cks[ti], &op, err);
		ats[ti].in_op = op != NULL;
		if (op) {
			op_ti[n_ops] = ti;
			ops[n_ops++] = op;
		}
	}
	if (!rc && n_ops)
		rc = floe_op_commit_all(ops, n_ops, snaps, err);
	if (rc && rc != FLOE_ECOMMITUNKNOWN) {
		/* an index another commit made stale: that table's equality deletes */
		bool retry = false;
		for (size_t m = 0; m < n_ops; m++) {
			size_t ti = op_ti[m];
			atomic_tbl *at = &ats[ti];
			if (!at->dv_mode || !at->ic.failed)
				continue;
			rt_table *t = &p->tables[ti];
			FLOE_INFO("table %s: checkpoint %lld: %s; committing its equality deletes "
				  "instead of the index's deletion vectors",
				  t->ident, (long long)c->id,
				  err ? err->msg : "a concurrent commit");
			at->dv_mode = false;
			at->ic.failed = false;
			retry = true;
		}
		if (retry) {
			floe_error_clear(err);
			rc = FLOE_OK;
			for (size_t m = 0; m < n_ops; m++) {
				size_t ti = op_ti[m];
				floe_op_free(ops[m]);
				ops[m] = NULL;
				/* the key index file its op named (whose snapshot id that op
				 * had): every table's op is built again, with a new one */
				stream_index_persist_after(&p->tables[ti], ats[ti].kpath, false,
							   true);
				ats[ti].kpath[0] = 0;
				stream_split_check_reset(&cks[ti]);
				stream_offsets_init(&cks[ti].seen);
			}
			for (size_t m = 0; m < n_ops && !rc; m++) {
				size_t ti = op_ti[m];
				rt_table *t = &p->tables[ti];
				if (t->index_mode && t->index && !ats[ti].dv_mode && !ats[ti].fallen &&
				    (rc = idx_fallback(t, c, ti, err)) == FLOE_OK)
					ats[ti].fallen = true;
			}
			if (!rc)
				goto again;
		}
	}
	if (rc) {
		for (size_t m = 0; m < n_ops; m++)
			if (p->tables[op_ti[m]].split_fence && cks[op_ti[m]].conflict)
				*conflict = true;
		goto done;
	}
	int64_t dt = now_ms() - t0;
	for (size_t k = 0; k < n; k++) {
		size_t ti = which[k];
		rt_table *t = &p->tables[ti];
		int64_t snap = -1;
		for (size_t m = 0; m < n_ops; m++)
			if (op_ti[m] == ti)
				snap = snaps[m];
		if (t->index_mode && t->index)
			atomic_index_done(t, c, ti, &ats[ti], snap);
		if (!ats[ti].in_op)
			continue;
		int64_t records = 0, bytes = 0, n_data = 0, n_pos = 0, n_eq = 0;
		size_t n_files = 0;
		if (snap >= 0)
			t->fence_snap = snap;
		if (t->split_fence && stream_split_check_done(&cks[ti], snap)) {
			rc = floe_error_oom(err);
			goto done;
		}
		for (size_t i = 0; i < c->n_files[ti]; i++) {
			const floe_data_file *f = &c->files[ti][i];
			if (t->index_mode && !idx_take(f, ats[ti].dv_mode))
				continue;
			n_files++;
			if (f->content == FLOE_CONTENT_EQUALITY_DELETES)
				n_eq++;
			else if (f->content != FLOE_CONTENT_DATA)
				n_pos++;
			if (f->content != FLOE_CONTENT_DATA)
				continue;
			n_data++;
			records += f->record_count;
			bytes += f->file_size_in_bytes;
			floe_metric_observe(t->m_hist, f->file_size_in_bytes);
		}
		atomic_store(&t->last_commit_ms, floe_now_ms());
		floe_metric_set(t->m_commit_ms, dt);
		floe_metric_set(t->m_flush_ms, c->flush_ms);
		floe_metric_add(t->m_files, n_data);
		floe_metric_add(t->m_records, records);
		floe_metric_add(t->m_bytes, bytes);
		floe_metric_add(t->m_del_files, n_pos + n_eq);
		floe_metric_add(t->m_out, records);
		atomic_fetch_add(&p->records_out, records);
		atomic_fetch_add(&p->files_committed, (int64_t)n_files);
		if (t->maint) {
			floe_maint_commit mc = {n_data, bytes, n_pos, n_eq};
			floe_maint_runner_note_commit(t->maint, &mc);
		}
		FLOE_INFO("table %s: checkpoint %lld committed as snapshot %lld in one transaction "
			  "with %zu tables (%zu files, %lld records, %lld ms)",
			  t->ident, (long long)c->id, (long long)snap, n_ops, n_files,
			  (long long)records, (long long)dt);
	}
done:
	for (size_t k = 0; k < locked; k++)
		if (p->tables[which[k]].split_fence)
			floe_mutex_unlock(&p->tables[which[k]].splits->commit_mu);
	for (size_t m = 0; ops && m < n_ops; m++)
		floe_op_free(ops[m]);
	for (size_t ti = 0; cks && ti < nt; ti++)
		stream_split_check_reset(&cks[ti]);
	floe_free(ops);
	floe_free(which);
	floe_free(op_ti);
	floe_free(snaps);
	floe_free(cks);
	floe_free(ats);
	if (rc)
		floe_error_prefix(err, rc, "checkpoint %lld: ", (long long)c->id);
	return rc;
}

static void *committer_main(void *arg)
{
	floe_pipeline *p = arg;
	floe_error err;
	floe_error_clear(&err);
	floe_mutex_lock(&p->lock);
	for (;;) {
		while (!p->pending && !p->committer_exit && !atomic_load(&p->cancel))
			floe_cond_wait(&p->commit_cv, &p->lock);
		if (atomic_load(&p->cancel) || (!p->pending && p->committer_exit))
			break;
		ckpt_item *c = p->pending;
		floe_mutex_unlock(&p->lock);
		int rc = FLOE_OK;
		bool conflict = false;
		if (p->cfg->atomic_commit)
			rc = commit_atomic(p, c, &conflict, &err);
		for (size_t i = 0; i < p->n_tables && !rc && !p->cfg->atomic_commit; i++)
			rc = commit_table(p, &p->tables[i], c, i, &conflict, &err);
		if (rc && conflict) {
			/* another process committed a partition of ours: nothing of this
			 * checkpoint (or read after it) may commit; the coordinator
			 * rewinds to the tables' offsets */
			FLOE_WARN("%s", err.msg);
			floe_mutex_lock(&p->lock);
			p->rewind = true;
			floe_mutex_unlock(&p->lock);
			rc = FLOE_OK;
			floe_error_clear(&err);
		} else if (!rc) {
			/* this checkpoint's files are committed: the writer lease need
			 * only cover what was written after they were closed */
			for (size_t i = 0; i < p->n_tables; i++)
				floe_table__lease_advance(p->tables[i].commit_t, c->sealed_ms);
			for (size_t i = 0; i < p->n_sources; i++)
				if (p->sources[i].src->ops->ack)
					p->sources[i].src->ops->ack(p->sources[i].src, &c->positions[i]);
			atomic_fetch_add(&p->checkpoints, 1);
			atomic_store(&p->last_ckpt_id, c->id);
			floe_metric_add(p->m_ckpts, 1);
			floe_metric_set(p->m_ckpt_id, c->id);
		}
		floe_mutex_lock(&p->lock);
		p->pending = NULL;
		ckpt_free(c, p->n_tables, p->n_sources);
		if (rc)
			stream_fail_locked(p, &err);
		floe_cond_broadcast(&p->commit_cv);
		floe_cond_broadcast(&p->hub_cv);
	}
	floe_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- the coordinator --------------------------------------------------------------------- */

/* Take a checkpoint: drain, close files, hand to the committer. */
static int checkpoint(floe_pipeline *p, floe_error *err)
{
	ckpt_item *c = floe_calloc(1, sizeof(*c));
	int rc = FLOE_OK;
	int64_t t0;
	if (!c)
		return floe_error_oom(err);
	c->files = floe_calloc(p->n_tables ? p->n_tables : 1, sizeof(floe_data_file *));
	c->n_files = floe_calloc(p->n_tables ? p->n_tables : 1, sizeof(size_t));
	c->offsets = floe_calloc(p->n_tables ? p->n_tables : 1, sizeof(char *));
	c->moved = floe_calloc(p->n_tables ? p->n_tables : 1, sizeof(bool));
	c->positions = floe_calloc(p->n_sources ? p->n_sources : 1, sizeof(stream_offsets));
	c->arenas = floe_calloc((size_t)p->n_tasks, sizeof(floe_arena *));
	if (!c->files || !c->n_files || !c->offsets || !c->moved || !c->positions || !c->arenas) {
		ckpt_free(c, p->n_tables, p->n_sources);
		return floe_error_oom(err);
	}
	for (size_t i = 0; i < p->n_sources; i++)
		stream_offsets_init(&c->positions[i]);
	/* the barrier: every admitted block is in a writer */
	floe_mutex_lock(&p->lock);
	while ((p->units > 0 || p->raw_len > 0) && !atomic_load(&p->cancel))
		floe_cond_wait(&p->hub_cv, &p->lock);
	floe_mutex_unlock(&p->lock);
	if (atomic_load(&p->cancel)) {
		ckpt_free(c, p->n_tables, p->n_sources);
		return FLOE_ECANCELED;
	}
	if (atomic_load(&p->evolve_req)) {
		/* a record of this checkpoint needs a schema update first
		 * (stream_evolve.c): nothing of it commits */
		ckpt_free(c, p->n_tables, p->n_sources);
		return CKPT_EVOLVE;
	}
	c->complete = p->n_sources > 0;
	for (size_t i = 0; i < p->n_sources; i++)
		c->complete = c->complete && p->sources[i].eof;
	for (size_t i = 0; i < p->n_sources && !rc; i++)
		rc = p->sources[i].src->ops->position(p->sources[i].src, &c->positions[i], err);
	for (size_t i = 0; i < p->n_tables && !rc; i++) {
		floe_buf b;
		floe_buf_init(&b, (size_t)64 << 20);
		rc = stream_offsets_write_json(&c->positions[p->tables[i].src], &b);
		/* source parameters are recorded with their '@' */
		if (!rc && !(c->offsets[i] = floe_buf_detach(&b, NULL)))
			rc = FLOE_ENOMEM;
		floe_buf_reset(&b);
		if (rc)
			rc = floe_error_oom(err);
	}
	if (rc) {
		ckpt_free(c, p->n_tables, p->n_sources);
		return rc;
	}
	/* close the files */
	t0 = now_ms();
	floe_mutex_lock(&p->lock);
	for (int i = 0; i < p->n_tasks; i++) {
		p->tasks[i].ckpt_req = true;
		p->tasks[i].ckpt_done = false;
		floe_cond_signal(&p->tasks[i].cv);
	}
	for (;;) {
		bool all = true;
		for (int i = 0; i < p->n_tasks; i++)
			all = all && p->tasks[i].ckpt_done;
		if (all || atomic_load(&p->cancel))
			break;
		floe_cond_wait(&p->hub_cv, &p->lock);
	}
	floe_mutex_unlock(&p->lock);
	if (atomic_load(&p->cancel)) {
		ckpt_free(c, p->n_tables, p->n_sources);
		return FLOE_ECANCELED;
	}
	c->flush_ms = now_ms() - t0;
	c->sealed_ms = floe_now_ms();
	/* the tasks are idle now: collect their files */
	for (int k = 0; k < p->n_tasks; k++) {
		rt_task *t = &p->tasks[k];
		c->arenas[c->n_arenas++] = t->ckpt_arena;
		t->ckpt_arena = NULL;
		for (size_t i = 0; i < p->n_tables; i++) {
			size_t n = t->ckpt_n[i];
			if (!n)
				continue;
			floe_data_file *f = floe_realloc(c->files[i], (c->n_files[i] + n) * sizeof(*f));
			if (!f) {
				ckpt_free(c, p->n_tables, p->n_sources);
				return floe_error_oom(err);
			}
			memcpy(f + c->n_files[i], t->ckpt_files[i], n * sizeof(*f));
			c->files[i] = f;
			c->n_files[i] += n;
			t->ckpt_n[i] = 0;
		}
	}
	/* index-mode tables: the index's DVs / position deletes of this checkpoint */
	for (size_t i = 0; i < p->n_tables; i++) {
		rt_table *tb = &p->tables[i];
		if (!tb->index)
			continue;
		floe_data_file *rep = NULL;
		size_t n_rep = 0;
		floe_arena *ia = floe_arena_new(65536);
		if (!ia) {
			ckpt_free(c, p->n_tables, p->n_sources);
			return floe_error_oom(err);
		}
		rc = floe_delta_index_complete(tb->index, &c->files[i], &c->n_files[i], &rep, &n_rep,
					       ia, err);
		for (size_t k = 0; k < n_rep && !rc; k++) {
			floe_data_file *f = floe_realloc(c->files[i], (c->n_files[i] + 1) * sizeof(*f));
			if (!f) {
				rc = floe_error_oom(err);
				break;
			}
			f[c->n_files[i]++] = rep[k];
			c->files[i] = f;
		}
		floe_free(rep);
		if (!rc && FLOE_ARRAY_RESERVE(c->idx_arenas, c->cap_idx_arenas, c->n_idx_arenas + 1))
			rc = floe_error_oom(err);
		if (rc) {
			floe_arena_free(ia);
			ckpt_free(c, p->n_tables, p->n_sources);
			return floe_error_prefix(err, rc, "table %s: ", tb->ident);
		}
		c->idx_arenas[c->n_idx_arenas++] = ia;
	}
	if ((rc = range_reassign(p, err))) {
		ckpt_free(c, p->n_tables, p->n_sources);
		return rc;
	}
	/* dead letters of this checkpoint are on disk before its commit */
	floe_buf none;
	floe_buf_init(&none, 0);
	if ((rc = stream_dlq_flush(p, &none, true, err))) {
		ckpt_free(c, p->n_tables, p->n_sources);
		return rc;
	}
	c->id = p->next_ckpt++;
	size_t total = 0;
	for (size_t i = 0; i < p->n_tables; i++)
		total += c->n_files[i];
	FLOE_DEBUG("checkpoint %lld: %zu files, tasks closed them in %lld ms", (long long)c->id, total,
		   (long long)c->flush_ms);
	/* hand over (one commit in flight: wait for the previous one) */
	floe_mutex_lock(&p->lock);
	while (p->pending && !atomic_load(&p->cancel))
		floe_cond_wait(&p->commit_cv, &p->lock);
	if (atomic_load(&p->cancel)) {
		floe_mutex_unlock(&p->lock);
		ckpt_free(c, p->n_tables, p->n_sources);
		return FLOE_ECANCELED;
	}
	/* a message source's offsets that moved without rows (a closed Kinesis
	 * shard's SHARD_END, records that were all tombstones, dead letters or
	 * filtered out) are committed on their own: a restart must not read them
	 * again (the previous commit is done: committed_offs is settled) */
	for (size_t i = 0; i < p->n_tables && !p->rewind; i++) {
		rt_table *tb = &p->tables[i];
		int st = stream_source_kind(p->sources[tb->src].cfg);
		if (c->n_files[i] || (st != STREAM_SRC_KAFKA && st != STREAM_SRC_KINESIS))
			continue;
		if (offsets_moved(tb, &c->positions[tb->src])) {
			c->moved[i] = true;
			total++;
		}
	}
	if (total == 0 || p->rewind) {
		/* empty checkpoint: nothing to commit */
		floe_mutex_unlock(&p->lock);
		ckpt_free(c, p->n_tables, p->n_sources);
		return FLOE_OK;
	}
	p->pending = c;
	floe_cond_broadcast(&p->commit_cv);
	/* index mode: the next checkpoint's lookups need this one's commit (and,
	 * when another commit landed, an index rebuilt after it) */
	bool any_index = false;
	for (size_t i = 0; i < p->n_tables; i++)
		any_index = any_index || p->tables[i].index_mode;
	if (any_index)
		while (p->pending && !atomic_load(&p->cancel) && !p->failed)
			floe_cond_wait(&p->commit_cv, &p->lock);
	floe_mutex_unlock(&p->lock);
	for (size_t i = 0; any_index && i < p->n_tables && !rc; i++) {
		rt_table *tb = &p->tables[i];
		if (tb->index_mode && tb->idx_stale &&
		    !atomic_load(&p->cancel))
			rc = stream_index_build(p, tb, err);
	}
	return rc;
}

static void progress(floe_pipeline *p)
{
	floe_pipeline_stats st;
	if (!p->opts.progress)
		return;
	floe_pipeline_get_stats(p, &st);
	p->opts.progress(&st, p->opts.progress_payload);
}

static int start_threads(floe_pipeline *p, floe_error *err)
{
	char name[16];
	for (int i = 0; i < p->n_tasks; i++) {
		snprintf(name, sizeof(name), "floe-task-%d", i % 1000);
		if (floe_thread_start(&p->tasks[i].th, name, stream_task_main, &p->tasks[i]))
			return floe_error_oomf(err, "cannot start a writer thread");
	}
	if (floe_thread_start(&p->committer, "floe-commit", committer_main, p))
		return floe_error_oomf(err, "cannot start the committer thread");
	p->threads_started = true;
	return FLOE_OK;
}

static void stop_threads(floe_pipeline *p)
{
	floe_mutex_lock(&p->lock);
	p->shutdown = true;
	p->committer_exit = true;
	for (int i = 0; i < p->n_tasks; i++)
		floe_cond_broadcast(&p->tasks[i].cv);
	floe_cond_broadcast(&p->commit_cv);
	floe_mutex_unlock(&p->lock);
	floe_thread_join(&p->committer);
	for (int i = 0; i < p->n_tasks; i++)
		floe_thread_join(&p->tasks[i].th);
	p->threads_started = false;
}

/* Admit a block (waits while the tasks are full). */
static int admit(floe_pipeline *p, stream_block *b, size_t src)
{
	rt_source *rs = &p->sources[src];
	/* a split this run had no position for (Kafka: a scan.startup.mode
	 * start) starts at its first block (a routed table created now starts
	 * there: stream_route.c) */
	if (p->n_routes && b->split_name && b->split_name[0] != STREAM_PARAM_PREFIX &&
	    !stream_offsets_has(&rs->run_start, b->split_name) &&
	    stream_offsets_set(&rs->run_start, b->split_name, b->start)) {
		stream_block_reset(b);
		floe_error e;
		floe_error_set(&e, FLOE_ENOMEM, "out of memory");
		stream_fail(p, &e);
		return FLOE_ENOMEM;
	}
	floe_mutex_lock(&p->lock);
	while (p->units >= p->max_units && !atomic_load(&p->cancel))
		floe_cond_wait(&p->hub_cv, &p->lock);
	if (atomic_load(&p->cancel)) {
		floe_mutex_unlock(&p->lock);
		stream_block_reset(b);
		return FLOE_ECANCELED;
	}
	raw_item *it = &p->raw[(p->raw_head + p->raw_len) % p->raw_cap];
	it->b = *b;
	it->src = src;
	it->seq = p->sources[src].next_seq++;
	memset(b, 0, sizeof(*b));
	p->raw_len++;
	p->units++;
	/* wake one idle task (busy ones look at the queue before they sleep),
	 * taking turns: always waking the first idle one left the others idle
	 * when blocks come slower than one task decodes them (a generator at
	 * its rate wrote every file from task 0) */
	for (int k = 0; k < p->n_tasks; k++) {
		int i = (p->wake_next + k) % p->n_tasks;
		if (p->tasks[i].waiting) {
			p->tasks[i].waiting = false;
			floe_cond_signal(&p->tasks[i].cv);
			p->wake_next = (i + 1) % p->n_tasks;
			break;
		}
	}
	floe_mutex_unlock(&p->lock);
	return FLOE_OK;
}

/* Start the maintenance runner of every table with maintenance.mode: auto. */
static int start_maintenance(floe_pipeline *p, floe_error *err)
{
	for (size_t i = 0; i < p->n_tables; i++) {
		rt_table *t = &p->tables[i];
		const stream_maint_cfg *m = &t->cfg->maint;
		if (!m->mode || t->maint)
			continue;
		floe_maintain_opts o = FLOE_MAINTAIN_OPTS_INIT;
		floe_maint_schedule sc = FLOE_MAINT_SCHEDULE_INIT;
		o.steps = m->step_bits;
		o.compact.target_file_size = m->target_file_size;
		o.compact.min_input_files = (int)m->min_input_files;
		o.compact.max_bytes = m->max_rewrite_bytes;
		o.compact.max_commits = (int)m->max_commits;
		o.compact.sort = m->sort;
		o.compact.branch = t->cfg->branch; /* the branch this pipeline writes */
		o.expire.retain_last = (int)m->retain_last;
		o.lock_uri = m->lock_uri;
		sc.commit_count = m->commit_count;
		sc.data_file_count = m->data_file_count;
		sc.data_file_size = m->data_file_size;
		sc.pos_delete_file_count = m->pos_delete_file_count;
		sc.eq_delete_file_count = m->eq_delete_file_count;
		sc.interval_ms = m->interval_ms;
		sc.rate_limit_ms = m->rate_limit_ms;
		sc.lock_check_delay_ms = m->lock_check_delay_ms;
		sc.on_finish = m->on_finish;
		sc.expire_age_ms = m->max_snapshot_age_ms;
		sc.orphan_age_ms = m->orphan_min_age_ms;
		sc.orphan_interval_ms = m->orphan_interval_ms;
		floe_maint_runner *r;
		int rc = floe_maint_runner_start(&r, p->cat, t->ns, t->name, &o, &sc, err);
		if (!rc) {
			floe_mutex_lock(&p->lock);
			t->maint = r;
			t->maint_lock = &p->lock;
			floe_mutex_unlock(&p->lock);
		}
		if (rc)
			return floe_error_prefix(err, rc, "table %s: maintenance: ", t->ident);
		FLOE_INFO("table %s: embedded maintenance on (every %lld commits, rate limit %lld ms)",
			  t->ident, (long long)sc.commit_count, (long long)sc.rate_limit_ms);
	}
	return FLOE_OK;
}

/*
 * Stop the runners. finish: the input ended (not stopped, cancelled or
 * failed): a runner whose table got commits since its last run runs once
 * more and is waited for.
 */
static void stop_maintenance(floe_pipeline *p, bool finish)
{
	for (size_t i = 0; p->tables && i < p->n_tables; i++) {
		rt_table *t = &p->tables[i];
		if (!t->maint)
			continue;
		floe_maint_runner_stats st;
		floe_maint_runner_get_stats(t->maint, &st);
		if (finish && st.commits_pending && t->cfg->maint.on_finish)
			FLOE_INFO("table %s: final maintenance run", t->ident);
		floe_maint_runner *r = t->maint;
		floe_maint_runner_stop(r, finish, &st);
		floe_mutex_lock(&p->lock);
		t->maint_last = st;
		t->maint = NULL;
		floe_mutex_unlock(&p->lock);
	}
}

int floe_pipeline_run(floe_pipeline *p, floe_error *err)
{
	int rc = FLOE_OK;
	int64_t interval = p->cfg->checkpoint_interval_ms, pause = p->cfg->min_pause_ms;
	int64_t last_start = now_ms(), last_end = last_start, last_progress = 0;
	floe_error local;
	floe_error_clear(&local);
	if (p->threads_started)
		return floe_error_set(err, FLOE_EINVAL, "the pipeline is already running");
	for (size_t i = 0; i < p->n_tables && !rc; i++)
		if (p->tables[i].index_mode)
			rc = stream_index_build(p, &p->tables[i], &local);
	if (rc || (rc = start_maintenance(p, &local)) || (rc = start_threads(p, &local))) {
		stream_fail(p, &local);
		goto done;
	}
	/* /readyz: ready while the pipeline runs (tables open, tasks started) */
	floe_metrics_http_set_ready(p->http, true);
	for (;;) {
		int64_t now = now_ms();
		bool all_eof = true;
		for (size_t i = 0; i < p->n_sources; i++)
			all_eof = all_eof && p->sources[i].eof;
		bool stop = atomic_load(&p->stop_req) || all_eof;
		if (atomic_load(&p->cancel) || atomic_load(&p->evolve_req))
			break;
		floe_mutex_lock(&p->lock);
		bool rw = p->rewind;
		floe_mutex_unlock(&p->lock);
		if (rw) {
			if ((rc = rewind_pipeline(p, &local))) {
				if (rc != FLOE_ECANCELED)
					stream_fail(p, &local);
				break;
			}
			continue;
		}
		/* a delta writer's key map past its share of memory.budget asks for
		 * the checkpoint now (min-pause still holds) */
		bool asap = atomic_load(&p->ckpt_asap) && now - last_end >= pause;
		if (stop || asap || (now - last_start >= interval && now - last_end >= pause)) {
			last_start = now;
			atomic_store(&p->ckpt_asap, false);
			rc = checkpoint(p, &local);
			last_end = now_ms();
			if (rc == CKPT_EVOLVE) {
				rc = FLOE_OK;
				break;
			}
			if (rc) {
				if (rc != FLOE_ECANCELED)
					stream_fail(p, &local);
				break;
			}
			if (stop)
				break;
		}
		if (p->opts.progress && now - last_progress >= p->opts.progress_interval_ms) {
			last_progress = now;
			progress(p);
		}
		/* read: one block from each source that has data */
		bool any = false;
		for (size_t i = 0; i < p->n_sources; i++) {
			rt_source *s = &p->sources[i];
			stream_block b;
			bool got = false, eof = false;
			if (s->eof)
				continue;
			memset(&b, 0, sizeof(b));
			if ((rc = s->src->ops->next(s->src, &b, &got, &eof, &local))) {
				/* sources that name themselves (iceberg, hybrid) are not named twice */
				char own[160];
				snprintf(own, sizeof(own), "source '%s': ", s->cfg->name);
				if (strncmp(local.msg, own, strlen(own)))
					floe_error_prefix(&local, rc, "%s", own);
				stream_fail(p, &local);
				break;
			}
			s->eof = eof;
			if (got) {
				any = true;
				if ((rc = admit(p, &b, i)))
					break;
			}
		}
		if (rc)
			break;
		if (!any) {
			bool eof_now = true;
			for (size_t i = 0; i < p->n_sources; i++)
				eof_now = eof_now && p->sources[i].eof;
			if (eof_now)
				continue; /* the final checkpoint comes next */
			int64_t due = interval - (now_ms() - last_start);
			int64_t wait = due < 100 ? (due < 1 ? 1 : due) : 100;
			if (atomic_load(&p->stop_req))
				wait = 1;
			for (size_t i = 0; i < p->n_sources; i++)
				if (!p->sources[i].eof) {
					p->sources[i].src->ops->wait(p->sources[i].src, wait);
					break;
				}
		}
	}
done:
	floe_metrics_http_set_ready(p->http, false);
	if (p->threads_started) {
		/* let the last commit finish (unless cancelled), then stop */
		floe_mutex_lock(&p->lock);
		while (p->pending && !atomic_load(&p->cancel))
			floe_cond_wait(&p->commit_cv, &p->lock);
		floe_mutex_unlock(&p->lock);
		stop_threads(p);
	}
	floe_mutex_lock(&p->lock);
	bool failed = p->failed;
	floe_mutex_unlock(&p->lock);
	if (!failed && !atomic_load(&p->cancel) && atomic_load(&p->evolve_req)) {
		/* the committer is idle: the schema first, then (next run) the data */
		floe_error_clear(&local);
		if (stream_evolve_commit(p, &local)) {
			stream_fail(p, &local);
		}
	}
	floe_mutex_lock(&p->lock);
	failed = p->failed;
	floe_error first = p->first_err;
	floe_mutex_unlock(&p->lock);
	stop_maintenance(p, !failed && !atomic_load(&p->cancel) && !atomic_load(&p->stop_req) &&
				 !p->restart);
	progress(p);
	for (size_t i = 0; i < p->n_tables; i++) {
		const rt_table *t = &p->tables[i];
		if (t->delta && t->m_files)
			FLOE_INFO("table %s: this run committed %lld data files and %lld delete files "
				  "(%lld deletes)",
				  t->ident, (long long)floe_metric_value(t->m_files),
				  (long long)floe_metric_value(t->m_del_files),
				  (long long)floe_metric_value(t->m_del_records));
	}
	if (failed) {
		if (err)
			*err = first;
		return first.code ? first.code : FLOE_EIO;
	}
	if (atomic_load(&p->cancel))
		return floe_error_set(err, FLOE_ECANCELED, "pipeline cancelled");
	return FLOE_OK;
}

void floe_pipeline_stop(floe_pipeline *p)
{
	if (p)
		atomic_store(&p->stop_req, true);
}

void floe_pipeline_cancel(floe_pipeline *p)
{
	if (p)
		atomic_store(&p->cancel, true);
}

void floe_pipeline_get_stats(const floe_pipeline *p, floe_pipeline_stats *out)
{
	floe_pipeline *q = (floe_pipeline *)p;
	memset(out, 0, sizeof(*out));
	out->records_in = atomic_load(&q->records_in);
	out->records_written = atomic_load(&q->rows_written);
	out->records_committed = atomic_load(&q->records_out);
	out->records_dead = atomic_load(&q->dead);
	out->bytes_in = atomic_load(&q->bytes_in);
	out->checkpoints = atomic_load(&q->checkpoints);
	out->last_checkpoint_id = atomic_load(&q->last_ckpt_id);
	out->files_committed = atomic_load(&q->files_committed);
	out->elapsed_ms = (floe_monotonic_ns() - q->start_ns) / 1000000;
	out->metrics_port = q->http_port;
	out->records_filtered = atomic_load(&q->filtered);
	out->records_skipped = atomic_load(&q->skipped);
	out->resumed_checkpoint_id = q->resumed_ckpt;
	out->pipeline_id = q->pipeline_id;
	out->dead_letter_path = out->records_dead ? q->dlq_path : NULL;
	for (size_t i = 0; i < q->n_tables; i++) {
		floe_maint_runner_stats st = maint_stats(&q->tables[i]);
		out->maintenance_runs += st.runs;
		out->maintenance_files_rewritten += st.data_files_rewritten;
		out->maintenance_running = out->maintenance_running || st.running;
	}
}

void floe_pipeline_free(floe_pipeline *p)
{
	if (!p)
		return;
	if (p->threads_started) {
		atomic_store(&p->cancel, true);
		stop_threads(p);
	}
	stop_maintenance(p, false);
	floe_metrics_http_stop(p->http);
	bool clean = !atomic_load(&p->cancel) && !p->failed;
	for (int i = 0; p->tasks && i < p->n_tasks; i++)
		stream_task_reset(&p->tasks[i], !clean);
	floe_free(p->tasks);
	for (size_t i = 0; p->raw && i < p->raw_len; i++)
		stream_block_reset(&p->raw[(p->raw_head + i) % p->raw_cap].b);
	floe_free(p->raw);
	ckpt_free(p->pending, p->n_tables, p->n_sources);
	for (size_t i = 0; p->sources && i < p->n_sources; i++) {
		if (p->sources[i].src)
			p->sources[i].src->ops->free(p->sources[i].src);
		floe_free(p->sources[i].tables);
	}
	for (size_t r = 0; r < p->n_routes; r++) {
		for (size_t k = 0; k < p->routes[r].n_fresh; k++)
			floe_free(p->routes[r].fresh[k]);
		floe_free(p->routes[r].fresh);
	}
	floe_free(p->routes);
	for (size_t k = 0; p->sources && k < p->n_sources; k++)
		stream_offsets_reset(&p->sources[k].run_start);
	floe_free(p->sources);
	for (size_t i = 0; p->tables && i < p->n_tables; i++) {
		rt_table *t = &p->tables[i];
		floe_arrow_schema_release(&t->aschema);
		stream_filter_free(t->filter);
		stream_ow_filter_free(t->ow_filter);
		stream_filter_free(t->pre_filter);
		stream_offsets_reset(&t->skip);
		stream_offsets_reset(&t->route_start);
		stream_split_state_free(t->splits);
		floe_free(t->pplan);
		floe_free(t->rplan);
		stream_range_assign_free(t->range);
		floe_free(t->m_task_rows);
		floe_free(t->pcheck);
		floe_imap_reset(&t->owners);
		floe_buf_reset(&t->evo_recs);
		floe_table_free(t->write_t);
		/* a failed pipeline leaves its lease to expire: a commit of it may
		 * have an unknown outcome */
		if (t->commit_t)
			floe_table__lease_drop(t->commit_t, p->failed);
		floe_table_free(t->commit_t);
		floe_delta_index_free(t->index);
		floe_arena_reset(&t->warena);
		floe_free(t->ns);
		floe_free(t->name);
		floe_free(t->ident);
		stream_offsets_reset(&t->committed);
	}
	floe_free(p->tables);
	floe_parquet_budget_free(p->budget);
	floe_metrics_free(p->metrics);
	if (p->dlq_fd >= 0)
		close(p->dlq_fd);
	floe_free(p->dlq_path);
	floe_free(p->pipeline_id);
	if (p->own_cat)
		floe_catalog_free(p->cat);
	stream_config_free(p->cfg);
	floe_mutex_destroy(&p->dlq_lock);
	floe_mutex_destroy(&p->owner_lock);
	floe_cond_destroy(&p->commit_cv);
	floe_cond_destroy(&p->hub_cv);
	floe_mutex_destroy(&p->lock);
	floe_free(p);
}
