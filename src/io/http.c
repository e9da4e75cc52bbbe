/*
 * http.c — libcurl easy handles in a pool, one request per call (http.h).
 *
 * DESIGN: curl easy handles keep their connections alive between requests
 * but may be used by one thread at a time; the pool hands a handle to each
 * request and takes it back, so parallel writers reuse connections without
 * sharing a handle. Signals are off (CURLOPT_NOSIGNAL) because floe is
 * multi-threaded. libcurl allocates with its own allocator.
 */
#include "io/http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/alloc.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/str.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define POOL_MAX 16

struct floe_http {
	floe_mutex lock;
	CURL *free_handles[POOL_MAX];
	int n_free;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static bool global_ok;

static void global_init(void)
{
	global_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

floe_http *floe_http_new(void)
{
	pthread_once(&global_once, global_init);
	if (!global_ok)
		return NULL;
	floe_http *h = floe_calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	if (floe_mutex_init(&h->lock)) {
		floe_free(h);
		return NULL;
	}
	return h;
}

void floe_http_free(floe_http *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->n_free; i++)
		curl_easy_cleanup(h->free_handles[i]);
	floe_mutex_destroy(&h->lock);
	floe_free(h);
}

static CURL *take(floe_http *h)
{
	CURL *c = NULL;
	floe_mutex_lock(&h->lock);
	if (h->n_free > 0)
		c = h->free_handles[--h->n_free];
	floe_mutex_unlock(&h->lock);
	if (c)
		curl_easy_reset(c);
	else
		c = curl_easy_init();
	return c;
}

static void give_back(floe_http *h, CURL *c, bool reusable)
{
	if (!reusable) {
		curl_easy_cleanup(c);
		return;
	}
	floe_mutex_lock(&h->lock);
	if (h->n_free < POOL_MAX) {
		h->free_handles[h->n_free++] = c;
		c = NULL;
	}
	floe_mutex_unlock(&h->lock);
	if (c)
		curl_easy_cleanup(c);
}

typedef struct sink {
	CURL *c;
	const floe_http_req *req;
	floe_http_resp *resp;
	bool overflow;
	const uint8_t *body;
	size_t body_len, body_pos;
} sink;

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	sink *s = ud;
	size_t n = size * nmemb;
	if (s->req->err_out) {
		long st = 0;
		curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &st);
		if (st >= 300) {
			/* error documents are small; past the buffer's cap they are cut */
			(void)!floe_buf_append(s->req->err_out, p, n);
			return n;
		}
	}
	if (s->req->out) {
		if (floe_buf_append(s->req->out, p, n)) {
			s->overflow = true;
			return 0;
		}
	} else if (s->req->dst) {
		if (n > s->req->dst_cap - s->resp->got) {
			s->overflow = true;
			return 0;
		}
		memcpy((uint8_t *)s->req->dst + s->resp->got, p, n);
	}
	s->resp->got += n;
	return n;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *ud)
{
	sink *s = ud;
	size_t n = size * nmemb, left = s->body_len - s->body_pos;
	if (n > left)
		n = left;
	if (n == 0)
		return 0;
	memcpy(p, s->body + s->body_pos, n);
	s->body_pos += n;
	return n;
}

static int seek_body(void *ud, curl_off_t off, int origin)
{
	sink *s = ud;
	if (origin != SEEK_SET || off < 0 || (size_t)off > s->body_len)
		return CURL_SEEKFUNC_FAIL;
	s->body_pos = (size_t)off;
	return CURL_SEEKFUNC_OK;
}

static void copy_value(char *dst, size_t cap, const char *v, size_t n)
{
	while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
		n--;
	while (n && *v == ' ') {
		v++;
		n--;
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = 0;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	sink *s = ud;
	size_t n = size * nmemb;
	const char *colon = memchr(p, ':', n);
	if (!colon)
		return n;
	size_t kl = (size_t)(colon - p), vl = n - kl - 1;
	const char *v = colon + 1;
	floe_http_resp *r = s->resp;
	if (kl == 4 && !strncasecmp(p, "etag", 4))
		copy_value(r->etag, sizeof(r->etag), v, vl);
	else if (kl == 13 && !strncasecmp(p, "content-range", 13))
		copy_value(r->content_range, sizeof(r->content_range), v, vl);
	else if (kl == 13 && !strncasecmp(p, "last-modified", 13))
		copy_value(r->last_modified, sizeof(r->last_modified), v, vl);
	else if (kl == 24 && !strncasecmp(p, "x-amz-meta-floe-write-id", 24))
		copy_value(r->write_id, sizeof(r->write_id), v, vl);
	else if (kl == 12 && !strncasecmp(p, "content-type", 12))
		copy_value(r->content_type, sizeof(r->content_type), v, vl);
	else if (kl == 14 && !strncasecmp(p, "content-length", 14)) {
		char t[32];
		int64_t x;
		copy_value(t, sizeof(t), v, vl);
		if (floe_parse_i64(t, strlen(t), &x) && x >= 0)
			r->content_length = x;
	} else if (kl == 11 && !strncasecmp(p, "retry-after", 11)) {
		char t[32];
		int64_t x;
		copy_value(t, sizeof(t), v, vl);
		if (floe_parse_i64(t, strlen(t), &x) && x >= 0 && x < 3600)
			r->retry_after_ms = x * 1000;
	}
	return n;
}

static void log_request(const floe_http_req *req, long status)
{
	const char *path = getenv("FLOE_TEST_HTTP_LOG");
	if (!path || !*path)
		return;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	/* the URL without its query (signatures and tokens stay out of logs) */
	const char *q = strchr(req->url, '?');
	int ul = q ? (int)(q - req->url) : (int)strlen(req->url);
	const char *op = q ? q + 1 : "";
	char opn[32];
	size_t k = 0;
	while (op[k] && op[k] != '=' && op[k] != '&' && k + 1 < sizeof(opn)) {
		opn[k] = op[k];
		k++;
	}
	opn[k] = 0;
	fprintf(f, "%s %.*s%s%s %ld\n", req->method, ul, req->url, k ? "?" : "", opn, status);
	fclose(f);
}

int floe_http_perform(floe_http *h, const floe_http_req *req, floe_http_resp *resp,
		      floe_error *err)
{
	struct curl_slist *hl = NULL;
	sink s = {NULL, req, resp, false, req->body, req->body_len, 0};
	CURLcode cc;
	int rc = FLOE_OK;
	memset(resp, 0, sizeof(*resp));
	resp->content_length = -1;
	resp->retry_after_ms = -1;
	CURL *c = take(h);
	if (!c)
		return floe_error_oomf(err, "cannot start an HTTP request");
	s.c = c;
	for (size_t i = 0; i < req->n_headers; i++) {
		struct curl_slist *t = curl_slist_append(hl, req->headers[i]);
		if (!t) {
			curl_slist_free_all(hl);
			give_back(h, c, true);
			return floe_error_oom(err);
		}
		hl = t;
	}
	/* no "Expect: 100-continue" round trip; an empty Content-Type is not sent */
	hl = curl_slist_append(hl, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, req->url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &s);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 req->connect_timeout_ms > 0 ? req->connect_timeout_ms : 10000L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
			 (req->socket_timeout_ms > 0 ? req->socket_timeout_ms : 60000L) / 1000 > 0
				 ? (req->socket_timeout_ms > 0 ? req->socket_timeout_ms : 60000L) / 1000
				 : 1L);
	if (req->total_timeout_ms > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->total_timeout_ms);
	if (req->accept_compressed)
		curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	if (req->at_most_once) {
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
	}
	/* proxies come from the usual variables (http_proxy, no_proxy) */
	if (!strcmp(req->method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(req->method, "PUT") || !strcmp(req->method, "POST") ||
		   req->body_len > 0) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, &s);
		curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, seek_body);
		curl_easy_setopt(c, CURLOPT_SEEKDATA, &s);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)req->body_len);
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
	} else if (strcmp(req->method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
	}
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	if (cc == CURLE_OK) {
		log_request(req, resp->status);
	} else if (s.overflow) {
		rc = floe_error_set(err, FLOE_ENOMEM, "%s %s: the response is larger than expected",
				    req->method, req->url);
		resp->sent = true;
	} else {
		/* nothing reached the server when the connection never opened */
		resp->sent = !(cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_CONNECT ||
			       cc == CURLE_COULDNT_RESOLVE_PROXY);
		log_request(req, -(long)cc);
		rc = floe_error_set(err,
				    cc == CURLE_OPERATION_TIMEDOUT ? FLOE_ETIMEDOUT : FLOE_EIO,
				    "%s %s: %s", req->method, req->url, curl_easy_strerror(cc));
		resp->status = 0;
	}
	curl_slist_free_all(hl);
	give_back(h, c, cc == CURLE_OK);
	return rc;
}

void floe_retry_start(floe_retry *r)
{
	if (r->max_attempts < 1)
		r->max_attempts = 1;
	r->attempt = 0;
	r->start_ns = floe_monotonic_ns();
}

int64_t floe_retry_left_ms(const floe_retry *r)
{
	if (r->deadline_ms <= 0)
		return INT64_MAX;
	int64_t used = (floe_monotonic_ns() - r->start_ns) / 1000000;
	return r->deadline_ms - used;
}

bool floe_retry_next(floe_retry *r, int64_t hint_ms)
{
	if (++r->attempt >= r->max_attempts)
		return false;
	/* full jitter: a random wait below min(max_wait, min_wait * 2^(attempt-1)) */
	int64_t cap = r->min_wait_ms > 0 ? r->min_wait_ms : 1;
	for (int i = 1; i < r->attempt && cap < r->max_wait_ms; i++)
		cap *= 2;
	if (r->max_wait_ms > 0 && cap > r->max_wait_ms)
		cap = r->max_wait_ms;
	int64_t wait = (int64_t)(floe_random_u64() % (uint64_t)(cap + 1));
	if (hint_ms > wait)
		wait = hint_ms;
	int64_t left = floe_retry_left_ms(r);
	if (left <= wait)
		return false;
	floe_sleep_ms(wait);
	return true;
}
