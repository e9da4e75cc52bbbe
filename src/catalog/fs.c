/*
 * fs.c — the file-system ("Hadoop") catalog: tables are directories under a
 * warehouse, <table>/metadata/v<N>.metadata.json is version N, and
 * version-hint.text names the newest. A commit renames a fully written
 * temporary file (".<uuid>.metadata.json.tmp": in progress by name, which
 * orphan cleanup honours) to v<N+1> without ever replacing one that exists, so two
 * writers can't both win. Also the loader for path-based tables (what
 * DuckDB's iceberg_scan reads).
 *
 * spec: ../shared/iceberg-notes.md section 7.2. Namespaces are directories;
 * that needs a local warehouse (object stores have no directories).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/catalog_impl.h"
#include "util/alloc.h"
#include "util/rand.h"

typedef struct fs_catalog {
	floe_catalog base;
	char *name;
	char *warehouse; /* URI */
} fs_catalog;

/* "<warehouse>/<a>/<b>[/<name>]" */
static char *ns_uri(fs_catalog *c, const char *ns, const char *name)
{
	floe_buf b;
	int rc;
	floe_buf_init(&b, 0);
	rc = floe_buf_puts(&b, c->warehouse);
	if (ns && *ns) {
		rc = rc ? rc : floe_buf_putc(&b, '/');
		for (const char *p = ns; *p && !rc; p++)
			rc = floe_buf_putc(&b, *p == '.' ? '/' : *p);
	}
	if (name && !rc)
		rc = floe_buf_printf(&b, "/%s", name);
	if (rc) {
		floe_buf_reset(&b);
		return NULL;
	}
	return floe_buf_detach(&b, NULL);
}

static bool is_dir(const char *uri)
{
	const char *p = floe_io_local_path(uri);
	struct stat st;
	return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- version discovery -------------------------------------------------------- */

typedef struct max_version {
	int64_t best;
	char *best_path;
	int64_t best_seq; /* NNNNN-uuid fallback */
	char *best_seq_path;
} max_version;

static int version_cb(const floe_file_info *fi, void *payload)
{
	max_version *mv = payload;
	const char *base = strrchr(fi->path, '/');
	base = base ? base + 1 : fi->path;
	if (!strstr(base, ".metadata.json") || base[0] == '.')
		return 0;
	/* only files directly in the metadata directory */
	int64_t v = floe_metadata_file_version(fi->path);
	if (v < 0)
		return 0;
	if (base[0] == 'v') {
		if (v > mv->best) {
			floe_free(mv->best_path);
			mv->best = v;
			mv->best_path = floe_strdup(fi->path);
		}
	} else if (v > mv->best_seq) {
		floe_free(mv->best_seq_path);
		mv->best_seq = v;
		mv->best_seq_path = floe_strdup(fi->path);
	}
	return 0;
}

static char *version_path(floe_fileio *io, const char *mdir, int64_t v)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/v%lld.metadata.json", mdir, (long long)v);
	if (floe_io_exists(io, p))
		return floe_strdup(p);
	snprintf(p, sizeof(p), "%s/v%lld.gz.metadata.json", mdir, (long long)v);
	if (floe_io_exists(io, p))
		return floe_strdup(p);
	snprintf(p, sizeof(p), "%s/v%lld.metadata.json.gz", mdir, (long long)v);
	if (floe_io_exists(io, p))
		return floe_strdup(p);
	return NULL;
}

/* Find the current metadata file of a table directory. */
static int find_current(floe_fileio *io, const char *table_uri, char **out, floe_error *err)
{
	char mdir[4096], hint[4200];
	floe_buf b;
	char *path = NULL;
	int64_t v = -1;
	snprintf(mdir, sizeof(mdir), "%s/metadata", table_uri);
	floe_buf_init(&b, 4096);
	snprintf(hint, sizeof(hint), "%s/version-hint.text", mdir);
	if (floe_io_read_all(io, hint, &b, 4096, NULL) != 0) {
		floe_buf_clear(&b);
		snprintf(hint, sizeof(hint), "%s/version-hint.txt", mdir);
		if (floe_io_read_all(io, hint, &b, 4096, NULL) != 0)
			floe_buf_clear(&b);
	}
	if (b.len) {
		/* first line: a number, or a metadata file stem */
		size_t n = 0;
		while (n < b.len && b.data[n] != '\n' && b.data[n] != '\r')
			n++;
		while (n > 0 && b.data[n - 1] == ' ')
			n--;
		if (floe_parse_i64((const char *)b.data, n, &v)) {
			path = version_path(io, mdir, v);
		} else if (n > 0) {
			char p[4400];
			snprintf(p, sizeof(p), "%s/%.*s.metadata.json", mdir, (int)n, (char *)b.data);
			if (floe_io_exists(io, p))
				path = floe_strdup(p);
			else {
				snprintf(p, sizeof(p), "%s/%.*s", mdir, (int)n, (char *)b.data);
				if (floe_io_exists(io, p))
					path = floe_strdup(p);
			}
		}
	}
	floe_buf_reset(&b);
	if (path && v >= 0) {
		/* the hint may be stale: probe forward like Java does */
		char *next;
		while ((next = version_path(io, mdir, v + 1))) {
			floe_free(path);
			path = next;
			v++;
		}
	}
	if (!path) {
		max_version mv = {-1, NULL, -1, NULL};
		int rc = floe_io_list(io, mdir, version_cb, &mv, err);
		if (rc) {
			floe_free(mv.best_path);
			floe_free(mv.best_seq_path);
			return rc;
		}
		if (mv.best_path) {
			path = mv.best_path;
			floe_free(mv.best_seq_path);
		} else {
			path = mv.best_seq_path;
		}
	}
	if (!path)
		return floe_error_set(err, FLOE_ENOTFOUND, "no table metadata in '%s'", mdir);
	*out = path;
	return FLOE_OK;
}

int floe_fs_load_path(floe_fileio *io, const char *path, floe_metadata **out, floe_error *err)
{
	char *cur = NULL;
	int rc;
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	char *p = floe_strndup(path, n);
	if (!p)
		return floe_error_oom(err);
	if (strstr(p, ".metadata.json") || floe_str_endswith(p, ".json") ||
	    floe_str_endswith(p, ".json.gz")) {
		rc = floe_metadata_read(io, p, out, err);
	} else {
		rc = find_current(io, p, &cur, err);
		if (!rc)
			rc = floe_metadata_read(io, cur, out, err);
	}
	floe_free(cur);
	floe_free(p);
	return rc;
}

/* ---- namespaces (local warehouses) ----------------------------------------------- */

static bool is_table_dir(floe_fileio *io, const char *uri)
{
	char *cur = NULL;
	bool t = find_current(io, uri, &cur, NULL) == 0;
	floe_free(cur);
	return t;
}

static int mkdirs_local(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int need_local(fs_catalog *c, const char *uri, const char **path, floe_error *err)
{
	*path = floe_io_local_path(uri);
	if (!*path)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "the file-system catalog keeps namespaces as directories, which "
				      "needs a local warehouse (not '%s')",
				      c->warehouse);
	return FLOE_OK;
}

static int fs_namespace_exists(floe_catalog *cat, const char *ns, bool *exists, floe_error *err)
{
	fs_catalog *c = (fs_catalog *)cat;
	char *u = ns_uri(c, ns, NULL);
	(void)err;
	if (!u)
		return FLOE_ENOMEM;
	*exists = is_dir(u) && !is_table_dir(cat->io, u);
	floe_free(u);
	return FLOE_OK;
}

static int fs_create_namespace(floe_catalog *cat, const char *ns, const floe_strmap *props,
			       floe_error *err)
{
	fs_catalog *c = (fs_catalog *)cat;
	const char *path;
	char *u = ns_uri(c, ns, NULL);
	int rc;
	if (!u)
		return floe_error_oom(err);
	if (props && props->len) {
		floe_free(u);
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "the file-system catalog cannot store namespace properties");
	}
	if ((rc = need_local(c, u, &path, err)) == 0) {
		if (is_dir(u))
			rc = floe_error_set(err, FLOE_EEXISTS, "namespace '%s' already exists", ns);
		else if (mkdirs_local(path) != 0)
			rc = floe_error_set(err, FLOE_EIO, "cannot create '%s': %s", path,
					    strerror(errno));
	}
	floe_free(u);
	return rc;
}

typedef struct dir_list {
	char **items;
	size_t n, cap;
} dir_list;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Subdirectories of uri; tables (want_tables) or namespaces. */
static int list_dirs(fs_catalog *c, const char *uri, bool want_tables, dir_list *out,
		     floe_error *err)
{
	const char *path;
	DIR *d;
	struct dirent *e;
	int rc = need_local(c, uri, &path, err);
	if (rc)
		return rc;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? floe_error_set(err, FLOE_ENOTFOUND, "'%s' does not exist", uri)
				       : floe_error_set(err, FLOE_EIO, "cannot list '%s': %s", uri,
							strerror(errno));
	while ((e = readdir(d))) {
		char sub[4200];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", uri, e->d_name);
		if (!is_dir(sub) || is_table_dir(c->base.io, sub) != want_tables)
			continue;
		if (FLOE_ARRAY_RESERVE(out->items, out->cap, out->n + 1) ||
		    !(out->items[out->n] = floe_strdup(e->d_name))) {
			rc = floe_error_oom(err);
			break;
		}
		out->n++;
	}
	closedir(d);
	if (out->n)
		qsort(out->items, out->n, sizeof(char *), cmp_str);
	return rc;
}

static void dir_list_free(dir_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		floe_free(l->items[i]);
	floe_free(l->items);
}

static int fs_list_namespaces(floe_catalog *cat, const char *parent, floe_name_fn fn,
			      void *payload, floe_error *err)
{
	fs_catalog *c = (fs_catalog *)cat;
	dir_list l = {0};
	char *u = ns_uri(c, parent, NULL);
	int rc;
	if (!u)
		return floe_error_oom(err);
	rc = list_dirs(c, u, false, &l, err);
	if (rc == FLOE_ENOTFOUND && (!parent || !*parent))
		rc = FLOE_OK; /* empty warehouse */
	for (size_t i = 0; i < l.n && !rc; i++) {
		char full[1024];
		if (parent && *parent)
			snprintf(full, sizeof(full), "%s.%s", parent, l.items[i]);
		else
			snprintf(full, sizeof(full), "%s", l.items[i]);
		rc = fn(full, NULL, payload);
	}
	dir_list_free(&l);
	floe_free(u);
	return rc;
}

static int fs_drop_namespace(floe_catalog *cat, const char *ns, floe_error *err)
{
	fs_catalog *c = (fs_catalog *)cat;
	const char *path;
	char *u = ns_uri(c, ns, NULL);
	int rc;
	if (!u)
		return floe_error_oom(err);
	if ((rc = need_local(c, u, &path, err)) == 0) {
		if (!is_dir(u))
			rc = floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns);
		else if (rmdir(path) != 0)
			rc = errno == ENOTEMPTY || errno == EEXIST
				     ? floe_error_set(err, FLOE_EINVAL, "namespace '%s' is not empty",
						      ns)
				     : floe_error_set(err, FLOE_EIO, "cannot remove '%s': %s", path,
						      strerror(errno));
	}
	floe_free(u);
	return rc;
}

static int fs_load_ns_props(floe_catalog *cat, const char *ns, floe_strmap *out, floe_error *err)
{
	bool exists;
	int rc = fs_namespace_exists(cat, ns, &exists, err);
	(void)out;
	if (!rc && !exists)
		rc = floe_error_set(err, FLOE_ENOTFOUND, "namespace '%s' does not exist", ns);
	return rc;
}

static int fs_list_tables(floe_catalog *cat, const char *ns, floe_name_fn fn, void *payload,
			  floe_error *err)
{
	fs_catalog *c = (fs_catalog *)cat;
	dir_list l = {0};
	char *u = ns_uri(c, ns, NULL);
	int rc;
	if (!u)
		return floe_error_oom(err);
	rc = list_dirs(c, u, true, &l, err);
	if (rc == FLOE_ENOTFOUND)
		floe_error_set(err, rc, "namespace '%s' does not exist", ns);
	for (size_t i = 0; i < l.n && !rc; i++)
		rc = fn(ns, l.items[i], payload);
	dir_list_free(&l);
	floe_free(u);
	return rc;
}

static int fs_load_table(floe_catalog *cat, const char *ns, const char *name, floe_metadata **out,
			 floe_error *err)
{
	fs_catalog *c = (fs_catalog *)cat;
	char *u = ns_uri(c, ns, name);
	int rc;
	if (!u)
		return floe_error_oom(err);
	rc = floe_fs_load_path(cat->io, u, out, err);
	if (rc == FLOE_ENOTFOUND)
		floe_error_set(err, rc, "table '%s.%s' does not exist", ns, name);
	floe_free(u);
	return rc;
}

static int fs_commit(floe_catalog *cat, const char *ns, const char *name,
		     const floe_metadata *base, const floe_metadata *next, char **location,
		     floe_error *err)
{
	fs_catalog *c = (fs_catalog *)cat;
	char *u = ns_uri(c, ns, name);
	char tmp[4200], target[4200], hint[4200], uuid[37];
	floe_buf data;
	int64_t v = 1;
	int rc;
	if (!u)
		return floe_error_oom(err);
	if (base) {
		v = floe_metadata_file_version(base->metadata_location);
		if (v < 0) {
			floe_free(u);
			return floe_error_set(err, FLOE_EINVAL,
					      "cannot tell the version of '%s' (expected vN.metadata.json)",
					      base->metadata_location);
		}
		v++;
	} else {
		bool exists;
		if (!is_dir(u) && floe_io_local_path(u)) {
			char *nsu = ns_uri(c, ns, NULL);
			bool nsok = nsu && fs_namespace_exists(cat, ns, &exists, NULL) == 0 && exists;
			floe_free(nsu);
			if (!nsok) {
				floe_free(u);
				return floe_error_set(err, FLOE_ENOTFOUND,
						      "namespace '%s' does not exist", ns);
			}
		}
		if (is_table_dir(cat->io, u)) {
			floe_free(u);
			return floe_error_set(err, FLOE_EEXISTS, "table '%s.%s' already exists", ns,
					      name);
		}
	}
	if (strcmp(next->location, u) != 0 && floe_io_local_path(u) &&
	    !(floe_io_local_path(next->location) &&
	      strcmp(floe_io_local_path(next->location), floe_io_local_path(u)) == 0)) {
		rc = floe_error_set(err, FLOE_EINVAL,
				    "a file-system table lives at its catalog path '%s', not '%s'", u,
				    next->location);
		floe_free(u);
		return rc;
	}
	floe_uuid_v4_str(uuid);
	/* in progress until renamed: a leading '.' is the name rule orphan
	 * cleanup honours (and no loader takes it for a version) */
	snprintf(tmp, sizeof(tmp), "%s/metadata/.%s.metadata.json.tmp", u, uuid);
	snprintf(target, sizeof(target), "%s/metadata/v%lld%s", u, (long long)v,
		 floe_metadata_file_suffix(next));
	snprintf(hint, sizeof(hint), "%s/metadata/version-hint.text", u);
	floe_free(u);
	floe_buf_init(&data, 0);
	rc = floe_metadata_encode(&data, next, err);
	if (!rc)
		rc = floe_io_write_all(cat->io, tmp, data.data, data.len, false, err);
	floe_buf_reset(&data);
	if (rc)
		return rc;
	if (floe_catalog__fault_lose_swap(cat)) {
		/* the file this attempt wrote (the target name belongs to whichever
		 * writer wins the rename) */
		if (!(*location = floe_strdup(tmp)))
			return floe_error_oom(err);
		return floe_error_set(err, FLOE_ECOMMITUNKNOWN,
				      "injected fault: the rename was lost on its way to the disk");
	}
	rc = floe_io_rename_noreplace(cat->io, tmp, target, err);
	if (rc) {
		floe_io_remove_quiet(cat->io, tmp);
		if (rc == FLOE_EEXISTS)
			return base ? floe_error_set_retryable(err, FLOE_ECONFLICT,
							       "table '%s.%s': version %lld was "
							       "committed by another writer",
							       ns, name, (long long)v)
				    : floe_error_set(err, FLOE_EEXISTS, "table '%s.%s' already exists",
						     ns, name);
		return rc;
	}
	/* best effort, like Java: readers probe past a stale hint */
	char num[32];
	int nl = snprintf(num, sizeof(num), "%lld", (long long)v);
	floe_error herr;
	floe_error_clear(&herr);
	if (floe_io_write_all(cat->io, hint, num, (size_t)nl, true, &herr))
		floe_error_clear(&herr);
	*location = floe_strdup(target);
	return *location ? FLOE_OK : floe_error_oom(err);
}

typedef struct rm_ctx {
	floe_fileio *io;
	int rc;
} rm_ctx;

static int rm_metadata_cb(const floe_file_info *fi, void *payload)
{
	rm_ctx *r = payload;
	floe_io_remove_quiet(r->io, fi->path);
	return 0;
}

static int fs_drop_table(floe_catalog *cat, const char *ns, const char *name, floe_error *err)
{
	fs_catalog *c = (fs_catalog *)cat;
	char *u = ns_uri(c, ns, name);
	char mdir[4200];
	rm_ctx r = {cat->io, 0};
	int rc;
	if (!u)
		return floe_error_oom(err);
	if (!is_table_dir(cat->io, u)) {
		floe_free(u);
		return floe_error_set(err, FLOE_ENOTFOUND, "table '%s.%s' does not exist", ns, name);
	}
	snprintf(mdir, sizeof(mdir), "%s/metadata", u);
	rc = floe_io_list(cat->io, mdir, rm_metadata_cb, &r, err);
	const char *lp = floe_io_local_path(mdir);
	if (lp)
		rmdir(lp);
	floe_free(u);
	return rc;
}

static int fs_default_location(floe_catalog *cat, const char *ns, const char *name, char **out,
			       floe_error *err)
{
	*out = ns_uri((fs_catalog *)cat, ns, name);
	return *out ? FLOE_OK : floe_error_oom(err);
}

static void fs_free(floe_catalog *cat)
{
	fs_catalog *c = (fs_catalog *)cat;
	floe_io_free(cat->io);
	floe_free(cat->lock_uri);
	floe_free(cat->open_warehouse);
	floe_free(c->name);
	floe_free(c->warehouse);
	floe_free(c);
}

static const floe_catalog_ops fs_ops = {
	fs_create_namespace, fs_list_namespaces, fs_drop_namespace, fs_namespace_exists,
	fs_load_ns_props,    NULL,		 fs_list_tables,    fs_load_table,
	fs_commit,	     fs_drop_table,	 NULL,		    fs_default_location,
	fs_free, NULL, /* no multi-table transactions */
};

int floe_fs_catalog_open(floe_catalog **out, const floe_fs_catalog_opts *opts, floe_error *err)
{
	fs_catalog *c;
	if (!opts->warehouse || !*opts->warehouse)
		return floe_error_set(err, FLOE_EINVAL, "the file-system catalog needs a warehouse");
	c = floe_calloc(1, sizeof(*c));
	if (!c)
		return floe_error_oom(err);
	size_t n = strlen(opts->warehouse);
	while (n > 1 && opts->warehouse[n - 1] == '/')
		n--;
	c->warehouse = floe_strndup(opts->warehouse, n);
	c->name = floe_strdup(opts->name && *opts->name ? opts->name : "default");
	c->base.ops = &fs_ops;
	c->base.name = c->name;
	c->base.kind = "filesystem";
	c->base.io = opts->io;
	if (!c->base.io) {
		int iorc = floe_io_default_new(&c->base.io, NULL, err);
		if (iorc) {
			fs_free(&c->base);
			return iorc;
		}
	}
	c->base.open_warehouse = floe_strdup(opts->warehouse);
	if (!c->warehouse || !c->name || !c->base.io || !c->base.open_warehouse) {
		fs_free(&c->base);
		return floe_error_oom(err);
	}
	const char *local = floe_io_local_path(c->warehouse);
	if (local) {
		size_t len = strlen(local) + sizeof("/floe-locks.db");
		if (!(c->base.lock_uri = floe_malloc(len))) {
			fs_free(&c->base);
			return floe_error_oom(err);
		}
		snprintf(c->base.lock_uri, len, "%s/floe-locks.db", local);
	}
	*out = &c->base;
	return FLOE_OK;
}
