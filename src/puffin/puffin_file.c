/*
 * puffin_file.c — Puffin footer parsing and blob reading.
 */
#include "puffin/puffin_file.h"

#include <stdio.h>
#include <string.h>

#include "codec/codec.h"
#include "json/json.h"
#include "util/cursor.h"
#include "util/str.h"

#define TRAILER 12 /* payload size (4), flags (4), magic (4) */

static const char *nm(const char *name)
{
	return name ? name : "puffin";
}

static int parse_props(floe_puffin_prop **out, size_t *n, floe_arena *a, const floe_json *j,
		       const char *name, const char *what, floe_error *err)
{
	*out = NULL;
	*n = 0;
	if (floe_json_is_null(j))
		return FLOE_OK;
	if (j->type != FLOE_JSON_OBJECT)
		return floe_error_corrupt(err, "%s: %s properties are not an object",
				      nm(name), what);
	*out = floe_arena_calloc(a, j->len ? j->len : 1, sizeof(**out));
	if (!*out)
		return floe_error_oom(err);
	for (const floe_json *c = j->child; c; c = c->next) {
		if (c->type != FLOE_JSON_STRING)
			return floe_error_corrupt(err, "%s: %s property '%.*s' is not a string", nm(name),
					      what, (int)c->key_len, c->key);
		(*out)[*n].key = floe_arena_strndup(a, c->key, c->key_len);
		(*out)[*n].value = c->s;
		if (!(*out)[*n].key)
			return floe_error_oom(err);
		(*n)++;
	}
	return FLOE_OK;
}

static int parse_blob(floe_puffin_blob *b, floe_arena *a, const floe_json *j, size_t idx,
		      uint64_t data_end, const char *name, floe_error *err)
{
	char what[48];
	int rc;
	snprintf(what, sizeof(what), "blob %zu", idx);
	memset(b, 0, sizeof(*b));
	if (!j || j->type != FLOE_JSON_OBJECT)
		return floe_error_corrupt(err, "%s: %s is not an object", nm(name), what);
	static const char *const required[] = {"type", "snapshot-id", "sequence-number", "offset",
					       "length"};
	for (size_t k = 0; k < sizeof(required) / sizeof(required[0]); k++)
		if (floe_json_is_null(floe_json_get(j, required[k])))
			return floe_error_corrupt(err, "%s: %s has no '%s'", nm(name),
					      what, required[k]);
	if ((rc = floe_json_get_str(j, "type", &b->type, what, err)) ||
	    (rc = floe_json_get_i64(j, "snapshot-id", &b->snapshot_id, what, err)) ||
	    (rc = floe_json_get_i64(j, "sequence-number", &b->sequence_number, what, err)) ||
	    (rc = floe_json_get_i64(j, "offset", &b->offset, what, err)) ||
	    (rc = floe_json_get_i64(j, "length", &b->length, what, err))) {
		floe_error_prefix(err, rc, "%s: ", nm(name));
		return rc;
	}
	const floe_json *f = floe_json_get(j, "fields");
	if (!f || f->type != FLOE_JSON_ARRAY)
		return floe_error_corrupt(err, "%s: %s has no fields list", nm(name), what);
	b->fields = floe_arena_calloc(a, f->len ? f->len : 1, sizeof(int32_t));
	if (!b->fields)
		return floe_error_oom(err);
	for (const floe_json *c = f->child; c; c = c->next) {
		if (floe_json_as_i32(c, &b->fields[b->n_fields]))
			return floe_error_corrupt(err, "%s: %s: a field id is not an int",
					      nm(name), what);
		b->n_fields++;
	}
	const floe_json *cc = floe_json_get(j, "compression-codec");
	if (!floe_json_is_null(cc)) {
		if (cc->type != FLOE_JSON_STRING)
			return floe_error_corrupt(err, "%s: %s: compression-codec is not a string", nm(name),
					      what);
		b->compression_codec = cc->s;
	}
	/* spec: blobs lie between the leading magic and the footer */
	if (b->offset < 4 || b->length < 0 || (uint64_t)b->offset > data_end ||
	    (uint64_t)b->length > data_end - (uint64_t)b->offset)
		return floe_error_corrupt(err, "%s: %s at offset %lld, length %lld lies outside the blob area "
				      "[4, %llu)",
				      nm(name), what, (long long)b->offset, (long long)b->length,
				      (unsigned long long)data_end);
	return parse_props(&b->properties, &b->n_properties, a, floe_json_get(j, "properties"),
			   name, what, err);
}

int floe_puffin_footer_parse(floe_puffin_footer *out, floe_arena *a, const uint8_t *tail,
			     size_t n, uint64_t file_size, const char *name, uint64_t *need,
			     floe_error *err)
{
	floe_buf inflated;
	floe_json *j = NULL;
	int rc;
	memset(out, 0, sizeof(*out));
	if (need)
		*need = 0;
	if (n > file_size)
		return floe_error_set(err, FLOE_EINVAL, "%s: tail longer than the file", nm(name));
	/* smallest file: magic + footer magic + empty payload + trailer */
	if (file_size < 4 + 4 + TRAILER || n < TRAILER)
		return floe_error_corrupt(err, "%s: %llu bytes is too short for a Puffin file", nm(name),
				      (unsigned long long)file_size);
	const uint8_t *tr = tail + n - TRAILER;
	if (memcmp(tr + 8, FLOE_PUFFIN_MAGIC, 4) != 0)
		return floe_error_corrupt(err, "%s: no Puffin magic at the end of the file",
				      nm(name));
	uint32_t psize = floe_load_u32le(tr);
	uint32_t flags = floe_load_u32le(tr + 4);
	if (psize > INT32_MAX)
		return floe_error_corrupt(err, "%s: negative footer payload size", nm(name));
	uint64_t fsize = (uint64_t)psize + 4 + TRAILER;
	if (fsize + 4 > file_size)
		return floe_error_corrupt(err, "%s: footer payload of %u bytes does not fit in a %llu-byte file",
				      nm(name), psize, (unsigned long long)file_size);
	if (fsize > n) {
		if (need) {
			*need = fsize;
			return FLOE_OK;
		}
		return floe_error_corrupt(err, "%s: footer is not in the bytes given",
				      nm(name));
	}
	if (flags & ~FLOE_PUFFIN_FLAG_COMPRESSED)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "%s: footer flags 0x%08x set bits floe does not know", nm(name),
				      flags);
	const uint8_t *fs = tail + n - fsize;
	if (memcmp(fs, FLOE_PUFFIN_MAGIC, 4) != 0)
		return floe_error_corrupt(err, "%s: no Puffin magic at the footer start",
				      nm(name));
	const uint8_t *payload = fs + 4;
	size_t plen = psize;
	floe_buf_init(&inflated, FLOE_PUFFIN_MAX_FOOTER);
	if (flags & FLOE_PUFFIN_FLAG_COMPRESSED) {
		if ((rc = floe_codec_decompress_any(FLOE_CODEC_LZ4_FRAME, payload, plen, &inflated,
						    FLOE_PUFFIN_MAX_FOOTER, err))) {
			floe_buf_reset(&inflated);
			return floe_error_prefix(err, rc, "%s: footer payload: ", nm(name));
		}
		payload = inflated.data ? inflated.data : (const uint8_t *)"";
		plen = inflated.len;
		out->compressed = true;
	}
	rc = floe_json_parse(&j, a, (const char *)payload, plen, NULL, err);
	floe_buf_reset(&inflated);
	if (rc)
		return floe_error_prefix(err, rc, "%s: footer JSON: ", nm(name));
	if (j->type != FLOE_JSON_OBJECT)
		return floe_error_corrupt(err, "%s: footer JSON is not an object", nm(name));
	const floe_json *blobs = floe_json_get(j, "blobs");
	if (!blobs || blobs->type != FLOE_JSON_ARRAY)
		return floe_error_corrupt(err, "%s: footer has no blobs list", nm(name));
	out->blobs = floe_arena_calloc(a, blobs->len ? blobs->len : 1, sizeof(floe_puffin_blob));
	if (!out->blobs)
		return floe_error_oom(err);
	uint64_t data_end = file_size - fsize;
	size_t i = 0;
	for (const floe_json *c = blobs->child; c; c = c->next, i++)
		if ((rc = parse_blob(&out->blobs[i], a, c, i, data_end, name, err)))
			return rc;
	out->n_blobs = i;
	out->footer_size = fsize;
	return parse_props(&out->properties, &out->n_properties, a,
			   floe_json_get(j, "properties"), name, "file", err);
}

int floe_puffin_read_footer(floe_puffin_footer *out, floe_arena *a, floe_input *in,
			    floe_error *err)
{
	uint8_t head[4];
	floe_buf tail;
	uint64_t need = 0;
	int rc;
	size_t n = in->size < 4096 ? (size_t)in->size : 4096;
	if (in->size < 4 + 4 + TRAILER)
		return floe_error_corrupt(err, "%s: %llu bytes is too short for a Puffin file", nm(in->name),
				      (unsigned long long)in->size);
	if ((rc = floe_input_read_exact(in, 0, head, 4, err)))
		return rc;
	if (memcmp(head, FLOE_PUFFIN_MAGIC, 4) != 0)
		return floe_error_corrupt(err, "%s: not a Puffin file (no PFA1 magic at offset 0)",
				      nm(in->name));
	floe_buf_init(&tail, 0);
	for (int round = 0; round < 2; round++) {
		uint8_t *p;
		floe_buf_clear(&tail);
		if (!(p = floe_buf_extend(&tail, n))) {
			rc = floe_error_oom(err);
			break;
		}
		if ((rc = floe_input_read_exact(in, in->size - n, p, n, err)))
			break;
		rc = floe_puffin_footer_parse(out, a, p, n, in->size, in->name, &need, err);
		if (rc || need == 0)
			break;
		if (need > FLOE_PUFFIN_MAX_FOOTER + 16) {
			rc = floe_error_corrupt(err, "%s: footer of %llu bytes is too large",
					    nm(in->name), (unsigned long long)need);
			break;
		}
		n = (size_t)need;
	}
	floe_buf_reset(&tail);
	return rc;
}

const char *floe_puffin_blob_property(const floe_puffin_blob *b, const char *key)
{
	for (size_t i = 0; i < b->n_properties; i++)
		if (strcmp(b->properties[i].key, key) == 0)
			return b->properties[i].value;
	return NULL;
}

int floe_puffin_read_blob(floe_buf *out, floe_input *in, const floe_puffin_blob *b, size_t max,
			  floe_error *err)
{
	floe_codec codec = FLOE_CODEC_NONE;
	int rc;
	if (b->offset < 0 || b->length < 0 || (uint64_t)b->offset > in->size ||
	    (uint64_t)b->length > in->size - (uint64_t)b->offset)
		return floe_error_corrupt(err, "%s: blob at offset %lld, length %lld is past the end of the "
				      "file (%llu bytes)",
				      nm(in->name), (long long)b->offset, (long long)b->length,
				      (unsigned long long)in->size);
	if (b->compression_codec) {
		if (floe_str_ieq(b->compression_codec, "lz4"))
			codec = FLOE_CODEC_LZ4_FRAME;
		else if (floe_str_ieq(b->compression_codec, "zstd"))
			codec = FLOE_CODEC_ZSTD;
		else
			return floe_error_set(err, FLOE_EUNSUPPORTED,
					      "%s: blob compression codec '%s' is not supported",
					      nm(in->name), b->compression_codec);
	}
	if (codec == FLOE_CODEC_NONE) {
		if ((size_t)b->length > max)
			return floe_error_corrupt(err, "%s: blob of %lld bytes exceeds the limit of %zu",
					      nm(in->name), (long long)b->length, max);
		uint8_t *p = floe_buf_extend(out, (size_t)b->length);
		if (!p)
			return floe_error_oom(err);
		return floe_input_read_exact(in, (uint64_t)b->offset, p, (size_t)b->length, err);
	}
	floe_buf raw;
	floe_buf_init(&raw, 0);
	uint8_t *p = floe_buf_extend(&raw, (size_t)b->length);
	if (!p)
		return floe_error_oom(err);
	rc = floe_input_read_exact(in, (uint64_t)b->offset, p, (size_t)b->length, err);
	if (!rc && (rc = floe_codec_decompress_any(codec, raw.data, raw.len, out, max, err)))
		floe_error_prefix(err, rc, "%s: blob at offset %lld: ", nm(in->name),
				  (long long)b->offset);
	floe_buf_reset(&raw);
	return rc;
}
