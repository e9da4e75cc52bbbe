/*
 * obs_metrics.h — a metrics registry (counters, gauges, histograms with
 * labels) rendered in the Prometheus text exposition format, and an HTTP
 * endpoint (libmicrohttpd) that serves it.
 *
 * DESIGN: series are registered once (startup) and then updated lock-free:
 * every value is an atomic int64 (counts, bytes, milliseconds), so writer
 * threads, the committer and the HTTP thread never contend. A gauge may be
 * computed at scrape time by a callback (e.g. seconds since the last
 * commit). Registration keeps order; rendering writes HELP/TYPE once per
 * metric name, then its series.
 *
 * Thread-safety: registration and rendering lock the registry; updates are
 * atomic and may come from any thread. A series pointer stays valid until
 * the registry is freed.
 */
#ifndef FLOE_OBS_METRICS_H
#define FLOE_OBS_METRICS_H

#include "floe/common.h"
#include "util/buf.h"

typedef struct floe_metrics floe_metrics;
typedef struct floe_metric floe_metric;

typedef enum floe_metric_kind {
	FLOE_METRIC_COUNTER = 0,
	FLOE_METRIC_GAUGE = 1,
	FLOE_METRIC_HISTOGRAM = 2,
} floe_metric_kind;

/* Scrape-time gauge value. */
typedef int64_t (*floe_metric_fn)(void *payload);

int floe_metrics_new(floe_metrics **out) FLOE_WUR;
void floe_metrics_free(floe_metrics *r); /* accepts NULL */

/*
 * Register a series: name (Prometheus metric name characters), help text,
 * labels as n_labels key/value pairs (label_kv[2*i], label_kv[2*i+1]; values
 * are escaped). Histograms take n_buckets ascending upper bounds (+Inf is
 * implicit). Registering the same name and labels again returns the same
 * series. *out stays owned by the registry.
 */
int floe_metrics_add(floe_metric **out, floe_metrics *r, floe_metric_kind kind, const char *name,
		     const char *help, const char *const *label_kv, size_t n_labels,
		     const int64_t *buckets, size_t n_buckets) FLOE_WUR;
/* A gauge computed by fn(payload) at each scrape. */
int floe_metrics_add_fn(floe_metric **out, floe_metrics *r, const char *name, const char *help,
			const char *const *label_kv, size_t n_labels, floe_metric_fn fn,
			void *payload) FLOE_WUR;

/* Updates (m may be NULL: then nothing happens). */
void floe_metric_add(floe_metric *m, int64_t delta);  /* counter or gauge */
void floe_metric_set(floe_metric *m, int64_t value);  /* gauge */
void floe_metric_observe(floe_metric *m, int64_t v); /* histogram */
int64_t floe_metric_value(const floe_metric *m);      /* counter/gauge; histogram: count */

/* Notes for the web console: key -> the latest text (at most 64 keys of 512 bytes;
 * best effort: dropped when memory or room runs out). r may be NULL. */
void floe_metrics_note(floe_metrics *r, const char *key, const char *text);
typedef int (*floe_metric_note_fn)(const char *key, const char *text, void *payload);
/* Each note, under the registry's lock (fn must not call back into r). */
int floe_metrics_notes(floe_metrics *r, floe_metric_note_fn fn, void *payload) FLOE_WUR;

/* The whole registry in the text exposition format (version 0.0.4). */
int floe_metrics_render(floe_metrics *r, floe_buf *out) FLOE_WUR;

/* ---- HTTP endpoint ------------------------------------------------------------ */

typedef struct floe_metrics_http floe_metrics_http;

/*
 * Serve GET /metrics (and a short index at /) on bind:port from a thread of
 * its own. port 0 picks a free port; *port_out (optional) receives the port.
 * bind NULL = all interfaces. FLOE_EIO when the port cannot be bound.
 */
int floe_metrics_http_start(floe_metrics_http **out, floe_metrics *r, const char *bind, int port,
			    int *port_out, floe_error *err) FLOE_WUR;
void floe_metrics_http_stop(floe_metrics_http *h); /* accepts NULL */

/* ---- the web console (obs_console.c) ------------------------------------------------ */

/* The registry as JSON: {"metrics": [{"name", "type", "help", "samples": [{"name",
 * "labels", "value"}]}], "notes": {key: text}}, the metrics made from its text
 * rendering (so they equal /metrics). */
int floe_obs_metrics_json(floe_metrics *r, floe_buf *out) FLOE_WUR;
/* Answer GET /console (the page) and /api/metrics (the JSON): true when url is
 * one of them (then *rc, *type and *status are set and the body is in out). */
bool floe_obs_console_route(floe_metrics *r, const char *url, floe_buf *out, const char **type,
			    unsigned int *status, int *rc);

#endif
