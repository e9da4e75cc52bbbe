/*
 * stream_source_kafka.c — the Kafka source on librdkafka's high-level
 * consumer (see stream_kafka.h for the model).
 *
 * DESIGN: the coordinator thread is the consumer's only poller. next()
 * takes a batch of messages from the consumer queue (which also serves
 * the rebalance and error callbacks), adds each record to the block being
 * built for its partition, and hands out finished blocks one at a time.
 * Records are not copied: a block holds librdkafka's messages (their
 * values and keys point into librdkafka's fetch buffers) and the writer
 * that decoded it destroys them (stream_block_reset); only headers, when a
 * table reads them, are copied into the block's data. The blocks in
 * flight are bounded by count (the pipeline's units, the ready queue, one
 * building block a partition) and by block-bytes each, as copies were;
 * librdkafka's prefetch (queued.max.messages.kbytes) comes on top; a partition's position moves only when one of its blocks is handed
 * out, so position() always describes exactly the records the writers got.
 * Offsets a block would repeat (below the partition's position) are
 * dropped, whatever the consumer delivers.
 *
 * Rebalances run inside next(): on assignment the pipeline says where each
 * partition resumes (hooks.assigned), the source seeks there — resolving
 * scan.startup.mode to a concrete offset for partitions never committed,
 * so that the first commit records it — and commits those offsets to the
 * group (so lag tools agree with the table at once); before a revocation
 * the pipeline commits a checkpoint (hooks.revoking), then the revoked
 * partitions' unhanded records are dropped.
 */
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/stream_config.h"
#include "stream/stream_kafka.h"
#include "util/log.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define KAFKA_BATCH 1024
#define KAFKA_BLOCK_MSGS 10000
#define KAFKA_READY_CAP 64
#define KAFKA_OVERSIZE_KEEP 4096 /* bytes of an oversize value kept for its dead letter */
#define KAFKA_QUERY_MS 10000

typedef struct kpart {
	char *split; /* "kafka:<topic>:<partition>" */
	char *topic;
	int32_t partition;
	bool assigned;
	int64_t pos;   /* next offset after the last block handed out; -1: unknown */
	int64_t start; /* where the assignment started it (for a rewind) */
	int64_t end;   /* bounded: the end offset at assignment; -1 none */
	int64_t fed;   /* the next offset the consumer should deliver (repeats are dropped) */
	_Atomic int64_t apos; /* pos for the metrics thread */
	_Atomic int64_t acommitted; /* the offset a table commit last recorded; -1 none */
	/* the block being built: headers in data, the messages held */
	uint8_t *data;
	size_t len, cap;
	stream_msg *msgs;
	size_t n, mcap;
	void **held;
	size_t n_held, cap_held;
	size_t bytes; /* values and keys held */
	rd_kafka_topic_t *rkt; /* our own reference to the topic's handle (find_part by pointer) */
	struct kafka_source *src;
	floe_metric *m_lag, *m_offset, *m_committed;
} kpart;

typedef struct kafka_source {
	stream_source base;
	stream_kafka_opts o;
	char *pattern; /* "^..." */
	rd_kafka_t *rk;
	rd_kafka_queue_t *q;
	floe_mutex mu; /* parts[*].assigned/pos against ack() and the metrics */
	kpart **parts;
	size_t n_parts, cap_parts;
	kpart *last; /* the part of the previous message (runs) */
	stream_block ready[KAFKA_READY_CAP];
	size_t ready_head, ready_len;
	bool closing;
	bool assigned_once;
	int hook_rc; /* an error inside a callback, returned by next() */
	floe_error hook_err;
	_Atomic int64_t n_assigned, rebalances;
	stream_offsets acked; /* the offsets committed to the group last (async) */
	bool acked_dirty;
	floe_metrics *metrics;
	const char *pipeline;
	char **missing_logged;
	size_t n_missing_logged;
	rd_kafka_message_t *batch[KAFKA_BATCH];
} kafka_source;

/* ---- helpers ----------------------------------------------------------------------- */

bool stream_kafka_split_parse(const char *split, char *t, size_t cap, int32_t *partition)
{
	size_t pl = strlen(STREAM_KAFKA_SPLIT_PREFIX);
	if (strncmp(split, STREAM_KAFKA_SPLIT_PREFIX, pl))
		return false;
	const char *a = split + pl, *c = strrchr(a, ':');
	int64_t v;
	if (!c || c == a || (size_t)(c - a) >= cap || !floe_parse_i64(c + 1, strlen(c + 1), &v) ||
	    v < 0 || v > INT32_MAX)
		return false;
	memcpy(t, a, (size_t)(c - a));
	t[c - a] = 0;
	*partition = (int32_t)v;
	return true;
}

int stream_kafka_parse_specific(const char *s, int32_t *part, int64_t *off, size_t cap, size_t *n,
				floe_error *err)
{
	size_t k = 0;
	const char *p = s;
	if (n)
		*n = 0;
	while (*p) {
		const char *e = strchr(p, ';');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char item[128];
		int64_t pv, ov;
		if (len == 0) {
			p += e ? 1 : 0;
			if (!e)
				break;
			continue;
		}
		if (len >= sizeof(item))
			return floe_error_set(err, FLOE_EINVAL,
					      "scan.startup.specific-offsets: item '%.40s...' is too long",
					      p);
		memcpy(item, p, len);
		item[len] = 0;
		const char *comma = strchr(item, ',');
		if (strncmp(item, "partition:", 10) || !comma || strncmp(comma + 1, "offset:", 7) ||
		    !floe_parse_i64(item + 10, (size_t)(comma - item - 10), &pv) ||
		    !floe_parse_i64(comma + 8, strlen(comma + 8), &ov) || pv < 0 || pv > INT32_MAX ||
		    ov < 0)
			return floe_error_set(err, FLOE_EINVAL,
					      "scan.startup.specific-offsets: '%s' is not "
					      "partition:<n>,offset:<n>",
					      item);
		if (part && k < cap) {
			part[k] = (int32_t)pv;
			off[k] = ov;
		}
		k++;
		if (!e)
			break;
		p = e + 1;
	}
	if (n)
		*n = k;
	return FLOE_OK;
}

static kpart *find_part(kafka_source *s, const char *topic, int32_t partition)
{
	kpart *l = s->last;
	if (l && l->partition == partition && l->topic == topic)
		return l;
	if (l && l->partition == partition && !strcmp(l->topic, topic))
		return l;
	for (size_t i = 0; i < s->n_parts; i++) {
		kpart *k = s->parts[i];
		if (k->partition == partition && !strcmp(k->topic, topic))
			return s->last = k;
	}
	return NULL;
}

/* The part of a message: by its topic handle first (a pointer compare; the
 * part holds a reference, so an equal pointer is the same live topic),
 * else by name, then taking that reference. */
static kpart *find_part_msg(kafka_source *s, const rd_kafka_message_t *m)
{
	kpart *l = s->last;
	if (l && l->rkt == m->rkt && l->partition == m->partition)
		return l;
	for (size_t i = 0; i < s->n_parts; i++) {
		kpart *k = s->parts[i];
		if (k->rkt == m->rkt && k->partition == m->partition)
			return s->last = k;
	}
	kpart *k = find_part(s, rd_kafka_topic_name(m->rkt), m->partition);
	if (k && !k->rkt) {
		rd_kafka_topic_t *t = rd_kafka_topic_new(s->rk, k->topic, NULL);
		if (t == m->rkt)
			k->rkt = t;
		else if (t)
			rd_kafka_topic_destroy(t); /* another handle: stay with names */
	}
	return k;
}

static void release_msgs(void **held, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rd_kafka_message_destroy(held[i]);
}

/* The part for topic/partition, created on first sight (never freed before
 * the source: metrics point at it). */
static kpart *get_part(kafka_source *s, const char *topic, int32_t partition)
{
	kpart *k = find_part(s, topic, partition);
	if (k)
		return k;
	if (FLOE_ARRAY_RESERVE(s->parts, s->cap_parts, s->n_parts + 1))
		return NULL;
	if (!(k = floe_calloc(1, sizeof(*k))))
		return NULL;
	k->topic = floe_strdup(topic);
	size_t n = strlen(topic) + 32;
	k->split = floe_malloc(n);
	if (!k->topic || !k->split) {
		floe_free(k->topic);
		floe_free(k->split);
		floe_free(k);
		return NULL;
	}
	snprintf(k->split, n, STREAM_KAFKA_SPLIT_PREFIX "%s:%d", topic, (int)partition);
	k->partition = partition;
	k->pos = k->start = k->end = k->fed = -1;
	atomic_store(&k->apos, -1);
	atomic_store(&k->acommitted, -1);
	k->src = s;
	s->parts[s->n_parts++] = k;
	return k;
}

static void part_drop_building(kpart *k)
{
	floe_free(k->data);
	floe_free(k->msgs);
	release_msgs(k->held, k->n_held);
	floe_free(k->held);
	k->data = NULL;
	k->msgs = NULL;
	k->held = NULL;
	k->len = k->cap = k->n = k->mcap = k->n_held = k->cap_held = k->bytes = 0;
}

static void set_pos(kafka_source *s, kpart *k, int64_t pos)
{
	floe_mutex_lock(&s->mu);
	k->pos = pos;
	floe_mutex_unlock(&s->mu);
	atomic_store(&k->apos, pos);
}

static void fail_hook(kafka_source *s, int rc, const floe_error *e, const char *what)
{
	if (s->hook_rc)
		return;
	s->hook_rc = rc ? rc : FLOE_EIO;
	if (e)
		s->hook_err = *e;
	else
		floe_error_set(&s->hook_err, s->hook_rc, "%s", what);
}

/* ---- building and handing out blocks ----------------------------------------------------- */

/* Move a part's building block to the ready queue (false: the queue is full). */
static bool finish_block(kafka_source *s, kpart *k)
{
	if (!k->n)
		return true;
	if (s->ready_len >= KAFKA_READY_CAP)
		return false;
	stream_block *b = &s->ready[(s->ready_head + s->ready_len) % KAFKA_READY_CAP];
	memset(b, 0, sizeof(*b));
	b->data = k->data;
	b->len = k->len;
	b->msgs = k->msgs;
	b->n_msgs = k->n;
	b->split_name = k->split;
	b->topic = k->topic;
	b->partition = k->partition;
	b->start = k->msgs[0].offset;
	b->end = k->msgs[k->n - 1].offset + 1;
	b->held = k->held;
	b->n_held = k->n_held;
	b->held_bytes = k->bytes;
	b->release = release_msgs;
	for (size_t i = 0; i < s->n_parts; i++)
		if (s->parts[i] == k)
			b->split = (int32_t)i;
	k->data = NULL;
	k->msgs = NULL;
	k->held = NULL;
	k->len = k->cap = k->n = k->mcap = k->n_held = k->cap_held = k->bytes = 0;
	s->ready_len++;
	return true;
}

static int put_bytes(kpart *k, const void *p, size_t n, uint32_t *off)
{
	if (n > UINT32_MAX || k->len > UINT32_MAX - n)
		return FLOE_ENOMEM;
	if (k->len + n > k->cap) {
		size_t cap = k->cap ? k->cap : 65536;
		while (cap < k->len + n)
			cap *= 2;
		uint8_t *d = floe_realloc(k->data, cap);
		if (!d)
			return FLOE_ENOMEM;
		k->data = d;
		k->cap = cap;
	}
	*off = (uint32_t)k->len;
	if (n)
		memcpy(k->data + k->len, p, n);
	k->len += n;
	return FLOE_OK;
}

static int put_u32(kpart *k, uint32_t v)
{
	uint32_t off;
	return put_bytes(k, &v, 4, &off);
}

/* Add one record to its part's block, which takes m over. */
static int append_msg(kafka_source *s, kpart *k, rd_kafka_message_t *m, floe_error *err)
{
	stream_msg *x;
	int rc = FLOE_OK;
	if (FLOE_ARRAY_RESERVE(k->msgs, k->mcap, k->n + 1) ||
	    FLOE_ARRAY_RESERVE(k->held, k->cap_held, k->n_held + 1))
		return floe_error_oom(err);
	x = &k->msgs[k->n];
	memset(x, 0, sizeof(*x));
	x->offset = m->offset;
	rd_kafka_timestamp_type_t tt;
	x->timestamp_ms = rd_kafka_message_timestamp(m, &tt);
	x->ts_type = tt == RD_KAFKA_TIMESTAMP_CREATE_TIME	 ? 1
		     : tt == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? 2
								 : 0;
	size_t vlen = m->payload ? m->len : 0;
	x->size = vlen > UINT32_MAX ? UINT32_MAX : (uint32_t)vlen;
	if (!m->payload)
		x->flags |= STREAM_MSG_NULL_VALUE;
	if (vlen > s->o.max_record_bytes) {
		x->flags |= STREAM_MSG_OVERSIZE;
		vlen = vlen < KAFKA_OVERSIZE_KEEP ? vlen : KAFKA_OVERSIZE_KEEP;
	}
	x->val_p = m->payload ? m->payload : (const uint8_t *)"";
	x->val_len = (uint32_t)vlen;
	if (!m->key)
		x->flags |= STREAM_MSG_NULL_KEY;
	size_t klen = m->key ? m->key_len : 0;
	if (klen > s->o.max_record_bytes)
		klen = KAFKA_OVERSIZE_KEEP;
	x->key_p = m->key ? m->key : (const uint8_t *)"";
	x->key_len = (uint32_t)klen;
	rd_kafka_headers_t *hdrs = NULL;
	if (!rc && s->o.want_headers && rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR &&
	    hdrs) {
		size_t nh = rd_kafka_header_cnt(hdrs);
		x->hdr_off = (uint32_t)k->len;
		for (size_t i = 0; i < nh && !rc; i++) {
			const char *name;
			const void *val;
			size_t vl;
			uint32_t o2;
			if (rd_kafka_header_get_all(hdrs, i, &name, &val, &vl))
				break;
			size_t nl = strlen(name);
			rc = put_u32(k, (uint32_t)nl);
			rc = rc ? rc : put_bytes(k, name, nl, &o2);
			rc = rc ? rc : put_u32(k, val ? (uint32_t)vl : UINT32_MAX);
			rc = rc ? rc : put_bytes(k, val, val ? vl : 0, &o2);
			x->n_hdrs++;
		}
		x->hdr_len = (uint32_t)(k->len - x->hdr_off);
	}
	if (rc)
		return floe_error_oomf(err, "kafka: record at offset %lld of %s: out of memory",
				       (long long)m->offset, k->split);
	k->n++;
	k->held[k->n_held++] = m;
	k->bytes += vlen + klen;
	return FLOE_OK;
}

static bool is_auth_error(rd_kafka_resp_err_t e)
{
	return e == RD_KAFKA_RESP_ERR__AUTHENTICATION ||
	       e == RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED ||
	       e == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
	       e == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED ||
	       e == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED ||
	       e == RD_KAFKA_RESP_ERR__SSL;
}

static void note_missing_topic(kafka_source *s, const char *topic, const char *why)
{
	for (size_t i = 0; i < s->n_missing_logged; i++)
		if (!strcmp(s->missing_logged[i], topic))
			return;
	char **n = floe_realloc(s->missing_logged, (s->n_missing_logged + 1) * sizeof(char *));
	if (n) {
		s->missing_logged = n;
		if ((n[s->n_missing_logged] = floe_strdup(topic)))
			s->n_missing_logged++;
	}
	floe_log(FLOE_LOG_ERROR, "source '%s': kafka topic '%s' is not there (%s): its partitions are dropped "
		   "from the assignment; the source goes on with the others",
		   s->base.name, topic, why);
}

/* One message from the consumer queue: a record, or an event. *kept: a
 * block took m over (else the caller destroys it). */
static int take_msg(kafka_source *s, rd_kafka_message_t *m, bool *kept, floe_error *err)
{
	*kept = false;
	if (m->err) {
		const char *t = m->rkt ? rd_kafka_topic_name(m->rkt) : "";
		switch (m->err) {
		case RD_KAFKA_RESP_ERR__PARTITION_EOF:
			return FLOE_OK;
		case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
		case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
		case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
			note_missing_topic(s, t, rd_kafka_message_errstr(m));
			return FLOE_OK;
		case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
		case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
			FLOE_WARN("source '%s': kafka %s [%d]: %s: the records before the earliest "
				  "offset the broker keeps were deleted (retention) before floe read "
				  "them",
				  s->base.name, t, (int)m->partition, rd_kafka_message_errstr(m));
			return FLOE_OK;
		default:
			break;
		}
		if (is_auth_error(m->err) || m->err == RD_KAFKA_RESP_ERR__FATAL)
			return floe_error_set(err, FLOE_EIO, "kafka: %s%s%s", t, *t ? ": " : "",
					      rd_kafka_message_errstr(m));
		FLOE_WARN("source '%s': kafka: %s%s%s (retrying)", s->base.name, t, *t ? ": " : "",
			  rd_kafka_message_errstr(m));
		return FLOE_OK;
	}
	kpart *k = find_part_msg(s, m);
	if (!k || !k->assigned)
		return FLOE_OK; /* fetched before a revocation */
	if (k->fed >= 0 && m->offset < k->fed)
		return FLOE_OK; /* read already: never twice */
	int rc = append_msg(s, k, m, err);
	if (rc)
		return rc;
	*kept = true;
	k->fed = m->offset + 1;
	if (k->len + k->bytes >= s->o.block_bytes || k->n >= KAFKA_BLOCK_MSGS)
		(void)finish_block(s, k); /* a full ready queue: it grows on, bounded by size */
	return FLOE_OK;
}

/* Consume what the consumer has (waiting up to ms) into blocks. */
static int pump(kafka_source *s, int ms, floe_error *err)
{
	ssize_t n = rd_kafka_consume_batch_queue(s->q, ms, s->batch, KAFKA_BATCH);
	int rc = FLOE_OK;
	if (n < 0) {
		rd_kafka_resp_err_t e = rd_kafka_last_error();
		return floe_error_set(err, FLOE_EIO, "kafka: consume: %s", rd_kafka_err2str(e));
	}
	for (ssize_t i = 0; i < n; i++) {
		bool kept = false;
		if (!rc)
			rc = take_msg(s, s->batch[i], &kept, err);
		if (!kept)
			rd_kafka_message_destroy(s->batch[i]);
	}
	if (rc)
		return rc;
	if (s->hook_rc) {
		if (err)
			*err = s->hook_err;
		return s->hook_rc;
	}
	if (n < KAFKA_BATCH) {
		/* the consumer has nothing more now: hand out what there is */
		for (size_t i = 0; i < s->n_parts; i++)
			if (s->parts[i]->n && s->ready_len < KAFKA_READY_CAP)
				(void)finish_block(s, s->parts[i]);
	}
	return FLOE_OK;
}

/* ---- metrics ---------------------------------------------------------------------------- */

static int64_t m_assigned(void *p)
{
	return atomic_load(&((kafka_source *)p)->n_assigned);
}

static int64_t m_rebalances(void *p)
{
	return atomic_load(&((kafka_source *)p)->rebalances);
}

static int64_t part_lag(kpart *k)
{
	int64_t lo, hi, pos = atomic_load(&k->apos);
	if (pos < 0)
		return 0;
	if (rd_kafka_get_watermark_offsets(k->src->rk, k->topic, k->partition, &lo, &hi) || hi < 0)
		return 0;
	return hi > pos ? hi - pos : 0;
}

static int64_t m_lag(void *p)
{
	return part_lag(p);
}

static int64_t m_offset(void *p)
{
	return atomic_load(&((kpart *)p)->apos);
}

static int64_t m_committed(void *p)
{
	return atomic_load(&((kpart *)p)->acommitted);
}

static int64_t m_lag_total(void *p)
{
	kafka_source *s = p;
	int64_t sum = 0;
	floe_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->n_parts; i++)
		sum += part_lag(s->parts[i]);
	floe_mutex_unlock(&s->mu);
	return sum;
}

/* Per-partition series (lag, position, committed offset), registered when
 * a partition is first assigned; the console shows them per topic-partition. */
static void part_metrics(kafka_source *s)
{
	if (!s->metrics)
		return;
	for (size_t i = 0; i < s->n_parts; i++) {
		kpart *k = s->parts[i];
		if (k->m_lag)
			continue;
		char part[16];
		snprintf(part, sizeof(part), "%d", (int)k->partition);
		const char *l[] = {"pipeline", s->pipeline, "source", s->base.name,
				   "topic", k->topic, "partition", part};
		if (floe_metrics_add_fn(&k->m_lag, s->metrics, "floe_kafka_partition_records_lag",
					"records between the position and the end of the partition",
					l, 4, m_lag, k))
			k->m_lag = NULL;
		if (k->m_lag &&
		    floe_metrics_add_fn(&k->m_offset, s->metrics, "floe_kafka_partition_offset",
					"the next offset this process reads from the partition (-1: "
					"not assigned to it)",
					l, 4, m_offset, k))
			k->m_offset = NULL;
		if (k->m_lag &&
		    floe_metrics_add_fn(&k->m_committed, s->metrics,
					"floe_kafka_partition_committed_offset",
					"the partition's offset in this process's latest table commit "
					"(the next offset to read; -1: none yet)",
					l, 4, m_committed, k))
			k->m_committed = NULL;
	}
}

/* ---- rebalances ---------------------------------------------------------------------------- */

/* Where a partition no table committed starts (a concrete offset). */
static int64_t startup_offset(kafka_source *s, const char *topic, int32_t part, int64_t committed_grp)
{
	int64_t lo = -1, hi = -1;
	rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(s->rk, topic, part, &lo, &hi,
								  KAFKA_QUERY_MS);
	if (e) {
		FLOE_WARN("source '%s': kafka %s [%d]: watermarks: %s", s->base.name, topic, (int)part,
			  rd_kafka_err2str(e));
		return RD_KAFKA_OFFSET_BEGINNING;
	}
	int mode = s->o.startup_mode;
	if (mode == STREAM_KAFKA_SPECIFIC) {
		int32_t ps[256];
		int64_t os[256];
		size_t n = 0;
		if (!stream_kafka_parse_specific(s->o.specific_offsets, ps, os, 256, &n, NULL))
			for (size_t i = 0; i < n && i < 256; i++)
				if (ps[i] == part)
					return os[i] < lo ? lo : os[i] > hi ? hi : os[i];
		mode = STREAM_KAFKA_GROUP_OFFSETS;
	}
	if (mode == STREAM_KAFKA_GROUP_OFFSETS) {
		if (committed_grp >= 0)
			return committed_grp < lo ? lo : committed_grp > hi ? hi : committed_grp;
		const char *reset = floe_strmap_get(s->o.props, "properties.auto.offset.reset");
		bool latest = reset && (!strcmp(reset, "latest") || !strcmp(reset, "largest") ||
					!strcmp(reset, "end"));
		return latest ? hi : lo;
	}
	if (mode == STREAM_KAFKA_LATEST)
		return hi;
	if (mode == STREAM_KAFKA_TIMESTAMP) {
		rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
		rd_kafka_topic_partition_list_add(l, topic, part)->offset = s->o.startup_ts_ms;
		int64_t off = hi;
		if (!rd_kafka_offsets_for_times(s->rk, l, KAFKA_QUERY_MS) && !l->elems[0].err &&
		    l->elems[0].offset >= 0)
			off = l->elems[0].offset;
		rd_kafka_topic_partition_list_destroy(l);
		return off;
	}
	return lo; /* earliest */
}

static void on_assign(kafka_source *s, rd_kafka_topic_partition_list_t *l)
{
	size_t n = (size_t)l->cnt;
	const char **splits = floe_calloc(n ? n : 1, sizeof(char *));
	int64_t *pos = floe_calloc(n ? n : 1, sizeof(int64_t));
	kpart **ks = floe_calloc(n ? n : 1, sizeof(kpart *));
	floe_error e;
	int rc = FLOE_OK;
	floe_error_clear(&e);
	if (!splits || !pos || !ks) {
		rc = floe_error_oom(&e);
		goto done;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		if (!(ks[i] = get_part(s, l->elems[i].topic, l->elems[i].partition)))
			rc = floe_error_oom(&e);
		else
			splits[i] = ks[i]->split;
	}
	if (!rc && s->o.hooks.assigned)
		rc = s->o.hooks.assigned(s->o.hooks.payload, splits, n, pos, &e);
	if (rc)
		goto done;
	/* the group's own offsets, for group-offsets partitions no table has */
	rd_kafka_topic_partition_list_t *grp = NULL;
	bool need_grp = false;
	for (size_t i = 0; i < n; i++)
		need_grp = need_grp || pos[i] < 0;
	if (need_grp && (s->o.startup_mode == STREAM_KAFKA_GROUP_OFFSETS ||
			 s->o.startup_mode == STREAM_KAFKA_SPECIFIC)) {
		grp = rd_kafka_topic_partition_list_copy(l);
		if (rd_kafka_committed(s->rk, grp, KAFKA_QUERY_MS)) {
			rd_kafka_topic_partition_list_destroy(grp);
			grp = NULL;
		}
	}
	rd_kafka_topic_partition_list_t *commit = rd_kafka_topic_partition_list_new((int)n);
	for (size_t i = 0; i < n; i++) {
		kpart *k = ks[i];
		int64_t off = pos[i];
		if (off < 0) {
			int64_t g = grp && !grp->elems[i].err ? grp->elems[i].offset : -1;
			off = startup_offset(s, k->topic, k->partition, g);
			FLOE_INFO("source '%s': %s starts at %lld (no table committed it; "
				  "scan.startup.mode)",
				  s->base.name, k->split, (long long)off);
		} else {
			FLOE_INFO("source '%s': %s resumes at %lld (committed in the table)",
				  s->base.name, k->split, (long long)off);
			atomic_store(&k->acommitted, off);
			if (s->o.commit_offsets)
				rd_kafka_topic_partition_list_add(commit, k->topic, k->partition)->offset =
					off;
		}
		l->elems[i].offset = off;
		part_drop_building(k);
		k->start = off;
		k->fed = off;
		k->end = -1;
		if (s->o.bounded_mode == STREAM_KAFKA_BOUNDED_LATEST) {
			int64_t lo, hi;
			if (!rd_kafka_query_watermark_offsets(s->rk, k->topic, k->partition, &lo, &hi,
							      KAFKA_QUERY_MS))
				k->end = hi;
		}
		floe_mutex_lock(&s->mu);
		k->assigned = true;
		k->pos = off >= 0 ? off : -1;
		floe_mutex_unlock(&s->mu);
		atomic_store(&k->apos, k->pos);
	}
	part_metrics(s);
	if (grp)
		rd_kafka_topic_partition_list_destroy(grp);
	if (commit->cnt)
		(void)rd_kafka_commit(s->rk, commit, 1);
	rd_kafka_topic_partition_list_destroy(commit);
	atomic_fetch_add(&s->n_assigned, (int64_t)n);
	s->assigned_once = true;
done:
	if (rc)
		fail_hook(s, rc, &e, "assignment");
	floe_free(splits);
	floe_free(pos);
	floe_free(ks);
}

static void drop_ready_of(kafka_source *s, const kpart *k)
{
	size_t kept = 0;
	stream_block tmp[KAFKA_READY_CAP];
	for (size_t i = 0; i < s->ready_len; i++) {
		stream_block *b = &s->ready[(s->ready_head + i) % KAFKA_READY_CAP];
		if (!k || b->split_name == k->split)
			stream_block_reset(b);
		else
			tmp[kept++] = *b;
	}
	for (size_t i = 0; i < kept; i++)
		s->ready[i] = tmp[i];
	s->ready_head = 0;
	s->ready_len = kept;
}

static void on_revoke(kafka_source *s, rd_kafka_topic_partition_list_t *l, bool lost)
{
	size_t n = (size_t)l->cnt;
	if (!s->closing && !s->hook_rc && s->o.hooks.revoking && n) {
		const char **splits = floe_calloc(n, sizeof(char *));
		floe_error e;
		floe_error_clear(&e);
		if (!splits) {
			fail_hook(s, FLOE_ENOMEM, NULL, "out of memory");
		} else {
			size_t k = 0;
			for (size_t i = 0; i < n; i++) {
				kpart *p = find_part(s, l->elems[i].topic, l->elems[i].partition);
				if (p)
					splits[k++] = p->split;
			}
			if (lost)
				FLOE_WARN("source '%s': the consumer group took %zu partitions from this "
					  "process (it was too slow to poll, or cut off); what it read "
					  "commits only if no other process committed them since",
					  s->base.name, n);
			int rc = s->o.hooks.revoking(s->o.hooks.payload, splits, k, &e);
			if (rc)
				fail_hook(s, rc, &e, "revocation");
			floe_free(splits);
		}
	}
	for (size_t i = 0; i < n; i++) {
		kpart *k = find_part(s, l->elems[i].topic, l->elems[i].partition);
		if (!k)
			continue;
		part_drop_building(k);
		drop_ready_of(s, k);
		floe_mutex_lock(&s->mu);
		if (k->assigned)
			atomic_fetch_sub(&s->n_assigned, 1);
		k->assigned = false;
		k->pos = k->fed = -1;
		floe_mutex_unlock(&s->mu);
		atomic_store(&k->apos, -1);
	}
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t e,
			 rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	kafka_source *s = opaque;
	bool coop = !strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE");
	atomic_fetch_add(&s->rebalances, 1);
	if (e == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		on_assign(s, parts);
		rd_kafka_error_t *er = NULL;
		if (coop)
			er = rd_kafka_incremental_assign(rk, parts);
		else if (rd_kafka_assign(rk, parts))
			FLOE_WARN("source '%s': kafka: assign failed", s->base.name);
		if (er) {
			FLOE_WARN("source '%s': kafka: assign: %s", s->base.name,
				  rd_kafka_error_string(er));
			rd_kafka_error_destroy(er);
		}
	} else if (e == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
		on_revoke(s, parts, rd_kafka_assignment_lost(rk));
		if (coop) {
			rd_kafka_error_t *er = rd_kafka_incremental_unassign(rk, parts);
			if (er)
				rd_kafka_error_destroy(er);
		} else {
			(void)rd_kafka_assign(rk, NULL);
		}
	} else {
		FLOE_WARN("source '%s': kafka rebalance: %s", s->base.name, rd_kafka_err2str(e));
		(void)rd_kafka_assign(rk, NULL);
	}
}

static void error_cb(rd_kafka_t *rk, int e, const char *reason, void *opaque)
{
	kafka_source *s = opaque;
	(void)rk;
	if (e == RD_KAFKA_RESP_ERR__FATAL) {
		char why[512];
		rd_kafka_resp_err_t fe = rd_kafka_fatal_error(rk, why, sizeof(why));
		floe_error er;
		floe_error_set(&er, FLOE_EIO, "kafka: fatal: %s: %s", rd_kafka_err2str(fe), why);
		fail_hook(s, FLOE_EIO, &er, NULL);
		return;
	}
	if (is_auth_error((rd_kafka_resp_err_t)e)) {
		floe_error er;
		floe_error_set(&er, FLOE_EIO, "kafka: %s: %s (check properties.security.protocol, "
			       "properties.sasl.*)",
			       rd_kafka_err2str((rd_kafka_resp_err_t)e), reason);
		fail_hook(s, FLOE_EIO, &er, NULL);
		return;
	}
	if (e == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
		FLOE_WARN("source '%s': kafka: every broker is down (%s); retrying", s->base.name,
			  reason);
	else
		FLOE_DEBUG("source '%s': kafka: %s: %s", s->base.name,
			   rd_kafka_err2str((rd_kafka_resp_err_t)e), reason);
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	if (level <= 3)
		FLOE_WARN("kafka %s: %s", fac, buf);
	else if (level <= 5)
		FLOE_INFO("kafka %s: %s", fac, buf);
	else
		FLOE_DEBUG("kafka %s: %s", fac, buf);
}

static void commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t e, rd_kafka_topic_partition_list_t *l,
		      void *opaque)
{
	kafka_source *s = opaque;
	(void)rk;
	(void)l;
	if (e && e != RD_KAFKA_RESP_ERR__NO_OFFSET)
		FLOE_INFO("source '%s': kafka: committing offsets to the group: %s (the table has "
			  "them; only lag tools see the older ones)",
			  s->base.name, rd_kafka_err2str(e));
}

/* ---- the vtable ------------------------------------------------------------------------ */

/* A rewind (a commit was refused): every assigned partition back to where
 * the tables say (pos), else where its assignment started. */
static int kafka_seek(stream_source *base, const stream_offsets *pos, floe_error *err)
{
	kafka_source *s = (kafka_source *)base;
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(4);
	drop_ready_of(s, NULL);
	for (size_t i = 0; i < s->n_parts; i++) {
		kpart *k = s->parts[i];
		part_drop_building(k);
		if (!k->assigned)
			continue;
		int64_t off = stream_offsets_get(pos, k->split, k->start);
		if (off < 0)
			continue;
		rd_kafka_topic_partition_list_add(l, k->topic, k->partition)->offset = off;
		set_pos(s, k, off);
		k->fed = off;
	}
	int rc = FLOE_OK;
	if (l->cnt) {
		rd_kafka_error_t *e = rd_kafka_seek_partitions(s->rk, l, KAFKA_QUERY_MS);
		if (e) {
			rc = floe_error_set(err, FLOE_EIO, "kafka: seek: %s", rd_kafka_error_string(e));
			rd_kafka_error_destroy(e);
		}
		for (int i = 0; !rc && i < l->cnt; i++)
			if (l->elems[i].err)
				rc = floe_error_set(err, FLOE_EIO, "kafka: seek %s [%d]: %s",
						    l->elems[i].topic, (int)l->elems[i].partition,
						    rd_kafka_err2str(l->elems[i].err));
	}
	rd_kafka_topic_partition_list_destroy(l);
	return rc;
}

static bool bounded_done(kafka_source *s)
{
	if (s->o.bounded_mode != STREAM_KAFKA_BOUNDED_LATEST || !s->assigned_once || s->ready_len)
		return false;
	for (size_t i = 0; i < s->n_parts; i++) {
		kpart *k = s->parts[i];
		if (!k->assigned)
			continue;
		if (k->n || (k->end >= 0 && k->pos < k->end))
			return false;
	}
	return true;
}

static int kafka_next(stream_source *base, stream_block *b, bool *got, bool *eof, floe_error *err)
{
	kafka_source *s = (kafka_source *)base;
	int rc;
	*got = false;
	*eof = false;
	if (s->hook_rc) {
		if (err)
			*err = s->hook_err;
		return s->hook_rc;
	}
	if (!s->ready_len && (rc = pump(s, 0, err)))
		return rc;
	while (s->ready_len) {
		stream_block *r = &s->ready[s->ready_head];
		s->ready_head = (s->ready_head + 1) % KAFKA_READY_CAP;
		s->ready_len--;
		kpart *k = (size_t)r->split < s->n_parts ? s->parts[r->split] : NULL;
		if (!k || !k->assigned || (k->pos >= 0 && r->end <= k->pos)) {
			stream_block_reset(r);
			continue;
		}
		*b = *r;
		memset(r, 0, sizeof(*r));
		set_pos(s, k, b->end);
		*got = true;
		return FLOE_OK;
	}
	*eof = bounded_done(s);
	return FLOE_OK;
}

static int kafka_position(stream_source *base, stream_offsets *out, floe_error *err)
{
	kafka_source *s = (kafka_source *)base;
	int rc = FLOE_OK;
	floe_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->n_parts && !rc; i++) {
		kpart *k = s->parts[i];
		if (k->assigned && k->pos >= 0)
			rc = stream_offsets_set(out, k->split, k->pos);
	}
	floe_mutex_unlock(&s->mu);
	return rc ? floe_error_oom(err) : FLOE_OK;
}

static void kafka_wait(stream_source *base, int64_t ms)
{
	kafka_source *s = (kafka_source *)base;
	floe_error e;
	floe_error_clear(&e);
	if (s->ready_len || s->hook_rc)
		return;
	int rc = pump(s, (int)(ms > 1000 ? 1000 : ms), &e);
	if (rc)
		fail_hook(s, rc, &e, NULL);
}

static void kafka_ack(stream_source *base, const stream_offsets *committed)
{
	kafka_source *s = (kafka_source *)base;
	if (!committed)
		return;
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
	floe_mutex_lock(&s->mu);
	for (size_t i = 0; i < committed->n; i++) {
		char topic[256];
		int32_t part;
		const stream_offset *o = &committed->items[i];
		if (!stream_kafka_split_parse(o->split, topic, sizeof(topic), &part))
			continue;
		kpart *k = NULL;
		for (size_t j = 0; j < s->n_parts && !k; j++)
			if (!strcmp(s->parts[j]->split, o->split))
				k = s->parts[j];
		if (!k || !k->assigned)
			continue; /* no longer ours: its new owner commits it */
		atomic_store(&k->acommitted, o->pos);
		if (!s->o.commit_offsets)
			continue;
		rd_kafka_topic_partition_list_add(l, topic, part)->offset = o->pos;
		if (stream_offsets_set(&s->acked, o->split, o->pos) == 0)
			s->acked_dirty = true;
	}
	floe_mutex_unlock(&s->mu);
	if (l->cnt)
		(void)rd_kafka_commit(s->rk, l, 1);
	rd_kafka_topic_partition_list_destroy(l);
}

typedef struct destroyer {
	rd_kafka_t *rk;
	atomic_bool done;
} destroyer;

static void *destroy_main(void *arg)
{
	destroyer *d = arg;
	rd_kafka_destroy(d->rk);
	atomic_store(&d->done, true);
	return NULL;
}

/*
 * rd_kafka_destroy, waited for at most 15 s: librdkafka 2.0 can hang in it
 * after a topic the consumer read was deleted (its issues #3007, #4362).
 * Everything is committed and the group left by then, so a handle that
 * does not go is left to its thread, which ends with the process.
 */
static void destroy_bounded(rd_kafka_t *rk, const char *name)
{
	destroyer *d = floe_calloc(1, sizeof(*d));
	floe_thread th = {0};
	if (!d || (d->rk = rk, floe_thread_start(&th, "floe-rdk-close", destroy_main, d))) {
		floe_free(d);
		rd_kafka_destroy(rk);
		return;
	}
	for (int i = 0; i < 1500 && !atomic_load(&d->done); i++)
		floe_sleep_ms(10);
	if (atomic_load(&d->done)) {
		floe_thread_join(&th);
		floe_free(d);
		return;
	}
	FLOE_WARN("source '%s': librdkafka did not shut down in 15 s (a deleted topic?); "
		  "leaving it (its offsets are committed)",
		  name);
	pthread_detach(th.t);
}

static void kafka_free(stream_source *base)
{
	kafka_source *s = (kafka_source *)base;
	if (!s)
		return;
	s->closing = true;
	if (s->rk) {
		/* the last offsets the tables committed reach the group before we leave */
		if (s->acked_dirty && s->o.commit_offsets) {
			rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
			for (size_t i = 0; i < s->acked.n; i++) {
				char topic[256];
				int32_t part;
				kpart *k;
				/* only partitions still ours (a revoked one's new owner commits it;
				 * a deleted topic's would keep librdkafka from shutting down) */
				if (stream_kafka_split_parse(s->acked.items[i].split, topic, sizeof(topic),
							     &part) &&
				    (k = find_part(s, topic, part)) && k->assigned)
					rd_kafka_topic_partition_list_add(l, topic, part)->offset =
						s->acked.items[i].pos;
			}
			if (l->cnt)
				(void)rd_kafka_commit(s->rk, l, 0);
			rd_kafka_topic_partition_list_destroy(l);
		}
		/* the messages the blocks hold go back before the handle */
		drop_ready_of(s, NULL);
		for (size_t i = 0; i < s->n_parts; i++) {
			part_drop_building(s->parts[i]);
			if (s->parts[i]->rkt)
				rd_kafka_topic_destroy(s->parts[i]->rkt);
			s->parts[i]->rkt = NULL;
		}
		(void)rd_kafka_consumer_close(s->rk);
		if (s->q)
			rd_kafka_queue_destroy(s->q);
		destroy_bounded(s->rk, s->base.name);
	}
	drop_ready_of(s, NULL);
	for (size_t i = 0; i < s->n_parts; i++) {
		part_drop_building(s->parts[i]);
		floe_free(s->parts[i]->split);
		floe_free(s->parts[i]->topic);
		floe_free(s->parts[i]);
	}
	floe_free(s->parts);
	for (size_t i = 0; i < s->n_missing_logged; i++)
		floe_free(s->missing_logged[i]);
	floe_free(s->missing_logged);
	stream_offsets_reset(&s->acked);
	floe_free(s->pattern);
	floe_free(s->base.name);
	floe_mutex_destroy(&s->mu);
	floe_free(s);
}

static const stream_source_ops kafka_ops = {
	kafka_seek, kafka_next, kafka_position, kafka_wait, kafka_ack, kafka_free,
};

/* ---- opening --------------------------------------------------------------------------- */

static int conf_set(rd_kafka_conf_t *c, const char *k, const char *v, floe_error *err)
{
	char why[512];
	if (rd_kafka_conf_set(c, k, v, why, sizeof(why)) != RD_KAFKA_CONF_OK)
		return floe_error_set(err, FLOE_EINVAL, "properties.%s: %s", k, why);
	return FLOE_OK;
}

/* Properties floe sets itself (the source's exactly-once depends on them). */
static bool floe_owned(const char *k)
{
	return !strcmp(k, "enable.auto.commit") || !strcmp(k, "enable.auto.offset.store") ||
	       !strcmp(k, "enable.partition.eof");
}

int stream_source_kafka_new(stream_source **out, const char *name, const stream_kafka_opts *o,
			    floe_error *err)
{
	kafka_source *s;
	rd_kafka_conf_t *c = NULL;
	int rc = FLOE_OK;
	char why[512];
	*out = NULL;
	if (!(s = floe_calloc(1, sizeof(*s))))
		return floe_error_oom(err);
	s->o = *o;
	stream_offsets_init(&s->acked);
	if (floe_mutex_init(&s->mu)) {
		floe_free(s);
		return floe_error_oom(err);
	}
	s->base.ops = &kafka_ops;
	s->base.replayable = true;
	s->base.format = STREAM_FMT_JSONL;
	if (!(s->base.name = floe_strdup(name))) {
		kafka_free(&s->base);
		return floe_error_oom(err);
	}
	if (!s->o.block_bytes)
		s->o.block_bytes = (size_t)1 << 20;
	if (!s->o.max_record_bytes)
		s->o.max_record_bytes = (size_t)16 << 20;
	c = rd_kafka_conf_new();
	bool have_group = false, have_qkb = false, have_client = false, have_fmb = false;
	/* defaults first, the user's properties over them */
	rc = conf_set(c, "client.id", "floe", err);
	for (size_t i = 0; !rc && o->props && i < o->props->len; i++) {
		const char *k = o->props->items[i].key + strlen("properties.");
		const char *v = o->props->items[i].value;
		if (!strcmp(k, "commit.offsets.on.checkpoint")) {
			s->o.commit_offsets = !strcmp(v, "true");
			continue;
		}
		if (floe_owned(k)) {
			FLOE_WARN("source '%s': properties.%s is floe's to set (offsets are committed "
				  "with the table); ignored",
				  name, k);
			continue;
		}
		have_group = have_group || !strcmp(k, "group.id");
		have_qkb = have_qkb || !strcmp(k, "queued.max.messages.kbytes");
		have_fmb = have_fmb || !strcmp(k, "fetch.max.bytes");
		have_client = have_client || !strcmp(k, "client.id");
		rc = conf_set(c, k, v, err);
	}
	if (!rc && !have_group)
		rc = conf_set(c, "group.id", o->group_id ? o->group_id : name, err);
	/* librdkafka's prefetch is the source's memory: 4 MiB queued, 4 MiB per
	 * fetch (its defaults, 64 MiB and 50 MiB, are most of a pipeline's budget;
	 * 8 MiB cost the same CPU per record and 4-5 MB more RSS: bench/RESULTS.md) */
	if (!rc && !have_qkb)
		rc = conf_set(c, "queued.max.messages.kbytes", "4096", err);
	if (!rc && !have_fmb)
		rc = conf_set(c, "fetch.max.bytes", "4194304", err);
	rc = rc ? rc : conf_set(c, "enable.auto.commit", "false", err);
	rc = rc ? rc : conf_set(c, "enable.auto.offset.store", "false", err);
	rc = rc ? rc : conf_set(c, "enable.partition.eof", "false", err);
	(void)have_client;
	if (rc) {
		rd_kafka_conf_destroy(c);
		kafka_free(&s->base);
		return floe_error_prefix(err, rc, "source '%s': ", name);
	}
	rd_kafka_conf_set_opaque(c, s);
	rd_kafka_conf_set_rebalance_cb(c, rebalance_cb);
	rd_kafka_conf_set_error_cb(c, error_cb);
	rd_kafka_conf_set_log_cb(c, log_cb);
	rd_kafka_conf_set_offset_commit_cb(c, commit_cb);
	s->rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, why, sizeof(why));
	if (!s->rk) {
		rd_kafka_conf_destroy(c);
		kafka_free(&s->base);
		return floe_error_set(err, FLOE_EINVAL, "source '%s': kafka: %s", name, why);
	}
	rd_kafka_poll_set_consumer(s->rk);
	s->q = rd_kafka_queue_get_consumer(s->rk);
	/* the topics: each listed one must exist (a clear error now rather than
	 * an idle pipeline); a pattern may match nothing yet */
	rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(4);
	if (o->topic_pattern) {
		size_t n = strlen(o->topic_pattern) + 2;
		if (!(s->pattern = floe_malloc(n))) {
			rc = floe_error_oom(err);
		} else {
			snprintf(s->pattern, n, "%s%s", o->topic_pattern[0] == '^' ? "" : "^",
				 o->topic_pattern);
			rd_kafka_topic_partition_list_add(sub, s->pattern, RD_KAFKA_PARTITION_UA);
		}
	}
	for (size_t i = 0; !rc && i < o->n_topics; i++) {
		const struct rd_kafka_metadata *md = NULL;
		rd_kafka_topic_t *t = rd_kafka_topic_new(s->rk, o->topics[i], NULL);
		rd_kafka_resp_err_t e = rd_kafka_metadata(s->rk, 0, t, &md, KAFKA_QUERY_MS);
		if (e)
		{
			/* an authentication failure says so through the error callback */
			for (int k = 0; k < 5 && !s->hook_rc; k++) {
				rd_kafka_message_t *m = rd_kafka_consumer_poll(s->rk, 100);
				if (m)
					rd_kafka_message_destroy(m);
			}
			if (s->hook_rc) {
				if (err)
					*err = s->hook_err;
				rc = floe_error_prefix(err, s->hook_rc, "source '%s': ", name);
			} else {
				rc = floe_error_set(err, FLOE_EIO,
						    "source '%s': kafka (%s): topic '%s': %s", name,
						    floe_strmap_get(o->props,
								    "properties.bootstrap.servers"),
						    o->topics[i], rd_kafka_err2str(e));
			}
		}
		else if (md->topic_cnt < 1 || md->topics[0].err)
			rc = floe_error_set(err, FLOE_ENOTFOUND,
					    "source '%s': kafka topic '%s' does not exist (%s)", name,
					    o->topics[i],
					    rd_kafka_err2str(md->topic_cnt ? md->topics[0].err
									 : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART));
		if (md)
			rd_kafka_metadata_destroy(md);
		rd_kafka_topic_destroy(t);
		if (!rc)
			rd_kafka_topic_partition_list_add(sub, o->topics[i], RD_KAFKA_PARTITION_UA);
	}
	if (!rc && s->hook_rc) {
		if (err)
			*err = s->hook_err;
		rc = s->hook_rc;
	}
	if (!rc) {
		rd_kafka_resp_err_t e = rd_kafka_subscribe(s->rk, sub);
		if (e)
			rc = floe_error_set(err, FLOE_EINVAL, "source '%s': kafka subscribe: %s", name,
					    rd_kafka_err2str(e));
	}
	rd_kafka_topic_partition_list_destroy(sub);
	if (rc) {
		kafka_free(&s->base);
		return rc;
	}
	*out = &s->base;
	return FLOE_OK;
}

/* ---- metrics registration ------------------------------------------------------------- */

int stream_kafka_metrics(stream_source *base, floe_metrics *m, const char *pipeline,
			 floe_error *err)
{
	kafka_source *s = (kafka_source *)base;
	floe_metric *x;
	const char *l[] = {"pipeline", pipeline, "source", s->base.name};
	s->metrics = m;
	s->pipeline = pipeline;
	int rc = floe_metrics_add_fn(&x, m, "floe_kafka_assigned_partitions",
				     "partitions the consumer group assigned to this process", l, 2,
				     m_assigned, s);
	rc = rc ? rc
		: floe_metrics_add_counter_fn(&x, m, "floe_kafka_rebalances_total",
				      "rebalances this process took part in (assignments and "
				      "revocations)",
				      l, 2, m_rebalances, s);
	rc = rc ? rc
		: floe_metrics_add_fn(&x, m, "floe_kafka_records_lag",
				      "records between the position and the end of the assigned "
				      "partitions",
				      l, 2, m_lag_total, s);
	if (rc)
		return floe_error_set(err, rc, "metrics: cannot register");
	return FLOE_OK;
}

