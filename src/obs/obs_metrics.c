/*
 * obs_metrics.c — the metrics registry and its Prometheus text rendering.
 */
#include "obs/obs_metrics.h"

#include <stdatomic.h>
#include <string.h>

#include "util/alloc.h"
#include "util/thread.h"

#define MAX_BUCKETS 32

struct floe_metric {
	floe_metric_kind kind;
	char *name;
	char *help;
	char *labels; /* rendered: k="v",k2="v2" (may be "") */
	_Atomic int64_t value;   /* counter / gauge; histogram: sum */
	_Atomic int64_t count;   /* histogram */
	int64_t buckets[MAX_BUCKETS];
	_Atomic int64_t bucket_counts[MAX_BUCKETS + 1];
	size_t n_buckets;
	floe_metric_fn fn;
	void *payload;
	floe_metric *next;
};

#define MAX_NOTES 64
#define NOTE_MAX 512

struct floe_metrics {
	floe_mutex lock;
	floe_metric *head, *tail;
	/* notes for the console (the latest dead-letter reason, the maintenance
	 * lock), key -> text, under the lock */
	char *note_keys[MAX_NOTES], *note_text[MAX_NOTES];
	size_t n_notes;
};

int floe_metrics_new(floe_metrics **out)
{
	floe_metrics *r = floe_calloc(1, sizeof(*r));
	*out = NULL;
	if (!r)
		return FLOE_ENOMEM;
	if (floe_mutex_init(&r->lock)) {
		floe_free(r);
		return FLOE_ENOMEM;
	}
	*out = r;
	return FLOE_OK;
}

void floe_metrics_free(floe_metrics *r)
{
	if (!r)
		return;
	for (floe_metric *m = r->head, *n; m; m = n) {
		n = m->next;
		floe_free(m->name);
		floe_free(m->help);
		floe_free(m->labels);
		floe_free(m);
	}
	for (size_t i = 0; i < r->n_notes; i++) {
		floe_free(r->note_keys[i]);
		floe_free(r->note_text[i]);
	}
	floe_mutex_destroy(&r->lock);
	floe_free(r);
}

static bool valid_name(const char *s)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
			  (p != s && c >= '0' && c <= '9');
		if (!ok)
			return false;
	}
	return true;
}

static int render_labels(floe_buf *b, const char *const *kv, size_t n)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!valid_name(kv[2 * i]))
			return FLOE_EINVAL;
		rc = floe_buf_printf(b, "%s%s=\"", i ? "," : "", kv[2 * i]);
		for (const char *p = kv[2 * i + 1] ? kv[2 * i + 1] : ""; *p && !rc; p++) {
			if (*p == '\\' || *p == '"')
				rc = floe_buf_putc(b, '\\') || floe_buf_putc(b, *p);
			else if (*p == '\n')
				rc = floe_buf_puts(b, "\\n");
			else
				rc = floe_buf_putc(b, *p);
		}
		rc = rc ? rc : floe_buf_putc(b, '"');
	}
	return rc ? FLOE_ENOMEM : FLOE_OK;
}

static int add(floe_metric **out, floe_metrics *r, floe_metric_kind kind, const char *name,
	       const char *help, const char *const *kv, size_t n_labels, const int64_t *buckets,
	       size_t n_buckets, floe_metric_fn fn, void *payload)
{
	floe_buf lb;
	floe_metric *m = NULL;
	int rc;
	*out = NULL;
	if (!valid_name(name) || n_buckets > MAX_BUCKETS)
		return FLOE_EINVAL;
	floe_buf_init(&lb, 4096);
	if ((rc = render_labels(&lb, kv, n_labels))) {
		floe_buf_reset(&lb);
		return rc;
	}
	floe_mutex_lock(&r->lock);
	for (floe_metric *x = r->head; x; x = x->next) {
		if (!strcmp(x->name, name) && !strcmp(x->labels, floe_buf_cstr(&lb))) {
			rc = x->kind == kind ? FLOE_OK : FLOE_EINVAL;
			*out = rc ? NULL : x;
			goto done;
		}
	}
	m = floe_calloc(1, sizeof(*m));
	if (!m || !(m->name = floe_strdup(name)) || !(m->help = floe_strdup(help ? help : "")) ||
	    !(m->labels = floe_strdup(floe_buf_cstr(&lb)))) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	m->kind = kind;
	m->n_buckets = n_buckets;
	if (n_buckets)
		memcpy(m->buckets, buckets, n_buckets * sizeof(*buckets));
	m->fn = fn;
	m->payload = payload;
	if (r->tail)
		r->tail->next = m;
	else
		r->head = m;
	r->tail = m;
	*out = m;
	m = NULL;
	rc = FLOE_OK;
done:
	floe_mutex_unlock(&r->lock);
	if (m) {
		floe_free(m->name);
		floe_free(m->help);
		floe_free(m->labels);
		floe_free(m);
	}
	floe_buf_reset(&lb);
	return rc;
}

int floe_metrics_add(floe_metric **out, floe_metrics *r, floe_metric_kind kind, const char *name,
		     const char *help, const char *const *label_kv, size_t n_labels,
		     const int64_t *buckets, size_t n_buckets)
{
	return add(out, r, kind, name, help, label_kv, n_labels, buckets, n_buckets, NULL, NULL);
}

int floe_metrics_add_fn(floe_metric **out, floe_metrics *r, const char *name, const char *help,
			const char *const *label_kv, size_t n_labels, floe_metric_fn fn,
			void *payload)
{
	return add(out, r, FLOE_METRIC_GAUGE, name, help, label_kv, n_labels, NULL, 0, fn, payload);
}

void floe_metric_add(floe_metric *m, int64_t delta)
{
	if (m)
		atomic_fetch_add_explicit(&m->value, delta, memory_order_relaxed);
}

void floe_metric_set(floe_metric *m, int64_t value)
{
	if (m)
		atomic_store_explicit(&m->value, value, memory_order_relaxed);
}

void floe_metric_observe(floe_metric *m, int64_t v)
{
	size_t i = 0;
	if (!m)
		return;
	while (i < m->n_buckets && v > m->buckets[i])
		i++;
	atomic_fetch_add_explicit(&m->bucket_counts[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->value, v, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->count, 1, memory_order_relaxed);
}

int64_t floe_metric_value(const floe_metric *m)
{
	if (!m)
		return 0;
	if (m->kind == FLOE_METRIC_HISTOGRAM)
		return atomic_load_explicit(&m->count, memory_order_relaxed);
	if (m->fn)
		return m->fn(m->payload);
	return atomic_load_explicit(&m->value, memory_order_relaxed);
}

static const char *kind_name(floe_metric_kind k)
{
	return k == FLOE_METRIC_COUNTER ? "counter" : k == FLOE_METRIC_GAUGE ? "gauge" : "histogram";
}

static int render_series(floe_buf *out, const floe_metric *m)
{
	const char *sep = m->labels[0] ? "," : "";
	int rc = 0;
	if (m->kind != FLOE_METRIC_HISTOGRAM) {
		if (m->labels[0])
			return floe_buf_printf(out, "%s{%s} %lld\n", m->name, m->labels,
					       (long long)floe_metric_value(m));
		return floe_buf_printf(out, "%s %lld\n", m->name, (long long)floe_metric_value(m));
	}
	int64_t cum = 0;
	for (size_t i = 0; i <= m->n_buckets && !rc; i++) {
		cum += atomic_load_explicit(&m->bucket_counts[i], memory_order_relaxed);
		if (i < m->n_buckets)
			rc = floe_buf_printf(out, "%s_bucket{%s%sle=\"%lld\"} %lld\n", m->name,
					     m->labels, sep, (long long)m->buckets[i],
					     (long long)cum);
		else
			rc = floe_buf_printf(out, "%s_bucket{%s%sle=\"+Inf\"} %lld\n", m->name,
					     m->labels, sep, (long long)cum);
	}
	if (rc)
		return rc;
	const char *open = m->labels[0] ? "{" : "", *close = m->labels[0] ? "}" : "";
	return floe_buf_printf(out, "%s_sum%s%s%s %lld\n%s_count%s%s%s %lld\n", m->name, open,
			       m->labels, close,
			       (long long)atomic_load_explicit(&m->value, memory_order_relaxed),
			       m->name, open, m->labels, close,
			       (long long)atomic_load_explicit(&m->count, memory_order_relaxed));
}

int floe_metrics_render(floe_metrics *r, floe_buf *out)
{
	int rc = 0;
	floe_mutex_lock(&r->lock);
	for (floe_metric *m = r->head; m && !rc; m = m->next) {
		bool first = true;
		for (floe_metric *p = r->head; p != m; p = p->next) {
			if (!strcmp(p->name, m->name)) {
				first = false;
				break;
			}
		}
		if (!first)
			continue;
		rc = floe_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name,
				     kind_name(m->kind));
		for (floe_metric *s = m; s && !rc; s = s->next)
			if (!strcmp(s->name, m->name))
				rc = render_series(out, s);
	}
	floe_mutex_unlock(&r->lock);
	return rc ? FLOE_ENOMEM : FLOE_OK;
}

/* ---- notes ----------------------------------------------------------------------------- */

void floe_metrics_note(floe_metrics *r, const char *key, const char *text)
{
	if (!r || !key || !text)
		return;
	size_t n = strlen(text);
	char *t = floe_strndup(text, n < NOTE_MAX ? n : NOTE_MAX);
	if (!t)
		return; /* notes are best effort */
	floe_mutex_lock(&r->lock);
	size_t i = 0;
	while (i < r->n_notes && strcmp(r->note_keys[i], key) != 0)
		i++;
	if (i == r->n_notes) {
		char *k = r->n_notes < MAX_NOTES ? floe_strdup(key) : NULL;
		if (!k) {
			floe_mutex_unlock(&r->lock);
			floe_free(t);
			return;
		}
		r->note_keys[i] = k;
		r->note_text[i] = NULL;
		r->n_notes++;
	}
	floe_free(r->note_text[i]);
	r->note_text[i] = t;
	floe_mutex_unlock(&r->lock);
}

int floe_metrics_notes(floe_metrics *r, floe_metric_note_fn fn, void *payload)
{
	int rc = 0;
	floe_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->n_notes && !rc; i++)
		rc = fn(r->note_keys[i], r->note_text[i], payload);
	floe_mutex_unlock(&r->lock);
	return rc;
}
