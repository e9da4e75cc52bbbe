/*
 * write_index.h — the primary-key index of upserts in index mode
 * (write.upsert.mode=index): key → (file id, row position) of the live row
 * of every key, so an update or delete becomes a deletion-vector bit /
 * position delete instead of an equality delete.
 *
 * Keys are the delta writer's type-exact encodings (write_delta.c). A key
 * of one int/long/date/time/timestamp column is held as its 8-byte value
 * ("exact" mode: a slot is 16 bytes, 21 bytes a key at load 0.75, 16–32
 * while growing); any other key as a 64-bit hash in the slot and its
 * encoding in a byte arena (16 bytes a slot + 4 + the encoding). Values are
 * (file id + 1) << 40 | position: up to 2^24 - 2 files, 2^40 rows a file.
 *
 * Memory is bounded by the budget given at creation: past it, the table is
 * written as a sorted run to a local spill file (records sorted by the key's
 * 64-bit hash, 16 bytes each in exact mode, 24 + key in general mode) and
 * emptied. Each run keeps in memory a Bloom filter (10 bits a key, 4 probes:
 * ~1% false positives) and a sparse index (the first hash of every block of
 * 128 records) — about 1.3 bytes a spilled key, held beyond the budget —
 * so a lookup that misses memory reads at most one block of
 * each run whose filter says maybe — about one disk read per lookup (two in
 * general mode: the block, then the key). A put or delete of a spilled key
 * goes to memory (a delete as a tombstone); newest wins. Runs are merged
 * into one when there are more than 8.
 *
 * Not thread-safe: one index partition per writer task (HASH on the key).
 */
#ifndef FLOE_WRITE_INDEX_H
#define FLOE_WRITE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floe/common.h"

typedef struct floe_key_index floe_key_index;

#define FLOE_KEY_INDEX_MAX_FILES ((UINT64_C(1) << 24) - 2)
#define FLOE_KEY_INDEX_MAX_POS ((UINT64_C(1) << 40) - 1)

typedef struct floe_key_index_stats {
	size_t entries_mem;  /* slots in use in memory (incl. tombstones) */
	size_t memory;       /* bytes held in memory (slots, key arena, filters) */
	size_t runs;         /* spill runs on disk */
	size_t spilled;      /* records in runs */
	uint64_t spills;     /* runs written */
	uint64_t disk_reads; /* blocks read for lookups */
	uint64_t lookups;
} floe_key_index_stats;

/* exact: every key is one 4- or 8-byte value column (see above). budget: in
 * bytes (0 = unbounded). spill_dir: where runs go (NULL: $TMPDIR, else /tmp);
 * the files are unlinked at once, so nothing is left after a crash. */
int floe_key_index_new(floe_key_index **out, bool exact, size_t budget, const char *spill_dir,
		       floe_error *err) FLOE_WUR;
/* key → (file_id, pos), replacing an existing entry. */
int floe_key_index_put(floe_key_index *ix, const uint8_t *key, size_t klen, uint32_t file_id,
		       uint64_t pos, floe_error *err) FLOE_WUR;
/* The key has no live row any more. */
int floe_key_index_del(floe_key_index *ix, const uint8_t *key, size_t klen,
		       floe_error *err) FLOE_WUR;
/* *found and, when found, *file_id and *pos. */
int floe_key_index_get(floe_key_index *ix, const uint8_t *key, size_t klen, bool *found,
		       uint32_t *file_id, uint64_t *pos, floe_error *err) FLOE_WUR;
/*
 * A hint: the memory slot where a lookup of key starts is about to be read
 * (a table of millions of keys is far larger than the caches, so each
 * lookup is one cache and TLB miss; asking a few keys ahead lets the misses
 * overlap). Changes nothing.
 */
void floe_key_index_prefetch(const floe_key_index *ix, const uint8_t *key, size_t klen);
/*
 * Where the lookup of key starts in the in-memory table, scaled to
 * [0, 2^32) (0 without a table). Visiting a batch of keys in this order
 * walks the table forwards — neighbouring keys share pages and often cache
 * lines — where the batch's own order reads it at random. Changes nothing.
 */
uint32_t floe_key_index_place(const floe_key_index *ix, const uint8_t *key, size_t klen);
/* Room in memory for n more keys without rehashing: a hint, within the
 * budget, that changes nothing when refused (no memory) or not needed. */
void floe_key_index_reserve(floe_key_index *ix, size_t n);
void floe_key_index_get_stats(const floe_key_index *ix, floe_key_index_stats *out);
void floe_key_index_free(floe_key_index *ix);

/* ---- persist hook (helper-idxpersist: write_index_persist.c) ---- */
/* fn(payload, key, klen, file_id, pos) for every live entry (memory and
 * runs, newest wins; order unspecified). Exact mode gives each key as 9
 * bytes {1, value as u64 LE} (the null key as {0}): an int key's 5-byte
 * encoding comes back widened. Non-zero from fn stops and is returned. */
typedef int (*floe_key_index_fn)(void *payload, const uint8_t *key, size_t klen,
				 uint32_t file_id, uint64_t pos);
int floe_key_index_foreach(floe_key_index *ix, floe_key_index_fn fn, void *payload,
			   floe_error *err) FLOE_WUR;

#endif
