/*
 * test_write_delta.c — the upsert / CDC writer (Flink's
 * BaseEqualityDeltaWriter semantics): random change streams with repeated
 * keys within and across checkpoints, committed one row delta per
 * checkpoint and read back by floe's scan (deletes applied), must equal a
 * model of the stream — upsert and CDC mode, v2 (position delete files) and
 * v3 (deletion vectors), partitioned and unpartitioned; the positions the
 * task writer reports name the rows in the files; the rules refused with
 * their messages.
 */
#include "floe/scan.h"
#include "test_write_util.h"

static const char *cols = "id long not null, region string not null, name string, v long";

/* ---- the model ---------------------------------------------------------------------- */

#define NKEYS 40
#define NREG 3
static const char *const regions[NREG] = {"eu", "us", "ap"};

typedef struct mrow {
	bool live;
	bool name_null;
	long long v;
	int name;
} mrow;

typedef struct model {
	mrow rows[NKEYS][NREG];
} model;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static void row_json(char *buf, size_t cap, int id, int reg, const mrow *r)
{
	if (r->name_null)
		snprintf(buf, cap, "{\"id\": %d, \"region\": \"%s\", \"name\": null, \"v\": %lld}", id,
			 regions[reg], r->v);
	else
		snprintf(buf, cap, "{\"id\": %d, \"region\": \"%s\", \"name\": \"n%d\", \"v\": %lld}",
			 id, regions[reg], r->name, r->v);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The model as sorted CSV lines "id,region,name,v". */
static void model_text(const model *m, floe_buf *out)
{
	char *lines[NKEYS * NREG];
	size_t n = 0;
	for (int i = 0; i < NKEYS; i++)
		for (int r = 0; r < NREG; r++) {
			const mrow *x = &m->rows[i][r];
			if (!x->live)
				continue;
			char buf[128];
			if (x->name_null)
				snprintf(buf, sizeof(buf), "%d,%s,,%lld", i, regions[r], x->v);
			else
				snprintf(buf, sizeof(buf), "%d,%s,n%d,%lld", i, regions[r], x->name, x->v);
			lines[n++] = floe_strdup(buf);
		}
	qsort(lines, n, sizeof(char *), cmp_line);
	for (size_t i = 0; i < n; i++) {
		T_EQ_INT(floe_buf_printf(out, "%s\n", lines[i]), 0);
		floe_free(lines[i]);
	}
}

static int collect(const char *data, size_t n, void *payload)
{
	return floe_buf_append(payload, data, n);
}

/* The table as floe's scan reads it, sorted lines without the header. */
static void table_text(wenv *e, const char *name, floe_buf *out)
{
	floe_table *t = NULL;
	floe_scan *sc = NULL;
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	floe_error err = {0};
	floe_buf raw;
	const char *names[] = {"id", "region", "name", "v"};
	so.columns = names;
	so.n_columns = 4;
	floe_buf_init(&raw, 0);
	T_OK(floe_table_load(&t, e->cat, "db", name, &err), &err);
	T_OK(floe_scan_open(&sc, t, &so, &err), &err);
	T_OK(floe_scan_write(sc, FLOE_OUTPUT_CSV, collect, &raw, &err), &err);
	floe_scan_free(sc);
	floe_table_free(t);
	char *lines[4096];
	size_t n = 0;
	char *p = (char *)floe_buf_cstr(&raw);
	bool header = true;
	while (p && *p && n < 4096) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (!header && *p)
			lines[n++] = p;
		header = false;
		p = nl ? nl + 1 : NULL;
	}
	qsort(lines, n, sizeof(char *), cmp_line);
	for (size_t i = 0; i < n; i++)
		T_EQ_INT(floe_buf_printf(out, "%s\n", lines[i]), 0);
	floe_buf_reset(&raw);
}

/* ---- a random stream through the writer ----------------------------------------------- */

typedef struct run_opts {
	int fv;
	bool upsert;
	const char *partition_by;
	const char *key; /* equality field names */
	int checkpoints;
} run_opts;

static void write_changes(floe_delta_writer *w, const floe_schema *s, char **rows, uint8_t *kinds,
			  size_t n)
{
	struct ArrowArray b;
	struct ArrowSchema bs;
	floe_error err = {0};
	make_batch(s, (const char *const *)rows, n, &b, &bs);
	T_OK(floe_delta_writer_write(w, &b, &bs, kinds, &err), &err);
	floe_arrow_array_release(&b);
	floe_arrow_schema_release(&bs);
}

static void run_stream(const run_opts *ro)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_error err = {0};
	char name[32];
	model md;
	snprintf(name, sizeof(name), "d%d%c%c", ro->fv, ro->upsert ? 'u' : 'c',
		 ro->partition_by ? 'p' : 'n');
	memset(&md, 0, sizeof(md));
	env_open(&e, true);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, name, cols, ro->partition_by, NULL, ro->fv);
	floe_table *tc = NULL;
	T_OK(floe_table_load(&tc, e.cat, "db", name, &err), &err);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	int32_t ids[4];
	size_t n_ids = 0;
	T_OK(floe_delta_equality_ids(s, ro->key, ids, 4, &n_ids, &err), &err);
	floe_delta_writer_opts o = FLOE_DELTA_WRITER_OPTS_INIT;
	o.equality_ids = ids;
	o.n_equality_ids = n_ids;
	o.upsert = ro->upsert;
	floe_delta_writer *w = NULL;
	T_OK(floe_delta_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	bool key_has_region = n_ids == 2;
	int64_t pos_seen = 0, eq_seen = 0;
	for (int ck = 0; ck < ro->checkpoints && w; ck++) {
		/* a few batches of random changes: keys repeat within the batch,
		 * within the checkpoint and across checkpoints */
		for (int bi = 0; bi < 3; bi++) {
			char *rows[200];
			uint8_t kinds[200];
			size_t n = 0;
			int per = 20 + (int)(rnd() % 60);
			for (int k = 0; k < per && n + 2 <= 200; k++) {
				int id = (int)(rnd() % NKEYS);
				int reg = key_has_region ? (int)(rnd() % NREG) : id % NREG;
				mrow *cur = &md.rows[id][reg];
				mrow nw = {true, rnd() % 5 == 0, (long long)(rnd() % 1000) - 500,
					   (int)(rnd() % 100)};
				char buf[160];
				int what = (int)(rnd() % 10);
				if (ro->upsert) {
					if (what < 6) { /* insert or update after */
						row_json(buf, sizeof(buf), id, reg, &nw);
						kinds[n] = what < 3 ? FLOE_ROW_INSERT : FLOE_ROW_UPDATE_AFTER;
						rows[n++] = floe_strdup(buf);
						*cur = nw;
					} else if (what < 7) { /* -U: ignored in upsert mode */
						row_json(buf, sizeof(buf), id, reg, &nw);
						kinds[n] = FLOE_ROW_UPDATE_BEFORE;
						rows[n++] = floe_strdup(buf);
					} else { /* delete: only the key is given */
						snprintf(buf, sizeof(buf), "{\"id\": %d, \"region\": \"%s\"}",
							 id, regions[reg]);
						kinds[n] = FLOE_ROW_DELETE;
						rows[n++] = floe_strdup(buf);
						cur->live = false;
					}
				} else {
					/* CDC: a consistent stream with before images */
					if (!cur->live) {
						row_json(buf, sizeof(buf), id, reg, &nw);
						kinds[n] = FLOE_ROW_INSERT;
						rows[n++] = floe_strdup(buf);
						*cur = nw;
					} else if (what < 6) {
						row_json(buf, sizeof(buf), id, reg, cur);
						kinds[n] = FLOE_ROW_UPDATE_BEFORE;
						rows[n++] = floe_strdup(buf);
						row_json(buf, sizeof(buf), id, reg, &nw);
						kinds[n] = FLOE_ROW_UPDATE_AFTER;
						rows[n++] = floe_strdup(buf);
						*cur = nw;
					} else {
						row_json(buf, sizeof(buf), id, reg, cur);
						kinds[n] = FLOE_ROW_DELETE;
						rows[n++] = floe_strdup(buf);
						cur->live = false;
					}
				}
			}
			write_changes(w, s, rows, kinds, n);
			for (size_t i = 0; i < n; i++)
				floe_free(rows[i]);
		}
		floe_data_file *files = NULL, *rep = NULL;
		size_t nf = 0, nr = 0;
		T_OK(floe_delta_writer_complete(w, &files, &nf, &rep, &nr, &a, &err), &err);
		T_EQ_INT(nr, 0);
		floe_snapshot_op *op = NULL;
		T_OK(floe_op_new(&op, tc, FLOE_OP_ROW_DELTA, NULL, &err), &err);
		for (size_t i = 0; i < nf; i++) {
			const floe_data_file *f = &files[i];
			if (f->content == FLOE_CONTENT_POSITION_DELETES) {
				pos_seen++;
				T_CHECK(f->referenced_data_file != NULL); /* file-scoped */
				T_EQ_INT(strcmp(f->file_format, "PUFFIN") == 0, ro->fv == 3);
			} else if (f->content == FLOE_CONTENT_EQUALITY_DELETES) {
				eq_seen++;
				T_EQ_INT(f->n_equality_ids, n_ids);
			}
			T_OK(floe_op_add_file(op, f, &err), &err);
		}
		T_OK(floe_op_commit(op, NULL, &err), &err);
		floe_op_free(op);
		floe_free(files);
		floe_free(rep);
		floe_buf want, got;
		floe_buf_init(&want, 0);
		floe_buf_init(&got, 0);
		model_text(&md, &want);
		table_text(&e, name, &got);
		if (strcmp(floe_buf_cstr(&want), floe_buf_cstr(&got)) != 0)
			t_fail(__FILE__, __LINE__, "%s checkpoint %d: table differs from the model:\n"
			       "want:\n%s\ngot:\n%s", name, ck, floe_buf_cstr(&want), floe_buf_cstr(&got));
		floe_buf_reset(&want);
		floe_buf_reset(&got);
	}
	T_CHECK(pos_seen > 0);
	T_CHECK(eq_seen > 0);
	floe_delta_writer_stats st;
	floe_delta_writer_get_stats(w, &st);
	T_CHECK(st.rows > 0 && st.equality_deletes > 0 && st.position_deletes > 0);
	T_EQ_INT(st.key_bytes, 0); /* freed at complete() */
	floe_delta_writer_free(w);
	floe_table_free(t);
	floe_table_free(tc);
	floe_arena_reset(&a);
	env_close(&e);
}

static void test_upsert_v2(void)
{
	run_opts o = {2, true, "region", "id, region", 6};
	run_stream(&o);
}

static void test_upsert_v3(void)
{
	run_opts o = {3, true, "region", "id,region", 6};
	run_stream(&o);
}

static void test_upsert_unpartitioned(void)
{
	run_opts o2 = {2, true, NULL, "id", 5};
	run_stream(&o2);
	run_opts o3 = {3, true, NULL, "id", 5};
	run_stream(&o3);
}

static void test_upsert_bucket(void)
{
	run_opts o = {3, true, "bucket(4, id), region", "region,id", 5};
	run_stream(&o);
}

static void test_cdc(void)
{
	run_opts o2 = {2, false, "region", "id, region", 5};
	run_stream(&o2);
	run_opts o3 = {3, false, NULL, "id", 5};
	run_stream(&o3);
}

/* write_pos: every row's file and position name that row in the files */
static void test_write_pos(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_error err = {0};
	env_open(&e, true);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "wp", cols, "region", NULL, 2);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	floe_task_writer_opts to = FLOE_TASK_WRITER_OPTS_INIT;
	to.target_file_size = 4096; /* roll often */
	floe_task_writer *tw = NULL;
	T_OK(floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &to, &err), &err);
	enum { N = 3000 };
	int32_t *fi = floe_calloc(N, sizeof(int32_t));
	int64_t *po = floe_calloc(N, sizeof(int64_t));
	char **rows = floe_calloc(N, sizeof(char *));
	for (int i = 0; i < N; i++) {
		char buf[160];
		mrow r = {true, false, i, i % 100};
		row_json(buf, sizeof(buf), i, (int)(rnd() % NREG), &r);
		rows[i] = floe_strdup(buf);
	}
	/* three batches, one of a single partition (no take) */
	struct ArrowArray b;
	struct ArrowSchema bs;
	for (int part = 0; part < 3; part++) {
		int lo = part * 1000;
		make_batch(s, (const char *const *)rows + lo, 1000, &b, &bs);
		T_OK(floe_task_writer_write_pos(tw, &b, &bs, fi + lo, po + lo, &err), &err);
		floe_arrow_array_release(&b);
		floe_arrow_schema_release(&bs);
	}
	/* every file's ids at the reported positions */
	int32_t max_file = 0;
	for (int i = 0; i < N; i++)
		if (fi[i] > max_file)
			max_file = fi[i];
	T_CHECK(max_file >= 3); /* rolled */
	char **paths = floe_calloc((size_t)max_file + 1, sizeof(char *));
	for (int32_t k = 0; k <= max_file; k++) {
		floe_written_file wf;
		T_OK(floe_task_writer_file(tw, k, &wf), NULL);
		paths[k] = floe_strdup(wf.path);
		T_EQ_INT(wf.spec_id, 0);
		T_EQ_INT(wf.partition->n, 1);
	}
	floe_written_file none;
	T_EQ_INT(floe_task_writer_file(tw, max_file + 1, &none), FLOE_EINVAL);
	floe_data_file *files = NULL;
	size_t nf = 0;
	T_OK(floe_task_writer_complete(tw, &files, &nf, &a, &err), &err);
	T_EQ_INT(nf, (size_t)max_file + 1);
	for (int32_t k = 0; k <= max_file; k++) {
		/* the file's ids in order */
		floe_buf text;
		floe_buf_init(&text, 0);
		int64_t ids_in[N];
		int64_t n_in = 0;
		floe_input *in = NULL;
		floe_parquet_reader *r = NULL;
		bool eof = false;
		T_OK(floe_io_open_read(floe_table_io(t), paths[k], &in, &err), &err);
		T_OK(floe_parquet_reader_open(&r, in, NULL, &err), &err);
		while (r && !eof) {
			struct ArrowArray rb;
			T_OK(floe_parquet_reader_next(r, &rb, &eof, &err), &err);
			if (eof)
				break;
			const int64_t *v = rb.children[0]->buffers[1];
			for (int64_t i = 0; i < rb.length && n_in < N; i++)
				ids_in[n_in++] = v[i + rb.children[0]->offset];
			floe_arrow_array_release(&rb);
		}
		floe_parquet_reader_free(r);
		floe_input_close(in);
		for (int i = 0; i < N; i++)
			if (fi[i] == k) {
				T_CHECK(po[i] < n_in);
				if (po[i] < n_in && ids_in[po[i]] != i)
					t_fail(__FILE__, __LINE__, "row %d: file %d position %lld holds %lld",
					       i, k, (long long)po[i], (long long)ids_in[po[i]]);
			}
		floe_buf_reset(&text);
	}
	for (int32_t k = 0; k <= max_file; k++)
		floe_free(paths[k]);
	floe_free(paths);
	for (int i = 0; i < N; i++)
		floe_free(rows[i]);
	floe_free(rows);
	floe_free(fi);
	floe_free(po);
	floe_free(files);
	floe_task_writer_free(tw);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* the rules, refused before anything is written */
static void test_rules(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_error err = {0};
	env_open(&e, true);
	floe_arena_init(&a, 0);
	floe_table *t1 = make_table(&e, "v1", cols, NULL, NULL, 1);
	floe_table *t2 = make_table(&e, "p2", cols, "region", NULL, 2);
	const floe_schema *s = floe_metadata_current_schema(floe_table_metadata(t2));
	const floe_partition_spec *sp = floe_metadata_default_spec(floe_table_metadata(t2));
	int32_t ids[4];
	size_t n = 0;
	T_OK(floe_delta_equality_ids(s, "id", ids, 4, &n, &err), &err);
	T_EQ_INT(n, 1);
	T_EQ_INT(floe_delta_check(s, sp, 2, ids, n, true, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "equality fields must include every partition source column"));
	T_CHECK(strstr(err.msg, "add 'region' to the equality fields"));
	/* CDC mode writes whole rows: the partition is known */
	T_OK(floe_delta_check(s, sp, 2, ids, n, false, &err), &err);
	T_EQ_INT(floe_delta_check(s, sp, 1, ids, n, true, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "need format version 2 or later"));
	T_EQ_INT(floe_delta_check(s, sp, 2, ids, 0, true, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "need equality fields"));
	T_EQ_INT(floe_delta_equality_ids(s, "id, nope", ids, 4, &n, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "'nope' is not a column"));
	T_EQ_INT(floe_delta_equality_ids(s, "id,ID", ids, 4, &n, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "given twice"));
	/* no names: the identifier fields (none here) */
	T_OK(floe_delta_equality_ids(s, NULL, ids, 4, &n, &err), &err);
	T_EQ_INT(n, 0);
	/* the writer refuses the same */
	const floe_metadata *m1 = floe_table_metadata(t1);
	T_OK(floe_write_config_from(&cfg, &a, m1, &err), &err);
	floe_delta_writer_opts o = FLOE_DELTA_WRITER_OPTS_INIT;
	int32_t one = 1;
	o.equality_ids = &one;
	o.n_equality_ids = 1;
	floe_delta_writer *w = NULL;
	T_EQ_INT(floe_delta_writer_new(&w, floe_table_io(t1), m1, &cfg, &o, &err), FLOE_EINVAL);
	T_CHECK(w == NULL);
	const floe_metadata *m2 = floe_table_metadata(t2);
	T_OK(floe_write_config_from(&cfg, &a, m2, &err), &err);
	T_EQ_INT(floe_delta_writer_new(&w, floe_table_io(t2), m2, &cfg, &o, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "partition source column"));
	floe_table_free(t1);
	floe_table_free(t2);
	floe_arena_reset(&a);
	env_close(&e);
}

/* ---- index mode, lazy fallback (a one-long key) ------------------------------------ */

/* One checkpoint of upserts v_base + id for ids [lo, hi) through writer w and
 * index ix; commits the files the commit takes: the index's DVs (dv) or the
 * equality deletes of the kept keys (floe_delta_index_fallback). */
static void lazy_round(wenv *e, floe_table *tc, const floe_schema *s, floe_delta_writer *w,
		       floe_delta_index *ix, int lo, int hi, int v_base, bool dv, floe_arena *a)
{
	floe_error err = {0};
	char *rows[64];
	uint8_t kinds[64];
	size_t n = 0;
	for (int id = lo; id < hi && n < 64; id++) {
		char buf[160];
		snprintf(buf, sizeof(buf), "{\"id\": %d, \"region\": \"eu\", \"name\": \"n\", "
			 "\"v\": %d}", id, v_base + id);
		kinds[n] = FLOE_ROW_UPDATE_AFTER;
		rows[n++] = floe_strdup(buf);
	}
	write_changes(w, s, rows, kinds, n);
	for (size_t i = 0; i < n; i++)
		floe_free(rows[i]);
	floe_data_file *files = NULL, *rep = NULL;
	size_t nf = 0, nr = 0;
	T_OK(floe_delta_writer_complete(w, &files, &nf, &rep, &nr, a, &err), &err);
	for (size_t i = 0; i < nf; i++) /* lazy: the writer wrote no equality deletes */
		T_CHECK(files[i].content != FLOE_CONTENT_EQUALITY_DELETES);
	size_t nd = nf;
	T_OK(floe_delta_index_complete(ix, &files, &nf, &rep, &nr, a, &err), &err);
	if (!dv) {
		size_t n0 = nf;
		int64_t keys = 0;
		T_OK(floe_delta_index_fallback(ix, &files, &nf, a, &err), &err);
		for (size_t i = n0; i < nf; i++) {
			T_EQ_INT(files[i].content, FLOE_CONTENT_EQUALITY_DELETES);
			T_CHECK(files[i].absent_metrics & FLOE_DELTA_TAG_FALLBACK);
			keys += files[i].record_count;
		}
		T_EQ_INT(keys, hi - lo);
		size_t again = nf; /* consumed: a second call writes nothing */
		T_OK(floe_delta_index_fallback(ix, &files, &nf, a, &err), &err);
		T_EQ_INT(nf, again);
	} else {
		floe_delta_index_forget(ix);
	}
	floe_snapshot_op *op = NULL;
	T_OK(floe_op_new(&op, tc, FLOE_OP_ROW_DELTA, NULL, &err), &err);
	for (size_t i = 0; i < nf; i++) {
		floe_data_file f = files[i];
		unsigned tag = f.absent_metrics & FLOE_DELTA_TAGS;
		f.absent_metrics &= ~FLOE_DELTA_TAGS;
		if (i >= nd && (tag & FLOE_DELTA_TAG_INDEX) && !dv)
			continue;
		T_OK(floe_op_add_file(op, &f, &err), &err);
	}
	for (size_t i = 0; dv && i < nr; i++) {
		floe_data_file f = rep[i];
		f.absent_metrics &= ~FLOE_DELTA_TAGS;
		T_OK(floe_op_remove_file(op, &f, &err), &err);
	}
	T_OK(floe_op_commit(op, NULL, &err), &err);
	floe_op_free(op);
	floe_free(files);
	floe_free(rep);
	(void)e;
}

static void test_index_lazy_fallback(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_error err = {0};
	env_open(&e, true);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "lazy", cols, NULL, NULL, 3);
	floe_table *tc = NULL;
	T_OK(floe_table_load(&tc, e.cat, "db", "lazy", &err), &err);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	int32_t ids[4];
	size_t n_ids = 0;
	T_OK(floe_delta_equality_ids(s, "id", ids, 4, &n_ids, &err), &err);
	floe_delta_index_opts io;
	memset(&io, 0, sizeof(io));
	io.equality_ids = ids;
	io.n_equality_ids = n_ids;
	io.n_parts = 1;
	io.partition_id = 9;
	floe_delta_index *ix = NULL;
	T_OK(floe_delta_index_new(&ix, floe_table_io(t), m, &cfg, &io, &err), &err);
	floe_delta_writer_opts o = FLOE_DELTA_WRITER_OPTS_INIT;
	o.equality_ids = ids;
	o.n_equality_ids = n_ids;
	o.upsert = true;
	o.index = ix;
	floe_delta_writer *w = NULL;
	T_OK(floe_delta_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	/* 1: ten new keys, committed as a fallback (equality deletes that
	 * delete nothing older); 2: five of them updated, a fallback again —
	 * the equality deletes remove the first rows; 3: two of round 2's rows
	 * updated through the index's DVs (the index knows where they are; a
	 * pipeline rebuilds the index after a fallback, whose uncommitted DVs
	 * of round 1's file the index now names, so round 3 stays off it) */
	lazy_round(&e, tc, s, w, ix, 0, 10, 100, false, &a);
	lazy_round(&e, tc, s, w, ix, 0, 5, 200, false, &a);
	lazy_round(&e, tc, s, w, ix, 3, 5, 300, true, &a);
	floe_buf got, want;
	floe_buf_init(&got, 0);
	floe_buf_init(&want, 0);
	table_text(&e, "lazy", &got);
	for (int id = 0; id < 10; id++) {
		int v = id >= 3 && id < 5 ? 300 + id : id < 5 ? 200 + id : 100 + id;
		T_EQ_INT(floe_buf_printf(&want, "%d,eu,n,%d\n", id, v), 0);
	}
	/* sorted as strings: one-digit ids sort as numbers */
	T_EQ_STR(floe_buf_cstr(&got), floe_buf_cstr(&want));
	floe_buf_reset(&got);
	floe_buf_reset(&want);
	floe_delta_writer_free(w);
	floe_delta_index_free(ix);
	floe_table_free(t);
	floe_table_free(tc);
	floe_arena_reset(&a);
	env_close(&e);
}

int main(void)
{
	T_RUN(test_index_lazy_fallback);
	T_RUN(test_write_pos);
	T_RUN(test_rules);
	T_RUN(test_upsert_v2);
	T_RUN(test_upsert_v3);
	T_RUN(test_upsert_unpartitioned);
	T_RUN(test_upsert_bucket);
	T_RUN(test_cdc);
	return t_finish();
}
