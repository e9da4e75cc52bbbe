/*
 * manifest_schema.h — the Avro schemas of manifests and manifest lists, as
 * Java's writer produces them (field order, ids, record names, unions), and
 * the mapping of Iceberg types to Avro.
 *
 * Internal to src/iceberg.
 */
#ifndef FLOE_ICEBERG_MANIFEST_SCHEMA_H
#define FLOE_ICEBERG_MANIFEST_SCHEMA_H

#include "avro/avro_datum.h"
#include "avro/avro_schema.h"
#include "iceberg/manifest.h"

/* data_file (r2) field slots, in the order of the reader schema. */
enum {
	DF_CONTENT,
	DF_FILE_PATH,
	DF_FILE_FORMAT,
	DF_PARTITION,
	DF_RECORD_COUNT,
	DF_FILE_SIZE,
	DF_BLOCK_SIZE,
	DF_COLUMN_SIZES,
	DF_VALUE_COUNTS,
	DF_NULL_COUNTS,
	DF_NAN_COUNTS,
	DF_LOWER_BOUNDS,
	DF_UPPER_BOUNDS,
	DF_KEY_METADATA,
	DF_SPLIT_OFFSETS,
	DF_EQUALITY_IDS,
	DF_SORT_ORDER_ID,
	DF_FIRST_ROW_ID,
	DF_REFERENCED_DATA_FILE,
	DF_CONTENT_OFFSET,
	DF_CONTENT_SIZE,
	DF_COUNT
};

/* manifest_entry slots */
enum { ME_STATUS, ME_SNAPSHOT_ID, ME_SEQUENCE_NUMBER, ME_FILE_SEQUENCE_NUMBER, ME_DATA_FILE, ME_COUNT };

/* manifest_file (list entry) slots */
enum {
	MF_PATH,
	MF_LENGTH,
	MF_SPEC_ID,
	MF_CONTENT,
	MF_SEQUENCE_NUMBER,
	MF_MIN_SEQUENCE_NUMBER,
	MF_ADDED_SNAPSHOT_ID,
	MF_ADDED_FILES,
	MF_EXISTING_FILES,
	MF_DELETED_FILES,
	MF_ADDED_ROWS,
	MF_EXISTING_ROWS,
	MF_DELETED_ROWS,
	MF_PARTITIONS,
	MF_KEY_METADATA,
	MF_FIRST_ROW_ID,
	MF_COUNT
};

/* Avro schema for an Iceberg primitive type (named types cached per arena
 * through *cache so each is defined once). NULL on ENOMEM/unsupported. */
typedef struct avro_named_cache {
	floe_avro_schema *nodes[64];
	size_t n;
} avro_named_cache;

floe_avro_schema *floe_iceberg__avro_type(floe_arena *a, const floe_type *t,
					  avro_named_cache *cache);

/* Avro-valid name for an Iceberg name (Java's sanitisation: leading digit ->
 * "_d", other invalid chars -> "_xHH"); the input itself when already valid. */
const char *floe_iceberg__avro_name(floe_arena *a, const char *name);

/* The partition record r102 for a spec (result types from schema). */
floe_avro_schema *floe_iceberg__partition_record(floe_arena *a, const floe_partition_spec *spec,
						 const floe_schema *schema, avro_named_cache *cache,
						 floe_error *err);

/* Writer schema of manifest_entry for format version fv. */
floe_avro_schema *floe_iceberg__entry_schema(floe_arena *a, int fv, floe_avro_schema *partition);
/* Reader schema (superset, all optional) with the given partition record. */
floe_avro_schema *floe_iceberg__entry_reader_schema(floe_arena *a, floe_avro_schema *partition);

/* Writer schema of manifest_file for format version fv; the reader schema. */
floe_avro_schema *floe_iceberg__list_schema(floe_arena *a, int fv);
floe_avro_schema *floe_iceberg__list_reader_schema(floe_arena *a);

/* Convert a decoded Avro value to an Iceberg value of type t (t may be NULL:
 * then the Avro type and logical type decide). Strings and bytes are copied
 * into arena a. */
int floe_iceberg__value_from_avro(floe_value *out, floe_arena *a, const floe_type *t,
				  const floe_avro_schema *s, const floe_avro_value *v,
				  floe_error *err);
/* Encode an Iceberg value as the non-null branch type of schema s. */
int floe_iceberg__value_to_avro(floe_buf *b, const floe_value *v, const floe_type *t,
				floe_error *err);

/* minBytes(P): the fixed size Java uses for decimal(P, S). */
size_t floe_decimal_fixed_size(int32_t precision);

#endif
