/*
 * enc_dict.c — building a column chunk's dictionary (RLE_DICTIONARY): a hash
 * index over the distinct values in first-seen order, and the PLAIN body of
 * the dictionary page.
 *
 * spec: Encodings.md "Dictionary Encoding (PLAIN_DICTIONARY = 2 and
 * RLE_DICTIONARY = 8)". Values are compared by their bytes, so NaN payloads
 * and -0.0/+0.0 stay distinct and round-trip exactly.
 * DESIGN: open addressing with linear probing, load factor <= 1/2; slots
 * hold entry + 1 and each entry keeps its 32-bit hash so growth does not
 * rehash value bytes. Every value of a dictionary-encoded column is looked
 * up, so the common shapes avoid calls: 4- and 8-byte values compare as one
 * word, strings of up to 16 bytes hash and compare as two overlapping words
 * (the hash only places entries; the dictionary keeps first-seen order, so
 * the output does not depend on it). A value equal to the one before it
 * takes its entry without a lookup: runs are common (a timestamp shared by
 * a burst of records, a constant column) and a long string's hash reads
 * every byte where the comparison stops at the first difference.
 */
#include <string.h>

#include "parquet/encoding.h"
#include "util/alloc.h"
#include "util/cursor.h"
#include "util/hash.h"

void floe_parquet__dict_init(floe_parquet_dict *d, int width)
{
	memset(d, 0, sizeof(*d));
	d->width = width;
	floe_buf_init(&d->values, 0);
}

void floe_parquet__dict_reset(floe_parquet_dict *d)
{
	floe_free(d->slots);
	floe_free(d->hashes);
	floe_free(d->offsets);
	floe_buf_reset(&d->values);
	floe_parquet__dict_init(d, d->width);
}

size_t floe_parquet__dict_memory(const floe_parquet_dict *d)
{
	return d->n_slots * 4 + d->cap_entries * (4 + (d->width ? 0 : sizeof(size_t))) + d->values.cap;
}

/*
 * Slots are the hash's low bits, so every bit of the value must reach them:
 * splitmix64's finalizer. A single multiply's high half (the earlier hash)
 * left its low bits depending mostly on the value's low bits, which decimal
 * fractions as doubles share in long repeating patterns (12.3, 45.6): a
 * 1000-value dictionary probed ~128 slots a lookup.
 */
static inline uint32_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBULL;
	x ^= x >> 31;
	return (uint32_t)(x >> 32 ^ x);
}

static inline uint32_t hash_fixed(const uint8_t *p, int w)
{
	if (w == 4) {
		uint32_t x;
		memcpy(&x, p, 4);
		return mix64(x);
	}
	if (w == 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		return mix64(x);
	}
	return (uint32_t)floe_hash64(p, (size_t)w);
}

static int grow_slots(floe_parquet_dict *d)
{
	size_t ns = d->n_slots ? d->n_slots * 2 : 1024, mask = ns - 1;
	uint32_t *s = floe_calloc(ns, sizeof(uint32_t));
	if (!s)
		return FLOE_ENOMEM;
	for (size_t e = 0; e < d->n_entries; e++) {
		size_t i = d->hashes[e] & mask;
		while (s[i])
			i = (i + 1) & mask;
		s[i] = (uint32_t)e + 1;
	}
	floe_free(d->slots);
	d->slots = s;
	d->n_slots = ns;
	return FLOE_OK;
}

static int reserve_entry(floe_parquet_dict *d)
{
	if (d->n_entries + 1 > d->n_slots / 2 && grow_slots(d))
		return FLOE_ENOMEM;
	if (d->n_entries + 1 > d->cap_entries) {
		size_t cap = d->cap_entries;
		if (floe_array_grow((void **)&d->hashes, &cap, sizeof(uint32_t), d->n_entries + 1))
			return FLOE_ENOMEM;
		if (!d->width) {
			size_t cap2 = d->cap_entries ? d->cap_entries + 1 : 0;
			if (floe_array_grow((void **)&d->offsets, &cap2, sizeof(size_t), cap + 1))
				return FLOE_ENOMEM;
			if (d->n_entries == 0)
				d->offsets[0] = 0;
		}
		d->cap_entries = cap;
	}
	return FLOE_OK;
}

/* Insert value x (hash h) as a new entry; s is the empty slot found with
 * the current mask. */
static int insert_fixed(floe_parquet_dict *d, const uint8_t *x, size_t w, uint32_t h, size_t s,
			size_t mask, uint32_t *idx)
{
	if (reserve_entry(d) || floe_buf_append(&d->values, x, w))
		return FLOE_ENOMEM;
	if (d->n_slots - 1 != mask) { /* grown: find the empty slot again */
		mask = d->n_slots - 1;
		s = h & mask;
		while (d->slots[s])
			s = (s + 1) & mask;
	}
	d->hashes[d->n_entries] = h;
	d->slots[s] = (uint32_t)d->n_entries + 1;
	*idx = (uint32_t)d->n_entries++;
	d->plain_size += w;
	return FLOE_OK;
}

/*
 * The lookup loop for one width; inlined with a constant w for 4 and 8
 * bytes, where a candidate is compared as one word (no hash check, no
 * memcmp call).
 */
static inline int put_fixed_w(floe_parquet_dict *d, const uint8_t *v, size_t n, uint32_t *idx,
			      size_t *done, size_t max_plain_bytes, const size_t w)
{
	size_t i;
	for (i = 0; i < n; i++) {
		const uint8_t *x = v + i * w;
		/* a run (a timestamp repeated by a burst of records): the previous
		 * value's entry, without a hash or a probe */
		if (i && memcmp(x - w, x, w) == 0) {
			idx[i] = idx[i - 1];
			continue;
		}
		uint32_t h = hash_fixed(x, (int)w);
		size_t mask = d->n_slots - 1, s = h & mask;
		uint32_t e;
		for (;;) {
			e = d->slots[s];
			if (!e)
				break;
			const uint8_t *y = d->values.data + (size_t)(e - 1) * w;
			if (w == 8 || w == 4 ? memcmp(y, x, w) == 0
					     : d->hashes[e - 1] == h && memcmp(y, x, w) == 0)
				break;
			s = (s + 1) & mask;
		}
		if (e) {
			idx[i] = e - 1;
			continue;
		}
		if (d->plain_size + w > max_plain_bytes || d->n_entries >= INT32_MAX)
			break;
		if (insert_fixed(d, x, w, h, s, mask, &idx[i]))
			return FLOE_ENOMEM;
	}
	*done = i;
	return FLOE_OK;
}

int floe_parquet__dict_put_fixed(floe_parquet_dict *d, const uint8_t *v, size_t n, uint32_t *idx,
				 size_t *done, size_t max_plain_bytes)
{
	if (!d->n_slots && grow_slots(d))
		return FLOE_ENOMEM;
	if (d->width == 8)
		return put_fixed_w(d, v, n, idx, done, max_plain_bytes, 8);
	if (d->width == 4)
		return put_fixed_w(d, v, n, idx, done, max_plain_bytes, 4);
	return put_fixed_w(d, v, n, idx, done, max_plain_bytes, (size_t)d->width);
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return x;
}

static inline uint64_t load32(const uint8_t *p)
{
	uint32_t x;
	memcpy(&x, p, 4);
	return x;
}

/*
 * Strings of at most 16 bytes as two words that together hold every byte
 * (overlapping loads, never past the string): equal words = equal strings
 * of the same length.
 */
static inline void short_words(const uint8_t *p, size_t n, uint64_t *lo, uint64_t *hi)
{
	if (n >= 8) {
		*lo = load64(p);
		*hi = load64(p + n - 8);
	} else if (n >= 4) {
		*lo = load32(p);
		*hi = load32(p + n - 4);
	} else if (n > 0) {
		*lo = (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16;
		*hi = 0;
	} else {
		*lo = *hi = 0;
	}
}

static inline bool short_eq(const uint8_t *p, size_t n, uint64_t lo, uint64_t hi)
{
	uint64_t lo2, hi2;
	short_words(p, n, &lo2, &hi2);
	return lo2 == lo && hi2 == hi;
}

static inline uint32_t hash_short(uint64_t lo, uint64_t hi, size_t n)
{
	uint64_t x = (lo ^ (uint64_t)n << 59) * 0x9E3779B97F4A7C15ULL;
	x ^= hi * 0xC2B2AE3D27D4EB4FULL;
	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ULL;
	return (uint32_t)(x >> 32 ^ x);
}

int floe_parquet__dict_put_bytes(floe_parquet_dict *d, const floe_parquet_view *v, size_t n,
				 uint32_t *idx, size_t *done, size_t max_plain_bytes)
{
	size_t i;
	if (!d->n_slots && grow_slots(d))
		return FLOE_ENOMEM;
	for (i = 0; i < n; i++) {
		const uint8_t *x = v[i].p;
		size_t len = v[i].n;
		uint64_t lo = 0, hi = 0;
		if (i && len == v[i - 1].n && (len == 0 || memcmp(v[i - 1].p, x, len) == 0)) {
			idx[i] = idx[i - 1]; /* a run: no hash (long strings hash every byte) */
			continue;
		}
		bool small = len <= 16;
		uint32_t h;
		if (small) {
			short_words(x, len, &lo, &hi);
			h = hash_short(lo, hi, len);
		} else {
			h = (uint32_t)floe_hash64(x, len);
		}
		size_t mask = d->n_slots - 1, s = h & mask;
		uint32_t e;
		for (;;) {
			e = d->slots[s];
			if (!e)
				break;
			if (d->hashes[e - 1] == h) {
				size_t o = d->offsets[e - 1], l = d->offsets[e] - o;
				if (l == len &&
				    (len == 0 || (small ? short_eq(d->values.data + o, len, lo, hi)
							: memcmp(d->values.data + o, x, len) == 0)))
					break;
			}
			s = (s + 1) & mask;
		}
		if (e) {
			idx[i] = e - 1;
			continue;
		}
		if (d->plain_size + 4 + len > max_plain_bytes || d->n_entries >= INT32_MAX)
			break;
		if (reserve_entry(d) || floe_buf_append(&d->values, x, len))
			return FLOE_ENOMEM;
		if (d->n_slots - 1 != mask) {
			mask = d->n_slots - 1;
			s = h & mask;
			while (d->slots[s])
				s = (s + 1) & mask;
		}
		d->hashes[d->n_entries] = h;
		d->offsets[d->n_entries + 1] = d->values.len;
		d->slots[s] = (uint32_t)d->n_entries + 1;
		idx[i] = (uint32_t)d->n_entries++;
		d->plain_size += 4 + len;
	}
	*done = i;
	return FLOE_OK;
}

int floe_parquet__dict_write(const floe_parquet_dict *d, floe_buf *out)
{
	uint8_t *dst;
	if (d->width)
		return floe_buf_append(out, d->values.data, d->n_entries * (size_t)d->width);
	if (floe_buf_reserve(out, d->plain_size))
		return FLOE_ENOMEM;
	dst = out->data + out->len;
	for (size_t e = 0; e < d->n_entries; e++) {
		size_t o = d->offsets[e], l = d->offsets[e + 1] - o;
		floe_store_u32le(dst, (uint32_t)l);
		if (l)
			memcpy(dst + 4, d->values.data + o, l);
		dst += 4 + l;
	}
	out->len += d->plain_size;
	out->data[out->len] = 0;
	return FLOE_OK;
}
