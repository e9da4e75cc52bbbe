/*
 * scan_changelog.c — changelog reads (floe/scan.h floe_scan_changelog_open):
 * the rows each snapshot of a range changed, with Spark's changelog-view
 * columns _change_type, _change_ordinal and _commit_snapshot_id.
 *
 * DESIGN: Java's changelog scan (BaseIncrementalChangelogScan) turns the
 * data files a snapshot added or removed into INSERT and DELETE tasks and
 * refuses tables with delete files; Spark then removes carry-overs (a row
 * deleted and re-inserted unchanged by a copy-on-write rewrite) and pairs a
 * key's DELETE and INSERT into UPDATE_BEFORE/UPDATE_AFTER. Here a
 * snapshot's changes are defined by what readers see: its rows minus its
 * parent's are INSERTs, its parent's minus its own are DELETEs, as multisets
 * of whole rows — so equality deletes, position deletes and deletion vectors
 * (a row that stops being visible) are changes like removed files, and
 * carry-overs cancel by construction. Both snapshots are planned and only
 * the data files whose presence or set of applying delete files differ are
 * read (a file untouched by the snapshot has the same visible rows in both),
 * so a commit costs what it touched, not the table. Rows are compared by
 * their JSON text in the current schema (both sides read with it).
 * Updates follow Spark's ComputeUpdateIterator: per snapshot and key, one
 * DELETE and an INSERT become UPDATE_BEFORE/UPDATE_AFTER; two DELETEs of one
 * key fail.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arrow/arrow_build.h"
#include "iceberg/arrow_schema.h"
#include "scan/scan_impl.h"
#include "util/log.h"
#include "util/opts.h"
#include "util/str.h"

/* Spark's metadata column ids (MetadataColumns CHANGE_TYPE, CHANGE_ORDINAL, COMMIT_SNAPSHOT_ID) */
#define ID_CHANGE_TYPE (INT32_MAX - 104)
#define ID_CHANGE_ORDINAL (INT32_MAX - 105)
#define ID_COMMIT_SNAPSHOT (INT32_MAX - 106)

enum { CT_NONE = 0, CT_INSERT, CT_DELETE, CT_UPDATE_BEFORE, CT_UPDATE_AFTER };
static const char *const CT_NAMES[] = {"", "INSERT", "DELETE", "UPDATE_BEFORE", "UPDATE_AFTER"};

/* ---- resolving from / to ------------------------------------------------------------------ */

static const floe_snapshot *current_at(const floe_metadata *m, int64_t ts)
{
	const floe_snapshot *best = NULL;
	if (m->n_snapshot_log) {
		for (size_t i = 0; i < m->n_snapshot_log; i++)
			if (m->snapshot_log[i].timestamp_ms <= ts) {
				const floe_snapshot *s =
					floe_metadata_snapshot(m, m->snapshot_log[i].snapshot_id);
				if (s)
					best = s;
			}
		return best;
	}
	for (size_t i = 0; i < m->n_snapshots; i++)
		if (m->snapshots[i].timestamp_ms <= ts &&
		    (!best || m->snapshots[i].timestamp_ms >= best->timestamp_ms))
			best = &m->snapshots[i];
	return best;
}

/* *id = the snapshot named by spec; -1 for "before the first snapshot" (an
 * empty table, or a time before any snapshot when allow_before) */
static int resolve_ref(const floe_metadata *m, const char *spec, const char *what, bool allow_before,
		       int64_t *id, floe_error *err)
{
	char *end;
	const char *p = spec;
	*id = -1;
	if (!strncmp(p, "snapshot:", 9))
		p += 9;
	if (*p >= '0' && *p <= '9') {
		long long v = strtoll(p, &end, 10);
		if (!*end) {
			if (!floe_metadata_snapshot(m, v))
				return floe_error_set(err, FLOE_ENOTFOUND, "%s: no snapshot %lld", what, v);
			*id = v;
			return FLOE_OK;
		}
		if (p != spec)
			return floe_error_set(err, FLOE_EINVAL, "%s: '%s' is not a snapshot id", what, spec);
	}
	if (!strncmp(spec, "timestamp:", 10)) {
		int64_t ms;
		if (!floe_parse_time_ms(spec + 10, &ms))
			return floe_error_set(err, FLOE_EINVAL,
					      "%s: '%s' is not a time (epoch ms or ISO-8601)", what,
					      spec + 10);
		const floe_snapshot *s = current_at(m, ms);
		if (!s && !allow_before)
			return floe_error_set(err, FLOE_ENOTFOUND, "%s: no snapshot was current at %s",
					      what, spec + 10);
		*id = s ? s->snapshot_id : -1;
		return FLOE_OK;
	}
	const char *name = spec;
	int want = 0; /* 1 tag, 2 branch */
	if (!strncmp(spec, "tag:", 4))
		name = spec + 4, want = 1;
	else if (!strncmp(spec, "branch:", 7))
		name = spec + 7, want = 2;
	const floe_snapshot_ref *r = floe_metadata_ref(m, name);
	if (!r || (want == 1 && !r->is_tag) || (want == 2 && r->is_tag))
		return floe_error_set(err, FLOE_ENOTFOUND,
				      "%s: '%s' is no snapshot id, timestamp:TIME, or %s", what, spec,
				      want == 1 ? "tag" : want == 2 ? "branch" : "tag or branch");
	if (!floe_metadata_snapshot(m, r->snapshot_id))
		return floe_error_corrupt(err, "%s: ref '%s' points to missing snapshot %lld", what,
					  name, (long long)r->snapshot_id);
	*id = r->snapshot_id;
	return FLOE_OK;
}

/* The snapshots in (from, to] along to's ancestry, oldest first (floe_malloc'd). */
static int range_chain(const floe_metadata *m, int64_t from, int64_t to, const floe_snapshot ***out,
		       size_t *n, floe_error *err)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	const floe_snapshot *s = to >= 0 ? floe_metadata_snapshot(m, to) : NULL;
	bool found = from < 0;
	for (; s; s = floe_metadata_parent(m, s)) {
		if (s->snapshot_id == from) {
			found = true;
			break;
		}
		if (floe_array_grow((void **)out, &cap, sizeof(**out), *n + 1)) {
			floe_free(*out);
			*out = NULL;
			return floe_error_oom(err);
		}
		(*out)[(*n)++] = s;
	}
	if (!found) {
		floe_free(*out);
		*out = NULL;
		*n = 0;
		return floe_error_set(err, FLOE_EINVAL,
				      "the start snapshot %lld is not an ancestor of the end snapshot %lld",
				      (long long)from, (long long)to);
	}
	for (size_t i = 0; i < *n / 2; i++) {
		const floe_snapshot *x = (*out)[i];
		(*out)[i] = (*out)[*n - 1 - i];
		(*out)[*n - 1 - i] = x;
	}
	return FLOE_OK;
}

/* ---- one snapshot's changes ---------------------------------------------------------------- */

typedef struct side {
	floe_scan *s;
	struct ArrowArray *batches;
	size_t n_batches, cap_batches;
} side;

typedef struct row_ref {
	uint32_t side, batch;
	int64_t row;
	uint64_t key;  /* index into the row-key counts */
	uint8_t type;  /* CT_* (CT_NONE: carried over) */
} row_ref;

typedef struct cl_state {
	floe_scan *out; /* the result */
	size_t n_data;  /* data columns of the result */
	size_t *all_cols, *id_cols;
	size_t n_id;
	bool updates;
	floe_buf key;
} cl_state;

static void side_reset(side *x)
{
	for (size_t i = 0; i < x->n_batches; i++)
		floe_arrow_array_release(&x->batches[i]);
	floe_free(x->batches);
	floe_scan_free(x->s);
	memset(x, 0, sizeof(*x));
}

/* the sorted raw paths of f's delete files, as one string */
static int delete_sig(floe_buf *b, const scan_file *f)
{
	const char *paths[64];
	size_t n = f->n_deletes < 64 ? f->n_deletes : 64;
	int rc;
	floe_buf_clear(b);
	if (f->n_deletes > 64) /* too many to sort here: the file always counts as changed */
		return floe_buf_printf(b, "\x01%p", (const void *)f);
	for (size_t i = 0; i < n; i++)
		paths[i] = f->deletes[i]->raw_path;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(paths[j - 1], paths[j]) > 0; j--) {
			const char *x = paths[j];
			paths[j] = paths[j - 1];
			paths[j - 1] = x;
		}
	for (size_t i = 0; i < n; i++)
		if ((rc = floe_buf_puts(b, paths[i])) || (rc = floe_buf_putc(b, '\n')))
			return rc;
	return FLOE_OK;
}

static bool same_sig(const floe_buf *x, const floe_buf *y)
{
	return x->len == y->len && (!x->len || !memcmp(x->data, y->data, x->len));
}

/* Keep only the data files of a (the parent's plan, may be NULL) and b that
 * differ between them: present in one only, or with other delete files. */
static int restrict_to_changed(floe_scan *a, floe_scan *b, floe_error *err)
{
	floe_hmap mb;
	floe_buf sig, sig2;
	uint8_t *in_b = NULL; /* per file of b: 1 when a has it unchanged */
	int rc = FLOE_OK;
	floe_hmap_init(&mb);
	floe_buf_init(&sig, 0);
	floe_buf_init(&sig2, 0);
	if (!(in_b = floe_calloc(b->n_files ? b->n_files : 1, 1))) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < b->n_files && !rc; i++)
		rc = floe_hmap_put_str(&mb, b->files[i]->raw_path, i);
	if (rc)
		goto done;
	if (a) {
		size_t ka = 0;
		for (size_t i = 0; i < a->n_files; i++) {
			scan_file *f = a->files[i];
			uint64_t j;
			bool keep = true;
			if (floe_hmap_get_str(&mb, f->raw_path, &j)) {
				if ((rc = delete_sig(&sig, f)) || (rc = delete_sig(&sig2, b->files[j])))
					goto done;
				keep = !same_sig(&sig, &sig2);
				if (!keep)
					in_b[j] = 1;
			}
			if (keep)
				a->files[ka++] = f;
		}
		a->n_files = ka;
	}
	size_t kb = 0;
	for (size_t i = 0; i < b->n_files; i++)
		if (!in_b[i])
			b->files[kb++] = b->files[i];
	b->n_files = kb;
done:
	floe_free(in_b);
	floe_hmap_reset(&mb);
	floe_buf_reset(&sig);
	floe_buf_reset(&sig2);
	return rc == FLOE_ENOMEM ? floe_error_oom(err) : rc;
}

static int read_side(side *x, floe_error *err)
{
	for (;;) {
		struct ArrowArray b;
		bool eof;
		int rc = floe_scan_next(x->s, &b, &eof, err);
		if (rc)
			return rc;
		if (eof)
			return FLOE_OK;
		if (floe_array_grow((void **)&x->batches, &x->cap_batches, sizeof(*x->batches),
				    x->n_batches + 1)) {
			floe_arrow_array_release(&b);
			return floe_error_oom(err);
		}
		floe_arrow_array_move(&x->batches[x->n_batches++], &b);
	}
}

/* A string array of the change types of rows[0..n). */
static int type_array(struct ArrowArray *out, const uint8_t *types, int64_t n, floe_error *err)
{
	floe_buf off, data;
	int rc = FLOE_OK;
	floe_buf_init(&off, 0);
	floe_buf_init(&data, 0);
	rc = floe_buf_put_u32le(&off, 0);
	for (int64_t i = 0; i < n && !rc; i++) {
		const char *t = CT_NAMES[types[i]];
		if (!(rc = floe_buf_puts(&data, t)))
			rc = floe_buf_put_u32le(&off, (uint32_t)data.len);
	}
	if (!rc && !data.len)
		rc = floe_buf_putc(&data, 0);
	if (!rc && !(rc = floe_arrow_array_init(out, 3, 0))) {
		out->length = n;
		if ((rc = floe_arrow_array_take_buf(out, 1, &off)) ||
		    (rc = floe_arrow_array_take_buf(out, 2, &data)))
			floe_arrow_array_release(out);
	}
	floe_buf_reset(&off);
	floe_buf_reset(&data);
	return rc ? floe_error_oom(err) : FLOE_OK;
}

/* One output batch: rows idx of src with their change types. */
static int emit(cl_state *st, const struct ArrowArray *src, const int64_t *idx, const uint8_t *types,
		int64_t n, int32_t ordinal, int64_t snapshot_id, floe_error *err)
{
	floe_scan *o = st->out;
	struct ArrowArray batch;
	int rc;
	if (!n)
		return FLOE_OK;
	if ((rc = floe_arrow_array_init(&batch, 1, (int64_t)o->n_cols)))
		return floe_error_oom(err);
	batch.length = n;
	for (size_t c = 0; c < st->n_data; c++)
		if ((rc = floe_sa_take(batch.children[c], src->children[c], o->cols[c].type, idx, n, err)))
			goto fail;
	floe_value v = {.type = FLOE_T_INT};
	v.v.i32 = ordinal;
	floe_value w = {.type = FLOE_T_LONG};
	w.v.i64 = snapshot_id;
	if ((rc = type_array(batch.children[st->n_data], types, n, err)) ||
	    (rc = floe_sa_const(batch.children[st->n_data + 1], floe_type_primitive(FLOE_T_INT), &v, n,
				err)) ||
	    (rc = floe_sa_const(batch.children[st->n_data + 2], floe_type_primitive(FLOE_T_LONG), &w, n,
				err)))
		goto fail;
	mem_batches *mb = o->mem;
	size_t cap = mb->n; /* grown one at a time: few batches per snapshot */
	struct ArrowArray *nb = floe_realloc(mb->batches, (cap + 1) * sizeof(*nb));
	if (!nb) {
		rc = floe_error_oom(err);
		goto fail;
	}
	mb->batches = nb;
	floe_arrow_array_move(&mb->batches[mb->n++], &batch);
	return FLOE_OK;
fail:
	floe_arrow_array_release(&batch);
	return rc;
}

typedef struct id_group {
	uint32_t n_del, n_ins;
	size_t first_del, first_ins; /* row_ref indexes */
} id_group;

static int snapshot_changes(cl_state *st, floe_table *t, const floe_snapshot *snap, int32_t ordinal,
			    int threads, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t);
	side sd[2] = {{0}, {0}};
	row_ref *rows = NULL;
	size_t n_rows = 0, cap_rows = 0;
	uint64_t *counts = NULL; /* per key: [0] parent rows, [1] snapshot rows */
	size_t n_keys = 0, cap_keys = 0;
	id_group *groups = NULL;
	size_t n_groups = 0, cap_groups = 0;
	int64_t *idx = NULL;
	uint8_t *types = NULL;
	floe_hmap keys, ids;
	int rc;
	floe_hmap_init(&keys);
	floe_hmap_init(&ids);
	const floe_snapshot *parent = floe_metadata_parent(m, snap);
	if (parent && (rc = floe_scan__open_snapshot(&sd[0].s, t, parent->snapshot_id, threads, err)))
		goto done;
	if ((rc = floe_scan__open_snapshot(&sd[1].s, t, snap->snapshot_id, threads, err)) ||
	    (rc = restrict_to_changed(sd[0].s, sd[1].s, err)))
		goto done;
	for (int k = 0; k < 2; k++)
		if (sd[k].s && (rc = read_side(&sd[k], err)))
			goto done;
	/* every row, keyed by its whole text */
	for (uint32_t k = 0; k < 2; k++)
		for (uint32_t bi = 0; bi < sd[k].n_batches; bi++) {
			const struct ArrowArray *b = &sd[k].batches[bi];
			for (int64_t r = 0; r < b->length; r++) {
				floe_buf_clear(&st->key);
				if ((rc = floe_scan__row_json(&st->key, sd[1].s, b, r, st->all_cols,
							      st->n_data)))
					goto oom;
				uint64_t *slot;
				bool existed;
				if ((rc = floe_hmap_upsert(&keys, st->key.data, st->key.len, &slot, &existed)))
					goto oom;
				if (!existed) {
					if (floe_array_grow((void **)&counts, &cap_keys, 2 * sizeof(uint64_t),
							    n_keys + 1))
						goto oom;
					counts[2 * n_keys] = counts[2 * n_keys + 1] = 0;
					*slot = n_keys++;
				}
				counts[2 * *slot + k]++;
				if (floe_array_grow((void **)&rows, &cap_rows, sizeof(*rows), n_rows + 1))
					goto oom;
				rows[n_rows++] = (row_ref){k, bi, r, *slot, CT_NONE};
			}
		}
	/* pairs of equal rows cancel (carry-over): each parent row takes one equal
	 * snapshot row if one is left, else it is a DELETE; counts[2k+1] ends as
	 * the snapshot rows of key k left over */
	for (size_t i = 0; i < n_rows; i++) {
		if (rows[i].side != 0)
			continue;
		uint64_t *left = &counts[2 * rows[i].key + 1];
		if (*left > 0)
			(*left)--;
		else
			rows[i].type = CT_DELETE;
	}
	{
		/* count, per key, the snapshot rows seen so far: the cancelled ones
		 * are the first ones (any choice of equal rows gives the same output) */
		uint64_t *seen = floe_calloc(n_keys ? n_keys : 1, sizeof(uint64_t));
		uint64_t *total = floe_calloc(n_keys ? n_keys : 1, sizeof(uint64_t));
		if (!seen || !total) {
			floe_free(seen);
			floe_free(total);
			goto oom;
		}
		for (size_t i = 0; i < n_rows; i++)
			if (rows[i].side == 1)
				total[rows[i].key]++;
		for (size_t i = 0; i < n_rows; i++) {
			if (rows[i].side != 1)
				continue;
			uint64_t left = counts[2 * rows[i].key + 1];
			uint64_t cancelled = total[rows[i].key] - left;
			if (seen[rows[i].key]++ >= cancelled)
				rows[i].type = CT_INSERT;
		}
		floe_free(seen);
		floe_free(total);
	}
	/* updates: a key's DELETE and INSERT in this snapshot */
	if (st->updates) {
		for (size_t i = 0; i < n_rows; i++) {
			if (rows[i].type == CT_NONE)
				continue;
			const struct ArrowArray *b = &sd[rows[i].side].batches[rows[i].batch];
			floe_buf_clear(&st->key);
			if ((rc = floe_scan__row_json(&st->key, sd[1].s, b, rows[i].row, st->id_cols,
						      st->n_id)))
				goto oom;
			uint64_t *slot;
			bool existed;
			if ((rc = floe_hmap_upsert(&ids, st->key.data, st->key.len, &slot, &existed)))
				goto oom;
			if (!existed) {
				if (floe_array_grow((void **)&groups, &cap_groups, sizeof(*groups),
						    n_groups + 1))
					goto oom;
				groups[n_groups] = (id_group){0, 0, 0, 0};
				*slot = n_groups++;
			}
			id_group *g = &groups[*slot];
			if (rows[i].type == CT_DELETE) {
				if (g->n_del++ == 0)
					g->first_del = i;
			} else if (g->n_ins++ == 0) {
				g->first_ins = i;
			}
		}
		for (size_t k = 0; k < n_groups; k++) {
			id_group *g = &groups[k];
			if (g->n_del > 1) {
				rc = floe_error_set(err, FLOE_EINVAL,
						    "snapshot %lld: cannot compute updates: %u deleted rows "
						    "have the same identifier fields (make the rows unique "
						    "per key, or read without updates)",
						    (long long)snap->snapshot_id, g->n_del);
				goto done;
			}
			if (g->n_del == 1 && g->n_ins >= 1) {
				rows[g->first_del].type = CT_UPDATE_BEFORE;
				rows[g->first_ins].type = CT_UPDATE_AFTER;
			}
		}
	}
	/* out: per source batch, its changed rows */
	if (n_rows && (!(idx = floe_malloc(n_rows * sizeof(*idx))) ||
		       !(types = floe_malloc(n_rows))))
		goto oom;
	for (uint32_t k = 0; k < 2; k++)
		for (uint32_t bi = 0; bi < sd[k].n_batches; bi++) {
			int64_t n = 0;
			for (size_t i = 0; i < n_rows; i++)
				if (rows[i].side == k && rows[i].batch == bi && rows[i].type != CT_NONE) {
					idx[n] = rows[i].row;
					types[n++] = rows[i].type;
				}
			if ((rc = emit(st, &sd[k].batches[bi], idx, types, n, ordinal, snap->snapshot_id,
				       err)))
				goto done;
		}
	rc = FLOE_OK;
	goto done;
oom:
	rc = floe_error_oom(err);
done:
	floe_hmap_reset(&keys);
	floe_hmap_reset(&ids);
	floe_free(rows);
	floe_free(counts);
	floe_free(groups);
	floe_free(idx);
	floe_free(types);
	side_reset(&sd[0]);
	side_reset(&sd[1]);
	if (rc)
		return floe_error_prefix(err, rc, "changelog of snapshot %lld: ",
					 (long long)snap->snapshot_id);
	return FLOE_OK;
}

/* ---- the result scan ------------------------------------------------------------------------ */

static int add_meta_col(floe_scan *s, const char *name, int32_t id, floe_type_id type)
{
	scan_col *c = &s->cols[s->n_cols++];
	memset(c, 0, sizeof(*c));
	c->kind = COL_FIELD;
	c->name = name;
	c->id = id;
	c->top_id = id;
	c->type = floe_type_primitive(type);
	c->required = true;
	return FLOE_OK;
}

static int result_columns(cl_state *st, floe_scan *s, const floe_changelog_opts *o, floe_error *err)
{
	int rc;
	if ((rc = floe_scan__columns(s, err)) || (rc = floe_scan__check_columns(s, err)))
		return rc;
	st->n_data = s->n_cols;
	scan_col *cols = floe_arena_calloc(&s->a, s->n_cols + 3, sizeof(*cols));
	st->all_cols = floe_arena_calloc(&s->a, st->n_data + 1, sizeof(size_t));
	st->id_cols = floe_arena_calloc(&s->a, st->n_data + 1, sizeof(size_t));
	if (!cols || !st->all_cols || !st->id_cols)
		return floe_error_oom(err);
	memcpy(cols, s->cols, s->n_cols * sizeof(*cols));
	s->cols = cols;
	for (size_t i = 0; i < st->n_data; i++)
		st->all_cols[i] = i;
	add_meta_col(s, "_change_type", ID_CHANGE_TYPE, FLOE_T_STRING);
	add_meta_col(s, "_change_ordinal", ID_CHANGE_ORDINAL, FLOE_T_INT);
	add_meta_col(s, "_commit_snapshot_id", ID_COMMIT_SNAPSHOT, FLOE_T_LONG);
	floe_arrow_schema_release(&s->out_schema);
	if ((rc = floe_arrow_schema_init(&s->out_schema, "+s", "", 0, (int64_t)s->n_cols)))
		return floe_error_oom(err);
	for (size_t i = 0; i < s->n_cols; i++) {
		const scan_col *c = &s->cols[i];
		if ((rc = floe_iceberg_arrow_field_read(s->out_schema.children[i], c->name, c->id,
							c->type, c->required, err)))
			return rc;
	}
	/* identifier columns: given, else the schema's identifier fields */
	st->n_id = 0;
	if (o->n_identifier_columns) {
		for (size_t k = 0; k < o->n_identifier_columns; k++) {
			size_t c = 0;
			while (c < st->n_data && strcmp(s->cols[c].name, o->identifier_columns[k]))
				c++;
			if (c == st->n_data)
				return floe_error_set(err, FLOE_EINVAL,
						      "identifier column '%s' is not a top-level column "
						      "of the table",
						      o->identifier_columns[k]);
			st->id_cols[st->n_id++] = c;
		}
	} else {
		for (size_t k = 0; k < s->schema->n_identifier_field_ids; k++)
			for (size_t c = 0; c < st->n_data; c++)
				if (s->cols[c].id == s->schema->identifier_field_ids[k] && st->n_id < st->n_data)
					st->id_cols[st->n_id++] = c;
	}
	st->updates = !o->no_updates && st->n_id > 0;
	return FLOE_OK;
}

static bool is_replace(const floe_snapshot *s)
{
	const char *op = floe_snapshot_summary(s, "operation");
	return op && !strcmp(op, "replace");
}

static int changelog_open(floe_scan **out, floe_table *t, const floe_changelog_opts *o,
			  int64_t from, int64_t to, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t);
	const floe_snapshot **chain = NULL;
	size_t n_chain = 0;
	cl_state st = {0};
	int rc;
	floe_scan *s = floe_scan__new(t);
	*out = NULL;
	if (!s)
		return floe_error_oom(err);
	floe_buf_init(&st.key, 0);
	s->o = (floe_scan_opts)FLOE_SCAN_OPTS_INIT;
	const floe_path_map *map = floe_table_path_map(t);
	if (map)
		s->map = *map;
	s->schema = floe_metadata_current_schema(m);
	s->snap = to >= 0 ? floe_metadata_snapshot(m, to) : NULL;
	st.out = s;
	if (!s->schema) {
		rc = floe_error_corrupt(err, "the table has no schema");
		goto fail;
	}
	if (!(s->mem = floe_calloc(1, sizeof(*s->mem)))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if ((rc = result_columns(&st, s, o, err)) || (rc = range_chain(m, from, to, &chain, &n_chain, err)))
		goto fail;
	int64_t ordinal = o->ordinal_base;
	for (size_t i = 0; i < n_chain; i++) {
		if (is_replace(chain[i]))
			continue;
		if ((rc = snapshot_changes(&st, t, chain[i], (int32_t)ordinal++, o->threads, err)))
			goto fail;
	}
	floe_free(chain);
	floe_buf_reset(&st.key);
	*out = s;
	return FLOE_OK;
fail:
	floe_free(chain);
	floe_buf_reset(&st.key);
	floe_scan_free(s);
	return rc;
}

static int resolve_range(const floe_metadata *m, const floe_changelog_opts *o, int64_t *from,
			 int64_t *to, floe_error *err)
{
	int rc;
	*from = -1;
	*to = -1;
	if (o->from && *o->from && strcmp(o->from, "earliest") &&
	    (rc = resolve_ref(m, o->from, "from", true, from, err)))
		return rc;
	if (o->to && *o->to) {
		if ((rc = resolve_ref(m, o->to, "to", false, to, err)))
			return rc;
	} else {
		const floe_snapshot *c = floe_metadata_current_snapshot(m);
		*to = c ? c->snapshot_id : -1;
	}
	if (*to < 0 && *from >= 0)
		return floe_error_set(err, FLOE_EINVAL, "the table has no snapshot to read changes up to");
	return FLOE_OK;
}

int floe_scan_changelog_open(floe_scan **out, floe_table *t, const floe_changelog_opts *opts,
			     floe_error *err)
{
	static const floe_changelog_opts dflt = FLOE_CHANGELOG_OPTS_INIT;
	int64_t from, to;
	int rc;
	FLOE_CHECK_OPTS(opts, "floe_changelog_opts", "FLOE_CHANGELOG_OPTS_INIT", err);
	*out = NULL;
	if (!t)
		return floe_error_set(err, FLOE_EINVAL, "no table");
	if (!opts)
		opts = &dflt;
	if ((rc = resolve_range(floe_table_metadata(t), opts, &from, &to, err)))
		return rc;
	return changelog_open(out, t, opts, from, to, err);
}

/* ---- following ------------------------------------------------------------------------------ */

typedef struct skip_header {
	floe_write_fn fn;
	void *payload;
	bool skip; /* drop bytes up to and including the first newline */
} skip_header;

static int skip_header_write(const char *data, size_t n, void *payload)
{
	skip_header *h = payload;
	if (h->skip) {
		const char *nl = memchr(data, '\n', n);
		if (!nl)
			return 0;
		h->skip = false;
		n -= (size_t)(nl + 1 - data);
		data = nl + 1;
	}
	return n ? h->fn(data, n, h->payload) : 0;
}

static void sleep_for(int64_t ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

int floe_scan_changelog_follow(floe_table *t, const floe_changelog_opts *opts, int64_t interval_ms,
			       int64_t max_polls, floe_output_format fmt, floe_write_fn fn,
			       floe_changelog_commit_fn done, void *payload, floe_error *err)
{
	static const floe_changelog_opts dflt = FLOE_CHANGELOG_OPTS_INIT;
	int64_t last = -1, ordinal;
	bool header_done = false;
	int rc;
	FLOE_CHECK_OPTS(opts, "floe_changelog_opts", "FLOE_CHANGELOG_OPTS_INIT", err);
	if (!t)
		return floe_error_set(err, FLOE_EINVAL, "no table");
	if (!opts)
		opts = &dflt;
	if (interval_ms <= 0)
		return floe_error_set(err, FLOE_EINVAL, "the monitor interval must be positive");
	if (opts->from && *opts->from && strcmp(opts->from, "earliest") &&
	    (rc = resolve_ref(floe_table_metadata(t), opts->from, "from", true, &last, err)))
		return rc;
	ordinal = opts->ordinal_base;
	for (int64_t poll = 0;; poll++) {
		const floe_metadata *m = floe_table_metadata(t);
		const floe_snapshot *head = floe_metadata_current_snapshot(m);
		const floe_snapshot **chain = NULL;
		size_t n_chain = 0;
		if (head && head->snapshot_id != last) {
			if ((rc = range_chain(m, last, head->snapshot_id, &chain, &n_chain, err)))
				return rc;
			for (size_t i = 0; i < n_chain && !rc; i++) {
				floe_scan *s = NULL;
				bool rep = is_replace(chain[i]);
				floe_changelog_opts one = *opts;
				one.ordinal_base = ordinal;
				if (!rep) {
					skip_header sh = {fn, payload, header_done && fmt == FLOE_OUTPUT_CSV};
					rc = changelog_open(&s, t, &one, last, chain[i]->snapshot_id, err);
					if (!rc)
						rc = floe_scan__render(s, fmt, -1, skip_header_write, &sh, err);
					floe_scan_free(s);
					header_done = true;
					ordinal++;
				}
				last = chain[i]->snapshot_id;
				if (!rc && done)
					rc = done(last, ordinal, payload);
			}
			floe_free(chain);
			if (rc)
				return rc;
		}
		if (max_polls > 0 && poll >= max_polls)
			return FLOE_OK;
		sleep_for(interval_ms);
		if ((rc = floe_table_refresh(t, err)))
			return floe_error_prefix(err, rc, "refreshing the table: ");
	}
}
