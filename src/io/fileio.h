/*
 * fileio.h — FileIO: where table files live. One vtable, implemented for
 * local files, memory (tests, with fault injection) and S3; a router picks the
 * backend by the path's scheme.
 *
 * Contract every backend keeps:
 *  - create() returns an output whose bytes become visible at `path` only when
 *    floe_output_close() succeeds; with overwrite=false the close fails with
 *    FLOE_EEXISTS if the path exists, and never replaces it (that is what
 *    makes file-system commits and "never overwrite committed data" safe);
 *  - an aborted output leaves nothing at `path`;
 *  - paths are URIs as written in Iceberg metadata ("file:/x", "file:///x",
 *    "/x", "s3://bucket/key", "mem://x").
 *
 * Thread-safety: a FileIO may be used from several threads at once.
 */
#ifndef FLOE_IO_FILEIO_H
#define FLOE_IO_FILEIO_H

#include "floe/common.h"
#include "util/alloc.h"
#include "util/str.h"
#include "util/stream.h"

typedef struct floe_fileio floe_fileio;

typedef struct floe_file_info {
	const char *path; /* full URI as the backend names it */
	uint64_t size;
	int64_t mtime_ms;
} floe_file_info;

typedef int (*floe_file_list_fn)(const floe_file_info *info, void *payload);

/*
 * A FileIO's source of new vended credentials (floe_io_set_renewer): asked,
 * from whichever thread's request finds them due, for new credentials for
 * prefix (as given to floe_io_set_credentials), which it hands back through
 * floe_io_set_credentials. Called without the FileIO's locks held, possibly
 * from several threads at once (for different prefixes).
 */
typedef int (*floe_io_renew_fn)(void *payload, const char *prefix, floe_error *err);

typedef struct floe_fileio_ops {
	int (*open_read)(floe_fileio *io, const char *path, floe_input **out, floe_error *err);
	int (*create)(floe_fileio *io, const char *path, bool overwrite, floe_output **out,
		      floe_error *err);
	/* FLOE_ENOTFOUND when absent. */
	int (*remove)(floe_fileio *io, const char *path, floe_error *err);
	int (*stat)(floe_fileio *io, const char *path, floe_file_info *info, floe_error *err);
	/* Every file under prefix (recursively), in no particular order. A
	 * non-zero return from fn stops the walk and is returned. */
	int (*list)(floe_fileio *io, const char *prefix, floe_file_list_fn fn, void *payload,
		    floe_error *err);
	/* Atomic rename that fails with FLOE_EEXISTS instead of replacing; may be
	 * FLOE_EUNSUPPORTED (object stores). */
	int (*rename_noreplace)(floe_fileio *io, const char *from, const char *to, floe_error *err);
	void (*free)(floe_fileio *io);
	/* Optional (NULL: one remove per path): delete n files in as few
	 * requests as the backend allows; codes[i] is 0 (deleted or absent) or
	 * the FLOE_E* of paths[i]. */
	int (*remove_batch)(floe_fileio *io, const char *const *paths, size_t n, int *codes,
			    floe_error *err);
	/* Optional: credentials for the paths under prefix (see
	 * floe_io_set_credentials). */
	int (*set_credentials)(floe_fileio *io, const char *prefix, const floe_strmap *props,
			       floe_error *err);
	/* Optional (NULL: open_read): an input that will be read from its
	 * start; the backend may learn the size from that first read instead
	 * of asking for it first (S3: no HEAD). */
	int (*open_read_seq)(floe_fileio *io, const char *path, floe_input **out,
			     floe_error *err);
	/* Optional (NULL: 0): when the credentials path's requests are signed
	 * with expire, in epoch ms (vended ones with an expiry; 0: no expiry
	 * known). */
	int64_t (*credentials_expire_ms)(floe_fileio *io, const char *path);
	/* Optional (NULL: vended credentials are never renewed by the FileIO):
	 * see floe_io_set_renewer. */
	void (*set_renewer)(floe_fileio *io, floe_io_renew_fn fn, void *payload);
	/* Optional (NULL: FLOE_EUNSUPPORTED): see floe_io_renew_credentials. */
	int (*renew_credentials)(floe_fileio *io, const char *path, floe_error *err);
} floe_fileio_ops;

struct floe_fileio {
	const floe_fileio_ops *ops;
	const char *name;
};

int floe_io_open_read(floe_fileio *io, const char *path, floe_input **out, floe_error *err) FLOE_WUR;
/*
 * floe_io_open_read for a file read from its first byte on (metadata JSON,
 * Avro manifest lists and manifests, leases): on S3 one ranged GET gives the
 * size and the first s3.read-ahead-bytes together, so a small file costs one
 * request instead of a HEAD and a GET. Same errors as floe_io_open_read.
 */
int floe_io_open_read_seq(floe_fileio *io, const char *path, floe_input **out,
			  floe_error *err) FLOE_WUR;
int floe_io_create(floe_fileio *io, const char *path, bool overwrite, floe_output **out,
		   floe_error *err) FLOE_WUR;
int floe_io_remove(floe_fileio *io, const char *path, floe_error *err) FLOE_WUR;
/*
 * Delete n files at once (S3: DeleteObjects, up to s3.delete.batch-size keys
 * a request). codes[i] receives 0 (deleted, or it was not there) or the
 * FLOE_E* of paths[i]; each failed path is logged with its reason. Returns
 * FLOE_OK when every path was tried (codes tell), else the error that
 * stopped it (the untried paths' codes are that error too).
 */
int floe_io_remove_batch(floe_fileio *io, const char *const *paths, size_t n, int *codes,
			 floe_error *err) FLOE_WUR;
/*
 * Per-prefix credentials, as a REST catalog vends them for one table's
 * files: requests for paths under prefix ("s3://bucket/wh/db/t") are signed
 * with props' s3.access-key-id, s3.secret-access-key and s3.session-token
 * instead of the FileIO's own (the longest matching prefix wins). A later
 * call for the same prefix replaces them; props without keys remove them.
 * FLOE_EUNSUPPORTED for a backend that signs nothing (local files).
 */
int floe_io_set_credentials(floe_fileio *io, const char *prefix, const floe_strmap *props,
			    floe_error *err) FLOE_WUR;
/* When the credentials signing path's requests expire (epoch ms; 0: no
 * expiry known, or credentials that do not expire): a REST catalog's vended
 * ones with s3.session-token-expires-at-ms. */
int64_t floe_io_credentials_expire_ms(floe_fileio *io, const char *path);
/*
 * Where new vended credentials come from (a REST catalog's loadCredentials):
 * a request whose credentials have an expiry asks fn for new ones before
 * they expire (once less than half their life or 5 minutes remain), so a
 * long scan, write or maintenance run outlives them. fn NULL: no renewal.
 * Backends without vended credentials ignore it.
 */
void floe_io_set_renewer(floe_fileio *io, floe_io_renew_fn fn, void *payload);
/*
 * Renew the vended credentials that path's requests use now, through the
 * renewer (a pipeline does it at a commit when they expire within a few
 * checkpoint intervals). FLOE_EUNSUPPORTED when there is no renewer or no
 * vended credentials for path; else the renewer's result.
 */
int floe_io_renew_credentials(floe_fileio *io, const char *path, floe_error *err) FLOE_WUR;
/* Best-effort removal for cleanup paths: failures are logged, not returned. */
void floe_io_remove_quiet(floe_fileio *io, const char *path);
int floe_io_stat(floe_fileio *io, const char *path, floe_file_info *info, floe_error *err) FLOE_WUR;
bool floe_io_exists(floe_fileio *io, const char *path);
int floe_io_list(floe_fileio *io, const char *prefix, floe_file_list_fn fn, void *payload,
		 floe_error *err) FLOE_WUR;
int floe_io_rename_noreplace(floe_fileio *io, const char *from, const char *to,
			     floe_error *err) FLOE_WUR;
void floe_io_free(floe_fileio *io);

/* Read a whole file (at most max bytes) into out. */
int floe_io_read_all(floe_fileio *io, const char *path, floe_buf *out, size_t max,
		     floe_error *err) FLOE_WUR;
/* Write a whole file (atomically visible; overwrite as in create). */
int floe_io_write_all(floe_fileio *io, const char *path, const void *p, size_t n, bool overwrite,
		      floe_error *err) FLOE_WUR;

/* Backends. */
floe_fileio *floe_io_local_new(void);
/* Memory FileIO for tests: paths under any scheme are kept in a map. */
floe_fileio *floe_io_memory_new(void);
/* Fault injection (memory backend): make the n-th next call of `op` fail with
 * `code` ("create", "close", "rename", "remove", "read"). n = 0 disables. */
void floe_io_memory_fail(floe_fileio *io, const char *op, int n, int code);
/* The router: file:, plain paths and mem: (when a memory backend is given).
 * It owns the backends once made; when it cannot be made (NULL) the caller
 * still owns them. */
floe_fileio *floe_io_router_new(floe_fileio *local, floe_fileio *memory, floe_fileio *s3);

/* The FileIO of a catalog: local files and s3:// (S3 configured from props,
 * Iceberg's S3FileIO names, then the AWS environment and shared files; see
 * io/s3.h). props may be NULL. FLOE_EINVAL for a bad S3 setting. */
struct floe_strmap;
int floe_io_default_new(floe_fileio **out, const struct floe_strmap *props,
			floe_error *err) FLOE_WUR;

/* Local path of a file URI ("file:/x", "file:///x", "/x") or NULL. */
const char *floe_io_local_path(const char *uri);
/* "file:///abs/path" for an absolute local path (arena string). */
char *floe_io_file_uri(floe_arena *a, const char *abs_path);
/* Scheme of a URI ("s3", "file", "" for plain paths) into out (cap >= 16). */
void floe_io_scheme(const char *uri, char *out, size_t cap);

#endif
