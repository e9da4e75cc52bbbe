/*
 * stream_value_format.h — value formats of message sources (Kafka), by
 * name: how one record's value becomes one row of a table.
 *
 * DESIGN: a format is a small vtable registered under its name (the
 * source's `format` / `value.format` key): json, csv, raw and
 * avro-confluent are built in (stream_value_formats.c); another format
 * (debezium-json, a changelog format) adds one entry to the table in
 * stream_value_formats.c and nothing else changes. The runtime hands each
 * record of a message block to the table's decoder with the record's
 * metadata (key, topic, partition, offset, timestamp), then fills the
 * table's metadata columns itself (metadata.<field>: <column>), so a
 * format only decodes values.
 *
 * A decoder's state belongs to one writer task (one per task and table);
 * state shared between tasks (a schema registry's cache) is the format's
 * business and must be thread-safe.
 */
#ifndef FLOE_STREAM_VALUE_FORMAT_H
#define FLOE_STREAM_VALUE_FORMAT_H

#include "stream/stream_decode.h"
#include "stream/stream_source.h"

struct stream_source_cfg;

/* One record as a format sees it. */
typedef struct stream_msg_view {
	const uint8_t *value;
	size_t value_len;
	bool null_value; /* a tombstone */
	const uint8_t *key;
	size_t key_len;
	bool null_key;
	const char *topic;
	int32_t partition;
	int64_t offset;
	int64_t timestamp_ms;
} stream_msg_view;

/* What a decoder is opened with. */
typedef struct stream_value_ctx {
	const struct stream_source_cfg *src;
	const floe_type *root;      /* the struct each record decodes into */
	const bool *meta_cols;      /* root's top-level fields the runtime fills (may be NULL) */
	stream_coerce_opts coerce;
} stream_value_ctx;

typedef struct stream_value_format {
	const char *name;
	stream_format format; /* the source's stream_format for it */
	/* Open a decoder (*state may stay NULL). FLOE_EINVAL: the table cannot
	 * take this format (the message says why). */
	int (*open)(void **state, const stream_value_ctx *ctx, floe_error *err);
	/*
	 * Decode one record into root (one row). 0; FLOE_EINVAL when it does not
	 * fit (root's columns as before it, why says why: the record goes to the
	 * dead letters); FLOE_ENOMEM.
	 */
	int (*decode)(void *state, stream_col *root, const stream_msg_view *m, stream_reason *why);
	void (*close)(void *state);
} stream_value_format;

/* The format named name (NULL: none). */
const stream_value_format *stream_value_format_find(const char *name);
/* The message-source formats' names beyond json and csv, ", "-separated. */
void stream_value_format_names(char *out, size_t cap);

#endif
