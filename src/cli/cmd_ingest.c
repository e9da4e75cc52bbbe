/*
 * cmd_ingest.c — floe ingest <table> <files or folders...>: a one-shot or
 * streaming load, written as the equivalent pipeline YAML (see
 * --print-config) and run like floe run runs it.
 */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"

/* The YAML text, grown with floe_realloc (the CLI allocates through floe). */
typedef struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *np = floe_realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void fprintf_sb(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fprintf_sb(sbuf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		b->oom = true;
		return;
	}
	sb_put(b, tmp, (size_t)n);
}

static void fputc_sb(char c, sbuf *b)
{
	sb_put(b, &c, 1);
}

/* A YAML double-quoted scalar. */
static void q(sbuf *f, const char *s)
{
	fputc_sb('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf_sb(f, "\\%c", c);
		else if (c == '\n')
			fprintf_sb(f, "\\n");
		else if (c == '\t')
			fprintf_sb(f, "\\t");
		else if (c < 0x20)
			fprintf_sb(f, "\\x%02x", c);
		else
			fputc_sb((char)c, f);
	}
	fputc_sb('"', f);
}

static const char *const FLAGS[] = {
	"--follow", "--generator", "--no-header", "--print-config", "--quiet", "--format",
	"--pattern", "--create-schema", "--partition-by", "--sort-by", "--format-version",
	"--filter", "--checkpoint-interval", "--min-pause", "--parallelism", "--distribution",
	"--memory-budget", "--pipeline-id", "--errors", "--dead-letter", "--metrics-port",
	"--csv-delimiter", "--null-literal", "--epoch-unit", "--rows-per-second", "--number-of-rows",
	"--seed", "--block-size", "--property", "--field", "--maintenance", "--maintenance-option",
	"--metrics-bind", "--summary", "--max-dead-letter-ratio", "--upsert", "--equality-fields",
	"--rowkind-field", "--overwrite", "--overwrite-where", "--branch", "--unknown-fields", NULL,
};

/* Edit distance (for the nearest flag). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];
	if (la > 63 || lb > 63)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The default pipeline id's suffix: FNV-1a of the inputs' absolute paths in
 * sorted order (or "stdin" / "generator"), so running the same command again
 * resumes it while a load of other inputs into the same table keeps its own
 * offsets (the newest snapshot of a pipeline id is what a restart reads).
 */
static uint32_t inputs_hash(const char *const *paths, size_t n, bool use_stdin, bool gen)
{
	char *abs[1024];
	uint32_t h = 2166136261u;
	const char *what = use_stdin ? "stdin" : gen ? "generator" : NULL;
	if (what) {
		for (const char *p = what; *p; p++)
			h = (h ^ (uint8_t)*p) * 16777619u;
		return h;
	}
	for (size_t i = 0; i < n; i++) {
		char buf[PATH_MAX];
		abs[i] = floe_strdup(realpath(paths[i], buf) ? buf : paths[i]);
	}
	qsort(abs, n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < n; i++) {
		for (const char *p = abs[i] ? abs[i] : ""; *p; p++)
			h = (h ^ (uint8_t)*p) * 16777619u;
		h = (h ^ '\n') * 16777619u;
		floe_free(abs[i]);
	}
	return h;
}

static bool ends_with_csv(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && !strcasecmp(name + n - 4, ".csv");
}

/*
 * 1 when every input is CSV by its name (a .csv file; a folder whose files,
 * or the --pattern, end in .csv), 0 when none is, -1 when they mix.
 */
static int infer_format(const char *const *paths, size_t n, const char *pattern)
{
	size_t csv = 0, other = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (pattern) {
				(*(ends_with_csv(pattern) ? &csv : &other))++;
				continue;
			}
			DIR *d = opendir(paths[i]);
			struct dirent *e;
			size_t dc = 0, dn = 0;
			while (d && (e = readdir(d)))
				if (e->d_name[0] != '.')
					(*(ends_with_csv(e->d_name) ? &dc : &dn))++;
			if (d)
				closedir(d);
			if (dc && !dn)
				csv++;
			else if (dn || !dc)
				other++;
			if (dc && dn)
				return -1;
		} else {
			(*(ends_with_csv(paths[i]) ? &csv : &other))++;
		}
	}
	return csv && other ? -1 : csv ? 1 : 0;
}

typedef struct kv_list {
	const char *items[256];
	size_t n;
} kv_list;

int cmd_ingest(int argc, char **argv)
{
	const char *table = NULL;
	const char *paths[1024];
	size_t n_paths = 0;
	kv_list props = {.n = 0}, fields = {.n = 0}, mopts = {.n = 0};
	const char *format = NULL, *pattern = NULL, *schema = NULL, *partition = NULL, *sort = NULL;
	const char *fv = NULL, *filter = NULL, *interval = "10s", *pause = NULL, *par = NULL;
	const char *dist = NULL, *budget = NULL, *pid = NULL, *errors = NULL, *dlq = NULL;
	const char *mport = NULL, *mbind = NULL, *summary = NULL, *dead_ratio = NULL, *delim = NULL, *nulls = NULL, *unit = NULL;
	const char *rps = NULL, *nrows = NULL, *seed = NULL, *block = NULL, *maint = NULL;
	const char *eqf = NULL, *rowkind = NULL, *unknown = NULL;
	bool follow = false, gen = false, no_header = false, print = false, quiet = false;
	bool upsert = false, overwrite = false;
	const char *ow_where = NULL, *branch = NULL;
	bool use_stdin = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name, var)                                                                        \
	if (!strcmp(a, name)) {                                                               \
		if (!v)                                                                       \
			return cli_usage_error("%s needs a value", name);                     \
		var = v;                                                                      \
		i++;                                                                          \
		continue;                                                                     \
	}
		if (!strcmp(a, "--follow")) {
			follow = true;
			continue;
		}
		if (!strcmp(a, "--generator")) {
			gen = true;
			continue;
		}
		if (!strcmp(a, "--no-header")) {
			no_header = true;
			continue;
		}
		if (!strcmp(a, "--print-config")) {
			print = true;
			continue;
		}
		if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			quiet = true;
			continue;
		}
		if (!strcmp(a, "--upsert")) {
			upsert = true;
			continue;
		}
		if (!strcmp(a, "--overwrite")) {
			overwrite = true;
			continue;
		}
		OPT("--overwrite-where", ow_where)
		OPT("--branch", branch)
		OPT("--format", format)
		OPT("--pattern", pattern)
		OPT("--create-schema", schema)
		OPT("--partition-by", partition)
		OPT("--sort-by", sort)
		OPT("--format-version", fv)
		OPT("--filter", filter)
		OPT("--checkpoint-interval", interval)
		OPT("--min-pause", pause)
		OPT("--parallelism", par)
		OPT("--distribution", dist)
		OPT("--memory-budget", budget)
		OPT("--pipeline-id", pid)
		OPT("--errors", errors)
		OPT("--dead-letter", dlq)
		OPT("--metrics-port", mport)
		OPT("--metrics-bind", mbind)
		OPT("--summary", summary)
		OPT("--max-dead-letter-ratio", dead_ratio)
		OPT("--csv-delimiter", delim)
		OPT("--null-literal", nulls)
		OPT("--epoch-unit", unit)
		OPT("--rows-per-second", rps)
		OPT("--number-of-rows", nrows)
		OPT("--seed", seed)
		OPT("--block-size", block)
		OPT("--maintenance", maint)
		OPT("--equality-fields", eqf)
		OPT("--rowkind-field", rowkind)
		OPT("--unknown-fields", unknown)
#undef OPT
		if (!strcmp(a, "--property") || !strcmp(a, "--field") ||
		    !strcmp(a, "--maintenance-option")) {
			kv_list *l = a[2] == 'p' ? &props : a[2] == 'f' ? &fields : &mopts;
			if (!v || !strchr(v, '=') || l->n == 256)
				return cli_usage_error("%s needs KEY=VALUE", a);
			l->items[l->n++] = v;
			i++;
			continue;
		}
		if (!strcmp(a, "-")) {
			use_stdin = true;
			continue;
		}
		if (a[0] == '-') {
			const char *best = FLAGS[0];
			for (size_t k = 1; FLAGS[k]; k++)
				if (distance(a, FLAGS[k]) < distance(a, best))
					best = FLAGS[k];
			return cli_usage_error("unknown option '%s' (did you mean '%s'? see floe ingest "
					       "--help)",
					       a, best);
		}
		if (!table) {
			table = a;
		} else if (n_paths < sizeof(paths) / sizeof(paths[0])) {
			paths[n_paths++] = a;
		} else {
			return cli_usage_error("too many paths");
		}
	}
	if (!table)
		return cli_usage_error("usage: floe ingest <namespace.table> <files or folders...> "
				       "(see floe ingest --help)");
	if (!gen && !use_stdin && !n_paths)
		return cli_usage_error("no input: give files or folders, '-' for stdin, or --generator");
	if ((gen && (use_stdin || n_paths)) || (use_stdin && n_paths))
		return cli_usage_error("give one input: files, '-' or --generator");
	if (summary && strcmp(summary, "json") && strcmp(summary, "text"))
		return cli_usage_error("--summary must be text or json");
	g_cli.summary_json = summary && !strcmp(summary, "json");
	if (dead_ratio && !cli_parse_ratio(dead_ratio, &g_cli.max_dead_ratio))
		return cli_usage_error("--max-dead-letter-ratio must be a number from 0 to 1 (0.05)");
	g_cli.max_dead_ratio_set = dead_ratio != NULL;
	char bind_host[256];
	if (mbind) {
		/* HOST:PORT, or HOST with --metrics-port */
		const char *colon = strrchr(mbind, ':');
		size_t hl = colon ? (size_t)(colon - mbind) : strlen(mbind);
		if (hl >= sizeof(bind_host) || (colon && !colon[1]))
			return cli_usage_error("--metrics-bind: use HOST:PORT (0.0.0.0:9249)");
		memcpy(bind_host, mbind, hl);
		bind_host[hl] = 0;
		if (colon)
			mport = colon + 1;
		else if (!mport)
			return cli_usage_error("--metrics-bind %s needs a port: HOST:PORT or "
					       "--metrics-port N", mbind);
	}
	if (!format && n_paths) {
		/* the record format from the inputs' names: .csv files are CSV */
		int kind = infer_format(paths, n_paths, pattern);
		if (kind < 0)
			return cli_usage_error("the inputs mix .csv and other files: give --format csv "
					       "or --format json");
		if (kind == 1) {
			format = "csv";
			if (!g_cli.quiet && !g_cli.summary_json)
				fprintf(stderr, "floe: reading CSV (from the .csv file names; "
						"--format json to override)\n");
		}
	}

	sbuf sb = {NULL, 0, 0, false}, *f = &sb;
	fprintf_sb(f, "pipeline:\n  name: ");
	if (pid) {
		q(f, pid);
	} else {
		char id[512];
		snprintf(id, sizeof(id), "ingest-%s%s%s-%08x", table, branch ? "@" : "",
			 branch ? branch : "", inputs_hash(paths, n_paths, use_stdin, gen));
		q(f, id);
	}
	fprintf_sb(f, "\nexecution.checkpointing.interval: ");
	q(f, interval);
	if (pause) {
		fprintf_sb(f, "\nexecution.checkpointing.min-pause: ");
		q(f, pause);
	}
	if (par) {
		fprintf_sb(f, "\nparallelism.default: ");
		q(f, par);
	}
	if (errors) {
		fprintf_sb(f, "\nerrors: ");
		q(f, errors);
	}
	if (dlq) {
		fprintf_sb(f, "\ndead-letter.path: ");
		q(f, dlq);
	}
	if (mport) {
		fprintf_sb(f, "\nmetrics.port: ");
		q(f, mport);
	}
	if (mbind) {
		fprintf_sb(f, "\nmetrics.bind: ");
		q(f, bind_host);
	}
	if (budget) {
		fprintf_sb(f, "\nmemory.budget: ");
		q(f, budget);
	}
	fprintf_sb(f, "\nsources:\n  - name: input\n    type: %s\n",
		gen ? "generator" : use_stdin ? "stdin" : "files");
	if (format) {
		fprintf_sb(f, "    format: ");
		q(f, format);
		fputc_sb('\n', f);
	}
	if (n_paths) {
		fprintf_sb(f, "    path:\n");
		for (size_t i = 0; i < n_paths; i++) {
			fprintf_sb(f, "      - ");
			q(f, paths[i]);
			fputc_sb('\n', f);
		}
	}
	if (follow)
		fprintf_sb(f, "    follow: true\n");
	if (rowkind) {
		fprintf_sb(f, "    rowkind.field: ");
		q(f, rowkind);
		fputc_sb('\n', f);
	}
	if (pattern) {
		fprintf_sb(f, "    pattern: ");
		q(f, pattern);
		fputc_sb('\n', f);
	}
	if (delim) {
		fprintf_sb(f, "    csv.field-delimiter: ");
		q(f, delim);
		fputc_sb('\n', f);
	}
	if (no_header)
		fprintf_sb(f, "    csv.header: false\n");
	if (nulls) {
		fprintf_sb(f, "    csv.null-literal: ");
		q(f, nulls);
		fputc_sb('\n', f);
	}
	if (block) {
		fprintf_sb(f, "    block-size: ");
		q(f, block);
		fputc_sb('\n', f);
	}
	if (unit) {
		fprintf_sb(f, "    epoch-unit: ");
		q(f, unit);
		fputc_sb('\n', f);
	}
	if (rps) {
		fprintf_sb(f, "    rows-per-second: ");
		q(f, rps);
		fputc_sb('\n', f);
	}
	if (nrows) {
		fprintf_sb(f, "    number-of-rows: ");
		q(f, nrows);
		fputc_sb('\n', f);
	}
	if (seed) {
		fprintf_sb(f, "    seed: ");
		q(f, seed);
		fputc_sb('\n', f);
	}
	for (size_t i = 0; i < fields.n; i++) {
		const char *eq = strchr(fields.items[i], '=');
		char key[512];
		snprintf(key, sizeof(key), "fields.%.*s", (int)(eq - fields.items[i]), fields.items[i]);
		fprintf_sb(f, "    ");
		q(f, key);
		fprintf_sb(f, ": ");
		q(f, eq + 1);
		fputc_sb('\n', f);
	}
	fprintf_sb(f, "tables:\n  - name: ");
	q(f, table);
	fputc_sb('\n', f);
	if (schema) {
		fprintf_sb(f, "    schema: ");
		q(f, schema);
		fputc_sb('\n', f);
	}
	if (partition) {
		fprintf_sb(f, "    partition-by: ");
		q(f, partition);
		fputc_sb('\n', f);
	}
	if (sort) {
		fprintf_sb(f, "    sort-by: ");
		q(f, sort);
		fputc_sb('\n', f);
	}
	if (fv) {
		fprintf_sb(f, "    format-version: ");
		q(f, fv);
		fputc_sb('\n', f);
	}
	if (filter) {
		fprintf_sb(f, "    filter: ");
		q(f, filter);
		fputc_sb('\n', f);
	}
	if (upsert)
		fprintf_sb(f, "    upsert-enabled: true\n");
	if (overwrite || ow_where)
		fprintf_sb(f, "    write.mode: overwrite\n");
	if (ow_where) {
		fprintf_sb(f, "    overwrite-where: ");
		q(f, ow_where);
		fputc_sb('\n', f);
	}
	if (branch) {
		fprintf_sb(f, "    branch: ");
		q(f, branch);
		fputc_sb('\n', f);
	}
	if (unknown) {
		fprintf_sb(f, "    unknown-fields: ");
		q(f, unknown);
		fputc_sb('\n', f);
	}
	if (eqf) {
		fprintf_sb(f, "    equality-field-columns: ");
		q(f, eqf);
		fputc_sb('\n', f);
	}
	if (dist) {
		fprintf_sb(f, "    distribution-mode: ");
		q(f, dist);
		fputc_sb('\n', f);
	}
	if (maint) {
		fprintf_sb(f, "    maintenance.mode: ");
		q(f, maint);
		fputc_sb('\n', f);
	}
	for (size_t i = 0; i < mopts.n; i++) {
		const char *eq = strchr(mopts.items[i], '=');
		const char *k = mopts.items[i];
		char key[512];
		if (!strncmp(k, "maintenance.", 12))
			k += 12;
		snprintf(key, sizeof(key), "maintenance.%.*s", (int)(eq - k), k);
		fprintf_sb(f, "    ");
		q(f, key);
		fprintf_sb(f, ": ");
		q(f, eq + 1);
		fputc_sb('\n', f);
	}
	if (props.n) {
		fprintf_sb(f, "    properties:\n");
		for (size_t i = 0; i < props.n; i++) {
			const char *eq = strchr(props.items[i], '=');
			char key[512];
			snprintf(key, sizeof(key), "%.*s", (int)(eq - props.items[i]), props.items[i]);
			fprintf_sb(f, "      ");
			q(f, key);
			fprintf_sb(f, ": ");
			q(f, eq + 1);
			fputc_sb('\n', f);
		}
	}
	if (sb.oom || !sb.p) {
		floe_free(sb.p);
		fprintf(stderr, "floe: out of memory\n");
		return 1;
	}
	int rc;
	if (print) {
		fwrite(sb.p, 1, sb.len, stdout);
		rc = 0;
	} else {
		rc = cli_run_pipeline(sb.p, sb.len, NULL, quiet);
	}
	floe_free(sb.p);
	return rc;
}
