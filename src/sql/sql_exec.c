/*
 * sql_exec.c — the SQL session: catalogs (CREATE CATALOG mapped onto floe's
 * catalogs), USE, databases, DDL (CREATE/ALTER/DROP TABLE), SET/RESET,
 * SHOW and DESCRIBE. INSERT and SELECT are in sql_run.c.
 *
 * DESIGN: catalog tables are Iceberg tables in a floe catalog; tables with
 * a 'connector' other than iceberg (filesystem, datagen) are source tables
 * that live in the session, as Flink keeps them in its in-memory catalog.
 * Flink types map onto Iceberg types as Iceberg's FlinkSchemaUtil maps them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "catalog/catalog_impl.h"
#include "iceberg/metadata.h"
#include "iceberg/props.h"
#include "iceberg/spec.h"
#include "iceberg/transform.h"
#include "json/json.h"
#include "sql/sql_exec.h"
#include "table/commit.h"
#include "table/create.h"
#include "util/log.h"
#include "util/opts.h"

/* ---- errors and output --------------------------------------------------------- */

int sql_err(sql_ctx *c, int code, uint32_t off, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return floe_sql__error_at(c->err, code, c->sc->text, c->sc->n, c->sc->origin, off, "%s",
				  msg);
}

/* Context from a lower layer's error: "line 3, column 1: <its message>". */
static int sql_wrap(sql_ctx *c, int rc, uint32_t off)
{
	if (!rc)
		return 0;
	char inner[FLOE_ERROR_MSG_MAX];
	snprintf(inner, sizeof(inner), "%s", c->err->msg[0] ? c->err->msg : floe_strerror(rc));
	return floe_sql__error_at(c->err, rc, c->sc->text, c->sc->n, c->sc->origin, off, "%s",
				  inner);
}

int sql_out(floe_sql *s, const char *text, size_t n)
{
	return s->opts.out ? s->opts.out(text, n, s->opts.out_payload) : 0;
}

int sql_outf(floe_sql *s, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return FLOE_EINVAL;
	return sql_out(s, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static int ok(floe_sql *s)
{
	return s->opts.quiet ? 0 : sql_outf(s, "[OK] done\n");
}

/* ---- result sets ----------------------------------------------------------------- */

int sql_rows_init(sql_rows *r, floe_arena *a, const char *const *cols, size_t n_cols)
{
	memset(r, 0, sizeof(*r));
	r->a = a;
	r->n_cols = n_cols;
	r->cols = floe_arena_calloc(a, n_cols, sizeof(char *));
	if (!r->cols)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n_cols; i++)
		r->cols[i] = cols[i];
	return 0;
}

int sql_rows_add(sql_rows *r, const char *const *cells)
{
	if (r->n_rows == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		const char ***rows = floe_arena_calloc(r->a, cap, sizeof(*rows));
		if (!rows)
			return FLOE_ENOMEM;
		if (r->n_rows)
			memcpy(rows, r->rows, r->n_rows * sizeof(*rows));
		r->rows = rows;
		r->cap = cap;
	}
	const char **row = floe_arena_calloc(r->a, r->n_cols, sizeof(char *));
	if (!row)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < r->n_cols; i++)
		if (cells[i] && !(row[i] = floe_arena_strdup(r->a, cells[i])))
			return FLOE_ENOMEM;
	r->rows[r->n_rows++] = row;
	return 0;
}

static size_t width(const char *s)
{
	size_t w = 0;
	for (; s && *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

static bool json_number_text(const char *v)
{
	/* NaN and the infinities are no JSON numbers: they print as strings */
	return strcmp(v, "NaN") && strcmp(v, "Infinity") && strcmp(v, "-Infinity");
}

/* One JSON object per row (--format json). A name an earlier column has
 * gets _1, _2, ... (SELECT * over a join), so that no key repeats. */
int sql_rows_json(floe_buf *b, const sql_rows *r)
{
	int rc = 0;
	const char **keys = floe_arena_calloc(r->a, r->n_cols + 1, sizeof(char *));
	if (!keys)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < r->n_cols; i++) {
		keys[i] = r->cols[i];
		for (int nth = 1;; nth++) {
			bool dup = false;
			for (size_t k = 0; k < i && !dup; k++)
				dup = !strcmp(keys[k], keys[i]);
			if (!dup)
				break;
			if (!(keys[i] = floe_arena_sprintf(r->a, "%s_%d", r->cols[i], nth)))
				return FLOE_ENOMEM;
		}
	}
	for (size_t j = 0; !rc && j < r->n_rows; j++) {
		rc = floe_buf_putc(b, '{');
		for (size_t i = 0; !rc && i < r->n_cols; i++) {
			const char *v = r->rows[j][i];
			char k = r->kinds ? r->kinds[i] : 's';
			if (i)
				rc = floe_buf_putc(b, ',');
			if (!rc)
				rc = floe_json_escape(b, keys[i], strlen(keys[i]));
			if (!rc)
				rc = floe_buf_putc(b, ':');
			if (rc)
				break;
			if (!v)
				rc = floe_buf_puts(b, "null");
			else if ((k == 'n' && json_number_text(v)) || k == 'b' || k == 'j')
				rc = floe_buf_puts(b, v);
			else
				rc = floe_json_escape(b, v, strlen(v));
		}
		if (!rc)
			rc = floe_buf_puts(b, "}\n");
	}
	return rc;
}

static int csv_field(floe_buf *b, const char *v)
{
	if (!v)
		return 0;
	if (!strpbrk(v, ",\"\r\n"))
		return floe_buf_puts(b, v);
	int rc = floe_buf_putc(b, '"');
	for (const char *p = v; !rc && *p; p++)
		rc = *p == '"' ? floe_buf_puts(b, "\"\"") : floe_buf_putc(b, *p);
	return rc ? rc : floe_buf_putc(b, '"');
}

/* A header line, then one line per row (--format csv). */
int sql_rows_csv(floe_buf *b, const sql_rows *r, bool header)
{
	int rc = 0;
	for (size_t j = header ? 0 : 1; !rc && j <= r->n_rows; j++) {
		const char *const *cells = j ? r->rows[j - 1] : r->cols;
		for (size_t i = 0; !rc && i < r->n_cols; i++)
			rc = (i ? floe_buf_putc(b, ',') : 0) || csv_field(b, cells[i]);
		if (!rc)
			rc = floe_buf_putc(b, '\n');
	}
	return rc;
}

/* Flink's tableau form: +----+ borders, one row per line, "N rows in set";
 * or JSON lines or CSV (floe_sql_opts.format). */
int sql_rows_print(floe_sql *s, const sql_rows *r)
{
	floe_buf b;
	int rc = 0;
	if (s->opts.format != FLOE_SQL_TABLEAU) {
		floe_buf_init(&b, 0);
		rc = s->opts.format == FLOE_SQL_JSON ? sql_rows_json(&b, r) : sql_rows_csv(&b, r, true);
		if (rc)
			rc = FLOE_ENOMEM;
		else if (b.len)
			rc = sql_out(s, floe_buf_cstr(&b), b.len);
		floe_buf_reset(&b);
		return rc;
	}
	size_t *w = floe_calloc(r->n_cols ? r->n_cols : 1, sizeof(size_t));
	if (!w)
		return FLOE_ENOMEM;
	floe_buf_init(&b, 0);
	for (size_t i = 0; i < r->n_cols; i++) {
		w[i] = width(r->cols[i]);
		for (size_t j = 0; j < r->n_rows; j++) {
			size_t x = width(r->rows[j][i] ? r->rows[j][i] : "<NULL>");
			if (x > w[i])
				w[i] = x;
		}
	}
#define PUT(x) \
	do { \
		if (!rc) \
			rc = (x); \
	} while (0)
	/* rule, header, rule, rows, rule */
	for (int line = 0; line < 4 + (int)r->n_rows; line++) {
		bool is_rule = line == 0 || line == 2 || line == 3 + (int)r->n_rows;
		if (is_rule) {
			for (size_t i = 0; i < r->n_cols; i++) {
				PUT(floe_buf_putc(&b, '+'));
				for (size_t k = 0; k < w[i] + 2; k++)
					PUT(floe_buf_putc(&b, '-'));
			}
			PUT(floe_buf_puts(&b, "+\n"));
			continue;
		}
		const char *const *cells = line == 1 ? r->cols : r->rows[line - 3];
		for (size_t i = 0; i < r->n_cols; i++) {
			const char *v = cells[i] ? cells[i] : "<NULL>";
			PUT(floe_buf_puts(&b, "| "));
			PUT(floe_buf_puts(&b, v));
			for (size_t k = width(v); k < w[i] + 1; k++)
				PUT(floe_buf_putc(&b, ' '));
		}
		PUT(floe_buf_puts(&b, "|\n"));
	}
	PUT(floe_buf_printf(&b, "%zu row%s in set\n", r->n_rows, r->n_rows == 1 ? "" : "s"));
#undef PUT
	if (!rc)
		rc = sql_out(s, floe_buf_cstr(&b), b.len);
	floe_buf_reset(&b);
	floe_free(w);
	return rc;
}

/* ---- names ----------------------------------------------------------------------- */

static sql_catalog *find_catalog(floe_sql *s, const char *name)
{
	for (size_t i = 0; i < s->n_cats; i++)
		if (!strcmp(s->cats[i]->name, name))
			return s->cats[i];
	return NULL;
}

int sql_need_catalog(sql_ctx *c, const sql_catalog *cat, uint32_t off)
{
	if (cat && (cat->cat || cat->planned))
		return 0;
	return sql_err(c, FLOE_EINVAL, off,
		       "catalog '%s' holds only source tables (no Iceberg catalog is configured): "
		       "CREATE CATALOG ... WITH ('type'='iceberg', ...) and USE CATALOG it",
		       cat ? cat->name : "default_catalog");
}

int sql_resolve(sql_ctx *c, const sql_name *nm, sql_ref *out)
{
	floe_sql *s = c->s;
	memset(out, 0, sizeof(*out));
	if (nm->path)
		return sql_err(c, FLOE_EUNSUPPORTED, nm->off,
			       "a table path ('%s') can only be read, by SELECT ... FROM: name a "
			       "catalog table here",
			       nm->parts[0]);
	if (nm->n == 3) {
		if (!(out->cat = find_catalog(s, nm->parts[0])))
			return sql_err(c, FLOE_EINVAL, nm->off, "catalog '%s' does not exist",
				       nm->parts[0]);
	} else {
		if (!s->n_cats)
			return sql_err(c, FLOE_EINVAL, nm->off, "no catalog: CREATE CATALOG first");
		out->cat = s->cats[s->cur_cat];
	}
	out->db = nm->n >= 2 ? nm->parts[nm->n - 2] : s->cur_db;
	const char *t = nm->parts[nm->n - 1];
	const char *dollar = strchr(t, '$');
	if (dollar) {
		out->table = floe_arena_strndup(c->a, t, (size_t)(dollar - t));
		out->meta = dollar + 1;
		if (!out->table)
			return floe_error_oom(c->err);
	} else {
		out->table = t;
	}
	for (size_t i = 0; i < s->n_aliases; i++) {
		const sql_alias *al = &s->aliases[i];
		if (!strcmp(al->catalog, out->cat->name) && !strcmp(al->db, out->db) &&
		    !strcmp(al->name, out->table)) {
			out->cat = find_catalog(s, al->to_catalog);
			out->db = al->to_db;
			out->table = al->to_name;
			if (!out->cat)
				return sql_err(c, FLOE_EINVAL, nm->off, "catalog '%s' does not exist",
					       al->to_catalog);
			break;
		}
	}
	return 0;
}

const sql_source *sql_find_source(floe_sql *s, const sql_ref *r)
{
	for (size_t i = s->n_sources; i-- > 0;)
		if (!strcmp(s->sources[i].catalog, r->cat->name) && !strcmp(s->sources[i].db, r->db) &&
		    !strcmp(s->sources[i].name, r->table))
			return &s->sources[i];
	return NULL;
}

const char *sql_opt_get(const sql_opt *opts, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(opts[i].key, key))
			return opts[i].value;
	return NULL;
}

static const sql_opt *opt_find(const sql_opt *opts, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(opts[i].key, key))
			return &opts[i];
	return NULL;
}

/* ---- catalogs -------------------------------------------------------------------- */

static int add_catalog(floe_sql *s, const char *name, floe_catalog *cat, bool owned, const char *type,
		       const char *uri, const char *warehouse, const char *default_db, floe_error *err)
{
	/* entries are allocated one by one: a sql_ref keeps pointers to them */
	sql_catalog **cats = floe_realloc(s->cats, (s->n_cats + 1) * sizeof(*cats));
	sql_catalog *c = cats ? floe_calloc(1, sizeof(*c)) : NULL;
	if (cats)
		s->cats = cats;
	if (!c) {
		if (owned)
			floe_catalog_free(cat);
		return floe_error_oom(err);
	}
	cats[s->n_cats] = c;
	memset(c, 0, sizeof(*c));
	c->name = floe_strdup(name);
	c->type = type ? floe_strdup(type) : NULL;
	c->uri = uri ? floe_strdup(uri) : NULL;
	c->warehouse = warehouse ? floe_strdup(warehouse) : NULL;
	c->default_db = floe_strdup(default_db ? default_db : "default");
	c->cat = cat;
	c->owned = owned;
	s->n_cats++;
	if (!c->name || !c->default_db || (type && !c->type) || (uri && !c->uri) ||
	    (warehouse && !c->warehouse))
		return floe_error_oom(err);
	return 0;
}

static size_t cat_index(const floe_sql *s, const sql_catalog *cat)
{
	for (size_t i = 0; i < s->n_cats; i++)
		if (s->cats[i] == cat)
			return i;
	return 0;
}

static bool ieq(const char *a, const char *b)
{
	return a && b && !strcasecmp(a, b);
}

/* Known option names of CREATE CATALOG (Iceberg's FlinkCatalogFactory). */
static const char *const CATALOG_OPTS[] = {
	"type", "catalog-type", "catalog-impl", "warehouse", "uri", "default-database",
	"property-version", "cache-enabled", "cache.expiration-interval-ms", "clients",
	"jdbc.user", "jdbc.password", "jdbc.schema-version", "io-impl", "base-namespace",
	"catalog-name", "floe.catalog-name", "jdbc.useSSL", "jdbc.verifyServerCertificate",
	"hadoop-conf-dir", "hive-conf-dir", "s3.endpoint", "s3.path-style-access",
	"client.region", "glue.skip-name-validation", "lock-impl", "lock.table",
};

/* Open a catalog from Flink's catalog options (CREATE CATALOG, or the
 * options of a 'connector'='iceberg' table) and add it to the session. */
static int open_catalog(sql_ctx *c, const char *name, const sql_opt *opts, size_t n_opts,
			uint32_t off, bool connector)
{
	floe_sql *s = c->s;
	const char *type = sql_opt_get(opts, n_opts, "type");
	const char *ctype = sql_opt_get(opts, n_opts, "catalog-type");
	const char *impl = sql_opt_get(opts, n_opts, "catalog-impl");
	const char *wh = sql_opt_get(opts, n_opts, "warehouse");
	const char *uri = sql_opt_get(opts, n_opts, "uri");
	const char *user = sql_opt_get(opts, n_opts, "jdbc.user");
	const char *pw = sql_opt_get(opts, n_opts, "jdbc.password");
	const char *cname = sql_opt_get(opts, n_opts, "floe.catalog-name");
	if (!type && connector)
		type = "iceberg";
	if (!type)
		return sql_err(c, FLOE_EINVAL, off, "CREATE CATALOG needs 'type'='iceberg'");
	if (!ieq(type, "iceberg")) {
		const sql_opt *o = opt_find(opts, n_opts, "type");
		return sql_err(c, FLOE_EUNSUPPORTED, o->off,
			       "catalog type '%s' is not supported: floe's catalogs hold Iceberg "
			       "tables ('type'='iceberg')",
			       type);
	}
	if (impl) {
		const sql_opt *o = opt_find(opts, n_opts, "catalog-impl");
		if (!strcmp(impl, "org.apache.iceberg.jdbc.JdbcCatalog"))
			ctype = "jdbc";
		else if (!strcmp(impl, "org.apache.iceberg.hadoop.HadoopCatalog"))
			ctype = "hadoop";
		else if (!strcmp(impl, "org.apache.iceberg.rest.RESTCatalog"))
			ctype = "rest";
		else if (!strcmp(impl, "org.apache.iceberg.aws.glue.GlueCatalog"))
			ctype = "glue";
		else if (strstr(impl, "S3TablesCatalog"))
			return sql_err(c, FLOE_EUNSUPPORTED, o->off,
				       "catalog-impl '%s' is not supported yet: reach S3 Tables through "
				       "its Iceberg REST endpoint ('catalog-type'='rest', 'uri'='https://"
				       "s3tables.<region>.amazonaws.com/iceberg', 'rest.sigv4-enabled'="
				       "'true', 'rest.signing-name'='s3tables')",
				       impl);
		else
			return sql_err(c, FLOE_EUNSUPPORTED, o->off,
				       "catalog-impl '%s' is not supported (floe maps "
				       "org.apache.iceberg.jdbc.JdbcCatalog and "
				       "org.apache.iceberg.hadoop.HadoopCatalog)",
				       impl);
	}
	if (!ctype)
		ctype = "hive"; /* Iceberg's FlinkCatalogFactory default */
	if (!ieq(ctype, "rest") && !ieq(ctype, "glue")) {
		for (size_t i = 0; i < n_opts; i++) {
			bool known = false;
			for (size_t k = 0; k < sizeof(CATALOG_OPTS) / sizeof(CATALOG_OPTS[0]); k++)
				known |= !strcmp(opts[i].key, CATALOG_OPTS[k]);
			if (connector)
				continue; /* the table's other options are its properties */
			if (!known)
				return sql_err(c, FLOE_EINVAL, opts[i].off,
					       "unknown catalog option '%s' (floe knows type, catalog-type, "
					       "catalog-impl, warehouse, uri, default-database, jdbc.user, "
					       "jdbc.password, ...)",
					       opts[i].key);
		}
	}
	const sql_opt *ct = opt_find(opts, n_opts, "catalog-type");
	uint32_t ct_off = ct ? ct->off : off;
	floe_catalog_config cfg = FLOE_CATALOG_CONFIG_INIT;
	cfg.name = cname ? cname : name;
	/* a relative warehouse is taken from the script's directory */
	if (wh && !strstr(wh, "://") && wh[0] != '/' && s->opts.base_dir &&
	    !(wh = floe_arena_sprintf(c->a, "%s/%s", s->opts.base_dir, wh)))
		return floe_error_oom(c->err);
	char *conn = NULL;
	const char *ftype;
	if (ieq(ctype, "hadoop") || ieq(ctype, "filesystem")) {
		if (!wh)
			return sql_err(c, FLOE_EINVAL, off,
				       "a hadoop catalog needs 'warehouse' (the folder its tables "
				       "live in)");
		cfg.type = ftype = "filesystem";
		cfg.warehouse = wh;
	} else if (ieq(ctype, "jdbc") || ieq(ctype, "sql")) {
		if (!uri)
			return sql_err(c, FLOE_EINVAL, off,
				       "a jdbc catalog needs 'uri' (jdbc:sqlite:/path/catalog.db or "
				       "jdbc:postgresql://host/db)");
		cfg.type = ftype = "sql";
		const char *u = uri;
		if (!strncmp(u, "jdbc:", 5))
			u += 5;
		if (!strncmp(u, "postgresql://", 13) && (user || pw)) {
			/* user and password go into the libpq URI */
			const char *rest = u + 13;
			conn = floe_arena_sprintf(c->a, "postgresql://%s%s%s@%s", user ? user : "",
						  pw ? ":" : "", pw ? pw : "", rest);
			if (!conn)
				return floe_error_oom(c->err);
			u = conn;
		}
		cfg.uri = uri; /* floe's SQL catalog takes jdbc:sqlite: itself */
		if (conn)
			cfg.uri = conn;
		else if (!strncmp(uri, "jdbc:postgresql:", 16))
			cfg.uri = uri + 5;
		cfg.warehouse = wh;
	} else if (ieq(ctype, "rest") || ieq(ctype, "glue")) {
		/* floe's REST and Glue catalogs take Iceberg's property names: the
		 * options other than the catalog's own go to them as they are */
		bool rest = ieq(ctype, "rest");
		if (rest && !uri)
			return sql_err(c, FLOE_EINVAL, off, "a rest catalog needs 'uri'");
		cfg.type = ftype = rest ? "rest" : "glue";
		cfg.uri = uri;
		cfg.warehouse = wh;
		floe_prop *props = floe_arena_calloc(c->a, n_opts + 1, sizeof(floe_prop));
		size_t np = 0;
		if (!props)
			return floe_error_oom(c->err);
		for (size_t i = 0; i < n_opts; i++) {
			const char *k = opts[i].key;
			if (!strcmp(k, "type") || !strcmp(k, "catalog-type") || !strcmp(k, "catalog-impl") ||
			    !strcmp(k, "uri") || !strcmp(k, "warehouse") || !strcmp(k, "default-database") ||
			    !strcmp(k, "property-version") || !strcmp(k, "floe.catalog-name") ||
			    (connector && (!strcmp(k, "connector") || !strncmp(k, "catalog-", 8))))
				continue;
			props[np++] = (floe_prop){k, opts[i].value};
		}
		cfg.props = props;
		cfg.n_props = np;
	} else if (ieq(ctype, "hive") || ieq(ctype, "nessie")) {
		return sql_err(c, FLOE_EUNSUPPORTED, ct_off,
			       "catalog-type '%s' is not supported yet: floe runs 'hadoop', 'jdbc', "
			       "'rest' and 'glue' catalogs",
			       ctype);
	} else {
		return sql_err(c, FLOE_EINVAL, ct_off,
			       "unknown catalog-type '%s' (hadoop, jdbc, rest, hive, glue)", ctype);
	}
	floe_catalog *cat = NULL;
	const char *ddb = sql_opt_get(opts, n_opts, "default-database");
	if (s->planning) { /* plan only: the catalog is not opened (nothing created) */
		int rc = add_catalog(s, name, NULL, false, ftype, cfg.uri, wh, ddb, c->err);
		if (!rc)
			s->cats[s->n_cats - 1]->planned = true;
		return rc;
	}
	int rc = floe_catalog_open(&cat, &cfg, c->err);
	if (rc)
		return sql_wrap(c, rc, off);
	return add_catalog(s, name, cat, true, ftype, cfg.uri, wh, ddb, c->err);
}

static int create_catalog(sql_ctx *c, const sql_stmt *st)
{
	floe_sql *s = c->s;
	const char *name = st->name.parts[st->name.n - 1];
	if (st->name.n != 1)
		return sql_err(c, FLOE_EINVAL, st->name.off, "a catalog name has one part");
	if (find_catalog(s, name)) {
		if (st->if_not_exists)
			return ok(s);
		return sql_err(c, FLOE_EEXISTS, st->name.off, "catalog '%s' already exists", name);
	}
	int rc = open_catalog(c, name, st->opts, st->n_opts, st->off, false);
	return rc ? rc : ok(s);
}

/* ---- Flink types -> Iceberg ------------------------------------------------------- */

static floe_type *new_type(sql_ctx *c, floe_type_id id)
{
	floe_type *t = floe_arena_calloc(c->a, 1, sizeof(*t));
	if (t)
		t->id = id;
	return t;
}

int sql_iceberg_type(sql_ctx *c, const sql_type *t, int32_t *next_id, const floe_type **out)
{
	const char *n = t->name;
	floe_type_id id = 0;
	if (!strcmp(n, "STRING") || !strcmp(n, "VARCHAR") || !strcmp(n, "CHAR"))
		id = FLOE_T_STRING;
	else if (!strcmp(n, "BOOLEAN") || !strcmp(n, "BOOL"))
		id = FLOE_T_BOOLEAN;
	else if (!strcmp(n, "TINYINT") || !strcmp(n, "SMALLINT") || !strcmp(n, "INT") ||
		 !strcmp(n, "INTEGER"))
		id = FLOE_T_INT;
	else if (!strcmp(n, "BIGINT"))
		id = FLOE_T_LONG;
	else if (!strcmp(n, "FLOAT") || !strcmp(n, "REAL"))
		id = FLOE_T_FLOAT;
	else if (!strcmp(n, "DOUBLE"))
		id = FLOE_T_DOUBLE;
	else if (!strcmp(n, "DATE"))
		id = FLOE_T_DATE;
	else if (!strcmp(n, "TIME"))
		id = FLOE_T_TIME;
	else if (!strcmp(n, "TIMESTAMP"))
		id = t->p > 6 ? FLOE_T_TIMESTAMP_NS : FLOE_T_TIMESTAMP;
	else if (!strcmp(n, "TIMESTAMP_LTZ"))
		id = t->p > 6 ? FLOE_T_TIMESTAMPTZ_NS : FLOE_T_TIMESTAMPTZ;
	else if (!strcmp(n, "BYTES") || !strcmp(n, "VARBINARY"))
		id = FLOE_T_BINARY;
	else if (!strcmp(n, "UUID"))
		id = FLOE_T_UUID;
	if (id) {
		*out = floe_type_primitive(id);
		return 0;
	}
	if (!strcmp(n, "DECIMAL") || !strcmp(n, "DEC") || !strcmp(n, "NUMERIC")) {
		int32_t p = t->p < 0 ? 10 : t->p, sc = t->s < 0 ? 0 : t->s;
		if (p < 1 || p > 38 || sc > p)
			return sql_err(c, FLOE_EINVAL, t->off,
				       "DECIMAL(%d, %d): precision must be 1..38 and scale at most the "
				       "precision",
				       p, sc);
		if (!(*out = floe_type_decimal(c->a, p, sc)))
			return floe_error_oom(c->err);
		return 0;
	}
	if (!strcmp(n, "BINARY")) {
		if (!(*out = floe_type_fixed(c->a, t->p < 0 ? 1 : t->p)))
			return floe_error_oom(c->err);
		return 0;
	}
	if (!strcmp(n, "ARRAY") || !strcmp(n, "MULTISET")) {
		bool ms = !strcmp(n, "MULTISET");
		floe_type *l = new_type(c, ms ? FLOE_T_MAP : FLOE_T_LIST);
		if (!l)
			return floe_error_oom(c->err);
		if (ms) {
			/* Iceberg's FlinkSchemaUtil: MULTISET<T> is MAP<T, INT NOT NULL> */
			l->key_id = (*next_id)++;
			l->value_id = (*next_id)++;
			l->value_required = true;
			l->value = floe_type_primitive(FLOE_T_INT);
			int rc = sql_iceberg_type(c, t->elem, next_id, &l->key);
			if (rc)
				return rc;
		} else {
			l->element_id = (*next_id)++;
			l->element_required = t->elem->not_null;
			int rc = sql_iceberg_type(c, t->elem, next_id, &l->element);
			if (rc)
				return rc;
		}
		*out = l;
		return 0;
	}
	if (!strcmp(n, "MAP")) {
		floe_type *m = new_type(c, FLOE_T_MAP);
		if (!m)
			return floe_error_oom(c->err);
		m->key_id = (*next_id)++;
		m->value_id = (*next_id)++;
		m->value_required = t->value->not_null;
		int rc = sql_iceberg_type(c, t->key, next_id, &m->key);
		if (!rc)
			rc = sql_iceberg_type(c, t->value, next_id, &m->value);
		if (rc)
			return rc;
		*out = m;
		return 0;
	}
	if (!strcmp(n, "ROW")) {
		floe_type *r = new_type(c, FLOE_T_STRUCT);
		if (!r || !(r->fields = floe_arena_calloc(c->a, t->n_fields ? t->n_fields : 1,
							  sizeof(floe_field))))
			return floe_error_oom(c->err);
		r->n_fields = t->n_fields;
		/* Java assigns a struct's own fields first, then nested ones */
		for (size_t i = 0; i < t->n_fields; i++)
			r->fields[i].id = (*next_id)++;
		for (size_t i = 0; i < t->n_fields; i++) {
			r->fields[i].name = t->fields[i].name;
			r->fields[i].required = t->fields[i].type->not_null;
			r->fields[i].doc = t->fields[i].comment;
			int rc = sql_iceberg_type(c, t->fields[i].type, next_id, &r->fields[i].type);
			if (rc)
				return rc;
		}
		*out = r;
		return 0;
	}
	if (!strcmp(n, "VARIANT"))
		return sql_err(c, FLOE_EUNSUPPORTED, t->off, "VARIANT columns are not supported yet");
	return sql_err(c, FLOE_EINVAL, t->off,
		       "unknown data type '%s' (BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, "
		       "DOUBLE, DECIMAL(p, s), CHAR(n), VARCHAR(n), STRING, BINARY(n), "
		       "VARBINARY(n), BYTES, DATE, TIME, TIMESTAMP(p), TIMESTAMP_LTZ(p), "
		       "ARRAY<T>, MAP<K, V>, MULTISET<T>, ROW<...>)",
		       n);
}

/* Iceberg -> Flink, for DESCRIBE and SHOW CREATE TABLE. */
static int flink_type(floe_buf *b, const floe_type *t, bool required)
{
	int rc = 0;
	switch (t->id) {
	case FLOE_T_BOOLEAN: rc = floe_buf_puts(b, "BOOLEAN"); break;
	case FLOE_T_INT: rc = floe_buf_puts(b, "INT"); break;
	case FLOE_T_LONG: rc = floe_buf_puts(b, "BIGINT"); break;
	case FLOE_T_FLOAT: rc = floe_buf_puts(b, "FLOAT"); break;
	case FLOE_T_DOUBLE: rc = floe_buf_puts(b, "DOUBLE"); break;
	case FLOE_T_DECIMAL: rc = floe_buf_printf(b, "DECIMAL(%d, %d)", t->precision, t->scale); break;
	case FLOE_T_DATE: rc = floe_buf_puts(b, "DATE"); break;
	case FLOE_T_TIME: rc = floe_buf_puts(b, "TIME"); break;
	case FLOE_T_TIMESTAMP: rc = floe_buf_puts(b, "TIMESTAMP(6)"); break;
	case FLOE_T_TIMESTAMPTZ: rc = floe_buf_puts(b, "TIMESTAMP_LTZ(6)"); break;
	case FLOE_T_TIMESTAMP_NS: rc = floe_buf_puts(b, "TIMESTAMP(9)"); break;
	case FLOE_T_TIMESTAMPTZ_NS: rc = floe_buf_puts(b, "TIMESTAMP_LTZ(9)"); break;
	case FLOE_T_STRING: rc = floe_buf_puts(b, "STRING"); break;
	case FLOE_T_UUID: rc = floe_buf_puts(b, "BINARY(16)"); break;
	case FLOE_T_FIXED: rc = floe_buf_printf(b, "BINARY(%d)", t->length); break;
	case FLOE_T_BINARY: rc = floe_buf_puts(b, "BYTES"); break;
	case FLOE_T_LIST:
		rc = floe_buf_puts(b, "ARRAY<");
		if (!rc)
			rc = flink_type(b, t->element, t->element_required);
		if (!rc)
			rc = floe_buf_putc(b, '>');
		break;
	case FLOE_T_MAP:
		rc = floe_buf_puts(b, "MAP<");
		if (!rc)
			rc = flink_type(b, t->key, true);
		if (!rc)
			rc = floe_buf_puts(b, ", ");
		if (!rc)
			rc = flink_type(b, t->value, t->value_required);
		if (!rc)
			rc = floe_buf_putc(b, '>');
		break;
	case FLOE_T_STRUCT:
		rc = floe_buf_puts(b, "ROW<");
		for (size_t i = 0; i < t->n_fields && !rc; i++) {
			rc = floe_buf_printf(b, "%s`%s` ", i ? ", " : "", t->fields[i].name);
			if (!rc)
				rc = flink_type(b, t->fields[i].type, t->fields[i].required);
		}
		if (!rc)
			rc = floe_buf_putc(b, '>');
		break;
	default: {
		rc = floe_type_format(b, t);
		break;
	}
	}
	if (!rc && required)
		rc = floe_buf_puts(b, " NOT NULL");
	return rc;
}

/* ---- tables ------------------------------------------------------------------------ */

static int open_table(sql_ctx *c, const sql_ref *r, uint32_t off, floe_table **out)
{
	int rc = sql_need_catalog(c, r->cat, off);
	if (rc)
		return rc;
	rc = floe_table_load(out, r->cat->cat, r->db, r->table, c->err);
	if (rc == FLOE_ENOTFOUND)
		return sql_err(c, rc, off, "table '%s.%s.%s' does not exist", r->cat->name, r->db,
			       r->table);
	return sql_wrap(c, rc, off);
}

/* Table options that are Flink's, not Iceberg table properties. */
static bool is_connector_opt(const char *k)
{
	static const char *const keys[] = {"connector", "catalog-name", "catalog-type",
					   "catalog-impl", "catalog-database", "catalog-table",
					   "warehouse", "uri"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(k, keys[i]))
			return true;
	for (size_t i = 0; i < sizeof(CATALOG_OPTS) / sizeof(CATALOG_OPTS[0]); i++)
		if (!strcmp(k, CATALOG_OPTS[i]) && strcmp(k, "format-version"))
			return true;
	return false;
}

/* Build the Iceberg schema of a CREATE TABLE's columns. */
int sql_build_schema(sql_ctx *c, const sql_stmt *st, floe_schema **out)
{
	floe_type *root = new_type(c, FLOE_T_STRUCT);
	int32_t next_id = 1;
	if (!root || !(root->fields = floe_arena_calloc(c->a, st->n_cols ? st->n_cols : 1,
							sizeof(floe_field))))
		return floe_error_oom(c->err);
	root->n_fields = st->n_cols;
	for (size_t i = 0; i < st->n_cols; i++)
		root->fields[i].id = next_id++;
	int32_t *ids = floe_arena_calloc(c->a, st->n_cols + st->n_pk + 1, sizeof(int32_t));
	size_t n_ids = 0;
	if (!ids)
		return floe_error_oom(c->err);
	for (size_t i = 0; i < st->n_cols; i++) {
		const sql_column *col = &st->cols[i];
		if (col->expr)
			return sql_err(c, FLOE_EUNSUPPORTED, col->off,
				       "computed column '%s': an Iceberg table stores columns only",
				       col->name);
		if (col->metadata)
			return sql_err(c, FLOE_EUNSUPPORTED, col->off,
				       "metadata column '%s': an Iceberg table stores columns only",
				       col->name);
		bool pk = col->primary_key;
		for (size_t k = 0; k < st->n_pk; k++)
			pk |= !strcmp(st->pk[k], col->name);
		root->fields[i].name = col->name;
		root->fields[i].required = col->type->not_null || pk;
		root->fields[i].doc = col->comment;
		int rc = sql_iceberg_type(c, col->type, &next_id, &root->fields[i].type);
		if (rc)
			return rc;
		if (pk)
			ids[n_ids++] = root->fields[i].id;
	}
	for (size_t k = 0; k < st->n_pk; k++) {
		bool found = false;
		for (size_t i = 0; i < st->n_cols; i++)
			found |= !strcmp(st->pk[k], st->cols[i].name);
		if (!found)
			return sql_err(c, FLOE_EINVAL, st->pk_off,
				       "primary key column '%s' is not a column of the table", st->pk[k]);
	}
	int rc = floe_schema_make(out, c->a, 0, root, ids, n_ids, c->err);
	return rc ? sql_wrap(c, rc, st->off) : 0;
}

/* PARTITIONED BY (a, day(ts), bucket(16, id), truncate(4, s)) as floe's
 * partition expression text. */
int sql_partition_text(sql_ctx *c, const sql_stmt *st, floe_buf *b)
{
	for (size_t i = 0; i < st->n_partition; i++) {
		const sql_expr *e = st->partition[i];
		int rc = i ? floe_buf_puts(b, ", ") : 0;
		if (rc)
			return floe_error_oom(c->err);
		if (e->kind == SQL_E_COL && e->name.n == 1) {
			rc = floe_buf_printf(b, "%s", e->name.parts[0]);
		} else if (e->kind == SQL_E_CALL) {
			static const char *const fns[] = {"YEAR", "YEARS", "MONTH", "MONTHS", "DAY",
							  "DAYS", "HOUR", "HOURS", "BUCKET", "TRUNCATE",
							  "IDENTITY", "VOID"};
			bool known = false;
			for (size_t k = 0; k < sizeof(fns) / sizeof(fns[0]); k++)
				known |= !strcmp(e->text, fns[k]);
			if (!known)
				return sql_err(c, FLOE_EINVAL, e->off,
					       "unknown partition transform '%s' (year, month, day, hour, "
					       "bucket(N, col), truncate(W, col), identity, void)",
					       e->text);
			rc = floe_buf_printf(b, "%s(", e->text);
			for (size_t a = 0; a < e->n_args && !rc; a++) {
				const sql_expr *x = e->args[a];
				if (x->kind == SQL_E_NUM)
					rc = floe_buf_printf(b, "%s%s", a ? ", " : "", x->text);
				else if (x->kind == SQL_E_COL && x->name.n == 1)
					rc = floe_buf_printf(b, "%s%s", a ? ", " : "", x->name.parts[0]);
				else
					return sql_err(c, FLOE_EINVAL, x->off,
						       "a transform takes a column and a number");
			}
			if (!rc)
				rc = floe_buf_putc(b, ')');
		} else {
			return sql_err(c, FLOE_EINVAL, e->off,
				       "PARTITIONED BY takes columns and transforms (day(ts), bucket(16, "
				       "id), truncate(4, s))");
		}
		if (rc)
			return floe_error_oom(c->err);
	}
	return 0;
}

static int add_source(sql_ctx *c, const sql_stmt *st, const sql_ref *r)
{
	floe_sql *s = c->s;
	const char *conn = sql_opt_get(st->opts, st->n_opts, "connector");
	const sql_opt *co = opt_find(st->opts, st->n_opts, "connector");
	bool stream = !strcmp(conn, "kafka") || !strcmp(conn, "kinesis");
	if (strcmp(conn, "filesystem") && strcmp(conn, "datagen") && !stream) {
		if (!strcmp(conn, "upsert-kafka"))
			return sql_err(c, FLOE_EUNSUPPORTED, co->off,
				       "connector 'upsert-kafka' is not supported by floe sql yet (use "
				       "'kafka' with 'format' = 'debezium-json', or an upsert target: "
				       "PRIMARY KEY ... NOT ENFORCED and 'write.upsert.enabled' = 'true')");
		return sql_err(c, FLOE_EUNSUPPORTED, co->off,
			       "unknown connector '%s' (floe sql reads 'filesystem', 'datagen', "
			       "'kafka' and 'kinesis' sources, and writes Iceberg tables of its "
			       "catalogs)",
			       conn);
	}
	if (!st->n_cols)
		return sql_err(c, FLOE_EINVAL, st->off, "a source table needs its columns");
	for (size_t i = 0; i < st->n_cols; i++) {
		if (st->cols[i].expr)
			return sql_err(c, FLOE_EUNSUPPORTED, st->cols[i].off,
				       "computed columns are not supported yet");
		if (st->cols[i].metadata && !stream)
			return sql_err(c, FLOE_EUNSUPPORTED, st->cols[i].off,
				       "metadata columns belong to kafka and kinesis sources");
		int32_t id = 1;
		const floe_type *ft;
		int rc = sql_iceberg_type(c, st->cols[i].type, &id, &ft);
		if (rc)
			return rc;
	}
	if (sql_find_source(s, r) && !st->if_not_exists)
		return sql_err(c, FLOE_EEXISTS, st->name.off, "table '%s' already exists", r->table);
	if (sql_find_source(s, r))
		return ok(s);
	sql_source *src = floe_realloc(s->sources, (s->n_sources + 1) * sizeof(*src));
	if (!src)
		return floe_error_oom(c->err);
	s->sources = src;
	src = &s->sources[s->n_sources];
	memset(src, 0, sizeof(*src));
	src->catalog = floe_strdup(r->cat->name);
	src->db = floe_strdup(r->db);
	src->name = floe_strdup(r->table);
	src->def = st;
	src->script = c->sc;
	s->n_sources++;
	if (!src->catalog || !src->db || !src->name)
		return floe_error_oom(c->err);
	return ok(s);
}

/* CREATE TABLE t LIKE src [WITH (...)]: src's schema, partition spec, sort
 * order, format version and properties (WITH overrides them). */
static int create_like(sql_ctx *c, const sql_stmt *st, const sql_ref *r)
{
	sql_ref from;
	floe_table *src = NULL;
	floe_strmap props;
	int rc = sql_resolve(c, &st->like, &from);
	if (rc)
		return rc;
	if (sql_find_source(c->s, &from))
		return sql_err(c, FLOE_EUNSUPPORTED, st->like.off,
			       "LIKE a source table is not supported yet");
	if ((rc = open_table(c, &from, st->like.off, &src)))
		return rc;
	const floe_metadata *m = floe_table_metadata(src);
	floe_strmap_init(&props);
	for (size_t i = 0; i < m->n_properties && !rc; i++)
		if (floe_strmap_set(&props, m->properties[i].key, m->properties[i].value))
			rc = floe_error_oom(c->err);
	for (size_t i = 0; i < st->n_opts && !rc; i++) {
		const sql_opt *o = &st->opts[i];
		if (is_connector_opt(o->key))
			continue;
		if ((rc = floe_prop_check(o->key, o->value, c->err)))
			rc = sql_wrap(c, rc, o->off);
		else if (floe_strmap_set(&props, o->key, o->value))
			rc = floe_error_oom(c->err);
	}
	if (!rc) {
		floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
		ts.schema = floe_metadata_current_schema(m);
		ts.spec = floe_metadata_default_spec(m);
		ts.sort_order = floe_metadata_sort_order(m, m->default_sort_order_id);
		ts.properties = &props;
		ts.format_version = floe_strmap_get(&props, "format-version") ? 0 : m->format_version;
		rc = sql_need_catalog(c, r->cat, st->name.off);
		if (!rc)
			rc = floe_table__create(NULL, r->cat->cat, r->db, r->table, &ts, c->err);
		if (rc == FLOE_EEXISTS && st->if_not_exists)
			rc = 0;
		else if (rc == FLOE_EEXISTS)
			rc = sql_err(c, rc, st->name.off, "table '%s.%s.%s' already exists",
				     r->cat->name, r->db, r->table);
		else if (rc)
			rc = sql_wrap(c, rc, st->off);
	}
	floe_strmap_reset(&props);
	floe_table_free(src);
	return rc ? rc : ok(c->s);
}

static int create_iceberg(sql_ctx *c, const sql_stmt *st, const sql_ref *rp);

static int ignore_prop(const char *key, const char *value, void *payload);

/*
 * CREATE TABLE t (...) WITH ('connector'='iceberg', 'catalog-name'=..., the
 * catalog's options, ['catalog-database'], ['catalog-table']): as Flink's
 * Iceberg connector, the table of that catalog (created with its database
 * when missing) under the name t in the session.
 */
static int connector_table(sql_ctx *c, const sql_stmt *st, const sql_ref *r)
{
	floe_sql *s = c->s;
	const char *cname = sql_opt_get(st->opts, st->n_opts, "catalog-name");
	const char *tdb = sql_opt_get(st->opts, st->n_opts, "catalog-database");
	const char *ttab = sql_opt_get(st->opts, st->n_opts, "catalog-table");
	int rc;
	if (!cname)
		return sql_err(c, FLOE_EINVAL, st->off,
			       "a 'connector'='iceberg' table needs 'catalog-name'");
	if (!find_catalog(s, cname) &&
	    (rc = open_catalog(c, cname, st->opts, st->n_opts, st->off, true)))
		return rc;
	sql_ref to = {find_catalog(s, cname), tdb ? tdb : r->db, ttab ? ttab : r->table, NULL};
	floe_error e2 = {0};
	if (floe_catalog_namespace_properties(to.cat->cat, to.db, ignore_prop, NULL, &e2) ==
	    FLOE_ENOTFOUND) {
		rc = floe_catalog_create_namespace(to.cat->cat, to.db, NULL, 0, c->err);
		if (rc && rc != FLOE_EEXISTS)
			return sql_wrap(c, rc, st->off);
	}
	sql_stmt copy = *st;
	copy.if_not_exists = true; /* an existing table is used as it is */
	bool quiet = s->opts.quiet;
	s->opts.quiet = true;
	rc = create_iceberg(c, &copy, &to);
	s->opts.quiet = quiet;
	if (rc)
		return rc;
	sql_alias *al = floe_realloc(s->aliases, (s->n_aliases + 1) * sizeof(*al));
	if (!al)
		return floe_error_oom(c->err);
	s->aliases = al;
	al = &s->aliases[s->n_aliases++];
	al->catalog = floe_strdup(r->cat->name);
	al->db = floe_strdup(r->db);
	al->name = floe_strdup(r->table);
	al->to_catalog = floe_strdup(cname);
	al->to_db = floe_strdup(to.db);
	al->to_name = floe_strdup(to.table);
	if (!al->catalog || !al->db || !al->name || !al->to_catalog || !al->to_db || !al->to_name)
		return floe_error_oom(c->err);
	return ok(s);
}

static int create_table(sql_ctx *c, const sql_stmt *st)
{
	sql_ref r;
	int rc = sql_resolve(c, &st->name, &r);
	if (rc)
		return rc;
	if (r.meta)
		return sql_err(c, FLOE_EINVAL, st->name.off, "'$' names metadata tables");
	const char *conn = sql_opt_get(st->opts, st->n_opts, "connector");
	if (conn && strcmp(conn, "iceberg"))
		return add_source(c, st, &r);
	if (conn)
		return connector_table(c, st, &r);
	return create_iceberg(c, st, &r);
}

const sql_planned *sql_find_planned(floe_sql *s, const sql_ref *r)
{
	for (size_t i = 0; i < s->n_planned; i++)
		if (!strcmp(s->planned[i].catalog, r->cat->name) && !strcmp(s->planned[i].db, r->db) &&
		    !strcmp(s->planned[i].name, r->table))
			return &s->planned[i];
	return NULL;
}

static void planned_free(sql_planned *p)
{
	floe_free(p->catalog);
	floe_free(p->db);
	floe_free(p->name);
}

/* Plan only: the CREATE TABLE is kept in memory for the INSERTs to read. */
static int plan_table(sql_ctx *c, const sql_stmt *st, const sql_ref *r)
{
	floe_sql *s = c->s;
	if (sql_find_planned(s, r)) {
		if (st->if_not_exists)
			return ok(s);
		return sql_err(c, FLOE_EEXISTS, st->name.off, "table '%s.%s.%s' already exists",
			       r->cat->name, r->db, r->table);
	}
	sql_planned *pl = floe_realloc(s->planned, (s->n_planned + 1) * sizeof(*pl));
	if (!pl)
		return floe_error_oom(c->err);
	s->planned = pl;
	pl = &s->planned[s->n_planned];
	pl->catalog = floe_strdup(r->cat->name);
	pl->db = floe_strdup(r->db);
	pl->name = floe_strdup(r->table);
	pl->def = st;
	if (!pl->catalog || !pl->db || !pl->name) {
		planned_free(pl);
		return floe_error_oom(c->err);
	}
	s->n_planned++;
	return ok(s);
}

/* The Iceberg table of a CREATE TABLE (r: where it goes). */
static int create_iceberg(sql_ctx *c, const sql_stmt *st, const sql_ref *rp)
{
	sql_ref r = *rp;
	int rc;
	if (st->like.n && c->s->planning)
		return sql_err(c, FLOE_EUNSUPPORTED, st->like.off,
			       "floe plan does not take CREATE TABLE ... LIKE yet: declare the "
			       "table's columns and PARTITIONED BY");
	if (st->like.n)
		return create_like(c, st, &r);
	if (st->has_watermark)
		return sql_err(c, FLOE_EUNSUPPORTED, st->off,
			       "WATERMARK on an Iceberg table is not supported (declare it on the "
			       "source table)");
	floe_schema *schema;
	if ((rc = sql_build_schema(c, st, &schema)))
		return rc;
	floe_buf pb;
	floe_buf_init(&pb, 1 << 16);
	floe_partition_spec *spec = NULL;
	floe_strmap props;
	floe_strmap_init(&props);
	int fv = 0;
	if ((rc = sql_partition_text(c, st, &pb)))
		goto done;
	if (pb.len) {
		int32_t lp = FLOE_PARTITION_FIELD_ID_START - 1;
		rc = floe_spec_parse_expr(&spec, c->a, floe_buf_cstr(&pb), schema, 0, &lp, c->err);
		if (rc) {
			rc = sql_wrap(c, rc, st->partition[0]->off);
			goto done;
		}
	}
	for (size_t i = 0; i < st->n_opts; i++) {
		const sql_opt *o = &st->opts[i];
		if (is_connector_opt(o->key))
			continue;
		rc = floe_prop_check(o->key, o->value, c->err);
		if (rc) {
			rc = sql_wrap(c, rc, o->off);
			goto done;
		}
		if (!strcmp(o->key, "format-version")) {
			int64_t v = 0;
			floe_parse_i64(o->value, strlen(o->value), &v);
			fv = (int)v;
		}
		if (floe_strmap_set(&props, o->key, o->value)) {
			rc = floe_error_oom(c->err);
			goto done;
		}
	}
	if (st->comment && floe_strmap_set(&props, "comment", st->comment)) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	floe_table_spec ts = FLOE_TABLE_SPEC_INIT;
	ts.schema = schema;
	ts.spec = spec;
	ts.properties = &props;
	ts.format_version = fv;
	rc = sql_need_catalog(c, r.cat, st->name.off);
	if (rc)
		goto done;
	if (c->s->planning) {
		rc = plan_table(c, st, &r);
		goto done;
	}
	rc = floe_table__create(NULL, r.cat->cat, r.db, r.table, &ts, c->err);
	if (rc == FLOE_EEXISTS && st->if_not_exists)
		rc = 0;
	else if (rc == FLOE_EEXISTS)
		rc = sql_err(c, rc, st->name.off, "table '%s.%s.%s' already exists", r.cat->name, r.db,
			     r.table);
	else if (rc)
		rc = sql_wrap(c, rc, st->off);
	if (!rc)
		rc = ok(c->s);
done:
	floe_buf_reset(&pb);
	floe_strmap_reset(&props);
	return rc;
}

/* ---- ALTER TABLE ... columns (a new schema) --------------------------------------- */

typedef struct schema_change {
	sql_ctx *c;
	const sql_stmt *st;
} schema_change;

static bool field_used(const floe_metadata *m, const floe_schema *s, int32_t id)
{
	for (size_t i = 0; i < s->n_identifier_field_ids; i++)
		if (s->identifier_field_ids[i] == id)
			return true;
	const floe_partition_spec *sp = floe_metadata_default_spec(m);
	for (size_t i = 0; sp && i < sp->n_fields; i++)
		if (sp->fields[i].source_id == id)
			return true;
	return false;
}

static int build_schema_change(void *payload, const floe_metadata *base, int attempt,
			       floe_metadata **next, floe_error *err)
{
	schema_change *ch = payload;
	sql_ctx *c = ch->c;
	const sql_stmt *st = ch->st;
	const floe_schema *cur = floe_metadata_current_schema(base);
	const floe_type *old = cur->root;
	floe_metadata_builder *b = NULL;
	(void)attempt;
	(void)err;
	size_t cap = old->n_fields + st->n_cols + 1;
	floe_type *root = new_type(c, FLOE_T_STRUCT);
	if (!root || !(root->fields = floe_arena_calloc(c->a, cap, sizeof(floe_field))))
		return floe_error_oom(c->err);
	size_t n = 0;
	int rc;
	const int32_t *ids = cur->identifier_field_ids;
	size_t n_ids = cur->n_identifier_field_ids;
	if (st->alter == SQL_A_ADD_COLUMN) {
		int32_t next_id = base->last_column_id + 1;
		memcpy(root->fields, old->fields, old->n_fields * sizeof(floe_field));
		n = old->n_fields;
		for (size_t i = 0; i < st->n_cols; i++) {
			const sql_column *col = &st->cols[i];
			for (size_t k = 0; k < n; k++)
				if (!strcasecmp(root->fields[k].name, col->name))
					return sql_err(c, FLOE_EEXISTS, col->off,
						       "column '%s' already exists", col->name);
			if (col->expr || col->metadata || col->primary_key)
				return sql_err(c, FLOE_EUNSUPPORTED, col->off,
					       "ADD COLUMN takes a plain column (name type [COMMENT])");
			if (col->type->not_null)
				return sql_err(c, FLOE_EINVAL, col->off,
					       "an added column must be nullable: existing rows have no "
					       "value for '%s'",
					       col->name);
			floe_field *f = &root->fields[n++];
			memset(f, 0, sizeof(*f));
			f->id = next_id++;
			f->name = col->name;
			f->doc = col->comment;
			if ((rc = sql_iceberg_type(c, col->type, &next_id, &f->type)))
				return rc;
		}
	} else if (st->alter == SQL_A_RENAME_COLUMN) {
		bool found = false;
		for (size_t k = 0; k < old->n_fields; k++) {
			root->fields[n] = old->fields[k];
			if (!strcmp(old->fields[k].name, st->col)) {
				root->fields[n].name = st->new_col;
				found = true;
			} else if (!strcasecmp(old->fields[k].name, st->new_col)) {
				return sql_err(c, FLOE_EEXISTS, st->off, "column '%s' already exists",
					       st->new_col);
			}
			n++;
		}
		if (!found)
			return sql_err(c, FLOE_EINVAL, st->off, "column '%s' does not exist", st->col);
	} else { /* DROP */
		for (size_t k = 0; k < st->n_keys; k++) {
			bool found = false;
			for (size_t j = 0; j < old->n_fields; j++)
				if (!strcmp(old->fields[j].name, st->keys[k])) {
					found = true;
					if (field_used(base, cur, old->fields[j].id))
						return sql_err(c, FLOE_EINVAL, st->off,
							       "column '%s' is a primary key or "
							       "partition source: it cannot be dropped",
							       st->keys[k]);
				}
			if (!found)
				return sql_err(c, FLOE_EINVAL, st->off, "column '%s' does not exist",
					       st->keys[k]);
		}
		for (size_t j = 0; j < old->n_fields; j++) {
			bool drop = false;
			for (size_t k = 0; k < st->n_keys; k++)
				drop |= !strcmp(old->fields[j].name, st->keys[k]);
			if (!drop)
				root->fields[n++] = old->fields[j];
		}
		if (!n)
			return sql_err(c, FLOE_EINVAL, st->off, "a table needs at least one column");
	}
	root->n_fields = n;
	floe_schema *ns;
	if ((rc = floe_schema_make(&ns, c->a, cur->schema_id + 1, root, ids, n_ids, c->err)))
		return rc;
	int32_t sid;
	if ((rc = floe_metadata_builder_from(&b, base, c->err)) ||
	    (rc = floe_mb_add_schema(b, ns, &sid, c->err)) ||
	    (rc = floe_mb_set_current_schema(b, sid, c->err))) {
		floe_metadata_builder_free(b);
		return rc;
	}
	return floe_metadata_builder_finish(next, b, base->metadata_location, base->last_updated_ms,
					    c->err);
}

/* MODIFY, partition fields, the write order: floe_table_alter's changes, all
 * of a statement's committed together or none */
static int alter_evolve(sql_ctx *c, const sql_stmt *st, floe_table *t)
{
	const floe_schema *cur = floe_metadata_current_schema(floe_table_metadata(t));
	floe_alter_op *ops = floe_arena_calloc(c->a, 2 * st->n_cols + 2, sizeof(*ops));
	size_t n = 0;
	int rc;
	if (!ops)
		return floe_error_oom(c->err);
	if (st->alter == SQL_A_MODIFY) {
		for (size_t i = 0; i < st->n_cols; i++) {
			const sql_column *col = &st->cols[i];
			const floe_field *f = floe_schema_field(cur, col->name);
			if (!f)
				return sql_err(c, FLOE_EINVAL, col->off, "column '%s' does not exist", col->name);
			if (col->expr || col->metadata || col->primary_key)
				return sql_err(c, FLOE_EUNSUPPORTED, col->off,
					       "MODIFY takes a column's new type (name type [NOT NULL])");
			if (col->type->not_null && !f->required)
				return sql_err(c, FLOE_EINVAL, col->off,
					       "'%s' cannot become NOT NULL: existing rows may hold NULL",
					       col->name);
			int32_t next_id = 1 << 30;
			const floe_type *nt;
			if ((rc = sql_iceberg_type(c, col->type, &next_id, &nt)))
				return rc;
			floe_buf b;
			floe_buf_init(&b, 0);
			if (floe_type_format(&b, nt)) {
				floe_buf_reset(&b);
				return floe_error_oom(c->err);
			}
			floe_buf cb;
			floe_buf_init(&cb, 0);
			if (floe_type_format(&cb, f->type)) {
				floe_buf_reset(&b);
				floe_buf_reset(&cb);
				return floe_error_oom(c->err);
			}
			bool same = b.len == cb.len && !memcmp(b.data, cb.data, b.len);
			floe_buf_reset(&cb);
			const char *ts = floe_arena_strndup(c->a, (const char *)b.data, b.len);
			floe_buf_reset(&b);
			if (!ts)
				return floe_error_oom(c->err);
			if (!same)
				ops[n++] = (floe_alter_op){FLOE_ALTER_UPDATE_TYPE, col->name, ts, NULL, NULL};
			if (f->required && !col->type->not_null)
				ops[n++] = (floe_alter_op){FLOE_ALTER_MAKE_OPTIONAL, col->name, NULL, NULL, NULL};
		}
		if (!n)
			return FLOE_OK; /* nothing changes */
	} else {
		floe_alter_kind k = st->alter == SQL_A_ADD_PARTITION	 ? FLOE_ALTER_ADD_PARTITION
				    : st->alter == SQL_A_DROP_PARTITION	 ? FLOE_ALTER_DROP_PARTITION
				    : st->alter == SQL_A_REPLACE_PARTITION ? FLOE_ALTER_REPLACE_PARTITION
									   : FLOE_ALTER_WRITE_ORDER;
		ops[n++] = (floe_alter_op){k, NULL, st->text, st->text2, NULL};
	}
	char *summary = NULL;
	rc = floe_table_alter(t, ops, n, &summary, c->err);
	floe_free(summary);
	return rc ? sql_wrap(c, rc, st->off) : FLOE_OK;
}

/* CREATE [OR REPLACE] BRANCH|TAG, DROP BRANCH|TAG (Spark's Iceberg SQL extensions) */
static int alter_ref(sql_ctx *c, const sql_stmt *st, floe_table *t)
{
	bool tag = st->alter == SQL_A_CREATE_TAG || st->alter == SQL_A_DROP_TAG;
	bool create = st->alter == SQL_A_CREATE_BRANCH || st->alter == SQL_A_CREATE_TAG;
	int64_t head;
	bool is_tag = false;
	bool exists = floe_table_ref(t, st->col, &head, &is_tag) == FLOE_OK;
	if (exists && is_tag != tag && strcmp(st->col, "main"))
		return sql_err(c, FLOE_EEXISTS, st->off, "'%s' is a %s", st->col, is_tag ? "tag" : "branch");
	floe_ref_opts o = FLOE_REF_OPTS_INIT;
	o.name = st->col;
	if (!create) {
		if (!exists)
			return st->ref_if_exists ? FLOE_OK
						 : sql_err(c, FLOE_ENOTFOUND, st->off, "no %s '%s'",
							   tag ? "tag" : "branch", st->col);
		o.action = tag ? FLOE_REF_DROP_TAG : FLOE_REF_DROP_BRANCH;
	} else {
		if (exists && st->ref_if_not_exists)
			return FLOE_OK;
		if (exists && !st->ref_or_replace)
			return sql_err(c, FLOE_EEXISTS, st->off, "%s '%s' already exists (CREATE OR REPLACE %s)",
				       tag ? "tag" : "branch", st->col, tag ? "TAG" : "BRANCH");
		o.action = exists ? FLOE_REF_REPLACE_BRANCH : tag ? FLOE_REF_CREATE_TAG : FLOE_REF_CREATE_BRANCH;
		if (exists && tag) {
			/* a tag is replaced by dropping and creating it again, in two commits */
			floe_ref_opts d = FLOE_REF_OPTS_INIT;
			d.name = st->col;
			d.action = FLOE_REF_DROP_TAG;
			int rc = floe_table_manage_ref(t, &d, c->err);
			if (rc)
				return sql_wrap(c, rc, st->off);
			o.action = FLOE_REF_CREATE_TAG;
		}
		o.snapshot_id = st->ref_snapshot;
		o.max_ref_age_ms = st->ref_retain_ms;
		o.min_snapshots_to_keep = st->ref_keep;
		o.max_snapshot_age_ms = st->ref_keep_ms;
	}
	int rc = floe_table_manage_ref(t, &o, c->err);
	if (!rc && create && exists && !tag &&
	    (st->ref_retain_ms >= 0 || st->ref_keep >= 0 || st->ref_keep_ms >= 0)) {
		floe_ref_opts r = o;
		r.action = FLOE_REF_SET_RETENTION;
		rc = floe_table_manage_ref(t, &r, c->err);
	}
	return rc ? sql_wrap(c, rc, st->off) : FLOE_OK;
}

static int alter_table(sql_ctx *c, const sql_stmt *st)
{
	sql_ref r;
	floe_table *t = NULL;
	int rc = sql_resolve(c, &st->name, &r);
	if (rc)
		return rc;
	rc = open_table(c, &r, st->name.off, &t);
	if (rc == FLOE_ENOTFOUND && st->if_exists)
		return ok(c->s);
	if (rc)
		return rc;
	switch (st->alter) {
	case SQL_A_SET: {
		floe_prop *set = floe_arena_calloc(c->a, st->n_opts + 1, sizeof(floe_prop));
		if (!set) {
			rc = floe_error_oom(c->err);
			break;
		}
		for (size_t i = 0; i < st->n_opts && !rc; i++) {
			set[i].key = st->opts[i].key;
			set[i].value = st->opts[i].value;
			rc = floe_prop_check(set[i].key, set[i].value, c->err);
			if (rc)
				rc = sql_wrap(c, rc, st->opts[i].off);
		}
		if (!rc && (rc = floe_table_set_properties(t, set, st->n_opts, NULL, 0, c->err)))
			rc = sql_wrap(c, rc, st->off);
		break;
	}
	case SQL_A_RESET:
		if ((rc = floe_table_set_properties(t, NULL, 0, st->keys, st->n_keys, c->err)))
			rc = sql_wrap(c, rc, st->off);
		break;
	case SQL_A_RENAME: {
		sql_ref to;
		if ((rc = sql_resolve(c, &st->to, &to)))
			break;
		if (to.cat != r.cat) {
			rc = sql_err(c, FLOE_EINVAL, st->to.off, "a table cannot move between catalogs");
			break;
		}
		if ((rc = sql_need_catalog(c, r.cat, st->off)) ||
		    (rc = floe_catalog_rename_table(r.cat->cat, r.db, r.table, to.db, to.table, c->err)))
			rc = sql_wrap(c, rc, st->off);
		break;
	}
	case SQL_A_MODIFY:
	case SQL_A_ADD_PARTITION:
	case SQL_A_DROP_PARTITION:
	case SQL_A_REPLACE_PARTITION:
	case SQL_A_WRITE_ORDER:
		rc = alter_evolve(c, st, t);
		break;
	case SQL_A_CREATE_BRANCH:
	case SQL_A_CREATE_TAG:
	case SQL_A_DROP_BRANCH:
	case SQL_A_DROP_TAG:
		rc = alter_ref(c, st, t);
		break;
	default: {
		schema_change ch = {c, st};
		static const floe_commit_fns fns = {build_schema_change, NULL, NULL};
		rc = floe_table__commit(t, "alter the schema of", &fns, &ch, c->err);
		if (rc && !strstr(c->err->msg, "line "))
			rc = sql_wrap(c, rc, st->off);
		break;
	}
	}
	floe_table_free(t);
	return rc ? rc : ok(c->s);
}

/* ---- SHOW, DESCRIBE ---------------------------------------------------------------- */

typedef struct name_list {
	sql_rows *rows;
	bool tables;
	int rc;
} name_list;

static int on_name(const char *ns, const char *name, void *payload)
{
	name_list *l = payload;
	const char *cell = l->tables ? name : ns;
	if (!l->rc)
		l->rc = sql_rows_add(l->rows, &cell);
	return 0;
}

static int show(sql_ctx *c, const sql_stmt *st)
{
	floe_sql *s = c->s;
	sql_rows rows;
	const char *w = st->what;
	int rc;
	if (!strcmp(w, "CURRENT_CATALOG") || !strcmp(w, "CURRENT_DATABASE")) {
		const char *col = !strcmp(w, "CURRENT_CATALOG") ? "current catalog name"
								: "current database name";
		const char *v = !strcmp(w, "CURRENT_CATALOG") ? s->cats[s->cur_cat]->name : s->cur_db;
		if ((rc = sql_rows_init(&rows, c->a, &col, 1)) || (rc = sql_rows_add(&rows, &v)))
			return floe_error_oom(c->err);
		return sql_rows_print(s, &rows);
	}
	if (!strcmp(w, "CATALOGS")) {
		const char *col = "catalog name";
		if (sql_rows_init(&rows, c->a, &col, 1))
			return floe_error_oom(c->err);
		for (size_t i = 0; i < s->n_cats; i++) {
			const char *v = s->cats[i]->name;
			if (sql_rows_add(&rows, &v))
				return floe_error_oom(c->err);
		}
		return sql_rows_print(s, &rows);
	}
	sql_catalog *cat = s->cats[s->cur_cat];
	const char *db = s->cur_db;
	if (st->name.n) {
		if (!strcmp(w, "DATABASES")) {
			if (!(cat = find_catalog(s, st->name.parts[0])))
				return sql_err(c, FLOE_EINVAL, st->name.off, "catalog '%s' does not exist",
					       st->name.parts[0]);
		} else {
			if (st->name.n == 2 && !(cat = find_catalog(s, st->name.parts[0])))
				return sql_err(c, FLOE_EINVAL, st->name.off, "catalog '%s' does not exist",
					       st->name.parts[0]);
			db = st->name.parts[st->name.n - 1];
		}
	}
	const char *col = !strcmp(w, "DATABASES") ? "database name" : "table name";
	if (sql_rows_init(&rows, c->a, &col, 1))
		return floe_error_oom(c->err);
	name_list l = {&rows, !strcmp(w, "TABLES"), 0};
	if (!cat->cat && !l.tables)
		return sql_need_catalog(c, cat, st->off);
	for (size_t i = 0; l.tables && i < s->n_aliases; i++)
		if (!strcmp(s->aliases[i].catalog, cat->name) && !strcmp(s->aliases[i].db, db))
			on_name(db, s->aliases[i].name, &l);
	if (l.tables && !cat->cat) {
		rc = 0;
		for (size_t i = 0; i < s->n_sources; i++)
			if (!strcmp(s->sources[i].catalog, cat->name) && !strcmp(s->sources[i].db, db))
				on_name(db, s->sources[i].name, &l);
	} else if (l.tables) {
		rc = floe_catalog_list_tables(cat->cat, db, on_name, &l, c->err);
		for (size_t i = 0; !rc && i < s->n_sources; i++)
			if (!strcmp(s->sources[i].catalog, cat->name) && !strcmp(s->sources[i].db, db))
				on_name(db, s->sources[i].name, &l);
	} else {
		rc = floe_catalog_list_namespaces(cat->cat, NULL, on_name, &l, c->err);
	}
	if (rc)
		return sql_wrap(c, rc, st->off);
	if (l.rc)
		return floe_error_oom(c->err);
	return sql_rows_print(s, &rows);
}

static const char *type_str(sql_ctx *c, const floe_type *t, bool required)
{
	floe_buf b;
	floe_buf_init(&b, 1 << 16);
	if (flink_type(&b, t, required)) {
		floe_buf_reset(&b);
		return NULL;
	}
	const char *s = floe_arena_strndup(c->a, b.data ? (const char *)b.data : "", b.len);
	floe_buf_reset(&b);
	return s;
}

static int describe(sql_ctx *c, const sql_stmt *st)
{
	sql_ref r;
	floe_table *t = NULL;
	int rc = sql_resolve(c, &st->name, &r);
	if (rc)
		return rc;
	static const char *const cols[] = {"name", "type", "null", "key", "extras", "watermark"};
	sql_rows rows;
	if (sql_rows_init(&rows, c->a, cols, 6))
		return floe_error_oom(c->err);
	const sql_source *src = sql_find_source(c->s, &r);
	if (src) {
		for (size_t i = 0; i < src->def->n_cols; i++) {
			const sql_column *col = &src->def->cols[i];
			int32_t id = 1;
			const floe_type *ft;
			floe_error e2 = {0};
			sql_ctx c2 = *c;
			c2.err = &e2;
			c2.sc = src->script;
			if (sql_iceberg_type(&c2, col->type, &id, &ft))
				continue;
			const char *cells[6] = {col->name, type_str(c, ft, false),
						col->type->not_null ? "FALSE" : "TRUE", NULL, NULL, NULL};
			if (!cells[1] || sql_rows_add(&rows, cells))
				return floe_error_oom(c->err);
		}
		return sql_rows_print(c->s, &rows);
	}
	if ((rc = open_table(c, &r, st->name.off, &t)))
		return rc;
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	for (size_t i = 0; i < s->root->n_fields && !rc; i++) {
		const floe_field *f = &s->root->fields[i];
		bool pk = false;
		for (size_t k = 0; k < s->n_identifier_field_ids; k++)
			pk |= s->identifier_field_ids[k] == f->id;
		const char *cells[6] = {f->name, type_str(c, f->type, false),
					f->required ? "FALSE" : "TRUE",
					pk ? "PRI" : NULL, f->doc, NULL};
		if (!cells[1] || sql_rows_add(&rows, cells))
			rc = floe_error_oom(c->err);
	}
	if (!rc)
		rc = sql_rows_print(c->s, &rows);
	floe_table_free(t);
	return rc;
}

/*
 * An Iceberg table read by an INSERT, as a source table of the session: the
 * table's columns as a CREATE TABLE of Flink types (what SHOW CREATE TABLE
 * prints) with the internal connector 'floe-iceberg', so the INSERT path
 * (column checks, computed projections, the source's YAML: the pipeline's
 * `type: iceberg` source) takes it like any other. The read hints ride along
 * as its options. The script is kept by the session, as a script's own.
 */
int sql_iceberg_source(sql_ctx *c, const sql_ref *r, const sql_opt *hints, size_t n_hints, uint32_t off,
		       const sql_source **out)
{
	floe_table *t = NULL;
	int rc = open_table(c, r, off, &t);
	if (rc)
		return rc;
	const floe_schema *s = floe_metadata_current_schema(floe_table_metadata(t));
	const floe_field **fs = floe_arena_calloc(c->a, s->root->n_fields + 1, sizeof(*fs));
	floe_buf w;
	floe_buf_init(&w, 0);
	rc = fs ? floe_buf_printf(&w, "'connector' = 'floe-iceberg', 'source-table' = '%s.%s'", r->db, r->table)
		: FLOE_ENOMEM;
	for (size_t i = 0; i < n_hints && !rc; i++)
		rc = floe_buf_printf(&w, ", '%s' = '%s'", hints[i].key, hints[i].value);
	for (size_t i = 0; fs && i < s->root->n_fields; i++)
		fs[i] = &s->root->fields[i];
	if (!rc)
		rc = sql_make_source(c, r, fs, s->root->n_fields, floe_buf_cstr(&w), out);
	else
		rc = floe_error_oom(c->err);
	floe_buf_reset(&w);
	floe_table_free(t);
	return rc;
}

/* A source table named like r, of these columns (Flink types of their
 * Iceberg types, all nullable) and these WITH options. */
int sql_make_source(sql_ctx *c, const sql_ref *r, const floe_field *const *fields, size_t n_fields,
		    const char *with, const sql_source **out)
{
	floe_buf b;
	floe_buf_init(&b, 0);
	int rc = floe_buf_printf(&b, "CREATE TEMPORARY TABLE `%s` (\n", r->table);
	for (size_t i = 0; i < n_fields && !rc; i++) {
		const floe_field *f = fields[i];
		rc = floe_buf_printf(&b, "  `%s` ", f->name);
		if (!rc)
			rc = flink_type(&b, f->type, false);
		if (!rc)
			rc = floe_buf_puts(&b, i + 1 < n_fields ? ",\n" : "\n");
	}
	if (!rc)
		rc = floe_buf_printf(&b, ") WITH (%s);", with);
	if (rc) {
		floe_buf_reset(&b);
		return floe_error_oom(c->err);
	}
	floe_sql *ss = c->s;
	char *copy = floe_strndup((const char *)b.data, b.len);
	size_t n = b.len;
	floe_buf_reset(&b);
	sql_script *sc = NULL;
	if (!copy)
		return floe_error_oom(c->err);
	if ((rc = floe_sql__parse(&sc, copy, n, "(the table as a source)", c->err))) {
		floe_free(copy);
		return rc;
	}
	sql_script **scripts = floe_realloc(ss->scripts, (ss->n_scripts + 1) * sizeof(*scripts));
	char **texts = scripts ? floe_realloc(ss->texts, (ss->n_scripts + 1) * sizeof(*texts)) : NULL;
	if (scripts)
		ss->scripts = scripts;
	if (texts)
		ss->texts = texts;
	sql_source *src = scripts && texts ? floe_arena_calloc(&sc->arena, 1, sizeof(*src)) : NULL;
	if (!src) {
		floe_sql__script_free(sc);
		floe_free(copy);
		return floe_error_oom(c->err);
	}
	ss->scripts[ss->n_scripts] = sc;
	ss->texts[ss->n_scripts] = copy;
	ss->n_scripts++;
	src->catalog = floe_arena_strdup(&sc->arena, r->cat->name);
	src->db = floe_arena_strdup(&sc->arena, r->db);
	src->name = floe_arena_strdup(&sc->arena, r->table);
	src->def = sc->stmts[0];
	src->script = sc;
	if (!src->catalog || !src->db || !src->name)
		return floe_error_oom(c->err);
	*out = src;
	return FLOE_OK;
}

static int show_create_table(sql_ctx *c, const sql_stmt *st)
{
	sql_ref r;
	floe_table *t = NULL;
	int rc = sql_resolve(c, &st->name, &r);
	if (rc)
		return rc;
	const sql_source *src = sql_find_source(c->s, &r);
	if (src) {
		const sql_stmt *d = src->def;
		rc = sql_out(c->s, src->script->text + d->off, d->end - d->off);
		return rc ? rc : sql_out(c->s, ";\n", 2);
	}
	if ((rc = open_table(c, &r, st->name.off, &t)))
		return rc;
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	floe_buf b;
	floe_buf_init(&b, 1 << 20);
	rc = floe_buf_printf(&b, "CREATE TABLE `%s`.`%s`.`%s` (\n", r.cat->name, r.db, r.table);
	for (size_t i = 0; i < s->root->n_fields && !rc; i++) {
		const floe_field *f = &s->root->fields[i];
		rc = floe_buf_printf(&b, "  `%s` ", f->name);
		if (!rc)
			rc = flink_type(&b, f->type, f->required);
		if (!rc && f->doc)
			rc = floe_buf_printf(&b, " COMMENT '%s'", f->doc);
		if (!rc && (i + 1 < s->root->n_fields || s->n_identifier_field_ids))
			rc = floe_buf_putc(&b, ',');
		if (!rc)
			rc = floe_buf_putc(&b, '\n');
	}
	if (!rc && s->n_identifier_field_ids) {
		rc = floe_buf_puts(&b, "  PRIMARY KEY (");
		for (size_t k = 0; k < s->n_identifier_field_ids && !rc; k++) {
			const floe_schema_entry *e = floe_schema_find(s, s->identifier_field_ids[k]);
			rc = floe_buf_printf(&b, "%s`%s`", k ? ", " : "", e ? e->full_name : "?");
		}
		if (!rc)
			rc = floe_buf_puts(&b, ") NOT ENFORCED\n");
	}
	if (!rc)
		rc = floe_buf_puts(&b, ")");
	const floe_partition_spec *sp = floe_metadata_default_spec(m);
	if (!rc && sp && sp->n_fields) {
		rc = floe_buf_puts(&b, " PARTITIONED BY (");
		for (size_t i = 0; i < sp->n_fields && !rc; i++) {
			const floe_schema_entry *e = floe_schema_find(s, sp->fields[i].source_id);
			const char *col = e ? e->full_name : "?";
			const floe_transform *tr = &sp->fields[i].transform;
			if (i)
				rc = floe_buf_puts(&b, ", ");
			if (!rc && tr->kind == FLOE_TR_IDENTITY) {
				rc = floe_buf_printf(&b, "`%s`", col);
			} else if (!rc) {
				floe_buf tb;
				floe_buf_init(&tb, 256);
				rc = floe_transform_format(&tb, tr);
				/* "bucket[16]" -> bucket(16, `id`); "day" -> day(`ts`) */
				const char *ts = floe_buf_cstr(&tb);
				const char *br = strchr(ts, '[');
				if (!rc && br)
					rc = floe_buf_printf(&b, "%.*s(%.*s, `%s`)", (int)(br - ts), ts,
							     (int)(strlen(br) - 2), br + 1, col);
				else if (!rc)
					rc = floe_buf_printf(&b, "%s(`%s`)", ts, col);
				floe_buf_reset(&tb);
			}
		}
		if (!rc)
			rc = floe_buf_putc(&b, ')');
	}
	if (!rc)
		rc = floe_buf_printf(&b, " WITH (\n  'format-version' = '%d'", m->format_version);
	for (size_t i = 0; i < m->n_properties && !rc; i++)
		rc = floe_buf_printf(&b, ",\n  '%s' = '%s'", m->properties[i].key,
				     m->properties[i].value);
	if (!rc)
		rc = floe_buf_puts(&b, "\n);\n");
	if (!rc)
		rc = sql_out(c->s, floe_buf_cstr(&b), b.len);
	else
		rc = floe_error_oom(c->err);
	floe_buf_reset(&b);
	floe_table_free(t);
	return rc;
}

/* ---- SET --------------------------------------------------------------------------- */

typedef enum { K_DURATION, K_INT, K_BOOL, K_ANY, K_MODE, K_ERRORS, K_SIZE } key_kind;
static const struct {
	const char *key;
	key_kind kind;
} SET_KEYS[] = {
	{"execution.checkpointing.interval", K_DURATION},
	{"execution.checkpointing.min-pause", K_DURATION},
	{"execution.runtime-mode", K_MODE},
	{"table.exec.iceberg.use-v2-sink", K_BOOL},
	{"compaction-enabled", K_BOOL},
	{"pipeline.name", K_ANY},
	{"parallelism.default", K_INT},
	{"flink-maintenance.lock.type", K_ANY},
	{"flink-maintenance.lock.jdbc.uri", K_ANY},
	{"flink-maintenance.lock.jdbc.init-lock-table", K_BOOL},
	{"flink-maintenance.lock.lock-id", K_ANY},
	{"flink-maintenance.lock.check-delay-seconds", K_INT},
	{"flink-maintenance.rate-limit-seconds", K_INT},
	{"flink-maintenance.rewrite.schedule.commit-count", K_INT},
	{"flink-maintenance.rewrite.schedule.data-file-count", K_INT},
	{"flink-maintenance.rewrite.schedule.data-file-size", K_INT},
	{"flink-maintenance.rewrite.schedule.interval-second", K_INT},
	{"flink-maintenance.rewrite.max-bytes", K_INT},
	{"flink-maintenance.rewrite.target-file-size-bytes", K_INT},
	{"flink-maintenance.rewrite.min-input-files", K_INT},
	{"flink-maintenance.rewrite.partial-progress.enabled", K_BOOL},
	{"flink-maintenance.rewrite.partial-progress.max-commits", K_INT},
	{"flink-maintenance.expire-snapshots.max-snapshot-age-seconds", K_INT},
	{"flink-maintenance.expire-snapshots.retain-last", K_INT},
	{"flink-maintenance.expire-snapshots.schedule.commit-count", K_INT},
	{"sql-client.execution.result-mode", K_ANY},
	{"table.dml-sync", K_BOOL},
	{"table.exec.resource.default-parallelism", K_INT},
	{"errors", K_ERRORS},
	{"dead-letter.path", K_ANY},
	{"sql.memory-budget", K_SIZE},
};

static int set_option(sql_ctx *c, const sql_stmt *st)
{
	floe_sql *s = c->s;
	if (!st->key) {
		static const char *const cols[] = {"key", "value"};
		sql_rows rows;
		if (sql_rows_init(&rows, c->a, cols, 2))
			return floe_error_oom(c->err);
		for (size_t i = 0; i < s->set.len; i++) {
			const char *cells[2] = {s->set.items[i].key, s->set.items[i].value};
			if (sql_rows_add(&rows, cells))
				return floe_error_oom(c->err);
		}
		return sql_rows_print(s, &rows);
	}
	const char *k = st->key, *v = st->value;
	bool known = false;
	for (size_t i = 0; i < sizeof(SET_KEYS) / sizeof(SET_KEYS[0]); i++) {
		if (strcmp(SET_KEYS[i].key, k))
			continue;
		known = true;
		int64_t x;
		bool good = true;
		switch (SET_KEYS[i].kind) {
		case K_DURATION: good = floe_parse_duration_ms(v, &x) && x >= 0; break;
		case K_INT: good = floe_parse_i64(v, strlen(v), &x) && x >= 0; break;
		case K_BOOL: good = ieq(v, "true") || ieq(v, "false"); break;
		case K_MODE:
			good = ieq(v, "streaming") || ieq(v, "batch") || ieq(v, "automatic");
			break;
		case K_ERRORS: good = !strcmp(v, "dead-letter") || !strcmp(v, "fail"); break;
		case K_SIZE: good = floe_parse_size(v, &x) && x > 0; break;
		case K_ANY: break;
		}
		if (!good)
			return sql_err(c, FLOE_EINVAL, st->off, "SET '%s' = '%s': expected %s", k, v,
				       SET_KEYS[i].kind == K_DURATION ? "a duration (10s, 500ms, 2m)"
				       : SET_KEYS[i].kind == K_INT    ? "a number >= 0"
				       : SET_KEYS[i].kind == K_BOOL   ? "true or false"
				       : SET_KEYS[i].kind == K_ERRORS ? "dead-letter or fail"
				       : SET_KEYS[i].kind == K_SIZE   ? "a size (512MiB, 8GiB)"
								      : "streaming, batch or automatic");
	}
	if (!known && strncmp(k, "table.", 6) && strncmp(k, "execution.", 10) &&
	    strncmp(k, "pipeline.", 9) && strncmp(k, "sql-client.", 11) &&
	    strncmp(k, "state.", 6) && strncmp(k, "restart-strategy", 16))
		return sql_err(c, FLOE_EINVAL, st->off,
			       "unknown option '%s' (floe reads execution.checkpointing.interval, "
			       "execution.checkpointing.min-pause, execution.runtime-mode, "
			       "pipeline.name, parallelism.default, compaction-enabled, "
			       "flink-maintenance.*, errors, dead-letter.path, sql.memory-budget)",
			       k);
	if (!known)
		floe_log(FLOE_LOG_WARN, "SET '%s': Flink's option is accepted and not used by floe", k);
	if (floe_strmap_set(&s->set, k, v))
		return floe_error_oom(c->err);
	return ok(s);
}

/* ---- statements ---------------------------------------------------------------------- */

static int ignore_prop(const char *key, const char *value, void *payload)
{
	(void)key;
	(void)value;
	(void)payload;
	return 0;
}

static int use(sql_ctx *c, const sql_stmt *st)
{
	floe_sql *s = c->s;
	if (st->kind == SQL_S_USE_CATALOG) {
		sql_catalog *cat = find_catalog(s, st->name.parts[0]);
		if (!cat || st->name.n != 1)
			return sql_err(c, FLOE_EINVAL, st->name.off, "catalog '%s' does not exist",
				       st->name.parts[0]);
		s->cur_cat = cat_index(s, cat);
		char *db = floe_strdup(cat->default_db);
		if (!db)
			return floe_error_oom(c->err);
		floe_free(s->cur_db);
		s->cur_db = db;
		return ok(s);
	}
	if (st->name.n > 2)
		return sql_err(c, FLOE_EINVAL, st->name.off, "USE takes [catalog.]database");
	if (st->name.n == 2) {
		sql_catalog *cat = find_catalog(s, st->name.parts[0]);
		if (!cat)
			return sql_err(c, FLOE_EINVAL, st->name.off, "catalog '%s' does not exist",
				       st->name.parts[0]);
		s->cur_cat = cat_index(s, cat);
	}
	const char *db = st->name.parts[st->name.n - 1];
	/* the database must exist (Flink checks) */
	floe_error e2 = {0};
	int rc = !s->cats[s->cur_cat]->cat ? 0
		 : floe_catalog_namespace_properties(s->cats[s->cur_cat]->cat, db, ignore_prop,
						     NULL, &e2);
	if (rc == FLOE_ENOTFOUND)
		return sql_err(c, FLOE_ENOTFOUND, st->name.off, "database '%s' does not exist in "
								"catalog '%s'",
			       db, s->cats[s->cur_cat]->name);
	char *d = floe_strdup(db);
	if (!d)
		return floe_error_oom(c->err);
	floe_free(s->cur_db);
	s->cur_db = d;
	return ok(s);
}

static int database(sql_ctx *c, const sql_stmt *st)
{
	floe_sql *s = c->s;
	sql_catalog *cat = s->cats[s->cur_cat];
	if (st->name.n > 2)
		return sql_err(c, FLOE_EINVAL, st->name.off, "a database name is [catalog.]name");
	if (st->name.n == 2 && !(cat = find_catalog(s, st->name.parts[0])))
		return sql_err(c, FLOE_EINVAL, st->name.off, "catalog '%s' does not exist",
			       st->name.parts[0]);
	const char *db = st->name.parts[st->name.n - 1];
	int rc = sql_need_catalog(c, cat, st->name.off);
	if (rc)
		return rc;
	if (s->planning)
		return ok(s); /* plan only: databases are names */
	if (st->kind == SQL_S_CREATE_DATABASE) {
		floe_prop *props = floe_arena_calloc(c->a, st->n_opts + 2, sizeof(floe_prop));
		size_t n = 0;
		if (!props)
			return floe_error_oom(c->err);
		for (size_t i = 0; i < st->n_opts; i++)
			props[n++] = (floe_prop){st->opts[i].key, st->opts[i].value};
		if (st->comment)
			props[n++] = (floe_prop){"comment", st->comment};
		rc = floe_catalog_create_namespace(cat->cat, db, props, n, c->err);
		if (rc == FLOE_EEXISTS && st->if_not_exists)
			rc = 0;
		else if (rc == FLOE_EEXISTS)
			return sql_err(c, rc, st->name.off, "database '%s' already exists in catalog "
							    "'%s'",
				       db, cat->name);
	} else {
		if (st->cascade)
			return sql_err(c, FLOE_EUNSUPPORTED, st->off,
				       "DROP DATABASE ... CASCADE is not supported: drop its tables "
				       "first");
		rc = floe_catalog_drop_namespace(cat->cat, db, c->err);
		if (rc == FLOE_ENOTFOUND && st->if_exists)
			rc = 0;
	}
	return rc ? sql_wrap(c, rc, st->off) : ok(s);
}

static int drop_table(sql_ctx *c, const sql_stmt *st)
{
	sql_ref r;
	floe_sql *s = c->s;
	/* a 'connector'='iceberg' name: only the name goes (as in Flink's
	 * in-memory catalog); the Iceberg table stays */
	if (s->n_cats) {
		const char *cat = st->name.n == 3 ? st->name.parts[0] : s->cats[s->cur_cat]->name;
		const char *db = st->name.n >= 2 ? st->name.parts[st->name.n - 2] : s->cur_db;
		const char *t = st->name.parts[st->name.n - 1];
		for (size_t i = 0; i < s->n_aliases; i++) {
			sql_alias *al = &s->aliases[i];
			if (strcmp(al->catalog, cat) || strcmp(al->db, db) || strcmp(al->name, t))
				continue;
			floe_free(al->catalog);
			floe_free(al->db);
			floe_free(al->name);
			floe_free(al->to_catalog);
			floe_free(al->to_db);
			floe_free(al->to_name);
			memmove(al, al + 1, (s->n_aliases - i - 1) * sizeof(*al));
			s->n_aliases--;
			return ok(s);
		}
	}
	int rc = sql_resolve(c, &st->name, &r);
	if (rc)
		return rc;
	for (size_t i = s->n_sources; i-- > 0;) {
		sql_source *src = &s->sources[i];
		if (!strcmp(src->catalog, r.cat->name) && !strcmp(src->db, r.db) &&
		    !strcmp(src->name, r.table)) {
			floe_free(src->catalog);
			floe_free(src->db);
			floe_free(src->name);
			memmove(src, src + 1, (s->n_sources - i - 1) * sizeof(*src));
			s->n_sources--;
			return ok(s);
		}
	}
	if ((rc = sql_need_catalog(c, r.cat, st->name.off)))
		return rc;
	if (s->planning) { /* plan only: forget a table the script created */
		for (size_t i = 0; i < s->n_planned; i++) {
			sql_planned *pl = &s->planned[i];
			if (strcmp(pl->catalog, r.cat->name) || strcmp(pl->db, r.db) ||
			    strcmp(pl->name, r.table))
				continue;
			planned_free(pl);
			memmove(pl, pl + 1, (s->n_planned - i - 1) * sizeof(*pl));
			s->n_planned--;
			break;
		}
		return ok(s);
	}
	rc = floe_catalog_drop_table(r.cat->cat, r.db, r.table, false, c->err);
	if (rc == FLOE_ENOTFOUND && st->if_exists)
		rc = 0;
	else if (rc == FLOE_ENOTFOUND)
		return sql_err(c, rc, st->name.off, "table '%s.%s.%s' does not exist", r.cat->name, r.db,
			       r.table);
	return rc ? sql_wrap(c, rc, st->off) : ok(s);
}

static int run_stmt(sql_ctx *c, const sql_stmt *st)
{
	if (c->s->planning) /* plan only: what reads or changes existing tables is skipped */
		switch (st->kind) {
		case SQL_S_SHOW:
		case SQL_S_SHOW_CREATE_TABLE:
		case SQL_S_DESCRIBE:
		case SQL_S_ALTER_TABLE:
		case SQL_S_SELECT: return 0;
		default: break;
		}
	switch (st->kind) {
	case SQL_S_CREATE_CATALOG: return create_catalog(c, st);
	case SQL_S_USE_CATALOG:
	case SQL_S_USE: return use(c, st);
	case SQL_S_CREATE_DATABASE:
	case SQL_S_DROP_DATABASE: return database(c, st);
	case SQL_S_DROP_CATALOG:
		return sql_err(c, FLOE_EUNSUPPORTED, st->off, "DROP CATALOG is not supported yet");
	case SQL_S_SHOW: return show(c, st);
	case SQL_S_SHOW_CREATE_TABLE: return show_create_table(c, st);
	case SQL_S_DESCRIBE: return describe(c, st);
	case SQL_S_CREATE_TABLE: return create_table(c, st);
	case SQL_S_DROP_TABLE: return drop_table(c, st);
	case SQL_S_ALTER_TABLE: return alter_table(c, st);
	case SQL_S_SET: return set_option(c, st);
	case SQL_S_RESET:
		if (st->key)
			floe_strmap_remove(&c->s->set, st->key);
		else
			floe_strmap_reset(&c->s->set);
		return ok(c->s);
	case SQL_S_INSERT: return sql_run_insert(c, &st, 1);
	case SQL_S_STATEMENT_SET:
		return sql_run_insert(c, (const sql_stmt *const *)st->stmts, st->n_stmts);
	case SQL_S_SELECT: return sql_run_select(c, st->select);
	}
	return sql_err(c, FLOE_EUNSUPPORTED, st->off, "statement not supported");
}

/* ---- the public API ---------------------------------------------------------------- */

int floe_sql_new(floe_sql **out, const floe_sql_opts *opts, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_sql_opts", "FLOE_SQL_OPTS_INIT", err);
	floe_sql *s = floe_calloc(1, sizeof(*s));
	if (!s)
		return floe_error_oom(err);
	if (opts)
		s->opts = *opts;
	else
		s->opts = (floe_sql_opts)FLOE_SQL_OPTS_INIT;
	floe_strmap_init(&s->set);
	atomic_init(&s->running, NULL);
	atomic_init(&s->stop_req, 0);
	if (!(s->cur_db = floe_strdup("default"))) {
		floe_sql_free(s);
		return floe_error_oom(err);
	}
	/* default_catalog: the caller's catalog, or one for source tables only
	 * (Flink's in-memory catalog) */
	int rc = add_catalog(s, "default_catalog", s->opts.catalog, false, NULL, NULL, NULL,
			     s->opts.catalog ? NULL : "default_database", err);
	if (rc) {
		floe_sql_free(s);
		return rc;
	}
	if (!s->opts.catalog) {
		floe_free(s->cur_db);
		if (!(s->cur_db = floe_strdup("default_database"))) {
			floe_sql_free(s);
			return floe_error_oom(err);
		}
	}
	*out = s;
	return 0;
}

void floe_sql_free(floe_sql *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_cats; i++) {
		if (!s->cats[i])
			continue;
		if (s->cats[i]->owned)
			floe_catalog_free(s->cats[i]->cat);
		floe_free(s->cats[i]->name);
		floe_free(s->cats[i]->type);
		floe_free(s->cats[i]->uri);
		floe_free(s->cats[i]->warehouse);
		floe_free(s->cats[i]->default_db);
		floe_free(s->cats[i]);
	}
	floe_free(s->cats);
	for (size_t i = 0; i < s->n_sources; i++) {
		floe_free(s->sources[i].catalog);
		floe_free(s->sources[i].db);
		floe_free(s->sources[i].name);
	}
	floe_free(s->sources);
	for (size_t i = 0; i < s->n_aliases; i++) {
		sql_alias *al = &s->aliases[i];
		floe_free(al->catalog);
		floe_free(al->db);
		floe_free(al->name);
		floe_free(al->to_catalog);
		floe_free(al->to_db);
		floe_free(al->to_name);
	}
	floe_free(s->aliases);
	for (size_t i = 0; i < s->n_planned; i++)
		planned_free(&s->planned[i]);
	floe_free(s->planned);
	for (size_t i = 0; i < s->n_scripts; i++) {
		floe_sql__script_free(s->scripts[i]);
		floe_free(s->texts[i]);
	}
	floe_free(s->scripts);
	floe_free(s->texts);
	floe_strmap_reset(&s->set);
	floe_free(s->cur_db);
	floe_free(s);
}

int floe_sql_check(const char *text, size_t n, const char *origin, floe_error *err)
{
	sql_script *sc = NULL;
	int rc = floe_sql__parse(&sc, text, n, origin, err);
	floe_sql__script_free(sc);
	return rc;
}

int floe_sql_exec(floe_sql *s, const char *text, size_t n, const char *origin,
		  floe_error *err_out)
{
	floe_error local = {0}, *err = err_out ? err_out : &local;
	sql_script *sc = NULL;
	char *copy = floe_strndup(text, n);
	if (!copy)
		return floe_error_oom(err);
	int rc = floe_sql__parse(&sc, copy, n, origin, err);
	if (rc) {
		floe_free(copy);
		return rc;
	}
	sql_script **scripts = floe_realloc(s->scripts, (s->n_scripts + 1) * sizeof(*scripts));
	char **texts = scripts ? floe_realloc(s->texts, (s->n_scripts + 1) * sizeof(*texts)) : NULL;
	if (scripts)
		s->scripts = scripts;
	if (texts)
		s->texts = texts;
	if (!scripts || !texts) {
		floe_sql__script_free(sc);
		floe_free(copy);
		return floe_error_oom(err);
	}
	s->scripts[s->n_scripts] = sc;
	s->texts[s->n_scripts] = copy;
	s->n_scripts++;
	for (size_t i = 0; i < sc->n_stmts && !rc; i++) {
		floe_arena a;
		floe_arena_init(&a, 8192);
		sql_ctx c = {s, sc, sc->stmts[i], err, &a, false, -1, -1, false};
		rc = run_stmt(&c, sc->stmts[i]);
		floe_arena_reset(&a);
		if (atomic_load(&s->stop_req))
			break;
	}
	return rc;
}

int floe_sql_pipelines(const char *text, size_t n, const char *origin, floe_sql_pipeline_fn fn,
		       void *payload, floe_error *err_out)
{
	floe_error local = {0}, *err = err_out ? err_out : &local;
	floe_sql_opts o = FLOE_SQL_OPTS_INIT;
	o.quiet = true;
	floe_sql *s = NULL;
	if (!fn)
		return floe_error_set(err, FLOE_EINVAL, "floe_sql_pipelines: no function");
	int rc = floe_sql_new(&s, &o, err);
	if (rc)
		return rc;
	s->planning = true;
	s->plan_fn = fn;
	s->plan_payload = payload;
	rc = floe_sql_exec(s, text, n, origin, err);
	floe_sql_free(s);
	return rc;
}

void floe_sql_stop(floe_sql *s)
{
	atomic_store(&s->stop_req, 1);
	floe_pipeline *p = atomic_load(&s->running);
	if (p)
		floe_pipeline_stop(p);
}

void floe_sql_cancel(floe_sql *s)
{
	atomic_store(&s->stop_req, 2);
	floe_pipeline *p = atomic_load(&s->running);
	if (p)
		floe_pipeline_cancel(p);
}
