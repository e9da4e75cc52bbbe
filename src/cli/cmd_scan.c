/*
 * cmd_scan.c — floe scan <table> ... and floe inspect <table> <metadata-table>.
 *
 * A table is a catalog name ("db.events") or, when the argument looks like a
 * path (contains '/', ends in .json, or is a directory), a path-based table:
 * a table directory or a metadata file, with --path-map from=to rules for
 * tables copied from elsewhere.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "floe/scan.h"

#define MAX_LIST 256

static const char SCAN_USAGE[] =
	"usage: floe scan <table|path> [options]\n"
	"  --where EXPR             filter, SQL syntax: \"id >= 10 AND s IN ('a', 'b')\"\n"
	"  --columns a,b.c,_file    columns (dotted names for nested fields; _file, _pos,\n"
	"                           _spec_id, _row_id, _last_updated_sequence_number)\n"
	"  --snapshot-id ID | --as-of TIME | --branch B | --tag T   time travel\n"
	"                           (TIME: epoch milliseconds or 2024-01-01T10:00:00[Z])\n"
	"  --format csv|json|table|parquet   output (json = JSON lines; default csv)\n"
	"  --output FILE            write to FILE (required for parquet)\n"
	"  --limit N                at most N rows\n"
	"  --count                  print the number of rows only\n"
	"  --explain                print the plan (files, deletes, residual filters)\n"
	"  --ignore-case            match column names case-insensitively\n"
	"  --stats                  after the rows, print what was read to stderr (files,\n"
	"                           row groups read and skipped by statistics, rows)\n"
	"  --no-row-group-pruning   read every row group of each planned file\n"
	"  --verify-checksums       check the CRC-32 of every Parquet page that has one;\n"
	"                           a damaged page fails the scan (default: not checked)\n"
	"  --threads N              planning threads (default: one per CPU)\n"
	"  --incremental --from latest|earliest|snapshot:ID|timestamp:TIME|table\n"
	"                           appended rows only (Flink's starting strategies)\n"
	"  --to ID                  last snapshot of an incremental read (default: current)\n"
	"  --follow [--interval 60s] [--polls N]   keep polling for appended snapshots\n"
	"  --skip-overwrites        skip overwrite/delete snapshots instead of failing\n"
	"  --path-map FROM=TO       relocate recorded paths of a path table (repeatable)\n";

static const char INSPECT_USAGE[] =
	"usage: floe inspect <table|path> <metadata-table> [--format table|json|csv]\n"
	"       [--snapshot-id ID] [--path-map FROM=TO]...\n"
	"metadata tables: snapshots, history, refs, metadata_log_entries, manifests, files,\n"
	"                 data_files, delete_files, entries, partitions\n";

static bool looks_like_path(const char *s)
{
	struct stat st;
	size_t n = strlen(s);
	if (strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json")))
		return true;
	return stat(s, &st) == 0 && S_ISDIR(st.st_mode);
}

/* a table by catalog name or path; *cat is set for catalog tables */
static floe_table *open_any(const char *ident, const char *const *map, size_t n_map,
			    floe_catalog **cat)
{
	floe_error err = {0};
	floe_table *t = NULL;
	*cat = NULL;
	if (looks_like_path(ident)) {
		if (floe_table_open_path(&t, ident, map, n_map, &err)) {
			cli_fail(&err);
			return NULL;
		}
		return t;
	}
	if (n_map) {
		cli_usage_error("--path-map applies to path tables only");
		return NULL;
	}
	char *ns, *name;
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

static bool parse_i64(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

/* epoch milliseconds, or an ISO date-time (UTC unless it has a zone) */
static bool parse_time_ms(const char *s, int64_t *out)
{
	if (parse_i64(s, out))
		return true;
	int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0;
	char sep = 0;
	int n = sscanf(s, "%d-%d-%d%c%d:%d:%d.%d", &y, &mo, &d, &sep, &h, &mi, &sec, &ms);
	if (n < 3)
		return false;
	struct tm tm = {0};
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	time_t t = timegm(&tm);
	*out = (int64_t)t * 1000 + (n >= 8 ? ms : 0);
	return true;
}

/* "10s", "500ms", "2m", "1h" or milliseconds */
static bool parse_duration_ms(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return false;
	double mul = !strcmp(end, "") || !strcmp(end, "ms") ? 1
		     : !strcmp(end, "s")			? 1000
		     : !strcmp(end, "m")			? 60000
		     : !strcmp(end, "h")			? 3600000
							: -1;
	if (mul < 0 || v * mul > 9e15)
		return false;
	*out = (int64_t)(v * mul);
	return true;
}

static int split_list(char *s, const char **out, size_t cap, size_t *n)
{
	*n = 0;
	for (char *p = s; p && *p;) {
		char *c = strchr(p, ',');
		if (c)
			*c = 0;
		while (*p == ' ')
			p++;
		if (*p) {
			if (*n >= cap)
				return cli_usage_error("too many columns");
			out[(*n)++] = p;
		}
		p = c ? c + 1 : NULL;
	}
	return 0;
}

typedef struct file_sink {
	FILE *f;
} file_sink;

static int sink_write(const char *data, size_t n, void *payload)
{
	file_sink *s = payload;
	if (fwrite(data, 1, n, s->f) != n)
		return FLOE_EIO;
	fflush(s->f);
	return 0;
}

static int print_task(const floe_scan_task *t, void *payload)
{
	(void)payload;
	printf("%s  records=%" PRId64 " size=%" PRId64 " seq=%" PRId64 " spec=%d%s%s", t->path,
	       t->record_count, t->file_size_in_bytes, t->data_sequence_number, t->spec_id,
	       t->partition && *t->partition ? " partition=" : "", t->partition ? t->partition : "");
	if (t->position_deletes || t->equality_deletes)
		printf(" deletes=%zu+%zu", t->position_deletes, t->equality_deletes);
	if (t->residual && strcmp(t->residual, "TRUE"))
		printf(" residual: %s", t->residual);
	putchar('\n');
	return 0;
}

static bool parse_format(const char *v, floe_output_format *fmt, bool *parquet)
{
	*parquet = false;
	if (!strcmp(v, "csv"))
		*fmt = FLOE_OUTPUT_CSV;
	else if (!strcmp(v, "json"))
		*fmt = FLOE_OUTPUT_JSON;
	else if (!strcmp(v, "table"))
		*fmt = FLOE_OUTPUT_TABLE;
	else if (!strcmp(v, "parquet"))
		*parquet = true;
	else
		return false;
	return true;
}

int cmd_scan(int argc, char **argv)
{
	floe_scan_opts o = FLOE_SCAN_OPTS_INIT;
	const char *ident = NULL, *output = NULL, *from = NULL;
	const char *cols[MAX_LIST], *maps[MAX_LIST];
	size_t n_cols = 0, n_maps = 0;
	floe_output_format fmt = FLOE_OUTPUT_CSV;
	bool parquet = false, count = false, explain = false, incremental = false, follow = false;
	bool stats = false;
	int64_t interval_ms = 60000, polls = 0;
	char *colbuf = NULL;
	int rc;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(SCAN_USAGE, stdout);
			return 0;
		} else if (!strcmp(a, "--where") && v) {
			o.where = v;
			i++;
		} else if (!strcmp(a, "--columns") && v) {
			floe_free(colbuf);
			colbuf = floe_strdup(v);
			if (!colbuf || split_list(colbuf, cols, MAX_LIST, &n_cols)) {
				floe_free(colbuf);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--snapshot-id") && v) {
			if (!parse_i64(v, &o.snapshot_id))
				return cli_usage_error("bad snapshot id '%s'", v);
			i++;
		} else if (!strcmp(a, "--as-of") && v) {
			if (!parse_time_ms(v, &o.as_of_ms))
				return cli_usage_error("bad time '%s' (epoch ms or 2024-01-01T10:00:00)", v);
			i++;
		} else if (!strcmp(a, "--branch") && v) {
			o.branch = v;
			i++;
		} else if (!strcmp(a, "--tag") && v) {
			o.tag = v;
			i++;
		} else if (!strcmp(a, "--format") && v) {
			if (!parse_format(v, &fmt, &parquet))
				return cli_usage_error("--format must be csv, json, table or parquet");
			i++;
		} else if ((!strcmp(a, "--output") || !strcmp(a, "-o")) && v) {
			output = v;
			i++;
		} else if (!strcmp(a, "--limit") && v) {
			if (!parse_i64(v, &o.limit) || o.limit < 0)
				return cli_usage_error("bad limit '%s'", v);
			i++;
		} else if (!strcmp(a, "--threads") && v) {
			int64_t x;
			if (!parse_i64(v, &x) || x < 0 || x > 256)
				return cli_usage_error("bad thread count '%s'", v);
			o.threads = (int)x;
			i++;
		} else if (!strcmp(a, "--count")) {
			count = true;
		} else if (!strcmp(a, "--explain")) {
			explain = true;
		} else if (!strcmp(a, "--stats")) {
			stats = true;
		} else if (!strcmp(a, "--no-row-group-pruning")) {
			o.no_row_group_pruning = true;
		} else if (!strcmp(a, "--verify-checksums")) {
			o.verify_checksums = true;
		} else if (!strcmp(a, "--ignore-case")) {
			o.ignore_case = true;
		} else if (!strcmp(a, "--incremental")) {
			incremental = true;
		} else if (!strcmp(a, "--from") && v) {
			from = v;
			i++;
		} else if (!strcmp(a, "--to") && v) {
			if (!parse_i64(v, &o.end_snapshot_id))
				return cli_usage_error("bad snapshot id '%s'", v);
			i++;
		} else if (!strcmp(a, "--follow")) {
			follow = true;
		} else if (!strcmp(a, "--interval") && v) {
			if (!parse_duration_ms(v, &interval_ms) || interval_ms <= 0)
				return cli_usage_error("bad interval '%s' (10s, 500ms, 1m)", v);
			i++;
		} else if (!strcmp(a, "--polls") && v) {
			if (!parse_i64(v, &polls) || polls < 0)
				return cli_usage_error("bad poll count '%s'", v);
			i++;
		} else if (!strcmp(a, "--skip-overwrites")) {
			o.skip_overwrites = true;
		} else if (!strcmp(a, "--path-map") && v) {
			if (n_maps >= MAX_LIST)
				return cli_usage_error("too many --path-map rules");
			maps[n_maps++] = v;
			i++;
		} else if (!ident && a[0] != '-') {
			ident = a;
		} else {
			floe_free(colbuf);
			return cli_usage_error("unknown or incomplete option '%s'\n%s", a, SCAN_USAGE);
		}
	}
	if (!ident) {
		floe_free(colbuf);
		return cli_usage_error("%s", SCAN_USAGE);
	}
	if (parquet && !output) {
		floe_free(colbuf);
		return cli_usage_error("--format parquet needs --output FILE");
	}
	if (from || follow)
		incremental = true;
	if (incremental) {
		if (!from)
			from = follow ? "table" : "earliest";
		int64_t x;
		if (!strcmp(from, "latest"))
			o.start = FLOE_START_LATEST;
		else if (!strcmp(from, "earliest"))
			o.start = FLOE_START_EARLIEST;
		else if (!strcmp(from, "table") || !strcmp(from, "table-scan"))
			o.start = FLOE_START_TABLE_THEN_INCREMENTAL;
		else if (!strncmp(from, "snapshot:", 9) && parse_i64(from + 9, &x)) {
			o.start = FLOE_START_SNAPSHOT_ID;
			o.start_snapshot_id = x;
		} else if (parse_i64(from, &x)) {
			o.start = FLOE_START_SNAPSHOT_ID;
			o.start_snapshot_id = x;
		} else if (!strncmp(from, "timestamp:", 10) && parse_time_ms(from + 10, &x)) {
			o.start = FLOE_START_TIMESTAMP;
			o.start_timestamp_ms = x;
		} else {
			floe_free(colbuf);
			return cli_usage_error("bad --from '%s' (latest, earliest, table, snapshot:ID, "
					       "timestamp:TIME)",
					       from);
		}
	}
	o.columns = n_cols ? cols : NULL;
	o.n_columns = n_cols;
	floe_catalog *cat = NULL;
	floe_table *t = open_any(ident, maps, n_maps, &cat);
	if (!t) {
		floe_catalog_free(cat);
		floe_free(colbuf);
		return 1;
	}
	floe_error err = {0};
	file_sink sink = {stdout};
	if (output && !parquet && !(sink.f = fopen(output, "w"))) {
		fprintf(stderr, "floe: cannot write '%s': %s\n", output, strerror(errno));
		floe_table_free(t);
		floe_catalog_free(cat);
		floe_free(colbuf);
		return 1;
	}
	if (follow) {
		rc = floe_scan_follow(t, &o, interval_ms, polls, fmt, sink_write, &sink, &err);
	} else {
		floe_scan *s = NULL;
		rc = floe_scan_open(&s, t, &o, &err);
		if (!rc && explain) {
			floe_scan_stats st;
			rc = floe_scan_tasks(s, print_task, NULL, &err);
			floe_scan_get_stats(s, &st);
			printf("-- snapshot %" PRId64 ": %" PRIu64 " manifests (%" PRIu64
			       " pruned), %" PRIu64 " entries, %" PRIu64 " data files (%" PRIu64
			       " pruned), %" PRIu64 " delete files; planned in %.3f ms\n",
			       floe_scan_snapshot_id(s), st.manifests, st.manifests_skipped, st.entries,
			       st.data_files, st.data_files_skipped, st.delete_files,
			       (double)st.plan_ns / 1e6);
		} else if (!rc && count) {
			int64_t n;
			if (!(rc = floe_scan_count(s, &n, &err)))
				fprintf(sink.f, "%" PRId64 "\n", n);
		} else if (!rc && parquet) {
			rc = floe_scan_write_parquet(s, output, &err);
		} else if (!rc) {
			rc = floe_scan_write(s, fmt, sink_write, &sink, &err);
		}
		if (!rc && stats && !explain) {
			floe_scan_stats st;
			floe_scan_get_stats(s, &st);
			fprintf(stderr,
				"floe: %" PRIu64 " data files planned (%" PRIu64 " pruned), %" PRIu64
				" read; row groups: %" PRIu64 " read, %" PRIu64
				" skipped by statistics; rows: %" PRIu64 " read, %" PRIu64
				" deleted, %" PRIu64 " filtered, %" PRIu64 " out\n",
				st.data_files, st.data_files_skipped, st.files_read,
				st.row_groups - st.row_groups_skipped, st.row_groups_skipped,
				st.rows_read, st.rows_deleted, st.rows_filtered, st.rows_out);
		}
		floe_scan_free(s);
	}
	if (sink.f != stdout)
		fclose(sink.f);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_free(colbuf);
	return rc ? cli_fail(&err) : 0;
}

int cmd_inspect_table(int argc, char **argv)
{
	const char *ident = NULL, *name = NULL, *maps[MAX_LIST];
	size_t n_maps = 0;
	int64_t snapshot_id = -1;
	floe_output_format fmt = FLOE_OUTPUT_TABLE;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool parquet;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(INSPECT_USAGE, stdout);
			return 0;
		} else if (!strcmp(a, "--format") && v) {
			if (!parse_format(v, &fmt, &parquet) || parquet)
				return cli_usage_error("--format must be table, json or csv");
			i++;
		} else if (!strcmp(a, "--snapshot-id") && v) {
			if (!parse_i64(v, &snapshot_id))
				return cli_usage_error("bad snapshot id '%s'", v);
			i++;
		} else if (!strcmp(a, "--path-map") && v) {
			if (n_maps >= MAX_LIST)
				return cli_usage_error("too many --path-map rules");
			maps[n_maps++] = v;
			i++;
		} else if (!ident && a[0] != '-') {
			ident = a;
		} else if (!name && a[0] != '-') {
			name = a;
		} else {
			return cli_usage_error("unknown or incomplete option '%s'\n%s", a, INSPECT_USAGE);
		}
	}
	if (!ident || !name)
		return cli_usage_error("%s", INSPECT_USAGE);
	floe_catalog *cat = NULL;
	floe_table *t = open_any(ident, maps, n_maps, &cat);
	if (!t) {
		floe_catalog_free(cat);
		return 1;
	}
	floe_error err = {0};
	floe_scan *s = NULL;
	file_sink sink = {stdout};
	int rc = floe_inspect_open(&s, t, name, snapshot_id, &err);
	if (!rc)
		rc = floe_scan_write(s, fmt, sink_write, &sink, &err);
	floe_scan_free(s);
	floe_table_free(t);
	floe_catalog_free(cat);
	return rc ? cli_fail(&err) : 0;
}
