/*
 * glue.h — the AWS Glue Data Catalog (glue.c).
 *
 * Properties (Java's GlueCatalog names): glue.endpoint (else the catalog
 * uri, AWS_ENDPOINT_URL_GLUE, AWS_ENDPOINT_URL, the profile's, AWS's for the
 * region), glue.region / client.region, glue.id (the catalog id, default the
 * account's), glue.access-key-id / glue.secret-access-key / glue.session-token
 * (else the AWS chain), glue.skip-archive (default true),
 * glue.skip-name-validation (default false); the S3 FileIO's (io/s3.h).
 *
 * Thread-safety: as every catalog (one thread at a time).
 */
#ifndef FLOE_CATALOG_GLUE_H
#define FLOE_CATALOG_GLUE_H

#include "catalog/catalog_impl.h"

typedef struct floe_glue_catalog_opts {
	int version;
	const char *name;
	const char *uri;       /* a Glue endpoint; may be NULL */
	const char *warehouse; /* root of new tables: <warehouse>/<db>.db/<table> */
	const floe_strmap *props;
	floe_fileio *io; /* taken over (NULL: the default FileIO with the S3 settings) */
} floe_glue_catalog_opts;
#define FLOE_GLUE_CATALOG_OPTS_INIT {1, NULL, NULL, NULL, NULL, NULL}

int floe_glue_catalog_open(floe_catalog **out, const floe_glue_catalog_opts *opts,
			   floe_error *err) FLOE_WUR;

#endif
