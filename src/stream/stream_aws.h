/*
 * stream_aws.h — SigV4-signed AWS JSON-protocol calls for the Kinesis
 * source, on floe's one AWS client: the credential chain of io/aws.h (the
 * same for S3, Glue and the REST catalog's signing), the signer of
 * io/sigv4.h (checked against AWS's test vectors) and the HTTP pool of
 * io/http.h.
 *
 * The options are Flink's Kinesis connector's: aws.credentials.provider
 * AUTO runs the standard chain (environment; web identity from
 * AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN through STS
 * AssumeRoleWithWebIdentity; the shared files with the profile
 * aws.credentials.profile.name, AWS_PROFILE or default; the container
 * endpoint; instance metadata, IMDSv2, unless AWS_EC2_METADATA_DISABLED);
 * BASIC, ENV_VAR, PROFILE, WEB_IDENTITY_TOKEN, CONTAINER or INSTANCE asks
 * only that provider. Credentials that expire are fetched again five
 * minutes before they do.
 *
 * Thread-safety: a client may be used from several threads at once.
 */
#ifndef FLOE_STREAM_AWS_H
#define FLOE_STREAM_AWS_H

#include "util/buf.h"
#include "util/str.h"

typedef struct stream_aws_opts {
	const char *region;      /* NULL: AWS_REGION, AWS_DEFAULT_REGION, the profile's */
	const char *endpoint;    /* NULL: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, the
				    profile's, AWS's */
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

/* The client, with its first credentials already fetched (so a pipeline
 * without any fails at its start, naming the chain). */
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

#endif
