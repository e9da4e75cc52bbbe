/*
 * alter.c — schema, partition-spec and write-order evolution commits:
 * `floe table alter` (floe_table_alter) and the pipeline's schema updates
 * from records (floe_table__evolve_schema, fenced like its data commits).
 *
 * DESIGN: the changes are re-applied on every attempt's base (a lost race
 * re-reads the table and validates again), so a concurrent writer's schema
 * change is kept or the change is refused naming the field. A schema update
 * is idempotent by structure: when the base already holds the evolved
 * columns (another process, or this one before a crash, committed them)
 * there is nothing to commit. Partition fields follow the spec's id rules:
 * ids after last-partition-id, an equivalent field of an older spec keeps
 * its id; v1 tables replace a dropped field by a void transform.
 */
#include <stdio.h>
#include <string.h>

#include "floe/table.h"
#include "iceberg/schema_evolve.h"
#include "iceberg/spec.h"
#include "iceberg/transform.h"
#include "table/commit.h"
#include "table/create.h"

typedef struct alter_ctx {
	const floe_alter_op *ops;
	size_t n;
	/* the pipeline's schema update */
	const floe_type *want;
	bool missing_optional;
	const char *pipeline_id;
	int64_t expected;
	/* the last attempt's result, for an unknown outcome */
	floe_arena a;
	const floe_schema *built_schema;
	const floe_partition_spec *built_spec;
	const floe_sort_order *built_order;
	floe_buf summary;
} alter_ctx;

static int sum_add(alter_ctx *c, const char *text, floe_error *err)
{
	if (!*text)
		return FLOE_OK;
	if ((c->summary.len && floe_buf_puts(&c->summary, "; ")) || floe_buf_puts(&c->summary, text))
		return floe_error_oom(err);
	return FLOE_OK;
}

static bool same_pfield(const floe_partition_field *x, const floe_partition_field *y)
{
	return x->source_id == y->source_id && x->transform.kind == y->transform.kind &&
	       x->transform.param == y->transform.param;
}

/* The field of spec s that `what` names (its name, or the expression). */
static int find_pfield(const floe_partition_spec *s, const char *what, const floe_schema *schema,
		       floe_arena *a, int32_t last, size_t *at, floe_error *err)
{
	for (size_t i = 0; i < s->n_fields; i++)
		if (s->fields[i].transform.kind != FLOE_TR_VOID && !strcmp(s->fields[i].name, what)) {
			*at = i;
			return FLOE_OK;
		}
	floe_partition_spec *ps = NULL;
	floe_error local;
	if (!floe_spec_parse_expr(&ps, a, what, schema, 0, &last, &local) && ps->n_fields == 1)
		for (size_t i = 0; i < s->n_fields; i++)
			if (same_pfield(&s->fields[i], &ps->fields[0])) {
				*at = i;
				return FLOE_OK;
			}
	return floe_error_set(err, FLOE_EINVAL,
			      "partition field '%s': the table's spec has no such field (by name or "
			      "expression)",
			      what);
}

/* Add the fields of expression expr to the working spec (fields, n). */
static int add_pfields(alter_ctx *c, const floe_metadata *base, const floe_schema *schema,
		       floe_partition_field **fields, size_t *n, int32_t *last, const char *expr,
		       floe_error *err)
{
	floe_partition_spec *ps = NULL;
	int rc = floe_spec_parse_expr(&ps, &c->a, expr, schema, 0, last, err);
	if (rc)
		return floe_error_prefix(err, rc, "partition field '%s': ", expr);
	floe_partition_field *nf = floe_arena_calloc(&c->a, *n + ps->n_fields, sizeof(*nf));
	if (!nf)
		return floe_error_oom(err);
	if (*n)
		memcpy(nf, *fields, *n * sizeof(*nf));
	for (size_t k = 0; k < ps->n_fields; k++) {
		floe_partition_field f = ps->fields[k];
		for (size_t i = 0; i < *n; i++) {
			if (nf[i].transform.kind != FLOE_TR_VOID && same_pfield(&nf[i], &f))
				return floe_error_set(err, FLOE_EINVAL,
						      "partition field '%s': the spec partitions by it "
						      "already (as '%s')",
						      expr, nf[i].name);
			if (!strcmp(nf[i].name, f.name))
				return floe_error_set(err, FLOE_EINVAL,
						      "partition field '%s': the name '%s' is taken",
						      expr, f.name);
		}
		/* spec: an equivalent field of an older spec keeps its id */
		for (size_t si = 0; si < base->n_specs; si++)
			for (size_t i = 0; i < base->specs[si]->n_fields; i++) {
				const floe_partition_field *o = &base->specs[si]->fields[i];
				if (same_pfield(o, &f) && !strcmp(o->name, f.name))
					f.field_id = o->field_id;
			}
		nf[(*n)++] = f;
	}
	*fields = nf;
	return FLOE_OK;
}

static int drop_pfield(alter_ctx *c, const floe_metadata *base, const floe_schema *schema,
		       floe_partition_field **fields, size_t *n, const char *what, floe_error *err)
{
	floe_partition_spec cur = {0, *fields, *n};
	size_t at = 0;
	int rc = find_pfield(&cur, what, schema, &c->a, base->last_partition_id, &at, err);
	if (rc)
		return rc;
	floe_partition_field *nf = floe_arena_calloc(&c->a, *n ? *n : 1, sizeof(*nf));
	if (!nf)
		return floe_error_oom(err);
	memcpy(nf, *fields, *n * sizeof(*nf));
	if (base->format_version == 1) {
		/* spec: v1 never removes a field: it becomes void */
		nf[at].transform.kind = FLOE_TR_VOID;
		nf[at].transform.param = 0;
	} else {
		memmove(&nf[at], &nf[at + 1], (*n - at - 1) * sizeof(*nf));
		(*n)--;
	}
	*fields = nf;
	return FLOE_OK;
}

static int build_alter(void *payload, const floe_metadata *base, int attempt, floe_metadata **next,
		       floe_error *err)
{
	alter_ctx *c = payload;
	floe_metadata_builder *b = NULL;
	floe_schema_evo e;
	floe_schema *ns = NULL;
	const floe_schema *schema = floe_metadata_current_schema(base);
	const floe_partition_spec *spec = floe_metadata_default_spec(base);
	int rc;
	bool spec_changed = false;
	const floe_sort_order *order = NULL;
	(void)attempt;
	*next = NULL;
	floe_arena_reset(&c->a);
	floe_arena_init(&c->a, 8192);
	floe_buf_clear(&c->summary);
	c->built_schema = NULL;
	c->built_spec = NULL;
	c->built_order = NULL;
	if (!schema || !spec)
		return floe_error_corrupt(err, "no current schema or spec");
	if (c->pipeline_id) {
		/* fenced as the pipeline's data commits: a process that another
		 * one replaced changes nothing */
		const floe_snapshot *head = floe_metadata_branch_head(base, NULL);
		int64_t last = floe_pipeline_last_snapshot(base, head, c->pipeline_id);
		if (last != c->expected)
			return floe_error_set(err, FLOE_ECONFLICT,
					      "pipeline '%s': snapshot %lld committed by another "
					      "process since %lld: this one is fenced off",
					      c->pipeline_id, (long long)last, (long long)c->expected);
	}
	if ((rc = floe_evo_begin(&e, &c->a, schema, base->last_column_id, base->format_version, err)))
		return rc;
	if (c->want)
		rc = floe_evo_merge(&e, c->want, c->missing_optional, err);
	for (size_t i = 0; !rc && i < c->n; i++) {
		const floe_alter_op *o = &c->ops[i];
		const floe_type *t = NULL;
		if (o->kind == FLOE_ALTER_ADD_COLUMN || o->kind == FLOE_ALTER_UPDATE_TYPE) {
			if (!o->path || !o->arg)
				rc = floe_error_set(err, FLOE_EINVAL, "a column and a type are needed");
			else if (o->kind == FLOE_ALTER_ADD_COLUMN && strpbrk(o->arg, "<")) {
				/* a nested type: parse it as a one-column list */
				floe_schema *tmp = NULL;
				char *cols = floe_arena_sprintf(&c->a, "x %s", o->arg);
				rc = cols ? floe_schema_parse_compact(&tmp, &c->a, cols, err)
					  : floe_error_oom(err);
				if (!rc)
					t = tmp->root->fields[0].type;
			} else {
				rc = floe_type_parse_primitive(&t, &c->a, o->arg, strlen(o->arg), err);
			}
			if (rc) {
				rc = floe_error_prefix(err, rc, "column '%s': ", o->path ? o->path : "");
				break;
			}
			rc = o->kind == FLOE_ALTER_ADD_COLUMN
				     ? floe_evo_add_column(&e, o->path, t, o->doc, err)
				     : floe_evo_update_type(&e, o->path, t, err);
		} else if (o->kind == FLOE_ALTER_MAKE_OPTIONAL) {
			rc = o->path ? floe_evo_make_optional(&e, o->path, err)
				     : floe_error_set(err, FLOE_EINVAL, "a column is needed");
		}
	}
	int32_t last_col = 0;
	if (!rc)
		rc = floe_evo_finish(&ns, &last_col, &e, err);
	if (!rc)
		rc = sum_add(c, floe_evo_describe(&e), err);
	floe_evo_reset(&e);
	if (rc)
		return rc;
	if (ns)
		schema = ns;
	/* partition fields and write order, against the evolved schema */
	floe_partition_field *pf = spec->n_fields
					   ? floe_arena_calloc(&c->a, spec->n_fields, sizeof(*pf))
					   : NULL;
	size_t npf = spec->n_fields;
	int32_t last_pid = base->last_partition_id;
	if (npf && !pf)
		return floe_error_oom(err);
	if (npf)
		memcpy(pf, spec->fields, npf * sizeof(*pf));
	for (size_t i = 0; !rc && i < c->n; i++) {
		const floe_alter_op *o = &c->ops[i];
		char line[600];
		switch (o->kind) {
		case FLOE_ALTER_ADD_PARTITION:
			rc = add_pfields(c, base, schema, &pf, &npf, &last_pid, o->arg ? o->arg : "",
					 err);
			snprintf(line, sizeof(line), "add partition field %s", o->arg ? o->arg : "");
			break;
		case FLOE_ALTER_DROP_PARTITION:
			rc = drop_pfield(c, base, schema, &pf, &npf, o->arg ? o->arg : "", err);
			snprintf(line, sizeof(line), "drop partition field %s", o->arg ? o->arg : "");
			break;
		case FLOE_ALTER_REPLACE_PARTITION:
			rc = drop_pfield(c, base, schema, &pf, &npf, o->arg ? o->arg : "", err);
			if (!rc)
				rc = add_pfields(c, base, schema, &pf, &npf, &last_pid,
						 o->arg2 ? o->arg2 : "", err);
			snprintf(line, sizeof(line), "replace partition field %s with %s",
				 o->arg ? o->arg : "", o->arg2 ? o->arg2 : "");
			break;
		case FLOE_ALTER_WRITE_ORDER: {
			const char *x = o->arg ? o->arg : "";
			floe_sort_order *so = NULL;
			if (!strcmp(x, "unsorted") || !*x) {
				so = floe_arena_calloc(&c->a, 1, sizeof(*so));
				if (!so)
					rc = floe_error_oom(err);
			} else {
				rc = floe_sort_order_parse_expr(&so, &c->a, x, schema, 1, err);
				if (rc)
					rc = floe_error_prefix(err, rc, "write order '%s': ", x);
			}
			order = so;
			snprintf(line, sizeof(line), "write order %s", x);
			break;
		}
		default:
			line[0] = 0;
			continue;
		}
		if (!rc && o->kind != FLOE_ALTER_WRITE_ORDER)
			spec_changed = true;
		if (!rc)
			rc = sum_add(c, line, err);
	}
	if (rc)
		return rc;
	floe_partition_spec nspec = {0, pf, npf};
	if (spec_changed && floe_spec_equivalent(&nspec, spec))
		spec_changed = false;
	if (order) {
		const floe_sort_order *cur = floe_metadata_sort_order(base, base->default_sort_order_id);
		if (cur && floe_sort_order_equivalent(cur, order))
			order = NULL;
	}
	if (!ns && !spec_changed && !order)
		return FLOE_OK; /* nothing to commit */
	if ((rc = floe_metadata_builder_from(&b, base, err)))
		return rc;
	int32_t id;
	if (ns && !rc && !(rc = floe_mb_add_schema(b, ns, &id, err)))
		rc = floe_mb_set_current_schema(b, id, err);
	if (spec_changed && !rc && !(rc = floe_mb_add_spec(b, &nspec, &id, err)))
		rc = floe_mb_set_default_spec(b, id, err);
	if (order && !rc && !(rc = floe_mb_add_sort_order(b, order, &id, err)))
		rc = floe_mb_set_default_sort_order(b, id, err);
	if (rc) {
		floe_metadata_builder_free(b);
		return rc;
	}
	if ((rc = floe_metadata_builder_finish(next, b, base->metadata_location, base->last_updated_ms,
					       err)))
		return rc;
	c->built_schema = ns ? floe_metadata_current_schema(*next) : NULL;
	c->built_spec = spec_changed ? floe_metadata_default_spec(*next) : NULL;
	c->built_order = order ? floe_metadata_sort_order(*next, (*next)->default_sort_order_id)
			       : NULL;
	return FLOE_OK;
}

static bool alter_landed(void *payload, const floe_metadata *cur)
{
	alter_ctx *c = payload;
	const floe_schema *s = floe_metadata_current_schema(cur);
	if (c->built_schema && (!s || !floe_schema_same_structure(s, c->built_schema)))
		return false;
	if (c->built_spec &&
	    !floe_spec_equivalent(floe_metadata_default_spec(cur), c->built_spec))
		return false;
	if (c->built_order) {
		const floe_sort_order *o = floe_metadata_sort_order(cur, cur->default_sort_order_id);
		if (!o || !floe_sort_order_equivalent(o, c->built_order))
			return false;
	}
	return true;
}

static int run_alter(floe_table *t, alter_ctx *c, char **summary, floe_error *err)
{
	static const floe_commit_fns fns = {build_alter, NULL, alter_landed};
	floe_arena_init(&c->a, 8192);
	floe_buf_init(&c->summary, 1 << 20);
	int rc = floe_table__commit(t, "alter", &fns, c, err);
	if (!rc && summary) {
		if (!(*summary = floe_strdup(floe_buf_cstr(&c->summary))))
			rc = floe_error_oom(err);
	}
	floe_buf_reset(&c->summary);
	floe_arena_reset(&c->a);
	return rc;
}

int floe_table_alter(floe_table *t, const floe_alter_op *ops, size_t n, char **summary,
		     floe_error *err)
{
	alter_ctx c;
	memset(&c, 0, sizeof(c));
	if (summary)
		*summary = NULL;
	if (!t || (n && !ops))
		return floe_error_set(err, FLOE_EINVAL, "floe_table_alter: no table or no changes");
	for (size_t i = 0; i < n; i++)
		if (ops[i].kind < FLOE_ALTER_ADD_COLUMN || ops[i].kind > FLOE_ALTER_WRITE_ORDER)
			return floe_error_set(err, FLOE_EINVAL, "floe_table_alter: unknown change %d",
					      (int)ops[i].kind);
	c.ops = ops;
	c.n = n;
	return run_alter(t, &c, summary, err);
}

int floe_table__evolve_schema(floe_table *t, const floe_type *want, bool missing_optional,
			      const char *pipeline_id, int64_t expected, char **summary,
			      floe_error *err)
{
	alter_ctx c;
	memset(&c, 0, sizeof(c));
	if (summary)
		*summary = NULL;
	c.want = want;
	c.missing_optional = missing_optional;
	c.pipeline_id = pipeline_id;
	c.expected = expected;
	return run_alter(t, &c, summary, err);
}
