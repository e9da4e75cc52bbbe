/*
 * write_index_persist.h — the key index of index-mode upserts persisted as a
 * Puffin blob (type floe-key-index-v1), so a restart loads it instead of
 * reading every key column of the table again.
 *
 * The Puffin file holds one blob whose payload is (little-endian):
 *
 *   "FKI1" u32 version (1)
 *   i64 snapshot_id   the snapshot the index describes (the commit that
 *                     references the file in its summary, floe.key-index)
 *   i64 parent_id     that snapshot's parent (the index's base before it)
 *   i64 parent_seq    the parent's sequence number (the snapshot's own is
 *                     assigned when it commits, after the blob is written)
 *   u32 n_fields, i32 field_ids[n_fields]   the key (equality field ids)
 *   u32 flags         bit 0: exact mode (one int-like key column)
 *   u64 n_files, n_files x (u32 len, path bytes)   file ids in this order:
 *                     exactly the live data files of snapshot_id
 *   entries           (uvarint klen, key bytes, uvarint file id, uvarint pos)
 *   u64 n_entries
 *   u32 CRC-32C of every byte before it
 *
 * The blob's Puffin metadata repeats snapshot-id and sequence-number (the
 * parent's) and carries properties floe.pipeline-id, entries, files and
 * crc32c. Keys are the delta writer's type-exact encodings (write_delta.c),
 * so a payload is valid only for the same key columns and types (checked:
 * field ids and the exact flag). About 15 bytes a key for a one-long key.
 *
 * Untrusted input: every length and count is checked against the bytes
 * left, the CRC is checked before any entry is used, file ids against
 * n_files and positions against FLOE_KEY_INDEX_MAX_POS; any failure is
 * FLOE_ECORRUPT naming the file and what was wrong (the caller rebuilds).
 *
 * Thread-safety: plain functions over caller state; persisting holds the
 * index's lock while it writes (the writer tasks' lookups wait).
 */
#ifndef FLOE_WRITE_INDEX_PERSIST_H
#define FLOE_WRITE_INDEX_PERSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floe/common.h"
#include "io/fileio.h"
#include "util/alloc.h"
#include "write/write.h"

#define FLOE_KEY_INDEX_BLOB_TYPE "floe-key-index-v1"
/* the snapshot summary key naming the Puffin file (a full path) */
#define FLOE_KEY_INDEX_SUMMARY_KEY "floe.key-index"

typedef struct floe_key_index_blob_hdr {
	int64_t snapshot_id;
	int64_t parent_id;
	int64_t parent_seq;
	const int32_t *field_ids;
	size_t n_fields;
	bool exact;
	const char *pipeline_id; /* writing: a blob property (NULL: none) */
} floe_key_index_blob_hdr;

/* ---- the payload codec (streamed) ------------------------------------------------ */

typedef struct floe_kib_writer floe_kib_writer;
/* Start a Puffin file on out with the payload's header and file list. */
int floe_kib_writer_new(floe_kib_writer **kw, floe_output *out, const floe_key_index_blob_hdr *h,
			const char *const *paths, size_t n_paths, floe_error *err) FLOE_WUR;
int floe_kib_writer_entry(floe_kib_writer *kw, const uint8_t *key, size_t klen, uint32_t file_id,
			  uint64_t pos, floe_error *err) FLOE_WUR;
/* The trailer, the blob's metadata and the Puffin footer; the caller closes out. */
int floe_kib_writer_finish(floe_kib_writer *kw, uint64_t *file_size, floe_error *err) FLOE_WUR;
void floe_kib_writer_free(floe_kib_writer *kw); /* NULL ok */

typedef int (*floe_kib_file_fn)(void *payload, const char *path, size_t len);
typedef int (*floe_kib_entry_fn)(void *payload, const uint8_t *key, size_t klen, uint32_t file_id,
				 uint64_t pos);
/*
 * Check and decode a payload p[0..n): *h (field ids in a) and the counts,
 * then, only when every check passed (magic, version, lengths, CRC), each
 * file (in id order) and each entry through the callbacks. A callback's
 * non-zero return stops and is returned. name is for messages.
 */
int floe_kib_decode(const uint8_t *p, size_t n, const char *name, floe_key_index_blob_hdr *h,
		    floe_arena *a, uint64_t *n_files, uint64_t *n_entries, floe_kib_file_fn file_fn,
		    floe_kib_entry_fn entry_fn, void *payload, floe_error *err) FLOE_WUR;
/* The header and counts alone (no CRC check, no contents): to compare before
 * decoding. */
int floe_kib_decode_header(const uint8_t *p, size_t n, const char *name,
			   floe_key_index_blob_hdr *h, floe_arena *a, uint64_t *n_files,
			   uint64_t *n_entries, floe_error *err) FLOE_WUR;
/* Read the floe-key-index-v1 blob's payload of the Puffin file at path into out. */
int floe_kib_read_file(floe_fileio *io, const char *path, floe_buf *out, floe_error *err) FLOE_WUR;

/* ---- the delta index ------------------------------------------------------------- */

/*
 * Write ix (its files not gone, renumbered, and their entries) to a new
 * Puffin file at path. h's exact and field ids should be the index's.
 */
int floe_delta_index_persist(floe_delta_index *ix, floe_fileio *io, const char *path,
			     const floe_key_index_blob_hdr *h, uint64_t *file_size,
			     uint64_t *n_entries, floe_error *err) FLOE_WUR;
/*
 * Clear ix and fill it from the Puffin file at path, after checking it
 * describes expect (snapshot id, parent, key field ids, exact). Files are
 * registered by path only (every one gone until floe_delta_index__sync_file
 * sets its spec, partition and DV); *paths (optional) receives them, in a.
 * FLOE_ECORRUPT on any mismatch (ix is cleared then).
 */
int floe_delta_index_restore(floe_delta_index *ix, floe_fileio *io, const char *path,
			     const floe_key_index_blob_hdr *expect, uint64_t *n_entries,
			     char ***paths, size_t *n_paths, floe_arena *a,
			     floe_error *err) FLOE_WUR;

#endif
