/*
 * sigv4.h — AWS Signature Version 4 (header form), SHA-256 and HMAC-SHA-256.
 *
 * The signer takes a request as it goes on the wire (path and query already
 * percent-encoded the AWS way) and the headers to sign, and produces the
 * Authorization header value. It is checked against AWS's published SigV4
 * test suite and S3 examples (tests/unit/test_s3.c). Used by the S3 FileIO
 * and by the REST catalog's request signing (rest.sigv4-enabled).
 *
 * Thread-safety: stateless.
 */
#ifndef FLOE_IO_SIGV4_H
#define FLOE_IO_SIGV4_H

#include "floe/common.h"
#include "util/buf.h"

typedef struct floe_sigv4_header {
	const char *name;
	const char *value;
} floe_sigv4_header;

typedef struct floe_sigv4_req {
	const char *method;
	const char *path;  /* as on the wire, percent-encoded ("/" when empty) */
	const char *query; /* as on the wire without '?', "" or NULL when none */
	const floe_sigv4_header *headers; /* every header to sign, host included */
	size_t n_headers;
	const char *payload_hash; /* hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
	const char *region;
	const char *service; /* "s3", "glue", "s3tables", "execute-api", ... */
	const char *amz_date; /* "YYYYMMDDTHHMMSSZ", also sent as x-amz-date */
	/* S3 signs the path as sent; every other service signs it encoded
	 * once more (the AWS SDKs' double encoding). */
	bool s3;
} floe_sigv4_req;

/* Authorization header value into out (appended). FLOE_EINVAL for a request
 * it cannot sign (no region, a header value with a newline). */
int floe_sigv4_sign(floe_buf *out, const floe_sigv4_req *r, const char *access_key,
		    const char *secret_key, floe_error *err) FLOE_WUR;
/* The canonical request (tests and debugging). */
int floe_sigv4_canonical(floe_buf *out, floe_buf *signed_headers, const floe_sigv4_req *r,
			 floe_error *err) FLOE_WUR;

/* "YYYYMMDDTHHMMSSZ" for an epoch second. */
void floe_amz_date(char out[17], int64_t epoch_s);

void floe_sha256(uint8_t out[32], const void *p, size_t n);
void floe_sha256_hex(char out[65], const void *p, size_t n);
void floe_hmac_sha256(uint8_t out[32], const void *key, size_t key_len, const void *p, size_t n);

/* AWS's URI encoding (RFC 3986 unreserved kept, the rest %XX upper case);
 * keep_slash for object keys in paths. */
int floe_aws_uri_encode(floe_buf *out, const char *s, size_t n, bool keep_slash) FLOE_WUR;

#endif
