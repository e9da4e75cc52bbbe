/*
 * scan_read.c — reading planned files: Parquet columns to table-typed Arrow
 * arrays (schema evolution by field id, name mapping for files without ids,
 * identity partition values and initial defaults for columns a file lacks),
 * then deletes, the residual filter and the projection.
 *
 * DESIGN: a file reader (fr_*) yields "read batches": a struct array whose
 * children are the requested table fields in the table's current types.
 * Which file column holds a field is decided once per file: by field id
 * when the file has ids (any node), else by schema.name-mapping.default,
 * else by position at the top level (Java's fallback ids 1..n for migrated
 * files); spec 8.4's order for a field the file lacks: identity partition
 * value, initial-default, null. When no requested field lives in the file
 * (a count, or only partition columns) the file is not opened: the batches
 * are made from the manifest's record count. The scan loop then builds a
 * keep-list per batch — position deletes merged against the row positions
 * (sorted both ways), equality deletes probed per row, the residual filter —
 * and gathers the output columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arrow/arrow_build.h"
#include "io/fileio.h"
#include "parquet/reader.h"
#include "scan/scan_impl.h"
#include "util/log.h"
#include "util/str.h"
#include "util/timeutil.h"

#define DEFAULT_BATCH_ROWS 65536

typedef enum match_mode { M_ID, M_MAPPING, M_POSITION, M_NAME } match_mode;

/* ---- the file reader ---------------------------------------------------------------------- */

typedef struct file_reader {
	floe_scan *s;
	const scan_file *f;
	const floe_field *const *fields;
	size_t n_fields;
	floe_input *in;
	floe_parquet_reader *pr;
	scan_avro_file *af;            /* an Avro data file instead */
	struct ArrowSchema sel_schema; /* Arrow schema of the selected file columns */
	int64_t *src;                  /* per field: child index in a file batch, -1: not in the file */
	floe_sa_match *match;          /* per field */
	bool synthetic;                /* nothing to read from the file */
	int64_t pos;                   /* position of the next row */
	int64_t total;                 /* synthetic: rows */
	int64_t batch_rows;
	/* row groups kept by statistics (NULL: all, read in order) */
	int *kept;
	size_t n_kept, cur;
	int64_t *rg_start; /* first row position of each row group of the file */
	int64_t in_rg;     /* rows read from kept[cur] */
} file_reader;

static void fr_close(file_reader *fr)
{
	floe_parquet_reader_free(fr->pr);
	floe_scan__avro_free(fr->af);
	floe_input_close(fr->in);
	floe_arrow_schema_release(&fr->sel_schema);
	floe_free(fr->kept);
	floe_free(fr->rg_start);
	floe_free(fr->src);
	floe_free(fr->match);
	memset(fr, 0, sizeof(*fr));
}

static const floe_name_mapping *mapping_of(floe_scan *s, size_t *n)
{
	static const floe_name_mapping none;
	*n = 0;
	if (s->mapping_parsed) {
		*n = s->n_mapping;
		return s->mapping;
	}
	s->mapping_parsed = true;
	const char *json = floe_metadata_property(s->m, "schema.name-mapping.default");
	floe_error e = {0};
	if (json && floe_name_mapping_parse(&s->mapping, &s->n_mapping, &s->a, json, &e) != 0) {
		FLOE_WARN("ignoring an unreadable name mapping: %s", e.msg);
		s->mapping = NULL;
		s->n_mapping = 0;
	}
	*n = s->n_mapping;
	return s->mapping ? s->mapping : &none;
}

static bool any_field_id(const floe_parquet_schema *ps)
{
	for (int i = 1; i < ps->n_nodes; i++)
		if (ps->nodes[i]->has_field_id)
			return true;
	return false;
}

/* coerce a partition value to the field's (possibly older or newer) type */
static void coerce(floe_value *v, const floe_type *t)
{
	if (v->is_null || v->type == t->id)
		return;
	if (t->id == FLOE_T_LONG && v->type == FLOE_T_INT)
		v->v.i64 = v->v.i32;
	else if (t->id == FLOE_T_DOUBLE && v->type == FLOE_T_FLOAT)
		v->v.f64 = v->v.f32;
	else if ((t->id == FLOE_T_TIMESTAMP || t->id == FLOE_T_TIMESTAMPTZ) && v->type == FLOE_T_DATE)
		v->v.i64 = (int64_t)v->v.i32 * FLOE_US_PER_DAY;
	else if (t->id == FLOE_T_INT && v->type == FLOE_T_LONG)
		v->v.i32 = (int32_t)v->v.i64;
	else if (t->id == FLOE_T_FLOAT && v->type == FLOE_T_DOUBLE)
		v->v.f32 = (float)v->v.f64;
	v->type = t->id;
}

/* the array of field fl for n rows when the file does not hold it */
static int absent_column(struct ArrowArray *out, const file_reader *fr, const floe_field *fl,
			 int64_t n, int64_t first_pos, floe_error *err)
{
	const scan_file *f = fr->f;
	if (f->spec && f->content == FLOE_CONTENT_DATA) {
		/* spec 8.4: the identity partition value from the manifest */
		for (size_t i = 0; i < f->spec->n_fields && i < f->partition.n; i++) {
			const floe_partition_field *pf = &f->spec->fields[i];
			if (pf->source_id != fl->id || pf->transform.kind != FLOE_TR_IDENTITY)
				continue;
			floe_value v = f->partition.values[i];
			coerce(&v, fl->type);
			return floe_sa_const(out, fl->type, &v, n, err);
		}
	}
	if (fl->id == FLOE_ID_ROW_ID || fl->id == FLOE_ID_LAST_UPDATED_SEQ) {
		/* spec (row lineage): inherited values when the file stores none */
		int64_t *b = NULL;
		int rc;
		if ((rc = floe_arrow_array_init(out, 2, 0)))
			return floe_error_set(err, rc, "out of memory");
		out->length = n;
		bool known = fl->id == FLOE_ID_LAST_UPDATED_SEQ || f->first_row_id >= 0;
		b = floe_calloc((size_t)(n ? n : 1), sizeof(int64_t));
		if (!b) {
			floe_arrow_array_release(out);
			return floe_error_oom(err);
		}
		for (int64_t i = 0; i < n; i++)
			b[i] = fl->id == FLOE_ID_ROW_ID ? f->first_row_id + first_pos + i : f->data_seq;
		floe_arrow_array_set_buffer(out, 1, b);
		if (!known) {
			uint8_t *v = floe_calloc((size_t)(n + 7) / 8 + 1, 1);
			if (!v) {
				floe_arrow_array_release(out);
				return floe_error_oom(err);
			}
			floe_arrow_array_set_buffer(out, 0, v);
			out->null_count = n;
		}
		return FLOE_OK;
	}
	return floe_sa_default(out, fl, n, err);
}

/* ---- row groups by statistics ------------------------------------------------------------ */

/*
 * One column chunk's Parquet min or max as an Iceberg single-value bound of
 * table type t (Java's ParquetMetricsRowGroupFilter reads the same
 * statistics). Only exact mappings: a unit, sign or scale that differs, the
 * deprecated signed-order min/max of byte arrays, INT96 — no bound (the row
 * group is kept). Writes at most 16 bytes to buf.
 */
static bool stat_bound(const floe_parquet_node *leaf, const floe_type *t,
		       const floe_parquet_stats *st, bool want_max, uint8_t *buf,
		       const uint8_t **out, size_t *n)
{
	const floe_parquet_bytes *b = want_max ? &st->max_value : &st->min_value;
	bool has = want_max ? st->has_max_value : st->has_min_value;
	int ph = leaf->physical;
	bool numeric = ph == FLOE_PARQUET_BOOLEAN || ph == FLOE_PARQUET_INT32 ||
		       ph == FLOE_PARQUET_INT64 || ph == FLOE_PARQUET_FLOAT ||
		       ph == FLOE_PARQUET_DOUBLE;
	if (!has && numeric) {
		/* numbers: the deprecated fields have the same (signed) order */
		b = want_max ? &st->max : &st->min;
		has = want_max ? st->has_max : st->has_min;
	}
	if (!has || !b->p)
		return false;
	const floe_parquet_logical *lt = &leaf->logical;
	bool is_dec = lt->kind == FLOE_PARQUET_LT_DECIMAL;
	if (t->id == FLOE_T_DECIMAL) {
		if (!is_dec || lt->scale != t->scale)
			return false;
		if (ph == FLOE_PARQUET_INT32 || ph == FLOE_PARQUET_INT64) {
			size_t w = ph == FLOE_PARQUET_INT32 ? 4 : 8;
			if (b->n != w)
				return false;
			for (size_t i = 0; i < w; i++)
				buf[i] = b->p[w - 1 - i]; /* little- to big-endian */
			*out = buf;
			*n = w;
			return true;
		}
		if ((ph == FLOE_PARQUET_BYTE_ARRAY || ph == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY) &&
		    b->n >= 1 && b->n <= 16) {
			*out = b->p;
			*n = b->n;
			return true;
		}
		return false;
	}
	if (is_dec)
		return false;
	bool unsigned_int = lt->kind == FLOE_PARQUET_LT_INTEGER && !lt->is_signed;
	switch (t->id) {
	case FLOE_T_BOOLEAN:
		if (ph != FLOE_PARQUET_BOOLEAN || b->n != 1)
			return false;
		break;
	case FLOE_T_INT:
	case FLOE_T_DATE:
		if (ph != FLOE_PARQUET_INT32 || b->n != 4 || unsigned_int)
			return false;
		break;
	case FLOE_T_LONG:
		if (unsigned_int)
			return false;
		if (ph == FLOE_PARQUET_INT32 && b->n == 4) { /* int promoted to long */
			int32_t v;
			memcpy(&v, b->p, 4);
			int64_t w = v;
			memcpy(buf, &w, 8);
			*out = buf;
			*n = 8;
			return true;
		}
		if (ph != FLOE_PARQUET_INT64 || b->n != 8)
			return false;
		break;
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: {
		bool ns = t->id == FLOE_T_TIMESTAMP_NS || t->id == FLOE_T_TIMESTAMPTZ_NS;
		int want_kind = t->id == FLOE_T_TIME ? FLOE_PARQUET_LT_TIME : FLOE_PARQUET_LT_TIMESTAMP;
		if (ph != FLOE_PARQUET_INT64 || b->n != 8 || lt->kind != want_kind ||
		    lt->unit != (ns ? FLOE_PARQUET_NANOS : FLOE_PARQUET_MICROS))
			return false;
		break;
	}
	case FLOE_T_FLOAT:
		if (ph != FLOE_PARQUET_FLOAT || b->n != 4)
			return false;
		break;
	case FLOE_T_DOUBLE:
		if (ph == FLOE_PARQUET_FLOAT && b->n == 4) { /* float promoted to double */
			float v;
			memcpy(&v, b->p, 4);
			double d = v;
			memcpy(buf, &d, 8);
			*out = buf;
			*n = 8;
			return true;
		}
		if (ph != FLOE_PARQUET_DOUBLE || b->n != 8)
			return false;
		break;
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
		if (ph != FLOE_PARQUET_BYTE_ARRAY || !(want_max ? st->has_max_value : st->has_min_value))
			return false;
		break;
	case FLOE_T_UUID:
	case FLOE_T_FIXED:
		if (ph != FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY ||
		    !(want_max ? st->has_max_value : st->has_min_value))
			return false;
		break;
	default:
		return false;
	}
	*out = b->p;
	*n = b->n;
	return true;
}

/*
 * Keep the row groups whose statistics say they may hold a row matching
 * filter (the file's residual, bound to the table schema's field ids). Files
 * without field ids are read whole. Sets fr->kept when any is dropped.
 */
static int prune_row_groups(file_reader *fr, floe_scan *s, const floe_expr *filter,
			    floe_error *err)
{
	const floe_parquet_file_meta *fm = floe_parquet_reader_meta(fr->pr);
	const floe_parquet_schema *ps = floe_parquet_reader_schema(fr->pr);
	if (!filter || floe_expr_is_true(filter) || fm->n_row_groups < 1 || !any_field_id(ps))
		return FLOE_OK;
	size_t nl = (size_t)ps->n_leaves;
	floe_id_long *vc = floe_calloc(nl ? nl : 1, sizeof(*vc));
	floe_id_long *nc = floe_calloc(nl ? nl : 1, sizeof(*nc));
	floe_id_bytes *lo = floe_calloc(nl ? nl : 1, sizeof(*lo));
	floe_id_bytes *hi = floe_calloc(nl ? nl : 1, sizeof(*hi));
	uint8_t(*buf)[2][16] = floe_calloc(nl ? nl : 1, sizeof(*buf));
	int *kept = floe_calloc(fm->n_row_groups, sizeof(int));
	int64_t *start = floe_calloc(fm->n_row_groups, sizeof(int64_t));
	int rc = FLOE_OK;
	if (!vc || !nc || !lo || !hi || !buf || !kept || !start) {
		rc = floe_error_oom(err);
		goto done;
	}
	size_t n_kept = 0;
	int64_t row = 0;
	for (size_t g = 0; g < fm->n_row_groups; g++) {
		const floe_parquet_row_group *rg = &fm->row_groups[g];
		floe_file_metrics m;
		size_t n_vc = 0, n_nc = 0, n_lo = 0, n_hi = 0;
		start[g] = row;
		row += rg->num_rows;
		for (size_t c = 0; c < nl && c < rg->n_columns; c++) {
			const floe_parquet_node *leaf = ps->leaves[c];
			const floe_parquet_column_chunk *cc = &rg->columns[c];
			if (!leaf->has_field_id || leaf->rep_level > 0 || !cc->has_meta_data)
				continue;
			const floe_schema_entry *e = floe_schema_find(s->schema, leaf->field_id);
			if (!e || !e->type || !floe_type_is_primitive(e->type))
				continue;
			const floe_parquet_column_meta *cm = &cc->meta_data;
			vc[n_vc].id = leaf->field_id;
			vc[n_vc++].value = cm->num_values;
			if (!cm->has_statistics)
				continue;
			const floe_parquet_stats *st = &cm->statistics;
			if (st->has_null_count && st->null_count >= 0) {
				nc[n_nc].id = leaf->field_id;
				nc[n_nc++].value = st->null_count;
			}
			const uint8_t *p;
			size_t n;
			if (stat_bound(leaf, e->type, st, false, buf[c][0], &p, &n)) {
				lo[n_lo].id = leaf->field_id;
				lo[n_lo].p = p;
				lo[n_lo++].n = n;
			}
			if (stat_bound(leaf, e->type, st, true, buf[c][1], &p, &n)) {
				hi[n_hi].id = leaf->field_id;
				hi[n_hi].p = p;
				hi[n_hi++].n = n;
			}
		}
		memset(&m, 0, sizeof(m));
		m.record_count = rg->num_rows;
		m.value_counts = vc;
		m.n_value_counts = n_vc;
		m.null_counts = nc;
		m.n_null_counts = n_nc;
		m.lower = lo;
		m.n_lower = n_lo;
		m.upper = hi;
		m.n_upper = n_hi;
		if (floe_eval_metrics(filter, &m))
			kept[n_kept++] = (int)g;
	}
	s->st.row_groups_skipped += fm->n_row_groups - n_kept;
	if (n_kept == fm->n_row_groups)
		goto done; /* all kept: read in order, positions count up */
	if ((rc = floe_parquet_reader_select_row_groups(fr->pr, kept, n_kept, err)))
		goto done;
	fr->kept = kept;
	fr->n_kept = n_kept;
	fr->rg_start = start;
	kept = NULL;
	start = NULL;
done:
	floe_free(vc);
	floe_free(nc);
	floe_free(lo);
	floe_free(hi);
	floe_free(buf);
	floe_free(kept);
	floe_free(start);
	return rc;
}

static int fr_open(file_reader *fr, floe_scan *s, const scan_file *f,
		   const floe_field *const *fields, size_t n_fields, match_mode fallback,
		   const floe_expr *filter, floe_error *err)
{
	floe_parquet_reader_opts po = FLOE_PARQUET_READER_OPTS_INIT;
	struct ArrowSchema full;
	int rc;
	memset(fr, 0, sizeof(*fr));
	fr->s = s;
	fr->f = f;
	fr->fields = fields;
	fr->n_fields = n_fields;
	fr->batch_rows = s->o.batch_rows > 0 ? s->o.batch_rows : DEFAULT_BATCH_ROWS;
	fr->src = floe_calloc(n_fields ? n_fields : 1, sizeof(int64_t));
	fr->match = floe_calloc(n_fields ? n_fields : 1, sizeof(floe_sa_match));
	if (!fr->src || !fr->match) {
		fr_close(fr);
		return floe_error_oom(err);
	}
	for (size_t i = 0; i < n_fields; i++)
		fr->src[i] = -1;
	if (n_fields == 0) {
		/* nothing to read: rows come from the manifest's record count */
		fr->synthetic = true;
		fr->total = f->record_count;
		return FLOE_OK;
	}
	bool avro = strcasecmp(f->format, "AVRO") == 0;
	if (!avro && strcasecmp(f->format, "PARQUET") != 0) {
		rc = floe_error_set(err, FLOE_EUNSUPPORTED,
				    "'%s': %s data files are not supported (floe reads Parquet and "
				    "Avro)",
				    f->path, f->format);
		fr_close(fr);
		return rc;
	}
	if ((rc = floe_io_open_read(floe_table_io(s->t), f->path, &fr->in, err))) {
		fr_close(fr);
		return rc;
	}
	if (avro) {
		if ((rc = floe_scan__avro_open(&fr->af, fr->in, f->path, fields, n_fields, fr->src,
					       err)))
			fr_close(fr);
		return rc;
	}
	po.int96_as_micros = true;
	po.batch_rows = fr->batch_rows;
	po.verify_checksums = s->o.verify_checksums;
	if ((rc = floe_parquet_reader_open(&fr->pr, fr->in, &po, err)) ||
	    (rc = floe_parquet_reader_arrow_schema(fr->pr, &full, err))) {
		fr_close(fr);
		return rc;
	}
	const floe_parquet_schema *ps = floe_parquet_reader_schema(fr->pr);
	size_t n_map = 0;
	const floe_name_mapping *map = NULL;
	match_mode mode = fallback;
	if (any_field_id(ps)) {
		mode = M_ID;
	} else if (fallback == M_POSITION && (map = mapping_of(s, &n_map)) && n_map) {
		mode = M_MAPPING;
	}
	/* top-level file column of each field */
	int64_t *col = floe_calloc(n_fields ? n_fields : 1, sizeof(int64_t));
	int *nodes = floe_calloc(n_fields ? n_fields : 1, sizeof(int));
	size_t n_nodes = 0;
	if (!col || !nodes) {
		floe_free(col);
		floe_free(nodes);
		floe_arrow_schema_release(&full);
		fr_close(fr);
		return floe_error_oom(err);
	}
	for (size_t i = 0; i < n_fields; i++) {
		const floe_field *fl = fields[i];
		int64_t c = -1;
		const floe_name_mapping *nm = NULL;
		for (int64_t k = 0; k < full.n_children && c < 0; k++) {
			const struct ArrowSchema *ch = full.children[k];
			switch (mode) {
			case M_ID:
				if (floe_sa_field_id(ch) == fl->id)
					c = k;
				break;
			case M_MAPPING:
				if (!nm)
					nm = floe_sa_mapping_lookup(map, n_map, fl->id, fl->name, s->m);
				for (size_t x = 0; nm && x < nm->n_names && c < 0; x++)
					if (ch->name && !strcmp(ch->name, nm->names[x]))
						c = k;
				break;
			case M_POSITION:
				/* Java's fallback ids: top-level columns numbered 1..n */
				if (k + 1 == fl->id)
					c = k;
				break;
			case M_NAME:
				if (ch->name && !strcmp(ch->name, fl->name))
					c = k;
				break;
			}
		}
		col[i] = c;
		fr->match[i].meta = s->m;
		fr->match[i].by_id = mode == M_ID;
		if (mode == M_MAPPING && nm) {
			fr->match[i].mapping = nm->fields;
			fr->match[i].n_mapping = nm->n_fields;
		}
		if (mode == M_POSITION || mode == M_NAME) {
			/* nested fields of such files resolve by name through a mapping of
			 * the field's own type */
			fr->match[i].by_id = false;
		}
		if (c >= 0) {
			bool dup = false;
			for (size_t k = 0; k < n_nodes; k++)
				dup |= nodes[k] == ps->root->children[c]->index;
			if (!dup)
				nodes[n_nodes++] = ps->root->children[c]->index;
		}
	}
	floe_arrow_schema_release(&full);
	if (n_nodes == 0) {
		floe_free(col);
		floe_free(nodes);
		floe_parquet_reader_free(fr->pr);
		fr->pr = NULL;
		floe_input_close(fr->in);
		fr->in = NULL;
		fr->synthetic = true;
		fr->total = f->record_count;
		return FLOE_OK;
	}
	rc = floe_parquet_reader_select(fr->pr, nodes, n_nodes, err);
	if (!rc)
		rc = prune_row_groups(fr, s, filter, err);
	if (!rc)
		rc = floe_parquet_reader_arrow_schema(fr->pr, &fr->sel_schema, err);
	if (!rc) {
		/* the selection keeps schema order: a field's index is the rank of its column */
		for (size_t i = 0; i < n_fields; i++) {
			if (col[i] < 0)
				continue;
			int64_t rank = 0;
			for (size_t k = 0; k < n_nodes; k++)
				rank += nodes[k] < ps->root->children[col[i]]->index;
			fr->src[i] = rank;
		}
	}
	floe_free(col);
	floe_free(nodes);
	if (rc) {
		floe_error_prefix(err, rc, "'%s': ", f->path);
		fr_close(fr);
	}
	return rc;
}

/* Names of a table type as a mapping, for nested fields of files without ids. */
static int self_mapping(floe_arena *a, const floe_type *t, floe_name_mapping **out, size_t *n);

/* The next batch of an Avro data file: its columns come table-typed. */
static int fr_next_avro(file_reader *fr, struct ArrowArray *out, int64_t *first_pos, bool *eof,
			floe_error *err)
{
	struct ArrowArray *cols = floe_calloc(fr->n_fields ? fr->n_fields : 1, sizeof(*cols));
	int64_t n = 0;
	int rc;
	if (!cols)
		return floe_error_oom(err);
	rc = floe_scan__avro_next(fr->af, fr->batch_rows, cols, &n, err);
	if (!rc && n == 0)
		*eof = true;
	if (!rc && n > 0 && floe_arrow_array_init(out, 1, (int64_t)fr->n_fields))
		rc = floe_error_oom(err);
	if (!rc && n > 0) {
		out->length = n;
		out->null_count = 0;
		for (size_t i = 0; i < fr->n_fields && !rc; i++) {
			if (fr->src[i] < 0)
				rc = absent_column(out->children[i], fr, fr->fields[i], n, fr->pos,
						   err);
			else
				floe_arrow_array_move(out->children[i], &cols[i]);
		}
		if (rc)
			floe_arrow_array_release(out);
	}
	for (size_t i = 0; i < fr->n_fields; i++)
		floe_arrow_array_release(&cols[i]);
	floe_free(cols);
	if (rc || n == 0)
		return rc;
	*first_pos = fr->pos;
	fr->pos += n;
	return FLOE_OK;
}

static int fr_next(file_reader *fr, struct ArrowArray *out, int64_t *first_pos, bool *eof,
		   floe_error *err)
{
	struct ArrowArray fb;
	int64_t n;
	int rc;
	*eof = false;
	memset(&fb, 0, sizeof(fb));
	if (fr->synthetic) {
		n = fr->total - fr->pos;
		if (n <= 0) {
			*eof = true;
			return FLOE_OK;
		}
		if (n > fr->batch_rows)
			n = fr->batch_rows;
	} else if (fr->af) {
		return fr_next_avro(fr, out, first_pos, eof, err);
	} else {
		bool end;
		if ((rc = floe_parquet_reader_next(fr->pr, &fb, &end, err)))
			return floe_error_prefix(err, rc, "'%s': ", fr->f->path);
		if (end) {
			*eof = true;
			return FLOE_OK;
		}
		n = fb.length;
		if (fr->kept) {
			/* row groups were skipped: a batch never spans row groups, so its
			 * position is its row group's start plus what was read of it */
			const floe_parquet_file_meta *fm = floe_parquet_reader_meta(fr->pr);
			while (fr->cur < fr->n_kept && fm->row_groups[fr->kept[fr->cur]].num_rows <= 0)
				fr->cur++;
			if (fr->cur >= fr->n_kept) {
				floe_arrow_array_release(&fb);
				return floe_error_corrupt(err, "'%s': more rows than its row groups declare",
						      fr->f->path);
			}
			int g = fr->kept[fr->cur];
			fr->pos = fr->rg_start[g] + fr->in_rg;
			fr->in_rg += n;
			if (fr->in_rg >= fm->row_groups[g].num_rows) {
				fr->cur++;
				fr->in_rg = 0;
			}
		}
	}
	*first_pos = fr->pos;
	if ((rc = floe_arrow_array_init(out, 1, (int64_t)fr->n_fields))) {
		floe_arrow_array_release(&fb);
		return floe_error_set(err, rc, "out of memory");
	}
	out->length = n;
	out->null_count = 0;
	for (size_t i = 0; i < fr->n_fields && !rc; i++) {
		const floe_field *fl = fr->fields[i];
		if (fr->src[i] < 0) {
			rc = absent_column(out->children[i], fr, fl, n, fr->pos, err);
			continue;
		}
		struct ArrowArray moved;
		int64_t c = fr->src[i];
		floe_sa_match m = fr->match[i];
		floe_name_mapping *self = NULL;
		size_t n_self = 0;
		if (!m.by_id && !m.mapping && floe_type_is_nested(fl->type)) {
			/* no ids and no mapping: nested fields match by their names */
			if (self_mapping(&fr->s->a, fl->type, &self, &n_self) == 0) {
				m.mapping = self;
				m.n_mapping = n_self;
			}
		}
		if (fb.children[c]->release) {
			floe_arrow_array_move(&moved, fb.children[c]);
		} else {
			/* a column used by two fields: gather a copy */
			rc = FLOE_EUNSUPPORTED;
			floe_error_set(err, rc, "'%s': column read twice", fr->f->path);
			break;
		}
		rc = floe_sa_convert(out->children[i], &moved, fr->sel_schema.children[c], fl->type, &m,
				     fl->name, err);
		if (rc)
			floe_error_prefix(err, rc, "'%s': ", fr->f->path);
	}
	floe_arrow_array_release(&fb);
	if (rc) {
		floe_arrow_array_release(out);
		return rc;
	}
	fr->pos += n;
	return FLOE_OK;
}

static int self_map_type(floe_arena *a, const floe_type *t, floe_name_mapping **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (t->id == FLOE_T_STRUCT) {
		*out = floe_arena_calloc(a, t->n_fields ? t->n_fields : 1, sizeof(**out));
		if (!*out)
			return FLOE_ENOMEM;
		for (size_t i = 0; i < t->n_fields; i++) {
			floe_name_mapping *m = &(*out)[i];
			m->field_id = t->fields[i].id;
			m->names = floe_arena_alloc(a, sizeof(char *));
			if (!m->names)
				return FLOE_ENOMEM;
			m->names[0] = t->fields[i].name;
			m->n_names = 1;
			if (self_map_type(a, t->fields[i].type, &m->fields, &m->n_fields))
				return FLOE_ENOMEM;
		}
		*n = t->n_fields;
		return FLOE_OK;
	}
	if (t->id == FLOE_T_LIST || t->id == FLOE_T_MAP) {
		size_t k = t->id == FLOE_T_LIST ? 1 : 2;
		*out = floe_arena_calloc(a, k, sizeof(**out));
		if (!*out)
			return FLOE_ENOMEM;
		static const char *const names[] = {"element", "key", "value"};
		for (size_t i = 0; i < k; i++) {
			floe_name_mapping *m = &(*out)[i];
			const floe_type *ct = t->id == FLOE_T_LIST ? t->element : i == 0 ? t->key : t->value;
			m->field_id = t->id == FLOE_T_LIST ? t->element_id : i == 0 ? t->key_id : t->value_id;
			m->names = floe_arena_alloc(a, sizeof(char *));
			if (!m->names)
				return FLOE_ENOMEM;
			m->names[0] = names[t->id == FLOE_T_LIST ? 0 : i + 1];
			m->n_names = 1;
			if (self_map_type(a, ct, &m->fields, &m->n_fields))
				return FLOE_ENOMEM;
		}
		*n = k;
	}
	return FLOE_OK;
}

static int self_mapping(floe_arena *a, const floe_type *t, floe_name_mapping **out, size_t *n)
{
	return self_map_type(a, t, out, n);
}

int floe_scan__read_file_columns(floe_scan *s, const scan_file *f, const floe_schema *schema,
				 const int32_t *ids, size_t n_ids,
				 int (*fn)(const struct ArrowArray *batch, int64_t first_pos,
					   void *payload),
				 void *payload, floe_error *err)
{
	file_reader fr;
	const floe_field **fields = floe_calloc(n_ids ? n_ids : 1, sizeof(*fields));
	int rc = FLOE_OK;
	if (!fields)
		return floe_error_oom(err);
	for (size_t i = 0; i < n_ids; i++) {
		const floe_schema_entry *e = floe_schema_find(schema, ids[i]);
		if (!e || !e->field || e->parent_id != 0) {
			floe_free(fields);
			return floe_error_set(err, FLOE_EINVAL, "'%s': field %d is not a top-level column",
					      f->path, ids[i]);
		}
		fields[i] = e->field;
	}
	rc = fr_open(&fr, s, f, fields, n_ids, f->content == FLOE_CONTENT_DATA ? M_POSITION : M_NAME,
		     NULL, err);
	while (!rc) {
		struct ArrowArray b;
		int64_t first;
		bool eof;
		if ((rc = fr_next(&fr, &b, &first, &eof, err)) || eof)
			break;
		rc = fn(&b, first, payload);
		floe_arrow_array_release(&b);
	}
	fr_close(&fr);
	floe_free(fields);
	return rc;
}

/* ---- values of a read batch --------------------------------------------------------------- */

/* the array of column id in a read batch whose children are fields[0..n) (top-level),
 * with *parent_null set for rows where an enclosing struct is null */
static const struct ArrowArray *locate(const struct ArrowArray *batch, const int32_t *top_ids,
				       size_t n_top, const floe_schema *schema, int32_t id,
				       const struct ArrowArray **chain, size_t *depth,
				       const floe_type **type)
{
	int32_t ids[SCAN_MAX_DEPTH + 1];
	size_t n = 0;
	const floe_schema_entry *e = floe_schema_find(schema, id);
	*depth = 0;
	if (!e)
		return NULL;
	*type = e->type;
	for (const floe_schema_entry *x = e; x && n <= SCAN_MAX_DEPTH;
	     x = x->parent_id ? floe_schema_find(schema, x->parent_id) : NULL) {
		ids[n++] = x->id;
		if (x->parent_id == 0)
			break;
	}
	const struct ArrowArray *a = NULL;
	for (size_t i = 0; i < n_top; i++)
		if (top_ids[i] == ids[n - 1])
			a = batch->children[i];
	if (!a)
		return NULL;
	const floe_type *t = floe_schema_find(schema, ids[n - 1])->type;
	for (size_t k = n - 1; k > 0; k--) {
		if (t->id != FLOE_T_STRUCT)
			return NULL;
		chain[(*depth)++] = a;
		size_t idx = t->n_fields;
		for (size_t i = 0; i < t->n_fields; i++)
			if (t->fields[i].id == ids[k - 1])
				idx = i;
		if (idx == t->n_fields)
			return NULL;
		a = a->children[idx];
		t = t->fields[idx].type;
	}
	return a;
}

void floe_scan__batch_value(floe_value *out, const struct ArrowArray *batch, const int32_t *top_ids,
			    size_t n_top, const floe_schema *schema, int32_t id, int64_t r)
{
	const struct ArrowArray *chain[SCAN_MAX_DEPTH + 1];
	size_t depth;
	const floe_type *t = NULL;
	const struct ArrowArray *a = locate(batch, top_ids, n_top, schema, id, chain, &depth, &t);
	if (!a || !t) {
		*out = floe_value_null(t ? t->id : FLOE_T_INT);
		return;
	}
	for (size_t i = 0; i < depth; i++)
		if (!floe_sa_valid(chain[i], r)) {
			*out = floe_value_null(t->id);
			return;
		}
	floe_sa_value(out, a, t, r);
}

/* ---- the scan loop ------------------------------------------------------------------------ */

struct scan_reader {
	file_reader fr;
	bool open;
	const scan_file *f;
	const floe_field **fields; /* read set (top-level fields), base then per-file extras */
	int32_t *top_ids;
	size_t n_fields, n_base, cap;
	uint64_t *pos; /* deleted positions of the file */
	size_t n_pos, pos_i;
	const eq_delete_set **eq;
	size_t n_eq;
	bool residual_true;
	int64_t *idx;
	size_t cap_idx;
	floe_field meta_fields[2]; /* _row_id, _last_updated_sequence_number */
};

static int add_field(scan_reader *rd, const floe_field *f)
{
	for (size_t i = 0; i < rd->n_fields; i++)
		if (rd->fields[i]->id == f->id)
			return FLOE_OK;
	if (rd->n_fields == rd->cap) {
		size_t nc = rd->cap ? rd->cap * 2 : 16;
		const floe_field **nf = floe_realloc(rd->fields, nc * sizeof(*nf));
		int32_t *ni = nf ? floe_realloc(rd->top_ids, nc * sizeof(*ni)) : NULL;
		if (nf)
			rd->fields = nf;
		if (!nf || !ni)
			return FLOE_ENOMEM;
		rd->top_ids = ni;
		rd->cap = nc;
	}
	rd->fields[rd->n_fields] = f;
	rd->top_ids[rd->n_fields++] = f->id;
	return FLOE_OK;
}

static const floe_field *top_field(const floe_schema *schema, int32_t id)
{
	const floe_schema_entry *e = floe_schema_find(schema, id);
	while (e && e->parent_id != 0)
		e = floe_schema_find(schema, e->parent_id);
	return e ? e->field : NULL;
}

typedef struct ids_ctx {
	scan_reader *rd;
	const floe_schema *schema;
	int rc;
} ids_ctx;

static void add_filter_id(int32_t id, void *payload)
{
	ids_ctx *c = payload;
	const floe_field *f = top_field(c->schema, id);
	if (f && !c->rc)
		c->rc = add_field(c->rd, f);
}

static int reader_init(floe_scan *s, floe_error *err)
{
	scan_reader *rd = floe_calloc(1, sizeof(*rd));
	if (!rd)
		return floe_error_oom(err);
	s->rd = rd;
	rd->meta_fields[0] =
		(floe_field){FLOE_ID_ROW_ID, "_row_id", false, floe_type_primitive(FLOE_T_LONG), NULL,
			     NULL, NULL};
	rd->meta_fields[1] = (floe_field){FLOE_ID_LAST_UPDATED_SEQ,
					  "_last_updated_sequence_number",
					  false,
					  floe_type_primitive(FLOE_T_LONG),
					  NULL,
					  NULL,
					  NULL};
	for (size_t i = 0; i < s->n_cols; i++) {
		const scan_col *c = &s->cols[i];
		const floe_field *f = NULL;
		if (c->kind == COL_FIELD)
			f = top_field(s->schema, c->top_id);
		else if (c->kind == COL_ROW_ID)
			f = &rd->meta_fields[0];
		else if (c->kind == COL_LAST_UPDATED_SEQ)
			f = &rd->meta_fields[1];
		if (f && add_field(rd, f))
			return floe_error_oom(err);
	}
	ids_ctx ic = {rd, s->schema, 0};
	floe_expr_field_ids(s->filter, add_filter_id, &ic);
	if (ic.rc)
		return floe_error_oom(err);
	rd->n_base = rd->n_fields;
	return floe_scan__deletes_init(s, err);
}

void floe_scan__reader_free(floe_scan *s)
{
	scan_reader *rd = s->rd;
	if (!rd)
		return;
	if (rd->open)
		fr_close(&rd->fr);
	floe_free(rd->fields);
	floe_free(rd->top_ids);
	floe_free(rd->pos);
	floe_free(rd->eq);
	floe_free(rd->idx);
	floe_free(rd);
	s->rd = NULL;
}

/* sorted unique positions that delete every row of a file of n rows */
static bool all_deleted(const uint64_t *pos, size_t n_pos, int64_t n)
{
	return n > 0 && n_pos >= (uint64_t)n && pos[n - 1] == (uint64_t)(n - 1);
}

/* open the next file of the plan; *skipped when its deletes leave no row (not opened) */
static int open_next(floe_scan *s, bool *skipped, floe_error *err)
{
	scan_reader *rd = s->rd;
	scan_file *f = s->files[s->next_file++];
	int rc;
	rd->f = f;
	rd->n_fields = rd->n_base;
	rd->n_eq = 0;
	floe_free(rd->pos);
	rd->pos = NULL;
	rd->n_pos = rd->pos_i = 0;
	floe_free(rd->eq);
	rd->eq = NULL;
	size_t n_eqfiles = 0;
	for (size_t i = 0; i < f->n_deletes; i++)
		n_eqfiles += f->deletes[i]->content == FLOE_CONTENT_EQUALITY_DELETES;
	if (n_eqfiles && !(rd->eq = floe_calloc(n_eqfiles, sizeof(*rd->eq))))
		return floe_error_oom(err);
	for (size_t i = 0; i < f->n_deletes; i++) {
		scan_file *d = f->deletes[i];
		if (d->content != FLOE_CONTENT_EQUALITY_DELETES)
			continue;
		const eq_delete_set *q;
		if ((rc = floe_scan__eq_set(s, d, &q, err)))
			return rc;
		rd->eq[rd->n_eq++] = q;
		size_t nid;
		const int32_t *ids = floe_scan__eq_ids(q, &nid);
		for (size_t k = 0; k < nid; k++) {
			const floe_field *tf = top_field(s->schema, ids[k]);
			if (tf && add_field(rd, tf))
				return floe_error_oom(err);
		}
	}
	if ((rc = floe_scan__positions(s, f, &rd->pos, &rd->n_pos, err)))
		return rc;
	/* an upsert table's older files are often deleted whole: nothing to read */
	*skipped = !rd->n_eq && all_deleted(rd->pos, rd->n_pos, f->record_count);
	if (*skipped) {
		s->st.files_deleted++;
		return FLOE_OK;
	}
	rd->residual_true = floe_expr_is_true(f->residual);
	if ((rc = fr_open(&rd->fr, s, f, rd->fields, rd->n_fields, M_POSITION,
			  s->o.no_row_group_pruning ? NULL : f->residual, err)))
		return rc;
	rd->open = true;
	s->st.files_read++;
	if (rd->fr.pr)
		s->st.row_groups += floe_parquet_reader_meta(rd->fr.pr)->n_row_groups;
	return FLOE_OK;
}

/* evaluate a bound, NOT-free expression on row r */
static bool eval_row(const floe_expr *e, const struct ArrowArray *batch, const scan_reader *rd,
		     const floe_schema *schema, int64_t r, int depth)
{
	switch (e->kind) {
	case FLOE_EX_TRUE: return true;
	case FLOE_EX_FALSE: return false;
	case FLOE_EX_AND:
		return eval_row(e->left, batch, rd, schema, r, depth + 1) &&
		       eval_row(e->right, batch, rd, schema, r, depth + 1);
	case FLOE_EX_OR:
		return eval_row(e->left, batch, rd, schema, r, depth + 1) ||
		       eval_row(e->right, batch, rd, schema, r, depth + 1);
	case FLOE_EX_NOT: return false;
	case FLOE_EX_PRED: break;
	}
	floe_value v;
	floe_scan__batch_value(&v, batch, rd->top_ids, rd->n_fields, schema, e->field_id, r);
	return floe_eval_value(e, &v);
}

/* the output column c for the kept rows idx[0..n) */
static int out_column(floe_scan *s, struct ArrowArray *out, const scan_col *c,
		      const struct ArrowArray *batch, const int64_t *idx, int64_t n,
		      int64_t first_pos, floe_error *err)
{
	scan_reader *rd = s->rd;
	const scan_file *f = rd->f;
	int rc;
	switch (c->kind) {
	case COL_FILE: {
		floe_value v = {.type = FLOE_T_STRING};
		v.v.bin.p = (const uint8_t *)f->path;
		v.v.bin.n = strlen(f->path);
		return floe_sa_const(out, c->type, &v, n, err);
	}
	case COL_SPEC_ID: {
		floe_value v = {.type = FLOE_T_INT};
		v.v.i32 = f->spec_id;
		return floe_sa_const(out, c->type, &v, n, err);
	}
	case COL_POS: {
		int64_t *b = floe_calloc((size_t)(n ? n : 1), sizeof(int64_t));
		if (!b)
			return floe_error_oom(err);
		for (int64_t i = 0; i < n; i++)
			b[i] = first_pos + idx[i];
		if ((rc = floe_arrow_array_init(out, 2, 0))) {
			floe_free(b);
			return floe_error_set(err, rc, "out of memory");
		}
		out->length = n;
		floe_arrow_array_set_buffer(out, 1, b);
		return FLOE_OK;
	}
	default: break;
	}
	/* a field: its top-level array in the read batch, then down the struct path */
	int32_t top = c->kind == COL_ROW_ID ? FLOE_ID_ROW_ID
		      : c->kind == COL_LAST_UPDATED_SEQ ? FLOE_ID_LAST_UPDATED_SEQ
							 : c->top_id;
	const struct ArrowArray *a = NULL;
	for (size_t i = 0; i < rd->n_fields; i++)
		if (rd->top_ids[i] == top)
			a = batch->children[i];
	if (!a)
		return floe_error_set(err, FLOE_EINVAL, "column '%s' was not read", c->name);
	if (c->kind == COL_ROW_ID || c->kind == COL_LAST_UPDATED_SEQ) {
		/* spec (row lineage): a stored null inherits first_row_id + _pos / the
		 * data sequence number */
		if ((rc = floe_sa_take(out, a, c->type, idx, n, err)))
			return rc;
		if (out->null_count && (c->kind == COL_LAST_UPDATED_SEQ || f->first_row_id >= 0)) {
			int64_t *v = (int64_t *)out->buffers[1];
			uint8_t *bits = (uint8_t *)out->buffers[0];
			for (int64_t i = 0; i < n; i++)
				if (bits && !((bits[i >> 3] >> (i & 7)) & 1)) {
					v[i] = c->kind == COL_ROW_ID ? f->first_row_id + first_pos + idx[i]
								     : f->data_seq;
					bits[i >> 3] |= (uint8_t)(1u << (i & 7));
				}
			out->null_count = 0;
		}
		return FLOE_OK;
	}
	const struct ArrowArray *chain[SCAN_MAX_DEPTH];
	const floe_type *t = top_field(s->schema, c->top_id)->type;
	for (size_t k = 0; k < c->depth; k++) {
		chain[k] = a;
		a = a->children[c->path[k]];
		t = t->fields[c->path[k]].type;
	}
	if ((rc = floe_sa_take(out, a, c->type, idx, n, err)))
		return rc;
	if (c->depth == 0)
		return FLOE_OK;
	/* a nested field is null where an enclosing struct is */
	bool any = false;
	for (int64_t i = 0; i < n && !any; i++)
		for (size_t k = 0; k < c->depth; k++)
			if (!floe_sa_valid(chain[k], idx[i]))
				any = true;
	if (!any)
		return FLOE_OK;
	uint8_t *bits = (uint8_t *)out->buffers[0];
	if (!bits) {
		bits = floe_malloc((size_t)(n + 7) / 8 + 1);
		if (!bits)
			return floe_error_oom(err);
		memset(bits, 0xff, (size_t)(n + 7) / 8 + 1);
		floe_arrow_array_set_buffer(out, 0, bits);
	}
	int64_t nulls = 0;
	for (int64_t i = 0; i < n; i++) {
		for (size_t k = 0; k < c->depth; k++)
			if (!floe_sa_valid(chain[k], idx[i]))
				bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
		nulls += !((bits[i >> 3] >> (i & 7)) & 1);
	}
	out->null_count = nulls;
	return FLOE_OK;
}

/* one read batch -> the output batch (possibly empty) */
static int process(floe_scan *s, const struct ArrowArray *batch, int64_t first_pos,
		   struct ArrowArray *out, floe_error *err)
{
	scan_reader *rd = s->rd;
	int64_t n = batch->length, k = 0;
	int rc;
	if ((size_t)n > rd->cap_idx) {
		int64_t *ni = floe_realloc(rd->idx, (size_t)n * sizeof(int64_t));
		if (!ni)
			return floe_error_oom(err);
		rd->idx = ni;
		rd->cap_idx = (size_t)n;
	}
	if (!rd->n_eq && rd->residual_true) {
		/* positions only (DVs, position deletes): the rows between one deleted
		 * position and the next are kept, a step per deleted row and per kept one */
		const uint64_t *pos = rd->pos;
		size_t pi = rd->pos_i, np = rd->n_pos;
		int64_t *idx = rd->idx;
		uint64_t lo = (uint64_t)first_pos, hi = lo + (uint64_t)n;
		while (pi < np && pos[pi] < lo)
			pi++;
		int64_t r = 0;
		for (; pi < np && pos[pi] < hi; pi++) {
			int64_t d = (int64_t)(pos[pi] - lo);
			while (r < d)
				idx[k++] = r++;
			r = d + 1;
		}
		while (r < n)
			idx[k++] = r++;
		s->st.rows_deleted += (uint64_t)(n - k);
		rd->pos_i = pi;
		n = 0; /* done: the general loop below does nothing */
	}
	for (int64_t r = 0; r < n; r++) {
		uint64_t p = (uint64_t)(first_pos + r);
		/* spec: positions are 0-based row numbers in the file */
		while (rd->pos_i < rd->n_pos && rd->pos[rd->pos_i] < p)
			rd->pos_i++;
		if (rd->pos_i < rd->n_pos && rd->pos[rd->pos_i] == p) {
			s->st.rows_deleted++;
			continue;
		}
		bool del = false;
		for (size_t q = 0; q < rd->n_eq && !del; q++)
			del = floe_scan__eq_match(rd->eq[q], batch, rd->top_ids, rd->n_fields, s->schema, r);
		if (del) {
			s->st.rows_deleted++;
			continue;
		}
		if (!rd->residual_true && !eval_row(rd->f->residual, batch, rd, s->schema, r, 0)) {
			s->st.rows_filtered++;
			continue;
		}
		rd->idx[k++] = r;
	}
	if (s->o.limit >= 0 && s->emitted + k > s->o.limit)
		k = s->o.limit - s->emitted;
	if ((rc = floe_arrow_array_init(out, 1, (int64_t)s->n_cols)))
		return floe_error_set(err, rc, "out of memory");
	out->length = k;
	out->null_count = 0;
	for (size_t c = 0; c < s->n_cols; c++)
		if ((rc = out_column(s, out->children[c], &s->cols[c], batch, rd->idx, k, first_pos,
				     err))) {
			floe_arrow_array_release(out);
			return rc;
		}
	s->emitted += k;
	s->st.rows_out += (uint64_t)k;
	return FLOE_OK;
}

int floe_scan__next(floe_scan *s, struct ArrowArray *out, bool *eof, floe_error *err)
{
	int rc;
	memset(out, 0, sizeof(*out));
	*eof = false;
	if (!s->rd && (rc = reader_init(s, err)))
		return rc;
	scan_reader *rd = s->rd;
	for (;;) {
		if (s->done || (s->o.limit >= 0 && s->emitted >= s->o.limit)) {
			*eof = true;
			return FLOE_OK;
		}
		if (!rd->open) {
			if (s->next_file >= s->n_files) {
				s->done = true;
				continue;
			}
			bool skipped = false;
			if ((rc = open_next(s, &skipped, err)))
				return rc;
			if (skipped)
				continue;
		}
		struct ArrowArray b;
		int64_t first;
		bool end;
		if ((rc = fr_next(&rd->fr, &b, &first, &end, err)))
			return rc;
		if (end) {
			fr_close(&rd->fr);
			rd->open = false;
			continue;
		}
		s->st.rows_read += (uint64_t)b.length;
		rc = process(s, &b, first, out, err);
		floe_arrow_array_release(&b);
		if (rc)
			return rc;
		if (out->length > 0)
			return FLOE_OK;
		floe_arrow_array_release(out);
	}
}
