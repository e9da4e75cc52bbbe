/*
 * write_task.c — the data task writer: a batch's rows are grouped by
 * partition (write_part.c), the batch is gathered in group order
 * (arrow_take) unless it holds one partition, and each group's slice is
 * handed to the rolling file of its partition (write_roll.c).
 */
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "arrow/arrow_take.h"
#include "util/alloc.h"
#include "write/write_int.h"

struct floe_task_writer {
	const floe_metadata *m;
	const floe_schema *schema;
	const floe_partition_spec *spec;
	bool unpartitioned; /* no field or only void ones: one partition */
	floe_write__format *fmt;
	floe_write__partitioner *part;
	floe_write__data_factory factory;
	floe_write__fanout *fo;
	floe_partition nulls; /* the tuple of an unpartitioned spec */
	/* write_pos of a batch of several partitions: places in group order */
	int32_t *gfile;
	int64_t *gpos;
	size_t cap_g;
	bool failed;
};

int floe_task_writer_new(floe_task_writer **out, floe_fileio *io, const floe_metadata *m,
			 const floe_write_config *cfg, const floe_task_writer_opts *opts,
			 floe_error *err)
{
	static const floe_task_writer_opts dflt = FLOE_TASK_WRITER_OPTS_INIT;
	floe_task_writer *tw;
	floe_write__fanout_opts fo = {0};
	floe_parquet_budget *budget = NULL;
	int rc;
	*out = NULL;
	if (!opts)
		opts = &dflt;
	if (opts->version != 1)
		return floe_error_set(err, FLOE_EINVAL, "task writer: options version %d", opts->version);
	tw = floe_calloc(1, sizeof(*tw));
	if (!tw)
		return floe_error_oom(err);
	tw->m = m;
	tw->schema = floe_metadata_current_schema(m);
	tw->spec = floe_metadata_default_spec(m);
	if (!tw->schema || !tw->spec) {
		rc = floe_error_set(err, FLOE_EINVAL, "task writer: the table has no current schema "
				    "or default spec");
		goto fail;
	}
	tw->unpartitioned = floe_spec_is_unpartitioned(tw->spec);
	tw->nulls.n = tw->spec->n_fields;
	tw->nulls.values = floe_calloc(tw->spec->n_fields + 1, sizeof(floe_value));
	if (!tw->nulls.values) {
		rc = floe_error_oom(err);
		goto fail;
	}
	for (size_t i = 0; i < tw->spec->n_fields; i++) {
		const floe_type *rt = floe_spec_field_type(tw->spec, i, tw->schema);
		tw->nulls.values[i] = floe_value_null(rt ? rt->id : FLOE_T_INT);
	}
	if ((rc = floe_write__format_new(&tw->fmt, m, tw->schema, err)))
		goto fail;
	if (!tw->unpartitioned &&
	    (rc = floe_write__partitioner_new(&tw->part, tw->schema, tw->spec, err)))
		goto fail;
	tw->factory.io = io;
	tw->factory.fmt = tw->fmt;
	tw->factory.spec_id = tw->spec->spec_id;
	tw->factory.opts = cfg->parquet;
	fo.io = io;
	fo.cfg = cfg;
	fo.schema = tw->schema;
	fo.spec = tw->spec;
	fo.ops = &floe_write__data_file_ops;
	fo.factory = &tw->factory;
	fo.target_file_size = opts->target_file_size;
	fo.partition_id = opts->partition_id;
	fo.task_id = opts->task_id;
	fo.operation_id = opts->operation_id;
	fo.namer = opts->namer;
	fo.max_open_files = opts->max_open_files;
	fo.budget = opts->budget;
	fo.private_budget = opts->budget_bytes;
	if ((rc = floe_write__fanout_new(&tw->fo, &fo, &budget, err)))
		goto fail;
	tw->factory.opts.budget = budget;
	*out = tw;
	return FLOE_OK;
fail:
	floe_error_prefix(err, rc, "task writer: ");
	floe_task_writer_abort(tw);
	return rc;
}

static int write_batch(floe_task_writer *tw, const struct ArrowArray *batch,
		       const struct ArrowSchema *bs, int32_t *file_out, int64_t *pos_out,
		       floe_error *err)
{
	floe_write__groups g;
	int rc;
	if ((rc = floe_arrow_check(bs, batch, err)))
		return rc;
	if (strcmp(bs->format, "+s") != 0 || bs->n_children != (int64_t)tw->schema->root->n_fields)
		return floe_error_set(err, FLOE_EINVAL,
				      "a batch must be a struct of the table's %zu top-level fields "
				      "(got '%s' with %lld children)",
				      tw->schema->root->n_fields, bs->format,
				      (long long)bs->n_children);
	if (batch->length == 0)
		return FLOE_OK;
	if (tw->unpartitioned)
		return floe_write__fanout_route_pos(tw->fo, &tw->nulls, batch, bs, file_out, pos_out,
						    err);
	if ((rc = floe_write__partition(tw->part, &g, batch, bs, err)))
		return rc;
	if (g.n == 1) {
		/* one partition: the batch as it is, nothing copied */
		floe_partition p = {(floe_value *)g.values, g.n_fields};
		return floe_write__fanout_route_pos(tw->fo, &p, batch, bs, file_out, pos_out, err);
	}
	int32_t *gf = NULL;
	int64_t *gp = NULL;
	if (pos_out) {
		/* places come out in group order; scattered back to row order below */
		size_t n = (size_t)batch->length;
		if (n > tw->cap_g) {
			int32_t *nf = floe_realloc(tw->gfile, n * sizeof(*nf));
			if (nf)
				tw->gfile = nf;
			int64_t *np = nf ? floe_realloc(tw->gpos, n * sizeof(*np)) : NULL;
			if (!np)
				return floe_error_oom(err);
			tw->gpos = np;
			tw->cap_g = n;
		}
		gf = tw->gfile;
		gp = tw->gpos;
	}
	/* DESIGN: one take of the whole batch in group order (the partitioner's
	 * layout), then a zero-copy slice per group: the same bytes copied as a
	 * take per group, with one allocation per buffer instead of one per
	 * buffer and group */
	struct ArrowArray sorted;
	if ((rc = floe_arrow_take(&sorted, bs, batch, g.rows, batch->length, err)))
		return rc;
	for (size_t i = 0; i < g.n && !rc; i++) {
		floe_partition p = {(floe_value *)&g.values[i * g.n_fields], g.n_fields};
		struct ArrowArray slice;
		floe_arrow_slice_view(&slice, &sorted, g.start[i], g.start[i + 1] - g.start[i]);
		rc = floe_write__fanout_route_pos(tw->fo, &p, &slice, bs, gf ? gf + g.start[i] : NULL,
						  gp ? gp + g.start[i] : NULL, err);
	}
	floe_arrow_array_release(&sorted);
	if (!rc && pos_out) {
		for (int64_t k = 0; k < batch->length; k++) {
			file_out[g.rows[k]] = gf[k];
			pos_out[g.rows[k]] = gp[k];
		}
	}
	return rc;
}

int floe_task_writer_write(floe_task_writer *tw, const struct ArrowArray *batch,
			   const struct ArrowSchema *schema, floe_error *err)
{
	int rc;
	if (tw->failed)
		return floe_error_set(err, FLOE_EINVAL, "task writer: failed earlier (abort it)");
	if ((rc = write_batch(tw, batch, schema, NULL, NULL, err))) {
		tw->failed = true;
		return floe_error_prefix(err, rc, "task writer: ");
	}
	return FLOE_OK;
}

int floe_task_writer_write_pos(floe_task_writer *tw, const struct ArrowArray *batch,
			       const struct ArrowSchema *schema, int32_t *file_idx, int64_t *pos,
			       floe_error *err)
{
	int rc;
	if (tw->failed)
		return floe_error_set(err, FLOE_EINVAL, "task writer: failed earlier (abort it)");
	if (!file_idx || !pos)
		return floe_error_set(err, FLOE_EINVAL, "task writer: write_pos needs both arrays");
	if ((rc = write_batch(tw, batch, schema, file_idx, pos, err))) {
		tw->failed = true;
		return floe_error_prefix(err, rc, "task writer: ");
	}
	return FLOE_OK;
}

int floe_task_writer_file(const floe_task_writer *tw, int32_t idx, floe_written_file *out)
{
	const floe_write__opened *o = floe_write__fanout_opened(tw->fo, idx);
	if (!o)
		return FLOE_EINVAL;
	out->path = o->path;
	out->spec_id = tw->spec->spec_id;
	out->partition = o->partition;
	return FLOE_OK;
}

int floe_task_writer_complete(floe_task_writer *tw, floe_data_file **files, size_t *n,
			      floe_arena *a, floe_error *err)
{
	int rc;
	if (tw->failed)
		return floe_error_set(err, FLOE_EINVAL, "task writer: failed earlier (abort it)");
	if ((rc = floe_write__fanout_complete(tw->fo, files, n, a, err))) {
		tw->failed = true;
		return floe_error_prefix(err, rc, "task writer: ");
	}
	return FLOE_OK;
}

size_t floe_task_writer_buffered(const floe_task_writer *tw)
{
	return floe_write__fanout_buffered(tw->fo);
}

void floe_task_writer_get_stats(const floe_task_writer *tw, floe_task_writer_stats *out)
{
	floe_write__fanout_stats(tw->fo, out);
}

void floe_task_writer_abort(floe_task_writer *tw)
{
	if (!tw)
		return;
	floe_write__fanout_abort(tw->fo);
	floe_write__partitioner_free(tw->part);
	floe_write__format_free(tw->fmt);
	floe_free(tw->nulls.values);
	floe_free(tw->gfile);
	floe_free(tw->gpos);
	floe_free(tw);
}

void floe_task_writer_free(floe_task_writer *tw)
{
	/* anything not handed out by complete() is deleted */
	floe_task_writer_abort(tw);
}
