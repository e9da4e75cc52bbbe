/*
 * memory.c — FileIO in memory, for tests: the same contract as the real
 * backends, plus fault injection ("fail the 3rd create") so component tests
 * can make any step of a commit fail.
 */
#include <pthread.h>
#include <string.h>

#include "io/fileio.h"
#include "util/alloc.h"
#include "util/hmap.h"
#include "util/timeutil.h"

typedef struct mem_file {
	uint8_t *data;
	size_t len;
	int64_t mtime_ms;
	bool live;
} mem_file;

enum { OP_CREATE, OP_CLOSE, OP_RENAME, OP_REMOVE, OP_READ, OP_COUNT };

typedef struct mem_io {
	floe_fileio base;
	pthread_mutex_t mu;
	floe_hmap files; /* path -> mem_file* */
	mem_file **all;  /* for freeing */
	size_t n_all, cap_all;
	int fail_in[OP_COUNT];
	int fail_code[OP_COUNT];
} mem_io;

static bool injected(mem_io *m, int op, int *code)
{
	if (m->fail_in[op] <= 0)
		return false;
	if (--m->fail_in[op] == 0) {
		*code = m->fail_code[op];
		return true;
	}
	return false;
}

void floe_io_memory_fail(floe_fileio *io, const char *op, int n, int code)
{
	mem_io *m = (mem_io *)io;
	static const char *names[OP_COUNT] = {"create", "close", "rename", "remove", "read"};
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < OP_COUNT; i++)
		if (strcmp(op, names[i]) == 0) {
			m->fail_in[i] = n;
			m->fail_code[i] = code;
		}
	pthread_mutex_unlock(&m->mu);
}

static mem_file *lookup(mem_io *m, const char *path)
{
	uint64_t v;
	if (!floe_hmap_get_str(&m->files, path, &v))
		return NULL;
	mem_file *f = (mem_file *)(uintptr_t)v;
	return f->live ? f : NULL;
}

/* Store data at path (takes ownership of data). */
static int put(mem_io *m, const char *path, uint8_t *data, size_t len, bool overwrite)
{
	uint64_t v;
	mem_file *f = NULL;
	if (floe_hmap_get_str(&m->files, path, &v))
		f = (mem_file *)(uintptr_t)v;
	if (f && f->live && !overwrite)
		return FLOE_EEXISTS;
	if (!f) {
		f = floe_calloc(1, sizeof(*f));
		if (!f || FLOE_ARRAY_RESERVE(m->all, m->cap_all, m->n_all + 1) ||
		    floe_hmap_put_str(&m->files, path, (uint64_t)(uintptr_t)f)) {
			floe_free(f);
			return FLOE_ENOMEM;
		}
		m->all[m->n_all++] = f;
	}
	floe_free(f->data);
	f->data = data;
	f->len = len;
	f->live = true;
	f->mtime_ms = floe_now_ms();
	return FLOE_OK;
}

/* ---- input: a snapshot copy of the file ------------------------------------ */

typedef struct mem_input {
	floe_input base;
	uint8_t *data;
	char *name;
} mem_input;

static int mi_read_at(floe_input *in, uint64_t off, void *buf, size_t n, size_t *got,
		      floe_error *err)
{
	mem_input *mi = (mem_input *)in;
	(void)err;
	if (off >= in->size) {
		*got = 0;
		return FLOE_OK;
	}
	if (n > in->size - off)
		n = (size_t)(in->size - off);
	memcpy(buf, mi->data + off, n);
	*got = n;
	return FLOE_OK;
}

static void mi_close(floe_input *in)
{
	mem_input *mi = (mem_input *)in;
	floe_free(mi->data);
	floe_free(mi->name);
	floe_free(mi);
}

static const floe_input_ops mem_input_ops = {mi_read_at, mi_close, NULL};

static int m_open_read(floe_fileio *io, const char *path, floe_input **out, floe_error *err)
{
	mem_io *m = (mem_io *)io;
	mem_input *mi;
	int code;
	pthread_mutex_lock(&m->mu);
	if (injected(m, OP_READ, &code)) {
		pthread_mutex_unlock(&m->mu);
		return floe_error_set(err, code, "open '%s': injected failure", path);
	}
	mem_file *f = lookup(m, path);
	if (!f) {
		pthread_mutex_unlock(&m->mu);
		return floe_error_set(err, FLOE_ENOTFOUND, "open '%s': no such file", path);
	}
	mi = floe_calloc(1, sizeof(*mi));
	if (mi) {
		mi->data = floe_memdup(f->data ? f->data : (const uint8_t *)"", f->len);
		mi->name = floe_strdup(path);
		mi->base.size = f->len;
	}
	pthread_mutex_unlock(&m->mu);
	if (!mi || !mi->data || !mi->name) {
		if (mi) {
			floe_free(mi->data);
			floe_free(mi->name);
			floe_free(mi);
		}
		return floe_error_oom(err);
	}
	mi->base.ops = &mem_input_ops;
	mi->base.name = mi->name;
	*out = &mi->base;
	return FLOE_OK;
}

/* ---- output -------------------------------------------------------------------- */

typedef struct mem_output {
	floe_output base;
	mem_io *m;
	floe_buf buf;
	bool overwrite;
	char *name;
} mem_output;

static int mo_write(floe_output *out, const void *p, size_t n, floe_error *err)
{
	mem_output *o = (mem_output *)out;
	if (floe_buf_append(&o->buf, p, n))
		return floe_error_oom(err);
	return FLOE_OK;
}

static void mo_free(mem_output *o)
{
	floe_buf_reset(&o->buf);
	floe_free(o->name);
	floe_free(o);
}

static void mo_abort(floe_output *out)
{
	mo_free((mem_output *)out);
}

static int mo_close(floe_output *out, floe_error *err)
{
	mem_output *o = (mem_output *)out;
	mem_io *m = o->m;
	int rc, code;
	size_t len;
	pthread_mutex_lock(&m->mu);
	if (injected(m, OP_CLOSE, &code)) {
		pthread_mutex_unlock(&m->mu);
		rc = floe_error_set(err, code, "close '%s': injected failure", o->name);
		mo_free(o);
		return rc;
	}
	uint8_t *data = (uint8_t *)floe_buf_detach(&o->buf, &len);
	rc = data ? put(m, o->name, data, len, o->overwrite) : FLOE_ENOMEM;
	pthread_mutex_unlock(&m->mu);
	if (rc) {
		floe_free(data);
		rc = rc == FLOE_EEXISTS ? floe_error_set(err, rc, "'%s' already exists", o->name)
					: floe_error_set(err, rc, "out of memory");
	}
	mo_free(o);
	return rc;
}

static const floe_output_ops mem_output_ops = {mo_write, mo_close, mo_abort};

static int m_create(floe_fileio *io, const char *path, bool overwrite, floe_output **out,
		    floe_error *err)
{
	mem_io *m = (mem_io *)io;
	int code;
	pthread_mutex_lock(&m->mu);
	bool fail = injected(m, OP_CREATE, &code);
	bool exists = lookup(m, path) != NULL;
	pthread_mutex_unlock(&m->mu);
	if (fail)
		return floe_error_set(err, code, "create '%s': injected failure", path);
	if (exists && !overwrite)
		return floe_error_set(err, FLOE_EEXISTS, "'%s' already exists", path);
	mem_output *o = floe_calloc(1, sizeof(*o));
	if (!o || !(o->name = floe_strdup(path))) {
		floe_free(o);
		return floe_error_oom(err);
	}
	floe_buf_init(&o->buf, 0);
	o->m = m;
	o->overwrite = overwrite;
	o->base.ops = &mem_output_ops;
	o->base.name = o->name;
	*out = &o->base;
	return FLOE_OK;
}

static int m_remove(floe_fileio *io, const char *path, floe_error *err)
{
	mem_io *m = (mem_io *)io;
	int code;
	pthread_mutex_lock(&m->mu);
	if (injected(m, OP_REMOVE, &code)) {
		pthread_mutex_unlock(&m->mu);
		return floe_error_set(err, code, "remove '%s': injected failure", path);
	}
	mem_file *f = lookup(m, path);
	if (f) {
		f->live = false;
		floe_free(f->data);
		f->data = NULL;
		f->len = 0;
	}
	pthread_mutex_unlock(&m->mu);
	return f ? FLOE_OK : floe_error_set(err, FLOE_ENOTFOUND, "remove '%s': no such file", path);
}

static int m_stat(floe_fileio *io, const char *path, floe_file_info *fi, floe_error *err)
{
	mem_io *m = (mem_io *)io;
	pthread_mutex_lock(&m->mu);
	mem_file *f = lookup(m, path);
	if (f) {
		fi->path = path;
		fi->size = f->len;
		fi->mtime_ms = f->mtime_ms;
	}
	pthread_mutex_unlock(&m->mu);
	return f ? FLOE_OK : floe_error_set(err, FLOE_ENOTFOUND, "stat '%s': no such file", path);
}

static int m_list(floe_fileio *io, const char *prefix, floe_file_list_fn fn, void *payload,
		  floe_error *err)
{
	mem_io *m = (mem_io *)io;
	size_t pl = strlen(prefix);
	int rc = FLOE_OK;
	(void)err;
	/* collect under the lock, call back outside it */
	floe_file_info *items = NULL;
	size_t n = 0, cap = 0;
	pthread_mutex_lock(&m->mu);
	for (size_t i = 0; i < m->files.cap; i++) {
		floe_hmap_slot *s = &m->files.slots[i];
		if (!s->key)
			continue;
		mem_file *f = (mem_file *)(uintptr_t)s->val;
		if (!f->live || s->klen < pl || memcmp(s->key, prefix, pl) != 0)
			continue;
		if (FLOE_ARRAY_RESERVE(items, cap, n + 1)) {
			rc = FLOE_ENOMEM;
			break;
		}
		items[n].path = floe_strndup(s->key, s->klen);
		items[n].size = f->len;
		items[n].mtime_ms = f->mtime_ms;
		n++;
	}
	pthread_mutex_unlock(&m->mu);
	for (size_t i = 0; i < n && !rc; i++)
		rc = items[i].path ? fn(&items[i], payload) : FLOE_ENOMEM;
	for (size_t i = 0; i < n; i++)
		floe_free((char *)items[i].path);
	floe_free(items);
	return rc;
}

static int m_rename(floe_fileio *io, const char *from, const char *to, floe_error *err)
{
	mem_io *m = (mem_io *)io;
	int rc, code;
	pthread_mutex_lock(&m->mu);
	if (injected(m, OP_RENAME, &code)) {
		pthread_mutex_unlock(&m->mu);
		return floe_error_set(err, code, "rename '%s': injected failure", from);
	}
	mem_file *f = lookup(m, from);
	if (!f) {
		pthread_mutex_unlock(&m->mu);
		return floe_error_set(err, FLOE_ENOTFOUND, "rename '%s': no such file", from);
	}
	if (lookup(m, to)) {
		pthread_mutex_unlock(&m->mu);
		return floe_error_set(err, FLOE_EEXISTS, "'%s' already exists", to);
	}
	uint8_t *data = f->data;
	size_t len = f->len;
	rc = put(m, to, data, len, false);
	if (!rc) {
		f->data = NULL;
		f->len = 0;
		f->live = false;
	}
	pthread_mutex_unlock(&m->mu);
	return rc ? floe_error_set(err, rc, "rename '%s' failed", from) : FLOE_OK;
}

static void m_free(floe_fileio *io)
{
	mem_io *m = (mem_io *)io;
	for (size_t i = 0; i < m->n_all; i++) {
		floe_free(m->all[i]->data);
		floe_free(m->all[i]);
	}
	floe_free(m->all);
	floe_hmap_reset(&m->files);
	pthread_mutex_destroy(&m->mu);
	floe_free(m);
}

static const floe_fileio_ops memory_ops = {m_open_read, m_create, m_remove, m_stat,
					   m_list,	m_rename, m_free, NULL, NULL, NULL, NULL, NULL, NULL};

floe_fileio *floe_io_memory_new(void)
{
	mem_io *m = floe_calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	pthread_mutex_init(&m->mu, NULL);
	floe_hmap_init(&m->files);
	m->base.ops = &memory_ops;
	m->base.name = "memory";
	return &m->base;
}
