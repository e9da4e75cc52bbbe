/*
 * write_index_persist.c — the key index as a floe-key-index-v1 Puffin blob
 * (write_index_persist.h: the payload, what is checked).
 *
 * DESIGN: the payload is streamed: header and file list, then entries as
 * the index gives them (floe_delta_index__foreach), buffered 64 KiB at a
 * time with a running CRC-32C, so persisting needs no copy of the index in
 * memory. Reading takes the whole blob (about 15 bytes a key) and checks
 * the CRC before it decodes an entry, so a torn or tampered file changes
 * nothing but is reported and rebuilt from the table.
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

/* ---- decoding -------------------------------------------------------------------- */

typedef struct cur {
	const uint8_t *p;
	size_t n, at;
} cur;

static bool get(cur *c, void *out, size_t k)
{
	if (c->n - c->at < k)
		return false;
	memcpy(out, c->p + c->at, k);
	c->at += k;
	return true;
}

static bool uvar(cur *c, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (c->at >= c->n)
			return false;
		uint8_t byte = c->p[c->at++];
		*v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return true;
	}
	return false;
}

#define BAD(what) floe_error_set(err, FLOE_ECORRUPT, "key index blob '%s': %s", name, what)

static int decode(const uint8_t *p, size_t n, const char *name, floe_key_index_blob_hdr *h,
		  floe_arena *a, uint64_t *n_files, uint64_t *n_entries, floe_kib_file_fn file_fn,
		  floe_kib_entry_fn entry_fn, void *payload, bool header_only, floe_error *err)
{
	cur c = {p, n, 0};
	char magic[4];
	uint32_t ver, nf, flags, crc;
	uint64_t u;
	memset(h, 0, sizeof(*h));
	if (n < 4 + 8 + 4)
		return BAD("too short");
	/* the CRC first: nothing below is used unless the bytes are the writer's */
	memcpy(&crc, p + n - 4, 4);
	if (!header_only && floe_crc32c(0, p, n - 4) != crc)
		return BAD("CRC-32C mismatch");
	memcpy(n_entries, p + n - 12, 8);
	c.n = n - 12;
	if (!get(&c, magic, 4) || memcmp(magic, KIB_MAGIC, 4))
		return BAD("bad magic");
	if (!get(&c, &ver, 4) || ver != KIB_VERSION)
		return BAD("unknown version");
	if (!get(&c, &u, 8))
		return BAD("truncated header");
	h->snapshot_id = (int64_t)u;
	if (!get(&c, &u, 8))
		return BAD("truncated header");
	h->parent_id = (int64_t)u;
	if (!get(&c, &u, 8))
		return BAD("truncated header");
	h->parent_seq = (int64_t)u;
	if (!get(&c, &nf, 4) || nf > 64 || (size_t)nf * 4 > c.n - c.at)
		return BAD("bad key field count");
	int32_t *ids = floe_arena_calloc(a, nf + 1, sizeof(int32_t));
	if (!ids)
		return floe_error_oom(err);
	for (uint32_t i = 0; i < nf; i++)
		(void)get(&c, &ids[i], 4);
	h->field_ids = ids;
	h->n_fields = nf;
	if (!get(&c, &flags, 4) || (flags & ~1u))
		return BAD("bad flags");
	h->exact = flags & 1u;
	if (!get(&c, n_files, 8) || *n_files > (c.n - c.at) / 4)
		return BAD("bad file count");
	if (header_only)
		return FLOE_OK;
	for (uint64_t i = 0; i < *n_files; i++) {
		uint32_t l;
		if (!get(&c, &l, 4) || l == 0 || l > c.n - c.at)
			return BAD("bad file path");
		int rc = file_fn ? file_fn(payload, (const char *)c.p + c.at, l) : 0;
		if (rc)
			return rc;
		c.at += l;
	}
	uint64_t seen = 0;
	while (c.at < c.n) {
		uint64_t kl, fid, pos;
		if (!uvar(&c, &kl) || kl == 0 || kl > c.n - c.at)
			return BAD("bad key length");
		const uint8_t *key = c.p + c.at;
		c.at += (size_t)kl;
		if (!uvar(&c, &fid) || !uvar(&c, &pos))
			return BAD("truncated entry");
		if (fid >= *n_files || pos > FLOE_KEY_INDEX_MAX_POS)
			return BAD("entry names no file");
		seen++;
		int rc = entry_fn ? entry_fn(payload, key, (size_t)kl, (uint32_t)fid, pos) : 0;
		if (rc)
			return rc;
	}
	if (seen != *n_entries)
		return BAD("entry count mismatch");
	return FLOE_OK;
}

int floe_kib_decode(const uint8_t *p, size_t n, const char *name, floe_key_index_blob_hdr *h,
		    floe_arena *a, uint64_t *n_files, uint64_t *n_entries, floe_kib_file_fn file_fn,
		    floe_kib_entry_fn entry_fn, void *payload, floe_error *err)
{
	return decode(p, n, name, h, a, n_files, n_entries, file_fn, entry_fn, payload, false, err);
}

int floe_kib_decode_header(const uint8_t *p, size_t n, const char *name,
			   floe_key_index_blob_hdr *h, floe_arena *a, uint64_t *n_files,
			   uint64_t *n_entries, floe_error *err)
{
	return decode(p, n, name, h, a, n_files, n_entries, NULL, NULL, NULL, true, err);
}

int floe_kib_read_file(floe_fileio *io, const char *path, floe_buf *out, floe_error *err)
{
	floe_input *in = NULL;
	floe_arena a;
	floe_puffin_footer ft;
	int rc;
	floe_arena_init(&a, 4096);
	if ((rc = floe_io_open_read(io, path, &in, err)) ||
	    (rc = floe_puffin_read_footer(&ft, &a, in, err)))
		goto done;
	const floe_puffin_blob *b = NULL;
	for (size_t i = 0; i < ft.n_blobs; i++)
		if (ft.blobs[i].type && !strcmp(ft.blobs[i].type, FLOE_KEY_INDEX_BLOB_TYPE))
			b = &ft.blobs[i];
	if (!b) {
		rc = floe_error_set(err, FLOE_ECORRUPT, "'%s' holds no %s blob", path,
				    FLOE_KEY_INDEX_BLOB_TYPE);
		goto done;
	}
	rc = floe_puffin_read_blob(out, in, b, KIB_MAX_BLOB, err);
done:
	floe_input_close(in);
	floe_arena_reset(&a);
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
	floe_buf blob;
	floe_arena ha;
	floe_key_index_blob_hdr h;
	uint64_t nf = 0, ne = 0;
	restore_ctx c = {ix, a, NULL, 0, 0, {0}, err, path};
	const char *name = path;
	int rc;
	floe_buf_init(&blob, 0);
	floe_arena_init(&ha, 1024);
	floe_hmap_init(&c.seen);
	if ((rc = floe_delta_index_clear(ix, err)) || (rc = floe_kib_read_file(io, path, &blob, err)))
		goto done;
	/* the header first (not yet trusted: only compared), then the CRC and the
	 * contents; a failure part-way clears the index again */
	if ((rc = floe_kib_decode_header(blob.data, blob.len, path, &h, &ha, &nf, &ne, err)))
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
	floe_delta_index_reserve(ix, (size_t)(ne < blob.len / 3 ? ne : blob.len / 3)); /* >= 3 B each */
	rc = floe_kib_decode(blob.data, blob.len, path, &h, &ha, &nf, &ne, restore_file,
			     restore_entry, &c, err);
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
	floe_buf_reset(&blob);
	floe_arena_reset(&ha);
	return rc;
}
