/*
 * writer.c — the Parquet writer: binding Arrow batches to the schema,
 * shredding them into definition/repetition levels and values per leaf
 * column, row-group sizing, the footer, per-column results, and the shared
 * memory budget.
 *
 * DESIGN (shredding): for each leaf, the batch is walked along the leaf's
 * path only, over ranges of slots rather than single values: a struct passes
 * runs of non-null slots to its child as one range, a list passes the range
 * of its elements, a leaf converts a run of valid values in one call. A flat
 * column is therefore one leaf call per row slice. Each range carries the
 * repetition level of its first slot and of the others (spec: Dremel
 * encoding, as parquet-format describes levels).
 */
#include "parquet/writer.h"

#include <pthread.h>
#include <string.h>

#include "arrow/arrow_check.h"
#include "arrow/arrow_fmt.h"
#include "parquet/wcol.h"
#include "util/alloc.h"
#include "util/bitpack.h"
#include "util/cursor.h"
#include "util/str.h"

#define ROW_SLICE 8192 /* rows between row-group and budget checks */

enum node_kind { NK_STRUCT, NK_LIST, NK_MAP, NK_LEAF };

enum conv {
	CV_COPY,  /* same width, same bytes */
	CV_BOOL,  /* bitmap -> 0/1 bytes */
	CV_I8,    /* int8 -> INT32 */
	CV_U8,
	CV_I16,
	CV_U16,
	CV_MUL,   /* 64-bit times factor (timestamp/time units) */
	CV_DEC_I32,
	CV_DEC_I64,
	CV_DEC_FIXED, /* decimal128 -> big-endian, column width */
	CV_DEC_BYTES, /* decimal128 -> minimal big-endian */
	CV_STR32,
	CV_STR64,
	CV_NULL, /* arrow null type: every value null */
};

typedef struct leaf_bind {
	int conv;
	int arrow_width; /* bytes per value in the Arrow buffer */
	int64_t factor;
} leaf_bind;

struct floe_parquet_writer {
	floe_output *out;
	const floe_parquet_schema *schema;
	floe_parquet_writer_opts opts;
	uint64_t start_pos;
	floe_parquet__wcol *cols;
	int n_cols;
	unsigned char *kind; /* per node */
	unsigned char *large; /* per node: the batch has 64-bit list offsets */
	leaf_bind *bind;     /* per leaf, for the batch being written */
	int64_t rg_rows, total_rows;
	floe_arena meta; /* row-group metadata */
	floe_parquet_row_group *rgs;
	size_t n_rgs, cap_rgs;
	floe_strmap kv;
	bool closed, failed;
	floe_parquet_file_result result;
	/* shredding scratch */
	floe_buf def, rep, vals, bytes;
	const void *direct; /* values taken straight from the batch */
	size_t n_levels, n_vals;
	int leaf; /* the leaf being shredded */
	floe_error *err;
	/* budget */
	floe_parquet_budget *budget;
	size_t reported;
	floe_parquet_writer *b_next;
};

struct floe_parquet_budget {
	pthread_mutex_t mu;
	uint64_t limit, used;
	floe_parquet_writer *head;
	floe_parquet_budget_fn fn;
	void *payload;
};

/* ---- schema checks and batch binding ----------------------------------- */

static int classify(floe_parquet_writer *w, floe_error *err)
{
	const floe_parquet_schema *s = w->schema;
	for (int i = 1; i < s->n_nodes; i++) {
		const floe_parquet_node *n = s->nodes[i];
		char path[512];
		if (n->physical >= 0) {
			w->kind[i] = NK_LEAF;
		} else if (n->logical.kind == FLOE_PARQUET_LT_LIST) {
			const floe_parquet_node *m = n->n_children == 1 ? n->children[0] : NULL;
			if (!m || m->repetition != FLOE_PARQUET_REPEATED || m->physical >= 0 ||
			    m->n_children != 1 || n->repetition == FLOE_PARQUET_REPEATED)
				return floe_error_set(err, FLOE_EUNSUPPORTED,
						      "parquet writer: '%s' is not a 3-level LIST",
						      floe_parquet_node_path(n, path, sizeof(path)));
			w->kind[i] = NK_LIST;
		} else if (n->logical.kind == FLOE_PARQUET_LT_MAP) {
			const floe_parquet_node *m = n->n_children == 1 ? n->children[0] : NULL;
			if (!m || m->repetition != FLOE_PARQUET_REPEATED || m->physical >= 0 ||
			    m->n_children != 2 || m->children[0]->repetition != FLOE_PARQUET_REQUIRED ||
			    n->repetition == FLOE_PARQUET_REPEATED)
				return floe_error_set(err, FLOE_EUNSUPPORTED,
						      "parquet writer: '%s' is not a standard MAP",
						      floe_parquet_node_path(n, path, sizeof(path)));
			w->kind[i] = NK_MAP;
		} else {
			w->kind[i] = NK_STRUCT;
		}
		if (n->repetition == FLOE_PARQUET_REPEATED) {
			const floe_parquet_node *p = n->parent;
			if (!p || p == s->root || (p->logical.kind != FLOE_PARQUET_LT_LIST &&
						   p->logical.kind != FLOE_PARQUET_LT_MAP))
				return floe_error_set(err, FLOE_EUNSUPPORTED,
						      "parquet writer: repeated field '%s' outside a "
						      "LIST or MAP",
						      floe_parquet_node_path(n, path, sizeof(path)));
		}
	}
	return FLOE_OK;
}

static int64_t unit_factor(int from_arrow, int to_parquet)
{
	/* arrow units: s, ms, us, ns (0..3); parquet: ms, us, ns (0..2) */
	static const int64_t scale[] = {1, 1000, 1000000, 1000000000};
	int to = to_parquet + 1;
	if (from_arrow > to)
		return 0; /* lossy */
	return scale[to] / scale[from_arrow];
}

static int mismatch(floe_error *err, const floe_parquet_node *n, const char *fmt)
{
	char path[512];
	return floe_error_set(err, FLOE_EINVAL,
			      "parquet writer: column '%s' (%s) cannot take arrow format '%s'",
			      floe_parquet_node_path(n, path, sizeof(path)),
			      n->physical >= 0 ? floe_parquet_type_name(n->physical) : "group", fmt);
}

static int bind_leaf(floe_parquet_writer *w, const floe_parquet_node *n,
		     const struct ArrowSchema *as, floe_error *err)
{
	floe_arrow_fmt f;
	leaf_bind *b = &w->bind[n->leaf_index];
	const floe_parquet_logical *lt = &n->logical;
	int rc = floe_arrow_fmt_parse(&f, as->format, err);
	if (rc)
		return rc;
	memset(b, 0, sizeof(*b));
	b->arrow_width = floe_arrow_fmt_byte_width(&f);
	if (f.type == FLOE_ARROW_NA) {
		if (n->repetition == FLOE_PARQUET_REQUIRED)
			return mismatch(err, n, as->format);
		b->conv = CV_NULL;
		return FLOE_OK;
	}
	if (f.type == FLOE_ARROW_DECIMAL128) {
		if (lt->kind != FLOE_PARQUET_LT_DECIMAL || f.scale != lt->scale ||
		    f.precision > lt->precision)
			return mismatch(err, n, as->format);
		switch (n->physical) {
		case FLOE_PARQUET_INT32: b->conv = CV_DEC_I32; return FLOE_OK;
		case FLOE_PARQUET_INT64: b->conv = CV_DEC_I64; return FLOE_OK;
		case FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY: b->conv = CV_DEC_FIXED; return FLOE_OK;
		case FLOE_PARQUET_BYTE_ARRAY: b->conv = CV_DEC_BYTES; return FLOE_OK;
		default: return mismatch(err, n, as->format);
		}
	}
	if (lt->kind == FLOE_PARQUET_LT_DECIMAL)
		return mismatch(err, n, as->format);
	switch (n->physical) {
	case FLOE_PARQUET_BOOLEAN:
		if (f.type != FLOE_ARROW_BOOL)
			return mismatch(err, n, as->format);
		b->conv = CV_BOOL;
		return FLOE_OK;
	case FLOE_PARQUET_INT32:
		switch (f.type) {
		case FLOE_ARROW_INT32:
		case FLOE_ARROW_UINT32:
			if (lt->kind != FLOE_PARQUET_LT_NONE && lt->kind != FLOE_PARQUET_LT_INTEGER)
				return mismatch(err, n, as->format);
			b->conv = CV_COPY;
			return FLOE_OK;
		case FLOE_ARROW_INT8: b->conv = CV_I8; return FLOE_OK;
		case FLOE_ARROW_UINT8: b->conv = CV_U8; return FLOE_OK;
		case FLOE_ARROW_INT16: b->conv = CV_I16; return FLOE_OK;
		case FLOE_ARROW_UINT16: b->conv = CV_U16; return FLOE_OK;
		case FLOE_ARROW_DATE32:
			if (lt->kind != FLOE_PARQUET_LT_DATE)
				return mismatch(err, n, as->format);
			b->conv = CV_COPY;
			return FLOE_OK;
		case FLOE_ARROW_TIME32:
			if (lt->kind != FLOE_PARQUET_LT_TIME || f.unit != FLOE_ARROW_MILLI)
				return mismatch(err, n, as->format);
			b->conv = CV_COPY;
			return FLOE_OK;
		default: return mismatch(err, n, as->format);
		}
	case FLOE_PARQUET_INT64:
		switch (f.type) {
		case FLOE_ARROW_INT64:
		case FLOE_ARROW_UINT64:
			if (lt->kind != FLOE_PARQUET_LT_NONE && lt->kind != FLOE_PARQUET_LT_INTEGER)
				return mismatch(err, n, as->format);
			b->conv = CV_COPY;
			return FLOE_OK;
		case FLOE_ARROW_TIME64:
		case FLOE_ARROW_TIMESTAMP:
			if ((f.type == FLOE_ARROW_TIME64 && lt->kind != FLOE_PARQUET_LT_TIME) ||
			    (f.type == FLOE_ARROW_TIMESTAMP && lt->kind != FLOE_PARQUET_LT_TIMESTAMP))
				return mismatch(err, n, as->format);
			/* a zone means UTC-adjusted; naive means local */
			if (f.type == FLOE_ARROW_TIMESTAMP && (f.tz[0] != '\0') != lt->utc)
				return floe_error_set(
					err, FLOE_EINVAL,
					"parquet writer: column '%s' is TIMESTAMP(isAdjustedToUTC=%s) "
					"but the arrow timestamp %s a zone",
					n->name, lt->utc ? "true" : "false", lt->utc ? "has no" : "has");
			b->factor = unit_factor((int)f.unit, lt->unit);
			if (b->factor == 0)
				return floe_error_set(err, FLOE_EINVAL,
						      "parquet writer: column '%s': arrow unit is finer "
						      "than the column's (would lose precision)",
						      n->name);
			b->conv = b->factor == 1 ? CV_COPY : CV_MUL;
			return FLOE_OK;
		default: return mismatch(err, n, as->format);
		}
	case FLOE_PARQUET_FLOAT:
		if (f.type != FLOE_ARROW_FLOAT)
			return mismatch(err, n, as->format);
		b->conv = CV_COPY;
		return FLOE_OK;
	case FLOE_PARQUET_DOUBLE:
		if (f.type != FLOE_ARROW_DOUBLE)
			return mismatch(err, n, as->format);
		b->conv = CV_COPY;
		return FLOE_OK;
	case FLOE_PARQUET_BYTE_ARRAY:
		if (f.type == FLOE_ARROW_STRING || f.type == FLOE_ARROW_BINARY)
			b->conv = CV_STR32;
		else if (f.type == FLOE_ARROW_LARGE_STRING || f.type == FLOE_ARROW_LARGE_BINARY)
			b->conv = CV_STR64;
		else
			return mismatch(err, n, as->format);
		return FLOE_OK;
	case FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY:
		if ((f.type == FLOE_ARROW_FIXED_BINARY && f.width == n->type_length) ||
		    (f.type == FLOE_ARROW_HALF_FLOAT && n->type_length == 2)) {
			b->conv = CV_COPY;
			b->arrow_width = n->type_length;
			return FLOE_OK;
		}
		return mismatch(err, n, as->format);
	default: return mismatch(err, n, as->format);
	}
}

static int bind_node(floe_parquet_writer *w, const floe_parquet_node *n,
		     const struct ArrowSchema *as, floe_error *err)
{
	int rc;
	if (!as || !as->format)
		return mismatch(err, n, "(missing)");
	switch (w->kind[n->index]) {
	case NK_LEAF: return bind_leaf(w, n, as, err);
	case NK_STRUCT:
		if (strcmp(as->format, "+s") != 0 || as->n_children != n->n_children)
			return mismatch(err, n, as->format);
		for (int i = 0; i < n->n_children; i++)
			if ((rc = bind_node(w, n->children[i], as->children[i], err)))
				return rc;
		return FLOE_OK;
	case NK_LIST:
		if ((strcmp(as->format, "+l") != 0 && strcmp(as->format, "+L") != 0) ||
		    as->n_children != 1)
			return mismatch(err, n, as->format);
		w->large[n->index] = as->format[1] == 'L';
		return bind_node(w, n->children[0]->children[0], as->children[0], err);
	case NK_MAP: {
		const floe_parquet_node *kv = n->children[0];
		const struct ArrowSchema *e;
		if (strcmp(as->format, "+m") != 0 || as->n_children != 1)
			return mismatch(err, n, as->format);
		e = as->children[0];
		if (!e || strcmp(e->format, "+s") != 0 || e->n_children != 2)
			return mismatch(err, n, as->format);
		if ((rc = bind_node(w, kv->children[0], e->children[0], err)) ||
		    (rc = bind_node(w, kv->children[1], e->children[1], err)))
			return rc;
		return FLOE_OK;
	}
	}
	return FLOE_OK;
}

/* ---- shredding ------------------------------------------------------------ */

static int shred_err(floe_parquet_writer *w, const floe_parquet_node *n, const char *what)
{
	char path[512];
	return floe_error_set(w->err, FLOE_EINVAL, "parquet writer: column '%s': %s",
			      floe_parquet_node_path(n, path, sizeof(path)), what);
}

static int put_levels(floe_parquet_writer *w, int def, int rep_first, int rep_rest, size_t n)
{
	const floe_parquet_node *leaf = w->schema->leaves[w->leaf];
	if (n == 0)
		return FLOE_OK;
	if (leaf->def_level > 0) {
		uint16_t *d = (uint16_t *)(void *)floe_parquet__extend(&w->def, n * 2);
		if (!d)
			return FLOE_ENOMEM;
		for (size_t i = 0; i < n; i++)
			d[i] = (uint16_t)def;
	}
	if (leaf->rep_level > 0) {
		uint16_t *r = (uint16_t *)(void *)floe_parquet__extend(&w->rep, n * 2);
		if (!r)
			return FLOE_ENOMEM;
		r[0] = (uint16_t)rep_first;
		for (size_t i = 1; i < n; i++)
			r[i] = (uint16_t)rep_rest;
	}
	w->n_levels += n;
	return FLOE_OK;
}

static void dec_to_be(const uint8_t *le16, uint8_t *out, int width)
{
	/* width <= 16: the low bytes, reversed; wider: sign-extended */
	for (int i = 0; i < width; i++) {
		int src = width - 1 - i;
		out[i] = src < 16 ? le16[src] : ((le16[15] & 0x80) ? 0xff : 0);
	}
}

/* Convert Arrow values [i, j) (logical, offset applied) of a leaf. */
static int convert(floe_parquet_writer *w, const floe_parquet_node *leaf, const struct ArrowArray *a,
		   int64_t i, int64_t j)
{
	const leaf_bind *b = &w->bind[leaf->leaf_index];
	const floe_parquet__wcol *c = &w->cols[leaf->leaf_index];
	size_t n = (size_t)(j - i), off = (size_t)(i + a->offset);
	const uint8_t *src = a->n_buffers > 1 ? a->buffers[1] : NULL;
	uint8_t *dst;

	if (n == 0)
		return FLOE_OK;
	if (b->conv == CV_STR32 || b->conv == CV_STR64 || b->conv == CV_DEC_BYTES) {
		floe_parquet_view *v = (floe_parquet_view *)(void *)floe_parquet__extend(&w->vals, n * sizeof(*v));
		if (!v)
			return FLOE_ENOMEM;
		if (b->conv == CV_STR32) {
			const int32_t *o = (const int32_t *)src;
			const uint8_t *data = a->buffers[2];
			for (size_t k = 0; k < n; k++) {
				v[k].p = data + o[off + k];
				v[k].n = (size_t)(o[off + k + 1] - o[off + k]);
			}
		} else if (b->conv == CV_STR64) {
			const int64_t *o = (const int64_t *)src;
			const uint8_t *data = a->buffers[2];
			for (size_t k = 0; k < n; k++) {
				v[k].p = data + o[off + k];
				v[k].n = (size_t)(o[off + k + 1] - o[off + k]);
			}
		} else {
			/* minimal two's complement: drop redundant sign bytes; the
			 * bytes live in w->bytes, reserved so they do not move */
			size_t at;
			if (floe_buf_reserve(&w->bytes, n * 16))
				return FLOE_ENOMEM;
			for (size_t k = 0; k < n; k++) {
				uint8_t be[16];
				int s = 0;
				dec_to_be(src + (off + k) * 16, be, 16);
				while (s < 15 && ((be[s] == 0 && !(be[s + 1] & 0x80)) ||
						  (be[s] == 0xff && (be[s + 1] & 0x80))))
					s++;
				at = w->bytes.len;
				memcpy(w->bytes.data + at, be + s, (size_t)(16 - s));
				w->bytes.len += (size_t)(16 - s);
				v[k].p = w->bytes.data + at;
				v[k].n = (size_t)(16 - s);
			}
		}
		w->n_vals += n;
		return FLOE_OK;
	}
	if (b->conv == CV_COPY && w->n_vals == 0 && !w->direct && w->vals.len == 0) {
		/* the first run: try to use the batch's buffer directly */
		w->direct = src + off * (size_t)c->width;
		w->n_vals = n;
		return FLOE_OK;
	}
	if (w->direct) {
		/* a second run: materialise the first */
		const void *d = w->direct;
		w->direct = NULL;
		if (floe_buf_append(&w->vals, d, w->n_vals * (size_t)c->width))
			return FLOE_ENOMEM;
	}
	dst = floe_parquet__extend(&w->vals, n * (size_t)c->width);
	if (!dst)
		return FLOE_ENOMEM;
	switch (b->conv) {
	case CV_COPY: memcpy(dst, src + off * (size_t)c->width, n * (size_t)c->width); break;
	case CV_BOOL:
		for (size_t k = 0; k < n; k++)
			dst[k] = (src[(off + k) >> 3] >> ((off + k) & 7)) & 1;
		break;
	case CV_I8:
		for (size_t k = 0; k < n; k++) {
			int32_t x = (int8_t)src[off + k];
			memcpy(dst + 4 * k, &x, 4);
		}
		break;
	case CV_U8:
		for (size_t k = 0; k < n; k++) {
			int32_t x = src[off + k];
			memcpy(dst + 4 * k, &x, 4);
		}
		break;
	case CV_I16:
	case CV_U16:
		for (size_t k = 0; k < n; k++) {
			uint16_t u;
			int32_t x;
			memcpy(&u, src + 2 * (off + k), 2);
			x = b->conv == CV_I16 ? (int16_t)u : (int32_t)u;
			memcpy(dst + 4 * k, &x, 4);
		}
		break;
	case CV_MUL:
		for (size_t k = 0; k < n; k++) {
			int64_t x;
			memcpy(&x, src + 8 * (off + k), 8);
			if (__builtin_mul_overflow(x, b->factor, &x))
				return shred_err(w, leaf, "timestamp out of range after unit conversion");
			memcpy(dst + 8 * k, &x, 8);
		}
		break;
	case CV_DEC_I32:
		for (size_t k = 0; k < n; k++)
			memcpy(dst + 4 * k, src + 16 * (off + k), 4);
		break;
	case CV_DEC_I64:
		for (size_t k = 0; k < n; k++)
			memcpy(dst + 8 * k, src + 16 * (off + k), 8);
		break;
	case CV_DEC_FIXED:
		for (size_t k = 0; k < n; k++)
			dec_to_be(src + 16 * (off + k), dst + (size_t)c->width * k, c->width);
		break;
	default: return FLOE_EINVAL;
	}
	w->n_vals += n;
	return FLOE_OK;
}

static int shred(floe_parquet_writer *w, const floe_parquet_node *n, const struct ArrowArray *a,
		 int64_t start, int64_t end, int def, int rep_first, int rep_rest);

static int shred_leaf(floe_parquet_writer *w, const floe_parquet_node *n,
		      const struct ArrowArray *a, int64_t start, int64_t end, int def,
		      int rep_first, int rep_rest)
{
	const uint8_t *valid = a->n_buffers > 0 ? a->buffers[0] : NULL;
	int rc;
	if (w->bind[n->leaf_index].conv == CV_NULL)
		return put_levels(w, def, rep_first, rep_rest, (size_t)(end - start));
	if (!valid || a->null_count == 0) {
		if ((rc = put_levels(w, n->def_level, rep_first, rep_rest, (size_t)(end - start))))
			return rc;
		return convert(w, n, a, start, end);
	}
	for (int64_t i = start; i < end;) {
		int64_t j = i, o = a->offset;
		bool v = (valid[(i + o) >> 3] >> ((i + o) & 7)) & 1;
		while (j < end && (bool)((valid[(j + o) >> 3] >> ((j + o) & 7)) & 1) == v)
			j++;
		int rf = i == start ? rep_first : rep_rest;
		if (v) {
			if ((rc = put_levels(w, n->def_level, rf, rep_rest, (size_t)(j - i))) ||
			    (rc = convert(w, n, a, i, j)))
				return rc;
		} else {
			if (n->repetition == FLOE_PARQUET_REQUIRED)
				return shred_err(w, n, "null in a required field");
			if ((rc = put_levels(w, def, rf, rep_rest, (size_t)(j - i))))
				return rc;
		}
		i = j;
	}
	return FLOE_OK;
}

/* The child of group n (struct or map key_value) on the path to the leaf. */
static int child_toward(const floe_parquet_node *n, int leaf)
{
	for (int i = 0; i < n->n_children; i++) {
		const floe_parquet_node *c = n->children[i];
		if (leaf >= c->first_leaf && leaf < c->first_leaf + c->n_leaves)
			return i;
	}
	return -1;
}

static int shred_struct(floe_parquet_writer *w, const floe_parquet_node *n,
			const struct ArrowArray *a, int64_t start, int64_t end, int def,
			int rep_first, int rep_rest, bool nullable)
{
	int ci = child_toward(n, w->leaf);
	const uint8_t *valid = a->n_buffers > 0 ? a->buffers[0] : NULL;
	int d = def + (n->repetition != FLOE_PARQUET_REQUIRED);
	int rc;
	if (ci < 0 || ci >= a->n_children)
		return shred_err(w, n, "struct child missing");
	if (!nullable || !valid || a->null_count == 0)
		return shred(w, n->children[ci], a->children[ci], start + a->offset, end + a->offset,
			     d, rep_first, rep_rest);
	for (int64_t i = start; i < end;) {
		int64_t j = i, o = a->offset;
		bool v = (valid[(i + o) >> 3] >> ((i + o) & 7)) & 1;
		while (j < end && (bool)((valid[(j + o) >> 3] >> ((j + o) & 7)) & 1) == v)
			j++;
		int rf = i == start ? rep_first : rep_rest;
		if (v)
			rc = shred(w, n->children[ci], a->children[ci], i + o, j + o, d, rf, rep_rest);
		else if (n->repetition == FLOE_PARQUET_REQUIRED)
			rc = shred_err(w, n, "null in a required field");
		else
			rc = put_levels(w, def, rf, rep_rest, (size_t)(j - i));
		if (rc)
			return rc;
		i = j;
	}
	return FLOE_OK;
}

static int shred_list(floe_parquet_writer *w, const floe_parquet_node *n,
		      const struct ArrowArray *a, int64_t start, int64_t end, int def,
		      int rep_first, int rep_rest)
{
	const floe_parquet_node *mid = n->children[0], *next;
	const struct ArrowArray *child = a->children[0], *next_arr;
	const uint8_t *valid = a->null_count != 0 ? a->buffers[0] : NULL;
	const int32_t *o32 = a->buffers[1];
	const int64_t *o64 = a->buffers[1];
	bool large = w->large[n->index];
	int d = def + (n->repetition != FLOE_PARQUET_REQUIRED);
	int rc;

	if (w->kind[n->index] == NK_MAP) {
		int ci = child_toward(mid, w->leaf);
		if (ci < 0 || child->n_children != 2)
			return shred_err(w, n, "map entries missing");
		next = mid->children[ci];
		/* entry slots map to the entries struct's children */
		next_arr = child->children[ci];
	} else {
		next = mid->children[0];
		next_arr = child;
	}
	for (int64_t i = start; i < end; i++) {
		int64_t o = a->offset + i, s, e;
		int rf = i == start ? rep_first : rep_rest;
		if (valid && !((valid[o >> 3] >> (o & 7)) & 1)) {
			if (n->repetition == FLOE_PARQUET_REQUIRED)
				return shred_err(w, n, "null in a required field");
			if ((rc = put_levels(w, def, rf, rf, 1)))
				return rc;
			continue;
		}
		s = large ? o64[o] : o32[o];
		e = large ? o64[o + 1] : o32[o + 1];
		if (e == s) {
			if ((rc = put_levels(w, d, rf, rf, 1)))
				return rc;
			continue;
		}
		if (w->kind[n->index] == NK_MAP) {
			s += child->offset;
			e += child->offset;
		}
		if ((rc = shred(w, next, next_arr, s, e, d + 1, rf, mid->rep_level)))
			return rc;
	}
	return FLOE_OK;
}

static int shred(floe_parquet_writer *w, const floe_parquet_node *n, const struct ArrowArray *a,
		 int64_t start, int64_t end, int def, int rep_first, int rep_rest)
{
	switch (w->kind[n->index]) {
	case NK_LEAF: return shred_leaf(w, n, a, start, end, def, rep_first, rep_rest);
	case NK_STRUCT: return shred_struct(w, n, a, start, end, def, rep_first, rep_rest, true);
	default: return shred_list(w, n, a, start, end, def, rep_first, rep_rest);
	}
}

/* ---- lifecycle ------------------------------------------------------------ */

static void budget_attach(floe_parquet_writer *w)
{
	floe_parquet_budget *b = w->budget;
	pthread_mutex_lock(&b->mu);
	w->b_next = b->head;
	b->head = w;
	pthread_mutex_unlock(&b->mu);
}

static void budget_detach(floe_parquet_writer *w)
{
	floe_parquet_budget *b = w->budget;
	pthread_mutex_lock(&b->mu);
	for (floe_parquet_writer **p = &b->head; *p; p = &(*p)->b_next) {
		if (*p == w) {
			*p = w->b_next;
			break;
		}
	}
	b->used -= w->reported;
	w->reported = 0;
	pthread_mutex_unlock(&b->mu);
}

int floe_parquet_writer_new(floe_parquet_writer **out, floe_output *output,
			    const floe_parquet_schema *schema, const floe_parquet_writer_opts *opts,
			    floe_error *err)
{
	static const floe_parquet_writer_opts dflt = FLOE_PARQUET_WRITER_OPTS_INIT;
	floe_parquet_writer *w;
	int rc;
	floe_codec codec;

	if (!opts)
		opts = &dflt;
	if (!schema || !schema->finished || !output)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: needs a finished schema and an output");
	if (schema->n_leaves == 0)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: the schema has no columns");
	if (opts->page_version != 1 && opts->page_version != 2)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: page version must be 1 or 2");
	if (!floe_parquet__codec_of(opts->codec, &codec) || codec == FLOE_CODEC_LZ4_HADOOP)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: codec %s cannot be written",
				      floe_parquet_codec_name(opts->codec));
	if (opts->row_group_bytes < 0 || opts->page_bytes < 0 || opts->page_rows < 0 ||
	    opts->dict_bytes < 0 || opts->row_group_rows < 0)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: negative size option");
	w = floe_calloc(1, sizeof(*w));
	if (!w)
		return floe_error_oomf(err, "parquet writer: out of memory");
	w->out = output;
	w->schema = schema;
	w->opts = *opts;
	w->start_pos = output->pos;
	floe_arena_init(&w->meta, 16384);
	floe_strmap_init(&w->kv);
	floe_buf_init(&w->def, 0);
	floe_buf_init(&w->rep, 0);
	floe_buf_init(&w->vals, 0);
	floe_buf_init(&w->bytes, 0);
	w->kind = floe_calloc((size_t)schema->n_nodes, 1);
	w->large = floe_calloc((size_t)schema->n_nodes, 1);
	w->bind = floe_calloc((size_t)schema->n_leaves, sizeof(*w->bind));
	w->cols = floe_calloc((size_t)schema->n_leaves, sizeof(*w->cols));
	if (!w->kind || !w->large || !w->bind || !w->cols) {
		rc = floe_error_oomf(err, "parquet writer: out of memory");
		goto fail;
	}
	if ((rc = classify(w, err)))
		goto fail;
	for (int i = 0; i < schema->n_leaves; i++) {
		if ((rc = floe_parquet__wcol_init(&w->cols[i], schema->leaves[i], &w->opts, err)))
			goto fail;
		w->n_cols = i + 1;
	}
	if ((rc = floe_output_write(output, "PAR1", 4, err)))
		goto fail;
	if (opts->budget) {
		w->budget = opts->budget;
		budget_attach(w);
	}
	*out = w;
	return FLOE_OK;
fail:
	floe_parquet_writer_free(w);
	return rc;
}

void floe_parquet_writer_free(floe_parquet_writer *w)
{
	if (!w)
		return;
	if (w->budget)
		budget_detach(w);
	for (int i = 0; i < w->n_cols; i++)
		floe_parquet__wcol_reset(&w->cols[i]);
	floe_free(w->cols);
	floe_free(w->kind);
	floe_free(w->large);
	floe_free(w->bind);
	floe_free(w->rgs);
	floe_arena_reset(&w->meta);
	floe_strmap_reset(&w->kv);
	floe_buf_reset(&w->def);
	floe_buf_reset(&w->rep);
	floe_buf_reset(&w->vals);
	floe_buf_reset(&w->bytes);
	floe_free(w->result.columns);
	floe_free(w);
}

int floe_parquet_writer_set_kv(floe_parquet_writer *w, const char *key, const char *value,
			       floe_error *err)
{
	if (w->closed)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: already closed");
	if (floe_strmap_set(&w->kv, key, value ? value : ""))
		return floe_error_oomf(err, "parquet writer: out of memory");
	return FLOE_OK;
}

size_t floe_parquet_writer_buffered(const floe_parquet_writer *w)
{
	size_t total = 0;
	for (int i = 0; i < w->n_cols; i++)
		total += floe_parquet__wcol_memory(&w->cols[i]);
	return total;
}

static size_t rg_estimate(const floe_parquet_writer *w)
{
	size_t total = 0;
	for (int i = 0; i < w->n_cols; i++)
		total += floe_parquet__wcol_estimate(&w->cols[i]);
	return total;
}

void floe_parquet_writer_size_parts(const floe_parquet_writer *w, int64_t *exact, int64_t *open)
{
	int64_t e = (int64_t)(w->out->pos - w->start_pos), o = 0;
	for (int i = 0; i < w->n_cols; i++) {
		e += (int64_t)w->cols[i].chunk_bytes;
		o += (int64_t)floe_parquet__wcol_open_estimate(&w->cols[i]);
	}
	*exact = e;
	*open = o;
}

int64_t floe_parquet_writer_estimated_size(const floe_parquet_writer *w)
{
	return (int64_t)(w->out->pos - w->start_pos) + (int64_t)rg_estimate(w);
}

/* Tell the budget what this writer holds now. */
static void budget_report(floe_parquet_writer *w)
{
	floe_parquet_budget *b = w->budget;
	size_t mine = floe_parquet_writer_buffered(w);
	pthread_mutex_lock(&b->mu);
	b->used = b->used - w->reported + mine;
	w->reported = mine;
	pthread_mutex_unlock(&b->mu);
}

int floe_parquet_writer_flush_row_group(floe_parquet_writer *w, floe_error *err)
{
	floe_parquet_row_group *rg;
	int rc;
	if (w->failed)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: failed earlier");
	if (w->rg_rows == 0)
		return FLOE_OK;
	if (floe_array_grow((void **)&w->rgs, &w->cap_rgs, sizeof(*w->rgs), w->n_rgs + 1))
		return floe_error_oomf(err, "parquet writer: out of memory");
	rg = &w->rgs[w->n_rgs];
	memset(rg, 0, sizeof(*rg));
	rg->columns = floe_arena_calloc(&w->meta, (size_t)w->n_cols, sizeof(*rg->columns));
	if (!rg->columns)
		return floe_error_oomf(err, "parquet writer: out of memory");
	rg->n_columns = (size_t)w->n_cols;
	for (int i = 0; i < w->n_cols; i++) {
		if ((rc = floe_parquet__wcol_flush(&w->cols[i], w->out, &w->meta, &rg->columns[i], err))) {
			w->failed = true;
			return rc;
		}
		rg->total_byte_size += rg->columns[i].meta_data.total_uncompressed_size;
		rg->total_compressed_size += rg->columns[i].meta_data.total_compressed_size;
	}
	rg->num_rows = w->rg_rows;
	rg->has_file_offset = rg->has_total_compressed_size = rg->has_ordinal = true;
	rg->file_offset = rg->columns[0].file_offset;
	rg->ordinal = (int16_t)(w->n_rgs < 32767 ? w->n_rgs : 32767);
	rg->has_ordinal = w->n_rgs < 32767;
	w->n_rgs++;
	w->rg_rows = 0;
	/* under a shared budget, give the memory back rather than keep it for
	 * the next row group, and say so at once: an owner that flushes this
	 * writer from a budget callback must not see it named again */
	if (w->budget) {
		for (int i = 0; i < w->n_cols; i++)
			floe_parquet__wcol_trim(&w->cols[i]);
		budget_report(w);
	}
	return FLOE_OK;
}

/* After a slice: tell the budget, flush when over. */
static int budget_check(floe_parquet_writer *w, floe_error *err)
{
	floe_parquet_budget *b = w->budget;
	floe_parquet_writer *largest = NULL;
	size_t mine = floe_parquet_writer_buffered(w), best = 0;
	bool over;
	pthread_mutex_lock(&b->mu);
	b->used = b->used - w->reported + mine;
	w->reported = mine;
	over = b->used > b->limit;
	if (over) {
		for (floe_parquet_writer *x = b->head; x; x = x->b_next)
			if (!largest || x->reported > best)
				largest = x, best = x->reported;
	}
	pthread_mutex_unlock(&b->mu);
	if (!over || !largest)
		return FLOE_OK;
	if (b->fn) {
		b->fn(b, largest, b->payload);
		return FLOE_OK;
	}
	/* the flush reports the memory it gave back */
	if (largest == w)
		return floe_parquet_writer_flush_row_group(w, err);
	return FLOE_OK;
}

static int write_slice(floe_parquet_writer *w, const struct ArrowArray *batch, int64_t r0,
		       int64_t r1, floe_error *err)
{
	const floe_parquet_node *root = w->schema->root;
	int rc;
	for (int l = 0; l < w->n_cols; l++) {
		const floe_parquet_node *leaf = w->schema->leaves[l];
		int top = child_toward(root, l);
		floe_buf_clear(&w->def);
		floe_buf_clear(&w->rep);
		floe_buf_clear(&w->vals);
		floe_buf_clear(&w->bytes);
		w->direct = NULL;
		w->n_levels = w->n_vals = 0;
		w->leaf = l;
		rc = shred(w, root->children[top], batch->children[top], r0 + batch->offset,
			   r1 + batch->offset, 0, 0, 0);
		if (rc)
			return rc == FLOE_ENOMEM ? floe_error_set(err, rc, "parquet writer: out of memory")
						 : rc;
		rc = floe_parquet__wcol_write(&w->cols[l], (const uint16_t *)w->def.data,
					      (const uint16_t *)w->rep.data, w->n_levels,
					      w->direct ? w->direct : (const void *)w->vals.data,
					      w->n_vals, err);
		if (rc)
			return rc;
		(void)leaf;
	}
	return FLOE_OK;
}

int floe_parquet_writer_write(floe_parquet_writer *w, const struct ArrowArray *batch,
			      const struct ArrowSchema *bs, floe_error *err)
{
	const floe_parquet_node *root = w->schema->root;
	int rc;
	if (w->closed || w->failed)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: %s",
				      w->closed ? "already closed" : "failed earlier");
	if ((rc = floe_arrow_check(bs, batch, err)))
		return floe_error_prefix(err, rc, "parquet writer: ");
	if (strcmp(bs->format, "+s") != 0 || bs->n_children != root->n_children)
		return floe_error_set(err, FLOE_EINVAL,
				      "parquet writer: a batch must be a struct of the %d top-level "
				      "fields (got '%s' with %lld children)",
				      root->n_children, bs->format, (long long)bs->n_children);
	if (batch->null_count != 0 && batch->buffers[0] &&
	    floe_bit_count(batch->buffers[0], (size_t)batch->offset, (size_t)batch->length) !=
		    (size_t)batch->length)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: a batch row is null");
	for (int i = 0; i < root->n_children; i++)
		if ((rc = bind_node(w, root->children[i], bs->children[i], err)))
			return rc;
	w->err = err;
	for (int64_t r = 0; r < batch->length;) {
		int64_t n = batch->length - r;
		if (n > ROW_SLICE)
			n = ROW_SLICE;
		if (w->opts.row_group_rows > 0 && n > w->opts.row_group_rows - w->rg_rows)
			n = w->opts.row_group_rows - w->rg_rows;
		if ((rc = write_slice(w, batch, r, r + n, err))) {
			w->failed = true;
			return rc;
		}
		r += n;
		w->rg_rows += n;
		w->total_rows += n;
		if ((w->opts.row_group_rows > 0 && w->rg_rows >= w->opts.row_group_rows) ||
		    (w->opts.row_group_bytes > 0 && rg_estimate(w) >= (size_t)w->opts.row_group_bytes)) {
			if ((rc = floe_parquet_writer_flush_row_group(w, err)))
				return rc;
		}
		if (w->budget && (rc = budget_check(w, err)))
			return rc;
	}
	return FLOE_OK;
}

/* ---- close, footer, results ---------------------------------------------- */

static int make_result(floe_parquet_writer *w, floe_error *err)
{
	floe_parquet_file_result *r = &w->result;
	size_t cap;
	r->columns = floe_calloc((size_t)w->n_cols, sizeof(*r->columns));
	r->split_offsets = floe_arena_calloc(&w->meta, w->n_rgs ? w->n_rgs : 1, sizeof(int64_t));
	if (!r->columns || !r->split_offsets)
		return floe_error_oomf(err, "parquet writer: out of memory");
	for (size_t i = 0; i < w->n_rgs; i++)
		r->split_offsets[i] = w->rgs[i].file_offset;
	r->n_row_groups = w->n_rgs;
	r->record_count = w->total_rows;
	r->n_columns = (size_t)w->n_cols;
	for (int i = 0; i < w->n_cols; i++) {
		const floe_parquet__wcol *c = &w->cols[i];
		floe_parquet_column_result *cr = &r->columns[i];
		bool utf8 = c->leaf->logical.kind == FLOE_PARQUET_LT_STRING;
		/* only unsigned byte strings are truncated */
		cap = w->opts.bounds_max_bytes && c->file_stats.order == FLOE_PQ_ORD_BYTES
			      ? w->opts.bounds_max_bytes
			      : SIZE_MAX;
		cr->leaf = c->leaf;
		cr->value_count = c->total_values;
		cr->null_count = c->total_nulls;
		cr->nan_count = c->total_nan;
		cr->compressed_size = c->total_compressed;
		cr->uncompressed_size = c->total_uncompressed;
		if (!c->file_stats.has)
			continue;
		const floe_buf *mn = &c->file_stats.min, *mx = &c->file_stats.max;
		size_t l = floe_parquet__trunc_min(mn->data, mn->len, cap, utf8);
		uint8_t *p = floe_arena_memdup(&w->meta, mn->data, l ? l : 1);
		if (!p)
			return floe_error_oomf(err, "parquet writer: out of memory");
		cr->has_min = true;
		cr->min = (floe_parquet_bytes){p, l};
		cr->min_exact = l == mn->len;
		if (mx->len <= cap) {
			p = floe_arena_memdup(&w->meta, mx->data, mx->len ? mx->len : 1);
			if (!p)
				return floe_error_oomf(err, "parquet writer: out of memory");
			cr->has_max = cr->max_exact = true;
			cr->max = (floe_parquet_bytes){p, mx->len};
		} else {
			p = floe_arena_alloc(&w->meta, cap);
			if (!p)
				return floe_error_oomf(err, "parquet writer: out of memory");
			l = floe_parquet__trunc_max(mx->data, mx->len, cap, utf8, p);
			cr->has_max = l > 0;
			cr->max = (floe_parquet_bytes){p, l};
		}
	}
	return FLOE_OK;
}

int floe_parquet_writer_close(floe_parquet_writer *w, const floe_parquet_file_result **result,
			      floe_error *err)
{
	floe_parquet_file_meta m;
	floe_buf footer;
	uint8_t tail[8];
	int rc;
	if (w->closed || w->failed)
		return floe_error_set(err, FLOE_EINVAL, "parquet writer: %s",
				      w->closed ? "already closed" : "failed earlier");
	if ((rc = floe_parquet_writer_flush_row_group(w, err)))
		return rc;
	memset(&m, 0, sizeof(m));
	m.version = w->opts.page_version == 2 ? 2 : 1;
	if ((rc = floe_parquet_schema_to_elems(w->schema, &w->meta, &m.schema, &m.n_schema)))
		return floe_error_set(err, rc, "parquet writer: out of memory");
	m.num_rows = w->total_rows;
	m.row_groups = w->rgs;
	m.n_row_groups = w->n_rgs;
	if (w->kv.len) {
		m.kv = floe_arena_calloc(&w->meta, w->kv.len, sizeof(*m.kv));
		if (!m.kv)
			return floe_error_oomf(err, "parquet writer: out of memory");
		for (size_t i = 0; i < w->kv.len; i++) {
			m.kv[i].key = w->kv.items[i].key;
			m.kv[i].value = w->kv.items[i].value;
			m.kv[i].value_len = strlen(w->kv.items[i].value);
		}
		m.n_kv = w->kv.len;
	}
	m.created_by = w->opts.created_by ? w->opts.created_by : "floe version " FLOE_VERSION;
	m.column_orders = floe_arena_calloc(&w->meta, (size_t)w->n_cols, sizeof(int));
	if (!m.column_orders)
		return floe_error_oomf(err, "parquet writer: out of memory");
	for (int i = 0; i < w->n_cols; i++)
		m.column_orders[i] = FLOE_PARQUET_ORDER_TYPE_DEFINED;
	m.n_column_orders = (size_t)w->n_cols;
	floe_buf_init(&footer, 0);
	rc = floe_parquet_meta_write(&footer, &m, err);
	if (!rc && footer.len > UINT32_MAX)
		rc = floe_error_set(err, FLOE_EINVAL, "parquet writer: footer too large");
	if (!rc)
		rc = floe_output_write(w->out, footer.data, footer.len, err);
	floe_store_u32le(tail, (uint32_t)footer.len);
	memcpy(tail + 4, "PAR1", 4);
	if (!rc)
		rc = floe_output_write(w->out, tail, 8, err);
	floe_buf_reset(&footer);
	if (rc) {
		w->failed = true;
		return rc;
	}
	if ((rc = make_result(w, err)))
		return rc;
	w->result.file_size = (int64_t)(w->out->pos - w->start_pos);
	w->closed = true;
	if (result)
		*result = &w->result;
	return FLOE_OK;
}

/* ---- budget ----------------------------------------------------------------- */

int floe_parquet_budget_new(floe_parquet_budget **out, uint64_t limit,
			    floe_parquet_budget_fn over_fn, void *payload)
{
	floe_parquet_budget *b = floe_calloc(1, sizeof(*b));
	if (!b)
		return FLOE_ENOMEM;
	if (pthread_mutex_init(&b->mu, NULL) != 0) {
		floe_free(b);
		return FLOE_ENOMEM;
	}
	b->limit = limit;
	b->fn = over_fn;
	b->payload = payload;
	*out = b;
	return FLOE_OK;
}

void floe_parquet_budget_free(floe_parquet_budget *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->mu);
	floe_free(b);
}

uint64_t floe_parquet_budget_limit(const floe_parquet_budget *b)
{
	return b->limit;
}

uint64_t floe_parquet_budget_used(floe_parquet_budget *b)
{
	uint64_t u;
	pthread_mutex_lock(&b->mu);
	u = b->used;
	pthread_mutex_unlock(&b->mu);
	return u;
}

floe_parquet_writer *floe_parquet_budget_largest(floe_parquet_budget *b)
{
	floe_parquet_writer *best = NULL;
	pthread_mutex_lock(&b->mu);
	for (floe_parquet_writer *x = b->head; x; x = x->b_next)
		if (!best || x->reported > best->reported)
			best = x;
	pthread_mutex_unlock(&b->mu);
	return best;
}
