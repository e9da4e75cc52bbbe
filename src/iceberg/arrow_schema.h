/*
 * arrow_schema.h — the Arrow and Parquet shapes of an Iceberg schema.
 *
 * Arrow (the batches floe passes between components): boolean "b", int "i",
 * long "l", float "f", double "g", decimal(P,S) "d:P,S", date "tdD", time
 * "ttu", timestamp "tsu:", timestamptz "tsu:UTC", timestamp_ns "tsn:",
 * timestamptz_ns "tsn:UTC", string "u", uuid "w:16" with extension name
 * arrow.uuid, fixed[L] "w:L", binary "z", struct "+s", list "+l" (child
 * "element"), map "+m" (child "entries" struct of "key", "value"); every
 * field carries "PARQUET:field_id" metadata (pyarrow's convention); optional
 * fields are nullable.
 *
 * Parquet (what floe writes, as Java does): ../shared/iceberg-notes.md
 * section 8.3 — ids on every node, 3-level lists and maps, decimal as
 * INT32/INT64/FIXED by precision, uuid FIXED(16) + UUID, timestamps
 * INT64 micros/nanos with isAdjustedToUTC, root message "table".
 */
#ifndef FLOE_ICEBERG_ARROW_SCHEMA_H
#define FLOE_ICEBERG_ARROW_SCHEMA_H

#include "floe/arrow.h"
#include "iceberg/types.h"
#include "parquet/schema.h"

/* Arrow schema (a "+s" struct of the top-level fields); caller releases. */
int floe_iceberg_arrow_schema(struct ArrowSchema *out, const floe_schema *s,
			      floe_error *err) FLOE_WUR;
/* Arrow schema of one field (name given). */
int floe_iceberg_arrow_field(struct ArrowSchema *out, const char *name, int32_t id,
			     const floe_type *t, bool required, floe_error *err) FLOE_WUR;
/* The Arrow format string of a primitive type ("d:10,2", "tsu:UTC", ...). */
/* As floe_iceberg_arrow_field, for what a scan hands out: a variant is a
 * string holding its JSON text (iceberg/variant.h). */
int floe_iceberg_arrow_field_read(struct ArrowSchema *out, const char *name, int32_t id,
				  const floe_type *t, bool required, floe_error *err) FLOE_WUR;
int floe_iceberg_arrow_format(char *out, size_t cap, const floe_type *t);

/* Is a field of this type written to Parquet? Not for unknown (spec), nor
 * for a struct none of whose fields is written. The Arrow batch still holds
 * such fields positionally; writers skip them. */
bool floe_iceberg_type_written(const floe_type *t);

/* Parquet schema for writing (caller frees with floe_parquet_schema_free).
 * FLOE_EUNSUPPORTED for types floe does not write yet (variant, geo). */
int floe_iceberg_parquet_schema(floe_parquet_schema **out, const floe_schema *s,
				floe_error *err) FLOE_WUR;

#endif
