/*
 * test_write.c — the write layer's configuration, file locations (default
 * and object-storage layouts, checked against PyIceberg's), and the data
 * writer: every column type written and read back by floe's Parquet
 * reader, the manifest entry's metrics compared with values recomputed from
 * the rows read back and with the footer-based metrics of add-files, the
 * metrics rules (modes, code-point truncation, no upper bound when it
 * cannot be incremented, NaN, -0.0/+0.0, minimal decimals, 4-byte ints,
 * nothing inside lists and maps), unknown columns, and abort.
 */
#include <math.h>

#include "iceberg/metrics.h"
#include "parquet/pjson.h"
#include "test_write_util.h"

/* ---- configuration ------------------------------------------------------------- */

static void test_config(void)
{
	wenv e;
	floe_write_config cfg;
	floe_error err = {0};
	floe_arena a;
	env_open(&e, false);
	floe_arena_init(&a, 0);

	floe_table *t = make_table(&e, "defaults", "id long", NULL, NULL, 2);
	T_OK(floe_write_config_from(&cfg, &a, floe_table_metadata(t), &err), &err);
	T_EQ_INT(cfg.target_file_size, 536870912);
	T_EQ_INT(cfg.delete_target_file_size, 67108864);
	T_EQ_INT(cfg.parquet.codec, FLOE_PARQUET_ZSTD);
	T_EQ_INT(cfg.parquet.level, 0);
	T_EQ_INT(cfg.parquet.row_group_bytes, 134217728);
	T_EQ_INT(cfg.parquet.row_group_rows, 0);
	T_EQ_INT(cfg.parquet.page_bytes, 1048576);
	T_EQ_INT(cfg.parquet.page_rows, 20000);
	T_EQ_INT(cfg.parquet.dict_bytes, 2097152);
	T_EQ_INT(cfg.parquet.page_version, 1);
	T_CHECK(!cfg.object_storage);
	T_CHECK(cfg.object_storage_partitioned_paths);
	T_EQ_INT(cfg.format_version, 2);
	T_EQ_STR(cfg.data_path, "mem://wh/db/defaults/data");
	floe_table_free(t);

	static const char *const props[] = {
		"write.target-file-size-bytes", "1000",
		"write.parquet.compression-codec", "SNAPPY",
		"write.parquet.compression-level", "5",
		"write.parquet.row-group-size-bytes", "4096",
		"write.parquet.row-group-limit", "100",
		"write.parquet.page-size-bytes", "512",
		"write.parquet.page-row-limit", "50",
		"write.parquet.dict-size-bytes", "0",
		"write.parquet.page-version", "v2",
		"write.folder-storage.path", "mem://elsewhere/old/",
		"write.object-storage.enabled", "true",
		"write.object-storage.partitioned-paths", "false",
		NULL};
	t = make_table(&e, "custom", "id long", NULL, props, 1);
	T_OK(floe_write_config_from(&cfg, &a, floe_table_metadata(t), &err), &err);
	T_EQ_INT(cfg.target_file_size, 1000);
	T_EQ_INT(cfg.parquet.codec, FLOE_PARQUET_SNAPPY);
	T_EQ_INT(cfg.parquet.level, 5);
	T_EQ_INT(cfg.parquet.row_group_bytes, 4096);
	T_EQ_INT(cfg.parquet.row_group_rows, 100);
	T_EQ_INT(cfg.parquet.page_bytes, 512);
	T_EQ_INT(cfg.parquet.page_rows, 50);
	T_EQ_INT(cfg.parquet.dict_bytes, 0);
	T_EQ_INT(cfg.parquet.page_version, 2);
	T_EQ_INT(cfg.format_version, 1);
	T_CHECK(cfg.object_storage);
	T_CHECK(!cfg.object_storage_partitioned_paths);
	/* the deprecated folder-storage path, trailing slash dropped */
	T_EQ_STR(cfg.data_path, "mem://elsewhere/old");
	floe_table_free(t);

	/* precedence: write.data.path over the deprecated ones */
	static const char *const props2[] = {"write.data.path", "mem://new/data/",
					     "write.object-storage.path", "mem://obj",
					     "write.folder-storage.path", "mem://folder", NULL};
	t = make_table(&e, "paths", "id long", NULL, props2, 2);
	T_OK(floe_write_config_from(&cfg, &a, floe_table_metadata(t), &err), &err);
	T_EQ_STR(cfg.data_path, "mem://new/data");
	floe_table_free(t);
	static const char *const props3[] = {"write.object-storage.enabled", "true",
					     "write.object-storage.path", "mem://obj",
					     "write.folder-storage.path", "mem://folder", NULL};
	t = make_table(&e, "paths3", "id long", NULL, props3, 2);
	T_OK(floe_write_config_from(&cfg, &a, floe_table_metadata(t), &err), &err);
	T_EQ_STR(cfg.data_path, "mem://obj");
	floe_table_free(t);

	/* every codec name; lz4 is LZ4_RAW as pyarrow writes it */
	static const struct {
		const char *name;
		int codec;
	} codecs[] = {{"zstd", FLOE_PARQUET_ZSTD},	     {"gzip", FLOE_PARQUET_GZIP},
		      {"brotli", FLOE_PARQUET_BROTLI},	     {"lz4", FLOE_PARQUET_LZ4_RAW},
		      {"uncompressed", FLOE_PARQUET_UNCOMPRESSED}, {"snappy", FLOE_PARQUET_SNAPPY}};
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++) {
		char name[32];
		const char *p[] = {"write.parquet.compression-codec", codecs[i].name, NULL};
		snprintf(name, sizeof(name), "codec%zu", i);
		t = make_table(&e, name, "id long", NULL, p, 2);
		T_OK(floe_write_config_from(&cfg, &a, floe_table_metadata(t), &err), &err);
		T_EQ_INT(cfg.parquet.codec, codecs[i].codec);
		floe_table_free(t);
	}

	/* bad values name the property */
	static const char *const bad[][2] = {
		{"write.parquet.compression-codec", "zip"},
		{"write.target-file-size-bytes", "12x"},
		{"write.target-file-size-bytes", "0"},
		{"write.parquet.page-version", "v3"},
		{"write.object-storage.enabled", "yes"},
		{"write.parquet.row-group-size-bytes", "-5"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "bad%zu", i);
		/* refused at creation, before anything is written */
		floe_table_create_opts o = FLOE_TABLE_CREATE_OPTS_INIT;
		floe_prop pr = {bad[i][0], bad[i][1]};
		o.schema = "id long";
		o.properties = &pr;
		o.n_properties = 1;
		t = NULL;
		T_ERR(floe_table_create(&t, e.cat, "db", name, &o, &err), FLOE_EINVAL);
		T_CHECK(strstr(err.msg, bad[i][0]) != NULL);
		T_CHECK(t == NULL);
		/* and by the writer when another engine stored it */
		t = make_table(&e, name, "id long", NULL, NULL, 2);
		floe_metadata_builder *b = NULL;
		floe_metadata *m2 = NULL;
		floe_strmap sm;
		floe_strmap_init(&sm);
		T_CHECK(floe_strmap_set(&sm, bad[i][0], bad[i][1]) == 0);
		T_OK(floe_metadata_builder_from(&b, floe_table_metadata(t), &err), &err);
		T_OK(floe_mb_set_properties(b, &sm, &err), &err);
		T_OK(floe_metadata_builder_finish(&m2, b, NULL, 0, &err), &err);
		T_ERR(floe_write_config_from(&cfg, &a, m2, &err), FLOE_EINVAL);
		T_CHECK(strstr(err.msg, bad[i][0]) != NULL);
		floe_metadata_free(m2);
		floe_strmap_reset(&sm);
		floe_table_free(t);
	}
	/* a format floe does not write is refused, not stored and ignored */
	{
		floe_table_create_opts o = FLOE_TABLE_CREATE_OPTS_INIT;
		floe_prop pr = {"write.format.default", "orc"};
		o.schema = "id long";
		o.properties = &pr;
		o.n_properties = 1;
		t = NULL;
		T_ERR(floe_table_create(&t, e.cat, "db", "orc", &o, &err), FLOE_EUNSUPPORTED);
		T_CHECK(strstr(err.msg, "write.format.default") != NULL);
		pr.value = "PARQUET";
		T_OK(floe_table_create(&t, e.cat, "db", "pq", &o, &err), &err);
		floe_table_free(t);
	}
	floe_arena_reset(&a);
	env_close(&e);
}

/* Locations as PyIceberg 0.12's location providers compute them (the
 * expected strings come from pyiceberg.table.locations). */
static void test_locations(void)
{
	floe_write_config cfg;
	floe_buf b;
	floe_arena a;
	floe_schema *s;
	floe_partition_spec *spec;
	floe_error err = {0};
	int32_t lp = 999;
	const char *name = "00000-0-5c3c8b8e-1f5b-4d6e-9a3a-2b1c0d9e8f7a-00001.parquet";
	floe_arena_init(&a, 0);
	floe_buf_init(&b, 0);
	memset(&cfg, 0, sizeof(cfg));

	/* the partition path of ("eu west/1", day 17486) */
	T_OK(floe_schema_parse_compact(&s, &a, "region string, ts date", &err), &err);
	T_OK(floe_spec_parse_expr(&spec, &a, "region, day(ts)", s, 0, &lp, &err), &err);
	floe_value vals[2] = {{.type = FLOE_T_STRING}, {.type = FLOE_T_DATE}};
	vals[0].v.bin.p = (const uint8_t *)"eu west/1";
	vals[0].v.bin.n = 9;
	vals[1].v.i32 = 17486;
	floe_partition p = {vals, 2};
	T_OK(floe_partition_path(&b, spec, s, &p), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "region=eu+west%2F1/ts_day=2017-11-16");
	char part[128];
	snprintf(part, sizeof(part), "%s", floe_buf_cstr(&b));

	cfg.data_path = "s3://bucket/wh/db/t/data";
	floe_buf_clear(&b);
	T_OK(floe_write_location(&b, &cfg, part, name), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "s3://bucket/wh/db/t/data/region=eu+west%2F1/ts_day=2017-11-16/"
				    "00000-0-5c3c8b8e-1f5b-4d6e-9a3a-2b1c0d9e8f7a-00001.parquet");
	floe_buf_clear(&b);
	T_OK(floe_write_location(&b, &cfg, NULL, name), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "s3://bucket/wh/db/t/data/"
				    "00000-0-5c3c8b8e-1f5b-4d6e-9a3a-2b1c0d9e8f7a-00001.parquet");

	cfg.object_storage = true;
	cfg.object_storage_partitioned_paths = true;
	floe_buf_clear(&b);
	T_OK(floe_write_location(&b, &cfg, part, name), NULL);
	T_EQ_STR(floe_buf_cstr(&b),
		 "s3://bucket/wh/db/t/data/0110/0011/1001/01111101/region=eu+west%2F1/"
		 "ts_day=2017-11-16/00000-0-5c3c8b8e-1f5b-4d6e-9a3a-2b1c0d9e8f7a-00001.parquet");
	floe_buf_clear(&b);
	T_OK(floe_write_location(&b, &cfg, "", name), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "s3://bucket/wh/db/t/data/0101/1111/0100/00001101/"
				    "00000-0-5c3c8b8e-1f5b-4d6e-9a3a-2b1c0d9e8f7a-00001.parquet");
	cfg.object_storage_partitioned_paths = false;
	floe_buf_clear(&b);
	T_OK(floe_write_location(&b, &cfg, part, name), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "s3://bucket/wh/db/t/data/0101/1111/0100/00001101-"
				    "00000-0-5c3c8b8e-1f5b-4d6e-9a3a-2b1c0d9e8f7a-00001.parquet");
	floe_buf_reset(&b);
	floe_arena_reset(&a);
}

/* ---- the data writer ------------------------------------------------------------ */

static const char *all_cols =
	"b boolean, i int not null, l long, f float, d double, dec decimal(9,2), dec18 "
	"decimal(18,4), dec38 decimal(38,10), dt date, tm time, ts timestamp, tstz timestamptz, "
	"ts_ns timestamp_ns, tstz_ns timestamptz_ns, s string, u uuid, fx fixed[3], bin binary, "
	"st struct<a: int, b: string>, ls list<string>, m map<string, double>";

/* Values recomputed from the rows read back: per top-level primitive
 * column and struct field, counts and min/max (NaN and nulls excluded). */
typedef struct col_acc {
	int32_t id;
	const floe_type *type;
	int64_t values, nulls, nans;
	bool has;
	floe_value lo, hi;
	floe_arena *a;
} col_acc;

typedef struct acc_set {
	const floe_schema *schema;
	col_acc cols[64];
	size_t n;
	floe_arena a;
} acc_set;

static void acc_value(col_acc *c, const floe_value *v)
{
	c->values++;
	if (v->is_null) {
		c->nulls++;
		return;
	}
	if ((v->type == FLOE_T_FLOAT && isnan(v->v.f32)) ||
	    (v->type == FLOE_T_DOUBLE && isnan(v->v.f64))) {
		c->nans++;
		return;
	}
	if (!c->has || floe_value_compare(v, &c->lo) < 0) {
		c->lo = *v;
		T_OK(floe_value_own(&c->lo, c->a), NULL);
	}
	if (!c->has || floe_value_compare(v, &c->hi) > 0) {
		c->hi = *v;
		T_OK(floe_value_own(&c->hi, c->a), NULL);
	}
	c->has = true;
}

static col_acc *acc_for(acc_set *s, int32_t id, const floe_type *t)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->cols[i].id == id)
			return &s->cols[i];
	col_acc *c = &s->cols[s->n++];
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->type = t;
	c->a = &s->a;
	return c;
}

static void acc_column(acc_set *s, const floe_field *f, const floe_arrow_view *v, int64_t n)
{
	floe_error err = {0};
	if (f->type->id == FLOE_T_STRUCT) {
		/* handled by the caller through child views */
		return;
	}
	if (!floe_type_is_primitive(f->type) || f->type->id == FLOE_T_UNKNOWN)
		return;
	floe_write__source src;
	src.view = *v;
	T_OK(floe_write__source_bind(&src, f->type, f->name, &err), &err);
	col_acc *c = acc_for(s, f->id, f->type);
	for (int64_t i = 0; i < n; i++) {
		floe_value x;
		floe_write__source_value(&x, &src, i);
		acc_value(c, &x);
	}
}

static void acc_batch(const struct ArrowArray *b, const struct ArrowSchema *bs, void *payload)
{
	acc_set *s = payload;
	floe_arrow_view root;
	floe_error err = {0};
	const floe_type *rt = s->schema->root;
	T_OK(floe_arrow_view_init(&root, bs, b, &err), &err);
	/* the file holds the written fields in schema order */
	int64_t k = 0;
	for (size_t i = 0; i < rt->n_fields && k < bs->n_children; i++) {
		const floe_field *f = &rt->fields[i];
		floe_arrow_view v;
		if (f->type->id == FLOE_T_UNKNOWN)
			continue;
		T_OK(floe_arrow_view_child(&v, &root, bs->children[k], b->children[k], &err), &err);
		if (f->type->id == FLOE_T_STRUCT) {
			for (size_t j = 0; j < f->type->n_fields; j++) {
				floe_arrow_view cv;
				T_OK(floe_arrow_view_child(&cv, &v, bs->children[k]->children[j],
							   b->children[k]->children[j], &err),
				     &err);
				acc_column(s, &f->type->fields[j], &cv, b->length);
			}
		} else {
			acc_column(s, f, &v, b->length);
		}
		k++;
	}
}

/* The entry's metrics must be what the rows say, under the mode. */
static void check_metrics(const floe_data_file *df, acc_set *s, const floe_metadata *m,
			  const floe_schema *schema)
{
	floe_arena a;
	floe_arena_init(&a, 0);
	for (size_t i = 0; i < s->n; i++) {
		col_acc *c = &s->cols[i];
		floe_metrics_mode mode = floe_metrics_mode_for(m, schema, c->id);
		const floe_id_long *vc = find_long(df->value_counts, df->n_value_counts, c->id);
		const floe_id_long *nc =
			find_long(df->null_value_counts, df->n_null_value_counts, c->id);
		const floe_id_long *nan = find_long(df->nan_value_counts, df->n_nan_value_counts, c->id);
		const floe_id_long *cs = find_long(df->column_sizes, df->n_column_sizes, c->id);
		const floe_id_bytes *lo = find_bound(df->lower_bounds, df->n_lower_bounds, c->id);
		const floe_id_bytes *hi = find_bound(df->upper_bounds, df->n_upper_bounds, c->id);
		if (mode.kind == FLOE_METRICS_NONE) {
			T_CHECK(!vc && !nc && !nan && !cs && !lo && !hi);
			continue;
		}
		T_CHECK(vc && nc && cs);
		if (!vc || !nc || !cs)
			continue;
		T_EQ_INT(vc->value, c->values);
		T_EQ_INT(nc->value, c->nulls);
		T_CHECK(cs->value > 0);
		if (c->type->id == FLOE_T_FLOAT || c->type->id == FLOE_T_DOUBLE) {
			T_CHECK(nan && nan->value == c->nans);
		} else {
			T_CHECK(!nan);
		}
		if (mode.kind == FLOE_METRICS_COUNTS || !c->has) {
			T_CHECK(!lo && !hi);
			continue;
		}
		floe_id_bytes want_lo, want_hi;
		size_t nwl = 0, nwh = 0;
		T_OK(floe_metrics_bounds(&want_lo, &nwl, &want_hi, &nwh, &a, c->id, &c->lo, &c->hi,
					 mode),
		     NULL);
		bool wl = nwl == 1, wh = nwh == 1;
		T_CHECK(wl == (lo != NULL));
		T_CHECK(wh == (hi != NULL));
		if (wl && lo) {
			T_EQ_INT(lo->n, want_lo.n);
			if (lo->n == want_lo.n && memcmp(lo->p, want_lo.p, lo->n) != 0)
				t_fail(__FILE__, __LINE__, "lower bound of %d differs", c->id);
		}
		if (wh && hi) {
			T_EQ_INT(hi->n, want_hi.n);
			if (hi->n == want_hi.n && memcmp(hi->p, want_hi.p, hi->n) != 0)
				t_fail(__FILE__, __LINE__, "upper bound of %d differs", c->id);
		}
	}
	floe_arena_reset(&a);
}

/* The footer-based metrics of add-files agree with the writer's. */
static void check_against_footer(floe_fileio *io, const floe_data_file *df, const floe_metadata *m)
{
	floe_input *in = NULL;
	floe_data_file f2;
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 0);
	T_OK(floe_io_open_read(io, df->file_path, &in, &err), &err);
	if (!in)
		return;
	T_EQ_INT((int64_t)in->size, df->file_size_in_bytes);
	const floe_partition_spec *spec = floe_metadata_default_spec(m);
	if (floe_spec_is_unpartitioned(spec)) {
		T_OK(floe_parquet_data_file(&f2, &a, in, df->file_path, m, spec, &err), &err);
		T_EQ_INT(f2.record_count, df->record_count);
		T_EQ_INT(f2.n_value_counts, df->n_value_counts);
		T_EQ_INT(f2.n_lower_bounds, df->n_lower_bounds);
		T_EQ_INT(f2.n_upper_bounds, df->n_upper_bounds);
		T_EQ_INT(f2.n_split_offsets, df->n_split_offsets);
		for (size_t i = 0; i < f2.n_split_offsets && i < df->n_split_offsets; i++)
			T_EQ_INT(f2.split_offsets[i], df->split_offsets[i]);
		for (size_t i = 0; i < f2.n_column_sizes; i++) {
			const floe_id_long *x = find_long(df->column_sizes, df->n_column_sizes,
							  f2.column_sizes[i].id);
			T_CHECK(x && x->value == f2.column_sizes[i].value);
			x = find_long(df->null_value_counts, df->n_null_value_counts,
				      f2.null_value_counts[i].id);
			T_CHECK(x && x->value == f2.null_value_counts[i].value);
		}
		for (size_t i = 0; i < f2.n_lower_bounds; i++) {
			const floe_id_bytes *x = find_bound(df->lower_bounds, df->n_lower_bounds,
							    f2.lower_bounds[i].id);
			T_CHECK(x && x->n == f2.lower_bounds[i].n &&
				memcmp(x->p, f2.lower_bounds[i].p, x->n) == 0);
		}
		for (size_t i = 0; i < f2.n_upper_bounds; i++) {
			const floe_id_bytes *x = find_bound(df->upper_bounds, df->n_upper_bounds,
							    f2.upper_bounds[i].id);
			T_CHECK(x && x->n == f2.upper_bounds[i].n &&
				memcmp(x->p, f2.upper_bounds[i].p, x->n) == 0);
		}
	}
	floe_input_close(in);
	floe_arena_reset(&a);
}

static const char *data_rows[] = {
	"{\"b\": true, \"i\": -1, \"l\": 9223372036854775807, \"f\": -0.0, \"d\": \"NaN\", \"dec\": "
	"\"-1.25\", \"dec18\": \"12345678901234.5678\", \"dec38\": "
	"\"-1234567890123456789012345678.0123456789\", \"dt\": \"1969-12-31\", \"tm\": "
	"\"00:00:00.000001\", \"ts\": \"1969-12-31T23:59:59.999999\", \"tstz\": "
	"\"2017-11-16T22:31:08+00:00\", \"ts_ns\": \"1960-01-01T00:00:00.000000001\", "
	"\"tstz_ns\": \"2024-02-29T12:00:00.123456789+00:00\", \"s\": "
	"\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
	"\u00e9\u00e9\u00e9\u00e9 long\", \"u\": \"f79c3e09-677c-4bbd-a479-3f349cb785e7\", \"fx\": "
	"\"00ff10\", \"bin\": \"ffffffffffffffffffffffffffffffffffff\", \"st\": {\"a\": 5, \"b\": "
	"\"x\"}, \"ls\": [\"a\", null], \"m\": {\"k\": 1.5}}",
	"{\"i\": 7}",
	"{\"b\": false, \"i\": 2147483647, \"l\": -9223372036854775808, \"f\": 0.0, \"d\": -1e300, "
	"\"dec\": \"9999999.99\", \"dec18\": \"-0.0001\", \"dec38\": \"0\", \"dt\": \"2024-02-29\", "
	"\"tm\": \"23:59:59.999999\", \"ts\": \"2262-04-11T23:47:16.854775\", \"tstz\": "
	"\"1900-01-01T00:00:00+00:00\", \"s\": \"\", \"u\": "
	"\"00000000-0000-0000-0000-000000000000\", \"fx\": \"000000\", \"bin\": \"00\", \"st\": "
	"{\"a\": -5}, \"ls\": [], \"m\": {}}",
	"{\"i\": -2147483648, \"f\": \"NaN\", \"d\": \"Infinity\", \"s\": \"\\u0000\", \"st\": null}",
};

static void write_one(wenv *e, floe_table *t, const char *const *rows, size_t n_rows,
		      floe_data_file *df, floe_arena *a, const char *path)
{
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	floe_write_config cfg;
	floe_data_writer *w = NULL;
	struct ArrowArray b;
	struct ArrowSchema bs;
	floe_error err = {0};
	T_OK(floe_write_config_from(&cfg, a, m, &err), &err);
	make_batch(s, rows, n_rows, &b, &bs);
	T_OK(floe_data_writer_open(&w, floe_table_io(t), path, m, s, floe_metadata_default_spec(m),
				   NULL, &cfg, NULL, &err),
	     &err);
	T_OK(floe_data_writer_write(w, &b, &bs, &err), &err);
	/* a second batch, to span calls */
	T_OK(floe_data_writer_write(w, &b, &bs, &err), &err);
	T_EQ_INT(floe_data_writer_rows(w), 2 * (int64_t)n_rows);
	T_CHECK(floe_data_writer_size(w) > 0);
	T_OK(floe_data_writer_close(w, df, a, &err), &err);
	floe_arrow_array_release(&b);
	floe_arrow_schema_release(&bs);
	(void)e;
}

static void test_data_writer_every_type(void)
{
	wenv e;
	floe_arena a;
	floe_data_file df;
	acc_set acc;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "all", all_cols, NULL, NULL, 3);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	const size_t n = sizeof(data_rows) / sizeof(data_rows[0]);

	write_one(&e, t, data_rows, n, &df, &a, "mem://wh/db/all/data/f1.parquet");
	T_EQ_INT(df.content, FLOE_CONTENT_DATA);
	T_EQ_STR(df.file_format, "PARQUET");
	T_EQ_INT(df.record_count, 2 * (int64_t)n);
	T_CHECK(df.n_split_offsets >= 1 && df.split_offsets[0] == 4);
	T_EQ_INT(df.partition.n, 0);

	memset(&acc, 0, sizeof(acc));
	acc.schema = s;
	floe_arena_init(&acc.a, 0);
	T_EQ_INT(scan_file(floe_table_io(t), df.file_path, acc_batch, &acc), 2 * (int64_t)n);
	T_CHECK(acc.n >= 19);
	check_metrics(&df, &acc, m, s);
	check_against_footer(floe_table_io(t), &df, m);

	/* rules spelled out */
	const floe_schema_entry *ei = floe_schema_find_name(s, "i", false);
	const floe_id_bytes *lo = find_bound(df.lower_bounds, df.n_lower_bounds, ei->id);
	T_CHECK(lo && lo->n == 4 && memcmp(lo->p, "\x00\x00\x00\x80", 4) == 0); /* INT_MIN */
	const floe_schema_entry *ef = floe_schema_find_name(s, "f", false);
	lo = find_bound(df.lower_bounds, df.n_lower_bounds, ef->id);
	const floe_id_bytes *hi = find_bound(df.upper_bounds, df.n_upper_bounds, ef->id);
	/* -0.0 and +0.0: lower -0.0, upper +0.0; NaN never a bound but counted */
	T_CHECK(lo && lo->n == 4 && memcmp(lo->p, "\x00\x00\x00\x80", 4) == 0);
	T_CHECK(hi && hi->n == 4 && memcmp(hi->p, "\x00\x00\x00\x00", 4) == 0);
	T_EQ_INT(find_long(df.nan_value_counts, df.n_nan_value_counts, ef->id)->value, 2);
	const floe_schema_entry *ed = floe_schema_find_name(s, "d", false);
	hi = find_bound(df.upper_bounds, df.n_upper_bounds, ed->id);
	T_CHECK(hi && hi->n == 8 && memcmp(hi->p, "\x00\x00\x00\x00\x00\x00\xf0\x7f", 8) == 0);
	/* decimal(9,2): -1.25 is -125, one byte 0x83, max 999999999 minimal */
	const floe_schema_entry *edec = floe_schema_find_name(s, "dec", false);
	lo = find_bound(df.lower_bounds, df.n_lower_bounds, edec->id);
	hi = find_bound(df.upper_bounds, df.n_upper_bounds, edec->id);
	T_CHECK(lo && lo->n == 1 && lo->p[0] == 0x83);
	T_CHECK(hi && hi->n == 4 && memcmp(hi->p, "\x3b\x9a\xc9\xff", 4) == 0);
	/* strings: 16 code points (é is 2 bytes) and the upper one incremented */
	const floe_schema_entry *es = floe_schema_find_name(s, "s", false);
	lo = find_bound(df.lower_bounds, df.n_lower_bounds, es->id);
	hi = find_bound(df.upper_bounds, df.n_upper_bounds, es->id);
	T_CHECK(lo && lo->n == 0); /* "" is the minimum */
	T_CHECK(hi && hi->n == 32 && hi->p[30] == 0xc3 && hi->p[31] == 0xaa); /* é -> ê */
	/* binary all 0xff beyond 16 bytes: no upper bound possible */
	const floe_schema_entry *eb = floe_schema_find_name(s, "bin", false);
	T_CHECK(find_bound(df.lower_bounds, df.n_lower_bounds, eb->id) != NULL);
	T_CHECK(find_bound(df.upper_bounds, df.n_upper_bounds, eb->id) == NULL);
	/* timestamps: 8 bytes of µs / ns */
	const floe_schema_entry *ets = floe_schema_find_name(s, "ts", false);
	lo = find_bound(df.lower_bounds, df.n_lower_bounds, ets->id);
	T_CHECK(lo && lo->n == 8 && memcmp(lo->p, "\xff\xff\xff\xff\xff\xff\xff\xff", 8) == 0);
	/* struct fields have metrics; list elements and map keys/values none */
	const floe_schema_entry *esa = floe_schema_find_name(s, "st.a", false);
	T_CHECK(find_long(df.value_counts, df.n_value_counts, esa->id) != NULL);
	for (size_t i = 0; i < s->n_index; i++)
		if (s->index[i].in_repeated) {
			T_CHECK(!find_long(df.value_counts, df.n_value_counts, s->index[i].id));
			T_CHECK(!find_bound(df.lower_bounds, df.n_lower_bounds, s->index[i].id));
		}

	floe_arena_reset(&acc.a);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* Metrics modes: default counts, per-column full / none / truncate(2). */
static void test_metrics_modes(void)
{
	wenv e;
	floe_arena a;
	floe_data_file df;
	acc_set acc;
	static const char *const props[] = {"write.metadata.metrics.default", "counts",
					    "write.metadata.metrics.column.s", "full",
					    "write.metadata.metrics.column.l", "none",
					    "write.metadata.metrics.column.bin", "truncate(2)", NULL};
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "modes", all_cols, NULL, props, 3);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	write_one(&e, t, data_rows, sizeof(data_rows) / sizeof(data_rows[0]), &df, &a,
		  "mem://wh/db/modes/data/f.parquet");
	memset(&acc, 0, sizeof(acc));
	acc.schema = s;
	floe_arena_init(&acc.a, 0);
	scan_file(floe_table_io(t), df.file_path, acc_batch, &acc);
	check_metrics(&df, &acc, m, s);
	int32_t id_s = floe_schema_find_name(s, "s", false)->id;
	int32_t id_l = floe_schema_find_name(s, "l", false)->id;
	int32_t id_i = floe_schema_find_name(s, "i", false)->id;
	int32_t id_bin = floe_schema_find_name(s, "bin", false)->id;
	/* full: the whole 23-byte... string, untruncated */
	const floe_id_bytes *hi = find_bound(df.upper_bounds, df.n_upper_bounds, id_s);
	T_CHECK(hi && hi->n == 18 * 2 + 5);
	T_CHECK(!find_long(df.value_counts, df.n_value_counts, id_l));
	T_CHECK(find_long(df.value_counts, df.n_value_counts, id_i) != NULL);
	T_CHECK(!find_bound(df.lower_bounds, df.n_lower_bounds, id_i));
	const floe_id_bytes *lo = find_bound(df.lower_bounds, df.n_lower_bounds, id_bin);
	T_CHECK(lo && lo->n == 1 && lo->p[0] == 0); /* "00" */
	T_CHECK(!find_bound(df.upper_bounds, df.n_upper_bounds, id_bin)); /* ff ff.. */
	floe_arena_reset(&acc.a);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* A string whose 16th code point is U+10FFFF cannot get an upper bound;
 * one ending in U+D7FF skips the surrogates. */
static void test_string_upper_bounds(void)
{
	wenv e;
	floe_arena a;
	floe_data_file df;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "strs", "s string, k string", NULL, NULL, 2);
	const floe_schema *s = floe_metadata_current_schema(floe_table_metadata(t));
	char r1[512], r2[512];
	char *p = r1, *q = r2;
	p += snprintf(p, 100, "{\"s\": \"");
	q += snprintf(q, 100, "{\"s\": \"a\", \"k\": \"");
	for (int i = 0; i < 20; i++) {
		memcpy(p, "\xf4\x8f\xbf\xbf", 4); /* U+10FFFF */
		p += 4;
	}
	for (int i = 0; i < 15; i++)
		*q++ = 'x';
	memcpy(q, "\xed\x9f\xbf", 3); /* U+D7FF */
	q += 3;
	memcpy(q, "zz", 2);
	q += 2;
	snprintf(p, 10, "\"}");
	snprintf(q, 10, "\"}");
	const char *rows[] = {r1, r2};
	write_one(&e, t, rows, 2, &df, &a, "mem://wh/db/strs/data/f.parquet");
	int32_t id_s = floe_schema_find_name(s, "s", false)->id;
	int32_t id_k = floe_schema_find_name(s, "k", false)->id;
	T_CHECK(find_bound(df.lower_bounds, df.n_lower_bounds, id_s) != NULL);
	T_CHECK(!find_bound(df.upper_bounds, df.n_upper_bounds, id_s));
	const floe_id_bytes *hi = find_bound(df.upper_bounds, df.n_upper_bounds, id_k);
	T_CHECK(hi && hi->n == 15 + 3 && memcmp(hi->p + 15, "\xee\x80\x80", 3) == 0); /* U+E000 */
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* v3 unknown columns are in the batch but not in the file. */
static void test_unknown_columns(void)
{
	wenv e;
	floe_arena a;
	floe_data_file df;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "unk", "id long, u unknown, st struct<x: int, y: unknown>, "
					      "z string",
				   NULL, NULL, 3);
	const floe_schema *s = floe_metadata_current_schema(floe_table_metadata(t));
	const char *rows[] = {"{\"id\": 1, \"st\": {\"x\": 2}, \"z\": \"a\"}",
			      "{\"id\": 2, \"z\": \"b\"}"};
	write_one(&e, t, rows, 2, &df, &a, "mem://wh/db/unk/data/f.parquet");
	T_EQ_INT(df.record_count, 4);
	/* id, st.x, z */
	T_EQ_INT(df.n_value_counts, 3);
	floe_input *in = NULL;
	floe_parquet_reader *r = NULL;
	floe_error err = {0};
	T_OK(floe_io_open_read(floe_table_io(t), df.file_path, &in, &err), &err);
	T_OK(floe_parquet_reader_open(&r, in, NULL, &err), &err);
	const floe_parquet_schema *ps = floe_parquet_reader_schema(r);
	T_EQ_INT(ps->n_leaves, 3);
	T_EQ_INT(ps->root->n_children, 3);
	T_CHECK(!floe_parquet_schema_find_id(ps, floe_schema_find_name(s, "u", false)->id));
	T_CHECK(!floe_parquet_schema_find_id(ps, floe_schema_find_name(s, "st.y", false)->id));
	floe_parquet_reader_free(r);
	floe_input_close(in);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* Abort deletes; a failed publish leaves nothing; errors name the file. */
static void test_abort_and_failures(void)
{
	wenv e;
	floe_arena a;
	floe_data_file df;
	floe_write_config cfg;
	floe_data_writer *w = NULL;
	struct ArrowArray b;
	struct ArrowSchema bs;
	floe_error err = {0};
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "ab", "id long not null, s string", NULL, NULL, 2);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	const char *rows[] = {"{\"id\": 1, \"s\": \"a\"}", "{\"id\": 2}"};
	const char *bad_rows[] = {"{\"s\": \"no id\"}"};
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	make_batch(s, rows, 2, &b, &bs);

	T_OK(floe_data_writer_open(&w, floe_table_io(t), "mem://wh/db/ab/data/x.parquet", m, s,
				   NULL, NULL, &cfg, NULL, &err),
	     &err);
	T_OK(floe_data_writer_write(w, &b, &bs, &err), &err);
	floe_data_writer_abort(w);
	floe_data_writer_abort(NULL);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/ab/data"), 0);

	/* the close (publish) fails: nothing is left */
	T_OK(floe_data_writer_open(&w, floe_table_io(t), "mem://wh/db/ab/data/y.parquet", m, s,
				   NULL, NULL, &cfg, NULL, &err),
	     &err);
	T_OK(floe_data_writer_write(w, &b, &bs, &err), &err);
	floe_io_memory_fail(e.mem, "close", 1, FLOE_EIO);
	T_ERR(floe_data_writer_close(w, &df, &a, &err), FLOE_EIO);
	T_CHECK(strstr(err.msg, "y.parquet") != NULL);
	floe_io_memory_fail(e.mem, "close", 0, 0);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/ab/data"), 0);

	/* never overwrite: a second file at the same path fails at publish */
	T_OK(floe_data_writer_open(&w, floe_table_io(t), "mem://wh/db/ab/data/z.parquet", m, s,
				   NULL, NULL, &cfg, NULL, &err),
	     &err);
	T_OK(floe_data_writer_write(w, &b, &bs, &err), &err);
	T_OK(floe_data_writer_close(w, &df, &a, &err), &err);
	/* (the memory backend already refuses at create; local ones at publish) */
	T_ERR(floe_data_writer_open(&w, floe_table_io(t), "mem://wh/db/ab/data/z.parquet", m, s,
				    NULL, NULL, &cfg, NULL, &err),
	      FLOE_EEXISTS);
	T_CHECK(w == NULL);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/ab/data"), 1);

	/* a null in a required column names the column */
	struct ArrowArray bb;
	struct ArrowSchema bbs;
	make_batch(s, bad_rows, 1, &bb, &bbs);
	T_OK(floe_data_writer_open(&w, floe_table_io(t), "mem://wh/db/ab/data/w.parquet", m, s,
				   NULL, NULL, &cfg, NULL, &err),
	     &err);
	T_ERR(floe_data_writer_write(w, &bb, &bbs, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "id") != NULL && strstr(err.msg, "w.parquet") != NULL);
	floe_data_writer_abort(w);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/ab/data"), 1);

	floe_arrow_array_release(&bb);
	floe_arrow_schema_release(&bbs);
	floe_arrow_array_release(&b);
	floe_arrow_schema_release(&bs);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* Lists and maps of lists, maps and structs: written as 3-level Parquet
 * lists/maps all the way down and read back to the same rows. */
typedef struct json_acc {
	floe_buf out;
} json_acc;

static void json_cb(const struct ArrowArray *b, const struct ArrowSchema *s, void *payload)
{
	json_acc *j = payload;
	T_OK(floe_parquet__json_rows(&j->out, s, b, 0, b->length, NULL), NULL);
}

static void test_nested_collections(void)
{
	wenv e;
	floe_arena a;
	floe_data_file df;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(
		&e, "nest",
		"id int, ll list<list<int>>, lm list<map<string, int>>, ml map<string, list<long>>, "
		"mm map<int, map<string, string>>, lsl list<struct<a: list<string>, b: int>>, "
		"lll list<list<list<double>>>",
		NULL, NULL, 2);
	const floe_schema *s = floe_metadata_current_schema(floe_table_metadata(t));
	const char *rows[] = {
		"{\"id\": 1, \"ll\": [[1, 2], [], null, [3, null]], \"lm\": [{\"a\": 1}, null, {}], "
		"\"ml\": {\"x\": [1, 2], \"y\": null, \"z\": []}, \"mm\": {\"keys\": [1, 2], "
		"\"values\": [{\"k\": \"v\"}, null]}, \"lsl\": [{\"a\": [\"p\", null], \"b\": 1}, "
		"null, {\"a\": null, \"b\": null}], \"lll\": [[[1.5], []], null, [[null, 2.5]]]}",
		"{\"id\": 2}",
		"{\"id\": 3, \"ll\": [], \"lm\": [], \"ml\": {}, \"mm\": {\"keys\": [], "
		"\"values\": []}, \"lsl\": [], \"lll\": []}",
		"{\"id\": 4, \"ll\": [[null]], \"lll\": [[[]]]}",
	};
	write_one(&e, t, rows, 4, &df, &a, "mem://wh/db/nest/data/f.parquet");
	T_EQ_INT(df.record_count, 8);
	/* only the top-level id gets metrics: everything else is in a list or map */
	T_EQ_INT(df.n_value_counts, 1);
	struct ArrowArray b;
	struct ArrowSchema bs;
	json_acc want, got;
	floe_buf_init(&want.out, 0);
	floe_buf_init(&got.out, 0);
	make_batch(s, rows, 4, &b, &bs);
	for (int k = 0; k < 2; k++)
		T_OK(floe_parquet__json_rows(&want.out, &bs, &b, 0, b.length, NULL), NULL);
	T_EQ_INT(scan_file(floe_table_io(t), df.file_path, json_cb, &got), 8);
	T_EQ_STR(floe_buf_cstr(&got.out), floe_buf_cstr(&want.out));
	floe_buf_reset(&want.out);
	floe_buf_reset(&got.out);
	floe_arrow_array_release(&b);
	floe_arrow_schema_release(&bs);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

int main(void)
{
	T_RUN(test_config);
	T_RUN(test_locations);
	T_RUN(test_data_writer_every_type);
	T_RUN(test_metrics_modes);
	T_RUN(test_string_upper_bounds);
	T_RUN(test_unknown_columns);
	T_RUN(test_nested_collections);
	T_RUN(test_abort_and_failures);
	return t_finish();
}
