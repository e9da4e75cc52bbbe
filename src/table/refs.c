/*
 * refs.c — branches and tags (floe branch, floe tag) and cherry-pick, as
 * Java's ManageSnapshots does them.
 *
 * DESIGN: every change is a pure step from a base metadata to the next one
 * (floe_refs_apply, unit-tested on its own), committed through the commit
 * path so a lost race re-applies it on the new base. The rules and their
 * messages follow Java's UpdateSnapshotReferencesOperation: a name is one
 * ref (branch or tag) at a time, main is never dropped or made a tag,
 * fast-forward needs the target's head to be an ancestor of the source's,
 * retention (min-snapshots-to-keep, max-snapshot-age-ms) is for branches,
 * max-ref-age-ms for any ref but main. Cherry-pick (Java's CherryPickOperation):
 * a snapshot whose parent is the branch head is fast-forwarded to; an append
 * elsewhere is applied again as a new append (summary source-snapshot-id),
 * once; a replace-partitions overwrite too, as an overwrite, when its parent
 * is an ancestor of the head and no partition it replaced changed since
 * (validated on every attempt's base, as Java's validate()).
 *
 * spec: "Snapshot References", "Snapshot Retention Policy".
 */
#include <stdio.h>
#include <string.h>

#include "table/commit.h"
#include "util/alloc.h"
#include "util/opts.h"
#include "util/str.h"

static bool is_ancestor(const floe_metadata *m, int64_t ancestor, int64_t of)
{
	size_t guard = 0;
	for (const floe_snapshot *s = floe_metadata_snapshot(m, of); s && guard++ < 10000000;
	     s = floe_metadata_parent(m, s))
		if (s->snapshot_id == ancestor)
			return true;
	return false;
}

/* The snapshot a change points at: an explicit id, else `from`'s head. */
static int target_snapshot(const floe_metadata *m, const floe_ref_change *c, int64_t *out,
			   floe_error *err)
{
	if (c->snapshot_id >= 0) {
		if (!floe_metadata_snapshot(m, c->snapshot_id))
			return floe_error_set(err, FLOE_ENOTFOUND, "Cannot find snapshot with ID %lld",
					      (long long)c->snapshot_id);
		*out = c->snapshot_id;
		return FLOE_OK;
	}
	const char *from = c->from ? c->from : "main";
	const floe_snapshot_ref *r = floe_metadata_ref(m, from);
	if (!r && strcmp(from, "main") == 0 && m->current_snapshot_id >= 0) {
		*out = m->current_snapshot_id;
		return FLOE_OK;
	}
	if (!r)
		return floe_error_set(err, FLOE_ENOTFOUND,
				      strcmp(from, "main") == 0
					      ? "the table has no snapshot yet: nothing to point '%s' at"
					      : "Ref does not exist: %s",
				      strcmp(from, "main") == 0 ? c->name : from);
	*out = r->snapshot_id;
	return FLOE_OK;
}

static int check_retention(const floe_ref_change *c, bool tag, floe_error *err)
{
	if (tag && (c->min_snapshots_to_keep >= 0 || c->max_snapshot_age_ms >= 0))
		return floe_error_set(err, FLOE_EINVAL,
				      "Tags do not support setting minSnapshotsToKeep or "
				      "maxSnapshotAgeMs (tag '%s')",
				      c->name);
	if (c->min_snapshots_to_keep == 0 || c->min_snapshots_to_keep > INT32_MAX ||
	    c->min_snapshots_to_keep < -1)
		return floe_error_set(err, FLOE_EINVAL, "Min snapshots to keep must be greater than 0");
	if (c->max_snapshot_age_ms == 0 || c->max_snapshot_age_ms < -1)
		return floe_error_set(err, FLOE_EINVAL, "Max snapshot age must be greater than 0 ms");
	if (c->max_ref_age_ms == 0 || c->max_ref_age_ms < -1)
		return floe_error_set(err, FLOE_EINVAL, "Max reference age must be greater than 0");
	if (c->max_ref_age_ms > 0 && strcmp(c->name, "main") == 0)
		return floe_error_set(err, FLOE_EINVAL, "main never expires: no max-ref-age-ms");
	return FLOE_OK;
}

static bool name_ok(const char *n)
{
	return n && *n && strlen(n) <= 255;
}

int floe_refs_apply(const floe_metadata *base, const floe_ref_change *c, floe_metadata **next,
		    floe_error *err)
{
	floe_metadata_builder *b = NULL;
	const floe_snapshot_ref *cur = name_ok(c->name) ? floe_metadata_ref(base, c->name) : NULL;
	bool main_implicit = !cur && c->name && strcmp(c->name, "main") == 0 &&
			     base->current_snapshot_id >= 0;
	floe_snapshot_ref nref = {c->name, -1, false, -1, -1, -1};
	int64_t snap = -1;
	int rc;
	*next = NULL;
	if (!name_ok(c->name))
		return floe_error_set(err, FLOE_EINVAL, "a branch or tag needs a name (1..255 bytes)");
	switch (c->action) {
	case FLOE_REF_CREATE_BRANCH:
	case FLOE_REF_CREATE_TAG: {
		bool tag = c->action == FLOE_REF_CREATE_TAG;
		if (cur || main_implicit)
			return floe_error_set(err, FLOE_EEXISTS, "Ref %s already exists", c->name);
		if (tag && strcmp(c->name, "main") == 0)
			return floe_error_set(err, FLOE_EINVAL, "'main' must be a branch");
		if ((rc = check_retention(c, tag, err)) || (rc = target_snapshot(base, c, &snap, err)))
			return rc;
		nref.is_tag = tag;
		nref.snapshot_id = snap;
		nref.min_snapshots_to_keep = (int32_t)c->min_snapshots_to_keep;
		nref.max_snapshot_age_ms = c->max_snapshot_age_ms;
		nref.max_ref_age_ms = c->max_ref_age_ms;
		break;
	}
	case FLOE_REF_DROP_BRANCH:
	case FLOE_REF_DROP_TAG: {
		bool tag = c->action == FLOE_REF_DROP_TAG;
		if (!tag && strcmp(c->name, "main") == 0)
			return floe_error_set(err, FLOE_EINVAL, "Cannot remove main branch");
		if (!cur)
			return floe_error_set(err, FLOE_ENOTFOUND, "%s does not exist: %s",
					      tag ? "Tag" : "Branch", c->name);
		if (cur->is_tag != tag)
			return floe_error_set(err, FLOE_EINVAL, "Ref %s is a %s not a %s", c->name,
					      cur->is_tag ? "tag" : "branch", tag ? "tag" : "branch");
		if ((rc = floe_metadata_builder_from(&b, base, err)) ||
		    (rc = floe_mb_remove_ref(b, c->name, err)))
			goto fail;
		return floe_metadata_builder_finish(next, b, base->metadata_location,
						    base->last_updated_ms, err);
	}
	case FLOE_REF_REPLACE_BRANCH:
	case FLOE_REF_FAST_FORWARD: {
		if (!cur && !main_implicit && c->action == FLOE_REF_REPLACE_BRANCH)
			return floe_error_set(err, FLOE_ENOTFOUND, "Branch does not exist: %s", c->name);
		if (cur && cur->is_tag)
			return floe_error_set(err, FLOE_EINVAL, "Ref %s is a tag not a branch", c->name);
		if ((rc = check_retention(c, false, err)) || (rc = target_snapshot(base, c, &snap, err)))
			return rc;
		/* (Java: fast-forwarding a branch that does not exist creates it) */
		int64_t head = cur ? cur->snapshot_id : main_implicit ? base->current_snapshot_id : -1;
		if (c->action == FLOE_REF_FAST_FORWARD && head >= 0 && !is_ancestor(base, head, snap))
			return floe_error_set(err, FLOE_EINVAL,
					      "Cannot fast-forward: %s is not an ancestor of %s", c->name,
					      c->from ? c->from : "the snapshot");
		if (cur)
			nref = *cur;
		nref.name = c->name;
		nref.snapshot_id = snap;
		break;
	}
	case FLOE_REF_SET_RETENTION: {
		if (!cur && !main_implicit)
			return floe_error_set(err, FLOE_ENOTFOUND, "Ref does not exist: %s", c->name);
		bool tag = cur && cur->is_tag;
		if ((rc = check_retention(c, tag, err)))
			return rc;
		if (cur)
			nref = *cur;
		else
			nref.snapshot_id = base->current_snapshot_id;
		nref.name = c->name;
		break;
	}
	default:
		return floe_error_set(err, FLOE_EINVAL, "unknown ref change %d", c->action);
	}
	if (c->action != FLOE_REF_CREATE_BRANCH && c->action != FLOE_REF_CREATE_TAG) {
		if (c->min_snapshots_to_keep > 0)
			nref.min_snapshots_to_keep = (int32_t)c->min_snapshots_to_keep;
		if (c->max_snapshot_age_ms > 0)
			nref.max_snapshot_age_ms = c->max_snapshot_age_ms;
		if (c->max_ref_age_ms > 0)
			nref.max_ref_age_ms = c->max_ref_age_ms;
	}
	if ((rc = floe_metadata_builder_from(&b, base, err)) ||
	    (rc = floe_mb_set_ref(b, &nref, err)))
		goto fail;
	return floe_metadata_builder_finish(next, b, base->metadata_location, base->last_updated_ms,
					    err);
fail:
	floe_metadata_builder_free(b);
	return rc;
}

/* ---- the commit ------------------------------------------------------------------ */

static int build_ref(void *payload, const floe_metadata *base, int attempt,
		     floe_metadata **next, floe_error *err)
{
	(void)attempt;
	if (!base)
		return floe_error_set(err, FLOE_ENOTFOUND, "the table does not exist");
	return floe_refs_apply(base, payload, next, err);
}

static bool ref_landed(void *payload, const floe_metadata *cur)
{
	const floe_ref_change *c = payload;
	const floe_snapshot_ref *r = floe_metadata_ref(cur, c->name);
	switch (c->action) {
	case FLOE_REF_DROP_BRANCH:
	case FLOE_REF_DROP_TAG: return r == NULL;
	case FLOE_REF_CREATE_TAG: return r && r->is_tag;
	default: return r && !r->is_tag && (c->snapshot_id < 0 || r->snapshot_id == c->snapshot_id);
	}
}

int floe_table__update_ref(floe_table *t, const floe_ref_change *c, floe_error *err)
{
	static const floe_commit_fns fns = {build_ref, NULL, ref_landed};
	return floe_table__commit(t, "update the refs of", &fns, (void *)c, err);
}

/* ---- public API ---------------------------------------------------------------------- */

int floe_table_ref(floe_table *t, const char *name, int64_t *snapshot_id, bool *is_tag)
{
	const floe_metadata *m = floe_table_metadata(t);
	const floe_snapshot_ref *r = floe_metadata_ref(m, name);
	*snapshot_id = -1;
	*is_tag = r && r->is_tag;
	if (r)
		*snapshot_id = r->snapshot_id;
	else if (name && !strcmp(name, "main") && m->current_snapshot_id >= 0)
		*snapshot_id = m->current_snapshot_id;
	return *snapshot_id >= 0 ? FLOE_OK : FLOE_ENOTFOUND;
}

int floe_table_manage_ref(floe_table *t, const floe_ref_opts *o, floe_error *err)
{
	FLOE_CHECK_OPTS(o, "floe_ref_opts", "FLOE_REF_OPTS_INIT", err);
	floe_ref_change c = {o->action,
			     o->name,
			     o->snapshot_id,
			     o->from,
			     o->min_snapshots_to_keep,
			     o->max_snapshot_age_ms,
			     o->max_ref_age_ms};
	if (!floe_table_catalog(t))
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "this table was opened by path: change refs through a catalog");
	return floe_table__update_ref(t, &c, err);
}

/* ---- cherry-pick --------------------------------------------------------------------- */

typedef struct pick_ctx {
	floe_snapshot_op *op;
	floe_table *t;
	int64_t snapshot_id;
	int64_t parent_id;  /* the picked snapshot's parent (-1: none) */
	const char *branch;
	/* a replace-partitions overwrite: the partitions it replaced */
	bool overwrite;
	floe_data_file *parts; /* spec_id + partition of each added file (arena) */
	size_t n_parts, cap_parts;
	floe_arena a;
	int rc;
	floe_error *err;
} pick_ctx;

static int copy_partition(floe_partition *dst, floe_arena *a, const floe_partition *src)
{
	dst->n = src->n;
	dst->values = NULL;
	if (!src->n)
		return FLOE_OK;
	if (!(dst->values = floe_arena_calloc(a, src->n, sizeof(*dst->values))))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < src->n; i++) {
		dst->values[i] = src->values[i];
		if (floe_value_own(&dst->values[i], a))
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

/* The files the picked snapshot added (and, for an overwrite, removed): its
 * own entries (Java's addedDataFiles / removedDataFiles). */
static int pick_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	pick_ctx *c = payload;
	(void)mf;
	if (e->snapshot_id != c->snapshot_id || e->file.content != FLOE_CONTENT_DATA)
		return 0;
	if (e->status == FLOE_ENTRY_ADDED) {
		c->rc = floe_op_add_file(c->op, &e->file, c->err);
		if (!c->rc && c->overwrite) {
			if (c->n_parts == c->cap_parts &&
			    floe_array_grow((void **)&c->parts, &c->cap_parts, sizeof(*c->parts),
					    c->n_parts + 1))
				c->rc = floe_error_oom(c->err);
			else if (!c->rc) {
				floe_data_file *f = &c->parts[c->n_parts];
				memset(f, 0, sizeof(*f));
				f->spec_id = e->file.spec_id;
				if (copy_partition(&f->partition, &c->a, &e->file.partition))
					c->rc = floe_error_oom(c->err);
				else
					c->n_parts++;
			}
		}
	} else if (e->status == FLOE_ENTRY_DELETED && c->overwrite) {
		/* spec: the removed file must still be live (failMissingDeletePaths) */
		c->rc = floe_op_remove_file(c->op, &e->file, c->err);
	}
	return c->rc ? 1 : 0;
}

static bool replaced(const pick_ctx *c, const floe_data_file *f)
{
	for (size_t i = 0; i < c->n_parts; i++)
		if (c->parts[i].spec_id == f->spec_id &&
		    floe_partition_equal(&c->parts[i].partition, &f->partition))
			return true;
	return false;
}

typedef struct changed_ctx {
	const pick_ctx *c;
	int64_t snapshot_id;
	bool hit;
	floe_buf path; /* the partition, then the file: valid after the walk */
	const floe_metadata *m;
} changed_ctx;

static int changed_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	changed_ctx *x = payload;
	(void)mf;
	if (e->status != FLOE_ENTRY_ADDED || e->snapshot_id != x->snapshot_id ||
	    e->file.content != FLOE_CONTENT_DATA || !replaced(x->c, &e->file))
		return 0;
	const floe_partition_spec *sp = floe_metadata_spec(x->m, e->file.spec_id);
	if ((!sp || floe_partition_path(&x->path, sp, floe_metadata_current_schema(x->m),
					&e->file.partition)) &&
	    floe_buf_puts(&x->path, "?"))
		return FLOE_ENOMEM;
	if (floe_buf_printf(&x->path, " (snapshot %lld added %s)", (long long)x->snapshot_id,
			    e->file.file_path))
		return FLOE_ENOMEM;
	x->hit = true;
	return 1;
}

/*
 * Every attempt's base (Java's CherryPickOperation.validate): the picked
 * snapshot is not in the branch and was not picked into it; an overwrite's
 * parent is still an ancestor of the head, and no snapshot since that
 * parent added a data file to a partition it replaced.
 */
static int pick_check(void *payload, const floe_metadata *base, const floe_snapshot *parent,
		      floe_error *err)
{
	pick_ctx *c = payload;
	char num[32];
	snprintf(num, sizeof(num), "%lld", (long long)c->snapshot_id);
	size_t guard = 0;
	for (const floe_snapshot *x = parent; x && guard++ < 10000000; x = floe_metadata_parent(base, x)) {
		const char *src = floe_snapshot_summary(x, "source-snapshot-id");
		if (x->snapshot_id == c->snapshot_id)
			return floe_error_set(err, FLOE_ECONFLICT,
					      "Cannot cherry-pick snapshot %lld: already an ancestor "
					      "of %s",
					      (long long)c->snapshot_id, c->branch);
		if (src && !strcmp(src, num))
			return floe_error_set(err, FLOE_ECONFLICT,
					      "Cannot cherry-pick snapshot %lld: already picked into "
					      "%s as snapshot %lld",
					      (long long)c->snapshot_id, c->branch,
					      (long long)x->snapshot_id);
	}
	if (!c->overwrite || !parent)
		return FLOE_OK;
	if (c->parent_id >= 0 && !is_ancestor(base, c->parent_id, parent->snapshot_id))
		return floe_error_set(err, FLOE_ECONFLICT,
				      "Cannot cherry-pick overwrite, based on non-ancestor of the "
				      "current state: %lld",
				      (long long)c->parent_id);
	/* the data files added since the parent (SnapshotUtil.newFiles) */
	guard = 0;
	for (const floe_snapshot *x = parent; x && x->snapshot_id != c->parent_id && guard++ < 10000000;
	     x = floe_metadata_parent(base, x)) {
		floe_arena a;
		floe_manifest_file *mfs = NULL;
		size_t n = 0;
		changed_ctx cx = {c, x->snapshot_id, false, {0}, base};
		int rc;
		floe_arena_init(&a, 16384);
		floe_buf_init(&cx.path, 0);
		rc = floe_table_manifests(&mfs, &n, &a, c->t, x, err);
		for (size_t i = 0; i < n && !rc && !cx.hit; i++)
			if (mfs[i].added_snapshot_id == x->snapshot_id)
				rc = floe_table_walk_manifest(c->t, &mfs[i], FLOE_WALK_DATA, changed_cb,
							      &cx, err);
		if (rc == 1)
			rc = FLOE_OK;
		if (!rc && cx.hit)
			rc = floe_error_set(err, FLOE_ECONFLICT,
					    "Cannot cherry-pick replace partitions with changed "
					    "partition: %s",
					    floe_buf_cstr(&cx.path));
		floe_buf_reset(&cx.path);
		floe_arena_reset(&a);
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

int floe_table_cherry_pick(floe_table *t, int64_t snapshot_id, const char *branch,
			   int64_t *new_snapshot, floe_error *err_out)
{
	floe_error local, *err = err_out ? err_out : &local;
	const floe_metadata *m = floe_table_metadata(t);
	const char *br = branch && *branch ? branch : "main";
	const floe_snapshot *s = floe_metadata_snapshot(m, snapshot_id);
	const floe_snapshot *head = floe_metadata_branch_head(m, br);
	char num[32];
	int rc;
	floe_error_clear(&local);
	if (new_snapshot)
		*new_snapshot = -1;
	if (!s)
		return floe_error_set(err, FLOE_ENOTFOUND, "Cannot cherry-pick unknown snapshot ID: %lld",
				      (long long)snapshot_id);
	const floe_snapshot_ref *ref = floe_metadata_ref(m, br);
	if (ref && ref->is_tag)
		return floe_error_set(err, FLOE_EINVAL, "'%s' is a tag, not a branch", br);
	if (!head)
		return floe_error_set(err, FLOE_ENOTFOUND, "Branch does not exist: %s", br);
	snprintf(num, sizeof(num), "%lld", (long long)snapshot_id);
	size_t guard = 0;
	for (const floe_snapshot *x = head; x && guard++ < 10000000; x = floe_metadata_parent(m, x)) {
		const char *src = floe_snapshot_summary(x, "source-snapshot-id");
		if (x->snapshot_id == snapshot_id)
			return floe_error_set(err, FLOE_EINVAL,
					      "Cannot cherry-pick snapshot %lld: already an ancestor "
					      "of %s",
					      (long long)snapshot_id, br);
		if (src && strcmp(src, num) == 0)
			return floe_error_set(err, FLOE_EINVAL,
					      "Cannot cherry-pick snapshot %lld: already picked into "
					      "%s as snapshot %lld",
					      (long long)snapshot_id, br, (long long)x->snapshot_id);
	}
	if (s->parent_id == head->snapshot_id) {
		/* the branch has not moved since: publish the snapshot itself */
		floe_ref_change c = {FLOE_REF_REPLACE_BRANCH, br, snapshot_id, NULL, -1, -1, -1};
		if ((rc = floe_table__update_ref(t, &c, err)))
			return rc;
		if (new_snapshot)
			*new_snapshot = snapshot_id;
		return FLOE_OK;
	}
	/* Java's CherryPickOperation: an append is applied again; so is a
	 * replace-partitions overwrite (a dynamic overwrite) whose parent is an
	 * ancestor of the head, if no partition it replaced changed since; any
	 * other operation only fast-forwards (above) */
	const char *operation = floe_snapshot_summary(s, "operation");
	const char *rp = floe_snapshot_summary(s, "replace-partitions");
	bool append = operation && !strcmp(operation, "append");
	bool overwrite = operation && !strcmp(operation, "overwrite") && rp && !strcmp(rp, "true");
	if (!append && !overwrite)
		return floe_error_set(err, FLOE_EINVAL,
				      "Cannot cherry-pick snapshot %lld: not append, dynamic overwrite, "
				      "or fast-forward (its operation is '%s' and %s moved on since its "
				      "parent)",
				      (long long)snapshot_id, operation ? operation : "?", br);
	if (overwrite && s->parent_id >= 0 && !is_ancestor(m, s->parent_id, head->snapshot_id))
		return floe_error_set(err, FLOE_EINVAL,
				      "Cannot cherry-pick overwrite not based on an ancestor of the "
				      "current state: %lld",
				      (long long)snapshot_id);
	floe_snapshot_op *op = NULL;
	if ((rc = floe_op_new(&op, t, overwrite ? FLOE_OP_OVERWRITE : FLOE_OP_APPEND, br, err)))
		return rc;
	pick_ctx pc = {0};
	pc.op = op;
	pc.t = t;
	pc.snapshot_id = snapshot_id;
	pc.parent_id = s->parent_id;
	pc.branch = br;
	pc.overwrite = overwrite;
	pc.err = err;
	floe_arena_init(&pc.a, 16384);
	/* the picked snapshot's own manifests hold its added and removed entries */
	floe_arena la;
	floe_manifest_file *mfs = NULL;
	size_t n = 0;
	floe_arena_init(&la, 16384);
	rc = floe_table_manifests(&mfs, &n, &la, t, s, err);
	for (size_t i = 0; i < n && !rc; i++)
		if (mfs[i].added_snapshot_id == snapshot_id)
			rc = floe_table_walk_manifest(t, &mfs[i], FLOE_WALK_DATA | FLOE_WALK_ALL_ENTRIES,
						      pick_cb, &pc, err);
	floe_arena_reset(&la);
	if (pc.rc)
		rc = pc.rc;
	floe_op_set_check(op, pick_check, &pc);
	rc = rc ? rc : floe_op_set_summary(op, "source-snapshot-id", num, err);
	if (overwrite)
		rc = rc ? rc : floe_op_set_summary(op, "replace-partitions", "true", err);
	rc = rc ? rc : floe_op_commit(op, new_snapshot, err);
	floe_op_free(op);
	floe_free(pc.parts);
	floe_arena_reset(&pc.a);
	return rc;
}
