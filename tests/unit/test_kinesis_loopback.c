/*
 * test_kinesis_loopback.c — the Kinesis source through a whole pipeline (2
 * writer tasks, real Parquet writers, the metrics endpoint) against a small
 * Kinesis stand-in on loopback, so the fetcher thread, the coordinator, the
 * writers, the committer and the metrics thread run together under
 * ThreadSanitizer (scripts/test, the tsan preset).
 *
 * The stand-in answers Kinesis' JSON 1.1 calls (X-Amz-Target
 * Kinesis_20131202.ListShards, GetShardIterator, GetRecords) on one thread
 * with POSIX sockets, one request a connection (Connection: close). Its
 * stream has 2 shards: shard 0 open, shard 1 closed (it has an
 * EndingSequenceNumber and its last page no NextShardIterator). Pages hold
 * at most PAGE records, each shard's second GetRecords is refused once
 * with ProvisionedThroughputExceededException and shard 0's fourth with
 * ExpiredIteratorException, so paging, the retry with backoff and a new
 * iterator after the last record fetched run too. The moto-backed interop tests
 * (tests/interop/test_kinesis.py) cover resharding and kills; this one is
 * about threads, and is kept small.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floe/catalog.h"
#include "floe/pipeline.h"
#include "floe/table.h"
#include "harness.h"
#include "util/buf.h"
#include "util/str.h"

#define SHARDS	 2
#define MAX_RECS 1024
#define PAGE	 40

/* ---- the stand-in --------------------------------------------------------------------------- */

typedef struct kin_server {
	int fd, port;
	pthread_t th;
	atomic_bool stop;
	pthread_mutex_t mu; /* the stream, against the test thread */
	int n_recs[SHARDS];
	int getrecords[SHARDS];
	int throttled;
	int expired;
	int after_seq_calls; /* GetShardIterator AFTER_SEQUENCE_NUMBER */
	char last_after_seq[128];
	int trim_horizon_calls;
	int bad_requests;
} kin_server;

static void seq_of(char *out, size_t cap, int shard, int i)
{
	/* decimal, growing within a shard: 49 + shard + 12 digits */
	snprintf(out, cap, "49%d%012d", shard, i);
}

static int id_of(int shard, int i)
{
	return shard * 100000 + i;
}

/* The value of "key" in a flat JSON request body (a string), or "". */
static void json_str(const char *body, const char *key, char *out, size_t cap)
{
	char pat[64];
	out[0] = 0;
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(body, pat);
	if (!p)
		return;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p != '"')
		return;
	p++;
	size_t n = 0;
	while (p[n] && p[n] != '"' && n + 1 < cap)
		n++;
	memcpy(out, p, n);
	out[n] = 0;
}

static int shard_index(const char *id)
{
	const char *d = strrchr(id, '-');
	int i = d ? atoi(d + 1) : -1;
	return i >= 0 && i < SHARDS ? i : -1;
}

static void answer(kin_server *s, const char *target, const char *body, floe_buf *out, int *status)
{
	char v[128];
	*status = 200;
	pthread_mutex_lock(&s->mu);
	if (!strcmp(target, "Kinesis_20131202.ListShards")) {
		(void)!floe_buf_puts(out, "{\"Shards\": [");
		for (int k = 0; k < SHARDS; k++) {
			char first[64], last[64];
			seq_of(first, sizeof(first), k, 0);
			seq_of(last, sizeof(last), k, s->n_recs[k] - 1);
			(void)!floe_buf_printf(
			    out,
			    "%s{\"ShardId\": \"shardId-%012d\", \"HashKeyRange\": "
			    "{\"StartingHashKey\": \"%d\", \"EndingHashKey\": \"%d\"}, "
			    "\"SequenceNumberRange\": {\"StartingSequenceNumber\": \"%s\"",
			    k ? ", " : "", k, k * 100, k * 100 + 99, first);
			if (k == 1)
				(void)!floe_buf_printf(out, ", \"EndingSequenceNumber\": \"%s\"",
						       last);
			(void)!floe_buf_puts(out, "}}");
		}
		(void)!floe_buf_puts(out, "]}");
	} else if (!strcmp(target, "Kinesis_20131202.GetShardIterator")) {
		char id[64], type[48];
		json_str(body, "ShardId", id, sizeof(id));
		json_str(body, "ShardIteratorType", type, sizeof(type));
		int k = shard_index(id), at = -1;
		if (k >= 0 && !strcmp(type, "TRIM_HORIZON")) {
			at = 0;
			s->trim_horizon_calls++;
		} else if (k >= 0 && !strcmp(type, "LATEST")) {
			at = s->n_recs[k];
		} else if (k >= 0 && (!strcmp(type, "AFTER_SEQUENCE_NUMBER") ||
				      !strcmp(type, "AT_SEQUENCE_NUMBER"))) {
			json_str(body, "StartingSequenceNumber", v, sizeof(v));
			char want[64];
			for (int i = 0; i < s->n_recs[k] && at < 0; i++) {
				seq_of(want, sizeof(want), k, i);
				if (!strcmp(want, v))
					at = type[1] == 'F' ? i + 1 : i;
			}
			if (type[1] == 'F') {
				s->after_seq_calls++;
				snprintf(s->last_after_seq, sizeof(s->last_after_seq), "%s", v);
			}
		}
		if (at < 0) {
			*status = 400;
			s->bad_requests++;
			(void)!floe_buf_puts(out,
					     "{\"__type\": \"InvalidArgumentException\", "
					     "\"message\": \"no such shard or sequence number\"}");
		} else {
			(void)!floe_buf_printf(out, "{\"ShardIterator\": \"it-%d-%d\"}", k, at);
		}
	} else if (!strcmp(target, "Kinesis_20131202.GetRecords")) {
		int k = -1, at = -1;
		json_str(body, "ShardIterator", v, sizeof(v));
		if (sscanf(v, "it-%d-%d", &k, &at) != 2 || k < 0 || k >= SHARDS || at < 0 ||
		    at > s->n_recs[k]) {
			*status = 400;
			s->bad_requests++;
			(void)!floe_buf_puts(out, "{\"__type\": \"InvalidArgumentException\", "
						  "\"message\": \"bad iterator\"}");
		} else if (++s->getrecords[k] == 2) {
			*status = 400;
			s->throttled++;
			(void)!floe_buf_puts(
			    out, "{\"__type\": \"ProvisionedThroughputExceededException\", "
				 "\"message\": \"Rate exceeded for shard\"}");
		} else if (k == 0 && s->getrecords[k] == 4) {
			*status = 400;
			s->expired++;
			(void)!floe_buf_puts(out, "{\"__type\": \"ExpiredIteratorException\", "
						  "\"message\": \"Iterator expired\"}");
		} else {
			int end = at + PAGE < s->n_recs[k] ? at + PAGE : s->n_recs[k];
			(void)!floe_buf_puts(out, "{\"Records\": [");
			for (int i = at; i < end; i++) {
				char rec[96], seq[64];
				floe_buf b64;
				floe_buf_init(&b64, 0);
				int n = snprintf(rec, sizeof(rec), "{\"id\": %d, \"shard\": %d}",
						 id_of(k, i), k);
				(void)!floe_base64_encode(&b64, (const uint8_t *)rec, (size_t)n);
				seq_of(seq, sizeof(seq), k, i);
				(void)!floe_buf_printf(
				    out,
				    "%s{\"SequenceNumber\": \"%s\", "
				    "\"ApproximateArrivalTimestamp\": 1767323045.%03d, "
				    "\"Data\": \"%.*s\", \"PartitionKey\": \"pk%d\"}",
				    i > at ? ", " : "", seq, i % 1000, (int)b64.len,
				    b64.data ? (const char *)b64.data : "", i);
				floe_buf_reset(&b64);
			}
			(void)!floe_buf_puts(out, "]");
			if (k == 1 && end == s->n_recs[k])
				(void)!floe_buf_puts(
				    out, ", \"MillisBehindLatest\": 0}"); /* closed: the end */
			else
				(void)!floe_buf_printf(out,
						       ", \"NextShardIterator\": \"it-%d-%d\", "
						       "\"MillisBehindLatest\": %d}",
						       k, end, (s->n_recs[k] - end) * 10);
		}
	} else {
		*status = 400;
		s->bad_requests++;
		(void)!floe_buf_puts(out, "{\"__type\": \"UnknownOperationException\"}");
	}
	pthread_mutex_unlock(&s->mu);
}

/* The value of header name (given as "\r\nName:") in the request head, case-insensitively. */
static const char *header(const char *req, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = req; *p; p++) {
		size_t i = 0;
		while (i < n && p[i] &&
		       tolower((unsigned char)p[i]) == tolower((unsigned char)name[i]))
			i++;
		if (i == n) {
			p += n;
			while (*p == ' ')
				p++;
			return p;
		}
	}
	return NULL;
}

/* One HTTP/1.1 request on c, answered, then the connection closed. */
static void serve(kin_server *s, int c)
{
	char req[16384];
	size_t got = 0, head = 0, clen = 0;
	bool continued = false;
	for (;;) {
		struct pollfd pf = {c, POLLIN, 0};
		if (poll(&pf, 1, 5000) <= 0)
			return;
		ssize_t r = read(c, req + got, sizeof(req) - 1 - got);
		if (r <= 0)
			return;
		got += (size_t)r;
		req[got] = 0;
		if (!head) {
			char *e = strstr(req, "\r\n\r\n");
			if (!e) {
				if (got == sizeof(req) - 1)
					return;
				continue;
			}
			head = (size_t)(e - req) + 4;
			const char *cl = header(req, "\r\nContent-Length:");
			clen = cl ? (size_t)strtoul(cl, NULL, 10) : 0;
			if (head + clen > sizeof(req) - 1)
				return;
			const char *ex = header(req, "\r\nExpect:");
			if (ex && !strncmp(ex, "100-continue", 12) && !continued) {
				continued = true;
				if (write(c, "HTTP/1.1 100 Continue\r\n\r\n", 25) != 25)
					return;
			}
		}
		if (got >= head + clen)
			break;
	}
	char target[96] = "";
	const char *t = header(req, "\r\nX-Amz-Target:");
	if (t) {
		size_t n = strcspn(t, "\r\n");
		snprintf(target, sizeof(target), "%.*s", (int)(n < 95 ? n : 95), t);
	}
	floe_buf out;
	floe_buf_init(&out, 0);
	int status;
	answer(s, target, req + head, &out, &status);
	char hdr[256];
	int hn = snprintf(hdr, sizeof(hdr),
			  "HTTP/1.1 %d %s\r\nContent-Type: application/x-amz-json-1.1\r\n"
			  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			  status, status == 200 ? "OK" : "Bad Request", out.len);
	if (write(c, hdr, (size_t)hn) == hn && out.len)
		(void)!write(c, out.data, out.len);
	floe_buf_reset(&out);
}

static void *server_main(void *arg)
{
	kin_server *s = arg;
	while (!atomic_load(&s->stop)) {
		struct pollfd pf = {s->fd, POLLIN, 0};
		if (poll(&pf, 1, 50) <= 0)
			continue;
		int c = accept(s->fd, NULL, NULL);
		if (c < 0)
			continue;
		serve(s, c);
		close(c);
	}
	return NULL;
}

static void server_start(kin_server *s, int recs0, int recs1)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	s->n_recs[0] = recs0;
	s->n_recs[1] = recs1;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	socklen_t al = sizeof(a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_CHECK(s->fd >= 0 && bind(s->fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	T_CHECK(listen(s->fd, 16) == 0 && getsockname(s->fd, (struct sockaddr *)&a, &al) == 0);
	s->port = ntohs(a.sin_port);
	T_CHECK(pthread_create(&s->th, NULL, server_main, s) == 0);
}

static void server_stop(kin_server *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->th, NULL);
	close(s->fd);
	pthread_mutex_destroy(&s->mu);
}

/* ---- the pipeline ---------------------------------------------------------------------------- */

/* A port nothing listens on now, for the metrics endpoint. */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
	struct sockaddr_in a = {0};
	socklen_t al = sizeof(a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &al) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* Stops the pipeline once want records are committed, after a scrape of
 * its metrics (the HTTP thread reads the source's gauges meanwhile). */
typedef struct watch {
	floe_pipeline *p;
	int64_t want;
	bool scraped, stopped;
	char metrics[16384];
} watch;

static void scrape(watch *w, int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	size_t got = 0;
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
		ssize_t r;
		if (write(fd, req, sizeof(req) - 1) > 0)
			while (got < sizeof(w->metrics) - 1 &&
			       (r = read(fd, w->metrics + got, sizeof(w->metrics) - 1 - got)) > 0)
				got += (size_t)r;
	}
	w->metrics[got] = 0;
	if (fd >= 0)
		close(fd);
}

static void on_progress(const floe_pipeline_stats *st, void *payload)
{
	watch *w = payload;
	if (w->stopped || st->records_committed < w->want)
		return;
	if (!w->scraped && st->metrics_port > 0) {
		scrape(w, st->metrics_port);
		w->scraped = true;
	}
	w->stopped = true;
	floe_pipeline_stop(w->p);
}

static int run_until(floe_catalog *cat, const char *yaml, int64_t want, watch *w,
		     floe_pipeline_stats *st, floe_error *err)
{
	floe_pipeline_opts o = FLOE_PIPELINE_OPTS_INIT;
	memset(w, 0, sizeof(*w));
	w->want = want;
	o.progress = on_progress;
	o.progress_payload = w;
	o.progress_interval_ms = 20;
	int rc = floe_pipeline_open(&w->p, cat, yaml, strlen(yaml), &o, err);
	if (rc)
		return rc;
	rc = floe_pipeline_run(w->p, err);
	floe_pipeline_get_stats(w->p, st);
	floe_pipeline_free(w->p);
	w->p = NULL;
	return rc;
}

typedef struct sums {
	int64_t snapshots, records, total;
	char offsets[2048];
} sums;

static int sum_cb(const floe_snapshot_info *s, void *payload)
{
	sums *x = payload;
	x->snapshots++;
	for (size_t i = 0; i < s->n_summary; i++) {
		const floe_prop *kv = &s->summary[i];
		if (!strcmp(kv->key, "added-records"))
			x->records += strtoll(kv->value, NULL, 10);
		else if (!strcmp(kv->key, "total-records"))
			x->total = strtoll(kv->value, NULL, 10); /* the last one wins: the newest */
		else if (!strcmp(kv->key, "floe.source-offsets"))
			snprintf(x->offsets, sizeof(x->offsets), "%s", kv->value);
	}
	return 0;
}

static sums table_sums(floe_catalog *cat)
{
	sums x;
	floe_table *t = NULL;
	floe_error err = {0};
	memset(&x, 0, sizeof(x));
	T_OK(floe_table_load(&t, cat, "db", "kin", &err), &err);
	if (t)
		T_OK(floe_table_snapshots(t, sum_cb, &x, &err), &err);
	floe_table_free(t);
	return x;
}

static void test_kinesis_pipeline_two_tasks(void)
{
	const char *dir = t_tmpdir();
	char yaml[2048], seq[64];
	floe_error err = {0};
	floe_catalog *cat = NULL;
	kin_server srv;
	watch w;
	floe_pipeline_stats st;
	T_OK(floe_catalog_open_default(&cat, dir, &err), &err);
	setenv("AWS_ACCESS_KEY_ID", "AKIDLOOPBACK", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "loopback-secret", 1);
	server_start(&srv, 170, 130);
	int mport = free_port();
	snprintf(yaml, sizeof(yaml),
		 "pipeline.name: kin\n"
		 "execution.checkpointing.interval: 100ms\n"
		 "parallelism.default: 2\n"
		 "metrics.port: %d\n"
		 "sources:\n"
		 "  - name: k\n"
		 "    type: kinesis\n"
		 "    stream: loop\n"
		 "    aws.endpoint: http://127.0.0.1:%d\n"
		 "    aws.region: us-east-1\n"
		 "    aws.credentials.provider: ENV_VAR\n"
		 "    scan.stream.initpos: TRIM_HORIZON\n"
		 "    scan.shard.getrecords.intervalmillis: 20\n"
		 "    scan.shard.discovery.intervalmillis: 200\n"
		 "    metadata: {shard-id: shard_id}\n"
		 "tables:\n"
		 "  - name: db.kin\n"
		 "    schema: \"id long not null, shard int, shard_id string\"\n"
		 "    partition-by: \"shard\"\n"
		 "    distribution-mode: hash\n",
		 mport, srv.port);

	/* every record of both shards, then stopped: a last checkpoint commits */
	T_OK(run_until(cat, yaml, 300, &w, &st, &err), &err);
	T_EQ_INT(st.records_committed, 300);
	T_EQ_INT(st.records_dead, 0);
	sums a = table_sums(cat);
	T_EQ_INT(a.records, 300);
	T_EQ_INT(a.total, 300);
	T_CHECK(strstr(a.offsets, "kinesis:loop:shardId-000000000001") != NULL);
	T_CHECK(strstr(a.offsets, "SHARD_END") != NULL); /* shard 1 read to its end */
	seq_of(seq, sizeof(seq), 0, 169);
	T_CHECK(strstr(a.offsets, seq) != NULL); /* shard 0: its last record */
	T_CHECK(w.scraped && strstr(w.metrics, "floe_kinesis_shards_reading") != NULL);
	T_CHECK(strstr(w.metrics, "floe_kinesis_millis_behind_latest") != NULL);
	/* per shard: every record handed out (all were committed), and its lag */
	T_CHECK(strstr(w.metrics, "floe_kinesis_shard_records_read{pipeline=\"kin\",source=\"k\","
				  "stream=\"loop\",shard=\"shardId-000000000000\"} 170") != NULL);
	T_CHECK(strstr(w.metrics, "floe_kinesis_shard_records_read{pipeline=\"kin\",source=\"k\","
				  "stream=\"loop\",shard=\"shardId-000000000001\"} 130") != NULL);
	T_CHECK(strstr(w.metrics, "floe_kinesis_shard_millis_behind_latest{") != NULL);
	pthread_mutex_lock(&srv.mu);
	T_EQ_INT(srv.throttled, 2); /* each shard's second GetRecords, retried */
	T_EQ_INT(srv.expired, 1);   /* shard 0's 4th: asked again after record 79 */
	T_EQ_INT(srv.after_seq_calls, 1);
	seq_of(seq, sizeof(seq), 0, 79);
	T_EQ_STR(srv.last_after_seq, seq);
	T_EQ_INT(srv.bad_requests, 0);
	T_EQ_INT(srv.trim_horizon_calls, 2);
	/* records arrive on the open shard while the pipeline is away */
	srv.n_recs[0] = 230;
	pthread_mutex_unlock(&srv.mu);

	/* the restart resumes after shard 0's committed sequence number and
	 * leaves the closed shard alone: exactly the 60 new records */
	T_OK(run_until(cat, yaml, 60, &w, &st, &err), &err);
	T_EQ_INT(st.records_committed, 60);
	sums b = table_sums(cat);
	T_EQ_INT(b.records, 360);
	T_EQ_INT(b.total, 360);
	pthread_mutex_lock(&srv.mu);
	T_EQ_INT(srv.after_seq_calls, 2);
	seq_of(seq, sizeof(seq), 0, 169);
	T_EQ_STR(srv.last_after_seq, seq);
	T_EQ_INT(srv.trim_horizon_calls, 2);
	T_EQ_INT(srv.bad_requests, 0);
	pthread_mutex_unlock(&srv.mu);
	server_stop(&srv);
	floe_catalog_free(cat);
}

int main(void)
{
	T_RUN(test_kinesis_pipeline_two_tasks);
	return t_finish();
}
