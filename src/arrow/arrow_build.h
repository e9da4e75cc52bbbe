/*
 * arrow_build.h — building Arrow C Data Interface structures that floe owns:
 * schema nodes that own their strings and children, arrays that own their
 * buffers and children, with release callbacks that free through
 * util/alloc.h. Also small lifecycle helpers (release, move, deep copy).
 *
 * Ownership: a struct initialised here is released by calling its release
 * callback (floe_arrow_*_release does so and accepts released structs). A
 * buffer handed to floe_arrow_array_set_buffer belongs to the array.
 * Children structs live inside the parent's private block; they may be
 * released on their own first (spec: "moving child arrays"), the parent
 * releases those still alive.
 *
 * Thread-safety: none needed; the structures are plain data.
 */
#ifndef FLOE_ARROW_BUILD_H
#define FLOE_ARROW_BUILD_H

#include "floe/arrow.h"
#include "floe/common.h"
#include "util/buf.h"

/*
 * Initialise s with a copy of format and name (name may be NULL) and
 * n_children zeroed child schemas (s->children[i]), which the caller then
 * initialises in turn. On error s is left released (s->release == NULL).
 */
int floe_arrow_schema_init(struct ArrowSchema *s, const char *format, const char *name,
			   int64_t flags, int64_t n_children) FLOE_WUR;

/* Replace s's metadata with n key/value pairs (copied, in the C Data
 * Interface's binary encoding). s must come from floe_arrow_schema_init. */
int floe_arrow_schema_set_metadata(struct ArrowSchema *s, const char *const *keys,
				   const char *const *values, size_t n) FLOE_WUR;

/* Look a key up in a schema's metadata (any producer's). Returns a pointer
 * into the metadata and its length, or NULL. Bounds-checked. */
const char *floe_arrow_metadata_get(const char *metadata, const char *key, size_t *len);

/* Deep copy of any producer's schema. */
int floe_arrow_schema_copy(struct ArrowSchema *dst, const struct ArrowSchema *src) FLOE_WUR;

void floe_arrow_schema_release(struct ArrowSchema *s); /* accepts released/NULL */
void floe_arrow_schema_move(struct ArrowSchema *dst, struct ArrowSchema *src);

/*
 * Initialise a as an owned array with n_buffers NULL buffers and n_children
 * zeroed child arrays (a->children[i]). length/null_count/offset are 0.
 */
int floe_arrow_array_init(struct ArrowArray *a, int64_t n_buffers, int64_t n_children) FLOE_WUR;

/* Hand buffer i (memory from floe_malloc, or NULL) to the array. */
void floe_arrow_array_set_buffer(struct ArrowArray *a, int64_t i, void *p);

/* Move a floe_buf's memory into buffer i (the buf is left empty). */
int floe_arrow_array_take_buf(struct ArrowArray *a, int64_t i, floe_buf *b) FLOE_WUR;

void floe_arrow_array_release(struct ArrowArray *a); /* accepts released/NULL */
void floe_arrow_array_move(struct ArrowArray *dst, struct ArrowArray *src);

#endif
