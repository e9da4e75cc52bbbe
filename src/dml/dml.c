/*
 * dml.c — user-issued row-level changes (floe/dml.h): delete, update and
 * merge in copy-on-write or merge-on-read mode, each one snapshot.
 *
 * DESIGN: one engine for the three. A table handle of its own (rt) reads
 * the base snapshot S; commits go through the caller's handle (t), as
 * compaction does, so the write metadata stays alive across the commit.
 *   1. find: a scan of S (the condition as its filter for delete/update;
 *      every row for a merge, matched by key against the source) with the
 *      metadata columns _file and _pos yields the affected rows, by data
 *      file, with the deletes already applied (only live rows are affected);
 *      update and merge also build the new versions of those rows (and a
 *      merge the rows to insert).
 *   2. merge-on-read: the positions go to a position delete writer (v2) or
 *      a DV writer (v3: a file's existing DV is merged and replaced, its
 *      older position delete files folded in, since a DV takes precedence
 *      over them); new rows to a task writer; one row delta.
 *      copy-on-write: a second scan of S narrowed to the affected files
 *      reads each whole (deletes applied) and writes every row whose
 *      position is not affected, plus the new rows; one overwrite (or
 *      delete, when nothing is added) removing the old files, and every
 *      delete file whose targets are all removed.
 *   3. the commit validates from S (floe_op_validate_from): the producer's
 *      own checks (removed files still live; delete files added for
 *      removed files; for row deltas, removed targets and a second DV) and
 *      this file's (check_cb): new delete files that may apply to a touched
 *      file (merge-on-read), and under serializable isolation new data
 *      files that may hold rows matching the condition — Java's
 *      validateNoConflictingDeleteFiles / validateNoConflictingDataFiles.
 * Nothing matched: nothing is written or committed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_take.h"
#include "dml/dml_int.h"
#include "iceberg/arrow_schema.h"
#include "iceberg/props.h"
#include "scan/scan_arrow.h"
#include "scan/scan_select.h"
#include "stream/stream_builder.h"
#include "stream/stream_decode.h"
#include "table/commit.h"
#include "util/alloc.h"
#include "util/hmap.h"
#include "util/opts.h"
#include "util/rand.h"
#include "write/write.h"

#define MERGE_SOURCE_MAX ((size_t)1 << 31) /* bytes of a merge source file */

void (*floe_dml__before_commit)(void *payload);
void *floe_dml__before_commit_payload;

enum { OP_DELETE = 0, OP_UPDATE, OP_MERGE };
static const char *const OP_NAME[] = {"delete", "update", "merge"};

/* ---- update expressions ------------------------------------------------------------- */

typedef struct term {
	int kind; /* 0 null, 1 column, 2 literal */
	int col;  /* top-level index */
	floe_value lit;
	const char *text; /* literal text (for binding) */
	size_t len;
} term;

typedef struct assign {
	int col; /* top-level index of the target */
	const floe_field *field;
	term a, b;
	char op; /* 0, '+', '-', '*' */
	const floe_type *calc; /* the operands' type */
} assign;

typedef struct touched {
	scan_file *f;      /* of the find scan's plan */
	const char *path;  /* as the scan opened it (relocated) */
	int64_t *pos;
	size_t n, cap;
} touched;

typedef struct dml {
	int op;
	floe_table *t, *rt;
	const floe_metadata *m;
	const floe_schema *schema;
	const floe_dml_opts *o;
	floe_dml_result *res;
	bool mor, serializable;
	floe_arena a;
	floe_write_config cfg;
	int64_t base_id;
	size_t nf; /* top-level fields */
	/* v3 row lineage: the find and copy scans project _row_id and
	 * _last_updated_sequence_number after the table's columns, and the
	 * writers get wm, the table metadata whose schema ends with both, so
	 * copied rows keep their row ids and updated rows keep theirs with a
	 * new sequence number (spec: "Row Lineage") */
	bool lineage;
	floe_metadata *wm;
	size_t meta; /* index of _file in scan batches (_pos follows) */
	floe_scan *scan;
	floe_scan *scan2; /* copy-on-write's: the removed delete files point into it */
	floe_expr *cond; /* bound condition (conflict detection); NULL = every row */
	floe_hmap by_path;
	touched *tv;
	size_t n_tv, cap_tv;
	struct ArrowSchema tschema; /* the table's top-level columns */
	struct ArrowArray *rows;    /* new rows (update, merge) */
	size_t n_rows, cap_rows;
	assign *set;
	size_t n_set;
	/* merge */
	struct ArrowArray src;
	int32_t *key_cols;
	size_t n_keys;
	floe_hmap src_keys; /* key bytes -> source row */
	uint8_t *src_matched;
	floe_fileio *io;
	/* conflict check */
	int64_t checked_head;
} dml;

/* ---- small helpers --------------------------------------------------------------------- */

static void noop_release(struct ArrowArray *a)
{
	a->release = NULL;
}

/* A view of batch's first nf children (borrowed). */
static struct ArrowArray top_view(const struct ArrowArray *b, size_t nf)
{
	struct ArrowArray v = *b;
	v.n_children = (int64_t)nf;
	v.release = noop_release;
	v.private_data = NULL;
	return v;
}

static const char *str_at(const struct ArrowArray *a, int64_t i, size_t *n)
{
	const int32_t *off = a->buffers[1];
	const char *data = a->buffers[2];
	int64_t r = i + a->offset;
	*n = (size_t)(off[r + 1] - off[r]);
	return data + off[r];
}

static int64_t pos_at(const struct ArrowArray *a, int64_t i)
{
	return ((const int64_t *)a->buffers[1])[i + a->offset];
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t x = *(const int64_t *)pa, y = *(const int64_t *)pb;
	return x < y ? -1 : x > y;
}

static int cmp_touched(const void *pa, const void *pb)
{
	return strcmp(((const touched *)pa)->f->raw_path, ((const touched *)pb)->f->raw_path);
}

static void file_of(floe_data_file *f, const scan_file *s)
{
	floe_data_file_init(f);
	f->content = s->content;
	f->file_path = s->raw_path;
	f->file_format = s->format;
	f->spec_id = s->spec_id;
	f->partition = s->partition;
	f->record_count = s->record_count;
	f->file_size_in_bytes = s->file_size;
	f->referenced_data_file = s->referenced;
	f->content_offset = s->content_offset;
	f->content_size_in_bytes = s->content_size;
}

/* The key bytes of row r over cols (a NULL in the key: *has_null). */
static int key_of(floe_buf *k, const struct ArrowArray *b, const floe_schema *s,
		  const int32_t *cols, size_t n, int64_t r, bool *has_null)
{
	k->len = 0;
	*has_null = false;
	for (size_t i = 0; i < n; i++) {
		const floe_field *fd = &s->root->fields[cols[i]];
		const struct ArrowArray *c = b->children[cols[i]];
		floe_value v;
		if (!floe_sa_valid(c, r)) {
			*has_null = true;
			return FLOE_OK;
		}
		floe_sa_value(&v, c, fd->type, r);
		size_t at = k->len;
		uint32_t len = 0;
		if (floe_buf_append(k, &len, sizeof(len)) || floe_value_to_bytes(k, &v))
			return FLOE_ENOMEM;
		len = (uint32_t)(k->len - at - sizeof(len));
		memcpy(k->data + at, &len, sizeof(len));
	}
	return FLOE_OK;
}

/* ---- row lineage (v3) ------------------------------------------------------------------ */

#define ID_ROW_ID 2147483540
#define ID_LAST_UPDATED_SEQ 2147483539

/* The write metadata of a v3 table: its current schema plus _row_id and
 * _last_updated_sequence_number with their reserved ids (*out owned by the
 * caller: floe_metadata_free). */
static int lineage_metadata(floe_metadata **out, const floe_metadata *m, floe_arena *a,
			    floe_error *err)
{
	const floe_schema *s = floe_metadata_current_schema(m);
	size_t nf = s->root->n_fields;
	floe_type *root = floe_arena_calloc(a, 1, sizeof(*root));
	floe_field *fs = root ? floe_arena_calloc(a, nf + 2, sizeof(*fs)) : NULL;
	floe_schema *ls;
	floe_metadata_builder *b = NULL;
	int32_t id;
	int rc;
	if (!fs)
		return floe_error_oom(err);
	*root = *s->root;
	memcpy(fs, s->root->fields, nf * sizeof(*fs));
	memset(&fs[nf], 0, 2 * sizeof(*fs));
	fs[nf].id = ID_ROW_ID;
	fs[nf].name = "_row_id";
	fs[nf].type = floe_type_primitive(FLOE_T_LONG);
	fs[nf + 1].id = ID_LAST_UPDATED_SEQ;
	fs[nf + 1].name = "_last_updated_sequence_number";
	fs[nf + 1].type = floe_type_primitive(FLOE_T_LONG);
	root->fields = fs;
	root->n_fields = nf + 2;
	if ((rc = floe_schema_make(&ls, a, s->schema_id, root, s->identifier_field_ids,
				   s->n_identifier_field_ids, err)) ||
	    (rc = floe_metadata_builder_from(&b, m, err)) ||
	    (rc = floe_mb_add_schema(b, ls, &id, err)) ||
	    (rc = floe_mb_set_current_schema(b, id, err))) {
		floe_metadata_builder_free(b);
		return rc;
	}
	return floe_metadata_builder_finish(out, b, NULL, m->last_updated_ms, err);
}

/* ---- properties --------------------------------------------------------------------- */

static int settings(dml *d, floe_error *err)
{
	char key[64];
	const char *v;
	floe_dml_mode mode = d->o->mode;
	floe_dml_isolation iso = d->o->isolation;
	if (mode == FLOE_DML_MODE_TABLE) {
		snprintf(key, sizeof(key), "write.%s.mode", OP_NAME[d->op]);
		v = floe_metadata_property(d->m, key);
		if (!v || strcmp(v, "copy-on-write") == 0)
			mode = FLOE_DML_COPY_ON_WRITE;
		else if (strcmp(v, "merge-on-read") == 0)
			mode = FLOE_DML_MERGE_ON_READ;
		else
			return floe_error_set(err, FLOE_EINVAL,
					      "%s is '%s': expected copy-on-write or merge-on-read",
					      key, v);
	}
	if (iso == FLOE_DML_ISOLATION_TABLE) {
		snprintf(key, sizeof(key), "write.%s.isolation-level", OP_NAME[d->op]);
		v = floe_metadata_property(d->m, key);
		if (!v || strcasecmp(v, "serializable") == 0)
			iso = FLOE_DML_SERIALIZABLE;
		else if (strcasecmp(v, "snapshot") == 0)
			iso = FLOE_DML_SNAPSHOT;
		else
			return floe_error_set(err, FLOE_EINVAL,
					      "%s is '%s': expected serializable or snapshot", key, v);
	}
	d->mor = mode == FLOE_DML_MERGE_ON_READ;
	d->serializable = iso == FLOE_DML_SERIALIZABLE;
	d->res->mode = mode;
	d->res->isolation = iso;
	if (d->mor && d->m->format_version < 2)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "write.%s.mode=merge-on-read needs format version 2 or later "
				      "(this table is v1: use copy-on-write, or upgrade the table)",
				      OP_NAME[d->op]);
	return FLOE_OK;
}

/* ---- update assignments ------------------------------------------------------------- */

static int find_col(dml *d, const char *name, size_t n, int *out)
{
	char buf[256];
	if (n == 0 || n >= sizeof(buf))
		return FLOE_EINVAL;
	memcpy(buf, name, n);
	buf[n] = 0;
	for (size_t i = 0; i < d->nf; i++)
		if (strcmp(d->schema->root->fields[i].name, buf) == 0) {
			*out = (int)i;
			return FLOE_OK;
		}
	for (size_t i = 0; d->o->ignore_case && i < d->nf; i++)
		if (strcasecmp(d->schema->root->fields[i].name, buf) == 0) {
			*out = (int)i;
			return FLOE_OK;
		}
	return FLOE_ENOTFOUND;
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '"' || c == '`';
}

/* Scan one operand at s[*i]: its text span. */
static int scan_term(const char *s, size_t n, size_t *i, const char **tp, size_t *tn, bool *ident,
		     floe_error *err)
{
	size_t p = *i;
	while (p < n && s[p] == ' ')
		p++;
	size_t start = p;
	*ident = false;
	if (p >= n)
		return floe_error_set(err, FLOE_EINVAL, "expected a value at %zu", p);
	if (s[p] == '\'') {
		for (p++; p < n; p++)
			if (s[p] == '\'') {
				if (p + 1 < n && s[p + 1] == '\'')
					p++;
				else
					break;
			}
		if (p >= n)
			return floe_error_set(err, FLOE_EINVAL, "unterminated string at %zu", start);
		p++;
	} else if (s[p] == '"' || s[p] == '`') {
		char q = s[p];
		for (p++; p < n && s[p] != q; p++)
			;
		if (p >= n)
			return floe_error_set(err, FLOE_EINVAL, "unterminated name at %zu", start);
		*ident = true;
		*tp = s + start + 1;
		*tn = p - start - 1;
		*i = p + 1;
		return FLOE_OK;
	} else if (is_ident_start(s[p])) {
		while (p < n && (is_ident_start(s[p]) || (s[p] >= '0' && s[p] <= '9')))
			p++;
		size_t wl = p - start;
		/* typed literals: DATE '...', TIMESTAMP '...', X'..' */
		size_t q = p;
		while (q < n && s[q] == ' ')
			q++;
		if (q < n && s[q] == '\'') {
			size_t j = q;
			int rc = scan_term(s, n, &j, tp, tn, ident, err);
			if (rc)
				return rc;
			p = j;
		} else if (!(wl == 4 && strncasecmp(s + start, "null", 4) == 0) &&
			   !(wl == 4 && strncasecmp(s + start, "true", 4) == 0) &&
			   !(wl == 5 && strncasecmp(s + start, "false", 5) == 0)) {
			*ident = true;
		}
	} else {
		if (s[p] == '-' || s[p] == '+')
			p++;
		while (p < n && ((s[p] >= '0' && s[p] <= '9') || s[p] == '.' || s[p] == 'e' ||
				 s[p] == 'E' ||
				 ((s[p] == '-' || s[p] == '+') && (s[p - 1] == 'e' || s[p - 1] == 'E'))))
			p++;
		if (p == start || (p == start + 1 && (s[start] == '-' || s[start] == '+')))
			return floe_error_set(err, FLOE_EINVAL, "expected a value at %zu", start);
	}
	*tp = s + start;
	*tn = p - start;
	*i = p;
	return FLOE_OK;
}

/* A type's name for messages (arena memory; "?" when out of memory). */
static const char *type_name(dml *d, const floe_type *t)
{
	floe_buf b;
	floe_buf_init(&b, 0);
	const char *out = "?";
	if (floe_type_format(&b, t) == FLOE_OK && floe_buf_append(&b, "", 1) == FLOE_OK) {
		char *c = floe_arena_strdup(&d->a, (const char *)b.data);
		if (c)
			out = c;
	}
	floe_buf_reset(&b);
	return out;
}

/* A literal converted to column `col`'s type: bound as "col = lit". */
static int bind_literal(dml *d, int col, const char *text, size_t n, floe_value *out,
			floe_error *err)
{
	const floe_field *f = &d->schema->root->fields[col];
	if (n == 4 && strncasecmp(text, "null", 4) == 0) {
		*out = floe_value_null(f->type->id);
		return FLOE_OK;
	}
	floe_buf q;
	floe_expr *e;
	int rc;
	floe_buf_init(&q, 0);
	if (floe_buf_append(&q, "\"", 1))
		return floe_error_oom(err);
	for (const char *p = f->name; *p; p++)
		if ((*p == '"' && floe_buf_append(&q, "\"\"", 2)) ||
		    (*p != '"' && floe_buf_append(&q, p, 1))) {
			floe_buf_reset(&q);
			return floe_error_oom(err);
		}
	if (floe_buf_append(&q, "\" = ", 4) || floe_buf_append(&q, text, n) ||
	    floe_buf_append(&q, "", 1)) {
		floe_buf_reset(&q);
		return floe_error_oom(err);
	}
	rc = floe_expr_compile(&e, &d->a, (const char *)q.data, d->schema, true, err);
	floe_buf_reset(&q);
	if (rc)
		return rc;
	if (e->kind != FLOE_EX_PRED || e->op != FLOE_OP_EQ || e->n_values != 1)
		return floe_error_set(err, FLOE_EINVAL, "'%.*s' is not a value of column '%s' (%s)",
				      (int)n, text, f->name, type_name(d, f->type));
	*out = e->values[0];
	return floe_value_own(out, &d->a) ? floe_error_oom(err) : FLOE_OK;
}

static bool numeric(floe_type_id t)
{
	return t == FLOE_T_INT || t == FLOE_T_LONG || t == FLOE_T_FLOAT || t == FLOE_T_DOUBLE;
}

static int parse_assign(dml *d, const floe_dml_set *s, assign *as, floe_error *err)
{
	int rc;
	memset(as, 0, sizeof(*as));
	rc = find_col(d, s->column, strlen(s->column), &as->col);
	if (rc)
		return floe_error_set(err, FLOE_EINVAL, "--set: no column '%s' in the table",
				      s->column);
	as->field = &d->schema->root->fields[as->col];
	const floe_type *ft = as->field->type;
	if (ft->id == FLOE_T_STRUCT || ft->id == FLOE_T_LIST || ft->id == FLOE_T_MAP ||
	    ft->id == FLOE_T_VARIANT || ft->id == FLOE_T_UNKNOWN || ft->id == FLOE_T_GEOMETRY ||
	    ft->id == FLOE_T_GEOGRAPHY)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "--set %s: only columns of primitive types can be set",
				      as->field->name);
	const char *x = s->expr;
	size_t n = strlen(x), i = 0;
	const char *tp[2];
	size_t tn[2];
	bool ident[2];
	if ((rc = scan_term(x, n, &i, &tp[0], &tn[0], &ident[0], err)))
		return floe_error_prefix(err, rc, "--set %s: ", s->column);
	while (i < n && x[i] == ' ')
		i++;
	if (i < n) {
		if (x[i] != '+' && x[i] != '-' && x[i] != '*')
			return floe_error_set(err, FLOE_EINVAL,
					      "--set %s: expected +, - or * at %zu of '%s'", s->column,
					      i, x);
		as->op = x[i++];
		if ((rc = scan_term(x, n, &i, &tp[1], &tn[1], &ident[1], err)))
			return floe_error_prefix(err, rc, "--set %s: ", s->column);
		while (i < n && x[i] == ' ')
			i++;
		if (i < n)
			return floe_error_set(err, FLOE_EINVAL,
					      "--set %s: unexpected text at %zu of '%s' (one operator "
					      "at most)",
					      s->column, i, x);
	}
	term *ts[2] = {&as->a, &as->b};
	int ctx = as->col; /* literals take the type of the column beside them */
	for (int k = 0; k < (as->op ? 2 : 1); k++)
		if (ident[k]) {
			if (find_col(d, tp[k], tn[k], &ts[k]->col))
				return floe_error_set(err, FLOE_EINVAL,
						      "--set %s: no column '%.*s' in the table",
						      s->column, (int)tn[k], tp[k]);
			ts[k]->kind = 1;
			ctx = ts[k]->col;
		}
	for (int k = 0; k < (as->op ? 2 : 1); k++)
		if (!ident[k]) {
			ts[k]->kind = 2;
			if ((rc = bind_literal(d, as->op ? ctx : as->col, tp[k], tn[k], &ts[k]->lit, err)))
				return floe_error_prefix(err, rc, "--set %s: ", s->column);
			if (ts[k]->lit.is_null)
				ts[k]->kind = 0;
		}
	const floe_type *ctype = d->schema->root->fields[ctx].type;
	if (as->op) {
		if (!numeric(ctype->id))
			return floe_error_set(err, FLOE_EINVAL,
					      "--set %s: %c needs int, long, float or double operands "
					      "('%s' is %s)",
					      s->column, as->op, d->schema->root->fields[ctx].name,
					      type_name(d, ctype));
		for (int k = 0; k < 2; k++)
			if (ts[k]->kind == 1 &&
			    d->schema->root->fields[ts[k]->col].type->id != ctype->id)
				return floe_error_set(err, FLOE_EINVAL,
						      "--set %s: both operands must have one type",
						      s->column);
		as->calc = ctype;
	} else {
		as->calc = ft;
		if (as->a.kind == 1 &&
		    !floe_type_equal(d->schema->root->fields[as->a.col].type, ft))
			return floe_error_set(err, FLOE_EINVAL,
					      "--set %s: column '%s' is %s, not %s", s->column,
					      d->schema->root->fields[as->a.col].name,
					      type_name(d, d->schema->root->fields[as->a.col].type),
					      type_name(d, ft));
	}
	bool widen = (as->calc->id == FLOE_T_INT && ft->id == FLOE_T_LONG) ||
		     (as->calc->id == FLOE_T_FLOAT && ft->id == FLOE_T_DOUBLE);
	if (as->calc->id != ft->id && !widen)
		return floe_error_set(err, FLOE_EINVAL, "--set %s: the value is %s, the column %s",
				      s->column, type_name(d, as->calc), type_name(d, ft));
	if (as->field->required && !as->op && as->a.kind == 0)
		return floe_error_set(err, FLOE_EINVAL, "--set %s: the column is required (NOT NULL)",
				      s->column);
	return FLOE_OK;
}

static void term_value(floe_value *v, const dml *d, const term *t, const struct ArrowArray *b,
		       int64_t r)
{
	if (t->kind == 0) {
		*v = floe_value_null(FLOE_T_LONG);
		return;
	}
	if (t->kind == 2) {
		*v = t->lit;
		return;
	}
	const struct ArrowArray *c = b->children[t->col];
	const floe_type *ty = d->schema->root->fields[t->col].type;
	if (!floe_sa_valid(c, r)) {
		*v = floe_value_null(ty->id);
		return;
	}
	floe_sa_value(v, c, ty, r);
}

static int eval_assign(floe_value *out, const dml *d, const assign *as, const struct ArrowArray *b,
		       int64_t r, floe_error *err)
{
	floe_value x, y;
	term_value(&x, d, &as->a, b, r);
	if (!as->op) {
		*out = x;
	} else {
		term_value(&y, d, &as->b, b, r);
		*out = floe_value_null(as->calc->id);
		if (!x.is_null && !y.is_null) {
			out->is_null = false;
			bool ovf = false;
			switch (as->calc->id) {
			case FLOE_T_INT:
				ovf = as->op == '+'   ? __builtin_add_overflow(x.v.i32, y.v.i32, &out->v.i32)
				      : as->op == '-' ? __builtin_sub_overflow(x.v.i32, y.v.i32, &out->v.i32)
						      : __builtin_mul_overflow(x.v.i32, y.v.i32, &out->v.i32);
				break;
			case FLOE_T_LONG:
				ovf = as->op == '+'   ? __builtin_add_overflow(x.v.i64, y.v.i64, &out->v.i64)
				      : as->op == '-' ? __builtin_sub_overflow(x.v.i64, y.v.i64, &out->v.i64)
						      : __builtin_mul_overflow(x.v.i64, y.v.i64, &out->v.i64);
				break;
			case FLOE_T_FLOAT:
				out->v.f32 = as->op == '+'   ? x.v.f32 + y.v.f32
					     : as->op == '-' ? x.v.f32 - y.v.f32
							     : x.v.f32 * y.v.f32;
				break;
			default:
				out->v.f64 = as->op == '+'   ? x.v.f64 + y.v.f64
					     : as->op == '-' ? x.v.f64 - y.v.f64
							     : x.v.f64 * y.v.f64;
				break;
			}
			if (ovf)
				return floe_error_set(err, FLOE_EINVAL, "--set %s: integer overflow",
						      as->field->name);
		}
	}
	/* widening to the column's type */
	if (!out->is_null && as->calc->id == FLOE_T_INT && as->field->type->id == FLOE_T_LONG)
		out->v.i64 = out->v.i32;
	if (!out->is_null && as->calc->id == FLOE_T_FLOAT && as->field->type->id == FLOE_T_DOUBLE)
		out->v.f64 = out->v.f32;
	out->type = as->field->type->id;
	if (out->is_null && as->field->required)
		return floe_error_set(err, FLOE_EINVAL, "--set %s: NULL for a required column",
				      as->field->name);
	return FLOE_OK;
}

static int put_value(stream_col *c, const floe_value *v)
{
	if (v->is_null)
		return stream_col_put_null(c);
	switch (c->kind) {
	case SB_BOOL: return stream_col_put_bool(c, v->v.b);
	case SB_I32: return stream_col_put_i32(c, v->v.i32);
	case SB_I64: return stream_col_put_i64(c, v->v.i64);
	case SB_F32: return stream_col_put_fixed(c, &v->v.f32);
	case SB_F64: return stream_col_put_fixed(c, &v->v.f64);
	case SB_DEC: return stream_col_put_fixed(c, &v->v.dec);
	case SB_FIXED:
		if (v->v.bin.n != c->width)
			return FLOE_EINVAL;
		return stream_col_put_fixed(c, v->v.bin.p);
	case SB_BIN: return stream_col_put_bin(c, v->v.bin.p, v->v.bin.n);
	default: return FLOE_EUNSUPPORTED;
	}
}

/* The lineage columns of new row versions: the target row's _row_id
 * (tgt/tidx; NULL: a new row) and a null _last_updated_sequence_number. */
static int lineage_cols(dml *d, struct ArrowArray *out, const struct ArrowArray *tgt,
			const int64_t *tidx, int64_t n, floe_error *err)
{
	floe_value null = floe_value_null(FLOE_T_LONG);
	const floe_type *lt = floe_type_primitive(FLOE_T_LONG);
	int rc;
	if (tgt)
		rc = floe_arrow_take(out->children[d->nf], d->tschema.children[d->nf],
				     tgt->children[d->nf], tidx, n, err);
	else
		rc = floe_sa_const(out->children[d->nf], lt, &null, n, err);
	if (!rc)
		rc = floe_sa_const(out->children[d->nf + 1], lt, &null, n, err);
	return rc;
}

/* The new versions of rows idx[0..n) of batch b (table columns first). */
static int updated_rows(dml *d, const struct ArrowArray *b, const int64_t *idx, int64_t n,
			floe_error *err)
{
	struct ArrowArray out;
	int rc;
	if ((rc = floe_arrow_array_init(&out, 1, (int64_t)(d->nf + (d->lineage ? 2 : 0)))))
		return floe_error_oom(err);
	out.length = n;
	if (d->lineage)
		rc = lineage_cols(d, &out, b, idx, n, err);
	for (size_t c = 0; c < d->nf && !rc; c++) {
		const assign *as = NULL;
		for (size_t k = 0; k < d->n_set; k++)
			if (d->set[k].col == (int)c)
				as = &d->set[k];
		if (!as) {
			rc = floe_arrow_take(out.children[c], d->tschema.children[c], b->children[c], idx,
					     n, err);
			continue;
		}
		stream_col sc;
		if ((rc = stream_col_init(&sc, as->field->type, as->field->name, as->field->id,
					  !as->field->required, err)))
			break;
		for (int64_t i = 0; i < n && !rc; i++) {
			floe_value v;
			if ((rc = eval_assign(&v, d, as, b, idx[i], err)))
				break;
			if ((rc = put_value(&sc, &v)))
				rc = floe_error_set(err, rc, "--set %s: cannot store the value",
						    as->field->name);
		}
		if (!rc && (rc = stream_col_finish(&sc, out.children[c])))
			rc = floe_error_oom(err);
		stream_col_reset(&sc);
	}
	if (!rc && FLOE_ARRAY_RESERVE(d->rows, d->cap_rows, d->n_rows + 1))
		rc = floe_error_oom(err);
	if (rc) {
		floe_arrow_array_release(&out);
		return rc;
	}
	floe_arrow_array_move(&d->rows[d->n_rows++], &out);
	return FLOE_OK;
}

/* Rows idx[0..n) of b's table columns as new rows; with lineage, the row
 * ids of target rows tidx[0..n) of tgt (NULL: new rows, no id). */
static int take_rows(dml *d, const struct ArrowArray *b, const int64_t *idx, int64_t n,
		     const struct ArrowArray *tgt, const int64_t *tidx, floe_error *err)
{
	struct ArrowArray out;
	int rc;
	if (n == 0)
		return FLOE_OK;
	if ((rc = floe_arrow_array_init(&out, 1, (int64_t)(d->nf + (d->lineage ? 2 : 0)))))
		return floe_error_oom(err);
	out.length = n;
	for (size_t c = 0; c < d->nf && !rc; c++)
		rc = floe_arrow_take(out.children[c], d->tschema.children[c], b->children[c], idx, n,
				     err);
	if (!rc && d->lineage)
		rc = lineage_cols(d, &out, tgt, tidx, n, err);
	if (rc) {
		floe_arrow_array_release(&out);
		return rc;
	}
	if (FLOE_ARRAY_RESERVE(d->rows, d->cap_rows, d->n_rows + 1)) {
		floe_arrow_array_release(&out);
		return floe_error_oom(err);
	}
	floe_arrow_array_move(&d->rows[d->n_rows++], &out);
	return FLOE_OK;
}

/* ---- merge source --------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

static int read_source(dml *d, const char *path, const char *format, floe_error *err)
{
	floe_buf text;
	stream_col root;
	stream_coerce_opts co = {STREAM_EPOCH_MS};
	bool csv;
	int rc;
	if (format && *format)
		csv = strcasecmp(format, "csv") == 0;
	else
		csv = ends_with(path, ".csv");
	if (format && *format && !csv && strcasecmp(format, "json") != 0)
		return floe_error_set(err, FLOE_EINVAL, "merge source format '%s': json or csv",
				      format);
	floe_buf_init(&text, 0);
	if ((rc = floe_io_read_all(d->io, path, &text, MERGE_SOURCE_MAX, err)))
		return floe_error_prefix(err, rc, "merge source '%s': ", path);
	if ((rc = stream_col_init(&root, d->schema->root, NULL, 0, false, err))) {
		floe_buf_reset(&text);
		return rc;
	}
	const char *p = (const char *)text.data, *end = p + text.len;
	size_t line = 0;
	stream_json_dec jd;
	stream_csv_dec cd;
	stream_csv_opts cso = {',', '"', true, NULL, false};
	stream_json_dec_init(&jd, &co);
	stream_csv_dec_init(&cd, &cso, &co);
	bool have_header = false;
	while (p < end && !rc) {
		size_t len;
		const char *rec = p;
		line++;
		if (csv) {
			bool complete;
			len = stream_csv_record_len(p, (size_t)(end - p), '"', &complete);
			p += len;
			while (len && (rec[len - 1] == '\n' || rec[len - 1] == '\r'))
				len--;
		} else {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			len = nl ? (size_t)(nl - p) : (size_t)(end - p);
			p = nl ? nl + 1 : end;
			while (len && rec[len - 1] == '\r')
				len--;
		}
		size_t k = 0;
		while (k < len && (rec[k] == ' ' || rec[k] == '\t'))
			k++;
		if (k == len)
			continue;
		if (csv && !have_header) {
			rc = stream_csv_set_header(&cd, &root, rec, len);
			if (rc == FLOE_EINVAL)
				rc = floe_error_set(err, rc, "merge source '%s' line %zu: %s", path, line,
						    cd.why.msg);
			have_header = true;
			continue;
		}
		rc = csv ? stream_csv_decode(&cd, &root, rec, len)
			 : stream_json_decode(&jd, &root, rec, len);
		if (rc == FLOE_EINVAL)
			rc = floe_error_set(err, rc, "merge source '%s' line %zu: %s", path, line,
					    csv ? cd.why.msg : jd.why.msg);
		else if (rc)
			rc = floe_error_oom(err);
	}
	if (!rc && (rc = stream_col_finish(&root, &d->src)))
		rc = floe_error_oom(err);
	stream_json_dec_reset(&jd);
	stream_csv_dec_reset(&cd);
	stream_col_reset(&root);
	floe_buf_reset(&text);
	return rc;
}

static int index_source(dml *d, floe_error *err)
{
	floe_buf k;
	int rc = FLOE_OK;
	floe_buf_init(&k, 0);
	d->src_matched = floe_calloc((size_t)d->src.length + 1, 1);
	if (!d->src_matched)
		return floe_error_oom(err);
	for (int64_t r = 0; r < d->src.length && !rc; r++) {
		bool has_null, existed;
		uint64_t *slot;
		if (key_of(&k, &d->src, d->schema, d->key_cols, d->n_keys, r, &has_null)) {
			rc = floe_error_oom(err);
			break;
		}
		if (has_null)
			continue; /* never matches: inserted */
		if (floe_hmap_upsert(&d->src_keys, k.data, k.len, &slot, &existed)) {
			rc = floe_error_oom(err);
			break;
		}
		if (existed)
			rc = floe_error_set(err, FLOE_EINVAL,
					    "merge source: rows %lld and %lld have the same key (a "
					    "target row may match one source row only)",
					    (long long)*slot + 1, (long long)r + 1);
		*slot = (uint64_t)r;
	}
	floe_buf_reset(&k);
	return rc;
}

/* ---- finding the affected rows -------------------------------------------------------- */

static int note(dml *d, const struct ArrowArray *b, int64_t r, floe_error *err)
{
	size_t n;
	const char *path = str_at(b->children[d->meta], r, &n);
	uint64_t *slot;
	bool existed;
	if (floe_hmap_upsert(&d->by_path, path, n, &slot, &existed))
		return floe_error_oom(err);
	if (!existed) {
		if (FLOE_ARRAY_RESERVE(d->tv, d->cap_tv, d->n_tv + 1))
			return floe_error_oom(err);
		touched *tc = &d->tv[d->n_tv];
		memset(tc, 0, sizeof(*tc));
		tc->path = floe_arena_strndup(&d->a, path, n);
		if (!tc->path)
			return floe_error_oom(err);
		*slot = d->n_tv++;
	}
	touched *tc = &d->tv[*slot];
	if (FLOE_ARRAY_RESERVE(tc->pos, tc->cap, tc->n + 1))
		return floe_error_oom(err);
	tc->pos[tc->n++] = pos_at(b->children[d->meta + 1], r);
	return FLOE_OK;
}

static int find(dml *d, floe_error *err)
{
	int64_t *idx = NULL, *src_idx = NULL;
	size_t cap = 0, cap_src = 0;
	floe_buf k;
	int rc = FLOE_OK;
	floe_buf_init(&k, 0);
	for (;;) {
		struct ArrowArray b;
		bool eof;
		if ((rc = floe_scan_next(d->scan, &b, &eof, err)))
			break;
		if (eof)
			break;
		int64_t n = 0;
		if (FLOE_ARRAY_RESERVE(idx, cap, (size_t)b.length + 1) ||
		    FLOE_ARRAY_RESERVE(src_idx, cap_src, (size_t)b.length + 1)) {
			floe_arrow_array_release(&b);
			rc = floe_error_oom(err);
			break;
		}
		for (int64_t r = 0; r < b.length && !rc; r++) {
			if (d->op == OP_MERGE) {
				bool has_null;
				uint64_t si;
				if (key_of(&k, &b, d->schema, d->key_cols, d->n_keys, r, &has_null)) {
					rc = floe_error_oom(err);
					break;
				}
				if (has_null || !floe_hmap_get(&d->src_keys, k.data, k.len, &si))
					continue;
				src_idx[n] = (int64_t)si;
				d->src_matched[si] = 1;
			}
			idx[n++] = r;
			rc = note(d, &b, r, err);
		}
		d->res->rows_deleted += n;
		if (!rc && n && !d->o->dry_run) {
			if (d->op == OP_UPDATE)
				rc = updated_rows(d, &b, idx, n, err);
			else if (d->op == OP_MERGE)
				rc = take_rows(d, &d->src, src_idx, n, &b, idx, err);
		}
		floe_arrow_array_release(&b);
		if (rc)
			break;
	}
	if (!rc && d->op != OP_DELETE)
		d->res->rows_updated = d->res->rows_deleted;
	if (!rc && d->op == OP_MERGE) {
		/* source rows without a match are inserted */
		int64_t n = 0;
		if (FLOE_ARRAY_RESERVE(idx, cap, (size_t)d->src.length + 1))
			rc = floe_error_oom(err);
		for (int64_t r = 0; !rc && r < d->src.length; r++)
			if (!d->src_matched[r])
				idx[n++] = r;
		d->res->rows_inserted = n;
		if (!rc && !d->o->dry_run)
			rc = take_rows(d, &d->src, idx, n, NULL, NULL, err);
	}
	floe_free(idx);
	floe_free(src_idx);
	floe_buf_reset(&k);
	if (rc)
		return rc;
	/* every touched file's plan entry, positions sorted */
	scan_file *const *files;
	size_t nfiles;
	floe_hmap plan;
	floe_hmap_init(&plan);
	floe_scan__plan_files(d->scan, &files, &nfiles);
	for (size_t i = 0; i < nfiles && !rc; i++)
		if (floe_hmap_put_str(&plan, files[i]->path, i))
			rc = floe_error_oom(err);
	for (size_t i = 0; i < d->n_tv && !rc; i++) {
		uint64_t at;
		if (!floe_hmap_get_str(&plan, d->tv[i].path, &at)) {
			rc = floe_error_set(err, FLOE_ECORRUPT, "'%s' was read but not planned",
					    d->tv[i].path);
			break;
		}
		d->tv[i].f = files[at];
		qsort(d->tv[i].pos, d->tv[i].n, sizeof(int64_t), cmp_i64);
	}
	floe_hmap_reset(&plan);
	if (rc)
		return rc;
	if (d->n_tv > 1)
		qsort(d->tv, d->n_tv, sizeof(*d->tv), cmp_touched);
	d->res->files = floe_calloc(d->n_tv + 1, sizeof(*d->res->files));
	if (!d->res->files)
		return floe_error_oom(err);
	for (size_t i = 0; i < d->n_tv; i++) {
		floe_dml_file *f = &d->res->files[d->res->n_files];
		if (!(f->path = floe_strdup(d->tv[i].f->raw_path)))
			return floe_error_oom(err);
		f->record_count = d->tv[i].f->record_count;
		f->rows = (int64_t)d->tv[i].n;
		d->res->n_files++;
	}
	return FLOE_OK;
}

/* The scans' columns: the table's, the lineage fields (v3), _file, _pos. */
static int scan_columns(dml *d, floe_scan_opts *so, floe_error *err)
{
	const char **cols = floe_arena_calloc(&d->a, d->meta + 2, sizeof(*cols));
	if (!cols)
		return floe_error_oom(err);
	for (size_t i = 0; i < d->nf; i++)
		cols[i] = d->schema->root->fields[i].name;
	if (d->lineage) {
		cols[d->nf] = "_row_id";
		cols[d->nf + 1] = "_last_updated_sequence_number";
	}
	cols[d->meta] = "_file";
	cols[d->meta + 1] = "_pos";
	so->columns = cols;
	so->n_columns = d->meta + 2;
	return FLOE_OK;
}

/* ---- writing ---------------------------------------------------------------------------- */

static int write_new_rows(dml *d, floe_task_writer *tw, floe_error *err)
{
	for (size_t i = 0; i < d->n_rows; i++) {
		int rc = floe_task_writer_write(tw, &d->rows[i], &d->tschema, err);
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

/* merge-on-read: position deletes / DVs and the new rows. */
static int write_mor(dml *d, floe_data_file **files, size_t *n, floe_data_file **repl,
		     size_t *n_repl, floe_error *err)
{
	floe_delete_writer_opts dwo = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_task_writer_opts two = FLOE_TASK_WRITER_OPTS_INIT;
	floe_file_namer *namer = NULL;
	floe_pos_delete_writer *pw = NULL;
	floe_dv_writer *dw = NULL;
	floe_task_writer *tw = NULL;
	int rc;
	if ((rc = floe_file_namer_new(&namer, 0, 0, NULL, err)))
		return rc;
	dwo.namer = namer;
	two.namer = namer;
	bool v3 = d->m->format_version >= 3;
	if (d->n_tv)
		rc = v3 ? floe_dv_writer_new(&dw, d->io, d->m, &d->cfg, &dwo, err)
			: floe_pos_delete_writer_new(&pw, d->io, d->m, &d->cfg, &dwo, err);
	for (size_t i = 0; i < d->n_tv && !rc; i++) {
		touched *tc = &d->tv[i];
		scan_file *f = tc->f;
		if (v3) {
			const scan_file *dv = NULL;
			bool pos_files = false;
			for (size_t k = 0; k < f->n_deletes; k++) {
				if (f->deletes[k]->is_dv)
					dv = f->deletes[k];
				else if (f->deletes[k]->content == FLOE_CONTENT_POSITION_DELETES)
					pos_files = true;
			}
			if (dv) {
				floe_data_file df;
				file_of(&df, dv);
				rc = floe_dv_writer_merge_previous(dw, &df, err);
			} else if (pos_files) {
				/* a DV hides the file's position delete files: fold them in */
				uint64_t *old = NULL;
				size_t n_old = 0;
				rc = floe_scan__positions(d->scan, f, &old, &n_old, err);
				if (!rc)
					rc = floe_dv_writer_merge(dw, f->raw_path, f->spec_id,
								  &f->partition, old, n_old, NULL, err);
				floe_free(old);
			}
			if (!rc)
				rc = floe_dv_writer_delete(dw, f->raw_path, f->spec_id, &f->partition,
							   tc->pos, tc->n, err);
		} else {
			rc = floe_pos_delete_writer_delete(pw, f->raw_path, f->spec_id, &f->partition,
							   tc->pos, tc->n, err);
		}
	}
	if (!rc && d->n_tv)
		rc = v3 ? floe_dv_writer_complete(dw, files, n, repl, n_repl, &d->a, err)
			: floe_pos_delete_writer_complete(pw, files, n, &d->a, err);
	if (!rc && d->n_rows) {
		rc = floe_task_writer_new(&tw, d->io, d->wm ? d->wm : d->m, &d->cfg, &two, err);
		if (!rc)
			rc = write_new_rows(d, tw, err);
		if (!rc)
			rc = floe_task_writer_complete(tw, files, n, &d->a, err);
		if (!rc) {
			floe_task_writer_free(tw);
			tw = NULL;
		}
	}
	floe_task_writer_abort(tw);
	if (rc) {
		floe_dv_writer_abort(dw);
		floe_pos_delete_writer_abort(pw);
	} else {
		floe_dv_writer_free(dw);
		floe_pos_delete_writer_free(pw);
	}
	floe_file_namer_free(namer);
	return rc;
}

/* copy-on-write: the touched files without their affected rows, plus the
 * new rows. *gone gets the delete files to remove. */
static int write_cow(dml *d, floe_data_file **files, size_t *n, floe_data_file **gone,
		     size_t *n_gone, floe_error *err)
{
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	floe_scan *s2 = NULL;
	floe_task_writer_opts two = FLOE_TASK_WRITER_OPTS_INIT;
	floe_task_writer *tw = NULL;
	struct ArrowSchema sch = {0};
	scan_file **sel = NULL;
	int64_t *keep = NULL;
	size_t cap_keep = 0, cap_gone = 0;
	floe_hmap want;
	floe_imap refs, dropped;
	int rc = FLOE_OK;
	floe_hmap_init(&want);
	floe_imap_init(&refs);
	floe_imap_init(&dropped);
	so.snapshot_id = d->base_id;
	if ((rc = scan_columns(d, &so, err)) || (rc = floe_scan_open(&d->scan2, d->rt, &so, err)) ||
	    (rc = floe_scan_arrow_schema((s2 = d->scan2), &sch, err)))
		goto done;
	for (size_t i = 0; i < d->n_tv && !rc; i++)
		if (floe_hmap_put_str(&want, d->tv[i].f->raw_path, i) < 0)
			rc = floe_error_oom(err);
	scan_file *const *pf;
	size_t npf;
	floe_scan__plan_files(s2, &pf, &npf);
	sel = floe_calloc(d->n_tv + 1, sizeof(*sel));
	if (!sel)
		rc = floe_error_oom(err);
	size_t n_sel = 0, n_found = 0;
	/* delete files: references by all planned files, and by the removed ones */
	for (size_t i = 0; i < npf && !rc; i++) {
		uint64_t at;
		bool mine = floe_hmap_get_str(&want, pf[i]->raw_path, &at);
		if (mine) {
			n_found++;
			/* every row goes: removed without reading it */
			if (pf[i]->n_deletes || (int64_t)d->tv[at].n != pf[i]->record_count)
				sel[n_sel++] = pf[i];
		}
		for (size_t k = 0; k < pf[i]->n_deletes && !rc; k++) {
			int64_t key = (int64_t)(uintptr_t)pf[i]->deletes[k];
			uint64_t c = 0, mc = 0;
			floe_imap_get(&refs, key, &c);
			if (floe_imap_put(&refs, key, c + 1))
				rc = floe_error_oom(err);
			if (!rc && mine) {
				floe_imap_get(&dropped, key, &mc);
				if (floe_imap_put(&dropped, key, mc + 1))
					rc = floe_error_oom(err);
			}
		}
	}
	if (!rc && n_found != d->n_tv)
		rc = floe_error_set(err, FLOE_ECONFLICT, "the table changed while reading it");
	if (!rc)
		rc = floe_scan__select(s2, sel, n_sel, err);
	if (!rc)
		rc = floe_task_writer_new(&tw, d->io, d->wm ? d->wm : d->m, &d->cfg, &two, err);
	size_t nw = d->meta; /* the columns written */
	struct ArrowSchema tsch = sch;
	tsch.n_children = (int64_t)nw;
	while (!rc) {
		struct ArrowArray b;
		bool eof;
		if ((rc = floe_scan_next(s2, &b, &eof, err)) || eof)
			break;
		int64_t kn = 0;
		if (FLOE_ARRAY_RESERVE(keep, cap_keep, (size_t)b.length + 1))
			rc = floe_error_oom(err);
		const touched *cur = NULL;
		const char *cur_path = NULL;
		size_t cur_len = 0;
		for (int64_t r = 0; r < b.length && !rc; r++) {
			size_t pn;
			const char *p = str_at(b.children[d->meta], r, &pn);
			if (!cur || pn != cur_len || memcmp(p, cur_path, pn) != 0) {
				cur = NULL;
				for (size_t i = 0; i < d->n_tv; i++)
					if (strlen(d->tv[i].path) == pn &&
					    memcmp(d->tv[i].path, p, pn) == 0)
						cur = &d->tv[i];
				cur_path = p;
				cur_len = pn;
			}
			int64_t pos = pos_at(b.children[d->meta + 1], r);
			if (cur && bsearch(&pos, cur->pos, cur->n, sizeof(int64_t), cmp_i64))
				continue;
			keep[kn++] = r;
		}
		d->res->rows_rewritten += kn;
		if (!rc && kn) {
			struct ArrowArray part, v;
			if (kn == b.length) {
				v = top_view(&b, nw);
				rc = floe_task_writer_write(tw, &v, &tsch, err);
			} else if (!(rc = floe_arrow_take(&part, &sch, &b, keep, kn, err))) {
				v = top_view(&part, nw);
				rc = floe_task_writer_write(tw, &v, &tsch, err);
				floe_arrow_array_release(&part);
			}
		}
		floe_arrow_array_release(&b);
	}
	if (!rc)
		rc = write_new_rows(d, tw, err);
	if (!rc)
		rc = floe_task_writer_complete(tw, files, n, &d->a, err);
	if (!rc) {
		floe_task_writer_free(tw);
		tw = NULL;
	}
	/* delete files whose every target is removed */
	for (size_t i = 0; i < npf && !rc; i++)
		for (size_t k = 0; k < pf[i]->n_deletes && !rc; k++) {
			scan_file *df = pf[i]->deletes[k];
			int64_t key = (int64_t)(uintptr_t)df;
			uint64_t total = 0, mine = 0;
			floe_imap_get(&refs, key, &total);
			if (!floe_imap_get(&dropped, key, &mine) || mine != total)
				continue;
			if (floe_imap_put(&dropped, key, UINT64_MAX)) { /* once */
				rc = floe_error_oom(err);
				break;
			}
			if (FLOE_ARRAY_RESERVE(*gone, cap_gone, *n_gone + 1)) {
				rc = floe_error_oom(err);
				break;
			}
			file_of(&(*gone)[(*n_gone)++], df);
		}
done:
	floe_task_writer_abort(tw);
	floe_arrow_schema_release(&sch);
	floe_free(sel);
	floe_free(keep);
	floe_hmap_reset(&want);
	floe_imap_reset(&refs);
	floe_imap_reset(&dropped);
	return rc;
}

/* ---- conflict detection -------------------------------------------------------------- */

typedef struct check_ctx {
	dml *d;
	int64_t snapshot_id;
	const floe_metadata *m;
	const char *conflict;
	int why; /* 1 data file, 2 delete file */
	floe_arena *a;
} check_ctx;

static bool touches_partition(const dml *d, int32_t spec_id, const floe_partition *p)
{
	for (size_t i = 0; i < d->n_tv; i++)
		if (d->tv[i].f->spec_id == spec_id && floe_partition_equal(&d->tv[i].f->partition, p))
			return true;
	return false;
}

static bool may_match(check_ctx *c, const floe_data_file *f)
{
	dml *d = c->d;
	if (!d->cond)
		return true;
	const floe_partition_spec *spec = floe_metadata_spec(c->m, f->spec_id);
	floe_expr *proj;
	if (spec && spec->n_fields &&
	    floe_expr_project(&proj, c->a, d->cond, spec, d->schema, NULL) == FLOE_OK &&
	    !floe_eval_partition(proj, &f->partition))
		return false;
	floe_file_metrics fm = {f->record_count,    f->value_counts,      f->n_value_counts,
				f->null_value_counts, f->n_null_value_counts, f->nan_value_counts,
				f->n_nan_value_counts, f->lower_bounds,      f->n_lower_bounds,
				f->upper_bounds,     f->n_upper_bounds};
	return floe_eval_metrics(d->cond, &fm);
}

static int check_entry(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	check_ctx *c = payload;
	dml *d = c->d;
	const floe_data_file *f = &e->file;
	(void)mf;
	if (e->status != FLOE_ENTRY_ADDED || e->snapshot_id != c->snapshot_id)
		return 0;
	if (f->content == FLOE_CONTENT_DATA) {
		if (d->serializable && may_match(c, f)) {
			c->conflict = floe_arena_strdup(c->a, f->file_path);
			c->why = 1;
			return 1;
		}
		return 0;
	}
	if (!d->mor)
		return 0; /* copy-on-write: the producer checks deletes of removed files */
	bool hit = false;
	if (f->content == FLOE_CONTENT_POSITION_DELETES && f->referenced_data_file)
		hit = floe_hmap_has(&d->by_path, f->referenced_data_file,
				    strlen(f->referenced_data_file));
	else if (f->content == FLOE_CONTENT_POSITION_DELETES)
		hit = touches_partition(d, f->spec_id, &f->partition);
	else if (f->content == FLOE_CONTENT_EQUALITY_DELETES) {
		const floe_partition_spec *spec = floe_metadata_spec(c->m, f->spec_id);
		hit = !spec || spec->n_fields == 0 || touches_partition(d, f->spec_id, &f->partition);
	}
	if (hit) {
		c->conflict = floe_arena_strdup(c->a, f->file_path);
		c->why = 2;
		return 1;
	}
	return 0;
}

/* Every attempt's base (floe_op_set_check): the snapshots from head back to
 * the one this operation read are the concurrent ones. */
static int check_cb(void *payload, const floe_metadata *m, const floe_snapshot *head,
		    floe_error *err)
{
	dml *d = payload;
	floe_table *t = d->t;
	int64_t from = d->base_id;
	floe_arena a;
	int rc = FLOE_OK;
	floe_arena_init(&a, 4096);
	for (const floe_snapshot *s = head;
	     s && s->snapshot_id != from && s->snapshot_id != d->checked_head && !rc;
	     s = floe_metadata_parent(m, s)) {
		const char *operation = floe_snapshot_summary(s, "operation");
		if (!d->serializable && operation && strcmp(operation, "append") == 0)
			continue;
		floe_manifest_file *mfs = NULL;
		size_t n = 0;
		check_ctx c = {d, s->snapshot_id, m, NULL, 0, &a};
		rc = floe_table_manifests(&mfs, &n, &a, t, s, err);
		for (size_t i = 0; i < n && !rc; i++) {
			if (mfs[i].added_snapshot_id >= 0 && mfs[i].added_snapshot_id != s->snapshot_id)
				continue;
			rc = floe_table_walk_manifest(t, &mfs[i], FLOE_WALK_DATA | FLOE_WALK_DELETES,
						      check_entry, &c, err);
		}
		if (rc == 1 && c.conflict && c.why == 1)
			rc = floe_error_set(err, FLOE_ECONFLICT,
					    "conflict: snapshot %lld, committed after snapshot %lld "
					    "that this %s read, added data file '%s', which may hold "
					    "rows %s (serializable isolation; "
					    "write.%s.isolation-level=snapshot allows it): run it again",
					    (long long)s->snapshot_id, (long long)d->base_id,
					    OP_NAME[d->op], c.conflict,
					    d->cond ? "the condition matches" : "the merge joins",
					    OP_NAME[d->op]);
		else if (rc == 1 && c.conflict)
			rc = floe_error_set(err, FLOE_ECONFLICT,
					    "conflict: snapshot %lld, committed after snapshot %lld "
					    "that this %s read, added delete file '%s' for data files "
					    "it changes (a concurrent delete of the same rows): run it "
					    "again",
					    (long long)s->snapshot_id, (long long)d->base_id,
					    OP_NAME[d->op], c.conflict);
		else if (rc == 1)
			rc = floe_error_oom(err);
	}
	if (!rc)
		d->checked_head = head ? head->snapshot_id : -1;
	floe_arena_reset(&a);
	return rc;
}

/* ---- the commit -------------------------------------------------------------------------- */

static void drop_files(dml *d, floe_data_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		floe_io_remove_quiet(d->io, f[i].file_path);
}

static int commit(dml *d, floe_error *err)
{
	floe_data_file *files = NULL, *other = NULL;
	size_t n = 0, n_other = 0;
	floe_snapshot_op *op = NULL;
	int64_t sid = -1;
	int rc;
	rc = d->mor ? write_mor(d, &files, &n, &other, &n_other, err)
		    : write_cow(d, &files, &n, &other, &n_other, err);
	if (rc)
		goto fail;
	size_t n_data = 0, n_del = 0;
	for (size_t i = 0; i < n; i++) {
		if (files[i].content == FLOE_CONTENT_DATA)
			n_data++;
		else
			n_del++;
	}
	floe_op_kind kind = d->mor ? FLOE_OP_ROW_DELTA : n_data ? FLOE_OP_OVERWRITE : FLOE_OP_DELETE;
	if ((rc = floe_op_new(&op, d->t, kind, NULL, err)))
		goto fail;
	for (size_t i = 0; i < n && !rc; i++)
		rc = floe_op_add_file(op, &files[i], err);
	for (size_t i = 0; i < n_other && !rc; i++)
		rc = floe_op_remove_file(op, &other[i], err);
	for (size_t i = 0; !d->mor && i < d->n_tv && !rc; i++) {
		floe_data_file df;
		file_of(&df, d->tv[i].f);
		rc = floe_op_remove_file(op, &df, err);
	}
	if (!rc)
		rc = floe_op_set_summary(op, "floe.operation", OP_NAME[d->op], err);
	if (rc)
		goto fail;
	floe_op_validate_from(op, d->base_id);
	floe_op_set_check(op, check_cb, d);
	if (floe_dml__before_commit)
		floe_dml__before_commit(floe_dml__before_commit_payload);
	d->checked_head = -2;
	rc = floe_op_commit(op, &sid, err);
	if (rc == FLOE_ECOMMITUNKNOWN)
		goto done; /* the files may be referenced: keep them */
	if (rc)
		goto fail;
	d->res->snapshot_id = sid;
	d->res->data_files_added = n_data;
	d->res->delete_files_added = n_del;
	if (d->mor) {
		d->res->delete_files_removed = n_other;
	} else {
		d->res->data_files_removed = d->n_tv;
		d->res->delete_files_removed = n_other;
	}
	goto done;
fail:
	drop_files(d, files, n);
done:
	floe_op_free(op);
	floe_free(files);
	floe_free(other);
	return rc;
}

/* ---- the engine --------------------------------------------------------------------------- */

static int run(dml *d, const char *where, floe_error *err)
{
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	int rc;
	d->res->base_snapshot_id = -1;
	d->res->snapshot_id = -1;
	if (!floe_table_catalog(d->t))
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "%s needs a table opened through a catalog", OP_NAME[d->op]);
	if (!d->rt && (rc = floe_table_load(&d->rt, floe_table_catalog(d->t),
					    floe_table_namespace(d->t), floe_table_name(d->t), err)))
		return rc;
	d->m = floe_table_metadata(d->rt);
	d->schema = floe_metadata_current_schema(d->m);
	d->nf = d->schema->root->n_fields;
	d->io = floe_table_io(d->rt);
	d->lineage = d->m->format_version >= 3;
	d->meta = d->nf + (d->lineage ? 2 : 0);
	if ((rc = settings(d, err)) || (rc = floe_write_config_from(&d->cfg, &d->a, d->m, err)) ||
	    (d->lineage && (rc = lineage_metadata(&d->wm, d->m, &d->a, err))) ||
	    (rc = floe_iceberg_arrow_schema(&d->tschema,
					    d->wm ? floe_metadata_current_schema(d->wm) : d->schema,
					    err)))
		return rc;
	if (where) {
		if ((rc = floe_expr_compile(&d->cond, &d->a, where, d->schema, !d->o->ignore_case,
					    err)))
			return floe_error_prefix(err, rc, "--where: ");
		if (floe_expr_is_true(d->cond))
			d->cond = NULL;
	}
	const floe_snapshot *base = floe_metadata_current_snapshot(d->m);
	if (!base && d->op != OP_MERGE)
		return FLOE_OK; /* an empty table: nothing matches */
	d->base_id = base ? base->snapshot_id : FLOE_NO_SNAPSHOT;
	d->res->base_snapshot_id = d->base_id;
	if (base) {
		if ((rc = scan_columns(d, &so, err)))
			return rc;
		so.where = where;
		so.snapshot_id = d->base_id;
		so.ignore_case = d->o->ignore_case;
		if ((rc = floe_scan_open(&d->scan, d->rt, &so, err)))
			return floe_error_prefix(err, rc, "--where: ");
		if ((rc = find(d, err)))
			return rc;
	} else {
		/* a merge into an empty table inserts everything */
		int64_t *idx = floe_calloc((size_t)d->src.length + 1, sizeof(int64_t));
		if (!idx)
			return floe_error_oom(err);
		for (int64_t r = 0; r < d->src.length; r++)
			idx[r] = r;
		d->res->rows_inserted = d->src.length;
		rc = d->o->dry_run ? FLOE_OK
				   : take_rows(d, &d->src, idx, d->src.length, NULL, NULL, err);
		floe_free(idx);
		if (rc)
			return rc;
		d->res->files = floe_calloc(1, sizeof(*d->res->files));
		if (!d->res->files)
			return floe_error_oom(err);
	}
	if (d->o->dry_run || (d->n_tv == 0 && d->n_rows == 0))
		return FLOE_OK; /* nothing to change: no commit */
	if (d->n_tv == 0 && d->op == OP_MERGE)
		d->mor = true; /* inserts only: a row delta with data (an append) */
	return commit(d, err);
}

static void dml_init(dml *d, int op, floe_table *t, const floe_dml_opts *o, floe_dml_result *res)
{
	memset(d, 0, sizeof(*d));
	memset(res, 0, sizeof(*res));
	d->op = op;
	d->t = t;
	d->o = o;
	d->res = res;
	floe_arena_init(&d->a, 65536);
	floe_hmap_init(&d->by_path);
	floe_hmap_init(&d->src_keys);
	res->base_snapshot_id = -1;
	res->snapshot_id = -1;
}

static void dml_reset(dml *d)
{
	for (size_t i = 0; i < d->n_tv; i++)
		floe_free(d->tv[i].pos);
	floe_free(d->tv);
	for (size_t i = 0; i < d->n_rows; i++)
		floe_arrow_array_release(&d->rows[i]);
	floe_free(d->rows);
	floe_free(d->set);
	floe_free(d->key_cols);
	floe_free(d->src_matched);
	floe_arrow_array_release(&d->src);
	floe_arrow_schema_release(&d->tschema);
	floe_scan_free(d->scan);
	floe_scan_free(d->scan2);
	floe_metadata_free(d->wm);
	floe_table_free(d->rt);
	floe_hmap_reset(&d->by_path);
	floe_hmap_reset(&d->src_keys);
	floe_arena_reset(&d->a);
}

void floe_dml_result_reset(floe_dml_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->n_files; i++)
		floe_free(res->files[i].path);
	floe_free(res->files);
	res->files = NULL;
	res->n_files = 0;
}

static int check_where(const char *where, floe_error *err)
{
	if (!where || !*where)
		return floe_error_set(err, FLOE_EINVAL,
				      "a condition is required (--where 'true' changes every row)");
	return FLOE_OK;
}

int floe_dml_delete(floe_table *t, const char *where, const floe_dml_opts *opts,
		    floe_dml_result *res, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_dml_opts", "FLOE_DML_OPTS_INIT", err);
	floe_dml_opts dflt = FLOE_DML_OPTS_INIT;
	dml d;
	int rc;
	dml_init(&d, OP_DELETE, t, opts ? opts : &dflt, res);
	if (!(rc = check_where(where, err)))
		rc = run(&d, where, err);
	dml_reset(&d);
	if (rc)
		floe_dml_result_reset(res);
	return floe_error_prefix(err, rc, "delete from %s.%s: ", floe_table_namespace(t),
				 floe_table_name(t));
}

int floe_dml_update(floe_table *t, const floe_dml_set *set, size_t n_set, const char *where,
		    const floe_dml_opts *opts, floe_dml_result *res, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_dml_opts", "FLOE_DML_OPTS_INIT", err);
	floe_dml_opts dflt = FLOE_DML_OPTS_INIT;
	dml d;
	int rc;
	dml_init(&d, OP_UPDATE, t, opts ? opts : &dflt, res);
	if (!(rc = check_where(where, err)) && n_set == 0)
		rc = floe_error_set(err, FLOE_EINVAL, "an update needs at least one --set col=expr");
	if (!rc && !floe_table_catalog(t))
		rc = floe_error_set(err, FLOE_EUNSUPPORTED,
				    "update needs a table opened through a catalog");
	if (!rc) {
		/* the read handle first: the assignments bind to its schema */
		rc = floe_table_load(&d.rt, floe_table_catalog(t), floe_table_namespace(t),
				     floe_table_name(t), err);
	}
	if (!rc) {
		d.m = floe_table_metadata(d.rt);
		d.schema = floe_metadata_current_schema(d.m);
		d.nf = d.schema->root->n_fields;
		d.set = floe_calloc(n_set, sizeof(*d.set));
		if (!d.set)
			rc = floe_error_oom(err);
		for (size_t i = 0; i < n_set && !rc; i++) {
			for (size_t k = 0; k < i && !rc; k++)
				if (strcmp(set[k].column, set[i].column) == 0)
					rc = floe_error_set(err, FLOE_EINVAL, "--set %s given twice",
							    set[i].column);
			if (!rc && !(rc = parse_assign(&d, &set[i], &d.set[i], err)))
				d.n_set++;
		}
	}
	if (!rc)
		rc = run(&d, where, err);
	dml_reset(&d);
	if (rc)
		floe_dml_result_reset(res);
	return floe_error_prefix(err, rc, "update %s.%s: ", floe_table_namespace(t),
				 floe_table_name(t));
}

int floe_dml_merge(floe_table *t, const char *source_path, const char *format,
		   const char *const *on, size_t n_on, const floe_dml_opts *opts,
		   floe_dml_result *res, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_dml_opts", "FLOE_DML_OPTS_INIT", err);
	floe_dml_opts dflt = FLOE_DML_OPTS_INIT;
	dml d;
	int rc = FLOE_OK;
	dml_init(&d, OP_MERGE, t, opts ? opts : &dflt, res);
	if (n_on == 0)
		rc = floe_error_set(err, FLOE_EINVAL, "a merge needs its key columns (--on a,b)");
	else if (!floe_table_catalog(t))
		rc = floe_error_set(err, FLOE_EUNSUPPORTED,
				    "merge needs a table opened through a catalog");
	if (!rc)
		rc = floe_table_load(&d.rt, floe_table_catalog(t), floe_table_namespace(t),
				     floe_table_name(t), err);
	if (!rc) {
		d.m = floe_table_metadata(d.rt);
		d.schema = floe_metadata_current_schema(d.m);
		d.nf = d.schema->root->n_fields;
		d.io = floe_table_io(d.rt);
		d.key_cols = floe_calloc(n_on, sizeof(*d.key_cols));
		if (!d.key_cols)
			rc = floe_error_oom(err);
		for (size_t i = 0; i < n_on && !rc; i++) {
			int c;
			if (find_col(&d, on[i], strlen(on[i]), &c))
				rc = floe_error_set(err, FLOE_EINVAL, "--on: no column '%s' in the table",
						    on[i]);
			else if (d.schema->root->fields[c].type->id >= FLOE_T_UNKNOWN)
				rc = floe_error_set(err, FLOE_EINVAL,
						    "--on %s: key columns must be primitive", on[i]);
			else
				d.key_cols[d.n_keys++] = c;
		}
		if (!rc)
			rc = read_source(&d, source_path, format, err);
		if (!rc)
			rc = index_source(&d, err);
	}
	if (!rc)
		rc = run(&d, NULL, err);
	dml_reset(&d);
	if (rc)
		floe_dml_result_reset(res);
	return floe_error_prefix(err, rc, "merge into %s.%s: ", floe_table_namespace(t),
				 floe_table_name(t));
}

int floe_dml__try_set(const floe_schema *s, const floe_dml_set *set,
		      const struct ArrowArray *batch, floe_error *err)
{
	floe_dml_opts o = FLOE_DML_OPTS_INIT;
	floe_dml_result res;
	dml d;
	assign as;
	int rc;
	int64_t *idx = NULL;
	dml_init(&d, OP_UPDATE, NULL, &o, &res);
	d.schema = s;
	d.nf = s->root->n_fields;
	if (!(rc = parse_assign(&d, set, &as, err)) &&
	    !(rc = floe_iceberg_arrow_schema(&d.tschema, s, err))) {
		d.set = &as;
		d.n_set = 1;
		idx = floe_calloc((size_t)batch->length + 1, sizeof(*idx));
		if (!idx)
			rc = floe_error_oom(err);
		for (int64_t i = 0; !rc && i < batch->length; i++)
			idx[i] = i;
		if (!rc)
			rc = updated_rows(&d, batch, idx, batch->length, err);
		d.set = NULL;
	}
	floe_free(idx);
	dml_reset(&d);
	return rc;
}

const char *floe_dml_mode_name(floe_dml_mode m)
{
	return m == FLOE_DML_MERGE_ON_READ ? "merge-on-read" : "copy-on-write";
}

const char *floe_dml_isolation_name(floe_dml_isolation i)
{
	return i == FLOE_DML_SNAPSHOT ? "snapshot" : "serializable";
}
