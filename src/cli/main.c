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

static const char USAGE[] =
	"usage: floe [global options] <command> [arguments]\n"
	"\n"
	"Tables and namespaces:\n"
	"  namespace create|list|show|drop ...     manage namespaces\n"
	"  table create|list|show|drop|rename|set  manage tables (table properties: every known key)\n"
	"  add-files <table> <parquet files...>    register Parquet files in one append\n"
	"  scan <table> [--where EXPR] ...         read rows: filters, time travel, incremental\n"
	"  inspect <table> <metadata-table>        snapshots, files, entries, partitions, ...\n"
	"  snapshots <table>                       list a table's snapshots\n"
	"  files <table>                           list the live files of a snapshot\n"
	"  maintain <table>                        compact, expire, delete orphans, rewrite manifests\n"
	"\n"
	"Row-level changes (write.<op>.mode: copy-on-write or merge-on-read):\n"
	"  delete <table> --where EXPR             delete rows, one snapshot\n"
	"  update <table> --set c=expr --where EXPR  update rows, one snapshot\n"
	"  merge <table> <file> --on key           upsert rows of a JSON lines/CSV file\n"
	"\n"
	"Streaming ingest:\n"
	"  ingest <table> <files or folders...>    load JSON lines or CSV (--follow: keep going)\n"
	"  run <pipeline.yaml>                     run a streaming pipeline\n"
	"\n"
	"File tools:\n"
	"  avro meta|cat|write <file>              inspect Avro files (manifests)\n"
	"  parquet meta|schema|cat|rewrite <file>  inspect and rewrite Parquet files\n"
	"\n"
	"Global options (or environment variables):\n"
	"  --catalog-type sql|filesystem           FLOE_CATALOG_TYPE (default sql)\n"
	"  --catalog-uri URI                       FLOE_CATALOG_URI  (sqlite:///path.db, postgresql://...)\n"
	"  --catalog-name NAME                     FLOE_CATALOG_NAME (default \"default\")\n"
	"  --warehouse URI                         FLOE_WAREHOUSE\n"
	"  --dir DIR                               where the embedded default lives (default .)\n"
	"  -v, --verbose                           log details to stderr\n"
	"\n"
	"With no catalog configured floe uses the embedded default: ./warehouse with\n"
	"the SQLite catalog file ./warehouse/catalog.db (PyIceberg's SqlCatalog and\n"
	"Java's JdbcCatalog open it too).\n";

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
	if (!fs && !sql)
		return cli_usage_error("%s '%s': unknown catalog type (sql or filesystem)", type.from,
				       type.value);
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
	if (uri.value || wh.value) {
		floe_catalog_config cfg = FLOE_CATALOG_CONFIG_INIT;
		cfg.type = type.value;
		cfg.uri = uri.value;
		cfg.name = name.value;
		cfg.warehouse = wh.value;
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
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--version")) {
			printf("floe %s\n", FLOE_VERSION);
			return 0;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			fputs(USAGE, stdout);
			return 0;
		} else if (!strcmp(o, "-v") || !strcmp(o, "--verbose")) {
			g_cli.verbose = true;
		} else if (v && !strcmp(o, "--catalog-type")) {
			g_cli.catalog_type = v;
			i++;
		} else if (v && !strcmp(o, "--catalog-uri")) {
			g_cli.catalog_uri = v;
			i++;
		} else if (v && !strcmp(o, "--catalog-name")) {
			g_cli.catalog_name = v;
			i++;
		} else if (v && !strcmp(o, "--warehouse")) {
			g_cli.warehouse = v;
			i++;
		} else if (v && !strcmp(o, "--dir")) {
			g_cli.dir = v;
			i++;
		} else {
			return cli_usage_error("unknown option '%s' (see floe --help)", o);
		}
	}
	floe_set_logger(log_stderr, NULL, g_cli.verbose ? FLOE_LOG_DEBUG : FLOE_LOG_WARN);
	int crc = check_catalog_options();
	if (crc)
		return crc;
	if (i >= argc) {
		fputs(USAGE, stderr);
		return 2;
	}
	const char *cmd = argv[i];
	int sub_argc = argc - i;
	char **sub_argv = argv + i;
	if (!strcmp(cmd, "help")) {
		fputs(USAGE, stdout);
		return 0;
	}
	if (!strcmp(cmd, "namespace") || !strcmp(cmd, "ns"))
		return cmd_namespace(sub_argc, sub_argv);
	if (!strcmp(cmd, "table"))
		return cmd_table(sub_argc, sub_argv);
	if (!strcmp(cmd, "add-files"))
		return cmd_add_files(sub_argc, sub_argv);
	if (!strcmp(cmd, "scan"))
		return cmd_scan(sub_argc, sub_argv);
	if (!strcmp(cmd, "inspect"))
		return cmd_inspect_table(sub_argc, sub_argv);
	if (!strcmp(cmd, "snapshots"))
		return cmd_snapshots(sub_argc, sub_argv);
	if (!strcmp(cmd, "files"))
		return cmd_files(sub_argc, sub_argv);
	if (!strcmp(cmd, "maintain"))
		return cmd_maintain(sub_argc, sub_argv);
	if (!strcmp(cmd, "delete"))
		return cmd_delete(sub_argc, sub_argv);
	if (!strcmp(cmd, "update"))
		return cmd_update(sub_argc, sub_argv);
	if (!strcmp(cmd, "merge"))
		return cmd_merge(sub_argc, sub_argv);
	if (!strcmp(cmd, "ingest"))
		return cmd_ingest(sub_argc, sub_argv);
	if (!strcmp(cmd, "run"))
		return cmd_run(sub_argc, sub_argv);
	if (!strcmp(cmd, "avro"))
		return floe_cli_avro(sub_argc, sub_argv);
	if (!strcmp(cmd, "parquet"))
		return floe_cli_parquet(sub_argc, sub_argv);
	return cli_usage_error("unknown command '%s' (see floe --help)", cmd);
}
