/*
 * cmd_sql.c — floe sql: run Flink SQL scripts (-f job.sql), one statement
 * (-e '...'), or statements read from standard input.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "floe/sql.h"

#ifdef FLOE_HAVE_LIBEDIT
#include <histedit.h>
#endif

static floe_sql *volatile g_sql;
static volatile sig_atomic_t g_sql_signals;

static void on_signal(int sig)
{
	(void)sig;
	floe_sql *s = g_sql;
	g_sql_signals++;
	if (!s)
		return;
	if (g_sql_signals == 1)
		floe_sql_stop(s); /* a running job finishes its checkpoint */
	else
		floe_sql_cancel(s);
}

static const char SQL_USAGE[] =
	"usage: floe sql -f <job.sql> [--quiet]   run a script\n"
	"       floe sql -e '<statements>'        run statements\n"
	"       floe sql < job.sql                statements from standard input\n"
	"       floe sql                          a shell on a terminal (\\q quits)\n"
	"       floe sql --check -f <job.sql>     parse only\n"
	"\n"
	"Flink SQL: CREATE CATALOG ... WITH ('type'='iceberg', 'catalog-type'='hadoop'|'jdbc', ...),\n"
	"USE, CREATE DATABASE, CREATE/ALTER/DROP TABLE, SHOW, DESCRIBE, SET, streaming\n"
	"INSERT INTO t SELECT ... FROM source [WHERE ...], EXECUTE STATEMENT SET, and SELECT\n"
	"over tables and metadata tables (t$snapshots, t$files, ...). See docs/sql.md.\n"
	"The global catalog options name default_catalog.\n"
	"\n"
	"Options:\n"
	"  --format tableau|json|csv  how result rows print (default tableau: aligned, with\n"
	"                             rules); json: one object per row; csv: a header line,\n"
	"                             then the rows. json and csv print only the rows\n"
	"  --path-map FROM=TO         for tables read by path (SELECT ... FROM '/data/t'):\n"
	"                             files recorded under FROM are read under TO (repeatable)\n"
	"  --errors fail|dead-letter  a record an INSERT job cannot write (it does not decode,\n"
	"                             a CAST fails): end the job, or (the default) write it to\n"
	"                             the dead-letter file and go on (SET 'errors' wins)\n"
	"  --memory-budget SIZE       what a query may hold (groups, sorted or joined rows, the\n"
	"                             result); past it the query stops with an error (default:\n"
	"                             half the machine's memory; SET 'sql.memory-budget' wins)\n"
	"  -q, --quiet                no [OK] lines and no job summaries\n";

static char *read_all(FILE *f, size_t *n)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = floe_malloc(cap + 1);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (len < cap)
			break;
		if (cap >= ((size_t)16 << 20)) {
			floe_free(buf);
			return NULL;
		}
		char *nb = floe_realloc(buf, cap * 2 + 1);
		if (!nb) {
			floe_free(buf);
			return NULL;
		}
		buf = nb;
		cap *= 2;
	}
	if (buf)
		buf[len] = 0;
	*n = len;
	return buf;
}

/*
 * The shell: statements end with ';' at the end of a line (several lines
 * make one statement); errors are printed and the session goes on; \q or
 * end of input quits. On a terminal, lines are edited with libedit (emacs
 * keys, arrows through the history); statements are kept in
 * ~/.floe_sql_history ($FLOE_SQL_HISTORY names another file, "" none).
 */
typedef struct line_reader {
	bool cont;
#ifdef FLOE_HAVE_LIBEDIT
	EditLine *el;
	History *h;
	char hist_path[PATH_MAX];
#endif
	char line[8192];
} line_reader;

#ifdef FLOE_HAVE_LIBEDIT
static bool g_cont;
static char *prompt(EditLine *el)
{
	(void)el;
	return g_cont ? "> " : "Flink SQL> ";
}
#endif

static void reader_open(line_reader *r)
{
	memset(r, 0, sizeof(*r));
#ifdef FLOE_HAVE_LIBEDIT
	if (!isatty(0) || !isatty(1))
		return;
	const char *hp = getenv("FLOE_SQL_HISTORY"), *home = getenv("HOME");
	if (hp)
		snprintf(r->hist_path, sizeof(r->hist_path), "%s", hp);
	else if (home)
		snprintf(r->hist_path, sizeof(r->hist_path), "%s/.floe_sql_history", home);
	r->el = el_init("floe", stdin, stdout, stderr);
	r->h = history_init();
	if (!r->el || !r->h) {
		if (r->el)
			el_end(r->el);
		if (r->h)
			history_end(r->h);
		r->el = NULL;
		r->h = NULL;
		return;
	}
	HistEvent ev;
	history(r->h, &ev, H_SETSIZE, 1000);
	history(r->h, &ev, H_SETUNIQUE, 1);
	if (r->hist_path[0])
		history(r->h, &ev, H_LOAD, r->hist_path);
	el_set(r->el, EL_PROMPT, prompt);
	el_set(r->el, EL_EDITOR, "emacs");
	el_set(r->el, EL_HIST, history, r->h);
	el_source(r->el, NULL); /* ~/.editrc */
#endif
}

/* The next line (with its newline), or NULL at the end of the input. */
static const char *reader_line(line_reader *r, bool cont)
{
#ifdef FLOE_HAVE_LIBEDIT
	if (r->el) {
		int n;
		g_cont = cont;
		const char *l = el_gets(r->el, &n);
		if (!l || n <= 0)
			return NULL;
		snprintf(r->line, sizeof(r->line), "%s", l);
		return r->line;
	}
#endif
	fputs(cont ? "> " : "Flink SQL> ", stdout);
	fflush(stdout);
	return fgets(r->line, sizeof(r->line), stdin);
}

/* A statement ran: keep it in the history (one entry, newlines as spaces). */
static void reader_remember(line_reader *r, char *stmt)
{
#ifdef FLOE_HAVE_LIBEDIT
	if (!r->h)
		return;
	for (char *p = stmt; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	HistEvent ev;
	history(r->h, &ev, H_ENTER, stmt);
	if (r->hist_path[0])
		history(r->h, &ev, H_SAVE, r->hist_path);
#else
	(void)r;
	(void)stmt;
#endif
}

static void reader_close(line_reader *r)
{
#ifdef FLOE_HAVE_LIBEDIT
	if (r->el)
		el_end(r->el);
	if (r->h)
		history_end(r->h);
#else
	(void)r;
#endif
}

static int shell(floe_sql *s)
{
	line_reader rd;
	const char *line;
	char *buf = NULL;
	size_t len = 0;
	reader_open(&rd);
	fputs("floe sql: Flink SQL on Iceberg tables; end statements with ';', \\q quits\n", stdout);
	for (;;) {
		if (!(line = reader_line(&rd, len > 0)))
			break;
		if (!len && (!strncmp(line, "\\q", 2) || !strncasecmp(line, "quit", 4) ||
			     !strncasecmp(line, "exit", 4)))
			break;
		size_t n = strlen(line);
		char *nb = floe_realloc(buf, len + n + 1);
		if (!nb)
			break;
		buf = nb;
		memcpy(buf + len, line, n + 1);
		len += n;
		size_t e = len;
		while (e > 0 && (buf[e - 1] == '\n' || buf[e - 1] == ' ' || buf[e - 1] == '\t' ||
				 buf[e - 1] == '\r'))
			e--;
		if (!e) {
			len = 0;
			continue;
		}
		if (buf[e - 1] != ';')
			continue;
		floe_error err = {0};
		if (floe_sql_exec(s, buf, len, NULL, &err))
			fprintf(stderr, "[ERROR] %s\n", err.msg[0] ? err.msg : floe_strerror(err.code));
		fflush(stdout);
		buf[e] = 0;
		reader_remember(&rd, buf);
		len = 0;
	}
	fputc('\n', stdout);
	reader_close(&rd);
	floe_free(buf);
	return 0;
}

int cmd_sql(int argc, char **argv)
{
	const char *file = NULL, *stmt = NULL;
	const char *path_map[64];
	size_t n_map = 0;
	floe_sql_format format = FLOE_SQL_TABLEAU;
	const char *errors = NULL;
	int64_t budget = 0;
	bool quiet = false, check = false, interactive = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--format") && i + 1 < argc) {
			const char *v = argv[++i];
			if (!strcmp(v, "tableau") || !strcmp(v, "table"))
				format = FLOE_SQL_TABLEAU;
			else if (!strcmp(v, "json"))
				format = FLOE_SQL_JSON;
			else if (!strcmp(v, "csv"))
				format = FLOE_SQL_CSV;
			else
				return cli_usage_error("sql: --format is tableau, json or csv, not '%s'", v);
		} else if (!strcmp(a, "--path-map") && i + 1 < argc) {
			if (n_map == sizeof(path_map) / sizeof(path_map[0]))
				return cli_usage_error("sql: too many --path-map rules");
			if (!strchr(argv[i + 1], '='))
				return cli_usage_error("sql: --path-map takes FROM=TO, not '%s'", argv[i + 1]);
			path_map[n_map++] = argv[++i];
		} else if ((!strcmp(a, "-f") || !strcmp(a, "--file")) && i + 1 < argc) {
			file = argv[++i];
		} else if ((!strcmp(a, "-e") || !strcmp(a, "--execute")) && i + 1 < argc) {
			stmt = argv[++i];
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = true;
		} else if (!strcmp(a, "--check")) {
			check = true;
		} else if (!strcmp(a, "--memory-budget") && i + 1 < argc) {
			if (!floe_parse_size(argv[++i], &budget) || budget <= 0)
				return cli_usage_error("sql: --memory-budget takes a size (512MiB, 8GiB)");
		} else if (!strcmp(a, "--errors") && i + 1 < argc) {
			errors = argv[++i];
			if (strcmp(errors, "fail") && strcmp(errors, "dead-letter"))
				return cli_usage_error("sql: --errors takes dead-letter or fail");
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(SQL_USAGE, stdout);
			cli_print_examples("sql", stdout);
			return 0;
		} else {
			return cli_usage_error("sql: unexpected '%s' (see floe sql --help)", a);
		}
	}
	if (file && stmt)
		return cli_usage_error("sql: give -f or -e, not both");
	char *text = NULL;
	size_t n = 0;
	const char *origin = NULL;
	char base[PATH_MAX];
	const char *base_dir = NULL;
	if (stmt) {
		n = strlen(stmt);
		text = floe_strdup(stmt);
	} else if (file) {
		FILE *f = fopen(file, "rb");
		if (!f) {
			fprintf(stderr, "floe: cannot read '%s': %s\n", file, strerror(errno));
			return 1;
		}
		text = read_all(f, &n);
		fclose(f);
		origin = file;
	} else if (isatty(0) && !check) {
		interactive = true;
		text = floe_strdup("");
	} else {
		text = read_all(stdin, &n);
		origin = "<stdin>";
	}
	if (!text) {
		fprintf(stderr, "floe: the SQL text is larger than 16 MiB\n");
		return 1;
	}
	if (getcwd(base, sizeof(base)))
		base_dir = base;
	floe_error err = {0};
	int rc;
	if (check) {
		rc = floe_sql_check(text, n, origin, &err) ? cli_fail(&err) : 0;
		if (!rc && !quiet)
			printf("%s: ok\n", origin ? origin : "statements");
		floe_free(text);
		return rc;
	}
	/* default_catalog: the configured catalog, or the embedded default when
	 * it exists (a script that creates its own catalogs leaves no ./warehouse) */
	floe_catalog *cat = NULL;
	char dflt[PATH_MAX];
	snprintf(dflt, sizeof(dflt), "%s/warehouse/catalog.db", g_cli.dir ? g_cli.dir : ".");
	bool configured = (g_cli.catalog_uri && *g_cli.catalog_uri) || (g_cli.warehouse && *g_cli.warehouse) ||
			  (getenv("FLOE_CATALOG_URI") && *getenv("FLOE_CATALOG_URI")) ||
			  (getenv("FLOE_WAREHOUSE") && *getenv("FLOE_WAREHOUSE"));
	if (configured || access(dflt, F_OK) == 0) {
		if (!(cat = cli_open_catalog())) {
			floe_free(text);
			return 1;
		}
	}
	floe_sql_opts opts = FLOE_SQL_OPTS_INIT;
	opts.catalog = cat;
	opts.base_dir = base_dir;
	opts.out = cli_stdout_write;
	opts.quiet = quiet || format != FLOE_SQL_TABLEAU;
	opts.path_map = path_map;
	opts.n_path_map = n_map;
	opts.format = format;
	opts.errors = errors;
	opts.memory_budget = budget;
	floe_sql *s = NULL;
	if (floe_sql_new(&s, &opts, &err)) {
		floe_catalog_free(cat);
		floe_free(text);
		return cli_fail(&err);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	g_sql_signals = 0;
	g_sql = s;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	rc = interactive ? shell(s) : floe_sql_exec(s, text, n, origin, &err);
	g_sql = NULL;
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	fflush(stdout);
	floe_sql_free(s);
	floe_catalog_free(cat);
	floe_free(text);
	if (rc == FLOE_ECANCELED)
		return 130;
	return rc ? cli_fail(&err) : 0;
}
