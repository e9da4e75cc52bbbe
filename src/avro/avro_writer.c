/*
 * writer.c — Avro object container file writer.
 *
 * DESIGN: records are encoded straight into one block buffer; a block is
 * compressed into a second buffer and written with its count, size and the
 * sync marker in one output call. The header is written lazily so metadata
 * can be added after open. The exact file size is the output position at
 * close, which the Iceberg layer records as manifest_length /
 * file_size_in_bytes.
 */
#include "avro/avro_writer.h"

#include "avro/avro_int.h"

#include <string.h>

#include "avro/avro_reader.h"
#include "util/hash.h"
#include "util/rand.h"

typedef struct wmeta {
	char *key;
	uint8_t *value;
	size_t len;
} wmeta;

struct floe_avro_writer {
	floe_output *out;
	const floe_avro_schema *schema;
	floe_codec codec;
	const char *codec_name;
	int level;
	size_t block_bytes, block_records;
	uint8_t sync[16];
	floe_buf schema_json;
	wmeta *meta;
	size_t n_meta, cap_meta;
	bool header_done;
	bool failed; /* a write failed: only abort is possible */

	floe_buf block;   /* encoded records of the current block */
	size_t block_count;
	size_t rec_start; /* begin(): where the record started */
	floe_buf cbuf;    /* compressed block + framing */
	uint64_t records;
};

int floe_avro_writer_open(floe_avro_writer **out_w, floe_output *out,
			  const floe_avro_schema *schema, const floe_avro_writer_opts *opts,
			  floe_error *err)
{
	floe_avro_writer_opts o = FLOE_AVRO_WRITER_OPTS_INIT;
	floe_avro_writer *w;
	int rc;
	*out_w = NULL;
	if (opts)
		o = *opts;
	if (!out || !schema)
		return floe_error_set(err, FLOE_EINVAL, "avro writer: no output or schema");
	if (!(w = floe_calloc(1, sizeof(*w))))
		return floe_error_oom(err);
	w->codec_name = o.codec ? o.codec : "deflate";
	if ((rc = floe_avro_codec_parse(&w->codec, w->codec_name, err))) {
		if (rc == FLOE_ECORRUPT)
			rc = floe_error_set(err, FLOE_EINVAL, "unknown Avro codec '%s'", w->codec_name);
		goto fail;
	}
	if (strcmp(w->codec_name, "null") != 0 && w->codec == FLOE_CODEC_NONE) {
		rc = floe_error_set(err, FLOE_EINVAL, "unknown Avro codec");
		goto fail;
	}
	w->codec_name = w->codec == FLOE_CODEC_NONE	 ? "null"
			: w->codec == FLOE_CODEC_DEFLATE ? "deflate"
			: w->codec == FLOE_CODEC_SNAPPY	 ? "snappy"
							 : "zstandard";
	w->level = o.level;
	w->block_bytes = o.block_bytes ? o.block_bytes : 65536;
	w->block_records = o.block_records;
	w->schema = schema;
	w->out = out;
	if (o.sync)
		memcpy(w->sync, o.sync, 16);
	else
		floe_random_bytes(w->sync, 16);
	floe_buf_init(&w->schema_json, (size_t)16 << 20);
	floe_buf_init(&w->block, (o.max_record ? o.max_record : (size_t)256 << 20) + w->block_bytes);
	floe_buf_init(&w->cbuf, 0);
	if ((rc = floe_avro_schema_to_json(&w->schema_json, schema, err)))
		goto fail;
	*out_w = w;
	return FLOE_OK;
fail:
	floe_error_prefix(err, rc, "%s: ", out && out->name ? out->name : "avro output");
	w->out = NULL;
	floe_avro_writer_abort(w);
	return rc;
}

int floe_avro_writer_meta(floe_avro_writer *w, const char *key, const void *value, size_t len,
			  floe_error *err)
{
	wmeta *m = NULL;
	uint8_t *v;
	if (!key || (!value && len))
		return floe_error_set(err, FLOE_EINVAL, "avro writer: bad metadata");
	if (w->header_done)
		return floe_error_set(err, FLOE_EINVAL,
				      "avro writer: metadata '%s' set after the header was written",
				      key);
	if (strncmp(key, "avro.", 5) == 0)
		return floe_error_set(err, FLOE_EINVAL, "avro writer: metadata key '%s' is reserved",
				      key);
	for (size_t i = 0; i < w->n_meta; i++)
		if (strcmp(w->meta[i].key, key) == 0)
			m = &w->meta[i];
	if (!(v = floe_memdup(len ? value : "", len ? len : 1)))
		return floe_error_oom(err);
	if (!m) {
		char *k;
		if (FLOE_ARRAY_RESERVE(w->meta, w->cap_meta, w->n_meta + 1) ||
		    !(k = floe_strdup(key))) {
			floe_free(v);
			return floe_error_oom(err);
		}
		m = &w->meta[w->n_meta++];
		m->key = k;
		m->value = NULL;
	}
	floe_free(m->value);
	m->value = v;
	m->len = len;
	return FLOE_OK;
}

int floe_avro_writer_meta_str(floe_avro_writer *w, const char *key, const char *value,
			      floe_error *err)
{
	return floe_avro_writer_meta(w, key, value, value ? strlen(value) : 0, err);
}

static int write_out(floe_avro_writer *w, const void *p, size_t n, floe_error *err)
{
	int rc = floe_output_write(w->out, p, n, err);
	if (rc)
		w->failed = true;
	return rc;
}

static int write_header(floe_avro_writer *w, floe_error *err)
{
	floe_buf h;
	int rc = FLOE_OK;
	if (w->header_done)
		return FLOE_OK;
	floe_buf_init(&h, 0);
	if (floe_buf_append(&h, "Obj\x01", 4) || floe_avro_enc_block_count(&h, w->n_meta + 2) ||
	    floe_avro_enc_string(&h, "avro.schema", 11) ||
	    floe_avro_enc_bytes(&h, w->schema_json.data, w->schema_json.len) ||
	    floe_avro_enc_string(&h, "avro.codec", 10) ||
	    floe_avro_enc_bytes(&h, w->codec_name, strlen(w->codec_name)))
		rc = FLOE_ENOMEM;
	for (size_t i = 0; !rc && i < w->n_meta; i++)
		if (floe_avro_enc_string(&h, w->meta[i].key, strlen(w->meta[i].key)) ||
		    floe_avro_enc_bytes(&h, w->meta[i].value, w->meta[i].len))
			rc = FLOE_ENOMEM;
	if (!rc && (floe_avro_enc_block_count(&h, 0) || floe_buf_append(&h, w->sync, 16)))
		rc = FLOE_ENOMEM;
	if (rc)
		rc = floe_error_set(err, rc, "out of memory writing the Avro header");
	else if (!(rc = write_out(w, h.data, h.len, err)))
		w->header_done = true;
	floe_buf_reset(&h);
	return rc;
}

static int flush_block(floe_avro_writer *w, floe_error *err)
{
	size_t hdr_len, body_start;
	uint8_t hdr[20];
	floe_buf *b = &w->cbuf;
	int rc;
	if ((rc = write_header(w, err)))
		return rc;
	if (w->block_count == 0)
		return FLOE_OK;
	floe_buf_clear(b);
	if ((rc = floe_codec_compress(w->codec, w->level, w->block.data, w->block.len, b, err)))
		return rc;
	if (w->codec == FLOE_CODEC_SNAPPY &&
	    floe_buf_put_u32be(b, floe_crc32(0, w->block.data, w->block.len)))
		return floe_error_oom(err);
	if (floe_buf_append(b, w->sync, 16))
		return floe_error_oom(err);
	/* count and size go in front: encode them into a small array */
	{
		floe_buf t;
		floe_buf_init(&t, 32);
		if (floe_avro_enc_long(&t, (int64_t)w->block_count) ||
		    floe_avro_enc_long(&t, (int64_t)(b->len - 16))) {
			floe_buf_reset(&t);
			return floe_error_oom(err);
		}
		hdr_len = t.len;
		memcpy(hdr, t.data, t.len);
		floe_buf_reset(&t);
	}
	body_start = 0;
	if ((rc = write_out(w, hdr, hdr_len, err)) ||
	    (rc = write_out(w, b->data + body_start, b->len, err)))
		return rc;
	floe_buf_clear(&w->block);
	w->block_count = 0;
	return FLOE_OK;
}

floe_buf *floe_avro_writer_begin(floe_avro_writer *w)
{
	w->rec_start = w->block.len;
	return &w->block;
}

void floe_avro_writer_rollback(floe_avro_writer *w)
{
	w->block.len = w->rec_start;
	if (w->block.data)
		w->block.data[w->block.len] = 0;
}

int floe_avro_writer_commit(floe_avro_writer *w, floe_error *err)
{
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "avro writer: an earlier write failed");
	w->block_count++;
	w->records++;
	w->rec_start = w->block.len;
	if (w->block.len >= w->block_bytes ||
	    (w->block_records && w->block_count >= w->block_records))
		return flush_block(w, err);
	return FLOE_OK;
}

int floe_avro_writer_append(floe_avro_writer *w, const floe_avro_value *v, floe_error *err)
{
	int rc;
	floe_avro_writer_begin(w);
	if ((rc = floe_avro_encode_value(&w->block, w->schema, v, err))) {
		floe_avro_writer_rollback(w);
		return AVRO_PREFIX(rc, err, "record %llu: ", (unsigned long long)w->records);
	}
	return floe_avro_writer_commit(w, err);
}

int floe_avro_writer_append_encoded(floe_avro_writer *w, const void *p, size_t n,
				    floe_error *err)
{
	floe_avro_writer_begin(w);
	if (n && floe_buf_append(&w->block, p, n)) {
		floe_avro_writer_rollback(w);
		return floe_error_oomf(err, "avro writer: record too large");
	}
	return floe_avro_writer_commit(w, err);
}

int floe_avro_writer_flush(floe_avro_writer *w, floe_error *err)
{
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "avro writer: an earlier write failed");
	return flush_block(w, err);
}

uint64_t floe_avro_writer_records(const floe_avro_writer *w)
{
	return w->records;
}

uint64_t floe_avro_writer_size_estimate(const floe_avro_writer *w)
{
	return w->out->pos + w->block.len + (w->header_done ? 0 : w->schema_json.len + 64);
}

const uint8_t *floe_avro_writer_sync(const floe_avro_writer *w)
{
	return w->sync;
}

static void writer_free(floe_avro_writer *w)
{
	for (size_t i = 0; i < w->n_meta; i++) {
		floe_free(w->meta[i].key);
		floe_free(w->meta[i].value);
	}
	floe_free(w->meta);
	floe_buf_reset(&w->schema_json);
	floe_buf_reset(&w->block);
	floe_buf_reset(&w->cbuf);
	floe_free(w);
}

int floe_avro_writer_close(floe_avro_writer *w, uint64_t *bytes_written, floe_error *err)
{
	const char *name;
	uint64_t size;
	int rc;
	if (!w)
		return floe_error_set(err, FLOE_EINVAL, "avro writer: NULL");
	name = w->out->name ? w->out->name : "avro output";
	if (w->failed)
		rc = floe_error_set(err, FLOE_EINVAL, "an earlier write failed");
	else
		rc = flush_block(w, err);
	if (rc) {
		floe_error_prefix(err, rc, "%s: ", name);
		floe_avro_writer_abort(w);
		return rc;
	}
	size = w->out->pos;
	rc = floe_output_close(w->out, err);
	w->out = NULL;
	writer_free(w);
	if (rc)
		return rc;
	if (bytes_written)
		*bytes_written = size;
	return FLOE_OK;
}

void floe_avro_writer_abort(floe_avro_writer *w)
{
	if (!w)
		return;
	floe_output_abort(w->out);
	writer_free(w);
}
