/*
 * cmd_doctor.c — floe doctor [<table>|<namespace>|--all]: table health checks
 * (floe/doctor.h) as a table, JSON lines or an HTML report with plots, and
 * an exit code for alerting: 0 ok, 1 warn, 2 critical (3: doctor failed).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "floe/doctor.h"

#define EXIT_FAILED 3

static const char DOCTOR_USAGE[] =
	"usage: floe doctor [<ns.table> | <namespace> | --all] [--format table|json]\n"
	"                   [--report report.html] [--checkpoint-interval DURATION]\n"
	"                   [--orphan-older-than DURATION] [--no-storage]\n"
	"exit code: 0 healthy, 1 a warning, 2 a critical finding, 3 doctor failed";

typedef struct target_list {
	char **ns, **name;
	size_t n, cap;
} target_list;

static int add_target(const char *ns, const char *name, void *payload)
{
	target_list *l = payload;
	if (!name)
		return 0;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 16;
		char **a = floe_realloc(l->ns, nc * sizeof(char *));
		if (!a)
			return FLOE_ENOMEM;
		l->ns = a;
		char **b = floe_realloc(l->name, nc * sizeof(char *));
		if (!b)
			return FLOE_ENOMEM;
		l->name = b;
		l->cap = nc;
	}
	l->ns[l->n] = floe_strdup(ns);
	l->name[l->n] = floe_strdup(name);
	if (!l->ns[l->n] || !l->name[l->n]) {
		floe_free(l->ns[l->n]);
		floe_free(l->name[l->n]);
		return FLOE_ENOMEM;
	}
	l->n++;
	return 0;
}

typedef struct ns_walk {
	floe_catalog *cat;
	target_list *tl;
	floe_error *err;
} ns_walk;

static int walk_ns(const char *ns, const char *name, void *payload)
{
	ns_walk *w = payload;
	(void)name;
	int rc = floe_catalog_list_tables(w->cat, ns, add_target, w->tl, w->err);
	return rc ? rc : floe_catalog_list_namespaces(w->cat, ns, walk_ns, w, w->err);
}

static int file_write(const char *data, size_t n, void *payload)
{
	return fwrite(data, 1, n, payload) == n ? 0 : FLOE_EIO;
}

static void fmt_num(char *out, size_t cap, double v, const char *unit)
{
	if (v == (double)(int64_t)v)
		snprintf(out, cap, "%" PRId64 " %s", (int64_t)v, unit);
	else
		snprintf(out, cap, "%.1f %s", v, unit);
}

int cmd_doctor(int argc, char **argv)
{
	const char *target = NULL, *report = NULL;
	bool all = false;
	cli_format fmt = OUT_TABLE;
	floe_doctor_opts o = FLOE_DOCTOR_OPTS_INIT;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			puts(DOCTOR_USAGE);
			cli_print_examples("doctor", stdout);
			return 0;
		} else if (!strcmp(a, "--all")) {
			all = true;
		} else if (!strcmp(a, "--format") && v) {
			if (!cli_parse_format(v, &fmt) || fmt == OUT_CSV) {
				cli_usage_error("--format must be table or json");
				return EXIT_FAILED;
			}
			i++;
		} else if (!strcmp(a, "--report") && v) {
			report = v;
			i++;
		} else if (!strcmp(a, "--checkpoint-interval") && v) {
			if (!floe_parse_duration_ms(v, &o.checkpoint_interval_ms) ||
			    o.checkpoint_interval_ms <= 0) {
				cli_usage_error("--checkpoint-interval: bad duration '%s'", v);
				return EXIT_FAILED;
			}
			i++;
		} else if (!strcmp(a, "--orphan-older-than") && v) {
			if (!floe_parse_duration_ms(v, &o.orphan_older_than_ms)) {
				cli_usage_error("--orphan-older-than: bad duration '%s'", v);
				return EXIT_FAILED;
			}
			i++;
		} else if (!strcmp(a, "--no-storage")) {
			o.scan_storage = false;
		} else if (!target && a[0] != '-') {
			target = a;
		} else {
			cli_usage_error("%s", DOCTOR_USAGE);
			return EXIT_FAILED;
		}
	}
	if (!all == !target) {
		cli_usage_error("%s", DOCTOR_USAGE);
		return EXIT_FAILED;
	}
	floe_catalog *cat = cli_open_catalog_read_only();
	if (!cat)
		return EXIT_FAILED;
	floe_error err = {0};
	target_list tl = {0};
	ns_walk w = {cat, &tl, &err};
	floe_doctor_report **reps = NULL;
	size_t n_reps = 0;
	int rc = 0, exit_code = 0;
	if (all) {
		rc = floe_catalog_list_namespaces(cat, NULL, walk_ns, &w, &err);
	} else {
		/* a table, else a namespace (its tables and those of its children) */
		char *ns = NULL, *name = NULL;
		floe_table *t = NULL;
		if (strchr(target, '.') && !floe_catalog_split_ident(target, NULL, &ns, &name, NULL) &&
		    !floe_table_load(&t, cat, ns, name, NULL)) {
			floe_table_free(t);
			rc = add_target(ns, name, &tl);
		} else {
			rc = walk_ns(target, NULL, &w);
		}
		floe_free_string(ns);
		floe_free_string(name);
	}
	if (rc == FLOE_ENOMEM && !err.msg[0])
		floe_error_set(&err, rc, "out of memory");
	if (!rc && tl.n == 0 && !all)
		rc = floe_error_set(&err, FLOE_ENOTFOUND, "no table or namespace '%s'", target);
	if (!rc && tl.n && !(reps = floe_calloc(tl.n, sizeof(*reps))))
		rc = floe_error_set(&err, FLOE_ENOMEM, "out of memory");
	for (size_t i = 0; i < tl.n && !rc; i++) {
		floe_table *t = NULL;
		if ((rc = floe_table_load(&t, cat, tl.ns[i], tl.name[i], &err)))
			break;
		rc = floe_doctor_run(&reps[n_reps], t, &o, &err);
		floe_table_free(t);
		if (!rc)
			n_reps++;
	}
	if (rc) {
		cli_fail(&err);
		exit_code = EXIT_FAILED;
		goto done;
	}
	if (fmt == OUT_JSON) {
		for (size_t i = 0; i < n_reps && !rc; i++)
			rc = floe_doctor_write_json(reps[i], cli_stdout_write, NULL, &err);
	} else {
		static const char *cols[] = {"table",	  "check",  "severity", "value",
					     "threshold", "detail", "fix"};
		cli_rows *rows = cli_rows_new(cols, 7);
		for (size_t i = 0; i < n_reps; i++) {
			for (size_t k = 0; k < floe_doctor_n_checks(reps[i]); k++) {
				const floe_health_check *c = floe_doctor_check(reps[i], k);
				char val[64], thr[96], wv[40], cv[40];
				fmt_num(val, sizeof(val), c->value, c->unit);
				fmt_num(wv, sizeof(wv), c->warn_at, "");
				fmt_num(cv, sizeof(cv), c->critical_at, "");
				if (!c->applicable)
					snprintf(thr, sizeof(thr), "-");
				else if (c->critical_at >= 1e17)
					snprintf(thr, sizeof(thr), "warn %s%s", c->lower_is_worse ? "<" : ">", wv);
				else
					snprintf(thr, sizeof(thr), "warn %s%s crit %s%s",
						 c->lower_is_worse ? "<" : ">", wv,
						 c->lower_is_worse ? "<" : ">", cv);
				const char *cells[] = {floe_doctor_table(reps[i]),
						       c->id,
						       c->applicable ? floe_health_name(c->severity) : "n/a",
						       c->applicable ? val : "-",
						       thr,
						       c->detail,
						       c->fix};
				cli_rows_add(rows, cells);
			}
		}
		cli_rows_print(rows, OUT_TABLE, stdout);
		cli_rows_free(rows);
	}
	if (!rc && report) {
		FILE *f = fopen(report, "wb");
		if (!f) {
			rc = floe_error_set(&err, FLOE_EIO, "cannot write '%s'", report);
		} else {
			rc = floe_doctor_write_html((const floe_doctor_report *const *)reps, n_reps,
						    file_write, f, &err);
			if (fclose(f) && !rc)
				rc = floe_error_set(&err, FLOE_EIO, "cannot write '%s'", report);
		}
	}
	if (rc) {
		cli_fail(&err);
		exit_code = EXIT_FAILED;
		goto done;
	}
	for (size_t i = 0; i < n_reps; i++)
		if ((int)floe_doctor_severity(reps[i]) > exit_code)
			exit_code = (int)floe_doctor_severity(reps[i]);
done:
	for (size_t i = 0; i < n_reps; i++)
		floe_doctor_report_free(reps[i]);
	floe_free(reps);
	for (size_t i = 0; i < tl.n; i++) {
		floe_free(tl.ns[i]);
		floe_free(tl.name[i]);
	}
	floe_free(tl.ns);
	floe_free(tl.name);
	floe_catalog_free(cat);
	return exit_code;
}
