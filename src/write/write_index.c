/*
 * write_index.c — the primary-key index of upserts in index mode
 * (write_index.h: layout, memory per key, spilling).
 *
 * DESIGN: one open-addressing table (linear probing, power-of-two capacity,
 * load <= 0.75) of 16-byte slots {k, v}; v == 0 is an empty slot, v == TOMB
 * a delete that hides a spilled entry. Exact mode: k is the key's value;
 * general mode: k is the offset of {hash, len, bytes} in the key arena.
 * Spilling sorts the live slots by hash into a run file (unlinked at
 * creation) and clears the table; lookups go memory, then runs newest
 * first. Runs are merged (a k-way merge keeping the newest of each key,
 * dropping tombstones when the oldest run is included) when there are more
 * than MAX_RUNS.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/hash.h"
#include "write/write_index.h"

#define TOMB UINT64_MAX
#define BLOCK 128
#define MAX_RUNS 8
#define NULL_KEY_HASH UINT64_C(0x9e3779b97f4a7c15)

typedef struct slot {
	uint64_t k, v;
} slot;

typedef struct rec { /* a record being spilled or merged */
	uint64_t h, v;
	const uint8_t *key; /* general mode */
	uint32_t klen;
	uint64_t k;    /* exact mode */
	uint64_t koff; /* merging, general mode: offset in the keys buffer */
	uint32_t age;  /* merging: higher is newer */
} rec;

typedef struct run {
	int fd;
	size_t n;        /* records */
	uint64_t *first; /* first hash of each block */
	size_t n_blocks;
	uint8_t *bloom;
	uint64_t bloom_bits;
	uint64_t keys_at; /* general mode: offset of the key region */
} run;

struct floe_key_index {
	bool exact;
	size_t budget;
	char dir[512];
	slot *slots;
	size_t cap, used; /* used: slots with v != 0 */
	floe_buf arena;   /* general mode keys */
	uint64_t null_v;  /* exact mode: the null key's value (0 none) */
	run runs[MAX_RUNS + 1];
	size_t n_runs;
	floe_key_index_stats st;
	uint8_t *blk; /* a block read */
	size_t cap_blk;
};

static size_t rec_size(const floe_key_index *ix)
{
	return ix->exact ? 16 : 24;
}

static int key_exact(const uint8_t *key, size_t klen, bool *is_null, uint64_t *k)
{
	*is_null = false;
	*k = 0;
	if (klen == 1 && key[0] == 0) {
		*is_null = true;
		return FLOE_OK;
	}
	if (klen == 5 && key[0] == 1) {
		uint32_t u;
		memcpy(&u, key + 1, 4);
		*k = u;
		return FLOE_OK;
	}
	if (klen == 9 && key[0] == 1) {
		memcpy(k, key + 1, 8);
		return FLOE_OK;
	}
	return FLOE_EINVAL;
}

static uint64_t hash_of(const floe_key_index *ix, const uint8_t *key, size_t klen, uint64_t k)
{
	return ix->exact ? floe_hash_u64(k) : floe_hash64(key, klen);
}

/* general mode: the arena record at off */
static void arena_key(const floe_key_index *ix, uint64_t off, uint64_t *h, const uint8_t **key,
		      uint32_t *klen)
{
	const uint8_t *p = ix->arena.data + off;
	memcpy(h, p, 8);
	memcpy(klen, p + 8, 4);
	*key = p + 12;
}

static uint64_t slot_hash(const floe_key_index *ix, const slot *s)
{
	if (ix->exact)
		return floe_hash_u64(s->k);
	uint64_t h;
	const uint8_t *key;
	uint32_t klen;
	arena_key(ix, s->k, &h, &key, &klen);
	return h;
}

static bool slot_match(const floe_key_index *ix, const slot *s, uint64_t h, const uint8_t *key,
		       size_t klen, uint64_t k)
{
	if (ix->exact)
		return s->k == k;
	uint64_t sh;
	const uint8_t *sk;
	uint32_t sl;
	arena_key(ix, s->k, &sh, &sk, &sl);
	return sh == h && sl == klen && !memcmp(sk, key, klen);
}

static size_t mem_bytes(const floe_key_index *ix)
{
	size_t b = ix->cap * sizeof(slot) + ix->arena.cap;
	for (size_t i = 0; i < ix->n_runs; i++)
		b += ix->runs[i].bloom_bits / 8 + ix->runs[i].n_blocks * 8;
	return b;
}

int floe_key_index_new(floe_key_index **out, bool exact, size_t budget, const char *spill_dir,
		       floe_error *err)
{
	*out = NULL;
	floe_key_index *ix = floe_calloc(1, sizeof(*ix));
	if (!ix)
		return floe_error_oom(err);
	ix->exact = exact;
	ix->budget = budget;
	const char *d = spill_dir;
	if (!d || !*d)
		d = getenv("TMPDIR");
	if (!d || !*d)
		d = "/tmp";
	if ((size_t)snprintf(ix->dir, sizeof(ix->dir), "%s", d) >= sizeof(ix->dir)) {
		floe_free(ix);
		return floe_error_set(err, FLOE_EINVAL, "key index: spill directory name too long");
	}
	floe_buf_init(&ix->arena, 0);
	*out = ix;
	return FLOE_OK;
}

static void run_free(run *r)
{
	if (r->fd >= 0)
		close(r->fd);
	floe_free(r->first);
	floe_free(r->bloom);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

void floe_key_index_free(floe_key_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n_runs; i++)
		run_free(&ix->runs[i]);
	floe_free(ix->slots);
	floe_free(ix->blk);
	floe_buf_reset(&ix->arena);
	floe_free(ix);
}

/* ---- the in-memory table ------------------------------------------------------ */

static slot *find_slot(floe_key_index *ix, uint64_t h, const uint8_t *key, size_t klen, uint64_t k,
		       bool *hit)
{
	size_t mask = ix->cap - 1;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		slot *s = &ix->slots[i];
		if (!s->v) {
			*hit = false;
			return s;
		}
		if (slot_match(ix, s, h, key, klen, k)) {
			*hit = true;
			return s;
		}
	}
}

/*
 * A table of millions of slots is read at random: with 4 KiB pages every
 * lookup is also a TLB miss (a page walk, dearer still in a VM), which was
 * most of building the index of a 10M-row table. Transparent huge pages for
 * the table, asked before its pages are touched (a large calloc is fresh
 * zero pages); a hint (Linux), harmless where refused or absent.
 */
static void huge_pages(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~(huge - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

static int rehash(floe_key_index *ix, size_t ncap, floe_error *err)
{
	slot *ns = floe_calloc(ncap, sizeof(slot));
	if (!ns)
		return floe_error_oom(err);
	huge_pages(ns, ncap * sizeof(slot));
	for (size_t i = 0; i < ix->cap; i++) {
		slot *s = &ix->slots[i];
		if (!s->v)
			continue;
		size_t j = (size_t)slot_hash(ix, s) & (ncap - 1);
		while (ns[j].v)
			j = (j + 1) & (ncap - 1);
		ns[j] = *s;
	}
	floe_free(ix->slots);
	ix->slots = ns;
	ix->cap = ncap;
	return FLOE_OK;
}

static int grow(floe_key_index *ix, floe_error *err)
{
	return rehash(ix, ix->cap ? ix->cap * 2 : 1024, err);
}

void floe_key_index_reserve(floe_key_index *ix, size_t n)
{
	size_t want = ix->used + n, ncap = ix->cap ? ix->cap : 1024;
	floe_error ignored;
	while (ncap < SIZE_MAX / 64 && want * 4 > ncap * 3)
		ncap *= 2;
	/* within the budget: a table the budget would spill at once is not made;
	 * out of memory here is left to the puts that need the room */
	if (ncap > ix->cap && (!ix->budget || ncap * sizeof(slot) + ix->arena.cap <= ix->budget))
		(void)rehash(ix, ncap, &ignored);
}

void floe_key_index_prefetch(const floe_key_index *ix, const uint8_t *key, size_t klen)
{
	bool is_null;
	uint64_t k = 0;
	if (!ix->cap || (ix->exact && (key_exact(key, klen, &is_null, &k) || is_null)))
		return;
#if defined(__GNUC__)
	__builtin_prefetch(&ix->slots[(size_t)hash_of(ix, key, klen, k) & (ix->cap - 1)]);
#else
	(void)key;
	(void)klen;
#endif
}

uint32_t floe_key_index_place(const floe_key_index *ix, const uint8_t *key, size_t klen)
{
	bool is_null;
	uint64_t k = 0;
	if (!ix->cap || (ix->exact && (key_exact(key, klen, &is_null, &k) || is_null)))
		return 0;
	uint64_t home = hash_of(ix, key, klen, k) & (ix->cap - 1);
	int lg = __builtin_ctzll((unsigned long long)ix->cap); /* cap: a power of two */
	return (uint32_t)(lg <= 32 ? home << (32 - lg) : home >> (lg - 32));
}

/* backward-shift deletion of slot i */
static void remove_slot(floe_key_index *ix, size_t i)
{
	size_t mask = ix->cap - 1;
	size_t j = i;
	for (;;) {
		ix->slots[i].v = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!ix->slots[j].v)
				return;
			size_t home = (size_t)slot_hash(ix, &ix->slots[j]) & mask;
			/* can slot j move to i? (home not cyclically in (i, j]) */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		ix->slots[i] = ix->slots[j];
		i = j;
	}
}

static int spill(floe_key_index *ix, floe_error *err);

static int set(floe_key_index *ix, const uint8_t *key, size_t klen, uint64_t v, floe_error *err)
{
	bool is_null = false, hit;
	uint64_t k = 0;
	int rc;
	if (ix->exact) {
		if (key_exact(key, klen, &is_null, &k))
			return floe_error_set(err, FLOE_EINVAL, "key index: not a one-value key");
		if (is_null) {
			ix->null_v = v == TOMB ? 0 : v;
			return FLOE_OK;
		}
	}
	if ((ix->used + 1) * 4 > ix->cap * 3 && (rc = grow(ix, err)))
		return rc;
	uint64_t h = hash_of(ix, key, klen, k);
	slot *s = find_slot(ix, h, key, klen, k, &hit);
	if (v == TOMB && !ix->n_runs) {
		if (hit) {
			remove_slot(ix, (size_t)(s - ix->slots));
			ix->used--;
		}
		return FLOE_OK;
	}
	if (!hit) {
		if (ix->exact) {
			s->k = k;
		} else {
			if (klen > UINT32_MAX)
				return floe_error_set(err, FLOE_EINVAL, "key index: key too long");
			uint32_t l = (uint32_t)klen;
			s->k = ix->arena.len;
			if (floe_buf_append(&ix->arena, &h, 8) || floe_buf_append(&ix->arena, &l, 4) ||
			    floe_buf_append(&ix->arena, key, klen)) {
				s->v = 0;
				return floe_error_oom(err);
			}
		}
		ix->used++;
	}
	s->v = v;
	if (ix->budget && mem_bytes(ix) > ix->budget && ix->used > 64)
		return spill(ix, err);
	return FLOE_OK;
}

int floe_key_index_put(floe_key_index *ix, const uint8_t *key, size_t klen, uint32_t file_id,
		       uint64_t pos, floe_error *err)
{
	if ((uint64_t)file_id > FLOE_KEY_INDEX_MAX_FILES || pos > FLOE_KEY_INDEX_MAX_POS)
		return floe_error_set(err, FLOE_EINVAL, "key index: file %u or position %llu too large",
				      file_id, (unsigned long long)pos);
	return set(ix, key, klen, ((uint64_t)file_id + 1) << 40 | pos, err);
}

int floe_key_index_del(floe_key_index *ix, const uint8_t *key, size_t klen, floe_error *err)
{
	return set(ix, key, klen, TOMB, err);
}

/* ---- runs ---------------------------------------------------------------------- */

static int cmp_rec(const void *a, const void *b)
{
	const rec *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	if (x->key || y->key) { /* general mode */
		if (x->klen != y->klen)
			return x->klen < y->klen ? -1 : 1;
		int c = memcmp(x->key, y->key, x->klen);
		if (c)
			return c;
	} else if (x->k != y->k) {
		return x->k < y->k ? -1 : 1;
	}
	return x->age > y->age ? -1 : x->age < y->age; /* newest first */
}

static bool same_key(const rec *x, const rec *y)
{
	if (x->h != y->h)
		return false;
	if (x->key)
		return x->klen == y->klen && !memcmp(x->key, y->key, x->klen);
	return x->k == y->k;
}

static void bloom_add(run *r, uint64_t h)
{
	uint64_t a = h, b = (h >> 32) | (h << 32);
	b = floe_hash_u64(b) | 1;
	for (int i = 0; i < 4; i++) {
		uint64_t bit = (a + (uint64_t)i * b) % r->bloom_bits;
		r->bloom[bit >> 3] |= (uint8_t)(1u << (bit & 7));
	}
}

static bool bloom_has(const run *r, uint64_t h)
{
	uint64_t a = h, b = (h >> 32) | (h << 32);
	b = floe_hash_u64(b) | 1;
	for (int i = 0; i < 4; i++) {
		uint64_t bit = (a + (uint64_t)i * b) % r->bloom_bits;
		if (!(r->bloom[bit >> 3] & (1u << (bit & 7))))
			return false;
	}
	return true;
}

static int pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t w = pwrite(fd, b, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return FLOE_EIO;
		b += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return FLOE_OK;
}

static int pread_all(int fd, void *p, size_t n, uint64_t off)
{
	uint8_t *b = p;
	while (n) {
		ssize_t r = pread(fd, b, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return FLOE_EIO;
		b += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return FLOE_OK;
}

/* Write sorted records as a run. */
static int write_run(floe_key_index *ix, const rec *rs, size_t n, run *out, floe_error *err)
{
	char path[600];
	int rc = FLOE_OK;
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/floe-keyindex-XXXXXX", ix->dir) >= sizeof(path))
		return floe_error_set(err, FLOE_EINVAL, "key index: spill path too long");
	int fd = mkstemp(path);
	if (fd < 0)
		return floe_error_set(err, FLOE_EIO, "key index: cannot create a spill file in %s: %s",
				      ix->dir, strerror(errno));
	unlink(path);
	out->fd = fd;
	out->n = n;
	out->n_blocks = (n + BLOCK - 1) / BLOCK;
	out->bloom_bits = (uint64_t)n * 10 + 64;
	out->first = floe_calloc(out->n_blocks + 1, 8);
	out->bloom = floe_calloc((size_t)(out->bloom_bits / 8 + 1), 1);
	if (!out->first || !out->bloom) {
		run_free(out);
		return floe_error_oom(err);
	}
	size_t rsz = rec_size(ix);
	out->keys_at = (uint64_t)n * rsz;
	floe_buf b;
	floe_buf_init(&b, 0);
	uint64_t koff = 0;
	uint64_t off = 0;
	/* records, flushed every 64 KiB; keys after them (general mode) */
	for (size_t i = 0; i < n && !rc; i++) {
		if (i % BLOCK == 0)
			out->first[i / BLOCK] = rs[i].h;
		bloom_add(out, rs[i].h);
		if (ix->exact) {
			rc = floe_buf_append(&b, &rs[i].k, 8);
			rc = rc ? rc : floe_buf_append(&b, &rs[i].v, 8);
		} else {
			rc = floe_buf_append(&b, &rs[i].h, 8);
			rc = rc ? rc : floe_buf_append(&b, &rs[i].v, 8);
			rc = rc ? rc : floe_buf_append(&b, &koff, 8);
			koff += 4 + rs[i].klen;
		}
		if (!rc && b.len >= 65536) {
			rc = pwrite_all(fd, b.data, b.len, off);
			off += b.len;
			floe_buf_clear(&b);
		}
	}
	for (size_t i = 0; !ix->exact && i < n && !rc; i++) {
		rc = floe_buf_append(&b, &rs[i].klen, 4);
		rc = rc ? rc : floe_buf_append(&b, rs[i].key, rs[i].klen);
		if (!rc && b.len >= 65536) {
			rc = pwrite_all(fd, b.data, b.len, off);
			off += b.len;
			floe_buf_clear(&b);
		}
	}
	if (!rc && b.len)
		rc = pwrite_all(fd, b.data, b.len, off);
	floe_buf_reset(&b);
	if (rc) {
		run_free(out);
		return rc == FLOE_EIO ? floe_error_set(err, rc, "key index: writing a spill file: %s",
						       strerror(errno))
				      : floe_error_oom(err);
	}
	return FLOE_OK;
}

/* Look h (and the key) up in run r: 1 found (*v), 0 not, < 0 error. */
static int run_get(floe_key_index *ix, run *r, uint64_t h, const uint8_t *key, size_t klen,
		   uint64_t k, uint64_t *v, floe_error *err)
{
	if (!r->n || !bloom_has(r, h))
		return 0;
	/* the last block whose first hash <= h, and the ones before while equal */
	size_t lo = 0, hi = r->n_blocks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->first[mid] <= h)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	size_t b = lo - 1;
	while (b > 0 && r->first[b] == h)
		b--; /* equal hashes may start in an earlier block */
	size_t rsz = rec_size(ix);
	for (; b < r->n_blocks && r->first[b] <= h; b++) {
		size_t start = b * BLOCK, cnt = r->n - start < BLOCK ? r->n - start : BLOCK;
		if (cnt * rsz > ix->cap_blk) {
			uint8_t *nb = floe_realloc(ix->blk, BLOCK * 24);
			if (!nb)
				return floe_error_oom(err);
			ix->blk = nb;
			ix->cap_blk = BLOCK * 24;
		}
		ix->st.disk_reads++;
		if (pread_all(r->fd, ix->blk, cnt * rsz, (uint64_t)start * rsz))
			return floe_error_set(err, FLOE_EIO, "key index: reading a spill file: %s",
					      strerror(errno));
		for (size_t i = 0; i < cnt; i++) {
			const uint8_t *p = ix->blk + i * rsz;
			uint64_t a, val;
			memcpy(&a, p, 8);
			memcpy(&val, p + 8, 8);
			if (ix->exact) {
				if (a == k) {
					*v = val;
					return 1;
				}
				continue;
			}
			if (a != h)
				continue;
			uint64_t ko;
			uint32_t l;
			memcpy(&ko, p + 16, 8);
			if (pread_all(r->fd, &l, 4, r->keys_at + ko))
				return floe_error_set(err, FLOE_EIO, "key index: reading a spill file");
			if (l != klen)
				continue;
			uint8_t stackbuf[256];
			uint8_t *kb = l <= sizeof(stackbuf) ? stackbuf : floe_malloc(l);
			if (!kb)
				return floe_error_oom(err);
			int rr = pread_all(r->fd, kb, l, r->keys_at + ko + 4);
			bool same = !rr && !memcmp(kb, key, l);
			if (kb != stackbuf)
				floe_free(kb);
			if (rr)
				return floe_error_set(err, FLOE_EIO, "key index: reading a spill file");
			if (same) {
				*v = val;
				return 1;
			}
		}
	}
	return 0;
}

/* Read every record of run r back (merging). Keys in *keys (general). */
static int run_read_all(floe_key_index *ix, run *r, rec **out, floe_buf *keys, floe_error *err)
{
	size_t rsz = rec_size(ix);
	uint8_t *all = floe_malloc(r->n * rsz + 1);
	rec *rs = floe_calloc(r->n + 1, sizeof(rec));
	if (!all || !rs) {
		floe_free(all);
		floe_free(rs);
		return floe_error_oom(err);
	}
	int rc = pread_all(r->fd, all, r->n * rsz, 0);
	for (size_t i = 0; i < r->n && !rc; i++) {
		const uint8_t *p = all + i * rsz;
		if (ix->exact) {
			memcpy(&rs[i].k, p, 8);
			memcpy(&rs[i].v, p + 8, 8);
			rs[i].h = floe_hash_u64(rs[i].k);
			continue;
		}
		uint64_t ko;
		uint32_t l;
		memcpy(&rs[i].h, p, 8);
		memcpy(&rs[i].v, p + 8, 8);
		memcpy(&ko, p + 16, 8);
		if ((rc = pread_all(r->fd, &l, 4, r->keys_at + ko)))
			break;
		size_t at = keys->len;
		if ((rc = floe_buf_reserve(keys, l)))
			break;
		if ((rc = pread_all(r->fd, keys->data + at, l, r->keys_at + ko + 4)))
			break;
		keys->len += l;
		rs[i].klen = l;
		rs[i].koff = at; /* the buffer may still move */
	}
	floe_free(all);
	if (rc) {
		floe_free(rs);
		return rc == FLOE_ENOMEM ? floe_error_oom(err)
					 : floe_error_set(err, FLOE_EIO, "key index: reading a spill file");
	}
	*out = rs;
	return FLOE_OK;
}

/* Merge every run into one (newest wins; tombstones dropped: all runs are
 * in the merge and memory is newer still). */
static int merge_runs(floe_key_index *ix, floe_error *err)
{
	rec *all = NULL;
	size_t n = 0;
	floe_buf keys;
	floe_buf_init(&keys, 0);
	int rc = FLOE_OK;
	for (size_t i = 0; i < ix->n_runs && !rc; i++) {
		rec *rs = NULL;
		if ((rc = run_read_all(ix, &ix->runs[i], &rs, &keys, err)))
			break;
		rec *na = floe_realloc(all, (n + ix->runs[i].n + 1) * sizeof(rec));
		if (!na) {
			floe_free(rs);
			rc = floe_error_oom(err);
			break;
		}
		all = na;
		for (size_t j = 0; j < ix->runs[i].n; j++) {
			rs[j].age = (uint32_t)i;
			all[n + j] = rs[j];
		}
		n += ix->runs[i].n;
		floe_free(rs);
	}
	if (!rc && !ix->exact)
		for (size_t i = 0; i < n; i++)
			all[i].key = keys.data + all[i].koff;
	if (!rc)
		qsort(all, n, sizeof(rec), cmp_rec);
	size_t m = 0;
	for (size_t i = 0; i < n && !rc;) {
		size_t j = i + 1;
		while (j < n && same_key(&all[j], &all[i]))
			j++;
		if (all[i].v != TOMB)
			all[m++] = all[i];
		i = j;
	}
	run nr;
	if (!rc)
		rc = write_run(ix, all, m, &nr, err);
	floe_free(all);
	floe_buf_reset(&keys);
	if (rc)
		return rc;
	for (size_t i = 0; i < ix->n_runs; i++)
		run_free(&ix->runs[i]);
	ix->runs[0] = nr;
	ix->n_runs = 1;
	ix->st.spilled = m;
	return FLOE_OK;
}

static int spill(floe_key_index *ix, floe_error *err)
{
	rec *rs = floe_calloc(ix->used + 1, sizeof(rec));
	size_t n = 0;
	int rc;
	if (!rs)
		return floe_error_oom(err);
	for (size_t i = 0; i < ix->cap; i++) {
		slot *s = &ix->slots[i];
		if (!s->v)
			continue;
		rec *r = &rs[n++];
		r->v = s->v;
		if (ix->exact) {
			r->k = s->k;
			r->h = floe_hash_u64(s->k);
		} else {
			arena_key(ix, s->k, &r->h, &r->key, &r->klen);
		}
	}
	qsort(rs, n, sizeof(rec), cmp_rec);
	rc = write_run(ix, rs, n, &ix->runs[ix->n_runs], err);
	floe_free(rs);
	if (rc)
		return rc;
	ix->n_runs++;
	ix->st.spills++;
	ix->st.spilled += n;
	floe_free(ix->slots); /* regrown from small: the budget holds */
	ix->slots = NULL;
	ix->cap = 0;
	ix->used = 0;
	floe_buf_reset(&ix->arena);
	if (ix->n_runs > MAX_RUNS)
		return merge_runs(ix, err);
	return FLOE_OK;
}

int floe_key_index_get(floe_key_index *ix, const uint8_t *key, size_t klen, bool *found,
		       uint32_t *file_id, uint64_t *pos, floe_error *err)
{
	bool is_null = false, hit;
	uint64_t k = 0, v = 0;
	*found = false;
	ix->st.lookups++;
	if (ix->exact) {
		if (key_exact(key, klen, &is_null, &k))
			return floe_error_set(err, FLOE_EINVAL, "key index: not a one-value key");
		if (is_null) {
			v = ix->null_v;
			goto have;
		}
	}
	uint64_t h = hash_of(ix, key, klen, k);
	if (ix->cap) {
		slot *s = find_slot(ix, h, key, klen, k, &hit);
		if (hit) {
			v = s->v;
			goto have;
		}
	}
	for (size_t i = ix->n_runs; i-- > 0;) {
		int r = run_get(ix, &ix->runs[i], h, key, klen, k, &v, err);
		if (r < 0)
			return r;
		if (r)
			goto have;
	}
	return FLOE_OK;
have:
	if (v && v != TOMB) {
		*found = true;
		*file_id = (uint32_t)((v >> 40) - 1);
		*pos = v & FLOE_KEY_INDEX_MAX_POS;
	}
	return FLOE_OK;
}

void floe_key_index_get_stats(const floe_key_index *ix, floe_key_index_stats *out)
{
	*out = ix->st;
	out->entries_mem = ix->used;
	out->memory = mem_bytes(ix);
	out->runs = ix->n_runs;
}

/* ---- persist hook (helper-idxpersist: write_index_persist.c) --------------------- */

/* Whether a key of run i (hash h) is shadowed by memory or a newer run. */
static int shadowed(floe_key_index *ix, size_t i, uint64_t h, const uint8_t *key, size_t klen,
		    uint64_t k, bool *out, floe_error *err)
{
	bool hit = false;
	uint64_t v;
	*out = false;
	if (ix->cap) {
		(void)find_slot(ix, h, key, klen, k, &hit);
		if (hit) {
			*out = true;
			return FLOE_OK;
		}
	}
	for (size_t j = i + 1; j < ix->n_runs; j++) {
		int r = run_get(ix, &ix->runs[j], h, key, klen, k, &v, err);
		if (r < 0)
			return r;
		if (r) {
			*out = true;
			return FLOE_OK;
		}
	}
	return FLOE_OK;
}

static int emit(uint64_t v, const uint8_t *key, size_t klen, floe_key_index_fn fn, void *payload)
{
	if (!v || v == TOMB)
		return 0;
	return fn(payload, key, klen, (uint32_t)((v >> 40) - 1), v & FLOE_KEY_INDEX_MAX_POS);
}

int floe_key_index_foreach(floe_key_index *ix, floe_key_index_fn fn, void *payload,
			   floe_error *err)
{
	uint8_t kb[9] = {1};
	int rc = FLOE_OK;
	if (ix->exact && ix->null_v) {
		static const uint8_t null_key[1] = {0};
		if ((rc = emit(ix->null_v, null_key, 1, fn, payload)))
			return rc;
	}
	for (size_t i = 0; i < ix->cap && !rc; i++) {
		const slot *s = &ix->slots[i];
		if (!s->v || s->v == TOMB)
			continue;
		if (ix->exact) {
			memcpy(kb + 1, &s->k, 8);
			rc = emit(s->v, kb, 9, fn, payload);
		} else {
			uint64_t h;
			const uint8_t *key;
			uint32_t klen;
			arena_key(ix, s->k, &h, &key, &klen);
			rc = emit(s->v, key, klen, fn, payload);
		}
	}
	/* runs: a record counts unless memory or a newer run holds its key */
	for (size_t i = ix->n_runs; i-- > 0 && !rc;) {
		rec *rs = NULL;
		floe_buf keys;
		floe_buf_init(&keys, 0);
		if ((rc = run_read_all(ix, &ix->runs[i], &rs, &keys, err))) {
			floe_buf_reset(&keys);
			return rc;
		}
		for (size_t j = 0; j < ix->runs[i].n && !rc; j++) {
			const uint8_t *key = ix->exact ? kb : keys.data + rs[j].koff;
			size_t klen = ix->exact ? 9 : rs[j].klen;
			bool sh;
			if (ix->exact)
				memcpy(kb + 1, &rs[j].k, 8);
			if ((rc = shadowed(ix, i, rs[j].h, key, klen, rs[j].k, &sh, err)))
				break;
			if (!sh)
				rc = emit(rs[j].v, key, klen, fn, payload);
		}
		floe_free(rs);
		floe_buf_reset(&keys);
	}
	return rc;
}
