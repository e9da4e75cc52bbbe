/*
 * write_delete_dv.c — deletion vectors (format v3): positions collected per
 * data file, one Puffin file per complete() with one deletion-vector-v1
 * blob per data file.
 *
 * spec: "Deletion Vectors" (table spec) and "deletion-vector-v1" (Puffin
 * spec): one DV per data file per snapshot; a DV added for a file that has
 * one must hold the old positions and replace it. Java: BaseDVFileWriter —
 * blob fields [_pos id], snapshot-id and sequence-number -1 (inherited),
 * properties referenced-data-file and cardinality, footer created-by; the
 * delete entry has format PUFFIN, the Puffin file's path and size, the
 * blob's offset and length, record_count = cardinality, the data file's
 * spec and partition, no metrics and no sort order.
 *
 * DESIGN: positions share write_delete_pos.c's per-data-file sets. The
 * Puffin file goes where Java's OutputFileFactory.newOutputFile() puts it
 * (the data path, no partition path) under the task's next file name with
 * ".puffin". Blobs are written in path order, so a Puffin file is a pure
 * function of the deletes given. A merged previous DV is read through the
 * existing decoder (length, magic, CRC-32 and cardinality checked).
 */
#include <stdio.h>
#include <string.h>

#include "puffin/puffin_write.h"
#include "util/alloc.h"
#include "util/str.h"
#include "write/write_int.h"

#define MAX_DV_BLOB ((int64_t)1 << 30)

struct floe_dv_writer {
	floe_fileio *io;
	const floe_metadata *m;
	floe_write_config cfg;
	floe_arena arena; /* cfg strings */
	floe_file_namer *namer;
	bool own_namer;
	floe_write__targets targets;
	/* entries the new DVs replace */
	floe_data_file *rep;
	size_t n_rep, cap_rep;
	floe_arena rep_arena;
	floe_hmap rep_keys; /* "<path>#<offset>" */
	floe_delete_writer_stats stats;
	bool failed;
};

int floe_dv_writer_new(floe_dv_writer **out, floe_fileio *io, const floe_metadata *m,
		       const floe_write_config *cfg, const floe_delete_writer_opts *opts,
		       floe_error *err)
{
	static const floe_delete_writer_opts dflt = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_dv_writer *w;
	int rc;
	*out = NULL;
	if (!opts)
		opts = &dflt;
	if (opts->version != 1)
		return floe_error_set(err, FLOE_EINVAL, "deletion vector writer: options version %d",
				      opts->version);
	if (m->format_version < 3)
		return floe_error_set(err, FLOE_EINVAL,
				      "deletion vector writer: a v%d table cannot hold deletion "
				      "vectors (format v3 or later; v2 takes position delete files)",
				      m->format_version);
	w = floe_calloc(1, sizeof(*w));
	if (!w)
		return floe_error_oom(err);
	floe_arena_init(&w->arena, 1024);
	floe_arena_init(&w->rep_arena, 1024);
	floe_hmap_init(&w->rep_keys);
	floe_write__targets_init(&w->targets, FLOE_DV_MAX_POSITION);
	w->io = io;
	w->m = m;
	w->cfg = *cfg;
	w->cfg.data_path = floe_arena_strdup(&w->arena, cfg->data_path);
	if (!w->cfg.data_path) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if (opts->namer) {
		w->namer = opts->namer;
	} else {
		if ((rc = floe_file_namer_new(&w->namer, opts->partition_id, opts->task_id,
					      opts->operation_id, err)))
			goto fail;
		w->own_namer = true;
	}
	*out = w;
	return FLOE_OK;
fail:
	floe_error_prefix(err, rc, "deletion vector writer: ");
	floe_dv_writer_abort(w);
	return rc;
}

static int check_spec(const floe_dv_writer *w, const char *path, int32_t spec_id,
		      const floe_partition *partition, floe_error *err)
{
	const floe_partition_spec *spec = floe_metadata_spec(w->m, spec_id);
	if (!spec)
		return floe_error_set(err, FLOE_EINVAL, "partition spec %d is not in the table",
				      spec_id);
	if ((partition ? partition->n : 0) != spec->n_fields)
		return floe_error_set(err, FLOE_EINVAL,
				      "data file '%s': a partition of %zu values for spec %d of %zu "
				      "fields",
				      path ? path : "", partition ? partition->n : 0, spec_id,
				      spec->n_fields);
	return FLOE_OK;
}

int floe_dv_writer_delete(floe_dv_writer *w, const char *data_path, int32_t spec_id,
			  const floe_partition *partition, const int64_t *pos, size_t n,
			  floe_error *err)
{
	floe_write__target *t;
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "deletion vector writer: failed earlier "
				      "(abort it)");
	if ((rc = check_spec(w, data_path, spec_id, partition, err)) ||
	    (rc = floe_write__targets_get(&w->targets, &t, data_path, spec_id, partition, err)) ||
	    (rc = floe_write__target_add(&w->targets, t, pos, n, err)))
		return floe_error_prefix(err, rc, "deletion vector writer: ");
	w->stats.deletes += (int64_t)n;
	return FLOE_OK;
}

/* Remember an entry the new DVs replace (once per path and offset). */
static int add_replaced(floe_dv_writer *w, const floe_data_file *f, bool *dup, floe_error *err)
{
	floe_buf k;
	bool existed = false;
	int rc;
	*dup = false;
	floe_buf_init(&k, 0);
	if (floe_buf_printf(&k, "%s#%lld", f->file_path, (long long)f->content_offset)) {
		floe_buf_reset(&k);
		return floe_error_oom(err);
	}
	if (floe_hmap_has(&w->rep_keys, k.data, k.len)) {
		*dup = true;
		floe_buf_reset(&k);
		return FLOE_OK;
	}
	rc = FLOE_ARRAY_RESERVE(w->rep, w->cap_rep, w->n_rep + 1);
	if (!rc)
		rc = floe_data_file_copy(&w->rep[w->n_rep], &w->rep_arena, f);
	if (!rc)
		rc = floe_hmap_put(&w->rep_keys, k.data, k.len, w->n_rep, &existed);
	floe_buf_reset(&k);
	if (rc)
		return floe_error_oom(err);
	w->n_rep++;
	return FLOE_OK;
}

int floe_dv_writer_merge(floe_dv_writer *w, const char *data_path, int32_t spec_id,
			 const floe_partition *partition, const uint64_t *pos, size_t n,
			 const floe_data_file *replaced, floe_error *err)
{
	floe_write__target *t;
	bool dup = false;
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "deletion vector writer: failed earlier "
				      "(abort it)");
	if ((rc = check_spec(w, data_path, spec_id, partition, err)) ||
	    (rc = floe_write__targets_get(&w->targets, &t, data_path, spec_id, partition, err)))
		return floe_error_prefix(err, rc, "deletion vector writer: ");
	if (replaced && (rc = add_replaced(w, replaced, &dup, err)))
		return floe_error_prefix(err, rc, "deletion vector writer: ");
	if (dup)
		return FLOE_OK;
	if ((rc = floe_write__target_add_u64(&w->targets, t, pos, n, err)))
		return floe_error_prefix(err, rc, "deletion vector writer: ");
	return FLOE_OK;
}

int floe_dv_writer_merge_previous(floe_dv_writer *w, const floe_data_file *dv, floe_error *err_out)
{
	floe_error local, *err = err_out ? err_out : &local;
	floe_input *in = NULL;
	floe_buf blob;
	uint64_t *pos = NULL;
	size_t n = 0;
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "deletion vector writer: failed earlier "
				      "(abort it)");
	if (dv->content != FLOE_CONTENT_POSITION_DELETES || !dv->file_format ||
	    !floe_str_ieq(dv->file_format, "PUFFIN") || !dv->referenced_data_file ||
	    dv->content_offset < 0 || dv->content_size_in_bytes < 12 ||
	    dv->content_size_in_bytes > MAX_DV_BLOB || dv->record_count < 0)
		return floe_error_set(err, FLOE_EINVAL,
				      "deletion vector writer: '%s' is not a deletion vector entry "
				      "(content 1, format PUFFIN, referenced_data_file, "
				      "content_offset, content_size_in_bytes, record_count)",
				      dv->file_path ? dv->file_path : "");
	/* the same entry twice: merged once */
	{
		floe_buf k;
		bool have;
		floe_buf_init(&k, 0);
		if (floe_buf_printf(&k, "%s#%lld", dv->file_path, (long long)dv->content_offset)) {
			floe_buf_reset(&k);
			return floe_error_oom(err);
		}
		have = floe_hmap_has(&w->rep_keys, k.data, k.len);
		floe_buf_reset(&k);
		if (have)
			return FLOE_OK;
	}
	floe_buf_init(&blob, (size_t)dv->content_size_in_bytes + 1);
	if ((rc = floe_io_open_read(w->io, dv->file_path, &in, err)))
		goto done;
	if ((uint64_t)dv->content_offset + (uint64_t)dv->content_size_in_bytes > in->size) {
		rc = floe_error_corrupt(err, "blob at %lld of %lld bytes lies beyond the end of the "
					"file (%llu bytes)",
					(long long)dv->content_offset,
					(long long)dv->content_size_in_bytes,
					(unsigned long long)in->size);
		goto done;
	}
	if (floe_buf_reserve(&blob, (size_t)dv->content_size_in_bytes)) {
		rc = floe_error_oom(err);
		goto done;
	}
	if ((rc = floe_input_read_exact(in, (uint64_t)dv->content_offset, blob.data,
					(size_t)dv->content_size_in_bytes, err)))
		goto done;
	blob.len = (size_t)dv->content_size_in_bytes;
	if ((rc = floe_dv_decode(&pos, &n, blob.data, blob.len, dv->record_count,
				 (size_t)dv->record_count, err)))
		goto done;
	rc = floe_dv_writer_merge(w, dv->referenced_data_file, dv->spec_id, &dv->partition, pos, n,
				  dv, err);
	if (rc)
		goto done_noprefix;
done:
	if (rc)
		floe_error_prefix(err, rc, "deletion vector writer: previous DV '%s' at %lld: ",
				  dv->file_path, (long long)dv->content_offset);
done_noprefix:
	floe_free(pos);
	floe_buf_reset(&blob);
	floe_input_close(in);
	return rc;
}

/* Write the Puffin file of ordered targets; entries into *dvs (arena a). */
static int write_puffin(floe_dv_writer *w, floe_write__target **order, size_t n_order,
			floe_data_file **dvs, size_t *n, floe_arena *a, floe_error *err)
{
	static const int32_t fields[1] = {FLOE_DV_FIELD_ROW_POS};
	floe_output *out = NULL;
	floe_puffin_writer *pw = NULL;
	floe_buf path, blob;
	int64_t *offs = NULL, *lens = NULL;
	size_t first = *n, n_written = 0;
	uint64_t size = 0;
	char name[160], card[32];
	int rc;
	floe_buf_init(&path, 0);
	floe_buf_init(&blob, 0);
	offs = floe_calloc(n_order + 1, sizeof(int64_t));
	lens = floe_calloc(n_order + 1, sizeof(int64_t));
	if (!offs || !lens) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if ((rc = floe_file_namer_next(w->namer, name, sizeof(name), ".puffin", err)))
		goto fail;
	if (floe_write_location(&path, &w->cfg, NULL, name)) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if ((rc = floe_io_create(w->io, floe_buf_cstr(&path), false, &out, err)) ||
	    (rc = floe_puffin_writer_new(&pw, out, err)))
		goto fail;
	for (size_t i = 0; i < n_order; i++) {
		floe_write__target *t = order[i];
		floe_puffin_prop props[2] = {{"referenced-data-file", t->path}, {"cardinality", card}};
		floe_puffin_blob meta = {0};
		snprintf(card, sizeof(card), "%zu", t->n);
		meta.type = FLOE_DV_BLOB_TYPE;
		meta.fields = (int32_t *)fields;
		meta.n_fields = 1;
		meta.snapshot_id = -1;     /* inherited */
		meta.sequence_number = -1; /* inherited */
		meta.properties = props;
		meta.n_properties = 2;
		floe_buf_clear(&blob);
		if ((rc = floe_dv_encode(&blob, t->pos, t->n, err)) ||
		    (rc = floe_puffin_writer_add(pw, &meta, blob.data, blob.len, &offs[i], &lens[i],
						 err)))
			goto fail;
	}
	static const floe_puffin_prop file_props[1] = {{"created-by", "floe version " FLOE_VERSION}};
	if ((rc = floe_puffin_writer_finish(pw, file_props, 1, &size, err)))
		goto fail;
	floe_output *o = out;
	out = NULL;
	if ((rc = floe_output_close(o, err))) /* published from here on, or not at all */
		goto fail;
	floe_data_file *arr = floe_realloc(*dvs, (*n + n_order + 1) * sizeof(**dvs));
	if (!arr)
		goto nomem;
	*dvs = arr;
	const char *fp = floe_arena_strdup(a, floe_buf_cstr(&path));
	if (!fp)
		goto nomem;
	for (size_t i = 0; i < n_order; i++) {
		floe_write__target *t = order[i];
		floe_data_file *f = &arr[*n];
		floe_data_file_init(f);
		f->content = FLOE_CONTENT_POSITION_DELETES;
		f->file_path = fp;
		f->file_format = "PUFFIN";
		f->spec_id = t->spec_id;
		f->record_count = (int64_t)t->n;
		f->file_size_in_bytes = (int64_t)size;
		f->referenced_data_file = floe_arena_strndup(a, t->path, t->path_len);
		f->content_offset = offs[i];
		f->content_size_in_bytes = lens[i];
		f->partition.n = t->partition.n;
		f->partition.values = floe_arena_calloc(a, t->partition.n + 1, sizeof(floe_value));
		if (!f->referenced_data_file || !f->partition.values)
			goto nomem;
		for (size_t k = 0; k < t->partition.n; k++) {
			f->partition.values[k] = t->partition.values[k];
			if (floe_value_own(&f->partition.values[k], a))
				goto nomem;
		}
		(*n)++;
		n_written++;
	}
	w->stats.files_finished += (int64_t)n_written;
	rc = FLOE_OK;
	goto done;
nomem:
	/* published but not describable: take it back */
	rc = floe_error_oom(err);
	floe_io_remove_quiet(w->io, floe_buf_cstr(&path));
	*n = first;
	goto done;
fail:
	floe_output_abort(out);
	floe_error_prefix(err, rc, "deletion vector file '%s': ", floe_buf_cstr(&path));
done:
	floe_puffin_writer_free(pw);
	floe_free(offs);
	floe_free(lens);
	floe_buf_reset(&path);
	floe_buf_reset(&blob);
	return rc;
}

int floe_dv_writer_complete(floe_dv_writer *w, floe_data_file **dvs, size_t *n,
			    floe_data_file **replaced, size_t *n_replaced, floe_arena *a,
			    floe_error *err)
{
	floe_write__target **order = NULL;
	size_t k = 0;
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "deletion vector writer: failed earlier "
				      "(abort it)");
	if ((rc = floe_write__targets_order(&w->targets, &order, err)))
		goto fail;
	for (size_t i = 0; i < w->targets.n; i++) {
		floe_write__target_normalize(&w->targets, order[i]);
		if (order[i]->n) /* a DV without positions is not written */
			order[k++] = order[i];
	}
	if (k && (rc = write_puffin(w, order, k, dvs, n, a, err)))
		goto fail;
	if (w->n_rep) {
		floe_data_file *arr = floe_realloc(*replaced, (*n_replaced + w->n_rep) * sizeof(*arr));
		if (!arr) {
			rc = floe_error_oom(err);
			goto fail;
		}
		*replaced = arr;
		for (size_t i = 0; i < w->n_rep; i++)
			if (floe_data_file_copy(&arr[*n_replaced + i], a, &w->rep[i])) {
				rc = floe_error_oom(err);
				goto fail;
			}
		*n_replaced += w->n_rep;
	}
	floe_free(order);
	floe_write__targets_reset(&w->targets);
	w->n_rep = 0;
	floe_arena_reset(&w->rep_arena);
	floe_hmap_reset(&w->rep_keys);
	floe_hmap_init(&w->rep_keys);
	return FLOE_OK;
fail:
	floe_free(order);
	w->failed = true;
	return floe_error_prefix(err, rc, "deletion vector writer: ");
}

size_t floe_dv_writer_buffered(const floe_dv_writer *w)
{
	return w->targets.bytes;
}

void floe_dv_writer_get_stats(const floe_dv_writer *w, floe_delete_writer_stats *out)
{
	*out = w->stats;
}

void floe_dv_writer_abort(floe_dv_writer *w)
{
	if (!w)
		return;
	floe_write__targets_reset(&w->targets);
	floe_hmap_reset(&w->targets.index);
	floe_arena_reset(&w->targets.arena);
	floe_free(w->rep);
	floe_arena_reset(&w->rep_arena);
	floe_hmap_reset(&w->rep_keys);
	if (w->own_namer)
		floe_file_namer_free(w->namer);
	floe_arena_reset(&w->arena);
	floe_free(w);
}

void floe_dv_writer_free(floe_dv_writer *w)
{
	floe_dv_writer_abort(w);
}
