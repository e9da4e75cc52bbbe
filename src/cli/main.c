/*
 * main.c — the floe command: global options, catalog selection, dispatch.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli.h"

cli_globals g_cli;


static void log_stderr(floe_log_level level, const char *msg, void *payload)
{
	static const char *names[] = {"debug", "info", "warning", "error"};
	(void)payload;
	fprintf(stderr, "floe: %s: %s\n", names[level], msg);
}

/* the outcome's fields for --format json (a few per command) */
static struct {
	const char *key;
	char value[1024];
	bool number;
} g_fields[8];
static size_t g_n_fields;

void cli_outcome_str(const char *key, const char *value)
{
	if (g_n_fields < sizeof(g_fields) / sizeof(g_fields[0])) {
		g_fields[g_n_fields].key = key;
		snprintf(g_fields[g_n_fields].value, sizeof(g_fields[0].value), "%s", value ? value : "");
		g_fields[g_n_fields++].number = false;
	}
}

void cli_outcome_i64(const char *key, long long value)
{
	if (g_n_fields < sizeof(g_fields) / sizeof(g_fields[0])) {
		g_fields[g_n_fields].key = key;
		snprintf(g_fields[g_n_fields].value, sizeof(g_fields[0].value), "%lld", value);
		g_fields[g_n_fields++].number = true;
	}
}

void cli_outcome_table(const char *ns, const char *name)
{
	char ident[1024];
	snprintf(ident, sizeof(ident), "%s.%s", ns, name);
	cli_outcome_str("table", ident);
}

void cli_outcome(const char *fmt, ...)
{
	va_list ap;
	char line[2048];
	size_t n_fields = g_n_fields;
	g_n_fields = 0;
	if (g_cli.quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!g_cli.outcome_json) {
		puts(line);
		return;
	}
	fputs("{\"command\":", stdout);
	cli_json_str(stdout, g_cli.command ? g_cli.command : "");
	fputs(",\"outcome\":", stdout);
	cli_json_str(stdout, line);
	for (size_t i = 0; i < n_fields; i++) {
		putchar(',');
		cli_json_str(stdout, g_fields[i].key);
		putchar(':');
		if (g_fields[i].number)
			fputs(g_fields[i].value, stdout);
		else
			cli_json_str(stdout, g_fields[i].value);
	}
	fputs("}\n", stdout);
}

bool cli_parse_ratio(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= 0 && v <= 1))
		return false;
	*out = v;
	return true;
}

const char *cli_plural(long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "floe: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return 2;
}

static char g_default_db[4096];

int cli_fail(const floe_error *err)
{
	fprintf(stderr, "floe: %s", err->msg[0] ? err->msg : floe_strerror(err->code));
	/* "namespace 'demo' does not exist" says where floe looked */
	if (err->code == FLOE_ENOTFOUND && g_default_db[0] && !strstr(err->msg, g_default_db))
		fprintf(stderr, " (in the embedded catalog %s)", g_default_db);
	fprintf(stderr, "\n");
	return 1;
}

/* One catalog option and where it came from, for messages. */
typedef struct cat_opt {
	const char *value;
	const char *from; /* "--catalog-uri" or "FLOE_CATALOG_URI" */
} cat_opt;

static cat_opt pick(const char *flag_value, const char *flag, const char *env)
{
	cat_opt o = {flag_value, flag};
	if (!o.value || !*o.value) {
		o.value = getenv(env);
		o.from = env;
		if (o.value && !*o.value)
			o.value = NULL;
	}
	return o;
}

/*
 * The catalog options are honoured or refused, never ignored: a SQL
 * catalog needs a URI; a file-system catalog needs a warehouse and takes no
 * URI; a warehouse without a catalog would silently run on the embedded
 * default instead. Returns 0, or the exit code after printing why.
 */
static int check_catalog_options(void)
{
	cat_opt type = pick(g_cli.catalog_type, "--catalog-type", "FLOE_CATALOG_TYPE");
	cat_opt uri = pick(g_cli.catalog_uri, "--catalog-uri", "FLOE_CATALOG_URI");
	cat_opt wh = pick(g_cli.warehouse, "--warehouse", "FLOE_WAREHOUSE");
	bool fs = type.value && (!strcasecmp(type.value, "filesystem") || !strcasecmp(type.value, "hadoop"));
	bool sql = !type.value || !strcasecmp(type.value, "sql") || !strcasecmp(type.value, "jdbc") ||
		   !strcasecmp(type.value, "sqlite") || !strcasecmp(type.value, "postgresql");
	bool rest = type.value && !strcasecmp(type.value, "rest");
	if (type.value && !strcasecmp(type.value, "glue"))
		return wh.value ? 0
				: cli_usage_error("%s glue needs --warehouse s3://bucket/prefix (or "
						  "FLOE_WAREHOUSE): where new tables go",
						  type.from);
	if (rest)
		return uri.value ? 0
				 : cli_usage_error("%s rest needs --catalog-uri http(s)://host[:port] "
						   "(or FLOE_CATALOG_URI): the REST catalog server",
						   type.from);
	if (!fs && !sql)
		return cli_usage_error("%s '%s': unknown catalog type (sql, filesystem, rest or glue)",
				       type.from, type.value);
	if (fs && !wh.value)
		return cli_usage_error("%s %s needs --warehouse (or FLOE_WAREHOUSE): the folder the "
				       "tables live in",
				       type.from, type.value);
	if (fs && uri.value)
		return cli_usage_error("%s: a filesystem catalog has no URI (its tables live in the "
				       "warehouse)",
				       uri.from);
	if (sql && !uri.value && (type.value || wh.value))
		return cli_usage_error("%s without --catalog-uri: a SQL catalog needs its database "
				       "(--catalog-uri sqlite:///path.db or postgresql://...); for the "
				       "embedded default give --dir instead",
				       type.value ? type.from : wh.from);
	return 0;
}

static floe_catalog *open_catalog(bool read_only)
{
	floe_catalog *cat = NULL;
	floe_error err = {0};
	cat_opt type = pick(g_cli.catalog_type, "--catalog-type", "FLOE_CATALOG_TYPE");
	cat_opt uri = pick(g_cli.catalog_uri, "--catalog-uri", "FLOE_CATALOG_URI");
	cat_opt name = pick(g_cli.catalog_name, "--catalog-name", "FLOE_CATALOG_NAME");
	cat_opt wh = pick(g_cli.warehouse, "--warehouse", "FLOE_WAREHOUSE");
	int rc;
	if (uri.value || wh.value || type.value) {
		floe_catalog_config cfg = FLOE_CATALOG_CONFIG_INIT;
		cfg.type = type.value;
		cfg.uri = uri.value;
		cfg.name = name.value;
		cfg.warehouse = wh.value;
		cfg.props = g_cli.catalog_props;
		cfg.n_props = g_cli.n_catalog_props;
		rc = floe_catalog_open(&cat, &cfg, &err);
	} else {
		const char *dir = g_cli.dir ? g_cli.dir : ".";
		snprintf(g_default_db, sizeof(g_default_db), "%s/warehouse/catalog.db", dir);
		rc = read_only ? floe_catalog_open_default_existing(&cat, dir, &err)
			       : floe_catalog_open_default(&cat, dir, &err);
	}
	if (rc) {
		cli_fail(&err);
		return NULL;
	}
	return cat;
}

floe_catalog *cli_open_catalog(void)
{
	return open_catalog(false);
}

floe_catalog *cli_open_catalog_read_only(void)
{
	return open_catalog(true);
}

bool cli_split(const char *ident, char **ns, char **name)
{
	floe_error err = {0};
	if (floe_catalog_split_ident(ident, NULL, ns, name, &err)) {
		cli_fail(&err);
		return false;
	}
	return true;
}

static int print_stdout(const char *data, size_t n, void *payload)
{
	(void)payload;
	return fwrite(data, 1, n, stdout) == n ? 0 : FLOE_EIO;
}

/* Commands whose output is their outcome line: they take --format text|json
 * (json: the outcome as one object, for scripts). */
static const char *const outcome_commands[] = {
	"namespace create", "namespace set", "namespace drop", "table create", "table set",
	"table rename",	    "table drop",    "add-files",      "pipelines forget", NULL};

/* Takes --format text|json out of an outcome command's arguments. */
static int take_outcome_format(const cli_command *c, int *n_args, char **args)
{
	bool listed = false;
	for (size_t k = 0; outcome_commands[k]; k++)
		listed |= !strcmp(outcome_commands[k], c->name);
	if (!listed)
		return 0;
	int w = 0;
	for (int i = 0; i < *n_args; i++) {
		const char *v = NULL;
		if (!strcmp(args[i], "--format") && i + 1 < *n_args)
			v = args[++i];
		else if (!strncmp(args[i], "--format=", 9))
			v = args[i] + 9;
		if (!v) {
			args[w++] = args[i];
			continue;
		}
		if (strcmp(v, "json") && strcmp(v, "text"))
			return cli_usage_error("floe %s: --format must be text or json", c->name);
		g_cli.outcome_json = !strcmp(v, "json");
	}
	*n_args = w;
	args[w] = NULL;
	return 0;
}

/* args: the command line without the global options; args[0] the command. */
static int dispatch(int n_args, char **args, bool help, bool version)
{
	if (version)
		return floe_build_info(print_stdout, NULL) ? 1 : 0;
	if (n_args == 0) {
		cli_print_usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	const cli_command *c = cli_find_command(args[0], n_args > 1 ? args[1] : NULL);
	if (!c)
		return cli_usage_error("unknown command '%s' (see floe --help)", args[0]);
	if (help && c->own_help) {
		args[n_args++] = "--help";
		return c->run(n_args, args);
	}
	if (help) {
		cli_print_help(c, stdout);
		return 0;
	}
	const cli_command *top = cli_find_command(args[0], NULL);
	g_cli.command = c->name;
	int frc = take_outcome_format(c, &n_args, args);
	if (frc)
		return frc;
	if (top == c && n_args == 1 && cli_command_is_group(c)) {
		/* a group without its subcommand */
		cli_print_help(c, stderr);
		return 2;
	}
	if (top->run != cmd_help && top->run != cmd_completion) {
		floe_set_logger(log_stderr, NULL, g_cli.verbose ? FLOE_LOG_DEBUG : FLOE_LOG_WARN);
		int crc = check_catalog_options();
		if (crc)
			return crc;
	}
	return top->run(n_args, args);
}

int main(int argc, char **argv)
{
	int i = 1;
#if defined(__GLIBC__)
	/* glibc gives threads malloc arenas of their own and keeps what is freed
	 * in each: with four writer tasks a long load's resident set grew by
	 * ~30 MB. floe reuses its buffers on hot paths, so one arena costs no
	 * time (bench/RESULTS.md, streaming ingest). MALLOC_ARENA_MAX overrides. */
	if (!getenv("MALLOC_ARENA_MAX"))
		(void)mallopt(M_ARENA_MAX, 1);
	/* a commit builds and drops a few MB of metadata (6.9 MB of JSON at
	 * 10,000 snapshots): keep such blocks on the heap for the next commit
	 * instead of mapping fresh zeroed pages each time (page faults were a
	 * third of a commit's CPU in bench/commit) */
	if (!getenv("MALLOC_MMAP_THRESHOLD_")) {
		(void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
		(void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
	}
#endif
	/* Global options anywhere on the line ("floe ingest ... -v"): taken out
	 * here, the rest keeps its order. (A command's option value that is
	 * spelled like a global option, "--pattern -v", is taken as the global
	 * option.) */
	char **args = floe_calloc((size_t)argc + 1, sizeof(char *));
	int n_args = 0;
	if (!args) {
		fprintf(stderr, "floe: out of memory\n");
		return 1;
	}
	bool help = false, version = false;
	for (; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **slot = !strcmp(o, "--catalog-type")   ? &g_cli.catalog_type
				    : !strcmp(o, "--catalog-uri")  ? &g_cli.catalog_uri
				    : !strcmp(o, "--catalog-name") ? &g_cli.catalog_name
				    : !strcmp(o, "--warehouse")	   ? &g_cli.warehouse
				    : !strcmp(o, "--dir")	   ? &g_cli.dir
								   : NULL;
		if (slot) {
			if (!v) {
				floe_free(args);
				return cli_usage_error("%s needs a value (see floe --help)", o);
			}
			*slot = v;
			i++;
		} else if (!strcmp(o, "-v") || !strcmp(o, "--verbose")) {
			g_cli.verbose = true;
		} else if (v && !strcmp(o, "--catalog-property")) {
			char *eq = strchr(argv[i + 1], '=');
			if (!eq || eq == argv[i + 1] ||
			    g_cli.n_catalog_props ==
				    sizeof(g_cli.catalog_props) / sizeof(g_cli.catalog_props[0])) {
				floe_free(args);
				return cli_usage_error("--catalog-property '%s': expected key=value (at "
						       "most %zu)",
						       v, sizeof(g_cli.catalog_props) /
							       sizeof(g_cli.catalog_props[0]));
			}
			*eq = 0;
			g_cli.catalog_props[g_cli.n_catalog_props++] = (floe_prop){argv[i + 1], eq + 1};
			i++;
		} else if (!strcmp(o, "-q") || !strcmp(o, "--quiet")) {
			g_cli.quiet = true; /* ingest and run read it from here too */
		} else if (!strcmp(o, "--version") && n_args == 0) {
			version = true;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			help = true;
		} else if (n_args == 0 && o[0] == '-') {
			floe_free(args);
			return cli_usage_error("unknown option '%s' (see floe --help)", o);
		} else {
			args[n_args++] = argv[i];
		}
	}
	int rc = dispatch(n_args, args, help, version);
	floe_free(args);
	return rc;
}
