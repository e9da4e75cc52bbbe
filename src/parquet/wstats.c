/*
 * wstats.c — column statistics for the writer: min/max under the column's
 * type-defined order, NaN counting, and bound truncation.
 *
 * spec: parquet.thrift ColumnOrder / TypeDefinedOrder: signed integers
 * compare signed, INTEGER(unsigned) unsigned, BYTE_ARRAY and FLBA as unsigned
 * bytes except DECIMAL (signed big-endian), floats numerically with NaN
 * excluded. Floats are kept under IEEE total order (-0.0 < +0.0), which the
 * Iceberg bounds need; the footer writer applies the spec's zero rule.
 * DESIGN: floats compare through an order-preserving integer key, so the
 * hot loops are plain integer min/max.
 */
#include <string.h>

#include "parquet/wcol.h"
#include "util/alloc.h"

int floe_parquet__order_of(const floe_parquet_node *leaf)
{
	const floe_parquet_logical *lt = &leaf->logical;
	switch (leaf->physical) {
	case FLOE_PARQUET_BOOLEAN: return FLOE_PQ_ORD_BOOL;
	case FLOE_PARQUET_INT32:
		return lt->kind == FLOE_PARQUET_LT_INTEGER && !lt->is_signed ? FLOE_PQ_ORD_U32
									     : FLOE_PQ_ORD_I32;
	case FLOE_PARQUET_INT64:
		return lt->kind == FLOE_PARQUET_LT_INTEGER && !lt->is_signed ? FLOE_PQ_ORD_U64
									     : FLOE_PQ_ORD_I64;
	case FLOE_PARQUET_FLOAT: return FLOE_PQ_ORD_FLOAT;
	case FLOE_PARQUET_DOUBLE: return FLOE_PQ_ORD_DOUBLE;
	case FLOE_PARQUET_BYTE_ARRAY:
		return lt->kind == FLOE_PARQUET_LT_DECIMAL ? FLOE_PQ_ORD_SIGNED_BYTES : FLOE_PQ_ORD_BYTES;
	case FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY:
		if (lt->kind == FLOE_PARQUET_LT_DECIMAL)
			return FLOE_PQ_ORD_SIGNED_BYTES;
		if (lt->kind == FLOE_PARQUET_LT_FLOAT16)
			return FLOE_PQ_ORD_FLOAT16;
		if (leaf->converted == FLOE_PARQUET_CT_INTERVAL)
			return FLOE_PQ_ORD_NONE;
		return FLOE_PQ_ORD_BYTES;
	default: return FLOE_PQ_ORD_NONE;
	}
}

void floe_parquet__stats_init(floe_parquet__stats *s, int order)
{
	memset(s, 0, sizeof(*s));
	s->order = order;
	floe_buf_init(&s->min, 0);
	floe_buf_init(&s->max, 0);
}

void floe_parquet__stats_reset(floe_parquet__stats *s)
{
	floe_buf_reset(&s->min);
	floe_buf_reset(&s->max);
	floe_parquet__stats_init(s, s->order);
}

void floe_parquet__stats_clear(floe_parquet__stats *s)
{
	floe_buf_clear(&s->min);
	floe_buf_clear(&s->max);
	s->has = false;
	s->nan_count = 0;
}

/* Order-preserving keys: total order for IEEE floats, bias for signed ints. */
static inline uint32_t key_f32(uint32_t u)
{
	return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
static inline uint64_t key_f64(uint64_t u)
{
	return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
static inline bool nan_f32(uint32_t u)
{
	return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu);
}
static inline bool nan_f64(uint64_t u)
{
	return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0x000fffffffffffffull);
}
static inline bool nan_f16(uint16_t u)
{
	return (u & 0x7c00u) == 0x7c00u && (u & 0x03ffu);
}
static inline uint16_t key_f16(uint16_t u)
{
	return (u & 0x8000u) ? (uint16_t)~u : (uint16_t)(u | 0x8000u);
}

static uint64_t key_of(int order, const uint8_t *p)
{
	uint32_t u32;
	uint64_t u64;
	uint16_t u16;
	switch (order) {
	case FLOE_PQ_ORD_BOOL: return p[0] != 0;
	case FLOE_PQ_ORD_I32: memcpy(&u32, p, 4); return u32 ^ 0x80000000u;
	case FLOE_PQ_ORD_U32: memcpy(&u32, p, 4); return u32;
	case FLOE_PQ_ORD_FLOAT: memcpy(&u32, p, 4); return key_f32(u32);
	case FLOE_PQ_ORD_I64: memcpy(&u64, p, 8); return u64 ^ 0x8000000000000000ull;
	case FLOE_PQ_ORD_U64: memcpy(&u64, p, 8); return u64;
	case FLOE_PQ_ORD_DOUBLE: memcpy(&u64, p, 8); return key_f64(u64);
	case FLOE_PQ_ORD_FLOAT16: memcpy(&u16, p, 2); return key_f16(u16);
	default: return 0;
	}
}

static int cmp_signed_be(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	bool na = an && (a[0] & 0x80), nb = bn && (b[0] & 0x80);
	size_t n = an > bn ? an : bn;
	if (na != nb)
		return na ? -1 : 1;
	/* same sign: compare sign-extended to the longer length */
	for (size_t i = 0; i < n; i++) {
		uint8_t x = i < n - an ? (na ? 0xff : 0) : a[i - (n - an)];
		uint8_t y = i < n - bn ? (nb ? 0xff : 0) : b[i - (n - bn)];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

int floe_parquet__stats_cmp(int order, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	if (order == FLOE_PQ_ORD_BYTES)
		return floe_parquet__bytes_cmp(a, an, b, bn);
	if (order == FLOE_PQ_ORD_SIGNED_BYTES)
		return cmp_signed_be(a, an, b, bn);
	uint64_t x = key_of(order, a), y = key_of(order, b);
	return x < y ? -1 : x > y;
}

static int set_bound(floe_buf *b, const uint8_t *p, size_t n)
{
	floe_buf_clear(b);
	return floe_buf_append(b, p, n);
}

/* Merge one candidate min and max (raw bytes) into s. */
static int merge_pair(floe_parquet__stats *s, const uint8_t *mn, size_t mnn, const uint8_t *mx,
		      size_t mxn)
{
	if (!s->has) {
		if (set_bound(&s->min, mn, mnn) || set_bound(&s->max, mx, mxn))
			return FLOE_ENOMEM;
		s->has = true;
		return FLOE_OK;
	}
	if (floe_parquet__stats_cmp(s->order, mn, mnn, s->min.data, s->min.len) < 0 &&
	    set_bound(&s->min, mn, mnn))
		return FLOE_ENOMEM;
	if (floe_parquet__stats_cmp(s->order, mx, mxn, s->max.data, s->max.len) > 0 &&
	    set_bound(&s->max, mx, mxn))
		return FLOE_ENOMEM;
	return FLOE_OK;
}

int floe_parquet__stats_update_fixed(floe_parquet__stats *s, const uint8_t *v, size_t n, int width)
{
	size_t imin = SIZE_MAX, imax = SIZE_MAX;
	switch (s->order) {
	case FLOE_PQ_ORD_NONE: return FLOE_OK;
	case FLOE_PQ_ORD_I32: {
		int32_t lo = 0, hi = 0, x;
		for (size_t i = 0; i < n; i++) {
			memcpy(&x, v + 4 * i, 4);
			if (imin == SIZE_MAX) {
				lo = hi = x;
				imin = imax = i;
			} else if (x < lo) {
				lo = x;
				imin = i;
			} else if (x > hi) {
				hi = x;
				imax = i;
			}
		}
		break;
	}
	case FLOE_PQ_ORD_I64: {
		int64_t lo = 0, hi = 0, x;
		for (size_t i = 0; i < n; i++) {
			memcpy(&x, v + 8 * i, 8);
			if (imin == SIZE_MAX) {
				lo = hi = x;
				imin = imax = i;
			} else if (x < lo) {
				lo = x;
				imin = i;
			} else if (x > hi) {
				hi = x;
				imax = i;
			}
		}
		break;
	}
	case FLOE_PQ_ORD_FLOAT: {
		uint32_t lo = UINT32_MAX, hi = 0, u;
		for (size_t i = 0; i < n; i++) {
			memcpy(&u, v + 4 * i, 4);
			if (nan_f32(u)) {
				s->nan_count++;
				continue;
			}
			uint32_t k = key_f32(u);
			if (k <= lo)
				lo = k, imin = i;
			if (k >= hi)
				hi = k, imax = i;
		}
		break;
	}
	case FLOE_PQ_ORD_DOUBLE: {
		uint64_t lo = UINT64_MAX, hi = 0, u;
		for (size_t i = 0; i < n; i++) {
			memcpy(&u, v + 8 * i, 8);
			if (nan_f64(u)) {
				s->nan_count++;
				continue;
			}
			uint64_t k = key_f64(u);
			if (k <= lo)
				lo = k, imin = i;
			if (k >= hi)
				hi = k, imax = i;
		}
		break;
	}
	case FLOE_PQ_ORD_FLOAT16:
		for (size_t i = 0; i < n; i++) {
			uint16_t u;
			memcpy(&u, v + 2 * i, 2);
			if (nan_f16(u)) {
				s->nan_count++;
				continue;
			}
			if (imin == SIZE_MAX || key_f16(u) < key_of(s->order, v + 2 * imin))
				imin = i;
			if (imax == SIZE_MAX || key_f16(u) > key_of(s->order, v + 2 * imax))
				imax = i;
		}
		break;
	default:
		/* bool, unsigned ints, fixed-length bytes: generic */
		for (size_t i = 0; i < n; i++) {
			const uint8_t *x = v + (size_t)width * i;
			if (imin == SIZE_MAX ||
			    floe_parquet__stats_cmp(s->order, x, (size_t)width, v + (size_t)width * imin,
						    (size_t)width) < 0)
				imin = i;
			if (imax == SIZE_MAX ||
			    floe_parquet__stats_cmp(s->order, x, (size_t)width, v + (size_t)width * imax,
						    (size_t)width) > 0)
				imax = i;
		}
		break;
	}
	if (imin == SIZE_MAX)
		return FLOE_OK; /* no value, or all NaN */
	return merge_pair(s, v + (size_t)width * imin, (size_t)width, v + (size_t)width * imax,
			  (size_t)width);
}

int floe_parquet__stats_update_views(floe_parquet__stats *s, const floe_parquet_view *v, size_t n)
{
	size_t imin = SIZE_MAX, imax = SIZE_MAX;
	if (s->order == FLOE_PQ_ORD_NONE || n == 0)
		return FLOE_OK;
	imin = imax = 0;
	if (s->order == FLOE_PQ_ORD_BYTES) {
		/* the common case, with the comparison inlined */
		for (size_t i = 1; i < n; i++) {
			if (floe_parquet__bytes_cmp(v[i].p, v[i].n, v[imin].p, v[imin].n) < 0)
				imin = i;
			else if (floe_parquet__bytes_cmp(v[i].p, v[i].n, v[imax].p, v[imax].n) > 0)
				imax = i;
		}
	} else {
		for (size_t i = 1; i < n; i++) {
			if (floe_parquet__stats_cmp(s->order, v[i].p, v[i].n, v[imin].p, v[imin].n) < 0)
				imin = i;
			else if (floe_parquet__stats_cmp(s->order, v[i].p, v[i].n, v[imax].p,
							 v[imax].n) > 0)
				imax = i;
		}
	}
	return merge_pair(s, v[imin].p, v[imin].n, v[imax].p, v[imax].n);
}

int floe_parquet__stats_merge(floe_parquet__stats *dst, const floe_parquet__stats *src)
{
	dst->nan_count += src->nan_count;
	if (!src->has)
		return FLOE_OK;
	return merge_pair(dst, src->min.data, src->min.len, src->max.data, src->max.len);
}

/* ---- truncation ------------------------------------------------------ */

static size_t utf8_boundary(const uint8_t *p, size_t n, size_t cut)
{
	if (cut >= n)
		return n;
	while (cut > 0 && (p[cut] & 0xc0) == 0x80)
		cut--;
	return cut;
}

size_t floe_parquet__trunc_min(const uint8_t *p, size_t n, size_t cap, bool utf8)
{
	if (n <= cap)
		return n;
	return utf8 ? utf8_boundary(p, n, cap) : cap;
}

static size_t utf8_encode(uint32_t cp, uint8_t *o)
{
	if (cp < 0x80) {
		o[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (uint8_t)(0xc0 | cp >> 6);
		o[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (uint8_t)(0xe0 | cp >> 12);
		o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (uint8_t)(0xf0 | cp >> 18);
	o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decode the code point starting at p[i] (lenient); *len its byte length. */
static uint32_t utf8_decode(const uint8_t *p, size_t n, size_t i, size_t *len)
{
	uint8_t b = p[i];
	size_t l = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
	uint32_t cp = l == 1 ? b : l == 2 ? (b & 0x1fu) : l == 3 ? (b & 0x0fu) : (b & 0x07u);
	if (i + l > n)
		l = 1, cp = b;
	for (size_t k = 1; k < l; k++)
		cp = cp << 6 | (p[i + k] & 0x3fu);
	*len = l;
	return cp;
}

size_t floe_parquet__trunc_max(const uint8_t *p, size_t n, size_t cap, bool utf8, uint8_t *out)
{
	size_t len;
	if (cap == 0)
		return 0;
	if (!utf8) {
		len = n < cap ? n : cap;
		memcpy(out, p, len);
		while (len > 0) {
			if (out[len - 1] != 0xff) {
				out[len - 1]++;
				return len;
			}
			len--;
		}
		return 0;
	}
	len = utf8_boundary(p, n, cap);
	memcpy(out, p, len);
	/* code point starts, walking left */
	while (len > 0) {
		size_t start = len - 1, cl;
		uint8_t enc[4];
		while (start > 0 && (out[start] & 0xc0) == 0x80)
			start--;
		uint32_t cp = utf8_decode(out, len, start, &cl) + 1;
		if (cp >= 0xd800 && cp <= 0xdfff)
			cp = 0xe000;
		if (cp <= 0x10ffff) {
			size_t el = utf8_encode(cp, enc);
			if (start + el <= cap) {
				memcpy(out + start, enc, el);
				return start + el;
			}
		}
		len = start;
	}
	return 0;
}
