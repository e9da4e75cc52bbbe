/*
 * lease.h — writer leases: how a writer tells orphan cleanup that the files
 * it wrote since some moment may still be committed.
 *
 * A writer's files exist before the snapshot that names them: a pipeline's
 * data files for a checkpoint's whole interval, a commit's manifests across
 * its retries, the catalog's metadata file until the swap. Orphan cleanup
 * sees none of them in the metadata, and with a short minimum age it used to
 * delete them (a snapshot committed on attempt 3 named a manifest attempt 1
 * wrote and cleanup had deleted meanwhile).
 *
 * A lease is a small JSON file in the table's metadata directory,
 *   <metadata>/.floe-lease-<uuid>.json
 *   {"since-ms": S, "expires-ms": E, "what": "...", "host": "...", "pid": N}
 * While it is live (now < E) orphan cleanup deletes no file modified at or
 * after S - FLOE_LEASE_MARGIN_MS, whatever its cutoff. A writer takes the
 * lease before it writes its first file, moves S forward only past files
 * that are committed (or will never be), renews E while it runs and removes
 * the lease when it is done. A writer that dies leaves a lease that expires;
 * its files are then ordinary orphans.
 *
 * Why it closes the race: cleanup lists the files, then reads the leases,
 * then reads the metadata. A file it could delete was listed, so it existed
 * and so did the lease of its writer (taken before the file); that writer
 * dropped the lease (or moved S past the file) only after its commit
 * landed, so either cleanup saw the lease or the metadata it read afterwards
 * names the file.
 *
 * Thread-safety: a lease may be advanced from any thread; take/renew/release
 * from its owner. The heartbeat thread (keep-alive leases) only renews.
 */
#ifndef FLOE_TABLE_LEASE_H
#define FLOE_TABLE_LEASE_H

#include "io/fileio.h"

/* File times and the writer's clock may disagree by this much (coarse
 * mtimes, another host's clock): protection starts this long before S. */
#define FLOE_LEASE_MARGIN_MS INT64_C(60000)

typedef struct floe_lease floe_lease;

/*
 * Take a lease in metadata directory `dir` (a table's floe_metadata_dir):
 * since = now, live for ttl_ms, renewed every ttl_ms / 4 by a thread of its
 * own when heartbeat is set (else by floe_lease_touch). `what` names the
 * writer in the file (for operators).
 */
int floe_lease_take(floe_lease **out, floe_fileio *io, const char *dir, const char *what,
		    int64_t ttl_ms, bool heartbeat, floe_error *err) FLOE_WUR;
/* Files modified before since_ms are no longer this writer's concern (they
 * are committed or garbage); written at the next renewal. Never moves back. */
void floe_lease_advance(floe_lease *l, int64_t since_ms);
/* Renew now if half the time to live has passed, or write the advanced
 * since when the file's lags more than FLOE_LEASE_MARGIN_MS behind (for
 * leases without a heartbeat: a commit calls it before each attempt). */
int floe_lease_touch(floe_lease *l, floe_error *err) FLOE_WUR;
/* Is it renewed by a thread of its own? */
bool floe_lease_has_heartbeat(const floe_lease *l);
/* Stop the heartbeat, remove the file (keep: renew it once and leave it to
 * expire a time to live from now — files this writer wrote may yet be named
 * by a commit whose outcome is unknown) and free. Accepts NULL. */
void floe_lease_release(floe_lease *l, bool keep);

/* ---- what orphan cleanup reads ------------------------------------------------------- */

/* Is path a lease file (".floe-lease-*.json")? */
bool floe_lease_is_lease(const char *path);

typedef struct floe_lease_scan {
	int64_t oldest_since; /* of the live leases (INT64_MAX: none; INT64_MIN: protect all) */
	size_t live, expired, unreadable;
} floe_lease_scan;

/* Is the lease file at path (modified at mtime_ms) live at now_ms? A lease
 * is never an orphan while it is. */
bool floe_lease_file_live(floe_fileio *io, const char *path, int64_t mtime_ms, int64_t now_ms);

/*
 * Read the leases in metadata directory dir at time now_ms. A lease that
 * cannot be read or parsed counts as live with no beginning (INT64_MIN: a
 * cleanup then deletes nothing young enough to matter) unless it is older
 * than a day.
 */
int floe_lease_scan_dir(floe_lease_scan *out, floe_fileio *io, const char *dir, int64_t now_ms,
			floe_error *err) FLOE_WUR;

#endif
