/*
 * maintain_runner.c — the embedded maintenance thread of one table.
 *
 * DESIGN: the triggers count what was committed since the table was last
 * maintained. A process that counted only its own commits never reached a
 * trigger when it restarted more often than the trigger's count (5 of 6
 * fault campaigns ended uncompacted), so a runner starts from the table's
 * history: the snapshots on main after the newest one a maintenance run
 * committed (summary floe.maintenance, or any "replace": another engine's
 * compaction) and what their summaries say they added. From then on the
 * committer reports each commit.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog_impl.h"
#include "maintain/maintain_int.h"
#include "maintain/maintain_runner.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/str.h"
#include "util/thread.h"
#include "util/timeutil.h"

struct floe_maint_runner {
	floe_catalog *cat; /* the runner's own */
	char *ns, *name;
	floe_maintain_opts opts;
	floe_maint_schedule sched;
	floe_thread thread;
	floe_mutex mu;
	floe_cond cv;
	/* under mu */
	floe_maint_commit since; /* added since the last run */
	int64_t commits_since;
	int64_t last_end_ms;    /* end of the last run (start time at first) */
	int64_t last_orphans_ms; /* start of the last run with the orphan step (0: none) */
	int64_t not_before_ms;  /* rate limit / lock-check delay */
	bool stop, finish, final_done;
	floe_maint_runner_stats st;
	atomic_int interrupt;
};

static int interrupted(void *payload)
{
	floe_maint_runner *r = payload;
	return atomic_load(&r->interrupt);
}

/* Is a run due (mu held)? */
static bool due(const floe_maint_runner *r, int64_t now)
{
	const floe_maint_schedule *s = &r->sched;
	if (r->commits_since == 0)
		return false;
	return (s->commit_count > 0 && r->commits_since >= s->commit_count) ||
	       (s->data_file_count > 0 && r->since.data_files >= s->data_file_count) ||
	       (s->data_file_size > 0 && r->since.data_bytes >= s->data_file_size) ||
	       (s->pos_delete_file_count > 0 &&
		r->since.pos_delete_files >= s->pos_delete_file_count) ||
	       (s->eq_delete_file_count > 0 && r->since.eq_delete_files >= s->eq_delete_file_count) ||
	       (s->interval_ms > 0 && now - r->last_end_ms >= s->interval_ms);
}

/* One maintenance run (mu not held). Returns the floe status. */
static int run_once(floe_maint_runner *r, floe_maintain_result *res, floe_error *err)
{
	floe_table *t = NULL;
	int rc;
	floe_maintain_opts o = r->opts;
	int64_t now = floe_now_ms();
	memset(res, 0, sizeof(*res));
	if (r->sched.expire_age_ms >= 0)
		o.expire.older_than_ms = now - r->sched.expire_age_ms;
	if (r->sched.orphan_age_ms >= 0)
		o.orphans.older_than_ms = now - r->sched.orphan_age_ms;
	if ((o.steps & FLOE_STEP_ORPHANS) && r->last_orphans_ms &&
	    now - r->last_orphans_ms < r->sched.orphan_interval_ms)
		o.steps &= ~(unsigned)FLOE_STEP_ORPHANS; /* listing the location is not cheap */
	if (!o.steps)
		return FLOE_OK;
	rc = floe_table_load(&t, r->cat, r->ns, r->name, err);
	if (!rc)
		rc = floe_maintain(t, &o, res, err);
	if (!rc && (res->steps_run & FLOE_STEP_ORPHANS))
		r->last_orphans_ms = now;
	floe_table_free(t);
	return rc;
}

static void account(floe_maint_runner *r, const floe_maintain_result *res)
{
	floe_maint_runner_stats *st = &r->st;
	st->data_files_rewritten += (int64_t)res->compact.data_files_rewritten;
	st->data_files_added += (int64_t)res->compact.data_files_added;
	st->bytes_rewritten += res->compact.bytes_rewritten;
	st->delete_files_removed += (int64_t)res->compact.delete_files_removed;
	st->snapshots_expired += (int64_t)res->expire.snapshots_expired;
	st->files_expired += (int64_t)(res->expire.data_files_deleted + res->expire.delete_files_deleted +
				       res->expire.manifests_deleted +
				       res->expire.manifest_lists_deleted);
	st->orphans_deleted += (int64_t)res->orphans.files_deleted;
	if (res->manifests.snapshot_id >= 0)
		st->manifests_rewritten +=
			(int64_t)(res->manifests.manifests_before - res->manifests.manifests_after);
}

static void *runner_main(void *arg)
{
	floe_maint_runner *r = arg;
	floe_mutex_lock(&r->mu);
	for (;;) {
		int64_t now = floe_now_ms();
		bool final = r->stop && r->finish && !r->final_done && r->commits_since > 0 &&
			     r->sched.on_finish;
		if (r->stop && !final)
			break;
		if (!final && (!due(r, now) || now < r->not_before_ms)) {
			/* wake for the next interval, the end of a delay, or news */
			int64_t wait = 1000;
			if (now < r->not_before_ms)
				wait = r->not_before_ms - now;
			else if (r->sched.interval_ms > 0 && r->commits_since > 0)
				wait = r->last_end_ms + r->sched.interval_ms - now;
			if (wait < 10)
				wait = 10;
			if (wait > 60000)
				wait = 60000;
			floe_cond_timedwait(&r->cv, &r->mu, wait);
			continue;
		}
		/* take the counters: commits from now on count towards the next run */
		floe_maint_commit taken = r->since;
		int64_t taken_commits = r->commits_since;
		memset(&r->since, 0, sizeof(r->since));
		r->commits_since = 0;
		r->st.running = true;
		if (final)
			r->final_done = true;
		floe_mutex_unlock(&r->mu);

		floe_maintain_result res;
		floe_error err;
		floe_error_clear(&err);
		int64_t t0 = floe_now_ms();
		FLOE_INFO("maintenance of %s.%s: starting%s (%lld commits since the last run)", r->ns,
			  r->name, final ? " (final run)" : "", (long long)taken_commits);
		int rc = run_once(r, &res, &err);

		floe_mutex_lock(&r->mu);
		r->st.running = false;
		int64_t end = floe_now_ms();
		if (rc == FLOE_ECONFLICT && res.lock_held) {
			/* the lock is elsewhere: give the counters back, look again later */
			r->since.data_files += taken.data_files;
			r->since.data_bytes += taken.data_bytes;
			r->since.pos_delete_files += taken.pos_delete_files;
			r->since.eq_delete_files += taken.eq_delete_files;
			r->commits_since += taken_commits;
			r->not_before_ms = end + r->sched.lock_check_delay_ms;
			r->st.lock_waits++;
			size_t hn = strnlen(err.msg, sizeof(r->st.lock_holder) - 1);
			memcpy(r->st.lock_holder, err.msg, hn);
			r->st.lock_holder[hn] = 0;
			FLOE_INFO("maintenance of %s.%s: %s; trying again in %lld ms", r->ns, r->name,
				  err.msg, (long long)r->sched.lock_check_delay_ms);
			continue;
		}
		r->last_end_ms = end;
		r->not_before_ms = end + r->sched.rate_limit_ms;
		r->st.last_run_end_ms = end;
		r->st.last_duration_ms = end - t0;
		if (rc == FLOE_OK || (rc == FLOE_ECANCELED && res.steps_run)) {
			r->st.runs++;
			account(r, &res);
			snprintf(r->st.lock_holder, sizeof(r->st.lock_holder),
				 "this pipeline's maintenance took it for its last run (%lld ms) and "
				 "released it",
				 (long long)(end - t0));
		}
		if (rc && rc != FLOE_ECANCELED) {
			r->st.failures++;
			size_t n = strnlen(err.msg, sizeof(r->st.last_error) - 1);
			memcpy(r->st.last_error, err.msg, n);
			r->st.last_error[n] = 0;
			FLOE_WARN("maintenance of %s.%s failed: %s", r->ns, r->name, err.msg);
		} else if (rc == FLOE_OK) {
			FLOE_INFO("maintenance of %s.%s: %zu data files -> %zu, %zu delete files "
				  "removed, %zu snapshots expired, %zu orphans deleted (%lld ms)",
				  r->ns, r->name, res.compact.data_files_rewritten,
				  res.compact.data_files_added, res.compact.delete_files_removed,
				  res.expire.snapshots_expired,
				  res.orphans.files_deleted, (long long)(end - t0));
		}
		floe_cond_broadcast(&r->cv);
	}
	floe_mutex_unlock(&r->mu);
	return NULL;
}

static int64_t summary_i64(const floe_snapshot *s, const char *key)
{
	const char *v = floe_snapshot_summary(s, key);
	int64_t x;
	return v && floe_parse_i64(v, strlen(v), &x) && x > 0 ? x : 0;
}

/* The commits since the table was last maintained, from its history. */
static void seed_from_history(floe_maint_runner *r)
{
	floe_table *t = NULL;
	floe_error err;
	floe_error_clear(&err);
	if (floe_table_load(&t, r->cat, r->ns, r->name, &err)) {
		FLOE_WARN("maintenance of %s.%s: cannot read its history (%s): counting from now",
			  r->ns, r->name, err.msg);
		return;
	}
	const floe_metadata *m = floe_table_metadata(t);
	floe_maint_commit c = {0, 0, 0, 0};
	int64_t commits = 0, last_ms = -1;
	size_t guard = 0;
	const floe_snapshot *from = floe_metadata_branch_head(m, r->opts.compact.branch);
	if (!from)
		from = floe_metadata_branch_head(m, NULL);
	for (const floe_snapshot *s = from; s && guard++ < 1000000;
	     s = floe_metadata_parent(m, s)) {
		const char *op = floe_snapshot_summary(s, "operation");
		if (floe_snapshot_summary(s, FLOE_MAINTENANCE_SUMMARY_KEY) ||
		    (op && !strcmp(op, "replace"))) {
			last_ms = s->timestamp_ms;
			break;
		}
		commits++;
		c.data_files += summary_i64(s, "added-data-files");
		c.data_bytes += summary_i64(s, "added-files-size");
		c.pos_delete_files +=
			summary_i64(s, "added-position-delete-files") + summary_i64(s, "added-dvs");
		c.eq_delete_files += summary_i64(s, "added-equality-delete-files");
	}
	r->since = c;
	r->commits_since = commits;
	if (last_ms >= 0) {
		/* the last run's end, as far as the table tells */
		r->last_end_ms = last_ms;
		r->not_before_ms = last_ms + r->sched.rate_limit_ms;
	}
	if (commits)
		FLOE_INFO("maintenance of %s.%s: %lld commits (%lld data files) since it was last "
			  "maintained",
			  r->ns, r->name, (long long)commits, (long long)c.data_files);
	floe_table_free(t);
}

int floe_maint_runner_start(floe_maint_runner **out, const floe_catalog *cat, const char *ns,
			    const char *name, const floe_maintain_opts *opts,
			    const floe_maint_schedule *sched, floe_error *err)
{
	floe_maint_schedule dflt = FLOE_MAINT_SCHEDULE_INIT;
	floe_maint_runner *r = floe_calloc(1, sizeof(*r));
	int rc;
	*out = NULL;
	if (!r || !(r->ns = floe_strdup(ns)) || !(r->name = floe_strdup(name))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	r->sched = sched ? *sched : dflt;
	if (opts) {
		r->opts = *opts;
	} else {
		floe_maintain_opts o = FLOE_MAINTAIN_OPTS_INIT;
		r->opts = o;
	}
	r->opts.progress = NULL;
	r->opts.orphan_fn = NULL;
	r->opts.interrupted = interrupted;
	r->opts.payload = r;
	r->last_end_ms = floe_now_ms();
	atomic_init(&r->interrupt, 0);
	if ((rc = floe_catalog_reopen(cat, &r->cat, err)))
		goto fail;
	if (floe_mutex_init(&r->mu) || floe_cond_init(&r->cv)) {
		rc = floe_error_oom(err);
		goto fail;
	}
	/* before the thread and before the caller commits: nothing counts twice */
	seed_from_history(r);
	if (floe_thread_start(&r->thread, "floe-maintain", runner_main, r)) {
		rc = floe_error_oomf(err, "cannot start the maintenance thread");
		floe_cond_destroy(&r->cv);
		floe_mutex_destroy(&r->mu);
		goto fail;
	}
	*out = r;
	return FLOE_OK;
fail:
	if (r) {
		floe_catalog_free(r->cat);
		floe_free(r->ns);
		floe_free(r->name);
		floe_free(r);
	}
	return rc;
}

void floe_maint_runner_note_commit(floe_maint_runner *r, const floe_maint_commit *c)
{
	floe_mutex_lock(&r->mu);
	r->since.data_files += c->data_files;
	r->since.data_bytes += c->data_bytes;
	r->since.pos_delete_files += c->pos_delete_files;
	r->since.eq_delete_files += c->eq_delete_files;
	r->commits_since++;
	floe_cond_broadcast(&r->cv);
	floe_mutex_unlock(&r->mu);
}

void floe_maint_runner_get_stats(floe_maint_runner *r, floe_maint_runner_stats *out)
{
	floe_mutex_lock(&r->mu);
	*out = r->st;
	out->commits_pending = r->commits_since;
	floe_mutex_unlock(&r->mu);
}

void floe_maint_runner_stop(floe_maint_runner *r, bool finish, floe_maint_runner_stats *last)
{
	if (last)
		memset(last, 0, sizeof(*last));
	if (!r)
		return;
	floe_mutex_lock(&r->mu);
	r->stop = true;
	r->finish = finish;
	if (!finish)
		atomic_store(&r->interrupt, 1);
	floe_cond_broadcast(&r->cv);
	floe_mutex_unlock(&r->mu);
	floe_thread_join(&r->thread);
	if (last) {
		*last = r->st;
		last->commits_pending = r->commits_since;
	}
	floe_cond_destroy(&r->cv);
	floe_mutex_destroy(&r->mu);
	floe_catalog_free(r->cat);
	floe_free(r->ns);
	floe_free(r->name);
	floe_free(r);
}
