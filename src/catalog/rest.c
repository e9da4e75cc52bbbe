/*
 * rest.c — the Iceberg REST catalog client (open-api/rest-catalog-open-api.yaml).
 *
 * DESIGN:
 *  - Opening asks GET /v1/config (with the warehouse) and merges its
 *    defaults, the client's properties and its overrides, in that order;
 *    the prefix and the S3 settings of the FileIO come from the result.
 *  - A commit is expressed as the spec's requirements and updates, computed
 *    by comparing the JSON of the base and the next metadata (schemas,
 *    specs and sort orders by id, snapshots by id, refs by name, properties,
 *    location, format version, statistics). A create is a commit with
 *    assert-create and the whole table as updates (the server builds the
 *    metadata from them, keeping floe's field ids), so a create and an
 *    update share one path. The server writes the metadata file.
 *  - Answers: 409 on a commit is a lost race (retryable FLOE_ECONFLICT);
 *    a 5xx or a transport failure after the request was sent is
 *    FLOE_ECOMMITUNKNOWN (the commit path reads the table again and decides
 *    with the change's own test; nothing is deleted); other requests are
 *    retried on 429/5xx/transport failures.
 *  - Authentication: a bearer token (token), OAuth2 client credentials
 *    (credential = "id:secret", oauth2-server-uri, scope; the token is asked
 *    for again before it expires and on a 401), or SigV4 request signing
 *    (rest.sigv4-enabled, rest.signing-name, rest.signing-region) for AWS
 *    Glue's and S3 Tables' endpoints. header.<name> properties are sent as
 *    headers.
 *  - Vended credentials: every request says X-Iceberg-Access-Delegation:
 *    vended-credentials (unless header.X-Iceberg-Access-Delegation says
 *    otherwise, or the catalog is a SigV4 one); the storage-credentials of a LoadTableResult (else the
 *    s3.* keys of its config, for the table's location) go to the FileIO
 *    for the paths under their prefixes, replaced at each load, so the
 *    table's files are read and written with them instead of the process's
 *    own. A create (a commit, whose answer carries no config) asks for them
 *    once. The catalog is the FileIO's renewer (floe_io_set_renewer): each
 *    prefix remembers the table that vended it, and credentials near their
 *    s3.session-token-expires-at-ms are asked for again through
 *    loadCredentials (GET .../credentials) when the server lists it, else a
 *    loadTable — from whichever I/O thread found them due (the HTTP pool,
 *    the token and the properties are shared safely; vend_tables has its
 *    own lock). The catalog therefore outlives its FileIO's requests.
 *  - Endpoints: the config's endpoints list, else the spec's default set,
 *    says what the server offers; a call it leaves out is FLOE_EUNSUPPORTED
 *    naming the endpoint, never sent (and without transactions/commit the
 *    catalog reports no multi-table transactions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_impl.h"
#include "catalog/rest.h"
#include "catalog/rest_endpoints.h"
#include "io/aws.h"
#include "io/http.h"
#include "io/s3.h"
#include "io/sigv4.h"
#include "json/json.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define RESP_MAX (256u << 20)
#define ERR_MAX (1u << 20)

typedef struct rest_catalog {
	floe_catalog base;
	floe_http *http;
	char *name;
	char *uri;    /* without a trailing '/' */
	char *prefix; /* "" or "<prefix>/" (as given by the server, encoded) */
	floe_strmap props;
	floe_mutex lock; /* the token */
	char *token;
	int64_t token_expires_ms;
	bool oauth;
	bool sigv4;
	bool delegation; /* send X-Iceberg-Access-Delegation: vended-credentials */
	floe_aws_provider *aws;
	floe_retry retry;
	uint32_t endpoints; /* FLOE_REST_EP bits the server offers */
	/* which table vended the credentials of each prefix, for their renewal
	 * (prefix -> "ns\x1fname"); the FileIO's renewer runs on I/O threads */
	floe_mutex vend_lock;
	floe_strmap vend_tables;
} rest_catalog;

static const char *prop(const rest_catalog *c, const char *k)
{
	const char *v = floe_strmap_get(&c->props, k);
	return v && *v ? v : NULL;
}

static bool offers(const rest_catalog *c, int ep)
{
	return (c->endpoints & FLOE_REST_EP(ep)) != 0;
}

static int need(const rest_catalog *c, int ep, floe_error *err)
{
	return floe_rest__need(c->endpoints, ep, err);
}

/* ---- HTTP -------------------------------------------------------------------------- */

static int fetch_token(rest_catalog *c, floe_error *err)
{
	const char *cred = prop(c, "credential");
	const char *colon = cred ? strchr(cred, ':') : NULL;
	const char *ep = prop(c, "oauth2-server-uri");
	const char *scope = prop(c, "scope");
	floe_buf url, body, out;
	floe_arena a;
	floe_json *j;
	int rc;
	floe_buf_init(&url, 8192);
	floe_buf_init(&body, 1 << 16);
	floe_buf_init(&out, 1 << 20);
	floe_arena_init(&a, 4096);
	if (ep)
		rc = floe_buf_puts(&url, ep);
	else
		rc = floe_buf_printf(&url, "%s/v1/oauth/tokens", c->uri);
	rc |= floe_buf_puts(&body, "grant_type=client_credentials&client_id=");
	if (colon) {
		rc |= floe_urlencode_form(&body, cred, (size_t)(colon - cred));
		rc |= floe_buf_puts(&body, "&client_secret=");
		rc |= floe_urlencode_form(&body, colon + 1, strlen(colon + 1));
	} else {
		rc |= floe_buf_puts(&body, "&client_secret=");
		rc |= floe_urlencode_form(&body, cred, strlen(cred));
	}
	rc |= floe_buf_puts(&body, "&scope=");
	rc |= floe_urlencode_form(&body, scope ? scope : "catalog",
				  strlen(scope ? scope : "catalog"));
	if (rc) {
		rc = floe_error_oom(err);
		goto done;
	}
	const char *hdrs[] = {"Content-Type: application/x-www-form-urlencoded",
			      "Accept: application/json"};
	floe_http_req rq = {0};
	floe_http_resp rs;
	rq.method = "POST";
	rq.url = floe_buf_cstr(&url);
	rq.headers = hdrs;
	rq.n_headers = 2;
	rq.body = body.data;
	rq.body_len = body.len;
	rq.out = &out;
	rq.total_timeout_ms = 30000;
	if ((rc = floe_http_perform(c->http, &rq, &rs, err)))
		goto done;
	if (rs.status != 200) {
		rc = floe_error_set(err, rs.status == 401 || rs.status == 400 ? FLOE_EINVAL : FLOE_EIO,
				    "OAuth2 token request to %s: HTTP %ld", floe_buf_cstr(&url),
				    rs.status);
		goto done;
	}
	if ((rc = floe_json_parse(&j, &a, floe_buf_cstr(&out), out.len, NULL, err)))
		goto done;
	const floe_json *t = floe_json_get(j, "access_token");
	const floe_json *e = floe_json_get(j, "expires_in");
	if (!t || t->type != FLOE_JSON_STRING) {
		rc = floe_error_corrupt(err, "OAuth2 token answer without access_token");
		goto done;
	}
	floe_free(c->token);
	if (!(c->token = floe_strdup(t->s))) {
		rc = floe_error_oom(err);
		goto done;
	}
	c->token_expires_ms = e && e->type == FLOE_JSON_NUMBER && e->is_int && e->i > 0
				      ? floe_now_ms() + e->i * 1000
				      : 0;
done:
	if (body.data)
		memset(body.data, 0, body.len);
	floe_buf_reset(&url);
	floe_buf_reset(&body);
	floe_buf_reset(&out);
	floe_arena_reset(&a);
	return rc;
}

typedef struct rest_resp {
	long status;
	bool sent;
} rest_resp;

/* host of a URL ("host[:port]") into out */
static void url_host(const char *url, char *out, size_t cap)
{
	const char *h = strstr(url, "://");
	h = h ? h + 3 : url;
	size_t n = strcspn(h, "/?#");
	snprintf(out, cap, "%.*s", (int)n, h);
}

/* the path and query of a URL */
static void url_path_query(const char *url, const char **path, size_t *plen, const char **query)
{
	const char *h = strstr(url, "://");
	h = h ? h + 3 : url;
	const char *p = h + strcspn(h, "/?#");
	const char *q = strchr(p, '?');
	*path = *p == '/' ? p : "/";
	*plen = *p == '/' ? (q ? (size_t)(q - p) : strlen(p)) : 1;
	*query = q ? q + 1 : "";
}

/* One request. method, url, body (JSON, may be NULL). */
static int attempt(rest_catalog *c, const char *method, const char *url, const floe_buf *body,
		   floe_buf *out, floe_buf *errdoc, rest_resp *rr, bool once, floe_error *err)
{
	const char *wire[40];
	size_t nw = 0;
	char *auth = NULL, *tokh = NULL;
	char amz[17], hd[64], hs[100];
	int rc = FLOE_OK;
	floe_buf sig;
	floe_buf_init(&sig, 4096);
	wire[nw++] = "Accept: application/json";
	wire[nw++] = "X-Client-Version: floe";
	if (body)
		wire[nw++] = "Content-Type: application/json";
	if (c->delegation)
		wire[nw++] = "X-Iceberg-Access-Delegation: vended-credentials";
	for (size_t i = 0; i < c->props.len && nw < 30; i++)
		if (!strncmp(c->props.items[i].key, "header.", 7)) {
			/* stored "Name: value" under "@header.<name>" at open */
			const char *k = c->props.items[i].key;
			char hk[300];
			snprintf(hk, sizeof(hk), "@%s", k);
			const char *line = floe_strmap_get(&c->props, hk);
			if (line)
				wire[nw++] = line;
		}
	if (c->sigv4) {
		floe_aws_creds cr = {0};
		char host[512], hash[65];
		const char *path, *query;
		size_t plen;
		if ((rc = floe_aws_provider_get(c->aws, &cr, err)))
			goto done;
		url_host(url, host, sizeof(host));
		url_path_query(url, &path, &plen, &query);
		char pathz[8192];
		snprintf(pathz, sizeof(pathz), "%.*s", (int)plen, path);
		floe_sha256_hex(hash, body ? (const char *)body->data : "", body ? body->len : 0);
		floe_amz_date(amz, floe_now_ms() / 1000);
		floe_sigv4_header sh[4];
		size_t ns = 0;
		sh[ns++] = (floe_sigv4_header){"host", host};
		sh[ns++] = (floe_sigv4_header){"x-amz-content-sha256", hash};
		sh[ns++] = (floe_sigv4_header){"x-amz-date", amz};
		if (cr.token)
			sh[ns++] = (floe_sigv4_header){"x-amz-security-token", cr.token};
		floe_sigv4_req sr = {0};
		sr.method = method;
		sr.path = pathz;
		sr.query = query;
		sr.headers = sh;
		sr.n_headers = ns;
		sr.payload_hash = hash;
		sr.region = prop(c, "rest.signing-region") ? prop(c, "rest.signing-region")
							   : floe_aws_provider_region(c->aws);
		sr.service = prop(c, "rest.signing-name") ? prop(c, "rest.signing-name") : "execute-api";
		sr.amz_date = amz;
		rc = floe_sigv4_sign(&sig, &sr, cr.access_key, cr.secret_key, err);
		if (!rc && cr.token) {
			size_t tl = strlen(cr.token) + 32;
			if ((tokh = floe_malloc(tl)))
				snprintf(tokh, tl, "x-amz-security-token: %s", cr.token);
			else
				rc = floe_error_oom(err);
		}
		floe_aws_creds_reset(&cr);
		if (rc)
			goto done;
		size_t al = sig.len + 32;
		if (!(auth = floe_malloc(al))) {
			rc = floe_error_oom(err);
			goto done;
		}
		snprintf(auth, al, "Authorization: %s", floe_buf_cstr(&sig));
		snprintf(hd, sizeof(hd), "x-amz-date: %s", amz);
		snprintf(hs, sizeof(hs), "x-amz-content-sha256: %s", hash);
		wire[nw++] = auth;
		wire[nw++] = hd;
		wire[nw++] = hs;
		if (tokh)
			wire[nw++] = tokh;
	} else {
		floe_mutex_lock(&c->lock);
		if (c->oauth && (!c->token || (c->token_expires_ms &&
					       floe_now_ms() > c->token_expires_ms - 60000)))
			rc = fetch_token(c, err);
		if (!rc && c->token) {
			size_t al = strlen(c->token) + 32;
			if ((auth = floe_malloc(al)))
				snprintf(auth, al, "Authorization: Bearer %s", c->token);
			else
				rc = floe_error_oom(err);
		}
		floe_mutex_unlock(&c->lock);
		if (rc)
			goto done;
		if (auth)
			wire[nw++] = auth;
	}
	floe_http_req rq = {0};
	floe_http_resp rs;
	rq.method = method;
	rq.url = url;
	rq.headers = wire;
	rq.n_headers = nw;
	rq.body = body ? body->data : NULL;
	rq.body_len = body ? body->len : 0;
	rq.out = out;
	rq.err_out = errdoc;
	rq.total_timeout_ms = floe_strmap_get_i64(&c->props, "rest.request-timeout-ms", 120000);
	rq.accept_compressed = true;
	rq.at_most_once = once;
	rc = floe_http_perform(c->http, &rq, &rs, err);
	rr->status = rs.status;
	rr->sent = rs.sent;
done:
	if (auth) {
		memset(auth, 0, strlen(auth));
		floe_free(auth);
	}
	if (tokh) {
		memset(tokh, 0, strlen(tokh));
		floe_free(tokh);
	}
	floe_buf_reset(&sig);
	return rc;
}

/* The error document's message ("type: message"), or "". */
static void err_text(const floe_buf *doc, char *out, size_t cap)
{
	floe_arena a;
	floe_json *j;
	out[0] = 0;
	if (!doc->len)
		return;
	floe_arena_init(&a, 4096);
	if (!floe_json_parse(&j, &a, (const char *)doc->data, doc->len, NULL, NULL)) {
		const floe_json *e = floe_json_get(j, "error");
		const floe_json *m = e ? floe_json_get(e, "message") : NULL;
		const floe_json *t = e ? floe_json_get(e, "type") : NULL;
		snprintf(out, cap, "%s%s%s", t && t->type == FLOE_JSON_STRING ? t->s : "",
			 t && m ? ": " : "", m && m->type == FLOE_JSON_STRING ? m->s : "");
	}
	floe_arena_reset(&a);
}

/*
 * A request with retries (idempotent ones: everything but a commit, which
 * the caller sends with retry=false). FLOE_OK when an answer arrived.
 */
static int call(rest_catalog *c, const char *method, const char *url, const floe_buf *body,
		floe_buf *out, floe_buf *errdoc, rest_resp *rr, bool retry, floe_error *err)
{
	floe_retry r = c->retry;
	size_t out0 = out ? out->len : 0;
	bool reauth = true;
	floe_retry_start(&r);
	for (;;) {
		floe_error e;
		floe_error_clear(&e);
		if (out)
			out->len = out0;
		floe_buf_clear(errdoc);
		int rc = attempt(c, method, url, body, out, errdoc, rr, !retry, &e);
		if (!rc && rr->status == 401 && c->oauth && reauth) {
			/* the token may have been revoked or expired early: one new token */
			reauth = false;
			floe_mutex_lock(&c->lock);
			floe_free(c->token);
			c->token = NULL;
			floe_mutex_unlock(&c->lock);
			continue;
		}
		bool again = retry && (rc == FLOE_EIO || rc == FLOE_ETIMEDOUT ||
				       (!rc && (rr->status == 429 || rr->status >= 500)));
		/* a request that never left may always be sent again */
		if (!retry && rc && !rr->sent && (rc == FLOE_EIO || rc == FLOE_ETIMEDOUT))
			again = true;
		if (!again || !floe_retry_next(&r, -1)) {
			if (rc && err)
				*err = e;
			return rc;
		}
	}
}

static int status_err(floe_error *err, long status, const floe_buf *doc, const char *what)
{
	char m[600];
	err_text(doc, m, sizeof(m));
	int code = status == 404   ? FLOE_ENOTFOUND
		   : status == 409 ? FLOE_EEXISTS
		   : status == 400 || status == 401 || status == 403 || status == 422 ? FLOE_EINVAL
		   : status == 406 || status == 501 ? FLOE_EUNSUPPORTED
						      : FLOE_EIO;
	return floe_error_set(err, code, "REST catalog: %s: HTTP %ld%s%s", what, status,
			      m[0] ? " " : "", m);
}

/* ---- URLs ------------------------------------------------------------------------- */

/* namespace "a.b" as a path segment: parts joined by %1F */
static int put_ns(floe_buf *b, const char *ns)
{
	const char *p = ns;
	int rc = 0;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		rc |= floe_aws_uri_encode(b, p, n, false);
		if (!dot)
			break;
		rc |= floe_buf_puts(b, "%1F");
		p = dot + 1;
	}
	return rc;
}

static int url_of(rest_catalog *c, floe_buf *b, const char *ns, const char *table,
		  const char *tail)
{
	int rc = floe_buf_printf(b, "%s/v1/%s", c->uri, c->prefix);
	if (ns) {
		rc |= floe_buf_puts(b, "namespaces/");
		rc |= put_ns(b, ns);
		if (table) {
			rc |= floe_buf_puts(b, "/tables/");
			rc |= floe_aws_uri_encode(b, table, strlen(table), false);
		}
	}
	if (tail)
		rc |= floe_buf_puts(b, tail);
	return rc ? FLOE_ENOMEM : FLOE_OK;
}

/* a JSON array of namespace parts from "a.b" */
static void jw_ns(floe_jw *w, const char *ns)
{
	floe_jw_arr_begin(w);
	const char *p = ns;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		floe_jw_strn(w, p, n);
		if (!dot)
			break;
		p = dot + 1;
	}
	floe_jw_arr_end(w);
}

/* "a.b" from a JSON array of parts (arena string) */
static char *ns_of(floe_arena *a, const floe_json *arr)
{
	floe_buf b;
	floe_buf_init(&b, 1 << 16);
	size_t i = 0;
	for (const floe_json *p = arr && arr->type == FLOE_JSON_ARRAY ? arr->child : NULL; p;
	     p = p->next, i++) {
		if (p->type != FLOE_JSON_STRING || (i && floe_buf_putc(&b, '.')) ||
		    floe_buf_append(&b, p->s, p->len)) {
			floe_buf_reset(&b);
			return NULL;
		}
	}
	char *s = floe_arena_strdup(a, floe_buf_cstr(&b));
	floe_buf_reset(&b);
	return s;
}

/* GET a JSON document into *j (arena a); FLOE_ENOTFOUND etc. mapped */
static int get_json(rest_catalog *c, const char *url, floe_arena *a, floe_buf *out, floe_json **j,
		    const char *what, floe_error *err)
{
	floe_buf doc;
	rest_resp rr;
	floe_buf_init(&doc, ERR_MAX);
	int rc = call(c, "GET", url, NULL, out, &doc, &rr, true, err);
	if (!rc && rr.status != 200)
		rc = status_err(err, rr.status, &doc, what);
	if (!rc && (rc = floe_json_parse(j, a, floe_buf_cstr(out), out->len, NULL, err)))
		rc = floe_error_prefix(err, rc, "REST catalog: %s: ", what);
	floe_buf_reset(&doc);
	return rc;
}

/* ---- namespaces --------------------------------------------------------------------- */

static int r_create_namespace(floe_catalog *cat, const char *ns, const floe_strmap *props,
			      floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_buf url, body, doc;
	floe_jw w;
	rest_resp rr;
	int rc;
	if ((rc = need(c, FLOE_REST_EP_CREATE_NS, err)))
		return rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&body, 1 << 20);
	floe_buf_init(&doc, ERR_MAX);
	floe_jw_init(&w, &body, 0);
	floe_jw_obj_begin(&w);
	floe_jw_key(&w, "namespace");
	jw_ns(&w, ns);
	floe_jw_key(&w, "properties");
	floe_jw_obj_begin(&w);
	for (size_t i = 0; props && i < props->len; i++)
		floe_jw_kv_str(&w, props->items[i].key, props->items[i].value);
	floe_jw_obj_end(&w);
	floe_jw_obj_end(&w);
	if (floe_jw_finish(&w) || url_of(c, &url, NULL, NULL, "namespaces")) {
		rc = floe_error_oom(err);
		goto done;
	}
	rc = call(c, "POST", floe_buf_cstr(&url), &body, NULL, &doc, &rr, false, err);
	if (!rc && rr.status == 409)
		rc = floe_error_set(err, FLOE_EEXISTS, "namespace '%s' already exists", ns);
	else if (!rc && rr.status != 200)
		rc = status_err(err, rr.status, &doc, "create namespace");
done:
	floe_buf_reset(&url);
	floe_buf_reset(&body);
	floe_buf_reset(&doc);
	return rc;
}

/* one listing through floe_catalog__list_pages */
typedef struct rest_list {
	rest_catalog *c;
	const char *ns, *parent;
	floe_buf url, out;
	floe_name_fn fn;
	void *payload;
} rest_list;

/* GET the page after token: namespaces (under parent) or, with ns, its tables */
static int list_page(void *payload, const char *token, floe_arena *a, const floe_json **doc,
		     floe_error *err)
{
	rest_list *l = payload;
	floe_json *j = NULL;
	int rc;
	floe_buf_clear(&l->url);
	floe_buf_clear(&l->out);
	rc = l->ns ? url_of(l->c, &l->url, l->ns, NULL, "/tables")
		   : url_of(l->c, &l->url, NULL, NULL, "namespaces");
	char sep = '?';
	if (!rc && !l->ns && l->parent && *l->parent) {
		rc |= floe_buf_puts(&l->url, "?parent=");
		rc |= put_ns(&l->url, l->parent);
		sep = '&';
	}
	if (!rc && token) {
		rc |= floe_buf_putc(&l->url, sep);
		rc |= floe_buf_puts(&l->url, "pageToken=");
		rc |= floe_aws_uri_encode(&l->url, token, strlen(token), false);
	}
	if (rc)
		return floe_error_oom(err);
	rc = get_json(l->c, floe_buf_cstr(&l->url), a, &l->out, &j,
		      l->ns ? "list tables" : "list namespaces", err);
	if (rc == FLOE_ENOTFOUND && l->ns)
		rc = floe_error_set(err, rc, "namespace '%s' does not exist", l->ns);
	*doc = j;
	return rc;
}

static int list_run(rest_list *l, floe_list_items_fn items, floe_error *err)
{
	int rc0 = need(l->c, l->ns ? FLOE_REST_EP_LIST_TABLES : FLOE_REST_EP_LIST_NS, err);
	if (rc0)
		return rc0;
	floe_buf_init(&l->url, 1 << 16);
	floe_buf_init(&l->out, RESP_MAX);
	int rc = floe_catalog__list_pages("next-page-token", list_page, items, l, err);
	floe_buf_reset(&l->url);
	floe_buf_reset(&l->out);
	return rc;
}

static int namespace_items(void *payload, const floe_json *doc, floe_arena *a, floe_error *err)
{
	rest_list *l = payload;
	const floe_json *list = floe_json_get(doc, "namespaces");
	int rc = FLOE_OK;
	for (const floe_json *n = list ? list->child : NULL; n && !rc; n = n->next) {
		char *s = ns_of(a, n);
		rc = s ? l->fn(s, NULL, l->payload) : floe_error_oom(err);
	}
	return rc;
}

static int r_list_namespaces(floe_catalog *cat, const char *parent, floe_name_fn fn,
			     void *payload, floe_error *err)
{
	rest_list l = {(rest_catalog *)cat, NULL, parent, {0}, {0}, fn, payload};
	return list_run(&l, namespace_items, err);
}

static int r_drop_namespace(floe_catalog *cat, const char *ns, floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_buf url, doc;
	rest_resp rr;
	int rc = need(c, FLOE_REST_EP_DROP_NS, err);
	if (rc)
		return rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&doc, ERR_MAX);
	rc = url_of(c, &url, ns, NULL, NULL) ? floe_error_oom(err)
						  : call(c, "DELETE", floe_buf_cstr(&url), NULL,
							 NULL, &doc, &rr, true, err);
	if (!rc && rr.status == 404)
		rc = floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns);
	else if (!rc && rr.status == 409)
		rc = floe_error_set(err, FLOE_EINVAL, "namespace '%s' is not empty", ns);
	else if (!rc && rr.status != 204 && rr.status != 200)
		rc = status_err(err, rr.status, &doc, "drop namespace");
	floe_buf_reset(&url);
	floe_buf_reset(&doc);
	return rc;
}

static int r_load_ns_props(floe_catalog *cat, const char *ns, floe_strmap *out, floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_buf url, body;
	floe_arena a;
	floe_json *j;
	int rc = need(c, FLOE_REST_EP_LOAD_NS, err);
	if (rc)
		return rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&body, RESP_MAX);
	floe_arena_init(&a, 4096);
	rc = url_of(c, &url, ns, NULL, NULL) ? floe_error_oom(err)
					      : get_json(c, floe_buf_cstr(&url), &a, &body, &j,
							 "load namespace", err);
	if (rc == FLOE_ENOTFOUND)
		rc = floe_error_set(err, rc, "namespace '%s' does not exist", ns);
	const floe_json *p = rc ? NULL : floe_json_get(j, "properties");
	for (const floe_json *kv = p ? p->child : NULL; kv && !rc; kv = kv->next)
		if (kv->type == FLOE_JSON_STRING && floe_strmap_set(out, kv->key, kv->s))
			rc = floe_error_oom(err);
	floe_buf_reset(&url);
	floe_buf_reset(&body);
	floe_arena_reset(&a);
	return rc;
}

/* HEAD .../namespaces/{namespace}: for a server that offers it but not GET */
static int ns_head(rest_catalog *c, const char *ns, bool *exists, floe_error *err)
{
	floe_buf url, doc;
	rest_resp rr;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&doc, ERR_MAX);
	int rc = url_of(c, &url, ns, NULL, NULL) ? floe_error_oom(err)
						  : call(c, "HEAD", floe_buf_cstr(&url), NULL, NULL,
							 &doc, &rr, true, err);
	if (!rc && rr.status != 204 && rr.status != 200 && rr.status != 404)
		rc = status_err(err, rr.status, &doc, "check namespace");
	*exists = !rc && rr.status != 404;
	floe_buf_reset(&url);
	floe_buf_reset(&doc);
	return rc;
}

static int r_namespace_exists(floe_catalog *cat, const char *ns, bool *exists, floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	if (!offers(c, FLOE_REST_EP_LOAD_NS) && offers(c, FLOE_REST_EP_NS_EXISTS))
		return ns_head(c, ns, exists, err);
	floe_strmap m;
	floe_strmap_init(&m);
	floe_error e;
	floe_error_clear(&e);
	int rc = r_load_ns_props(cat, ns, &m, &e);
	floe_strmap_reset(&m);
	*exists = rc == 0;
	if (rc == FLOE_ENOTFOUND)
		return FLOE_OK;
	if (rc && err)
		*err = e;
	return rc;
}

static int r_update_ns_props(floe_catalog *cat, const char *ns, const floe_strmap *set,
			     const char *const *remove, size_t n_remove, floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_buf url, body, doc;
	floe_jw w;
	rest_resp rr;
	int rc;
	if ((rc = need(c, FLOE_REST_EP_UPDATE_NS, err)))
		return rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&body, 1 << 20);
	floe_buf_init(&doc, ERR_MAX);
	floe_jw_init(&w, &body, 0);
	floe_jw_obj_begin(&w);
	floe_jw_key(&w, "removals");
	floe_jw_arr_begin(&w);
	for (size_t i = 0; i < n_remove; i++)
		floe_jw_str(&w, remove[i]);
	floe_jw_arr_end(&w);
	floe_jw_key(&w, "updates");
	floe_jw_obj_begin(&w);
	for (size_t i = 0; set && i < set->len; i++)
		floe_jw_kv_str(&w, set->items[i].key, set->items[i].value);
	floe_jw_obj_end(&w);
	floe_jw_obj_end(&w);
	if (floe_jw_finish(&w) || url_of(c, &url, ns, NULL, "/properties")) {
		rc = floe_error_oom(err);
		goto done;
	}
	rc = call(c, "POST", floe_buf_cstr(&url), &body, NULL, &doc, &rr, true, err);
	if (!rc && rr.status != 200)
		rc = status_err(err, rr.status, &doc, "update namespace properties");
done:
	floe_buf_reset(&url);
	floe_buf_reset(&body);
	floe_buf_reset(&doc);
	return rc;
}

/* ---- tables -------------------------------------------------------------------------- */

static int table_items(void *payload, const floe_json *doc, floe_arena *a, floe_error *err)
{
	rest_list *l = payload;
	const floe_json *ids = floe_json_get(doc, "identifiers");
	int rc = FLOE_OK;
	for (const floe_json *id = ids ? ids->child : NULL; id && !rc; id = id->next) {
		const floe_json *nm = floe_json_get(id, "name");
		const floe_json *nsj = floe_json_get(id, "namespace");
		char *s = nsj && nsj->type == FLOE_JSON_ARRAY ? ns_of(a, nsj) : NULL;
		if (!nm || nm->type != FLOE_JSON_STRING || !s)
			rc = floe_error_corrupt(err, "REST catalog: a table identifier "
						     "without namespace or name");
		else
			rc = l->fn(s, nm->s, l->payload);
	}
	return rc;
}

static int r_list_tables(floe_catalog *cat, const char *ns, floe_name_fn fn, void *payload,
			 floe_error *err)
{
	rest_list l = {(rest_catalog *)cat, ns, NULL, {0}, {0}, fn, payload};
	return list_run(&l, table_items, err);
}

/* metadata from a LoadTableResult / CommitTableResponse document */
static int metadata_from(floe_metadata **out, const floe_json *j, char **location,
			 floe_error *err)
{
	const floe_json *loc = floe_json_get(j, "metadata-location");
	const floe_json *md = floe_json_get(j, "metadata");
	if (!md || md->type != FLOE_JSON_OBJECT || !md->text)
		return floe_error_corrupt(err, "REST catalog: an answer without metadata");
	int rc = floe_metadata_parse(out, md->text, md->text_len, err);
	if (rc)
		return floe_error_prefix(err, rc, "REST catalog: table metadata: ");
	if (loc && loc->type == FLOE_JSON_STRING) {
		(*out)->metadata_location = floe_arena_strdup(&(*out)->arena, loc->s);
		if (!(*out)->metadata_location || (location && !(*location = floe_strdup(loc->s)))) {
			floe_metadata_free(*out);
			*out = NULL;
			return floe_error_oom(err);
		}
	}
	return FLOE_OK;
}

/* String members of a JSON object into a map. */
static int string_members(floe_strmap *m, const floe_json *o)
{
	for (const floe_json *e = o && o->type == FLOE_JSON_OBJECT ? o->child : NULL; e; e = e->next)
		if (e->type == FLOE_JSON_STRING) {
			char k[256];
			snprintf(k, sizeof(k), "%.*s", (int)e->key_len, e->key);
			if (floe_strmap_set(m, k, e->s))
				return FLOE_ENOMEM;
		}
	return FLOE_OK;
}

static void wipe_map(floe_strmap *m)
{
	for (size_t i = 0; i < m->len; i++)
		if (m->items[i].value)
			memset(m->items[i].value, 0, strlen(m->items[i].value));
	floe_strmap_reset(m);
}

/* ---- vended credentials ----------------------------------------------------------- */

/* whether two prefixes name one place for the FileIO (s3:// = s3a:// = s3n://) */
static bool same_place(const char *a, const char *b)
{
	const char *x = strstr(a, "://"), *y = strstr(b, "://");
	return x && y ? !strcmp(x, y) : !strcmp(a, b);
}

/* whether set (of prefixes) names prefix's place */
static bool in_set(const floe_strmap *set, const char *prefix)
{
	for (size_t i = 0; i < set->len; i++)
		if (same_place(set->items[i].key, prefix))
			return true;
	return false;
}

/*
 * One answer's credentials to the FileIO (REST spec: storage-credentials,
 * each a prefix and a config, the longest prefix holding a path winning —
 * the FileIO's match; "clients must first check whether the respective
 * credentials exist in the storage-credentials field before checking the
 * config": the s3.* keys of a LoadTableResult's config, for the table's
 * location, only when the list has no S3 ones). The prefixes set are
 * remembered as the table's, for their renewal; the table's prefixes the
 * answer no longer names are dropped (their old keys, on a longer prefix,
 * would otherwise still win). Values are never logged.
 */
static int vend_apply(rest_catalog *c, const char *ns, const char *name, const floe_json *sc,
		      const floe_json *cfg, const char *location, const char *how,
		      floe_error *err)
{
	floe_strmap set, stale, none;
	int rc = FLOE_OK, n = 0;
	size_t il = strlen(ns) + strlen(name) + 2;
	char *ident = floe_malloc(il);
	if (!ident)
		return floe_error_oom(err);
	snprintf(ident, il, "%s\x1f%s", ns, name);
	floe_strmap_init(&set);
	floe_strmap_init(&stale);
	floe_strmap_init(&none);
	for (const floe_json *e = sc && sc->type == FLOE_JSON_ARRAY ? sc->child : NULL; e && !rc;
	     e = e->next) {
		const floe_json *pf = floe_json_get(e, "prefix");
		floe_strmap props;
		floe_strmap_init(&props);
		if (!pf || pf->type != FLOE_JSON_STRING) {
			rc = floe_error_corrupt(err, "a storage credential without a prefix");
		} else if (string_members(&props, floe_json_get(e, "config"))) {
			rc = floe_error_oom(err);
		} else if (!floe_strmap_get(&props, "s3.access-key-id")) {
			/* not S3's (gcs.*, adls.*): not ours to use */
		} else if (!(rc = floe_io_set_credentials(c->base.io, pf->s, &props, err))) {
			n++;
			if (floe_strmap_set(&set, pf->s, ""))
				rc = floe_error_oom(err);
		}
		wipe_map(&props);
	}
	if (!n && !rc && cfg && floe_json_get(cfg, "s3.access-key-id") && location) {
		floe_strmap props;
		floe_strmap_init(&props);
		rc = string_members(&props, cfg)
			     ? floe_error_oom(err)
			     : floe_io_set_credentials(c->base.io, location, &props, err);
		wipe_map(&props);
		if (!rc) {
			n++;
			if (floe_strmap_set(&set, location, ""))
				rc = floe_error_oom(err);
		}
	}
	if (rc == FLOE_EUNSUPPORTED) { /* a table on local files: nothing to sign */
		floe_error_clear(err);
		rc = FLOE_OK;
		n = 0;
	}
	if (!rc && n) {
		floe_mutex_lock(&c->vend_lock);
		for (size_t i = 0; i < c->vend_tables.len && !rc; i++) {
			const floe_strmap_entry *t = &c->vend_tables.items[i];
			if (!strcmp(t->value, ident) && !in_set(&set, t->key) &&
			    floe_strmap_set(&stale, t->key, ""))
				rc = floe_error_oom(err);
		}
		for (size_t i = 0; i < set.len && !rc; i++)
			if (floe_strmap_set(&c->vend_tables, set.items[i].key, ident))
				rc = floe_error_oom(err);
		for (size_t i = 0; i < stale.len; i++)
			floe_strmap_remove(&c->vend_tables, stale.items[i].key);
		floe_mutex_unlock(&c->vend_lock);
		for (size_t i = 0; i < stale.len; i++) {
			floe_error e;
			floe_error_clear(&e);
			(void)!floe_io_set_credentials(c->base.io, stale.items[i].key, &none, &e);
		}
		FLOE_DEBUG("REST: %s.%s: vended credentials (%s) for %d location%s", ns, name, how, n,
			   n == 1 ? "" : "s");
	}
	floe_strmap_reset(&set);
	floe_strmap_reset(&stale);
	floe_free(ident);
	return rc ? floe_error_prefix(err, rc, "%s of %s.%s: vended credentials: ", how, ns, name)
		  : FLOE_OK;
}

/* The credentials a LoadTableResult vends, to the FileIO. */
static int use_vended(rest_catalog *c, const floe_json *j, const char *location, const char *ns,
		      const char *name, floe_error *err)
{
	return vend_apply(c, ns, name, floe_json_get(j, "storage-credentials"),
			  floe_json_get(j, "config"), location, "REST load", err);
}

/*
 * New vended credentials for ns.name: GET .../credentials (loadCredentials)
 * when the server offers it, else a loadTable whose credentials only are
 * used. Any thread (the FileIO's renewer): the catalog's HTTP pool, token
 * and properties are safe to share.
 */
static int load_credentials(rest_catalog *c, const char *ns, const char *name, floe_error *err)
{
	bool lc = offers(c, FLOE_REST_EP_LOAD_CREDENTIALS);
	floe_buf url, body;
	floe_arena a;
	floe_json *j = NULL;
	int rc;
	if (!lc && (rc = need(c, FLOE_REST_EP_LOAD_TABLE, err)))
		return rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&body, RESP_MAX);
	floe_arena_init(&a, 1 << 16);
	rc = url_of(c, &url, ns, name, lc ? "/credentials" : NULL)
		     ? floe_error_oom(err)
		     : get_json(c, floe_buf_cstr(&url), &a, &body, &j,
				lc ? "load credentials" : "load table", err);
	if (rc == FLOE_ENOTFOUND)
		rc = floe_error_set(err, rc, "table '%s.%s' does not exist", ns, name);
	const floe_json *sc = rc ? NULL : floe_json_get(j, "storage-credentials");
	if (!rc && lc) {
		rc = sc && sc->type == FLOE_JSON_ARRAY
			     ? vend_apply(c, ns, name, sc, NULL, NULL, "REST loadCredentials", err)
			     : floe_error_corrupt(err, "a loadCredentials answer without "
						       "storage-credentials");
	} else if (!rc) {
		const floe_json *md = floe_json_get(j, "metadata");
		const floe_json *loc = md ? floe_json_get(md, "location") : NULL;
		rc = use_vended(c, j, loc && loc->type == FLOE_JSON_STRING ? loc->s : NULL, ns,
				name, err);
	}
	if (body.data)
		memset(body.data, 0, body.len); /* held the vended keys */
	floe_buf_reset(&url);
	floe_buf_reset(&body);
	floe_arena_reset(&a);
	return rc ? floe_error_prefix(err, rc, "REST catalog: new credentials for %s.%s: ", ns, name)
		  : FLOE_OK;
}

/* The FileIO's renewer (floe_io_set_renewer): the table that vended
 * prefix's credentials is asked for new ones. */
static int renew_vended(void *payload, const char *prefix, floe_error *err)
{
	rest_catalog *c = payload;
	floe_mutex_lock(&c->vend_lock);
	const char *v = floe_strmap_get(&c->vend_tables, prefix);
	char *ident = v ? floe_strdup(v) : NULL;
	floe_mutex_unlock(&c->vend_lock);
	if (!ident)
		return v ? floe_error_oom(err)
			 : floe_error_set(err, FLOE_ENOTFOUND,
					  "REST catalog: no table vended the credentials for '%s'",
					  prefix);
	char *sep = strchr(ident, '\x1f');
	int rc;
	if (!sep) {
		rc = floe_error_set(err, FLOE_EINVAL, "REST catalog: bad table for '%s'", prefix);
	} else {
		*sep = 0;
		rc = load_credentials(c, ident, sep + 1, err);
	}
	floe_free(ident);
	return rc;
}

static int r_load_table(floe_catalog *cat, const char *ns, const char *name, floe_metadata **out,
			floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_buf url, body;
	floe_arena a;
	floe_json *j;
	*out = NULL;
	int rc = need(c, FLOE_REST_EP_LOAD_TABLE, err);
	if (rc)
		return rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&body, RESP_MAX);
	floe_arena_init(&a, 1 << 16);
	rc = url_of(c, &url, ns, name, NULL) ? floe_error_oom(err)
					      : get_json(c, floe_buf_cstr(&url), &a, &body, &j,
							 "load table", err);
	if (rc == FLOE_ENOTFOUND)
		rc = floe_error_set(err, rc, "table '%s.%s' does not exist", ns, name);
	if (!rc)
		rc = metadata_from(out, j, NULL, err);
	if (!rc && (rc = use_vended(c, j, (*out)->location, ns, name, err))) {
		floe_metadata_free(*out);
		*out = NULL;
	}
	if (body.data)
		memset(body.data, 0, body.len); /* held the vended keys */
	floe_buf_reset(&url);
	floe_buf_reset(&body);
	floe_arena_reset(&a);
	return rc;
}

/* ---- commits: requirements and updates from two metadata documents ------------------- */

static const floe_json *by_int(const floe_json *arr, const char *key, int64_t v)
{
	for (const floe_json *e = arr ? arr->child : NULL; e; e = e->next) {
		const floe_json *k = floe_json_get(e, key);
		if (k && k->type == FLOE_JSON_NUMBER && k->is_int && k->i == v)
			return e;
	}
	return NULL;
}

static int64_t get_int(const floe_json *o, const char *key, int64_t dflt)
{
	const floe_json *k = floe_json_get(o, key);
	return k && k->type == FLOE_JSON_NUMBER && k->is_int ? k->i : dflt;
}

static bool same_json(const floe_json *a, const floe_json *b)
{
	floe_buf x, y;
	floe_jw w;
	bool same;
	if (!a || !b)
		return a == b;
	floe_buf_init(&x, 0);
	floe_buf_init(&y, 0);
	floe_jw_init(&w, &x, 0);
	floe_jw_value(&w, a);
	(void)floe_jw_finish(&w);
	floe_jw_init(&w, &y, 0);
	floe_jw_value(&w, b);
	(void)floe_jw_finish(&w);
	same = x.len == y.len && (!x.len || !memcmp(x.data, y.data, x.len));
	floe_buf_reset(&x);
	floe_buf_reset(&y);
	return same;
}

/* id-keyed additions: every element of next's arr not in base's (by key) */
static void add_new(floe_jw *w, const floe_json *b, const floe_json *n, const char *arr,
		    const char *key, const char *action, const char *field, int64_t last_col)
{
	const floe_json *ba = b ? floe_json_get(b, arr) : NULL;
	const floe_json *na = floe_json_get(n, arr);
	for (const floe_json *e = na ? na->child : NULL; e; e = e->next) {
		if (ba && by_int(ba, key, get_int(e, key, -1)))
			continue;
		floe_jw_obj_begin(w);
		floe_jw_kv_str(w, "action", action);
		floe_jw_key(w, field);
		floe_jw_value(w, e);
		if (last_col >= 0)
			floe_jw_kv_i64(w, "last-column-id", last_col);
		floe_jw_obj_end(w);
	}
}

/* set-current-schema etc.: -1 ("the one added last") when next's current is new */
static void set_current(floe_jw *w, const floe_json *b, const floe_json *n, const char *arr,
			const char *key, const char *cur_key, const char *action, const char *field)
{
	int64_t nc = get_int(n, cur_key, -1);
	if (b && get_int(b, cur_key, -2) == nc)
		return;
	bool added = !b || !by_int(floe_json_get(b, arr), key, nc);
	floe_jw_obj_begin(w);
	floe_jw_kv_str(w, "action", action);
	floe_jw_kv_i64(w, field, added ? -1 : nc);
	floe_jw_obj_end(w);
}

static int commit_body(floe_buf *out, const char *ns, const char *name, const floe_json *b,
		       const floe_json *n)
{
	floe_jw w;
	floe_jw_init(&w, out, 0);
	floe_jw_obj_begin(&w);
	floe_jw_key(&w, "identifier");
	floe_jw_obj_begin(&w);
	floe_jw_key(&w, "namespace");
	jw_ns(&w, ns);
	floe_jw_kv_str(&w, "name", name);
	floe_jw_obj_end(&w);

	/* requirements */
	floe_jw_key(&w, "requirements");
	floe_jw_arr_begin(&w);
	if (!b) {
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "type", "assert-create");
		floe_jw_obj_end(&w);
	} else {
		const floe_json *u = floe_json_get(b, "table-uuid");
		if (u && u->type == FLOE_JSON_STRING) {
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "type", "assert-table-uuid");
			floe_jw_kv_str(&w, "uuid", u->s);
			floe_jw_obj_end(&w);
		}
		/* every ref that changes must still be where the base saw it */
		const floe_json *br = floe_json_get(b, "refs"), *nr = floe_json_get(n, "refs");
		for (int pass = 0; pass < 2; pass++) {
			const floe_json *src = pass ? br : nr;
			for (const floe_json *r = src ? src->child : NULL; r; r = r->next) {
				const floe_json *in_b = br ? floe_json_get(br, r->key) : NULL;
				const floe_json *in_n = nr ? floe_json_get(nr, r->key) : NULL;
				if (pass && in_n)
					continue; /* done in the first pass */
				if (same_json(in_b, in_n))
					continue;
				floe_jw_obj_begin(&w);
				floe_jw_kv_str(&w, "type", "assert-ref-snapshot-id");
				floe_jw_kv_str(&w, "ref", r->key);
				floe_jw_key(&w, "snapshot-id");
				if (in_b)
					floe_jw_i64(&w, get_int(in_b, "snapshot-id", -1));
				else
					floe_jw_null(&w);
				floe_jw_obj_end(&w);
			}
		}
		if (get_int(b, "current-schema-id", -1) != get_int(n, "current-schema-id", -1) ||
		    get_int(b, "last-column-id", -1) != get_int(n, "last-column-id", -1)) {
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "type", "assert-current-schema-id");
			floe_jw_kv_i64(&w, "current-schema-id", get_int(b, "current-schema-id", -1));
			floe_jw_obj_end(&w);
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "type", "assert-last-assigned-field-id");
			floe_jw_kv_i64(&w, "last-assigned-field-id", get_int(b, "last-column-id", -1));
			floe_jw_obj_end(&w);
		}
		if (get_int(b, "default-spec-id", -1) != get_int(n, "default-spec-id", -1)) {
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "type", "assert-default-spec-id");
			floe_jw_kv_i64(&w, "default-spec-id", get_int(b, "default-spec-id", -1));
			floe_jw_obj_end(&w);
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "type", "assert-last-assigned-partition-id");
			floe_jw_kv_i64(&w, "last-assigned-partition-id",
				       get_int(b, "last-partition-id", -1));
			floe_jw_obj_end(&w);
		}
		if (get_int(b, "default-sort-order-id", -1) != get_int(n, "default-sort-order-id", -1)) {
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "type", "assert-default-sort-order-id");
			floe_jw_kv_i64(&w, "default-sort-order-id",
				       get_int(b, "default-sort-order-id", -1));
			floe_jw_obj_end(&w);
		}
	}
	floe_jw_arr_end(&w);

	/* updates */
	floe_jw_key(&w, "updates");
	floe_jw_arr_begin(&w);
	if (!b) {
		const floe_json *u = floe_json_get(n, "table-uuid");
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "action", "assign-uuid");
		floe_jw_kv_str(&w, "uuid", u && u->type == FLOE_JSON_STRING ? u->s : "");
		floe_jw_obj_end(&w);
	}
	int64_t fv = get_int(n, "format-version", 2);
	if (!b || get_int(b, "format-version", 2) != fv) {
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "action", "upgrade-format-version");
		floe_jw_kv_i64(&w, "format-version", fv);
		floe_jw_obj_end(&w);
	}
	add_new(&w, b, n, "schemas", "schema-id", "add-schema", "schema",
		get_int(n, "last-column-id", 0));
	set_current(&w, b, n, "schemas", "schema-id", "current-schema-id", "set-current-schema",
		    "schema-id");
	add_new(&w, b, n, "partition-specs", "spec-id", "add-spec", "spec", -1);
	set_current(&w, b, n, "partition-specs", "spec-id", "default-spec-id", "set-default-spec",
		    "spec-id");
	add_new(&w, b, n, "sort-orders", "order-id", "add-sort-order", "sort-order", -1);
	set_current(&w, b, n, "sort-orders", "order-id", "default-sort-order-id",
		    "set-default-sort-order", "sort-order-id");
	const floe_json *bl = b ? floe_json_get(b, "location") : NULL, *nl = floe_json_get(n, "location");
	if (nl && nl->type == FLOE_JSON_STRING && !same_json(bl, nl)) {
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "action", "set-location");
		floe_jw_kv_str(&w, "location", nl->s);
		floe_jw_obj_end(&w);
	}
	/* properties */
	const floe_json *bp = b ? floe_json_get(b, "properties") : NULL;
	const floe_json *np = floe_json_get(n, "properties");
	bool any = false;
	for (const floe_json *kv = np ? np->child : NULL; kv; kv = kv->next) {
		const floe_json *old = bp ? floe_json_get(bp, kv->key) : NULL;
		if (old && same_json(old, kv))
			continue;
		if (!any) {
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "action", "set-properties");
			floe_jw_key(&w, "updates");
			floe_jw_obj_begin(&w);
			any = true;
		}
		floe_jw_key(&w, kv->key);
		floe_jw_value(&w, kv);
	}
	if (any) {
		floe_jw_obj_end(&w);
		floe_jw_obj_end(&w);
	}
	any = false;
	for (const floe_json *kv = bp ? bp->child : NULL; kv; kv = kv->next) {
		if (np && floe_json_get(np, kv->key))
			continue;
		if (!any) {
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "action", "remove-properties");
			floe_jw_key(&w, "removals");
			floe_jw_arr_begin(&w);
			any = true;
		}
		floe_jw_str(&w, kv->key);
	}
	if (any) {
		floe_jw_arr_end(&w);
		floe_jw_obj_end(&w);
	}
	/* snapshots: added, then removed */
	const floe_json *bs = b ? floe_json_get(b, "snapshots") : NULL;
	const floe_json *ns_ = floe_json_get(n, "snapshots");
	for (const floe_json *s = ns_ ? ns_->child : NULL; s; s = s->next) {
		if (bs && by_int(bs, "snapshot-id", get_int(s, "snapshot-id", -1)))
			continue;
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "action", "add-snapshot");
		floe_jw_key(&w, "snapshot");
		floe_jw_value(&w, s);
		floe_jw_obj_end(&w);
	}
	any = false;
	for (const floe_json *s = bs ? bs->child : NULL; s; s = s->next) {
		int64_t id = get_int(s, "snapshot-id", -1);
		if (ns_ && by_int(ns_, "snapshot-id", id))
			continue;
		if (!any) {
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "action", "remove-snapshots");
			floe_jw_key(&w, "snapshot-ids");
			floe_jw_arr_begin(&w);
			any = true;
		}
		floe_jw_i64(&w, id);
	}
	if (any) {
		floe_jw_arr_end(&w);
		floe_jw_obj_end(&w);
	}
	/* refs: removed, then set */
	const floe_json *br = b ? floe_json_get(b, "refs") : NULL, *nr = floe_json_get(n, "refs");
	for (const floe_json *r = br ? br->child : NULL; r; r = r->next) {
		if (nr && floe_json_get(nr, r->key))
			continue;
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "action", "remove-snapshot-ref");
		floe_jw_kv_str(&w, "ref-name", r->key);
		floe_jw_obj_end(&w);
	}
	for (const floe_json *r = nr ? nr->child : NULL; r; r = r->next) {
		if (same_json(br ? floe_json_get(br, r->key) : NULL, r))
			continue;
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "action", "set-snapshot-ref");
		floe_jw_kv_str(&w, "ref-name", r->key);
		for (const floe_json *f = r->child; f; f = f->next) {
			floe_jw_key(&w, f->key);
			floe_jw_value(&w, f);
		}
		floe_jw_obj_end(&w);
	}
	/* statistics files, by snapshot id */
	const char *stat_arr[] = {"statistics", "partition-statistics"};
	const char *stat_set[] = {"set-statistics", "set-partition-statistics"};
	const char *stat_rm[] = {"remove-statistics", "remove-partition-statistics"};
	const char *stat_field[] = {"statistics", "partition-statistics"};
	for (int k = 0; k < 2; k++) {
		const floe_json *bsa = b ? floe_json_get(b, stat_arr[k]) : NULL;
		const floe_json *nsa = floe_json_get(n, stat_arr[k]);
		for (const floe_json *s = nsa ? nsa->child : NULL; s; s = s->next) {
			const floe_json *old = bsa ? by_int(bsa, "snapshot-id", get_int(s, "snapshot-id", -1)) : NULL;
			if (old && same_json(old, s))
				continue;
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "action", stat_set[k]);
			floe_jw_key(&w, stat_field[k]);
			floe_jw_value(&w, s);
			floe_jw_obj_end(&w);
		}
		for (const floe_json *s = bsa ? bsa->child : NULL; s; s = s->next) {
			int64_t id = get_int(s, "snapshot-id", -1);
			if (nsa && by_int(nsa, "snapshot-id", id))
				continue;
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "action", stat_rm[k]);
			floe_jw_kv_i64(&w, "snapshot-id", id);
			floe_jw_obj_end(&w);
		}
	}
	floe_jw_arr_end(&w);
	floe_jw_obj_end(&w);
	return floe_jw_finish(&w);
}

static int encode_json(floe_arena *a, const floe_metadata *m, floe_json **out, floe_buf *tmp,
		       floe_error *err)
{
	floe_buf_clear(tmp);
	if (floe_metadata_write(tmp, m, 0))
		return floe_error_oom(err);
	return floe_json_parse(out, a, floe_buf_cstr(tmp), tmp->len, NULL, err);
}

static int r_commit(floe_catalog *cat, const char *ns, const char *name,
		    const floe_metadata *base, const floe_metadata *next, char **location,
		    floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_arena a;
	floe_json *bj = NULL, *nj = NULL, *resp;
	floe_buf t1, t2, body, url, out, doc;
	rest_resp rr;
	int rc;
	*location = NULL;
	if ((rc = need(c, FLOE_REST_EP_UPDATE_TABLE, err)))
		return rc;
	floe_arena_init(&a, 1 << 16);
	floe_buf_init(&t1, 0);
	floe_buf_init(&t2, 0);
	floe_buf_init(&body, 0);
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&out, RESP_MAX);
	floe_buf_init(&doc, ERR_MAX);
	if ((base && (rc = encode_json(&a, base, &bj, &t1, err))) ||
	    (rc = encode_json(&a, next, &nj, &t2, err)))
		goto done;
	if (commit_body(&body, ns, name, bj, nj) || url_of(c, &url, ns, name, NULL)) {
		rc = floe_error_oom(err);
		goto done;
	}
	if (floe_catalog__fault_lose_swap(cat)) {
		rc = floe_error_set(err, FLOE_ECOMMITUNKNOWN, "injected: the commit's answer was lost");
		goto done;
	}
	floe_error ce;
	floe_error_clear(&ce);
	rr.sent = false;
	rc = call(c, "POST", floe_buf_cstr(&url), &body, &out, &doc, &rr, false, &ce);
	if (rc) {
		if (rr.sent)
			rc = floe_error_set(err, FLOE_ECOMMITUNKNOWN,
					    "REST commit of %s.%s sent, no answer: %s", ns, name,
					    ce.msg);
		else if (rc == FLOE_EIO || rc == FLOE_ETIMEDOUT)
			rc = floe_error_set_retryable(err, rc, "REST commit of %s.%s not sent: %s",
						      ns, name, ce.msg);
		else
			rc = floe_error_set(err, rc, "REST commit of %s.%s: %s", ns, name, ce.msg);
		goto done;
	}
	if (rr.status == 409) {
		char m[600];
		err_text(&doc, m, sizeof(m));
		rc = base ? floe_error_set_retryable(err, FLOE_ECONFLICT,
						     "REST commit of %s.%s: conflict: %s", ns, name, m)
			  : floe_error_set(err, FLOE_EEXISTS, "table '%s.%s' already exists%s%s",
					   ns, name, m[0] ? ": " : "", m);
		goto done;
	}
	if (rr.status >= 500) {
		char m[600];
		err_text(&doc, m, sizeof(m));
		rc = floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				    "REST commit of %s.%s: HTTP %ld (outcome unknown)%s%s", ns, name,
				    rr.status, m[0] ? ": " : "", m);
		goto done;
	}
	if (rr.status != 200) {
		rc = status_err(err, rr.status, &doc, "commit");
		goto done;
	}
	if ((rc = floe_json_parse(&resp, &a, floe_buf_cstr(&out), out.len, NULL, err)))
		goto done;
	const floe_json *loc = floe_json_get(resp, "metadata-location");
	if (!loc || loc->type != FLOE_JSON_STRING) {
		rc = floe_error_corrupt(err, "REST commit answer without metadata-location");
		goto done;
	}
	if (!(*location = floe_strdup(loc->s))) {
		rc = floe_error_oom(err);
		goto done;
	}
	if (!base && c->delegation) {
		/* a create's answer vends nothing: ask for the new table's
		 * credentials (the create stands whatever this says) */
		floe_error le;
		floe_error_clear(&le);
		if (load_credentials(c, ns, name, &le))
			FLOE_WARN("REST: created %s.%s, but loading its credentials failed: %s", ns,
				  name, le.msg);
	}
done:
	floe_arena_reset(&a);
	floe_buf_reset(&t1);
	floe_buf_reset(&t2);
	floe_buf_reset(&body);
	floe_buf_reset(&url);
	floe_buf_reset(&out);
	floe_buf_reset(&doc);
	return rc;
}

/*
 * POST /v1/{prefix}/transactions/commit: every table's requirements and
 * updates in one request; the server applies all of them or none (REST
 * spec: "commitTransaction"). The answer (204) has no body, so the new
 * locations are left NULL and the commit path reloads the tables.
 */
static int r_commit_tables(floe_catalog *cat, floe_catalog_change *ch, size_t n, floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_arena a;
	floe_buf t1, t2, one, body, url, out, doc;
	rest_resp rr;
	int rc = need(c, FLOE_REST_EP_COMMIT_TXN, err);
	if (rc)
		return rc;
	floe_arena_init(&a, 1 << 16);
	floe_buf_init(&t1, 0);
	floe_buf_init(&t2, 0);
	floe_buf_init(&one, 0);
	floe_buf_init(&body, 0);
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&out, RESP_MAX);
	floe_buf_init(&doc, ERR_MAX);
	if (floe_buf_puts(&body, "{\"table-changes\":[")) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		floe_json *bj = NULL, *nj = NULL;
		if ((rc = encode_json(&a, ch[i].base, &bj, &t1, err)) ||
		    (rc = encode_json(&a, ch[i].next, &nj, &t2, err)))
			goto done;
		floe_buf_clear(&one);
		if (commit_body(&one, ch[i].ns, ch[i].name, bj, nj) ||
		    (i && floe_buf_puts(&body, ",")) || floe_buf_append(&body, one.data, one.len)) {
			rc = floe_error_oom(err);
			goto done;
		}
	}
	if (floe_buf_puts(&body, "]}") || url_of(c, &url, NULL, NULL, "transactions/commit")) {
		rc = floe_error_oom(err);
		goto done;
	}
	if (floe_catalog__fault_lose_swap(cat)) {
		rc = floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				    "injected: the transaction's answer was lost");
		goto done;
	}
	floe_error ce;
	floe_error_clear(&ce);
	rr.sent = false;
	rc = call(c, "POST", floe_buf_cstr(&url), &body, &out, &doc, &rr, false, &ce);
	if (rc) {
		if (rr.sent)
			rc = floe_error_set(err, FLOE_ECOMMITUNKNOWN,
					    "REST transaction of %zu tables sent, no answer: %s", n,
					    ce.msg);
		else if (rc == FLOE_EIO || rc == FLOE_ETIMEDOUT)
			rc = floe_error_set_retryable(err, rc,
						      "REST transaction of %zu tables not sent: %s", n,
						      ce.msg);
		else
			rc = floe_error_set(err, rc, "REST transaction of %zu tables: %s", n, ce.msg);
		goto done;
	}
	if (rr.status == 409) {
		char m[600];
		err_text(&doc, m, sizeof(m));
		rc = floe_error_set_retryable(err, FLOE_ECONFLICT,
					      "REST transaction of %zu tables: conflict: %s", n, m);
		goto done;
	}
	if (rr.status >= 500) {
		char m[600];
		err_text(&doc, m, sizeof(m));
		rc = floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				    "REST transaction of %zu tables: HTTP %ld (outcome unknown)%s%s", n,
				    rr.status, m[0] ? ": " : "", m);
		goto done;
	}
	if (rr.status != 200 && rr.status != 204)
		rc = status_err(err, rr.status, &doc, "commit a transaction");
done:
	floe_arena_reset(&a);
	floe_buf_reset(&t1);
	floe_buf_reset(&t2);
	floe_buf_reset(&one);
	floe_buf_reset(&body);
	floe_buf_reset(&url);
	floe_buf_reset(&out);
	floe_buf_reset(&doc);
	return rc;
}

static int r_drop_table(floe_catalog *cat, const char *ns, const char *name, floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_buf url, doc;
	rest_resp rr;
	int rc = need(c, FLOE_REST_EP_DROP_TABLE, err);
	if (rc)
		return rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&doc, ERR_MAX);
	rc = url_of(c, &url, ns, name, "?purgeRequested=false")
		     ? floe_error_oom(err)
		     : call(c, "DELETE", floe_buf_cstr(&url), NULL, NULL, &doc, &rr, true, err);
	if (!rc && rr.status == 404)
		rc = floe_error_set(err, FLOE_ENOTFOUND, "table '%s.%s' does not exist", ns, name);
	else if (!rc && rr.status != 204 && rr.status != 200)
		rc = status_err(err, rr.status, &doc, "drop table");
	floe_buf_reset(&url);
	floe_buf_reset(&doc);
	return rc;
}

static int r_rename(floe_catalog *cat, const char *from_ns, const char *from_name,
		    const char *to_ns, const char *to_name, floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_buf url, body, doc;
	floe_jw w;
	rest_resp rr;
	int rc;
	if ((rc = need(c, FLOE_REST_EP_RENAME_TABLE, err)))
		return rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&body, 1 << 16);
	floe_buf_init(&doc, ERR_MAX);
	floe_jw_init(&w, &body, 0);
	floe_jw_obj_begin(&w);
	floe_jw_key(&w, "source");
	floe_jw_obj_begin(&w);
	floe_jw_key(&w, "namespace");
	jw_ns(&w, from_ns);
	floe_jw_kv_str(&w, "name", from_name);
	floe_jw_obj_end(&w);
	floe_jw_key(&w, "destination");
	floe_jw_obj_begin(&w);
	floe_jw_key(&w, "namespace");
	jw_ns(&w, to_ns);
	floe_jw_kv_str(&w, "name", to_name);
	floe_jw_obj_end(&w);
	floe_jw_obj_end(&w);
	if (floe_jw_finish(&w) || url_of(c, &url, NULL, NULL, "tables/rename")) {
		rc = floe_error_oom(err);
		goto done;
	}
	rc = call(c, "POST", floe_buf_cstr(&url), &body, NULL, &doc, &rr, false, err);
	if (!rc && rr.status == 404)
		rc = floe_error_set(err, FLOE_ENOTFOUND, "table '%s.%s' does not exist", from_ns,
				    from_name);
	else if (!rc && rr.status == 409)
		rc = floe_error_set(err, FLOE_EEXISTS, "table '%s.%s' already exists", to_ns, to_name);
	else if (!rc && rr.status != 204 && rr.status != 200)
		rc = status_err(err, rr.status, &doc, "rename table");
done:
	floe_buf_reset(&url);
	floe_buf_reset(&body);
	floe_buf_reset(&doc);
	return rc;
}

static int r_default_location(floe_catalog *cat, const char *ns, const char *name, char **out,
			      floe_error *err)
{
	rest_catalog *c = (rest_catalog *)cat;
	floe_strmap m;
	floe_strmap_init(&m);
	floe_error e;
	floe_error_clear(&e);
	const char *base = NULL;
	char *path = NULL;
	/* the namespace's location, else <warehouse>/<ns parts>/<name> */
	if (offers(c, FLOE_REST_EP_LOAD_NS) && !r_load_ns_props(cat, ns, &m, &e))
		base = floe_strmap_get(&m, "location");
	floe_buf b;
	floe_buf_init(&b, 1 << 16);
	int rc;
	if (base) {
		size_t n = strlen(base);
		while (n && base[n - 1] == '/')
			n--;
		rc = floe_buf_printf(&b, "%.*s/%s", (int)n, base, name);
	} else {
		const char *wh = prop(c, "warehouse");
		if (!wh || !strstr(wh, "://")) {
			floe_strmap_reset(&m);
			floe_buf_reset(&b);
			return floe_error_set(err, FLOE_EINVAL,
					      "REST catalog: no location for %s.%s (the server gives "
					      "no warehouse and the namespace no location)",
					      ns, name);
		}
		size_t n = strlen(wh);
		while (n && wh[n - 1] == '/')
			n--;
		rc = floe_buf_printf(&b, "%.*s/", (int)n, wh);
		for (const char *p = ns; !rc && *p; p++)
			rc = floe_buf_putc(&b, *p == '.' ? '/' : *p);
		if (!rc)
			rc = floe_buf_printf(&b, "/%s", name);
	}
	if (!rc)
		path = floe_strdup(floe_buf_cstr(&b));
	floe_strmap_reset(&m);
	floe_buf_reset(&b);
	if (!path)
		return floe_error_oom(err);
	*out = path;
	return FLOE_OK;
}

static void r_free(floe_catalog *cat)
{
	rest_catalog *c = (rest_catalog *)cat;
	if (!c)
		return;
	floe_io_free(cat->io);
	floe_aws_provider_free(c->aws);
	floe_http_free(c->http);
	if (c->token) {
		memset(c->token, 0, strlen(c->token));
		floe_free(c->token);
	}
	for (size_t i = 0; i < c->props.len; i++)
		if (c->props.items[i].value)
			memset(c->props.items[i].value, 0, strlen(c->props.items[i].value));
	floe_strmap_reset(&c->props);
	for (size_t i = 0; i < cat->open_props.len; i++)
		if (cat->open_props.items[i].value)
			memset(cat->open_props.items[i].value, 0, strlen(cat->open_props.items[i].value));
	floe_strmap_reset(&cat->open_props);
	floe_mutex_destroy(&c->lock);
	floe_mutex_destroy(&c->vend_lock);
	floe_strmap_reset(&c->vend_tables);
	floe_free(c->name);
	floe_free(c->uri);
	floe_free(c->prefix);
	floe_free(cat->open_uri);
	floe_free(cat->open_warehouse);
	floe_free(cat->lock_uri);
	floe_free(c);
}

static const floe_catalog_ops rest_ops = {
	r_create_namespace, r_list_namespaces, r_drop_namespace, r_namespace_exists,
	r_load_ns_props,    r_update_ns_props, r_list_tables,	 r_load_table,
	r_commit,	    r_drop_table,      r_rename,	 r_default_location,
	r_free,		    r_commit_tables,
};

/* GET /v1/config: defaults under, overrides over the client's properties */
static int load_config(rest_catalog *c, const char *warehouse, floe_error *err)
{
	floe_buf url, body;
	floe_arena a;
	floe_json *j;
	floe_strmap merged;
	int rc;
	floe_buf_init(&url, 1 << 16);
	floe_buf_init(&body, 16u << 20);
	floe_arena_init(&a, 4096);
	floe_strmap_init(&merged);
	rc = floe_buf_printf(&url, "%s/v1/config", c->uri);
	if (!rc && warehouse)
		rc = floe_buf_puts(&url, "?warehouse=") ||
		     floe_aws_uri_encode(&url, warehouse, strlen(warehouse), false);
	if (rc) {
		rc = floe_error_oom(err);
		goto done;
	}
	if ((rc = get_json(c, floe_buf_cstr(&url), &a, &body, &j, "config", err)) ||
	    (rc = floe_rest__parse_endpoints(j, &c->endpoints, err)))
		goto done;
	const floe_json *d = floe_json_get(j, "defaults"), *o = floe_json_get(j, "overrides");
	for (const floe_json *kv = d ? d->child : NULL; kv && !rc; kv = kv->next)
		if (kv->type == FLOE_JSON_STRING && floe_strmap_set(&merged, kv->key, kv->s))
			rc = floe_error_oom(err);
	for (size_t i = 0; i < c->props.len && !rc; i++)
		if (floe_strmap_set(&merged, c->props.items[i].key, c->props.items[i].value))
			rc = floe_error_oom(err);
	for (const floe_json *kv = o ? o->child : NULL; kv && !rc; kv = kv->next)
		if (kv->type == FLOE_JSON_STRING && floe_strmap_set(&merged, kv->key, kv->s))
			rc = floe_error_oom(err);
	if (!rc) {
		floe_strmap_reset(&c->props);
		c->props = merged;
		floe_strmap_init(&merged);
	}
done:
	floe_strmap_reset(&merged);
	floe_buf_reset(&url);
	floe_buf_reset(&body);
	floe_arena_reset(&a);
	return rc;
}

int floe_rest_catalog_open(floe_catalog **out, const floe_rest_catalog_opts *opts,
			   floe_error *err)
{
	int rc;
	*out = NULL;
	if (!opts->uri || (strncmp(opts->uri, "http://", 7) && strncmp(opts->uri, "https://", 8)))
		return floe_error_set(err, FLOE_EINVAL,
				      "the REST catalog needs an http(s):// uri (got '%s')",
				      opts->uri ? opts->uri : "");
	rest_catalog *c = floe_calloc(1, sizeof(*c));
	if (!c)
		return floe_error_oom(err);
	if (floe_mutex_init(&c->lock)) {
		floe_free(c);
		return floe_error_oom(err);
	}
	if (floe_mutex_init(&c->vend_lock)) {
		floe_mutex_destroy(&c->lock);
		floe_free(c);
		return floe_error_oom(err);
	}
	floe_strmap_init(&c->vend_tables);
	c->endpoints = FLOE_REST_EP_DEFAULT;
	floe_strmap_init(&c->props);
	floe_strmap_init(&c->base.open_props);
	c->base.ops = &rest_ops;
	c->base.kind = "rest";
	size_t n = strlen(opts->uri);
	while (n && opts->uri[n - 1] == '/')
		n--;
	c->uri = floe_strndup(opts->uri, n);
	c->name = floe_strdup(opts->name && *opts->name ? opts->name : "default");
	c->base.name = c->name;
	c->base.open_uri = floe_strdup(opts->uri);
	c->base.open_warehouse = opts->warehouse ? floe_strdup(opts->warehouse) : NULL;
	c->http = floe_http_new();
	if (!c->uri || !c->name || !c->base.open_uri || (opts->warehouse && !c->base.open_warehouse) ||
	    !c->http) {
		r_free(&c->base);
		return floe_error_oom(err);
	}
	if (opts->props && (floe_strmap_copy(&c->props, opts->props) ||
			    floe_strmap_copy(&c->base.open_props, opts->props))) {
		r_free(&c->base);
		return floe_error_oom(err);
	}
	c->retry.max_attempts = (int)floe_strmap_get_i64(&c->props, "rest.retry.num-retries", 4) + 1;
	c->retry.min_wait_ms = 100;
	c->retry.max_wait_ms = 5000;
	c->retry.deadline_ms = 120000;
	c->sigv4 = floe_strmap_get_bool(&c->props, "rest.sigv4-enabled", false);
	c->oauth = !c->sigv4 && prop(c, "credential") != NULL;
	if (!c->sigv4 && prop(c, "token") && !(c->token = floe_strdup(prop(c, "token")))) {
		r_free(&c->base);
		return floe_error_oom(err);
	}
	if (c->sigv4) {
		floe_aws_opts ao = {0};
		ao.access_key = prop(c, "rest.access-key-id");
		ao.secret_key = prop(c, "rest.secret-access-key");
		ao.token = prop(c, "rest.session-token");
		ao.region = prop(c, "rest.signing-region");
		if ((rc = floe_aws_provider_new(&c->aws, &ao, c->http, err))) {
			r_free(&c->base);
			return rc;
		}
	}
	if ((rc = load_config(c, opts->warehouse, err))) {
		r_free(&c->base);
		return floe_error_prefix(err, rc, "REST catalog '%s': ", opts->uri);
	}
	/* header.<name> = value: sent as "<name>: value". Vended credentials are
	 * asked for by default, except from AWS's SigV4 endpoints (Glue, S3
	 * Tables), where the signing identity reaches the storage itself and
	 * vending needs Lake Formation: there header.X-Iceberg-Access-Delegation
	 * asks, as with Java's and PyIceberg's clients */
	c->delegation = !c->sigv4;
	for (size_t i = 0; i < c->props.len; i++) {
		const char *k = c->props.items[i].key;
		if (strncmp(k, "header.", 7) != 0)
			continue;
		if (floe_str_ieq(k + 7, "X-Iceberg-Access-Delegation"))
			c->delegation = false; /* the user's own value, or none ("") */
		char hk[300];
		snprintf(hk, sizeof(hk), "@%s", k);
		if (floe_strmap_setf(&c->props, hk, "%s: %s", k + 7, c->props.items[i].value)) {
			r_free(&c->base);
			return floe_error_oom(err);
		}
	}
	const char *pfx = prop(c, "prefix");
	if (pfx) {
		floe_buf b;
		floe_buf_init(&b, 4096);
		if (floe_aws_uri_encode(&b, pfx, strlen(pfx), true) || floe_buf_putc(&b, '/') ||
		    !(c->prefix = floe_strdup(floe_buf_cstr(&b)))) {
			floe_buf_reset(&b);
			r_free(&c->base);
			return floe_error_oom(err);
		}
		floe_buf_reset(&b);
	} else if (!(c->prefix = floe_strdup(""))) {
		r_free(&c->base);
		return floe_error_oom(err);
	}
	if (!prop(c, "warehouse") && opts->warehouse &&
	    floe_strmap_set(&c->props, "warehouse", opts->warehouse)) {
		r_free(&c->base);
		return floe_error_oom(err);
	}
	/* the FileIO: S3 settings from the merged properties */
	if (opts->io)
		c->base.io = opts->io;
	else if ((rc = floe_io_default_new(&c->base.io, &c->props, err))) {
		r_free(&c->base);
		return floe_error_prefix(err, rc, "REST catalog '%s': ", opts->uri);
	}
	/* new vended credentials before the old ones expire, from any I/O thread */
	floe_io_set_renewer(c->base.io, renew_vended, c);
	if (!offers(c, FLOE_REST_EP_COMMIT_TXN))
		c->base.no_transactions = "the REST server does not offer multi-table transactions "
					  "(its config's endpoints do not list 'POST "
					  "/v1/{prefix}/transactions/commit')";
	/* S3 Tables maintains its tables itself */
	const char *sn = prop(c, "rest.signing-name");
	c->base.managed_maintenance = sn && !strcmp(sn, "s3tables");
	*out = &c->base;
	return FLOE_OK;
}

/* ---- tests and fuzzing ------------------------------------------------------------- */

static int names_cb(const char *ns, const char *name, void *payload)
{
	(void)ns;
	(void)name;
	(*(size_t *)payload)++;
	return 0;
}

int floe_rest__parse(const char *kind, const char *p, size_t n, floe_error *err)
{
	floe_arena a;
	floe_json *j;
	int rc;
	size_t count = 0;
	floe_arena_init(&a, 4096);
	if (!strcmp(kind, "error")) {
		floe_buf b;
		char m[600];
		floe_buf_init(&b, 0);
		rc = floe_buf_append(&b, p, n) ? floe_error_oom(err) : FLOE_OK;
		if (!rc) {
			err_text(&b, m, sizeof(m));
			rc = floe_error_set(err, FLOE_EIO, "%s", m);
		}
		floe_buf_reset(&b);
		floe_arena_reset(&a);
		return rc;
	}
	if ((rc = floe_json_parse(&j, &a, p, n, NULL, err)))
		goto done;
	if (!strcmp(kind, "load") || !strcmp(kind, "credentials")) {
		floe_metadata *m = NULL;
		char *loc = NULL;
		bool lc = !strcmp(kind, "credentials");
		const floe_json *sc = floe_json_get(j, "storage-credentials");
		rc = lc ? (sc && sc->type == FLOE_JSON_ARRAY
				   ? FLOE_OK
				   : floe_error_corrupt(err, "a loadCredentials answer without "
							     "storage-credentials"))
			: metadata_from(&m, j, &loc, err);
		rest_catalog c0; /* and its vended credentials, into an S3 FileIO */
		memset(&c0, 0, sizeof(c0));
		floe_strmap_init(&c0.vend_tables);
		if (!rc && floe_mutex_init(&c0.vend_lock))
			rc = floe_error_oom(err);
		else if (!rc) {
			if (!(rc = floe_io_default_new(&c0.base.io, NULL, err))) {
				rc = lc ? vend_apply(&c0, "fuzz", "t", sc, NULL, NULL,
						     "REST loadCredentials", err)
					: use_vended(&c0, j, m->location, "fuzz", "t", err);
				/* a second answer replaces the first's */
				if (!rc)
					rc = vend_apply(&c0, "fuzz", "t", sc, NULL, NULL,
							"REST loadCredentials", err);
				floe_io_free(c0.base.io);
			}
			floe_mutex_destroy(&c0.vend_lock);
		}
		floe_strmap_reset(&c0.vend_tables);
		floe_metadata_free(m);
		floe_free(loc);
	} else if (!strcmp(kind, "namespaces")) {
		const floe_json *list = floe_json_get(j, "namespaces");
		for (const floe_json *x = list ? list->child : NULL; x && !rc; x = x->next)
			rc = ns_of(&a, x) ? names_cb("", NULL, &count) : floe_error_oom(err);
	} else if (!strcmp(kind, "tables")) {
		const floe_json *ids = floe_json_get(j, "identifiers");
		for (const floe_json *id = ids ? ids->child : NULL; id && !rc; id = id->next) {
			const floe_json *nm = floe_json_get(id, "name");
			const floe_json *nsj = floe_json_get(id, "namespace");
			char *s = nsj && nsj->type == FLOE_JSON_ARRAY ? ns_of(&a, nsj) : NULL;
			rc = !nm || nm->type != FLOE_JSON_STRING || !s
				     ? floe_error_corrupt(err, "REST catalog: a table identifier "
							       "without namespace or name")
				     : names_cb(s, nm->s, &count);
		}
	} else if (!strcmp(kind, "config")) {
		uint32_t eps;
		rc = floe_rest__parse_endpoints(j, &eps, err);
		const floe_json *d = floe_json_get(j, "defaults"), *o = floe_json_get(j, "overrides");
		for (const floe_json *kv = d ? d->child : NULL; kv; kv = kv->next)
			count += kv->type == FLOE_JSON_STRING;
		for (const floe_json *kv = o ? o->child : NULL; kv; kv = kv->next)
			count += kv->type == FLOE_JSON_STRING;
	} else if (!strcmp(kind, "token")) {
		const floe_json *t = floe_json_get(j, "access_token");
		if (!t || t->type != FLOE_JSON_STRING)
			rc = floe_error_corrupt(err, "OAuth2 token answer without access_token");
	} else {
		rc = floe_error_set(err, FLOE_EINVAL, "unknown answer kind '%s'", kind);
	}
done:
	floe_arena_reset(&a);
	return rc;
}

int floe_rest__commit_body(floe_buf *out, const char *ns, const char *name,
			   const floe_metadata *base, const floe_metadata *next, floe_error *err)
{
	floe_arena a;
	floe_json *bj = NULL, *nj = NULL;
	floe_buf t1, t2;
	int rc;
	floe_arena_init(&a, 1 << 16);
	floe_buf_init(&t1, 0);
	floe_buf_init(&t2, 0);
	if ((base && (rc = encode_json(&a, base, &bj, &t1, err))) ||
	    (rc = encode_json(&a, next, &nj, &t2, err)))
		goto done;
	if (commit_body(out, ns, name, bj, nj))
		rc = floe_error_oom(err);
done:
	floe_arena_reset(&a);
	floe_buf_reset(&t1);
	floe_buf_reset(&t2);
	return rc;
}
