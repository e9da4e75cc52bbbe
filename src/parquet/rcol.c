/*
 * rcol.c — the column reader: pages of one column chunk, decoded into levels
 * and dense Arrow-representation values, handed out a whole number of rows
 * at a time.
 *
 * DESIGN: a page is decoded completely when it is loaded (levels into two
 * arrays, values into a dense array already converted to Arrow form), then
 * consumed in slices by the batches. Reading exactly N rows of a repeated
 * column needs to know where row N+1 starts, which may be in the next page
 * (v1 pages need not start on a row), so at a page end the next page is
 * loaded before deciding. The chunk is read through a window buffer, so
 * memory is about one window plus one decoded page. Dictionaries are
 * converted once and gathered from.
 */
#include "parquet/rcol.h"

#include <stdio.h>
#include <string.h>

#include "parquet/wcol.h"
#include "util/alloc.h"
#include "util/bitpack.h"
#include "util/cursor.h"
#include "util/hash.h"

#define WINDOW ((size_t)1 << 20)
#define HEADER_PROBE ((size_t)256 << 10)
#define HEADER_MAX ((size_t)16 << 20)

/* ---- output types ------------------------------------------------------ */

int floe_parquet__leafout_init(floe_parquet__leafout *o, const floe_parquet_node *leaf,
			       bool int96_us, floe_error *err)
{
	const floe_parquet_logical *lt = &leaf->logical;
	const char *f = NULL;
	memset(o, 0, sizeof(*o));
	o->int96_us = int96_us;
	o->kind = FLOE_PQ_OUT_COPY;
	if (lt->kind == FLOE_PARQUET_LT_UNKNOWN) {
		o->kind = FLOE_PQ_OUT_NULL;
		f = "n";
	} else if (lt->kind == FLOE_PARQUET_LT_DECIMAL) {
		if (lt->precision > 38)
			return floe_error_set(err, FLOE_EUNSUPPORTED,
					      "column '%s': DECIMAL(%d,%d) is wider than decimal128",
					      leaf->name, (int)lt->precision, (int)lt->scale);
		snprintf(o->format, sizeof(o->format), "d:%d,%d", (int)lt->precision, (int)lt->scale);
		o->out_width = 16;
		switch (leaf->physical) {
		case FLOE_PARQUET_INT32: o->kind = FLOE_PQ_OUT_DEC32; o->phys_width = 4; break;
		case FLOE_PARQUET_INT64: o->kind = FLOE_PQ_OUT_DEC64; o->phys_width = 8; break;
		case FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY:
			o->kind = FLOE_PQ_OUT_DECFIXED;
			o->phys_width = leaf->type_length;
			break;
		default: o->kind = FLOE_PQ_OUT_DECBYTES; break;
		}
	}
	if (!o->format[0] && !f) {
		switch (leaf->physical) {
		case FLOE_PARQUET_BOOLEAN:
			o->kind = FLOE_PQ_OUT_BOOL;
			o->out_width = 1;
			f = "b";
			break;
		case FLOE_PARQUET_INT32:
			o->phys_width = o->out_width = 4;
			f = "i";
			if (lt->kind == FLOE_PARQUET_LT_DATE) {
				f = "tdD";
			} else if (lt->kind == FLOE_PARQUET_LT_TIME) {
				f = "ttm";
			} else if (lt->kind == FLOE_PARQUET_LT_INTEGER) {
				if (lt->bit_width == 8) {
					o->kind = FLOE_PQ_OUT_I8;
					o->out_width = 1;
					f = lt->is_signed ? "c" : "C";
				} else if (lt->bit_width == 16) {
					o->kind = FLOE_PQ_OUT_I16;
					o->out_width = 2;
					f = lt->is_signed ? "s" : "S";
				} else {
					f = lt->is_signed ? "i" : "I";
				}
			}
			break;
		case FLOE_PARQUET_INT64:
			o->phys_width = o->out_width = 8;
			f = "l";
			if (lt->kind == FLOE_PARQUET_LT_TIME) {
				f = lt->unit == FLOE_PARQUET_NANOS ? "ttn" : "ttu";
			} else if (lt->kind == FLOE_PARQUET_LT_TIMESTAMP) {
				static const char *ts[2][3] = {{"tsm:", "tsu:", "tsn:"},
							       {"tsm:UTC", "tsu:UTC", "tsn:UTC"}};
				f = ts[lt->utc ? 1 : 0][lt->unit];
			} else if (lt->kind == FLOE_PARQUET_LT_INTEGER && !lt->is_signed) {
				f = "L";
			}
			break;
		case FLOE_PARQUET_INT96:
			o->kind = FLOE_PQ_OUT_INT96;
			o->phys_width = 12;
			o->out_width = 8;
			f = int96_us ? "tsu:" : "tsn:";
			break;
		case FLOE_PARQUET_FLOAT:
			o->phys_width = o->out_width = 4;
			f = "f";
			break;
		case FLOE_PARQUET_DOUBLE:
			o->phys_width = o->out_width = 8;
			f = "g";
			break;
		case FLOE_PARQUET_BYTE_ARRAY:
			o->kind = FLOE_PQ_OUT_BINARY;
			f = (lt->kind == FLOE_PARQUET_LT_STRING || lt->kind == FLOE_PARQUET_LT_ENUM ||
			     lt->kind == FLOE_PARQUET_LT_JSON)
				    ? "u"
				    : "z";
			break;
		case FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY:
			o->phys_width = o->out_width = leaf->type_length;
			if (lt->kind == FLOE_PARQUET_LT_FLOAT16)
				f = "e";
			break;
		default:
			return floe_error_set(err, FLOE_EUNSUPPORTED, "column '%s': unknown physical type",
					      leaf->name);
		}
	}
	if (f)
		snprintf(o->format, sizeof(o->format), "%s", f);
	else if (!o->format[0])
		snprintf(o->format, sizeof(o->format), "w:%d", (int)leaf->type_length);
	if (o->kind == FLOE_PQ_OUT_NULL) {
		static const int widths[] = {0, 4, 8, 12, 4, 8, 0, 0};
		o->phys_width = leaf->physical == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY
					? leaf->type_length
					: widths[leaf->physical & 7];
		o->out_width = 0;
	}
	return floe_arrow_fmt_parse(&o->fmt, o->format, err);
}

/* ---- lifecycle ---------------------------------------------------------- */

void floe_parquet__rcol_init(floe_parquet__rcol *c, floe_input *in,
			     const floe_parquet_reader_opts *opts, const floe_parquet_node *leaf)
{
	floe_buf *bufs[] = {&c->win,  &c->dict_vals, &c->dict_views, &c->dict_store, &c->page,
			    &c->vbuf, &c->tmp,	     &c->store,	     &c->scratch,    &c->pdef,
			    &c->prep, &c->pvals,     &c->pviews,     &c->bdef,	     &c->brep,
			    &c->bvals, &c->blens,    &c->bdata};
	memset(c, 0, sizeof(*c));
	c->in = in;
	c->opts = opts;
	c->leaf = leaf;
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		floe_buf_init(bufs[i], 0);
	/* bounds: a page's decoded data is capped by max_page_bytes */
	c->store.max = opts->max_page_bytes;
	c->bdata.max = (size_t)INT32_MAX;
}

void floe_parquet__rcol_reset(floe_parquet__rcol *c)
{
	floe_buf *bufs[] = {&c->win,  &c->dict_vals, &c->dict_views, &c->dict_store, &c->page,
			    &c->vbuf, &c->tmp,	     &c->store,	     &c->scratch,    &c->pdef,
			    &c->prep, &c->pvals,     &c->pviews,     &c->bdef,	     &c->brep,
			    &c->bvals, &c->blens,    &c->bdata};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		floe_buf_reset(bufs[i]);
}

static int corrupt(floe_parquet__rcol *c, const char *fmt, ...) FLOE_PRINTF(2, 3);
static int corrupt(floe_parquet__rcol *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return floe_error_corrupt(c->err, "%s page %d: %s", c->ctx, c->page_no, msg);
}

/* A reader limit (not corruption): the file may be valid but too big. */
static int too_big(floe_parquet__rcol *c, const char *what, size_t n, size_t limit)
{
	return floe_error_set(c->err, FLOE_EUNSUPPORTED,
			      "%s page %d: %s of %zu exceeds the reader's limit of %zu", c->ctx,
			      c->page_no, what, n, limit);
}

static int nomem(floe_parquet__rcol *c)
{
	return floe_error_oomf(c->err, "%s: out of memory", c->ctx);
}

int floe_parquet__rcol_start(floe_parquet__rcol *c, const floe_parquet_column_chunk *cc,
			     int row_group, floe_error *err)
{
	const floe_parquet_column_meta *m = &cc->meta_data;
	char path[256];
	uint64_t start, len;
	c->err = err;
	snprintf(c->ctx, sizeof(c->ctx), "'%s' column '%s' row group %d",
		 c->in->name ? c->in->name : "parquet", floe_parquet_node_path(c->leaf, path, sizeof(path)),
		 row_group);
	if (cc->encrypted || !cc->has_meta_data)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: encrypted column chunks are not supported",
				      c->ctx);
	if (cc->file_path)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "%s: column chunk in another file ('%s') is not supported", c->ctx,
				      cc->file_path);
	if (m->type != c->leaf->physical)
		return floe_error_corrupt(err, "%s: chunk type %s, schema says %s", c->ctx,
				      floe_parquet_type_name(m->type),
				      floe_parquet_type_name(c->leaf->physical));
	if (!floe_parquet__codec_of(m->codec, &c->codec))
		return floe_error_set(err, FLOE_EUNSUPPORTED, "%s: codec %s is not supported", c->ctx,
				      floe_parquet_codec_name(m->codec));
	c->meta = m;
	start = (uint64_t)m->data_page_offset;
	if (m->has_dictionary_page_offset && m->dictionary_page_offset > 0 &&
	    (uint64_t)m->dictionary_page_offset < start)
		start = (uint64_t)m->dictionary_page_offset;
	len = (uint64_t)m->total_compressed_size;
	if (start < 4 || start > c->in->size || len > c->in->size - start)
		return floe_error_corrupt(err, "%s: chunk at %llu+%llu is outside the file (%llu bytes)", c->ctx,
				      (unsigned long long)start, (unsigned long long)len,
				      (unsigned long long)c->in->size);
	/* PARQUET-816: parquet-mr up to 1.2.8 left the dictionary page header out
	 * of total_compressed_size; allow that much more, within the file */
	if (c->pad_dict_header) {
		uint64_t pad = c->in->size - 8 - (start + len) < 100 ? c->in->size - 8 - (start + len) : 100;
		if (start + len <= c->in->size - 8)
			len += pad;
	}
	c->pos = start;
	c->end = start + len;
	c->win_start = 0;
	floe_buf_clear(&c->win);
	c->page_no = 0;
	c->has_dict = false;
	c->dict_n = 0;
	c->page_loaded = false;
	c->chunk_done = false;
	c->chunk_first = true;
	c->page_levels = c->page_pos = c->page_nvals = c->page_vpos = 0;
	return FLOE_OK;
}

void floe_parquet__rcol_batch_clear(floe_parquet__rcol *c)
{
	floe_buf_clear(&c->bdef);
	floe_buf_clear(&c->brep);
	floe_buf_clear(&c->bvals);
	floe_buf_clear(&c->blens);
	floe_buf_clear(&c->bdata);
	c->b_levels = c->b_vals = 0;
}

/* Make file bytes [off, off + n) available; *p points at them. */
static int window(floe_parquet__rcol *c, uint64_t off, size_t n, const uint8_t **p)
{
	size_t size;
	int rc;
	if (off >= c->win_start && off - c->win_start <= c->win.len &&
	    n <= c->win.len - (off - c->win_start)) {
		*p = c->win.data + (off - c->win_start);
		return FLOE_OK;
	}
	if (n > c->end - off)
		return corrupt(c, "%zu bytes at offset %llu run past the column chunk", n,
			       (unsigned long long)off);
	size = n > WINDOW ? n : WINDOW;
	if (size > c->end - off)
		size = (size_t)(c->end - off);
	floe_buf_clear(&c->win);
	if (floe_buf_reserve(&c->win, size))
		return nomem(c);
	if ((rc = floe_input_read_exact(c->in, off, c->win.data, size, c->err)))
		return floe_error_prefix(c->err, rc, "%s: ", c->ctx);
	c->win.len = size;
	c->win_start = off;
	*p = c->win.data;
	return FLOE_OK;
}

/* ---- value conversion -------------------------------------------------------- */

static void i128_from_i64(uint8_t *dst, int64_t v)
{
	uint64_t lo = (uint64_t)v, hi = v < 0 ? ~(uint64_t)0 : 0;
	memcpy(dst, &lo, 8);
	memcpy(dst + 8, &hi, 8);
}

/* Big-endian two's complement of n bytes -> 16-byte little-endian. */
static bool i128_from_be(uint8_t *dst, const uint8_t *p, size_t n)
{
	uint8_t fill = n && (p[0] & 0x80) ? 0xff : 0;
	if (n > 16) {
		for (size_t i = 0; i < n - 16; i++)
			if (p[i] != fill)
				return false;
		if (((p[n - 16] & 0x80) ? 0xff : 0) != fill)
			return false;
		p += n - 16;
		n = 16;
	}
	for (size_t i = 0; i < 16; i++)
		dst[i] = i < n ? p[n - 1 - i] : fill;
	return true;
}

/* INT96: nanoseconds of the day (8 bytes LE), then the Julian day (4 bytes LE). */
static int64_t int96_to(const uint8_t *p, bool micros)
{
	uint64_t nanos = floe_load_u64le(p);
	/* the Julian day is unsigned (as Arrow and Spark read it) */
	int64_t days = (int64_t)floe_load_u32le(p + 8) - 2440588;
	/* wrap like Arrow does on overflow rather than fail */
	uint64_t ns = (uint64_t)days * UINT64_C(86400000000000) + nanos;
	if (micros)
		return (int64_t)((uint64_t)days * UINT64_C(86400000000) + nanos / 1000);
	return (int64_t)ns;
}

/* n physical fixed-width values -> n Arrow values at dst. */
static int conv_fixed(floe_parquet__rcol *c, const uint8_t *src, size_t n, uint8_t *dst)
{
	const floe_parquet__leafout *o = &c->out;
	switch (o->kind) {
	case FLOE_PQ_OUT_COPY: memcpy(dst, src, n * (size_t)o->out_width); return FLOE_OK;
	case FLOE_PQ_OUT_I8:
		for (size_t i = 0; i < n; i++)
			dst[i] = src[4 * i];
		return FLOE_OK;
	case FLOE_PQ_OUT_I16:
		for (size_t i = 0; i < n; i++)
			memcpy(dst + 2 * i, src + 4 * i, 2);
		return FLOE_OK;
	case FLOE_PQ_OUT_DEC32:
		for (size_t i = 0; i < n; i++)
			i128_from_i64(dst + 16 * i, (int32_t)floe_load_u32le(src + 4 * i));
		return FLOE_OK;
	case FLOE_PQ_OUT_DEC64:
		for (size_t i = 0; i < n; i++)
			i128_from_i64(dst + 16 * i, (int64_t)floe_load_u64le(src + 8 * i));
		return FLOE_OK;
	case FLOE_PQ_OUT_DECFIXED:
		for (size_t i = 0; i < n; i++)
			if (!i128_from_be(dst + 16 * i, src + (size_t)o->phys_width * i,
					  (size_t)o->phys_width))
				return corrupt(c, "decimal value does not fit 128 bits");
		return FLOE_OK;
	case FLOE_PQ_OUT_INT96:
		for (size_t i = 0; i < n; i++) {
			int64_t v = int96_to(src + 12 * i, o->int96_us);
			memcpy(dst + 8 * i, &v, 8);
		}
		return FLOE_OK;
	case FLOE_PQ_OUT_BOOL:
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i] != 0;
		return FLOE_OK;
	default: return FLOE_OK;
	}
}

/* Views -> dense output: binary stays views; DECBYTES / FLBA become fixed. */
static int conv_views(floe_parquet__rcol *c, const floe_parquet_view *v, size_t n)
{
	const floe_parquet__leafout *o = &c->out;
	uint8_t *dst;
	if (o->kind == FLOE_PQ_OUT_BINARY)
		return floe_buf_append(&c->pviews, v, n * sizeof(*v)) ? nomem(c) : FLOE_OK;
	if (o->kind == FLOE_PQ_OUT_NULL)
		return FLOE_OK;
	if (!(dst = floe_parquet__extend(&c->pvals, n * (size_t)o->out_width)))
		return nomem(c);
	if (o->kind == FLOE_PQ_OUT_DECBYTES) {
		for (size_t i = 0; i < n; i++)
			if (!i128_from_be(dst + 16 * i, v[i].p, v[i].n))
				return corrupt(c, "decimal value does not fit 128 bits");
		return FLOE_OK;
	}
	/* fixed-width values delivered as views (DELTA_BYTE_ARRAY on FLBA) */
	for (size_t i = 0; i < n; i++) {
		if (v[i].n != (size_t)o->phys_width)
			return corrupt(c, "value of %zu bytes in a FIXED_LEN_BYTE_ARRAY(%d) column",
				       v[i].n, o->phys_width);
		if (conv_fixed(c, v[i].p, 1, dst + (size_t)o->out_width * i))
			return FLOE_ECORRUPT;
	}
	return FLOE_OK;
}

/* ---- dictionary --------------------------------------------------------------- */

static bool views_kind(const floe_parquet__rcol *c)
{
	return c->leaf->physical == FLOE_PARQUET_BYTE_ARRAY;
}

static int load_dict(floe_parquet__rcol *c, const floe_parquet_page_header *h, const uint8_t *p,
		     size_t n)
{
	size_t cnt = (size_t)h->dictionary_page_header.num_values, used = 0;
	int enc = h->dictionary_page_header.encoding;
	if (c->has_dict)
		return corrupt(c, "a second dictionary page");
	if (enc != FLOE_PARQUET_ENC_PLAIN && enc != FLOE_PARQUET_ENC_PLAIN_DICTIONARY)
		return corrupt(c, "dictionary page encoding %s", floe_parquet_encoding_name(enc));
	floe_buf_clear(&c->dict_vals);
	floe_buf_clear(&c->dict_views);
	floe_buf_clear(&c->dict_store);
	if (views_kind(c)) {
		floe_parquet_view *v;
		if (cnt > n / 4)
			return corrupt(c, "dictionary of %zu values in %zu bytes", cnt, n);
		if (floe_buf_append(&c->dict_store, p, n) ||
		    !(v = (floe_parquet_view *)floe_parquet__extend(&c->dict_views, cnt * sizeof(*v))))
			return nomem(c);
		if (floe_parquet__plain_get_bytes(c->dict_store.data, n, v, cnt, &used))
			return corrupt(c, "truncated dictionary");
		if (c->out.kind != FLOE_PQ_OUT_BINARY) {
			/* decimals: convert once */
			floe_buf saved = c->pvals;
			floe_buf_init(&c->pvals, 0);
			int rc = conv_views(c, v, cnt);
			c->dict_vals = c->pvals;
			c->pvals = saved;
			if (rc)
				return rc;
		}
	} else if (c->leaf->physical == FLOE_PARQUET_BOOLEAN) {
		uint8_t *d;
		if (cnt > n * 8)
			return corrupt(c, "truncated dictionary");
		if (!(d = floe_parquet__extend(&c->dict_vals, cnt)))
			return nomem(c);
		for (size_t i = 0; i < cnt; i++)
			d[i] = (p[i >> 3] >> (i & 7)) & 1;
	} else {
		size_t w = (size_t)c->out.phys_width;
		uint8_t *d;
		if (w == 0 || cnt > n / w)
			return corrupt(c, "dictionary of %zu values in %zu bytes", cnt, n);
		if (c->out.kind == FLOE_PQ_OUT_NULL) {
			cnt = 0;
		} else {
			if (!(d = floe_parquet__extend(&c->dict_vals, cnt * (size_t)c->out.out_width)))
				return nomem(c);
			if (conv_fixed(c, p, cnt, d))
				return FLOE_ECORRUPT;
		}
	}
	c->dict_n = cnt;
	c->has_dict = true;
	return FLOE_OK;
}

static int gather(floe_parquet__rcol *c, const uint32_t *idx, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (idx[i] >= c->dict_n)
			return corrupt(c, "dictionary index %u out of %zu entries", idx[i], c->dict_n);
	if (c->out.kind == FLOE_PQ_OUT_BINARY) {
		const floe_parquet_view *d = (const floe_parquet_view *)(void *)c->dict_views.data;
		floe_parquet_view *v = (floe_parquet_view *)floe_parquet__extend(&c->pviews, n * sizeof(*v));
		if (!v)
			return nomem(c);
		for (size_t i = 0; i < n; i++)
			v[i] = d[idx[i]];
		return FLOE_OK;
	}
	if (c->out.kind == FLOE_PQ_OUT_NULL)
		return FLOE_OK;
	size_t w = (size_t)c->out.out_width;
	uint8_t *dst = floe_parquet__extend(&c->pvals, n * w);
	const uint8_t *d = c->dict_vals.data;
	if (!dst)
		return nomem(c);
	if (w == 4) {
		for (size_t i = 0; i < n; i++)
			memcpy(dst + 4 * i, d + 4 * (size_t)idx[i], 4);
	} else if (w == 8) {
		for (size_t i = 0; i < n; i++)
			memcpy(dst + 8 * i, d + 8 * (size_t)idx[i], 8);
	} else {
		for (size_t i = 0; i < n; i++)
			memcpy(dst + w * i, d + w * idx[i], w);
	}
	return FLOE_OK;
}

/* ---- values -------------------------------------------------------------------- */

static int decode_values(floe_parquet__rcol *c, int enc, const uint8_t *p, size_t len, size_t nv,
			 size_t page_values)
{
	const int phys = c->leaf->physical;
	const size_t pw = (size_t)c->out.phys_width, ow = (size_t)c->out.out_width;
	uint8_t *dst;
	int rc;

	floe_buf_clear(&c->pvals);
	floe_buf_clear(&c->pviews);
	if (nv == 0)
		return FLOE_OK;
	switch (enc) {
	case FLOE_PARQUET_ENC_PLAIN:
		if (phys == FLOE_PARQUET_BYTE_ARRAY) {
			floe_parquet_view *v;
			size_t used;
			if (nv > len / 4)
				return corrupt(c, "%zu values in %zu bytes", nv, len);
			floe_buf_clear(&c->tmp);
			if (!(v = (floe_parquet_view *)floe_parquet__extend(&c->tmp, nv * sizeof(*v))))
				return nomem(c);
			if (floe_parquet__plain_get_bytes(p, len, v, nv, &used))
				return corrupt(c, "truncated PLAIN byte array values");
			return conv_views(c, v, nv);
		}
		if (phys == FLOE_PARQUET_BOOLEAN) {
			if ((nv + 7) / 8 > len)
				return corrupt(c, "truncated PLAIN booleans");
			if (!(dst = floe_parquet__extend(&c->pvals, nv)))
				return nomem(c);
			for (size_t i = 0; i < nv; i++)
				dst[i] = (p[i >> 3] >> (i & 7)) & 1;
			return FLOE_OK;
		}
		if (pw == 0 || nv > len / pw)
			return corrupt(c, "%zu values of %zu bytes in %zu bytes", nv, pw, len);
		if (c->out.kind == FLOE_PQ_OUT_NULL)
			return FLOE_OK;
		if (!(dst = floe_parquet__extend(&c->pvals, nv * ow)))
			return nomem(c);
		return conv_fixed(c, p, nv, dst);
	case FLOE_PARQUET_ENC_PLAIN_DICTIONARY:
	case FLOE_PARQUET_ENC_RLE_DICTIONARY: {
		floe_parquet_rle r;
		uint32_t *idx;
		if (!c->has_dict)
			return corrupt(c, "dictionary-encoded page without a dictionary");
		if (len < 1 || p[0] > 32)
			return corrupt(c, "bad dictionary index bit width");
		floe_buf_clear(&c->tmp);
		if (!(idx = (uint32_t *)(void *)floe_parquet__extend(&c->tmp, nv * 4)))
			return nomem(c);
		floe_parquet__rle_init(&r, p + 1, len - 1, p[0]);
		if (floe_parquet__rle_get32(&r, idx, nv))
			return corrupt(c, "truncated or malformed dictionary indices");
		return gather(c, idx, nv);
	}
	case FLOE_PARQUET_ENC_RLE: {
		floe_parquet_rle r;
		uint32_t *bits;
		uint32_t l;
		if (phys != FLOE_PARQUET_BOOLEAN)
			break;
		if (len < 4 || (l = floe_load_u32le(p)) > len - 4)
			return corrupt(c, "bad RLE boolean length");
		floe_buf_clear(&c->tmp);
		if (!(bits = (uint32_t *)(void *)floe_parquet__extend(&c->tmp, nv * 4)) ||
		    !(dst = floe_parquet__extend(&c->pvals, nv)))
			return nomem(c);
		floe_parquet__rle_init(&r, p + 4, l, 1);
		if (floe_parquet__rle_get32(&r, bits, nv))
			return corrupt(c, "truncated or malformed RLE booleans");
		for (size_t i = 0; i < nv; i++)
			dst[i] = (uint8_t)bits[i];
		return FLOE_OK;
	}
	case FLOE_PARQUET_ENC_DELTA_BINARY_PACKED: {
		size_t total, used;
		if (phys != FLOE_PARQUET_INT32 && phys != FLOE_PARQUET_INT64)
			break;
		if (floe_parquet__delta_count(p, len, &total) || total < nv || total > page_values)
			return corrupt(c, "DELTA_BINARY_PACKED header declares a bad value count");
		floe_buf_clear(&c->tmp);
		if (!floe_parquet__extend(&c->tmp, total * pw))
			return nomem(c);
		rc = phys == FLOE_PARQUET_INT32
			     ? floe_parquet__delta_get32(p, len, (int32_t *)(void *)c->tmp.data, total, &used)
			     : floe_parquet__delta_get64(p, len, (int64_t *)(void *)c->tmp.data, total, &used);
		if (rc)
			return rc == FLOE_ENOMEM ? nomem(c) : corrupt(c, "malformed DELTA_BINARY_PACKED data");
		if (c->out.kind == FLOE_PQ_OUT_NULL)
			return FLOE_OK;
		if (!(dst = floe_parquet__extend(&c->pvals, nv * ow)))
			return nomem(c);
		return conv_fixed(c, c->tmp.data, nv, dst);
	}
	case FLOE_PARQUET_ENC_DELTA_LENGTH_BYTE_ARRAY:
	case FLOE_PARQUET_ENC_DELTA_BYTE_ARRAY: {
		floe_parquet_view *v;
		size_t total;
		if (phys != FLOE_PARQUET_BYTE_ARRAY &&
		    !(enc == FLOE_PARQUET_ENC_DELTA_BYTE_ARRAY && phys == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY))
			break;
		if (floe_parquet__delta_count(p, len, &total) || total != nv)
			return corrupt(c, "%s declares %zu values, the page has %zu",
				       floe_parquet_encoding_name(enc), total, nv);
		floe_buf_clear(&c->vbuf);
		if (!(v = (floe_parquet_view *)floe_parquet__extend(&c->vbuf, nv * sizeof(*v))))
			return nomem(c);
		if (enc == FLOE_PARQUET_ENC_DELTA_LENGTH_BYTE_ARRAY)
			rc = floe_parquet__delta_length_get(p, len, v, nv, &c->scratch);
		else
			rc = floe_parquet__delta_bytes_get(p, len, v, nv, &c->store, &c->scratch);
		if (rc)
			return rc == FLOE_ENOMEM ? nomem(c)
						 : corrupt(c, "malformed %s data", floe_parquet_encoding_name(enc));
		return conv_views(c, v, nv);
	}
	case FLOE_PARQUET_ENC_BYTE_STREAM_SPLIT:
		if (phys == FLOE_PARQUET_BOOLEAN || phys == FLOE_PARQUET_BYTE_ARRAY || pw == 0)
			break;
		floe_buf_clear(&c->tmp);
		if (!floe_parquet__extend(&c->tmp, nv * pw))
			return nomem(c);
		if (floe_parquet__bss_get(p, len, (unsigned)pw, c->tmp.data, nv))
			return corrupt(c, "truncated BYTE_STREAM_SPLIT data");
		if (c->out.kind == FLOE_PQ_OUT_NULL)
			return FLOE_OK;
		if (!(dst = floe_parquet__extend(&c->pvals, nv * ow)))
			return nomem(c);
		return conv_fixed(c, c->tmp.data, nv, dst);
	default: break;
	}
	return floe_error_set(c->err, FLOE_EUNSUPPORTED, "%s page %d: encoding %s for %s values",
			      c->ctx, c->page_no, floe_parquet_encoding_name(enc),
			      floe_parquet_type_name(phys));
}

/* ---- levels -------------------------------------------------------------------- */

static int read_levels(floe_parquet__rcol *c, int enc, const uint8_t *p, size_t len,
		       bool prefixed, int max, floe_buf *out, size_t n, size_t *used,
		       const char *what)
{
	unsigned bw = floe_bit_width((uint64_t)max);
	uint16_t *lv;
	floe_buf_clear(out);
	if (!(lv = (uint16_t *)(void *)floe_parquet__extend(out, n * 2)))
		return nomem(c);
	if (enc == FLOE_PARQUET_ENC_RLE) {
		floe_parquet_rle r;
		size_t l = len, start = 0;
		if (prefixed) {
			if (len < 4 || floe_load_u32le(p) > len - 4)
				return corrupt(c, "bad %s level length", what);
			l = floe_load_u32le(p);
			start = 4;
		}
		floe_parquet__rle_init(&r, p + start, l, bw);
		if (floe_parquet__rle_get16(&r, lv, n))
			return corrupt(c, "truncated or malformed %s levels", what);
		*used = start + l;
	} else if (enc == FLOE_PARQUET_ENC_BIT_PACKED && prefixed) {
		size_t bytes = (n * bw + 7) / 8;
		if (floe_parquet__bitpacked_be_get16(p, len, bw, lv, n))
			return corrupt(c, "truncated %s levels", what);
		*used = bytes;
	} else {
		return corrupt(c, "%s level encoding %s", what, floe_parquet_encoding_name(enc));
	}
	for (size_t i = 0; i < n; i++)
		if (lv[i] > max)
			return corrupt(c, "%s level %u above the maximum %d", what, lv[i], max);
	return FLOE_OK;
}

/* ---- pages ----------------------------------------------------------------------- */

static int decompress(floe_parquet__rcol *c, const uint8_t *src, size_t n, size_t ulen,
		      const uint8_t **out)
{
	floe_error e = {0};
	if (c->codec == FLOE_CODEC_NONE) {
		if (n != ulen)
			return corrupt(c, "uncompressed page of %zu bytes claims %zu", n, ulen);
		*out = src;
		return FLOE_OK;
	}
	if (ulen > c->opts->max_page_bytes)
		return too_big(c, "page", ulen, c->opts->max_page_bytes);
	floe_buf_clear(&c->page);
	if (floe_buf_reserve(&c->page, ulen))
		return nomem(c);
	if (ulen == 0 && n <= 1) {
		*out = c->page.data;
		return FLOE_OK;
	}
	if (floe_codec_decompress(c->codec, src, n, c->page.data, ulen, &e))
		return corrupt(c, "%s", e.msg);
	c->page.len = ulen;
	*out = c->page.data;
	return FLOE_OK;
}

/* Load the next data page: 0 loaded, 1 end of chunk, < 0 error. */
static int load_page(floe_parquet__rcol *c)
{
	const int max_def = c->leaf->def_level, max_rep = c->leaf->rep_level;
	for (;;) {
		floe_parquet_page_header h;
		const uint8_t *hp, *body, *data;
		size_t avail, hlen = 0, csize, n, off = 0, used = 0, nv;
		char what[480];
		int rc;

		if (c->pos >= c->end) {
			c->chunk_done = true;
			return 1;
		}
		c->page_no++;
		avail = c->end - c->pos < HEADER_PROBE ? (size_t)(c->end - c->pos) : HEADER_PROBE;
		if ((rc = window(c, c->pos, avail, &hp)))
			return rc;
		snprintf(what, sizeof(what), "%s page %d header", c->ctx, c->page_no);
		rc = floe_parquet_page_header_parse(&h, hp, avail, &hlen, what, c->err);
		if (rc == FLOE_ECORRUPT && avail < c->end - c->pos && avail < HEADER_MAX) {
			avail = c->end - c->pos < HEADER_MAX ? (size_t)(c->end - c->pos) : HEADER_MAX;
			if ((rc = window(c, c->pos, avail, &hp)))
				return rc;
			rc = floe_parquet_page_header_parse(&h, hp, avail, &hlen, what, c->err);
		}
		if (rc)
			return rc;
		csize = (size_t)h.compressed_page_size;
		if (csize > c->opts->max_page_bytes)
			return too_big(c, "page", csize, c->opts->max_page_bytes);
		if (csize > c->end - c->pos - hlen)
			return corrupt(c, "page of %zu bytes runs past the column chunk", csize);
		if ((rc = window(c, c->pos + hlen, csize, &body)))
			return rc;
		/* spec: the crc covers the page as stored after its header (the
		 * compressed bytes; for v2 the levels too), for every page type */
		if (h.has_crc && c->opts->verify_checksums) {
			uint32_t got = floe_crc32(0, body, csize);
			if (got != (uint32_t)h.crc)
				return floe_error_corrupt(c->err,
							  "%s page %d at offset %llu: checksum 0x%08x != "
							  "0x%08x in its header (the page is damaged; CRC-32 "
							  "of %zu bytes)",
							  c->ctx, c->page_no, (unsigned long long)c->pos,
							  got, (uint32_t)h.crc, csize);
		}
		c->pos += hlen + csize;

		if (h.type == FLOE_PARQUET_DICTIONARY_PAGE) {
			if (!h.has_dictionary_page_header)
				return corrupt(c, "dictionary page without its header");
			if ((rc = decompress(c, body, csize, (size_t)h.uncompressed_page_size, &data)))
				return rc;
			if ((rc = load_dict(c, &h, data, (size_t)h.uncompressed_page_size)))
				return rc;
			continue;
		}
		if (h.type != FLOE_PARQUET_DATA_PAGE && h.type != FLOE_PARQUET_DATA_PAGE_V2)
			continue; /* index pages and unknown types are skipped */

		if (h.type == FLOE_PARQUET_DATA_PAGE) {
			if (!h.has_data_page_header)
				return corrupt(c, "data page without its header");
			n = (size_t)h.data_page_header.num_values;
			if (n > c->opts->max_page_values)
				return too_big(c, "value count", n, c->opts->max_page_values);
			if ((rc = decompress(c, body, csize, (size_t)h.uncompressed_page_size, &data)))
				return rc;
			size_t len = (size_t)h.uncompressed_page_size;
			if (max_rep > 0) {
				if ((rc = read_levels(c, h.data_page_header.repetition_level_encoding, data,
						      len, true, max_rep, &c->prep, n, &used, "repetition")))
					return rc;
				off += used;
			}
			if (max_def > 0) {
				if ((rc = read_levels(c, h.data_page_header.definition_level_encoding,
						      data + off, len - off, true, max_def, &c->pdef, n,
						      &used, "definition")))
					return rc;
				off += used;
			}
			nv = n;
			if (max_def > 0) {
				const uint16_t *d = (const uint16_t *)(void *)c->pdef.data;
				nv = 0;
				for (size_t i = 0; i < n; i++)
					nv += d[i] == max_def;
			}
			if ((rc = decode_values(c, h.data_page_header.encoding, data + off, len - off, nv, n)))
				return rc;
		} else {
			size_t rl, dl, vlen, ulen;
			if (!h.has_data_page_header_v2)
				return corrupt(c, "data page v2 without its header");
			n = (size_t)h.data_page_header_v2.num_values;
			rl = (size_t)h.data_page_header_v2.repetition_levels_byte_length;
			dl = (size_t)h.data_page_header_v2.definition_levels_byte_length;
			ulen = (size_t)h.uncompressed_page_size;
			if (n > c->opts->max_page_values)
				return too_big(c, "value count", n, c->opts->max_page_values);
			if (rl > csize || dl > csize - rl || rl + dl > ulen)
				return corrupt(c, "level lengths %zu + %zu exceed the page", rl, dl);
			if (max_rep > 0 &&
			    (rc = read_levels(c, FLOE_PARQUET_ENC_RLE, body, rl, false, max_rep, &c->prep, n,
					      &used, "repetition")))
				return rc;
			if (max_def > 0 &&
			    (rc = read_levels(c, FLOE_PARQUET_ENC_RLE, body + rl, dl, false, max_def,
					      &c->pdef, n, &used, "definition")))
				return rc;
			vlen = ulen - rl - dl;
			if (h.data_page_header_v2.is_compressed && c->codec != FLOE_CODEC_NONE &&
			    csize - rl - dl > 0) {
				if ((rc = decompress(c, body + rl + dl, csize - rl - dl, vlen, &data)))
					return rc;
			} else {
				if (csize - rl - dl != vlen)
					return corrupt(c, "uncompressed values of %zu bytes claim %zu",
						       csize - rl - dl, vlen);
				data = body + rl + dl;
			}
			nv = n;
			if (max_def > 0) {
				const uint16_t *d = (const uint16_t *)(void *)c->pdef.data;
				nv = 0;
				for (size_t i = 0; i < n; i++)
					nv += d[i] == max_def;
			}
			if ((rc = decode_values(c, h.data_page_header_v2.encoding, data, vlen, nv, n)))
				return rc;
		}
		if (max_rep > 0 && n > 0 && c->chunk_first &&
		    ((const uint16_t *)(void *)c->prep.data)[0] != 0)
			return corrupt(c, "the column chunk does not start a row");
		if (n > 0)
			c->chunk_first = false;
		c->page_levels = n;
		c->page_pos = 0;
		c->page_nvals = nv;
		c->page_vpos = 0;
		c->page_loaded = true;
		return FLOE_OK;
	}
}

/* Move k levels (and their values) from the page to the batch. */
static int take(floe_parquet__rcol *c, size_t k)
{
	const int max_def = c->leaf->def_level, max_rep = c->leaf->rep_level;
	size_t nv = k;
	if (k == 0)
		return FLOE_OK;
	if (max_def > 0) {
		const uint16_t *d = (const uint16_t *)(void *)c->pdef.data + c->page_pos;
		nv = 0;
		for (size_t i = 0; i < k; i++)
			nv += d[i] == max_def;
		if (floe_buf_append(&c->bdef, d, k * 2))
			return nomem(c);
	}
	if (max_rep > 0 &&
	    floe_buf_append(&c->brep, (const uint16_t *)(void *)c->prep.data + c->page_pos, k * 2))
		return nomem(c);
	if (nv > c->page_nvals - c->page_vpos)
		return corrupt(c, "fewer values than the levels define");
	if (nv == 0) {
		/* no values: nothing to copy (and no pointer arithmetic on an
		 * empty buffer's NULL) */
	} else if (c->out.kind == FLOE_PQ_OUT_BINARY) {
		const floe_parquet_view *v = (const floe_parquet_view *)(void *)c->pviews.data + c->page_vpos;
		int32_t *lens = (int32_t *)(void *)floe_parquet__extend(&c->blens, nv * 4);
		size_t total = 0;
		if (!lens)
			return nomem(c);
		for (size_t i = 0; i < nv; i++) {
			if (v[i].n > INT32_MAX || !floe_size_add(&total, total, v[i].n))
				return corrupt(c, "value too large");
			lens[i] = (int32_t)v[i].n;
		}
		if (floe_buf_reserve(&c->bdata, total)) {
			size_t need;
			if (floe_size_add(&need, c->bdata.len, total) && need <= c->bdata.max)
				return nomem(c); /* out of memory, not the cap */
			return floe_error_set(c->err, FLOE_EUNSUPPORTED,
					      "%s: more than 2 GiB of values in one batch (use smaller "
					      "batches)",
					      c->ctx);
		}
		uint8_t *dst = c->bdata.data + c->bdata.len;
		for (size_t i = 0; i < nv; i++) {
			if (v[i].n)
				memcpy(dst, v[i].p, v[i].n);
			dst += v[i].n;
		}
		c->bdata.len += total;
	} else if (c->out.kind != FLOE_PQ_OUT_NULL) {
		size_t w = (size_t)c->out.out_width;
		if (floe_buf_append(&c->bvals, c->pvals.data + c->page_vpos * w, nv * w))
			return nomem(c);
	}
	c->page_pos += k;
	c->page_vpos += nv;
	c->b_levels += k;
	c->b_vals += nv;
	return FLOE_OK;
}

int floe_parquet__rcol_read(floe_parquet__rcol *c, size_t rows, floe_error *err)
{
	const int max_rep = c->leaf->rep_level;
	size_t got = 0;
	int rc;
	c->err = err;
	for (;;) {
		size_t k = 0;
		if (!c->page_loaded || c->page_pos == c->page_levels) {
			if (got == rows && (max_rep == 0 || rows == 0))
				break;
			if (c->chunk_done)
				rc = 1;
			else
				rc = load_page(c);
			if (rc < 0)
				return rc;
			if (rc == 1) {
				if (got == rows)
					break;
				return floe_error_corrupt(err, "%s: the column ends after %zu of %zu rows", c->ctx,
						      got, rows);
			}
			if (c->page_levels == 0)
				continue;
			if (got == rows && ((const uint16_t *)(void *)c->prep.data)[0] == 0)
				break; /* the next page starts a new row */
		}
		if (max_rep == 0) {
			k = c->page_levels - c->page_pos;
			if (k > rows - got)
				k = rows - got;
			got += k;
		} else {
			const uint16_t *r = (const uint16_t *)(void *)c->prep.data;
			while (c->page_pos + k < c->page_levels) {
				if (r[c->page_pos + k] == 0) {
					if (got == rows)
						break;
					got++;
				}
				k++;
			}
		}
		if ((rc = take(c, k)))
			return rc;
		if (max_rep == 0 && got == rows)
			break;
		if (max_rep > 0 && c->page_pos < c->page_levels)
			break; /* stopped at the start of row rows + 1 */
	}
	return FLOE_OK;
}
