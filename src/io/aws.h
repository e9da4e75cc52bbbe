/*
 * aws.h — AWS settings as the AWS SDKs read them: the shared config and
 * credentials files with profiles, the environment, the default credential
 * chain (explicit keys, environment, web-identity AssumeRole, profile,
 * container and instance metadata), regions and service endpoints.
 *
 * Used by the S3 FileIO, the Glue catalog, Secrets Manager and the REST
 * catalog's SigV4 signing. Secrets are never logged.
 *
 * Thread-safety: a provider may be used from several threads at once.
 */
#ifndef FLOE_IO_AWS_H
#define FLOE_IO_AWS_H

#include "floe/common.h"
#include "io/http.h"
#include "util/str.h"

typedef struct floe_aws_creds {
	char *access_key;
	char *secret_key;
	char *token;        /* NULL without a session token */
	int64_t expires_ms; /* 0: never */
	const char *source; /* "static", "environment", "profile", "web-identity", ... */
} floe_aws_creds;

void floe_aws_creds_reset(floe_aws_creds *c); /* wipes and frees */

typedef struct floe_aws_opts {
	/* explicit keys (all three from one place, e.g. s3.access-key-id...) */
	const char *access_key, *secret_key, *token;
	const char *region;  /* explicit region (NULL: environment, profile) */
	const char *profile; /* NULL: AWS_PROFILE, else "default" */
	/* one provider instead of the chain (Flink's aws.credentials.provider):
	 * NULL or AUTO (the chain), BASIC (the explicit keys), ENV_VAR, PROFILE,
	 * WEB_IDENTITY_TOKEN, CONTAINER, INSTANCE */
	const char *provider;
	const char *credentials_file; /* NULL: AWS_SHARED_CREDENTIALS_FILE, ~/.aws/credentials */
} floe_aws_opts;

typedef struct floe_aws_provider floe_aws_provider;

/* Reads the environment and the shared files now; network providers are
 * asked on the first floe_aws_provider_get. `http` is borrowed. */
int floe_aws_provider_new(floe_aws_provider **out, const floe_aws_opts *o, floe_http *http,
			  floe_error *err) FLOE_WUR;
void floe_aws_provider_free(floe_aws_provider *p);
/* Current credentials (a copy the caller resets); refreshed five minutes
 * before they expire. FLOE_ENOTFOUND when the chain (or the one provider
 * asked for) found none. c->source names the provider: "static",
 * "environment", "web-identity", "profile", "container",
 * "instance-metadata". */
int floe_aws_provider_get(floe_aws_provider *p, floe_aws_creds *out, floe_error *err) FLOE_WUR;
/* The region: explicit, AWS_REGION, AWS_DEFAULT_REGION, the profile's,
 * else "us-east-1". */
const char *floe_aws_provider_region(const floe_aws_provider *p);
/* A setting of the selected profile ("region", "s3.addressing_style", ...)
 * or NULL. */
const char *floe_aws_provider_setting(const floe_aws_provider *p, const char *key);
/*
 * The endpoint the SDKs would use for a service (svc_env "S3", svc_key "s3"):
 * AWS_ENDPOINT_URL_<SVC>, AWS_ENDPOINT_URL, the profile's services section
 * or endpoint_url (unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true), else
 * NULL (the AWS default for the region). Borrowed; valid with the provider.
 */
const char *floe_aws_provider_endpoint(floe_aws_provider *p, const char *svc_env,
				       const char *svc_key);

/* ISO 8601 "2024-05-01T10:00:00Z" to epoch ms (-1 on failure). */
int64_t floe_aws_parse_iso8601_ms(const char *s);
/* RFC 1123 "Wed, 01 May 2024 10:00:00 GMT" to epoch ms (-1 on failure). */
int64_t floe_aws_parse_http_date_ms(const char *s);

/*
 * One AWS JSON 1.1 call (Glue, Kinesis): POST body to endpoint with
 * X-Amz-Target, signed with SigV4 for region/service by the provider's
 * credentials (the Authorization and token headers are wiped after). *rs
 * gets the HTTP status; the body goes to out. Transport errors as
 * floe_http_perform's.
 */
typedef struct floe_aws_json_req {
	const char *endpoint; /* "https://glue.eu-west-1.amazonaws.com" */
	const char *region, *service, *target; /* target: "AWSGlue.GetTable" */
	const char *body;
	size_t body_len;
	long connect_timeout_ms, socket_timeout_ms, total_timeout_ms; /* 0: http's defaults */
	bool at_most_once, accept_compressed;
} floe_aws_json_req;
int floe_aws_json_call(floe_http *http, floe_aws_provider *prov, const floe_aws_json_req *r,
		       floe_buf *out, floe_http_resp *rs, floe_error *err) FLOE_WUR;
/* The error of a JSON 1.1 answer: __type (after its '#') and message. */
void floe_aws_json_error(const uint8_t *body, size_t n, char *type, size_t tcap, char *msg,
			 size_t mcap);

#endif
