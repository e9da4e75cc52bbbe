/*
 * stream_aws.c — SigV4-signed JSON-protocol calls on io/aws.h, io/sigv4.h
 * and io/http.h (see stream_aws.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/aws.h"
#include "io/http.h"
#include "io/sigv4.h"
#include "json/json.h"
#include "stream/stream_aws.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/timeutil.h"

struct stream_aws {
	floe_http *http;
	floe_aws_provider *prov;
	char *region, *endpoint, *service, *host;
	int64_t timeout_ms;
};

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

/* What the log says about a provider (io/aws.h's source names). */
static const char *source_text(const char *src)
{
	if (!src)
		return "?";
	if (!strcmp(src, "static"))
		return "the configuration (aws.credentials.basic.*)";
	if (!strcmp(src, "environment"))
		return "the environment";
	if (!strcmp(src, "web-identity"))
		return "web identity (STS AssumeRoleWithWebIdentity)";
	if (!strcmp(src, "profile"))
		return "the shared credentials file";
	if (!strcmp(src, "container"))
		return "the container endpoint";
	if (!strcmp(src, "instance-metadata"))
		return "instance metadata";
	return src;
}

int stream_aws_new(stream_aws **out, const stream_aws_opts *o, floe_error *err)
{
	*out = NULL;
	stream_aws *a = floe_calloc(1, sizeof(*a));
	if (!a)
		return floe_error_oom(err);
	int rc = FLOE_OK;
	const char *prov = o->provider ? o->provider : "AUTO";
	bool basic = !strcmp(prov, "BASIC");
	if (basic && (!o->access_key || !o->secret_key)) {
		rc = floe_error_set(err, FLOE_EINVAL,
				    "aws.credentials.provider BASIC needs aws.credentials.basic."
				    "accesskeyid and .secretkey");
		goto fail;
	}
	a->timeout_ms = o->timeout_ms ? o->timeout_ms : 30000;
	a->service = floe_strdup(o->service ? o->service : "kinesis");
	if (!a->service || !(a->http = floe_http_new())) {
		rc = floe_error_oom(err);
		goto fail;
	}
	floe_aws_opts ao = {0};
	if (basic) {
		ao.access_key = o->access_key;
		ao.secret_key = o->secret_key;
	}
	ao.region = o->region;
	ao.profile = o->profile;
	ao.provider = prov;
	ao.credentials_file = o->profile_path;
	if ((rc = floe_aws_provider_new(&a->prov, &ao, a->http, err)))
		goto fail;
	/* the region: explicit, the environment, the profile's — never a guess */
	const char *r = o->region ? o->region : env("AWS_REGION");
	if (!r)
		r = env("AWS_DEFAULT_REGION");
	if (!r)
		r = floe_aws_provider_setting(a->prov, "region");
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
	char svc_env[64], ep[512];
	snprintf(svc_env, sizeof(svc_env), "%s", a->service);
	for (char *q = svc_env; *q; q++)
		if (*q >= 'a' && *q <= 'z')
			*q = (char)(*q - 'a' + 'A');
	const char *e = o->endpoint ? o->endpoint
				    : floe_aws_provider_endpoint(a->prov, svc_env, a->service);
	if (e)
		snprintf(ep, sizeof(ep), "%s", e);
	else
		snprintf(ep, sizeof(ep), "https://%s.%s.amazonaws.com%s", a->service, r,
			 !strncmp(r, "cn-", 3) ? ".cn" : "");
	const char *h = strstr(ep, "://");
	if (!h || strncmp(ep, "http", 4)) {
		rc = floe_error_set(err, FLOE_EINVAL, "aws.endpoint '%s' is not an http(s) URL", ep);
		goto fail;
	}
	h += 3;
	a->region = floe_strdup(r);
	a->endpoint = floe_strdup(ep);
	a->host = floe_strndup(h, strcspn(h, "/"));
	if (!a->region || !a->endpoint || !a->host) {
		rc = floe_error_oom(err);
		goto fail;
	}
	floe_aws_creds cr = {0};
	if ((rc = floe_aws_provider_get(a->prov, &cr, err))) {
		floe_error_prefix(err, rc, "provider %s: ", prov);
		goto fail;
	}
	FLOE_INFO("AWS credentials from %s", source_text(cr.source));
	floe_aws_creds_reset(&cr);
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
	floe_aws_provider_free(a->prov);
	floe_http_free(a->http);
	floe_free(a->region);
	floe_free(a->endpoint);
	floe_free(a->service);
	floe_free(a->host);
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
	floe_aws_json_req r = {0};
	floe_http_resp rs;
	*status = 0;
	floe_buf_clear(resp);
	r.endpoint = a->endpoint;
	r.region = a->region;
	r.service = a->service;
	r.target = target;
	r.body = body;
	r.body_len = n;
	r.connect_timeout_ms = a->timeout_ms < 10000 ? (long)a->timeout_ms : 10000;
	r.socket_timeout_ms = (long)a->timeout_ms;
	r.total_timeout_ms = (long)a->timeout_ms;
	r.accept_compressed = true;
	int rc = floe_aws_json_call(a->http, a->prov, &r, resp, &rs, err);
	if (rc == FLOE_EIO || rc == FLOE_ETIMEDOUT) {
		/* no answer: the caller asks again (GetRecords and the listings
		 * are reads; a retried GetShardIterator only gives a new one) */
		char m[FLOE_ERROR_MSG_MAX];
		snprintf(m, sizeof(m), "%s", err ? err->msg : "");
		return floe_error_set_retryable(err, FLOE_EIO, "%s", m);
	}
	if (!rc)
		*status = rs.status;
	return rc;
}

void stream_aws_error_of(const uint8_t *body, size_t n, char *type, size_t tcap, char *msg,
			 size_t mcap)
{
	floe_aws_json_error(body, n, type, tcap, msg, mcap);
}
