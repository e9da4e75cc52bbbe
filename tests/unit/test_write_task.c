/*
 * test_write_task.c — partition fan-out and the task writer: every
 * transform on every source type it applies to, with edge values
 * (negatives, pre-1970 dates and instants, nanoseconds, non-ASCII strings,
 * nulls, nullable parent structs), checked row by row against
 * floe_transform_apply on values parsed from the JSON rows (not from
 * Arrow); files holding exactly their partition's rows; rolling at a small
 * target size; the memory budget with many partitions; max open files;
 * abort and injected FileIO failures leaving nothing behind; reuse across
 * checkpoints; and a real commit to a SQLite-catalog table.
 */
#include <math.h>

#include "test_write_util.h"
#include "util/timeutil.h"

static const char *part_cols =
	"i int, l long, dec decimal(10,2), s string, bin binary, d date, ts timestamp, tstz "
	"timestamptz, tsn timestamp_ns, tsnz timestamptz_ns, t time, u uuid, fx fixed[4], b "
	"boolean, f float, dbl double, st struct<x: int, y: string>";

/* ---- generated rows with edge values ------------------------------------------------ */

static const char *const strings[] = {
	"", "a", "ab", "abc", "h\u00e9llo", "\u4e16\u754c\u4f60\u597d", "\U0001F600\U0001F601x",
	"zz top", "\u00e9", "a/b=c&d", "null", "\u00ff\u00fe\u00fd",
};

static void gen_row(char *out, size_t cap, uint64_t *seed, int row)
{
	char *p = out, *end = out + cap;
#define PUT(...) p += snprintf(p, (size_t)(end - p), __VA_ARGS__)
	PUT("{");
	static const int32_t ints[] = {0, 1, -1, 9, -9, 10, -10, 2147483647, -2147483647 - 1,
				       123456, -123456};
	static const int64_t longs[] = {0, 1, -1, 99, -101, INT64_C(9223372036854775807),
					INT64_C(-9223372036854775807) - 1, INT64_C(1) << 40,
					-(INT64_C(1) << 40)};
	bool first = true;
#define SEP() (first ? (first = false, "") : ", ")
	uint64_t r = t_rand(seed);
	if (r % 10)
		PUT("%s\"i\": %d", SEP(), ints[t_rand(seed) % 11]);
	if (t_rand(seed) % 10)
		PUT("%s\"l\": %lld", SEP(), (long long)longs[t_rand(seed) % 9]);
	if (t_rand(seed) % 10) {
		char dec[64];
		floe_i128 u = (floe_i128)(int64_t)(t_rand(seed) % 2000001) - 1000000;
		if (t_rand(seed) % 7 == 0)
			u = (floe_i128)(int64_t)(t_rand(seed) % 19999999999ULL) - 9999999999LL;
		floe_decimal_format(dec, sizeof(dec), u, 2);
		PUT("%s\"dec\": \"%s\"", SEP(), dec);
	}
	if (t_rand(seed) % 10)
		PUT("%s\"s\": \"%s\"", SEP(), strings[t_rand(seed) % 12]);
	if (t_rand(seed) % 10) {
		int n = (int)(t_rand(seed) % 6);
		PUT("%s\"bin\": \"", SEP());
		for (int k = 0; k < n; k++)
			PUT("%02x", (unsigned)(t_rand(seed) % 256));
		PUT("\"");
	}
	if (t_rand(seed) % 10) {
		char buf[48];
		floe_format_date(buf, sizeof(buf), (int64_t)(t_rand(seed) % 80001) - 40000);
		PUT("%s\"d\": \"%s\"", SEP(), buf);
	}
	/* instants within ±95 years, µs and ns, often around the epoch */
	int64_t us = (int64_t)(t_rand(seed) % INT64_C(6000000000000000)) - INT64_C(3000000000000000);
	if (row % 3 == 0)
		us = (int64_t)(t_rand(seed) % 20000000) - 10000000;
	char buf[64];
	if (t_rand(seed) % 10) {
		floe_format_timestamp_us(buf, sizeof(buf), us, 6);
		PUT("%s\"ts\": \"%s\"", SEP(), buf);
	}
	if (t_rand(seed) % 10) {
		floe_format_timestamp_us(buf, sizeof(buf), us - 3600000000LL, 6);
		PUT("%s\"tstz\": \"%s+00:00\"", SEP(), buf);
	}
	int64_t ns = us * 1000 + (int64_t)(t_rand(seed) % 1000) - 500;
	if (t_rand(seed) % 10) {
		floe_format_timestamp_ns(buf, sizeof(buf), ns, 9);
		PUT("%s\"tsn\": \"%s\"", SEP(), buf);
	}
	if (t_rand(seed) % 10) {
		floe_format_timestamp_ns(buf, sizeof(buf), -ns, 9);
		PUT("%s\"tsnz\": \"%s+00:00\"", SEP(), buf);
	}
	if (t_rand(seed) % 10) {
		floe_format_time_us(buf, sizeof(buf), (int64_t)(t_rand(seed) % INT64_C(86400000000)),
				    6);
		PUT("%s\"t\": \"%s\"", SEP(), buf);
	}
	if (t_rand(seed) % 10) {
		uint64_t a = t_rand(seed), b = t_rand(seed);
		PUT("%s\"u\": \"%08x-%04x-%04x-%04x-%012llx\"", SEP(), (unsigned)(a >> 32),
		    (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xffff, (unsigned)(b >> 48),
		    (unsigned long long)(b & 0xffffffffffffULL));
	}
	if (t_rand(seed) % 10)
		PUT("%s\"fx\": \"%08x\"", SEP(), (unsigned)(t_rand(seed) % 4));
	if (t_rand(seed) % 10)
		PUT("%s\"b\": %s", SEP(), t_rand(seed) % 2 ? "true" : "false");
	static const char *const floats[] = {"0.0", "-0.0", "1.5", "-2.25", "\"NaN\"",
					     "\"Infinity\"", "\"-Infinity\"", "1e30"};
	if (t_rand(seed) % 10)
		PUT("%s\"f\": %s", SEP(), floats[t_rand(seed) % 8]);
	if (t_rand(seed) % 10)
		PUT("%s\"dbl\": %s", SEP(), floats[t_rand(seed) % 8]);
	uint64_t sr = t_rand(seed) % 10;
	if (sr == 0)
		PUT("%s\"st\": null", SEP());
	else if (sr < 9)
		PUT("%s\"st\": {\"x\": %d, \"y\": \"%s\"}", SEP(), (int)(t_rand(seed) % 5) - 2,
		    strings[t_rand(seed) % 12]);
	PUT("}");
#undef PUT
#undef SEP
}

/* The source value of a field in a JSON row, parsed as Iceberg JSON. */
static void json_source(floe_value *out, floe_arena *a, const floe_schema *s, int32_t id,
			const floe_json *row)
{
	const floe_schema_entry *chain[8];
	int depth = 0;
	for (const floe_schema_entry *x = floe_schema_find(s, id); x && depth < 8;
	     x = x->parent_id ? floe_schema_find(s, x->parent_id) : NULL)
		chain[depth++] = x;
	const floe_json *j = row;
	for (int k = depth - 1; k >= 0 && j; k--)
		j = floe_json_is_null(j) ? NULL : floe_json_get(j, chain[k]->field->name);
	const floe_type *t = chain[0]->type;
	if (j && j->type == FLOE_JSON_STRING && (t->id == FLOE_T_FLOAT || t->id == FLOE_T_DOUBLE)) {
		double d = strcmp(j->s, "NaN") == 0 ? NAN
			   : strcmp(j->s, "Infinity") == 0 ? INFINITY
							    : -INFINITY;
		out->type = t->id;
		out->is_null = false;
		if (t->id == FLOE_T_FLOAT)
			out->v.f32 = (float)d;
		else
			out->v.f64 = d;
		return;
	}
	floe_error err = {0};
	T_OK(floe_value_from_json(out, a, t, j, &err), &err);
}

/* Partition every row with the partitioner; compare with floe_transform_apply. */
static void check_spec(const floe_schema *s, const char *expr, const char *const *rows,
		       floe_json **parsed, size_t n, size_t *groups_out)
{
	floe_arena a;
	floe_partition_spec *spec;
	floe_write__partitioner *p = NULL;
	floe_write__groups g;
	struct ArrowArray b;
	struct ArrowSchema bs;
	floe_error err = {0};
	int32_t lp = 999;
	floe_arena_init(&a, 0);
	T_OK(floe_spec_parse_expr(&spec, &a, expr, s, 0, &lp, &err), &err);
	T_OK(floe_write__partitioner_new(&p, s, spec, &err), &err);
	make_batch(s, rows, n, &b, &bs);
	T_OK(floe_write__partition(p, &g, &b, &bs, &err), &err);
	size_t mismatches = 0, seen = 0;
	bool *hit = calloc(n, 1);
	for (size_t gi = 0; gi < g.n; gi++) {
		const floe_value *tuple = &g.values[gi * g.n_fields];
		/* groups are distinct */
		for (size_t gj = 0; gj < gi; gj++) {
			bool same = true;
			for (size_t k = 0; k < g.n_fields; k++)
				same = same && floe_value_equal(&tuple[k], &g.values[gj * g.n_fields + k]);
			T_CHECK(!same);
		}
		int64_t prev = -1;
		for (int64_t r = g.start[gi]; r < g.start[gi + 1]; r++) {
			int64_t row = g.rows[r];
			T_CHECK(row > prev); /* in row order */
			prev = row;
			T_CHECK(!hit[row]);
			hit[row] = true;
			seen++;
			for (size_t k = 0; k < spec->n_fields; k++) {
				const floe_partition_field *pf = &spec->fields[k];
				const floe_schema_entry *e = floe_schema_find(s, pf->source_id);
				floe_value src, want;
				json_source(&src, &a, s, pf->source_id, parsed[row]);
				T_OK(floe_transform_apply(&want, &pf->transform, e->type, &src, &err),
				     &err);
				if (!floe_value_equal(&want, &tuple[k]) && mismatches++ < 5) {
					floe_buf x, y;
					floe_buf_init(&x, 0);
					floe_buf_init(&y, 0);
					T_OK(floe_transform_human(&x, &pf->transform, e->type, &want),
					     NULL);
					T_OK(floe_transform_human(&y, &pf->transform, e->type, &tuple[k]),
					     NULL);
					t_fail(__FILE__, __LINE__, "%s row %lld field %s: want %s got %s",
					       expr, (long long)row, pf->name, floe_buf_cstr(&x),
					       floe_buf_cstr(&y));
					floe_buf_reset(&x);
					floe_buf_reset(&y);
				}
			}
		}
	}
	T_EQ_INT(seen, n);
	T_EQ_INT(mismatches, 0);
	if (groups_out)
		*groups_out = g.n;
	free(hit);
	floe_arrow_array_release(&b);
	floe_arrow_schema_release(&bs);
	floe_write__partitioner_free(p);
	floe_arena_reset(&a);
}

static void test_partition_every_transform(void)
{
	enum { N = 3000 };
	floe_arena a;
	floe_schema *s;
	floe_error err = {0};
	char **rows = calloc(N, sizeof(char *));
	floe_json **parsed = calloc(N, sizeof(floe_json *));
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	floe_arena_init(&a, 0);
	T_OK(floe_schema_parse_compact(&s, &a, part_cols, &err), &err);
	for (int i = 0; i < N; i++) {
		rows[i] = malloc(2048);
		gen_row(rows[i], 2048, &seed, i);
		T_OK(floe_json_parse(&parsed[i], &a, rows[i], strlen(rows[i]), NULL, &err), &err);
	}
	static const char *const specs[] = {
		"i, l, dec, s, bin, d, ts, tstz, tsn, tsnz, t, u, fx, b, f, dbl, st.x, st.y",
		"bucket(7, i), bucket(7, l), bucket(7, dec), bucket(7, s), bucket(7, bin), "
		"bucket(7, d), bucket(7, ts), bucket(7, tstz), bucket(7, tsn), bucket(7, tsnz), "
		"bucket(7, t), bucket(7, u), bucket(7, fx), bucket(3, st.y)",
		"bucket(1000, l), bucket(1, s)",
		"truncate(3, i), truncate(100, l), truncate(50, dec), truncate(2, s), "
		"truncate(3, bin), truncate(1, st.x)",
		"truncate(1000000000, i), truncate(7, s)",
		"year(d), month(d), day(d), year(ts), month(ts), day(ts), hour(ts), year(tstz), "
		"month(tstz), day(tstz), hour(tstz), year(tsn), month(tsn), day(tsn), hour(tsn), "
		"year(tsnz), month(tsnz), day(tsnz), hour(tsnz)",
		"void(i), void(s), void(ts)",
		"void(l), bucket(16, l), day(ts)",
		"st.x, truncate(1, st.y), hour(tsn)",
	};
	for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
		size_t groups = 0;
		check_spec(s, specs[k], (const char *const *)rows, parsed, N, &groups);
		if (k == 6)
			T_EQ_INT(groups, 1);
		else
			T_CHECK(groups > 1);
	}
	/* a partition source under a list cannot be partitioned on */
	floe_schema *s2;
	floe_partition_spec *sp;
	floe_write__partitioner *p = NULL;
	int32_t lp = 999;
	T_OK(floe_schema_parse_compact(&s2, &a, "id long, v int", &err), &err);
	T_OK(floe_spec_parse_expr(&sp, &a, "bucket(4, id)", s2, 0, &lp, &err), &err);
	sp->fields[0].transform.kind = FLOE_TR_UNKNOWN;
	sp->fields[0].transform.text = "zorder";
	T_ERR(floe_write__partitioner_new(&p, s2, sp, &err), FLOE_EUNSUPPORTED);
	/* a batch whose source column has the wrong Arrow type */
	T_OK(floe_spec_parse_expr(&sp, &a, "bucket(4, v)", s2, 0, &lp, &err), &err);
	T_OK(floe_write__partitioner_new(&p, s2, sp, &err), &err);
	floe_schema *s3;
	T_OK(floe_schema_parse_compact(&s3, &a, "id long, v string", &err), &err);
	const char *r3[] = {"{\"id\": 1, \"v\": \"x\"}"};
	struct ArrowArray b3;
	struct ArrowSchema bs3;
	make_batch(s3, r3, 1, &b3, &bs3);
	floe_write__groups g;
	T_ERR(floe_write__partition(p, &g, &b3, &bs3, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "'v'") != NULL);
	floe_arrow_array_release(&b3);
	floe_arrow_schema_release(&bs3);
	floe_write__partitioner_free(p);
	/* a partition value that cannot be written (Java refuses it): an error
	 * naming the row and the value, never a null or an 11-digit decimal(10, 2) */
	floe_schema *s4;
	T_OK(floe_schema_parse_compact(&s4, &a, "id long, dec decimal(10, 2)", &err), &err);
	T_OK(floe_spec_parse_expr(&sp, &a, "truncate(100, dec)", s4, 0, &lp, &err), &err);
	T_OK(floe_write__partitioner_new(&p, s4, sp, &err), &err);
	const char *r4[] = {"{\"id\": 1, \"dec\": \"-99999998.99\"}",
			    "{\"id\": 2, \"dec\": \"-99999999.99\"}"};
	make_batch(s4, r4, 2, &b3, &bs3);
	T_ERR(floe_write__partition(p, &g, &b3, &bs3, &err), FLOE_EINVAL);
	T_EQ_STR(err.msg, "row 1, partition field 'dec_trunc': truncate[100] of -99999999.99 is "
			  "-100000000.00, which does not fit decimal(10, 2)");
	floe_arrow_array_release(&b3);
	floe_arrow_schema_release(&bs3);
	floe_write__partitioner_free(p);
	for (int i = 0; i < N; i++)
		free(rows[i]);
	free(rows);
	free(parsed);
	floe_arena_reset(&a);
}

/* ---- the task writer --------------------------------------------------------------- */

typedef struct part_check {
	const floe_schema *schema;
	const floe_partition_spec *spec;
	const floe_partition *want;
	int64_t rows, bad;
	int64_t *ids; /* seen ids (column 0 = id long) */
	size_t n_ids;
} part_check;

/* Every row read back belongs to the file's partition. */
static void part_cb(const struct ArrowArray *b, const struct ArrowSchema *bs, void *payload)
{
	part_check *pc = payload;
	floe_arrow_view root;
	floe_error err = {0};
	T_OK(floe_arrow_view_init(&root, bs, b, &err), &err);
	for (size_t k = 0; k < pc->spec->n_fields; k++) {
		const floe_partition_field *pf = &pc->spec->fields[k];
		const floe_schema_entry *e = floe_schema_find(pc->schema, pf->source_id);
		int pos = -1;
		for (size_t j = 0; j < pc->schema->root->n_fields; j++)
			if (pc->schema->root->fields[j].id == e->id)
				pos = (int)j;
		floe_write__source src;
		T_OK(floe_arrow_view_child(&src.view, &root, bs->children[pos], b->children[pos],
					   &err),
		     &err);
		T_OK(floe_write__source_bind(&src, e->type, e->full_name, &err), &err);
		for (int64_t i = 0; i < b->length; i++) {
			floe_value v, r;
			floe_write__source_value(&v, &src, i);
			T_OK(floe_transform_apply(&r, &pf->transform, e->type, &v, &err), &err);
			if (!floe_value_equal(&r, &pc->want->values[k]))
				pc->bad++;
		}
	}
	floe_arrow_view idv;
	T_OK(floe_arrow_view_child(&idv, &root, bs->children[0], b->children[0], &err), &err);
	for (int64_t i = 0; i < b->length; i++)
		pc->ids[pc->n_ids++] = floe_arrow_view_int(&idv, i);
	pc->rows += b->length;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

/* Rows: id = 0..n-1 (unique), the rest generated. */
static void gen_event(char *out, size_t cap, uint64_t *seed, int64_t id, int width)
{
	char pay[256];
	int64_t us = (int64_t)(t_rand(seed) % INT64_C(400000000000)) - INT64_C(200000000000);
	char ts[64];
	floe_format_timestamp_us(ts, sizeof(ts), us, 6);
	int w = width < 250 ? width : 250;
	for (int k = 0; k < w; k++)
		pay[k] = (char)('a' + t_rand(seed) % 26);
	pay[w] = 0;
	snprintf(out, cap,
		 "{\"id\": %lld, \"ts\": \"%s+00:00\", \"s\": \"%s\", \"v\": %d.5, \"k\": %d, "
		 "\"pay\": \"%s\"}",
		 (long long)id, ts, strings[t_rand(seed) % 12], (int)(t_rand(seed) % 1000),
		 (int)(t_rand(seed) % 50), pay);
}

static const char *event_cols = "id long, ts timestamptz, s string, v double, k int, pay string";

typedef struct run_result {
	floe_data_file *files;
	size_t n_files;
	size_t max_buffered;
	floe_task_writer_stats stats;
} run_result;

/* Write n rows in batches through a task writer; complete. */
static void run_writer(floe_table *t, floe_task_writer_opts *o, int64_t n, int64_t batch_rows,
		       int width, floe_arena *a, run_result *res)
{
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	floe_write_config cfg;
	floe_task_writer *tw = NULL;
	floe_error err = {0};
	json_batch *jb = NULL;
	uint64_t seed = 42;
	char row[1024];
	memset(res, 0, sizeof(*res));
	T_OK(floe_write_config_from(&cfg, a, m, &err), &err);
	T_OK(floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, o, &err), &err);
	T_OK(json_batch_new(&jb, s, &err), &err);
	if (!tw || !jb)
		return;
	for (int64_t id = 0; id < n; id++) {
		gen_event(row, sizeof(row), &seed, id, width);
		T_OK(json_batch_append_text(jb, row, strlen(row), &err), &err);
		if (json_batch_rows(jb) == batch_rows || id == n - 1) {
			struct ArrowArray b;
			struct ArrowSchema bs;
			T_OK(json_batch_finish(jb, &b, &bs, &err), &err);
			T_OK(floe_task_writer_write(tw, &b, &bs, &err), &err);
			size_t buf = floe_task_writer_buffered(tw);
			if (buf > res->max_buffered)
				res->max_buffered = buf;
			floe_task_writer_stats st;
			floe_task_writer_get_stats(tw, &st);
			T_CHECK(st.open_files <= (o->max_open_files ? o->max_open_files : 1000));
			floe_arrow_array_release(&b);
			floe_arrow_schema_release(&bs);
		}
	}
	floe_task_writer_get_stats(tw, &res->stats);
	T_OK(floe_task_writer_complete(tw, &res->files, &res->n_files, a, &err), &err);
	floe_task_writer_free(tw);
	json_batch_free(jb);
}

/* Each file holds only its partition's rows; all rows are there once. */
static void check_files(floe_table *t, const run_result *res, int64_t n)
{
	const floe_metadata *m = floe_table_metadata(t);
	part_check pc;
	memset(&pc, 0, sizeof(pc));
	pc.schema = floe_metadata_current_schema(m);
	pc.spec = floe_metadata_default_spec(m);
	pc.ids = malloc(sizeof(int64_t) * (size_t)(n + 1));
	for (size_t i = 0; i < res->n_files; i++) {
		const floe_data_file *f = &res->files[i];
		int64_t before = pc.rows;
		pc.want = &f->partition;
		T_EQ_INT(f->partition.n, pc.spec->n_fields);
		T_EQ_INT(scan_file(floe_table_io(t), f->file_path, part_cb, &pc) , f->record_count);
		T_EQ_INT(pc.rows - before, f->record_count);
		/* the path carries the partition path */
		if (!floe_spec_is_unpartitioned(pc.spec)) {
			floe_buf pp;
			floe_buf_init(&pp, 0);
			T_OK(floe_partition_path(&pp, pc.spec, pc.schema, &f->partition), NULL);
			T_CHECK(strstr(f->file_path, floe_buf_cstr(&pp)) != NULL);
			floe_buf_reset(&pp);
		}
	}
	T_EQ_INT(pc.bad, 0);
	T_EQ_INT(pc.rows, n);
	qsort(pc.ids, pc.n_ids, sizeof(int64_t), cmp_i64);
	for (size_t i = 0; i < pc.n_ids; i++)
		if (pc.ids[i] != (int64_t)i) {
			t_fail(__FILE__, __LINE__, "row id %lld missing or doubled", (long long)i);
			break;
		}
	free(pc.ids);
}

static void test_fanout(void)
{
	wenv e;
	floe_arena a;
	run_result res;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "fan", event_cols, "bucket(4, id), day(ts), truncate(2, s)",
				   NULL, 2);
	o.operation_id = "11111111-2222-3333-4444-555555555555";
	o.partition_id = 3;
	o.task_id = 7;
	run_writer(t, &o, 20000, 4096, 8, &a, &res);
	T_CHECK(res.n_files > 50);
	T_EQ_INT(res.stats.rows, 20000);
	T_EQ_INT(res.stats.evictions, 0);
	check_files(t, &res, 20000);
	/* Java's names: <data>/<partition path>/00003-7-<op>-00001.parquet ... */
	bool names_ok = true;
	for (size_t i = 0; i < res.n_files; i++) {
		const char *f = res.files[i].file_path;
		const char *base = strrchr(f, '/') + 1;
		names_ok = names_ok && strncmp(f, "mem://wh/db/fan/data/id_bucket=", 31) == 0 &&
			   strncmp(base, "00003-7-11111111-2222-3333-4444-555555555555-", 45) == 0 &&
			   strlen(base) == 45 + 5 + 8;
	}
	T_CHECK(names_ok);
	floe_free(res.files);
	floe_table_free(t);

	/* unpartitioned and void-only specs: one file, no partition path */
	t = make_table(&e, "flat", event_cols, "void(k)", NULL, 1);
	run_writer(t, &o, 5000, 1000, 8, &a, &res);
	T_EQ_INT(res.n_files, 1);
	T_EQ_STR(res.files[0].file_path, "mem://wh/db/flat/data/"
					 "00003-7-11111111-2222-3333-4444-555555555555-00001.parquet");
	T_EQ_INT(res.files[0].partition.n, 1);
	T_CHECK(res.files[0].partition.values[0].is_null);
	check_files(t, &res, 5000);
	floe_free(res.files);
	floe_table_free(t);
	t = make_table(&e, "plain", event_cols, NULL, NULL, 2);
	run_writer(t, &o, 3000, 1000, 8, &a, &res);
	T_EQ_INT(res.n_files, 1);
	T_EQ_INT(res.files[0].partition.n, 0);
	T_EQ_STR(res.files[0].file_path, "mem://wh/db/plain/data/"
					 "00003-7-11111111-2222-3333-4444-555555555555-00001.parquet");
	check_files(t, &res, 3000);
	floe_free(res.files);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* Small target: several files per partition, each close to the target. */
static void test_rolling(void)
{
	wenv e;
	floe_arena a;
	run_result res;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	static const char *const props[] = {"write.target-file-size-bytes", "131072",
					    "write.parquet.page-size-bytes", "8192", NULL};
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "roll", event_cols, "bucket(2, id)", props, 2);
	run_writer(t, &o, 30000, 5000, 60, &a, &res);
	int per_part[2] = {0, 0};
	int64_t total = 0, max_size = 0, min_full = INT64_MAX;
	for (size_t i = 0; i < res.n_files; i++) {
		const floe_data_file *f = &res.files[i];
		per_part[f->partition.values[0].v.i32]++;
		total += f->file_size_in_bytes;
		if (f->file_size_in_bytes > max_size)
			max_size = f->file_size_in_bytes;
	}
	/* files of a partition, but the last one of each, are "full" */
	for (int pv = 0; pv < 2; pv++) {
		int seen = 0;
		for (size_t i = 0; i < res.n_files; i++) {
			const floe_data_file *f = &res.files[i];
			if (f->partition.values[0].v.i32 != pv || ++seen == per_part[pv])
				continue;
			if (f->file_size_in_bytes < min_full)
				min_full = f->file_size_in_bytes;
		}
	}
	printf("  rolling: %zu files (%d + %d), %lld bytes, full files %lld..%lld bytes "
	       "(target 131072)\n",
	       res.n_files, per_part[0], per_part[1], (long long)total, (long long)min_full,
	       (long long)max_size);
	T_CHECK(per_part[0] >= 4 && per_part[1] >= 4);
	T_CHECK(max_size <= 131072 * 5 / 4);
	T_CHECK(min_full >= 131072 * 3 / 4);
	check_files(t, &res, 30000);
	floe_free(res.files);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* Many partitions under a small budget: row groups end early, memory stays
 * near the limit; without pressure it would grow far past it. */
static void test_budget(void)
{
	wenv e;
	floe_arena a;
	run_result res, free_run;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "budget", event_cols, "bucket(64, id)", NULL, 2);
	o.budget_bytes = 4 << 20;
	run_writer(t, &o, 40000, 4000, 120, &a, &res);
	printf("  budget 4 MiB: peak buffered %zu, %lld flushes, %zu files\n", res.max_buffered,
	       (long long)res.stats.budget_flushes, res.n_files);
	T_CHECK(res.stats.budget_flushes > 0);
	T_CHECK(res.max_buffered <= (size_t)(4 << 20) + (2 << 20));
	T_EQ_INT(res.n_files, 64);
	check_files(t, &res, 40000);
	bool several_row_groups = false;
	for (size_t i = 0; i < res.n_files; i++)
		several_row_groups |= res.files[i].n_split_offsets > 1;
	T_CHECK(several_row_groups);
	floe_free(res.files);

	o.budget_bytes = (uint64_t)1 << 30;
	run_writer(t, &o, 40000, 4000, 120, &a, &free_run);
	printf("  budget 1 GiB: peak buffered %zu, %lld flushes\n", free_run.max_buffered,
	       (long long)free_run.stats.budget_flushes);
	T_EQ_INT(free_run.stats.budget_flushes, 0);
	T_CHECK(free_run.max_buffered > res.max_buffered);
	floe_free(free_run.files);

	/* a shared budget without a callback: the writer flushes its own largest */
	floe_parquet_budget *shared = NULL;
	T_OK(floe_parquet_budget_new(&shared, 4 << 20, NULL, NULL), NULL);
	o.budget = shared;
	run_writer(t, &o, 40000, 4000, 120, &a, &res);
	printf("  shared 4 MiB: peak buffered %zu, %lld flushes\n", res.max_buffered,
	       (long long)res.stats.budget_flushes);
	T_CHECK(res.max_buffered <= (size_t)(4 << 20) + (2 << 20));
	T_EQ_INT(floe_parquet_budget_used(shared), 0);
	check_files(t, &res, 40000);
	floe_free(res.files);
	floe_parquet_budget_free(shared);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* At most max_open_files open; the largest is finished to make room. */
static void test_max_open_files(void)
{
	wenv e;
	floe_arena a;
	run_result res;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "maxopen", event_cols, "k", NULL, 2);
	o.max_open_files = 8;
	run_writer(t, &o, 20000, 2000, 8, &a, &res);
	T_CHECK(res.stats.evictions > 0);
	T_CHECK(res.n_files > 50);
	check_files(t, &res, 20000);
	floe_free(res.files);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

static int64_t write_some(floe_task_writer *tw, const floe_schema *s, int64_t from, int64_t n,
			  floe_error *err)
{
	json_batch *jb = NULL;
	uint64_t seed = (uint64_t)from + 1;
	char row[1024];
	int rc = 0;
	T_OK(json_batch_new(&jb, s, err), err);
	for (int64_t id = from; id < from + n; id++) {
		gen_event(row, sizeof(row), &seed, id, 40);
		T_OK(json_batch_append_text(jb, row, strlen(row), err), err);
	}
	struct ArrowArray b;
	struct ArrowSchema bs;
	T_OK(json_batch_finish(jb, &b, &bs, err), err);
	rc = floe_task_writer_write(tw, &b, &bs, err);
	floe_arrow_array_release(&b);
	floe_arrow_schema_release(&bs);
	json_batch_free(jb);
	return rc;
}

/* Abort deletes open files and rolled ones; injected failures leave nothing. */
static void test_abort_and_faults(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_task_writer *tw = NULL;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	floe_error err = {0};
	static const char *const props[] = {"write.target-file-size-bytes", "32768", NULL};
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "abort", event_cols, "bucket(3, id)", props, 2);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);

	/* rolled files and open ones, then abort */
	T_OK(floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &o, &err), &err);
	T_OK(write_some(tw, s, 0, 5000, &err), &err);
	T_OK(write_some(tw, s, 5000, 30, &err), &err);
	floe_task_writer_stats st;
	floe_task_writer_get_stats(tw, &st);
	printf("  abort: %lld finished, %zu open\n", (long long)st.files_finished, st.open_files);
	T_CHECK(st.files_finished > 0 && st.open_files > 0);
	T_CHECK(count_files(e.mem, "mem://wh/db/abort/data") > 0);
	floe_task_writer_abort(tw);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/abort/data"), 0);
	floe_task_writer_abort(NULL);
	floe_task_writer_free(NULL);

	/* fail the n-th close (publish) for n = 1..6: the error surfaces from
	 * write or complete, and abort leaves nothing */
	for (int nth = 1; nth <= 6; nth++) {
		floe_data_file *files = NULL;
		size_t n_files = 0;
		T_OK(floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &o, &err), &err);
		floe_io_memory_fail(e.mem, "close", nth, FLOE_EIO);
		int rc = write_some(tw, s, 0, 5000, &err);
		if (rc == 0)
			rc = floe_task_writer_complete(tw, &files, &n_files, &a, &err);
		T_EQ_INT(rc, FLOE_EIO);
		/* a failed writer refuses more work */
		T_ERR(write_some(tw, s, 0, 10, &err), FLOE_EINVAL);
		floe_task_writer_abort(tw);
		floe_io_memory_fail(e.mem, "close", 0, 0);
		T_EQ_INT(count_files(e.mem, "mem://wh/db/abort/data"), 0);
		floe_free(files);
	}
	/* create fails */
	T_OK(floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &o, &err), &err);
	floe_io_memory_fail(e.mem, "create", 2, FLOE_EIO);
	T_ERR(write_some(tw, s, 0, 5000, &err), FLOE_EIO);
	floe_io_memory_fail(e.mem, "create", 0, 0);
	floe_task_writer_abort(tw);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/abort/data"), 0);

	/* a batch that does not fit the schema */
	T_OK(floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &o, &err), &err);
	floe_schema *other;
	T_OK(floe_schema_parse_compact(&other, &a, "id long", &err), &err);
	const char *r1[] = {"{\"id\": 1}"};
	struct ArrowArray b;
	struct ArrowSchema bs;
	make_batch(other, r1, 1, &b, &bs);
	T_ERR(floe_task_writer_write(tw, &b, &bs, &err), FLOE_EINVAL);
	floe_arrow_array_release(&b);
	floe_arrow_schema_release(&bs);
	floe_task_writer_abort(tw);

	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* complete() hands files out and keeps going: names continue, earlier files stay. */
static void test_checkpoints(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_task_writer *tw = NULL;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	floe_error err = {0};
	floe_data_file *files = NULL;
	size_t n_files = 0;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "ckpt", event_cols, "bucket(2, id)", NULL, 2);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	o.operation_id = "op";
	T_OK(floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &o, &err), &err);
	T_OK(floe_task_writer_complete(tw, &files, &n_files, &a, &err), &err);
	T_EQ_INT(n_files, 0);
	T_OK(write_some(tw, s, 0, 1000, &err), &err);
	T_OK(floe_task_writer_complete(tw, &files, &n_files, &a, &err), &err);
	T_EQ_INT(n_files, 2);
	T_OK(write_some(tw, s, 1000, 1000, &err), &err);
	T_OK(floe_task_writer_complete(tw, &files, &n_files, &a, &err), &err);
	T_EQ_INT(n_files, 4);
	int64_t rows = 0;
	for (size_t i = 0; i < n_files; i++) {
		char want[48];
		snprintf(want, sizeof(want), "-%05d.parquet", (int)i + 1);
		bool found = false;
		for (size_t j = 0; j < n_files; j++)
			found |= floe_str_endswith(files[j].file_path, want);
		T_CHECK(found);
		rows += files[i].record_count;
		T_CHECK(floe_io_exists(floe_table_io(t), files[i].file_path));
	}
	T_EQ_INT(rows, 2000);
	floe_task_writer_free(tw);
	/* files handed out are the caller's: free() leaves them */
	T_EQ_INT(count_files(e.mem, "mem://wh/db/ckpt/data"), 4);
	floe_free(files);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* Commit the files to a table in a SQLite catalog on local disk and read
 * the table's files back through its manifests. */
typedef struct walk_acc {
	int64_t files, rows;
	int64_t with_bounds;
} walk_acc;

static int walk_cb(const floe_manifest_entry *en, const floe_manifest_file *mf, void *payload)
{
	walk_acc *w = payload;
	(void)mf;
	w->files++;
	w->rows += en->file.record_count;
	w->with_bounds += en->file.n_lower_bounds > 0 && en->file.n_value_counts > 0;
	return 0;
}

static void test_commit(void)
{
	wenv e;
	floe_arena a;
	run_result res;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	floe_error err = {0};
	floe_append *ap = NULL;
	int64_t snap = -1;
	env_open(&e, true);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "events", event_cols, "bucket(4, id), hour(ts)", NULL, 2);
	run_writer(t, &o, 10000, 2500, 16, &a, &res);
	T_CHECK(res.n_files > 4);
	T_CHECK(strncmp(res.files[0].file_path, "file://", 7) == 0);
	T_OK(floe_append_new(&ap, t, NULL, &err), &err);
	for (size_t i = 0; i < res.n_files; i++)
		T_OK(floe_append_add_file(ap, &res.files[i], &err), &err);
	T_OK(floe_append_commit(ap, &snap, &err), &err);
	floe_append_free(ap);
	T_CHECK(snap > 0);
	floe_table_free(t);

	T_OK(floe_table_load(&t, e.cat, "db", "events", &err), &err);
	walk_acc w = {0};
	T_OK(floe_table_walk(t, NULL, FLOE_WALK_DATA, walk_cb, &w, &err), &err);
	T_EQ_INT(w.files, (int64_t)res.n_files);
	T_EQ_INT(w.rows, 10000);
	T_EQ_INT(w.with_bounds, (int64_t)res.n_files);
	check_files(t, &res, 10000);
	floe_free(res.files);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

int main(void)
{
	T_RUN(test_partition_every_transform);
	T_RUN(test_fanout);
	T_RUN(test_rolling);
	T_RUN(test_budget);
	T_RUN(test_max_open_files);
	T_RUN(test_abort_and_faults);
	T_RUN(test_checkpoints);
	T_RUN(test_commit);
	return t_finish();
}
