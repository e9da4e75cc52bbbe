/*
 * test_json.c — JSON reader limits, UTF-8, numbers, writer round trips.
 */
#include "harness.h"
#include "json/json.h"

static floe_json *parse(floe_arena *a, const char *s, floe_error *err)
{
	floe_json *j = NULL;
	if (floe_json_parse(&j, a, s, strlen(s), NULL, err))
		return NULL;
	return j;
}

static void test_parse_basic(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 0);
	floe_json *j = parse(&a,
			     " {\"a\": 1, \"b\": [true, false, null], \"c\": \"x\\u00e9\\ud83d\\ude00\","
			     " \"big\": 9223372036854775807, \"neg\": -12, \"f\": 1.5e3, \"e\": {}}",
			     &err);
	T_CHECK(j != NULL);
	int64_t v;
	T_OK(floe_json_get_i64(j, "big", &v, NULL, &err), &err);
	T_EQ_INT(v, INT64_MAX);
	T_OK(floe_json_get_i64(j, "neg", &v, NULL, &err), &err);
	T_EQ_INT(v, -12);
	T_ERR(floe_json_get_i64(j, "f", &v, "obj", &err), FLOE_ECORRUPT);
	T_EQ_MSG(err.msg, "obj: 'f' must be an integer, found number");
	T_CHECK(floe_json_get(j, "f")->d == 1500.0);
	T_ERR(floe_json_get_i64(j, "zz", &v, NULL, &err), FLOE_ENOTFOUND);
	const char *s;
	T_OK(floe_json_get_str(j, "c", &s, NULL, &err), &err);
	T_EQ_STR(s, "x\xc3\xa9\xf0\x9f\x98\x80");
	T_EQ_INT(floe_json_get(j, "b")->len, 3);
	T_CHECK(floe_json_at(floe_json_get(j, "b"), 2)->type == FLOE_JSON_NULL);
	T_EQ_INT(floe_json_get(j, "e")->len, 0);
	floe_arena_reset(&a);
}

static void test_parse_errors(void)
{
	static const char *bad[] = {
		"", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "\"abc", "\"\\x\"", "\"\\ud800\"",
		"\"\x01\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "tru", "[1] 2", "{\"a\":1,}", "nul",
		"1e", "\"\\u12g4\"",
		/* RFC 8259 numbers, in every position (Jackson refuses all of these) */
		"-01", "[01]", "{\"a\":01}", "[1.]", "{\"a\":1.}", "1.e5", "+1", "[+1]", ".5",
		"[.5]", "[-]", "{\"a\":-}", "[1e]", "1e+", "0x1", "[1E-]", "-.5", "00",
	};
	floe_arena a;
	floe_error err;
	floe_arena_init(&a, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		floe_json *j;
		floe_error_clear(&err);
		int rc = floe_json_parse(&j, &a, bad[i], strlen(bad[i]), NULL, &err);
		if (rc != FLOE_ECORRUPT)
			t_fail(__FILE__, __LINE__, "accepted bad json #%zu: %s", i, bad[i]);
	}
	/* numbers RFC 8259 allows */
	static const char *good[] = {"0", "-0", "0.5", "1e5", "1E+5", "-1.5e-3", "[0,-0.0]",
				     "{\"a\":10}", "123456789012345678901234567890"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		floe_json *j;
		T_OK(floe_json_parse(&j, &a, good[i], strlen(good[i]), NULL, &err), &err);
	}
	T_EQ_INT(floe_json_number_len("12,", 3), 2);
	T_EQ_INT(floe_json_number_len("-0.25e+3}", 9), 8);
	T_EQ_INT(floe_json_number_len("01", 2), 0);
	T_EQ_INT(floe_json_number_len("1.", 2), 0);
	/* error location */
	floe_json *j;
	T_ERR(floe_json_parse(&j, &a, "{\n  \"a\": x}", 11, NULL, &err), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "line 2 column 8") != NULL);
	/* depth limit */
	char deep[600];
	memset(deep, '[', 300);
	memset(deep + 300, ']', 300);
	T_ERR(floe_json_parse(&j, &a, deep, 600, NULL, &err), FLOE_ECORRUPT);
	floe_json_limits lim = {.max_depth = 400};
	T_OK(floe_json_parse(&j, &a, deep, 600, &lim, &err), &err);
	floe_arena_reset(&a);
}

static void test_writer(void)
{
	floe_buf b;
	floe_jw w;
	floe_buf_init(&b, 0);
	floe_jw_init(&w, &b, 0);
	floe_jw_obj_begin(&w);
	floe_jw_kv_str(&w, "s", "a\"b\\c\n\x01");
	floe_jw_kv_i64(&w, "i", -5);
	floe_jw_key(&w, "d");
	floe_jw_double(&w, 0.1);
	floe_jw_key(&w, "one");
	floe_jw_double(&w, 1.0);
	floe_jw_key(&w, "arr");
	floe_jw_arr_begin(&w);
	floe_jw_null(&w);
	floe_jw_bool(&w, true);
	floe_jw_arr_begin(&w);
	floe_jw_arr_end(&w);
	floe_jw_arr_end(&w);
	floe_jw_obj_end(&w);
	T_OK(floe_jw_finish(&w), NULL);
	T_EQ_STR(floe_buf_cstr(&b),
		 "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"i\":-5,\"d\":0.1,\"one\":1.0,\"arr\":[null,true,[]]}");

	/* pretty printing and re-serialization of a parsed tree */
	floe_arena a;
	floe_error err;
	floe_json *j;
	floe_arena_init(&a, 0);
	T_OK(floe_json_parse(&j, &a, (const char *)b.data, b.len, NULL, &err), &err);
	floe_buf c;
	floe_buf_init(&c, 0);
	floe_jw_init(&w, &c, 2);
	floe_jw_value(&w, j);
	T_OK(floe_jw_finish(&w), NULL);
	T_EQ_STR(floe_buf_cstr(&c), "{\n  \"s\": \"a\\\"b\\\\c\\n\\u0001\",\n  \"i\": -5,\n  \"d\": 0.1,\n"
				    "  \"one\": 1.0,\n  \"arr\": [\n    null,\n    true,\n    []\n  ]\n}");
	floe_buf_reset(&b);
	floe_buf_reset(&c);
	floe_arena_reset(&a);
}

static void test_double_format(void)
{
	char t[40];
	floe_json_format_double(t, sizeof(t), 1e300);
	T_EQ_STR(t, "1e+300");
	floe_json_format_double(t, sizeof(t), 0.30000000000000004);
	T_EQ_STR(t, "0.30000000000000004");
	floe_json_format_double(t, sizeof(t), -2.5);
	T_EQ_STR(t, "-2.5");
}

int main(void)
{
	T_RUN(test_parse_basic);
	T_RUN(test_parse_errors);
	T_RUN(test_writer);
	T_RUN(test_double_format);
	return t_finish();
}
