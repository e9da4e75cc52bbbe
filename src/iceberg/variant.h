/*
 * variant.h — the v3 variant type's binary encoding (Parquet
 * VariantEncoding.md: a metadata dictionary of field names and a value with
 * primitives, short strings, objects and arrays), rendered as JSON text.
 *
 * Rendering: objects as {"k":v} in the stored (key-sorted) order, arrays
 * as [..], no spaces; strings JSON-escaped; integers, doubles (shortest
 * round trip) and decimals (unscaled digits with the scale's point) as JSON
 * numbers; dates "YYYY-MM-DD"; timestamps "YYYY-MM-DD HH:MM:SS.fffffffff"
 * (nine digits; with "+00:00" when adjusted to UTC); times "HH:MM:SS.ffffff";
 * binary as base64; uuids in the canonical form; floats as doubles. Every
 * length and offset is checked against the buffers; nesting is bounded.
 */
#ifndef FLOE_ICEBERG_VARIANT_H
#define FLOE_ICEBERG_VARIANT_H

#include "floe/common.h"
#include "util/buf.h"

#define FLOE_VARIANT_MAX_DEPTH 128

/* Append the JSON text of one variant to out. FLOE_ECORRUPT names what is wrong. */
int floe_variant_to_json(floe_buf *out, const uint8_t *metadata, size_t metadata_len,
			 const uint8_t *value, size_t value_len, floe_error *err) FLOE_WUR;

#endif
