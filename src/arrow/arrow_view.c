/*
 * arrow_view.c — setting up typed views of Arrow columns (arrow_view.h).
 */
#include "arrow/arrow_view.h"

static int view_fill(floe_arrow_view *v, const struct ArrowSchema *s, const struct ArrowArray *a,
		     int64_t base, floe_error *err)
{
	int rc;
	if (!s || !a || !s->format)
		return floe_error_set(err, FLOE_EINVAL, "arrow view: missing array or schema");
	if (s->dictionary || a->dictionary)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "arrow view: dictionary-encoded arrays are not supported");
	if ((rc = floe_arrow_fmt_parse(&v->fmt, s->format, err)))
		return rc;
	int nb = floe_arrow_fmt_n_buffers(v->fmt.type);
	if (a->n_buffers < nb || (nb > 0 && !a->buffers))
		return floe_error_set(err, FLOE_EINVAL, "arrow view: '%s' array without its buffers",
				      s->format);
	v->length = a->length;
	v->base = base + a->offset;
	v->validity = nb > 0 && a->null_count != 0 ? a->buffers[0] : NULL;
	v->data = NULL;
	v->off32 = NULL;
	v->off64 = NULL;
	v->width = floe_arrow_fmt_byte_width(&v->fmt);
	switch (v->fmt.type) {
	case FLOE_ARROW_NA:
	case FLOE_ARROW_STRUCT:
	case FLOE_ARROW_LIST:
	case FLOE_ARROW_LARGE_LIST:
	case FLOE_ARROW_FIXED_LIST:
	case FLOE_ARROW_MAP: break;
	case FLOE_ARROW_STRING:
	case FLOE_ARROW_BINARY:
		v->off32 = a->buffers[1];
		v->data = a->buffers[2];
		break;
	case FLOE_ARROW_LARGE_STRING:
	case FLOE_ARROW_LARGE_BINARY:
		v->off64 = a->buffers[1];
		v->data = a->buffers[2];
		break;
	default: v->data = a->buffers[1]; break;
	}
	bool nested = v->fmt.type == FLOE_ARROW_STRUCT || v->fmt.type == FLOE_ARROW_LIST ||
		      v->fmt.type == FLOE_ARROW_LARGE_LIST || v->fmt.type == FLOE_ARROW_FIXED_LIST ||
		      v->fmt.type == FLOE_ARROW_MAP;
	if (a->length > 0 && nb > 1 && !nested && !v->data)
		return floe_error_set(err, FLOE_EINVAL, "arrow view: '%s' array without data",
				      s->format);
	return FLOE_OK;
}

int floe_arrow_view_init(floe_arrow_view *v, const struct ArrowSchema *s,
			 const struct ArrowArray *a, floe_error *err)
{
	v->n_parents = 0;
	return view_fill(v, s, a, 0, err);
}

int floe_arrow_view_child(floe_arrow_view *out, const floe_arrow_view *parent,
			  const struct ArrowSchema *cs, const struct ArrowArray *ca,
			  floe_error *err)
{
	if (parent->fmt.type != FLOE_ARROW_STRUCT)
		return floe_error_set(err, FLOE_EINVAL, "arrow view: child of a non-struct column");
	out->n_parents = parent->n_parents;
	for (int k = 0; k < parent->n_parents; k++)
		out->parents[k] = parent->parents[k];
	if (parent->validity) {
		if (out->n_parents >= FLOE_ARROW_VIEW_MAX_PARENTS)
			return floe_error_set(err, FLOE_EUNSUPPORTED,
					      "arrow view: more than %d nullable enclosing structs",
					      FLOE_ARROW_VIEW_MAX_PARENTS);
		out->parents[out->n_parents].validity = parent->validity;
		out->parents[out->n_parents].base = parent->base;
		out->n_parents++;
	}
	/* spec: a struct's offset applies to its children as well */
	return view_fill(out, cs, ca, parent->base, err);
}
