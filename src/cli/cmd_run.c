/*
 * cmd_run.c — floe run pipeline.yaml: a streaming job from a YAML file; and
 * the pieces floe ingest shares with it (signals, the progress line).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "floe/pipeline.h"

static floe_pipeline *volatile g_running;
static volatile sig_atomic_t g_signals;

static void on_signal(int sig)
{
	(void)sig;
	floe_pipeline *p = g_running;
	g_signals++;
	if (!p)
		return;
	if (g_signals == 1)
		floe_pipeline_stop(p); /* finish the current checkpoint */
	else
		floe_pipeline_cancel(p);
}

static void progress_line(const floe_pipeline_stats *s, void *payload)
{
	(void)payload;
	double secs = (double)s->elapsed_ms / 1000.0;
	double rate = secs > 0 ? (double)s->records_in / secs : 0;
	fprintf(stderr,
		"\r\033[K%.0fs  in %lld (%.0f/s)  committed %lld  dead-lettered %lld  checkpoints "
		"%lld%s",
		secs, (long long)s->records_in, rate, (long long)s->records_committed,
		(long long)s->records_dead, (long long)s->checkpoints,
		s->maintenance_running ? "  maintaining" : "");
	fflush(stderr);
}

static void print_summary(const floe_pipeline_stats *s)
{
	char dead[4200] = "", filtered[64] = "", resumed[600] = "";
	long long in = s->records_in, fresh = s->records_in - s->records_skipped;
	if (s->resumed_checkpoint_id >= 0)
		snprintf(resumed, sizeof(resumed), "resumed after checkpoint %lld of pipeline %s: ",
			 (long long)s->resumed_checkpoint_id, s->pipeline_id);
	if (s->resumed_checkpoint_id >= 0 && fresh == 0 && s->records_committed == 0) {
		char again[96] = "";
		if (in)
			snprintf(again, sizeof(again), " (%lld %s read again and skipped)", in,
				 cli_plural(in, "record", "records"));
		fprintf(stderr,
			"floe: nothing new: pipeline %s already loaded its inputs up to checkpoint "
			"%lld%s\n",
			s->pipeline_id, (long long)s->resumed_checkpoint_id, again);
		return;
	}
	if (s->records_filtered)
		snprintf(filtered, sizeof(filtered), ", %lld filtered", (long long)s->records_filtered);
	if (s->records_dead)
		snprintf(dead, sizeof(dead), ", %lld dead-lettered to %s", (long long)s->records_dead,
			 s->dead_letter_path ? s->dead_letter_path : "the dead-letter file");
	else
		snprintf(dead, sizeof(dead), ", 0 dead-lettered");
	char skipped[64] = "";
	if (s->records_skipped)
		snprintf(skipped, sizeof(skipped), " (%lld already loaded, skipped)",
			 (long long)s->records_skipped);
	fprintf(stderr, "floe: %s%lld %s read%s%s%s, %lld committed in %lld %s\n", resumed, in,
		cli_plural(in, "record", "records"), skipped, filtered, dead,
		(long long)s->records_committed, (long long)s->checkpoints,
		cli_plural(s->checkpoints, "checkpoint", "checkpoints"));
}

/* --summary json: one object on stdout, for scripts */
static void print_summary_json(const floe_pipeline_stats *s, int rc)
{
	printf("{\"ok\":%s,\"pipeline_id\":", rc ? "false" : "true");
	cli_json_str(stdout, s->pipeline_id);
	printf(",\"resumed_after_checkpoint\":");
	if (s->resumed_checkpoint_id >= 0)
		printf("%lld", (long long)s->resumed_checkpoint_id);
	else
		fputs("null", stdout);
	printf(",\"records_read\":%lld,\"records_skipped\":%lld,\"records_filtered\":%lld,"
	       "\"records_dead_lettered\":%lld,\"dead_letter_path\":",
	       (long long)s->records_in, (long long)s->records_skipped,
	       (long long)s->records_filtered, (long long)s->records_dead);
	cli_json_str(stdout, s->dead_letter_path);
	printf(",\"records_committed\":%lld,\"files_committed\":%lld,\"checkpoints\":%lld,"
	       "\"last_checkpoint_id\":%lld,\"elapsed_ms\":%lld}\n",
	       (long long)s->records_committed, (long long)s->files_committed,
	       (long long)s->checkpoints, (long long)s->last_checkpoint_id, (long long)s->elapsed_ms);
	fflush(stdout);
}

int cli_run_pipeline(const char *yaml, size_t n, const char *base_dir, bool quiet)
{
	floe_error err = {0};
	floe_catalog *cat;
	floe_pipeline *p = NULL;
	floe_pipeline_opts opts = FLOE_PIPELINE_OPTS_INIT;
	struct sigaction sa;
	floe_pipeline_stats st;
	quiet = quiet || g_cli.quiet;
	bool tty = isatty(2) && !quiet && !g_cli.summary_json;
	int rc;
	/* handlers first: a SIGTERM while the catalog opens or tables are created
	 * still ends the run cleanly (it stops before the first checkpoint) */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	g_signals = 0;
	g_running = NULL;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (!(cat = cli_open_catalog())) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		return 1;
	}
	opts.base_dir = base_dir;
	if (tty)
		opts.progress = progress_line;
	floe_pipeline_stats acc;
	memset(&acc, 0, sizeof(acc));
	int runs = 0;
again:
	if ((rc = floe_pipeline_open(&p, cat, yaml, n, &opts, &err))) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		floe_catalog_free(cat);
		return cli_fail(&err);
	}
	g_running = p;
	if (g_signals)
		floe_pipeline_stop(p);
	floe_pipeline_get_stats(p, &st);
	if (st.metrics_port && !quiet)
		fprintf(stderr, "floe: metrics on http://127.0.0.1:%d/metrics\n", st.metrics_port);
	rc = floe_pipeline_run(p, &err);
	g_running = NULL;
	floe_pipeline_get_stats(p, &st);
	if (!rc && floe_pipeline_restart_wanted(p) && !g_signals && runs < 100000) {
		/* a schema update landed (unknown-fields: evolve): run again, from
		 * the tables, with the new schema; the summary covers every run */
		/* what this run settled; the next one reads the rest again */
		acc.records_in += st.records_committed + st.records_dead + st.records_filtered +
				  (runs ? 0 : st.records_skipped);
		acc.records_skipped += runs ? 0 : st.records_skipped;
		acc.records_committed += st.records_committed;
		acc.records_dead += st.records_dead;
		acc.records_filtered += st.records_filtered;
		acc.files_committed += st.files_committed;
		acc.checkpoints += st.checkpoints;
		acc.elapsed_ms += st.elapsed_ms;
		if (!runs)
			acc.resumed_checkpoint_id = st.resumed_checkpoint_id;
		runs++;
		floe_pipeline_free(p);
		p = NULL;
		goto again;
	}
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (runs) {
		st.records_in = acc.records_in + st.records_in - st.records_skipped;
		st.records_skipped = acc.records_skipped;
		st.records_committed += acc.records_committed;
		st.records_dead += acc.records_dead;
		st.records_filtered += acc.records_filtered;
		st.files_committed += acc.files_committed;
		st.checkpoints += acc.checkpoints;
		st.elapsed_ms += acc.elapsed_ms;
		st.resumed_checkpoint_id = acc.resumed_checkpoint_id;
	}
	if (tty)
		fputc('\n', stderr);
	if (g_cli.summary_json)
		print_summary_json(&st, rc);
	else if (!quiet)
		print_summary(&st);
	if (!quiet && !g_cli.summary_json && st.maintenance_runs)
		fprintf(stderr, "floe: %lld maintenance %s compacted %lld data %s\n",
			(long long)st.maintenance_runs,
			cli_plural(st.maintenance_runs, "run", "runs"),
			(long long)st.maintenance_files_rewritten,
			cli_plural(st.maintenance_files_rewritten, "file", "files"));
	/* a load that dead-letters everything (a wrong --format) is a failure */
	double ratio = g_cli.max_dead_ratio_set ? g_cli.max_dead_ratio : 1.0;
	bool too_many_dead = !rc && st.records_dead > 0 &&
			     (g_cli.max_dead_ratio_set
				      ? (double)st.records_dead > ratio * (double)st.records_in
				      : st.records_dead >= st.records_in);
	if (too_many_dead && st.records_dead >= st.records_in)
		fprintf(stderr,
			"floe: all %lld %s were dead-lettered (see %s): is the format right? "
			"(--format csv|json)\n",
			(long long)st.records_in, cli_plural(st.records_in, "record", "records"),
			st.dead_letter_path ? st.dead_letter_path : "the dead-letter file");
	else if (too_many_dead)
		fprintf(stderr,
			"floe: %lld of %lld records were dead-lettered (see %s): more than "
			"--max-dead-letter-ratio %g\n",
			(long long)st.records_dead, (long long)st.records_in,
			st.dead_letter_path ? st.dead_letter_path : "the dead-letter file", ratio);
	floe_pipeline_free(p);
	floe_catalog_free(cat);
	if (rc == FLOE_ECANCELED)
		return 130;
	if (rc)
		return cli_fail(&err);
	return too_many_dead ? 1 : 0;
}

static int write_stdout(const char *data, size_t n, void *payload)
{
	(void)payload;
	return fwrite(data, 1, n, stdout) == n ? 0 : FLOE_EIO;
}

int cmd_run(int argc, char **argv)
{
	const char *path = NULL;
	bool check = false, quiet = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check")) {
			check = true;
		} else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
			quiet = true;
		} else if (!strcmp(argv[i], "--summary") && i + 1 < argc) {
			const char *v = argv[++i];
			if (strcmp(v, "json") && strcmp(v, "text"))
				return cli_usage_error("--summary must be text or json");
			g_cli.summary_json = !strcmp(v, "json");
		} else if (!strcmp(argv[i], "--max-dead-letter-ratio") && i + 1 < argc) {
			if (!cli_parse_ratio(argv[++i], &g_cli.max_dead_ratio))
				return cli_usage_error("--max-dead-letter-ratio must be a number from 0 "
						       "to 1 (0.05)");
			g_cli.max_dead_ratio_set = true;
		} else if (!strcmp(argv[i], "--help-config")) {
			floe_error err = {0};
			if (floe_pipeline_config_reference(write_stdout, NULL, &err))
				return cli_fail(&err);
			return 0;
		} else if (!path && argv[i][0] != '-') {
			path = argv[i];
		} else {
			return cli_usage_error("unknown argument '%s' (see floe run --help)", argv[i]);
		}
	}
	if (!path)
		return cli_usage_error("usage: floe run <pipeline.yaml> [--check] [--quiet] (see floe run --help)");
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "floe: cannot read '%s': %s\n", path, strerror(errno));
		return 1;
	}
	char *text = floe_malloc(((size_t)1 << 20) + 1);
	size_t n = text ? fread(text, 1, (size_t)1 << 20, f) : 0;
	bool more = text && fgetc(f) != EOF;
	fclose(f);
	if (!text || more) {
		floe_free(text);
		fprintf(stderr, "floe: '%s' is larger than 1 MiB\n", path);
		return 1;
	}
	int rc;
	if (check) {
		floe_error err = {0};
		rc = floe_pipeline_check(text, n, &err) ? cli_fail(&err) : 0;
		if (!rc)
			printf("%s: ok\n", path);
	} else {
		char dir[PATH_MAX], absbuf[PATH_MAX];
		char *abs = realpath(path, absbuf);
		const char *base = NULL;
		if (abs) {
			char *slash = strrchr(abs, '/');
			if (slash && (size_t)(slash - abs) < sizeof(dir)) {
				memcpy(dir, abs, (size_t)(slash - abs));
				dir[slash - abs] = 0;
				base = slash == abs ? "/" : dir;
			}
		}
		rc = cli_run_pipeline(text, n, base, quiet);
	}
	floe_free(text);
	return rc;
}
