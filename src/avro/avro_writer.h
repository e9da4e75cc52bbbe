/*
 * avro/avro_writer.h — writing Avro object container files.
 *
 * spec: Avro 1.12 "Object Container Files". The header (magic, metadata with
 * "avro.schema" and "avro.codec" plus the caller's keys, a random 16-byte
 * sync marker) is written before the first block; records are buffered into
 * a block that is compressed and written when it reaches block_bytes (or
 * block_records); close writes the last block. A file with no records is
 * just the header, which is valid Avro.
 *
 * Records are appended either as generic values (floe_avro_writer_append)
 * or encoded directly with the floe_avro_enc_* helpers between
 * floe_avro_writer_begin() and floe_avro_writer_commit() (the fast path the
 * Iceberg manifest writer uses).
 *
 * Thread-safety: a writer is single-threaded.
 */
#ifndef FLOE_AVRO_WRITER_H
#define FLOE_AVRO_WRITER_H

#include "avro/avro_datum.h"
#include "avro/avro_schema.h"
#include "util/stream.h"

typedef struct floe_avro_writer floe_avro_writer;

typedef struct floe_avro_writer_opts {
	int version;          /* 1 */
	const char *codec;    /* "null", "deflate" (default), "snappy", "zstandard" */
	int level;            /* codec level; 0 = codec default (deflate 6, zstd 3) */
	size_t block_bytes;   /* flush when the uncompressed block reaches this; default 64 KiB */
	size_t block_records; /* also flush at this many records; 0 = no count limit */
	size_t max_record;    /* largest single encoded record; default 256 MiB */
	const uint8_t *sync;  /* 16 bytes to use as the sync marker; NULL = random */
} floe_avro_writer_opts;
#define FLOE_AVRO_WRITER_OPTS_INIT {1, NULL, 0, 0, 0, 0, NULL}

/*
 * Start a container on `out` with schema `schema` (serialized into the header
 * with floe_avro_schema_to_json; a schema made with the builder must have
 * passed floe_avro_schema_finish). The writer keeps a pointer to schema: it
 * must outlive the writer. On success the writer owns `out` (closed by
 * floe_avro_writer_close, aborted by floe_avro_writer_abort); on failure the
 * caller still owns it. Nothing is written until the first record, flush or
 * close. Errors: FLOE_EINVAL (unknown codec, bad options or schema),
 * FLOE_EUNSUPPORTED (bzip2, xz), FLOE_ENOMEM.
 */
int floe_avro_writer_open(floe_avro_writer **out_w, floe_output *out,
			  const floe_avro_schema *schema, const floe_avro_writer_opts *opts,
			  floe_error *err) FLOE_WUR;

/*
 * Add a header metadata entry (before the first record; replaces an earlier
 * value of the same key). Keys starting with "avro." are reserved (EINVAL).
 */
int floe_avro_writer_meta(floe_avro_writer *w, const char *key, const void *value, size_t len,
			  floe_error *err) FLOE_WUR;
int floe_avro_writer_meta_str(floe_avro_writer *w, const char *key, const char *value,
			      floe_error *err) FLOE_WUR;

/* Append one record given as a generic value (FLOE_EINVAL when it does not
 * match the schema; nothing is appended then). */
int floe_avro_writer_append(floe_avro_writer *w, const floe_avro_value *v, floe_error *err)
	FLOE_WUR;

/*
 * Fast path: begin returns the block buffer; append exactly one record's
 * encoding to it with floe_avro_enc_*, then commit (which may flush a
 * block) or rollback (drops what was appended since begin).
 */
floe_buf *floe_avro_writer_begin(floe_avro_writer *w);
int floe_avro_writer_commit(floe_avro_writer *w, floe_error *err) FLOE_WUR;
void floe_avro_writer_rollback(floe_avro_writer *w);

/* Append one already encoded record. */
int floe_avro_writer_append_encoded(floe_avro_writer *w, const void *p, size_t n,
				    floe_error *err) FLOE_WUR;

/* End the current block now (writes the header first if needed). */
int floe_avro_writer_flush(floe_avro_writer *w, floe_error *err) FLOE_WUR;

/* Records appended so far. */
uint64_t floe_avro_writer_records(const floe_avro_writer *w);
/* Bytes written to the output so far plus the pending (uncompressed) block:
 * an estimate of the final size for rolling files at a target size. */
uint64_t floe_avro_writer_size_estimate(const floe_avro_writer *w);
/* The sync marker (16 bytes). */
const uint8_t *floe_avro_writer_sync(const floe_avro_writer *w);

/*
 * Write the last block, close the output and free the writer (in every case).
 * *bytes_written (optional) receives the exact size of the file. On failure
 * the output is aborted.
 */
int floe_avro_writer_close(floe_avro_writer *w, uint64_t *bytes_written, floe_error *err)
	FLOE_WUR;
/* Discard everything: abort the output and free the writer. Accepts NULL. */
void floe_avro_writer_abort(floe_avro_writer *w);

#endif
