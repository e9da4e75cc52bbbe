/*
 * stream_config.c — YAML pipeline configuration (libyaml), validated
 * against declarative key tables (see stream_config.h).
 *
 * Limits for untrusted configs: 1 MiB of text, 64 levels, 100k visited
 * nodes (aliases are followed, so an alias bomb stops at the visit budget).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

#include "floe/maintain.h"
#include "floe/scan.h"
#include "iceberg/props.h"
#include "io/aws_secret.h"
#include "stream/stream_config.h"
#include "stream/stream_kafka.h"
#include "stream/stream_kinesis.h"
#include "util/timeutil.h"
#include "stream/stream_value_format.h"
#include "util/localfile.h"
#include "util/thread.h"

#define CONFIG_MAX_BYTES ((size_t)1 << 20)
#define CONFIG_MAX_VISITS 100000
#define CONFIG_MAX_DEPTH 64

typedef enum ktype {
	K_STR,
	K_BOOL,
	K_INT,
	K_DURATION,
	K_SIZE,
	K_ENUM,
	K_CHAR,
	K_STRLIST,
	K_MAP,    /* a mapping of strings (table properties) */
	K_PREFIX, /* every key under this prefix, flattened (fields.*, properties.*) */
	K_SOURCES,
	K_TABLES,
} ktype;

typedef struct keydef {
	const char *key;
	ktype type;
	size_t off, off2;
	const char *const *names; /* enum spellings, NULL-terminated */
	const int *values;        /* enum values */
	const char *dflt;
	const char *doc;
} keydef;

static const char *const errors_names[] = {"dead-letter", "fail", NULL};
static const int errors_values[] = {STREAM_ERRORS_DEAD_LETTER, STREAM_ERRORS_FAIL};
static const char *const type_names[] = {"files", "stdin", "generator", "datagen", "kafka",
					 "kinesis", "iceberg", "hybrid", NULL};
static const int type_values[] = {STREAM_SRC_FILES, STREAM_SRC_STDIN, STREAM_SRC_GENERATOR,
				  STREAM_SRC_GENERATOR, STREAM_SRC_KAFKA, STREAM_SRC_KINESIS,
				  STREAM_SRC_ICEBERG, STREAM_SRC_HYBRID};
static const char *const ice_mode_names[] = {"append", "changelog", NULL};
static const int ice_mode_values[] = {STREAM_ICEBERG_APPEND, STREAM_ICEBERG_CHANGELOG};
static const char *const ice_start_names[] = {
	"TABLE_SCAN_THEN_INCREMENTAL", "INCREMENTAL_FROM_LATEST_SNAPSHOT",
	"INCREMENTAL_FROM_EARLIEST_SNAPSHOT", "INCREMENTAL_FROM_SNAPSHOT_ID",
	"INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP", NULL};
static const char *const then_names[] = {"files", "kafka", "kinesis", NULL};
static const int then_values[] = {STREAM_SRC_FILES, STREAM_SRC_KAFKA, STREAM_SRC_KINESIS};
static const char *const wm_unit_names[] = {"MICROSECONDS", "MILLISECONDS", "SECONDS",
					    "NANOSECONDS", NULL};
static const int wm_unit_values[] = {1000, 1000000, 1000000000, 1};
static const int ice_start_values[] = {FLOE_START_TABLE_THEN_INCREMENTAL, FLOE_START_LATEST,
				       FLOE_START_EARLIEST, FLOE_START_SNAPSHOT_ID,
				       FLOE_START_TIMESTAMP};
static const char *const initpos_names[] = {"LATEST", "TRIM_HORIZON", "AT_TIMESTAMP", NULL};
static const int initpos_values[] = {STREAM_KINESIS_LATEST, STREAM_KINESIS_TRIM_HORIZON,
				     STREAM_KINESIS_AT_TIMESTAMP};
static const char *const startup_names[] = {"group-offsets", "earliest-offset", "latest-offset",
					    "timestamp", "specific-offsets", NULL};
static const int startup_values[] = {STREAM_KAFKA_GROUP_OFFSETS, STREAM_KAFKA_EARLIEST,
				     STREAM_KAFKA_LATEST, STREAM_KAFKA_TIMESTAMP,
				     STREAM_KAFKA_SPECIFIC};
static const char *const bounded_names[] = {"unbounded", "latest-offset", NULL};
static const int bounded_values[] = {STREAM_KAFKA_UNBOUNDED, STREAM_KAFKA_BOUNDED_LATEST};
static const char *const tristate_names[] = {"true", "false", "yes", "no", "on", "off", NULL};
static const int tristate_values[] = {1, 0, 1, 0, 1, 0};
static const char *const unit_names[] = {"ms", "s", "us", "ns", NULL};
static const int unit_values[] = {STREAM_EPOCH_MS, STREAM_EPOCH_S, STREAM_EPOCH_US, STREAM_EPOCH_NS};
static const char *const maint_names[] = {"off", "auto", NULL};
static const int maint_values[] = {0, 1};
static const char *const wmode_names[] = {"append", "overwrite", NULL};
static const int wmode_values[] = {0, 1};
static const char *const unknown_names[] = {"drop", "evolve", "dead-letter", NULL};
static const int unknown_values[] = {STREAM_UNKNOWN_DROP, STREAM_UNKNOWN_EVOLVE,
				     STREAM_UNKNOWN_DEAD_LETTER};
static const char *const dist_names[] = {"none", "hash", "range", NULL};
static const int dist_values[] = {STREAM_DIST_NONE, STREAM_DIST_HASH, STREAM_DIST_RANGE};

#define C(f) offsetof(stream_config, f)
#define S(f) offsetof(stream_source_cfg, f)
#define T(f) offsetof(stream_table_cfg, f)

static const keydef pipeline_keys[] = {
	{"pipeline.name", K_STR, C(pipeline_name), 0, NULL, NULL, "",
	 "name of the pipeline; also its id unless pipeline.id is set"},
	{"pipeline.id", K_STR, C(pipeline_id), 0, NULL, NULL, "pipeline.name",
	 "identifies this pipeline's commits (floe.pipeline-id, flink.job-id): a restart with the "
	 "same id resumes from the offsets its last commit recorded"},
	{"execution.checkpointing.interval", K_DURATION, C(checkpoint_interval_ms), 0, NULL, NULL,
	 "10s", "time between checkpoints: each commits one snapshot per table"},
	{"execution.checkpointing.min-pause", K_DURATION, C(min_pause_ms), 0, NULL, NULL, "0",
	 "least time between the end of one checkpoint and the start of the next"},
	{"parallelism.default", K_INT, C(parallelism), 0, NULL, NULL, "CPU count (max 16)",
	 "writer tasks (threads), each with one task writer per table"},
	{"errors", K_ENUM, C(errors), 0, errors_names, errors_values, "dead-letter",
	 "a record that does not fit: dead-letter (write it to the dead-letter file, go on) or fail "
	 "(stop; nothing of the checkpoint commits)"},
	{"dead-letter.path", K_STR, C(dead_letter_path), 0, NULL, NULL, "dead-letter.jsonl",
	 "JSON-lines file of records that did not fit (record, reason, source, offset, table)"},
	{"metrics.port", K_INT, C(metrics_port), 0, NULL, NULL, "0 (off)",
	 "serve Prometheus metrics on this port (GET /metrics)"},
	{"metrics.bind", K_STR, C(metrics_bind), 0, NULL, NULL, "127.0.0.1",
	 "address the metrics endpoint listens on"},
	{"memory.budget", K_SIZE, C(memory_budget), 0, NULL, NULL, "32MiB",
	 "memory all open data files share; beyond it the largest flushes a row group"},
	{"pipeline.max-buffered-blocks", K_INT, C(max_buffered_blocks), 0, NULL, NULL,
	 "parallelism + 2", "blocks read ahead of the writers (each about block-size)"},
	{"pipeline.atomic-commit", K_BOOL, C(atomic_commit), 0, NULL, NULL, "false",
	 "commit every table of a checkpoint in one catalog transaction, all or nothing (SQL "
	 "and REST catalogs; the filesystem and Glue catalogs refuse it)"},
	{"catalog.type", K_STR, C(catalog_type), 0, NULL, NULL, "sql",
	 "sql, filesystem, rest or glue (without a catalog section: the command's catalog)"},
	{"catalog.uri", K_STR, C(catalog_uri), 0, NULL, NULL, "",
	 "sqlite:///path.db or postgresql://user@host/db; a password must come from ${ENV}, "
	 "${secret:NAME#field} or catalog.password-file"},
	{"catalog.name", K_STR, C(catalog_name), 0, NULL, NULL, "default", "catalog_name column"},
	{"catalog.warehouse", K_STR, C(catalog_warehouse), 0, NULL, NULL, "",
	 "root of new tables (file:///data/wh)"},
	{"catalog.password-file", K_STR, C(catalog_password_file), 0, NULL, NULL, "",
	 "file whose first line is the catalog password"},
	{"catalog.properties", K_PREFIX, C(catalog_props), 0, NULL, NULL, "",
	 "REST, Glue and S3 catalog properties (catalog.properties.credential, "
	 "catalog.properties.s3.endpoint, ...); credentials only as ${ENV} or "
	 "${secret:NAME#field}"},
	{"sources", K_SOURCES, 0, 0, NULL, NULL, "", "list of sources (below)"},
	{"tables", K_TABLES, 0, 0, NULL, NULL, "", "list of tables (below)"},
	{NULL, K_STR, 0, 0, NULL, NULL, NULL, NULL},
};

static const keydef source_keys[] = {
	{"name", K_STR, S(name), 0, NULL, NULL, "(required)", "name tables refer to"},
	{"type", K_ENUM, S(type), 0, type_names, type_values, "(required)",
	 "files, stdin, generator (alias datagen), kafka, kinesis, iceberg, or hybrid (the table "
	 "scan of source-table's current snapshot, then files, Kafka or Kinesis (then) from the "
	 "offsets recorded with that snapshot)"},
	{"format", K_STR, S(format_name), 0, NULL, NULL, "json",
	 "json (JSON lines), csv, or debezium-json (Debezium change events, one per line, with "
	 "or without the Kafka Connect schema envelope; one per line from files and stdin, one per message from kafka and kinesis); kafka also raw (the value as the one string or binary "
	 "column), avro-confluent (Confluent wire format, schema from avro-confluent.url) and "
	 "the formats registered by name (stream_value_format.h)"},
	{"value.format", K_STR, S(format_name), 0, NULL, NULL, "json",
	 "kafka, kinesis: alias of format"},
	{"rowkind.field", K_STR, S(rowkind_field), 0, NULL, NULL, "",
	 "json/csv (and kafka/kinesis values) change records: the field holding each record's change kind (+I, -U, +U, -D, "
	 "or insert, update, delete); it is written only if the table has such a column"},
	{"debezium-json.schema-include", K_BOOL, S(debezium_schema_include), 0, NULL, NULL,
	 "false", "every record must have the {\"schema\", \"payload\"} envelope (without it "
	 "both forms are read)"},
	{"debezium-json.source-timestamp-column", K_STR, S(debezium_ts_column), 0, NULL, NULL, "",
	 "a timestamp or long column of the table that receives each event's source.ts_ms"},
	{"path", K_STRLIST, S(paths), S(n_paths), NULL, NULL, "(files: required)",
	 "files or folders (a list or one path); folders are read recursively"},
	{"pattern", K_STR, S(pattern), 0, NULL, NULL, "every file",
	 "file-name glob (\"*.jsonl\"); names starting with . or _ are hidden"},
	{"follow", K_BOOL, S(follow), 0, NULL, NULL, "false",
	 "keep watching: new files and data appended to known files"},
	{"monitor-interval", K_DURATION, S(monitor_interval_ms), 0, NULL, NULL, "1s",
	 "how often follow mode lists the folders again"},
	{"block-size", K_SIZE, S(block_bytes), 0, NULL, NULL, "1MiB", "bytes read at a time"},
	{"max-record-size", K_SIZE, S(max_record_bytes), 0, NULL, NULL, "16MiB",
	 "a longer record goes to the dead letters"},
	{"epoch-unit", K_ENUM, S(epoch_unit), 0, unit_names, unit_values, "ms",
	 "unit of numbers read into timestamp columns (s, ms, us, ns)"},
	{"csv.field-delimiter", K_CHAR, S(csv_delimiter), 0, NULL, NULL, ",", "one character (\\t for tab)"},
	{"csv.quote-character", K_CHAR, S(csv_quote), 0, NULL, NULL, "\"", "\"\" disables quoting"},
	{"csv.header", K_BOOL, S(csv_header), 0, NULL, NULL, "true",
	 "the first line of each file names the columns (else: schema order)"},
	{"csv.null-literal", K_STR, S(csv_null_literal), 0, NULL, NULL, "\"\"",
	 "an unquoted field equal to it is null"},
	{"csv.allow-comments", K_BOOL, S(csv_allow_comments), 0, NULL, NULL, "false",
	 "skip lines starting with #"},
	{"rows-per-second", K_INT, S(rows_per_second), 0, NULL, NULL, "10000",
	 "generator: rate (0 = as fast as possible)"},
	{"number-of-rows", K_INT, S(number_of_rows), 0, NULL, NULL, "unbounded",
	 "generator: rows in total, then the source ends"},
	{"seed", K_INT, S(seed), 0, NULL, NULL, "0", "generator: random seed"},
	{"schema", K_STR, S(schema), 0, NULL, NULL, "the first table's",
	 "generator: column list of the rows it makes"},
	{"fields", K_PREFIX, S(gen_fields), 0, NULL, NULL, "",
	 "generator: fields.<column>.kind (random or sequence), .min, .max, .max-past, .length, "
	 ".start, .end, .null-rate, .values"},
	{"topic", K_STRLIST, S(topics), S(n_topics), NULL, NULL, "",
	 "kafka: topic, or a list of topics (a list or names separated by ';')"},
	{"topic-pattern", K_STR, S(topic_pattern), 0, NULL, NULL, "",
	 "kafka: every topic whose name matches this regular expression (instead of topic)"},
	{"properties", K_PREFIX, S(kafka_props), 0, NULL, NULL, "",
	 "kafka: librdkafka client properties (properties.bootstrap.servers, "
	 "properties.group.id (default: the pipeline id), properties.security.protocol, ...)"},
	{"scan.startup.mode", K_ENUM, S(startup_mode), 0, startup_names, startup_values,
	 "group-offsets",
	 "kafka: where a partition the tables never committed starts (a committed one always "
	 "resumes from the table)"},
	{"scan.startup.timestamp-millis", K_INT, S(startup_ts_ms), 0, NULL, NULL, "",
	 "kafka: scan.startup.mode timestamp: the first record at or after this time (ms)"},
	{"scan.startup.specific-offsets", K_STR, S(specific_offsets), 0, NULL, NULL, "",
	 "kafka: scan.startup.mode specific-offsets: \"partition:0,offset:42;partition:1,offset:"
	 "300\" (other partitions: group offsets, else earliest)"},
	{"scan.bounded.mode", K_ENUM, S(bounded_mode), 0, bounded_names, bounded_values,
	 "unbounded", "kafka: latest-offset: end when every partition reached the end it had when "
	 "it was assigned"},
	{"commit.offsets.on.checkpoint", K_BOOL, S(commit_offsets), 0, NULL, NULL, "true",
	 "kafka: after each table commit, commit the offsets it recorded to the consumer group "
	 "(for lag tools; floe itself resumes from the table)"},
	{"key.format", K_STR, S(key_format), 0, NULL, NULL, "raw",
	 "kafka: the key's format: raw (its bytes, for metadata.key) or json (an object of the "
	 "key columns, Kafka Connect's envelope allowed: an upsert table's tombstone deletes "
	 "that key)"},
	{"avro-confluent.url", K_STR, S(registry_url), 0, NULL, NULL, "",
	 "kafka, format avro-confluent: the schema registry (http://host:8081)"},
	{"avro-confluent.schema-registry.url", K_STR, S(registry_url), 0, NULL, NULL, "",
	 "kafka: alias of avro-confluent.url (Flink's older name)"},
	{"avro-confluent.basic-auth.user-info", K_STR, S(registry_user_info), 0, NULL, NULL, "",
	 "kafka, format avro-confluent: user:password for the registry's HTTP basic "
	 "authentication (only as ${ENV_VAR})"},
	{"avro-confluent.bearer-auth.token", K_STR, S(registry_bearer_token), 0, NULL, NULL, "",
	 "kafka, format avro-confluent: a bearer token for the registry (only as ${ENV_VAR})"},
	{"metadata", K_PREFIX, S(metadata), 0, NULL, NULL, "",
	 "kafka: record metadata into columns: metadata.<topic|partition|offset|timestamp|"
	 "timestamp-type|key|headers>: <column>; kinesis: metadata.<stream|shard-id|"
	 "sequence-number|timestamp|key>"},
	{"stream", K_STR, S(kinesis_stream), 0, NULL, NULL, "(kinesis: required)",
	 "kinesis: the stream's name"},
	{"aws", K_PREFIX, S(aws_props), 0, NULL, NULL, "",
	 "kinesis: aws.region, aws.endpoint (http://host:port), aws.credentials.provider (AUTO, "
	 "BASIC, ENV_VAR, PROFILE, WEB_IDENTITY_TOKEN, CONTAINER, INSTANCE), "
	 "aws.credentials.basic.accesskeyid/.secretkey, aws.credentials.profile.name/.path"},
	{"scan.stream.initpos", K_ENUM, S(kinesis_initpos), 0, initpos_names, initpos_values,
	 "LATEST",
	 "kinesis: where the shards of the pipeline's first start begin (a committed shard always "
	 "resumes from the table; shards found later start at TRIM_HORIZON)"},
	{"scan.stream.initpos-timestamp", K_STR, S(kinesis_initpos_ts), 0, NULL, NULL, "",
	 "kinesis: AT_TIMESTAMP: epoch seconds (1700000000.5) or an ISO timestamp"},
	{"scan.shard.getrecords.maxrecordcount", K_INT, S(kinesis_max_records), 0, NULL, NULL,
	 "10000", "kinesis: records per GetRecords call (1..10000)"},
	{"scan.shard.getrecords.intervalmillis", K_INT, S(kinesis_interval_ms), 0, NULL, NULL,
	 "200", "kinesis: wait before asking a shard that had nothing again (ms)"},
	{"scan.shard.discovery.intervalmillis", K_INT, S(kinesis_discovery_ms), 0, NULL, NULL,
	 "10000", "kinesis: time between listings of the stream's shards (resharding) (ms)"},
	{"source-table", K_STR, S(iceberg_table), 0, NULL, NULL, "(iceberg: required)",
	 "iceberg: the table to read (namespace.table, in the pipeline's catalog)"},
	{"read-mode", K_ENUM, S(iceberg_mode), 0, ice_mode_names, ice_mode_values, "append",
	 "iceberg: append (the rows each snapshot appended; overwrite and delete snapshots fail) "
	 "or changelog (each snapshot's changes with _change_type, _change_ordinal, "
	 "_commit_snapshot_id, as floe scan --changelog; rowkind.field defaults to _change_type)"},
	{"starting-strategy", K_ENUM, S(iceberg_start), 0, ice_start_names, ice_start_values,
	 "TABLE_SCAN_THEN_INCREMENTAL",
	 "iceberg: Flink's starting strategies: the current snapshot's rows then what follows, or "
	 "only what follows the latest / from the earliest / from start-snapshot-id / from the "
	 "first snapshot at or after start-snapshot-timestamp (the first start only: a restart "
	 "resumes from the tables)"},
	{"start-snapshot-id", K_INT, S(iceberg_start_snapshot), 0, NULL, NULL, "",
	 "iceberg: INCREMENTAL_FROM_SNAPSHOT_ID: the first snapshot read"},
	{"start-snapshot-timestamp", K_INT, S(iceberg_start_ts), 0, NULL, NULL, "",
	 "iceberg: INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP: epoch milliseconds"},
	{"streaming", K_BOOL, S(iceberg_streaming), 0, NULL, NULL, "false",
	 "iceberg: keep reading new snapshots every monitor-interval (else: stop after the "
	 "snapshot current at the start)"},
	{"streaming-skip-overwrite-snapshots", K_BOOL, S(iceberg_skip_overwrites), 0, NULL, NULL,
	 "false", "iceberg, append mode: skip overwrite and delete snapshots instead of failing"},
	{"then", K_ENUM, S(hybrid_then), 0, then_names, then_values, "files",
	 "hybrid: the source after the bootstrap, from the offsets recorded with its snapshot: "
	 "files (path), kafka (topic, properties.*) or kinesis (stream, aws.*)"},
	{"watermark-column", K_STR, S(watermark_column), 0, NULL, NULL, "",
	 "iceberg, append mode: a long or timestamp column; each snapshot's files are read in the "
	 "order of its lower bound and every commit downstream records floe.watermark, the "
	 "smallest lower bound not yet read (epoch ms; Flink's watermark-column)"},
	{"watermark-column-time-unit", K_ENUM, S(watermark_unit_ns), 0, wm_unit_names,
	 wm_unit_values, "MICROSECONDS", "iceberg: the unit of a long watermark-column"},
	{NULL, K_STR, 0, 0, NULL, NULL, NULL, NULL},
};

static const keydef table_keys[] = {
	{"name", K_STR, T(name), 0, NULL, NULL, "(required)", "namespace.table"},
	{"source", K_STR, T(source), 0, NULL, NULL, "the only source", "source that feeds it"},
	{"schema", K_STR, T(schema), 0, NULL, NULL, "",
	 "columns (\"id long not null, ts timestamptz\") or Iceberg schema JSON: floe creates the "
	 "table when it does not exist"},
	{"partition-by", K_STR, T(partition_by), 0, NULL, NULL, "unpartitioned",
	 "partition spec at creation: \"day(ts), bucket(16, id)\""},
	{"sort-by", K_STR, T(sort_by), 0, NULL, NULL, "unsorted", "sort order at creation"},
	{"format-version", K_INT, T(format_version), 0, NULL, NULL, "2", "at creation"},
	{"location", K_STR, T(location), 0, NULL, NULL, "the catalog's", "at creation"},
	{"properties", K_MAP, T(properties), 0, NULL, NULL, "",
	 "Iceberg table properties at creation (write.target-file-size-bytes, "
	 "write.parquet.compression-codec, write.distribution-mode, ...)"},
	{"filter", K_STR, T(filter), 0, NULL, NULL, "every row",
	 "route: only matching rows (\"kind = 'click' and amount > 10\")"},
	{"route.max-tables", K_INT, T(route_max_tables), 0, NULL, NULL, "100",
	 "a name template (\"db.events_{kind}\"): the most tables it may have, existing ones "
	 "included; a record that would create one more is a dead letter"},
	{"unknown-fields", K_ENUM, T(unknown_fields), 0, unknown_names, unknown_values, "drop",
	 "a record's fields the table lacks: drop (skipped, the value is lost), evolve (the "
	 "schema gains the column first; also wider numbers widen the column and an absent "
	 "required field makes it optional), dead-letter (the record goes to the dead letters)"},
	{"distribution-mode", K_ENUM, T(distribution), 0, dist_names, dist_values,
	 "write.distribution-mode, else none",
	 "none: tasks share the rows; hash: one task per partition (one file per partition per "
	 "checkpoint); range: rows spread by the statistics of their sort key (below)"},
	{"upsert-enabled", K_ENUM, T(upsert), 0, tristate_names, tristate_values,
	 "write.upsert.enabled",
	 "every row replaces the row of its key (equality deletes + position deletes/DVs, as "
	 "Flink's upsert sink)"},
	{"equality-field-columns", K_STR, T(equality_fields), 0, NULL, NULL,
	 "the schema's identifier fields",
	 "the key of upserts and change records (\"id, region\"); must include every partition "
	 "source column"},
	{"write.mode", K_ENUM, T(write_mode), 0, wmode_names, wmode_values, "append",
	 "overwrite: each load replaces the partitions its rows touch (dynamic partition "
	 "overwrite, as Spark's dynamic mode and Flink's overwrite); with overwrite-where, the rows "
	 "the filter selects"},
	{"overwrite-where", K_STR, T(overwrite_where), 0, NULL, NULL, "",
	 "a filtered overwrite (Java's overwriteByRowFilter): the load replaces the rows matching "
	 "this filter (\"region = 'eu'\"), which must be decided by partition values; every "
	 "row written must match it"},
	{"branch", K_STR, T(branch), 0, NULL, NULL, "main",
	 "commit to this branch (created from main's head when missing); the pipeline's offsets "
	 "follow the branch's own ancestry (write-audit-publish: publish with floe branch "
	 "fast-forward)"},
	{"maintenance.mode", K_ENUM, T(maint.mode), 0, maint_names, maint_values, "off",
	 "auto: maintain the table from the pipeline after its commits (compact, expire "
	 "snapshots, delete orphans, rewrite manifests, in that order, under the table's lock)"},
	{"maintenance.steps", K_STR, T(maint.steps), 0, NULL, NULL,
	 "compact,expire,orphans,manifests", "the steps a run takes (order is always this one)"},
	{"maintenance.schedule.commit-count", K_INT, T(maint.commit_count), 0, NULL, NULL, "10",
	 "run after this many commits (0: not a trigger)"},
	{"maintenance.schedule.data-file-count", K_INT, T(maint.data_file_count), 0, NULL, NULL,
	 "1000", "run after this many data files were committed (0: not a trigger)"},
	{"maintenance.schedule.data-file-size", K_SIZE, T(maint.data_file_size), 0, NULL, NULL,
	 "100GiB", "run after this many bytes of data files were committed"},
	{"maintenance.schedule.pos-delete-file-count", K_INT, T(maint.pos_delete_file_count), 0,
	 NULL, NULL, "0", "run after this many position delete files or DVs (0: not a trigger)"},
	{"maintenance.schedule.eq-delete-file-count", K_INT, T(maint.eq_delete_file_count), 0,
	 NULL, NULL, "0", "run after this many equality delete files (0: not a trigger)"},
	{"maintenance.schedule.interval", K_DURATION, T(maint.interval_ms), 0, NULL, NULL, "10m",
	 "run when this long passed since the last run and something was committed (0: not a "
	 "trigger)"},
	{"maintenance.rate-limit", K_DURATION, T(maint.rate_limit_ms), 0, NULL, NULL, "1m",
	 "least time between the end of a run and the start of the next"},
	{"maintenance.lock-check-delay", K_DURATION, T(maint.lock_check_delay_ms), 0, NULL, NULL,
	 "30s", "another maintainer holds the lock: look again after this"},
	{"maintenance.on-finish", K_BOOL, T(maint.on_finish), 0, NULL, NULL, "true",
	 "when the input ends (not on SIGTERM), run once more if anything was committed since"},
	{"maintenance.lock-uri", K_STR, T(maint.lock_uri), 0, NULL, NULL,
	 "the catalog's database", "database of the flink_maintenance_lock table"},
	{"maintenance.compact.target-file-size", K_SIZE, T(maint.target_file_size), 0, NULL, NULL,
	 "write.target-file-size-bytes", "size compaction writes toward"},
	{"maintenance.compact.min-input-files", K_INT, T(maint.min_input_files), 0, NULL, NULL, "5",
	 "a partition with fewer small files is left alone (unless they have deletes)"},
	{"maintenance.compact.max-rewrite-bytes", K_SIZE, T(maint.max_rewrite_bytes), 0, NULL, NULL,
	 "no cap", "bytes read per run at most"},
	{"maintenance.compact.partial-progress.max-commits", K_INT, T(maint.max_commits), 0, NULL,
	 NULL, "0 (one commit)", "commit file groups as they finish, at most this many commits"},
	{"maintenance.compact.sort", K_BOOL, T(maint.sort), 0, NULL, NULL, "false",
	 "sort rows by the table's sort order"},
	{"maintenance.expire.max-snapshot-age", K_DURATION, T(maint.max_snapshot_age_ms), 0, NULL,
	 NULL, "history.expire.max-snapshot-age-ms (5d)", "expire snapshots older than this"},
	{"maintenance.expire.retain-last", K_INT, T(maint.retain_last), 0, NULL, NULL,
	 "history.expire.min-snapshots-to-keep (1)", "keep at least this many per branch"},
	{"maintenance.orphans.min-age", K_DURATION, T(maint.orphan_min_age_ms), 0, NULL, NULL, "3d",
	 "only delete unreachable files older than this"},
	{"maintenance.orphans.interval", K_DURATION, T(maint.orphan_interval_ms), 0, NULL, NULL,
	 "1d", "the orphan step (a listing of the table location) runs at most this often"},
	{NULL, K_STR, 0, 0, NULL, NULL, NULL, NULL},
};

typedef struct pctx {
	stream_config *c;
	yaml_document_t *doc;
	floe_error *err;
	long visits;
} pctx;

static int line_of(const yaml_node_t *n)
{
	return n ? (int)n->start_mark.line + 1 : 0;
}

static int fail_at(pctx *x, const yaml_node_t *n, const char *fmt, ...) FLOE_PRINTF(3, 4);
static int fail_at(pctx *x, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return floe_error_set(x->err, FLOE_EINVAL, "line %d: %s", line_of(n), msg);
}

static yaml_node_t *node(pctx *x, int id)
{
	if (++x->visits > CONFIG_MAX_VISITS)
		return NULL;
	return yaml_document_get_node(x->doc, id);
}

/*
 * Where ${secret:NAME#field} may stand: the catalog's settings and the
 * maintenance lock database (resolved when they are opened, at start: see
 * io/aws_secret.h). Anywhere else — a table property above all, which is
 * stored in the table's metadata — it is refused.
 */
static bool secret_allowed(const char *key)
{
	size_t n = key ? strlen(key) : 0;
	return key && (!strncmp(key, "catalog.", 8) ||
		       (n >= 8 && !strcmp(key + n - 8, "lock-uri")));
}

/* Expand ${NAME} from the environment into an arena string; ${secret:...}
 * is kept as written where secret_allowed(key). */
static int expand(pctx *x, const yaml_node_t *n, const char *key, const char *s, size_t len,
		  const char **out)
{
	floe_buf b;
	int rc = FLOE_OK;
	floe_buf_init(&b, CONFIG_MAX_BYTES);
	for (size_t i = 0; i < len && !rc;) {
		if (len - i >= 9 && !memcmp(s + i, "${secret:", 9)) {
			floe_secret_ref ref;
			floe_error perr;
			floe_error_clear(&perr);
			if (!secret_allowed(key)) {
				rc = fail_at(x, n,
					     "'%s': ${secret:...} is for the catalog's settings "
					     "(catalog.uri, catalog.properties.*) and "
					     "maintenance.lock-uri; use ${ENV_VAR} here",
					     key ? key : "");
				break;
			}
			if (floe_secret_parse_ref(&ref, s + i, len - i, &perr)) {
				rc = fail_at(x, n, "%s", perr.msg);
				break;
			}
			if (floe_buf_append(&b, s + i, ref.len))
				rc = floe_error_oomf(x->err, "config value too long");
			i += ref.len;
			continue;
		}
		if (s[i] == '$' && i + 1 < len && s[i + 1] == '{') {
			const char *e = memchr(s + i + 2, '}', len - i - 2);
			char name[256];
			size_t nl;
			if (!e) {
				rc = fail_at(x, n, "unterminated ${...}");
				break;
			}
			nl = (size_t)(e - (s + i + 2));
			if (nl == 0 || nl >= sizeof(name)) {
				rc = fail_at(x, n, "bad ${...} reference");
				break;
			}
			memcpy(name, s + i + 2, nl);
			name[nl] = 0;
			const char *v = getenv(name);
			if (!v) {
				rc = fail_at(x, n, "environment variable %s is not set", name);
				break;
			}
			if (floe_buf_puts(&b, v))
				rc = floe_error_oomf(x->err, "config value too long");
			i = (size_t)(e - s) + 1;
		} else {
			if (floe_buf_putc(&b, s[i]))
				rc = floe_error_oomf(x->err, "config value too long");
			i++;
		}
	}
	if (!rc && !(*out = floe_arena_strndup(&x->c->arena, floe_buf_cstr(&b), b.len)))
		rc = floe_error_oom(x->err);
	floe_buf_reset(&b);
	return rc;
}

/*
 * Keys whose values are credentials (table properties such as
 * s3.secret-access-key, Kafka's sasl.password): their value must come from
 * the environment (${NAME}), never the file — a table property would also
 * be stored in the table's metadata for everyone to read.
 */
static bool secret_key(const char *k)
{
	static const char *const words[] = {"password", "secret", "token", "credential",
					    "sasl.jaas.config", "private-key", "access-key-id",
					    "user-info"};
	char low[256];
	size_t n = strlen(k);
	if (n >= sizeof(low))
		n = sizeof(low) - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)(k[i] >= 'A' && k[i] <= 'Z' ? k[i] + 32 : k[i]);
	low[n] = 0;
	/* Iceberg's own keys (write.metadata.metrics.column.<name>, ...) name
	 * columns, not credentials */
	if (!strncmp(low, "write.", 6) || !strncmp(low, "read.", 5) || !strncmp(low, "commit.", 7) ||
	    !strncmp(low, "history.", 8) || !strncmp(low, "format-version", 14))
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return true;
	return n >= 4 && !strcmp(low + n - 4, ".key");
}

static int check_secret(pctx *x, const yaml_node_t *v, const char *key)
{
	if (!secret_key(key) || v->type != YAML_SCALAR_NODE)
		return FLOE_OK;
	const char *raw = (const char *)v->data.scalar.value;
	size_t len = v->data.scalar.length;
	if (len >= 3 && raw[0] == '$' && raw[1] == '{' && raw[len - 1] == '}')
		return FLOE_OK;
	return fail_at(x, v,
		       "'%s' holds a credential: write ${ENV_VAR} and set it in the environment "
		       "(never the value itself in the file)",
		       key);
}

static int scalar(pctx *x, const yaml_node_t *n, const char *key, const char **out)
{
	if (n->type != YAML_SCALAR_NODE)
		return fail_at(x, n, "'%s' must be a single value", key);
	return expand(x, n, key, (const char *)n->data.scalar.value, n->data.scalar.length, out);
}

static const keydef *find_key(const keydef *defs, const char *k)
{
	for (const keydef *d = defs; d->key; d++)
		if (!strcmp(d->key, k))
			return d;
	return NULL;
}

static const keydef *find_prefix(const keydef *defs, const char *k)
{
	for (const keydef *d = defs; d->key; d++) {
		size_t n = strlen(d->key);
		if (d->type == K_PREFIX && !strncmp(d->key, k, n) && k[n] == '.')
			return d;
	}
	return NULL;
}

static bool is_section(const keydef *defs, const char *k)
{
	size_t n = strlen(k);
	for (const keydef *d = defs; d->key; d++)
		if (!strncmp(d->key, k, n) && d->key[n] == '.')
			return true;
	return false;
}

static int unknown(pctx *x, const yaml_node_t *n, const keydef *defs, const char *k,
		   const char *where)
{
	const char *best = NULL;
	size_t bd = (size_t)-1;
	for (const keydef *d = defs; d->key; d++) {
		size_t dd = floe_levenshtein(k, d->key);
		if (dd < bd) {
			bd = dd;
			best = d->key;
		}
	}
	if (best)
		return fail_at(x, n, "unknown key '%s'%s (did you mean '%s'?)", k, where, best);
	return fail_at(x, n, "unknown key '%s'%s", k, where);
}

static int parse_sources(pctx *x, yaml_node_t *v);
static int parse_tables(pctx *x, yaml_node_t *v);

static int assign(pctx *x, const keydef *d, void *base, yaml_node_t *v, const char *full)
{
	const char *s;
	int rc;
	uint8_t *at = (uint8_t *)base + d->off;
	switch (d->type) {
	case K_SOURCES:
		return parse_sources(x, v);
	case K_TABLES:
		return parse_tables(x, v);
	case K_STRLIST: {
		const char ***list = (const char ***)(void *)at;
		size_t *count = (size_t *)(void *)((uint8_t *)base + d->off2);
		if (v->type == YAML_SCALAR_NODE) {
			if (!(*list = floe_arena_calloc(&x->c->arena, 1, sizeof(char *))))
				return floe_error_oom(x->err);
			*count = 1;
			return scalar(x, v, full, &(*list)[0]);
		}
		if (v->type != YAML_SEQUENCE_NODE)
			return fail_at(x, v, "'%s' must be a value or a list", full);
		size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
		if (n > 100000)
			return fail_at(x, v, "'%s' has too many items", full);
		if (!(*list = floe_arena_calloc(&x->c->arena, n ? n : 1, sizeof(char *))))
			return floe_error_oom(x->err);
		for (size_t i = 0; i < n; i++) {
			yaml_node_t *it = node(x, v->data.sequence.items.start[i]);
			if (!it)
				return fail_at(x, v, "too many nodes");
			if ((rc = scalar(x, it, full, &(*list)[i])))
				return rc;
		}
		*count = n;
		return FLOE_OK;
	}
	case K_MAP: {
		floe_strmap *m = (floe_strmap *)(void *)at;
		if (v->type != YAML_MAPPING_NODE)
			return fail_at(x, v, "'%s' must be a mapping of names to values", full);
		for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top;
		     pr++) {
			yaml_node_t *kn = node(x, pr->key), *vn = node(x, pr->value);
			const char *k, *val;
			if (!kn || !vn)
				return fail_at(x, v, "too many nodes");
			if ((rc = scalar(x, kn, full, &k)) || (rc = check_secret(x, vn, k)) ||
			    (rc = scalar(x, vn, k, &val)))
				return rc;
			/* a bad table property is refused before anything is created */
			floe_error perr;
			floe_error_clear(&perr);
			if (floe_prop_check(k, val, &perr))
				return fail_at(x, vn, "%s", perr.msg);
			if (floe_strmap_set(m, k, val))
				return floe_error_oom(x->err);
		}
		return FLOE_OK;
	}
	default:
		break;
	}
	/* the registry's credentials (avro-confluent.basic-auth.user-info, ...) */
	if (!strncmp(full, "avro-confluent.", 15) && (rc = check_secret(x, v, full)))
		return rc;
	if ((rc = scalar(x, v, full, &s)))
		return rc;
	switch (d->type) {
	case K_STR:
		*(const char **)(void *)at = s;
		return FLOE_OK;
	case K_BOOL: {
		bool b;
		if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))
			b = true;
		else if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))
			b = false;
		else
			return fail_at(x, v, "'%s': '%s' is not true or false", full, s);
		*(bool *)(void *)at = b;
		return FLOE_OK;
	}
	case K_INT:
		if (!floe_parse_i64(s, strlen(s), (int64_t *)(void *)at))
			return fail_at(x, v, "'%s': '%s' is not an integer", full, s);
		return FLOE_OK;
	case K_DURATION:
		if (!floe_parse_duration_ms(s, (int64_t *)(void *)at) || *(int64_t *)(void *)at < 0)
			return fail_at(x, v, "'%s': '%s' is not a duration (10s, 500ms, 2m)", full, s);
		return FLOE_OK;
	case K_SIZE:
		if (!floe_parse_size(s, (int64_t *)(void *)at) || *(int64_t *)(void *)at <= 0)
			return fail_at(x, v, "'%s': '%s' is not a size (64MiB, 1GB, 4096)", full, s);
		return FLOE_OK;
	case K_ENUM:
		for (size_t i = 0; d->names[i]; i++) {
			if (!strcmp(d->names[i], s)) {
				*(int *)(void *)at = d->values[i];
				return FLOE_OK;
			}
		}
		{
			char list[256] = "";
			size_t k = 0;
			for (size_t i = 0; d->names[i] && k < sizeof(list) - 32; i++)
				k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%s", i ? ", " : "",
						      d->names[i]);
			return fail_at(x, v, "'%s': '%s' is not one of %s", full, s, list);
		}
	case K_CHAR: {
		char ch;
		if (!strcmp(s, "\\t") || !strcmp(s, "tab"))
			ch = '\t';
		else if (strlen(s) == 1)
			ch = s[0];
		else if (!*s)
			ch = 0;
		else
			return fail_at(x, v, "'%s': '%s' is not one character", full, s);
		*(char *)(void *)at = ch;
		return FLOE_OK;
	}
	default:
		return fail_at(x, v, "'%s': unexpected value", full);
	}
}

/* Every scalar below v, keyed by its dotted path. */
static int collect_prefix(pctx *x, floe_strmap *sm, yaml_node_t *v, const char *full, int depth)
{
	int rc;
	if (depth > CONFIG_MAX_DEPTH)
		return fail_at(x, v, "nesting too deep");
	if (v->type == YAML_SCALAR_NODE) {
		const char *val;
		if (((!strncmp(full, "properties.", 11) || !strncmp(full, "catalog.properties.", 19) ||
		      !strcmp(full, "aws.credentials.basic.secretkey")) &&
		     (rc = check_secret(x, v, full))) ||
		    (rc = scalar(x, v, full, &val)))
			return rc;
		if (floe_strmap_set(sm, full, val))
			return floe_error_oom(x->err);
		return FLOE_OK;
	}
	if (v->type != YAML_MAPPING_NODE)
		return fail_at(x, v, "'%s' must be a value or a mapping", full);
	for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
		yaml_node_t *k2 = node(x, q->key), *v2 = node(x, q->value);
		char sub[512];
		if (!k2 || !v2)
			return fail_at(x, v, "too many nodes (alias loop?)");
		if (k2->type != YAML_SCALAR_NODE)
			return fail_at(x, k2, "a key must be a plain value");
		int n = snprintf(sub, sizeof(sub), "%s.%.*s", full,
				 (int)(k2->data.scalar.length > 400 ? 400 : k2->data.scalar.length),
				 (const char *)k2->data.scalar.value);
		if (n < 0 || (size_t)n >= sizeof(sub))
			return fail_at(x, k2, "the key '%s...' is too long", full);
		if ((rc = collect_prefix(x, sm, v2, sub, depth + 1)))
			return rc;
	}
	return FLOE_OK;
}

/* Flatten a mapping into dotted keys and assign them. */
static int walk_map(pctx *x, const keydef *defs, void *base, yaml_node_t *m, const char *prefix,
		    const char *where, int depth)
{
	int rc;
	if (depth > CONFIG_MAX_DEPTH)
		return fail_at(x, m, "nesting too deep");
	if (m->type != YAML_MAPPING_NODE)
		return fail_at(x, m, "expected a mapping of keys%s", where);
	for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *kn = node(x, pr->key), *vn = node(x, pr->value);
		char full[512];
		if (!kn || !vn)
			return fail_at(x, m, "too many nodes (alias loop?)");
		if (kn->type != YAML_SCALAR_NODE)
			return fail_at(x, kn, "a key must be a plain value");
		snprintf(full, sizeof(full), "%s%s%.*s", prefix ? prefix : "", prefix ? "." : "",
			 (int)(kn->data.scalar.length > 400 ? 400 : kn->data.scalar.length),
			 (const char *)kn->data.scalar.value);
		const keydef *d = find_key(defs, full);
		if (d && d->type != K_PREFIX) {
			if ((rc = assign(x, d, base, vn, full)))
				return rc;
			continue;
		}
		if (!d)
			d = find_prefix(defs, full);
		if (d) { /* K_PREFIX: collect everything below, flattened */
			floe_strmap *sm = (floe_strmap *)(void *)((uint8_t *)base + d->off);
			if ((rc = collect_prefix(x, sm, vn, full, depth + 1)))
				return rc;
			continue;
		}
		if (vn->type == YAML_MAPPING_NODE && is_section(defs, full)) {
			if ((rc = walk_map(x, defs, base, vn, full, where, depth + 1)))
				return rc;
			continue;
		}
		return unknown(x, kn, defs, full, where);
	}
	return FLOE_OK;
}

static int parse_sources(pctx *x, yaml_node_t *v)
{
	stream_config *c = x->c;
	int rc;
	if (v->type != YAML_SEQUENCE_NODE)
		return fail_at(x, v, "'sources' must be a list");
	if (c->sources)
		return fail_at(x, v, "'sources' is given twice");
	size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n > 1000)
		return fail_at(x, v, "too many sources");
	c->sources = floe_arena_calloc(&c->arena, n ? n : 1, sizeof(stream_source_cfg));
	if (!c->sources)
		return floe_error_oom(x->err);
	for (size_t i = 0; i < n; i++) {
		stream_source_cfg *s = &c->sources[i];
		yaml_node_t *m = node(x, v->data.sequence.items.start[i]);
		char where[64];
		if (!m)
			return fail_at(x, v, "too many nodes");
		s->type = -1;
		s->format = STREAM_FMT_JSONL;
		s->commit_offsets = true;
		s->startup_ts_ms = -1;
		s->monitor_interval_ms = 1000;
		s->block_bytes = (int64_t)1 << 20;
		s->max_record_bytes = (int64_t)16 << 20;
		s->csv_delimiter = ',';
		s->csv_quote = '"';
		s->csv_header = true;
		s->rows_per_second = 10000;
		s->number_of_rows = INT64_MIN; /* not given: no end */
		s->line = line_of(m);
		floe_strmap_init(&s->gen_fields);
		floe_strmap_init(&s->kafka_props);
		floe_strmap_init(&s->metadata);
		floe_strmap_init(&s->aws_props);
		s->kinesis_max_records = 10000;
		s->kinesis_interval_ms = 200;
		s->kinesis_discovery_ms = 10000;
		s->iceberg_start = FLOE_START_TABLE_THEN_INCREMENTAL;
		s->iceberg_start_snapshot = -1;
		s->iceberg_start_ts = -1;
		c->n_sources = i + 1;
		snprintf(where, sizeof(where), " in source %zu", i + 1);
		if ((rc = walk_map(x, source_keys, s, m, NULL, where, 1)))
			return rc;
	}
	return FLOE_OK;
}

static int parse_tables(pctx *x, yaml_node_t *v)
{
	stream_config *c = x->c;
	int rc;
	if (v->type != YAML_SEQUENCE_NODE)
		return fail_at(x, v, "'tables' must be a list");
	if (c->tables)
		return fail_at(x, v, "'tables' is given twice");
	size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n > 1000)
		return fail_at(x, v, "too many tables");
	c->tables = floe_arena_calloc(&c->arena, n ? n : 1, sizeof(stream_table_cfg));
	if (!c->tables)
		return floe_error_oom(x->err);
	for (size_t i = 0; i < n; i++) {
		stream_table_cfg *t = &c->tables[i];
		yaml_node_t *m = node(x, v->data.sequence.items.start[i]);
		char where[64];
		if (!m)
			return fail_at(x, v, "too many nodes");
		t->distribution = STREAM_DIST_UNSET;
		t->upsert = -1;
		t->write_mode = -1;
		t->maint.commit_count = 10;
		t->maint.data_file_count = 1000;
		t->maint.data_file_size = INT64_C(100) << 30;
		t->maint.interval_ms = 600000;
		t->maint.rate_limit_ms = 60000;
		t->maint.lock_check_delay_ms = 30000;
		t->maint.on_finish = true;
		t->maint.target_file_size = -1;
		t->maint.min_input_files = 5;
		t->maint.max_rewrite_bytes = -1;
		t->maint.max_snapshot_age_ms = -1;
		t->maint.retain_last = -1;
		t->maint.orphan_min_age_ms = -1;
		t->maint.orphan_interval_ms = 86400000;
		t->route_max_tables = 100;
		t->line = line_of(m);
		floe_strmap_init(&t->properties);
		c->n_tables = i + 1;
		snprintf(where, sizeof(where), " in table %zu", i + 1);
		if ((rc = walk_map(x, table_keys, t, m, NULL, where, 1)))
			return rc;
	}
	return FLOE_OK;
}

/* A password written into the URI is refused: it belongs in the environment. */
static int check_uri_secret(stream_config *c, const char *raw, floe_error *err)
{
	const char *p = strstr(raw, "://");
	if (!p)
		return FLOE_OK;
	p += 3;
	const char *slash = strchr(p, '/');
	const char *at = strchr(p, '@');
	if (!at || (slash && at > slash))
		return FLOE_OK;
	const char *colon = memchr(p, ':', (size_t)(at - p));
	if (colon && strncmp(colon + 1, "${", 2) != 0)
		return floe_error_set(err, FLOE_EINVAL,
				      "catalog.uri: a password must not be written in the config "
				      "file; use ${ENV_VAR}, ${secret:NAME#field} or "
				      "catalog.password-file");
	(void)c;
	return FLOE_OK;
}

static int apply_password_file(stream_config *c, floe_error *err)
{
	floe_input *in = NULL;
	floe_buf b;
	int rc;
	const char *uri = c->catalog_uri;
	if (!uri)
		return floe_error_set(err, FLOE_EINVAL, "catalog.password-file needs catalog.uri");
	floe_buf_init(&b, 65536);
	if ((rc = floe_input_file_open(&in, c->catalog_password_file, err)) ||
	    (rc = floe_input_read_all(in, &b, 65536, err))) {
		floe_input_close(in);
		floe_buf_reset(&b);
		return floe_error_prefix(err, rc, "catalog.password-file: ");
	}
	floe_input_close(in);
	size_t n = 0;
	while (n < b.len && b.data[n] != '\n' && b.data[n] != '\r')
		n++;
	const char *p = strstr(uri, "://");
	const char *at = p ? strchr(p + 3, '@') : NULL;
	const char *slash = p ? strchr(p + 3, '/') : NULL;
	if (!p || !at || (slash && at > slash) || memchr(p + 3, ':', (size_t)(at - p - 3))) {
		floe_buf_reset(&b);
		return floe_error_set(err, FLOE_EINVAL,
				      "catalog.password-file: catalog.uri must name a user "
				      "(postgresql://user@host/db) and no password");
	}
	floe_buf enc;
	floe_buf_init(&enc, 65536);
	rc = floe_urlencode_path(&enc, (const char *)b.data, n);
	const char *full = rc ? NULL
			      : floe_arena_sprintf(&c->arena, "%.*s:%s%s", (int)(at - uri), uri,
						   floe_buf_cstr(&enc), at);
	floe_buf_reset(&enc);
	floe_buf_reset(&b);
	if (!full)
		return floe_error_oom(err);
	c->catalog_uri = full;
	return FLOE_OK;
}

static bool ident_ok(const char *s)
{
	return s && *s && strchr(s, '.') && s[0] != '.' && s[strlen(s) - 1] != '.';
}

static int check_maint(stream_maint_cfg *m, const stream_table_cfg *t, int64_t ckpt_ms,
		       floe_error *err)
{
	m->step_bits = FLOE_STEP_ALL;
	if (m->steps && !floe_maintain_parse_steps(m->steps, &m->step_bits))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': maintenance.steps: '%s' is not a list of "
				      "compact, expire, orphans, manifests",
				      t->line, t->name, m->steps);
	if (m->commit_count < 0 || m->data_file_count < 0 || m->pos_delete_file_count < 0 ||
	    m->eq_delete_file_count < 0)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': maintenance.schedule counts must be >= 0",
				      t->line, t->name);
	if (m->min_input_files < 1 || m->min_input_files > INT_MAX)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': maintenance.compact.min-input-files must be "
				      ">= 1",
				      t->line, t->name);
	if (m->max_commits < 0 || m->max_commits > INT_MAX)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': maintenance.compact.partial-progress."
				      "max-commits must be >= 0",
				      t->line, t->name);
	/* the pipeline's own files wait up to a checkpoint interval (and the
	 * commit) before a snapshot reaches them: a young file is not an orphan */
	int64_t floor_ms = ckpt_ms > 1800000 ? 2 * ckpt_ms : 3600000;
	if (m->orphan_min_age_ms >= 0 && m->orphan_min_age_ms < floor_ms)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': maintenance.orphans.min-age must be at "
				      "least %lld s in a pipeline (younger files may belong to a "
				      "checkpoint that is not committed yet)",
				      t->line, t->name, (long long)(floor_ms / 1000));
	if (m->retain_last != -1 && (m->retain_last < 1 || m->retain_last > INT_MAX))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': maintenance.expire.retain-last must be >= 1",
				      t->line, t->name);
	return FLOE_OK;
}

/* An iceberg source's keys (and no iceberg key on another source). */
static int check_iceberg(stream_source_cfg *s, floe_error *err)
{
	bool ice = s->type == STREAM_SRC_ICEBERG;
	if (!ice && (s->watermark_column || s->watermark_unit_ns))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': watermark-column is for iceberg sources",
				      s->line, s->name);
	if (ice && s->watermark_unit_ns && !s->watermark_column)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': watermark-column-time-unit without "
				      "watermark-column",
				      s->line, s->name);
	if (ice && s->watermark_column && s->iceberg_mode == STREAM_ICEBERG_CHANGELOG)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': watermark-column is for read-mode: append "
				      "(a changelog's deletes have no event time to order by)",
				      s->line, s->name);
	if (s->type == STREAM_SRC_HYBRID) {
		if (!s->iceberg_table || !strchr(s->iceberg_table, '.'))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s' (hybrid) needs source-table: "
					      "namespace.table (the bootstrap)",
					      s->line, s->name);
		if (s->iceberg_mode || s->iceberg_streaming ||
		    s->iceberg_start != FLOE_START_TABLE_THEN_INCREMENTAL ||
		    s->iceberg_start_snapshot >= 0 || s->iceberg_start_ts >= 0 ||
		    s->iceberg_skip_overwrites)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': a hybrid source bootstraps from the "
					      "table scan of source-table's current snapshot (read-mode, "
					      "starting-strategy, start-snapshot-*, streaming are for "
					      "iceberg sources)",
					      s->line, s->name);
		if (s->format_name && strcmp(s->format_name, "json"))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': a hybrid source reads JSON lines "
					      "after its bootstrap",
					      s->line, s->name);
		return FLOE_OK;
	}
	if (!ice) {
		if (s->iceberg_table || s->iceberg_mode || s->iceberg_streaming ||
		    s->iceberg_start != FLOE_START_TABLE_THEN_INCREMENTAL ||
		    s->iceberg_start_snapshot >= 0 || s->iceberg_start_ts >= 0 ||
		    s->iceberg_skip_overwrites)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': source-table, read-mode, "
					      "starting-strategy, start-snapshot-*, streaming and "
					      "streaming-skip-overwrite-snapshots are for iceberg sources",
					      s->line, s->name);
		return FLOE_OK;
	}
	if (!s->iceberg_table || !strchr(s->iceberg_table, '.'))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s' (iceberg) needs source-table: "
				      "namespace.table",
				      s->line, s->name);
	if (s->format_name && strcmp(s->format_name, "json"))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': an iceberg source has no format (its rows "
				      "come as JSON)",
				      s->line, s->name);
	if ((s->iceberg_start == FLOE_START_SNAPSHOT_ID) != (s->iceberg_start_snapshot >= 0))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': start-snapshot-id goes with "
				      "starting-strategy INCREMENTAL_FROM_SNAPSHOT_ID",
				      s->line, s->name);
	if ((s->iceberg_start == FLOE_START_TIMESTAMP) != (s->iceberg_start_ts >= 0))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': start-snapshot-timestamp goes with "
				      "starting-strategy INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP",
				      s->line, s->name);
	if (s->iceberg_mode == STREAM_ICEBERG_CHANGELOG && s->iceberg_skip_overwrites)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': changelog mode reads overwrites (leave "
				      "streaming-skip-overwrite-snapshots out)",
				      s->line, s->name);
	if (s->iceberg_mode == STREAM_ICEBERG_CHANGELOG && !s->rowkind_field)
		s->rowkind_field = "_change_type";
	return FLOE_OK;
}

/* The value format by name; message sources take every registered one. */
static int check_format(stream_source_cfg *s, floe_error *err)
{
	const char *f = s->format_name ? s->format_name : "json";
	int kind = stream_source_kind(s);
	bool msgs = kind == STREAM_SRC_KAFKA || kind == STREAM_SRC_KINESIS;
	if (!strcmp(f, "json") || !strcmp(f, "jsonl")) {
		s->format = STREAM_FMT_JSONL;
	} else if (!strcmp(f, "debezium-json")) {
		/* JSON lines (or one event per message) with a change-record
		 * decoder on top */
		s->format = STREAM_FMT_JSONL;
		s->cdc = STREAM_CDC_DEBEZIUM;
	} else if (!strcmp(f, "csv")) {
		s->format = STREAM_FMT_CSV;
	} else {
		const stream_value_format *vf = stream_value_format_find(f);
		if (!vf) {
			char list[512];
			stream_value_format_names(list, sizeof(list));
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': 'format': '%s' is not one of json, "
					      "jsonl, csv, %s",
					      s->line, s->name, f, msgs ? list : "debezium-json");
		}
		if (!msgs)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': format '%s' is for kafka and kinesis "
					      "sources (files and stdin read json or csv)",
					      s->line, s->name, f);
		s->format = vf->format;
	}
	if (msgs)
		s->value_format = stream_value_format_find(
			s->format == STREAM_FMT_JSONL ? "json" : s->format == STREAM_FMT_CSV ? "csv" : f);
	return FLOE_OK;
}

/* One topic list: "a;b" items split (Flink's separator). */
static int split_topics(stream_config *c, stream_source_cfg *s, floe_error *err)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_topics; i++) {
		n++;
		for (const char *q = s->topics[i]; *q; q++)
			n += *q == ';';
	}
	const char **out = floe_arena_calloc(&c->arena, n ? n : 1, sizeof(char *));
	if (!out)
		return floe_error_oom(err);
	size_t k = 0;
	for (size_t i = 0; i < s->n_topics; i++) {
		const char *a = s->topics[i];
		for (;;) {
			const char *e = strchr(a, ';');
			size_t len = e ? (size_t)(e - a) : strlen(a);
			while (len && (*a == ' '))
				a++, len--;
			while (len && a[len - 1] == ' ')
				len--;
			if (len) {
				if (!(out[k] = floe_arena_strndup(&c->arena, a, len)))
					return floe_error_oom(err);
				for (size_t j = 0; j < len; j++) {
					char ch = out[k][j];
					if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
					      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
						return floe_error_set(err, FLOE_EINVAL,
								      "line %d: source '%s': '%s' is not a "
								      "Kafka topic name (letters, digits, '.', "
								      "'_', '-')",
								      s->line, s->name, out[k]);
				}
				k++;
			}
			if (!e)
				break;
			a = e + 1;
		}
	}
	s->topics = out;
	s->n_topics = k;
	return FLOE_OK;
}

static const char *const metadata_fields[] = {"topic",	       "partition", "offset",
					      "timestamp",     "timestamp-type", "key",
					      "headers",       NULL};

static int check_kafka(stream_source_cfg *s, floe_error *err)
{
	if (!s->n_topics == !s->topic_pattern)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s' (kafka) needs topic or topic-pattern (one "
				      "of them)",
				      s->line, s->name);
	if (!floe_strmap_get(&s->kafka_props, "properties.bootstrap.servers"))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s' (kafka) needs properties.bootstrap.servers",
				      s->line, s->name);
	if (s->startup_mode == STREAM_KAFKA_TIMESTAMP && s->startup_ts_ms < 0)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': scan.startup.mode timestamp needs "
				      "scan.startup.timestamp-millis",
				      s->line, s->name);
	if (s->startup_mode == STREAM_KAFKA_SPECIFIC && !s->specific_offsets)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': scan.startup.mode specific-offsets needs "
				      "scan.startup.specific-offsets",
				      s->line, s->name);
	if (s->specific_offsets) {
		floe_error e2;
		floe_error_clear(&e2);
		if (stream_kafka_parse_specific(s->specific_offsets, NULL, NULL, 0, NULL, &e2))
			return floe_error_set(err, FLOE_EINVAL, "line %d: source '%s': %s", s->line,
					      s->name, e2.msg);
	}
	if (s->key_format && strcmp(s->key_format, "raw") && strcmp(s->key_format, "json"))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': key.format '%s' is not raw or json",
				      s->line, s->name, s->key_format);
	if (s->format == STREAM_FMT_AVRO_CONFLUENT && !s->registry_url)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': format avro-confluent needs "
				      "avro-confluent.url (the schema registry)",
				      s->line, s->name);
	for (size_t i = 0; i < s->metadata.len; i++) {
		const char *k = s->metadata.items[i].key + strlen("metadata.");
		bool ok = false;
		for (size_t j = 0; metadata_fields[j] && !ok; j++)
			ok = !strcmp(metadata_fields[j], k);
		if (!ok)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': 'metadata.%s' is not one of "
					      "metadata.topic, .partition, .offset, .timestamp, "
					      ".timestamp-type, .key, .headers",
					      s->line, s->name, k);
		if (!*s->metadata.items[i].value)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': 'metadata.%s' needs a column name",
					      s->line, s->name, k);
	}
	return FLOE_OK;
}

static const char *const kinesis_metadata[] = {"stream", "shard-id", "sequence-number",
					       "timestamp", "key", NULL};
static const char *const aws_keys[] = {"aws.region",
				       "aws.endpoint",
				       "aws.credentials.provider",
				       "aws.credentials.basic.accesskeyid",
				       "aws.credentials.basic.secretkey",
				       "aws.credentials.profile.name",
				       "aws.credentials.profile.path",
				       NULL};
static const char *const aws_providers[] = {"AUTO",	     "BASIC",	  "ENV_VAR",  "PROFILE",
					    "WEB_IDENTITY_TOKEN", "CONTAINER", "INSTANCE", NULL};

static bool in_list(const char *const *l, const char *v)
{
	for (size_t i = 0; l[i]; i++)
		if (!strcmp(l[i], v))
			return true;
	return false;
}

static int check_kinesis(stream_source_cfg *s, floe_error *err)
{
	if (!s->kinesis_stream || !*s->kinesis_stream)
		return floe_error_set(err, FLOE_EINVAL, "line %d: source '%s' (kinesis) needs stream",
				      s->line, s->name);
	for (size_t i = 0; i < s->aws_props.len; i++) {
		const char *k = s->aws_props.items[i].key, *v = s->aws_props.items[i].value;
		if (!in_list(aws_keys, k))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': '%s' is not one of aws.region, "
					      "aws.endpoint, aws.credentials.provider, "
					      "aws.credentials.basic.accesskeyid, .secretkey, "
					      "aws.credentials.profile.name, .path",
					      s->line, s->name, k);
		if (!strcmp(k, "aws.credentials.provider") && !in_list(aws_providers, v))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': aws.credentials.provider '%s' is not "
					      "one of AUTO, BASIC, ENV_VAR, PROFILE, WEB_IDENTITY_TOKEN, "
					      "CONTAINER, INSTANCE",
					      s->line, s->name, v);
	}
	const char *prov = floe_strmap_get(&s->aws_props, "aws.credentials.provider");
	if (prov && !strcmp(prov, "BASIC") &&
	    (!floe_strmap_get(&s->aws_props, "aws.credentials.basic.accesskeyid") ||
	     !floe_strmap_get(&s->aws_props, "aws.credentials.basic.secretkey")))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': aws.credentials.provider BASIC needs "
				      "aws.credentials.basic.accesskeyid and .secretkey",
				      s->line, s->name);
	if (s->kinesis_initpos == STREAM_KINESIS_AT_TIMESTAMP) {
		const char *t = s->kinesis_initpos_ts;
		double sec;
		int64_t us;
		bool zone;
		if (!t)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': scan.stream.initpos AT_TIMESTAMP "
					      "needs scan.stream.initpos-timestamp",
					      s->line, s->name);
		if (floe_parse_double(t, strlen(t), &sec) && sec >= 0 && sec < 1e11)
			s->startup_ts_ms = (int64_t)(sec * 1000.0);
		else if (floe_parse_timestamp_us(t, strlen(t), &us, &zone) && us >= 0)
			s->startup_ts_ms = us / 1000;
		else
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': scan.stream.initpos-timestamp '%s' "
					      "is not epoch seconds or an ISO timestamp",
					      s->line, s->name, t);
	} else if (s->kinesis_initpos_ts) {
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': scan.stream.initpos-timestamp is for "
				      "scan.stream.initpos AT_TIMESTAMP",
				      s->line, s->name);
	}
	if (s->kinesis_max_records < 1 || s->kinesis_max_records > 10000)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': scan.shard.getrecords.maxrecordcount must "
				      "be 1..10000",
				      s->line, s->name);
	if (s->kinesis_interval_ms < 1 || s->kinesis_discovery_ms < 100)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': scan.shard.getrecords.intervalmillis must "
				      "be >= 1 and scan.shard.discovery.intervalmillis >= 100",
				      s->line, s->name);
	for (size_t i = 0; i < s->metadata.len; i++) {
		const char *k = s->metadata.items[i].key + strlen("metadata.");
		if (!in_list(kinesis_metadata, k))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': 'metadata.%s' is not one of "
					      "metadata.stream, .shard-id, .sequence-number, .timestamp, "
					      ".key",
					      s->line, s->name, k);
		if (!*s->metadata.items[i].value)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': 'metadata.%s' needs a column name",
					      s->line, s->name, k);
	}
	if (s->format == STREAM_FMT_AVRO_CONFLUENT && !s->registry_url)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: source '%s': format avro-confluent needs "
				      "avro-confluent.url (the schema registry)",
				      s->line, s->name);
	return FLOE_OK;
}

/* write.mode, overwrite-where and branch of one table. */
/* unknown-fields other than drop need records whose fields have names and
 * types: JSON (plain, or a change event's images). */
static int check_unknown_fields(const stream_config *c, const stream_table_cfg *t, floe_error *err)
{
	const stream_source_cfg *sc = stream_config_source(c, t->source);
	if (!sc || t->unknown_fields == STREAM_UNKNOWN_DROP)
		return FLOE_OK;
	const char *why = NULL;
	if (sc->format == STREAM_FMT_CSV)
		why = "CSV columns are matched by the header, and a header's new column carries no "
		      "type";
	else if (sc->format != STREAM_FMT_JSONL)
		why = "the record's fields are the value format's (raw is one column; an Avro "
		      "record's own schema decides its fields)";
	else if (sc->type == STREAM_SRC_GENERATOR || sc->type == STREAM_SRC_ICEBERG ||
		 sc->type == STREAM_SRC_HYBRID)
		why = "the source's rows have the table's columns";
	if (!why)
		return FLOE_OK;
	return floe_error_set(err, FLOE_EINVAL,
			      "line %d: table '%s': unknown-fields: %s needs JSON records (source '%s' "
			      "is not: %s); use drop, or floe table alter",
			      t->line, t->name,
			      t->unknown_fields == STREAM_UNKNOWN_EVOLVE ? "evolve" : "dead-letter",
			      sc->name, why);
}

static int check_write_mode(const stream_config *c, stream_table_cfg *t, floe_error *err)
{
	const stream_source_cfg *sc = stream_config_source(c, t->source);
	if (t->overwrite_where && t->write_mode == 0)
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': overwrite-where needs write.mode: overwrite",
				      t->line, t->name);
	if (t->overwrite_where && !*t->overwrite_where)
		return floe_error_set(err, FLOE_EINVAL, "line %d: table '%s': overwrite-where is empty",
				      t->line, t->name);
	if (t->overwrite_where)
		t->write_mode = 1;
	if (t->branch && (!*t->branch || strlen(t->branch) > 255))
		return floe_error_set(err, FLOE_EINVAL, "line %d: table '%s': a branch needs a name",
				      t->line, t->name);
	if (t->write_mode != 1)
		return FLOE_OK;
	if (t->upsert == 1 || (sc && (sc->cdc || sc->rowkind_field)))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': write.mode: overwrite and upserts (or change "
				      "records) together are refused: an overwrite replaces rows, an "
				      "upsert merges them",
				      t->line, t->name);
	if (sc && (stream_source_kind(sc) == STREAM_SRC_KAFKA ||
		   stream_source_kind(sc) == STREAM_SRC_KINESIS || sc->follow))
		return floe_error_set(err, FLOE_EINVAL,
				      "line %d: table '%s': write.mode: overwrite needs a bounded source "
				      "(files without follow, stdin, a generator with a count), as "
				      "Flink's overwrite is for batch jobs",
				      t->line, t->name);
	return FLOE_OK;
}

static int validate(stream_config *c, floe_error *err)
{
	if (!c->n_sources)
		return floe_error_set(err, FLOE_EINVAL, "no sources: add a 'sources' list");
	if (!c->n_tables)
		return floe_error_set(err, FLOE_EINVAL, "no tables: add a 'tables' list");
	if (!c->pipeline_id)
		c->pipeline_id = c->pipeline_name;
	if (!c->pipeline_id || !*c->pipeline_id)
		return floe_error_set(err, FLOE_EINVAL,
				      "pipeline.name is required: it identifies the pipeline's "
				      "commits across restarts");
	if (c->parallelism < 1 || c->parallelism > 256)
		return floe_error_set(err, FLOE_EINVAL, "parallelism.default must be 1..256");
	if (c->metrics_port < 0 || c->metrics_port > 65535)
		return floe_error_set(err, FLOE_EINVAL, "metrics.port must be 0..65535");
	if (c->checkpoint_interval_ms < 10)
		return floe_error_set(err, FLOE_EINVAL,
				      "execution.checkpointing.interval must be at least 10ms");
	if (c->max_buffered_blocks < 0 || c->max_buffered_blocks > 4096)
		return floe_error_set(err, FLOE_EINVAL, "pipeline.max-buffered-blocks must be 0..4096");
	if (c->atomic_commit && c->catalog_type &&
	    (!strcmp(c->catalog_type, "filesystem") || !strcmp(c->catalog_type, "glue")))
		return floe_error_set(err, FLOE_EINVAL,
				      "pipeline.atomic-commit: the %s catalog cannot commit several "
				      "tables in one transaction (use a SQL or REST catalog)",
				      c->catalog_type);
	for (size_t i = 0; i < c->n_sources; i++) {
		stream_source_cfg *s = &c->sources[i];
		if (s->n_topics) {
			int trc = split_topics(c, s, err);
			if (trc)
				return trc;
		}
		if (!s->name || !*s->name)
			return floe_error_set(err, FLOE_EINVAL, "line %d: a source needs a name", s->line);
		if (s->type < 0)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s' needs a type (files, stdin, "
					      "generator, kafka, kinesis, iceberg)",
					      s->line, s->name);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(c->sources[k].name, s->name))
				return floe_error_set(err, FLOE_EINVAL,
						      "line %d: two sources are named '%s'", s->line,
						      s->name);
		int irc = check_iceberg(s, err);
		if (irc)
			return irc;
		int kind = stream_source_kind(s);
		if (s->type != STREAM_SRC_HYBRID && s->hybrid_then != STREAM_SRC_FILES)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': then is for hybrid sources", s->line,
					      s->name);
		if (s->type == STREAM_SRC_HYBRID && kind != STREAM_SRC_FILES && s->metadata.len)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': a hybrid source takes no metadata.* "
					      "columns (its bootstrap rows have none)",
					      s->line, s->name);
		if (kind == STREAM_SRC_FILES && !s->n_paths)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s' (files) needs a path", s->line,
					      s->name);
		if (kind != STREAM_SRC_FILES && (s->n_paths || s->follow || s->pattern))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': path, pattern and follow are for "
					      "files sources",
					      s->line, s->name);
		if (s->type != STREAM_SRC_GENERATOR && (s->gen_fields.len || s->schema))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': fields.* and schema are for "
					      "generator sources",
					      s->line, s->name);
		if (s->type == STREAM_SRC_GENERATOR && s->format_name)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': a generator has no format",
					      s->line, s->name);
		int rc = check_format(s, err);
		if (rc)
			return rc;
		if (s->cdc && s->rowkind_field)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': rowkind.field is for json and csv "
					      "records (a debezium-json event has its op)",
					      s->line, s->name);
		if (!s->cdc && (s->debezium_schema_include || s->debezium_ts_column))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': debezium-json.* keys need format: "
					      "debezium-json",
					      s->line, s->name);
		if (s->type == STREAM_SRC_GENERATOR && s->rowkind_field)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': a generator makes inserts only (no "
					      "change records)",
					      s->line, s->name);
		if (kind == STREAM_SRC_KAFKA && (rc = check_kafka(s, err)))
			return rc;
		if (kind == STREAM_SRC_KINESIS && (rc = check_kinesis(s, err)))
			return rc;
		if (kind != STREAM_SRC_KINESIS && (s->kinesis_stream || s->aws_props.len))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': stream and aws.* are for kinesis "
					      "sources",
					      s->line, s->name);
		if (kind != STREAM_SRC_KAFKA &&
		    (s->n_topics || s->topic_pattern || s->kafka_props.len ||
		     (s->metadata.len && kind != STREAM_SRC_KINESIS) || s->specific_offsets ||
		     (s->registry_url && kind != STREAM_SRC_KINESIS) || s->key_format))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': topic, topic-pattern, properties.*, "
					      "metadata.*, key.format and scan.* are for kafka sources",
					      s->line, s->name);
		if (s->csv_delimiter == 0 || s->csv_delimiter == '\n' || s->csv_delimiter == s->csv_quote)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': bad csv.field-delimiter", s->line,
					      s->name);
		if (s->block_bytes < 4096 || s->block_bytes > ((int64_t)256 << 20))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': block-size must be 4KiB..256MiB",
					      s->line, s->name);
		if (s->max_record_bytes > ((int64_t)1 << 30))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': max-record-size is at most 1GiB",
					      s->line, s->name);
		if (s->rows_per_second < 0)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: source '%s': rows-per-second must be >= 0",
					      s->line, s->name);
	}
	for (size_t i = 0; i < c->n_tables; i++) {
		stream_table_cfg *t = &c->tables[i];
		if (!ident_ok(t->name))
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: a table needs a name like namespace.table",
					      t->line);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(c->tables[k].name, t->name))
				return floe_error_set(err, FLOE_EINVAL,
						      "line %d: table '%s' is listed twice", t->line,
						      t->name);
		if (!t->source) {
			if (c->n_sources != 1)
				return floe_error_set(err, FLOE_EINVAL,
						      "line %d: table '%s' needs a source (there are "
						      "%zu)",
						      t->line, t->name, c->n_sources);
			t->source = c->sources[0].name;
		}
		if (!stream_config_source(c, t->source))
			return floe_error_set(err, FLOE_EINVAL, "line %d: table '%s': no source named '%s'",
					      t->line, t->name, t->source);
		if (t->format_version < 0 || t->format_version > 3)
			return floe_error_set(err, FLOE_EINVAL,
					      "line %d: table '%s': format-version must be 1, 2 or 3",
					      t->line, t->name);
		int rc = check_unknown_fields(c, t, err);
		if (rc)
			return rc;
		rc = stream_route_parse_template(t, &c->arena, c, err);
		if (rc || (rc = check_maint(&t->maint, t, c->checkpoint_interval_ms, err)) ||
		    (rc = check_write_mode(c, t, err)))
			return rc;
	}
	int orc = stream_route_check_overlap(c, err);
	if (orc)
		return orc;
	for (size_t i = 0; i < c->n_sources; i++) {
		bool used = false;
		for (size_t k = 0; k < c->n_tables; k++)
			used = used || !strcmp(c->tables[k].source, c->sources[i].name);
		if (!used)
			return floe_error_set(err, FLOE_EINVAL, "line %d: source '%s' feeds no table",
					      c->sources[i].line, c->sources[i].name);
	}
	c->has_catalog = c->catalog_uri || c->catalog_type || c->catalog_warehouse ||
			 c->catalog_props.len;
	if (c->catalog_password_file)
		return apply_password_file(c, err);
	return FLOE_OK;
}

const stream_source_cfg *stream_config_source(const stream_config *c, const char *name)
{
	for (size_t i = 0; i < c->n_sources; i++)
		if (!strcmp(c->sources[i].name, name))
			return &c->sources[i];
	return NULL;
}

void stream_config_free(stream_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_sources; i++) {
		floe_strmap_reset(&c->sources[i].gen_fields);
		floe_strmap_reset(&c->sources[i].kafka_props);
		floe_strmap_reset(&c->sources[i].aws_props);
		floe_strmap_reset(&c->sources[i].metadata);
	}
	for (size_t i = 0; i < c->n_tables; i++)
		if (!c->tables[i].route_template) /* a template's tables share its map */
			floe_strmap_reset(&c->tables[i].properties);
	for (size_t i = 0; i < c->n_routes; i++)
		floe_strmap_reset(&c->routes[i].properties);
	floe_strmap_reset(&c->catalog_props);
	floe_arena_reset(&c->arena);
	floe_free(c);
}

/* The raw text of catalog.uri (before ${} expansion) for the secret check. */
static const char *raw_uri(pctx *x, yaml_node_t *root, int depth)
{
	if (!root || root->type != YAML_MAPPING_NODE || depth > 2)
		return NULL;
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = node(x, pr->key), *v = node(x, pr->value);
		if (!k || !v || k->type != YAML_SCALAR_NODE)
			continue;
		const char *ks = (const char *)k->data.scalar.value;
		if (depth == 0 && !strcmp(ks, "catalog.uri") && v->type == YAML_SCALAR_NODE)
			return (const char *)v->data.scalar.value;
		if (depth == 0 && !strcmp(ks, "catalog"))
			return raw_uri(x, v, 1);
		if (depth == 1 && !strcmp(ks, "uri") && v->type == YAML_SCALAR_NODE)
			return (const char *)v->data.scalar.value;
	}
	return NULL;
}

int stream_config_parse_yaml(stream_config **out, const char *text, size_t n, const char *base_dir,
			     floe_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	stream_config *c;
	pctx x;
	int rc = FLOE_OK;
	bool have_doc = false;
	*out = NULL;
	if (n > CONFIG_MAX_BYTES)
		return floe_error_set(err, FLOE_EINVAL, "configuration is larger than 1 MiB");
	c = floe_calloc(1, sizeof(*c));
	if (!c)
		return floe_error_oom(err);
	floe_arena_init(&c->arena, 16384);
	floe_strmap_init(&c->catalog_props);
	c->checkpoint_interval_ms = 10000;
	c->parallelism = floe_cpu_count() > 16 ? 16 : floe_cpu_count();
	c->errors = STREAM_ERRORS_DEAD_LETTER;
	c->metrics_bind = "127.0.0.1";
	c->memory_budget = (int64_t)32 << 20;
	if (!yaml_parser_initialize(&parser)) {
		floe_free(c);
		return floe_error_oom(err);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, n);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = floe_error_set(err, FLOE_EINVAL, "line %d column %d: YAML: %s",
				    (int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1,
				    parser.problem ? parser.problem : "syntax error");
		goto done;
	}
	have_doc = true;
	x.c = c;
	x.doc = &doc;
	x.err = err;
	x.visits = 0;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		rc = floe_error_set(err, FLOE_EINVAL, "the configuration is empty");
		goto done;
	}
	const char *ru = raw_uri(&x, root, 0);
	x.visits = 0;
	if (ru && (rc = check_uri_secret(c, ru, err)))
		goto done;
	if ((rc = walk_map(&x, pipeline_keys, c, root, NULL, "", 0)))
		goto done;
	if (base_dir && !(c->base_dir = floe_arena_strdup(&c->arena, base_dir))) {
		rc = floe_error_oom(err);
		goto done;
	}
	if (!c->dead_letter_path)
		c->dead_letter_path = "dead-letter.jsonl";
	if (c->dead_letter_path[0] != '/' && c->base_dir) {
		const char *p = floe_arena_sprintf(&c->arena, "%s/%s", c->base_dir, c->dead_letter_path);
		if (!p) {
			rc = floe_error_oom(err);
			goto done;
		}
		c->dead_letter_path = p;
	}
	rc = validate(c, err);
done:
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc) {
		stream_config_free(c);
		return rc;
	}
	*out = c;
	return FLOE_OK;
}

static const char *type_doc(ktype t)
{
	switch (t) {
	case K_STR:
		return "string";
	case K_BOOL:
		return "bool";
	case K_INT:
		return "integer";
	case K_DURATION:
		return "duration";
	case K_SIZE:
		return "size";
	case K_ENUM:
		return "enum";
	case K_CHAR:
		return "character";
	case K_STRLIST:
		return "string or list";
	case K_MAP:
		return "mapping";
	case K_PREFIX:
		return "keys below";
	default:
		return "list";
	}
}

static int ref_table(floe_buf *out, const char *title, const keydef *defs)
{
	int rc = floe_buf_printf(out, "\n### %s\n\n| key | type | default | meaning |\n|---|---|---|---|\n",
				 title);
	for (const keydef *d = defs; d->key && !rc; d++) {
		rc = floe_buf_printf(out, "| `%s%s` | %s | %s | ", d->key,
				     d->type == K_PREFIX ? ".*" : "", type_doc(d->type),
				     d->dflt && *d->dflt ? d->dflt : "");
		if (!rc && d->type == K_ENUM) {
			rc = floe_buf_puts(out, "one of ");
			for (size_t i = 0; d->names[i] && !rc; i++)
				rc = floe_buf_printf(out, "%s`%s`", i ? ", " : "", d->names[i]);
			rc = rc ? rc : floe_buf_puts(out, ": ");
		}
		rc = rc ? rc : floe_buf_printf(out, "%s |\n", d->doc);
	}
	return rc;
}

int stream_config_reference(floe_buf *out)
{
	int rc = ref_table(out, "Pipeline keys", pipeline_keys);
	rc = rc ? rc : ref_table(out, "Source keys (each item of `sources`)", source_keys);
	rc = rc ? rc : ref_table(out, "Table keys (each item of `tables`)", table_keys);
	return rc;
}
