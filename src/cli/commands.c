/*
 * commands.c — the table of floe's commands: name, synopsis, help text and
 * examples. `floe <command> --help`, `floe help`, the main usage and the
 * shell completions are all made from it.
 *
 * DESIGN: a new command is one entry here (plus its function). A group
 * ("table") has the function; its subcommands ("table create") are entries
 * without one that carry their own help. Every line under `examples` is run
 * by tests/interop/test_cli_docs.py in its sandbox (see there), in table
 * order, so examples may build on earlier ones.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* entries leave own_help out (false) unless the command prints its own help */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const cli_command cli_commands[] = {
	/* ---- namespaces ---- */
	{"namespace", cmd_namespace, "create|list|show|set|drop ...", "manage namespaces",
	 "Alias: ns.\n", NULL},
	{"namespace create", NULL, "<ns> [--property k=v]...", "create a namespace",
	 "  --property k=v     a namespace property (repeatable)\n"
	 "Nested namespaces are dotted: a.b (the parent must exist).\n",
	 "floe namespace create sales --property owner=data-eng\n"},
	{"namespace list", NULL, "[parent]", "list namespaces (the top level, or a parent's children)",
	 NULL, "floe namespace list\n"},
	{"namespace show", NULL, "<ns>", "print a namespace's properties (k=v lines)", NULL,
	 "floe namespace show sales\n"},
	{"namespace set", NULL, "<ns> k=v... [--unset k]...", "set or remove namespace properties",
	 "  --unset k          remove a property (repeatable)\n",
	 "floe namespace set sales owner=analytics\n"},
	{"namespace drop", NULL, "<ns>", "drop an empty namespace",
	 "Fails while the namespace holds tables or namespaces.\n", "floe namespace drop sales\n"},

	/* ---- tables ---- */
	{"table", cmd_table, "create|list|show|set|alter|rename|drop|properties ...", "manage tables", NULL,
	 NULL},
	{"table create", NULL, "<ns.table> --schema COLUMNS|JSON|@FILE [options]", "create a table",
	 "  --schema S           a column list, Iceberg schema JSON, or @file with either\n"
	 "  --partition SPEC     partition spec (also --partition-by); default unpartitioned\n"
	 "  --sort ORDER         sort order (also --sort-by); default unsorted\n"
	 "  --property k=v       table property (repeatable; see floe table properties)\n"
	 "  --format-version N   1, 2 or 3 (default 2)\n"
	 "  --location URI       default <warehouse>/<ns>/<table>\n"
	 "\n"
	 "Column list:  name type [not null] [comment '...'], comma-separated.\n"
	 "  types: boolean int long float double decimal(P, S) date time timestamp\n"
	 "         timestamptz timestamp_ns timestamptz_ns (v3) string uuid fixed[L] binary\n"
	 "         list<T> map<K, V> struct<name: T, ...>; SQL aliases bigint integer\n"
	 "         varchar text bool bytes real\n"
	 "Partition spec: comma-separated terms: col | identity(col) | year(col) |\n"
	 "  month(col) | day(col) | hour(col) | bucket(N, col) | truncate(W, col) | void(col)\n"
	 "Sort order: comma-separated terms: term [asc|desc] [nulls first|nulls last],\n"
	 "  where a term is a column or a transform as above (default asc, nulls first\n"
	 "  for asc and nulls last for desc)\n",
	 "floe table create db.clicks --schema \"id long not null, ts timestamptz, user string\" "
	 "--partition \"day(ts), bucket(16, id)\" --sort \"ts desc nulls last\"\n"
	 "floe table create db.tiny --schema \"k string, v int\" --format-version 3 --property "
	 "write.parquet.compression-codec=snappy\n"},
	{"table list", NULL, "[ns]", "list tables (of one namespace, or of all)", NULL,
	 "floe table list\nfloe table list db\n"},
	{"table show", NULL, "<ns.table> [--format text|json]",
	 "describe a table: schema, spec, sort order, properties, current snapshot",
	 "  --format json        the table's metadata JSON (also --json)\n",
	 "floe table show db.events\nfloe table show db.events --format json\n"},
	{"table set", NULL, "<ns.table> k=v... [--unset k]...", "set or remove table properties",
	 "  --unset k            remove a property (repeatable)\n"
	 "  format-version=N     upgrades the table (1 -> 2 -> 3; downgrades are refused)\n"
	 "Known keys are validated (floe table properties lists them).\n",
	 "floe table set db.clicks write.metadata.previous-versions-max=20\n"
	 "floe table set db.clicks --unset write.metadata.previous-versions-max\n"},
	{"table alter", NULL, "<ns.table> CHANGE...",
	 "evolve a table's schema, partitioning and write order (one commit)",
	 "  --add-column PATH TYPE    add an optional column; PATH a.b.c adds inside struct a.b\n"
	 "                            (a list's struct is xs.element, a map's m.value); TYPE as\n"
	 "                            in table create, nested types too\n"
	 "  --doc TEXT                the doc of the column added just before\n"
	 "  --widen PATH TYPE         widen a type: int -> long, float -> double,\n"
	 "                            decimal(P,S) -> decimal(P2,S) with P2 > P; v3 also\n"
	 "                            date -> timestamp (also --update-type)\n"
	 "  --make-optional PATH      a required column becomes optional (also\n"
	 "                            --drop-not-null; identifier fields stay required)\n"
	 "  --add-partition EXPR      add partition fields (bucket(16, id), day(ts), ...)\n"
	 "  --drop-partition FIELD    drop a partition field, by name (id_bucket) or\n"
	 "                            expression (v1 tables: it becomes void)\n"
	 "  --replace-partition FIELD EXPR   drop FIELD and add EXPR\n"
	 "  --write-order ORDER       the table's sort order (\"id desc nulls last\",\n"
	 "                            \"unsorted\"; also --sort)\n"
	 "Changes apply in order and commit together, or not at all: each is validated on\n"
	 "the table's current metadata (again after a lost race) and a refused one names\n"
	 "the field. Columns are never dropped, renamed or narrowed; existing files are\n"
	 "not rewritten (readers see null in an added column, promote widened ones).\n",
	 "floe table alter db.clicks --add-column referrer string --add-column geo "
	 "\"struct<lat: double, lon: double>\" --doc \"where the click came from\"\n"
	 "floe table alter db.clicks --add-column geo.alt float --make-optional id\n"
	 "floe table alter db.clicks --widen geo.alt double\n"
	 "floe table alter db.clicks --replace-partition id_bucket \"bucket(32, id)\" "
	 "--add-partition \"truncate(4, user)\" --write-order \"ts desc nulls last, id\"\n"
	 "floe table alter db.clicks --drop-partition user_trunc --write-order unsorted\n"},
	{"table properties", NULL, "[--format markdown|json]",
	 "every table property floe knows, with type, default and whether it is honoured", NULL,
	 "floe table properties --format json\n"},
	{"table rename", NULL, "<from ns.table> <to ns.table>", "rename a table (SQL catalogs)", NULL,
	 "floe table rename db.tiny db.tiny_v1\n"},
	{"table drop", NULL, "<ns.table> [--purge [--purge-external-files]]", "drop a table",
	 "  --purge              also delete every file the table references; refused when\n"
	 "                       some lie outside the table location (add-files of your own\n"
	 "                       files: Java's purge deletes those too)\n"
	 "  --purge-external-files   purge, and delete those outside files as well\n"
	 "Without --purge the files stay (the catalog entry goes).\n",
	 "floe table drop db.tiny_v1 --purge\n"},

	/* ---- writing and reading ---- */
	{"add-files", cmd_add_files, "<ns.table> <file.parquet>... [--summary k=v]...",
	 "register Parquet files in one append",
	 "  --summary k=v        extra snapshot summary entry (repeatable)\n"
	 "The files stay where they are; their schema must map to the table's.\n",
	 "floe add-files db.events events.parquet\n"},
	{"scan", cmd_scan, "<table|path> [options]",
	 "read rows: filters, time travel, incremental reads",
	 "  --where EXPR             filter, SQL syntax: \"id >= 10 AND s IN ('a', 'b')\"\n"
	 "  --columns a,b.c,_file    columns (dotted names for nested fields; _file, _pos,\n"
	 "                           _spec_id, _row_id, _last_updated_sequence_number)\n"
	 "  --snapshot-id ID | --as-of TIME | --branch B | --tag T   time travel\n"
	 "                           (TIME: epoch milliseconds or 2024-01-01T10:00:00[Z])\n"
	 "  --consistent-with T[@C]  read the table at the checkpoint of the pipeline it\n"
	 "                           shares with table T: C, or the newest both have\n"
	 "                           committed (-v names the snapshot read)\n"
	 "  --format csv|json|table|parquet   output (json = JSON lines; default csv)\n"
	 "  --wide                   table format: do not shorten long cells\n"
	 "  --output FILE            write to FILE (required for parquet)\n"
	 "  --limit N                at most N rows\n"
	 "  --count                  print the number of rows only\n"
	 "  --explain                print the plan (files, deletes, residual filters)\n"
	 "  --ignore-case            match column names case-insensitively\n"
	 "  --stats                  after the rows, print what was read to stderr (files,\n"
	 "                           row groups read and skipped by statistics, rows)\n"
	 "  --no-row-group-pruning   read every row group of each planned file\n"
	 "  --verify-checksums       check the CRC-32 of every Parquet page that has one;\n"
	 "                           a damaged page fails the scan (default: not checked)\n"
	 "  --threads N              planning threads (default: one per CPU)\n"
	 "  --incremental --from latest|earliest|snapshot:ID|timestamp:TIME|table\n"
	 "                           appended rows only (Flink's starting strategies)\n"
	 "  --to ID                  last snapshot of an incremental read (default: current)\n"
	 "  --follow [--interval 60s] [--polls N]   keep polling for appended snapshots\n"
	 "  --skip-overwrites        skip overwrite/delete snapshots instead of failing\n"
	 "  --path-map FROM=TO       relocate recorded paths of a path table (repeatable)\n"
	 "  --changelog [--from S1] [--to S2]   the changes of each snapshot in (S1, S2] with\n"
	 "                           Spark's columns _change_type, _change_ordinal,\n"
	 "                           _commit_snapshot_id (S: ID, timestamp:TIME, tag:NAME,\n"
	 "                           branch:NAME, earliest; default: all, up to current);\n"
	 "                           equality, position deletes and DVs count as DELETEs\n"
	 "  --identifier-columns a,b   changelog: pair a key's DELETE and INSERT of one commit\n"
	 "                           as UPDATE_BEFORE/UPDATE_AFTER (default: the schema's\n"
	 "                           identifier fields); --no-updates: never\n"
	 "  --changelog --follow [--position-file F] [--output FILE]   stream each new\n"
	 "                           commit's changes once; F keeps the position (and cuts\n"
	 "                           FILE back to it on restart)\n"
	 "A table is a catalog name (db.events) or a path: a table folder or a metadata file.\n",
	 "floe scan db.events --where \"kind = 'click' AND amount > 1\" --columns id,ts,kind\n"
	 "floe scan db.events --as-of 2030-01-01T00:00:00Z --count\n"
	 "floe scan db.events --explain --where \"id = 42\"\n"
	 "floe scan db.events --format parquet --output out.parquet\n"
	 "floe scan db.events --incremental --from earliest --limit 10 --format json\n"
	 "floe scan db.events --changelog --from earliest --format json\n"},
	{"inspect", cmd_inspect_table, "<table|path> <metadata-table> [options]",
	 "metadata tables as PyIceberg's inspect and Spark show them",
	 "  --format table|json|csv  default table\n"
	 "  --wide                   table format: do not shorten long cells\n"
	 "  --snapshot-id ID         files and entries of this snapshot\n"
	 "  --path-map FROM=TO       relocate recorded paths of a path table (repeatable)\n"
	 "Metadata tables: snapshots, history, refs, metadata_log_entries, manifests,\n"
	 "  files, data_files, delete_files, entries, partitions, position_deletes,\n"
	 "  all_manifests, all_files, all_data_files, all_delete_files, all_entries\n",
	 "floe inspect db.events snapshots\nfloe inspect db.events partitions --format json\n"},
	{"snapshots", cmd_snapshots, "<ns.table> [--format table|json|csv] [--wide]",
	 "list a table's snapshots",
	 "  --format table|json|csv  default table (summary shortened unless --wide)\n"
	 "  --wide                   table format: do not shorten long cells\n",
	 "floe snapshots db.events\nfloe snapshots db.events --format json\n"},
	{"files", cmd_files, "<ns.table> [--snapshot-id ID] [--format table|json|csv] [--wide]",
	 "list the live files of a snapshot (default the current one)",
	 "  --snapshot-id ID         default the current snapshot\n"
	 "  --format table|json|csv  default table\n"
	 "  --wide                   table format: do not shorten long cells\n",
	 "floe files db.events\nfloe files db.events --format csv\n"},
	{"maintain", cmd_maintain, "<ns.table> [options]",
	 "compact, expire snapshots, delete orphans, rewrite manifests",
	 "Runs compact -> expire -> orphans -> manifests (never in another order)\n"
	 "under the table's maintenance lock.\n"
	 "  --steps LIST               which steps, e.g. expire,orphans (default: all);\n"
	 "                             convert-deletes (equality deletes -> DVs, no data\n"
	 "                             rewritten) runs first and only when listed\n"
	 "  --skip LIST                all steps but these\n"
	 "  --dry-run                  plan and report; change nothing\n"
	 "  --format table|json        the summary's format (default table)\n"
	 "compact:\n"
	 "  --target-file-size SIZE    default write.target-file-size-bytes (512MB)\n"
	 "  --min-file-size SIZE       smaller files are rewritten (75% of the target)\n"
	 "  --max-file-size SIZE       larger files are split (180% of the target)\n"
	 "  --min-input-files N        smallest group worth rewriting (5)\n"
	 "  --branch NAME              compact this branch (default main; expiry and\n"
	 "                             orphans always keep what any branch or tag reaches)\n"
	 "  --delete-file-threshold N  files with this many deletes attached are rewritten (1)\n"
	 "  --max-bytes SIZE           read at most this much per run\n"
	 "  --max-commits N            commit group by group, at most N commits\n"
	 "  --sort                     sort rows by the table's sort order\n"
	 "expire:\n"
	 "  --older-than DURATION      expire snapshots older than this "
	 "(history.expire.max-snapshot-age-ms, 5d)\n"
	 "  --retain-last N            keep at least N snapshots per branch "
	 "(history.expire.min-snapshots-to-keep, 1)\n"
	 "  --delete-batch N           files deleted per batch when cleaning up (1000)\n"
	 "orphans:\n"
	 "  --orphan-older-than DURATION  only files older than this (3d)\n"
	 "manifests:\n"
	 "  --manifest-target-size SIZE   default commit.manifest.target-size-bytes (8MB)\n"
	 "lock:\n"
	 "  --lock-uri URI             the lock database (default: the catalog's)\n"
	 "  --lock-id ID               default <catalog>.<namespace>.<table>\n"
	 "  --break-lock               remove the table's lock (a dead Java holder) and exit\n",
	 "floe maintain db.events --dry-run --format json\n"
	 "floe maintain db.events --steps compact --target-file-size 128MB\n"
	 "floe maintain db.events --steps convert-deletes,compact\n"},

	/* ---- row-level changes ---- */
	{"delete", cmd_delete, "<ns.table> --where EXPR [options]",
	 "delete rows in one snapshot (write.delete.mode: copy-on-write or merge-on-read)",
	 "Deletes the rows where EXPR is true (floe scan's filter syntax; 'true'\n"
	 "deletes every row) in one snapshot: copy-on-write rewrites the affected\n"
	 "data files, merge-on-read adds position deletes (v2) or deletion vectors (v3).\n"
	 "  --mode copy-on-write|merge-on-read   override write.delete.mode\n"
	 "  --isolation serializable|snapshot    override write.delete.isolation-level\n"
	 "  --dry-run                 list the affected files and rows; change nothing\n"
	 "  --ignore-case             match column names case-insensitively\n"
	 "  --format table|json       the outcome's format (default: one line)\n",
	 "floe delete db.events --where \"kind = 'click' AND id < 10\" --dry-run\n"},
	{"update", cmd_update, "<ns.table> --set col=expr [--set ...] --where EXPR [options]",
	 "update rows in one snapshot (write.update.mode)",
	 "Sets columns of the rows where EXPR is true, in one snapshot. expr: a\n"
	 "literal (42, 'text', NULL, DATE '2024-01-01'), a column, or a\n"
	 "column/literal +, -, * column/literal on numeric columns.\n"
	 "  --mode copy-on-write|merge-on-read   override write.update.mode\n"
	 "  --isolation serializable|snapshot    override write.update.isolation-level\n"
	 "  --dry-run                 list the affected files and rows; change nothing\n"
	 "  --ignore-case             match column names case-insensitively\n"
	 "  --format table|json       the outcome's format (default: one line)\n",
	 "floe update db.events --set \"kind='view'\" --where \"id = 1\" --dry-run\n"},
	{"merge", cmd_merge, "<ns.table> <file> --on key[,key...] [options]",
	 "upsert the rows of a JSON lines or CSV file in one snapshot (write.merge.mode)",
	 "Upserts the rows of <file> (JSON lines, or CSV with a header) in one\n"
	 "snapshot: a row whose key matches a table row replaces it, the others\n"
	 "are inserted. A key twice in the file is an error.\n"
	 "  --source-format json|csv  default: by the file's extension\n"
	 "  --mode copy-on-write|merge-on-read   override write.merge.mode\n"
	 "  --isolation serializable|snapshot    override write.merge.isolation-level\n"
	 "  --dry-run                 list the affected files and rows; change nothing\n"
	 "  --ignore-case             match column names case-insensitively\n"
	 "  --format table|json       the outcome's format (default: one line)\n",
	 "floe merge db.events events.jsonl --on id --dry-run\n"},

	/* ---- streaming ---- */
	{"ingest", cmd_ingest, "<ns.table> <files or folders...|-> [options]",
	 "load JSON lines or CSV (--follow: keep going; --generator: generated rows)",
	 "Loads records into a table with exactly-once checkpoint commits. Running the\n"
	 "same command again resumes where the last commit stopped (the pipeline id,\n"
	 "ingest-<table>-<hash of the inputs> unless --pipeline-id, names the commits:\n"
	 "the same inputs resume, other inputs load on their own).\n"
	 "Input:\n"
	 "  --format json|csv|debezium-json record format (default: from the file\n"
	 "                                  extension, .csv is CSV; otherwise JSON lines;\n"
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
	 "                                  (an existing table keeps its own schema)\n"
	 "  --unknown-fields drop|evolve|dead-letter   fields the table lacks: skipped\n"
	 "                                  (default), added (evolve: also widens numbers,\n"
	 "                                  relaxes absent required fields), dead letter\n"
	 "  --partition-by EXPR  --sort-by EXPR  --format-version N\n"
	 "  --property KEY=VALUE            table property at creation (repeatable)\n"
	 "  --filter EXPR                   only rows that match (\"kind = 'click'\")\n"
	 "Upserts (Flink's upsert mode; also on with write.upsert.enabled=true):\n"
	 "  --upsert                        each row replaces the row of its key\n"
	 "  --equality-fields A,B           the key (default: the schema's identifier\n"
	 "                                  fields); must include the partition columns\n"
	 "Overwrite and branches:\n"
	 "  --overwrite             replace the partitions the input touches\n"
	 "  --overwrite-where EXPR  replace the rows EXPR selects (by partition)\n"
	 "  --branch NAME           commit to branch NAME (made from main)\n"
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
	 "  --max-dead-letter-ratio R       fail (exit 1) when more than this share of the\n"
	 "                                  records read is dead-lettered (default: fail\n"
	 "                                  only when every record is; 1: never fail)\n"
	 "  --metrics-port N                Prometheus metrics on this port (127.0.0.1)\n"
	 "  --metrics-bind HOST:PORT        the same on another address (0.0.0.0:9249)\n"
	 "  --quiet                         no progress line or summary\n"
	 "  --summary text|json             the closing summary: one line on stderr\n"
	 "                                  (default), or one JSON object on stdout\n"
	 "  --print-config                  print the pipeline YAML instead of running it\n",
	 "floe ingest db.events events.jsonl --pipeline-id doc-example\n"
	 "floe ingest db.orders orders.csv --create-schema \"id long, customer string, total "
	 "double\"\n"
	 "floe ingest db.gen --generator --number-of-rows 1000 --create-schema \"id long, ts "
	 "timestamptz\" --field id.kind=sequence\n"
	 "floe ingest db.events events.jsonl --pipeline-id doc-evolve --unknown-fields evolve\n"},
	{"run", cmd_run, "<pipeline.yaml> [--check] [--quiet]", "run a streaming pipeline",
	 "  --check              validate the file and exit\n"
	 "  --quiet              no progress line or summary\n"
	 "  --summary text|json  the closing summary: a line on stderr, or JSON on stdout\n"
	 "  --max-dead-letter-ratio R   fail (exit 1) when more than this share of the\n"
	 "                       records is dead-lettered (default: only when all are)\n"
	 "  --help-config        every configuration key\n"
	 "Sources (files, folders, stdin, a generator) go into Iceberg tables, one\n"
	 "snapshot per table per checkpoint, exactly once across restarts (the tables\n"
	 "hold the committed offsets). SIGTERM or Ctrl-C finishes the current\n"
	 "checkpoint and exits; a second one exits at once.\n",
	 "floe run pipeline.yaml --check\nfloe run pipeline.yaml\n"},

	{"pipelines", cmd_pipelines, "list|forget ...",
	 "the pipelines whose state (committed offsets) a table holds",
	 "Each pipeline's newest snapshot holds its committed offsets; a restart\n"
	 "resumes there, and expiry keeps that snapshot: while the pipeline may resume\n"
	 "(until forgotten), and for history.expire.keep-pipeline-state-for (7d) after\n"
	 "a one-shot load that read all its input. Every floe ingest without\n"
	 "--pipeline-id is a pipeline of its own.\n",
	 NULL},
	{"pipelines list", NULL, "<ns.table> [--format table|json|csv] [--wide]",
	 "pipeline id, last checkpoint, last commit, offsets, and whether expiry holds it",
	 "  --format table|json|csv  default table\n"
	 "  --wide                   table format: do not shorten long cells\n",
	 "floe pipelines list db.events\n"},
	{"pipelines forget", NULL, "<ns.table> <pipeline-id>",
	 "forget a pipeline's state: a re-run of it starts from nothing, expiry may drop it",
	 NULL, "floe pipelines forget db.events doc-example\n"},

	/* ---- branches, tags, write-audit-publish ---- */
	{"branch", cmd_branch, "create|drop|fast-forward|replace ...",
	 "manage branches (write-audit-publish: stage on a branch, then publish)",
	 "A pipeline or floe ingest --branch writes to a branch; fast-forward main to\n"
	 "it to publish. floe inspect <table> refs lists branches and tags; floe scan\n"
	 "--branch reads one. Expiry keeps each branch's retention.\n",
	 NULL},
	{"branch create", NULL, "<ns.table> <name> [--snapshot ID | --from REF] [retention]",
	 "create a branch at main's head (or a snapshot, or another ref's head)",
	 "  --snapshot ID               the snapshot it points at\n"
	 "  --from REF                  the head of this branch or tag\n"
	 "  --min-snapshots-to-keep N   expiry keeps this many of its snapshots\n"
	 "  --max-snapshot-age-ms MS    and those younger than this\n"
	 "  --max-ref-age-ms MS         expiry drops the branch when its head is older\n",
	 "floe branch create db.events audit --min-snapshots-to-keep 5\n"},
	{"branch fast-forward", NULL, "<ns.table> <branch> <to-ref>",
	 "move a branch to another ref's head (its head must be an ancestor of it)", NULL,
	 "floe branch fast-forward db.events main audit\n"},
	{"branch replace", NULL, "<ns.table> <branch> --snapshot ID | --from REF",
	 "point a branch at any snapshot (its retention is kept)", NULL,
	 "floe branch replace db.events audit --from main\n"},
	{"branch drop", NULL, "<ns.table> <branch>", "drop a branch (never main)", NULL,
	 "floe branch drop db.events audit\n"},
	{"tag", cmd_tag, "create|drop ...", "manage tags (named snapshots)",
	 "Expiry keeps a tag's snapshot until the tag is older than its\n"
	 "max-ref-age-ms (then the tag goes).\n",
	 NULL},
	{"tag create", NULL, "<ns.table> <name> [--snapshot ID | --from REF] [--max-ref-age-ms MS]",
	 "tag main's head (or a snapshot, or a ref's head)",
	 "  --snapshot ID          the snapshot it names\n"
	 "  --from REF             the head of this branch or tag\n"
	 "  --max-ref-age-ms MS    expiry drops the tag when its snapshot is older\n",
	 "floe tag create db.events v1 --max-ref-age-ms 604800000\n"},
	{"tag drop", NULL, "<ns.table> <name>", "drop a tag", NULL, "floe tag drop db.events v1\n"},
	{"cherry-pick", cmd_cherry_pick, "<ns.table> <snapshot-id> [--branch B]",
	 "publish one staged snapshot onto main (or branch B)",
	 "A snapshot whose parent is the branch's head is fast-forwarded to; an append\n"
	 "is applied again as a new append (summary source-snapshot-id), once; so is a\n"
	 "dynamic (replace-partitions) overwrite whose parent is in the branch, when no\n"
	 "partition it replaced changed since; other operations need the branch not to\n"
	 "have moved since their parent (Java's CherryPickOperation).\n"
	 "  --branch B    the branch to publish onto (default main)\n",
	 "floe ingest db.events events.jsonl --branch pick --pipeline-id doc-pick --quiet\n"
	 "floe cherry-pick db.events \"$(floe inspect db.events refs --format csv | grep '^pick,' | "
	 "cut -d, -f3)\"\n"},

	{"doctor", cmd_doctor, "[<ns.table> | <namespace> | --all] [options]",
	 "health checks; exit 0 ok, 1 warn, 2 critical", NULL,
	 "floe doctor db.events\nfloe doctor db --format json --no-storage\n", true},
	{"plan", cmd_plan, "<pipeline.yaml | job.sql> [workload] [prices] [--format text|json]",
	 "predict files, snapshots, cost; lint anti-patterns", NULL,
	 "floe plan pipeline.yaml\nfloe plan pipeline.yaml --rate 50000/s --partitions 24 --days 30\n"
	 "floe plan job.sql --partitions 10 --format json\n",
	 true},
	{"sql", cmd_sql, "-f job.sql | -e 'SQL'", "Flink SQL: catalogs, DDL, INSERT jobs, SELECT",
	 NULL,
	 "floe sql -e 'SHOW DATABASES'\n"
	 "floe sql -e 'SELECT kind, count(*) AS n, sum(amount) AS total FROM db.events GROUP BY kind "
	 "ORDER BY n DESC'\n",
	 true},

	/* ---- file tools ---- */
	{"avro", floe_cli_avro, "meta|cat|write ...", "inspect and write Avro files (manifests)", NULL,
	 NULL},
	{"avro meta", NULL, "<file>...", "header, codec, blocks and metadata as JSON", NULL,
	 "floe avro meta warehouse/db/events/metadata/snap-*.avro\n"},
	{"avro cat", NULL, "<file>...", "records as JSON lines", NULL,
	 "floe avro cat warehouse/db/events/metadata/snap-*.avro\n"},
	{"avro write", NULL,
	 "[--codec C] [--level N] [--block-bytes N] [--meta K=V]... <schema.json> <records.jsonl> "
	 "<out.avro>",
	 "write JSON lines as an Avro container file",
	 "  --codec C            null, deflate, snappy or zstd (default deflate)\n"
	 "  --level N            compression level\n"
	 "  --block-bytes N      bytes per block\n"
	 "  --meta K=V           file metadata (repeatable)\n",
	 "floe avro write schema.avsc records.jsonl out.avro\n"},
	{"parquet", floe_cli_parquet, "meta|schema|cat|rewrite ...", "inspect and rewrite Parquet files",
	 NULL, NULL},
	{"parquet meta", NULL, "<file>", "the footer as JSON", NULL, "floe parquet meta events.parquet\n"},
	{"parquet schema", NULL, "<file>", "the schema in message form, with field ids", NULL,
	 "floe parquet schema events.parquet\n"},
	{"parquet cat", NULL, "[options] <file>", "rows as JSON lines",
	 "  --columns a,b.c      only these columns\n"
	 "  --limit N            at most N rows\n"
	 "  --row-groups 0,1     only these row groups\n"
	 "  --verify-crc         check page checksums\n"
	 "  --int96-us           INT96 timestamps as microseconds\n"
	 "  --batch-rows N       rows decoded at a time\n",
	 "floe parquet cat --limit 5 events.parquet\n"},
	{"parquet rewrite", NULL, "[options] <in> <out>",
	 "read every row and write it again with floe's writer",
	 "  --codec zstd|snappy|gzip|brotli|lz4_raw|uncompressed\n"
	 "  --level N  --page-version 1|2  --no-dictionary\n"
	 "  --row-group-bytes N  --row-group-rows N  --page-bytes N  --page-rows N\n"
	 "  --dict-bytes N  --batch-rows N\n",
	 "floe parquet rewrite --codec snappy events.parquet rewritten.parquet\n"},

	/* ---- the command line itself ---- */
	{"help", cmd_help, "[command [subcommand]] | --list | --man", "this text, or a command's help",
	 "  --list               every command and subcommand, one a line\n"
	 "  --man                the manual page floe(1), in roff (cmake --install puts it\n"
	 "                       in share/man/man1/floe.1)\n",
	 "floe help table create\n"},
	{"completion", cmd_completion, "bash|zsh", "print a shell completion script",
	 "  bash: source <(floe completion bash), or save it in\n"
	 "        ~/.local/share/bash-completion/completions/floe\n"
	 "  zsh:  floe completion zsh > \"${fpath[1]}/_floe\"\n",
	 "floe completion bash\nfloe completion zsh\n"},
	{NULL, NULL, NULL, NULL, NULL, NULL, false},
};
#pragma GCC diagnostic pop

const char cli_global_help[] =
	"Global options (anywhere on the line; or environment variables):\n"
	"  --catalog-type sql|filesystem  FLOE_CATALOG_TYPE (default sql)\n"
	"  --catalog-uri URI              FLOE_CATALOG_URI  (sqlite:///path.db, postgresql://...)\n"
	"  --catalog-name NAME            FLOE_CATALOG_NAME (default \"default\")\n"
	"  --warehouse URI                FLOE_WAREHOUSE\n"
	"  --dir DIR                      where the embedded default lives (default .)\n"
	"  -v, --verbose                  log details to stderr\n"
	"  -q, --quiet                    print no outcome line (errors still go to stderr)\n"
	"  --format json                  on commands that print only their outcome (namespace\n"
	"                                 and table create/set/drop, table rename, add-files,\n"
	"                                 pipelines forget): the outcome as one JSON object\n"
	"  -h, --help                     help (floe <command> --help for a command)\n"
	"  --version                      version, git commit and linked libraries\n";

const cli_command *cli_find_command(const char *name, const char *sub)
{
	const cli_command *top = NULL;
	if (!name)
		return NULL;
	if (!strcmp(name, "ns"))
		name = "namespace";
	for (const cli_command *c = cli_commands; c->name; c++) {
		if (!strcmp(c->name, name))
			top = c;
	}
	if (!top || !sub)
		return top;
	if (!strcmp(top->name, "table") && !strcmp(sub, "describe"))
		sub = "show";
	size_t n = strlen(top->name);
	for (const cli_command *c = cli_commands; c->name; c++)
		if (!strncmp(c->name, top->name, n) && c->name[n] == ' ' && !strcmp(c->name + n + 1, sub))
			return c;
	return top;
}

bool cli_command_is_group(const cli_command *c)
{
	size_t n = strlen(c->name);
	for (const cli_command *s = cli_commands; s->name; s++)
		if (!strncmp(s->name, c->name, n) && s->name[n] == ' ')
			return true;
	return false;
}

static void print_examples(const char *examples, FILE *out)
{
	fprintf(out, "\nExamples:\n");
	for (const char *p = examples; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		fprintf(out, "  %.*s\n", (int)len, p);
		p += len + (nl != NULL);
	}
}

void cli_print_examples(const char *name, FILE *out)
{
	const cli_command *c = cli_find_command(name, NULL);
	if (c && c->examples)
		print_examples(c->examples, out);
}

void cli_print_help(const cli_command *c, FILE *out)
{
	fprintf(out, "usage: floe %s %s\n\n%s\n", c->name, c->synopsis, c->summary);
	if (c->body)
		fprintf(out, "\n%s", c->body);
	if (cli_command_is_group(c)) {
		size_t n = strlen(c->name);
		fprintf(out, "\nCommands:\n");
		for (const cli_command *s = cli_commands; s->name; s++)
			if (!strncmp(s->name, c->name, n) && s->name[n] == ' ')
				fprintf(out, "  floe %-18s %s\n", s->name, s->summary);
		fprintf(out, "\nfloe %s <command> --help for a command's options.\n", c->name);
	}
	if (c->examples)
		print_examples(c->examples, out);
	fprintf(out, "\nGlobal options (--dir, --catalog-uri, -v, ...): floe --help.\n");
}

void cli_print_usage(FILE *out)
{
	fprintf(out, "usage: floe [global options] <command> [arguments]\n\nCommands:\n");
	for (const cli_command *c = cli_commands; c->name; c++) {
		if (!c->run)
			continue;
		if (!cli_command_is_group(c)) {
			fprintf(out, "  %-12s %s\n", c->name, c->summary);
			continue;
		}
		size_t n = strlen(c->name);
		fprintf(out, "  %-12s %s:", c->name, c->summary);
		for (const cli_command *s = cli_commands; s->name; s++)
			if (!strncmp(s->name, c->name, n) && s->name[n] == ' ')
				fprintf(out, " %s", s->name + n + 1);
		fputc('\n', out);
	}
	fprintf(out, "\nfloe <command> --help (or floe help <command>) for a command's options and "
		     "examples.\n\n%s\n"
		     "With no catalog configured floe uses the embedded default: ./warehouse with\n"
		     "the SQLite catalog file ./warehouse/catalog.db (PyIceberg's SqlCatalog and\n"
		     "Java's JdbcCatalog open it too).\n",
		cli_global_help);
}

/* ---- the manual page: floe(1) in roff, made from the same table ---- */

/* text as roff: backslashes escaped, '-' as \-, a line starting with '.' or
 * '\'' guarded so it is not read as a request */
static void roff_text(FILE *out, const char *p, size_t len)
{
	bool bol = true;
	for (size_t i = 0; i < len; i++) {
		char ch = p[i];
		if (bol && (ch == '.' || ch == '\''))
			fputs("\\&", out);
		if (ch == '\\')
			fputs("\\e", out);
		else if (ch == '-')
			fputs("\\-", out);
		else
			fputc(ch, out);
		bol = ch == '\n';
	}
}

static void roff_str(FILE *out, const char *s)
{
	roff_text(out, s, strlen(s));
}

/* a preformatted block (option lists, examples) */
static void roff_block(FILE *out, const char *text, const char *indent)
{
	fputs(".nf\n", out);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		fputs(indent, out);
		roff_text(out, p, len);
		fputc('\n', out);
		p += len + (nl != NULL);
	}
	fputs(".fi\n", out);
}

static int print_man(FILE *out)
{
	fprintf(
	    out,
	    ".\\\" floe(1), generated by floe help --man from the command table\n"
	    ".TH FLOE 1 \"\" \"floe %s\" \"floe manual\"\n"
	    ".SH NAME\nfloe \\- stream records into Apache Iceberg tables, read and maintain "
	    "them\n"
	    ".SH SYNOPSIS\n.B floe\n[global options]\n.I command\n[arguments]\n"
	    ".SH DESCRIPTION\n"
	    "floe loads files, standard input, generated rows, Kafka and Kinesis into Iceberg\n"
	    "tables with exactly-once checkpoint commits (appends and upserts), reads them back,\n"
	    "and maintains them. With no catalog configured it uses the embedded default:\n"
	    "\\&./warehouse with the SQLite catalog file ./warehouse/catalog.db.\n"
	    ".SH GLOBAL OPTIONS\n",
	    FLOE_VERSION);
	const char *g = strchr(cli_global_help, '\n'); /* after the heading line */
	roff_block(out, g ? g + 1 : cli_global_help, "");
	fputs(".SH COMMANDS\n", out);
	for (const cli_command *c = cli_commands; c->name; c++) {
		fputs(".SS \"floe ", out);
		roff_str(out, c->name);
		fputs("\"\n.B floe ", out);
		roff_str(out, c->name);
		fputc('\n', out);
		roff_str(out, c->synopsis);
		fputs("\n.br\n", out);
		roff_str(out, c->summary);
		fputc('\n', out);
		if (c->body)
			roff_block(out, c->body, "");
		if (c->own_help) {
			fputs(".PP\nIts options and examples: \\fBfloe ", out);
			roff_str(out, c->name);
			fputs(" \\-\\-help\\fR.\n", out);
		}
		if (c->examples) {
			fputs(".PP\nExamples:\n", out);
			roff_block(out, c->examples, "  ");
		}
	}
	fputs(".SH EXIT STATUS\n0 on success; 1 when the command failed (the reason is on "
	      "standard error);\n2 for a usage error. floe doctor: 0 ok, 1 warnings, 2 critical.\n"
	      ".SH FILES\n.TP\n\\&./warehouse/catalog.db\nthe embedded SQLite catalog (the "
	      "default)\n"
	      ".SH SEE ALSO\nThe documentation in docs/ of the source tree: architecture, "
	      "configuration,\noperations, SQL.\n",
	      out);
	return ferror(out) ? 1 : 0;
}

int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		cli_print_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--man"))
		return print_man(stdout);
	if (!strcmp(argv[1], "--list")) {
		/* every command and subcommand, one a line (tests, completion) */
		for (const cli_command *c = cli_commands; c->name; c++)
			printf("%s\n", c->name);
		return 0;
	}
	const cli_command *c = cli_find_command(argv[1], argc > 2 ? argv[2] : NULL);
	if (!c)
		return cli_usage_error("unknown command '%s' (see floe --help)", argv[1]);
	cli_print_help(c, stdout);
	return 0;
}

/* The options a command's help mentions ("--where", "--format"), for completion. */
static void print_options(const cli_command *c, FILE *out)
{
	const char *texts[2] = {c->synopsis, c->body};
	char seen[4096] = " ";
	size_t used = 1;
	for (int k = 0; k < 2; k++) {
		for (const char *p = texts[k]; p && (p = strstr(p, "--"));) {
			const char *e = p + 2;
			while ((*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9') || *e == '-')
				e++;
			size_t len = (size_t)(e - p);
			char word[64];
			if (len > 2 && len < sizeof(word) - 2) {
				snprintf(word, sizeof(word), "%.*s ", (int)len, p);
				char key[68];
				snprintf(key, sizeof(key), " %s", word);
				if (!strstr(seen, key) && used + len + 2 < sizeof(seen)) {
					memcpy(seen + used, word, len + 1);
					used += len + 1;
					seen[used] = 0;
					fputs(word, out);
				}
			}
			p = e;
		}
	}
}

int cmd_completion(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "bash") && strcmp(argv[1], "zsh")))
		return cli_usage_error("usage: floe completion bash|zsh");
	bool zsh = !strcmp(argv[1], "zsh");
	if (zsh)
		printf("#compdef floe\n# floe completion zsh (generated by floe %s)\n"
		       "autoload -U +X bashcompinit && bashcompinit\n",
		       FLOE_VERSION);
	else
		printf("# floe completion bash (generated by floe %s)\n", FLOE_VERSION);
	printf("_floe() {\n"
	       "  local cur=${COMP_WORDS[COMP_CWORD]} cmd= sub= w i subs= opts=\n"
	       "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
	       "    w=${COMP_WORDS[i]}\n"
	       "    case $w in -*) continue ;; esac\n"
	       "    if [ -z \"$cmd\" ]; then cmd=$w; elif [ -z \"$sub\" ]; then sub=$w; fi\n"
	       "  done\n"
	       "  case \"$cmd\" in\n");
	printf("    '') subs='");
	for (const cli_command *c = cli_commands; c->name; c++)
		if (c->run)
			printf("%s ", c->name);
	printf("'; opts='--help --version --dir --catalog-uri --catalog-type --catalog-name "
	       "--warehouse --verbose --quiet' ;;\n");
	for (const cli_command *c = cli_commands; c->name; c++) {
		if (!c->run)
			continue;
		printf("    %s)\n", c->name);
		if (cli_command_is_group(c)) {
			size_t n = strlen(c->name);
			printf("      case \"$sub\" in\n        '') subs='");
			for (const cli_command *s = cli_commands; s->name; s++)
				if (!strncmp(s->name, c->name, n) && s->name[n] == ' ')
					printf("%s ", s->name + n + 1);
			printf("'; opts='--help' ;;\n");
			for (const cli_command *s = cli_commands; s->name; s++)
				if (!strncmp(s->name, c->name, n) && s->name[n] == ' ') {
					printf("        %s) opts='", s->name + n + 1);
					print_options(s, stdout);
					printf("--help' ;;\n");
				}
			printf("      esac ;;\n");
		} else {
			printf("      opts='");
			print_options(c, stdout);
			printf("--help' ;;\n");
		}
	}
	printf("  esac\n"
	       "  case $cur in\n"
	       "    -*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")) ;;\n"
	       "    *) if [ -n \"$subs\" ]; then COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"));\n"
	       "       else COMPREPLY=($(compgen -f -- \"$cur\")); fi ;;\n"
	       "  esac\n"
	       "}\n"
	       "complete -o default -F _floe floe\n");
	return 0;
}
