/*
 * cli.h — shared pieces of the floe command: options, catalog opening,
 * output formats. The command line uses only the public API (include/floe).
 */
#ifndef FLOE_CLI_CLI_H
#define FLOE_CLI_CLI_H

#include <stdio.h>

#include "floe/floe.h"

typedef struct cli_globals {
	const char *catalog_type;
	const char *catalog_uri;
	const char *catalog_name;
	const char *warehouse;
	const char *dir; /* embedded default: where ./warehouse lives */
	/* --catalog-property k=v (repeatable) */
	floe_prop catalog_props[64];
	size_t n_catalog_props;
	bool verbose;
	bool quiet; /* -q/--quiet anywhere: no outcome line */
	/* ingest and run: the closing summary as JSON; the dead-letter share
	 * above which the run fails (default 1: only when every record is) */
	bool summary_json;
	bool wide; /* snapshots, files: long table cells in full */
	/* --format json on a command whose output is its outcome line: the
	 * outcome as one JSON object (command, outcome, its fields) */
	bool outcome_json;
	const char *command; /* "table create": the running command's name */
	double max_dead_ratio;
	bool max_dead_ratio_set;
} cli_globals;

extern cli_globals g_cli;

/* Open the configured catalog (flags, then FLOE_* environment, then the
 * embedded default). Prints the error and returns NULL on failure. */
floe_catalog *cli_open_catalog(void);
/* The same for commands that only read: the embedded default is never
 * created (a missing one is an error naming it). */
floe_catalog *cli_open_catalog_read_only(void);
/* Split "ns.table"; prints the error. */
bool cli_split(const char *ident, char **ns, char **name);
/* Print "floe: <message>" for an error and return the exit code (1). */
int cli_fail(const floe_error *err);
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Output formats for result sets. */
typedef enum { OUT_TABLE, OUT_JSON, OUT_CSV } cli_format;
bool cli_parse_format(const char *s, cli_format *out);

typedef struct cli_rows cli_rows;
cli_rows *cli_rows_new(const char *const *columns, size_t n_columns);
/* Add a row of n_columns cells (copied; NULL prints as empty / null). */
void cli_rows_add(cli_rows *r, const char *const *cells);
/* Column kinds for JSON: numbers and booleans are written unquoted. */
void cli_rows_numeric(cli_rows *r, size_t column);
/* OUT_TABLE cuts cells past 60 bytes unless g_cli.wide (--wide); a column
 * marked raw JSON is written unquoted in JSON (an object or array). */
void cli_rows_print(cli_rows *r, cli_format fmt, FILE *out);
void cli_rows_raw_json(cli_rows *r, size_t column);
void cli_rows_free(cli_rows *r);

int cli_stdout_write(const char *data, size_t n, void *payload);

/* The command table (commands.c): one entry per command and subcommand. */
typedef struct cli_command {
	const char *name;		    /* "table create" */
	int (*run)(int argc, char **argv); /* top-level commands; argv[0] is the name */
	const char *synopsis;		    /* after "usage: floe <name> " */
	const char *summary;		    /* one line */
	const char *body;		    /* options, defaults, grammars (or NULL) */
	const char *examples;		    /* "floe ..." lines, run by tests/interop/test_cli_docs.py */
	bool own_help; /* the command prints its own --help (it is passed on) */
} cli_command;
extern const cli_command cli_commands[]; /* ends with a NULL name */
extern const char cli_global_help[];
/* The entry for "name" or "name sub" (the group when sub is not one of its
 * subcommands); NULL for an unknown name. */
const cli_command *cli_find_command(const char *name, const char *sub);
void cli_print_help(const cli_command *c, FILE *out);
/* The "Examples:" section of a command that prints its own help. */
void cli_print_examples(const char *name, FILE *out);
bool cli_command_is_group(const cli_command *c); /* has subcommands */
void cli_print_usage(FILE *out);
int cmd_help(int argc, char **argv);
int cmd_completion(int argc, char **argv);

/* An outcome line on stdout ("created namespace sales"), unless --quiet;
 * with --format json one object {"command":..., "outcome": the line, fields
 * given before with cli_outcome_str/_i64}. */
void cli_outcome(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_outcome_str(const char *key, const char *value);
void cli_outcome_i64(const char *key, long long value);
void cli_outcome_table(const char *ns, const char *name); /* "table": "ns.name" */
/* s as a JSON string */
void cli_json_str(FILE *out, const char *s);
/* "0.05" into [0, 1] */
bool cli_parse_ratio(const char *s, double *out);
/* "1 file", "2 files" */
const char *cli_plural(long long n, const char *one, const char *many);

/* Commands. */
int cmd_namespace(int argc, char **argv);
int cmd_table(int argc, char **argv);
int cmd_add_files(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_inspect_table(int argc, char **argv);
int cmd_snapshots(int argc, char **argv);
int cmd_files(int argc, char **argv);
int cmd_maintain(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_pipelines(int argc, char **argv);
int cmd_branch(int argc, char **argv);
int cmd_tag(int argc, char **argv);
int cmd_cherry_pick(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_update(int argc, char **argv);
int cmd_merge(int argc, char **argv);
/* Run a pipeline (YAML text) with signals and a progress line (cmd_run.c). */
int cli_run_pipeline(const char *yaml, size_t n, const char *base_dir, bool quiet);
int floe_cli_avro(int argc, char **argv);
int floe_cli_parquet(int argc, char **argv);

#endif
