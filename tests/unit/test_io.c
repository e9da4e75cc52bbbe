/*
 * test_io.c — FileIO contract on the local and memory backends.
 */
#include <stdlib.h>

#include "harness.h"
#include "io/fileio.h"

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

int main(void)
{
	T_RUN(test_local);
	T_RUN(test_memory);
	T_RUN(test_router_and_paths);
	return t_finish();
}
