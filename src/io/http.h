/*
 * http.h — HTTP requests over libcurl for the S3 FileIO, the AWS credential
 * providers and the REST/Glue catalogs: a thread-safe pool of connections,
 * one call per request, and the retry schedule (exponential backoff with
 * full jitter inside a total deadline) the callers share.
 *
 * A call returns FLOE_OK whenever a response arrived, whatever its status;
 * transport failures are FLOE_ETIMEDOUT or FLOE_EIO, with resp->sent saying
 * whether the request may have reached the server (so a commit can tell
 * "never sent" from "outcome unknown").
 *
 * Thread-safety: a floe_http may be used from several threads at once.
 */
#ifndef FLOE_IO_HTTP_H
#define FLOE_IO_HTTP_H

#include "floe/common.h"
#include "util/buf.h"

typedef struct floe_http floe_http;

typedef struct floe_http_req {
	const char *method; /* GET, HEAD, PUT, POST, DELETE */
	const char *url;
	const char *const *headers; /* "Name: value" */
	size_t n_headers;
	const void *body; /* sent when body_len > 0 or method is PUT/POST */
	size_t body_len;
	/* the response body: appended to out (bounded by its max), or copied
	 * into dst (at most dst_cap bytes, more is an error), or dropped */
	floe_buf *out;
	void *dst;
	size_t dst_cap;
	/* when set, the body of an answer with status >= 300 goes here instead
	 * (an error document, not data) */
	floe_buf *err_out;
	long connect_timeout_ms; /* 0: 10 s */
	long socket_timeout_ms;  /* no byte for this long aborts (0: 60 s) */
	long total_timeout_ms;   /* 0: none */
	bool accept_compressed;  /* ask for gzip/zstd bodies (never for ranged reads) */
	/* a request that must reach the server at most once (a catalog commit):
	 * sent on a new connection, never on a kept-alive one, because libcurl
	 * silently sends a request again when a reused connection closes
	 * before any answer — and a commit sent twice answers "conflict" for
	 * its own first copy */
	bool at_most_once;
} floe_http_req;

typedef struct floe_http_resp {
	long status;
	size_t got; /* body bytes received (into out or dst) */
	int64_t content_length; /* -1 when not given */
	char etag[256];
	char content_range[128];
	char last_modified[64];
	char content_type[128];
	char write_id[64]; /* x-amz-meta-floe-write-id (S3 HEAD) */
	int64_t retry_after_ms; /* -1 when not given */
	bool sent;              /* the request may have reached the server */
} floe_http_resp;

floe_http *floe_http_new(void);
void floe_http_free(floe_http *h);

int floe_http_perform(floe_http *h, const floe_http_req *req, floe_http_resp *resp,
		      floe_error *err) FLOE_WUR;

/* The retry schedule. */
typedef struct floe_retry {
	int max_attempts;    /* attempts in all (>= 1) */
	int64_t min_wait_ms; /* first backoff cap */
	int64_t max_wait_ms; /* largest backoff cap */
	int64_t deadline_ms; /* all attempts and waits together (0: none) */
	/* state */
	int attempt;
	int64_t start_ns;
} floe_retry;

void floe_retry_start(floe_retry *r);
/* Wait before the next attempt (at least hint_ms when > 0, a server's
 * Retry-After); false when the attempts or the deadline are used up. */
bool floe_retry_next(floe_retry *r, int64_t hint_ms);
/* Milliseconds left of the deadline (INT64_MAX without one). */
int64_t floe_retry_left_ms(const floe_retry *r);

/* Test hook: FLOE_TEST_HTTP_LOG=<file> appends "METHOD URL STATUS" per
 * request (requests-per-file counts in tests and benchmarks). */

#endif
