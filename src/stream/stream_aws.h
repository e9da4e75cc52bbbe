/*
 * stream_aws.h — AWS calls for the Kinesis source: credentials from the
 * standard chain and JSON-protocol requests signed with SigV4 by libcurl
 * (CURLOPT_AWS_SIGV4).
 *
 * The credentials chain (aws.credentials.provider AUTO), in the AWS SDKs'
 * order: the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN); web identity (AWS_WEB_IDENTITY_TOKEN_FILE and
 * AWS_ROLE_ARN: STS AssumeRoleWithWebIdentity); the shared files
 * (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, AWS_CONFIG_FILE or
 * ~/.aws/config; profile aws.credentials.profile.name, AWS_PROFILE or
 * default); the container endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
 * or _FULL_URI, with AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE]); instance
 * metadata (IMDSv2, unless AWS_EC2_METADATA_DISABLED=true). Credentials
 * that expire are fetched again five minutes before they do.
 *
 * This lives in src/stream because only the Kinesis source uses it; the
 * credentials chain and the request helper could move to src/io when
 * another AWS client (S3, Glue) wants them.
 *
 * Thread-safety: one client per thread (it owns a curl handle).
 */
#ifndef FLOE_STREAM_AWS_H
#define FLOE_STREAM_AWS_H

#include "util/buf.h"
#include "util/str.h"

typedef struct stream_aws_creds {
	char *akid, *secret, *token; /* token may be NULL */
	int64_t expires_ms;          /* 0: does not expire */
	const char *from;            /* which provider (static text) */
} stream_aws_creds;

void stream_aws_creds_reset(stream_aws_creds *c);

typedef struct stream_aws_opts {
	const char *region;      /* NULL: AWS_REGION, AWS_DEFAULT_REGION, the profile's */
	const char *endpoint;    /* NULL: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, AWS's */
	const char *service;     /* "kinesis" */
	const char *provider;    /* AUTO (NULL), BASIC, ENV_VAR, PROFILE, WEB_IDENTITY_TOKEN,
				    CONTAINER, INSTANCE */
	const char *access_key;  /* BASIC */
	const char *secret_key;
	const char *profile;     /* NULL: AWS_PROFILE, default */
	const char *profile_path; /* the credentials file (NULL: the standard one) */
	int64_t timeout_ms;      /* per request (0: 30 s) */
} stream_aws_opts;

typedef struct stream_aws stream_aws;

int stream_aws_new(stream_aws **out, const stream_aws_opts *o, floe_error *err) FLOE_WUR;
void stream_aws_free(stream_aws *a);
const char *stream_aws_region(const stream_aws *a);
const char *stream_aws_endpoint(const stream_aws *a);

/*
 * POST one JSON-protocol call (target "Kinesis_20131202.GetRecords"): the
 * reply's body in resp (cleared first), its HTTP status in *status. A
 * transport failure is FLOE_EIO marked retryable; an HTTP error status is
 * not an error here (the caller reads the body's __type).
 */
int stream_aws_call(stream_aws *a, const char *target, const char *body, size_t n, floe_buf *resp,
		    long *status, floe_error *err) FLOE_WUR;

/* The error of an AWS JSON error body: its __type without the namespace
 * ("ProvisionedThroughputExceededException") and message (either may be
 * empty). */
void stream_aws_error_of(const uint8_t *body, size_t n, char *type, size_t tcap, char *msg,
			 size_t mcap);

/* ---- pieces, exposed for the tests and the fuzz target ---------------------------------- */

/* key's value in [section] of an INI text (AWS's files): true when found
 * (copied into out, cap bytes, trimmed). */
bool stream_aws_ini_get(const char *text, size_t n, const char *section, const char *key,
			char *out, size_t cap);
/* {"AccessKeyId", "SecretAccessKey", "Token", "Expiration"} (container and
 * instance metadata) into c. */
int stream_aws_creds_from_json(stream_aws_creds *c, const char *p, size_t n, floe_error *err) FLOE_WUR;
/* STS's AssumeRoleWithWebIdentityResponse XML into c. */
int stream_aws_creds_from_sts(stream_aws_creds *c, const char *p, size_t n, floe_error *err) FLOE_WUR;

#endif
