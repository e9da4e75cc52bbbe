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

int cli_run_pipeline(const char *yaml, size_t n, const char *base_dir, bool quiet)
{
	floe_error err = {0};
	floe_catalog *cat;
	floe_pipeline *p = NULL;
	floe_pipeline_opts opts = FLOE_PIPELINE_OPTS_INIT;
	struct sigaction sa;
	floe_pipeline_stats st;
	bool tty = isatty(2) && !quiet;
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
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	floe_pipeline_get_stats(p, &st);
	if (tty)
		fputc('\n', stderr);
	if (!quiet)
		fprintf(stderr,
			"floe: %lld records read, %lld committed in %lld checkpoints, %lld "
			"dead-lettered\n",
			(long long)st.records_in, (long long)st.records_committed,
			(long long)st.checkpoints, (long long)st.records_dead);
	if (!quiet && st.maintenance_runs)
		fprintf(stderr, "floe: %lld maintenance runs compacted %lld data files\n",
			(long long)st.maintenance_runs, (long long)st.maintenance_files_rewritten);
	floe_pipeline_free(p);
	floe_catalog_free(cat);
	if (rc == FLOE_ECANCELED)
		return 130;
	if (rc)
		return cli_fail(&err);
	return 0;
}

static int write_stdout(const char *data, size_t n, void *payload)
{
	(void)payload;
	return fwrite(data, 1, n, stdout) == n ? 0 : FLOE_EIO;
}

static const char RUN_USAGE[] =
	"usage: floe run <pipeline.yaml> [--check] [--quiet]\n"
	"       floe run --help-config          every configuration key\n"
	"\n"
	"Runs a streaming pipeline: sources (files, folders, stdin, a generator) into\n"
	"Iceberg tables, one snapshot per table per checkpoint, exactly once across\n"
	"restarts (the tables hold the committed offsets). SIGTERM or Ctrl-C finishes\n"
	"the current checkpoint and exits; a second one exits at once.\n";

int cmd_run(int argc, char **argv)
{
	const char *path = NULL;
	bool check = false, quiet = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check")) {
			check = true;
		} else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
			quiet = true;
		} else if (!strcmp(argv[i], "--help-config")) {
			floe_error err = {0};
			if (floe_pipeline_config_reference(write_stdout, NULL, &err))
				return cli_fail(&err);
			return 0;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(RUN_USAGE, stdout);
			return 0;
		} else if (!path && argv[i][0] != '-') {
			path = argv[i];
		} else {
			return cli_usage_error("unknown argument '%s' (see floe run --help)", argv[i]);
		}
	}
	if (!path) {
		fputs(RUN_USAGE, stderr);
		return 2;
	}
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
