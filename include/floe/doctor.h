/*
 * floe/doctor.h — table health checks: what the operations guides have users
 * copy as SQL (small files, delete build-up, snapshot velocity, retention
 * that defeats compaction, storage efficiency, orphans, metadata growth,
 * commit freshness, partition cardinality, competing maintainers), measured
 * from a table's metadata and storage, each with its threshold, a severity
 * and the fix. What `floe doctor` runs.
 *
 * Every number is one a reader of the same metadata gets: the files and
 * sizes of the current snapshot as the `files` metadata table has them, the
 * snapshots as the `snapshots` table has them (docs/operations.md lists the
 * equivalent queries).
 *
 * Thread-safety: a report is immutable once made; the table is used by one
 * thread while floe_doctor_run runs.
 */
#ifndef FLOE_DOCTOR_H
#define FLOE_DOCTOR_H

#include "floe/table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum floe_health {
	FLOE_HEALTH_OK = 0,
	FLOE_HEALTH_WARN = 1,
	FLOE_HEALTH_CRITICAL = 2,
} floe_health;

/* One check's outcome. Strings live as long as the report. */
typedef struct floe_health_check {
	const char *id;        /* stable name: "small-files", "equality-deletes", ... */
	const char *title;     /* what is measured, in words */
	floe_health severity;
	double value;          /* the measured value (in unit) */
	double warn_at;        /* the threshold (warn when value passes it) */
	double critical_at;    /* the critical threshold */
	bool lower_is_worse;   /* a ratio: warn when value falls below warn_at */
	bool applicable;       /* false: not measured for this table (detail says why) */
	const char *unit;      /* "files", "bytes", "%", "snapshots/h", "s", ... */
	const char *detail;    /* where: "partition region=eu has 412 files" */
	const char *fix;       /* what to do ("" when healthy) */
} floe_health_check;

typedef struct floe_doctor_opts {
	int version;                    /* 1 */
	int64_t now_ms;                 /* -1 = the clock */
	int64_t checkpoint_interval_ms; /* -1 = inferred from the pipeline's commits */
	int64_t orphan_older_than_ms;   /* orphans counted are older than now - this (3 days, as
					   floe maintain deletes them) */
	bool scan_storage;              /* list the table location (orphans, storage ratio) */
} floe_doctor_opts;
#define FLOE_DOCTOR_OPTS_INIT {1, -1, -1, INT64_C(259200000), true}

typedef struct floe_doctor_report floe_doctor_report;

/*
 * Measure a table. *out is owned by the caller (floe_doctor_report_free).
 * Errors: those of reading the metadata, manifests and the storage listing.
 */
FLOE_EXPORT int floe_doctor_run(floe_doctor_report **out, floe_table *t, const floe_doctor_opts *opts,
				floe_error *err) FLOE_WUR;
FLOE_EXPORT void floe_doctor_report_free(floe_doctor_report *r);

/* "ns.table" (or the metadata location for a table opened by path). */
FLOE_EXPORT const char *floe_doctor_table(const floe_doctor_report *r);
FLOE_EXPORT size_t floe_doctor_n_checks(const floe_doctor_report *r);
FLOE_EXPORT const floe_health_check *floe_doctor_check(const floe_doctor_report *r, size_t i);
/* The worst severity of the report's checks. */
FLOE_EXPORT floe_health floe_doctor_severity(const floe_doctor_report *r);
FLOE_EXPORT const char *floe_health_name(floe_health h); /* "ok", "warn", "critical" */

/* One JSON object per report: {"table", "severity", "checks": [...], "stats": {...}}. */
FLOE_EXPORT int floe_doctor_write_json(const floe_doctor_report *r, floe_write_fn fn, void *payload,
				       floe_error *err) FLOE_WUR;
/*
 * A self-contained HTML page for n reports (no script, no external files):
 * the checks, and as inline SVG plots the data file size histogram against
 * the target, files / bytes / delete files / snapshots over time (from the
 * snapshot summaries), and the file count of the partitions with most files.
 */
FLOE_EXPORT int floe_doctor_write_html(const floe_doctor_report *const *reports, size_t n,
				       floe_write_fn fn, void *payload, floe_error *err) FLOE_WUR;

#ifdef __cplusplus
}
#endif
#endif
