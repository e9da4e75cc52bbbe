/*
 * puffin_write.h — writing Puffin files and deletion vectors: the encoder
 * side of puffin_file.h and puffin_dv.h.
 *
 * spec: puffin-spec.md "File structure", "Blob metadata",
 * "deletion-vector-v1"; RoaringFormatSpec; ../shared/iceberg-notes.md 3.4.
 *
 *   "PFA1" blob_1 ... blob_n footer
 *   footer = "PFA1" payload payload_size(int32 LE) flags(4 bytes, zero) "PFA1"
 *
 * The footer payload is written uncompressed (as Java's PuffinWriter does
 * by default, and as PyIceberg requires), in Java's key order: blobs (type,
 * fields, snapshot-id, sequence-number, offset, length, compression-codec
 * when set, properties when any), then properties when any. Blobs are
 * written as given (the caller compresses; DV blobs must not be).
 *
 * A deletion vector is encoded as the spec's framing around the 64-bit
 * portable Roaring bitmap: u32 BE length (4 + bitmap), magic D1 D3 39 64,
 * the bitmap, u32 BE CRC-32 of magic + bitmap. In the bitmap, buckets
 * (high 32 bits) are written only for keys that hold a position (Java
 * writes empty buckets for gaps; readers accept both), and each 16-bit
 * container takes the smallest of Roaring's forms as Java's runOptimize
 * chooses: an array (cardinality <= 4096, 2 bytes a value) or a bitset
 * (8192 bytes), replaced by a run container when that is strictly smaller
 * (2 + 4 bytes a run). Cookie 12346 without runs (offset header always),
 * 12347 with runs (run-flag bitset; offset header from 4 containers).
 *
 * Ownership: encoders append to the caller's buffer. Thread-safety: plain
 * functions; a Puffin writer belongs to one thread.
 */
#ifndef FLOE_PUFFIN_WRITE_H
#define FLOE_PUFFIN_WRITE_H

#include "puffin/puffin_dv.h"
#include "puffin/puffin_file.h"

/* The blob type and the field id (_pos) Java's BaseDVFileWriter records. */
#define FLOE_DV_BLOB_TYPE "deletion-vector-v1"
#define FLOE_DV_FIELD_ROW_POS 2147483645
/* Largest position a deletion vector can hold (bucket key FLOE_DV_MAX_KEY). */
#define FLOE_DV_MAX_POSITION (((uint64_t)FLOE_DV_MAX_KEY << 32) | 0xFFFFFFFFu)

/*
 * Append the 64-bit portable Roaring bitmap of pos[0..n) to out. Positions
 * must be strictly ascending and at most FLOE_DV_MAX_POSITION: FLOE_EINVAL
 * otherwise (naming the index). FLOE_ENOMEM when out reaches its cap.
 */
int floe_roaring64_encode(floe_buf *out, const uint64_t *pos, size_t n, floe_error *err) FLOE_WUR;

/* Append a deletion-vector-v1 blob (length prefix, magic, bitmap, CRC-32). */
int floe_dv_encode(floe_buf *out, const uint64_t *pos, size_t n, floe_error *err) FLOE_WUR;

/* ---- Puffin files ------------------------------------------------------------- */

typedef struct floe_puffin_writer floe_puffin_writer;

/*
 * Start a Puffin file on out (the leading magic is written now). out stays
 * the caller's: the writer never closes or aborts it.
 */
int floe_puffin_writer_new(floe_puffin_writer **pw, floe_output *out, floe_error *err) FLOE_WUR;

/*
 * Append one blob: its bytes as given and its metadata (type, fields,
 * snapshot-id, sequence-number, compression-codec, properties; offset and
 * length in meta are ignored and computed). meta is copied. *offset and
 * *length (optional) receive where the blob lies in the file.
 */
int floe_puffin_writer_add(floe_puffin_writer *pw, const floe_puffin_blob *meta,
			   const uint8_t *data, size_t n, int64_t *offset, int64_t *length,
			   floe_error *err) FLOE_WUR;

/*
 * Record a blob the caller wrote to out itself, at [offset, offset + length)
 * (a blob too large to hold in memory: floe's key index). meta as for
 * floe_puffin_writer_add (offset and length in it ignored). FLOE_EINVAL when
 * the range is not within what out holds after the leading magic.
 */
int floe_puffin_writer_add_written(floe_puffin_writer *pw, const floe_puffin_blob *meta,
				   int64_t offset, int64_t length, floe_error *err) FLOE_WUR;

/*
 * Write the footer with the file properties props[0..n_props) (Java sets
 * "created-by"). *file_size receives the size of the whole file. After
 * this only floe_puffin_writer_free is valid; the caller closes out.
 */
int floe_puffin_writer_finish(floe_puffin_writer *pw, const floe_puffin_prop *props,
			      size_t n_props, uint64_t *file_size, floe_error *err) FLOE_WUR;

void floe_puffin_writer_free(floe_puffin_writer *pw); /* NULL ok */

#endif
