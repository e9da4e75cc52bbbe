/*
 * stream_plan.c — floe plan: what a pipeline configuration will do to its
 * tables (files, snapshots, manifests, deletes, storage, requests, cost),
 * without and with maintenance, and the anti-patterns it contains.
 *
 * DESIGN: see floe/plan.h. The arithmetic is kept in one place per figure
 * (predict()), the lints each in a few lines with the reasoning of the
 * operations guides in one sentence (lint_table()).
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "floe/plan.h"
#include "json/json.h"
#include "stream/stream_config.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/opts.h"
#include "util/str.h"

#define DAY_S 86400.0
#define MIB (1024.0 * 1024.0)
#define MAX_PARTS 100000
#define MAX_LINTS 64
#define DELETE_RECORD_BYTES 16.0

typedef struct pred {
	double files_per_commit, files_per_day, avg_file_bytes, data_files_after;
	double snapshots_per_day, snapshots_kept, manifests;
	double eq_deletes_per_day, eq_delete_files_per_day;
	double storage_bytes, puts_per_day, gets_per_day, cost_per_day, cost_total;
	double maintenance_runs_per_day;
} pred;

typedef struct plan_table {
	const char *name;
	int64_t writers, partitions;
	bool partitions_assumed, time_partitioned, maintenance_on, upsert;
	double interval_s, commits_per_day, target, rate, retention_ms;
	double merge_count; /* commit.manifest.min-count-to-merge; 0: no merge on commit */
	int dist;
	pred without, with;
} plan_table;

typedef struct plan_lint {
	const char *id;
	floe_health sev;
	const char *table;
	const char *msg;
} plan_lint;

struct floe_plan {
	floe_arena arena;
	floe_plan_opts o;
	plan_table *tables;
	size_t n_tables;
	plan_lint lints[MAX_LINTS];
	size_t n_lints;
	bool oom;
};

static void lint(floe_plan *p, const char *id, floe_health sev, const char *table, const char *fmt,
		 ...) FLOE_PRINTF(5, 6);
static void lint(floe_plan *p, const char *id, floe_health sev, const char *table, const char *fmt,
		 ...)
{
	va_list ap;
	char msg[1024];
	if (p->n_lints == MAX_LINTS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	plan_lint *l = &p->lints[p->n_lints++];
	l->id = id;
	l->sev = sev;
	l->table = table;
	if (!(l->msg = floe_arena_strdup(&p->arena, msg)))
		p->oom = true;
}

/* ---- the partition spec, as far as a count goes --------------------------------------- */

typedef struct spec_info {
	double partitions;  /* product of the factors known */
	bool unknown;       /* an identity or truncate column: the count is an assumption */
	bool time;          /* a year/month/day/hour transform */
	char sources[16][64];
	size_t n_sources;
	char identity[16][64];
	size_t n_identity;
} spec_info;

static void trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

static void copy_name(char *out, size_t cap, const char *s, const char *e)
{
	trim(&s, &e);
	if (e > s && (*s == '"' || *s == '`')) {
		s++;
		if (e > s && (e[-1] == '"' || e[-1] == '`'))
			e--;
	}
	size_t n = (size_t)(e - s) < cap - 1 ? (size_t)(e - s) : cap - 1;
	memcpy(out, s, n);
	out[n] = 0;
}

/* "bucket(16, id), day(ts), region" */
static void parse_spec(spec_info *si, const char *spec)
{
	memset(si, 0, sizeof(*si));
	si->partitions = 1;
	if (!spec)
		return;
	const char *p = spec;
	while (*p) {
		const char *start = p;
		int depth = 0;
		while (*p && (depth || *p != ',')) {
			depth += *p == '(';
			depth -= *p == ')';
			p++;
		}
		const char *end = p;
		if (*p)
			p++;
		trim(&start, &end);
		if (start == end)
			continue;
		const char *open = memchr(start, '(', (size_t)(end - start));
		char fn[32] = "", src[64] = "";
		if (open) {
			copy_name(fn, sizeof(fn), start, open);
			const char *args = open + 1, *close = end - 1;
			const char *comma = memchr(args, ',', (size_t)(close - args));
			copy_name(src, sizeof(src), comma ? comma + 1 : args, close);
			for (char *c = fn; *c; c++)
				*c = (char)tolower((unsigned char)*c);
			if (!strcmp(fn, "bucket") && comma) {
				char num[32];
				copy_name(num, sizeof(num), args, comma);
				double n = 0;
				if (sscanf(num, "%lf", &n) == 1 && n > 0)
					si->partitions *= n;
			} else if (!strcmp(fn, "year") || !strcmp(fn, "years") || !strcmp(fn, "month") ||
				   !strcmp(fn, "months") || !strcmp(fn, "day") || !strcmp(fn, "days") ||
				   !strcmp(fn, "hour") || !strcmp(fn, "hours")) {
				si->time = true; /* a stream writes the current one */
			} else if (!strcmp(fn, "identity")) {
				si->unknown = true;
				if (si->n_identity < 16)
					snprintf(si->identity[si->n_identity++], 64, "%s", src);
			} else {
				si->unknown = true; /* truncate, void, ... */
			}
		} else {
			copy_name(src, sizeof(src), start, end);
			si->unknown = true;
			if (si->n_identity < 16)
				snprintf(si->identity[si->n_identity++], 64, "%s", src);
		}
		if (si->n_sources < 16 && src[0])
			snprintf(si->sources[si->n_sources++], 64, "%s", src);
	}
}

static bool in_list(const char *list, const char *name)
{
	const char *p = list;
	size_t n = strlen(name);
	while (p && *p) {
		const char *e = strchr(p, ',');
		const char *s = p, *t = e ? e : p + strlen(p);
		trim(&s, &t);
		if ((size_t)(t - s) == n && !strncmp(s, name, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static bool high_cardinality_name(const char *c)
{
	size_t n = strlen(c);
	return !strcmp(c, "id") || (n > 3 && !strcmp(c + n - 3, "_id")) || strstr(c, "uuid") ||
	       strstr(c, "user") || strstr(c, "session") || strstr(c, "email") ||
	       (n > 4 && !strcmp(c + n - 4, "_key"));
}

/* ---- the arithmetic ------------------------------------------------------------------------ */

/* Files one checkpoint of n records writes: per partition the chance it is
 * seen times the files its bytes fill. */
static double fanout(const double *pw, int64_t parts, double n, int64_t writers, bool per_writer,
		     double record_bytes, double target)
{
	double files = 0;
	double nw = per_writer ? n / (double)writers : n;
	if (n <= 0)
		return 0;
	for (int64_t i = 0; i < parts; i++) {
		double seen = 1.0 - pow(1.0 - pw[i], nw);
		double bytes = nw * pw[i] * record_bytes;
		double k = bytes > target ? ceil(bytes / target) : 1;
		files += seen * k;
	}
	return per_writer ? files * (double)writers : files;
}

/*
 * RANGE (stream_range.c): the keys, in key order (here: the partitions in
 * the order of the Zipf law, heaviest first; the count does not depend on
 * the order), fill the tasks one after another up to total / tasks each, so
 * each of the tasks - 1 boundaries that falls inside a partition splits it
 * into one more file (a task writes its share); a partition not split
 * writes as with hash. At most hash's files + tasks - 1.
 */
static double piece_files(double w, double n, double record_bytes, double target)
{
	double bytes = n * w * record_bytes;
	return (1.0 - pow(1.0 - w, n)) * (bytes > target ? ceil(bytes / target) : 1);
}

static double range_fanout(const double *pw, int64_t parts, double n, int64_t tasks,
			   double record_bytes, double target)
{
	const double eps = 1e-12;
	double files = 0, at = 0;
	int64_t next = 1; /* the next boundary: next / tasks of the rows */
	if (n <= 0)
		return 0;
	for (int64_t i = 0; i < parts; i++) {
		double from = at, hi = at + pw[i];
		at = hi;
		for (; next < tasks && (double)next / (double)tasks < hi - eps; next++) {
			double b = (double)next / (double)tasks;
			files += piece_files(b - from, n, record_bytes, target);
			from = b;
		}
		files += piece_files(hi - from, n, record_bytes, target);
		if (next < tasks && fabs((double)next / (double)tasks - hi) <= eps)
			next++; /* a boundary between two partitions splits none */
	}
	return files;
}

/* Files a checkpoint of n records writes, by the table's distribution. */
static double files_of(const plan_table *pt, const double *pw, double n, bool per_writer,
		       double record_bytes)
{
	if (pt->dist == STREAM_DIST_RANGE)
		return range_fanout(pw, pt->partitions, n, pt->writers, record_bytes, pt->target);
	return fanout(pw, pt->partitions, n, pt->writers, per_writer, record_bytes, pt->target);
}

static double cost(const floe_plan_opts *o, double puts, double gets, double storage)
{
	return puts / 1000.0 * o->put_price + gets / 1000.0 * o->get_price +
	       storage / 1e9 * o->storage_price / 30.0;
}

static int predict(floe_plan *p, plan_table *pt, const stream_config *cfg, const stream_table_cfg *t)
{
	const floe_plan_opts *o = &p->o;
	double *pw = floe_calloc((size_t)pt->partitions, sizeof(double));
	if (!pw)
		return FLOE_ENOMEM;
	double sum = 0;
	for (int64_t i = 0; i < pt->partitions; i++)
		sum += pw[i] = 1.0 / pow((double)(i + 1), o->skew);
	for (int64_t i = 0; i < pt->partitions; i++)
		pw[i] /= sum;
	double rb = o->record_size * o->compression;
	double C = pt->commits_per_day, D = o->days;
	double N = pt->rate * pt->interval_s; /* records per checkpoint */
	bool per_writer = pt->dist == STREAM_DIST_NONE && pt->writers > 1;
	double day_bytes = pt->rate * DAY_S * rb;
	double U = N * o->update_ratio;

	/* without maintenance: every file, snapshot and manifest stays */
	pred *w = &pt->without;
	w->files_per_commit = files_of(pt, pw, N, per_writer, rb);
	w->files_per_day = w->files_per_commit * C;
	w->avg_file_bytes = w->files_per_commit > 0 ? N * rb / w->files_per_commit : 0;
	w->data_files_after = w->files_per_day * D;
	w->snapshots_per_day = C;
	w->snapshots_kept = C * D;
	w->eq_deletes_per_day = U * C;
	w->eq_delete_files_per_day = files_of(pt, pw, U, per_writer, DELETE_RECORD_BYTES) * C;
	double manifests_per_commit = 1 + (U > 0 ? 1 : 0);
	/* a commit that brings a content type's manifests to min-count-to-merge merges them
	 * into one (as Java's producers do): at most that many each */
	w->manifests = manifests_per_commit *
		       (pt->merge_count > 0 ? fmin(C * D, pt->merge_count) : C * D);
	w->storage_bytes = day_bytes * D + w->eq_deletes_per_day * D * DELETE_RECORD_BYTES;
	/* a commit writes its files, its manifests, a manifest list and a metadata file,
	 * and reads the metadata back */
	w->puts_per_day = w->files_per_day + w->eq_delete_files_per_day + C * (manifests_per_commit + 2);
	w->gets_per_day = C * 2;
	w->cost_per_day = cost(o, w->puts_per_day, w->gets_per_day, w->storage_bytes);
	w->cost_total = 0;
	for (int d = 1; d <= o->days; d++)
		w->cost_total += cost(o, w->puts_per_day, w->gets_per_day, day_bytes * d);

	/* with maintenance (as configured, else its defaults) */
	const stream_maint_cfg *m = &t->maint;
	pred *x = &pt->with;
	*x = *w;
	double runs = 0;
	if (m->commit_count > 0)
		runs = fmax(runs, C / (double)m->commit_count);
	if (m->data_file_count > 0)
		runs = fmax(runs, w->files_per_day / (double)m->data_file_count);
	if (m->interval_ms > 0)
		runs = fmax(runs, DAY_S * 1000.0 / (double)m->interval_ms);
	if (m->rate_limit_ms > 0)
		runs = fmin(runs, DAY_S * 1000.0 / (double)m->rate_limit_ms);
	runs = fmin(runs, C);
	if (runs <= 0)
		runs = 1;
	x->maintenance_runs_per_day = runs;
	double live_bytes = day_bytes * D * (1.0 - o->update_ratio);
	double compacted = 0; /* files of compacted data */
	if (pt->time_partitioned) {
		for (int64_t i = 0; i < pt->partitions; i++)
			compacted += ceil(day_bytes * (1.0 - o->update_ratio) * pw[i] / pt->target) * D;
	} else {
		for (int64_t i = 0; i < pt->partitions; i++)
			compacted += ceil(live_bytes * pw[i] / pt->target);
	}
	double pending = w->files_per_commit * (C / runs) / 2; /* written since the last run */
	x->data_files_after = compacted + pending;
	x->avg_file_bytes = x->data_files_after > 0 ? live_bytes / x->data_files_after : 0;
	double outputs_per_day = pt->time_partitioned ? compacted / D * runs : compacted * runs / D;
	x->files_per_day = w->files_per_day + outputs_per_day;
	x->snapshots_per_day = C + 2 * runs; /* a compaction and a manifest rewrite per run */
	double age_days = pt->retention_ms / (DAY_S * 1000.0);
	x->snapshots_kept = fmax(m->retain_last > 0 ? (double)m->retain_last : 1,
				 x->snapshots_per_day * fmin(age_days, D));
	x->manifests = fmin(w->manifests, 2 + manifests_per_commit * (C / runs) / 2);
	x->eq_delete_files_per_day = w->eq_delete_files_per_day; /* written; compaction applies them */
	x->storage_bytes = live_bytes + day_bytes * fmin(age_days, D);
	x->puts_per_day = w->puts_per_day + outputs_per_day + runs * 2 * (manifests_per_commit + 2);
	/* compaction reads each input (footer and data) once; the orphan step lists the location
	 * once a day (LIST is priced as PUT) */
	x->gets_per_day = w->gets_per_day + 2 * w->files_per_day + runs * 2;
	double list_per_day = (x->data_files_after + x->manifests + x->snapshots_kept) / 1000.0 + 1;
	x->puts_per_day += list_per_day;
	x->cost_per_day = cost(o, x->puts_per_day, x->gets_per_day, x->storage_bytes);
	x->cost_total = 0;
	for (int d = 1; d <= o->days; d++)
		x->cost_total += cost(o, x->puts_per_day, x->gets_per_day,
				      day_bytes * d * (1.0 - o->update_ratio) +
					      day_bytes * fmin(age_days, (double)d));
	(void)cfg;
	floe_free(pw);
	return 0;
}

/* ---- the lints ------------------------------------------------------------------------------ */

static const char *canonical_steps[] = {"compact", "expire", "orphans", "manifests"};

static int step_rank(const char *s, size_t n)
{
	static const char *alias[][2] = {{"rewrite-data-files", "compact"},
					 {"expire-snapshots", "expire"},
					 {"delete-orphan-files", "orphans"},
					 {"rewrite-manifests", "manifests"}};
	for (int i = 0; i < 4; i++)
		if ((strlen(canonical_steps[i]) == n && !strncmp(s, canonical_steps[i], n)) ||
		    (strlen(alias[i][0]) == n && !strncmp(s, alias[i][0], n)))
			return i;
	return -1;
}

static void lint_table(floe_plan *p, const plan_table *pt, const stream_table_cfg *t,
		       const spec_info *si)
{
	const floe_plan_opts *o = &p->o;
	const char *tn = pt->name;
	/* 1: checkpoints too short */
	if (pt->interval_s < 60)
		lint(p, "checkpoint-interval", pt->interval_s < 10 ? FLOE_HEALTH_CRITICAL : FLOE_HEALTH_WARN,
		     tn,
		     "checkpoint every %.0f s: each checkpoint is a commit, %.0f snapshots and %.0f "
		     "files a day; 1-5 minutes keeps files large and metadata small",
		     pt->interval_s, pt->commits_per_day, pt->without.files_per_day);
	/* 2: distribution none fans every writer out to every partition */
	if (pt->dist == STREAM_DIST_NONE && pt->writers > 1 && pt->partitions > 1)
		lint(p, "distribution-none", FLOE_HEALTH_WARN, tn,
		     "distribution-mode none: each of the %" PRId64 " writers writes every partition it "
		     "sees, %.0f files per checkpoint where hash writes %" PRId64,
		     pt->writers, pt->without.files_per_commit, pt->partitions);
	/* 3-5: upserts */
	if (pt->upsert) {
		/* the key: --equality-fields, else the table entry's equality-field-columns */
		const char *eq = o->equality_fields ? o->equality_fields : t->equality_fields;
		if (pt->dist == STREAM_DIST_NONE && pt->writers > 1)
			lint(p, "upsert-distribution-none", FLOE_HEALTH_CRITICAL, tn,
			     "upsert with distribution-mode none: two writers may hold versions of one key "
			     "in one checkpoint and neither's equality delete removes the other's row; "
			     "distribute by hash on the equality fields");
		if (!eq || !*eq)
			lint(p, "upsert-without-key", FLOE_HEALTH_CRITICAL, tn,
			     "upsert without equality fields: there is no key to delete the old row by "
			     "(--equality-fields, the table's identifier fields)");
		else
			for (size_t i = 0; i < si->n_sources; i++)
				if (!in_list(eq, si->sources[i]))
					lint(p, "upsert-partition-not-in-key", FLOE_HEALTH_CRITICAL, tn,
					     "partition column '%s' is not an equality field: a key that "
					     "changes partition keeps its old row, since an equality delete "
					     "applies only in its own partition",
					     si->sources[i]);
	}
	/* 6: no maintenance */
	if (!pt->maintenance_on)
		lint(p, "no-maintenance", FLOE_HEALTH_WARN, tn,
		     "no maintenance: after %d days %.0f data files, %.0f snapshots and %.0f manifests; "
		     "set maintenance.mode: auto or schedule floe maintain",
		     o->days, pt->without.data_files_after, pt->without.snapshots_kept,
		     pt->without.manifests);
	/* 7: time-based retention on a streaming table */
	double kept = pt->with.snapshots_per_day * pt->retention_ms / (DAY_S * 1000.0);
	if (kept > 1000)
		lint(p, "time-based-retention", kept > 10000 ? FLOE_HEALTH_CRITICAL : FLOE_HEALTH_WARN, tn,
		     "snapshots expire by age (%.1f days): at %.0f commits a day %.0f snapshots stay, "
		     "every commit rewrites them; retain by count (maintenance.expire.retain-last) "
		     "with a short max-snapshot-age",
		     pt->retention_ms / (DAY_S * 1000.0), pt->with.snapshots_per_day, kept);
	/* 8: maintenance order and missing steps */
	if (pt->maintenance_on && t->maint.steps) {
		int last = -1, seen = 0;
		bool out_of_order = false;
		const char *s = t->maint.steps;
		while (*s) {
			const char *e = strchr(s, ',');
			const char *a = s, *b = e ? e : s + strlen(s);
			trim(&a, &b);
			int r = step_rank(a, (size_t)(b - a));
			if (r >= 0) {
				if (r < last)
					out_of_order = true;
				last = r;
				seen |= 1 << r;
			}
			if (!e)
				break;
			s = e + 1;
		}
		if (out_of_order)
			lint(p, "maintenance-order", FLOE_HEALTH_WARN, tn,
			     "maintenance.steps '%s' is out of order: only compact, expire, orphans, "
			     "manifests is safe (expiry frees what compaction replaced, orphan cleanup "
			     "what expiry left, manifests last); floe runs that order",
			     t->maint.steps);
		if ((seen & 1) && !(seen & 2))
			lint(p, "compaction-without-expiry", FLOE_HEALTH_WARN, tn,
			     "compaction without expiry: the replaced small files stay reachable from old "
			     "snapshots, so storage grows by every byte compacted");
	}
	/* 9: high-cardinality partitioning */
	for (size_t i = 0; i < si->n_identity; i++)
		if (high_cardinality_name(si->identity[i]))
			lint(p, "high-cardinality-partition", FLOE_HEALTH_WARN, tn,
			     "partitioned by identity(%s): one partition per value means a file per "
			     "value per checkpoint; use bucket(N, %s)",
			     si->identity[i], si->identity[i]);
	if (pt->partitions > 1000)
		lint(p, "high-cardinality-partition", FLOE_HEALTH_WARN, tn,
		     "%" PRId64 " partitions: %.0f files per checkpoint of %.1f KB on average; use a "
		     "coarser transform",
		     pt->partitions, pt->without.files_per_commit, pt->without.avg_file_bytes / 1024);
	/* 10: small files straight from the writers */
	if (!pt->maintenance_on && pt->without.avg_file_bytes > 0 && pt->without.avg_file_bytes < MIB)
		lint(p, "small-files", FLOE_HEALTH_WARN, tn,
		     "files average %.0f KB when written (target %.0f MB): readers open a file per "
		     "%.0f KB; longer checkpoints, hash distribution or compaction",
		     pt->without.avg_file_bytes / 1024, pt->target / MIB,
		     pt->without.avg_file_bytes / 1024);
}

/* ---- putting it together --------------------------------------------------------------------- */

static int64_t prop_i64(const stream_table_cfg *t, const char *key, int64_t dflt)
{
	const char *v = floe_strmap_get(&t->properties, key);
	int64_t out;
	return v && floe_parse_i64(v, strlen(v), &out) ? out : dflt;
}

int floe_plan_run(floe_plan **out, const char *yaml, size_t n, const floe_plan_opts *opts,
		  floe_error *err_out)
{
	floe_error local, *err = err_out ? err_out : &local;
	FLOE_CHECK_OPTS(opts, "floe_plan_opts", "FLOE_PLAN_OPTS_INIT", err);
	floe_plan_opts dflt = FLOE_PLAN_OPTS_INIT;
	stream_config *cfg = NULL;
	floe_plan *p = NULL;
	int rc;
	*out = NULL;
	if (!opts)
		opts = &dflt;
	if (opts->record_size <= 0 || opts->compression <= 0 || opts->days < 1 || opts->skew < 0 ||
	    opts->update_ratio < 0 || opts->update_ratio > 1 || opts->partitions > MAX_PARTS)
		return floe_error_set(err, FLOE_EINVAL,
				      "plan: record size, compression and days must be positive, skew "
				      ">= 0, the update ratio 0..1, partitions at most %d",
				      MAX_PARTS);
	if ((rc = stream_config_parse_yaml(&cfg, yaml, n, NULL, err)))
		return rc;
	if (!(p = floe_calloc(1, sizeof(*p))) ||
	    !(p->tables = floe_calloc(cfg->n_tables ? cfg->n_tables : 1, sizeof(*p->tables)))) {
		floe_free(p);
		stream_config_free(cfg);
		return floe_error_oom(err);
	}
	floe_arena_init(&p->arena, 8192);
	p->o = *opts;
	for (size_t i = 0; i < cfg->n_tables; i++) {
		const stream_table_cfg *t = &cfg->tables[i];
		plan_table *pt = &p->tables[p->n_tables++];
		spec_info si;
		parse_spec(&si, t->partition_by);
		if (!(pt->name = floe_arena_strdup(&p->arena, t->name))) {
			rc = floe_error_oom(err);
			goto fail;
		}
		pt->writers = opts->parallelism > 0 ? opts->parallelism : cfg->parallelism;
		pt->interval_s = (double)cfg->checkpoint_interval_ms / 1000.0;
		if (pt->interval_s <= 0)
			pt->interval_s = 1;
		pt->commits_per_day = DAY_S / pt->interval_s;
		pt->dist = t->distribution;
		if (pt->dist == STREAM_DIST_UNSET) {
			const char *dm = floe_strmap_get(&t->properties, "write.distribution-mode");
			pt->dist = dm && !strcmp(dm, "hash")    ? STREAM_DIST_HASH
				   : dm && !strcmp(dm, "range") ? STREAM_DIST_RANGE
								: STREAM_DIST_NONE;
		}
		pt->time_partitioned = si.time;
		if (opts->partitions > 0) {
			pt->partitions = opts->partitions;
		} else {
			double np = si.partitions * (si.unknown ? 10 : 1);
			pt->partitions = np > MAX_PARTS ? MAX_PARTS : (int64_t)np;
			pt->partitions_assumed = si.unknown;
		}
		const char *merge = floe_strmap_get(&t->properties, "commit.manifest-merge.enabled");
		pt->merge_count = 0; /* merging off */
		if (!merge || !floe_str_ieq(merge, "false")) {
			int64_t mc = prop_i64(t, "commit.manifest.min-count-to-merge", 100);
			pt->merge_count = mc < 1 ? 1 : (double)mc; /* 0: every commit merges */
		}
		pt->target = (double)(t->maint.target_file_size > 0
					      ? t->maint.target_file_size
					      : prop_i64(t, "write.target-file-size-bytes", INT64_C(536870912)));
		const stream_source_cfg *src = t->source ? stream_config_source(cfg, t->source)
							 : (cfg->n_sources ? &cfg->sources[0] : NULL);
		pt->rate = opts->rate >= 0 ? opts->rate
			   : src && src->type == STREAM_SRC_GENERATOR && src->rows_per_second > 0
				   ? (double)src->rows_per_second
				   : 20000;
		pt->maintenance_on = t->maint.mode != 0;
		pt->retention_ms = (double)(t->maint.max_snapshot_age_ms > 0
						    ? t->maint.max_snapshot_age_ms
						    : prop_i64(t, "history.expire.max-snapshot-age-ms",
							       INT64_C(432000000)));
		const char *up = floe_strmap_get(&t->properties, "write.upsert.enabled");
		pt->upsert = t->upsert == 1 || (t->upsert < 0 && up && !strcmp(up, "true")) ||
			     opts->update_ratio > 0;
		if ((rc = predict(p, pt, cfg, t))) {
			rc = floe_error_oom(err);
			goto fail;
		}
		lint_table(p, pt, t, &si);
	}
	if (p->oom) {
		rc = floe_error_oom(err);
		goto fail;
	}
	stream_config_free(cfg);
	*out = p;
	return 0;
fail:
	stream_config_free(cfg);
	floe_plan_free(p);
	return rc;
}

void floe_plan_free(floe_plan *p)
{
	if (!p)
		return;
	floe_free(p->tables);
	floe_arena_reset(&p->arena);
	floe_free(p);
}

floe_health floe_plan_severity(const floe_plan *p)
{
	floe_health worst = FLOE_HEALTH_OK;
	for (size_t i = 0; i < p->n_lints; i++)
		if (p->lints[i].sev > worst)
			worst = p->lints[i].sev;
	return worst;
}

/* ---- output ------------------------------------------------------------------------------------ */

/* 57600 -> "57,600" */
static void thousands(char *out, size_t cap, double v)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%.0f", v);
	size_t n = strlen(tmp), o = 0, lead = tmp[0] == '-';
	for (size_t i = 0; i < n && o + 2 < cap; i++) {
		if (i > lead && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = tmp[i];
	}
	out[o] = 0;
}

static void human_bytes(char *out, size_t cap, double v)
{
	const char *u[] = {"B", "KB", "MB", "GB", "TB", "PB"};
	int k = 0;
	while (v >= 1024 && k < 5) {
		v /= 1024;
		k++;
	}
	snprintf(out, cap, "%.1f %s", v, u[k]);
}

typedef struct field {
	const char *label, *key;
	size_t off;
	int kind; /* 0 count, 1 bytes, 2 dollars, 3 decimal */
} field;

static const field FIELDS[] = {
	{"files per commit", "files_per_commit", offsetof(pred, files_per_commit), 3},
	{"files per day", "files_per_day", offsetof(pred, files_per_day), 0},
	{"data files after N days", "data_files_after", offsetof(pred, data_files_after), 0},
	{"average file size", "avg_file_bytes", offsetof(pred, avg_file_bytes), 1},
	{"snapshots per day", "snapshots_per_day", offsetof(pred, snapshots_per_day), 0},
	{"snapshots kept after N days", "snapshots_kept", offsetof(pred, snapshots_kept), 0},
	{"manifests (current snapshot)", "manifests", offsetof(pred, manifests), 0},
	{"equality deletes per day", "eq_deletes_per_day", offsetof(pred, eq_deletes_per_day), 0},
	{"equality delete files per day", "eq_delete_files_per_day",
	 offsetof(pred, eq_delete_files_per_day), 0},
	{"storage after N days", "storage_bytes", offsetof(pred, storage_bytes), 1},
	{"PUT/LIST requests per day", "puts_per_day", offsetof(pred, puts_per_day), 0},
	{"GET requests per day", "gets_per_day", offsetof(pred, gets_per_day), 0},
	{"cost per day (day N)", "cost_per_day", offsetof(pred, cost_per_day), 2},
	{"cost over N days", "cost_total", offsetof(pred, cost_total), 2},
	{"maintenance runs per day", "maintenance_runs_per_day", offsetof(pred, maintenance_runs_per_day), 3},
};

static double fval(const pred *p, const field *f)
{
	return *(const double *)((const char *)p + f->off);
}

static void fmt_field(char *out, size_t cap, const pred *p, const field *f)
{
	double v = fval(p, f);
	if (f->kind == 1)
		human_bytes(out, cap, v);
	else if (f->kind == 2)
		snprintf(out, cap, "$%.2f", v);
	else if (f->kind == 3)
		snprintf(out, cap, "%.1f", v);
	else
		thousands(out, cap, v);
}

static const char *dist_name(int d)
{
	return d == STREAM_DIST_HASH ? "hash" : d == STREAM_DIST_RANGE ? "range" : "none";
}

static int write_text(const floe_plan *p, floe_buf *b)
{
	const floe_plan_opts *o = &p->o;
	int rc = floe_buf_printf(b,
				 "assumptions: %.0f B per record, compression %.2f, skew %.2f, "
				 "updates %.0f%%, %d days; PUT $%g and GET $%g per 1,000, storage $%g "
				 "per GB-month\n",
				 o->record_size, o->compression, o->skew, o->update_ratio * 100, o->days,
				 o->put_price, o->get_price, o->storage_price);
	for (size_t i = 0; i < p->n_tables && !rc; i++) {
		const plan_table *t = &p->tables[i];
		char rate[32];
		thousands(rate, sizeof(rate), t->rate);
		rc = floe_buf_printf(b,
				     "\ntable %s: %s records/s, %" PRId64 " writers, distribution %s, "
				     "%" PRId64 " partitions%s%s, checkpoint %.0f s (%.0f commits/day), "
				     "target %.0f MB, maintenance %s\n",
				     t->name, rate, t->writers, dist_name(t->dist), t->partitions,
				     t->partitions_assumed ? " (assumed: --partitions)" : "",
				     t->time_partitioned ? " (the current time partition)" : "",
				     t->interval_s, t->commits_per_day, t->target / MIB,
				     t->maintenance_on ? "configured" : "off (with: its defaults)");
		if (!rc)
			rc = floe_buf_printf(b, "  %-34s %22s %22s\n", "", "without maintenance",
					     "with maintenance");
		for (size_t k = 0; k < sizeof(FIELDS) / sizeof(FIELDS[0]) && !rc; k++) {
			char label[64], a[48], z[48];
			const char *nd = strstr(FIELDS[k].label, "N days");
			if (nd)
				snprintf(label, sizeof(label), "%.*s%d days", (int)(nd - FIELDS[k].label),
					 FIELDS[k].label, o->days);
			else if (strstr(FIELDS[k].label, "day N"))
				snprintf(label, sizeof(label), "cost per day (day %d)", o->days);
			else
				snprintf(label, sizeof(label), "%s", FIELDS[k].label);
			fmt_field(a, sizeof(a), &t->without, &FIELDS[k]);
			fmt_field(z, sizeof(z), &t->with, &FIELDS[k]);
			if (FIELDS[k].off == offsetof(pred, maintenance_runs_per_day))
				snprintf(a, sizeof(a), "-");
			rc = floe_buf_printf(b, "  %-34s %22s %22s\n", label, a, z);
		}
	}
	if (!rc)
		rc = floe_buf_printf(b, "\nlints: %zu\n", p->n_lints);
	for (size_t i = 0; i < p->n_lints && !rc; i++)
		rc = floe_buf_printf(b, "  %-8s %s %s: %s\n", floe_health_name(p->lints[i].sev),
				     p->lints[i].table, p->lints[i].id, p->lints[i].msg);
	return rc;
}

static void pred_json(floe_jw *w, const pred *p)
{
	floe_jw_obj_begin(w);
	for (size_t k = 0; k < sizeof(FIELDS) / sizeof(FIELDS[0]); k++) {
		floe_jw_key(w, FIELDS[k].key);
		floe_jw_double(w, fval(p, &FIELDS[k]));
	}
	floe_jw_obj_end(w);
}

static int write_json(const floe_plan *p, floe_buf *b)
{
	floe_jw w;
	floe_jw_init(&w, b, 0);
	floe_jw_obj_begin(&w);
	floe_jw_kv_str(&w, "severity", floe_health_name(floe_plan_severity(p)));
	floe_jw_kv_i64(&w, "days", p->o.days);
	floe_jw_key(&w, "tables");
	floe_jw_arr_begin(&w);
	for (size_t i = 0; i < p->n_tables; i++) {
		const plan_table *t = &p->tables[i];
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "table", t->name);
		floe_jw_kv_i64(&w, "writers", t->writers);
		floe_jw_kv_i64(&w, "partitions", t->partitions);
		floe_jw_kv_str(&w, "distribution", dist_name(t->dist));
		floe_jw_key(&w, "checkpoint_interval_s");
		floe_jw_double(&w, t->interval_s);
		floe_jw_key(&w, "rate");
		floe_jw_double(&w, t->rate);
		floe_jw_kv_bool(&w, "maintenance", t->maintenance_on);
		floe_jw_key(&w, "without_maintenance");
		pred_json(&w, &t->without);
		floe_jw_key(&w, "with_maintenance");
		pred_json(&w, &t->with);
		floe_jw_obj_end(&w);
	}
	floe_jw_arr_end(&w);
	floe_jw_key(&w, "lints");
	floe_jw_arr_begin(&w);
	for (size_t i = 0; i < p->n_lints; i++) {
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "id", p->lints[i].id);
		floe_jw_kv_str(&w, "severity", floe_health_name(p->lints[i].sev));
		floe_jw_kv_str(&w, "table", p->lints[i].table);
		floe_jw_kv_str(&w, "message", p->lints[i].msg);
		floe_jw_obj_end(&w);
	}
	floe_jw_arr_end(&w);
	floe_jw_obj_end(&w);
	int rc = floe_jw_finish(&w);
	return rc ? rc : floe_buf_putc(b, '\n');
}

int floe_plan_write(const floe_plan *p, bool json, floe_write_fn fn, void *payload,
		    floe_error *err)
{
	floe_buf b;
	floe_buf_init(&b, 0);
	int rc = json ? write_json(p, &b) : write_text(p, &b);
	if (rc)
		rc = floe_error_oom(err);
	else if ((rc = fn(b.data ? (const char *)b.data : "", b.len, payload)))
		rc = floe_error_set(err, rc < 0 ? rc : FLOE_EIO, "plan: writing failed");
	floe_buf_reset(&b);
	return rc;
}
