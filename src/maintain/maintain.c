/*
 * maintain.c — the maintenance run: the steps in their one safe order,
 * under the table's lock.
 */
#include <stdio.h>
#include <string.h>

#include "maintain/maintain_int.h"
#include "util/opts.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/timeutil.h"

int floe_maint_lock_target(floe_table *t, char **uri, char **lock_id, floe_error *err)
{
	floe_catalog *cat = floe_table_catalog(t);
	*uri = NULL;
	*lock_id = NULL;
	if (!cat)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "maintenance locks need a table opened through a catalog");
	size_t n = strlen(cat->name) + strlen(floe_table_namespace(t)) +
		   strlen(floe_table_name(t)) + 3;
	if (!(*lock_id = floe_malloc(n)) ||
	    (cat->lock_uri && !(*uri = floe_strdup(cat->lock_uri)))) {
		floe_free(*lock_id);
		*lock_id = NULL;
		return floe_error_oom(err);
	}
	snprintf(*lock_id, n, "%s.%s.%s", cat->name, floe_table_namespace(t), floe_table_name(t));
	return FLOE_OK;
}

static int stopped(const floe_maintain_opts *o, floe_error *err)
{
	if (o->interrupted && o->interrupted(o->payload))
		return floe_error_set(err, FLOE_ECANCELED, "interrupted");
	return FLOE_OK;
}

static void report(const floe_maintain_opts *o, floe_maintain_step step, const char *what)
{
	if (o->progress)
		o->progress(step, what, 0, 0, o->payload);
}

int floe_maintain(floe_table *t, const floe_maintain_opts *opts, floe_maintain_result *res,
		  floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_maintain_opts", "FLOE_MAINTAIN_OPTS_INIT", err);
	floe_maintain_opts dflt = FLOE_MAINTAIN_OPTS_INIT;
	const floe_maintain_opts *o = opts ? opts : &dflt;
	floe_maint_lock *lock = NULL;
	char *uri = NULL, *lock_id = NULL;
	int64_t start = floe_monotonic_ns();
	int rc = FLOE_OK;
	memset(res, 0, sizeof(*res));
	res->manifests.snapshot_id = -1;
	if (floe_table_catalog(t) && floe_table_catalog(t)->managed_maintenance)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "the catalog maintains %s.%s itself; floe does not run "
				      "maintenance there",
				      floe_table_namespace(t), floe_table_name(t));
	if (!o->no_lock && !o->dry_run) {
		if ((rc = floe_maint_lock_target(t, &uri, &lock_id, err)))
			return rc;
		rc = floe_maint_lock_acquire(&lock, o->lock_uri ? o->lock_uri : uri,
					     o->lock_id ? o->lock_id : lock_id, o->lock_stale_ms,
					     err);
		floe_free(uri);
		floe_free(lock_id);
		if (rc) {
			res->lock_held = rc == FLOE_ECONFLICT;
			return rc;
		}
		/* the table may have changed while we waited for nobody */
		if ((rc = floe_table_refresh(t, err)))
			goto done;
	}
	/* Nothing is committed on top of, or deleted from, a table whose current
	 * snapshots lost entries (a truncated manifest list or manifest): every
	 * branch and tag head is read whole first. The steps' own reads check
	 * what they read too, so an older corrupt snapshot stops its step before
	 * it deletes anything. */
	if ((rc = floe_table__verify_refs(t, err)))
		goto done;
	if (o->steps & FLOE_STEP_CONVERT_DELETES) {
		floe_convert_deletes_opts cv = FLOE_CONVERT_DELETES_OPTS_INIT;
		cv.dry_run = o->dry_run;
		report(o, FLOE_STEP_CONVERT_DELETES, "converting equality deletes");
		if ((rc = floe_convert_deletes(t, &cv, &res->convert, err)))
			goto done;
		res->steps_run |= FLOE_STEP_CONVERT_DELETES;
		if (lock && (rc = floe_maint_lock_check(lock, err)))
			goto done;
		if ((o->steps & FLOE_STEP_COMPACT) && (rc = floe_table_refresh(t, err)))
			goto done;
	}
	if (o->steps & FLOE_STEP_COMPACT) {
		floe_compact_opts c = o->compact;
		c.dry_run = c.dry_run || o->dry_run;
		report(o, FLOE_STEP_COMPACT, "rewriting data files");
		if ((rc = floe_compact__run(t, &c, o->progress, o->interrupted, o->payload,
					     &res->compact, err)))
			goto done;
		res->steps_run |= FLOE_STEP_COMPACT;
		if (lock && (rc = floe_maint_lock_check(lock, err)))
			goto done;
	}
	if ((o->steps & FLOE_STEP_EXPIRE) && (rc = stopped(o, err)))
		goto done;
	if (o->steps & FLOE_STEP_EXPIRE) {
		floe_expire_opts e = o->expire;
		e.dry_run = e.dry_run || o->dry_run;
		report(o, FLOE_STEP_EXPIRE, "expiring snapshots");
		if ((rc = floe_expire_snapshots(t, &e, &res->expire, err)))
			goto done;
		res->steps_run |= FLOE_STEP_EXPIRE;
		if (lock && (rc = floe_maint_lock_check(lock, err)))
			goto done;
	}
	if ((o->steps & FLOE_STEP_ORPHANS) && (rc = stopped(o, err)))
		goto done;
	if (o->steps & FLOE_STEP_ORPHANS) {
		floe_orphan_opts r = o->orphans;
		r.dry_run = r.dry_run || o->dry_run;
		report(o, FLOE_STEP_ORPHANS, "deleting orphan files");
		if ((rc = floe_delete_orphan_files(t, &r, o->orphan_fn, o->payload, &res->orphans, err)))
			goto done;
		res->steps_run |= FLOE_STEP_ORPHANS;
		if (lock && (rc = floe_maint_lock_check(lock, err)))
			goto done;
	}
	if ((o->steps & FLOE_STEP_REWRITE_MANIFESTS) && (rc = stopped(o, err)))
		goto done;
	if (o->steps & FLOE_STEP_REWRITE_MANIFESTS) {
		floe_rewrite_manifests_opts m = o->manifests;
		m.dry_run = m.dry_run || o->dry_run;
		report(o, FLOE_STEP_REWRITE_MANIFESTS, "rewriting manifests");
		if ((rc = floe_rewrite_manifests(t, &m, &res->manifests, err)))
			goto done;
		res->steps_run |= FLOE_STEP_REWRITE_MANIFESTS;
	}
done:
	floe_maint_lock_release(lock);
	res->duration_ms = (floe_monotonic_ns() - start) / 1000000;
	return floe_error_prefix(err, rc, "maintain %s.%s: ", floe_table_namespace(t),
				      floe_table_name(t));
}

bool floe_maintain_parse_steps(const char *list, unsigned *out)
{
	static const struct {
		const char *name, *alias;
		unsigned bit;
	} steps[] = {
		{"compact", "rewrite-data-files", FLOE_STEP_COMPACT},
		{"expire", "expire-snapshots", FLOE_STEP_EXPIRE},
		{"orphans", "delete-orphan-files", FLOE_STEP_ORPHANS},
		{"manifests", "rewrite-manifests", FLOE_STEP_REWRITE_MANIFESTS},
		{"convert-deletes", "convert-equality-deletes", FLOE_STEP_CONVERT_DELETES},
	};
	*out = 0;
	for (const char *p = list; p && *p;) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t n = strcspn(p, ", ");
		if (!n)
			break;
		size_t i;
		for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
			if ((strlen(steps[i].name) == n && !strncmp(p, steps[i].name, n)) ||
			    (strlen(steps[i].alias) == n && !strncmp(p, steps[i].alias, n)))
				break;
		if (i == sizeof(steps) / sizeof(steps[0]))
			return false;
		*out |= steps[i].bit;
		p += n;
	}
	return *out != 0;
}
