/*
 * stream_source_kinesis.c — the Kinesis source (see stream_kinesis.h for
 * the model).
 *
 * DESIGN: the fetcher thread owns the HTTP client and every shard's fetch
 * state (iterator, records fetched, last sequence number fetched); it puts
 * blocks on a queue under mu. next() (the coordinator) takes them off and
 * moves the shard's handed-out position (pos, tok), which is what
 * position() reports: a checkpoint records exactly the records the writers
 * got. A shard's end is a queue item too, so "SHARD_END" is recorded only
 * after the shard's last block was handed out.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "obs/obs_metrics.h"
#include "stream/stream_kinesis.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define KIN_OVERSIZE_KEEP 4096
#define KIN_BLOCK_MSGS 10000
#define KIN_TOK_END "SHARD_END"
#define KIN_TOK_TS "AT_TIMESTAMP:"
#define KIN_BACKOFF_MIN_MS 100
#define KIN_BACKOFF_MAX_MS 10000
#define KIN_MAX_FAILURES 30 /* consecutive failed calls of one kind before the source fails */

/* A shard's per-shard series for the metrics thread. Kept until the source
 * is freed: a seek frees the shards and the next listing makes them again,
 * while the registry still points at their series. */
typedef struct kslot {
	char *split;
	_Atomic int64_t records;   /* handed out */
	_Atomic int64_t behind_ms; /* MillisBehindLatest of its last GetRecords */
} kslot;

typedef struct kshard {
	char *id, *parent, *adj, *split, *ending_seq;
	kslot *slot;
	bool closed;
	bool initial; /* listed at the pipeline's first start: the initial position applies */
	bool asked_latest; /* its LATEST iterator was asked for (fetcher) */
	int64_t seen_gen; /* the last complete listing that had it (under mu) */
	int32_t idx;
	/* handed out (coordinator; tok written by the fetcher only while pos is 0
	 * and nothing is queued, under mu) */
	int64_t pos;
	char *tok;
	bool done;
	/* fetching (fetcher thread) */
	int64_t fed;
	char *fed_seq; /* last sequence number fetched */
	char *iter;
	bool fetch_done;
	int64_t next_ns;
	int64_t backoff_ms;
	int failures;
	int64_t behind_ms; /* MillisBehindLatest of its last GetRecords (-1: not known) */
} kshard;

typedef struct kitem {
	struct kitem *next;
	stream_block b;
	kshard *sh;
	char *last_seq; /* NULL for an end item */
	bool end;
	size_t bytes;
} kitem;

typedef struct kinesis_source {
	stream_source base;
	stream_kinesis_opts o;
	char *stream_name;
	stream_aws *aws;
	floe_mutex mu;
	floe_cond cv;      /* the fetcher waits here (space, stop) */
	floe_cond data_cv; /* wait() waits here */
	kshard **shards;
	size_t n_shards, cap_shards;
	kitem *head, *tail;
	size_t q_bytes;
	stream_offsets seed; /* where seek() said each shard is */
	bool has_state;      /* the tables hold positions for this stream */
	floe_thread th;
	bool running;
	_Atomic bool stop;
	int fetch_rc; /* a fatal error of the fetcher, returned by next() */
	floe_error fetch_err;
	bool listed_once;
	int64_t list_gen; /* complete listings so far (under mu) */
	int64_t next_list_ns;
	int list_failures;
	/* metrics (read by the HTTP thread) */
	_Atomic int64_t m_open, m_behind, m_throttled, m_listings;
	floe_metrics *metrics; /* set before the fetcher starts */
	const char *pipeline;
	kslot **slots; /* the fetcher's (and kin_free's) */
	size_t n_slots, cap_slots;
} kinesis_source;

/* ---- sequence numbers ----------------------------------------------------------------------- */

int stream_kinesis_seq_cmp(const char *a, const char *b)
{
	while (*a == '0' && a[1])
		a++;
	while (*b == '0' && b[1])
		b++;
	size_t la = strlen(a), lb = strlen(b);
	if (la != lb)
		return la < lb ? -1 : 1;
	int c = strcmp(a, b);
	return c < 0 ? -1 : c > 0;
}

static bool seq_valid(const char *s, size_t n)
{
	if (!n || n > 128)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* ---- GetRecords answers --------------------------------------------------------------------- */

void stream_kinesis_reply_init(stream_kinesis_reply *r)
{
	memset(r, 0, sizeof(*r));
	floe_buf_init(&r->data, 0);
	r->millis_behind = -1;
}

void stream_kinesis_reply_reset(stream_kinesis_reply *r)
{
	floe_free(r->msgs);
	floe_buf_reset(&r->data);
	floe_free(r->next_iter);
	stream_kinesis_reply_init(r);
}

int stream_kinesis_parse_records(stream_kinesis_reply *r, const char *p, size_t n,
				 size_t max_record_bytes, floe_error *err)
{
	floe_arena a;
	floe_json *j;
	int rc;
	r->n = 0;
	floe_buf_clear(&r->data);
	floe_free(r->next_iter);
	r->next_iter = NULL;
	r->millis_behind = -1;
	floe_arena_init(&a, 65536);
	if ((rc = floe_json_parse(&j, &a, p, n, NULL, err)))
		goto done;
	if (j->type != FLOE_JSON_OBJECT) {
		rc = floe_error_corrupt(err, "GetRecords: the answer is not a JSON object");
		goto done;
	}
	const floe_json *recs = floe_json_get(j, "Records"), *nx = floe_json_get(j, "NextShardIterator"),
			*mb = floe_json_get(j, "MillisBehindLatest");
	if (!recs || recs->type != FLOE_JSON_ARRAY) {
		rc = floe_error_corrupt(err, "GetRecords: the answer has no Records list");
		goto done;
	}
	if (nx && nx->type == FLOE_JSON_STRING && nx->len) {
		if (!(r->next_iter = floe_strndup(nx->s, nx->len))) {
			rc = floe_error_oom(err);
			goto done;
		}
	} else if (nx && nx->type != FLOE_JSON_NULL) {
		rc = floe_error_corrupt(err, "GetRecords: NextShardIterator is not a string");
		goto done;
	}
	if (mb && mb->type == FLOE_JSON_NUMBER && mb->is_int && mb->i >= 0)
		r->millis_behind = mb->i;
	size_t i = 0;
	for (const floe_json *x = recs->child; x; x = x->next, i++) {
		const floe_json *d = floe_json_get(x, "Data"), *k = floe_json_get(x, "PartitionKey"),
				*sq = floe_json_get(x, "SequenceNumber"),
				*ts = floe_json_get(x, "ApproximateArrivalTimestamp");
		if (!d || d->type != FLOE_JSON_STRING || !sq || sq->type != FLOE_JSON_STRING ||
		    !seq_valid(sq->s, sq->len) || (k && k->type != FLOE_JSON_STRING)) {
			rc = floe_error_corrupt(err, "GetRecords: record %zu has no Data or no "
						     "SequenceNumber (digits)",
						i);
			goto done;
		}
		if (FLOE_ARRAY_RESERVE(r->msgs, r->cap, r->n + 1)) {
			rc = floe_error_oom(err);
			goto done;
		}
		stream_msg *m = &r->msgs[r->n];
		memset(m, 0, sizeof(*m));
		m->timestamp_ms = -1;
		if (ts && ts->type == FLOE_JSON_NUMBER && ts->d >= 0 && ts->d < 1e13) {
			m->timestamp_ms = (int64_t)(ts->d * 1000.0 + 0.5);
			m->ts_type = 2;
		}
		if (r->data.len > UINT32_MAX - (d->len + (k ? k->len : 0) + sq->len)) {
			rc = floe_error_set(err, FLOE_ENOMEM, "GetRecords: the answer is too large");
			goto done;
		}
		size_t at = r->data.len;
		int drc = floe_base64_decode(&r->data, d->s, d->len);
		if (drc) {
			/* a failed allocation is no bad record */
			rc = drc == FLOE_ENOMEM ? floe_error_oom(err)
					       : floe_error_corrupt(err, "GetRecords: record %zu: Data is "
									 "not base64",
								    i);
			goto done;
		}
		size_t vlen = r->data.len - at;
		m->size = (uint32_t)vlen;
		if (vlen > max_record_bytes) {
			m->flags |= STREAM_MSG_OVERSIZE;
			vlen = vlen < KIN_OVERSIZE_KEEP ? vlen : KIN_OVERSIZE_KEEP;
			r->data.len = at + vlen;
		}
		m->val_off = (uint32_t)at;
		m->val_len = (uint32_t)vlen;
		m->key_off = (uint32_t)r->data.len;
		if (k) {
			size_t kl = k->len > KIN_OVERSIZE_KEEP ? KIN_OVERSIZE_KEEP : k->len;
			if (floe_buf_append(&r->data, k->s, kl)) {
				rc = floe_error_oom(err);
				goto done;
			}
			m->key_len = (uint32_t)kl;
		} else {
			m->flags |= STREAM_MSG_NULL_KEY;
		}
		m->seq_off = (uint32_t)r->data.len;
		m->seq_len = (uint32_t)sq->len;
		if (floe_buf_append(&r->data, sq->s, sq->len)) {
			rc = floe_error_oom(err);
			goto done;
		}
		r->n++;
	}
done:
	floe_arena_reset(&a);
	return rc;
}

/* ---- the queue ------------------------------------------------------------------------------- */

static void item_free(kitem *it)
{
	if (!it)
		return;
	stream_block_reset(&it->b);
	floe_free(it->last_seq);
	floe_free(it);
}

static void queue_clear(kinesis_source *s)
{
	while (s->head) {
		kitem *n = s->head->next;
		item_free(s->head);
		s->head = n;
	}
	s->tail = NULL;
	s->q_bytes = 0;
}

static void enqueue(kinesis_source *s, kitem *it)
{
	floe_mutex_lock(&s->mu);
	if (s->tail)
		s->tail->next = it;
	else
		s->head = it;
	s->tail = it;
	s->q_bytes += it->bytes;
	floe_cond_broadcast(&s->data_cv);
	floe_mutex_unlock(&s->mu);
}

/* Blocks of records [a, b) of reply r, from shard sh. */
static int enqueue_records(kinesis_source *s, kshard *sh, const stream_kinesis_reply *r,
			   floe_error *err)
{
	size_t i = 0;
	while (i < r->n) {
		size_t j = i, bytes = 0;
		while (j < r->n && j - i < KIN_BLOCK_MSGS && (j == i || bytes < s->o.block_bytes)) {
			const stream_msg *m = &r->msgs[j];
			bytes += m->seq_off + m->seq_len - m->val_off;
			j++;
		}
		kitem *it = floe_calloc(1, sizeof(*it));
		uint32_t base = r->msgs[i].val_off;
		if (!it)
			return floe_error_oom(err);
		it->b.data = floe_malloc(bytes ? bytes : 1);
		it->b.msgs = floe_malloc((j - i) * sizeof(stream_msg));
		const stream_msg *last = &r->msgs[j - 1];
		it->last_seq = floe_strndup((const char *)r->data.data + last->seq_off, last->seq_len);
		if (!it->b.data || !it->b.msgs || !it->last_seq) {
			item_free(it);
			return floe_error_oom(err);
		}
		memcpy(it->b.data, r->data.data + base, bytes);
		for (size_t k = i; k < j; k++) {
			stream_msg *m = &it->b.msgs[k - i];
			*m = r->msgs[k];
			m->val_off -= base;
			m->key_off -= base;
			m->seq_off -= base;
			m->offset = sh->fed++;
		}
		it->b.len = bytes;
		it->b.n_msgs = j - i;
		it->b.split = sh->idx;
		it->b.split_name = sh->split;
		it->b.topic = s->stream_name;
		it->b.shard_id = sh->id;
		it->b.partition = sh->idx;
		it->b.start = it->b.msgs[0].offset;
		it->b.end = it->b.msgs[j - i - 1].offset + 1;
		it->sh = sh;
		it->bytes = bytes + (j - i) * sizeof(stream_msg);
		enqueue(s, it);
		i = j;
	}
	if (r->n) {
		const stream_msg *last = &r->msgs[r->n - 1];
		char *q = floe_strndup((const char *)r->data.data + last->seq_off, last->seq_len);
		if (!q)
			return floe_error_oom(err);
		floe_free(sh->fed_seq);
		sh->fed_seq = q;
	}
	return FLOE_OK;
}

static int enqueue_end(kinesis_source *s, kshard *sh, floe_error *err)
{
	kitem *it = floe_calloc(1, sizeof(*it));
	if (!it)
		return floe_error_oom(err);
	it->sh = sh;
	it->end = true;
	sh->fetch_done = true;
	enqueue(s, it);
	FLOE_INFO("kinesis '%s': shard %s read to its end", s->stream_name, sh->id);
	return FLOE_OK;
}

/* ---- calls ------------------------------------------------------------------------------------ */

typedef enum { CALL_OK, CALL_RETRY, CALL_EXPIRED, CALL_GONE, CALL_FAIL } call_result;

/* One call; classify what came back. 200: CALL_OK with the body in resp. */
static call_result call(kinesis_source *s, const char *op, floe_buf *body, floe_buf *resp,
			floe_error *err)
{
	char target[96], type[128], msg[512];
	long st = 0;
	snprintf(target, sizeof(target), "Kinesis_20131202.%s", op);
	floe_error e;
	floe_error_clear(&e);
	int rc = stream_aws_call(s->aws, target, (const char *)body->data, body->len, resp, &st, &e);
	if (rc) {
		floe_error_set(err, rc, "kinesis %s: %s", op, e.msg);
		return e.retryable ? CALL_RETRY : CALL_FAIL;
	}
	if (st == 200)
		return CALL_OK;
	stream_aws_error_of(resp->data, resp->len, type, sizeof(type), msg, sizeof(msg));
	floe_error_set(err, FLOE_EIO, "kinesis %s on stream '%s': HTTP %ld %s: %s", op,
		       s->stream_name, st, type[0] ? type : "(no error type)", msg);
	if (!strcmp(type, "ProvisionedThroughputExceededException") ||
	    !strcmp(type, "LimitExceededException") || !strcmp(type, "ThrottlingException") ||
	    !strcmp(type, "KMSThrottlingException") || !strcmp(type, "InternalFailure") ||
	    !strcmp(type, "ServiceUnavailable") || st >= 500 || st == 429)
		return CALL_RETRY;
	if (!strcmp(type, "ExpiredIteratorException"))
		return CALL_EXPIRED;
	if (!strcmp(type, "ResourceNotFoundException"))
		return CALL_GONE;
	return CALL_FAIL;
}

static int64_t backoff(kinesis_source *s, int64_t *cur)
{
	int64_t b = *cur ? *cur * 2 : KIN_BACKOFF_MIN_MS;
	if (b > KIN_BACKOFF_MAX_MS)
		b = KIN_BACKOFF_MAX_MS;
	*cur = b;
	/* full jitter over the upper half */
	return b / 2 + (int64_t)(floe_random_u64() % (uint64_t)(b / 2 + 1));
}

static int put_str(floe_jw *w, const char *k, const char *v)
{
	floe_jw_kv_str(w, k, v);
	return FLOE_OK;
}

/* ---- shards ---------------------------------------------------------------------------------- */

static kshard *find_shard(kinesis_source *s, const char *id)
{
	for (size_t i = 0; i < s->n_shards; i++)
		if (!strcmp(s->shards[i]->id, id))
			return s->shards[i];
	return NULL;
}

static bool known_split(const kinesis_source *s, const char *split)
{
	for (size_t i = 0; i < s->n_shards; i++)
		if (!strcmp(s->shards[i]->split, split))
			return true;
	return false;
}

static char *jdup(const floe_json *o, const char *k, bool *oom)
{
	const floe_json *v = floe_json_get(o, k);
	if (!v || v->type != FLOE_JSON_STRING)
		return NULL;
	char *d = floe_strndup(v->s, v->len);
	if (!d)
		*oom = true;
	return d;
}

static int64_t m_shard_records(void *p)
{
	return atomic_load(&((kslot *)p)->records);
}

static int64_t m_shard_behind(void *p)
{
	return atomic_load(&((kslot *)p)->behind_ms);
}

/* The series of split (made, and registered, the first time it is seen);
 * NULL when out of memory. */
static kslot *shard_slot(kinesis_source *s, const char *split, const char *id)
{
	for (size_t i = 0; i < s->n_slots; i++)
		if (!strcmp(s->slots[i]->split, split))
			return s->slots[i];
	kslot *k = floe_calloc(1, sizeof(*k));
	if (!k || !(k->split = floe_strdup(split)) ||
	    FLOE_ARRAY_RESERVE(s->slots, s->cap_slots, s->n_slots + 1)) {
		if (k)
			floe_free(k->split);
		floe_free(k);
		return NULL;
	}
	atomic_store(&k->behind_ms, -1);
	s->slots[s->n_slots++] = k;
	if (s->metrics) {
		/* best effort: a series that cannot be registered is not shown */
		floe_metric *x;
		const char *l[] = {"pipeline", s->pipeline, "source", s->base.name,
				   "stream", s->stream_name, "shard", id};
		(void)!floe_metrics_add_fn(&x, s->metrics, "floe_kinesis_shard_records_read",
					   "records of the shard this process handed to its writers "
					   "(a restart counts on from the table's position)",
					   l, 4, m_shard_records, k);
		(void)!floe_metrics_add_fn(&x, s->metrics, "floe_kinesis_shard_millis_behind_latest",
					   "MillisBehindLatest of the shard's last GetRecords (-1: "
					   "none yet)",
					   l, 4, m_shard_behind, k);
	}
	return k;
}

/* A shard first seen: where it starts. */
static int add_shard(kinesis_source *s, const floe_json *x, floe_error *err)
{
	bool oom = false;
	kshard *sh = floe_calloc(1, sizeof(*sh));
	floe_mutex_lock(&s->mu); /* position() reads the array */
	bool grown = sh && !FLOE_ARRAY_RESERVE(s->shards, s->cap_shards, s->n_shards + 1);
	floe_mutex_unlock(&s->mu);
	if (!grown) {
		floe_free(sh);
		return floe_error_oom(err);
	}
	sh->id = jdup(x, "ShardId", &oom);
	sh->parent = jdup(x, "ParentShardId", &oom);
	sh->adj = jdup(x, "AdjacentParentShardId", &oom);
	const floe_json *rng = floe_json_get(x, "SequenceNumberRange");
	sh->ending_seq = rng ? jdup(rng, "EndingSequenceNumber", &oom) : NULL;
	sh->closed = sh->ending_seq != NULL;
	size_t n = strlen(s->stream_name) + (sh->id ? strlen(sh->id) : 0) + 16;
	sh->split = floe_malloc(n);
	if (oom || !sh->id || !sh->split) {
		floe_free(sh->id);
		floe_free(sh->parent);
		floe_free(sh->adj);
		floe_free(sh->ending_seq);
		floe_free(sh->split);
		floe_free(sh);
		return oom || !sh ? floe_error_oom(err)
				  : floe_error_corrupt(err, "ListShards: a shard without ShardId");
	}
	snprintf(sh->split, n, STREAM_KINESIS_SPLIT_PREFIX "%s:%s", s->stream_name, sh->id);
	sh->idx = (int32_t)s->n_shards;
	const char *tok = NULL;
	int64_t pos = 0;
	bool seeded = stream_offsets_has(&s->seed, sh->split);
	if (seeded) {
		pos = stream_offsets_get(&s->seed, sh->split, 0);
		tok = stream_offsets_tok(&s->seed, sh->split);
	} else if (!s->listed_once && !s->has_state) {
		/* the pipeline's first start: the initial position */
		if (s->o.initpos == STREAM_KINESIS_LATEST && sh->closed)
			tok = KIN_TOK_END; /* nothing will come */
	}
	char tsb[64];
	if (!seeded && !s->listed_once && !s->has_state &&
	    s->o.initpos == STREAM_KINESIS_AT_TIMESTAMP) {
		snprintf(tsb, sizeof(tsb), KIN_TOK_TS "%lld", (long long)s->o.initpos_ts_ms);
		tok = tsb;
	} else if (!seeded && !s->listed_once && !s->has_state &&
		   s->o.initpos == STREAM_KINESIS_LATEST && !sh->closed) {
		/* a checkpoint before its LATEST iterator records where LATEST was */
		snprintf(tsb, sizeof(tsb), KIN_TOK_TS "%lld", (long long)floe_now_ms());
		tok = tsb;
	}
	sh->initial = !seeded && !s->listed_once && !s->has_state;
	sh->behind_ms = -1;
	sh->pos = sh->fed = pos;
	if (!(sh->slot = shard_slot(s, sh->split, sh->id)))
		oom = true;
	else
		atomic_store(&sh->slot->records, pos);
	if (tok && !(sh->tok = floe_strdup(tok))) {
		oom = true;
	}
	if (tok && seq_valid(tok, strlen(tok)) && !(sh->fed_seq = floe_strdup(tok)))
		oom = true;
	if (oom)
		return floe_error_oom(err); /* sh is leaked into nothing: it is not linked; rare */
	sh->done = sh->fetch_done = tok && !strcmp(tok, KIN_TOK_END);
	floe_mutex_lock(&s->mu);
	s->shards[s->n_shards++] = sh;
	floe_mutex_unlock(&s->mu);
	FLOE_INFO("kinesis '%s': shard %s%s%s%s (%s)", s->stream_name, sh->id,
		  sh->parent ? ", child of " : "", sh->parent ? sh->parent : "",
		  sh->closed ? ", closed" : "",
		  sh->done ? "read" : seeded ? "resumes" : tok ? "from a time" : "from the start or latest");
	return FLOE_OK;
}

static int list_shards(kinesis_source *s, floe_error *err)
{
	floe_buf body, resp;
	floe_buf_init(&body, 0);
	floe_buf_init(&resp, 0);
	char *next = NULL;
	int rc = FLOE_OK;
	floe_arena a;
	floe_arena_init(&a, 16384);
	for (int page = 0; page < 1000 && !rc; page++) {
		floe_jw w;
		floe_buf_clear(&body);
		floe_jw_init(&w, &body, 0);
		floe_jw_obj_begin(&w);
		if (next)
			put_str(&w, "NextToken", next);
		else
			put_str(&w, "StreamName", s->stream_name);
		floe_jw_obj_end(&w);
		if (floe_jw_finish(&w)) {
			rc = floe_error_oom(err);
			break;
		}
		call_result cr = call(s, "ListShards", &body, &resp, err);
		if (cr == CALL_GONE) {
			rc = floe_error_set(err, FLOE_ENOTFOUND,
					    "kinesis stream '%s' does not exist (deleted?): %s",
					    s->stream_name, err ? err->msg : "");
			break;
		}
		if (cr != CALL_OK) {
			rc = cr == CALL_RETRY ? FLOE_ETIMEDOUT : FLOE_EIO;
			break;
		}
		floe_json *j;
		floe_arena_reset(&a);
		floe_arena_init(&a, 16384);
		if ((rc = floe_json_parse(&j, &a, (const char *)resp.data, resp.len, NULL, err)))
			break;
		const floe_json *shards = floe_json_get(j, "Shards");
		if (!shards || shards->type != FLOE_JSON_ARRAY) {
			rc = floe_error_corrupt(err, "ListShards: no Shards list");
			break;
		}
		for (const floe_json *x = shards->child; x && !rc; x = x->next) {
			const floe_json *id = floe_json_get(x, "ShardId");
			if (!id || id->type != FLOE_JSON_STRING) {
				rc = floe_error_corrupt(err, "ListShards: a shard without ShardId");
				break;
			}
			kshard *sh = find_shard(s, id->s);
			if (!sh && !(rc = add_shard(s, x, err)))
				sh = s->shards[s->n_shards - 1];
			if (sh) {
				floe_mutex_lock(&s->mu);
				sh->seen_gen = s->list_gen + 1;
				floe_mutex_unlock(&s->mu);
			}
			if (rc || !sh) {
				/* nothing more for this one */
			} else if (!sh->closed) {
				const floe_json *r = floe_json_get(x, "SequenceNumberRange");
				bool oom = false;
				char *e = r ? jdup(r, "EndingSequenceNumber", &oom) : NULL;
				if (oom)
					rc = floe_error_oom(err);
				if (e) {
					sh->ending_seq = e;
					sh->closed = true;
				}
			}
		}
		floe_free(next);
		next = NULL;
		if (!rc) {
			bool oom = false;
			next = jdup(j, "NextToken", &oom);
			if (oom)
				rc = floe_error_oom(err);
			if (!next)
				break;
		}
	}
	floe_free(next);
	floe_arena_reset(&a);
	floe_buf_reset(&body);
	floe_buf_reset(&resp);
	if (!rc) {
		s->listed_once = true;
		atomic_fetch_add(&s->m_listings, 1);
		floe_mutex_lock(&s->mu);
		s->list_gen++;
		floe_mutex_unlock(&s->mu);
	}
	return rc;
}

/* A shard is read once each parent it names is read to its end or gone. */
static bool parents_done(kinesis_source *s, const kshard *sh)
{
	const char *ps[2] = {sh->parent, sh->adj};
	for (int i = 0; i < 2; i++) {
		if (!ps[i])
			continue;
		kshard *p = find_shard(s, ps[i]);
		if (p && !p->fetch_done)
			return false;
	}
	return true;
}

static int get_iterator(kinesis_source *s, kshard *sh, floe_buf *body, floe_buf *resp,
			call_result *cr, floe_error *err)
{
	floe_jw w;
	char ts[48];
	const char *type, *seq = NULL;
	int64_t ts_ms = -1;
	const char *tok = sh->fed_seq;
	char at[64] = "";
	floe_mutex_lock(&s->mu); /* sh->tok is the handed-out position */
	if (sh->tok && !strncmp(sh->tok, KIN_TOK_TS, strlen(KIN_TOK_TS)))
		snprintf(at, sizeof(at), "%s", sh->tok + strlen(KIN_TOK_TS));
	floe_mutex_unlock(&s->mu);
	if (tok) {
		type = "AFTER_SEQUENCE_NUMBER";
		seq = tok;
	} else if (sh->initial && s->o.initpos == STREAM_KINESIS_LATEST && !sh->asked_latest) {
		/* once; then AT_TIMESTAMP of when it was asked (an expired iterator
		 * must not skip what came in meanwhile) */
		type = "LATEST";
	} else if (at[0]) {
		type = "AT_TIMESTAMP";
		if (!floe_parse_i64(at, strlen(at), &ts_ms) || ts_ms < 0)
			return floe_error_corrupt(err, "kinesis shard %s: bad position '" KIN_TOK_TS "%s'",
						  sh->id, at);
	} else {
		type = "TRIM_HORIZON";
	}
	int64_t asked = floe_now_ms();
	floe_buf_clear(body);
	floe_jw_init(&w, body, 0);
	floe_jw_obj_begin(&w);
	floe_jw_kv_str(&w, "StreamName", s->stream_name);
	floe_jw_kv_str(&w, "ShardId", sh->id);
	floe_jw_kv_str(&w, "ShardIteratorType", type);
	if (seq)
		floe_jw_kv_str(&w, "StartingSequenceNumber", seq);
	if (ts_ms >= 0) {
		snprintf(ts, sizeof(ts), "%lld.%03lld", (long long)(ts_ms / 1000), (long long)(ts_ms % 1000));
		floe_jw_key(&w, "Timestamp");
		floe_jw_raw(&w, ts, strlen(ts));
	}
	floe_jw_obj_end(&w);
	if (floe_jw_finish(&w))
		return floe_error_oom(err);
	*cr = call(s, "GetShardIterator", body, resp, err);
	if (*cr != CALL_OK)
		return FLOE_OK;
	floe_arena a;
	floe_json *j;
	floe_arena_init(&a, 4096);
	int rc = floe_json_parse(&j, &a, (const char *)resp->data, resp->len, NULL, err);
	if (!rc) {
		const floe_json *it = floe_json_get(j, "ShardIterator");
		if (!it || it->type != FLOE_JSON_STRING)
			rc = floe_error_corrupt(err, "GetShardIterator: no ShardIterator");
		else if (!(sh->iter = floe_strndup(it->s, it->len)))
			rc = floe_error_oom(err);
	}
	floe_arena_reset(&a);
	if (!rc && !strcmp(type, "LATEST")) {
		/* recorded as the time it was asked for, while nothing is handed out */
		char tb[64];
		snprintf(tb, sizeof(tb), KIN_TOK_TS "%lld", (long long)asked);
		sh->asked_latest = true;
		floe_mutex_lock(&s->mu);
		if (sh->pos == 0) {
			char *t = floe_strdup(tb);
			if (t) {
				floe_free(sh->tok);
				sh->tok = t;
			} else {
				rc = floe_error_oom(err);
			}
		}
		floe_mutex_unlock(&s->mu);
	}
	return rc;
}

/* One GetRecords on sh (getting an iterator first when it has none). */
static int fetch_shard(kinesis_source *s, kshard *sh, floe_buf *body, floe_buf *resp,
		       stream_kinesis_reply *r, floe_error *err)
{
	call_result cr = CALL_OK;
	int rc;
	int64_t now = floe_monotonic_ns();
	if (!sh->iter) {
		if ((rc = get_iterator(s, sh, body, resp, &cr, err)))
			return rc;
	}
	if (cr == CALL_OK) {
		floe_jw w;
		floe_buf_clear(body);
		floe_jw_init(&w, body, 0);
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "ShardIterator", sh->iter);
		floe_jw_kv_i64(&w, "Limit", s->o.max_records);
		floe_jw_obj_end(&w);
		if (floe_jw_finish(&w))
			return floe_error_oom(err);
		cr = call(s, "GetRecords", body, resp, err);
	}
	switch (cr) {
	case CALL_OK:
		break;
	case CALL_RETRY: {
		atomic_fetch_add(&s->m_throttled, 1);
		int64_t ms = backoff(s, &sh->backoff_ms);
		if (++sh->failures > KIN_MAX_FAILURES)
			return FLOE_EIO;
		FLOE_DEBUG("kinesis shard %s: %s; again in %lld ms", sh->id, err ? err->msg : "",
			   (long long)ms);
		sh->next_ns = now + ms * 1000000;
		return FLOE_OK;
	}
	case CALL_EXPIRED:
		floe_free(sh->iter);
		sh->iter = NULL; /* asked for again after the last record fetched */
		return FLOE_OK;
	case CALL_GONE: {
		/* the shard is past its retention, or the stream is gone: a listing
		 * tells which (a deleted stream stops the source there) */
		floe_mutex_lock(&s->mu);
		bool listed = sh->seen_gen >= s->list_gen;
		floe_mutex_unlock(&s->mu);
		if (!listed) {
			FLOE_WARN("kinesis shard %s: %s: gone from the stream, treated as read to "
				  "its end",
				  sh->id, err->msg);
			return enqueue_end(s, sh, err);
		}
		floe_free(sh->iter);
		sh->iter = NULL;
		s->next_list_ns = 0;
		sh->next_ns = now + (int64_t)1000 * 1000000;
		if (++sh->failures > KIN_MAX_FAILURES)
			return FLOE_EIO;
		return FLOE_OK;
	}
	default:
		return FLOE_EIO;
	}
	sh->backoff_ms = 0;
	sh->failures = 0;
	if ((rc = stream_kinesis_parse_records(r, (const char *)resp->data, resp->len,
					       s->o.max_record_bytes, err)))
		return floe_error_prefix(err, rc, "kinesis shard %s: ", sh->id);
	if ((rc = enqueue_records(s, sh, r, err)))
		return rc;
	sh->behind_ms = r->millis_behind;
	atomic_store(&sh->slot->behind_ms, r->millis_behind);
	floe_free(sh->iter);
	sh->iter = r->next_iter;
	r->next_iter = NULL;
	/* the end: no next iterator; or a closed shard with nothing more (some
	 * emulators always hand out a next iterator) */
	if (!sh->iter ||
	    (sh->closed && r->n == 0 && r->millis_behind <= 0) ||
	    (sh->closed && sh->fed_seq && sh->ending_seq &&
	     stream_kinesis_seq_cmp(sh->fed_seq, sh->ending_seq) >= 0))
		return enqueue_end(s, sh, err);
	sh->next_ns = r->n ? now : now + s->o.interval_ms * 1000000;
	return FLOE_OK;
}

static void *fetcher(void *arg)
{
	kinesis_source *s = arg;
	floe_buf body, resp;
	stream_kinesis_reply r;
	floe_error e;
	int rc = FLOE_OK;
	floe_buf_init(&body, 0);
	floe_buf_init(&resp, 0);
	stream_kinesis_reply_init(&r);
	floe_error_clear(&e);
	while (!atomic_load(&s->stop)) {
		int64_t now = floe_monotonic_ns();
		if (now >= s->next_list_ns) {
			floe_error le;
			floe_error_clear(&le);
			rc = list_shards(s, &le);
			if (rc == FLOE_ETIMEDOUT) {
				int64_t cur = 0;
				for (int k = 0; k < s->list_failures && k < 8; k++)
					cur = cur ? cur * 2 : KIN_BACKOFF_MIN_MS;
				FLOE_WARN("%s (again in %lld ms)", le.msg, (long long)backoff(s, &cur));
				if (++s->list_failures > KIN_MAX_FAILURES) {
					e = le;
					break;
				}
				s->next_list_ns = now + cur * 1000000;
				rc = FLOE_OK;
			} else if (rc) {
				e = le;
				break;
			} else {
				s->list_failures = 0;
				s->next_list_ns = now + s->o.discovery_ms * 1000000;
			}
		}
		int64_t wake = s->next_list_ns;
		for (size_t i = 0; i < s->n_shards && !atomic_load(&s->stop); i++) {
			kshard *sh = s->shards[i];
			if (sh->fetch_done || !parents_done(s, sh))
				continue;
			floe_mutex_lock(&s->mu);
			bool full = s->q_bytes >= s->o.queue_bytes;
			floe_mutex_unlock(&s->mu);
			if (full)
				break;
			if (sh->next_ns > floe_monotonic_ns()) {
				if (sh->next_ns < wake)
					wake = sh->next_ns;
				continue;
			}
			floe_error_clear(&e);
			if ((rc = fetch_shard(s, sh, &body, &resp, &r, &e)))
				break;
			if (!sh->fetch_done && sh->next_ns < wake)
				wake = sh->next_ns;
		}
		if (rc)
			break;
		int64_t open = 0, behind = 0;
		for (size_t i = 0; i < s->n_shards; i++) {
			const kshard *sh = s->shards[i];
			if (sh->fetch_done || !parents_done(s, sh))
				continue;
			open++;
			if (sh->behind_ms > behind)
				behind = sh->behind_ms;
		}
		atomic_store(&s->m_open, open);
		atomic_store(&s->m_behind, behind);
		floe_mutex_lock(&s->mu);
		int64_t ms = (wake - floe_monotonic_ns()) / 1000000;
		if (s->q_bytes >= s->o.queue_bytes)
			ms = 1000; /* woken when next() takes a block */
		if (ms > 0 && !atomic_load(&s->stop))
			(void)floe_cond_timedwait(&s->cv, &s->mu, ms);
		floe_mutex_unlock(&s->mu);
	}
	floe_buf_reset(&body);
	floe_buf_reset(&resp);
	stream_kinesis_reply_reset(&r);
	if (rc) {
		floe_mutex_lock(&s->mu);
		s->fetch_rc = rc;
		s->fetch_err = e;
		floe_cond_broadcast(&s->data_cv);
		floe_mutex_unlock(&s->mu);
	}
	return NULL;
}

static void stop_fetcher(kinesis_source *s)
{
	if (!s->running)
		return;
	atomic_store(&s->stop, true);
	floe_mutex_lock(&s->mu);
	floe_cond_broadcast(&s->cv);
	floe_mutex_unlock(&s->mu);
	floe_thread_join(&s->th);
	s->running = false;
	atomic_store(&s->stop, false);
}

static void free_shards(kinesis_source *s)
{
	for (size_t i = 0; i < s->n_shards; i++) {
		kshard *sh = s->shards[i];
		floe_free(sh->id);
		floe_free(sh->parent);
		floe_free(sh->adj);
		floe_free(sh->split);
		floe_free(sh->ending_seq);
		floe_free(sh->tok);
		floe_free(sh->fed_seq);
		floe_free(sh->iter);
		floe_free(sh);
	}
	floe_free(s->shards);
	s->shards = NULL;
	s->n_shards = s->cap_shards = 0;
}

/* ---- metrics ------------------------------------------------------------------------------- */

static int64_t m_open(void *p)
{
	return atomic_load(&((kinesis_source *)p)->m_open);
}

static int64_t m_behind(void *p)
{
	return atomic_load(&((kinesis_source *)p)->m_behind);
}

static int64_t m_throttled(void *p)
{
	return atomic_load(&((kinesis_source *)p)->m_throttled);
}

static int64_t m_listings(void *p)
{
	return atomic_load(&((kinesis_source *)p)->m_listings);
}

int stream_kinesis_metrics(stream_source *base, floe_metrics *m, const char *pipeline,
			   floe_error *err)
{
	kinesis_source *s = (kinesis_source *)base;
	floe_metric *x;
	const char *l[] = {"pipeline", pipeline, "source", s->base.name};
	s->metrics = m;
	s->pipeline = pipeline;
	int rc = floe_metrics_add_fn(&x, m, "floe_kinesis_shards_reading",
				     "shards being read (open, or closed and not read to their end, "
				     "parents done)",
				     l, 2, m_open, s);
	rc = rc ? rc
		: floe_metrics_add_fn(&x, m, "floe_kinesis_millis_behind_latest",
				      "the largest MillisBehindLatest of the shards being read", l, 2,
				      m_behind, s);
	rc = rc ? rc
		: floe_metrics_add_counter_fn(&x, m, "floe_kinesis_retried_calls_total",
				      "calls retried after throttling or a transient failure", l, 2,
				      m_throttled, s);
	rc = rc ? rc
		: floe_metrics_add_counter_fn(&x, m, "floe_kinesis_shard_listings_total",
				      "complete listings of the stream's shards", l, 2, m_listings, s);
	return rc ? floe_error_set(err, rc, "metrics: cannot register") : FLOE_OK;
}

/* ---- the vtable ------------------------------------------------------------------------------- */

static int kin_seek(stream_source *base, const stream_offsets *pos, floe_error *err)
{
	kinesis_source *s = (kinesis_source *)base;
	stop_fetcher(s);
	queue_clear(s);
	free_shards(s);
	stream_offsets_reset(&s->seed);
	s->has_state = false;
	s->listed_once = false;
	s->list_gen = 0;
	s->next_list_ns = 0;
	size_t pl = strlen(STREAM_KINESIS_SPLIT_PREFIX) + strlen(s->stream_name);
	for (size_t i = 0; pos && i < pos->n; i++) {
		const stream_offset *o = &pos->items[i];
		if (strncmp(o->split, STREAM_KINESIS_SPLIT_PREFIX, strlen(STREAM_KINESIS_SPLIT_PREFIX)) ||
		    strncmp(o->split + strlen(STREAM_KINESIS_SPLIT_PREFIX), s->stream_name,
			    strlen(s->stream_name)) ||
		    o->split[pl] != ':')
			continue;
		if (o->tok && !seq_valid(o->tok, strlen(o->tok)) && strcmp(o->tok, KIN_TOK_END) &&
		    strncmp(o->tok, KIN_TOK_TS, strlen(KIN_TOK_TS)))
			return floe_error_corrupt(err, "kinesis: position of '%s' is '%s' (a sequence "
						       "number, " KIN_TOK_END " or " KIN_TOK_TS "<ms>)",
						  o->split, o->tok);
		if (stream_offsets_set_tok(&s->seed, o->split, o->pos, o->tok))
			return floe_error_oom(err);
		s->has_state = true;
	}
	return FLOE_OK;
}

static int kin_next(stream_source *base, stream_block *b, bool *got, bool *eof, floe_error *err)
{
	kinesis_source *s = (kinesis_source *)base;
	*got = false;
	*eof = false;
	if (!s->running) {
		if (floe_thread_start(&s->th, "floe-kinesis", fetcher, s))
			return floe_error_set(err, FLOE_EIO, "kinesis: cannot start the fetcher");
		s->running = true;
	}
	floe_mutex_lock(&s->mu);
	for (;;) {
		kitem *it = s->head;
		if (!it) {
			int rc = s->fetch_rc;
			if (rc)
				floe_error_set(err, rc, "%s", s->fetch_err.msg);
			floe_mutex_unlock(&s->mu);
			return rc;
		}
		s->head = it->next;
		if (!s->head)
			s->tail = NULL;
		s->q_bytes -= it->bytes;
		floe_cond_broadcast(&s->cv);
		kshard *sh = it->sh;
		char *t = it->end ? floe_strdup(KIN_TOK_END) : it->last_seq;
		if (!t) {
			floe_mutex_unlock(&s->mu);
			item_free(it);
			return floe_error_oom(err);
		}
		it->last_seq = NULL;
		floe_free(sh->tok);
		sh->tok = t;
		if (it->end) {
			sh->done = true;
			item_free(it);
			continue;
		}
		sh->pos = it->b.end;
		atomic_store(&sh->slot->records, sh->pos);
		*b = it->b;
		memset(&it->b, 0, sizeof(it->b));
		item_free(it);
		*got = true;
		floe_mutex_unlock(&s->mu);
		return FLOE_OK;
	}
}

static int kin_position(stream_source *base, stream_offsets *out, floe_error *err)
{
	kinesis_source *s = (kinesis_source *)base;
	int rc = FLOE_OK;
	floe_mutex_lock(&s->mu);
	/* a shard read to its end that the stream no longer lists (past its
	 * retention) is forgotten: its children do not wait for what is gone */
	for (size_t i = 0; i < s->n_shards && !rc; i++) {
		const kshard *sh = s->shards[i];
		if (sh->done && s->list_gen > 0 && sh->seen_gen < s->list_gen)
			continue;
		rc = stream_offsets_set_tok(out, sh->split, sh->pos, sh->tok);
	}
	/* positions of shards not listed yet are kept as they were */
	for (size_t i = 0; i < s->seed.n && !rc; i++) {
		const stream_offset *o = &s->seed.items[i];
		bool gone = s->list_gen > 0 && o->tok && !strcmp(o->tok, KIN_TOK_END);
		if (!gone && !stream_offsets_has(out, o->split) && !known_split(s, o->split))
			rc = stream_offsets_set_tok(out, o->split, o->pos, o->tok);
	}
	floe_mutex_unlock(&s->mu);
	return rc ? floe_error_oom(err) : FLOE_OK;
}

static void kin_wait(stream_source *base, int64_t ms)
{
	kinesis_source *s = (kinesis_source *)base;
	floe_mutex_lock(&s->mu);
	if (!s->head && !s->fetch_rc)
		(void)floe_cond_timedwait(&s->data_cv, &s->mu, ms);
	floe_mutex_unlock(&s->mu);
}

static void kin_free(stream_source *base)
{
	kinesis_source *s = (kinesis_source *)base;
	if (!s)
		return;
	stop_fetcher(s);
	queue_clear(s);
	free_shards(s);
	stream_offsets_reset(&s->seed);
	stream_aws_free(s->aws);
	floe_cond_destroy(&s->cv);
	floe_cond_destroy(&s->data_cv);
	floe_mutex_destroy(&s->mu);
	for (size_t i = 0; i < s->n_slots; i++) {
		floe_free(s->slots[i]->split);
		floe_free(s->slots[i]);
	}
	floe_free(s->slots);
	floe_free(s->stream_name);
	floe_free(s->base.name);
	floe_free(s);
}

static const stream_source_ops kinesis_ops = {
	kin_seek, kin_next, kin_position, kin_wait, NULL, kin_free,
};

int stream_source_kinesis_new(stream_source **out, const char *name, const stream_kinesis_opts *o,
			      floe_error *err)
{
	*out = NULL;
	if (!o->stream || !*o->stream)
		return floe_error_set(err, FLOE_EINVAL, "kinesis source '%s' needs a stream", name);
	kinesis_source *s = floe_calloc(1, sizeof(*s));
	if (!s)
		return floe_error_oom(err);
	if (floe_mutex_init(&s->mu)) {
		floe_free(s);
		return floe_error_oom(err);
	}
	if (floe_cond_init(&s->cv)) {
		floe_mutex_destroy(&s->mu);
		floe_free(s);
		return floe_error_oom(err);
	}
	if (floe_cond_init(&s->data_cv)) {
		floe_cond_destroy(&s->cv);
		floe_mutex_destroy(&s->mu);
		floe_free(s);
		return floe_error_oom(err);
	}
	s->base.ops = &kinesis_ops;
	s->base.format = STREAM_FMT_JSONL;
	s->base.replayable = true;
	s->o = *o;
	if (s->o.max_records <= 0 || s->o.max_records > 10000)
		s->o.max_records = 10000;
	if (s->o.interval_ms <= 0)
		s->o.interval_ms = 200;
	if (s->o.discovery_ms <= 0)
		s->o.discovery_ms = 10000;
	if (!s->o.block_bytes)
		s->o.block_bytes = (size_t)1 << 20;
	if (!s->o.max_record_bytes)
		s->o.max_record_bytes = (size_t)16 << 20;
	if (!s->o.queue_bytes)
		s->o.queue_bytes = (size_t)16 << 20;
	s->o.aws.service = "kinesis";
	stream_offsets_init(&s->seed);
	s->base.name = floe_strdup(name);
	s->stream_name = floe_strdup(o->stream);
	if (!s->base.name || !s->stream_name) {
		kin_free(&s->base);
		return floe_error_oom(err);
	}
	int rc = stream_aws_new(&s->aws, &s->o.aws, err);
	if (rc) {
		kin_free(&s->base);
		return floe_error_prefix(err, rc, "kinesis source '%s': ", name);
	}
	FLOE_INFO("kinesis source '%s': stream '%s' at %s (region %s)", name, s->stream_name,
		  stream_aws_endpoint(s->aws), stream_aws_region(s->aws));
	*out = &s->base;
	return FLOE_OK;
}
