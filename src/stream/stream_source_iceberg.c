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
 * Limits: a unit is rendered whole before its first block (memory grows
 * with the rows one snapshot changed); append mode fails on overwrite and
 * delete snapshots as Flink's does (read such tables in changelog mode).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe/scan.h"
#include "stream/stream_source.h"
#include "table/table_impl.h"
#include "util/log.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define SPLIT "iceberg"

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

/* Render the next unit into s->rows; *none when there is none yet. */
static int open_unit(ice_source *s, bool *none, floe_error *err)
{
	floe_scan *sc = NULL;
	int rc;
	*none = false;
	floe_buf_clear(&s->rows);
	s->at = 0;
	if (s->in_table) {
		floe_scan_opts o = FLOE_SCAN_OPTS_INIT;
		o.snapshot_id = s->table_snap;
		rc = floe_scan_open(&sc, s->t, &o, err);
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
			rc = floe_scan_open(&sc, s->t, &o, err);
		}
	}
	if (!rc)
		rc = floe_scan_write(sc, FLOE_OUTPUT_JSON, put_rows, &s->rows, err);
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
		int64_t lines = 0;
		while (n < left) {
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
	floe_free(s->ident);
	floe_free(s->base.name);
	floe_free(s);
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
	*out = &s->base;
	return FLOE_OK;
}
