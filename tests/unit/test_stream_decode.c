/*
 * test_stream_decode.c — the JSON-lines and CSV decoders: every type and
 * coercion, nested values, missing/unknown/duplicate members, rollback of
 * a bad record, CSV quoting and headers.
 */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "iceberg/types.h"
#include "json/json.h"
#include "stream/stream_decode.h"
#include "util/timeutil.h"

static floe_arena g_arena;

static stream_col *make_root(const char *cols)
{
	floe_schema *s = NULL;
	floe_error err = {0};
	stream_col *c = calloc(1, sizeof(*c));
	T_OK(floe_schema_parse_compact(&s, &g_arena, cols, &err), &err);
	T_OK(stream_col_init(c, s->root, NULL, 0, false, &err), &err);
	return c;
}

static void free_root(stream_col *c)
{
	stream_col_reset(c);
	free(c);
}

static int64_t i64_at(const stream_col *c, int64_t r)
{
	int64_t v;
	memcpy(&v, c->vals + r * 8, 8);
	return v;
}

static int32_t i32_at(const stream_col *c, int64_t r)
{
	int32_t v;
	memcpy(&v, c->vals + r * 4, 4);
	return v;
}

static bool str_eq(const stream_col *c, int64_t r, const char *s)
{
	size_t n = (size_t)(c->offs[r + 1] - c->offs[r]);
	return n == strlen(s) && memcmp(c->data + c->offs[r], s, n) == 0;
}

static int json(stream_json_dec *d, stream_col *root, const char *rec)
{
	return stream_json_decode(d, root, rec, strlen(rec));
}

static void test_json_primitives(void)
{
	stream_col *r = make_root("id long not null, i int, b boolean, f float, d double, "
				  "amt decimal(10, 2), day date, t time, ts timestamptz, "
				  "lts timestamp, nts timestamptz_ns, s string, u uuid, "
				  "bin binary, fx fixed[3]");
	stream_json_dec d;
	stream_json_dec_init(&d, NULL);
	T_EQ_INT(json(&d, r,
		      "{\"id\": 1, \"i\": -5, \"b\": true, \"f\": 1.5, \"d\": 2.25e2, "
		      "\"amt\": \"12.345\", \"day\": \"2024-02-29\", \"t\": \"10:11:12.5\", "
		      "\"ts\": \"2024-01-01T10:00:00+02:00\", \"lts\": \"2024-01-01 10:00:00\", "
		      "\"nts\": \"2024-01-01T00:00:00.000000001Z\", \"s\": \"h\\u00e9\\n\\\"x\\\"\", "
		      "\"u\": \"f79c3e09-677c-4bbd-a479-3f349cb785e7\", \"bin\": \"AQID\", "
		      "\"fx\": \"AQID\"}"),
		 0);
	T_EQ_INT(json(&d, r, "{\"id\": 2, \"amt\": 7, \"ts\": 1700000000000, \"d\": \"NaN\", "
			     "\"i\": 3.0, \"day\": 19000, \"s\": {\"a\": [1, 2]}}"),
		 0);
	T_EQ_INT(r->len, 2);
	T_EQ_INT(r->kids[0].len, 2);
	T_EQ_INT(i64_at(&r->kids[0], 0), 1);
	T_EQ_INT(i32_at(&r->kids[1], 0), -5);
	T_EQ_INT(i32_at(&r->kids[1], 1), 3);
	T_CHECK(r->kids[2].vals[0] & 1);
	T_CHECK(stream_col_is_null(&r->kids[2], 1));
	float f;
	memcpy(&f, r->kids[3].vals, 4);
	T_CHECK(f == 1.5f);
	double dd;
	memcpy(&dd, r->kids[4].vals, 8);
	T_CHECK(dd == 225.0);
	memcpy(&dd, r->kids[4].vals + 8, 8);
	T_CHECK(isnan(dd));
	floe_i128 dec;
	memcpy(&dec, r->kids[5].vals, 16);
	T_EQ_INT((int64_t)dec, 1235); /* 12.345 rounds half-up to 12.35 */
	memcpy(&dec, r->kids[5].vals + 16, 16);
	T_EQ_INT((int64_t)dec, 700);
	T_EQ_INT(i32_at(&r->kids[6], 0), floe_days_from_civil(2024, 2, 29));
	T_EQ_INT(i32_at(&r->kids[6], 1), 19000);
	T_EQ_INT(i64_at(&r->kids[7], 0), (10 * 3600 + 11 * 60 + 12) * INT64_C(1000000) + 500000);
	int64_t base = floe_days_from_civil(2024, 1, 1) * FLOE_US_PER_DAY;
	T_EQ_INT(i64_at(&r->kids[8], 0), base + 8 * FLOE_US_PER_HOUR);
	T_EQ_INT(i64_at(&r->kids[8], 1), INT64_C(1700000000000000));
	T_EQ_INT(i64_at(&r->kids[9], 0), base + 10 * FLOE_US_PER_HOUR);
	T_EQ_INT(i64_at(&r->kids[10], 0), base * 1000 + 1);
	T_CHECK(str_eq(&r->kids[11], 0, "h\xc3\xa9\n\"x\""));
	T_CHECK(str_eq(&r->kids[11], 1, "{\"a\": [1, 2]}"));
	T_EQ_INT(r->kids[12].vals[0], 0xf7);
	T_EQ_INT(r->kids[12].vals[15], 0xe7);
	T_CHECK(str_eq(&r->kids[13], 0, "\x01\x02\x03"));
	T_EQ_INT(r->kids[14].vals[2], 3);
	for (size_t i = 1; i < r->n_kids; i++)
		T_EQ_INT(r->kids[i].len, 2);
	struct ArrowArray out;
	T_EQ_INT(stream_col_finish(r, &out), 0);
	T_EQ_INT(out.length, 2);
	T_EQ_INT(out.n_children, 15);
	T_EQ_INT(out.children[2]->null_count, 1);
	T_EQ_INT(out.children[0]->null_count, 0);
	out.release(&out);
	T_EQ_INT(r->len, 0);
	T_EQ_INT(json(&d, r, "{\"id\": 3}"), 0);
	T_EQ_INT(r->kids[11].len, 1);
	stream_json_dec_reset(&d);
	free_root(r);
}

/* The one-pass number path agrees with the general one (RFC 8259 check,
 * then stream_parse_i64 / stream_parse_f64) wherever it answers, and
 * leaves everything else to it; through the decoder, the same rows and
 * the same errors. */
static void test_json_fast_numbers(void)
{
	static const char *const nums[] = {
		"0", "-0", "7", "-7", "123456789012345678", "-123456789012345678",
		"1234567890123456789", "9007199254740992", "9007199254740993", "0.1", "-0.5",
		"12.3", "1.000000000000000001", "0.000000000000000001", "3.0", "00", "01", "-01",
		"1.", ".5", "-", "+1", "1e3", "1E-2", "1.5e", "0x10", "1-2", "2.5.1", "-0.0",
		"99999999999999999.9", "4503599627370497.5", "12345678", "-87654321.12345678",
		"123456789012345678.5", "1234567:", "1234567/", "00000000", "10000000.00000001",
		"99999999", "1234567a1234", "0.12345678901234567", "12345678901234567.8",
	};
	for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
		const char *x = nums[k];
		size_t n = strlen(x);
		bool is_int = false, d_ok = false;
		int64_t i = 0, gi;
		double d = 0, gd;
		size_t len = stream_json__fast_number(x, x + n, &is_int, &i, &d_ok, &d);
		if (!len)
			continue;
		/* where the general scanner stops too ("0x10": at the x) */
		T_CHECK(len == n || !strchr("0123456789+-.eE", x[len]));
		T_CHECK(floe_json_number_len(x, len) == len);
		if (is_int)
			T_CHECK(stream_parse_i64(x, len, &gi) && gi == i);
		if (d_ok)
			T_CHECK(stream_parse_f64(x, len, &gd) && memcmp(&gd, &d, 8) == 0);
	}
	/* answered: short integers and fractions; not: exponents, long, malformed */
	bool is_int, d_ok;
	int64_t i;
	double d;
	T_CHECK(stream_json__fast_number("12.3,", "12.3," + 5, &is_int, &i, &d_ok, &d) == 4 &&
		!is_int && d_ok && d == 12.3);
	T_CHECK(stream_json__fast_number("-0}", "-0}" + 3, &is_int, &i, &d_ok, &d) == 2 && is_int &&
		i == 0 && d_ok && signbit(d));
	T_CHECK(stream_json__fast_number("1e3", "1e3" + 3, &is_int, &i, &d_ok, &d) == 0);
	/* eight digits at a time, then one at a time */
	T_CHECK(stream_json__fast_number("-1234567890123,", "-1234567890123," + 15, &is_int, &i,
					 &d_ok, &d) == 14 &&
		is_int && i == INT64_C(-1234567890123));
	T_CHECK(stream_json__fast_number("87654321.00000001}", "87654321.00000001}" + 18, &is_int,
					 &i, &d_ok, &d) == 17 &&
		!is_int && d_ok && d == 87654321.00000001);
	T_CHECK(stream_json__fast_number("1234567:", "1234567:" + 8, &is_int, &i, &d_ok, &d) == 7 &&
		i == 1234567);
	T_CHECK(stream_json__fast_number("01", "01" + 2, &is_int, &i, &d_ok, &d) == 0);
	T_CHECK(stream_json__fast_number("1234567890123456789", "1234567890123456789" + 19, &is_int,
					 &i, &d_ok, &d) == 0);
	T_CHECK(stream_json__fast_number("9007199254740993", "9007199254740993" + 16, &is_int, &i,
					 &d_ok, &d) == 16 &&
		is_int && i == INT64_C(9007199254740993) && !d_ok);

	stream_col *r = make_root("l long, i int, d double");
	stream_json_dec dec;
	stream_json_dec_init(&dec, NULL);
	T_EQ_INT(json(&dec, r, "{\"l\": -123456789012345678, \"i\": -2147483648, \"d\": -0.0}"), 0);
	T_EQ_INT(json(&dec, r, "{\"l\": 9223372036854775807, \"i\": 3.0, \"d\": 9007199254740993}"),
		 0);
	T_EQ_INT(i64_at(&r->kids[0], 0), INT64_C(-123456789012345678));
	T_EQ_INT(i32_at(&r->kids[1], 0), INT32_MIN);
	T_EQ_INT(i64_at(&r->kids[0], 1), INT64_MAX);
	T_EQ_INT(i32_at(&r->kids[1], 1), 3);
	double dd;
	memcpy(&dd, r->kids[2].vals, 8);
	T_CHECK(dd == 0 && signbit(dd));
	memcpy(&dd, r->kids[2].vals + 8, 8);
	T_CHECK(dd == 9007199254740992.0); /* rounded to even, as strtod */
	/* errors the general path gives, rows rolled back */
	static const char *const bad[] = {
		"{\"i\": 2147483648}", "{\"i\": 3.5}", "{\"l\": 01}", "{\"l\": 1.}", "{\"d\": 1e}",
		"{\"d\": 0x10}",       "{\"l\": -}",   "{\"l\": 12a}",
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		T_EQ_INT(json(&dec, r, bad[k]), FLOE_EINVAL);
		T_CHECK(dec.why.msg[0] != 0);
		T_EQ_INT(r->len, 2);
	}
	stream_json_dec_reset(&dec);
	free_root(r);
}

static void test_json_errors_roll_back(void)
{
	stream_col *r = make_root("id long not null, s string, n struct<a: int, b: list<string>>");
	stream_json_dec d;
	stream_json_dec_init(&d, NULL);
	T_EQ_INT(json(&d, r, "{\"id\": 1, \"s\": \"ok\", \"n\": {\"a\": 1, \"b\": [\"x\", \"y\"]}}"), 0);
	static const char *bad[] = {
		"{\"s\": \"no id\"}",
		"{\"id\": null}",
		"{\"id\": \"abc\"}",
		"{\"id\": 1, \"id\": 2}",
		"{\"id\": 1, \"s\": \"x\", \"n\": {\"a\": 1, \"b\": [\"x\", 5, {]}}",
		"{\"id\": 1, \"n\": {\"a\": \"zz\"}}",
		"{\"id\": 1,}",
		"[1, 2]",
		"{\"id\": 1} x",
		"{\"id\": 1, \"s\": \"\xff\"}",
		"{\"id\": 1, \"s\": \"a\\q\"}",
		"{\"id\": 1, \"n\": [1]}",
		"{\"id\": 99999999999999999999}",
		/* RFC 8259 numbers (Jackson and Flink's JSON format refuse these) */
		"{\"id\": 1.}", "{\"id\": 01}", "{\"id\": +1}", "{\"id\": .5}", "{\"id\": -}",
		"{\"id\": 1e}", "{\"id\": -01}", "{\"id\": 1, \"s\": 01}",
		"{\"id\": 1, \"x\": 1.}", "{\"id\": 1, \"x\": [01]}",
		"{\"id\": 1, \"s\": {\"a\": 1e}}",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = json(&d, r, bad[i]);
		if (rc != FLOE_EINVAL)
			t_fail(__FILE__, __LINE__, "record %zu accepted", i);
		T_CHECK(d.why.msg[0] != 0);
		T_EQ_INT(r->len, 1);
		T_EQ_INT(r->kids[0].len, 1);
		T_EQ_INT(r->kids[1].len, 1);
		T_EQ_INT(r->kids[2].len, 1);
		T_EQ_INT(r->kids[2].kids[1].len, 1);
		T_EQ_INT(r->kids[2].kids[1].kids[0].len, 2);
		T_EQ_INT(r->kids[1].data_len, 2);
	}
	json(&d, r, "{\"id\": 1, \"n\": {\"a\": \"zz\"}}");
	T_EQ_STR(d.why.msg, "n.a: 'zz' is not an int");
	json(&d, r, "{\"id\": 01}");
	T_EQ_STR(d.why.msg, "id: JSON syntax error at byte 7: '01' is not a JSON number (RFC 8259)");
	json(&d, r, "{\"id\": +1}");
	T_EQ_STR(d.why.msg, "id: JSON syntax error at byte 7: '+1' is not a JSON number (RFC 8259)");
	json(&d, r, "{\"id\": .5}");
	T_EQ_STR(d.why.msg, "id: JSON syntax error at byte 7: '.5' is not a JSON number (RFC 8259)");
	json(&d, r, "{\"id\": 1, \"x\": +1}");
	T_CHECK(strstr(d.why.msg, "RFC 8259") != NULL);
	json(&d, r, "{\"s\": \"no id\"}");
	T_EQ_STR(d.why.msg, "missing required field 'id'");
	/* unknown members of any shape are skipped */
	T_EQ_INT(json(&d, r, "{\"x\": {\"y\": [1, {\"z\": null}], \"w\": \"\\u0041\"}, \"id\": 2, "
			     "\"n\": null, \"q\": -1.5e3}"),
		 0);
	T_EQ_INT(r->len, 2);
	T_CHECK(stream_col_is_null(&r->kids[2], 1));
	T_CHECK(stream_col_is_null(&r->kids[1], 1));
	stream_json_dec_reset(&d);
	free_root(r);
}

static void test_json_nested(void)
{
	stream_col *r = make_root("id int, tags list<string>, attrs map<string, long>, "
				  "pt struct<x: double, y: double not null>, "
				  "m2 map<int, list<int>>");
	stream_json_dec d;
	stream_json_dec_init(&d, NULL);
	T_EQ_INT(json(&d, r, "{\"id\": 1, \"tags\": [\"a\", \"b\", null], \"attrs\": {\"k\": 1, "
			     "\"l\": 2}, \"pt\": {\"y\": 2.5}, \"m2\": [[1, [1, 2]], [2, []]]}"),
		 0);
	T_EQ_INT(json(&d, r, "{\"id\": 2, \"tags\": [], \"m2\": {\"7\": [3]}}"), 0);
	const stream_col *tags = &r->kids[1];
	T_EQ_INT(tags->offs[1], 3);
	T_EQ_INT(tags->offs[2], 3);
	T_CHECK(stream_col_is_null(&tags->kids[0], 2));
	const stream_col *attrs = &r->kids[2];
	T_EQ_INT(attrs->offs[1], 2);
	T_CHECK(str_eq(&attrs->kids[0], 1, "l"));
	T_EQ_INT(i64_at(&attrs->kids[1], 1), 2);
	T_CHECK(stream_col_is_null(attrs, 1));
	const stream_col *pt = &r->kids[3];
	T_CHECK(stream_col_is_null(&pt->kids[0], 0));
	T_CHECK(stream_col_is_null(pt, 1));
	T_EQ_INT(pt->kids[1].len, 2);
	const stream_col *m2 = &r->kids[4];
	T_EQ_INT(m2->offs[2], 3);
	T_EQ_INT(i32_at(&m2->kids[0], 2), 7);
	T_EQ_INT(m2->kids[1].offs[3], 3);
	/* a required struct field missing inside the struct */
	T_EQ_INT(json(&d, r, "{\"pt\": {\"x\": 1}}"), FLOE_EINVAL);
	T_EQ_STR(d.why.msg, "pt: missing required field 'y'");
	struct ArrowArray out;
	T_EQ_INT(stream_col_finish(r, &out), 0);
	T_EQ_INT(out.children[2]->n_children, 1);
	T_EQ_INT(out.children[2]->children[0]->n_children, 2);
	T_EQ_INT(out.children[2]->children[0]->length, 2);
	out.release(&out);
	stream_json_dec_reset(&d);
	free_root(r);
}

static void test_copy_and_values(void)
{
	stream_col *a = make_root("id long, s string, l list<int>, st struct<q: string>");
	stream_col *b = make_root("id long, s string, l list<int>, st struct<q: string>");
	stream_json_dec d;
	stream_json_dec_init(&d, NULL);
	T_EQ_INT(json(&d, a, "{\"id\": 5, \"s\": \"five\", \"l\": [1, 2], \"st\": {\"q\": \"x\"}}"), 0);
	T_EQ_INT(json(&d, a, "{\"id\": 6}"), 0);
	T_EQ_INT(stream_col_copy_row(b, a, 1), 0);
	T_EQ_INT(stream_col_copy_row(b, a, 0), 0);
	T_EQ_INT(b->len, 2);
	T_EQ_INT(i64_at(&b->kids[0], 1), 5);
	T_CHECK(str_eq(&b->kids[1], 1, "five"));
	T_EQ_INT(b->kids[2].offs[2], 2);
	T_CHECK(str_eq(&b->kids[3].kids[0], 1, "x"));
	floe_value v;
	stream_col_value(&b->kids[1], 1, &v);
	T_EQ_INT(v.v.bin.n, 4);
	stream_col_value(&b->kids[1], 0, &v);
	T_CHECK(v.is_null);
	stream_json_dec_reset(&d);
	free_root(a);
	free_root(b);
}

static void test_coercions(void)
{
	floe_i128 v;
	T_CHECK(stream_parse_decimal("1.005", 5, 10, 2, &v) && v == 101);
	T_CHECK(stream_parse_decimal("-1.005", 6, 10, 2, &v) && v == -101);
	T_CHECK(stream_parse_decimal("1e2", 3, 10, 2, &v) && v == 10000);
	T_CHECK(stream_parse_decimal("0.004", 5, 10, 2, &v) && v == 0);
	T_CHECK(!stream_parse_decimal("123456789", 9, 10, 2, &v));
	T_CHECK(!stream_parse_decimal("1.2.3", 5, 10, 2, &v));
	T_CHECK(!stream_parse_decimal("abc", 3, 10, 2, &v));
	double d;
	T_CHECK(stream_parse_f64("0.1", 3, &d) && d == 0.1);
	T_CHECK(stream_parse_f64("123456789012345678901234567890", 30, &d) && d == 1.2345678901234568e29);
	T_CHECK(stream_parse_f64("-2.5e-3", 7, &d) && d == -2.5e-3);
	T_CHECK(!stream_parse_f64("1e", 2, &d));
	T_CHECK(!stream_parse_f64("--1", 3, &d));
	int64_t i;
	T_CHECK(stream_parse_i64("-9223372036854775808", 20, &i) && i == INT64_MIN);
	T_CHECK(!stream_parse_i64("9223372036854775808", 19, &i));
	T_CHECK(stream_utf8_valid((const uint8_t *)"h\xc3\xa9llo world, plain ascii", 25));
	T_CHECK(!stream_utf8_valid((const uint8_t *)"\xed\xa0\x80", 3)); /* surrogate */
	T_CHECK(!stream_utf8_valid((const uint8_t *)"\xc0\x80", 2));     /* overlong */
	stream_col *r = make_root("ts timestamptz, e timestamp");
	stream_coerce_opts o = {STREAM_EPOCH_S};
	stream_json_dec dj;
	stream_json_dec_init(&dj, &o);
	T_EQ_INT(json(&dj, r, "{\"ts\": 1.5, \"e\": \"1700000000\"}"), 0);
	T_EQ_INT(i64_at(&r->kids[0], 0), 1500000);
	T_EQ_INT(i64_at(&r->kids[1], 0), INT64_C(1700000000000000));
	stream_json_dec_reset(&dj);
	free_root(r);
	/* the fast timestamp path agrees with the generic parser */
	static const char *const ts[] = {
		"2024-02-29T23:59:59.999999Z", "2023-02-29T00:00:00Z", "2026-11-30 10:11:12",
		"2026-11-30T10:11:12.1", "2026-11-30T10:11:12.123456789+05:30", "1969-12-31T23:59:59.5Z",
		"2026-11-30T10:11:12-0800", "2026-11-30T10:11:12+01", "2026-11-30T24:00:00Z",
		"2026-13-01T00:00:00Z", "2026-11-30T10:11:12.Z", "2026-11-30T10:11:12z",
		"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "2026-11-30T10:11:12+19:00",
		"2026-11-30T10:11:60Z", "2026-04-31T00:00:00Z", "2026-11-30T10:11:12.1234567890Z",
	};
	for (size_t k = 0; k < sizeof(ts) / sizeof(ts[0]); k++) {
		const char *tsk = ts[k];
		stream_col *q = make_root("ts timestamptz");
		stream_json_dec dq;
		char rec[128];
		int64_t want;
		bool zone;
		stream_json_dec_init(&dq, NULL);
		snprintf(rec, sizeof(rec), "{\"ts\": \"%s\"}", tsk);
		int rc = json(&dq, q, rec);
		bool ok = floe_parse_timestamp_us(tsk, strlen(tsk), &want, &zone);
		if (!ok) {
			int64_t days = 0;
			ok = floe_parse_date(tsk, strlen(tsk), &days);
			if (ok)
				want = days * FLOE_US_PER_DAY;
		}
		if ((rc == 0) != ok || (ok && i64_at(&q->kids[0], 0) != want))
			t_fail(__FILE__, __LINE__, "timestamp '%s': rc %d, generic %d", tsk, rc, ok);
		stream_json_dec_reset(&dq);
		free_root(q);
	}
}

static int csv(stream_csv_dec *d, stream_col *r, const char *rec)
{
	return stream_csv_decode(d, r, rec, strlen(rec));
}

static void test_csv(void)
{
	stream_col *r = make_root("id long not null, name string, amt decimal(8, 2), "
				  "ts timestamptz, tags list<string>");
	stream_csv_dec d;
	stream_csv_opts o = {',', '"', true, "NULL", false};
	stream_csv_dec_init(&d, &o, NULL);
	const char *hdr = "\xef\xbb\xbf" "name,id , extra,ts,amt,tags\r\n";
	T_EQ_INT(stream_csv_set_header(&d, r, hdr, strlen(hdr)), 0);
	T_EQ_INT(csv(&d, r, "\"Smith, \"\"J\"\"\",1,x,2024-01-01T00:00:00Z, 3.5 ,\"[\"\"a\"\"]\"\r\n"), 0);
	T_EQ_INT(csv(&d, r, "NULL,2,,,,"), 0);
	T_EQ_INT(csv(&d, r, "\"\",3"), 0);
	T_EQ_INT(csv(&d, r, "x,notanumber"), FLOE_EINVAL);
	T_EQ_STR(d.why.msg, "id: 'notanumber' is not a long");
	T_EQ_INT(csv(&d, r, "x,"), FLOE_EINVAL);
	T_EQ_INT(csv(&d, r, "x,4,a,b,c,d,e"), FLOE_EINVAL);
	T_EQ_INT(csv(&d, r, "\"unterminated,5"), FLOE_EINVAL);
	T_EQ_INT(r->len, 3);
	T_CHECK(str_eq(&r->kids[1], 0, "Smith, \"J\""));
	T_CHECK(stream_col_is_null(&r->kids[1], 1));
	T_CHECK(str_eq(&r->kids[1], 2, ""));
	T_EQ_INT(i64_at(&r->kids[0], 2), 3);
	floe_i128 dec;
	memcpy(&dec, r->kids[2].vals, 16);
	T_EQ_INT((int64_t)dec, 350);
	T_EQ_INT(r->kids[4].offs[1], 1);
	T_CHECK(stream_col_is_null(&r->kids[4], 1));
	bool complete;
	const char *two = "a,\"b\nc\"\nnext";
	T_EQ_INT(stream_csv_record_len(two, strlen(two), '"', &complete), 8);
	T_CHECK(complete);
	T_EQ_INT(stream_csv_record_len(two + 8, 4, '"', &complete), 4);
	T_CHECK(!complete);
	T_EQ_INT(stream_csv_set_header(&d, r, "nothing,here", 12), FLOE_EINVAL);
	stream_csv_dec_reset(&d);
	stream_csv_dec_init(&d, NULL, NULL);
	T_EQ_INT(stream_csv_set_positional(&d, r), 0);
	T_EQ_INT(csv(&d, r, "9,nine"), 0);
	T_CHECK(str_eq(&r->kids[1], 3, "nine"));
	stream_csv_dec_reset(&d);
	free_root(r);
}

int main(void)
{
	floe_arena_init(&g_arena, 65536);
	T_RUN(test_json_primitives);
	T_RUN(test_json_fast_numbers);
	T_RUN(test_json_errors_roll_back);
	T_RUN(test_json_nested);
	T_RUN(test_copy_and_values);
	T_RUN(test_coercions);
	T_RUN(test_csv);
	floe_arena_reset(&g_arena);
	return t_finish();
}
