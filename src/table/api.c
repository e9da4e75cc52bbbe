/*
 * api.c — the public catalog and table API (floe/catalog.h, floe/table.h)
 * on top of the internal layers.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/glue.h"
#include "catalog/rest.h"
#include "iceberg/metrics.h"
#include "io/aws_secret.h"
#include "iceberg/props.h"
#include "iceberg/transform.h"
#include "iceberg/value.h"
#include "json/json.h"
#include "table/commit.h"
#include "table/create.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/opts.h"
#include "util/hmap.h"
#include "util/str.h"
#include "util/timeutil.h"

/* ---- catalogs ------------------------------------------------------------------- */

static int catalog_open(floe_catalog **out, const floe_catalog_config *cfg, floe_error *err);

/*
 * ${secret:NAME#field} in the URI and the properties are resolved here,
 * once, before the catalog (or anything of it) is opened; the resolved
 * copies are wiped after the open (the catalog keeps what it needs to
 * reopen itself, never in a table's metadata).
 */
int floe_catalog_open(floe_catalog **out, const floe_catalog_config *cfg, floe_error *err)
{
	FLOE_CHECK_OPTS(cfg, "floe_catalog_config", "FLOE_CATALOG_CONFIG_INIT", err);
	bool refs = floe_secret_has_ref(cfg->uri);
	for (size_t i = 0; i < cfg->n_props && !refs; i++)
		refs = floe_secret_has_ref(cfg->props[i].value);
	if (!refs)
		return catalog_open(out, cfg, err);
	*out = NULL;
	floe_catalog_config c = *cfg;
	floe_prop *props = cfg->n_props ? floe_calloc(cfg->n_props, sizeof(*props)) : NULL;
	char *uri = NULL;
	int rc = FLOE_OK;
	if (cfg->n_props && !props)
		return floe_error_oom(err);
	/* a SQL catalog's URI stays a template: the database layer resolves it
	 * (from the cache) each time it opens the database, so that neither the
	 * catalog nor its lock URI holds the password */
	const char *type = cfg->type && *cfg->type ? cfg->type : "sql";
	bool sql = floe_str_ieq(type, "sql") || floe_str_ieq(type, "jdbc") ||
		   floe_str_ieq(type, "sqlite") || floe_str_ieq(type, "postgresql");
	if (sql && floe_secret_has_ref(cfg->uri) &&
	    (rc = floe_secret_expand(&uri, cfg->uri, true, err))) /* errors before anything opens */
		rc = floe_error_prefix(err, rc, "catalog URI: ");
	floe_secret_free(uri);
	uri = NULL;
	if (rc)
		goto done;
	if (!sql && (rc = floe_secret_expand(&uri, cfg->uri, true, err))) {
		rc = floe_error_prefix(err, rc, "catalog URI: ");
		goto done;
	}
	if (uri)
		c.uri = uri;
	for (size_t i = 0; i < cfg->n_props; i++) {
		char *v = NULL;
		props[i] = cfg->props[i];
		if ((rc = floe_secret_expand(&v, cfg->props[i].value, false, err))) {
			rc = floe_error_prefix(err, rc, "catalog property '%s': ",
					       cfg->props[i].key ? cfg->props[i].key : "");
			goto done;
		}
		if (v)
			props[i].value = v;
	}
	c.props = props;
	rc = catalog_open(out, &c, err);
done:
	for (size_t i = 0; props && i < cfg->n_props; i++)
		if (props[i].value && props[i].value != cfg->props[i].value)
			floe_secret_free((char *)props[i].value);
	floe_free(props);
	floe_secret_free(uri);
	return rc;
}

static int catalog_open(floe_catalog **out, const floe_catalog_config *cfg, floe_error *err)
{
	const char *type = cfg->type && *cfg->type ? cfg->type : "sql";
	if (floe_str_ieq(type, "sql") || floe_str_ieq(type, "jdbc") || floe_str_ieq(type, "sqlite") ||
	    floe_str_ieq(type, "postgresql")) {
		floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
		o.name = cfg->name;
		o.uri = cfg->uri;
		o.warehouse = cfg->warehouse;
		return floe_sql_catalog_open(out, &o, err);
	}
	if (floe_str_ieq(type, "filesystem") || floe_str_ieq(type, "hadoop")) {
		floe_fs_catalog_opts o = FLOE_FS_CATALOG_OPTS_INIT;
		o.name = cfg->name;
		o.warehouse = cfg->warehouse;
		return floe_fs_catalog_open(out, &o, err);
	}
	if (floe_str_ieq(type, "rest") || floe_str_ieq(type, "glue")) {
		floe_strmap props;
		floe_strmap_init(&props);
		for (size_t i = 0; i < cfg->n_props; i++)
			if (cfg->props[i].key &&
			    floe_strmap_set(&props, cfg->props[i].key,
					    cfg->props[i].value ? cfg->props[i].value : "")) {
				floe_strmap_reset(&props);
				return floe_error_oom(err);
			}
		int rc;
		if (floe_str_ieq(type, "rest")) {
			floe_rest_catalog_opts o = FLOE_REST_CATALOG_OPTS_INIT;
			o.name = cfg->name;
			o.uri = cfg->uri;
			o.warehouse = cfg->warehouse;
			o.props = &props;
			rc = floe_rest_catalog_open(out, &o, err);
		} else {
			floe_glue_catalog_opts o = FLOE_GLUE_CATALOG_OPTS_INIT;
			o.name = cfg->name;
			o.uri = cfg->uri;
			o.warehouse = cfg->warehouse;
			o.props = &props;
			rc = floe_glue_catalog_open(out, &o, err);
		}
		floe_strmap_reset(&props);
		return rc;
	}
	return floe_error_set(err, FLOE_EINVAL,
			      "unknown catalog type '%s' (sql, filesystem, rest or glue)", type);
}

static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int floe_catalog_open_default(floe_catalog **out, const char *dir, floe_error *err)
{
	char wh[PATH_MAX], abs[PATH_MAX], uri[PATH_MAX + 16], db[PATH_MAX + 16];
	snprintf(wh, sizeof(wh), "%s/warehouse", dir && *dir ? dir : ".");
	if (mkdirs(wh) != 0)
		return floe_error_set(err, FLOE_EIO, "cannot create '%s': %s", wh, strerror(errno));
	if (!realpath(wh, abs))
		return floe_error_set(err, FLOE_EIO, "cannot resolve '%s': %s", wh, strerror(errno));
	snprintf(uri, sizeof(uri), "file://%s", abs);
	snprintf(db, sizeof(db), "%s/catalog.db", abs);
	floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
	o.name = "default";
	o.uri = db;
	o.warehouse = uri;
	return floe_sql_catalog_open(out, &o, err);
}

int floe_catalog_open_default_existing(floe_catalog **out, const char *dir, floe_error *err)
{
	char db[PATH_MAX + 32], abs[PATH_MAX];
	struct stat st;
	snprintf(db, sizeof(db), "%s/warehouse/catalog.db", dir && *dir ? dir : ".");
	if (stat(db, &st) != 0)
		return floe_error_set(err, FLOE_ENOTFOUND,
				      "no catalog: the embedded default '%s' does not exist (create "
				      "a namespace or table first, or name a catalog with "
				      "--catalog-uri)",
				      db);
	snprintf(db, sizeof(db), "%s/warehouse", dir && *dir ? dir : ".");
	if (!realpath(db, abs))
		return floe_error_set(err, FLOE_EIO, "cannot resolve '%s': %s", db, strerror(errno));
	return floe_catalog_open_default(out, dir, err);
}

/* ---- table creation ----------------------------------------------------------------- */

int floe_table_create(floe_table **out, floe_catalog *cat, const char *ns, const char *name,
		      const floe_table_create_opts *opts, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_table_create_opts", "FLOE_TABLE_CREATE_OPTS_INIT", err);
	floe_arena a;
	floe_schema *schema = NULL;
	floe_partition_spec *spec = NULL;
	floe_sort_order *order = NULL;
	floe_strmap props;
	int rc;
	if (!opts->schema || !*opts->schema)
		return floe_error_set(err, FLOE_EINVAL, "a table needs a schema");
	floe_arena_init(&a, 0);
	floe_strmap_init(&props);
	const char *s = opts->schema;
	while (*s == ' ' || *s == '\n' || *s == '\t')
		s++;
	if (*s == '{') {
		floe_json *j;
		rc = floe_json_parse(&j, &a, s, strlen(s), NULL, err);
		if (!rc)
			rc = floe_schema_from_json(&schema, &a, j, err);
		if (rc)
			floe_error_prefix(err, rc, "schema JSON: ");
	} else {
		rc = floe_schema_parse_compact(&schema, &a, s, err);
	}
	int32_t lp = FLOE_PARTITION_FIELD_ID_START - 1;
	if (!rc && opts->partition_by && *opts->partition_by)
		rc = floe_spec_parse_expr(&spec, &a, opts->partition_by, schema, 0, &lp, err);
	if (!rc && opts->sort_by && *opts->sort_by)
		rc = floe_sort_order_parse_expr(&order, &a, opts->sort_by, schema, 1, err);
	for (size_t i = 0; i < opts->n_properties && !rc; i++)
		if (floe_strmap_set(&props, opts->properties[i].key, opts->properties[i].value))
			rc = floe_error_oom(err);
	if (!rc) {
		floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
		ts.schema = schema;
		ts.spec = spec;
		ts.sort_order = order;
		ts.properties = &props;
		ts.format_version = opts->format_version;
		ts.location = opts->location;
		rc = floe_table__create(out, cat, ns, name, &ts, err);
	}
	floe_strmap_reset(&props);
	floe_arena_reset(&a);
	return rc;
}

/* ---- describing --------------------------------------------------------------------- */

typedef struct out_buf {
	floe_buf b;
	int rc;
} out_buf;

static int flush(out_buf *o, floe_write_fn fn, void *payload)
{
	int rc = o->rc ? o->rc : fn(floe_buf_cstr(&o->b), o->b.len, payload);
	floe_buf_reset(&o->b);
	return rc;
}

static void outf(out_buf *o, const char *fmt, ...) FLOE_PRINTF(2, 3);
static void outf(out_buf *o, const char *fmt, ...)
{
	va_list ap;
	if (o->rc)
		return;
	va_start(ap, fmt);
	o->rc = floe_buf_vprintf(&o->b, fmt, ap);
	va_end(ap);
}

int floe_table_metadata_json(floe_table *t, int indent, floe_write_fn fn, void *payload,
			     floe_error *err)
{
	out_buf o = {{0}, 0};
	floe_buf_init(&o.b, 0);
	o.rc = floe_metadata_write(&o.b, floe_table_metadata(t), indent);
	if (!o.rc)
		o.rc = floe_buf_putc(&o.b, '\n');
	int rc = flush(&o, fn, payload);
	return rc ? floe_error_set(err, rc, "cannot write metadata JSON") : FLOE_OK;
}

static void type_str(out_buf *o, const floe_type *t)
{
	if (o->rc)
		return;
	switch (t->id) {
	case FLOE_T_LIST:
		outf(o, "list<");
		type_str(o, t->element);
		outf(o, ">");
		break;
	case FLOE_T_MAP:
		outf(o, "map<");
		type_str(o, t->key);
		outf(o, ", ");
		type_str(o, t->value);
		outf(o, ">");
		break;
	case FLOE_T_STRUCT: outf(o, "struct"); break;
	default: o->rc = floe_type_format(&o->b, t);
	}
}

static void describe_fields(out_buf *o, const floe_type *st, int depth)
{
	for (size_t i = 0; i < st->n_fields; i++) {
		const floe_field *f = &st->fields[i];
		out_buf t = {{0}, 0};
		floe_buf_init(&t.b, 0);
		type_str(&t, f->type);
		outf(o, "  %5d  %*s%-*s %-16s %s%s%s\n", f->id, depth * 2, "", 24 - depth * 2, f->name,
		     floe_buf_cstr(&t.b), f->required ? "required" : "optional", f->doc ? "  -- " : "",
		     f->doc ? f->doc : "");
		if (t.rc && !o->rc)
			o->rc = t.rc;
		floe_buf_reset(&t.b);
		const floe_type *inner = f->type;
		while (inner->id == FLOE_T_LIST || inner->id == FLOE_T_MAP)
			inner = inner->id == FLOE_T_LIST ? inner->element : inner->value;
		if (inner->id == FLOE_T_STRUCT)
			describe_fields(o, inner, depth + 1);
	}
}

static void transform_str(out_buf *o, const floe_transform *tr, const char *col)
{
	switch (tr->kind) {
	case FLOE_TR_IDENTITY: outf(o, "%s", col); break;
	case FLOE_TR_BUCKET: outf(o, "bucket(%d, %s)", tr->param, col); break;
	case FLOE_TR_TRUNCATE: outf(o, "truncate(%d, %s)", tr->param, col); break;
	case FLOE_TR_YEAR: outf(o, "year(%s)", col); break;
	case FLOE_TR_MONTH: outf(o, "month(%s)", col); break;
	case FLOE_TR_DAY: outf(o, "day(%s)", col); break;
	case FLOE_TR_HOUR: outf(o, "hour(%s)", col); break;
	case FLOE_TR_VOID: outf(o, "void(%s)", col); break;
	default: outf(o, "%s(%s)", tr->text ? tr->text : "?", col);
	}
}

int floe_table_describe(floe_table *t, floe_write_fn fn, void *payload, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	const floe_partition_spec *spec = floe_metadata_default_spec(m);
	const floe_sort_order *order = floe_metadata_sort_order(m, m->default_sort_order_id);
	out_buf o = {{0}, 0};
	char ts[64];
	floe_buf_init(&o.b, 0);
	if (floe_table_namespace(t))
		outf(&o, "Table        %s.%s\n", floe_table_namespace(t), floe_table_name(t));
	outf(&o, "Location     %s\n", m->location);
	outf(&o, "Metadata     %s\n", m->metadata_location ? m->metadata_location : "-");
	outf(&o, "Format       v%d\n", m->format_version);
	outf(&o, "UUID         %s\n", m->table_uuid ? m->table_uuid : "-");
	floe_format_timestamp_us(ts, sizeof(ts), m->last_updated_ms * 1000, 0);
	outf(&o, "Updated      %sZ\n", ts);
	outf(&o, "\nSchema %d (last column id %d)\n", s->schema_id, m->last_column_id);
	describe_fields(&o, s->root, 0);
	if (s->n_identifier_field_ids) {
		outf(&o, "  identifier fields:");
		for (size_t i = 0; i < s->n_identifier_field_ids; i++) {
			const floe_schema_entry *e = floe_schema_find(s, s->identifier_field_ids[i]);
			outf(&o, " %s", e ? e->full_name : "?");
		}
		outf(&o, "\n");
	}
	outf(&o, "\nPartition spec %d: ", spec->spec_id);
	if (spec->n_fields == 0)
		outf(&o, "unpartitioned");
	for (size_t i = 0; i < spec->n_fields; i++) {
		const floe_partition_field *f = &spec->fields[i];
		const floe_schema_entry *e = floe_schema_find(s, f->source_id);
		outf(&o, "%s", i ? ", " : "");
		transform_str(&o, &f->transform, e ? e->full_name : "?");
		outf(&o, " as %s", f->name);
	}
	outf(&o, "\nSort order %d: ", order ? order->order_id : 0);
	if (!order || order->n_fields == 0)
		outf(&o, "unsorted");
	for (size_t i = 0; order && i < order->n_fields; i++) {
		const floe_sort_field *f = &order->fields[i];
		const floe_schema_entry *e = floe_schema_find(s, f->source_id);
		outf(&o, "%s", i ? ", " : "");
		transform_str(&o, &f->transform, e ? e->full_name : "?");
		outf(&o, " %s NULLS %s", f->descending ? "DESC" : "ASC",
		     f->nulls_first ? "FIRST" : "LAST");
	}
	outf(&o, "\n\nProperties%s\n", m->n_properties ? "" : ": none");
	for (size_t i = 0; i < m->n_properties; i++) {
		const floe_prop_def *d = floe_prop_find(m->properties[i].key);
		outf(&o, "  %s = %s%s\n", m->properties[i].key, m->properties[i].value,
		     !d ? "  (not a floe setting: kept for other engines)"
			: (d->flags & FLOE_PROP_HONOURED) ? "" : "  (stored; floe does not act on it)");
	}
	/* the registry's defaults for what is not set (floe table properties) */
	size_t n_defs;
	const floe_prop_def *defs = floe_prop_all(&n_defs);
	outf(&o, "Defaults in effect\n");
	for (size_t i = 0; i < n_defs; i++) {
		const floe_prop_def *d = &defs[i];
		if (!d->dflt || !(d->flags & FLOE_PROP_HONOURED) ||
		    (d->flags & (FLOE_PROP_PREFIX | FLOE_PROP_RESERVED)) ||
		    floe_metadata_property(m, d->key))
			continue;
		outf(&o, "  %s = %s\n", d->key, d->dflt);
	}
	const floe_snapshot *cur = floe_metadata_current_snapshot(m);
	outf(&o, "\nSnapshots    %zu\n", m->n_snapshots);
	if (cur) {
		const char *op = floe_snapshot_summary(cur, "operation");
		const char *recs = floe_snapshot_summary(cur, "total-records");
		const char *files = floe_snapshot_summary(cur, "total-data-files");
		floe_format_timestamp_us(ts, sizeof(ts), cur->timestamp_ms * 1000, 0);
		outf(&o, "Current      %lld (%s at %sZ, sequence %lld)\n", (long long)cur->snapshot_id,
		     op ? op : "?", ts, (long long)cur->sequence_number);
		outf(&o, "Rows         %s in %s data files\n", recs ? recs : "?", files ? files : "?");
	} else {
		outf(&o, "Current      none (empty table)\n");
	}
	if (m->n_refs > 1 || (m->n_refs == 1 && strcmp(m->refs[0].name, "main") != 0)) {
		outf(&o, "Refs        ");
		for (size_t i = 0; i < m->n_refs; i++)
			outf(&o, " %s(%s %lld)", m->refs[i].name, m->refs[i].is_tag ? "tag" : "branch",
			     (long long)m->refs[i].snapshot_id);
		outf(&o, "\n");
	}
	int rc = flush(&o, fn, payload);
	return rc ? floe_error_set(err, rc, "cannot describe the table") : FLOE_OK;
}

const char *floe_table_location(const floe_table *t)
{
	return floe_table_metadata(t)->location;
}

const char *floe_table_metadata_location(const floe_table *t)
{
	return floe_table_metadata(t)->metadata_location;
}

int floe_table_format_version(const floe_table *t)
{
	return floe_table_metadata(t)->format_version;
}

int floe_table_snapshots(floe_table *t, floe_snapshot_fn fn, void *payload, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t);
	(void)err;
	for (size_t i = 0; i < m->n_snapshots; i++) {
		const floe_snapshot *s = &m->snapshots[i];
		floe_snapshot_info info = {0};
		info.snapshot_id = s->snapshot_id;
		info.parent_id = s->parent_id;
		info.sequence_number = s->sequence_number;
		info.timestamp_ms = s->timestamp_ms;
		info.operation = floe_snapshot_summary(s, "operation");
		if (!info.operation)
			info.operation = "overwrite"; /* Java's assumption */
		info.manifest_list = s->manifest_list;
		info.schema_id = s->schema_id;
		info.summary = (const floe_prop *)s->summary; /* same layout: key, value */
		info.n_summary = s->n_summary;
		info.is_current = s->snapshot_id == m->current_snapshot_id;
		int rc = fn(&info, payload);
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

typedef struct files_ctx {
	floe_table *t;
	floe_table_file_fn fn;
	void *payload;
	floe_buf part, part_json;
} files_ctx;

/* {"name": value, ...} with each value of its transform's result type */
static int partition_json(floe_buf *out, const floe_partition_spec *spec, const floe_schema *s,
			  const floe_partition *p)
{
	floe_jw w;
	floe_jw_init(&w, out, 0);
	floe_jw_obj_begin(&w);
	for (size_t i = 0; spec && i < spec->n_fields && i < p->n; i++) {
		const floe_partition_field *f = &spec->fields[i];
		const floe_schema_entry *e = s ? floe_schema_find(s, f->source_id) : NULL;
		const floe_type *rt = e ? floe_transform_result_type(&f->transform, e->type) : NULL;
		floe_jw_key(&w, f->name);
		if (p->values[i].is_null || !rt)
			floe_jw_null(&w);
		else
			floe_value_write_json(&w, &p->values[i], rt);
	}
	floe_jw_obj_end(&w);
	return floe_jw_finish(&w);
}

static int files_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	files_ctx *c = payload;
	const floe_metadata *m = floe_table_metadata(c->t);
	const floe_partition_spec *spec = floe_metadata_spec(m, mf->spec_id);
	floe_table_file fi = {0};
	(void)mf;
	floe_buf_clear(&c->part);
	floe_buf_clear(&c->part_json);
	if (spec && spec->n_fields) {
		const floe_schema *s = floe_metadata_current_schema(m);
		if (floe_partition_path(&c->part, spec, s, &e->file.partition))
			floe_buf_clear(&c->part);
		if (partition_json(&c->part_json, spec, s, &e->file.partition))
			return FLOE_ENOMEM;
	} else if (floe_buf_puts(&c->part_json, "{}")) {
		return FLOE_ENOMEM;
	}
	fi.content = e->file.content;
	fi.path = e->file.file_path;
	fi.format = e->file.file_format;
	fi.spec_id = e->file.spec_id;
	fi.partition = floe_buf_cstr(&c->part);
	fi.partition_json = floe_buf_cstr(&c->part_json);
	fi.record_count = e->file.record_count;
	fi.file_size_in_bytes = e->file.file_size_in_bytes;
	fi.snapshot_id = e->snapshot_id;
	fi.sequence_number = e->sequence_number;
	fi.status = e->status;
	return c->fn(&fi, c->payload);
}

int floe_table_files(floe_table *t, int64_t snapshot_id, floe_table_file_fn fn, void *payload,
		     floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(t);
	const floe_snapshot *s = snapshot_id < 0 ? floe_metadata_current_snapshot(m)
						 : floe_metadata_snapshot(m, snapshot_id);
	files_ctx c = {t, fn, payload, {0}, {0}};
	int rc;
	if (snapshot_id >= 0 && !s)
		return floe_error_set(err, FLOE_ENOTFOUND, "snapshot %lld does not exist",
				      (long long)snapshot_id);
	if (!s)
		return FLOE_OK;
	floe_buf_init(&c.part, 0);
	floe_buf_init(&c.part_json, 0);
	rc = floe_table_walk(t, s, FLOE_WALK_DATA | FLOE_WALK_DELETES, files_cb, &c, err);
	floe_buf_reset(&c.part);
	floe_buf_reset(&c.part_json);
	return rc;
}

int floe_table_set_properties(floe_table *t, const floe_prop *set, size_t n_set,
			      const char *const *remove, size_t n_remove, floe_error *err)
{
	floe_strmap m;
	int rc = FLOE_OK;
	floe_strmap_init(&m);
	for (size_t i = 0; i < n_set && !rc; i++)
		if (floe_strmap_set(&m, set[i].key, set[i].value))
			rc = floe_error_oom(err);
	if (!rc)
		rc = floe_table_update_properties(t, &m, remove, n_remove, err);
	floe_strmap_reset(&m);
	return rc;
}

/* ---- the property registry ------------------------------------------------------------ */

int floe_table_property_check(const char *key, const char *value, floe_error *err)
{
	return floe_prop_check(key, value, err);
}

static const char *allowed(const floe_prop_def *d, char *buf, size_t n)
{
	switch (d->type) {
	case FLOE_PROP_INT:
		if (d->max == INT64_MAX)
			snprintf(buf, n, "integer >= %lld", (long long)d->min);
		else
			snprintf(buf, n, "%lld..%lld", (long long)d->min, (long long)d->max);
		return buf;
	case FLOE_PROP_BOOL:
		return "true, false";
	case FLOE_PROP_METRICS:
		return "none, counts, truncate(N), full";
	case FLOE_PROP_STRING:
		return "text";
	case FLOE_PROP_DURATION:
		return "duration (10s, 12h, 7d) or ms";
	case FLOE_PROP_CHOICE: {
		size_t j = 0;
		for (const char *p = d->choices; *p && j + 3 < n; p++) {
			if (*p == '|') {
				buf[j++] = ',';
				buf[j++] = ' ';
			} else {
				buf[j++] = *p;
			}
		}
		buf[j] = '\0';
		return buf;
	}
	}
	return "";
}

int floe_table_properties_reference(bool markdown, floe_write_fn fn, void *payload,
				    floe_error *err)
{
	size_t n;
	const floe_prop_def *defs = floe_prop_all(&n);
	floe_buf b;
	int rc = 0;
	floe_buf_init(&b, 0);
	if (markdown)
		rc = floe_buf_puts(&b, "| property | default | values | floe | effect |\n"
				       "|---|---|---|---|---|\n");
	for (size_t i = 0; i < n && !rc; i++) {
		const floe_prop_def *d = &defs[i];
		char al[256], key[160];
		snprintf(key, sizeof(key), "%s%s", d->key, (d->flags & FLOE_PROP_PREFIX) ? "<column>" : "");
		const char *use = (d->flags & FLOE_PROP_HONOURED) ? "honoured" : "stored";
		if (d->refused) {
			char r[128];
			size_t j = (size_t)snprintf(r, sizeof(r), "honoured (");
			for (const char *p = d->refused; *p && j + 12 < sizeof(r); p++)
				j += (size_t)snprintf(r + j, sizeof(r) - j, "%s",
						      *p == '|' ? ", " : (char[2]){*p, 0});
			snprintf(r + j, sizeof(r) - j, " refused)");
			if (markdown)
				rc = floe_buf_printf(&b, "| `%s` | %s | %s | %s | %s |\n", key,
						     d->dflt ? d->dflt : "", allowed(d, al, sizeof(al)), r,
						     d->doc);
		} else if (markdown) {
			rc = floe_buf_printf(&b, "| `%s` | %s | %s | %s | %s |\n", key,
					     d->dflt ? d->dflt : "", allowed(d, al, sizeof(al)), use,
					     d->doc);
		}
		if (!markdown) {
			floe_jw w;
			floe_jw_init(&w, &b, 0);
			floe_jw_obj_begin(&w);
			floe_jw_kv_str(&w, "key", key);
			floe_jw_key(&w, "default");
			if (d->dflt)
				floe_jw_str(&w, d->dflt);
			else
				floe_jw_null(&w);
			floe_jw_kv_str(&w, "values", allowed(d, al, sizeof(al)));
			floe_jw_kv_bool(&w, "honoured", (d->flags & FLOE_PROP_HONOURED) != 0);
			if (d->refused)
				floe_jw_kv_str(&w, "refused", d->refused);
			floe_jw_kv_str(&w, "doc", d->doc);
			floe_jw_obj_end(&w);
			rc = floe_jw_finish(&w) || floe_buf_putc(&b, '\n');
		}
	}
	if (rc)
		rc = floe_error_oom(err);
	else
		rc = fn(floe_buf_cstr(&b), b.len, payload);
	floe_buf_reset(&b);
	return rc;
}

/* ---- add-files ----------------------------------------------------------------------- */

static int seen_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	(void)mf;
	return floe_hmap_put_str(payload, e->file.file_path, 1);
}

int floe_table_add_files(floe_table *t, const char *const *paths, size_t n,
			 const floe_prop *summary, size_t n_summary, int64_t *snapshot_id,
			 floe_error *err)
{
	floe_arena a;
	floe_hmap seen;
	floe_data_file *files;
	floe_append *ap = NULL;
	int rc = FLOE_OK;
	if (n == 0)
		return floe_error_set(err, FLOE_EINVAL, "no files to add");
	floe_arena_init(&a, 65536);
	floe_hmap_init(&seen);
	/* the name mapping lets readers find the columns of files written without
	 * field ids; PyIceberg's add_files sets it the same way when absent */
	const floe_metadata *m = floe_table_metadata(t);
	if (!floe_metadata_property(m, "schema.name-mapping.default")) {
		floe_buf json;
		floe_buf_init(&json, 0);
		if (floe_name_mapping_from_schema(&json, floe_metadata_current_schema(m))) {
			floe_buf_reset(&json);
			rc = floe_error_oom(err);
			goto done;
		}
		floe_prop p = {"schema.name-mapping.default", floe_buf_cstr(&json)};
		rc = floe_table_set_properties(t, &p, 1, NULL, 0, err);
		floe_buf_reset(&json);
		if (rc)
			goto done;
		m = floe_table_metadata(t);
	}
	if ((rc = floe_table_walk(t, NULL, FLOE_WALK_DATA, seen_cb, &seen, err)))
		goto done;
	files = floe_arena_calloc(&a, n, sizeof(*files));
	if (!files) {
		rc = floe_error_oom(err);
		goto done;
	}
	const floe_partition_spec *spec = floe_metadata_default_spec(m);
	for (size_t i = 0; i < n && !rc; i++) {
		const char *p = paths[i];
		char abs[PATH_MAX];
		const char *uri = p;
		if (!strstr(p, "://") && strncmp(p, "file:", 5) != 0) {
			if (!realpath(p, abs)) {
				rc = floe_error_set(err, FLOE_ENOTFOUND, "'%s': %s", p, strerror(errno));
				break;
			}
			uri = floe_arena_sprintf(&a, "file://%s", abs);
		}
		if (!uri) {
			rc = floe_error_oom(err);
			break;
		}
		if (floe_hmap_has(&seen, uri, strlen(uri))) {
			rc = floe_error_set(err, FLOE_EEXISTS,
					    "'%s' is already in the table (or listed twice)", uri);
			break;
		}
		if ((rc = floe_hmap_put_str(&seen, uri, 1))) {
			rc = floe_error_oom(err);
			break;
		}
		floe_input *in;
		if ((rc = floe_io_open_read(floe_table_io(t), uri, &in, err)))
			break;
		rc = floe_parquet_data_file(&files[i], &a, in, uri, m, spec, err);
		floe_input_close(in);
	}
	if (rc)
		goto done;
	if ((rc = floe_append_new(&ap, t, NULL, err)))
		goto done;
	for (size_t i = 0; i < n && !rc; i++)
		rc = floe_append_add_file(ap, &files[i], err);
	for (size_t i = 0; i < n_summary && !rc; i++)
		rc = floe_append_set_summary(ap, summary[i].key, summary[i].value, err);
	if (!rc)
		rc = floe_append_commit(ap, snapshot_id, err);
done:
	floe_append_free(ap);
	floe_hmap_reset(&seen);
	floe_arena_reset(&a);
	return rc;
}

/* ---- drop with purge ---------------------------------------------------------------- */

typedef struct purge_ctx {
	floe_hmap paths;
	int rc;
} purge_ctx;

static int purge_add(purge_ctx *c, const char *p)
{
	if (p && floe_hmap_put_str(&c->paths, p, 1))
		return FLOE_ENOMEM;
	return FLOE_OK;
}

static int purge_entry(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	(void)mf;
	return purge_add(payload, e->file.file_path);
}

int floe_catalog_drop_table(floe_catalog *cat, const char *ns, const char *name, bool purge,
			    floe_error *err)
{
	floe_table *t = NULL;
	purge_ctx c;
	int rc;
	if (!purge)
		return floe_catalog__drop_table(cat, ns, name, err);
	if ((rc = floe_table_load(&t, cat, ns, name, err)))
		return rc;
	floe_hmap_init(&c.paths);
	const floe_metadata *m = floe_table_metadata(t);
	/* every file any snapshot reaches, then the metadata files */
	for (size_t i = 0; i < m->n_snapshots && !rc; i++) {
		const floe_snapshot *s = &m->snapshots[i];
		floe_arena a;
		floe_manifest_file *mfs = NULL;
		size_t n = 0;
		floe_arena_init(&a, 65536);
		rc = purge_add(&c, s->manifest_list);
		if (!rc)
			rc = floe_table_manifests(&mfs, &n, &a, t, s, err);
		for (size_t k = 0; k < n && !rc; k++)
			rc = purge_add(&c, mfs[k].path);
		if (!rc)
			rc = floe_table_walk(t, s,
					     FLOE_WALK_DATA | FLOE_WALK_DELETES | FLOE_WALK_ALL_ENTRIES,
					     purge_entry, &c, err);
		floe_arena_reset(&a);
	}
	for (size_t i = 0; i < m->n_metadata_log && !rc; i++)
		rc = purge_add(&c, m->metadata_log[i].metadata_file);
	for (size_t i = 0; i < m->n_statistics && !rc; i++) {
		const char *p;
		if (floe_json_get_str(m->statistics[i], "statistics-path", &p, NULL, NULL) == 0)
			rc = purge_add(&c, p);
	}
	if (!rc)
		rc = purge_add(&c, m->metadata_location);
	if (rc) {
		if (rc == FLOE_ENOMEM)
			floe_error_set(err, rc, "out of memory");
		floe_hmap_reset(&c.paths);
		floe_table_free(t);
		return floe_error_prefix(err, rc, "drop %s.%s: ", ns, name);
	}
	/* first out of the catalog (no reader sees a half-deleted table), then files */
	rc = floe_catalog__drop_table(cat, ns, name, err);
	if (!rc) {
		/* in batches: S3 deletes up to 1000 keys a request (DeleteObjects) */
		enum { PURGE_BATCH = 1000 };
		char **batch = floe_calloc(PURGE_BATCH, sizeof(*batch));
		int *codes = floe_calloc(PURGE_BATCH, sizeof(*codes));
		size_t nb = 0, failed = 0;
		for (size_t i = 0; batch && codes && i <= c.paths.cap; i++) {
			if (i < c.paths.cap && c.paths.slots[i].key &&
			    (batch[nb] = floe_strndup(c.paths.slots[i].key, c.paths.slots[i].klen)))
				nb++;
			if (nb && (nb == PURGE_BATCH || i == c.paths.cap)) {
				floe_error e;
				floe_error_clear(&e);
				if (floe_io_remove_batch(floe_table_io(t), (const char *const *)batch,
							 nb, codes, &e))
					FLOE_WARN("drop %s.%s: purging stopped: %s", ns, name, e.msg);
				for (size_t k = 0; k < nb; k++) {
					failed += codes[k] != 0;
					floe_free(batch[k]);
				}
				nb = 0;
			}
		}
		if (!batch || !codes)
			FLOE_WARN("drop %s.%s: out of memory: its files are left", ns, name);
		else if (failed)
			FLOE_WARN("drop %s.%s: %zu files could not be deleted", ns, name, failed);
		floe_free(batch);
		floe_free(codes);
	}
	floe_hmap_reset(&c.paths);
	floe_table_free(t);
	return rc;
}
