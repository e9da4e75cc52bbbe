/*
 * fuzz_sql.c — the SQL parser on arbitrary text: a script either parses or
 * fails with a message that points at a line and column; nothing may
 * crash, read past the input or leak. A parsed script's statements must
 * have spans inside the text.
 */
#include <stdlib.h>
#include <string.h>

#include "sql/sql_ast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the parser never relies on a NUL: give it an exact-size copy */
	char *text = malloc(size ? size : 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	sql_script *sc = NULL;
	floe_error err = {0};
	int rc = floe_sql__parse(&sc, text, size, "fuzz.sql", &err);
	if (rc) {
		if (rc != FLOE_EINVAL && rc != FLOE_ENOMEM)
			abort();
		if (rc == FLOE_EINVAL && !strstr(err.msg, "line "))
			abort();
	} else {
		for (size_t i = 0; i < sc->n_stmts; i++)
			if (sc->stmts[i]->off > sc->stmts[i]->end || sc->stmts[i]->end > size)
				abort();
	}
	floe_sql__script_free(sc);
	free(text);
	return 0;
}
