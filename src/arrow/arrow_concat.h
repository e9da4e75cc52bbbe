/*
 * arrow_concat.h — concatenating Arrow arrays of one type into one array
 * floe owns (for operations that need all rows of several batches at once,
 * such as sorting a compaction group).
 *
 * Every layout arrow_take handles is handled here too (null, bool, fixed
 * width, fixed-size binary, string/binary with 32/64-bit offsets, struct,
 * list, large list, fixed-size list, map), at any depth; input offsets are
 * applied (slices concatenate as what they show). The output has offset 0,
 * one allocation per buffer, and a validity bitmap only when some row is
 * null.
 *
 * Thread-safety: none needed.
 */
#ifndef FLOE_ARROW_CONCAT_H
#define FLOE_ARROW_CONCAT_H

#include "floe/arrow.h"
#include "floe/common.h"

/*
 * *out = arrays[0] ++ arrays[1] ++ ... (n >= 1, all typed by schema s).
 * FLOE_EINVAL when a 32-bit offset column would overflow, FLOE_EUNSUPPORTED
 * for dictionaries, FLOE_ENOMEM. The caller releases *out.
 */
int floe_arrow_concat(struct ArrowArray *out, const struct ArrowSchema *s,
		      const struct ArrowArray *const *arrays, size_t n, floe_error *err) FLOE_WUR;

#endif
