/*
 * stream_route.c — dynamic routing: a table whose name is a template
 * ("db.events_{kind}") stands for one table per value of a record field,
 * each created on first use with the template's schema, partitioning,
 * sort order, properties and unknown-fields policy (Flink's
 * DynamicIcebergSink with a DynamicRecord per table; Kafka Connect's
 * iceberg.tables.route-field with auto-create).
 *
 * DESIGN: the runtime's table list stays fixed for a run. When a pipeline
 * opens, a template expands to the tables of its namespace that its name
 * matches (the catalog is the only state: nothing else remembers which
 * tables a route made), each an ordinary table with the filter
 * "field = 'value'": distribution, checkpoints, offsets and their fences,
 * unknown-fields: evolve, all apply per table as for listed ones.
 *
 * A record whose value names no such table is "fresh": the task that
 * decodes it notes the value and sets p->evolve_req while the record's
 * block is still a unit, so the checkpoint that would hold it is dropped
 * (as for a schema update, stream_evolve.c). At the end of the run the
 * committer is idle: each fresh table is created (a table that exists,
 * created meanwhile by another process or by a run killed after the
 * create, is loaded: the create is idempotent) and the caller opens the
 * pipeline again, which finds the new tables, resumes each from its own
 * committed positions (a new table has none: it reads from the source's
 * start; the records before its first one are not its) and replays the
 * held records. A kill at any point is a resume.
 *
 * Names from record values are untrusted: a value must be 1-64 of a-z,
 * 0-9 and _ (the same name in every catalog, a file path segment and an
 * SQL identifier without quoting); anything else, a missing or null
 * field, and a record past route.max-tables are dead letters that name
 * the template and the reason. The cap counts the template's tables
 * (existing ones included) rather than the tables one process created, so
 * a crash loop does not multiply it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "stream/stream_runtime.h"
#include "util/log.h"

#define ROUTE_VALUE_MAX 64

bool stream_route_value_ok(const char *v, size_t n)
{
	if (!n || n > ROUTE_VALUE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '_'))
			return false;
	return true;
}

static bool literal_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static bool field_ok(const char *s, size_t n)
{
	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return false;
	return literal_ok(s, n);
}

int stream_route_parse_template(stream_table_cfg *t, floe_arena *a, const stream_config *c,
				floe_error *err)
{
	const char *open = strchr(t->name, '{');
	if (!open && !strchr(t->name, '}'))
		return FLOE_OK;
	const char *dot = strrchr(t->name, '.');
	const char *close = open ? strchr(open, '}') : NULL;
	if (!open || !close || !dot || dot > open || strchr(close + 1, '{') ||
	    strchr(close + 1, '}') || memchr(open + 1, '{', (size_t)(close - open - 1)))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': a name template has one {field} in the "
				      "table's name, after the namespace (\"db.events_{kind}\")",
				      t->line, t->name);
	const char *tn = dot + 1;
	if (!field_ok(open + 1, (size_t)(close - open - 1)) ||
	    !literal_ok(tn, (size_t)(open - tn)) || !literal_ok(close + 1, strlen(close + 1)))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': a name template is letters, digits and _ "
				      "around one {field} (a top-level field name)",
				      t->line, t->name);
	if (!t->schema)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': a name template needs schema: (its tables "
				      "are created on first use)",
				      t->line, t->name);
	if (t->filter)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': a name template routes by its field; a "
				      "filter: cannot be combined with it (list a table with the "
				      "filter instead)",
				      t->line, t->name);
	if (t->route_max_tables < 1 || t->route_max_tables > 10000)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': route.max-tables must be 1..10000", t->line,
				      t->name);
	const stream_source_cfg *sc = stream_config_source(c, t->source);
	if (sc && (sc->format != STREAM_FMT_JSONL || sc->cdc || sc->type == STREAM_SRC_GENERATOR ||
		   sc->type == STREAM_SRC_ICEBERG || sc->type == STREAM_SRC_HYBRID))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': a name template routes JSON records (files, "
				      "stdin, Kafka or Kinesis with format: json); source '%s' is not",
				      t->line, t->name, sc->name);
	t->route_ns = floe_arena_strndup(a, t->name, (size_t)(dot - t->name));
	t->route_prefix = floe_arena_strndup(a, tn, (size_t)(open - tn));
	t->route_field = floe_arena_strndup(a, open + 1, (size_t)(close - open - 1));
	t->route_suffix = floe_arena_strdup(a, close + 1);
	if (!t->route_ns || !t->route_prefix || !t->route_field || !t->route_suffix)
		return floe_error_oom(err);
	return FLOE_OK;
}

/* The value of a table name the template matches (NULL: no match). */
static const char *match_name(const stream_table_cfg *tpl, const char *name, size_t *n)
{
	size_t lp = strlen(tpl->route_prefix), ls = strlen(tpl->route_suffix), ln = strlen(name);
	if (ln <= lp + ls || strncmp(name, tpl->route_prefix, lp) ||
	    strcmp(name + ln - ls, tpl->route_suffix))
		return NULL;
	*n = ln - lp - ls;
	return stream_route_value_ok(name + lp, *n) ? name + lp : NULL;
}

typedef struct name_list {
	char **v;
	size_t n, cap;
	const stream_table_cfg *tpl;
} name_list;

static int collect(const char *ns, const char *name, void *payload)
{
	(void)ns;
	name_list *l = payload;
	size_t n;
	const char *v = match_name(l->tpl, name, &n);
	if (!v)
		return 0;
	if (FLOE_ARRAY_RESERVE(l->v, l->cap, l->n + 1))
		return FLOE_ENOMEM;
	if (!(l->v[l->n] = floe_strndup(v, n)))
		return FLOE_ENOMEM;
	l->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int stream_route_table_cfg(stream_table_cfg *out, floe_arena *a, const stream_table_cfg *tpl,
			   const char *value, floe_error *err)
{
	*out = *tpl;
	out->route_field = NULL;
	out->route_template = tpl->name;
	out->route_value = floe_arena_strdup(a, value);
	out->name = floe_arena_sprintf(a, "%s.%s%s%s", tpl->route_ns, tpl->route_prefix, value,
				       tpl->route_suffix);
	/* value is a-z0-9_: no quoting to get wrong */
	out->filter = floe_arena_sprintf(a, "\"%s\" = '%s'", tpl->route_field, value);
	if (!out->route_value || !out->name || !out->filter)
		return floe_error_oom(err);
	return FLOE_OK;
}

int stream_route_expand(stream_config *cfg, floe_catalog *cat, floe_error *err)
{
	size_t n_tpl = 0;
	int rc = FLOE_OK;
	for (size_t i = 0; i < cfg->n_tables; i++)
		n_tpl += cfg->tables[i].route_field != NULL;
	if (!n_tpl)
		return FLOE_OK;
	name_list *found = floe_calloc(n_tpl, sizeof(*found));
	stream_table_cfg *routes = floe_arena_calloc(&cfg->arena, n_tpl, sizeof(*routes));
	if (!found || !routes) {
		floe_free(found);
		return floe_error_oom(err);
	}
	size_t total = cfg->n_tables - n_tpl, r = 0;
	for (size_t i = 0; i < cfg->n_tables && !rc; i++) {
		const stream_table_cfg *t = &cfg->tables[i];
		if (!t->route_field)
			continue;
		routes[r] = *t;
		found[r].tpl = &routes[r];
		rc = floe_catalog_list_tables(cat, t->route_ns, collect, &found[r], err);
		if (rc == FLOE_ENOTFOUND) { /* no namespace yet: no tables */
			floe_error_clear(err);
			rc = FLOE_OK;
		} else if (rc == FLOE_ENOMEM) {
			rc = floe_error_oom(err);
		} else if (rc) {
			rc = floe_error_prefix(err, rc, "table '%s': listing namespace '%s': ",
					       t->name, t->route_ns);
		}
		if (!rc && found[r].n)
			qsort(found[r].v, found[r].n, sizeof(char *), cmp_str);
		total += found[r].n;
		r++;
	}
	stream_table_cfg *tables = NULL;
	if (!rc && !(tables = floe_arena_calloc(&cfg->arena, total ? total : 1, sizeof(*tables))))
		rc = floe_error_oom(err);
	size_t k = 0;
	r = 0;
	for (size_t i = 0; i < cfg->n_tables && !rc; i++) {
		const stream_table_cfg *t = &cfg->tables[i];
		if (!t->route_field) {
			tables[k++] = *t;
			continue;
		}
		const char **known = floe_arena_calloc(&cfg->arena, found[r].n + 1, sizeof(char *));
		if (!known)
			rc = floe_error_oom(err);
		for (size_t j = 0; j < found[r].n && !rc; j++) {
			rc = stream_route_table_cfg(&tables[k], &cfg->arena, t, found[r].v[j], err);
			known[j] = tables[k].route_value;
			k++;
		}
		routes[r].route_known = known;
		routes[r].n_route_known = found[r].n;
		if (!rc && found[r].n)
			FLOE_INFO("table %s: %zu tables exist", t->name, found[r].n);
		r++;
	}
	for (size_t i = 0; i < n_tpl; i++) {
		for (size_t j = 0; j < found[i].n; j++)
			floe_free(found[i].v[j]);
		floe_free(found[i].v);
	}
	floe_free(found);
	if (rc)
		return rc;
	cfg->tables = tables;
	cfg->n_tables = total;
	cfg->routes = routes;
	cfg->n_routes = n_tpl;
	return FLOE_OK;
}

static bool known_value(const stream_table_cfg *tpl, const char *v)
{
	return bsearch(&v, tpl->route_known, tpl->n_route_known, sizeof(char *), cmp_str) != NULL;
}

/*
 * The record's route: *value (NUL-terminated in buf) or a reason. FLOE_OK
 * with *value NULL and why set: a dead letter.
 */
static int route_value(rt_task *t, const stream_table_cfg *tpl, const char *rec, size_t n,
		       char *buf, size_t cap, const char **value, char *why, size_t why_cap)
{
	floe_json *j = NULL;
	floe_error local;
	*value = NULL;
	floe_arena_reset(&t->route_arena);
	if (floe_json_parse(&j, &t->route_arena, rec, n, NULL, &local) ||
	    j->type != FLOE_JSON_OBJECT) {
		snprintf(why, why_cap, "route %s: the record is not a JSON object", tpl->name);
		return FLOE_OK;
	}
	const floe_json *f = floe_json_get(j, tpl->route_field);
	if (!f || (f->type != FLOE_JSON_STRING && f->type != FLOE_JSON_NUMBER)) {
		const char *what = !f ? "missing"
				      : f->type == FLOE_JSON_NULL ? "null" : "not a string or number";
		snprintf(why, why_cap, "route %s: field '%s' is %s: no table for the record",
			 tpl->name, tpl->route_field, what);
		return FLOE_OK;
	}
	if (!stream_route_value_ok(f->s, f->len) || f->len >= cap) {
		snprintf(why, why_cap,
			 "route %s: '%.*s' (field %s) is not a table name: 1-64 of a-z, 0-9, _",
			 tpl->name, f->len > 80 ? 80 : (int)f->len, f->s, tpl->route_field);
		return FLOE_OK;
	}
	memcpy(buf, f->s, f->len);
	buf[f->len] = 0;
	*value = buf;
	return FLOE_OK;
}

/* A fresh value: held for the end of the run, or past the cap (*over). */
static int note_fresh(floe_pipeline *p, size_t ri, const char *v, bool *over, floe_error *err)
{
	rt_route *rt = &p->routes[ri];
	int rc = FLOE_OK;
	*over = false;
	floe_mutex_lock(&p->lock);
	bool have = false;
	for (size_t i = 0; i < rt->n_fresh && !have; i++)
		have = !strcmp(rt->fresh[i], v);
	if (!have && (int64_t)(rt->tpl->n_route_known + rt->n_fresh) >= rt->tpl->route_max_tables) {
		*over = true;
	} else if (!have) {
		char *c = floe_strdup(v);
		if (!c || FLOE_ARRAY_RESERVE(rt->fresh, rt->cap_fresh, rt->n_fresh + 1)) {
			floe_free(c);
			rc = floe_error_oom(err);
		} else {
			rt->fresh[rt->n_fresh++] = c;
		}
	}
	if (!rc && !*over) {
		/* set while the block is still a unit: the barrier sees it */
		atomic_store(&p->evolve_req, true);
		floe_cond_broadcast(&p->hub_cv);
	}
	floe_mutex_unlock(&p->lock);
	return rc;
}

/* Records before every table of the source's committed position were
 * routed by an earlier run (their dead letters written). */
static int64_t source_skip(floe_pipeline *p, size_t src, const char *split)
{
	const rt_source *s = &p->sources[src];
	int64_t skip = -1;
	if (!split || !s->n_tables)
		return 0;
	for (size_t k = 0; k < s->n_tables; k++) {
		const rt_table *tb = &p->tables[s->tables[k]];
		int64_t o = tb->skipping ? stream_offsets_get(&tb->skip, split, 0) : 0;
		if (skip < 0 || o < skip)
			skip = o;
	}
	return skip < 0 ? 0 : skip;
}

static int route_one(rt_task *t, size_t ri, const char *rec, size_t n, int64_t off,
		     floe_error *err)
{
	floe_pipeline *p = t->p;
	const stream_table_cfg *tpl = p->routes[ri].tpl;
	char buf[ROUTE_VALUE_MAX + 1], why[256];
	const char *v;
	bool over = false;
	int rc = route_value(t, tpl, rec, n, buf, sizeof(buf), &v, why, sizeof(why));
	if (!rc && v && !known_value(tpl, v)) {
		rc = note_fresh(p, ri, v, &over, err);
		if (!rc && over)
			snprintf(why, sizeof(why),
				 "route %s: route.max-tables (%lld) reached: no table is created for "
				 "'%s'",
				 tpl->name, (long long)tpl->route_max_tables, v);
	}
	if (!rc && (!v || over))
		rc = stream_task__note_bad(t, p->n_tables + ri, rec, n, off, why, err);
	return rc;
}

int stream_route__scan(rt_task *t, size_t src, const stream_block *b, int64_t *records,
		       floe_error *err)
{
	floe_pipeline *p = t->p;
	int rc = FLOE_OK;
	for (size_t ri = 0; ri < p->n_routes && !rc; ri++) {
		if (p->routes[ri].src != src)
			continue;
		int64_t *count = records;
		records = NULL; /* the first route of the source counts */
		int64_t skip = source_skip(p, src, b->split_name);
		if (b->msgs) {
			for (size_t i = 0; i < b->n_msgs && !rc; i++) {
				const stream_msg *m = &b->msgs[i];
				if (count)
					(*count)++;
				if (m->offset < skip || (m->flags & (STREAM_MSG_NULL_VALUE |
								     STREAM_MSG_OVERSIZE)))
					continue; /* tombstones, oversize: the tables' business */
				const char *val = (const char *)stream_msg_val(b, m);
				rc = route_one(t, ri, val, m->val_len, m->offset, err);
			}
			continue;
		}
		const char *data = (const char *)b->data, *end = data + b->len, *rec = data;
		while (rec < end && !rc) {
			const char *nl = memchr(rec, '\n', (size_t)(end - rec));
			size_t n = nl ? (size_t)(nl - rec) + 1 : (size_t)(end - rec);
			const char *cur = rec;
			int64_t off = b->start + (int64_t)(cur - data);
			rec += n;
			bool blank = true;
			for (size_t i = 0; i < n && blank; i++)
				blank = cur[i] == ' ' || cur[i] == '\t' || cur[i] == '\r' ||
					cur[i] == '\n';
			if (!blank && count)
				(*count)++;
			if (blank || off < skip)
				continue;
			rc = route_one(t, ri, cur, n, off, err);
		}
	}
	return rc;
}

/* Two templates, or a template and a listed table, that could name the same
 * table would write it twice: refused. */
static bool may_overlap(const stream_table_cfg *a, const stream_table_cfg *b)
{
	if (strcmp(a->route_ns, b->route_ns))
		return false;
	size_t pa = strlen(a->route_prefix), pb = strlen(b->route_prefix);
	size_t sa = strlen(a->route_suffix), sb = strlen(b->route_suffix);
	bool pre = !strncmp(a->route_prefix, b->route_prefix, pa < pb ? pa : pb);
	size_t s = sa < sb ? sa : sb;
	bool suf = !strcmp(a->route_suffix + sa - s, b->route_suffix + sb - s);
	return pre && suf;
}

int stream_route_check_overlap(const stream_config *c, floe_error *err)
{
	for (size_t i = 0; i < c->n_tables; i++) {
		const stream_table_cfg *a = &c->tables[i];
		if (!a->route_field)
			continue;
		for (size_t k = 0; k < c->n_tables; k++) {
			const stream_table_cfg *b = &c->tables[k];
			size_t n;
			if (k == i)
				continue;
			if (b->route_field ? k > i && may_overlap(a, b)
					   : !strncmp(b->name, a->route_ns, strlen(a->route_ns)) &&
						     b->name[strlen(a->route_ns)] == '.' &&
						     match_name(a, b->name + strlen(a->route_ns) + 1, &n))
				return floe_error_set(err, FLOE_EINVAL,
						      "line %d: table '%s' may name the same tables as "
						      "'%s' (line %d): each table has one entry",
						      b->line, b->name, a->name, a->line);
		}
	}
	return FLOE_OK;
}

/* Is every value in vals a table the catalog lists for the template? A
 * created table it does not list would be created again by every run. */
static int check_listed(floe_pipeline *p, const stream_table_cfg *tpl, char **vals, size_t n,
			floe_error *err)
{
	name_list l = {NULL, 0, 0, tpl};
	int rc = floe_catalog_list_tables(p->cat, tpl->route_ns, collect, &l, err);
	if (rc == FLOE_ENOMEM)
		rc = floe_error_oom(err);
	for (size_t i = 0; !rc && i < n; i++) {
		bool found = false;
		for (size_t k = 0; k < l.n && !found; k++)
			found = !strcmp(l.v[k], vals[i]);
		if (!found)
			rc = floe_error_set(err, FLOE_EIO,
					    "table %s.%s%s%s was created, but the catalog does not list "
					    "it in namespace '%s'",
					    tpl->route_ns, tpl->route_prefix, vals[i], tpl->route_suffix,
					    tpl->route_ns);
	}
	for (size_t k = 0; k < l.n; k++)
		floe_free(l.v[k]);
	floe_free(l.v);
	return rc;
}

int stream_route_commit(floe_pipeline *p, bool *created, floe_error *err)
{
	char key[300];
	int rc = FLOE_OK;
	*created = false;
	snprintf(key, sizeof(key), "floe.route-start.%s", p->pipeline_id);
	for (size_t ri = 0; ri < p->n_routes && !rc; ri++) {
		rt_route *rt = &p->routes[ri];
		const rt_source *src = &p->sources[rt->src];
		/* where this run started: the new tables' records are after it
		 * (Kinesis positions are sequence numbers the offsets do not
		 * carry: its new tables start as a listed table does) */
		int st = src->cfg->type;
		bool keep = src->run_start.n && (st == STREAM_SRC_FILES || st == STREAM_SRC_STDIN ||
						 st == STREAM_SRC_KAFKA);
		floe_buf start;
		floe_buf_init(&start, (size_t)1 << 20);
		if (keep && stream_offsets_write_json(&src->run_start, &start))
			rc = floe_error_oom(err);
		floe_prop extra = {key, floe_buf_cstr(&start)};
		for (size_t i = 0; i < rt->n_fresh && !rc; i++) {
			stream_table_cfg tc;
			floe_table *tbl = NULL;
			floe_arena a;
			floe_arena_init(&a, 1024);
			rc = stream_route_table_cfg(&tc, &a, rt->tpl, rt->fresh[i], err);
			if (!rc) {
				FLOE_INFO("route %s: creating table %s", rt->tpl->name, tc.name);
				rc = stream_table__create(&tbl, p->cat, &tc, keep ? &extra : NULL,
							  err);
			}
			if (!rc) {
				FLOE_INFO("route %s: table %s ready", rt->tpl->name, tc.name);
				*created = true;
			}
			floe_table_free(tbl);
			floe_arena_reset(&a);
		}
		floe_buf_reset(&start);
		if (!rc && rt->n_fresh)
			rc = check_listed(p, rt->tpl, rt->fresh, rt->n_fresh, err);
		if (rc)
			rc = floe_error_prefix(err, rc, "route %s: ", rt->tpl->name);
	}
	return rc;
}
