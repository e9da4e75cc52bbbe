/*
 * arrow_view.h — typed read access to one primitive Arrow column: validity
 * and the value at logical row i as an integer, a real or bytes, with the
 * offsets of the array and of its enclosing structs applied and the
 * validity of those structs folded in (a row whose parent struct is null is
 * null).
 *
 * This layer knows Arrow only: what a value means (an Iceberg date, a
 * decimal's scale) is decided above it (src/write converts views to
 * floe_value). Accessors are inline and allocate nothing, so callers can
 * run them per row in vectorised loops.
 *
 * A view borrows the array and schema: they must outlive it. Thread-safety:
 * a view is plain data; concurrent readers are fine.
 */
#ifndef FLOE_ARROW_VIEW_H
#define FLOE_ARROW_VIEW_H

#include <string.h>

#include "arrow/arrow_fmt.h"
#include "floe/arrow.h"
#include "floe/common.h"

#define FLOE_ARROW_VIEW_MAX_PARENTS 16

typedef struct floe_arrow_view {
	floe_arrow_fmt fmt;
	int64_t length;  /* logical rows */
	int64_t base;    /* physical index of logical row 0 in the buffers */
	int width;       /* bytes per value (fixed-width types), 0 otherwise */
	const uint8_t *validity; /* NULL = no nulls of its own */
	const uint8_t *data;     /* values; bit-packed for "b"; bytes of "u"/"z" */
	const int32_t *off32;    /* "u", "z" */
	const int64_t *off64;    /* "U", "Z" */
	/* enclosing structs with nulls: validity and physical index of row 0 */
	int n_parents;
	struct {
		const uint8_t *validity;
		int64_t base;
	} parents[FLOE_ARROW_VIEW_MAX_PARENTS];
} floe_arrow_view;

/*
 * A view of array a (schema s). Nested types (struct, lists, map) can be
 * viewed for their validity only; floe_arrow_view_child descends into a
 * struct. FLOE_EINVAL when the buffers the type needs are missing;
 * FLOE_EUNSUPPORTED for dictionary arrays. The array is not otherwise
 * checked (run floe_arrow_check on imported data first).
 */
int floe_arrow_view_init(floe_arrow_view *v, const struct ArrowSchema *s,
			 const struct ArrowArray *a, floe_error *err) FLOE_WUR;
/* The view of child i of a struct view (its rows are the parent's rows). */
int floe_arrow_view_child(floe_arrow_view *out, const floe_arrow_view *parent,
			  const struct ArrowSchema *cs, const struct ArrowArray *ca,
			  floe_error *err) FLOE_WUR;

/* True when the column may hold nulls (of its own or from a parent). */
static inline bool floe_arrow_view_nullable(const floe_arrow_view *v)
{
	return v->validity || v->n_parents > 0 || v->fmt.type == FLOE_ARROW_NA;
}

static inline bool floe_arrow_view_valid(const floe_arrow_view *v, int64_t i)
{
	int64_t j;
	if (v->fmt.type == FLOE_ARROW_NA)
		return false;
	for (int k = 0; k < v->n_parents; k++) {
		j = i + v->parents[k].base;
		if (!((v->parents[k].validity[j >> 3] >> (j & 7)) & 1))
			return false;
	}
	if (!v->validity)
		return true;
	j = i + v->base;
	return (v->validity[j >> 3] >> (j & 7)) & 1;
}

/*
 * Integer value of row i: bool (0/1), every signed/unsigned integer width,
 * date32 (days), date64 (ms), time32/time64/timestamp/duration (in the
 * unit of the format). uint64 values above INT64_MAX wrap.
 */
static inline int64_t floe_arrow_view_int(const floe_arrow_view *v, int64_t i)
{
	int64_t j = i + v->base;
	const uint8_t *p = v->data;
	switch (v->width) {
	case 0: return (p[j >> 3] >> (j & 7)) & 1; /* bool */
	case 1: return v->fmt.type == FLOE_ARROW_UINT8 ? (int64_t)p[j] : (int64_t)(int8_t)p[j];
	case 2: {
		uint16_t x;
		memcpy(&x, p + 2 * j, 2);
		return v->fmt.type == FLOE_ARROW_UINT16 ? (int64_t)x : (int64_t)(int16_t)x;
	}
	case 4: {
		uint32_t x;
		memcpy(&x, p + 4 * j, 4);
		return v->fmt.type == FLOE_ARROW_UINT32 ? (int64_t)x : (int64_t)(int32_t)x;
	}
	default: {
		int64_t x;
		memcpy(&x, p + 8 * j, 8);
		return x;
	}
	}
}

/* Float or double value of row i. */
static inline double floe_arrow_view_real(const floe_arrow_view *v, int64_t i)
{
	int64_t j = i + v->base;
	if (v->fmt.type == FLOE_ARROW_FLOAT) {
		float f;
		memcpy(&f, v->data + 4 * j, 4);
		return f;
	}
	double d;
	memcpy(&d, v->data + 8 * j, 8);
	return d;
}

/*
 * Bytes of row i: string/binary (32- and 64-bit offsets), fixed-size binary
 * (width bytes), decimal128/256 (16/32 little-endian two's-complement bytes
 * of the unscaled value). Points into the array.
 */
static inline const uint8_t *floe_arrow_view_bytes(const floe_arrow_view *v, int64_t i, size_t *n)
{
	int64_t j = i + v->base;
	if (v->off32) {
		*n = (size_t)(v->off32[j + 1] - v->off32[j]);
		return v->data + v->off32[j];
	}
	if (v->off64) {
		*n = (size_t)(v->off64[j + 1] - v->off64[j]);
		return v->data + v->off64[j];
	}
	*n = (size_t)v->width;
	return v->data + (size_t)j * (size_t)v->width;
}

#endif
