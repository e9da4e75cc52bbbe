/*
 * s3.h — the S3 FileIO: s3://, s3a:// and s3n:// paths on Amazon S3 or any
 * S3-compatible server, configured with Iceberg's S3FileIO property names.
 *
 * Properties (all optional; unknown keys are ignored so that one catalog
 * property map can be handed to every component):
 *   s3.endpoint              custom endpoint ("http://127.0.0.1:9000"); else
 *                            AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the shared
 *                            config's endpoint_url, else AWS's for the region
 *   s3.path-style-access     true: https://host/bucket/key; false: virtual
 *                            hosts (default: true with a custom endpoint)
 *   s3.access-key-id, s3.secret-access-key, s3.session-token
 *                            static keys; else the AWS default chain (aws.h)
 *   client.region, s3.region the signing region (else the AWS chain's)
 *   client.profile           the shared-config profile (else AWS_PROFILE)
 *   s3.multipart.part-size-bytes  part size of multipart uploads (>= 5 MiB,
 *                            default 8 MiB): an output holds at most one part
 *   s3.retry.num-retries     retries after the first attempt (default 5)
 *   s3.retry.min-wait-ms, s3.retry.max-wait-ms   backoff caps (100, 10000)
 *   s3.retry.deadline-ms     all attempts of one request (default 120000)
 *   s3.list.max-keys         ListObjectsV2 page size (default 1000)
 *   s3.delete.batch-size     keys per DeleteObjects (1..1000, default 1000)
 *   s3.read-ahead-bytes      smallest ranged GET (default 256 KiB): small
 *                            reads near each other are served from one GET
 *
 * Thread-safety: the FileIO may be used from several threads at once; one
 * input or output from one thread at a time.
 */
#ifndef FLOE_IO_S3_H
#define FLOE_IO_S3_H

#include "io/fileio.h"
#include "util/str.h"

/* A new S3 FileIO. Reads the environment and the AWS shared files now;
 * credentials are asked for on the first request. FLOE_EINVAL for a bad
 * property value. */
int floe_io_s3_new(floe_fileio **out, const floe_strmap *props, floe_error *err) FLOE_WUR;

/* A Content-Range answer "bytes FIRST-LAST/TOTAL" (server input: false for
 * anything else, an unknown total "*", LAST < FIRST or LAST >= TOTAL). */
bool floe_s3__parse_content_range(const char *cr, uint64_t *first, uint64_t *last,
				  uint64_t *total);

/* Split "s3://bucket/key" (s3a, s3n too): bucket and key as arena strings
 * (key may be ""). FLOE_EINVAL when it is not such a path. */
int floe_s3_split(floe_arena *a, const char *uri, char **bucket, char **key,
		  floe_error *err) FLOE_WUR;

#endif
