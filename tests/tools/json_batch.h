/*
 * json_batch.h — test support: Arrow batches for an Iceberg schema built
 * from JSON rows, as floe_iceberg_arrow_schema lays them out.
 *
 * A row is a JSON object keyed by top-level field names; a missing member
 * or null is a null. Values take Iceberg's JSON single-value forms:
 * numbers for int/long/float/double (also "NaN", "Infinity", "-Infinity"
 * as strings), decimal as a string ("14.20"), date "2017-11-16", time
 * "22:31:08.123456", timestamps "2017-11-16T22:31:08.123456[+00:00]",
 * uuid canonical, fixed/binary hex, struct an object, list an array, map
 * {"keys": [...], "values": [...]} (or, for any key type that parses from
 * a string, a plain object). Unknown-typed fields are always null ("n").
 *
 * Used by the write tests and by tests/tools/write_tool.c. Test code: it
 * allocates through floe's hook because the arrays it makes are released
 * by floe's release callbacks.
 */
#ifndef FLOE_TEST_JSON_BATCH_H
#define FLOE_TEST_JSON_BATCH_H

#include "floe/arrow.h"
#include "iceberg/types.h"
#include "json/json.h"

typedef struct json_batch json_batch;

int json_batch_new(json_batch **out, const floe_schema *s, floe_error *err);
void json_batch_free(json_batch *b);
/* Append one row (an object). FLOE_EINVAL names the field that does not fit. */
int json_batch_append(json_batch *b, const floe_json *row, floe_error *err);
/* Append one row from JSON text. */
int json_batch_append_text(json_batch *b, const char *text, size_t n, floe_error *err);
int64_t json_batch_rows(const json_batch *b);
/* Move the rows appended so far into *out (and the Arrow schema into
 * *schema when not NULL); the builder is empty afterwards. */
int json_batch_finish(json_batch *b, struct ArrowArray *out, struct ArrowSchema *schema,
		      floe_error *err);

#endif
