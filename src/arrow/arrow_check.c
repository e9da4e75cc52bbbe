/*
 * arrow_check.c — structural validation of imported Arrow arrays.
 */
#include "arrow/arrow_check.h"

#include <stdio.h>
#include <string.h>

static int fail(floe_error *err, int code, const char *path, const char *what)
{
	return floe_error_set(err, code, "arrow array '%s': %s", path, what);
}

static int check_offsets32(const int32_t *o, int64_t from, int64_t n, int64_t limit,
			   const char *path, floe_error *err)
{
	if (o[from] < 0)
		return fail(err, FLOE_EINVAL, path, "negative offset");
	for (int64_t i = from; i < from + n; i++)
		if (o[i + 1] < o[i])
			return fail(err, FLOE_EINVAL, path, "offsets decrease");
	if (limit >= 0 && o[from + n] > limit)
		return fail(err, FLOE_EINVAL, path, "offsets past the end of the child array");
	return FLOE_OK;
}

static int check_offsets64(const int64_t *o, int64_t from, int64_t n, int64_t limit,
			   const char *path, floe_error *err)
{
	if (o[from] < 0)
		return fail(err, FLOE_EINVAL, path, "negative offset");
	for (int64_t i = from; i < from + n; i++)
		if (o[i + 1] < o[i])
			return fail(err, FLOE_EINVAL, path, "offsets decrease");
	if (limit >= 0 && o[from + n] > limit)
		return fail(err, FLOE_EINVAL, path, "offsets past the end of the child array");
	return FLOE_OK;
}

static int check(const struct ArrowSchema *s, const struct ArrowArray *a, int depth,
		 const char *path, floe_error *err)
{
	floe_arrow_fmt f;
	int rc, nb;
	int64_t end;
	char sub[256];

	if (depth > FLOE_ARROW_MAX_DEPTH)
		return fail(err, FLOE_EINVAL, path, "nested too deeply");
	if (!s || !a || !s->release || !a->release)
		return fail(err, FLOE_EINVAL, path, "released or missing");
	if ((rc = floe_arrow_fmt_parse(&f, s->format, err)))
		return floe_error_prefix(err, rc, "arrow array '%s': ", path);
	if (s->dictionary || a->dictionary)
		return fail(err, FLOE_EUNSUPPORTED, path, "dictionary-encoded arrays");
	if (a->length < 0 || a->offset < 0 || __builtin_add_overflow(a->length, a->offset, &end))
		return fail(err, FLOE_EINVAL, path, "negative or overflowing length/offset");
	if (a->null_count < -1 || a->null_count > a->length)
		return fail(err, FLOE_EINVAL, path, "null_count out of range");
	nb = floe_arrow_fmt_n_buffers(f.type);
	if (a->n_buffers != nb)
		return fail(err, FLOE_EINVAL, path, "wrong number of buffers for its type");
	if (nb > 0 && !a->buffers)
		return fail(err, FLOE_EINVAL, path, "buffers missing");
	if (a->n_children != s->n_children || (a->n_children > 0 && (!a->children || !s->children)))
		return fail(err, FLOE_EINVAL, path, "schema and array disagree on children");
	/* A missing validity buffer means all valid, whatever null_count says. */
	for (int i = 1; i < nb; i++)
		if (a->length > 0 && !a->buffers[i])
			return fail(err, FLOE_EINVAL, path, "data buffer missing");

	switch (f.type) {
	case FLOE_ARROW_STRING:
	case FLOE_ARROW_BINARY:
		if (a->length > 0)
			return check_offsets32(a->buffers[1], a->offset, a->length, -1, path, err);
		break;
	case FLOE_ARROW_LARGE_STRING:
	case FLOE_ARROW_LARGE_BINARY:
		if (a->length > 0)
			return check_offsets64(a->buffers[1], a->offset, a->length, -1, path, err);
		break;
	case FLOE_ARROW_STRUCT:
		for (int64_t i = 0; i < a->n_children; i++) {
			const struct ArrowArray *c = a->children[i];
			const struct ArrowSchema *cs = s->children[i];
			snprintf(sub, sizeof(sub), "%s.%s", path, cs && cs->name ? cs->name : "?");
			if ((rc = check(cs, c, depth + 1, sub, err)))
				return rc;
			if (c->length < end)
				return fail(err, FLOE_EINVAL, sub, "struct child shorter than its parent");
		}
		break;
	case FLOE_ARROW_LIST:
	case FLOE_ARROW_LARGE_LIST:
	case FLOE_ARROW_MAP: {
		const struct ArrowArray *c;
		if (a->n_children != 1)
			return fail(err, FLOE_EINVAL, path, "a list needs one child");
		c = a->children[0];
		snprintf(sub, sizeof(sub), "%s[]", path);
		if ((rc = check(s->children[0], c, depth + 1, sub, err)))
			return rc;
		if (f.type == FLOE_ARROW_MAP) {
			const struct ArrowSchema *e = s->children[0];
			if (strcmp(e->format, "+s") != 0 || e->n_children != 2)
				return fail(err, FLOE_EINVAL, path,
					    "map entries must be a struct of key and value");
		}
		if (a->length == 0)
			break;
		if (f.type == FLOE_ARROW_LARGE_LIST)
			return check_offsets64(a->buffers[1], a->offset, a->length, c->length, path,
					       err);
		return check_offsets32(a->buffers[1], a->offset, a->length, c->length, path, err);
	}
	case FLOE_ARROW_FIXED_LIST: {
		int64_t need;
		if (a->n_children != 1)
			return fail(err, FLOE_EINVAL, path, "a list needs one child");
		snprintf(sub, sizeof(sub), "%s[]", path);
		if ((rc = check(s->children[0], a->children[0], depth + 1, sub, err)))
			return rc;
		if (__builtin_mul_overflow(end, (int64_t)f.width, &need) ||
		    a->children[0]->length < need)
			return fail(err, FLOE_EINVAL, path, "fixed-size list child too short");
		break;
	}
	default:
		if (a->n_children != 0)
			return fail(err, FLOE_EINVAL, path, "a primitive array has children");
		break;
	}
	return FLOE_OK;
}

int floe_arrow_check(const struct ArrowSchema *s, const struct ArrowArray *a, floe_error *err)
{
	return check(s, a, 0, s && s->name && *s->name ? s->name : "$", err);
}
