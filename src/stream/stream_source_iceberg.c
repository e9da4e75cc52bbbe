/*
 * stream_source_iceberg.c — an Iceberg table as a pipeline source (Flink's
 * IcebergSource): its appended rows (append mode: the incremental reads of
 * `floe scan --incremental`) or its changes (changelog mode: `floe scan
 * --changelog`, for CDC from one table into another), snapshot by snapshot,
 * with Flink's starting strategies, bounded or streaming (monitor interval).
 *
 * DESIGN: the source's unit of work is one snapshot (or, for the
 * TABLE_SCAN_THEN_INCREMENTAL start, the table scan at the snapshot current
 * at the start). A unit's rows are rendered as JSON lines in plan order,
 * which is deterministic, and cut into blocks. The one split "iceberg"
 * counts rows over the whole read (pos = the next row's number, so the
 * tasks' per-table skipping of committed rows works as for the generator)
 * and its token says where the unit in progress starts: "D,U" — every
 * snapshot up to D is done and the next unit's first row is number U — or
 * "t:S,U" while the table scan at S is in progress. A restart re-renders
 * the unit in progress and skips the pos - U rows a checkpoint already
 * holds, so every row reaches the tables once. Nothing else is kept: the
 * position lives in the downstream tables' floe.source-offsets like every
 * other source's.
 *
 * Watermarks (watermark-column, as Flink's IcebergSource): the unit's data
 * files are read in the order of the column's lower bound (then path: a
 * total order, so a restart re-renders the same rows in the same order),
 * blocks never span two files, and after each block the watermark becomes
 * the lower bound of the file the next row comes from — the smallest lower
 * bound not yet emitted — never going back (a later snapshot's older rows
 * are late, as in Flink). It is recorded as the parameter @watermark (epoch
 * ms) with the position, so the downstream tables' commits carry it
 * (floe.watermark) and a restart resumes it.
 *
 * Limits: a unit is rendered whole before its first block (memory grows
 * with the rows one snapshot changed); append mode fails on overwrite and
 * delete snapshots as Flink's does (read such tables in changelog mode).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "floe/scan.h"
#include "scan/scan_impl.h"
#include "stream/stream_source.h"
#include "table/table_impl.h"
#include "util/log.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define SPLIT "iceberg"

/* where a file's rows start in its unit, and its lower bound (epoch ms) */
typedef struct wm_mark {
	int64_t row, wm;
} wm_mark;

typedef struct ice_source {
	stream_source base;
	stream_iceberg_opts o;
	char *ident;
	floe_table *t;
	/* position */
	int64_t done;      /* every snapshot up to this one is done; -1 none */
	bool in_table;     /* the unit in progress is the table scan at table_snap */
	int64_t table_snap;
	int64_t unit_base; /* row number of the unit's first row */
	int64_t next_row;  /* row number of the next row handed out */
	bool started;      /* the start strategy has been applied */
	int64_t end_snap;  /* bounded: the snapshot to stop after (-1: none yet) */
	/* the unit in progress */
	bool have_unit;
	int64_t unit_snap; /* the snapshot the unit finishes */
	floe_buf rows;     /* its JSON lines */
	size_t at;         /* bytes of rows handed out (or skipped) */
	int64_t last_refresh_ns;
	/* watermarks */
	int32_t wm_id;     /* > 0: the watermark column's field id */
	int64_t wm_ns;     /* nanoseconds per unit of its values */
	int64_t watermark; /* epoch ms; INT64_MIN: none yet */
	wm_mark *marks;    /* the unit's files, in read order */
	size_t n_marks, cap_marks;
	int64_t unit_rows; /* rows of the unit */
} ice_source;

static int put_rows(const char *data, size_t n, void *payload)
{
	return floe_buf_append((floe_buf *)payload, data, n) ? FLOE_ENOMEM : 0;
}

static const floe_snapshot *head_of(ice_source *s)
{
	return floe_metadata_current_snapshot(floe_table_metadata(s->t));
}

/* The snapshot after `after` on the current snapshot's ancestry (after -1:
 * the oldest ancestor); NULL when after is the head. */
static const floe_snapshot *child_of(ice_source *s, int64_t after)
{
	const floe_metadata *m = floe_table_metadata(s->t);
	const floe_snapshot *x = head_of(s), *prev = NULL;
	for (; x; prev = x, x = floe_metadata_parent(m, x))
		if (x->snapshot_id == after)
			return prev;
	return after < 0 ? prev : NULL;
}

static int apply_start(ice_source *s, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(s->t);
	const floe_snapshot *head = head_of(s);
	s->started = true;
	if (!s->o.streaming)
		s->end_snap = head ? head->snapshot_id : -1;
	switch (s->o.start) {
	case FLOE_START_LATEST:
		s->done = head ? head->snapshot_id : -1;
		break;
	case FLOE_START_EARLIEST:
		s->done = -1;
		break;
	case FLOE_START_SNAPSHOT_ID: {
		const floe_snapshot *x = floe_metadata_snapshot(m, s->o.start_snapshot_id);
		if (!x)
			return floe_error_set(err, FLOE_ENOTFOUND, "source '%s': no snapshot %lld in %s",
					      s->base.name, (long long)s->o.start_snapshot_id, s->ident);
		s->done = x->parent_id; /* inclusive: the snapshot itself is read */
		break;
	}
	case FLOE_START_TIMESTAMP: {
		/* the first snapshot at or after the time, on the current ancestry */
		const floe_snapshot *x = head, *first = NULL;
		for (; x; x = floe_metadata_parent(m, x))
			if (x->timestamp_ms >= s->o.start_timestamp_ms)
				first = x;
		s->done = first ? first->parent_id : (head ? head->snapshot_id : -1);
		break;
	}
	default: /* a table scan of the current snapshot, then what comes after */
		if (s->o.table_snapshot_id > 0) {
			if (!floe_metadata_snapshot(m, s->o.table_snapshot_id))
				return floe_error_set(err, FLOE_ENOTFOUND, "source '%s': no snapshot %lld in %s",
						      s->base.name, (long long)s->o.table_snapshot_id,
						      s->ident);
			s->in_table = true;
			s->table_snap = s->o.table_snapshot_id;
			if (!s->o.streaming)
				s->end_snap = s->table_snap;
		} else if (head) {
			s->in_table = true;
			s->table_snap = head->snapshot_id;
		}
		s->done = -1;
		break;
	}
	return FLOE_OK;
}

/* changelog mode starting with a table scan: its rows are INSERTs of the
 * snapshot (each JSON line gets the changelog columns) */
static int as_inserts(floe_buf *rows, int64_t snap, floe_error *err)
{
	floe_buf out;
	char extra[128];
	int n = snprintf(extra, sizeof(extra),
			 ",\"_change_type\":\"INSERT\",\"_change_ordinal\":0,\"_commit_snapshot_id\":%lld}\n",
			 (long long)snap);
	floe_buf_init(&out, 0);
	const char *p = (const char *)rows->data, *end = p + rows->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		const char *close = e;
		while (close > p && close[-1] != '}')
			close--;
		if (close > p && (floe_buf_append(&out, p, (size_t)(close - 1 - p)) ||
				  floe_buf_append(&out, extra, (size_t)n))) {
			floe_buf_reset(&out);
			return floe_error_oom(err);
		}
		p = nl ? nl + 1 : end;
	}
	floe_buf_reset(rows);
	*rows = out;
	return FLOE_OK;
}

/* a lower bound in epoch ms (floor) */
static int64_t bound_ms(const ice_source *s, int64_t v)
{
	if (s->wm_ns >= 1000000) {
		int64_t k = s->wm_ns / 1000000;
		if (v > INT64_MAX / k)
			return INT64_MAX;
		if (v < INT64_MIN / k)
			return INT64_MIN + 1;
		return v * k;
	}
	int64_t d = 1000000 / s->wm_ns;
	return v / d - (v % d < 0);
}

/* The unit's rows in the order of the files' lower bounds, and their marks. */
static int render_ordered(ice_source *s, floe_scan *sc, floe_error *err)
{
	const scan_file *last = NULL;
	int rc;
	s->n_marks = 0;
	for (;;) {
		struct ArrowArray b;
		bool eof;
		if ((rc = floe_scan_next(sc, &b, &eof, err)))
			return rc;
		if (eof)
			return FLOE_OK;
		const scan_file *f = floe_scan__batch_file(sc);
		if (f && f != last) {
			if (s->n_marks == s->cap_marks &&
			    floe_array_grow((void **)&s->marks, &s->cap_marks, sizeof(*s->marks),
					    s->n_marks + 1)) {
				floe_arrow_array_release(&b);
				return floe_error_oom(err);
			}
			s->marks[s->n_marks].row = s->unit_rows;
			s->marks[s->n_marks].wm = bound_ms(s, f->bound_lo);
			s->n_marks++;
			last = f;
		}
		rc = floe_scan__batch_json(&s->rows, sc, &b);
		s->unit_rows += b.length;
		floe_arrow_array_release(&b);
		if (rc)
			return floe_error_oom(err);
	}
}

/* The mark of the file unit row k is in (NULL: past the unit's rows). */
static const wm_mark *mark_of(const ice_source *s, int64_t k)
{
	if (k >= s->unit_rows || !s->n_marks)
		return NULL;
	size_t lo = 0, hi = s->n_marks; /* the last mark with row <= k */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->marks[mid].row <= k)
			lo = mid;
		else
			hi = mid;
	}
	return &s->marks[lo];
}

/* After rows up to next_row were handed out: the smallest lower bound not
 * yet emitted becomes the watermark (never going back). */
static void advance_watermark(ice_source *s)
{
	const wm_mark *m = s->wm_id > 0 && s->have_unit ? mark_of(s, s->next_row - s->unit_base)
							 : NULL;
	if (m && m->wm > s->watermark) {
		s->watermark = m->wm;
		FLOE_INFO("source '%s': watermark %lld", s->base.name, (long long)s->watermark);
	}
}

/* Render the next unit into s->rows; *none when there is none yet. */
static int open_unit(ice_source *s, bool *none, floe_error *err)
{
	floe_scan *sc = NULL;
	int rc;
	*none = false;
	floe_buf_clear(&s->rows);
	s->at = 0;
	s->unit_rows = 0;
	s->n_marks = 0;
	if (s->in_table) {
		floe_scan_opts o = FLOE_SCAN_OPTS_INIT;
		o.snapshot_id = s->table_snap;
		rc = s->wm_id > 0 ? floe_scan__open_ordered(&sc, s->t, &o, s->wm_id, err)
				  : floe_scan_open(&sc, s->t, &o, err);
		s->unit_snap = s->table_snap;
	} else {
		const floe_snapshot *next = child_of(s, s->done);
		if (!next) {
			*none = true;
			return FLOE_OK;
		}
		s->unit_snap = next->snapshot_id;
		if (s->o.mode == STREAM_ICEBERG_CHANGELOG) {
			floe_changelog_opts co = FLOE_CHANGELOG_OPTS_INIT;
			char from[32], to[32];
			snprintf(from, sizeof(from), "%lld", (long long)s->done);
			snprintf(to, sizeof(to), "%lld", (long long)next->snapshot_id);
			co.from = s->done >= 0 ? from : NULL;
			co.to = to;
			rc = floe_scan_changelog_open(&sc, s->t, &co, err);
		} else {
			floe_scan_opts o = FLOE_SCAN_OPTS_INIT;
			o.start = FLOE_START_SNAPSHOT_ID;
			o.start_snapshot_id = next->snapshot_id;
			o.end_snapshot_id = next->snapshot_id;
			o.skip_overwrites = s->o.skip_overwrites;
			rc = s->wm_id > 0 ? floe_scan__open_ordered(&sc, s->t, &o, s->wm_id, err)
					  : floe_scan_open(&sc, s->t, &o, err);
		}
	}
	if (!rc)
		rc = s->wm_id > 0 ? render_ordered(s, sc, err)
				  : floe_scan_write(sc, FLOE_OUTPUT_JSON, put_rows, &s->rows, err);
	floe_scan_free(sc);
	if (!rc && s->in_table && s->o.mode == STREAM_ICEBERG_CHANGELOG)
		rc = as_inserts(&s->rows, s->table_snap, err);
	if (rc)
		return floe_error_prefix(err, rc, "source '%s': %s snapshot %lld: ", s->base.name,
					 s->ident, (long long)s->unit_snap);
	s->have_unit = true;
	/* a restart inside this unit: skip the rows already handed out */
	for (int64_t k = s->unit_base; k < s->next_row && s->at < s->rows.len; k++) {
		const char *p = (const char *)s->rows.data + s->at;
		const char *nl = memchr(p, '\n', s->rows.len - s->at);
		s->at = nl ? (size_t)(nl + 1 - (const char *)s->rows.data) : s->rows.len;
	}
	advance_watermark(s);
	return FLOE_OK;
}

static void finish_unit(ice_source *s)
{
	s->have_unit = false;
	s->in_table = false;
	s->done = s->unit_snap;
	s->unit_base = s->next_row;
	floe_buf_clear(&s->rows);
	s->at = 0;
}

static int ice_next(stream_source *base, stream_block *b, bool *got, bool *eof, floe_error *err)
{
	ice_source *s = (ice_source *)base;
	int rc;
	*got = false;
	*eof = false;
	if (!s->started && (rc = apply_start(s, err)))
		return rc;
	for (;;) {
		if (!s->have_unit) {
			bool none;
			if (!s->o.streaming && !s->in_table && (s->end_snap < 0 || s->done == s->end_snap)) {
				*eof = true;
				return FLOE_OK;
			}
			if ((rc = open_unit(s, &none, err)))
				return rc;
			if (none) {
				int64_t now = floe_monotonic_ns();
				if (s->o.streaming &&
				    now - s->last_refresh_ns >= s->o.monitor_interval_ms * 1000000) {
					s->last_refresh_ns = now;
					if ((rc = floe_table_refresh(s->t, err)))
						return floe_error_prefix(err, rc, "source '%s': refreshing %s: ",
									 s->base.name, s->ident);
					continue;
				}
				return FLOE_OK;
			}
		}
		if (s->at >= s->rows.len) {
			finish_unit(s);
			continue;
		}
		/* whole lines, at most block_bytes (at least one line) */
		const char *p = (const char *)s->rows.data + s->at;
		size_t left = s->rows.len - s->at, n = 0;
		int64_t lines = 0, max_lines = INT64_MAX;
		/* watermarks: a block holds rows of one file */
		const wm_mark *m = s->wm_id > 0 ? mark_of(s, s->next_row - s->unit_base) : NULL;
		if (m && m + 1 < s->marks + s->n_marks)
			max_lines = m[1].row - (s->next_row - s->unit_base);
		while (n < left && lines < max_lines) {
			const char *nl = memchr(p + n, '\n', left - n);
			size_t l = nl ? (size_t)(nl + 1 - (p + n)) : left - n;
			if (lines && n + l > s->o.block_bytes)
				break;
			n += l;
			lines++;
		}
		memset(b, 0, sizeof(*b));
		if (!(b->data = floe_memdup(p, n)))
			return floe_error_oom(err);
		b->len = n;
		b->split_name = SPLIT;
		b->start = s->next_row;
		b->end = s->next_row + lines;
		s->next_row += lines;
		s->at += n;
		advance_watermark(s);
		*got = true;
		return FLOE_OK;
	}
}

static int ice_seek(stream_source *base, const stream_offsets *pos, floe_error *err)
{
	ice_source *s = (ice_source *)base;
	const char *tok = pos ? stream_offsets_tok(pos, SPLIT) : NULL;
	s->have_unit = false;
	floe_buf_clear(&s->rows);
	s->at = 0;
	/* the watermark the tables committed (seek_sources hands parameters on
	 * without their '@') */
	s->watermark = INT64_MIN;
	if (pos && (stream_offsets_has(pos, "watermark") || stream_offsets_has(pos, "@watermark")))
		s->watermark = stream_offsets_has(pos, "watermark")
				       ? stream_offsets_get(pos, "watermark", INT64_MIN)
				       : stream_offsets_get(pos, "@watermark", INT64_MIN);
	if (!tok) {
		s->started = false;
		s->next_row = s->unit_base = 0;
		return FLOE_OK;
	}
	/* "D,U" or "t:S,U" */
	long long a, u;
	char *end;
	bool table = !strncmp(tok, "t:", 2);
	a = strtoll(table ? tok + 2 : tok, &end, 10);
	if (*end != ',')
		return floe_error_corrupt(err, "source '%s': bad position token '%s'", base->name, tok);
	u = strtoll(end + 1, &end, 10);
	if (*end || u < 0)
		return floe_error_corrupt(err, "source '%s': bad position token '%s'", base->name, tok);
	s->started = true;
	s->in_table = table;
	s->table_snap = table ? a : -1;
	s->done = table ? -1 : a;
	s->unit_base = u;
	s->next_row = stream_offsets_get(pos, SPLIT, u);
	if (s->next_row < u)
		return floe_error_corrupt(err, "source '%s': position %lld before its unit's start %lld",
					  base->name, (long long)s->next_row, u);
	if (!s->o.streaming) {
		const floe_snapshot *head = head_of(s);
		s->end_snap = s->o.table_snapshot_id > 0 ? s->o.table_snapshot_id
			      : head			   ? head->snapshot_id
							   : -1;
	}
	return FLOE_OK;
}

static int ice_position(stream_source *base, stream_offsets *out, floe_error *err)
{
	ice_source *s = (ice_source *)base;
	char tok[64];
	/* a unit whose every row was handed out is done */
	if (s->have_unit && s->at >= s->rows.len)
		finish_unit(s);
	if (!s->started)
		return FLOE_OK;
	if (s->in_table)
		snprintf(tok, sizeof(tok), "t:%lld,%lld", (long long)s->table_snap,
			 (long long)s->unit_base);
	else
		snprintf(tok, sizeof(tok), "%lld,%lld", (long long)s->done, (long long)s->unit_base);
	if (stream_offsets_set_tok(out, SPLIT, s->next_row, tok))
		return floe_error_oom(err);
	if (s->wm_id > 0 && s->watermark != INT64_MIN &&
	    stream_offsets_set(out, "@watermark", s->watermark))
		return floe_error_oom(err);
	return FLOE_OK;
}

static void ice_wait(stream_source *base, int64_t ms)
{
	ice_source *s = (ice_source *)base;
	int64_t step = s->o.monitor_interval_ms < 100 ? s->o.monitor_interval_ms : 100;
	floe_sleep_ms(ms < step ? ms : step);
}

static void ice_free(stream_source *base)
{
	ice_source *s = (ice_source *)base;
	if (!s)
		return;
	floe_table_free(s->t);
	floe_buf_reset(&s->rows);
	floe_free(s->marks);
	floe_free(s->ident);
	floe_free(s->base.name);
	floe_free(s);
}

/* The watermark column: a long or timestamp column of the current schema
 * (Flink: "expected a LONG or TIMESTAMP column for watermark generation"). */
static int bind_watermark(ice_source *s, floe_error *err)
{
	const floe_schema *sch = floe_metadata_current_schema(floe_table_metadata(s->t));
	const floe_schema_entry *e =
		sch ? floe_schema_find_name(sch, s->o.watermark_column, false) : NULL;
	if (!e)
		return floe_error_set(err, FLOE_EINVAL, "source '%s': watermark-column '%s' is not a "
				      "column of %s",
				      s->base.name, s->o.watermark_column, s->ident);
	switch (e->type->id) {
	case FLOE_T_LONG:
		s->wm_ns = s->o.watermark_unit_ns > 0 ? s->o.watermark_unit_ns : 1000;
		break;
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
		s->wm_ns = 1000;
		break;
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		s->wm_ns = 1;
		break;
	default:
		return floe_error_set(err, FLOE_EINVAL, "source '%s': watermark-column '%s' of %s is "
				      "not a long or timestamp column",
				      s->base.name, s->o.watermark_column, s->ident);
	}
	if (e->in_repeated)
		return floe_error_set(err, FLOE_EINVAL, "source '%s': watermark-column '%s' is inside "
				      "a list or map",
				      s->base.name, s->o.watermark_column);
	s->wm_id = e->id;
	return FLOE_OK;
}

static const stream_source_ops ice_ops = {
	ice_seek, ice_next, ice_position, ice_wait, NULL, ice_free,
};

int stream_source_iceberg_new(stream_source **out, const char *name, const stream_iceberg_opts *o,
			      floe_error *err)
{
	ice_source *s;
	int rc;
	*out = NULL;
	if (!o->cat || !o->table)
		return floe_error_set(err, FLOE_EINVAL, "source '%s': no catalog or table", name);
	const char *dot = strrchr(o->table, '.');
	if (!dot || dot == o->table || !dot[1])
		return floe_error_set(err, FLOE_EINVAL,
				      "source '%s': source-table '%s' is not namespace.table", name,
				      o->table);
	s = floe_calloc(1, sizeof(*s));
	if (!s || !(s->base.name = floe_strdup(name)) || !(s->ident = floe_strdup(o->table))) {
		ice_free(s ? &s->base : NULL);
		return floe_error_oom(err);
	}
	s->base.ops = &ice_ops;
	s->base.format = STREAM_FMT_JSONL;
	s->base.replayable = true;
	s->o = *o;
	if (!s->o.block_bytes)
		s->o.block_bytes = (size_t)1 << 20;
	if (s->o.monitor_interval_ms <= 0)
		s->o.monitor_interval_ms = 1000;
	s->done = -1;
	s->end_snap = -1;
	floe_buf_init(&s->rows, 0);
	char ns[512];
	size_t nl = (size_t)(dot - o->table);
	if (nl >= sizeof(ns)) {
		ice_free(&s->base);
		return floe_error_set(err, FLOE_EINVAL, "source '%s': namespace too long", name);
	}
	memcpy(ns, o->table, nl);
	ns[nl] = 0;
	if ((rc = floe_table_load(&s->t, o->cat, ns, dot + 1, err))) {
		ice_free(&s->base);
		return floe_error_prefix(err, rc, "source '%s': ", name);
	}
	s->watermark = INT64_MIN;
	if (o->watermark_column && (rc = bind_watermark(s, err))) {
		ice_free(&s->base);
		return rc;
	}
	*out = &s->base;
	return FLOE_OK;
}
