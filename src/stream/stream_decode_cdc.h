/*
 * stream_decode_cdc.h — change records: Debezium JSON (Flink's
 * `debezium-json` format) and plain records whose kind is in a column
 * (Paimon's `rowkind.field`: Flink's row kinds +I, -U, +U, -D or the words
 * insert / update / delete). Each change becomes rows of the table's
 * columns (stream_builder.h) with a kind per row (floe_row_kind), for the
 * delta writer (src/write).
 *
 * Debezium (https://debezium.io/documentation/reference/connectors/,
 * "change event values"): a record is {"before": {...}|null, "after":
 * {...}|null, "source": {..., "ts_ms": N}, "op": "c"|"r"|"u"|"d", ...},
 * optionally wrapped in Kafka Connect's JSON envelope {"schema": {...},
 * "payload": {...}} (value.converter.schemas.enable=true; Flink's
 * `debezium-json.schema-include`). c and r (snapshot read) insert the
 * `after` image, u gives -U (`before`, only outside upsert mode: Flink's
 * upsert sink does not need it) and +U (`after`), d deletes the `before`
 * image. A `null` record (a Kafka tombstone) or a null payload is no change.
 * Unknown ops (t: truncate, m: message, anything else) are refused.
 *
 * Every change row is checked against the key: the equality columns must
 * be present and not null ("a change record without its key"), and rows
 * that carry whole rows (inserts, updates, and deletes outside upsert
 * mode) must hold every required column — the table type is decoded with
 * its top-level columns optional, so that an upsert delete may carry the
 * key alone.
 *
 * Thread-safety: a decoder belongs to one thread.
 */
#ifndef FLOE_STREAM_DECODE_CDC_H
#define FLOE_STREAM_DECODE_CDC_H

#include "stream/stream_decode.h"

/* What the decoder knows of the table (top-level field positions). */
typedef struct stream_cdc_plan {
	bool upsert;          /* -U rows are not produced; deletes need only the key */
	bool schema_include;  /* Debezium: the {"schema","payload"} envelope is required */
	const int32_t *keys;  /* key columns */
	size_t n_keys;
	const int32_t *required; /* columns a whole row must hold */
	size_t n_required;
	int32_t ts_field;     /* column receiving source.ts_ms (-1: none) */
	int32_t kind_field;   /* rowkind: the column holding the kind (-1: none) */
} stream_cdc_plan;

typedef struct stream_cdc_dec {
	const stream_cdc_plan *plan;
	stream_json_dec *json; /* decodes the before/after images (borrowed) */
	stream_reason why;
} stream_cdc_dec;

/*
 * Parse a row kind: "+I", "-U", "+U", "-D" (Flink's RowKind short strings),
 * "I", "U", "D", or the words insert, update (= update_after), update_before,
 * update_after, upsert (= insert), delete — ASCII case-insensitive, spaces
 * around ignored. false for anything else.
 */
bool stream_cdc_parse_kind(const char *s, size_t n, uint8_t *kind);

/*
 * Decode one Debezium record p[0..n) into root: 0, 1 or 2 rows are
 * appended (kinds[0..*n_rows)). FLOE_EINVAL when the record is not a
 * change this table can take (columns rolled back, d->why says why);
 * FLOE_ENOMEM.
 */
int stream_cdc_decode_debezium(stream_cdc_dec *d, stream_col *root, const char *p, size_t n,
			       uint8_t kinds[2], int *n_rows) FLOE_WUR;

/*
 * The kind of row `row` of a plain record decoded into root (the plan's
 * kind_field column), with the key and required-column checks. FLOE_EINVAL
 * with d->why for a missing or unknown kind or a row without its key (the
 * caller rolls the row back).
 */
int stream_cdc_row_kind(stream_cdc_dec *d, const stream_col *root, int64_t row, uint8_t *kind)
	FLOE_WUR;

/* The key and required-column checks of row `row` of kind `kind` (a row
 * of plain upserts is an insert). FLOE_EINVAL with d->why. */
int stream_cdc_check_row(stream_cdc_dec *d, const stream_col *root, int64_t row, uint8_t kind)
	FLOE_WUR;

/*
 * Decode a record's key p[0..n) (a JSON object whose members are key
 * columns, optionally in Kafka Connect's {"schema", "payload"} envelope, as
 * Debezium keys are) as one row of root: the key columns set, the others
 * null. For an upsert's tombstone (a delete by key). 0; FLOE_EINVAL with
 * d->why (root as before); FLOE_ENOMEM.
 */
int stream_cdc_decode_key(stream_cdc_dec *d, stream_col *root, const char *p, size_t n) FLOE_WUR;

#endif
