/*
 * stream_kafka.h — the Kafka source (librdkafka's high-level consumer).
 *
 * Splits are topic partitions, named "kafka:<topic>:<partition>", and a
 * split's position is the offset of the next record to read (Kafka's
 * committed-offset convention). Blocks are runs of records of one
 * partition (stream_msg) holding librdkafka's messages (values and keys
 * are not copied; the writer that decoded a block destroys them); a block
 * is cut at block-size bytes, at 10,000 records, or when the consumer has
 * nothing more.
 *
 * Partitions come from the consumer group (properties.group.id, by default
 * the pipeline id): N processes with the same group share a topic's
 * partitions. The source never decides where a partition starts on its
 * own: when partitions are assigned it asks the pipeline (hooks.assigned),
 * which finds each partition's newest committed offset in the tables
 * (src/stream/README.md, "Kafka"); only a partition no table ever
 * committed starts from scan.startup.mode. Before partitions are revoked
 * it asks the pipeline to commit what it holds (hooks.revoking: a
 * checkpoint now), so a partition's records are committed by the process
 * that read them or read again by the next owner, never both.
 *
 * Backpressure: while the writers are full the coordinator does not call
 * next(), so the source does not consume; librdkafka's prefetch queue is
 * bounded by queued.max.messages.kbytes (floe's default 8 MiB), and
 * fetching stops there.
 *
 * Thread-safety: as every source (stream_source.h): the coordinator
 * drives it; ack() comes from the committer; the metrics callbacks from
 * the HTTP thread.
 */
#ifndef FLOE_STREAM_KAFKA_H
#define FLOE_STREAM_KAFKA_H

#include "obs/obs_metrics.h"
#include "stream/stream_source.h"

#define STREAM_KAFKA_SPLIT_PREFIX "kafka:"

typedef struct stream_kafka_hooks {
	/*
	 * Partitions were assigned: for each split, *pos = where it resumes
	 * (its committed offset in the tables) or -1 when no table committed it.
	 * Called on the coordinator thread, inside next().
	 */
	int (*assigned)(void *payload, const char *const *splits, size_t n, int64_t *pos,
			floe_error *err);
	/* Partitions are about to be revoked: commit everything read so far
	 * (a checkpoint, waited for). Inside next(). */
	int (*revoking)(void *payload, const char *const *splits, size_t n, floe_error *err);
	void *payload;
} stream_kafka_hooks;

typedef struct stream_kafka_opts {
	const char *const *topics;
	size_t n_topics;
	const char *topic_pattern;   /* a regular expression (instead of topics) */
	const floe_strmap *props;    /* "properties.<librdkafka key>" -> value */
	const char *group_id;        /* when properties.group.id is not given */
	int startup_mode;            /* stream_kafka_startup */
	int64_t startup_ts_ms;
	const char *specific_offsets;
	int bounded_mode;            /* stream_kafka_bounded */
	bool commit_offsets;         /* commit.offsets.on.checkpoint */
	size_t block_bytes;
	size_t max_record_bytes;
	bool want_headers;           /* a table reads metadata.headers (else they are not copied) */
	stream_kafka_hooks hooks;
} stream_kafka_opts;

int stream_source_kafka_new(stream_source **out, const char *name, const stream_kafka_opts *o,
			    floe_error *err) FLOE_WUR;

/* Register the source's metrics (assigned partitions, rebalances, total
 * lag; per partition as it is assigned: lag, position, the offset of the
 * latest table commit) with labels pipeline/source (and topic/partition). */
int stream_kafka_metrics(stream_source *s, floe_metrics *m, const char *pipeline,
			 floe_error *err) FLOE_WUR;

/*
 * Parse scan.startup.specific-offsets ("partition:0,offset:42;partition:1,
 * offset:300"): up to cap pairs into part/off (NULL, 0 to only check); *n
 * (optional) receives the count. FLOE_EINVAL naming the bad item.
 */
int stream_kafka_parse_specific(const char *s, int32_t *part, int64_t *off, size_t cap, size_t *n,
				floe_error *err) FLOE_WUR;

/* "kafka:<topic>:<partition>" -> topic (copied into t, cap bytes) and partition. */
bool stream_kafka_split_parse(const char *split, char *t, size_t cap, int32_t *partition);

#endif
