/*
 * aws_secret.c — ${secret:NAME#field} references resolved through AWS
 * Secrets Manager's GetSecretValue (see aws_secret.h).
 */
#include "io/aws_secret.h"

#include <stdio.h>
#include <string.h>

#include "io/aws.h"
#include "io/http.h"
#include "json/json.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/str.h"
#include "util/thread.h"

#define REF_OPEN "${secret:"
#define REF_OPEN_LEN 9
#define MAX_SECRET (64 * 1024)   /* Secrets Manager's own limit */
#define MAX_ANSWER (256 * 1024)  /* a GetSecretValue answer: the secret + metadata */
#define MAX_NAME 2048
#define MAX_CACHED 64

static void wipe_buf(floe_buf *b)
{
	if (b->data)
		memset(b->data, 0, b->cap);
	floe_buf_reset(b);
}

void floe_secret_free(char *s)
{
	if (!s)
		return;
	memset(s, 0, strlen(s));
	floe_free(s);
}

bool floe_secret_has_ref(const char *s)
{
	return s && strstr(s, REF_OPEN) != NULL;
}

int floe_secret_parse_ref(floe_secret_ref *ref, const char *p, size_t n, floe_error *err)
{
	memset(ref, 0, sizeof(*ref));
	if (n < REF_OPEN_LEN || memcmp(p, REF_OPEN, REF_OPEN_LEN))
		return floe_error_set(err, FLOE_EINVAL, "expected ${secret:NAME[#field]}");
	const char *s = p + REF_OPEN_LEN, *end = memchr(s, '}', n - REF_OPEN_LEN);
	if (!end)
		return floe_error_set(err, FLOE_EINVAL, "unterminated ${secret:...}");
	const char *hash = memchr(s, '#', (size_t)(end - s));
	ref->name = s;
	ref->name_len = (size_t)((hash ? hash : end) - s);
	if (hash) {
		ref->field = hash + 1;
		ref->field_len = (size_t)(end - hash - 1);
	}
	ref->len = (size_t)(end - p) + 1;
	if (ref->name_len == 0 || ref->name_len > MAX_NAME)
		return floe_error_set(err, FLOE_EINVAL,
				      "${secret:...} needs a secret name or ARN (at most %d bytes)",
				      MAX_NAME);
	if (hash && (ref->field_len == 0 || ref->field_len > MAX_NAME))
		return floe_error_set(err, FLOE_EINVAL,
				      "${secret:%.*s#}: the field after '#' is empty (leave out '#' "
				      "for the whole secret)",
				      (int)ref->name_len, ref->name);
	for (size_t i = 0; i < ref->name_len; i++)
		if ((unsigned char)ref->name[i] < 0x21)
			return floe_error_set(err, FLOE_EINVAL,
					      "${secret:...}: a secret name has no spaces or control "
					      "characters");
	return FLOE_OK;
}

int floe_secret_string(char **out, const char *body, size_t n, const char *name, floe_error *err)
{
	floe_arena a;
	floe_json *j;
	int rc = FLOE_OK;
	*out = NULL;
	floe_arena_init(&a, 4096);
	if (floe_json_parse(&j, &a, body, n, NULL, NULL) || j->type != FLOE_JSON_OBJECT) {
		rc = floe_error_set(err, FLOE_ECORRUPT,
				    "secret '%s': the GetSecretValue answer is not a JSON object",
				    name);
		goto done;
	}
	const floe_json *s = floe_json_get(j, "SecretString");
	if (!s || s->type != FLOE_JSON_STRING) {
		rc = floe_json_get(j, "SecretBinary")
			     ? floe_error_set(err, FLOE_EUNSUPPORTED,
					      "secret '%s' holds binary data (SecretBinary); floe reads "
					      "text secrets (SecretString) only",
					      name)
			     : floe_error_set(err, FLOE_ECORRUPT,
					      "secret '%s': the GetSecretValue answer has no "
					      "SecretString",
					      name);
		goto done;
	}
	if (s->len > MAX_SECRET || memchr(s->s, 0, s->len)) {
		rc = floe_error_set(err, FLOE_ECORRUPT,
				    "secret '%s': SecretString is over 64 KiB or holds a NUL byte",
				    name);
		goto done;
	}
	if (!(*out = floe_strndup(s->s, s->len)))
		rc = floe_error_oom(err);
	memset((char *)s->s, 0, s->len);
done:
	floe_arena_reset(&a);
	return rc;
}

/* A member's value as text (strings unescaped; numbers as written). */
static int member_text(char **out, const floe_json *v)
{
	const char *t = v->type == FLOE_JSON_BOOL ? (v->b ? "true" : "false") : v->s;
	size_t tl = v->type == FLOE_JSON_BOOL ? strlen(t) : v->len;
	return (*out = floe_strndup(t, tl)) ? FLOE_OK : FLOE_ENOMEM;
}

int floe_secret_field(char **out, const char *secret, const char *name, const char *field,
		      floe_error *err)
{
	floe_arena a;
	floe_json *j = NULL;
	int rc = FLOE_OK;
	*out = NULL;
	floe_arena_init(&a, 4096);
	/* the parser's own message would quote the secret's text: not passed on */
	if (floe_json_parse(&j, &a, secret, strlen(secret), NULL, NULL) ||
	    j->type != FLOE_JSON_OBJECT) {
		j = NULL;
		rc = floe_error_set(err, FLOE_EINVAL,
				    "secret '%s' is not a JSON object, so it has no field '%s' (write "
				    "${secret:%s} for the whole string)",
				    name, field, name);
		goto done;
	}
	const floe_json *v = floe_json_get(j, field);
	if (!v) {
		char names[512];
		size_t k = 0;
		names[0] = 0;
		for (const floe_json *m = j->child; m && k + 1 < sizeof(names); m = m->next) {
			int w = snprintf(names + k, sizeof(names) - k, "%s%.*s", k ? ", " : "",
					 (int)m->key_len, m->key);
			k = w < 0 ? sizeof(names) : k + (size_t)w;
		}
		rc = floe_error_set(err, FLOE_ENOTFOUND,
				    "secret '%s' has no field '%s' (it has: %s)", name, field,
				    names[0] ? names : "no fields");
		goto done;
	}
	if (v->type != FLOE_JSON_STRING && v->type != FLOE_JSON_NUMBER &&
	    v->type != FLOE_JSON_BOOL) {
		rc = floe_error_set(err, FLOE_EINVAL,
				    "secret '%s': field '%s' is a %s, not a string or number", name,
				    field, floe_json_type_name(v->type));
		goto done;
	}
	if (member_text(out, v))
		rc = floe_error_oom(err);
done:
	/* wipe the unescaped copies of the secret's strings */
	for (const floe_json *m = j ? j->child : NULL; m; m = m->next)
		if (m->type == FLOE_JSON_STRING)
			memset((char *)m->s, 0, m->len);
	floe_arena_reset(&a);
	return rc;
}

/* ---- the process's secrets --------------------------------------------------------- */

typedef struct cached {
	char *name;
	char *value; /* SecretString */
} cached;

static floe_mutex g_lock = {PTHREAD_MUTEX_INITIALIZER};
static cached g_cache[MAX_CACHED];
static size_t g_n;

/* The region of an ARN (arn:aws:secretsmanager:REGION:...), else NULL. */
static bool arn_region(const char *name, char *region, size_t cap)
{
	if (strncmp(name, "arn:", 4))
		return false;
	const char *p = name + 4;
	for (int i = 0; i < 2 && p; i++) { /* skip partition and service */
		p = strchr(p, ':');
		p = p ? p + 1 : NULL;
	}
	const char *e = p ? strchr(p, ':') : NULL;
	if (!e || e == p || (size_t)(e - p) >= cap)
		return false;
	snprintf(region, cap, "%.*s", (int)(e - p), p);
	return true;
}

static int api_error(const char *name, const char *region, const floe_buf *out, long status,
		     floe_error *err)
{
	char type[128], msg[512];
	floe_aws_json_error(out->data, out->len, type, sizeof(type), msg, sizeof(msg));
	int code = !strcmp(type, "ResourceNotFoundException") ? FLOE_ENOTFOUND
		   : status >= 500 || status == 429	      ? FLOE_EIO
							      : FLOE_EINVAL;
	if (!strcmp(type, "ResourceNotFoundException"))
		return floe_error_set(err, code,
				      "secret '%s' does not exist in Secrets Manager (%s)", name,
				      region);
	if (!strcmp(type, "AccessDeniedException") || status == 403)
		return floe_error_set(err, code,
				      "secret '%s': access denied by Secrets Manager (%s): the "
				      "credentials need secretsmanager:GetSecretValue on it%s%s",
				      name, region, msg[0] ? ": " : "", msg);
	return floe_error_set(err, code,
			      "secret '%s': Secrets Manager (%s) answered HTTP %ld %s%s%s", name,
			      region, status, type[0] ? type : "", msg[0] ? ": " : "", msg);
}

/* GetSecretValue: the SecretString, malloc'd. */
static int fetch(char **value, const char *name, floe_error *err)
{
	floe_http *http = floe_http_new();
	floe_aws_provider *prov = NULL;
	floe_buf body, out;
	char region[64], ep[512];
	int rc;
	*value = NULL;
	floe_buf_init(&body, 2 * MAX_NAME + 64);
	floe_buf_init(&out, MAX_ANSWER);
	if (!http) {
		rc = floe_error_set(err, FLOE_ENOMEM, "secret '%s': no HTTP client", name);
		goto done;
	}
	floe_aws_opts ao = {0};
	bool by_arn = arn_region(name, region, sizeof(region));
	if (by_arn)
		ao.region = region;
	if ((rc = floe_aws_provider_new(&prov, &ao, http, err)))
		goto done;
	if (!by_arn)
		snprintf(region, sizeof(region), "%s", floe_aws_provider_region(prov));
	const char *e = floe_aws_provider_endpoint(prov, "SECRETS_MANAGER", "secretsmanager");
	if (e)
		snprintf(ep, sizeof(ep), "%s", e);
	else
		snprintf(ep, sizeof(ep), "https://secretsmanager.%s.amazonaws.com", region);
	floe_jw w;
	floe_jw_init(&w, &body, 0);
	floe_jw_obj_begin(&w);
	floe_jw_kv_str(&w, "SecretId", name);
	floe_jw_obj_end(&w);
	if (floe_jw_finish(&w)) {
		rc = floe_error_oom(err);
		goto done;
	}
	floe_aws_json_req r = {0};
	r.endpoint = ep;
	r.region = region;
	r.service = "secretsmanager";
	r.target = "secretsmanager.GetSecretValue";
	r.body = (const char *)body.data;
	r.body_len = body.len;
	r.total_timeout_ms = 30000;
	floe_retry rt = {0};
	rt.max_attempts = 4;
	rt.min_wait_ms = 100;
	rt.max_wait_ms = 2000;
	rt.deadline_ms = 60000;
	floe_retry_start(&rt);
	for (;;) {
		floe_http_resp rs;
		floe_error e1;
		floe_error_clear(&e1);
		wipe_buf(&out);
		floe_buf_init(&out, MAX_ANSWER);
		rc = floe_aws_json_call(http, prov, &r, &out, &rs, &e1);
		bool again = rc == FLOE_EIO || rc == FLOE_ETIMEDOUT ||
			     (!rc && (rs.status >= 500 || rs.status == 429));
		if (again && floe_retry_next(&rt, -1))
			continue;
		if (rc) {
			if (err)
				*err = e1;
			rc = floe_error_prefix(err, rc, "secret '%s': Secrets Manager at %s: ",
					       name, ep);
		} else if (rs.status != 200) {
			rc = api_error(name, region, &out, rs.status, err);
		} else {
			rc = floe_secret_string(value, (const char *)out.data, out.len, name, err);
		}
		break;
	}
done:
	wipe_buf(&out);
	floe_buf_reset(&body);
	floe_aws_provider_free(prov);
	floe_http_free(http);
	return rc;
}

/* The SecretString of `name`, fetched once per process; *value is a copy. */
static int secret_value(char **value, const char *name, floe_error *err)
{
	int rc = FLOE_OK;
	*value = NULL;
	floe_mutex_lock(&g_lock);
	for (size_t i = 0; i < g_n; i++)
		if (!strcmp(g_cache[i].name, name)) {
			if (!(*value = floe_strdup(g_cache[i].value)))
				rc = floe_error_oom(err);
			floe_mutex_unlock(&g_lock);
			return rc;
		}
	/* held across the call: each secret is asked once even from several threads */
	char *v = NULL;
	if ((rc = fetch(&v, name, err)))
		goto done;
	if (g_n < MAX_CACHED) {
		char *n = floe_strdup(name), *c = floe_strdup(v);
		if (!n || !c) {
			floe_free(n);
			floe_secret_free(c);
		} else {
			g_cache[g_n++] = (cached){n, c};
		}
	}
	*value = v;
done:
	floe_mutex_unlock(&g_lock);
	return rc;
}

/* The authority of a URI template: after "://" up to the next '/', '?' or '#'
 * outside references. [*from, *to) as offsets into s; false when none. */
static bool authority(const char *s, size_t *from, size_t *to)
{
	const char *p = strstr(s, "://");
	if (!p)
		return false;
	size_t i = (size_t)(p - s) + 3, n = strlen(s);
	if (floe_secret_has_ref(s) && strstr(s, REF_OPEN) < p)
		return false; /* the scheme comes from a secret: no URI to speak of */
	*from = i;
	while (i < n) {
		if (!strncmp(s + i, REF_OPEN, REF_OPEN_LEN)) {
			const char *e = strchr(s + i, '}');
			i = e ? (size_t)(e - s) + 1 : n;
			continue;
		}
		if (s[i] == '/' || s[i] == '?' || s[i] == '#')
			break;
		i++;
	}
	*to = i;
	return true;
}

int floe_secret_expand(char **out, const char *s, bool uri, floe_error *err)
{
	*out = NULL;
	if (!floe_secret_has_ref(s))
		return FLOE_OK;
	size_t n = strlen(s), a_from = 0, a_to = 0;
	bool has_auth = uri && authority(s, &a_from, &a_to);
	floe_buf b;
	int rc = FLOE_OK;
	floe_buf_init(&b, 4 * MAX_SECRET);
	for (size_t i = 0; i < n && !rc;) {
		if (strncmp(s + i, REF_OPEN, REF_OPEN_LEN)) {
			if (floe_buf_putc(&b, s[i]))
				rc = floe_error_oomf(err, "value too long");
			i++;
			continue;
		}
		floe_secret_ref ref;
		if ((rc = floe_secret_parse_ref(&ref, s + i, n - i, err)))
			break;
		char name[MAX_NAME + 1], field[MAX_NAME + 1];
		snprintf(name, sizeof(name), "%.*s", (int)ref.name_len, ref.name);
		snprintf(field, sizeof(field), "%.*s", (int)ref.field_len,
			 ref.field ? ref.field : "");
		char *whole = NULL, *v = NULL;
		if ((rc = secret_value(&whole, name, err)))
			break;
		if (ref.field) {
			rc = floe_secret_field(&v, whole, name, field, err);
			floe_secret_free(whole);
		} else {
			v = whole;
		}
		if (!rc) {
			bool enc = has_auth && i >= a_from && i < a_to;
			rc = enc ? floe_urlencode_path(&b, v, strlen(v)) : floe_buf_puts(&b, v);
			if (rc)
				rc = floe_error_oomf(err, "value too long");
		}
		floe_secret_free(v);
		i += ref.len;
	}
	if (!rc && !(*out = floe_strndup(floe_buf_cstr(&b), b.len)))
		rc = floe_error_oom(err);
	wipe_buf(&b);
	return rc;
}
