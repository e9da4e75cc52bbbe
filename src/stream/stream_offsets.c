/*
 * stream_offsets.c — split positions (the source state a checkpoint records
 * in the snapshot summary as JSON), and blocks.
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "json/json.h"
#include "stream/stream_source.h"

void stream_offsets_init(stream_offsets *o)
{
	memset(o, 0, sizeof(*o));
	floe_hmap_init(&o->index);
}

void stream_offsets_reset(stream_offsets *o)
{
	for (size_t i = 0; i < o->n; i++) {
		floe_free(o->items[i].split);
		floe_free(o->items[i].tok);
	}
	floe_free(o->items);
	floe_hmap_reset(&o->index);
	memset(o, 0, sizeof(*o));
	floe_hmap_init(&o->index);
}

int stream_offsets_set(stream_offsets *o, const char *split, int64_t pos)
{
	return stream_offsets_set_tok(o, split, pos, NULL);
}

int stream_offsets_set_tok(stream_offsets *o, const char *split, int64_t pos, const char *tok)
{
	uint64_t idx;
	char *t = NULL;
	if (tok && !(t = floe_strdup(tok)))
		return FLOE_ENOMEM;
	if (floe_hmap_get_str(&o->index, split, &idx)) {
		o->items[idx].pos = pos;
		floe_free(o->items[idx].tok);
		o->items[idx].tok = t;
		return FLOE_OK;
	}
	if (FLOE_ARRAY_RESERVE(o->items, o->cap, o->n + 1)) {
		floe_free(t);
		return FLOE_ENOMEM;
	}
	char *s = floe_strdup(split);
	if (!s || floe_hmap_put_str(&o->index, split, o->n)) {
		floe_free(s);
		floe_free(t);
		return FLOE_ENOMEM;
	}
	o->items[o->n].split = s;
	o->items[o->n].pos = pos;
	o->items[o->n].tok = t;
	o->n++;
	return FLOE_OK;
}

const char *stream_offsets_tok(const stream_offsets *o, const char *split)
{
	uint64_t idx;
	if (!floe_hmap_get_str(&o->index, split, &idx))
		return NULL;
	return o->items[idx].tok;
}

int64_t stream_offsets_get(const stream_offsets *o, const char *split, int64_t dflt)
{
	uint64_t idx;
	if (!floe_hmap_get_str(&o->index, split, &idx))
		return dflt;
	return o->items[idx].pos;
}

bool stream_offsets_has(const stream_offsets *o, const char *split)
{
	return floe_hmap_get_str(&o->index, split, NULL);
}

int stream_offsets_copy(stream_offsets *dst, const stream_offsets *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (stream_offsets_set_tok(dst, src->items[i].split, src->items[i].pos,
					   src->items[i].tok))
			return FLOE_ENOMEM;
	return FLOE_OK;
}

int stream_offsets_min(stream_offsets *acc, const stream_offsets *o)
{
	/* splits o lacks start at 0 for o's table */
	for (size_t i = 0; i < acc->n; i++)
		if (!stream_offsets_has(o, acc->items[i].split)) {
			acc->items[i].pos = 0;
			floe_free(acc->items[i].tok);
			acc->items[i].tok = NULL;
		}
	for (size_t i = 0; i < o->n; i++) {
		uint64_t idx;
		if (floe_hmap_get_str(&acc->index, o->items[i].split, &idx)) {
			if (o->items[i].pos < acc->items[idx].pos &&
			    stream_offsets_set_tok(acc, o->items[i].split, o->items[i].pos,
						   o->items[i].tok))
				return FLOE_ENOMEM;
		}
	}
	return FLOE_OK;
}

int stream_offsets_write_json(const stream_offsets *o, floe_buf *out)
{
	floe_jw w;
	floe_jw_init(&w, out, 0);
	floe_jw_obj_begin(&w);
	for (size_t i = 0; i < o->n; i++) {
		if (!o->items[i].tok) {
			floe_jw_kv_i64(&w, o->items[i].split, o->items[i].pos);
			continue;
		}
		floe_jw_key(&w, o->items[i].split);
		floe_jw_obj_begin(&w);
		floe_jw_kv_i64(&w, "n", o->items[i].pos);
		floe_jw_kv_str(&w, "seq", o->items[i].tok);
		floe_jw_obj_end(&w);
	}
	floe_jw_obj_end(&w);
	return floe_jw_finish(&w);
}

int stream_offsets_parse_json(stream_offsets *o, const char *p, size_t n, floe_error *err)
{
	floe_arena a;
	floe_json *j = NULL;
	int rc;
	floe_arena_init(&a, 16384);
	if ((rc = floe_json_parse(&j, &a, p, n, NULL, err)))
		goto done;
	if (j->type != FLOE_JSON_OBJECT) {
		rc = floe_error_corrupt(err, "source offsets must be a JSON object");
		goto done;
	}
	for (floe_json *m = j->child; m; m = m->next) {
		int64_t v;
		const char *tok = NULL;
		const floe_json *nv = m;
		if (m->type == FLOE_JSON_OBJECT) {
			const floe_json *sq = floe_json_get(m, "seq");
			nv = floe_json_get(m, "n");
			if (sq && sq->type == FLOE_JSON_STRING)
				tok = sq->s;
			if (!nv || !tok) {
				rc = floe_error_corrupt(err, "source offset of '%.*s' is an object without "
							     "\"n\" and \"seq\"",
							(int)(m->key_len > 200 ? 200 : m->key_len), m->key);
				goto done;
			}
		}
		if (floe_json_as_i64(nv, &v) || v < 0) {
			rc = floe_error_corrupt(err, "source offset of '%.*s' is not a non-negative integer",
					    (int)(m->key_len > 200 ? 200 : m->key_len), m->key);
			goto done;
		}
		char *k = floe_strndup(m->key, m->key_len);
		if (!k || stream_offsets_set_tok(o, k, v, tok)) {
			floe_free(k);
			rc = floe_error_oom(err);
			goto done;
		}
		floe_free(k);
	}
done:
	floe_arena_reset(&a);
	return rc;
}

stream_map *stream_map_file(int fd, size_t len, int64_t from)
{
	stream_map *m;
	void *p;
	if (len == 0)
		return NULL;
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, len, MADV_SEQUENTIAL);
	m = floe_calloc(1, sizeof(*m));
	if (!m) {
		munmap(p, len);
		return NULL;
	}
	if (floe_mutex_init(&m->mu)) {
		munmap(p, len);
		floe_free(m);
		return NULL;
	}
	m->base = p;
	m->len = len;
	m->done = from;
	atomic_store(&m->refs, 1);
	return m;
}

void stream_map_consumed(stream_map *m, int64_t a, int64_t b)
{
	int64_t from = -1, to = -1;
	if (!m || b <= a)
		return;
	floe_mutex_lock(&m->mu);
	if (a <= m->done) {
		from = m->done;
		if (b > m->done)
			m->done = b;
		for (size_t i = 0; i < m->n_pend;) {
			if (m->pend[i].a <= m->done) {
				if (m->pend[i].b > m->done)
					m->done = m->pend[i].b;
				m->pend[i] = m->pend[--m->n_pend];
				i = 0; /* the new end may reach ranges already passed over */
			} else {
				i++;
			}
		}
		to = m->done;
	} else if (m->n_pend < STREAM_MAP_PENDING) {
		m->pend[m->n_pend].a = a;
		m->pend[m->n_pend++].b = b;
	} /* else: no longer tracked; the prefix stops growing (each block's
	     inner pages still go when it is consumed) */
	floe_mutex_unlock(&m->mu);
	if (to > from) {
		/* every page wholly before `to` is consumed */
		uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
		uintptr_t lo = ((uintptr_t)m->base + (uintptr_t)from) & ~(pg - 1);
		uintptr_t hi = ((uintptr_t)m->base + (uintptr_t)to) & ~(pg - 1);
		if (lo < (uintptr_t)m->base)
			lo = (uintptr_t)m->base;
		if (hi > lo)
			(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
	}
}

void stream_map_ref(stream_map *m)
{
	if (m)
		atomic_fetch_add(&m->refs, 1);
}

void stream_map_unref(stream_map *m)
{
	if (m && atomic_fetch_sub(&m->refs, 1) == 1) {
		munmap(m->base, m->len);
		floe_mutex_destroy(&m->mu);
		floe_free(m);
	}
}

void stream_block_reset(stream_block *b)
{
	if (!b)
		return;
	if (b->map) {
		/* the pages wholly inside a consumed block leave the resident set
		 * (they stay in the page cache); a block's records are read once */
		uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
		uintptr_t lo = ((uintptr_t)b->data + pg - 1) & ~(pg - 1);
		uintptr_t hi = ((uintptr_t)b->data + b->len) & ~(pg - 1);
		if (hi > lo)
			(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
		stream_map_consumed(b->map, (int64_t)(b->data - b->map->base),
				    (int64_t)(b->data - b->map->base) + (int64_t)b->len);
		stream_map_unref(b->map);
	} else
		floe_free(b->data);
	floe_free(b->msgs);
	if (b->release && b->n_held)
		b->release(b->held, b->n_held);
	floe_free(b->held);
	memset(b, 0, sizeof(*b));
}
