/*
 * test_io.c — FileIO contract on the local and memory backends.
 */
#include <stdlib.h>

#include "harness.h"
#include "io/aws_secret.h"
#include "io/fileio.h"
#include "util/alloc.h"

static int count_cb(const floe_file_info *fi, void *payload)
{
	(void)fi;
	(*(int *)payload)++;
	return 0;
}

static void contract(floe_fileio *io, const char *root)
{
	char p1[512], p2[512], p3[512];
	floe_error err = {0};
	floe_buf b;
	floe_output *out;
	floe_buf_init(&b, 0);
	snprintf(p1, sizeof(p1), "%s/a/b/one.txt", root);
	snprintf(p2, sizeof(p2), "%s/a/two.txt", root);
	snprintf(p3, sizeof(p3), "%s/a/three.txt", root);

	T_OK(floe_io_write_all(io, p1, "hello", 5, false, &err), &err);
	T_ERR(floe_io_write_all(io, p1, "other", 5, false, &err), FLOE_EEXISTS);
	T_OK(floe_io_read_all(io, p1, &b, 100, &err), &err);
	T_EQ_STR(floe_buf_cstr(&b), "hello"); /* never replaced */
	T_OK(floe_io_write_all(io, p1, "replaced", 8, true, &err), &err);
	floe_buf_clear(&b);
	T_OK(floe_io_read_all(io, p1, &b, 100, &err), &err);
	T_EQ_STR(floe_buf_cstr(&b), "replaced");
	T_ERR(floe_io_read_all(io, p1, &b, 3, &err), FLOE_ECORRUPT); /* over the cap */

	/* nothing is visible before close, nothing after abort */
	T_OK(floe_io_create(io, p2, false, &out, &err), &err);
	T_OK(floe_output_write(out, "x", 1, &err), &err);
	T_CHECK(!floe_io_exists(io, p2));
	floe_output_abort(out);
	T_CHECK(!floe_io_exists(io, p2));

	/* two writers race for one name: exactly one wins */
	floe_output *o1, *o2;
	T_OK(floe_io_create(io, p3, false, &o1, &err), &err);
	T_OK(floe_io_create(io, p3, false, &o2, &err), &err);
	T_OK(floe_output_write(o1, "1", 1, &err), &err);
	T_OK(floe_output_write(o2, "2", 1, &err), &err);
	T_OK(floe_output_close(o1, &err), &err);
	T_ERR(floe_output_close(o2, &err), FLOE_EEXISTS);

	int n = 0;
	T_OK(floe_io_list(io, root, count_cb, &n, &err), &err);
	T_EQ_INT(n, 2);

	T_OK(floe_io_rename_noreplace(io, p3, p2, &err), &err);
	T_CHECK(!floe_io_exists(io, p3));
	T_ERR(floe_io_rename_noreplace(io, p1, p2, &err), FLOE_EEXISTS);
	T_OK(floe_io_remove(io, p2, &err), &err);
	T_ERR(floe_io_remove(io, p2, &err), FLOE_ENOTFOUND);
	floe_input *in;
	T_ERR(floe_io_open_read(io, p2, &in, &err), FLOE_ENOTFOUND);
	floe_buf_reset(&b);
}

static void test_local(void)
{
	floe_fileio *io = floe_io_local_new();
	char root[512];
	snprintf(root, sizeof(root), "file://%s", t_tmpdir());
	contract(io, root);
	floe_io_free(io);
}

static void test_memory(void)
{
	floe_fileio *io = floe_io_memory_new();
	floe_error err = {0};
	contract(io, "mem://wh");
	floe_io_memory_fail(io, "close", 2, FLOE_EIO);
	T_OK(floe_io_write_all(io, "mem://x/1", "a", 1, false, &err), &err);
	T_ERR(floe_io_write_all(io, "mem://x/2", "a", 1, false, &err), FLOE_EIO);
	T_CHECK(!floe_io_exists(io, "mem://x/2"));
	T_OK(floe_io_write_all(io, "mem://x/3", "a", 1, false, &err), &err);
	floe_io_free(io);
}

static void test_router_and_paths(void)
{
	floe_fileio *io = floe_io_router_new(floe_io_local_new(), floe_io_memory_new(), NULL);
	floe_error err = {0};
	T_OK(floe_io_write_all(io, "mem://a/b", "z", 1, false, &err), &err);
	T_CHECK(floe_io_exists(io, "mem://a/b"));
	floe_input *in;
	T_ERR(floe_io_open_read(io, "s3://bucket/key", &in, &err), FLOE_EUNSUPPORTED);
	T_CHECK(strstr(err.msg, "scheme 's3'") != NULL);
	floe_io_free(io);
	T_EQ_STR(floe_io_local_path("file:///tmp/x"), "/tmp/x");
	T_EQ_STR(floe_io_local_path("file:/tmp/x"), "/tmp/x");
	T_EQ_STR(floe_io_local_path("/tmp/x"), "/tmp/x");
	T_CHECK(floe_io_local_path("s3://b/k") == NULL);
	char s[16];
	floe_io_scheme("S3://b/k", s, sizeof(s));
	T_EQ_STR(s, "s3");
	floe_io_scheme("file:/x", s, sizeof(s));
	T_EQ_STR(s, "file");
	floe_io_scheme("/x", s, sizeof(s));
	T_EQ_STR(s, "");
}

static void test_secret_refs(void)
{
	floe_error err = {0};
	floe_secret_ref r;
	const char *t = "${secret:prod/pg#password}@host";
	T_OK(floe_secret_parse_ref(&r, t, strlen(t), &err), &err);
	T_EQ_INT((long)r.len, 26);
	T_CHECK(r.name_len == 7 && !memcmp(r.name, "prod/pg", 7));
	T_CHECK(r.field_len == 8 && !memcmp(r.field, "password", 8));
	t = "${secret:arn:aws:secretsmanager:eu-west-1:1:secret:x}";
	T_OK(floe_secret_parse_ref(&r, t, strlen(t), &err), &err);
	T_CHECK(!r.field && r.name_len == strlen(t) - 10);
	T_ERR(floe_secret_parse_ref(&r, "${secret:x", 10, &err), FLOE_EINVAL);
	T_ERR(floe_secret_parse_ref(&r, "${secret:#f}", 12, &err), FLOE_EINVAL);
	T_ERR(floe_secret_parse_ref(&r, "${secret:x#}", 12, &err), FLOE_EINVAL);
	T_CHECK(floe_secret_has_ref("a ${secret:x} b") && !floe_secret_has_ref("${X}") &&
		!floe_secret_has_ref(NULL));
	/* no reference: nothing asked, nothing copied */
	char *out = (char *)1;
	T_OK(floe_secret_expand(&out, "postgresql://u:${PW}@h/db", true, &err), &err);
	T_CHECK(out == NULL);

	const char *ans = "{\"Name\":\"pg\",\"SecretString\":\"{\\\"user\\\":\\\"floe\\\","
			  "\\\"password\\\":\\\"p@ss\\\",\\\"port\\\":5432}\"}";
	char *s = NULL, *v = NULL;
	T_OK(floe_secret_string(&s, ans, strlen(ans), "pg", &err), &err);
	T_OK(floe_secret_field(&v, s, "pg", "password", &err), &err);
	T_EQ_STR(v, "p@ss");
	floe_secret_free(v);
	T_OK(floe_secret_field(&v, s, "pg", "port", &err), &err);
	T_EQ_STR(v, "5432");
	floe_secret_free(v);
	T_ERR(floe_secret_field(&v, s, "pg", "nope", &err), FLOE_ENOTFOUND);
	T_EQ_STR(err.msg, "secret 'pg' has no field 'nope' (it has: user, password, port)");
	T_ERR(floe_secret_field(&v, "p@ss", "pg", "password", &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "p@ss") == NULL); /* a value is never in a message */
	floe_secret_free(s);
	const char *bin = "{\"SecretBinary\":\"AA==\"}";
	T_ERR(floe_secret_string(&s, bin, strlen(bin), "b", &err), FLOE_EUNSUPPORTED);
	T_ERR(floe_secret_string(&s, "nope", 4, "b", &err), FLOE_ECORRUPT);

	/* Secrets Manager unreachable: an I/O error naming the secret */
	setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", "http://127.0.0.1:1", 1);
	setenv("AWS_ACCESS_KEY_ID", "AKIDTEST", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "test", 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	int rc = floe_secret_expand(&out, "${secret:unit/x#k}", false, &err);
	T_CHECK(rc == FLOE_EIO || rc == FLOE_ETIMEDOUT);
	T_CHECK(strstr(err.msg, "secret 'unit/x'") != NULL);
	unsetenv("AWS_ENDPOINT_URL_SECRETS_MANAGER");
}

int main(void)
{
	T_RUN(test_local);
	T_RUN(test_memory);
	T_RUN(test_router_and_paths);
	T_RUN(test_secret_refs);
	return t_finish();
}
