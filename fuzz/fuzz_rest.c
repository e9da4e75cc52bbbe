/*
 * fuzz_rest.c — the REST catalog client's reading of server answers
 * (catalog/rest.h floe_rest__parse): the first byte picks the kind of
 * answer (load table with its vended credentials, namespaces, tables,
 * config with its endpoints, error, token, loadCredentials), the rest is
 * the body; 'l'..'r' pick them in that order, as the corpus does. It parses or refuses; it
 * never crashes or leaks.
 */
#include <stdlib.h>
#include <string.h>

#include "catalog/rest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const kinds[] = {"load",  "namespaces", "tables",     "config",
					    "error", "token",	   "credentials"};
	if (size < 1 || size > (4u << 20))
		return 0;
	floe_error err;
	floe_error_clear(&err);
	const char *kind = kinds[(uint8_t)(data[0] - 'l') % 7];
	(void)!floe_rest__parse(kind, (const char *)data + 1, size - 1, &err);
	if (err.msg[FLOE_ERROR_MSG_MAX - 1] != 0)
		abort();
	return 0;
}
