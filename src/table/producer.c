/*
 * producer.c — snapshot producers: append, overwrite, delete, replace
 * (compaction) and row delta, with the commit loop.
 *
 * DESIGN: files to add are written into new manifests once (their data
 * sequence numbers inherited, or explicit for a rewrite). Each attempt then
 * works against the branch head it reads: it validates, rewrites the
 * manifests holding files to remove (those become DELETED entries with the
 * new snapshot id and their original sequence numbers, the others EXISTING
 * with explicit values, earlier DELETED entries are dropped) — a rewrite is
 * cached by manifest path and reused when the next attempt sees the same
 * manifest — and writes a manifest list naming new manifests first, then the
 * rewritten and untouched ones, as Java's producers order them.
 *
 * spec: "Snapshots", "Sequence Numbers", "Manifests" (entry status and
 * inheritance), "Row Lineage"; summary keys as Java's SnapshotSummary
 * (../shared/iceberg-notes.md section 6).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iceberg/props.h"
#include "table/commit.h"
#include "util/alloc.h"
#include "util/hmap.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/str.h"
#include "util/timeutil.h"

typedef struct file_group {
	int32_t spec_id;
	bool deletes; /* delete files (position, equality, DVs) */
	floe_data_file *files;
	size_t n, cap;
} file_group;

/* What an attempt removes, for the summary. */
typedef struct removed_totals {
	int64_t data_files, data_records, data_size;
	int64_t pos_files, eq_files, dvs, pos_records, eq_records, delete_size;
} removed_totals;

/* A merged manifest (manifests merged on commit), by the exact list of its inputs. */
typedef struct merged {
	const char *key; /* the inputs' paths, each followed by '\n' */
	floe_manifest_file written;
	bool used; /* named by the current attempt */
} merged;

typedef struct rewrite {
	const char *orig_path;      /* the base manifest */
	floe_manifest_file written; /* its replacement (same content, removed entries DELETED) */
	removed_totals totals;      /* what it removes */
	bool used;                  /* named by the current attempt */
	uint32_t *found;            /* the removals it holds (indexes into op->removes) */
	size_t n_found;
} rewrite;

struct floe_snapshot_op {
	floe_table *t;
	char *branch;
	floe_op_kind kind;
	floe_arena arena;
	file_group *groups;
	size_t n_groups, cap_groups;
	floe_data_file *removes;
	size_t n_removes, cap_removes;
	floe_hmap remove_keys; /* "<content>|<path>" -> index */
	floe_hmap no_match;    /* manifests known to hold none of the removals (immutable files) */
	floe_strmap extra;
	char *attempt_list; /* the manifest list of the current attempt */
	char *fence_pipeline; /* floe_op_fence_pipeline */
	int64_t fence_expect;
	floe_op_check_fn check; /* floe_op_set_check */
	void *check_payload;
	char commit_uuid[37];
	int64_t snapshot_id;
	int64_t data_seq;      /* -1: inherit */
	int64_t validate_from; /* -2 unset, -1 the first base */
	bool validated_start;
	int64_t validated_head; /* snapshots up to this head were validated (-1 none) */
	int64_t rd_validated_head; /* the same for the row-delta checks */
	/* new manifests, written once (again only if one is found deleted) */
	floe_manifest_file *manifests;
	size_t *manifest_group; /* the group each was written from */
	size_t n_manifests;
	bool manifests_written;
	int n_manifest_files; /* for names: <uuid>-m<N>.avro */
	/* manifest replacement (rewrite-manifests) */
	const char **mr_old;
	size_t n_mr_old;
	floe_manifest_file *mr_new;
	size_t n_mr_new;
	/* rewritten manifests, by base manifest */
	rewrite *rewrites;
	size_t n_rewrites, cap_rewrites;
	/* manifests merged on commit (commit.manifest-merge.enabled) */
	merged *merges;
	size_t n_merges, cap_merges;
	/* added totals */
	int64_t added_data_files, added_records, added_data_size;
	int64_t added_pos_files, added_eq_files, added_dvs, added_pos_records, added_eq_records,
		added_delete_size;
	int64_t changed_partitions;
	/* the table's writer lease (table/lease.h), held from the first file
	 * written until the operation is freed */
	bool lease_held, lease_keep;
	bool verify_added; /* floe_op_verify_added */
	bool allow_empty;  /* floe_op_allow_empty */
	/* floe_op_set_overwrite */
	bool ow_on, ow_dynamic, ow_resolved, ow_base_known;
	floe_op_scope_fn ow_filter;
	void *ow_filter_payload;
	char *ow_filter_text, *ow_pipeline;
	int64_t ow_base, ow_base_seq, ow_validated_head;
};

static int ensure_lease(floe_snapshot_op *op, floe_error *err);

int floe_op_new(floe_snapshot_op **out, floe_table *t, floe_op_kind kind, const char *branch,
		floe_error *err)
{
	floe_snapshot_op *op = floe_calloc(1, sizeof(*op));
	if (!op || !(op->branch = floe_strdup(branch ? branch : "main"))) {
		floe_free(op);
		return floe_error_oom(err);
	}
	op->t = t;
	op->kind = kind;
	op->data_seq = -1;
	/* a row delta validates from its first base by default (Java's row
	 * delta validates the data files its deletes reference) */
	op->validate_from = kind == FLOE_OP_ROW_DELTA ? -1 : -2;
	op->validated_head = -1;
	op->rd_validated_head = -1;
	floe_arena_init(&op->arena, 65536);
	floe_hmap_init(&op->remove_keys);
	floe_hmap_init(&op->no_match);
	floe_strmap_init(&op->extra);
	floe_uuid_v4_str(op->commit_uuid);
	op->snapshot_id = floe_new_snapshot_id();
	/* from here on what the caller writes for this operation is protected
	 * from orphan cleanup until it is committed */
	int rc = ensure_lease(op, err);
	if (rc) {
		floe_op_free(op);
		return rc;
	}
	*out = op;
	return FLOE_OK;
}

void floe_op_free(floe_snapshot_op *op)
{
	if (!op)
		return;
	if (op->lease_held)
		floe_table__lease_drop(op->t, op->lease_keep);
	for (size_t i = 0; i < op->n_groups; i++)
		floe_free(op->groups[i].files);
	floe_free(op->groups);
	floe_free(op->removes);
	floe_free(op->rewrites);
	floe_free(op->merges);
	floe_hmap_reset(&op->remove_keys);
	floe_hmap_reset(&op->no_match);
	floe_strmap_reset(&op->extra);
	floe_arena_reset(&op->arena);
	floe_free(op->attempt_list);
	floe_free(op->fence_pipeline);
	floe_free(op->ow_filter_text);
	floe_free(op->ow_pipeline);
	floe_free(op->branch);
	floe_free(op);
}

size_t floe_op_added(const floe_snapshot_op *op)
{
	size_t n = 0;
	for (size_t i = 0; i < op->n_groups; i++)
		n += op->groups[i].n;
	return n;
}

size_t floe_op_removed(const floe_snapshot_op *op)
{
	return op->n_removes;
}

void floe_op_set_data_sequence_number(floe_snapshot_op *op, int64_t seq)
{
	op->data_seq = seq;
}

void floe_op_allow_empty(floe_snapshot_op *op)
{
	op->allow_empty = true;
}

void floe_op_verify_added(floe_snapshot_op *op)
{
	op->verify_added = true;
}

void floe_op_validate_from(floe_snapshot_op *op, int64_t snapshot_id)
{
	op->validate_from = snapshot_id;
}

static bool is_dv(const floe_data_file *f)
{
	return f->content == FLOE_CONTENT_POSITION_DELETES && floe_str_ieq(f->file_format, "PUFFIN");
}

int floe_op_add_file(floe_snapshot_op *op, const floe_data_file *f, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(op->t);
	const floe_partition_spec *spec = floe_metadata_spec(m, f->spec_id);
	bool del = f->content != FLOE_CONTENT_DATA;
	file_group *g = NULL;
	if (op->manifests_written)
		return floe_error_set(err, FLOE_EINVAL, "files cannot be added after commit started");
	if (op->kind == FLOE_OP_APPEND && del)
		return floe_error_set(err, FLOE_EINVAL, "an append adds data files only ('%s')",
				      f->file_path);
	if (del && m->format_version < 2)
		return floe_error_set(err, FLOE_EINVAL,
				      "'%s': delete files need format version 2 or later",
				      f->file_path);
	if (!spec)
		return floe_error_set(err, FLOE_EINVAL, "'%s': partition spec %d is not in the table",
				      f->file_path, f->spec_id);
	if (f->partition.n != spec->n_fields)
		return floe_error_set(err, FLOE_EINVAL,
				      "'%s': %zu partition values for a spec with %zu fields",
				      f->file_path, f->partition.n, spec->n_fields);
	if (f->content == FLOE_CONTENT_EQUALITY_DELETES && f->n_equality_ids == 0)
		return floe_error_set(err, FLOE_EINVAL, "'%s': equality deletes need equality ids",
				      f->file_path);
	for (size_t i = 0; i < op->n_groups; i++)
		if (op->groups[i].spec_id == f->spec_id && op->groups[i].deletes == del)
			g = &op->groups[i];
	if (!g) {
		if (FLOE_ARRAY_RESERVE(op->groups, op->cap_groups, op->n_groups + 1))
			return floe_error_oom(err);
		g = &op->groups[op->n_groups++];
		memset(g, 0, sizeof(*g));
		g->spec_id = f->spec_id;
		g->deletes = del;
	}
	if (FLOE_ARRAY_RESERVE(g->files, g->cap, g->n + 1) ||
	    floe_data_file_copy(&g->files[g->n], &op->arena, f))
		return floe_error_oom(err);
	g->n++;
	switch (f->content) {
	case FLOE_CONTENT_DATA:
		op->added_data_files++;
		op->added_records += f->record_count;
		op->added_data_size += f->file_size_in_bytes;
		break;
	case FLOE_CONTENT_POSITION_DELETES:
		if (is_dv(f)) {
			op->added_dvs++;
			op->added_delete_size += f->content_size_in_bytes > 0 ? f->content_size_in_bytes : 0;
		} else {
			op->added_pos_files++;
			op->added_delete_size += f->file_size_in_bytes;
		}
		op->added_pos_records += f->record_count;
		break;
	default:
		op->added_eq_files++;
		op->added_eq_records += f->record_count;
		op->added_delete_size += f->file_size_in_bytes;
	}
	return FLOE_OK;
}

/* Data and delete files are matched by path; deletion vectors, many of
 * which share one Puffin file, by path and blob offset. */
static int remove_key(floe_buf *k, const floe_data_file *f)
{
	floe_buf_clear(k);
	if (f->content != FLOE_CONTENT_DATA && f->content_offset >= 0 &&
	    floe_str_ieq(f->file_format, "PUFFIN"))
		return floe_buf_printf(k, "1|%s#%lld", f->file_path, (long long)f->content_offset);
	return floe_buf_printf(k, "%d|%s", f->content == FLOE_CONTENT_DATA ? 0 : 1, f->file_path);
}

int floe_op_remove_file(floe_snapshot_op *op, const floe_data_file *f, floe_error *err)
{
	floe_buf k;
	bool existed = false;
	int rc;
	if (op->kind == FLOE_OP_APPEND)
		return floe_error_set(err, FLOE_EINVAL, "an append removes nothing");
	floe_buf_init(&k, 0);
	if ((rc = remove_key(&k, f)) ||
	    (rc = floe_hmap_put(&op->remove_keys, k.data, k.len, op->n_removes, &existed))) {
		floe_buf_reset(&k);
		return floe_error_oom(err);
	}
	floe_buf_reset(&k);
	if (existed)
		return FLOE_OK;
	if (FLOE_ARRAY_RESERVE(op->removes, op->cap_removes, op->n_removes + 1) ||
	    floe_data_file_copy(&op->removes[op->n_removes], &op->arena, f))
		return floe_error_oom(err);
	op->n_removes++;
	return FLOE_OK;
}

int floe_op_replace_manifests(floe_snapshot_op *op, const floe_manifest_file *old, size_t n_old,
			      const floe_manifest_file *fresh, size_t n_fresh, floe_error *err)
{
	if (op->kind != FLOE_OP_REPLACE || floe_op_added(op) || op->n_removes || op->n_mr_old)
		return floe_error_set(err, FLOE_EINVAL,
				      "replacing manifests is a REPLACE operation of its own");
	op->mr_old = floe_arena_calloc(&op->arena, n_old + 1, sizeof(char *));
	op->mr_new = floe_arena_calloc(&op->arena, n_fresh + 1, sizeof(floe_manifest_file));
	if (!op->mr_old || !op->mr_new)
		return floe_error_oom(err);
	for (size_t i = 0; i < n_old; i++)
		if (!(op->mr_old[i] = floe_arena_strdup(&op->arena, old[i].path)))
			return floe_error_oom(err);
	for (size_t i = 0; i < n_fresh; i++) {
		op->mr_new[i] = fresh[i];
		op->mr_new[i].path = floe_arena_strdup(&op->arena, fresh[i].path);
		op->mr_new[i].partitions =
			floe_arena_memdup(&op->arena, fresh[i].partitions,
					  (fresh[i].n_partitions + 1) * sizeof(floe_field_summary));
		if (!op->mr_new[i].path || !op->mr_new[i].partitions)
			return floe_error_oom(err);
		for (size_t k = 0; k < fresh[i].n_partitions; k++) {
			floe_field_summary *fs = &op->mr_new[i].partitions[k];
			if ((fs->has_lower && !(fs->lower = floe_arena_memdup(&op->arena, fs->lower,
									       fs->lower_len + 1))) ||
			    (fs->has_upper && !(fs->upper = floe_arena_memdup(&op->arena, fs->upper,
									       fs->upper_len + 1))))
				return floe_error_oom(err);
		}
	}
	op->n_mr_old = n_old;
	op->n_mr_new = n_fresh;
	return FLOE_OK;
}

int floe_op_set_summary(floe_snapshot_op *op, const char *key, const char *value, floe_error *err)
{
	if (strcmp(key, "operation") == 0)
		return floe_error_set(err, FLOE_EINVAL, "'operation' is set by the producer");
	if (floe_strmap_set(&op->extra, key, value))
		return floe_error_oom(err);
	return FLOE_OK;
}

static int count_partitions(floe_snapshot_op *op)
{
	floe_hmap seen;
	floe_buf key;
	int rc = FLOE_OK;
	floe_hmap_init(&seen);
	floe_buf_init(&key, 0);
	for (size_t g = 0; g < op->n_groups && !rc; g++) {
		for (size_t i = 0; i < op->groups[g].n && !rc; i++) {
			const floe_data_file *f = &op->groups[g].files[i];
			floe_buf_clear(&key);
			rc = floe_buf_printf(&key, "%d|", f->spec_id);
			for (size_t k = 0; k < f->partition.n && !rc; k++) {
				const floe_value *v = &f->partition.values[k];
				if (v->is_null) {
					rc = floe_buf_puts(&key, "\x01N");
				} else {
					rc = floe_buf_putc(&key, '\x02');
					if (!rc)
						rc = floe_value_to_bytes(&key, v);
				}
				rc = rc ? rc : floe_buf_putc(&key, '\x03');
			}
			rc = rc ? rc : floe_hmap_put(&seen, key.data, key.len, 1, NULL);
		}
	}
	op->changed_partitions = (int64_t)seen.len;
	floe_hmap_reset(&seen);
	floe_buf_reset(&key);
	return rc;
}

static const char *manifest_codec(const floe_metadata *m)
{
	const char *codec = floe_metadata_property(m, "write.manifest.compression-codec");
	if (!codec || floe_str_ieq(codec, "gzip"))
		return "deflate";
	if (floe_str_ieq(codec, "zstd"))
		return "zstandard";
	if (floe_str_ieq(codec, "uncompressed") || floe_str_ieq(codec, "none"))
		return "null";
	if (floe_str_ieq(codec, "snappy"))
		return "snappy";
	return "deflate";
}

/* Before the first file this operation writes: the writer lease, so that
 * orphan cleanup leaves what it writes alone until it is committed. */
static int ensure_lease(floe_snapshot_op *op, floe_error *err)
{
	if (op->lease_held)
		return FLOE_OK;
	int rc = floe_table__lease_hold(op->t, "commit to", err);
	if (!rc)
		op->lease_held = true;
	return rc;
}

/* A new manifest writer at <metadata>/<uuid>-m<N>.avro. */
static int open_manifest(floe_snapshot_op *op, const floe_metadata *m,
			 const floe_partition_spec *spec, int content, floe_manifest_writer **w,
			 floe_error *err)
{
	char *dir;
	floe_output *out;
	int rc;
	if ((rc = ensure_lease(op, err)))
		return rc;
	if (!(dir = floe_metadata_dir(m)))
		return floe_error_oom(err);
	const char *path = floe_arena_sprintf(&op->arena, "%s/%s-m%d.avro", dir, op->commit_uuid,
					      op->n_manifest_files++);
	floe_free(dir);
	if (!path)
		return floe_error_oom(err);
	if ((rc = floe_io_create(floe_table_io(op->t), path, false, &out, err)))
		return rc;
	return floe_manifest_writer_open(w, out, path, m->format_version,
					 floe_metadata_current_schema(m), spec, content,
					 op->snapshot_id, manifest_codec(m), err);
}

int64_t floe_op_snapshot_id(const floe_snapshot_op *op)
{
	return op->snapshot_id;
}

int floe_op_open_manifest(floe_snapshot_op *op, const floe_partition_spec *spec, int content,
			  floe_manifest_writer **w, floe_error *err)
{
	return open_manifest(op, floe_table_metadata(op->t), spec, content, w, err);
}

/* The manifest of group g's files into *out. */
static int write_group_manifest(floe_snapshot_op *op, const floe_metadata *m, size_t g,
				floe_manifest_file *out, floe_error *err)
{
	file_group *grp = &op->groups[g];
	floe_manifest_writer *w;
	int rc = open_manifest(op, m, floe_metadata_spec(m, grp->spec_id),
			       grp->deletes ? FLOE_MANIFEST_DELETES : FLOE_MANIFEST_DATA, &w, err);
	if (rc)
		return rc;
	/* a rewrite keeps its data sequence number; deletes never do */
	int64_t seq = !grp->deletes ? op->data_seq : -1;
	for (size_t i = 0; i < grp->n && !rc; i++)
		rc = floe_manifest_writer_add(w, FLOE_ENTRY_ADDED, -1, seq, -1, &grp->files[i], err);
	if (rc) {
		floe_manifest_writer_abort(w);
		return rc;
	}
	return floe_manifest_writer_close(w, out, &op->arena, err);
}

static int write_new_manifests(floe_snapshot_op *op, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(op->t);
	int rc = FLOE_OK;
	op->manifests = floe_arena_calloc(&op->arena, op->n_groups + 1, sizeof(floe_manifest_file));
	op->manifest_group = floe_arena_calloc(&op->arena, op->n_groups + 1, sizeof(size_t));
	if (!op->manifests || !op->manifest_group)
		return floe_error_oom(err);
	/* data manifests first, then delete manifests */
	for (int pass = 0; pass < 2 && !rc; pass++) {
		for (size_t g = 0; g < op->n_groups && !rc; g++) {
			if (op->groups[g].deletes != (pass == 1))
				continue;
			if ((rc = write_group_manifest(op, m, g, &op->manifests[op->n_manifests], err)))
				break;
			op->manifest_group[op->n_manifests++] = g;
		}
	}
	op->manifests_written = true;
	return rc;
}

/* ---- what this commit wrote is still there ------------------------------------------ */

/* 1: path is gone, 0: it is there, < 0: cannot tell (err set). */
static int gone(floe_fileio *io, const char *path, floe_error *err)
{
	floe_file_info fi;
	floe_error e;
	floe_error_clear(&e);
	int rc = floe_io_stat(io, path, &fi, &e);
	if (rc == FLOE_OK)
		return 0;
	if (rc == FLOE_ENOTFOUND)
		return 1;
	return floe_error_set(err, rc, "'%s': %s", path, e.msg);
}

/*
 * Before an attempt builds its list: a manifest this operation wrote on an
 * earlier attempt and reuses now must still exist. Orphan cleanup that does
 * not know floe's writer leases (or a person) may have deleted it: it is
 * written again from the files held in memory (a rewritten manifest is
 * forgotten, so it is rewritten as well); a rewrite-manifests input, which
 * cannot be made again here, fails the commit cleanly.
 */
static int rewrite_missing(floe_snapshot_op *op, const floe_metadata *m, floe_error *err)
{
	floe_fileio *io = floe_table_io(op->t);
	int rc;
	for (size_t i = 0; i < op->n_manifests; i++) {
		if ((rc = gone(io, op->manifests[i].path, err)) <= 0) {
			if (rc)
				return rc;
			continue;
		}
		FLOE_WARN("commit to %s.%s: manifest '%s' written by an earlier attempt is gone "
			  "(deleted as an orphan?): writing it again",
			  floe_table_namespace(op->t), floe_table_name(op->t), op->manifests[i].path);
		if ((rc = write_group_manifest(op, m, op->manifest_group[i], &op->manifests[i], err)))
			return rc;
	}
	size_t w = 0;
	for (size_t i = 0; i < op->n_rewrites; i++) {
		if ((rc = gone(io, op->rewrites[i].written.path, err)) < 0)
			return rc;
		if (rc == 0)
			op->rewrites[w++] = op->rewrites[i];
		else
			FLOE_WARN("commit to %s.%s: rewritten manifest '%s' is gone: rewriting it",
				  floe_table_namespace(op->t), floe_table_name(op->t),
				  op->rewrites[i].written.path);
	}
	op->n_rewrites = w;
	w = 0;
	for (size_t i = 0; i < op->n_merges; i++) {
		if ((rc = gone(io, op->merges[i].written.path, err)) < 0)
			return rc;
		if (rc == 0)
			op->merges[w++] = op->merges[i];
		else
			FLOE_WARN("commit to %s.%s: merged manifest '%s' is gone: merging again",
				  floe_table_namespace(op->t), floe_table_name(op->t),
				  op->merges[i].written.path);
	}
	op->n_merges = w;
	for (size_t i = 0; i < op->n_mr_new; i++) {
		if ((rc = gone(io, op->mr_new[i].path, err)) < 0)
			return rc;
		if (rc)
			return floe_error_set(err, FLOE_ENOTFOUND,
					      "manifest '%s' written for this rewrite is gone (deleted "
					      "as an orphan?): nothing was committed",
					      op->mr_new[i].path);
	}
	return FLOE_OK;
}

/*
 * Just before the swap: the data and delete files this operation adds and
 * wrote itself (floe_op_verify_added: a pipeline checkpoint's, a
 * compaction's), written up to a checkpoint interval ago, still exist; one
 * gone cannot be made again, so the commit fails and nothing dangling is
 * committed. What this attempt's own build wrote or checked moments ago is
 * not looked at again (a HEAD each on object stores, for nothing): the
 * manifest list was written by this attempt, its new manifests by this
 * commit just before its first attempt or, on a later one, checked (and
 * written again if gone) by rewrite_missing at its start — and every one of
 * them is newer than the writer lease that orphan cleanup honours.
 */
static int check_before_swap(floe_snapshot_op *op, floe_error *err)
{
	floe_fileio *io = floe_table_io(op->t);
	int rc;
	for (size_t g = 0; g < op->n_groups && op->verify_added; g++) {
		const file_group *grp = &op->groups[g];
		for (size_t i = 0; i < grp->n; i++) {
			const char *p = grp->files[i].file_path;
			/* deletion vectors share a Puffin file: look once */
			if (i > 0 && !strcmp(p, grp->files[i - 1].file_path))
				continue;
			if ((rc = gone(io, p, err)) < 0)
				return rc;
			if (rc)
				return floe_error_set(err, FLOE_ENOTFOUND,
						      "%s file '%s' this commit adds is gone (deleted as "
						      "an orphan?): nothing was committed",
						      floe_content_name(grp->files[i].content), p);
		}
	}
	return FLOE_OK;
}

static void remove_written(floe_snapshot_op *op)
{
	floe_fileio *io = floe_table_io(op->t);
	for (size_t i = 0; i < op->n_manifests; i++)
		floe_io_remove_quiet(io, op->manifests[i].path);
	for (size_t i = 0; i < op->n_rewrites; i++)
		floe_io_remove_quiet(io, op->rewrites[i].written.path);
	for (size_t i = 0; i < op->n_mr_new; i++)
		floe_io_remove_quiet(io, op->mr_new[i].path);
	for (size_t i = 0; i < op->n_merges; i++)
		floe_io_remove_quiet(io, op->merges[i].written.path);
}

/* ---- manifest filtering --------------------------------------------------------- */

typedef struct filter_ctx {
	floe_snapshot_op *op;
	floe_buf key;
	bool *found;            /* per removal */
	removed_totals *totals; /* for this manifest */
	bool any;
	uint32_t *cur;          /* removals found in this manifest */
	size_t n_cur, cap_cur;
	/* second pass */
	floe_manifest_writer *w;
	floe_error *err;
	int rc;
} filter_ctx;

static int match_cb(const floe_manifest_entry *e, void *payload)
{
	filter_ctx *c = payload;
	uint64_t idx;
	if (e->status == FLOE_ENTRY_DELETED)
		return 0;
	if (remove_key(&c->key, &e->file))
		return FLOE_ENOMEM;
	if (floe_hmap_get(&c->op->remove_keys, c->key.data, c->key.len, &idx)) {
		c->any = true;
		c->found[idx] = true;
		if (FLOE_ARRAY_RESERVE(c->cur, c->cap_cur, c->n_cur + 1))
			return FLOE_ENOMEM;
		c->cur[c->n_cur++] = (uint32_t)idx;
	}
	return 0;
}

static int rewrite_cb(const floe_manifest_entry *e, void *payload)
{
	filter_ctx *c = payload;
	const floe_data_file *f = &e->file;
	uint64_t idx;
	int rc;
	if (e->status == FLOE_ENTRY_DELETED)
		return 0; /* deleted in an earlier snapshot: dropped */
	if (remove_key(&c->key, f))
		return FLOE_ENOMEM;
	bool removed = floe_hmap_get(&c->op->remove_keys, c->key.data, c->key.len, &idx);
	if (removed) {
		removed_totals *t = c->totals;
		if (f->content == FLOE_CONTENT_DATA) {
			t->data_files++;
			t->data_records += f->record_count;
			t->data_size += f->file_size_in_bytes;
		} else if (f->content == FLOE_CONTENT_POSITION_DELETES) {
			if (is_dv(f)) {
				t->dvs++;
				t->delete_size += f->content_size_in_bytes > 0 ? f->content_size_in_bytes
									     : 0;
			} else {
				t->pos_files++;
				t->delete_size += f->file_size_in_bytes;
			}
			t->pos_records += f->record_count;
		} else {
			t->eq_files++;
			t->eq_records += f->record_count;
			t->delete_size += f->file_size_in_bytes;
		}
		/* spec: a DELETED entry's snapshot id is the snapshot that deleted it */
		rc = floe_manifest_writer_add(c->w, FLOE_ENTRY_DELETED, c->op->snapshot_id,
					      e->sequence_number, e->file_sequence_number, f, c->err);
	} else {
		rc = floe_manifest_writer_add(c->w, FLOE_ENTRY_EXISTING, e->snapshot_id,
					      e->sequence_number, e->file_sequence_number, f, c->err);
	}
	if (rc)
		c->rc = rc;
	return rc;
}

static void add_totals(removed_totals *to, const removed_totals *t)
{
	to->data_files += t->data_files;
	to->data_records += t->data_records;
	to->data_size += t->data_size;
	to->pos_files += t->pos_files;
	to->eq_files += t->eq_files;
	to->dvs += t->dvs;
	to->pos_records += t->pos_records;
	to->eq_records += t->eq_records;
	to->delete_size += t->delete_size;
}

static rewrite *find_rewrite(floe_snapshot_op *op, const char *path)
{
	for (size_t i = 0; i < op->n_rewrites; i++)
		if (strcmp(op->rewrites[i].orig_path, path) == 0)
			return &op->rewrites[i];
	return NULL;
}

/*
 * Decide each base manifest's fate: kept as is, or rewritten without the
 * removed files. Fills out[] (kept or rewritten entries) and *totals; fails
 * (FLOE_ECONFLICT, not retryable) when a file to remove is not live.
 */
static int filter_manifests(floe_snapshot_op *op, const floe_metadata *m,
			    const floe_manifest_file *base, size_t n_base, floe_manifest_file *out,
			    removed_totals *totals, floe_error *err)
{
	filter_ctx c;
	int rc = FLOE_OK;
	memset(&c, 0, sizeof(c));
	c.op = op;
	c.err = err;
	floe_buf_init(&c.key, 0);
	c.found = floe_calloc(op->n_removes + 1, sizeof(bool));
	if (!c.found)
		return floe_error_oom(err);
	for (size_t i = 0; i < op->n_rewrites; i++)
		op->rewrites[i].used = false;
	bool remove_data = false, remove_deletes = false;
	for (size_t i = 0; i < op->n_removes; i++) {
		remove_data |= op->removes[i].content == FLOE_CONTENT_DATA;
		remove_deletes |= op->removes[i].content != FLOE_CONTENT_DATA;
	}
	for (size_t i = 0; i < n_base && !rc; i++) {
		const floe_manifest_file *mf = &base[i];
		bool del = mf->content == FLOE_MANIFEST_DELETES;
		out[i] = *mf;
		if (op->n_removes == 0 || (del && !remove_deletes) || (!del && !remove_data) ||
		    floe_hmap_get_str(&op->no_match, mf->path, NULL))
			continue; /* cannot hold, or an earlier attempt read it: holds none */
		rewrite *cached = find_rewrite(op, mf->path);
		removed_totals mt;
		if (cached) {
			/* manifests are immutable: an earlier attempt's rewrite still holds */
			cached->used = true;
			out[i] = cached->written;
			mt = cached->totals;
			for (size_t k = 0; k < cached->n_found; k++)
				c.found[cached->found[k]] = true;
			add_totals(totals, &mt);
			continue;
		}
		floe_input *in = NULL;
		memset(&mt, 0, sizeof(mt));
		c.any = false;
		c.n_cur = 0;
		c.totals = &mt;
		if ((rc = floe_io_open_read_seq(floe_table_io(op->t), mf->path, &in, err)))
			break;
		rc = floe_manifest_read(in, m, mf, floe_table_path_map(op->t), match_cb, &c, err);
		if (!rc && !c.any) {
			if (floe_hmap_put_str(&op->no_match, mf->path, 1))
				rc = floe_error_oom(err);
		} else if (!rc && c.any) {
			floe_manifest_writer *w = NULL;
			rc = open_manifest(op, m, floe_metadata_spec(m, mf->spec_id), mf->content, &w,
					   err);
			if (!rc) {
				c.w = w;
				c.rc = 0;
				rc = floe_manifest_read(in, m, mf, floe_table_path_map(op->t),
							rewrite_cb, &c, err);
				if (rc || c.rc) {
					rc = rc ? rc : c.rc;
					floe_manifest_writer_abort(w);
				} else if (FLOE_ARRAY_RESERVE(op->rewrites, op->cap_rewrites,
							      op->n_rewrites + 1)) {
					floe_manifest_writer_abort(w);
					rc = floe_error_oom(err);
				} else {
					rewrite *rw = &op->rewrites[op->n_rewrites];
					rw->orig_path = floe_arena_strdup(&op->arena, mf->path);
					rc = floe_manifest_writer_close(w, &rw->written, &op->arena, err);
					if (!rc && !rw->orig_path)
						rc = floe_error_oom(err);
					if (!rc) {
						rw->used = true;
						rw->totals = mt;
						rw->n_found = c.n_cur;
						rw->found = floe_arena_memdup(
							&op->arena, c.cur,
							c.n_cur * sizeof(uint32_t));
						if (!rw->found)
							rc = floe_error_set(err, FLOE_ENOMEM,
									    "out of memory");
					}
					if (!rc) {
						op->n_rewrites++;
						out[i] = rw->written;
					}
				}
			}
		}
		if (!rc && c.any)
			add_totals(totals, &mt);
		floe_input_close(in);
	}
	for (size_t i = 0; i < op->n_removes && !rc; i++)
		if (!c.found[i]) {
			rc = floe_error_set(err, FLOE_ECONFLICT,
					    "'%s' is no longer in the table (removed by another commit)",
					    op->removes[i].file_path);
		}
	floe_free(c.found);
	floe_free(c.cur);
	floe_buf_reset(&c.key);
	return rc;
}

/* Rewrites from earlier attempts that this one does not use are garbage. */
static void drop_unused_rewrites(floe_snapshot_op *op)
{
	size_t w = 0;
	for (size_t i = 0; i < op->n_rewrites; i++) {
		if (op->rewrites[i].used)
			op->rewrites[w++] = op->rewrites[i];
		else
			floe_io_remove_quiet(floe_table_io(op->t), op->rewrites[i].written.path);
	}
	op->n_rewrites = w;
}

/* ---- validation against concurrent commits -------------------------------------- */

typedef struct validate_ctx {
	floe_snapshot_op *op;
	int64_t snapshot_id;
	floe_hmap *removed_data; /* removed data file paths */
	const char *conflict;
	int conflict_kind;
	floe_arena *a;
} validate_ctx;

static int validate_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	validate_ctx *v = payload;
	const floe_data_file *f = &e->file;
	(void)mf;
	if (e->status != FLOE_ENTRY_ADDED || e->snapshot_id != v->snapshot_id)
		return 0;
	if (f->content == FLOE_CONTENT_POSITION_DELETES) {
		/* a delete aimed at a file this operation removes would be lost */
		if (f->referenced_data_file &&
		    floe_hmap_has(v->removed_data, f->referenced_data_file,
				  strlen(f->referenced_data_file))) {
			v->conflict = floe_arena_strdup(v->a, f->file_path);
			v->conflict_kind = f->content;
			return 1;
		}
		if (!f->referenced_data_file) {
			/* no reference: conservative — same spec as a removed file */
			for (size_t i = 0; i < v->op->n_removes; i++)
				if (v->op->removes[i].content == FLOE_CONTENT_DATA &&
				    v->op->removes[i].spec_id == f->spec_id &&
				    floe_partition_equal(&v->op->removes[i].partition, &f->partition)) {
					v->conflict = floe_arena_strdup(v->a, f->file_path);
					v->conflict_kind = f->content;
					return 1;
				}
		}
	} else if (f->content == FLOE_CONTENT_EQUALITY_DELETES && v->op->data_seq < 0) {
		/* new files get a new sequence number: older equality deletes would no
		 * longer apply to their rows */
		for (size_t i = 0; i < v->op->n_removes; i++)
			if (v->op->removes[i].content == FLOE_CONTENT_DATA &&
			    (v->op->removes[i].spec_id == f->spec_id || f->partition.n == 0)) {
				v->conflict = floe_arena_strdup(v->a, f->file_path);
				v->conflict_kind = f->content;
				return 1;
			}
	}
	return 0;
}

static int validate(floe_snapshot_op *op, const floe_metadata *m, const floe_snapshot *head,
		    floe_error *err)
{
	floe_hmap removed;
	floe_arena a;
	int rc = FLOE_OK;
	if (op->n_removes == 0 || op->validate_from < 0)
		return FLOE_OK;
	bool any_data = false;
	for (size_t i = 0; i < op->n_removes; i++)
		any_data |= op->removes[i].content == FLOE_CONTENT_DATA;
	if (!any_data)
		return FLOE_OK;
	floe_hmap_init(&removed);
	floe_arena_init(&a, 4096);
	for (size_t i = 0; i < op->n_removes && !rc; i++)
		if (op->removes[i].content == FLOE_CONTENT_DATA &&
		    floe_hmap_put_str(&removed, op->removes[i].file_path, 1))
			rc = floe_error_oom(err);
	/* Only snapshots not validated by an earlier attempt, only those that can
	 * add delete files (appends cannot), and only the delete manifests each
	 * one added: a retry beside a busy writer stays cheap. */
	for (const floe_snapshot *s = head;
	     s && s->snapshot_id != op->validate_from && s->snapshot_id != op->validated_head && !rc;
	     s = floe_metadata_parent(m, s)) {
		const char *operation = floe_snapshot_summary(s, "operation");
		if (operation && strcmp(operation, "append") == 0)
			continue;
		floe_manifest_file *mfs = NULL;
		size_t n = 0;
		validate_ctx v = {op, s->snapshot_id, &removed, NULL, 0, &a};
		rc = floe_table_manifests(&mfs, &n, &a, op->t, s, err);
		for (size_t i = 0; i < n && !rc; i++) {
			if (mfs[i].content != FLOE_MANIFEST_DELETES ||
			    (mfs[i].added_snapshot_id >= 0 && mfs[i].added_snapshot_id != s->snapshot_id))
				continue;
			rc = floe_table_walk_manifest(op->t, &mfs[i], FLOE_WALK_DELETES, validate_cb, &v,
						      err);
		}
		if (rc == 1 && v.conflict) {
			rc = floe_error_set(err, FLOE_ECONFLICT,
					    "snapshot %lld added %s '%s' for files this operation "
					    "replaces: start over from the new snapshot",
					    (long long)s->snapshot_id, floe_content_name(v.conflict_kind),
					    v.conflict);
		}
	}
	if (!rc)
		op->validated_head = head ? head->snapshot_id : -1;
	floe_hmap_reset(&removed);
	floe_arena_reset(&a);
	return rc;
}

/*
 * Row deltas (Java's BaseRowDelta.validate): a position delete or DV added
 * here names a data file (referenced_data_file) that must still be live —
 * a snapshot committed since validate_from that removed it (a compaction,
 * an overwrite) would leave the delete pointing at nothing while the rows
 * live on in the rewritten file; and (v3) no snapshot since may have added
 * a DV for the same data file (one DV per data file per snapshot: ours
 * would not hold its positions). Files added by this same operation are
 * not checked (nobody else can have removed them). Both failures are final
 * (FLOE_ECONFLICT, not retryable): the caller starts over from the new
 * snapshot.
 */
typedef struct rd_ctx {
	int64_t snapshot_id;
	const floe_hmap *refs; /* referenced data files of our position deletes / DVs */
	const floe_hmap *dv_refs;
	const char *conflict;
	bool dv_conflict;
	floe_arena *a;
} rd_ctx;

static int rd_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	rd_ctx *v = payload;
	const floe_data_file *f = &e->file;
	(void)mf;
	if (e->snapshot_id != v->snapshot_id)
		return 0;
	if (f->content == FLOE_CONTENT_DATA && e->status == FLOE_ENTRY_DELETED &&
	    floe_hmap_has(v->refs, f->file_path, strlen(f->file_path))) {
		v->conflict = floe_arena_strdup(v->a, f->file_path);
		return 1;
	}
	if (is_dv(f) && e->status == FLOE_ENTRY_ADDED && f->referenced_data_file &&
	    floe_hmap_has(v->dv_refs, f->referenced_data_file, strlen(f->referenced_data_file))) {
		v->conflict = floe_arena_strdup(v->a, f->referenced_data_file);
		v->dv_conflict = true;
		return 1;
	}
	return 0;
}

static int validate_row_delta(floe_snapshot_op *op, const floe_metadata *m,
			      const floe_snapshot *head, floe_error *err)
{
	floe_hmap refs, dv_refs, added;
	floe_arena a;
	int rc = FLOE_OK;
	if (op->kind != FLOE_OP_ROW_DELTA || op->added_pos_files + op->added_dvs == 0 ||
	    op->validate_from < 0)
		return FLOE_OK;
	floe_hmap_init(&refs);
	floe_hmap_init(&dv_refs);
	floe_hmap_init(&added);
	floe_arena_init(&a, 4096);
	for (size_t g = 0; g < op->n_groups && !rc; g++)
		for (size_t i = 0; i < op->groups[g].n && !rc; i++) {
			const floe_data_file *f = &op->groups[g].files[i];
			if (f->content == FLOE_CONTENT_DATA &&
			    floe_hmap_put_str(&added, f->file_path, 1))
				rc = floe_error_oom(err);
		}
	size_t n_refs = 0;
	for (size_t g = 0; g < op->n_groups && !rc; g++)
		for (size_t i = 0; i < op->groups[g].n && !rc; i++) {
			const floe_data_file *f = &op->groups[g].files[i];
			const char *r = f->referenced_data_file;
			if (f->content != FLOE_CONTENT_POSITION_DELETES || !r ||
			    floe_hmap_has(&added, r, strlen(r)))
				continue;
			if (floe_hmap_put_str(&refs, r, 1) ||
			    (is_dv(f) && floe_hmap_put_str(&dv_refs, r, 1)))
				rc = floe_error_oom(err);
			n_refs++;
		}
	for (const floe_snapshot *s = head; n_refs && !rc && s && s->snapshot_id != op->validate_from &&
					    s->snapshot_id != op->rd_validated_head;
	     s = floe_metadata_parent(m, s)) {
		const char *operation = floe_snapshot_summary(s, "operation");
		if (operation && strcmp(operation, "append") == 0)
			continue; /* removes nothing, adds no DV */
		floe_manifest_file *mfs = NULL;
		size_t n = 0;
		rd_ctx v = {s->snapshot_id, &refs, &dv_refs, NULL, false, &a};
		rc = floe_table_manifests(&mfs, &n, &a, op->t, s, err);
		for (size_t i = 0; i < n && !rc; i++) {
			if (mfs[i].added_snapshot_id >= 0 && mfs[i].added_snapshot_id != s->snapshot_id)
				continue;
			rc = floe_table_walk_manifest(op->t, &mfs[i],
						      FLOE_WALK_DATA | FLOE_WALK_DELETES |
							      FLOE_WALK_ALL_ENTRIES,
						      rd_cb, &v, err);
		}
		if (rc == 1 && v.conflict)
			rc = v.dv_conflict
				     ? floe_error_set(err, FLOE_ECONFLICT,
						      "snapshot %lld added a deletion vector for '%s', "
						      "which this row delta also deletes from (one DV "
						      "per data file): start over from the new snapshot",
						      (long long)s->snapshot_id, v.conflict)
				     : floe_error_set(err, FLOE_ECONFLICT,
						      "snapshot %lld removed data file '%s', which a "
						      "position delete of this row delta targets: start "
						      "over from the new snapshot",
						      (long long)s->snapshot_id, v.conflict);
	}
	if (!rc)
		op->rd_validated_head = head ? head->snapshot_id : -1;
	floe_hmap_reset(&refs);
	floe_hmap_reset(&dv_refs);
	floe_hmap_reset(&added);
	floe_arena_reset(&a);
	return rc;
}

/* ---- summary ---------------------------------------------------------------------- */

static int put_i64(floe_strmap *s, const char *key, int64_t v)
{
	return v > 0 ? floe_strmap_setf(s, key, "%lld", (long long)v) : FLOE_OK;
}

/* parent's total + delta, as Java: omitted when the parent's value is bad. */
static int put_total(floe_strmap *s, const floe_snapshot *parent, const char *key, int64_t delta)
{
	int64_t base = 0;
	if (parent) {
		const char *v = floe_snapshot_summary(parent, key);
		if (!v || !floe_parse_i64(v, strlen(v), &base))
			return FLOE_OK;
	}
	if (base + delta < 0)
		return FLOE_OK;
	return floe_strmap_setf(s, key, "%lld", (long long)(base + delta));
}

static const char *operation_name(const floe_snapshot_op *op, const removed_totals *r)
{
	bool adds_data = op->added_data_files > 0;
	bool adds_deletes = op->added_pos_files + op->added_eq_files + op->added_dvs > 0;
	bool removes = r->data_files + r->pos_files + r->eq_files + r->dvs > 0;
	switch (op->kind) {
	case FLOE_OP_APPEND: return "append";
	case FLOE_OP_REPLACE: return "replace";
	case FLOE_OP_OVERWRITE: return "overwrite";
	case FLOE_OP_DELETE: return "delete";
	case FLOE_OP_ROW_DELTA:
		if (adds_data && !adds_deletes && !removes)
			return "append";
		if (!adds_data && (adds_deletes || removes))
			return "delete";
		return "overwrite";
	}
	return "overwrite";
}

static int build_summary(floe_snapshot_op *op, const floe_snapshot *parent,
			 const removed_totals *r, floe_strmap *s)
{
	int rc = floe_strmap_set(s, "operation", operation_name(op, r));
	int64_t added_deletes = op->added_pos_files + op->added_eq_files + op->added_dvs;
	int64_t removed_deletes = r->pos_files + r->eq_files + r->dvs;
	rc = rc ? rc : put_i64(s, "added-data-files", op->added_data_files);
	rc = rc ? rc : put_i64(s, "deleted-data-files", r->data_files);
	rc = rc ? rc : put_i64(s, "added-records", op->added_records);
	rc = rc ? rc : put_i64(s, "deleted-records", r->data_records);
	rc = rc ? rc : put_i64(s, "added-files-size", op->added_data_size + op->added_delete_size);
	rc = rc ? rc : put_i64(s, "removed-files-size", r->data_size + r->delete_size);
	rc = rc ? rc : put_i64(s, "added-delete-files", added_deletes);
	rc = rc ? rc : put_i64(s, "removed-delete-files", removed_deletes);
	rc = rc ? rc : put_i64(s, "added-equality-delete-files", op->added_eq_files);
	rc = rc ? rc : put_i64(s, "removed-equality-delete-files", r->eq_files);
	rc = rc ? rc : put_i64(s, "added-position-delete-files", op->added_pos_files);
	rc = rc ? rc : put_i64(s, "removed-position-delete-files", r->pos_files);
	rc = rc ? rc : put_i64(s, "added-dvs", op->added_dvs);
	rc = rc ? rc : put_i64(s, "removed-dvs", r->dvs);
	rc = rc ? rc : put_i64(s, "added-position-deletes", op->added_pos_records);
	rc = rc ? rc : put_i64(s, "removed-position-deletes", r->pos_records);
	rc = rc ? rc : put_i64(s, "added-equality-deletes", op->added_eq_records);
	rc = rc ? rc : put_i64(s, "removed-equality-deletes", r->eq_records);
	rc = rc ? rc
		: floe_strmap_setf(s, "changed-partition-count", "%lld",
				   (long long)op->changed_partitions);
	rc = rc ? rc : put_total(s, parent, "total-records", op->added_records - r->data_records);
	rc = rc ? rc
		: put_total(s, parent, "total-files-size",
			    op->added_data_size + op->added_delete_size - r->data_size -
				    r->delete_size);
	rc = rc ? rc : put_total(s, parent, "total-data-files", op->added_data_files - r->data_files);
	rc = rc ? rc : put_total(s, parent, "total-delete-files", added_deletes - removed_deletes);
	rc = rc ? rc
		: put_total(s, parent, "total-position-deletes",
			    op->added_pos_records - r->pos_records);
	rc = rc ? rc
		: put_total(s, parent, "total-equality-deletes",
			    op->added_eq_records - r->eq_records);
	if (op->n_mr_old) {
		rc = rc ? rc : floe_strmap_setf(s, "manifests-created", "%zu", op->n_mr_new);
		rc = rc ? rc : floe_strmap_setf(s, "manifests-replaced", "%zu", op->n_mr_old);
	}
	rc = rc ? rc : floe_strmap_set(s, "engine-name", "floe");
	rc = rc ? rc : floe_strmap_set(s, "engine-version", FLOE_VERSION);
	for (size_t i = 0; i < op->extra.len && !rc; i++)
		rc = floe_strmap_set(s, op->extra.items[i].key, op->extra.items[i].value);
	return rc;
}

/* ---- overwrite ------------------------------------------------------------------------ */

int floe_op_set_overwrite(floe_snapshot_op *op, const floe_overwrite_scope *scope,
			  floe_error *err)
{
	if (op->kind != FLOE_OP_OVERWRITE)
		return floe_error_set(err, FLOE_EINVAL, "an overwrite scope needs an OVERWRITE operation");
	if (!scope->dynamic && !scope->filter)
		return floe_error_set(err, FLOE_EINVAL, "an overwrite needs a scope (dynamic or filter)");
	op->ow_on = true;
	op->ow_dynamic = scope->dynamic;
	op->ow_filter = scope->filter;
	op->ow_filter_payload = scope->filter_payload;
	op->ow_base = scope->base_snapshot;
	op->ow_base_known = true;
	op->ow_base_seq = scope->base_seq;
	op->ow_validated_head = FLOE_NO_SNAPSHOT;
	floe_free(op->ow_filter_text);
	floe_free(op->ow_pipeline);
	op->ow_filter_text = floe_strdup(scope->filter_text ? scope->filter_text : "true");
	op->ow_pipeline = scope->own_pipeline ? floe_strdup(scope->own_pipeline) : NULL;
	if (!op->ow_filter_text || (scope->own_pipeline && !op->ow_pipeline))
		return floe_error_oom(err);
	op->validate_from = op->ow_base; /* (none: the first attempt's base) */
	if (scope->dynamic)
		return floe_op_set_summary(op, "replace-partitions", "true", err);
	return FLOE_OK;
}

/* Is file f (data or delete) in the overwrite's scope? */
static int ow_scope(const floe_snapshot_op *op, const floe_data_file *f)
{
	if (!op->ow_dynamic)
		return op->ow_filter(op->ow_filter_payload, f);
	for (size_t g = 0; g < op->n_groups; g++) {
		const file_group *fg = &op->groups[g];
		if (fg->deletes || fg->spec_id != f->spec_id)
			continue;
		for (size_t i = 0; i < fg->n; i++)
			if (floe_partition_equal(&fg->files[i].partition, &f->partition))
				return FLOE_SCOPE_ALL;
	}
	return FLOE_SCOPE_NONE;
}

typedef struct ow_ctx {
	floe_snapshot_op *op;
	floe_error *err;
	int rc;
	int64_t snapshot_id; /* validation: the snapshot whose added files are looked at */
	const char *conflict;
	floe_arena *a;
	const floe_metadata *m;
	int64_t base_ts; /* the base snapshot's time */
} ow_ctx;

static int ow_remove_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	ow_ctx *c = payload;
	floe_snapshot_op *op = c->op;
	(void)mf;
	if (op->ow_base_seq >= 0 && e->sequence_number > op->ow_base_seq)
		return 0; /* added by this load after it started */
	if (op->ow_pipeline) {
		/* (v1 has no sequence numbers) a file of this load's own earlier
		 * checkpoints */
		const floe_snapshot *s = floe_metadata_snapshot(c->m, e->snapshot_id);
		const char *pid = s ? floe_snapshot_summary(s, "floe.pipeline-id") : NULL;
		if (pid && strcmp(pid, op->ow_pipeline) == 0 && s->timestamp_ms > c->base_ts)
			return 0;
	}
	int sc = ow_scope(op, &e->file);
	if (sc == FLOE_SCOPE_ALL) {
		c->rc = floe_op_remove_file(op, &e->file, c->err);
		return c->rc ? 1 : 0;
	}
	if (sc == FLOE_SCOPE_SOME && e->file.content == FLOE_CONTENT_DATA) {
		c->rc = floe_error_set(c->err, FLOE_EINVAL,
				       "Cannot delete file where some, but not all, rows match filter "
				       "%s: %s (the filter must be decided by the partition values)",
				       op->ow_filter_text, e->file.file_path);
		return 1;
	}
	return 0;
}

/* The first attempt: what the scope removes from its base. */
static int overwrite_resolve(floe_snapshot_op *op, const floe_metadata *m,
			     const floe_snapshot *parent, floe_error *err)
{
	if (op->ow_resolved)
		return FLOE_OK;
	if (!op->ow_base_known) {
		op->ow_base = parent ? parent->snapshot_id : FLOE_NO_SNAPSHOT;
		op->ow_base_known = true;
	}
	if (!op->ow_dynamic)
		for (size_t g = 0; g < op->n_groups; g++)
			for (size_t i = 0; !op->groups[g].deletes && i < op->groups[g].n; i++)
				if (op->ow_filter(op->ow_filter_payload, &op->groups[g].files[i]) !=
				    FLOE_SCOPE_ALL)
					return floe_error_set(
						err, FLOE_EINVAL,
						"Cannot append file with rows that do not match filter: "
						"%s: %s",
						op->ow_filter_text, op->groups[g].files[i].file_path);
	ow_ctx c = {op, err, FLOE_OK, -1, NULL, NULL, m, INT64_MAX};
	const floe_snapshot *bs = floe_metadata_snapshot(m, op->ow_base);
	if (bs)
		c.base_ts = bs->timestamp_ms;
	else if (op->ow_base == FLOE_NO_SNAPSHOT)
		c.base_ts = INT64_MIN;
	if (parent) {
		int rc = floe_table_walk(op->t, parent, FLOE_WALK_DATA | FLOE_WALK_DELETES,
					 ow_remove_cb, &c, err);
		if (c.rc)
			return c.rc;
		if (rc)
			return rc;
	}
	op->ow_resolved = true;
	return FLOE_OK;
}

static int ow_added_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	ow_ctx *c = payload;
	(void)mf;
	if (e->status != FLOE_ENTRY_ADDED || e->snapshot_id != c->snapshot_id ||
	    e->file.content != FLOE_CONTENT_DATA)
		return 0;
	if (ow_scope(c->op, &e->file) == FLOE_SCOPE_NONE)
		return 0;
	c->conflict = floe_arena_strdup(c->a, e->file.file_path);
	return 1;
}

/* Java's validateAddedDataFiles: no append or overwrite committed since
 * the overwrite's base added a data file its scope covers. */
static int overwrite_validate(floe_snapshot_op *op, const floe_metadata *m,
			      const floe_snapshot *head, floe_error *err)
{
	floe_arena a;
	int rc = FLOE_OK;
	floe_arena_init(&a, 4096);
	for (const floe_snapshot *s = head;
	     s && s->snapshot_id != op->ow_base && s->snapshot_id != op->ow_validated_head && !rc;
	     s = floe_metadata_parent(m, s)) {
		const char *operation = floe_snapshot_summary(s, "operation");
		if (!operation || (strcmp(operation, "append") && strcmp(operation, "overwrite")))
			continue;
		if (op->ow_pipeline) {
			const char *pid = floe_snapshot_summary(s, "floe.pipeline-id");
			if (pid && strcmp(pid, op->ow_pipeline) == 0)
				continue; /* this load's own earlier checkpoints */
		}
		floe_manifest_file *mfs = NULL;
		size_t n = 0;
		ow_ctx c = {op, err, FLOE_OK, s->snapshot_id, NULL, &a, m, 0};
		rc = floe_table_manifests(&mfs, &n, &a, op->t, s, err);
		for (size_t i = 0; i < n && !rc; i++) {
			if (mfs[i].content != FLOE_MANIFEST_DATA ||
			    (mfs[i].added_snapshot_id >= 0 && mfs[i].added_snapshot_id != s->snapshot_id))
				continue;
			rc = floe_table_walk_manifest(op->t, &mfs[i], FLOE_WALK_DATA, ow_added_cb, &c,
						      err);
		}
		if (rc == 1 && c.conflict) {
			if (op->ow_dynamic) {
				/* Java names the partitions it replaces */
				floe_buf parts;
				floe_buf_init(&parts, 0);
				for (size_t g = 0; g < op->n_groups; g++) {
					const file_group *fg = &op->groups[g];
					const floe_partition_spec *sp = floe_metadata_spec(m, fg->spec_id);
					for (size_t i = 0; !fg->deletes && sp && i < fg->n; i++) {
						bool dup = false;
						for (size_t k = 0; k < i && !dup; k++)
							dup = floe_partition_equal(&fg->files[k].partition,
										   &fg->files[i].partition);
						if (dup)
							continue;
						if ((parts.len && floe_buf_append(&parts, ", ", 2)) ||
						    floe_partition_path(&parts, sp,
									floe_metadata_current_schema(m),
									&fg->files[i].partition))
							break; /* (out of memory: a shorter message) */
					}
				}
				rc = floe_error_set(err, FLOE_ECONFLICT,
						    "Found conflicting files that can contain records "
						    "matching partitions [%.*s]: [%s] (added by snapshot "
						    "%lld after %lld)",
						    (int)(parts.len > 2000 ? 2000 : parts.len),
						    parts.data ? (const char *)parts.data : "", c.conflict,
						    (long long)s->snapshot_id, (long long)op->ow_base);
				floe_buf_reset(&parts);
			} else {
				rc = floe_error_set(err, FLOE_ECONFLICT,
						    "Found conflicting files that can contain records "
						    "matching %s: [%s] (added by snapshot %lld after %lld)",
						    op->ow_filter_text, c.conflict,
						    (long long)s->snapshot_id, (long long)op->ow_base);
			}
		}
	}
	if (!rc)
		op->ow_validated_head = head ? head->snapshot_id : FLOE_NO_SNAPSHOT;
	floe_arena_reset(&a);
	return rc;
}

/* ---- pipeline fencing ----------------------------------------------------------------- */

int floe_op_fence_pipeline(floe_snapshot_op *op, const char *pipeline_id, int64_t expected,
			   floe_error *err)
{
	floe_free(op->fence_pipeline);
	if (!(op->fence_pipeline = floe_strdup(pipeline_id)))
		return floe_error_oom(err);
	op->fence_expect = expected;
	return FLOE_OK;
}

int64_t floe_pipeline_forgotten_seq(const floe_metadata *m, const char *pipeline_id)
{
	char key[600];
	int64_t seq;
	if ((size_t)snprintf(key, sizeof(key), "floe.pipeline.forget.%s", pipeline_id) >= sizeof(key))
		return -1;
	const char *v = floe_metadata_property(m, key);
	if (!v || !floe_parse_i64(v, strlen(v), &seq))
		return -1;
	return seq;
}

bool floe_pipeline_snapshot_counts(const floe_metadata *m, const floe_snapshot *s,
				   const char *pipeline_id)
{
	const char *id = floe_snapshot_summary(s, "floe.pipeline-id");
	if (!id || strcmp(id, pipeline_id) != 0)
		return false;
	return s->sequence_number > floe_pipeline_forgotten_seq(m, pipeline_id);
}

void floe_op_set_check(floe_snapshot_op *op, floe_op_check_fn fn, void *payload)
{
	op->check = fn;
	op->check_payload = payload;
}

int64_t floe_pipeline_last_snapshot(const floe_metadata *m, const floe_snapshot *head,
				    const char *pipeline_id)
{
	for (const floe_snapshot *s = head; s; s = floe_metadata_parent(m, s))
		if (floe_pipeline_snapshot_counts(m, s, pipeline_id))
			return s->snapshot_id;
	return FLOE_NO_SNAPSHOT;
}

/*
 * The design's fencing rule: the newest snapshot of the pipeline on the
 * branch must be the one this process resumed from or committed itself.
 * Otherwise another process of the same pipeline (started twice, or this one
 * is stale) committed meanwhile, and committing would apply its input twice:
 * a final, non-retryable conflict. (Iceberg's Flink committer checks
 * flink.max-committed-checkpoint-id for the same reason.)
 */
static int check_fence(floe_snapshot_op *op, const floe_metadata *base,
		       const floe_snapshot *parent, floe_error *err)
{
	int64_t last = floe_pipeline_last_snapshot(base, parent, op->fence_pipeline);
	if (last == op->fence_expect)
		return FLOE_OK;
	const floe_snapshot *ls = floe_metadata_snapshot(base, last);
	const char *ck = ls ? floe_snapshot_summary(ls, "floe.checkpoint-id") : NULL;
	if (op->fence_expect == FLOE_NO_SNAPSHOT)
		return floe_error_set(err, FLOE_ECONFLICT,
				      "pipeline '%s' is fenced: another process of it committed "
				      "snapshot %lld (checkpoint %s) after this one started from "
				      "nothing; stop this process (its input would be applied "
				      "twice)",
				      op->fence_pipeline, (long long)last, ck ? ck : "?");
	return floe_error_set(err, FLOE_ECONFLICT,
			      "pipeline '%s' is fenced: its newest snapshot on '%s' is %lld "
			      "(checkpoint %s), not %lld which this process resumed from or "
			      "committed; another process of the same pipeline is running (or "
			      "this one is stale), and committing would apply its input twice",
			      op->fence_pipeline, op->branch, (long long)last, ck ? ck : "none",
			      (long long)op->fence_expect);
}

/* ---- one attempt ---------------------------------------------------------------------- */

/* One attempt on base (the table's current metadata): the manifest list
 * and the next metadata (*next NULL: nothing to commit). The list's path
 * is kept for drop_attempt. */
/* ---- merging manifests on commit ------------------------------------------------ */

/*
 * Java's MergingSnapshotProducer (every producer but a fast append and a
 * manifest rewrite): the data manifests, then the delete manifests, are
 * grouped by spec; a group is packed from its oldest end into bins of
 * commit.manifest.target-size-bytes; a bin of one manifest stays, the bin
 * holding the list's first (newest) manifest is merged only once it has
 * commit.manifest.min-count-to-merge manifests, any other bin is merged.
 * So a streaming table's list stays under ~100 manifests instead of growing
 * by one or two per checkpoint, and readers open a few manifests, not
 * hundreds. A merged manifest keeps this commit's entries as they are and
 * turns earlier ones EXISTING (explicit snapshot id, sequence numbers,
 * first_row_id); earlier DELETED entries are dropped.
 */
typedef struct merge_ctx {
	floe_manifest_writer *w;
	bool own; /* the manifest was written by this commit */
	int rc;
	floe_error *err;
} merge_ctx;

static int merge_cb(const floe_manifest_entry *e, void *payload)
{
	merge_ctx *c = payload;
	int rc;
	if (c->own && e->status == FLOE_ENTRY_ADDED)
		rc = floe_manifest_writer_add(c->w, FLOE_ENTRY_ADDED, -1, e->sequence_number,
					      e->file_sequence_number, &e->file, c->err);
	else if (c->own)
		rc = floe_manifest_writer_add(c->w, e->status, e->snapshot_id, e->sequence_number,
					      e->file_sequence_number, &e->file, c->err);
	else if (e->status == FLOE_ENTRY_DELETED)
		return 0; /* deleted by an earlier snapshot: dropped */
	else
		rc = floe_manifest_writer_add(c->w, FLOE_ENTRY_EXISTING, e->snapshot_id,
					      e->sequence_number, e->file_sequence_number, &e->file,
					      c->err);
	if (rc)
		c->rc = rc;
	return rc;
}

static merged *find_merge(floe_snapshot_op *op, const char *key)
{
	for (size_t i = 0; i < op->n_merges; i++)
		if (!strcmp(op->merges[i].key, key))
			return &op->merges[i];
	return NULL;
}

/* one merged manifest of bin[0..n) (all of one content and spec) into *out */
static int merge_bin(floe_snapshot_op *op, const floe_metadata *m, const floe_manifest_file *bin,
		     size_t n, floe_manifest_file *out, floe_error *err)
{
	floe_buf key;
	int rc = FLOE_OK;
	floe_buf_init(&key, 0);
	for (size_t i = 0; i < n && !rc; i++)
		if (floe_buf_puts(&key, bin[i].path) || floe_buf_putc(&key, '\n'))
			rc = floe_error_oom(err);
	merged *done = rc ? NULL : find_merge(op, floe_buf_cstr(&key));
	if (done) {
		/* manifests are immutable: an earlier attempt's merge of the same inputs holds */
		done->used = true;
		*out = done->written;
		floe_buf_reset(&key);
		return FLOE_OK;
	}
	floe_manifest_writer *w = NULL;
	if (!rc)
		rc = open_manifest(op, m, floe_metadata_spec(m, bin[0].spec_id), bin[0].content, &w,
				   err);
	merge_ctx c = {.w = w, .err = err};
	for (size_t i = 0; i < n && !rc; i++) {
		floe_input *in = NULL;
		c.own = bin[i].added_snapshot_id == op->snapshot_id;
		if (!(rc = floe_io_open_read_seq(floe_table_io(op->t), bin[i].path, &in, err)))
			rc = floe_manifest_read(in, m, &bin[i], floe_table_path_map(op->t), merge_cb,
						&c, err);
		floe_input_close(in);
		if (!rc && c.rc)
			rc = c.rc;
	}
	if (rc) {
		floe_manifest_writer_abort(w);
		floe_buf_reset(&key);
		return rc;
	}
	if (FLOE_ARRAY_RESERVE(op->merges, op->cap_merges, op->n_merges + 1)) {
		floe_manifest_writer_abort(w);
		floe_buf_reset(&key);
		return floe_error_oom(err);
	}
	merged *mg = &op->merges[op->n_merges];
	memset(mg, 0, sizeof(*mg));
	rc = floe_manifest_writer_close(w, &mg->written, &op->arena, err);
	if (!rc && !(mg->key = floe_arena_strdup(&op->arena, floe_buf_cstr(&key))))
		rc = floe_error_oom(err);
	floe_buf_reset(&key);
	if (rc)
		return rc;
	mg->used = true;
	op->n_merges++;
	*out = mg->written;
	return FLOE_OK;
}

static int cmp_spec_desc(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
	return (a < b) - (a > b);
}

/* Merge the manifests of list[0..*n) in place (see above); *n shrinks. */
static int merge_manifests(floe_snapshot_op *op, const floe_metadata *m, floe_manifest_file *list,
			   size_t *n, floe_arena *a, floe_error *err)
{
	if (*n < 2 || !floe_prop_bool(m, "commit.manifest-merge.enabled"))
		return FLOE_OK;
	for (size_t i = 0; i < *n; i++)
		if (list[i].content != FLOE_MANIFEST_DATA && list[i].content != FLOE_MANIFEST_DELETES)
			return FLOE_OK;
	int64_t min_count = floe_prop_i64(m, "commit.manifest.min-count-to-merge");
	int64_t target = floe_prop_i64(m, "commit.manifest.target-size-bytes");
	size_t total = *n;
	floe_manifest_file *out = floe_arena_calloc(a, total, sizeof(*out));
	floe_manifest_file *grp = floe_arena_calloc(a, total, sizeof(*grp));
	size_t *starts = floe_arena_calloc(a, total + 1, sizeof(size_t));
	int32_t *specs = floe_arena_calloc(a, total, sizeof(int32_t));
	if (!out || !grp || !starts || !specs)
		return floe_error_oom(err);
	size_t n_out = 0;
	int rc = FLOE_OK;
	for (int content = FLOE_MANIFEST_DATA; content <= FLOE_MANIFEST_DELETES && !rc; content++) {
		/* the list's first manifest of this content, and its specs, newest first */
		const floe_manifest_file *first = NULL;
		size_t n_specs = 0;
		for (size_t i = 0; i < total; i++) {
			if (list[i].content != content)
				continue;
			if (!first)
				first = &list[i];
			bool seen = false;
			for (size_t k = 0; k < n_specs && !seen; k++)
				seen = specs[k] == list[i].spec_id;
			if (!seen)
				specs[n_specs++] = list[i].spec_id;
		}
		qsort(specs, n_specs, sizeof(*specs), cmp_spec_desc);
		for (size_t sp = 0; sp < n_specs && !rc; sp++) {
			size_t ng = 0, first_at = SIZE_MAX;
			for (size_t i = 0; i < total; i++)
				if (list[i].content == content && list[i].spec_id == specs[sp]) {
					if (&list[i] == first)
						first_at = ng;
					grp[ng++] = list[i];
				}
			/* Java's packEnd: walking back from the oldest manifest, a bin is
			 * closed when the next one would take it past the target; starts[]
			 * gets each bin's first index, then is put in list order */
			size_t nstarts = 0, in_bin = 0;
			int64_t weight = 0;
			for (size_t i = ng; i-- > 0;) {
				int64_t len = grp[i].length > 0 ? grp[i].length : 0;
				if (in_bin && weight + len > target) {
					starts[nstarts++] = i + 1;
					weight = 0;
					in_bin = 0;
				}
				weight += len;
				in_bin++;
			}
			starts[nstarts++] = 0;
			for (size_t i = 0, j = nstarts - 1; i < j; i++, j--) {
				size_t t = starts[i];
				starts[i] = starts[j];
				starts[j] = t;
			}
			for (size_t b = 0; b < nstarts && !rc; b++) {
				size_t lo = starts[b], up = b + 1 < nstarts ? starts[b + 1] : ng;
				size_t cnt = up - lo;
				bool has_first = first_at >= lo && first_at < up;
				if (cnt == 1 || (has_first && (int64_t)cnt < min_count)) {
					memcpy(out + n_out, grp + lo, cnt * sizeof(*out));
					n_out += cnt;
					continue;
				}
				rc = merge_bin(op, m, grp + lo, cnt, &out[n_out], err);
				if (!rc) {
					out[n_out].sequence_number = -1;
					out[n_out].first_row_id = -1;
					n_out++;
				}
			}
		}
	}
	if (rc)
		return rc;
	memcpy(list, out, n_out * sizeof(*out));
	*n = n_out;
	return FLOE_OK;
}

/* Merges of earlier attempts that this one does not use are garbage. */
static void drop_unused_merges(floe_snapshot_op *op)
{
	size_t w = 0;
	for (size_t i = 0; i < op->n_merges; i++) {
		if (op->merges[i].used)
			op->merges[w++] = op->merges[i];
		else
			floe_io_remove_quiet(floe_table_io(op->t), op->merges[i].written.path);
	}
	op->n_merges = w;
}

/* After the commit landed: what it wrote is whole (the next commit need not
 * read it back), and this commit's own manifests that a merge stands for are
 * named by no snapshot: removed. */
static void committed(floe_snapshot_op *op)
{
	floe_fileio *io = floe_table_io(op->t);
	for (size_t i = 0; i < op->n_manifests; i++)
		floe_table__note_verified(op->t, op->manifests[i].path);
	for (size_t i = 0; i < op->n_rewrites; i++)
		floe_table__note_verified(op->t, op->rewrites[i].written.path);
	for (size_t i = 0; i < op->n_merges; i++) {
		floe_table__note_verified(op->t, op->merges[i].written.path);
		for (const char *p = op->merges[i].key; *p;) {
			const char *nl = strchr(p, '\n');
			size_t len = (size_t)(nl - p);
			for (size_t k = 0; k < op->n_manifests; k++)
				if (strlen(op->manifests[k].path) == len &&
				    !memcmp(op->manifests[k].path, p, len))
					floe_io_remove_quiet(io, op->manifests[k].path);
			for (size_t k = 0; k < op->n_rewrites; k++)
				if (strlen(op->rewrites[k].written.path) == len &&
				    !memcmp(op->rewrites[k].written.path, p, len))
					floe_io_remove_quiet(io, op->rewrites[k].written.path);
			p = nl + 1;
		}
	}
}

static int build_attempt(void *payload, const floe_metadata *base, int n_attempt,
			 floe_metadata **next_out, floe_error *err)
{
	floe_snapshot_op *op = payload;
	floe_table *t = op->t;
	floe_fileio *io = floe_table_io(t);
	char **list_path = &op->attempt_list;
	const floe_snapshot_ref *ref = floe_metadata_ref(base, op->branch);
	const floe_snapshot *parent = ref ? floe_metadata_snapshot(base, ref->snapshot_id)
					  : floe_metadata_current_snapshot(base);
	floe_arena a;
	floe_manifest_file *old = NULL, *all, *kept;
	size_t n_old = 0;
	floe_strmap summary;
	floe_metadata_builder *b = NULL;
	floe_metadata *next = NULL;
	removed_totals removed;
	int rc;
	int fv = base->format_version;

	floe_arena_init(&a, 65536);
	floe_strmap_init(&summary);
	memset(&removed, 0, sizeof(removed));
	*next_out = NULL;
	floe_free(*list_path);
	*list_path = NULL;
	if (ref && ref->is_tag) {
		rc = floe_error_set(err, FLOE_EINVAL, "'%s' is a tag, not a branch", op->branch);
		goto done;
	}
	if (!op->validated_start) {
		if (op->validate_from == -1)
			op->validate_from = parent ? parent->snapshot_id : FLOE_NO_SNAPSHOT;
		op->validated_start = true;
	}
	if ((rc = ensure_lease(op, err)) ||
	    (n_attempt > 1 && (rc = floe_table__lease_touch(op->t, err))) ||
	    (n_attempt > 1 && (rc = rewrite_missing(op, base, err))))
		goto done;
	/* never build on a parent that lost entries: the new snapshot would make
	 * the loss permanent (its list and each manifest are checked against
	 * what they promise; manifests seen whole before are not read again) */
	if (parent && ((rc = floe_table_manifests(&old, &n_old, &a, t, parent, err)) ||
		       (rc = floe_table__verify_manifests(t, old, n_old, err)))) {
		floe_error_prefix(err, rc, "the snapshot %lld this commit builds on is corrupt: ",
				  (long long)parent->snapshot_id);
		goto done;
	}
	if (op->fence_pipeline && (rc = check_fence(op, base, parent, err)))
		goto done;
	if (op->check && (rc = op->check(op->check_payload, base, parent, err)))
		goto done;
	if (op->ow_on && ((rc = overwrite_resolve(op, base, parent, err)) ||
			  (rc = overwrite_validate(op, base, parent, err))))
		goto done;
	if ((rc = validate(op, base, parent, err)) ||
	    (rc = validate_row_delta(op, base, parent, err)))
		goto done;
	kept = floe_arena_calloc(&a, n_old + 1, sizeof(*kept));
	all = floe_arena_calloc(&a, op->n_manifests + n_old + 1, sizeof(*all));
	if (!kept || !all) {
		rc = floe_error_oom(err);
		goto done;
	}
	if (op->n_mr_old) {
		/* rewrite-manifests: the fresh manifests stand for the old ones */
		size_t nk = 0;
		for (size_t k = 0; k < op->n_mr_old; k++) {
			bool present = false;
			for (size_t i = 0; i < n_old && !present; i++)
				present = strcmp(old[i].path, op->mr_old[k]) == 0;
			if (!present) {
				rc = floe_error_set(err, FLOE_ECONFLICT,
						    "manifest '%s' was replaced by another commit",
						    op->mr_old[k]);
				goto done;
			}
		}
		for (size_t i = 0; i < n_old; i++) {
			bool replaced = false;
			for (size_t k = 0; k < op->n_mr_old && !replaced; k++)
				replaced = strcmp(old[i].path, op->mr_old[k]) == 0;
			if (!replaced)
				kept[nk++] = old[i];
		}
		n_old = nk;
	} else {
		if ((rc = filter_manifests(op, base, old, n_old, kept, &removed, err)))
			goto done;
		drop_unused_rewrites(op);
		if (op->added_data_files + op->added_pos_files + op->added_eq_files + op->added_dvs ==
			    0 &&
		    removed.data_files + removed.pos_files + removed.eq_files + removed.dvs == 0 &&
		    !op->allow_empty) {
			rc = FLOE_OK; /* nothing to do after all */
			goto done;
		}
	}
	/* new manifests first, then the parent's (rewritten or kept) */
	size_t n_all = 0;
	if (op->n_mr_new) {
		all = floe_arena_calloc(&a, op->n_mr_new + n_old + 1, sizeof(*all));
		if (!all) {
			rc = floe_error_oom(err);
			goto done;
		}
		/* rewritten manifests keep their sequence numbers ("replace" adds no
		 * data); a fresh manifest of EXISTING entries gets the commit's */
		for (size_t i = 0; i < op->n_mr_new; i++) {
			all[n_all] = op->mr_new[i];
			all[n_all].sequence_number = -1;
			n_all++;
		}
	}
	memcpy(all + n_all, op->manifests, op->n_manifests * sizeof(*all));
	for (size_t i = 0; i < op->n_manifests; i++) {
		all[n_all + i].sequence_number = -1;
		all[n_all + i].first_row_id = -1;
	}
	n_all += op->n_manifests;
	for (size_t i = 0; i < n_old; i++) {
		/* a rewritten manifest stays listed even when all its entries are
		 * DELETED: they record what this snapshot removed */
		all[n_all] = kept[i];
		if (kept[i].added_snapshot_id == op->snapshot_id) {
			all[n_all].sequence_number = -1;
			all[n_all].first_row_id = -1;
		}
		n_all++;
	}
	if (!op->n_mr_old) {
		for (size_t i = 0; i < op->n_merges; i++)
			op->merges[i].used = false;
		rc = merge_manifests(op, base, all, &n_all, &a, err);
		drop_unused_merges(op);
		if (rc)
			goto done;
	}
	int64_t seq = fv >= 2 ? base->last_sequence_number + 1 : 0;
	int64_t first_row_id = fv >= 3 ? base->next_row_id : -1;
	int64_t next_row_id = first_row_id;
	char *dir = floe_metadata_dir(base);
	if (!dir) {
		rc = floe_error_oom(err);
		goto done;
	}
	size_t plen = strlen(dir) + 128;
	*list_path = floe_malloc(plen);
	if (!*list_path) {
		floe_free(dir);
		rc = floe_error_oom(err);
		goto done;
	}
	snprintf(*list_path, plen, "%s/snap-%lld-%d-%s.avro", dir, (long long)op->snapshot_id,
		 n_attempt, op->commit_uuid);
	floe_free(dir);
	floe_output *out;
	int64_t list_len = 0;
	if ((rc = floe_io_create(io, *list_path, false, &out, err)))
		goto done;
	if ((rc = floe_manifest_list_write(out, fv, op->snapshot_id,
					   parent ? parent->snapshot_id : FLOE_NO_SNAPSHOT, seq,
					   first_row_id, all, n_all, &next_row_id, &list_len, err)))
		goto done;

	if ((rc = build_summary(op, parent, &removed, &summary))) {
		rc = floe_error_oom(err);
		goto done;
	}
	floe_kv *kvs = floe_arena_calloc(&a, summary.len + 1, sizeof(floe_kv));
	if (!kvs) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < summary.len; i++) {
		kvs[i].key = summary.items[i].key;
		kvs[i].value = summary.items[i].value;
	}
	floe_snapshot snap = {0};
	snap.snapshot_id = op->snapshot_id;
	snap.parent_id = parent ? parent->snapshot_id : FLOE_NO_SNAPSHOT;
	snap.sequence_number = seq;
	snap.timestamp_ms = floe_now_ms();
	if (snap.timestamp_ms <= base->last_updated_ms)
		snap.timestamp_ms = base->last_updated_ms + 1;
	snap.manifest_list = *list_path;
	snap.summary = kvs;
	snap.n_summary = summary.len;
	snap.schema_id = base->current_schema_id;
	snap.first_row_id = fv >= 3 ? first_row_id : -1;
	snap.added_rows = fv >= 3 ? next_row_id - first_row_id : -1;
	floe_snapshot_ref nref = {op->branch, op->snapshot_id, false, -1, -1, -1};
	if (ref) {
		nref.min_snapshots_to_keep = ref->min_snapshots_to_keep;
		nref.max_snapshot_age_ms = ref->max_snapshot_age_ms;
		nref.max_ref_age_ms = ref->max_ref_age_ms;
	}
	if ((rc = floe_metadata_builder_from(&b, base, err)) ||
	    (rc = floe_mb_add_snapshot(b, &snap, err)) || (rc = floe_mb_set_ref(b, &nref, err)))
		goto done;
	if (fv >= 3)
		floe_mb_set_next_row_id(b, next_row_id);
	rc = floe_metadata_builder_finish(&next, b, base->metadata_location, base->last_updated_ms,
					  err);
	b = NULL;
	if (rc || (rc = check_before_swap(op, err)))
		goto done;
	*next_out = next;
	next = NULL;
done:
	floe_metadata_builder_free(b);
	floe_metadata_free(next);
	floe_strmap_reset(&summary);
	floe_arena_reset(&a);
	return rc;
}

static void drop_attempt(void *payload, int n_attempt)
{
	floe_snapshot_op *op = payload;
	(void)n_attempt;
	if (op->attempt_list)
		floe_io_remove_quiet(floe_table_io(op->t), op->attempt_list);
	floe_free(op->attempt_list);
	op->attempt_list = NULL;
}

static bool landed(void *payload, const floe_metadata *cur)
{
	floe_snapshot_op *op = payload;
	return floe_metadata_snapshot(cur, op->snapshot_id) != NULL;
}

int floe_op_commit(floe_snapshot_op *op, int64_t *snapshot_id, floe_error *err_out)
{
	floe_table *t = op->t;
	floe_error local, *err = err_out ? err_out : &local;
	int rc;
	floe_error_clear(&local);
	if (snapshot_id)
		*snapshot_id = -1;
	if (!floe_table_catalog(t))
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "this table was opened by path: commit through a catalog");
	if (floe_op_added(op) == 0 && op->n_removes == 0 && op->n_mr_old == 0 && !op->allow_empty &&
	    !op->ow_on)
		return FLOE_OK;
	if ((rc = count_partitions(op)))
		return floe_error_oom(err);
	if (!op->manifests_written && (rc = write_new_manifests(op, err))) {
		remove_written(op);
		return floe_error_prefix(err, rc, "commit to %s.%s: ", floe_table_namespace(t),
					 floe_table_name(t));
	}
	static const floe_commit_fns fns = {build_attempt, drop_attempt, landed};
	rc = floe_table__commit(t, "commit to", &fns, op, err);
	floe_free(op->attempt_list);
	op->attempt_list = NULL;
	if (rc) {
		/* a commit that may be current keeps every file it wrote (and its
		 * lease, left to expire) */
		if (rc != FLOE_ECOMMITUNKNOWN)
			remove_written(op);
		else
			op->lease_keep = true;
		return rc;
	}
	committed(op);
	if (snapshot_id)
		*snapshot_id = floe_metadata_snapshot(floe_table_metadata(t), op->snapshot_id)
				       ? op->snapshot_id
				       : -1;
	return FLOE_OK;
}

int floe_op_commit_all(floe_snapshot_op **ops, size_t n, int64_t *snapshot_ids,
		       floe_error *err_out)
{
	floe_error local, *err = err_out ? err_out : &local;
	floe_table **ts = NULL;
	void **payloads = NULL;
	int rc = FLOE_OK;
	floe_error_clear(&local);
	for (size_t i = 0; snapshot_ids && i < n; i++)
		snapshot_ids[i] = -1;
	if (n == 1)
		return floe_op_commit(ops[0], snapshot_ids, err);
	ts = floe_calloc(n ? n : 1, sizeof(*ts));
	payloads = floe_calloc(n ? n : 1, sizeof(*payloads));
	if (!ts || !payloads) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		floe_snapshot_op *op = ops[i];
		ts[i] = op->t;
		payloads[i] = op;
		for (size_t k = 0; k < i; k++)
			if (ts[k] == op->t)
				rc = floe_error_set(err, FLOE_EINVAL,
						    "a multi-table commit names %s.%s twice",
						    floe_table_namespace(op->t), floe_table_name(op->t));
		if (!rc && floe_op_added(op) == 0 && op->n_removes == 0 && op->n_mr_old == 0)
			rc = floe_error_set(err, FLOE_EINVAL,
					    "%s.%s: an empty operation in a multi-table commit",
					    floe_table_namespace(op->t), floe_table_name(op->t));
		if (!rc && count_partitions(op))
			rc = floe_error_oom(err);
		if (!rc && !op->manifests_written && (rc = write_new_manifests(op, err)))
			floe_error_prefix(err, rc, "commit to %s.%s: ", floe_table_namespace(op->t),
					  floe_table_name(op->t));
	}
	if (rc) {
		for (size_t i = 0; i < n; i++)
			remove_written(ops[i]);
		goto done;
	}
	static const floe_commit_fns fns = {build_attempt, drop_attempt, landed};
	rc = floe_table__commit_multi(ts, n, "commit to", &fns, payloads, err);
	for (size_t i = 0; i < n; i++) {
		floe_snapshot_op *op = ops[i];
		floe_free(op->attempt_list);
		op->attempt_list = NULL;
		if (rc == FLOE_ECOMMITUNKNOWN) {
			op->lease_keep = true;
			continue;
		}
		if (rc) {
			remove_written(op);
			continue;
		}
		committed(op);
		if (snapshot_ids)
			snapshot_ids[i] = floe_metadata_snapshot(floe_table_metadata(op->t),
								 op->snapshot_id)
						  ? op->snapshot_id
						  : -1;
	}
done:
	floe_free(ts);
	floe_free(payloads);
	return rc;
}
