/*
 * glue.c — the AWS Glue Data Catalog (glue.h) over its JSON API (SigV4,
 * service "glue", X-Amz-Target: AWSGlue.<Operation>).
 *
 * DESIGN: Glue databases are namespaces (one level); an Iceberg table is a
 * Glue table with Parameters table_type=ICEBERG and metadata_location, as
 * Java's GlueCatalog and PyIceberg's write it. floe writes the metadata file
 * itself (NNNNN-<uuid>.metadata.json, as the SQL catalog), then swaps:
 * GetTable, check that metadata_location is still the base's, UpdateTable
 * with previous_metadata_location and the VersionId read (Glue refuses an
 * UpdateTable whose VersionId is not current with
 * ConcurrentModificationException: a lost race). A 5xx or a lost answer
 * after UpdateTable/CreateTable was sent is FLOE_ECOMMITUNKNOWN with the
 * metadata file's location, which the commit path resolves by reading the
 * table again. glue.skip-archive (default true, as Java) is sent as
 * SkipArchive; glue.skip-name-validation skips floe's check of names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/glue.h"
#include "io/aws.h"
#include "io/http.h"
#include "io/sigv4.h"
#include "json/json.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/timeutil.h"

#define RESP_MAX (64u << 20)

typedef struct glue_catalog {
	floe_catalog base;
	floe_http *http;
	floe_aws_provider *aws;
	char *name;
	char *endpoint; /* https://glue.<region>.amazonaws.com or a custom one */
	char *region;
	char *catalog_id; /* NULL: the account's */
	char *warehouse;
	bool skip_archive, skip_name_validation;
	floe_retry retry;
} glue_catalog;

/* ---- requests ---------------------------------------------------------------------- */

typedef struct glue_resp {
	long status;
	bool sent;
	char type[128]; /* the error's __type without its namespace ("EntityNotFoundException") */
	char message[512];
} glue_resp;

static int attempt(glue_catalog *c, const char *op, const floe_buf *body, floe_buf *out,
		   glue_resp *gr, bool once, floe_error *err)
{
	char target[128];
	floe_aws_json_req r = {0};
	floe_http_resp rs;
	snprintf(target, sizeof(target), "AWSGlue.%s", op);
	r.endpoint = c->endpoint;
	r.region = c->region;
	r.service = "glue";
	r.target = target;
	r.body = body->data ? (const char *)body->data : "";
	r.body_len = body->len;
	r.total_timeout_ms = 60000;
	r.at_most_once = once;
	int rc = floe_aws_json_call(c->http, c->aws, &r, out, &rs, err);
	gr->status = rs.status;
	gr->sent = rs.sent;
	gr->type[0] = gr->message[0] = 0;
	if (!rc && rs.status != 200 && out->len)
		floe_aws_json_error(out->data, out->len, gr->type, sizeof(gr->type), gr->message,
				    sizeof(gr->message));
	return rc;
}

/* retry=false: at most once (a swap); else throttling, 5xx and resets are retried */
static int call(glue_catalog *c, const char *op, const floe_buf *body, floe_buf *out,
		glue_resp *gr, bool retry, floe_error *err)
{
	floe_retry r = c->retry;
	floe_retry_start(&r);
	for (;;) {
		floe_error e;
		floe_error_clear(&e);
		floe_buf_clear(out);
		gr->sent = false;
		int rc = attempt(c, op, body, out, gr, !retry, &e);
		bool throttled = !rc && (gr->status == 429 || gr->status >= 500 ||
					 !strcmp(gr->type, "ThrottlingException"));
		bool again = retry ? (rc == FLOE_EIO || rc == FLOE_ETIMEDOUT || throttled)
				   : (rc && !gr->sent && (rc == FLOE_EIO || rc == FLOE_ETIMEDOUT));
		if (!again || !floe_retry_next(&r, -1)) {
			if (rc && err)
				*err = e;
			return rc;
		}
	}
}

static int glue_err(floe_error *err, const glue_resp *gr, const char *what)
{
	int code = !strcmp(gr->type, "EntityNotFoundException")	  ? FLOE_ENOTFOUND
		   : !strcmp(gr->type, "AlreadyExistsException")	  ? FLOE_EEXISTS
		   : !strcmp(gr->type, "ConcurrentModificationException") ? FLOE_ECONFLICT
		   : gr->status == 400					  ? FLOE_EINVAL
									  : FLOE_EIO;
	if (code == FLOE_ECONFLICT)
		return floe_error_set_retryable(err, code, "Glue %s: %s: %s", what, gr->type,
						gr->message);
	return floe_error_set(err, code, "Glue %s: HTTP %ld %s%s%s", what, gr->status, gr->type,
			      gr->message[0] ? ": " : "", gr->message);
}

/* body: {"CatalogId": ..., <rest>} begun; the caller adds fields and ends it */
static void begin(glue_catalog *c, floe_jw *w, floe_buf *b)
{
	floe_buf_clear(b);
	floe_jw_init(w, b, 0);
	floe_jw_obj_begin(w);
	if (c->catalog_id)
		floe_jw_kv_str(w, "CatalogId", c->catalog_id);
}

static int run(glue_catalog *c, const char *op, floe_jw *w, floe_buf *out, glue_resp *gr,
	       bool retry, floe_error *err)
{
	floe_jw_obj_end(w);
	if (floe_jw_finish(w))
		return floe_error_oom(err);
	return call(c, op, w->out, out, gr, retry, err);
}

static int check_ns(const glue_catalog *c, const char *ns, floe_error *err)
{
	if (!ns || !*ns || strchr(ns, '.'))
		return floe_error_set(err, FLOE_EINVAL,
				      "Glue databases are one level: '%s' is not a database name",
				      ns ? ns : "");
	if (c->skip_name_validation)
		return FLOE_OK;
	for (const char *p = ns; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return floe_error_set(err, FLOE_EINVAL,
					      "'%s': Glue names are lower-case letters, digits and "
					      "'_' (glue.skip-name-validation=true to allow others)",
					      ns);
	return FLOE_OK;
}

/* ---- namespaces -------------------------------------------------------------------- */

static int g_create_namespace(floe_catalog *cat, const char *ns, const floe_strmap *props,
			      floe_error *err)
{
	glue_catalog *c = (glue_catalog *)cat;
	floe_buf b, out;
	floe_jw w;
	glue_resp gr;
	int rc;
	if ((rc = check_ns(c, ns, err)))
		return rc;
	floe_buf_init(&b, 1 << 20);
	floe_buf_init(&out, 1 << 20);
	begin(c, &w, &b);
	floe_jw_key(&w, "DatabaseInput");
	floe_jw_obj_begin(&w);
	floe_jw_kv_str(&w, "Name", ns);
	const char *loc = props ? floe_strmap_get(props, "location") : NULL;
	if (loc)
		floe_jw_kv_str(&w, "LocationUri", loc);
	floe_jw_key(&w, "Parameters");
	floe_jw_obj_begin(&w);
	for (size_t i = 0; props && i < props->len; i++)
		if (strcmp(props->items[i].key, "location") != 0)
			floe_jw_kv_str(&w, props->items[i].key, props->items[i].value);
	floe_jw_obj_end(&w);
	floe_jw_obj_end(&w);
	rc = run(c, "CreateDatabase", &w, &out, &gr, false, err);
	if (!rc && gr.status != 200)
		rc = !strcmp(gr.type, "AlreadyExistsException")
			     ? floe_error_set(err, FLOE_EEXISTS, "namespace '%s' already exists", ns)
			     : glue_err(err, &gr, "CreateDatabase");
	floe_buf_reset(&b);
	floe_buf_reset(&out);
	return rc;
}

/* one listing through floe_catalog__list_pages */
typedef struct glue_list {
	glue_catalog *c;
	const char *op, *ns; /* ns: GetTables' DatabaseName */
	floe_buf b, out;
	floe_name_fn fn;
	void *payload;
} glue_list;

static int list_page(void *payload, const char *token, floe_arena *a, const floe_json **doc,
		     floe_error *err)
{
	glue_list *l = payload;
	floe_jw w;
	glue_resp gr;
	floe_json *j;
	int rc;
	begin(l->c, &w, &l->b);
	if (l->ns)
		floe_jw_kv_str(&w, "DatabaseName", l->ns);
	if (token)
		floe_jw_kv_str(&w, "NextToken", token);
	if ((rc = run(l->c, l->op, &w, &l->out, &gr, true, err)))
		return rc;
	if (gr.status != 200)
		return l->ns && !strcmp(gr.type, "EntityNotFoundException")
			       ? floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist",
						l->ns)
			       : glue_err(err, &gr, l->op);
	rc = floe_json_parse(&j, a, floe_buf_cstr(&l->out), l->out.len, NULL, err);
	*doc = j;
	return rc;
}

static int database_items(void *payload, const floe_json *doc, floe_arena *a, floe_error *err)
{
	glue_list *l = payload;
	const floe_json *list = floe_json_get(doc, "DatabaseList");
	int rc = FLOE_OK;
	(void)a;
	(void)err;
	for (const floe_json *d = list ? list->child : NULL; d && !rc; d = d->next) {
		const floe_json *n = floe_json_get(d, "Name");
		if (n && n->type == FLOE_JSON_STRING)
			rc = l->fn(n->s, NULL, l->payload);
	}
	return rc;
}

static int list_run(glue_list *l, floe_list_items_fn items, floe_error *err)
{
	floe_buf_init(&l->b, 1 << 16);
	floe_buf_init(&l->out, RESP_MAX);
	int rc = floe_catalog__list_pages("NextToken", list_page, items, l, err);
	floe_buf_reset(&l->b);
	floe_buf_reset(&l->out);
	return rc;
}

static int g_list_namespaces(floe_catalog *cat, const char *parent, floe_name_fn fn,
			     void *payload, floe_error *err)
{
	if (parent && *parent)
		return FLOE_OK; /* databases have no children */
	glue_list l = {(glue_catalog *)cat, "GetDatabases", NULL, {0}, {0}, fn, payload};
	return list_run(&l, database_items, err);
}

static int g_drop_namespace(floe_catalog *cat, const char *ns, floe_error *err)
{
	glue_catalog *c = (glue_catalog *)cat;
	floe_buf b, out;
	floe_jw w;
	glue_resp gr;
	floe_buf_init(&b, 1 << 16);
	floe_buf_init(&out, 1 << 20);
	begin(c, &w, &b);
	floe_jw_kv_str(&w, "Name", ns);
	int rc = run(c, "DeleteDatabase", &w, &out, &gr, true, err);
	if (!rc && gr.status != 200)
		rc = !strcmp(gr.type, "EntityNotFoundException")
			     ? floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns)
			     : glue_err(err, &gr, "DeleteDatabase");
	floe_buf_reset(&b);
	floe_buf_reset(&out);
	return rc;
}

static int get_database(glue_catalog *c, const char *ns, floe_strmap *props, floe_error *err)
{
	floe_buf b, out;
	floe_jw w;
	glue_resp gr;
	floe_buf_init(&b, 1 << 16);
	floe_buf_init(&out, RESP_MAX);
	begin(c, &w, &b);
	floe_jw_kv_str(&w, "Name", ns);
	int rc = run(c, "GetDatabase", &w, &out, &gr, true, err);
	if (!rc && gr.status != 200)
		rc = !strcmp(gr.type, "EntityNotFoundException")
			     ? floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns)
			     : glue_err(err, &gr, "GetDatabase");
	if (!rc && props) {
		floe_arena a;
		floe_json *j;
		floe_arena_init(&a, 4096);
		rc = floe_json_parse(&j, &a, floe_buf_cstr(&out), out.len, NULL, err);
		const floe_json *d = rc ? NULL : floe_json_get(j, "Database");
		const floe_json *p = d ? floe_json_get(d, "Parameters") : NULL;
		const floe_json *loc = d ? floe_json_get(d, "LocationUri") : NULL;
		for (const floe_json *kv = p ? p->child : NULL; kv && !rc; kv = kv->next)
			if (kv->type == FLOE_JSON_STRING && floe_strmap_set(props, kv->key, kv->s))
				rc = floe_error_oom(err);
		if (!rc && loc && loc->type == FLOE_JSON_STRING && loc->len &&
		    floe_strmap_set(props, "location", loc->s))
			rc = floe_error_oom(err);
		floe_arena_reset(&a);
	}
	floe_buf_reset(&b);
	floe_buf_reset(&out);
	return rc;
}

static int g_namespace_exists(floe_catalog *cat, const char *ns, bool *exists, floe_error *err)
{
	floe_error e;
	floe_error_clear(&e);
	int rc = get_database((glue_catalog *)cat, ns, NULL, &e);
	*exists = rc == 0;
	if (rc == FLOE_ENOTFOUND)
		return FLOE_OK;
	if (rc && err)
		*err = e;
	return rc;
}

static int g_load_ns_props(floe_catalog *cat, const char *ns, floe_strmap *out, floe_error *err)
{
	return get_database((glue_catalog *)cat, ns, out, err);
}

static int g_update_ns_props(floe_catalog *cat, const char *ns, const floe_strmap *set,
			     const char *const *remove, size_t n_remove, floe_error *err)
{
	glue_catalog *c = (glue_catalog *)cat;
	floe_strmap cur;
	floe_buf b, out;
	floe_jw w;
	glue_resp gr;
	floe_strmap_init(&cur);
	int rc = get_database(c, ns, &cur, err);
	if (rc) {
		floe_strmap_reset(&cur);
		return rc;
	}
	for (size_t i = 0; set && i < set->len && !rc; i++)
		rc = floe_strmap_set(&cur, set->items[i].key, set->items[i].value);
	for (size_t i = 0; i < n_remove; i++)
		(void)floe_strmap_remove(&cur, remove[i]);
	floe_buf_init(&b, 1 << 20);
	floe_buf_init(&out, 1 << 20);
	begin(c, &w, &b);
	floe_jw_kv_str(&w, "Name", ns);
	floe_jw_key(&w, "DatabaseInput");
	floe_jw_obj_begin(&w);
	floe_jw_kv_str(&w, "Name", ns);
	const char *loc = floe_strmap_get(&cur, "location");
	if (loc)
		floe_jw_kv_str(&w, "LocationUri", loc);
	floe_jw_key(&w, "Parameters");
	floe_jw_obj_begin(&w);
	for (size_t i = 0; i < cur.len; i++)
		if (strcmp(cur.items[i].key, "location") != 0)
			floe_jw_kv_str(&w, cur.items[i].key, cur.items[i].value);
	floe_jw_obj_end(&w);
	floe_jw_obj_end(&w);
	if (rc)
		rc = floe_error_oom(err);
	else if (!(rc = run(c, "UpdateDatabase", &w, &out, &gr, true, err)) && gr.status != 200)
		rc = glue_err(err, &gr, "UpdateDatabase");
	floe_strmap_reset(&cur);
	floe_buf_reset(&b);
	floe_buf_reset(&out);
	return rc;
}

/* ---- tables ------------------------------------------------------------------------- */

static bool is_iceberg(const floe_json *t)
{
	const floe_json *p = floe_json_get(t, "Parameters");
	const floe_json *tt = p ? floe_json_get(p, "table_type") : NULL;
	return tt && tt->type == FLOE_JSON_STRING && floe_str_ieq(tt->s, "ICEBERG");
}

static int table_items(void *payload, const floe_json *doc, floe_arena *a, floe_error *err)
{
	glue_list *l = payload;
	const floe_json *list = floe_json_get(doc, "TableList");
	int rc = FLOE_OK;
	(void)a;
	(void)err;
	for (const floe_json *t = list ? list->child : NULL; t && !rc; t = t->next) {
		const floe_json *n = floe_json_get(t, "Name");
		if (n && n->type == FLOE_JSON_STRING && is_iceberg(t))
			rc = l->fn(l->ns, n->s, l->payload);
	}
	return rc;
}

static int g_list_tables(floe_catalog *cat, const char *ns, floe_name_fn fn, void *payload,
			 floe_error *err)
{
	glue_list l = {(glue_catalog *)cat, "GetTables", ns, {0}, {0}, fn, payload};
	return list_run(&l, table_items, err);
}

/* GetTable: the metadata location and the VersionId (malloc'd) */
static int get_table(glue_catalog *c, const char *ns, const char *name, char **location,
		     char **version, floe_error *err)
{
	floe_buf b, out;
	floe_jw w;
	glue_resp gr;
	*location = NULL;
	if (version)
		*version = NULL;
	floe_buf_init(&b, 1 << 16);
	floe_buf_init(&out, RESP_MAX);
	begin(c, &w, &b);
	floe_jw_kv_str(&w, "DatabaseName", ns);
	floe_jw_kv_str(&w, "Name", name);
	int rc = run(c, "GetTable", &w, &out, &gr, true, err);
	if (!rc && gr.status != 200)
		rc = !strcmp(gr.type, "EntityNotFoundException")
			     ? floe_error_set(err, FLOE_ENOTFOUND, "table '%s.%s' does not exist", ns,
					      name)
			     : glue_err(err, &gr, "GetTable");
	if (!rc) {
		floe_arena a;
		floe_json *j;
		floe_arena_init(&a, 4096);
		rc = floe_json_parse(&j, &a, floe_buf_cstr(&out), out.len, NULL, err);
		const floe_json *t = rc ? NULL : floe_json_get(j, "Table");
		const floe_json *p = t ? floe_json_get(t, "Parameters") : NULL;
		const floe_json *ml = p ? floe_json_get(p, "metadata_location") : NULL;
		const floe_json *v = t ? floe_json_get(t, "VersionId") : NULL;
		if (!rc && (!t || !is_iceberg(t)))
			rc = floe_error_set(err, FLOE_ENOTFOUND,
					    "'%s.%s' is not an Iceberg table in Glue", ns, name);
		else if (!rc && (!ml || ml->type != FLOE_JSON_STRING))
			rc = floe_error_corrupt(err, "Glue table '%s.%s' has no metadata_location",
						ns, name);
		else if (!rc && (!(*location = floe_strdup(ml->s)) ||
				 (version && v && v->type == FLOE_JSON_STRING &&
				  !(*version = floe_strdup(v->s)))))
			rc = floe_error_oom(err);
		floe_arena_reset(&a);
	}
	floe_buf_reset(&b);
	floe_buf_reset(&out);
	return rc;
}

static int g_load_table(floe_catalog *cat, const char *ns, const char *name, floe_metadata **out,
			floe_error *err)
{
	char *loc;
	int rc = get_table((glue_catalog *)cat, ns, name, &loc, NULL, err);
	if (rc)
		return rc;
	rc = floe_metadata_read(cat->io, loc, out, err);
	floe_free(loc);
	return rc ? floe_error_prefix(err, rc, "table '%s.%s': ", ns, name) : FLOE_OK;
}

static int write_metadata_file(floe_fileio *io, const floe_metadata *base,
			       const floe_metadata *next, char **out, floe_error *err)
{
	int64_t v = base ? floe_metadata_file_version(base->metadata_location) + 1 : 0;
	char *dir = floe_metadata_dir(next);
	char uuid[37];
	int rc;
	if (!dir)
		return floe_error_oom(err);
	if (v < 0)
		v = 0;
	floe_uuid_v4_str(uuid);
	size_t n = strlen(dir) + 80;
	if (!(*out = floe_malloc(n))) {
		floe_free(dir);
		return floe_error_oom(err);
	}
	snprintf(*out, n, "%s/%05lld-%s%s", dir, (long long)v, uuid,
		 floe_metadata_file_suffix(next));
	floe_free(dir);
	rc = floe_metadata_write_file(io, *out, next, err);
	if (rc) {
		floe_free(*out);
		*out = NULL;
	}
	return rc;
}

static void table_input(floe_jw *w, const char *name, const char *loc, const char *prev,
			const floe_metadata *next)
{
	floe_jw_key(w, "TableInput");
	floe_jw_obj_begin(w);
	floe_jw_kv_str(w, "Name", name);
	floe_jw_kv_str(w, "TableType", "EXTERNAL_TABLE");
	floe_jw_key(w, "StorageDescriptor");
	floe_jw_obj_begin(w);
	floe_jw_kv_str(w, "Location", next->location);
	floe_jw_obj_end(w);
	floe_jw_key(w, "Parameters");
	floe_jw_obj_begin(w);
	floe_jw_kv_str(w, "table_type", "ICEBERG");
	floe_jw_kv_str(w, "metadata_location", loc);
	if (prev)
		floe_jw_kv_str(w, "previous_metadata_location", prev);
	floe_jw_obj_end(w);
	floe_jw_obj_end(w);
}

static int g_commit(floe_catalog *cat, const char *ns, const char *name, const floe_metadata *base,
		    const floe_metadata *next, char **location, floe_error *err)
{
	glue_catalog *c = (glue_catalog *)cat;
	char *loc = NULL, *cur = NULL, *version = NULL;
	floe_buf b, out;
	floe_jw w;
	glue_resp gr;
	int rc;
	*location = NULL;
	if ((rc = check_ns(c, ns, err)))
		return rc;
	if (base) {
		/* the swap's compare: Glue must still point at the base */
		if ((rc = get_table(c, ns, name, &cur, &version, err)))
			return rc;
		bool same = !strcmp(cur, base->metadata_location);
		floe_free(cur);
		if (!same) {
			floe_free(version);
			return floe_error_set_retryable(err, FLOE_ECONFLICT,
							"table '%s.%s' changed since it was loaded "
							"(another writer committed first)",
							ns, name);
		}
	}
	if ((rc = write_metadata_file(cat->io, base, next, &loc, err))) {
		floe_free(version);
		return rc;
	}
	if (floe_catalog__fault_lose_swap(cat)) {
		floe_free(version);
		*location = loc;
		return floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				      "injected fault: the swap was lost on its way to the catalog");
	}
	floe_buf_init(&b, 1 << 20);
	floe_buf_init(&out, 1 << 20);
	begin(c, &w, &b);
	floe_jw_kv_str(&w, "DatabaseName", ns);
	table_input(&w, name, loc, base ? base->metadata_location : NULL, next);
	if (base) {
		if (version)
			floe_jw_kv_str(&w, "VersionId", version);
		floe_jw_kv_bool(&w, "SkipArchive", c->skip_archive);
	}
	floe_error ce;
	floe_error_clear(&ce);
	rc = run(c, base ? "UpdateTable" : "CreateTable", &w, &out, &gr, false, &ce);
	if (rc) {
		rc = gr.sent ? floe_error_set(err, FLOE_ECOMMITUNKNOWN,
					      "Glue %s of %s.%s sent, no answer: %s",
					      base ? "UpdateTable" : "CreateTable", ns, name, ce.msg)
			     : floe_error_set_retryable(err, rc, "Glue commit of %s.%s not sent: %s",
							ns, name, ce.msg);
	} else if (gr.status >= 500) {
		rc = floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				    "Glue commit of %s.%s: HTTP %ld (outcome unknown) %s", ns, name,
				    gr.status, gr.type);
	} else if (gr.status != 200) {
		if (!base && !strcmp(gr.type, "AlreadyExistsException"))
			rc = floe_error_set(err, FLOE_EEXISTS, "table '%s.%s' already exists", ns,
					    name);
		else if (!base && !strcmp(gr.type, "EntityNotFoundException"))
			rc = floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns);
		else
			rc = glue_err(err, &gr, base ? "UpdateTable" : "CreateTable");
	}
	floe_free(version);
	floe_buf_reset(&b);
	floe_buf_reset(&out);
	if (rc == FLOE_ECOMMITUNKNOWN) {
		*location = loc;
		return rc;
	}
	if (rc) {
		/* Glue said no: nothing points at the file */
		floe_io_remove_quiet(cat->io, loc);
		floe_free(loc);
		return rc;
	}
	*location = loc;
	return FLOE_OK;
}

static int g_drop_table(floe_catalog *cat, const char *ns, const char *name, floe_error *err)
{
	glue_catalog *c = (glue_catalog *)cat;
	floe_buf b, out;
	floe_jw w;
	glue_resp gr;
	floe_buf_init(&b, 1 << 16);
	floe_buf_init(&out, 1 << 20);
	begin(c, &w, &b);
	floe_jw_kv_str(&w, "DatabaseName", ns);
	floe_jw_kv_str(&w, "Name", name);
	int rc = run(c, "DeleteTable", &w, &out, &gr, true, err);
	if (!rc && gr.status != 200)
		rc = !strcmp(gr.type, "EntityNotFoundException")
			     ? floe_error_set(err, FLOE_ENOTFOUND, "table '%s.%s' does not exist", ns,
					      name)
			     : glue_err(err, &gr, "DeleteTable");
	floe_buf_reset(&b);
	floe_buf_reset(&out);
	return rc;
}

/* Glue has no rename: create the new entry on the same metadata, then drop the old */
static int g_rename(floe_catalog *cat, const char *from_ns, const char *from_name,
		    const char *to_ns, const char *to_name, floe_error *err)
{
	glue_catalog *c = (glue_catalog *)cat;
	floe_metadata *m = NULL;
	floe_buf b, out;
	floe_jw w;
	glue_resp gr;
	int rc;
	if ((rc = check_ns(c, to_ns, err)) || (rc = g_load_table(cat, from_ns, from_name, &m, err)))
		return rc;
	floe_buf_init(&b, 1 << 20);
	floe_buf_init(&out, 1 << 20);
	begin(c, &w, &b);
	floe_jw_kv_str(&w, "DatabaseName", to_ns);
	table_input(&w, to_name, m->metadata_location, NULL, m);
	rc = run(c, "CreateTable", &w, &out, &gr, false, err);
	if (!rc && gr.status != 200)
		rc = !strcmp(gr.type, "AlreadyExistsException")
			     ? floe_error_set(err, FLOE_EEXISTS, "table '%s.%s' already exists", to_ns,
					      to_name)
			     : glue_err(err, &gr, "CreateTable");
	if (!rc)
		rc = g_drop_table(cat, from_ns, from_name, err);
	floe_metadata_free(m);
	floe_buf_reset(&b);
	floe_buf_reset(&out);
	return rc;
}

static int g_default_location(floe_catalog *cat, const char *ns, const char *name, char **out,
			      floe_error *err)
{
	glue_catalog *c = (glue_catalog *)cat;
	floe_strmap m;
	floe_strmap_init(&m);
	int rc = get_database(c, ns, &m, err);
	const char *base = rc ? NULL : floe_strmap_get(&m, "location");
	floe_buf b;
	floe_buf_init(&b, 1 << 16);
	if (!rc && !base && !c->warehouse)
		rc = floe_error_set(err, FLOE_EINVAL,
				    "Glue: no location for %s.%s (no --warehouse and the database "
				    "has no LocationUri)",
				    ns, name);
	if (!rc) {
		const char *root = base ? base : c->warehouse;
		size_t n = strlen(root);
		while (n && root[n - 1] == '/')
			n--;
		/* Java's GlueCatalog: <warehouse>/<db>.db/<table> */
		rc = base ? floe_buf_printf(&b, "%.*s/%s", (int)n, root, name)
			  : floe_buf_printf(&b, "%.*s/%s.db/%s", (int)n, root, ns, name);
		if (rc || !(*out = floe_strdup(floe_buf_cstr(&b))))
			rc = floe_error_oom(err);
	}
	floe_strmap_reset(&m);
	floe_buf_reset(&b);
	return rc;
}

static void g_free(floe_catalog *cat)
{
	glue_catalog *c = (glue_catalog *)cat;
	if (!c)
		return;
	floe_io_free(cat->io);
	floe_aws_provider_free(c->aws);
	floe_http_free(c->http);
	floe_free(c->name);
	floe_free(c->endpoint);
	floe_free(c->region);
	floe_free(c->catalog_id);
	floe_free(c->warehouse);
	for (size_t i = 0; i < cat->open_props.len; i++)
		if (cat->open_props.items[i].value)
			memset(cat->open_props.items[i].value, 0, strlen(cat->open_props.items[i].value));
	floe_strmap_reset(&cat->open_props);
	floe_free(cat->open_uri);
	floe_free(cat->open_warehouse);
	floe_free(cat->lock_uri);
	floe_free(c);
}

static const floe_catalog_ops glue_ops = {
	g_create_namespace, g_list_namespaces, g_drop_namespace, g_namespace_exists,
	g_load_ns_props,    g_update_ns_props, g_list_tables,	 g_load_table,
	g_commit,	    g_drop_table,      g_rename,	 g_default_location,
	g_free, NULL, /* no multi-table transactions */
};

static const char *gprop(const floe_strmap *m, const char *k)
{
	const char *v = m ? floe_strmap_get(m, k) : NULL;
	return v && *v ? v : NULL;
}

int floe_glue_catalog_open(floe_catalog **out, const floe_glue_catalog_opts *opts,
			   floe_error *err)
{
	const floe_strmap *p = opts->props;
	int rc;
	*out = NULL;
	glue_catalog *c = floe_calloc(1, sizeof(*c));
	if (!c)
		return floe_error_oom(err);
	floe_strmap_init(&c->base.open_props);
	c->base.ops = &glue_ops;
	c->base.kind = "glue";
	c->name = floe_strdup(opts->name && *opts->name ? opts->name : "default");
	c->base.name = c->name;
	c->http = floe_http_new();
	if (!c->name || !c->http || (p && floe_strmap_copy(&c->base.open_props, p))) {
		g_free(&c->base);
		return floe_error_oom(err);
	}
	if (opts->warehouse) {
		size_t n = strlen(opts->warehouse);
		while (n && opts->warehouse[n - 1] == '/')
			n--;
		c->warehouse = floe_strndup(opts->warehouse, n);
		c->base.open_warehouse = floe_strdup(opts->warehouse);
		if (!c->warehouse || !c->base.open_warehouse) {
			g_free(&c->base);
			return floe_error_oom(err);
		}
	}
	c->skip_archive = p ? floe_strmap_get_bool(p, "glue.skip-archive", true) : true;
	c->skip_name_validation = p ? floe_strmap_get_bool(p, "glue.skip-name-validation", false)
				    : false;
	c->retry.max_attempts = 6;
	c->retry.min_wait_ms = 100;
	c->retry.max_wait_ms = 5000;
	c->retry.deadline_ms = 120000;
	floe_aws_opts ao = {0};
	ao.access_key = gprop(p, "glue.access-key-id");
	ao.secret_key = gprop(p, "glue.secret-access-key");
	ao.token = gprop(p, "glue.session-token");
	ao.region = gprop(p, "glue.region") ? gprop(p, "glue.region") : gprop(p, "client.region");
	ao.profile = gprop(p, "client.profile");
	if ((rc = floe_aws_provider_new(&c->aws, &ao, c->http, err))) {
		g_free(&c->base);
		return rc;
	}
	c->region = floe_strdup(floe_aws_provider_region(c->aws));
	const char *ep = gprop(p, "glue.endpoint");
	if (!ep)
		ep = opts->uri && *opts->uri ? opts->uri : NULL;
	if (!ep)
		ep = floe_aws_provider_endpoint(c->aws, "GLUE", "glue");
	char dflt[256];
	if (!ep) {
		snprintf(dflt, sizeof(dflt), "https://glue.%s.amazonaws.com", c->region ? c->region : "");
		ep = dflt;
	}
	if (strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8)) {
		g_free(&c->base);
		return floe_error_set(err, FLOE_EINVAL, "Glue endpoint '%s': expected http(s)://...",
				      ep);
	}
	c->endpoint = floe_strdup(ep);
	c->base.open_uri = opts->uri ? floe_strdup(opts->uri) : NULL;
	const char *id = gprop(p, "glue.id");
	if (id)
		c->catalog_id = floe_strdup(id);
	if (!c->region || !c->endpoint || (opts->uri && !c->base.open_uri) ||
	    (id && !c->catalog_id)) {
		g_free(&c->base);
		return floe_error_oom(err);
	}
	if (opts->io)
		c->base.io = opts->io;
	else if ((rc = floe_io_default_new(&c->base.io, p, err))) {
		g_free(&c->base);
		return rc;
	}
	*out = &c->base;
	return FLOE_OK;
}
