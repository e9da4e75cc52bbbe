/*
 * aws_secret.h — AWS Secrets Manager references in configuration values.
 *
 * A value may hold `${secret:NAME}` (the secret's whole SecretString) or
 * `${secret:NAME#field}` (one field of a SecretString that is a JSON
 * object, as RDS and most rotation lambdas store {"username": ...,
 * "password": ...}). NAME is a secret's name or ARN (an ARN's region is
 * the region asked). Inside the authority of a URI ("postgresql://u:
 * ${secret:pg#password}@host/db") the value is percent-encoded, so a
 * password may hold any character; elsewhere it is used as is.
 *
 * DESIGN: each secret is fetched once per process with GetSecretValue
 * (a SigV4-signed JSON 1.1 call with the default credential chain, the
 * endpoint AWS_ENDPOINT_URL_SECRETS_MANAGER or AWS_ENDPOINT_URL as the SDKs
 * read them) and kept in memory for the process's life: a catalog that is
 * reopened per thread, and a maintenance lock opened per run, see the
 * value resolved at start. Secret values never reach a log, an error
 * message or the HTTP log (which records the method, the URL and the
 * status only); buffers that held them are wiped.
 *
 * Thread-safety: all functions may be called from several threads at once.
 */
#ifndef FLOE_IO_AWS_SECRET_H
#define FLOE_IO_AWS_SECRET_H

#include "floe/common.h"

/* Whether s holds a ${secret:...} reference. */
bool floe_secret_has_ref(const char *s);

/*
 * Resolve every ${secret:...} of s. *out: NULL when s holds none (use s as
 * it is), else the expanded string, which the caller releases with
 * floe_secret_free. uri: s is a URI (references in its authority are
 * percent-encoded). Errors name the secret and the field, never a value:
 * FLOE_ENOTFOUND (no such secret, no such field), FLOE_EINVAL (a bad
 * reference, access denied, a field asked of a string that is no JSON
 * object), FLOE_EIO / FLOE_ETIMEDOUT (Secrets Manager unreachable).
 */
int floe_secret_expand(char **out, const char *s, bool uri, floe_error *err) FLOE_WUR;
/* Wipe and free (NULL allowed). */
void floe_secret_free(char *s);

/* ---- parsing, exposed for the unit and fuzz tests ---- */

typedef struct floe_secret_ref {
	const char *name; /* into the parsed text; not NUL-terminated */
	size_t name_len;
	const char *field; /* NULL without "#field" */
	size_t field_len;
	size_t len; /* bytes of the whole "${secret:...}" */
} floe_secret_ref;

/* Parse the reference that starts p[0..n) ("${secret:"). FLOE_EINVAL for a
 * malformed one (unterminated, empty name or field). */
int floe_secret_parse_ref(floe_secret_ref *ref, const char *p, size_t n, floe_error *err) FLOE_WUR;

/* SecretString of a GetSecretValue answer (malloc'd, caller frees with
 * floe_secret_free). FLOE_ECORRUPT for an answer that is not one,
 * FLOE_EUNSUPPORTED for a binary-only secret. `name` is for messages. */
int floe_secret_string(char **out, const char *body, size_t n, const char *name,
		       floe_error *err) FLOE_WUR;
/* One field of a SecretString that is a JSON object (a string, number or
 * boolean, as text). FLOE_ENOTFOUND without the field (the message lists
 * the field names), FLOE_EINVAL when the string is no JSON object. */
int floe_secret_field(char **out, const char *secret, const char *name, const char *field,
		      floe_error *err) FLOE_WUR;

#endif
