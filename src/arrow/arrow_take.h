/*
 * arrow_take.h — gathering rows of an Arrow array by an index vector
 * ("take"), producing an array floe owns.
 *
 * Every layout the C Data Interface helpers parse is handled: null, bool,
 * every fixed-width primitive (ints, floats, half floats, decimal128/256,
 * dates, times, timestamps, durations, fixed-size binary), string/binary
 * with 32- and 64-bit offsets, struct, list, large list, fixed-size list and
 * map, nested to any depth. Validity bitmaps are gathered (an output without
 * nulls has no bitmap), offsets rebuilt from 0, null list slots get length 0.
 *
 * DESIGN: one pass sizes each output buffer, one allocation per buffer, one
 * pass fills it: no allocation per value. A list's child is gathered with
 * the index vector of the elements of the taken rows (built once per level
 * in one scratch allocation), so nested data costs one extra int64 per
 * element. Output arrays have offset 0 and own their buffers
 * (arrow/arrow_build.h); the input is only read.
 *
 * Thread-safety: none needed (no shared state).
 */
#ifndef FLOE_ARROW_TAKE_H
#define FLOE_ARROW_TAKE_H

#include "floe/arrow.h"
#include "floe/common.h"

/*
 * *out = rows idx[0..n) of array a (logical rows: a->offset is applied),
 * typed by schema s (which also describes *out). The indices must lie in
 * [0, a->length) (FLOE_EINVAL otherwise); they may repeat and come in any
 * order. The input must be well formed (floe_arrow_check). FLOE_ENOMEM,
 * FLOE_EUNSUPPORTED for dictionary-encoded arrays. On error *out is left
 * released. The caller releases *out.
 */
int floe_arrow_take(struct ArrowArray *out, const struct ArrowSchema *s,
		    const struct ArrowArray *a, const int64_t *idx, int64_t n,
		    floe_error *err) FLOE_WUR;

/*
 * A zero-copy slice: *out describes rows [start, start + len) of a (which
 * must outlive it) and has a release callback that frees nothing. Used to
 * hand part of a batch to a consumer that takes a struct ArrowArray.
 */
void floe_arrow_slice_view(struct ArrowArray *out, const struct ArrowArray *a, int64_t start,
			   int64_t len);

#endif
