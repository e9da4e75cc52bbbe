/*
 * test_s3.c — the pieces of the S3 FileIO that need no server: SigV4 against
 * AWS's published examples, the XML reader, S3 paths, the retry schedule,
 * the AWS shared-config reader, vended credentials by prefix and their
 * renewer. The FileIO itself is tested against a real
 * S3 server by tests/interop/test_s3.py (tests/tools/s3_tool.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "io/aws.h"
#include "io/fileio.h"
#include "io/s3.h"
#include "io/s3_xml.h"
#include "io/sigv4.h"
#include "util/timeutil.h"

#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static const char *sign(const floe_sigv4_req *r, const char *ak, const char *sk)
{
	static char out[1024];
	floe_buf b;
	floe_error err = {0};
	floe_buf_init(&b, 4096);
	T_OK(floe_sigv4_sign(&b, r, ak, sk, &err), &err);
	snprintf(out, sizeof(out), "%s", floe_buf_cstr(&b));
	floe_buf_reset(&b);
	return out;
}

/* AWS SigV4 test suite: get-vanilla and get-vanilla-query-order-key-case */
static void test_sigv4_suite(void)
{
	floe_sigv4_header h[] = {{"Host", "example.amazonaws.com"},
				 {"X-Amz-Date", "20150830T123600Z"}};
	floe_sigv4_req r = {0};
	r.method = "GET";
	r.path = "/";
	r.headers = h;
	r.n_headers = 2;
	r.payload_hash = EMPTY_SHA;
	r.region = "us-east-1";
	r.service = "service";
	r.amz_date = "20150830T123600Z";
	const char *ak = "AKIDEXAMPLE", *sk = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	T_EQ_STR(sign(&r, ak, sk),
		 "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
		 "SignedHeaders=host;x-amz-date, "
		 "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
	r.query = "Param2=value2&Param1=value1";
	T_EQ_STR(sign(&r, ak, sk),
		 "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
		 "SignedHeaders=host;x-amz-date, "
		 "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
	/* the canonical request of the latter, as the suite gives it */
	floe_buf c;
	floe_error err = {0};
	floe_buf_init(&c, 4096);
	T_OK(floe_sigv4_canonical(&c, NULL, &r, &err), &err);
	T_EQ_STR(floe_buf_cstr(&c), "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\n"
				    "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_SHA);
	floe_buf_reset(&c);
	/* a header value with a line break cannot be signed */
	floe_sigv4_header bad[] = {{"host", "a\nb"}};
	r.headers = bad;
	r.n_headers = 1;
	floe_buf_init(&c, 4096);
	T_ERR(floe_sigv4_sign(&c, &r, ak, sk, &err), FLOE_EINVAL);
	floe_buf_reset(&c);
}

/* The S3 developer guide's SigV4 examples (header-based auth). */
static void test_sigv4_s3_examples(void)
{
	const char *ak = "AKIAIOSFODNN7EXAMPLE", *sk = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
	floe_sigv4_req r = {0};
	r.region = "us-east-1";
	r.service = "s3";
	r.amz_date = "20130524T000000Z";
	r.s3 = true;
	/* GET object with a range */
	floe_sigv4_header get[] = {{"host", "examplebucket.s3.amazonaws.com"},
				   {"range", "bytes=0-9"},
				   {"x-amz-content-sha256", EMPTY_SHA},
				   {"x-amz-date", "20130524T000000Z"}};
	r.method = "GET";
	r.path = "/test.txt";
	r.headers = get;
	r.n_headers = 4;
	r.payload_hash = EMPTY_SHA;
	T_CHECK(strstr(sign(&r, ak, sk),
		       "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature="
		       "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41") != NULL);
	/* PUT object: a key with '$' encoded in the path */
	const char *put_sha = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072";
	floe_sigv4_header put[] = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
				   {"Host", "examplebucket.s3.amazonaws.com"},
				   {"x-amz-content-sha256", put_sha},
				   {"x-amz-date", "20130524T000000Z"},
				   {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
	floe_buf path;
	floe_buf_init(&path, 256);
	T_OK(floe_buf_putc(&path, '/'), NULL);
	T_OK(floe_aws_uri_encode(&path, "test$file.text", 14, true), NULL);
	T_EQ_STR(floe_buf_cstr(&path), "/test%24file.text");
	r.method = "PUT";
	r.path = floe_buf_cstr(&path);
	r.headers = put;
	r.n_headers = 5;
	r.payload_hash = put_sha;
	T_CHECK(strstr(sign(&r, ak, sk),
		       "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd") !=
		NULL);
	floe_buf_reset(&path);
	/* GET bucket lifecycle (a query key without a value) and list objects */
	r.method = "GET";
	r.path = "/";
	r.headers = get;
	r.n_headers = 4;
	floe_sigv4_header lc[] = {{"host", "examplebucket.s3.amazonaws.com"},
				  {"x-amz-content-sha256", EMPTY_SHA},
				  {"x-amz-date", "20130524T000000Z"}};
	r.headers = lc;
	r.n_headers = 3;
	r.payload_hash = EMPTY_SHA;
	r.query = "lifecycle=";
	T_CHECK(strstr(sign(&r, ak, sk),
		       "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543") !=
		NULL);
	r.query = "prefix=J&max-keys=2";
	T_CHECK(strstr(sign(&r, ak, sk),
		       "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") !=
		NULL);
}

static void test_xml(void)
{
	floe_arena a;
	floe_xml *x;
	floe_error err = {0};
	floe_arena_init(&a, 4096);
	const char *doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			  "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
			  "<IsTruncated>true</IsTruncated><!-- c -->"
			  "<Contents><Key>a&amp;b/&#x263A;&#9;&lt;</Key><Size>12</Size></Contents>"
			  "<Contents><Key><![CDATA[x<y]]></Key><Size>3</Size></Contents>"
			  "<NextContinuationToken>tok/en=</NextContinuationToken>"
			  "</ListBucketResult>";
	T_OK(floe_xml_parse(&x, &a, doc, strlen(doc), &err), &err);
	T_EQ_STR(x->name, "ListBucketResult");
	const floe_xml *c = floe_xml_child(x, "Contents");
	T_EQ_STR(floe_xml_child_text(c, "Key"), "a&b/\xe2\x98\xba\t<");
	c = floe_xml_next_same(c);
	T_EQ_STR(floe_xml_child_text(c, "Key"), "x<y");
	T_CHECK(floe_xml_next_same(c) == NULL);
	T_EQ_STR(floe_xml_child_text(x, "NextContinuationToken"), "tok/en=");
	/* errors name the offset */
	const char *bad[] = {"<a><b></a>", "<a>&bogus;</a>", "<a>", "<a></a>junk", "<a>&#0;</a>",
			     "<a x=1></a>", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		T_ERR(floe_xml_parse(&x, &a, bad[i], strlen(bad[i]), &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "XML at offset") != NULL);
	}
	T_ERR(floe_xml_parse(&x, &a, "<a>&bogus;</a>", 14, &err), FLOE_ECORRUPT);
	T_EQ_MSG(err.msg, "XML at offset 10: unknown entity");
	/* nesting is bounded */
	char deep[200 * 3 + 1] = "";
	for (int i = 0; i < 200; i++)
		memcpy(deep + 3 * i, "<a>", 4);
	T_ERR(floe_xml_parse(&x, &a, deep, strlen(deep), &err), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "nested too deeply") != NULL);
	floe_arena_reset(&a);
}

static void test_paths(void)
{
	floe_arena a;
	char *b, *k;
	floe_error err = {0};
	floe_arena_init(&a, 512);
	T_OK(floe_s3_split(&a, "s3://bkt/wh/t/data/x.parquet", &b, &k, &err), &err);
	T_EQ_STR(b, "bkt");
	T_EQ_STR(k, "wh/t/data/x.parquet");
	T_OK(floe_s3_split(&a, "s3a://bkt", &b, &k, &err), &err);
	T_EQ_STR(k, "");
	T_OK(floe_s3_split(&a, "s3n://bkt/k", &b, &k, &err), &err);
	T_EQ_STR(b, "bkt");
	T_ERR(floe_s3_split(&a, "s3:///k", &b, &k, &err), FLOE_EINVAL);
	T_ERR(floe_s3_split(&a, "gs://b/k", &b, &k, &err), FLOE_EINVAL);
	floe_arena_reset(&a);
	/* property values are checked */
	floe_strmap m;
	floe_fileio *io = NULL;
	floe_strmap_init(&m);
	T_OK(floe_strmap_set(&m, "s3.multipart.part-size-bytes", "1000"), NULL);
	T_ERR(floe_io_s3_new(&io, &m, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "s3.multipart.part-size-bytes") != NULL);
	T_OK(floe_strmap_set(&m, "s3.multipart.part-size-bytes", "5242880"), NULL);
	T_OK(floe_strmap_set(&m, "s3.endpoint", "127.0.0.1:9000"), NULL);
	T_ERR(floe_io_s3_new(&io, &m, &err), FLOE_EINVAL);
	T_OK(floe_strmap_set(&m, "s3.endpoint", "http://127.0.0.1:9000/"), NULL);
	T_OK(floe_io_s3_new(&io, &m, &err), &err);
	floe_io_free(io);
	floe_strmap_reset(&m);
}

static void test_retry_schedule(void)
{
	floe_retry r = {0};
	r.max_attempts = 4;
	r.min_wait_ms = 1;
	r.max_wait_ms = 4;
	floe_retry_start(&r);
	int n = 1;
	while (floe_retry_next(&r, 0))
		n++;
	T_EQ_INT(n, 4);
	/* a deadline shorter than the server's Retry-After stops at once */
	r.deadline_ms = 50;
	floe_retry_start(&r);
	T_CHECK(!floe_retry_next(&r, 1000));
}

static void test_shared_config(void)
{
	char cred[600], conf[600];
	const char *dir = t_tmpdir();
	snprintf(cred, sizeof(cred), "%s/credentials", dir);
	snprintf(conf, sizeof(conf), "%s/config", dir);
	FILE *f = fopen(cred, "w");
	fputs("[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = SKDEFAULT\n"
	      "[dev]\naws_access_key_id=AKDEV\naws_secret_access_key=SKDEV\naws_session_token=TDEV\n",
	      f);
	fclose(f);
	f = fopen(conf, "w");
	fputs("[profile dev]\nregion = eu-west-3\nservices = local\ns3 =\n  addressing_style = path\n"
	      "[services local]\ns3 =\n  endpoint_url = http://127.0.0.1:1234\n",
	      f);
	fclose(f);
	setenv("AWS_SHARED_CREDENTIALS_FILE", cred, 1);
	setenv("AWS_CONFIG_FILE", conf, 1);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_REGION");
	unsetenv("AWS_DEFAULT_REGION");
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_ENDPOINT_URL_S3");
	floe_aws_provider *p;
	floe_aws_creds c = {0};
	floe_error err = {0};
	floe_aws_opts o = {0};
	o.profile = "dev";
	T_OK(floe_aws_provider_new(&p, &o, NULL, &err), &err);
	T_EQ_STR(floe_aws_provider_region(p), "eu-west-3");
	T_EQ_STR(floe_aws_provider_setting(p, "s3.addressing_style"), "path");
	T_EQ_STR(floe_aws_provider_endpoint(p, "S3", "s3"), "http://127.0.0.1:1234");
	T_OK(floe_aws_provider_get(p, &c, &err), &err);
	T_EQ_STR(c.access_key, "AKDEV");
	T_EQ_STR(c.token, "TDEV");
	T_EQ_STR(c.source, "profile");
	floe_aws_creds_reset(&c);
	floe_aws_provider_free(p);
	/* the environment comes before the profile; explicit keys before both */
	setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
	setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:99", 1);
	T_OK(floe_aws_provider_new(&p, NULL, NULL, &err), &err);
	T_EQ_STR(floe_aws_provider_region(p), "us-east-1");
	T_EQ_STR(floe_aws_provider_endpoint(p, "S3", "s3"), "http://127.0.0.1:99");
	T_OK(floe_aws_provider_get(p, &c, &err), &err);
	T_EQ_STR(c.access_key, "AKENV");
	floe_aws_creds_reset(&c);
	floe_aws_provider_free(p);
	o.access_key = "AKX";
	o.secret_key = "SKX";
	T_OK(floe_aws_provider_new(&p, &o, NULL, &err), &err);
	T_OK(floe_aws_provider_get(p, &c, &err), &err);
	T_EQ_STR(c.access_key, "AKX");
	T_EQ_STR(c.source, "static");
	floe_aws_creds_reset(&c);
	floe_aws_provider_free(p);
	/* one provider asked for (Flink's aws.credentials.provider): PROFILE
	 * skips the environment and the explicit keys; a credentials file of
	 * its own; ENV_VAR without the variables finds nothing */
	char cred2[600];
	snprintf(cred2, sizeof(cred2), "%s/credentials2", dir);
	f = fopen(cred2, "w");
	fputs("[dev]\naws_access_key_id=AKFILE2\naws_secret_access_key=SKFILE2\n", f);
	fclose(f);
	o.provider = "PROFILE";
	o.credentials_file = cred2;
	T_OK(floe_aws_provider_new(&p, &o, NULL, &err), &err);
	T_OK(floe_aws_provider_get(p, &c, &err), &err);
	T_EQ_STR(c.access_key, "AKFILE2");
	T_EQ_STR(c.source, "profile");
	floe_aws_creds_reset(&c);
	floe_aws_provider_free(p);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	o.provider = "ENV_VAR";
	T_OK(floe_aws_provider_new(&p, &o, NULL, &err), &err);
	floe_error e2 = {0};
	T_ERR(floe_aws_provider_get(p, &c, &e2), FLOE_ENOTFOUND);
	T_CHECK(strstr(e2.msg, "ENV_VAR") != NULL);
	floe_aws_provider_free(p);
	o.provider = "KEYCHAIN";
	T_ERR(floe_aws_provider_new(&p, &o, NULL, &e2), FLOE_EINVAL);
	T_CHECK(strstr(e2.msg, "'KEYCHAIN' is not AUTO") != NULL);
	unsetenv("AWS_ENDPOINT_URL_S3");
	T_EQ_INT(floe_aws_parse_http_date_ms("Wed, 01 May 2024 10:00:00 GMT"), 1714557600000LL);
	T_EQ_INT(floe_aws_parse_iso8601_ms("2024-05-01T10:00:00.000Z"), 1714557600000LL);
}

static void test_content_range(void)
{
	uint64_t f, l, t;
	T_CHECK(floe_s3__parse_content_range("bytes 0-99/1234", &f, &l, &t));
	T_CHECK(f == 0 && l == 99 && t == 1234);
	T_CHECK(floe_s3__parse_content_range("bytes 1000-1233/1234", &f, &l, &t));
	T_CHECK(f == 1000 && l == 1233 && t == 1234);
	const char *bad[] = {"",
			     "bytes",
			     "bytes 0-99/*",
			     "bytes */1234",
			     "bytes 100-99/1234",
			     "bytes 0-1234/1234",
			     "bytes -5/10",
			     "bytes 0-99/1234x",
			     "bytes 0-99/ 1234",
			     "items 0-99/1234",
			     "bytes 0-1/99999999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		T_CHECK(!floe_s3__parse_content_range(bad[i], &f, &l, &t));
}

typedef struct renewals {
	int n;
	char last[256];
	floe_fileio *io;
} renewals;

/* the renewer: records the prefix and vends keys that expire in an hour */
static int renew_cb(void *payload, const char *prefix, floe_error *err)
{
	renewals *r = payload;
	floe_strmap m;
	char exp[32];
	r->n++;
	snprintf(r->last, sizeof(r->last), "%s", prefix);
	snprintf(exp, sizeof(exp), "%lld", (long long)(floe_now_ms() + 3600000));
	floe_strmap_init(&m);
	T_OK(floe_strmap_set(&m, "s3.access-key-id", "AKIDNEW"), NULL);
	T_OK(floe_strmap_set(&m, "s3.secret-access-key", "new"), NULL);
	T_OK(floe_strmap_set(&m, "s3.session-token-expires-at-ms", exp), NULL);
	int rc = floe_io_set_credentials(r->io, prefix, &m, err);
	floe_strmap_reset(&m);
	return rc;
}

static void test_vended_prefixes(void)
{
	floe_fileio *io = NULL;
	floe_error err = {0};
	floe_strmap m;
	renewals r = {0, "", NULL};
	T_OK(floe_io_s3_new(&io, NULL, &err), &err);
	if (!io)
		return;
	r.io = io;
	floe_strmap_init(&m);
	/* a bucket-wide prefix and the table's: the longer one wins for its paths */
	T_OK(floe_strmap_set(&m, "s3.access-key-id", "AKIDWIDE"), NULL);
	T_OK(floe_strmap_set(&m, "s3.secret-access-key", "wide"), NULL);
	T_OK(floe_strmap_set(&m, "s3.session-token-expires-at-ms", "4102444800000"), NULL);
	T_OK(floe_io_set_credentials(io, "s3://b/", &m, &err), &err);
	T_OK(floe_strmap_set(&m, "s3.access-key-id", "AKIDTABLE"), NULL);
	T_OK(floe_strmap_set(&m, "s3.session-token-expires-at-ms", "4102444800001"), NULL);
	T_OK(floe_io_set_credentials(io, "s3a://b/wh/db/t", &m, &err), &err);
	T_CHECK(floe_io_credentials_expire_ms(io, "s3://b/wh/db/t/data/f.parquet") == 4102444800001);
	T_CHECK(floe_io_credentials_expire_ms(io, "s3://b/wh/db/u/data/f.parquet") == 4102444800000);
	T_CHECK(floe_io_credentials_expire_ms(io, "s3://c/x") == 0);
	/* no renewer: nothing renews */
	T_ERR(floe_io_renew_credentials(io, "s3://b/wh/db/t/f", &err), FLOE_EUNSUPPORTED);
	floe_io_set_renewer(io, renew_cb, &r);
	/* renewal names the prefix as it was given, and its answer replaces it */
	T_OK(floe_io_renew_credentials(io, "s3://b/wh/db/t/data/f.parquet", &err), &err);
	T_CHECK(r.n == 1);
	T_EQ_STR(r.last, "s3a://b/wh/db/t");
	int64_t exp = floe_io_credentials_expire_ms(io, "s3://b/wh/db/t/data/f.parquet");
	T_CHECK(exp > floe_now_ms() + 3500000 && exp < 4102444800000);
	T_ERR(floe_io_renew_credentials(io, "s3://c/x", &err), FLOE_EUNSUPPORTED);
	/* keys without a secret remove the prefix: the wide one applies again */
	floe_strmap_reset(&m);
	floe_strmap_init(&m);
	T_OK(floe_io_set_credentials(io, "s3a://b/wh/db/t", &m, &err), &err);
	T_CHECK(floe_io_credentials_expire_ms(io, "s3://b/wh/db/t/data/f.parquet") == 4102444800000);
	floe_strmap_reset(&m);
	floe_io_free(io);
}

int main(void)
{
	T_RUN(test_sigv4_suite);
	T_RUN(test_sigv4_s3_examples);
	T_RUN(test_xml);
	T_RUN(test_content_range);
	T_RUN(test_paths);
	T_RUN(test_retry_schedule);
	T_RUN(test_shared_config);
	T_RUN(test_vended_prefixes);
	return t_finish();
}
