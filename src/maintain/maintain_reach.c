/*
 * maintain_reach.c — the set of files a group of snapshots reaches.
 */
#include <string.h>

#include "maintain/maintain_int.h"
#include "util/str.h"

const char *floe_reach_key(const char *path)
{
	const char *l = floe_io_local_path(path);
	if (l)
		return l;
	if (strncmp(path, "s3://", 5) == 0)
		return path + 5;
	if (strncmp(path, "s3a://", 6) == 0 || strncmp(path, "s3n://", 6) == 0)
		return path + 6;
	return path;
}

void floe_reach_init(floe_reach *r, bool live_only, bool normalize)
{
	floe_hmap_init(&r->files);
	r->live_only = live_only;
	r->normalize = normalize;
}

void floe_reach_reset(floe_reach *r)
{
	floe_hmap_reset(&r->files);
}

int floe_reach_add(floe_reach *r, const char *path, int kind)
{
	if (!path)
		return FLOE_OK;
	return floe_hmap_put_str(&r->files, r->normalize ? floe_reach_key(path) : path,
				 (uint64_t)kind)
		       ? FLOE_ENOMEM
		       : FLOE_OK;
}

bool floe_reach_has(const floe_reach *r, const char *path)
{
	return floe_hmap_get_str(&r->files, r->normalize ? floe_reach_key(path) : path, NULL);
}

static int entry_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	floe_reach *r = payload;
	(void)mf;
	if (r->live_only && e->status == FLOE_ENTRY_DELETED)
		return 0;
	int kind = e->file.content == FLOE_CONTENT_DATA		   ? FLOE_REACH_DATA
		   : e->file.content == FLOE_CONTENT_POSITION_DELETES ? FLOE_REACH_POS_DELETES
								      : FLOE_REACH_EQ_DELETES;
	return floe_reach_add(r, e->file.file_path, kind);
}

int floe_reach_snapshot(floe_reach *r, floe_table *t, const floe_snapshot *s, floe_error *err)
{
	floe_arena a;
	floe_manifest_file *mfs = NULL;
	size_t n = 0;
	int rc;
	if (floe_reach_add(r, s->manifest_list, FLOE_REACH_MANIFEST_LIST))
		return floe_error_oom(err);
	/* floe's persisted key index (write_index_persist.h): reachable while a
	 * snapshot names it; not a data or delete file (no manifest lists it) */
	if (floe_reach_add(r, floe_snapshot_summary(s, "floe.key-index"), FLOE_REACH_METADATA))
		return floe_error_oom(err);
	floe_arena_init(&a, 65536);
	rc = floe_table_manifests(&mfs, &n, &a, t, s, err);
	for (size_t i = 0; i < n && !rc; i++) {
		if (floe_reach_has(r, mfs[i].path))
			continue; /* shared with a snapshot already added */
		if (floe_reach_add(r, mfs[i].path, FLOE_REACH_MANIFEST)) {
			rc = floe_error_oom(err);
			break;
		}
		rc = floe_table_walk_manifest(t, &mfs[i],
					      FLOE_WALK_DATA | FLOE_WALK_DELETES |
						      FLOE_WALK_ALL_ENTRIES,
					      entry_cb, r, err);
		if (rc == FLOE_ENOMEM)
			floe_error_set(err, rc, "out of memory");
	}
	floe_arena_reset(&a);
	return floe_error_prefix(err, rc, "snapshot %lld: ", (long long)s->snapshot_id);
}

static int add_stat_files(floe_reach *r, floe_json *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *p;
		if (floe_json_get_str(items[i], "statistics-path", &p, NULL, NULL) == 0 &&
		    floe_reach_add(r, p, FLOE_REACH_METADATA))
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

int floe_reach_metadata(floe_reach *r, const floe_metadata *m)
{
	if (floe_reach_add(r, m->metadata_location, FLOE_REACH_METADATA))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < m->n_metadata_log; i++)
		if (floe_reach_add(r, m->metadata_log[i].metadata_file, FLOE_REACH_METADATA))
			return FLOE_ENOMEM;
	if (add_stat_files(r, m->statistics, m->n_statistics) ||
	    add_stat_files(r, m->partition_statistics, m->n_partition_statistics))
		return FLOE_ENOMEM;
	return FLOE_OK;
}
