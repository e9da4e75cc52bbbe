/*
 * write_roll.c — rolling files fanned out by partition: the core that the
 * data task writer uses now and the delete writers will use next.
 *
 * One slot per partition seen since the last complete(); a slot has at most
 * one open file. Rows routed to a slot go to its file in slices; after each
 * slice the file's estimated size is compared with the target and the file
 * is finished (its entry kept for complete()) when it reached it. Slices are
 * sized from the file's bytes per row so far, so a file overshoots the
 * target by at most about one slice.
 *
 * DESIGN (memory): the open files share one Parquet budget. The private
 * budget's callback only raises a flag (it runs inside a Parquet write);
 * after the slice, the fan-out ends the row group of the budget's largest
 * writer. With a shared budget the fan-out checks the budget after each
 * slice and flushes the largest writer when it is one of its own. Beyond
 * max_open_files, the largest open file is finished before a new one opens.
 *
 * File names are Java's: %05d-%d-<operation id>-%05d<ext>, the last number
 * counting files from 1 across checkpoints — of this writer, or of every
 * writer sharing its floe_file_namer (a task's data and delete writers, as
 * one Java task shares one OutputFileFactory).
 */
#include <stdio.h>
#include <string.h>

#include "arrow/arrow_take.h"
#include "util/alloc.h"
#include "util/hmap.h"
#include "util/rand.h"
#include "write/write_int.h"

#define FIRST_SLICE 1024 /* rows before the first size estimate */
#define MIN_SLICE 128

typedef struct slot {
	floe_partition part; /* owned (arena) */
	char *part_path;     /* NULL when unpartitioned */
	void *file;          /* open file or NULL */
	int32_t file_idx;    /* the open file's index in fo->opened */
	floe_arena arena;
} slot;

struct floe_write__fanout {
	floe_fileio *io;
	floe_write_config cfg;
	floe_arena cfg_arena;
	const floe_schema *schema;
	const floe_partition_spec *spec;
	bool partitioned; /* has a non-void field: files go under a partition path */
	const floe_write__file_ops *ops;
	void *factory;
	int64_t target;
	double ratio; /* finished size / estimate at close (learned) */
	int64_t n_ratio;
	floe_file_namer *namer;
	bool own_namer;
	size_t max_open;
	floe_parquet_budget *budget;
	bool own_budget;
	volatile bool over; /* the private budget's callback fired */
	/* slots */
	slot **slots;
	size_t n_slots, cap_slots;
	floe_hmap index; /* partition key -> slot */
	size_t open_files;
	/* files finished since the last complete() */
	floe_data_file *done;
	size_t n_done, cap_done;
	floe_arena done_arena;
	/* every file opened since the last complete() (row positions name them) */
	floe_write__opened *opened;
	size_t n_opened, cap_opened;
	floe_arena opened_arena;
	floe_buf key, path;
	floe_task_writer_stats stats;
};

static void on_over(floe_parquet_budget *b, floe_parquet_writer *largest, void *payload)
{
	floe_write__fanout *fo = payload;
	(void)b;
	(void)largest;
	fo->over = true;
}

int floe_write__fanout_new(floe_write__fanout **out, const floe_write__fanout_opts *o,
			   floe_parquet_budget **budget_out, floe_error *err)
{
	floe_write__fanout *fo = floe_calloc(1, sizeof(*fo));
	int rc;
	*out = NULL;
	if (!fo)
		return floe_error_oom(err);
	floe_arena_init(&fo->cfg_arena, 1024);
	floe_arena_init(&fo->done_arena, 16384);
	floe_arena_init(&fo->opened_arena, 4096);
	floe_hmap_init(&fo->index);
	floe_buf_init(&fo->key, 0);
	floe_buf_init(&fo->path, 0);
	fo->io = o->io;
	fo->cfg = *o->cfg;
	fo->cfg.data_path = floe_arena_strdup(&fo->cfg_arena, o->cfg->data_path);
	fo->schema = o->schema;
	fo->spec = o->spec;
	fo->partitioned = !floe_spec_is_unpartitioned(o->spec);
	fo->ops = o->ops;
	fo->factory = o->factory;
	fo->target = o->target_file_size > 0 ? o->target_file_size : o->cfg->target_file_size;
	fo->ratio = 1.0;
	fo->max_open = o->max_open_files ? o->max_open_files : 1000;
	if (!fo->cfg.data_path) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if (o->namer) {
		fo->namer = o->namer;
	} else {
		if ((rc = floe_file_namer_new(&fo->namer, o->partition_id, o->task_id,
					      o->operation_id, err)))
			goto fail;
		fo->own_namer = true;
	}
	if (o->budget) {
		fo->budget = o->budget;
	} else {
		if (floe_parquet_budget_new(&fo->budget,
					    o->private_budget ? o->private_budget : (uint64_t)256 << 20,
					    on_over, fo)) {
			rc = floe_error_oom(err);
			goto fail;
		}
		fo->own_budget = true;
	}
	*budget_out = fo->budget;
	*out = fo;
	return FLOE_OK;
fail:
	floe_write__fanout_abort(fo);
	return rc;
}

/* ---- slots ----------------------------------------------------------------------- */

/* A byte key for a partition tuple: equal tuples (floe_value_equal) give
 * equal keys. */
static int tuple_key(floe_buf *b, const floe_partition *p)
{
	floe_buf_clear(b);
	/* never empty (an unpartitioned spec's tuple has no values) */
	if (floe_buf_put_u32le(b, (uint32_t)p->n))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		const floe_value *v = &p->values[i];
		uint8_t tag[2] = {(uint8_t)v->type, v->is_null ? 0 : 1};
		int rc = floe_buf_append(b, tag, 2);
		if (rc || v->is_null)
			goto next;
		switch (v->type) {
		case FLOE_T_BOOLEAN: rc = floe_buf_putc(b, v->v.b ? 1 : 0); break;
		case FLOE_T_INT:
		case FLOE_T_DATE: rc = floe_buf_put_u32le(b, (uint32_t)v->v.i32); break;
		case FLOE_T_FLOAT:
		case FLOE_T_DOUBLE: {
			double d = v->type == FLOE_T_FLOAT ? v->v.f32 : v->v.f64;
			uint64_t bits;
			if (d != d)
				bits = UINT64_C(0x7ff8000000000000); /* every NaN is one partition */
			else
				memcpy(&bits, &d, 8);
			rc = floe_buf_put_u64le(b, bits);
			break;
		}
		case FLOE_T_DECIMAL: rc = floe_buf_append(b, &v->v.dec, sizeof(v->v.dec)); break;
		case FLOE_T_STRING:
		case FLOE_T_BINARY:
		case FLOE_T_FIXED:
		case FLOE_T_UUID:
			rc = floe_buf_put_u64le(b, (uint64_t)v->v.bin.n);
			if (!rc)
				rc = floe_buf_append(b, v->v.bin.p, v->v.bin.n);
			break;
		default: rc = floe_buf_put_u64le(b, (uint64_t)v->v.i64); break;
		}
next:
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

static void slot_free(slot *s)
{
	if (!s)
		return;
	floe_arena_reset(&s->arena);
	floe_free(s);
}

/*
 * Estimates count a row group's open pages and dictionaries at their
 * uncompressed size (a dictionary of distinct values grows to
 * dict-size-bytes before the writer falls back), so with small targets
 * files would roll early. The fan-out learns how much the open part
 * shrinks — from files it finishes, and once by ending the first file's
 * row group when it reaches the target — and scales only that part: bytes
 * written and finished (compressed) pages are exact. (Scaling finished
 * pages too made the learnt ratio wrong as soon as the mix changed, e.g.
 * when a column gave up its dictionary: files then never rolled.)
 */
static void learn_ratio(floe_write__fanout *fo, int64_t open_est, int64_t open_actual)
{
	double r;
	if (open_est < 4096 || open_actual <= 0)
		return; /* too little to tell */
	r = (double)open_actual / (double)open_est;
	if (r < 0.05)
		r = 0.05;
	if (r > 1.0)
		r = 1.0;
	fo->ratio = fo->n_ratio ? 0.5 * fo->ratio + 0.5 * r : r;
	fo->n_ratio++;
}

static int64_t est_size(const floe_write__fanout *fo, const void *f)
{
	int64_t exact, open;
	fo->ops->size_parts(f, &exact, &open);
	return exact + (int64_t)((double)open * fo->ratio);
}

static int slot_get(floe_write__fanout *fo, const floe_partition *p, slot **out, floe_error *err)
{
	uint64_t idx;
	slot *s = NULL;
	int rc;
	if (tuple_key(&fo->key, p))
		return floe_error_oom(err);
	if (floe_hmap_get(&fo->index, fo->key.data, fo->key.len, &idx)) {
		*out = fo->slots[idx];
		return FLOE_OK;
	}
	if (FLOE_ARRAY_RESERVE(fo->slots, fo->cap_slots, fo->n_slots + 1))
		goto nomem;
	s = floe_calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	floe_arena_init(&s->arena, 512);
	s->part.n = p->n;
	s->part.values = floe_arena_calloc(&s->arena, p->n + 1, sizeof(floe_value));
	if (!s->part.values)
		goto nomem;
	for (size_t i = 0; i < p->n; i++) {
		s->part.values[i] = p->values[i];
		if (floe_value_own(&s->part.values[i], &s->arena))
			goto nomem;
	}
	if (fo->partitioned) {
		floe_buf pp;
		floe_buf_init(&pp, 0);
		rc = floe_partition_path(&pp, fo->spec, fo->schema, &s->part);
		s->part_path = rc ? NULL : floe_arena_strndup(&s->arena, floe_buf_cstr(&pp), pp.len);
		floe_buf_reset(&pp);
		if (!s->part_path)
			goto nomem;
	}
	if (floe_hmap_put(&fo->index, fo->key.data, fo->key.len, fo->n_slots, NULL))
		goto nomem;
	fo->slots[fo->n_slots++] = s;
	*out = s;
	return FLOE_OK;
nomem:
	slot_free(s);
	return floe_error_oom(err);
}

/* Finish a slot's open file: its entry joins the done list. */
static int slot_finish(floe_write__fanout *fo, slot *s, floe_error *err)
{
	floe_data_file df;
	void *f = s->file;
	int rc;
	if (!f)
		return FLOE_OK;
	s->file = NULL;
	fo->open_files--;
	if (FLOE_ARRAY_RESERVE(fo->done, fo->cap_done, fo->n_done + 1)) {
		fo->ops->abort(f);
		return floe_error_oom(err);
	}
	int64_t exact, open;
	fo->ops->size_parts(f, &exact, &open);
	if ((rc = fo->ops->close(f, &df, &fo->done_arena, err)))
		return rc;

	learn_ratio(fo, open, df.file_size_in_bytes - exact);
	fo->done[fo->n_done++] = df;
	fo->stats.files_finished++;
	return FLOE_OK;
}

/* The open file with the largest estimated size. */
static slot *largest_open(floe_write__fanout *fo)
{
	slot *best = NULL;
	int64_t best_v = -1;
	for (size_t i = 0; i < fo->n_slots; i++) {
		slot *s = fo->slots[i];
		if (!s->file)
			continue;
		int64_t v = fo->ops->size(s->file);
		if (v > best_v) {
			best = s;
			best_v = v;
		}
	}
	return best;
}

static int slot_open(floe_write__fanout *fo, slot *s, floe_error *err)
{
	char name[160];
	int rc;
	while (fo->open_files >= fo->max_open) {
		slot *victim = largest_open(fo);
		if (!victim)
			break;
		if ((rc = slot_finish(fo, victim, err)))
			return rc;
		fo->stats.evictions++;
	}
	if ((rc = floe_file_namer_next(fo->namer, name, sizeof(name), fo->ops->ext, err)))
		return rc;
	floe_buf_clear(&fo->path);
	if (floe_write_location(&fo->path, &fo->cfg, s->part_path, name))
		return floe_error_oom(err);
	if (FLOE_ARRAY_RESERVE(fo->opened, fo->cap_opened, fo->n_opened + 1) ||
	    fo->n_opened >= (size_t)INT32_MAX)
		return floe_error_oom(err);
	floe_write__opened *op = &fo->opened[fo->n_opened];
	op->path = floe_arena_strndup(&fo->opened_arena, floe_buf_cstr(&fo->path), fo->path.len);
	op->partition = &s->part;
	if (!op->path)
		return floe_error_oom(err);
	if ((rc = fo->ops->open(&s->file, fo->factory, floe_buf_cstr(&fo->path), &s->part, err)))
		return rc;
	s->file_idx = (int32_t)fo->n_opened++;
	fo->open_files++;
	return FLOE_OK;
}

/*
 * Over the budget: end the row group of the budget's largest writer when it
 * is one of ours (a shared budget's largest on another thread flushes itself
 * at its next write).
 */
static int relieve(floe_write__fanout *fo, floe_error *err)
{
	const void *largest;
	int rc;
	fo->over = false;
	if (floe_parquet_budget_used(fo->budget) <= floe_parquet_budget_limit(fo->budget))
		return FLOE_OK;
	largest = floe_parquet_budget_largest(fo->budget);
	for (size_t i = 0; i < fo->n_slots && largest; i++) {
		slot *s = fo->slots[i];
		if (!s->file || fo->ops->budget_key(s->file) != largest)
			continue;
		if ((rc = fo->ops->flush(s->file, err)))
			return rc;
		fo->stats.budget_flushes++;
		break;
	}
	return FLOE_OK;
}

/* Finish the slot's file when it reached the target. */
static int roll_check(floe_write__fanout *fo, slot *s, floe_error *err)
{
	int rc;
	if (est_size(fo, s->file) < fo->target)
		return FLOE_OK;
	if (fo->n_ratio == 0) {
		/* not calibrated yet: measure by ending the row group */
		int64_t exact, open;
		fo->ops->size_parts(s->file, &exact, &open);
		if ((rc = fo->ops->flush(s->file, err)))
			return rc;
		learn_ratio(fo, open, fo->ops->written(s->file) - exact);
		if (fo->n_ratio == 0)
			fo->n_ratio = 1; /* measured once, even if too small to tell */
		if (est_size(fo, s->file) < fo->target)
			return FLOE_OK;
	}
	return slot_finish(fo, s, err);
}

static int slot_write(floe_write__fanout *fo, slot *s, const struct ArrowArray *b,
		      const struct ArrowSchema *bs, int32_t *file_out, int64_t *pos_out,
		      floe_error *err)
{
	int64_t off = 0, len = b->length;
	int rc;
	while (off < len) {
		if (!s->file && (rc = slot_open(fo, s, err)))
			return rc;
		int64_t n = len - off, rows = fo->ops->rows(s->file), cap;
		if (rows == 0) {
			cap = FIRST_SLICE;
		} else {
			int64_t size = est_size(fo, s->file), bpr = size / rows;
			cap = (fo->target - size) / (bpr > 0 ? bpr : 1);
			if (cap < MIN_SLICE)
				cap = MIN_SLICE;
		}
		if (n > cap)
			n = cap;
		if (pos_out) {
			/* the rows' places: this file, after the rows it holds */
			for (int64_t k = 0; k < n; k++) {
				file_out[off + k] = s->file_idx;
				pos_out[off + k] = rows + k;
			}
		}
		if (off == 0 && n == len) {
			rc = fo->ops->write(s->file, b, bs, err);
		} else {
			struct ArrowArray slice;
			floe_arrow_slice_view(&slice, b, off, n);
			rc = fo->ops->write(s->file, &slice, bs, err);
		}
		if (rc)
			return rc;
		off += n;
		fo->stats.rows += n;
		if ((rc = roll_check(fo, s, err)))
			return rc;
		if ((fo->over || !fo->own_budget) && (rc = relieve(fo, err)))
			return rc;
	}
	return FLOE_OK;
}

int floe_write__fanout_route(floe_write__fanout *fo, const floe_partition *p,
			     const struct ArrowArray *batch, const struct ArrowSchema *schema,
			     floe_error *err)
{
	return floe_write__fanout_route_pos(fo, p, batch, schema, NULL, NULL, err);
}

int floe_write__fanout_route_pos(floe_write__fanout *fo, const floe_partition *p,
				 const struct ArrowArray *batch, const struct ArrowSchema *schema,
				 int32_t *file_out, int64_t *pos_out, floe_error *err)
{
	slot *s = NULL;
	int rc;
	if (p->n != fo->spec->n_fields)
		return floe_error_set(err, FLOE_EINVAL, "a partition of %zu values for a spec of %zu",
				      p->n, fo->spec->n_fields);
	if (batch->length == 0)
		return FLOE_OK;
	if ((rc = slot_get(fo, p, &s, err)))
		return rc;
	return slot_write(fo, s, batch, schema, file_out, pos_out, err);
}

const floe_write__opened *floe_write__fanout_opened(const floe_write__fanout *fo, int32_t idx)
{
	if (idx < 0 || (size_t)idx >= fo->n_opened)
		return NULL;
	return &fo->opened[idx];
}

static void forget_slots(floe_write__fanout *fo)
{
	for (size_t i = 0; i < fo->n_slots; i++) {
		if (fo->slots[i]->file) {
			fo->ops->abort(fo->slots[i]->file);
			fo->open_files--;
		}
		slot_free(fo->slots[i]);
	}
	fo->n_slots = 0;
	floe_hmap_reset(&fo->index);
	floe_hmap_init(&fo->index);
}

int floe_write__fanout_complete(floe_write__fanout *fo, floe_data_file **files, size_t *n,
				floe_arena *a, floe_error *err)
{
	int rc;
	for (size_t i = 0; i < fo->n_slots; i++)
		if ((rc = slot_finish(fo, fo->slots[i], err)))
			return rc;
	if (fo->n_done) {
		floe_data_file *arr = floe_realloc(*files, (*n + fo->n_done) * sizeof(**files));
		if (!arr)
			return floe_error_oom(err);
		*files = arr;
		for (size_t i = 0; i < fo->n_done; i++)
			if (floe_data_file_copy(&arr[*n + i], a, &fo->done[i]))
				return floe_error_oom(err);
		*n += fo->n_done;
	}
	fo->n_done = 0;
	floe_arena_reset(&fo->done_arena);
	fo->n_opened = 0;
	floe_arena_reset(&fo->opened_arena);
	/* the partitions of this checkpoint are done with */
	forget_slots(fo);
	return FLOE_OK;
}

size_t floe_write__fanout_buffered(const floe_write__fanout *fo)
{
	size_t total = 0;
	for (size_t i = 0; i < fo->n_slots; i++)
		if (fo->slots[i]->file)
			total += fo->ops->buffered(fo->slots[i]->file);
	return total;
}

void floe_write__fanout_stats(const floe_write__fanout *fo, floe_task_writer_stats *out)
{
	*out = fo->stats;
	out->open_files = fo->open_files;
}

void floe_write__fanout_abort(floe_write__fanout *fo)
{
	if (!fo)
		return;
	forget_slots(fo);
	/* finished files nobody was told about */
	for (size_t i = 0; i < fo->n_done; i++)
		floe_io_remove_quiet(fo->io, fo->done[i].file_path);
	floe_free(fo->slots);
	floe_free(fo->done);
	floe_free(fo->opened);
	floe_arena_reset(&fo->opened_arena);
	floe_hmap_reset(&fo->index);
	floe_arena_reset(&fo->done_arena);
	floe_arena_reset(&fo->cfg_arena);
	floe_buf_reset(&fo->key);
	floe_buf_reset(&fo->path);
	if (fo->own_budget)
		floe_parquet_budget_free(fo->budget);
	if (fo->own_namer)
		floe_file_namer_free(fo->namer);
	floe_free(fo);
}

/* ---- file names --------------------------------------------------------------------- */

struct floe_file_namer {
	int partition_id;
	int64_t task_id;
	int32_t count;
	char op_id[64];
};

int floe_file_namer_new(floe_file_namer **out, int partition_id, int64_t task_id,
			const char *operation_id, floe_error *err)
{
	floe_file_namer *nm;
	*out = NULL;
	if (operation_id && strlen(operation_id) >= sizeof(nm->op_id))
		return floe_error_set(err, FLOE_EINVAL, "operation id '%s' is too long",
				      operation_id);
	nm = floe_calloc(1, sizeof(*nm));
	if (!nm)
		return floe_error_oom(err);
	nm->partition_id = partition_id;
	nm->task_id = task_id;
	if (operation_id && *operation_id)
		snprintf(nm->op_id, sizeof(nm->op_id), "%s", operation_id);
	else
		floe_uuid_v4_str(nm->op_id);
	*out = nm;
	return FLOE_OK;
}

int floe_file_namer_next(floe_file_namer *nm, char *out, size_t cap, const char *ext,
			 floe_error *err)
{
	int k;
	if (nm->count == INT32_MAX)
		return floe_error_set(err, FLOE_EINVAL, "too many files for one task");
	k = snprintf(out, cap, "%05d-%lld-%s-%05d%s", nm->partition_id, (long long)nm->task_id,
		     nm->op_id, nm->count + 1, ext ? ext : "");
	if (k < 0 || (size_t)k >= cap)
		return floe_error_set(err, FLOE_EINVAL, "file name longer than %zu bytes", cap);
	nm->count++;
	return FLOE_OK;
}

const char *floe_file_namer_operation_id(const floe_file_namer *nm)
{
	return nm->op_id;
}

int32_t floe_file_namer_count(const floe_file_namer *nm)
{
	return nm->count;
}

void floe_file_namer_free(floe_file_namer *nm)
{
	floe_free(nm);
}
