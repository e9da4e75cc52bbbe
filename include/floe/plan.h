/*
 * floe/plan.h — predict what a pipeline will do to its tables before it
 * runs: files per commit, files per day, average file size, snapshots,
 * manifests, equality deletes, storage after N days and the object-store
 * requests and their cost, with and without the maintenance it configures;
 * and lint the configuration against the known anti-patterns. What
 * `floe plan pipeline.yaml` runs.
 *
 * DESIGN: the small-files arithmetic of the operations guides. A checkpoint
 * of N records commits, per table, one file per writer and partition the
 * writer saw (distribution none) or one per partition (hash), more where a
 * file passes the target size; range (the partitions in key order filling
 * the writers up to an equal share) adds one file per writer boundary that
 * falls inside a partition. Partitions are drawn with a Zipf law of the
 * given skew (0 = uniform), so a writer sees partition i in a checkpoint with
 * probability 1 - (1 - p_i)^n. Time partitions (year..hour) of a stream are
 * the current one: they count once.
 *
 * Thread-safety: a plan is immutable once made.
 */
#ifndef FLOE_PLAN_H
#define FLOE_PLAN_H

#include "floe/doctor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floe_plan_opts {
	int version;             /* 1 */
	double rate;             /* records per second into each table; < 0 = the generator's
				    rows-per-second, else 20,000 */
	double record_size;      /* bytes per record (300) */
	double compression;      /* Parquet bytes per record byte (0.3) */
	int64_t partitions;      /* partitions written to; < 0 = from the spec (bucket N x
				    identity 10), time transforms count once */
	double skew;             /* Zipf exponent of the partition sizes (0 = uniform) */
	double update_ratio;     /* share of records that replace a key (an equality delete each) */
	int days;                /* horizon of the cumulative figures (7) */
	const char *equality_fields; /* "id,region": the upsert key (NULL: none) */
	int64_t parallelism;     /* < 1 = the config's */
	double put_price;        /* $ per 1,000 PUT/COPY/POST/LIST (0.005) */
	double get_price;        /* $ per 1,000 GET (0.0004) */
	double storage_price;    /* $ per GB-month (0.023) */
} floe_plan_opts;
#define FLOE_PLAN_OPTS_INIT {1, -1, 300, 0.3, -1, 0, 0, 7, NULL, 0, 0.005, 0.0004, 0.023}

typedef struct floe_plan floe_plan;

/*
 * Predict and lint the pipeline of a YAML configuration (floe/pipeline.h's
 * format; nothing is opened). FLOE_EINVAL for a configuration floe run
 * would refuse (the message names the line). *out: floe_plan_free.
 */
FLOE_EXPORT int floe_plan_run(floe_plan **out, const char *yaml, size_t n, const floe_plan_opts *opts,
			      floe_error *err) FLOE_WUR;
FLOE_EXPORT void floe_plan_free(floe_plan *p);

/* The worst severity of the lints. */
FLOE_EXPORT floe_health floe_plan_severity(const floe_plan *p);

/* The assumptions, the predictions per table (without and with maintenance)
 * and the lints: as text (json false) or one JSON object. */
FLOE_EXPORT int floe_plan_write(const floe_plan *p, bool json, floe_write_fn fn, void *payload,
				floe_error *err) FLOE_WUR;

#ifdef __cplusplus
}
#endif
#endif
