/*
 * write_index_persist.c — the key index as a floe-key-index-v1 Puffin blob
 * (write_index_persist.h: the payload, what is checked).
 *
 * DESIGN: the payload is streamed: header and file list, then entries as
 * the index gives them (floe_delta_index__foreach), buffered 64 KiB at a
 * time with a running CRC-32C, so persisting needs no copy of the index in
 * memory. Reading goes a 1 MiB window at a time: one pass for the CRC,
 * then one decoding, so a torn or tampered file changes nothing (the CRC is
 * checked before any entry is used) but is reported and rebuilt from the
 * table, and loading needs no copy of the blob in memory either.
 */
#include <stdio.h>
#include <string.h>

#include "puffin/puffin_file.h"
#include "puffin/puffin_write.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "write/write_index.h"
#include "write/write_index_persist.h"

#define KIB_MAGIC "FKI1"
#define KIB_VERSION 1u
#define KIB_FLUSH 65536
/* a payload read at most (keys of 10^9 rows at ~15 bytes) */
#define KIB_MAX_BLOB ((size_t)16 << 30)

struct floe_kib_writer {
	floe_output *out;
	floe_puffin_writer *pw;
	floe_buf b;
	uint32_t crc;
	uint64_t n_entries, n_files;
	int64_t blob_off;
	floe_key_index_blob_hdr h;
	char pipeline_id[256];
	int32_t fields[64];
};

static int flush(floe_kib_writer *kw, floe_error *err)
{
	if (!kw->b.len)
		return FLOE_OK;
	kw->crc = floe_crc32c(kw->crc, kw->b.data, kw->b.len);
	int rc = floe_output_write(kw->out, kw->b.data, kw->b.len, err);
	floe_buf_clear(&kw->b);
	return rc;
}

int floe_kib_writer_new(floe_kib_writer **out_kw, floe_output *out,
			const floe_key_index_blob_hdr *h, const char *const *paths, size_t n_paths,
			floe_error *err)
{
	int rc = FLOE_OK;
	*out_kw = NULL;
	if (h->n_fields > 64)
		return floe_error_set(err, FLOE_EINVAL, "key index blob: more than 64 key fields");
	floe_kib_writer *kw = floe_calloc(1, sizeof(*kw));
	if (!kw)
		return floe_error_oom(err);
	floe_buf_init(&kw->b, 0);
	kw->out = out;
	kw->h = *h;
	memcpy(kw->fields, h->field_ids, h->n_fields * sizeof(int32_t));
	kw->h.field_ids = kw->fields;
	snprintf(kw->pipeline_id, sizeof(kw->pipeline_id), "%s", h->pipeline_id ? h->pipeline_id : "");
	kw->h.pipeline_id = NULL;
	kw->n_files = n_paths;
	if ((rc = floe_puffin_writer_new(&kw->pw, out, err)))
		goto fail;
	kw->blob_off = (int64_t)out->pos;
	floe_buf *b = &kw->b;
	int e = floe_buf_append(b, KIB_MAGIC, 4) || floe_buf_put_u32le(b, KIB_VERSION) ||
		floe_buf_put_u64le(b, (uint64_t)h->snapshot_id) ||
		floe_buf_put_u64le(b, (uint64_t)h->parent_id) ||
		floe_buf_put_u64le(b, (uint64_t)h->parent_seq) ||
		floe_buf_put_u32le(b, (uint32_t)h->n_fields);
	for (size_t i = 0; i < h->n_fields && !e; i++)
		e = floe_buf_put_u32le(b, (uint32_t)h->field_ids[i]);
	e = e || floe_buf_put_u32le(b, h->exact ? 1u : 0u) || floe_buf_put_u64le(b, n_paths);
	for (size_t i = 0; i < n_paths && !e && !rc; i++) {
		size_t l = strlen(paths[i]);
		e = l > UINT32_MAX || floe_buf_put_u32le(b, (uint32_t)l) ||
		    floe_buf_append(b, paths[i], l);
		if (!e && b->len >= KIB_FLUSH)
			rc = flush(kw, err);
	}
	if (e)
		rc = floe_error_oom(err);
	if (!rc && (rc = flush(kw, err)) == FLOE_OK) {
		*out_kw = kw;
		return FLOE_OK;
	}
fail:
	floe_kib_writer_free(kw);
	return rc;
}

int floe_kib_writer_entry(floe_kib_writer *kw, const uint8_t *key, size_t klen, uint32_t file_id,
			  uint64_t pos, floe_error *err)
{
	if (file_id >= kw->n_files)
		return floe_error_set(err, FLOE_EINVAL, "key index blob: file %u of %llu", file_id,
				      (unsigned long long)kw->n_files);
	if (floe_buf_put_uvarint(&kw->b, klen) || floe_buf_append(&kw->b, key, klen) ||
	    floe_buf_put_uvarint(&kw->b, file_id) || floe_buf_put_uvarint(&kw->b, pos))
		return floe_error_oom(err);
	kw->n_entries++;
	return kw->b.len >= KIB_FLUSH ? flush(kw, err) : FLOE_OK;
}

int floe_kib_writer_finish(floe_kib_writer *kw, uint64_t *file_size, floe_error *err)
{
	int rc;
	if (floe_buf_put_u64le(&kw->b, kw->n_entries))
		return floe_error_oom(err);
	if ((rc = flush(kw, err)))
		return rc;
	uint8_t c[4];
	memcpy(c, &kw->crc, 4); /* LE hosts */
	if ((rc = floe_output_write(kw->out, c, 4, err)))
		return rc;
	char ent[32], files[32], crc[16];
	snprintf(ent, sizeof(ent), "%llu", (unsigned long long)kw->n_entries);
	snprintf(files, sizeof(files), "%llu", (unsigned long long)kw->n_files);
	snprintf(crc, sizeof(crc), "%08x", kw->crc);
	floe_puffin_prop props[4] = {{"entries", ent},
				     {"files", files},
				     {"crc32c", crc},
				     {"floe.pipeline-id", kw->pipeline_id}};
	floe_puffin_blob meta = {0};
	meta.type = FLOE_KEY_INDEX_BLOB_TYPE;
	meta.fields = kw->fields;
	meta.n_fields = kw->h.n_fields;
	meta.snapshot_id = kw->h.snapshot_id;
	meta.sequence_number = kw->h.parent_seq;
	meta.properties = props;
	meta.n_properties = kw->pipeline_id[0] ? 4 : 3;
	floe_puffin_prop fprops[1] = {{"created-by", "floe"}};
	if ((rc = floe_puffin_writer_add_written(kw->pw, &meta, kw->blob_off,
						 (int64_t)kw->out->pos - kw->blob_off, err)))
		return rc;
	return floe_puffin_writer_finish(kw->pw, fprops, 1, file_size, err);
}

void floe_kib_writer_free(floe_kib_writer *kw)
{
	if (!kw)
		return;
	floe_puffin_writer_free(kw->pw);
	floe_buf_reset(&kw->b);
	floe_free(kw);
}

/* ---- decoding ------------------------------------------------------------------- */

/* A window over the payload [at + lo, end) of an input: bytes are read a
 * window at a time, so a blob of any size is decoded in bounded memory. */
#define WIN 1048576
#define KIB_MAX_KEY ((size_t)16 << 20)

typedef struct win {
	floe_input *in;
	uint64_t end; /* end of the part decoded (before the trailer) */
	uint64_t at;  /* input offset of buf[0] */
	uint8_t *buf;
	size_t cap, lo, hi;
	floe_error *err;
} win;

/* buf[lo..lo+k) valid: 0, 1 past the end, < 0 an error */
static int need(win *w, size_t k)
{
	if (w->hi - w->lo >= k)
		return 0;
	uint64_t pos = w->at + w->lo;
	if (w->end - pos < k)
		return 1;
	size_t have = w->hi - w->lo;
	if (k > w->cap) {
		uint8_t *nb = floe_realloc(w->buf, k);
		if (!nb)
			return floe_error_oom(w->err);
		w->buf = nb;
		w->cap = k;
	}
	memmove(w->buf, w->buf + w->lo, have);
	w->at = pos;
	w->lo = 0;
	w->hi = have;
	uint64_t left = w->end - (w->at + w->hi);
	size_t want = w->cap - w->hi < left ? w->cap - w->hi : (size_t)left;
	int rc = floe_input_read_exact(w->in, w->at + w->hi, w->buf + w->hi, want, w->err);
	if (rc)
		return rc;
	w->hi += want;
	return 0;
}

static int get(win *w, void *out, size_t k)
{
	int r = need(w, k);
	if (r)
		return r;
	memcpy(out, w->buf + w->lo, k);
	w->lo += k;
	return 0;
}

static int uvar(win *w, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		int r = need(w, 1);
		if (r)
			return r;
		uint8_t byte = w->buf[w->lo++];
		*v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return 0;
	}
	return 1;
}

#define BAD(what) floe_error_set(err, FLOE_ECORRUPT, "key index blob '%s': %s", name, what)
/* r from need/get/uvar: past the end is corruption, an error stays itself */
#define CHECK(r, what)                                                                        \
	do {                                                                                  \
		int r_ = (r);                                                                 \
		if (r_ > 0)                                                                   \
			return BAD(what);                                                     \
		if (r_ < 0)                                                                   \
			return r_;                                                            \
	} while (0)

static int decode_win(win *w, const char *name, floe_key_index_blob_hdr *h, floe_arena *a,
		      uint64_t *n_files, uint64_t n_entries, floe_kib_file_fn file_fn,
		      floe_kib_entry_fn entry_fn, void *payload, bool header_only, floe_error *err)
{
	char magic[4];
	uint32_t ver, nf, flags;
	uint64_t u;
	CHECK(get(w, magic, 4), "bad magic");
	if (memcmp(magic, KIB_MAGIC, 4))
		return BAD("bad magic");
	CHECK(get(w, &ver, 4), "truncated header");
	if (ver != KIB_VERSION)
		return BAD("unknown version");
	CHECK(get(w, &u, 8), "truncated header");
	h->snapshot_id = (int64_t)u;
	CHECK(get(w, &u, 8), "truncated header");
	h->parent_id = (int64_t)u;
	CHECK(get(w, &u, 8), "truncated header");
	h->parent_seq = (int64_t)u;
	CHECK(get(w, &nf, 4), "truncated header");
	if (nf > 64)
		return BAD("bad key field count");
	int32_t *ids = floe_arena_calloc(a, nf + 1, sizeof(int32_t));
	if (!ids)
		return floe_error_oom(err);
	for (uint32_t i = 0; i < nf; i++)
		CHECK(get(w, &ids[i], 4), "truncated header");
	h->field_ids = ids;
	h->n_fields = nf;
	CHECK(get(w, &flags, 4), "truncated header");
	if (flags & ~1u)
		return BAD("bad flags");
	h->exact = flags & 1u;
	CHECK(get(w, n_files, 8), "truncated header");
	if (*n_files > (w->end - (w->at + w->lo)) / 4)
		return BAD("bad file count");
	if (header_only)
		return FLOE_OK;
	for (uint64_t i = 0; i < *n_files; i++) {
		uint32_t l;
		CHECK(get(w, &l, 4), "bad file path");
		if (l == 0 || l > KIB_MAX_KEY)
			return BAD("bad file path");
		CHECK(need(w, l), "bad file path");
		int rc = file_fn ? file_fn(payload, (const char *)w->buf + w->lo, l) : 0;
		if (rc)
			return rc;
		w->lo += l;
	}
	uint64_t seen = 0;
	while (w->at + w->lo < w->end) {
		uint64_t kl, fid, pos;
		CHECK(uvar(w, &kl), "bad key length");
		if (kl == 0 || kl > KIB_MAX_KEY)
			return BAD("bad key length");
		CHECK(need(w, (size_t)kl), "bad key length");
		const uint8_t *key = w->buf + w->lo;
		size_t key_lo = w->lo;
		w->lo += (size_t)kl;
		/* fid and pos may refill the window: keep the key in it */
		if (w->hi - w->lo < 20 && w->at + w->hi < w->end) {
			w->lo = key_lo;
			CHECK(need(w, (size_t)kl + 20 <= w->end - (w->at + w->lo)
					      ? (size_t)kl + 20
					      : (size_t)(w->end - (w->at + w->lo))),
			      "truncated entry");
			key = w->buf + w->lo;
			w->lo += (size_t)kl;
		}
		CHECK(uvar(w, &fid), "truncated entry");
		CHECK(uvar(w, &pos), "truncated entry");
		if (fid >= *n_files || pos > FLOE_KEY_INDEX_MAX_POS)
			return BAD("entry names no file");
		seen++;
		int rc = entry_fn ? entry_fn(payload, key, (size_t)kl, (uint32_t)fid, pos) : 0;
		if (rc)
			return rc;
	}
	if (seen != n_entries)
		return BAD("entry count mismatch");
	return FLOE_OK;
}

/* Decode the payload at [off, off + len) of in. */
static int decode(floe_input *in, uint64_t off, uint64_t len, const char *name,
		  floe_key_index_blob_hdr *h, floe_arena *a, uint64_t *n_files, uint64_t *n_entries,
		  floe_kib_file_fn file_fn, floe_kib_entry_fn entry_fn, void *payload,
		  bool header_only, floe_error *err)
{
	uint8_t trailer[12];
	uint32_t crc;
	int rc;
	memset(h, 0, sizeof(*h));
	*n_files = *n_entries = 0;
	if (len < 4 + 8 + 4)
		return BAD("too short");
	if ((rc = floe_input_read_exact(in, off + len - 12, trailer, 12, err)))
		return rc;
	memcpy(n_entries, trailer, 8);
	memcpy(&crc, trailer + 8, 4);
	win w = {in, off + len - 12, off, NULL, 0, 0, 0, err};
	if (!header_only) {
		/* the CRC first: nothing below is used unless the bytes are the writer's */
		uint32_t c = 0;
		uint64_t at = off, stop = off + len - 4;
		uint8_t *chunk = floe_malloc(WIN);
		if (!chunk)
			return floe_error_oom(err);
		while (at < stop && !rc) {
			size_t k = stop - at < WIN ? (size_t)(stop - at) : WIN;
			if (!(rc = floe_input_read_exact(in, at, chunk, k, err)))
				c = floe_crc32c(c, chunk, k);
			at += k;
		}
		floe_free(chunk);
		if (rc)
			return rc;
		if (c != crc)
			return BAD("CRC-32C mismatch");
	}
	w.cap = WIN;
	if (!(w.buf = floe_malloc(w.cap)))
		return floe_error_oom(err);
	rc = decode_win(&w, name, h, a, n_files, *n_entries, file_fn, entry_fn, payload,
			header_only, err);
	floe_free(w.buf);
	return rc;
}

static int decode_mem(const uint8_t *p, size_t n, const char *name, floe_key_index_blob_hdr *h,
		      floe_arena *a, uint64_t *n_files, uint64_t *n_entries,
		      floe_kib_file_fn file_fn, floe_kib_entry_fn entry_fn, void *payload,
		      bool header_only, floe_error *err)
{
	floe_input *in = floe_input_memory(p, n, name);
	if (!in)
		return floe_error_oom(err);
	int rc = decode(in, 0, n, name, h, a, n_files, n_entries, file_fn, entry_fn, payload,
			header_only, err);
	floe_input_close(in);
	return rc;
}

int floe_kib_decode(const uint8_t *p, size_t n, const char *name, floe_key_index_blob_hdr *h,
		    floe_arena *a, uint64_t *n_files, uint64_t *n_entries, floe_kib_file_fn file_fn,
		    floe_kib_entry_fn entry_fn, void *payload, floe_error *err)
{
	return decode_mem(p, n, name, h, a, n_files, n_entries, file_fn, entry_fn, payload, false,
			  err);
}

int floe_kib_decode_header(const uint8_t *p, size_t n, const char *name,
			   floe_key_index_blob_hdr *h, floe_arena *a, uint64_t *n_files,
			   uint64_t *n_entries, floe_error *err)
{
	return decode_mem(p, n, name, h, a, n_files, n_entries, NULL, NULL, NULL, true, err);
}

/* The Puffin file's floe-key-index-v1 blob: where its payload lies in *in. */
static int open_blob(floe_fileio *io, const char *path, floe_input **in, uint64_t *off,
		     uint64_t *len, floe_error *err)
{
	floe_arena a;
	floe_puffin_footer ft;
	int rc;
	*in = NULL;
	floe_arena_init(&a, 4096);
	if ((rc = floe_io_open_read(io, path, in, err)) ||
	    (rc = floe_puffin_read_footer(&ft, &a, *in, err)))
		goto done;
	const floe_puffin_blob *b = NULL;
	for (size_t i = 0; i < ft.n_blobs; i++)
		if (ft.blobs[i].type && !strcmp(ft.blobs[i].type, FLOE_KEY_INDEX_BLOB_TYPE))
			b = &ft.blobs[i];
	if (!b || b->compression_codec || b->offset < 4 || b->length < 0 ||
	    (uint64_t)b->offset + (uint64_t)b->length > (*in)->size) {
		rc = floe_error_set(err, FLOE_ECORRUPT, "'%s' holds no (uncompressed) %s blob", path,
				    FLOE_KEY_INDEX_BLOB_TYPE);
		goto done;
	}
	*off = (uint64_t)b->offset;
	*len = (uint64_t)b->length;
done:
	if (rc) {
		floe_input_close(*in);
		*in = NULL;
	}
	floe_arena_reset(&a);
	return rc;
}

int floe_kib_read_file(floe_fileio *io, const char *path, floe_buf *out, floe_error *err)
{
	floe_input *in = NULL;
	uint64_t off = 0, len = 0;
	int rc = open_blob(io, path, &in, &off, &len, err);
	if (!rc && len > KIB_MAX_BLOB)
		rc = floe_error_set(err, FLOE_ECORRUPT, "'%s': a blob of %llu bytes", path,
				    (unsigned long long)len);
	if (!rc && !(rc = floe_buf_reserve(out, (size_t)len))) {
		rc = floe_input_read_exact(in, off, out->data + out->len, (size_t)len, err);
		if (!rc)
			out->len += (size_t)len;
	} else if (rc == FLOE_ENOMEM) {
		rc = floe_error_oom(err);
	}
	floe_input_close(in);
	return rc;
}

/* ---- the delta index ------------------------------------------------------------- */

typedef struct persist_ctx {
	floe_kib_writer *kw;
	uint32_t *remap; /* old id -> new (UINT32_MAX: gone) */
	floe_error *err;
} persist_ctx;

static int persist_cb(void *payload, const uint8_t *key, size_t klen, uint32_t fid, uint64_t pos)
{
	persist_ctx *c = payload;
	if (c->remap[fid] == UINT32_MAX)
		return 0;
	return floe_kib_writer_entry(c->kw, key, klen, c->remap[fid], pos, c->err);
}

int floe_delta_index_persist(floe_delta_index *ix, floe_fileio *io, const char *path,
			     const floe_key_index_blob_hdr *h, uint64_t *file_size,
			     uint64_t *n_entries, floe_error *err)
{
	size_t nf = floe_delta_index__n_files(ix), n_live = 0;
	const char **paths = floe_calloc(nf + 1, sizeof(char *));
	uint32_t *remap = floe_calloc(nf + 1, sizeof(uint32_t));
	floe_output *out = NULL;
	floe_kib_writer *kw = NULL;
	int rc;
	if (!paths || !remap) {
		rc = floe_error_oom(err);
		goto done;
	}
	for (size_t i = 0; i < nf; i++) {
		bool gone;
		const char *p = floe_delta_index__file(ix, i, &gone);
		remap[i] = gone ? UINT32_MAX : (uint32_t)n_live;
		if (!gone)
			paths[n_live++] = p;
	}
	if ((rc = floe_io_create(io, path, false, &out, err)) ||
	    (rc = floe_kib_writer_new(&kw, out, h, paths, n_live, err)))
		goto done;
	persist_ctx c = {kw, remap, err};
	if ((rc = floe_delta_index__foreach(ix, persist_cb, &c, err)) ||
	    (rc = floe_kib_writer_finish(kw, file_size, err)))
		goto done;
	if (n_entries)
		*n_entries = kw->n_entries;
	floe_output *o = out;
	out = NULL;
	rc = floe_output_close(o, err);
done:
	floe_output_abort(out);
	floe_kib_writer_free(kw);
	floe_free(paths);
	floe_free(remap);
	return rc ? floe_error_prefix(err, rc, "persisting the key index to '%s': ", path)
		  : FLOE_OK;
}

typedef struct restore_ctx {
	floe_delta_index *ix;
	floe_arena *a;
	char **paths;
	size_t n_paths, cap_paths;
	floe_hmap seen;
	floe_error *err;
	const char *name;
} restore_ctx;

static int restore_file(void *payload, const char *path, size_t len)
{
	restore_ctx *c = payload;
	floe_error *err = c->err;
	const char *name = c->name;
	char *p = floe_arena_alloc(c->a, len + 1);
	if (!p || FLOE_ARRAY_RESERVE(c->paths, c->cap_paths, c->n_paths + 1))
		return floe_error_oom(err);
	memcpy(p, path, len);
	p[len] = 0;
	if (memchr(p, 0, len))
		return BAD("a file path with a NUL");
	if (floe_hmap_get_str(&c->seen, p, NULL))
		return BAD("a file listed twice");
	if (floe_hmap_put_str(&c->seen, p, 1))
		return floe_error_oom(err);
	c->paths[c->n_paths++] = p;
	bool known;
	return floe_delta_index__sync_file(c->ix, p, 0, NULL, NULL, &known, err);
}

static int restore_entry(void *payload, const uint8_t *key, size_t klen, uint32_t fid,
			 uint64_t pos)
{
	restore_ctx *c = payload;
	return floe_delta_index__put(c->ix, key, klen, fid, pos, c->err);
}

int floe_delta_index_restore(floe_delta_index *ix, floe_fileio *io, const char *path,
			     const floe_key_index_blob_hdr *expect, uint64_t *n_entries,
			     char ***paths, size_t *n_paths, floe_arena *a, floe_error *err)
{
	floe_input *in = NULL;
	uint64_t off = 0, len = 0;
	floe_arena ha;
	floe_key_index_blob_hdr h;
	uint64_t nf = 0, ne = 0;
	restore_ctx c = {ix, a, NULL, 0, 0, {0}, err, path};
	const char *name = path;
	int rc;
	floe_arena_init(&ha, 1024);
	floe_hmap_init(&c.seen);
	if ((rc = floe_delta_index_clear(ix, err)) ||
	    (rc = open_blob(io, path, &in, &off, &len, err)))
		goto done;
	/* the header first (not yet trusted: only compared), then the CRC and the
	 * contents, a window at a time; a failure part-way clears the index again */
	if ((rc = decode(in, off, len, path, &h, &ha, &nf, &ne, NULL, NULL, NULL, true, err)))
		goto done;
	if (h.snapshot_id != expect->snapshot_id || h.parent_id != expect->parent_id) {
		rc = floe_error_set(err, FLOE_ECORRUPT,
				    "key index blob '%s' describes snapshot %lld (parent %lld), not "
				    "%lld (parent %lld)",
				    path, (long long)h.snapshot_id, (long long)h.parent_id,
				    (long long)expect->snapshot_id, (long long)expect->parent_id);
		goto done;
	}
	bool same = h.n_fields == expect->n_fields && h.exact == expect->exact;
	for (size_t i = 0; same && i < h.n_fields; i++)
		same = h.field_ids[i] == expect->field_ids[i];
	if (!same) {
		rc = BAD("another key (equality field ids or their types)");
		goto done;
	}
	floe_delta_index_reserve(ix, (size_t)(ne < len / 3 ? ne : len / 3)); /* >= 3 B each */
	rc = decode(in, off, len, path, &h, &ha, &nf, &ne, restore_file, restore_entry, &c, false,
		    err);
	if (!rc) {
		floe_delta_index__mark_gone(ix); /* until the plan says where each is */
		if (n_entries)
			*n_entries = ne;
		if (paths) {
			*paths = c.paths;
			*n_paths = c.n_paths;
			c.paths = NULL;
		}
	}
done:
	if (rc) {
		floe_error saved = err ? *err : (floe_error){0};
		if (floe_delta_index_clear(ix, NULL) == FLOE_OK && err)
			*err = saved;
	}
	floe_free(c.paths);
	floe_hmap_reset(&c.seen);
	floe_input_close(in);
	floe_arena_reset(&ha);
	return rc;
}
