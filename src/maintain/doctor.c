/*
 * doctor.c — floe doctor: measure a table's health from its metadata and
 * storage and judge each measure against the operations guides' thresholds.
 *
 * DESIGN: one pass over the current snapshot's live files (the `files`
 * metadata table: counts, sizes, partitions, delete files), one over the
 * snapshots (velocity, count, the totals their summaries carry, the pipeline
 * commits), the current manifest list, and — unless told not to — one
 * listing of the table location against the set of files any snapshot or
 * metadata file reaches (orphans, the share of stored data the current
 * snapshot still uses). The checks are plain arithmetic over those numbers,
 * so each equals a query a user could run over the same metadata.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/props.h"
#include "maintain/doctor_int.h"
#include "maintain/maintain_int.h"
#include "table/table_impl.h"
#include "util/hmap.h"
#include "util/opts.h"
#include "util/str.h"
#include "util/timeutil.h"

#define MIB (INT64_C(1) << 20)
#define HOUR_MS INT64_C(3600000)
#define SMALL_FILE (32 * MIB)

const int64_t floe_doctor_bin_edges[FLOE_DOCTOR_SIZE_BINS - 1] = {
	1 * MIB, 4 * MIB, 16 * MIB, 32 * MIB, 64 * MIB, 128 * MIB, 256 * MIB, 512 * MIB, 1024 * MIB};

const char *floe_health_name(floe_health h)
{
	return h == FLOE_HEALTH_CRITICAL ? "critical" : h == FLOE_HEALTH_WARN ? "warn" : "ok";
}

/* ---- measuring ------------------------------------------------------------------------ */

typedef struct file_ctx {
	floe_doctor_report *r;
	floe_hmap parts; /* partition key -> index + 1 */
	size_t cap;
	int rc;
} file_ctx;

static int file_cb(const floe_table_file *f, void *payload)
{
	file_ctx *c = payload;
	floe_doctor_report *r = c->r;
	floe_doctor_stats *st = &r->st;
	char key[16];
	floe_buf k;
	uint64_t *slot;
	bool existed;
	int n = snprintf(key, sizeof(key), "%d/", (int)f->spec_id);
	floe_buf_init(&k, 0);
	if (floe_buf_append(&k, key, (size_t)n) || floe_buf_puts(&k, f->partition ? f->partition : "") ||
	    floe_hmap_upsert(&c->parts, k.data, k.len, &slot, &existed)) {
		floe_buf_reset(&k);
		return FLOE_ENOMEM;
	}
	floe_buf_reset(&k);
	if (!existed) {
		if (FLOE_ARRAY_RESERVE(r->parts, c->cap, r->n_parts + 1))
			return FLOE_ENOMEM;
		floe_doctor_part *p = &r->parts[r->n_parts];
		memset(p, 0, sizeof(*p));
		if (!(p->name = floe_arena_strdup(&r->arena, f->partition ? f->partition : "")))
			return FLOE_ENOMEM;
		*slot = ++r->n_parts;
	}
	floe_doctor_part *p = &r->parts[*slot - 1];
	if (f->content == 0) {
		st->data_files++;
		st->data_bytes += f->file_size_in_bytes;
		st->data_records += f->record_count;
		p->data_files++;
		p->data_bytes += f->file_size_in_bytes;
		p->data_records += f->record_count;
		if (f->file_size_in_bytes < SMALL_FILE)
			st->small_files++;
		size_t b = 0;
		while (b < FLOE_DOCTOR_SIZE_BINS - 1 && f->file_size_in_bytes >= floe_doctor_bin_edges[b])
			b++;
		st->size_bins[b]++;
	} else {
		st->delete_bytes += f->file_size_in_bytes;
		p->delete_records += f->record_count;
		if (f->content == 2) {
			st->eq_files++;
			st->eq_records += f->record_count;
			p->eq_files++;
		} else {
			st->pos_files++;
			st->pos_records += f->record_count;
			p->pos_files++;
		}
	}
	return 0;
}

static int cmp_part(const void *a, const void *b)
{
	const floe_doctor_part *x = a, *y = b;
	if (x->data_files != y->data_files)
		return x->data_files > y->data_files ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_point(const void *a, const void *b)
{
	const floe_doctor_point *x = a, *y = b;
	return x->ts_ms < y->ts_ms ? -1 : x->ts_ms > y->ts_ms;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int64_t summary_i64(const floe_snapshot *s, const char *key)
{
	const char *v = floe_snapshot_summary(s, key);
	int64_t out;
	return v && floe_parse_i64(v, strlen(v), &out) ? out : -1;
}

static bool pipeline_snapshot(const floe_snapshot *s)
{
	return floe_snapshot_summary(s, "floe.pipeline-id") || floe_snapshot_summary(s, "flink.job-id");
}

/* Snapshots: the series, velocity over the last day, the pipeline's commits. */
static int measure_snapshots(floe_doctor_report *r, const floe_metadata *m, const floe_doctor_opts *o)
{
	floe_doctor_stats *st = &r->st;
	int64_t *pts = NULL;
	size_t n_pts = 0;
	st->snapshots = (int64_t)m->n_snapshots;
	if (m->n_snapshots == 0)
		return 0;
	if (!(r->points = floe_calloc(m->n_snapshots, sizeof(*r->points))) ||
	    !(pts = floe_calloc(m->n_snapshots, sizeof(*pts))))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < m->n_snapshots; i++) {
		const floe_snapshot *s = &m->snapshots[i];
		floe_doctor_point *p = &r->points[i];
		p->ts_ms = s->timestamp_ms;
		p->data_files = summary_i64(s, "total-data-files");
		p->delete_files = summary_i64(s, "total-delete-files");
		p->bytes = summary_i64(s, "total-files-size");
		p->records = summary_i64(s, "total-records");
		if (pipeline_snapshot(s))
			pts[n_pts++] = s->timestamp_ms;
	}
	r->n_points = m->n_snapshots;
	qsort(r->points, r->n_points, sizeof(*r->points), cmp_point);
	for (size_t i = 0; i < r->n_points; i++)
		r->points[i].snapshots = (int64_t)i + 1;
	int64_t newest = r->points[r->n_points - 1].ts_ms;
	st->last_commit_ms = newest;
	/* velocity: snapshots of the last day before the newest, per hour of the
	 * span they cover (at least an hour) */
	size_t first = r->n_points - 1;
	while (first > 0 && r->points[first - 1].ts_ms >= newest - 24 * HOUR_MS)
		first--;
	int64_t span = newest - r->points[first].ts_ms;
	if (span < HOUR_MS)
		span = HOUR_MS;
	st->snapshots_per_hour = (double)(r->n_points - first) * (double)HOUR_MS / (double)span;
	/* the pipeline's checkpoint interval: as given, else the median gap of
	 * its last 50 commits */
	st->checkpoint_interval_ms = o->checkpoint_interval_ms;
	if (n_pts) {
		qsort(pts, n_pts, sizeof(*pts), cmp_i64);
		st->last_pipeline_commit_ms = pts[n_pts - 1];
		if (st->checkpoint_interval_ms < 0 && n_pts >= 3) {
			size_t from = n_pts > 51 ? n_pts - 51 : 0, ng = n_pts - 1 - from;
			for (size_t i = 0; i < ng; i++)
				pts[i] = pts[from + i + 1] - pts[from + i];
			qsort(pts, ng, sizeof(*pts), cmp_i64);
			st->checkpoint_interval_ms = pts[ng / 2] > 0 ? pts[ng / 2] : 1;
		}
	} else {
		st->last_pipeline_commit_ms = -1;
	}
	floe_free(pts);
	return 0;
}

typedef struct list_ctx {
	floe_doctor_stats *st;
	floe_reach *reach;
	int64_t cutoff;
} list_ctx;

static int list_cb(const floe_file_info *fi, void *payload)
{
	list_ctx *c = payload;
	uint64_t kind = 0;
	const char *base = strrchr(fi->path, '/');
	base = base ? base + 1 : fi->path;
	c->st->storage_files++;
	c->st->storage_bytes += (int64_t)fi->size;
	if (floe_hmap_get_str(&c->reach->files, floe_reach_key(fi->path), &kind)) {
		if (kind == FLOE_REACH_DATA || kind == FLOE_REACH_POS_DELETES ||
		    kind == FLOE_REACH_EQ_DELETES)
			c->st->reachable_data_bytes += (int64_t)fi->size;
		return 0;
	}
	if (!strcmp(base, "version-hint.text") || !strcmp(base, "version-hint.txt"))
		return 0;
	if (!strstr(fi->path, "/metadata/"))
		c->st->orphan_data_bytes += (int64_t)fi->size;
	if (fi->mtime_ms < c->cutoff) {
		c->st->orphan_files++;
		c->st->orphan_bytes += (int64_t)fi->size;
	} else {
		c->st->young_orphan_files++;
		c->st->young_orphan_bytes += (int64_t)fi->size;
	}
	return 0;
}

static int measure_storage(floe_doctor_report *r, floe_table *t, const floe_metadata *m, int64_t now,
			   const floe_doctor_opts *o, floe_error *err)
{
	floe_reach reach;
	int rc = FLOE_OK;
	floe_reach_init(&reach, false, true);
	for (size_t i = 0; i < m->n_snapshots && !rc; i++) {
		const floe_snapshot *s = &m->snapshots[i];
		for (size_t k = 0; k < s->n_v1_manifests && !rc; k++)
			if (floe_reach_add(&reach, s->v1_manifests[k], FLOE_REACH_MANIFEST))
				rc = floe_error_oom(err);
		/* snapshots that share a manifest list (rare) are read once */
		if (!rc && !(s->manifest_list && floe_reach_has(&reach, s->manifest_list)))
			rc = floe_reach_snapshot(&reach, t, s, err);
	}
	if (!rc && floe_reach_metadata(&reach, m))
		rc = floe_error_oom(err);
	if (!rc) {
		list_ctx c = {&r->st, &reach, now - o->orphan_older_than_ms};
		rc = floe_io_list(floe_table_io(t), m->location, list_cb, &c, err);
		if (rc == FLOE_ENOMEM)
			rc = floe_error_oom(err);
		r->st.storage_scanned = rc == 0;
	}
	floe_reach_reset(&reach);
	return floe_error_prefix(err, rc, "storage of '%s': ", m->location);
}

/* ---- pipeline state: which snapshots expiry keeps for a pipeline, and why ---------------- */

typedef struct held_ctx {
	floe_buf list;    /* "id (snapshot S, checkpoint-less, resumable), ..." */
	size_t held, listed, stale;
	const floe_snapshot *current;
	int64_t now, stale_after_ms;
	int rc;
} held_ctx;

#define HELD_LISTED_MAX 8

static int held_cb(const floe_maint_pstate *ps, void *payload)
{
	held_ctx *h = payload;
	if (!ps->held)
		return 0;
	h->held++;
	/* a resumable pipeline quiet for longer than a completed load is kept:
	 * likely gone, yet its snapshot (and every file it reaches) stays */
	bool stale = !ps->complete && ps->s != h->current &&
		     h->now - ps->s->timestamp_ms > h->stale_after_ms;
	h->stale += stale;
	if (h->listed >= HELD_LISTED_MAX)
		return 0;
	h->listed++;
	char until[48] = "";
	if (ps->held_until_ms >= 0) {
		size_t n = floe_format_timestamp_us(until, sizeof(until) - 1, ps->held_until_ms * 1000, 0);
		until[n] = 'Z';
		until[n + 1] = 0;
	}
	int rc = floe_buf_printf(&h->list, "%s%s (snapshot %" PRId64 ", %s%s%s)",
				 h->listed > 1 ? "; " : "", ps->pipeline_id, ps->s->snapshot_id,
				 ps->complete ? "completed load, held until " : "resumable, held until forgotten",
				 ps->complete ? until : "",
				 stale ? ", idle past the completed-load retention" : "");
	return rc ? (h->rc = rc) : 0;
}

/* ---- judging ------------------------------------------------------------------------------ */

static floe_health_check *add_check(floe_doctor_report *r, const char *id, const char *title,
				    const char *unit, double value, double warn_at, double critical_at,
				    bool lower_is_worse)
{
	floe_health_check *c = &r->checks[r->n_checks++];
	c->id = id;
	c->title = title;
	c->unit = unit;
	c->value = value;
	c->warn_at = warn_at;
	c->critical_at = critical_at;
	c->lower_is_worse = lower_is_worse;
	c->applicable = true;
	c->detail = "";
	c->fix = "";
	if (lower_is_worse)
		c->severity = value < critical_at ? FLOE_HEALTH_CRITICAL
			      : value < warn_at   ? FLOE_HEALTH_WARN
						  : FLOE_HEALTH_OK;
	else
		c->severity = value > critical_at ? FLOE_HEALTH_CRITICAL
			      : value > warn_at   ? FLOE_HEALTH_WARN
						  : FLOE_HEALTH_OK;
	return c;
}

static void not_applicable(floe_health_check *c, const char *why)
{
	c->applicable = false;
	c->severity = FLOE_HEALTH_OK;
	c->detail = why;
}

#define DETAIL(c, ...) ((c)->detail = floe_arena_sprintf(&r->arena, __VA_ARGS__))
#define FIX(c, ...)                                                                               \
	do {                                                                                      \
		if ((c)->severity != FLOE_HEALTH_OK)                                              \
			(c)->fix = floe_arena_sprintf(&r->arena, __VA_ARGS__);                    \
	} while (0)

static int judge(floe_doctor_report *r, const floe_metadata *m, int64_t now)
{
	const floe_doctor_stats *st = &r->st;
	const char *tn = r->table;
	floe_health_check *c;
	double mib = (double)MIB;

	/* small files: the guides' first query */
	c = add_check(r, "small-files", "data files under 32 MB", "files", (double)st->small_files,
		      100, 1000, false);
	DETAIL(c, "%" PRId64 " of %" PRId64 " data files", st->small_files, st->data_files);
	FIX(c, "compact: floe maintain %s --steps compact (or maintenance: in the pipeline); "
	       "longer checkpoints write fewer, larger files", tn);

	/* average size against what this much data could reach */
	double parts = r->n_parts ? (double)r->n_parts : 1;
	double reachable = fmin((double)st->target_file_size, (double)st->data_bytes / parts);
	double avg = st->data_files ? (double)st->data_bytes / (double)st->data_files : 0;
	c = add_check(r, "average-file-size",
		      "average data file size, % of min(write.target-file-size-bytes, data per partition)",
		      "%", reachable > 0 ? 100.0 * avg / reachable : 100, 50, 10, true);
	if (st->data_files <= 4 * (int64_t)r->n_parts) {
		c->severity = FLOE_HEALTH_OK; /* a few files per partition are what commits leave */
		DETAIL(c, "average %.1f MB, target %.0f MB; %" PRId64 " files in %zu partitions",
		       avg / mib, (double)st->target_file_size / mib, st->data_files, r->n_parts);
	} else {
		DETAIL(c, "average %.2f MB, target %.0f MB", avg / mib,
		       (double)st->target_file_size / mib);
	}
	FIX(c, "compact (floe maintain %s --steps compact); raise the checkpoint interval", tn);

	/* partitions over 100 files */
	int64_t over = 0;
	for (size_t i = 0; i < r->n_parts; i++)
		over += r->parts[i].data_files > 100;
	c = add_check(r, "partition-files", "partitions with over 100 data files", "partitions",
		      (double)over, 0, 1e18, false);
	if (r->n_parts && r->parts[0].data_files > 1000)
		c->severity = FLOE_HEALTH_CRITICAL;
	if (r->n_parts)
		DETAIL(c, "most: %s%s with %" PRId64 " files (critical over 1000)",
		       r->parts[0].name[0] ? r->parts[0].name : "(unpartitioned)", "",
		       r->parts[0].data_files);
	FIX(c, "compact the partitions with most files (floe maintain %s --steps compact)", tn);

	/* delete build-up, per partition */
	size_t worst_eq = 0, worst_pos = 0;
	for (size_t i = 1; i < r->n_parts; i++) {
		if (r->parts[i].eq_files > r->parts[worst_eq].eq_files)
			worst_eq = i;
		if (r->parts[i].pos_files > r->parts[worst_pos].pos_files)
			worst_pos = i;
	}
	int64_t max_eq = r->n_parts ? r->parts[worst_eq].eq_files : 0;
	int64_t max_pos = r->n_parts ? r->parts[worst_pos].pos_files : 0;
	c = add_check(r, "equality-deletes", "equality delete files in one partition (most)", "files",
		      (double)max_eq, 10, 30, false);
	DETAIL(c, "%" PRId64 " equality delete files (%" PRId64 " rows) in all; most in %s",
	       st->eq_files, st->eq_records,
	       max_eq ? (r->parts[worst_eq].name[0] ? r->parts[worst_eq].name : "(unpartitioned)")
		      : "-");
	FIX(c, "compact to apply them (floe maintain %s --steps compact); every reader joins "
	       "each one against the data files it covers",
	    tn);
	c = add_check(r, "position-deletes", "position delete files and DVs in one partition (most)",
		      "files", (double)max_pos, 10, 30, false);
	DETAIL(c, "%" PRId64 " position delete files (%" PRId64 " rows) in all", st->pos_files,
	       st->pos_records);
	FIX(c, "compact (floe maintain %s --steps compact)", tn);
	double drat = st->data_records
			      ? 100.0 * (double)(st->eq_records + st->pos_records) / (double)st->data_records
			      : 0;
	c = add_check(r, "delete-ratio", "delete rows per data row", "%", drat, 10, 50, false);
	DETAIL(c, "%" PRId64 " delete rows over %" PRId64 " data rows", st->eq_records + st->pos_records,
	       st->data_records);
	FIX(c, "compact more often (floe maintain %s --steps compact)", tn);

	/* snapshot velocity and count */
	c = add_check(r, "snapshot-velocity", "snapshots per hour (last day)", "snapshots/h",
		      st->snapshots_per_hour, 120, 720, false);
	DETAIL(c, "%" PRId64 " snapshots kept", st->snapshots);
	FIX(c, "checkpoint less often (1-5 minutes): every checkpoint is a commit");
	c = add_check(r, "snapshot-count", "snapshots in the metadata", "snapshots",
		      (double)st->snapshots, 1000, 4000, false);
	DETAIL(c, "history.expire.max-snapshot-age-ms %" PRId64 ", min-snapshots-to-keep %" PRId64,
	       st->max_snapshot_age_ms, st->min_snapshots_to_keep);
	FIX(c, "expire snapshots (floe maintain %s --steps expire); every commit rewrites them all",
	    tn);

	/* anti-pattern 2: time-based retention on a streaming table keeps
	 * velocity x age snapshots */
	double kept = st->snapshots_per_hour * (double)st->max_snapshot_age_ms / (double)HOUR_MS;
	if (kept < (double)st->min_snapshots_to_keep)
		kept = (double)st->min_snapshots_to_keep;
	c = add_check(r, "time-retention",
		      "snapshots time-based retention keeps at this velocity (anti-pattern 2)",
		      "snapshots", kept, 1000, 10000, false);
	DETAIL(c, "%.1f snapshots/h x %.1f h of history.expire.max-snapshot-age-ms",
	       st->snapshots_per_hour, (double)st->max_snapshot_age_ms / (double)HOUR_MS);
	FIX(c, "retain by count on a streaming table: floe table set %s "
	       "history.expire.max-snapshot-age-ms=3600000 history.expire.min-snapshots-to-keep=100",
	    tn);

	/* storage: what the current snapshot uses of what is stored, orphans */
	if (st->storage_scanned) {
		int64_t live = st->data_bytes + st->delete_bytes;
		int64_t stored = st->reachable_data_bytes + st->orphan_data_bytes;
		c = add_check(r, "storage-ratio",
			      "data bytes the current snapshot reaches / data bytes stored", "%",
			      stored > live ? 100.0 * (double)live / (double)stored : 100, 85, 50, true);
		DETAIL(c, "%.1f MB live of %.1f MB (older snapshots %.1f MB, orphans %.1f MB)",
		       (double)live / mib, (double)stored / mib,
		       (double)(st->reachable_data_bytes - live) / mib,
		       (double)st->orphan_data_bytes / mib);
		FIX(c, "expire snapshots and delete orphans (floe maintain %s --steps expire,orphans)",
		    tn);
		c = add_check(r, "orphan-bytes", "bytes no metadata reaches, older than the orphan cutoff",
			      "bytes", (double)st->orphan_bytes, 0,
			      (double)(live > 0 ? live : 0), false);
		DETAIL(c, "%" PRId64 " files; %" PRId64 " younger files (%" PRId64
			  " bytes) may be commits in progress",
		       st->orphan_files, st->young_orphan_files, st->young_orphan_bytes);
		FIX(c, "floe maintain %s --steps orphans", tn);
	} else {
		c = add_check(r, "storage-ratio", "data bytes the current snapshot reaches / stored",
			      "%", 100, 85, 50, true);
		not_applicable(c, "storage not listed");
		c = add_check(r, "orphan-bytes", "bytes no metadata reaches", "bytes", 0, 0, 0, false);
		not_applicable(c, "storage not listed");
	}

	/* metadata growth: a table whose commits merge manifests lists up to
	 * min-count-to-merge of each kind (data, deletes) by design */
	double warn_manifests = 100;
	if (floe_prop_bool(m, "commit.manifest-merge.enabled") &&
	    2.0 * (double)floe_prop_i64(m, "commit.manifest.min-count-to-merge") > warn_manifests)
		warn_manifests = 2.0 * (double)floe_prop_i64(m, "commit.manifest.min-count-to-merge");
	c = add_check(r, "manifests", "manifests of the current snapshot", "manifests",
		      (double)st->manifests, warn_manifests, 1000, false);
	DETAIL(c, "%" PRId64 " (%" PRId64 " delete), average %.1f KB", st->manifests,
	       st->delete_manifests,
	       st->manifests ? (double)st->manifest_bytes / (double)st->manifests / 1024.0 : 0.0);
	FIX(c, "floe maintain %s --steps manifests", tn);
	c = add_check(r, "metadata-size", "current metadata file", "bytes", (double)st->metadata_bytes,
		      5.0 * mib, 50.0 * mib, false);
	DETAIL(c, "%s", m->metadata_location ? m->metadata_location : "");
	FIX(c, "expire snapshots (floe maintain %s --steps expire); lower "
	       "write.metadata.previous-versions-max",
	    tn);

	/* freshness: elapsedSecondsSinceLastSuccessfulCommit against the interval */
	double age = st->last_pipeline_commit_ms >= 0 ? (double)(now - st->last_pipeline_commit_ms) / 1e3
						      : 0;
	double iv = (double)st->checkpoint_interval_ms / 1e3;
	c = add_check(r, "commit-age", "seconds since the pipeline's last commit", "s", age, 3 * iv,
		      10 * iv, false);
	if (st->last_pipeline_commit_ms < 0)
		not_applicable(c, "no pipeline commits (floe.pipeline-id, flink.job-id)");
	else if (st->checkpoint_interval_ms <= 0)
		not_applicable(c, "checkpoint interval unknown (give --checkpoint-interval)");
	else
		DETAIL(c, "checkpoint interval %.1f s (critical past 10 intervals)", iv);
	FIX(c, "the pipeline is not committing: check it is running, its lock and its errors");

	/* pipeline state: the snapshots expiry keeps so a pipeline can resume
	 * (floe pipelines list), and those held for a pipeline that went quiet */
	held_ctx h = {.current = floe_metadata_current_snapshot(m), .now = now};
	h.stale_after_ms = floe_metadata_property_duration_ms(
		m, "history.expire.keep-pipeline-state-for", INT64_C(7) * 24 * HOUR_MS);
	floe_buf_init(&h.list, 1024);
	if (floe_maint__pipelines(m, now, held_cb, &h) || h.rc) {
		floe_buf_reset(&h.list);
		return FLOE_ENOMEM;
	}
	c = add_check(r, "pipeline-state",
		      "snapshots held for pipelines idle past keep-pipeline-state-for", "snapshots",
		      (double)h.stale, 0, 10, false);
	if (!h.held)
		not_applicable(c, "no snapshot is held as a pipeline's state");
	else
		DETAIL(c, "%zu held as pipeline state: %s%s", h.held, floe_buf_cstr(&h.list),
		       h.held > h.listed ? "; ..." : "");
	floe_buf_reset(&h.list);
	FIX(c, "forget a pipeline that will not run again: floe pipelines forget %s <pipeline-id> "
	       "(floe pipelines list %s shows them)",
	    tn, tn);

	/* anti-pattern 9: high-cardinality partitioning */
	double part_bytes = r->n_parts ? (double)st->data_bytes / (double)r->n_parts : 0;
	c = add_check(r, "partition-cardinality", "partitions of the current snapshot (anti-pattern 9)",
		      "partitions", (double)r->n_parts, 1000, 10000, false);
	if (c->severity == FLOE_HEALTH_WARN && part_bytes >= (double)SMALL_FILE)
		c->severity = FLOE_HEALTH_OK; /* many partitions, each of a good size */
	DETAIL(c, "%.2f MB per partition", part_bytes / mib);
	FIX(c, "partition by a coarser transform (day instead of hour, bucket(N, id) instead of id)");

	/* anti-patterns 3 and 13: more than one maintainer rewriting files */
	const char *names[8];
	size_t n_names = 0;
	for (size_t i = 0; i < m->n_snapshots; i++) {
		const floe_snapshot *s = &m->snapshots[i];
		const char *op = floe_snapshot_summary(s, "operation");
		if (!op || strcmp(op, "replace") != 0)
			continue;
		const char *who = floe_snapshot_summary(s, "engine-name");
		if (!who)
			who = "unknown";
		size_t k = 0;
		while (k < n_names && strcmp(names[k], who) != 0)
			k++;
		if (k == n_names && n_names < 8)
			names[n_names++] = who;
	}
	bool s3tables = m->location && strstr(m->location, "--table-s3") != NULL;
	floe_buf who;
	floe_buf_init(&who, 4096);
	for (size_t k = 0; k < n_names; k++)
		if (floe_buf_printf(&who, "%s%s", k ? ", " : "", names[k]))
			break; /* the names so far */
	c = add_check(r, "maintenance-conflict",
		      "maintainers rewriting this table (anti-patterns 3, 13)", "maintainers",
		      (double)n_names + (s3tables ? 1 : 0), 1, 2, false);
	DETAIL(c, "rewrites by: %s%s", who.len ? floe_buf_cstr(&who) : "none",
	       s3tables ? "; S3 Tables compacts it too" : "");
	floe_buf_reset(&who);
	FIX(c, "keep one maintainer: disable the others (S3 Tables or Glue auto-compaction, a second "
	       "compaction job), or share floe's lock with Flink's (lock_uri)");

	for (size_t i = 0; i < r->n_checks; i++)
		if (!r->checks[i].detail || !r->checks[i].fix)
			return FLOE_ENOMEM;
	return 0;
}

int floe_doctor_run(floe_doctor_report **out, floe_table *t, const floe_doctor_opts *opts,
		    floe_error *err_out)
{
	floe_error local, *err = err_out ? err_out : &local;
	FLOE_CHECK_OPTS(opts, "floe_doctor_opts", "FLOE_DOCTOR_OPTS_INIT", err);
	floe_doctor_opts dflt = FLOE_DOCTOR_OPTS_INIT;
	const floe_doctor_opts *o = opts ? opts : &dflt;
	floe_doctor_report *r;
	file_ctx fc;
	int rc;
	*out = NULL;
	if (!(r = floe_calloc(1, sizeof(*r))))
		return floe_error_oom(err);
	floe_arena_init(&r->arena, 16384);
	memset(&fc, 0, sizeof(fc));
	floe_hmap_init(&fc.parts);
	fc.r = r;
	const floe_metadata *m = floe_table_metadata(t);
	int64_t now = o->now_ms >= 0 ? o->now_ms : floe_now_ms();
	r->table = floe_table_name(t)
			   ? floe_arena_sprintf(&r->arena, "%s.%s", floe_table_namespace(t),
						floe_table_name(t))
			   : floe_arena_strdup(&r->arena, m->metadata_location ? m->metadata_location : "");
	if (!r->table) {
		rc = floe_error_oom(err);
		goto fail;
	}
	floe_doctor_stats *st = &r->st;
	st->target_file_size = floe_metadata_property_i64(m, "write.target-file-size-bytes", 512 * MIB);
	st->max_snapshot_age_ms = floe_metadata_property_i64(m, "history.expire.max-snapshot-age-ms",
							     INT64_C(432000000));
	st->min_snapshots_to_keep =
		floe_metadata_property_i64(m, "history.expire.min-snapshots-to-keep", 1);
	if ((rc = floe_table_files(t, -1, file_cb, &fc, err))) {
		if (rc == FLOE_ENOMEM)
			rc = floe_error_oom(err);
		goto fail;
	}
	if (r->n_parts)
		qsort(r->parts, r->n_parts, sizeof(*r->parts), cmp_part);
	if ((rc = measure_snapshots(r, m, o))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	const floe_snapshot *cur = floe_metadata_current_snapshot(m);
	if (cur) {
		floe_arena a;
		floe_manifest_file *mfs = NULL;
		size_t n = 0;
		floe_arena_init(&a, 65536);
		rc = floe_table_manifests(&mfs, &n, &a, t, cur, err);
		for (size_t i = 0; i < n && !rc; i++) {
			st->manifests++;
			st->manifest_bytes += mfs[i].length;
			st->delete_manifests += mfs[i].content != FLOE_MANIFEST_DATA;
		}
		floe_arena_reset(&a);
		if (rc)
			goto fail;
	}
	if (m->metadata_location) {
		floe_file_info fi;
		if (floe_io_stat(floe_table_io(t), m->metadata_location, &fi, NULL) == 0)
			st->metadata_bytes = (int64_t)fi.size;
	}
	if (o->scan_storage && m->location && (rc = measure_storage(r, t, m, now, o, err)))
		goto fail;
	if ((rc = judge(r, m, now))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	floe_hmap_reset(&fc.parts);
	*out = r;
	return 0;
fail:
	floe_hmap_reset(&fc.parts);
	floe_doctor_report_free(r);
	return floe_error_prefix(err, rc, "doctor: ");
}

void floe_doctor_report_free(floe_doctor_report *r)
{
	if (!r)
		return;
	floe_free(r->parts);
	floe_free(r->points);
	floe_arena_reset(&r->arena);
	floe_free(r);
}

const char *floe_doctor_table(const floe_doctor_report *r)
{
	return r->table;
}

size_t floe_doctor_n_checks(const floe_doctor_report *r)
{
	return r->n_checks;
}

const floe_health_check *floe_doctor_check(const floe_doctor_report *r, size_t i)
{
	return i < r->n_checks ? &r->checks[i] : NULL;
}

floe_health floe_doctor_severity(const floe_doctor_report *r)
{
	floe_health worst = FLOE_HEALTH_OK;
	for (size_t i = 0; i < r->n_checks; i++)
		if (r->checks[i].severity > worst)
			worst = r->checks[i].severity;
	return worst;
}
