/*
 * rest.h — the Iceberg REST catalog client (rest.c).
 *
 * Properties (Java's RESTCatalog names): token (a bearer token), credential
 * ("client_id:client_secret" for OAuth2 client credentials), oauth2-server-uri
 * (default <uri>/v1/oauth/tokens), scope (default "catalog"), prefix (else the
 * server's), warehouse, header.<name>, rest.sigv4-enabled, rest.signing-name
 * ("glue", "s3tables", default "execute-api"), rest.signing-region,
 * rest.access-key-id / rest.secret-access-key / rest.session-token (else the
 * AWS chain), rest.retry.num-retries, rest.request-timeout-ms; and the S3
 * FileIO's (io/s3.h), which the server's config may also give. Calls are
 * limited to the config's endpoints list (else the spec's default set); vended
 * credentials are renewed through loadCredentials when it is listed.
 *
 * Thread-safety: as every catalog (one thread at a time).
 */
#ifndef FLOE_CATALOG_REST_H
#define FLOE_CATALOG_REST_H

#include "catalog/catalog_impl.h"

typedef struct floe_rest_catalog_opts {
	int version;
	const char *name;
	const char *uri;       /* http(s)://host[:port][/path] */
	const char *warehouse; /* sent to GET /v1/config; may be NULL */
	const floe_strmap *props;
	floe_fileio *io; /* taken over (NULL: the default FileIO with the catalog's S3 settings) */
} floe_rest_catalog_opts;
#define FLOE_REST_CATALOG_OPTS_INIT {1, NULL, NULL, NULL, NULL, NULL}

/* Opens and asks the server's config (FLOE_EIO/ETIMEDOUT when it cannot be
 * reached, FLOE_EINVAL for a refused credential). */
int floe_rest_catalog_open(floe_catalog **out, const floe_rest_catalog_opts *opts,
			   floe_error *err) FLOE_WUR;

/*
 * Tests and fuzzing: read a server's answer p[0..n) the way the client does.
 * kind: "load" (LoadTableResult / CommitTableResponse), "credentials"
 * (LoadCredentialsResponse), "namespaces" (ListNamespacesResponse), "tables"
 * (ListTablesResponse), "config" (CatalogConfig, with its endpoints), "error"
 * (ErrorModel; its text goes to err), "token" (OAuthTokenResponse). The
 * vended credentials of "load" and "credentials" go to an S3 FileIO.
 * FLOE_ECORRUPT for an answer the client refuses.
 */
int floe_rest__parse(const char *kind, const char *p, size_t n, floe_error *err) FLOE_WUR;
/* The CommitTableRequest body for base -> next (base NULL: a create). */
int floe_rest__commit_body(floe_buf *out, const char *ns, const char *name,
			   const floe_metadata *base, const floe_metadata *next,
			   floe_error *err) FLOE_WUR;

#endif
