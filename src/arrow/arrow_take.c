/*
 * arrow_take.c — gathering Arrow rows by index (arrow_take.h).
 */
#include "arrow/arrow_take.h"

#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "arrow/arrow_fmt.h"
#include "util/alloc.h"

static int nomem(floe_error *err)
{
	return floe_error_oomf(err, "arrow take: out of memory");
}

/* Bytes for n values of w bytes; never 0 so every buffer is a real pointer. */
static void *alloc_values(int64_t n, size_t w)
{
	size_t total;
	if (n < 0 || !floe_size_mul(&total, (size_t)n, w))
		return NULL;
	return floe_malloc(total ? total : 1);
}

static const uint8_t *validity_of(const struct ArrowArray *a)
{
	return a->n_buffers > 0 && a->null_count != 0 ? a->buffers[0] : NULL;
}

static inline bool bit(const uint8_t *b, int64_t j)
{
	return (b[j >> 3] >> (j & 7)) & 1;
}

/* Gather the validity bitmap; no bitmap when every taken row is valid. */
static int take_validity(struct ArrowArray *out, const struct ArrowArray *a, const int64_t *idx,
			 int64_t n)
{
	const uint8_t *v = validity_of(a);
	int64_t nulls = 0, off = a->offset;
	uint8_t *bits;
	out->null_count = 0;
	if (!v)
		return FLOE_OK;
	bits = alloc_values((n + 7) / 8, 1);
	if (!bits)
		return FLOE_ENOMEM;
	for (int64_t i = 0; i < n; i += 8) {
		uint8_t byte = 0;
		int64_t m = n - i < 8 ? n - i : 8;
		for (int64_t k = 0; k < m; k++) {
			int64_t j = idx[i + k] + off;
			byte |= (uint8_t)(((v[j >> 3] >> (j & 7)) & 1) << k);
		}
		nulls += m - __builtin_popcount(byte);
		bits[i >> 3] = byte;
	}
	if (nulls == 0) {
		floe_free(bits);
		return FLOE_OK;
	}
	floe_arrow_array_set_buffer(out, 0, bits);
	out->null_count = nulls;
	return FLOE_OK;
}

static int take_fixed(struct ArrowArray *out, const struct ArrowArray *a, const int64_t *idx,
		      int64_t n, int width)
{
	const uint8_t *src = a->buffers[1];
	int64_t off = a->offset;
	uint8_t *dst = alloc_values(n, (size_t)width);
	if (!dst)
		return FLOE_ENOMEM;
	switch (width) {
	case 1:
		for (int64_t i = 0; i < n; i++)
			dst[i] = src[idx[i] + off];
		break;
	case 2:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 2 * i, src + 2 * (idx[i] + off), 2);
		break;
	case 4:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 4 * i, src + 4 * (idx[i] + off), 4);
		break;
	case 8:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 8 * i, src + 8 * (idx[i] + off), 8);
		break;
	case 16:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 16 * i, src + 16 * (idx[i] + off), 16);
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + (size_t)width * (size_t)i,
			       src + (size_t)width * (size_t)(idx[i] + off), (size_t)width);
		break;
	}
	floe_arrow_array_set_buffer(out, 1, dst);
	return FLOE_OK;
}

static int take_bool(struct ArrowArray *out, const struct ArrowArray *a, const int64_t *idx,
		     int64_t n)
{
	const uint8_t *src = a->buffers[1];
	int64_t off = a->offset;
	uint8_t *dst = alloc_values((n + 7) / 8, 1);
	if (!dst)
		return FLOE_ENOMEM;
	for (int64_t i = 0; i < n; i += 8) {
		uint8_t byte = 0;
		int64_t m = n - i < 8 ? n - i : 8;
		for (int64_t k = 0; k < m; k++)
			byte |= (uint8_t)(bit(src, idx[i + k] + off) << k);
		dst[i >> 3] = byte;
	}
	floe_arrow_array_set_buffer(out, 1, dst);
	return FLOE_OK;
}

/* String/binary: offsets rebuilt, bytes of valid rows copied. */
static int take_bytes(struct ArrowArray *out, const struct ArrowArray *a, const int64_t *idx,
		      int64_t n, bool large, floe_error *err)
{
	const uint8_t *v = validity_of(a), *data = a->buffers[2];
	const int32_t *o32 = a->buffers[1];
	const int64_t *o64 = a->buffers[1];
	int64_t off = a->offset, total = 0;
	uint8_t *dst;
	void *offs;
	for (int64_t i = 0; i < n; i++) {
		int64_t j = idx[i] + off;
		if (v && !bit(v, j))
			continue;
		total += large ? o64[j + 1] - o64[j] : (int64_t)(o32[j + 1] - o32[j]);
	}
	if (!large && total > INT32_MAX)
		return floe_error_set(err, FLOE_EINVAL,
				      "arrow take: %lld bytes do not fit a 32-bit offset string array",
				      (long long)total);
	offs = alloc_values(n + 1, large ? 8 : 4);
	dst = alloc_values(total, 1);
	if (!offs || !dst) {
		floe_free(offs);
		floe_free(dst);
		return nomem(err);
	}
	int64_t at = 0;
	for (int64_t i = 0; i < n; i++) {
		int64_t j = idx[i] + off, s, e;
		if (large) {
			((int64_t *)offs)[i] = at;
			s = o64[j];
			e = o64[j + 1];
		} else {
			((int32_t *)offs)[i] = (int32_t)at;
			s = o32[j];
			e = o32[j + 1];
		}
		if (v && !bit(v, j))
			continue;
		memcpy(dst + at, data + s, (size_t)(e - s));
		at += e - s;
	}
	if (large)
		((int64_t *)offs)[n] = at;
	else
		((int32_t *)offs)[n] = (int32_t)at;
	floe_arrow_array_set_buffer(out, 1, offs);
	floe_arrow_array_set_buffer(out, 2, dst);
	return FLOE_OK;
}

static int take_rec(struct ArrowArray *out, const struct ArrowSchema *s,
		    const struct ArrowArray *a, const int64_t *idx, int64_t n, int depth,
		    floe_error *err);

/* Variable-size lists and maps: offsets rebuilt, the child taken by the
 * indices of the elements of the taken rows. */
static int take_list(struct ArrowArray *out, const struct ArrowSchema *s,
		     const struct ArrowArray *a, const int64_t *idx, int64_t n, bool large,
		     int depth, floe_error *err)
{
	const uint8_t *v = validity_of(a);
	const int32_t *o32 = a->buffers[1];
	const int64_t *o64 = a->buffers[1];
	int64_t off = a->offset, total = 0, at = 0;
	int64_t *cidx = NULL;
	void *offs;
	int rc;
	for (int64_t i = 0; i < n; i++) {
		int64_t j = idx[i] + off;
		if (v && !bit(v, j))
			continue;
		total += large ? o64[j + 1] - o64[j] : (int64_t)(o32[j + 1] - o32[j]);
	}
	if (!large && total > INT32_MAX)
		return floe_error_set(err, FLOE_EINVAL,
				      "arrow take: %lld list elements do not fit 32-bit offsets",
				      (long long)total);
	offs = alloc_values(n + 1, large ? 8 : 4);
	cidx = alloc_values(total, sizeof(int64_t));
	if (!offs || !cidx) {
		floe_free(offs);
		floe_free(cidx);
		return nomem(err);
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t j = idx[i] + off, b, e;
		if (large)
			((int64_t *)offs)[i] = at;
		else
			((int32_t *)offs)[i] = (int32_t)at;
		if (v && !bit(v, j))
			continue;
		b = large ? o64[j] : o32[j];
		e = large ? o64[j + 1] : o32[j + 1];
		for (int64_t k = b; k < e; k++)
			cidx[at++] = k;
	}
	if (large)
		((int64_t *)offs)[n] = at;
	else
		((int32_t *)offs)[n] = (int32_t)at;
	floe_arrow_array_set_buffer(out, 1, offs);
	rc = take_rec(out->children[0], s->children[0], a->children[0], cidx, total, depth + 1, err);
	floe_free(cidx);
	return rc;
}

static int take_fixed_list(struct ArrowArray *out, const struct ArrowSchema *s,
			   const struct ArrowArray *a, const int64_t *idx, int64_t n, int32_t width,
			   int depth, floe_error *err)
{
	int64_t total, off = a->offset;
	int64_t *cidx;
	int rc;
	if (__builtin_mul_overflow(n, (int64_t)width, &total))
		return nomem(err);
	cidx = alloc_values(total, sizeof(int64_t));
	if (!cidx)
		return nomem(err);
	for (int64_t i = 0; i < n; i++)
		for (int32_t k = 0; k < width; k++)
			cidx[i * width + k] = (idx[i] + off) * width + k;
	rc = take_rec(out->children[0], s->children[0], a->children[0], cidx, total, depth + 1, err);
	floe_free(cidx);
	return rc;
}

static int take_struct(struct ArrowArray *out, const struct ArrowSchema *s,
		       const struct ArrowArray *a, const int64_t *idx, int64_t n, int depth,
		       floe_error *err)
{
	int64_t *shifted = NULL;
	const int64_t *cidx = idx;
	int rc = FLOE_OK;
	/* spec: a struct's offset applies to its children as well */
	if (a->offset != 0 && a->n_children > 0) {
		shifted = alloc_values(n, sizeof(int64_t));
		if (!shifted)
			return nomem(err);
		for (int64_t i = 0; i < n; i++)
			shifted[i] = idx[i] + a->offset;
		cidx = shifted;
	}
	for (int64_t c = 0; c < a->n_children && !rc; c++)
		rc = take_rec(out->children[c], s->children[c], a->children[c], cidx, n, depth + 1,
			      err);
	floe_free(shifted);
	return rc;
}

static int take_rec(struct ArrowArray *out, const struct ArrowSchema *s,
		    const struct ArrowArray *a, const int64_t *idx, int64_t n, int depth,
		    floe_error *err)
{
	floe_arrow_fmt f;
	int rc, nb;
	if (depth > FLOE_ARROW_MAX_DEPTH)
		return floe_error_set(err, FLOE_EINVAL, "arrow take: nested too deeply");
	if (s->dictionary || a->dictionary)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "arrow take: dictionary-encoded arrays are not supported");
	if ((rc = floe_arrow_fmt_parse(&f, s->format, err)))
		return rc;
	nb = floe_arrow_fmt_n_buffers(f.type);
	if ((rc = floe_arrow_array_init(out, nb, a->n_children)))
		return nomem(err);
	out->length = n;
	if (f.type == FLOE_ARROW_NA) {
		out->null_count = n;
		return FLOE_OK;
	}
	if ((rc = take_validity(out, a, idx, n)))
		goto fail_nomem;
	switch (f.type) {
	case FLOE_ARROW_BOOL: rc = take_bool(out, a, idx, n); break;
	case FLOE_ARROW_STRING:
	case FLOE_ARROW_BINARY: rc = take_bytes(out, a, idx, n, false, err); break;
	case FLOE_ARROW_LARGE_STRING:
	case FLOE_ARROW_LARGE_BINARY: rc = take_bytes(out, a, idx, n, true, err); break;
	case FLOE_ARROW_STRUCT: rc = take_struct(out, s, a, idx, n, depth, err); break;
	case FLOE_ARROW_LIST:
	case FLOE_ARROW_MAP: rc = take_list(out, s, a, idx, n, false, depth, err); break;
	case FLOE_ARROW_LARGE_LIST: rc = take_list(out, s, a, idx, n, true, depth, err); break;
	case FLOE_ARROW_FIXED_LIST:
		rc = take_fixed_list(out, s, a, idx, n, f.width, depth, err);
		break;
	default: {
		int w = floe_arrow_fmt_byte_width(&f);
		if (w <= 0) {
			rc = floe_error_set(err, FLOE_EUNSUPPORTED, "arrow take: format '%s'",
					    s->format);
			break;
		}
		rc = take_fixed(out, a, idx, n, w);
		break;
	}
	}
	if (rc == FLOE_ENOMEM)
		goto fail_nomem;
	if (rc)
		goto fail;
	return FLOE_OK;
fail_nomem:
	rc = nomem(err);
fail:
	floe_arrow_array_release(out);
	return rc;
}

int floe_arrow_take(struct ArrowArray *out, const struct ArrowSchema *s,
		    const struct ArrowArray *a, const int64_t *idx, int64_t n, floe_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!s || !a || !s->format || n < 0 || (n > 0 && !idx))
		return floe_error_set(err, FLOE_EINVAL, "arrow take: bad arguments");
	for (int64_t i = 0; i < n; i++)
		if (idx[i] < 0 || idx[i] >= a->length)
			return floe_error_set(err, FLOE_EINVAL,
					      "arrow take: index %lld out of range (length %lld)",
					      (long long)idx[i], (long long)a->length);
	return take_rec(out, s, a, idx, n, 0, err);
}

static void view_release(struct ArrowArray *a)
{
	a->release = NULL;
}

void floe_arrow_slice_view(struct ArrowArray *out, const struct ArrowArray *a, int64_t start,
			   int64_t len)
{
	*out = *a;
	out->offset = a->offset + start;
	out->length = len;
	out->null_count = a->null_count == 0 ? 0 : -1;
	out->private_data = NULL;
	out->release = view_release;
}
