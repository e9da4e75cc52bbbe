/*
 * test_write_take.c — the Arrow kernels the write layer fans out with:
 * take() for every layout (every Iceberg column type as
 * floe_iceberg_arrow_schema lays it out, nested structs/lists/maps, and the
 * other formats the helpers parse: narrow and unsigned ints, half floats,
 * large strings/binaries/lists, fixed-size lists, decimal256, date64,
 * durations, null), with nulls, offsets and repeated indices; zero-copy
 * slices; and typed views (arrow_view.h) with nullable parent structs.
 */
#include <math.h>
#include <stdlib.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "arrow/arrow_fmt.h"
#include "arrow/arrow_take.h"
#include "arrow/arrow_view.h"
#include "harness.h"
#include "iceberg/arrow_schema.h"
#include "json_batch.h"
#include "util/alloc.h"

/* ---- logical comparison of two arrays' rows ---------------------------------------- */

static bool bitv(const struct ArrowArray *a, int64_t j)
{
	const uint8_t *v = a->n_buffers > 0 && a->null_count != 0 ? a->buffers[0] : NULL;
	return !v || ((v[j >> 3] >> (j & 7)) & 1);
}

static bool row_eq(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
		   const struct ArrowArray *b, int64_t j)
{
	floe_arrow_fmt f;
	int64_t pa = i + a->offset, pb = j + b->offset;
	if (floe_arrow_fmt_parse(&f, s->format, NULL))
		return false;
	if (f.type == FLOE_ARROW_NA)
		return true;
	bool va = bitv(a, pa), vb = bitv(b, pb);
	if (va != vb)
		return false;
	if (!va)
		return true;
	switch (f.type) {
	case FLOE_ARROW_BOOL: {
		const uint8_t *x = a->buffers[1], *y = b->buffers[1];
		return ((x[pa >> 3] >> (pa & 7)) & 1) == ((y[pb >> 3] >> (pb & 7)) & 1);
	}
	case FLOE_ARROW_STRING:
	case FLOE_ARROW_BINARY: {
		const int32_t *oa = a->buffers[1], *ob = b->buffers[1];
		int32_t la = oa[pa + 1] - oa[pa], lb = ob[pb + 1] - ob[pb];
		return la == lb && memcmp((const uint8_t *)a->buffers[2] + oa[pa],
					  (const uint8_t *)b->buffers[2] + ob[pb], (size_t)la) == 0;
	}
	case FLOE_ARROW_LARGE_STRING:
	case FLOE_ARROW_LARGE_BINARY: {
		const int64_t *oa = a->buffers[1], *ob = b->buffers[1];
		int64_t la = oa[pa + 1] - oa[pa], lb = ob[pb + 1] - ob[pb];
		return la == lb && memcmp((const uint8_t *)a->buffers[2] + oa[pa],
					  (const uint8_t *)b->buffers[2] + ob[pb], (size_t)la) == 0;
	}
	case FLOE_ARROW_STRUCT:
		for (int64_t c = 0; c < s->n_children; c++)
			if (!row_eq(s->children[c], a->children[c], pa, b->children[c], pb))
				return false;
		return true;
	case FLOE_ARROW_LIST:
	case FLOE_ARROW_MAP:
	case FLOE_ARROW_LARGE_LIST: {
		int64_t sa, ea, sb, eb;
		if (f.type == FLOE_ARROW_LARGE_LIST) {
			const int64_t *oa = a->buffers[1], *ob = b->buffers[1];
			sa = oa[pa], ea = oa[pa + 1], sb = ob[pb], eb = ob[pb + 1];
		} else {
			const int32_t *oa = a->buffers[1], *ob = b->buffers[1];
			sa = oa[pa], ea = oa[pa + 1], sb = ob[pb], eb = ob[pb + 1];
		}
		if (ea - sa != eb - sb)
			return false;
		for (int64_t k = 0; k < ea - sa; k++)
			if (!row_eq(s->children[0], a->children[0], sa + k, b->children[0], sb + k))
				return false;
		return true;
	}
	case FLOE_ARROW_FIXED_LIST:
		for (int32_t k = 0; k < f.width; k++)
			if (!row_eq(s->children[0], a->children[0], pa * f.width + k, b->children[0],
				    pb * f.width + k))
				return false;
		return true;
	default: {
		int w = floe_arrow_fmt_byte_width(&f);
		return memcmp((const uint8_t *)a->buffers[1] + pa * w,
			      (const uint8_t *)b->buffers[1] + pb * w, (size_t)w) == 0;
	}
	}
}

/* take(a, idx) must equal a row by row through idx, and pass the checks. */
static void check_take(const struct ArrowSchema *s, const struct ArrowArray *a,
		       const int64_t *idx, int64_t n)
{
	struct ArrowArray t;
	floe_error err = {0};
	T_OK(floe_arrow_take(&t, s, a, idx, n, &err), &err);
	if (!t.release)
		return;
	T_EQ_INT(t.length, n);
	T_EQ_INT(t.offset, 0);
	T_OK(floe_arrow_check(s, &t, &err), &err);
	for (int64_t i = 0; i < n; i++)
		if (!row_eq(s, &t, i, a, idx[i])) {
			t_fail(__FILE__, __LINE__, "%s: row %lld (source %lld) differs", s->format,
			       (long long)i, (long long)idx[i]);
			break;
		}
	int64_t nulls = 0;
	for (int64_t i = 0; i < n; i++)
		nulls += !bitv(&t, i);
	if (strcmp(s->format, "n") != 0)
		T_EQ_INT(t.null_count, nulls);
	floe_arrow_array_release(&t);
}

/* ---- every Iceberg type, nested, from JSON rows --------------------------------------- */

static const char *all_types =
	"b boolean, i int, l long, f float, d double, dec decimal(9,2), dec18 decimal(18,4), "
	"dec38 decimal(38,10), dt date, tm time, ts timestamp, tstz timestamptz, ts_ns "
	"timestamp_ns, tstz_ns timestamptz_ns, s string, u uuid, fx fixed[3], bin binary, "
	"st struct<a: int, b: string, inner: struct<x: double, y: list<long>>>, "
	"ls list<string>, lst list<struct<k: int, v: string>>, lls list<list<int>>, "
	"m map<string, int>, ms map<int, struct<p: string, q: list<double>>>";

static const char *rows[] = {
	"{\"b\": true, \"i\": -1, \"l\": 9223372036854775807, \"f\": 1.5, \"d\": -0.0, "
	"\"dec\": \"-1.25\", \"dec18\": \"12345678901234.5678\", \"dec38\": "
	"\"-1234567890123456789012345678.0123456789\", \"dt\": \"1969-12-31\", \"tm\": "
	"\"23:59:59.999999\", \"ts\": \"1969-12-31T23:59:59.999999\", \"tstz\": "
	"\"2017-11-16T22:31:08+00:00\", \"ts_ns\": \"1960-01-01T00:00:00.000000001\", "
	"\"tstz_ns\": \"2024-02-29T12:00:00.123456789+00:00\", \"s\": \"h\u00e9llo \u4e16\u754c "
	"\U0001F600\", \"u\": \"f79c3e09-677c-4bbd-a479-3f349cb785e7\", \"fx\": \"00ff10\", "
	"\"bin\": \"deadbeef\", \"st\": {\"a\": 1, \"b\": \"x\", \"inner\": {\"x\": 2.5, \"y\": [1, "
	"null, 3]}}, \"ls\": [\"a\", null, \"ccc\"], \"lst\": [{\"k\": 1, \"v\": \"one\"}, null], "
	"\"lls\": [[1, 2], [], null, [3]], \"m\": {\"a\": 1, \"b\": null}, \"ms\": {\"keys\": [7], "
	"\"values\": [{\"p\": \"pp\", \"q\": [1.0, \"NaN\"]}]}}",
	"{}",
	"{\"b\": false, \"i\": 2147483647, \"l\": -9223372036854775808, \"f\": \"NaN\", \"d\": "
	"\"-Infinity\", \"dec\": \"0.00\", \"s\": \"\", \"bin\": \"\", \"st\": {\"inner\": null}, "
	"\"ls\": [], \"lst\": [], \"lls\": [], \"m\": {}, \"ms\": {\"keys\": [], \"values\": []}}",
	"{\"i\": -2147483648, \"st\": null, \"ls\": null, \"s\": \"\u00ff\u00fe\", \"m\": "
	"{\"k\": 42}, \"dt\": \"0001-01-01\", \"ts\": \"9999-12-31T23:59:59.999999\"}",
	"{\"b\": true, \"st\": {\"a\": null, \"b\": null, \"inner\": {\"x\": null, \"y\": []}}, "
	"\"lls\": [[null]], \"lst\": [{\"k\": null, \"v\": null}]}",
};

static void build_all(floe_arena *ar, floe_schema **s, struct ArrowArray *a,
		      struct ArrowSchema *as, int repeat)
{
	json_batch *jb = NULL;
	floe_error err = {0};
	T_OK(floe_schema_parse_compact(s, ar, all_types, &err), &err);
	T_OK(json_batch_new(&jb, *s, &err), &err);
	for (int r = 0; r < repeat; r++)
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
			T_OK(json_batch_append_text(jb, rows[i], strlen(rows[i]), &err), &err);
	T_OK(json_batch_finish(jb, a, as, &err), &err);
	T_OK(floe_arrow_check(as, a, &err), &err);
	json_batch_free(jb);
}

static void test_take_every_iceberg_type(void)
{
	floe_arena ar;
	floe_schema *s;
	struct ArrowArray a;
	struct ArrowSchema as;
	int64_t n;
	floe_arena_init(&ar, 0);
	build_all(&ar, &s, &a, &as, 7);
	n = a.length;
	/* the comparator sees differences (rows repeat every 5) */
	T_CHECK(row_eq(&as, &a, 0, &a, 5));
	for (int64_t r = 1; r < 5; r++)
		T_CHECK(!row_eq(&as, &a, 0, &a, r));
	T_CHECK(!row_eq(as.children[20], a.children[20], 0, a.children[20], 2)); /* lst */
	T_CHECK(!row_eq(as.children[23], a.children[23], 0, a.children[23], 2)); /* ms */
	int64_t *idx = malloc(sizeof(int64_t) * (size_t)(3 * n));
	/* identity, reversed, repeated/shuffled, every other, empty */
	for (int64_t i = 0; i < n; i++)
		idx[i] = i;
	check_take(&as, &a, idx, n);
	for (int64_t i = 0; i < n; i++)
		idx[i] = n - 1 - i;
	check_take(&as, &a, idx, n);
	for (int64_t i = 0; i < 3 * n; i++)
		idx[i] = (i * 7919) % n;
	check_take(&as, &a, idx, 3 * n);
	for (int64_t i = 0; i < n / 2; i++)
		idx[i] = 2 * i + 1;
	check_take(&as, &a, idx, n / 2);
	check_take(&as, &a, idx, 0);
	/* every column alone, so each format is checked at the top level too */
	for (int64_t c = 0; c < as.n_children; c++) {
		for (int64_t i = 0; i < n; i++)
			idx[i] = (i * 31) % n;
		check_take(as.children[c], a.children[c], idx, n);
	}
	/* a sliced batch: the struct offset applies to the children */
	struct ArrowArray sl;
	floe_arrow_slice_view(&sl, &a, 3, n - 5);
	for (int64_t i = 0; i < n - 5; i++)
		idx[i] = (n - 6) - i;
	check_take(&as, &sl, idx, n - 5);
	sl.release(&sl);
	T_CHECK(sl.release == NULL);
	/* out of range */
	floe_error err = {0};
	struct ArrowArray t;
	idx[0] = n;
	T_ERR(floe_arrow_take(&t, &as, &a, idx, 1, &err), FLOE_EINVAL);
	idx[0] = -1;
	T_ERR(floe_arrow_take(&t, &as, &a, idx, 1, &err), FLOE_EINVAL);
	free(idx);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&as);
	floe_arena_reset(&ar);
}

/* ---- formats beyond the Iceberg mapping, built by hand -------------------------------- */

static void *dup_mem(const void *p, size_t n)
{
	void *q = floe_malloc(n ? n : 1);
	memcpy(q, p, n);
	return q;
}

static uint8_t *validity(const bool *v, int64_t n, int64_t *nulls)
{
	uint8_t *b = floe_calloc(1, (size_t)(n + 7) / 8 + 1);
	*nulls = 0;
	for (int64_t i = 0; i < n; i++) {
		if (v[i])
			b[i >> 3] |= (uint8_t)(1 << (i & 7));
		else
			(*nulls)++;
	}
	return b;
}

static void fixed_col(struct ArrowSchema *s, struct ArrowArray *a, const char *fmt,
		      const void *vals, size_t width, int64_t n, const bool *valid)
{
	int64_t nulls;
	T_CHECK(floe_arrow_schema_init(s, fmt, "c", ARROW_FLAG_NULLABLE, 0) == 0);
	T_CHECK(floe_arrow_array_init(a, 2, 0) == 0);
	a->length = n;
	floe_arrow_array_set_buffer(a, 0, validity(valid, n, &nulls));
	a->null_count = nulls;
	floe_arrow_array_set_buffer(a, 1, dup_mem(vals, width * (size_t)n));
}

static void test_take_other_formats(void)
{
	static const bool valid[8] = {true, false, true, true, false, true, true, true};
	static const int64_t idx[] = {7, 0, 0, 4, 2, 5, 1, 6, 3, 7};
	const int64_t ni = sizeof(idx) / sizeof(idx[0]);
	struct ArrowSchema s;
	struct ArrowArray a;
	floe_error err = {0};

	/* fixed widths */
	static const struct {
		const char *fmt;
		size_t width;
	} fixed[] = {{"c", 1},	  {"C", 1},	   {"s", 2},	 {"S", 2},	{"I", 4},
		     {"L", 8},	  {"e", 2},	   {"tdm", 8},	 {"tts", 4},	{"ttn", 8},
		     {"tss:", 8}, {"tsm:Europe/Paris", 8}, {"tDu", 8}, {"d:40,5,256", 32},
		     {"w:5", 5}};
	uint8_t data[8 * 32];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 37 + 11);
	for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
		fixed_col(&s, &a, fixed[k].fmt, data, fixed[k].width, 8, valid);
		check_take(&s, &a, idx, ni);
		floe_arrow_array_release(&a);
		floe_arrow_schema_release(&s);
	}

	/* large string and large binary */
	for (int k = 0; k < 2; k++) {
		static const int64_t offs[9] = {0, 1, 1, 4, 4, 4, 9, 10, 13};
		int64_t nulls;
		T_OK(floe_arrow_schema_init(&s, k ? "Z" : "U", "c", ARROW_FLAG_NULLABLE, 0), &err);
		T_OK(floe_arrow_array_init(&a, 3, 0), &err);
		a.length = 8;
		floe_arrow_array_set_buffer(&a, 0, validity(valid, 8, &nulls));
		a.null_count = nulls;
		floe_arrow_array_set_buffer(&a, 1, dup_mem(offs, sizeof(offs)));
		floe_arrow_array_set_buffer(&a, 2, dup_mem("abcdefghijklm", 13));
		check_take(&s, &a, idx, ni);
		floe_arrow_array_release(&a);
		floe_arrow_schema_release(&s);
	}

	/* null type */
	T_OK(floe_arrow_schema_init(&s, "n", "c", ARROW_FLAG_NULLABLE, 0), &err);
	T_OK(floe_arrow_array_init(&a, 0, 0), &err);
	a.length = 8;
	a.null_count = 8;
	check_take(&s, &a, idx, ni);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);

	/* large list<int16> whose child has an offset, and nulls with non-empty ranges */
	{
		static const int64_t offs[9] = {0, 2, 5, 5, 6, 9, 9, 10, 12};
		static const int16_t kids[14] = {99, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
		static const bool kvalid[14] = {true, true, false, true, true, true,  true,
						true, true, true,  false, true, true, true};
		int64_t nulls;
		T_OK(floe_arrow_schema_init(&s, "+L", "c", ARROW_FLAG_NULLABLE, 1), &err);
		T_OK(floe_arrow_schema_init(s.children[0], "s", "item", ARROW_FLAG_NULLABLE, 0), &err);
		T_OK(floe_arrow_array_init(&a, 2, 1), &err);
		a.length = 8;
		floe_arrow_array_set_buffer(&a, 0, validity(valid, 8, &nulls));
		a.null_count = nulls;
		floe_arrow_array_set_buffer(&a, 1, dup_mem(offs, sizeof(offs)));
		struct ArrowArray *c = a.children[0];
		T_OK(floe_arrow_array_init(c, 2, 0), &err);
		c->length = 13;
		c->offset = 1;
		floe_arrow_array_set_buffer(c, 0, validity(kvalid, 14, &nulls));
		c->null_count = nulls;
		floe_arrow_array_set_buffer(c, 1, dup_mem(kids, sizeof(kids)));
		T_OK(floe_arrow_check(&s, &a, &err), &err);
		check_take(&s, &a, idx, ni);
		floe_arrow_array_release(&a);
		floe_arrow_schema_release(&s);
	}

	/* fixed-size list<bool> of 3, and a struct with an offset around it */
	{
		static const bool bits[24] = {1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 0,
					      1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1};
		int64_t nulls;
		struct ArrowSchema st;
		struct ArrowArray sa;
		T_OK(floe_arrow_schema_init(&st, "+s", "", 0, 1), &err);
		T_OK(floe_arrow_schema_init(st.children[0], "+w:3", "c", ARROW_FLAG_NULLABLE, 1), &err);
		T_OK(floe_arrow_schema_init(st.children[0]->children[0], "b", "item", 0, 0), &err);
		T_OK(floe_arrow_array_init(&sa, 1, 1), &err);
		sa.length = 6;
		sa.offset = 2;
		struct ArrowArray *fl = sa.children[0];
		T_OK(floe_arrow_array_init(fl, 1, 1), &err);
		fl->length = 8;
		floe_arrow_array_set_buffer(fl, 0, validity(valid, 8, &nulls));
		fl->null_count = nulls;
		struct ArrowArray *b = fl->children[0];
		T_OK(floe_arrow_array_init(b, 2, 0), &err);
		b->length = 24;
		int64_t dummy;
		floe_arrow_array_set_buffer(b, 1, validity(bits, 24, &dummy));
		T_OK(floe_arrow_check(&st, &sa, &err), &err);
		static const int64_t sidx[] = {5, 0, 3, 3, 1, 4, 2};
		check_take(&st, &sa, sidx, 7);
		floe_arrow_array_release(&sa);
		floe_arrow_schema_release(&st);
	}
}

/* ---- typed views ------------------------------------------------------------------- */

static void test_views(void)
{
	floe_arena ar;
	floe_schema *s;
	struct ArrowArray a;
	struct ArrowSchema as;
	floe_arrow_view root, st, inner, x, v;
	floe_error err = {0};
	size_t n;
	floe_arena_init(&ar, 0);
	build_all(&ar, &s, &a, &as, 1);
	T_OK(floe_arrow_view_init(&root, &as, &a, &err), &err);
	/* i: int32 */
	T_OK(floe_arrow_view_child(&v, &root, as.children[1], a.children[1], &err), &err);
	T_EQ_INT(floe_arrow_view_int(&v, 0), -1);
	T_CHECK(!floe_arrow_view_valid(&v, 1));
	T_EQ_INT(floe_arrow_view_int(&v, 2), 2147483647);
	T_EQ_INT(floe_arrow_view_int(&v, 3), -2147483648LL);
	/* b: bool */
	T_OK(floe_arrow_view_child(&v, &root, as.children[0], a.children[0], &err), &err);
	T_EQ_INT(floe_arrow_view_int(&v, 0), 1);
	T_EQ_INT(floe_arrow_view_int(&v, 2), 0);
	/* d: -0.0 keeps its sign */
	T_OK(floe_arrow_view_child(&v, &root, as.children[4], a.children[4], &err), &err);
	T_CHECK(signbit(floe_arrow_view_real(&v, 0)) && floe_arrow_view_real(&v, 0) == 0.0);
	/* s: string bytes */
	T_OK(floe_arrow_view_child(&v, &root, as.children[14], a.children[14], &err), &err);
	const uint8_t *p = floe_arrow_view_bytes(&v, 3, &n);
	T_EQ_INT(n, 4);
	T_CHECK(memcmp(p, "\xc3\xbf\xc3\xbe", 4) == 0);
	/* st.inner.x: null where st (row 3) or inner (row 2) is null */
	T_OK(floe_arrow_view_child(&st, &root, as.children[18], a.children[18], &err), &err);
	T_OK(floe_arrow_view_child(&inner, &st, as.children[18]->children[2],
				   a.children[18]->children[2], &err),
	     &err);
	T_OK(floe_arrow_view_child(&x, &inner, as.children[18]->children[2]->children[0],
				   a.children[18]->children[2]->children[0], &err),
	     &err);
	T_CHECK(floe_arrow_view_valid(&x, 0));
	T_CHECK(floe_arrow_view_real(&x, 0) == 2.5);
	T_CHECK(!floe_arrow_view_valid(&x, 1));
	T_CHECK(!floe_arrow_view_valid(&x, 2));
	T_CHECK(!floe_arrow_view_valid(&x, 3));
	T_CHECK(!floe_arrow_view_valid(&x, 4));
	T_CHECK(floe_arrow_view_nullable(&x));
	/* the same through a sliced batch */
	struct ArrowArray sl;
	floe_arrow_slice_view(&sl, &a, 2, 3);
	T_OK(floe_arrow_view_init(&root, &as, &sl, &err), &err);
	T_OK(floe_arrow_view_child(&v, &root, as.children[1], a.children[1], &err), &err);
	T_EQ_INT(floe_arrow_view_int(&v, 0), 2147483647);
	T_EQ_INT(floe_arrow_view_int(&v, 1), -2147483648LL);
	/* not a struct */
	T_ERR(floe_arrow_view_child(&v, &v, as.children[1], a.children[1], &err), FLOE_EINVAL);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&as);
	floe_arena_reset(&ar);
}

/* No per-value allocation: a take of 100k string rows allocates a handful
 * of buffers, and everything is freed on release. */
static void test_take_allocations(void)
{
	floe_arena ar;
	floe_schema *s;
	json_batch *jb;
	struct ArrowArray a, t;
	struct ArrowSchema as;
	floe_error err = {0};
	floe_arena_init(&ar, 0);
	T_OK(floe_schema_parse_compact(&s, &ar, "id long, name string, tags list<string>", &err),
	     &err);
	T_OK(json_batch_new(&jb, s, &err), &err);
	for (int i = 0; i < 100000; i++) {
		char row[128];
		int len = snprintf(row, sizeof(row),
				   "{\"id\": %d, \"name\": \"n%d\", \"tags\": [\"a\", \"b%d\"]}", i,
				   i % 97, i % 5);
		T_OK(json_batch_append_text(jb, row, (size_t)len, &err), &err);
	}
	T_OK(json_batch_finish(jb, &a, &as, &err), &err);
	json_batch_free(jb);
	int64_t *idx = malloc(sizeof(int64_t) * 100000);
	for (int i = 0; i < 100000; i++)
		idx[i] = 99999 - i;
	long before = floe_alloc__live();
	T_OK(floe_arrow_take(&t, &as, &a, idx, 100000, &err), &err);
	long during = floe_alloc__live();
	T_CHECK(during - before < 20);
	floe_arrow_array_release(&t);
	T_EQ_INT(floe_alloc__live(), before);
	free(idx);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&as);
	floe_arena_reset(&ar);
}

int main(void)
{
	T_RUN(test_take_every_iceberg_type);
	T_RUN(test_take_other_formats);
	T_RUN(test_views);
	T_RUN(test_take_allocations);
	return t_finish();
}
