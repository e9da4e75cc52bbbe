/*
 * doctor_int.h — what floe doctor measured of a table (doctor.c) and what
 * its report writers (doctor_report.c) draw from.
 */
#ifndef FLOE_MAINTAIN_DOCTOR_INT_H
#define FLOE_MAINTAIN_DOCTOR_INT_H

#include "floe/doctor.h"
#include "util/alloc.h"

#define FLOE_DOCTOR_MAX_CHECKS 24
#define FLOE_DOCTOR_SIZE_BINS 10

/* Upper edges of the file size histogram's bins (the last is open). */
extern const int64_t floe_doctor_bin_edges[FLOE_DOCTOR_SIZE_BINS - 1];

typedef struct floe_doctor_part {
	const char *name; /* "region=eu" ("" unpartitioned), in the report's arena */
	int64_t data_files, eq_files, pos_files, data_bytes, data_records, delete_records;
} floe_doctor_part;

typedef struct floe_doctor_point {
	int64_t ts_ms;
	int64_t data_files, delete_files, bytes, records; /* totals after the snapshot; -1 unknown */
	int64_t snapshots; /* snapshots up to this one (of those kept) */
} floe_doctor_point;

typedef struct floe_doctor_stats {
	int64_t data_files, data_bytes, data_records;
	int64_t eq_files, pos_files, eq_records, pos_records, delete_bytes;
	int64_t small_files; /* data files under 32 MiB */
	int64_t size_bins[FLOE_DOCTOR_SIZE_BINS];
	int64_t target_file_size;
	int64_t snapshots, manifests, manifest_bytes, delete_manifests;
	int64_t metadata_bytes;
	double snapshots_per_hour;
	int64_t last_commit_ms, last_pipeline_commit_ms, checkpoint_interval_ms;
	int64_t max_snapshot_age_ms, min_snapshots_to_keep;
	bool storage_scanned;
	int64_t storage_files, storage_bytes;     /* everything under the location */
	int64_t reachable_data_bytes;             /* data and delete files any snapshot reaches */
	int64_t orphan_files, orphan_bytes;       /* unreached, older than the cutoff */
	int64_t young_orphan_files, young_orphan_bytes;
	int64_t orphan_data_bytes;                /* of all orphans, those outside metadata/ */
} floe_doctor_stats;

struct floe_doctor_report {
	floe_arena arena;
	const char *table;
	floe_health_check checks[FLOE_DOCTOR_MAX_CHECKS];
	size_t n_checks;
	floe_doctor_stats st;
	floe_doctor_part *parts; /* sorted by data files, most first */
	size_t n_parts;
	floe_doctor_point *points; /* by time */
	size_t n_points;
};

#endif
