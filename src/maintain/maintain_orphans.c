/*
 * maintain_orphans.c — delete files under a table's location that no
 * metadata reaches.
 *
 * DESIGN: the valid set is everything any snapshot in the current metadata
 * references (manifest lists, manifests, every entry's file — deleted
 * entries too, conservatively), plus the current metadata file, the files
 * of its metadata log, statistics files and the version hint. Paths are
 * compared in a normal form (file:/x, file:///x and /x are one file), so a
 * table whose writers spelled URIs differently is safe.
 *
 * A file that is not valid yet may still be a writer's: a pipeline's data
 * files exist for a whole checkpoint interval before their snapshot, a
 * commit's manifests across its retries, the catalog's metadata file until
 * the swap. Three rules keep them:
 *   - the age: files younger than the cutoff are never touched;
 *   - in-progress names: a file whose name starts with '.' is being written
 *     (the local FileIO writes ".<name>.<uuid>.tmp" and renames it; the
 *     file-system catalog's next metadata file is ".<uuid>.metadata.json.tmp"
 *     until its rename; writer leases are ".floe-lease-<uuid>.json"): it is a
 *     candidate only when older than a day, whatever the cutoff;
 *   - writer leases (table/lease.h): no file modified after the oldest live
 *     lease's "since" (less a margin for clock skew) is deleted.
 * The order makes the leases sufficient: list the files, then read the
 * leases, then read the metadata again (a commit that landed meanwhile is
 * valid). A listed file existed, so its writer's lease did; the writer drops
 * the lease only after its commit landed, so cleanup either saw the lease
 * or reads metadata that names the file.
 */
#include <string.h>

#include "maintain/maintain_int.h"
#include "table/lease.h"
#include "util/opts.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/timeutil.h"

/* files per floe_io_remove_batch (S3 caps a DeleteObjects at 1000 keys) */
#define ORPHAN_BATCH 1000
#define DAY_MS INT64_C(86400000)

/* Add what the current metadata reaches; snapshots whose manifest list is
 * already in the set (an earlier pass) are not read again. */
static int valid_set(floe_table *t, floe_reach *valid, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t);
	int rc = FLOE_OK;
	for (size_t i = 0; i < m->n_snapshots && !rc; i++) {
		const floe_snapshot *s = &m->snapshots[i];
		if (s->manifest_list && floe_reach_has(valid, s->manifest_list))
			continue;
		for (size_t k = 0; k < s->n_v1_manifests && !rc; k++)
			if (floe_reach_add(valid, s->v1_manifests[k], FLOE_REACH_MANIFEST))
				rc = floe_error_oom(err);
		if (!rc)
			rc = floe_reach_snapshot(valid, t, s, err);
	}
	if (!rc && floe_reach_metadata(valid, m))
		rc = floe_error_oom(err);
	return rc;
}

typedef struct candidate {
	char *path;
	uint64_t size;
	int64_t mtime_ms;
} candidate;

typedef struct orphan_ctx {
	floe_reach *valid;
	int64_t cutoff, hidden_cutoff;
	floe_orphan_result *res;
	/* not valid and old enough when listed: judged after the leases */
	candidate *c;
	size_t n, cap;
} orphan_ctx;

static const char *base_name(const char *path)
{
	const char *base = strrchr(path, '/');
	return base ? base + 1 : path;
}

static bool protected_name(const char *path)
{
	const char *base = base_name(path);
	/* the hint is rewritten in place by file-system commits */
	return strcmp(base, "version-hint.text") == 0 || strcmp(base, "version-hint.txt") == 0;
}

static int list_cb(const floe_file_info *fi, void *payload)
{
	orphan_ctx *c = payload;
	c->res->files_scanned++;
	if (floe_reach_has(c->valid, fi->path) || protected_name(fi->path))
		return 0;
	/* in progress by name: never within a day, whatever the cutoff */
	int64_t cutoff = base_name(fi->path)[0] == '.' && c->hidden_cutoff < c->cutoff
				 ? c->hidden_cutoff
				 : c->cutoff;
	if (fi->mtime_ms >= cutoff) {
		c->res->files_too_young++;
		return 0;
	}
	if (FLOE_ARRAY_RESERVE(c->c, c->cap, c->n + 1) || !(c->c[c->n].path = floe_strdup(fi->path)))
		return FLOE_ENOMEM;
	c->c[c->n].size = fi->size;
	c->c[c->n].mtime_ms = fi->mtime_ms;
	c->n++;
	return 0;
}

int floe_delete_orphan_files(floe_table *t, const floe_orphan_opts *opts, floe_orphan_fn fn,
			     void *payload, floe_orphan_result *res, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_orphan_opts", "FLOE_ORPHAN_OPTS_INIT", err);
	floe_orphan_opts dflt = FLOE_ORPHAN_OPTS_INIT;
	const floe_orphan_opts *o = opts ? opts : &dflt;
	floe_reach valid;
	orphan_ctx c;
	floe_lease_scan leases;
	char *mdir = NULL;
	const char **doomed = NULL;
	int *codes = NULL;
	size_t n_doomed = 0;
	int rc;
	int64_t now = floe_now_ms();
	memset(res, 0, sizeof(*res));
	floe_reach_init(&valid, false, true);
	memset(&c, 0, sizeof(c));
	c.valid = &valid;
	c.cutoff = o->older_than_ms >= 0 ? o->older_than_ms : now - 3 * DAY_MS;
	c.hidden_cutoff = now - DAY_MS;
	c.res = res;
	/* this handle's own lease, left by its last commit, protects nothing now */
	floe_table__lease_release_idle(t);
	/* what the metadata reaches now: most files, so few are kept for later */
	if ((rc = (floe_table_catalog(t) ? floe_table_refresh(t, err) : FLOE_OK)) ||
	    (rc = valid_set(t, &valid, err)))
		goto done;
	const char *loc = o->location ? o->location : floe_table_metadata(t)->location;
	if (!(mdir = floe_metadata_dir(floe_table_metadata(t)))) {
		rc = floe_error_oom(err);
		goto done;
	}
	rc = floe_io_list(floe_table_io(t), loc, list_cb, &c, err);
	if (rc == FLOE_ENOMEM)
		floe_error_set(err, rc, "out of memory");
	if (rc)
		goto done;
	/* after the listing: the writers' leases, then the metadata once more */
	if ((rc = floe_lease_scan_dir(&leases, floe_table_io(t), mdir, floe_now_ms(), err)))
		goto done;
	if ((rc = (floe_table_catalog(t) ? floe_table_refresh(t, err) : FLOE_OK)) ||
	    (rc = valid_set(t, &valid, err)))
		goto done;
	int64_t leased = leases.oldest_since == INT64_MIN ? INT64_MIN
			 : leases.oldest_since == INT64_MAX ? INT64_MAX
							    : leases.oldest_since - FLOE_LEASE_MARGIN_MS;
	if (leases.live)
		FLOE_DEBUG("orphans: %zu live writer leases protect files newer than %lld",
			   leases.live, (long long)leased);
	doomed = floe_calloc(c.n ? c.n : 1, sizeof(*doomed));
	codes = floe_calloc(ORPHAN_BATCH, sizeof(*codes));
	if (!doomed || !codes) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < c.n; i++) {
		candidate *k = &c.c[i];
		if (floe_reach_has(&valid, k->path))
			continue; /* committed while we listed */
		if (k->mtime_ms >= leased ||
		    (floe_lease_is_lease(k->path) &&
		     floe_lease_file_live(floe_table_io(t), k->path, k->mtime_ms, floe_now_ms()))) {
			res->files_leased++;
			continue;
		}
		res->files_found++;
		res->bytes += (int64_t)k->size;
		if (fn && (rc = fn(k->path, k->size, k->mtime_ms, payload)))
			goto done;
		if (o->dry_run)
			continue;
		/* deleted in batches (S3: DeleteObjects), after the whole check */
		doomed[n_doomed++] = k->path;
	}
	for (size_t i = 0; i < n_doomed; i += ORPHAN_BATCH) {
		size_t m = n_doomed - i < ORPHAN_BATCH ? n_doomed - i : ORPHAN_BATCH;
		floe_error e;
		floe_error_clear(&e);
		if (floe_io_remove_batch(floe_table_io(t), doomed + i, m, codes, &e))
			FLOE_WARN("orphans: deleting a batch of %zu files stopped: %s", m, e.msg);
		for (size_t j = 0; j < m; j++)
			if (!codes[j])
				res->files_deleted++;
	}
done:
	floe_free(doomed);
	floe_free(codes);
	for (size_t i = 0; i < c.n; i++)
		floe_free(c.c[i].path);
	floe_free(c.c);
	floe_free(mdir);
	floe_reach_reset(&valid);
	return floe_error_prefix(err, rc, "delete orphan files: ");
}
