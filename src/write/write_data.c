/*
 * write_data.c — one Parquet data file of one partition, and its manifest
 * entry: exact size, record count, split offsets and Iceberg metrics made
 * from the Parquet writer's per-column results.
 *
 * DESIGN: what depends only on the schema (the Parquet schema with ids, the
 * "iceberg.schema" footer, which batch fields are written, per leaf its
 * field id, type and metrics mode) is a floe_write__format, built once per
 * task writer and shared by its files. Batches are handed to the Parquet
 * writer as they come; when the schema has unknown fields, a projection
 * made of a few borrowed ArrowArray/ArrowSchema headers (no data copied)
 * drops them first.
 *
 * Metrics (spec: "Metrics"; ../shared/iceberg-notes.md 5.2): per leaf not
 * inside a list or map, by field id, under floe_metrics_mode_for: none =
 * nothing; counts = column size, value count (nulls included), null count,
 * NaN count (float/double); truncate(N)/full add lower/upper bounds from the
 * writer's own min/max (NaN never a bound, -0.0 < +0.0), converted to the
 * column's Iceberg type in the binary single-value form, strings truncated
 * on code points (no upper bound when it cannot be incremented) — the same
 * conversion add-files applies to footers (iceberg/metrics.h).
 */
#include <string.h>

#include "iceberg/arrow_schema.h"
#include "iceberg/metrics.h"
#include "util/alloc.h"
#include "write/write_int.h"

typedef struct leaf_info {
	int32_t field_id;
	const floe_type *type;
	floe_metrics_mode mode;
	bool metrics; /* false inside lists/maps or without a known field id */
} leaf_info;

struct floe_write__format {
	const floe_metadata *m;
	const floe_schema *schema;
	floe_parquet_schema *pq;
	char *schema_json;
	bool prune; /* the batch holds fields that are not written */
	leaf_info *leaves;
	/* what the files are (floe_write__format_opts) */
	int content;
	int32_t *eq_ids;
	size_t n_eq_ids;
	bool has_sort_order_id;
	int32_t sort_order_id;
	char *delete_type;      /* footer "delete-type" */
	char *delete_field_ids; /* footer "delete-field-ids" */
};

struct floe_data_writer {
	floe_write__format *own_fmt; /* when opened on its own */
	const floe_write__format *fmt;
	floe_fileio *io;
	floe_output *out;
	floe_parquet_writer *pw;
	char *path;
	int32_t spec_id;
	floe_partition partition;
	floe_arena arena;   /* path, partition */
	floe_arena scratch; /* projection headers of one write */
	floe_parquet_writer_opts opts;
	int64_t rows;
	/* position deletes: the data file every row so far targets */
	char *ref_path;
	size_t ref_len;
	bool ref_multi;
};

/* ---- the format ------------------------------------------------------------------ */

static bool needs_prune(const floe_type *t)
{
	switch (t->id) {
	case FLOE_T_STRUCT:
		for (size_t i = 0; i < t->n_fields; i++)
			if (!floe_iceberg_type_written(t->fields[i].type) ||
			    needs_prune(t->fields[i].type))
				return true;
		return false;
	case FLOE_T_LIST: return needs_prune(t->element);
	case FLOE_T_MAP: return needs_prune(t->value);
	default: return false;
	}
}

void floe_write__format_free(floe_write__format *f)
{
	if (!f)
		return;
	floe_parquet_schema_free(f->pq);
	floe_free(f->schema_json);
	floe_free(f->leaves);
	floe_free(f->eq_ids);
	floe_free(f->delete_type);
	floe_free(f->delete_field_ids);
	floe_free(f);
}

int floe_write__format_new(floe_write__format **out, const floe_metadata *m,
			   const floe_schema *schema, floe_error *err)
{
	static const floe_write__format_opts dflt = {NULL, NULL, FLOE_CONTENT_DATA, NULL, 0,
						     false, 0, NULL};
	return floe_write__format_new_opts(out, m, schema, &dflt, err);
}

/* "1, 2, 3" as Java's delete writers record the equality field ids. */
static char *id_list(const int32_t *ids, size_t n)
{
	floe_buf b;
	char *s = NULL;
	floe_buf_init(&b, 0);
	for (size_t i = 0; i < n; i++)
		if (floe_buf_printf(&b, "%s%d", i ? ", " : "", ids[i]))
			goto done;
	s = floe_strdup(floe_buf_cstr(&b));
done:
	floe_buf_reset(&b);
	return s;
}

int floe_write__format_new_opts(floe_write__format **out, const floe_metadata *m,
				const floe_schema *schema, const floe_write__format_opts *o,
				floe_error *err)
{
	floe_write__format *f = floe_calloc(1, sizeof(*f));
	const floe_schema *metrics_schema = o->metrics_schema ? o->metrics_schema : schema;
	floe_arena tmp;
	const char *json;
	int rc;
	*out = NULL;
	if (!f)
		return floe_error_oom(err);
	f->m = m;
	f->schema = schema;
	f->content = o->content;
	f->has_sort_order_id = o->has_sort_order_id;
	f->sort_order_id = o->sort_order_id;
	if (o->n_equality_ids) {
		f->eq_ids = floe_memdup(o->equality_ids, o->n_equality_ids * sizeof(int32_t));
		f->n_eq_ids = o->n_equality_ids;
		f->delete_field_ids = id_list(o->equality_ids, o->n_equality_ids);
		if (!f->eq_ids || !f->delete_field_ids) {
			rc = floe_error_oom(err);
			goto fail;
		}
	}
	if (o->delete_type && !(f->delete_type = floe_strdup(o->delete_type))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	f->prune = needs_prune(schema->root);
	if ((rc = floe_iceberg_parquet_schema(&f->pq, schema, err)))
		goto fail;
	floe_arena_init(&tmp, 0);
	json = floe_schema_to_json_str(&tmp, schema);
	f->schema_json = json ? floe_strdup(json) : NULL;
	floe_arena_reset(&tmp);
	f->leaves = floe_calloc((size_t)f->pq->n_leaves + 1, sizeof(*f->leaves));
	if (!f->schema_json || !f->leaves) {
		rc = floe_error_oom(err);
		goto fail;
	}
	for (int i = 0; i < f->pq->n_leaves; i++) {
		const floe_parquet_node *leaf = f->pq->leaves[i];
		leaf_info *li = &f->leaves[i];
		const floe_schema_entry *e =
			leaf->has_field_id ? floe_schema_find(schema, leaf->field_id) : NULL;
		if (!e || e->in_repeated || leaf->rep_level > 0 || !floe_type_is_primitive(e->type))
			continue; /* Java writes no metrics inside lists and maps */
		li->field_id = e->id;
		li->type = e->type;
		li->mode = o->mode ? *o->mode : floe_metrics_mode_for(m, metrics_schema, e->id);
		li->metrics = true;
	}
	*out = f;
	return FLOE_OK;
fail:
	floe_write__format_free(f);
	return rc;
}

/* ---- projection: dropping fields that are not written ------------------------------ */

static void hdr_release_schema(struct ArrowSchema *s)
{
	s->release = NULL;
}

static void hdr_release_array(struct ArrowArray *a)
{
	a->release = NULL;
}

static int copy_headers(floe_arena *ar, const struct ArrowSchema *s, const struct ArrowArray *a,
			int64_t n_children, struct ArrowSchema **os, struct ArrowArray **oa)
{
	struct ArrowSchema *cs = floe_arena_alloc(ar, sizeof(*cs));
	struct ArrowArray *ca = floe_arena_alloc(ar, sizeof(*ca));
	if (!cs || !ca)
		return FLOE_ENOMEM;
	*cs = *s;
	*ca = *a;
	cs->release = hdr_release_schema;
	cs->private_data = NULL;
	ca->release = hdr_release_array;
	ca->private_data = NULL;
	cs->n_children = ca->n_children = n_children;
	cs->children = floe_arena_calloc(ar, (size_t)n_children + 1, sizeof(*cs->children));
	ca->children = floe_arena_calloc(ar, (size_t)n_children + 1, sizeof(*ca->children));
	if (!cs->children || !ca->children)
		return FLOE_ENOMEM;
	*os = cs;
	*oa = ca;
	return FLOE_OK;
}

static int project(floe_arena *ar, const floe_type *t, const char *name,
		   const struct ArrowSchema *s, const struct ArrowArray *a,
		   struct ArrowSchema **os, struct ArrowArray **oa, int depth, floe_error *err)
{
	int rc;
	if (!needs_prune(t)) {
		*os = (struct ArrowSchema *)s;
		*oa = (struct ArrowArray *)a;
		return FLOE_OK;
	}
	if (depth > 64)
		return floe_error_set(err, FLOE_EINVAL, "column '%s': nested too deeply", name);
	switch (t->id) {
	case FLOE_T_STRUCT: {
		int64_t k = 0;
		if (s->n_children != (int64_t)t->n_fields || a->n_children != (int64_t)t->n_fields)
			return floe_error_set(err, FLOE_EINVAL,
					      "column '%s': the batch has %lld fields, the schema %zu",
					      name, (long long)s->n_children, t->n_fields);
		for (size_t i = 0; i < t->n_fields; i++)
			k += floe_iceberg_type_written(t->fields[i].type);
		if ((rc = copy_headers(ar, s, a, k, os, oa)))
			return floe_error_set(err, rc, "out of memory");
		k = 0;
		for (size_t i = 0; i < t->n_fields; i++) {
			const floe_field *f = &t->fields[i];
			if (!floe_iceberg_type_written(f->type))
				continue;
			if ((rc = project(ar, f->type, f->name, s->children[i], a->children[i],
					  &(*os)->children[k], &(*oa)->children[k], depth + 1, err)))
				return rc;
			k++;
		}
		return FLOE_OK;
	}
	case FLOE_T_LIST:
	case FLOE_T_MAP: {
		if (s->n_children != 1 || a->n_children != 1)
			return floe_error_set(err, FLOE_EINVAL, "column '%s': a list or map needs one "
					      "child", name);
		if ((rc = copy_headers(ar, s, a, 1, os, oa)))
			return floe_error_set(err, rc, "out of memory");
		if (t->id == FLOE_T_LIST)
			return project(ar, t->element, name, s->children[0], a->children[0],
				       &(*os)->children[0], &(*oa)->children[0], depth + 1, err);
		/* map: entries struct {key, value} */
		const struct ArrowSchema *es = s->children[0];
		const struct ArrowArray *ea = a->children[0];
		if (es->n_children != 2 || ea->n_children != 2)
			return floe_error_set(err, FLOE_EINVAL, "column '%s': map entries need a key "
					      "and a value", name);
		if ((rc = copy_headers(ar, es, ea, 2, &(*os)->children[0], &(*oa)->children[0])))
			return floe_error_set(err, rc, "out of memory");
		(*os)->children[0]->children[0] = es->children[0];
		(*oa)->children[0]->children[0] = ea->children[0];
		return project(ar, t->value, name, es->children[1], ea->children[1],
			       &(*os)->children[0]->children[1], &(*oa)->children[0]->children[1],
			       depth + 1, err);
	}
	default: return FLOE_OK;
	}
}

/* ---- the data writer ------------------------------------------------------------- */

static int copy_partition(floe_partition *dst, floe_arena *a, const floe_partition *src)
{
	dst->n = src ? src->n : 0;
	dst->values = floe_arena_calloc(a, dst->n + 1, sizeof(floe_value));
	if (!dst->values)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < dst->n; i++) {
		dst->values[i] = src->values[i];
		if (floe_value_own(&dst->values[i], a))
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

int floe_write__data_writer_open(floe_data_writer **out, floe_fileio *io, const char *path,
				 const floe_write__format *fmt, int32_t spec_id,
				 const floe_partition *partition,
				 const floe_parquet_writer_opts *opts, floe_error *err)
{
	floe_data_writer *w = floe_calloc(1, sizeof(*w));
	int rc;
	*out = NULL;
	if (!w)
		return floe_error_oom(err);
	floe_arena_init(&w->arena, 1024);
	floe_arena_init(&w->scratch, 4096);
	w->io = io;
	w->fmt = fmt;
	w->spec_id = spec_id;
	w->opts = *opts;
	w->path = floe_arena_strdup(&w->arena, path);
	if (!w->path || copy_partition(&w->partition, &w->arena, partition)) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if ((rc = floe_io_create(io, path, false, &w->out, err)))
		goto fail;
	if ((rc = floe_parquet_writer_new(&w->pw, w->out, fmt->pq, &w->opts, err)) ||
	    (rc = floe_parquet_writer_set_kv(w->pw, "iceberg.schema", fmt->schema_json, err)))
		goto fail;
	/* Java's delete writers: Parquet.DeleteWriteBuilder's metadata */
	if (fmt->delete_type &&
	    (rc = floe_parquet_writer_set_kv(w->pw, "delete-type", fmt->delete_type, err)))
		goto fail;
	if (fmt->delete_field_ids &&
	    (rc = floe_parquet_writer_set_kv(w->pw, "delete-field-ids", fmt->delete_field_ids, err)))
		goto fail;
	*out = w;
	return FLOE_OK;
fail:
	floe_error_prefix(err, rc, "data file '%s': ", path);
	floe_data_writer_abort(w);
	return rc;
}

int floe_data_writer_open(floe_data_writer **out, floe_fileio *io, const char *path,
			  const floe_metadata *m, const floe_schema *schema,
			  const floe_partition_spec *spec, const floe_partition *partition,
			  const floe_write_config *cfg, floe_parquet_budget *budget,
			  floe_error *err)
{
	floe_write__format *fmt;
	floe_parquet_writer_opts opts = cfg->parquet;
	int rc;
	*out = NULL;
	if (spec && partition && partition->n != spec->n_fields)
		return floe_error_set(err, FLOE_EINVAL,
				      "data file '%s': a partition of %zu values for a spec of %zu "
				      "fields",
				      path, partition->n, spec->n_fields);
	if ((rc = floe_write__format_new(&fmt, m, schema, err)))
		return floe_error_prefix(err, rc, "data file '%s': ", path);
	if (budget)
		opts.budget = budget;
	if ((rc = floe_write__data_writer_open(out, io, path, fmt, spec ? spec->spec_id : 0,
					       partition, &opts, err))) {
		floe_write__format_free(fmt);
		return rc;
	}
	(*out)->own_fmt = fmt;
	return FLOE_OK;
}

/* Position deletes: follow which data files the rows target (the first
 * column, file_path), for referenced_data_file and Java's metrics rule. */
static int track_paths(floe_data_writer *w, const struct ArrowArray *batch,
		       const struct ArrowSchema *schema, floe_error *err)
{
	floe_arrow_view pv, v;
	int rc;
	if (w->ref_multi || batch->length == 0)
		return FLOE_OK;
	if (schema->n_children < 1 || batch->n_children < 1)
		return floe_error_set(err, FLOE_EINVAL, "a position delete batch needs file_path");
	if ((rc = floe_arrow_view_init(&pv, schema, batch, err)) ||
	    (rc = floe_arrow_view_child(&v, &pv, schema->children[0], batch->children[0], err)))
		return rc;
	if (!v.off32 && !v.off64)
		return floe_error_set(err, FLOE_EINVAL, "file_path must be a string column");
	for (int64_t i = 0; i < batch->length; i++) {
		size_t n;
		const uint8_t *p;
		if (!floe_arrow_view_valid(&v, i))
			return floe_error_set(err, FLOE_EINVAL, "file_path is null at row %lld",
					      (long long)i);
		p = floe_arrow_view_bytes(&v, i, &n);
		if (!w->ref_path) {
			w->ref_path = floe_arena_strndup(&w->arena, (const char *)p, n);
			if (!w->ref_path)
				return floe_error_oom(err);
			w->ref_len = n;
		} else if (n != w->ref_len || memcmp(p, w->ref_path, n) != 0) {
			w->ref_multi = true;
			return FLOE_OK;
		}
	}
	return FLOE_OK;
}

int floe_data_writer_write(floe_data_writer *w, const struct ArrowArray *batch,
			   const struct ArrowSchema *schema, floe_error *err)
{
	struct ArrowSchema *ps = (struct ArrowSchema *)schema;
	struct ArrowArray *pa = (struct ArrowArray *)batch;
	int rc;
	if (w->fmt->content == FLOE_CONTENT_POSITION_DELETES &&
	    (rc = track_paths(w, batch, schema, err)))
		return floe_error_prefix(err, rc, "delete file '%s': ", w->path);
	if (w->fmt->prune) {
		floe_arena_reset(&w->scratch);
		if ((rc = project(&w->scratch, w->fmt->schema->root, "$", schema, batch, &ps, &pa,
				  0, err)))
			return floe_error_prefix(err, rc, "data file '%s': ", w->path);
	}
	rc = floe_parquet_writer_write(w->pw, pa, ps, err);
	if (rc)
		return floe_error_prefix(err, rc, "data file '%s': ", w->path);
	w->rows += batch->length;
	return FLOE_OK;
}

int64_t floe_data_writer_size(const floe_data_writer *w)
{
	return floe_parquet_writer_estimated_size(w->pw);
}

void floe_data_writer_size_parts(const floe_data_writer *w, int64_t *exact, int64_t *open)
{
	floe_parquet_writer_size_parts(w->pw, exact, open);
}

int64_t floe_data_writer_rows(const floe_data_writer *w)
{
	return w->rows;
}

size_t floe_data_writer_buffered(const floe_data_writer *w)
{
	return floe_parquet_writer_buffered(w->pw);
}

int floe_data_writer_flush(floe_data_writer *w, floe_error *err)
{
	int rc = floe_parquet_writer_flush_row_group(w->pw, err);
	return floe_error_prefix(err, rc, "data file '%s': ", w->path);
}

const floe_parquet_writer *floe_data_writer_parquet(const floe_data_writer *w)
{
	return w->pw;
}

const char *floe_data_writer_path(const floe_data_writer *w)
{
	return w->path;
}

static void free_writer(floe_data_writer *w)
{
	floe_parquet_writer_free(w->pw);
	floe_write__format_free(w->own_fmt);
	floe_arena_reset(&w->arena);
	floe_arena_reset(&w->scratch);
	floe_free(w);
}

void floe_data_writer_abort(floe_data_writer *w)
{
	if (!w)
		return;
	floe_output_abort(w->out);
	free_writer(w);
}

/* Per-column metrics from the writer's results. */
static int add_metrics(floe_data_file *f, floe_arena *a, const floe_write__format *fmt,
		       const floe_parquet_file_result *res)
{
	size_t n = res->n_columns + 1;
	f->column_sizes = floe_arena_calloc(a, n, sizeof(floe_id_long));
	f->value_counts = floe_arena_calloc(a, n, sizeof(floe_id_long));
	f->null_value_counts = floe_arena_calloc(a, n, sizeof(floe_id_long));
	f->nan_value_counts = floe_arena_calloc(a, n, sizeof(floe_id_long));
	f->lower_bounds = floe_arena_calloc(a, n, sizeof(floe_id_bytes));
	f->upper_bounds = floe_arena_calloc(a, n, sizeof(floe_id_bytes));
	if (!f->column_sizes || !f->value_counts || !f->null_value_counts ||
	    !f->nan_value_counts || !f->lower_bounds || !f->upper_bounds)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < res->n_columns; i++) {
		const floe_parquet_column_result *c = &res->columns[i];
		const leaf_info *li = &fmt->leaves[c->leaf->leaf_index];
		int32_t id = li->field_id;
		int rc;
		if (!li->metrics || li->mode.kind == FLOE_METRICS_NONE)
			continue;
		f->column_sizes[f->n_column_sizes++] = (floe_id_long){id, c->compressed_size};
		f->value_counts[f->n_value_counts++] = (floe_id_long){id, c->value_count};
		f->null_value_counts[f->n_null_value_counts++] = (floe_id_long){id, c->null_count};
		if (li->type->id == FLOE_T_FLOAT || li->type->id == FLOE_T_DOUBLE)
			f->nan_value_counts[f->n_nan_value_counts++] = (floe_id_long){id, c->nan_count};
		if (li->mode.kind == FLOE_METRICS_COUNTS)
			continue;
		floe_value lo, hi;
		bool has_lo = c->has_min && floe_parquet_stat_value(&lo, c->leaf, li->type, c->min.p,
								   c->min.n);
		bool has_hi = c->has_max && floe_parquet_stat_value(&hi, c->leaf, li->type, c->max.p,
								   c->max.n);
		if ((rc = floe_metrics_bounds(f->lower_bounds, &f->n_lower_bounds, f->upper_bounds,
					      &f->n_upper_bounds, a, id, has_lo ? &lo : NULL,
					      has_hi ? &hi : NULL, li->mode)))
			return rc;
	}
	return FLOE_OK;
}

/* Drop the entries of column id from a metric list. */
static void drop_long(floe_id_long *v, size_t *n, int32_t id)
{
	size_t k = 0;
	for (size_t i = 0; i < *n; i++)
		if (v[i].id != id)
			v[k++] = v[i];
	*n = k;
}

static void drop_bytes(floe_id_bytes *v, size_t *n, int32_t id)
{
	size_t k = 0;
	for (size_t i = 0; i < *n; i++)
		if (v[i].id != id)
			v[k++] = v[i];
	*n = k;
}

/*
 * The delete-file fields of the entry. Position deletes as Java's
 * PositionDeleteWriter: no value/null/NaN counts for file_path and pos
 * (MetricsUtil.copyWithoutFieldCounts), and no bounds for them either when
 * the rows target several data files (copyWithoutFieldCountsAndBounds);
 * referenced_data_file when they target one (Java derives the same from
 * equal file_path bounds, ContentFileUtil.referencedDataFile).
 */
static int set_delete_fields(floe_data_file *out, floe_arena *a, const floe_data_writer *w)
{
	const floe_write__format *f = w->fmt;
	out->content = f->content;
	if (f->has_sort_order_id) {
		out->has_sort_order_id = true;
		out->sort_order_id = f->sort_order_id;
	}
	if (f->content == FLOE_CONTENT_EQUALITY_DELETES) {
		out->equality_ids = floe_arena_memdup(a, f->eq_ids, f->n_eq_ids * sizeof(int32_t));
		if (!out->equality_ids)
			return FLOE_ENOMEM;
		out->n_equality_ids = f->n_eq_ids;
		return FLOE_OK;
	}
	static const int32_t ids[] = {FLOE_FIELD_ID_DELETE_FILE_PATH, FLOE_FIELD_ID_DELETE_POS};
	for (size_t i = 0; i < 2; i++) {
		drop_long(out->value_counts, &out->n_value_counts, ids[i]);
		drop_long(out->null_value_counts, &out->n_null_value_counts, ids[i]);
		drop_long(out->nan_value_counts, &out->n_nan_value_counts, ids[i]);
		if (w->ref_multi) {
			drop_bytes(out->lower_bounds, &out->n_lower_bounds, ids[i]);
			drop_bytes(out->upper_bounds, &out->n_upper_bounds, ids[i]);
		}
	}
	if (w->ref_path && !w->ref_multi) {
		out->referenced_data_file = floe_arena_strndup(a, w->ref_path, w->ref_len);
		if (!out->referenced_data_file)
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

int floe_data_writer_close(floe_data_writer *w, floe_data_file *out, floe_arena *a,
			   floe_error *err)
{
	const floe_parquet_file_result *res = NULL;
	floe_output *o = w->out;
	int rc;
	floe_data_file_init(out);
	if ((rc = floe_parquet_writer_close(w->pw, &res, err))) {
		floe_data_writer_abort(w);
		return rc;
	}
	w->out = NULL;
	/* publish: visible from here on, or not at all */
	if ((rc = floe_output_close(o, err)))
		goto done;
	out->content = FLOE_CONTENT_DATA;
	out->file_path = floe_arena_strdup(a, w->path);
	out->file_format = "PARQUET";
	out->spec_id = w->spec_id;
	out->record_count = res->record_count;
	out->file_size_in_bytes = res->file_size;
	if (!out->file_path || copy_partition(&out->partition, a, &w->partition))
		goto nomem;
	if (res->n_row_groups) {
		out->split_offsets = floe_arena_memdup(a, res->split_offsets,
						       res->n_row_groups * sizeof(int64_t));
		if (!out->split_offsets)
			goto nomem;
		out->n_split_offsets = res->n_row_groups;
	}
	if (add_metrics(out, a, w->fmt, res))
		goto nomem;
	if (w->fmt->content != FLOE_CONTENT_DATA && set_delete_fields(out, a, w))
		goto nomem;
	rc = FLOE_OK;
	goto done;
nomem:
	/* the file is published but its entry could not be made: the caller
	 * cannot commit it, so take it back */
	rc = floe_error_oom(err);
	floe_io_remove_quiet(w->io, w->path);
done:
	if (rc)
		floe_error_prefix(err, rc, "data file '%s': ", w->path);
	free_writer(w);
	return rc;
}

/* ---- data files as rolling-file operations ------------------------------------------ */

static int ops_open(void **out, void *factory, const char *path, const floe_partition *partition,
		    floe_error *err)
{
	const floe_write__data_factory *f = factory;
	return floe_write__data_writer_open((floe_data_writer **)out, f->io, path, f->fmt,
					    f->spec_id, partition, &f->opts, err);
}

static int ops_write(void *w, const struct ArrowArray *batch, const struct ArrowSchema *schema,
		     floe_error *err)
{
	return floe_data_writer_write(w, batch, schema, err);
}

static int64_t ops_size(const void *w)
{
	return floe_data_writer_size(w);
}

static void ops_size_parts(const void *w, int64_t *exact, int64_t *open)
{
	floe_data_writer_size_parts(w, exact, open);
}

static int64_t ops_written(const void *w)
{
	return (int64_t)((const floe_data_writer *)w)->out->pos;
}

static int64_t ops_rows(const void *w)
{
	return floe_data_writer_rows(w);
}

static size_t ops_buffered(const void *w)
{
	return floe_data_writer_buffered(w);
}

static int ops_flush(void *w, floe_error *err)
{
	return floe_data_writer_flush(w, err);
}

static const void *ops_budget_key(const void *w)
{
	return floe_data_writer_parquet(w);
}

static int ops_close(void *w, floe_data_file *out, floe_arena *a, floe_error *err)
{
	return floe_data_writer_close(w, out, a, err);
}

static void ops_abort(void *w)
{
	floe_data_writer_abort(w);
}

static const char *ops_path(const void *w)
{
	return floe_data_writer_path(w);
}

const floe_write__file_ops floe_write__data_file_ops = {
	.ext = ".parquet",
	.open = ops_open,
	.write = ops_write,
	.size = ops_size,
	.size_parts = ops_size_parts,
	.written = ops_written,
	.rows = ops_rows,
	.buffered = ops_buffered,
	.flush = ops_flush,
	.budget_key = ops_budget_key,
	.close = ops_close,
	.abort = ops_abort,
	.path = ops_path,
};
