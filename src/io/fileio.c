/*
 * fileio.c — FileIO dispatch helpers, the scheme router, URI helpers.
 */
#include "io/fileio.h"

#include <string.h>

#include "io/s3.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/str.h"

int floe_io_open_read(floe_fileio *io, const char *path, floe_input **out, floe_error *err)
{
	return io->ops->open_read(io, path, out, err);
}

int floe_io_open_read_seq(floe_fileio *io, const char *path, floe_input **out, floe_error *err)
{
	if (io->ops->open_read_seq)
		return io->ops->open_read_seq(io, path, out, err);
	return io->ops->open_read(io, path, out, err);
}

int floe_io_create(floe_fileio *io, const char *path, bool overwrite, floe_output **out,
		   floe_error *err)
{
	return io->ops->create(io, path, overwrite, out, err);
}

int floe_io_remove(floe_fileio *io, const char *path, floe_error *err)
{
	return io->ops->remove(io, path, err);
}

int64_t floe_io_credentials_expire_ms(floe_fileio *io, const char *path)
{
	return io && io->ops->credentials_expire_ms ? io->ops->credentials_expire_ms(io, path) : 0;
}

void floe_io_set_renewer(floe_fileio *io, floe_io_renew_fn fn, void *payload)
{
	if (io && io->ops->set_renewer)
		io->ops->set_renewer(io, fn, payload);
}

int floe_io_renew_credentials(floe_fileio *io, const char *path, floe_error *err)
{
	if (!io->ops->renew_credentials)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "the %s file system renews no credentials for '%s'", io->name,
				      path);
	return io->ops->renew_credentials(io, path, err);
}

int floe_io_set_credentials(floe_fileio *io, const char *prefix, const floe_strmap *props,
			    floe_error *err)
{
	if (!io->ops->set_credentials)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "the %s file system takes no credentials for '%s'", io->name,
				      prefix);
	return io->ops->set_credentials(io, prefix, props, err);
}

int floe_io_remove_batch(floe_fileio *io, const char *const *paths, size_t n, int *codes,
			 floe_error *err)
{
	if (!n)
		return FLOE_OK;
	if (io->ops->remove_batch)
		return io->ops->remove_batch(io, paths, n, codes, err);
	for (size_t i = 0; i < n; i++) {
		floe_error e;
		floe_error_clear(&e);
		int rc = io->ops->remove(io, paths[i], &e);
		codes[i] = rc == FLOE_ENOTFOUND ? FLOE_OK : rc;
		if (codes[i])
			FLOE_WARN("cannot delete '%s': %s", paths[i], e.msg);
		if (rc == FLOE_ENOMEM) {
			for (size_t k = i + 1; k < n; k++)
				codes[k] = rc;
			return floe_error_oom(err);
		}
	}
	return FLOE_OK;
}

void floe_io_remove_quiet(floe_fileio *io, const char *path)
{
	floe_error err;
	floe_error_clear(&err);
	if (io->ops->remove(io, path, &err) && err.code != FLOE_ENOTFOUND)
		FLOE_WARN("cleanup of '%s' failed: %s", path, err.msg);
}

int floe_io_stat(floe_fileio *io, const char *path, floe_file_info *info, floe_error *err)
{
	return io->ops->stat(io, path, info, err);
}

bool floe_io_exists(floe_fileio *io, const char *path)
{
	floe_file_info fi;
	return io->ops->stat(io, path, &fi, NULL) == 0;
}

int floe_io_list(floe_fileio *io, const char *prefix, floe_file_list_fn fn, void *payload,
		 floe_error *err)
{
	return io->ops->list(io, prefix, fn, payload, err);
}

int floe_io_rename_noreplace(floe_fileio *io, const char *from, const char *to, floe_error *err)
{
	if (!io->ops->rename_noreplace)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "%s cannot rename files", io->name);
	return io->ops->rename_noreplace(io, from, to, err);
}

void floe_io_free(floe_fileio *io)
{
	if (io)
		io->ops->free(io);
}

int floe_io_read_all(floe_fileio *io, const char *path, floe_buf *out, size_t max,
		     floe_error *err)
{
	floe_input *in = NULL;
	int rc = floe_io_open_read_seq(io, path, &in, err);
	if (rc)
		return rc;
	rc = floe_input_read_all(in, out, max, err);
	floe_input_close(in);
	return rc;
}

int floe_io_write_all(floe_fileio *io, const char *path, const void *p, size_t n, bool overwrite,
		      floe_error *err)
{
	floe_output *out = NULL;
	int rc = floe_io_create(io, path, overwrite, &out, err);
	if (rc)
		return rc;
	rc = floe_output_write(out, p, n, err);
	if (rc) {
		floe_output_abort(out);
		return rc;
	}
	return floe_output_close(out, err);
}

const char *floe_io_local_path(const char *uri)
{
	if (!uri)
		return NULL;
	if (uri[0] == '/')
		return uri;
	if (strncmp(uri, "file:", 5) == 0) {
		const char *p = uri + 5;
		if (strncmp(p, "///", 3) == 0)
			return p + 2;
		if (strncmp(p, "//localhost/", 12) == 0)
			return p + 11;
		if (p[0] == '/' && p[1] != '/')
			return p;
		return NULL;
	}
	return NULL;
}

char *floe_io_file_uri(floe_arena *a, const char *abs_path)
{
	return floe_arena_sprintf(a, "file://%s", abs_path);
}

void floe_io_scheme(const char *uri, char *out, size_t cap)
{
	const char *c = strstr(uri, "://");
	const char *colon = strchr(uri, ':');
	size_t n = 0;
	if (c)
		n = (size_t)(c - uri);
	else if (colon && colon[1] == '/')
		n = (size_t)(colon - uri);
	if (n >= cap)
		n = cap - 1;
	for (size_t i = 0; i < n; i++)
		out[i] = uri[i] >= 'A' && uri[i] <= 'Z' ? (char)(uri[i] + 32) : uri[i];
	out[n] = 0;
}

/* ---- router ---------------------------------------------------------------- */

typedef struct router {
	floe_fileio base;
	floe_fileio *local, *memory, *s3;
} router;

static floe_fileio *route(router *r, const char *path, floe_error *err)
{
	char scheme[16];
	floe_io_scheme(path, scheme, sizeof(scheme));
	if (!scheme[0] || strcmp(scheme, "file") == 0) {
		if (r->local)
			return r->local;
	} else if (strcmp(scheme, "mem") == 0) {
		if (r->memory)
			return r->memory;
	} else if (strcmp(scheme, "s3") == 0 || strcmp(scheme, "s3a") == 0 ||
		   strcmp(scheme, "s3n") == 0) {
		if (r->s3)
			return r->s3;
	}
	floe_error_set(err, FLOE_EUNSUPPORTED, "no file system for '%s' (scheme '%s')", path,
		       scheme[0] ? scheme : "none");
	return NULL;
}

static int r_open(floe_fileio *io, const char *path, floe_input **out, floe_error *err)
{
	floe_fileio *t = route((router *)io, path, err);
	return t ? floe_io_open_read(t, path, out, err) : FLOE_EUNSUPPORTED;
}
static int r_open_seq(floe_fileio *io, const char *path, floe_input **out, floe_error *err)
{
	floe_fileio *t = route((router *)io, path, err);
	return t ? floe_io_open_read_seq(t, path, out, err) : FLOE_EUNSUPPORTED;
}
static int r_create(floe_fileio *io, const char *path, bool ow, floe_output **out, floe_error *err)
{
	floe_fileio *t = route((router *)io, path, err);
	return t ? floe_io_create(t, path, ow, out, err) : FLOE_EUNSUPPORTED;
}
static int r_remove(floe_fileio *io, const char *path, floe_error *err)
{
	floe_fileio *t = route((router *)io, path, err);
	return t ? floe_io_remove(t, path, err) : FLOE_EUNSUPPORTED;
}
static int r_stat(floe_fileio *io, const char *path, floe_file_info *fi, floe_error *err)
{
	floe_fileio *t = route((router *)io, path, err);
	return t ? floe_io_stat(t, path, fi, err) : FLOE_EUNSUPPORTED;
}
static int r_list(floe_fileio *io, const char *prefix, floe_file_list_fn fn, void *payload,
		  floe_error *err)
{
	floe_fileio *t = route((router *)io, prefix, err);
	return t ? floe_io_list(t, prefix, fn, payload, err) : FLOE_EUNSUPPORTED;
}
static int r_rename(floe_fileio *io, const char *from, const char *to, floe_error *err)
{
	floe_fileio *t = route((router *)io, from, err);
	return t ? floe_io_rename_noreplace(t, from, to, err) : FLOE_EUNSUPPORTED;
}
/* runs of paths on one backend, each handed to it whole */
static int r_remove_batch(floe_fileio *io, const char *const *paths, size_t n, int *codes,
			  floe_error *err)
{
	router *r = (router *)io;
	size_t i = 0;
	while (i < n) {
		floe_error e;
		floe_error_clear(&e);
		floe_fileio *t = route(r, paths[i], &e);
		size_t j = i + 1;
		while (j < n && route(r, paths[j], NULL) == t)
			j++;
		if (!t) {
			for (size_t k = i; k < j; k++) {
				codes[k] = FLOE_EUNSUPPORTED;
				FLOE_WARN("cannot delete '%s': %s", paths[k], e.msg);
			}
		} else {
			int rc = floe_io_remove_batch(t, paths + i, j - i, codes + i, err);
			if (rc) {
				for (size_t k = j; k < n; k++)
					codes[k] = rc;
				return rc;
			}
		}
		i = j;
	}
	return FLOE_OK;
}

static void r_free(floe_fileio *io)
{
	router *r = (router *)io;
	floe_io_free(r->local);
	floe_io_free(r->memory);
	floe_io_free(r->s3);
	floe_free(r);
}

static int r_set_credentials(floe_fileio *io, const char *prefix, const floe_strmap *props,
			     floe_error *err)
{
	floe_fileio *t = route((router *)io, prefix, err);
	return t ? floe_io_set_credentials(t, prefix, props, err) : FLOE_EUNSUPPORTED;
}

static int64_t r_credentials_expire_ms(floe_fileio *io, const char *path)
{
	floe_error scratch = {0};
	floe_fileio *t = route((router *)io, path, &scratch);
	return t ? floe_io_credentials_expire_ms(t, path) : 0;
}

static void r_set_renewer(floe_fileio *io, floe_io_renew_fn fn, void *payload)
{
	router *r = (router *)io;
	floe_io_set_renewer(r->local, fn, payload);
	floe_io_set_renewer(r->memory, fn, payload);
	floe_io_set_renewer(r->s3, fn, payload);
}

static int r_renew_credentials(floe_fileio *io, const char *path, floe_error *err)
{
	floe_fileio *t = route((router *)io, path, err);
	return t ? floe_io_renew_credentials(t, path, err) : FLOE_EUNSUPPORTED;
}

static const floe_fileio_ops router_ops = {r_open,   r_create, r_remove,       r_stat,
					   r_list,   r_rename, r_free,         r_remove_batch,
					   r_set_credentials, r_open_seq, r_credentials_expire_ms,
					   r_set_renewer, r_renew_credentials};

floe_fileio *floe_io_router_new(floe_fileio *local, floe_fileio *memory, floe_fileio *s3)
{
	router *r = floe_calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->base.ops = &router_ops;
	r->base.name = "router";
	r->local = local;
	r->memory = memory;
	r->s3 = s3;
	return &r->base;
}

int floe_io_default_new(floe_fileio **out, const floe_strmap *props, floe_error *err)
{
	floe_fileio *s3 = NULL, *local = floe_io_local_new();
	int rc;
	*out = NULL;
	if (!local)
		return floe_error_oom(err);
	if ((rc = floe_io_s3_new(&s3, props, err))) {
		floe_io_free(local);
		return rc;
	}
	if (!(*out = floe_io_router_new(local, NULL, s3))) {
		floe_io_free(local);
		floe_io_free(s3);
		return floe_error_oom(err);
	}
	return FLOE_OK;
}
