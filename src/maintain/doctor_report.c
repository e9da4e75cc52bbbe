/*
 * doctor_report.c — floe doctor's reports: JSON, and a self-contained HTML
 * page with SVG plots (no script, nothing fetched).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json/json.h"
#include "maintain/doctor_int.h"
#include "util/buf.h"

/* HTML is appended piecewise: the first failed append is kept and ends it. */
typedef struct hb {
	floe_buf b;
	int rc;
} hb;

static void hputs(hb *h, const char *s)
{
	if (!h->rc)
		h->rc = floe_buf_puts(&h->b, s);
}

static void hputc(hb *h, char c)
{
	if (!h->rc)
		h->rc = floe_buf_putc(&h->b, c);
}

static void hprintf(hb *h, const char *fmt, ...) FLOE_PRINTF(2, 3);
static void hprintf(hb *h, const char *fmt, ...)
{
	va_list ap;
	if (h->rc)
		return;
	va_start(ap, fmt);
	h->rc = floe_buf_vprintf(&h->b, fmt, ap);
	va_end(ap);
}

static int emit(floe_buf *b, floe_write_fn fn, void *payload, floe_error *err)
{
	int rc = fn(b->data ? (const char *)b->data : "", b->len, payload);
	return rc ? floe_error_set(err, rc < 0 ? rc : FLOE_EIO, "doctor: writing the report failed") : 0;
}

static void check_json(floe_jw *w, const floe_health_check *c)
{
	floe_jw_obj_begin(w);
	floe_jw_kv_str(w, "id", c->id);
	floe_jw_kv_str(w, "title", c->title);
	floe_jw_kv_str(w, "severity", floe_health_name(c->severity));
	floe_jw_kv_bool(w, "applicable", c->applicable);
	floe_jw_key(w, "value");
	floe_jw_double(w, c->value);
	floe_jw_key(w, "warn_at");
	floe_jw_double(w, c->warn_at);
	floe_jw_key(w, "critical_at");
	floe_jw_double(w, c->critical_at);
	floe_jw_kv_bool(w, "lower_is_worse", c->lower_is_worse);
	floe_jw_kv_str(w, "unit", c->unit);
	floe_jw_kv_str(w, "detail", c->detail);
	floe_jw_kv_str(w, "fix", c->fix);
	floe_jw_obj_end(w);
}

int floe_doctor_write_json(const floe_doctor_report *r, floe_write_fn fn, void *payload,
			   floe_error *err)
{
	floe_buf b;
	floe_jw w;
	const floe_doctor_stats *st = &r->st;
	floe_buf_init(&b, 0);
	floe_jw_init(&w, &b, 0);
	floe_jw_obj_begin(&w);
	floe_jw_kv_str(&w, "table", r->table);
	floe_jw_kv_str(&w, "severity", floe_health_name(floe_doctor_severity(r)));
	floe_jw_key(&w, "checks");
	floe_jw_arr_begin(&w);
	for (size_t i = 0; i < r->n_checks; i++)
		check_json(&w, &r->checks[i]);
	floe_jw_arr_end(&w);
	floe_jw_key(&w, "stats");
	floe_jw_obj_begin(&w);
	floe_jw_kv_i64(&w, "data_files", st->data_files);
	floe_jw_kv_i64(&w, "data_bytes", st->data_bytes);
	floe_jw_kv_i64(&w, "data_records", st->data_records);
	floe_jw_kv_i64(&w, "equality_delete_files", st->eq_files);
	floe_jw_kv_i64(&w, "position_delete_files", st->pos_files);
	floe_jw_kv_i64(&w, "equality_delete_records", st->eq_records);
	floe_jw_kv_i64(&w, "position_delete_records", st->pos_records);
	floe_jw_kv_i64(&w, "small_files", st->small_files);
	floe_jw_kv_i64(&w, "partitions", (int64_t)r->n_parts);
	floe_jw_kv_i64(&w, "target_file_size", st->target_file_size);
	floe_jw_kv_i64(&w, "snapshots", st->snapshots);
	floe_jw_key(&w, "snapshots_per_hour");
	floe_jw_double(&w, st->snapshots_per_hour);
	floe_jw_kv_i64(&w, "manifests", st->manifests);
	floe_jw_kv_i64(&w, "manifest_bytes", st->manifest_bytes);
	floe_jw_kv_i64(&w, "metadata_bytes", st->metadata_bytes);
	floe_jw_kv_i64(&w, "last_commit_ms", st->last_commit_ms);
	floe_jw_kv_i64(&w, "last_pipeline_commit_ms", st->last_pipeline_commit_ms);
	floe_jw_kv_i64(&w, "checkpoint_interval_ms", st->checkpoint_interval_ms);
	if (st->storage_scanned) {
		floe_jw_kv_i64(&w, "storage_files", st->storage_files);
		floe_jw_kv_i64(&w, "storage_bytes", st->storage_bytes);
		floe_jw_kv_i64(&w, "reachable_data_bytes", st->reachable_data_bytes);
		floe_jw_kv_i64(&w, "orphan_files", st->orphan_files);
		floe_jw_kv_i64(&w, "orphan_bytes", st->orphan_bytes);
		floe_jw_kv_i64(&w, "young_orphan_files", st->young_orphan_files);
		floe_jw_kv_i64(&w, "young_orphan_bytes", st->young_orphan_bytes);
	}
	floe_jw_key(&w, "file_size_histogram");
	floe_jw_arr_begin(&w);
	for (size_t i = 0; i < FLOE_DOCTOR_SIZE_BINS; i++) {
		floe_jw_obj_begin(&w);
		floe_jw_key(&w, "below");
		if (i < FLOE_DOCTOR_SIZE_BINS - 1)
			floe_jw_i64(&w, floe_doctor_bin_edges[i]);
		else
			floe_jw_null(&w);
		floe_jw_kv_i64(&w, "files", st->size_bins[i]);
		floe_jw_obj_end(&w);
	}
	floe_jw_arr_end(&w);
	floe_jw_key(&w, "partitions_by_files");
	floe_jw_arr_begin(&w);
	for (size_t i = 0; i < r->n_parts && i < 50; i++) {
		const floe_doctor_part *p = &r->parts[i];
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "partition", p->name);
		floe_jw_kv_i64(&w, "data_files", p->data_files);
		floe_jw_kv_i64(&w, "equality_delete_files", p->eq_files);
		floe_jw_kv_i64(&w, "position_delete_files", p->pos_files);
		floe_jw_kv_i64(&w, "data_bytes", p->data_bytes);
		floe_jw_obj_end(&w);
	}
	floe_jw_arr_end(&w);
	floe_jw_obj_end(&w);
	floe_jw_obj_end(&w);
	int rc = floe_jw_finish(&w);
	if (!rc)
		rc = floe_buf_putc(&b, '\n');
	rc = rc ? floe_error_oom(err) : emit(&b, fn, payload, err);
	floe_buf_reset(&b);
	return rc;
}

/* ---- HTML -------------------------------------------------------------------------------- */

static void esc(hb *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': hputs(b, "&lt;"); break;
		case '>': hputs(b, "&gt;"); break;
		case '&': hputs(b, "&amp;"); break;
		case '"': hputs(b, "&quot;"); break;
		default: hputc(b, *s);
		}
	}
}

static void fmt_value(char *out, size_t cap, const floe_health_check *c)
{
	if (!strcmp(c->unit, "bytes")) {
		double v = c->value;
		const char *u[] = {"B", "KB", "MB", "GB", "TB"};
		int k = 0;
		while (v >= 1024 && k < 4) {
			v /= 1024;
			k++;
		}
		snprintf(out, cap, "%.1f %s", v, u[k]);
	} else if (c->value == floor(c->value) && fabs(c->value) < 1e15) {
		snprintf(out, cap, "%.0f %s", c->value, c->unit);
	} else {
		snprintf(out, cap, "%.1f %s", c->value, c->unit);
	}
}

#define W 560
#define H 220
#define PAD 40

/* A bar chart of n values with labels; a vertical marker before bar `mark` (or none). */
static void svg_bars(hb *b, const char *id, const char *title, const int64_t *v,
		     const char *const *labels, size_t n, long mark, const char *mark_label)
{
	int64_t max = 1;
	for (size_t i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	hprintf(b,
			      "<figure><figcaption>%s</figcaption><svg id=\"%s\" class=\"plot\" "
			      "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			      "viewBox=\"0 0 %d %d\">",
			      title, id, W, H + 40, W, H + 40);
	double bw = n ? (double)(W - 2 * PAD) / (double)n : 0;
	hprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>", PAD,
			      H, W - PAD, H);
	hprintf(b, "<text x=\"2\" y=\"14\" font-size=\"11\">%" PRId64 "</text>", max);
	for (size_t i = 0; i < n; i++) {
		double h = (double)(H - 20) * (double)v[i] / (double)max;
		double x = PAD + bw * (double)i;
		hprintf(b,
				      "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				      "height=\"%.1f\" fill=\"#4a7ebb\"><title>",
				      x + 1, (double)H - h, bw > 2 ? bw - 2 : bw, h);
		esc(b, labels[i]);
		hprintf(b, ": %" PRId64 "</title></rect>", v[i]);
		if (n <= 12) {
			hprintf(b,
					      "<text x=\"%.1f\" y=\"%d\" font-size=\"8\" "
					      "text-anchor=\"middle\">",
					      x + bw / 2, H + 14);
			esc(b, labels[i]);
			hputs(b, "</text>");
		}
	}
	if (mark >= 0) {
		double x = PAD + bw * (double)mark;
		hprintf(b,
				      "<line class=\"target\" x1=\"%.1f\" y1=\"10\" x2=\"%.1f\" y2=\"%d\" "
				      "stroke=\"#c33\" stroke-dasharray=\"4\"/><text x=\"%.1f\" y=\"10\" "
				      "font-size=\"10\" fill=\"#c33\">%s</text>",
				      x, x, H, x + 3, mark_label);
	}
	hputs(b, "</svg></figure>\n");
}

/* A line chart of one series over time (points with v < 0 are skipped). */
static void svg_line(hb *b, const char *id, const char *title, const floe_doctor_point *p,
		     size_t n, size_t field)
{
	hprintf(b,
			      "<figure><figcaption>%s</figcaption><svg id=\"%s\" class=\"plot\" "
			      "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			      "viewBox=\"0 0 %d %d\">",
			      title, id, W, H + 20, W, H + 20);
	int64_t max = 1, t0 = n ? p[0].ts_ms : 0, t1 = n ? p[n - 1].ts_ms : 1;
	if (t1 <= t0)
		t1 = t0 + 1;
	for (size_t i = 0; i < n; i++) {
		const int64_t *v = (const int64_t *)((const char *)&p[i] + field);
		if (*v > max)
			max = *v;
	}
	hprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>", PAD,
			      H, W - PAD, H);
	hprintf(b, "<text x=\"2\" y=\"14\" font-size=\"11\">%" PRId64 "</text>", max);
	hputs(b, "<polyline class=\"series\" fill=\"none\" stroke=\"#4a7ebb\" points=\"");
	/* at most ~1000 points: a long history is sampled evenly */
	size_t step = n > 1000 ? n / 1000 : 1;
	for (size_t i = 0; i < n; i += step) {
		const int64_t *v = (const int64_t *)((const char *)&p[i] + field);
		if (*v < 0)
			continue;
		double x = PAD + (double)(W - 2 * PAD) * (double)(p[i].ts_ms - t0) / (double)(t1 - t0);
		double y = H - (double)(H - 20) * (double)*v / (double)max;
		hprintf(b, "%.1f,%.1f ", x, y);
	}
	char a[40], z[40];
	time_t s0 = (time_t)(t0 / 1000), s1 = (time_t)(t1 / 1000);
	struct tm tm;
	strftime(a, sizeof(a), "%Y-%m-%d %H:%M", gmtime_r(&s0, &tm));
	strftime(z, sizeof(z), "%Y-%m-%d %H:%M", gmtime_r(&s1, &tm));
	hprintf(b,
			      "\"/><text x=\"%d\" y=\"%d\" font-size=\"10\">%s</text><text x=\"%d\" "
			      "y=\"%d\" font-size=\"10\" text-anchor=\"end\">%s UTC</text></svg>"
			      "</figure>\n",
			      PAD, H + 14, a, W - PAD, H + 14, z);
}

static void report_html(hb *b, const floe_doctor_report *r)
{
	const floe_doctor_stats *st = &r->st;
	floe_health worst = floe_doctor_severity(r);
	hputs(b, "<section class=\"table\"><h2>");
	esc(b, r->table);
	hprintf(b, " <span class=\"sev %s\">%s</span></h2>\n", floe_health_name(worst),
			      floe_health_name(worst));
	hputs(b, "<table class=\"checks\"><tr><th>check</th><th>severity</th>"
			       "<th>value</th><th>threshold</th><th>detail</th><th>fix</th></tr>\n");
	for (size_t i = 0; i < r->n_checks; i++) {
		const floe_health_check *c = &r->checks[i];
		char v[64], wv[64], cv[64];
		floe_health_check tw = *c, tc = *c;
		tw.value = c->warn_at;
		tc.value = c->critical_at;
		fmt_value(v, sizeof(v), c);
		fmt_value(wv, sizeof(wv), &tw);
		fmt_value(cv, sizeof(cv), &tc);
		hprintf(b, "<tr data-check=\"%s\" class=\"%s\"><td title=\"", c->id,
				      floe_health_name(c->severity));
		esc(b, c->title);
		hprintf(b, "\">%s</td><td class=\"sev %s\">%s</td><td>%s</td><td>%s %s / %s</td><td>",
				      c->id, floe_health_name(c->severity),
				      c->applicable ? floe_health_name(c->severity) : "n/a", c->applicable ? v : "-",
				      c->applicable ? (c->lower_is_worse ? "&lt;" : "&gt;") : "", c->applicable ? wv : "-",
				      c->critical_at >= 1e17 || !c->applicable ? "-" : cv);
		esc(b, c->detail);
		hputs(b, "</td><td>");
		esc(b, c->fix);
		hputs(b, "</td></tr>\n");
	}
	hputs(b, "</table>\n<div class=\"plots\">\n");
	static const char *bins[FLOE_DOCTOR_SIZE_BINS] = {"<1M",  "1-4M",   "4-16M",  "16-32M",
							  "32-64M", "64-128M", "128-256M", "256-512M",
							  "512M-1G", ">1G"};
	long mark = 0;
	while (mark < FLOE_DOCTOR_SIZE_BINS - 1 && st->target_file_size > floe_doctor_bin_edges[mark])
		mark++;
	char tl[64];
	snprintf(tl, sizeof(tl), "target %" PRId64 " MB", st->target_file_size >> 20);
	svg_bars(b, "size-histogram", "data file sizes (files per size bin)", st->size_bins, bins,
		 FLOE_DOCTOR_SIZE_BINS, mark, tl);
	svg_line(b, "files-over-time", "data files over time (total-data-files)", r->points, r->n_points,
		 offsetof(floe_doctor_point, data_files));
	svg_line(b, "bytes-over-time", "bytes over time (total-files-size)", r->points, r->n_points,
		 offsetof(floe_doctor_point, bytes));
	svg_line(b, "deletes-over-time", "delete files over time (total-delete-files)", r->points,
		 r->n_points, offsetof(floe_doctor_point, delete_files));
	svg_line(b, "snapshots-over-time", "snapshots over time", r->points, r->n_points,
		 offsetof(floe_doctor_point, snapshots));
	size_t np = r->n_parts < 40 ? r->n_parts : 40;
	int64_t pv[40];
	const char *pl[40];
	for (size_t i = 0; i < np; i++) {
		pv[i] = r->parts[i].data_files;
		pl[i] = r->parts[i].name[0] ? r->parts[i].name : "(unpartitioned)";
	}
	svg_bars(b, "partition-files", "data files per partition (most first)", pv, pl, np, -1, "");
	hputs(b, "</div></section>\n");
}

int floe_doctor_write_html(const floe_doctor_report *const *reports, size_t n, floe_write_fn fn,
			   void *payload, floe_error *err)
{
	hb b = {{0}, 0};
	floe_health worst = FLOE_HEALTH_OK;
	for (size_t i = 0; i < n; i++)
		if (floe_doctor_severity(reports[i]) > worst)
			worst = floe_doctor_severity(reports[i]);
	floe_buf_init(&b.b, 0);
	hprintf(
		&b,
		"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>floe doctor</title>\n"
		"<style>body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse}"
		"td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;vertical-align:top}"
		".sev.ok{color:#262}.sev.warn{color:#a60;font-weight:bold}.sev.critical{color:#c00;"
		"font-weight:bold}figure{display:inline-block;margin:8px}.plots{display:flex;"
		"flex-wrap:wrap}</style></head><body>\n<h1>floe doctor: <span id=\"overall\" "
		"class=\"sev %s\">%s</span></h1>\n",
		floe_health_name(worst), floe_health_name(worst));
	for (size_t i = 0; i < n; i++)
		report_html(&b, reports[i]);
	hputs(&b, "</body></html>\n");
	int rc = b.rc ? floe_error_oom(err) : emit(&b.b, fn, payload, err);
	floe_buf_reset(&b.b);
	return rc;
}
