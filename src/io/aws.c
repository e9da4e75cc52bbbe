/*
 * aws.c — shared config files, the default credential chain, regions and
 * endpoints (aws.h).
 *
 * DESIGN: the chain follows the AWS SDK for Java v2's default order:
 * explicit keys, environment (AWS_ACCESS_KEY_ID...), web identity from the
 * environment (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN, through STS
 * AssumeRoleWithWebIdentity), the profile (static keys, or role_arn with
 * web_identity_token_file), container credentials (ECS/EKS pod identity:
 * AWS_CONTAINER_CREDENTIALS_FULL_URI / _RELATIVE_URI), then instance
 * metadata (IMDSv2) unless AWS_EC2_METADATA_DISABLED=true. The first
 * provider that yields keys is kept and asked again when its keys near
 * their expiry. Keys are wiped when freed and never appear in messages.
 */
#include "io/aws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "io/s3_xml.h"
#include "json/json.h"
#include "util/alloc.h"
#include "util/localfile.h"
#include "util/log.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define FILE_MAX (1u << 20)
#define REFRESH_BEFORE_MS (5 * 60 * 1000)

enum { K_NONE, K_STATIC, K_ENV, K_WEBID_ENV, K_PROFILE, K_WEBID_PROFILE, K_CONTAINER, K_IMDS };

struct floe_aws_provider {
	floe_mutex lock;
	floe_http *http;
	floe_strmap settings;  /* the profile's keys (credentials file first) */
	floe_strmap endpoints; /* resolved endpoints by service key */
	char *profile;
	char *region;
	floe_aws_opts o; /* explicit keys, owned copies */
	int only;        /* a provider asked for (aws.credentials.provider), 0: the chain */
	char *cred_file; /* the credentials file asked for, NULL: the standard one */
	int kind;
	floe_aws_creds cur;
	bool have;
};

static void wipe_free(char *s)
{
	if (s) {
		memset(s, 0, strlen(s));
		floe_free(s);
	}
}

void floe_aws_creds_reset(floe_aws_creds *c)
{
	if (!c)
		return;
	wipe_free(c->access_key);
	wipe_free(c->secret_key);
	wipe_free(c->token);
	memset(c, 0, sizeof(*c));
}

static int creds_set(floe_aws_creds *c, const char *ak, const char *sk, const char *tok,
		     int64_t exp, const char *source)
{
	floe_aws_creds n = {0};
	n.access_key = floe_strdup(ak);
	n.secret_key = floe_strdup(sk);
	n.token = tok && *tok ? floe_strdup(tok) : NULL;
	n.expires_ms = exp;
	n.source = source;
	if (!n.access_key || !n.secret_key || (tok && *tok && !n.token)) {
		floe_aws_creds_reset(&n);
		return FLOE_ENOMEM;
	}
	floe_aws_creds_reset(c);
	*c = n;
	return FLOE_OK;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static bool env_true(const char *name)
{
	const char *v = env(name);
	return v && (floe_str_ieq(v, "true") || !strcmp(v, "1"));
}

/* ---- dates ------------------------------------------------------------------ */

int64_t floe_aws_parse_iso8601_ms(const char *s)
{
	int64_t us;
	bool zone;
	if (!s || !floe_parse_timestamp_us(s, strlen(s), &us, &zone))
		return -1;
	return us / 1000;
}

int64_t floe_aws_parse_http_date_ms(const char *s)
{
	static const char *mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
				    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	char m[4] = {0};
	int d, y, hh, mm, ss;
	const char *comma = s ? strchr(s, ',') : NULL;
	if (!comma || sscanf(comma + 1, " %d %3s %d %d:%d:%d", &d, m, &y, &hh, &mm, &ss) != 6)
		return -1;
	for (int i = 0; i < 12; i++)
		if (!strcmp(m, mon[i]))
			return (floe_days_from_civil(y, i + 1, d) * 86400 + hh * 3600 + mm * 60 + ss) *
			       1000;
	return -1;
}

/* ---- shared files -------------------------------------------------------------- */

static char *home_file(const char *env_name, const char *rel)
{
	const char *p = env(env_name);
	if (p)
		return floe_strdup(p);
	const char *home = env("HOME");
	if (!home)
		return NULL;
	size_t n = strlen(home) + strlen(rel) + 2;
	char *s = floe_malloc(n);
	if (s)
		snprintf(s, n, "%s/%s", home, rel);
	return s;
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

/*
 * Load the keys of section `want` from an INI file into m (keys already
 * there are kept: the first file read wins). A key with an empty value
 * followed by indented lines is a subsection: "s3 =\n  endpoint_url = x"
 * becomes "s3.endpoint_url". `prefix` is put before every key.
 */
static int load_section(floe_strmap *m, const char *path, const char *want, const char *prefix)
{
	floe_input *in = NULL;
	floe_buf b;
	char sub[64] = "";
	bool in_sec = false;
	int rc;
	if (!path)
		return FLOE_OK;
	floe_buf_init(&b, FILE_MAX);
	if (floe_input_file_open(&in, path, NULL))
		return FLOE_OK; /* no file: nothing to read */
	rc = floe_input_read_all(in, &b, FILE_MAX, NULL);
	floe_input_close(in);
	if (rc) {
		FLOE_WARN("cannot read the AWS file '%s'", path);
		floe_buf_reset(&b);
		return FLOE_OK;
	}
	const char *p = floe_buf_cstr(&b), *end = p + b.len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line = p;
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		p += n + (nl ? 1 : 0);
		bool indented = n && (line[0] == ' ' || line[0] == '\t');
		trim(&line, &n);
		if (!n || line[0] == '#' || line[0] == ';')
			continue;
		if (line[0] == '[') {
			const char *close = memchr(line, ']', n);
			const char *s = line + 1;
			size_t sl = close ? (size_t)(close - s) : 0;
			trim(&s, &sl);
			in_sec = close && sl == strlen(want) && !memcmp(s, want, sl);
			sub[0] = 0;
			continue;
		}
		if (!in_sec)
			continue;
		const char *eq = memchr(line, '=', n);
		if (!eq)
			continue;
		const char *k = line, *v = eq + 1;
		size_t kl = (size_t)(eq - line), vl = n - kl - 1;
		trim(&k, &kl);
		trim(&v, &vl);
		if (!indented)
			sub[0] = 0;
		if (!indented && vl == 0) {
			snprintf(sub, sizeof(sub), "%.*s", (int)(kl < 60 ? kl : 60), k);
			continue;
		}
		char key[192], val[4096];
		if (indented && sub[0])
			snprintf(key, sizeof(key), "%s%s.%.*s", prefix, sub, (int)(kl < 120 ? kl : 120), k);
		else
			snprintf(key, sizeof(key), "%s%.*s", prefix, (int)(kl < 120 ? kl : 120), k);
		for (char *c = key; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c + 32);
		if (vl >= sizeof(val))
			continue;
		memcpy(val, v, vl);
		val[vl] = 0;
		if (!floe_strmap_get(m, key) && floe_strmap_set(m, key, val)) {
			rc = FLOE_ENOMEM;
			break;
		}
	}
	if (b.data)
		memset(b.data, 0, b.len);
	floe_buf_reset(&b);
	return rc;
}

static int load_profile(floe_aws_provider *p)
{
	char *cred = p->cred_file ? floe_strdup(p->cred_file)
				  : home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
	char *conf = home_file("AWS_CONFIG_FILE", ".aws/config");
	char sec[300];
	int rc = load_section(&p->settings, cred, p->profile, "");
	if (!rc) {
		snprintf(sec, sizeof(sec), "profile %s", p->profile);
		rc = load_section(&p->settings, conf, sec, "");
	}
	if (!rc && !strcmp(p->profile, "default"))
		rc = load_section(&p->settings, conf, "default", "");
	const char *svc = floe_strmap_get(&p->settings, "services");
	if (!rc && svc) {
		snprintf(sec, sizeof(sec), "services %s", svc);
		rc = load_section(&p->settings, conf, sec, "services.");
	}
	floe_free(cred);
	floe_free(conf);
	return rc;
}

/* ---- network providers ------------------------------------------------------------ */

static int http_get(floe_aws_provider *p, const char *method, const char *url,
		    const char *const *hdrs, size_t nh, const char *body, floe_buf *out,
		    long timeout_ms, long *status, floe_error *err)
{
	floe_http_req rq = {0};
	floe_http_resp rs;
	rq.method = method;
	rq.url = url;
	rq.headers = hdrs;
	rq.n_headers = nh;
	rq.body = body;
	rq.body_len = body ? strlen(body) : 0;
	rq.out = out;
	rq.connect_timeout_ms = timeout_ms;
	rq.socket_timeout_ms = timeout_ms > 1000 ? timeout_ms : 1000;
	rq.total_timeout_ms = timeout_ms * 3;
	int rc = floe_http_perform(p->http, &rq, &rs, err);
	*status = rs.status;
	return rc;
}

static int creds_from_json(floe_aws_creds *c, const floe_buf *b, const char *source,
			   floe_error *err)
{
	floe_arena a;
	floe_json *j;
	int rc;
	floe_arena_init(&a, 4096);
	rc = floe_json_parse(&j, &a, floe_buf_cstr(b), b->len, NULL, err);
	if (!rc) {
		floe_json *ak = floe_json_get(j, "AccessKeyId"), *sk = floe_json_get(j, "SecretAccessKey");
		floe_json *tk = floe_json_get(j, "Token"), *ex = floe_json_get(j, "Expiration");
		if (!ak || ak->type != FLOE_JSON_STRING || !sk || sk->type != FLOE_JSON_STRING)
			rc = floe_error_set(err, FLOE_ECORRUPT,
					    "%s credentials: no AccessKeyId/SecretAccessKey", source);
		else if (creds_set(c, ak->s, sk->s,
				   tk && tk->type == FLOE_JSON_STRING ? tk->s : NULL,
				   ex && ex->type == FLOE_JSON_STRING ? floe_aws_parse_iso8601_ms(ex->s)
								      : 0,
				   source))
			rc = floe_error_oom(err);
		if (!rc && c->expires_ms < 0)
			c->expires_ms = floe_now_ms() + 15 * 60 * 1000;
	}
	floe_arena_reset(&a);
	return rc;
}

static int from_container(floe_aws_provider *p, floe_aws_creds *c, floe_error *err)
{
	char url[2048], auth[4200];
	const char *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *rel = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *tok = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	const char *tokf = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *hdrs[1];
	size_t nh = 0;
	floe_buf b, tb;
	long status = 0;
	int rc;
	if (full)
		snprintf(url, sizeof(url), "%s", full);
	else
		snprintf(url, sizeof(url), "http://169.254.170.2%s", rel);
	floe_buf_init(&tb, 8192);
	if (tokf) {
		floe_input *in;
		if ((rc = floe_input_file_open(&in, tokf, err)))
			return floe_error_prefix(err, rc, "container credentials token file: ");
		rc = floe_input_read_all(in, &tb, 8192, err);
		floe_input_close(in);
		if (rc)
			return rc;
		tok = floe_buf_cstr(&tb);
	}
	if (tok) {
		size_t tl = strlen(tok);
		while (tl && (tok[tl - 1] == '\n' || tok[tl - 1] == '\r'))
			tl--;
		snprintf(auth, sizeof(auth), "Authorization: %.*s", (int)tl, tok);
		hdrs[nh++] = auth;
	}
	floe_buf_init(&b, 1 << 16);
	rc = http_get(p, "GET", url, hdrs, nh, NULL, &b, 2000, &status, err);
	if (!rc && status != 200)
		rc = floe_error_set(err, FLOE_EIO, "container credentials: HTTP %ld from %s", status,
				    url);
	if (!rc)
		rc = creds_from_json(c, &b, "container", err);
	memset(auth, 0, sizeof(auth));
	floe_buf_reset(&tb);
	floe_buf_reset(&b);
	return rc;
}

static int from_imds(floe_aws_provider *p, floe_aws_creds *c, floe_error *err)
{
	const char *base = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	char url[1024], th[1200];
	const char *ttl[] = {"X-aws-ec2-metadata-token-ttl-seconds: 21600"};
	const char *hdr[1];
	floe_buf tok, b;
	long status = 0;
	int rc;
	if (!base)
		base = "http://169.254.169.254";
	size_t bl = strlen(base);
	while (bl && base[bl - 1] == '/')
		bl--;
	floe_buf_init(&tok, 4096);
	floe_buf_init(&b, 1 << 16);
	snprintf(url, sizeof(url), "%.*s/latest/api/token", (int)bl, base);
	rc = http_get(p, "PUT", url, ttl, 1, NULL, &tok, 1000, &status, err);
	if (!rc && status != 200)
		rc = floe_error_set(err, FLOE_EIO, "instance metadata: HTTP %ld for a token", status);
	if (rc)
		goto done;
	snprintf(th, sizeof(th), "X-aws-ec2-metadata-token: %s", floe_buf_cstr(&tok));
	hdr[0] = th;
	snprintf(url, sizeof(url), "%.*s/latest/meta-data/iam/security-credentials/", (int)bl, base);
	rc = http_get(p, "GET", url, hdr, 1, NULL, &b, 1000, &status, err);
	if (!rc && status != 200)
		rc = floe_error_set(err, FLOE_ENOTFOUND, "instance metadata: no role (HTTP %ld)",
				    status);
	if (rc)
		goto done;
	const char *role = floe_buf_cstr(&b);
	size_t rl = strcspn(role, "\r\n");
	if (rl == 0 || rl > 200) {
		rc = floe_error_set(err, FLOE_ENOTFOUND, "instance metadata: no role");
		goto done;
	}
	snprintf(url, sizeof(url), "%.*s/latest/meta-data/iam/security-credentials/%.*s", (int)bl,
		 base, (int)rl, role);
	floe_buf_clear(&b);
	rc = http_get(p, "GET", url, hdr, 1, NULL, &b, 1000, &status, err);
	if (!rc && status != 200)
		rc = floe_error_set(err, FLOE_EIO, "instance metadata: HTTP %ld for the role", status);
	if (!rc)
		rc = creds_from_json(c, &b, "instance-metadata", err);
done:
	memset(th, 0, sizeof(th));
	floe_buf_reset(&tok);
	floe_buf_reset(&b);
	return rc;
}

static int form_put(floe_buf *b, const char *k, const char *v)
{
	int rc = floe_buf_printf(b, "%s%s=", b->len ? "&" : "", k);
	return rc ? rc : floe_urlencode_path(b, v, strlen(v));
}

static const char *endpoint_locked(floe_aws_provider *p, const char *svc_env, const char *svc_key);

static int from_web_identity(floe_aws_provider *p, floe_aws_creds *c, const char *token_file,
			     const char *role, const char *session, floe_error *err)
{
	floe_input *in = NULL;
	floe_buf tok, body, out, url;
	floe_arena a;
	floe_xml *x;
	long status = 0;
	int rc;
	const char *hdrs[] = {"Content-Type: application/x-www-form-urlencoded",
			      "Accept: application/xml"};
	floe_buf_init(&tok, 1 << 16);
	floe_buf_init(&body, 1 << 17);
	floe_buf_init(&out, 1 << 20);
	floe_buf_init(&url, 4096);
	floe_arena_init(&a, 8192);
	if ((rc = floe_input_file_open(&in, token_file, err))) {
		rc = floe_error_prefix(err, rc, "web identity token file: ");
		goto done;
	}
	rc = floe_input_read_all(in, &tok, 1 << 16, err);
	floe_input_close(in);
	if (rc)
		goto done;
	while (tok.len && (tok.data[tok.len - 1] == '\n' || tok.data[tok.len - 1] == '\r'))
		tok.data[--tok.len] = 0;
	char sess[64];
	if (!session) {
		snprintf(sess, sizeof(sess), "floe-%lld", (long long)floe_now_ms());
		session = sess;
	}
	const char *ep = endpoint_locked(p, "STS", "sts"); /* the caller holds p->lock */
	if (ep)
		rc = floe_buf_puts(&url, ep);
	else
		rc = floe_buf_printf(&url, "https://sts.%s.amazonaws.com", p->region);
	if (rc || form_put(&body, "Action", "AssumeRoleWithWebIdentity") ||
	    form_put(&body, "Version", "2011-06-15") || form_put(&body, "RoleArn", role) ||
	    form_put(&body, "RoleSessionName", session) ||
	    form_put(&body, "WebIdentityToken", floe_buf_cstr(&tok))) {
		rc = floe_error_oom(err);
		goto done;
	}
	if (url.len && url.data[url.len - 1] != '/' && floe_buf_putc(&url, '/')) {
		rc = floe_error_oom(err);
		goto done;
	}
	rc = http_get(p, "POST", floe_buf_cstr(&url), hdrs, 2, floe_buf_cstr(&body), &out, 5000,
		      &status, err);
	if (rc)
		goto done;
	rc = floe_xml_parse(&x, &a, floe_buf_cstr(&out), out.len, err);
	if (rc) {
		rc = floe_error_prefix(err, rc, "STS AssumeRoleWithWebIdentity (HTTP %ld): ", status);
		goto done;
	}
	if (status != 200) {
		const floe_xml *e = floe_xml_child(x, "Error");
		rc = floe_error_set(err, status == 403 ? FLOE_EINVAL : FLOE_EIO,
				    "STS AssumeRoleWithWebIdentity for %s: HTTP %ld %s: %s", role,
				    status, e ? floe_xml_child_text(e, "Code") : "",
				    e && floe_xml_child_text(e, "Message")
					    ? floe_xml_child_text(e, "Message")
					    : "");
		goto done;
	}
	const floe_xml *cr =
		floe_xml_child(floe_xml_child(x, "AssumeRoleWithWebIdentityResult"), "Credentials");
	const char *ak = floe_xml_child_text(cr, "AccessKeyId");
	const char *sk = floe_xml_child_text(cr, "SecretAccessKey");
	if (!ak || !sk) {
		rc = floe_error_set(err, FLOE_ECORRUPT, "STS answer without credentials");
		goto done;
	}
	int64_t exp = floe_aws_parse_iso8601_ms(floe_xml_child_text(cr, "Expiration"));
	if (creds_set(c, ak, sk, floe_xml_child_text(cr, "SessionToken"),
		      exp > 0 ? exp : floe_now_ms() + 15 * 60 * 1000, "web-identity"))
		rc = floe_error_oom(err);
done:
	if (tok.data)
		memset(tok.data, 0, tok.len);
	if (body.data)
		memset(body.data, 0, body.len);
	if (out.data)
		memset(out.data, 0, out.len);
	floe_buf_reset(&tok);
	floe_buf_reset(&body);
	floe_buf_reset(&out);
	floe_buf_reset(&url);
	floe_arena_reset(&a);
	return rc;
}

/* ---- the chain ---------------------------------------------------------------------- */

static int resolve(floe_aws_provider *p, int kind, floe_aws_creds *c, floe_error *err)
{
	const char *s = NULL;
	switch (kind) {
	case K_STATIC:
		return creds_set(c, p->o.access_key, p->o.secret_key, p->o.token, 0, "static")
			       ? floe_error_oom(err)
			       : FLOE_OK;
	case K_ENV:
		return creds_set(c, env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"),
				 env("AWS_SESSION_TOKEN"), 0, "environment")
			       ? floe_error_oom(err)
			       : FLOE_OK;
	case K_WEBID_ENV:
		return from_web_identity(p, c, env("AWS_WEB_IDENTITY_TOKEN_FILE"), env("AWS_ROLE_ARN"),
					 env("AWS_ROLE_SESSION_NAME"), err);
	case K_PROFILE:
		s = floe_strmap_get(&p->settings, "aws_session_token");
		return creds_set(c, floe_strmap_get(&p->settings, "aws_access_key_id"),
				 floe_strmap_get(&p->settings, "aws_secret_access_key"), s, 0,
				 "profile")
			       ? floe_error_oom(err)
			       : FLOE_OK;
	case K_WEBID_PROFILE:
		return from_web_identity(p, c, floe_strmap_get(&p->settings, "web_identity_token_file"),
					 floe_strmap_get(&p->settings, "role_arn"),
					 floe_strmap_get(&p->settings, "role_session_name"), err);
	case K_CONTAINER:
		return from_container(p, c, err);
	case K_IMDS:
		return from_imds(p, c, err);
	}
	return floe_error_set(err, FLOE_ENOTFOUND, "no AWS credentials");
}

/* One provider by its Flink name (0: AUTO, the chain; -1: unknown). */
static int provider_kind(const char *name)
{
	static const struct {
		const char *name;
		int kind;
	} names[] = {{"AUTO", 0},	   {"BASIC", K_STATIC},		     {"ENV_VAR", K_ENV},
		     {"PROFILE", K_PROFILE}, {"WEB_IDENTITY_TOKEN", K_WEBID_ENV}, {"CONTAINER", K_CONTAINER},
		     {"INSTANCE", K_IMDS}};
	if (!name || !*name)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (floe_str_ieq(name, names[i].name))
			return names[i].kind;
	return -1;
}

/* The one provider asked for, when it has what it needs. */
static int only_kind(floe_aws_provider *p)
{
	switch (p->only) {
	case K_STATIC:
		return p->o.access_key && p->o.secret_key ? K_STATIC : K_NONE;
	case K_ENV:
		return env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY") ? K_ENV : K_NONE;
	case K_PROFILE:
		if (floe_strmap_get(&p->settings, "aws_access_key_id") &&
		    floe_strmap_get(&p->settings, "aws_secret_access_key"))
			return K_PROFILE;
		return floe_strmap_get(&p->settings, "web_identity_token_file") &&
				       floe_strmap_get(&p->settings, "role_arn")
			       ? K_WEBID_PROFILE
			       : K_NONE;
	case K_WEBID_ENV:
		if (env("AWS_WEB_IDENTITY_TOKEN_FILE") && env("AWS_ROLE_ARN"))
			return K_WEBID_ENV;
		return floe_strmap_get(&p->settings, "web_identity_token_file") &&
				       floe_strmap_get(&p->settings, "role_arn")
			       ? K_WEBID_PROFILE
			       : K_NONE;
	case K_CONTAINER:
		return env("AWS_CONTAINER_CREDENTIALS_FULL_URI") ||
				       env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
			       ? K_CONTAINER
			       : K_NONE;
	case K_IMDS:
		return K_IMDS; /* asked for: even with AWS_EC2_METADATA_DISABLED unset or not */
	}
	return K_NONE;
}

static int first_kind(floe_aws_provider *p)
{
	if (p->only)
		return only_kind(p);
	if (p->o.access_key && p->o.secret_key)
		return K_STATIC;
	if (env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY"))
		return K_ENV;
	if (env("AWS_WEB_IDENTITY_TOKEN_FILE") && env("AWS_ROLE_ARN"))
		return K_WEBID_ENV;
	if (floe_strmap_get(&p->settings, "aws_access_key_id") &&
	    floe_strmap_get(&p->settings, "aws_secret_access_key"))
		return K_PROFILE;
	if (floe_strmap_get(&p->settings, "web_identity_token_file") &&
	    floe_strmap_get(&p->settings, "role_arn"))
		return K_WEBID_PROFILE;
	if (env("AWS_CONTAINER_CREDENTIALS_FULL_URI") || env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"))
		return K_CONTAINER;
	if (!env_true("AWS_EC2_METADATA_DISABLED"))
		return K_IMDS;
	return K_NONE;
}

int floe_aws_provider_get(floe_aws_provider *p, floe_aws_creds *out, floe_error *err)
{
	int rc = FLOE_OK;
	memset(out, 0, sizeof(*out));
	floe_mutex_lock(&p->lock);
	int64_t now = floe_now_ms();
	if (!p->have || (p->cur.expires_ms && now >= p->cur.expires_ms - REFRESH_BEFORE_MS)) {
		floe_aws_creds n = {0};
		if (p->kind == K_NONE)
			p->kind = first_kind(p);
		if (p->kind == K_NONE && p->only) {
			rc = floe_error_set(err, FLOE_ENOTFOUND,
					    "no AWS credentials from the provider asked for (%s)",
					    p->only == K_STATIC	   ? "BASIC: explicit keys"
					    : p->only == K_ENV	   ? "ENV_VAR: AWS_ACCESS_KEY_ID and "
								     "AWS_SECRET_ACCESS_KEY"
					    : p->only == K_PROFILE ? "PROFILE: the profile's keys or role"
					    : p->only == K_WEBID_ENV
						    ? "WEB_IDENTITY_TOKEN: AWS_WEB_IDENTITY_TOKEN_FILE "
						      "and AWS_ROLE_ARN"
						    : "CONTAINER: AWS_CONTAINER_CREDENTIALS_FULL_URI or "
						      "_RELATIVE_URI");
		} else if (p->kind == K_NONE) {
			rc = floe_error_set(err, FLOE_ENOTFOUND,
					    "no AWS credentials: tried explicit keys (s3.access-key-id "
					    "or aws.credentials.basic.*), the environment "
					    "(AWS_ACCESS_KEY_ID), web identity, the profile '%s' of the "
					    "shared files, the container endpoint and instance metadata",
					    p->profile);
		} else {
			rc = resolve(p, p->kind, &n, err);
			if (!rc) {
				floe_aws_creds_reset(&p->cur);
				p->cur = n;
				p->have = true;
			} else if (p->have && now < p->cur.expires_ms) {
				/* the old keys still work: use them, try again next time */
				FLOE_WARN("refreshing AWS credentials (%s) failed; the current ones "
					  "are still valid",
					  p->cur.source);
				rc = FLOE_OK;
			}
		}
	}
	if (!rc && creds_set(out, p->cur.access_key, p->cur.secret_key, p->cur.token,
			     p->cur.expires_ms, p->cur.source))
		rc = floe_error_oom(err);
	floe_mutex_unlock(&p->lock);
	return rc;
}

const char *floe_aws_provider_region(const floe_aws_provider *p)
{
	return p->region;
}

const char *floe_aws_provider_setting(const floe_aws_provider *p, const char *key)
{
	return floe_strmap_get(&p->settings, key);
}

/* floe_aws_provider_endpoint with p->lock held (the web-identity provider
 * asks for STS's while floe_aws_provider_get holds it). */
static const char *endpoint_locked(floe_aws_provider *p, const char *svc_env, const char *svc_key)
{
	char name[128], key[128];
	const char *v = NULL;
	const char *cached = floe_strmap_get(&p->endpoints, svc_key);
	if (cached)
		return *cached ? cached : NULL;
	const char *ign = floe_strmap_get(&p->settings, "ignore_configured_endpoint_urls");
	bool ignore = env_true("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS") || (ign && floe_str_ieq(ign, "true"));
	if (!ignore) {
		snprintf(name, sizeof(name), "AWS_ENDPOINT_URL_%s", svc_env);
		v = env(name);
		if (!v)
			v = env("AWS_ENDPOINT_URL");
		if (!v) {
			snprintf(key, sizeof(key), "services.%s.endpoint_url", svc_key);
			v = floe_strmap_get(&p->settings, key);
		}
		if (!v) {
			snprintf(key, sizeof(key), "%s.endpoint_url", svc_key);
			v = floe_strmap_get(&p->settings, key);
		}
		if (!v)
			v = floe_strmap_get(&p->settings, "endpoint_url");
	}
	if (floe_strmap_set(&p->endpoints, svc_key, v ? v : ""))
		v = NULL;
	else
		v = v ? floe_strmap_get(&p->endpoints, svc_key) : NULL;
	return v;
}

const char *floe_aws_provider_endpoint(floe_aws_provider *p, const char *svc_env,
				       const char *svc_key)
{
	floe_mutex_lock(&p->lock);
	const char *v = endpoint_locked(p, svc_env, svc_key);
	floe_mutex_unlock(&p->lock);
	return v;
}

int floe_aws_provider_new(floe_aws_provider **out, const floe_aws_opts *o, floe_http *http,
			  floe_error *err)
{
	floe_aws_provider *p = floe_calloc(1, sizeof(*p));
	int rc;
	*out = NULL;
	if (!p)
		return floe_error_oom(err);
	if (floe_mutex_init(&p->lock)) {
		floe_free(p);
		return floe_error_oom(err);
	}
	floe_strmap_init(&p->settings);
	floe_strmap_init(&p->endpoints);
	p->http = http;
	if ((p->only = provider_kind(o ? o->provider : NULL)) < 0) {
		rc = floe_error_set(err, FLOE_EINVAL,
				    "AWS credentials provider '%s' is not AUTO, BASIC, ENV_VAR, "
				    "PROFILE, WEB_IDENTITY_TOKEN, CONTAINER or INSTANCE",
				    o->provider);
		goto fail;
	}
	if (o && o->credentials_file && *o->credentials_file &&
	    !(p->cred_file = floe_strdup(o->credentials_file))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	const char *prof = o && o->profile && *o->profile ? o->profile : env("AWS_PROFILE");
	p->profile = floe_strdup(prof ? prof : "default");
	if (o && o->access_key && *o->access_key && o->secret_key && *o->secret_key) {
		p->o.access_key = floe_strdup(o->access_key);
		p->o.secret_key = floe_strdup(o->secret_key);
		p->o.token = o->token && *o->token ? floe_strdup(o->token) : NULL;
		if (!p->o.access_key || !p->o.secret_key) {
			rc = floe_error_oom(err);
			goto fail;
		}
	}
	if (!p->profile || (rc = load_profile(p))) {
		rc = floe_error_oom(err);
		goto fail;
	}
	const char *region = o && o->region && *o->region ? o->region : env("AWS_REGION");
	if (!region)
		region = env("AWS_DEFAULT_REGION");
	if (!region)
		region = floe_strmap_get(&p->settings, "region");
	p->region = floe_strdup(region ? region : "us-east-1");
	if (!p->region) {
		rc = floe_error_oom(err);
		goto fail;
	}
	*out = p;
	return FLOE_OK;
fail:
	floe_aws_provider_free(p);
	return rc;
}

void floe_aws_provider_free(floe_aws_provider *p)
{
	if (!p)
		return;
	floe_aws_creds_reset(&p->cur);
	wipe_free((char *)p->o.access_key);
	wipe_free((char *)p->o.secret_key);
	wipe_free((char *)p->o.token);
	for (size_t i = 0; i < p->settings.len; i++)
		if (p->settings.items[i].value)
			memset(p->settings.items[i].value, 0, strlen(p->settings.items[i].value));
	floe_strmap_reset(&p->settings);
	floe_strmap_reset(&p->endpoints);
	floe_free(p->profile);
	floe_free(p->region);
	floe_free(p->cred_file);
	floe_mutex_destroy(&p->lock);
	floe_free(p);
}
