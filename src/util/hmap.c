/*
 * hmap.c — open-addressing hash maps with linear probing, load <= 0.7.
 */
#include "util/hmap.h"

#include <string.h>

#include "util/hash.h"

void floe_hmap_init(floe_hmap *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
	floe_arena_init(&m->keys, 16384);
}

void floe_hmap_reset(floe_hmap *m)
{
	if (!m)
		return;
	floe_free(m->slots);
	floe_arena_reset(&m->keys);
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
}

static floe_hmap_slot *probe(floe_hmap_slot *slots, size_t cap, const void *key, size_t klen,
			     uint64_t h)
{
	size_t i = (size_t)h & (cap - 1);
	for (;;) {
		floe_hmap_slot *s = &slots[i];
		if (!s->key)
			return s;
		if (s->hash == h && s->klen == klen && memcmp(s->key, key, klen) == 0)
			return s;
		i = (i + 1) & (cap - 1);
	}
}

static int grow(floe_hmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	floe_hmap_slot *ns = floe_calloc(ncap, sizeof(*ns));
	if (!ns)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		floe_hmap_slot *s = &m->slots[i];
		if (s->key)
			*probe(ns, ncap, s->key, s->klen, s->hash) = *s;
	}
	floe_free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return FLOE_OK;
}

int floe_hmap_upsert(floe_hmap *m, const void *key, size_t klen, uint64_t **slot_val,
		     bool *existed)
{
	uint64_t h;
	floe_hmap_slot *s;
	if ((m->len + 1) * 10 > m->cap * 7 && grow(m))
		return FLOE_ENOMEM;
	h = floe_hash64(key, klen);
	s = probe(m->slots, m->cap, key, klen, h);
	if (s->key) {
		if (existed)
			*existed = true;
	} else {
		/* keep a non-NULL pointer even for the empty key */
		void *k = floe_arena_alloc(&m->keys, klen ? klen : 1);
		if (!k)
			return FLOE_ENOMEM;
		if (klen)
			memcpy(k, key, klen);
		s->key = k;
		s->klen = klen;
		s->hash = h;
		s->val = 0;
		m->len++;
		if (existed)
			*existed = false;
	}
	if (slot_val)
		*slot_val = &s->val;
	return FLOE_OK;
}

int floe_hmap_put(floe_hmap *m, const void *key, size_t klen, uint64_t val, bool *existed)
{
	uint64_t *v;
	int rc = floe_hmap_upsert(m, key, klen, &v, existed);
	if (rc)
		return rc;
	*v = val;
	return FLOE_OK;
}

bool floe_hmap_get(const floe_hmap *m, const void *key, size_t klen, uint64_t *val)
{
	floe_hmap_slot *s;
	if (!m->cap)
		return false;
	s = probe(m->slots, m->cap, key, klen, floe_hash64(key, klen));
	if (!s->key)
		return false;
	if (val)
		*val = s->val;
	return true;
}

int floe_hmap_put_str(floe_hmap *m, const char *key, uint64_t val)
{
	return floe_hmap_put(m, key, strlen(key), val, NULL);
}

bool floe_hmap_get_str(const floe_hmap *m, const char *key, uint64_t *val)
{
	return floe_hmap_get(m, key, strlen(key), val);
}

/* ---- integer keys -------------------------------------------------------- */

#define IMAP_EMPTY INT64_MIN

void floe_imap_init(floe_imap *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
}

void floe_imap_reset(floe_imap *m)
{
	if (!m)
		return;
	floe_free(m->slots);
	floe_imap_init(m);
}

static floe_imap_slot *iprobe(floe_imap_slot *slots, size_t cap, int64_t key)
{
	size_t i = (size_t)floe_hash_u64((uint64_t)key) & (cap - 1);
	while (slots[i].key != IMAP_EMPTY && slots[i].key != key)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

int floe_imap_put(floe_imap *m, int64_t key, uint64_t val)
{
	floe_imap_slot *s;
	if (key == IMAP_EMPTY)
		return FLOE_EINVAL;
	if ((m->len + 1) * 10 > m->cap * 7) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		floe_imap_slot *ns = floe_malloc(ncap * sizeof(*ns));
		if (!ns)
			return FLOE_ENOMEM;
		for (size_t i = 0; i < ncap; i++)
			ns[i].key = IMAP_EMPTY;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].key != IMAP_EMPTY)
				*iprobe(ns, ncap, m->slots[i].key) = m->slots[i];
		floe_free(m->slots);
		m->slots = ns;
		m->cap = ncap;
	}
	s = iprobe(m->slots, m->cap, key);
	if (s->key == IMAP_EMPTY) {
		s->key = key;
		m->len++;
	}
	s->val = val;
	return FLOE_OK;
}

bool floe_imap_get(const floe_imap *m, int64_t key, uint64_t *val)
{
	floe_imap_slot *s;
	if (!m->cap || key == IMAP_EMPTY)
		return false;
	s = iprobe(m->slots, m->cap, key);
	if (s->key == IMAP_EMPTY)
		return false;
	if (val)
		*val = s->val;
	return true;
}
