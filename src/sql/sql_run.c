/*
 * sql_run.c — INSERT INTO ... SELECT compiled onto floe's streaming
 * pipeline, and SELECT over tables and metadata tables through the scan.
 *
 * DESIGN: an INSERT (or a statement set of them) becomes the pipeline
 * configuration `floe run` reads — one source per source table, one table
 * entry per INSERT with the WHERE as its routing filter — so SQL jobs get
 * the pipeline's checkpoints, exactly-once restarts and maintenance
 * unchanged, and a statement set reads each source once. The pipeline id
 * is "sql-" and a hash of the statement's text: running the same script
 * again resumes where the last commit stopped. A projection of source
 * columns by their names and types is the pipeline's own decoding (records
 * decode into the table's schema by name); anything else — expressions,
 * renames, casts, reordering — is a computed projection (sql_vec.c's
 * sql_proj) the table's entry carries: records decode into the source's
 * columns and the projection, evaluated a batch at a time in the writer
 * tasks, makes the table's rows.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "iceberg/metadata.h"
#include "sql/sql_exec.h"
#include "sql/sql_vec.h"
#include "stream/stream_runtime.h"
#include "table/table_impl.h"
#include "util/hash.h"
#include "util/log.h"

/* ---- filters ------------------------------------------------------------------------ */

static int lit_text(sql_ctx *c, const sql_expr *e, bool scan, floe_buf *out)
{
	switch (e->kind) {
	case SQL_E_STR: {
		int rc = floe_buf_putc(out, '\'');
		for (const char *p = e->text; *p && !rc; p++)
			rc = *p == '\'' ? floe_buf_puts(out, "''") : floe_buf_putc(out, *p);
		return rc ? rc : floe_buf_putc(out, '\'');
	}
	case SQL_E_NUM:
	case SQL_E_BOOL: return floe_buf_puts(out, e->kind == SQL_E_BOOL ? (e->text[0] == 'T' ? "true" : "false") : e->text);
	case SQL_E_UNARY:
		if (!strcmp(e->op, "-") && e->args[0]->kind == SQL_E_NUM)
			return floe_buf_printf(out, "-%s", e->args[0]->text);
		break;
	case SQL_E_TYPED:
		if (scan) {
			const char *kw = !strcmp(e->text, "TIMESTAMP_LTZ") ? "TIMESTAMPTZ" : e->text;
			int rc = floe_buf_printf(out, "%s ", kw);
			return rc ? rc : lit_text(c, e->args[0], scan, out);
		}
		return lit_text(c, e->args[0], scan, out);
	default: break;
	}
	return sql_err(c, FLOE_EUNSUPPORTED, e->off,
		       "only literals can be compared with a column here (computed expressions "
		       "are not supported yet)");
}

static int col_text(sql_ctx *c, const sql_expr *e, floe_buf *out)
{
	if (e->kind != SQL_E_COL)
		return sql_err(c, FLOE_EUNSUPPORTED, e->off,
			       "expected a column (computed expressions in WHERE are not supported "
			       "yet)");
	/* a qualified name's last part is the column (t.col) */
	const char *name = e->name.parts[e->name.n - 1];
	int rc = floe_buf_putc(out, '"');
	for (const char *p = name; *p && !rc; p++)
		rc = *p == '"' ? floe_buf_puts(out, "\"\"") : floe_buf_putc(out, *p);
	return rc ? rc : floe_buf_putc(out, '"');
}

static bool is_lit(const sql_expr *e)
{
	return e->kind == SQL_E_STR || e->kind == SQL_E_NUM || e->kind == SQL_E_BOOL ||
	       e->kind == SQL_E_TYPED ||
	       (e->kind == SQL_E_UNARY && !strcmp(e->op, "-") && e->args[0]->kind == SQL_E_NUM);
}

static const char *flip(const char *op)
{
	return !strcmp(op, "<") ? ">" : !strcmp(op, ">") ? "<" : !strcmp(op, "<=") ? ">=" :
	       !strcmp(op, ">=") ? "<=" : op;
}

int sql_filter_text(sql_ctx *c, const sql_expr *e, bool scan, floe_buf *out)
{
	int rc;
#define P(x) \
	do { \
		if ((rc = (x))) \
			return rc; \
	} while (0)
	switch (e->kind) {
	case SQL_E_BINARY:
		if (!strcmp(e->op, "AND") || !strcmp(e->op, "OR")) {
			P(floe_buf_putc(out, '('));
			P(sql_filter_text(c, e->args[0], scan, out));
			P(floe_buf_printf(out, ") %s (", e->op));
			P(sql_filter_text(c, e->args[1], scan, out));
			return floe_buf_putc(out, ')');
		}
		if (strchr("=<>", e->op[0])) {
			const sql_expr *l = e->args[0], *r = e->args[1];
			const char *op = e->op;
			if (is_lit(l) && r->kind == SQL_E_COL) {
				const sql_expr *t = l;
				l = r;
				r = t;
				op = flip(op);
			}
			P(col_text(c, l, out));
			P(floe_buf_printf(out, " %s ", op));
			return lit_text(c, r, scan, out);
		}
		return sql_err(c, FLOE_EUNSUPPORTED, e->off,
			       "'%s' in a filter is not supported yet (comparisons of a column with "
			       "a literal, AND, OR, NOT, IN, IS NULL, BETWEEN)",
			       e->op);
	case SQL_E_UNARY:
		if (!strcmp(e->op, "NOT")) {
			P(floe_buf_puts(out, "not ("));
			P(sql_filter_text(c, e->args[0], scan, out));
			return floe_buf_putc(out, ')');
		}
		break;
	case SQL_E_IS:
		if (strcmp(e->text, "NULL"))
			break;
		P(col_text(c, e->args[0], out));
		return floe_buf_puts(out, e->negated ? " is not null" : " is null");
	case SQL_E_IN:
		if (e->sub)
			break; /* IN (SELECT ...): not a filter of the scan's grammar */
		P(col_text(c, e->args[0], out));
		P(floe_buf_puts(out, e->negated ? " not in (" : " in ("));
		for (size_t i = 1; i < e->n_args; i++) {
			if (i > 1)
				P(floe_buf_puts(out, ", "));
			P(lit_text(c, e->args[i], scan, out));
		}
		return floe_buf_putc(out, ')');
	case SQL_E_BETWEEN:
		P(floe_buf_puts(out, e->negated ? "not (" : "("));
		P(col_text(c, e->args[0], out));
		P(floe_buf_puts(out, " >= "));
		P(lit_text(c, e->args[1], scan, out));
		P(floe_buf_puts(out, " and "));
		P(col_text(c, e->args[0], out));
		P(floe_buf_puts(out, " <= "));
		P(lit_text(c, e->args[2], scan, out));
		return floe_buf_putc(out, ')');
	case SQL_E_LIKE:
		if (!scan)
			return sql_err(c, FLOE_EUNSUPPORTED, e->off,
				       "LIKE in a streaming INSERT's WHERE is not supported yet");
		P(col_text(c, e->args[0], out));
		P(floe_buf_puts(out, e->negated ? " not like " : " like "));
		return lit_text(c, e->args[1], scan, out);
	case SQL_E_COL:
		/* a boolean column */
		P(col_text(c, e, out));
		return floe_buf_puts(out, " = true");
	default: break;
	}
#undef P
	return sql_err(c, FLOE_EUNSUPPORTED, e->off,
		       "this expression is not supported in a filter yet (comparisons of a column "
		       "with a literal, AND, OR, NOT, IN, IS NULL, BETWEEN%s)",
		       scan ? ", LIKE" : "");
}

/* Every column a WHERE names must be one of cols (source columns). */
static int check_cols(sql_ctx *c, const sql_expr *e, const sql_column *cols, size_t n)
{
	if (!e)
		return 0;
	if (e->kind == SQL_E_COL) {
		const char *name = e->name.parts[e->name.n - 1];
		for (size_t i = 0; i < n; i++)
			if (!strcmp(cols[i].name, name))
				return 0;
		return sql_err(c, FLOE_EINVAL, e->off, "unknown column '%s'", name);
	}
	for (size_t i = 0; i < e->n_args; i++) {
		int rc = e->args[i] ? check_cols(c, e->args[i], cols, n) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- INSERT ------------------------------------------------------------------------- */

static int yq(floe_buf *b, const char *s)
{
	int rc = floe_buf_putc(b, '"');
	for (; *s && !rc; s++) {
		if (*s == '"' || *s == '\\')
			rc = floe_buf_putc(b, '\\');
		if (!rc)
			rc = floe_buf_putc(b, *s);
	}
	return rc ? rc : floe_buf_putc(b, '"');
}

static bool type_fits(const floe_type *from, const floe_type *to)
{
	if (floe_type_equal(from, to))
		return true;
	if (from->id == FLOE_T_INT && to->id == FLOE_T_LONG)
		return true;
	if (from->id == FLOE_T_FLOAT && to->id == FLOE_T_DOUBLE)
		return true;
	if (from->id == FLOE_T_DECIMAL && to->id == FLOE_T_DECIMAL)
		return from->scale == to->scale && from->precision <= to->precision;
	/* nested types: ids differ between the source and the table */
	if (from->id == to->id && (from->id == FLOE_T_LIST || from->id == FLOE_T_MAP ||
				   from->id == FLOE_T_STRUCT))
		return true;
	return false;
}

static const char *FS_OPTS[] = {"connector", "path", "format", "source.monitor-interval",
				"csv.field-delimiter", "csv.quote-character", "csv.allow-comments",
				"csv.null-literal", "csv.ignore-parse-errors", "json.ignore-parse-errors",
				"json.fail-on-missing-field", "json.timestamp-format.standard",
				"source.path.regex-pattern", NULL};

static int stream_source_yaml(sql_ctx *sc, const sql_stmt *d, const char *conn, floe_buf *y);

static int source_yaml(sql_ctx *c, const sql_source *src, const floe_schema *target,
		       floe_buf *y)
{
	const sql_stmt *d = src->def;
	sql_ctx sc = *c;
	sc.sc = src->script; /* errors point into the script that defined it */
	const char *conn = sql_opt_get(d->opts, d->n_opts, "connector");
	int rc = floe_buf_puts(y, "  - name: ");
	if (!rc)
		rc = yq(y, src->name);
	if (rc)
		return floe_error_oom(c->err);
	if (!strcmp(conn, "floe-iceberg")) {
		/* an Iceberg table of the catalog (sql_iceberg_source): bounded unless 'streaming' */
		const char *tbl = sql_opt_get(d->opts, d->n_opts, "source-table");
		rc = floe_buf_puts(y, "\n    type: iceberg\n    source-table: ");
		if (!rc)
			rc = yq(y, tbl ? tbl : "");
		if (!rc)
			rc = floe_buf_putc(y, '\n');
		static const char *const keys[] = {"streaming", "starting-strategy", "start-snapshot-id",
						   "start-snapshot-timestamp",
						   "streaming-skip-overwrite-snapshots"};
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && !rc; k++) {
			const char *v = sql_opt_get(d->opts, d->n_opts, keys[k]);
			if (v && !(rc = floe_buf_printf(y, "    %s: ", keys[k])) && !(rc = yq(y, v)))
				rc = floe_buf_putc(y, '\n');
		}
		const char *mon = sql_opt_get(d->opts, d->n_opts, "monitor-interval");
		if (!rc && mon) {
			int64_t ms;
			if (!floe_parse_duration_ms(mon, &ms))
				return sql_err(&sc, FLOE_EINVAL, d->off, "monitor-interval '%s' is not a duration",
					       mon);
			rc = floe_buf_printf(y, "    monitor-interval: %lldms\n", (long long)ms);
		}
		return rc ? floe_error_oom(c->err) : FLOE_OK;
	}
	if (!strcmp(conn, "filesystem")) {
		for (size_t i = 0; i < d->n_opts; i++) {
			bool known = false;
			for (size_t k = 0; FS_OPTS[k]; k++)
				known |= !strcmp(FS_OPTS[k], d->opts[i].key);
			if (!known)
				return sql_err(&sc, FLOE_EUNSUPPORTED, d->opts[i].off,
					       "filesystem option '%s' is not supported (floe reads "
					       "path, format, source.monitor-interval, csv.*)",
					       d->opts[i].key);
		}
		const char *path = sql_opt_get(d->opts, d->n_opts, "path");
		const char *fmt = sql_opt_get(d->opts, d->n_opts, "format");
		if (!path)
			return sql_err(&sc, FLOE_EINVAL, d->off, "a filesystem table needs 'path'");
		if (!fmt)
			return sql_err(&sc, FLOE_EINVAL, d->off,
				       "a filesystem table needs 'format' (json or csv)");
		if (strcmp(fmt, "json") && strcmp(fmt, "csv"))
			return sql_err(&sc, FLOE_EUNSUPPORTED, d->off,
				       "format '%s' is not supported yet (json, csv)", fmt);
		if (!strncmp(path, "file://", 7))
			path += 7;
		char *abs = NULL;
		if (path[0] != '/' && c->s->opts.base_dir)
			abs = floe_arena_sprintf(c->a, "%s/%s", c->s->opts.base_dir, path);
		rc = floe_buf_puts(y, "\n    type: files\n    path: ");
		if (!rc)
			rc = yq(y, abs ? abs : path);
		if (!rc)
			rc = floe_buf_printf(y, "\n    format: %s\n", fmt);
		const char *mon = sql_opt_get(d->opts, d->n_opts, "source.monitor-interval");
		if (!rc && mon) {
			int64_t ms;
			if (!floe_parse_duration_ms(mon, &ms))
				return sql_err(&sc, FLOE_EINVAL, d->off,
					       "source.monitor-interval '%s' is not a duration", mon);
			rc = floe_buf_printf(y, "    follow: true\n    monitor-interval: %lldms\n",
					     (long long)ms);
		}
		static const char *const csv[] = {"csv.field-delimiter", "csv.quote-character",
						  "csv.allow-comments", "csv.null-literal"};
		for (size_t k = 0; k < 4 && !rc; k++) {
			const char *v = sql_opt_get(d->opts, d->n_opts, csv[k]);
			if (v) {
				rc = floe_buf_printf(y, "    %s: ", csv[k]);
				if (!rc)
					rc = yq(y, v);
				if (!rc)
					rc = floe_buf_putc(y, '\n');
			}
		}
		if (!rc && !strcmp(fmt, "csv")) {
			/* Flink's CSV has no header: fields are the table's columns in order */
			const floe_type *root = target ? target->root : NULL;
			bool same = !root || root->n_fields == d->n_cols;
			for (size_t i = 0; root && same && i < d->n_cols; i++)
				same = !strcmp(root->fields[i].name, d->cols[i].name);
			if (!same)
				return sql_err(&sc, FLOE_EUNSUPPORTED, d->off,
					       "a CSV source must have the target table's columns in "
					       "its order (fields are matched by position)");
			rc = floe_buf_puts(y, "    csv.header: false\n");
		}
		return rc ? floe_error_oom(c->err) : 0;
	}
	if (!strcmp(conn, "kafka") || !strcmp(conn, "kinesis"))
		return stream_source_yaml(&sc, d, conn, y);
	/* datagen: Flink's option names are the generator's */
	rc = floe_buf_puts(y, "\n    type: generator\n    schema: \"");
	for (size_t i = 0; i < d->n_cols && !rc; i++) {
		int32_t id = 1;
		const floe_type *ft;
		if ((rc = sql_iceberg_type(&sc, d->cols[i].type, &id, &ft)))
			return rc;
		if (!floe_type_is_primitive(ft))
			return sql_err(&sc, FLOE_EUNSUPPORTED, d->cols[i].off,
				       "datagen: nested columns are not supported yet");
		rc = floe_buf_printf(y, "%s%s ", i ? ", " : "", d->cols[i].name);
		if (!rc)
			rc = floe_type_format(y, ft);
	}
	if (!rc)
		rc = floe_buf_puts(y, "\"\n");
	for (size_t i = 0; i < d->n_opts && !rc; i++) {
		const char *k = d->opts[i].key;
		if (!strcmp(k, "connector"))
			continue;
		if (strcmp(k, "rows-per-second") && strcmp(k, "number-of-rows") && strcmp(k, "seed") &&
		    strncmp(k, "fields.", 7))
			return sql_err(&sc, FLOE_EUNSUPPORTED, d->opts[i].off,
				       "datagen option '%s' is not supported (rows-per-second, "
				       "number-of-rows, fields.<column>.*)",
				       k);
		rc = floe_buf_printf(y, "    %s: ", k);
		if (!rc)
			rc = yq(y, d->opts[i].value);
		if (!rc)
			rc = floe_buf_putc(y, '\n');
	}
	return rc ? floe_error_oom(c->err) : 0;
}

/* Flink's Kafka / Kinesis connector options floe's sources take by the same
 * name ("*" at the end: a prefix). */
static const char *const KAFKA_OPTS[] = {
	"topic", "topic-pattern", "properties.*", "scan.startup.mode",
	"scan.startup.timestamp-millis", "scan.startup.specific-offsets", "scan.bounded.mode",
	"format", "value.format", "key.format", "avro-confluent.url", "commit.offsets.on.checkpoint",
	NULL};
static const char *const KINESIS_OPTS[] = {
	"stream", "aws.*", "scan.stream.initpos", "scan.stream.initpos-timestamp",
	"scan.shard.getrecords.maxrecordcount", "scan.shard.getrecords.intervalmillis",
	"scan.shard.discovery.intervalmillis", "format", NULL};
/* Flink's metadata keys -> floe's (kafka: the same names; kinesis: Flink's
 * 'timestamp', 'shard-id', 'sequence-number') */
static const char *const KAFKA_META[] = {"topic", "partition", "offset", "timestamp",
					 "timestamp-type", "key", "headers", NULL};
static const char *const KINESIS_META[] = {"stream", "shard-id", "sequence-number", "timestamp",
					   "key", NULL};

static bool opt_known(const char *const *list, const char *k)
{
	for (size_t i = 0; list[i]; i++) {
		size_t n = strlen(list[i]);
		if (list[i][n - 1] == '*' ? !strncmp(list[i], k, n - 1) : !strcmp(list[i], k))
			return true;
	}
	return false;
}

/* A kafka or kinesis source: Flink's option names are floe's source keys. */
static int stream_source_yaml(sql_ctx *sc, const sql_stmt *d, const char *conn, floe_buf *y)
{
	bool kafka = !strcmp(conn, "kafka");
	const char *const *known = kafka ? KAFKA_OPTS : KINESIS_OPTS;
	int rc = floe_buf_printf(y, "\n    type: %s\n", conn);
	const char *fmt = sql_opt_get(d->opts, d->n_opts, "format");
	if (!fmt)
		fmt = sql_opt_get(d->opts, d->n_opts, "value.format");
	if (fmt && strcmp(fmt, "json") && strcmp(fmt, "debezium-json") && strcmp(fmt, "csv") &&
	    strcmp(fmt, "raw") && strcmp(fmt, "avro-confluent"))
		return sql_err(sc, FLOE_EUNSUPPORTED, d->off,
			       "format '%s' is not supported (json, debezium-json, csv, raw%s)", fmt,
			       kafka ? ", avro-confluent" : "");
	if (kafka && !sql_opt_get(d->opts, d->n_opts, "properties.bootstrap.servers"))
		return sql_err(sc, FLOE_EINVAL, d->off,
			       "a kafka table needs 'properties.bootstrap.servers'");
	if (kafka && !sql_opt_get(d->opts, d->n_opts, "topic") &&
	    !sql_opt_get(d->opts, d->n_opts, "topic-pattern"))
		return sql_err(sc, FLOE_EINVAL, d->off, "a kafka table needs 'topic' or 'topic-pattern'");
	if (!kafka && !sql_opt_get(d->opts, d->n_opts, "stream"))
		return sql_err(sc, FLOE_EINVAL, d->off, "a kinesis table needs 'stream'");
	for (size_t i = 0; i < d->n_opts && !rc; i++) {
		const char *k = d->opts[i].key;
		if (!strcmp(k, "connector"))
			continue;
		/* accepted, nothing to do: floe reads and decodes every field by name */
		if (!strcmp(k, "json.ignore-parse-errors") || !strcmp(k, "json.fail-on-missing-field") ||
		    !strcmp(k, "value.fields-include") || !strcmp(k, "key.fields") ||
		    !strcmp(k, "json.timestamp-format.standard"))
			continue;
		if (!opt_known(known, k))
			return sql_err(sc, FLOE_EUNSUPPORTED, d->opts[i].off,
				       "%s option '%s' is not supported (floe's %s source takes %s)",
				       conn, k, conn,
				       kafka ? "topic, topic-pattern, properties.*, scan.startup.*, "
					       "scan.bounded.mode, format, key.format, avro-confluent.url"
					     : "stream, aws.*, scan.stream.initpos[-timestamp], "
					       "scan.shard.*, format");
		rc = floe_buf_printf(y, "    %s: ", k);
		if (!rc)
			rc = yq(y, d->opts[i].value);
		if (!rc)
			rc = floe_buf_putc(y, '\n');
	}
	/* METADATA [FROM 'key'] VIRTUAL columns */
	for (size_t i = 0; i < d->n_cols && !rc; i++) {
		const sql_column *col = &d->cols[i];
		if (!col->metadata)
			continue;
		const char *key = col->metadata[0] ? col->metadata : col->name;
		const char *const *meta = kafka ? KAFKA_META : KINESIS_META;
		bool ok = false;
		for (size_t k = 0; meta[k]; k++)
			ok |= !strcmp(meta[k], key);
		if (!ok)
			return sql_err(sc, FLOE_EUNSUPPORTED, col->off,
				       "%s metadata '%s' is not supported (%s)", conn, key,
				       kafka ? "topic, partition, offset, timestamp, timestamp-type, "
					       "key, headers"
					     : "stream, shard-id, sequence-number, timestamp, key");
		rc = floe_buf_printf(y, "    metadata.%s: ", key);
		if (!rc)
			rc = yq(y, col->name);
		if (!rc)
			rc = floe_buf_putc(y, '\n');
	}
	return rc ? floe_error_oom(sc->err) : 0;
}

/* Flink maintenance keys -> the table's maintenance.* keys (seconds become durations). */
static const struct {
	const char *flink, *floe;
	bool seconds;
} MAINT[] = {
	{"flink-maintenance.rewrite.schedule.commit-count", "schedule.commit-count", false},
	{"flink-maintenance.rewrite.schedule.data-file-count", "schedule.data-file-count", false},
	{"flink-maintenance.rewrite.schedule.data-file-size", "schedule.data-file-size", false},
	{"flink-maintenance.rewrite.schedule.interval-second", "schedule.interval", true},
	{"flink-maintenance.rate-limit-seconds", "rate-limit", true},
	{"flink-maintenance.lock.check-delay-seconds", "lock-check-delay", true},
	{"flink-maintenance.lock.jdbc.uri", "lock-uri", false},
	{"flink-maintenance.rewrite.target-file-size-bytes", "compact.target-file-size", false},
	{"flink-maintenance.rewrite.min-input-files", "compact.min-input-files", false},
	{"flink-maintenance.rewrite.max-bytes", "compact.max-rewrite-bytes", false},
	{"flink-maintenance.rewrite.partial-progress.max-commits",
	 "compact.partial-progress.max-commits", false},
	{"flink-maintenance.expire-snapshots.max-snapshot-age-seconds", "expire.max-snapshot-age",
	 true},
	{"flink-maintenance.expire-snapshots.retain-last", "expire.retain-last", false},
};

typedef struct target {
	const sql_stmt *st;
	sql_ref ref;
	const sql_source *src;
	floe_table *t;
	const floe_schema *schema;  /* the table's (loaded or, planning, from its CREATE TABLE) */
	const sql_planned *planned; /* planning: the script's CREATE TABLE */
	sql_proj *proj;             /* a computed projection (NULL: source columns by name) */
	bool where_in_proj;         /* the WHERE is the projection's (not a routing filter) */
} target;

/*
 * INSERT ... VALUES: the rows, evaluated by the executor, become a JSON-lines
 * file the job reads as its filesystem source (a source of the target's
 * columns, or the listed ones). The file is named by a hash of the statement
 * and the table, so a re-run of the same script resumes like any INSERT job
 * (the same rows, the same offsets: nothing twice).
 */
static int values_source(sql_ctx *c, target *tg)
{
	const sql_stmt *st = tg->st;
	floe_table *t = NULL;
	int rc;
	if (c->s->planning)
		return sql_err(c, FLOE_EUNSUPPORTED, st->values_off, "floe plan does not plan INSERT ... VALUES");
	if ((rc = sql_need_catalog(c, tg->ref.cat, st->name.off)))
		return rc;
	rc = floe_table_load(&t, tg->ref.cat->cat, tg->ref.db, tg->ref.table, c->err);
	if (rc == FLOE_ENOTFOUND)
		return sql_err(c, rc, st->name.off, "table '%s' does not exist",
			       floe_sql__name_str(c->a, &st->name));
	if (rc)
		return rc;
	const floe_schema *ts = floe_metadata_current_schema(floe_table_metadata(t));
	size_t n = st->n_insert_cols ? st->n_insert_cols : ts->root->n_fields;
	const floe_field **fs = floe_arena_calloc(c->a, n + 1, sizeof(*fs));
	const char **names = floe_arena_calloc(c->a, n + 1, sizeof(char *));
	floe_buf rows, with;
	floe_buf_init(&rows, 0);
	floe_buf_init(&with, 0);
	rc = fs && names ? FLOE_OK : floe_error_oom(c->err);
	for (size_t i = 0; i < n && !rc; i++) {
		const floe_field *f = st->n_insert_cols ? floe_schema_field(ts, st->insert_cols[i])
							: &ts->root->fields[i];
		if (!f) {
			rc = sql_err(c, FLOE_EINVAL, st->name.off, "table %s has no column '%s'",
				     floe_sql__name_str(c->a, &st->name), st->insert_cols[i]);
			break;
		}
		fs[i] = f;
		names[i] = f->name;
	}
	if (!rc)
		rc = sql_vec_values(c, st->values, st->n_values, names, n, &rows);
	char path[4096] = "";
	if (!rc) {
		const char *tmp = getenv("TMPDIR");
		uint64_t h = floe_hash64(c->sc->text + st->off, st->end - st->off);
		const char *tn = floe_sql__name_str(c->a, &st->name);
		h ^= floe_hash64(tn, strlen(tn)) * 0x9e3779b97f4a7c15ULL;
		snprintf(path, sizeof(path), "%s/floe-values-%016llx", tmp && *tmp ? tmp : "/tmp",
			 (unsigned long long)h);
		if (mkdir(path, 0700) && errno != EEXIST)
			rc = floe_error_set(c->err, FLOE_EIO, "%s: %s", path, strerror(errno));
	}
	if (!rc) {
		char file[4200];
		snprintf(file, sizeof(file), "%s/rows.jsonl", path);
		FILE *fp = fopen(file, "w");
		if (!fp || (rows.len && fwrite(rows.data, 1, rows.len, fp) != rows.len) || fclose(fp))
			rc = floe_error_set(c->err, FLOE_EIO, "%s: cannot write the VALUES rows: %s", file,
					    strerror(errno));
	}
	if (!rc && floe_buf_printf(&with, "'connector' = 'filesystem', 'path' = '%s', 'format' = 'json'", path))
		rc = floe_error_oom(c->err);
	if (!rc) {
		sql_ref r = tg->ref;
		r.table = "values";
		rc = sql_make_source(c, &r, fs, n, floe_buf_cstr(&with), &tg->src);
	}
	floe_buf_reset(&rows);
	floe_buf_reset(&with);
	floe_table_free(t);
	return rc;
}

static int check_insert(sql_ctx *c, target *tg)
{
	const sql_stmt *st = tg->st;
	const sql_select *q = st->select;
	int rc;
	if (st->n_partition)
		return sql_err(c, FLOE_EUNSUPPORTED, st->partition_off,
			       "INSERT ... PARTITION (...) is not supported yet");

	for (size_t i = 0; i < st->n_opts; i++) {
		const sql_opt *o = &st->opts[i];
		if (!strcmp(o->key, "upsert-enabled") || !strcmp(o->key, "equality-field-columns"))
			continue;
		if (!strcmp(o->key, "write-parallelism") || !strcmp(o->key, "distribution-mode") ||
		    !strcmp(o->key, "branch"))
			continue;
		return sql_err(c, FLOE_EUNSUPPORTED, o->off,
			       "write option '%s' is not supported by floe sql yet "
			       "(upsert-enabled, equality-field-columns, write-parallelism, "
			       "distribution-mode, branch)",
			       o->key);
	}
	if (st->n_values) {
		if ((rc = sql_resolve(c, &st->name, &tg->ref)) || (rc = values_source(c, tg)))
			return rc;
		goto have_source;
	}
	if (q->from_sub || q->union_next)
		return sql_err(c, FLOE_EUNSUPPORTED, q->off, "INSERT ... SELECT from a subquery or a "
							     "UNION is not supported yet");
	if (!q->from.n)
		return sql_err(c, FLOE_EUNSUPPORTED, q->off, "INSERT ... SELECT without FROM is not "
							     "supported yet");
	if (q->has_join)
		return sql_err(c, FLOE_EUNSUPPORTED, q->join_off, "joins are not supported yet");
	if (q->n_group_by || q->group_all || q->having || q->n_order_by || q->distinct || q->limit >= 0)
		return sql_err(c, FLOE_EUNSUPPORTED, q->off,
			       "a streaming INSERT takes SELECT columns FROM source [WHERE ...] "
			       "(aggregates, ORDER BY and LIMIT are not supported yet)");
	if ((rc = sql_resolve(c, &st->name, &tg->ref)))
		return rc;
	sql_ref from;
	if ((rc = sql_resolve(c, &q->from, &from)))
		return rc;
	if (!(tg->src = sql_find_source(c->s, &from))) {
		if (from.meta)
			return sql_err(c, FLOE_EUNSUPPORTED, q->from.off,
				       "reading a metadata table in an INSERT is not supported");
		floe_table *tt = NULL;
		floe_error e2 = {0};
		if (from.cat->cat && !floe_table_load(&tt, from.cat->cat, from.db, from.table, &e2)) {
			floe_table_free(tt);
			/* an Iceberg table of the target's catalog: the pipeline's iceberg source */
			if (from.cat != tg->ref.cat)
				return sql_err(c, FLOE_EUNSUPPORTED, q->from.off,
					       "an INSERT reads an Iceberg table of the target's catalog "
					       "('%s'); '%s' is in '%s'",
					       tg->ref.cat ? tg->ref.cat->name : "?",
					       floe_sql__name_str(c->a, &q->from), from.cat->name);
			for (size_t i = 0; i < q->n_hints; i++) {
				static const char *const ok[] = {"streaming", "monitor-interval", "starting-strategy",
								 "start-snapshot-id", "start-snapshot-timestamp",
								 "streaming-skip-overwrite-snapshots", NULL};
				bool known = false;
				for (size_t k = 0; ok[k]; k++)
					known |= !strcmp(ok[k], q->hints[i].key);
				if (!known)
					return sql_err(c, FLOE_EUNSUPPORTED, q->hints[i].off,
						       "read option '%s' on an INSERT's Iceberg source is not "
						       "supported (streaming, monitor-interval, starting-strategy, "
						       "start-snapshot-id, start-snapshot-timestamp, "
						       "streaming-skip-overwrite-snapshots)",
						       q->hints[i].key);
			}
			if ((rc = sql_iceberg_source(c, &from, q->hints, q->n_hints, q->from.off, &tg->src)))
				return rc;
			goto have_source;
		}
		return sql_err(c, FLOE_EINVAL, q->from.off, "table '%s' does not exist",
			       floe_sql__name_str(c->a, &q->from));
	}
have_source:
	if (sql_find_source(c->s, &tg->ref))
		return sql_err(c, FLOE_EUNSUPPORTED, st->name.off,
			       "'%s' is a source table: floe writes Iceberg tables",
			       floe_sql__name_str(c->a, &st->name));
	if ((rc = sql_need_catalog(c, tg->ref.cat, st->name.off)))
		return rc;
	if (c->s->planning) {
		/* plan only: the table is the script's CREATE TABLE; no catalog is read */
		floe_schema *sch = NULL;
		if (!(tg->planned = sql_find_planned(c->s, &tg->ref)))
			return sql_err(c, FLOE_EUNSUPPORTED, st->name.off,
				       "floe plan takes table '%s' from the script's CREATE TABLE and "
				       "opens no catalog: declare it with CREATE TABLE IF NOT EXISTS "
				       "(columns, PARTITIONED BY, PRIMARY KEY, WITH properties)",
				       floe_sql__name_str(c->a, &st->name));
		if ((rc = sql_build_schema(c, tg->planned->def, &sch)))
			return rc;
		tg->schema = sch;
	} else {
		rc = floe_table_load(&tg->t, tg->ref.cat->cat, tg->ref.db, tg->ref.table, c->err);
		if (rc == FLOE_ENOTFOUND)
			return sql_err(c, rc, st->name.off, "table '%s' does not exist",
				       floe_sql__name_str(c->a, &st->name));
		if (rc)
			return floe_error_prefix(c->err, rc, "INSERT INTO %s: ",
						 floe_sql__name_str(c->a, &st->name));
		tg->schema = floe_metadata_current_schema(floe_table_metadata(tg->t));
	}
	/* the columns: the SELECT's, by position, onto the table's (or the listed ones) */
	const floe_schema *ts = tg->schema;
	const sql_stmt *d = tg->src->def;
	size_t cap = d->n_cols + q->n_items + 1;
	const sql_expr **items = floe_arena_calloc(c->a, cap, sizeof(void *));
	const sql_column **scol = floe_arena_calloc(c->a, cap, sizeof(void *));
	int *star_col = floe_arena_calloc(c->a, cap, sizeof(int));
	uint32_t *offs = floe_arena_calloc(c->a, cap, sizeof(uint32_t));
	const char **tcols = floe_arena_calloc(c->a, cap, sizeof(char *));
	size_t n = 0;
	if (!items || !scol || !offs || !star_col || !tcols)
		return floe_error_oom(c->err);
	for (size_t i = 0; i < q->n_items; i++) {
		const sql_expr *e = q->items[i];
		if (e->kind == SQL_E_STAR) {
			if (n + d->n_cols > d->n_cols + q->n_items)
				return sql_err(c, FLOE_EINVAL, e->off, "'*' may appear once");
			for (size_t k = 0; k < d->n_cols; k++) {
				scol[n] = &d->cols[k];
				star_col[n] = (int)k;
				offs[n++] = e->off;
			}
			continue;
		}
		items[n] = e;
		star_col[n] = -1;
		offs[n] = e->off;
		if (e->kind == SQL_E_COL) {
			const char *name = e->name.parts[e->name.n - 1];
			for (size_t k = 0; k < d->n_cols; k++)
				if (!strcmp(d->cols[k].name, name))
					scol[n] = &d->cols[k];
			if (!scol[n])
				return sql_err(c, FLOE_EINVAL, e->off,
					       "unknown column '%s' (not a column of '%s')", name,
					       tg->src->name);
		}
		n++;
	}
	size_t n_target = st->n_insert_cols ? st->n_insert_cols : ts->root->n_fields;
	if (n != n_target)
		return sql_err(c, FLOE_EINVAL, q->off,
			       "the SELECT has %zu columns and the table %s has %zu", n,
			       floe_sql__name_str(c->a, &st->name), n_target);
	/* source columns by their names and types: the pipeline decodes them
	 * into the table's columns; anything else is a computed projection */
	bool plain = true;
	for (size_t i = 0; i < n; i++) {
		const char *tname = st->n_insert_cols ? st->insert_cols[i] : ts->root->fields[i].name;
		const floe_field *tf = floe_schema_field(ts, tname);
		if (!tf)
			return sql_err(c, FLOE_EINVAL, st->name.off, "table %s has no column '%s'",
				       floe_sql__name_str(c->a, &st->name), tname);
		tcols[i] = tf->name;
		if (!plain || !scol[i] || scol[i]->expr || strcmp(scol[i]->name, tf->name)) {
			plain = false;
			continue;
		}
		int32_t id = 1;
		const floe_type *ft;
		if ((rc = sql_iceberg_type(c, scol[i]->type, &id, &ft)))
			return rc;
		plain = type_fits(ft, tf->type);
	}
	/* a WHERE floe's filter cannot say (functions, arithmetic, column against
	 * column) is evaluated with the projection */
	if (q->where) {
		floe_buf f;
		floe_error fe = {0};
		sql_ctx fc = *c;
		fc.err = &fe;
		floe_buf_init(&f, 1 << 16);
		int frc = sql_filter_text(&fc, q->where, false, &f);
		floe_buf_reset(&f);
		if (frc == FLOE_EUNSUPPORTED)
			tg->where_in_proj = true;
		plain &= !tg->where_in_proj;
	}
	if (!plain && (rc = sql_proj_new(c, tg->src, items, star_col, tcols, n, q,
					 tg->where_in_proj, ts, &tg->proj)))
		return rc;
	if ((rc = check_cols(c, q->where, d->cols, d->n_cols)))
		return rc;
	return 0;
}

/* Plan only: what the run path leaves to the existing table — its partition
 * spec, its key (PRIMARY KEY unless the INSERT's hint names one) and its
 * WITH properties (upsert, distribution, target file size, retention) —
 * goes into the table entry. */
static int planned_yaml(sql_ctx *c, const target *tg, floe_buf *y)
{
	const sql_stmt *def = tg->planned->def, *ins = tg->st;
	floe_buf pb;
	floe_buf_init(&pb, 1 << 16);
	int rc = sql_partition_text(c, def, &pb);
	if (!rc && pb.len &&
	    (floe_buf_puts(y, "    partition-by: ") || yq(y, floe_buf_cstr(&pb)) ||
	     floe_buf_putc(y, '\n')))
		rc = floe_error_oom(c->err);
	floe_buf_reset(&pb);
	if (rc)
		return rc;
	const floe_schema *ts = tg->schema;
	if (ts->n_identifier_field_ids &&
	    !sql_opt_get(ins->opts, ins->n_opts, "equality-field-columns")) {
		if (floe_buf_puts(y, "    equality-field-columns: \""))
			return floe_error_oom(c->err);
		for (size_t k = 0; k < ts->n_identifier_field_ids; k++) {
			const floe_schema_entry *e = floe_schema_find(ts, ts->identifier_field_ids[k]);
			if (e && floe_buf_printf(y, "%s%s", k ? "," : "", e->full_name))
				return floe_error_oom(c->err);
		}
		if (floe_buf_puts(y, "\"\n"))
			return floe_error_oom(c->err);
	}
	bool any = false;
	for (size_t k = 0; k < def->n_opts; k++) {
		const sql_opt *o = &def->opts[k];
		if (!strcmp(o->key, "connector") || !strncmp(o->key, "catalog-", 8) ||
		    !strcmp(o->key, "format-version"))
			continue;
		if ((!any && floe_buf_puts(y, "    properties:\n")) || floe_buf_puts(y, "      ") ||
		    yq(y, o->key) || floe_buf_puts(y, ": ") || yq(y, o->value) ||
		    floe_buf_putc(y, '\n'))
			return floe_error_oom(c->err);
		any = true;
	}
	return 0;
}

/* The job's pipeline: its YAML, and each computed projection on its table's entry. */
static int open_job(sql_ctx *c, const target *tg, size_t n, const floe_buf *y,
		    const floe_pipeline_opts *po, floe_pipeline **out)
{
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= tg[i].proj != NULL;
	if (!any)
		return floe_pipeline_open(out, tg[0].ref.cat->cat, floe_buf_cstr(y), y->len, po,
					  c->err);
	stream_config *cfg = NULL;
	int rc = stream_config_parse_yaml(&cfg, floe_buf_cstr(y), y->len, po->base_dir, c->err);
	if (rc)
		return floe_error_prefix(c->err, rc, "pipeline config: ");
	/* the YAML has one table entry per INSERT, in order */
	if (cfg->n_tables != n) {
		stream_config_free(cfg);
		return floe_error_set(c->err, FLOE_EINVAL, "pipeline config: %zu tables for %zu "
							   "INSERTs",
				      cfg->n_tables, n);
	}
	for (size_t i = 0; i < n; i++)
		if (tg[i].proj)
			cfg->tables[i].project = sql_proj_hook(tg[i].proj);
	return stream_pipeline_open(out, cfg, tg[0].ref.cat->cat, NULL, po, c->err);
}

int sql_run_insert(sql_ctx *c, const sql_stmt *const *inserts, size_t n)
{
	floe_sql *s = c->s;
	target *tg = floe_arena_calloc(c->a, n, sizeof(*tg));
	floe_buf y;
	floe_pipeline *p = NULL;
	int rc = 0;
	if (!tg)
		return floe_error_oom(c->err);
	floe_buf_init(&y, 1 << 20);
	for (size_t i = 0; i < n && !rc; i++) {
		tg[i].st = inserts[i];
		rc = check_insert(c, &tg[i]);
		if (!rc && tg[i].ref.cat != tg[0].ref.cat)
			rc = sql_err(c, FLOE_EUNSUPPORTED, inserts[i]->name.off,
				     "a statement set writes tables of one catalog");
	}
	if (rc)
		goto done;
	/* the job's id: the statement's text, so a restart of the script resumes */
	const sql_stmt *st = c->st;
	uint64_t h = floe_hash64(c->sc->text + st->off, st->end - st->off);
	const char *name = floe_strmap_get(&s->set, "pipeline.name");
	const char *v;
	rc = floe_buf_printf(&y, "pipeline.id: \"sql-%016llx\"\npipeline.name: ", (unsigned long long)h);
	if (!rc)
		rc = yq(&y, name ? name : "floe-sql");
	if (!rc)
		rc = floe_buf_putc(&y, '\n');
	if (!rc && (v = floe_strmap_get(&s->set, "execution.checkpointing.interval")))
		rc = floe_buf_printf(&y, "execution.checkpointing.interval: \"%s\"\n", v);
	if (!rc && (v = floe_strmap_get(&s->set, "execution.checkpointing.min-pause")))
		rc = floe_buf_printf(&y, "execution.checkpointing.min-pause: \"%s\"\n", v);
	/* a record that does not fit (decode, projection): the dead letters or the end */
	if (!rc && (v = floe_strmap_get(&s->set, "errors") ? floe_strmap_get(&s->set, "errors")
							    : s->opts.errors))
		rc = floe_buf_printf(&y, "errors: %s\n", v);
	if (!rc && (v = floe_strmap_get(&s->set, "dead-letter.path"))) {
		rc = floe_buf_puts(&y, "dead-letter.path: ");
		if (!rc)
			rc = yq(&y, v);
		if (!rc)
			rc = floe_buf_putc(&y, '\n');
	}
	v = floe_strmap_get(&s->set, "parallelism.default");
	for (size_t i = 0; i < n && !v; i++)
		v = sql_opt_get(tg[i].st->opts, tg[i].st->n_opts, "write-parallelism");
	if (!rc && v)
		rc = floe_buf_printf(&y, "parallelism.default: %s\n", v);
	if (!rc)
		rc = floe_buf_puts(&y, "sources:\n");
	if (rc) {
		rc = floe_error_oom(c->err);
		goto done;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		bool seen = false;
		for (size_t k = 0; k < i; k++)
			seen |= tg[k].src == tg[i].src;
		if (!seen) /* CSV fields go to the table's columns by position, or the projection's */
			rc = source_yaml(c, tg[i].src, tg[i].proj ? NULL : tg[i].schema, &y);
	}
	if (!rc && floe_buf_puts(&y, "tables:\n"))
		rc = floe_error_oom(c->err);
	const char *comp = floe_strmap_get(&s->set, "compaction-enabled");
	for (size_t i = 0; i < n && !rc; i++) {
		const sql_stmt *ins = tg[i].st;
		char *tname = floe_arena_sprintf(c->a, "%s.%s", tg[i].ref.db, tg[i].ref.table);
		if (!tname || floe_buf_puts(&y, "  - name: ") || yq(&y, tname) ||
		    floe_buf_puts(&y, "\n    source: ") || yq(&y, tg[i].src->name) ||
		    floe_buf_putc(&y, '\n')) {
			rc = floe_error_oom(c->err);
			break;
		}
		/* the upsert hint and its key go to the table entry (the table's
		 * write.upsert.enabled and identifier fields apply without it) */
		static const char *const WOPTS[] = {"upsert-enabled", "equality-field-columns"};
		for (size_t k = 0; k < 2 && !rc; k++) {
			const char *wv = sql_opt_get(ins->opts, ins->n_opts, WOPTS[k]);
			if (wv && (floe_buf_printf(&y, "    %s: ", WOPTS[k]) || yq(&y, wv) ||
				   floe_buf_putc(&y, '\n')))
				rc = floe_error_oom(c->err);
		}
		if (rc)
			break;
		const char *dm = sql_opt_get(ins->opts, ins->n_opts, "distribution-mode");
		if (dm && (floe_buf_puts(&y, "    distribution-mode: ") || yq(&y, dm) ||
			   floe_buf_putc(&y, '\n'))) {
			rc = floe_error_oom(c->err);
			break;
		}
		/* INSERT OVERWRITE: Flink's dynamic overwrite (the partitions the job
		 * writes are replaced); 'branch': the Flink sink's write option */
		const char *br = sql_opt_get(ins->opts, ins->n_opts, "branch");
		if ((ins->overwrite && floe_buf_puts(&y, "    write.mode: overwrite\n")) ||
		    (br && (floe_buf_puts(&y, "    branch: ") || yq(&y, br) ||
			    floe_buf_putc(&y, '\n')))) {
			rc = floe_error_oom(c->err);
			break;
		}
		if (ins->select->where && !tg[i].where_in_proj) {
			floe_buf f;
			floe_buf_init(&f, 1 << 16);
			sql_ctx fc = *c;
			rc = sql_filter_text(&fc, ins->select->where, false, &f);
			if (!rc && (floe_buf_puts(&y, "    filter: ") || yq(&y, floe_buf_cstr(&f)) ||
				    floe_buf_putc(&y, '\n')))
				rc = floe_error_oom(c->err);
			floe_buf_reset(&f);
			if (rc == FLOE_ENOMEM && !strstr(c->err->msg, "line "))
				rc = floe_error_oom(c->err);
			if (rc)
				break;
		}
		if (tg[i].planned && (rc = planned_yaml(c, &tg[i], &y)))
			break;
		if (comp && !strcasecmp(comp, "true")) {
			if (floe_buf_puts(&y, "    maintenance.mode: auto\n")) {
				rc = floe_error_oom(c->err);
				break;
			}
			for (size_t k = 0; k < sizeof(MAINT) / sizeof(MAINT[0]) && !rc; k++) {
				const char *mv = floe_strmap_get(&s->set, MAINT[k].flink);
				if (mv && floe_buf_printf(&y, "    maintenance.%s: \"%s%s\"\n", MAINT[k].floe,
							  mv, MAINT[k].seconds ? "s" : ""))
					rc = floe_error_oom(c->err);
			}
		}
	}
	if (rc)
		goto done;
	unsigned line = 1;
	for (uint32_t k = 0; k < st->off; k++)
		line += c->sc->text[k] == '\n';
	floe_log(FLOE_LOG_DEBUG, "floe sql: pipeline for line %u:\n%s", line, floe_buf_cstr(&y));
	if (s->planning) {
		char job[32];
		snprintf(job, sizeof(job), "sql-%016llx", (unsigned long long)h);
		rc = s->plan_fn(job, line, floe_buf_cstr(&y), y.len, s->plan_payload);
		goto done;
	}
	floe_pipeline_opts po = FLOE_PIPELINE_OPTS_INIT;
	po.base_dir = s->opts.base_dir;
	rc = open_job(c, tg, n, &y, &po, &p);
	if (rc) {
		char inner[FLOE_ERROR_MSG_MAX];
		snprintf(inner, sizeof(inner), "%s", c->err->msg);
		rc = sql_err(c, rc, st->off, "the job's pipeline: %s", inner);
		goto done;
	}
	atomic_store(&s->running, p);
	if (atomic_load(&s->stop_req) == 1)
		floe_pipeline_stop(p);
	else if (atomic_load(&s->stop_req) == 2)
		floe_pipeline_cancel(p);
	rc = floe_pipeline_run(p, c->err);
	atomic_store(&s->running, NULL);
	floe_pipeline_stats stt;
	floe_pipeline_get_stats(p, &stt);
	if (!rc && !s->opts.quiet)
		rc = sql_outf(s,
			      "[INFO] job sql-%016llx: %lld records read, %lld committed in %lld "
			      "checkpoints, %lld dead-lettered\n",
			      (unsigned long long)h, (long long)stt.records_in,
			      (long long)stt.records_committed, (long long)stt.checkpoints,
			      (long long)stt.records_dead);
	else if (rc && rc != FLOE_ECANCELED)
		rc = floe_error_prefix(c->err, rc, "job sql-%016llx: ", (unsigned long long)h);
done:
	floe_pipeline_free(p);
	for (size_t i = 0; i < n; i++) {
		floe_table_free(tg[i].t);
		sql_proj_free(tg[i].proj);
	}
	floe_buf_reset(&y);
	return rc;
}

/* ---- SELECT ------------------------------------------------------------------------- */

typedef struct capture {
	floe_buf b;
} capture;

static int capture_fn(const char *data, size_t n, void *payload)
{
	capture *cp = payload;
	return floe_buf_append(&cp->b, data, n);
}

/* Split one CSV record at *pos (RFC 4180): cells into the arena; an
 * unquoted empty field is NULL. */
static int csv_record(floe_arena *a, const char *s, size_t n, size_t *pos, const char ***cells,
		      size_t *n_cells)
{
	size_t cap = 16, k = 0, i = *pos;
	const char **out = floe_arena_calloc(a, cap, sizeof(char *));
	if (!out)
		return FLOE_ENOMEM;
	for (;;) {
		floe_buf f;
		bool quoted = false;
		floe_buf_init(&f, 0);
		if (i < n && s[i] == '"') {
			quoted = true;
			i++;
			while (i < n) {
				if (s[i] == '"' && i + 1 < n && s[i + 1] == '"') {
					if (floe_buf_putc(&f, '"'))
						return FLOE_ENOMEM;
					i += 2;
				} else if (s[i] == '"') {
					i++;
					break;
				} else {
					if (floe_buf_putc(&f, s[i]))
						return FLOE_ENOMEM;
					i++;
				}
			}
		}
		while (i < n && s[i] != ',' && s[i] != '\n') {
			if (floe_buf_putc(&f, s[i]))
				return FLOE_ENOMEM;
			i++;
		}
		if (k == cap) {
			const char **o2 = floe_arena_calloc(a, cap * 2, sizeof(char *));
			if (!o2)
				return FLOE_ENOMEM;
			memcpy(o2, out, cap * sizeof(char *));
			out = o2;
			cap *= 2;
		}
		out[k] = (f.len || quoted)
				 ? floe_arena_strndup(a, f.data ? (const char *)f.data : "", f.len)
				 : NULL;
		floe_buf_reset(&f);
		k++;
		if (i < n && s[i] == ',') {
			i++;
			continue;
		}
		if (i < n)
			i++; /* newline */
		break;
	}
	*pos = i;
	*cells = out;
	*n_cells = k;
	return 0;
}

int sql_run_select(sql_ctx *c, const sql_select *q)
{
	sql_ref r;
	floe_table *t = NULL;
	floe_scan *scan = NULL;
	capture cp;
	int rc;
	/* computed items, aggregates, joins, ORDER BY, and any WHERE: the executor
	 * (which pushes what it can of the WHERE into the scan) */
	if (sql_vec_needed(q) || q->where || c->s->opts.format == FLOE_SQL_JSON)
		return sql_vec_select(c, q); /* (JSON needs the executor's column types) */
	if ((rc = sql_resolve(c, &q->from, &r)))
		return rc;
	if (sql_find_source(c->s, &r))
		return sql_err(c, FLOE_EUNSUPPORTED, q->from.off,
			       "SELECT from a source table is not supported yet");
	/* columns: * or plain names */
	bool star = false;
	const char **cols = floe_arena_calloc(c->a, q->n_items + 1, sizeof(char *));
	const char **heads = floe_arena_calloc(c->a, q->n_items + 1, sizeof(char *));
	if (!cols || !heads)
		return floe_error_oom(c->err);
	for (size_t i = 0; i < q->n_items; i++) {
		const sql_expr *e = q->items[i];
		if (e->kind == SQL_E_STAR) {
			if (q->n_items > 1)
				return sql_err(c, FLOE_EUNSUPPORTED, e->off,
					       "'*' with other columns is not supported yet");
			star = true;
		} else if (e->kind == SQL_E_COL) {
			cols[i] = e->name.parts[e->name.n - 1];
			heads[i] = q->aliases[i] ? q->aliases[i] : cols[i];
		} else {
			return sql_err(c, FLOE_EUNSUPPORTED, e->off,
				       "computed expressions and aggregates in SELECT are not "
				       "supported yet");
		}
	}
	if ((rc = sql_need_catalog(c, r.cat, q->from.off)))
		return rc;
	rc = floe_table_load(&t, r.cat->cat, r.db, r.table, c->err);
	if (rc == FLOE_ENOTFOUND)
		return sql_err(c, rc, q->from.off, "table '%s' does not exist",
			       floe_sql__name_str(c->a, &q->from));
	if (rc)
		return floe_error_prefix(c->err, rc, "SELECT: ");
	/* hints: time travel */
	int64_t snap = -1, as_of = -1;
	const char *branch = NULL, *tag = NULL;
	for (size_t i = 0; i < q->n_hints; i++) {
		const sql_opt *o = &q->hints[i];
		int64_t v;
		if (!strcmp(o->key, "snapshot-id") && floe_parse_i64(o->value, strlen(o->value), &v)) {
			snap = v;
		} else if (!strcmp(o->key, "as-of-timestamp") &&
			   floe_parse_i64(o->value, strlen(o->value), &v)) {
			as_of = v;
		} else if (!strcmp(o->key, "branch")) {
			branch = o->value;
		} else if (!strcmp(o->key, "tag")) {
			tag = o->value;
		} else if (!strcmp(o->key, "streaming") && !strcasecmp(o->value, "false")) {
		} else {
			rc = sql_err(c, FLOE_EUNSUPPORTED, o->off,
				     "read option '%s' = '%s' is not supported yet (snapshot-id, "
				     "as-of-timestamp, branch, tag)",
				     o->key, o->value);
			goto done;
		}
	}
	if (r.meta) {
		if (q->where) {
			rc = sql_err(c, FLOE_EUNSUPPORTED, q->where->off,
				     "WHERE on a metadata table is not supported yet");
			goto done;
		}
		rc = floe_inspect_open(&scan, t, r.meta, snap, c->err);
		if (rc == FLOE_ENOTFOUND) {
			rc = sql_err(c, rc, q->from.off, "unknown metadata table '$%s' (snapshots, "
							 "history, files, data_files, delete_files, "
							 "manifests, partitions, refs, entries, ...)",
				     r.meta);
			goto done;
		}
	} else {
		const floe_schema *ts = floe_metadata_current_schema(floe_table_metadata(t));
		for (size_t i = 0; !star && i < q->n_items; i++)
			if (!floe_schema_find_name(ts, cols[i], false) && cols[i][0] != '_') {
				rc = sql_err(c, FLOE_EINVAL, q->items[i]->off,
					     "unknown column '%s' (not a column of '%s')", cols[i],
					     r.table);
				goto done;
			}
		floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
		floe_buf w;
		floe_buf_init(&w, 1 << 20);
		if (q->where && (rc = sql_filter_text(c, q->where, true, &w))) {
			floe_buf_reset(&w);
			goto done;
		}
		so.where = w.len ? floe_buf_cstr(&w) : NULL;
		so.columns = star ? NULL : cols;
		so.n_columns = star ? 0 : q->n_items;
		so.limit = q->limit;
		so.snapshot_id = snap;
		so.as_of_ms = as_of;
		so.branch = branch;
		so.tag = tag;
		rc = floe_scan_open(&scan, t, &so, c->err);
		floe_buf_reset(&w);
		if (rc && q->where && strstr(c->err->msg, "column")) {
			char inner[FLOE_ERROR_MSG_MAX];
			snprintf(inner, sizeof(inner), "%s", c->err->msg);
			rc = sql_err(c, rc, q->where->off, "%s", inner);
			goto done;
		}
	}
	if (rc) {
		char inner[FLOE_ERROR_MSG_MAX];
		snprintf(inner, sizeof(inner), "%s", c->err->msg);
		rc = sql_err(c, rc, q->off, "%s", inner);
		goto done;
	}
	/* the result is held to be aligned: within the query's memory budget */
	int64_t budget = sql_query_budget(c);
	floe_buf_init(&cp.b, (size_t)budget / 2);
	rc = floe_scan_write(scan, FLOE_OUTPUT_CSV, capture_fn, &cp, c->err);
	if (rc) {
		floe_buf_reset(&cp.b);
		if (rc == FLOE_ENOMEM)
			rc = sql_budget_err(c, q, budget);
		goto done;
	}
	size_t old_cap = c->a->cap;
	c->a->cap = c->a->used + (size_t)budget / 2;
	{
		const char *txt = cp.b.data ? (const char *)cp.b.data : "";
		size_t n = cp.b.len, pos = 0, nh = 0;
		const char **hdr;
		sql_rows rows;
		if ((rc = csv_record(c->a, txt, n, &pos, &hdr, &nh)))
			goto oom;
		/* which CSV columns to show (metadata tables are projected here) */
		size_t n_out = star ? nh : q->n_items;
		size_t *pick = floe_arena_calloc(c->a, n_out + 1, sizeof(size_t));
		if (!pick)
			goto oom;
		for (size_t i = 0; i < n_out; i++) {
			if (star) {
				pick[i] = i;
				continue;
			}
			size_t k = 0;
			while (k < nh && !(hdr[k] && !strcmp(hdr[k], cols[i])))
				k++;
			if (k == nh) {
				rc = sql_err(c, FLOE_EINVAL, q->items[i]->off, "unknown column '%s'",
					     cols[i]);
				floe_buf_reset(&cp.b);
				c->a->cap = old_cap;
				goto done;
			}
			pick[i] = k;
		}
		if (star && !(heads = floe_arena_calloc(c->a, nh + 1, sizeof(char *))))
			goto oom;
		for (size_t i = 0; star && i < nh; i++)
			heads[i] = hdr[i] ? hdr[i] : "";
		if (sql_rows_init(&rows, c->a, heads, n_out))
			goto oom;
		const char **cells = floe_arena_calloc(c->a, n_out + 1, sizeof(char *));
		if (!cells)
			goto oom;
		while (pos < n && (q->limit < 0 || (int64_t)rows.n_rows < q->limit)) {
			const char **rec;
			size_t nr;
			if (csv_record(c->a, txt, n, &pos, &rec, &nr))
				goto oom;
			for (size_t i = 0; i < n_out; i++)
				cells[i] = pick[i] < nr ? rec[pick[i]] : NULL;
			if (sql_rows_add(&rows, cells))
				goto oom;
		}
		floe_buf_reset(&cp.b);
		c->a->cap = old_cap;
		rc = sql_rows_print(c->s, &rows);
		goto done;
	oom:
		floe_buf_reset(&cp.b);
		c->a->cap = old_cap;
		rc = sql_budget_err(c, q, budget);
	}
done:
	floe_scan_free(scan);
	floe_table_free(t);
	return rc;
}
