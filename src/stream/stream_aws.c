/*
 * stream_aws.c — AWS credentials (the standard chain) and SigV4-signed
 * JSON-protocol calls over libcurl. See stream_aws.h.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json/json.h"
#include "stream/stream_aws.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/timeutil.h"

#define AWS_FILE_MAX ((size_t)1 << 20)
#define AWS_RESP_MAX ((size_t)64 << 20) /* a GetRecords reply is at most 10 MiB of data, base64 */
#define AWS_REFRESH_MS (5 * 60 * 1000)

struct stream_aws {
	stream_aws_opts o;
	char *region, *endpoint, *service, *provider;
	char *access_key, *secret_key, *profile, *profile_path;
	char sigv4[160];
	stream_aws_creds creds;
	CURL *curl;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

void stream_aws_creds_reset(stream_aws_creds *c)
{
	floe_free(c->akid);
	if (c->secret)
		memset(c->secret, 0, strlen(c->secret));
	floe_free(c->secret);
	floe_free(c->token);
	memset(c, 0, sizeof(*c));
}

static int creds_set(stream_aws_creds *c, const char *akid, const char *secret, const char *token,
		     const char *from, floe_error *err)
{
	stream_aws_creds n = {0};
	n.akid = floe_strdup(akid);
	n.secret = floe_strdup(secret);
	n.token = token && *token ? floe_strdup(token) : NULL;
	n.from = from;
	if (!n.akid || !n.secret || (token && *token && !n.token)) {
		stream_aws_creds_reset(&n);
		return floe_error_oom(err);
	}
	stream_aws_creds_reset(c);
	*c = n;
	return FLOE_OK;
}

/* ---- small files and INI --------------------------------------------------------------- */

static int read_small(const char *path, floe_buf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return FLOE_ENOTFOUND;
	floe_buf_clear(out);
	for (;;) {
		if (out->len >= AWS_FILE_MAX) {
			close(fd);
			return FLOE_ENOMEM;
		}
		uint8_t *p = floe_buf_extend(out, 4096);
		if (!p) {
			close(fd);
			return FLOE_ENOMEM;
		}
		ssize_t r = read(fd, p, 4096);
		if (r < 0 && errno == EINTR) {
			out->len -= 4096;
			continue;
		}
		if (r <= 0) {
			out->len -= 4096;
			close(fd);
			return r < 0 ? FLOE_EIO : FLOE_OK;
		}
		out->len -= 4096 - (size_t)r;
	}
}

static void trim(const char **a, const char **b)
{
	while (*a < *b && (**a == ' ' || **a == '\t' || **a == '\r'))
		(*a)++;
	while (*b > *a && ((*b)[-1] == ' ' || (*b)[-1] == '\t' || (*b)[-1] == '\r'))
		(*b)--;
}

bool stream_aws_ini_get(const char *text, size_t n, const char *section, const char *key,
			char *out, size_t cap)
{
	const char *p = text, *end = text + n;
	bool in = false;
	size_t sl = strlen(section), kl = strlen(key);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *a = p, *b = nl ? nl : end;
		p = nl ? nl + 1 : end;
		trim(&a, &b);
		if (a == b || *a == '#' || *a == ';')
			continue;
		if (*a == '[') {
			const char *c = memchr(a, ']', (size_t)(b - a));
			if (!c)
				continue;
			const char *sa = a + 1, *sb = c;
			trim(&sa, &sb);
			in = (size_t)(sb - sa) == sl && !memcmp(sa, section, sl);
			continue;
		}
		if (!in)
			continue;
		const char *eq = memchr(a, '=', (size_t)(b - a));
		if (!eq)
			continue;
		const char *ka = a, *kb = eq, *va = eq + 1, *vb = b;
		trim(&ka, &kb);
		trim(&va, &vb);
		if ((size_t)(kb - ka) != kl || memcmp(ka, key, kl))
			continue;
		if ((size_t)(vb - va) >= cap)
			return false;
		memcpy(out, va, (size_t)(vb - va));
		out[vb - va] = 0;
		return true;
	}
	return false;
}

/* ---- credential documents --------------------------------------------------------------- */

static int64_t parse_expiration(const char *s, size_t n)
{
	int64_t us;
	bool zone;
	if (!s || !floe_parse_timestamp_us(s, n, &us, &zone))
		return 0;
	return us / 1000;
}

int stream_aws_creds_from_json(stream_aws_creds *c, const char *p, size_t n, floe_error *err)
{
	floe_arena a;
	floe_json *j;
	floe_arena_init(&a, 4096);
	int rc = floe_json_parse(&j, &a, p, n, NULL, err);
	if (!rc) {
		const floe_json *k = floe_json_get(j, "AccessKeyId"), *s = floe_json_get(j, "SecretAccessKey"),
				*t = floe_json_get(j, "Token"), *e = floe_json_get(j, "Expiration");
		if (!k || k->type != FLOE_JSON_STRING || !s || s->type != FLOE_JSON_STRING)
			rc = floe_error_corrupt(err, "credentials document without AccessKeyId and "
						     "SecretAccessKey");
		else
			rc = creds_set(c, k->s, s->s, t && t->type == FLOE_JSON_STRING ? t->s : NULL,
				       c->from, err);
		if (!rc && e && e->type == FLOE_JSON_STRING)
			c->expires_ms = parse_expiration(e->s, e->len);
	}
	floe_arena_reset(&a);
	return rc;
}

/* <tag>text</tag> inside p[0..n) into out (cap); false when absent. */
static bool xml_tag(const char *p, size_t n, const char *tag, char *out, size_t cap)
{
	char open_[64], close_[64];
	snprintf(open_, sizeof(open_), "<%s>", tag);
	snprintf(close_, sizeof(close_), "</%s>", tag);
	size_t ol = strlen(open_), cl = strlen(close_);
	for (size_t i = 0; i + ol <= n; i++) {
		if (memcmp(p + i, open_, ol))
			continue;
		size_t a = i + ol;
		for (size_t k = a; k + cl <= n; k++)
			if (!memcmp(p + k, close_, cl)) {
				if (k - a >= cap)
					return false;
				memcpy(out, p + a, k - a);
				out[k - a] = 0;
				return true;
			}
		return false;
	}
	return false;
}

int stream_aws_creds_from_sts(stream_aws_creds *c, const char *p, size_t n, floe_error *err)
{
	char k[256], s[256], e[64];
	char *t = floe_malloc(8192);
	if (!t)
		return floe_error_oom(err);
	int rc;
	if (!xml_tag(p, n, "AccessKeyId", k, sizeof(k)) ||
	    !xml_tag(p, n, "SecretAccessKey", s, sizeof(s)))
		rc = floe_error_corrupt(err, "STS answer without AccessKeyId and SecretAccessKey");
	else
		rc = creds_set(c, k, s, xml_tag(p, n, "SessionToken", t, 8192) ? t : NULL, c->from,
			       err);
	if (!rc && xml_tag(p, n, "Expiration", e, sizeof(e)))
		c->expires_ms = parse_expiration(e, strlen(e));
	memset(s, 0, sizeof(s));
	floe_free(t);
	return rc;
}

/* ---- HTTP --------------------------------------------------------------------------------- */

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	floe_buf *b = ud;
	size_t n = size * nmemb;
	if (b->len + n > AWS_RESP_MAX || floe_buf_append(b, p, n))
		return 0;
	return n;
}

/*
 * One request on a's handle. sigv4: sign with a's credentials. hdrs: extra
 * header lines. A transport failure is FLOE_EIO, retryable.
 */
static int http(stream_aws *a, const char *method, const char *url, const char *const *hdrs,
		size_t n_hdrs, const char *body, size_t n, bool sigv4, int64_t timeout_ms,
		floe_buf *resp, long *status, floe_error *err)
{
	CURL *c = a->curl;
	struct curl_slist *h = NULL;
	char tok[8300];
	int rc = FLOE_OK;
	curl_easy_reset(c);
	floe_buf_clear(resp);
	for (size_t i = 0; i < n_hdrs; i++)
		if (!(h = curl_slist_append(h, hdrs[i])))
			goto oom;
	if (sigv4 && a->creds.token) {
		snprintf(tok, sizeof(tok), "X-Amz-Security-Token: %s", a->creds.token);
		struct curl_slist *h2 = curl_slist_append(h, tok);
		if (!h2)
			goto oom;
		h = h2;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_ms < 5000 ? timeout_ms : 5000));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (!strcmp(method, "POST")) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? n : 0));
	} else if (strcmp(method, "GET")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	if (sigv4) {
		curl_easy_setopt(c, CURLOPT_AWS_SIGV4, a->sigv4);
		curl_easy_setopt(c, CURLOPT_USERNAME, a->creds.akid);
		curl_easy_setopt(c, CURLOPT_PASSWORD, a->creds.secret);
	}
	CURLcode cc = curl_easy_perform(c);
	if (cc != CURLE_OK) {
		rc = cc == CURLE_WRITE_ERROR && resp->len + 1 > AWS_RESP_MAX
			     ? floe_error_set(err, FLOE_ECORRUPT, "%s: the answer is over %zu bytes",
					      url, AWS_RESP_MAX)
			     : floe_error_set_retryable(err, cc == CURLE_OPERATION_TIMEDOUT
								     ? FLOE_ETIMEDOUT
								     : FLOE_EIO,
							"%s: %s", url, curl_easy_strerror(cc));
	} else {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	memset(tok, 0, sizeof(tok));
	return rc;
oom:
	curl_slist_free_all(h);
	return floe_error_oom(err);
}

/* ---- the providers ------------------------------------------------------------------------- */

static const char *env(const char *k)
{
	const char *v = getenv(k);
	return v && *v ? v : NULL;
}

static int from_env(stream_aws *a, bool *got, floe_error *err)
{
	const char *k = env("AWS_ACCESS_KEY_ID"), *s = env("AWS_SECRET_ACCESS_KEY");
	if (!k)
		k = env("AWS_ACCESS_KEY");
	if (!s)
		s = env("AWS_SECRET_KEY");
	*got = k && s;
	return *got ? creds_set(&a->creds, k, s, env("AWS_SESSION_TOKEN"), "environment", err)
		    : FLOE_OK;
}

static const char *profile_name(const stream_aws *a)
{
	if (a->profile)
		return a->profile;
	const char *p = env("AWS_PROFILE");
	return p ? p : "default";
}

static int home_file(char *out, size_t cap, const char *envname, const char *rel)
{
	const char *p = env(envname), *h = env("HOME");
	if (p)
		return snprintf(out, cap, "%s", p) < (int)cap ? FLOE_OK : FLOE_EINVAL;
	if (!h)
		return FLOE_ENOTFOUND;
	return snprintf(out, cap, "%s/.aws/%s", h, rel) < (int)cap ? FLOE_OK : FLOE_EINVAL;
}

/* key of the profile: the credentials file's [name], then the config file's
 * [profile name] ([default]). */
static bool profile_get(stream_aws *a, const char *key, char *out, size_t cap)
{
	char path[4096], sect[300];
	floe_buf b;
	bool found = false;
	const char *prof = profile_name(a);
	floe_buf_init(&b, AWS_FILE_MAX);
	if (a->profile_path ? snprintf(path, sizeof(path), "%s", a->profile_path) < (int)sizeof(path)
			    : !home_file(path, sizeof(path), "AWS_SHARED_CREDENTIALS_FILE", "credentials"))
		if (!read_small(path, &b))
			found = stream_aws_ini_get((const char *)b.data, b.len, prof, key, out, cap);
	if (!found && !home_file(path, sizeof(path), "AWS_CONFIG_FILE", "config") &&
	    !read_small(path, &b)) {
		if (strcmp(prof, "default"))
			snprintf(sect, sizeof(sect), "profile %s", prof);
		else
			snprintf(sect, sizeof(sect), "default");
		found = stream_aws_ini_get((const char *)b.data, b.len, sect, key, out, cap);
	}
	floe_buf_reset(&b);
	return found;
}

static int from_profile(stream_aws *a, bool *got, floe_error *err)
{
	char k[256], s[256], t[4096];
	*got = profile_get(a, "aws_access_key_id", k, sizeof(k)) &&
	       profile_get(a, "aws_secret_access_key", s, sizeof(s));
	int rc = *got ? creds_set(&a->creds, k, s,
				  profile_get(a, "aws_session_token", t, sizeof(t)) ? t : NULL,
				  "shared credentials file", err)
		      : FLOE_OK;
	memset(s, 0, sizeof(s));
	return rc;
}

static int from_web_identity(stream_aws *a, bool *got, floe_error *err)
{
	char tokfile[4096], role[512], pt[4096], pr[512];
	const char *tf = env("AWS_WEB_IDENTITY_TOKEN_FILE"), *ra = env("AWS_ROLE_ARN");
	if (!tf && profile_get(a, "web_identity_token_file", pt, sizeof(pt)))
		tf = pt;
	if (!ra && profile_get(a, "role_arn", pr, sizeof(pr)))
		ra = pr;
	*got = false;
	if (!tf || !ra)
		return FLOE_OK;
	snprintf(tokfile, sizeof(tokfile), "%s", tf);
	snprintf(role, sizeof(role), "%s", ra);
	floe_buf tok, body, resp;
	floe_buf_init(&tok, AWS_FILE_MAX);
	floe_buf_init(&body, 0);
	floe_buf_init(&resp, AWS_RESP_MAX);
	int rc = read_small(tokfile, &tok);
	if (rc) {
		rc = floe_error_set(err, FLOE_EINVAL, "AWS_WEB_IDENTITY_TOKEN_FILE '%s' cannot be read",
				    tokfile);
		goto out;
	}
	while (tok.len && (tok.data[tok.len - 1] == '\n' || tok.data[tok.len - 1] == '\r'))
		tok.len--;
	const char *sess = env("AWS_ROLE_SESSION_NAME");
	rc = floe_buf_puts(&body, "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=");
	rc = rc ? rc : floe_urlencode_form(&body, role, strlen(role));
	rc = rc ? rc : floe_buf_puts(&body, "&RoleSessionName=");
	rc = rc ? rc : floe_urlencode_form(&body, sess ? sess : "floe", strlen(sess ? sess : "floe"));
	rc = rc ? rc : floe_buf_puts(&body, "&WebIdentityToken=");
	rc = rc ? rc : floe_urlencode_form(&body, (const char *)tok.data, tok.len);
	if (rc) {
		rc = floe_error_oom(err);
		goto out;
	}
	char url[512];
	const char *ep = env("AWS_ENDPOINT_URL_STS");
	if (ep)
		snprintf(url, sizeof(url), "%s", ep);
	else
		snprintf(url, sizeof(url), "https://sts.%s.amazonaws.com/", a->region);
	const char *hdrs[] = {"Content-Type: application/x-www-form-urlencoded",
			      "Accept: application/xml"};
	long st = 0;
	if ((rc = http(a, "POST", url, hdrs, 2, (const char *)body.data, body.len, false, 10000,
		       &resp, &st, err)))
		goto out;
	if (st != 200) {
		rc = floe_error_set(err, FLOE_EIO, "STS AssumeRoleWithWebIdentity for '%s': HTTP %ld: %.300s",
				    role, st, floe_buf_cstr(&resp));
		goto out;
	}
	a->creds.from = "web identity";
	if (!(rc = stream_aws_creds_from_sts(&a->creds, (const char *)resp.data, resp.len, err)))
		*got = true;
out:
	floe_buf_reset(&tok);
	floe_buf_reset(&body);
	floe_buf_reset(&resp);
	return rc;
}

static int from_container(stream_aws *a, bool *got, floe_error *err)
{
	char url[2048], auth[4200];
	const char *rel = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
		   *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	*got = false;
	if (!rel && !full)
		return FLOE_OK;
	if (rel)
		snprintf(url, sizeof(url), "http://169.254.170.2%s", rel);
	else
		snprintf(url, sizeof(url), "%s", full);
	const char *hdrs[1];
	size_t nh = 0;
	floe_buf resp;
	floe_buf_init(&resp, AWS_FILE_MAX);
	const char *tf = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tv = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	int rc = FLOE_OK;
	if (tf) {
		if (read_small(tf, &resp) || !resp.len) {
			floe_buf_reset(&resp);
			return floe_error_set(err, FLOE_EINVAL,
					      "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE '%s' cannot be read",
					      tf);
		}
		while (resp.len && (resp.data[resp.len - 1] == '\n' || resp.data[resp.len - 1] == '\r'))
			resp.len--;
		snprintf(auth, sizeof(auth), "Authorization: %.*s", (int)resp.len, resp.data);
		hdrs[nh++] = auth;
	} else if (tv) {
		snprintf(auth, sizeof(auth), "Authorization: %s", tv);
		hdrs[nh++] = auth;
	}
	long st = 0;
	if (!(rc = http(a, "GET", url, hdrs, nh, NULL, 0, false, 5000, &resp, &st, err))) {
		if (st != 200) {
			rc = floe_error_set(err, FLOE_EIO, "container credentials %s: HTTP %ld", url, st);
		} else {
			a->creds.from = "container endpoint";
			if (!(rc = stream_aws_creds_from_json(&a->creds, (const char *)resp.data, resp.len,
							      err)))
				*got = true;
		}
	}
	memset(auth, 0, sizeof(auth));
	floe_buf_reset(&resp);
	return rc;
}

static int from_instance(stream_aws *a, bool *got, floe_error *err)
{
	char base[512], url[1024], tokh[256], role[256];
	const char *dis = env("AWS_EC2_METADATA_DISABLED"), *ep = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	*got = false;
	if (dis && floe_str_ieq(dis, "true"))
		return FLOE_OK;
	snprintf(base, sizeof(base), "%s", ep ? ep : "http://169.254.169.254");
	size_t bl = strlen(base);
	if (bl && base[bl - 1] == '/')
		base[bl - 1] = 0;
	floe_buf resp;
	floe_buf_init(&resp, AWS_FILE_MAX);
	long st = 0;
	int rc;
	const char *th[] = {"X-aws-ec2-metadata-token-ttl-seconds: 21600"};
	snprintf(url, sizeof(url), "%s/latest/api/token", base);
	if ((rc = http(a, "PUT", url, th, 1, NULL, 0, false, 1000, &resp, &st, err)) || st != 200) {
		if (!rc)
			rc = floe_error_set(err, FLOE_EIO, "instance metadata token: HTTP %ld", st);
		goto out;
	}
	snprintf(tokh, sizeof(tokh), "X-aws-ec2-metadata-token: %.*s",
		 (int)(resp.len < 200 ? resp.len : 200), resp.data);
	const char *hh[] = {tokh};
	snprintf(url, sizeof(url), "%s/latest/meta-data/iam/security-credentials/", base);
	if ((rc = http(a, "GET", url, hh, 1, NULL, 0, false, 1000, &resp, &st, err)) || st != 200) {
		if (!rc)
			rc = floe_error_set(err, FLOE_EIO, "instance metadata: no role (HTTP %ld)", st);
		goto out;
	}
	size_t rl = 0;
	while (rl < resp.len && rl + 1 < sizeof(role) && resp.data[rl] != '\n' && resp.data[rl] != '\r')
		rl++;
	memcpy(role, resp.data, rl);
	role[rl] = 0;
	snprintf(url, sizeof(url), "%s/latest/meta-data/iam/security-credentials/%s", base, role);
	if ((rc = http(a, "GET", url, hh, 1, NULL, 0, false, 1000, &resp, &st, err)) || st != 200) {
		if (!rc)
			rc = floe_error_set(err, FLOE_EIO, "instance metadata credentials: HTTP %ld", st);
		goto out;
	}
	a->creds.from = "instance metadata";
	if (!(rc = stream_aws_creds_from_json(&a->creds, (const char *)resp.data, resp.len, err)))
		*got = true;
out:
	floe_buf_reset(&resp);
	return rc;
}

typedef int (*provider_fn)(stream_aws *, bool *, floe_error *);

static int resolve_creds(stream_aws *a, floe_error *err)
{
	const char *p = a->provider ? a->provider : "AUTO";
	bool got = false;
	int rc = FLOE_OK;
	if (!strcmp(p, "BASIC")) {
		return creds_set(&a->creds, a->access_key, a->secret_key, NULL, "configuration", err);
	}
	static const struct {
		const char *name;
		provider_fn fn;
	} chain[] = {{"ENV_VAR", from_env},	      {"WEB_IDENTITY_TOKEN", from_web_identity},
		     {"PROFILE", from_profile},	      {"CONTAINER", from_container},
		     {"INSTANCE", from_instance}};
	bool all = !strcmp(p, "AUTO");
	floe_error last;
	floe_error_clear(&last);
	for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]) && !got; i++) {
		if (!all && strcmp(p, chain[i].name))
			continue;
		floe_error e;
		floe_error_clear(&e);
		rc = chain[i].fn(a, &got, &e);
		if (rc) {
			if (!all)
				return floe_error_set(err, rc, "AWS credentials (%s): %s", p, e.msg);
			last = e; /* the chain goes on; said if nothing works */
			rc = FLOE_OK;
		}
	}
	if (!got)
		return floe_error_set(err, FLOE_EINVAL,
				      "no AWS credentials (provider %s: tried the environment, web "
				      "identity, profile '%s' in the shared files, the container "
				      "endpoint and instance metadata)%s%s",
				      p, profile_name(a), last.msg[0] ? "; last: " : "", last.msg);
	FLOE_INFO("AWS credentials from %s", a->creds.from);
	return FLOE_OK;
}

/* ---- the client ---------------------------------------------------------------------------- */

static char *dup_or_null(const char *s, bool *oom)
{
	if (!s)
		return NULL;
	char *d = floe_strdup(s);
	if (!d)
		*oom = true;
	return d;
}

int stream_aws_new(stream_aws **out, const stream_aws_opts *o, floe_error *err)
{
	*out = NULL;
	pthread_once(&curl_once, curl_init_once);
	stream_aws *a = floe_calloc(1, sizeof(*a));
	if (!a)
		return floe_error_oom(err);
	bool oom = false;
	a->o = *o;
	if (!a->o.timeout_ms)
		a->o.timeout_ms = 30000;
	a->service = dup_or_null(o->service ? o->service : "kinesis", &oom);
	a->provider = dup_or_null(o->provider, &oom);
	a->access_key = dup_or_null(o->access_key, &oom);
	a->secret_key = dup_or_null(o->secret_key, &oom);
	a->profile = dup_or_null(o->profile, &oom);
	a->profile_path = dup_or_null(o->profile_path, &oom);
	a->curl = curl_easy_init();
	int rc = FLOE_OK;
	if (oom || !a->curl) {
		rc = floe_error_oom(err);
		goto fail;
	}
	char reg[128];
	const char *r = o->region ? o->region : env("AWS_REGION");
	if (!r)
		r = env("AWS_DEFAULT_REGION");
	if (!r && profile_get(a, "region", reg, sizeof(reg)))
		r = reg;
	if (!r) {
		rc = floe_error_set(err, FLOE_EINVAL,
				    "no AWS region: set aws.region (or AWS_REGION, or the profile's "
				    "region)");
		goto fail;
	}
	for (const char *q = r; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-')) {
			rc = floe_error_set(err, FLOE_EINVAL, "aws.region '%s' is not a region name", r);
			goto fail;
		}
	a->region = dup_or_null(r, &oom);
	char envname[64], ep[512];
	snprintf(envname, sizeof(envname), "AWS_ENDPOINT_URL_%s", a->service);
	for (char *q = envname; *q; q++)
		if (*q >= 'a' && *q <= 'z')
			*q = (char)(*q - 'a' + 'A');
	const char *e = o->endpoint ? o->endpoint : env(envname);
	if (!e)
		e = env("AWS_ENDPOINT_URL");
	if (e)
		snprintf(ep, sizeof(ep), "%s", e);
	else
		snprintf(ep, sizeof(ep), "https://%s.%s.amazonaws.com%s", a->service, r,
			 !strncmp(r, "cn-", 3) ? ".cn" : "");
	a->endpoint = dup_or_null(ep, &oom);
	snprintf(a->sigv4, sizeof(a->sigv4), "aws:amz:%s:%s", a->region, a->service);
	if (oom) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if (!strcmp(a->provider ? a->provider : "AUTO", "BASIC") && (!a->access_key || !a->secret_key)) {
		rc = floe_error_set(err, FLOE_EINVAL,
				    "aws.credentials.provider BASIC needs aws.credentials.basic."
				    "accesskeyid and .secretkey");
		goto fail;
	}
	if ((rc = resolve_creds(a, err)))
		goto fail;
	*out = a;
	return FLOE_OK;
fail:
	stream_aws_free(a);
	return rc;
}

void stream_aws_free(stream_aws *a)
{
	if (!a)
		return;
	if (a->curl)
		curl_easy_cleanup(a->curl);
	stream_aws_creds_reset(&a->creds);
	floe_free(a->region);
	floe_free(a->endpoint);
	floe_free(a->service);
	floe_free(a->provider);
	floe_free(a->access_key);
	if (a->secret_key)
		memset(a->secret_key, 0, strlen(a->secret_key));
	floe_free(a->secret_key);
	floe_free(a->profile);
	floe_free(a->profile_path);
	floe_free(a);
}

const char *stream_aws_region(const stream_aws *a)
{
	return a->region;
}

const char *stream_aws_endpoint(const stream_aws *a)
{
	return a->endpoint;
}

int stream_aws_call(stream_aws *a, const char *target, const char *body, size_t n, floe_buf *resp,
		    long *status, floe_error *err)
{
	int rc;
	if (a->creds.expires_ms && floe_now_ms() > a->creds.expires_ms - AWS_REFRESH_MS &&
	    (rc = resolve_creds(a, err)))
		return rc;
	char th[160];
	snprintf(th, sizeof(th), "X-Amz-Target: %s", target);
	const char *hdrs[] = {"Content-Type: application/x-amz-json-1.1", th};
	*status = 0;
	return http(a, "POST", a->endpoint, hdrs, 2, body, n, true, a->o.timeout_ms, resp, status,
		    err);
}

void stream_aws_error_of(const uint8_t *body, size_t n, char *type, size_t tcap, char *msg,
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
