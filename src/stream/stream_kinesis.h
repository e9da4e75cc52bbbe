/*
 * stream_kinesis.h — the Kinesis Data Streams source (ListShards,
 * GetShardIterator, GetRecords over SigV4-signed HTTP: stream_aws.h).
 *
 * Splits are shards, named "kinesis:<stream>:<shardId>". A split's
 * position is a count of the shard's records read (pos, what the tables'
 * restart skips compare) with a token saying where the next record is
 * (stream_offset.tok, recorded in floe.source-offsets as {"n": ..., "seq":
 * ...}): the sequence number of the last record read (the restart asks for
 * AFTER_SEQUENCE_NUMBER), "SHARD_END" once a closed shard was read to its
 * end, or "AT_TIMESTAMP:<ms>" for a shard started at a time (LATEST is
 * recorded as the time it was asked for, so a restart before the shard's
 * first record does not skip what came in meanwhile).
 *
 * Resharding: the shard list is read again every discovery interval; a
 * shard is read only once its parents (ParentShardId, AdjacentParentShardId)
 * are read to their ends (or are gone from the stream), so a key's records
 * keep their order across splits and merges. The initial position
 * (scan.stream.initpos) applies only to the shards of a pipeline's first
 * start; shards found later, and shards a restarted pipeline has no
 * position for, start at TRIM_HORIZON.
 *
 * One fetcher thread makes the HTTP calls and queues blocks (at most
 * queue-bytes ahead of the writers: the backpressure); next() hands them
 * out. Throttling (ProvisionedThroughputExceededException, LimitExceeded)
 * and transport errors are retried with exponential backoff; an expired
 * iterator is asked for again after the last record fetched.
 *
 * One process reads every shard of the stream (no lease table): the
 * pipeline's whole-pipeline fence keeps a second process with the same
 * pipeline id from committing.
 *
 * Thread-safety: as every source (stream_source.h); the fetcher is
 * internal.
 */
#ifndef FLOE_STREAM_KINESIS_H
#define FLOE_STREAM_KINESIS_H

#include "obs/obs_metrics.h"
#include "stream/stream_aws.h"
#include "stream/stream_source.h"

#define STREAM_KINESIS_SPLIT_PREFIX "kinesis:"

typedef enum stream_kinesis_initpos {
	STREAM_KINESIS_LATEST = 0,
	STREAM_KINESIS_TRIM_HORIZON,
	STREAM_KINESIS_AT_TIMESTAMP,
} stream_kinesis_initpos;

typedef struct stream_kinesis_opts {
	const char *stream;
	int initpos;            /* stream_kinesis_initpos */
	int64_t initpos_ts_ms;  /* AT_TIMESTAMP */
	int64_t max_records;    /* GetRecords Limit (10000) */
	int64_t interval_ms;    /* between GetRecords of a shard that had nothing (200) */
	int64_t discovery_ms;   /* between shard listings (10000) */
	size_t block_bytes;     /* a block holds about this much (1 MiB) */
	size_t max_record_bytes;
	size_t queue_bytes;     /* fetched ahead of the writers (16 MiB) */
	stream_aws_opts aws;
} stream_kinesis_opts;

int stream_source_kinesis_new(stream_source **out, const char *name, const stream_kinesis_opts *o,
			      floe_error *err) FLOE_WUR;

/* Register the source's metrics (shards being read, MillisBehindLatest,
 * retried calls, listings) with labels pipeline/source; each shard's
 * records read and MillisBehindLatest (labels stream/shard too) follow when
 * the fetcher first lists it. */
int stream_kinesis_metrics(stream_source *s, floe_metrics *m, const char *pipeline,
			   floe_error *err) FLOE_WUR;

/* Sequence numbers compared as the decimal numbers they are (<0, 0, >0). */
int stream_kinesis_seq_cmp(const char *a, const char *b);

/* One GetRecords answer, parsed. data holds each record's value, partition
 * key and sequence number (msgs[i].val_off/key_off/seq_off); msgs[].offset
 * is left 0. */
typedef struct stream_kinesis_reply {
	stream_msg *msgs;
	size_t n, cap;
	floe_buf data;
	char *next_iter;       /* NULL: the shard is closed and read to its end */
	int64_t millis_behind; /* -1 when not said */
} stream_kinesis_reply;

void stream_kinesis_reply_init(stream_kinesis_reply *r);
void stream_kinesis_reply_reset(stream_kinesis_reply *r);
int stream_kinesis_parse_records(stream_kinesis_reply *r, const char *p, size_t n,
				 size_t max_record_bytes, floe_error *err) FLOE_WUR;

#endif
