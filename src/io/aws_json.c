/*
 * aws_json.c — one signed AWS JSON 1.1 request (the protocol of Glue and
 * Kinesis), shared by their clients.
 */
#include <stdio.h>
#include <string.h>

#include "io/aws.h"
#include "io/sigv4.h"
#include "json/json.h"
#include "util/alloc.h"
#include "util/timeutil.h"

static void wipe(char *s)
{
	if (!s)
		return;
	memset(s, 0, strlen(s));
	floe_free(s);
}

int floe_aws_json_call(floe_http *http, floe_aws_provider *prov, const floe_aws_json_req *r,
		       floe_buf *out, floe_http_resp *rs, floe_error *err)
{
	floe_aws_creds cr = {0};
	char host[512], hash[65], amz[17], th[160], hd[64], hs[100];
	char *auth = NULL, *tokh = NULL;
	floe_buf sig;
	int rc;
	memset(rs, 0, sizeof(*rs));
	floe_buf_init(&sig, 4096);
	if ((rc = floe_aws_provider_get(prov, &cr, err)))
		goto done;
	const char *h = strstr(r->endpoint, "://");
	h = h ? h + 3 : r->endpoint;
	snprintf(host, sizeof(host), "%.*s", (int)strcspn(h, "/"), h);
	floe_sha256_hex(hash, r->body ? r->body : "", r->body_len);
	floe_amz_date(amz, floe_now_ms() / 1000);
	floe_sigv4_header sh[5];
	size_t ns = 0;
	sh[ns++] = (floe_sigv4_header){"host", host};
	sh[ns++] = (floe_sigv4_header){"x-amz-content-sha256", hash};
	sh[ns++] = (floe_sigv4_header){"x-amz-date", amz};
	sh[ns++] = (floe_sigv4_header){"x-amz-target", r->target};
	if (cr.token)
		sh[ns++] = (floe_sigv4_header){"x-amz-security-token", cr.token};
	floe_sigv4_req sr = {0};
	sr.method = "POST";
	sr.path = "/";
	sr.query = "";
	sr.headers = sh;
	sr.n_headers = ns;
	sr.payload_hash = hash;
	sr.region = r->region;
	sr.service = r->service;
	sr.amz_date = amz;
	if ((rc = floe_sigv4_sign(&sig, &sr, cr.access_key, cr.secret_key, err)))
		goto done;
	size_t al = sig.len + 32;
	if (!(auth = floe_malloc(al)) ||
	    (cr.token && !(tokh = floe_malloc(strlen(cr.token) + 32)))) {
		rc = floe_error_oom(err);
		goto done;
	}
	snprintf(auth, al, "Authorization: %s", floe_buf_cstr(&sig));
	snprintf(hd, sizeof(hd), "x-amz-date: %s", amz);
	snprintf(hs, sizeof(hs), "x-amz-content-sha256: %s", hash);
	snprintf(th, sizeof(th), "X-Amz-Target: %s", r->target);
	const char *wire[6];
	size_t nw = 0;
	wire[nw++] = "Content-Type: application/x-amz-json-1.1";
	wire[nw++] = th;
	wire[nw++] = auth;
	wire[nw++] = hd;
	wire[nw++] = hs;
	if (tokh) {
		snprintf(tokh, strlen(cr.token) + 32, "x-amz-security-token: %s", cr.token);
		wire[nw++] = tokh;
	}
	floe_http_req rq = {0};
	rq.method = "POST";
	rq.url = r->endpoint;
	rq.headers = wire;
	rq.n_headers = nw;
	rq.body = r->body;
	rq.body_len = r->body_len;
	rq.out = out;
	rq.connect_timeout_ms = r->connect_timeout_ms;
	rq.socket_timeout_ms = r->socket_timeout_ms;
	rq.total_timeout_ms = r->total_timeout_ms;
	rq.at_most_once = r->at_most_once;
	rq.accept_compressed = r->accept_compressed;
	rc = floe_http_perform(http, &rq, rs, err);
done:
	wipe(auth);
	wipe(tokh);
	floe_aws_creds_reset(&cr);
	floe_buf_reset(&sig);
	return rc;
}

void floe_aws_json_error(const uint8_t *body, size_t n, char *type, size_t tcap, char *msg,
			 size_t mcap)
{
	floe_arena a;
	floe_json *j;
	type[0] = msg[0] = 0;
	floe_arena_init(&a, 1024);
	if (!floe_json_parse(&j, &a, (const char *)body, n, NULL, NULL) && j->type == FLOE_JSON_OBJECT) {
		const floe_json *t = floe_json_get(j, "__type"), *m = floe_json_get(j, "message");
		if (!m)
			m = floe_json_get(j, "Message");
		if (t && t->type == FLOE_JSON_STRING) {
			const char *h = strrchr(t->s, '#');
			snprintf(type, tcap, "%s", h ? h + 1 : t->s);
		}
		if (m && m->type == FLOE_JSON_STRING)
			snprintf(msg, mcap, "%s", m->s);
	}
	floe_arena_reset(&a);
}
