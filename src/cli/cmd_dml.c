/*
 * cmd_dml.c — floe delete / update / merge: row-level changes in the
 * table's mode (write.<op>.mode: copy-on-write or merge-on-read), one
 * snapshot each, with a one-line outcome (floe/dml.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char common_opts[] =
	"  --mode copy-on-write|merge-on-read   override write.%s.mode\n"
	"  --isolation serializable|snapshot    override write.%s.isolation-level\n"
	"  --dry-run                 list the affected files and rows; change nothing\n"
	"  --ignore-case             match column names case-insensitively\n"
	"  --format table|json       the outcome's format (default: one line)\n";

static const char usage_delete[] =
	"usage: floe delete <namespace.table> --where EXPR [options]\n"
	"\n"
	"Deletes the rows where EXPR is true (floe scan's filter syntax; 'true'\n"
	"deletes every row) in one snapshot.\n\n";
static const char usage_update[] =
	"usage: floe update <namespace.table> --set col=expr [--set ...] --where EXPR [options]\n"
	"\n"
	"Sets columns of the rows where EXPR is true, in one snapshot. expr: a\n"
	"literal (42, 'text', NULL, DATE '2024-01-01'), a column, or a\n"
	"column/literal +, -, * column/literal on numeric columns.\n\n";
static const char usage_merge[] =
	"usage: floe merge <namespace.table> <file> --on key[,key...] [options]\n"
	"\n"
	"Upserts the rows of <file> (JSON lines, or CSV with a header) in one\n"
	"snapshot: a row whose key matches a table row replaces it, the others\n"
	"are inserted. A key twice in the file is an error.\n\n"
	"  --source-format json|csv  default: by the file's extension\n";

typedef enum { DML_DELETE, DML_UPDATE, DML_MERGE } dml_cmd;

static void usage(dml_cmd c, FILE *out)
{
	static const char *names[] = {"delete", "update", "merge"};
	fputs(c == DML_DELETE ? usage_delete : c == DML_UPDATE ? usage_update : usage_merge, out);
	fprintf(out, common_opts, names[c], names[c]);
}

static void print_files(const floe_dml_result *r)
{
	for (size_t i = 0; i < r->n_files; i++)
		printf("  %s: %" PRId64 " of %" PRId64 " rows\n", r->files[i].path, r->files[i].rows,
		       r->files[i].record_count);
}

static void print_json(dml_cmd c, const floe_dml_result *r, bool dry)
{
	static const char *names[] = {"delete", "update", "merge"};
	printf("{\"operation\":\"%s\",\"dry_run\":%s,\"mode\":\"%s\",\"isolation\":\"%s\","
	       "\"rows_deleted\":%" PRId64 ",\"rows_updated\":%" PRId64 ",\"rows_inserted\":%" PRId64
	       ",\"rows_rewritten\":%" PRId64 ",\"data_files_added\":%zu,\"data_files_removed\":%zu,"
	       "\"delete_files_added\":%zu,\"delete_files_removed\":%zu,\"base_snapshot_id\":",
	       names[c], dry ? "true" : "false", floe_dml_mode_name(r->mode),
	       floe_dml_isolation_name(r->isolation), r->rows_deleted, r->rows_updated,
	       r->rows_inserted, r->rows_rewritten, r->data_files_added, r->data_files_removed,
	       r->delete_files_added, r->delete_files_removed);
	if (r->base_snapshot_id >= 0)
		printf("%" PRId64, r->base_snapshot_id);
	else
		fputs("null", stdout);
	fputs(",\"snapshot_id\":", stdout);
	if (r->snapshot_id >= 0)
		printf("%" PRId64, r->snapshot_id);
	else
		fputs("null", stdout);
	fputs(",\"files\":[", stdout);
	for (size_t i = 0; i < r->n_files; i++) {
		fputs(i ? ",{\"path\":" : "{\"path\":", stdout);
		cli_json_str(stdout, r->files[i].path);
		printf(",\"rows\":%" PRId64 ",\"record_count\":%" PRId64 "}", r->files[i].rows,
		       r->files[i].record_count);
	}
	fputs("]}\n", stdout);
}

static void print_line(dml_cmd c, const char *ident, const floe_dml_result *r, bool dry)
{
	const char *mode = floe_dml_mode_name(r->mode);
	size_t k = r->n_files;
	const char *files = k == 1 ? "file" : "files";
	if (dry) {
		if (c == DML_MERGE)
			printf("would update %" PRId64 " rows in %zu %s and insert %" PRId64
			       " rows (%s; dry run, nothing written)\n",
			       r->rows_updated, k, files, r->rows_inserted, mode);
		else
			printf("would %s %" PRId64 " rows in %zu %s (%s; dry run, nothing written)\n",
			       c == DML_DELETE ? "delete" : "update", r->rows_deleted, k, files, mode);
		print_files(r);
		return;
	}
	if (r->snapshot_id < 0) {
		if (c == DML_MERGE)
			printf("nothing to merge: the source has no rows; %s unchanged\n", ident);
		else
			printf("no rows match: nothing %s, %s unchanged (no snapshot)\n",
			       c == DML_DELETE ? "deleted" : "updated", ident);
		return;
	}
	if (c == DML_DELETE)
		printf("deleted %" PRId64 " rows from %zu %s (%s, snapshot %" PRId64 ")\n",
		       r->rows_deleted, k, files, mode, r->snapshot_id);
	else if (c == DML_UPDATE)
		printf("updated %" PRId64 " rows in %zu %s (%s, snapshot %" PRId64 ")\n",
		       r->rows_updated, k, files, mode, r->snapshot_id);
	else
		printf("merged: updated %" PRId64 " rows in %zu %s, inserted %" PRId64
		       " rows (%s, snapshot %" PRId64 ")\n",
		       r->rows_updated, k, files, r->rows_inserted, mode, r->snapshot_id);
}

static int run(dml_cmd c, int argc, char **argv)
{
	floe_dml_opts o = FLOE_DML_OPTS_INIT;
	const char *ident = NULL, *where = NULL, *source = NULL, *on = NULL, *sfmt = NULL;
	floe_dml_set *sets = NULL;
	size_t n_sets = 0;
	bool json = false;
	int rc = 1;
	sets = floe_calloc((size_t)argc + 1, sizeof(*sets));
	if (!sets)
		return 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(c, stdout);
			floe_free(sets);
			return 0;
		} else if (!strcmp(a, "--where") && v) {
			where = v;
			i++;
		} else if (c == DML_UPDATE && !strcmp(a, "--set") && v) {
			const char *eq = strchr(v, '=');
			if (!eq || eq == v) {
				floe_free(sets);
				return cli_usage_error("--set '%s': expected col=expr", v);
			}
			char *col = floe_calloc((size_t)(eq - v) + 1, 1);
			if (col)
				memcpy(col, v, (size_t)(eq - v));
			if (!col) {
				floe_free(sets);
				return 1;
			}
			/* trim the column name */
			size_t n = strlen(col);
			while (n && col[n - 1] == ' ')
				col[--n] = 0;
			sets[n_sets].column = col;
			sets[n_sets].expr = eq + 1;
			n_sets++;
			i++;
		} else if (c == DML_MERGE && !strcmp(a, "--on") && v) {
			on = v;
			i++;
		} else if (c == DML_MERGE && !strcmp(a, "--source-format") && v) {
			sfmt = v;
			i++;
		} else if (!strcmp(a, "--mode") && v) {
			if (!strcmp(v, "copy-on-write"))
				o.mode = FLOE_DML_COPY_ON_WRITE;
			else if (!strcmp(v, "merge-on-read"))
				o.mode = FLOE_DML_MERGE_ON_READ;
			else {
				rc = cli_usage_error("--mode: copy-on-write or merge-on-read");
				goto done;
			}
			i++;
		} else if (!strcmp(a, "--isolation") && v) {
			if (!strcmp(v, "serializable"))
				o.isolation = FLOE_DML_SERIALIZABLE;
			else if (!strcmp(v, "snapshot"))
				o.isolation = FLOE_DML_SNAPSHOT;
			else {
				rc = cli_usage_error("--isolation: serializable or snapshot");
				goto done;
			}
			i++;
		} else if (!strcmp(a, "--dry-run")) {
			o.dry_run = true;
		} else if (!strcmp(a, "--ignore-case")) {
			o.ignore_case = true;
		} else if (!strcmp(a, "--format") && v) {
			if (!strcmp(v, "json"))
				json = true;
			else if (strcmp(v, "table") != 0) {
				rc = cli_usage_error("--format: table or json");
				goto done;
			}
			i++;
		} else if (!ident && a[0] != '-') {
			ident = a;
		} else if (c == DML_MERGE && !source && a[0] != '-') {
			source = a;
		} else {
			rc = cli_usage_error("unknown or incomplete option '%s' (floe %s --help)", a,
					     argv[0]);
			goto done;
		}
	}
	if (!ident || (c == DML_MERGE && (!source || !on)) ||
	    (c != DML_MERGE && !where) || (c == DML_UPDATE && n_sets == 0)) {
		usage(c, stderr);
		rc = 2;
		goto done;
	}

	floe_catalog *cat = cli_open_catalog();
	char *ns = NULL, *name = NULL;
	floe_table *t = NULL;
	floe_error err = {0};
	floe_dml_result r;
	char *keys[64];
	size_t n_keys = 0;
	memset(&r, 0, sizeof(r));
	if (!cat)
		goto done;
	if (!cli_split(ident, &ns, &name)) {
		floe_catalog_free(cat);
		goto done;
	}
	if (c == DML_MERGE) {
		const char *p = on;
		while (*p && n_keys < 64) {
			const char *e = strchr(p, ',');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			while (n && *p == ' ') {
				p++;
				n--;
			}
			while (n && p[n - 1] == ' ')
				n--;
			if (n && (keys[n_keys] = floe_calloc(n + 1, 1)) != NULL)
				memcpy(keys[n_keys++], p, n);
			p = e ? e + 1 : p + strlen(p);
		}
	}
	static char abs_buf[PATH_MAX];
	const char *abs = NULL;
	if (c == DML_MERGE && !strstr(source, "://") && !(abs = realpath(source, abs_buf))) {
		fprintf(stderr, "floe: merge source '%s': %s\n", source, strerror(errno));
		goto out;
	}
	int frc = floe_table_load(&t, cat, ns, name, &err);
	if (!frc) {
		if (c == DML_DELETE)
			frc = floe_dml_delete(t, where, &o, &r, &err);
		else if (c == DML_UPDATE)
			frc = floe_dml_update(t, sets, n_sets, where, &o, &r, &err);
		else
			frc = floe_dml_merge(t, abs ? abs : source, sfmt, (const char *const *)keys, n_keys, &o, &r,
					     &err);
	}
	if (frc) {
		rc = cli_fail(&err);
	} else {
		if (json)
			print_json(c, &r, o.dry_run);
		else
			print_line(c, ident, &r, o.dry_run);
		rc = 0;
	}
out:
	floe_dml_result_reset(&r);
	for (size_t i = 0; i < n_keys; i++)
		floe_free(keys[i]);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_free_string(ns);
	floe_free_string(name);
done:
	for (size_t i = 0; i < n_sets; i++)
		floe_free((char *)sets[i].column);
	floe_free(sets);
	return rc;
}

int cmd_delete(int argc, char **argv)
{
	return run(DML_DELETE, argc, argv);
}

int cmd_update(int argc, char **argv)
{
	return run(DML_UPDATE, argc, argv);
}

int cmd_merge(int argc, char **argv)
{
	return run(DML_MERGE, argc, argv);
}
