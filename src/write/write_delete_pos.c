/*
 * write_delete_pos.c — position delete files (format v2), and the per-data-
 * file position sets that they and the deletion vectors collect.
 *
 * spec: "Position Delete Files": file_path (2147483546) and pos
 * (2147483545), rows sorted by file_path then pos; v3 writers add deletion
 * vectors instead. Java: SortingPositionOnlyDeleteWriter (positions kept per
 * data file, written sorted when the writer closes, one file per partition or
 * per data file) around PositionDeleteWriter (metrics, see write_data.c).
 *
 * DESIGN: positions are appended to a per-data-file array (8 bytes each)
 * that is sorted once, when it is written; an array whose appends ascend is
 * never sorted at all (the upsert writer's deletes mostly ascend). Writing
 * goes through the rolling fan-out (one per partition spec: a data file of
 * an older spec gets deletes of that spec), in path order, in batches of one
 * data file's rows whose file_path column repeats the path (the Parquet
 * writer dictionary-encodes it). Past max_buffered_bytes everything held is
 * written out and the files finished (each file stays sorted; a data file's
 * deletes may then span several delete files, which the spec allows).
 */
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "util/alloc.h"
#include "util/sort.h"
#include "write/write_int.h"

#define MAX_PATH_BYTES 65535

/* ---- position sets per data file ------------------------------------------------- */

void floe_write__targets_init(floe_write__targets *ts, uint64_t max_pos)
{
	memset(ts, 0, sizeof(*ts));
	floe_hmap_init(&ts->index);
	floe_arena_init(&ts->arena, 4096);
	ts->max_pos = max_pos;
}

void floe_write__targets_reset(floe_write__targets *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		floe_free(ts->v[i]->pos);
	floe_free(ts->v);
	floe_hmap_reset(&ts->index);
	floe_arena_reset(&ts->arena);
	uint64_t max_pos = ts->max_pos;
	floe_write__targets_init(ts, max_pos);
}

static bool same_partition(const floe_partition *a, const floe_partition *b)
{
	size_t na = a ? a->n : 0, nb = b ? b->n : 0;
	if (na != nb)
		return false;
	return na == 0 || floe_partition_equal(a, b);
}

int floe_write__targets_get(floe_write__targets *ts, floe_write__target **out, const char *path,
			    int32_t spec_id, const floe_partition *partition, floe_error *err)
{
	size_t len = path ? strlen(path) : 0;
	uint64_t *slot;
	bool existed;
	floe_write__target *t;
	*out = NULL;
	if (!len)
		return floe_error_set(err, FLOE_EINVAL, "a delete needs a data file path");
	if (len > MAX_PATH_BYTES)
		return floe_error_set(err, FLOE_EINVAL, "data file path of %zu bytes (at most %d)",
				      len, MAX_PATH_BYTES);
	if (floe_hmap_upsert(&ts->index, path, len, &slot, &existed))
		return floe_error_oom(err);
	if (existed) {
		t = ts->v[*slot];
		if (t->spec_id != spec_id || !same_partition(&t->partition, partition))
			return floe_error_set(err, FLOE_EINVAL,
					      "data file '%s' was given another spec or partition "
					      "before",
					      path);
		*out = t;
		return FLOE_OK;
	}
	if (FLOE_ARRAY_RESERVE(ts->v, ts->cap, ts->n + 1))
		goto nomem;
	t = floe_arena_calloc(&ts->arena, 1, sizeof(*t));
	if (!t || !(t->path = floe_arena_strndup(&ts->arena, path, len)))
		goto nomem;
	t->path_len = len;
	t->spec_id = spec_id;
	t->sorted = true;
	t->partition.n = partition ? partition->n : 0;
	t->partition.values = floe_arena_calloc(&ts->arena, t->partition.n + 1, sizeof(floe_value));
	if (!t->partition.values)
		goto nomem;
	for (size_t i = 0; i < t->partition.n; i++) {
		t->partition.values[i] = partition->values[i];
		if (floe_value_own(&t->partition.values[i], &ts->arena))
			goto nomem;
	}
	*slot = ts->n;
	ts->v[ts->n++] = t;
	*out = t;
	return FLOE_OK;
nomem:
	/* the index points at a target that does not exist: forget the key */
	floe_hmap_reset(&ts->index);
	floe_hmap_init(&ts->index);
	for (size_t i = 0; i < ts->n; i++)
		if (floe_hmap_put(&ts->index, ts->v[i]->path, ts->v[i]->path_len, i, NULL))
			break;
	return floe_error_oom(err);
}

static int reserve(floe_write__targets *ts, floe_write__target *t, size_t n, floe_error *err)
{
	size_t need, old = t->cap;
	if (!floe_size_add(&need, t->n, n))
		return floe_error_oom(err);
	if (need <= t->cap)
		return FLOE_OK;
	if (FLOE_ARRAY_RESERVE(t->pos, t->cap, need))
		return floe_error_oomf(err, "out of memory holding %zu deleted positions", need);
	ts->bytes += (t->cap - old) * sizeof(uint64_t);
	return FLOE_OK;
}

static void push(floe_write__target *t, uint64_t p)
{
	if (t->n && p <= t->pos[t->n - 1]) {
		if (p == t->pos[t->n - 1])
			return; /* a repeat of the last: nothing to add */
		t->sorted = false;
	}
	t->pos[t->n++] = p;
}

int floe_write__target_add(floe_write__targets *ts, floe_write__target *t, const int64_t *pos,
			   size_t n, floe_error *err)
{
	int rc;
	for (size_t i = 0; i < n; i++)
		if (pos[i] < 0 || (uint64_t)pos[i] > ts->max_pos)
			return floe_error_set(err, FLOE_EINVAL,
					      "data file '%s': position %lld is out of range "
					      "[0, %llu]",
					      t->path, (long long)pos[i],
					      (unsigned long long)ts->max_pos);
	if ((rc = reserve(ts, t, n, err)))
		return rc;
	for (size_t i = 0; i < n; i++)
		push(t, (uint64_t)pos[i]);
	return FLOE_OK;
}

int floe_write__target_add_u64(floe_write__targets *ts, floe_write__target *t,
			       const uint64_t *pos, size_t n, floe_error *err)
{
	int rc;
	for (size_t i = 0; i < n; i++)
		if (pos[i] > ts->max_pos)
			return floe_error_set(err, FLOE_EINVAL,
					      "data file '%s': position %llu is out of range "
					      "[0, %llu]",
					      t->path, (unsigned long long)pos[i],
					      (unsigned long long)ts->max_pos);
	if ((rc = reserve(ts, t, n, err)))
		return rc;
	for (size_t i = 0; i < n; i++)
		push(t, pos[i]);
	return FLOE_OK;
}

void floe_write__target_normalize(floe_write__targets *ts, floe_write__target *t)
{
	(void)ts;
	if (t->sorted)
		return;
	t->n = floe_sort_unique_u64(t->pos, t->n);
	t->sorted = true;
}

static int cmp_target(const void *x, const void *y)
{
	const floe_write__target *a = *(floe_write__target *const *)x;
	const floe_write__target *b = *(floe_write__target *const *)y;
	size_t n = a->path_len < b->path_len ? a->path_len : b->path_len;
	int c = memcmp(a->path, b->path, n);
	if (c)
		return c;
	return a->path_len < b->path_len ? -1 : a->path_len > b->path_len;
}

int floe_write__targets_order(floe_write__targets *ts, floe_write__target ***out,
			      floe_error *err)
{
	*out = floe_malloc((ts->n + 1) * sizeof(**out));
	if (!*out)
		return floe_error_oom(err);
	if (ts->n) {
		memcpy(*out, ts->v, ts->n * sizeof(**out));
		qsort(*out, ts->n, sizeof(**out), cmp_target);
	}
	return FLOE_OK;
}

/* ---- the position delete writer ---------------------------------------------------- */

typedef struct spec_out {
	int32_t spec_id;
	const floe_partition_spec *spec;
	floe_write__data_factory factory;
	floe_write__fanout *fo;
} spec_out;

struct floe_pos_delete_writer {
	floe_fileio *io;
	const floe_metadata *m;
	const floe_schema *table_schema;
	floe_write_config cfg;
	floe_arena arena; /* cfg strings, the delete schema */
	floe_delete_writer_opts opts;
	floe_file_namer *namer;
	bool own_namer;
	floe_parquet_budget *budget;
	bool own_budget;
	floe_schema *schema; /* file_path, pos */
	floe_write__format *fmt;
	struct ArrowSchema batch_schema;
	spec_out **specs; /* each its own allocation: its fan-out points at its factory */
	size_t n_specs;
	floe_write__targets targets;
	size_t max_buffered;
	/* files finished and not yet handed out */
	floe_data_file *held;
	size_t n_held;
	floe_arena held_arena;
	/* batch scratch */
	floe_buf chars, offsets;
	floe_delete_writer_stats stats;
	bool failed;
};

static int pos_schema(floe_schema **out, floe_arena *a, floe_error *err)
{
	floe_type *root = floe_arena_calloc(a, 1, sizeof(*root));
	floe_field *f = floe_arena_calloc(a, 2, sizeof(*f));
	if (!root || !f)
		return floe_error_oom(err);
	/* Java's MetadataColumns.DELETE_FILE_PATH / DELETE_FILE_POS */
	f[0] = (floe_field){FLOE_FIELD_ID_DELETE_FILE_PATH, "file_path", true,
			    floe_type_primitive(FLOE_T_STRING),
			    "Path of a file in which a deleted row is stored", NULL, NULL};
	f[1] = (floe_field){FLOE_FIELD_ID_DELETE_POS, "pos", true, floe_type_primitive(FLOE_T_LONG),
			    "Ordinal position of a deleted row in the data file", NULL, NULL};
	root->id = FLOE_T_STRUCT;
	root->fields = f;
	root->n_fields = 2;
	return floe_schema_make(out, a, 0, root, NULL, 0, err);
}

static void noop_release_array(struct ArrowArray *x)
{
	x->release = NULL;
}

int floe_pos_delete_writer_new(floe_pos_delete_writer **out, floe_fileio *io,
			       const floe_metadata *m, const floe_write_config *cfg,
			       const floe_delete_writer_opts *opts, floe_error *err)
{
	static const floe_delete_writer_opts dflt = FLOE_DELETE_WRITER_OPTS_INIT;
	static const floe_metrics_mode full = {FLOE_METRICS_FULL, 0};
	floe_pos_delete_writer *w;
	floe_write__format_opts fo = {0};
	int rc;
	*out = NULL;
	if (!opts)
		opts = &dflt;
	if (opts->version != 1)
		return floe_error_set(err, FLOE_EINVAL, "position delete writer: options version %d",
				      opts->version);
	if (m->format_version < 2)
		return floe_error_set(err, FLOE_EINVAL, "position delete writer: a v%d table cannot "
				      "hold delete files (format v2 or later)",
				      m->format_version);
	if (m->format_version >= 3)
		return floe_error_set(err, FLOE_EINVAL,
				      "position delete writer: a v%d table takes deletion vectors, "
				      "not position delete files (spec: v3 writers must not add "
				      "position delete files)",
				      m->format_version);
	w = floe_calloc(1, sizeof(*w));
	if (!w)
		return floe_error_oom(err);
	floe_arena_init(&w->arena, 2048);
	floe_arena_init(&w->held_arena, 4096);
	floe_buf_init(&w->chars, 0);
	floe_buf_init(&w->offsets, 0);
	floe_write__targets_init(&w->targets, (uint64_t)INT64_MAX);
	w->io = io;
	w->m = m;
	w->table_schema = floe_metadata_current_schema(m);
	w->opts = *opts;
	w->opts.operation_id = NULL; /* used once, below */
	w->cfg = *cfg;
	w->cfg.data_path = floe_arena_strdup(&w->arena, cfg->data_path);
	w->max_buffered = opts->max_buffered_bytes ? opts->max_buffered_bytes : (size_t)64 << 20;
	if (!w->cfg.data_path || !w->table_schema) {
		rc = w->table_schema ? floe_error_oom(err)
				     : floe_error_set(err, FLOE_EINVAL, "the table has no schema");
		goto fail;
	}
	if (opts->namer) {
		w->namer = opts->namer;
	} else {
		if ((rc = floe_file_namer_new(&w->namer, opts->partition_id, opts->task_id,
					      opts->operation_id, err)))
			goto fail;
		w->own_namer = true;
	}
	if (opts->budget) {
		w->budget = opts->budget;
	} else {
		uint64_t lim = opts->budget_bytes ? opts->budget_bytes : (uint64_t)256 << 20;
		if (floe_parquet_budget_new(&w->budget, lim, NULL, NULL)) {
			rc = floe_error_oom(err);
			goto fail;
		}
		w->own_budget = true;
	}
	if ((rc = pos_schema(&w->schema, &w->arena, err)))
		goto fail;
	fo.mode = &full; /* MetricsConfig.forPositionDelete */
	fo.content = FLOE_CONTENT_POSITION_DELETES;
	fo.delete_type = "position";
	if ((rc = floe_write__format_new_opts(&w->fmt, m, w->schema, &fo, err)))
		goto fail;
	if ((rc = floe_arrow_schema_init(&w->batch_schema, "+s", "", 0, 2)) ||
	    (rc = floe_arrow_schema_init(w->batch_schema.children[0], "u", "file_path", 0, 0)) ||
	    (rc = floe_arrow_schema_init(w->batch_schema.children[1], "l", "pos", 0, 0))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	*out = w;
	return FLOE_OK;
fail:
	floe_error_prefix(err, rc, "position delete writer: ");
	floe_pos_delete_writer_abort(w);
	return rc;
}

static int spec_fanout(floe_pos_delete_writer *w, int32_t spec_id, spec_out **out,
		       floe_error *err)
{
	floe_write__fanout_opts o = {0};
	floe_parquet_budget *b;
	spec_out *so;
	int rc;
	for (size_t i = 0; i < w->n_specs; i++)
		if (w->specs[i]->spec_id == spec_id) {
			*out = w->specs[i];
			return FLOE_OK;
		}
	const floe_partition_spec *spec = floe_metadata_spec(w->m, spec_id);
	if (!spec)
		return floe_error_set(err, FLOE_EINVAL, "partition spec %d is not in the table",
				      spec_id);
	spec_out **nv = floe_realloc(w->specs, (w->n_specs + 1) * sizeof(*nv));
	if (!nv)
		return floe_error_oom(err);
	w->specs = nv;
	so = floe_calloc(1, sizeof(*so));
	if (!so)
		return floe_error_oom(err);
	so->spec_id = spec_id;
	so->spec = spec;
	so->factory.io = w->io;
	so->factory.fmt = w->fmt;
	so->factory.spec_id = spec_id;
	so->factory.opts = w->cfg.delete_parquet;
	so->factory.opts.budget = w->budget;
	o.io = w->io;
	o.cfg = &w->cfg;
	o.schema = w->table_schema;
	o.spec = spec;
	o.ops = &floe_write__data_file_ops;
	o.factory = &so->factory;
	o.target_file_size = w->opts.target_file_size > 0 ? w->opts.target_file_size
							  : w->cfg.delete_target_file_size;
	o.namer = w->namer;
	o.max_open_files = w->opts.max_open_files;
	o.budget = w->budget;
	if ((rc = floe_write__fanout_new(&so->fo, &o, &b, err))) {
		floe_free(so);
		return rc;
	}
	w->specs[w->n_specs++] = so;
	*out = so;
	return FLOE_OK;
}

/* Hand a fan-out's finished files to the held list. */
static int hold(floe_pos_delete_writer *w, spec_out *so, floe_error *err)
{
	floe_data_file *files = NULL;
	size_t n = 0;
	int rc = floe_write__fanout_complete(so->fo, &files, &n, &w->held_arena, err);
	if (!rc && n) {
		floe_data_file *nv = floe_realloc(w->held, (w->n_held + n) * sizeof(*nv));
		if (!nv) {
			for (size_t i = 0; i < n; i++)
				floe_io_remove_quiet(w->io, files[i].file_path);
			rc = floe_error_oom(err);
		} else {
			w->held = nv;
			memcpy(w->held + w->n_held, files, n * sizeof(*files));
			w->n_held += n;
			w->stats.files_finished += (int64_t)n;
		}
	}
	floe_free(files);
	return rc;
}

/* The rows of one data file, in batches whose file_path repeats its path. */
static int write_target(floe_pos_delete_writer *w, spec_out *so, floe_write__target *t,
			floe_error *err)
{
	size_t chunk = ((size_t)1 << 20) / (t->path_len + 1);
	int rc = FLOE_OK;
	if (chunk < 64)
		chunk = 64;
	if (chunk > 8192)
		chunk = 8192;
	for (size_t off = 0; off < t->n && !rc; off += chunk) {
		size_t k = t->n - off < chunk ? t->n - off : chunk;
		floe_buf_clear(&w->chars);
		floe_buf_clear(&w->offsets);
		if (floe_buf_reserve(&w->chars, k * t->path_len) ||
		    floe_buf_reserve(&w->offsets, (k + 1) * sizeof(int32_t)))
			return floe_error_oom(err);
		for (size_t i = 0; i <= k; i++) {
			int32_t o = (int32_t)(i * t->path_len);
			if ((rc = floe_buf_append(&w->offsets, &o, sizeof(o))))
				return floe_error_oom(err);
			if (i < k && (rc = floe_buf_append(&w->chars, t->path, t->path_len)))
				return floe_error_oom(err);
		}
		const void *pb[3] = {NULL, w->offsets.data, w->chars.data};
		const void *lb[2] = {NULL, t->pos + off};
		struct ArrowArray cp = {0}, cl = {0}, root = {0};
		struct ArrowArray *kids[2] = {&cp, &cl};
		const void *rb[1] = {NULL};
		cp.length = cl.length = root.length = (int64_t)k;
		cp.n_buffers = 3;
		cp.buffers = pb;
		cl.n_buffers = 2;
		cl.buffers = lb;
		root.n_buffers = 1;
		root.buffers = rb;
		root.n_children = 2;
		root.children = kids;
		cp.release = cl.release = root.release = noop_release_array;
		rc = floe_write__fanout_route(so->fo, &t->partition, &root, &w->batch_schema, err);
	}
	return rc;
}

/* Write every position held, in path order. With finish, close the files. */
static int write_out(floe_pos_delete_writer *w, bool finish, floe_error *err)
{
	floe_write__target **order = NULL;
	int rc;
	if (w->targets.n == 0)
		goto finish;
	if ((rc = floe_write__targets_order(&w->targets, &order, err)))
		return rc;
	for (size_t i = 0; i < w->targets.n; i++) {
		floe_write__target *t = order[i];
		spec_out *so = NULL;
		floe_write__target_normalize(&w->targets, t);
		if (t->n == 0)
			continue;
		if ((rc = spec_fanout(w, t->spec_id, &so, err)) || (rc = write_target(w, so, t, err)))
			goto done;
		if (w->opts.file_scoped && (rc = hold(w, so, err)))
			goto done;
	}
	floe_write__targets_reset(&w->targets);
finish:
	if (finish)
		for (size_t i = 0; i < w->n_specs; i++)
			if ((rc = hold(w, w->specs[i], err)))
				goto done;
	rc = FLOE_OK;
done:
	floe_free(order);
	return rc;
}

int floe_pos_delete_writer_delete(floe_pos_delete_writer *w, const char *data_path,
				  int32_t spec_id, const floe_partition *partition,
				  const int64_t *pos, size_t n, floe_error *err)
{
	floe_write__target *t;
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "position delete writer: failed earlier "
				      "(abort it)");
	const floe_partition_spec *spec = floe_metadata_spec(w->m, spec_id);
	if (!spec)
		return floe_error_set(err, FLOE_EINVAL,
				      "position delete writer: partition spec %d is not in the table",
				      spec_id);
	if ((partition ? partition->n : 0) != spec->n_fields)
		return floe_error_set(err, FLOE_EINVAL,
				      "position delete writer: data file '%s': a partition of %zu "
				      "values for spec %d of %zu fields",
				      data_path ? data_path : "", partition ? partition->n : 0,
				      spec_id, spec->n_fields);
	if ((rc = floe_write__targets_get(&w->targets, &t, data_path, spec_id, partition, err)) ||
	    (rc = floe_write__target_add(&w->targets, t, pos, n, err)))
		return floe_error_prefix(err, rc, "position delete writer: ");
	w->stats.deletes += (int64_t)n;
	if (w->targets.bytes > w->max_buffered) {
		w->stats.spills++;
		if ((rc = write_out(w, true, err))) {
			w->failed = true;
			return floe_error_prefix(err, rc, "position delete writer: ");
		}
	}
	return FLOE_OK;
}

int floe_pos_delete_writer_complete(floe_pos_delete_writer *w, floe_data_file **files, size_t *n,
				    floe_arena *a, floe_error *err)
{
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "position delete writer: failed earlier "
				      "(abort it)");
	if ((rc = write_out(w, true, err)))
		goto fail;
	if (w->n_held) {
		floe_data_file *arr = floe_realloc(*files, (*n + w->n_held) * sizeof(**files));
		if (!arr) {
			rc = floe_error_oom(err);
			goto fail;
		}
		*files = arr;
		for (size_t i = 0; i < w->n_held; i++)
			if (floe_data_file_copy(&arr[*n + i], a, &w->held[i])) {
				rc = floe_error_oom(err);
				goto fail;
			}
		*n += w->n_held;
	}
	w->n_held = 0;
	floe_arena_reset(&w->held_arena);
	return FLOE_OK;
fail:
	w->failed = true;
	return floe_error_prefix(err, rc, "position delete writer: ");
}

size_t floe_pos_delete_writer_buffered(const floe_pos_delete_writer *w)
{
	size_t total = w->targets.bytes;
	for (size_t i = 0; i < w->n_specs; i++)
		total += floe_write__fanout_buffered(w->specs[i]->fo);
	return total;
}

void floe_pos_delete_writer_get_stats(const floe_pos_delete_writer *w,
				      floe_delete_writer_stats *out)
{
	*out = w->stats;
	out->open_files = 0;
	out->budget_flushes = 0;
	for (size_t i = 0; i < w->n_specs; i++) {
		floe_task_writer_stats s;
		floe_write__fanout_stats(w->specs[i]->fo, &s);
		out->open_files += s.open_files;
		out->budget_flushes += s.budget_flushes;
	}
}

void floe_pos_delete_writer_abort(floe_pos_delete_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_specs; i++) {
		floe_write__fanout_abort(w->specs[i]->fo);
		floe_free(w->specs[i]);
	}
	for (size_t i = 0; i < w->n_held; i++)
		floe_io_remove_quiet(w->io, w->held[i].file_path);
	floe_free(w->specs);
	floe_free(w->held);
	floe_write__targets_reset(&w->targets);
	floe_hmap_reset(&w->targets.index);
	floe_arena_reset(&w->targets.arena);
	floe_write__format_free(w->fmt);
	floe_arrow_schema_release(&w->batch_schema);
	if (w->own_budget)
		floe_parquet_budget_free(w->budget);
	if (w->own_namer)
		floe_file_namer_free(w->namer);
	floe_buf_reset(&w->chars);
	floe_buf_reset(&w->offsets);
	floe_arena_reset(&w->held_arena);
	floe_arena_reset(&w->arena);
	floe_free(w);
}

void floe_pos_delete_writer_free(floe_pos_delete_writer *w)
{
	floe_pos_delete_writer_abort(w);
}
