/*
 * cmd_plan.c — floe plan <pipeline.yaml | job.sql>: predict files, snapshots, storage
 * and cost of a pipeline with and without maintenance, and lint it against
 * the anti-patterns (floe/plan.h). Exit code: 0 no lint, 1 a warning, 2 a
 * critical lint, 3 the plan failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "floe/plan.h"
#include "floe/sql.h"

#define EXIT_FAILED 3

static const char PLAN_USAGE[] =
	"usage: floe plan <pipeline.yaml | job.sql> [workload] [prices] [--format text|json]\n"
	"  job.sql: a Flink SQL script; each INSERT job (or statement set) is planned from its\n"
	"  CREATE CATALOG/TABLE, PARTITIONED BY, PRIMARY KEY, WITH and SET, in memory: no\n"
	"  catalog is opened or created, so its target tables must be created by the script\n"
	"workload:\n"
	"  --rate N[/s]             records per second into each table (the generator's rate, "
	"else 20000)\n"
	"  --record-size SIZE       bytes per record (300B)\n"
	"  --compression R          Parquet bytes per record byte (0.3)\n"
	"  --partitions N           partitions written to (default: bucket counts; 10 per identity)\n"
	"  --skew zipf:S            Zipf exponent of the partition sizes (0: uniform)\n"
	"  --update-ratio R         share of records that replace a key (0)\n"
	"  --equality-fields a,b    the upsert key\n"
	"  --writers N              writer tasks (the config's parallelism.default)\n"
	"  --days N                 horizon of the totals (7)\n"
	"prices (S3 standard list prices by default):\n"
	"  --put-price $            per 1,000 PUT/LIST (0.005)\n"
	"  --get-price $            per 1,000 GET (0.0004)\n"
	"  --storage-price $        per GB-month (0.023)\n"
	"exit code: 0 no lint, 1 a warning, 2 a critical lint, 3 plan failed";

static bool parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno)
		return false;
	if (*end == '/' && !strcmp(end, "/s"))
		end += 2;
	if (*end == '%') {
		v /= 100;
		end++;
	}
	*out = v;
	return *end == 0;
}

/* ---- a Flink SQL script: one plan per INSERT job (floe_sql_pipelines) ---------- */

#define MAX_JOBS 64

typedef struct sql_jobs {
	const floe_plan_opts *o;
	floe_plan *plans[MAX_JOBS];
	char ids[MAX_JOBS][32];
	unsigned lines[MAX_JOBS];
	size_t n;
	floe_error *err;
} sql_jobs;

static int on_job(const char *job, unsigned line, const char *yaml, size_t n, void *payload)
{
	sql_jobs *j = payload;
	if (j->n == MAX_JOBS)
		return floe_error_set(j->err, FLOE_EUNSUPPORTED, "line %u: more than %d jobs", line,
				      MAX_JOBS);
	int rc = floe_plan_run(&j->plans[j->n], yaml, n, j->o, j->err);
	if (rc)
		return floe_error_prefix(j->err, rc, "line %u: job %s: ", line, job);
	snprintf(j->ids[j->n], sizeof(j->ids[0]), "%s", job);
	j->lines[j->n++] = line;
	return 0;
}

/* Each job's plan in script order: text, one section a job; JSON,
 * {"jobs": [{"job", "line", "severity", "plan": <the pipeline's plan>}]}.
 * The exit code is the worst job's. */
static int plan_sql(const char *path, char *text, size_t n, const floe_plan_opts *o, bool json)
{
	static const char *const SEV[] = {"ok", "warn", "critical"};
	floe_error err = {0};
	sql_jobs *j = floe_calloc(1, sizeof(*j));
	if (!j) {
		floe_free(text);
		fprintf(stderr, "floe: out of memory\n");
		return EXIT_FAILED;
	}
	j->o = o;
	j->err = &err;
	int rc = floe_sql_pipelines(text, n, path, on_job, j, &err);
	floe_free(text);
	if (!rc && !j->n)
		rc = floe_error_set(&err, FLOE_EINVAL, "%s: no INSERT job to plan", path);
	int worst = 0;
	if (!rc && json)
		printf("{\"jobs\": [");
	for (size_t i = 0; i < j->n && !rc; i++) {
		int sev = (int)floe_plan_severity(j->plans[i]);
		if (sev > worst)
			worst = sev;
		if (json)
			printf("%s{\"job\": \"%s\", \"line\": %u, \"severity\": \"%s\", \"plan\": ",
			       i ? ", " : "", j->ids[i], j->lines[i], SEV[sev < 0 || sev > 2 ? 2 : sev]);
		else
			printf("%sfloe plan: %s, job %s (line %u)\n", i ? "\n" : "", path, j->ids[i],
			       j->lines[i]);
		fflush(stdout);
		rc = floe_plan_write(j->plans[i], json, cli_stdout_write, NULL, &err);
		if (json)
			printf("}");
	}
	if (!rc && json)
		printf("]}\n");
	for (size_t i = 0; i < j->n; i++)
		floe_plan_free(j->plans[i]);
	floe_free(j);
	if (rc) {
		cli_fail(&err);
		return EXIT_FAILED;
	}
	return worst;
}

int cmd_plan(int argc, char **argv)
{
	floe_plan_opts o = FLOE_PLAN_OPTS_INIT;
	const char *path = NULL;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		double d;
		int64_t sz;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			puts(PLAN_USAGE);
			cli_print_examples("plan", stdout);
			return 0;
		}
		if (a[0] != '-') {
			if (path) {
				cli_usage_error("one pipeline file (see floe plan --help)");
				return EXIT_FAILED;
			}
			path = a;
			continue;
		}
		if (!v) {
			cli_usage_error("%s needs a value (see floe plan --help)", a);
			return EXIT_FAILED;
		}
		i++;
		bool ok = true;
		if (!strcmp(a, "--format")) {
			ok = !strcmp(v, "json") || !strcmp(v, "text") || !strcmp(v, "table");
			json = !strcmp(v, "json");
		} else if (!strcmp(a, "--rate")) {
			ok = parse_double(v, &o.rate) && o.rate >= 0;
		} else if (!strcmp(a, "--record-size")) {
			size_t n = strlen(v);
			char tmp[64];
			snprintf(tmp, sizeof(tmp), "%s", v);
			if (n > 1 && n < sizeof(tmp) && (tmp[n - 1] == 'B' || tmp[n - 1] == 'b') &&
			    tmp[n - 2] >= '0' && tmp[n - 2] <= '9')
				tmp[n - 1] = 0; /* "300B" */
			ok = floe_parse_size(tmp, &sz) && sz > 0;
			o.record_size = (double)sz;
		} else if (!strcmp(a, "--compression")) {
			ok = parse_double(v, &o.compression) && o.compression > 0;
		} else if (!strcmp(a, "--partitions")) {
			ok = parse_double(v, &d) && d >= 1;
			o.partitions = (int64_t)d;
		} else if (!strcmp(a, "--skew")) {
			ok = parse_double(strncmp(v, "zipf:", 5) ? v : v + 5, &o.skew) && o.skew >= 0;
		} else if (!strcmp(a, "--update-ratio")) {
			ok = parse_double(v, &o.update_ratio) && o.update_ratio >= 0 && o.update_ratio <= 1;
		} else if (!strcmp(a, "--equality-fields")) {
			o.equality_fields = v;
		} else if (!strcmp(a, "--writers")) {
			ok = parse_double(v, &d) && d >= 1;
			o.parallelism = (int64_t)d;
		} else if (!strcmp(a, "--days")) {
			ok = parse_double(v, &d) && d >= 1 && d <= 3650;
			o.days = (int)d;
		} else if (!strcmp(a, "--put-price")) {
			ok = parse_double(v[0] == '$' ? v + 1 : v, &o.put_price);
		} else if (!strcmp(a, "--get-price")) {
			ok = parse_double(v[0] == '$' ? v + 1 : v, &o.get_price);
		} else if (!strcmp(a, "--storage-price")) {
			ok = parse_double(v[0] == '$' ? v + 1 : v, &o.storage_price);
		} else {
			cli_usage_error("unknown option '%s' (see floe plan --help)", a);
			return EXIT_FAILED;
		}
		if (!ok) {
			cli_usage_error("%s: bad value '%s'", a, v);
			return EXIT_FAILED;
		}
	}
	if (!path) {
		cli_usage_error("%s", PLAN_USAGE);
		return EXIT_FAILED;
	}
	size_t pl = strlen(path);
	bool sql = pl > 4 && !strcmp(path + pl - 4, ".sql");
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "floe: cannot read '%s': %s\n", path, strerror(errno));
		return EXIT_FAILED;
	}
	char *text = floe_malloc(((size_t)1 << 20) + 1);
	size_t n = text ? fread(text, 1, (size_t)1 << 20, f) : 0;
	bool more = text && fgetc(f) != EOF;
	fclose(f);
	if (!text || more) {
		floe_free(text);
		fprintf(stderr, "floe: '%s' is larger than 1 MiB\n", path);
		return EXIT_FAILED;
	}
	floe_error err = {0};
	if (sql)
		return plan_sql(path, text, n, &o, json);
	floe_plan *p = NULL;
	int rc = floe_plan_run(&p, text, n, &o, &err);
	floe_free(text);
	if (!rc && !json)
		printf("floe plan: %s\n", path);
	if (!rc)
		rc = floe_plan_write(p, json, cli_stdout_write, NULL, &err);
	int code = rc ? (cli_fail(&err), EXIT_FAILED) : (int)floe_plan_severity(p);
	floe_plan_free(p);
	return code;
}
