/*
 * stream_index_persist.c — the key index of an index-mode table across
 * restarts and other commits, without reading the whole table again:
 *
 *   persist  every write.upsert.index.persist-interval DV commits (and on
 *            the first after a rebuild, and a one-shot load's last), the
 *            index is written as a floe-key-index-v1 Puffin blob
 *            (write_index_persist.h) to the metadata folder and named by
 *            that same commit's summary, floe.key-index. The blob describes
 *            the state after the commit: its snapshot id is the commit's
 *            (assigned before it is attempted), its parent the index's base
 *            (a DV commit only lands on exactly that base: idx_check_cb), and
 *            the positions of the files being added are the writer's own
 *            (index_apply recorded them when the tasks completed).
 *   load     at start, the newest ancestor P of the head with floe.key-index
 *            is used when every snapshot after it is this pipeline's own
 *            index-mode commit (floe.upsert-mode index or index-fallback) or
 *            floe maintenance (compact, rewrite-manifests, convert-deletes),
 *            the blob checks (CRC, P's id and parent, the key field ids, the
 *            exact flag) and its file list is exactly P's live data files.
 *            Then it is refreshed to the head (below).
 *   refresh  from a base B the index described exactly (a loaded P, or in a
 *            running pipeline the snapshot before a fallback checkpoint): the
 *            head's plan (manifests only) gives every live data file and its
 *            DV; files of the index not in it are gone (their entries are
 *            rows that left with them: a lookup does not find them); files
 *            in it the index does not know (a compaction's output, this
 *            pipeline's commits after P) are read, key columns, _file and _pos
 *            with deletes applied, and their rows replace the keys' entries.
 *
 * Why that is exact: with only this pipeline's commits and floe's rewrites
 * after B, a key has at most one live row (index mode keeps it so; a key
 * with two rows — another writer's append — makes the index refuse to
 * refresh). A live row in a file B had is where the index says (nothing
 * moved it); a live row anywhere else is in a file read here. An entry can
 * name a dead row of a live file (deleted since B): deleting it again is a
 * DV bit already set. Anything else — another engine's commit, a key with
 * two rows, a file the index cannot describe, a check that fails — is a
 * full rebuild (stream_delta.c), never a guess.
 */
#include <stdio.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "scan/scan_select.h"
#include "stream/stream_runtime.h"
#include "table/commit.h"
#include "util/hmap.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "write/write_index_persist.h"

static const char *prop(const floe_strmap *m, const char *k)
{
	for (size_t i = 0; m && i < m->len; i++)
		if (!strcmp(m->items[i].key, k))
			return m->items[i].value;
	return NULL;
}

void stream_index_persist_setup(rt_table *t)
{
	const char *on = prop(&t->cfg->properties, "write.upsert.index.persist");
	if (!on)
		on = floe_metadata_property(t->meta, "write.upsert.index.persist");
	const char *every = prop(&t->cfg->properties, "write.upsert.index.persist-interval");
	if (!every)
		every = floe_metadata_property(t->meta, "write.upsert.index.persist-interval");
	int64_t v;
	t->idx_persist = !on || strcmp(on, "false") != 0;
	t->idx_persist_every = 10;
	if (every && floe_parse_i64(every, strlen(every), &v) && v > 0)
		t->idx_persist_every = v;
	t->idx_persist_due = false; /* a build sets it (stream_index_build) */
}

/* A snapshot after the index's base that the refresh can follow. */
static bool followable(floe_pipeline *p, const floe_snapshot *s, const char **why)
{
	const char *pid = floe_snapshot_summary(s, "floe.pipeline-id");
	const char *mt = floe_snapshot_summary(s, "floe.maintenance");
	const char *fo = floe_snapshot_summary(s, "floe.operation");
	/* this pipeline's index-mode commits only: the same pipeline id without
	 * upserts in index mode (a plain append) could add a second row of a key */
	if (pid && p->pipeline_id && !strcmp(pid, p->pipeline_id)) {
		if (floe_snapshot_summary(s, "floe.upsert-mode"))
			return true;
		*why = "this pipeline's commit outside index mode";
		return false;
	}
	if (mt && (!strcmp(mt, "compact") || !strcmp(mt, "rewrite-manifests")))
		return true;
	if (fo && !strcmp(fo, "convert-deletes"))
		return true;
	*why = pid ? "another pipeline's commit" : "a commit of another writer";
	return false;
}

static int new_index(floe_pipeline *p, rt_table *t, floe_error *err)
{
	floe_delta_index_opts o;
	memset(&o, 0, sizeof(o));
	o.equality_ids = t->eq_ids;
	o.n_equality_ids = t->n_eq;
	o.n_parts = (size_t)p->n_tasks;
	o.memory = t->index_memory;
	o.partition_id = p->n_tasks;
	o.task_id = p->run_id;
	o.operation_id = p->op_id;
	return floe_delta_index_new(&t->index, floe_table_io(t->write_t), t->meta, &t->wcfg, &o,
				    err);
}

typedef struct pfiles {
	floe_hmap blob; /* the blob's paths */
	size_t n_data, matched;
} pfiles;

static int pfile_cb(const floe_table_file *f, void *payload)
{
	pfiles *c = payload;
	if (f->content != FLOE_CONTENT_DATA)
		return 0;
	c->n_data++;
	if (floe_hmap_get_str(&c->blob, f->path, NULL))
		c->matched++;
	return 0;
}

/* Refresh t->index (exact at base) to the head. *ok false: rebuild instead (why). */
static int refresh(rt_table *t, const floe_snapshot *head, bool *ok, size_t *n_read,
		   const char **why, floe_error *err)
{
	floe_delta_index *ix = t->index;
	floe_scan *s = NULL;
	struct ArrowSchema sch;
	scan_file **fresh = NULL;
	size_t n_fresh = 0, cap_fresh = 0;
	int rc;
	memset(&sch, 0, sizeof(sch));
	*ok = false;
	*n_read = 0;
	if (floe_delta_index__has_dups(ix)) {
		*why = "keys with more than one live row";
		return FLOE_OK;
	}
	const char *cols[66];
	const floe_type *root = t->schema->root;
	for (size_t k = 0; k < t->n_eq; k++)
		for (size_t i = 0; i < root->n_fields; i++)
			if (root->fields[i].id == t->eq_ids[k])
				cols[k] = root->fields[i].name;
	cols[t->n_eq] = "_file";
	cols[t->n_eq + 1] = "_pos";
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	so.columns = cols;
	so.n_columns = t->n_eq + 2;
	so.snapshot_id = head->snapshot_id;
	if ((rc = floe_scan_open(&s, t->commit_t, &so, err)))
		goto done;
	scan_file *const *files;
	size_t nf;
	floe_scan__plan_files(s, &files, &nf);
	int fv = floe_table_metadata(t->commit_t)->format_version;
	for (size_t i = 0; i < nf; i++) {
		if (strcmp(files[i]->path, files[i]->raw_path) != 0) {
			*why = "relocated files";
			goto done;
		}
		for (size_t k = 0; k < files[i]->n_deletes; k++)
			if (!files[i]->deletes[k]->is_dv &&
			    files[i]->deletes[k]->content == FLOE_CONTENT_POSITION_DELETES && fv >= 3) {
				*why = "position delete files beside deletion vectors";
				goto done;
			}
	}
	floe_delta_index__mark_gone(ix);
	for (size_t i = 0; i < nf && !rc; i++) {
		const scan_file *f = files[i];
		const scan_file *dv = NULL;
		for (size_t k = 0; k < f->n_deletes; k++)
			if (f->deletes[k]->is_dv)
				dv = f->deletes[k];
		floe_data_file d;
		if (dv) {
			floe_data_file_init(&d);
			d.content = dv->content;
			d.file_path = dv->raw_path;
			d.file_format = dv->format;
			d.spec_id = dv->spec_id;
			d.partition = dv->partition;
			d.record_count = dv->record_count;
			d.file_size_in_bytes = dv->file_size;
			d.referenced_data_file = dv->referenced;
			d.content_offset = dv->content_offset;
			d.content_size_in_bytes = dv->content_size;
		}
		bool known;
		rc = floe_delta_index__sync_file(ix, f->raw_path, f->spec_id, &f->partition,
						 dv ? &d : NULL, &known, err);
		if (!rc && !known) {
			if (FLOE_ARRAY_RESERVE(fresh, cap_fresh, n_fresh + 1))
				rc = floe_error_oom(err);
			else
				fresh[n_fresh++] = files[i];
		}
	}
	if (rc)
		goto done;
	*n_read = n_fresh;
	if (n_fresh) {
		if ((rc = floe_scan_arrow_schema(s, &sch, err)) ||
		    (rc = floe_scan__select(s, fresh, n_fresh, err)))
			goto done;
		floe_delta_index__load_replace(ix, true);
		while (!rc) {
			struct ArrowArray b;
			bool eof;
			if ((rc = floe_scan_next(s, &b, &eof, err)) || eof)
				break;
			rc = floe_delta_index_load(ix, &b, &sch, err);
			floe_arrow_array_release(&b);
		}
		floe_delta_index__load_replace(ix, false);
	}
	*ok = rc == FLOE_OK;
done:
	if (sch.release)
		sch.release(&sch);
	floe_scan_free(s);
	floe_free(fresh);
	return rc;
}

int stream_index_try_load(floe_pipeline *p, rt_table *t, bool *done, floe_error *err)
{
	int rc;
	int64_t t0 = floe_monotonic_ns();
	*done = false;
	bool running = t->index != NULL; /* a refresh in a running pipeline */
	if (!running && !t->idx_persist)
		return FLOE_OK;
	if (running && (t->idx_expect == INT64_MIN || t->idx_expect == FLOE_NO_SNAPSHOT))
		return FLOE_OK;
	if ((rc = floe_table_refresh(t->commit_t, err)))
		return rc;
	const floe_metadata *m = floe_table_metadata(t->commit_t);
	const floe_snapshot *head = floe_metadata_current_snapshot(m);
	if (!head)
		return FLOE_OK;
	/* walk back from the head to the base: the index's, or the newest persisted */
	const floe_snapshot *base = NULL, *s = head;
	const char *why = NULL, *path = NULL;
	size_t steps = 0;
	while (s) {
		if (running && s->snapshot_id == t->idx_expect) {
			base = s;
			break;
		}
		if (!running && (path = floe_snapshot_summary(s, FLOE_KEY_INDEX_SUMMARY_KEY))) {
			base = s;
			break;
		}
		if (!followable(p, s, &why))
			break;
		steps++;
		s = s->parent_id == FLOE_NO_SNAPSHOT ? NULL : floe_metadata_snapshot(m, s->parent_id);
	}
	if (!base) {
		if (!running && why)
			FLOE_INFO("table %s: no persisted key index to use (snapshot %lld: %s after "
				  "the last one); building it",
				  t->ident, (long long)s->snapshot_id, why);
		else if (running && why)
			FLOE_INFO("table %s: the key index is rebuilt (snapshot %lld: %s)", t->ident,
				  (long long)s->snapshot_id, why);
		return FLOE_OK;
	}
	uint64_t n_loaded = 0;
	floe_arena a;
	floe_arena_init(&a, 4096);
	char **paths = NULL;
	size_t n_paths = 0;
	if (!running) {
		if ((rc = new_index(p, t, err)))
			goto out;
		bool wide;
		floe_key_index_blob_hdr want = {base->snapshot_id, base->parent_id, 0,
						t->eq_ids,	  t->n_eq,	  false,
						NULL};
		want.exact = floe_delta_index__exact(t->index, &wide);
		floe_error le;
		floe_error_clear(&le);
		int lrc = floe_delta_index_restore(t->index, floe_table_io(t->commit_t), path, &want,
						   &n_loaded, &paths, &n_paths, &a, &le);
		if (lrc == FLOE_OK) {
			/* its file list is exactly the snapshot's live data files */
			pfiles pf;
			memset(&pf, 0, sizeof(pf));
			floe_hmap_init(&pf.blob);
			for (size_t i = 0; i < n_paths && !lrc; i++)
				if (floe_hmap_put_str(&pf.blob, paths[i], 1))
					lrc = floe_error_oom(&le);
			if (!lrc)
				lrc = floe_table_files(t->commit_t, base->snapshot_id, pfile_cb, &pf,
						       &le);
			if (!lrc && (pf.n_data != n_paths || pf.matched != n_paths))
				lrc = floe_error_set(&le, FLOE_ECORRUPT,
						     "it lists %zu files, snapshot %lld has %zu "
						     "data files (%zu of them listed)",
						     n_paths, (long long)base->snapshot_id, pf.n_data,
						     pf.matched);
			floe_hmap_reset(&pf.blob);
		}
		if (lrc) {
			if (lrc == FLOE_ENOMEM || lrc == FLOE_ECANCELED) {
				rc = lrc;
				if (err)
					*err = le;
				goto out;
			}
			FLOE_WARN("table %s: the persisted key index %s is not used (%s); "
				  "rebuilding it from snapshot %lld",
				  t->ident, path, le.msg, (long long)head->snapshot_id);
			goto out;
		}
	}
	bool ok;
	size_t n_read = 0;
	why = NULL;
	rc = refresh(t, head, &ok, &n_read, &why, err);
	if (rc && rc != FLOE_ENOMEM && rc != FLOE_ECANCELED) {
		FLOE_WARN("table %s: refreshing the key index failed (%s): rebuilding it", t->ident,
			  err ? err->msg : "?");
		floe_error_clear(err);
		rc = FLOE_OK;
		goto out;
	}
	if (rc || !ok) {
		if (why)
			FLOE_INFO("table %s: the key index is rebuilt (%s)", t->ident, why);
		goto out;
	}
	*done = true;
	t->idx_expect = head->snapshot_id;
	t->idx_stale = false;
	if (n_read)
		t->idx_persist_due = true; /* the next restart reads fewer files */
	floe_delta_index_stats st;
	floe_delta_index_get_stats(t->index, &st);
	long long ms = (long long)((floe_monotonic_ns() - t0) / 1000000);
	if (running) {
		t->idx_refreshes++;
		FLOE_INFO("table %s: key index refreshed to snapshot %lld from %lld over %zu "
			  "commit(s): %zu new data file(s) read, %zu keys (%lld ms)",
			  t->ident, (long long)head->snapshot_id, (long long)base->snapshot_id, steps,
			  n_read, st.entries, ms);
	} else {
		t->idx_loads++;
		FLOE_INFO("table %s: key index loaded from %s (snapshot %lld, %llu keys) and "
			  "refreshed to snapshot %lld over %zu commit(s): %zu new data file(s) "
			  "read, %zu keys in %zu data files (%lld ms)",
			  t->ident, path, (long long)base->snapshot_id, (unsigned long long)n_loaded,
			  (long long)head->snapshot_id, steps, n_read, st.entries, st.files, ms);
	}
out:
	floe_free(paths);
	floe_arena_reset(&a);
	return rc;
}

/* ---- persisting at a commit ------------------------------------------------------- */

bool stream_index_persist_wanted(const rt_table *t, bool last)
{
	/* a key with two live rows is not in the blob: such an index is not persisted */
	return t->idx_persist && t->index && !t->idx_stale &&
	       (t->idx_persist_due || last || t->idx_commits_since + 1 >= t->idx_persist_every) &&
	       !floe_delta_index__has_dups(t->index);
}

int stream_index_persist_write(floe_pipeline *p, rt_table *t, floe_snapshot_op *ap,
			       const floe_data_file *files, size_t n, int64_t ckpt, char *path,
			       size_t cap, floe_error *err)
{
	int rc = FLOE_OK;
	int64_t t0 = floe_monotonic_ns();
	const floe_metadata *m = floe_table_metadata(t->commit_t);
	path[0] = 0;
	/* every data file this commit adds is one of the snapshot's (index_apply
	 * registered only those still holding a key's row) */
	for (size_t i = 0; i < n && !rc; i++) {
		const floe_data_file *f = &files[i];
		if (f->content != FLOE_CONTENT_DATA)
			continue;
		rc = floe_delta_index_add_file(t->index, f->file_path, f->spec_id, &f->partition,
					       NULL, err);
	}
	if (rc)
		return rc;
	const char *mdir = floe_metadata_property(m, "write.metadata.path");
	int64_t sid = floe_op_snapshot_id(ap);
	int w = mdir ? snprintf(path, cap, "%s/floe-key-index-%lld-%lld.puffin", mdir,
				(long long)sid, (long long)ckpt)
		     : snprintf(path, cap, "%s/metadata/floe-key-index-%lld-%lld.puffin",
				m->location, (long long)sid, (long long)ckpt);
	if (w < 0 || (size_t)w >= cap) {
		path[0] = 0;
		return floe_error_set(err, FLOE_EINVAL, "key index: a path too long");
	}
	const floe_snapshot *par = floe_metadata_snapshot(m, t->idx_expect);
	bool wide;
	floe_key_index_blob_hdr h = {sid,
				     t->idx_expect,
				     par ? par->sequence_number : 0,
				     t->eq_ids,
				     t->n_eq,
				     floe_delta_index__exact(t->index, &wide),
				     p->pipeline_id};
	uint64_t size = 0, ne = 0;
	if ((rc = floe_delta_index_persist(t->index, floe_table_io(t->commit_t), path, &h, &size,
					   &ne, err)) ||
	    (rc = floe_op_set_summary(ap, FLOE_KEY_INDEX_SUMMARY_KEY, path, err))) {
		floe_io_remove_quiet(floe_table_io(t->commit_t), path);
		path[0] = 0;
		return rc;
	}
	FLOE_INFO("table %s: key index persisted to %s for snapshot %lld: %llu keys, %llu bytes "
		  "(%lld ms)",
		  t->ident, path, (long long)sid, (unsigned long long)ne, (unsigned long long)size,
		  (long long)((floe_monotonic_ns() - t0) / 1000000));
	return FLOE_OK;
}

void stream_index_persist_after(rt_table *t, const char *path, bool committed, bool discard)
{
	if (!t->index_mode)
		return;
	if (path && path[0] && discard)
		floe_io_remove_quiet(floe_table_io(t->commit_t), path);
	if (!committed)
		return;
	if (path && path[0] && !discard) {
		t->idx_commits_since = 0;
		t->idx_persist_due = false;
	} else {
		t->idx_commits_since++;
	}
}
