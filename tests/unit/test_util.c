/*
 * test_util.c — util: errors, arenas, buffers, hashes, uuids, time, strings,
 * hash maps, codecs.
 */
#include <stdlib.h>

#include "codec/codec.h"
#include "harness.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cursor.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/rand.h"
#include "util/str.h"
#include "util/timeutil.h"

static void test_error_prefix(void)
{
	floe_error err;
	floe_error_clear(&err);
	T_EQ_INT(floe_error_prefix(&err, 0, "ctx: "), 0);
	T_EQ_STR(err.msg, "");
	T_EQ_INT(floe_error_set(&err, FLOE_ECORRUPT, "block %d: bad", 3), FLOE_ECORRUPT);
	T_EQ_INT(floe_error_prefix(&err, FLOE_ECORRUPT, "manifest '%s': ", "m1.avro"), FLOE_ECORRUPT);
	floe_error_prefix(&err, FLOE_ECORRUPT, "commit db.t: ");
	T_EQ_STR(err.msg, "commit db.t: manifest 'm1.avro': block 3: bad");
	T_CHECK(!err.retryable);
	/* the status is returned whether or not a record was passed */
	T_EQ_INT(floe_error_prefix(NULL, FLOE_EINVAL, "ctx: "), FLOE_EINVAL);
	/* a record the callee left empty still names the code */
	floe_error_clear(&err);
	T_EQ_INT(floe_error_prefix(&err, FLOE_ENOMEM, "manifest '%s': ", "m"), FLOE_ENOMEM);
	T_EQ_INT(err.code, FLOE_ENOMEM);
	T_EQ_STR(err.msg, "manifest 'm': out of memory");
	/* the caller's code wins: err->code always equals what is returned */
	floe_error_set(&err, FLOE_EIO, "read failed");
	T_EQ_INT(floe_error_prefix(&err, FLOE_ECORRUPT, "x: "), FLOE_ECORRUPT);
	T_EQ_INT(err.code, FLOE_ECORRUPT);
	/* retryable is said by the code that knows, not derived from the code */
	floe_error_set(&err, FLOE_ECONFLICT, "lost race");
	T_CHECK(!err.retryable);
	floe_error_set_retryable(&err, FLOE_ECONFLICT, "lost race");
	T_CHECK(err.retryable);
	floe_error_set(&err, FLOE_EIO, "x");
	T_CHECK(!err.retryable);
	T_EQ_INT(floe_error_set(NULL, FLOE_EIO, "x"), FLOE_EIO);
	/* corruption and out-of-memory errors say where they were raised */
	T_EQ_INT(floe_error_corrupt(&err, "block %d: bad varint", 3), FLOE_ECORRUPT);
#ifdef FLOE_ERROR_SOURCE
	T_CHECK(strstr(err.msg, "block 3: bad varint [tests/unit/test_util.c:") == err.msg);
#else
	T_EQ_STR(err.msg, "block 3: bad varint");
#endif
	T_EQ_INT(floe_error_oom(&err), FLOE_ENOMEM);
	T_CHECK(strncmp(err.msg, "out of memory", 13) == 0);
	T_EQ_INT(floe_error_set(&err, FLOE_ENOMEM, NULL), FLOE_ENOMEM);
	T_EQ_STR(err.msg, "out of memory");
}

static void test_arena(void)
{
	floe_arena a;
	floe_arena_init(&a, 256);
	for (int i = 0; i < 1000; i++) {
		char *p = floe_arena_sprintf(&a, "value-%d", i);
		T_CHECK(p && ((uintptr_t)p & 15) == 0);
	}
	void *big = floe_arena_alloc(&a, 100000);
	T_CHECK(big != NULL);
	memset(big, 1, 100000);
	T_CHECK(floe_arena_alloc(&a, SIZE_MAX - 4) == NULL);
	floe_arena_reset(&a);
	a.cap = 1000;
	T_CHECK(floe_arena_alloc(&a, 900) != NULL);
	T_CHECK(floe_arena_alloc(&a, 200) == NULL);
	floe_arena_reset(&a);
}

static void test_buf_cap(void)
{
	floe_buf b;
	floe_buf_init(&b, 10);
	T_EQ_INT(floe_buf_puts(&b, "0123456789"), 0);
	T_EQ_INT(floe_buf_putc(&b, 'x'), FLOE_ENOMEM);
	T_EQ_INT(b.len, 10);
	T_EQ_STR(floe_buf_cstr(&b), "0123456789");
	floe_buf_clear(&b);
	T_EQ_INT(floe_buf_put_zigzag(&b, -1), 0);
	T_EQ_INT(b.data[0], 1);
	floe_buf_reset(&b);
}

/* floe_buf_put_i64 writes what printf's %lld writes */
static void test_buf_i64(void)
{
	const int64_t v[] = {0,	 1,  9,	 10, 99, 100, -1, -9, -10, -100, 123456789, -987654321,
			     INT64_MAX, INT64_MIN, INT64_MIN + 1, (int64_t)1 << 53, 1000000000000000000LL};
	char want[32];
	floe_buf b;
	floe_buf_init(&b, 0);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		floe_buf_clear(&b);
		snprintf(want, sizeof(want), "%lld", (long long)v[i]);
		T_EQ_INT(floe_buf_put_i64(&b, v[i]), 0);
		T_EQ_STR(floe_buf_cstr(&b), want);
	}
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int64_t s = (int64_t)(x >> (i % 64));
		if (i & 1)
			s = (int64_t)(0 - (uint64_t)s); /* INT64_MIN stays itself */
		floe_buf_clear(&b);
		snprintf(want, sizeof(want), "%lld", (long long)s);
		T_EQ_INT(floe_buf_put_i64(&b, s), 0);
		T_EQ_STR(floe_buf_cstr(&b), want);
	}
	floe_buf_reset(&b);
}

static void test_alloc_failure_injection(void)
{
	floe_alloc__fail_after(1);
	void *p = floe_malloc(10);
	T_CHECK(p == NULL);
	floe_alloc__fail_after(0);
	p = floe_malloc(10);
	T_CHECK(p != NULL);
	floe_free(p);
	T_CHECK(floe_calloc(SIZE_MAX / 2, 4) == NULL);
}

static void test_murmur3_vectors(void)
{
	/* spec appendix B, see ../shared/testdata/spec-vectors.md */
	uint8_t le34[8] = {0x22, 0, 0, 0, 0, 0, 0, 0};
	T_EQ_INT((int32_t)floe_murmur3_32(le34, 8, 0), 2017239379);
	T_EQ_INT((int32_t)floe_murmur3_32("iceberg", 7, 0), 1210000089);
	uint8_t b4[4] = {0, 1, 2, 3};
	T_EQ_INT((int32_t)floe_murmur3_32(b4, 4, 0), -188683207);
	uint8_t dec[2] = {0x05, 0x8c};
	T_EQ_INT((int32_t)floe_murmur3_32(dec, 2, 0), -500754589);
	T_EQ_INT((int32_t)floe_murmur3_32("34", 2, 0), -427558391);
}

static void test_crc(void)
{
	T_EQ_INT(floe_crc32c(0, "123456789", 9), 0xe3069283);
	T_EQ_INT(floe_crc32(0, "123456789", 9), 0xcbf43926);
	/* chaining */
	uint32_t c = floe_crc32c(0, "1234", 4);
	T_EQ_INT(floe_crc32c(c, "56789", 5), 0xe3069283);
}

static void test_uuid(void)
{
	uint8_t u[16], v[16];
	char s[37];
	floe_uuid_v4(u);
	T_EQ_INT(u[6] >> 4, 4);
	T_EQ_INT(u[8] >> 6, 2);
	floe_uuid_format(u, s);
	T_EQ_INT(strlen(s), 36);
	T_CHECK(floe_uuid_parse(s, 36, v));
	T_EQ_MEM(u, v, 16);
	T_CHECK(!floe_uuid_parse("f79c3e09-677c-4bbd-a479-3f349cb785e", 35, v));
	T_CHECK(floe_uuid_parse("F79C3E09-677C-4BBD-A479-3F349CB785E7", 36, v));
	T_EQ_INT(v[0], 0xf7);
}

static void test_time(void)
{
	char buf[64];
	int64_t d, ns, us;
	bool z;
	T_EQ_INT(floe_days_from_civil(2017, 11, 16), 17486);
	T_EQ_INT(floe_days_from_civil(1969, 12, 31), -1);
	T_EQ_INT(floe_days_from_civil(1, 1, 1), -719162);
	floe_format_date(buf, sizeof(buf), -1);
	T_EQ_STR(buf, "1969-12-31");
	floe_format_timestamp_us(buf, sizeof(buf), -1, 0);
	T_EQ_STR(buf, "1969-12-31T23:59:59.999999");
	floe_format_timestamp_us(buf, sizeof(buf), 1510871468000000, 0);
	T_EQ_STR(buf, "2017-11-16T22:31:08");
	floe_format_timestamp_us(buf, sizeof(buf), 1510871468123000, 0);
	T_EQ_STR(buf, "2017-11-16T22:31:08.123");
	floe_format_timestamp_us(buf, sizeof(buf), 1510871468000000, 6);
	T_EQ_STR(buf, "2017-11-16T22:31:08.000000");
	floe_format_time_us(buf, sizeof(buf), 81068000000, 0);
	T_EQ_STR(buf, "22:31:08");
	T_CHECK(floe_parse_date("2017-11-16", 10, &d));
	T_EQ_INT(d, 17486);
	T_CHECK(!floe_parse_date("2017-02-29", 10, &d));
	T_CHECK(floe_parse_date("2016-02-29", 10, &d));
	T_CHECK(floe_parse_timestamp_ns("2017-11-16T14:31:08.000001001-08:00", 35, &ns, &z));
	T_CHECK(z);
	T_EQ_INT(ns, INT64_C(1510871468000001001));
	T_CHECK(floe_parse_timestamp_us("1969-12-31 23:59:59.9999995", 27, &us, &z));
	T_EQ_INT(us, -1);
	T_CHECK(!z);
	T_CHECK(floe_parse_time_ns("22:31:08", 8, &ns));
	T_EQ_INT(ns, INT64_C(81068000000000));
	T_EQ_INT(floe_floordiv(-1001, 1000), -2);
	T_EQ_INT(floe_floormod(-1, 10), 9);
}

static void test_strings(void)
{
	floe_buf b;
	int64_t v;
	floe_buf_init(&b, 0);
	T_OK(floe_urlencode_form(&b, "a b/é=1", strlen("a b/é=1")), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "a+b%2F%C3%A9%3D1");
	floe_buf_clear(&b);
	T_OK(floe_base64_encode(&b, (const uint8_t *)"hello", 5), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "aGVsbG8=");
	floe_buf_clear(&b);
	T_OK(floe_base64_decode(&b, "aGVsbG8=", 8), NULL);
	T_EQ_STR(floe_buf_cstr(&b), "hello");
	floe_buf_reset(&b);
	T_CHECK(floe_parse_i64("-9223372036854775808", 20, &v) && v == INT64_MIN);
	T_CHECK(!floe_parse_i64("9223372036854775808", 19, &v));
	T_CHECK(!floe_parse_i64("12a", 3, &v));
	T_CHECK(floe_parse_duration_ms("10s", &v) && v == 10000);
	T_CHECK(floe_parse_size("128MB", &v) && v == 134217728);
	T_EQ_INT(floe_levenshtein("parallelism", "paralelism"), 1);

	floe_strmap m;
	floe_strmap_init(&m);
	T_OK(floe_strmap_set(&m, "a", "1"), NULL);
	T_OK(floe_strmap_set(&m, "b", "2"), NULL);
	T_OK(floe_strmap_set(&m, "a", "3"), NULL);
	T_EQ_INT(m.len, 2);
	T_EQ_STR(floe_strmap_get(&m, "a"), "3");
	T_EQ_STR(m.items[1].key, "b");
	T_CHECK(floe_strmap_remove(&m, "a"));
	T_EQ_STR(m.items[0].key, "b");
	floe_strmap_reset(&m);
}

static void test_hmap(void)
{
	floe_hmap m;
	floe_imap im;
	uint64_t v;
	char key[32];
	floe_hmap_init(&m);
	for (int i = 0; i < 10000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		T_CHECK(floe_hmap_put_str(&m, key, (uint64_t)i) == 0);
	}
	T_EQ_INT(m.len, 10000);
	T_CHECK(floe_hmap_get_str(&m, "k4242", &v) && v == 4242);
	T_CHECK(!floe_hmap_get_str(&m, "nope", &v));
	floe_hmap_reset(&m);
	floe_imap_init(&im);
	for (int64_t i = -500; i < 500; i++)
		T_CHECK(floe_imap_put(&im, i * 7919, (uint64_t)(i + 1000)) == 0);
	T_CHECK(floe_imap_get(&im, -7919, &v) && v == 999);
	T_CHECK(!floe_imap_get(&im, 1, &v));
	floe_imap_reset(&im);
}

static void test_codecs_roundtrip(void)
{
	static const floe_codec codecs[] = {FLOE_CODEC_NONE, FLOE_CODEC_SNAPPY, FLOE_CODEC_GZIP,
					    FLOE_CODEC_DEFLATE, FLOE_CODEC_ZLIB, FLOE_CODEC_ZSTD,
					    FLOE_CODEC_LZ4_RAW, FLOE_CODEC_LZ4_FRAME,
					    FLOE_CODEC_BROTLI};
	uint8_t src[20000];
	floe_error err;
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i % 251 < 100 ? 'a' : i * 7);
	for (size_t k = 0; k < sizeof(codecs) / sizeof(codecs[0]); k++) {
		floe_buf c, d;
		uint8_t out[20000];
		floe_buf_init(&c, 0);
		floe_buf_init(&d, 0);
		floe_error_clear(&err);
		T_OK(floe_codec_compress(codecs[k], 0, src, sizeof(src), &c, &err), &err);
		T_OK(floe_codec_decompress(codecs[k], c.data, c.len, out, sizeof(out), &err), &err);
		T_EQ_MEM(out, src, sizeof(src));
		if (codecs[k] == FLOE_CODEC_LZ4_RAW) {
			/* raw lz4 blocks carry no size: only the sized call works */
			T_ERR(floe_codec_decompress_any(codecs[k], c.data, c.len, &d, 1 << 20, &err),
			      FLOE_EINVAL);
			floe_buf_reset(&c);
			floe_buf_reset(&d);
			continue;
		}
		T_OK(floe_codec_decompress_any(codecs[k], c.data, c.len, &d, 1 << 20, &err), &err);
		T_EQ_INT(d.len, sizeof(src));
		/* a wrong expected size must be an error, not an overflow */
		if (codecs[k] != FLOE_CODEC_NONE)
			T_CHECK(floe_codec_decompress(codecs[k], c.data, c.len, out, 100, &err) != 0);
		/* bounded output */
		floe_buf_clear(&d);
		T_CHECK(floe_codec_decompress_any(codecs[k], c.data, c.len, &d, 1000, &err) != 0);
		floe_buf_reset(&c);
		floe_buf_reset(&d);
	}
}

static void test_cursor(void)
{
	uint8_t data[] = {0x96, 0x01, 0xff};
	floe_cursor c;
	uint64_t v;
	floe_cursor_init(&c, data, sizeof(data));
	T_CHECK(floe_cursor_uvarint(&c, &v) && v == 150);
	T_CHECK(!floe_cursor_uvarint(&c, &v));
	T_EQ_INT(c.off, 2); /* unchanged after a failed read */
}

static void test_utf8_valid(void)
{
	T_CHECK(floe_utf8_valid("", 0));
	T_CHECK(floe_utf8_valid("plain ascii text, longer than eight", 35));
	T_CHECK(floe_utf8_valid("pr\xc3\xa9nom \xe2\x82\xac \xf0\x9f\x98\x80", 16));
	T_CHECK(!floe_utf8_valid("\xce", 1));             /* truncated */
	T_CHECK(!floe_utf8_valid("\xc0\xaf", 2));         /* overlong */
	T_CHECK(!floe_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
	T_CHECK(!floe_utf8_valid("\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
	T_CHECK(!floe_utf8_valid("abcdefgh\xff", 9));
}

int main(void)
{
	T_RUN(test_utf8_valid);
	T_RUN(test_error_prefix);
	T_RUN(test_arena);
	T_RUN(test_buf_cap);
	T_RUN(test_buf_i64);
	T_RUN(test_alloc_failure_injection);
	T_RUN(test_murmur3_vectors);
	T_RUN(test_crc);
	T_RUN(test_uuid);
	T_RUN(test_time);
	T_RUN(test_strings);
	T_RUN(test_hmap);
	T_RUN(test_codecs_roundtrip);
	T_RUN(test_cursor);
	return t_finish();
}
