/*
 * reader.c — Avro object container file reader.
 *
 * DESIGN: a read-ahead window (one floe_buf) holds the bytes around the
 * current file position; a block is read with one input call when it fits
 * the window, else with one call of its exact size. Every count and length
 * from the file is checked against the configured limits and the bytes left
 * in the file before it sizes a buffer.
 */
#include "avro/avro_reader.h"

#include <string.h>

#include "avro/avro_int.h"
#include "util/hash.h"
#include "util/thread.h"

static const uint8_t MAGIC[4] = {'O', 'b', 'j', 1};

typedef struct meta_entry {
	const char *key;
	const char *value; /* NUL-terminated copy */
	size_t len;
} meta_entry;

struct floe_avro_reader {
	floe_input *in;
	const char *name;
	floe_avro_reader_opts opts;
	floe_arena arena; /* header: metadata, schema */
	meta_entry *meta;
	size_t n_meta;
	const floe_avro_schema *schema; /* in arena, or in opts.schema_cache */
	const char *codec_name;
	floe_codec codec;
	uint8_t sync[16];

	uint64_t pos; /* offset of the next block header */
	uint64_t block_index;
	floe_buf win; /* read-ahead window: bytes [win_off, win_off + win.len) */
	uint64_t win_off;
	floe_buf ubuf; /* decompressed block */

	/* record iteration */
	floe_avro_decoder *dec;
	const floe_avro_schema *reader_schema;
	floe_arena values;
	floe_cursor cur;
	int64_t left; /* records left in the current block */
	int64_t rec_in_block;
	floe_avro_block blk;
	bool eof;
	uint64_t records;
};

/* ---- input window ------------------------------------------------------------ */

/* Make [off, off + need) available; *p points at off. need may be cut to
 * what the file has (*avail says how much is there). */
static int window(floe_avro_reader *r, uint64_t off, size_t need, const uint8_t **p,
		  size_t *avail, floe_error *err)
{
	uint64_t size = r->in->size;
	size_t n;
	uint8_t *dst;
	int rc;
	if (off > size)
		off = size;
	if (need > size - off)
		need = (size_t)(size - off);
	if (size - off == 0) {
		*p = (const uint8_t *)"";
		*avail = 0;
		return FLOE_OK;
	}
	if (r->win.data && off >= r->win_off && off - r->win_off <= r->win.len &&
	    r->win.len - (off - r->win_off) >= need) {
		*p = r->win.data + (off - r->win_off);
		*avail = r->win.len - (size_t)(off - r->win_off);
		return FLOE_OK;
	}
	n = need > r->opts.read_chunk ? need : r->opts.read_chunk;
	if (n > size - off)
		n = (size_t)(size - off);
	floe_buf_clear(&r->win);
	if (!(dst = floe_buf_extend(&r->win, n)))
		return floe_error_oomf(err, "out of memory reading %zu bytes", n);
	r->win_off = off;
	if ((rc = floe_input_read_exact(r->in, off, dst, n, err))) {
		floe_buf_clear(&r->win);
		return rc;
	}
	*p = r->win.data;
	*avail = n;
	return FLOE_OK;
}

/* ---- header -------------------------------------------------------------------- */

int floe_avro_codec_parse(floe_codec *codec, const char *name, floe_error *err)
{
	if (!name || strcmp(name, "null") == 0) {
		*codec = FLOE_CODEC_NONE;
	} else if (strcmp(name, "deflate") == 0) {
		*codec = FLOE_CODEC_DEFLATE;
	} else if (strcmp(name, "snappy") == 0) {
		*codec = FLOE_CODEC_SNAPPY;
	} else if (strcmp(name, "zstandard") == 0) {
		*codec = FLOE_CODEC_ZSTD;
	} else if (strcmp(name, "bzip2") == 0 || strcmp(name, "xz") == 0) {
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "Avro codec '%s' is not supported (floe reads null, deflate, "
				      "snappy and zstandard)",
				      name);
	} else {
		return floe_error_corrupt(err, "unknown Avro codec '%.64s'", name);
	}
	return FLOE_OK;
}

/* Parse the header from c; FLOE_EAGAIN-like signal: returns 1 when the
 * bytes ran out (the caller reads more and retries). */
static int parse_header(floe_avro_reader *r, floe_cursor *c, floe_error *err)
{
	const uint8_t *m, *k, *v;
	size_t kn, vn, cap = 0;
	int64_t count, bytes;

	if (!floe_cursor_bytes(c, 4, &m))
		return 1;
	if (memcmp(m, MAGIC, 4) != 0)
		return floe_error_corrupt(err, "not an Avro container file (bad magic)");
	r->n_meta = 0;
	for (;;) {
		if (!avro_dec_block(c, &count, &bytes))
			return floe_cursor_left(c) < 20 ? 1
							: floe_error_corrupt(err, "bad metadata block header");
		if (count == 0)
			break;
		if ((uint64_t)count > floe_cursor_left(c) / 2)
			return 1;
		if (r->n_meta + (size_t)count > cap) {
			size_t ncap = r->n_meta + (size_t)count;
			meta_entry *nm = floe_arena_calloc(&r->arena, ncap, sizeof(*nm));
			if (!nm)
				return floe_error_oom(err);
			if (r->n_meta)
				memcpy(nm, r->meta, r->n_meta * sizeof(*nm));
			r->meta = nm;
			cap = ncap;
		}
		for (int64_t i = 0; i < count; i++) {
			meta_entry *e = &r->meta[r->n_meta];
			if (!avro_dec_bytes(c, &k, &kn) || !avro_dec_bytes(c, &v, &vn))
				return 1;
			if (!(e->key = floe_arena_strndup(&r->arena, (const char *)k, kn)) ||
			    !(e->value = floe_arena_strndup(&r->arena, (const char *)v, vn)))
				return floe_error_oom(err);
			e->len = vn;
			if (memchr(k, 0, kn))
				return floe_error_corrupt(err, "metadata key contains NUL");
			for (size_t j = 0; j < r->n_meta; j++)
				if (strcmp(r->meta[j].key, e->key) == 0)
					return floe_error_corrupt(err, "metadata key '%.64s' appears twice",
							      e->key);
			r->n_meta++;
		}
	}
	if (!floe_cursor_bytes(c, 16, &m))
		return 1;
	memcpy(r->sync, m, 16);
	return FLOE_OK;
}

static int read_header(floe_avro_reader *r, floe_error *err)
{
	size_t want = r->opts.read_chunk;
	for (;;) {
		const uint8_t *p;
		size_t avail;
		floe_cursor c;
		int rc;
		if (want > r->opts.max_header)
			want = r->opts.max_header;
		if ((rc = window(r, 0, want, &p, &avail, err)))
			return rc;
		floe_cursor_init(&c, p, avail);
		floe_arena_reset(&r->arena);
		rc = parse_header(r, &c, err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			r->pos = c.off;
			return FLOE_OK;
		}
		if (avail < want || avail >= r->opts.max_header)
			return floe_error_corrupt(err, avail < want ? "truncated header"
							   : "header larger than the limit");
		want = avail * 4;
	}
}

/* ---- the schema cache ---------------------------------------------------------------------- */

#define SCHEMA_CACHE_MAX 64

typedef struct cached_schema {
	uint64_t hash;
	size_t len;
	const char *text;
	const floe_avro_schema *schema;
} cached_schema;

struct floe_avro_schema_cache {
	floe_mutex mu;
	floe_arena arena; /* texts and schemas */
	cached_schema e[SCHEMA_CACHE_MAX];
	size_t n;
};

int floe_avro_schema_cache_new(floe_avro_schema_cache **out, floe_error *err)
{
	floe_avro_schema_cache *c = floe_calloc(1, sizeof(*c));
	*out = NULL;
	if (!c)
		return floe_error_oom(err);
	if (floe_mutex_init(&c->mu)) {
		floe_free(c);
		return floe_error_oom(err);
	}
	floe_arena_init(&c->arena, 65536);
	*out = c;
	return FLOE_OK;
}

void floe_avro_schema_cache_free(floe_avro_schema_cache *c)
{
	if (!c)
		return;
	floe_arena_reset(&c->arena);
	floe_mutex_destroy(&c->mu);
	floe_free(c);
}

/* r->schema from its header's text: the cache's parse of the same text, else a new one */
static int writer_schema(floe_avro_reader *r, const char *text, size_t len, floe_error *err)
{
	floe_avro_schema_cache *c = r->opts.schema_cache;
	floe_avro_schema *s = NULL;
	int rc;
	if (!c) {
		rc = floe_avro_schema_parse(&s, &r->arena, text, len, NULL, err);
		r->schema = s;
		return rc;
	}
	uint64_t h = floe_hash64(text, len);
	floe_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].hash == h && c->e[i].len == len && !memcmp(c->e[i].text, text, len)) {
			r->schema = c->e[i].schema;
			floe_mutex_unlock(&c->mu);
			return FLOE_OK;
		}
	if (c->n == SCHEMA_CACHE_MAX) {
		floe_mutex_unlock(&c->mu);
		rc = floe_avro_schema_parse(&s, &r->arena, text, len, NULL, err);
		r->schema = s;
		return rc;
	}
	/* a text that fails to parse is not entered (its bytes stay until the cache is freed) */
	char *copy = floe_arena_alloc(&c->arena, len + 1);
	if (!copy) {
		floe_mutex_unlock(&c->mu);
		return floe_error_oom(err);
	}
	memcpy(copy, text, len);
	copy[len] = 0;
	if ((rc = floe_avro_schema_parse(&s, &c->arena, copy, len, NULL, err))) {
		floe_mutex_unlock(&c->mu);
		return rc;
	}
	c->e[c->n++] = (cached_schema){.hash = h, .len = len, .text = copy, .schema = s};
	r->schema = s;
	floe_mutex_unlock(&c->mu);
	return FLOE_OK;
}

int floe_avro_reader_open(floe_avro_reader **out, floe_input *in,
			  const floe_avro_reader_opts *opts, floe_error *err)
{
	floe_avro_reader *r;
	const char *schema_text;
	size_t schema_len;
	int rc;
	*out = NULL;
	if (!in)
		return floe_error_set(err, FLOE_EINVAL, "avro reader: no input");
	if (!(r = floe_calloc(1, sizeof(*r))))
		return floe_error_oom(err);
	r->in = in;
	r->name = in->name ? in->name : "avro input";
	if (opts)
		r->opts = *opts;
	else
		r->opts = (floe_avro_reader_opts)FLOE_AVRO_READER_OPTS_INIT;
	if (!r->opts.max_header)
		r->opts.max_header = (size_t)16 << 20;
	if (!r->opts.max_block_bytes)
		r->opts.max_block_bytes = (size_t)256 << 20;
	if (r->opts.max_block_count <= 0)
		r->opts.max_block_count = INT32_MAX;
	if (!r->opts.read_chunk)
		r->opts.read_chunk = 65536;
	floe_arena_init(&r->arena, 16384);
	floe_arena_init(&r->values, (size_t)1 << 20);
	floe_buf_init(&r->win, r->opts.max_block_bytes + 64 > r->opts.max_header
				       ? r->opts.max_block_bytes + 64
				       : r->opts.max_header);
	floe_buf_init(&r->ubuf, r->opts.max_block_bytes);

	if ((rc = read_header(r, err)))
		goto fail;
	r->codec_name = floe_avro_reader_meta(r, "avro.codec", NULL);
	if ((rc = floe_avro_codec_parse(&r->codec, r->codec_name, err)))
		goto fail;
	if (!r->codec_name)
		r->codec_name = "null";
	schema_text = floe_avro_reader_meta(r, "avro.schema", &schema_len);
	if (!schema_text) {
		rc = floe_error_corrupt(err, "header has no avro.schema");
		goto fail;
	}
	if ((rc = writer_schema(r, schema_text, schema_len, err)))
		goto fail;
	*out = r;
	return FLOE_OK;
fail:
	floe_error_prefix(err, rc, "%s: ", r->name);
	floe_avro_reader_free(r);
	return rc;
}

void floe_avro_reader_free(floe_avro_reader *r)
{
	if (!r)
		return;
	floe_avro_decoder_free(r->dec);
	floe_arena_reset(&r->arena);
	floe_arena_reset(&r->values);
	floe_buf_reset(&r->win);
	floe_buf_reset(&r->ubuf);
	floe_free(r);
}

const floe_avro_schema *floe_avro_reader_schema(const floe_avro_reader *r)
{
	return r->schema;
}

const char *floe_avro_reader_codec(const floe_avro_reader *r)
{
	return r->codec_name;
}

const uint8_t *floe_avro_reader_sync(const floe_avro_reader *r)
{
	return r->sync;
}

const char *floe_avro_reader_meta(const floe_avro_reader *r, const char *key, size_t *len)
{
	for (size_t i = 0; i < r->n_meta; i++)
		if (strcmp(r->meta[i].key, key) == 0) {
			if (len)
				*len = r->meta[i].len;
			return r->meta[i].value;
		}
	return NULL;
}

size_t floe_avro_reader_meta_count(const floe_avro_reader *r)
{
	return r->n_meta;
}

bool floe_avro_reader_meta_at(const floe_avro_reader *r, size_t i, const char **key,
			      const char **value, size_t *len)
{
	if (i >= r->n_meta)
		return false;
	*key = r->meta[i].key;
	*value = r->meta[i].value;
	if (len)
		*len = r->meta[i].len;
	return true;
}

/* ---- blocks -------------------------------------------------------------------- */

static int block_fail(floe_avro_reader *r, floe_error *err, uint64_t off, const char *what)
{
	return floe_error_corrupt(err, "%s: block %llu at offset %llu: %s", r->name,
			      (unsigned long long)r->block_index, (unsigned long long)off, what);
}

static int decompress(floe_avro_reader *r, const uint8_t *src, size_t n, floe_avro_block *out,
		      floe_error *err)
{
	int rc;
	floe_buf_clear(&r->ubuf);
	switch (r->codec) {
	case FLOE_CODEC_NONE:
		out->data = src;
		out->len = n;
		return FLOE_OK;
	case FLOE_CODEC_SNAPPY: {
		uint32_t want, got;
		/* spec: snappy blocks are followed by the 4-byte big-endian CRC-32
		 * of the uncompressed data */
		if (n < 4)
			return floe_error_corrupt(err, "snappy block shorter than its CRC");
		if ((rc = floe_codec_decompress_any(FLOE_CODEC_SNAPPY, src, n - 4, &r->ubuf,
						    r->opts.max_block_bytes, err)))
			return rc == FLOE_ENOMEM ? rc : FLOE_ECORRUPT;
		want = floe_load_u32be(src + n - 4);
		got = floe_crc32(0, r->ubuf.data ? r->ubuf.data : (const uint8_t *)"", r->ubuf.len);
		if (want != got)
			return floe_error_corrupt(err, "snappy CRC mismatch (stored %08x, computed %08x)",
					      want, got);
		break;
	}
	case FLOE_CODEC_DEFLATE:
	case FLOE_CODEC_ZSTD:
		if ((rc = floe_codec_decompress_any(r->codec, src, n, &r->ubuf,
						    r->opts.max_block_bytes, err)))
			return rc == FLOE_ENOMEM ? rc : FLOE_ECORRUPT;
		break;
	default: return floe_error_set(err, FLOE_EUNSUPPORTED, "codec not supported");
	}
	out->data = r->ubuf.data ? r->ubuf.data : (const uint8_t *)"";
	out->len = r->ubuf.len;
	return FLOE_OK;
}

int floe_avro_reader_next_block(floe_avro_block *out, bool *eof, floe_avro_reader *r,
				floe_error *err)
{
	uint64_t size = r->in->size, off = r->pos, data_off;
	const uint8_t *p;
	size_t avail;
	floe_cursor c;
	int64_t count, len;
	int rc;

	*eof = false;
	if (off >= size) {
		*eof = true;
		return FLOE_OK;
	}
	if ((rc = window(r, off, 20, &p, &avail, err)))
		return AVRO_PREFIX(rc, err, "%s: block %llu at offset %llu: ", r->name,
					 (unsigned long long)r->block_index,
					 (unsigned long long)off);
	floe_cursor_init(&c, p, avail);
	if (!avro_dec_long(&c, &count) || !avro_dec_long(&c, &len))
		return block_fail(r, err, off, "truncated or bad block header");
	if (count < 0 || count > r->opts.max_block_count)
		return floe_error_corrupt(err, "%s: block %llu at offset %llu: bad record count %lld", r->name,
				      (unsigned long long)r->block_index, (unsigned long long)off,
				      (long long)count);
	data_off = off + c.off;
	if (len < 0 || (uint64_t)len > r->opts.max_block_bytes)
		return floe_error_corrupt(err, "%s: block %llu at offset %llu: bad block size %lld", r->name,
				      (unsigned long long)r->block_index, (unsigned long long)off,
				      (long long)len);
	if ((uint64_t)len + 16 > size - data_off)
		return floe_error_corrupt(err, "%s: block %llu at offset %llu: block size %lld exceeds the "
				      "%llu bytes left in the file",
				      r->name, (unsigned long long)r->block_index,
				      (unsigned long long)off, (long long)len,
				      (unsigned long long)(size - data_off));
	if ((rc = window(r, data_off, (size_t)len + 16, &p, &avail, err)))
		return AVRO_PREFIX(rc, err, "%s: block %llu at offset %llu: ", r->name,
					 (unsigned long long)r->block_index,
					 (unsigned long long)off);
	/* spec: every block ends with the file's sync marker; checking it after
	 * each block catches a damaged length or a block from elsewhere */
	if (memcmp(p + len, r->sync, 16) != 0)
		return floe_error_corrupt(err, "%s: block %llu at offset %llu: sync marker at offset %llu "
					  "does not match the header's",
					  r->name, (unsigned long long)r->block_index,
					  (unsigned long long)off,
					  (unsigned long long)(data_off + (uint64_t)len));
	out->count = count;
	out->index = r->block_index;
	out->offset = off;
	if ((rc = decompress(r, p, (size_t)len, out, err)))
		return AVRO_PREFIX(rc, err, "%s: block %llu at offset %llu: ", r->name,
					 (unsigned long long)r->block_index,
					 (unsigned long long)off);
	r->pos = data_off + (uint64_t)len + 16;
	r->block_index++;
	return FLOE_OK;
}

/* ---- records ------------------------------------------------------------------------ */

int floe_avro_reader_set_schema(floe_avro_reader *r, const floe_avro_schema *reader_schema,
				floe_error *err)
{
	floe_avro_decoder *d = NULL;
	int rc;
	if ((rc = floe_avro_decoder_new(&d, reader_schema, r->schema, &r->opts.decoder, err)))
		return AVRO_PREFIX(rc, err, "%s: ", r->name);
	floe_avro_decoder_free(r->dec);
	r->dec = d;
	r->reader_schema = reader_schema;
	return FLOE_OK;
}

const floe_avro_decoder *floe_avro_reader_decoder(floe_avro_reader *r, floe_error *err)
{
	if (!r->dec && floe_avro_reader_set_schema(r, NULL, err))
		return NULL;
	return r->dec;
}

int floe_avro_reader_next(floe_avro_value *out, bool *eof, floe_avro_reader *r, floe_error *err)
{
	int rc;
	*eof = false;
	if (!r->dec && (rc = floe_avro_reader_set_schema(r, NULL, err)))
		return rc;
	while (r->left == 0) {
		if (r->eof) {
			*eof = true;
			return FLOE_OK;
		}
		if (r->blk.len > 0 || r->blk.count > 0) {
			if (floe_cursor_left(&r->cur) != 0)
				return floe_error_corrupt(err, "%s: block %llu at offset %llu: %zu bytes left "
						      "after its %lld records",
						      r->name, (unsigned long long)r->blk.index,
						      (unsigned long long)r->blk.offset,
						      floe_cursor_left(&r->cur),
						      (long long)r->blk.count);
		}
		if ((rc = floe_avro_reader_next_block(&r->blk, &r->eof, r, err)))
			return rc;
		if (r->eof) {
			memset(&r->blk, 0, sizeof(r->blk));
			continue;
		}
		floe_arena_reset(&r->values);
		floe_cursor_init(&r->cur, r->blk.data, r->blk.len);
		r->left = r->blk.count;
		r->rec_in_block = 0;
		if (r->left == 0 && r->blk.len != 0)
			return block_fail(r, err, r->blk.offset, "data in a block of 0 records");
		{
			size_t min = floe_avro_min_size(r->schema);
			if (min && (uint64_t)r->left > r->blk.len / min)
				return floe_error_corrupt(err, "%s: block %llu at offset %llu: %lld records "
						      "cannot fit in %zu bytes",
						      r->name, (unsigned long long)r->blk.index,
						      (unsigned long long)r->blk.offset,
						      (long long)r->left, r->blk.len);
		}
	}
	if ((rc = floe_avro_decode(out, r->dec, &r->cur, &r->values, err)))
		return AVRO_PREFIX(rc, err, "%s: block %llu at offset %llu: record %lld: ",
					 r->name, (unsigned long long)r->blk.index,
					 (unsigned long long)r->blk.offset,
					 (long long)r->rec_in_block);
	r->left--;
	r->rec_in_block++;
	r->records++;
	return FLOE_OK;
}

uint64_t floe_avro_reader_records_read(const floe_avro_reader *r)
{
	return r->records;
}
