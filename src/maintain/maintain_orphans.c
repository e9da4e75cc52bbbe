/*
 * maintain_orphans.c — delete files under a table's location that no
 * metadata reaches.
 *
 * DESIGN: the valid set is everything any snapshot in the current metadata
 * references (manifest lists, manifests, every entry's file — deleted
 * entries too, conservatively), plus the current metadata file, the files
 * of its metadata log, statistics files and the version hint. Paths are
 * compared in a normal form (file:/x, file:///x and /x are one file), so a
 * table whose writers spelled URIs differently is safe. Files younger than
 * the cutoff are never touched: they may belong to a commit in progress (a
 * running pipeline's files are written long before their snapshot exists).
 */
#include <string.h>

#include "maintain/maintain_int.h"
#include "util/opts.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/timeutil.h"

#define DAY_MS INT64_C(86400000)

static int valid_set(floe_table *t, floe_reach *valid, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t);
	int rc = FLOE_OK;
	for (size_t i = 0; i < m->n_snapshots && !rc; i++) {
		const floe_snapshot *s = &m->snapshots[i];
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

typedef struct orphan_ctx {
	floe_table *t;
	floe_reach *valid;
	int64_t cutoff;
	bool dry_run;
	floe_orphan_fn fn;
	void *payload;
	floe_orphan_result *res;
	/* found orphans, deleted after the listing finishes */
	char **paths;
	size_t n, cap;
} orphan_ctx;

static bool protected_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* the hint is rewritten in place by file-system commits */
	return strcmp(base, "version-hint.text") == 0 || strcmp(base, "version-hint.txt") == 0;
}

static int list_cb(const floe_file_info *fi, void *payload)
{
	orphan_ctx *c = payload;
	c->res->files_scanned++;
	if (floe_reach_has(c->valid, fi->path) || protected_name(fi->path))
		return 0;
	if (fi->mtime_ms >= c->cutoff) {
		c->res->files_too_young++;
		return 0;
	}
	c->res->files_found++;
	c->res->bytes += (int64_t)fi->size;
	if (c->fn) {
		int rc = c->fn(fi->path, fi->size, fi->mtime_ms, c->payload);
		if (rc)
			return rc;
	}
	if (FLOE_ARRAY_RESERVE(c->paths, c->cap, c->n + 1) || !(c->paths[c->n] = floe_strdup(fi->path)))
		return FLOE_ENOMEM;
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
	int rc;
	memset(res, 0, sizeof(*res));
	floe_reach_init(&valid, false, true);
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.valid = &valid;
	c.cutoff = o->older_than_ms >= 0 ? o->older_than_ms : floe_now_ms() - 3 * DAY_MS;
	c.dry_run = o->dry_run;
	c.fn = fn;
	c.payload = payload;
	c.res = res;
	/* refresh first: a commit that landed since loading must count as valid */
	if ((rc = (floe_table_catalog(t) ? floe_table_refresh(t, err) : FLOE_OK)) ||
	    (rc = valid_set(t, &valid, err)))
		goto done;
	const char *loc = o->location ? o->location : floe_table_metadata(t)->location;
	rc = floe_io_list(floe_table_io(t), loc, list_cb, &c, err);
	if (rc == FLOE_ENOMEM)
		floe_error_set(err, rc, "out of memory");
	if (rc)
		goto done;
	for (size_t i = 0; i < c.n && !o->dry_run; i++) {
		floe_error e;
		floe_error_clear(&e);
		if (floe_io_remove(floe_table_io(t), c.paths[i], &e) == 0)
			res->files_deleted++;
		else if (e.code != FLOE_ENOTFOUND)
			FLOE_WARN("orphans: cannot delete '%s': %s", c.paths[i], e.msg);
	}
done:
	for (size_t i = 0; i < c.n; i++)
		floe_free(c.paths[i]);
	floe_free(c.paths);
	floe_reach_reset(&valid);
	return floe_error_prefix(err, rc, "delete orphan files: ");
}
