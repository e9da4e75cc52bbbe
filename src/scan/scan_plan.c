/*
 * scan_plan.c — which snapshot, which columns, which files: snapshot
 * resolution (time travel by id, timestamp, branch, tag; incremental append
 * ranges), the projection, and planning.
 *
 * DESIGN (planning): the manifest list is read and each manifest is pruned
 * by its partition summaries against the filter projected onto its spec;
 * the surviving manifests become jobs that worker threads take from an
 * atomic counter. A worker decodes entries with the fast manifest reader
 * (only the metrics the filter needs), prunes each entry by its partition
 * tuple and its column metrics, and copies a survivor into its own arena
 * (nothing shared is written, no lock in the hot loop; its arena faults
 * each chunk in with one call, not a page fault per page). Each job records
 * which worker kept which range of data and delete files, so the main thread
 * puts the results in plan order (manifest, then entry) — independent of
 * thread timing — without reading the files back, then indexes the delete
 * files (DVs by referenced file, position deletes by referenced file and by
 * partition, equality deletes by partition plus the global ones of
 * unpartitioned specs) and gives every data file the deletes that apply by
 * the spec's sequence-number rules (../shared/iceberg-notes.md 3.3).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/arrow_build.h"
#include "avro/avro_reader.h"
#include "iceberg/arrow_schema.h"
#include "scan/scan_impl.h"
#include "util/cursor.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/str.h"
#include "util/timeutil.h"

/* ---- snapshot resolution ------------------------------------------------------------------ */

static const floe_snapshot *as_of(const floe_metadata *m, int64_t ts)
{
	const floe_snapshot *best = NULL;
	if (m->n_snapshot_log) {
		/* spec/Java: the snapshot that was current at ts (the snapshot log) */
		for (size_t i = 0; i < m->n_snapshot_log; i++)
			if (m->snapshot_log[i].timestamp_ms <= ts) {
				const floe_snapshot *s = floe_metadata_snapshot(m, m->snapshot_log[i].snapshot_id);
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

static bool is_ancestor(const floe_metadata *m, const floe_snapshot *head, int64_t id)
{
	for (const floe_snapshot *s = head; s; s = floe_metadata_parent(m, s))
		if (s->snapshot_id == id)
			return true;
	return false;
}

int floe_scan__resolve(floe_scan *s, floe_error *err)
{
	const floe_metadata *m = s->m;
	const floe_scan_opts *o = &s->o;
	int given = (o->snapshot_id >= 0) + (o->as_of_ms >= 0) + (o->branch != NULL) + (o->tag != NULL);
	if (given > 1)
		return floe_error_set(err, FLOE_EINVAL,
				      "give at most one of snapshot id, as-of time, branch and tag");
	s->schema = floe_metadata_current_schema(m);
	if (o->snapshot_id >= 0) {
		if (!(s->snap = floe_metadata_snapshot(m, o->snapshot_id)))
			return floe_error_set(err, FLOE_ENOTFOUND, "no snapshot %lld",
					      (long long)o->snapshot_id);
		s->schema = floe_snapshot_schema(m, s->snap);
	} else if (o->as_of_ms >= 0) {
		if (!(s->snap = as_of(m, o->as_of_ms))) {
			char ts[48];
			floe_format_timestamp_us(ts, sizeof(ts), o->as_of_ms * 1000, 0);
			return floe_error_set(err, FLOE_ENOTFOUND,
					      "no snapshot was current at or before %s", ts);
		}
		s->schema = floe_snapshot_schema(m, s->snap);
	} else if (o->branch) {
		const floe_snapshot_ref *r = floe_metadata_ref(m, o->branch);
		if (!r || r->is_tag)
			return floe_error_set(err, FLOE_ENOTFOUND, "no branch '%s'%s", o->branch,
					      r ? " (it is a tag)" : "");
		if (!(s->snap = floe_metadata_snapshot(m, r->snapshot_id)))
			return floe_error_corrupt(err, "branch '%s' points to missing snapshot %lld",
					      o->branch, (long long)r->snapshot_id);
	} else if (o->tag) {
		const floe_snapshot_ref *r = floe_metadata_ref(m, o->tag);
		if (!r || !r->is_tag)
			return floe_error_set(err, FLOE_ENOTFOUND, "no tag '%s'%s", o->tag,
					      r ? " (it is a branch)" : "");
		if (!(s->snap = floe_metadata_snapshot(m, r->snapshot_id)))
			return floe_error_corrupt(err, "tag '%s' points to missing snapshot %lld",
					      o->tag, (long long)r->snapshot_id);
		s->schema = floe_snapshot_schema(m, s->snap);
	} else {
		s->snap = floe_metadata_current_snapshot(m);
	}
	if (!s->schema)
		return floe_error_corrupt(err, "the table has no schema");
	s->from_exclusive = -1;
	if (o->start == FLOE_START_NONE || o->start == FLOE_START_TABLE_THEN_INCREMENTAL)
		return FLOE_OK;
	/* incremental append read: (from_exclusive, end] along the end's ancestry */
	if (o->snapshot_id >= 0 || o->as_of_ms >= 0 || o->tag)
		return floe_error_set(err, FLOE_EINVAL,
				      "an incremental read takes a start, not a snapshot id, time or tag");
	s->incremental = true;
	s->schema = floe_metadata_current_schema(m);
	if (o->end_snapshot_id >= 0) {
		const floe_snapshot *end = floe_metadata_snapshot(m, o->end_snapshot_id);
		if (!end)
			return floe_error_set(err, FLOE_ENOTFOUND, "no snapshot %lld",
					      (long long)o->end_snapshot_id);
		if (s->snap && !is_ancestor(m, s->snap, end->snapshot_id))
			return floe_error_set(err, FLOE_EINVAL,
					      "end snapshot %lld is not an ancestor of the branch head",
					      (long long)o->end_snapshot_id);
		s->snap = end;
	}
	if (!s->snap)
		return FLOE_OK;
	switch (o->start) {
	case FLOE_START_LATEST: s->from_exclusive = s->snap->snapshot_id; break;
	case FLOE_START_EARLIEST: s->from_exclusive = -1; break;
	case FLOE_START_SNAPSHOT_ID: {
		const floe_snapshot *st = floe_metadata_snapshot(m, o->start_snapshot_id);
		if (!st)
			return floe_error_set(err, FLOE_ENOTFOUND, "no start snapshot %lld",
					      (long long)o->start_snapshot_id);
		if (!is_ancestor(m, s->snap, st->snapshot_id))
			return floe_error_set(err, FLOE_EINVAL,
					      "start snapshot %lld is not an ancestor of snapshot %lld",
					      (long long)st->snapshot_id, (long long)s->snap->snapshot_id);
		s->from_exclusive = st->parent_id; /* inclusive of the start */
		break;
	}
	case FLOE_START_TIMESTAMP: {
		/* the oldest ancestor committed at or after the time, inclusive */
		const floe_snapshot *first = NULL;
		for (const floe_snapshot *x = s->snap; x; x = floe_metadata_parent(m, x))
			if (x->timestamp_ms >= o->start_timestamp_ms)
				first = x;
			else
				break;
		s->from_exclusive = first ? first->parent_id : s->snap->snapshot_id;
		break;
	}
	default: break;
	}
	return FLOE_OK;
}

/* ---- columns ---------------------------------------------------------------------------- */

static const struct {
	const char *name;
	scan_col_kind kind;
	int32_t id;
	floe_type_id type;
} META_COLS[] = {
	{"_file", COL_FILE, FLOE_ID_FILE, FLOE_T_STRING},
	{"_pos", COL_POS, FLOE_ID_POS, FLOE_T_LONG},
	{"_spec_id", COL_SPEC_ID, FLOE_ID_SPEC_ID, FLOE_T_INT},
	{"_row_id", COL_ROW_ID, FLOE_ID_ROW_ID, FLOE_T_LONG},
	{"_last_updated_sequence_number", COL_LAST_UPDATED_SEQ, FLOE_ID_LAST_UPDATED_SEQ, FLOE_T_LONG},
};

/* the struct path from the top-level field down to entry e */
static int col_path(scan_col *c, const floe_schema *schema, const floe_schema_entry *e,
		    floe_error *err)
{
	int32_t chain[SCAN_MAX_DEPTH + 1];
	size_t n = 0;
	for (const floe_schema_entry *x = e; x; x = x->parent_id ? floe_schema_find(schema, x->parent_id)
								  : NULL) {
		if (n > SCAN_MAX_DEPTH)
			return floe_error_set(err, FLOE_EUNSUPPORTED, "column '%s' is nested too deeply",
					      e->full_name);
		chain[n++] = x->id;
		if (x->parent_id == 0)
			break;
	}
	c->top_id = chain[n - 1];
	c->depth = 0;
	/* walk down: each step must be a struct field */
	const floe_schema_entry *cur = floe_schema_find(schema, chain[n - 1]);
	for (size_t k = n - 1; k > 0; k--) {
		const floe_type *t = cur->type;
		if (t->id != FLOE_T_STRUCT)
			return floe_error_set(err, FLOE_EUNSUPPORTED,
					      "column '%s' is inside a list or map: select its "
					      "top-level column instead",
					      e->full_name);
		int32_t idx = -1;
		for (size_t i = 0; i < t->n_fields; i++)
			if (t->fields[i].id == chain[k - 1])
				idx = (int32_t)i;
		if (idx < 0)
			return floe_error_corrupt(err, "schema index of '%s' is inconsistent",
					      e->full_name);
		c->path[c->depth++] = idx;
		cur = floe_schema_find(schema, chain[k - 1]);
	}
	return FLOE_OK;
}

static int add_col(floe_scan *s, size_t *cap, const char *name, floe_error *err)
{
	scan_col *c;
	if (s->n_cols == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		scan_col *n = floe_arena_calloc(&s->a, nc, sizeof(*n));
		if (!n)
			return floe_error_oom(err);
		if (s->n_cols)
			memcpy(n, s->cols, s->n_cols * sizeof(*n));
		s->cols = n;
		*cap = nc;
	}
	c = &s->cols[s->n_cols];
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < sizeof(META_COLS) / sizeof(META_COLS[0]); i++)
		if (s->o.ignore_case ? floe_str_ieq(name, META_COLS[i].name)
				     : !strcmp(name, META_COLS[i].name)) {
			c->kind = META_COLS[i].kind;
			c->name = META_COLS[i].name;
			c->id = META_COLS[i].id;
			c->type = floe_type_primitive(META_COLS[i].type);
			c->required = true;
			s->n_cols++;
			return FLOE_OK;
		}
	const floe_schema_entry *e = floe_schema_find_name(s->schema, name, s->o.ignore_case);
	if (!e || !e->field)
		return floe_error_set(err, FLOE_EINVAL, "no column '%s' in the table's schema%s", name,
				      s->snap && s->schema != floe_metadata_current_schema(s->m)
					      ? " at that snapshot"
					      : "");
	c->kind = COL_FIELD;
	c->name = e->full_name ? e->full_name : e->field->name;
	c->id = e->id;
	c->field = e->field;
	c->type = e->type;
	c->required = e->required;
	int rc = col_path(c, s->schema, e, err);
	if (rc)
		return rc;
	s->n_cols++;
	return FLOE_OK;
}

int floe_scan__columns(floe_scan *s, floe_error *err)
{
	size_t cap = 0;
	int rc;
	if (s->o.columns && s->o.n_columns) {
		for (size_t i = 0; i < s->o.n_columns; i++)
			if ((rc = add_col(s, &cap, s->o.columns[i], err)))
				return rc;
	} else {
		const floe_type *root = s->schema->root;
		for (size_t i = 0; i < root->n_fields; i++)
			if ((rc = add_col(s, &cap, root->fields[i].name, err)))
				return rc;
	}
	/* the Arrow schema of the output batches */
	if ((rc = floe_arrow_schema_init(&s->out_schema, "+s", "", 0, (int64_t)s->n_cols)))
		return floe_error_set(err, rc, "out of memory");
	for (size_t i = 0; i < s->n_cols; i++) {
		const scan_col *c = &s->cols[i];
		rc = floe_iceberg_arrow_field_read(s->out_schema.children[i], c->name, c->id, c->type,
						   c->required, err);
		if (rc == FLOE_EUNSUPPORTED) {
			/* a null placeholder; floe_scan__check_columns fails before rows are read */
			floe_error_clear(err);
			if (!s->unsupported_col)
				s->unsupported_col = c->name;
			rc = floe_arrow_schema_init(s->out_schema.children[i], "n", c->name,
						    ARROW_FLAG_NULLABLE, 0);
			if (rc)
				return floe_error_set(err, rc, "out of memory");
		} else if (rc) {
			return rc;
		}
	}
	return FLOE_OK;
}

int floe_scan__check_columns(const floe_scan *s, floe_error *err)
{
	if (s->unsupported_col && s->n_cols)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "column '%s': this type has no Arrow form in floe yet",
				      s->unsupported_col);
	return FLOE_OK;
}

/* ---- partition keys --------------------------------------------------------------------- */

int floe_scan__partition_key(floe_buf *b, int32_t spec_id, const floe_partition *p)
{
	int rc;
	floe_buf_clear(b);
	if ((rc = floe_buf_put_u32le(b, (uint32_t)spec_id)))
		return rc;
	for (size_t i = 0; i < p->n; i++) {
		floe_value v = p->values[i];
		if (v.is_null) {
			if ((rc = floe_buf_putc(b, 0)))
				return rc;
			continue;
		}
		/* spec: partition equality uses canonical float bits */
		if (v.type == FLOE_T_FLOAT && v.v.f32 != v.v.f32)
			v.v.f32 = __builtin_nanf("");
		if (v.type == FLOE_T_DOUBLE && v.v.f64 != v.v.f64)
			v.v.f64 = __builtin_nan("");
		size_t at = b->len;
		if ((rc = floe_buf_putc(b, 1)) || (rc = floe_buf_put_u32le(b, 0)) ||
		    (rc = floe_value_to_bytes(b, &v)))
			return rc;
		uint32_t len = (uint32_t)(b->len - at - 5);
		floe_store_u32le(b->data + at + 1, len);
	}
	return FLOE_OK;
}

/* ---- planning workers --------------------------------------------------------------------- */

typedef struct job {
	const floe_manifest_file *mf;
	int64_t only_snapshot; /* incremental: ADDED entries of this snapshot; -1 = live entries */
	const floe_expr *proj; /* filter projected onto the manifest's spec */
	const floe_partition_spec *spec;
	uint32_t index;
	/* set by the worker that read it: its kept data [0] and delete [1] files
	 * are out[k][lo[k] .. hi[k]) of that worker */
	uint32_t worker;
	size_t lo[2], hi[2];
} job;

typedef struct worker {
	floe_scan *s;
	job *jobs;
	size_t n_jobs;
	_Atomic size_t *next;
	_Atomic int *stop;
	floe_arena *arena;
	scan_file **out[2]; /* kept data [0] and delete [1] files, in job order */
	size_t n_out[2], cap_out[2];
	uint32_t id;
	job *cur;
	uint32_t ord;
	const int32_t *metric_ids;
	size_t n_metric_ids;
	floe_avro_schema_cache *schemas; /* shared by the workers */
	uint64_t data_skipped, delete_skipped; /* added to the scan's stats at the end */
	struct ptuple *tuples; /* interned partition tuples (open addressing) */
	size_t cap_tuples, n_tuples;
	int rc;
	floe_error err;
	pthread_t th;
	bool started;
	char pad[64]; /* keeps the fields one worker writes per entry off the next one's lines */
} worker;

/* ---- partition tuples ---------------------------------------------------------------------- */

/* A manifest's entries repeat a few partitions; a plan of a million files
 * would otherwise hold a million copies of the same values. Each worker
 * keeps the tuples it has copied in a hash table and files share them
 * (read-only). Equal means floe_value_equal (bitwise for floats, so -0.0 and
 * 0.0 stay apart; NaN equals NaN) under the same spec. */
typedef struct ptuple {
	const floe_partition_spec *spec;
	floe_value *values;
	size_t n;
	uint64_t hash;
} ptuple;

#define PTUPLE_MAX ((size_t)1 << 20) /* beyond this many distinct tuples: copy each */

static uint64_t ptuple_hash(const floe_partition_spec *spec, const floe_partition *p)
{
	uint64_t h = (uint64_t)(uintptr_t)spec * 0x9e3779b97f4a7c15ULL ^ p->n;
	for (size_t i = 0; i < p->n; i++)
		h = (h ^ floe_value_hash(&p->values[i])) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static bool ptuple_equal(const ptuple *t, const floe_partition_spec *spec,
			 const floe_partition *p)
{
	if (t->spec != spec || t->n != p->n)
		return false;
	for (size_t i = 0; i < p->n; i++)
		if (!floe_value_equal(&t->values[i], &p->values[i]))
			return false;
	return true;
}

static void ptuple_put(ptuple *tab, size_t cap, const ptuple *t)
{
	size_t i = (size_t)t->hash & (cap - 1);
	while (tab[i].values)
		i = (i + 1) & (cap - 1);
	tab[i] = *t;
}

/* dst = src's values, shared with an earlier equal tuple or copied into the
 * worker's arena */
static int own_partition(worker *w, floe_partition *dst, const floe_partition *src)
{
	const floe_partition_spec *spec = w->cur->spec;
	uint64_t h = ptuple_hash(spec, src);
	if (w->cap_tuples) {
		for (size_t i = (size_t)h & (w->cap_tuples - 1); w->tuples[i].values;
		     i = (i + 1) & (w->cap_tuples - 1))
			if (w->tuples[i].hash == h && ptuple_equal(&w->tuples[i], spec, src)) {
				dst->values = w->tuples[i].values;
				dst->n = src->n;
				return FLOE_OK;
			}
	}
	floe_value *v = floe_arena_alloc(w->arena, (src->n ? src->n : 1) * sizeof(floe_value));
	if (!v)
		return FLOE_ENOMEM;
	if (src->n)
		memcpy(v, src->values, src->n * sizeof(floe_value));
	for (size_t i = 0; i < src->n; i++)
		if (floe_value_own(&v[i], w->arena))
			return FLOE_ENOMEM;
	dst->values = v;
	dst->n = src->n;
	if (w->n_tuples >= PTUPLE_MAX)
		return FLOE_OK;
	if ((w->n_tuples + 1) * 2 > w->cap_tuples) {
		size_t cap = w->cap_tuples ? w->cap_tuples * 2 : 64;
		ptuple *tab = floe_calloc(cap, sizeof(*tab));
		if (!tab)
			return FLOE_OK; /* sharing is an optimisation */
		for (size_t i = 0; i < w->cap_tuples; i++)
			if (w->tuples[i].values)
				ptuple_put(tab, cap, &w->tuples[i]);
		floe_free(w->tuples);
		w->tuples = tab;
		w->cap_tuples = cap;
	}
	ptuple t = {spec, v, src->n, h};
	ptuple_put(w->tuples, w->cap_tuples, &t);
	w->n_tuples++;
	return FLOE_OK;
}

static int keep(worker *w, const floe_manifest_entry *e)
{
	const floe_data_file *f = &e->file;
	floe_arena *a = w->arena;
	/* one block: the file and its path; partition values are shared */
	size_t plen = strlen(f->file_path);
	uint8_t *blk = floe_arena_alloc(a, sizeof(scan_file) + plen + 1);
	if (!blk)
		return FLOE_ENOMEM;
	scan_file *sf = (scan_file *)blk;
	memset(sf, 0, sizeof(*sf));
	char *raw = (char *)blk + sizeof(scan_file);
	memcpy(raw, f->file_path, plen + 1);
	sf->raw_path = raw;
	sf->path = floe_path_map_apply(&w->s->map, a, sf->raw_path);
	sf->format = f->file_format;
	if (strcmp(sf->format, "PARQUET") && strcmp(sf->format, "PUFFIN") && strcmp(sf->format, "AVRO") &&
	    strcmp(sf->format, "ORC") && !(sf->format = floe_arena_strdup(a, f->file_format)))
		return FLOE_ENOMEM;
	sf->content = f->content;
	sf->spec_id = f->spec_id;
	sf->spec = w->cur->spec;
	sf->record_count = f->record_count;
	sf->file_size = f->file_size_in_bytes;
	sf->data_seq = e->sequence_number;
	sf->file_seq = e->file_sequence_number;
	sf->snapshot_id = e->snapshot_id;
	sf->first_row_id = f->first_row_id;
	sf->job = w->cur->index;
	sf->ord = w->ord;
	sf->content_offset = f->content_offset;
	sf->content_size = f->content_size_in_bytes;
	if (w->s->bound_id > 0 && f->content == FLOE_CONTENT_DATA)
		for (size_t i = 0; i < f->n_lower_bounds; i++)
			if (f->lower_bounds[i].id == w->s->bound_id && f->lower_bounds[i].n == 8) {
				/* spec: single-value serialization, 8 bytes little-endian */
				uint64_t v = 0;
				for (int b = 7; b >= 0; b--)
					v = v << 8 | f->lower_bounds[i].p[b];
				sf->bound_lo = (int64_t)v;
				sf->has_bound_lo = true;
			}
	/* without a filter every residual is TRUE: set it while the file is in cache */
	if (floe_expr_is_true(w->s->filter))
		sf->residual = w->s->filter;
	if (own_partition(w, &sf->partition, &f->partition))
		return FLOE_ENOMEM;
	if (f->content != FLOE_CONTENT_DATA) {
		sf->is_dv = f->content == FLOE_CONTENT_POSITION_DELETES &&
			    !strcmp(sf->format, "PUFFIN");
		/* matched against data files in relocated form: Impala's copied tables
		 * record one file as "/test-warehouse/x" in manifests and as
		 * "hdfs://host/test-warehouse/x" inside delete files */
		if (f->referenced_data_file) {
			sf->referenced = floe_path_map_apply(&w->s->map, a, f->referenced_data_file);
			if (sf->referenced == f->referenced_data_file)
				sf->referenced = floe_arena_strdup(a, f->referenced_data_file);
			if (!sf->referenced)
				return FLOE_ENOMEM;
		}
		if (f->n_equality_ids > UINT32_MAX)
			return FLOE_ENOMEM;
		if (f->n_equality_ids) {
			sf->equality_ids = floe_arena_memdup(a, f->equality_ids,
							     f->n_equality_ids * sizeof(int32_t));
			if (!sf->equality_ids)
				return FLOE_ENOMEM;
			sf->n_equality_ids = (uint32_t)f->n_equality_ids;
		}
		for (size_t i = 0; i < f->n_lower_bounds; i++)
			if (f->lower_bounds[i].id == FLOE_ID_DELETE_FILE_PATH &&
			    f->lower_bounds[i].n < UINT32_MAX &&
			    (sf->path_lo = floe_arena_memdup(a, f->lower_bounds[i].p,
							     f->lower_bounds[i].n + 1)))
				sf->path_lo_n = (uint32_t)f->lower_bounds[i].n;
		for (size_t i = 0; i < f->n_upper_bounds; i++)
			if (f->upper_bounds[i].id == FLOE_ID_DELETE_FILE_PATH &&
			    f->upper_bounds[i].n < UINT32_MAX &&
			    (sf->path_hi = floe_arena_memdup(a, f->upper_bounds[i].p,
							     f->upper_bounds[i].n + 1)))
				sf->path_hi_n = (uint32_t)f->upper_bounds[i].n;
	}
	int k = f->content != FLOE_CONTENT_DATA;
	if (w->n_out[k] == w->cap_out[k] &&
	    floe_array_grow((void **)&w->out[k], &w->cap_out[k], sizeof(*w->out[k]), w->n_out[k] + 1))
		return FLOE_ENOMEM;
	w->out[k][w->n_out[k]++] = sf;
	return FLOE_OK;
}

static int on_entry(const floe_manifest_entry *e, void *payload)
{
	worker *w = payload;
	const job *j = w->cur;
	const floe_data_file *f = &e->file;
	floe_scan *s = w->s;
	w->ord++;
	if (atomic_load_explicit(w->stop, memory_order_relaxed))
		return FLOE_ECANCELED;
	if (j->only_snapshot >= 0 &&
	    (e->status != FLOE_ENTRY_ADDED || e->snapshot_id != j->only_snapshot))
		return 0;
	bool data = f->content == FLOE_CONTENT_DATA;
	if (j->proj && !floe_eval_partition(j->proj, &f->partition)) {
		if (data)
			w->data_skipped++;
		else
			w->delete_skipped++;
		return 0;
	}
	if (data && !floe_expr_is_true(s->filter)) {
		floe_file_metrics m = {f->record_count,	     f->value_counts,
				       f->n_value_counts,    f->null_value_counts,
				       f->n_null_value_counts, f->nan_value_counts,
				       f->n_nan_value_counts, f->lower_bounds,
				       f->n_lower_bounds,     f->upper_bounds,
				       f->n_upper_bounds};
		if (!floe_eval_metrics(s->filter, &m)) {
			w->data_skipped++;
			return 0;
		}
	}
	if (keep(w, e))
		return floe_error_oom(&w->err);
	return 0;
}

static void *work(void *arg)
{
	worker *w = arg;
	for (;;) {
		if (atomic_load(w->stop))
			break;
		size_t i = atomic_fetch_add(w->next, 1);
		if (i >= w->n_jobs)
			break;
		job *j = &w->jobs[i];
		floe_input *in = NULL;
		floe_mscan_opts o = FLOE_MSCAN_OPTS_INIT;
		floe_mscan_stats st = {0};
		o.metric_ids = w->metric_ids;
		o.n_metric_ids = w->n_metric_ids;
		o.schema_cache = w->schemas;
		w->cur = j;
		w->ord = 0;
		j->worker = w->id;
		j->lo[0] = j->hi[0] = w->n_out[0];
		j->lo[1] = j->hi[1] = w->n_out[1];
		int rc = floe_io_open_read_seq(floe_table_io(w->s->t), j->mf->path, &in, &w->err);
		if (!rc)
			rc = floe_manifest_scan(in, w->s->m, j->mf, &o, on_entry, w, &st, &w->err);
		floe_input_close(in);
		j->hi[0] = w->n_out[0];
		j->hi[1] = w->n_out[1];
		atomic_fetch_add(&w->s->st.entries, st.entries);
		if (rc == FLOE_ECORRUPT && w->s->o.skip_corrupt) {
			/* the whole manifest is skipped: forget what it delivered */
			FLOE_WARN("scan: skipped %s", w->err.msg);
			w->n_out[0] = j->lo[0];
			w->n_out[1] = j->lo[1];
			j->hi[0] = j->lo[0];
			j->hi[1] = j->lo[1];
			atomic_fetch_add(&w->s->st.manifests_corrupt, 1);
			floe_error_clear(&w->err);
			continue;
		}
		if (rc) {
			w->rc = rc;
			atomic_store(w->stop, 1);
			break;
		}
	}
	/* counted locally: one shared counter per entry would bounce a cache line between
	 * the planning threads */
	atomic_fetch_add(&w->s->st.data_files_skipped, w->data_skipped);
	atomic_fetch_add(&w->s->st.delete_files_skipped, w->delete_skipped);
	return NULL;
}

static void collect_id(int32_t id, void *payload)
{
	int32_t **p = payload;
	**p = id;
	(*p)++;
}

static size_t count_preds(const floe_expr *e)
{
	if (!e)
		return 0;
	if (e->kind == FLOE_EX_PRED)
		return 1;
	return count_preds(e->left) + count_preds(e->right);
}

static int cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)(n > 64 ? 64 : n) : 1;
}

/* run the jobs on workers; collect the kept data files into out[0] and the
 * delete files into out[1], each in plan order (manifest, then entry) */
static int run_jobs(floe_scan *s, job *jobs, size_t n_jobs, scan_file **out[2], size_t n_out[2],
		    floe_error *err)
{
	_Atomic size_t next = 0;
	_Atomic int stop = 0;
	int rc = FLOE_OK;
	size_t nw = s->o.threads > 0 ? (size_t)s->o.threads : (size_t)cpu_count();
	if (nw > n_jobs)
		nw = n_jobs ? n_jobs : 1;
	/* the metric ids the filter references */
	size_t np = count_preds(s->filter) + (s->bound_id > 0);
	int32_t *ids = floe_arena_calloc(&s->a, np ? np : 1, sizeof(int32_t)), *p = ids;
	if (!ids)
		return floe_error_oom(err);
	floe_expr_field_ids(s->filter, collect_id, &p);
	if (s->bound_id > 0) /* an ordered scan's bounds */
		*p++ = s->bound_id;
	size_t nids = (size_t)(p - ids);
	worker *ws = floe_calloc(nw, sizeof(*ws));
	floe_arena *arenas = floe_arena_alloc(&s->a, nw * sizeof(floe_arena));
	/* a table's manifests repeat one Avro schema (several KB of JSON): parsed once */
	floe_avro_schema_cache *schemas = NULL;
	if (!ws || !arenas || floe_avro_schema_cache_new(&schemas, err)) {
		floe_free(ws);
		return floe_error_oom(err);
	}
	for (size_t i = 0; i < nw; i++) {
		floe_arena_init(&arenas[i], 1 << 20);
		arenas[i].prefault = true; /* the plan fills every chunk */
		ws[i] = (worker){.s = s, .jobs = jobs, .n_jobs = n_jobs, .next = &next, .stop = &stop,
				 .arena = &arenas[i], .id = (uint32_t)i, .metric_ids = ids,
				 .n_metric_ids = nids, .schemas = schemas};
	}
	/* the worker arenas live with the scan */
	s->warenas = arenas;
	s->n_warenas = nw;
	if (nw == 1) {
		work(&ws[0]);
	} else {
		for (size_t i = 0; i < nw; i++) {
			if (pthread_create(&ws[i].th, NULL, work, &ws[i]) != 0) {
				atomic_store(&stop, 1);
				rc = floe_error_set(err, FLOE_EIO, "cannot start a planning thread");
				break;
			}
			ws[i].started = true;
		}
		for (size_t i = 0; i < nw; i++)
			if (ws[i].started)
				pthread_join(ws[i].th, NULL);
	}
	size_t total[2] = {0, 0};
	for (size_t i = 0; i < nw; i++) {
		if (!rc && ws[i].rc && ws[i].rc != FLOE_ECANCELED) {
			rc = ws[i].rc;
			if (err)
				*err = ws[i].err;
		}
		total[0] += ws[i].n_out[0];
		total[1] += ws[i].n_out[1];
	}
	/* plan order without reading the files back (a million of them span
	 * hundreds of MB): each job knows which worker kept which range */
	for (int k = 0; k < 2 && !rc; k++) {
		out[k] = floe_arena_alloc(&s->a, (total[k] ? total[k] : 1) * sizeof(*out[k]));
		if (!out[k]) {
			rc = floe_error_oom(err);
			break;
		}
		size_t n = 0;
		for (size_t j = 0; j < n_jobs; j++) {
			const job *jb = &jobs[j];
			size_t m = jb->hi[k] - jb->lo[k];
			if (m)
				memcpy(out[k] + n, ws[jb->worker].out[k] + jb->lo[k], m * sizeof(*out[k]));
			n += m;
		}
		n_out[k] = n;
	}
	for (size_t i = 0; i < nw; i++) {
		floe_free(ws[i].out[0]);
		floe_free(ws[i].out[1]);
		floe_free(ws[i].tuples);
	}
	floe_free(ws);
	floe_avro_schema_cache_free(schemas);
	return rc;
}

/* ---- delete matching ---------------------------------------------------------------------- */

typedef struct bucket {
	scan_file **v;
	size_t n, cap;
} bucket;

typedef struct multimap {
	floe_hmap m;
	bucket *b;
	size_t n, cap;
} multimap;

static int mm_add(multimap *mm, const void *key, size_t klen, scan_file *f)
{
	uint64_t *slot;
	bool existed;
	if (floe_hmap_upsert(&mm->m, key, klen, &slot, &existed))
		return FLOE_ENOMEM;
	if (!existed) {
		if (floe_array_grow((void **)&mm->b, &mm->cap, sizeof(*mm->b), mm->n + 1))
			return FLOE_ENOMEM;
		memset(&mm->b[mm->n], 0, sizeof(bucket));
		*slot = mm->n++;
	}
	bucket *b = &mm->b[*slot];
	if (floe_array_grow((void **)&b->v, &b->cap, sizeof(*b->v), b->n + 1))
		return FLOE_ENOMEM;
	b->v[b->n++] = f;
	return FLOE_OK;
}

static bucket *mm_get(const multimap *mm, const void *key, size_t klen)
{
	uint64_t i;
	if (!floe_hmap_get(&mm->m, key, klen, &i))
		return NULL;
	return &mm->b[i];
}

static void mm_reset(multimap *mm)
{
	for (size_t i = 0; i < mm->n; i++)
		floe_free(mm->b[i].v);
	floe_free(mm->b);
	floe_hmap_reset(&mm->m);
}

/* a position delete file whose file_path bounds exclude the data file */
static bool path_outside(const scan_file *d, const char *path)
{
	size_t n = strlen(path);
	if (d->path_lo) {
		size_t k = n < d->path_lo_n ? n : d->path_lo_n;
		int c = memcmp(path, d->path_lo, k);
		if (c < 0 || (c == 0 && n < d->path_lo_n))
			return true;
	}
	if (d->path_hi) {
		size_t k = n < d->path_hi_n ? n : d->path_hi_n;
		int c = memcmp(path, d->path_hi, k);
		/* a truncated upper bound is a prefix bound: only a larger prefix excludes */
		if (c > 0)
			return true;
	}
	return false;
}

typedef struct dels {
	scan_file **v;
	size_t n, cap;
} dels;

static int dels_add(dels *d, scan_file *f)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i] == f)
			return FLOE_OK;
	if (floe_array_grow((void **)&d->v, &d->cap, sizeof(*d->v), d->n + 1))
		return FLOE_ENOMEM;
	d->v[d->n++] = f;
	return FLOE_OK;
}

static int match_deletes(floe_scan *s, scan_file **dfiles, size_t nd, floe_error *err)
{
	multimap dv = {0}, pos_by_path = {0}, pos_by_part = {0}, eq_by_part = {0};
	dels global_eq = {0}, cur = {0};
	floe_buf key;
	int rc = FLOE_OK;
	floe_hmap_init(&dv.m);
	floe_hmap_init(&pos_by_path.m);
	floe_hmap_init(&pos_by_part.m);
	floe_hmap_init(&eq_by_part.m);
	floe_buf_init(&key, 0);
	for (size_t i = 0; i < nd && !rc; i++) {
		scan_file *d = dfiles[i];
		if (d->content == FLOE_CONTENT_POSITION_DELETES) {
			if (d->is_dv) {
				if (!d->referenced) {
					rc = floe_error_corrupt(err, "deletion vector '%s' has no referenced_data_file",
							    d->raw_path);
					break;
				}
				bucket *b = mm_get(&dv, d->referenced, strlen(d->referenced));
				if (b && b->n) {
					/* Java: at most one DV per data file; keep the newest */
					if (b->v[0]->data_seq < d->data_seq)
						b->v[0] = d;
					continue;
				}
				rc = mm_add(&dv, d->referenced, strlen(d->referenced), d);
			} else if (d->referenced) {
				rc = mm_add(&pos_by_path, d->referenced, strlen(d->referenced), d);
			} else {
				if (!(rc = floe_scan__partition_key(&key, d->spec_id, &d->partition)))
					rc = mm_add(&pos_by_part, key.data, key.len, d);
			}
		} else if (d->content == FLOE_CONTENT_EQUALITY_DELETES) {
			if (!d->spec || floe_spec_is_unpartitioned(d->spec)) {
				rc = dels_add(&global_eq, d);
			} else if (!(rc = floe_scan__partition_key(&key, d->spec_id, &d->partition))) {
				rc = mm_add(&eq_by_part, key.data, key.len, d);
			}
		}
		if (rc)
			rc = floe_error_oom(err);
	}
	for (size_t i = 0; i < s->n_files && !rc; i++) {
		scan_file *f = s->files[i];
		const bucket *b;
		cur.n = 0;
		if ((rc = floe_scan__partition_key(&key, f->spec_id, &f->partition)))
			break;
		/* spec: a DV applies when ds(data) <= ds(dv) and takes precedence over
		 * position delete files */
		b = mm_get(&dv, f->path, strlen(f->path));
		bool have_dv = b && b->n && b->v[0]->data_seq >= f->data_seq;
		if (have_dv) {
			rc = dels_add(&cur, b->v[0]);
		} else {
			/* spec: position deletes apply when ds(data) <= ds(delete) */
			const bucket *bs[2] = {mm_get(&pos_by_path, f->path, strlen(f->path)),
					       mm_get(&pos_by_part, key.data, key.len)};
			for (int k = 0; k < 2 && !rc; k++)
				for (size_t j = 0; bs[k] && j < bs[k]->n && !rc; j++) {
					scan_file *d = bs[k]->v[j];
					/* file_path bounds hold recorded strings: usable only
					 * when paths are not relocated */
					if (d->data_seq < f->data_seq ||
					    (s->map.n == 0 && path_outside(d, f->raw_path)))
						continue;
					rc = dels_add(&cur, d);
				}
		}
		/* spec: equality deletes apply when ds(data) < ds(delete), in the same
		 * partition or globally from an unpartitioned spec */
		for (size_t j = 0; j < global_eq.n && !rc; j++)
			if (global_eq.v[j]->data_seq > f->data_seq)
				rc = dels_add(&cur, global_eq.v[j]);
		b = mm_get(&eq_by_part, key.data, key.len);
		for (size_t j = 0; b && j < b->n && !rc; j++)
			if (b->v[j]->data_seq > f->data_seq)
				rc = dels_add(&cur, b->v[j]);
		if (rc) {
			rc = floe_error_oom(err);
			break;
		}
		if (cur.n) {
			f->deletes = floe_arena_memdup(&s->a, cur.v, cur.n * sizeof(*cur.v));
			if (!f->deletes) {
				rc = floe_error_oom(err);
				break;
			}
			f->n_deletes = cur.n;
			for (size_t j = 0; j < cur.n; j++)
				cur.v[j]->used = true;
		}
	}
	/* the delete files that apply somewhere */
	if (!rc) {
		size_t used = 0;
		for (size_t i = 0; i < nd; i++)
			used += dfiles[i]->used;
		s->deletes = floe_arena_alloc(&s->a, (used ? used : 1) * sizeof(*s->deletes));
		if (!s->deletes) {
			rc = floe_error_oom(err);
		} else {
			for (size_t i = 0; i < nd; i++)
				if (dfiles[i]->used)
					s->deletes[s->n_deletes++] = dfiles[i];
			s->st.delete_files = s->n_deletes;
			s->st.delete_files_skipped += nd - s->n_deletes;
		}
	}
	mm_reset(&dv);
	mm_reset(&pos_by_path);
	mm_reset(&pos_by_part);
	mm_reset(&eq_by_part);
	floe_free(global_eq.v);
	floe_free(cur.v);
	floe_buf_reset(&key);
	return rc;
}

/* ---- planning ---------------------------------------------------------------------------- */

typedef struct spec_ctx {
	const floe_partition_spec *spec;
	floe_expr *proj;
	const floe_type **types;
} spec_ctx;

static spec_ctx *spec_for(floe_scan *s, spec_ctx *ctx, int32_t spec_id)
{
	for (size_t i = 0; i < s->m->n_specs; i++)
		if (ctx[i].spec && ctx[i].spec->spec_id == spec_id)
			return &ctx[i];
	return NULL;
}

static int add_manifests(floe_scan *s, const floe_snapshot *snap, int64_t only_snapshot,
			 spec_ctx *ctx, job **jobs, size_t *n_jobs, size_t *cap, floe_error *err)
{
	floe_manifest_file *mfs;
	size_t n;
	int rc = floe_table__read_manifests(&mfs, &n, &s->a, s->t, snap, !s->o.skip_corrupt, err);
	if (rc == FLOE_ECORRUPT && s->o.skip_corrupt) {
		/* unreadable: nothing of it can be read */
		FLOE_WARN("scan: skipped snapshot %lld's manifest list: %s",
			  (long long)snap->snapshot_id, err ? err->msg : "corrupt");
		s->st.manifests_corrupt++;
		floe_error_clear(err);
		return FLOE_OK;
	}
	if (rc)
		return rc;
	floe_error lerr;
	floe_error_clear(&lerr);
	if (s->o.skip_corrupt &&
	    floe_manifest_list_check(snap, mfs, n, snap->manifest_list ? snap->manifest_list : "?",
				     &lerr)) {
		FLOE_WARN("scan: %s; reading the %zu manifests it holds", lerr.msg, n);
		s->st.manifests_corrupt++;
	}
	for (size_t i = 0; i < n; i++) {
		const floe_manifest_file *mf = &mfs[i];
		if (only_snapshot >= 0 &&
		    (mf->content != FLOE_MANIFEST_DATA || mf->added_snapshot_id != only_snapshot))
			continue;
		s->st.manifests++;
		spec_ctx *sc = spec_for(s, ctx, mf->spec_id);
		if (sc && sc->proj && mf->partitions_present &&
		    !floe_eval_summaries(sc->proj, mf->partitions, mf->n_partitions, sc->types)) {
			s->st.manifests_skipped++;
			continue;
		}
		if (floe_array_grow((void **)jobs, cap, sizeof(**jobs), *n_jobs + 1))
			return floe_error_oom(err);
		job *j = &(*jobs)[(*n_jobs)];
		j->mf = mf;
		j->only_snapshot = only_snapshot;
		j->proj = sc ? sc->proj : NULL;
		j->spec = sc ? sc->spec : NULL;
		j->index = (uint32_t)*n_jobs;
		j->worker = 0;
		j->lo[0] = j->hi[0] = j->lo[1] = j->hi[1] = 0;
		(*n_jobs)++;
	}
	return FLOE_OK;
}

static int check_operation(floe_scan *s, const floe_snapshot *x, bool *skip, floe_error *err)
{
	const char *op = floe_snapshot_summary(x, "operation");
	*skip = false;
	if (!op || !strcmp(op, "append"))
		return FLOE_OK;
	if (!strcmp(op, "replace")) {
		*skip = true; /* compaction: no new rows */
		return FLOE_OK;
	}
	if (s->o.skip_overwrites) {
		*skip = true;
		return FLOE_OK;
	}
	return floe_error_set(err, FLOE_EUNSUPPORTED,
			      "incremental append read: snapshot %lld is a '%s' snapshot, which "
			      "rewrites or removes rows; an append-only read cannot represent it "
			      "(read the table at a snapshot instead, or skip such snapshots)",
			      (long long)x->snapshot_id, op);
}

int floe_scan__plan(floe_scan *s, floe_error *err)
{
	int64_t t0 = floe_monotonic_ns();
	spec_ctx *ctx;
	job *jobs = NULL;
	size_t n_jobs = 0, cap = 0;
	int rc = FLOE_OK;
	s->planned = true;
	if (!s->snap)
		return FLOE_OK;
	ctx = floe_arena_calloc(&s->a, s->m->n_specs ? s->m->n_specs : 1, sizeof(*ctx));
	if (!ctx)
		return floe_error_oom(err);
	for (size_t i = 0; i < s->m->n_specs; i++) {
		const floe_partition_spec *sp = s->m->specs[i];
		ctx[i].spec = sp;
		ctx[i].types = floe_arena_calloc(&s->a, sp->n_fields ? sp->n_fields : 1,
						 sizeof(*ctx[i].types));
		if (!ctx[i].types)
			return floe_error_oom(err);
		for (size_t k = 0; k < sp->n_fields; k++)
			ctx[i].types[k] = floe_spec_field_type(sp, k, s->schema);
		if (!floe_expr_is_true(s->filter) &&
		    (rc = floe_expr_project(&ctx[i].proj, &s->a, s->filter, sp, s->schema, err)))
			return rc;
		if (ctx[i].proj && floe_expr_is_true(ctx[i].proj))
			ctx[i].proj = NULL;
	}
	if (s->incremental) {
		/* oldest first: walk back from the end to the exclusive start */
		const floe_snapshot *chain[4096];
		size_t nc = 0;
		for (const floe_snapshot *x = s->snap; x && x->snapshot_id != s->from_exclusive;
		     x = floe_metadata_parent(s->m, x)) {
			if (nc == sizeof(chain) / sizeof(chain[0])) {
				rc = floe_error_set(err, FLOE_EUNSUPPORTED,
						    "incremental read over more than %zu snapshots",
						    sizeof(chain) / sizeof(chain[0]));
				goto done;
			}
			chain[nc++] = x;
		}
		for (size_t i = nc; i-- > 0 && !rc;) {
			bool skip;
			if ((rc = check_operation(s, chain[i], &skip, err)) || skip)
				continue;
			rc = add_manifests(s, chain[i], chain[i]->snapshot_id, ctx, &jobs, &n_jobs, &cap,
					   err);
		}
	} else {
		rc = add_manifests(s, s->snap, -1, ctx, &jobs, &n_jobs, &cap, err);
	}
	if (rc)
		goto done;
	scan_file **kept[2] = {NULL, NULL};
	size_t n_kept[2] = {0, 0};
	if ((rc = run_jobs(s, jobs, n_jobs, kept, n_kept, err)))
		goto done;
	s->files = kept[0];
	s->n_files = n_kept[0];
	scan_file **dfiles = kept[1];
	size_t nd = n_kept[1];
	s->st.data_files = s->n_files;
	if (nd && (rc = match_deletes(s, dfiles, nd, err)))
		goto done;
	/* residuals: identity partition predicates are decided by the tuple (TRUE
	 * ones were set as the files were kept) */
	for (size_t i = 0; i < s->n_files && !floe_expr_is_true(s->filter); i++) {
		scan_file *f = s->files[i];
		f->residual = floe_expr_residual(&s->a, s->filter, f->spec, &f->partition);
		if (!f->residual) {
			rc = floe_error_oom(err);
			goto done;
		}
	}
done:
	floe_free(jobs);
	s->st.plan_ns = (uint64_t)(floe_monotonic_ns() - t0);
	if (!rc)
		FLOE_DEBUG("scan plan: %llu manifests (%llu pruned), %zu data files (%llu pruned), "
			   "%zu delete files, %.1f ms",
			   (unsigned long long)s->st.manifests,
			   (unsigned long long)s->st.manifests_skipped, s->n_files,
			   (unsigned long long)s->st.data_files_skipped, s->n_deletes,
			   (double)s->st.plan_ns / 1e6);
	return rc;
}
