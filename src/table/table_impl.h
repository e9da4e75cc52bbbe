/*
 * table.h — a loaded table: its catalog identity, current metadata and
 * FileIO; walking the files of a snapshot; commits.
 *
 * Thread-safety: a floe_table is used by one thread at a time; its metadata
 * (floe_table_metadata) is immutable and may be shared while the table lives.
 */
#ifndef FLOE_TABLE_TABLE_H
#define FLOE_TABLE_TABLE_H

#include "catalog/catalog_impl.h"
#include "floe/table.h"
#include "iceberg/manifest.h"

/* Load a path-based table (a table directory or a metadata file) with an
 * optional path map for tables copied from elsewhere (rules are copied). */
int floe_table_load_path(floe_table **out, floe_fileio *io, const char *path,
			 const floe_path_map *map, floe_error *err) FLOE_WUR;
/* Reload the current metadata from the catalog. */
int floe_table_refresh(floe_table *t, floe_error *err) FLOE_WUR;
const floe_metadata *floe_table_metadata(const floe_table *t);
floe_fileio *floe_table_io(const floe_table *t);
floe_catalog *floe_table_catalog(const floe_table *t);
const char *floe_table_namespace(const floe_table *t);
const char *floe_table_name(const floe_table *t);
const floe_path_map *floe_table_path_map(const floe_table *t);
/* A handle on a table that does not exist yet (no metadata): what a create
 * commits through. */
int floe_table__new_unloaded(floe_table **out, floe_catalog *cat, const char *ns, const char *name,
			     floe_error *err) FLOE_WUR;
/* Replace the table's metadata after a commit (takes ownership). */
void floe_table__set_metadata(floe_table *t, floe_metadata *m);

/* Manifests of a snapshot (arena array). The list must hold what the
 * snapshot's summary promises (floe_manifest_list_check): FLOE_ECORRUPT. */
int floe_table_manifests(floe_manifest_file **out, size_t *n, floe_arena *a, floe_table *t,
			 const floe_snapshot *snap, floe_error *err) FLOE_WUR;
/* The same; without check, what the list holds (a reader that skips corrupt
 * metadata checks it itself). */
int floe_table__read_manifests(floe_manifest_file **out, size_t *n, floe_arena *a, floe_table *t,
			       const floe_snapshot *snap, bool check, floe_error *err) FLOE_WUR;

/*
 * What a commit builds on must be what its metadata promises: read every
 * manifest of snapshot snap (its list checked against the summary's totals,
 * each manifest's entries counted against its list entry) and fail with
 * FLOE_ECORRUPT naming the file. A manifest found whole is remembered by the
 * handle (manifests are immutable), so a writer that commits again reads
 * only what others added since. Reads, not writes: a commit, an expiry or an
 * orphan cleanup on top of a truncated manifest would make the loss
 * permanent.
 */
int floe_table__verify_snapshot(floe_table *t, const floe_snapshot *snap, floe_error *err) FLOE_WUR;
/* The same for manifests already listed (a commit's parent). */
int floe_table__verify_manifests(floe_table *t, const floe_manifest_file *mfs, size_t n,
				 floe_error *err) FLOE_WUR;
/* Every branch and tag head (and the current snapshot). */
int floe_table__verify_refs(floe_table *t, floe_error *err) FLOE_WUR;
/* A manifest this process wrote (and so need not read back). */
void floe_table__note_verified(floe_table *t, const char *manifest_path);

/*
 * Writer leases (table/lease.h) held through the table handle, counted:
 * the first holder takes the lease file. lease_hold: a commit's (one hour,
 * renewed before each attempt); when its last holder is done the lease stays
 * with the handle, advanced to that moment, so a writer that commits again
 * and again rewrites its lease at most once a minute (to move its since
 * forward) and at half its life, not twice per commit; it is removed when
 * the handle is freed (or by lease_release_idle). lease_keep_alive: a long writer's (a
 * pipeline, a compaction), renewed by a thread every ttl/4 and removed when
 * its last holder is done. A holder that says keep (a commit whose outcome
 * is unknown) leaves the file to expire. lease_advance: files older than
 * since_ms are committed or garbage. A path table or a table not created
 * yet takes none.
 */
int floe_table__lease_hold(floe_table *t, const char *what, floe_error *err) FLOE_WUR;
int floe_table__lease_keep_alive(floe_table *t, const char *what, int64_t ttl_ms,
				 floe_error *err) FLOE_WUR;
void floe_table__lease_advance(floe_table *t, int64_t since_ms);
/* Renew a held lease that is past half its life (a commit, before each attempt). */
int floe_table__lease_touch(floe_table *t, floe_error *err) FLOE_WUR;
void floe_table__lease_drop(floe_table *t, bool keep);
/* Remove a lease nobody holds (one left by the handle's last commit): orphan
 * cleanup through a handle that is not writing protects no files of its own. */
void floe_table__lease_release_idle(floe_table *t);

typedef int (*floe_file_entry_fn)(const floe_manifest_entry *e, const floe_manifest_file *mf,
				  void *payload);

enum {
	FLOE_WALK_DATA = 1,    /* data manifests */
	FLOE_WALK_DELETES = 2, /* delete manifests */
	FLOE_WALK_ALL_ENTRIES = 4, /* also DELETED entries (default: live only) */
};

/* Every entry of a snapshot's manifests (NULL snapshot = current; no
 * snapshot: nothing). */
int floe_table_walk(floe_table *t, const floe_snapshot *snap, int flags, floe_file_entry_fn fn,
		    void *payload, floe_error *err) FLOE_WUR;

/* The entries of one manifest (flags as above; a manifest of the other
 * content is skipped). */
int floe_table_walk_manifest(floe_table *t, const floe_manifest_file *mf, int flags,
			     floe_file_entry_fn fn, void *payload, floe_error *err) FLOE_WUR;

/* Live file counts of a snapshot. */
typedef struct floe_file_counts {
	int64_t data_files, position_delete_files, equality_delete_files, dvs;
	int64_t data_records, position_deletes, equality_deletes;
	int64_t data_bytes, delete_bytes;
} floe_file_counts;

int floe_table_count_files(floe_file_counts *out, floe_table *t, const floe_snapshot *snap,
			   floe_error *err) FLOE_WUR;


/* refs.c: one change of a branch or tag (floe_ref_opts without version),
 * applied to base as a pure step (unit-tested), and committed. */
typedef struct floe_ref_change {
	int action; /* floe_ref_action */
	const char *name;
	int64_t snapshot_id;
	const char *from;
	int64_t min_snapshots_to_keep, max_snapshot_age_ms, max_ref_age_ms;
} floe_ref_change;
int floe_refs_apply(const floe_metadata *base, const floe_ref_change *c, floe_metadata **next,
		    floe_error *err) FLOE_WUR;
int floe_table__update_ref(floe_table *t, const floe_ref_change *c, floe_error *err) FLOE_WUR;

#endif
