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
#include <unistd.h>

#include "cli.h"
#include "floe/maintain.h"
#include "floe/scan.h"

#define MAX_LIST 256

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

/* epoch milliseconds (not before 1970), or an ISO date or date-time (UTC
 * unless it has a zone; the calendar is checked: 2026-02-30 is no date) */
static bool parse_time_ms(const char *s, int64_t *out)
{
	return floe_parse_time_ms(s, out) && *out >= 0;
}

/* A snapshot id: snapshot ids are positive (-1 stands for "none" in metadata). */
static bool parse_snapshot_id(const char *s, int64_t *out)
{
	return parse_i64(s, out) && *out >= 0;
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
		char *e = p + strlen(p);
		while (e > p && e[-1] == ' ')
			*--e = 0;
		if (!*p)
			return cli_usage_error("--columns: an empty column name in the list (give names "
					       "separated by commas: a,b.c,_file)");
		if (*n >= cap)
			return cli_usage_error("--columns: more than %zu columns", cap);
		out[(*n)++] = p;
		p = c ? c + 1 : NULL;
	}
	if (*n == 0)
		return cli_usage_error("--columns: no column names (give names separated by commas: "
				       "a,b.c,_file)");
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

/* ---- floe scan --changelog ---------------------------------------------------------------- */

typedef struct cl_follow {
	file_sink *sink;
	const char *position_file;
	int fd; /* the output file, or -1 (stdout) */
} cl_follow;

/* position file: {"snapshot-id": N, "ordinal": N, "output-bytes": N} */
static int read_position(const char *path, int64_t *snap, int64_t *ordinal, int64_t *bytes)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	*snap = -1;
	*ordinal = 0;
	*bytes = -1;
	if (!f)
		return errno == ENOENT ? 0 : -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *keys[3] = {"\"snapshot-id\":", "\"ordinal\":", "\"output-bytes\":"};
	int64_t *vals[3] = {snap, ordinal, bytes};
	for (int k = 0; k < 3; k++) {
		const char *p = strstr(buf, keys[k]);
		if (!p)
			return -1;
		p += strlen(keys[k]);
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (errno || end == p)
			return -1;
		*vals[k] = v;
	}
	return 0;
}

static int cl_commit(int64_t snapshot_id, int64_t next_ordinal, void *payload)
{
	cl_follow *cf = payload;
	if (fflush(cf->sink->f) || (cf->fd >= 0 && fsync(cf->fd)))
		return FLOE_EIO;
	if (!cf->position_file)
		return 0;
	long long bytes = cf->fd >= 0 ? (long long)lseek(cf->fd, 0, SEEK_END) : -1;
	char tmp[4096], body[256];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", cf->position_file) >= sizeof(tmp))
		return FLOE_EINVAL;
	int n = snprintf(body, sizeof(body),
			 "{\"snapshot-id\": %lld, \"ordinal\": %lld, \"output-bytes\": %lld}\n",
			 (long long)snapshot_id, (long long)next_ordinal, bytes);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return FLOE_EIO;
	bool ok = fwrite(body, 1, (size_t)n, f) == (size_t)n && fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, cf->position_file))
		return FLOE_EIO;
	return 0;
}

static int cl_write(const char *data, size_t n, void *payload)
{
	cl_follow *cf = payload;
	return sink_write(data, n, cf->sink);
}

static int cmd_scan_changelog(int argc, char **argv)
{
	floe_changelog_opts o = FLOE_CHANGELOG_OPTS_INIT;
	const char *ident = NULL, *output = NULL, *position_file = NULL, *maps[MAX_LIST];
	const char *ids[MAX_LIST];
	size_t n_maps = 0, n_ids = 0;
	char *idbuf = NULL;
	floe_output_format fmt = FLOE_OUTPUT_CSV;
	bool follow = false, wide = false, parquet = false;
	int64_t interval_ms = 60000, polls = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--changelog")) {
			continue;
		} else if (!strcmp(a, "--from") && v) {
			o.from = v;
			i++;
		} else if (!strcmp(a, "--to") && v) {
			o.to = v;
			i++;
		} else if (!strcmp(a, "--identifier-columns") && v) {
			floe_free(idbuf);
			idbuf = floe_strdup(v);
			if (!idbuf || split_list(idbuf, ids, MAX_LIST, &n_ids)) {
				floe_free(idbuf);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--no-updates")) {
			o.no_updates = true;
		} else if (!strcmp(a, "--format") && v) {
			if (!parse_format(v, &fmt, &parquet)) {
				floe_free(idbuf);
				return cli_usage_error("--format must be csv, json, table or parquet");
			}
			i++;
		} else if (!strcmp(a, "--wide")) {
			wide = true;
		} else if ((!strcmp(a, "--output") || !strcmp(a, "-o")) && v) {
			output = v;
			i++;
		} else if (!strcmp(a, "--follow")) {
			follow = true;
		} else if (!strcmp(a, "--position-file") && v) {
			position_file = v;
			i++;
		} else if (!strcmp(a, "--interval") && v) {
			if (!parse_duration_ms(v, &interval_ms) || interval_ms <= 0) {
				floe_free(idbuf);
				return cli_usage_error("bad interval '%s' (10s, 500ms, 1m)", v);
			}
			i++;
		} else if (!strcmp(a, "--polls") && v) {
			if (!parse_i64(v, &polls) || polls < 0) {
				floe_free(idbuf);
				return cli_usage_error("bad poll count '%s'", v);
			}
			i++;
		} else if (!strcmp(a, "--threads") && v) {
			int64_t x;
			if (!parse_i64(v, &x) || x < 0 || x > 256) {
				floe_free(idbuf);
				return cli_usage_error("bad thread count '%s'", v);
			}
			o.threads = (int)x;
			i++;
		} else if (!strcmp(a, "--path-map") && v) {
			if (n_maps >= MAX_LIST) {
				floe_free(idbuf);
				return cli_usage_error("too many --path-map rules");
			}
			maps[n_maps++] = v;
			i++;
		} else if (!ident && a[0] != '-') {
			ident = a;
		} else {
			floe_free(idbuf);
			return cli_usage_error("--changelog: unknown or incomplete option '%s' (a changelog "
					       "read takes --from, --to, --identifier-columns, --no-updates, "
					       "--format, --output, --follow, --position-file, --interval, "
					       "--polls, --threads, --path-map)",
					       a);
		}
	}
	if (!ident) {
		floe_free(idbuf);
		return cli_usage_error("usage: floe scan <table|path> --changelog [--from S1] [--to S2]");
	}
	if (parquet && (follow || !output)) {
		floe_free(idbuf);
		return cli_usage_error("--changelog --format parquet needs --output FILE and no --follow");
	}
	if (position_file && !follow) {
		floe_free(idbuf);
		return cli_usage_error("--position-file applies to --changelog --follow");
	}
	if (follow && o.to) {
		floe_free(idbuf);
		return cli_usage_error("--follow reads every new commit: leave --to out");
	}
	o.identifier_columns = n_ids ? ids : NULL;
	o.n_identifier_columns = n_ids;
	if (wide && fmt == FLOE_OUTPUT_TABLE)
		fmt = FLOE_OUTPUT_TABLE_WIDE;
	int64_t pos_snap = -1, pos_ord = 0, pos_bytes = -1;
	char from_buf[32];
	if (position_file) {
		if (read_position(position_file, &pos_snap, &pos_ord, &pos_bytes)) {
			fprintf(stderr, "floe: --position-file '%s' cannot be read (remove it to start "
					"over)\n",
				position_file);
			floe_free(idbuf);
			return 1;
		}
		if (pos_snap >= 0) {
			snprintf(from_buf, sizeof(from_buf), "%lld", (long long)pos_snap);
			o.from = from_buf;
			o.ordinal_base = pos_ord;
		}
	}
	floe_catalog *cat = NULL;
	floe_table *t = open_any(ident, maps, n_maps, &cat);
	if (!t) {
		floe_catalog_free(cat);
		floe_free(idbuf);
		return 1;
	}
	floe_error err = {0};
	file_sink sink = {stdout};
	cl_follow cf = {&sink, position_file, -1};
	if (output && !parquet) {
		/* following into a file with a position: the file is cut back to
		 * what the position covers, so each commit's rows are there once */
		bool resume = follow && position_file && pos_bytes >= 0;
		sink.f = fopen(output, resume ? "a" : "w");
		if (sink.f && resume && ftruncate(fileno(sink.f), (off_t)pos_bytes)) {
			fclose(sink.f);
			sink.f = NULL;
		}
		if (!sink.f) {
			fprintf(stderr, "floe: cannot write '%s': %s\n", output, strerror(errno));
			floe_table_free(t);
			floe_catalog_free(cat);
			floe_free(idbuf);
			return 1;
		}
		cf.fd = fileno(sink.f);
	}
	int rc;
	if (follow) {
		rc = floe_scan_changelog_follow(t, &o, interval_ms, polls, fmt, cl_write, cl_commit, &cf,
						&err);
	} else {
		floe_scan *s = NULL;
		rc = floe_scan_changelog_open(&s, t, &o, &err);
		if (!rc && parquet) {
			char abs[8192];
			const char *target = output;
			if (output[0] != '/' && !strstr(output, "://")) {
				char cwd[4096];
				if (!getcwd(cwd, sizeof(cwd)) ||
				    (size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, output) >= sizeof(abs))
					rc = floe_error_set(&err, FLOE_EINVAL, "--output '%s': path too long",
							    output);
				target = abs;
			}
			if (!rc)
				rc = floe_scan_write_parquet(s, target, &err);
		} else if (!rc) {
			rc = floe_scan_write(s, fmt, sink_write, &sink, &err);
		}
		floe_scan_free(s);
	}
	if (sink.f != stdout)
		fclose(sink.f);
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_free(idbuf);
	return rc ? cli_fail(&err) : 0;
}

/* ---- floe scan --consistent-with ------------------------------------------------------ */

#define MAX_PIPES 64

typedef struct pipe_ids {
	char *id[MAX_PIPES];
	int64_t ts[MAX_PIPES];
	size_t n;
} pipe_ids;

static int collect_pipe(const floe_pipeline_state *s, void *payload)
{
	pipe_ids *p = payload;
	if (p->n >= MAX_PIPES)
		return 0;
	if (!(p->id[p->n] = floe_strdup(s->pipeline_id)))
		return FLOE_ENOMEM;
	p->ts[p->n++] = s->timestamp_ms;
	return 0;
}

static void pipe_ids_free(pipe_ids *p)
{
	for (size_t i = 0; i < p->n; i++)
		floe_free(p->id[i]);
	p->n = 0;
}

/*
 * --consistent-with OTHER[@CHECKPOINT]: the snapshot of t written by the
 * pipeline both tables share, at CHECKPOINT or else at the smaller of the
 * two tables' newest checkpoints (commits of a multi-table pipeline without
 * pipeline.atomic-commit land table by table, so one table may be a
 * checkpoint ahead). Several shared pipelines: the one that wrote t last.
 * Returns 0, or the exit code (the error printed).
 */
static int resolve_consistent(floe_table *t, const char *ident, const char *spec,
			      int64_t *snapshot_id)
{
	char other_name[1024];
	int64_t want = -1;
	if ((size_t)snprintf(other_name, sizeof(other_name), "%s", spec) >= sizeof(other_name))
		return cli_usage_error("--consistent-with: table name too long");
	char *at = strrchr(other_name, '@');
	if (at) {
		*at = 0;
		if (!parse_i64(at + 1, &want) || want < 0)
			return cli_usage_error("--consistent-with: '%s' is not a checkpoint id (a "
					       "number 0 or more: TABLE@CHECKPOINT)",
					       at + 1);
	}
	if (!other_name[0])
		return cli_usage_error("--consistent-with: no table (TABLE or TABLE@CHECKPOINT)");
	floe_catalog *ocat = NULL;
	floe_table *other = open_any(other_name, NULL, 0, &ocat);
	if (!other) {
		floe_catalog_free(ocat);
		return 1;
	}
	floe_error err = {0};
	pipe_ids mine = {0}, theirs = {0};
	int rc = floe_table_pipelines(t, collect_pipe, &mine, &err);
	rc = rc ? rc : floe_table_pipelines(other, collect_pipe, &theirs, &err);
	if (rc == FLOE_ENOMEM && !err.msg[0])
		floe_error_oom(&err);
	const char *pid = NULL;
	int64_t best_ts = -1, ck_mine = -1, ck_theirs = -1;
	for (size_t i = 0; !rc && i < mine.n; i++) {
		bool shared = false;
		for (size_t k = 0; k < theirs.n && !shared; k++)
			shared = !strcmp(mine.id[i], theirs.id[k]);
		int64_t s1, s2, c1, c2;
		if (!shared || mine.ts[i] <= best_ts ||
		    floe_table_pipeline_checkpoint_snapshot(t, mine.id[i], -1, &s1, &c1, NULL) ||
		    floe_table_pipeline_checkpoint_snapshot(other, mine.id[i], -1, &s2, &c2, NULL))
			continue;
		pid = mine.id[i];
		best_ts = mine.ts[i];
		ck_mine = c1;
		ck_theirs = c2;
	}
	if (!rc && !pid)
		rc = floe_error_set(&err, FLOE_ENOTFOUND,
				    "--consistent-with: %s and %s share no pipeline (no checkpoint "
				    "commits of one floe.pipeline-id in both tables' history; floe "
				    "pipelines list shows each table's)",
				    ident, other_name);
	int64_t reached = ck_mine < ck_theirs ? ck_mine : ck_theirs;
	if (!rc && want >= 0 && want > reached)
		rc = floe_error_set(&err, FLOE_ENOTFOUND,
				    "--consistent-with: checkpoint %lld of pipeline '%s' is not in "
				    "both tables yet (%s is at checkpoint %lld, %s at %lld): give one "
				    "up to %lld",
				    (long long)want, pid, ident, (long long)ck_mine, other_name,
				    (long long)ck_theirs, (long long)reached);
	int64_t c = want >= 0 ? want : reached, used = -1;
	if (!rc)
		rc = floe_table_pipeline_checkpoint_snapshot(t, pid, c, snapshot_id, &used, &err);
	if (!rc && g_cli.verbose)
		fprintf(stderr,
			"floe: --consistent-with %s: pipeline '%s' checkpoint %lld: snapshot %lld "
			"(checkpoint %lld) of %s\n",
			other_name, pid, (long long)c, (long long)*snapshot_id, (long long)used, ident);
	pipe_ids_free(&mine);
	pipe_ids_free(&theirs);
	floe_table_free(other);
	floe_catalog_free(ocat);
	return rc ? cli_fail(&err) : 0;
}

int cmd_scan(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--changelog"))
			return cmd_scan_changelog(argc, argv);

	floe_scan_opts o = FLOE_SCAN_OPTS_INIT;
	const char *ident = NULL, *output = NULL, *from = NULL, *consistent = NULL;
	const char *cols[MAX_LIST], *maps[MAX_LIST];
	size_t n_cols = 0, n_maps = 0;
	floe_output_format fmt = FLOE_OUTPUT_CSV;
	bool parquet = false, count = false, explain = false, incremental = false, follow = false;
	bool stats = false, wide = false;
	int64_t interval_ms = 60000, polls = 0;
	char *colbuf = NULL;
	int rc;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--where") && v) {
			if (!v[strspn(v, " \t\n\r")])
				return cli_usage_error("--where: the filter is empty (give an expression "
						       "such as \"id > 10\", or leave --where out)");
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
			if (!parse_snapshot_id(v, &o.snapshot_id))
				return cli_usage_error("--snapshot-id: '%s' is not a snapshot id (a number "
						       "0 or more; floe snapshots lists them)",
						       v);
			i++;
		} else if (!strcmp(a, "--as-of") && v) {
			if (!parse_time_ms(v, &o.as_of_ms))
				return cli_usage_error("--as-of: '%s' is not a time (epoch milliseconds 0 "
						       "or more, or a valid date-time such as "
						       "2024-01-01T10:00:00Z)",
						       v);
			i++;
		} else if (!strcmp(a, "--branch") && v) {
			o.branch = v;
			i++;
		} else if (!strcmp(a, "--tag") && v) {
			o.tag = v;
			i++;
		} else if (!strcmp(a, "--consistent-with") && v) {
			consistent = v;
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
		} else if (!strcmp(a, "--wide")) {
			wide = true;
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
			if (!parse_snapshot_id(v, &o.end_snapshot_id))
				return cli_usage_error("--to: '%s' is not a snapshot id (a number 0 or "
						       "more)",
						       v);
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
		} else if (!strcmp(a, "--skip-corrupt")) {
			o.skip_corrupt = true;
		} else if (!strcmp(a, "--path-map") && v) {
			if (n_maps >= MAX_LIST)
				return cli_usage_error("too many --path-map rules");
			maps[n_maps++] = v;
			i++;
		} else if (!ident && a[0] != '-') {
			ident = a;
		} else {
			floe_free(colbuf);
			return cli_usage_error("unknown or incomplete option '%s' (see floe scan --help)", a);
		}
	}
	if (!ident) {
		floe_free(colbuf);
		return cli_usage_error("usage: floe scan <table|path> [options] (see floe scan --help)");
	}
	if (parquet && !output) {
		floe_free(colbuf);
		return cli_usage_error("--format parquet needs --output FILE");
	}
	if (from || follow)
		incremental = true;
	if (consistent && (incremental || o.snapshot_id >= 0 || o.as_of_ms >= 0 || o.branch || o.tag)) {
		floe_free(colbuf);
		return cli_usage_error("--consistent-with picks the snapshot itself: it does not go "
				       "with --snapshot-id, --as-of, --branch, --tag or incremental "
				       "reads");
	}
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
		else if (!strncmp(from, "snapshot:", 9) && parse_snapshot_id(from + 9, &x)) {
			o.start = FLOE_START_SNAPSHOT_ID;
			o.start_snapshot_id = x;
		} else if (parse_snapshot_id(from, &x)) {
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
	if (wide && fmt == FLOE_OUTPUT_TABLE)
		fmt = FLOE_OUTPUT_TABLE_WIDE;
	o.columns = n_cols ? cols : NULL;
	o.n_columns = n_cols;
	floe_catalog *cat = NULL;
	floe_table *t = open_any(ident, maps, n_maps, &cat);
	if (!t) {
		floe_catalog_free(cat);
		floe_free(colbuf);
		return 1;
	}
	if (consistent && (rc = resolve_consistent(t, ident, consistent, &o.snapshot_id))) {
		floe_table_free(t);
		floe_catalog_free(cat);
		floe_free(colbuf);
		return rc;
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
			/* a relative --output is relative to where the user is (the
			 * library takes URIs and absolute paths only) */
			char abs[8192];
			const char *target = output;
			if (output[0] != '/' && !strstr(output, "://")) {
				char cwd[4096];
				if (!getcwd(cwd, sizeof(cwd)) ||
				    (size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, output) >= sizeof(abs)) {
					rc = floe_error_set(&err, FLOE_EINVAL, "--output '%s': path too long",
							    output);
				}
				target = abs;
			}
			if (!rc)
				rc = floe_scan_write_parquet(s, target, &err);
		} else if (!rc) {
			rc = floe_scan_write(s, fmt, sink_write, &sink, &err);
		}
		if (!rc && o.skip_corrupt) {
			floe_scan_stats st;
			floe_scan_get_stats(s, &st);
			if (st.manifests_corrupt)
				fprintf(stderr,
					"floe: --skip-corrupt: %" PRIu64 " corrupt manifest list(s) or "
					"manifest(s) skipped (named above): rows are missing from this "
					"result\n",
					st.manifests_corrupt);
		}
		if (!rc && stats && !explain) {
			floe_scan_stats st;
			floe_scan_get_stats(s, &st);
			fprintf(stderr,
				"floe: %" PRIu64 " data files planned (%" PRIu64 " pruned), %" PRIu64
				" read, %" PRIu64 " deleted whole; row groups: %" PRIu64 " read, %" PRIu64
				" skipped by statistics; rows: %" PRIu64 " read, %" PRIu64
				" deleted, %" PRIu64 " filtered, %" PRIu64 " out\n",
				st.data_files, st.data_files_skipped, st.files_read, st.files_deleted,
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
	bool wide = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool parquet;
		if (!strcmp(a, "--format") && v) {
			if (!parse_format(v, &fmt, &parquet) || parquet)
				return cli_usage_error("--format must be table, json or csv");
			i++;
		} else if (!strcmp(a, "--snapshot-id") && v) {
			if (!parse_snapshot_id(v, &snapshot_id))
				return cli_usage_error("--snapshot-id: '%s' is not a snapshot id (a number "
						       "0 or more)",
						       v);
			i++;
		} else if (!strcmp(a, "--wide")) {
			wide = true;
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
			return cli_usage_error("unknown or incomplete option '%s' (see floe inspect --help)", a);
		}
	}
	if (!ident || !name)
		return cli_usage_error("usage: floe inspect <table|path> <metadata-table> (see floe inspect --help)");
	floe_catalog *cat = NULL;
	floe_table *t = open_any(ident, maps, n_maps, &cat);
	if (!t) {
		floe_catalog_free(cat);
		return 1;
	}
	floe_error err = {0};
	floe_scan *s = NULL;
	file_sink sink = {stdout};
	if (wide && fmt == FLOE_OUTPUT_TABLE)
		fmt = FLOE_OUTPUT_TABLE_WIDE;
	int rc = floe_inspect_open(&s, t, name, snapshot_id, &err);
	if (!rc)
		rc = floe_scan_write(s, fmt, sink_write, &sink, &err);
	floe_scan_free(s);
	floe_table_free(t);
	floe_catalog_free(cat);
	return rc ? cli_fail(&err) : 0;
}
