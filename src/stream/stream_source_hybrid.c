/*
 * stream_source_hybrid.c — Flink's HybridSource for backfills: a bounded
 * read of an Iceberg table (the bootstrap: the table scan of its current
 * snapshot S), then a second source (files, Kafka or Kinesis) that starts
 * where the pipeline that wrote S had got to — the floe.source-offsets
 * recorded with S (or with its newest ancestor that has them: compaction
 * snapshots carry none; each split's newest position over the ancestors of
 * that pipeline, since the processes of a Kafka group each record their own
 * partitions).
 *
 * DESIGN: exactly-once across the switch comes from the positions alone.
 * In the bootstrap phase the position is the Iceberg source's (split
 * "iceberg", rows) plus the parameters @hybrid-phase 0 and
 * @hybrid-snapshot S; once the bootstrap ends the second source is sought
 * to S's offsets and the position becomes its own plus @hybrid-phase 1. A
 * restart in the bootstrap phase resumes inside it (and switches at its
 * end to the same offsets, since S is kept); a restart after the switch
 * seeks the second source only. The rows S holds and the records after
 * S's offsets are disjoint, so every record arrives once.
 *
 * The second source's start (`want`: S's offsets at the switch, the
 * table's after a restart in phase 1) stays part of the position until the
 * source reports its own for a split: a Kafka partition is only assigned
 * once the consumer has joined its group, and a checkpoint before that must
 * still record where it starts. Kafka partitions are positioned through the
 * assignment hook (stream_source_hybrid_start), Kinesis shards and files
 * by seek; a Kafka partition's start follows the blocks handed out, so a
 * partition assigned again after a rebalance (the hybrid's table is not
 * split-fenced and commits nothing at a revocation) goes on after the
 * records its writers hold instead of reading them twice. A split S did not record starts as the second source's own
 * settings say (scan.startup.mode, scan.stream.initpos; files: at 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/stream_kafka.h"
#include "stream/stream_source.h"
#include "table/table_impl.h"
#include "util/log.h"

typedef struct hybrid_source {
	stream_source base;
	stream_source *boot, *then;
	stream_iceberg_opts io;
	char *ident;
	floe_table *t;
	int phase;
	int64_t snap;
	stream_offsets then_start;
	stream_offsets want; /* phase 1: where the second source started */
} hybrid_source;

/* S's recorded offsets (or its newest ancestor's) into then_start. */
static int load_then_start(hybrid_source *h, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(h->t);
	const char *pipeline = NULL;
	bool found = false;
	int rc = FLOE_OK;
	stream_offsets_reset(&h->then_start);
	stream_offsets_init(&h->then_start);
	for (const floe_snapshot *s = floe_metadata_snapshot(m, h->snap); s && !rc;
	     s = floe_metadata_parent(m, s)) {
		const char *offs = floe_snapshot_summary(s, "floe.source-offsets");
		const char *pid = floe_snapshot_summary(s, "floe.pipeline-id");
		if (!offs || (found && (!pid || !pipeline || strcmp(pid, pipeline))))
			continue;
		stream_offsets one;
		stream_offsets_init(&one);
		rc = stream_offsets_parse_json(&one, offs, strlen(offs), err);
		if (rc)
			rc = floe_error_prefix(err, rc, "source '%s': %s snapshot %lld: ",
					       h->base.name, h->ident, (long long)s->snapshot_id);
		for (size_t i = 0; i < one.n && !rc; i++) /* newer snapshots first: they win */
			if (one.items[i].split[0] != '@' &&
			    !stream_offsets_has(&h->then_start, one.items[i].split) &&
			    stream_offsets_set_tok(&h->then_start, one.items[i].split,
						   one.items[i].pos, one.items[i].tok))
				rc = floe_error_oom(err);
		stream_offsets_reset(&one);
		if (!found)
			pipeline = pid;
		found = true;
	}
	if (rc || found)
		return rc;
	FLOE_WARN("source '%s': no snapshot of %s up to %lld records source offsets: the second "
		  "source starts at its beginning",
		  h->base.name, h->ident, (long long)h->snap);
	return FLOE_OK;
}

static int open_boot(hybrid_source *h, floe_error *err)
{
	if (h->boot)
		h->boot->ops->free(h->boot);
	h->boot = NULL;
	h->io.table_snapshot_id = h->snap;
	return stream_source_iceberg_new(&h->boot, h->base.name, &h->io, err);
}

/* want := pos (the second source's splits only) */
static int set_want(hybrid_source *h, const stream_offsets *pos, floe_error *err)
{
	stream_offsets_reset(&h->want);
	stream_offsets_init(&h->want);
	for (size_t i = 0; pos && i < pos->n; i++) {
		const stream_offset *o = &pos->items[i];
		if (o->split[0] == '@' || !strcmp(o->split, "hybrid-phase") ||
		    !strcmp(o->split, "hybrid-snapshot") || !strcmp(o->split, "iceberg"))
			continue;
		if (stream_offsets_set_tok(&h->want, o->split, o->pos, o->tok))
			return floe_error_oom(err);
	}
	return FLOE_OK;
}

int64_t stream_source_hybrid_start(stream_source *base, const char *split)
{
	hybrid_source *h = (hybrid_source *)base;
	return stream_offsets_has(&h->want, split) ? stream_offsets_get(&h->want, split, -1) : -1;
}

static int switch_over(hybrid_source *h, floe_error *err)
{
	int rc = set_want(h, &h->then_start, err);
	if (rc || (rc = h->then->ops->seek(h->then, &h->want, err)))
		return rc;
	h->phase = 1;
	FLOE_INFO("source '%s': bootstrap of %s at snapshot %lld done; the second source goes on "
		  "from its recorded offsets",
		  h->base.name, h->ident, (long long)h->snap);
	return FLOE_OK;
}

static int hy_seek(stream_source *base, const stream_offsets *pos, floe_error *err)
{
	hybrid_source *h = (hybrid_source *)base;
	int rc;
	bool given = pos && stream_offsets_has(pos, "hybrid-phase");
	if (given && stream_offsets_get(pos, "hybrid-phase", 0) == 1) {
		h->phase = 1;
		h->snap = stream_offsets_get(pos, "hybrid-snapshot", -1);
		/* the second source's splits only */
		if ((rc = set_want(h, pos, err)))
			return rc;
		return h->then->ops->seek(h->then, &h->want, err);
	}
	h->phase = 0;
	if (given) {
		h->snap = stream_offsets_get(pos, "hybrid-snapshot", -1);
	} else {
		if ((rc = floe_table_refresh(h->t, err)))
			return rc;
		const floe_snapshot *head = floe_metadata_current_snapshot(floe_table_metadata(h->t));
		h->snap = head ? head->snapshot_id : -1;
	}
	if (h->snap < 0) /* nothing to bootstrap from */
		return switch_over(h, err);
	if ((rc = load_then_start(h, err)) || (rc = open_boot(h, err)))
		return rc;
	return h->boot->ops->seek(h->boot, given ? pos : NULL, err);
}

static int hy_next(stream_source *base, stream_block *b, bool *got, bool *eof, floe_error *err)
{
	hybrid_source *h = (hybrid_source *)base;
	int rc;
	if (h->phase == 0) {
		if ((rc = h->boot->ops->next(h->boot, b, got, eof, err)))
			return rc;
		if (*got || !*eof)
			return FLOE_OK;
		if ((rc = switch_over(h, err)))
			return rc;
	}
	if ((rc = h->then->ops->next(h->then, b, got, eof, err)) || !*got)
		return rc;
	/* a Kafka partition assigned again (a rebalance: no revocation checkpoint
	 * here) goes on after what was handed out, which the next checkpoint holds */
	size_t kp = strlen(STREAM_KAFKA_SPLIT_PREFIX);
	if (b->split_name && !strncmp(b->split_name, STREAM_KAFKA_SPLIT_PREFIX, kp) &&
	    stream_offsets_set(&h->want, b->split_name, b->end)) {
		stream_block_reset(b);
		*got = false;
		return floe_error_oom(err);
	}
	return FLOE_OK;
}

static int hy_position(stream_source *base, stream_offsets *out, floe_error *err)
{
	hybrid_source *h = (hybrid_source *)base;
	int rc;
	if (h->phase == 0) {
		rc = h->boot->ops->position(h->boot, out, err);
	} else {
		/* where the second source started, for splits it has no position of yet */
		stream_offsets own;
		stream_offsets_init(&own);
		rc = h->then->ops->position(h->then, &own, err);
		for (size_t i = 0; i < h->want.n && !rc; i++)
			if (!stream_offsets_has(&own, h->want.items[i].split) &&
			    stream_offsets_set_tok(out, h->want.items[i].split, h->want.items[i].pos,
						   h->want.items[i].tok))
				rc = floe_error_oom(err);
		for (size_t i = 0; i < own.n && !rc; i++)
			if (stream_offsets_set_tok(out, own.items[i].split, own.items[i].pos,
						   own.items[i].tok))
				rc = floe_error_oom(err);
		stream_offsets_reset(&own);
	}
	if (rc)
		return rc;
	if (stream_offsets_set(out, "@hybrid-phase", h->phase) ||
	    stream_offsets_set(out, "@hybrid-snapshot", h->snap))
		return floe_error_oom(err);
	return FLOE_OK;
}

static void hy_wait(stream_source *base, int64_t ms)
{
	hybrid_source *h = (hybrid_source *)base;
	stream_source *s = h->phase == 0 ? h->boot : h->then;
	s->ops->wait(s, ms);
}

static void hy_ack(stream_source *base, const stream_offsets *committed)
{
	hybrid_source *h = (hybrid_source *)base;
	if (h->phase == 1 && h->then->ops->ack)
		h->then->ops->ack(h->then, committed);
}

static void hy_free(stream_source *base)
{
	hybrid_source *h = (hybrid_source *)base;
	if (!h)
		return;
	if (h->boot)
		h->boot->ops->free(h->boot);
	if (h->then)
		h->then->ops->free(h->then);
	stream_offsets_reset(&h->then_start);
	stream_offsets_reset(&h->want);
	floe_table_free(h->t);
	floe_free(h->ident);
	floe_free(h->base.name);
	floe_free(h);
}

static const stream_source_ops hy_ops = {
	hy_seek, hy_next, hy_position, hy_wait, hy_ack, hy_free,
};

int stream_source_hybrid_new(stream_source **out, const char *name, const stream_iceberg_opts *boot,
			     stream_source *then, floe_error *err)
{
	hybrid_source *h;
	int rc;
	*out = NULL;
	const char *dot = boot->table ? strrchr(boot->table, '.') : NULL;
	if (!dot || dot == boot->table || !dot[1] || (size_t)(dot - boot->table) >= 512) {
		then->ops->free(then);
		return floe_error_set(err, FLOE_EINVAL, "source '%s': source-table is not namespace.table",
				      name);
	}
	h = floe_calloc(1, sizeof(*h));
	if (!h || !(h->base.name = floe_strdup(name)) || !(h->ident = floe_strdup(boot->table))) {
		if (h)
			h->then = then;
		else
			then->ops->free(then);
		hy_free(h ? &h->base : NULL);
		return floe_error_oom(err);
	}
	h->then = then;
	h->base.ops = &hy_ops;
	h->base.format = then->format;
	h->base.replayable = then->replayable;
	h->io = *boot;
	h->io.table = h->ident;
	h->io.mode = STREAM_ICEBERG_APPEND;
	h->io.start = 0; /* the table scan */
	h->io.streaming = false;
	stream_offsets_init(&h->then_start);
	stream_offsets_init(&h->want);
	char ns[512];
	memcpy(ns, boot->table, (size_t)(dot - boot->table));
	ns[dot - boot->table] = 0;
	if ((rc = floe_table_load(&h->t, boot->cat, ns, dot + 1, err))) {
		hy_free(&h->base);
		return floe_error_prefix(err, rc, "source '%s': ", name);
	}
	*out = &h->base;
	return FLOE_OK;
}
