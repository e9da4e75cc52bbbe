/*
 * write_delete_eq.c — equality delete files: rows of the equality columns
 * (or whole rows), partitioned like data, rolling at the delete target size.
 *
 * spec: "Equality Delete Files": a subset of the table's columns by field
 * id, equality_ids naming the ones compared; rows in the partition of the
 * rows they delete. Java/Flink: RowDataTaskWriterFactory gives upsert mode
 * the delete schema TypeUtil.select(schema, equalityFieldIds) and full rows
 * otherwise; EqualityDeleteWriter records equality_ids and the sort order
 * (unsorted, 0, when none is given); Parquet.DeleteWriteBuilder adds
 * "delete-type" = "equality" and "delete-field-ids" to the footer; metrics
 * follow the table's modes (MetricsConfig.forTable).
 *
 * DESIGN: the same core as the data task writer (write_task.c): the
 * partitioner groups a batch's rows, one take in group order, a zero-copy
 * slice per partition into the rolling fan-out. Table rows are projected to
 * the delete columns with borrowed ArrowArray/ArrowSchema headers before the
 * take, so only the key columns are ever copied.
 */
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "arrow/arrow_take.h"
#include "util/alloc.h"
#include "write/write_int.h"

struct floe_eq_delete_writer {
	const floe_metadata *m;
	const floe_schema *table_schema;
	const floe_schema *schema; /* of the delete files */
	const floe_partition_spec *spec;
	bool unpartitioned;
	floe_arena arena;
	size_t n_table, n_del; /* top-level fields of each */
	size_t *proj;          /* delete field i = table field proj[i] */
	floe_write__format *fmt;
	floe_write__partitioner *part_table, *part_del;
	floe_write__data_factory factory;
	floe_write__fanout *fo;
	floe_partition nulls;
	/* projection headers */
	struct ArrowArray **pa_children;
	struct ArrowSchema **ps_children;
	floe_delete_writer_stats stats;
	bool failed;
};

static void hdr_release_array(struct ArrowArray *a)
{
	a->release = NULL;
}

static void hdr_release_schema(struct ArrowSchema *s)
{
	s->release = NULL;
}

static bool eq_type_ok(const floe_type *t)
{
	if (!floe_type_is_primitive(t))
		return false;
	switch (t->id) {
	case FLOE_T_UNKNOWN:
	case FLOE_T_VARIANT:
	case FLOE_T_GEOMETRY:
	case FLOE_T_GEOGRAPHY: return false;
	default: return true;
	}
}

/* The delete schema: the table's top-level fields that are equality fields,
 * in schema order (TypeUtil.select), or every field with full rows. */
static int make_schema(floe_eq_delete_writer *w, const floe_delete_writer_opts *o,
		       floe_error *err)
{
	const floe_type *root = w->table_schema->root;
	floe_type *dr;
	floe_field *fs;
	floe_schema *s;
	int rc;
	if (!o->n_equality_ids || !o->equality_ids)
		return floe_error_set(err, FLOE_EINVAL, "equality deletes need equality field ids");
	for (size_t i = 0; i < o->n_equality_ids; i++) {
		int32_t id = o->equality_ids[i];
		const floe_schema_entry *e = floe_schema_find(w->table_schema, id);
		if (!e)
			return floe_error_set(err, FLOE_EINVAL,
					      "equality field id %d is not in the current schema", id);
		if (e->parent_id != 0 || e->in_repeated)
			return floe_error_set(err, FLOE_EINVAL,
					      "equality field '%s' is nested: only top-level columns "
					      "are supported",
					      e->full_name);
		if (!eq_type_ok(e->type))
			return floe_error_set(err, FLOE_EINVAL,
					      "equality field '%s' must be a primitive column",
					      e->full_name);
		for (size_t k = 0; k < i; k++)
			if (o->equality_ids[k] == id)
				return floe_error_set(err, FLOE_EINVAL,
						      "equality field '%s' is given twice",
						      e->full_name);
	}
	w->n_table = root->n_fields;
	w->proj = floe_arena_calloc(&w->arena, root->n_fields + 1, sizeof(size_t));
	if (!w->proj)
		return floe_error_oom(err);
	if (o->full_rows) {
		for (size_t i = 0; i < root->n_fields; i++)
			w->proj[i] = i;
		w->n_del = root->n_fields;
		w->schema = w->table_schema;
		return FLOE_OK;
	}
	fs = floe_arena_calloc(&w->arena, o->n_equality_ids, sizeof(*fs));
	dr = floe_arena_calloc(&w->arena, 1, sizeof(*dr));
	if (!fs || !dr)
		return floe_error_oom(err);
	for (size_t i = 0; i < root->n_fields; i++)
		for (size_t k = 0; k < o->n_equality_ids; k++)
			if (root->fields[i].id == o->equality_ids[k]) {
				fs[w->n_del] = root->fields[i];
				w->proj[w->n_del++] = i;
			}
	dr->id = FLOE_T_STRUCT;
	dr->fields = fs;
	dr->n_fields = w->n_del;
	if ((rc = floe_schema_make(&s, &w->arena, 0, dr, NULL, 0, err)))
		return rc;
	w->schema = s;
	return FLOE_OK;
}

int floe_eq_delete_writer_new(floe_eq_delete_writer **out, floe_fileio *io,
			      const floe_metadata *m, const floe_write_config *cfg,
			      const floe_delete_writer_opts *opts, floe_error *err)
{
	floe_eq_delete_writer *w;
	floe_write__fanout_opts fo = {0};
	floe_write__format_opts fmt = {0};
	floe_parquet_budget *budget = NULL;
	int rc;
	*out = NULL;
	if (!opts || opts->version != 1)
		return floe_error_set(err, FLOE_EINVAL, "equality delete writer: options version %d",
				      opts ? opts->version : 0);
	if (m->format_version < 2)
		return floe_error_set(err, FLOE_EINVAL, "equality delete writer: a v%d table cannot "
				      "hold delete files (format v2 or later)",
				      m->format_version);
	w = floe_calloc(1, sizeof(*w));
	if (!w)
		return floe_error_oom(err);
	floe_arena_init(&w->arena, 2048);
	w->m = m;
	w->table_schema = floe_metadata_current_schema(m);
	w->spec = floe_metadata_default_spec(m);
	if (!w->table_schema || !w->spec) {
		rc = floe_error_set(err, FLOE_EINVAL, "the table has no current schema or default "
				    "spec");
		goto fail;
	}
	if ((rc = make_schema(w, opts, err)))
		goto fail;
	w->unpartitioned = floe_spec_is_unpartitioned(w->spec);
	w->nulls.n = w->spec->n_fields;
	w->nulls.values = floe_arena_calloc(&w->arena, w->spec->n_fields + 1, sizeof(floe_value));
	w->pa_children = floe_arena_calloc(&w->arena, w->n_del + 1, sizeof(*w->pa_children));
	w->ps_children = floe_arena_calloc(&w->arena, w->n_del + 1, sizeof(*w->ps_children));
	if (!w->nulls.values || !w->pa_children || !w->ps_children) {
		rc = floe_error_oom(err);
		goto fail;
	}
	for (size_t i = 0; i < w->spec->n_fields; i++) {
		const floe_type *rt = floe_spec_field_type(w->spec, i, w->table_schema);
		w->nulls.values[i] = floe_value_null(rt ? rt->id : FLOE_T_INT);
	}
	fmt.metrics_schema = w->table_schema; /* MetricsConfig.forTable */
	fmt.content = FLOE_CONTENT_EQUALITY_DELETES;
	fmt.equality_ids = opts->equality_ids;
	fmt.n_equality_ids = opts->n_equality_ids;
	fmt.has_sort_order_id = true;
	fmt.sort_order_id = opts->sort_order_id;
	fmt.delete_type = "equality";
	if ((rc = floe_write__format_new_opts(&w->fmt, m, w->schema, &fmt, err)))
		goto fail;
	if (!w->unpartitioned &&
	    (rc = floe_write__partitioner_new(&w->part_table, w->table_schema, w->spec, err)))
		goto fail;
	w->factory.io = io;
	w->factory.fmt = w->fmt;
	w->factory.spec_id = w->spec->spec_id;
	w->factory.opts = cfg->delete_parquet;
	fo.io = io;
	fo.cfg = cfg;
	fo.schema = w->table_schema;
	fo.spec = w->spec;
	fo.ops = &floe_write__data_file_ops;
	fo.factory = &w->factory;
	fo.target_file_size =
		opts->target_file_size > 0 ? opts->target_file_size : cfg->delete_target_file_size;
	fo.partition_id = opts->partition_id;
	fo.task_id = opts->task_id;
	fo.operation_id = opts->operation_id;
	fo.namer = opts->namer;
	fo.max_open_files = opts->max_open_files;
	fo.budget = opts->budget;
	fo.private_budget = opts->budget_bytes;
	if ((rc = floe_write__fanout_new(&w->fo, &fo, &budget, err)))
		goto fail;
	w->factory.opts.budget = budget;
	*out = w;
	return FLOE_OK;
fail:
	floe_error_prefix(err, rc, "equality delete writer: ");
	floe_eq_delete_writer_abort(w);
	return rc;
}

const floe_schema *floe_eq_delete_writer_schema(const floe_eq_delete_writer *w)
{
	return w->schema;
}

/* Which kind of rows a batch holds: 1 table rows, 2 delete rows. */
static int batch_kind(const floe_eq_delete_writer *w, const struct ArrowSchema *bs, int *kind,
		      floe_error *err)
{
	if (strcmp(bs->format, "+s") != 0)
		return floe_error_set(err, FLOE_EINVAL, "a batch must be a struct (got '%s')",
				      bs->format);
	if (bs->n_children == (int64_t)w->n_table) {
		*kind = 1;
		return FLOE_OK;
	}
	if (bs->n_children == (int64_t)w->n_del) {
		*kind = 2;
		return FLOE_OK;
	}
	return floe_error_set(err, FLOE_EINVAL,
			      "a batch must be a struct of the table's %zu top-level fields or of "
			      "the %zu delete columns (got %lld children)",
			      w->n_table, w->n_del, (long long)bs->n_children);
}

/* Delete-column headers over a batch of table rows (nothing copied). */
static void project(floe_eq_delete_writer *w, const struct ArrowArray *a,
		    const struct ArrowSchema *s, struct ArrowArray *pa, struct ArrowSchema *ps)
{
	*pa = *a;
	*ps = *s;
	pa->release = hdr_release_array;
	pa->private_data = NULL;
	ps->release = hdr_release_schema;
	ps->private_data = NULL;
	for (size_t i = 0; i < w->n_del; i++) {
		w->pa_children[i] = a->children[w->proj[i]];
		w->ps_children[i] = s->children[w->proj[i]];
	}
	pa->n_children = ps->n_children = (int64_t)w->n_del;
	pa->children = w->pa_children;
	ps->children = w->ps_children;
}

static int route_groups(floe_eq_delete_writer *w, const floe_write__groups *g,
			const struct ArrowArray *rows, const struct ArrowSchema *rs, floe_error *err)
{
	int rc = FLOE_OK;
	if (g->n == 1) {
		floe_partition p = {(floe_value *)g->values, g->n_fields};
		return floe_write__fanout_route(w->fo, &p, rows, rs, err);
	}
	struct ArrowArray sorted;
	if ((rc = floe_arrow_take(&sorted, rs, rows, g->rows, rows->length, err)))
		return rc;
	for (size_t i = 0; i < g->n && !rc; i++) {
		floe_partition p = {(floe_value *)&g->values[i * g->n_fields], g->n_fields};
		struct ArrowArray slice;
		floe_arrow_slice_view(&slice, &sorted, g->start[i], g->start[i + 1] - g->start[i]);
		rc = floe_write__fanout_route(w->fo, &p, &slice, rs, err);
	}
	floe_arrow_array_release(&sorted);
	return rc;
}

static int write_batch(floe_eq_delete_writer *w, const floe_partition *given,
		       const struct ArrowArray *batch, const struct ArrowSchema *bs,
		       floe_error *err)
{
	struct ArrowArray pa;
	struct ArrowSchema ps;
	floe_write__groups g;
	const struct ArrowArray *rows = batch;
	const struct ArrowSchema *rs = bs;
	int kind, rc;
	if ((rc = floe_arrow_check(bs, batch, err)) || (rc = batch_kind(w, bs, &kind, err)))
		return rc;
	if (batch->length == 0)
		return FLOE_OK;
	if (kind == 1 && w->n_del != w->n_table) {
		project(w, batch, bs, &pa, &ps);
		rows = &pa;
		rs = &ps;
	}
	if (given)
		return floe_write__fanout_route(w->fo, given, rows, rs, err);
	if (w->unpartitioned)
		return floe_write__fanout_route(w->fo, &w->nulls, rows, rs, err);
	if (kind == 1) {
		if ((rc = floe_write__partition(w->part_table, &g, batch, bs, err)))
			return rc;
	} else {
		floe_error why = {0};
		if (!w->part_del &&
		    (rc = floe_write__partitioner_new(&w->part_del, w->schema, w->spec, &why)))
			return floe_error_set(err, rc == FLOE_ENOMEM ? rc : FLOE_EINVAL,
					      "rows of the delete columns cannot be partitioned: %s "
					      "(every partition source column must be an equality "
					      "field; give table rows or the partition)",
					      why.msg);
		if ((rc = floe_write__partition(w->part_del, &g, batch, bs, err)))
			return rc;
	}
	return route_groups(w, &g, rows, rs, err);
}

int floe_eq_delete_writer_write(floe_eq_delete_writer *w, const struct ArrowArray *batch,
				const struct ArrowSchema *schema, floe_error *err)
{
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "equality delete writer: failed earlier "
				      "(abort it)");
	if ((rc = write_batch(w, NULL, batch, schema, err))) {
		w->failed = true;
		return floe_error_prefix(err, rc, "equality delete writer: ");
	}
	w->stats.deletes += batch->length;
	return FLOE_OK;
}

int floe_eq_delete_writer_write_partition(floe_eq_delete_writer *w, const floe_partition *p,
					  const struct ArrowArray *batch,
					  const struct ArrowSchema *schema, floe_error *err)
{
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "equality delete writer: failed earlier "
				      "(abort it)");
	if (!p || p->n != w->spec->n_fields)
		return floe_error_set(err, FLOE_EINVAL,
				      "equality delete writer: a partition of %zu values for a spec "
				      "of %zu fields",
				      p ? p->n : 0, w->spec->n_fields);
	if ((rc = write_batch(w, p, batch, schema, err))) {
		w->failed = true;
		return floe_error_prefix(err, rc, "equality delete writer: ");
	}
	w->stats.deletes += batch->length;
	return FLOE_OK;
}

int floe_eq_delete_writer_complete(floe_eq_delete_writer *w, floe_data_file **files, size_t *n,
				   floe_arena *a, floe_error *err)
{
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "equality delete writer: failed earlier "
				      "(abort it)");
	if ((rc = floe_write__fanout_complete(w->fo, files, n, a, err))) {
		w->failed = true;
		return floe_error_prefix(err, rc, "equality delete writer: ");
	}
	return FLOE_OK;
}

size_t floe_eq_delete_writer_buffered(const floe_eq_delete_writer *w)
{
	return floe_write__fanout_buffered(w->fo);
}

void floe_eq_delete_writer_get_stats(const floe_eq_delete_writer *w,
				     floe_delete_writer_stats *out)
{
	floe_task_writer_stats s;
	floe_write__fanout_stats(w->fo, &s);
	*out = w->stats;
	out->files_finished = s.files_finished;
	out->open_files = s.open_files;
	out->budget_flushes = s.budget_flushes;
}

void floe_eq_delete_writer_abort(floe_eq_delete_writer *w)
{
	if (!w)
		return;
	floe_write__fanout_abort(w->fo);
	floe_write__partitioner_free(w->part_table);
	floe_write__partitioner_free(w->part_del);
	floe_write__format_free(w->fmt);
	floe_arena_reset(&w->arena);
	floe_free(w);
}

void floe_eq_delete_writer_free(floe_eq_delete_writer *w)
{
	floe_eq_delete_writer_abort(w);
}
