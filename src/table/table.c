/*
 * table.c — loaded tables and walking a snapshot's manifests.
 */
#include "table/table_impl.h"

#include <stdio.h>
#include <string.h>

#include "iceberg/manifest_scan.h"
#include "table/lease.h"
#include "util/alloc.h"
#include "util/hmap.h"
#include "util/log.h"
#include "util/str.h"
#include "util/timeutil.h"

#define LIST_KEEP_MAX ((size_t)16 << 20)

struct floe_table {
	floe_catalog *cat; /* NULL for path tables */
	floe_fileio *io;   /* borrowed from the catalog, or owned for path tables */
	bool owns_io;
	char *ns, *name;
	char *path;
	floe_metadata *meta;
	floe_path_map map;
	floe_arena map_arena;
	floe_hmap verified; /* manifests read whole and found as their list promised */
	/* the last manifest list read from an object store: a commit reads its
	 * parent's list to check it and again to build on it (lists never change) */
	char *list_path;
	floe_buf list_bytes;
	floe_lease *lease;  /* writer lease (lease.h), held by lease_refs users */
	int lease_refs;
	bool lease_keep;    /* a holder's commit has an unknown outcome: let it expire */
};

int floe_table__new_unloaded(floe_table **out, floe_catalog *cat, const char *ns, const char *name,
			     floe_error *err)
{
	floe_table *t = floe_calloc(1, sizeof(*t));
	if (!t || !(t->ns = floe_strdup(ns)) || !(t->name = floe_strdup(name))) {
		floe_table_free(t);
		return floe_error_oom(err);
	}
	floe_arena_init(&t->map_arena, 1024);
	floe_hmap_init(&t->verified);
	floe_buf_init(&t->list_bytes, LIST_KEEP_MAX);
	t->cat = cat;
	t->io = cat->io;
	*out = t;
	return FLOE_OK;
}

int floe_table_load(floe_table **out, floe_catalog *cat, const char *ns, const char *name,
		    floe_error *err)
{
	floe_table *t = NULL;
	int rc = floe_table__new_unloaded(&t, cat, ns, name, err);
	if (rc)
		return rc;
	if ((rc = floe_catalog_load_table(cat, ns, name, &t->meta, err))) {
		floe_table_free(t);
		return rc;
	}
	*out = t;
	return FLOE_OK;
}

int floe_table_load_path(floe_table **out, floe_fileio *io, const char *path,
			 const floe_path_map *map, floe_error *err)
{
	floe_table *t = floe_calloc(1, sizeof(*t));
	int rc;
	if (!t || !(t->path = floe_strdup(path))) {
		floe_free(t);
		return floe_error_oom(err);
	}
	floe_arena_init(&t->map_arena, 1024);
	floe_hmap_init(&t->verified);
	floe_buf_init(&t->list_bytes, LIST_KEEP_MAX);
	t->io = io;
	if (map && map->n) {
		floe_path_rule *rules = floe_arena_calloc(&t->map_arena, map->n, sizeof(*rules));
		if (!rules) {
			floe_table_free(t);
			return floe_error_oom(err);
		}
		for (size_t i = 0; i < map->n; i++) {
			rules[i].from = floe_arena_strdup(&t->map_arena, map->rules[i].from);
			rules[i].to = floe_arena_strdup(&t->map_arena, map->rules[i].to);
			if (!rules[i].from || !rules[i].to) {
				floe_table_free(t);
				return floe_error_oom(err);
			}
		}
		t->map.rules = rules;
		t->map.n = map->n;
	}
	if ((rc = floe_fs_load_path(io, path, &t->meta, err))) {
		floe_table_free(t);
		return rc;
	}
	*out = t;
	return FLOE_OK;
}

int floe_table_refresh(floe_table *t, floe_error *err)
{
	floe_metadata *m = NULL;
	int rc = t->cat ? floe_catalog_load_table(t->cat, t->ns, t->name, &m, err)
			: floe_fs_load_path(t->io, t->path, &m, err);
	if (rc)
		return rc;
	floe_metadata_free(t->meta);
	t->meta = m;
	return FLOE_OK;
}

void floe_table_free(floe_table *t)
{
	if (!t)
		return;
	floe_lease_release(t->lease, t->lease_keep);
	floe_metadata_free(t->meta);
	if (t->owns_io)
		floe_io_free(t->io);
	floe_free(t->ns);
	floe_free(t->name);
	floe_free(t->path);
	floe_arena_reset(&t->map_arena);
	floe_hmap_reset(&t->verified);
	floe_free(t->list_path);
	floe_buf_reset(&t->list_bytes);
	floe_free(t);
}

const floe_metadata *floe_table_metadata(const floe_table *t)
{
	return t->meta;
}
floe_fileio *floe_table_io(const floe_table *t)
{
	return t->io;
}
floe_catalog *floe_table_catalog(const floe_table *t)
{
	return t->cat;
}
const char *floe_table_namespace(const floe_table *t)
{
	return t->ns;
}
const char *floe_table_name(const floe_table *t)
{
	return t->name;
}
const floe_path_map *floe_table_path_map(const floe_table *t)
{
	return t->map.n ? &t->map : NULL;
}

void floe_table__set_metadata(floe_table *t, floe_metadata *m)
{
	floe_metadata_free(t->meta);
	t->meta = m;
}

int floe_table_manifests(floe_manifest_file **out, size_t *n, floe_arena *a, floe_table *t,
			 const floe_snapshot *snap, floe_error *err)
{
	return floe_table__read_manifests(out, n, a, t, snap, true, err);
}

/* The manifest list at p: from the handle's copy, or read (and kept when it
 * is on an object store and small enough). */
static int open_list(floe_table *t, const char *p, floe_input **in, floe_error *err)
{
	char scheme[16];
	int rc;
	if (t->list_path && !strcmp(t->list_path, p))
		goto kept;
	floe_io_scheme(p, scheme, sizeof(scheme));
	if (!scheme[0] || !strcmp(scheme, "file") || !strcmp(scheme, "mem"))
		return floe_io_open_read_seq(t->io, p, in, err);
	if ((rc = floe_io_open_read_seq(t->io, p, in, err)))
		return rc;
	if ((*in)->size > LIST_KEEP_MAX)
		return FLOE_OK;
	floe_free(t->list_path);
	t->list_path = NULL;
	floe_buf_clear(&t->list_bytes);
	rc = floe_input_read_all(*in, &t->list_bytes, LIST_KEEP_MAX, err);
	floe_input_close(*in);
	*in = NULL;
	if (rc)
		return rc;
	if (!(t->list_path = floe_strdup(p)))
		return floe_error_oom(err);
kept:
	if (!(*in = floe_input_memory(t->list_bytes.data, t->list_bytes.len, t->list_path)))
		return floe_error_oom(err);
	return FLOE_OK;
}

int floe_table__read_manifests(floe_manifest_file **out, size_t *n, floe_arena *a, floe_table *t,
			       const floe_snapshot *snap, bool check, floe_error *err)
{
	const floe_path_map *map = floe_table_path_map(t);
	int rc;
	*out = NULL;
	*n = 0;
	if (!snap)
		return FLOE_OK;
	if (snap->manifest_list) {
		floe_input *in;
		const char *p = floe_path_map_apply(map, a, snap->manifest_list);
		if (!p)
			return floe_error_oom(err);
		if ((rc = open_list(t, p, &in, err)))
			return floe_error_prefix(err, rc, "snapshot %lld: ", (long long)snap->snapshot_id);
		rc = floe_manifest_list_read(out, n, a, in, map, err);
		floe_input_close(in);
		if (!rc && check && (rc = floe_manifest_list_check(snap, *out, *n, p, err))) {
			*out = NULL;
			*n = 0;
		}
		return rc;
	}
	/* v1: manifests embedded in the snapshot */
	floe_manifest_file *items = floe_arena_calloc(a, snap->n_v1_manifests + 1, sizeof(*items));
	if (!items)
		return floe_error_oom(err);
	for (size_t i = 0; i < snap->n_v1_manifests; i++) {
		floe_input *in;
		const char *p = floe_path_map_apply(map, a, snap->v1_manifests[i]);
		if (!p)
			return floe_error_oom(err);
		if ((rc = floe_io_open_read_seq(t->io, p, &in, err)))
			return rc;
		rc = floe_manifest_file_from_header(&items[i], a, in, p, snap->snapshot_id, err);
		floe_input_close(in);
		if (rc)
			return rc;
		items[i].recorded_path = snap->v1_manifests[i];
	}
	*out = items;
	*n = snap->n_v1_manifests;
	return FLOE_OK;
}

/* ---- writer leases ------------------------------------------------------------------ */

/* A commit's lease lives at most as long as its retries may take. */
#define COMMIT_LEASE_TTL_MS INT64_C(3600000)

static int lease_take(floe_table *t, const char *what, int64_t ttl_ms, bool heartbeat,
		      floe_error *err)
{
	if (t->lease && heartbeat && !floe_lease_has_heartbeat(t->lease) && t->lease_refs == 0) {
		/* a lingering commit lease: a long writer wants one renewed by a thread */
		floe_lease_release(t->lease, false);
		t->lease = NULL;
	}
	if (t->lease) {
		t->lease_refs++;
		return floe_lease_touch(t->lease, err);
	}
	if (!t->cat || !t->meta)
		return FLOE_OK; /* path tables do not commit; a create has no location yet */
	char *dir = floe_metadata_dir(t->meta);
	if (!dir)
		return floe_error_oom(err);
	char label[512];
	snprintf(label, sizeof(label), "%s %s.%s", what, t->ns, t->name);
	int rc = floe_lease_take(&t->lease, t->io, dir, label, ttl_ms, heartbeat, err);
	floe_free(dir);
	if (!rc) {
		t->lease_refs = 1;
		t->lease_keep = false;
	}
	return rc;
}

int floe_table__lease_hold(floe_table *t, const char *what, floe_error *err)
{
	return lease_take(t, what, COMMIT_LEASE_TTL_MS, false, err);
}

int floe_table__lease_keep_alive(floe_table *t, const char *what, int64_t ttl_ms, floe_error *err)
{
	return lease_take(t, what, ttl_ms, true, err);
}

int floe_table__lease_touch(floe_table *t, floe_error *err)
{
	return floe_lease_touch(t->lease, err);
}

void floe_table__lease_advance(floe_table *t, int64_t since_ms)
{
	floe_lease_advance(t->lease, since_ms);
}

void floe_table__lease_drop(floe_table *t, bool keep)
{
	if (!t->lease || t->lease_refs <= 0)
		return; /* none, or a lingering one nobody holds */
	t->lease_keep |= keep;
	if (--t->lease_refs > 0)
		return;
	if (!t->lease_keep && !floe_lease_has_heartbeat(t->lease)) {
		/* a commit's lease outlives it while the handle does: what it wrote is
		 * committed or removed, so only later files need it (written to the file
		 * at its next renewal) — and the next commit costs no lease I/O */
		floe_lease_advance(t->lease, floe_now_ms());
		floe_error e;
		floe_error_clear(&e);
		if (floe_lease_touch(t->lease, &e))
			FLOE_WARN("writer lease: %s", e.msg);
		return;
	}
	floe_lease_release(t->lease, t->lease_keep);
	t->lease = NULL;
	t->lease_refs = 0;
	t->lease_keep = false;
}

void floe_table__lease_release_idle(floe_table *t)
{
	if (!t->lease || t->lease_refs > 0)
		return;
	floe_lease_release(t->lease, t->lease_keep);
	t->lease = NULL;
	t->lease_keep = false;
}

static int count_only(const floe_manifest_entry *e, void *payload)
{
	(void)e;
	(void)payload;
	return 0;
}

int floe_table__verify_manifests(floe_table *t, const floe_manifest_file *mfs, size_t n,
				 floe_error *err)
{
	int rc = FLOE_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		const floe_manifest_file *mf = &mfs[i];
		floe_input *in = NULL;
		if (floe_hmap_get_str(&t->verified, mf->path, NULL))
			continue; /* manifests are immutable: read once per handle */
		if ((rc = floe_io_open_read_seq(t->io, mf->path, &in, err)))
			break;
		/* the fast reader counts the entries against the list entry's promise */
		rc = floe_manifest_scan(in, t->meta, mf, NULL, count_only, NULL, NULL, err);
		floe_input_close(in);
		if (!rc && floe_hmap_put_str(&t->verified, mf->path, 1))
			rc = floe_error_oom(err);
	}
	return rc;
}

int floe_table__verify_snapshot(floe_table *t, const floe_snapshot *snap, floe_error *err)
{
	floe_arena a;
	floe_manifest_file *mfs;
	size_t n;
	if (!snap)
		return FLOE_OK;
	floe_arena_init(&a, 65536);
	int rc = floe_table_manifests(&mfs, &n, &a, t, snap, err);
	if (!rc)
		rc = floe_table__verify_manifests(t, mfs, n, err);
	floe_arena_reset(&a);
	return floe_error_prefix(err, rc, "table %s%s%s: corrupt snapshot: ", t->ns ? t->ns : "",
				 t->ns ? "." : "", t->name ? t->name : t->path);
}

int floe_table__verify_refs(floe_table *t, floe_error *err)
{
	const floe_metadata *m = t->meta;
	int rc = FLOE_OK;
	if (!m)
		return FLOE_OK;
	rc = floe_table__verify_snapshot(t, floe_metadata_current_snapshot(m), err);
	for (size_t i = 0; i < m->n_refs && !rc; i++)
		rc = floe_table__verify_snapshot(t, floe_metadata_snapshot(m, m->refs[i].snapshot_id),
						 err);
	return rc;
}

void floe_table__note_verified(floe_table *t, const char *manifest_path)
{
	if (floe_hmap_put_str(&t->verified, manifest_path, 1))
		return; /* only a cache: it is read again next time */
}

typedef struct walk_ctx {
	floe_file_entry_fn fn;
	void *payload;
	const floe_manifest_file *mf;
	bool all;
} walk_ctx;

static int walk_entry(const floe_manifest_entry *e, void *payload)
{
	walk_ctx *w = payload;
	if (!w->all && e->status == FLOE_ENTRY_DELETED)
		return 0;
	return w->fn(e, w->mf, w->payload);
}

int floe_table_walk(floe_table *t, const floe_snapshot *snap, int flags, floe_file_entry_fn fn,
		    void *payload, floe_error *err)
{
	floe_arena a;
	floe_manifest_file *mfs;
	size_t n;
	int rc;
	if (!snap)
		snap = floe_metadata_current_snapshot(t->meta);
	if (!snap)
		return FLOE_OK;
	floe_arena_init(&a, 65536);
	rc = floe_table_manifests(&mfs, &n, &a, t, snap, err);
	for (size_t i = 0; i < n && !rc; i++)
		rc = floe_table_walk_manifest(t, &mfs[i], flags, fn, payload, err);
	floe_arena_reset(&a);
	return rc;
}

int floe_table_walk_manifest(floe_table *t, const floe_manifest_file *mf, int flags,
			     floe_file_entry_fn fn, void *payload, floe_error *err)
{
	floe_input *in;
	bool del = mf->content == FLOE_MANIFEST_DELETES;
	int rc;
	if ((del && !(flags & FLOE_WALK_DELETES)) || (!del && !(flags & FLOE_WALK_DATA)))
		return FLOE_OK;
	if ((rc = floe_io_open_read_seq(t->io, mf->path, &in, err)))
		return rc;
	walk_ctx w = {fn, payload, mf, (flags & FLOE_WALK_ALL_ENTRIES) != 0};
	rc = floe_manifest_read(in, t->meta, mf, floe_table_path_map(t), walk_entry, &w, err);
	floe_input_close(in);
	return rc;
}

static int count_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	floe_file_counts *c = payload;
	const floe_data_file *f = &e->file;
	(void)mf;
	switch (f->content) {
	case FLOE_CONTENT_DATA:
		c->data_files++;
		c->data_records += f->record_count;
		c->data_bytes += f->file_size_in_bytes;
		break;
	case FLOE_CONTENT_POSITION_DELETES:
		if (floe_str_ieq(f->file_format, "PUFFIN")) {
			c->dvs++;
			c->delete_bytes += f->content_size_in_bytes > 0 ? f->content_size_in_bytes : 0;
		} else {
			c->position_delete_files++;
			c->delete_bytes += f->file_size_in_bytes;
		}
		c->position_deletes += f->record_count;
		break;
	case FLOE_CONTENT_EQUALITY_DELETES:
		c->equality_delete_files++;
		c->equality_deletes += f->record_count;
		c->delete_bytes += f->file_size_in_bytes;
		break;
	default: break;
	}
	return 0;
}

int floe_table_count_files(floe_file_counts *out, floe_table *t, const floe_snapshot *snap,
			   floe_error *err)
{
	memset(out, 0, sizeof(*out));
	return floe_table_walk(t, snap, FLOE_WALK_DATA | FLOE_WALK_DELETES, count_cb, out, err);
}
