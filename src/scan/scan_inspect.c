/*
 * scan_inspect.c — metadata tables: snapshots, history, refs,
 * metadata_log_entries, manifests, files / data_files / delete_files,
 * entries, partitions, their all_* forms over every snapshot (all_manifests,
 * all_files, all_data_files, all_delete_files, all_entries) and
 * position_deletes — with the columns and values of PyIceberg's tbl.inspect
 * (which follow Java's metadata tables), and Java's v3 data_file columns
 * (first_row_id, referenced_data_file, content_offset, content_size_in_bytes)
 * as Spark shows them; position_deletes as Java defines it.
 *
 * DESIGN: each table has an Iceberg schema (built here) and its rows are
 * appended to column builders shaped by that schema, then handed out as one
 * in-memory Arrow batch through the ordinary scan interface, so rendering
 * (table, JSON, CSV, Parquet) is shared with data scans.
 *
 * Conventions taken from PyIceberg 0.12 (pyiceberg/table/inspect.py):
 * "partition" is the struct of every partition field of the table's specs
 * (sorted by field id, result types under the current schema; for
 * "partitions", only the specs the snapshot's manifests use) and a file's
 * value goes to its own spec's fields; readable_metrics has one struct per
 * top-level column with its bounds decoded; manifests' partition summary
 * bounds are human strings of the transform; files lists live entries,
 * entries every entry; summary maps leave out "operation".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "iceberg/arrow_schema.h"
#include "io/fileio.h"
#include "scan/scan_impl.h"
#include "util/cursor.h"
#include "util/str.h"
#include "util/timeutil.h"

/* ---- column builders ---------------------------------------------------------------------- */

typedef struct colb colb;
struct colb {
	const floe_type *t;
	floe_buf valid, data, offs, vdata;
	int64_t n, nulls, children_n; /* children_n: list/map element count */
	colb *ch;
	size_t nch;
	int rc;
};

static size_t width_of(const floe_type *t)
{
	switch (t->id) {
	case FLOE_T_INT:
	case FLOE_T_DATE:
	case FLOE_T_FLOAT: return 4;
	case FLOE_T_DECIMAL:
	case FLOE_T_UUID: return 16;
	case FLOE_T_FIXED: return (size_t)t->length;
	case FLOE_T_BOOLEAN:
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
	case FLOE_T_STRUCT:
	case FLOE_T_LIST:
	case FLOE_T_MAP:
	case FLOE_T_UNKNOWN: return 0;
	default: return 8;
	}
}

static bool varbin(const floe_type *t)
{
	return t->id == FLOE_T_STRING || t->id == FLOE_T_BINARY || t->id == FLOE_T_GEOMETRY ||
	       t->id == FLOE_T_GEOGRAPHY || t->id == FLOE_T_VARIANT;
}

static void cb_reset(colb *b);

static int cb_init_(colb *b, const floe_type *t);

/* A builder for t; on failure nothing stays allocated. */
static int cb_init(colb *b, const floe_type *t)
{
	int rc = cb_init_(b, t);
	if (rc)
		cb_reset(b);
	return rc;
}

static int cb_init_(colb *b, const floe_type *t)
{
	memset(b, 0, sizeof(*b));
	b->t = t;
	floe_buf_init(&b->valid, 0);
	floe_buf_init(&b->data, 0);
	floe_buf_init(&b->offs, 0);
	floe_buf_init(&b->vdata, 0);
	if (varbin(t) || t->id == FLOE_T_LIST || t->id == FLOE_T_MAP)
		if (floe_buf_put_u32le(&b->offs, 0))
			return FLOE_ENOMEM;
	size_t nch = 0;
	if (t->id == FLOE_T_STRUCT)
		nch = t->n_fields;
	else if (t->id == FLOE_T_LIST)
		nch = 1;
	else if (t->id == FLOE_T_MAP)
		nch = 2;
	if (nch) {
		b->ch = floe_calloc(nch, sizeof(colb));
		if (!b->ch)
			return FLOE_ENOMEM;
		b->nch = nch;
		for (size_t i = 0; i < b->nch; i++) {
			const floe_type *ct = t->id == FLOE_T_STRUCT ? t->fields[i].type
					      : t->id == FLOE_T_LIST ? t->element
					      : i == 0		     ? t->key
								     : t->value;
			if (cb_init(&b->ch[i], ct))
				return FLOE_ENOMEM;
		}
	}
	return FLOE_OK;
}

static void cb_reset(colb *b)
{
	for (size_t i = 0; i < b->nch; i++)
		cb_reset(&b->ch[i]);
	floe_free(b->ch);
	floe_buf_reset(&b->valid);
	floe_buf_reset(&b->data);
	floe_buf_reset(&b->offs);
	floe_buf_reset(&b->vdata);
	memset(b, 0, sizeof(*b));
}

static void set_bit(colb *b, floe_buf *buf, int64_t i, bool v)
{
	if ((size_t)(i / 8) >= buf->len && !floe_buf_extend(buf, 1)) {
		b->rc = FLOE_ENOMEM;
		return;
	}
	if (v)
		buf->data[i / 8] |= (uint8_t)(1u << (i % 8));
}

static void slot(colb *b, bool valid)
{
	set_bit(b, &b->valid, b->n, valid);
	b->nulls += !valid;
	b->n++;
}

static void cb_null(colb *b)
{
	size_t w = width_of(b->t);
	if (b->t->id == FLOE_T_BOOLEAN)
		set_bit(b, &b->data, b->n, false);
	else if (w && !floe_buf_extend(&b->data, w))
		b->rc = FLOE_ENOMEM;
	if (varbin(b->t) || b->t->id == FLOE_T_LIST || b->t->id == FLOE_T_MAP) {
		uint32_t last = floe_load_u32le(b->offs.data + b->offs.len - 4);
		if (floe_buf_put_u32le(&b->offs, last))
			b->rc = FLOE_ENOMEM;
	}
	if (b->t->id == FLOE_T_STRUCT)
		for (size_t i = 0; i < b->nch; i++)
			cb_null(&b->ch[i]);
	slot(b, false);
}

static void cb_val(colb *b, const floe_value *v)
{
	if (!v || v->is_null) {
		cb_null(b);
		return;
	}
	size_t w = width_of(b->t);
	if (b->t->id == FLOE_T_BOOLEAN) {
		set_bit(b, &b->data, b->n, v->v.b);
	} else if (varbin(b->t)) {
		if (floe_buf_append(&b->vdata, v->v.bin.p, v->v.bin.n) ||
		    floe_buf_put_u32le(&b->offs, (uint32_t)b->vdata.len))
			b->rc = FLOE_ENOMEM;
	} else if (w) {
		uint8_t *p = floe_buf_extend(&b->data, w);
		if (!p) {
			b->rc = FLOE_ENOMEM;
		} else {
			switch (b->t->id) {
			case FLOE_T_INT:
			case FLOE_T_DATE:
				if (v->type == FLOE_T_LONG) {
					int32_t x = (int32_t)v->v.i64;
					memcpy(p, &x, 4);
				} else {
					memcpy(p, &v->v.i32, 4);
				}
				break;
			case FLOE_T_FLOAT: memcpy(p, &v->v.f32, 4); break;
			case FLOE_T_DOUBLE: memcpy(p, &v->v.f64, 8); break;
			case FLOE_T_DECIMAL: memcpy(p, &v->v.dec, 16); break;
			case FLOE_T_UUID:
			case FLOE_T_FIXED: memcpy(p, v->v.bin.p, v->v.bin.n < w ? v->v.bin.n : w); break;
			default:
				if (v->type == FLOE_T_INT || v->type == FLOE_T_DATE) {
					int64_t x = v->v.i32;
					memcpy(p, &x, 8);
				} else {
					memcpy(p, &v->v.i64, 8);
				}
				break;
			}
		}
	}
	slot(b, true);
}

static void cb_i64(colb *b, int64_t x)
{
	floe_value v = {.type = FLOE_T_LONG};
	v.v.i64 = x;
	cb_val(b, &v);
}

static void cb_i32(colb *b, int32_t x)
{
	floe_value v = {.type = FLOE_T_INT};
	v.v.i32 = x;
	cb_val(b, &v);
}

static void cb_bool(colb *b, bool x)
{
	floe_value v = {.type = FLOE_T_BOOLEAN};
	v.v.b = x;
	cb_val(b, &v);
}

static void cb_bytes(colb *b, const void *p, size_t n)
{
	floe_value v = {.type = FLOE_T_BINARY};
	v.v.bin.p = p ? p : (const uint8_t *)"";
	v.v.bin.n = n;
	cb_val(b, &v);
}

static void cb_str(colb *b, const char *s)
{
	if (!s)
		cb_null(b);
	else
		cb_bytes(b, s, strlen(s));
}

/* dst (a fresh builder of src's primitive type) gets a copy of src's values */
static void cb_copy(colb *dst, const colb *src)
{
	floe_buf_clear(&dst->offs);
	if (floe_buf_append(&dst->valid, src->valid.data, src->valid.len) ||
	    floe_buf_append(&dst->data, src->data.data, src->data.len) ||
	    floe_buf_append(&dst->offs, src->offs.data, src->offs.len) ||
	    floe_buf_append(&dst->vdata, src->vdata.data, src->vdata.len))
		dst->rc = FLOE_ENOMEM;
	dst->n = src->n;
	dst->nulls = src->nulls;
}

/* struct/list/map: children appended first, then the parent slot */
static void cb_struct_valid(colb *b)
{
	slot(b, true);
}

static void cb_list_end(colb *b)
{
	b->children_n = b->ch[0].n;
	if (floe_buf_put_u32le(&b->offs, (uint32_t)b->children_n))
		b->rc = FLOE_ENOMEM;
	slot(b, true);
}

static int cb_error(const colb *b)
{
	if (b->rc)
		return b->rc;
	for (size_t i = 0; i < b->nch; i++)
		if (cb_error(&b->ch[i]))
			return FLOE_ENOMEM;
	return FLOE_OK;
}

static int take_buf(struct ArrowArray *a, int64_t i, floe_buf *b)
{
	if (!b->data && !floe_buf_extend(b, 1))
		return FLOE_ENOMEM;
	return floe_arrow_array_take_buf(a, i, b);
}

static int cb_finish(colb *b, struct ArrowArray *out)
{
	int rc;
	bool vb = varbin(b->t), list = b->t->id == FLOE_T_LIST || b->t->id == FLOE_T_MAP;
	int64_t nbuf = b->t->id == FLOE_T_UNKNOWN ? 0 : b->t->id == FLOE_T_STRUCT ? 1 : vb ? 3 : 2;
	int64_t nch = b->t->id == FLOE_T_STRUCT ? (int64_t)b->nch : list ? 1 : 0;
	if ((rc = floe_arrow_array_init(out, nbuf, nch)))
		return rc;
	out->length = b->n;
	out->null_count = b->nulls;
	if (nbuf == 0)
		return FLOE_OK;
	if (b->nulls) {
		if ((rc = take_buf(out, 0, &b->valid)))
			goto fail;
	}
	if (vb) {
		if ((rc = take_buf(out, 1, &b->offs)) || (rc = take_buf(out, 2, &b->vdata)))
			goto fail;
	} else if (list) {
		if ((rc = take_buf(out, 1, &b->offs)))
			goto fail;
	} else if (nbuf == 2) {
		if ((rc = take_buf(out, 1, &b->data)))
			goto fail;
	}
	if (b->t->id == FLOE_T_STRUCT) {
		for (size_t i = 0; i < b->nch; i++)
			if ((rc = cb_finish(&b->ch[i], out->children[i])))
				goto fail;
	} else if (b->t->id == FLOE_T_LIST) {
		if ((rc = cb_finish(&b->ch[0], out->children[0])))
			goto fail;
	} else if (b->t->id == FLOE_T_MAP) {
		struct ArrowArray *e = out->children[0];
		if ((rc = floe_arrow_array_init(e, 1, 2)))
			goto fail;
		e->length = b->ch[0].n;
		e->null_count = 0;
		if ((rc = cb_finish(&b->ch[0], e->children[0])) ||
		    (rc = cb_finish(&b->ch[1], e->children[1])))
			goto fail;
	}
	return FLOE_OK;
fail:
	floe_arrow_array_release(out);
	return rc;
}

/* ---- schemas ------------------------------------------------------------------------------- */

typedef struct tb {
	floe_arena *a;
	floe_field *f;
	size_t n, cap;
	int32_t next_id;
	int rc;
} tb;

static const floe_type *T(floe_type_id id)
{
	return floe_type_primitive(id);
}

static void tb_add(tb *b, const char *name, const floe_type *t, bool required)
{
	if (b->rc || !t) {
		b->rc = FLOE_ENOMEM;
		return;
	}
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 16;
		floe_field *nf = floe_arena_calloc(b->a, nc, sizeof(*nf));
		if (!nf) {
			b->rc = FLOE_ENOMEM;
			return;
		}
		if (b->n)
			memcpy(nf, b->f, b->n * sizeof(*nf));
		b->f = nf;
		b->cap = nc;
	}
	b->f[b->n++] = (floe_field){b->next_id++, name, required, t, NULL, NULL, NULL};
}

static const floe_type *tb_struct(tb *b)
{
	floe_type *t = floe_arena_calloc(b->a, 1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = FLOE_T_STRUCT;
	t->fields = b->f;
	t->n_fields = b->n;
	return t;
}

static const floe_type *list_of(floe_arena *a, int32_t id, const floe_type *el, bool req)
{
	floe_type *t = el ? floe_arena_calloc(a, 1, sizeof(*t)) : NULL;
	if (!t)
		return NULL;
	t->id = FLOE_T_LIST;
	t->element_id = id;
	t->element = el;
	t->element_required = req;
	return t;
}

static const floe_type *map_of(floe_arena *a, int32_t kid, const floe_type *k, int32_t vid,
			       const floe_type *v)
{
	floe_type *t = floe_arena_calloc(a, 1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = FLOE_T_MAP;
	t->key_id = kid;
	t->key = k;
	t->value_id = vid;
	t->value = v;
	t->value_required = false;
	return t;
}

/* ---- the result: columns + one batch --------------------------------------------------------- */

static int finish(floe_scan *s, const floe_type *root, colb *rows, floe_error *err)
{
	int rc;
	struct ArrowArray batch;
	s->n_cols = root->n_fields;
	s->cols = floe_arena_calloc(&s->a, s->n_cols ? s->n_cols : 1, sizeof(scan_col));
	if (!s->cols)
		return floe_error_oom(err);
	if ((rc = floe_arrow_schema_init(&s->out_schema, "+s", "", 0, (int64_t)s->n_cols)))
		return floe_error_set(err, rc, "out of memory");
	for (size_t i = 0; i < s->n_cols; i++) {
		const floe_field *f = &root->fields[i];
		s->cols[i] = (scan_col){.kind = COL_FIELD, .name = f->name, .id = f->id, .field = f,
					.type = f->type, .required = f->required, .top_id = f->id};
		if ((rc = floe_iceberg_arrow_field(s->out_schema.children[i], f->name, f->id, f->type,
						   f->required, err)))
			return rc;
	}
	if (cb_error(rows))
		return floe_error_oom(err);
	if ((rc = cb_finish(rows, &batch)))
		return floe_error_set(err, rc, "out of memory");
	s->mem = floe_calloc(1, sizeof(*s->mem));
	if (!s->mem || !(s->mem->batches = floe_calloc(1, sizeof(struct ArrowArray)))) {
		floe_arrow_array_release(&batch);
		return floe_error_oom(err);
	}
	floe_arrow_array_move(&s->mem->batches[0], &batch);
	s->mem->n = 1;
	s->planned = true;
	return FLOE_OK;
}

/* ---- snapshots, history, refs, metadata log --------------------------------------------------- */

static int t_snapshots(floe_scan *s, floe_error *err)
{
	const floe_metadata *m = s->m;
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	colb rows;
	int rc;
	tb_add(&b, "committed_at", T(FLOE_T_TIMESTAMPTZ), true);
	tb_add(&b, "snapshot_id", T(FLOE_T_LONG), true);
	tb_add(&b, "parent_id", T(FLOE_T_LONG), false);
	tb_add(&b, "operation", T(FLOE_T_STRING), false);
	tb_add(&b, "manifest_list", T(FLOE_T_STRING), false);
	tb_add(&b, "summary", map_of(&s->a, 100, T(FLOE_T_STRING), 101, T(FLOE_T_STRING)), false);
	const floe_type *root = tb_struct(&b);
	if (b.rc || !root || cb_init(&rows, root))
		return floe_error_oom(err);
	for (size_t i = 0; i < m->n_snapshots; i++) {
		const floe_snapshot *sn = &m->snapshots[i];
		cb_i64(&rows.ch[0], sn->timestamp_ms * 1000);
		cb_i64(&rows.ch[1], sn->snapshot_id);
		if (sn->parent_id == FLOE_NO_SNAPSHOT)
			cb_null(&rows.ch[2]);
		else
			cb_i64(&rows.ch[2], sn->parent_id);
		cb_str(&rows.ch[3], floe_snapshot_summary(sn, "operation"));
		cb_str(&rows.ch[4], sn->manifest_list);
		colb *sm = &rows.ch[5];
		for (size_t k = 0; k < sn->n_summary; k++) {
			if (!strcmp(sn->summary[k].key, "operation"))
				continue;
			cb_str(&sm->ch[0], sn->summary[k].key);
			cb_str(&sm->ch[1], sn->summary[k].value);
		}
		cb_list_end(sm);
		cb_struct_valid(&rows);
	}
	rc = finish(s, root, &rows, err);
	cb_reset(&rows);
	return rc;
}

static bool is_current_ancestor(const floe_metadata *m, int64_t id)
{
	for (const floe_snapshot *x = floe_metadata_current_snapshot(m); x;
	     x = floe_metadata_parent(m, x))
		if (x->snapshot_id == id)
			return true;
	return false;
}

static int t_history(floe_scan *s, floe_error *err)
{
	const floe_metadata *m = s->m;
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	colb rows;
	int rc;
	tb_add(&b, "made_current_at", T(FLOE_T_TIMESTAMPTZ), true);
	tb_add(&b, "snapshot_id", T(FLOE_T_LONG), true);
	tb_add(&b, "parent_id", T(FLOE_T_LONG), false);
	tb_add(&b, "is_current_ancestor", T(FLOE_T_BOOLEAN), true);
	const floe_type *root = tb_struct(&b);
	if (b.rc || !root || cb_init(&rows, root))
		return floe_error_oom(err);
	for (size_t i = 0; i < m->n_snapshot_log; i++) {
		const floe_snapshot_log_entry *e = &m->snapshot_log[i];
		const floe_snapshot *sn = floe_metadata_snapshot(m, e->snapshot_id);
		cb_i64(&rows.ch[0], e->timestamp_ms * 1000);
		cb_i64(&rows.ch[1], e->snapshot_id);
		if (!sn || sn->parent_id == FLOE_NO_SNAPSHOT)
			cb_null(&rows.ch[2]);
		else
			cb_i64(&rows.ch[2], sn->parent_id);
		cb_bool(&rows.ch[3], is_current_ancestor(m, e->snapshot_id));
		cb_struct_valid(&rows);
	}
	rc = finish(s, root, &rows, err);
	cb_reset(&rows);
	return rc;
}

static int t_refs(floe_scan *s, floe_error *err)
{
	const floe_metadata *m = s->m;
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	colb rows;
	int rc;
	tb_add(&b, "name", T(FLOE_T_STRING), true);
	tb_add(&b, "type", T(FLOE_T_STRING), true);
	tb_add(&b, "snapshot_id", T(FLOE_T_LONG), true);
	tb_add(&b, "max_reference_age_in_ms", T(FLOE_T_LONG), false);
	tb_add(&b, "min_snapshots_to_keep", T(FLOE_T_INT), false);
	tb_add(&b, "max_snapshot_age_in_ms", T(FLOE_T_LONG), false);
	const floe_type *root = tb_struct(&b);
	if (b.rc || !root || cb_init(&rows, root))
		return floe_error_oom(err);
	/* refs as the metadata lists them; without refs, main from current-snapshot-id */
	bool have_main = false;
	for (size_t i = 0; i < m->n_refs; i++)
		have_main |= !strcmp(m->refs[i].name, "main");
	if (!have_main && m->current_snapshot_id != FLOE_NO_SNAPSHOT) {
		cb_str(&rows.ch[0], "main");
		cb_str(&rows.ch[1], "BRANCH");
		cb_i64(&rows.ch[2], m->current_snapshot_id);
		cb_null(&rows.ch[3]);
		cb_null(&rows.ch[4]);
		cb_null(&rows.ch[5]);
		cb_struct_valid(&rows);
	}
	for (size_t i = 0; i < m->n_refs; i++) {
		const floe_snapshot_ref *r = &m->refs[i];
		cb_str(&rows.ch[0], r->name);
		cb_str(&rows.ch[1], r->is_tag ? "TAG" : "BRANCH");
		cb_i64(&rows.ch[2], r->snapshot_id);
		if (r->max_ref_age_ms >= 0)
			cb_i64(&rows.ch[3], r->max_ref_age_ms);
		else
			cb_null(&rows.ch[3]);
		if (r->min_snapshots_to_keep >= 0)
			cb_i32(&rows.ch[4], r->min_snapshots_to_keep);
		else
			cb_null(&rows.ch[4]);
		if (r->max_snapshot_age_ms >= 0)
			cb_i64(&rows.ch[5], r->max_snapshot_age_ms);
		else
			cb_null(&rows.ch[5]);
		cb_struct_valid(&rows);
	}
	rc = finish(s, root, &rows, err);
	cb_reset(&rows);
	return rc;
}

/* the snapshot current at ts by the snapshot log (PyIceberg's snapshot_as_of_timestamp) */
static const floe_snapshot *log_as_of(const floe_metadata *m, int64_t ts)
{
	for (size_t i = m->n_snapshot_log; i-- > 0;)
		if (m->snapshot_log[i].timestamp_ms <= ts)
			return floe_metadata_snapshot(m, m->snapshot_log[i].snapshot_id);
	return NULL;
}

static int t_metadata_log(floe_scan *s, floe_error *err)
{
	const floe_metadata *m = s->m;
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	colb rows;
	int rc;
	tb_add(&b, "timestamp", T(FLOE_T_TIMESTAMPTZ), true);
	tb_add(&b, "file", T(FLOE_T_STRING), true);
	tb_add(&b, "latest_snapshot_id", T(FLOE_T_LONG), false);
	tb_add(&b, "latest_schema_id", T(FLOE_T_INT), false);
	tb_add(&b, "latest_sequence_number", T(FLOE_T_LONG), false);
	const floe_type *root = tb_struct(&b);
	if (b.rc || !root || cb_init(&rows, root))
		return floe_error_oom(err);
	/* Java's MetadataLogEntriesTable: the log, then the current file */
	for (size_t i = 0; i <= m->n_metadata_log; i++) {
		int64_t ts = i < m->n_metadata_log ? m->metadata_log[i].timestamp_ms : m->last_updated_ms;
		const char *file = i < m->n_metadata_log ? m->metadata_log[i].metadata_file
							 : m->metadata_location;
		const floe_snapshot *sn = log_as_of(m, ts);
		cb_i64(&rows.ch[0], ts * 1000);
		cb_str(&rows.ch[1], file ? file : "");
		if (sn) {
			cb_i64(&rows.ch[2], sn->snapshot_id);
			if (sn->schema_id >= 0)
				cb_i32(&rows.ch[3], sn->schema_id);
			else
				cb_null(&rows.ch[3]);
			cb_i64(&rows.ch[4], sn->sequence_number);
		} else {
			cb_null(&rows.ch[2]);
			cb_null(&rows.ch[3]);
			cb_null(&rows.ch[4]);
		}
		cb_struct_valid(&rows);
	}
	rc = finish(s, root, &rows, err);
	cb_reset(&rows);
	return rc;
}

/* ---- manifests --------------------------------------------------------------------------------- */

static const floe_snapshot *pick_snapshot(floe_scan *s, int64_t id, floe_error *err, int *rc)
{
	*rc = FLOE_OK;
	if (id < 0)
		return floe_metadata_current_snapshot(s->m);
	const floe_snapshot *sn = floe_metadata_snapshot(s->m, id);
	if (!sn)
		*rc = floe_error_set(err, FLOE_ENOTFOUND, "no snapshot %lld", (long long)id);
	return sn;
}

/* one row of the manifests table (all_manifests: ref is the snapshot listing it) */
static void put_manifest(floe_scan *s, colb *rows, floe_buf *h, const floe_manifest_file *mf,
			 const floe_snapshot *ref, bool all)
{
	bool data = mf->content == FLOE_MANIFEST_DATA;
	cb_i32(&rows->ch[0], mf->content);
	cb_str(&rows->ch[1], mf->path);
	cb_i64(&rows->ch[2], mf->length);
	cb_i32(&rows->ch[3], mf->spec_id);
	cb_i64(&rows->ch[4], mf->added_snapshot_id);
	int32_t counts[3] = {mf->added_files_count, mf->existing_files_count,
			     mf->deleted_files_count};
	for (int k = 0; k < 3; k++) {
		cb_i32(&rows->ch[5 + k], data ? counts[k] : 0);
		cb_i32(&rows->ch[8 + k], data ? 0 : counts[k]);
	}
	colb *ps = &rows->ch[11];
	const floe_partition_spec *sp = floe_metadata_spec(s->m, mf->spec_id);
	for (size_t k = 0; sp && k < mf->n_partitions && k < sp->n_fields; k++) {
		const floe_field_summary *fs = &mf->partitions[k];
		colb *e = &ps->ch[0];
		const floe_type *rt = floe_spec_field_type(sp, k, s->schema);
		const floe_schema_entry *src = floe_schema_find(s->schema, sp->fields[k].source_id);
		cb_bool(&e->ch[0], fs->contains_null);
		if (fs->contains_nan < 0)
			cb_null(&e->ch[1]);
		else
			cb_bool(&e->ch[1], fs->contains_nan == 1);
		for (int side = 0; side < 2; side++) {
			const uint8_t *p = side ? fs->upper : fs->lower;
			size_t pn = side ? fs->upper_len : fs->lower_len;
			bool has = side ? fs->has_upper : fs->has_lower;
			floe_value v;
			floe_buf_clear(h);
			/* PyIceberg: no human string for an empty (falsy) bound */
			if (!has || !pn || !rt || floe_value_from_bytes(&v, rt, p, pn, NULL) ||
			    floe_transform_human(h, &sp->fields[k].transform,
						 src ? src->type : NULL, &v)) {
				cb_null(&e->ch[2 + side]);
				continue;
			}
			cb_bytes(&e->ch[2 + side], h->data, h->len);
		}
		cb_struct_valid(e);
	}
	cb_list_end(ps);
	if (all) {
		cb_i64(&rows->ch[12], ref->snapshot_id);
		if (mf->key_metadata)
			cb_bytes(&rows->ch[13], mf->key_metadata, mf->key_metadata_len);
		else
			cb_null(&rows->ch[13]);
	}
	cb_struct_valid(rows);
}

/* manifests (all: every snapshot's, with reference_snapshot_id and key_metadata
 * as PyIceberg's all_manifests) */
static int t_manifests(floe_scan *s, int64_t snapshot_id, bool all, floe_error *err)
{
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	tb sb = {&s->a, NULL, 0, 0, 100, 0};
	colb rows;
	floe_buf h;
	int rc = FLOE_OK;
	const floe_snapshot *sn = all ? NULL : pick_snapshot(s, snapshot_id, err, &rc);
	if (rc)
		return rc;
	tb_add(&sb, "contains_null", T(FLOE_T_BOOLEAN), true);
	tb_add(&sb, "contains_nan", T(FLOE_T_BOOLEAN), false);
	tb_add(&sb, "lower_bound", T(FLOE_T_STRING), false);
	tb_add(&sb, "upper_bound", T(FLOE_T_STRING), false);
	const floe_type *summ = tb_struct(&sb);
	tb_add(&b, "content", T(FLOE_T_INT), true);
	tb_add(&b, "path", T(FLOE_T_STRING), true);
	tb_add(&b, "length", T(FLOE_T_LONG), true);
	tb_add(&b, "partition_spec_id", T(FLOE_T_INT), true);
	tb_add(&b, "added_snapshot_id", T(FLOE_T_LONG), true);
	tb_add(&b, "added_data_files_count", T(FLOE_T_INT), true);
	tb_add(&b, "existing_data_files_count", T(FLOE_T_INT), true);
	tb_add(&b, "deleted_data_files_count", T(FLOE_T_INT), true);
	tb_add(&b, "added_delete_files_count", T(FLOE_T_INT), true);
	tb_add(&b, "existing_delete_files_count", T(FLOE_T_INT), true);
	tb_add(&b, "deleted_delete_files_count", T(FLOE_T_INT), true);
	tb_add(&b, "partition_summaries", list_of(&s->a, 99, summ, true), true);
	if (all) {
		tb_add(&b, "reference_snapshot_id", T(FLOE_T_LONG), true);
		tb_add(&b, "key_metadata", T(FLOE_T_BINARY), false);
	}
	const floe_type *root = tb_struct(&b);
	if (b.rc || sb.rc || !root || cb_init(&rows, root))
		return floe_error_oom(err);
	floe_buf_init(&h, 0);
	size_t n_snaps = all ? s->m->n_snapshots : sn != NULL;
	for (size_t si = 0; si < n_snaps; si++) {
		const floe_snapshot *ref = all ? &s->m->snapshots[si] : sn;
		floe_manifest_file *mfs = NULL;
		size_t n = 0;
		if ((rc = floe_table_manifests(&mfs, &n, &s->a, s->t, ref, err)))
			goto done;
		for (size_t i = 0; i < n; i++)
			put_manifest(s, &rows, &h, &mfs[i], ref, all);
	}
	rc = finish(s, root, &rows, err);
done:
	floe_buf_reset(&h);
	cb_reset(&rows);
	return rc;
}

/* ---- files, entries, partitions ------------------------------------------------------------- */

typedef struct pfield {
	int32_t field_id;
	const char *name;
	const floe_type *type;
} pfield;

/* the files tables' columns before readable_metrics */
#define FILES_COLUMNS 21

typedef struct files_ctx {
	floe_scan *s;
	colb *rows;
	int kind; /* 0 files, 1 data files, 2 delete files, 3 entries */
	pfield *pf;
	size_t n_pf;
	const floe_manifest_file *mf;
	int rc;
	/* the projection: the builder of each column of the table (files: the
	 * data_file columns then readable_metrics; entries: status ..
	 * readable_metrics), NULL for one the caller did not ask for */
	colb *top[FILES_COLUMNS + 1];
	colb *file[FILES_COLUMNS]; /* the data_file columns (entries: data_file's fields) */
	bool metrics, split_offsets, key_metadata; /* what the manifests must decode */
} files_ctx;

/* the union of the partition fields of specs (all when ids NULL), sorted by field id */
static int partition_struct(floe_scan *s, const int32_t *spec_ids, size_t n_ids, pfield **out,
			    size_t *n, const floe_type **type)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < s->m->n_specs; i++) {
		const floe_partition_spec *sp = s->m->specs[i];
		bool use = !spec_ids;
		for (size_t k = 0; k < n_ids && !use; k++)
			use = spec_ids[k] == sp->spec_id;
		if (!use)
			continue;
		for (size_t k = 0; k < sp->n_fields; k++) {
			bool dup = false;
			for (size_t j = 0; j < *n; j++)
				dup |= (*out)[j].field_id == sp->fields[k].field_id;
			if (dup)
				continue;
			if (*n == cap) {
				size_t nc = cap ? cap * 2 : 8;
				pfield *np = floe_arena_calloc(&s->a, nc, sizeof(*np));
				if (!np)
					return FLOE_ENOMEM;
				if (*n)
					memcpy(np, *out, *n * sizeof(*np));
				*out = np;
				cap = nc;
			}
			const floe_type *rt = floe_spec_field_type(sp, k, s->schema);
			(*out)[(*n)++] = (pfield){sp->fields[k].field_id, sp->fields[k].name,
						  rt ? rt : T(FLOE_T_UNKNOWN)};
		}
	}
	/* sort by field id */
	for (size_t i = 1; i < *n; i++)
		for (size_t j = i; j > 0 && (*out)[j - 1].field_id > (*out)[j].field_id; j--) {
			pfield t = (*out)[j];
			(*out)[j] = (*out)[j - 1];
			(*out)[j - 1] = t;
		}
	tb b = {&s->a, NULL, 0, 0, 1000, 0};
	for (size_t i = 0; i < *n; i++) {
		tb_add(&b, (*out)[i].name, (*out)[i].type, false);
		if (!b.rc)
			b.f[b.n - 1].id = (*out)[i].field_id;
	}
	if (b.rc)
		return FLOE_ENOMEM;
	*type = tb_struct(&b);
	return *type ? FLOE_OK : FLOE_ENOMEM;
}

static const floe_type *readable_metrics_type(floe_scan *s)
{
	const floe_type *root = s->schema->root;
	tb b = {&s->a, NULL, 0, 0, 2000, 0};
	for (size_t i = 0; i < root->n_fields; i++) {
		const floe_type *ct = root->fields[i].type;
		tb m = {&s->a, NULL, 0, 0, 3000 + (int32_t)i * 10, 0};
		tb_add(&m, "column_size", T(FLOE_T_LONG), false);
		tb_add(&m, "value_count", T(FLOE_T_LONG), false);
		tb_add(&m, "null_value_count", T(FLOE_T_LONG), false);
		tb_add(&m, "nan_value_count", T(FLOE_T_LONG), false);
		tb_add(&m, "lower_bound", ct, false);
		tb_add(&m, "upper_bound", ct, false);
		if (m.rc)
			return NULL;
		tb_add(&b, root->fields[i].name, tb_struct(&m), true);
	}
	return b.rc ? NULL : tb_struct(&b);
}

static void put_partition(files_ctx *c, colb *pb, const floe_data_file *f)
{
	const floe_partition_spec *sp = floe_metadata_spec(c->s->m, f->spec_id);
	for (size_t i = 0; i < c->n_pf; i++) {
		const floe_value *v = NULL;
		/* PyIceberg keys the file's values by its own spec's field names */
		for (size_t k = 0; sp && k < sp->n_fields && k < f->partition.n; k++)
			if (!strcmp(sp->fields[k].name, c->pf[i].name))
				v = &f->partition.values[k];
		if (v && !v->is_null && c->pf[i].type->id == FLOE_T_UNKNOWN)
			v = NULL;
		cb_val(&pb->ch[i], v);
	}
	cb_struct_valid(pb);
}

/* absent: the manifest stores the map as null (Java and PyIceberg show null, not []) */
static void put_longs(colb *b, const floe_id_long *m, size_t n, bool absent)
{
	if (absent) {
		cb_null(b);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		cb_i32(&b->ch[0], m[i].id);
		cb_i64(&b->ch[1], m[i].value);
	}
	cb_list_end(b);
}

static void put_bytes(colb *b, const floe_id_bytes *m, size_t n, bool absent)
{
	if (absent) {
		cb_null(b);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		cb_i32(&b->ch[0], m[i].id);
		cb_bytes(&b->ch[1], m[i].p, m[i].n);
	}
	cb_list_end(b);
}

static int64_t find_l(const floe_id_long *m, size_t n, int32_t id, bool *found)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].id == id) {
			*found = true;
			return m[i].value;
		}
	*found = false;
	return 0;
}

static const floe_id_bytes *find_b(const floe_id_bytes *m, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].id == id)
			return &m[i];
	return NULL;
}

static void put_readable(files_ctx *c, colb *rm, const floe_data_file *f)
{
	const floe_type *root = c->s->schema->root;
	for (size_t i = 0; i < root->n_fields; i++) {
		const floe_field *fl = &root->fields[i];
		colb *m = &rm->ch[i];
		bool found;
		int64_t x;
		const floe_id_long *maps[4] = {f->column_sizes, f->value_counts, f->null_value_counts,
					       f->nan_value_counts};
		size_t ns[4] = {f->n_column_sizes, f->n_value_counts, f->n_null_value_counts,
				f->n_nan_value_counts};
		for (int k = 0; k < 4; k++) {
			x = find_l(maps[k], ns[k], fl->id, &found);
			if (found)
				cb_i64(&m->ch[k], x);
			else
				cb_null(&m->ch[k]);
		}
		for (int side = 0; side < 2; side++) {
			const floe_id_bytes *bb = side ? find_b(f->upper_bounds, f->n_upper_bounds, fl->id)
						       : find_b(f->lower_bounds, f->n_lower_bounds, fl->id);
			floe_value v;
			if (bb && floe_type_is_primitive(fl->type) &&
			    floe_value_from_bytes(&v, fl->type, bb->p, bb->n, NULL) == 0)
				cb_val(&m->ch[4 + side], &v);
			else
				cb_null(&m->ch[4 + side]);
		}
		cb_struct_valid(m);
	}
	cb_struct_valid(rm);
}

/* an optional long: the value, or null when it is negative (unset) */
static void put_opt_i64(colb *b, int64_t v)
{
	if (v >= 0)
		cb_i64(b, v);
	else
		cb_null(b);
}

/* a list column of longs or ints (n 0: null) */
static void put_list(colb *b, const int64_t *l, const int32_t *ints, size_t n)
{
	if (!n) {
		cb_null(b);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (l)
			cb_i64(&b->ch[0], l[i]);
		else
			cb_i32(&b->ch[0], ints[i]);
	cb_list_end(b);
}

/* data_file columns from content to content_size_in_bytes into the builders cols[0..20)
 * (+spec_id for files), skipping those that are NULL (not projected) */
static void put_file(files_ctx *c, colb *const *cols, bool files_layout, const floe_data_file *f)
{
	size_t k = 0;
	colb *o;
	if ((o = cols[k++]))
		cb_i32(o, f->content);
	if ((o = cols[k++]))
		cb_str(o, f->file_path);
	if ((o = cols[k++]))
		cb_str(o, f->file_format);
	if (files_layout && (o = cols[k++]))
		cb_i32(o, f->spec_id);
	if ((o = cols[k++]))
		put_partition(c, o, f);
	if ((o = cols[k++]))
		cb_i64(o, f->record_count);
	if ((o = cols[k++]))
		cb_i64(o, f->file_size_in_bytes);
	unsigned ab = f->absent_metrics;
	const floe_id_long *lm[4] = {f->column_sizes, f->value_counts, f->null_value_counts,
				     f->nan_value_counts};
	const size_t ln[4] = {f->n_column_sizes, f->n_value_counts, f->n_null_value_counts,
			      f->n_nan_value_counts};
	const unsigned la[4] = {FLOE_METRICS_ABSENT_COLUMN_SIZES, FLOE_METRICS_ABSENT_VALUE_COUNTS,
				FLOE_METRICS_ABSENT_NULL_COUNTS, FLOE_METRICS_ABSENT_NAN_COUNTS};
	for (int i = 0; i < 4; i++)
		if ((o = cols[k++]))
			put_longs(o, lm[i], ln[i], ab & la[i]);
	if ((o = cols[k++]))
		put_bytes(o, f->lower_bounds, f->n_lower_bounds, ab & FLOE_METRICS_ABSENT_LOWER_BOUNDS);
	if ((o = cols[k++]))
		put_bytes(o, f->upper_bounds, f->n_upper_bounds, ab & FLOE_METRICS_ABSENT_UPPER_BOUNDS);
	if ((o = cols[k++])) {
		if (f->key_metadata)
			cb_bytes(o, f->key_metadata, f->key_metadata_len);
		else
			cb_null(o);
	}
	if ((o = cols[k++]))
		put_list(o, f->split_offsets, NULL, f->n_split_offsets);
	if ((o = cols[k++]))
		put_list(o, NULL, f->equality_ids, f->n_equality_ids);
	if ((o = cols[k++])) {
		if (f->has_sort_order_id)
			cb_i32(o, f->sort_order_id);
		else
			cb_null(o);
	}
	if ((o = cols[k++]))
		put_opt_i64(o, f->content == FLOE_CONTENT_DATA ? f->first_row_id : -1);
	if ((o = cols[k++])) {
		if (f->referenced_data_file)
			cb_str(o, f->referenced_data_file);
		else
			cb_null(o);
	}
	if ((o = cols[k++]))
		put_opt_i64(o, f->content_offset);
	if ((o = cols[k++]))
		put_opt_i64(o, f->content_size_in_bytes);
}

static int on_file_entry(const floe_manifest_entry *e, void *payload)
{
	files_ctx *c = payload;
	floe_data_file f = e->file;
	floe_arena tmp;
	if (c->kind != 3 &&
	    (e->status == FLOE_ENTRY_DELETED ||
	     (c->kind != 0 && (c->kind == 1) != (f.content == FLOE_CONTENT_DATA))))
		return 0;
	floe_arena_init(&tmp, 1024);
	/* paths as the table records them, relocated like everything else */
	if (c->file[1] && !(f.file_path = floe_path_map_apply(&c->s->map, &tmp, e->file.file_path))) {
		floe_arena_reset(&tmp);
		return FLOE_ENOMEM;
	}
	colb *const *top = c->top, *o;
	if (c->kind == 3) {
		if ((o = top[0]))
			cb_i32(o, e->status);
		if ((o = top[1]))
			cb_i64(o, e->snapshot_id);
		if ((o = top[2]))
			cb_i64(o, e->sequence_number);
		if ((o = top[3]))
			put_opt_i64(o, e->file_sequence_number);
		if ((o = top[4])) {
			put_file(c, c->file, false, &f);
			cb_struct_valid(o);
		}
		if ((o = top[5]))
			put_readable(c, o, &f);
	} else {
		put_file(c, c->file, true, &f);
		if ((o = top[FILES_COLUMNS]))
			put_readable(c, o, &f);
	}
	cb_struct_valid(c->rows);
	floe_arena_reset(&tmp);
	return cb_error(c->rows) ? FLOE_ENOMEM : 0;
}

static void file_columns(floe_scan *s, tb *b, bool files_layout, const floe_type *part)
{
	floe_arena *a = &s->a;
	tb_add(b, "content", T(FLOE_T_INT), true);
	tb_add(b, "file_path", T(FLOE_T_STRING), true);
	tb_add(b, "file_format", T(FLOE_T_STRING), true);
	if (files_layout)
		tb_add(b, "spec_id", T(FLOE_T_INT), true);
	tb_add(b, "partition", part, true);
	tb_add(b, "record_count", T(FLOE_T_LONG), true);
	tb_add(b, "file_size_in_bytes", T(FLOE_T_LONG), true);
	tb_add(b, "column_sizes", map_of(a, 117, T(FLOE_T_INT), 118, T(FLOE_T_LONG)), false);
	tb_add(b, "value_counts", map_of(a, 119, T(FLOE_T_INT), 120, T(FLOE_T_LONG)), false);
	tb_add(b, "null_value_counts", map_of(a, 121, T(FLOE_T_INT), 122, T(FLOE_T_LONG)), false);
	tb_add(b, "nan_value_counts", map_of(a, 138, T(FLOE_T_INT), 139, T(FLOE_T_LONG)), false);
	tb_add(b, "lower_bounds", map_of(a, 126, T(FLOE_T_INT), 127, T(FLOE_T_BINARY)), false);
	tb_add(b, "upper_bounds", map_of(a, 129, T(FLOE_T_INT), 130, T(FLOE_T_BINARY)), false);
	tb_add(b, "key_metadata", T(FLOE_T_BINARY), false);
	tb_add(b, "split_offsets", list_of(a, 133, T(FLOE_T_LONG), true), false);
	tb_add(b, "equality_ids", list_of(a, 136, T(FLOE_T_INT), true), false);
	tb_add(b, "sort_order_id", T(FLOE_T_INT), false);
	/* Java's (v3) data_file fields, as Spark shows them */
	tb_add(b, "first_row_id", T(FLOE_T_LONG), false);
	tb_add(b, "referenced_data_file", T(FLOE_T_STRING), false);
	tb_add(b, "content_offset", T(FLOE_T_LONG), false);
	tb_add(b, "content_size_in_bytes", T(FLOE_T_LONG), false);
}

/*
 * The manifests of snapshot sn, or (sn NULL, all) of every snapshot of the
 * table, each once (Java's all_* tables read every reachable manifest once).
 */
static int gather_manifests(floe_scan *s, const floe_snapshot *sn, bool all,
			    floe_manifest_file **out, size_t *n_out, floe_error *err)
{
	floe_hmap seen;
	floe_manifest_file *acc = NULL;
	size_t n = 0, cap = 0;
	int rc = FLOE_OK;
	*out = NULL;
	*n_out = 0;
	if (!all)
		return sn ? floe_table_manifests(out, n_out, &s->a, s->t, sn, err) : FLOE_OK;
	floe_hmap_init(&seen);
	for (size_t i = 0; i < s->m->n_snapshots && !rc; i++) {
		floe_manifest_file *mfs = NULL;
		size_t k = 0;
		if ((rc = floe_table_manifests(&mfs, &k, &s->a, s->t, &s->m->snapshots[i], err)))
			break;
		for (size_t j = 0; j < k; j++) {
			bool existed;
			uint64_t *slot;
			if (floe_hmap_upsert(&seen, mfs[j].path, strlen(mfs[j].path), &slot, &existed) ||
			    (!existed && floe_array_grow((void **)&acc, &cap, sizeof(*acc), n + 1))) {
				rc = floe_error_oom(err);
				break;
			}
			if (!existed)
				acc[n++] = mfs[j];
		}
	}
	floe_hmap_reset(&seen);
	if (!rc && n) {
		*out = floe_arena_memdup(&s->a, acc, n * sizeof(*acc));
		if (!*out)
			rc = floe_error_oom(err);
		*n_out = n;
	}
	floe_free(acc);
	return rc;
}

static int walk_manifests(floe_scan *s, const floe_snapshot *sn, bool all, files_ctx *c,
			  bool deleted, floe_error *err)
{
	floe_manifest_file *mfs = NULL;
	size_t n = 0;
	int rc;
	if ((rc = gather_manifests(s, sn, all, &mfs, &n, err)))
		return rc;
	for (size_t i = 0; i < n && !rc; i++) {
		floe_input *in = NULL;
		floe_mscan_opts o = FLOE_MSCAN_OPTS_INIT;
		/* the metric maps are most of a manifest: decoded only when shown */
		o.all_metrics = o.column_sizes = c->metrics;
		o.split_offsets = c->split_offsets;
		o.key_metadata = c->key_metadata;
		o.deleted = deleted;
		c->mf = &mfs[i];
		if ((rc = floe_io_open_read_seq(floe_table_io(s->t), mfs[i].path, &in, err)))
			break;
		rc = floe_manifest_scan(in, s->m, &mfs[i], &o, c->kind == 4 ? NULL : on_file_entry, c,
					NULL, err);
		floe_input_close(in);
		if (rc == FLOE_ENOMEM && (!err || !err->code))
			rc = floe_error_oom(err);
	}
	return rc;
}

/* whether the projection (s->o.columns; NULL or "*" among them: every column) names column
 * name or a field inside it ("partition.region") */
static bool wanted(const floe_scan *s, const char *name)
{
	size_t n = strlen(name);
	if (!s->o.columns)
		return true;
	for (size_t i = 0; i < s->o.n_columns; i++) {
		const char *c = s->o.columns[i];
		if (c && (!strcmp(c, "*") || (!strncmp(c, name, n) && (c[n] == '\0' || c[n] == '.'))))
			return true;
	}
	return false;
}

/* a projected struct field ("partition.region"): a column copied from inside column top */
typedef struct nested_col {
	size_t top;	/* the struct column, an index into the projected columns */
	size_t path[4]; /* child indexes down to the field */
	size_t depth;
} nested_col;

#define MAX_NESTED_COLS 32

/* the field that the dotted name path names inside struct type t, or NULL; its child
 * indexes go to nc */
static const floe_field *nested_field(const floe_type *t, const char *path, nested_col *nc)
{
	const floe_field *f = NULL;
	nc->depth = 0;
	while (*path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (t->id != FLOE_T_STRUCT || nc->depth == sizeof(nc->path) / sizeof(nc->path[0]))
			return NULL;
		f = NULL;
		for (size_t i = 0; i < t->n_fields && !f; i++)
			if (strlen(t->fields[i].name) == n && !strncmp(t->fields[i].name, path, n)) {
				f = &t->fields[i];
				nc->path[nc->depth++] = i;
			}
		if (!f)
			return NULL;
		t = f->type;
		path += n + (dot != NULL);
	}
	return f && floe_type_is_primitive(f->type) ? f : NULL;
}

/*
 * The columns of root that the projection keeps, as a struct type (in
 * root's order, fields unchanged); keep[i] says whether column i is one. At
 * least the first column stays, so that the rows still count (COUNT(*)).
 * A projected name of a primitive field inside a struct column
 * ("partition.region", "readable_metrics.id.lower_bound") is also a column
 * of its own after them, as data scans project struct fields (nested[] says
 * where each one's values come from; they are copied once the rows are in).
 */
static const floe_type *project(floe_scan *s, const floe_type *root, bool *keep,
				nested_col *nested, size_t *n_nested)
{
	tb b = {&s->a, NULL, 0, 0, 0, 0};
	size_t n = 0;
	*n_nested = 0;
	for (size_t i = 0; i < root->n_fields; i++)
		n += (keep[i] = wanted(s, root->fields[i].name));
	if (!n && root->n_fields)
		keep[0] = true;
	for (size_t i = 0; i < root->n_fields; i++) {
		if (!keep[i])
			continue;
		tb_add(&b, root->fields[i].name, root->fields[i].type, root->fields[i].required);
		if (!b.rc)
			b.f[b.n - 1] = root->fields[i];
	}
	size_t n_top = b.n;
	for (size_t i = 0; s->o.columns && i < s->o.n_columns && !b.rc; i++) {
		const char *c = s->o.columns[i], *dot = c ? strchr(c, '.') : NULL;
		nested_col nc = {0};
		const floe_field *f = NULL;
		bool dup = false;
		if (!dot || *n_nested == MAX_NESTED_COLS)
			continue;
		for (size_t k = 0; k < b.n; k++)
			dup |= !strcmp(b.f[k].name, c);
		for (size_t k = 0; k < n_top && !f && !dup; k++)
			if (strlen(b.f[k].name) == (size_t)(dot - c) &&
			    !strncmp(b.f[k].name, c, (size_t)(dot - c)) &&
			    (f = nested_field(b.f[k].type, dot + 1, &nc)))
				nc.top = k;
		if (!f)
			continue;
		const char *name = floe_arena_strdup(&s->a, c);
		tb_add(&b, name, name ? f->type : NULL, false);
		if (!b.rc)
			b.f[b.n - 1].id = f->id;
		nested[(*n_nested)++] = nc;
	}
	return b.rc ? NULL : tb_struct(&b);
}

static int t_files(floe_scan *s, int kind, bool all, int64_t snapshot_id, floe_error *err)
{
	int rc;
	const floe_snapshot *sn = all ? NULL : pick_snapshot(s, snapshot_id, err, &rc);
	if (all)
		rc = FLOE_OK;
	if (rc)
		return rc;
	files_ctx c = {.s = s, .kind = kind};
	const floe_type *part, *rm = readable_metrics_type(s);
	if (!rm || partition_struct(s, NULL, 0, &c.pf, &c.n_pf, &part))
		return floe_error_oom(err);
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	colb rows;
	if (kind == 3) {
		tb d = {&s->a, NULL, 0, 0, 100, 0};
		file_columns(s, &d, false, part);
		tb_add(&b, "status", T(FLOE_T_INT), true);
		tb_add(&b, "snapshot_id", T(FLOE_T_LONG), true);
		tb_add(&b, "sequence_number", T(FLOE_T_LONG), true);
		tb_add(&b, "file_sequence_number", T(FLOE_T_LONG), false);
		tb_add(&b, "data_file", d.rc ? NULL : tb_struct(&d), true);
	} else {
		file_columns(s, &b, true, part);
	}
	tb_add(&b, "readable_metrics", rm, false);
	const floe_type *root = tb_struct(&b), *proj;
	bool keep[FILES_COLUMNS + 1];
	nested_col nested[MAX_NESTED_COLS];
	size_t n_nested, n_top = 0;
	if (b.rc || !root || root->n_fields > FILES_COLUMNS + 1 ||
	    !(proj = project(s, root, keep, nested, &n_nested)) || cb_init(&rows, proj))
		return floe_error_oom(err);
	c.rows = &rows;
	/* each column's builder, NULL for the columns not asked for */
	for (size_t i = 0; i < root->n_fields; i++)
		c.top[i] = keep[i] ? &rows.ch[n_top++] : NULL;
	for (size_t i = 0; i < FILES_COLUMNS; i++)
		c.file[i] = kind != 3 ? c.top[i] : c.top[4] && i < FILES_COLUMNS - 1 ? &c.top[4]->ch[i] : NULL;
	/* content, file_path, file_format[, spec_id], partition, record_count,
	 * file_size_in_bytes, the six metric maps, key_metadata, split_offsets */
	size_t maps = kind == 3 ? 6 : 7;
	c.metrics = c.top[kind == 3 ? 5 : FILES_COLUMNS] != NULL;
	for (size_t i = maps; i < maps + 6; i++)
		c.metrics |= c.file[i] != NULL;
	c.key_metadata = c.file[maps + 6] != NULL;
	c.split_offsets = c.file[maps + 7] != NULL;
	rc = walk_manifests(s, sn, all, &c, kind == 3, err);
	/* the struct fields projected as columns: every struct on their path has a slot in
	 * every row (the builders above never make one null), so the field's values line up */
	for (size_t i = 0; i < n_nested && !rc; i++) {
		const colb *from = &rows.ch[nested[i].top];
		for (size_t d = 0; d < nested[i].depth; d++)
			from = &from->ch[nested[i].path[d]];
		cb_copy(&rows.ch[n_top + i], from);
	}
	if (!rc)
		rc = finish(s, proj, &rows, err);
	cb_reset(&rows);
	return rc;
}

/* ---- position_deletes: every row of the live position delete files and DVs ---------------- */

typedef struct pdel_ctx {
	files_ctx *c;
	const floe_data_file *f; /* the delete file */
	const char *delete_path;
	bool partitioned, v3;
} pdel_ctx;

static int on_pdel_row(const char *path, size_t n, int64_t pos, void *payload)
{
	pdel_ctx *p = payload;
	colb *r = p->c->rows;
	size_t k = 0;
	cb_bytes(&r->ch[k++], path, n);
	cb_i64(&r->ch[k++], pos);
	cb_null(&r->ch[k++]); /* row: not kept by floe's or Spark's writers */
	if (p->partitioned)
		put_partition(p->c, &r->ch[k++], p->f);
	cb_i32(&r->ch[k++], p->f->spec_id);
	cb_str(&r->ch[k++], p->delete_path);
	if (p->v3) {
		const int64_t v[2] = {p->f->content_offset, p->f->content_size_in_bytes};
		for (int i = 0; i < 2; i++) {
			if (v[i] >= 0)
				cb_i64(&r->ch[k++], v[i]);
			else
				cb_null(&r->ch[k++]);
		}
	}
	cb_struct_valid(r);
	return cb_error(r) ? FLOE_ENOMEM : 0;
}

typedef struct pdel_walk {
	files_ctx *c;
	bool partitioned, v3;
	floe_error *err;
} pdel_walk;

static int on_pdel_entry(const floe_manifest_entry *e, void *payload)
{
	pdel_walk *w = payload;
	floe_scan *s = w->c->s;
	const floe_data_file *f = &e->file;
	if (e->status == FLOE_ENTRY_DELETED || f->content != FLOE_CONTENT_POSITION_DELETES)
		return 0;
	floe_arena tmp;
	floe_arena_init(&tmp, 1024);
	scan_file d;
	memset(&d, 0, sizeof(d));
	d.raw_path = f->file_path;
	d.path = floe_path_map_apply(&s->map, &tmp, f->file_path);
	d.format = f->file_format;
	d.content = f->content;
	d.spec_id = f->spec_id;
	d.spec = floe_metadata_spec(s->m, f->spec_id);
	d.record_count = f->record_count;
	d.file_size = f->file_size_in_bytes;
	d.first_row_id = -1;
	d.content_offset = f->content_offset;
	d.content_size = f->content_size_in_bytes;
	d.is_dv = !strcmp(f->file_format, "PUFFIN");
	d.referenced = f->referenced_data_file;
	pdel_ctx p = {w->c, f, d.path, w->partitioned, w->v3};
	int rc = d.path ? floe_scan__delete_rows(s, &d, on_pdel_row, &p, w->err)
			: floe_error_oom(w->err);
	floe_arena_reset(&tmp);
	return rc;
}

static int t_position_deletes(floe_scan *s, int64_t snapshot_id, floe_error *err)
{
	int rc;
	const floe_snapshot *sn = pick_snapshot(s, snapshot_id, err, &rc);
	if (rc)
		return rc;
	files_ctx c = {.s = s, .kind = 5};
	const floe_type *part;
	if (partition_struct(s, NULL, 0, &c.pf, &c.n_pf, &part))
		return floe_error_oom(err);
	/* Java's PositionDeletesTable: file_path, pos, row, partition (partitioned
	 * tables), spec_id, delete_file_path, and for v3 the DV's blob */
	pdel_walk w = {&c, c.n_pf > 0, s->m->format_version >= 3, err};
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	colb rows;
	tb_add(&b, "file_path", T(FLOE_T_STRING), true);
	tb_add(&b, "pos", T(FLOE_T_LONG), true);
	tb_add(&b, "row", s->schema->root, false);
	if (w.partitioned)
		tb_add(&b, "partition", part, false);
	tb_add(&b, "spec_id", T(FLOE_T_INT), true);
	tb_add(&b, "delete_file_path", T(FLOE_T_STRING), true);
	if (w.v3) {
		tb_add(&b, "content_offset", T(FLOE_T_LONG), false);
		tb_add(&b, "content_size_in_bytes", T(FLOE_T_LONG), false);
	}
	const floe_type *root = tb_struct(&b);
	if (b.rc || !root || cb_init(&rows, root))
		return floe_error_oom(err);
	c.rows = &rows;
	floe_manifest_file *mfs = NULL;
	size_t n = 0;
	rc = sn ? floe_table_manifests(&mfs, &n, &s->a, s->t, sn, err) : FLOE_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		floe_input *in = NULL;
		floe_mscan_opts o = FLOE_MSCAN_OPTS_INIT;
		if (mfs[i].content != FLOE_MANIFEST_DELETES)
			continue;
		if ((rc = floe_io_open_read_seq(floe_table_io(s->t), mfs[i].path, &in, err)))
			break;
		rc = floe_manifest_scan(in, s->m, &mfs[i], &o, on_pdel_entry, &w, NULL, err);
		floe_input_close(in);
		if (rc == FLOE_ENOMEM && (!err || !err->code))
			rc = floe_error_oom(err);
	}
	if (!rc)
		rc = finish(s, root, &rows, err);
	cb_reset(&rows);
	return rc;
}

/* partitions: one row per partition value (PyIceberg keys by the values only) */
typedef struct prow {
	floe_data_file f; /* the first file's partition (copied) */
	int32_t spec_id;
	int64_t record_count, file_count, data_size, pos_rc, pos_fc, eq_rc, eq_fc;
	int64_t last_at, last_id;
	bool has_last;
} prow;

typedef struct parts_ctx {
	floe_scan *s;
	floe_arena a;
	floe_hmap keys;
	prow *rows;
	size_t n, cap;
	pfield *pf;
	size_t n_pf;
	floe_buf key;
} parts_ctx;

static int partition_name_key(parts_ctx *c, const floe_data_file *f)
{
	/* the key is the partition record by field names over the union struct */
	const floe_partition_spec *sp = floe_metadata_spec(c->s->m, f->spec_id);
	floe_value *vals = floe_arena_calloc(&c->a, c->n_pf ? c->n_pf : 1, sizeof(floe_value));
	if (!vals)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < c->n_pf; i++) {
		vals[i] = floe_value_null(c->pf[i].type->id);
		for (size_t k = 0; sp && k < sp->n_fields && k < f->partition.n; k++)
			if (!strcmp(sp->fields[k].name, c->pf[i].name))
				vals[i] = f->partition.values[k];
	}
	floe_partition p = {vals, c->n_pf};
	return floe_scan__partition_key(&c->key, -1, &p);
}

static int on_part_entry(const floe_manifest_entry *e, void *payload)
{
	parts_ctx *c = payload;
	const floe_data_file *f = &e->file;
	uint64_t *slot;
	bool existed;
	if (e->status == FLOE_ENTRY_DELETED)
		return 0;
	if (partition_name_key(c, f) ||
	    floe_hmap_upsert(&c->keys, c->key.data, c->key.len, &slot, &existed))
		return FLOE_ENOMEM;
	if (!existed) {
		if (floe_array_grow((void **)&c->rows, &c->cap, sizeof(prow), c->n + 1))
			return FLOE_ENOMEM;
		prow *r = &c->rows[c->n];
		memset(r, 0, sizeof(*r));
		floe_data_file_init(&r->f);
		r->f.spec_id = f->spec_id;
		r->f.partition.n = f->partition.n;
		r->f.partition.values = floe_arena_memdup(&c->a, f->partition.values,
							  (f->partition.n ? f->partition.n : 1) *
								  sizeof(floe_value));
		if (!r->f.partition.values)
			return FLOE_ENOMEM;
		for (size_t i = 0; i < f->partition.n; i++)
			if (floe_value_own(&r->f.partition.values[i], &c->a))
				return FLOE_ENOMEM;
		r->spec_id = f->spec_id;
		*slot = c->n++;
	}
	prow *r = &c->rows[*slot];
	const floe_snapshot *sn = floe_metadata_snapshot(c->s->m, e->snapshot_id);
	if (sn && (!r->has_last || r->last_at < sn->timestamp_ms)) {
		r->last_at = sn->timestamp_ms;
		r->last_id = sn->snapshot_id;
		r->has_last = true;
	}
	switch (f->content) {
	case FLOE_CONTENT_DATA:
		r->record_count += f->record_count;
		r->file_count++;
		r->data_size += f->file_size_in_bytes;
		break;
	case FLOE_CONTENT_POSITION_DELETES:
		r->pos_rc += f->record_count;
		r->pos_fc++;
		break;
	default:
		r->eq_rc += f->record_count;
		r->eq_fc++;
		break;
	}
	return 0;
}

static int t_partitions(floe_scan *s, int64_t snapshot_id, floe_error *err)
{
	int rc;
	const floe_snapshot *sn = pick_snapshot(s, snapshot_id, err, &rc);
	if (rc)
		return rc;
	parts_ctx c;
	memset(&c, 0, sizeof(c));
	c.s = s;
	floe_arena_init(&c.a, 4096);
	floe_hmap_init(&c.keys);
	floe_buf_init(&c.key, 0);
	floe_manifest_file *mfs = NULL;
	size_t n = 0;
	int32_t *ids = NULL;
	const floe_type *part = NULL;
	colb rows;
	bool rows_init = false;
	if (sn && (rc = floe_table_manifests(&mfs, &n, &s->a, s->t, sn, err)))
		goto done;
	ids = floe_arena_calloc(&s->a, n ? n : 1, sizeof(int32_t));
	if (!ids) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = mfs[i].spec_id;
	if (partition_struct(s, ids, n, &c.pf, &c.n_pf, &part)) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		floe_input *in = NULL;
		floe_mscan_opts o = FLOE_MSCAN_OPTS_INIT;
		if ((rc = floe_io_open_read_seq(floe_table_io(s->t), mfs[i].path, &in, err)))
			break;
		rc = floe_manifest_scan(in, s->m, &mfs[i], &o, on_part_entry, &c, NULL, err);
		floe_input_close(in);
		if (rc == FLOE_ENOMEM && (!err || !err->code))
			rc = floe_error_oom(err);
	}
	if (rc)
		goto done;
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	bool partitioned = c.n_pf > 0;
	if (partitioned) {
		tb_add(&b, "partition", part, true);
		tb_add(&b, "spec_id", T(FLOE_T_INT), true);
	}
	tb_add(&b, "record_count", T(FLOE_T_LONG), true);
	tb_add(&b, "file_count", T(FLOE_T_INT), true);
	tb_add(&b, "total_data_file_size_in_bytes", T(FLOE_T_LONG), true);
	tb_add(&b, "position_delete_record_count", T(FLOE_T_LONG), true);
	tb_add(&b, "position_delete_file_count", T(FLOE_T_INT), true);
	tb_add(&b, "equality_delete_record_count", T(FLOE_T_LONG), true);
	tb_add(&b, "equality_delete_file_count", T(FLOE_T_INT), true);
	tb_add(&b, "last_updated_at", T(FLOE_T_TIMESTAMPTZ), false);
	tb_add(&b, "last_updated_snapshot_id", T(FLOE_T_LONG), false);
	const floe_type *root = tb_struct(&b);
	if (b.rc || !root || cb_init(&rows, root)) {
		rc = floe_error_oom(err);
		goto done;
	}
	rows_init = true;
	files_ctx fc = {.s = s, .rows = &rows, .pf = c.pf, .n_pf = c.n_pf};
	for (size_t i = 0; i < c.n; i++) {
		prow *r = &c.rows[i];
		size_t k = 0;
		if (partitioned) {
			put_partition(&fc, &rows.ch[k++], &r->f);
			cb_i32(&rows.ch[k++], r->spec_id);
		}
		cb_i64(&rows.ch[k++], r->record_count);
		cb_i32(&rows.ch[k++], (int32_t)r->file_count);
		cb_i64(&rows.ch[k++], r->data_size);
		cb_i64(&rows.ch[k++], r->pos_rc);
		cb_i32(&rows.ch[k++], (int32_t)r->pos_fc);
		cb_i64(&rows.ch[k++], r->eq_rc);
		cb_i32(&rows.ch[k++], (int32_t)r->eq_fc);
		if (r->has_last) {
			cb_i64(&rows.ch[k++], r->last_at * 1000);
			cb_i64(&rows.ch[k++], r->last_id);
		} else {
			cb_null(&rows.ch[k++]);
			cb_null(&rows.ch[k++]);
		}
		cb_struct_valid(&rows);
	}
	rc = finish(s, root, &rows, err);
done:
	if (rows_init)
		cb_reset(&rows);
	floe_free(c.rows);
	floe_hmap_reset(&c.keys);
	floe_buf_reset(&c.key);
	floe_arena_reset(&c.a);
	return rc;
}

/* ---- DuckDB's metadata table functions (floe sql: FROM iceberg_metadata('t')) ------------- */

/*
 * The four functions of DuckDB's iceberg extension that describe a table,
 * with its columns, names and text forms, so that a monitoring query written
 * for DuckDB gives DuckDB's answer: iceberg_metadata (one row per manifest
 * entry, deleted ones too), iceberg_snapshots, iceberg_column_stats (one row
 * per entry and primitive column, bounds as text) and
 * iceberg_partition_stats (one row per manifest and partition field, from the
 * manifest list's field summaries). Paths are shown as the table records
 * them, as DuckDB shows them.
 */

/* DuckDB's name of an Iceberg type (LogicalType::ToString) */
static int duck_type(floe_buf *b, const floe_type *t)
{
	switch (t->id) {
	case FLOE_T_BOOLEAN: return floe_buf_puts(b, "BOOLEAN");
	case FLOE_T_INT: return floe_buf_puts(b, "INTEGER");
	case FLOE_T_LONG: return floe_buf_puts(b, "BIGINT");
	case FLOE_T_FLOAT: return floe_buf_puts(b, "FLOAT");
	case FLOE_T_DOUBLE: return floe_buf_puts(b, "DOUBLE");
	case FLOE_T_DECIMAL: return floe_buf_printf(b, "DECIMAL(%d,%d)", t->precision, t->scale);
	case FLOE_T_DATE: return floe_buf_puts(b, "DATE");
	case FLOE_T_TIME: return floe_buf_puts(b, "TIME");
	case FLOE_T_TIMESTAMP: return floe_buf_puts(b, "TIMESTAMP");
	case FLOE_T_TIMESTAMPTZ: return floe_buf_puts(b, "TIMESTAMP WITH TIME ZONE");
	case FLOE_T_TIMESTAMP_NS: return floe_buf_puts(b, "TIMESTAMP_NS");
	case FLOE_T_TIMESTAMPTZ_NS: return floe_buf_puts(b, "TIMESTAMP WITH TIME ZONE");
	case FLOE_T_STRING: return floe_buf_puts(b, "VARCHAR");
	case FLOE_T_UUID: return floe_buf_puts(b, "UUID");
	case FLOE_T_FIXED:
	case FLOE_T_BINARY: return floe_buf_puts(b, "BLOB");
	case FLOE_T_VARIANT: return floe_buf_puts(b, "VARIANT");
	case FLOE_T_GEOMETRY:
	case FLOE_T_GEOGRAPHY: return floe_buf_puts(b, "GEOMETRY");
	default: return floe_buf_puts(b, "UNKNOWN");
	}
}

/* the shortest text that reads back as x (DuckDB prints floats so) */
static int duck_float(floe_buf *b, double x, bool single)
{
	char tmp[40];
	if (isnan(x))
		return floe_buf_puts(b, "nan");
	if (isinf(x))
		return floe_buf_puts(b, x < 0 ? "-inf" : "inf");
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, x);
		double back = strtod(tmp, NULL);
		if (single ? (float)back == (float)x : back == x)
			break;
	}
	return floe_buf_puts(b, tmp);
}

/* "HH:MM:SS[.ffffff]" with the fraction's trailing zeros dropped, as DuckDB prints */
static int duck_tod(floe_buf *b, int64_t us)
{
	int64_t sec = us / 1000000, frac = us % 1000000;
	if (floe_buf_printf(b, "%02lld:%02lld:%02lld", (long long)(sec / 3600),
			    (long long)(sec / 60 % 60), (long long)(sec % 60)))
		return FLOE_ENOMEM;
	if (!frac)
		return FLOE_OK;
	char f[8];
	snprintf(f, sizeof(f), "%06lld", (long long)frac);
	size_t n = 6;
	while (n > 1 && f[n - 1] == '0')
		n--;
	return floe_buf_putc(b, '.') ? FLOE_ENOMEM : floe_buf_append(b, f, n);
}

static int duck_ts(floe_buf *b, int64_t us, bool tz)
{
	char d[40];
	int64_t days = us >= 0 ? us / FLOE_US_PER_DAY : -((-us + FLOE_US_PER_DAY - 1) / FLOE_US_PER_DAY);
	size_t n = floe_format_date(d, sizeof(d), days);
	if (floe_buf_append(b, d, n) || floe_buf_putc(b, ' ') ||
	    duck_tod(b, us - days * FLOE_US_PER_DAY))
		return FLOE_ENOMEM;
	return tz ? floe_buf_puts(b, "+00") : FLOE_OK;
}

/* DuckDB's text of a value (Value::ToString) */
static int duck_value(floe_buf *b, const floe_value *v, const floe_type *t)
{
	char tmp[96];
	size_t n;
	switch (v->type) {
	case FLOE_T_FLOAT: return duck_float(b, v->v.f32, true);
	case FLOE_T_DOUBLE: return duck_float(b, v->v.f64, false);
	case FLOE_T_TIME: return duck_tod(b, v->v.i64);
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ: return duck_ts(b, v->v.i64, v->type == FLOE_T_TIMESTAMPTZ);
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		n = floe_format_timestamp_ns(tmp, sizeof(tmp), v->v.i64, 0);
		for (size_t i = 0; i < n; i++)
			if (tmp[i] == 'T')
				tmp[i] = ' ';
		if (floe_buf_append(b, tmp, n))
			return FLOE_ENOMEM;
		return v->type == FLOE_T_TIMESTAMPTZ_NS ? floe_buf_puts(b, "+00") : FLOE_OK;
	case FLOE_T_BINARY:
	case FLOE_T_FIXED:
		/* printable ASCII as itself, every other byte as \xHH */
		for (size_t i = 0; i < v->v.bin.n; i++) {
			uint8_t c = v->v.bin.p[i];
			int rc = c >= 32 && c < 127 && c != '\\' ? floe_buf_putc(b, (char)c)
								 : floe_buf_printf(b, "\\x%02X", c);
			if (rc)
				return FLOE_ENOMEM;
		}
		return FLOE_OK;
	default: return floe_value_human(b, v, t);
	}
}

/* a bound's text, or NULL (absent, or not decodable as t) */
static void put_duck_bound(colb *col, floe_buf *h, const floe_type *t, const uint8_t *p, size_t n,
			   bool has)
{
	floe_value v;
	int rc;
	floe_buf_clear(h);
	if (!has || !t || floe_value_from_bytes(&v, t, p, n, NULL)) {
		cb_null(col);
	} else if ((rc = duck_value(h, &v, t))) {
		if (rc == FLOE_ENOMEM)
			col->rc = rc; /* never a lost bound shown as NULL */
		cb_null(col);
	} else {
		cb_bytes(col, h->data, h->len);
	}
}

static const char *duck_status(int status)
{
	return status == FLOE_ENTRY_ADDED ? "ADDED" : status == FLOE_ENTRY_DELETED ? "DELETED" : "EXISTING";
}

static const char *duck_content(int content)
{
	return content == FLOE_CONTENT_POSITION_DELETES	  ? "POSITION_DELETES"
	       : content == FLOE_CONTENT_EQUALITY_DELETES ? "EQUALITY_DELETES"
							  : "DATA";
}

typedef struct duck_ctx {
	floe_scan *s;
	colb *rows;
	const floe_manifest_file *mf;
	const floe_schema *schema; /* the snapshot's */
	bool stats;                /* iceberg_column_stats, else iceberg_metadata */
	floe_buf h;
} duck_ctx;

/* DuckDB's text of a partition tuple: {'r0': v, 'r1': w} */
static int duck_partition(duck_ctx *c, const floe_data_file *f)
{
	const floe_partition_spec *sp = floe_metadata_spec(c->s->m, f->spec_id);
	floe_buf_clear(&c->h);
	if (floe_buf_putc(&c->h, '{'))
		return FLOE_ENOMEM;
	for (size_t k = 0; k < f->partition.n; k++) {
		const floe_value *v = &f->partition.values[k];
		const floe_type *rt = sp && k < sp->n_fields ? floe_spec_field_type(sp, k, c->schema) : NULL;
		if (floe_buf_printf(&c->h, "%s'r%zu': ", k ? ", " : "", k))
			return FLOE_ENOMEM;
		int rc = v->is_null ? floe_buf_puts(&c->h, "NULL") : duck_value(&c->h, v, rt);
		if (rc)
			return rc == FLOE_ENOMEM ? rc : floe_buf_puts(&c->h, "?");
	}
	return floe_buf_putc(&c->h, '}') ? FLOE_ENOMEM : FLOE_OK;
}

static int64_t stat_of(const floe_id_long *m, size_t n, int32_t id, bool *found)
{
	return find_l(m, n, id, found);
}

static int on_duck_entry(const floe_manifest_entry *e, void *payload)
{
	duck_ctx *c = payload;
	const floe_data_file *f = &e->file;
	colb *r = c->rows;
	int64_t fseq = e->file_sequence_number >= 0 ? e->file_sequence_number : c->mf->sequence_number;
	if (!c->stats) {
		cb_str(&r->ch[0], c->mf->recorded_path ? c->mf->recorded_path : c->mf->path);
		cb_i64(&r->ch[1], c->mf->sequence_number);
		cb_str(&r->ch[2], c->mf->content == FLOE_MANIFEST_DATA ? "DATA" : "DELETE");
		cb_str(&r->ch[3], duck_status(e->status));
		cb_str(&r->ch[4], duck_content(f->content));
		cb_str(&r->ch[5], f->file_path);
		cb_str(&r->ch[6], f->file_format);
		cb_i64(&r->ch[7], f->record_count);
		cb_i64(&r->ch[8], e->sequence_number);
		cb_i64(&r->ch[9], fseq);
		cb_struct_valid(r);
		return cb_error(r) ? FLOE_ENOMEM : 0;
	}
	int rc = duck_partition(c, f);
	if (rc)
		return rc;
	for (size_t i = 0; i < c->schema->n_index; i++) {
		const floe_schema_entry *se = &c->schema->index[i];
		if (!se->field || !se->type || se->type->id >= FLOE_T_STRUCT)
			continue;
		bool found;
		int64_t x;
		cb_str(&r->ch[0], duck_status(e->status));
		cb_str(&r->ch[1], duck_content(f->content));
		cb_str(&r->ch[2], f->file_path);
		cb_bytes(&r->ch[3], c->h.data, c->h.len);
		cb_str(&r->ch[4], se->full_name);
		floe_buf name;
		floe_buf_init(&name, 0);
		if (duck_type(&name, se->type)) {
			floe_buf_reset(&name);
			return FLOE_ENOMEM;
		}
		cb_bytes(&r->ch[5], name.data, name.len);
		const floe_id_bytes *lo = find_b(f->lower_bounds, f->n_lower_bounds, se->id);
		const floe_id_bytes *hi = find_b(f->upper_bounds, f->n_upper_bounds, se->id);
		put_duck_bound(&r->ch[6], &name, se->type, lo ? lo->p : NULL, lo ? lo->n : 0, lo != NULL);
		put_duck_bound(&r->ch[7], &name, se->type, hi ? hi->p : NULL, hi ? hi->n : 0, hi != NULL);
		floe_buf_reset(&name);
		const floe_id_long *maps[4] = {f->column_sizes, f->value_counts, f->null_value_counts,
					       f->nan_value_counts};
		size_t ns[4] = {f->n_column_sizes, f->n_value_counts, f->n_null_value_counts,
				f->n_nan_value_counts};
		for (int k = 0; k < 4; k++) {
			x = stat_of(maps[k], ns[k], se->id, &found);
			if (found)
				cb_i64(&r->ch[8 + k], x);
			else
				cb_null(&r->ch[8 + k]);
		}
		cb_i64(&r->ch[12], fseq);
		cb_struct_valid(r);
	}
	return cb_error(r) ? FLOE_ENOMEM : 0;
}

static int t_duck_entries(floe_scan *s, int64_t snapshot_id, bool stats, floe_error *err)
{
	int rc;
	const floe_snapshot *sn = pick_snapshot(s, snapshot_id, err, &rc);
	if (rc)
		return rc;
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	const floe_type *str = T(FLOE_T_STRING), *lng = T(FLOE_T_LONG);
	if (!stats) {
		tb_add(&b, "manifest_path", str, false);
		tb_add(&b, "manifest_sequence_number", lng, false);
		tb_add(&b, "manifest_content", str, false);
		tb_add(&b, "status", str, false);
		tb_add(&b, "content", str, false);
		tb_add(&b, "file_path", str, false);
		tb_add(&b, "file_format", str, false);
		tb_add(&b, "record_count", lng, false);
		tb_add(&b, "data_sequence_number", lng, false);
		tb_add(&b, "file_sequence_number", lng, false);
	} else {
		static const char *const names[] = {
			"status",      "content",     "file_path",   "partition",	 "column_name",
			"column_type", "lower_bound", "upper_bound", "column_size",	 "value_count",
			"null_value_count", "nan_value_count", "file_sequence_number"};
		for (size_t i = 0; i < 13; i++)
			tb_add(&b, names[i], i < 8 ? str : lng, false);
	}
	const floe_type *root = tb_struct(&b);
	colb rows;
	if (b.rc || !root || cb_init(&rows, root))
		return floe_error_oom(err);
	duck_ctx c = {s, &rows, NULL, s->schema, stats, {0}};
	if (sn && sn->schema_id >= 0 && floe_metadata_schema(s->m, sn->schema_id))
		c.schema = floe_metadata_schema(s->m, sn->schema_id);
	floe_buf_init(&c.h, 0);
	floe_manifest_file *mfs = NULL;
	size_t n = 0;
	rc = sn ? floe_table_manifests(&mfs, &n, &s->a, s->t, sn, err) : FLOE_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		floe_input *in = NULL;
		floe_mscan_opts o = FLOE_MSCAN_OPTS_INIT;
		o.all_metrics = o.column_sizes = stats;
		o.deleted = true;
		c.mf = &mfs[i];
		if ((rc = floe_io_open_read_seq(floe_table_io(s->t), mfs[i].path, &in, err)))
			break;
		rc = floe_manifest_scan(in, s->m, &mfs[i], &o, on_duck_entry, &c, NULL, err);
		floe_input_close(in);
		if (rc == FLOE_ENOMEM && (!err || !err->code))
			rc = floe_error_oom(err);
	}
	floe_buf_reset(&c.h);
	if (!rc)
		rc = finish(s, root, &rows, err);
	cb_reset(&rows);
	return rc;
}

static int t_duck_partition_stats(floe_scan *s, int64_t snapshot_id, floe_error *err)
{
	int rc;
	const floe_snapshot *sn = pick_snapshot(s, snapshot_id, err, &rc);
	if (rc)
		return rc;
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	const floe_type *str = T(FLOE_T_STRING);
	tb_add(&b, "manifest_path", str, false);
	tb_add(&b, "added_snapshot_id", T(FLOE_T_LONG), false);
	tb_add(&b, "partition_spec_id", T(FLOE_T_INT), false);
	tb_add(&b, "partition_field_id", T(FLOE_T_LONG), false);
	tb_add(&b, "partition_field_name", str, false);
	tb_add(&b, "partition_source_columns", list_of(&s->a, 100, str, false), false);
	tb_add(&b, "partition_field_transform", str, false);
	tb_add(&b, "partition_field_type", str, false);
	tb_add(&b, "lower_bound", str, false);
	tb_add(&b, "upper_bound", str, false);
	tb_add(&b, "contains_null", T(FLOE_T_BOOLEAN), false);
	tb_add(&b, "contains_nan", T(FLOE_T_BOOLEAN), false);
	const floe_type *root = tb_struct(&b);
	colb rows;
	if (b.rc || !root || cb_init(&rows, root))
		return floe_error_oom(err);
	const floe_schema *schema = s->schema;
	if (sn && sn->schema_id >= 0 && floe_metadata_schema(s->m, sn->schema_id))
		schema = floe_metadata_schema(s->m, sn->schema_id);
	floe_manifest_file *mfs = NULL;
	size_t n = 0;
	floe_buf h;
	floe_buf_init(&h, 0);
	rc = sn ? floe_table_manifests(&mfs, &n, &s->a, s->t, sn, err) : FLOE_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		const floe_manifest_file *mf = &mfs[i];
		const floe_partition_spec *sp = floe_metadata_spec(s->m, mf->spec_id);
		if (!sp) {
			rc = floe_error_corrupt(err, "manifest %s names partition spec %d, which the table does not have",
						mf->path, mf->spec_id);
			break;
		}
		for (size_t k = 0; k < mf->n_partitions && k < sp->n_fields; k++) {
			const floe_partition_field *pf = &sp->fields[k];
			const floe_field_summary *fs = &mf->partitions[k];
			const floe_schema_entry *src = floe_schema_find(schema, pf->source_id);
			const floe_type *rt = floe_spec_field_type(sp, k, schema);
			cb_str(&rows.ch[0], mf->recorded_path ? mf->recorded_path : mf->path);
			cb_i64(&rows.ch[1], mf->added_snapshot_id);
			cb_i32(&rows.ch[2], mf->spec_id);
			cb_i64(&rows.ch[3], pf->field_id);
			cb_str(&rows.ch[4], pf->name);
			cb_str(&rows.ch[5].ch[0], src && src->full_name ? src->full_name : "?");
			cb_list_end(&rows.ch[5]);
			floe_buf_clear(&h);
			if (floe_transform_format(&h, &pf->transform)) {
				rc = floe_error_oom(err);
				break;
			}
			cb_bytes(&rows.ch[6], h.data, h.len);
			floe_buf_clear(&h);
			if (rt && duck_type(&h, rt)) {
				rc = floe_error_oom(err);
				break;
			}
			if (rt)
				cb_bytes(&rows.ch[7], h.data, h.len);
			else
				cb_null(&rows.ch[7]);
			put_duck_bound(&rows.ch[8], &h, rt, fs->lower, fs->lower_len, fs->has_lower);
			put_duck_bound(&rows.ch[9], &h, rt, fs->upper, fs->upper_len, fs->has_upper);
			cb_bool(&rows.ch[10], fs->contains_null);
			cb_bool(&rows.ch[11], fs->contains_nan == 1);
			cb_struct_valid(&rows);
		}
	}
	floe_buf_reset(&h);
	if (!rc)
		rc = finish(s, root, &rows, err);
	cb_reset(&rows);
	return rc;
}

static int t_duck_snapshots(floe_scan *s, floe_error *err)
{
	const floe_metadata *m = s->m;
	tb b = {&s->a, NULL, 0, 0, 1, 0};
	colb rows;
	tb_add(&b, "sequence_number", T(FLOE_T_LONG), false);
	tb_add(&b, "snapshot_id", T(FLOE_T_LONG), false);
	tb_add(&b, "timestamp_ms", T(FLOE_T_TIMESTAMP), false);
	tb_add(&b, "manifest_list", T(FLOE_T_STRING), false);
	tb_add(&b, "operation", T(FLOE_T_STRING), false);
	const floe_type *root = tb_struct(&b);
	if (b.rc || !root || cb_init(&rows, root))
		return floe_error_oom(err);
	for (size_t i = 0; i < m->n_snapshots; i++) {
		const floe_snapshot *sn = &m->snapshots[i];
		cb_i64(&rows.ch[0], sn->sequence_number);
		cb_i64(&rows.ch[1], sn->snapshot_id);
		cb_i64(&rows.ch[2], sn->timestamp_ms * 1000);
		if (sn->manifest_list && *sn->manifest_list)
			cb_str(&rows.ch[3], sn->manifest_list);
		else
			cb_null(&rows.ch[3]);
		const char *op = floe_snapshot_summary(sn, "operation");
		cb_str(&rows.ch[4], op ? op : "append");
		cb_struct_valid(&rows);
	}
	int rc = finish(s, root, &rows, err);
	cb_reset(&rows);
	return rc;
}

int floe_scan__inspect(floe_scan *s, const char *name, int64_t snapshot_id, floe_error *err)
{
	static const char *const names[] = {
		"snapshots",	  "history",	      "refs",		"metadata_log_entries",
		"manifests",	  "files",	      "data_files",	"delete_files",
		"entries",	  "partitions",	      "all_manifests",	"all_files",
		"all_data_files", "all_delete_files", "all_entries",	"position_deletes"};
	s->meta_style = true;
	if (!strcmp(name, "duckdb.iceberg_metadata"))
		return t_duck_entries(s, snapshot_id, false, err);
	if (!strcmp(name, "duckdb.iceberg_column_stats"))
		return t_duck_entries(s, snapshot_id, true, err);
	if (!strcmp(name, "duckdb.iceberg_partition_stats"))
		return t_duck_partition_stats(s, snapshot_id, err);
	if (!strcmp(name, "duckdb.iceberg_snapshots"))
		return t_duck_snapshots(s, err);
	if (!strcmp(name, "snapshots"))
		return t_snapshots(s, err);
	if (!strcmp(name, "history"))
		return t_history(s, err);
	if (!strcmp(name, "refs"))
		return t_refs(s, err);
	if (!strcmp(name, "metadata_log_entries") || !strcmp(name, "metadata-log-entries"))
		return t_metadata_log(s, err);
	bool all = !strncmp(name, "all_", 4);
	const char *base = all ? name + 4 : name;
	if (!strcmp(base, "manifests"))
		return t_manifests(s, snapshot_id, all, err);
	if (!strcmp(base, "files"))
		return t_files(s, 0, all, snapshot_id, err);
	if (!strcmp(base, "data_files"))
		return t_files(s, 1, all, snapshot_id, err);
	if (!strcmp(base, "delete_files"))
		return t_files(s, 2, all, snapshot_id, err);
	if (!strcmp(base, "entries"))
		return t_files(s, 3, all, snapshot_id, err);
	if (!all && !strcmp(name, "partitions"))
		return t_partitions(s, snapshot_id, err);
	if (!all && !strcmp(name, "position_deletes"))
		return t_position_deletes(s, snapshot_id, err);
	floe_buf b;
	floe_buf_init(&b, 1024);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (floe_buf_printf(&b, "%s%s", i ? ", " : "", names[i]))
			break;
	int rc = floe_error_set(err, FLOE_ENOTFOUND, "no metadata table '%s' (there are: %s)", name,
				floe_buf_cstr(&b));
	floe_buf_reset(&b);
	return rc;
}
