/*
 * maintain_expire.c — expire snapshots and delete what only they reached.
 *
 * DESIGN: the retained set is decided per ref as Java's RemoveSnapshots
 * does (branch ancestry kept while within min-snapshots-to-keep or newer
 * than the cutoff; tags keep their snapshot until max-ref-age-ms; snapshots
 * outside every branch kept when newer than the cutoff), plus floe's rule:
 * the newest snapshot of each pipeline (floe.pipeline-id) stays while the
 * pipeline may resume from it (maintain_pipelines.c: not forgotten, and not
 * a completed one-shot load past history.expire.keep-pipeline-state-for),
 * because its summary holds the pipeline's committed offsets. Every one-shot
 * `floe ingest` has a pipeline of its own: holding each one's last snapshot
 * forever kept the files of every daily load on disk. After the metadata
 * commit, file cleanup is reachability-based: candidates are everything the
 * expired snapshots referenced (manifest lists, manifests, every entry's
 * file); a candidate is deleted unless a retained snapshot still references
 * it (manifest list, manifest or a live entry).
 */
#include <string.h>

#include "maintain/maintain_int.h"
#include "util/opts.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/timeutil.h"

#define DAY_MS INT64_C(86400000)

static bool in_ids(const int64_t *ids, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

typedef struct plan {
	int64_t *keep;
	size_t n_keep;
	int64_t *expire;
	size_t n_expire;
	const char **drop_refs; /* tags/branches past max-ref-age-ms */
	size_t n_drop_refs;
	size_t n_held; /* kept only as a pipeline's state */
} plan;

static int hold_state(const floe_maint_pstate *st, void *payload)
{
	plan *p = payload;
	if (st->held && !in_ids(p->keep, p->n_keep, st->s->snapshot_id)) {
		p->keep[p->n_keep++] = st->s->snapshot_id;
		p->n_held++;
	}
	return 0;
}

static int decide(plan *p, floe_arena *a, const floe_metadata *m, const floe_expire_opts *o)
{
	int64_t now = floe_now_ms();
	int64_t max_age = floe_metadata_property_i64(m, "history.expire.max-snapshot-age-ms", 5 * DAY_MS);
	int64_t min_keep = o->retain_last >= 0
				   ? o->retain_last
				   : floe_metadata_property_i64(m, "history.expire.min-snapshots-to-keep", 1);
	int64_t cutoff = o->older_than_ms >= 0 ? o->older_than_ms : now - max_age;
	int64_t max_ref_age = floe_metadata_property_i64(m, "history.expire.max-ref-age-ms", -1);
	memset(p, 0, sizeof(*p));
	p->keep = floe_arena_calloc(a, m->n_snapshots + 1, sizeof(int64_t));
	p->expire = floe_arena_calloc(a, m->n_snapshots + 1, sizeof(int64_t));
	p->drop_refs = floe_arena_calloc(a, m->n_refs + 1, sizeof(char *));
	if (!p->keep || !p->expire || !p->drop_refs)
		return FLOE_ENOMEM;
	if (min_keep < 1)
		min_keep = 1;
	for (size_t r = 0; r < m->n_refs; r++) {
		const floe_snapshot_ref *ref = &m->refs[r];
		const floe_snapshot *head = floe_metadata_snapshot(m, ref->snapshot_id);
		int64_t ref_age = ref->max_ref_age_ms >= 0 ? ref->max_ref_age_ms : max_ref_age;
		if (!head)
			continue;
		if (strcmp(ref->name, "main") != 0 && ref_age >= 0 && head->timestamp_ms < now - ref_age) {
			p->drop_refs[p->n_drop_refs++] = ref->name;
			continue;
		}
		if (!in_ids(p->keep, p->n_keep, head->snapshot_id))
			p->keep[p->n_keep++] = head->snapshot_id;
		if (ref->is_tag)
			continue;
		int64_t keep_n = ref->min_snapshots_to_keep >= 0 ? ref->min_snapshots_to_keep : min_keep;
		int64_t bcut = ref->max_snapshot_age_ms >= 0 ? now - ref->max_snapshot_age_ms : cutoff;
		int64_t count = 0;
		for (const floe_snapshot *s = head; s; s = floe_metadata_parent(m, s)) {
			if (count >= keep_n && s->timestamp_ms < bcut)
				break;
			if (!in_ids(p->keep, p->n_keep, s->snapshot_id))
				p->keep[p->n_keep++] = s->snapshot_id;
			count++;
		}
	}
	/* snapshots in no ref's ancestry: kept while newer than the cutoff */
	for (size_t i = 0; i < m->n_snapshots; i++) {
		const floe_snapshot *s = &m->snapshots[i];
		bool in_branch = false;
		for (size_t r = 0; r < m->n_refs && !in_branch; r++) {
			if (m->refs[r].is_tag)
				continue;
			for (const floe_snapshot *x = floe_metadata_snapshot(m, m->refs[r].snapshot_id);
			     x && !in_branch; x = floe_metadata_parent(m, x))
				in_branch = x->snapshot_id == s->snapshot_id;
		}
		if (!in_branch && s->timestamp_ms >= cutoff && !in_ids(p->keep, p->n_keep, s->snapshot_id))
			p->keep[p->n_keep++] = s->snapshot_id;
	}
	/* the newest snapshot of every pipeline keeps its offsets while the
	 * pipeline may resume from it (maintain_pipelines.c) */
	if (floe_maint__pipelines(m, now, hold_state, p))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < m->n_snapshots; i++)
		if (!in_ids(p->keep, p->n_keep, m->snapshots[i].snapshot_id))
			p->expire[p->n_expire++] = m->snapshots[i].snapshot_id;
	return FLOE_OK;
}

/* ---- file cleanup ------------------------------------------------------------------ */

static void count_deleted(floe_expire_result *res, uint64_t kind)
{
	switch (kind) {
	case FLOE_REACH_DATA: res->data_files_deleted++; break;
	case FLOE_REACH_POS_DELETES:
	case FLOE_REACH_EQ_DELETES: res->delete_files_deleted++; break;
	case FLOE_REACH_MANIFEST_LIST: res->manifest_lists_deleted++; break;
	case FLOE_REACH_MANIFEST: res->manifests_deleted++; break;
	default: res->other_files_deleted++; break;
	}
}

typedef struct del_batch {
	char **paths;
	uint64_t *kinds;
	int64_t *sizes;
	int *codes;
	size_t n, cap;
} del_batch;

static void flush_batch(floe_table *t, del_batch *d, floe_expire_result *res)
{
	if (!d->n)
		return;
	floe_error e;
	floe_error_clear(&e);
	if (floe_io_remove_batch(floe_table_io(t), (const char *const *)d->paths, d->n, d->codes,
				 &e))
		FLOE_WARN("expire: deleting a batch of %zu files stopped: %s", d->n, e.msg);
	size_t ok = 0;
	for (size_t i = 0; i < d->n; i++) {
		if (!d->codes[i]) {
			res->bytes_deleted += d->sizes[i];
			count_deleted(res, d->kinds[i]);
			ok++;
		}
		floe_free(d->paths[i]);
	}
	FLOE_DEBUG("expire: deleted a batch of %zu files (%zu asked)", ok, d->n);
	d->n = 0;
}

/*
 * Delete the candidates no retained snapshot reaches, in batches (one
 * floe_io_remove_batch each: S3 DeleteObjects requests): data and delete
 * files first, then manifests, then manifest lists, so an interrupted run
 * never leaves a manifest list naming a missing manifest.
 */
static void delete_unreached(floe_table *t, const floe_reach *cand, const floe_reach *keep,
			     size_t batch, floe_expire_result *res)
{
	static const uint64_t order[][2] = {{FLOE_REACH_DATA, FLOE_REACH_EQ_DELETES},
					    {FLOE_REACH_MANIFEST, FLOE_REACH_MANIFEST},
					    {FLOE_REACH_MANIFEST_LIST, FLOE_REACH_METADATA}};
	del_batch d = {0};
	d.cap = batch ? batch : 1;
	d.paths = floe_calloc(d.cap, sizeof(*d.paths));
	d.kinds = floe_calloc(d.cap, sizeof(*d.kinds));
	d.sizes = floe_calloc(d.cap, sizeof(*d.sizes));
	d.codes = floe_calloc(d.cap, sizeof(*d.codes));
	if (!d.paths || !d.kinds || !d.sizes || !d.codes) {
		FLOE_WARN("expire: out of memory: no file deleted");
		goto done;
	}
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++) {
		for (size_t i = 0; i < cand->files.cap; i++) {
			const floe_hmap_slot *s = &cand->files.slots[i];
			if (!s->key || s->val < order[o][0] || s->val > order[o][1])
				continue;
			char *p = floe_strndup(s->key, s->klen);
			if (!p)
				continue;
			if (floe_reach_has(keep, p)) {
				floe_free(p);
				continue;
			}
			floe_file_info fi;
			d.sizes[d.n] = floe_io_stat(floe_table_io(t), p, &fi, NULL) == 0
					       ? (int64_t)fi.size
					       : 0;
			d.kinds[d.n] = s->val;
			d.paths[d.n++] = p;
			if (d.n == d.cap)
				flush_batch(t, &d, res);
		}
		/* a class is gone before the next one's deletes start */
		flush_batch(t, &d, res);
	}
done:
	floe_free(d.paths);
	floe_free(d.kinds);
	floe_free(d.sizes);
	floe_free(d.codes);
}

static int cleanup(floe_table *t, const floe_metadata *before, const floe_metadata *after,
		   const plan *p, size_t batch, floe_expire_result *res, floe_error *err)
{
	floe_reach keep, cand;
	int rc = FLOE_OK;
	floe_reach_init(&keep, true, true);
	floe_reach_init(&cand, false, false);
	for (size_t i = 0; i < after->n_snapshots && !rc; i++)
		rc = floe_reach_snapshot(&keep, t, &after->snapshots[i], err);
	if (!rc && floe_reach_metadata(&keep, after))
		rc = floe_error_oom(err);
	for (size_t i = 0; i < p->n_expire && !rc; i++) {
		const floe_snapshot *s = floe_metadata_snapshot(before, p->expire[i]);
		if (s)
			rc = floe_reach_snapshot(&cand, t, s, err);
	}
	/* statistics files of expired snapshots */
	for (size_t i = 0; i < before->n_statistics && !rc; i++) {
		int64_t sid;
		const char *path;
		if (floe_json_get_i64(before->statistics[i], "snapshot-id", &sid, NULL, NULL) == 0 &&
		    in_ids(p->expire, p->n_expire, sid) &&
		    floe_json_get_str(before->statistics[i], "statistics-path", &path, NULL, NULL) ==
			    0 &&
		    floe_reach_add(&cand, path, FLOE_REACH_METADATA))
			rc = floe_error_oom(err);
	}
	if (!rc)
		delete_unreached(t, &cand, &keep, batch ? batch : 1000, res);
	floe_reach_reset(&keep);
	floe_reach_reset(&cand);
	return rc;
}

typedef struct expire_ctx {
	const floe_expire_opts *o;
	floe_expire_result *res;
	floe_arena a;           /* the plan of the latest attempt */
	plan p;
	floe_metadata *before;  /* a copy of the base the commit replaced, for the cleanup */
	bool nothing;
} expire_ctx;

/* One attempt: decide on base (the current metadata, re-read after a lost
 * race) and build the metadata without the expired snapshots. */
static int build_expire(void *payload, const floe_metadata *base, int attempt,
			floe_metadata **next, floe_error *err)
{
	expire_ctx *c = payload;
	floe_metadata_builder *b = NULL;
	int rc;
	(void)attempt;
	floe_arena_reset(&c->a);
	floe_arena_init(&c->a, 4096);
	floe_metadata_free(c->before);
	c->before = NULL;
	if (decide(&c->p, &c->a, base, c->o))
		return floe_error_oom(err);
	c->res->snapshots_expired = c->p.n_expire;
	c->res->snapshots_held_for_pipelines = c->p.n_held;
	if ((c->p.n_expire == 0 && c->p.n_drop_refs == 0) || c->o->dry_run) {
		c->nothing = true;
		return FLOE_OK;
	}
	/* the cleanup compares what the old and the new metadata reach */
	if (c->o->clean_files) {
		floe_buf json;
		floe_buf_init(&json, 0);
		rc = floe_metadata_write(&json, base, 0) ? floe_error_oom(err) : FLOE_OK;
		if (!rc)
			rc = floe_metadata_parse(&c->before, (const char *)json.data, json.len, err);
		floe_buf_reset(&json);
		if (rc)
			return rc;
	}
	rc = floe_metadata_builder_from(&b, base, err);
	for (size_t i = 0; i < c->p.n_drop_refs && !rc; i++)
		rc = floe_mb_remove_ref(b, c->p.drop_refs[i], err);
	if (!rc)
		rc = floe_mb_remove_snapshots(b, c->p.expire, c->p.n_expire, err);
	if (rc) {
		floe_metadata_builder_free(b);
		return rc;
	}
	return floe_metadata_builder_finish(next, b, base->metadata_location, base->last_updated_ms,
					    err);
}

/* None of the snapshots this expiry removes is left. */
static bool expire_landed(void *payload, const floe_metadata *cur)
{
	expire_ctx *c = payload;
	for (size_t i = 0; i < c->p.n_expire; i++)
		if (floe_metadata_snapshot(cur, c->p.expire[i]))
			return false;
	for (size_t i = 0; i < c->p.n_drop_refs; i++)
		if (floe_metadata_ref(cur, c->p.drop_refs[i]))
			return false;
	return true;
}

int floe_expire_snapshots(floe_table *t, const floe_expire_opts *opts, floe_expire_result *res,
			  floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_expire_opts", "FLOE_EXPIRE_OPTS_INIT", err);
	floe_expire_opts dflt = FLOE_EXPIRE_OPTS_INIT;
	const floe_expire_opts *o = opts ? opts : &dflt;
	static const floe_commit_fns fns = {build_expire, NULL, expire_landed};
	expire_ctx c;
	int rc;
	memset(res, 0, sizeof(*res));
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.res = res;
	floe_arena_init(&c.a, 4096);
	if (!floe_table_catalog(t))
		return floe_error_set(err, FLOE_EUNSUPPORTED, "expire needs a table opened by a catalog");
	rc = floe_table__commit(t, "expire snapshots of", &fns, &c, err);
	if (!rc && !c.nothing && o->clean_files && c.before) {
		rc = cleanup(t, c.before, floe_table_metadata(t), &c.p, o->delete_batch, res, err);
		rc = floe_error_prefix(err, rc, "expire: deleting files: ");
	}
	floe_metadata_free(c.before);
	floe_arena_reset(&c.a);
	return rc;
}
