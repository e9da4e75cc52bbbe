/*
 * stream_config.h — the pipeline configuration: what `floe run
 * pipeline.yaml` reads and what `floe ingest` builds from its flags.
 *
 * DESIGN: one declarative table of keys per section (pipeline, source,
 * table) drives parsing, validation and the generated reference
 * (floe run --help-config, docs/configuration.md), as librdkafka's
 * property table does. Nested YAML maps and dotted keys are the same
 * thing ("execution: {checkpointing: {interval: 10s}}" is
 * "execution.checkpointing.interval"). An unknown key is an error naming
 * the nearest valid one. Names are Flink's and Iceberg's where they have
 * one. String values may reference the environment as ${NAME}; a password
 * written into a URI is refused (credentials come from the environment or
 * a file the config names).
 *
 * Thread-safety: a parsed config is immutable and may be shared.
 */
#ifndef FLOE_STREAM_CONFIG_H
#define FLOE_STREAM_CONFIG_H

#include "stream/stream_decode.h"
#include "stream/stream_source.h"
#include "util/str.h"

typedef enum stream_src_type {
	STREAM_SRC_FILES = 0,
	STREAM_SRC_STDIN,
	STREAM_SRC_GENERATOR,
	STREAM_SRC_KAFKA,
	STREAM_SRC_KINESIS,
	STREAM_SRC_ICEBERG,
	STREAM_SRC_HYBRID, /* an Iceberg bootstrap, then files, Kafka or Kinesis (then) */
} stream_src_type;

typedef enum stream_dist {
	STREAM_DIST_NONE = 0,
	STREAM_DIST_HASH,
	STREAM_DIST_RANGE,
	STREAM_DIST_UNSET,
} stream_dist;

/* Change records (stream_decode_cdc.h). */
typedef enum stream_cdc_kind {
	STREAM_CDC_NONE = 0,
	STREAM_CDC_DEBEZIUM, /* format: debezium-json */
} stream_cdc_kind;

/* unknown-fields: what a record's fields the table lacks do (stream_evolve.c) */
typedef enum stream_unknown {
	STREAM_UNKNOWN_DROP = 0,    /* skipped (the value is lost) */
	STREAM_UNKNOWN_EVOLVE,      /* the schema evolves first */
	STREAM_UNKNOWN_DEAD_LETTER, /* the record goes to the dead letters */
} stream_unknown;

typedef enum stream_errors {
	STREAM_ERRORS_DEAD_LETTER = 0,
	STREAM_ERRORS_FAIL,
} stream_errors;

typedef struct stream_source_cfg {
	const char *name;
	int type;   /* stream_src_type */
	int format; /* stream_format */
	const char **paths;
	size_t n_paths;
	const char *pattern;
	bool follow;
	int64_t monitor_interval_ms;
	int64_t block_bytes, max_record_bytes;
	int epoch_unit; /* stream_epoch_unit */
	/* csv */
	char csv_delimiter, csv_quote;
	bool csv_header, csv_allow_comments;
	const char *csv_null_literal;
	/* generator */
	int64_t rows_per_second, number_of_rows, seed;
	const char *schema; /* generator schema (default: the first table's) */
	floe_strmap gen_fields;
	/* change records */
	int cdc;                        /* stream_cdc_kind */
	const char *rowkind_field;      /* a column holding each record's change kind */
	bool debezium_schema_include;   /* the {"schema","payload"} envelope is required */
	const char *debezium_ts_column; /* column that receives source.ts_ms */
	/* the value format by name (json, csv, raw, avro-confluent, ...: stream_value_format.h) */
	const char *format_name;
	const struct stream_value_format *value_format; /* message sources */
	/* kafka (Flink's Kafka connector names) */
	const char **topics;
	size_t n_topics;
	const char *topic_pattern;
	floe_strmap kafka_props;   /* properties.* without the prefix: librdkafka's */
	int startup_mode;          /* stream_kafka_startup */
	int64_t startup_ts_ms;
	const char *specific_offsets; /* "partition:0,offset:42;partition:1,offset:300" */
	int bounded_mode;          /* stream_kafka_bounded */
	bool commit_offsets;       /* commit.offsets.on.checkpoint */
	const char *key_format;    /* raw (the key metadata column's bytes) */
	const char *registry_url;  /* avro-confluent.url */
	const char *registry_user_info;    /* avro-confluent.basic-auth.user-info ("user:pass") */
	const char *registry_bearer_token; /* avro-confluent.bearer-auth.token */
	floe_strmap metadata;      /* metadata.<field> -> column (topic, partition, offset, ...) */
	/* kinesis (Flink's Kinesis connector names) */
	const char *kinesis_stream;
	int kinesis_initpos;       /* stream_kinesis_initpos */
	const char *kinesis_initpos_ts; /* epoch seconds or an ISO timestamp -> startup_ts_ms */
	int64_t kinesis_max_records, kinesis_interval_ms, kinesis_discovery_ms;
	floe_strmap aws_props;     /* aws.region, aws.endpoint, aws.credentials.* */
	/* iceberg (Flink's IcebergSource names) */
	const char *iceberg_table;  /* source-table */
	int iceberg_mode;           /* stream_iceberg_mode (read-mode) */
	int iceberg_start;          /* floe_scan_start (starting-strategy) */
	int64_t iceberg_start_snapshot, iceberg_start_ts;
	bool iceberg_streaming;
	bool iceberg_skip_overwrites;
	int hybrid_then;              /* hybrid: STREAM_SRC_FILES, _KAFKA or _KINESIS (then) */
	const char *watermark_column; /* watermark-column */
	int watermark_unit_ns;        /* watermark-column-time-unit, in ns (a TimeUnit) */
	int line;
} stream_source_cfg;

typedef enum stream_kafka_startup {
	STREAM_KAFKA_GROUP_OFFSETS = 0,
	STREAM_KAFKA_EARLIEST,
	STREAM_KAFKA_LATEST,
	STREAM_KAFKA_TIMESTAMP,
	STREAM_KAFKA_SPECIFIC,
} stream_kafka_startup;

typedef enum stream_kafka_bounded {
	STREAM_KAFKA_UNBOUNDED = 0,
	STREAM_KAFKA_BOUNDED_LATEST, /* stop at the end offsets seen when a partition is assigned */
} stream_kafka_bounded;

/* Maintenance embedded in the pipeline (maintenance.* keys of a table). */
typedef struct stream_maint_cfg {
	int mode;          /* 0 off, 1 auto */
	const char *steps; /* "compact,expire,orphans,manifests" */
	unsigned step_bits;
	int64_t commit_count, data_file_count, data_file_size, pos_delete_file_count,
		eq_delete_file_count, interval_ms, rate_limit_ms, lock_check_delay_ms;
	bool on_finish;
	int64_t target_file_size, min_input_files, max_rewrite_bytes, max_commits;
	bool sort;
	int64_t max_snapshot_age_ms, retain_last, orphan_min_age_ms, orphan_interval_ms;
	const char *lock_uri;
} stream_maint_cfg;

typedef struct stream_table_cfg {
	const char *name; /* "namespace.table" */
	const char *source;
	const char *schema;       /* used when floe creates the table */
	const char *partition_by; /* "day(ts), bucket(16, id)" */
	const char *sort_by;
	int format_version;
	const char *location;
	floe_strmap properties; /* Iceberg table properties (create) */
	const char *filter;     /* route: rows that match go to this table */
	int distribution;       /* stream_dist; UNSET: write.distribution-mode, else none */
	int upsert;             /* upsert-enabled: 1, 0, -1 = write.upsert.enabled */
	const char *equality_fields; /* equality-field-columns (NULL: identifier fields) */
	int write_mode;              /* write.mode: 0 append, 1 overwrite, -1 unset */
	const char *overwrite_where; /* overwrite-where: a filtered overwrite (NULL: dynamic) */
	const char *branch;          /* branch: the branch commits go to (NULL: main) */
	stream_maint_cfg maint;
	int unknown_fields; /* stream_unknown */
	/* dynamic routing (stream_route.c): a name with one {field} is a
	 * template; the table of a record is the name with the record's value
	 * of the field in it, created on first use. The parsed template: */
	const char *route_field;  /* NULL: not a template */
	const char *route_ns;     /* the namespace (literal) */
	const char *route_prefix; /* of the table's name, before {field} */
	const char *route_suffix; /* after it */
	int64_t route_max_tables; /* route.max-tables: tables the template may have */
	const char **route_known; /* the template's existing tables' values, sorted */
	size_t n_route_known;
	/* a table the template expanded to (stream_route_expand): its value */
	const char *route_value;
	const char *route_template; /* the template's name */
	int line;
	/* not from the YAML: a computed projection its caller attaches before
	 * opening the pipeline (floe sql; stream_project.h), or NULL */
	const struct stream_project *project;
} stream_table_cfg;

typedef struct stream_config {
	floe_arena arena; /* every string */
	const char *pipeline_id;
	const char *pipeline_name;
	int64_t checkpoint_interval_ms;
	int64_t min_pause_ms;
	int64_t parallelism;
	int errors; /* stream_errors */
	const char *dead_letter_path;
	int64_t metrics_port;
	const char *metrics_bind;
	int64_t memory_budget;
	int64_t max_buffered_blocks;
	/* pipeline.atomic-commit: all tables of a checkpoint in one catalog
	 * transaction (SQL and REST catalogs) */
	bool atomic_commit;
	/* catalog (optional: else the command's catalog) */
	const char *catalog_type, *catalog_uri, *catalog_name, *catalog_warehouse;
	const char *catalog_password_file;
	/* catalog.properties.<key>: REST/Glue/S3 catalog properties, stored
	 * with the "catalog.properties." prefix */
	floe_strmap catalog_props;
	bool has_catalog;
	stream_source_cfg *sources;
	size_t n_sources;
	stream_table_cfg *tables;
	size_t n_tables;
	/* table templates (dynamic routing): moved out of tables by
	 * stream_route_expand, which puts their existing tables in */
	stream_table_cfg *routes;
	size_t n_routes;
	const char *base_dir; /* relative paths resolve against it */
} stream_config;

/*
 * Parse YAML text (at most 1 MiB). base_dir: where relative paths in it
 * point from (NULL: the working directory). FLOE_EINVAL with "line N: ..."
 * for unknown keys, bad values and missing required ones.
 */
int stream_config_parse_yaml(stream_config **out, const char *text, size_t n, const char *base_dir,
			     floe_error *err) FLOE_WUR;
void stream_config_free(stream_config *c);

/* The reference of every key as Markdown tables (docs, --help-config). */
int stream_config_reference(floe_buf *out) FLOE_WUR;

/* stream_route.c: parse a table's name template (a name with a {field});
 * a name without one is left alone. */
int stream_route_parse_template(stream_table_cfg *t, floe_arena *a, const stream_config *c,
				floe_error *err) FLOE_WUR;
/* Refuse templates (and listed tables) that may name the same table. */
int stream_route_check_overlap(const stream_config *c, floe_error *err) FLOE_WUR;
/* Can a record's value be part of a table name (1-64 of a-z, 0-9, _)? */
bool stream_route_value_ok(const char *v, size_t n);

/* Source/table by name (NULL when absent). */
const stream_source_cfg *stream_config_source(const stream_config *c, const char *name);
/* What the source reads records from: its type, a hybrid's second source
 * (its bootstrap rows are JSON lines like a file's). */
static inline int stream_source_kind(const stream_source_cfg *s)
{
	return s->type == STREAM_SRC_HYBRID ? s->hybrid_then : s->type;
}

#endif
