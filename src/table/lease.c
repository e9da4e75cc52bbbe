/*
 * lease.c — writer leases (see lease.h): the lease file, its heartbeat, and
 * reading the leases of a table for orphan cleanup.
 */
#define _GNU_SOURCE
#include "table/lease.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json/json.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/str.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define LEASE_PREFIX ".floe-lease-"
#define LEASE_SUFFIX ".json"
#define LEASE_MAX_BYTES 65536
#define DAY_MS INT64_C(86400000)

struct floe_lease {
	floe_fileio *io;
	char *path;
	char *what;
	int64_t ttl_ms;
	floe_mutex mu;
	floe_cond cv;
	/* under mu */
	int64_t since_ms;
	int64_t written_ms;    /* wall clock of the last write */
	int64_t written_since; /* the since it wrote */
	bool stop;
	floe_thread th;
	bool has_thread;
};

static int write_lease(floe_lease *l, floe_error *err)
{
	char host[256] = "";
	floe_buf b;
	floe_jw w;
	floe_mutex_lock(&l->mu);
	int64_t since = l->since_ms, now = floe_now_ms();
	floe_mutex_unlock(&l->mu);
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = 0;
	floe_buf_init(&b, LEASE_MAX_BYTES);
	floe_jw_init(&w, &b, 0);
	floe_jw_obj_begin(&w);
	floe_jw_kv_i64(&w, "since-ms", since);
	floe_jw_kv_i64(&w, "expires-ms", now + l->ttl_ms);
	floe_jw_kv_str(&w, "what", l->what);
	floe_jw_kv_str(&w, "host", host);
	floe_jw_kv_i64(&w, "pid", (int64_t)getpid());
	floe_jw_obj_end(&w);
	int rc = floe_jw_finish(&w);
	if (rc) {
		floe_buf_reset(&b);
		return floe_error_oom(err);
	}
	/* atomically replaced (the local FileIO writes a temporary and renames) */
	rc = floe_io_write_all(l->io, l->path, b.data, b.len, true, err);
	floe_buf_reset(&b);
	if (!rc) {
		floe_mutex_lock(&l->mu);
		l->written_ms = now;
		l->written_since = since;
		floe_mutex_unlock(&l->mu);
	}
	return rc;
}

static void *heartbeat(void *arg)
{
	floe_lease *l = arg;
	floe_mutex_lock(&l->mu);
	while (!l->stop) {
		int64_t wait = l->ttl_ms / 4 > 0 ? l->ttl_ms / 4 : 1;
		floe_cond_timedwait(&l->cv, &l->mu, wait);
		if (l->stop)
			break;
		floe_mutex_unlock(&l->mu);
		floe_error err;
		floe_error_clear(&err);
		if (write_lease(l, &err))
			FLOE_WARN("writer lease '%s': cannot renew it: %s", l->path, err.msg);
		floe_mutex_lock(&l->mu);
	}
	floe_mutex_unlock(&l->mu);
	return NULL;
}

static void lease_free(floe_lease *l)
{
	if (!l)
		return;
	floe_cond_destroy(&l->cv);
	floe_mutex_destroy(&l->mu);
	floe_free(l->path);
	floe_free(l->what);
	floe_free(l);
}

int floe_lease_take(floe_lease **out, floe_fileio *io, const char *dir, const char *what,
		    int64_t ttl_ms, bool heartbeat_thread, floe_error *err)
{
	char uuid[37];
	*out = NULL;
	floe_lease *l = floe_calloc(1, sizeof(*l));
	if (!l)
		return floe_error_oom(err);
	if (floe_mutex_init(&l->mu)) {
		floe_free(l);
		return floe_error_oom(err);
	}
	if (floe_cond_init(&l->cv)) {
		floe_mutex_destroy(&l->mu);
		floe_free(l);
		return floe_error_oom(err);
	}
	floe_uuid_v4_str(uuid);
	l->io = io;
	l->ttl_ms = ttl_ms > 0 ? ttl_ms : 600000;
	l->since_ms = floe_now_ms();
	l->path = floe_malloc(strlen(dir) + sizeof(LEASE_PREFIX) + sizeof(LEASE_SUFFIX) + 40);
	l->what = floe_strdup(what ? what : "writer");
	if (!l->path || !l->what) {
		lease_free(l);
		return floe_error_oom(err);
	}
	snprintf(l->path, strlen(dir) + sizeof(LEASE_PREFIX) + sizeof(LEASE_SUFFIX) + 40,
		 "%s/" LEASE_PREFIX "%s" LEASE_SUFFIX, dir, uuid);
	int rc = write_lease(l, err);
	if (rc) {
		lease_free(l);
		return floe_error_prefix(err, rc, "writer lease: ");
	}
	if (heartbeat_thread) {
		if (floe_thread_start(&l->th, "floe-lease", heartbeat, l)) {
			floe_io_remove_quiet(io, l->path);
			lease_free(l);
			return floe_error_oomf(err, "cannot start the writer lease's thread");
		}
		l->has_thread = true;
	}
	*out = l;
	return FLOE_OK;
}

void floe_lease_advance(floe_lease *l, int64_t since_ms)
{
	if (!l)
		return;
	floe_mutex_lock(&l->mu);
	if (since_ms > l->since_ms)
		l->since_ms = since_ms;
	floe_mutex_unlock(&l->mu);
}

int floe_lease_touch(floe_lease *l, floe_error *err)
{
	if (!l)
		return FLOE_OK;
	floe_mutex_lock(&l->mu);
	/* renewed at half its life, and rewritten when the file's since lags
	 * more than the margin behind (at most one write a minute) */
	bool due = floe_now_ms() - l->written_ms >= l->ttl_ms / 2 ||
		   l->since_ms - l->written_since > FLOE_LEASE_MARGIN_MS;
	floe_mutex_unlock(&l->mu);
	return due ? write_lease(l, err) : FLOE_OK;
}

bool floe_lease_has_heartbeat(const floe_lease *l)
{
	return l && l->has_thread;
}

void floe_lease_release(floe_lease *l, bool keep)
{
	if (!l)
		return;
	if (l->has_thread) {
		floe_mutex_lock(&l->mu);
		l->stop = true;
		floe_cond_broadcast(&l->cv);
		floe_mutex_unlock(&l->mu);
		floe_thread_join(&l->th);
	}
	if (!keep) {
		floe_io_remove_quiet(l->io, l->path);
	} else {
		/* left to expire: a full time to live from now, not from the last
		 * renewal (a lease kept by its handle may be half its life old) */
		floe_error e;
		floe_error_clear(&e);
		if (write_lease(l, &e))
			FLOE_WARN("writer lease '%s': cannot renew it: %s", l->path, e.msg);
	}
	lease_free(l);
}

/* ---- reading ----------------------------------------------------------------------- */

bool floe_lease_is_lease(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return floe_str_startswith(base, LEASE_PREFIX) && floe_str_endswith(base, LEASE_SUFFIX);
}

typedef struct scan_ctx {
	floe_fileio *io;
	int64_t now;
	floe_lease_scan *out;
} scan_ctx;

static int scan_cb(const floe_file_info *fi, void *payload)
{
	scan_ctx *c = payload;
	floe_buf b;
	floe_arena a;
	floe_json *j;
	int64_t since, expires;
	if (!floe_lease_is_lease(fi->path))
		return 0;
	floe_buf_init(&b, LEASE_MAX_BYTES);
	floe_arena_init(&a, 4096);
	floe_error e;
	floe_error_clear(&e);
	int rc = floe_io_read_all(c->io, fi->path, &b, LEASE_MAX_BYTES, &e);
	if (rc == FLOE_ENOTFOUND) {
		/* released meanwhile */
	} else if (rc || floe_json_parse(&j, &a, (const char *)b.data, b.len, NULL, NULL) ||
		   floe_json_get_i64(j, "since-ms", &since, NULL, NULL) ||
		   floe_json_get_i64(j, "expires-ms", &expires, NULL, NULL)) {
		if (fi->mtime_ms >= c->now - DAY_MS) {
			/* it may protect anything: cleanup keeps everything young */
			FLOE_WARN("writer lease '%s' cannot be read (%s): treated as protecting "
				  "every file",
				  fi->path, rc ? e.msg : "not a lease");
			c->out->unreadable++;
			c->out->live++;
			c->out->oldest_since = INT64_MIN;
		} else {
			c->out->expired++;
		}
	} else if (expires > c->now) {
		c->out->live++;
		if (since < c->out->oldest_since)
			c->out->oldest_since = since;
	} else {
		c->out->expired++;
	}
	floe_buf_reset(&b);
	floe_arena_reset(&a);
	return 0;
}

bool floe_lease_file_live(floe_fileio *io, const char *path, int64_t mtime_ms, int64_t now_ms)
{
	floe_lease_scan one;
	memset(&one, 0, sizeof(one));
	one.oldest_since = INT64_MAX;
	scan_ctx c = {io, now_ms, &one};
	floe_file_info fi = {path, 0, mtime_ms};
	scan_cb(&fi, &c);
	return one.live > 0;
}

int floe_lease_scan_dir(floe_lease_scan *out, floe_fileio *io, const char *dir, int64_t now_ms,
			floe_error *err)
{
	memset(out, 0, sizeof(*out));
	out->oldest_since = INT64_MAX;
	scan_ctx c = {io, now_ms, out};
	int rc = floe_io_list(io, dir, scan_cb, &c, err);
	if (rc == FLOE_ENOTFOUND) {
		floe_error_clear(err);
		return FLOE_OK; /* no metadata directory: no leases */
	}
	return floe_error_prefix(err, rc, "reading the writer leases in '%s': ", dir);
}
