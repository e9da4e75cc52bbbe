/*
 * stream_decode_avro.h — Avro values in Confluent's wire format (the
 * avro-confluent value format): a 0 byte, the writer schema's id (4 bytes,
 * big-endian), then one Avro datum, the writer schema fetched from a
 * Confluent-compatible schema registry (GET <url>/schemas/ids/<id>).
 *
 * DESIGN: the datum is decoded with its writer schema (floe's resolving
 * decoder, avro/avro_datum.h) and written as JSON directed by the table's
 * column types, which the table's JSON decoder then takes (fields by name,
 * the JSON coercions; a field the writer's schema lacks is null, as in
 * Flink, whose reader schema is the table's). Schemas are cached per
 * decoder for its lifetime: a registry never changes the schema of an id.
 *
 * What goes wrong and where it goes (no record is ever dropped silently):
 *  - the record's fault (no magic byte, a truncated datum, one that does
 *    not match its schema, an id the registry does not have (404), a
 *    schema floe cannot read): FLOE_EINVAL, why says why — a dead letter;
 *    an unknown id is remembered, so it is asked for once;
 *  - the registry's (unreachable, timing out, 5xx, 429, refusing the
 *    credentials): asked again with backoff, then FLOE_EIO with why
 *    saying what it answered — the pipeline stops before the record's
 *    checkpoint, and resumes from the table's offsets when restarted.
 *
 * Thread-safety: a decoder belongs to one writer task (one thread).
 */
#ifndef FLOE_STREAM_DECODE_AVRO_H
#define FLOE_STREAM_DECODE_AVRO_H

#include "stream/stream_builder.h"

typedef struct stream_avro_opts {
	const char *url;          /* the registry (NULL: only schemas given with _put) */
	const char *user_info;    /* "user:password": HTTP basic authentication (NULL: none) */
	const char *bearer_token; /* Authorization: Bearer (NULL: none) */
	int attempts;             /* tries of one request; 0: 5 */
	int backoff_ms;           /* the wait after the first failed try, doubled after each; 0: 500 */
} stream_avro_opts;

typedef struct stream_avro_dec stream_avro_dec;

/* A decoder of rows of root (the table's row type; it and o's strings must
 * outlive the decoder). The caller owns *out (stream_avro_dec_free). */
int stream_avro_dec_new(stream_avro_dec **out, const stream_avro_opts *o, const floe_type *root,
			const stream_coerce_opts *co, floe_error *err) FLOE_WUR;
void stream_avro_dec_free(stream_avro_dec *d);

/*
 * Take body (a registry's answer to GET /schemas/ids/<id>: {"schema": "..."}
 * with an optional "schemaType") as the schema of id, as if fetched
 * (the fuzz target and the unit tests use this instead of a registry).
 * 0; FLOE_EINVAL when it is no Avro schema floe reads (why says why: records
 * of id then go to the dead letters); FLOE_ENOMEM.
 */
int stream_avro_dec_put(stream_avro_dec *d, uint32_t id, const char *body, size_t n,
			stream_reason *why) FLOE_WUR;

/*
 * Decode one value p[0..n) as one row of root. 0; FLOE_EINVAL when the
 * record does not decode (columns as before it; why says why: a dead
 * letter); FLOE_EIO when the registry could not answer (why says why; the
 * record is not at fault); FLOE_ENOMEM.
 */
int stream_avro_decode(stream_avro_dec *d, stream_col *root, const uint8_t *p, size_t n,
		       stream_reason *why) FLOE_WUR;

/* Requests sent to the registry so far (for the tests and metrics). */
int64_t stream_avro_dec_fetches(const stream_avro_dec *d);

#endif
