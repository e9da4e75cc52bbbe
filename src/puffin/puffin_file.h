/*
 * puffin_file.h — Puffin files: the footer (blob metadata as JSON, optionally
 * LZ4-compressed) and reading one blob.
 *
 * spec: puffin-spec.md "File structure" and "Blob metadata":
 *
 *   "PFA1" blob_1 ... blob_n footer
 *   footer = "PFA1" payload payload_size(int32 LE) flags(4 bytes) "PFA1"
 *
 * flags byte 0 bit 0: the payload is one LZ4 frame. Other flag bits must be
 * zero (floe refuses a file that sets one: FLOE_EUNSUPPORTED). The payload is
 * UTF-8 JSON {"blobs": [...], "properties": {...}}; each blob names its
 * type, fields, snapshot-id, sequence-number, offset, length and optional
 * compression-codec ("lz4" frame or "zstd") and properties.
 *
 * Untrusted input: payload sizes, offsets and lengths are checked against
 * the file size before they size anything; the JSON goes through the bounded
 * reader. Errors are FLOE_ECORRUPT naming the file and what was wrong.
 *
 * Ownership: everything a parsed footer points to lives in the caller's
 * arena. Thread-safety: plain functions over caller state.
 */
#ifndef FLOE_PUFFIN_FILE_H
#define FLOE_PUFFIN_FILE_H

#include "floe/common.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/stream.h"

#define FLOE_PUFFIN_MAGIC "PFA1"
#define FLOE_PUFFIN_FLAG_COMPRESSED 0x1u
/* The footer payload a reader accepts at most (JSON text, after LZ4). */
#define FLOE_PUFFIN_MAX_FOOTER ((size_t)64 << 20)

typedef struct floe_puffin_prop {
	const char *key;
	const char *value;
} floe_puffin_prop;

typedef struct floe_puffin_blob {
	const char *type;
	int32_t *fields;
	size_t n_fields;
	int64_t snapshot_id;
	int64_t sequence_number;
	int64_t offset;
	int64_t length;
	const char *compression_codec; /* NULL: uncompressed */
	floe_puffin_prop *properties;
	size_t n_properties;
} floe_puffin_blob;

typedef struct floe_puffin_footer {
	floe_puffin_blob *blobs;
	size_t n_blobs;
	floe_puffin_prop *properties;
	size_t n_properties;
	uint64_t footer_size; /* whole footer, both magics included */
	bool compressed;      /* the payload was LZ4-compressed */
} floe_puffin_footer;

/*
 * Parse a footer from the last bytes of a file: tail[0..n) are the final n
 * bytes of a file of file_size bytes (n may be the whole file). When the
 * footer is longer than n, FLOE_ECORRUPT is not returned: *need receives the
 * footer size so the caller can read that much and call again (need may be
 * NULL: then it is an error). name is for messages.
 */
int floe_puffin_footer_parse(floe_puffin_footer *out, floe_arena *a, const uint8_t *tail,
			     size_t n, uint64_t file_size, const char *name, uint64_t *need,
			     floe_error *err) FLOE_WUR;

/* Read and parse the footer of a Puffin input (also checks the leading magic). */
int floe_puffin_read_footer(floe_puffin_footer *out, floe_arena *a, floe_input *in,
			    floe_error *err) FLOE_WUR;

/* A blob property, or NULL. */
const char *floe_puffin_blob_property(const floe_puffin_blob *b, const char *key);

/*
 * Read the bytes of blob b (offset/length from the footer or a manifest) and
 * decompress them per its codec into out (appended). max bounds the
 * decompressed size. FLOE_EUNSUPPORTED for an unknown codec.
 */
int floe_puffin_read_blob(floe_buf *out, floe_input *in, const floe_puffin_blob *b, size_t max,
			  floe_error *err) FLOE_WUR;

#endif
