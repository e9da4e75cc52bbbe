/*
 * stream_range.c — RANGE distribution: per-checkpoint key statistics (a
 * count map, a reservoir sample past a cardinality cap) and the assignment
 * the coordinator computes from them (stream_range.h).
 */
#include "stream/stream_range.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/hash.h"
#include "util/rand.h"

/* ---- keys ---------------------------------------------------------------------------- */

void stream_range_key_clear(stream_range_key *k)
{
	k->n = 0;
}

static void put(stream_range_key *k, uint8_t c, bool desc)
{
	if (k->n < STREAM_RANGE_KEY_MAX)
		k->b[k->n++] = desc ? (uint8_t)~c : c;
}

static void put_be(stream_range_key *k, uint64_t v, int bytes, bool desc)
{
	for (int i = bytes - 1; i >= 0; i--)
		put(k, (uint8_t)(v >> (8 * i)), desc);
}

/*
 * One value, in bytes that compare (memcmp) as the values do: a null first,
 * integers big-endian with the sign bit flipped, floats by their IEEE bits
 * made monotone, strings and binaries with 0x00 escaped and a 0x00 0x00 end.
 */
void stream_range_key_append(stream_range_key *k, const floe_value *v, bool desc)
{
	if (v->is_null) {
		put(k, 0, desc);
		return;
	}
	put(k, 1, desc);
	switch (v->type) {
	case FLOE_T_BOOLEAN:
		put(k, v->v.b ? 1 : 0, desc);
		break;
	case FLOE_T_INT:
	case FLOE_T_DATE:
		put_be(k, (uint32_t)v->v.i32 ^ 0x80000000u, 4, desc);
		break;
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		put_be(k, (uint64_t)v->v.i64 ^ 0x8000000000000000ull, 8, desc);
		break;
	case FLOE_T_FLOAT: {
		uint32_t u;
		memcpy(&u, &v->v.f32, 4);
		u = (u & 0x80000000u) ? ~u : u | 0x80000000u;
		put_be(k, u, 4, desc);
		break;
	}
	case FLOE_T_DOUBLE: {
		uint64_t u;
		memcpy(&u, &v->v.f64, 8);
		u = (u & 0x8000000000000000ull) ? ~u : u | 0x8000000000000000ull;
		put_be(k, u, 8, desc);
		break;
	}
	case FLOE_T_DECIMAL: {
		floe_i128 d = v->v.dec;
		uint64_t hi = (uint64_t)(d >> 64), lo = (uint64_t)d;
		put_be(k, hi ^ 0x8000000000000000ull, 8, desc);
		put_be(k, lo, 8, desc);
		break;
	}
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
	case FLOE_T_FIXED:
	case FLOE_T_UUID:
		for (size_t i = 0; i < v->v.bin.n && k->n < STREAM_RANGE_KEY_MAX; i++) {
			put(k, v->v.bin.p[i], desc);
			if (v->v.bin.p[i] == 0)
				put(k, 0xff, desc);
		}
		put(k, 0, desc);
		put(k, 0, desc);
		break;
	default: /* no order of its own: its hash keeps equal values together */
		put_be(k, floe_value_hash(v), 8, desc);
		break;
	}
}

int stream_range_key_cmp(const stream_range_key *a, const stream_range_key *b)
{
	size_t n = a->n < b->n ? a->n : b->n;
	int c = memcmp(a->b, b->b, n);
	if (c)
		return c;
	return a->n < b->n ? -1 : a->n > b->n;
}

static uint64_t key_hash(const stream_range_key *k)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < k->n; i++)
		h = (h ^ k->b[i]) * 0x100000001b3ull;
	return floe_hash_u64(h ^ k->n);
}

static bool key_eq(const stream_range_key *a, const stream_range_key *b)
{
	return a->n == b->n && !memcmp(a->b, b->b, a->n);
}

/* ---- statistics ---------------------------------------------------------------------- */

void stream_range_stats_init(stream_range_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->rng = 0x9e3779b97f4a7c15ull;
}

void stream_range_stats_free(stream_range_stats *s)
{
	floe_free(s->keys);
	floe_free(s->counts);
	stream_range_stats_init(s);
}

void stream_range_stats_reset(stream_range_stats *s)
{
	if (s->counts)
		memset(s->counts, 0, s->slots * sizeof(*s->counts));
	s->n = 0;
	s->total = 0;
	s->sampled = false;
}

static uint64_t next_rand(stream_range_stats *s)
{
	/* xorshift64*: the sample needs spread, not secrecy */
	uint64_t x = s->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static int ensure_slots(stream_range_stats *s)
{
	if (s->keys)
		return FLOE_OK;
	size_t slots = 2 * STREAM_RANGE_MAP_CAP > STREAM_RANGE_SAMPLE ? 2 * STREAM_RANGE_MAP_CAP
								      : STREAM_RANGE_SAMPLE;
	s->keys = floe_calloc(slots, sizeof(*s->keys));
	s->counts = floe_calloc(slots, sizeof(*s->counts));
	if (!s->keys || !s->counts) {
		floe_free(s->keys);
		floe_free(s->counts);
		s->keys = NULL;
		s->counts = NULL;
		return FLOE_ENOMEM;
	}
	s->slots = slots;
	return FLOE_OK;
}

/* One row into the reservoir (Algorithm R over the rows seen). */
static void sample_one(stream_range_stats *s, const stream_range_key *k)
{
	s->total++;
	if (s->n < STREAM_RANGE_SAMPLE) {
		s->keys[s->n++] = *k;
		return;
	}
	uint64_t j = next_rand(s) % (uint64_t)s->total;
	if (j < STREAM_RANGE_SAMPLE)
		s->keys[j] = *k;
}

/* The map becomes a sample: each counted key enters as its rows would have. */
static void to_sample(stream_range_stats *s)
{
	size_t slots = s->slots;
	stream_range_key *old = floe_malloc(slots * sizeof(*old));
	int64_t *cnt = floe_malloc(slots * sizeof(*cnt));
	size_t m = 0;
	if (old && cnt) {
		for (size_t i = 0; i < slots; i++)
			if (s->counts[i] > 0) {
				old[m] = s->keys[i];
				cnt[m++] = s->counts[i];
			}
	}
	memset(s->counts, 0, slots * sizeof(*s->counts));
	s->n = 0;
	s->total = 0;
	s->sampled = true;
	/* interleave the keys so a cut reservoir is not biased by the map's order */
	for (bool any = true; any && old && cnt;) {
		any = false;
		for (size_t i = 0; i < m; i++)
			if (cnt[i] > 0) {
				int64_t take = cnt[i] > 64 ? 64 : cnt[i];
				for (int64_t r = 0; r < take; r++)
					sample_one(s, &old[i]);
				cnt[i] -= take;
				any = any || cnt[i] > 0;
			}
	}
	floe_free(old);
	floe_free(cnt);
}

int stream_range_stats_add(stream_range_stats *s, const stream_range_key *k, int64_t n)
{
	if (n <= 0)
		return FLOE_OK;
	if (ensure_slots(s))
		return FLOE_ENOMEM;
	if (s->sampled) {
		for (int64_t r = 0; r < n; r++)
			sample_one(s, k);
		return FLOE_OK;
	}
	size_t mask = s->slots - 1, i = (size_t)key_hash(k) & mask;
	while (s->counts[i] > 0 && !key_eq(&s->keys[i], k))
		i = (i + 1) & mask;
	if (s->counts[i] == 0) {
		if (s->n >= STREAM_RANGE_MAP_CAP) {
			to_sample(s);
			return stream_range_stats_add(s, k, n);
		}
		s->keys[i] = *k;
		s->n++;
	}
	s->counts[i] += n;
	s->total += n;
	return FLOE_OK;
}

int stream_range_stats_merge(stream_range_stats *dst, const stream_range_stats *src)
{
	if (src->total == 0)
		return FLOE_OK;
	if (ensure_slots(dst))
		return FLOE_ENOMEM;
	if (!src->sampled) {
		for (size_t i = 0; i < src->slots; i++)
			if (src->counts[i] > 0 && stream_range_stats_add(dst, &src->keys[i], src->counts[i]))
				return FLOE_ENOMEM;
		return FLOE_OK;
	}
	if (!dst->sampled)
		to_sample(dst);
	/* two reservoirs: each slot of the merged one comes from a side with
	 * the probability of that side's share of the rows */
	int64_t dt = dst->total, all = dst->total + src->total;
	size_t n = dst->n;
	stream_range_key *mine = floe_memdup(dst->keys, n * sizeof(*mine));
	if (n && !mine)
		return FLOE_ENOMEM;
	size_t out = 0, mi = 0, si = 0;
	while (out < STREAM_RANGE_SAMPLE && (mi < n || si < src->n)) {
		bool from_src = mi >= n || (si < src->n &&
					   (int64_t)(next_rand(dst) % (uint64_t)all) >= dt);
		dst->keys[out++] = from_src ? src->keys[si++] : mine[mi++];
	}
	floe_free(mine);
	dst->n = out;
	dst->total = all;
	return FLOE_OK;
}

/* ---- the assignment ---------------------------------------------------------------------- */

typedef struct wkey {
	stream_range_key key;
	double w;
} wkey;

static int wkey_cmp(const void *a, const void *b)
{
	return stream_range_key_cmp(&((const wkey *)a)->key, &((const wkey *)b)->key);
}

void stream_range_assign_free(stream_range_assign *a)
{
	if (!a)
		return;
	floe_free(a->e);
	floe_free(a->task);
	floe_free(a->cum);
	floe_free(a->weight);
	floe_free(a);
}

int stream_range_assign_new(stream_range_assign **out, const stream_range_stats *s, int tasks)
{
	*out = NULL;
	if (s->total == 0 || s->n == 0 || tasks < 1)
		return FLOE_OK;
	wkey *w = floe_malloc(s->n * sizeof(*w));
	if (!w)
		return FLOE_ENOMEM;
	size_t m = 0;
	if (s->sampled) {
		double each = (double)s->total / (double)s->n;
		for (size_t i = 0; i < s->n; i++)
			w[m++] = (wkey){s->keys[i], each};
	} else {
		for (size_t i = 0; i < s->slots; i++)
			if (s->counts[i] > 0)
				w[m++] = (wkey){s->keys[i], (double)s->counts[i]};
	}
	qsort(w, m, sizeof(*w), wkey_cmp);
	/* a sample's repeated keys: one key with their weight */
	size_t u = 0;
	for (size_t i = 0; i < m; i++) {
		if (u && stream_range_key_cmp(&w[u - 1].key, &w[i].key) == 0)
			w[u - 1].w += w[i].w;
		else
			w[u++] = w[i];
	}
	m = u;
	stream_range_assign *a = floe_calloc(1, sizeof(*a));
	if (a) {
		a->e = floe_calloc(m, sizeof(*a->e));
		a->task = floe_calloc(m + (size_t)tasks, sizeof(*a->task));
		a->cum = floe_calloc(m + (size_t)tasks, sizeof(*a->cum));
		a->weight = floe_calloc((size_t)tasks, sizeof(*a->weight));
	}
	if (!a || !a->e || !a->task || !a->cum || !a->weight) {
		stream_range_assign_free(a);
		floe_free(w);
		return FLOE_ENOMEM;
	}
	a->tasks = tasks;
	a->n = m;
	a->from_sample = s->sampled;
	/* walk the keys in order, filling each task up to the target; a key
	 * crossing a task's end continues on the next (a split key) */
	double total = 0;
	for (size_t i = 0; i < m; i++)
		total += w[i].w;
	double target = total / tasks, room = target;
	double *tw = floe_calloc((size_t)tasks, sizeof(double));
	if (!tw) {
		stream_range_assign_free(a);
		floe_free(w);
		return FLOE_ENOMEM;
	}
	int cur = 0;
	size_t slot = 0;
	for (size_t i = 0; i < m; i++) {
		stream_range_entry *e = &a->e[i];
		e->key = w[i].key;
		e->first = (int)slot;
		double left = w[i].w, key_w = w[i].w, done = 0;
		for (;;) {
			/* a task already full moves on (the last takes the rest) */
			if (room <= target * 1e-9 && cur < tasks - 1) {
				cur++;
				room = target;
			}
			double take = cur == tasks - 1 || left <= room ? left : room;
			done += take;
			a->task[slot] = cur;
			a->cum[slot] = key_w > 0 ? done / key_w : 1.0;
			slot++;
			tw[cur] += take;
			room -= take;
			left -= take;
			if (left <= key_w * 1e-9)
				break;
		}
		a->cum[slot - 1] = 1.0;
		e->n_tasks = (int)slot - e->first;
	}
	a->n_slots = slot;
	for (int t = 0; t < tasks; t++)
		a->weight[t] = llround(tw[t]);
	floe_free(tw);
	floe_free(w);
	*out = a;
	return FLOE_OK;
}

int stream_range_route(const stream_range_assign *a, const stream_range_key *k, uint64_t *seq)
{
	/* the first entry whose key is >= k */
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (stream_range_key_cmp(&a->e[mid].key, k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == a->n) /* past the last key: the last task's range */
		return a->task[a->n_slots - 1];
	const stream_range_entry *e = &a->e[lo];
	if (stream_range_key_cmp(&e->key, k) != 0) /* between keys: the range it falls in */
		return a->task[e->first];
	if (e->n_tasks == 1)
		return a->task[e->first];
	/* a split key: the rows in turn, a low-discrepancy walk over its shares */
	uint64_t x = (*seq)++ * 0x9e3779b97f4a7c15ull;
	double f = (double)(x >> 11) * (1.0 / 9007199254740992.0);
	for (int i = 0; i < e->n_tasks; i++)
		if (f < a->cum[e->first + i])
			return a->task[e->first + i];
	return a->task[e->first + e->n_tasks - 1];
}
