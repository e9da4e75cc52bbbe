/*
 * local.c — FileIO on the local file system (POSIX).
 *
 * DESIGN: create() writes to a hidden temporary file next to the target and
 * publishes it on close: rename(2) when overwriting is allowed, otherwise
 * link(2) + unlink(2), which fails with EEXIST instead of replacing — the
 * no-replace rename the file-system catalog and "never overwrite committed
 * data" need (POSIX rename silently replaces). Data is fsync'ed before it
 * is published, and the directory after, so a commit that returned survives
 * a power cut.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fileio.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/rand.h"

#define WRITE_BUF (256 * 1024)

static int os_err(floe_error *err, const char *what, const char *path, int e)
{
	int code = e == ENOENT ? FLOE_ENOTFOUND : e == EEXIST ? FLOE_EEXISTS : FLOE_EIO;
	return floe_error_set(err, code, "%s '%s': %s", what, path, strerror(e));
}

static int to_local(const char *uri, const char **out, floe_error *err)
{
	*out = floe_io_local_path(uri);
	if (!*out)
		return floe_error_set(err, FLOE_EINVAL, "'%s' is not a local path", uri);
	return FLOE_OK;
}

static int mkdirs(char *path)
{
	/* path is a directory path; creates each missing component */
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static void fsync_dir_of(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (!slash)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path > 0 ? slash - path : 1), path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* ---- input ------------------------------------------------------------------- */

typedef struct local_input {
	floe_input base;
	int fd;
	char *name;
} local_input;

static int li_read_at(floe_input *in, uint64_t off, void *buf, size_t n, size_t *got,
		      floe_error *err)
{
	local_input *l = (local_input *)in;
	for (;;) {
		ssize_t r = pread(l->fd, buf, n, (off_t)off);
		if (r >= 0) {
			*got = (size_t)r;
			return FLOE_OK;
		}
		if (errno != EINTR)
			return os_err(err, "read", l->name, errno);
	}
}

static void li_close(floe_input *in)
{
	local_input *l = (local_input *)in;
	close(l->fd);
	floe_free(l->name);
	floe_free(l);
}

static const floe_input_ops local_input_ops = {li_read_at, li_close, NULL};

static int l_open_read(floe_fileio *io, const char *uri, floe_input **out, floe_error *err)
{
	const char *path;
	struct stat st;
	local_input *l;
	int fd, rc;
	(void)io;
	if ((rc = to_local(uri, &path, err)))
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return os_err(err, "open", uri, errno);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = errno;
		close(fd);
		return S_ISDIR(st.st_mode) ? floe_error_set(err, FLOE_EINVAL, "'%s' is a directory", uri)
					   : os_err(err, "stat", uri, e);
	}
	l = floe_calloc(1, sizeof(*l));
	if (!l || !(l->name = floe_strdup(uri))) {
		floe_free(l);
		close(fd);
		return floe_error_oom(err);
	}
	l->fd = fd;
	l->base.ops = &local_input_ops;
	l->base.size = (uint64_t)st.st_size;
	l->base.name = l->name;
	*out = &l->base;
	return FLOE_OK;
}

/* ---- output -------------------------------------------------------------------- */

typedef struct local_output {
	floe_output base;
	int fd;
	bool overwrite;
	char *name;   /* the URI */
	char *target; /* local path */
	char *tmp;    /* temporary local path */
	uint8_t *buf;
	size_t len;
} local_output;

static int lo_flush(local_output *o, floe_error *err)
{
	size_t off = 0;
	while (off < o->len) {
		ssize_t w = write(o->fd, o->buf + off, o->len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return os_err(err, "write", o->name, errno);
		}
		off += (size_t)w;
	}
	o->len = 0;
	return FLOE_OK;
}

static int lo_write(floe_output *out, const void *p, size_t n, floe_error *err)
{
	local_output *o = (local_output *)out;
	int rc;
	if (o->len + n > WRITE_BUF) {
		if ((rc = lo_flush(o, err)))
			return rc;
		if (n >= WRITE_BUF) {
			size_t off = 0;
			while (off < n) {
				ssize_t w = write(o->fd, (const uint8_t *)p + off, n - off);
				if (w < 0) {
					if (errno == EINTR)
						continue;
					return os_err(err, "write", o->name, errno);
				}
				off += (size_t)w;
			}
			return FLOE_OK;
		}
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return FLOE_OK;
}

static void lo_free(local_output *o)
{
	if (o->fd >= 0)
		close(o->fd);
	floe_free(o->name);
	floe_free(o->target);
	floe_free(o->tmp);
	floe_free(o->buf);
	floe_free(o);
}

static void lo_abort(floe_output *out)
{
	local_output *o = (local_output *)out;
	if (o->fd >= 0) {
		close(o->fd);
		o->fd = -1;
	}
	unlink(o->tmp);
	lo_free(o);
}

static int lo_close(floe_output *out, floe_error *err)
{
	local_output *o = (local_output *)out;
	int rc = lo_flush(o, err);
	if (!rc && fsync(o->fd) != 0)
		rc = os_err(err, "fsync", o->name, errno);
	if (!rc && close(o->fd) != 0)
		rc = os_err(err, "close", o->name, errno);
	o->fd = -1;
	if (!rc) {
		if (o->overwrite) {
			if (rename(o->tmp, o->target) != 0)
				rc = os_err(err, "rename", o->name, errno);
		} else {
			if (link(o->tmp, o->target) != 0)
				rc = errno == EEXIST
					     ? floe_error_set(err, FLOE_EEXISTS, "'%s' already exists",
							      o->name)
					     : os_err(err, "link", o->name, errno);
			unlink(o->tmp);
		}
	}
	if (rc)
		unlink(o->tmp);
	else
		fsync_dir_of(o->target);
	lo_free(o);
	return rc;
}

static const floe_output_ops local_output_ops = {lo_write, lo_close, lo_abort};

static int l_create(floe_fileio *io, const char *uri, bool overwrite, floe_output **out,
		    floe_error *err)
{
	const char *path;
	local_output *o;
	char uuid[37];
	int rc;
	(void)io;
	if ((rc = to_local(uri, &path, err)))
		return rc;
	o = floe_calloc(1, sizeof(*o));
	if (!o)
		return floe_error_oom(err);
	o->fd = -1;
	o->overwrite = overwrite;
	o->name = floe_strdup(uri);
	o->target = floe_strdup(path);
	o->buf = floe_malloc(WRITE_BUF);
	floe_uuid_v4_str(uuid);
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	size_t tlen = strlen(path) + 64;
	o->tmp = floe_malloc(tlen);
	if (!o->name || !o->target || !o->buf || !o->tmp) {
		lo_free(o);
		return floe_error_oom(err);
	}
	snprintf(o->tmp, tlen, "%.*s/.%s.%s.tmp", (int)dlen, path, slash ? slash + 1 : path, uuid);
	if (!overwrite && access(path, F_OK) == 0) {
		lo_free(o);
		return floe_error_set(err, FLOE_EEXISTS, "'%s' already exists", uri);
	}
	if (dlen > 0) {
		char *dir = floe_strndup(path, dlen);
		if (!dir) {
			lo_free(o);
			return floe_error_oom(err);
		}
		if (mkdirs(dir) != 0) {
			rc = os_err(err, "mkdir", dir, errno);
			floe_free(dir);
			lo_free(o);
			return rc;
		}
		floe_free(dir);
	}
	o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		rc = os_err(err, "create", uri, errno);
		lo_free(o);
		return rc;
	}
	o->base.ops = &local_output_ops;
	o->base.name = o->name;
	*out = &o->base;
	return FLOE_OK;
}

/* ---- the rest ------------------------------------------------------------------ */

static int l_remove(floe_fileio *io, const char *uri, floe_error *err)
{
	const char *path;
	int rc;
	(void)io;
	if ((rc = to_local(uri, &path, err)))
		return rc;
	if (unlink(path) != 0)
		return os_err(err, "remove", uri, errno);
	return FLOE_OK;
}

static int l_stat(floe_fileio *io, const char *uri, floe_file_info *fi, floe_error *err)
{
	const char *path;
	struct stat st;
	int rc;
	(void)io;
	if ((rc = to_local(uri, &path, err)))
		return rc;
	if (stat(path, &st) != 0)
		return os_err(err, "stat", uri, errno);
	fi->path = uri;
	fi->size = (uint64_t)st.st_size;
	fi->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	return FLOE_OK;
}

static int walk(const char *dir, const char *uri_prefix, floe_file_list_fn fn, void *payload,
		int depth, floe_error *err)
{
	DIR *d;
	struct dirent *e;
	int rc = FLOE_OK;
	if (depth > 64)
		return FLOE_OK;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? FLOE_OK : os_err(err, "list", dir, errno);
	while (!rc && (e = readdir(d))) {
		char path[4096], uri[4200];
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		snprintf(uri, sizeof(uri), "%s/%s", uri_prefix, e->d_name);
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			rc = walk(path, uri, fn, payload, depth + 1, err);
		} else if (S_ISREG(st.st_mode)) {
			floe_file_info fi = {uri, (uint64_t)st.st_size,
					     (int64_t)st.st_mtim.tv_sec * 1000 +
						     st.st_mtim.tv_nsec / 1000000};
			rc = fn(&fi, payload);
		}
	}
	closedir(d);
	return rc;
}

static int l_list(floe_fileio *io, const char *prefix, floe_file_list_fn fn, void *payload,
		  floe_error *err)
{
	const char *path;
	char dir[4096], uri[4096];
	int rc;
	(void)io;
	if ((rc = to_local(prefix, &path, err)))
		return rc;
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(uri, sizeof(uri), "%s", prefix);
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = 0;
	n = strlen(uri);
	while (n > 1 && uri[n - 1] == '/')
		uri[--n] = 0;
	return walk(dir, uri, fn, payload, 0, err);
}

static int l_rename(floe_fileio *io, const char *from, const char *to, floe_error *err)
{
	const char *a, *b;
	int rc;
	(void)io;
	if ((rc = to_local(from, &a, err)) || (rc = to_local(to, &b, err)))
		return rc;
#ifdef RENAME_NOREPLACE
	if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE) == 0) {
		fsync_dir_of(b);
		return FLOE_OK;
	}
	if (errno == EEXIST)
		return floe_error_set(err, FLOE_EEXISTS, "'%s' already exists", to);
	if (errno != EINVAL && errno != ENOSYS)
		return os_err(err, "rename", from, errno);
#endif
	if (link(a, b) != 0)
		return errno == EEXIST ? floe_error_set(err, FLOE_EEXISTS, "'%s' already exists", to)
				       : os_err(err, "rename", from, errno);
	unlink(a);
	fsync_dir_of(b);
	return FLOE_OK;
}

static void l_free(floe_fileio *io)
{
	floe_free(io);
}

static const floe_fileio_ops local_ops = {l_open_read, l_create, l_remove, l_stat,
					  l_list,      l_rename, l_free, NULL, NULL, NULL, NULL, NULL, NULL};

floe_fileio *floe_io_local_new(void)
{
	floe_fileio *io = floe_calloc(1, sizeof(*io));
	if (io) {
		io->ops = &local_ops;
		io->name = "local";
	}
	return io;
}
