/*
 * maintain_lock.c — the per-table maintenance lock, row-compatible with
 * Iceberg Flink's JdbcLockFactory.
 *
 * DESIGN: holding the lock is owning the row (LOCK_TYPE 'm', LOCK_ID) of
 * flink_maintenance_lock; the primary key makes the INSERT the atomic
 * test-and-set, exactly as Java does, so a floe maintainer and a Flink
 * TableMaintenance job with the same lock id exclude each other. A Flink
 * recovery lock (LOCK_TYPE 'r') also counts as held. Java's lock has no
 * notion of a dead holder; floe adds a side table, floe_maintenance_heartbeat
 * (INSTANCE_ID, LOCK_ID, HOST, PID, HEARTBEAT_MS), written before the lock
 * row so a floe holder always has one. A holder is presumed dead when its
 * heartbeat is older than stale_after_ms or when it ran on this host and its
 * process is gone; its row is then deleted by instance id (so two recoverers
 * cannot delete each other's fresh lock) and the INSERT retried. Rows
 * without a heartbeat belong to Java and are only removed by an operator
 * (floe_maint_lock_break).
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/sqldb.h"
#include "maintain/maintain_int.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/thread.h"
#include "util/timeutil.h"

#define LOCK_ID_MAX 100

struct floe_maint_lock {
	floe_sqldb *db;
	char *lock_id;
	char instance[37];
	/* the heartbeat thread, on its own connection */
	floe_sqldb *hb_db;
	floe_thread thread;
	floe_mutex mu;
	floe_cond cv;
	bool stop;
	int64_t interval_ms;
	atomic_bool lost; /* another instance took the lock */
};

static int init_tables(floe_sqldb *db, floe_error *err)
{
	static const char *const ddl[] = {
		"CREATE TABLE IF NOT EXISTS flink_maintenance_lock (LOCK_TYPE CHAR(1) NOT NULL, "
		"LOCK_ID VARCHAR(100) NOT NULL, INSTANCE_ID CHAR(36) NOT NULL, "
		"PRIMARY KEY (LOCK_TYPE, LOCK_ID))",
		"CREATE TABLE IF NOT EXISTS floe_maintenance_heartbeat (INSTANCE_ID CHAR(36) NOT NULL "
		"PRIMARY KEY, LOCK_ID VARCHAR(100) NOT NULL, HOST VARCHAR(255), PID BIGINT, "
		"HEARTBEAT_MS BIGINT NOT NULL)",
	};
	for (size_t i = 0; i < sizeof(ddl) / sizeof(ddl[0]); i++) {
		int rc = floe_sql_exec(db, ddl[i], NULL, 0, NULL, NULL, NULL, err);
		/* PostgreSQL: a concurrent CREATE ... IF NOT EXISTS can still
		 * trip the catalog's unique index */
		if (rc == FLOE_EEXISTS) {
			floe_error_clear(err);
			rc = FLOE_OK;
		}
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

static int open_db(floe_sqldb **db, const char *uri, floe_error *err)
{
	int rc;
	if (!uri || !*uri)
		return floe_error_set(err, FLOE_EINVAL,
				      "no database for maintenance locks (set maintenance.lock-uri)");
	if ((rc = floe_sqldb_open_uri(db, uri, 30000, err)))
		return floe_error_prefix(err, rc, "maintenance lock database: ");
	if ((rc = init_tables(*db, err))) {
		(*db)->ops->close(*db);
		*db = NULL;
		return floe_error_prefix(err, rc, "maintenance lock database: ");
	}
	return FLOE_OK;
}

typedef struct holder {
	char instance[64];
	char host[256];
	long long pid;
	long long heartbeat_ms;
	bool found, has_heartbeat;
} holder;

static int holder_row(const char *const *cells, size_t n, void *payload)
{
	holder *h = payload;
	if (n >= 1 && cells[0]) {
		snprintf(h->instance, sizeof(h->instance), "%s", cells[0]);
		h->found = true;
	}
	return 0;
}

static int heartbeat_row(const char *const *cells, size_t n, void *payload)
{
	holder *h = payload;
	if (n < 3 || !cells[2])
		return 0;
	snprintf(h->host, sizeof(h->host), "%s", cells[0] ? cells[0] : "");
	h->pid = cells[1] ? strtoll(cells[1], NULL, 10) : -1;
	h->heartbeat_ms = strtoll(cells[2], NULL, 10);
	h->has_heartbeat = true;
	return 0;
}

static int read_holder(floe_sqldb *db, const char *type, const char *lock_id, holder *h,
		       floe_error *err)
{
	const char *p[] = {type, lock_id};
	int rc;
	memset(h, 0, sizeof(*h));
	h->pid = -1;
	rc = floe_sql_exec(db,
			   "SELECT INSTANCE_ID FROM flink_maintenance_lock WHERE LOCK_TYPE=? AND "
			   "LOCK_ID=?",
			   p, 2, holder_row, h, NULL, err);
	if (rc || !h->found)
		return rc;
	const char *q[] = {h->instance};
	return floe_sql_exec(db,
			     "SELECT HOST, PID, HEARTBEAT_MS FROM floe_maintenance_heartbeat WHERE "
			     "INSTANCE_ID=?",
			     q, 1, heartbeat_row, h, NULL, err);
}

static bool holder_dead(const holder *h, int64_t stale_after_ms)
{
	char host[256];
	if (!h->has_heartbeat)
		return false; /* a Java holder: never presumed dead */
	if (stale_after_ms > 0 && floe_now_ms() - h->heartbeat_ms > stale_after_ms)
		return true;
	if (gethostname(host, sizeof(host)) == 0 && strcmp(host, h->host) == 0 && h->pid > 0 &&
	    kill((pid_t)h->pid, 0) != 0 && errno == ESRCH)
		return true;
	return false;
}

static void describe_holder(char *out, size_t cap, const holder *h)
{
	if (h->has_heartbeat)
		snprintf(out, cap, "floe instance %s (host %s, pid %lld, heartbeat %lld ms ago)",
			 h->instance, h->host, h->pid, (long long)(floe_now_ms() - h->heartbeat_ms));
	else
		snprintf(out, cap, "instance %s (no floe heartbeat: an Iceberg Flink job?)",
			 h->instance);
}

static int write_heartbeat(floe_maint_lock *l, floe_sqldb *db, bool insert, floe_error *err)
{
	char host[256] = "", pid[32], now[32];
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = 0;
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	snprintf(now, sizeof(now), "%lld", (long long)floe_now_ms());
	if (insert) {
		const char *p[] = {l->instance, l->lock_id, host, pid, now};
		return floe_sql_exec(db,
				     "INSERT INTO floe_maintenance_heartbeat (INSTANCE_ID, LOCK_ID, "
				     "HOST, PID, HEARTBEAT_MS) VALUES (?, ?, ?, ?, ?)",
				     p, 5, NULL, NULL, NULL, err);
	}
	const char *p[] = {now, l->instance};
	return floe_sql_exec(db,
			     "UPDATE floe_maintenance_heartbeat SET HEARTBEAT_MS=? WHERE INSTANCE_ID=?",
			     p, 2, NULL, NULL, NULL, err);
}

static void drop_heartbeat(floe_sqldb *db, const char *instance)
{
	const char *p[] = {instance};
	floe_error e;
	floe_error_clear(&e);
	if (floe_sql_exec(db, "DELETE FROM floe_maintenance_heartbeat WHERE INSTANCE_ID=?", p, 1,
			  NULL, NULL, NULL, &e))
		FLOE_WARN("maintenance lock: cannot remove heartbeat %s: %s", instance, e.msg);
}

static void *heartbeat_main(void *arg)
{
	floe_maint_lock *l = arg;
	floe_mutex_lock(&l->mu);
	while (!l->stop) {
		floe_cond_timedwait(&l->cv, &l->mu, l->interval_ms);
		if (l->stop)
			break;
		floe_mutex_unlock(&l->mu);
		floe_error e;
		holder h;
		floe_error_clear(&e);
		if (read_holder(l->hb_db, "m", l->lock_id, &h, &e) == 0 &&
		    (!h.found || strcmp(h.instance, l->instance) != 0)) {
			atomic_store(&l->lost, true);
			FLOE_WARN("maintenance lock '%s' was taken from this instance", l->lock_id);
		} else if (write_heartbeat(l, l->hb_db, false, &e) != 0) {
			FLOE_WARN("maintenance lock '%s': heartbeat failed: %s", l->lock_id, e.msg);
		}
		floe_mutex_lock(&l->mu);
	}
	floe_mutex_unlock(&l->mu);
	return NULL;
}

/* Start the heartbeat thread (interval: a quarter of the staleness limit). */
static int start_heartbeat(floe_maint_lock *l, const char *uri, int64_t stale_after_ms,
			   floe_error *err)
{
	int rc;
	l->interval_ms = stale_after_ms > 0 ? stale_after_ms / 4 : 60000;
	if (l->interval_ms < 200)
		l->interval_ms = 200;
	if ((rc = floe_sqldb_open_uri(&l->hb_db, uri, 30000, err)))
		return rc;
	if (floe_mutex_init(&l->mu) || floe_cond_init(&l->cv))
		return floe_error_oom(err);
	if (floe_thread_start(&l->thread, "floe-lock-hb", heartbeat_main, l))
		return floe_error_oomf(err, "cannot start the heartbeat thread");
	return FLOE_OK;
}

static void stop_heartbeat(floe_maint_lock *l)
{
	if (l->thread.started) {
		floe_mutex_lock(&l->mu);
		l->stop = true;
		floe_cond_signal(&l->cv);
		floe_mutex_unlock(&l->mu);
		floe_thread_join(&l->thread);
		floe_cond_destroy(&l->cv);
		floe_mutex_destroy(&l->mu);
	}
	if (l->hb_db)
		l->hb_db->ops->close(l->hb_db);
	l->hb_db = NULL;
}

int floe_maint_lock_acquire(floe_maint_lock **out, const char *uri, const char *lock_id,
			    int64_t stale_after_ms, floe_error *err)
{
	floe_maint_lock *l;
	int rc;
	*out = NULL;
	if (!lock_id || !*lock_id || strlen(lock_id) >= LOCK_ID_MAX)
		return floe_error_set(err, FLOE_EINVAL,
				      "maintenance lock id must be 1 to %d characters", LOCK_ID_MAX - 1);
	if (!(l = floe_calloc(1, sizeof(*l))) || !(l->lock_id = floe_strdup(lock_id))) {
		floe_free(l);
		return floe_error_oom(err);
	}
	floe_uuid_v4_str(l->instance);
	if ((rc = open_db(&l->db, uri, err))) {
		floe_free(l->lock_id);
		floe_free(l);
		return rc;
	}
	holder h;
	char who[512];
	/* Flink's recovery lock: its job is restarting and may clear locks */
	if ((rc = read_holder(l->db, "r", lock_id, &h, err)))
		goto fail;
	if (h.found) {
		describe_holder(who, sizeof(who), &h);
		rc = floe_error_set(err, FLOE_ECONFLICT,
				    "table maintenance '%s' is recovering (recovery lock held by %s)",
				    lock_id, who);
		goto fail;
	}
	if ((rc = write_heartbeat(l, l->db, true, err)))
		goto fail;
	for (int attempt = 0; attempt < 3; attempt++) {
		const char *p[] = {"m", lock_id, l->instance};
		rc = floe_sql_exec(l->db,
				   "INSERT INTO flink_maintenance_lock (LOCK_TYPE, LOCK_ID, INSTANCE_ID) "
				   "VALUES (?, ?, ?)",
				   p, 3, NULL, NULL, NULL, err);
		if (rc == FLOE_OK && (rc = start_heartbeat(l, uri, stale_after_ms, err))) {
			stop_heartbeat(l);
			const char *d[] = {"m", lock_id, l->instance};
			floe_error e;
			floe_error_clear(&e);
			if (floe_sql_exec(l->db,
					  "DELETE FROM flink_maintenance_lock WHERE LOCK_TYPE=? AND "
					  "LOCK_ID=? AND INSTANCE_ID=?",
					  d, 3, NULL, NULL, NULL, &e))
				FLOE_WARN("maintenance lock '%s': release failed: %s", lock_id, e.msg);
			goto fail_hb;
		}
		if (rc == FLOE_OK) {
			*out = l;
			FLOE_DEBUG("maintenance lock '%s' taken by %s", lock_id, l->instance);
			return FLOE_OK;
		}
		if (rc != FLOE_EEXISTS)
			goto fail_hb;
		floe_error_clear(err);
		if ((rc = read_holder(l->db, "m", lock_id, &h, err)))
			goto fail_hb;
		if (!h.found)
			continue; /* released meanwhile */
		describe_holder(who, sizeof(who), &h);
		if (!holder_dead(&h, stale_after_ms)) {
			rc = floe_error_set(err, FLOE_ECONFLICT,
					    "table '%s' is being maintained by %s", lock_id, who);
			goto fail_hb;
		}
		FLOE_WARN("maintenance lock '%s': recovering the lock of dead %s", lock_id, who);
		const char *d[] = {"m", lock_id, h.instance};
		if ((rc = floe_sql_exec(l->db,
					"DELETE FROM flink_maintenance_lock WHERE LOCK_TYPE=? AND "
					"LOCK_ID=? AND INSTANCE_ID=?",
					d, 3, NULL, NULL, NULL, err)))
			goto fail_hb;
		drop_heartbeat(l->db, h.instance);
	}
	rc = floe_error_set(err, FLOE_ECONFLICT, "maintenance lock '%s' kept changing hands",
			    lock_id);
fail_hb:
	drop_heartbeat(l->db, l->instance);
fail:
	l->db->ops->close(l->db);
	floe_free(l->lock_id);
	floe_free(l);
	return rc;
}

int floe_maint_lock_check(floe_maint_lock *l, floe_error *err)
{
	if (atomic_load(&l->lost))
		return floe_error_set(err, FLOE_ECONFLICT,
				      "maintenance lock '%s' was taken from this instance",
				      l->lock_id);
	return FLOE_OK;
}

void floe_maint_lock_release(floe_maint_lock *l)
{
	if (!l)
		return;
	stop_heartbeat(l);
	const char *p[] = {"m", l->lock_id, l->instance};
	floe_error e;
	floe_error_clear(&e);
	if (floe_sql_exec(l->db,
			  "DELETE FROM flink_maintenance_lock WHERE LOCK_TYPE=? AND LOCK_ID=? AND "
			  "INSTANCE_ID=?",
			  p, 3, NULL, NULL, NULL, &e))
		FLOE_WARN("maintenance lock '%s': release failed: %s", l->lock_id, e.msg);
	drop_heartbeat(l->db, l->instance);
	l->db->ops->close(l->db);
	floe_free(l->lock_id);
	floe_free(l);
}

int floe_maint_lock_break(const char *uri, const char *lock_id, floe_error *err)
{
	floe_sqldb *db;
	holder h;
	int rc;
	if ((rc = open_db(&db, uri, err)))
		return rc;
	rc = read_holder(db, "m", lock_id, &h, err);
	if (!rc && h.found) {
		const char *p[] = {"m", lock_id};
		rc = floe_sql_exec(db,
				   "DELETE FROM flink_maintenance_lock WHERE LOCK_TYPE=? AND LOCK_ID=?",
				   p, 2, NULL, NULL, NULL, err);
		if (!rc)
			drop_heartbeat(db, h.instance);
	}
	db->ops->close(db);
	return floe_error_prefix(err, rc, "maintenance lock '%s': ", lock_id);
}
