/*
 * reader.c — the Parquet reader: footer, column selection, and rebuilding
 * nested Arrow arrays from definition/repetition levels.
 *
 * DESIGN (assembly): the selection becomes a tree of output nodes, one per
 * Arrow array. Each carries the level thresholds that define it:
 *   slot_rep/slot_def — an entry starts one of its slots when
 *                       rep <= slot_rep and def >= slot_def;
 *   null_def          — the slot is non-null when def >= null_def;
 *   elem_rep/elem_def — (lists, maps) an entry of the slot starts an element
 *                       when rep <= elem_rep and def >= elem_def.
 * A node reads the levels of one leaf below it (any leaf shares the levels
 * above the node), so each node is one pass over a level array; leaves take
 * their dense values in order. Children's lengths are checked against their
 * parent's, which catches columns whose levels disagree.
 * spec: LogicalTypes.md "Nested Types" and its backward-compatibility rules
 * for lists (2-level, "array", "<name>_tuple") and maps.
 */
#include "parquet/reader.h"

#include <stdio.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "parquet/rcol.h"
#include "util/alloc.h"
#include "util/bitpack.h"
#include "util/cursor.h"

enum { O_LEAF, O_STRUCT, O_LIST, O_MAP };

typedef struct onode onode;
struct onode {
	int kind;
	const floe_parquet_node *pn; /* name, field id */
	const char *name;
	bool nullable;
	int slot_rep, slot_def, null_def, elem_rep, elem_def;
	int col;    /* leaf: index into r->cols */
	int driver; /* r->cols index of a leaf below */
	onode **children;
	int n_children;
};

struct floe_parquet_reader {
	floe_input *in;
	bool head_checked; /* the leading PAR1 (checked before the first row group is read) */
	bool parquet_816; /* written by parquet-mr <= 1.2.8 */
	floe_parquet_reader_opts opts;
	floe_arena arena; /* footer, schema-independent */
	floe_parquet_file_meta *meta;
	floe_parquet_schema *schema;
	bool *leaf_sel;
	int *col_of_leaf; /* leaf index -> r->cols index, -1 */
	floe_parquet__rcol *cols;
	int n_cols;
	floe_arena tree; /* onodes */
	onode **tops;
	int n_tops;
	int *rgs;
	size_t n_rgs, rg_pos;
	bool rg_active;
	int64_t rg_done;
};

/* ---- open ----------------------------------------------------------------- */

static void free_cols(floe_parquet_reader *r)
{
	for (int i = 0; i < r->n_cols; i++)
		floe_parquet__rcol_reset(&r->cols[i]);
	floe_free(r->cols);
	r->cols = NULL;
	r->n_cols = 0;
}

void floe_parquet_reader_free(floe_parquet_reader *r)
{
	if (!r)
		return;
	free_cols(r);
	floe_free(r->leaf_sel);
	floe_free(r->col_of_leaf);
	floe_free(r->rgs);
	floe_arena_reset(&r->tree);
	floe_arena_reset(&r->arena);
	floe_parquet_schema_free(r->schema);
	floe_free(r);
}

static const char *name_of(floe_input *in)
{
	return in->name ? in->name : "parquet";
}

/* "parquet-mr version 1.2.8 (build ...)": older than 1.2.9? */
static bool old_parquet_mr(const char *created_by)
{
	const char *p = "parquet-mr version ";
	int v[3] = {0, 0, 0};
	if (created_by && strcmp(created_by, "parquet-mr") == 0)
		return true; /* no version: as old as it gets (Arrow reads it so too) */
	if (!created_by || strncmp(created_by, p, strlen(p)) != 0)
		return false;
	created_by += strlen(p);
	for (int i = 0; i < 3; i++) {
		while (*created_by >= '0' && *created_by <= '9' && v[i] < 100000)
			v[i] = v[i] * 10 + (*created_by++ - '0');
		if (*created_by == '.')
			created_by++;
		else
			break;
	}
	return v[0] < 1 || (v[0] == 1 && (v[1] < 2 || (v[1] == 2 && v[2] < 9)));
}

int floe_parquet_reader_open(floe_parquet_reader **out, floe_input *in,
			     const floe_parquet_reader_opts *opts, floe_error *err)
{
	static const floe_parquet_reader_opts dflt = FLOE_PARQUET_READER_OPTS_INIT;
	floe_parquet_reader *r;
	uint8_t tail[8];
	uint32_t flen;
	uint8_t *footer = NULL;
	int rc;

	if (!opts)
		opts = &dflt;
	if (in->size < 12)
		return floe_error_corrupt(err, "'%s': %llu bytes is too small for a Parquet file",
				      name_of(in), (unsigned long long)in->size);
	if ((rc = floe_input_read_exact(in, in->size - 8, tail, 8, err)))
		return rc;
	if (memcmp(tail + 4, "PARE", 4) == 0)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "'%s': encrypted Parquet files (encrypted footer) are not supported",
				      name_of(in));
	if (memcmp(tail + 4, "PAR1", 4) != 0)
		return floe_error_corrupt(err, "'%s': not a Parquet file (no PAR1 magic)",
				      name_of(in));
	flen = floe_load_u32le(tail);
	if (flen > in->size - 12 || flen > opts->max_footer_bytes)
		return floe_error_corrupt(err, "'%s': footer length %u does not fit the file (%llu bytes)",
				      name_of(in), flen, (unsigned long long)in->size);
	r = floe_calloc(1, sizeof(*r));
	if (!r)
		return floe_error_oom(err);
	r->in = in;
	r->opts = *opts;
	if (r->opts.batch_rows <= 0)
		r->opts.batch_rows = 65536;
	floe_arena_init(&r->arena, 65536);
	floe_arena_init(&r->tree, 8192);
	footer = floe_malloc(flen ? flen : 1);
	if (!footer) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if ((rc = floe_input_read_exact(in, in->size - 8 - flen, footer, flen, err)) ||
	    (rc = floe_parquet_meta_parse(&r->meta, &r->arena, footer, flen, name_of(in), err)) ||
	    (rc = floe_parquet_schema_from_meta(&r->schema, r->meta, name_of(in), err)))
		goto fail;
	floe_free(footer);
	footer = NULL;
	r->parquet_816 = old_parquet_mr(r->meta->created_by);
	for (size_t i = 0; i < r->meta->n_row_groups; i++) {
		if (r->meta->row_groups[i].n_columns != (size_t)r->schema->n_leaves) {
			rc = floe_error_corrupt(err, "'%s': row group %zu has %zu columns, the schema %d",
					    name_of(in), i, r->meta->row_groups[i].n_columns,
					    r->schema->n_leaves);
			goto fail;
		}
	}
	r->leaf_sel = floe_calloc((size_t)r->schema->n_leaves + 1, sizeof(bool));
	r->col_of_leaf = floe_calloc((size_t)r->schema->n_leaves + 1, sizeof(int));
	if (!r->leaf_sel || !r->col_of_leaf) {
		rc = floe_error_oom(err);
		goto fail;
	}
	if ((rc = floe_parquet_reader_select(r, NULL, 0, err)) ||
	    (rc = floe_parquet_reader_select_row_groups(r, NULL, 0, err)))
		goto fail;
	*out = r;
	return FLOE_OK;
fail:
	floe_free(footer);
	floe_parquet_reader_free(r);
	return rc;
}

const floe_parquet_file_meta *floe_parquet_reader_meta(const floe_parquet_reader *r)
{
	return r->meta;
}

const floe_parquet_schema *floe_parquet_reader_schema(const floe_parquet_reader *r)
{
	return r->schema;
}

int floe_parquet_reader_select_row_groups(floe_parquet_reader *r, const int *row_groups, size_t n,
					  floe_error *err)
{
	size_t total = row_groups ? n : r->meta->n_row_groups;
	int *rgs = floe_calloc(total ? total : 1, sizeof(int));
	if (!rgs)
		return floe_error_oom(err);
	for (size_t i = 0; i < total; i++) {
		int g = row_groups ? row_groups[i] : (int)i;
		if (g < 0 || (size_t)g >= r->meta->n_row_groups) {
			floe_free(rgs);
			return floe_error_set(err, FLOE_EINVAL, "'%s': no row group %d (of %zu)",
					      name_of(r->in), g, r->meta->n_row_groups);
		}
		rgs[i] = g;
	}
	floe_free(r->rgs);
	r->rgs = rgs;
	r->n_rgs = total;
	r->rg_pos = 0;
	r->rg_active = false;
	return FLOE_OK;
}

/* ---- selection and the output tree ---------------------------------------- */

static bool is_list(const floe_parquet_node *n)
{
	return n->logical.kind == FLOE_PARQUET_LT_LIST || n->converted == FLOE_PARQUET_CT_LIST;
}

static bool is_map(const floe_parquet_node *n)
{
	return n->logical.kind == FLOE_PARQUET_LT_MAP || n->converted == FLOE_PARQUET_CT_MAP ||
	       n->converted == FLOE_PARQUET_CT_MAP_KEY_VALUE;
}

static bool any_selected(const floe_parquet_reader *r, const floe_parquet_node *n)
{
	for (int i = 0; i < n->n_leaves; i++)
		if (r->leaf_sel[n->first_leaf + i])
			return true;
	return false;
}

/* Maps are read whole. */
static void widen_maps(floe_parquet_reader *r, const floe_parquet_node *n)
{
	if (n->physical >= 0)
		return;
	if (is_map(n) && any_selected(r, n)) {
		for (int i = 0; i < n->n_leaves; i++)
			r->leaf_sel[n->first_leaf + i] = true;
		return;
	}
	for (int i = 0; i < n->n_children; i++)
		widen_maps(r, n->children[i]);
}

static onode *new_onode(floe_parquet_reader *r, int kind, const floe_parquet_node *pn, int nchild)
{
	onode *o = floe_arena_calloc(&r->tree, 1, sizeof(*o));
	if (!o)
		return NULL;
	o->kind = kind;
	o->pn = pn;
	o->name = pn->name;
	o->col = o->driver = -1;
	if (nchild > 0 && !(o->children = floe_arena_calloc(&r->tree, (size_t)nchild, sizeof(onode *))))
		return NULL;
	return o;
}

static onode *make_value(floe_parquet_reader *r, const floe_parquet_node *n, int slot_rep,
			 int slot_def);

static onode *make_field(floe_parquet_reader *r, const floe_parquet_node *n, int slot_rep,
			 int slot_def)
{
	onode *o, *c;
	if (n->repetition != FLOE_PARQUET_REPEATED)
		return make_value(r, n, slot_rep, slot_def);
	/* a bare repeated field: a required list of required elements */
	if (!(o = new_onode(r, O_LIST, n, 1)))
		return NULL;
	o->slot_rep = slot_rep;
	o->slot_def = slot_def;
	o->null_def = slot_def;
	o->elem_rep = n->rep_level;
	o->elem_def = n->def_level;
	if (!(c = make_value(r, n, n->rep_level, n->def_level)))
		return NULL;
	o->children[0] = c;
	o->n_children = 1;
	o->driver = c->driver;
	return o;
}

/* spec: LogicalTypes.md, lists: which node is the element. */
static const floe_parquet_node *list_element(const floe_parquet_node *n, const floe_parquet_node *rep)
{
	size_t ln;
	if (rep->physical >= 0 || rep->n_children != 1)
		return rep;
	if (strcmp(rep->name, "array") == 0)
		return rep;
	ln = strlen(n->name);
	if (strncmp(rep->name, n->name, ln) == 0 && strcmp(rep->name + ln, "_tuple") == 0)
		return rep;
	return rep->children[0];
}

static onode *make_list(floe_parquet_reader *r, onode *o, const floe_parquet_node *rep,
			const floe_parquet_node *elem)
{
	onode *c;
	o->kind = O_LIST;
	o->elem_rep = rep->rep_level;
	o->elem_def = rep->def_level;
	c = elem == rep ? make_value(r, rep, rep->rep_level, rep->def_level)
			: make_field(r, elem, rep->rep_level, rep->def_level);
	if (!c)
		return NULL;
	o->children[0] = c;
	o->n_children = 1;
	o->driver = c->driver;
	return o;
}

static onode *make_value(floe_parquet_reader *r, const floe_parquet_node *n, int slot_rep,
			 int slot_def)
{
	onode *o;
	int nsel = 0;
	if (n->physical >= 0) {
		if (!(o = new_onode(r, O_LEAF, n, 0)))
			return NULL;
		o->col = o->driver = r->col_of_leaf[n->leaf_index];
	} else {
		for (int i = 0; i < n->n_children; i++)
			nsel += any_selected(r, n->children[i]);
		if (!(o = new_onode(r, O_STRUCT, n, nsel > 2 ? nsel : 2)))
			return NULL;
	}
	o->slot_rep = slot_rep;
	o->slot_def = slot_def;
	o->null_def = n->def_level;
	o->nullable = n->repetition == FLOE_PARQUET_OPTIONAL;
	if (n->physical >= 0)
		return o;
	if (n->n_children == 1 && n->children[0]->repetition == FLOE_PARQUET_REPEATED) {
		const floe_parquet_node *rep = n->children[0];
		if (is_list(n))
			return make_list(r, o, rep, list_element(n, rep));
		if (is_map(n) && rep->physical < 0 && rep->n_children == 1)
			return make_list(r, o, rep, rep->children[0]); /* a map without values */
		if (is_map(n) && rep->physical < 0 && rep->n_children == 2 &&
		    rep->children[0]->repetition == FLOE_PARQUET_REQUIRED) {
			onode *e = new_onode(r, O_STRUCT, rep, 2);
			if (!e)
				return NULL;
			e->name = "entries";
			e->slot_rep = rep->rep_level;
			e->slot_def = e->null_def = rep->def_level;
			for (int i = 0; i < 2; i++)
				if (!(e->children[i] = make_field(r, rep->children[i], rep->rep_level,
								  rep->def_level)))
					return NULL;
			e->n_children = 2;
			e->driver = e->children[0]->driver;
			o->kind = O_MAP;
			o->elem_rep = rep->rep_level;
			o->elem_def = rep->def_level;
			o->children[0] = e;
			o->n_children = 1;
			o->driver = e->driver;
			return o;
		}
		/* other maps (an optional key...) read as a list of entry structs */
		if (is_map(n))
			return make_list(r, o, rep, rep);
	}
	for (int i = 0; i < n->n_children; i++) {
		const floe_parquet_node *c = n->children[i];
		if (!any_selected(r, c))
			continue;
		if (!(o->children[o->n_children] = make_field(r, c, slot_rep, slot_def)))
			return NULL;
		if (o->driver < 0)
			o->driver = o->children[o->n_children]->driver;
		o->n_children++;
	}
	return o;
}

int floe_parquet_reader_select(floe_parquet_reader *r, const int *nodes, size_t n,
			       floe_error *err)
{
	const floe_parquet_schema *s = r->schema;
	const floe_parquet_node *root = s->root;
	int ncols = 0;
	memset(r->leaf_sel, 0, (size_t)s->n_leaves * sizeof(bool));
	if (!nodes) {
		for (int i = 0; i < s->n_leaves; i++)
			r->leaf_sel[i] = true;
	}
	for (size_t i = 0; nodes && i < n; i++) {
		const floe_parquet_node *nd;
		if (nodes[i] < 0 || nodes[i] >= s->n_nodes)
			return floe_error_set(err, FLOE_EINVAL, "'%s': no schema node %d (of %d)",
					      name_of(r->in), nodes[i], s->n_nodes);
		nd = s->nodes[nodes[i]];
		for (int k = 0; k < nd->n_leaves; k++)
			r->leaf_sel[nd->first_leaf + k] = true;
	}
	widen_maps(r, root);
	free_cols(r);
	for (int i = 0; i < s->n_leaves; i++)
		ncols += r->leaf_sel[i];
	r->cols = floe_calloc((size_t)(ncols ? ncols : 1), sizeof(*r->cols));
	if (!r->cols)
		return floe_error_oom(err);
	for (int i = 0; i < s->n_leaves; i++) {
		r->col_of_leaf[i] = -1;
		if (!r->leaf_sel[i])
			continue;
		floe_parquet__rcol *c = &r->cols[r->n_cols];
		floe_parquet__rcol_init(c, r->in, &r->opts, s->leaves[i]);
		c->pad_dict_header = r->parquet_816;
		r->col_of_leaf[i] = r->n_cols++;
		int rc = floe_parquet__leafout_init(&c->out, s->leaves[i], r->opts.int96_as_micros, err);
		if (rc)
			return floe_error_prefix(err, rc, "'%s': ", name_of(r->in));
	}
	floe_arena_reset(&r->tree);
	r->n_tops = 0;
	r->tops = floe_arena_calloc(&r->tree, (size_t)root->n_children + 1, sizeof(onode *));
	if (!r->tops)
		return floe_error_oom(err);
	for (int i = 0; i < root->n_children; i++) {
		if (!any_selected(r, root->children[i]))
			continue;
		if (!(r->tops[r->n_tops] = make_field(r, root->children[i], 0, 0)))
			return floe_error_oom(err);
		r->n_tops++;
	}
	r->rg_pos = 0;
	r->rg_active = false;
	return FLOE_OK;
}

/* ---- Arrow schema -------------------------------------------------------------- */

static int onode_schema(floe_parquet_reader *r, const onode *o, const onode *parent,
			struct ArrowSchema *s)
{
	const char *fmt = "+s";
	int rc;
	if (o->kind == O_LEAF)
		fmt = r->cols[o->col].out.format;
	else if (o->kind == O_LIST)
		fmt = "+l";
	else if (o->kind == O_MAP)
		fmt = "+m";
	if ((rc = floe_arrow_schema_init(s, fmt, o->name, o->nullable ? ARROW_FLAG_NULLABLE : 0,
					 o->n_children)))
		return rc;
	/* the field id of a node, once (a bare repeated field makes a list and
	 * its element from one node: the id goes on the list) */
	if (o->pn->has_field_id && o->name == o->pn->name && (!parent || parent->pn != o->pn)) {
		char id[16];
		const char *k[] = {"PARQUET:field_id"}, *v[] = {id};
		snprintf(id, sizeof(id), "%d", (int)o->pn->field_id);
		if ((rc = floe_arrow_schema_set_metadata(s, k, v, 1)))
			return rc;
	}
	if (o->kind == O_LEAF && o->pn->logical.kind == FLOE_PARQUET_LT_UUID) {
		/* spec: the canonical Arrow extension for UUID */
		char id[16];
		const char *k[] = {"ARROW:extension:name", "ARROW:extension:metadata", "PARQUET:field_id"};
		const char *v[] = {"arrow.uuid", "", id};
		snprintf(id, sizeof(id), "%d", (int)o->pn->field_id);
		if ((rc = floe_arrow_schema_set_metadata(s, k, v, o->pn->has_field_id ? 3 : 2)))
			return rc;
	}
	for (int i = 0; i < o->n_children; i++)
		if ((rc = onode_schema(r, o->children[i], o, s->children[i])))
			return rc;
	return FLOE_OK;
}

int floe_parquet_reader_arrow_schema(floe_parquet_reader *r, struct ArrowSchema *out,
				     floe_error *err)
{
	int rc = floe_arrow_schema_init(out, "+s", "", 0, r->n_tops);
	for (int i = 0; !rc && i < r->n_tops; i++)
		rc = onode_schema(r, r->tops[i], NULL, out->children[i]);
	if (rc) {
		floe_arrow_schema_release(out);
		return floe_error_set(err, rc, "out of memory");
	}
	return FLOE_OK;
}

/* ---- assembly ------------------------------------------------------------------- */

typedef struct lv {
	const uint16_t *def, *rep;
	size_t n;
	int max_def;
} lv;

static void levels_of(floe_parquet_reader *r, int col, lv *l)
{
	floe_parquet__rcol *c = &r->cols[col];
	l->def = c->leaf->def_level > 0 ? (const uint16_t *)(void *)c->bdef.data : NULL;
	l->rep = c->leaf->rep_level > 0 ? (const uint16_t *)(void *)c->brep.data : NULL;
	l->n = c->b_levels;
	l->max_def = c->leaf->def_level;
}

static inline int dget(const lv *l, size_t i)
{
	return l->def ? l->def[i] : l->max_def;
}
static inline int rget(const lv *l, size_t i)
{
	return l->rep ? l->rep[i] : 0;
}

static int inconsistent(floe_parquet_reader *r, const onode *o, floe_error *err)
{
	char path[256];
	return floe_error_corrupt(err, "'%s': the columns below '%s' have inconsistent levels",
			      name_of(r->in), floe_parquet_node_path(o->pn, path, sizeof(path)));
}

/* Validity bitmap from a predicate over slots; NULL when all valid. */
static int finish_validity(struct ArrowArray *a, floe_buf *bits, int64_t nulls)
{
	a->null_count = nulls;
	if (nulls == 0) {
		floe_buf_reset(bits);
		return FLOE_OK;
	}
	return floe_arrow_array_take_buf(a, 0, bits);
}

static int build(floe_parquet_reader *r, const onode *o, struct ArrowArray *a, floe_error *err);

static int build_leaf(floe_parquet_reader *r, const onode *o, struct ArrowArray *a, floe_error *err)
{
	floe_parquet__rcol *c = &r->cols[o->col];
	const floe_parquet__leafout *out = &c->out;
	lv l;
	floe_buf bits, vals;
	size_t slots = 0, nulls = 0, vi = 0, w = (size_t)out->out_width;
	int rc;
	levels_of(r, o->col, &l);
	floe_buf_init(&bits, 0);
	floe_buf_init(&vals, 0);
	/* count slots and nulls */
	if (!l.def || o->slot_def == 0) {
		slots = l.n;
	} else {
		for (size_t i = 0; i < l.n; i++)
			slots += l.def[i] >= o->slot_def;
	}
	if (l.def) {
		for (size_t i = 0; i < l.n; i++) {
			int d = l.def[i];
			nulls += d >= o->slot_def && d != l.max_def;
		}
	}
	if (slots - nulls != c->b_vals)
		return inconsistent(r, o, err);
	if ((rc = floe_arrow_array_init(a, floe_arrow_fmt_n_buffers(out->fmt.type), 0)))
		return floe_error_set(err, rc, "out of memory");
	a->length = (int64_t)slots;
	if (out->kind == FLOE_PQ_OUT_NULL) {
		a->null_count = (int64_t)slots;
		return FLOE_OK;
	}
	uint8_t *vb = NULL;
	if (nulls) {
		if (!(vb = floe_buf_extend(&bits, (slots + 7) / 8)))
			goto oom;
	}
	if (out->kind == FLOE_PQ_OUT_BOOL) {
		uint8_t *dst = floe_buf_extend(&vals, (slots + 7) / 8);
		const uint8_t *src = c->bvals.data;
		size_t s = 0;
		if (!dst)
			goto oom;
		for (size_t i = 0; i < l.n; i++) {
			int d = dget(&l, i);
			if (d < o->slot_def)
				continue;
			if (d == l.max_def) {
				if (vb)
					floe_bit_set(vb, s);
				if (src[vi++])
					floe_bit_set(dst, s);
			}
			s++;
		}
		if ((rc = floe_arrow_array_take_buf(a, 1, &vals)))
			goto oom;
	} else if (out->kind == FLOE_PQ_OUT_BINARY) {
		int32_t *off = (int32_t *)(void *)floe_parquet__extend(&vals, (slots + 1) * 4);
		const int32_t *lens = (const int32_t *)(void *)c->blens.data;
		int64_t pos = 0;
		size_t s = 0;
		if (!off)
			goto oom;
		off[0] = 0;
		for (size_t i = 0; i < l.n; i++) {
			int d = dget(&l, i);
			if (d < o->slot_def)
				continue;
			if (d == l.max_def) {
				if (vb)
					floe_bit_set(vb, s);
				pos += lens[vi++];
			}
			off[++s] = (int32_t)pos;
		}
		if ((rc = floe_arrow_array_take_buf(a, 1, &vals)) ||
		    (rc = floe_arrow_array_take_buf(a, 2, &c->bdata)))
			goto oom;
	} else if (!nulls) {
		/* dense values are the slots: hand the buffer over */
		if ((rc = floe_arrow_array_take_buf(a, 1, &c->bvals)))
			goto oom;
	} else {
		uint8_t *dst = floe_buf_extend(&vals, slots * w);
		const uint8_t *src = c->bvals.data;
		size_t s = 0;
		if (!dst)
			goto oom;
		for (size_t i = 0; i < l.n; i++) {
			int d = dget(&l, i);
			if (d < o->slot_def)
				continue;
			if (d == l.max_def) {
				floe_bit_set(vb, s);
				memcpy(dst + s * w, src + vi * w, w);
				vi++;
			}
			s++;
		}
		if ((rc = floe_arrow_array_take_buf(a, 1, &vals)))
			goto oom;
	}
	if (vb) {
		/* bits for the BOOL/BINARY paths were set above; other paths too */
		if ((rc = finish_validity(a, &bits, (int64_t)nulls)))
			goto oom;
	} else {
		a->null_count = 0;
	}
	return FLOE_OK;
oom:
	floe_buf_reset(&bits);
	floe_buf_reset(&vals);
	return floe_error_oom(err);
}

static int build_group(floe_parquet_reader *r, const onode *o, struct ArrowArray *a, floe_error *err)
{
	lv l;
	floe_buf bits, offs;
	size_t slots = 0, nulls = 0, elems = 0;
	int32_t *off = NULL;
	uint8_t *vb = NULL;
	int rc;
	bool listy = o->kind == O_LIST || o->kind == O_MAP;
	levels_of(r, o->driver, &l);
	floe_buf_init(&bits, 0);
	floe_buf_init(&offs, 0);
	/* pass 1: count */
	for (size_t i = 0; i < l.n; i++) {
		int d = dget(&l, i), rp = rget(&l, i);
		if (rp <= o->slot_rep && d >= o->slot_def) {
			slots++;
			nulls += d < o->null_def;
		}
	}
	if ((rc = floe_arrow_array_init(a, listy ? 2 : 1, o->n_children)))
		return floe_error_set(err, rc, "out of memory");
	a->length = (int64_t)slots;
	if (nulls && !(vb = floe_buf_extend(&bits, (slots + 7) / 8)))
		goto oom;
	if (listy && !(off = (int32_t *)(void *)floe_parquet__extend(&offs, (slots + 1) * 4)))
		goto oom;
	/* pass 2: validity and offsets */
	{
		size_t s = 0;
		bool in_slot = false;
		for (size_t i = 0; i < l.n; i++) {
			int d = dget(&l, i), rp = rget(&l, i);
			if (rp <= o->slot_rep) {
				in_slot = d >= o->slot_def;
				if (!in_slot)
					continue;
				if (vb && d >= o->null_def)
					floe_bit_set(vb, s);
				if (off)
					off[s] = (int32_t)elems;
				s++;
			}
			if (listy && in_slot && rp <= o->elem_rep && d >= o->elem_def) {
				if (elems >= INT32_MAX)
					return inconsistent(r, o, err);
				elems++;
			}
		}
		if (off)
			off[slots] = (int32_t)elems;
	}
	if (vb && (rc = finish_validity(a, &bits, (int64_t)nulls)))
		goto oom;
	if (off && (rc = floe_arrow_array_take_buf(a, 1, &offs)))
		goto oom;
	for (int i = 0; i < o->n_children; i++) {
		if ((rc = build(r, o->children[i], a->children[i], err)))
			return rc;
		if ((size_t)a->children[i]->length != (listy ? elems : slots))
			return inconsistent(r, o, err);
	}
	return FLOE_OK;
oom:
	floe_buf_reset(&bits);
	floe_buf_reset(&offs);
	return floe_error_oom(err);
}

static int build(floe_parquet_reader *r, const onode *o, struct ArrowArray *a, floe_error *err)
{
	if (o->kind == O_LEAF)
		return build_leaf(r, o, a, err);
	return build_group(r, o, a, err);
}

/* ---- batches ------------------------------------------------------------------- */

/* The row group's chunks are read next: an object store may fetch them
 * in a few merged requests instead of one series per column. Before the
 * first, the file's leading magic is checked (with the chunks, as the
 * first usually starts right after it: no request of its own on S3). */
static int prefetch_row_group(floe_parquet_reader *r, floe_error *err)
{
	floe_range rs[65];
	size_t n = 0;
	if (!r->head_checked)
		rs[n++] = (floe_range){0, 4};
	for (int i = 0; i < r->n_cols && n < sizeof(rs) / sizeof(rs[0]); i++)
		rs[n++] = (floe_range){r->cols[i].pos, r->cols[i].end - r->cols[i].pos};
	floe_input_prefetch(r->in, rs, n);
	if (r->head_checked)
		return FLOE_OK;
	uint8_t head[4];
	int rc = floe_input_read_exact(r->in, 0, head, 4, err);
	if (rc)
		return rc;
	if (memcmp(head, "PAR1", 4) != 0)
		return floe_error_corrupt(err, "'%s': not a Parquet file (no PAR1 magic at its start)",
					  name_of(r->in));
	r->head_checked = true;
	return FLOE_OK;
}

int floe_parquet_reader_next(floe_parquet_reader *r, struct ArrowArray *out, bool *eof,
			     floe_error *err)
{
	const floe_parquet_row_group *rg;
	int64_t n;
	int rc;
	memset(out, 0, sizeof(*out));
	*eof = false;
	for (;;) {
		if (!r->rg_active) {
			if (r->rg_pos >= r->n_rgs) {
				*eof = true;
				return FLOE_OK;
			}
			rg = &r->meta->row_groups[r->rgs[r->rg_pos]];
			if (rg->num_rows == 0) {
				r->rg_pos++;
				continue;
			}
			for (int i = 0; i < r->n_cols; i++) {
				int leaf = r->cols[i].leaf->leaf_index;
				if ((rc = floe_parquet__rcol_start(&r->cols[i], &rg->columns[leaf],
								   r->rgs[r->rg_pos], err)))
					return rc;
			}
			if ((rc = prefetch_row_group(r, err)))
				return rc;
			r->rg_active = true;
			r->rg_done = 0;
		}
		break;
	}
	rg = &r->meta->row_groups[r->rgs[r->rg_pos]];
	n = rg->num_rows - r->rg_done;
	if (n > r->opts.batch_rows)
		n = r->opts.batch_rows;
	for (int i = 0; i < r->n_cols; i++) {
		floe_parquet__rcol_batch_clear(&r->cols[i]);
		if ((rc = floe_parquet__rcol_read(&r->cols[i], (size_t)n, err)))
			return rc;
	}
	if ((rc = floe_arrow_array_init(out, 1, r->n_tops)))
		return floe_error_set(err, rc, "out of memory");
	out->length = n;
	for (int i = 0; i < r->n_tops; i++) {
		if ((rc = build(r, r->tops[i], out->children[i], err)) ||
		    (out->children[i]->length != n && (rc = inconsistent(r, r->tops[i], err)))) {
			floe_arrow_array_release(out);
			return rc;
		}
	}
	r->rg_done += n;
	if (r->rg_done >= rg->num_rows) {
		r->rg_active = false;
		r->rg_pos++;
	}
	return FLOE_OK;
}
