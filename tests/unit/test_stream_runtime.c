/*
 * test_stream_runtime.c — the streaming runtime end to end on a SQLite
 * catalog with a fake file sink (the rows are counted, the "files" are
 * manifest entries only): checkpoints commit one snapshot per table with
 * the pipeline's summary keys, empty checkpoints commit nothing, a failed
 * run resumes exactly where its last commit stopped, one source feeds two
 * tables through filters with their own offsets, dead letters, the
 * generator, HASH distribution sends each key to one task, and the
 * configuration's errors. Also the test the TSan preset runs
 * (ctest --preset tsan).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "stream/stream_runtime.h"
#include "table/table_impl.h"
#include "util/rand.h"

/* ---- a fake sink -------------------------------------------------------------------------- */

typedef struct fake_writer {
	int64_t rows;     /* since the last complete */
	int64_t first_key;
	bool partitioned;
	int64_t batches;
	int task;
	uint64_t keys[64]; /* first column values seen (HASH check) */
	size_t n_keys;
} fake_writer;

static atomic_llong g_rows_written;
static atomic_int g_fail_after = -1; /* fail the n-th write (0 = off) */
static atomic_int g_writes;
/* HASH check: key -> task that wrote it in the current checkpoint */
static atomic_int g_key_task[1024];

static int fake_open(void **out, floe_fileio *io, const floe_metadata *m, const floe_write_config *cfg,
		     const floe_task_writer_opts *o, floe_error *err)
{
	fake_writer *w = calloc(1, sizeof(*w));
	(void)io;
	(void)cfg;
	(void)err;
	w->task = o->partition_id;
	w->partitioned = floe_metadata_default_spec(m)->n_fields > 0;
	*out = w;
	return 0;
}

static int fake_write(void *p, const struct ArrowArray *batch, const struct ArrowSchema *schema,
		      floe_error *err)
{
	fake_writer *w = p;
	int n = atomic_fetch_add(&g_writes, 1) + 1;
	int fa = atomic_load(&g_fail_after);
	(void)schema;
	if (fa > 0 && n >= fa)
		return floe_error_set(err, FLOE_EIO, "injected write failure");
	/* first column: a long key; record which task wrote it */
	const struct ArrowArray *c0 = batch->children[0];
	const int64_t *v = c0->buffers[1];
	/* a struct's offset applies to its children (slices of a shared batch) */
	int64_t base = batch->offset + c0->offset;
	if (w->rows == 0 && batch->length)
		w->first_key = v[base];
	for (int64_t i = 0; i < batch->length; i++) {
		int64_t k = v[base + i];
		if (k >= 0 && k < 1024) {
			int expected = -1;
			if (!atomic_compare_exchange_strong(&g_key_task[k], &expected, w->task) &&
			    expected != w->task)
				atomic_store(&g_key_task[k], -2); /* two tasks: HASH broken */
		}
	}
	w->rows += batch->length;
	w->batches++;
	atomic_fetch_add(&g_rows_written, batch->length);
	return 0;
}

static int fake_complete(void *p, floe_data_file **files, size_t *n, floe_arena *a,
			 floe_error *err)
{
	fake_writer *w = p;
	char uuid[37];
	(void)err;
	if (w->rows == 0)
		return 0;
	floe_data_file *f = floe_realloc(*files, (*n + 1) * sizeof(**files));
	if (!f)
		return FLOE_ENOMEM;
	*files = f;
	floe_data_file *d = &f[*n];
	floe_data_file_init(d);
	floe_uuid_v4_str(uuid);
	d->content = FLOE_CONTENT_DATA;
	d->file_path = floe_arena_sprintf(a, "file:///nonexistent/%s.parquet", uuid);
	d->file_format = "PARQUET";
	d->spec_id = 0;
	if (w->partitioned) {
		d->partition.values = floe_arena_calloc(a, 1, sizeof(floe_value));
		d->partition.n = 1;
		d->partition.values[0].type = FLOE_T_LONG;
		d->partition.values[0].v.i64 = w->first_key;
	}
	d->record_count = w->rows;
	d->file_size_in_bytes = 100 + w->rows;
	(*n)++;
	w->rows = 0;
	return 0;
}

static void fake_free(void *p)
{
	free(p);
}

static const stream_sink_ops fake_sink = {fake_open, fake_write, fake_complete, fake_free,
					  fake_free};

/* ---- helpers ------------------------------------------------------------------------------ */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	fputs(text, f);
	fclose(f);
}

static floe_catalog *catalog(const char *dir)
{
	floe_catalog *cat = NULL;
	floe_error err = {0};
	T_OK(floe_catalog_open_default(&cat, dir, &err), &err);
	return cat;
}

static int run_yaml_sink(floe_catalog *cat, const char *yaml, const char *base,
			 const stream_sink_ops *sink, floe_error *err);

static int run_yaml(floe_catalog *cat, const char *yaml, const char *base, floe_error *err)
{
	return run_yaml_sink(cat, yaml, base, &fake_sink, err);
}

/* A GET of /metrics while the pipeline runs (from another thread). */
typedef struct scraper {
	int port;
	atomic_bool stop;
	int scrapes;
	char last[8192];
} scraper;

static void *scrape_main(void *arg)
{
	scraper *sc = arg;
	while (!atomic_load(&sc->stop)) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {0};
		a.sin_family = AF_INET;
		a.sin_port = htons((uint16_t)sc->port);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
			size_t got = 0;
			ssize_t r;
			if (write(fd, req, sizeof(req) - 1) > 0) {
				while (got < sizeof(sc->last) - 1 &&
				       (r = read(fd, sc->last + got, sizeof(sc->last) - 1 - got)) > 0)
					got += (size_t)r;
				sc->last[got] = 0;
				/* a scrape cut short by the server closing at the end
				 * of the run, or another program on a colliding port,
				 * does not count */
				if (strstr(sc->last, "floe_records_in_total"))
					sc->scrapes++;
			}
		}
		if (fd >= 0)
			close(fd);
		usleep(5000);
	}
	return NULL;
}

static int run_yaml_sink(floe_catalog *cat, const char *yaml, const char *base,
			 const stream_sink_ops *sink, floe_error *err)
{
	stream_config *cfg = NULL;
	floe_pipeline *p = NULL;
	floe_pipeline_opts o = FLOE_PIPELINE_OPTS_INIT;
	int rc;
	o.base_dir = base;
	if ((rc = stream_config_parse_yaml(&cfg, yaml, strlen(yaml), base, err)))
		return rc;
	if ((rc = stream_pipeline_open(&p, cfg, cat, sink, &o, err)))
		return rc;
	rc = floe_pipeline_run(p, err);
	floe_pipeline_free(p);
	return rc;
}

typedef struct snap_sum {
	int64_t snapshots, records;
	char last_offsets[4096];
	char last_ckpt[32];
	char pipeline[64];
} snap_sum;

static int sum_cb(const floe_snapshot_info *s, void *payload)
{
	snap_sum *x = payload;
	x->snapshots++;
	for (size_t i = 0; i < s->n_summary; i++) {
		const floe_prop *kv = &s->summary[i];
		if (!strcmp(kv->key, "added-records"))
			x->records += strtoll(kv->value, NULL, 10);
		else if (!strcmp(kv->key, "floe.source-offsets"))
			snprintf(x->last_offsets, sizeof(x->last_offsets), "%s", kv->value);
		else if (!strcmp(kv->key, "flink.max-committed-checkpoint-id"))
			snprintf(x->last_ckpt, sizeof(x->last_ckpt), "%s", kv->value);
		else if (!strcmp(kv->key, "flink.job-id"))
			snprintf(x->pipeline, sizeof(x->pipeline), "%s", kv->value);
	}
	return 0;
}

static snap_sum table_sum(floe_catalog *cat, const char *ns, const char *name)
{
	snap_sum x;
	floe_table *t = NULL;
	floe_error err = {0};
	memset(&x, 0, sizeof(x));
	T_OK(floe_table_load(&t, cat, ns, name, &err), &err);
	if (t)
		T_OK(floe_table_snapshots(t, sum_cb, &x, &err), &err);
	floe_table_free(t);
	return x;
}

/* n JSON lines, ids from first; every bad_every-th line malformed */
static void make_jsonl(const char *path, int first, int n, int bad_every)
{
	FILE *f = fopen(path, "wb");
	for (int i = first; i < first + n; i++) {
		if (bad_every && i % bad_every == 0)
			fprintf(f, "{\"id\": \"not a number %d\", \"kind\": \"x\"}\n", i);
		else
			fprintf(f, "{\"id\": %d, \"kind\": \"%s\", \"v\": %d.5}\n", i,
				i % 3 == 0 ? "click" : "view", i);
	}
	fclose(f);
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_files_checkpoints_and_dead_letters(void)
{
	const char *dir = t_tmpdir();
	char in[512], yaml[4096], path[600];
	floe_error err = {0};
	snprintf(in, sizeof(in), "%s/in", dir);
	mkdir(in, 0755);
	for (int f = 0; f < 4; f++) {
		snprintf(path, sizeof(path), "%s/part-%d.jsonl", in, f);
		make_jsonl(path, f * 10000, 10000, 997);
	}
	snprintf(path, sizeof(path), "%s/.hidden.jsonl", in);
	write_file(path, "{\"id\": -1}\n");
	floe_catalog *cat = catalog(dir);
	snprintf(yaml, sizeof(yaml),
		 "pipeline.name: p1\n"
		 "execution.checkpointing.interval: 50ms\n"
		 "parallelism.default: 3\n"
		 "dead-letter.path: dlq.jsonl\n"
		 "sources:\n"
		 "  - {name: in, type: files, path: in, block-size: 8KiB}\n"
		 "tables:\n"
		 "  - name: db.events\n"
		 "    schema: \"id long not null, kind string, v double\"\n");
	T_OK(run_yaml(cat, yaml, dir, &err), &err);
	snap_sum s = table_sum(cat, "db", "events");
	/* 40000 lines, ids divisible by 997 are malformed: 41 of them */
	int bad = 0;
	for (int i = 0; i < 40000; i++)
		bad += i % 997 == 0;
	T_EQ_INT(s.records, 40000 - bad);
	T_CHECK(s.snapshots >= 1);
	T_EQ_STR(s.pipeline, "p1");
	T_CHECK(strstr(s.last_offsets, "part-3.jsonl") != NULL);
	/* the dead-letter file has every malformed record with its reason */
	snprintf(path, sizeof(path), "%s/dlq.jsonl", dir);
	size_t len = 0;
	char *dl = (char *)t_read_file(path, &len);
	T_CHECK(dl != NULL);
	int lines = 0;
	for (size_t i = 0; dl && i < len; i++)
		lines += dl[i] == '\n';
	T_EQ_INT(lines, bad);
	T_CHECK(dl && strstr(dl, "\"reason\":\"id: 'not a number 997' is not a long\"") != NULL);
	T_CHECK(dl && strstr(dl, "\"table\":\"db.events\"") != NULL);
	free(dl);
	/* running again reads nothing new and commits nothing */
	int64_t before = s.snapshots;
	T_OK(run_yaml(cat, yaml, dir, &err), &err);
	s = table_sum(cat, "db", "events");
	T_EQ_INT(s.snapshots, before);
	T_EQ_INT(s.records, 40000 - bad);
	/* appended data and a new file are picked up by the next run */
	snprintf(path, sizeof(path), "%s/part-0.jsonl", in);
	FILE *f = fopen(path, "ab");
	fputs("{\"id\": 123456, \"kind\": \"late\"}\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/sub", in);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sub/more.jsonl", in);
	make_jsonl(path, 50000, 100, 0);
	T_OK(run_yaml(cat, yaml, dir, &err), &err);
	s = table_sum(cat, "db", "events");
	T_EQ_INT(s.records, 40000 - bad + 101);
	/* a file archived after it was read is forgotten by the next commit */
	snprintf(path, sizeof(path), "%s/part-1.jsonl", in);
	T_EQ_INT(remove(path), 0);
	snprintf(path, sizeof(path), "%s/sub/later.jsonl", in);
	make_jsonl(path, 60000, 10, 0);
	T_OK(run_yaml(cat, yaml, dir, &err), &err);
	s = table_sum(cat, "db", "events");
	T_EQ_INT(s.records, 40000 - bad + 111);
	T_CHECK(strstr(s.last_offsets, "part-1.jsonl") == NULL);
	T_CHECK(strstr(s.last_offsets, "later.jsonl") != NULL);
	T_CHECK(strstr(s.last_offsets, "part-0.jsonl") != NULL);
	floe_catalog_free(cat);
}

static void test_resume_after_failure(void)
{
	const char *dir = t_tmpdir();
	char in[512], yaml[2048];
	floe_error err = {0};
	snprintf(in, sizeof(in), "%s/data.jsonl", dir);
	make_jsonl(in, 0, 60000, 0);
	floe_catalog *cat = catalog(dir);
	snprintf(yaml, sizeof(yaml),
		 "pipeline: {name: resume}\n"
		 "execution: {checkpointing: {interval: 20ms}}\n"
		 "parallelism.default: 2\n"
		 "sources: [{name: s, type: files, path: data.jsonl, block-size: 4KiB}]\n"
		 "tables: [{name: db.r, schema: \"id long, kind string, v double\"}]\n");
	/* runs that fail part-way (a writer error) and resume, until one ends */
	int runs = 0, rc;
	do {
		atomic_store(&g_writes, 0);
		atomic_store(&g_fail_after, runs < 6 ? 40 + runs * 7 : 0);
		floe_error_clear(&err);
		rc = run_yaml(cat, yaml, dir, &err);
		runs++;
	} while (rc != 0 && runs < 20);
	atomic_store(&g_fail_after, 0);
	T_EQ_INT(rc, 0);
	T_CHECK(runs > 1);
	snap_sum s = table_sum(cat, "db", "r");
	T_EQ_INT(s.records, 60000); /* none lost, none twice */
	floe_catalog_free(cat);
}

static void test_two_tables_one_source(void)
{
	const char *dir = t_tmpdir();
	char in[512], yaml[2048];
	floe_error err = {0};
	snprintf(in, sizeof(in), "%s/data.jsonl", dir);
	make_jsonl(in, 0, 30000, 0);
	floe_catalog *cat = catalog(dir);
	snprintf(yaml, sizeof(yaml),
		 "pipeline.name: split\n"
		 "execution.checkpointing.interval: 30ms\n"
		 "sources: [{name: s, type: files, path: data.jsonl, block-size: 4KiB}]\n"
		 "tables:\n"
		 "  - {name: db.clicks, schema: \"id long, kind string\", filter: \"kind = 'click'\"}\n"
		 "  - {name: db.others, schema: \"id long, kind string, v double\",\n"
		 "     filter: \"not kind in ('click') and id >= 0\"}\n");
	/* the first run fails part-way: the tables' offsets may differ */
	atomic_store(&g_writes, 0);
	atomic_store(&g_fail_after, 25);
	(void)run_yaml(cat, yaml, dir, &err);
	atomic_store(&g_fail_after, 0);
	floe_error_clear(&err);
	T_OK(run_yaml(cat, yaml, dir, &err), &err);
	snap_sum c = table_sum(cat, "db", "clicks"), o = table_sum(cat, "db", "others");
	T_EQ_INT(c.records, 10000);
	T_EQ_INT(o.records, 20000);
	floe_catalog_free(cat);
}

/* A name template: tables created on first use (a failed run in between),
 * bad values dead-lettered, the cap; a second run creates nothing. */
static void test_route_template_creates_tables(void)
{
	const char *dir = t_tmpdir();
	char in[512], yaml[2048];
	floe_error err = {0};
	snprintf(in, sizeof(in), "%s/data.jsonl", dir);
	make_jsonl(in, 0, 3000, 0);
	FILE *f = fopen(in, "ab");
	fprintf(f, "{\"id\": -1, \"kind\": \"Nope\"}\n{\"id\": -2}\n{\"id\": -3, \"kind\": \"buy\"}\n");
	fclose(f);
	floe_catalog *cat = catalog(dir);
	snprintf(yaml, sizeof(yaml),
		 "pipeline.name: route\n"
		 "execution.checkpointing.interval: 30ms\n"
		 "parallelism.default: 2\n"
		 "dead-letter.path: dlq.jsonl\n"
		 "sources: [{name: s, type: files, path: data.jsonl, block-size: 4KiB}]\n"
		 "tables:\n"
		 "  - {name: \"db.ev_{kind}\", schema: \"id long, kind string\",\n"
		 "     distribution-mode: hash, route.max-tables: 2}\n");
	/* the run that creates the tables fails part-way */
	atomic_store(&g_writes, 0);
	atomic_store(&g_fail_after, 3);
	for (int k = 0; k < 20; k++) {
		floe_error_clear(&err);
		floe_pipeline *p = NULL;
		stream_config *cfg = NULL;
		floe_pipeline_opts o = FLOE_PIPELINE_OPTS_INIT;
		o.base_dir = dir;
		T_OK(stream_config_parse_yaml(&cfg, yaml, strlen(yaml), dir, &err), &err);
		int rc = stream_pipeline_open(&p, cfg, cat, &fake_sink, &o, &err);
		if (!rc)
			rc = floe_pipeline_run(p, &err);
		bool again = !rc && floe_pipeline_restart_wanted(p);
		floe_pipeline_free(p);
		atomic_store(&g_fail_after, 0);
		if (!rc && !again)
			break;
	}
	T_OK(err.code, &err);
	snap_sum c = table_sum(cat, "db", "ev_click"), v = table_sum(cat, "db", "ev_view");
	T_EQ_INT(c.records, 1000);
	T_EQ_INT(v.records, 2000);
	floe_table *t = NULL;
	T_EQ_INT(floe_table_load(&t, cat, "db", "ev_buy", &err), FLOE_ENOTFOUND); /* the cap */
	floe_error_clear(&err);
	char dlq[600];
	size_t n = 0;
	snprintf(dlq, sizeof(dlq), "%s/dlq.jsonl", dir);
	char *text = (char *)t_read_file(dlq, &n);
	T_CHECK(text && strstr(text, "'Nope' (field kind) is not a table name"));
	T_CHECK(text && strstr(text, "field 'kind' is missing"));
	T_CHECK(text && strstr(text, "route.max-tables (2) reached"));
	free(text);
	floe_catalog_free(cat);
}

static void test_generator_and_hash(void)
{
	const char *dir = t_tmpdir();
	floe_error err = {0};
	floe_catalog *cat = catalog(dir);
	for (int i = 0; i < 1024; i++)
		atomic_store(&g_key_task[i], -1);
	const char *yaml = "pipeline.name: gen\n"
			   "execution.checkpointing.interval: 1h\n"
			   "parallelism.default: 4\n"
			   "sources:\n"
			   "  - name: g\n"
			   "    type: generator\n"
			   "    rows-per-second: 0\n"
			   "    number-of-rows: 20000\n"
			   "    fields: {k: {kind: random, min: 0, max: 99}, ts: {max-past: 3d},\n"
			   "             s: {length: 5}, tag: {values: 'a, b, c'}}\n"
			   "tables:\n"
			   "  - name: db.gen\n"
			   "    schema: \"k long not null, ts timestamptz, s string, tag string, "
			   "n struct<x: int, l: list<double>>\"\n"
			   "    partition-by: \"identity(k)\"\n"
			   "    distribution-mode: hash\n";
	T_OK(run_yaml(cat, yaml, dir, &err), &err);
	snap_sum s = table_sum(cat, "db", "gen");
	T_EQ_INT(s.records, 20000);
	T_EQ_INT(s.snapshots, 1); /* one checkpoint at the end */
	int tasks_used[4] = {0};
	for (int k = 0; k < 100; k++) {
		int t = atomic_load(&g_key_task[k]);
		T_CHECK(t >= 0); /* each key written by exactly one task */
		if (t >= 0 && t < 4)
			tasks_used[t] = 1;
	}
	T_CHECK(tasks_used[0] + tasks_used[1] + tasks_used[2] + tasks_used[3] >= 3);
	T_CHECK(strstr(s.last_offsets, "\"rows\":20000") != NULL);
	T_CHECK(strstr(s.last_offsets, "@base-time-ms") != NULL);
	floe_catalog_free(cat);
}

static void test_config_errors(void)
{
	static const struct {
		const char *yaml, *want;
	} cases[] = {
		{"pipeline.name: x\nexecution.checkpointing.intervall: 10s\nsources: []\ntables: []\n",
		 "did you mean 'execution.checkpointing.interval'"},
		{"pipeline:\n  nmae: x\n", "unknown key 'pipeline.nmae'"},
		{"pipeline.name: x\nsources: [{name: a, type: files, paht: x}]\ntables: [{name: d.t}]\n",
		 "did you mean 'path'"},
		{"pipeline.name: x\nsources: [{name: a, type: filez, path: x}]\ntables: [{name: d.t}]\n",
		 "is not one of files"},
		{"pipeline.name: x\nsources: [{name: a, type: files, path: x}]\ntables: [{name: t}]\n",
		 "namespace.table"},
		{"pipeline.name: x\nsources: [{name: a, type: files, path: x}]\n"
		 "tables: [{name: d.t, source: b}]\n",
		 "no source named 'b'"},
		{"sources: [{name: a, type: files, path: x}]\ntables: [{name: d.t}]\n",
		 "pipeline.name is required"},
		{"pipeline.name: x\ncatalog.uri: postgresql://u:secret@h/db\n"
		 "sources: [{name: a, type: stdin}]\ntables: [{name: d.t}]\n",
		 "password must not be written"},
		{"pipeline.name: x\nexecution.checkpointing.interval: soon\n", "is not a duration"},
		{"pipeline.name: [1, 2\n", "YAML"},
		{"pipeline.name: x\nsources: [{name: a, type: files, path: x, fields: {a.kind: b}}]\n"
		 "tables: [{name: d.t}]\n",
		 "for generator sources"},
		{"pipeline.name: ${FLOE_TEST_UNSET_VARIABLE}\n", "FLOE_TEST_UNSET_VARIABLE is not set"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: d.t, maintenance: {mode: auto, schedule.commit-cuont: 3}}]\n",
		 "did you mean 'maintenance.schedule.commit-count'"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: d.t, maintenance: {mode: sometimes}}]\n",
		 "is not one of off, auto"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: d.t, maintenance: {mode: auto, steps: \"compact,vacuum\"}}]\n",
		 "maintenance.steps"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: d.t, properties: {s3.secret-access-key: abc}}]\n",
		 "'s3.secret-access-key' holds a credential"},
		{"pipeline.name: x\nsources: [{name: a, type: kafka, topic: t,\n"
		 "  properties: {sasl.password: hunter2}}]\ntables: [{name: d.t}]\n",
		 "'properties.sasl.password' holds a credential"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: d.t, maintenance: {mode: auto, orphans.min-age: 5m}}]\n",
		 "maintenance.orphans.min-age must be at least 3600 s"},
		/* name templates (dynamic routing) and unknown-fields */
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: \"d.t_{a}_{b}\", schema: \"a string\"}]\n",
		 "one {field}"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: \"{ns}.t\", schema: \"a string\"}]\n",
		 "after the namespace"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: \"d.t-{a}\", schema: \"a string\"}]\n",
		 "letters, digits and _"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: \"d.t_{a}\"}]\n",
		 "needs schema:"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: \"d.t_{a}\", schema: \"a string\", filter: \"a = 'x'\"}]\n",
		 "cannot be combined"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: \"d.t_{a}\", schema: \"a string\", route.max-tables: 0}]\n",
		 "route.max-tables must be 1..10000"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin, format: csv}]\n"
		 "tables: [{name: \"d.t_{a}\", schema: \"a string\"}]\n",
		 "a name template routes JSON records"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: \"d.t_{a}\", schema: \"a string\"}, {name: d.t_x}]\n",
		 "may name the same tables"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: \"d.t_{a}\", schema: \"a string\"},\n"
		 "  {name: \"d.t_{b}_x\", schema: \"a string\"}]\n",
		 "may name the same tables"},
		{"pipeline.name: x\nsources: [{name: a, type: stdin, format: csv}]\n"
		 "tables: [{name: d.t, unknown-fields: evolve}]\n",
		 "unknown-fields: evolve needs JSON records"},
		{"pipeline.name: x\nsources: [{name: a, type: files, path: x, format: csv}]\n"
		 "tables: [{name: d.t, unknown-fields: dead-letter}]\n",
		 "unknown-fields: dead-letter needs JSON records"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		stream_config *c = NULL;
		floe_error err = {0};
		int rc = stream_config_parse_yaml(&c, cases[i].yaml, strlen(cases[i].yaml), NULL, &err);
		T_EQ_INT(rc, FLOE_EINVAL);
		if (!strstr(err.msg, cases[i].want))
			t_fail(__FILE__, __LINE__, "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want);
		stream_config_free(c);
	}
	/* env expansion, nested and dotted keys, lists */
	setenv("FLOE_TEST_PW", "pw", 1);
	const char *ok = "pipeline: {name: ok, id: the-id}\n"
			 "catalog.uri: \"postgresql://u:${FLOE_TEST_PW}@h/db\"\n"
			 "memory.budget: 32MiB\n"
			 "sources:\n"
			 "  - name: a\n    type: files\n    path: [x, y]\n    format: csv\n"
			 "    csv: {field-delimiter: \"\\t\", header: false}\n"
			 "tables:\n  - name: d.t\n    properties: {write.target-file-size-bytes: 1000}\n";
	stream_config *c = NULL;
	floe_error err = {0};
	T_OK(stream_config_parse_yaml(&c, ok, strlen(ok), NULL, &err), &err);
	if (c) {
		T_EQ_STR(c->pipeline_id, "the-id");
		T_EQ_STR(c->catalog_uri, "postgresql://u:pw@h/db");
		T_EQ_INT(c->memory_budget, 32 << 20);
		T_EQ_INT(c->sources[0].n_paths, 2);
		T_EQ_INT(c->sources[0].csv_delimiter, '\t');
		T_CHECK(!c->sources[0].csv_header);
		T_EQ_STR(floe_strmap_get(&c->tables[0].properties, "write.target-file-size-bytes"),
			 "1000");
		T_EQ_STR(c->tables[0].source, "a");
		/* maintenance is off unless asked for, with Flink's trigger defaults */
		T_EQ_INT(c->tables[0].maint.mode, 0);
		T_EQ_INT(c->tables[0].maint.commit_count, 10);
		T_EQ_INT(c->tables[0].maint.rate_limit_ms, 60000);
		T_EQ_INT(c->tables[0].maint.step_bits, FLOE_STEP_ALL);
		T_EQ_INT(c->tables[0].maint.orphan_interval_ms, 86400000);
	}
	stream_config_free(c);
	/* credentials from the environment are fine; Iceberg's own keys are not credentials */
	setenv("FLOE_TEST_S3_SECRET", "s3cr3t", 1);
	const char *sec = "pipeline.name: s\nsources: [{name: a, type: stdin}]\n"
			  "tables:\n  - name: d.t\n    properties:\n"
			  "      s3.secret-access-key: ${FLOE_TEST_S3_SECRET}\n"
			  "      write.metadata.metrics.column.token: full\n";
	c = NULL;
	T_OK(stream_config_parse_yaml(&c, sec, strlen(sec), NULL, &err), &err);
	if (c)
		T_EQ_STR(floe_strmap_get(&c->tables[0].properties, "s3.secret-access-key"), "s3cr3t");
	stream_config_free(c);
	const char *m = "pipeline.name: m\nsources: [{name: a, type: stdin}]\n"
			"tables:\n  - name: d.t\n    maintenance:\n      mode: auto\n"
			"      steps: compact, expire\n      schedule: {commit-count: 3, interval: 30s}\n"
			"      rate-limit: 5s\n      compact.target-file-size: 1MiB\n"
			"      expire.retain-last: 4\n";
	c = NULL;
	T_OK(stream_config_parse_yaml(&c, m, strlen(m), NULL, &err), &err);
	if (c) {
		const stream_maint_cfg *mc = &c->tables[0].maint;
		T_EQ_INT(mc->mode, 1);
		T_EQ_INT(mc->step_bits, FLOE_STEP_COMPACT | FLOE_STEP_EXPIRE);
		T_EQ_INT(mc->commit_count, 3);
		T_EQ_INT(mc->interval_ms, 30000);
		T_EQ_INT(mc->rate_limit_ms, 5000);
		T_EQ_INT(mc->target_file_size, 1 << 20);
		T_EQ_INT(mc->retain_last, 4);
		T_CHECK(mc->on_finish);
	}
	stream_config_free(c);
	floe_buf ref;
	floe_buf_init(&ref, 0);
	T_EQ_INT(stream_config_reference(&ref), 0);
	T_CHECK(strstr(floe_buf_cstr(&ref), "`execution.checkpointing.interval`") != NULL);
	floe_buf_reset(&ref);
}

/* Credentials never sit in the config file: a catalog password comes from a
 * file named in it (or the environment), and is put into the URI only in
 * memory; a URI that also writes a password is refused. */
static void test_config_password_file(void)
{
	const char *dir = t_tmpdir();
	char pw[512], yaml[1024];
	floe_error err = {0};
	stream_config *c = NULL;
	snprintf(pw, sizeof(pw), "%s/catalog.pw", dir);
	write_file(pw, "s3cret\nnot this line\n");
	snprintf(yaml, sizeof(yaml),
		 "pipeline.name: x\ncatalog.uri: postgresql://u@h/db\ncatalog.password-file: %s\n"
		 "sources: [{name: a, type: stdin}]\ntables: [{name: d.t}]\n",
		 pw);
	T_OK(stream_config_parse_yaml(&c, yaml, strlen(yaml), NULL, &err), &err);
	if (c)
		T_EQ_STR(c->catalog_uri, "postgresql://u:s3cret@h/db");
	stream_config_free(c);
	c = NULL;
	snprintf(yaml, sizeof(yaml),
		 "pipeline.name: x\ncatalog.uri: postgresql://u:${FLOE_TEST_PW2}@h/db\n"
		 "catalog.password-file: %s\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: d.t}]\n",
		 pw);
	setenv("FLOE_TEST_PW2", "pw", 1);
	T_EQ_INT(stream_config_parse_yaml(&c, yaml, strlen(yaml), NULL, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "must name a user") != NULL);
	stream_config_free(c);
	c = NULL;
	snprintf(yaml, sizeof(yaml),
		 "pipeline.name: x\ncatalog.uri: postgresql://u@h/db\n"
		 "catalog.password-file: %s/missing.pw\nsources: [{name: a, type: stdin}]\n"
		 "tables: [{name: d.t}]\n",
		 dir);
	T_CHECK(stream_config_parse_yaml(&c, yaml, strlen(yaml), NULL, &err) != 0);
	T_CHECK(strstr(err.msg, "catalog.password-file") != NULL);
	stream_config_free(c);
}

/* catalog.properties.* reach the catalog (REST, Glue, S3 settings); a
 * credential among them must come from the environment, never the file. */
static void test_config_catalog_properties(void)
{
	floe_error err = {0};
	stream_config *c = NULL;
	const char *ok = "pipeline.name: x\ncatalog:\n  type: rest\n  uri: http://127.0.0.1:1\n"
			 "  properties:\n    credential: ${FLOE_TEST_CRED}\n    s3.endpoint: "
			 "http://127.0.0.1:2\nsources: [{name: a, type: stdin}]\ntables: [{name: d.t}]\n";
	setenv("FLOE_TEST_CRED", "id:secret", 1);
	T_OK(stream_config_parse_yaml(&c, ok, strlen(ok), NULL, &err), &err);
	if (c) {
		T_CHECK(c->has_catalog);
		T_EQ_STR(floe_strmap_get(&c->catalog_props, "catalog.properties.credential"),
			 "id:secret");
		T_EQ_STR(floe_strmap_get(&c->catalog_props, "catalog.properties.s3.endpoint"),
			 "http://127.0.0.1:2");
	}
	stream_config_free(c);
	c = NULL;
	const char *bad = "pipeline.name: x\ncatalog.type: rest\ncatalog.uri: http://h\n"
			  "catalog.properties.token: abc\nsources: [{name: a, type: stdin}]\n"
			  "tables: [{name: d.t}]\n";
	T_CHECK(stream_config_parse_yaml(&c, bad, strlen(bad), NULL, &err) != 0);
	T_CHECK(strstr(err.msg, "catalog.properties.token") != NULL);
	stream_config_free(c);
}

/* The real task writers (Parquet files, the shared budget) on three threads,
 * HASH, NONE and RANGE tables fed by one generator, metrics scraped meanwhile: the
 * test the TSan preset runs for data races. */
static void test_real_writers_and_metrics(void)
{
	const char *dir = t_tmpdir();
	char yaml[2048];
	floe_error err = {0};
	floe_catalog *cat = catalog(dir);
	scraper sc;
	pthread_t th;
	memset(&sc, 0, sizeof(sc));
	sc.port = 20000 + (int)(floe_random_u64() % 30000);
	snprintf(yaml, sizeof(yaml),
		 "pipeline.name: real\n"
		 "execution.checkpointing.interval: 30ms\n"
		 "parallelism.default: 3\n"
		 "memory.budget: 4MiB\n"
		 "metrics.port: %d\n"
		 "sources:\n"
		 "  - {name: g, type: generator, rows-per-second: 0, number-of-rows: 30000,\n"
		 "     fields: {k: {min: 0, max: 9}, ts: {max-past: 2d}, tag: {values: 'a, b'}}}\n"
		 "tables:\n"
		 "  - name: db.h\n"
		 "    schema: \"k long not null, ts timestamptz, tag string, v double\"\n"
		 "    partition-by: \"k, day(ts)\"\n"
		 "    distribution-mode: hash\n"
		 "  - name: db.n\n"
		 "    schema: \"k long not null, tag string\"\n"
		 "    partition-by: \"tag\"\n"
		 "    filter: \"k < 5\"\n"
		 "  - name: db.r\n"
		 "    schema: \"k long not null, ts timestamptz\"\n"
		 "    partition-by: \"k\"\n"
		 "    distribution-mode: range\n",
		 sc.port);
	pthread_create(&th, NULL, scrape_main, &sc);
	T_OK(run_yaml_sink(cat, yaml, dir, NULL, &err), &err);
	atomic_store(&sc.stop, true);
	pthread_join(th, NULL);
	snap_sum h = table_sum(cat, "db", "h"), n = table_sum(cat, "db", "n");
	snap_sum r = table_sum(cat, "db", "r");
	T_EQ_INT(h.records, 30000);
	T_EQ_INT(r.records, 30000); /* RANGE: reassigned at each checkpoint */
	T_CHECK(n.records > 10000 && n.records < 20000);
	T_CHECK(h.snapshots >= 1);
	T_CHECK(sc.scrapes > 0); /* complete scrapes of floe's metrics */
	floe_catalog_free(cat);
}

int main(void)
{
	T_RUN(test_config_errors);
	T_RUN(test_config_password_file);
	T_RUN(test_config_catalog_properties);
	T_RUN(test_files_checkpoints_and_dead_letters);
	T_RUN(test_resume_after_failure);
	T_RUN(test_two_tables_one_source);
	T_RUN(test_route_template_creates_tables);
	T_RUN(test_generator_and_hash);
	T_RUN(test_real_writers_and_metrics);
	return t_finish();
}
