/*
 * resolve.c — the schema-resolving decoder: a plan built once from a reader
 * and a writer schema, then run over each datum.
 *
 * spec: Avro 1.12 "Schema Resolution", with Iceberg's rule on top: record
 * fields are matched by their "field-id" attribute when the ids are there
 * (Iceberg renames columns freely; ids are the identity), by name otherwise.
 *
 * DESIGN: the plan is a DAG of small nodes (one per reader/writer node pair,
 * memoized so shared named types are planned once), allocated in the
 * decoder's arena. Decoding is a recursive switch over plan ops; a record
 * step either decodes into the reader slot it maps to or skips the writer
 * field, and reader fields the writer lacks are filled from pre-decoded
 * defaults. Promotions and union branch choices are fixed at plan time, so
 * the per-datum work is the wire format only.
 */
#include <string.h>

#include "avro/avro_int.h"
#include "avro/avro_datum.h"
#include "util/hmap.h"

typedef enum op {
	OP_NULL,
	OP_BOOL,
	OP_INT,
	OP_LONG,
	OP_FLOAT,
	OP_DOUBLE,
	OP_BYTES,
	OP_STRING,
	OP_FIXED,
	OP_ENUM,
	OP_INT_LONG,
	OP_INT_FLOAT,
	OP_INT_DOUBLE,
	OP_LONG_FLOAT,
	OP_LONG_DOUBLE,
	OP_FLOAT_DOUBLE,
	OP_BYTES_STRING,
	OP_STRING_BYTES,
	OP_RECORD,
	OP_ARRAY,
	OP_MAP,
	OP_WUNION, /* writer union: read the index, run that branch's plan */
	OP_RUNION, /* reader union, writer not: run the inner plan, tag the branch */
	OP_FAIL,   /* a writer union branch the reader cannot take */
} op;

typedef struct plan plan;

typedef struct rstep {
	int32_t rindex;                /* reader field index, -1 = skip */
	const plan *p;                 /* when rindex >= 0 */
	const floe_avro_schema *wtype; /* writer field type (skip) */
	const char *name;              /* writer field name (messages) */
} rstep;

typedef struct rfill {
	size_t rindex;
	floe_avro_value v;
} rfill;

struct plan {
	op op;
	int32_t rbranch; /* OP_RUNION */
	union {
		struct {
			rstep *steps;
			size_t n_steps;
			rfill *fills;
			size_t n_fills;
			size_t n_fields;
		} rec;
		struct {
			const plan *items;
			size_t item_min; /* writer-side minimal encoded item size (map: + key) */
		} arr;
		struct {
			const plan **br;
			size_t n;
		} wu;
		const plan *inner;
		struct {
			const int32_t *map;
			size_t n;
			const floe_avro_schema *w;
		} en;
		size_t fixed_size;
		const char *msg;
	} u;
};

struct floe_avro_decoder {
	floe_arena arena;
	const plan *root;
	const floe_avro_schema *reader, *writer;
	floe_avro_decoder_opts opts;
};

/* ---- plan building --------------------------------------------------------------- */

typedef struct builder {
	floe_avro_decoder *d;
	floe_hmap memo; /* (reader node, writer node) -> plan */
	floe_error *err;
	int depth;
} builder;

static int nomem(builder *b)
{
	return floe_error_oomf(b->err, "out of memory building an Avro decoder");
}

static const char *tname(const floe_avro_schema *s)
{
	return s->fullname ? s->fullname : floe_avro_type_name(s->type);
}

static bool named(const floe_avro_schema *s)
{
	return s->type == FLOE_AVRO_RECORD || s->type == FLOE_AVRO_ENUM || s->type == FLOE_AVRO_FIXED;
}

static bool promotable(floe_avro_type w, floe_avro_type r)
{
	switch (w) {
	case FLOE_AVRO_INT:
		return r == FLOE_AVRO_LONG || r == FLOE_AVRO_FLOAT || r == FLOE_AVRO_DOUBLE;
	case FLOE_AVRO_LONG: return r == FLOE_AVRO_FLOAT || r == FLOE_AVRO_DOUBLE;
	case FLOE_AVRO_FLOAT: return r == FLOE_AVRO_DOUBLE;
	case FLOE_AVRO_STRING: return r == FLOE_AVRO_BYTES;
	case FLOE_AVRO_BYTES: return r == FLOE_AVRO_STRING;
	default: return false;
	}
}

static bool name_matches(const floe_avro_schema *r, const floe_avro_schema *w)
{
	if (strcmp(r->name, w->name) == 0)
		return true;
	for (size_t i = 0; i < r->n_aliases; i++) {
		const char *al = r->aliases[i], *dot = strrchr(al, '.');
		if (strcmp(dot ? dot + 1 : al, w->name) == 0)
			return true;
	}
	return false;
}

/* The reader union branch that takes writer type w, or -1. */
static int pick_branch(const floe_avro_schema *ru, const floe_avro_schema *w)
{
	for (size_t i = 0; i < ru->n_branches; i++) {
		const floe_avro_schema *r = ru->branches[i];
		if (r->type == w->type && (!named(r) || name_matches(r, w)))
			return (int)i;
	}
	for (size_t i = 0; i < ru->n_branches; i++)
		if (ru->branches[i]->type == w->type)
			return (int)i;
	for (size_t i = 0; i < ru->n_branches; i++)
		if (promotable(w->type, ru->branches[i]->type))
			return (int)i;
	return -1;
}

static plan *new_plan(builder *b, op o)
{
	plan *p = floe_arena_calloc(&b->d->arena, 1, sizeof(*p));
	if (p)
		p->op = o;
	return p;
}

static int build(builder *b, const floe_avro_schema *r, const floe_avro_schema *w,
		 const plan **out);

static int build_record(builder *b, const floe_avro_schema *r, const floe_avro_schema *w,
			plan *p)
{
	floe_arena *a = &b->d->arena;
	int32_t *wmatch; /* writer field -> reader field */
	bool w_ids = false;
	size_t n_fills = 0;
	int rc;

	for (size_t j = 0; j < w->n_fields; j++)
		w_ids = w_ids || w->fields[j].field_id != FLOE_AVRO_ID_NONE;
	wmatch = floe_arena_alloc(a, (w->n_fields ? w->n_fields : 1) * sizeof(int32_t));
	p->u.rec.steps = floe_arena_calloc(a, w->n_fields ? w->n_fields : 1, sizeof(rstep));
	p->u.rec.fills = floe_arena_calloc(a, r->n_fields ? r->n_fields : 1, sizeof(rfill));
	if (!wmatch || !p->u.rec.steps || !p->u.rec.fills)
		return nomem(b);
	for (size_t j = 0; j < w->n_fields; j++)
		wmatch[j] = -1;
	p->u.rec.n_fields = r->n_fields;
	p->u.rec.n_steps = w->n_fields;

	for (size_t i = 0; i < r->n_fields; i++) {
		const floe_avro_field *rf = &r->fields[i];
		bool by_id = rf->field_id != FLOE_AVRO_ID_NONE && w_ids;
		long found = -1;
		if (by_id)
			for (size_t j = 0; j < w->n_fields && found < 0; j++)
				if (w->fields[j].field_id == rf->field_id && wmatch[j] < 0)
					found = (long)j;
		for (size_t j = 0; j < w->n_fields && found < 0; j++) {
			const floe_avro_field *wf = &w->fields[j];
			bool ok_name = strcmp(wf->name, rf->name) == 0;
			for (size_t k = 0; !ok_name && k < rf->n_aliases; k++)
				ok_name = strcmp(wf->name, rf->aliases[k]) == 0;
			/* with ids on both sides a same-named field of another id is a
			 * different column (dropped and re-added) */
			if (ok_name && wmatch[j] < 0 && !(by_id && wf->field_id != FLOE_AVRO_ID_NONE))
				found = (long)j;
		}
		if (found >= 0) {
			wmatch[found] = (int32_t)i;
			continue;
		}
		/* not written: the default, or null for an optional field */
		rfill *fl = &p->u.rec.fills[n_fills++];
		fl->rindex = i;
		if (rf->default_value) {
			if ((rc = floe_avro_value_from_json(&fl->v, a, rf->type, rf->default_value,
							    b->err)))
				return AVRO_PREFIX(rc, b->err, "reader field '%s': ", rf->name);
		} else if (floe_avro_is_nullable(rf->type)) {
			fl->v.type = FLOE_AVRO_NULL;
			fl->v.branch = -1;
			for (size_t k = 0; rf->type->type == FLOE_AVRO_UNION && k < rf->type->n_branches;
			     k++)
				if (rf->type->branches[k]->type == FLOE_AVRO_NULL)
					fl->v.branch = (int32_t)k;
		} else {
			if (rf->field_id != FLOE_AVRO_ID_NONE)
				return floe_error_corrupt(b->err, "required field '%s' (field-id %d) is not in "
						      "the file's schema and has no default",
						      rf->name, (int)rf->field_id);
			return floe_error_corrupt(b->err, "required field '%s' is not in the file's schema and "
					      "has no default",
					      rf->name);
		}
	}
	p->u.rec.n_fills = n_fills;
	for (size_t j = 0; j < w->n_fields; j++) {
		rstep *st = &p->u.rec.steps[j];
		st->rindex = wmatch[j];
		st->wtype = w->fields[j].type;
		st->name = w->fields[j].name;
		if (st->rindex >= 0 &&
		    (rc = build(b, r->fields[st->rindex].type, w->fields[j].type, &st->p)))
			return AVRO_PREFIX(rc, b->err, "field '%s': ", r->fields[st->rindex].name);
	}
	return FLOE_OK;
}

static int build_enum(builder *b, const floe_avro_schema *r, const floe_avro_schema *w, plan *p)
{
	int32_t *map = floe_arena_alloc(&b->d->arena, (w->n_symbols ? w->n_symbols : 1) * 4);
	int32_t dflt = -1;
	if (!map)
		return nomem(b);
	for (size_t k = 0; r->enum_default && k < r->n_symbols; k++)
		if (strcmp(r->symbols[k], r->enum_default) == 0)
			dflt = (int32_t)k;
	for (size_t j = 0; j < w->n_symbols; j++) {
		map[j] = dflt;
		for (size_t k = 0; k < r->n_symbols; k++)
			if (strcmp(r->symbols[k], w->symbols[j]) == 0) {
				map[j] = (int32_t)k;
				break;
			}
	}
	p->u.en.map = map;
	p->u.en.n = w->n_symbols;
	p->u.en.w = w;
	return FLOE_OK;
}

/* One writer union branch: an error here becomes an OP_FAIL plan, raised
 * only if a datum actually uses the branch. */
static int build_wbranch(builder *b, const floe_avro_schema *r, const floe_avro_schema *w,
			 const plan **out, bool *failed)
{
	int rc = build(b, r, w, out);
	plan *f;
	*failed = false;
	if (rc != FLOE_ECORRUPT)
		return rc;
	*failed = true;
	if (!(f = new_plan(b, OP_FAIL)))
		return nomem(b);
	f->u.msg = floe_arena_strdup(&b->d->arena, b->err ? b->err->msg : "incompatible branch");
	if (!f->u.msg)
		return nomem(b);
	if (b->err)
		floe_error_clear(b->err);
	*out = f;
	return FLOE_OK;
}

static int build_body(builder *b, const floe_avro_schema *r, const floe_avro_schema *w, plan *p)
{
	int rc;
	if (w->type == FLOE_AVRO_UNION) {
		size_t n_failed = 0;
		p->op = OP_WUNION;
		p->u.wu.n = w->n_branches;
		p->u.wu.br = floe_arena_calloc(&b->d->arena, w->n_branches ? w->n_branches : 1,
					       sizeof(plan *));
		if (!p->u.wu.br)
			return nomem(b);
		for (size_t i = 0; i < w->n_branches; i++) {
			bool failed;
			if ((rc = build_wbranch(b, r, w->branches[i], &p->u.wu.br[i], &failed)))
				return rc;
			n_failed += failed;
		}
		if (w->n_branches && n_failed == w->n_branches)
			return floe_error_corrupt(b->err, "no branch of the writer's union can be read as %s",
					      tname(r));
		return FLOE_OK;
	}
	if (r->type == FLOE_AVRO_UNION) {
		int k = pick_branch(r, w);
		if (k < 0)
			return floe_error_corrupt(b->err, "writer type %s matches no branch of the reader's union",
					      tname(w));
		p->op = OP_RUNION;
		p->rbranch = k;
		return build(b, r->branches[k], w, &p->u.inner);
	}
	if (r->type != w->type) {
		if (!promotable(w->type, r->type))
			return floe_error_corrupt(b->err, "cannot read writer type %s as %s", tname(w), tname(r));
		switch (w->type) {
		case FLOE_AVRO_INT:
			p->op = r->type == FLOE_AVRO_LONG    ? OP_INT_LONG
				: r->type == FLOE_AVRO_FLOAT ? OP_INT_FLOAT
							     : OP_INT_DOUBLE;
			break;
		case FLOE_AVRO_LONG:
			p->op = r->type == FLOE_AVRO_FLOAT ? OP_LONG_FLOAT : OP_LONG_DOUBLE;
			break;
		case FLOE_AVRO_FLOAT: p->op = OP_FLOAT_DOUBLE; break;
		case FLOE_AVRO_STRING: p->op = OP_STRING_BYTES; break;
		default: p->op = OP_BYTES_STRING; break;
		}
		return FLOE_OK;
	}
	switch (w->type) {
	case FLOE_AVRO_NULL: p->op = OP_NULL; return FLOE_OK;
	case FLOE_AVRO_BOOLEAN: p->op = OP_BOOL; return FLOE_OK;
	case FLOE_AVRO_INT: p->op = OP_INT; return FLOE_OK;
	case FLOE_AVRO_LONG: p->op = OP_LONG; return FLOE_OK;
	case FLOE_AVRO_FLOAT: p->op = OP_FLOAT; return FLOE_OK;
	case FLOE_AVRO_DOUBLE: p->op = OP_DOUBLE; return FLOE_OK;
	case FLOE_AVRO_BYTES: p->op = OP_BYTES; return FLOE_OK;
	case FLOE_AVRO_STRING: p->op = OP_STRING; return FLOE_OK;
	case FLOE_AVRO_FIXED:
		if (r->size != w->size)
			return floe_error_corrupt(b->err, "fixed %s has size %zu in the file, %zu in the reader",
					      tname(w), w->size, r->size);
		p->op = OP_FIXED;
		p->u.fixed_size = w->size;
		return FLOE_OK;
	case FLOE_AVRO_ENUM: p->op = OP_ENUM; return build_enum(b, r, w, p);
	case FLOE_AVRO_RECORD: p->op = OP_RECORD; return build_record(b, r, w, p);
	case FLOE_AVRO_ARRAY:
	case FLOE_AVRO_MAP:
		p->op = w->type == FLOE_AVRO_ARRAY ? OP_ARRAY : OP_MAP;
		p->u.arr.item_min = floe_avro_min_size(w->items) + (w->type == FLOE_AVRO_MAP);
		if ((rc = build(b, r->items, w->items, &p->u.arr.items)))
			return AVRO_PREFIX(rc, b->err, w->type == FLOE_AVRO_ARRAY ? "array items: "
										    : "map values: ");
		return FLOE_OK;
	case FLOE_AVRO_UNION: break;
	}
	return floe_error_corrupt(b->err, "unknown schema type");
}

static int build(builder *b, const floe_avro_schema *r, const floe_avro_schema *w,
		 const plan **out)
{
	const void *key[2] = {r, w};
	uint64_t v;
	plan *p;
	int rc;
	if (!r || !w)
		return floe_error_set(b->err, FLOE_EINVAL, "missing schema node");
	if (floe_hmap_get(&b->memo, key, sizeof(key), &v)) {
		*out = (const plan *)(uintptr_t)v;
		return FLOE_OK;
	}
	if (++b->depth > 256)
		return floe_error_corrupt(b->err, "schemas nested too deeply");
	if (!(p = new_plan(b, OP_NULL)))
		return nomem(b);
	rc = build_body(b, r, w, p);
	b->depth--;
	if (rc)
		return rc;
	if (floe_hmap_put(&b->memo, key, sizeof(key), (uint64_t)(uintptr_t)p, NULL))
		return nomem(b);
	*out = p;
	return FLOE_OK;
}

int floe_avro_decoder_new(floe_avro_decoder **out, const floe_avro_schema *reader,
			  const floe_avro_schema *writer, const floe_avro_decoder_opts *opts,
			  floe_error *err)
{
	floe_avro_decoder *d;
	builder b;
	int rc;
	*out = NULL;
	if (!writer)
		return floe_error_set(err, FLOE_EINVAL, "avro decoder: no writer schema");
	if (!reader)
		reader = writer;
	if (!(d = floe_calloc(1, sizeof(*d))))
		return floe_error_oom(err);
	floe_arena_init(&d->arena, 16384);
	d->reader = reader;
	d->writer = writer;
	if (opts)
		d->opts = *opts;
	else
		d->opts = (floe_avro_decoder_opts)FLOE_AVRO_DECODER_OPTS_INIT;
	if (!d->opts.max_items)
		d->opts.max_items = (size_t)64 << 20;
	if (!d->opts.max_depth)
		d->opts.max_depth = 100;
	memset(&b, 0, sizeof(b));
	b.d = d;
	b.err = err;
	floe_hmap_init(&b.memo);
	rc = build(&b, reader, writer, &d->root);
	floe_hmap_reset(&b.memo);
	if (rc) {
		floe_avro_decoder_free(d);
		return AVRO_PREFIX(rc, err, "resolving the file's schema: ");
	}
	*out = d;
	return FLOE_OK;
}

void floe_avro_decoder_free(floe_avro_decoder *d)
{
	if (!d)
		return;
	floe_arena_reset(&d->arena);
	floe_free(d);
}

const floe_avro_schema *floe_avro_decoder_reader_schema(const floe_avro_decoder *d)
{
	return d ? d->reader : NULL;
}

/* ---- decoding ---------------------------------------------------------------------- */

typedef struct dctx {
	floe_arena *a;
	floe_error *err;
	const floe_avro_decoder *d;
	size_t depth;
} dctx;

static int bad(dctx *x, const floe_cursor *c, const char *what)
{
	return floe_error_corrupt(x->err, "at offset %zu: %s", c->off, what);
}

static int dec(dctx *x, const plan *p, floe_cursor *c, floe_avro_value *out);

static int dec_string(dctx *x, floe_cursor *c, floe_avro_value *out, floe_avro_type t, bool check)
{
	const uint8_t *s;
	size_t n;
	if (!avro_dec_bytes(c, &s, &n))
		return bad(x, c, "bad length or truncated string/bytes");
	if (check && x->d->opts.validate_utf8 && !floe_utf8_valid(s, n))
		return bad(x, c, "string is not valid UTF-8");
	out->type = t;
	out->u.bytes.p = s;
	out->u.bytes.len = n;
	return FLOE_OK;
}

static int dec_list(dctx *x, const plan *p, floe_cursor *c, floe_avro_value *out, bool is_map)
{
	size_t total = 0, cap = 0, esz = is_map ? sizeof(floe_avro_map_entry) : sizeof(floe_avro_value);
	uint8_t *items = NULL;
	int64_t count, bytes;
	int rc;
	for (;;) {
		if (!avro_dec_block(c, &count, &bytes))
			return bad(x, c, "bad array/map block header");
		if (count == 0)
			break;
		if ((uint64_t)count > x->d->opts.max_items - total)
			return bad(x, c, "array/map has more items than the limit");
		if (p->u.arr.item_min && (uint64_t)count > floe_cursor_left(c) / p->u.arr.item_min)
			return bad(x, c, "array/map block count exceeds the remaining data");
		if (total + (size_t)count > cap) {
			size_t ncap = total + (size_t)count, nbytes;
			uint8_t *n;
			if (!floe_size_mul(&nbytes, ncap, esz) || !(n = floe_arena_alloc(x->a, nbytes)))
				return floe_error_set(x->err, FLOE_ENOMEM,
						      "out of memory decoding %zu items", ncap);
			if (total)
				memcpy(n, items, total * esz);
			items = n;
			cap = ncap;
		}
		for (int64_t i = 0; i < count; i++, total++) {
			floe_avro_value *v;
			if (is_map) {
				floe_avro_map_entry *e = (floe_avro_map_entry *)items + total;
				if (!avro_dec_bytes(c, &e->key, &e->key_len))
					return bad(x, c, "bad map key");
				if (x->d->opts.validate_utf8 &&
				    !floe_utf8_valid(e->key, e->key_len))
					return bad(x, c, "map key is not valid UTF-8");
				v = &e->value;
			} else {
				v = (floe_avro_value *)items + total;
			}
			if ((rc = dec(x, p->u.arr.items, c, v)))
				return rc;
		}
	}
	if (is_map) {
		out->type = FLOE_AVRO_MAP;
		out->u.map.entries = (floe_avro_map_entry *)items;
		out->u.map.n = total;
	} else {
		out->type = FLOE_AVRO_ARRAY;
		out->u.list.items = (floe_avro_value *)items;
		out->u.list.n = total;
	}
	return FLOE_OK;
}

static int dec_record(dctx *x, const plan *p, floe_cursor *c, floe_avro_value *out)
{
	size_t n = p->u.rec.n_fields;
	floe_avro_value *items = NULL;
	int rc;
	if (n && !(items = floe_arena_alloc(x->a, n * sizeof(floe_avro_value))))
		return floe_error_oomf(x->err, "out of memory decoding a record");
	for (size_t j = 0; j < p->u.rec.n_steps; j++) {
		const rstep *st = &p->u.rec.steps[j];
		if (st->rindex >= 0)
			rc = dec(x, st->p, c, &items[st->rindex]);
		else
			rc = floe_avro_skip(c, st->wtype, x->err);
		if (rc)
			return AVRO_PREFIX(rc, x->err, "field '%s': ", st->name);
	}
	for (size_t k = 0; k < p->u.rec.n_fills; k++)
		items[p->u.rec.fills[k].rindex] = p->u.rec.fills[k].v;
	out->type = FLOE_AVRO_RECORD;
	out->u.list.items = items;
	out->u.list.n = n;
	return FLOE_OK;
}

static int dec(dctx *x, const plan *p, floe_cursor *c, floe_avro_value *out)
{
	int rc;
	out->branch = -1;
	switch (p->op) {
	case OP_NULL: out->type = FLOE_AVRO_NULL; return FLOE_OK;
	case OP_BOOL:
		out->type = FLOE_AVRO_BOOLEAN;
		if (!floe_avro_dec_bool(c, &out->u.b))
			return bad(x, c, "bad boolean");
		return FLOE_OK;
	case OP_INT:
		out->type = FLOE_AVRO_INT;
		if (!avro_dec_int(c, &out->u.i))
			return bad(x, c, "bad int");
		return FLOE_OK;
	case OP_LONG:
		out->type = FLOE_AVRO_LONG;
		if (!avro_dec_long(c, &out->u.l))
			return bad(x, c, "bad long");
		return FLOE_OK;
	case OP_FLOAT:
		out->type = FLOE_AVRO_FLOAT;
		if (!floe_avro_dec_float(c, &out->u.f))
			return bad(x, c, "truncated float");
		return FLOE_OK;
	case OP_DOUBLE:
		out->type = FLOE_AVRO_DOUBLE;
		if (!floe_avro_dec_double(c, &out->u.d))
			return bad(x, c, "truncated double");
		return FLOE_OK;
	case OP_BYTES:
	case OP_STRING_BYTES: return dec_string(x, c, out, FLOE_AVRO_BYTES, false);
	case OP_STRING:
	case OP_BYTES_STRING: return dec_string(x, c, out, FLOE_AVRO_STRING, true);
	case OP_FIXED:
		out->type = FLOE_AVRO_FIXED;
		out->u.bytes.len = p->u.fixed_size;
		if (!floe_cursor_bytes(c, p->u.fixed_size, &out->u.bytes.p))
			return bad(x, c, "truncated fixed");
		return FLOE_OK;
	case OP_ENUM: {
		int64_t v;
		out->type = FLOE_AVRO_ENUM;
		if (!avro_dec_long(c, &v) || v < 0 || (uint64_t)v >= p->u.en.n)
			return bad(x, c, "bad enum index");
		if (p->u.en.map[v] < 0)
			return floe_error_corrupt(x->err, "at offset %zu: enum symbol '%s' is unknown to the reader",
					      c->off, p->u.en.w->symbols[v]);
		out->u.i = p->u.en.map[v];
		return FLOE_OK;
	}
	case OP_INT_LONG:
	case OP_INT_FLOAT:
	case OP_INT_DOUBLE: {
		int32_t v;
		if (!avro_dec_int(c, &v))
			return bad(x, c, "bad int");
		if (p->op == OP_INT_LONG) {
			out->type = FLOE_AVRO_LONG;
			out->u.l = v;
		} else if (p->op == OP_INT_FLOAT) {
			out->type = FLOE_AVRO_FLOAT;
			out->u.f = (float)v;
		} else {
			out->type = FLOE_AVRO_DOUBLE;
			out->u.d = v;
		}
		return FLOE_OK;
	}
	case OP_LONG_FLOAT:
	case OP_LONG_DOUBLE: {
		int64_t v;
		if (!avro_dec_long(c, &v))
			return bad(x, c, "bad long");
		if (p->op == OP_LONG_FLOAT) {
			out->type = FLOE_AVRO_FLOAT;
			out->u.f = (float)v;
		} else {
			out->type = FLOE_AVRO_DOUBLE;
			out->u.d = (double)v;
		}
		return FLOE_OK;
	}
	case OP_FLOAT_DOUBLE: {
		float f;
		if (!floe_avro_dec_float(c, &f))
			return bad(x, c, "truncated float");
		out->type = FLOE_AVRO_DOUBLE;
		out->u.d = f;
		return FLOE_OK;
	}
	case OP_RECORD:
	case OP_ARRAY:
	case OP_MAP:
		if (++x->depth > x->d->opts.max_depth)
			return bad(x, c, "values nested too deeply");
		rc = p->op == OP_RECORD ? dec_record(x, p, c, out)
				       : dec_list(x, p, c, out, p->op == OP_MAP);
		x->depth--;
		return rc;
	case OP_WUNION: {
		size_t br;
		const plan *bp;
		if (!floe_avro_dec_union(c, p->u.wu.n, &br))
			return bad(x, c, "bad union branch index");
		bp = p->u.wu.br[br];
		if (bp->op != OP_RUNION)
			return dec(x, bp, c, out);
		/* union to union (["null", T] both sides): one call less */
		if (bp->u.inner->op == OP_NULL) {
			out->type = FLOE_AVRO_NULL;
		} else if ((rc = dec(x, bp->u.inner, c, out))) {
			return rc;
		}
		out->branch = bp->rbranch;
		return FLOE_OK;
	}
	case OP_RUNION:
		if ((rc = dec(x, p->u.inner, c, out)))
			return rc;
		out->branch = p->rbranch;
		return FLOE_OK;
	case OP_FAIL:
		return floe_error_corrupt(x->err, "at offset %zu: %s", c->off, p->u.msg);
	}
	return bad(x, c, "bad plan");
}

int floe_avro_decode(floe_avro_value *out, const floe_avro_decoder *d, floe_cursor *c,
		     floe_arena *a, floe_error *err)
{
	dctx x = {a, err, d, 0};
	return dec(&x, d->root, c, out);
}
