/*
 * manifest_write.c — writing manifests and manifest lists as Java does.
 *
 * Entries are encoded straight into the Avro block buffer in the schema's
 * field order (no generic values). Partition summaries (r508) are gathered
 * while writing: contains_null, contains_nan and the bounds of the partition
 * values, in the binary single-value form of the partition result type.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "avro/avro_writer.h"
#include "iceberg/manifest_schema.h"

typedef struct summary_acc {
	bool contains_null;
	bool contains_nan;
	bool has_bounds;
	floe_value lower, upper; /* payloads owned by the writer's arena */
} summary_acc;

struct floe_manifest_writer {
	floe_arena arena;
	floe_avro_writer *aw;
	int fv;
	int content;
	int64_t snapshot_id;
	char *path;
	const floe_partition_spec *spec; /* copy in arena */
	const floe_type **part_types;
	summary_acc *acc;
	int32_t added_files, existing_files, deleted_files;
	int64_t added_rows, existing_rows, deleted_rows;
	int64_t min_seq; /* over live entries with explicit sequence numbers; -1 none */
	uint64_t entries;
};

static int enc_opt_long(floe_buf *b, bool present, int64_t v)
{
	if (!present)
		return floe_avro_enc_union(b, 0);
	int rc = floe_avro_enc_union(b, 1);
	return rc ? rc : floe_avro_enc_long(b, v);
}

static int enc_opt_int(floe_buf *b, bool present, int32_t v)
{
	if (!present)
		return floe_avro_enc_union(b, 0);
	int rc = floe_avro_enc_union(b, 1);
	return rc ? rc : floe_avro_enc_int(b, v);
}

static int enc_long_map(floe_buf *b, const floe_id_long *items, size_t n)
{
	int rc;
	if (!items || n == 0)
		return floe_avro_enc_union(b, 0);
	if ((rc = floe_avro_enc_union(b, 1)) || (rc = floe_avro_enc_block_count(b, n)))
		return rc;
	for (size_t i = 0; i < n; i++)
		if ((rc = floe_avro_enc_int(b, items[i].id)) ||
		    (rc = floe_avro_enc_long(b, items[i].value)))
			return rc;
	return floe_avro_enc_block_count(b, 0);
}

static int enc_bytes_map(floe_buf *b, const floe_id_bytes *items, size_t n)
{
	int rc;
	if (!items || n == 0)
		return floe_avro_enc_union(b, 0);
	if ((rc = floe_avro_enc_union(b, 1)) || (rc = floe_avro_enc_block_count(b, n)))
		return rc;
	for (size_t i = 0; i < n; i++)
		if ((rc = floe_avro_enc_int(b, items[i].id)) ||
		    (rc = floe_avro_enc_bytes(b, items[i].p, items[i].n)))
			return rc;
	return floe_avro_enc_block_count(b, 0);
}

int floe_manifest_writer_open(floe_manifest_writer **out_w, floe_output *out, const char *path,
			      int fv, const floe_schema *schema, const floe_partition_spec *spec,
			      int content, int64_t snapshot_id, const char *codec, floe_error *err)
{
	floe_manifest_writer *w = floe_calloc(1, sizeof(*w));
	avro_named_cache cache = {{0}, 0};
	floe_buf hdr;
	int rc = FLOE_OK;
	if (!w) {
		floe_output_abort(out);
		return floe_error_oom(err);
	}
	floe_arena_init(&w->arena, 16384);
	w->fv = fv;
	w->content = content;
	w->snapshot_id = snapshot_id;
	w->min_seq = -1;
	w->path = floe_strdup(path);
	w->spec = floe_spec_copy(&w->arena, spec);
	w->part_types = floe_arena_calloc(&w->arena, spec->n_fields + 1, sizeof(floe_type *));
	w->acc = floe_arena_calloc(&w->arena, spec->n_fields + 1, sizeof(summary_acc));
	floe_buf_init(&hdr, 0);
	if (!w->path || !w->spec || !w->part_types || !w->acc) {
		rc = floe_error_oom(err);
		goto fail;
	}
	for (size_t i = 0; i < spec->n_fields; i++) {
		w->part_types[i] = floe_spec_field_type(spec, i, schema);
		if (!w->part_types[i]) {
			rc = floe_error_set(err, FLOE_EINVAL, "partition field '%s' has no source",
					    spec->fields[i].name);
			goto fail;
		}
	}
	floe_avro_schema *part = floe_iceberg__partition_record(&w->arena, spec, schema, &cache, err);
	floe_avro_schema *es = part ? floe_iceberg__entry_schema(&w->arena, fv, part) : NULL;
	if (!es) {
		rc = err && err->code ? err->code : floe_error_oom(err);
		goto fail;
	}
	if ((rc = floe_avro_schema_finish(es, err)))
		goto fail;
	floe_avro_writer_opts wo = FLOE_AVRO_WRITER_OPTS_INIT;
	wo.codec = codec ? codec : "deflate";
	if ((rc = floe_avro_writer_open(&w->aw, out, es, &wo, err)))
		goto fail;
	out = NULL; /* owned by the Avro writer now */
	/* header keys Java writes; "schema" is the table schema, "partition-spec"
	 * the bare fields array */
	char num[32];
	const char *sj = floe_schema_to_json_str(&w->arena, schema);
	floe_jw jw;
	floe_jw_init(&jw, &hdr, 0);
	floe_spec_write_fields_json(&jw, spec);
	if (!sj || floe_jw_finish(&jw)) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if ((rc = floe_avro_writer_meta_str(w->aw, "schema", sj, err)))
		goto fail;
	snprintf(num, sizeof(num), "%d", schema->schema_id);
	if ((rc = floe_avro_writer_meta_str(w->aw, "schema-id", num, err)) ||
	    (rc = floe_avro_writer_meta_str(w->aw, "partition-spec", floe_buf_cstr(&hdr), err)))
		goto fail;
	snprintf(num, sizeof(num), "%d", spec->spec_id);
	if ((rc = floe_avro_writer_meta_str(w->aw, "partition-spec-id", num, err)))
		goto fail;
	snprintf(num, sizeof(num), "%d", fv);
	if ((rc = floe_avro_writer_meta_str(w->aw, "format-version", num, err)))
		goto fail;
	if (fv >= 2 && (rc = floe_avro_writer_meta_str(w->aw, "content",
						       content == FLOE_MANIFEST_DELETES ? "deletes"
											 : "data",
						       err)))
		goto fail;
	floe_buf_reset(&hdr);
	*out_w = w;
	return FLOE_OK;
fail:
	floe_buf_reset(&hdr);
	if (out)
		floe_output_abort(out);
	floe_manifest_writer_abort(w);
	return floe_error_prefix(err, rc, "manifest '%s': ", path);
}

static void summarise(floe_manifest_writer *w, const floe_partition *p)
{
	for (size_t i = 0; i < w->spec->n_fields && i < p->n; i++) {
		const floe_value *v = &p->values[i];
		summary_acc *s = &w->acc[i];
		if (v->is_null) {
			s->contains_null = true;
			continue;
		}
		if ((v->type == FLOE_T_FLOAT && isnan(v->v.f32)) ||
		    (v->type == FLOE_T_DOUBLE && isnan(v->v.f64))) {
			s->contains_nan = true;
			continue;
		}
		if (!s->has_bounds || floe_value_compare(v, &s->lower) < 0) {
			floe_value c = *v;
			if (floe_value_own(&c, &w->arena) == 0)
				s->lower = c;
		}
		if (!s->has_bounds || floe_value_compare(v, &s->upper) > 0) {
			floe_value c = *v;
			if (floe_value_own(&c, &w->arena) == 0)
				s->upper = c;
		}
		s->has_bounds = true;
	}
}

int floe_manifest_writer_add(floe_manifest_writer *w, int status, int64_t snapshot_id,
			     int64_t sequence_number, int64_t file_sequence_number,
			     const floe_data_file *f, floe_error *err)
{
	floe_buf *b;
	int rc = 0;
	int fv = w->fv;
	if (status != FLOE_ENTRY_ADDED && (snapshot_id < 0 || (fv >= 2 && sequence_number < 0)))
		return floe_error_set(err, FLOE_EINVAL,
				      "existing and deleted entries need explicit snapshot ids and "
				      "sequence numbers ('%s')",
				      f->file_path);
	if (f->partition.n != w->spec->n_fields)
		return floe_error_set(err, FLOE_EINVAL,
				      "'%s' has %zu partition values, the spec has %zu fields",
				      f->file_path, f->partition.n, w->spec->n_fields);
	if ((w->content == FLOE_MANIFEST_DELETES) != (f->content != FLOE_CONTENT_DATA))
		return floe_error_set(err, FLOE_EINVAL,
				      "'%s': data and delete files never share a manifest",
				      f->file_path);
	b = floe_avro_writer_begin(w->aw);
	/* manifest_entry */
	rc = rc ? rc : floe_avro_enc_int(b, status);
	rc = rc ? rc : enc_opt_long(b, snapshot_id >= 0, snapshot_id);
	if (fv >= 2) {
		rc = rc ? rc : enc_opt_long(b, sequence_number >= 0, sequence_number);
		rc = rc ? rc : enc_opt_long(b, file_sequence_number >= 0, file_sequence_number);
	}
	/* data_file r2 */
	if (fv >= 2)
		rc = rc ? rc : floe_avro_enc_int(b, f->content);
	rc = rc ? rc : floe_avro_enc_string(b, f->file_path, strlen(f->file_path));
	rc = rc ? rc : floe_avro_enc_string(b, f->file_format, strlen(f->file_format));
	for (size_t i = 0; i < w->spec->n_fields && !rc; i++) {
		const floe_value *v = &f->partition.values[i];
		if (v->is_null) {
			rc = floe_avro_enc_union(b, 0);
		} else {
			rc = floe_avro_enc_union(b, 1);
			if (!rc && (rc = floe_iceberg__value_to_avro(b, v, w->part_types[i], err))) {
				floe_avro_writer_rollback(w->aw);
				return floe_error_prefix(err, rc, "'%s' partition field '%s': ",
							 f->file_path, w->spec->fields[i].name);
			}
		}
	}
	rc = rc ? rc : floe_avro_enc_long(b, f->record_count);
	rc = rc ? rc : floe_avro_enc_long(b, f->file_size_in_bytes);
	if (fv == 1)
		rc = rc ? rc : floe_avro_enc_long(b, 67108864); /* Java always writes 64 MiB */
	rc = rc ? rc : enc_long_map(b, f->column_sizes, f->n_column_sizes);
	rc = rc ? rc : enc_long_map(b, f->value_counts, f->n_value_counts);
	rc = rc ? rc : enc_long_map(b, f->null_value_counts, f->n_null_value_counts);
	rc = rc ? rc : enc_long_map(b, f->nan_value_counts, f->n_nan_value_counts);
	rc = rc ? rc : enc_bytes_map(b, f->lower_bounds, f->n_lower_bounds);
	rc = rc ? rc : enc_bytes_map(b, f->upper_bounds, f->n_upper_bounds);
	if (!rc) {
		if (f->key_metadata) {
			rc = floe_avro_enc_union(b, 1);
			rc = rc ? rc : floe_avro_enc_bytes(b, f->key_metadata, f->key_metadata_len);
		} else {
			rc = floe_avro_enc_union(b, 0);
		}
	}
	if (!rc) {
		if (f->n_split_offsets) {
			rc = floe_avro_enc_union(b, 1);
			rc = rc ? rc : floe_avro_enc_block_count(b, f->n_split_offsets);
			for (size_t i = 0; i < f->n_split_offsets && !rc; i++)
				rc = floe_avro_enc_long(b, f->split_offsets[i]);
			rc = rc ? rc : floe_avro_enc_block_count(b, 0);
		} else {
			rc = floe_avro_enc_union(b, 0);
		}
	}
	if (fv >= 2 && !rc) {
		if (f->n_equality_ids) {
			rc = floe_avro_enc_union(b, 1);
			rc = rc ? rc : floe_avro_enc_block_count(b, f->n_equality_ids);
			for (size_t i = 0; i < f->n_equality_ids && !rc; i++)
				rc = floe_avro_enc_int(b, f->equality_ids[i]);
			rc = rc ? rc : floe_avro_enc_block_count(b, 0);
		} else {
			rc = floe_avro_enc_union(b, 0);
		}
	}
	rc = rc ? rc : enc_opt_int(b, f->has_sort_order_id, f->sort_order_id);
	if (fv >= 3)
		rc = rc ? rc : enc_opt_long(b, f->first_row_id >= 0, f->first_row_id);
	if (fv >= 2 && !rc) {
		if (f->referenced_data_file) {
			rc = floe_avro_enc_union(b, 1);
			rc = rc ? rc
				: floe_avro_enc_string(b, f->referenced_data_file,
						       strlen(f->referenced_data_file));
		} else {
			rc = floe_avro_enc_union(b, 0);
		}
	}
	if (fv >= 3) {
		rc = rc ? rc : enc_opt_long(b, f->content_offset >= 0, f->content_offset);
		rc = rc ? rc
			: enc_opt_long(b, f->content_size_in_bytes >= 0, f->content_size_in_bytes);
	}
	if (rc) {
		floe_avro_writer_rollback(w->aw);
		return floe_error_oomf(err, "manifest '%s': out of memory", w->path);
	}
	if ((rc = floe_avro_writer_commit(w->aw, err)))
		return floe_error_prefix(err, rc, "manifest '%s': ", w->path);

	/* bookkeeping for the list entry */
	w->entries++;
	switch (status) {
	case FLOE_ENTRY_ADDED:
		w->added_files++;
		w->added_rows += f->record_count;
		break;
	case FLOE_ENTRY_EXISTING:
		w->existing_files++;
		w->existing_rows += f->record_count;
		break;
	default:
		w->deleted_files++;
		w->deleted_rows += f->record_count;
		break;
	}
	if (status != FLOE_ENTRY_DELETED && sequence_number >= 0 &&
	    (w->min_seq < 0 || sequence_number < w->min_seq))
		w->min_seq = sequence_number;
	summarise(w, &f->partition);
	return FLOE_OK;
}

uint64_t floe_manifest_writer_entries(const floe_manifest_writer *w)
{
	return w->entries;
}

uint64_t floe_manifest_writer_size_estimate(const floe_manifest_writer *w)
{
	return floe_avro_writer_size_estimate(w->aw);
}

void floe_manifest_writer_abort(floe_manifest_writer *w)
{
	if (!w)
		return;
	floe_avro_writer_abort(w->aw);
	floe_free(w->path);
	floe_arena_reset(&w->arena);
	floe_free(w);
}

int floe_manifest_writer_close(floe_manifest_writer *w, floe_manifest_file *out, floe_arena *a,
			       floe_error *err)
{
	uint64_t size = 0;
	int rc = floe_avro_writer_close(w->aw, &size, err);
	w->aw = NULL;
	if (rc) {
		floe_error_prefix(err, rc, "manifest '%s': ", w->path);
		goto done;
	}
	memset(out, 0, sizeof(*out));
	out->path = floe_arena_strdup(a, w->path);
	out->length = (int64_t)size;
	out->spec_id = w->spec->spec_id;
	out->content = w->content;
	out->sequence_number = -1;
	/* spec: the least data sequence number of the live entries. An inherited one is
	 * the commit's, the largest there is, so the least explicit one (compaction's,
	 * or the EXISTING entries of a manifest merged on commit) is the least of all;
	 * with none, the list assigns the commit's. Java's producers drop delete files
	 * older than the least over the data manifests: too high a value here would
	 * make them drop deletes that still apply. */
	out->min_sequence_number = w->min_seq;
	out->added_snapshot_id = w->snapshot_id;
	out->added_files_count = w->added_files;
	out->existing_files_count = w->existing_files;
	out->deleted_files_count = w->deleted_files;
	out->added_rows_count = w->added_rows;
	out->existing_rows_count = w->existing_rows;
	out->deleted_rows_count = w->deleted_rows;
	out->first_row_id = -1;
	out->partitions_present = true;
	out->n_partitions = w->spec->n_fields;
	out->partitions = floe_arena_calloc(a, w->spec->n_fields + 1, sizeof(floe_field_summary));
	if (!out->path || !out->partitions) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < w->spec->n_fields; i++) {
		summary_acc *s = &w->acc[i];
		floe_field_summary *fs = &out->partitions[i];
		fs->contains_null = s->contains_null;
		/* Java and PyIceberg write contains_nan for every type (false where no
		 * NaN can be); Java's all_manifests table requires it */
		fs->contains_nan = (int8_t)s->contains_nan;
		if (s->has_bounds) {
			floe_value lo = s->lower, hi = s->upper;
			uint8_t ubuf[2][16];
			if (lo.type == FLOE_T_UUID && lo.v.bin.n == 16 && hi.v.bin.n == 16) {
				/* apache/iceberg#14216: Java prunes manifests with UUID
				 * summaries in signed-long order. Bounds valid in both
				 * orders, or none: as a missing bound says "all null" to
				 * Java, the manifest then has no summaries at all, which
				 * every reader takes as "might match". */
				bool has_l, has_h;
				floe_uuid_bounds_both_orders(lo.v.bin.p, hi.v.bin.p, ubuf[0], ubuf[1],
							     &has_l, &has_h);
				if (!has_l || !has_h) {
					out->partitions_present = false;
					out->n_partitions = 0;
					break;
				}
				lo.v.bin.p = ubuf[0];
				hi.v.bin.p = ubuf[1];
			}
			/* spec: a zero bound covers both zeros (-0.0 below, +0.0 above) */
			if (lo.type == FLOE_T_FLOAT && lo.v.f32 == 0.0f)
				lo.v.f32 = -0.0f;
			if (lo.type == FLOE_T_DOUBLE && lo.v.f64 == 0.0)
				lo.v.f64 = -0.0;
			if (hi.type == FLOE_T_FLOAT && hi.v.f32 == 0.0f)
				hi.v.f32 = 0.0f;
			if (hi.type == FLOE_T_DOUBLE && hi.v.f64 == 0.0)
				hi.v.f64 = 0.0;
			floe_buf lb, ub;
			floe_buf_init(&lb, 0);
			floe_buf_init(&ub, 0);
			if (floe_value_to_bytes(&lb, &lo) || floe_value_to_bytes(&ub, &hi)) {
				floe_buf_reset(&lb);
				floe_buf_reset(&ub);
				rc = floe_error_oom(err);
				goto done;
			}
			fs->has_lower = fs->has_upper = true;
			fs->lower_len = lb.len;
			fs->upper_len = ub.len;
			fs->lower = floe_arena_memdup(a, lb.data ? lb.data : (const uint8_t *)"",
						      lb.len ? lb.len : 1);
			fs->upper = floe_arena_memdup(a, ub.data ? ub.data : (const uint8_t *)"",
						      ub.len ? ub.len : 1);
			floe_buf_reset(&lb);
			floe_buf_reset(&ub);
			if (!fs->lower || !fs->upper) {
				rc = floe_error_oom(err);
				goto done;
			}
		}
	}
done:
	floe_free(w->path);
	floe_arena_reset(&w->arena);
	floe_free(w);
	return rc;
}

/* ---- manifest lists ------------------------------------------------------------- */

static int enc_summary(floe_buf *b, const floe_manifest_file *mf)
{
	int rc;
	if (!mf->partitions_present)
		return floe_avro_enc_union(b, 0);
	/* an unpartitioned manifest gets an empty array, never null (Redshift) */
	if ((rc = floe_avro_enc_union(b, 1)))
		return rc;
	if (mf->n_partitions && (rc = floe_avro_enc_block_count(b, mf->n_partitions)))
		return rc;
	for (size_t i = 0; i < mf->n_partitions; i++) {
		const floe_field_summary *s = &mf->partitions[i];
		if ((rc = floe_avro_enc_bool(b, s->contains_null)))
			return rc;
		if (s->contains_nan < 0)
			rc = floe_avro_enc_union(b, 0);
		else if (!(rc = floe_avro_enc_union(b, 1)))
			rc = floe_avro_enc_bool(b, s->contains_nan == 1);
		if (rc)
			return rc;
		if (s->has_lower) {
			if ((rc = floe_avro_enc_union(b, 1)) ||
			    (rc = floe_avro_enc_bytes(b, s->lower, s->lower_len)))
				return rc;
		} else if ((rc = floe_avro_enc_union(b, 0))) {
			return rc;
		}
		if (s->has_upper) {
			if ((rc = floe_avro_enc_union(b, 1)) ||
			    (rc = floe_avro_enc_bytes(b, s->upper, s->upper_len)))
				return rc;
		} else if ((rc = floe_avro_enc_union(b, 0))) {
			return rc;
		}
	}
	return floe_avro_enc_block_count(b, 0);
}

static int enc_list_entry(floe_buf *b, int fv, const floe_manifest_file *mf)
{
	int rc = 0;
	rc = rc ? rc : floe_avro_enc_string(b, mf->path, strlen(mf->path));
	rc = rc ? rc : floe_avro_enc_long(b, mf->length);
	rc = rc ? rc : floe_avro_enc_int(b, mf->spec_id);
	if (fv >= 2) {
		rc = rc ? rc : floe_avro_enc_int(b, mf->content);
		rc = rc ? rc : floe_avro_enc_long(b, mf->sequence_number);
		rc = rc ? rc : floe_avro_enc_long(b, mf->min_sequence_number);
	}
	rc = rc ? rc : floe_avro_enc_long(b, mf->added_snapshot_id);
	if (fv == 1) {
		rc = rc ? rc : enc_opt_int(b, mf->added_files_count >= 0, mf->added_files_count);
		rc = rc ? rc : enc_opt_int(b, mf->existing_files_count >= 0, mf->existing_files_count);
		rc = rc ? rc : enc_opt_int(b, mf->deleted_files_count >= 0, mf->deleted_files_count);
		rc = rc ? rc : enc_summary(b, mf);
		rc = rc ? rc : enc_opt_long(b, mf->added_rows_count >= 0, mf->added_rows_count);
		rc = rc ? rc : enc_opt_long(b, mf->existing_rows_count >= 0, mf->existing_rows_count);
		rc = rc ? rc : enc_opt_long(b, mf->deleted_rows_count >= 0, mf->deleted_rows_count);
	} else {
		rc = rc ? rc : floe_avro_enc_int(b, mf->added_files_count > 0 ? mf->added_files_count : 0);
		rc = rc ? rc
			: floe_avro_enc_int(b, mf->existing_files_count > 0 ? mf->existing_files_count
									     : 0);
		rc = rc ? rc
			: floe_avro_enc_int(b,
					    mf->deleted_files_count > 0 ? mf->deleted_files_count : 0);
		rc = rc ? rc : floe_avro_enc_long(b, mf->added_rows_count > 0 ? mf->added_rows_count : 0);
		rc = rc ? rc
			: floe_avro_enc_long(b, mf->existing_rows_count > 0 ? mf->existing_rows_count
									     : 0);
		rc = rc ? rc
			: floe_avro_enc_long(b,
					     mf->deleted_rows_count > 0 ? mf->deleted_rows_count : 0);
		rc = rc ? rc : enc_summary(b, mf);
	}
	if (!rc) {
		if (mf->key_metadata) {
			rc = floe_avro_enc_union(b, 1);
			rc = rc ? rc : floe_avro_enc_bytes(b, mf->key_metadata, mf->key_metadata_len);
		} else {
			rc = floe_avro_enc_union(b, 0);
		}
	}
	if (fv >= 3)
		rc = rc ? rc : enc_opt_long(b, mf->first_row_id >= 0, mf->first_row_id);
	return rc;
}

int floe_manifest_list_write(floe_output *out, int fv, int64_t snapshot_id, int64_t parent_id,
			     int64_t seq, int64_t first_row_id, floe_manifest_file *manifests,
			     size_t n, int64_t *next_row_id, int64_t *length, floe_error *err)
{
	floe_arena a;
	floe_avro_writer *aw = NULL;
	char num[32];
	int rc;
	char name[512]; /* out (and its name) is gone after close */
	snprintf(name, sizeof(name), "%s", out->name ? out->name : "manifest list");
	floe_arena_init(&a, 16384);
	floe_avro_schema *s = floe_iceberg__list_schema(&a, fv);
	if (!s || (rc = floe_avro_schema_finish(s, err))) {
		floe_output_abort(out);
		floe_arena_reset(&a);
		return floe_error_oom(err);
	}
	floe_avro_writer_opts wo = FLOE_AVRO_WRITER_OPTS_INIT;
	wo.codec = "deflate";
	if ((rc = floe_avro_writer_open(&aw, out, s, &wo, err))) {
		floe_output_abort(out);
		floe_arena_reset(&a);
		return floe_error_prefix(err, rc, "%s: ", name);
	}
	snprintf(num, sizeof(num), "%lld", (long long)snapshot_id);
	rc = floe_avro_writer_meta_str(aw, "snapshot-id", num, err);
	if (parent_id >= 0)
		snprintf(num, sizeof(num), "%lld", (long long)parent_id);
	else
		snprintf(num, sizeof(num), "null");
	rc = rc ? rc : floe_avro_writer_meta_str(aw, "parent-snapshot-id", num, err);
	if (fv >= 2) {
		snprintf(num, sizeof(num), "%lld", (long long)seq);
		rc = rc ? rc : floe_avro_writer_meta_str(aw, "sequence-number", num, err);
	}
	if (fv >= 3) {
		snprintf(num, sizeof(num), "%lld", (long long)first_row_id);
		rc = rc ? rc : floe_avro_writer_meta_str(aw, "first-row-id", num, err);
	}
	snprintf(num, sizeof(num), "%d", fv);
	rc = rc ? rc : floe_avro_writer_meta_str(aw, "format-version", num, err);

	int64_t row = first_row_id;
	for (size_t i = 0; i < n && !rc; i++) {
		floe_manifest_file *mf = &manifests[i];
		if (fv >= 2) {
			if (mf->sequence_number < 0)
				mf->sequence_number = seq;
			if (mf->min_sequence_number < 0)
				mf->min_sequence_number = seq;
		} else {
			mf->sequence_number = 0;
			mf->min_sequence_number = 0;
		}
		/* spec (v3): data manifests get first_row_id in list order */
		if (fv >= 3 && mf->content == FLOE_MANIFEST_DATA && mf->first_row_id < 0) {
			mf->first_row_id = row;
			row += (mf->added_rows_count > 0 ? mf->added_rows_count : 0) +
			       (mf->existing_rows_count > 0 ? mf->existing_rows_count : 0);
		}
		floe_buf *b = floe_avro_writer_begin(aw);
		if (enc_list_entry(b, fv, mf)) {
			floe_avro_writer_rollback(aw);
			rc = floe_error_oom(err);
			break;
		}
		rc = floe_avro_writer_commit(aw, err);
	}
	if (rc) {
		floe_avro_writer_abort(aw);
		floe_arena_reset(&a);
		return floe_error_prefix(err, rc, "%s: ", name);
	}
	uint64_t size = 0;
	rc = floe_avro_writer_close(aw, &size, err);
	floe_arena_reset(&a);
	if (rc)
		return floe_error_prefix(err, rc, "%s: ", name);
	if (next_row_id)
		*next_row_id = row;
	if (length)
		*length = (int64_t)size;
	return FLOE_OK;
}

static int64_t *dup64(floe_arena *a, const int64_t *p, size_t n)
{
	return n ? floe_arena_memdup(a, p, n * sizeof(*p)) : NULL;
}

static int copy_pairs(floe_arena *a, floe_id_long **dst, const floe_id_long *src, size_t n)
{
	*dst = n ? floe_arena_memdup(a, src, n * sizeof(*src)) : NULL;
	return n && !*dst ? FLOE_ENOMEM : FLOE_OK;
}

static int copy_bounds(floe_arena *a, floe_id_bytes **dst, const floe_id_bytes *src, size_t n)
{
	if (!n) {
		*dst = NULL;
		return FLOE_OK;
	}
	*dst = floe_arena_memdup(a, src, n * sizeof(*src));
	if (!*dst)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		(*dst)[i].p = floe_arena_memdup(a, src[i].p ? src[i].p : (const uint8_t *)"",
						src[i].n ? src[i].n : 1);
		if (!(*dst)[i].p)
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

int floe_data_file_copy(floe_data_file *dst, floe_arena *a, const floe_data_file *src)
{
	*dst = *src;
	if (!(dst->file_path = floe_arena_strdup(a, src->file_path)) ||
	    !(dst->file_format = floe_arena_strdup(a, src->file_format)))
		return FLOE_ENOMEM;
	dst->partition.values =
		src->partition.n ? floe_arena_memdup(a, src->partition.values,
						     src->partition.n * sizeof(floe_value))
				 : floe_arena_calloc(a, 1, sizeof(floe_value));
	if (!dst->partition.values)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < src->partition.n; i++)
		if (floe_value_own(&dst->partition.values[i], a))
			return FLOE_ENOMEM;
	if (copy_pairs(a, &dst->column_sizes, src->column_sizes, src->n_column_sizes) ||
	    copy_pairs(a, &dst->value_counts, src->value_counts, src->n_value_counts) ||
	    copy_pairs(a, &dst->null_value_counts, src->null_value_counts,
		       src->n_null_value_counts) ||
	    copy_pairs(a, &dst->nan_value_counts, src->nan_value_counts, src->n_nan_value_counts) ||
	    copy_bounds(a, &dst->lower_bounds, src->lower_bounds, src->n_lower_bounds) ||
	    copy_bounds(a, &dst->upper_bounds, src->upper_bounds, src->n_upper_bounds))
		return FLOE_ENOMEM;
	if (src->key_metadata &&
	    !(dst->key_metadata = floe_arena_memdup(a, src->key_metadata, src->key_metadata_len)))
		return FLOE_ENOMEM;
	if (src->n_split_offsets &&
	    !(dst->split_offsets = dup64(a, src->split_offsets, src->n_split_offsets)))
		return FLOE_ENOMEM;
	if (src->n_equality_ids &&
	    !(dst->equality_ids = floe_arena_memdup(a, src->equality_ids,
						    src->n_equality_ids * sizeof(int32_t))))
		return FLOE_ENOMEM;
	if (src->referenced_data_file &&
	    !(dst->referenced_data_file = floe_arena_strdup(a, src->referenced_data_file)))
		return FLOE_ENOMEM;
	return FLOE_OK;
}
