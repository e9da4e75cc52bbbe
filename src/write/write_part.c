/*
 * write_part.c — Arrow columns read as Iceberg values, and the vectorised
 * partitioner: the partition tuple of every row of a batch, rows grouped by
 * tuple.
 *
 * DESIGN: a batch is processed in chunks of CHUNK rows. For each partition
 * field, the source column (found once by its path of struct positions) is
 * transformed for the whole chunk into a column of floe_values, with tight
 * loops for the common int/long/date/timestamp transforms and
 * floe_transform_apply for the rest (the tests check every row of every
 * transform against floe_transform_apply). Rows then get a group: a row
 * equal to the previous one (sorted or clustered input, the common case)
 * takes its group without hashing; otherwise the tuple's hash is looked up
 * in an open-addressing table of the batch's groups. Finally a counting sort
 * lays out each group's row indices in row order. All scratch is kept and
 * reused across batches: no allocation per row.
 */
#include <string.h>

#include "util/alloc.h"
#include "util/hash.h"
#include "util/timeutil.h"
#include "write/write_int.h"

#define CHUNK 4096
#define MAX_PATH 32

/* ---- Arrow columns as Iceberg values ------------------------------------------------ */

static bool is_int_arrow(floe_arrow_type t)
{
	return t == FLOE_ARROW_INT8 || t == FLOE_ARROW_UINT8 || t == FLOE_ARROW_INT16 ||
	       t == FLOE_ARROW_UINT16 || t == FLOE_ARROW_INT32 || t == FLOE_ARROW_UINT32 ||
	       t == FLOE_ARROW_INT64;
}

static const int64_t per_second[] = {1, 1000, 1000000, 1000000000};

int floe_write__source_bind(floe_write__source *src, const floe_type *t, const char *name,
			    floe_error *err)
{
	const floe_arrow_fmt *f = &src->view.fmt;
	floe_arrow_type a = f->type;
	src->type = t;
	src->factor = 1;
	src->conv = 0;
	switch (t->id) {
	case FLOE_T_BOOLEAN:
		if (a == FLOE_ARROW_BOOL)
			src->conv = FLOE_WCONV_BOOL;
		break;
	case FLOE_T_INT:
		if (is_int_arrow(a) && a != FLOE_ARROW_UINT32 && a != FLOE_ARROW_INT64)
			src->conv = FLOE_WCONV_I32;
		break;
	case FLOE_T_LONG:
		if (is_int_arrow(a))
			src->conv = FLOE_WCONV_I64;
		break;
	case FLOE_T_FLOAT:
		if (a == FLOE_ARROW_FLOAT)
			src->conv = FLOE_WCONV_F32;
		break;
	case FLOE_T_DOUBLE:
		if (a == FLOE_ARROW_DOUBLE || a == FLOE_ARROW_FLOAT)
			src->conv = FLOE_WCONV_F64;
		break;
	case FLOE_T_DECIMAL:
		if (a == FLOE_ARROW_DECIMAL128 && f->scale == t->scale && f->precision <= 38)
			src->conv = FLOE_WCONV_DEC128;
		break;
	case FLOE_T_DATE:
		if (a == FLOE_ARROW_DATE32)
			src->conv = FLOE_WCONV_I32;
		else if (a == FLOE_ARROW_DATE64)
			src->conv = FLOE_WCONV_DATE64;
		break;
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: {
		bool ts = t->id != FLOE_T_TIME;
		int to = t->id == FLOE_T_TIMESTAMP_NS || t->id == FLOE_T_TIMESTAMPTZ_NS
				 ? FLOE_ARROW_NANO
				 : FLOE_ARROW_MICRO;
		if ((ts && a != FLOE_ARROW_TIMESTAMP) ||
		    (!ts && a != FLOE_ARROW_TIME32 && a != FLOE_ARROW_TIME64))
			break;
		if ((int)f->unit > to)
			return floe_error_set(err, FLOE_EINVAL,
					      "column '%s': Arrow '%s' has a finer unit than the "
					      "column (would lose precision)",
					      name, floe_arrow_type_name(a));
		src->factor = per_second[to] / per_second[f->unit];
		src->conv = src->factor == 1 ? FLOE_WCONV_I64 : FLOE_WCONV_I64_MUL;
		break;
	}
	case FLOE_T_STRING:
		if (a == FLOE_ARROW_STRING || a == FLOE_ARROW_LARGE_STRING)
			src->conv = FLOE_WCONV_BYTES;
		break;
	case FLOE_T_BINARY:
		if (a == FLOE_ARROW_BINARY || a == FLOE_ARROW_LARGE_BINARY ||
		    a == FLOE_ARROW_STRING || a == FLOE_ARROW_LARGE_STRING)
			src->conv = FLOE_WCONV_BYTES;
		break;
	case FLOE_T_UUID:
		if (a == FLOE_ARROW_FIXED_BINARY && f->width == 16)
			src->conv = FLOE_WCONV_BYTES;
		break;
	case FLOE_T_FIXED:
		if (a == FLOE_ARROW_FIXED_BINARY && f->width == t->length)
			src->conv = FLOE_WCONV_BYTES;
		break;
	default: break;
	}
	if (!src->conv) {
		floe_buf tb;
		floe_buf_init(&tb, 128);
		if (floe_type_format(&tb, t))
			floe_buf_clear(&tb);
		int rc = floe_error_set(err, FLOE_EINVAL,
					"column '%s' (%s): the batch has Arrow type %s", name,
					floe_buf_cstr(&tb), floe_arrow_type_name(a));
		floe_buf_reset(&tb);
		return rc;
	}
	return FLOE_OK;
}

/* ---- the partitioner ------------------------------------------------------------- */

typedef struct pfield {
	const floe_partition_field *pf;
	const floe_type *src_type;
	const floe_type *res_type;
	const char *src_name;
	int path[MAX_PATH]; /* child position at each struct level, batch root first */
	int depth;
	floe_write__source src; /* bound per batch */
} pfield;

struct floe_write__partitioner {
	const floe_schema *schema;
	const floe_partition_spec *spec;
	pfield *fields;
	size_t n_fields;
	/* chunk scratch: n_fields columns of CHUNK values */
	floe_value *vals;
	/* groups of the current batch */
	floe_value *gvals; /* n_fields per group */
	size_t n_groups, cap_groups;
	int64_t *gcount;
	/* hash table: group id + 1, 0 = empty */
	uint32_t *slots;
	uint64_t *slot_hash;
	size_t cap_slots;
	/* per row */
	uint32_t *row_group;
	int64_t *rows;
	size_t cap_rows;
	int64_t *start;
	size_t cap_start;
};

void floe_write__partitioner_free(floe_write__partitioner *p)
{
	if (!p)
		return;
	floe_free(p->fields);
	floe_free(p->vals);
	floe_free(p->gvals);
	floe_free(p->gcount);
	floe_free(p->slots);
	floe_free(p->slot_hash);
	floe_free(p->row_group);
	floe_free(p->rows);
	floe_free(p->start);
	floe_free(p);
}

int floe_write__partitioner_new(floe_write__partitioner **out, const floe_schema *schema,
				const floe_partition_spec *spec, floe_error *err)
{
	floe_write__partitioner *p = floe_calloc(1, sizeof(*p));
	int rc;
	*out = NULL;
	if (!p)
		return floe_error_oom(err);
	p->schema = schema;
	p->spec = spec;
	p->n_fields = spec->n_fields;
	p->fields = floe_calloc(spec->n_fields + 1, sizeof(*p->fields));
	p->vals = floe_calloc((spec->n_fields + 1) * CHUNK, sizeof(floe_value));
	if (!p->fields || !p->vals) {
		rc = floe_error_oom(err);
		goto fail;
	}
	for (size_t i = 0; i < spec->n_fields; i++) {
		const floe_partition_field *pf = &spec->fields[i];
		pfield *f = &p->fields[i];
		const floe_schema_entry *e = floe_schema_find(schema, pf->source_id);
		f->pf = pf;
		if (pf->n_source_ids > 1) {
			rc = floe_error_set(err, FLOE_EUNSUPPORTED,
					    "partition field '%s': multi-argument transforms are not "
					    "supported",
					    pf->name);
			goto fail;
		}
		if (!e) {
			rc = floe_error_set(err, FLOE_EINVAL,
					    "partition field '%s': source %d is not in the schema",
					    pf->name, pf->source_id);
			goto fail;
		}
		if (e->in_repeated || !floe_transform_can_apply(&pf->transform, e->type)) {
			floe_buf tb;
			floe_buf_init(&tb, 64);
			if (floe_transform_format(&tb, &pf->transform))
				floe_buf_clear(&tb);
			rc = floe_error_set(err, FLOE_EUNSUPPORTED,
					    "partition field '%s': cannot apply %s to '%s'", pf->name,
					    floe_buf_cstr(&tb), e->full_name);
			floe_buf_reset(&tb);
			goto fail;
		}
		f->src_type = e->type;
		f->res_type = floe_transform_result_type(&pf->transform, e->type);
		f->src_name = e->full_name;
		/* the path of struct positions from the batch root to the source */
		const floe_schema_entry *chain[MAX_PATH];
		int depth = 0;
		for (const floe_schema_entry *x = e; x; x = x->parent_id ? floe_schema_find(schema, x->parent_id) : NULL) {
			if (depth == MAX_PATH) {
				rc = floe_error_set(err, FLOE_EUNSUPPORTED,
						    "partition source '%s' is nested too deeply",
						    e->full_name);
				goto fail;
			}
			chain[depth++] = x;
		}
		const floe_type *st = schema->root;
		for (int k = depth - 1; k >= 0; k--) {
			int pos = -1;
			for (size_t j = 0; st && st->id == FLOE_T_STRUCT && j < st->n_fields; j++)
				if (st->fields[j].id == chain[k]->id)
					pos = (int)j;
			if (pos < 0) {
				rc = floe_error_set(err, FLOE_EINVAL,
						    "partition source '%s' is not reachable through "
						    "structs",
						    e->full_name);
				goto fail;
			}
			f->path[f->depth++] = pos;
			st = st->fields[pos].type;
		}
	}
	*out = p;
	return FLOE_OK;
fail:
	floe_write__partitioner_free(p);
	return rc;
}

/* Bind every field's source column in this batch. */
static int bind_sources(floe_write__partitioner *p, const struct ArrowArray *batch,
			const struct ArrowSchema *bs, floe_error *err)
{
	floe_arrow_view root;
	int rc;
	if ((rc = floe_arrow_view_init(&root, bs, batch, err)))
		return rc;
	root.validity = NULL; /* batch rows are never null */
	for (size_t i = 0; i < p->n_fields; i++) {
		pfield *f = &p->fields[i];
		const struct ArrowSchema *s = bs;
		const struct ArrowArray *a = batch;
		floe_arrow_view cur = root, next;
		for (int k = 0; k < f->depth; k++) {
			int pos = f->path[k];
			if (cur.fmt.type != FLOE_ARROW_STRUCT || pos >= s->n_children ||
			    pos >= a->n_children)
				return floe_error_set(err, FLOE_EINVAL,
						      "partition source '%s': the batch does not have "
						      "that column",
						      f->src_name);
			s = s->children[pos];
			a = a->children[pos];
			if ((rc = floe_arrow_view_child(&next, &cur, s, a, err)))
				return floe_error_prefix(err, rc, "column '%s': ", f->src_name);
			cur = next;
		}
		f->src.view = cur;
		if ((rc = floe_write__source_bind(&f->src, f->src_type, f->src_name, err)))
			return rc;
	}
	return FLOE_OK;
}

/* Months since 1970-01 of a day number. */
static int32_t months_of_days(int64_t days)
{
	int64_t y;
	int m, d;
	floe_civil_from_days(days, &y, &m, &d);
	return (int32_t)((y - 1970) * 12 + (m - 1));
}

/* The transform of rows [r0, r0 + n) of one field into out[0..n). FLOE_EINVAL
 * (naming the row and the field) for a value whose partition value cannot be
 * written, as Java refuses it (a truncated decimal past its precision). */
static int compute_field(const pfield *f, int64_t r0, int64_t n, floe_value *out, floe_error *err)
{
	const floe_transform *tr = &f->pf->transform;
	const floe_write__source *src = &f->src;
	floe_type_id rt = f->res_type->id;
	bool nullable = floe_arrow_view_nullable(&src->view);

	if (tr->kind == FLOE_TR_VOID) {
		for (int64_t i = 0; i < n; i++)
			out[i] = floe_value_null(rt);
		return FLOE_OK;
	}
	/* fast paths: integer sources, integer results */
	bool int_src = src->conv == FLOE_WCONV_I32 || src->conv == FLOE_WCONV_I64 ||
		       src->conv == FLOE_WCONV_I64_MUL;
	if (int_src && tr->kind != FLOE_TR_TRUNCATE &&
	    (tr->kind != FLOE_TR_IDENTITY || src->conv != FLOE_WCONV_I64_MUL)) {
		floe_type_id st = f->src_type->id;
		bool ns = st == FLOE_T_TIMESTAMP_NS || st == FLOE_T_TIMESTAMPTZ_NS;
		for (int64_t i = 0; i < n; i++) {
			floe_value *o = &out[i];
			if (nullable && !floe_arrow_view_valid(&src->view, r0 + i)) {
				*o = floe_value_null(rt);
				continue;
			}
			int64_t x = floe_arrow_view_int(&src->view, r0 + i);
			o->type = rt;
			o->is_null = false;
			if (src->conv == FLOE_WCONV_I64_MUL)
				x = (int64_t)((uint64_t)x * (uint64_t)src->factor);
			switch (tr->kind) {
			case FLOE_TR_IDENTITY:
				if (st == FLOE_T_INT || st == FLOE_T_DATE)
					o->v.i32 = (int32_t)x;
				else
					o->v.i64 = x;
				break;
			case FLOE_TR_BUCKET: {
				uint8_t b[8];
				if (ns)
					x = floe_floordiv(x, 1000);
				for (int k = 0; k < 8; k++)
					b[k] = (uint8_t)((uint64_t)x >> (8 * k));
				o->v.i32 = (int32_t)((floe_murmur3_32(b, 8, 0) & 0x7fffffffu) %
						     (uint32_t)tr->param);
				break;
			}
			default: {
				/* temporal: x is days (date) or an instant in µs/ns */
				int64_t us = ns ? floe_floordiv(x, 1000) : x;
				int64_t days = st == FLOE_T_DATE ? x : floe_floordiv(us, FLOE_US_PER_DAY);
				if (tr->kind == FLOE_TR_DAY)
					o->v.i32 = (int32_t)days;
				else if (tr->kind == FLOE_TR_HOUR)
					o->v.i32 = (int32_t)floe_floordiv(us, FLOE_US_PER_HOUR);
				else if (tr->kind == FLOE_TR_MONTH)
					o->v.i32 = months_of_days(days);
				else
					o->v.i32 = (int32_t)floe_floordiv(months_of_days(days), 12);
				break;
			}
			}
		}
		return FLOE_OK;
	}
	for (int64_t i = 0; i < n; i++) {
		floe_value in;
		floe_write__source_value(&in, src, r0 + i);
		/* can_apply was checked when the partitioner was made */
		int rc = floe_transform_apply(&out[i], tr, f->src_type, &in, err);
		if (rc)
			return floe_error_prefix(err, rc, "row %lld, partition field '%s': ",
						 (long long)(r0 + i), f->pf->name);
	}
	return FLOE_OK;
}

static int grow_groups(floe_write__partitioner *p)
{
	size_t cap = p->cap_groups ? p->cap_groups * 2 : 64, nf = p->n_fields ? p->n_fields : 1;
	floe_value *gv = floe_realloc(p->gvals, cap * nf * sizeof(floe_value));
	if (!gv)
		return FLOE_ENOMEM;
	p->gvals = gv;
	int64_t *gc = floe_realloc(p->gcount, cap * sizeof(int64_t));
	if (!gc)
		return FLOE_ENOMEM;
	p->gcount = gc;
	p->cap_groups = cap;
	return FLOE_OK;
}

static int rehash(floe_write__partitioner *p, size_t cap)
{
	uint32_t *slots = floe_calloc(cap, sizeof(uint32_t));
	uint64_t *hashes = floe_calloc(cap, sizeof(uint64_t));
	if (!slots || !hashes) {
		floe_free(slots);
		floe_free(hashes);
		return FLOE_ENOMEM;
	}
	for (size_t i = 0; i < p->cap_slots; i++) {
		if (!p->slots[i])
			continue;
		size_t j = p->slot_hash[i] & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = p->slots[i];
		hashes[j] = p->slot_hash[i];
	}
	floe_free(p->slots);
	floe_free(p->slot_hash);
	p->slots = slots;
	p->slot_hash = hashes;
	p->cap_slots = cap;
	return FLOE_OK;
}

static bool tuple_equal(const floe_value *a, const floe_value *b, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (!floe_value_equal(&a[k], &b[k]))
			return false;
	return true;
}

/* The group of a tuple (a new one when unseen). */
static int group_of(floe_write__partitioner *p, const floe_value *tuple, uint32_t *gid)
{
	size_t nf = p->n_fields;
	uint64_t h = 0x12345;
	for (size_t k = 0; k < nf; k++)
		h = floe_hash_u64(h ^ floe_value_hash(&tuple[k]));
	if ((p->n_groups + 1) * 2 > p->cap_slots && rehash(p, p->cap_slots ? p->cap_slots * 2 : 64))
		return FLOE_ENOMEM;
	size_t j = h & (p->cap_slots - 1);
	while (p->slots[j]) {
		uint32_t g = p->slots[j] - 1;
		if (p->slot_hash[j] == h && tuple_equal(&p->gvals[g * nf], tuple, nf)) {
			*gid = g;
			return FLOE_OK;
		}
		j = (j + 1) & (p->cap_slots - 1);
	}
	if (p->n_groups == p->cap_groups && grow_groups(p))
		return FLOE_ENOMEM;
	uint32_t g = (uint32_t)p->n_groups++;
	memcpy(&p->gvals[g * nf], tuple, nf * sizeof(floe_value));
	p->gcount[g] = 0;
	p->slots[j] = g + 1;
	p->slot_hash[j] = h;
	*gid = g;
	return FLOE_OK;
}

int floe_write__partition(floe_write__partitioner *p, floe_write__groups *out,
			  const struct ArrowArray *batch, const struct ArrowSchema *bs,
			  floe_error *err)
{
	size_t nf = p->n_fields, n = (size_t)batch->length;
	floe_value tuple[64];
	int rc;
	memset(out, 0, sizeof(*out));
	if (nf > 64)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "more than 64 partition fields");
	if ((rc = bind_sources(p, batch, bs, err)))
		return rc;
	if (n > p->cap_rows) {
		uint32_t *rg = floe_realloc(p->row_group, n * sizeof(uint32_t));
		if (rg)
			p->row_group = rg;
		int64_t *rows = rg ? floe_realloc(p->rows, n * sizeof(int64_t)) : NULL;
		if (!rows)
			return floe_error_oom(err);
		p->rows = rows;
		p->cap_rows = n;
	}
	p->n_groups = 0;
	if (p->cap_slots)
		memset(p->slots, 0, p->cap_slots * sizeof(uint32_t));
	uint32_t prev = UINT32_MAX;
	for (size_t r0 = 0; r0 < n; r0 += CHUNK) {
		size_t m = n - r0 < CHUNK ? n - r0 : CHUNK;
		for (size_t k = 0; k < nf; k++)
			if ((rc = compute_field(&p->fields[k], (int64_t)r0, (int64_t)m,
						&p->vals[k * CHUNK], err)))
				return rc;
		for (size_t i = 0; i < m; i++) {
			for (size_t k = 0; k < nf; k++)
				tuple[k] = p->vals[k * CHUNK + i];
			/* a row like the previous one needs no hashing */
			if (prev != UINT32_MAX && tuple_equal(&p->gvals[prev * nf], tuple, nf)) {
				p->row_group[r0 + i] = prev;
				p->gcount[prev]++;
				continue;
			}
			uint32_t g;
			if (group_of(p, tuple, &g))
				return floe_error_oom(err);
			p->row_group[r0 + i] = g;
			p->gcount[g]++;
			prev = g;
		}
	}
	/* counting sort of row indices by group */
	if (p->n_groups + 1 > p->cap_start &&
	    floe_array_grow((void **)&p->start, &p->cap_start, sizeof(int64_t), p->n_groups + 1))
		return floe_error_oom(err);
	int64_t at = 0;
	for (size_t g = 0; g < p->n_groups; g++) {
		p->start[g] = at;
		at += p->gcount[g];
	}
	p->start[p->n_groups] = at;
	if (p->n_groups > 1) {
		for (size_t g = 0; g < p->n_groups; g++)
			p->gcount[g] = p->start[g];
		for (size_t i = 0; i < n; i++)
			p->rows[p->gcount[p->row_group[i]]++] = (int64_t)i;
	} else {
		for (size_t i = 0; i < n; i++)
			p->rows[i] = (int64_t)i;
	}
	out->n = p->n_groups;
	out->n_fields = nf;
	out->values = p->gvals;
	out->rows = p->rows;
	out->start = p->start;
	return FLOE_OK;
}
