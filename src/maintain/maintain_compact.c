/*
 * maintain_compact.c — rewrite data files: bin-pack small files and files
 * with deletes attached, partition by partition, into files near the
 * target size.
 *
 * DESIGN: one scan of the current snapshot S plans every live data file
 * with the delete files that apply to it (the scan's delete matching is
 * the one the reads use, so what compaction applies is what readers
 * would). Candidates are grouped by (spec, partition); a group is
 * rewritten when it has enough files, enough bytes, a file to split, or
 * deletes to apply. Each group is read through the same scan narrowed to
 * its files (deletes applied) and written by a task writer in the table's
 * current schema and default spec. Commits are REPLACE snapshots whose new
 * files keep S's sequence number as their data sequence number, so an
 * equality delete a streaming writer commits meanwhile (sequence number
 * above S's) still applies to the rewritten rows; the producer validates
 * from S that no position delete or DV committed meanwhile targets a
 * replaced file — such a group is given up (its new files deleted) and
 * the rest goes on. A delete file is removed with the last data file it
 * applies to (it cannot apply to rows written after S: their sequence
 * numbers are higher). With max_commits > 0 groups are committed as they
 * finish, in at most that many commits (partial progress).
 *
 * Row lineage (v3): rewritten rows keep their _row_id and
 * _last_updated_sequence_number (spec: "Row Lineage"): the scan projects
 * both (inherited values materialised) and the writer gets a write-only
 * copy of the metadata whose schema ends with the two reserved fields, so
 * the new files carry them as columns with their reserved ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_concat.h"
#include "arrow/arrow_take.h"
#include "maintain/maintain_int.h"
#include "scan/scan_select.h"
#include "util/opts.h"
#include "util/alloc.h"
#include "util/hmap.h"
#include "util/log.h"
#include "util/rand.h"
#include "scan/scan_arrow.h"
#include "write/write.h"

/* Rows per batch handed to the writer after sorting. */
#define SORTED_BATCH_ROWS 65536
/* A sorted group is held in memory: at most this much input per group. */
#define SORT_GROUP_BYTES (INT64_C(256) << 20)

typedef struct cgroup {
	scan_file **files;
	size_t n, cap;
	int64_t bytes;
	bool has_deletes, has_large;
	char *key; /* partition key bytes (for a stable order) */
	size_t key_len;
	/* after writing */
	floe_data_file *out;
	size_t n_out;
	bool written;
} cgroup;

typedef struct compactor {
	floe_table *t;  /* commits go through it */
	floe_table *rt; /* a handle of its own for reading: commits replace t's metadata */
	const floe_metadata *m;  /* of rt */
	floe_metadata *wm;       /* v3: the write metadata with the lineage fields; else NULL */
	const floe_compact_opts *o;
	floe_compact_result *res;
	floe_maintain_progress_fn progress;
	int (*interrupted)(void *payload);
	void *payload;
	floe_scan *scan;
	int64_t base_id, base_seq; /* the snapshot S the run started from */
	floe_write_config cfg;
	int64_t target, min_size, max_size;
	bool leased; /* holds the table's writer lease */
	floe_arena a;
	cgroup *groups;
	size_t n_groups;
	/* delete file -> number of live data files it applies to */
	floe_imap refs;
	floe_imap removed_deletes; /* delete files already removed by a commit */
	const floe_sort_order *order; /* sorting: the table's default order; NULL = none */
	char run_id[37];
	int64_t bytes_total, bytes_done;
} compactor;

/* ---- planning ---------------------------------------------------------------------- */

static bool is_candidate(const compactor *c, const scan_file *f)
{
	int threshold = c->o->delete_file_threshold;
	if (f->file_size < c->min_size || f->file_size > c->max_size)
		return true;
	return threshold > 0 && (int64_t)f->n_deletes >= threshold;
}

static int cmp_groups(const void *pa, const void *pb)
{
	const cgroup *a = pa, *b = pb;
	size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int r = memcmp(a->key, b->key, n);
	if (r)
		return r;
	return a->key_len < b->key_len ? -1 : a->key_len > b->key_len;
}

static int cmp_files(const void *pa, const void *pb)
{
	const scan_file *a = *(scan_file *const *)pa, *b = *(scan_file *const *)pb;
	return strcmp(a->raw_path, b->raw_path);
}

static int add_group(compactor *c, size_t *cap, const cgroup *g)
{
	if (FLOE_ARRAY_RESERVE(c->groups, *cap, c->n_groups + 1))
		return FLOE_ENOMEM;
	c->groups[c->n_groups++] = *g;
	return FLOE_OK;
}

/* A partition's candidates: worth rewriting? Then split by max_group_bytes. */
static int finish_partition(compactor *c, size_t *cap, cgroup *p)
{
	const floe_compact_opts *o = c->o;
	bool worth = p->has_deletes || p->has_large ||
		     (p->n >= (size_t)(o->min_input_files > 1 ? o->min_input_files : 2)) ||
		     (p->n > 1 && p->bytes > c->target);
	if (!worth) {
		floe_free(p->files);
		return FLOE_OK;
	}
	if (p->n > 1)
		qsort(p->files, p->n, sizeof(*p->files), cmp_files);
	int64_t max_group = o->max_group_bytes > 0 ? o->max_group_bytes : INT64_MAX;
	if (c->order && max_group > SORT_GROUP_BYTES)
		max_group = SORT_GROUP_BYTES; /* sorted in memory */
	cgroup g = {0};
	int rc = FLOE_OK;
	for (size_t i = 0; i < p->n && !rc; i++) {
		scan_file *f = p->files[i];
		if (g.n && g.bytes + f->file_size > max_group) {
			rc = add_group(c, cap, &g);
			memset(&g, 0, sizeof(g));
		}
		if (!rc && FLOE_ARRAY_RESERVE(g.files, g.cap, g.n + 1))
			rc = FLOE_ENOMEM;
		if (rc)
			break;
		g.files[g.n++] = f;
		g.bytes += f->file_size;
		g.has_deletes |= f->n_deletes > 0;
		g.has_large |= f->file_size > c->max_size;
		g.key = p->key;
		g.key_len = p->key_len;
	}
	if (!rc && g.n)
		rc = add_group(c, cap, &g);
	else
		floe_free(g.files);
	floe_free(p->files);
	return rc;
}

static int plan(compactor *c, floe_error *err)
{
	scan_file *const *files;
	size_t n, cap = 0;
	floe_hmap parts;
	floe_buf key;
	cgroup *pv = NULL;
	size_t n_pv = 0, cap_pv = 0;
	int rc = FLOE_OK;
	floe_scan__plan_files(c->scan, &files, &n);
	floe_hmap_init(&parts);
	floe_buf_init(&key, 0);
	for (size_t i = 0; i < n && !rc; i++) {
		scan_file *f = files[i];
		/* every delete file's reference count (for dropping it later) */
		for (size_t k = 0; k < f->n_deletes && !rc; k++) {
			uint64_t cnt = 0;
			floe_imap_get(&c->refs, (int64_t)(uintptr_t)f->deletes[k], &cnt);
			if (floe_imap_put(&c->refs, (int64_t)(uintptr_t)f->deletes[k], cnt + 1))
				rc = FLOE_ENOMEM;
		}
		if (rc || !is_candidate(c, f))
			continue;
		uint64_t *slot;
		bool existed;
		if ((rc = floe_scan__partition_key(&key, f->spec_id, &f->partition)) ||
		    (rc = floe_hmap_upsert(&parts, key.data, key.len, &slot, &existed)))
			break;
		if (!existed) {
			if (FLOE_ARRAY_RESERVE(pv, cap_pv, n_pv + 1)) {
				rc = FLOE_ENOMEM;
				break;
			}
			memset(&pv[n_pv], 0, sizeof(*pv));
			pv[n_pv].key = floe_arena_memdup(&c->a, key.data, key.len + 1);
			pv[n_pv].key_len = key.len;
			if (!pv[n_pv].key) {
				rc = FLOE_ENOMEM;
				break;
			}
			*slot = n_pv++;
		}
		cgroup *p = &pv[*slot];
		if (FLOE_ARRAY_RESERVE(p->files, p->cap, p->n + 1)) {
			rc = FLOE_ENOMEM;
			break;
		}
		p->files[p->n++] = f;
		p->bytes += f->file_size;
		p->has_deletes |= f->n_deletes > 0;
		p->has_large |= f->file_size > c->max_size;
	}
	for (size_t i = 0; i < n_pv; i++) {
		if (!rc)
			rc = finish_partition(c, &cap, &pv[i]);
		else
			floe_free(pv[i].files);
	}
	floe_free(pv);
	floe_hmap_reset(&parts);
	floe_buf_reset(&key);
	if (rc)
		return floe_error_oom(err);
	if (c->n_groups > 1)
		qsort(c->groups, c->n_groups, sizeof(*c->groups), cmp_groups);
	/* the per-run cap on bytes read */
	if (c->o->max_bytes > 0) {
		int64_t sum = 0;
		size_t keep = 0;
		for (; keep < c->n_groups; keep++) {
			if (sum + c->groups[keep].bytes > c->o->max_bytes)
				break;
			sum += c->groups[keep].bytes;
		}
		for (size_t i = keep; i < c->n_groups; i++)
			floe_free(c->groups[i].files);
		c->n_groups = keep;
	}
	for (size_t i = 0; i < c->n_groups; i++)
		c->bytes_total += c->groups[i].bytes;
	return FLOE_OK;
}

/* ---- sorting ------------------------------------------------------------------------ */

typedef struct sort_ctx {
	const floe_sort_order *order;
	const floe_value *keys; /* n_rows x n_fields */
	size_t n_fields;
} sort_ctx;

static _Thread_local const sort_ctx *tl_sort;

static int cmp_rows(const void *pa, const void *pb)
{
	const sort_ctx *sc = tl_sort;
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	for (size_t k = 0; k < sc->n_fields; k++) {
		const floe_sort_field *sf = &sc->order->fields[k];
		const floe_value *x = &sc->keys[(size_t)a * sc->n_fields + k];
		const floe_value *y = &sc->keys[(size_t)b * sc->n_fields + k];
		int r;
		if (x->is_null || y->is_null) {
			if (x->is_null == y->is_null)
				continue;
			/* nulls first/last regardless of direction */
			return x->is_null ? (sf->nulls_first ? -1 : 1) : (sf->nulls_first ? 1 : -1);
		}
		r = floe_value_compare(x, y);
		if (r)
			return sf->descending ? -r : r;
	}
	return a < b ? -1 : a > b; /* stable */
}

/* The value of field `id` (top level or inside structs) at row r. */
static void field_value(floe_value *out, const struct ArrowArray *batch, const floe_schema *schema,
			int32_t id, int64_t r)
{
	int32_t chain[32];
	size_t depth = 0;
	const floe_schema_entry *e = floe_schema_find(schema, id);
	const floe_type *leaf = e ? e->type : NULL;
	*out = floe_value_null(leaf ? leaf->id : FLOE_T_LONG);
	while (e && depth < 32) {
		chain[depth++] = e->id;
		if (e->parent_id == 0)
			break;
		e = floe_schema_find(schema, e->parent_id);
	}
	if (!e || !leaf)
		return;
	const struct ArrowArray *a = batch;
	const floe_type *t = schema->root;
	int64_t row = r;
	for (size_t d = depth; d-- > 0;) {
		size_t idx = SIZE_MAX;
		for (size_t i = 0; i < t->n_fields; i++)
			if (t->fields[i].id == chain[d])
				idx = i;
		if (idx == SIZE_MAX || t->id != FLOE_T_STRUCT)
			return;
		if (a != batch && !floe_sa_valid(a, row))
			return; /* a null struct: its fields are null */
		row += a->offset; /* spec: a struct's offset applies to its children */
		a = a->children[idx];
		t = t->fields[idx].type;
	}
	if (!floe_sa_valid(a, row))
		return;
	floe_sa_value(out, a, t, row);
}

/* Sort the rows of `all` by the order and hand them to the writer. */
static int write_sorted(compactor *c, floe_task_writer *tw, const struct ArrowArray *all,
			const struct ArrowSchema *schema, floe_error *err)
{
	const floe_schema *sch = floe_metadata_current_schema(c->m);
	size_t nf = c->order->n_fields;
	int64_t n = all->length;
	floe_value *keys = floe_calloc((size_t)n * nf + 1, sizeof(*keys));
	int64_t *perm = floe_calloc((size_t)n + 1, sizeof(*perm));
	int rc = FLOE_OK;
	if (!keys || !perm) {
		rc = floe_error_oomf(err, "out of memory sorting %lld rows", (long long)n);
		goto done;
	}
	for (size_t k = 0; k < nf && !rc; k++) {
		const floe_sort_field *sf = &c->order->fields[k];
		const floe_schema_entry *e = floe_schema_find(sch, sf->source_id);
		if (!e) {
			rc = floe_error_set(err, FLOE_EINVAL, "sort order names unknown field %d",
					    (int)sf->source_id);
			break;
		}
		for (int64_t r = 0; r < n && !rc; r++) {
			floe_value v;
			field_value(&v, all, sch, sf->source_id, r);
			rc = floe_transform_apply(&keys[(size_t)r * nf + k], &sf->transform, e->type, &v,
						  err);
		}
	}
	if (rc)
		goto done;
	for (int64_t r = 0; r < n; r++)
		perm[r] = r;
	sort_ctx sc = {c->order, keys, nf};
	tl_sort = &sc;
	if (n > 1)
		qsort(perm, (size_t)n, sizeof(*perm), cmp_rows);
	tl_sort = NULL;
	for (int64_t at = 0; at < n && !rc; at += SORTED_BATCH_ROWS) {
		int64_t k = n - at < SORTED_BATCH_ROWS ? n - at : SORTED_BATCH_ROWS;
		struct ArrowArray part;
		if ((rc = floe_arrow_take(&part, schema, all, perm + at, k, err)))
			break;
		rc = floe_task_writer_write(tw, &part, schema, err);
		floe_arrow_array_release(&part);
	}
done:
	floe_free(keys);
	floe_free(perm);
	return rc;
}

/* ---- rewriting a group --------------------------------------------------------------- */

static void progress(compactor *c, const char *what)
{
	if (c->progress)
		c->progress(FLOE_STEP_COMPACT, what, c->bytes_done, c->bytes_total, c->payload);
}

static int write_group(compactor *c, cgroup *g, size_t gi, floe_error *err)
{
	floe_task_writer *tw = NULL;
	floe_task_writer_opts two = FLOE_TASK_WRITER_OPTS_INIT;
	struct ArrowSchema schema = {0};
	struct ArrowArray *held = NULL; /* sorting: the group's batches */
	size_t n_held = 0, cap_held = 0;
	int rc;
	two.partition_id = (int)gi;
	two.task_id = 0;
	two.operation_id = c->run_id;
	two.target_file_size = c->target;
	if ((rc = floe_scan__select(c->scan, g->files, g->n, err)) ||
	    (rc = floe_scan_arrow_schema(c->scan, &schema, err)) ||
	    (rc = floe_task_writer_new(&tw, floe_table_io(c->rt), c->wm ? c->wm : c->m, &c->cfg,
				       &two, err)))
		goto done;
	for (;;) {
		struct ArrowArray batch;
		bool eof;
		if ((rc = floe_scan_next(c->scan, &batch, &eof, err)))
			goto done;
		if (eof)
			break;
		c->res->records_rewritten += batch.length;
		if (c->order) {
			if (FLOE_ARRAY_RESERVE(held, cap_held, n_held + 1)) {
				floe_arrow_array_release(&batch);
				rc = floe_error_oom(err);
				goto done;
			}
			floe_arrow_array_move(&held[n_held++], &batch);
			continue;
		}
		rc = floe_task_writer_write(tw, &batch, &schema, err);
		floe_arrow_array_release(&batch);
		if (rc)
			goto done;
	}
	if (c->order && n_held) {
		struct ArrowArray all;
		const struct ArrowArray **parts = floe_calloc(n_held, sizeof(*parts));
		if (!parts) {
			rc = floe_error_oom(err);
			goto done;
		}
		for (size_t i = 0; i < n_held; i++)
			parts[i] = &held[i];
		rc = floe_arrow_concat(&all, &schema, parts, n_held, err);
		floe_free(parts);
		for (size_t i = 0; i < n_held; i++)
			floe_arrow_array_release(&held[i]);
		n_held = 0;
		if (rc)
			goto done;
		rc = write_sorted(c, tw, &all, &schema, err);
		floe_arrow_array_release(&all);
		if (rc)
			goto done;
	}
	rc = floe_task_writer_complete(tw, &g->out, &g->n_out, &c->a, err);
	if (!rc) {
		floe_task_writer_free(tw);
		tw = NULL;
		g->written = true;
		for (size_t i = 0; c->order && i < g->n_out; i++) {
			g->out[i].has_sort_order_id = true;
			g->out[i].sort_order_id = c->order->order_id;
		}
	}
done:
	for (size_t i = 0; i < n_held; i++)
		floe_arrow_array_release(&held[i]);
	floe_free(held);
	floe_task_writer_abort(tw);
	floe_arrow_schema_release(&schema);
	return rc;
}

/* Delete the files a group wrote (never committed). */
static void drop_output(compactor *c, cgroup *g)
{
	for (size_t i = 0; i < g->n_out; i++)
		floe_io_remove_quiet(floe_table_io(c->t), g->out[i].file_path);
	floe_free(g->out);
	g->out = NULL;
	g->n_out = 0;
	g->written = false;
}

static void file_of(floe_data_file *f, const scan_file *s)
{
	floe_data_file_init(f);
	f->content = s->content;
	f->file_path = s->raw_path;
	f->file_format = s->format;
	f->spec_id = s->spec_id;
	f->partition = s->partition;
	f->record_count = s->record_count;
	f->file_size_in_bytes = s->file_size;
	f->referenced_data_file = s->referenced;
	f->content_offset = s->content_offset;
	f->content_size_in_bytes = s->content_size;
}

/* Commit groups [from, to) in one REPLACE snapshot. */
static int commit_groups(compactor *c, size_t from, size_t to, floe_error *err)
{
	floe_snapshot_op *op = NULL;
	floe_imap dec; /* delete file -> references dropped by this commit */
	scan_file **gone = NULL;
	size_t n_gone = 0, cap_gone = 0, n_added = 0, n_removed = 0, n_del_removed = 0;
	int64_t bytes_in = 0, bytes_out = 0;
	int rc;
	floe_imap_init(&dec);
	if ((rc = floe_op_new(&op, c->t, FLOE_OP_REPLACE, c->o->branch, err)))
		goto done;
	floe_op_verify_added(op); /* the rewritten files are ours */
	for (size_t gi = from; gi < to && !rc; gi++) {
		cgroup *g = &c->groups[gi];
		if (!g->written)
			continue;
		for (size_t i = 0; i < g->n && !rc; i++) {
			floe_data_file f;
			file_of(&f, g->files[i]);
			rc = floe_op_remove_file(op, &f, err);
			n_removed++;
			bytes_in += g->files[i]->file_size;
			for (size_t k = 0; k < g->files[i]->n_deletes && !rc; k++) {
				int64_t key = (int64_t)(uintptr_t)g->files[i]->deletes[k];
				uint64_t cnt = 0;
				floe_imap_get(&dec, key, &cnt);
				if (floe_imap_put(&dec, key, cnt + 1))
					rc = floe_error_oom(err);
				else if (cnt == 0 &&
					 (FLOE_ARRAY_RESERVE(gone, cap_gone, n_gone + 1) ||
					  !(gone[n_gone++] = g->files[i]->deletes[k])))
					rc = floe_error_oom(err);
			}
		}
		for (size_t i = 0; i < g->n_out && !rc; i++) {
			rc = floe_op_add_file(op, &g->out[i], err);
			n_added++;
			bytes_out += g->out[i].file_size_in_bytes;
		}
	}
	/* delete files whose every target is gone after this commit */
	for (size_t i = 0; i < n_gone && !rc; i++) {
		int64_t key = (int64_t)(uintptr_t)gone[i];
		uint64_t total = 0, dropped = 0, already = 0;
		floe_imap_get(&c->refs, key, &total);
		floe_imap_get(&dec, key, &dropped);
		if (floe_imap_get(&c->removed_deletes, key, &already) || dropped < total)
			continue;
		floe_data_file f;
		file_of(&f, gone[i]);
		rc = floe_op_remove_file(op, &f, err);
		n_del_removed++;
	}
	if (rc)
		goto done;
	if (n_removed == 0)
		goto done;
	floe_op_set_data_sequence_number(op, c->base_seq);
	floe_op_validate_from(op, c->base_id);
	/* the table's history says when it was last maintained (maintain_runner.c) */
	if ((rc = floe_op_set_summary(op, FLOE_MAINTENANCE_SUMMARY_KEY, "compact", err)))
		goto done;
	rc = floe_op_commit(op, NULL, err);
	if (!rc) {
		c->res->commits++;
		c->res->data_files_rewritten += n_removed;
		c->res->data_files_added += n_added;
		c->res->delete_files_removed += n_del_removed;
		c->res->bytes_rewritten += bytes_in;
		c->res->bytes_added += bytes_out;
		c->res->groups_committed += to - from;
		/* references now gone for good */
		for (size_t i = 0; i < n_gone; i++) {
			int64_t key = (int64_t)(uintptr_t)gone[i];
			uint64_t total = 0, dropped = 0;
			floe_imap_get(&c->refs, key, &total);
			floe_imap_get(&dec, key, &dropped);
			if (floe_imap_put(&c->refs, key, total - dropped) ||
			    (total == dropped && floe_imap_put(&c->removed_deletes, key, 1)))
				FLOE_WARN("compact: out of memory tracking delete files");
		}
	}
done:
	floe_op_free(op);
	floe_imap_reset(&dec);
	floe_free(gone);
	return rc;
}

/*
 * Commit groups [from, to). *committed says whether they landed; a lost
 * validation (a delete committed meanwhile targets a replaced file) gives
 * the groups up and is not an error.
 */
static int commit_or_give_up(compactor *c, size_t from, size_t to, bool *committed,
			     floe_error *err)
{
	int rc = commit_groups(c, from, to, err);
	*committed = rc == FLOE_OK;
	if (rc == FLOE_ECONFLICT) {
		FLOE_WARN("compact: giving up %zu group(s): %s", to - from, err ? err->msg : "conflict");
		c->res->groups_failed += to - from;
		floe_error_clear(err);
		rc = FLOE_OK;
	}
	return rc;
}

#define ID_ROW_ID 2147483540
#define ID_LAST_UPDATED_SEQ 2147483539

/* The write metadata of a v3 table: its schema plus the lineage fields. */
static int lineage_metadata(floe_metadata **out, const floe_metadata *m, floe_arena *a,
			    floe_error *err)
{
	const floe_schema *s = floe_metadata_current_schema(m);
	floe_type *root = floe_arena_calloc(a, 1, sizeof(*root));
	floe_field *fs = root ? floe_arena_calloc(a, s->root->n_fields + 2, sizeof(*fs)) : NULL;
	floe_schema *ls;
	floe_metadata_builder *b = NULL;
	int32_t id;
	int rc;
	if (!fs)
		return floe_error_oom(err);
	*root = *s->root;
	memcpy(fs, s->root->fields, s->root->n_fields * sizeof(*fs));
	fs[s->root->n_fields] = (floe_field){ID_ROW_ID, "_row_id", false,
					     floe_type_primitive(FLOE_T_LONG), NULL, NULL, NULL};
	fs[s->root->n_fields + 1] = (floe_field){ID_LAST_UPDATED_SEQ,
						 "_last_updated_sequence_number",
						 false,
						 floe_type_primitive(FLOE_T_LONG),
						 NULL,
						 NULL,
						 NULL};
	root->fields = fs;
	root->n_fields = s->root->n_fields + 2;
	if ((rc = floe_schema_make(&ls, a, s->schema_id, root, s->identifier_field_ids,
				   s->n_identifier_field_ids, err)) ||
	    (rc = floe_metadata_builder_from(&b, m, err)) ||
	    (rc = floe_mb_add_schema(b, ls, &id, err)) ||
	    (rc = floe_mb_set_current_schema(b, id, err))) {
		floe_metadata_builder_free(b);
		return rc;
	}
	return floe_metadata_builder_finish(out, b, NULL, m->last_updated_ms, err);
}

/* Scan options: every column of the current schema, plus lineage for v3. */
static int scan_columns(compactor *c, floe_scan_opts *so, floe_error *err)
{
	const floe_schema *s = floe_metadata_current_schema(c->m);
	if (!c->wm)
		return FLOE_OK; /* all columns */
	const char **cols = floe_arena_calloc(&c->a, s->root->n_fields + 2, sizeof(*cols));
	if (!cols)
		return floe_error_oom(err);
	for (size_t i = 0; i < s->root->n_fields; i++)
		cols[i] = s->root->fields[i].name;
	cols[s->root->n_fields] = "_row_id";
	cols[s->root->n_fields + 1] = "_last_updated_sequence_number";
	so->columns = cols;
	so->n_columns = s->root->n_fields + 2;
	return FLOE_OK;
}

int floe_compact__run(floe_table *t, const floe_compact_opts *opts,
		      floe_maintain_progress_fn progress_fn, int (*interrupted)(void *payload),
		      void *payload, floe_compact_result *res, floe_error *err_out)
{
	floe_error local, *err = err_out ? err_out : &local; /* the record is read below */
	FLOE_CHECK_OPTS(opts, "floe_compact_opts", "FLOE_COMPACT_OPTS_INIT", err);
	floe_compact_opts dflt = FLOE_COMPACT_OPTS_INIT;
	const floe_compact_opts *o = opts ? opts : &dflt;
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	compactor c;
	int rc;
	floe_error_clear(&local);
	memset(res, 0, sizeof(*res));
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.o = o;
	c.res = res;
	c.progress = progress_fn;
	c.interrupted = interrupted;
	c.payload = payload;
	floe_arena_init(&c.a, 65536);
	floe_imap_init(&c.refs);
	floe_imap_init(&c.removed_deletes);
	floe_uuid_v4_str(c.run_id);
	if (!floe_table_catalog(t)) {
		rc = floe_error_set(err, FLOE_EUNSUPPORTED,
				    "compaction needs a table opened through a catalog");
		goto done;
	}
	if ((rc = floe_table_load(&c.rt, floe_table_catalog(t), floe_table_namespace(t),
				  floe_table_name(t), err)))
		goto done;
	c.m = floe_table_metadata(c.rt);
	if (o->sort) {
		c.order = floe_metadata_sort_order(c.m, c.m->default_sort_order_id);
		if (!c.order || c.order->n_fields == 0) {
			rc = floe_error_set(err, FLOE_EINVAL,
					    "--sort: the table has no sort order (set one with "
					    "floe table create --sort, or ALTER TABLE ... WRITE "
					    "ORDERED BY)");
			goto done;
		}
	}
	const floe_snapshot *base = o->branch ? floe_metadata_branch_head(c.m, o->branch)
					      : floe_metadata_current_snapshot(c.m);
	so.branch = o->branch;
	if (!base) {
		rc = FLOE_OK;
		goto done;
	}
	c.base_id = base->snapshot_id;
	c.base_seq = base->sequence_number;
	if (c.m->format_version >= 3 && (rc = lineage_metadata(&c.wm, c.m, &c.a, err)))
		goto done;
	if ((rc = floe_write_config_from(&c.cfg, &c.a, c.m, err)) ||
	    (rc = scan_columns(&c, &so, err)))
		goto done;
	c.target = o->target_file_size > 0 ? o->target_file_size : c.cfg.target_file_size;
	c.min_size = o->min_file_size >= 0 ? o->min_file_size : c.target / 4 * 3;
	c.max_size = o->max_file_size > 0 ? o->max_file_size : c.target / 10 * 18;
	if (o->max_file_size <= 0 && c.max_size < c.target)
		c.max_size = c.target; /* a tiny target */
	if (c.min_size > c.target || c.max_size < c.target) {
		/* Java's planner refuses these too: no file would be left alone */
		rc = floe_error_set(err, FLOE_EINVAL,
				    "compaction: min-file-size %lld, target-file-size %lld and "
				    "max-file-size %lld bytes must satisfy min <= target <= max "
				    "(--min-file-size, --target-file-size, --max-file-size)",
				    (long long)c.min_size, (long long)c.target, (long long)c.max_size);
		goto done;
	}
	/* a damaged page must stop the rewrite: its new file would carry the
	 * damage under fresh checksums, and the original would be deleted */
	so.verify_checksums = true;
	if ((rc = floe_scan_open(&c.scan, c.rt, &so, err)))
		goto done;
	if (floe_scan_snapshot_id(c.scan) != c.base_id) {
		rc = floe_error_set(err, FLOE_ECONFLICT, "the table changed while planning");
		goto done;
	}
	if ((rc = plan(&c, err)))
		goto done;
	res->groups = c.n_groups;
	if (o->dry_run) {
		for (size_t i = 0; i < c.n_groups; i++) {
			res->data_files_rewritten += c.groups[i].n;
			res->bytes_rewritten += c.groups[i].bytes;
		}
		goto done;
	}
	/* the new files are unreferenced until their group commits: the writer
	 * lease keeps orphan cleanup (another maintainer's, without floe's lock)
	 * from taking them */
	if ((rc = floe_table__lease_keep_alive(t, "compaction of", 600000, err)))
		goto done;
	c.leased = true;
	size_t per_commit = c.n_groups;
	if (o->max_commits > 0)
		per_commit = (c.n_groups + (size_t)o->max_commits - 1) / (size_t)o->max_commits;
	if (per_commit == 0)
		per_commit = 1;
	size_t from = 0;
	for (size_t gi = 0; gi < c.n_groups; gi++) {
		char what[96];
		snprintf(what, sizeof(what), "group %zu/%zu (%zu files)", gi + 1, c.n_groups,
			 c.groups[gi].n);
		progress(&c, what);
		if (c.interrupted && c.interrupted(c.payload)) {
			/* commit what is finished, drop nothing committed */
			if (gi > from) {
				bool committed;
				rc = commit_or_give_up(&c, from, gi, &committed, err);
				if (rc == FLOE_ECOMMITUNKNOWN)
					goto done; /* the files may be referenced */
				if (!committed)
					for (size_t k = from; k < gi; k++)
						drop_output(&c, &c.groups[k]);
				from = gi;
			}
			if (!rc)
				rc = floe_error_set(err, FLOE_ECANCELED, "interrupted after %zu of %zu groups",
						    gi, c.n_groups);
			break;
		}
		if ((rc = write_group(&c, &c.groups[gi], gi, err))) {
			floe_error_prefix(err, rc, "compacting %zu files: ", c.groups[gi].n);
			break;
		}
		c.bytes_done += c.groups[gi].bytes;
		bool last = gi + 1 == c.n_groups;
		if (last || gi + 1 - from >= per_commit) {
			bool committed;
			rc = commit_or_give_up(&c, from, gi + 1, &committed, err);
			if (rc == FLOE_ECOMMITUNKNOWN)
				goto done; /* the files may be referenced */
			if (!committed)
				for (size_t k = from; k <= gi; k++)
					drop_output(&c, &c.groups[k]);
			from = gi + 1;
			if (rc)
				break;
		}
	}
	if (rc)
		for (size_t k = from; k < c.n_groups; k++)
			drop_output(&c, &c.groups[k]);
	progress(&c, "done");
done:
	for (size_t i = 0; i < c.n_groups; i++) {
		floe_free(c.groups[i].files);
		floe_free(c.groups[i].out);
	}
	floe_free(c.groups);
	if (c.leased)
		floe_table__lease_drop(t, rc == FLOE_ECOMMITUNKNOWN);
	floe_scan_free(c.scan);
	floe_table_free(c.rt);
	floe_metadata_free(c.wm);
	floe_imap_reset(&c.refs);
	floe_imap_reset(&c.removed_deletes);
	floe_arena_reset(&c.a);
	return floe_error_prefix(err, rc, "compact: ");
}

int floe_compact(floe_table *t, const floe_compact_opts *opts, floe_compact_result *res,
		 floe_error *err)
{
	return floe_compact__run(t, opts, NULL, NULL, NULL, res, err);
}
