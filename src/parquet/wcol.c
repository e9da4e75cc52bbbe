/*
 * wcol.c — one leaf column of the writer: levels and values go into the open
 * page; a full page is encoded (RLE levels, PLAIN or dictionary values),
 * compressed and kept, with its header, in the page list of the current
 * row group's chunk; the chunk is written out, dictionary page first, when
 * the row group is flushed.
 *
 * DESIGN: the dictionary is tried first. It is abandoned for the rest of the
 * chunk when it would grow past dict_bytes (the open page is turned into a
 * PLAIN page; earlier pages keep the dictionary, which is still written),
 * when the chunk's first 4096+ values are 90% distinct, or when, at the end
 * of the chunk's first page, dictionary plus indices are not smaller than
 * PLAIN (in the last two cases nothing uses it). Pages end on row
 * boundaries.
 */
#include <string.h>

#include "parquet/wcol.h"
#include "util/alloc.h"
#include "util/bitpack.h"
#include "util/cursor.h"
#include "util/hash.h"

#define SLICE 4096 /* levels between page-size checks */

bool floe_parquet__codec_of(int parquet_codec, floe_codec *out)
{
	switch (parquet_codec) {
	case FLOE_PARQUET_UNCOMPRESSED: *out = FLOE_CODEC_NONE; return true;
	case FLOE_PARQUET_SNAPPY: *out = FLOE_CODEC_SNAPPY; return true;
	case FLOE_PARQUET_GZIP: *out = FLOE_CODEC_GZIP; return true;
	case FLOE_PARQUET_BROTLI: *out = FLOE_CODEC_BROTLI; return true;
	case FLOE_PARQUET_LZ4: *out = FLOE_CODEC_LZ4_HADOOP; return true;
	case FLOE_PARQUET_ZSTD: *out = FLOE_CODEC_ZSTD; return true;
	case FLOE_PARQUET_LZ4_RAW: *out = FLOE_CODEC_LZ4_RAW; return true;
	default: return false;
	}
}

static int physical_width(const floe_parquet_node *leaf)
{
	switch (leaf->physical) {
	case FLOE_PARQUET_BOOLEAN: return 1;
	case FLOE_PARQUET_INT32:
	case FLOE_PARQUET_FLOAT: return 4;
	case FLOE_PARQUET_INT64:
	case FLOE_PARQUET_DOUBLE: return 8;
	case FLOE_PARQUET_INT96: return 12;
	case FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY: return leaf->type_length;
	default: return 0;
	}
}

int floe_parquet__wcol_init(floe_parquet__wcol *c, const floe_parquet_node *leaf,
			    const floe_parquet_writer_opts *opts, floe_error *err)
{
	memset(c, 0, sizeof(*c));
	c->leaf = leaf;
	c->opts = opts;
	c->physical = leaf->physical;
	c->width = physical_width(leaf);
	c->max_def = leaf->def_level;
	c->max_rep = leaf->rep_level;
	if (!floe_parquet__codec_of(opts->codec, &c->codec) || c->codec == FLOE_CODEC_LZ4_HADOOP)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: codec %s cannot be written",
				      floe_parquet_codec_name(opts->codec));
	floe_buf_init(&c->plain, 0);
	floe_buf_init(&c->body, 0);
	floe_buf_init(&c->comp, 0);
	floe_buf_init(&c->hdr, 0);
	floe_parquet__dict_init(&c->dict, c->physical == FLOE_PARQUET_BYTE_ARRAY ? 0 : c->width);
	c->dict_off = !opts->dictionary || c->physical == FLOE_PARQUET_BOOLEAN;
	c->dict_mode = !c->dict_off;
	floe_parquet__stats_init(&c->chunk_stats, floe_parquet__order_of(leaf));
	floe_parquet__stats_init(&c->file_stats, floe_parquet__order_of(leaf));
	return FLOE_OK;
}

void floe_parquet__wcol_reset(floe_parquet__wcol *c)
{
	floe_free(c->def);
	floe_free(c->rep);
	floe_free(c->idx);
	floe_buf_reset(&c->plain);
	for (size_t i = 0; i < c->cap_pages; i++) {
		floe_buf_reset(&c->pages[i].hdr);
		floe_buf_reset(&c->pages[i].data);
	}
	floe_free(c->pages);
	floe_buf_reset(&c->body);
	floe_buf_reset(&c->comp);
	floe_buf_reset(&c->hdr);
	floe_parquet__dict_reset(&c->dict);
	floe_parquet__stats_reset(&c->chunk_stats);
	floe_parquet__stats_reset(&c->file_stats);
}

void floe_parquet__wcol_trim(floe_parquet__wcol *c)
{
	for (size_t i = c->n_pages; i < c->cap_pages; i++) {
		floe_buf_reset(&c->pages[i].hdr);
		floe_buf_reset(&c->pages[i].data);
	}
	if (c->n_levels == 0) {
		floe_buf_reset(&c->plain);
		floe_free(c->def);
		floe_free(c->rep);
		floe_free(c->idx);
		c->def = c->rep = NULL;
		c->idx = NULL;
		c->cap_levels = c->cap_idx = 0;
	}
	floe_buf_reset(&c->body);
	floe_buf_reset(&c->comp);
}

static int nomem(floe_error *err)
{
	return floe_error_oomf(err, "parquet writer: out of memory");
}

/* Append plain values (fixed bytes, bools, or views). */
static int put_plain(floe_parquet__wcol *c, const void *vals, size_t n)
{
	if (c->physical == FLOE_PARQUET_BYTE_ARRAY)
		return floe_parquet__plain_put_bytes(&c->plain, vals, n);
	if (c->physical == FLOE_PARQUET_BOOLEAN) {
		/* booleans are bit-packed when the page is encoded; keep bytes */
		return floe_buf_append(&c->plain, vals, n);
	}
	return floe_buf_append(&c->plain, vals, n * (size_t)c->width);
}

static size_t plain_size_of(const floe_parquet__wcol *c, const void *vals, size_t n)
{
	if (c->physical != FLOE_PARQUET_BYTE_ARRAY)
		return n * (size_t)c->width;
	const floe_parquet_view *v = vals;
	size_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += 4 + v[i].n;
	return s;
}

/* Turn the open page's dictionary indices into PLAIN values. */
static int page_to_plain(floe_parquet__wcol *c)
{
	const floe_parquet_dict *d = &c->dict;
	for (size_t i = 0; i < c->n_idx; i++) {
		uint32_t e = c->idx[i];
		int rc;
		if (d->width) {
			rc = floe_buf_append(&c->plain, d->values.data + (size_t)e * (size_t)d->width,
					     (size_t)d->width);
		} else {
			floe_parquet_view v = {d->values.data + d->offsets[e],
					       d->offsets[e + 1] - d->offsets[e]};
			rc = floe_parquet__plain_put_bytes(&c->plain, &v, 1);
		}
		if (rc)
			return rc;
	}
	c->n_idx = 0;
	c->dict_mode = false;
	return FLOE_OK;
}

static int stats_of(floe_parquet__wcol *c, const void *vals, size_t n)
{
	if (c->physical == FLOE_PARQUET_BYTE_ARRAY)
		return floe_parquet__stats_update_views(&c->chunk_stats, vals, n);
	return floe_parquet__stats_update_fixed(&c->chunk_stats, vals, n, c->width);
}

/* Statistics of dictionary entries [from, to): every entry is a value of
 * the chunk, and a value's entry is added when it is first seen, so the
 * entries' min/max are the values' (NaN counts need every value: floats
 * never take this path). */
static int stats_of_entries(floe_parquet__wcol *c, size_t from, size_t to)
{
	const floe_parquet_dict *d = &c->dict;
	if (from == to)
		return FLOE_OK;
	if (d->width)
		return floe_parquet__stats_update_fixed(&c->chunk_stats,
							d->values.data + from * (size_t)d->width,
							to - from, d->width);
	for (size_t e = from; e < to; e++) {
		floe_parquet_view v = {d->values.data + d->offsets[e], d->offsets[e + 1] - d->offsets[e]};
		int rc = floe_parquet__stats_update_views(&c->chunk_stats, &v, 1);
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

/* how many of a chunk's first values tell whether its dictionary pays off */
#define DICT_PROBE 4096

static int put_values(floe_parquet__wcol *c, const void *vals, size_t n)
{
	size_t done = 0, before = c->dict.n_entries;
	int order = c->chunk_stats.order;
	bool per_value = !c->dict_mode || order == FLOE_PQ_ORD_FLOAT || order == FLOE_PQ_ORD_DOUBLE ||
			 order == FLOE_PQ_ORD_FLOAT16;
	int rc;
	if (n == 0)
		return FLOE_OK;
	if (c->dict_mode && c->n_dict_pages_used == 0 && c->n_idx < DICT_PROBE &&
	    n > DICT_PROBE - c->n_idx) {
		/* the first DICT_PROBE values decide whether the chunk keeps a
		 * dictionary (below): hash no more of a large batch until then */
		size_t k = DICT_PROBE - c->n_idx;
		size_t step = c->physical == FLOE_PARQUET_BYTE_ARRAY ? sizeof(floe_parquet_view)
								      : (size_t)c->width;
		if ((rc = put_values(c, vals, k)))
			return rc;
		return put_values(c, (const uint8_t *)vals + k * step, n - k);
	}
	if (per_value && (rc = stats_of(c, vals, n)))
		return rc;
	if (!c->dict_mode)
		return put_plain(c, vals, n);
	if (floe_array_grow((void **)&c->idx, &c->cap_idx, sizeof(uint32_t), c->n_idx + n))
		return FLOE_ENOMEM;
	if (c->physical == FLOE_PARQUET_BYTE_ARRAY)
		rc = floe_parquet__dict_put_bytes(&c->dict, vals, n, c->idx + c->n_idx, &done,
						  (size_t)c->opts->dict_bytes);
	else
		rc = floe_parquet__dict_put_fixed(&c->dict, vals, n, c->idx + c->n_idx, &done,
						  (size_t)c->opts->dict_bytes);
	if (rc || (!per_value && (rc = stats_of_entries(c, before, c->dict.n_entries))))
		return rc;
	c->n_idx += done;
	if (done == n && c->n_dict_pages_used == 0 && c->n_idx >= DICT_PROBE &&
	    c->dict.n_entries * 10 > c->n_idx * 9) {
		/* 90% distinct over the chunk's first 4096 values: the dictionary
		 * will not pay off; stop hashing (and holding) it now rather than
		 * at the end of the page */
		if ((rc = page_to_plain(c)))
			return rc;
		c->dict_off = true;
		floe_parquet__dict_reset(&c->dict);
		return FLOE_OK;
	}
	if (done == n)
		return FLOE_OK;
	/* the dictionary is full: this page and the rest of the chunk are PLAIN */
	c->dict_off = true;
	if ((rc = page_to_plain(c)))
		return rc;
	if (c->physical == FLOE_PARQUET_BYTE_ARRAY) {
		const floe_parquet_view *rest = (const floe_parquet_view *)vals + done;
		if (!per_value && (rc = stats_of(c, rest, n - done)))
			return rc;
		return put_plain(c, rest, n - done);
	}
	const uint8_t *rest = (const uint8_t *)vals + done * (size_t)c->width;
	if (!per_value && (rc = stats_of(c, rest, n - done)))
		return rc;
	return put_plain(c, rest, n - done);
}

static size_t page_estimate(const floe_parquet__wcol *c)
{
	size_t lv = c->n_levels * (floe_bit_width((uint64_t)c->max_def) +
				   floe_bit_width((uint64_t)c->max_rep)) / 8;
	if (c->dict_mode)
		return lv + c->n_idx * (floe_bit_width(c->dict.n_entries) + 1) / 8 + 1;
	if (c->physical == FLOE_PARQUET_BOOLEAN)
		return lv + c->plain.len / 8;
	return lv + c->plain.len;
}

size_t floe_parquet__wcol_open_estimate(const floe_parquet__wcol *c)
{
	return page_estimate(c) + (c->n_dict_pages_used || c->dict_mode ? c->dict.plain_size : 0);
}

size_t floe_parquet__wcol_estimate(const floe_parquet__wcol *c)
{
	return c->chunk_bytes + floe_parquet__wcol_open_estimate(c);
}

size_t floe_parquet__wcol_memory(const floe_parquet__wcol *c)
{
	size_t pages = 0;
	for (size_t i = 0; i < c->cap_pages; i++)
		pages += c->pages[i].hdr.cap + c->pages[i].data.cap;
	return pages + c->plain.cap + c->cap_levels * 4 + c->cap_idx * 4 +
	       floe_parquet__dict_memory(&c->dict) + c->body.cap + c->comp.cap;
}

static int compress_into(floe_parquet__wcol *c, const uint8_t *p, size_t n, floe_buf *out,
			 floe_error *err)
{
	return floe_codec_compress(c->codec, c->opts->level, p, n, out, err);
}

/* Keep a finished page: its header, and the payload buffer swapped in. */
static int emit_page(floe_parquet__wcol *c, floe_parquet_page_header *h, floe_buf *payload,
		     floe_error *err)
{
	floe_parquet__page *pg;
	floe_buf tmp;
	int rc;
	if (c->opts->page_crc) {
		h->has_crc = true;
		h->crc = (int32_t)floe_crc32(0, payload->data, payload->len);
	}
	if (c->n_pages == c->cap_pages) {
		size_t cap = c->cap_pages;
		if (floe_array_grow((void **)&c->pages, &cap, sizeof(*c->pages), c->n_pages + 1))
			return nomem(err);
		for (size_t i = c->cap_pages; i < cap; i++) {
			floe_buf_init(&c->pages[i].hdr, 0);
			floe_buf_init(&c->pages[i].data, 0);
		}
		c->cap_pages = cap;
	}
	pg = &c->pages[c->n_pages];
	floe_buf_clear(&pg->hdr);
	floe_buf_clear(&pg->data);
	if ((rc = floe_parquet_page_header_write(&pg->hdr, h, err)))
		return rc;
	tmp = pg->data;
	pg->data = *payload;
	*payload = tmp;
	c->n_pages++;
	c->chunk_bytes += pg->hdr.len + pg->data.len;
	c->chunk_uncompressed += (int64_t)pg->hdr.len + h->uncompressed_page_size;
	return FLOE_OK;
}

static int encode_levels(floe_buf *out, const uint16_t *lv, size_t n, int max, bool prefix)
{
	size_t at = out->len;
	int rc;
	if (prefix && !floe_parquet__extend(out, 4))
		return FLOE_ENOMEM;
	if ((rc = floe_parquet__rle_encode16(out, lv, n, floe_bit_width((uint64_t)max))))
		return rc;
	if (prefix)
		floe_store_u32le(out->data + at, (uint32_t)(out->len - at - 4));
	return FLOE_OK;
}

static int encode_values(floe_parquet__wcol *c, floe_buf *out)
{
	if (c->dict_mode) {
		unsigned w = floe_bit_width(c->dict.n_entries > 1 ? c->dict.n_entries - 1 : 1);
		uint8_t b = (uint8_t)w;
		if (floe_buf_append(out, &b, 1))
			return FLOE_ENOMEM;
		return floe_parquet__rle_encode32(out, c->idx, c->n_idx, w);
	}
	if (c->physical == FLOE_PARQUET_BOOLEAN)
		return floe_parquet__plain_put_bools(out, c->plain.data, c->plain.len);
	return floe_buf_append(out, c->plain.data, c->plain.len);
}

static int close_page(floe_parquet__wcol *c, floe_error *err)
{
	floe_parquet_page_header h;
	bool v2 = c->opts->page_version == 2;
	int enc, rc;
	size_t body_len;

	if (c->n_levels == 0)
		return FLOE_OK;
	if (c->dict_mode && c->n_dict_pages_used == 0 &&
	    c->dict.plain_size + c->n_idx * (floe_bit_width(c->dict.n_entries) + 1) / 8 >=
		    c->page_plain_size) {
		/* not worth it: no page uses the dictionary, drop it */
		if ((rc = page_to_plain(c)))
			return nomem(err);
		c->dict_off = true;
		floe_parquet__dict_reset(&c->dict);
	}
	enc = c->dict_mode ? (v2 ? FLOE_PARQUET_ENC_RLE_DICTIONARY : FLOE_PARQUET_ENC_PLAIN_DICTIONARY)
			   : FLOE_PARQUET_ENC_PLAIN;
	memset(&h, 0, sizeof(h));
	floe_buf_clear(&c->body);
	floe_buf_clear(&c->comp);
	/* PLAIN values without levels are the page body as they are: no copy */
	bool direct = !c->dict_mode && c->max_def == 0 && c->max_rep == 0 &&
		      c->physical != FLOE_PARQUET_BOOLEAN;
	floe_buf *body = direct ? &c->plain : &c->body;
	if (!v2) {
		if (!direct &&
		    ((c->max_rep > 0 && encode_levels(&c->body, c->rep, c->n_levels, c->max_rep, true)) ||
		     (c->max_def > 0 && encode_levels(&c->body, c->def, c->n_levels, c->max_def, true)) ||
		     encode_values(c, &c->body)))
			return nomem(err);
		body_len = body->len;
		if (body_len > INT32_MAX)
			return floe_error_set(err, FLOE_EINVAL, "parquet writer: page too large");
		h.type = FLOE_PARQUET_DATA_PAGE;
		h.uncompressed_page_size = (int32_t)body_len;
		h.has_data_page_header = true;
		h.data_page_header.num_values = (int32_t)c->n_levels;
		h.data_page_header.encoding = enc;
		h.data_page_header.definition_level_encoding = FLOE_PARQUET_ENC_RLE;
		h.data_page_header.repetition_level_encoding = FLOE_PARQUET_ENC_RLE;
		if (c->codec == FLOE_CODEC_NONE) {
			h.compressed_page_size = (int32_t)body_len;
			rc = emit_page(c, &h, body, err);
		} else {
			if ((rc = compress_into(c, body->data, body_len, &c->comp, err)))
				return rc;
			if (c->comp.len > INT32_MAX)
				return floe_error_set(err, FLOE_EINVAL, "parquet writer: page too large");
			h.compressed_page_size = (int32_t)c->comp.len;
			rc = emit_page(c, &h, &c->comp, err);
		}
	} else {
		size_t rep_len, def_len, lv_len;
		if (c->max_rep > 0 && encode_levels(&c->comp, c->rep, c->n_levels, c->max_rep, false))
			return nomem(err);
		rep_len = c->comp.len;
		if (c->max_def > 0 && encode_levels(&c->comp, c->def, c->n_levels, c->max_def, false))
			return nomem(err);
		def_len = c->comp.len - rep_len;
		lv_len = c->comp.len;
		if (!direct && encode_values(c, &c->body))
			return nomem(err);
		body_len = body->len;
		if ((rc = compress_into(c, body->data, body_len, &c->comp, err)))
			return rc;
		if (lv_len + body_len > INT32_MAX || c->comp.len > INT32_MAX)
			return floe_error_set(err, FLOE_EINVAL, "parquet writer: page too large");
		h.type = FLOE_PARQUET_DATA_PAGE_V2;
		h.uncompressed_page_size = (int32_t)(lv_len + body_len);
		h.compressed_page_size = (int32_t)c->comp.len;
		h.has_data_page_header_v2 = true;
		h.data_page_header_v2.num_values = (int32_t)c->n_levels;
		h.data_page_header_v2.num_nulls = (int32_t)(c->n_levels - c->page_values);
		h.data_page_header_v2.num_rows = (int32_t)c->page_rows;
		h.data_page_header_v2.encoding = enc;
		h.data_page_header_v2.definition_levels_byte_length = (int32_t)def_len;
		h.data_page_header_v2.repetition_levels_byte_length = (int32_t)rep_len;
		h.data_page_header_v2.is_compressed = c->codec != FLOE_CODEC_NONE;
		rc = emit_page(c, &h, &c->comp, err);
	}
	if (rc)
		return rc;
	if (c->dict_mode)
		c->n_dict_pages_used++;
	else
		c->n_plain_pages++;
	c->chunk_values += (int64_t)c->n_levels;
	c->chunk_nulls += (int64_t)(c->n_levels - c->page_values);
	c->n_levels = 0;
	c->page_values = 0;
	c->page_rows = 0;
	c->page_plain_size = 0;
	c->n_idx = 0;
	floe_buf_clear(&c->plain);
	c->dict_mode = !c->dict_off;
	return FLOE_OK;
}

int floe_parquet__wcol_write(floe_parquet__wcol *c, const uint16_t *def, const uint16_t *rep,
			     size_t n_levels, const void *vals, size_t n_vals, floe_error *err)
{
	size_t li = 0, vi = 0;
	const size_t page_rows = c->opts->page_rows > 0 ? (size_t)c->opts->page_rows : SIZE_MAX;
	const size_t page_bytes = c->opts->page_bytes > 0 ? (size_t)c->opts->page_bytes : SIZE_MAX;
	int rc;

	while (li < n_levels) {
		size_t room = page_rows - c->page_rows, k = 0, rows = 0, nv = 0;
		const void *v;
		if (room == 0) {
			if ((rc = close_page(c, err)))
				return rc;
			continue;
		}
		if (c->max_rep == 0) {
			k = n_levels - li;
			if (k > SLICE)
				k = SLICE;
			if (k > room)
				k = room;
			rows = k;
		} else {
			while (li + k < n_levels) {
				if (rep[li + k] == 0) {
					if (rows == room || (k >= SLICE && rows > 0))
						break;
					rows++;
				}
				k++;
			}
		}
		if (c->max_def == 0) {
			nv = k;
		} else {
			for (size_t i = 0; i < k; i++)
				nv += def[li + i] == c->max_def;
		}
		if (nv > n_vals - vi)
			return floe_error_set(err, FLOE_EINVAL,
					      "parquet writer: levels define more values than given");
		if (c->n_levels + k > c->cap_levels) {
			size_t cap = c->cap_levels;
			if (floe_array_grow((void **)&c->def, &cap, sizeof(uint16_t), c->n_levels + k))
				return nomem(err);
			size_t cap2 = c->cap_levels;
			if (floe_array_grow((void **)&c->rep, &cap2, sizeof(uint16_t), cap))
				return nomem(err);
			c->cap_levels = cap;
		}
		if (c->max_def > 0)
			memcpy(c->def + c->n_levels, def + li, k * sizeof(uint16_t));
		if (c->max_rep > 0)
			memcpy(c->rep + c->n_levels, rep + li, k * sizeof(uint16_t));
		if (nv == 0)
			v = vals; /* may be NULL: no arithmetic on it */
		else if (c->physical == FLOE_PARQUET_BYTE_ARRAY)
			v = (const floe_parquet_view *)vals + vi;
		else
			v = (const uint8_t *)vals + vi * (size_t)c->width;
		if (c->dict_mode)
			c->page_plain_size += plain_size_of(c, v, nv);
		if ((rc = put_values(c, v, nv)))
			return rc == FLOE_ENOMEM ? nomem(err)
						 : floe_error_set(err, rc, "parquet writer: bad value");
		c->n_levels += k;
		c->page_values += nv;
		c->page_rows += rows;
		li += k;
		vi += nv;
		if (page_estimate(c) >= page_bytes || c->page_rows >= page_rows) {
			if ((rc = close_page(c, err)))
				return rc;
		}
	}
	return FLOE_OK;
}

/*
 * Do UUID min/max (unsigned bytes, Parquet's order) order the chunk's values
 * the same way in Java's order (two signed longs: Iceberg 1.10's row-group
 * filter compares with it, apache/iceberg#14216)? Only when the values share
 * the top bit and, where min and max share the high half, the low halves
 * cannot straddle theirs. Otherwise the chunk gets no min/max, only counts.
 */
static bool uuid_stats_both_orders(const uint8_t *lo, const uint8_t *hi)
{
	bool same_high = memcmp(lo, hi, 8) == 0;
	if ((lo[0] ^ hi[0]) & 0x80)
		return false;
	if (!(lo[8] & 0x80) && !(same_high && !(hi[8] & 0x80)))
		return false;
	return !(hi[8] & 0x80) || (same_high && (lo[8] & 0x80));
}

/* Footer statistics from the chunk's accumulator. */
static int footer_stats(floe_parquet__wcol *c, floe_arena *a, floe_parquet_stats *st)
{
	const floe_parquet__stats *s = &c->chunk_stats;
	/* only unsigned byte strings are truncated (prefix / incremented prefix
	 * stay valid bounds); decimals and fixed-width numbers never are */
	size_t cap = c->opts->stats_max_bytes && s->order == FLOE_PQ_ORD_BYTES ? c->opts->stats_max_bytes
									       : SIZE_MAX;
	bool utf8 = c->leaf->logical.kind == FLOE_PARQUET_LT_STRING;
	uint8_t *mn, *mx;
	size_t mnn, mxn;

	memset(st, 0, sizeof(*st));
	st->has_null_count = true;
	st->null_count = c->chunk_nulls;
	if (s->order == FLOE_PQ_ORD_FLOAT || s->order == FLOE_PQ_ORD_DOUBLE ||
	    s->order == FLOE_PQ_ORD_FLOAT16) {
		st->has_nan_count = true;
		st->nan_count = s->nan_count;
	}
	if (!s->has)
		return FLOE_OK;
	if (c->leaf->logical.kind == FLOE_PARQUET_LT_UUID &&
	    (s->min.len != 16 || s->max.len != 16 ||
	     !uuid_stats_both_orders(s->min.data, s->max.data)))
		return FLOE_OK;
	mnn = s->min.len;
	mxn = s->max.len;
	if (!(mn = floe_arena_memdup(a, s->min.data, mnn)) || !(mx = floe_arena_alloc(a, mxn + 1)))
		return FLOE_ENOMEM;
	memcpy(mx, s->max.data, mxn);
	/* spec: a zero min is written as -0.0, a zero max as +0.0 */
	if (s->order == FLOE_PQ_ORD_FLOAT) {
		float f;
		memcpy(&f, mn, 4);
		if (f == 0.0f)
			floe_store_u32le(mn, 0x80000000u);
		memcpy(&f, mx, 4);
		if (f == 0.0f)
			floe_store_u32le(mx, 0);
	} else if (s->order == FLOE_PQ_ORD_DOUBLE) {
		double d;
		memcpy(&d, mn, 8);
		if (d == 0.0)
			floe_store_u64le(mn, 0x8000000000000000ull);
		memcpy(&d, mx, 8);
		if (d == 0.0)
			floe_store_u64le(mx, 0);
	} else if (s->order == FLOE_PQ_ORD_FLOAT16) {
		if ((mn[0] | (mn[1] & 0x7f)) == 0)
			mn[1] = 0x80;
		if ((mx[0] | (mx[1] & 0x7f)) == 0)
			mx[1] = 0;
	}
	st->has_min_value = true;
	st->min_value.p = mn;
	st->min_value.n = floe_parquet__trunc_min(mn, mnn, cap, utf8);
	if (st->min_value.n < mnn) {
		st->has_is_min_value_exact = true;
		st->is_min_value_exact = false;
	}
	if (mxn > cap) {
		uint8_t *t = floe_arena_alloc(a, cap);
		size_t tl;
		if (!t)
			return FLOE_ENOMEM;
		tl = floe_parquet__trunc_max(mx, mxn, cap, utf8, t);
		if (tl) {
			st->has_max_value = true;
			st->max_value.p = t;
			st->max_value.n = tl;
			st->has_is_max_value_exact = true;
			st->is_max_value_exact = false;
		}
	} else {
		st->has_max_value = true;
		st->max_value.p = mx;
		st->max_value.n = mxn;
	}
	/* the deprecated fields, for readers that only know them (signed order) */
	switch (s->order) {
	case FLOE_PQ_ORD_BOOL:
	case FLOE_PQ_ORD_I32:
	case FLOE_PQ_ORD_I64:
	case FLOE_PQ_ORD_FLOAT:
	case FLOE_PQ_ORD_DOUBLE:
		st->has_min = st->has_max = true;
		st->min = st->min_value;
		st->max = st->max_value;
		break;
	default: break;
	}
	return FLOE_OK;
}

static void add_enc(floe_parquet_column_meta *m, int *n, int enc)
{
	for (int i = 0; i < *n; i++)
		if (m->encodings[i] == enc)
			return;
	m->encodings[(*n)++] = enc;
}

int floe_parquet__wcol_flush(floe_parquet__wcol *c, floe_output *out, floe_arena *arena,
			     floe_parquet_column_chunk *cc, floe_error *err)
{
	floe_parquet_column_meta *m = &cc->meta_data;
	int64_t start = (int64_t)out->pos, dict_size = 0, dict_uncompressed = 0;
	int rc, n_enc = 0, n_es = 0;
	bool v2 = c->opts->page_version == 2;

	if ((rc = close_page(c, err)))
		return rc;
	memset(cc, 0, sizeof(*cc));
	if (c->n_dict_pages_used > 0) {
		floe_parquet_page_header h;
		memset(&h, 0, sizeof(h));
		floe_buf_clear(&c->body);
		floe_buf_clear(&c->comp);
		floe_buf_clear(&c->hdr);
		if (floe_parquet__dict_write(&c->dict, &c->body))
			return nomem(err);
		if ((rc = compress_into(c, c->body.data, c->body.len, &c->comp, err)))
			return rc;
		if (c->body.len > INT32_MAX || c->comp.len > INT32_MAX)
			return floe_error_set(err, FLOE_EINVAL, "parquet writer: dictionary too large");
		h.type = FLOE_PARQUET_DICTIONARY_PAGE;
		h.uncompressed_page_size = (int32_t)c->body.len;
		h.compressed_page_size = (int32_t)c->comp.len;
		h.has_dictionary_page_header = true;
		h.dictionary_page_header.num_values = (int32_t)c->dict.n_entries;
		h.dictionary_page_header.encoding =
			v2 ? FLOE_PARQUET_ENC_PLAIN : FLOE_PARQUET_ENC_PLAIN_DICTIONARY;
		if (c->opts->page_crc) {
			h.has_crc = true;
			h.crc = (int32_t)floe_crc32(0, c->comp.data, c->comp.len);
		}
		if ((rc = floe_parquet_page_header_write(&c->hdr, &h, err)))
			return rc;
		m->has_dictionary_page_offset = true;
		m->dictionary_page_offset = start;
		if ((rc = floe_output_write(out, c->hdr.data, c->hdr.len, err)) ||
		    (rc = floe_output_write(out, c->comp.data, c->comp.len, err)))
			return rc;
		dict_size = (int64_t)(c->hdr.len + c->comp.len);
		dict_uncompressed = (int64_t)(c->hdr.len + c->body.len);
	}
	m->data_page_offset = (int64_t)out->pos;
	for (size_t i = 0; i < c->n_pages; i++) {
		floe_parquet__page *pg = &c->pages[i];
		if ((rc = floe_output_write(out, pg->hdr.data, pg->hdr.len, err)) ||
		    (pg->data.len && (rc = floe_output_write(out, pg->data.data, pg->data.len, err))))
			return rc;
	}
	cc->file_offset = start;
	cc->has_meta_data = true;
	m->type = c->physical;
	m->encodings = floe_arena_calloc(arena, 4, sizeof(int));
	m->encoding_stats = floe_arena_calloc(arena, 3, sizeof(*m->encoding_stats));
	if (!m->encodings || !m->encoding_stats)
		return nomem(err);
	if (c->n_dict_pages_used) {
		int de = v2 ? FLOE_PARQUET_ENC_PLAIN : FLOE_PARQUET_ENC_PLAIN_DICTIONARY;
		int pe = v2 ? FLOE_PARQUET_ENC_RLE_DICTIONARY : FLOE_PARQUET_ENC_PLAIN_DICTIONARY;
		add_enc(m, &n_enc, de);
		add_enc(m, &n_enc, pe);
		m->encoding_stats[n_es++] = (floe_parquet_page_enc_stats){FLOE_PARQUET_DICTIONARY_PAGE, de, 1};
		m->encoding_stats[n_es++] = (floe_parquet_page_enc_stats){
			v2 ? FLOE_PARQUET_DATA_PAGE_V2 : FLOE_PARQUET_DATA_PAGE, pe, c->n_dict_pages_used};
	}
	if (c->n_plain_pages) {
		add_enc(m, &n_enc, FLOE_PARQUET_ENC_PLAIN);
		m->encoding_stats[n_es++] = (floe_parquet_page_enc_stats){
			v2 ? FLOE_PARQUET_DATA_PAGE_V2 : FLOE_PARQUET_DATA_PAGE, FLOE_PARQUET_ENC_PLAIN,
			c->n_plain_pages};
	}
	if (c->max_def > 0 || c->max_rep > 0 || n_enc == 0)
		add_enc(m, &n_enc, FLOE_PARQUET_ENC_RLE);
	m->n_encodings = (size_t)n_enc;
	m->n_encoding_stats = (size_t)n_es;
	m->has_encoding_stats = n_es > 0;
	m->path = c->leaf->path;
	m->path_len = (size_t)c->leaf->depth;
	m->codec = c->opts->codec;
	m->num_values = c->chunk_values;
	m->total_compressed_size = dict_size + (int64_t)c->chunk_bytes;
	m->total_uncompressed_size = dict_uncompressed + c->chunk_uncompressed;
	m->has_statistics = true;
	if (footer_stats(c, arena, &m->statistics))
		return nomem(err);

	/* file totals */
	c->total_values += c->chunk_values;
	c->total_nulls += c->chunk_nulls;
	c->total_nan += c->chunk_stats.nan_count;
	c->total_compressed += m->total_compressed_size;
	c->total_uncompressed += m->total_uncompressed_size;
	if (floe_parquet__stats_merge(&c->file_stats, &c->chunk_stats))
		return nomem(err);

	/* reset the chunk; a new row group tries the dictionary again */
	c->n_pages = 0;
	c->chunk_bytes = 0;
	c->chunk_values = c->chunk_nulls = c->chunk_uncompressed = 0;
	c->n_dict_pages_used = c->n_plain_pages = 0;
	floe_parquet__stats_clear(&c->chunk_stats);
	floe_parquet__dict_reset(&c->dict);
	c->dict_off = !c->opts->dictionary || c->physical == FLOE_PARQUET_BOOLEAN;
	c->dict_mode = !c->dict_off;
	return FLOE_OK;
}
