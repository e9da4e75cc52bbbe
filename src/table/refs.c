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
 * once.
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
	int64_t snapshot_id;
	int rc;
	floe_error *err;
} pick_ctx;

static int pick_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	pick_ctx *c = payload;
	(void)mf;
	if (e->status != FLOE_ENTRY_ADDED || e->snapshot_id != c->snapshot_id)
		return 0;
	c->rc = floe_op_add_file(c->op, &e->file, c->err);
	return c->rc ? 1 : 0;
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
	const char *operation = floe_snapshot_summary(s, "operation");
	if (!operation || strcmp(operation, "append") != 0)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "Cannot cherry-pick snapshot %lld: its operation is '%s' and %s "
				      "moved on since its parent; only appends are applied again",
				      (long long)snapshot_id, operation ? operation : "?", br);
	floe_snapshot_op *op = NULL;
	if ((rc = floe_op_new(&op, t, FLOE_OP_APPEND, br, err)))
		return rc;
	pick_ctx pc = {op, snapshot_id, FLOE_OK, err};
	rc = floe_table_walk(t, s, FLOE_WALK_DATA, pick_cb, &pc, err);
	if (pc.rc)
		rc = pc.rc;
	rc = rc ? rc : floe_op_set_summary(op, "source-snapshot-id", num, err);
	rc = rc ? rc : floe_op_commit(op, new_snapshot, err);
	floe_op_free(op);
	return rc;
}
