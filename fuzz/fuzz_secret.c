/*
 * fuzz_secret.c — what the Secrets Manager references read: a
 * ${secret:NAME#field} reference (config text), a GetSecretValue answer
 * (network) and the SecretString's JSON (the secret's owner). A parsed
 * reference must lie inside its input; a value is a NUL-terminated copy.
 */
#include <stdlib.h>
#include <string.h>

#include "io/aws_secret.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	floe_secret_ref ref;
	if (!floe_secret_parse_ref(&ref, p, size, NULL)) {
		if (ref.len > size || ref.name < p || ref.name + ref.name_len > p + size ||
		    (ref.field && ref.field + ref.field_len > p + size) || ref.name_len == 0)
			abort();
	}
	char *s = NULL, *f = NULL;
	if (!floe_secret_string(&s, p, size, "fuzz", NULL)) {
		if (!s)
			abort();
		if (!floe_secret_field(&f, s, "fuzz", "password", NULL) && !f)
			abort();
		floe_secret_free(f);
		floe_secret_free(s);
	}
	/* the SecretString itself as a JSON object (needs a NUL-terminated copy) */
	char *t = floe_malloc(size + 1);
	if (t) {
		memcpy(t, p, size);
		t[size] = 0;
		f = NULL;
		if (!floe_secret_field(&f, t, "fuzz", "password", NULL) && !f)
			abort();
		floe_secret_free(f);
		floe_free(t);
	}
	return 0;
}
