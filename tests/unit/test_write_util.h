/*
 * test_write_util.h — shared helpers of the write tests: a SQLite catalog
 * in a temporary directory whose FileIO routes mem:// to a memory backend
 * (fault injection, listing), tables from compact column lists, batches
 * from JSON rows, and reading a data file back with floe's Parquet reader.
 * Header-only (static functions) so each test binary stays one file.
 */
#ifndef FLOE_TEST_WRITE_UTIL_H
#define FLOE_TEST_WRITE_UTIL_H

#include <stdlib.h>

#include "arrow/arrow_build.h"
#include "harness.h"
#include "json_batch.h"
#include "parquet/reader.h"
#include "table/commit.h"
#include "table/create.h"
#include "write/write_int.h"

typedef struct wenv {
	floe_fileio *mem; /* owned by the catalog's router */
	floe_catalog *cat;
	floe_arena a;
	char wh[1024];
} wenv;

static FLOE_UNUSED void env_open(wenv *e, bool local)
{
	const char *dir = t_tmpdir();
	char uri[1024];
	floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
	floe_error err = {0};
	memset(e, 0, sizeof(*e));
	floe_arena_init(&e->a, 0);
	snprintf(uri, sizeof(uri), "sqlite:///%s/catalog.db", dir);
	if (local)
		snprintf(e->wh, sizeof(e->wh), "file://%s/warehouse", dir);
	else
		snprintf(e->wh, sizeof(e->wh), "mem://wh");
	e->mem = floe_io_memory_new();
	o.uri = uri;
	o.warehouse = e->wh;
	o.io = floe_io_router_new(floe_io_local_new(), e->mem, NULL);
	T_OK(floe_sql_catalog_open(&e->cat, &o, &err), &err);
	T_OK(floe_catalog_create_namespace(e->cat, "db", NULL, 0, &err), &err);
}

static FLOE_UNUSED void env_close(wenv *e)
{
	floe_catalog_free(e->cat);
	floe_arena_reset(&e->a);
}

/* props: NULL-terminated key, value, key, value, ... */
static FLOE_UNUSED floe_table *make_table(wenv *e, const char *name, const char *cols,
					  const char *partition_by, const char *const *props,
					  int fv)
{
	floe_table_create_opts o = FLOE_TABLE_CREATE_OPTS_INIT;
	floe_prop pr[32];
	size_t n = 0;
	floe_table *t = NULL;
	floe_error err = {0};
	for (; props && props[2 * n] && n < 32; n++)
		pr[n] = (floe_prop){props[2 * n], props[2 * n + 1]};
	o.schema = cols;
	o.partition_by = partition_by;
	o.properties = pr;
	o.n_properties = n;
	o.format_version = fv;
	T_OK(floe_table_create(&t, e->cat, "db", name, &o, &err), &err);
	return t;
}

/* A batch of the table's current schema from JSON rows. */
static FLOE_UNUSED void make_batch(const floe_schema *s, const char *const *rows, size_t n,
				   struct ArrowArray *a, struct ArrowSchema *as)
{
	json_batch *jb = NULL;
	floe_error err = {0};
	T_OK(json_batch_new(&jb, s, &err), &err);
	for (size_t i = 0; i < n; i++)
		T_OK(json_batch_append_text(jb, rows[i], strlen(rows[i]), &err), &err);
	T_OK(json_batch_finish(jb, a, as, &err), &err);
	json_batch_free(jb);
}

typedef void (*scan_fn)(const struct ArrowArray *b, const struct ArrowSchema *s, void *payload);

/* Read a data file back with floe's reader; returns its row count. */
static FLOE_UNUSED int64_t scan_file(floe_fileio *io, const char *path, scan_fn fn, void *payload)
{
	floe_input *in = NULL;
	floe_parquet_reader *r = NULL;
	struct ArrowSchema s;
	floe_error err = {0};
	int64_t rows = 0;
	bool eof = false;
	T_OK(floe_io_open_read(io, path, &in, &err), &err);
	if (!in)
		return -1;
	T_OK(floe_parquet_reader_open(&r, in, NULL, &err), &err);
	if (!r) {
		floe_input_close(in);
		return -1;
	}
	T_OK(floe_parquet_reader_arrow_schema(r, &s, &err), &err);
	while (!eof) {
		struct ArrowArray b;
		if (floe_parquet_reader_next(r, &b, &eof, &err)) {
			t_fail(__FILE__, __LINE__, "read %s: %s", path, err.msg);
			break;
		}
		if (eof)
			break;
		rows += b.length;
		if (fn)
			fn(&b, &s, payload);
		floe_arrow_array_release(&b);
	}
	floe_arrow_schema_release(&s);
	floe_parquet_reader_free(r);
	floe_input_close(in);
	return rows;
}

static FLOE_UNUSED int count_cb(const floe_file_info *fi, void *payload)
{
	(void)fi;
	(*(int *)payload)++;
	return 0;
}

static FLOE_UNUSED int count_files(floe_fileio *io, const char *prefix)
{
	int n = 0;
	floe_error err = {0};
	T_OK(floe_io_list(io, prefix, count_cb, &n, &err), &err);
	return n;
}

static FLOE_UNUSED const floe_id_bytes *find_bound(const floe_id_bytes *b, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].id == id)
			return &b[i];
	return NULL;
}

static FLOE_UNUSED const floe_id_long *find_long(const floe_id_long *b, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].id == id)
			return &b[i];
	return NULL;
}

/* Tiny deterministic generator (tests must be reproducible). */
static FLOE_UNUSED uint64_t t_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif
