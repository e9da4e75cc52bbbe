/*
 * dml_int.h — test hooks of the row-level operations (src/dml/dml.c).
 */
#ifndef FLOE_DML_DML_INT_H
#define FLOE_DML_DML_INT_H

#include "floe/arrow.h"
#include "floe/dml.h"
#include "iceberg/types.h"

/* Called once the files are written and before the commit (tests: a
 * concurrent commit lands here). Not thread-safe; NULL = none. */
extern void (*floe_dml__before_commit)(void *payload);
extern void *floe_dml__before_commit_payload;

/*
 * Parse, type-check and apply one assignment of an update to every row of
 * batch (a struct of s's top-level fields, as floe_iceberg_arrow_schema):
 * the fuzz target of the --set parser. The new rows are dropped. Errors as
 * floe_dml_update's for a bad assignment.
 */
int floe_dml__try_set(const floe_schema *s, const floe_dml_set *set,
		      const struct ArrowArray *batch, floe_error *err) FLOE_WUR;

#endif
