/*
 * write_delta.c — the upsert / CDC task writer: rows with a change kind
 * (Flink's RowKind: +I, -U, +U, -D) become data files, equality deletes and
 * position deletes (v2) or deletion vectors (v3), as Iceberg Flink's
 * BaseEqualityDeltaWriter writes them.
 *
 * Per writer and checkpoint (between two complete() calls) a map holds, for
 * every key (the equality fields) changed in this checkpoint, the data file
 * and position of the row this writer inserted for it (if it still stands)
 * and whether an equality delete of the key was written:
 *
 *   insert / update-after, upsert mode:  the key is deleted first (below),
 *                                         then the row is written and mapped
 *   insert / update-after, otherwise:     a mapped row is position-deleted,
 *                                         the row written and mapped
 *   update-before:                        upsert mode: ignored (Flink: "to
 *                                         prevent deleting one row twice");
 *                                         otherwise a delete of the row
 *   delete (of the key, or of the row):   a mapped row is position-deleted
 *                                         (and unmapped); else an equality
 *                                         delete is written (once per key and
 *                                         checkpoint: Flink repeats it, which
 *                                         deletes nothing more)
 *
 * spec: equality deletes apply to data of a lower data sequence number, so
 * the rows of the same commit survive their own key's delete; position
 * deletes and DVs apply to data of the same or a lower one. The result is
 * "the last change of each key wins" whatever the mix within a checkpoint.
 *
 * DESIGN: a batch is handled in three passes. (1) The keys of every row
 * are encoded (type-exact bytes of the equality columns) into one buffer.
 * (2) Every row to insert is written at once through the data task writer
 * (a take of the insert rows when the batch mixes kinds), which reports
 * each row's file and position (floe_task_writer_write_pos). (3) The rows
 * are walked in order against the key map; the equality deletes a batch
 * needs are gathered with one take and handed to the equality delete
 * writer, the positions collected, sorted and handed to the position
 * delete / DV writer per data file. Positions name only files of this
 * writer in this checkpoint, so one DV per data file per snapshot holds
 * without merging anything.
 *
 * Memory: the key map is a floe_hmap (32-byte slots, load <= 0.7, so 46-91
 * bytes a key) plus each key's encoding (1 byte per column, then 4 bytes
 * for int/date/float, 8 for long/double/time/timestamps, 16 for decimals
 * and uuids, 4 + n for strings and binaries) in its arena (rounded up to 8):
 * about 64-110 bytes for a one-long key. It is freed at complete().
 * floe_delta_writer_key_bytes() reports it, so the caller can end a
 * checkpoint early when the keys of one grow too many.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "arrow/arrow_take.h"
#include "iceberg/arrow_schema.h"
#include "util/alloc.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/sort.h"
#include "util/thread.h"
#include "write/write_index.h"
#include "write/write_int.h"

/* Map values: bit 63 = an equality delete of the key was written in this
 * checkpoint; bit 62 = a row of this checkpoint stands for the key, at
 * file << POS_BITS | pos. */
#define V_EQ (UINT64_C(1) << 63)
#define V_ROW (UINT64_C(1) << 62)
#define POS_BITS 38
#define POS_MASK ((UINT64_C(1) << POS_BITS) - 1)
#define FILE_MAX ((UINT64_C(1) << 24) - 1)

#if defined(__GNUC__)
#define PREFETCH_READ(p) __builtin_prefetch(p)
#else
#define PREFETCH_READ(p) ((void)(p))
#endif

typedef struct keycol {
	size_t field; /* top-level position */
	const floe_type *type;
	const char *name;
	floe_write__source src; /* bound per batch */
} keycol;

struct floe_delta_writer {
	const floe_metadata *m;
	const floe_schema *schema;
	int fv;
	bool upsert;
	floe_file_namer *namer;
	floe_task_writer *data;
	floe_eq_delete_writer *eq;
	floe_pos_delete_writer *pos; /* v2 */
	floe_dv_writer *dv;          /* v3 */
	keycol *keys;
	size_t n_keys;
	floe_hmap map;
	size_t key_bytes; /* encodings held by the map */
	/* per-batch scratch */
	floe_buf kbuf;
	size_t *koff;
	size_t cap_koff;
	int64_t *ins_rows, *del_rows, *ins_pos;
	int32_t *ins_file;
	size_t cap_rows;
	uint64_t *pdel; /* file << POS_BITS | pos */
	size_t n_pdel, cap_pdel;
	int64_t *pbuf;
	size_t cap_pbuf;
	floe_delta_writer_stats stats;
	floe_delta_index *index; /* index mode: the table's key index (shared) */
	bool lazy, lazy_known; /* index mode, this checkpoint: equality deletes kept as keys */
	bool failed;
};

static bool index_lazy(floe_delta_index *ix);
static int index_apply(floe_delta_index *ix, floe_delta_writer *w, floe_error *err);

static int encode_key(floe_buf *b, const floe_value *v)
{
	int rc;
	if (v->is_null)
		return floe_buf_putc(b, 0);
	if ((rc = floe_buf_putc(b, 1)))
		return rc;
	switch (v->type) {
	case FLOE_T_BOOLEAN: return floe_buf_putc(b, v->v.b ? 1 : 0);
	case FLOE_T_INT:
	case FLOE_T_DATE: return floe_buf_put_u32le(b, (uint32_t)v->v.i32);
	case FLOE_T_FLOAT: {
		float f = v->v.f32;
		uint32_t bits;
		if (f != f)
			bits = UINT32_C(0x7fc00000);
		else
			memcpy(&bits, &f, 4);
		return floe_buf_put_u32le(b, bits);
	}
	case FLOE_T_DOUBLE: {
		double d = v->v.f64;
		uint64_t bits;
		if (d != d)
			bits = UINT64_C(0x7ff8000000000000);
		else
			memcpy(&bits, &d, 8);
		return floe_buf_put_u64le(b, bits);
	}
	case FLOE_T_DECIMAL: return floe_buf_append(b, &v->v.dec, sizeof(v->v.dec));
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
	case FLOE_T_FIXED:
	case FLOE_T_UUID:
		if (v->v.bin.n > UINT32_MAX)
			return FLOE_EINVAL;
		rc = floe_buf_put_u32le(b, (uint32_t)v->v.bin.n);
		return rc ? rc : floe_buf_append(b, v->v.bin.p, v->v.bin.n);
	default: return floe_buf_put_u64le(b, (uint64_t)v->v.i64);
	}
}

/* ---- the rules --------------------------------------------------------------- */

int floe_delta_equality_ids(const floe_schema *s, const char *names, int32_t *ids, size_t cap,
			    size_t *n, floe_error *err)
{
	*n = 0;
	if (!names || !*names) {
		if (s->n_identifier_field_ids > cap)
			return floe_error_set(err, FLOE_EINVAL, "more than %zu equality fields", cap);
		for (size_t i = 0; i < s->n_identifier_field_ids; i++)
			ids[(*n)++] = s->identifier_field_ids[i];
		return FLOE_OK;
	}
	for (const char *p = names; *p;) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *e = p;
		while (*e && *e != ',')
			e++;
		size_t len = (size_t)(e - p);
		while (len && p[len - 1] == ' ')
			len--;
		if (len) {
			char name[256];
			if (len >= sizeof(name))
				return floe_error_set(err, FLOE_EINVAL, "equality field name too long");
			memcpy(name, p, len);
			name[len] = 0;
			const floe_schema_entry *ent = floe_schema_find_name(s, name, false);
			if (!ent)
				ent = floe_schema_find_name(s, name, true);
			if (!ent)
				return floe_error_set(err, FLOE_EINVAL,
						      "equality field '%s' is not a column of the table",
						      name);
			for (size_t k = 0; k < *n; k++)
				if (ids[k] == ent->id)
					return floe_error_set(err, FLOE_EINVAL,
							      "equality field '%s' is given twice", name);
			if (*n == cap)
				return floe_error_set(err, FLOE_EINVAL, "more than %zu equality fields",
						      cap);
			ids[(*n)++] = ent->id;
		}
		p = e;
	}
	return FLOE_OK;
}

int floe_delta_check(const floe_schema *s, const floe_partition_spec *spec, int format_version,
		     const int32_t *ids, size_t n, bool upsert, floe_error *err)
{
	if (format_version < 2)
		return floe_error_set(err, FLOE_EINVAL,
				      "upsert/CDC writes need format version 2 or later: v1 tables "
				      "cannot hold delete files (create the table with format-version "
				      "2 or 3, or upgrade it: floe table set <table> "
				      "format-version=2)");
	if (!n)
		return floe_error_set(err, FLOE_EINVAL,
				      "upsert/CDC writes need equality fields: the schema has no "
				      "identifier fields, so name the key with equality-field-columns "
				      "(floe ingest --equality-fields a,b)");
	for (size_t i = 0; i < n; i++) {
		const floe_schema_entry *e = floe_schema_find(s, ids[i]);
		if (!e)
			return floe_error_set(err, FLOE_EINVAL, "equality field id %d is not in the schema",
					      ids[i]);
		if (e->parent_id != 0 || e->in_repeated || !floe_type_is_primitive(e->type) ||
		    e->type->id == FLOE_T_VARIANT || e->type->id == FLOE_T_UNKNOWN ||
		    e->type->id == FLOE_T_GEOMETRY || e->type->id == FLOE_T_GEOGRAPHY)
			return floe_error_set(err, FLOE_EINVAL,
					      "equality field '%s' must be a top-level primitive column",
					      e->full_name);
	}
	/* Flink: "In UPSERT mode, source column '%s' of partition field '%s',
	 * should be included in equality fields" — an upsert's delete carries
	 * only the key, so the key must decide the partition, else the delete
	 * lands in another partition than the row it should delete */
	for (size_t i = 0; upsert && spec && i < spec->n_fields; i++) {
		const floe_partition_field *pf = &spec->fields[i];
		if (pf->transform.kind == FLOE_TR_VOID)
			continue;
		bool in = false;
		for (size_t k = 0; k < n && !in; k++)
			in = ids[k] == pf->source_id;
		if (!in) {
			const floe_schema_entry *e = floe_schema_find(s, pf->source_id);
			const char *col = e ? e->full_name : "?";
			return floe_error_set(err, FLOE_EINVAL,
					      "equality fields must include every partition source "
					      "column: '%s' (source of partition field '%s') is not one "
					      "of them, so an upsert's delete would miss the row it "
					      "replaces; add '%s' to the equality fields "
					      "(equality-field-columns / --equality-fields)",
					      col, pf->name, col);
		}
	}
	return FLOE_OK;
}

/* ---- the writer --------------------------------------------------------------- */

int floe_delta_writer_new(floe_delta_writer **out, floe_fileio *io, const floe_metadata *m,
			  const floe_write_config *cfg, const floe_delta_writer_opts *opts,
			  floe_error *err)
{
	static const floe_delta_writer_opts dflt = FLOE_DELTA_WRITER_OPTS_INIT;
	floe_delta_writer *w;
	int rc;
	*out = NULL;
	if (!opts)
		opts = &dflt;
	if (opts->version != 1)
		return floe_error_set(err, FLOE_EINVAL, "delta writer: options version %d",
				      opts->version);
	if ((rc = floe_delta_check(floe_metadata_current_schema(m), floe_metadata_default_spec(m),
				   m->format_version, opts->equality_ids,
				   opts->equality_ids ? opts->n_equality_ids : 0, opts->upsert, err)))
		return rc;
	w = floe_calloc(1, sizeof(*w));
	if (!w)
		return floe_error_oom(err);
	floe_hmap_init(&w->map);
	floe_buf_init(&w->kbuf, 0);
	w->m = m;
	w->schema = floe_metadata_current_schema(m);
	w->fv = m->format_version;
	w->upsert = opts->upsert;
	w->index = opts->index;
	if (!w->schema) {
		rc = floe_error_set(err, FLOE_EINVAL, "delta writer: the table has no current schema");
		goto fail;
	}
	if ((rc = floe_file_namer_new(&w->namer, opts->partition_id, opts->task_id,
				      opts->operation_id, err)))
		goto fail;
	floe_task_writer_opts to = FLOE_TASK_WRITER_OPTS_INIT;
	to.budget = opts->budget;
	to.budget_bytes = opts->budget_bytes;
	to.max_open_files = opts->max_open_files;
	to.target_file_size = opts->target_file_size;
	to.namer = w->namer;
	if ((rc = floe_task_writer_new(&w->data, io, m, cfg, &to, err)))
		goto fail;
	floe_delete_writer_opts dopt = FLOE_DELETE_WRITER_OPTS_INIT;
	dopt.namer = w->namer;
	dopt.budget = opts->budget;
	dopt.budget_bytes = opts->budget_bytes;
	dopt.max_open_files = opts->max_open_files;
	dopt.target_file_size = opts->delete_target_file_size;
	dopt.equality_ids = opts->equality_ids;
	dopt.n_equality_ids = opts->n_equality_ids;
	dopt.full_rows = !opts->upsert; /* Flink: the key only in upsert mode */
	dopt.file_scoped = true;        /* Flink's BaseDeltaTaskWriter: DeleteGranularity.FILE */
	if ((rc = floe_eq_delete_writer_new(&w->eq, io, m, cfg, &dopt, err)))
		goto fail;
	if (w->fv >= 3)
		rc = floe_dv_writer_new(&w->dv, io, m, cfg, &dopt, err);
	else
		rc = floe_pos_delete_writer_new(&w->pos, io, m, cfg, &dopt, err);
	if (rc)
		goto fail;
	/* the key columns, in the order given */
	const floe_type *root = w->schema->root;
	w->keys = floe_calloc(opts->n_equality_ids, sizeof(*w->keys));
	if (!w->keys) {
		rc = floe_error_oom(err);
		goto fail;
	}
	for (size_t k = 0; k < opts->n_equality_ids; k++) {
		size_t i;
		for (i = 0; i < root->n_fields && root->fields[i].id != opts->equality_ids[k]; i++)
			;
		if (i == root->n_fields) { /* the equality delete writer checked the rest */
			rc = floe_error_set(err, FLOE_EINVAL, "equality field id %d is not a top-level "
					    "column",
					    opts->equality_ids[k]);
			goto fail;
		}
		w->keys[k].field = i;
		w->keys[k].type = root->fields[i].type;
		w->keys[k].name = root->fields[i].name;
	}
	w->n_keys = opts->n_equality_ids;
	*out = w;
	return FLOE_OK;
fail:
	floe_error_prefix(err, rc, "delta writer: ");
	floe_delta_writer_abort(w);
	return rc;
}

static int grow_rows(floe_delta_writer *w, size_t n, floe_error *err)
{
	if (n <= w->cap_rows)
		return FLOE_OK;
	size_t cap = n + n / 2 + 64;
	int64_t *a = floe_realloc(w->ins_rows, cap * sizeof(int64_t));
	if (a)
		w->ins_rows = a;
	int64_t *b = a ? floe_realloc(w->del_rows, cap * sizeof(int64_t)) : NULL;
	if (b)
		w->del_rows = b;
	int64_t *c = b ? floe_realloc(w->ins_pos, cap * sizeof(int64_t)) : NULL;
	if (c)
		w->ins_pos = c;
	int32_t *d = c ? floe_realloc(w->ins_file, cap * sizeof(int32_t)) : NULL;
	if (d)
		w->ins_file = d;
	size_t *e = d ? floe_realloc(w->koff, (cap + 1) * sizeof(size_t)) : NULL;
	if (e)
		w->koff = e;
	if (!e)
		return floe_error_oom(err);
	w->cap_rows = cap;
	return FLOE_OK;
}

/* (1) the key of every row into kbuf; koff[i]..koff[i + 1] */
static int encode_keys(floe_delta_writer *w, const struct ArrowArray *batch,
		       const struct ArrowSchema *bs, floe_error *err)
{
	floe_arrow_view root;
	int rc;
	if ((rc = floe_arrow_view_init(&root, bs, batch, err)))
		return rc;
	root.validity = NULL;
	for (size_t k = 0; k < w->n_keys; k++) {
		keycol *kc = &w->keys[k];
		if ((rc = floe_arrow_view_child(&kc->src.view, &root, bs->children[kc->field],
						batch->children[kc->field], err)) ||
		    (rc = floe_write__source_bind(&kc->src, kc->type, kc->name, err)))
			return rc;
	}
	floe_buf_clear(&w->kbuf);
	for (int64_t i = 0; i < batch->length; i++) {
		w->koff[i] = w->kbuf.len;
		for (size_t k = 0; k < w->n_keys; k++) {
			floe_value v;
			floe_write__source_value(&v, &w->keys[k].src, i);
			if ((rc = encode_key(&w->kbuf, &v)))
				return rc == FLOE_EINVAL
					       ? floe_error_set(err, rc, "key column '%s': value too long",
								w->keys[k].name)
					       : floe_error_oom(err);
		}
	}
	w->koff[batch->length] = w->kbuf.len;
	return FLOE_OK;
}

static int note_pos(floe_delta_writer *w, uint64_t v, floe_error *err)
{
	if (FLOE_ARRAY_RESERVE(w->pdel, w->cap_pdel, w->n_pdel + 1))
		return floe_error_oom(err);
	w->pdel[w->n_pdel++] = v & ~(V_EQ | V_ROW);
	return FLOE_OK;
}

/* Hand the collected positions to the position delete / DV writer, one
 * call per data file. */
static int flush_positions(floe_delta_writer *w, floe_error *err)
{
	int rc = FLOE_OK;
	if (!w->n_pdel)
		return FLOE_OK;
	floe_sort_u64(w->pdel, w->n_pdel);
	if (w->n_pdel > w->cap_pbuf) {
		int64_t *nb = floe_realloc(w->pbuf, w->n_pdel * sizeof(int64_t));
		if (!nb)
			return floe_error_oom(err);
		w->pbuf = nb;
		w->cap_pbuf = w->n_pdel;
	}
	for (size_t i = 0; i < w->n_pdel && !rc;) {
		uint64_t file = w->pdel[i] >> POS_BITS;
		size_t n = 0;
		while (i < w->n_pdel && (w->pdel[i] >> POS_BITS) == file)
			w->pbuf[n++] = (int64_t)(w->pdel[i++] & POS_MASK);
		floe_written_file wf;
		if (floe_task_writer_file(w->data, (int32_t)file, &wf))
			return floe_error_set(err, FLOE_EINVAL, "internal: no data file %llu",
					      (unsigned long long)file);
		if (w->dv)
			rc = floe_dv_writer_delete(w->dv, wf.path, wf.spec_id, wf.partition, w->pbuf, n,
						   err);
		else
			rc = floe_pos_delete_writer_delete(w->pos, wf.path, wf.spec_id, wf.partition,
							   w->pbuf, n, err);
		w->stats.position_deletes += (int64_t)n;
	}
	w->n_pdel = 0;
	return rc;
}

/* A delete of the key of row r (upsert) or of row r (otherwise). */
static int delete_key(floe_delta_writer *w, uint64_t *val, int64_t r, size_t *n_del,
		      floe_error *err)
{
	int rc;
	if (*val & V_ROW) {
		if ((rc = note_pos(w, *val, err)))
			return rc;
		*val &= V_EQ;
		return FLOE_OK;
	}
	if (!(*val & V_EQ)) {
		/* index mode: the row the table holds for the key gets its DV bit
		 * too (looked up with the checkpoint's other keys at complete());
		 * the equality delete is the fallback (stream_coord.c) */
		if (!w->lazy) /* lazy: the key, kept at complete(), is the fallback */
			w->del_rows[(*n_del)++] = r;
		*val |= V_EQ;
	}
	return FLOE_OK;
}

static int write_batch(floe_delta_writer *w, const struct ArrowArray *batch,
		       const struct ArrowSchema *bs, const uint8_t *kinds, floe_error *err)
{
	int64_t n = batch->length;
	size_t n_ins = 0, n_del = 0;
	int rc;
	if ((rc = floe_arrow_check(bs, batch, err)))
		return rc;
	if (strcmp(bs->format, "+s") != 0 ||
	    bs->n_children != (int64_t)w->schema->root->n_fields)
		return floe_error_set(err, FLOE_EINVAL,
				      "a batch must be a struct of the table's %zu top-level fields",
				      w->schema->root->n_fields);
	if (n == 0)
		return FLOE_OK;
	if ((rc = grow_rows(w, (size_t)n, err)) || (rc = encode_keys(w, batch, bs, err)))
		return rc;
	if (w->index && !w->lazy_known) { /* one choice for the whole checkpoint */
		w->lazy = w->upsert && index_lazy(w->index);
		w->lazy_known = true;
	}
	for (int64_t i = 0; i < n; i++) {
		uint8_t k = kinds ? kinds[i] : FLOE_ROW_INSERT;
		if (k == FLOE_ROW_INSERT || k == FLOE_ROW_UPDATE_AFTER)
			w->ins_rows[n_ins++] = i;
		else if (k != FLOE_ROW_UPDATE_BEFORE && k != FLOE_ROW_DELETE)
			return floe_error_set(err, FLOE_EINVAL, "row %lld: unknown change kind %u",
					      (long long)i, k);
	}
	/* (2) the rows to insert, all at once */
	if (n_ins == (size_t)n) {
		rc = floe_task_writer_write_pos(w->data, batch, bs, w->ins_file, w->ins_pos, err);
	} else if (n_ins) {
		struct ArrowArray ins;
		if ((rc = floe_arrow_take(&ins, bs, batch, w->ins_rows, (int64_t)n_ins, err)))
			return rc;
		rc = floe_task_writer_write_pos(w->data, &ins, bs, w->ins_file, w->ins_pos, err);
		floe_arrow_array_release(&ins);
	}
	if (rc)
		return rc;
	/* (3) the changes in order against the key map */
	size_t next_ins = 0;
	for (int64_t i = 0; i < n; i++) {
		uint8_t k = kinds ? kinds[i] : FLOE_ROW_INSERT;
		if (k == FLOE_ROW_UPDATE_BEFORE && w->upsert)
			continue; /* Flink: -U is not needed in upsert mode */
		const uint8_t *key = w->kbuf.data + w->koff[i];
		size_t klen = w->koff[i + 1] - w->koff[i];
		uint64_t *val;
		bool existed = false;
		if (floe_hmap_upsert(&w->map, key, klen, &val, &existed))
			return floe_error_oom(err);
		if (!existed) {
			*val = 0;
			w->key_bytes += (klen + 7) & ~(size_t)7;
			w->stats.keys++;
		}
		if (k == FLOE_ROW_INSERT || k == FLOE_ROW_UPDATE_AFTER) {
			if (w->upsert) {
				if ((rc = delete_key(w, val, i, &n_del, err)))
					return rc;
			} else if (*val & V_ROW) {
				if ((rc = note_pos(w, *val, err)))
					return rc;
			}
			uint64_t file = (uint64_t)w->ins_file[next_ins], pos = (uint64_t)w->ins_pos[next_ins];
			next_ins++;
			if (file > FILE_MAX || pos > POS_MASK)
				return floe_error_set(err, FLOE_EINVAL,
						      "too many files or rows in one checkpoint");
			*val = (*val & V_EQ) | V_ROW | file << POS_BITS | pos;
			w->stats.rows++;
		} else {
			if ((rc = delete_key(w, val, i, &n_del, err)))
				return rc;
		}
	}
	/* the equality deletes: the rows' keys (upsert) or the rows */
	if (n_del) {
		struct ArrowArray dels;
		if ((rc = floe_arrow_take(&dels, bs, batch, w->del_rows, (int64_t)n_del, err)))
			return rc;
		rc = floe_eq_delete_writer_write(w->eq, &dels, bs, err);
		floe_arrow_array_release(&dels);
		if (rc)
			return rc;
		w->stats.equality_deletes += (int64_t)n_del;
	}
	return flush_positions(w, err);
}

int floe_delta_writer_write(floe_delta_writer *w, const struct ArrowArray *batch,
			    const struct ArrowSchema *schema, const uint8_t *kinds, floe_error *err)
{
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "delta writer: failed earlier (abort it)");
	if ((rc = write_batch(w, batch, schema, kinds, err))) {
		w->failed = true;
		return floe_error_prefix(err, rc, "delta writer: ");
	}
	return FLOE_OK;
}

int floe_delta_writer_complete(floe_delta_writer *w, floe_data_file **files, size_t *n,
			       floe_data_file **replaced, size_t *n_replaced, floe_arena *a,
			       floe_error *err)
{
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "delta writer: failed earlier (abort it)");
	/* the position deletes name the data files: both before the data
	 * writer forgets its files */
	size_t n0 = *n;
	rc = w->index ? index_apply(w->index, w, err) : FLOE_OK;
	if (!rc && w->dv)
		rc = floe_dv_writer_complete(w->dv, files, n, replaced, n_replaced, a, err);
	else if (!rc)
		rc = floe_pos_delete_writer_complete(w->pos, files, n, a, err);
	for (size_t i = n0; w->index && w->dv && i < *n && !rc; i++) {
		const floe_data_file *d = &(*files)[i];
		if (d->referenced_data_file)
			rc = floe_delta_index_add_file(w->index, d->referenced_data_file, d->spec_id,
						       &d->partition, d, err);
	}
	size_t n1 = *n;
	if (!rc)
		rc = floe_eq_delete_writer_complete(w->eq, files, n, a, err);
	for (size_t i = n1; w->index && !rc && i < *n; i++)
		(*files)[i].absent_metrics |= FLOE_DELTA_TAG_FALLBACK;
	if (!rc)
		rc = floe_task_writer_complete(w->data, files, n, a, err);
	if (rc) {
		w->failed = true;
		return floe_error_prefix(err, rc, "delta writer: ");
	}
	floe_hmap_reset(&w->map);
	floe_hmap_init(&w->map);
	w->key_bytes = 0;
	w->lazy_known = false;
	return FLOE_OK;
}

size_t floe_delta_writer_key_bytes(const floe_delta_writer *w)
{
	return w->map.cap * sizeof(floe_hmap_slot) + w->key_bytes;
}

size_t floe_delta_writer_buffered(const floe_delta_writer *w)
{
	return floe_task_writer_buffered(w->data) + floe_eq_delete_writer_buffered(w->eq) +
	       (w->dv ? floe_dv_writer_buffered(w->dv) : floe_pos_delete_writer_buffered(w->pos)) +
	       floe_delta_writer_key_bytes(w);
}

void floe_delta_writer_get_stats(const floe_delta_writer *w, floe_delta_writer_stats *out)
{
	*out = w->stats;
	out->key_bytes = floe_delta_writer_key_bytes(w);
}

void floe_delta_writer_abort(floe_delta_writer *w)
{
	if (!w)
		return;
	floe_task_writer_abort(w->data);
	floe_eq_delete_writer_abort(w->eq);
	floe_pos_delete_writer_abort(w->pos);
	floe_dv_writer_abort(w->dv);
	floe_file_namer_free(w->namer);
	floe_hmap_reset(&w->map);
	floe_buf_reset(&w->kbuf);
	floe_free(w->keys);
	floe_free(w->koff);
	floe_free(w->ins_rows);
	floe_free(w->del_rows);
	floe_free(w->ins_pos);
	floe_free(w->ins_file);
	floe_free(w->pdel);
	floe_free(w->pbuf);
	floe_free(w);
}

void floe_delta_writer_free(floe_delta_writer *w)
{
	floe_delta_writer_abort(w);
}

/* ---- index mode: the table's key index (write.upsert.mode=index) ---------------- */

typedef struct ix_file {
	floe_data_file df; /* path, spec, partition (copied) */
	floe_data_file dv; /* its live DV (v3), when has_dv */
	bool has_dv;
	bool gone; /* persist hook: no longer in the table (its entries are dead rows) */
	uint64_t merged; /* == gen: this checkpoint's DV holds the previous one */
	int64_t *pend;   /* positions deleted by the batch being looked up (heap) */
	size_t n_pend, cap_pend;
} ix_file;

struct floe_delta_index {
	floe_mutex mu;
	const floe_metadata *m;
	int fv;
	keycol *keys;
	size_t n_keys;
	bool exact;
	floe_key_index **parts;
	size_t n_parts;
	ix_file *files;
	size_t n_files, cap_files;
	floe_hmap by_path;
	floe_arena a;
	floe_file_namer *namer;
	floe_dv_writer *dv;
	floe_pos_delete_writer *pos;
	uint64_t gen;       /* checkpoints completed + 1 (ix_file.merged) */
	/* lazy fallback (exact keys): the keys whose equality deletes the
	 * writers did not write — this checkpoint's so far, and the sealed
	 * checkpoint's, which floe_delta_index_fallback turns into equality
	 * delete files only when its commit cannot take the DVs */
	bool lazy;
	floe_fileio *io;
	floe_write_config cfg;
	int32_t *eq_ids;
	struct ix_kept {
		int64_t *v;
		size_t n, cap;
		bool null_key;
	} kept, sealed;
	uint32_t *touched; /* files with pending positions */
	size_t n_touched, cap_touched;
	floe_buf kbuf;
	size_t *koff; /* floe_delta_index_load: the batch's keys in kbuf */
	size_t cap_koff;
	int64_t hits, deletes;
	size_t part_budget;
	char spill_dir[512];
	/* keys with more than one live row (another writer appended the key):
	 * key → first of its extra rows in dup (a chain through dup[i].next) */
	floe_hmap dup_keys;
	struct ix_dup {
		uint32_t fid;
		uint64_t pos;
		size_t next; /* SIZE_MAX: end */
	} *dup;
	size_t n_dup, cap_dup;
	bool load_replace; /* persist hook: a loaded row replaces the key's entry */
};

int floe_delta_index_new(floe_delta_index **out, floe_fileio *io, const floe_metadata *m,
			 const floe_write_config *cfg, const floe_delta_index_opts *o,
			 floe_error *err)
{
	int rc;
	*out = NULL;
	floe_delta_index *ix = floe_calloc(1, sizeof(*ix));
	if (!ix)
		return floe_error_oom(err);
	if (floe_mutex_init(&ix->mu)) {
		floe_free(ix);
		return floe_error_oom(err);
	}
	floe_hmap_init(&ix->by_path);
	floe_hmap_init(&ix->dup_keys);
	ix->gen = 1;
	floe_arena_init(&ix->a, 65536);
	floe_buf_init(&ix->kbuf, 0);
	ix->m = m;
	ix->fv = m->format_version;
	ix->io = io;
	ix->cfg = *cfg; /* its strings are the caller's, which outlives the index */
	const floe_type *root = floe_metadata_current_schema(m)->root;
	ix->keys = floe_calloc(o->n_equality_ids + 1, sizeof(*ix->keys));
	ix->n_parts = o->n_parts ? o->n_parts : 1;
	ix->parts = floe_calloc(ix->n_parts, sizeof(*ix->parts));
	if (!ix->keys || !ix->parts) {
		rc = floe_error_oom(err);
		goto fail;
	}
	ix->exact = o->n_equality_ids == 1;
	if (!(ix->eq_ids = floe_calloc(o->n_equality_ids + 1, sizeof(int32_t)))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	memcpy(ix->eq_ids, o->equality_ids, o->n_equality_ids * sizeof(int32_t));
	for (size_t k = 0; k < o->n_equality_ids; k++) {
		size_t i;
		for (i = 0; i < root->n_fields && root->fields[i].id != o->equality_ids[k]; i++)
			;
		if (i == root->n_fields) {
			rc = floe_error_set(err, FLOE_EINVAL, "equality field id %d is not a top-level "
					    "column", o->equality_ids[k]);
			goto fail;
		}
		ix->keys[k].field = i;
		ix->keys[k].type = root->fields[i].type;
		ix->keys[k].name = root->fields[i].name;
		switch (root->fields[i].type->id) {
		case FLOE_T_INT:
		case FLOE_T_DATE:
		case FLOE_T_LONG:
		case FLOE_T_TIME:
		case FLOE_T_TIMESTAMP:
		case FLOE_T_TIMESTAMPTZ:
		case FLOE_T_TIMESTAMP_NS:
		case FLOE_T_TIMESTAMPTZ_NS: break;
		default: ix->exact = false;
		}
	}
	ix->n_keys = o->n_equality_ids;
	ix->lazy = ix->exact;
	ix->part_budget = o->memory / ix->n_parts;
	snprintf(ix->spill_dir, sizeof(ix->spill_dir), "%s", o->spill_dir ? o->spill_dir : "");
	for (size_t i = 0; i < ix->n_parts; i++)
		if ((rc = floe_key_index_new(&ix->parts[i], ix->exact, ix->part_budget,
					     ix->spill_dir, err)))
			goto fail;
	if ((rc = floe_file_namer_new(&ix->namer, o->partition_id, o->task_id, o->operation_id,
				      err)))
		goto fail;
	floe_delete_writer_opts dopt = FLOE_DELETE_WRITER_OPTS_INIT;
	dopt.namer = ix->namer;
	dopt.file_scoped = true;
	if (ix->fv >= 3)
		rc = floe_dv_writer_new(&ix->dv, io, m, cfg, &dopt, err);
	else
		rc = floe_pos_delete_writer_new(&ix->pos, io, m, cfg, &dopt, err);
	if (rc)
		goto fail;
	*out = ix;
	return FLOE_OK;
fail:
	floe_delta_index_free(ix);
	return floe_error_prefix(err, rc, "key index: ");
}

void floe_delta_index_free(floe_delta_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; ix->parts && i < ix->n_parts; i++)
		floe_key_index_free(ix->parts[i]);
	floe_free(ix->parts);
	floe_free(ix->keys);
	for (size_t i = 0; i < ix->n_files; i++)
		floe_free(ix->files[i].pend);
	floe_free(ix->files);
	floe_free(ix->touched);
	floe_free(ix->eq_ids);
	floe_free(ix->kept.v);
	floe_free(ix->sealed.v);
	floe_hmap_reset(&ix->by_path);
	floe_hmap_reset(&ix->dup_keys);
	floe_free(ix->dup);
	floe_arena_reset(&ix->a);
	floe_buf_reset(&ix->kbuf);
	floe_free(ix->koff);
	floe_dv_writer_abort(ix->dv);
	floe_pos_delete_writer_abort(ix->pos);
	floe_file_namer_free(ix->namer);
	floe_mutex_destroy(&ix->mu);
	floe_free(ix);
}

int floe_delta_index_clear(floe_delta_index *ix, floe_error *err)
{
	int rc = FLOE_OK;
	floe_mutex_lock(&ix->mu);
	for (size_t i = 0; i < ix->n_parts && !rc; i++) {
		floe_key_index_stats st;
		floe_key_index_get_stats(ix->parts[i], &st);
		(void)st;
		floe_key_index_free(ix->parts[i]);
		ix->parts[i] = NULL;
		rc = floe_key_index_new(&ix->parts[i], ix->exact, ix->part_budget, ix->spill_dir,
					err);
	}
	for (size_t i = 0; i < ix->n_files; i++)
		floe_free(ix->files[i].pend);
	floe_free(ix->kept.v);
	floe_free(ix->sealed.v);
	memset(&ix->kept, 0, sizeof(ix->kept));
	memset(&ix->sealed, 0, sizeof(ix->sealed));
	ix->n_files = 0;
	ix->n_touched = 0;
	ix->n_dup = 0;
	floe_hmap_reset(&ix->dup_keys);
	floe_hmap_init(&ix->dup_keys);
	floe_hmap_reset(&ix->by_path);
	floe_hmap_init(&ix->by_path);
	floe_arena_reset(&ix->a);
	floe_arena_init(&ix->a, 65536);
	floe_mutex_unlock(&ix->mu);
	return rc;
}

/* The partition of a key: floe_hash64 of its encoding (as floe_hmap hashes
 * it, so a writer's map slot gives it without hashing again). */
static floe_key_index *part_of(floe_delta_index *ix, const uint8_t *key, size_t klen)
{
	return ix->parts[floe_hash64(key, klen) % ix->n_parts];
}

/* The registry id of a data file (added when new). Locked by the caller. */
static int file_id(floe_delta_index *ix, const char *path, int32_t spec_id,
		   const floe_partition *part, uint32_t *id, floe_error *err)
{
	uint64_t v;
	if (floe_hmap_get_str(&ix->by_path, path, &v)) {
		*id = (uint32_t)v;
		return FLOE_OK;
	}
	if (ix->n_files >= FLOE_KEY_INDEX_MAX_FILES)
		return floe_error_set(err, FLOE_EINVAL, "key index: more than %llu data files",
				      (unsigned long long)FLOE_KEY_INDEX_MAX_FILES);
	if (FLOE_ARRAY_RESERVE(ix->files, ix->cap_files, ix->n_files + 1))
		return floe_error_oom(err);
	ix_file *f = &ix->files[ix->n_files];
	memset(f, 0, sizeof(*f));
	floe_data_file d;
	floe_data_file_init(&d);
	d.content = FLOE_CONTENT_DATA;
	d.file_path = path;
	d.spec_id = spec_id;
	if (part)
		d.partition = *part;
	if (floe_data_file_copy(&f->df, &ix->a, &d) ||
	    floe_hmap_put_str(&ix->by_path, f->df.file_path, ix->n_files))
		return floe_error_oom(err);
	*id = (uint32_t)ix->n_files++;
	return FLOE_OK;
}

int floe_delta_index_add_file(floe_delta_index *ix, const char *path, int32_t spec_id,
			      const floe_partition *partition, const floe_data_file *dv,
			      floe_error *err)
{
	uint32_t id;
	int rc;
	floe_mutex_lock(&ix->mu);
	rc = file_id(ix, path, spec_id, partition, &id, err);
	if (!rc && dv) {
		ix->files[id].has_dv = floe_data_file_copy(&ix->files[id].dv, &ix->a, dv) == 0;
		if (!ix->files[id].has_dv)
			rc = floe_error_oom(err);
	}
	floe_mutex_unlock(&ix->mu);
	return rc;
}

void floe_delta_index_reserve(floe_delta_index *ix, size_t rows)
{
	size_t per = rows / ix->n_parts + rows / ix->n_parts / 16 + 64; /* HASH is not exact */
	floe_mutex_lock(&ix->mu);
	for (size_t i = 0; i < ix->n_parts; i++)
		floe_key_index_reserve(ix->parts[i], per);
	floe_mutex_unlock(&ix->mu);
}

/* The keys of rows of the current snapshot: children 0..n_keys-1 are the key
 * columns (in equality order), then _file and _pos. */
int floe_delta_index_load(floe_delta_index *ix, const struct ArrowArray *batch,
			  const struct ArrowSchema *bs, floe_error *err)
{
	floe_arrow_view root, fv, pv;
	keycol kc[64];
	int rc;
	if (ix->n_keys > 64 || bs->n_children != (int64_t)ix->n_keys + 2)
		return floe_error_set(err, FLOE_EINVAL, "key index: unexpected scan columns");
	if ((rc = floe_arrow_view_init(&root, bs, batch, err)))
		return rc;
	root.validity = NULL;
	for (size_t k = 0; k < ix->n_keys; k++) {
		kc[k] = ix->keys[k];
		if ((rc = floe_arrow_view_child(&kc[k].src.view, &root, bs->children[k],
						batch->children[k], err)) ||
		    (rc = floe_write__source_bind(&kc[k].src, kc[k].type, kc[k].name, err)))
			return rc;
	}
	if ((rc = floe_arrow_view_child(&fv, &root, bs->children[ix->n_keys],
					batch->children[ix->n_keys], err)) ||
	    (rc = floe_arrow_view_child(&pv, &root, bs->children[ix->n_keys + 1],
					batch->children[ix->n_keys + 1], err)))
		return rc;
	floe_write__source fsrc, psrc;
	memset(&fsrc, 0, sizeof(fsrc));
	memset(&psrc, 0, sizeof(psrc));
	fsrc.view = fv;
	psrc.view = pv;
	if ((rc = floe_write__source_bind(&fsrc, floe_type_primitive(FLOE_T_STRING), "_file", err)) ||
	    (rc = floe_write__source_bind(&psrc, floe_type_primitive(FLOE_T_LONG), "_pos", err)))
		return rc;
	floe_mutex_lock(&ix->mu);
	char *last = NULL;
	uint32_t last_id = 0;
	/* (1) every row's key, then (2) the lookups, each asking for the slot of
	 * the key PREFETCH rows ahead: one index of millions of keys misses the
	 * caches on every lookup, and the build is mostly those misses */
	enum { PREFETCH = 8 };
	size_t nrows = (size_t)batch->length;
	floe_buf_clear(&ix->kbuf);
	if (floe_array_grow((void **)&ix->koff, &ix->cap_koff, sizeof(size_t), nrows + 1))
		rc = floe_error_oom(err);
	for (size_t i = 0; i < nrows && !rc; i++) {
		floe_value v;
		ix->koff[i] = ix->kbuf.len;
		for (size_t k = 0; k < ix->n_keys && !rc; k++) {
			floe_write__source_value(&v, &kc[k].src, (int64_t)i);
			if (encode_key(&ix->kbuf, &v))
				rc = floe_error_oom(err);
		}
	}
	if (!rc)
		ix->koff[nrows] = ix->kbuf.len;
	for (size_t i = 0; i < nrows && i < PREFETCH && !rc; i++) {
		const uint8_t *pk = ix->kbuf.data + ix->koff[i];
		size_t pl = ix->koff[i + 1] - ix->koff[i];
		floe_key_index_prefetch(part_of(ix, pk, pl), pk, pl);
	}
	for (int64_t i = 0; i < batch->length && !rc; i++) {
		floe_value f, p;
		const uint8_t *key = ix->kbuf.data + ix->koff[i];
		size_t klen = ix->koff[i + 1] - ix->koff[i];
		if ((size_t)i + PREFETCH < nrows) {
			const uint8_t *pk = ix->kbuf.data + ix->koff[i + PREFETCH];
			size_t pl = ix->koff[i + PREFETCH + 1] - ix->koff[i + PREFETCH];
			floe_key_index_prefetch(part_of(ix, pk, pl), pk, pl);
		}
		floe_write__source_value(&f, &fsrc, i);
		floe_write__source_value(&p, &psrc, i);
		if (rc)
			break;
		if (f.is_null || p.is_null) {
			rc = floe_error_set(err, FLOE_ECORRUPT, "key index: a row without _file/_pos");
			break;
		}
		if (!last || strlen(last) != f.v.bin.n || memcmp(last, f.v.bin.p, f.v.bin.n)) {
			uint64_t id;
			floe_free(last);
			if (!(last = floe_strndup((const char *)f.v.bin.p, f.v.bin.n))) {
				rc = floe_error_oom(err);
				break;
			}
			if (!floe_hmap_get_str(&ix->by_path, last, &id)) {
				rc = floe_error_set(err, FLOE_ECORRUPT,
						    "key index: '%s' was read but not planned", last);
				break;
			}
			last_id = (uint32_t)id;
		}
		floe_key_index *part = part_of(ix, key, klen);
		bool found;
		uint32_t of;
		uint64_t op;
		rc = floe_key_index_get(part, key, klen, &found, &of, &op, err);
		if (!rc && found && !ix->load_replace) {
			/* a second live row of the key: both get deleted by its next change */
			uint64_t *head;
			bool existed;
			if (FLOE_ARRAY_RESERVE(ix->dup, ix->cap_dup, ix->n_dup + 1) ||
			    floe_hmap_upsert(&ix->dup_keys, key, klen, &head, &existed)) {
				rc = floe_error_oom(err);
				break;
			}
			ix->dup[ix->n_dup].fid = last_id;
			ix->dup[ix->n_dup].pos = (uint64_t)p.v.i64;
			ix->dup[ix->n_dup].next = existed && *head != UINT64_MAX ? (size_t)*head : SIZE_MAX;
			*head = ix->n_dup++;
			continue;
		}
		if (!rc)
			rc = floe_key_index_put(part, key, klen, last_id, (uint64_t)p.v.i64, err);
	}
	floe_free(last);
	floe_mutex_unlock(&ix->mu);
	return rc;
}

/* Deleted position pos of index file fid, pending for this batch. Locked. */
static int index_hit(floe_delta_index *ix, uint32_t fid, uint64_t pos, floe_error *err)
{
	if (fid >= ix->n_files || ix->files[fid].gone)
		return FLOE_OK; /* gone (persist hook): the row left with its file */
	ix_file *f = &ix->files[fid];
	if (!f->n_pend) {
		if (FLOE_ARRAY_RESERVE(ix->touched, ix->cap_touched, ix->n_touched + 1))
			return floe_error_oom(err);
		ix->touched[ix->n_touched++] = fid;
	}
	if (FLOE_ARRAY_RESERVE(f->pend, f->cap_pend, f->n_pend + 1))
		return floe_error_oom(err);
	f->pend[f->n_pend++] = (int64_t)pos;
	ix->hits++;
	ix->deletes++;
	return FLOE_OK;
}

/* The batch's pending positions to the DV / position delete writer: one call
 * per data file (the first of a checkpoint merges the file's previous DV).
 * Locked. */
static int index_flush(floe_delta_index *ix, floe_error *err)
{
	int rc = FLOE_OK;
	for (size_t t = 0; t < ix->n_touched && !rc; t++) {
		ix_file *f = &ix->files[ix->touched[t]];
		if (ix->dv) {
			if (f->merged != ix->gen) {
				if (f->has_dv)
					rc = floe_dv_writer_merge_previous(ix->dv, &f->dv, err);
				f->merged = ix->gen;
			}
			if (!rc)
				rc = floe_dv_writer_delete(ix->dv, f->df.file_path, f->df.spec_id,
							   &f->df.partition, f->pend, f->n_pend, err);
		} else {
			rc = floe_pos_delete_writer_delete(ix->pos, f->df.file_path, f->df.spec_id,
							   &f->df.partition, f->pend, f->n_pend, err);
		}
	}
	for (size_t t = 0; t < ix->n_touched; t++)
		ix->files[ix->touched[t]].n_pend = 0;
	ix->n_touched = 0;
	return rc;
}

int floe_delta_index_complete(floe_delta_index *ix, floe_data_file **files, size_t *n,
			      floe_data_file **replaced, size_t *n_replaced, floe_arena *a,
			      floe_error *err)
{
	int rc;
	size_t n0 = *n, r0 = *n_replaced;
	floe_mutex_lock(&ix->mu);
	if (ix->dv)
		rc = floe_dv_writer_complete(ix->dv, files, n, replaced, n_replaced, a, err);
	else
		rc = floe_pos_delete_writer_complete(ix->pos, files, n, a, err);
	for (size_t i = n0; i < *n && !rc; i++) {
		floe_data_file *d = &(*files)[i];
		d->absent_metrics |= FLOE_DELTA_TAG_INDEX;
		uint64_t id;
		if (ix->dv && d->referenced_data_file &&
		    floe_hmap_get_str(&ix->by_path, d->referenced_data_file, &id)) {
			/* the DV the file has once this commits (else the index is rebuilt) */
			ix->files[id].has_dv = floe_data_file_copy(&ix->files[id].dv, &ix->a, d) == 0;
			if (!ix->files[id].has_dv)
				rc = floe_error_oom(err);
		}
	}
	for (size_t i = r0; i < *n_replaced; i++)
		(*replaced)[i].absent_metrics |= FLOE_DELTA_TAG_REMOVE;
	ix->gen++;
	/* the keys kept by the tasks' complete() are this checkpoint's; an older
	 * checkpoint's still sealed were committed or dropped (a rewind) */
	floe_free(ix->sealed.v);
	ix->sealed = ix->kept;
	memset(&ix->kept, 0, sizeof(ix->kept));
	floe_mutex_unlock(&ix->mu);
	return rc ? floe_error_prefix(err, rc, "key index: ") : FLOE_OK;
}

static bool index_lazy(floe_delta_index *ix)
{
	floe_mutex_lock(&ix->mu);
	bool l = ix->lazy;
	floe_mutex_unlock(&ix->mu);
	return l;
}

/* An exact key (write_index.h) whose equality delete is the fallback.
 * Locked. */
static int keep_key(floe_delta_index *ix, const uint8_t *key, size_t klen, floe_error *err)
{
	int64_t v;
	if (klen == 1 && key[0] == 0) {
		ix->kept.null_key = true;
		return FLOE_OK;
	}
	if (klen == 5 && key[0] == 1) {
		int32_t i;
		memcpy(&i, key + 1, 4);
		v = i;
	} else if (klen == 9 && key[0] == 1) {
		memcpy(&v, key + 1, 8);
	} else {
		return floe_error_set(err, FLOE_EINVAL, "internal: not a one-value key");
	}
	if (FLOE_ARRAY_RESERVE(ix->kept.v, ix->kept.cap, ix->kept.n + 1))
		return floe_error_oom(err);
	ix->kept.v[ix->kept.n++] = v;
	return FLOE_OK;
}

/* A key of the task's checkpoint as index_apply visits it: the writer map's
 * value and the key itself (inline when short), so the visit in index
 * order reads these records forwards instead of the map's slots at random. */
typedef struct apply_key {
	uint64_t val;
	uint32_t part;
	uint32_t klen;
	union {
		uint8_t b[16];
		const uint8_t *p; /* longer keys: the map's copy */
	} key;
} apply_key;

static const uint8_t *apply_key_bytes(const apply_key *a)
{
	return a->klen <= sizeof(a->key.b) ? a->key.b : a->key.p;
}

/*
 * The task's keys in the order of their slots in the index (partition, then
 * place): a counting sort by the top bits of the place, at most 2^15 buckets
 * a partition so the counts stay in cache (a bucket is then a few KB of a
 * large index). Two forward passes over the writer's map (the buckets, then
 * the records), one scatter of 32-byte records; walking the index forwards
 * this way, the checkpoint's lookups and puts share pages and cache lines,
 * where the map's order read a table far larger than the caches at random.
 * Locked.
 */
/* the key bytes of map slot i, asked for ahead (they live in the map's arena
 * in insertion order, so a walk in slot order reads them at random) */
static void prefetch_key(const floe_hmap *m, size_t i)
{
	if (i < m->cap && m->slots[i].key)
		PREFETCH_READ(m->slots[i].key);
}

static apply_key *keys_in_index_order(floe_delta_index *ix, floe_delta_writer *w, size_t *nk_out)
{
	size_t n = w->map.len, nk = 0;
	*nk_out = 0;
	int lg = 0;
	while (lg < 15 && ((size_t)1 << lg) * ix->n_parts < n)
		lg++;
	size_t per = (size_t)1 << lg, nb = per * ix->n_parts;
	apply_key *out = floe_malloc((n + 1) * sizeof(*out));
	uint32_t *bucket = floe_malloc((n + 1) * sizeof(uint32_t));
	uint32_t *count = floe_calloc(nb + 1, sizeof(uint32_t));
	if (!out || !bucket || !count) {
		floe_free(out);
		floe_free(bucket);
		floe_free(count);
		return NULL;
	}
	enum { AHEAD = 16 };
	for (size_t i = 0; i < w->map.cap; i++) {
		const floe_hmap_slot *s = &w->map.slots[i];
		prefetch_key(&w->map, i + AHEAD);
		if (!s->key || nk >= n)
			continue;
		size_t part = s->hash % ix->n_parts; /* = part_of() */
		uint32_t place = floe_key_index_place(ix->parts[part], s->key, s->klen);
		bucket[nk] = (uint32_t)(part * per + (lg ? place >> (32 - lg) : 0));
		count[bucket[nk] + 1]++;
		nk++;
	}
	for (size_t b = 0; b < nb; b++)
		count[b + 1] += count[b];
	nk = 0;
	for (size_t i = 0; i < w->map.cap; i++) {
		const floe_hmap_slot *s = &w->map.slots[i];
		prefetch_key(&w->map, i + AHEAD);
		if (!s->key || nk >= n)
			continue;
		apply_key *a = &out[count[bucket[nk]]++];
		a->val = s->val;
		a->part = (uint32_t)(bucket[nk] >> lg);
		a->klen = (uint32_t)s->klen;
		if (s->klen <= sizeof(a->key.b))
			memcpy(a->key.b, s->key, s->klen);
		else
			a->key.p = s->key;
		nk++;
	}
	floe_free(bucket);
	floe_free(count);
	*nk_out = nk;
	return out;
}

/*
 * After a task's checkpoint, under the lock: for each of its keys, the row
 * the table held before this checkpoint gets its DV bit / position delete
 * (a key whose equality delete this checkpoint owes: V_EQ), then the index
 * says where the key's row is now (or that it has none). Both touch the one
 * slot of the key, visited in index order (keys_in_index_order) with the
 * slot of the key PREFETCH ahead asked for; the positions go to the delete
 * writer once per data file.
 */
static int index_apply(floe_delta_index *ix, floe_delta_writer *w, floe_error *err)
{
	enum { PREFETCH = 8 };
	int rc = FLOE_OK;
	uint32_t *ids = NULL;
	size_t n_ids = 0, nk;
	floe_mutex_lock(&ix->mu);
	apply_key *ks = keys_in_index_order(ix, w, &nk);
	if (!ks) {
		floe_mutex_unlock(&ix->mu);
		return floe_error_oom(err);
	}
	for (size_t i = 0; i < nk && i < PREFETCH; i++)
		floe_key_index_prefetch(ix->parts[ks[i].part], apply_key_bytes(&ks[i]), ks[i].klen);
	for (size_t i = 0; i < nk && !rc; i++) {
		const apply_key *s = &ks[i];
		const uint8_t *key = apply_key_bytes(s);
		size_t klen = s->klen;
		if (i + PREFETCH < nk) {
			const apply_key *q = &ks[i + PREFETCH];
			floe_key_index_prefetch(ix->parts[q->part], apply_key_bytes(q), q->klen);
		}
		floe_key_index *part = ix->parts[s->part]; /* = part_of() */
		uint64_t *dh, d0 = UINT64_MAX;
		bool dup = ix->n_dup && floe_hmap_get(&ix->dup_keys, key, klen, &d0) &&
			   d0 != UINT64_MAX;
		if (s->val & V_EQ) { /* the key lost its row in the table */
			bool found;
			uint32_t fid;
			uint64_t pos;
			if ((rc = floe_key_index_get(part, key, klen, &found, &fid, &pos, err)))
				break;
			if (found && (rc = index_hit(ix, fid, pos, err)))
				break;
			for (uint64_t d = d0; found && dup && !rc && d < ix->n_dup;) {
				rc = index_hit(ix, ix->dup[d].fid, ix->dup[d].pos, err); /* its other rows */
				d = ix->dup[d].next == SIZE_MAX ? UINT64_MAX : ix->dup[d].next;
			}
			if (rc)
				break;
			if (w->lazy && (rc = keep_key(ix, key, klen, err)))
				break;
		}
		if (dup && floe_hmap_upsert(&ix->dup_keys, key, klen, &dh, NULL) == 0)
			*dh = UINT64_MAX; /* its extra rows were deleted with it */
		if (!(s->val & V_ROW)) {
			rc = floe_key_index_del(part, key, klen, err);
			continue;
		}
		uint32_t file = (uint32_t)((s->val & ~(V_EQ | V_ROW)) >> POS_BITS);
		uint64_t pos = s->val & POS_MASK;
		if (file >= n_ids) {
			size_t nn = (size_t)file + 16;
			uint32_t *ni = floe_realloc(ids, nn * sizeof(uint32_t));
			if (!ni) {
				rc = floe_error_oom(err);
				break;
			}
			for (size_t j = n_ids; j < nn; j++)
				ni[j] = UINT32_MAX;
			ids = ni;
			n_ids = nn;
		}
		if (ids[file] == UINT32_MAX) {
			floe_written_file wf;
			if (floe_task_writer_file(w->data, (int32_t)file, &wf)) {
				rc = floe_error_set(err, FLOE_EINVAL, "internal: no data file %u", file);
				break;
			}
			if ((rc = file_id(ix, wf.path, wf.spec_id, wf.partition, &ids[file], err)))
				break;
		}
		rc = floe_key_index_put(part, key, klen, ids[file], pos, err);
	}
	int rc2 = index_flush(ix, err);
	floe_mutex_unlock(&ix->mu);
	floe_free(ids);
	floe_free(ks);
	return rc ? rc : rc2;
}

/* The sealed keys as a batch of the one key column (nulls where null). */
static int kept_batch(floe_delta_index *ix, struct ArrowArray *arr, struct ArrowSchema *sch,
		      floe_error *err)
{
	const struct ix_kept *k = &ix->sealed;
	const keycol *kc = &ix->keys[0];
	size_t n = k->n + (k->null_key ? 1 : 0);
	bool narrow = kc->type->id == FLOE_T_INT || kc->type->id == FLOE_T_DATE;
	char fmt[64];
	if (floe_iceberg_arrow_format(fmt, sizeof(fmt), kc->type))
		return floe_error_set(err, FLOE_EINVAL, "key column '%s': no Arrow format", kc->name);
	if (floe_arrow_schema_init(sch, "+s", "", 0, 1) ||
	    floe_arrow_schema_init(sch->children[0], fmt, kc->name, ARROW_FLAG_NULLABLE, 0) ||
	    floe_arrow_array_init(arr, 1, 1) || floe_arrow_array_init(arr->children[0], 2, 0))
		return floe_error_oom(err);
	uint8_t *data = floe_malloc(n * (narrow ? 4 : 8) + 8);
	uint8_t *valid = k->null_key ? floe_calloc(n / 8 + 1, 1) : NULL;
	if (!data || (k->null_key && !valid)) {
		floe_free(data);
		floe_free(valid);
		return floe_error_oom(err);
	}
	for (size_t i = 0; i < k->n; i++) {
		if (narrow) {
			int32_t v = (int32_t)k->v[i];
			memcpy(data + i * 4, &v, 4);
		} else {
			memcpy(data + i * 8, &k->v[i], 8);
		}
		if (valid)
			valid[i / 8] |= (uint8_t)(1u << (i % 8));
	}
	if (k->null_key)
		memset(data + k->n * (narrow ? 4 : 8), 0, narrow ? 4 : 8);
	floe_arrow_array_set_buffer(arr->children[0], 0, valid);
	floe_arrow_array_set_buffer(arr->children[0], 1, data);
	arr->children[0]->length = (int64_t)n;
	arr->children[0]->null_count = k->null_key ? 1 : 0;
	arr->length = (int64_t)n;
	return FLOE_OK;
}

int floe_delta_index_fallback(floe_delta_index *ix, floe_data_file **files, size_t *n,
			      floe_arena *a, floe_error *err)
{
	floe_eq_delete_writer *eq = NULL;
	struct ArrowArray arr;
	struct ArrowSchema sch;
	int rc = FLOE_OK;
	memset(&arr, 0, sizeof(arr));
	memset(&sch, 0, sizeof(sch));
	floe_mutex_lock(&ix->mu);
	if (!ix->sealed.n && !ix->sealed.null_key)
		goto done;
	floe_delete_writer_opts dopt = FLOE_DELETE_WRITER_OPTS_INIT;
	dopt.namer = ix->namer;
	dopt.equality_ids = ix->eq_ids;
	dopt.n_equality_ids = ix->n_keys;
	dopt.full_rows = false; /* Flink's upsert mode: the key only */
	dopt.file_scoped = true;
	size_t n0 = *n;
	if ((rc = floe_eq_delete_writer_new(&eq, ix->io, ix->m, &ix->cfg, &dopt, err)) ||
	    (rc = kept_batch(ix, &arr, &sch, err)) ||
	    (rc = floe_eq_delete_writer_write(eq, &arr, &sch, err)) ||
	    (rc = floe_eq_delete_writer_complete(eq, files, n, a, err)))
		goto done;
	for (size_t i = n0; i < *n; i++)
		(*files)[i].absent_metrics |= FLOE_DELTA_TAG_FALLBACK;
	floe_free(ix->sealed.v);
	memset(&ix->sealed, 0, sizeof(ix->sealed));
done:
	floe_arrow_array_release(&arr);
	floe_arrow_schema_release(&sch);
	floe_eq_delete_writer_abort(eq);
	floe_mutex_unlock(&ix->mu);
	return rc ? floe_error_prefix(err, rc, "key index: equality deletes of a fallback: ")
		  : FLOE_OK;
}

void floe_delta_index_forget(floe_delta_index *ix)
{
	floe_mutex_lock(&ix->mu);
	floe_free(ix->sealed.v);
	memset(&ix->sealed, 0, sizeof(ix->sealed));
	floe_mutex_unlock(&ix->mu);
}

void floe_delta_index_get_stats(floe_delta_index *ix, floe_delta_index_stats *out)
{
	memset(out, 0, sizeof(*out));
	floe_mutex_lock(&ix->mu);
	out->files = ix->n_files;
	out->hits = ix->hits;
	for (size_t i = 0; i < ix->n_parts; i++) {
		floe_key_index_stats st;
		floe_key_index_get_stats(ix->parts[i], &st);
		out->memory += st.memory;
		out->entries += st.entries_mem + st.spilled;
		out->spills += st.spills;
		out->disk_reads += st.disk_reads;
		out->lookups += st.lookups;
	}
	floe_mutex_unlock(&ix->mu);
}

/* ---- persist hooks (helper-idxpersist: write_index_persist.c, stream_index_persist.c) ---- */

bool floe_delta_index__exact(const floe_delta_index *ix, bool *wide)
{
	*wide = ix->n_keys == 1 && ix->keys[0].type->id != FLOE_T_INT &&
		ix->keys[0].type->id != FLOE_T_DATE;
	return ix->exact;
}

typedef struct fe_ctx {
	floe_delta_index *ix;
	bool narrow;
	floe_delta_index_entry_fn fn;
	void *payload;
} fe_ctx;

static int fe_cb(void *payload, const uint8_t *key, size_t klen, uint32_t fid, uint64_t pos)
{
	fe_ctx *c = payload;
	if (fid < c->ix->n_files && c->ix->files[fid].gone)
		return 0; /* a dead row */
	/* exact mode hands 9 bytes back: an int key is 5 (write_index.h) */
	return c->fn(c->payload, key, c->narrow && klen == 9 ? 5 : klen, fid, pos);
}

int floe_delta_index__foreach(floe_delta_index *ix, floe_delta_index_entry_fn fn, void *payload,
			      floe_error *err)
{
	bool wide;
	fe_ctx c = {ix, floe_delta_index__exact(ix, &wide) && !wide, fn, payload};
	int rc = FLOE_OK;
	floe_mutex_lock(&ix->mu);
	for (size_t i = 0; i < ix->n_parts && !rc; i++)
		rc = floe_key_index_foreach(ix->parts[i], fe_cb, &c, err);
	floe_mutex_unlock(&ix->mu);
	return rc;
}

size_t floe_delta_index__n_files(floe_delta_index *ix)
{
	return ix->n_files;
}

const char *floe_delta_index__file(floe_delta_index *ix, size_t id, bool *gone)
{
	*gone = ix->files[id].gone;
	return ix->files[id].df.file_path;
}

bool floe_delta_index__has_dups(floe_delta_index *ix)
{
	bool any = false;
	floe_mutex_lock(&ix->mu);
	for (size_t i = 0; i < ix->dup_keys.cap && !any; i++)
		any = ix->dup_keys.slots[i].key && ix->dup_keys.slots[i].val != UINT64_MAX;
	floe_mutex_unlock(&ix->mu);
	return any;
}

int floe_delta_index__put(floe_delta_index *ix, const uint8_t *key, size_t klen, uint32_t fid,
			  uint64_t pos, floe_error *err)
{
	int rc;
	floe_mutex_lock(&ix->mu);
	if (fid >= ix->n_files)
		rc = floe_error_set(err, FLOE_ECORRUPT, "key index: file %u of %zu", fid,
				    ix->n_files);
	else
		rc = floe_key_index_put(part_of(ix, key, klen), key, klen, fid, pos, err);
	floe_mutex_unlock(&ix->mu);
	return rc;
}

void floe_delta_index__mark_gone(floe_delta_index *ix)
{
	floe_mutex_lock(&ix->mu);
	for (size_t i = 0; i < ix->n_files; i++)
		ix->files[i].gone = true;
	floe_mutex_unlock(&ix->mu);
}

int floe_delta_index__sync_file(floe_delta_index *ix, const char *path, int32_t spec_id,
				const floe_partition *partition, const floe_data_file *dv,
				bool *known, floe_error *err)
{
	uint32_t id;
	int rc;
	floe_mutex_lock(&ix->mu);
	*known = floe_hmap_get_str(&ix->by_path, path, NULL);
	rc = file_id(ix, path, spec_id, partition, &id, err);
	if (!rc) {
		ix_file *f = &ix->files[id];
		f->gone = false;
		if (*known) { /* restored by path alone: spec and partition from the plan */
			floe_data_file d, nd;
			floe_data_file_init(&d);
			d.content = FLOE_CONTENT_DATA;
			d.file_path = f->df.file_path;
			d.spec_id = spec_id;
			if (partition)
				d.partition = *partition;
			if (floe_data_file_copy(&nd, &ix->a, &d))
				rc = floe_error_oom(err);
			else
				f->df = nd;
		}
		f->has_dv = false;
		if (!rc && dv) {
			f->has_dv = floe_data_file_copy(&f->dv, &ix->a, dv) == 0;
			if (!f->has_dv)
				rc = floe_error_oom(err);
		}
	}
	floe_mutex_unlock(&ix->mu);
	return rc;
}

void floe_delta_index__load_replace(floe_delta_index *ix, bool on)
{
	floe_mutex_lock(&ix->mu);
	ix->load_replace = on;
	floe_mutex_unlock(&ix->mu);
}
