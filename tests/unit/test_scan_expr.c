/*
 * test_scan_expr.c — filter expressions: parsing (and its errors), NOT
 * push-down, binding with literal coercion and Java's folding of inexact and
 * out-of-range literals, inclusive projection through every transform
 * (including the pre-1970 adjustment), and the partition, summary and
 * metrics evaluators (truncated string bounds, UUID order, NaN, nulls).
 */
#include <math.h>

#include "harness.h"
#include "iceberg/metadata.h"
#include "scan/scan_arrow.h"
#include "scan/scan_expr.h"
#include "util/cursor.h"

static floe_arena A;
static floe_schema *S;

static void setup(void)
{
	floe_error err = {0};
	floe_arena_init(&A, 0);
	T_OK(floe_schema_parse_compact(&S, &A,
				       "id long not null, i int, s string, d decimal(9, 2), "
				       "dt date, ts timestamp, tz timestamptz, f float, g double, "
				       "u uuid, b boolean, bin binary, st struct<x: int, y: string>, "
				       "l list<int>",
				       &err),
	     &err);
}

/* compile and print: the bound text, or "ERR <code>" */
static const char *bound(const char *text)
{
	static char out[2048];
	floe_expr *e;
	floe_error err = {0};
	floe_buf b;
	int rc = floe_expr_compile(&e, &A, text, S, false, &err);
	if (rc) {
		snprintf(out, sizeof(out), "ERR %s: %s", floe_strerror(rc), err.msg);
		return out;
	}
	floe_buf_init(&b, 0);
	if (floe_expr_format(&b, e, S))
		snprintf(out, sizeof(out), "ENOMEM");
	else
		snprintf(out, sizeof(out), "%s", floe_buf_cstr(&b));
	floe_buf_reset(&b);
	return out;
}

static void test_parse_and_bind(void)
{
	T_EQ_STR(bound("id >= 10 AND s IN ('a', 'b')"), "id >= 10 AND s IN ('a', 'b')");
	T_EQ_STR(bound("ID = 3"), "id = 3"); /* case-insensitive binding */
	T_EQ_STR(bound("s in ('b', 'a', 'a')"), "s IN ('a', 'b')");
	T_EQ_STR(bound("s IN ('a')"), "s = 'a'");
	T_EQ_STR(bound("i BETWEEN 1 AND 5"), "i >= 1 AND i <= 5");
	T_EQ_STR(bound("NOT (i < 5 OR s IS NULL)"), "i >= 5 AND s IS NOT NULL");
	T_EQ_STR(bound("10 < i"), "i > 10");
	T_EQ_STR(bound("s LIKE 'ab%'"), "s STARTS WITH 'ab'");
	T_EQ_STR(bound("s LIKE 'abc'"), "s = 'abc'");
	T_EQ_STR(bound("s NOT LIKE 'ab%'"), "s NOT STARTS WITH 'ab'");
	T_EQ_STR(bound("starts_with(s, 'x')"), "s STARTS WITH 'x'");
	T_EQ_STR(bound("s LIKE 'a_c%'"), "s LIKE 'a_c%'");
	T_EQ_STR(bound("NOT s LIKE '%x'"), "s NOT LIKE '%x'");
	T_EQ_STR(bound("s LIKE 'a\\%b%'"), "s STARTS WITH 'a%b'");
	T_EQ_STR(bound("s IS DISTINCT FROM 'a'"), "s != 'a' OR s IS NULL");
	T_EQ_STR(bound("s IS NOT DISTINCT FROM 'a'"), "s = 'a'");
	T_EQ_STR(bound("s IS NOT DISTINCT FROM NULL"), "s IS NULL");
	T_EQ_STR(bound("NOT (s IS DISTINCT FROM 'a')"), "s = 'a' AND s IS NOT NULL");
	T_EQ_STR(bound("g IS NAN OR f IS NOT NAN"), "g IS NAN OR f IS NOT NAN");
	T_EQ_STR(bound("st.x = 1"), "st.x = 1");
	T_EQ_STR(bound("s = 'it''s'"), "s = 'it''s'");
	T_EQ_STR(bound("\"s\" <> 'a'"), "s != 'a'");
	/* required columns are never null */
	T_EQ_STR(bound("id IS NULL"), "FALSE");
	T_EQ_STR(bound("id IS NOT NULL AND i = 1"), "i = 1");
	/* comparisons with NULL are unknown, also under NOT */
	T_EQ_STR(bound("i = NULL"), "FALSE");
	T_EQ_STR(bound("NOT (i = NULL)"), "FALSE");
	T_EQ_STR(bound("i IN (1, NULL)"), "i = 1");
	T_EQ_STR(bound("i NOT IN (1, NULL)"), "FALSE");
	T_EQ_STR(bound("TRUE AND (i = 1 OR FALSE)"), "i = 1");
}

static void test_literal_coercion(void)
{
	/* inexact and out-of-range literals fold like Java's binding */
	T_EQ_STR(bound("i = 1.5"), "FALSE");
	T_EQ_STR(bound("i != 1.5"), "i IS NOT NULL");
	T_EQ_STR(bound("i < 1.5"), "i <= 1");
	T_EQ_STR(bound("i > 1.5"), "i >= 2");
	T_EQ_STR(bound("i > -1.5"), "i >= -1");
	T_EQ_STR(bound("i < 1e20"), "i IS NOT NULL");
	T_EQ_STR(bound("i > 3000000000"), "FALSE");
	T_EQ_STR(bound("i IN (1, 2.5, 9999999999)"), "i = 1");
	T_EQ_STR(bound("id = 9223372036854775807"), "id = 9223372036854775807");
	T_EQ_STR(bound("d = 1.234"), "FALSE");
	T_EQ_STR(bound("d >= 1.234"), "d >= 1.24");
	T_EQ_STR(bound("d = 12"), "d = 12.00");
	T_EQ_STR(bound("d < 10000000"), "d IS NOT NULL");
	T_EQ_STR(bound("f = 1.25"), "f = 1.25");
	T_EQ_STR(bound("g = 'NaN'"), "g IS NAN");
	T_EQ_STR(bound("dt = '2024-02-29'"), "dt = '2024-02-29'");
	T_EQ_STR(bound("dt = DATE '2024-02-29'"), "dt = '2024-02-29'");
	T_EQ_STR(bound("dt < '2024-02-29 10:00:00'"), "dt <= '2024-02-29'");
	T_EQ_STR(bound("ts >= '2017-11-16 22:31:08.000001'"), "ts >= '2017-11-16T22:31:08.000001'");
	T_EQ_STR(bound("tz = '2017-11-16T23:31:08+01:00'"), "tz = '2017-11-16T22:31:08+00:00'");
	T_EQ_STR(bound("ts < '1969-12-31'"), "ts < '1969-12-31T00:00:00'");
	T_EQ_STR(bound("u = 'F79C3E09-677C-4BBD-A479-3F349CB785E7'"),
		 "u = 'f79c3e09-677c-4bbd-a479-3f349cb785e7'");
	T_EQ_STR(bound("bin = X'0aff'"), "bin = 'Cv8='");
	T_EQ_STR(bound("b = true"), "b = true");
	T_EQ_STR(bound("s = 5"), "s = '5'");
}

static void test_errors(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"", "empty"},
		{"id >", "at 5: expected a literal"},
		{"id = 'x' AND", "unexpected end"},
		{"nope = 1", "no column 'nope'"},
		{"idd = 1", "did you mean 'id'"},
		{"(id = 1", "expected ')'"},
		{"id = 1 id", "unexpected 'id'"},
		{"s = 'unterminated", "unterminated string"},
		{"i = 'abc'", "cannot compare column 'i'"},
		{"dt = 'yesterday'", "not a date"},
		{"u = 'xyz'", "not a uuid"},
		{"i IS NAN", "needs a float or double"},
		{"i STARTS WITH 'a'", "needs a string column"},
		{"st = 1", "not a primitive column"},
		{"i = j", "comparisons between columns"},
		{"i = 1 @", "unexpected character"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		const char *got = bound(bad[k].text);
		if (strncmp(got, "ERR", 3) || !strstr(got, bad[k].want))
			t_fail(__FILE__, __LINE__, "'%s': got '%s', want an error with '%s'",
			       bad[k].text, got, bad[k].want);
		t_checks++;
	}
	/* nesting is bounded */
	char deep[2200];
	size_t n = 0;
	for (int k = 0; k < 1000; k++)
		deep[n++] = '(';
	memcpy(deep + n, "i = 1", 5);
	n += 5;
	for (int k = 0; k < 1000; k++)
		deep[n++] = ')';
	deep[n] = 0;
	T_CHECK(strstr(bound(deep), "nested deeper") != NULL);
}

/* ---- projection ------------------------------------------------------------------ */

static const char *projected(const char *filter, const char *spec_json)
{
	static char out[2048];
	floe_json *j;
	floe_partition_spec *spec;
	floe_expr *e, *p;
	floe_error err = {0};
	floe_buf b;
	if (floe_json_parse(&j, &A, spec_json, strlen(spec_json), NULL, &err) ||
	    floe_spec_from_json(&spec, &A, j, 0, &err) ||
	    floe_expr_compile(&e, &A, filter, S, false, &err) ||
	    floe_expr_project(&p, &A, e, spec, S, &err)) {
		snprintf(out, sizeof(out), "ERR %s", err.msg);
		return out;
	}
	floe_buf_init(&b, 0);
	if (floe_expr_format(&b, p, S))
		snprintf(out, sizeof(out), "ENOMEM");
	else
		snprintf(out, sizeof(out), "%s", floe_buf_cstr(&b));
	floe_buf_reset(&b);
	return out;
}

#define SPEC(name, tr, src)                                                                   \
	"{\"spec-id\":0,\"fields\":[{\"name\":\"" name "\",\"transform\":\"" tr                 \
	"\",\"source-id\":" #src ",\"field-id\":1000}]}"

static void test_projection(void)
{
	/* ids: id 1, i 2, s 3, d 4, dt 5, ts 6, tz 7 */
	T_EQ_STR(projected("i > 5", SPEC("p", "identity", 2)), "p > 5");
	T_EQ_STR(projected("i = 34", SPEC("p", "bucket[100]", 2)), "p = 79");
	T_EQ_STR(projected("i IN (34, 34)", SPEC("p", "bucket[100]", 2)), "p = 79");
	T_EQ_STR(projected("i < 34", SPEC("p", "bucket[100]", 2)), "TRUE");
	T_EQ_STR(projected("i != 34", SPEC("p", "identity", 2)), "p != 34");
	/* truncate ints: LT x -> <= T(x - 1), GT x -> >= T(x + 1) */
	T_EQ_STR(projected("i < 10", SPEC("p", "truncate[10]", 2)), "p <= 0");
	T_EQ_STR(projected("i <= 10", SPEC("p", "truncate[10]", 2)), "p <= 10");
	T_EQ_STR(projected("i > 9", SPEC("p", "truncate[10]", 2)), "p >= 10");
	T_EQ_STR(projected("i = -1", SPEC("p", "truncate[10]", 2)), "p = -10");
	T_EQ_STR(projected("i != -1", SPEC("p", "truncate[10]", 2)), "TRUE");
	T_EQ_STR(projected("d > 10.64", SPEC("p", "truncate[50]", 4)), "p >= 10.50");
	/* truncate strings */
	T_EQ_STR(projected("s < 'abcdef'", SPEC("p", "truncate[3]", 3)), "p <= 'abc'");
	T_EQ_STR(projected("s STARTS WITH 'abcdef'", SPEC("p", "truncate[3]", 3)),
		 "p STARTS WITH 'abc'");
	T_EQ_STR(projected("s NOT STARTS WITH 'ab'", SPEC("p", "truncate[3]", 3)),
		 "p NOT STARTS WITH 'ab'");
	T_EQ_STR(projected("s NOT STARTS WITH 'abcd'", SPEC("p", "truncate[3]", 3)), "TRUE");
	/* temporal */
	T_EQ_STR(projected("ts < '2024-01-02'", SPEC("p", "day", 6)), "p <= '2024-01-01'");
	T_EQ_STR(projected("ts >= '2024-01-02 10:00:00'", SPEC("p", "day", 6)), "p >= '2024-01-02'");
	T_EQ_STR(projected("ts > '2024-12-31 23:59:59.999999'", SPEC("p", "year", 6)), "p >= 55");
	T_EQ_STR(projected("dt = '2024-03-15'", SPEC("p", "month", 5)), "p = 650");
	T_EQ_STR(projected("tz = '2024-03-15 10:30:00'", SPEC("p", "hour", 7)), "p = 475138");
	/* Java's fixInclusiveTimeProjection for pre-1970 values */
	T_EQ_STR(projected("ts = '1969-12-31 10:00:00'", SPEC("p", "day", 6)),
		 "p IN ('1969-12-31', '1970-01-01')");
	T_EQ_STR(projected("ts < '1969-12-31 10:00:00'", SPEC("p", "day", 6)), "p <= '1970-01-01'");
	T_EQ_STR(projected("ts < '1969-06-01'", SPEC("p", "month", 6)), "p <= -7");
	T_EQ_STR(projected("dt IN ('1969-12-31', '1970-01-02')", SPEC("p", "year", 5)),
		 "p IN (-1, 0)");
	/* void and OR */
	T_EQ_STR(projected("i = 1", SPEC("p", "void", 2)), "TRUE");
	T_EQ_STR(projected("i = 1 OR s = 'x'", SPEC("p", "identity", 2)), "TRUE");
	T_EQ_STR(projected("i = 1 AND s = 'x'", SPEC("p", "identity", 2)), "p = 1");
	T_EQ_STR(projected("i IS NULL", SPEC("p", "bucket[4]", 2)), "p IS NULL");
	T_EQ_STR(projected("s LIKE 'abcd_x%'", SPEC("p", "truncate[3]", 3)), "p STARTS WITH 'abc'");
	T_EQ_STR(projected("s LIKE '_x'", SPEC("p", "identity", 3)), "TRUE");
	T_EQ_STR(projected("s NOT LIKE 'a_'", SPEC("p", "identity", 3)), "TRUE");
}

/* ---- evaluators ------------------------------------------------------------------ */

static floe_expr *compile(const char *text)
{
	floe_expr *e = NULL;
	floe_error err = {0};
	T_OK(floe_expr_compile(&e, &A, text, S, false, &err), &err);
	return e;
}

static bool metrics(const char *filter, int32_t id, int64_t vc, int64_t nc, int64_t nanc,
		    const void *lo, size_t lon, const void *hi, size_t hin)
{
	floe_id_long v = {id, vc}, n = {id, nc}, nn = {id, nanc};
	floe_id_bytes l = {id, lo, lon}, h = {id, hi, hin};
	floe_file_metrics m = {10, &v, vc >= 0, &n, nc >= 0, &nn, nanc >= 0, &l, lo != NULL, &h,
			       hi != NULL};
	floe_expr *e = compile(filter);
	return e && floe_eval_metrics(e, &m);
}

static void test_metrics(void)
{
	uint8_t lo4[4], hi4[4];
	floe_store_u32le(lo4, 10);
	floe_store_u32le(hi4, 20);
	T_CHECK(!metrics("i < 10", 2, 10, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(metrics("i <= 10", 2, 10, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(!metrics("i > 20", 2, 10, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(!metrics("i = 21", 2, 10, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(metrics("i = 15", 2, 10, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(!metrics("i IN (1, 2, 30)", 2, 10, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(metrics("i IN (1, 12)", 2, 10, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(metrics("i != 15", 2, 10, 0, -1, lo4, 4, hi4, 4));
	/* nulls */
	T_CHECK(!metrics("i IS NULL", 2, 10, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(!metrics("i IS NOT NULL", 2, 10, 10, -1, NULL, 0, NULL, 0));
	T_CHECK(!metrics("i = 1", 2, 10, 10, -1, NULL, 0, NULL, 0));
	T_CHECK(metrics("i IS NULL", 2, -1, -1, -1, NULL, 0, NULL, 0)); /* no metrics */
	/* NaN */
	T_CHECK(!metrics("g IS NAN", 9, 10, 0, 0, NULL, 0, NULL, 0));
	T_CHECK(!metrics("g IS NOT NAN", 9, 10, 0, 10, NULL, 0, NULL, 0));
	T_CHECK(!metrics("g > 1", 9, 10, 0, 10, NULL, 0, NULL, 0));
	/* truncated string bounds: lower "abc" upper "abd" for values in [abc.., abc..] */
	T_CHECK(metrics("s = 'abcdef'", 3, 10, 0, -1, "abc", 3, "abd", 3));
	T_CHECK(!metrics("s = 'abe'", 3, 10, 0, -1, "abc", 3, "abd", 3));
	T_CHECK(metrics("s STARTS WITH 'abcz'", 3, 10, 0, -1, "abc", 3, "abd", 3));
	T_CHECK(!metrics("s STARTS WITH 'abe'", 3, 10, 0, -1, "abc", 3, "abd", 3));
	T_CHECK(!metrics("s STARTS WITH 'aa'", 3, 10, 0, -1, "abc", 3, "abd", 3));
	T_CHECK(!metrics("s NOT STARTS WITH 'ab'", 3, 10, 0, -1, "abc", 3, "abd", 3));
	T_CHECK(metrics("s NOT STARTS WITH 'ab'", 3, 10, 2, -1, "abc", 3, "abd", 3));
	/* UUIDs: Java writes bounds in signed-long order: over {10.., f0..} they are
	 * lower f0.. and upper 10..; 10.. is in the file and must not be pruned
	 * (unsigned order alone would). Bounds out of order in the spec's order
	 * never prune (apache/iceberg#14216), so 80.. is kept too */
	uint8_t ulo[16] = {0xf0}, uhi[16] = {0x10};
	T_CHECK(metrics("u = '10000000-0000-0000-0000-000000000000'", 10, 10, 0, -1, ulo, 16, uhi,
			16));
	T_CHECK(metrics("u = '80000000-0000-0000-0000-000000000000'", 10, 10, 0, -1, ulo, 16, uhi,
			16));
	T_CHECK(metrics("u < '00000000-0000-0000-0000-000000000001'", 10, 10, 0, -1, ulo, 16, uhi,
			16));
	/* in order in both orders: prune only when both rule the value out. Java's
	 * bounds over {(0, 10..), (1, ff..), (1, 10..)} (high, low halves) are lower
	 * (0, 10..), upper (1, 10..); the spec's order alone would prune (1, ff..) */
	uint8_t jlo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0x10}, jhi[16] = {0, 0, 0, 0, 0, 0, 0, 1, 0x10};
	T_CHECK(metrics("u = '00000000-0000-0001-ff00-000000000000'", 10, 10, 0, -1, jlo, 16, jhi,
			16));
	T_CHECK(!metrics("u = '00000000-0000-0002-0000-000000000000'", 10, 10, 0, -1, jlo, 16, jhi,
			 16));
	uint8_t olo[16] = {0x10}, ohi[16] = {0x20};
	T_CHECK(!metrics("u = '30000000-0000-0000-0000-000000000000'", 10, 10, 0, -1, olo, 16, ohi,
			 16));
	T_CHECK(metrics("u = '18000000-0000-0000-0000-000000000000'", 10, 10, 0, -1, olo, 16, ohi,
			16));
	/* -0.0 = 0.0: a bound's sign never prunes a zero (g is a double) */
	uint8_t nz[8], pz[8];
	floe_store_u64le(nz, 0x8000000000000000ull);
	floe_store_u64le(pz, 0);
	T_CHECK(metrics("g = 0.0", 9, 10, 0, 0, nz, 8, nz, 8));
	T_CHECK(metrics("g = -0.0", 9, 10, 0, 0, pz, 8, pz, 8));
	T_CHECK(metrics("g >= 0", 9, 10, 0, 0, nz, 8, nz, 8));
	T_CHECK(!metrics("g > 0", 9, 10, 0, 0, nz, 8, nz, 8));
	/* a field inside an optional struct: Java does not count it as null where
	 * the struct is null (Spark writes 10 values / 0 nulls for a file of null
	 * structs, Java's generic writer 0 / 0), so a zero null count proves
	 * nothing, nor a value count short of the rows (st.x is field 15) */
	T_CHECK(metrics("st.x IS NULL", 15, 0, 0, -1, NULL, 0, NULL, 0));
	T_CHECK(metrics("st.x IS NULL", 15, 4, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(metrics("st.x IS NULL", 15, 10, 0, -1, NULL, 0, NULL, 0));
	T_CHECK(metrics("st.x IS NOT NULL", 15, 0, 0, -1, NULL, 0, NULL, 0));
	T_CHECK(!metrics("st.x IS NOT NULL", 15, 10, 10, -1, NULL, 0, NULL, 0));
	T_CHECK(!metrics("st.x = 30", 15, 10, 0, -1, lo4, 4, hi4, 4));
	T_CHECK(!metrics("i IS NULL", 2, 4, 0, -1, lo4, 4, hi4, 4)); /* top level: trusted */
	/* an empty file holds no row */
	floe_file_metrics empty = {0};
	T_CHECK(!floe_eval_metrics(compile("i = 1"), &empty));
	/* promoted column: a 4-byte bound of a long */
	T_CHECK(!metrics("id > 20", 1, 10, 0, -1, lo4, 4, hi4, 4));
}

static void test_partition_and_summaries(void)
{
	floe_json *j;
	floe_partition_spec *spec;
	floe_expr *e, *p;
	floe_error err = {0};
	const char *sj = "{\"spec-id\":0,\"fields\":[{\"name\":\"p\",\"transform\":\"day\","
			 "\"source-id\":6,\"field-id\":1000}]}";
	T_OK(floe_json_parse(&j, &A, sj, strlen(sj), NULL, &err), &err);
	T_OK(floe_spec_from_json(&spec, &A, j, 0, &err), &err);
	e = compile("ts >= '2024-01-10' AND ts < '2024-01-11'");
	T_OK(floe_expr_project(&p, &A, e, spec, S, &err), &err);
	floe_value v = {.type = FLOE_T_DATE};
	floe_partition part = {&v, 1};
	v.v.i32 = 19732; /* 2024-01-10 */
	T_CHECK(floe_eval_partition(p, &part));
	v.v.i32 = 19733;
	T_CHECK(!floe_eval_partition(p, &part));
	v.is_null = true;
	T_CHECK(!floe_eval_partition(p, &part));
	/* summaries: [2024-01-01, 2024-01-05] cannot hold 2024-01-10 */
	uint8_t lo[4], hi[4];
	floe_store_u32le(lo, 19723);
	floe_store_u32le(hi, 19727);
	floe_field_summary fs = {false, -1, lo, 4, hi, 4, true, true};
	const floe_type *types[1] = {floe_type_primitive(FLOE_T_DATE)};
	T_CHECK(!floe_eval_summaries(p, &fs, 1, types));
	floe_store_u32le(hi, 19740);
	T_CHECK(floe_eval_summaries(p, &fs, 1, types));
	/* an identity(uuid) summary as Java 1.10 writes it over values on both
	 * sides of the top bit (lower 80.., upper 7e..): out of order in the
	 * spec's order, so it never prunes (floe once found 0 rows) */
	const char *uj = "{\"spec-id\":0,\"fields\":[{\"name\":\"u\",\"transform\":\"identity\","
			 "\"source-id\":10,\"field-id\":1000}]}";
	floe_partition_spec *uspec;
	T_OK(floe_json_parse(&j, &A, uj, strlen(uj), NULL, &err), &err);
	T_OK(floe_spec_from_json(&uspec, &A, j, 0, &err), &err);
	T_OK(floe_expr_project(&p, &A, compile("u = '123e4567-e89b-12d3-a456-426614174000'"), uspec, S,
			       &err),
	     &err);
	uint8_t ulo[16] = {0x80, 0x17, 0xf4, 0xe4}, uhi[16] = {0x7e, 0xd7, 0xcc, 0x99};
	floe_field_summary us = {false, -1, ulo, 16, uhi, 16, true, true};
	const floe_type *utypes[1] = {floe_type_primitive(FLOE_T_UUID)};
	T_CHECK(floe_eval_summaries(p, &us, 1, utypes));
	/* floe's own (unsigned) summary 00../ff.. keeps it too; 13../ff.. prunes it */
	uint8_t zlo[16] = {0}, fhi[16];
	memset(fhi, 0xff, 16);
	floe_field_summary fsum = {false, -1, zlo, 16, fhi, 16, true, true};
	T_CHECK(floe_eval_summaries(p, &fsum, 1, utypes));
	zlo[0] = 0x13;
	T_CHECK(!floe_eval_summaries(p, &fsum, 1, utypes));
	/* all null */
	floe_field_summary nulls = {true, -1, NULL, 0, NULL, 0, false, false};
	T_CHECK(!floe_eval_summaries(p, &nulls, 1, types));
	T_OK(floe_expr_project(&p, &A, compile("ts IS NULL"), spec, S, &err), &err);
	T_CHECK(floe_eval_summaries(p, &nulls, 1, types));
	T_CHECK(!floe_eval_summaries(p, &fs, 1, types));
	/* residual: an identity partition decides its predicates */
	const char *ij = "{\"spec-id\":0,\"fields\":[{\"name\":\"s\",\"transform\":\"identity\","
			 "\"source-id\":3,\"field-id\":1000}]}";
	T_OK(floe_json_parse(&j, &A, ij, strlen(ij), NULL, &err), &err);
	T_OK(floe_spec_from_json(&spec, &A, j, 0, &err), &err);
	floe_value sv = {.type = FLOE_T_STRING};
	sv.v.bin.p = (const uint8_t *)"x";
	sv.v.bin.n = 1;
	floe_partition sp = {&sv, 1};
	floe_expr *r = floe_expr_residual(&A, compile("s = 'x' AND i > 3"), spec, &sp);
	floe_buf b;
	floe_buf_init(&b, 0);
	T_OK(floe_expr_format(&b, r, S), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "i > 3");
	floe_buf_reset(&b);
	T_CHECK(floe_expr_is_false(floe_expr_residual(&A, compile("s = 'y' AND i > 3"), spec, &sp)));
}

static void test_values(void)
{
	floe_expr *e = compile("g = 1.5");
	floe_value v = {.type = FLOE_T_DOUBLE};
	v.v.f64 = 1.5;
	T_CHECK(floe_eval_value(e, &v));
	v.v.f64 = NAN;
	T_CHECK(!floe_eval_value(e, &v));
	T_CHECK(floe_eval_value(compile("g != 1.5"), &v)); /* IEEE: NaN != 1.5 */
	v.is_null = true;
	T_CHECK(!floe_eval_value(compile("g != 1.5"), &v));
	T_CHECK(floe_eval_value(compile("g IS NULL"), &v));
	floe_value s = {.type = FLOE_T_STRING};
	s.v.bin.p = (const uint8_t *)"b";
	s.v.bin.n = 1;
	T_CHECK(floe_eval_value(compile("s IN ('a', 'b', 'c')"), &s));
	T_CHECK(!floe_eval_value(compile("s NOT IN ('a', 'b', 'c')"), &s));
	T_CHECK(floe_eval_value(compile("s >= 'a'"), &s));
	T_CHECK(!floe_eval_value(compile("s STARTS WITH 'bb'"), &s));
	/* LIKE: '%' any text, '_' one character (UTF-8), '\\' escapes */
	static const struct {
		const char *s, *pat;
		bool want;
	} like[] = {
		{"click", "c____", true}, {"click", "_lick", true}, {"click", "%lick", true},
		{"click", "c%k", true},	  {"click", "c%x", false},  {"clic", "c____", false},
		{"Alex", "Al_%", true},	  {"Al", "Al_%", false},    {"日本語", "_本_", true},
		{"a%b", "a\\%b", true}, {"axb", "a\\%b", false}, {"", "%", true},
		{"abcabc", "%abc", true}, {"aab", "%ab", true},	    {"ab", "a%b%", true},
	};
	for (size_t k = 0; k < sizeof(like) / sizeof(like[0]); k++) {
		bool got = floe_like_match((const uint8_t *)like[k].s, strlen(like[k].s),
					   (const uint8_t *)like[k].pat, strlen(like[k].pat));
		if (got != like[k].want)
			t_fail(__FILE__, __LINE__, "'%s' LIKE '%s': %d", like[k].s, like[k].pat, got);
		t_checks++;
	}
	s.v.bin.p = (const uint8_t *)"click";
	s.v.bin.n = 5;
	T_CHECK(floe_eval_value(compile("s LIKE '_lick'"), &s));
	T_CHECK(!floe_eval_value(compile("s NOT LIKE '_lick'"), &s));
}

/* IS [NOT] NULL on a struct, list or map column is decided by the column's own
 * validity: row 0 is a present struct (whose fields are null), row 1 a null one */
static void test_nested_is_null(void)
{
	const floe_schema_entry *st = floe_schema_find_name(S, "st", false);
	const floe_schema_entry *l = floe_schema_find_name(S, "l", false);
	uint8_t valid = 0x01;
	const void *bufs[1] = {&valid};
	struct ArrowArray a = {0};
	a.length = 2;
	a.null_count = 1;
	a.n_buffers = 1;
	a.buffers = bufs;
	floe_value v;
	for (int k = 0; k < 2; k++) {
		const floe_type *t = k ? l->type : st->type;
		const char *col = k ? "l" : "st";
		char is_null[32], not_null[32];
		snprintf(is_null, sizeof(is_null), "%s IS NULL", col);
		snprintf(not_null, sizeof(not_null), "%s IS NOT NULL", col);
		floe_sa_value(&v, &a, t, 0);
		T_CHECK(!v.is_null);
		T_CHECK(!floe_eval_value(compile(is_null), &v));
		T_CHECK(floe_eval_value(compile(not_null), &v));
		floe_sa_value(&v, &a, t, 1);
		T_CHECK(v.is_null);
		T_CHECK(floe_eval_value(compile(is_null), &v));
		T_CHECK(!floe_eval_value(compile(not_null), &v));
	}
}

int main(void)
{
	setup();
	T_RUN(test_parse_and_bind);
	T_RUN(test_literal_coercion);
	T_RUN(test_errors);
	T_RUN(test_projection);
	T_RUN(test_metrics);
	T_RUN(test_partition_and_summaries);
	T_RUN(test_values);
	T_RUN(test_nested_is_null);
	floe_arena_reset(&A);
	return t_finish();
}
