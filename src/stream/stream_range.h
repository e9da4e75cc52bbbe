/*
 * stream_range.h — RANGE distribution (Flink's DataStatisticsCoordinator and
 * MapRangePartitioner, written for floe).
 *
 * Every writer task counts, per checkpoint, the sort key of the rows it
 * routes (an order-preserving byte string: the partition tuple, then the
 * table's sort-order fields) in a stream_range_stats: a count map while the
 * keys are few, a reservoir sample of keys past STREAM_RANGE_MAP_CAP distinct
 * keys. At the checkpoint barrier the coordinator merges the tasks' statistics
 * and computes a stream_range_assign, used from the next checkpoint on:
 * a target weight per task (total / tasks); keys walked in key order fill the
 * tasks one after another, so small keys share a task and a key heavier than
 * what is left of a task is split over the next tasks by weight. With a
 * sample, the same walk over the sampled keys gives range bounds: a key not in
 * the statistics goes where its position in key order falls.
 */
#ifndef FLOE_STREAM_RANGE_H
#define FLOE_STREAM_RANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floe/common.h"
#include "iceberg/value.h"

#define STREAM_RANGE_KEY_MAX 48   /* bytes of a key kept (a longer key is cut: order holds) */
#define STREAM_RANGE_MAP_CAP 1024 /* distinct keys counted before a sample */
#define STREAM_RANGE_SAMPLE 1024  /* keys in a sample */

typedef struct stream_range_key {
	uint8_t n;
	uint8_t b[STREAM_RANGE_KEY_MAX];
} stream_range_key;

typedef struct stream_range_stats {
	bool sampled;
	/* map: open addressing, slots of keys with counts; sample: keys[0..n)
	 * each standing for weight rows */
	stream_range_key *keys;
	int64_t *counts;
	size_t n, slots;
	int64_t total; /* rows seen */
	uint64_t rng;
} stream_range_stats;

/* One key of an assignment and the tasks it goes to (cumulative weights). */
typedef struct stream_range_entry {
	stream_range_key key;
	int first;     /* index into tasks/cum */
	int n_tasks;   /* > 1: a split key */
} stream_range_entry;

typedef struct stream_range_assign {
	int tasks;
	stream_range_entry *e; /* sorted by key */
	size_t n;
	int *task;   /* per entry slot: task */
	double *cum; /* per entry slot: cumulative share of the key in (0, 1] */
	size_t n_slots;
	int64_t *weight; /* per task: assigned weight (for tests and logs) */
	bool from_sample;
} stream_range_assign;

void stream_range_stats_init(stream_range_stats *s);
void stream_range_stats_free(stream_range_stats *s);
void stream_range_stats_reset(stream_range_stats *s); /* keeps the memory */
int stream_range_stats_add(stream_range_stats *s, const stream_range_key *k, int64_t n) FLOE_WUR;
/* dst += src (a map past the cap, or either a sample: a sample) */
int stream_range_stats_merge(stream_range_stats *dst, const stream_range_stats *src) FLOE_WUR;

/* The assignment of the merged statistics over tasks (NULL when they are empty). */
int stream_range_assign_new(stream_range_assign **out, const stream_range_stats *s,
			    int tasks) FLOE_WUR;
void stream_range_assign_free(stream_range_assign *a);
/* The task of key k; seq is the caller's row counter (a split key's rows go
 * to its tasks in turn by weight). */
int stream_range_route(const stream_range_assign *a, const stream_range_key *k, uint64_t *seq);

/* Key encoding (order-preserving bytes). */
void stream_range_key_clear(stream_range_key *k);
void stream_range_key_append(stream_range_key *k, const floe_value *v, bool descending);
int stream_range_key_cmp(const stream_range_key *a, const stream_range_key *b);

#endif
