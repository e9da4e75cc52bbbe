/*
 * dml_int.h — test hooks of the row-level operations (src/dml/dml.c).
 */
#ifndef FLOE_DML_DML_INT_H
#define FLOE_DML_DML_INT_H

#include "floe/dml.h"

/* Called once the files are written and before the commit (tests: a
 * concurrent commit lands here). Not thread-safe; NULL = none. */
extern void (*floe_dml__before_commit)(void *payload);
extern void *floe_dml__before_commit_payload;

#endif
