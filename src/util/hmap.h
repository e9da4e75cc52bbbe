/*
 * hmap.h — open-addressing hash maps: byte-string keys (copied into the
 * map's arena) and 64-bit integer keys, each to a 64-bit payload.
 */
#ifndef FLOE_UTIL_HMAP_H
#define FLOE_UTIL_HMAP_H

#include "floe/common.h"
#include "util/alloc.h"

typedef struct floe_hmap_slot {
	const void *key; /* NULL = empty (string maps) */
	size_t klen;
	uint64_t hash;
	uint64_t val;
} floe_hmap_slot;

typedef struct floe_hmap {
	floe_hmap_slot *slots;
	size_t cap; /* power of two */
	size_t len;
	floe_arena keys;
} floe_hmap;

void floe_hmap_init(floe_hmap *m);
void floe_hmap_reset(floe_hmap *m);
/* Insert or replace. *existed (optional) says whether the key was there. */
int floe_hmap_put(floe_hmap *m, const void *key, size_t klen, uint64_t val, bool *existed) FLOE_WUR;
/* Insert only if absent; *slot_val receives a pointer to the stored value. */
int floe_hmap_upsert(floe_hmap *m, const void *key, size_t klen, uint64_t **slot_val,
		     bool *existed) FLOE_WUR;
bool floe_hmap_get(const floe_hmap *m, const void *key, size_t klen, uint64_t *val);
static inline bool floe_hmap_has(const floe_hmap *m, const void *key, size_t klen)
{
	return floe_hmap_get(m, key, klen, NULL);
}
int floe_hmap_put_str(floe_hmap *m, const char *key, uint64_t val) FLOE_WUR;
bool floe_hmap_get_str(const floe_hmap *m, const char *key, uint64_t *val);

/* Integer-keyed map (key INT64_MIN is reserved as the empty marker). */
typedef struct floe_imap_slot {
	int64_t key;
	uint64_t val;
} floe_imap_slot;

typedef struct floe_imap {
	floe_imap_slot *slots;
	size_t cap;
	size_t len;
} floe_imap;

void floe_imap_init(floe_imap *m);
void floe_imap_reset(floe_imap *m);
int floe_imap_put(floe_imap *m, int64_t key, uint64_t val) FLOE_WUR;
bool floe_imap_get(const floe_imap *m, int64_t key, uint64_t *val);

#endif
