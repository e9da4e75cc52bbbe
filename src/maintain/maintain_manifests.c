/*
 * maintain_manifests.c — rewrite manifests: pack the live entries of small
 * manifests, clustered by partition, into manifests near the target size.
 *
 * DESIGN: manifests are grouped by content (data, deletes) and partition
 * spec; within a group the manifests already at or above the target are
 * kept as they are, and the smaller ones (when there are at least two) are
 * read, their live entries sorted by partition tuple then path and written
 * as EXISTING entries (original snapshot id and sequence numbers, so
 * nothing about the table's contents or delete semantics changes) into new
 * manifests rolled at the target size. DELETED entries are dropped: they
 * only record what an older snapshot removed. One "replace" snapshot swaps
 * the old manifests for the new; the producer checks that every replaced
 * manifest is still in the base it commits onto, so a concurrent rewrite
 * cannot double-count and a concurrent append is simply kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maintain/maintain_int.h"
#include "util/opts.h"
#include "util/alloc.h"
#include "util/log.h"

typedef struct held_entry {
	int64_t snapshot_id, seq, file_seq;
	floe_data_file f;
} held_entry;

typedef struct group {
	int content; /* FLOE_MANIFEST_* */
	int32_t spec_id;
	floe_manifest_file *small; /* candidates (copies, arena) */
	size_t n_small, cap_small;
	int64_t small_bytes;
} group;

typedef struct collect_ctx {
	floe_arena *a;
	held_entry *v;
	size_t n, cap;
} collect_ctx;

static int collect_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	collect_ctx *c = payload;
	(void)mf;
	if (e->status == FLOE_ENTRY_DELETED)
		return 0;
	if (FLOE_ARRAY_RESERVE(c->v, c->cap, c->n + 1))
		return FLOE_ENOMEM;
	held_entry *h = &c->v[c->n];
	h->snapshot_id = e->snapshot_id;
	h->seq = e->sequence_number;
	h->file_seq = e->file_sequence_number;
	if (floe_data_file_copy(&h->f, c->a, &e->file))
		return FLOE_ENOMEM;
	c->n++;
	return 0;
}

static int cmp_entries(const void *pa, const void *pb)
{
	const held_entry *a = pa, *b = pb;
	size_t n = a->f.partition.n < b->f.partition.n ? a->f.partition.n : b->f.partition.n;
	for (size_t i = 0; i < n; i++) {
		const floe_value *x = &a->f.partition.values[i], *y = &b->f.partition.values[i];
		if (x->is_null || y->is_null) {
			if (x->is_null != y->is_null)
				return x->is_null ? -1 : 1;
			continue;
		}
		int c = floe_value_compare(x, y);
		if (c)
			return c;
	}
	if (a->f.partition.n != b->f.partition.n)
		return a->f.partition.n < b->f.partition.n ? -1 : 1;
	return strcmp(a->f.file_path, b->f.file_path);
}

/* Write one group's entries into manifests rolled at target bytes. */
static int write_group(floe_snapshot_op *op, const floe_metadata *m, const group *g,
		       held_entry *v, size_t n, int64_t target, floe_manifest_file **fresh,
		       size_t *n_fresh, size_t *cap_fresh, floe_arena *a, floe_error *err)
{
	const floe_partition_spec *spec = floe_metadata_spec(m, g->spec_id);
	floe_manifest_writer *w = NULL;
	int content = g->content == FLOE_MANIFEST_DELETES ? FLOE_MANIFEST_DELETES : FLOE_MANIFEST_DATA;
	int rc = FLOE_OK;
	if (!spec)
		return floe_error_corrupt(err, "manifest names unknown partition spec %d",
				      (int)g->spec_id);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_entries);
	for (size_t i = 0; i < n && !rc; i++) {
		if (!w && (rc = floe_op_open_manifest(op, spec, content, &w, err)))
			break;
		rc = floe_manifest_writer_add(w, FLOE_ENTRY_EXISTING, v[i].snapshot_id, v[i].seq,
					      v[i].file_seq, &v[i].f, err);
		bool last = i + 1 == n;
		if (!rc && (last || (int64_t)floe_manifest_writer_size_estimate(w) >= target)) {
			if (FLOE_ARRAY_RESERVE(*fresh, *cap_fresh, *n_fresh + 1)) {
				rc = floe_error_oom(err);
				break;
			}
			rc = floe_manifest_writer_close(w, &(*fresh)[*n_fresh], a, err);
			w = NULL;
			if (!rc)
				(*n_fresh)++;
		}
	}
	if (w)
		floe_manifest_writer_abort(w);
	return rc;
}

static group *find_group(group **gs, size_t *n, size_t *cap, int content, int32_t spec_id)
{
	for (size_t i = 0; i < *n; i++)
		if ((*gs)[i].content == content && (*gs)[i].spec_id == spec_id)
			return &(*gs)[i];
	if (FLOE_ARRAY_RESERVE(*gs, *cap, *n + 1))
		return NULL;
	group *g = &(*gs)[(*n)++];
	memset(g, 0, sizeof(*g));
	g->content = content;
	g->spec_id = spec_id;
	return g;
}

int floe_rewrite_manifests(floe_table *t, const floe_rewrite_manifests_opts *opts,
			   floe_rewrite_manifests_result *res, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_rewrite_manifests_opts", "FLOE_REWRITE_MANIFESTS_OPTS_INIT", err);
	floe_rewrite_manifests_opts dflt = FLOE_REWRITE_MANIFESTS_OPTS_INIT;
	const floe_rewrite_manifests_opts *o = opts ? opts : &dflt;
	const floe_metadata *m = floe_table_metadata(t);
	const floe_snapshot *cur = floe_metadata_current_snapshot(m);
	floe_manifest_file *mfs = NULL, *old = NULL, *fresh = NULL;
	size_t n_mfs = 0, n_old = 0, n_fresh = 0, cap_fresh = 0, n_groups = 0, cap_groups = 0;
	group *groups = NULL;
	floe_snapshot_op *op = NULL;
	floe_arena a;
	int rc;
	memset(res, 0, sizeof(*res));
	res->snapshot_id = -1;
	if (!cur)
		return FLOE_OK;
	int64_t target = o->target_bytes > 0
				 ? o->target_bytes
				 : floe_metadata_property_i64(m, "commit.manifest.target-size-bytes",
							      8 << 20);
	if (target < 4096)
		target = 4096;
	floe_arena_init(&a, 65536);
	if ((rc = floe_table_manifests(&mfs, &n_mfs, &a, t, cur, err)))
		goto done;
	res->manifests_before = n_mfs;
	res->manifests_after = n_mfs;
	for (size_t i = 0; i < n_mfs; i++) {
		if (mfs[i].length >= target)
			continue;
		group *g = find_group(&groups, &n_groups, &cap_groups, mfs[i].content,
				      mfs[i].spec_id);
		if (!g || FLOE_ARRAY_RESERVE(g->small, g->cap_small, g->n_small + 1)) {
			rc = floe_error_oom(err);
			goto done;
		}
		g->small[g->n_small++] = mfs[i];
		g->small_bytes += mfs[i].length;
	}
	if ((rc = floe_op_new(&op, t, FLOE_OP_REPLACE, NULL, err)))
		goto done;
	old = floe_arena_calloc(&a, n_mfs + 1, sizeof(*old));
	if (!old) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t gi = 0; gi < n_groups && !rc; gi++) {
		group *g = &groups[gi];
		if (g->n_small < 2)
			continue;
		if (o->dry_run) {
			size_t after = (size_t)((g->small_bytes + target - 1) / target);
			res->manifests_after -= g->n_small - (after ? after : 1);
			continue;
		}
		collect_ctx c = {&a, NULL, 0, 0};
		for (size_t i = 0; i < g->n_small && !rc; i++) {
			rc = floe_table_walk_manifest(t, &g->small[i],
						      FLOE_WALK_DATA | FLOE_WALK_DELETES, collect_cb,
						      &c, err);
			if (rc == FLOE_ENOMEM)
				floe_error_set(err, rc, "out of memory");
			old[n_old + i] = g->small[i];
		}
		size_t before_fresh = n_fresh;
		if (!rc && c.n)
			rc = write_group(op, m, g, c.v, c.n, target, &fresh, &n_fresh, &cap_fresh, &a,
					 err);
		if (!rc) {
			n_old += g->n_small;
			res->entries += c.n;
			res->manifests_after -= g->n_small - (n_fresh - before_fresh);
		}
		floe_free(c.v);
	}
	if (rc || o->dry_run || n_old == 0)
		goto done;
	char num[32];
	snprintf(num, sizeof(num), "%zu", n_fresh);
	rc = floe_op_set_summary(op, "manifests-created", num, err);
	snprintf(num, sizeof(num), "%zu", n_old);
	rc = rc ? rc : floe_op_set_summary(op, "manifests-replaced", num, err);
	snprintf(num, sizeof(num), "%zu", n_mfs - n_old);
	rc = rc ? rc : floe_op_set_summary(op, "manifests-kept", num, err);
	snprintf(num, sizeof(num), "%zu", res->entries);
	rc = rc ? rc : floe_op_set_summary(op, "entries-processed", num, err);
	rc = rc ? rc : floe_op_set_summary(op, FLOE_MAINTENANCE_SUMMARY_KEY, "rewrite-manifests", err);
	rc = rc ? rc : floe_op_replace_manifests(op, old, n_old, fresh, n_fresh, err);
	if (!rc) {
		/* the producer owns the new manifests from here (and deletes them if
		 * the commit fails) */
		n_fresh = 0;
		rc = floe_op_commit(op, &res->snapshot_id, err);
	}
done:
	/* manifests written but never handed over */
	for (size_t i = 0; i < n_fresh; i++)
		floe_io_remove_quiet(floe_table_io(t), fresh[i].path);
	floe_op_free(op);
	for (size_t i = 0; i < n_groups; i++)
		floe_free(groups[i].small);
	floe_free(groups);
	floe_free(fresh);
	floe_arena_reset(&a);
	return floe_error_prefix(err, rc, "rewrite manifests: ");
}
