/*
 * meta.h — the Parquet footer model (FileMetaData and everything below it)
 * and page headers, with parsers from and serialisers to the Thrift compact
 * encoding.
 *
 * spec: parquet-format src/main/thrift/parquet.thrift. Field names follow
 * the Thrift definitions; an optional field has a has_<name> flag (or a NULL
 * pointer / kind NONE), a required one is checked on parse.
 *
 * Ownership: a parsed FileMetaData and everything it points to live in the
 * arena given to the parser (strings are copied: the input buffer may be
 * freed afterwards). Page headers are parsed without an arena; their
 * statistics borrow from the input bytes.
 *
 * Untrusted input: counts and lengths come through the bounded Thrift reader
 * (thrift.h); enum values are range-checked where floe acts on them; errors
 * are FLOE_ECORRUPT and name the input ("'x.parquet' footer at offset 812:
 * ...").
 */
#ifndef FLOE_PARQUET_META_H
#define FLOE_PARQUET_META_H

#include "floe/common.h"
#include "util/alloc.h"
#include "util/buf.h"

/* Physical types (Thrift enum Type). */
enum {
	FLOE_PARQUET_BOOLEAN = 0,
	FLOE_PARQUET_INT32 = 1,
	FLOE_PARQUET_INT64 = 2,
	FLOE_PARQUET_INT96 = 3,
	FLOE_PARQUET_FLOAT = 4,
	FLOE_PARQUET_DOUBLE = 5,
	FLOE_PARQUET_BYTE_ARRAY = 6,
	FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY = 7,
};

/* ConvertedType (FLOE_PARQUET_CT_NONE when absent). */
enum {
	FLOE_PARQUET_CT_NONE = -1,
	FLOE_PARQUET_CT_UTF8 = 0,
	FLOE_PARQUET_CT_MAP = 1,
	FLOE_PARQUET_CT_MAP_KEY_VALUE = 2,
	FLOE_PARQUET_CT_LIST = 3,
	FLOE_PARQUET_CT_ENUM = 4,
	FLOE_PARQUET_CT_DECIMAL = 5,
	FLOE_PARQUET_CT_DATE = 6,
	FLOE_PARQUET_CT_TIME_MILLIS = 7,
	FLOE_PARQUET_CT_TIME_MICROS = 8,
	FLOE_PARQUET_CT_TIMESTAMP_MILLIS = 9,
	FLOE_PARQUET_CT_TIMESTAMP_MICROS = 10,
	FLOE_PARQUET_CT_UINT_8 = 11,
	FLOE_PARQUET_CT_UINT_16 = 12,
	FLOE_PARQUET_CT_UINT_32 = 13,
	FLOE_PARQUET_CT_UINT_64 = 14,
	FLOE_PARQUET_CT_INT_8 = 15,
	FLOE_PARQUET_CT_INT_16 = 16,
	FLOE_PARQUET_CT_INT_32 = 17,
	FLOE_PARQUET_CT_INT_64 = 18,
	FLOE_PARQUET_CT_JSON = 19,
	FLOE_PARQUET_CT_BSON = 20,
	FLOE_PARQUET_CT_INTERVAL = 21,
};

/* FieldRepetitionType. */
enum {
	FLOE_PARQUET_REQUIRED = 0,
	FLOE_PARQUET_OPTIONAL = 1,
	FLOE_PARQUET_REPEATED = 2,
};

/* Encoding. */
enum {
	FLOE_PARQUET_ENC_PLAIN = 0,
	FLOE_PARQUET_ENC_PLAIN_DICTIONARY = 2,
	FLOE_PARQUET_ENC_RLE = 3,
	FLOE_PARQUET_ENC_BIT_PACKED = 4,
	FLOE_PARQUET_ENC_DELTA_BINARY_PACKED = 5,
	FLOE_PARQUET_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
	FLOE_PARQUET_ENC_DELTA_BYTE_ARRAY = 7,
	FLOE_PARQUET_ENC_RLE_DICTIONARY = 8,
	FLOE_PARQUET_ENC_BYTE_STREAM_SPLIT = 9,
};

/* CompressionCodec. */
enum {
	FLOE_PARQUET_UNCOMPRESSED = 0,
	FLOE_PARQUET_SNAPPY = 1,
	FLOE_PARQUET_GZIP = 2,
	FLOE_PARQUET_LZO = 3,
	FLOE_PARQUET_BROTLI = 4,
	FLOE_PARQUET_LZ4 = 5,
	FLOE_PARQUET_ZSTD = 6,
	FLOE_PARQUET_LZ4_RAW = 7,
};

/* PageType. */
enum {
	FLOE_PARQUET_DATA_PAGE = 0,
	FLOE_PARQUET_INDEX_PAGE = 1,
	FLOE_PARQUET_DICTIONARY_PAGE = 2,
	FLOE_PARQUET_DATA_PAGE_V2 = 3,
};

/* LogicalType union members (the Thrift field ids). */
enum {
	FLOE_PARQUET_LT_NONE = 0,
	FLOE_PARQUET_LT_STRING = 1,
	FLOE_PARQUET_LT_MAP = 2,
	FLOE_PARQUET_LT_LIST = 3,
	FLOE_PARQUET_LT_ENUM = 4,
	FLOE_PARQUET_LT_DECIMAL = 5,
	FLOE_PARQUET_LT_DATE = 6,
	FLOE_PARQUET_LT_TIME = 7,
	FLOE_PARQUET_LT_TIMESTAMP = 8,
	FLOE_PARQUET_LT_INTEGER = 10,
	FLOE_PARQUET_LT_UNKNOWN = 11, /* the NullType: only nulls */
	FLOE_PARQUET_LT_JSON = 12,
	FLOE_PARQUET_LT_BSON = 13,
	FLOE_PARQUET_LT_UUID = 14,
	FLOE_PARQUET_LT_FLOAT16 = 15,
	FLOE_PARQUET_LT_VARIANT = 16,
	FLOE_PARQUET_LT_GEOMETRY = 17,
	FLOE_PARQUET_LT_GEOGRAPHY = 18,
	FLOE_PARQUET_LT_OTHER = 1000, /* a member this version does not know */
};

/* TimeUnit. */
enum {
	FLOE_PARQUET_MILLIS = 0,
	FLOE_PARQUET_MICROS = 1,
	FLOE_PARQUET_NANOS = 2,
};

typedef struct floe_parquet_logical {
	int kind;          /* FLOE_PARQUET_LT_* */
	int32_t scale;     /* DECIMAL */
	int32_t precision; /* DECIMAL */
	int unit;          /* TIME, TIMESTAMP */
	bool utc;          /* TIME, TIMESTAMP: isAdjustedToUTC */
	int8_t bit_width;  /* INTEGER */
	bool is_signed;    /* INTEGER */
	const char *crs;   /* GEOMETRY, GEOGRAPHY (may be NULL) */
	int algorithm;     /* GEOGRAPHY (-1 absent) */
} floe_parquet_logical;

typedef struct floe_parquet_bytes {
	const uint8_t *p;
	size_t n;
} floe_parquet_bytes;

typedef struct floe_parquet_stats {
	bool has_max, has_min, has_null_count, has_distinct_count;
	bool has_max_value, has_min_value, has_is_max_value_exact, has_is_min_value_exact;
	bool has_nan_count;
	floe_parquet_bytes max, min; /* deprecated, signed order */
	int64_t null_count;
	int64_t distinct_count;
	floe_parquet_bytes max_value, min_value;
	bool is_max_value_exact, is_min_value_exact;
	int64_t nan_count;
} floe_parquet_stats;

typedef struct floe_parquet_kv {
	const char *key;
	const char *value; /* NULL when absent */
	size_t value_len;
} floe_parquet_kv;

typedef struct floe_parquet_schema_elem {
	const char *name;
	int type; /* -1 absent (a group) */
	int32_t type_length;
	bool has_type_length;
	int repetition; /* -1 absent (the root) */
	int32_t num_children;
	bool has_num_children;
	int converted; /* FLOE_PARQUET_CT_NONE when absent */
	int32_t scale, precision;
	bool has_scale, has_precision;
	int32_t field_id;
	bool has_field_id;
	floe_parquet_logical logical;
} floe_parquet_schema_elem;

typedef struct floe_parquet_page_enc_stats {
	int page_type;
	int encoding;
	int32_t count;
} floe_parquet_page_enc_stats;

typedef struct floe_parquet_column_meta {
	int type;
	int *encodings;
	size_t n_encodings;
	const char **path;
	size_t path_len;
	int codec;
	int64_t num_values;
	int64_t total_uncompressed_size;
	int64_t total_compressed_size;
	floe_parquet_kv *kv;
	size_t n_kv;
	int64_t data_page_offset;
	bool has_index_page_offset, has_dictionary_page_offset, has_statistics;
	int64_t index_page_offset;
	int64_t dictionary_page_offset;
	floe_parquet_stats statistics;
	floe_parquet_page_enc_stats *encoding_stats;
	size_t n_encoding_stats;
	bool has_encoding_stats;
	bool has_bloom_filter_offset, has_bloom_filter_length;
	int64_t bloom_filter_offset;
	int32_t bloom_filter_length;
} floe_parquet_column_meta;

typedef struct floe_parquet_column_chunk {
	const char *file_path; /* NULL when absent */
	int64_t file_offset;
	bool has_meta_data;
	floe_parquet_column_meta meta_data;
	bool has_offset_index, has_column_index;
	int64_t offset_index_offset;
	int32_t offset_index_length;
	int64_t column_index_offset;
	int32_t column_index_length;
	bool encrypted; /* crypto_metadata or encrypted_column_metadata present */
} floe_parquet_column_chunk;

typedef struct floe_parquet_sorting_column {
	int32_t column_idx;
	bool descending;
	bool nulls_first;
} floe_parquet_sorting_column;

typedef struct floe_parquet_row_group {
	floe_parquet_column_chunk *columns;
	size_t n_columns;
	int64_t total_byte_size;
	int64_t num_rows;
	floe_parquet_sorting_column *sorting_columns;
	size_t n_sorting_columns;
	bool has_file_offset, has_total_compressed_size, has_ordinal;
	int64_t file_offset;
	int64_t total_compressed_size;
	int16_t ordinal;
} floe_parquet_row_group;

/* ColumnOrder union: the member's field id (1 = TYPE_ORDER), 0 unknown. */
enum {
	FLOE_PARQUET_ORDER_UNKNOWN = 0,
	FLOE_PARQUET_ORDER_TYPE_DEFINED = 1,
	FLOE_PARQUET_ORDER_IEEE754_TOTAL = 2,
};

typedef struct floe_parquet_file_meta {
	int32_t version;
	floe_parquet_schema_elem *schema;
	size_t n_schema;
	int64_t num_rows;
	floe_parquet_row_group *row_groups;
	size_t n_row_groups;
	floe_parquet_kv *kv;
	size_t n_kv;
	const char *created_by; /* NULL when absent */
	int *column_orders;
	size_t n_column_orders;
	bool encrypted; /* encryption_algorithm present (signed plaintext footer) */
} floe_parquet_file_meta;

typedef struct floe_parquet_page_header {
	int type;
	int32_t uncompressed_page_size;
	int32_t compressed_page_size;
	bool has_crc;
	int32_t crc;
	bool has_data_page_header, has_dictionary_page_header, has_data_page_header_v2;
	struct {
		int32_t num_values;
		int encoding;
		int definition_level_encoding;
		int repetition_level_encoding;
		bool has_statistics;
		floe_parquet_stats statistics;
	} data_page_header;
	struct {
		int32_t num_values;
		int encoding;
		bool has_is_sorted;
		bool is_sorted;
	} dictionary_page_header;
	struct {
		int32_t num_values;
		int32_t num_nulls;
		int32_t num_rows;
		int encoding;
		int32_t definition_levels_byte_length;
		int32_t repetition_levels_byte_length;
		bool is_compressed; /* default true */
		bool has_statistics;
		floe_parquet_stats statistics;
	} data_page_header_v2;
} floe_parquet_page_header;

/*
 * Parse a footer (the Thrift FileMetaData bytes, without length and magic).
 * name is the input's name for messages. *out and all it points to are
 * allocated from arena. FLOE_ECORRUPT on malformed input, FLOE_ENOMEM.
 */
int floe_parquet_meta_parse(floe_parquet_file_meta **out, floe_arena *arena, const uint8_t *p,
			    size_t n, const char *name, floe_error *err) FLOE_WUR;

/* Serialise a FileMetaData (Thrift compact) by appending to out. */
int floe_parquet_meta_write(floe_buf *out, const floe_parquet_file_meta *m,
			    floe_error *err) FLOE_WUR;

/*
 * Parse one page header from p (at most n bytes); *used receives its encoded
 * size. Statistics borrow from p. what names the page in messages ("'x'
 * column a.b page 3"). FLOE_ECORRUPT when malformed or a required field is
 * missing.
 */
int floe_parquet_page_header_parse(floe_parquet_page_header *h, const uint8_t *p, size_t n,
				   size_t *used, const char *what, floe_error *err) FLOE_WUR;

int floe_parquet_page_header_write(floe_buf *out, const floe_parquet_page_header *h,
				   floe_error *err) FLOE_WUR;

/* Names for messages and tools ("INT32", "SNAPPY", "RLE_DICTIONARY"...). */
const char *floe_parquet_type_name(int type);
const char *floe_parquet_encoding_name(int enc);
const char *floe_parquet_codec_name(int codec);
const char *floe_parquet_page_type_name(int type);
const char *floe_parquet_converted_name(int ct);
const char *floe_parquet_repetition_name(int rep);

/* Default logical type from a legacy converted type (kind NONE if none). */
void floe_parquet_logical_from_converted(floe_parquet_logical *lt, int converted, int32_t scale,
					 int32_t precision);

#endif
