/*
 * test_iceberg_values.c — every vector of ../shared/testdata/spec-vectors.md
 * sections 1-7: bucket hashes and values, truncate, temporal transforms,
 * human strings, binary and JSON single-value serialization.
 */
#include <math.h>

#include "harness.h"
#include "iceberg/metrics.h"
#include "iceberg/transform.h"
#include "iceberg/value.h"
#include "iceberg/variant.h"
#include "util/rand.h"
#include "util/str.h"
#include "util/timeutil.h"

static floe_arena A;

static floe_value vi(int32_t x)
{
	floe_value v = {.type = FLOE_T_INT};
	v.v.i32 = x;
	return v;
}
static floe_value vl(floe_type_id t, int64_t x)
{
	floe_value v = {.type = t};
	v.v.i64 = x;
	return v;
}
static floe_value vs(floe_type_id t, const void *p, size_t n)
{
	floe_value v = {.type = t};
	v.v.bin.p = p;
	v.v.bin.n = n;
	return v;
}
static floe_value vdec(floe_i128 u)
{
	floe_value v = {.type = FLOE_T_DECIMAL};
	v.v.dec = u;
	return v;
}
static const floe_type *P(floe_type_id id)
{
	return floe_type_primitive(id);
}

static void test_hash_vectors(void)
{
	uint8_t uuid[16];
	T_CHECK(floe_uuid_parse("f79c3e09-677c-4bbd-a479-3f349cb785e7", 36, uuid));
	floe_value v;
	v = vi(34);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_INT)), 2017239379);
	v = vl(FLOE_T_LONG, 34);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_LONG)), 2017239379);
	v = vdec(1420);
	T_EQ_INT(floe_bucket_hash(&v, floe_type_decimal(&A, 4, 2)), -500754589);
	v = vi(17486);
	v.type = FLOE_T_DATE;
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_DATE)), -653330422);
	v = vl(FLOE_T_TIME, INT64_C(81068000000));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_TIME)), -662762989);
	v = vl(FLOE_T_TIMESTAMP, INT64_C(1510871468000000));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_TIMESTAMP)), -2047944441);
	v = vl(FLOE_T_TIMESTAMP, INT64_C(1510871468000001));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_TIMESTAMP)), -1207196810);
	v = vl(FLOE_T_TIMESTAMPTZ, INT64_C(1510871468000001));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_TIMESTAMPTZ)), -1207196810);
	v = vl(FLOE_T_TIMESTAMP_NS, INT64_C(1510871468000001001));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_TIMESTAMP_NS)), -1207196810);
	v = vl(FLOE_T_TIMESTAMPTZ_NS, INT64_C(1510871468000000000));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_TIMESTAMPTZ_NS)), -2047944441);
	/* the same instants in the other micro/nano types (spec-vectors 1) */
	v = vl(FLOE_T_TIMESTAMPTZ, INT64_C(1510871468000000));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_TIMESTAMPTZ)), -2047944441);
	v = vl(FLOE_T_TIMESTAMP_NS, INT64_C(1510871468000000000));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_TIMESTAMP_NS)), -2047944441);
	v = vl(FLOE_T_TIMESTAMPTZ_NS, INT64_C(1510871468000001001));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_TIMESTAMPTZ_NS)), -1207196810);
	v = vs(FLOE_T_STRING, "iceberg", 7);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_STRING)), 1210000089);
	v = vs(FLOE_T_UUID, uuid, 16);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_UUID)), 1488055340);
	v = vs(FLOE_T_BINARY, "\x00\x01\x02\x03", 4);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_BINARY)), -188683207);
	v = vs(FLOE_T_FIXED, "\x00\x01\x02\x03", 4);
	T_EQ_INT(floe_bucket_hash(&v, floe_type_fixed(&A, 4)), -188683207);
	v = (floe_value){.type = FLOE_T_BOOLEAN};
	v.v.b = true;
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_BOOLEAN)), 1392991556);
	v = (floe_value){.type = FLOE_T_DOUBLE};
	v.v.f64 = 1.0;
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_DOUBLE)), -142385009);
	v = (floe_value){.type = FLOE_T_FLOAT};
	v.v.f32 = 1.0f;
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_FLOAT)), -142385009);
	v.v.f32 = -0.0f;
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_FLOAT)), 1669671676);
	v.v.f32 = 0.0f;
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_FLOAT)), 1669671676);
	v = (floe_value){.type = FLOE_T_DOUBLE};
	v.v.f64 = 0.0;
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_DOUBLE)), 1669671676);
	v.v.f64 = -0.0;
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_DOUBLE)), 1669671676);
	v = (floe_value){.type = FLOE_T_DOUBLE};
	v.v.f64 = NAN;
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_DOUBLE)), 1428788237);
	v = vs(FLOE_T_STRING, "34", 2);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_STRING)), -427558391);
	/* derived values (spec-vectors 2.4) */
	v = vi(-1);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_INT)), 1651860712);
	v = vi(0);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_INT)), 1669671676);
	v = vi(1);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_INT)), 1392991556);
	v = vl(FLOE_T_LONG, INT64_C(1) << 40);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_LONG)), -1443483870);
	v = vs(FLOE_T_STRING, "", 0);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_STRING)), 0);
	v = vs(FLOE_T_BINARY, "", 0);
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_BINARY)), 0);
	const char *money = "string with a surrogate pair: \xf0\x9f\x92\xb0";
	v = vs(FLOE_T_STRING, money, strlen(money));
	T_EQ_INT(floe_bucket_hash(&v, P(FLOE_T_STRING)), -1601900220);
}

static int32_t bucket(int32_t n, const floe_value *v, const floe_type *t)
{
	floe_transform tr = {.kind = FLOE_TR_BUCKET, .param = n};
	floe_value out;
	floe_error err;
	if (floe_transform_apply(&out, &tr, t, v, &err))
		return -999;
	return out.v.i32;
}

static void test_bucket_values(void)
{
	uint8_t uuid[16];
	floe_uuid_parse("f79c3e09-677c-4bbd-a479-3f349cb785e7", 36, uuid);
	floe_value v = vi(0);
	T_EQ_INT(bucket(2, &v, P(FLOE_T_INT)), 0);
	v = vi(34);
	T_EQ_INT(bucket(100, &v, P(FLOE_T_INT)), 79);
	v = vl(FLOE_T_LONG, 34);
	T_EQ_INT(bucket(100, &v, P(FLOE_T_LONG)), 79);
	v = vi(17486);
	v.type = FLOE_T_DATE;
	T_EQ_INT(bucket(100, &v, P(FLOE_T_DATE)), 26);
	v = vl(FLOE_T_TIME, INT64_C(81068000000));
	T_EQ_INT(bucket(100, &v, P(FLOE_T_TIME)), 59);
	v = vl(FLOE_T_TIMESTAMP, INT64_C(1510871468000000));
	T_EQ_INT(bucket(100, &v, P(FLOE_T_TIMESTAMP)), 7);
	v = vdec(1420);
	T_EQ_INT(bucket(100, &v, floe_type_decimal(&A, 9, 2)), 59);
	v = vdec(-128);
	T_EQ_INT(bucket(16, &v, floe_type_decimal(&A, 5, 2)), 13);
	v = vs(FLOE_T_STRING, "iceberg", 7);
	T_EQ_INT(bucket(100, &v, P(FLOE_T_STRING)), 89);
	v = vs(FLOE_T_UUID, uuid, 16);
	T_EQ_INT(bucket(100, &v, P(FLOE_T_UUID)), 40);
	v = vs(FLOE_T_FIXED, "foo", 3);
	T_EQ_INT(bucket(128, &v, floe_type_fixed(&A, 3)), 32);
	v = vs(FLOE_T_BINARY, "\x00\x01\x02\x03", 4);
	T_EQ_INT(bucket(128, &v, P(FLOE_T_BINARY)), 57);
	v = vi(10);
	T_EQ_INT(bucket(2, &v, P(FLOE_T_INT)), 0);
	v = vi(-1);
	T_EQ_INT(bucket(16, &v, P(FLOE_T_INT)), 8);
	v = vi(0);
	T_EQ_INT(bucket(16, &v, P(FLOE_T_INT)), 12);
	v = vi(1);
	T_EQ_INT(bucket(16, &v, P(FLOE_T_INT)), 4);
	v = vi(34);
	T_EQ_INT(bucket(16, &v, P(FLOE_T_INT)), 3);
	const char *money = "string with a surrogate pair: \xf0\x9f\x92\xb0";
	v = vs(FLOE_T_STRING, money, strlen(money));
	T_EQ_INT(bucket(100, &v, P(FLOE_T_STRING)), 28);
}

static floe_value trunc_apply(int32_t w, const floe_value *v, const floe_type *t)
{
	floe_transform tr = {.kind = FLOE_TR_TRUNCATE, .param = w};
	floe_value out = {0};
	floe_error err;
	if (floe_transform_apply(&out, &tr, t, v, &err))
		t_fail(__FILE__, __LINE__, "truncate failed: %s", err.msg);
	return out;
}

static void check_dec_trunc(int32_t p, int32_t s, int32_t w, const char *in, const char *want)
{
	const floe_type *t = floe_type_decimal(&A, p, s);
	floe_value v = {.type = FLOE_T_DECIMAL};
	char buf[64];
	T_CHECK(floe_decimal_parse(&v.v.dec, in, strlen(in), p, s) == 0);
	floe_value r = trunc_apply(w, &v, t);
	floe_decimal_format(buf, sizeof(buf), r.v.dec, s);
	T_EQ_STR(buf, want);
}

static void test_truncate(void)
{
	static const int32_t ints[][2] = {{1, 0},     {5, 0},	   {9, 0},     {10, 10}, {11, 10},
					  {0, 0},     {-1, -10}, {-10, -10}, {-12, -20}};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		floe_value v = vi(ints[i][0]);
		T_EQ_INT(trunc_apply(10, &v, P(FLOE_T_INT)).v.i32, ints[i][1]);
		v = vl(FLOE_T_LONG, ints[i][0]);
		T_EQ_INT(trunc_apply(10, &v, P(FLOE_T_LONG)).v.i64, ints[i][1]);
	}
	floe_value v = vi(12345);
	T_EQ_INT(trunc_apply(10, &v, P(FLOE_T_INT)).v.i32, 12340);
	v = vl(FLOE_T_LONG, INT64_C(4294967297));
	T_EQ_INT(trunc_apply(2, &v, P(FLOE_T_LONG)).v.i64, INT64_C(4294967296));
	check_dec_trunc(9, 2, 10, "12.34", "12.30");
	check_dec_trunc(9, 2, 10, "12.30", "12.30");
	check_dec_trunc(9, 2, 10, "12.29", "12.20");
	check_dec_trunc(9, 2, 10, "0.05", "0.00");
	check_dec_trunc(9, 2, 10, "-0.05", "-0.10");
	check_dec_trunc(9, 2, 10, "0.0", "0.00");
	check_dec_trunc(9, 2, 50, "10.65", "10.50");
	check_dec_trunc(5, 2, 5, "678.93", "678.90");
	check_dec_trunc(8, 5, 1, "14.21", "14.21000");
	static const struct {
		int32_t w;
		const char *in, *out;
	} strs[] = {{3, "iceberg", "ice"}, {5, "abcdefg", "abcde"}, {5, "abc", "abc"},
		    {5, "", ""},	   {1, "foo", "f"},	    {1, "\xe2\x98\x83" "de", "\xe2\x98\x83"},
		    {3, "abcdefg", "abc"}};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		v = vs(FLOE_T_STRING, strs[i].in, strlen(strs[i].in));
		floe_value r = trunc_apply(strs[i].w, &v, P(FLOE_T_STRING));
		T_EQ_INT(r.v.bin.n, strlen(strs[i].out));
		T_CHECK(memcmp(r.v.bin.p, strs[i].out, r.v.bin.n) == 0);
	}
	v = vs(FLOE_T_BINARY, "\x01\x02\x03\x04\x05", 5);
	T_EQ_INT(trunc_apply(3, &v, P(FLOE_T_BINARY)).v.bin.n, 3);
	v = vs(FLOE_T_BINARY, "\xe2\x98\x83" "de", 5);
	floe_value r = trunc_apply(1, &v, P(FLOE_T_BINARY));
	T_EQ_INT(r.v.bin.n, 1);
	T_EQ_INT(r.v.bin.p[0], 0xe2);
	v = vs(FLOE_T_BINARY, "\x00\x01\x02\x03", 4);
	r = trunc_apply(1, &v, P(FLOE_T_BINARY));
	T_EQ_INT(r.v.bin.n, 1);
	T_EQ_INT(r.v.bin.p[0], 0x00);
	/* a negative decimal can round down past its precision: Java cannot write
	 * -100000000.00 as decimal(10, 2) and refuses the record; floe too */
	{
		const floe_type *t10 = floe_type_decimal(&A, 10, 2);
		floe_transform tr = {.kind = FLOE_TR_TRUNCATE, .param = 100};
		floe_value dv = {.type = FLOE_T_DECIMAL}, dout;
		floe_error derr = {0};
		T_CHECK(floe_decimal_parse(&dv.v.dec, "-99999999.99", 12, 10, 2) == 0);
		T_EQ_INT(floe_transform_apply(&dout, &tr, t10, &dv, &derr), FLOE_EINVAL);
		T_EQ_STR(derr.msg, "truncate[100] of -99999999.99 is -100000000.00, which does not "
				   "fit decimal(10, 2)");
		check_dec_trunc(10, 2, 100, "-99999998.99", "-99999999.00");
		check_dec_trunc(10, 2, 100, "99999999.99", "99999999.00");
	}
	/* Java's int arithmetic wraps: truncate[3] of Integer.MIN_VALUE is
	 * Integer.MAX_VALUE (docs/interop.md) */
	v = vi(INT32_MIN);
	T_EQ_INT(trunc_apply(3, &v, P(FLOE_T_INT)).v.i32, INT32_MAX);
	/* Spark-verified */
	v = vs(FLOE_T_BINARY, "HELLOICEBERG", 12);
	r = trunc_apply(10, &v, P(FLOE_T_BINARY));
	T_EQ_INT(r.v.bin.n, 10);
	T_CHECK(memcmp(r.v.bin.p, "HELLOICEBE", 10) == 0);
}

/* Java's UUID order: two signed longs */
static int java_uuid_cmp(const uint8_t *a, const uint8_t *b)
{
	for (int half = 0; half < 2; half++) {
		int64_t x = 0, y = 0;
		for (int i = 0; i < 8; i++) {
			x = (int64_t)((uint64_t)x << 8 | a[half * 8 + i]);
			y = (int64_t)((uint64_t)y << 8 | b[half * 8 + i]);
		}
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

static void test_uuid_bounds(void)
{
	uint8_t lo[16], hi[16], ol[16], oh[16];
	bool hl, hh;
	/* values on both sides of the top bit: no bound valid in both orders */
	memset(lo, 0, 16);
	memset(hi, 0, 16);
	lo[0] = 0x12;
	hi[0] = 0x9a;
	floe_uuid_bounds_both_orders(lo, hi, ol, oh, &hl, &hh);
	T_CHECK(!hl && !hh);
	/* random UUIDs in one half: variant bits 10xx in byte 8 make the low halves
	 * negative to Java; the lower bound holds, the upper is widened */
	lo[0] = 0x12;
	lo[8] = 0xa0;
	hi[0] = 0x34;
	hi[8] = 0x9f;
	floe_uuid_bounds_both_orders(lo, hi, ol, oh, &hl, &hh);
	T_CHECK(hl && hh);
	T_CHECK(memcmp(ol, lo, 16) == 0);
	uint8_t want_hi[16] = {0x34, 0, 0, 0, 0, 0, 0, 1};
	T_CHECK(memcmp(oh, want_hi, 16) == 0);
	/* a low half with the top bit clear below: the lower bound steps down */
	lo[8] = 0x10;
	floe_uuid_bounds_both_orders(lo, hi, ol, oh, &hl, &hh);
	uint8_t want_lo[16] = {0x11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	T_CHECK(hl && memcmp(ol, want_lo, 16) == 0);
	/* one high half, low halves on one side of their top bit: exact */
	memcpy(hi, lo, 16);
	hi[15] = 7;
	floe_uuid_bounds_both_orders(lo, hi, ol, oh, &hl, &hh);
	T_CHECK(hl && hh && memcmp(ol, lo, 16) == 0 && memcmp(oh, hi, 16) == 0);
	/* no step past the top bit: 00.. cannot step down, 7f..ff cannot step up */
	memset(lo, 0, 16);
	memset(hi, 0x7f, 1);
	memset(hi + 1, 0xff, 15);
	floe_uuid_bounds_both_orders(lo, hi, ol, oh, &hl, &hh);
	T_CHECK(!hl && !hh);
	/* every pair of random UUIDs of one half: the bounds hold in both orders */
	uint64_t r = 0x9e3779b97f4a7c15ull; /* xorshift: the same cases every run */
	for (int k = 0; k < 2000; k++) {
		uint8_t u[8][16];
		for (int i = 0; i < 8; i++) {
			for (int j = 0; j < 16; j++)
			{
				r ^= r << 13;
				r ^= r >> 7;
				r ^= r << 17;
				u[i][j] = (uint8_t)(r >> 32);
			}
			if (k & 1)
				u[i][0] &= 0x7f; /* one half */
			else
				u[i][0] |= 0x80;
			if (k & 2)
				memcpy(u[i], u[0], 8); /* one high half */
		}
		memcpy(lo, u[0], 16);
		memcpy(hi, u[0], 16);
		for (int i = 1; i < 8; i++) {
			if (memcmp(u[i], lo, 16) < 0)
				memcpy(lo, u[i], 16);
			if (memcmp(u[i], hi, 16) > 0)
				memcpy(hi, u[i], 16);
		}
		floe_uuid_bounds_both_orders(lo, hi, ol, oh, &hl, &hh);
		for (int i = 0; i < 8; i++) {
			if (hl && (memcmp(ol, u[i], 16) > 0 || java_uuid_cmp(ol, u[i]) > 0))
				t_fail(__FILE__, __LINE__, "lower bound above a value (case %d)", k);
			if (hh && (memcmp(oh, u[i], 16) < 0 || java_uuid_cmp(oh, u[i]) < 0))
				t_fail(__FILE__, __LINE__, "upper bound below a value (case %d)", k);
			t_checks++;
		}
	}
}

/* the bounds a data file gets: zero bounds cover both zeros, UUID bounds hold
 * in Java's order too or are not written */
static void test_metrics_bounds(void)
{
	floe_metrics_mode full = {FLOE_METRICS_FULL, 0};
	floe_id_bytes lo[2], hi[2];
	size_t nl = 0, nh = 0;
	floe_value z = {.type = FLOE_T_DOUBLE}, nz = {.type = FLOE_T_DOUBLE};
	z.v.f64 = 0.0;
	nz.v.f64 = -0.0;
	T_OK(floe_metrics_bounds(lo, &nl, hi, &nh, &A, 5, &z, &nz, full), NULL);
	T_EQ_INT(nl, 1);
	T_EQ_INT(nh, 1);
	T_CHECK(lo[0].n == 8 && lo[0].p[7] == 0x80); /* lower 0.0 written -0.0 */
	T_CHECK(hi[0].n == 8 && hi[0].p[7] == 0x00); /* upper -0.0 written +0.0 */
	floe_value f = {.type = FLOE_T_FLOAT};
	f.v.f32 = -0.0f;
	nl = nh = 0;
	T_OK(floe_metrics_bounds(lo, &nl, hi, &nh, &A, 6, &f, &f, full), NULL);
	T_CHECK(nl == 1 && nh == 1 && lo[0].p[3] == 0x80 && hi[0].p[3] == 0x00);
	uint8_t a[16] = {0x12}, b[16] = {0x9a};
	floe_value ua = {.type = FLOE_T_UUID}, ub = {.type = FLOE_T_UUID};
	ua.v.bin.p = a;
	ua.v.bin.n = 16;
	ub.v.bin.p = b;
	ub.v.bin.n = 16;
	nl = nh = 0;
	T_OK(floe_metrics_bounds(lo, &nl, hi, &nh, &A, 7, &ua, &ub, full), NULL);
	T_CHECK(nl == 0 && nh == 0); /* straddling the top bit: none */
	b[0] = 0x34;
	b[8] = 0x10;
	a[8] = 0x80;
	T_OK(floe_metrics_bounds(lo, &nl, hi, &nh, &A, 7, &ua, &ub, full), NULL);
	T_CHECK(nl == 1 && nh == 1 && memcmp(lo[0].p, a, 16) == 0 && memcmp(hi[0].p, b, 16) == 0);
	nl = nh = 0;
	T_OK(floe_metrics_bounds(lo, &nl, hi, &nh, &A, 7, &ua, NULL, full), NULL);
	T_CHECK(nl == 0 && nh == 0); /* one side alone cannot be checked */
}

static int32_t temporal(floe_transform_kind k, const floe_value *v, const floe_type *t)
{
	floe_transform tr = {.kind = k};
	floe_value out;
	floe_error err;
	if (floe_transform_apply(&out, &tr, t, v, &err))
		return -99999;
	return out.v.i32;
}

static void check_temporal(floe_type_id tid, int64_t val, int32_t y, int32_t m, int32_t d,
			   int32_t h)
{
	floe_value v = tid == FLOE_T_DATE ? vi((int32_t)val) : vl(tid, val);
	v.type = tid;
	T_EQ_INT(temporal(FLOE_TR_YEAR, &v, P(tid)), y);
	T_EQ_INT(temporal(FLOE_TR_MONTH, &v, P(tid)), m);
	T_EQ_INT(temporal(FLOE_TR_DAY, &v, P(tid)), d);
	if (tid != FLOE_T_DATE)
		T_EQ_INT(temporal(FLOE_TR_HOUR, &v, P(tid)), h);
}

static void test_temporal(void)
{
	check_temporal(FLOE_T_TIMESTAMP, INT64_C(1512123175038194), 47, 575, 17501, 420034);
	check_temporal(FLOE_T_TIMESTAMP, INT64_C(1000001), 0, 0, 0, 0);
	check_temporal(FLOE_T_TIMESTAMP, -1, -1, -1, -1, -1);
	check_temporal(FLOE_T_TIMESTAMP_NS, INT64_C(1512123175038194789), 47, 575, 17501, 420034);
	check_temporal(FLOE_T_TIMESTAMP_NS, -1, -1, -1, -1, -1);
	check_temporal(FLOE_T_TIMESTAMPTZ, INT64_C(1512151975038194), 47, 575, 17501, 420042);
	check_temporal(FLOE_T_DATE, 17501, 47, 575, 17501, 0);
	check_temporal(FLOE_T_DATE, -1, -1, -1, -1, 0);
	check_temporal(FLOE_T_DATE, 0, 0, 0, 0, 0);
	/* Spark-verified */
	int64_t us;
	bool z;
	T_CHECK(floe_parse_timestamp_us("2023-01-01T11:55:59.999999", 26, &us, &z));
	check_temporal(FLOE_T_TIMESTAMP, us, 53, 636, 19358, 464603);
	T_CHECK(floe_parse_timestamp_us("2023-01-01T12:00:01.000999+03:00", 32, &us, &z));
	check_temporal(FLOE_T_TIMESTAMPTZ, us, 53, 636, 19358, 464601);
}

static const char *human(floe_transform_kind k, int32_t param, const floe_type *src,
			 const floe_value *in)
{
	static char out[8][128];
	static int slot;
	floe_transform tr = {.kind = k, .param = param};
	floe_value r;
	floe_buf b;
	floe_error err;
	char *o = out[slot++ % 8];
	floe_buf_init(&b, 0);
	if (floe_transform_apply(&r, &tr, src, in, &err) || floe_transform_human(&b, &tr, src, &r))
		snprintf(o, 128, "<error>");
	else
		snprintf(o, 128, "%s", floe_buf_cstr(&b));
	floe_buf_reset(&b);
	return o;
}

static void test_human_strings(void)
{
	floe_value ts = vl(FLOE_T_TIMESTAMP, INT64_C(1512123175038194));
	T_EQ_STR(human(FLOE_TR_YEAR, 0, P(FLOE_T_TIMESTAMP), &ts), "2017");
	T_EQ_STR(human(FLOE_TR_MONTH, 0, P(FLOE_T_TIMESTAMP), &ts), "2017-12");
	T_EQ_STR(human(FLOE_TR_DAY, 0, P(FLOE_T_TIMESTAMP), &ts), "2017-12-01");
	T_EQ_STR(human(FLOE_TR_HOUR, 0, P(FLOE_T_TIMESTAMP), &ts), "2017-12-01-10");
	floe_value neg = vl(FLOE_T_TIMESTAMP, -1);
	T_EQ_STR(human(FLOE_TR_YEAR, 0, P(FLOE_T_TIMESTAMP), &neg), "1969");
	T_EQ_STR(human(FLOE_TR_MONTH, 0, P(FLOE_T_TIMESTAMP), &neg), "1969-12");
	T_EQ_STR(human(FLOE_TR_DAY, 0, P(FLOE_T_TIMESTAMP), &neg), "1969-12-31");
	T_EQ_STR(human(FLOE_TR_HOUR, 0, P(FLOE_T_TIMESTAMP), &neg), "1969-12-31-23");
	floe_value zero = vl(FLOE_T_TIMESTAMP, 0);
	T_EQ_STR(human(FLOE_TR_HOUR, 0, P(FLOE_T_TIMESTAMP), &zero), "1970-01-01-00");
	T_EQ_STR(human(FLOE_TR_YEAR, 0, P(FLOE_T_TIMESTAMP), &zero), "1970");
	T_EQ_STR(human(FLOE_TR_MONTH, 0, P(FLOE_T_TIMESTAMP), &zero), "1970-01");
	T_EQ_STR(human(FLOE_TR_DAY, 0, P(FLOE_T_TIMESTAMP), &zero), "1970-01-01");
	floe_value dt = vi(17501);
	dt.type = FLOE_T_DATE;
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_DATE), &dt), "2017-12-01");
	floe_value tz = vl(FLOE_T_TIMESTAMPTZ, INT64_C(1512151975038194));
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_TIMESTAMPTZ), &tz),
		 "2017-12-01T18:12:55.038194+00:00");
	floe_value t2 = vl(FLOE_T_TIMESTAMP, INT64_C(1512151975038194));
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_TIMESTAMP), &t2), "2017-12-01T18:12:55.038194");
	floe_value t3 = vl(FLOE_T_TIMESTAMP, INT64_C(1672574401000000));
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_TIMESTAMP), &t3), "2023-01-01T12:00:01");
	/* Java's ISO_LOCAL_DATE_TIME (DateTimeUtil.microsToIsoTimestamp[tz]):
	 * seconds always, trailing zeros of the fraction stripped; PyIceberg's
	 * isoformat also always prints seconds */
	floe_value t4 = vl(FLOE_T_TIMESTAMPTZ, 0);
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_TIMESTAMPTZ), &t4), "1970-01-01T00:00:00+00:00");
	floe_value t5 = vl(FLOE_T_TIMESTAMP, INT64_C(1672574400120000));
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_TIMESTAMP), &t5), "2023-01-01T12:00:00.12");
	floe_value t6 = vl(FLOE_T_TIMESTAMP_NS, INT64_C(-1));
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_TIMESTAMP_NS), &t6),
		 "1969-12-31T23:59:59.999999999");
	/* time keeps LocalTime.toString(), as Java's humanTime does */
	floe_value tm0 = vl(FLOE_T_TIME, INT64_C(36720000000));
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_TIME), &tm0), "10:12");
	floe_value tm = vl(FLOE_T_TIME, INT64_C(36775038194));
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_TIME), &tm), "10:12:55.038194");
	floe_value bin = vs(FLOE_T_BINARY, "foo", 3);
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_BINARY), &bin), "Zm9v");
	floe_value bin2 = vs(FLOE_T_BINARY, "\x00\x01\x02\x03", 4);
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_BINARY), &bin2), "AAECAw==");
	floe_value snow = vs(FLOE_T_FIXED, "\xe2\x98\x83" "de", 5);
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, floe_type_fixed(&A, 5), &snow), "4piDZGU=");
	floe_value plain = vs(FLOE_T_STRING, "a/b/c=d", 7);
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_STRING), &plain), "a/b/c=d");
	floe_value d2 = vdec(1421);
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, floe_type_decimal(&A, 4, 2), &d2), "14.21");
	floe_value tzid = vl(FLOE_T_TIMESTAMPTZ, INT64_C(1672563601000999));
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_TIMESTAMPTZ), &tzid),
		 "2023-01-01T09:00:01.000999+00:00");
	floe_value d = vdec(-150);
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, floe_type_decimal(&A, 5, 2), &d), "-1.50");
	floe_value l = vl(FLOE_T_LONG, INT64_C(-1234567890000));
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_LONG), &l), "-1234567890000");
	floe_value f = {.type = FLOE_T_FLOAT};
	f.v.f32 = 3.14f;
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_FLOAT), &f), "3.14");
	floe_value db = {.type = FLOE_T_DOUBLE};
	db.v.f64 = 6.282;
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_DOUBLE), &db), "6.282");
	floe_value nul = floe_value_null(FLOE_T_INT);
	T_EQ_STR(human(FLOE_TR_IDENTITY, 0, P(FLOE_T_INT), &nul), "null");
	floe_value b2 = vi(10);
	T_EQ_STR(human(FLOE_TR_BUCKET, 2, P(FLOE_T_INT), &b2), "0");
	/* partition path encoding */
	floe_buf b;
	floe_buf_init(&b, 0);
	T_OK(floe_urlencode_form(&b, "2023-01-01T12:00:01.000999", 26), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "2023-01-01T12%3A00%3A01.000999");
	floe_buf_clear(&b);
	T_OK(floe_urlencode_form(&b, "special#string+field", 20), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "special%23string%2Bfield");
	floe_buf_clear(&b);
	T_OK(floe_urlencode_form(&b, "special string", 14), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "special+string");
	floe_buf_clear(&b);
	T_OK(floe_urlencode_form(&b, "SEVMTE9JQ0VCRQ==", 16), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "SEVMTE9JQ0VCRQ%3D%3D");
	floe_buf_clear(&b);
	T_OK(floe_urlencode_form(&b, "2023-01-01T09:00:01.000999+00:00", 32), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "2023-01-01T09%3A00%3A01.000999%2B00%3A00");
	floe_buf_reset(&b);
}

static const char *hexb(const floe_value *v)
{
	static char out[4][80];
	static int slot;
	char *o = out[slot++ % 4];
	floe_buf b, h;
	floe_buf_init(&b, 0);
	floe_buf_init(&h, 0);
	if (floe_value_to_bytes(&b, v) || floe_hex_encode(&h, b.data, b.len))
		snprintf(o, 80, "<error>");
	else
		snprintf(o, 80, "%s", floe_buf_cstr(&h));
	floe_buf_reset(&b);
	floe_buf_reset(&h);
	return o;
}

static void check_dec_bytes(int32_t p, int32_t s, const char *txt, const char *hex)
{
	floe_value v = {.type = FLOE_T_DECIMAL};
	T_CHECK(floe_decimal_parse(&v.v.dec, txt, strlen(txt), p, s) == 0);
	T_EQ_STR(hexb(&v), hex);
	/* and back */
	floe_buf b;
	floe_value w;
	floe_error err;
	floe_buf_init(&b, 0);
	T_CHECK(floe_value_to_bytes(&b, &v) == 0);
	T_OK(floe_value_from_bytes(&w, floe_type_decimal(&A, p, s), b.data, b.len, &err), &err);
	T_CHECK(w.v.dec == v.v.dec);
	floe_buf_reset(&b);
}

static void test_binary_serialization(void)
{
	floe_value v = {.type = FLOE_T_BOOLEAN};
	T_EQ_STR(hexb(&v), "00");
	v.v.b = true;
	T_EQ_STR(hexb(&v), "01");
	v = vi(84202);
	T_EQ_STR(hexb(&v), "ea480100");
	v = vi(1234);
	T_EQ_STR(hexb(&v), "d2040000");
	v = vl(FLOE_T_LONG, 200);
	T_EQ_STR(hexb(&v), "c800000000000000");
	v = vl(FLOE_T_LONG, 1234);
	T_EQ_STR(hexb(&v), "d204000000000000");
	v = (floe_value){.type = FLOE_T_FLOAT};
	v.v.f32 = -4.5f;
	T_EQ_STR(hexb(&v), "000090c0");
	v.v.f32 = 1.2345f;
	T_EQ_STR(hexb(&v), "19049e3f");
	v = (floe_value){.type = FLOE_T_DOUBLE};
	v.v.f64 = 6.0;
	T_EQ_STR(hexb(&v), "0000000000001840");
	v.v.f64 = 1.2345;
	T_EQ_STR(hexb(&v), "8d976e1283c0f33f");
	v = vi(1000);
	v.type = FLOE_T_DATE;
	T_EQ_STR(hexb(&v), "e8030000");
	v = vl(FLOE_T_TIME, 10000);
	T_EQ_STR(hexb(&v), "1027000000000000");
	v = vl(FLOE_T_TIME, INT64_C(100000000000));
	T_EQ_STR(hexb(&v), "00e8764817000000");
	v = vl(FLOE_T_TIMESTAMPTZ, 400000);
	T_EQ_STR(hexb(&v), "801a060000000000");
	v = vl(FLOE_T_TIMESTAMP, 400000);
	T_EQ_STR(hexb(&v), "801a060000000000");
	v = vl(FLOE_T_TIMESTAMP_NS, 400000000);
	T_EQ_STR(hexb(&v), "0084d71700000000");
	v = vl(FLOE_T_TIMESTAMPTZ_NS, 400000000);
	T_EQ_STR(hexb(&v), "0084d71700000000");
	v = vs(FLOE_T_STRING, "ABC", 3);
	T_EQ_STR(hexb(&v), "414243");
	uint8_t uuid[16];
	T_CHECK(floe_uuid_parse("f79c3e09-677c-4bbd-a479-3f349cb785e7", 36, uuid));
	v = vs(FLOE_T_UUID, uuid, 16);
	T_EQ_STR(hexb(&v), "f79c3e09677c4bbda4793f349cb785e7");
	v = vs(FLOE_T_FIXED, "ab", 2);
	T_EQ_STR(hexb(&v), "6162");
	v = vs(FLOE_T_BINARY, "Z", 1);
	T_EQ_STR(hexb(&v), "5a");
	check_dec_bytes(3, 2, "3.45", "0159");
	check_dec_bytes(5, 2, "123.45", "3039");
	check_dec_bytes(4, 2, "12.34", "04d2");
	check_dec_bytes(7, 4, "123.4567", "12d687");
	check_dec_bytes(7, 4, "-123.4567", "ed2979");
	check_dec_bytes(10, 3, "0.011", "0b");
	check_dec_bytes(5, 2, "-1.28", "80");
	check_dec_bytes(5, 2, "1.28", "0080");
	check_dec_bytes(5, 2, "0", "00");
	check_dec_bytes(38, 0, "99999999999999999999999999999999999999",
			"4b3b4ca85a86c47a098a223fffffffff");
	/* lenient reads: sign-extended decimal, promoted long and double */
	floe_value r;
	floe_error err;
	T_OK(floe_value_from_bytes(&r, floe_type_decimal(&A, 7, 4),
				   (const uint8_t *)"\xff\xed\x29\x79", 4, &err),
	     &err);
	T_CHECK(r.v.dec == -1234567);
	T_OK(floe_value_from_bytes(&r, P(FLOE_T_LONG), (const uint8_t *)"\xd2\x04\x00\x00", 4, &err),
	     &err);
	T_EQ_INT(r.v.i64, 1234);
	/* any non-zero byte reads as true */
	T_OK(floe_value_from_bytes(&r, P(FLOE_T_BOOLEAN), (const uint8_t *)"\x07", 1, &err), &err);
	T_CHECK(r.v.b);
	T_ERR(floe_value_from_bytes(&r, P(FLOE_T_INT), (const uint8_t *)"\x01\x02", 2, &err),
	      FLOE_ECORRUPT);
}

static const char *json_of(const floe_value *v, const floe_type *t)
{
	static char out[4][128];
	static int slot;
	char *o = out[slot++ % 4];
	floe_buf b;
	floe_jw w;
	floe_buf_init(&b, 0);
	floe_jw_init(&w, &b, 0);
	floe_value_write_json(&w, v, t);
	snprintf(o, 128, "%s", floe_jw_finish(&w) ? "<error>" : floe_buf_cstr(&b));
	floe_buf_reset(&b);
	return o;
}

static void test_json_single_values(void)
{
	floe_value v = vdec(1420);
	T_EQ_STR(json_of(&v, floe_type_decimal(&A, 9, 2)), "\"14.20\"");
	v = vi(17486);
	v.type = FLOE_T_DATE;
	T_EQ_STR(json_of(&v, P(FLOE_T_DATE)), "\"2017-11-16\"");
	v = vl(FLOE_T_TIME, INT64_C(81068123456));
	T_EQ_STR(json_of(&v, P(FLOE_T_TIME)), "\"22:31:08.123456\"");
	v = vl(FLOE_T_TIMESTAMP, INT64_C(1510871468123456));
	T_EQ_STR(json_of(&v, P(FLOE_T_TIMESTAMP)), "\"2017-11-16T22:31:08.123456\"");
	v.type = FLOE_T_TIMESTAMPTZ;
	T_EQ_STR(json_of(&v, P(FLOE_T_TIMESTAMPTZ)), "\"2017-11-16T22:31:08.123456+00:00\"");
	v = vl(FLOE_T_TIMESTAMP_NS, INT64_C(1510871468123456789));
	T_EQ_STR(json_of(&v, P(FLOE_T_TIMESTAMP_NS)), "\"2017-11-16T22:31:08.123456789\"");
	v = vs(FLOE_T_BINARY, "\x00\x01\x02\xff", 4);
	T_EQ_STR(json_of(&v, P(FLOE_T_BINARY)), "\"000102ff\"");
	v = vl(FLOE_T_TIMESTAMPTZ_NS, INT64_C(1510871468123456789));
	T_EQ_STR(json_of(&v, P(FLOE_T_TIMESTAMPTZ_NS)), "\"2017-11-16T22:31:08.123456789+00:00\"");
	v = (floe_value){.type = FLOE_T_BOOLEAN};
	v.v.b = true;
	T_EQ_STR(json_of(&v, P(FLOE_T_BOOLEAN)), "true");
	v = vi(34);
	T_EQ_STR(json_of(&v, P(FLOE_T_INT)), "34");
	v = vl(FLOE_T_LONG, 34);
	T_EQ_STR(json_of(&v, P(FLOE_T_LONG)), "34");
	v = vs(FLOE_T_STRING, "iceberg", 7);
	T_EQ_STR(json_of(&v, P(FLOE_T_STRING)), "\"iceberg\"");
	uint8_t uuid[16];
	T_CHECK(floe_uuid_parse("F79C3E09-677C-4BBD-A479-3F349CB785E7", 36, uuid));
	v = vs(FLOE_T_UUID, uuid, 16);
	T_EQ_STR(json_of(&v, P(FLOE_T_UUID)), "\"f79c3e09-677c-4bbd-a479-3f349cb785e7\"");
	v = (floe_value){.type = FLOE_T_DOUBLE};
	v.v.f64 = 1.0;
	T_EQ_STR(json_of(&v, P(FLOE_T_DOUBLE)), "1.0");
	char buf[32];
	floe_decimal_format(buf, sizeof(buf), 2, -20);
	T_EQ_STR(buf, "2E+20");

	/* parse the real defaults written by DuckDB/PyIceberg */
	floe_json *j;
	floe_error err;
	floe_value r;
	const char *src = "[\"010203ff03\", \"1970-01-01T00:00:00.012345+00:00\", \"00:00:00.012345\", "
			  "\"12345.00\", -9223372036854775808]";
	T_OK(floe_json_parse(&j, &A, src, strlen(src), NULL, &err), &err);
	T_OK(floe_value_from_json(&r, &A, floe_type_fixed(&A, 5), floe_json_at(j, 0), &err), &err);
	T_EQ_INT(r.v.bin.n, 5);
	T_EQ_INT(r.v.bin.p[3], 0xff);
	T_OK(floe_value_from_json(&r, &A, P(FLOE_T_TIMESTAMPTZ), floe_json_at(j, 1), &err), &err);
	T_EQ_INT(r.v.i64, 12345);
	T_OK(floe_value_from_json(&r, &A, P(FLOE_T_TIME), floe_json_at(j, 2), &err), &err);
	T_EQ_INT(r.v.i64, 12345);
	T_OK(floe_value_from_json(&r, &A, floe_type_decimal(&A, 7, 2), floe_json_at(j, 3), &err),
	     &err);
	T_CHECK(r.v.dec == 1234500);
	T_OK(floe_value_from_json(&r, &A, P(FLOE_T_LONG), floe_json_at(j, 4), &err), &err);
	T_EQ_INT(r.v.i64, INT64_MIN);
}

static void test_transform_parse(void)
{
	floe_transform t;
	floe_error err;
	floe_buf b;
	floe_buf_init(&b, 0);
	T_OK(floe_transform_parse(&t, &A, "bucket[16]", &err), &err);
	T_EQ_INT(t.kind, FLOE_TR_BUCKET);
	T_EQ_INT(t.param, 16);
	T_OK(floe_transform_format(&b, &t), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "bucket[16]");
	T_OK(floe_transform_parse(&t, &A, "truncate[4]", &err), &err);
	T_EQ_INT(t.kind, FLOE_TR_TRUNCATE);
	T_OK(floe_transform_parse(&t, &A, "zorder", &err), &err);
	T_EQ_INT(t.kind, FLOE_TR_UNKNOWN);
	T_ERR(floe_transform_parse(&t, &A, "bucket[0]", &err), FLOE_ECORRUPT);
	T_CHECK(floe_transform_result_type(&(floe_transform){.kind = FLOE_TR_DAY},
					   P(FLOE_T_TIMESTAMP))
			->id == FLOE_T_DATE);
	T_CHECK(!floe_transform_can_apply(&(floe_transform){.kind = FLOE_TR_HOUR}, P(FLOE_T_DATE)));
	T_CHECK(floe_transform_can_apply(&(floe_transform){.kind = FLOE_TR_BUCKET, .param = 4},
					 P(FLOE_T_UUID)));
	floe_buf_reset(&b);
}

/* ---- variant (Parquet VariantEncoding.md) ---------------------------------------- */

static void variant_is(const uint8_t *m, size_t mn, const uint8_t *v, size_t vn, const char *want)
{
	floe_buf b;
	floe_error err = {0};
	floe_buf_init(&b, 0);
	T_OK(floe_variant_to_json(&b, m, mn, v, vn, &err), &err);
	T_EQ_STR(floe_buf_cstr(&b), want);
	floe_buf_reset(&b);
}

static void variant_bad(const uint8_t *m, size_t mn, const uint8_t *v, size_t vn)
{
	floe_buf b;
	floe_error err = {0};
	floe_buf_init(&b, 0);
	T_EQ_INT(floe_variant_to_json(&b, m, mn, v, vn, &err), FLOE_ECORRUPT);
	floe_buf_reset(&b);
}

static void test_variant_json(void)
{
	static const uint8_t empty_meta[] = {0x01, 0x00, 0x00};
	/* metadata: two keys "a", "b" (offset size 1) */
	static const uint8_t meta[] = {0x01, 0x02, 0x00, 0x01, 0x02, 'a', 'b'};
	static const uint8_t null_v[] = {0x00};
	static const uint8_t i8[] = {3 << 2, 0xde};          /* int8 -34 */
	static const uint8_t i64[] = {6 << 2, 0x00, 0xe4, 0x0b, 0x54, 0x02, 0, 0, 0}; /* 1e10 */
	static const uint8_t dec4[] = {8 << 2, 2, 0x3a, 0x01, 0, 0}; /* 3.14 */
	static const uint8_t dec4n[] = {8 << 2, 2, 0xc6, 0xfe, 0xff, 0xff}; /* -3.14 */
	static const uint8_t date[] = {11 << 2, 0xfe, 0xff, 0xff, 0xff}; /* 1969-12-30 */
	static const uint8_t str[] = {(3 << 2) | 1, 'a', '"', '\n'}; /* short string */
	static const uint8_t flt[] = {14 << 2, 0xae, 0x47, 0x21, 0xc1}; /* float -10.08 */
	/* object {"a": 1, "b": [true, null]}: 2 fields, ids and offsets of 1 byte */
	static const uint8_t obj[] = {0x02, 2, 0, 1, 0, 2, 9, 3 << 2, 1,
				      0x03, 2, 0, 1, 2, 1 << 2, 0x00};
	variant_is(empty_meta, sizeof(empty_meta), null_v, sizeof(null_v), "null");
	variant_is(empty_meta, sizeof(empty_meta), i8, sizeof(i8), "-34");
	variant_is(empty_meta, sizeof(empty_meta), i64, sizeof(i64), "10000000000");
	variant_is(empty_meta, sizeof(empty_meta), dec4, sizeof(dec4), "3.14");
	variant_is(empty_meta, sizeof(empty_meta), dec4n, sizeof(dec4n), "-3.14");
	variant_is(empty_meta, sizeof(empty_meta), date, sizeof(date), "\"1969-12-30\"");
	variant_is(empty_meta, sizeof(empty_meta), str, sizeof(str), "\"a\\\"\\n\"");
	variant_is(empty_meta, sizeof(empty_meta), flt, sizeof(flt), "-10.08");
	variant_is(meta, sizeof(meta), obj, sizeof(obj), "{\"a\":1,\"b\":[true,null]}");
	/* corrupt: bad version, truncated values, a key outside the dictionary,
	 * an offset past the values */
	static const uint8_t bad_meta[] = {0x02, 0x00, 0x00};
	variant_bad(bad_meta, sizeof(bad_meta), null_v, sizeof(null_v));
	variant_bad(empty_meta, sizeof(empty_meta), i64, 5);
	variant_bad(empty_meta, sizeof(empty_meta), obj, sizeof(obj));
	uint8_t obj2[sizeof(obj)];
	memcpy(obj2, obj, sizeof(obj));
	obj2[5] = 40; /* total size past the end */
	variant_bad(meta, sizeof(meta), obj2, sizeof(obj2));
	variant_bad(meta, 4, obj, sizeof(obj));
	variant_bad(empty_meta, sizeof(empty_meta), str, 2);
}

int main(void)
{
	floe_arena_init(&A, 0);
	T_RUN(test_hash_vectors);
	T_RUN(test_variant_json);
	T_RUN(test_bucket_values);
	T_RUN(test_truncate);
	T_RUN(test_uuid_bounds);
	T_RUN(test_metrics_bounds);
	T_RUN(test_temporal);
	T_RUN(test_human_strings);
	T_RUN(test_binary_serialization);
	T_RUN(test_json_single_values);
	T_RUN(test_transform_parse);
	floe_arena_reset(&A);
	return t_finish();
}
