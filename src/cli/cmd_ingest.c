/*
 * cmd_ingest.c — floe ingest <table> <files or folders...>: a one-shot or
 * streaming load, written as the equivalent pipeline YAML (see
 * --print-config) and run like floe run runs it.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char INGEST_USAGE[] =
	"usage: floe ingest <namespace.table> <files or folders...|-> [options]\n"
	"       floe ingest <namespace.table> --generator [options]\n"
	"\n"
	"Loads JSON lines or CSV into a table with exactly-once checkpoint commits.\n"
	"Running the same command again resumes where the last commit stopped (the\n"
	"pipeline id, ingest-<table>-<hash of the inputs> unless --pipeline-id, names\n"
	"the commits: the same inputs resume, other inputs load on their own).\n"
	"\n"
	"Input:\n"
	"  --format json|csv|debezium-json record format (default json: JSON lines;\n"
	"                                  debezium-json: Debezium change events)\n"
	"  --rowkind-field COL             json/csv change records: COL holds each\n"
	"                                  record's kind (+I, -U, +U, -D, insert,\n"
	"                                  update, delete)\n"
	"  --follow                        keep watching for new files and appended data\n"
	"  --pattern GLOB                  only files whose name matches (\"*.jsonl\")\n"
	"  --csv-delimiter C  --no-header  --null-literal S\n"
	"  --epoch-unit s|ms|us|ns         numbers in timestamp columns (default ms)\n"
	"  --block-size SIZE               bytes read at a time (default 1MiB)\n"
	"  -                               read standard input\n"
	"  --generator                     generate rows (Flink's datagen) instead:\n"
	"    --rows-per-second N  --number-of-rows N  --seed N\n"
	"    --field COL.OPTION=VALUE      kind=random|sequence, min, max, max-past,\n"
	"                                  length, start, end, null-rate, values\n"
	"Table (created when missing and --create-schema is given):\n"
	"  --create-schema COLUMNS         \"id long not null, ts timestamptz, ...\"\n"
	"  --partition-by EXPR  --sort-by EXPR  --format-version N\n"
	"  --property KEY=VALUE            table property at creation (repeatable)\n"
	"  --filter EXPR                   only rows that match (\"kind = 'click'\")\n"
	"Upserts (Flink's upsert mode; also on with write.upsert.enabled=true):\n"
	"  --upsert                        each row replaces the row of its key\n"
	"  --equality-fields A,B           the key (default: the schema's identifier\n"
	"                                  fields); must include the partition columns\n"
	"Checkpoints and writers:\n"
	"  --checkpoint-interval D         default 10s\n"
	"  --min-pause D                   least time between checkpoints (default 0)\n"
	"  --parallelism N                 writer tasks (default: CPU count)\n"
	"  --distribution none|hash|range  hash: one writer per partition\n"
	"  --memory-budget SIZE            shared by open files (default 32MiB)\n"
	"  --pipeline-id ID\n"
	"Maintenance:\n"
	"  --maintenance auto|off          auto: compact, expire, delete orphans and\n"
	"                                  rewrite manifests after commits (default off)\n"
	"  --maintenance-option KEY=VALUE  a maintenance.* key of floe run (repeatable),\n"
	"                                  e.g. schedule.commit-count=20, rate-limit=30s\n"
	"Errors and observability:\n"
	"  --errors dead-letter|fail       default dead-letter\n"
	"  --dead-letter PATH              default dead-letter.jsonl\n"
	"  --metrics-port N                Prometheus metrics on this port\n"
	"  --quiet                         no progress line or summary\n"
	"  --print-config                  print the pipeline YAML instead of running it\n";

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
	"--upsert", "--equality-fields", "--rowkind-field", NULL,
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
	const char *mport = NULL, *delim = NULL, *nulls = NULL, *unit = NULL;
	const char *rps = NULL, *nrows = NULL, *seed = NULL, *block = NULL, *maint = NULL;
	const char *eqf = NULL, *rowkind = NULL;
	bool follow = false, gen = false, no_header = false, print = false, quiet = false;
	bool upsert = false;
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
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(INGEST_USAGE, stdout);
			return 0;
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

	sbuf sb = {NULL, 0, 0, false}, *f = &sb;
	fprintf_sb(f, "pipeline:\n  name: ");
	if (pid) {
		q(f, pid);
	} else {
		char id[512];
		snprintf(id, sizeof(id), "ingest-%s-%08x", table,
			 inputs_hash(paths, n_paths, use_stdin, gen));
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
