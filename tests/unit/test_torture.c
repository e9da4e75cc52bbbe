/*
 * test_torture.c — curl's "torture" idea: run a component operation once to
 * count its allocations, then again failing the 1st, 2nd, ... allocation
 * (and every one after it). Each run must fail with FLOE_ENOMEM (or succeed,
 * where a failed allocation has a fallback), leave no allocation behind, and
 * leave nothing half done: a table is at its old or its new version and
 * every file its metadata names exists; an aborted writer leaves no file.
 *
 * Operations: table metadata (parse, write, build a new version), Parquet
 * (write a file, read it back), manifests (through scan planning), the
 * commit path (an append on a SQLite catalog; two tables' appends in one
 * catalog transaction), the task writer
 * (partitioned, rolling), pipeline state (listed and forgotten), the delete writers (equality deletes rolling,
 * position deletes spilling, a DV Puffin file with a previous DV merged), and
 * a SQL session (parse a script, create a JDBC catalog, a database and a
 * partitioned table with a primary key, set a property, DESCRIBE, SHOW
 * CREATE TABLE, SELECT from a metadata table, drop the table), and a
 * row-level update (merge-on-read on v3: a DV merged and replaced, a new data
 * file, one row delta), and the Kinesis source's bookkeeping (a GetRecords
 * answer parsed, each shard's position and sequence number recorded, written
 * as floe.source-offsets, read back and merged with another table's), and
 * a Kafka block's values through the json, csv and raw formats with every
 * metadata column filled from the records (topic, partition, offset,
 * timestamp and its type, key, headers), and avro-confluent values (the
 * registry's answer parsed, good and bad values decoded).
 * Every failure point is visited while an operation
 * has at most MAX_POINTS allocations; beyond that an even stride of them.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include "floe/dml.h"
#include "floe/maintain.h"
#include "iceberg/metadata.h"
#include "parquet/writer.h"
#include "floe/maintain.h"
#include "floe/scan.h"
#include "floe/plan.h"
#include "floe/sql.h"
#include "avro/avro_datum.h"
#include "stream/stream_decode_avro.h"
#include "stream/stream_kinesis.h"
#include "stream/stream_runtime.h"
#include "stream/stream_value_format.h"
#include "test_write_util.h"
#include "util/timeutil.h"

#define MAX_POINTS 1500

/* The error of the last failed run (for the messages). */
static floe_error g_last;

typedef struct scenario {
	const char *name;
	int (*run)(void *ctx);          /* one operation; returns its status */
	void (*check)(void *ctx, int rc); /* after each run, allocations on again */
	void *ctx;
	long max_points; /* 0 = MAX_POINTS (slow scenarios, e.g. fsyncing commits, take fewer) */
} scenario;

static void torture(const scenario *sc)
{
	/* warm up (per-thread codec contexts and the like stay cached) */
	int rc = sc->run(sc->ctx);
	if (rc != FLOE_OK) {
		t_fail(__FILE__, __LINE__, "%s: the operation fails without faults: %s", sc->name,
		       floe_strerror(rc));
		return;
	}
	if (sc->check)
		sc->check(sc->ctx, rc);
	long live0 = floe_alloc__live();
	long c0 = floe_alloc__count();
	rc = sc->run(sc->ctx);
	long total = floe_alloc__count() - c0;
	T_EQ_INT(rc, FLOE_OK);
	T_EQ_INT(floe_alloc__live(), live0);
	if (sc->check)
		sc->check(sc->ctx, rc);
	live0 = floe_alloc__live();
	long maxp = sc->max_points > 0 ? sc->max_points : MAX_POINTS;
	long stride = total > maxp ? total / maxp : 1;
	/* FLOE_TORTURE_AT="<scenario>:<n>" runs one failure point and stops
	 * there, so LeakSanitizer reports where a leaked block came from */
	const char *at = getenv("FLOE_TORTURE_AT");
	if (at && !strncmp(at, sc->name, strlen(sc->name)) && at[strlen(sc->name)] == ':') {
		floe_alloc__fail_after(atol(at + strlen(sc->name) + 1));
		rc = sc->run(sc->ctx);
		floe_alloc__fail_after(0);
		printf("     %s at %s: %s\n", sc->name, at, floe_strerror(rc));
		exit(0);
	}
	long failed = 0, points = 0;
	for (long n = 1; n <= total; n += stride) {
		floe_alloc__fail_after(n);
		rc = sc->run(sc->ctx);
		floe_alloc__fail_after(0);
		points++;
		if (rc != FLOE_OK) {
			failed++;
			if (rc != FLOE_ENOMEM) {
				t_fail(__FILE__, __LINE__,
				       "%s: allocation %ld of %ld failed: %s, not ENOMEM (%s)", sc->name, n,
				       total, floe_strerror(rc), g_last.msg);
				break;
			}
		}
		if (floe_alloc__live() != live0) {
			t_fail(__FILE__, __LINE__, "%s: allocation %ld of %ld failed: %ld allocations leaked",
			       sc->name, n, total, floe_alloc__live() - live0);
			break;
		}
		if (sc->check)
			sc->check(sc->ctx, rc);
		live0 = floe_alloc__live();
	}
	T_CHECK(failed > 0);
	printf("     %s: %ld allocations, %ld failure points, %ld failed cleanly\n", sc->name, total,
	       points, failed);
}

/* ---- table metadata -------------------------------------------------------- */

typedef struct meta_ctx {
	char *json;
	size_t n;
} meta_ctx;

static int run_metadata(void *p)
{
	meta_ctx *c = p;
	floe_metadata *m = NULL, *next = NULL;
	floe_metadata_builder *b = NULL;
	floe_buf out;
	floe_strmap props;
	floe_error err = {0};
	int rc;
	floe_buf_init(&out, 0);
	floe_strmap_init(&props);
	if ((rc = floe_metadata_parse(&m, c->json, c->n, &err)))
		goto done;
	if ((rc = floe_metadata_write(&out, m, 0)))
		goto done;
	if (floe_strmap_set(&props, "owner", "torture")) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	if ((rc = floe_metadata_builder_from(&b, m, &err)) ||
	    (rc = floe_mb_set_properties(b, &props, &err)))
		goto done;
	rc = floe_metadata_builder_finish(&next, b, m->metadata_location, m->last_updated_ms, &err);
	b = NULL;
done:
	if (rc)
		g_last = err;
	floe_metadata_builder_free(b);
	floe_metadata_free(next);
	floe_metadata_free(m);
	floe_buf_reset(&out);
	floe_strmap_reset(&props);
	return rc;
}

static void test_metadata(void)
{
	meta_ctx c = {0};
	char path[4096];
	snprintf(path, sizeof(path), "%s", t_testdata("duckdb-iceberg/data/persistent/generated_bounds/metadata/v1.metadata.json"));
	FILE *f = fopen(path, "rb");
	T_CHECK(f != NULL);
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	c.n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	c.json = malloc(c.n + 1);
	T_CHECK(fread(c.json, 1, c.n, f) == c.n);
	fclose(f);
	scenario sc = {"metadata parse, write and build", run_metadata, NULL, &c, 0};
	torture(&sc);
	free(c.json);
}

/* ---- Parquet ------------------------------------------------------------------ */

typedef struct pq_ctx {
	floe_fileio *io;
	const floe_schema *schema;
	struct ArrowArray batch;
	struct ArrowSchema bschema;
	const floe_write_config *cfg;
	const floe_metadata *m;
	int k;
} pq_ctx;

static int run_parquet(void *p)
{
	pq_ctx *c = p;
	floe_fileio *io = floe_io_memory_new();
	floe_data_writer *w = NULL;
	floe_data_file df;
	floe_arena a;
	floe_error err = {0};
	char path[128];
	int rc;
	floe_arena_init(&a, 0);
	snprintf(path, sizeof(path), "mem://wh/pq/f%d.parquet", c->k++);
	if (!io) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	if ((rc = floe_data_writer_open(&w, io, path, c->m, c->schema, NULL, NULL, c->cfg, NULL,
					&err)))
		goto done;
	if ((rc = floe_data_writer_write(w, &c->batch, &c->bschema, &err)) ||
	    (rc = floe_data_writer_write(w, &c->batch, &c->bschema, &err))) {
		floe_data_writer_abort(w);
		goto done;
	}
	if ((rc = floe_data_writer_close(w, &df, &a, &err)))
		goto done;
	/* and back */
	floe_input *in = NULL;
	floe_parquet_reader *r = NULL;
	if ((rc = floe_io_open_read(io, path, &in, &err)))
		goto done;
	rc = floe_parquet_reader_open(&r, in, NULL, &err);
	for (bool eof = false; !rc && !eof;) {
		struct ArrowArray b;
		rc = floe_parquet_reader_next(r, &b, &eof, &err);
		if (!rc && !eof)
			floe_arrow_array_release(&b);
	}
	floe_parquet_reader_free(r);
	floe_input_close(in);
done:
	if (rc)
		g_last = err;
	floe_io_free(io);
	floe_arena_reset(&a);
	return rc;
}

static void test_parquet(void)
{
	wenv e;
	floe_error err = {0};
	floe_write_config cfg;
	pq_ctx c = {0};
	env_open(&e, false);
	floe_table *t = make_table(&e, "pq",
				   "id long not null, s string, d decimal(10, 2), ts timestamptz, "
				   "tags list<string>, st struct<a: int, b: string>",
				   NULL, NULL, 2);
	const floe_metadata *m = floe_table_metadata(t);
	const char *rows[] = {
		"{\"id\": 1, \"s\": \"a\", \"d\": \"1.25\", \"ts\": \"2026-11-30T10:00:00+00:00\", "
		"\"tags\": [\"x\", \"y\"], \"st\": {\"a\": 1, \"b\": \"q\"}}",
		"{\"id\": 2}",
		"{\"id\": 3, \"s\": \"ccc\", \"tags\": [], \"st\": {\"a\": null}}",
	};
	T_OK(floe_write_config_from(&cfg, &e.a, m, &err), &err);
	c.io = e.mem;
	c.m = m;
	c.schema = floe_metadata_current_schema(m);
	c.cfg = &cfg;
	make_batch(c.schema, rows, 3, &c.batch, &c.bschema);
	scenario sc = {"Parquet write and read", run_parquet, NULL, &c, 0};
	torture(&sc);
	c.batch.release(&c.batch);
	c.bschema.release(&c.bschema);
	floe_table_free(t);
	env_close(&e);
}

/* ---- the commit path and manifests ---------------------------------------------- */

typedef struct commit_ctx {
	floe_catalog *cat;
	int64_t snapshots; /* before the run */
	int k;
} commit_ctx;

static int64_t n_snapshots(floe_catalog *cat)
{
	floe_table *t = NULL;
	floe_error err = {0};
	T_OK(floe_table_load(&t, cat, "db", "c", &err), &err);
	int64_t n = t ? (int64_t)floe_table_metadata(t)->n_snapshots : -1;
	floe_table_free(t);
	return n;
}

static int count_task(const floe_scan_task *task, void *payload)
{
	(void)task;
	(void)payload;
	return 0;
}

static int run_commit(void *p)
{
	commit_ctx *c = p;
	floe_table *t = NULL;
	floe_append *ap = NULL;
	floe_error err = {0};
	floe_arena a;
	int rc;
	floe_arena_init(&a, 0);
	c->snapshots = -1;
	if ((rc = floe_table_load(&t, c->cat, "db", "c", &err)))
		goto done;
	c->snapshots = (int64_t)floe_table_metadata(t)->n_snapshots;
	floe_data_file f;
	floe_data_file_init(&f);
	f.content = FLOE_CONTENT_DATA;
	f.file_path = floe_arena_sprintf(&a, "%s/data/t%d.parquet", floe_table_metadata(t)->location,
					 c->k++);
	if (!f.file_path) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	f.record_count = 3;
	f.file_size_in_bytes = 300;
	f.spec_id = 0;
	if ((rc = floe_append_new(&ap, t, NULL, &err)) || (rc = floe_append_add_file(ap, &f, &err)))
		goto done;
	rc = floe_append_commit(ap, NULL, &err);
	if (rc)
		goto done;
	/* plan the new snapshot: reads the manifest list and every manifest */
	floe_scan *s = NULL;
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	so.threads = 1;
	if ((rc = floe_scan_open(&s, t, &so, &err)) == 0) {
		rc = floe_scan_tasks(s, count_task, NULL, &err);
		floe_scan_free(s);
	}
done:
	if (rc)
		g_last = err;
	floe_append_free(ap);
	floe_table_free(t);
	floe_arena_reset(&a);
	return rc;
}

/* Old or new version, and everything it names is there. */
static void check_commit(void *p, int rc)
{
	commit_ctx *c = p;
	int64_t now = n_snapshots(c->cat);
	if (c->snapshots >= 0)
		T_CHECK(now == c->snapshots || now == c->snapshots + 1);
	floe_table *t = NULL;
	floe_error err = {0};
	T_OK(floe_table_load(&t, c->cat, "db", "c", &err), &err);
	if (!t)
		return;
	const floe_metadata *m = floe_table_metadata(t);
	for (size_t i = 0; i < m->n_snapshots; i++) {
		floe_input *in = NULL;
		T_OK(floe_io_open_read(floe_table_io(t), m->snapshots[i].manifest_list, &in, &err),
		     &err);
		floe_input_close(in);
	}
	floe_file_counts fc;
	T_OK(floe_table_count_files(&fc, t, NULL, &err), &err);
	T_EQ_INT(fc.data_files, (int64_t)m->n_snapshots);
	(void)rc;
	floe_table_free(t);
}

/* ---- the multi-table commit (pipeline.atomic-commit) ---- */

typedef struct multi_ctx {
	floe_catalog *cat;
	int64_t before; /* snapshots of each table before the run (-1: unknown) */
	int k;
} multi_ctx;

static int64_t snaps_of(floe_catalog *cat, const char *name)
{
	floe_table *t = NULL;
	floe_error err = {0};
	T_OK(floe_table_load(&t, cat, "db", name, &err), &err);
	int64_t n = t ? (int64_t)floe_table_metadata(t)->n_snapshots : -1;
	floe_table_free(t);
	return n;
}

static int run_multi(void *p)
{
	multi_ctx *c = p;
	static const char *const names[2] = {"ma", "mb"};
	floe_table *ts[2] = {NULL, NULL};
	floe_snapshot_op *ops[2] = {NULL, NULL};
	floe_error err = {0};
	floe_arena a;
	int rc = FLOE_OK;
	floe_arena_init(&a, 0);
	c->before = -1;
	for (int i = 0; i < 2 && !rc; i++)
		rc = floe_table_load(&ts[i], c->cat, "db", names[i], &err);
	if (!rc)
		c->before = (int64_t)floe_table_metadata(ts[0])->n_snapshots;
	for (int i = 0; i < 2 && !rc; i++) {
		floe_data_file f;
		floe_data_file_init(&f);
		f.content = FLOE_CONTENT_DATA;
		f.file_path = floe_arena_sprintf(&a, "%s/data/m%d.parquet",
						 floe_table_metadata(ts[i])->location, c->k);
		if (!f.file_path) {
			rc = FLOE_ENOMEM;
			break;
		}
		f.record_count = 3;
		f.file_size_in_bytes = 300;
		f.spec_id = 0;
		rc = floe_op_new(&ops[i], ts[i], FLOE_OP_APPEND, NULL, &err);
		rc = rc ? rc : floe_op_add_file(ops[i], &f, &err);
		rc = rc ? rc : floe_op_set_summary(ops[i], "floe.checkpoint-id", "1", &err);
	}
	c->k++;
	rc = rc ? rc : floe_op_commit_all(ops, 2, NULL, &err);
	if (rc)
		g_last = err;
	for (int i = 0; i < 2; i++) {
		floe_op_free(ops[i]);
		floe_table_free(ts[i]);
	}
	floe_arena_reset(&a);
	return rc;
}

/* Both tables moved or neither did. */
static void check_multi(void *p, int rc)
{
	multi_ctx *c = p;
	int64_t na = snaps_of(c->cat, "ma"), nb = snaps_of(c->cat, "mb");
	T_EQ_INT(na, nb);
	if (c->before >= 0)
		T_CHECK(na == c->before || na == c->before + 1);
	(void)rc;
}

static void test_multi_commit(void)
{
	wenv e;
	env_open(&e, true);
	floe_table_free(make_table(&e, "ma", "id long", NULL, NULL, 2));
	floe_table_free(make_table(&e, "mb", "id long", NULL, NULL, 2));
	multi_ctx c = {e.cat, -1, 0};
	scenario sc = {"multi-table commit (one transaction)", run_multi, check_multi, &c, 300};
	torture(&sc);
	env_close(&e);
}

static void test_commit(void)
{
	wenv e;
	env_open(&e, true); /* local files: the memory FileIO keeps what it removes */
	floe_table *t = make_table(&e, "c", "id long", NULL, NULL, 2);
	floe_table_free(t);
	commit_ctx c = {e.cat, -1, 0};
	scenario sc = {"append commit and planning", run_commit, check_commit, &c, 0};
	torture(&sc);
	env_close(&e);
}

/* ---- pipeline state: list, forget ------------------------------------------------- */

static int count_state(const floe_pipeline_state *st, void *payload)
{
	(*(int *)payload)++;
	(void)st;
	return 0;
}

/* A pipeline commits, is listed, and is forgotten (a property commit). */
static int run_pipelines(void *p)
{
	commit_ctx *c = p;
	floe_table *t = NULL;
	floe_append *ap = NULL;
	floe_error err = {0};
	floe_arena a;
	char pid[32];
	int rc, n = 0;
	floe_arena_init(&a, 0);
	snprintf(pid, sizeof(pid), "p%d", c->k);
	if ((rc = floe_table_load(&t, c->cat, "db", "pl", &err)))
		goto done;
	floe_data_file f;
	floe_data_file_init(&f);
	f.content = FLOE_CONTENT_DATA;
	f.file_path = floe_arena_sprintf(&a, "%s/data/p%d.parquet", floe_table_metadata(t)->location,
					 c->k++);
	if (!f.file_path) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	f.record_count = 1;
	f.file_size_in_bytes = 100;
	if ((rc = floe_append_new(&ap, t, NULL, &err)) || (rc = floe_append_add_file(ap, &f, &err)) ||
	    (rc = floe_append_set_summary(ap, "floe.pipeline-id", pid, &err)) ||
	    (rc = floe_append_set_summary(ap, "floe.load-complete", "true", &err)) ||
	    (rc = floe_append_commit(ap, NULL, &err)))
		goto done;
	if ((rc = floe_table_pipelines(t, count_state, &n, &err)))
		goto done;
	if (n < 1) {
		rc = FLOE_EINVAL;
		goto done;
	}
	rc = floe_table_forget_pipeline(t, pid, &err);
done:
	if (rc)
		g_last = err;
	floe_append_free(ap);
	floe_table_free(t);
	floe_arena_reset(&a);
	return rc;
}

/* ---- table alter: schema and write-order evolution --------------------------------- */

static int run_alter(void *p)
{
	commit_ctx *c = p;
	floe_table *t = NULL;
	floe_error err = {0};
	char col[32];
	char *summary = NULL;
	int rc;
	snprintf(col, sizeof(col), "c%d", c->k);
	floe_alter_op ops[3] = {
		{FLOE_ALTER_ADD_COLUMN, col, "struct<a: int>", NULL, "a doc"},
		{FLOE_ALTER_MAKE_OPTIONAL, "id", NULL, NULL, NULL},
		{FLOE_ALTER_WRITE_ORDER, NULL, c->k % 2 ? "id desc" : "id", NULL, NULL},
	};
	if ((rc = floe_table_load(&t, c->cat, "db", "al", &err)))
		goto done;
	if (!(rc = floe_table_alter(t, ops, 3, &summary, &err)))
		c->k++;
done:
	if (rc)
		g_last = err;
	floe_free(summary);
	floe_table_free(t);
	return rc;
}

static void test_alter(void)
{
	wenv e;
	env_open(&e, true);
	floe_table *t = make_table(&e, "al", "id long not null", NULL, NULL, 2);
	floe_table_free(t);
	commit_ctx c = {e.cat, -1, 0};
	scenario sc = {"table alter", run_alter, NULL, &c, 200};
	torture(&sc);
	env_close(&e);
}

static void test_pipelines(void)
{
	wenv e;
	env_open(&e, true);
	floe_table *t = make_table(&e, "pl", "id long", NULL, NULL, 2);
	floe_table_free(t);
	commit_ctx c = {e.cat, -1, 0};
	scenario sc = {"pipeline state list and forget", run_pipelines, NULL, &c, 0};
	torture(&sc);
	env_close(&e);
}

/* ---- refs and overwrites: a branch commit, publish, tag, a dynamic overwrite -------- */

static int run_refs(void *p)
{
	commit_ctx *c = p;
	floe_table *t = NULL;
	floe_snapshot_op *op = NULL;
	floe_error err = {0};
	floe_arena a;
	char br[32], tag[32];
	int rc;
	floe_arena_init(&a, 0);
	snprintf(br, sizeof(br), "b%d", c->k);
	snprintf(tag, sizeof(tag), "t%d", c->k);
	if ((rc = floe_table_load(&t, c->cat, "db", "rf", &err)))
		goto done;
	floe_data_file f;
	floe_data_file_init(&f);
	f.content = FLOE_CONTENT_DATA;
	f.file_path = floe_arena_sprintf(&a, "%s/data/r%d.parquet", floe_table_metadata(t)->location,
					 c->k++);
	if (!f.file_path) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	f.record_count = 1;
	f.file_size_in_bytes = 100;
	floe_ref_opts o = FLOE_REF_OPTS_INIT;
	o.name = br;
	if ((rc = floe_op_new(&op, t, FLOE_OP_APPEND, br, &err)) ||
	    (rc = floe_op_add_file(op, &f, &err)) || (rc = floe_op_commit(op, NULL, &err)))
		goto done;
	floe_op_free(op);
	op = NULL;
	o.action = FLOE_REF_FAST_FORWARD;
	o.name = "main";
	o.from = br;
	if ((rc = floe_table_manage_ref(t, &o, &err)))
		goto done;
	o = (floe_ref_opts)FLOE_REF_OPTS_INIT;
	o.action = FLOE_REF_CREATE_TAG;
	o.name = tag;
	o.max_ref_age_ms = 86400000;
	if ((rc = floe_table_manage_ref(t, &o, &err)))
		goto done;
	o = (floe_ref_opts)FLOE_REF_OPTS_INIT;
	o.action = FLOE_REF_DROP_BRANCH;
	o.name = br;
	if ((rc = floe_table_manage_ref(t, &o, &err)))
		goto done;
	/* a dynamic overwrite replaces what the unpartitioned table holds */
	f.file_path = floe_arena_sprintf(&a, "%s/data/o%d.parquet", floe_table_metadata(t)->location,
					 c->k++);
	if (!f.file_path) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	floe_overwrite_scope os = {true, NULL, NULL, NULL, floe_table_metadata(t)->current_snapshot_id,
				   -1, NULL};
	if ((rc = floe_op_new(&op, t, FLOE_OP_OVERWRITE, NULL, &err)) ||
	    (rc = floe_op_add_file(op, &f, &err)) || (rc = floe_op_set_overwrite(op, &os, &err)) ||
	    (rc = floe_op_commit(op, NULL, &err)))
		goto done;
done:
	if (rc)
		g_last = err;
	floe_op_free(op);
	floe_table_free(t);
	floe_arena_reset(&a);
	return rc;
}

static void test_refs(void)
{
	wenv e;
	env_open(&e, true);
	floe_table *t = make_table(&e, "rf", "id long", NULL, NULL, 2);
	floe_table_free(t);
	commit_ctx c = {e.cat, -1, 0};
	scenario sc = {"branch commit, fast-forward, tag, drop, dynamic overwrite", run_refs, NULL,
		       &c, 0};
	torture(&sc);
	env_close(&e);
}

/* ---- the task writer ------------------------------------------------------------ */

typedef struct task_ctx {
	floe_fileio *io;
	const floe_metadata *m;
	const floe_write_config *cfg;
	struct ArrowArray batch;
	struct ArrowSchema bschema;
	int k;
} task_ctx;

static int run_task(void *p)
{
	task_ctx *c = p;
	floe_task_writer *tw = NULL;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	floe_data_file *files = NULL;
	size_t n = 0;
	floe_arena a;
	floe_error err = {0};
	int rc;
	floe_arena_init(&a, 0);
	o.partition_id = c->k++;
	floe_fileio *io = floe_io_memory_new();
	if (!io) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	c->io = io;
	if ((rc = floe_task_writer_new(&tw, io, c->m, c->cfg, &o, &err)))
		goto done;
	for (int i = 0; i < 3 && !rc; i++)
		rc = floe_task_writer_write(tw, &c->batch, &c->bschema, &err);
	if (!rc)
		rc = floe_task_writer_complete(tw, &files, &n, &a, &err);
	if (rc) {
		floe_task_writer_abort(tw);
	} else {
		floe_task_writer_free(tw);
		/* handed out: the caller's; this test removes them */
		for (size_t i = 0; i < n; i++)
			floe_io_remove_quiet(c->io, files[i].file_path);
	}
	/* a writer that failed left no file: aborted ones are deleted */
	if (rc)
		T_EQ_INT(count_files(io, "mem://wh/db/tw/data"), 0);
done:
	if (rc)
		g_last = err;
	floe_io_free(io);
	c->io = NULL;
	floe_free(files);
	floe_arena_reset(&a);
	return rc;
}

static void test_task_writer(void)
{
	wenv e;
	floe_error err = {0};
	floe_write_config cfg;
	task_ctx c = {0};
	env_open(&e, false);
	const char *props[] = {"write.target-file-size-bytes", "2048", NULL};
	floe_table *t = make_table(&e, "tw", "id long not null, kind string, v double",
				   "kind, bucket(4, id)", props, 2);
	const floe_metadata *m = floe_table_metadata(t);
	char rows[64][128];
	const char *rp[64];
	for (int i = 0; i < 64; i++) {
		snprintf(rows[i], sizeof(rows[i]), "{\"id\": %d, \"kind\": \"k%d\", \"v\": %d.5}", i,
			 i % 3, i);
		rp[i] = rows[i];
	}
	T_OK(floe_write_config_from(&cfg, &e.a, m, &err), &err);
	c.m = m;
	c.cfg = &cfg;
	make_batch(floe_metadata_current_schema(m), rp, 64, &c.batch, &c.bschema);
	scenario sc = {"partitioned task writer", run_task, NULL, &c, 0};
	torture(&sc);
	c.batch.release(&c.batch);
	c.bschema.release(&c.bschema);
	floe_table_free(t);
	env_close(&e);
}

/* ---- the delete writers ---------------------------------------------------------- */

typedef struct del_ctx {
	const floe_metadata *m2, *m3; /* a v2 and a v3 table: kind, bucket(4, id) */
	const floe_write_config *cfg2, *cfg3;
	struct ArrowArray batch;
	struct ArrowSchema bschema;
} del_ctx;

static void del_partition(floe_value v[2], const char *kind, int32_t bucket)
{
	v[0] = (floe_value){.type = FLOE_T_STRING, .is_null = false};
	v[0].v.bin.p = (const uint8_t *)kind;
	v[0].v.bin.n = strlen(kind);
	v[1] = (floe_value){.type = FLOE_T_INT, .is_null = false, .v.i32 = bucket};
}

static int run_deletes(void *p)
{
	del_ctx *c = p;
	floe_eq_delete_writer *ew = NULL;
	floe_pos_delete_writer *pw = NULL;
	floe_dv_writer *dw = NULL;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_data_file *files = NULL, *rep = NULL;
	size_t n = 0, nr = 0;
	floe_arena a;
	floe_error err = {0};
	int64_t pos[200];
	int32_t ids[2] = {1, 2};
	floe_value pv[3][2];
	int rc;
	floe_arena_init(&a, 0);
	floe_fileio *io = floe_io_memory_new();
	if (!io) {
		rc = FLOE_ENOMEM;
		goto done;
	}
	for (int i = 0; i < 200; i++)
		pos[i] = (i * 37) % 200;
	del_partition(pv[0], "k0", 1);
	del_partition(pv[1], "k1", 2);
	del_partition(pv[2], "k0", 3);
	floe_partition parts[3] = {{pv[0], 2}, {pv[1], 2}, {pv[2], 2}};
	const char *paths[3] = {"mem://wh/db/td2/data/x.parquet", "mem://wh/db/td2/data/y.parquet",
				"mem://wh/db/td2/data/z.parquet"};
	o.equality_ids = ids;
	o.n_equality_ids = 2;
	o.target_file_size = 1024;
	o.max_buffered_bytes = 1024;
	/* equality deletes, rolling */
	if ((rc = floe_eq_delete_writer_new(&ew, io, c->m2, c->cfg2, &o, &err)))
		goto done;
	for (int i = 0; i < 3 && !rc; i++)
		rc = floe_eq_delete_writer_write(ew, &c->batch, &c->bschema, &err);
	if (rc || (rc = floe_eq_delete_writer_complete(ew, &files, &n, &a, &err)))
		goto done;
	/* position deletes, spilling */
	if ((rc = floe_pos_delete_writer_new(&pw, io, c->m2, c->cfg2, &o, &err)))
		goto done;
	for (int i = 0; i < 3 && !rc; i++)
		rc = floe_pos_delete_writer_delete(pw, paths[i], 0, &parts[i], pos, 200, &err);
	if (rc || (rc = floe_pos_delete_writer_complete(pw, &files, &n, &a, &err)))
		goto done;
	/* deletion vectors: one Puffin file, then a second merging the first's */
	if ((rc = floe_dv_writer_new(&dw, io, c->m3, c->cfg3, &o, &err)))
		goto done;
	for (int i = 0; i < 3 && !rc; i++)
		rc = floe_dv_writer_delete(dw, paths[i], 0, &parts[i], pos, 100 + 50 * (size_t)i,
					   &err);
	if (rc || (rc = floe_dv_writer_complete(dw, &files, &n, &rep, &nr, &a, &err)))
		goto done;
	size_t first_dvs = n;
	for (size_t i = 0; i < first_dvs && !rc; i++)
		if (files[i].file_format && strcmp(files[i].file_format, "PUFFIN") == 0)
			rc = floe_dv_writer_merge_previous(dw, &files[i], &err);
	if (!rc)
		rc = floe_dv_writer_delete(dw, paths[0], 0, &parts[0], pos + 100, 100, &err);
	if (!rc)
		rc = floe_dv_writer_complete(dw, &files, &n, &rep, &nr, &a, &err);
done:
	if (rc)
		g_last = err;
	/* every writer, failed or not, leaves only what it handed out */
	floe_eq_delete_writer_abort(ew);
	floe_pos_delete_writer_abort(pw);
	floe_dv_writer_abort(dw);
	for (size_t i = 0; i < n; i++)
		floe_io_remove_quiet(io, files[i].file_path);
	if (io) {
		T_EQ_INT(count_files(io, "mem://wh/db/td2/data"), 0);
		T_EQ_INT(count_files(io, "mem://wh/db/td3/data"), 0);
	}
	floe_io_free(io);
	floe_free(files);
	floe_free(rep);
	floe_arena_reset(&a);
	return rc;
}

static void test_delete_writers(void)
{
	wenv e;
	floe_error err = {0};
	floe_write_config cfg2, cfg3;
	del_ctx c = {0};
	env_open(&e, false);
	const char *cols = "id long not null, kind string not null, v double";
	floe_table *t2 = make_table(&e, "td2", cols, "kind, bucket(4, id)", NULL, 2);
	floe_table *t3 = make_table(&e, "td3", cols, "kind, bucket(4, id)", NULL, 3);
	char rows[64][128];
	const char *rp[64];
	for (int i = 0; i < 64; i++) {
		snprintf(rows[i], sizeof(rows[i]), "{\"id\": %d, \"kind\": \"k%d\", \"v\": %d.5}", i,
			 i % 3, i);
		rp[i] = rows[i];
	}
	c.m2 = floe_table_metadata(t2);
	c.m3 = floe_table_metadata(t3);
	T_OK(floe_write_config_from(&cfg2, &e.a, c.m2, &err), &err);
	T_OK(floe_write_config_from(&cfg3, &e.a, c.m3, &err), &err);
	c.cfg2 = &cfg2;
	c.cfg3 = &cfg3;
	make_batch(floe_metadata_current_schema(c.m2), rp, 64, &c.batch, &c.bschema);
	scenario sc = {"delete writers", run_deletes, NULL, &c, 0};
	torture(&sc);
	c.batch.release(&c.batch);
	c.bschema.release(&c.bschema);
	floe_table_free(t2);
	floe_table_free(t3);
	env_close(&e);
}

/* ---- a SQL session ---------------------------------------------------------------- */

typedef struct sql_ctx_t {
	char script[2048];
} sql_ctx_t;

static int discard(const char *data, size_t n, void *payload)
{
	(void)data;
	(void)n;
	(void)payload;
	return 0;
}

static int run_sql(void *p)
{
	sql_ctx_t *c = p;
	floe_sql *s = NULL;
	floe_error err = {0};
	floe_sql_opts opts = FLOE_SQL_OPTS_INIT;
	opts.out = discard;
	int rc = floe_sql_new(&s, &opts, &err);
	if (!rc)
		rc = floe_sql_exec(s, c->script, strlen(c->script), "torture.sql", &err);
	if (rc)
		g_last = err;
	floe_sql_free(s);
	return rc;
}

static void test_sql_session(void)
{
	sql_ctx_t c;
	const char *dir = t_tmpdir();
	snprintf(c.script, sizeof(c.script),
		 "CREATE CATALOG c WITH ('type' = 'iceberg', 'catalog-type' = 'jdbc', "
		 "'uri' = 'jdbc:sqlite:%s/cat.db', 'warehouse' = '%s/wh');\n"
		 "USE CATALOG c;\nCREATE DATABASE IF NOT EXISTS db;\nUSE db;\n"
		 "SET 'execution.checkpointing.interval' = '1s';\n"
		 "CREATE TABLE IF NOT EXISTS t (id BIGINT, ts TIMESTAMP_LTZ(6), tags ARRAY<STRING>, "
		 "PRIMARY KEY (id) NOT ENFORCED) PARTITIONED BY (day(ts), bucket(4, id)) "
		 "WITH ('write.parquet.compression-codec' = 'zstd');\n"
		 "ALTER TABLE t SET ('write.target-file-size-bytes' = '1000000');\n"
		 "DESCRIBE t;\nSHOW CREATE TABLE t;\nSHOW TABLES;\n"
		 "SELECT snapshot_id FROM t$snapshots LIMIT 1;\n"
		 "DROP TABLE t;\n",
		 dir, dir);
	scenario sc = {"SQL session", run_sql, NULL, &c, 0};
	torture(&sc);
}

/* the query executor: binding, aggregation, joins, sorting over a metadata table */
static void test_sql_queries(void)
{
	sql_ctx_t c;
	const char *dir = t_tmpdir();
	snprintf(c.script, sizeof(c.script),
		 "CREATE CATALOG c WITH ('type' = 'iceberg', 'catalog-type' = 'jdbc', "
		 "'uri' = 'jdbc:sqlite:%s/catq.db', 'warehouse' = '%s/whq');\n"
		 "USE CATALOG c;\nCREATE DATABASE IF NOT EXISTS db;\nUSE db;\n"
		 "CREATE TABLE IF NOT EXISTS t (id BIGINT, s STRING);\n"
		 "SELECT UPPER(CAST(COUNT(*) AS STRING)) AS n, MAX(file) IS NOT NULL, "
		 "COUNT(DISTINCT latest_schema_id) FROM t$metadata_log_entries "
		 "GROUP BY latest_schema_id HAVING COUNT(*) > 0 ORDER BY 1 DESC LIMIT 2 OFFSET 0;\n"
		 "SELECT a.id, b.s FROM t a LEFT JOIN t b ON a.id = b.id AND b.s <> 'x' ORDER BY a.id;\n"
		 "SELECT id * 2, CASE WHEN id > 1 THEN 'x' END, REGEXP_EXTRACT(s, 'b(c)', 1) FROM t "
		 "WHERE id + 1 > 0 AND s LIKE 'a%%';\n",
		 dir, dir);
	scenario sc = {"SQL queries", run_sql, NULL, &c, 0};
	torture(&sc);
}

/* plan only (floe plan job.sql): the script's DDL in memory, each job planned */
static int plan_job(const char *job, unsigned line, const char *yaml, size_t n, void *payload)
{
	floe_error *err = payload;
	floe_plan *p = NULL;
	(void)job;
	(void)line;
	int rc = floe_plan_run(&p, yaml, n, NULL, err);
	if (!rc)
		rc = floe_plan_write(p, true, discard, NULL, err);
	floe_plan_free(p);
	return rc;
}

static int run_sql_plan(void *p)
{
	sql_ctx_t *c = p;
	floe_error err = {0};
	int rc = floe_sql_pipelines(c->script, strlen(c->script), "torture.sql", plan_job, &err,
				    &err);
	if (rc)
		g_last = err;
	return rc;
}

static void test_sql_plan(void)
{
	sql_ctx_t c;
	snprintf(c.script, sizeof(c.script),
		 "CREATE CATALOG c WITH ('type' = 'iceberg', 'catalog-type' = 'hadoop', "
		 "'warehouse' = '%s/whp');\n"
		 "USE CATALOG c;\nCREATE DATABASE IF NOT EXISTS db;\nUSE db;\n"
		 "SET 'execution.checkpointing.interval' = '60s';\nSET 'parallelism.default' = '4';\n"
		 "CREATE TABLE IF NOT EXISTS t (id BIGINT, region STRING, PRIMARY KEY (id) NOT "
		 "ENFORCED) PARTITIONED BY (region) WITH ('write.upsert.enabled' = 'true');\n"
		 "CREATE TEMPORARY TABLE g (id BIGINT, region STRING) WITH ('connector' = 'datagen');\n"
		 "INSERT INTO t /*+ OPTIONS('distribution-mode'='hash') */ SELECT * FROM g WHERE id > 0;\n",
		 t_tmpdir());
	scenario sc = {"SQL plan", run_sql_plan, NULL, &c, 0};
	torture(&sc);
}

/* ---- orphan cleanup beside a writer -------------------------------------- */

typedef struct orphan_ctx {
	floe_catalog *cat;
	char leased[1200], stray[1200];
	int found_stray, found_leased;
} orphan_ctx;

static int orphan_seen(const char *path, uint64_t size, int64_t mtime_ms, void *payload)
{
	orphan_ctx *c = payload;
	const char *l = floe_io_local_path(path);
	(void)size;
	(void)mtime_ms;
	if (!strcmp(l ? l : path, c->stray))
		c->found_stray++;
	if (!strcmp(l ? l : path, c->leased))
		c->found_leased++;
	return 0;
}

static int run_orphans(void *p)
{
	orphan_ctx *c = p;
	floe_table *t = NULL;
	floe_error err = {0};
	floe_orphan_opts o = FLOE_ORPHAN_OPTS_INIT;
	floe_orphan_result r;
	int rc;
	c->found_stray = c->found_leased = 0;
	o.older_than_ms = floe_now_ms() + 1000;
	o.dry_run = true;
	if ((rc = floe_table_load(&t, c->cat, "db", "o", &err)) == 0)
		rc = floe_delete_orphan_files(t, &o, orphan_seen, c, &r, &err);
	if (rc)
		g_last = err;
	floe_table_free(t);
	return rc;
}

/* Whatever fails, a file newer than a live lease is never an orphan; the
 * old stray is one whenever the run gets through. */
static void check_orphans(void *p, int rc)
{
	orphan_ctx *c = p;
	T_EQ_INT(c->found_leased, 0);
	if (rc == FLOE_OK)
		T_EQ_INT(c->found_stray, 1);
}

static void test_orphans(void)
{
	wenv e;
	floe_error err = {0};
	env_open(&e, true);
	floe_table *t = make_table(&e, "o", "id long", NULL, NULL, 2);
	floe_table *w = NULL;
	T_OK(floe_table_load(&w, e.cat, "db", "o", &err), &err);
	orphan_ctx c = {e.cat, "", "", 0, 0};
	const char *loc = floe_io_local_path(floe_table_metadata(t)->location);
	snprintf(c.stray, sizeof(c.stray), "%s/data/stray.parquet", loc);
	snprintf(c.leased, sizeof(c.leased), "%s/data/in-flight.parquet", loc);
	char dir[1200];
	snprintf(dir, sizeof(dir), "%s/data", loc);
	mkdir(dir, 0755);
	FILE *fp = fopen(c.stray, "w");
	T_CHECK(fp != NULL);
	if (fp)
		fclose(fp);
	struct utimbuf u;
	u.actime = u.modtime = time(NULL) - 2 * 86400;
	T_CHECK(utime(c.stray, &u) == 0);
	/* a writer's lease, then the file it will commit */
	T_OK(floe_table__lease_keep_alive(w, "torture writer", 600000, &err), &err);
	fp = fopen(c.leased, "w");
	T_CHECK(fp != NULL);
	if (fp)
		fclose(fp);
	floe_table_free(t);
	scenario sc = {"orphan cleanup beside a writer", run_orphans, check_orphans, &c, 0};
	torture(&sc);
	floe_table__lease_drop(w, false);
	floe_table_free(w);
	env_close(&e);
}

/* ---- row-level operations (floe update, merge-on-read, v3) ------------------------------ */

typedef struct dml_ctx {
	floe_catalog *cat;
	int64_t snapshots; /* before the run */
} dml_ctx;

static int dml_collect(const char *data, size_t n, void *payload)
{
	return floe_buf_append(payload, data, n);
}

/* An update of one row: a DV merged with the file's previous one, a new data
 * file, a row delta with the conflict checks. Repeatable: the row stays. */
static int run_dml(void *p)
{
	dml_ctx *c = p;
	floe_table *t = NULL;
	floe_error err = {0};
	floe_dml_result r;
	floe_dml_opts o = FLOE_DML_OPTS_INIT;
	floe_dml_set set[] = {{"v", "v + 1"}};
	int rc;
	memset(&r, 0, sizeof(r));
	c->snapshots = -1;
	if ((rc = floe_table_load(&t, c->cat, "db", "u", &err)))
		goto done;
	c->snapshots = (int64_t)floe_table_metadata(t)->n_snapshots;
	o.mode = FLOE_DML_MERGE_ON_READ;
	rc = floe_dml_update(t, set, 1, "id = 2", &o, &r, &err);
	floe_dml_result_reset(&r);
done:
	if (rc)
		g_last = err;
	floe_table_free(t);
	return rc;
}

/* Old or new version, and the table reads as three rows. */
static void check_dml(void *p, int rc)
{
	dml_ctx *c = p;
	floe_table *t = NULL;
	floe_scan *s = NULL;
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	floe_error err = {0};
	int64_t n = -1;
	(void)rc;
	T_OK(floe_table_load(&t, c->cat, "db", "u", &err), &err);
	if (!t)
		return;
	int64_t now = (int64_t)floe_table_metadata(t)->n_snapshots;
	if (c->snapshots >= 0)
		T_CHECK(now == c->snapshots || now == c->snapshots + 1);
	T_OK(floe_scan_open(&s, t, &so, &err), &err);
	if (s)
		T_OK(floe_scan_count(s, &n, &err), &err);
	T_EQ_INT(n, 3);
	floe_scan_free(s);
	floe_table_free(t);
}

static void test_dml(void)
{
	wenv e;
	floe_error err = {0};
	floe_dml_result r;
	char path[1100];
	env_open(&e, true); /* the merge source is a local file */
	floe_table *t = make_table(&e, "u", "id long not null, v long", NULL, NULL, 3);
	snprintf(path, sizeof(path), "%s/seed.jsonl", e.wh + strlen("file://"));
	const char *seed = "{\"id\":1,\"v\":1}\n{\"id\":2,\"v\":2}\n{\"id\":3,\"v\":3}\n";
	T_OK(floe_io_write_all(floe_table_io(t), path, seed, strlen(seed), false, &err), &err);
	const char *on[] = {"id"};
	T_OK(floe_dml_merge(t, path, NULL, on, 1, NULL, &r, &err), &err);
	floe_dml_result_reset(&r);
	floe_table_free(t);
	dml_ctx c = {e.cat, -1};
	/* every commit fsyncs: an even stride of 200 failure points */
	scenario sc = {"row-level update (merge-on-read, v3)", run_dml, check_dml, &c, 200};
	torture(&sc);
	floe_buf out;
	floe_buf_init(&out, 0);
	T_OK(floe_table_load(&t, e.cat, "db", "u", &err), &err);
	floe_scan *s = NULL;
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	T_OK(floe_scan_open(&s, t, &so, &err), &err);
	T_OK(floe_scan_write(s, FLOE_OUTPUT_CSV, dml_collect, &out, &err), &err);
	T_CHECK(strstr(floe_buf_cstr(&out), "1,1") && strstr(floe_buf_cstr(&out), "3,3"));
	floe_buf_reset(&out);
	floe_scan_free(s);
	floe_table_free(t);
	env_close(&e);
}

/* ---- Kinesis: GetRecords answers and shard positions ------------------------------------ */

#define KIN_RECORDS 24

typedef struct kin_ctx {
	floe_buf reply; /* a GetRecords answer */
} kin_ctx;

static void b64(floe_buf *out, const char *s, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)(uint8_t)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)(uint8_t)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (uint8_t)s[i + 2];
		char q[4] = {tab[v >> 18], tab[(v >> 12) & 63], i + 1 < n ? tab[(v >> 6) & 63] : '=',
			     i + 2 < n ? tab[v & 63] : '='};
		T_CHECK(floe_buf_append(out, q, 4) == 0);
	}
}

static int append_str(floe_buf *b, const char *s)
{
	return floe_buf_append(b, s, strlen(s));
}

static int run_kinesis(void *p)
{
	kin_ctx *c = p;
	floe_error *err = &g_last;
	memset(&g_last, 0, sizeof(g_last));
	stream_kinesis_reply r;
	stream_offsets pos, back, other;
	floe_buf json;
	char split[64], seq[32];
	stream_kinesis_reply_init(&r);
	stream_offsets_init(&pos);
	stream_offsets_init(&back);
	stream_offsets_init(&other);
	floe_buf_init(&json, 0);
	/* records of three shards, round robin; the last shard is closed */
	int rc = stream_kinesis_parse_records(&r, (const char *)c->reply.data, c->reply.len, 64, err);
	for (size_t i = 0; !rc && i < r.n; i++) {
		snprintf(split, sizeof(split), "kinesis:s:shardId-%012zu", i % 3);
		snprintf(seq, sizeof(seq), "%.*s", (int)r.msgs[i].seq_len,
			 (const char *)r.data.data + r.msgs[i].seq_off);
		rc = stream_offsets_set_tok(&pos, split, (int64_t)(i / 3 + 1), seq);
	}
	rc = rc ? rc : stream_offsets_set_tok(&pos, "kinesis:s:shardId-000000000002", KIN_RECORDS / 3,
					      "SHARD_END");
	rc = rc ? rc : stream_offsets_write_json(&pos, &json);
	rc = rc ? rc : stream_offsets_parse_json(&back, (const char *)json.data, json.len, err);
	/* another table is behind on shard 0 and has not seen shard 1 */
	rc = rc ? rc : stream_offsets_set_tok(&other, "kinesis:s:shardId-000000000000", 2, "1003");
	rc = rc ? rc : stream_offsets_set_tok(&other, "kinesis:s:shardId-000000000002", 99, "9");
	rc = rc ? rc : stream_offsets_min(&back, &other);
	if (!rc) {
		T_EQ_INT((int64_t)r.n, KIN_RECORDS);
		T_EQ_STR(r.next_iter, "AAAAitNext");
		T_EQ_INT(stream_offsets_get(&back, "kinesis:s:shardId-000000000000", -1), 2);
		T_EQ_STR(stream_offsets_tok(&back, "kinesis:s:shardId-000000000000"), "1003");
		T_EQ_STR(stream_offsets_tok(&back, "kinesis:s:shardId-000000000002"), "SHARD_END");
		T_CHECK(r.msgs[KIN_RECORDS - 1].flags & STREAM_MSG_OVERSIZE);
	}
	floe_buf_reset(&json);
	stream_offsets_reset(&pos);
	stream_offsets_reset(&back);
	stream_offsets_reset(&other);
	stream_kinesis_reply_reset(&r);
	return rc;
}

static void test_kinesis(void)
{
	kin_ctx c;
	floe_buf_init(&c.reply, 0);
	T_CHECK(append_str(&c.reply, "{\"Records\":[") == 0);
	for (int i = 0; i < KIN_RECORDS; i++) {
		char val[200], head[160];
		int n = i == KIN_RECORDS - 1 ? snprintf(val, sizeof(val), "{\"id\":%d,\"pad\":\"%0120d\"}", i, 0)
					     : snprintf(val, sizeof(val), "{\"id\":%d,\"k\":\"v%d\"}", i, i);
		snprintf(head, sizeof(head), "%s{\"PartitionKey\":\"pk%d\",\"SequenceNumber\":\"%d\","
			 "\"ApproximateArrivalTimestamp\":1700000000.%03d,\"Data\":\"",
			 i ? "," : "", i % 7, 1000 + i, i);
		T_CHECK(append_str(&c.reply, head) == 0);
		b64(&c.reply, val, (size_t)n);
		T_CHECK(append_str(&c.reply, "\"}") == 0);
	}
	T_CHECK(append_str(&c.reply, "],\"NextShardIterator\":\"AAAAitNext\","
					      "\"MillisBehindLatest\":250}") == 0);
	scenario sc = {"Kinesis records and shard positions", run_kinesis, NULL, &c, 0};
	torture(&sc);
	floe_buf_reset(&c.reply);
}

/* ---- Kafka: message values through the value formats, and the metadata columns ---------- */

/*
 * What the writer tasks do with a Kafka block (stream_decode_msgs.c), without
 * a broker: each record's value through the format's decoder (json, csv,
 * raw), a record that does not fit set aside (a dead letter), then every
 * metadata column of the row (topic, partition, offset, timestamp, its type,
 * key, headers as a map, as a binary map and as JSON text) filled from the
 * record. A run that succeeds must have decoded exactly what a run without
 * faults did: an out-of-memory reported as a bad record would lose it.
 */
#define KAFKA_MSGS 12

typedef struct kafka_fmt {
	const char *format;
	floe_schema *schema;
	bool meta_cols[16];
	uint8_t meta_kind[16];
	stream_config *cfg; /* its source: the format's options */
	int64_t want_rows, want_bad;
} kafka_fmt;

typedef struct kafka_ctx {
	floe_arena arena;
	floe_buf data;
	stream_msg msgs[KAFKA_MSGS];
	stream_block b;
	kafka_fmt fmts[3];
} kafka_ctx;

static int kafka_one(kafka_fmt *f, const stream_block *b, int64_t *rows, int64_t *bad)
{
	const stream_value_format *vf = stream_value_format_find(f->format);
	const floe_type *root_t = f->schema->root;
	stream_value_ctx vctx = {&f->cfg->sources[0], root_t, f->meta_cols, {STREAM_EPOCH_MS}};
	stream_col root;
	stream_json_dec json;
	floe_buf scratch;
	void *st = NULL;
	memset(&root, 0, sizeof(root));
	stream_json_dec_init(&json, &vctx.coerce);
	floe_buf_init(&scratch, 0);
	int rc = vf->open(&st, &vctx, &g_last);
	rc = rc ? rc : stream_col_init(&root, root_t, NULL, 0, false, &g_last);
	for (size_t i = 0; !rc && i < b->n_msgs; i++) {
		const stream_msg *m = &b->msgs[i];
		bool tomb = (m->flags & STREAM_MSG_NULL_VALUE) != 0;
		if (tomb && vf->format != STREAM_FMT_RAW)
			continue; /* no row in a format without deletes */
		stream_msg_view v = {stream_msg_val(b, m),
				     m->val_len,
				     tomb,
				     stream_msg_key(b, m),
				     m->key_len,
				     (m->flags & STREAM_MSG_NULL_KEY) != 0,
				     b->topic,
				     b->partition,
				     m->offset,
				     m->timestamp_ms};
		stream_reason why;
		int64_t n0 = root.len;
		rc = vf->decode(st, &root, &v, &why);
		for (size_t k = 0; !rc && k < root.n_kids; k++) {
			if (!f->meta_kind[k])
				continue;
			stream_col_truncate(&root.kids[k], root.kids[k].len - 1);
			rc = stream_meta_put(&root.kids[k], f->meta_kind[k], b, m, &scratch, &json,
					     &why);
		}
		if (rc == FLOE_EINVAL) {
			if (root.len > n0)
				stream_col_truncate(&root, n0);
			(*bad)++;
			rc = FLOE_OK;
		}
	}
	*rows = root.len;
	if (st)
		vf->close(st);
	stream_col_reset(&root);
	stream_json_dec_reset(&json);
	floe_buf_reset(&scratch);
	return rc;
}

static int run_kafka(void *p)
{
	kafka_ctx *c = p;
	memset(&g_last, 0, sizeof(g_last));
	for (int i = 0; i < 3; i++) {
		kafka_fmt *f = &c->fmts[i];
		int64_t rows = 0, bad = 0;
		int rc = kafka_one(f, &c->b, &rows, &bad);
		if (rc)
			return rc;
		if (f->want_rows >= 0 && (rows != f->want_rows || bad != f->want_bad))
			return floe_error_set(&g_last, FLOE_ECORRUPT,
					      "format %s: %lld rows and %lld bad records, not %lld "
					      "and %lld",
					      f->format, (long long)rows, (long long)bad,
					      (long long)f->want_rows, (long long)f->want_bad);
	}
	return FLOE_OK;
}

static void kafka_put(kafka_ctx *c, uint32_t *off, uint32_t *len, const void *p, size_t n)
{
	*off = (uint32_t)c->data.len;
	*len = (uint32_t)n;
	T_CHECK(floe_buf_append(&c->data, p, n) == 0);
}

static void kafka_header(floe_buf *h, const char *name, const void *val, int32_t vl)
{
	uint32_t nl = (uint32_t)strlen(name);
	T_CHECK(floe_buf_append(h, &nl, 4) == 0 && floe_buf_append(h, name, nl) == 0);
	T_CHECK(floe_buf_append(h, &vl, 4) == 0);
	if (vl > 0)
		T_CHECK(floe_buf_append(h, val, (size_t)vl) == 0);
}

static void test_kafka_decode(void)
{
	static const char *const META[][2] = {
	    {"metadata.topic", "t"},	       {"metadata.partition", "p"},
	    {"metadata.offset", "o"},	       {"metadata.timestamp", "ts"},
	    {"metadata.timestamp-type", "tt"}, {"metadata.key", "k"},
	    {"metadata.headers", "h"},
	};
	static const struct {
		const char *format, *schema;
	} F[3] = {
	    {"json", "id long not null, name string, amount decimal(10, 2), tags list<string>, "
		     "t string, p int, o long, ts timestamptz, tt string, k string, "
		     "h map<string, string>"},
	    {"csv",
	     "id long not null, name string, amount decimal(10, 2), t string, p int, o long, "
	     "ts timestamptz, tt string, k string, h string"},
	    {"raw", "v binary, t string, p string, o string, ts long, tt string, k binary, "
		    "h map<string, binary>"},
	};
	kafka_ctx c;
	floe_error err = {0};
	memset(&c, 0, sizeof(c));
	floe_arena_init(&c.arena, 4096);
	floe_buf_init(&c.data, 0);
	for (int i = 0; i < KAFKA_MSGS; i++) {
		stream_msg *m = &c.msgs[i];
		char val[128], key[32];
		floe_buf h;
		floe_buf_init(&h, 0);
		int n;
		if (i == 3)
			n = snprintf(val, sizeof(val),
				     "{not json, 3,not a number"); /* bad everywhere but raw */
		else if (i % 2)
			n = snprintf(val, sizeof(val), "%d,name %d,%d.25", i, i, i * 10);
		else
			n = snprintf(val, sizeof(val),
				     "{\"id\": %d, \"name\": \"n%d\", \"amount\": %d.5, \"tags\": "
				     "[\"a\", \"b%d\"]}",
				     i, i, i, i);
		/* some values and keys where a zero-copy source leaves them (in the
		 * client library's buffers), the rest in the block's data */
		static char held[KAFKA_MSGS][2][128];
		if (i % 4 == 2) {
			memcpy(held[i][0], val, (size_t)n);
			m->val_p = (const uint8_t *)held[i][0];
			m->val_len = (uint32_t)n;
		} else {
			kafka_put(&c, &m->val_off, &m->val_len, val, (size_t)n);
		}
		n = snprintf(key, sizeof(key), "key-%d", i);
		if (i % 3 == 1) {
			memcpy(held[i][1], key, (size_t)n);
			m->key_p = (const uint8_t *)held[i][1];
			m->key_len = (uint32_t)n;
		} else {
			kafka_put(&c, &m->key_off, &m->key_len, key, (size_t)n);
		}
		kafka_header(&h, "trace", "abc", 3);
		kafka_header(&h, "bin", "\xff\x00", 2); /* not UTF-8: base64 in a string map */
		kafka_header(&h, "trace", "later wins", 10);
		kafka_header(&h, "none", NULL, -1);
		kafka_put(&c, &m->hdr_off, &m->hdr_len, h.data, h.len);
		m->n_hdrs = 4;
		floe_buf_reset(&h);
		m->offset = 1000 + i;
		m->timestamp_ms = i == 5 ? -1 : 1767323045000 + i;
		m->ts_type = (uint8_t)(i % 3);
		m->size = m->val_len;
		if (i == 7)
			m->flags |= STREAM_MSG_NULL_KEY;
		if (i == 9)
			m->flags |= STREAM_MSG_NULL_VALUE; /* a tombstone */
	}
	c.b.data = c.data.data;
	c.b.len = c.data.len;
	c.b.msgs = c.msgs;
	c.b.n_msgs = KAFKA_MSGS;
	c.b.topic = "orders";
	c.b.partition = 3;
	c.b.split_name = "kafka:orders:3";
	for (int i = 0; i < 3; i++) {
		kafka_fmt *f = &c.fmts[i];
		char yaml[1024];
		size_t o =
		    (size_t)snprintf(yaml, sizeof(yaml),
				     "pipeline.name: k\nsources:\n  - name: k\n    type: kafka\n"
				     "    topic: orders\n    properties.bootstrap.servers: h:1\n"
				     "    format: %s\n",
				     F[i].format);
		for (size_t k = 0; k < sizeof(META) / sizeof(META[0]); k++)
			o += (size_t)snprintf(yaml + o, sizeof(yaml) - o, "    %s: %s\n",
					      META[k][0], META[k][1]);
		snprintf(yaml + o, sizeof(yaml) - o, "tables: [{name: d.t}]\n");
		f->format = F[i].format;
		T_OK(stream_config_parse_yaml(&f->cfg, yaml, strlen(yaml), NULL, &err), &err);
		T_OK(floe_schema_parse_compact(&f->schema, &c.arena, F[i].schema, &err), &err);
		if (!f->schema || !f->cfg)
			return;
		for (size_t k = 0; k < f->schema->root->n_fields && k < 16; k++)
			for (size_t j = 0; j < sizeof(META) / sizeof(META[0]); j++)
				if (!strcmp(f->schema->root->fields[k].name, META[j][1])) {
					f->meta_cols[k] = true;
					f->meta_kind[k] = (uint8_t)stream_meta_kind(
					    META[j][0] + strlen("metadata."));
				}
		f->want_rows = -1;
	}
	/* the rows and bad records of a run without faults, which every
	 * successful run must match */
	for (int i = 0; i < 3; i++) {
		int64_t rows = 0, bad = 0;
		T_OK(kafka_one(&c.fmts[i], &c.b, &rows, &bad), &g_last);
		c.fmts[i].want_rows = rows;
		c.fmts[i].want_bad = bad;
	}
	/* json: the even records; csv: the odd ones but record 3 (bad for
	 * both) and 9 (a tombstone: no row); raw: every record, the tombstone
	 * as a null value */
	T_EQ_INT(c.fmts[0].want_rows, 6);
	T_EQ_INT(c.fmts[0].want_bad, 5);
	T_EQ_INT(c.fmts[1].want_rows, 4);
	T_EQ_INT(c.fmts[1].want_bad, 7);
	T_EQ_INT(c.fmts[2].want_rows, KAFKA_MSGS);
	T_EQ_INT(c.fmts[2].want_bad, 0);
	scenario sc = {"Kafka values and metadata columns", run_kafka, NULL, &c, 0};
	torture(&sc);
	for (int i = 0; i < 3; i++)
		stream_config_free(c.fmts[i].cfg);
	floe_buf_reset(&c.data);
	floe_arena_reset(&c.arena);
}

/* ---- Kafka: avro-confluent values (the registry's answer given, no server) ------------- */

/*
 * The avro-confluent decoder (stream_decode_avro.h) on recorded values: the
 * registry's answer for schema 7 parsed (as after a fetch), then good values
 * (nested, union, decimal, map, bytes not UTF-8) and bad ones (no magic
 * byte, truncated, bytes after the record, an id whose answer floe cannot
 * use). A run that succeeds must have decoded exactly what a run without
 * faults did: an out-of-memory taken for a bad record would lose it.
 */
#define AVRO_TORTURE_ANSWER                                                                    \
	"{\"schema\": \"{\\\"type\\\": \\\"record\\\", \\\"name\\\": \\\"T\\\", \\\"fields\\\": ["   \
	"{\\\"name\\\": \\\"id\\\", \\\"type\\\": \\\"long\\\"},"                                   \
	"{\\\"name\\\": \\\"raw\\\", \\\"type\\\": \\\"bytes\\\"},"                                 \
	"{\\\"name\\\": \\\"amount\\\", \\\"type\\\": {\\\"type\\\": \\\"bytes\\\", "               \
	"\\\"logicalType\\\": \\\"decimal\\\", \\\"precision\\\": 10, \\\"scale\\\": 2}},"         \
	"{\\\"name\\\": \\\"pt\\\", \\\"type\\\": [\\\"null\\\", {\\\"type\\\": \\\"record\\\", "   \
	"\\\"name\\\": \\\"P\\\", \\\"fields\\\": [{\\\"name\\\": \\\"tags\\\", \\\"type\\\": "     \
	"{\\\"type\\\": \\\"array\\\", \\\"items\\\": \\\"string\\\"}}]}]},"                        \
	"{\\\"name\\\": \\\"attrs\\\", \\\"type\\\": {\\\"type\\\": \\\"map\\\", \\\"values\\\": "  \
	"\\\"long\\\"}}]}\"}"
#define AVRO_MSGS 10

typedef struct avro_ctx {
	floe_arena arena;
	floe_schema *schema;
	floe_buf v[AVRO_MSGS];
	int64_t want_rows, want_bad;
} avro_ctx;

static int run_avro(void *p)
{
	avro_ctx *c = p;
	stream_avro_dec *d = NULL;
	stream_col root;
	stream_reason why;
	stream_coerce_opts co = {STREAM_EPOCH_MS};
	int64_t bad = 0;
	memset(&g_last, 0, sizeof(g_last));
	memset(&root, 0, sizeof(root));
	int rc = stream_avro_dec_new(&d, NULL, c->schema->root, &co, &g_last);
	rc = rc ? rc : stream_col_init(&root, c->schema->root, NULL, 0, false, &g_last);
	if (!rc) {
		const char *ans = AVRO_TORTURE_ANSWER;
		rc = stream_avro_dec_put(d, 7, ans, strlen(ans), &why);
	}
	if (!rc) {
		const char *ans = "{\"schema\": \"{\\\"type\\\": \\\"nope\\\"}\"}";
		rc = stream_avro_dec_put(d, 8, ans, strlen(ans), &why);
		rc = rc == FLOE_EINVAL ? FLOE_OK : rc ? rc : FLOE_ECORRUPT;
	}
	for (int i = 0; !rc && i < AVRO_MSGS; i++) {
		rc = stream_avro_decode(d, &root, c->v[i].data, c->v[i].len, &why);
		if (rc == FLOE_EINVAL) {
			bad++;
			rc = FLOE_OK;
		}
	}
	int64_t rows = root.len;
	stream_avro_dec_free(d);
	stream_col_reset(&root);
	if (rc)
		return rc;
	if (c->want_rows >= 0 && (rows != c->want_rows || bad != c->want_bad))
		return floe_error_set(&g_last, FLOE_ECORRUPT,
				      "avro-confluent: %lld rows and %lld bad records, not %lld and %lld",
				      (long long)rows, (long long)bad, (long long)c->want_rows,
				      (long long)c->want_bad);
	return FLOE_OK;
}

static void test_kafka_avro(void)
{
	avro_ctx c;
	floe_error err = {0};
	memset(&c, 0, sizeof(c));
	floe_arena_init(&c.arena, 4096);
	T_OK(floe_schema_parse_compact(&c.schema, &c.arena,
				       "id long not null, raw binary, amount decimal(10, 2), "
				       "pt struct<tags: list<string>>, attrs map<string, long>",
				       &err),
	     &err);
	for (int i = 0; i < AVRO_MSGS; i++) {
		floe_buf *b = &c.v[i];
		uint8_t head[5] = {0, 0, 0, 0, (uint8_t)(i == 8 ? 8 : 7)};
		uint8_t raw[3] = {0xff, 0x00, (uint8_t)i}, amount[2] = {0xfe, (uint8_t)i};
		floe_buf_init(b, 0);
		T_CHECK(floe_buf_append(b, head, 5) == 0);
		T_CHECK(floe_avro_enc_long(b, i) == 0);
		T_CHECK(floe_avro_enc_bytes(b, raw, 3) == 0);
		T_CHECK(floe_avro_enc_bytes(b, amount, 2) == 0);
		if (i % 3 == 0) {
			T_CHECK(floe_avro_enc_union(b, 0) == 0);
		} else {
			T_CHECK(floe_avro_enc_union(b, 1) == 0);
			T_CHECK(floe_avro_enc_block_count(b, 2) == 0);
			T_CHECK(floe_avro_enc_string(b, "tag", 3) == 0);
			T_CHECK(floe_avro_enc_string(b, "other tag", 9) == 0);
			T_CHECK(floe_avro_enc_block_count(b, 0) == 0);
		}
		T_CHECK(floe_avro_enc_block_count(b, 2) == 0);
		T_CHECK(floe_avro_enc_string(b, "a", 1) == 0);
		T_CHECK(floe_avro_enc_long(b, i * 1000) == 0);
		T_CHECK(floe_avro_enc_string(b, "b", 1) == 0);
		T_CHECK(floe_avro_enc_long(b, -i) == 0);
		T_CHECK(floe_avro_enc_block_count(b, 0) == 0);
		if (i == 3)
			b->data[0] = 1; /* not the magic byte */
		if (i == 5)
			b->len -= 4; /* truncated */
		if (i == 6)
			T_CHECK(floe_buf_append(b, "\x00", 1) == 0); /* a byte after the record */
	}
	c.want_rows = -1;
	T_OK(run_avro(&c), &g_last);
	c.want_rows = 6;
	c.want_bad = 4; /* 3, 5, 6, 8 (schema 8 is no Avro schema) */
	T_OK(run_avro(&c), &g_last);
	scenario sc = {"Kafka avro-confluent values", run_avro, NULL, &c, 0};
	torture(&sc);
	for (int i = 0; i < AVRO_MSGS; i++)
		floe_buf_reset(&c.v[i]);
	floe_arena_reset(&c.arena);
}

int main(void)
{
	T_RUN(test_metadata);
	T_RUN(test_parquet);
	T_RUN(test_commit);
	T_RUN(test_multi_commit);
	T_RUN(test_pipelines);
	T_RUN(test_refs);
	T_RUN(test_alter);
	T_RUN(test_orphans);
	T_RUN(test_task_writer);
	T_RUN(test_delete_writers);
	T_RUN(test_sql_session);
	T_RUN(test_sql_queries);
	T_RUN(test_sql_plan);
	T_RUN(test_dml);
	T_RUN(test_kinesis);
	T_RUN(test_kafka_decode);
	T_RUN(test_kafka_avro);
	return t_finish();
}
