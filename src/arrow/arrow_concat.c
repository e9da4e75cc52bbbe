/*
 * arrow_concat.c — concatenation of Arrow arrays.
 *
 * DESIGN: the recursion works on segments (an array, a first logical row,
 * a row count) so that list children (a range of the child) and struct
 * children (the parent's offset applies) are described without building
 * slice structs; sizes are known before any copy, so every buffer is one
 * allocation.
 */
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_concat.h"
#include "arrow/arrow_fmt.h"
#include "util/alloc.h"

typedef struct seg {
	const struct ArrowArray *a;
	int64_t start; /* physical index of the first row (offsets applied) */
	int64_t len;
} seg;

static bool bit(const uint8_t *p, int64_t i)
{
	return (p[i >> 3] >> (i & 7)) & 1;
}

static void set_bit(uint8_t *p, int64_t i, bool v)
{
	if (v)
		p[i >> 3] |= (uint8_t)(1u << (i & 7));
	else
		p[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

/* Validity of the output: NULL when no segment has a null row. */
static int concat_validity(struct ArrowArray *out, const seg *s, size_t n, int64_t total)
{
	int64_t nulls = 0;
	bool any = false;
	for (size_t i = 0; i < n && !any; i++)
		any = s[i].a->null_count != 0 && s[i].a->n_buffers > 0 && s[i].a->buffers[0];
	if (!any)
		return FLOE_OK;
	uint8_t *v = floe_malloc((size_t)(total + 7) / 8 + 1);
	if (!v)
		return FLOE_ENOMEM;
	int64_t at = 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *src = s[i].a->n_buffers > 0 ? s[i].a->buffers[0] : NULL;
		for (int64_t r = 0; r < s[i].len; r++, at++) {
			bool ok = !src || s[i].a->null_count == 0 || bit(src, s[i].start + r);
			set_bit(v, at, ok);
			nulls += !ok;
		}
	}
	floe_arrow_array_set_buffer(out, 0, v);
	out->null_count = nulls;
	return FLOE_OK;
}

static int concat_rec(struct ArrowArray *out, const struct ArrowSchema *sc, const seg *s, size_t n,
		      floe_error *err);

static int fail(floe_error *err, int rc)
{
	return rc == FLOE_ENOMEM ? floe_error_set(err, rc, "out of memory") : rc;
}

static int concat_fixed(struct ArrowArray *out, const seg *s, size_t n, int64_t total, int width,
			bool bits)
{
	size_t bytes = bits ? (size_t)(total + 7) / 8 + 1 : (size_t)total * (size_t)width + 1;
	uint8_t *d = floe_malloc(bytes);
	if (!d)
		return FLOE_ENOMEM;
	int64_t at = 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *src = s[i].a->buffers[1];
		if (bits) {
			for (int64_t r = 0; r < s[i].len; r++)
				set_bit(d, at + r, src && bit(src, s[i].start + r));
		} else if (s[i].len && src) {
			memcpy(d + at * width, src + s[i].start * width, (size_t)(s[i].len * width));
		} else if (s[i].len) {
			memset(d + at * width, 0, (size_t)(s[i].len * width));
		}
		at += s[i].len;
	}
	floe_arrow_array_set_buffer(out, 1, d);
	return FLOE_OK;
}

static int64_t off_at(const struct ArrowArray *a, bool large, int64_t i)
{
	return large ? ((const int64_t *)a->buffers[1])[i] : ((const int32_t *)a->buffers[1])[i];
}

/* Offsets of a var-binary or list column; *child_segs (lists) gets each
 * segment's child range. */
static int concat_offsets(struct ArrowArray *out, const seg *s, size_t n, int64_t total,
			  bool large, seg *child_segs, int64_t *child_total, floe_error *err)
{
	size_t w = large ? 8 : 4;
	uint8_t *o = floe_malloc(((size_t)total + 1) * w);
	if (!o)
		return FLOE_ENOMEM;
	int64_t at = 0, base = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t first = s[i].len ? off_at(s[i].a, large, s[i].start) : 0;
		int64_t last = s[i].len ? off_at(s[i].a, large, s[i].start + s[i].len) : 0;
		for (int64_t r = 0; r < s[i].len; r++, at++) {
			int64_t v = base + off_at(s[i].a, large, s[i].start + r) - first;
			if (!large && v > INT32_MAX) {
				floe_free(o);
				return floe_error_set(err, FLOE_EINVAL,
						      "concatenation overflows 32-bit offsets");
			}
			if (large)
				((int64_t *)o)[at] = v;
			else
				((int32_t *)o)[at] = (int32_t)v;
		}
		if (child_segs)
			child_segs[i] = (seg){NULL, first, last - first};
		base += last - first;
	}
	if (large)
		((int64_t *)o)[at] = base;
	else
		((int32_t *)o)[at] = (int32_t)base;
	floe_arrow_array_set_buffer(out, 1, o);
	*child_total = base;
	return FLOE_OK;
}

static int concat_rec(struct ArrowArray *out, const struct ArrowSchema *sc, const seg *s, size_t n,
		      floe_error *err)
{
	floe_arrow_fmt f;
	int64_t total = 0;
	int rc;
	if (sc->dictionary)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "cannot concatenate dictionary arrays");
	if ((rc = floe_arrow_fmt_parse(&f, sc->format, err)))
		return rc;
	for (size_t i = 0; i < n; i++)
		total += s[i].len;
	int n_buffers = floe_arrow_fmt_n_buffers(f.type);
	int64_t n_children = f.type == FLOE_ARROW_STRUCT ? sc->n_children
			     : (f.type == FLOE_ARROW_LIST || f.type == FLOE_ARROW_LARGE_LIST ||
				f.type == FLOE_ARROW_FIXED_LIST || f.type == FLOE_ARROW_MAP)
				     ? 1
				     : 0;
	if ((rc = floe_arrow_array_init(out, n_buffers, n_children)))
		return fail(err, rc);
	out->length = total;
	if (f.type == FLOE_ARROW_NA) {
		out->null_count = total;
		return FLOE_OK;
	}
	if ((rc = concat_validity(out, s, n, total)))
		goto fail;
	switch (f.type) {
	case FLOE_ARROW_BOOL: rc = concat_fixed(out, s, n, total, 0, true); break;
	case FLOE_ARROW_STRING:
	case FLOE_ARROW_BINARY:
	case FLOE_ARROW_LARGE_STRING:
	case FLOE_ARROW_LARGE_BINARY: {
		bool large = f.type == FLOE_ARROW_LARGE_STRING || f.type == FLOE_ARROW_LARGE_BINARY;
		seg *ranges = floe_calloc(n + 1, sizeof(seg));
		int64_t bytes = 0;
		if (!ranges) {
			rc = FLOE_ENOMEM;
			break;
		}
		rc = concat_offsets(out, s, n, total, large, ranges, &bytes, err);
		uint8_t *d = rc ? NULL : floe_malloc((size_t)bytes + 1);
		if (!rc && !d)
			rc = FLOE_ENOMEM;
		for (size_t i = 0, at = 0; i < n && !rc; i++) {
			if (ranges[i].len)
				memcpy(d + at, (const uint8_t *)s[i].a->buffers[2] + ranges[i].start,
				       (size_t)ranges[i].len);
			at += (size_t)ranges[i].len;
		}
		if (!rc)
			floe_arrow_array_set_buffer(out, 2, d);
		floe_free(ranges);
		break;
	}
	case FLOE_ARROW_STRUCT: {
		seg *cs = floe_calloc(n + 1, sizeof(seg));
		if (!cs) {
			rc = FLOE_ENOMEM;
			break;
		}
		for (int64_t c = 0; c < sc->n_children && !rc; c++) {
			for (size_t i = 0; i < n; i++) {
				const struct ArrowArray *ch = s[i].a->children[c];
				/* spec: the parent's offset applies to its children too */
				cs[i] = (seg){ch, ch->offset + s[i].start, s[i].len};
			}
			rc = concat_rec(out->children[c], sc->children[c], cs, n, err);
		}
		floe_free(cs);
		break;
	}
	case FLOE_ARROW_LIST:
	case FLOE_ARROW_LARGE_LIST:
	case FLOE_ARROW_MAP: {
		seg *cs = floe_calloc(n + 1, sizeof(seg));
		int64_t elems = 0;
		if (!cs) {
			rc = FLOE_ENOMEM;
			break;
		}
		rc = concat_offsets(out, s, n, total, f.type == FLOE_ARROW_LARGE_LIST, cs, &elems,
				    err);
		for (size_t i = 0; i < n && !rc; i++) {
			const struct ArrowArray *ch = s[i].a->children[0];
			cs[i].a = ch;
			cs[i].start += ch->offset;
		}
		if (!rc)
			rc = concat_rec(out->children[0], sc->children[0], cs, n, err);
		floe_free(cs);
		break;
	}
	case FLOE_ARROW_FIXED_LIST: {
		seg *cs = floe_calloc(n + 1, sizeof(seg));
		if (!cs) {
			rc = FLOE_ENOMEM;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			const struct ArrowArray *ch = s[i].a->children[0];
			cs[i] = (seg){ch, ch->offset + s[i].start * f.width, s[i].len * f.width};
		}
		rc = concat_rec(out->children[0], sc->children[0], cs, n, err);
		floe_free(cs);
		break;
	}
	default: {
		int width = floe_arrow_fmt_byte_width(&f);
		if (width <= 0) {
			rc = floe_error_set(err, FLOE_EUNSUPPORTED, "cannot concatenate format '%s'",
					    sc->format);
			break;
		}
		rc = concat_fixed(out, s, n, total, width, false);
	}
	}
fail:
	if (rc) {
		floe_arrow_array_release(out);
		return fail(err, rc);
	}
	return FLOE_OK;
}

int floe_arrow_concat(struct ArrowArray *out, const struct ArrowSchema *s,
		      const struct ArrowArray *const *arrays, size_t n, floe_error *err)
{
	seg *segs;
	int rc;
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return floe_error_set(err, FLOE_EINVAL, "nothing to concatenate");
	if (!(segs = floe_calloc(n, sizeof(*segs))))
		return floe_error_oom(err);
	for (size_t i = 0; i < n; i++)
		segs[i] = (seg){arrays[i], arrays[i]->offset, arrays[i]->length};
	rc = concat_rec(out, s, segs, n, err);
	floe_free(segs);
	return rc;
}
