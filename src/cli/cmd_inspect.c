/*
 * cmd_inspect.c — floe snapshots <table>, floe files <table>.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

typedef struct inspect_args {
	const char *ident;
	cli_format fmt;
	int64_t snapshot_id;
} inspect_args;

static int parse_args(inspect_args *a, int argc, char **argv, const char *usage)
{
	a->ident = NULL;
	a->fmt = OUT_TABLE;
	a->snapshot_id = -1;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--format") && v) {
			if (!cli_parse_format(v, &a->fmt))
				return cli_usage_error("--format must be table, json or csv");
			i++;
		} else if (!strcmp(argv[i], "--snapshot-id") && v) {
			char *end;
			a->snapshot_id = strtoll(v, &end, 10);
			if (*end || end == v || a->snapshot_id < 0)
				return cli_usage_error("--snapshot-id: '%s' is not a snapshot id (a number "
						       "0 or more)",
						       v);
			i++;
		} else if (!strcmp(argv[i], "--wide")) {
			g_cli.wide = true;
		} else if (!a->ident && argv[i][0] != '-') {
			a->ident = argv[i];
		} else {
			return cli_usage_error("%s", usage);
		}
	}
	if (!a->ident)
		return cli_usage_error("%s", usage);
	return 0;
}

static floe_table *open_table(floe_catalog **cat, const char *ident)
{
	char *ns, *name;
	floe_table *t = NULL;
	floe_error err = {0};
	if (!(*cat = cli_open_catalog_read_only()))
		return NULL;
	if (!cli_split(ident, &ns, &name))
		return NULL;
	if (floe_table_load(&t, *cat, ns, name, &err))
		cli_fail(&err);
	floe_free_string(ns);
	floe_free_string(name);
	return t;
}

static void fmt_ts(char *out, size_t cap, int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	size_t n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, cap - n, ".%03dZ", (int)(ms % 1000));
}

/* a JSON string into buf at *o; false when it does not fit (buf keeps a
 * valid prefix: the caller closes the object) */
static bool json_put(char *buf, size_t cap, size_t *o, const char *v)
{
	size_t at = *o;
	if (at + 2 >= cap)
		return false;
	buf[at++] = '"';
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (at + 8 >= cap)
			return false;
		if (*p == '"' || *p == '\\') {
			buf[at++] = '\\';
			buf[at++] = (char)*p;
		} else if (*p < 0x20) {
			at += (size_t)snprintf(buf + at, cap - at, "\\u%04x", *p);
		} else {
			buf[at++] = (char)*p;
		}
	}
	buf[at++] = '"';
	*o = at;
	return true;
}

static int snapshot_row(const floe_snapshot_info *s, void *payload)
{
	cli_rows *r = payload;
	char id[24], parent[24], seq[24], ts[40], summary[4096];
	size_t o = 0;
	snprintf(id, sizeof(id), "%" PRId64, s->snapshot_id);
	snprintf(parent, sizeof(parent), "%" PRId64, s->parent_id);
	snprintf(seq, sizeof(seq), "%" PRId64, s->sequence_number);
	fmt_ts(ts, sizeof(ts), s->timestamp_ms);
	/* the summary as a JSON object (the operation has its own column) */
	summary[o++] = '{';
	for (size_t i = 0; i < s->n_summary; i++) {
		const char *k = s->summary[i].key;
		if (!strcmp(k, "operation"))
			continue;
		if (o > 1 && o + 1 < sizeof(summary))
			summary[o++] = ',';
		if (!json_put(summary, sizeof(summary), &o, k) || o + 1 >= sizeof(summary))
			break;
		summary[o++] = ':';
		if (!json_put(summary, sizeof(summary), &o, s->summary[i].value))
			break;
	}
	if (o + 2 > sizeof(summary))
		o = sizeof(summary) - 2;
	summary[o++] = '}';
	summary[o] = 0;
	const char *cells[] = {id,
			       s->parent_id >= 0 ? parent : NULL,
			       seq,
			       ts,
			       s->operation,
			       s->is_current ? "true" : "false",
			       s->manifest_list,
			       summary};
	cli_rows_add(r, cells);
	return 0;
}

int cmd_snapshots(int argc, char **argv)
{
	inspect_args a;
	floe_catalog *cat = NULL;
	floe_error err = {0};
	int rc = parse_args(&a, argc, argv, "usage: floe snapshots <ns.table> [--format table|json|csv]");
	if (rc)
		return rc;
	floe_table *t = open_table(&cat, a.ident);
	if (!t) {
		floe_catalog_free(cat);
		return 1;
	}
	static const char *cols[] = {"snapshot_id", "parent_id", "sequence_number", "committed_at",
				     "operation",   "current",	 "manifest_list",   "summary"};
	cli_rows *r = cli_rows_new(cols, 8);
	cli_rows_numeric(r, 0);
	cli_rows_numeric(r, 1);
	cli_rows_numeric(r, 2);
	cli_rows_numeric(r, 5); /* true/false: unquoted in JSON */
	cli_rows_raw_json(r, 7); /* the summary: an object */
	rc = floe_table_snapshots(t, snapshot_row, r, &err);
	if (!rc)
		cli_rows_print(r, a.fmt, stdout);
	cli_rows_free(r);
	floe_table_free(t);
	floe_catalog_free(cat);
	return rc ? cli_fail(&err) : 0;
}

static int file_row(const floe_table_file *f, void *payload)
{
	cli_rows *r = payload;
	/* content as Java's and PyIceberg's files tables have it: 0 data,
	 * 1 position deletes, 2 equality deletes */
	char rec[24], size[24], sid[24], seq[24], spec[16], content[16];
	snprintf(content, sizeof(content), "%d", f->content);
	snprintf(rec, sizeof(rec), "%" PRId64, f->record_count);
	snprintf(size, sizeof(size), "%" PRId64, f->file_size_in_bytes);
	snprintf(sid, sizeof(sid), "%" PRId64, f->snapshot_id);
	snprintf(seq, sizeof(seq), "%" PRId64, f->sequence_number);
	snprintf(spec, sizeof(spec), "%d", f->spec_id);
	const char *cells[] = {content,
			       f->path,
			       f->format,
			       spec,
			       f->partition_json,
			       rec,
			       size,
			       sid,
			       seq};
	cli_rows_add(r, cells);
	return 0;
}

int cmd_files(int argc, char **argv)
{
	inspect_args a;
	floe_catalog *cat = NULL;
	floe_error err = {0};
	int rc = parse_args(&a, argc, argv,
			    "usage: floe files <ns.table> [--snapshot-id ID] [--format table|json|csv]");
	if (rc)
		return rc;
	floe_table *t = open_table(&cat, a.ident);
	if (!t) {
		floe_catalog_free(cat);
		return 1;
	}
	static const char *cols[] = {"content",	     "file_path", "file_format",
				     "spec_id",	     "partition", "record_count",
				     "file_size_in_bytes", "snapshot_id", "sequence_number"};
	cli_rows *r = cli_rows_new(cols, 9);
	for (size_t c = 5; c < 9; c++)
		cli_rows_numeric(r, c);
	cli_rows_numeric(r, 0);
	cli_rows_numeric(r, 3);
	cli_rows_raw_json(r, 4); /* the partition: an object, as inspect files has it */
	rc = floe_table_files(t, a.snapshot_id, file_row, r, &err);
	if (!rc)
		cli_rows_print(r, a.fmt, stdout);
	cli_rows_free(r);
	floe_table_free(t);
	floe_catalog_free(cat);
	return rc ? cli_fail(&err) : 0;
}
