/*
 * stream_overwrite.c — the row filter of a filtered overwrite
 * (overwrite-where), decided per file for the producer's overwrite scope
 * (table/commit.h floe_op_set_overwrite): a file whose partition tuple
 * decides the filter TRUE is replaced whole, one it decides FALSE (or whose
 * partition or column bounds exclude every match) is kept, and any other
 * file holds some matching rows and some not (Java's overwriteByRowFilter
 * refuses it).
 *
 * The filter is bound to the table's current metadata, and bound again when
 * a commit refreshed it (a retry reads the catalog).
 */
#include <string.h>

#include "scan/scan_expr.h"
#include "table/commit.h"
#include "stream/stream_runtime.h"
#include "util/alloc.h"

struct stream_ow_filter {
	floe_arena a;       /* the bound filter and its projections (per metadata) */
	floe_arena scratch; /* one file's residual */
	floe_table *t;
	char *text;
	const floe_metadata *m; /* what bound was bound to */
	floe_expr *bound;
	int32_t spec_ids[16];
	floe_expr *projs[16];
	size_t n_projs;
};

static int bind(stream_ow_filter *f, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(f->t);
	if (m == f->m && f->bound)
		return FLOE_OK;
	floe_arena_reset(&f->a);
	f->n_projs = 0;
	f->bound = NULL;
	f->m = m;
	int rc = floe_expr_compile(&f->bound, &f->a, f->text, floe_metadata_current_schema(m),
				   false, err);
	if (rc)
		f->bound = NULL;
	return rc ? floe_error_prefix(err, rc, "overwrite-where '%s': ", f->text) : FLOE_OK;
}

int stream_ow_filter_new(stream_ow_filter **out, floe_table *t, const char *text,
			 floe_error *err)
{
	stream_ow_filter *f = floe_calloc(1, sizeof(*f));
	int rc;
	*out = NULL;
	if (!f || !(f->text = floe_strdup(text))) {
		floe_free(f);
		return floe_error_oom(err);
	}
	floe_arena_init(&f->a, 4096);
	floe_arena_init(&f->scratch, 4096);
	f->t = t;
	if ((rc = bind(f, err))) {
		stream_ow_filter_free(f);
		return rc;
	}
	*out = f;
	return FLOE_OK;
}

void stream_ow_filter_free(stream_ow_filter *f)
{
	if (!f)
		return;
	floe_arena_reset(&f->a);
	floe_arena_reset(&f->scratch);
	floe_free(f->text);
	floe_free(f);
}

int stream_ow_filter_scope(void *payload, const floe_data_file *df)
{
	stream_ow_filter *f = payload;
	if (bind(f, NULL))
		return FLOE_SCOPE_SOME; /* cannot tell: refused, never replaced */
	const floe_partition_spec *spec = floe_metadata_spec(f->m, df->spec_id);
	const floe_schema *schema = floe_metadata_current_schema(f->m);
	floe_expr *proj = NULL;
	floe_arena_reset(&f->scratch);
	if (floe_expr_is_true(f->bound))
		return FLOE_SCOPE_ALL;
	if (floe_expr_is_false(f->bound))
		return FLOE_SCOPE_NONE;
	for (size_t i = 0; spec && i < f->n_projs && !proj; i++)
		if (f->spec_ids[i] == df->spec_id)
			proj = f->projs[i];
	if (spec && spec->n_fields && !proj &&
	    floe_expr_project(&proj, &f->a, f->bound, spec, schema, NULL) == FLOE_OK &&
	    f->n_projs < 16) {
		f->spec_ids[f->n_projs] = df->spec_id;
		f->projs[f->n_projs++] = proj;
	}
	if (proj && !floe_eval_partition(proj, &df->partition))
		return FLOE_SCOPE_NONE;
	if (spec) {
		floe_expr *res = floe_expr_residual(&f->scratch, f->bound, spec, &df->partition);
		if (res && floe_expr_is_true(res))
			return FLOE_SCOPE_ALL;
		if (res && floe_expr_is_false(res))
			return FLOE_SCOPE_NONE;
	}
	if (df->content == FLOE_CONTENT_DATA) {
		floe_file_metrics fm = {df->record_count,	  df->value_counts,
					df->n_value_counts,	  df->null_value_counts,
					df->n_null_value_counts, df->nan_value_counts,
					df->n_nan_value_counts,  df->lower_bounds,
					df->n_lower_bounds,	  df->upper_bounds,
					df->n_upper_bounds};
		if (!floe_eval_metrics(f->bound, &fm))
			return FLOE_SCOPE_NONE;
	}
	return FLOE_SCOPE_SOME;
}
