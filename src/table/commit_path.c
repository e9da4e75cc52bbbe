/*
 * commit_path.c — the one way a table's metadata changes: build on the
 * current base, swap it in through the catalog, retry lost races with
 * backoff and jitter inside the commit.retry.* budget, and resolve a swap
 * whose outcome is unknown by re-reading the catalog.
 *
 * DESIGN: the change itself is a callback (build) so that table creation,
 * property updates, snapshot producers and snapshot expiry share the loop,
 * and with it the rules that keep a table safe:
 *   - a lost race (the catalog's retryable ECONFLICT) or a busy database
 *     (retryable ETIMEDOUT) refreshes the table and builds again on the new
 *     base; any other failure is final;
 *   - the metadata file of an attempt is the catalog's to remove when its
 *     swap definitely failed; what the caller wrote for an attempt is
 *     removed through drop_attempt only when that attempt can never become
 *     current;
 *   - ECOMMITUNKNOWN (the swap was sent and no answer came back) deletes
 *     nothing: the catalog is read again. If the current metadata holds the
 *     change (landed: the snapshot id, the table uuid, the properties) — or,
 *     for a change that cannot tell, if the new metadata file is current or
 *     in the metadata log — the commit succeeded.
 *     If the table moved on from the base without it, the compare-and-swap
 *     can never succeed any more (metadata locations are never reused), so
 *     the attempt failed and is retried like a lost race. If the table still
 *     points at the base, the swap may still be in flight: after a few
 *     checks the caller gets ECOMMITUNKNOWN naming the metadata file, and
 *     nothing is deleted (orphan cleanup removes it later if it never
 *     became current). Java's BaseMetastoreTableOperations.checkCommitStatus
 *     does the same.
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "iceberg/props.h"
#include "table/commit.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/timeutil.h"

void floe_retry_policy_from(floe_retry_policy *p, const floe_metadata *m)
{
	/* Java's defaults are 4 retries, 100 ms .. 60 s, 30 min; floe waits for
	 * more attempts by default because streaming writers commit often. A
	 * create (m NULL) uses the defaults. */
	p->num_retries = (int)floe_prop_i64(m, "commit.retry.num-retries");
	p->min_wait_ms = floe_prop_i64(m, "commit.retry.min-wait-ms");
	p->max_wait_ms = floe_prop_i64(m, "commit.retry.max-wait-ms");
	p->total_timeout_ms = floe_prop_i64(m, "commit.retry.total-timeout-ms");
	p->status_checks = (int)floe_prop_i64(m, "commit.status-check.num-retries");
	p->status_wait_ms = floe_prop_i64(m, "commit.status-check.min-wait-ms");
	if (p->num_retries < 0)
		p->num_retries = 0;
	if (p->min_wait_ms < 1)
		p->min_wait_ms = 1;
	if (p->max_wait_ms < p->min_wait_ms)
		p->max_wait_ms = p->min_wait_ms;
	if (p->status_checks < 1)
		p->status_checks = 1;
	if (p->status_wait_ms < 0)
		p->status_wait_ms = 0;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static bool in_log(const floe_metadata *m, const char *path)
{
	for (size_t i = 0; i < m->n_metadata_log; i++)
		if (m->metadata_log[i].metadata_file && !strcmp(m->metadata_log[i].metadata_file, path))
			return true;
	return false;
}

enum { LANDED, NOT_LANDED, STILL_UNKNOWN };

/*
 * The swap of `attempted` onto `base_loc` (NULL: a create) was sent and its
 * outcome is unknown. Read the catalog until it tells. On LANDED the table
 * holds what the catalog now has.
 */
static int resolve_unknown(floe_table *t, const char *base_loc, const char *attempted,
			   const floe_commit_fns *fns, void *payload, const floe_retry_policy *pol,
			   bool *may_delete)
{
	*may_delete = false;
	floe_catalog *cat = floe_table_catalog(t);
	for (int check = 0; check < pol->status_checks; check++) {
		floe_metadata *cur = NULL;
		floe_error lerr;
		floe_error_clear(&lerr);
		if (check > 0 && pol->status_wait_ms > 0)
			sleep_ms(pol->status_wait_ms << (check - 1 < 6 ? check - 1 : 6));
		int rc = floe_catalog_load_table(cat, floe_table_namespace(t), floe_table_name(t), &cur,
						 &lerr);
		if (rc == FLOE_ENOTFOUND && !base_loc) {
			/* a create that did not happen (nothing else could drop it) */
			return NOT_LANDED;
		}
		if (rc) {
			FLOE_WARN("%s.%s: commit state check %d: %s", floe_table_namespace(t),
				  floe_table_name(t), check + 1, lerr.msg);
			continue;
		}
		const char *cl = cur->metadata_location;
		/* A change that can recognise itself decides (the file-system
		 * catalog reuses a location, vN.metadata.json, for whichever
		 * writer wins it); otherwise the metadata file names it. */
		bool landed = fns->landed ? fns->landed(payload, cur)
					  : (attempted && cl && !strcmp(cl, attempted)) ||
						    (attempted && in_log(cur, attempted));
		if (landed) {
			floe_table__set_metadata(t, cur);
			return LANDED;
		}
		bool at_base = base_loc && cl && !strcmp(cl, base_loc);
		/* never delete a file the table names, whoever wrote it */
		*may_delete = attempted && !(cl && !strcmp(cl, attempted)) && !in_log(cur, attempted);
		floe_metadata_free(cur);
		if (!at_base)
			return NOT_LANDED; /* the base is gone: the swap can never succeed */
		*may_delete = false;
	}
	return STILL_UNKNOWN;
}

static int commit_loop(floe_table *t, const char *what, const floe_commit_fns *fns,
		       void *payload, const floe_retry_policy *pol, int64_t wait, int64_t start,
		       floe_error *err);

int floe_table__commit(floe_table *t, const char *what, const floe_commit_fns *fns, void *payload,
		       floe_error *err_out)
{
	floe_retry_policy pol;
	floe_error local, *err = err_out ? err_out : &local;
	int64_t start = floe_monotonic_ns();
	int64_t wait;
	int rc;
	floe_error_clear(&local);
	if (!floe_table_catalog(t))
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "this table was opened by path: commit through a catalog");
	floe_retry_policy_from(&pol, floe_table_metadata(t));
	wait = pol.min_wait_ms;
	/* the metadata file an attempt writes is unreferenced until its swap:
	 * the writer lease keeps orphan cleanup from deleting it meanwhile */
	if ((rc = floe_table__lease_hold(t, what, err)))
		return rc;
	rc = commit_loop(t, what, fns, payload, &pol, wait, start, err);
	floe_table__lease_drop(t, rc == FLOE_ECOMMITUNKNOWN);
	return rc;
}

static int commit_loop(floe_table *t, const char *what, const floe_commit_fns *fns,
		       void *payload, const floe_retry_policy *polp, int64_t wait, int64_t start,
		       floe_error *err)
{
	floe_retry_policy pol = *polp;
	int rc;
	for (int n = 1;; n++) {
		const floe_metadata *base = floe_table_metadata(t);
		const char *base_loc = base ? base->metadata_location : NULL;
		floe_metadata *next = NULL;
		char *loc = NULL;
		rc = fns->build(payload, base, n, &next, err);
		if (rc == FLOE_OK && !next)
			return FLOE_OK; /* nothing to commit */
		if (rc == FLOE_OK)
			rc = floe_catalog_commit_table(floe_table_catalog(t),
						       floe_table_namespace(t), floe_table_name(t),
						       base, next, &loc, err);
		if (rc == FLOE_OK) {
			next->metadata_location = floe_arena_strdup(&next->arena, loc);
			floe_free(loc);
			if (!next->metadata_location) {
				/* committed: reload rather than fail */
				floe_metadata_free(next);
				return floe_table_refresh(t, err);
			}
			floe_table__set_metadata(t, next);
			if (n > 1)
				FLOE_DEBUG("%s %s.%s: committed on attempt %d", what,
					   floe_table_namespace(t), floe_table_name(t), n);
			return FLOE_OK;
		}
		floe_metadata_free(next);
		if (rc == FLOE_ECOMMITUNKNOWN) {
			FLOE_WARN("%s %s.%s (attempt %d): %s; reading the catalog to find out", what,
				  floe_table_namespace(t), floe_table_name(t), n, err->msg);
			bool may_delete;
			int st = resolve_unknown(t, base_loc, loc, fns, payload, &pol, &may_delete);
			if (st == LANDED) {
				FLOE_INFO("%s %s.%s: the commit whose answer was lost is current", what,
					  floe_table_namespace(t), floe_table_name(t));
				floe_free(loc);
				floe_error_clear(err);
				return FLOE_OK;
			}
			if (st == STILL_UNKNOWN) {
				rc = floe_error_set(err, FLOE_ECOMMITUNKNOWN,
						    "%s %s.%s (attempt %d): commit state unknown: "
						    "metadata '%s' may or may not be current (%s); "
						    "nothing was deleted: reload the table to see",
						    what, floe_table_namespace(t), floe_table_name(t), n,
						    loc ? loc : "?", err->msg);
				floe_free(loc);
				return rc;
			}
			/* definitely not current: the attempt's files are garbage */
			if (loc && may_delete)
				floe_io_remove_quiet(floe_table_io(t), loc);
			floe_error_set_retryable(err, FLOE_ECONFLICT,
						 "the table moved on while the commit's answer was lost");
		}
		floe_free(loc);
		if (fns->drop_attempt)
			fns->drop_attempt(payload, n);
		int64_t elapsed_ms = (floe_monotonic_ns() - start) / 1000000;
		if (!err->retryable || n > pol.num_retries || elapsed_ms > pol.total_timeout_ms) {
			if (err->retryable && n > pol.num_retries)
				FLOE_WARN("%s %s.%s: giving up after %d attempts (commit.retry.num-retries "
					  "= %d)",
					  what, floe_table_namespace(t), floe_table_name(t), n,
					  pol.num_retries);
			return floe_error_prefix(err, rc, "%s %s.%s (attempt %d): ", what,
						 floe_table_namespace(t), floe_table_name(t), n);
		}
		FLOE_DEBUG("%s %s.%s lost a race (attempt %d): %s", what, floe_table_namespace(t),
			   floe_table_name(t), n, err->msg);
		/* exponential backoff with jitter */
		sleep_ms(wait / 2 + (int64_t)(floe_random_u64() % (uint64_t)(wait / 2 + 1)));
		wait = wait * 2 > pol.max_wait_ms ? pol.max_wait_ms : wait * 2;
		floe_error_clear(err);
		if (base && (rc = floe_table_refresh(t, err)))
			return floe_error_prefix(err, rc, "%s %s.%s: refreshing after attempt %d: ", what,
						 floe_table_namespace(t), floe_table_name(t), n);
	}
}

/* ---- several tables in one catalog transaction ------------------------------------ */

/*
 * The transaction of `n` swaps was sent and its outcome is unknown. The
 * catalog commits all or nothing, so: every table holds its change —
 * landed; some table's base is gone without its change — the transaction
 * can never succeed (failed, retried like a lost race); every table still
 * at its base — maybe in flight, ask again.
 */
static int resolve_unknown_multi(floe_table **ts, size_t n, char **base_locs,
				 floe_catalog_change *ch, const floe_commit_fns *fns,
				 void **payloads, const floe_retry_policy *pol)
{
	floe_catalog *cat = floe_table_catalog(ts[0]);
	floe_metadata **cur = floe_calloc(n, sizeof(*cur));
	int st = STILL_UNKNOWN;
	if (!cur)
		return STILL_UNKNOWN;
	for (int check = 0; check < pol->status_checks && st == STILL_UNKNOWN; check++) {
		size_t n_landed = 0, n_at_base = 0, n_read = 0;
		if (check > 0 && pol->status_wait_ms > 0)
			sleep_ms(pol->status_wait_ms << (check - 1 < 6 ? check - 1 : 6));
		for (size_t i = 0; i < n; i++) {
			floe_error lerr;
			floe_error_clear(&lerr);
			floe_metadata_free(cur[i]);
			cur[i] = NULL;
			if (floe_catalog_load_table(cat, floe_table_namespace(ts[i]),
						    floe_table_name(ts[i]), &cur[i], &lerr)) {
				FLOE_WARN("%s.%s: transaction state check %d: %s",
					  floe_table_namespace(ts[i]), floe_table_name(ts[i]),
					  check + 1, lerr.msg);
				continue;
			}
			n_read++;
			const char *cl = cur[i]->metadata_location;
			const char *att = ch[i].location;
			bool landed = fns->landed ? fns->landed(payloads[i], cur[i])
						  : (att && cl && !strcmp(cl, att)) ||
							    (att && in_log(cur[i], att));
			if (landed)
				n_landed++;
			else if (cl && base_locs[i] && !strcmp(cl, base_locs[i]))
				n_at_base++;
		}
		if (n_read < n)
			continue;
		if (n_landed == n) {
			for (size_t i = 0; i < n; i++) {
				floe_table__set_metadata(ts[i], cur[i]);
				cur[i] = NULL;
			}
			st = LANDED;
		} else if (n_landed + n_at_base < n) {
			st = NOT_LANDED; /* a base is gone without the change */
		} else if (n_landed > 0) {
			/* some landed and the rest still at base: only a catalog that is
			 * not all-or-nothing does this; keep asking */
			FLOE_WARN("transaction: %zu of %zu tables hold the change so far", n_landed, n);
		}
	}
	for (size_t i = 0; i < n; i++)
		floe_metadata_free(cur[i]);
	floe_free(cur);
	return st;
}

int floe_table__commit_multi(floe_table **ts, size_t n, const char *what,
			     const floe_commit_fns *fns, void **payloads, floe_error *err_out)
{
	floe_error local, *err = err_out ? err_out : &local;
	floe_retry_policy pol;
	floe_catalog_change *ch = NULL;
	floe_metadata **next = NULL;
	char **base_locs = NULL;
	size_t held = 0;
	int rc = FLOE_OK;
	floe_error_clear(&local);
	if (n == 0)
		return FLOE_OK;
	if (n == 1)
		return floe_table__commit(ts[0], what, fns, payloads[0], err);
	floe_catalog *cat = floe_table_catalog(ts[0]);
	if (!cat)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "this table was opened by path: commit through a catalog");
	for (size_t i = 1; i < n; i++)
		if (floe_table_catalog(ts[i]) != cat)
			return floe_error_set(err, FLOE_EINVAL,
					      "a multi-table commit needs every table on one catalog "
					      "object");
	if (!floe_catalog_has_transactions(cat) && cat->no_transactions)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "%s", cat->no_transactions);
	if (!floe_catalog_has_transactions(cat))
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "the %s catalog cannot commit several tables in one transaction",
				      cat->kind);
	ch = floe_calloc(n, sizeof(*ch));
	next = floe_calloc(n, sizeof(*next));
	base_locs = floe_calloc(n, sizeof(*base_locs));
	if (!ch || !next || !base_locs) {
		rc = floe_error_oom(err);
		goto done;
	}
	floe_retry_policy_from(&pol, floe_table_metadata(ts[0]));
	for (; held < n; held++)
		if ((rc = floe_table__lease_hold(ts[held], what, err)))
			goto done;
	int64_t start = floe_monotonic_ns(), wait = pol.min_wait_ms;
	for (int attempt = 1;; attempt++) {
		size_t built = 0;
		bool retry = false;
		for (size_t i = 0; i < n; i++) {
			const floe_metadata *base = floe_table_metadata(ts[i]);
			floe_free(base_locs[i]);
			base_locs[i] = base && base->metadata_location
					       ? floe_strdup(base->metadata_location)
					       : NULL;
			if (!base || !base_locs[i]) {
				rc = base ? floe_error_oom(err)
					  : floe_error_set(err, FLOE_EINVAL,
							   "a multi-table commit cannot create a table");
				break;
			}
			if ((rc = fns->build(payloads[i], base, attempt, &next[i], err))) {
				floe_error_prefix(err, rc, "%s.%s: ", floe_table_namespace(ts[i]),
						  floe_table_name(ts[i]));
				break;
			}
			if (!next[i]) {
				rc = floe_error_set(err, FLOE_EINVAL,
						    "%s.%s: nothing to commit in a multi-table commit",
						    floe_table_namespace(ts[i]), floe_table_name(ts[i]));
				break;
			}
			built++;
			ch[i].ns = floe_table_namespace(ts[i]);
			ch[i].name = floe_table_name(ts[i]);
			ch[i].base = base;
			ch[i].next = next[i];
		}
		if (!rc)
			rc = floe_catalog_commit_tables(cat, ch, n, err);
		if (rc == FLOE_OK) {
			bool reload = false;
			for (size_t i = 0; i < n; i++) {
				if (ch[i].location)
					next[i]->metadata_location =
						floe_arena_strdup(&next[i]->arena, ch[i].location);
				if (!ch[i].location || !next[i]->metadata_location) {
					reload = true;
					continue;
				}
				floe_table__set_metadata(ts[i], next[i]);
				next[i] = NULL;
			}
			/* committed: a table whose new location is not known is read again */
			for (size_t i = 0; reload && i < n && !rc; i++)
				if (next[i])
					rc = floe_table_refresh(ts[i], err);
			if (attempt > 1)
				FLOE_DEBUG("%s %zu tables: committed on attempt %d", what, n, attempt);
			goto done;
		}
		for (size_t i = 0; i < built; i++) {
			floe_metadata_free(next[i]);
			next[i] = NULL;
		}
		if (rc == FLOE_ECOMMITUNKNOWN) {
			FLOE_WARN("%s %zu tables (attempt %d): %s; reading the catalog to find out", what,
				  n, attempt, err->msg);
			int st = resolve_unknown_multi(ts, n, base_locs, ch, fns, payloads, &pol);
			if (st == LANDED) {
				FLOE_INFO("%s %zu tables: the transaction whose answer was lost is "
					  "current",
					  what, n);
				floe_error_clear(err);
				rc = FLOE_OK;
				goto done;
			}
			if (st == STILL_UNKNOWN) {
				rc = floe_error_set(err, FLOE_ECOMMITUNKNOWN,
						    "%s %zu tables (attempt %d): transaction state "
						    "unknown (%s); nothing was deleted: reload the "
						    "tables to see",
						    what, n, attempt, err->msg);
				goto done;
			}
			/* definitely not current: the attempt's metadata files are garbage
			 * (none is named by a table: their swaps never happened) */
			for (size_t i = 0; i < n; i++)
				if (ch[i].location)
					floe_io_remove_quiet(floe_table_io(ts[i]), ch[i].location);
			rc = floe_error_set_retryable(err, FLOE_ECONFLICT,
						      "the tables moved on while the transaction's "
						      "answer was lost");
		}
		for (size_t i = 0; i < n; i++) {
			floe_free(ch[i].location);
			ch[i].location = NULL;
		}
		for (size_t i = 0; fns->drop_attempt && i < built; i++)
			fns->drop_attempt(payloads[i], attempt);
		int64_t elapsed_ms = (floe_monotonic_ns() - start) / 1000000;
		retry = err->retryable && attempt <= pol.num_retries &&
			elapsed_ms <= pol.total_timeout_ms;
		if (!retry) {
			rc = floe_error_prefix(err, rc, "%s %zu tables (attempt %d): ", what, n, attempt);
			goto done;
		}
		FLOE_DEBUG("%s %zu tables lost a race (attempt %d): %s", what, n, attempt, err->msg);
		sleep_ms(wait / 2 + (int64_t)(floe_random_u64() % (uint64_t)(wait / 2 + 1)));
		wait = wait * 2 > pol.max_wait_ms ? pol.max_wait_ms : wait * 2;
		floe_error_clear(err);
		rc = FLOE_OK;
		for (size_t i = 0; i < n && !rc; i++)
			if ((rc = floe_table_refresh(ts[i], err)))
				floe_error_prefix(err, rc, "%s %s.%s: refreshing after attempt %d: ",
						  what, floe_table_namespace(ts[i]),
						  floe_table_name(ts[i]), attempt);
		if (rc)
			goto done;
	}
done:
	for (size_t i = 0; next && i < n; i++)
		floe_metadata_free(next[i]);
	for (size_t i = 0; ch && i < n; i++)
		floe_free(ch[i].location);
	for (size_t i = 0; base_locs && i < n; i++)
		floe_free(base_locs[i]);
	for (size_t i = 0; i < held; i++)
		floe_table__lease_drop(ts[i], rc == FLOE_ECOMMITUNKNOWN);
	floe_free(ch);
	floe_free(next);
	floe_free(base_locs);
	return rc;
}
