/*
 * s3.c — the S3 FileIO (s3.h) over libcurl (http.h) and SigV4 (sigv4.h).
 *
 * DESIGN:
 *  - Every request goes through s3_do: it signs (the payload's SHA-256 in
 *    x-amz-content-sha256), sends, and retries with full-jitter backoff
 *    inside a deadline on 429/500/502/503/504, on SlowDown/InternalError/
 *    RequestTimeout error documents and on transport failures (resets,
 *    timeouts, truncated bodies). Every S3 request floe makes is idempotent
 *    except CompleteMultipartUpload, whose lost answer is resolved by a HEAD.
 *  - Outputs hold at most one part (s3.multipart.part-size-bytes): a file
 *    smaller than a part is one PUT; a larger one becomes a multipart upload
 *    whose parts are sent as they fill, completed on close and aborted on
 *    abort or on any failure, so no incomplete upload is left behind by a
 *    failure floe sees.
 *  - overwrite=false sends If-None-Match: * (S3 conditional writes): a 412
 *    is FLOE_EEXISTS and nothing is replaced. A server that ignores the
 *    header replaces; floe's catalogs never rely on it for commits.
 *  - Opening an input costs no HEAD: its first GET asks for read-ahead
 *    bytes from the end (a suffix range: Parquet and Puffin footers) or,
 *    for one opened to be read from its start (open_read_seq: metadata,
 *    manifest lists, manifests), from the start, and learns the size from
 *    Content-Range; a file smaller than the read-ahead is that one request.
 *    Later reads smaller than the read-ahead are served from one ranged GET
 *    of read-ahead bytes (page headers, small column chunks), larger ones
 *    are one ranged GET straight into the caller's buffer.
 *  - S3 cannot rename: rename_noreplace is FLOE_EUNSUPPORTED (the SQL and
 *    REST catalogs commit without it).
 */
#include "io/s3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "io/aws.h"
#include "io/aws_secret.h"
#include "io/http.h"
#include "io/s3_xml.h"
#include "io/sigv4.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define MIN_PART (5u << 20)
#define DEFAULT_PART (8u << 20)
#define MAX_PARTS 10000
#define ERRDOC_MAX (64u << 10)
#define LIST_MAX (16u << 20)

typedef struct s3io {
	floe_fileio base;
	floe_http *http;
	floe_aws_provider *aws;
	char *endpoint; /* scheme://host[:port], no path, or NULL: AWS's */
	char *region;
	bool path_style;
	size_t part_size;
	size_t read_ahead;
	int64_t max_keys;  /* ListObjectsV2 page size */
	size_t delete_batch; /* keys per DeleteObjects */
	floe_retry retry; /* template */
	/* per-prefix credentials (a REST catalog's vended ones), longest prefix
	 * wins; the chain (aws) for paths under none */
	floe_mutex vc_lock;
	struct vended *vc;
	size_t n_vc;
	/* where new vended credentials come from (floe_io_set_renewer) */
	floe_io_renew_fn renew_fn;
	void *renew_payload;
	int n_renewing;	   /* renewals under way (vc_lock) */
	floe_cond renewed; /* with vc_lock: a renewal ended */
} s3io;

typedef struct vended {
	char *prefix; /* "bucket/key-prefix" */
	char *given;  /* the prefix as set ("s3a://bucket/key-prefix"), for the renewer */
	char *access_key, *secret_key, *token;
	int64_t expires_ms;  /* s3.session-token-expires-at-ms (0: not given) */
	int64_t renew_at_ms; /* when a request asks the renewer for new ones (0: never) */
} vended;

/* renewal: at half the life left, at most 5 minutes before the expiry, and
 * not more often than once a second for one prefix */
#define RENEW_LEAD_MAX_MS 300000
#define RENEW_EVERY_MIN_MS 1000

/* ---- paths ---------------------------------------------------------------------- */

int floe_s3_split(floe_arena *a, const char *uri, char **bucket, char **key, floe_error *err)
{
	const char *p = NULL;
	if (!strncmp(uri, "s3://", 5))
		p = uri + 5;
	else if (!strncmp(uri, "s3a://", 6) || !strncmp(uri, "s3n://", 6))
		p = uri + 6;
	if (!p)
		return floe_error_set(err, FLOE_EINVAL, "'%s' is not an s3:// path", uri);
	const char *slash = strchr(p, '/');
	size_t bl = slash ? (size_t)(slash - p) : strlen(p);
	if (bl == 0 || bl > 63)
		return floe_error_set(err, FLOE_EINVAL, "'%s': bad bucket name", uri);
	*bucket = floe_arena_strndup(a, p, bl);
	*key = floe_arena_strdup(a, slash ? slash + 1 : "");
	if (!*bucket || !*key)
		return floe_error_oom(err);
	return FLOE_OK;
}

/* scheme of the path as given ("s3", "s3a", "s3n"), for names handed back */
static size_t scheme_len(const char *uri)
{
	const char *c = strstr(uri, "://");
	return c ? (size_t)(c - uri) : 2;
}

/* ---- requests ------------------------------------------------------------------- */

typedef struct s3req {
	const char *method;
	const char *bucket;
	const char *key;   /* NULL: the bucket itself */
	const char *query; /* encoded, without '?', or NULL */
	const char *cred_key; /* a bucket request's key that picks vended credentials */
	/* extra headers: names and values; x-amz-* ones are signed */
	const char *hname[4];
	const char *hvalue[4];
	size_t n_h;
	const void *body;
	size_t body_len;
	floe_buf *out;
	void *dst;
	size_t dst_cap;
} s3req;

static bool retryable_status(long st)
{
	return st == 429 || st == 500 || st == 502 || st == 503 || st == 504;
}

/* the <Code> of an error document, or "" */
static void err_code(const floe_buf *doc, char *code, size_t cap)
{
	floe_arena a;
	floe_xml *x;
	code[0] = 0;
	if (!doc->len)
		return;
	floe_arena_init(&a, 4096);
	if (!floe_xml_parse(&x, &a, (const char *)doc->data, doc->len, NULL) &&
	    !strcmp(x->name, "Error")) {
		const char *c = floe_xml_child_text(x, "Code");
		if (c)
			snprintf(code, cap, "%s", c);
	}
	floe_arena_reset(&a);
}

static void err_message(const floe_buf *doc, char *msg, size_t cap)
{
	floe_arena a;
	floe_xml *x;
	msg[0] = 0;
	if (!doc->len)
		return;
	floe_arena_init(&a, 4096);
	if (!floe_xml_parse(&x, &a, (const char *)doc->data, doc->len, NULL) &&
	    !strcmp(x->name, "Error")) {
		const char *c = floe_xml_child_text(x, "Code");
		const char *m = floe_xml_child_text(x, "Message");
		snprintf(msg, cap, "%s%s%s", c ? c : "", m && *m ? ": " : "", m ? m : "");
	}
	floe_arena_reset(&a);
}

static int build_url(s3io *s, const s3req *q, floe_buf *url, floe_buf *path, floe_buf *host)
{
	int rc = 0;
	const char *ep = s->endpoint;
	char dflt[256];
	if (!ep) {
		snprintf(dflt, sizeof(dflt), "https://s3.%s.amazonaws.com", s->region);
		ep = dflt;
	}
	const char *sep = strstr(ep, "://");
	size_t sl = (size_t)(sep - ep);
	const char *h = sep + 3;
	if (s->path_style) {
		rc |= floe_buf_append(host, h, strlen(h));
		rc |= floe_buf_putc(path, '/');
		rc |= floe_buf_puts(path, q->bucket);
		if (q->key) {
			rc |= floe_buf_putc(path, '/');
			rc |= floe_aws_uri_encode(path, q->key, strlen(q->key), true);
		}
	} else {
		rc |= floe_buf_printf(host, "%s.%s", q->bucket, h);
		rc |= floe_buf_putc(path, '/');
		if (q->key)
			rc |= floe_aws_uri_encode(path, q->key, strlen(q->key), true);
	}
	rc |= floe_buf_append(url, ep, sl + 3);
	rc |= floe_buf_puts(url, floe_buf_cstr(host));
	rc |= floe_buf_puts(url, floe_buf_cstr(path));
	if (q->query && *q->query) {
		rc |= floe_buf_putc(url, '?');
		rc |= floe_buf_puts(url, q->query);
	}
	return rc ? FLOE_ENOMEM : FLOE_OK;
}

/* The vended credentials of the longest prefix holding bucket/key (under
 * vc_lock), or NULL. */
static const vended *vended_match(const s3io *s, const char *bucket, const char *key)
{
	size_t bl = strlen(bucket), best = 0;
	const vended *hit = NULL;
	for (size_t i = 0; i < s->n_vc; i++) {
		const char *p = s->vc[i].prefix;
		size_t pl = strlen(p);
		if (strncmp(p, bucket, bl) || (p[bl] != '/' && p[bl] != 0))
			continue;
		const char *pk = p[bl] ? p + bl + 1 : "";
		if (!strncmp(key, pk, strlen(pk)) && (!hit || pl > best)) {
			hit = &s->vc[i];
			best = pl;
		}
	}
	return hit;
}

/*
 * The credential-provider hook: when the vended credentials for bucket/key
 * are due for renewal, the first request to see it asks the renewer (a REST
 * catalog's loadCredentials) while the others go on with the current ones,
 * still valid until their expiry. A failed renewal is tried again a second
 * later; its message names the prefix, never a key.
 */
static void renew_if_due(s3io *s, const char *bucket, const char *key)
{
	char *given = NULL;
	int64_t now = floe_now_ms();
	floe_mutex_lock(&s->vc_lock);
	vended *hit = s->renew_fn ? (vended *)vended_match(s, bucket, key) : NULL;
	if (hit && hit->renew_at_ms && now >= hit->renew_at_ms) {
		hit->renew_at_ms = now + RENEW_EVERY_MIN_MS; /* claimed */
		if ((given = floe_strdup(hit->given)))
			s->n_renewing++;
	} else if (hit && hit->expires_ms && now >= hit->expires_ms) {
		/* expired: wait for a renewal under way rather than send a request
		 * that cannot succeed */
		int64_t until = now + 60000;
		while (s->n_renewing > 0 && floe_now_ms() < until)
			(void)floe_cond_timedwait(&s->renewed, &s->vc_lock, 1000);
	}
	floe_io_renew_fn fn = s->renew_fn;
	void *payload = s->renew_payload;
	floe_mutex_unlock(&s->vc_lock);
	if (!given)
		return;
	floe_error e;
	floe_error_clear(&e);
	if (fn(payload, given, &e))
		FLOE_WARN("S3: renewing the vended credentials for %s: %s (tried again in %d s)",
			  given, e.msg, RENEW_EVERY_MIN_MS / 1000);
	floe_free(given);
	floe_mutex_lock(&s->vc_lock);
	s->n_renewing--;
	floe_cond_broadcast(&s->renewed);
	floe_mutex_unlock(&s->vc_lock);
}

/* The vended credentials for q's object (a copy in *cr), or false. */
static bool vended_for(s3io *s, const s3req *q, floe_aws_creds *cr)
{
	const char *key = q->key ? q->key : q->cred_key ? q->cred_key : "";
	bool ok = false;
	renew_if_due(s, q->bucket, key);
	floe_mutex_lock(&s->vc_lock);
	const vended *hit = vended_match(s, q->bucket, key);
	if (hit) {
		cr->access_key = floe_strdup(hit->access_key);
		cr->secret_key = floe_strdup(hit->secret_key);
		cr->token = hit->token ? floe_strdup(hit->token) : NULL;
		cr->source = "vended";
		ok = cr->access_key && cr->secret_key && (!hit->token || cr->token);
		if (!ok)
			floe_aws_creds_reset(cr);
	}
	floe_mutex_unlock(&s->vc_lock);
	return ok;
}

/* One signed attempt. */
static int attempt(s3io *s, const s3req *q, const char *payload_hash, floe_http_resp *resp,
		   floe_buf *errdoc, floe_error *err)
{
	floe_buf url, path, host, auth;
	floe_aws_creds cr = {0};
	char amz_date[17], hdate[64], hsha[100], hhost[300];
	char *tok_hdr = NULL, *auth_hdr = NULL;
	const char *wire[12];
	floe_sigv4_header sh[10];
	char extra[4][1100];
	size_t nw = 0, ns = 0;
	int rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&path, 1 << 16);
	floe_buf_init(&host, 1024);
	floe_buf_init(&auth, 4096);
	if (!vended_for(s, q, &cr) && (rc = floe_aws_provider_get(s->aws, &cr, err)))
		goto done;
	if (build_url(s, q, &url, &path, &host)) {
		rc = floe_error_oom(err);
		goto done;
	}
	floe_amz_date(amz_date, floe_now_ms() / 1000);
	snprintf(hhost, sizeof(hhost), "%s", floe_buf_cstr(&host));
	sh[ns++] = (floe_sigv4_header){"host", hhost};
	sh[ns++] = (floe_sigv4_header){"x-amz-content-sha256", payload_hash};
	sh[ns++] = (floe_sigv4_header){"x-amz-date", amz_date};
	if (cr.token)
		sh[ns++] = (floe_sigv4_header){"x-amz-security-token", cr.token};
	for (size_t i = 0; i < q->n_h; i++) {
		if (!strncmp(q->hname[i], "x-amz-", 6))
			sh[ns++] = (floe_sigv4_header){q->hname[i], q->hvalue[i]};
		snprintf(extra[i], sizeof(extra[i]), "%s: %s", q->hname[i], q->hvalue[i]);
		wire[nw++] = extra[i];
	}
	floe_sigv4_req sr = {0};
	sr.method = q->method;
	sr.path = floe_buf_cstr(&path);
	sr.query = q->query;
	sr.headers = sh;
	sr.n_headers = ns;
	sr.payload_hash = payload_hash;
	sr.region = s->region;
	sr.service = "s3";
	sr.amz_date = amz_date;
	sr.s3 = true;
	if ((rc = floe_sigv4_sign(&auth, &sr, cr.access_key, cr.secret_key, err)))
		goto done;
	size_t al = auth.len + 32;
	if (!(auth_hdr = floe_malloc(al))) {
		rc = floe_error_oom(err);
		goto done;
	}
	snprintf(auth_hdr, al, "Authorization: %s", floe_buf_cstr(&auth));
	snprintf(hdate, sizeof(hdate), "x-amz-date: %s", amz_date);
	snprintf(hsha, sizeof(hsha), "x-amz-content-sha256: %s", payload_hash);
	wire[nw++] = auth_hdr;
	wire[nw++] = hdate;
	wire[nw++] = hsha;
	if (cr.token) {
		size_t tl = strlen(cr.token) + 32;
		if (!(tok_hdr = floe_malloc(tl))) {
			rc = floe_error_oom(err);
			goto done;
		}
		snprintf(tok_hdr, tl, "x-amz-security-token: %s", cr.token);
		wire[nw++] = tok_hdr;
	}
	floe_http_req hr = {0};
	hr.method = q->method;
	hr.url = floe_buf_cstr(&url);
	hr.headers = wire;
	hr.n_headers = nw;
	hr.body = q->body;
	hr.body_len = q->body_len;
	hr.out = q->out;
	hr.dst = q->dst;
	hr.dst_cap = q->dst_cap;
	hr.err_out = errdoc;
	rc = floe_http_perform(s->http, &hr, resp, err);
done:
	if (auth_hdr) {
		memset(auth_hdr, 0, strlen(auth_hdr));
		floe_free(auth_hdr);
	}
	if (tok_hdr) {
		memset(tok_hdr, 0, strlen(tok_hdr));
		floe_free(tok_hdr);
	}
	floe_aws_creds_reset(&cr);
	floe_buf_reset(&url);
	floe_buf_reset(&path);
	floe_buf_reset(&host);
	floe_buf_reset(&auth);
	return rc;
}

/*
 * Send q, retrying what S3 says may be retried. FLOE_OK when an answer
 * arrived (resp->status says which; a >= 300 answer's document is in
 * errdoc); transport failures after the last attempt are returned.
 */
static int s3_do(s3io *s, const s3req *q, floe_http_resp *resp, floe_buf *errdoc,
		 floe_error *err)
{
	char hash[65];
	floe_retry r = s->retry;
	size_t out_len0 = q->out ? q->out->len : 0;
	floe_sha256_hex(hash, q->body ? q->body : "", q->body_len);
	floe_retry_start(&r);
	for (;;) {
		floe_error e;
		floe_error_clear(&e);
		if (q->out)
			q->out->len = out_len0;
		floe_buf_clear(errdoc);
		int rc = attempt(s, q, hash, resp, errdoc, &e);
		bool again = false;
		int64_t hint = -1;
		if (rc == FLOE_ENOMEM || rc == FLOE_EINVAL || rc == FLOE_ENOTFOUND) {
			/* out of memory, unsignable, no credentials: not the server's doing */
		} else if (rc) {
			again = true;
		} else if (retryable_status(resp->status)) {
			again = true;
			hint = resp->retry_after_ms;
		} else if (resp->status >= 400) {
			char code[64];
			err_code(errdoc, code, sizeof(code));
			again = !strcmp(code, "SlowDown") || !strcmp(code, "InternalError") ||
				!strcmp(code, "RequestTimeout") || !strcmp(code, "ServiceUnavailable");
		}
		if (!again || !floe_retry_next(&r, hint)) {
			if (rc) {
				if (err)
					*err = e;
				return rc;
			}
			return FLOE_OK;
		}
		FLOE_DEBUG("S3 %s s3://%s/%s: %s, retrying (attempt %d)", q->method, q->bucket,
			   q->key ? q->key : "", rc ? e.msg : "server busy", r.attempt + 1);
	}
}

/* FLOE_E* for an S3 answer that is not a success */
static int status_err(floe_error *err, const floe_http_resp *resp, const floe_buf *errdoc,
		      const char *what, const char *uri)
{
	char msg[512];
	err_message(errdoc, msg, sizeof(msg));
	int code = resp->status == 404   ? FLOE_ENOTFOUND
		   : resp->status == 412 ? FLOE_EEXISTS
		   : resp->status == 403 || resp->status == 400 || resp->status == 401
			   ? FLOE_EINVAL
			   : FLOE_EIO;
	if (retryable_status(resp->status))
		return floe_error_set_retryable(err, code, "%s '%s': HTTP %ld%s%s", what, uri,
						resp->status, msg[0] ? " " : "", msg);
	return floe_error_set(err, code, "%s '%s': HTTP %ld%s%s", what, uri, resp->status,
			      msg[0] ? " " : "", msg);
}

static int head(s3io *s, const char *uri, const char *bucket, const char *key,
		floe_file_info *fi, floe_error *err)
{
	s3req q = {0};
	floe_http_resp resp;
	floe_buf doc;
	q.method = "HEAD";
	q.bucket = bucket;
	q.key = key;
	floe_buf_init(&doc, ERRDOC_MAX);
	int rc = s3_do(s, &q, &resp, &doc, err);
	if (!rc && resp.status != 200)
		rc = status_err(err, &resp, &doc, "stat", uri);
	if (!rc) {
		fi->path = uri;
		fi->size = resp.content_length >= 0 ? (uint64_t)resp.content_length : 0;
		int64_t ms = floe_aws_parse_http_date_ms(resp.last_modified);
		fi->mtime_ms = ms > 0 ? ms : 0;
	}
	floe_buf_reset(&doc);
	return rc;
}

/* ---- input ---------------------------------------------------------------------- */

/* Prefetch (a row group's column chunks): ranges closer than PF_GAP are read
 * in one GET (the gap is read and dropped: cheaper than a request), at most
 * PF_MAX bytes are held per input, in at most PF_SPANS requests. */
#define PF_GAP ((uint64_t)1 << 20)
#define PF_MAX ((uint64_t)32 << 20)
#define PF_SPANS 16

typedef struct s3_input {
	floe_input base;
	s3io *s;
	floe_arena a;
	char *uri, *bucket, *key;
	floe_mutex lock;
	uint8_t *cache;
	uint64_t cache_off;
	size_t cache_len;
	/* prefetched spans (si_prefetch): span i is bytes [pf[i].off, +len) of
	 * the object, at pf_at[i] in pf_buf */
	floe_range pf[PF_SPANS];
	size_t pf_at[PF_SPANS];
	size_t n_pf;
	uint8_t *pf_buf;
} s3_input;

static int get_range(s3_input *in, uint64_t off, void *dst, size_t n, floe_error *err)
{
	char range[64];
	s3req q = {0};
	floe_http_resp resp;
	floe_buf doc;
	snprintf(range, sizeof(range), "bytes=%llu-%llu", (unsigned long long)off,
		 (unsigned long long)(off + n - 1));
	q.method = "GET";
	q.bucket = in->bucket;
	q.key = in->key;
	q.hname[0] = "Range";
	q.hvalue[0] = range;
	q.n_h = 1;
	q.dst = dst;
	q.dst_cap = n;
	floe_buf_init(&doc, ERRDOC_MAX);
	int rc = s3_do(in->s, &q, &resp, &doc, err);
	if (!rc && resp.status != 206 && !(resp.status == 200 && off == 0))
		rc = status_err(err, &resp, &doc, "read", in->uri);
	if (!rc && resp.got != n)
		rc = floe_error_set(err, FLOE_EIO,
				    "read '%s': %zu bytes at %llu asked, %zu received (the object "
				    "changed?)",
				    in->uri, n, (unsigned long long)off, resp.got);
	floe_buf_reset(&doc);
	return rc;
}

static int si_read_at(floe_input *base, uint64_t off, void *buf, size_t n, size_t *got,
		      floe_error *err)
{
	s3_input *in = (s3_input *)base;
	int rc = FLOE_OK;
	*got = 0;
	if (off >= base->size || n == 0)
		return FLOE_OK;
	if (n > base->size - off)
		n = (size_t)(base->size - off);
	floe_mutex_lock(&in->lock);
	for (size_t i = 0; i < in->n_pf; i++)
		if (off >= in->pf[i].off && off + n <= in->pf[i].off + in->pf[i].len) {
			memcpy(buf, in->pf_buf + in->pf_at[i] + (off - in->pf[i].off), n);
			*got = n;
			floe_mutex_unlock(&in->lock);
			return FLOE_OK;
		}
	if (in->cache && off >= in->cache_off && off < in->cache_off + in->cache_len) {
		/* what the cache holds of it (a whole small file read by open_read_seq) */
		size_t have = (size_t)(in->cache_off + in->cache_len - off);
		if (have > n)
			have = n;
		memcpy(buf, in->cache + (off - in->cache_off), have);
		*got = have;
		off += have;
		n -= have;
		buf = (uint8_t *)buf + have;
	}
	if (n == 0)
		goto done;
	if (n >= in->s->read_ahead) {
		floe_mutex_unlock(&in->lock);
		rc = get_range(in, off, buf, n, err);
		if (!rc)
			*got += n;
		return rc;
	}
	size_t want = in->s->read_ahead;
	if (want > base->size - off)
		want = (size_t)(base->size - off);
	if (!in->cache)
		in->cache = floe_malloc(in->s->read_ahead);
	if (!in->cache) {
		rc = floe_error_oom(err);
		goto done;
	}
	in->cache_len = 0;
	if ((rc = get_range(in, off, in->cache, want, err)))
		goto done;
	in->cache_off = off;
	in->cache_len = want;
	memcpy(buf, in->cache, n);
	*got += n;
done:
	floe_mutex_unlock(&in->lock);
	return rc;
}

static int range_cmp(const void *a, const void *b)
{
	const floe_range *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static void si_prefetch(floe_input *base, const floe_range *r, size_t n)
{
	s3_input *in = (s3_input *)base;
	floe_range *v = floe_malloc(n * sizeof(*v));
	if (!v)
		return;
	size_t m = 0;
	floe_mutex_lock(&in->lock);
	for (size_t i = 0; i < n; i++) {
		if (!r[i].len || r[i].off >= base->size)
			continue;
		uint64_t len = r[i].len < base->size - r[i].off ? r[i].len : base->size - r[i].off;
		/* what the read-ahead already holds (a small file read whole) needs no request */
		if (in->cache && r[i].off >= in->cache_off &&
		    r[i].off + len <= in->cache_off + in->cache_len)
			continue;
		v[m++] = (floe_range){r[i].off, len};
	}
	floe_mutex_unlock(&in->lock);
	qsort(v, m, sizeof(*v), range_cmp);
	/* merge into spans, within the budget */
	floe_range sp[PF_SPANS];
	size_t ns = 0;
	uint64_t total = 0;
	for (size_t i = 0; i < m; i++) {
		uint64_t end = v[i].off + v[i].len;
		if (ns && v[i].off <= sp[ns - 1].off + sp[ns - 1].len + PF_GAP) {
			uint64_t cur = sp[ns - 1].off + sp[ns - 1].len;
			if (end > cur) {
				if (total + (end - cur) > PF_MAX)
					break;
				total += end - cur;
				sp[ns - 1].len = end - sp[ns - 1].off;
			}
			continue;
		}
		if (ns == PF_SPANS || total + v[i].len > PF_MAX)
			break;
		sp[ns++] = v[i];
		total += v[i].len;
	}
	floe_free(v);
	/* one range alone gains nothing over the reads themselves */
	if (ns == 0 || (ns == 1 && m == 1))
		return;
	floe_mutex_lock(&in->lock);
	floe_free(in->pf_buf);
	in->n_pf = 0;
	in->pf_buf = floe_malloc((size_t)total);
	size_t at = 0;
	floe_error scratch = {0};
	for (size_t i = 0; in->pf_buf && i < ns; i++) {
		if (get_range(in, sp[i].off, in->pf_buf + at, (size_t)sp[i].len, &scratch))
			break; /* the reads will ask again, and say what fails */
		in->pf[in->n_pf] = sp[i];
		in->pf_at[in->n_pf++] = at;
		at += (size_t)sp[i].len;
	}
	floe_mutex_unlock(&in->lock);
}

static void si_close(floe_input *base)
{
	s3_input *in = (s3_input *)base;
	floe_free(in->pf_buf);
	floe_free(in->cache);
	floe_mutex_destroy(&in->lock);
	floe_arena_reset(&in->a);
	floe_free(in);
}

static const floe_input_ops s3_input_ops = {si_read_at, si_close, si_prefetch};

static int input_new(s3_input **out, s3io *s, const char *uri, floe_error *err)
{
	int rc;
	*out = NULL;
	s3_input *in = floe_calloc(1, sizeof(*in));
	if (!in)
		return floe_error_oom(err);
	floe_arena_init(&in->a, 1024);
	if (floe_mutex_init(&in->lock)) {
		floe_arena_reset(&in->a);
		floe_free(in);
		return floe_error_oom(err);
	}
	in->s = s;
	in->base.ops = &s3_input_ops;
	if ((rc = floe_s3_split(&in->a, uri, &in->bucket, &in->key, err)))
		goto fail;
	if (!(in->uri = floe_arena_strdup(&in->a, uri))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	in->base.name = in->uri;
	*out = in;
	return FLOE_OK;
fail:
	si_close(&in->base);
	return rc;
}

/* the input's size from a HEAD (an empty object, which no range fits) */
static int open_by_head(s3io *s, const char *uri, floe_input **out, floe_error *err)
{
	floe_file_info fi;
	s3_input *in;
	int rc;
	if ((rc = input_new(&in, s, uri, err)))
		return rc;
	if ((rc = head(s, uri, in->bucket, in->key, &fi, err))) {
		si_close(&in->base);
		return rc == FLOE_ENOTFOUND ? floe_error_set(err, rc, "'%s' does not exist", uri) : rc;
	}
	in->base.size = fi.size;
	*out = &in->base;
	return FLOE_OK;
}

bool floe_s3__parse_content_range(const char *cr, uint64_t *first, uint64_t *last,
				  uint64_t *total)
{
	char *end;
	if (strncmp(cr, "bytes ", 6) || cr[6] < '0' || cr[6] > '9')
		return false;
	*first = strtoull(cr + 6, &end, 10);
	if (*end != '-' || end[1] < '0' || end[1] > '9')
		return false;
	*last = strtoull(end + 1, &end, 10);
	if (*end != '/' || end[1] < '0' || end[1] > '9')
		return false;
	*total = strtoull(end + 1, &end, 10);
	return !*end && *first <= *last && *last < *total && *total <= INT64_MAX;
}

/*
 * Open without a HEAD: one GET of read-ahead bytes, from the start (tail
 * false: metadata, manifest lists and manifests are read from their first
 * byte) or from the end (a suffix range: Parquet and Puffin readers start
 * at the footer). Content-Range gives the size; the bytes stay in the
 * input's cache, so a file smaller than the read-ahead costs this one
 * request. An empty object (416 to any range) falls back to the HEAD.
 */
static int open_ranged(s3io *s, const char *uri, bool tail, floe_input **out, floe_error *err)
{
	char range[64];
	s3req q = {0};
	floe_http_resp resp;
	floe_buf doc;
	s3_input *in;
	uint64_t first = 0, last = 0, total = 0;
	int rc;
	*out = NULL;
	if ((rc = input_new(&in, s, uri, err)))
		return rc;
	if (!(in->cache = floe_malloc(s->read_ahead))) {
		si_close(&in->base);
		return floe_error_oom(err);
	}
	if (tail)
		snprintf(range, sizeof(range), "bytes=-%llu", (unsigned long long)s->read_ahead);
	else
		snprintf(range, sizeof(range), "bytes=0-%llu", (unsigned long long)s->read_ahead - 1);
	q.method = "GET";
	q.bucket = in->bucket;
	q.key = in->key;
	q.hname[0] = "Range";
	q.hvalue[0] = range;
	q.n_h = 1;
	q.dst = in->cache;
	q.dst_cap = s->read_ahead;
	floe_buf_init(&doc, ERRDOC_MAX);
	rc = s3_do(s, &q, &resp, &doc, err);
	if (!rc && resp.status == 416) {
		floe_buf_reset(&doc);
		si_close(&in->base);
		return open_by_head(s, uri, out, err);
	}
	if (!rc && resp.status == 206) {
		if (!floe_s3__parse_content_range(resp.content_range, &first, &last, &total) ||
		    resp.got != last - first + 1 || (tail ? last + 1 != total : first != 0))
			rc = floe_error_set(err, FLOE_EIO, "read '%s': Content-Range '%s' for %zu bytes",
					    uri, resp.content_range, resp.got);
	} else if (!rc && resp.status == 200) {
		total = resp.got; /* the server sent it whole, and it fit */
	} else if (!rc) {
		rc = status_err(err, &resp, &doc, "read", uri);
	}
	floe_buf_reset(&doc);
	if (rc) {
		si_close(&in->base);
		return rc == FLOE_ENOTFOUND ? floe_error_set(err, rc, "'%s' does not exist", uri) : rc;
	}
	in->base.size = total;
	in->cache_off = first;
	in->cache_len = resp.got;
	*out = &in->base;
	return FLOE_OK;
}

static int s_open_read(floe_fileio *io, const char *uri, floe_input **out, floe_error *err)
{
	return open_ranged((s3io *)io, uri, true, out, err);
}

static int s_open_read_seq(floe_fileio *io, const char *uri, floe_input **out, floe_error *err)
{
	return open_ranged((s3io *)io, uri, false, out, err);
}

/* ---- output --------------------------------------------------------------------- */

typedef struct s3_output {
	floe_output base;
	s3io *s;
	floe_arena a;
	char *uri, *bucket, *key;
	bool overwrite;
	uint8_t *buf;
	size_t len;
	char *upload_id; /* multipart upload in progress */
	floe_buf parts;  /* <Part> elements of the completed parts */
	int n_parts;
	uint64_t total;
} s3_output;

static int put_single(s3_output *o, floe_error *err)
{
	s3req q = {0};
	floe_http_resp resp;
	floe_buf doc;
	q.method = "PUT";
	q.bucket = o->bucket;
	q.key = o->key;
	q.body = o->buf;
	q.body_len = o->len;
	if (!o->overwrite) {
		q.hname[q.n_h] = "If-None-Match";
		q.hvalue[q.n_h++] = "*";
	}
	floe_buf_init(&doc, ERRDOC_MAX);
	int rc = s3_do(o->s, &q, &resp, &doc, err);
	if (!rc && resp.status == 412)
		rc = floe_error_set(err, FLOE_EEXISTS, "'%s' already exists", o->uri);
	else if (!rc && resp.status != 200)
		rc = status_err(err, &resp, &doc, "write", o->uri);
	floe_buf_reset(&doc);
	return rc;
}

static int start_upload(s3_output *o, floe_error *err)
{
	s3req q = {0};
	floe_http_resp resp;
	floe_buf doc, body;
	floe_arena a;
	floe_xml *x;
	q.method = "POST";
	q.bucket = o->bucket;
	q.key = o->key;
	q.query = "uploads=";
	floe_buf_init(&doc, ERRDOC_MAX);
	floe_buf_init(&body, ERRDOC_MAX);
	floe_arena_init(&a, 4096);
	q.out = &body;
	int rc = s3_do(o->s, &q, &resp, &doc, err);
	if (!rc && resp.status != 200)
		rc = status_err(err, &resp, &doc, "start a multipart upload of", o->uri);
	if (!rc && (rc = floe_xml_parse(&x, &a, floe_buf_cstr(&body), body.len, err)))
		rc = floe_error_prefix(err, rc, "CreateMultipartUpload of '%s': ", o->uri);
	if (!rc) {
		const char *id = floe_xml_child_text(x, "UploadId");
		if (!id || !*id)
			rc = floe_error_corrupt(err, "CreateMultipartUpload of '%s': no UploadId",
						o->uri);
		else if (!(o->upload_id = floe_arena_strdup(&o->a, id)))
			rc = floe_error_oom(err);
	}
	floe_arena_reset(&a);
	floe_buf_reset(&doc);
	floe_buf_reset(&body);
	return rc;
}

static int upload_id_query(floe_buf *qs, const char *upload_id, int part)
{
	floe_buf_clear(qs);
	int rc = part > 0 ? floe_buf_printf(qs, "partNumber=%d&uploadId=", part) : floe_buf_puts(qs, "uploadId=");
	return rc ? rc : floe_aws_uri_encode(qs, upload_id, strlen(upload_id), false);
}

static int upload_part(s3_output *o, floe_error *err)
{
	s3req q = {0};
	floe_http_resp resp;
	floe_buf doc, qs;
	int rc;
	if (o->n_parts >= MAX_PARTS)
		return floe_error_set(err, FLOE_EINVAL,
				      "'%s': more than %d parts (raise s3.multipart.part-size-bytes)",
				      o->uri, MAX_PARTS);
	floe_buf_init(&doc, ERRDOC_MAX);
	floe_buf_init(&qs, 4096);
	if (upload_id_query(&qs, o->upload_id, o->n_parts + 1)) {
		rc = floe_error_oom(err);
		goto done;
	}
	q.method = "PUT";
	q.bucket = o->bucket;
	q.key = o->key;
	q.query = floe_buf_cstr(&qs);
	q.body = o->buf;
	q.body_len = o->len;
	rc = s3_do(o->s, &q, &resp, &doc, err);
	if (!rc && resp.status != 200)
		rc = status_err(err, &resp, &doc, "upload a part of", o->uri);
	if (!rc && !resp.etag[0])
		rc = floe_error_corrupt(err, "UploadPart of '%s': no ETag", o->uri);
	if (!rc) {
		o->n_parts++;
		if (floe_buf_printf(&o->parts, "<Part><PartNumber>%d</PartNumber><ETag>", o->n_parts) ||
		    floe_buf_puts(&o->parts, resp.etag) || floe_buf_puts(&o->parts, "</ETag></Part>"))
			rc = floe_error_oom(err);
		o->total += o->len;
		o->len = 0;
	}
done:
	floe_buf_reset(&doc);
	floe_buf_reset(&qs);
	return rc;
}

static void abort_upload(s3_output *o)
{
	s3req q = {0};
	floe_http_resp resp;
	floe_buf doc, qs;
	floe_error e;
	if (!o->upload_id)
		return;
	floe_buf_init(&doc, ERRDOC_MAX);
	floe_buf_init(&qs, 4096);
	if (!upload_id_query(&qs, o->upload_id, 0)) {
		q.method = "DELETE";
		q.bucket = o->bucket;
		q.key = o->key;
		q.query = floe_buf_cstr(&qs);
		floe_error_clear(&e);
		int rc = s3_do(o->s, &q, &resp, &doc, &e);
		if (rc || (resp.status != 204 && resp.status != 200 && resp.status != 404))
			FLOE_WARN("aborting the multipart upload of '%s' failed (%s); a bucket "
				  "lifecycle rule for incomplete uploads removes it",
				  o->uri, rc ? e.msg : "HTTP error");
	}
	o->upload_id = NULL;
	floe_buf_reset(&doc);
	floe_buf_reset(&qs);
}

static int complete_upload(s3_output *o, floe_error *err)
{
	s3req q = {0};
	floe_http_resp resp;
	floe_buf doc, qs, body, out;
	floe_arena a;
	floe_xml *x;
	int rc;
	floe_buf_init(&doc, ERRDOC_MAX);
	floe_buf_init(&qs, 4096);
	floe_buf_init(&body, (size_t)MAX_PARTS * 200 + 256);
	floe_buf_init(&out, ERRDOC_MAX);
	floe_arena_init(&a, 4096);
	if (upload_id_query(&qs, o->upload_id, 0) ||
	    floe_buf_puts(&body, "<CompleteMultipartUpload>") ||
	    floe_buf_append(&body, o->parts.data, o->parts.len) ||
	    floe_buf_puts(&body, "</CompleteMultipartUpload>")) {
		rc = floe_error_oom(err);
		goto done;
	}
	q.method = "POST";
	q.bucket = o->bucket;
	q.key = o->key;
	q.query = floe_buf_cstr(&qs);
	q.body = body.data;
	q.body_len = body.len;
	q.out = &out;
	q.hname[q.n_h] = "Content-Type";
	q.hvalue[q.n_h++] = "application/xml";
	if (!o->overwrite) {
		q.hname[q.n_h] = "If-None-Match";
		q.hvalue[q.n_h++] = "*";
	}
	for (int tries = 0;; tries++) {
		rc = s3_do(o->s, &q, &resp, &doc, err);
		if (rc)
			goto done;
		if (resp.status == 200) {
			/* S3 may answer 200 and put an error in the body */
			floe_arena_reset(&a);
			floe_arena_init(&a, 4096);
			if (floe_xml_parse(&x, &a, floe_buf_cstr(&out), out.len, NULL) ||
			    strcmp(x->name, "Error") != 0)
				break;
			if (tries < 3) {
				floe_sleep_ms(100 << tries);
				continue;
			}
			rc = floe_error_set(err, FLOE_EIO, "complete the upload of '%s': %s", o->uri,
					    floe_xml_child_text(x, "Code") ? floe_xml_child_text(x, "Code")
									   : "error");
			goto done;
		}
		if (resp.status == 404 && tries == 0) {
			/* NoSuchUpload: an earlier attempt whose answer was lost may have
			 * completed it; the object of the expected size says so */
			floe_file_info fi;
			if (!head(o->s, o->uri, o->bucket, o->key, &fi, NULL) && fi.size == o->total)
				break;
		}
		if (resp.status == 412) {
			rc = floe_error_set(err, FLOE_EEXISTS, "'%s' already exists", o->uri);
			goto done;
		}
		rc = status_err(err, &resp, &doc, "complete the upload of", o->uri);
		goto done;
	}
	o->upload_id = NULL; /* completed: nothing to abort */
done:
	floe_arena_reset(&a);
	floe_buf_reset(&doc);
	floe_buf_reset(&qs);
	floe_buf_reset(&body);
	floe_buf_reset(&out);
	return rc;
}

static void so_free(s3_output *o)
{
	floe_free(o->buf);
	floe_buf_reset(&o->parts);
	floe_arena_reset(&o->a);
	floe_free(o);
}

static int so_write(floe_output *base, const void *p, size_t n, floe_error *err)
{
	s3_output *o = (s3_output *)base;
	const uint8_t *src = p;
	size_t cap = o->s->part_size;
	while (n) {
		if (!o->buf && !(o->buf = floe_malloc(cap)))
			return floe_error_oom(err);
		size_t k = cap - o->len < n ? cap - o->len : n;
		memcpy(o->buf + o->len, src, k);
		o->len += k;
		src += k;
		n -= k;
		if (o->len == cap && n) {
			/* a full part with more to come: send it */
			int rc = o->upload_id ? 0 : start_upload(o, err);
			if (!rc)
				rc = upload_part(o, err);
			if (rc)
				return rc;
		}
	}
	return FLOE_OK;
}

static int so_close(floe_output *base, floe_error *err)
{
	s3_output *o = (s3_output *)base;
	int rc;
	if (!o->upload_id) {
		rc = put_single(o, err);
	} else {
		rc = upload_part(o, err);
		if (!rc)
			rc = complete_upload(o, err);
	}
	abort_upload(o); /* only when it was not completed */
	so_free(o);
	return rc;
}

static void so_abort(floe_output *base)
{
	s3_output *o = (s3_output *)base;
	abort_upload(o);
	so_free(o);
}

static const floe_output_ops s3_output_ops = {so_write, so_close, so_abort};

static int s_create(floe_fileio *io, const char *uri, bool overwrite, floe_output **out,
		    floe_error *err)
{
	s3io *s = (s3io *)io;
	int rc;
	*out = NULL;
	s3_output *o = floe_calloc(1, sizeof(*o));
	if (!o)
		return floe_error_oom(err);
	floe_arena_init(&o->a, 1024);
	floe_buf_init(&o->parts, (size_t)MAX_PARTS * 200);
	o->s = s;
	o->overwrite = overwrite;
	o->base.ops = &s3_output_ops;
	if ((rc = floe_s3_split(&o->a, uri, &o->bucket, &o->key, err))) {
		so_free(o);
		return rc;
	}
	if (!*o->key) {
		so_free(o);
		return floe_error_set(err, FLOE_EINVAL, "'%s': no object key", uri);
	}
	if (!(o->uri = floe_arena_strdup(&o->a, uri))) {
		so_free(o);
		return floe_error_oom(err);
	}
	o->base.name = o->uri;
	*out = &o->base;
	return FLOE_OK;
}

/* ---- the rest ------------------------------------------------------------------- */

static int s_stat(floe_fileio *io, const char *uri, floe_file_info *fi, floe_error *err)
{
	floe_arena a;
	char *b, *k;
	floe_arena_init(&a, 512);
	int rc = floe_s3_split(&a, uri, &b, &k, err);
	if (!rc)
		rc = head((s3io *)io, uri, b, k, fi, err);
	/* fi->path must outlive the arena: it is the caller's uri */
	fi->path = uri;
	floe_arena_reset(&a);
	return rc == FLOE_ENOTFOUND ? floe_error_set(err, rc, "'%s' does not exist", uri) : rc;
}

static int s_remove(floe_fileio *io, const char *uri, floe_error *err)
{
	floe_arena a;
	char *b, *k;
	s3req q = {0};
	floe_http_resp resp;
	floe_buf doc;
	floe_arena_init(&a, 512);
	floe_buf_init(&doc, ERRDOC_MAX);
	int rc = floe_s3_split(&a, uri, &b, &k, err);
	if (!rc) {
		q.method = "DELETE";
		q.bucket = b;
		q.key = k;
		rc = s3_do((s3io *)io, &q, &resp, &doc, err);
		/* S3 answers 204 whether or not the object was there */
		if (!rc && resp.status != 204 && resp.status != 200)
			rc = status_err(err, &resp, &doc, "delete", uri);
	}
	floe_buf_reset(&doc);
	floe_arena_reset(&a);
	return rc;
}

/* text with XML's five special characters as entities */
static int xml_text(floe_buf *b, const char *s)
{
	int rc = 0;
	for (; *s && !rc; s++) {
		switch (*s) {
		case '&': rc = floe_buf_puts(b, "&amp;"); break;
		case '<': rc = floe_buf_puts(b, "&lt;"); break;
		case '>': rc = floe_buf_puts(b, "&gt;"); break;
		case '"': rc = floe_buf_puts(b, "&quot;"); break;
		case '\'': rc = floe_buf_puts(b, "&apos;"); break;
		default: rc = floe_buf_putc(b, *s); break;
		}
	}
	return rc;
}

/* an S3 error code of one key as FLOE_E* (NoSuchKey: it is gone, so 0) */
static int key_code(const char *code)
{
	if (!code || !strcmp(code, "NoSuchKey"))
		return FLOE_OK;
	if (!strcmp(code, "AccessDenied") || !strcmp(code, "InvalidArgument"))
		return FLOE_EINVAL;
	return FLOE_EIO;
}

/*
 * One DeleteObjects request (quiet: S3 answers with the failed keys only)
 * for keys[0..n) of one bucket; the failures go to codes.
 */
static int delete_objects(s3io *s, const char *bucket, const char *scheme, const char **keys,
			  size_t n, int *codes, floe_error *err)
{
	floe_buf body, out, doc, md5b64;
	floe_arena pa;
	int rc = FLOE_OK;
	floe_buf_init(&body, (size_t)64 << 20);
	floe_buf_init(&out, LIST_MAX);
	floe_buf_init(&doc, ERRDOC_MAX);
	floe_buf_init(&md5b64, 64);
	floe_arena_init(&pa, 1 << 16);
	int brc = floe_buf_puts(&body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
				       "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
				       "<Quiet>true</Quiet>");
	for (size_t i = 0; i < n && !brc; i++)
		brc = floe_buf_puts(&body, "<Object><Key>") || xml_text(&body, keys[i]) ||
		      floe_buf_puts(&body, "</Key></Object>");
	brc = brc || floe_buf_puts(&body, "</Delete>");
	/* DeleteObjects requires the body's MD5 (Content-MD5, base64) */
	uint8_t md5[16];
	unsigned int ml = 16;
	if (!brc && !EVP_Digest(body.data, body.len, md5, &ml, EVP_md5(), NULL))
		memset(md5, 0, sizeof(md5));
	if (brc || floe_base64_encode(&md5b64, md5, 16)) {
		rc = floe_error_oom(err);
		goto done;
	}
	s3req q = {0};
	floe_http_resp resp;
	q.method = "POST";
	q.bucket = bucket;
	q.cred_key = n ? keys[0] : NULL;
	q.query = "delete=";
	q.hname[0] = "Content-MD5";
	q.hvalue[0] = floe_buf_cstr(&md5b64);
	q.hname[1] = "Content-Type";
	q.hvalue[1] = "application/xml";
	q.n_h = 2;
	q.body = body.data;
	q.body_len = body.len;
	q.out = &out;
	if ((rc = s3_do(s, &q, &resp, &doc, err)))
		goto done;
	if (resp.status != 200) {
		char uri[300];
		snprintf(uri, sizeof(uri), "%s://%s", scheme, bucket);
		rc = status_err(err, &resp, &doc, "DeleteObjects in", uri);
		goto done;
	}
	floe_xml *x;
	if ((rc = floe_xml_parse(&x, &pa, floe_buf_cstr(&out), out.len, err))) {
		rc = floe_error_prefix(err, rc, "DeleteObjects in %s://%s: ", scheme, bucket);
		goto done;
	}
	size_t deleted = n;
	for (const floe_xml *e = floe_xml_child(x, "Error"); e; e = floe_xml_next_same(e)) {
		const char *key = floe_xml_child_text(e, "Key");
		const char *code = floe_xml_child_text(e, "Code");
		const char *msg = floe_xml_child_text(e, "Message");
		int c = key_code(code);
		if (!key || !c)
			continue;
		for (size_t i = 0; i < n; i++)
			if (!codes[i] && !strcmp(keys[i], key)) {
				codes[i] = c;
				deleted--;
				FLOE_WARN("cannot delete '%s://%s/%s': %s%s%s", scheme, bucket, key,
					  code ? code : "", msg && *msg ? ": " : "", msg ? msg : "");
				break;
			}
	}
	FLOE_DEBUG("S3 DeleteObjects in %s://%s: %zu of %zu keys deleted", scheme, bucket, deleted,
		   n);
done:
	floe_buf_reset(&body);
	floe_buf_reset(&out);
	floe_buf_reset(&doc);
	floe_buf_reset(&md5b64);
	floe_arena_reset(&pa);
	return rc;
}

/*
 * Runs of paths in one bucket, s3.delete.batch-size keys a request. A
 * request that fails as a whole marks its keys (and is logged once); the
 * next requests are still made.
 */
static int s_remove_batch(floe_fileio *io, const char *const *paths, size_t n, int *codes,
			  floe_error *err)
{
	s3io *s = (s3io *)io;
	floe_arena a;
	const char **keys = floe_malloc(sizeof(*keys) * (s->delete_batch ? s->delete_batch : 1));
	int rc = FLOE_OK;
	if (!keys)
		return floe_error_oom(err);
	for (size_t i = 0; i < n; i++)
		codes[i] = 0;
	size_t i = 0;
	while (i < n) {
		char *b0, *k;
		floe_error e;
		floe_error_clear(&e);
		floe_arena_init(&a, 1 << 16);
		if ((rc = floe_s3_split(&a, paths[i], &b0, &k, &e))) {
			codes[i] = rc;
			FLOE_WARN("cannot delete '%s': %s", paths[i], e.msg);
			floe_arena_reset(&a);
			rc = FLOE_OK;
			i++;
			continue;
		}
		size_t j = i, nk = 0;
		while (j < n && nk < s->delete_batch) {
			char *b, *kk;
			if (j > i && (floe_s3_split(&a, paths[j], &b, &kk, NULL) || strcmp(b, b0)))
				break;
			keys[nk++] = j == i ? k : kk;
			j++;
		}
		char scheme[8];
		size_t sl = scheme_len(paths[i]);
		snprintf(scheme, sizeof(scheme), "%.*s", (int)(sl < 7 ? sl : 7), paths[i]);
		rc = delete_objects(s, b0, scheme, keys, nk, codes + i, &e);
		floe_arena_reset(&a);
		if (rc == FLOE_ENOMEM) {
			for (size_t m = i; m < n; m++)
				codes[m] = rc;
			floe_free(keys);
			return floe_error_oom(err);
		}
		if (rc) {
			for (size_t m = i; m < j; m++)
				codes[m] = rc;
			FLOE_WARN("cannot delete %zu files in '%s://%s': %s", j - i, scheme, b0, e.msg);
			rc = FLOE_OK;
		}
		i = j;
	}
	floe_free(keys);
	return rc;
}

static int s_list(floe_fileio *io, const char *prefix, floe_file_list_fn fn, void *payload,
		  floe_error *err)
{
	s3io *s = (s3io *)io;
	floe_arena a, pa;
	char *b, *k;
	floe_buf qs, body, doc, name, token, pfx;
	int rc;
	size_t sl = scheme_len(prefix);
	floe_arena_init(&a, 512);
	floe_arena_init(&pa, 1 << 16);
	floe_buf_init(&qs, 1 << 16);
	floe_buf_init(&body, LIST_MAX);
	floe_buf_init(&doc, ERRDOC_MAX);
	floe_buf_init(&name, 1 << 16);
	floe_buf_init(&token, 1 << 16);
	floe_buf_init(&pfx, 1 << 16);
	if ((rc = floe_s3_split(&a, prefix, &b, &k, err)))
		goto done;
	/* a prefix names a folder: "wh/t" lists "wh/t/...", never "wh/t2/..." */
	if (floe_buf_puts(&pfx, k) || (pfx.len && k[pfx.len - 1] != '/' && floe_buf_putc(&pfx, '/'))) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (;;) {
		s3req q = {0};
		floe_http_resp resp;
		floe_xml *x;
		floe_buf_clear(&qs);
		floe_buf_clear(&body);
		/* the query in canonical (sorted) order */
		if ((token.len && (floe_buf_puts(&qs, "continuation-token=") ||
				   floe_aws_uri_encode(&qs, floe_buf_cstr(&token), token.len, false) ||
				   floe_buf_putc(&qs, '&'))) ||
		    floe_buf_puts(&qs, "list-type=2&") ||
		    (s->max_keys != 1000 && floe_buf_printf(&qs, "max-keys=%lld&", (long long)s->max_keys)) ||
		    floe_buf_puts(&qs, "prefix=") ||
		    floe_aws_uri_encode(&qs, floe_buf_cstr(&pfx), pfx.len, false)) {
			rc = floe_error_oom(err);
			goto done;
		}
		q.method = "GET";
		q.bucket = b;
		q.cred_key = floe_buf_cstr(&pfx);
		q.query = floe_buf_cstr(&qs);
		q.out = &body;
		if ((rc = s3_do(s, &q, &resp, &doc, err)))
			goto done;
		if (resp.status != 200) {
			rc = status_err(err, &resp, &doc, "list", prefix);
			goto done;
		}
		floe_arena_reset(&pa);
		floe_arena_init(&pa, 1 << 16);
		if ((rc = floe_xml_parse(&x, &pa, floe_buf_cstr(&body), body.len, err))) {
			rc = floe_error_prefix(err, rc, "ListObjectsV2 of '%s': ", prefix);
			goto done;
		}
		for (const floe_xml *c = floe_xml_child(x, "Contents"); c; c = floe_xml_next_same(c)) {
			const char *key = floe_xml_child_text(c, "Key");
			const char *size = floe_xml_child_text(c, "Size");
			uint64_t sz = 0;
			if (!key || !size || !floe_parse_u64(size, strlen(size), &sz)) {
				rc = floe_error_corrupt(err, "ListObjectsV2 of '%s': an entry without "
							     "Key or Size",
							prefix);
				goto done;
			}
			floe_buf_clear(&name);
			if (floe_buf_printf(&name, "%.*s://%s/%s", (int)sl, prefix, b, key)) {
				rc = floe_error_oom(err);
				goto done;
			}
			floe_file_info fi = {floe_buf_cstr(&name), sz, 0};
			int64_t ms = floe_aws_parse_iso8601_ms(floe_xml_child_text(c, "LastModified"));
			fi.mtime_ms = ms > 0 ? ms : 0;
			if ((rc = fn(&fi, payload)))
				goto done;
		}
		const char *trunc = floe_xml_child_text(x, "IsTruncated");
		const char *next = floe_xml_child_text(x, "NextContinuationToken");
		if (!trunc || strcmp(trunc, "true") != 0)
			break;
		if (!next || !*next) {
			rc = floe_error_corrupt(err, "ListObjectsV2 of '%s': truncated without a "
						     "continuation token",
						prefix);
			goto done;
		}
		floe_buf_clear(&token);
		if (floe_buf_puts(&token, next)) {
			rc = floe_error_oom(err);
			goto done;
		}
	}
done:
	floe_arena_reset(&a);
	floe_arena_reset(&pa);
	floe_buf_reset(&qs);
	floe_buf_reset(&body);
	floe_buf_reset(&doc);
	floe_buf_reset(&name);
	floe_buf_reset(&token);
	floe_buf_reset(&pfx);
	return rc;
}

static void vended_reset(vended *v)
{
	floe_free(v->prefix);
	floe_free(v->given);
	floe_secret_free(v->access_key);
	floe_secret_free(v->secret_key);
	floe_secret_free(v->token);
	memset(v, 0, sizeof(*v));
}

/*
 * Credentials for the paths under prefix (s3://bucket/key-prefix), from
 * props' s3.access-key-id, s3.secret-access-key and s3.session-token: a REST
 * catalog's vended credentials of one table. Replaces those of the same
 * prefix; props without keys remove them.
 */
static int s_set_credentials(floe_fileio *io, const char *prefix, const floe_strmap *props,
			     floe_error *err)
{
	s3io *s = (s3io *)io;
	floe_arena a;
	char *b, *k;
	int rc;
	floe_arena_init(&a, 1024);
	if ((rc = floe_s3_split(&a, prefix, &b, &k, err))) {
		floe_arena_reset(&a);
		return rc;
	}
	const char *ak = floe_strmap_get(props, "s3.access-key-id");
	const char *sk = floe_strmap_get(props, "s3.secret-access-key");
	const char *tok = floe_strmap_get(props, "s3.session-token");
	const char *exp = floe_strmap_get(props, "s3.session-token-expires-at-ms");
	vended v = {0};
	bool set = ak && *ak && sk && *sk;
	if (set && exp && !floe_parse_i64(exp, strlen(exp), &v.expires_ms))
		v.expires_ms = 0; /* not a time: as if not given */
	if (set && v.expires_ms > 0) {
		int64_t now = floe_now_ms(), lead = (v.expires_ms - now) / 2;
		if (lead > RENEW_LEAD_MAX_MS)
			lead = RENEW_LEAD_MAX_MS;
		v.renew_at_ms = v.expires_ms - lead;
		if (v.expires_ms <= now)
			v.renew_at_ms = now; /* dead on arrival: at the first request */
		else if (v.renew_at_ms < now + RENEW_EVERY_MIN_MS)
			v.renew_at_ms = now + RENEW_EVERY_MIN_MS;
	}
	if (set) {
		v.prefix = floe_malloc(strlen(b) + strlen(k) + 2);
		v.given = floe_strdup(prefix);
		v.access_key = floe_strdup(ak);
		v.secret_key = floe_strdup(sk);
		v.token = tok && *tok ? floe_strdup(tok) : NULL;
		if (!v.prefix || !v.given || !v.access_key || !v.secret_key ||
		    (tok && *tok && !v.token)) {
			vended_reset(&v);
			floe_arena_reset(&a);
			return floe_error_oom(err);
		}
		snprintf(v.prefix, strlen(b) + strlen(k) + 2, "%s/%s", b, k);
	}
	char want[2200];
	snprintf(want, sizeof(want), "%s/%s", b, k);
	floe_arena_reset(&a);
	floe_mutex_lock(&s->vc_lock);
	size_t i = 0;
	while (i < s->n_vc && strcmp(s->vc[i].prefix, want))
		i++;
	if (i < s->n_vc) {
		vended_reset(&s->vc[i]);
		if (set)
			s->vc[i] = v;
		else
			s->vc[i] = s->vc[--s->n_vc];
	} else if (set) {
		vended *nv = floe_realloc(s->vc, (s->n_vc + 1) * sizeof(*nv));
		if (!nv) {
			floe_mutex_unlock(&s->vc_lock);
			vended_reset(&v);
			return floe_error_oom(err);
		}
		s->vc = nv;
		s->vc[s->n_vc++] = v;
	}
	floe_mutex_unlock(&s->vc_lock);
	return FLOE_OK;
}

/* When the vended credentials that path's requests use expire (0: none, or
 * no expiry given). */
static int64_t s_credentials_expire_ms(floe_fileio *io, const char *path)
{
	s3io *s = (s3io *)io;
	floe_arena a;
	char *b, *k;
	int64_t exp = 0;
	floe_error scratch = {0};
	floe_arena_init(&a, 1024);
	if (!floe_s3_split(&a, path, &b, &k, &scratch)) {
		floe_mutex_lock(&s->vc_lock);
		const vended *v = vended_match(s, b, k);
		exp = v ? v->expires_ms : 0;
		floe_mutex_unlock(&s->vc_lock);
	}
	floe_arena_reset(&a);
	return exp;
}

static void s_set_renewer(floe_fileio *io, floe_io_renew_fn fn, void *payload)
{
	s3io *s = (s3io *)io;
	floe_mutex_lock(&s->vc_lock);
	s->renew_fn = fn;
	s->renew_payload = payload;
	floe_mutex_unlock(&s->vc_lock);
}

/* Renew now the vended credentials path's requests use (floe_io_renew_credentials). */
static int s_renew_credentials(floe_fileio *io, const char *path, floe_error *err)
{
	s3io *s = (s3io *)io;
	floe_arena a;
	char *b, *k, *given = NULL;
	floe_arena_init(&a, 1024);
	int rc = floe_s3_split(&a, path, &b, &k, err);
	floe_io_renew_fn fn = NULL;
	void *payload = NULL;
	if (!rc) {
		floe_mutex_lock(&s->vc_lock);
		vended *v = s->renew_fn ? (vended *)vended_match(s, b, k) : NULL;
		if (v && !(given = floe_strdup(v->given))) {
			rc = floe_error_oom(err);
		} else if (v) {
			v->renew_at_ms = floe_now_ms() + RENEW_EVERY_MIN_MS; /* claimed */
			s->n_renewing++;
		}
		fn = s->renew_fn;
		payload = s->renew_payload;
		floe_mutex_unlock(&s->vc_lock);
	}
	floe_arena_reset(&a);
	if (!rc && !given)
		rc = floe_error_set(err, FLOE_EUNSUPPORTED, "no renewable credentials for '%s'",
				    path);
	if (!rc)
		rc = fn(payload, given, err);
	if (given) {
		floe_free(given);
		floe_mutex_lock(&s->vc_lock);
		s->n_renewing--;
		floe_cond_broadcast(&s->renewed);
		floe_mutex_unlock(&s->vc_lock);
	}
	return rc;
}

static void s_free(floe_fileio *io)
{
	s3io *s = (s3io *)io;
	for (size_t i = 0; i < s->n_vc; i++)
		vended_reset(&s->vc[i]);
	floe_free(s->vc);
	floe_mutex_destroy(&s->vc_lock);
	floe_cond_destroy(&s->renewed);
	floe_aws_provider_free(s->aws);
	floe_http_free(s->http);
	floe_free(s->endpoint);
	floe_free(s->region);
	floe_free(s);
}

static const floe_fileio_ops s3_ops = {s_open_read, s_create, s_remove,	     s_stat,
				       s_list,	    NULL,     s_free,	     s_remove_batch,
				       s_set_credentials, s_open_read_seq, s_credentials_expire_ms,
				       s_set_renewer, s_renew_credentials};

static const char *prop(const floe_strmap *m, const char *k)
{
	const char *v = m ? floe_strmap_get(m, k) : NULL;
	return v && *v ? v : NULL;
}

static int prop_i64(const floe_strmap *m, const char *k, int64_t dflt, int64_t lo, int64_t hi,
		    int64_t *out, floe_error *err)
{
	const char *v = prop(m, k);
	*out = dflt;
	if (!v)
		return FLOE_OK;
	if (!floe_parse_i64(v, strlen(v), out) || *out < lo || *out > hi)
		return floe_error_set(err, FLOE_EINVAL, "%s = '%s': expected an integer in [%lld, %lld]",
				      k, v, (long long)lo, (long long)hi);
	return FLOE_OK;
}

int floe_io_s3_new(floe_fileio **out, const floe_strmap *props, floe_error *err)
{
	int rc;
	int64_t part, retries, minw, maxw, deadline, ra, keys, dbatch;
	*out = NULL;
	if ((rc = prop_i64(props, "s3.multipart.part-size-bytes", DEFAULT_PART, MIN_PART,
			   (int64_t)1 << 32, &part, err)) ||
	    (rc = prop_i64(props, "s3.retry.num-retries", 5, 0, 100, &retries, err)) ||
	    (rc = prop_i64(props, "s3.retry.min-wait-ms", 100, 0, 600000, &minw, err)) ||
	    (rc = prop_i64(props, "s3.retry.max-wait-ms", 10000, 0, 600000, &maxw, err)) ||
	    (rc = prop_i64(props, "s3.retry.deadline-ms", 120000, 0, 3600000, &deadline, err)) ||
	    (rc = prop_i64(props, "s3.read-ahead-bytes", 256 << 10, 4096, 64 << 20, &ra, err)) ||
	    (rc = prop_i64(props, "s3.list.max-keys", 1000, 1, 1000, &keys, err)) ||
	    (rc = prop_i64(props, "s3.delete.batch-size", 1000, 1, 1000, &dbatch, err)))
		return rc;
	const char *ps = prop(props, "s3.path-style-access");
	if (ps && !floe_str_ieq(ps, "true") && !floe_str_ieq(ps, "false"))
		return floe_error_set(err, FLOE_EINVAL, "s3.path-style-access = '%s': true or false",
				      ps);
	s3io *s = floe_calloc(1, sizeof(*s));
	if (!s)
		return floe_error_oom(err);
	if (floe_mutex_init(&s->vc_lock)) {
		floe_free(s);
		return floe_error_oom(err);
	}
	if (floe_cond_init(&s->renewed)) {
		floe_mutex_destroy(&s->vc_lock);
		floe_free(s);
		return floe_error_oom(err);
	}
	s->base.ops = &s3_ops;
	s->base.name = "s3";
	s->part_size = (size_t)part;
	s->read_ahead = (size_t)ra;
	s->max_keys = keys;
	s->delete_batch = (size_t)dbatch;
	s->retry.max_attempts = (int)retries + 1;
	s->retry.min_wait_ms = minw;
	s->retry.max_wait_ms = maxw;
	s->retry.deadline_ms = deadline;
	if (!(s->http = floe_http_new())) {
		s_free(&s->base);
		if (floe_http_ready()) /* libcurl is up: the allocation failed */
			return floe_error_oom(err);
		return floe_error_set(err, FLOE_EIO, "cannot start libcurl");
	}
	floe_aws_opts ao = {0};
	ao.access_key = prop(props, "s3.access-key-id");
	ao.secret_key = prop(props, "s3.secret-access-key");
	ao.token = prop(props, "s3.session-token");
	ao.region = prop(props, "client.region");
	if (!ao.region)
		ao.region = prop(props, "s3.region");
	ao.profile = prop(props, "client.profile");
	if ((ao.access_key != NULL) != (ao.secret_key != NULL)) {
		s_free(&s->base);
		return floe_error_set(err, FLOE_EINVAL,
				      "s3.access-key-id and s3.secret-access-key go together");
	}
	if ((rc = floe_aws_provider_new(&s->aws, &ao, s->http, err))) {
		s_free(&s->base);
		return rc;
	}
	const char *ep = prop(props, "s3.endpoint");
	if (!ep)
		ep = floe_aws_provider_endpoint(s->aws, "S3", "s3");
	if (ep) {
		const char *sep = strstr(ep, "://");
		if (!sep || !sep[3] || (strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8))) {
			s_free(&s->base);
			return floe_error_set(err, FLOE_EINVAL,
					      "S3 endpoint '%s': expected http(s)://host[:port]", ep);
		}
		size_t n = strcspn(sep + 3, "/?#");
		s->endpoint = floe_strndup(ep, (size_t)(sep + 3 - ep) + n);
	}
	const char *style = floe_aws_provider_setting(s->aws, "s3.addressing_style");
	s->path_style = ps ? floe_str_ieq(ps, "true")
		       : style ? floe_str_ieq(style, "path")
			       : ep != NULL;
	s->region = floe_strdup(floe_aws_provider_region(s->aws));
	if ((ep && !s->endpoint) || !s->region) {
		s_free(&s->base);
		return floe_error_oom(err);
	}
	*out = &s->base;
	return FLOE_OK;
}
