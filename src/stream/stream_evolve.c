/*
 * stream_evolve.c — unknown-fields: evolve. A JSON record that does not fit
 * its table (a member the schema lacks, a number wider than its column, an
 * absent or null required field) has its fields inferred, guided by the
 * table's schema, and merged into it (src/iceberg/schema_evolve.c); when
 * that changes the schema the record is held back and the run ends.
 *
 * DESIGN (exactly-once): the schema update is committed before any data
 * that needs it, and no checkpoint commits data read after such a record:
 * the task sets p->evolve_req while it decodes the record's block, before
 * the block's unit ends, so the barrier of the checkpoint that would hold
 * it sees the flag and drops the checkpoint (its files are orphans). At the
 * end of the run the committer is idle; each table's update is committed,
 * fenced on the pipeline's newest snapshot as its data commits are (a
 * replaced process changes nothing), and the caller opens the pipeline
 * again, which resumes from the tables' committed positions and decodes the
 * replayed records with the new schema. A crash anywhere in between is a
 * resume: the update is idempotent (a table that holds it already has
 * nothing to commit) and the data was never committed.
 *
 * Inference: a JSON integer is an int (a long past int32), a fraction a
 * double, true/false a boolean, a string a string, an object a struct, an
 * array a list (of its elements' merged type); null and [] tell nothing
 * about a new field (it is not added). Against an existing column a value
 * is read as that column reads it: a number into a decimal column counts
 * its integer digits (the precision widens, the scale stays), into a float
 * column a value past float's range asks for double, into an int column a
 * value past int32 asks for long; a string keeps the column's type (the
 * decoder coerces strings), so a string that does not parse is a dead
 * letter as before.
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "iceberg/schema_evolve.h"
#include "json/json.h"
#include "stream/stream_runtime.h"
#include "table/create.h"
#include "util/log.h"

#define EVO_MAX_RECORDS 256
#define EVO_MAX_BYTES ((size_t)16 << 20)

static const floe_type *infer(floe_arena *a, const floe_json *v, const floe_type *c);

static const floe_field *member_of(const floe_type *st, const char *name, size_t n)
{
	if (!st || st->id != FLOE_T_STRUCT)
		return NULL;
	for (size_t i = 0; i < st->n_fields; i++)
		if (strlen(st->fields[i].name) == n && !strncasecmp(st->fields[i].name, name, n))
			return &st->fields[i];
	return NULL;
}

static const floe_type *infer_number(floe_arena *a, const floe_json *v, const floe_type *c)
{
	if (c && c->id == FLOE_T_DECIMAL) {
		/* integer digits of the text decide the precision */
		const char *p = v->s;
		size_t n = v->len, i = 0, digits = 0;
		if (i < n && (p[i] == '-' || p[i] == '+'))
			i++;
		while (i < n && p[i] == '0')
			i++;
		while (i < n && p[i] >= '0' && p[i] <= '9') {
			digits++;
			i++;
		}
		if (memchr(p, 'e', n) || memchr(p, 'E', n))
			return c; /* exponent notation: the decoder decides */
		if (digits > 38)
			digits = 39; /* refused by the merge, naming the column */
		return floe_type_decimal(a, (int32_t)digits + c->scale, c->scale);
	}
	if (c && c->id == FLOE_T_FLOAT)
		return isfinite(v->d) && fabs(v->d) > FLT_MAX ? floe_type_primitive(FLOE_T_DOUBLE) : c;
	if (c && (c->id == FLOE_T_DOUBLE || c->id == FLOE_T_STRING))
		return c;
	if (c && c->id != FLOE_T_INT && c->id != FLOE_T_LONG)
		return c; /* epoch numbers into temporal columns: the decoder decides */
	if (v->is_int)
		return floe_type_primitive(v->i >= INT32_MIN && v->i <= INT32_MAX ? FLOE_T_INT
										 : FLOE_T_LONG);
	return floe_type_primitive(FLOE_T_DOUBLE);
}

static const floe_type *infer_struct(floe_arena *a, const floe_json *v, const floe_type *c)
{
	floe_type *t = floe_arena_calloc(a, 1, sizeof(*t));
	floe_field *fs = floe_arena_calloc(a, v->len ? v->len : 1, sizeof(*fs));
	size_t n = 0;
	if (!t || !fs)
		return NULL;
	t->id = FLOE_T_STRUCT;
	for (const floe_json *m = v->child; m; m = m->next) {
		const floe_field *cf = member_of(c, m->key, m->key_len);
		const floe_type *mt;
		bool null = m->type == FLOE_JSON_NULL;
		if (null || (m->type == FLOE_JSON_ARRAY && !m->child)) {
			if (!cf)
				continue; /* tells nothing about a new field */
			mt = cf->type;
		} else if (!(mt = infer(a, m, cf ? cf->type : NULL))) {
			return NULL;
		}
		char *name = floe_arena_alloc(a, m->key_len + 1);
		if (!name)
			return NULL;
		memcpy(name, m->key, m->key_len);
		name[m->key_len] = 0;
		fs[n].name = name;
		fs[n].type = mt;
		fs[n].required = !null; /* null: the column becomes optional */
		n++;
	}
	t->fields = fs;
	t->n_fields = n;
	return t;
}

/* Members of every element's struct (the first type of each name). */
static const floe_type *infer_list(floe_arena *a, const floe_json *v, const floe_type *c)
{
	const floe_type *ce = c && c->id == FLOE_T_LIST ? c->element : NULL;
	const floe_type *et = NULL;
	floe_type *lt = floe_arena_calloc(a, 1, sizeof(*lt));
	if (!lt)
		return NULL;
	for (const floe_json *e = v->child; e; e = e->next) {
		if (e->type == FLOE_JSON_NULL)
			continue;
		const floe_type *x = infer(a, e, ce);
		if (!x)
			return NULL;
		if (!et) {
			et = x;
		} else if (et->id == FLOE_T_STRUCT && x->id == FLOE_T_STRUCT) {
			floe_type *u = floe_arena_calloc(a, 1, sizeof(*u));
			floe_field *fs = floe_arena_calloc(a, et->n_fields + x->n_fields + 1, sizeof(*fs));
			if (!u || !fs)
				return NULL;
			*u = *et;
			memcpy(fs, et->fields, et->n_fields * sizeof(*fs));
			size_t n = et->n_fields;
			for (size_t i = 0; i < x->n_fields; i++)
				if (!member_of(et, x->fields[i].name, strlen(x->fields[i].name)))
					fs[n++] = x->fields[i];
			u->fields = fs;
			u->n_fields = n;
			et = u;
		} else if (et->id == FLOE_T_INT && x->id == FLOE_T_LONG) {
			et = x;
		}
	}
	if (!et)
		return ce ? c : floe_type_primitive(FLOE_T_STRING);
	lt->id = FLOE_T_LIST;
	lt->element = et;
	lt->element_required = false;
	return lt;
}

static const floe_type *infer(floe_arena *a, const floe_json *v, const floe_type *c)
{
	if (c && c->id == FLOE_T_STRING)
		return c; /* takes any JSON value as its text */
	switch (v->type) {
	case FLOE_JSON_BOOL:
		return c ? c : floe_type_primitive(FLOE_T_BOOLEAN);
	case FLOE_JSON_NUMBER:
		return infer_number(a, v, c);
	case FLOE_JSON_STRING:
		return c ? c : floe_type_primitive(FLOE_T_STRING);
	case FLOE_JSON_OBJECT:
		if (c && c->id != FLOE_T_STRUCT)
			return c; /* a map, or a mismatch the decoder reports */
		return infer_struct(a, v, c);
	case FLOE_JSON_ARRAY:
		if (c && c->id != FLOE_T_LIST)
			return c;
		return infer_list(a, v, c);
	default:
		return c ? c : floe_type_primitive(FLOE_T_STRING);
	}
}

/* A change event's row images (Debezium: "after", and "before" of a
 * delete), inside a {"schema", "payload"} envelope or not. */
static void cdc_images(const floe_json *j, const floe_json **after, const floe_json **before)
{
	const floe_json *pl = floe_json_get(j, "payload");
	if (pl && pl->type == FLOE_JSON_OBJECT && floe_json_get(j, "schema"))
		j = pl;
	*after = floe_json_get(j, "after");
	*before = floe_json_get(j, "before");
	if (*after && (*after)->type != FLOE_JSON_OBJECT)
		*after = NULL;
	if (*before && (*before)->type != FLOE_JSON_OBJECT)
		*before = NULL;
}

/* Columns a record's absence must not make optional: the metadata columns
 * (metadata.<field>: a Kafka record's topic, offset, ...), filled from the
 * record rather than its value, and the equality fields of an upsert table
 * (a change without its key is a dead letter, not a reason to relax it). */
static bool kept(const rt_table *tb, size_t k)
{
	if (tb->meta_kind && tb->meta_kind[k])
		return true;
	for (size_t i = 0; i < tb->n_eq; i++)
		if (tb->eq_ids[i] == tb->schema->root->fields[k].id)
			return true;
	return false;
}

static const floe_type *with_meta(floe_arena *a, const floe_type *want, const rt_table *tb)
{
	const floe_type *root = tb->schema->root;
	size_t extra = 0;
	for (size_t k = 0; k < root->n_fields; k++)
		extra += kept(tb, k);
	if (!extra)
		return want;
	floe_type *t = floe_arena_calloc(a, 1, sizeof(*t));
	floe_field *fs = floe_arena_calloc(a, want->n_fields + extra, sizeof(*fs));
	if (!t || !fs)
		return NULL;
	*t = *want;
	memcpy(fs, want->fields, want->n_fields * sizeof(*fs));
	size_t n = want->n_fields;
	for (size_t k = 0; k < root->n_fields; k++)
		if (kept(tb, k) && !member_of(want, root->fields[k].name, strlen(root->fields[k].name)))
			fs[n++] = root->fields[k];
	t->fields = fs;
	t->n_fields = n;
	return t;
}

static int merge_object(floe_schema_evo *evo, floe_arena *a, const floe_type *root,
			const rt_table *tb, const floe_json *j, bool missing_optional,
			floe_error *err)
{
	floe_error local;
	const floe_type *want = infer_struct(a, j, root);
	if (want)
		want = with_meta(a, want, tb);
	if (!want)
		return floe_error_oom(err);
	if (floe_evo_merge(evo, want, missing_optional, &local) && local.code == FLOE_ENOMEM)
		return floe_error_oom(err);
	return FLOE_OK;
}

/*
 * Merge the record into evo (a schema being evolved). *changed: the merge
 * changed something. A record that cannot evolve the schema (a string into
 * a long) leaves it as it was. A change event merges its after image (a
 * delete's before image, whose absent columns say nothing: key-only
 * images are common).
 */
static int merge_record(floe_schema_evo *evo, floe_arena *a, const floe_type *root,
			const rt_table *tb, const char *rec, size_t n, bool *changed,
			floe_error *err)
{
	floe_json *j = NULL;
	floe_error local;
	size_t before = evo->n_changes;
	int rc;
	*changed = false;
	if (floe_json_parse(&j, a, rec, n, NULL, &local) || j->type != FLOE_JSON_OBJECT)
		return FLOE_OK; /* not JSON: the decoder's reason stands */
	if (tb->cdc) {
		const floe_json *af, *bf;
		cdc_images(j, &af, &bf);
		if (af)
			rc = merge_object(evo, a, root, tb, af, true, err);
		else if (bf)
			rc = merge_object(evo, a, root, tb, bf, false, err);
		else
			return FLOE_OK;
	} else {
		rc = merge_object(evo, a, root, tb, j, true, err);
	}
	if (rc)
		return rc;
	*changed = evo->n_changes > before;
	return FLOE_OK;
}

int stream_evolve_note(rt_task *t, size_t ti, const char *rec, size_t n, bool *taken,
		       floe_error *err)
{
	floe_pipeline *p = t->p;
	rt_table *tb = &p->tables[ti];
	floe_arena a;
	floe_schema_evo evo;
	bool changed = false;
	int rc;
	*taken = false;
	floe_arena_init(&a, 8192);
	rc = floe_evo_begin(&evo, &a, tb->schema, tb->meta->last_column_id,
			    tb->meta->format_version, err);
	if (!rc)
		rc = merge_record(&evo, &a, tb->schema->root, tb, rec, n, &changed, err);
	floe_evo_reset(&evo);
	floe_arena_reset(&a);
	if (rc || !changed)
		return rc;
	*taken = true;
	floe_mutex_lock(&p->lock);
	if (tb->n_evo_recs < EVO_MAX_RECORDS && tb->evo_recs.len + n + 4 <= EVO_MAX_BYTES) {
		uint32_t len = (uint32_t)n;
		if (floe_buf_append(&tb->evo_recs, &len, sizeof(len)) ||
		    floe_buf_append(&tb->evo_recs, rec, n))
			rc = floe_error_oom(err);
		else
			tb->n_evo_recs++;
	}
	/* set while the block is still a unit: the barrier sees it */
	atomic_store(&p->evolve_req, true);
	floe_cond_broadcast(&p->hub_cv);
	floe_mutex_unlock(&p->lock);
	return rc;
}

static int commit_table(floe_pipeline *p, rt_table *tb, bool *changed, floe_error *err)
{
	floe_arena a;
	floe_schema_evo evo;
	floe_schema *ns = NULL;
	const floe_metadata *m = floe_table_metadata(tb->commit_t);
	const floe_schema *cur = floe_metadata_current_schema(m);
	char *summary = NULL;
	int rc;
	*changed = false;
	floe_arena_init(&a, 8192);
	rc = floe_evo_begin(&evo, &a, cur, m->last_column_id, m->format_version, err);
	for (size_t off = 0, k = 0; !rc && k < tb->n_evo_recs; k++) {
		uint32_t len;
		bool ch;
		memcpy(&len, tb->evo_recs.data + off, sizeof(len));
		off += sizeof(len);
		/* each record against the schema the ones before it made */
		rc = merge_record(&evo, &a, evo.root, tb, (const char *)tb->evo_recs.data + off, len,
				  &ch, err);
		off += len;
	}
	int32_t last = 0;
	if (!rc)
		rc = floe_evo_finish(&ns, &last, &evo, err);
	floe_evo_reset(&evo);
	if (!rc && ns) {
		/* the pipeline's fence, unless Kafka's per-partition one applies */
		const char *pid = tb->split_fence ? NULL : p->pipeline_id;
		FLOE_INFO("table %s: committing a schema update", tb->ident);
		rc = floe_table__evolve_schema(tb->commit_t, ns->root, true, pid, tb->fence_snap,
					       &summary, err);
		if (!rc && summary && *summary) {
			*changed = true;
			FLOE_INFO("table %s: schema evolved (unknown-fields: evolve): %s", tb->ident,
				  summary);
		}
		floe_free(summary);
	}
	floe_arena_reset(&a);
	return rc ? floe_error_prefix(err, rc, "table %s: schema update: ", tb->ident) : FLOE_OK;
}

int stream_evolve_commit(floe_pipeline *p, floe_error *err)
{
	bool any = false;
	/* tables a route needs first (stream_route.c): their records replay */
	int rc0 = stream_route_commit(p, &any, err);
	if (rc0)
		return rc0;
	for (size_t i = 0; i < p->n_tables; i++) {
		rt_table *tb = &p->tables[i];
		bool changed = false;
		if (!tb->n_evo_recs)
			continue;
		int rc = commit_table(p, tb, &changed, err);
		if (rc)
			return rc;
		any = any || changed;
	}
	if (!any)
		return floe_error_set(err, FLOE_EINVAL,
				      "unknown-fields: evolve: records asked for a schema update (or a "
				      "route for a new table) that changed nothing (a bug: the run would "
				      "repeat)");
	p->restart = true;
	return FLOE_OK;
}
