/*
 * puffin_write.c — the deletion-vector encoder (64-bit portable Roaring,
 * the spec's framing) and the Puffin file writer.
 *
 * DESIGN: positions arrive sorted, so the bitmap is written in one pass per
 * 32-bit bucket: a first pass over the bucket's positions describes its
 * containers (key, cardinality, runs, form, size) — which gives the offset
 * header — and a second writes them. Nothing is held but the descriptors
 * of one bucket.
 */
#include "puffin/puffin_write.h"

#include <string.h>

#include "json/json.h"
#include "util/alloc.h"
#include "util/hash.h"

#define COOKIE_NO_RUN 12346u
#define COOKIE_RUN 12347u
#define NO_OFFSET_THRESHOLD 4
#define ARRAY_MAX 4096
#define BITSET_BYTES 8192

enum { C_ARRAY, C_BITSET, C_RUN };

typedef struct cdesc {
	uint16_t key;
	uint32_t card; /* 1..65536 */
	uint32_t runs;
	size_t start;  /* index of its first position */
	int form;
	size_t bytes;  /* serialized size of the container */
} cdesc;

static int put_u16(floe_buf *b, uint16_t v)
{
	uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	return floe_buf_append(b, x, 2);
}

/* Describe the containers of the bucket pos[0..n) (same high 32 bits). */
static int describe(cdesc **cs, size_t *cap, size_t *nc, const uint64_t *pos, size_t n)
{
	size_t i = 0;
	*nc = 0;
	while (i < n) {
		uint16_t key = (uint16_t)(pos[i] >> 16);
		size_t j = i;
		uint32_t runs = 0;
		uint32_t prev = 0;
		for (; j < n && (uint16_t)(pos[j] >> 16) == key; j++) {
			uint32_t lo = (uint32_t)(pos[j] & 0xFFFFu);
			if (j == i || lo != prev + 1)
				runs++;
			prev = lo;
		}
		if (FLOE_ARRAY_RESERVE(*cs, *cap, *nc + 1))
			return FLOE_ENOMEM;
		cdesc *c = &(*cs)[(*nc)++];
		c->key = key;
		c->card = (uint32_t)(j - i);
		c->runs = runs;
		c->start = i;
		if (c->card <= ARRAY_MAX) {
			c->form = C_ARRAY;
			c->bytes = (size_t)c->card * 2;
		} else {
			c->form = C_BITSET;
			c->bytes = BITSET_BYTES;
		}
		/* Java's runOptimize: a run container when strictly smaller */
		size_t run_bytes = 2 + (size_t)runs * 4;
		if (run_bytes < c->bytes) {
			c->form = C_RUN;
			c->bytes = run_bytes;
		}
		i = j;
	}
	return FLOE_OK;
}

static int put_container(floe_buf *b, const cdesc *c, const uint64_t *pos)
{
	const uint64_t *v = pos + c->start;
	int rc = FLOE_OK;
	switch (c->form) {
	case C_ARRAY:
		if ((rc = floe_buf_reserve(b, c->bytes)))
			return rc;
		for (uint32_t k = 0; k < c->card && !rc; k++)
			rc = put_u16(b, (uint16_t)v[k]);
		return rc;
	case C_BITSET: {
		uint64_t words[BITSET_BYTES / 8];
		memset(words, 0, sizeof(words));
		for (uint32_t k = 0; k < c->card; k++) {
			uint32_t lo = (uint32_t)(v[k] & 0xFFFFu);
			words[lo / 64] |= (uint64_t)1 << (lo % 64);
		}
		if ((rc = floe_buf_reserve(b, BITSET_BYTES)))
			return rc;
		for (size_t w = 0; w < BITSET_BYTES / 8 && !rc; w++)
			rc = floe_buf_put_u64le(b, words[w]);
		return rc;
	}
	default: {
		rc = put_u16(b, (uint16_t)c->runs);
		uint32_t k = 0;
		while (k < c->card && !rc) {
			uint32_t s = (uint32_t)(v[k] & 0xFFFFu), len = 1;
			while (k + len < c->card && (uint32_t)(v[k + len] & 0xFFFFu) == s + len)
				len++;
			rc = put_u16(b, (uint16_t)s);
			if (!rc)
				rc = put_u16(b, (uint16_t)(len - 1));
			k += len;
		}
		return rc;
	}
	}
}

/* One 32-bit portable Roaring bitmap (RoaringFormatSpec) of the low bits. */
static int put_bitmap32(floe_buf *b, const cdesc *cs, size_t nc, const uint64_t *pos)
{
	bool has_run = false;
	int rc;
	for (size_t i = 0; i < nc; i++)
		has_run |= cs[i].form == C_RUN;
	bool offsets = !has_run || nc >= NO_OFFSET_THRESHOLD;
	size_t header;
	if (has_run) {
		rc = floe_buf_put_u32le(b, COOKIE_RUN | (uint32_t)(nc - 1) << 16);
		header = 4 + (nc + 7) / 8;
		for (size_t i = 0; i < (nc + 7) / 8 && !rc; i++) {
			uint8_t f = 0;
			for (size_t k = 0; k < 8 && i * 8 + k < nc; k++)
				if (cs[i * 8 + k].form == C_RUN)
					f |= (uint8_t)(1u << k);
			rc = floe_buf_append(b, &f, 1);
		}
	} else {
		rc = floe_buf_put_u32le(b, COOKIE_NO_RUN);
		if (!rc)
			rc = floe_buf_put_u32le(b, (uint32_t)nc);
		header = 8;
	}
	header += nc * 4 + (offsets ? nc * 4 : 0);
	for (size_t i = 0; i < nc && !rc; i++) {
		rc = put_u16(b, cs[i].key);
		if (!rc)
			rc = put_u16(b, (uint16_t)(cs[i].card - 1));
	}
	if (offsets) {
		size_t off = header;
		for (size_t i = 0; i < nc && !rc; i++) {
			rc = floe_buf_put_u32le(b, (uint32_t)off);
			off += cs[i].bytes;
		}
	}
	for (size_t i = 0; i < nc && !rc; i++)
		rc = put_container(b, &cs[i], pos);
	return rc;
}

int floe_roaring64_encode(floe_buf *out, const uint64_t *pos, size_t n, floe_error *err)
{
	size_t start_len = out->len, n_buckets = 0, cap = 0, nc;
	cdesc *cs = NULL;
	int rc;
	for (size_t i = 0; i < n; i++) {
		if (pos[i] > FLOE_DV_MAX_POSITION)
			return floe_error_set(err, FLOE_EINVAL,
					      "deletion vector: position %llu (index %zu) exceeds the "
					      "largest a deletion vector holds (%llu)",
					      (unsigned long long)pos[i], i,
					      (unsigned long long)FLOE_DV_MAX_POSITION);
		if (i && pos[i] <= pos[i - 1])
			return floe_error_set(err, FLOE_EINVAL,
					      "deletion vector: positions not strictly ascending at "
					      "index %zu (%llu after %llu)",
					      i, (unsigned long long)pos[i],
					      (unsigned long long)pos[i - 1]);
		if (i == 0 || pos[i] >> 32 != pos[i - 1] >> 32)
			n_buckets++;
	}
	if ((rc = floe_buf_put_u64le(out, n_buckets)))
		goto fail;
	for (size_t i = 0; i < n;) {
		uint32_t key = (uint32_t)(pos[i] >> 32);
		size_t j = i;
		while (j < n && (uint32_t)(pos[j] >> 32) == key)
			j++;
		if ((rc = floe_buf_put_u32le(out, key)) ||
		    (rc = describe(&cs, &cap, &nc, pos + i, j - i)) ||
		    (rc = put_bitmap32(out, cs, nc, pos + i)))
			goto fail;
		i = j;
	}
	floe_free(cs);
	return FLOE_OK;
fail:
	floe_free(cs);
	out->len = start_len;
	return floe_error_oomf(err, "deletion vector: out of memory (or over the buffer's cap) "
				    "encoding %zu positions", n);
}

int floe_dv_encode(floe_buf *out, const uint64_t *pos, size_t n, floe_error *err)
{
	static const uint8_t magic[4] = {FLOE_DV_MAGIC_0, FLOE_DV_MAGIC_1, FLOE_DV_MAGIC_2,
					 FLOE_DV_MAGIC_3};
	size_t start = out->len;
	int rc;
	/* length prefix, filled in below */
	if ((rc = floe_buf_put_u32be(out, 0)) || (rc = floe_buf_append(out, magic, 4)))
		goto nomem;
	if ((rc = floe_roaring64_encode(out, pos, n, err))) {
		out->len = start;
		return rc;
	}
	size_t body = out->len - start - 4; /* magic + bitmap */
	if (body > UINT32_MAX - 4) {
		out->len = start;
		return floe_error_set(err, FLOE_EINVAL, "deletion vector: %zu bytes is too large",
				      body);
	}
	uint32_t crc = floe_crc32(0, out->data + start + 4, body);
	uint8_t *p = out->data + start;
	p[0] = (uint8_t)(body >> 24);
	p[1] = (uint8_t)(body >> 16);
	p[2] = (uint8_t)(body >> 8);
	p[3] = (uint8_t)body;
	if ((rc = floe_buf_put_u32be(out, crc)))
		goto nomem;
	return FLOE_OK;
nomem:
	out->len = start;
	return floe_error_oomf(err, "deletion vector: out of memory");
}

/* ---- Puffin files ------------------------------------------------------------- */

struct floe_puffin_writer {
	floe_output *out;
	floe_arena arena; /* blob metadata */
	floe_puffin_blob *blobs;
	size_t n_blobs, cap_blobs;
	bool done;
};

int floe_puffin_writer_new(floe_puffin_writer **out_pw, floe_output *out, floe_error *err)
{
	floe_puffin_writer *pw;
	int rc;
	*out_pw = NULL;
	pw = floe_calloc(1, sizeof(*pw));
	if (!pw)
		return floe_error_oom(err);
	floe_arena_init(&pw->arena, 2048);
	pw->out = out;
	if ((rc = floe_output_write(out, FLOE_PUFFIN_MAGIC, 4, err))) {
		floe_puffin_writer_free(pw);
		return floe_error_prefix(err, rc, "puffin '%s': ", out->name ? out->name : "?");
	}
	*out_pw = pw;
	return FLOE_OK;
}

static const char *dup(floe_arena *a, const char *s, bool *ok)
{
	if (!s)
		return NULL;
	const char *d = floe_arena_strdup(a, s);
	if (!d)
		*ok = false;
	return d;
}

int floe_puffin_writer_add(floe_puffin_writer *pw, const floe_puffin_blob *meta,
			   const uint8_t *data, size_t n, int64_t *offset, int64_t *length,
			   floe_error *err)
{
	floe_puffin_blob *b;
	bool ok = true;
	int rc;
	if (pw->done)
		return floe_error_set(err, FLOE_EINVAL, "puffin writer: already finished");
	if (!meta->type)
		return floe_error_set(err, FLOE_EINVAL, "puffin writer: a blob needs a type");
	if (FLOE_ARRAY_RESERVE(pw->blobs, pw->cap_blobs, pw->n_blobs + 1))
		return floe_error_oom(err);
	b = &pw->blobs[pw->n_blobs];
	*b = *meta;
	b->offset = (int64_t)pw->out->pos;
	b->length = (int64_t)n;
	b->type = dup(&pw->arena, meta->type, &ok);
	b->compression_codec = dup(&pw->arena, meta->compression_codec, &ok);
	b->fields = meta->n_fields ? floe_arena_memdup(&pw->arena, meta->fields,
						       meta->n_fields * sizeof(int32_t))
				   : NULL;
	ok &= !meta->n_fields || b->fields;
	b->properties = meta->n_properties
				? floe_arena_calloc(&pw->arena, meta->n_properties, sizeof(floe_puffin_prop))
				: NULL;
	ok &= !meta->n_properties || b->properties;
	for (size_t i = 0; ok && i < meta->n_properties; i++) {
		b->properties[i].key = dup(&pw->arena, meta->properties[i].key, &ok);
		b->properties[i].value = dup(&pw->arena, meta->properties[i].value, &ok);
	}
	if (!ok)
		return floe_error_oom(err);
	if (n && (rc = floe_output_write(pw->out, data, n, err)))
		return floe_error_prefix(err, rc, "puffin '%s': ",
					 pw->out->name ? pw->out->name : "?");
	pw->n_blobs++;
	if (offset)
		*offset = b->offset;
	if (length)
		*length = b->length;
	return FLOE_OK;
}

int floe_puffin_writer_add_written(floe_puffin_writer *pw, const floe_puffin_blob *meta,
				   int64_t offset, int64_t length, floe_error *err)
{
	int64_t got_off, got_len;
	if (offset < 4 || length < 0 || (uint64_t)offset + (uint64_t)length > pw->out->pos)
		return floe_error_set(err, FLOE_EINVAL, "puffin writer: a blob outside the file");
	int rc = floe_puffin_writer_add(pw, meta, NULL, 0, &got_off, &got_len, err);
	if (rc)
		return rc;
	pw->blobs[pw->n_blobs - 1].offset = offset;
	pw->blobs[pw->n_blobs - 1].length = length;
	return FLOE_OK;
}

static void write_props(floe_jw *w, const floe_puffin_prop *p, size_t n)
{
	floe_jw_key(w, "properties");
	floe_jw_obj_begin(w);
	for (size_t i = 0; i < n; i++)
		floe_jw_kv_str(w, p[i].key, p[i].value ? p[i].value : "");
	floe_jw_obj_end(w);
}

int floe_puffin_writer_finish(floe_puffin_writer *pw, const floe_puffin_prop *props,
			      size_t n_props, uint64_t *file_size, floe_error *err)
{
	floe_buf f;
	floe_jw w;
	int rc;
	if (pw->done)
		return floe_error_set(err, FLOE_EINVAL, "puffin writer: already finished");
	pw->done = true;
	floe_buf_init(&f, 0);
	if ((rc = floe_buf_append(&f, FLOE_PUFFIN_MAGIC, 4)))
		goto nomem;
	floe_jw_init(&w, &f, 0);
	floe_jw_obj_begin(&w);
	floe_jw_key(&w, "blobs");
	floe_jw_arr_begin(&w);
	for (size_t i = 0; i < pw->n_blobs; i++) {
		const floe_puffin_blob *b = &pw->blobs[i];
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "type", b->type);
		floe_jw_key(&w, "fields");
		floe_jw_arr_begin(&w);
		for (size_t k = 0; k < b->n_fields; k++)
			floe_jw_i64(&w, b->fields[k]);
		floe_jw_arr_end(&w);
		floe_jw_kv_i64(&w, "snapshot-id", b->snapshot_id);
		floe_jw_kv_i64(&w, "sequence-number", b->sequence_number);
		floe_jw_kv_i64(&w, "offset", b->offset);
		floe_jw_kv_i64(&w, "length", b->length);
		if (b->compression_codec)
			floe_jw_kv_str(&w, "compression-codec", b->compression_codec);
		if (b->n_properties)
			write_props(&w, b->properties, b->n_properties);
		floe_jw_obj_end(&w);
	}
	floe_jw_arr_end(&w);
	if (n_props)
		write_props(&w, props, n_props);
	floe_jw_obj_end(&w);
	if ((rc = floe_jw_finish(&w)))
		goto nomem;
	size_t payload = f.len - 4;
	if (payload > INT32_MAX) {
		rc = floe_error_set(err, FLOE_EINVAL, "puffin writer: a footer of %zu bytes", payload);
		goto done;
	}
	if ((rc = floe_buf_put_u32le(&f, (uint32_t)payload)) || (rc = floe_buf_put_u32le(&f, 0)) ||
	    (rc = floe_buf_append(&f, FLOE_PUFFIN_MAGIC, 4)))
		goto nomem;
	if ((rc = floe_output_write(pw->out, f.data, f.len, err))) {
		floe_error_prefix(err, rc, "puffin '%s': ", pw->out->name ? pw->out->name : "?");
		goto done;
	}
	if (file_size)
		*file_size = pw->out->pos;
	goto done;
nomem:
	rc = floe_error_oomf(err, "puffin writer: out of memory writing the footer");
done:
	floe_buf_reset(&f);
	return rc;
}

void floe_puffin_writer_free(floe_puffin_writer *pw)
{
	if (!pw)
		return;
	floe_free(pw->blobs);
	floe_arena_reset(&pw->arena);
	floe_free(pw);
}
