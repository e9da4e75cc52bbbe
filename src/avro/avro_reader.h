/*
 * avro/avro_reader.h — reading Avro object container files.
 *
 * spec: Avro 1.12 "Object Container Files": magic "Obj\x01", a metadata map
 * (string -> bytes; "avro.schema", "avro.codec", and the writer's own keys,
 * e.g. Iceberg's "format-version", "partition-spec", "schema", "content"),
 * a 16-byte sync marker, then blocks of (long count, long size, data, sync).
 *
 * The reader reads its floe_input in bounded pieces (the header, then one
 * block at a time); it never needs the whole file in memory. Codecs: null,
 * deflate (raw RFC 1951), snappy (block + big-endian CRC-32 of the
 * uncompressed data, verified), zstandard. bzip2 and xz fail with
 * FLOE_EUNSUPPORTED naming the codec.
 *
 * Two ways to read records:
 *  - floe_avro_reader_next(): one generic value at a time; values live in the
 *    reader's own arena and are valid until the next call;
 *  - floe_avro_reader_next_block() + floe_avro_decode() with the reader's
 *    decoder and a caller arena reset per block (the fastest way; strings
 *    point into the block, valid until the next block is read).
 * Do not mix the two on one reader.
 *
 * Errors name the input and the place: "m0.avro: block 3 at offset 1234:
 * record 7: field 'data_file': at offset 88: bad long". FLOE_ECORRUPT for
 * malformed files, FLOE_EUNSUPPORTED for codecs floe lacks, FLOE_EIO from
 * the input, FLOE_ENOMEM.
 *
 * Thread-safety: a reader is single-threaded; its writer schema is immutable
 * and may be shared while the reader lives.
 */
#ifndef FLOE_AVRO_READER_H
#define FLOE_AVRO_READER_H

#include "avro/avro_datum.h"
#include "avro/avro_schema.h"
#include "codec/codec.h"
#include "util/stream.h"

typedef struct floe_avro_reader floe_avro_reader;

typedef struct floe_avro_reader_opts {
	int version;              /* 1 */
	size_t max_header;        /* header bytes (metadata + schema); default 16 MiB */
	size_t max_block_bytes;   /* compressed and uncompressed block size; default 256 MiB */
	int64_t max_block_count;  /* records in one block; default 2^31 - 1 */
	size_t read_chunk;        /* bytes read ahead at a time; default 64 KiB */
	floe_avro_decoder_opts decoder;
	/* parsed writer schemas shared by the readers given it (NULL: none) */
	struct floe_avro_schema_cache *schema_cache;
} floe_avro_reader_opts;
#define FLOE_AVRO_READER_OPTS_INIT {1, 0, 0, 0, 0, FLOE_AVRO_DECODER_OPTS_INIT, NULL}

/*
 * A cache of parsed writer schemas keyed by their exact "avro.schema" text:
 * a reader given one parses a schema it has seen once only (Iceberg writes
 * the same several-KB schema into every manifest of a table, and parsing it
 * cost a scan of a few hundred manifests more than reading their entries).
 * Thread-safe; its schemas live until floe_avro_schema_cache_free, so every
 * reader that used it must be freed first. Holds at most 64 schemas (more
 * are parsed per reader, as without a cache).
 */
typedef struct floe_avro_schema_cache floe_avro_schema_cache;
int floe_avro_schema_cache_new(floe_avro_schema_cache **out, floe_error *err) FLOE_WUR;
void floe_avro_schema_cache_free(floe_avro_schema_cache *c);

/*
 * Read the header of `in`. The reader does not own `in` (close it after
 * floe_avro_reader_free). opts may be NULL. On success the caller owns *out.
 */
int floe_avro_reader_open(floe_avro_reader **out, floe_input *in,
			  const floe_avro_reader_opts *opts, floe_error *err) FLOE_WUR;
void floe_avro_reader_free(floe_avro_reader *r);

/* The writer schema from "avro.schema" (owned by the reader). */
const floe_avro_schema *floe_avro_reader_schema(const floe_avro_reader *r);
/* "null", "deflate", "snappy" or "zstandard". */
const char *floe_avro_reader_codec(const floe_avro_reader *r);
const uint8_t *floe_avro_reader_sync(const floe_avro_reader *r); /* 16 bytes */

/*
 * A metadata value by key: NUL-terminated (the bytes may also contain NULs;
 * *len, when given, is the exact length), or NULL when absent. Owned by the
 * reader.
 */
const char *floe_avro_reader_meta(const floe_avro_reader *r, const char *key, size_t *len);
size_t floe_avro_reader_meta_count(const floe_avro_reader *r);
/* The i-th metadata entry in file order; false when i is out of range. */
bool floe_avro_reader_meta_at(const floe_avro_reader *r, size_t i, const char **key,
			      const char **value, size_t *len);

/*
 * Set the reader schema (must outlive the reader) before the first record is
 * read; NULL means the writer schema. Builds the resolution plan now so a
 * mismatch is reported here (FLOE_ECORRUPT naming the field).
 */
int floe_avro_reader_set_schema(floe_avro_reader *r, const floe_avro_schema *reader_schema,
				floe_error *err) FLOE_WUR;
/* The decoder (plan) in use; built on demand from the writer schema. NULL on ENOMEM. */
const floe_avro_decoder *floe_avro_reader_decoder(floe_avro_reader *r, floe_error *err);

/* One block, decompressed. data is valid until the next call. */
typedef struct floe_avro_block {
	const uint8_t *data;
	size_t len;
	int64_t count;   /* records in the block */
	uint64_t index;  /* 0-based block number */
	uint64_t offset; /* file offset of the block header */
} floe_avro_block;

/* The next block; *eof true (and out untouched) after the last one. Checks
 * the count and size against the limits and what is left of the file, the
 * sync marker, and the snappy CRC. */
int floe_avro_reader_next_block(floe_avro_block *out, bool *eof, floe_avro_reader *r,
				floe_error *err) FLOE_WUR;

/*
 * The next record as a generic value shaped by the reader schema; *eof true
 * at the end. The value is valid until the next call. Also checks that each
 * block holds exactly its records (no trailing bytes).
 */
int floe_avro_reader_next(floe_avro_value *out, bool *eof, floe_avro_reader *r,
			  floe_error *err) FLOE_WUR;

/* Records returned by floe_avro_reader_next so far. */
uint64_t floe_avro_reader_records_read(const floe_avro_reader *r);

/* Codec name -> floe_codec: FLOE_OK, FLOE_EUNSUPPORTED (bzip2, xz) or
 * FLOE_ECORRUPT (not an Avro codec). "null" maps to FLOE_CODEC_NONE. */
int floe_avro_codec_parse(floe_codec *codec, const char *name, floe_error *err) FLOE_WUR;

#endif
