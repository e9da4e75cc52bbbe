/*
 * pq_datafile.c — a manifest entry for an existing Parquet file: metrics
 * from the footer and the partition tuple, as Java's footer metrics and
 * PyIceberg's add_files compute them.
 *
 * Bounds come from Statistics.min_value/max_value (or the deprecated
 * min/max only for physical types whose legacy order is the signed one),
 * are trusted only when every row group has them, and are converted to the
 * Iceberg type of the column (units of times, decimal encodings, promotions).
 * A file may hold one partition only: each partition source column's lower
 * and upper bound must transform to the same value.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/metrics.h"
#include "parquet/meta.h"
#include "parquet/schema.h"
#include "util/cursor.h"
#include "util/str.h"
#include "util/timeutil.h"

#define MAX_FOOTER ((size_t)256 << 20)

typedef struct col_acc {
	int32_t field_id;
	const floe_type *type;
	const floe_parquet_node *leaf;
	int64_t size, values, nulls;
	bool nulls_known;
	bool bounds_ok;
	bool has_bounds;
	floe_value lower, upper;
} col_acc;

static int read_footer(floe_parquet_file_meta **meta, floe_arena *a, floe_input *in,
		       floe_error *err)
{
	uint8_t tail[8];
	int rc;
	if (in->size < 12)
		return floe_error_corrupt(err, "'%s' is too small to be a Parquet file",
				      in->name);
	if ((rc = floe_input_read_exact(in, in->size - 8, tail, 8, err)))
		return rc;
	if (memcmp(tail + 4, "PARE", 4) == 0)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "'%s' is an encrypted Parquet file",
				      in->name);
	if (memcmp(tail + 4, "PAR1", 4) != 0)
		return floe_error_corrupt(err, "'%s' is not a Parquet file (bad magic)",
				      in->name);
	uint32_t len = floe_load_u32le(tail);
	if (len > in->size - 12 || len > MAX_FOOTER)
		return floe_error_corrupt(err, "'%s': footer length %u does not fit in the file", in->name, len);
	uint8_t *buf = floe_arena_alloc(a, len ? len : 1);
	if (!buf)
		return floe_error_oom(err);
	if ((rc = floe_input_read_exact(in, in->size - 8 - len, buf, len, err)))
		return rc;
	return floe_parquet_meta_parse(meta, a, buf, len, in->name, err);
}

/* ---- field resolution -------------------------------------------------------- */

static const floe_parquet_node *child_named(const floe_parquet_node *n, const char *name)
{
	for (int i = 0; i < n->n_children; i++)
		if (strcmp(n->children[i]->name, name) == 0)
			return n->children[i];
	return NULL;
}

static const floe_name_mapping *mapping_for(const floe_name_mapping *maps, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (maps[i].field_id == id)
			return &maps[i];
	return NULL;
}

/* The Parquet leaf of a top-level-or-struct Iceberg field, by names. */
static const floe_parquet_node *resolve_by_name(const floe_parquet_schema *pq,
						const floe_schema *s, const floe_schema_entry *e,
						const floe_name_mapping *maps, size_t n_maps)
{
	const floe_schema_entry *chain[64];
	int depth = 0;
	for (const floe_schema_entry *x = e; x && depth < 64;
	     x = x->parent_id ? floe_schema_find(s, x->parent_id) : NULL)
		chain[depth++] = x;
	const floe_parquet_node *node = pq->root;
	const floe_name_mapping *level = maps;
	size_t n_level = n_maps;
	for (int i = depth - 1; i >= 0 && node; i--) {
		const floe_schema_entry *x = chain[i];
		const floe_parquet_node *next = NULL;
		const floe_name_mapping *nm = level ? mapping_for(level, n_level, x->id) : NULL;
		if (nm) {
			for (size_t k = 0; k < nm->n_names && !next; k++)
				next = child_named(node, nm->names[k]);
			level = nm->fields;
			n_level = nm->n_fields;
		} else if (!level) {
			next = x->field ? child_named(node, x->field->name) : NULL;
		}
		node = next;
	}
	return node && node->physical >= 0 ? node : NULL;
}

/* ---- statistics to values ------------------------------------------------------ */

/* Is the deprecated min/max usable (legacy signed order)? */
static bool legacy_ok(const floe_parquet_node *leaf)
{
	switch (leaf->physical) {
	case FLOE_PARQUET_BOOLEAN:
	case FLOE_PARQUET_INT32:
	case FLOE_PARQUET_INT64:
	case FLOE_PARQUET_FLOAT:
	case FLOE_PARQUET_DOUBLE: return leaf->logical.kind != FLOE_PARQUET_LT_DECIMAL;
	default: return false;
	}
}

static void accumulate(col_acc *c, floe_arena *a, const floe_parquet_column_meta *cm,
		       bool order_ok)
{
	c->size += cm->total_compressed_size;
	c->values += cm->num_values;
	if (!cm->has_statistics) {
		c->nulls_known = false;
		c->bounds_ok = false;
		return;
	}
	const floe_parquet_stats *st = &cm->statistics;
	if (st->has_null_count)
		c->nulls += st->null_count;
	else
		c->nulls_known = false;
	const floe_parquet_bytes *mn = NULL, *mx = NULL;
	if (st->has_min_value && st->has_max_value && order_ok) {
		mn = &st->min_value;
		mx = &st->max_value;
	} else if (st->has_min && st->has_max && legacy_ok(c->leaf)) {
		mn = &st->min;
		mx = &st->max;
	}
	/* a chunk of nulls only has no bounds and needs none */
	if (!mn) {
		if (st->has_null_count && st->null_count == cm->num_values)
			return;
		c->bounds_ok = false;
		return;
	}
	floe_value lo, hi;
	if (!floe_parquet_stat_value(&lo, c->leaf, c->type, mn->p, mn->n) ||
	    !floe_parquet_stat_value(&hi, c->leaf, c->type, mx->p, mx->n)) {
		c->bounds_ok = false;
		return;
	}
	if (!c->has_bounds || floe_value_compare(&lo, &c->lower) < 0) {
		if (floe_value_own(&lo, a) == 0)
			c->lower = lo;
	}
	if (!c->has_bounds || floe_value_compare(&hi, &c->upper) > 0) {
		if (floe_value_own(&hi, a) == 0)
			c->upper = hi;
	}
	c->has_bounds = true;
}

/* ---- partition values from a path ("name=value" segments) ----------------------- */

static int from_human(floe_value *out, floe_arena *a, const floe_type *t, const char *s)
{
	size_t n = strlen(s);
	memset(out, 0, sizeof(*out));
	out->type = t->id;
	if (strcmp(s, "null") == 0 || strcmp(s, "__HIVE_DEFAULT_PARTITION__") == 0) {
		out->is_null = true;
		return FLOE_OK;
	}
	switch (t->id) {
	case FLOE_T_INT: return floe_parse_i32(s, n, &out->v.i32) ? FLOE_OK : FLOE_EINVAL;
	case FLOE_T_LONG: return floe_parse_i64(s, n, &out->v.i64) ? FLOE_OK : FLOE_EINVAL;
	case FLOE_T_BOOLEAN:
		if (floe_str_ieq(s, "true") || floe_str_ieq(s, "false")) {
			out->v.b = floe_str_ieq(s, "true");
			return FLOE_OK;
		}
		return FLOE_EINVAL;
	case FLOE_T_DATE: {
		int64_t d;
		if (!floe_parse_date(s, n, &d))
			return FLOE_EINVAL;
		out->v.i32 = (int32_t)d;
		return FLOE_OK;
	}
	case FLOE_T_DOUBLE: return floe_parse_double(s, n, &out->v.f64) ? FLOE_OK : FLOE_EINVAL;
	case FLOE_T_FLOAT: {
		double d;
		if (!floe_parse_double(s, n, &d))
			return FLOE_EINVAL;
		out->v.f32 = (float)d;
		return FLOE_OK;
	}
	case FLOE_T_DECIMAL: return floe_decimal_parse(&out->v.dec, s, n, t->precision, t->scale);
	case FLOE_T_STRING:
		out->v.bin.p = (const uint8_t *)s;
		out->v.bin.n = n;
		return floe_value_own(out, a);
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ: {
		bool z;
		return floe_parse_timestamp_us(s, n, &out->v.i64, &z) ? FLOE_OK : FLOE_EINVAL;
	}
	default: return FLOE_EUNSUPPORTED;
	}
}

static void url_decode(char *s)
{
	char *o = s;
	for (char *p = s; *p; p++) {
		if (*p == '+') {
			*o++ = ' ';
		} else if (*p == '%' && p[1] && p[2]) {
			char h[3] = {p[1], p[2], 0};
			*o++ = (char)strtol(h, NULL, 16);
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = 0;
}

static bool path_value(const char *path, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	for (const char *p = path; (p = strchr(p, '/')); p++) {
		if (strncmp(p + 1, name, nl) == 0 && p[1 + nl] == '=') {
			const char *v = p + 2 + nl;
			size_t vl = strcspn(v, "/");
			if (!v[vl])
				return false; /* the file name itself */
			snprintf(out, cap, "%.*s", (int)vl, v);
			url_decode(out);
			return true;
		}
	}
	return false;
}

/* ---- the entry --------------------------------------------------------------------- */

int floe_parquet_data_file(floe_data_file *out, floe_arena *a, floe_input *in, const char *path,
			   const floe_metadata *m, const floe_partition_spec *spec,
			   floe_error *err)
{
	floe_arena tmp;
	floe_parquet_file_meta *meta = NULL;
	floe_parquet_schema *pq = NULL;
	const floe_schema *s = floe_metadata_current_schema(m);
	col_acc *cols = NULL;
	size_t n_cols = 0;
	floe_name_mapping *maps = NULL;
	size_t n_maps = 0;
	int rc;

	floe_arena_init(&tmp, 65536);
	floe_data_file_init(out);
	if ((rc = read_footer(&meta, &tmp, in, err)))
		goto done;
	if (meta->encrypted) {
		rc = floe_error_set(err, FLOE_EUNSUPPORTED, "'%s' is an encrypted Parquet file", path);
		goto done;
	}
	if ((rc = floe_parquet_schema_from_meta(&pq, meta, path, err)))
		goto done;
	bool has_ids = false;
	for (int i = 1; i < pq->n_nodes; i++)
		if (pq->nodes[i]->has_field_id)
			has_ids = true;
	const char *nm = floe_metadata_property(m, "schema.name-mapping.default");
	if (!has_ids && nm && (rc = floe_name_mapping_parse(&maps, &n_maps, &tmp, nm, err)))
		goto done;

	cols = floe_arena_calloc(&tmp, s->n_index + 1, sizeof(col_acc));
	if (!cols) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < s->n_index; i++) {
		const floe_schema_entry *e = &s->index[i];
		const floe_parquet_node *leaf;
		if (e->in_repeated || !floe_type_is_primitive(e->type))
			continue; /* Java writes no metrics inside lists and maps */
		if (has_ids) {
			leaf = floe_parquet_schema_find_id(pq, e->id);
			if (leaf && leaf->physical < 0)
				leaf = NULL;
		} else {
			leaf = resolve_by_name(pq, s, e, maps, n_maps);
		}
		if (!leaf || leaf->rep_level > 0)
			continue;
		col_acc *c = &cols[n_cols++];
		c->field_id = e->id;
		c->type = e->type;
		c->leaf = leaf;
		c->nulls_known = true;
		c->bounds_ok = true;
	}
	for (size_t g = 0; g < meta->n_row_groups; g++) {
		const floe_parquet_row_group *rg = &meta->row_groups[g];
		for (size_t k = 0; k < n_cols; k++) {
			int li = cols[k].leaf->leaf_index;
			if (li < 0 || (size_t)li >= rg->n_columns || !rg->columns[li].has_meta_data) {
				cols[k].bounds_ok = false;
				cols[k].nulls_known = false;
				continue;
			}
			bool order_ok = meta->n_column_orders == 0 ||
					((size_t)li < meta->n_column_orders &&
					 meta->column_orders[li] == FLOE_PARQUET_ORDER_TYPE_DEFINED);
			accumulate(&cols[k], &tmp, &rg->columns[li].meta_data, order_ok);
		}
	}

	out->content = FLOE_CONTENT_DATA;
	out->file_path = floe_arena_strdup(a, path);
	out->file_format = "PARQUET";
	out->spec_id = spec->spec_id;
	out->record_count = meta->num_rows;
	out->file_size_in_bytes = (int64_t)in->size;
	if (!out->file_path) {
		rc = floe_error_oom(err);
		goto done;
	}
	/* split offsets: where each row group starts */
	if (meta->n_row_groups) {
		out->split_offsets = floe_arena_alloc(a, meta->n_row_groups * sizeof(int64_t));
		if (!out->split_offsets) {
			rc = floe_error_oom(err);
			goto done;
		}
		for (size_t g = 0; g < meta->n_row_groups; g++) {
			const floe_parquet_row_group *rg = &meta->row_groups[g];
			int64_t off = -1;
			if (rg->has_file_offset && rg->file_offset > 0)
				off = rg->file_offset;
			else if (rg->n_columns && rg->columns[0].has_meta_data) {
				const floe_parquet_column_meta *cm = &rg->columns[0].meta_data;
				off = cm->has_dictionary_page_offset && cm->dictionary_page_offset > 0
					      ? cm->dictionary_page_offset
					      : cm->data_page_offset;
			}
			if (off >= 0 &&
			    (out->n_split_offsets == 0 ||
			     off > out->split_offsets[out->n_split_offsets - 1]))
				out->split_offsets[out->n_split_offsets++] = off;
		}
	}
	/* metrics maps */
	out->column_sizes = floe_arena_calloc(a, n_cols + 1, sizeof(floe_id_long));
	out->value_counts = floe_arena_calloc(a, n_cols + 1, sizeof(floe_id_long));
	out->null_value_counts = floe_arena_calloc(a, n_cols + 1, sizeof(floe_id_long));
	out->lower_bounds = floe_arena_calloc(a, n_cols + 1, sizeof(floe_id_bytes));
	out->upper_bounds = floe_arena_calloc(a, n_cols + 1, sizeof(floe_id_bytes));
	if (!out->column_sizes || !out->value_counts || !out->null_value_counts ||
	    !out->lower_bounds || !out->upper_bounds) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t k = 0; k < n_cols; k++) {
		col_acc *c = &cols[k];
		floe_metrics_mode mode = floe_metrics_mode_for(m, s, c->field_id);
		if (mode.kind == FLOE_METRICS_NONE)
			continue;
		out->column_sizes[out->n_column_sizes++] = (floe_id_long){c->field_id, c->size};
		out->value_counts[out->n_value_counts++] = (floe_id_long){c->field_id, c->values};
		if (c->nulls_known)
			out->null_value_counts[out->n_null_value_counts++] =
				(floe_id_long){c->field_id, c->nulls};
		if (mode.kind == FLOE_METRICS_COUNTS || !c->bounds_ok || !c->has_bounds)
			continue;
		if ((rc = floe_metrics_bounds(out->lower_bounds, &out->n_lower_bounds,
					      out->upper_bounds, &out->n_upper_bounds, a, c->field_id,
					      &c->lower, &c->upper, mode))) {
			rc = floe_error_oom(err);
			goto done;
		}
	}

	/* the partition tuple */
	out->partition.n = spec->n_fields;
	out->partition.values = floe_arena_calloc(a, spec->n_fields + 1, sizeof(floe_value));
	if (!out->partition.values) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < spec->n_fields; i++) {
		const floe_partition_field *pf = &spec->fields[i];
		const floe_schema_entry *src = floe_schema_find(s, pf->source_id);
		col_acc *c = NULL;
		floe_value *pv = &out->partition.values[i];
		if (!src) {
			rc = floe_error_set(err, FLOE_EINVAL, "partition source %d is not in the schema",
					    pf->source_id);
			goto done;
		}
		for (size_t k = 0; k < n_cols; k++)
			if (cols[k].field_id == pf->source_id)
				c = &cols[k];
		if (c && c->nulls_known && c->nulls == c->values) {
			*pv = floe_value_null(floe_transform_result_type(&pf->transform, src->type)->id);
			continue;
		}
		if (c && c->bounds_ok && c->has_bounds && c->nulls_known && c->nulls == 0) {
			floe_value lo, hi;
			if ((rc = floe_transform_apply(&lo, &pf->transform, src->type, &c->lower, err)) ||
			    (rc = floe_transform_apply(&hi, &pf->transform, src->type, &c->upper, err)))
				goto done;
			if (!floe_value_equal(&lo, &hi)) {
				floe_buf lb, ub;
				floe_buf_init(&lb, 256);
				floe_buf_init(&ub, 256);
				if (floe_transform_human(&lb, &pf->transform, src->type, &lo) ||
				    floe_transform_human(&ub, &pf->transform, src->type, &hi))
					floe_buf_clear(&lb);
				rc = floe_error_set(err, FLOE_EINVAL,
						    "'%s' holds rows of several partitions: '%s' goes "
						    "from %s to %s",
						    path, pf->name, floe_buf_cstr(&lb), floe_buf_cstr(&ub));
				floe_buf_reset(&lb);
				floe_buf_reset(&ub);
				goto done;
			}
			if ((rc = floe_value_own(&lo, a))) {
				rc = floe_error_oom(err);
				goto done;
			}
			*pv = lo;
			continue;
		}
		if (c && c->nulls_known && c->nulls > 0 && c->has_bounds) {
			rc = floe_error_set(err, FLOE_EINVAL,
					    "'%s' holds rows of several partitions: '%s' has nulls and "
					    "values",
					    path, pf->name);
			goto done;
		}
		char val[1024];
		if (pf->transform.kind == FLOE_TR_IDENTITY &&
		    (path_value(path, pf->name, val, sizeof(val)) ||
		     path_value(path, src->full_name, val, sizeof(val)))) {
			if ((rc = from_human(pv, a, src->type, val))) {
				rc = floe_error_set(err, FLOE_EINVAL,
						    "'%s': partition value '%s' of '%s' does not parse",
						    path, val, pf->name);
				goto done;
			}
			continue;
		}
		rc = floe_error_set(err, FLOE_EINVAL,
				    "cannot tell the partition of '%s': no statistics for '%s'", path,
				    src->full_name);
		goto done;
	}
	rc = FLOE_OK;
done:
	floe_parquet_schema_free(pq);
	floe_arena_reset(&tmp);
	return rc;
}
