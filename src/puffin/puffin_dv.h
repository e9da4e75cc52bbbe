/*
 * puffin_dv.h — deletion vectors: the "deletion-vector-v1" blob and the
 * 64-bit portable Roaring bitmap inside it, decoded into the sorted list of
 * deleted row positions.
 *
 * spec: puffin-spec.md "deletion-vector-v1"; ../shared/iceberg-notes.md 3.4:
 *
 *   u32 BE  length = 4 + size(bitmap)       (covers magic and bitmap)
 *   u8[4]   magic D1 D3 39 64
 *           64-bit portable Roaring bitmap (little-endian):
 *             u64 bucket count, then per bucket (keys ascending, each at most
 *             2^31 - 2 as Java requires) u32 key (high 32 bits of a position)
 *             and a 32-bit Roaring bitmap (RoaringFormatSpec, run containers
 *             included) of the low 32 bits
 *   u32 BE  CRC-32 (IEEE) of magic + bitmap
 *
 * The result is a sorted, duplicate-free array of positions: that is what a
 * scan merges against row positions, and it is also what position delete
 * files produce, so both kinds of deletes share one representation.
 *
 * Untrusted input: every count is checked against the bytes left before it
 * sizes anything, containers must be ordered, cardinalities must match their
 * contents, and the total is capped (max_positions) because a run container
 * of 4 bytes can stand for 65536 positions.
 *
 * Thread-safety: plain functions. Ownership: *out is floe_malloc'd memory the
 * caller frees with floe_free.
 */
#ifndef FLOE_PUFFIN_DV_H
#define FLOE_PUFFIN_DV_H

#include "floe/common.h"

#define FLOE_DV_MAGIC_0 0xD1
#define FLOE_DV_MAGIC_1 0xD3
#define FLOE_DV_MAGIC_2 0x39
#define FLOE_DV_MAGIC_3 0x64
/* Largest bucket key Java accepts (positions stay below 2^63). */
#define FLOE_DV_MAX_KEY 2147483646u

/*
 * Decode a 64-bit portable Roaring bitmap (the whole of p[0..n) must be
 * consumed). *out receives the positions (NULL when empty), *count their
 * number. FLOE_ECORRUPT with the offset of the problem.
 */
int floe_roaring64_decode(uint64_t **out, size_t *count, const uint8_t *p, size_t n,
			  size_t max_positions, floe_error *err) FLOE_WUR;

/*
 * Decode a deletion-vector-v1 blob: length prefix, magic, bitmap, CRC.
 * expected_cardinality >= 0 is checked against the result (the manifest's
 * record_count); pass -1 to skip that check.
 */
int floe_dv_decode(uint64_t **out, size_t *count, const uint8_t *blob, size_t n,
		   int64_t expected_cardinality, size_t max_positions, floe_error *err) FLOE_WUR;

#endif
