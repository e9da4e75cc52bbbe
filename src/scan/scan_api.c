/*
 * scan_api.c — the public scan API (floe/scan.h) over the scan component:
 * opening (resolve, bind, project, plan), batches, counting, rendering,
 * following a table, and path-based tables.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arrow/arrow_build.h"
#include "io/fileio.h"
#include "scan/scan_impl.h"
#include "util/opts.h"
#include "util/log.h"
#include "util/str.h"
#include "util/timeutil.h"

static int copy_opts(floe_scan *s, const floe_scan_opts *o, floe_error *err)
{
	s->o = *o;
	if (o->where && !(s->o.where = floe_arena_strdup(&s->a, o->where)))
		return floe_error_oom(err);
	if (o->branch && !(s->o.branch = floe_arena_strdup(&s->a, o->branch)))
		return floe_error_oom(err);
	if (o->tag && !(s->o.tag = floe_arena_strdup(&s->a, o->tag)))
		return floe_error_oom(err);
	if (o->n_columns) {
		const char **cols = floe_arena_calloc(&s->a, o->n_columns, sizeof(char *));
		if (!cols)
			return floe_error_oom(err);
		for (size_t i = 0; i < o->n_columns; i++)
			if (!(cols[i] = floe_arena_strdup(&s->a, o->columns[i])))
				return floe_error_oom(err);
		s->o.columns = cols;
	}
	const floe_path_map *map = floe_table_path_map(s->t);
	if (map)
		s->map = *map;
	return FLOE_OK;
}

static floe_scan *scan_new(floe_table *t)
{
	floe_scan *s = floe_calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	floe_arena_init(&s->a, 65536);
	s->t = t;
	s->m = floe_table_metadata(t);
	s->from_exclusive = -1;
	return s;
}

/* open; after >= 0 overrides the incremental start (exclusive) — for follow;
 * current_schema reads the snapshot with the table's current schema */
/* ordered scans: by the lower bound, then by path (a total order, so a
 * restart reads the files in the same order) */
static int by_bound(const void *a, const void *b)
{
	const scan_file *x = *(const scan_file *const *)a, *y = *(const scan_file *const *)b;
	if (x->bound_lo != y->bound_lo)
		return x->bound_lo < y->bound_lo ? -1 : 1;
	return strcmp(x->raw_path, y->raw_path);
}

static int order_files(floe_scan *s, floe_error *err)
{
	const floe_schema_entry *e = floe_schema_find(s->schema, s->bound_id);
	for (size_t i = 0; i < s->n_files; i++)
		if (!s->files[i]->has_bound_lo)
			return floe_error_set(err, FLOE_EINVAL,
					      "missing statistics for column %s in file %s (an ordered "
					      "read needs its lower bound)",
					      e ? e->full_name : "?", s->files[i]->raw_path);
	if (s->n_files > 1)
		qsort(s->files, s->n_files, sizeof(*s->files), by_bound);
	return FLOE_OK;
}

static int scan_open_ex(floe_scan **out, floe_table *t, const floe_scan_opts *opts, int64_t after,
			bool current_schema, int32_t bound_id, floe_error *err)
{
	static const floe_scan_opts dflt = FLOE_SCAN_OPTS_INIT;
	floe_scan *s;
	int rc;
	*out = NULL;
	if (!t)
		return floe_error_set(err, FLOE_EINVAL, "no table");
	if (!(s = scan_new(t)))
		return floe_error_oom(err);
	if ((rc = copy_opts(s, opts ? opts : &dflt, err)) || (rc = floe_scan__resolve(s, err)))
		goto fail;
	if (after >= 0) {
		s->incremental = true;
		s->from_exclusive = after;
		s->schema = floe_metadata_current_schema(s->m);
	}
	if (current_schema)
		s->schema = floe_metadata_current_schema(s->m);
	if (s->o.where && *s->o.where) {
		if ((rc = floe_expr_compile(&s->filter, &s->a, s->o.where, s->schema, !s->o.ignore_case,
					    err)))
			goto fail;
	} else if (!(s->filter = floe_expr_const(&s->a, true))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	s->bound_id = bound_id;
	if ((rc = floe_scan__columns(s, err)) || (rc = floe_scan__plan(s, err)) ||
	    (bound_id > 0 && (rc = order_files(s, err))))
		goto fail;
	*out = s;
	return FLOE_OK;
fail:
	floe_scan_free(s);
	return rc;
}

static int scan_open(floe_scan **out, floe_table *t, const floe_scan_opts *opts, int64_t after,
		     floe_error *err)
{
	return scan_open_ex(out, t, opts, after, false, 0, err);
}

int floe_scan__open_snapshot(floe_scan **out, floe_table *t, int64_t snapshot_id, int threads,
			     floe_error *err)
{
	floe_scan_opts o = FLOE_SCAN_OPTS_INIT;
	o.snapshot_id = snapshot_id;
	o.threads = threads;
	return scan_open_ex(out, t, &o, -1, true, 0, err);
}

int floe_scan__open_ordered(floe_scan **out, floe_table *t, const floe_scan_opts *opts,
			    int32_t bound_id, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_scan_opts", "FLOE_SCAN_OPTS_INIT", err);
	if (bound_id <= 0)
		return floe_error_set(err, FLOE_EINVAL, "ordered scan: no field");
	return scan_open_ex(out, t, opts, -1, false, bound_id, err);
}

const scan_file *floe_scan__batch_file(const floe_scan *s)
{
	/* open_next advances next_file before the file's first batch */
	return s->next_file ? s->files[s->next_file - 1] : NULL;
}

floe_scan *floe_scan__new(floe_table *t)
{
	return scan_new(t);
}

int floe_scan_open(floe_scan **out, floe_table *t, const floe_scan_opts *opts, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_scan_opts", "FLOE_SCAN_OPTS_INIT", err);
	return scan_open(out, t, opts, -1, err);
}

void floe_scan_free(floe_scan *s)
{
	if (!s)
		return;
	floe_scan__reader_free(s);
	floe_scan__deletes_free(s);
	floe_arrow_schema_release(&s->out_schema);
	if (s->mem) {
		for (size_t i = s->mem->next; i < s->mem->n; i++)
			floe_arrow_array_release(&s->mem->batches[i]);
		floe_free(s->mem->batches);
		floe_free(s->mem);
	}
	for (size_t i = 0; i < s->n_warenas; i++)
		floe_arena_reset(&s->warenas[i]);
	floe_arena_reset(&s->a);
	floe_free(s);
}

int64_t floe_scan_snapshot_id(const floe_scan *s)
{
	return s && s->snap ? s->snap->snapshot_id : -1;
}

void floe_scan_get_stats(const floe_scan *s, floe_scan_stats *o)
{
	memset(o, 0, sizeof(*o));
	o->manifests = atomic_load(&s->st.manifests);
	o->manifests_skipped = atomic_load(&s->st.manifests_skipped);
	o->entries = atomic_load(&s->st.entries);
	o->data_files = atomic_load(&s->st.data_files);
	o->data_files_skipped = atomic_load(&s->st.data_files_skipped);
	o->delete_files = atomic_load(&s->st.delete_files);
	o->delete_files_skipped = atomic_load(&s->st.delete_files_skipped);
	o->manifests_corrupt = atomic_load(&s->st.manifests_corrupt);
	o->plan_ns = s->st.plan_ns;
	o->files_read = s->st.files_read;
	o->rows_read = s->st.rows_read;
	o->row_groups = s->st.row_groups;
	o->row_groups_skipped = s->st.row_groups_skipped;
	o->rows_deleted = s->st.rows_deleted;
	o->rows_filtered = s->st.rows_filtered;
	o->rows_out = s->st.rows_out;
	o->files_deleted = s->st.files_deleted;
}

int floe_scan_tasks(floe_scan *s, floe_scan_task_fn fn, void *payload, floe_error *err)
{
	floe_buf b;
	int rc = FLOE_OK;
	floe_buf_init(&b, 0);
	for (size_t i = 0; i < s->n_files && !rc; i++) {
		const scan_file *f = s->files[i];
		floe_scan_task t = {0};
		t.path = f->path;
		t.format = f->format;
		t.spec_id = f->spec_id;
		t.record_count = f->record_count;
		t.file_size_in_bytes = f->file_size;
		t.data_sequence_number = f->data_seq;
		for (size_t k = 0; k < f->n_deletes; k++) {
			if (f->deletes[k]->content == FLOE_CONTENT_EQUALITY_DELETES)
				t.equality_deletes++;
			else
				t.position_deletes++;
		}
		floe_buf_clear(&b);
		if (f->spec && floe_partition_path(&b, f->spec, s->schema, &f->partition))
			floe_buf_clear(&b);
		t.partition = floe_arena_strndup(&s->a, floe_buf_cstr(&b), b.len);
		floe_buf_clear(&b);
		if (floe_expr_format(&b, f->residual, s->schema))
			floe_buf_clear(&b);
		t.residual = floe_arena_strndup(&s->a, floe_buf_cstr(&b), b.len);
		if (!t.partition || !t.residual) {
			rc = floe_error_oom(err);
			break;
		}
		rc = fn(&t, payload);
	}
	floe_buf_reset(&b);
	return rc;
}

int floe_scan_arrow_schema(floe_scan *s, struct ArrowSchema *out, floe_error *err)
{
	int rc = floe_scan__check_columns(s, err);
	if (rc)
		return rc;
	rc = floe_arrow_schema_copy(out, &s->out_schema);
	return rc ? floe_error_set(err, rc, "out of memory") : FLOE_OK;
}

int floe_scan_next(floe_scan *s, struct ArrowArray *out, bool *eof, floe_error *err)
{
	if (s->mem) {
		memset(out, 0, sizeof(*out));
		*eof = s->mem->next >= s->mem->n;
		if (!*eof)
			floe_arrow_array_move(out, &s->mem->batches[s->mem->next++]);
		return FLOE_OK;
	}
	int rc = floe_scan__check_columns(s, err);
	return rc ? rc : floe_scan__next(s, out, eof, err);
}

int floe_scan_count(floe_scan *s, int64_t *out, floe_error *err)
{
	int64_t n = 0;
	int rc;
	*out = 0;
	if (!s->mem && !s->rd) {
		/* files without deletes or residual count from their metadata */
		size_t k = 0;
		for (size_t i = 0; i < s->n_files; i++) {
			scan_file *f = s->files[i];
			if (f->n_deletes == 0 && floe_expr_is_true(f->residual))
				n += f->record_count;
			else
				s->files[k++] = f;
		}
		s->n_files = k;
		s->n_cols = 0; /* read only what the filter and the deletes need */
	}
	for (;;) {
		struct ArrowArray b;
		bool eof;
		if ((rc = floe_scan_next(s, &b, &eof, err)))
			return rc;
		if (eof)
			break;
		n += b.length;
		floe_arrow_array_release(&b);
	}
	if (s->o.limit >= 0 && n > s->o.limit)
		n = s->o.limit;
	*out = n;
	return FLOE_OK;
}

int floe_scan_write(floe_scan *s, floe_output_format fmt, floe_write_fn fn, void *payload,
		    floe_error *err)
{
	int rc = floe_scan__check_columns(s, err);
	return rc ? rc : floe_scan__render(s, fmt, -1, fn, payload, err);
}

int floe_scan_write_parquet(floe_scan *s, const char *path, floe_error *err)
{
	int rc = floe_scan__check_columns(s, err);
	return rc ? rc : floe_scan__write_parquet(s, path, err);
}

/* ---- follow ------------------------------------------------------------------------------- */

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

int floe_scan_follow(floe_table *t, const floe_scan_opts *opts, int64_t interval_ms,
		     int64_t max_polls, floe_output_format fmt, floe_write_fn fn, void *payload,
		     floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_scan_opts", "FLOE_SCAN_OPTS_INIT", err);
	floe_scan_opts o = *opts;
	floe_scan *s = NULL;
	int rc;
	int64_t last;
	if (interval_ms <= 0)
		return floe_error_set(err, FLOE_EINVAL, "the monitor interval must be positive");
	if (o.start == FLOE_START_NONE)
		o.start = FLOE_START_TABLE_THEN_INCREMENTAL;
	/* the first read: a table scan, or the appends from the start */
	if ((rc = scan_open(&s, t, &o, -1, err)))
		return rc;
	last = floe_scan_snapshot_id(s);
	rc = floe_scan__check_columns(s, err);
	if (!rc)
		rc = floe_scan__render(s, fmt, -1, fn, payload, err);
	floe_scan_free(s);
	if (rc)
		return rc;
	floe_scan_opts inc = o;
	inc.start = FLOE_START_EARLIEST; /* replaced by the exclusive start below */
	inc.limit = -1;
	for (int64_t poll = 0; max_polls <= 0 || poll < max_polls; poll++) {
		sleep_ms(interval_ms);
		if ((rc = floe_table_refresh(t, err)))
			return floe_error_prefix(err, rc, "refreshing the table: ");
		const floe_snapshot *head =
			o.branch ? floe_metadata_branch_head(floe_table_metadata(t), o.branch)
				 : floe_metadata_current_snapshot(floe_table_metadata(t));
		if (!head || head->snapshot_id == last)
			continue;
		if ((rc = scan_open(&s, t, &inc, last < 0 ? INT64_MAX : last, err)))
			return rc;
		rc = floe_scan__render(s, fmt, -1, fn, payload, err);
		last = floe_scan_snapshot_id(s);
		floe_scan_free(s);
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

/* ---- metadata tables ----------------------------------------------------------------------- */

int floe_inspect_open(floe_scan **out, floe_table *t, const char *name, int64_t snapshot_id,
		      floe_error *err)
{
	return floe_inspect_open_columns(out, t, name, snapshot_id, NULL, 0, err);
}

int floe_inspect_open_columns(floe_scan **out, floe_table *t, const char *name,
			      int64_t snapshot_id, const char *const *columns, size_t n_columns,
			      floe_error *err)
{
	floe_scan *s;
	int rc;
	*out = NULL;
	if (!t || !name)
		return floe_error_set(err, FLOE_EINVAL, "no table or metadata table name");
	if (!(s = scan_new(t)))
		return floe_error_oom(err);
	s->o = (floe_scan_opts)FLOE_SCAN_OPTS_INIT;
	const floe_path_map *map = floe_table_path_map(t);
	if (map)
		s->map = *map;
	s->schema = floe_metadata_current_schema(s->m);
	s->o.columns = columns;
	s->o.n_columns = columns ? n_columns : 0;
	rc = floe_scan__inspect(s, name, snapshot_id, err);
	s->o.columns = NULL; /* the caller's, used only while the rows are built */
	s->o.n_columns = 0;
	if (rc) {
		floe_scan_free(s);
		return rc;
	}
	*out = s;
	return FLOE_OK;
}

/* ---- path tables --------------------------------------------------------------------------- */

static pthread_once_t io_once = PTHREAD_ONCE_INIT;
static floe_fileio *shared_io;

static void make_io(void)
{
	/* one stateless local FileIO for every path table of the process */
	if (floe_io_default_new(&shared_io, NULL, NULL))
		shared_io = NULL;
}

int floe_table_open_path(floe_table **out, const char *path, const char *const *path_map,
			 size_t n_map, floe_error *err)
{
	floe_path_rule *rules = NULL;
	floe_arena a;
	int rc;
	*out = NULL;
	pthread_once(&io_once, make_io);
	if (!shared_io)
		return floe_error_oom(err);
	floe_arena_init(&a, 1024);
	/* relative paths are relative to the working directory */
	char cwd[4096];
	bool have_cwd = getcwd(cwd, sizeof(cwd)) != NULL;
	if (path[0] != '/' && !strstr(path, "://") && strncmp(path, "file:", 5) && have_cwd &&
	    !(path = floe_arena_sprintf(&a, "%s/%s", cwd, path))) {
		floe_arena_reset(&a);
		return floe_error_oom(err);
	}
	if (n_map && !(rules = floe_arena_calloc(&a, n_map, sizeof(*rules)))) {
		floe_arena_reset(&a);
		return floe_error_oom(err);
	}
	for (size_t i = 0; i < n_map; i++) {
		const char *eq = strchr(path_map[i], '=');
		if (!eq || eq == path_map[i]) {
			floe_arena_reset(&a);
			return floe_error_set(err, FLOE_EINVAL,
					      "path rule '%s' is not of the form from=to", path_map[i]);
		}
		rules[i].from = floe_arena_strndup(&a, path_map[i], (size_t)(eq - path_map[i]));
		rules[i].to = eq + 1;
		if (eq[1] && eq[1] != '/' && !strstr(eq + 1, "://") && strncmp(eq + 1, "file:", 5) &&
		    have_cwd)
			rules[i].to = floe_arena_sprintf(&a, "%s/%s", cwd, eq + 1);
		if (!rules[i].from || !rules[i].to) {
			floe_arena_reset(&a);
			return floe_error_oom(err);
		}
	}
	floe_path_map map = {rules, n_map};
	rc = floe_table_load_path(out, shared_io, path, n_map ? &map : NULL, err);
	floe_arena_reset(&a);
	return rc;
}
