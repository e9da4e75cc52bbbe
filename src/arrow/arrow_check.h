/*
 * arrow_check.h — importing a caller's ArrowArray + ArrowSchema: check that
 * the pair is well formed before any code indexes into its buffers.
 *
 * The C Data Interface carries no buffer sizes, so what can be checked is
 * structure: release callbacks set, formats understood, buffer and child
 * counts matching the layout, lengths/offsets non-negative and without
 * overflow, buffers present where the layout needs them, list and string
 * offsets monotonic and within the child (lists), and children long enough
 * for their parent. The data bytes of a string are trusted to extend to its
 * last offset (the producer's promise).
 */
#ifndef FLOE_ARROW_CHECK_H
#define FLOE_ARROW_CHECK_H

#include "arrow/arrow_fmt.h"
#include "floe/arrow.h"
#include "floe/common.h"

#define FLOE_ARROW_MAX_DEPTH 64

/* FLOE_EINVAL (malformed) or FLOE_EUNSUPPORTED (a format floe does not
 * handle, dictionary-encoded arrays) with the path of the offending node. */
int floe_arrow_check(const struct ArrowSchema *s, const struct ArrowArray *a,
		     floe_error *err) FLOE_WUR;

/* Validity of element i of an array (offset applied): true when valid. */
static inline bool floe_arrow_is_valid(const struct ArrowArray *a, int64_t i)
{
	const uint8_t *v = a->n_buffers > 0 ? (const uint8_t *)a->buffers[0] : NULL;
	int64_t j = i + a->offset;
	return !v || ((v[j >> 3] >> (j & 7)) & 1);
}

#endif
