/*
 * test_parquet_write.c — the writer: round trips of every type through
 * floe's reader, results for Iceberg metrics, footer statistics rules,
 * dictionary fallback, page and row-group sizing, the shared memory budget,
 * and the errors a caller can make.
 */
#include <math.h>
#include <stdlib.h>

#include "arrow/arrow_build.h"
#include "codec/codec.h"
#include "harness.h"
#include "parquet/encoding.h"
#include "parquet/pjson.h"
#include "parquet/reader.h"
#include "parquet/writer.h"
#include "util/alloc.h"
#include "util/cursor.h"

/* ---- small Arrow builders ---------------------------------------------- */

static uint8_t *bits_of(const bool *valid, int64_t n, int64_t *nulls)
{
	uint8_t *b;
	*nulls = 0;
	if (!valid)
		return NULL;
	b = floe_calloc(1, (size_t)(n + 7) / 8 + 1);
	for (int64_t i = 0; i < n; i++) {
		if (valid[i])
			b[i >> 3] |= (uint8_t)(1 << (i & 7));
		else
			(*nulls)++;
	}
	return b;
}

static void prim(struct ArrowSchema *s, struct ArrowArray *a, const char *fmt, const char *name,
		 const void *vals, size_t width, int64_t n, const bool *valid)
{
	int64_t nulls;
	T_CHECK(floe_arrow_schema_init(s, fmt, name, ARROW_FLAG_NULLABLE, 0) == 0);
	T_CHECK(floe_arrow_array_init(a, 2, 0) == 0);
	a->length = n;
	floe_arrow_array_set_buffer(a, 0, bits_of(valid, n, &nulls));
	a->null_count = nulls;
	floe_arrow_array_set_buffer(a, 1, floe_memdup(vals, width * (size_t)(n ? n : 1)));
}

static void bools(struct ArrowSchema *s, struct ArrowArray *a, const char *name, const bool *v,
		  int64_t n, const bool *valid)
{
	int64_t nulls, dummy;
	uint8_t *b = bits_of(v, n, &dummy);
	T_CHECK(floe_arrow_schema_init(s, "b", name, ARROW_FLAG_NULLABLE, 0) == 0);
	T_CHECK(floe_arrow_array_init(a, 2, 0) == 0);
	a->length = n;
	floe_arrow_array_set_buffer(a, 0, bits_of(valid, n, &nulls));
	a->null_count = nulls;
	floe_arrow_array_set_buffer(a, 1, b);
}

static void strs(struct ArrowSchema *s, struct ArrowArray *a, const char *fmt, const char *name,
		 const char *const *v, int64_t n)
{
	int32_t *off = floe_malloc(sizeof(int32_t) * (size_t)(n + 1));
	bool *valid = malloc((size_t)n + 1);
	size_t total = 0;
	char *data;
	int64_t nulls;
	for (int64_t i = 0; i < n; i++)
		total += v[i] ? strlen(v[i]) : 0;
	data = floe_malloc(total + 1);
	off[0] = 0;
	for (int64_t i = 0; i < n; i++) {
		size_t l = v[i] ? strlen(v[i]) : 0;
		memcpy(data + off[i], v[i] ? v[i] : "", l);
		off[i + 1] = off[i] + (int32_t)l;
		valid[i] = v[i] != NULL;
	}
	T_CHECK(floe_arrow_schema_init(s, fmt, name, ARROW_FLAG_NULLABLE, 0) == 0);
	T_CHECK(floe_arrow_array_init(a, 3, 0) == 0);
	a->length = n;
	floe_arrow_array_set_buffer(a, 0, bits_of(valid, n, &nulls));
	a->null_count = nulls;
	floe_arrow_array_set_buffer(a, 1, off);
	floe_arrow_array_set_buffer(a, 2, data);
	free(valid);
}

/* A list whose offsets are given; the child must be built into a->children[0]. */
static void list_shell(struct ArrowSchema *s, struct ArrowArray *a, const char *fmt,
		       const char *name, const int32_t *off, int64_t n, const bool *valid)
{
	int64_t nulls;
	T_CHECK(floe_arrow_schema_init(s, fmt, name, ARROW_FLAG_NULLABLE, 1) == 0);
	T_CHECK(floe_arrow_array_init(a, 2, 1) == 0);
	a->length = n;
	floe_arrow_array_set_buffer(a, 0, bits_of(valid, n, &nulls));
	a->null_count = nulls;
	floe_arrow_array_set_buffer(a, 1, floe_memdup(off, sizeof(int32_t) * (size_t)(n + 1)));
}

static void struct_shell(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int nchild,
			 int64_t n, const bool *valid)
{
	int64_t nulls;
	T_CHECK(floe_arrow_schema_init(s, "+s", name, ARROW_FLAG_NULLABLE, nchild) == 0);
	T_CHECK(floe_arrow_array_init(a, 1, nchild) == 0);
	a->length = n;
	floe_arrow_array_set_buffer(a, 0, bits_of(valid, n, &nulls));
	a->null_count = nulls;
}

/* ---- write and read back ------------------------------------------------- */

static int write_batch(floe_buf *file, const floe_parquet_schema *ps, const floe_parquet_writer_opts *o,
		       const struct ArrowArray *a, const struct ArrowSchema *s,
		       floe_parquet_file_result *res, floe_error *err)
{
	floe_output *out = floe_output_buffer(file, "test.parquet");
	floe_parquet_writer *w = NULL;
	const floe_parquet_file_result *r = NULL;
	int rc = floe_parquet_writer_new(&w, out, ps, o, err);
	if (!rc)
		rc = floe_parquet_writer_write(w, a, s, err);
	if (!rc)
		rc = floe_parquet_writer_close(w, &r, err);
	if (!rc && res) {
		*res = *r;
		/* copy what the test looks at: the writer is freed below */
		res->columns = malloc(sizeof(*res->columns) * r->n_columns);
		memcpy(res->columns, r->columns, sizeof(*res->columns) * r->n_columns);
		res->split_offsets = malloc(sizeof(int64_t) * (r->n_row_groups + 1));
		memcpy(res->split_offsets, r->split_offsets, sizeof(int64_t) * r->n_row_groups);
		for (size_t i = 0; i < r->n_columns; i++) {
			res->columns[i].min.p = res->columns[i].has_min ? malloc(r->columns[i].min.n + 1) : NULL;
			res->columns[i].max.p = res->columns[i].has_max ? malloc(r->columns[i].max.n + 1) : NULL;
			if (res->columns[i].has_min)
				memcpy((void *)res->columns[i].min.p, r->columns[i].min.p, r->columns[i].min.n);
			if (res->columns[i].has_max)
				memcpy((void *)res->columns[i].max.p, r->columns[i].max.p, r->columns[i].max.n);
		}
	}
	T_EQ_INT(floe_output_close(out, NULL), 0);
	floe_parquet_writer_free(w);
	return rc;
}

static void free_result(floe_parquet_file_result *r)
{
	for (size_t i = 0; i < r->n_columns; i++) {
		free((void *)r->columns[i].min.p);
		free((void *)r->columns[i].max.p);
	}
	free(r->columns);
	free(r->split_offsets);
}

static int read_json(const floe_buf *file, int64_t batch_rows, floe_buf *json, floe_error *err)
{
	floe_input *in = floe_input_memory(file->data, file->len, "test.parquet");
	floe_parquet_reader *r = NULL;
	floe_parquet_reader_opts o = FLOE_PARQUET_READER_OPTS_INIT;
	struct ArrowSchema s = {0};
	struct ArrowArray a = {0};
	int rc;
	o.batch_rows = batch_rows;
	o.verify_checksums = true;
	rc = floe_parquet_reader_open(&r, in, &o, err);
	if (!rc)
		rc = floe_parquet_reader_arrow_schema(r, &s, err);
	while (!rc) {
		bool eof;
		if ((rc = floe_parquet_reader_next(r, &a, &eof, err)) || eof)
			break;
		rc = floe_parquet__json_rows(json, &s, &a, 0, a.length, err);
		floe_arrow_array_release(&a);
	}
	floe_arrow_schema_release(&s);
	floe_parquet_reader_free(r);
	floe_input_close(in);
	return rc;
}

static floe_parquet_file_meta *footer(const floe_buf *file, floe_arena *a)
{
	floe_parquet_file_meta *m = NULL;
	uint32_t flen = floe_load_u32le(file->data + file->len - 8);
	floe_error err = {0};
	T_OK(floe_parquet_meta_parse(&m, a, file->data + file->len - 8 - flen, flen, "t", &err), &err);
	return m;
}

/* ---- an Iceberg-like schema with every type --------------------------------- */

#define NR 500

static floe_parquet_schema *all_types_schema(void)
{
	floe_parquet_schema *s = NULL;
	floe_error err = {0};
	int id = 1;
	struct {
		const char *name;
		int phys, len, lt, p, sc, unit;
		bool utc, req;
	} leaves[] = {
		{"id", FLOE_PARQUET_INT64, 0, 0, 0, 0, 0, false, true},
		{"b", FLOE_PARQUET_BOOLEAN, 0, 0, 0, 0, 0, false, false},
		{"i", FLOE_PARQUET_INT32, 0, 0, 0, 0, 0, false, false},
		{"f", FLOE_PARQUET_FLOAT, 0, 0, 0, 0, 0, false, false},
		{"d", FLOE_PARQUET_DOUBLE, 0, 0, 0, 0, 0, false, false},
		{"dec9", FLOE_PARQUET_INT32, 0, FLOE_PARQUET_LT_DECIMAL, 9, 2, 0, false, false},
		{"dec18", FLOE_PARQUET_INT64, 0, FLOE_PARQUET_LT_DECIMAL, 18, 4, 0, false, false},
		{"dec38", FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY, 16, FLOE_PARQUET_LT_DECIMAL, 38, 10, 0, false, false},
		{"date", FLOE_PARQUET_INT32, 0, FLOE_PARQUET_LT_DATE, 0, 0, 0, false, false},
		{"time", FLOE_PARQUET_INT64, 0, FLOE_PARQUET_LT_TIME, 0, 0, FLOE_PARQUET_MICROS, false, false},
		{"ts", FLOE_PARQUET_INT64, 0, FLOE_PARQUET_LT_TIMESTAMP, 0, 0, FLOE_PARQUET_MICROS, false, false},
		{"tstz", FLOE_PARQUET_INT64, 0, FLOE_PARQUET_LT_TIMESTAMP, 0, 0, FLOE_PARQUET_MICROS, true, false},
		{"tsns", FLOE_PARQUET_INT64, 0, FLOE_PARQUET_LT_TIMESTAMP, 0, 0, FLOE_PARQUET_NANOS, true, false},
		{"s", FLOE_PARQUET_BYTE_ARRAY, 0, FLOE_PARQUET_LT_STRING, 0, 0, 0, false, false},
		{"u", FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY, 16, FLOE_PARQUET_LT_UUID, 0, 0, 0, false, false},
		{"fx", FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY, 3, 0, 0, 0, 0, false, false},
		{"bin", FLOE_PARQUET_BYTE_ARRAY, 0, 0, 0, 0, 0, false, false},
	};
	T_OK(floe_parquet_schema_new(&s, "table", &err), &err);
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		floe_parquet_field f = FLOE_PARQUET_FIELD_INIT;
		f.name = leaves[i].name;
		f.repetition = leaves[i].req ? FLOE_PARQUET_REQUIRED : FLOE_PARQUET_OPTIONAL;
		f.physical = leaves[i].phys;
		f.type_length = leaves[i].len;
		f.logical.kind = leaves[i].lt;
		f.logical.precision = leaves[i].p;
		f.logical.scale = leaves[i].sc;
		f.logical.unit = leaves[i].unit;
		f.logical.utc = leaves[i].utc;
		f.has_field_id = true;
		f.field_id = id++;
		T_OK(floe_parquet_schema_add(s, NULL, &f, NULL, &err), &err);
	}
	/* st: struct<a: int, l: list<string>> ; m: map<string, long> */
	{
		floe_parquet_field f = FLOE_PARQUET_FIELD_INIT, e = FLOE_PARQUET_FIELD_INIT;
		floe_parquet_field k = FLOE_PARQUET_FIELD_INIT, v = FLOE_PARQUET_FIELD_INIT;
		floe_parquet_node *st;
		f.name = "st";
		f.has_field_id = true;
		f.field_id = id++;
		T_OK(floe_parquet_schema_add(s, NULL, &f, &st, &err), &err);
		f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;
		f.name = "a";
		f.physical = FLOE_PARQUET_INT32;
		f.has_field_id = true;
		f.field_id = id++;
		T_OK(floe_parquet_schema_add(s, st, &f, NULL, &err), &err);
		f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;
		f.name = "l";
		f.has_field_id = true;
		f.field_id = id++;
		e.physical = FLOE_PARQUET_BYTE_ARRAY;
		e.logical.kind = FLOE_PARQUET_LT_STRING;
		e.has_field_id = true;
		e.field_id = id++;
		T_OK(floe_parquet_schema_add_list(s, st, &f, &e, NULL, NULL, &err), &err);
		f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;
		f.name = "m";
		f.has_field_id = true;
		f.field_id = id++;
		k.physical = FLOE_PARQUET_BYTE_ARRAY;
		k.logical.kind = FLOE_PARQUET_LT_STRING;
		k.has_field_id = true;
		k.field_id = id++;
		v.physical = FLOE_PARQUET_INT64;
		v.has_field_id = true;
		v.field_id = id++;
		T_OK(floe_parquet_schema_add_map(s, NULL, &f, &k, &v, NULL, NULL, NULL, &err), &err);
	}
	T_OK(floe_parquet_schema_finish(s, &err), &err);
	return s;
}

static char sbuf[NR][32];
static const char *svals[NR], *lvals[NR * 3], *kvals[NR * 2];

static void all_types_batch(struct ArrowSchema *s, struct ArrowArray *a)
{
	static int64_t i64[NR], ts[NR], tsns[NR], dec18[NR], time_us[NR], mvals[NR * 2];
	static int32_t i32[NR], date[NR], dec9[NR];
	static float f32[NR];
	static double f64[NR];
	static uint8_t dec38[NR][16], uuids[NR][16], fx[NR][3];
	static bool valid[NR], b[NR];
	static const float fspecial[] = {0.0f, -0.0f, NAN, 1.5f, -1e30f};
	int k = 0, nl = 0, nm = 0;
	static int32_t loff[NR + 1], moff[NR + 1];
	static bool lvalid[NR * 3], stvalid[NR];
	for (int i = 0; i < NR; i++) {
		valid[i] = i % 7 != 3;
		stvalid[i] = i % 11 != 5;
		b[i] = i % 3 == 0;
		i64[i] = (int64_t)i * 1000003 - 250000000;
		i32[i] = i * 7919 - 1000000;
		f32[i] = i % 10 < 5 ? fspecial[i % 5] : (float)i / 3.0f;
		f64[i] = i % 10 < 5 ? (double)fspecial[i % 5] : i * 0.25;
		dec9[i] = i * 1234 - 300000;
		dec18[i] = (int64_t)i * 123456789 - 30000000000;
		int64_t d38 = (int64_t)i * 98765432109 - 20000000000000;
		for (int j = 0; j < 16; j++)
			dec38[i][j] = j < 8 ? (uint8_t)((uint64_t)d38 >> (8 * j)) : (d38 < 0 ? 0xff : 0);
		date[i] = i * 17 - 3000;
		time_us[i] = (int64_t)i * 86399999999 / NR;
		ts[i] = (int64_t)i * 86400000000LL - 20000000000000LL;
		tsns[i] = (int64_t)i * 1000000007LL;
		snprintf(sbuf[i], sizeof(sbuf[i]), "v%03d-%s", i % 40, i % 2 ? "ü" : "z");
		svals[i] = valid[i] ? sbuf[i] : NULL;
		for (int j = 0; j < 16; j++)
			uuids[i][j] = (uint8_t)(i * 31 + j);
		fx[i][0] = (uint8_t)i, fx[i][1] = 0, fx[i][2] = 0xff;
		loff[i] = nl;
		for (int j = 0; j < i % 4; j++) {
			lvals[nl] = sbuf[(i + j) % NR];
			lvalid[nl] = (i + j) % 5 != 0;
			if (!lvalid[nl])
				lvals[nl] = NULL;
			nl++;
		}
		moff[i] = nm;
		for (int j = 0; j < i % 3; j++) {
			kvals[nm] = sbuf[j];
			mvals[nm] = i * 10 + j;
			nm++;
		}
	}
	loff[NR] = nl;
	moff[NR] = nm;
	T_CHECK(floe_arrow_schema_init(s, "+s", "", 0, 19) == 0);
	T_CHECK(floe_arrow_array_init(a, 1, 19) == 0);
	a->length = NR;
	prim(s->children[k], a->children[k], "l", "id", i64, 8, NR, NULL), k++;
	bools(s->children[k], a->children[k], "b", b, NR, valid), k++;
	prim(s->children[k], a->children[k], "i", "i", i32, 4, NR, valid), k++;
	prim(s->children[k], a->children[k], "f", "f", f32, 4, NR, valid), k++;
	prim(s->children[k], a->children[k], "g", "d", f64, 8, NR, valid), k++;
	{
		/* decimals arrive as decimal128 */
		static uint8_t d9[NR][16], d18[NR][16];
		for (int i = 0; i < NR; i++) {
			int64_t x = dec9[i], y = dec18[i];
			for (int j = 0; j < 16; j++) {
				d9[i][j] = j < 8 ? (uint8_t)((uint64_t)x >> (8 * j)) : (x < 0 ? 0xff : 0);
				d18[i][j] = j < 8 ? (uint8_t)((uint64_t)y >> (8 * j)) : (y < 0 ? 0xff : 0);
			}
		}
		prim(s->children[k], a->children[k], "d:9,2", "dec9", d9, 16, NR, valid), k++;
		prim(s->children[k], a->children[k], "d:18,4", "dec18", d18, 16, NR, valid), k++;
	}
	prim(s->children[k], a->children[k], "d:38,10", "dec38", dec38, 16, NR, valid), k++;
	prim(s->children[k], a->children[k], "tdD", "date", date, 4, NR, valid), k++;
	prim(s->children[k], a->children[k], "ttu", "time", time_us, 8, NR, valid), k++;
	prim(s->children[k], a->children[k], "tsu:", "ts", ts, 8, NR, valid), k++;
	prim(s->children[k], a->children[k], "tsu:UTC", "tstz", ts, 8, NR, valid), k++;
	prim(s->children[k], a->children[k], "tsn:UTC", "tsns", tsns, 8, NR, valid), k++;
	strs(s->children[k], a->children[k], "u", "s", svals, NR), k++;
	prim(s->children[k], a->children[k], "w:16", "u", uuids, 16, NR, valid), k++;
	prim(s->children[k], a->children[k], "w:3", "fx", fx, 3, NR, valid), k++;
	strs(s->children[k], a->children[k], "z", "bin", svals, NR), k++;
	/* st */
	struct_shell(s->children[k], a->children[k], "st", 2, NR, stvalid);
	prim(s->children[k]->children[0], a->children[k]->children[0], "i", "a", i32, 4, NR, valid);
	list_shell(s->children[k]->children[1], a->children[k]->children[1], "+l", "l", loff, NR, valid);
	strs(s->children[k]->children[1]->children[0], a->children[k]->children[1]->children[0], "u",
	     "element", lvals, nl);
	k++;
	/* m */
	list_shell(s->children[k], a->children[k], "+m", "m", moff, NR, valid);
	struct_shell(s->children[k]->children[0], a->children[k]->children[0], "entries", 2, nm, NULL);
	s->children[k]->children[0]->flags = 0;
	strs(s->children[k]->children[0]->children[0], a->children[k]->children[0]->children[0], "u",
	     "key", kvals, nm);
	s->children[k]->children[0]->children[0]->flags = 0;
	prim(s->children[k]->children[0]->children[1], a->children[k]->children[0]->children[1], "l",
	     "value", mvals, 8, nm, NULL);
	k++;
	T_EQ_INT(k, 19);
}

static void test_roundtrip_all_types(void)
{
	floe_parquet_schema *ps = all_types_schema();
	struct ArrowSchema s;
	struct ArrowArray a;
	floe_error err = {0};
	floe_buf want;
	int cfg = 0;
	all_types_batch(&s, &a);
	floe_buf_init(&want, 0);
	T_OK(floe_parquet__json_rows(&want, &s, &a, 0, a.length, &err), &err);
	/* every codec, both page versions, dictionary on and off, small pages */
	static const int codecs[] = {FLOE_PARQUET_UNCOMPRESSED, FLOE_PARQUET_SNAPPY, FLOE_PARQUET_GZIP,
				     FLOE_PARQUET_ZSTD, FLOE_PARQUET_BROTLI, FLOE_PARQUET_LZ4_RAW};
	for (size_t c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++) {
		for (int pv = 1; pv <= 2; pv++) {
			for (int dict = 0; dict < 2; dict++) {
				floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
				floe_buf file, got;
				o.codec = codecs[c];
				o.page_version = pv;
				o.dictionary = dict;
				o.page_rows = 64 + cfg * 7;
				o.row_group_rows = 200;
				o.page_crc = true;
				floe_buf_init(&file, 0);
				floe_buf_init(&got, 0);
				T_OK(write_batch(&file, ps, &o, &a, &s, NULL, &err), &err);
				T_OK(read_json(&file, 33, &got, &err), &err);
				if (got.len != want.len || memcmp(got.data, want.data, want.len) != 0) {
					t_fail(__FILE__, __LINE__, "round trip differs (codec %d v%d dict %d)",
					       codecs[c], pv, dict);
					if (cfg == 0)
						fprintf(stderr, "want: %.300s\ngot:  %.300s\n",
							floe_buf_cstr(&want), floe_buf_cstr(&got));
				}
				floe_buf_reset(&file);
				floe_buf_reset(&got);
				cfg++;
			}
		}
	}
	floe_buf_reset(&want);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_parquet_schema_free(ps);
}

/* A file whose leading magic is not PAR1 opens (only the footer is read
 * then) and fails, naming itself, before its first row group is decoded. */
static void test_leading_magic_checked_before_rows(void)
{
	floe_parquet_schema *ps = all_types_schema();
	struct ArrowSchema s;
	struct ArrowArray a;
	floe_error err = {0};
	floe_buf file, got;
	floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
	all_types_batch(&s, &a);
	floe_buf_init(&file, 0);
	floe_buf_init(&got, 0);
	T_OK(write_batch(&file, ps, &o, &a, &s, NULL, &err), &err);
	file.data[0] = 'X';
	T_EQ_INT(read_json(&file, 100, &got, &err), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "'test.parquet': not a Parquet file (no PAR1 magic at its start)") != NULL);
	T_EQ_INT((int64_t)got.len, 0);
	floe_buf_reset(&file);
	floe_buf_reset(&got);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_parquet_schema_free(ps);
}

static void test_results_and_footer(void)
{
	floe_parquet_schema *ps = all_types_schema();
	struct ArrowSchema s;
	struct ArrowArray a;
	floe_error err = {0};
	floe_buf file;
	floe_parquet_file_result r;
	floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
	floe_arena arena;
	all_types_batch(&s, &a);
	floe_buf_init(&file, 0);
	floe_arena_init(&arena, 0);
	o.row_group_rows = 200;
	o.bounds_max_bytes = 4;
	T_OK(write_batch(&file, ps, &o, &a, &s, &r, &err), &err);
	T_EQ_INT(r.record_count, NR);
	T_EQ_INT(r.file_size, (int64_t)file.len);
	T_EQ_INT(r.n_row_groups, 3);
	floe_parquet_file_meta *m = footer(&file, &arena);
	if (m) {
		T_EQ_INT(m->n_row_groups, 3);
		T_EQ_INT(m->n_column_orders, (size_t)ps->n_leaves);
		for (size_t g = 0; g < m->n_row_groups; g++)
			T_EQ_INT(r.split_offsets[g], m->row_groups[g].file_offset);
		int64_t sum = 0;
		for (size_t g = 0; g < m->n_row_groups; g++)
			sum += m->row_groups[g].columns[3].meta_data.total_compressed_size;
		T_EQ_INT(r.columns[3].compressed_size, sum);
		/* f: NaN excluded, -0.0 < +0.0 in the results */
		const floe_parquet_column_result *f = &r.columns[3];
		T_EQ_INT(f->value_count, NR);
		int nulls = 0, nans = 0;
		for (int i = 0; i < NR; i++) {
			nulls += i % 7 == 3;
			nans += i % 7 != 3 && i % 10 < 5 && i % 5 == 2;
		}
		T_EQ_INT(f->null_count, nulls);
		T_EQ_INT(f->nan_count, nans);
		float mn, mx;
		memcpy(&mn, f->min.p, 4);
		memcpy(&mx, f->max.p, 4);
		T_CHECK(mn == -1e30f);
		T_CHECK(mx == (float)(NR - 1) / 3.0f || mx > 100.0f);
		/* a string bound truncated to 4 bytes: min a prefix, max incremented */
		const floe_parquet_column_result *sr = &r.columns[13];
		T_CHECK(sr->has_min && !sr->min_exact && sr->min.n == 4 && memcmp(sr->min.p, "v000", 4) == 0);
		/* max "v039-ü" -> "v039" with its last code point incremented */
		T_CHECK(sr->has_max && !sr->max_exact && sr->max.n == 4 && memcmp(sr->max.p, "v03:", 4) == 0);
		/* footer statistics of a chunk: null_count and bounds */
		const floe_parquet_stats *st = &m->row_groups[0].columns[2].meta_data.statistics;
		T_CHECK(st->has_null_count && st->has_min_value && st->has_max_value);
		T_EQ_INT(st->min_value.n, 4);
		/* decimals: signed big-endian order */
		const floe_parquet_column_result *dr = &r.columns[7];
		T_CHECK(dr->has_min && dr->min.n == 16 && (dr->min.p[0] & 0x80));
	}
	free_result(&r);
	floe_arena_reset(&arena);
	floe_buf_reset(&file);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_parquet_schema_free(ps);
}

/* spec: a zero min is written as -0.0 and a zero max as +0.0 (footer). */
static void test_float_zero_rule(void)
{
	floe_parquet_schema *ps = NULL;
	floe_error err = {0};
	floe_parquet_field f = FLOE_PARQUET_FIELD_INIT;
	struct ArrowSchema s;
	struct ArrowArray a;
	double v[] = {0.0, 1.0, 2.0};
	floe_buf file;
	floe_arena arena;
	floe_parquet_file_result r;
	T_OK(floe_parquet_schema_new(&ps, "t", &err), &err);
	f.name = "x";
	f.physical = FLOE_PARQUET_DOUBLE;
	T_OK(floe_parquet_schema_add(ps, NULL, &f, NULL, &err), &err);
	T_OK(floe_parquet_schema_finish(ps, &err), &err);
	T_CHECK(floe_arrow_schema_init(&s, "+s", "", 0, 1) == 0);
	T_CHECK(floe_arrow_array_init(&a, 1, 1) == 0);
	a.length = 3;
	prim(s.children[0], a.children[0], "g", "x", v, 8, 3, NULL);
	floe_buf_init(&file, 0);
	floe_arena_init(&arena, 0);
	T_OK(write_batch(&file, ps, NULL, &a, &s, &r, &err), &err);
	floe_parquet_file_meta *m = footer(&file, &arena);
	if (m) {
		const floe_parquet_stats *st = &m->row_groups[0].columns[0].meta_data.statistics;
		T_CHECK(st->has_min_value && st->min_value.n == 8 &&
			floe_load_u64le(st->min_value.p) == 0x8000000000000000ull);
		T_CHECK(st->has_nan_count && st->nan_count == 0);
	}
	/* the results keep the real value: +0.0 */
	T_CHECK(r.columns[0].has_min && floe_load_u64le(r.columns[0].min.p) == 0);
	free_result(&r);
	floe_arena_reset(&arena);
	floe_buf_reset(&file);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_parquet_schema_free(ps);
}

/* High-cardinality strings: the dictionary overflows and the writer falls
 * back to PLAIN; small pages and row groups; values read back equal. */
static void test_dictionary_fallback_and_sizing(void)
{
	enum { N = 20000 };
	floe_parquet_schema *ps = NULL;
	floe_error err = {0};
	floe_parquet_field f = FLOE_PARQUET_FIELD_INIT;
	struct ArrowSchema s;
	struct ArrowArray a;
	static char buf[N][24];
	static const char *v[N];
	floe_buf file, want, got;
	floe_arena arena;
	floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
	for (int i = 0; i < N; i++) {
		snprintf(buf[i], sizeof(buf[i]), "value-%d", i < 5000 ? i % 10 : i);
		v[i] = buf[i];
	}
	T_OK(floe_parquet_schema_new(&ps, "t", &err), &err);
	f.name = "s";
	f.physical = FLOE_PARQUET_BYTE_ARRAY;
	f.logical.kind = FLOE_PARQUET_LT_STRING;
	T_OK(floe_parquet_schema_add(ps, NULL, &f, NULL, &err), &err);
	T_OK(floe_parquet_schema_finish(ps, &err), &err);
	T_CHECK(floe_arrow_schema_init(&s, "+s", "", 0, 1) == 0);
	T_CHECK(floe_arrow_array_init(&a, 1, 1) == 0);
	a.length = N;
	strs(s.children[0], a.children[0], "u", "s", v, N);
	floe_buf_init(&file, 0);
	floe_buf_init(&want, 0);
	floe_buf_init(&got, 0);
	floe_arena_init(&arena, 0);
	o.codec = FLOE_PARQUET_UNCOMPRESSED;
	o.dict_bytes = 4096;
	o.page_bytes = 8192;
	o.page_rows = 1000;
	o.row_group_bytes = 64 << 10;
	T_OK(write_batch(&file, ps, &o, &a, &s, NULL, &err), &err);
	floe_parquet_file_meta *m = footer(&file, &arena);
	if (m) {
		const floe_parquet_column_meta *c = &m->row_groups[0].columns[0].meta_data;
		bool dict = false, plain = false;
		T_CHECK(m->n_row_groups >= 2);
		for (size_t i = 0; i < c->n_encoding_stats; i++) {
			dict |= c->encoding_stats[i].encoding == FLOE_PARQUET_ENC_PLAIN_DICTIONARY &&
				c->encoding_stats[i].page_type == FLOE_PARQUET_DATA_PAGE;
			plain |= c->encoding_stats[i].encoding == FLOE_PARQUET_ENC_PLAIN;
		}
		T_CHECK(dict && plain);
		T_CHECK(c->has_dictionary_page_offset);
	}
	T_OK(floe_parquet__json_rows(&want, &s, &a, 0, a.length, &err), &err);
	T_OK(read_json(&file, 4096, &got, &err), &err);
	T_CHECK(got.len == want.len && memcmp(got.data, want.data, want.len) == 0);
	floe_arena_reset(&arena);
	floe_buf_reset(&file);
	floe_buf_reset(&want);
	floe_buf_reset(&got);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_parquet_schema_free(ps);
}

static floe_parquet_writer *over_largest;
static int over_calls;

static void on_over(floe_parquet_budget *b, floe_parquet_writer *largest, void *payload)
{
	(void)b;
	(void)payload;
	over_largest = largest;
	over_calls++;
}

/* Writers sharing a budget: the largest one is flushed first. */
static void test_budget(void)
{
	enum { N = 30000 };
	floe_parquet_schema *ps = NULL;
	floe_error err = {0};
	floe_parquet_field f = FLOE_PARQUET_FIELD_INIT;
	floe_parquet_budget *b = NULL;
	floe_parquet_writer *w1 = NULL, *w2 = NULL;
	floe_buf f1, f2;
	floe_output *o1, *o2;
	struct ArrowSchema s;
	struct ArrowArray a;
	static int64_t v[N];
	floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
	const floe_parquet_file_result *r;
	for (int i = 0; i < N; i++)
		v[i] = (int64_t)i * 2654435761u;
	T_OK(floe_parquet_schema_new(&ps, "t", &err), &err);
	f.name = "x";
	f.physical = FLOE_PARQUET_INT64;
	T_OK(floe_parquet_schema_add(ps, NULL, &f, NULL, &err), &err);
	T_OK(floe_parquet_schema_finish(ps, &err), &err);
	T_CHECK(floe_arrow_schema_init(&s, "+s", "", 0, 1) == 0);
	T_CHECK(floe_arrow_array_init(&a, 1, 1) == 0);
	a.length = N;
	prim(s.children[0], a.children[0], "l", "x", v, 8, N, NULL);

	/* without a callback: the largest writer flushes itself */
	T_OK(floe_parquet_budget_new(&b, 200 << 10, NULL, NULL), &err);
	o.budget = b;
	o.codec = FLOE_PARQUET_UNCOMPRESSED;
	o.dictionary = false;
	floe_buf_init(&f1, 0);
	floe_buf_init(&f2, 0);
	o1 = floe_output_buffer(&f1, "w1");
	o2 = floe_output_buffer(&f2, "w2");
	T_OK(floe_parquet_writer_new(&w1, o1, ps, &o, &err), &err);
	T_OK(floe_parquet_writer_new(&w2, o2, ps, &o, &err), &err);
	T_OK(floe_parquet_writer_write(w1, &a, &s, &err), &err);
	T_CHECK(floe_parquet_budget_used(b) <= (200 << 10) + (1 << 20));
	T_CHECK(floe_parquet_budget_largest(b) != NULL);
	T_OK(floe_parquet_writer_write(w2, &a, &s, &err), &err);
	T_OK(floe_parquet_writer_close(w1, &r, &err), &err);
	T_CHECK(r->n_row_groups >= 2); /* flushed early by the budget */
	T_OK(floe_parquet_writer_close(w2, &r, &err), &err);
	T_CHECK(r->n_row_groups >= 2);
	floe_parquet_writer_free(w1);
	floe_parquet_writer_free(w2);
	T_EQ_INT(floe_parquet_budget_used(b), 0);
	floe_parquet_budget_free(b);
	T_EQ_INT(floe_output_close(o1, NULL), 0);
	T_EQ_INT(floe_output_close(o2, NULL), 0);

	/* with a callback: the owner is told which writer to flush */
	T_OK(floe_parquet_budget_new(&b, 100 << 10, on_over, NULL), &err);
	o.budget = b;
	floe_buf_clear(&f1);
	o1 = floe_output_buffer(&f1, "w1");
	T_OK(floe_parquet_writer_new(&w1, o1, ps, &o, &err), &err);
	T_OK(floe_parquet_writer_write(w1, &a, &s, &err), &err);
	T_CHECK(over_calls > 0 && over_largest == w1);
	T_CHECK(floe_parquet_writer_buffered(w1) > 0);
	T_CHECK(floe_parquet_writer_estimated_size(w1) > 0);
	T_EQ_INT(floe_parquet_budget_limit(b), 100 << 10);
	T_OK(floe_parquet_writer_flush_row_group(w1, &err), &err);
	/* the owner's flush is accounted at once: the budget no longer counts
	 * the memory it gave back (it named w1 again until w1's next write) */
	T_EQ_INT(floe_parquet_budget_used(b), floe_parquet_writer_buffered(w1));
	T_CHECK(floe_parquet_budget_used(b) < (100 << 10));
	/* estimated size: what is written plus what the row group holds */
	T_EQ_INT(floe_parquet_writer_estimated_size(w1), (int64_t)f1.len);
	T_OK(floe_parquet_writer_close(w1, &r, &err), &err);
	T_EQ_INT(r->record_count, N);
	floe_parquet_writer_free(w1);
	floe_parquet_budget_free(b);
	T_EQ_INT(floe_output_close(o1, NULL), 0);

	floe_buf_reset(&f1);
	floe_buf_reset(&f2);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_parquet_schema_free(ps);
}

static void test_caller_errors(void)
{
	floe_parquet_schema *ps = NULL;
	floe_error err = {0};
	floe_parquet_field f = FLOE_PARQUET_FIELD_INIT;
	struct ArrowSchema s;
	struct ArrowArray a;
	int64_t v[4] = {1, 2, 3, 4};
	bool valid[4] = {true, false, true, true};
	floe_buf file;
	floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
	T_OK(floe_parquet_schema_new(&ps, "t", &err), &err);
	f.name = "x";
	f.repetition = FLOE_PARQUET_REQUIRED;
	f.physical = FLOE_PARQUET_INT64;
	f.logical.kind = FLOE_PARQUET_LT_TIMESTAMP;
	f.logical.unit = FLOE_PARQUET_MICROS;
	f.logical.utc = true;
	T_OK(floe_parquet_schema_add(ps, NULL, &f, NULL, &err), &err);
	T_OK(floe_parquet_schema_finish(ps, &err), &err);
	floe_buf_init(&file, 0);

	/* a null in a required column */
	T_CHECK(floe_arrow_schema_init(&s, "+s", "", 0, 1) == 0);
	T_CHECK(floe_arrow_array_init(&a, 1, 1) == 0);
	a.length = 4;
	prim(s.children[0], a.children[0], "tsu:UTC", "x", v, 8, 4, valid);
	T_ERR(write_batch(&file, ps, &o, &a, &s, NULL, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "required") != NULL);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);

	/* naive timestamp into a UTC column; nanos into micros (lossy) */
	const char *bad[] = {"tsu:", "tsn:UTC", "l", "u"};
	for (size_t i = 0; i < 4; i++) {
		T_CHECK(floe_arrow_schema_init(&s, "+s", "", 0, 1) == 0);
		T_CHECK(floe_arrow_array_init(&a, 1, 1) == 0);
		a.length = 4;
		if (bad[i][0] == 'u') {
			const char *sv[4] = {"a", "b", "c", "d"};
			strs(s.children[0], a.children[0], "u", "x", sv, 4);
		} else {
			prim(s.children[0], a.children[0], bad[i], "x", v, 8, 4, NULL);
		}
		floe_buf_clear(&file);
		T_ERR(write_batch(&file, ps, &o, &a, &s, NULL, &err), FLOE_EINVAL);
		floe_arrow_array_release(&a);
		floe_arrow_schema_release(&s);
	}
	/* milliseconds are scaled up losslessly */
	T_CHECK(floe_arrow_schema_init(&s, "+s", "", 0, 1) == 0);
	T_CHECK(floe_arrow_array_init(&a, 1, 1) == 0);
	a.length = 4;
	prim(s.children[0], a.children[0], "tsm:UTC", "x", v, 8, 4, NULL);
	floe_buf_clear(&file);
	T_OK(write_batch(&file, ps, &o, &a, &s, NULL, &err), &err);
	floe_buf json;
	floe_buf_init(&json, 0);
	T_OK(read_json(&file, 100, &json, &err), &err);
	T_CHECK(strstr(floe_buf_cstr(&json), "\"1970-01-01T00:00:00.001000Z\"") != NULL);
	floe_buf_reset(&json);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);

	/* a batch that is not a struct of the schema's fields */
	T_CHECK(floe_arrow_schema_init(&s, "+s", "", 0, 2) == 0);
	T_CHECK(floe_arrow_array_init(&a, 1, 2) == 0);
	a.length = 4;
	prim(s.children[0], a.children[0], "tsu:UTC", "x", v, 8, 4, NULL);
	prim(s.children[1], a.children[1], "l", "y", v, 8, 4, NULL);
	T_ERR(write_batch(&file, ps, &o, &a, &s, NULL, &err), FLOE_EINVAL);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);

	/* bad options */
	o.page_version = 3;
	floe_parquet_writer *w = NULL;
	floe_output *out = floe_output_buffer(&file, "x");
	T_ERR(floe_parquet_writer_new(&w, out, ps, &o, &err), FLOE_EINVAL);
	o.page_version = 1;
	o.codec = FLOE_PARQUET_LZO;
	T_ERR(floe_parquet_writer_new(&w, out, ps, &o, &err), FLOE_EINVAL);
	floe_output_abort(out);
	floe_buf_reset(&file);
	floe_parquet_schema_free(ps);
}

/* The dictionary's run shortcut (a value equal to the one before it takes
 * its entry unhashed) gives the indices a lookup of each value gives:
 * first-seen order, -0.0/+0.0 and NaN payloads distinct, equal strings of
 * one length only, and the size limit stops before the first new value. */
static void test_dictionary_runs(void)
{
	floe_parquet_dict d;
	uint32_t idx[16];
	size_t done = 0;
	double nan1 = NAN, nan2;
	uint64_t bits;
	memcpy(&bits, &nan1, 8);
	bits ^= 1;
	memcpy(&nan2, &bits, 8);
	const double dv[] = {1.5, 1.5, 1.5, -0.0, 0.0, 0.0, 2.0, 1.5, nan1, nan1, nan2, 2.0, 2.0};
	const uint32_t dwant[] = {0, 0, 0, 1, 2, 2, 3, 0, 4, 4, 5, 3, 3};
	floe_parquet__dict_init(&d, 8);
	T_OK(floe_parquet__dict_put_fixed(&d, (const uint8_t *)dv, 13, idx, &done, 1 << 20), NULL);
	T_CHECK(done == 13 && d.n_entries == 6 && memcmp(idx, dwant, sizeof(dwant)) == 0);
	/* a run continues across calls through the lookup (indices stay right) */
	T_OK(floe_parquet__dict_put_fixed(&d, (const uint8_t *)dv + 8 * 11, 2, idx, &done, 1 << 20),
	     NULL);
	T_CHECK(done == 2 && idx[0] == 3 && idx[1] == 3 && d.n_entries == 6);
	/* full: a run of the last accepted value goes on, the next new value stops */
	const double lv[] = {7.0, 7.0, 8.0, 8.0};
	T_OK(floe_parquet__dict_put_fixed(&d, (const uint8_t *)lv, 4, idx, &done, 8 * 7), NULL);
	T_CHECK(done == 2 && idx[0] == 6 && idx[1] == 6 && d.n_entries == 7);
	floe_parquet__dict_reset(&d);

	const int32_t iv[] = {5, 5, 6, 6, 5};
	const uint32_t iwant[] = {0, 0, 1, 1, 0};
	floe_parquet__dict_init(&d, 4);
	T_OK(floe_parquet__dict_put_fixed(&d, (const uint8_t *)iv, 5, idx, &done, 1 << 20), NULL);
	T_CHECK(done == 5 && d.n_entries == 2 && memcmp(idx, iwant, sizeof(iwant)) == 0);
	floe_parquet__dict_reset(&d);

	static const char pad[] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
	const floe_parquet_view sv[] = {
		{(const uint8_t *)pad, 40}, {(const uint8_t *)pad + 1, 40}, {(const uint8_t *)pad, 39},
		{(const uint8_t *)"", 0},   {(const uint8_t *)"", 0},      {(const uint8_t *)"ab", 2},
		{(const uint8_t *)"ac", 2}, {(const uint8_t *)"ac", 2},    {(const uint8_t *)pad, 40},
	};
	const uint32_t swant[] = {0, 0, 1, 2, 2, 3, 4, 4, 0};
	floe_parquet__dict_init(&d, 0);
	T_OK(floe_parquet__dict_put_bytes(&d, sv, 9, idx, &done, 1 << 20), NULL);
	T_CHECK(done == 9 && d.n_entries == 5 && memcmp(idx, swant, sizeof(swant)) == 0);
	floe_parquet__dict_reset(&d);
}

int main(void)
{
	long live = floe_alloc__live();
	T_RUN(test_roundtrip_all_types);
	T_RUN(test_results_and_footer);
	T_RUN(test_leading_magic_checked_before_rows);
	T_RUN(test_float_zero_rule);
	T_RUN(test_dictionary_fallback_and_sizing);
	T_RUN(test_dictionary_runs);
	T_RUN(test_budget);
	T_RUN(test_caller_errors);
	floe_codec_thread_cleanup(); /* the codecs' per-thread contexts */
	T_EQ_INT(floe_alloc__live(), live);
	return t_finish();
}
