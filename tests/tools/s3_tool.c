/*
 * s3_tool.c — drives the S3 FileIO against a real S3 server for
 * tests/interop/test_s3.py (a test tool, not a product command).
 *
 *   s3_tool contract s3://bucket/prefix [k=v ...]
 *       the FileIO contract on S3: single PUT, no-replace, overwrite, abort,
 *       a multipart upload of several parts, ranged reads at many offsets,
 *       list with pagination, stat, delete; exits 0 when all hold
 *   s3_tool stress s3://bucket/prefix FILES [k=v ...]
 *       writes FILES objects (small and multipart), reads each back and
 *       compares, deletes them in batches: for runs through a fault-injecting proxy
 *   s3_tool batch s3://bucket/prefix FILES [k=v ...]
 *       writes FILES small objects (some names with XML's special characters
 *       and spaces), deletes them and two absent names in one
 *       floe_io_remove_batch; prints "denied N" for the keys whose code is
 *       not 0 (a proxy may deny keys containing "denied") and checks the
 *       others are gone
 *
 *   s3_tool put s3://bucket/key MIB [k=v ...]
 *       writes one object of MIB MiB in 64 KiB writes (a multipart upload in
 *       parts of s3.multipart.part-size-bytes), checks its size: for
 *       bench/s3, which takes the process's peak memory
 *
 * k=v are S3 properties (s3.endpoint, s3.path-style-access, ...).
 * Prints one line per failed check and "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fileio.h"
#include "io/s3.h"
#include "util/alloc.h"

static int passed, failed;

#define CHECK(cond, ...)                                                                      \
	do {                                                                                  \
		if (cond) {                                                                   \
			passed++;                                                             \
		} else {                                                              \
			failed++;                                                             \
			printf("FAIL line %d: %s: ", __LINE__, #cond);                         \
			printf(__VA_ARGS__);                                                  \
			printf("\n");                                                         \
		}                                                                             \
	} while (0)

/* byte i of a test object of seed s */
static uint8_t pat(uint64_t i, unsigned s)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ s;
	return (uint8_t)(x >> 29);
}

static int write_pattern(floe_fileio *io, const char *path, size_t n, unsigned seed, bool ow,
			 floe_error *err)
{
	floe_output *out;
	uint8_t chunk[65536];
	int rc = floe_io_create(io, path, ow, &out, err);
	if (rc)
		return rc;
	for (size_t off = 0; off < n;) {
		size_t k = n - off < sizeof(chunk) ? n - off : sizeof(chunk);
		for (size_t i = 0; i < k; i++)
			chunk[i] = pat(off + i, seed);
		if ((rc = floe_output_write(out, chunk, k, err))) {
			floe_output_abort(out);
			return rc;
		}
		off += k;
	}
	return floe_output_close(out, err);
}

static bool check_pattern(const uint8_t *p, uint64_t off, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(off + i, seed))
			return false;
	return true;
}

static int verify(floe_fileio *io, const char *path, size_t n, unsigned seed, floe_error *err)
{
	floe_input *in;
	int rc = floe_io_open_read(io, path, &in, err);
	if (rc)
		return rc;
	uint8_t *buf = floe_malloc(n ? n : 1);
	if (!buf) {
		floe_input_close(in);
		return FLOE_ENOMEM;
	}
	if (in->size != n)
		rc = floe_error_set(err, FLOE_ECORRUPT, "%s: size %llu, expected %zu", path,
				    (unsigned long long)in->size, n);
	if (!rc)
		rc = floe_input_read_exact(in, 0, buf, n, err);
	if (!rc && !check_pattern(buf, 0, n, seed))
		rc = floe_error_set(err, FLOE_ECORRUPT, "%s: content differs", path);
	floe_free(buf);
	floe_input_close(in);
	return rc;
}

typedef struct listed {
	int n;
	uint64_t bytes;
	char names[64][256];
} listed;

static int on_file(const floe_file_info *fi, void *payload)
{
	listed *l = payload;
	if (l->n < 64)
		snprintf(l->names[l->n], sizeof(l->names[0]), "%s", fi->path);
	l->n++;
	l->bytes += fi->size;
	return 0;
}

static void contract(floe_fileio *io, const char *root)
{
	char a[512], b[512], c[512], big[512], other[512];
	floe_error err = {0};
	floe_buf buf;
	floe_output *out;
	floe_input *in;
	floe_file_info fi;
	floe_buf_init(&buf, 0);
	snprintf(a, sizeof(a), "%s/t/metadata/one.json", root);
	snprintf(b, sizeof(b), "%s/t/two.txt", root);
	snprintf(c, sizeof(c), "%s/t/x/three.txt", root);
	snprintf(big, sizeof(big), "%s/t/data/big.parquet", root);
	snprintf(other, sizeof(other), "%s/t2/not-listed.txt", root);

	int rc = floe_io_write_all(io, a, "hello", 5, false, &err);
	CHECK(rc == 0, "%s", err.msg);
	rc = floe_io_write_all(io, a, "other", 5, false, &err);
	CHECK(rc == FLOE_EEXISTS, "no-replace write: %s", err.msg);
	rc = floe_io_read_all(io, a, &buf, 100, &err);
	CHECK(rc == 0 && buf.len == 5 && !memcmp(buf.data, "hello", 5), "never replaced: %s",
	      err.msg);
	rc = floe_io_write_all(io, a, "replaced", 8, true, &err);
	CHECK(rc == 0, "%s", err.msg);
	floe_buf_clear(&buf);
	rc = floe_io_read_all(io, a, &buf, 100, &err);
	CHECK(rc == 0 && buf.len == 8 && !memcmp(buf.data, "replaced", 8), "overwrite: %s", err.msg);
	rc = floe_io_read_all(io, a, &buf, 3, &err);
	CHECK(rc == FLOE_ECORRUPT, "over the cap");

	/* an empty object */
	rc = floe_io_write_all(io, c, "", 0, false, &err);
	CHECK(rc == 0, "empty: %s", err.msg);
	rc = floe_io_stat(io, c, &fi, &err);
	CHECK(rc == 0 && fi.size == 0 && fi.mtime_ms > 0, "stat empty: %s", err.msg);
	floe_buf_clear(&buf);
	rc = floe_io_read_all(io, c, &buf, 100, &err); /* a 416 to the first range: the HEAD */
	CHECK(rc == 0 && buf.len == 0, "read empty whole: %s", err.msg);
	rc = floe_io_open_read(io, c, &in, &err);
	CHECK(rc == 0 && in->size == 0, "open empty: %s", err.msg);
	if (!rc)
		floe_input_close(in);

	/* nothing visible before close, nothing after abort */
	rc = floe_io_create(io, b, false, &out, &err);
	CHECK(rc == 0, "%s", err.msg);
	if (!rc) {
		rc = floe_output_write(out, "x", 1, &err);
		CHECK(!floe_io_exists(io, b), "visible before close");
		floe_output_abort(out);
		CHECK(!floe_io_exists(io, b), "visible after abort");
	}

	/* a multipart upload of 3 parts (part size 5 MiB), then aborted one */
	size_t n = (12u << 20) + 12345;
	rc = write_pattern(io, big, n, 7, false, &err);
	CHECK(rc == 0, "multipart: %s", err.msg);
	rc = floe_io_stat(io, big, &fi, &err);
	CHECK(rc == 0 && fi.size == n, "multipart size: %s", err.msg);
	rc = floe_io_open_read(io, big, &in, &err);
	CHECK(rc == 0, "%s", err.msg);
	if (!rc) {
		/* a footer read, small reads served by read-ahead, large reads */
		uint8_t *p = floe_malloc(6u << 20);
		uint64_t offs[] = {n - 8, n - 4000, 0, 1, 100000, 5u << 20, (5u << 20) - 3, n - 1};
		size_t lens[] = {8, 3992, 10, 1000, 300000, 6u << 20, 7, 1};
		for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
			size_t got = 0;
			size_t want = lens[i] < n - offs[i] ? lens[i] : (size_t)(n - offs[i]);
			rc = in->ops->read_at(in, offs[i], p, lens[i], &got, &err);
			CHECK(rc == 0 && got == want && check_pattern(p, offs[i], got, 7),
			      "read %zu at %llu: got %zu: %s", lens[i], (unsigned long long)offs[i],
			      got, err.msg);
		}
		size_t got = 1;
		rc = in->ops->read_at(in, n, p, 10, &got, &err);
		CHECK(rc == 0 && got == 0, "read at the end");
		floe_free(p);
		floe_input_close(in);
	}
	/* opened to be read from the start: the size comes with the first bytes */
	rc = floe_io_open_read_seq(io, big, &in, &err);
	CHECK(rc == 0, "%s", err.msg);
	if (!rc) {
		uint8_t *p = floe_malloc(n);
		CHECK(in->size == n, "sequential open size %llu", (unsigned long long)in->size);
		uint64_t offs[] = {0, 100, 200000, 0, n - 10};
		size_t lens[] = {50, 100000, 5u << 20, n, 10};
		for (size_t i = 0; p && i < sizeof(offs) / sizeof(offs[0]); i++) {
			size_t got = 0;
			rc = in->ops->read_at(in, offs[i], p, lens[i], &got, &err);
			CHECK(rc == 0 && got == lens[i] && check_pattern(p, offs[i], got, 7),
			      "sequential read %zu at %llu: got %zu: %s", lens[i],
			      (unsigned long long)offs[i], got, err.msg);
		}
		floe_free(p);
		floe_input_close(in);
	}
	rc = floe_io_open_read_seq(io, other, &in, &err);
	CHECK(rc == FLOE_ENOTFOUND, "sequential open of a missing file: %s", err.msg);
	rc = floe_io_create(io, b, false, &out, &err);
	if (!rc) {
		uint8_t *p = floe_calloc(1, 11u << 20);
		rc = floe_output_write(out, p, 11u << 20, &err); /* two parts sent */
		CHECK(rc == 0, "%s", err.msg);
		floe_output_abort(out); /* the upload is aborted */
		floe_free(p);
		CHECK(!floe_io_exists(io, b), "visible after a multipart abort");
	}

	/* two writers race for one name: one wins */
	floe_output *o1, *o2;
	if (!floe_io_create(io, b, false, &o1, &err) && !floe_io_create(io, b, false, &o2, &err)) {
		rc = floe_output_write(o1, "1", 1, &err) | floe_output_write(o2, "2", 1, &err);
		int r1 = floe_output_close(o1, &err);
		int r2 = floe_output_close(o2, &err);
		CHECK(r1 == 0 && r2 == FLOE_EEXISTS, "race: %d %d", r1, r2);
	}
	rc = floe_io_write_all(io, other, "o", 1, false, &err);
	CHECK(rc == 0, "%s", err.msg);

	/* list: everything under t/ (pages of 2), nothing of t2/ */
	listed l = {0};
	char t[512];
	snprintf(t, sizeof(t), "%s/t", root);
	rc = floe_io_list(io, t, on_file, &l, &err);
	CHECK(rc == 0 && l.n == 4 && l.bytes == 8 + 0 + 1 + n, "list: %d files, %llu bytes: %s",
	      l.n, (unsigned long long)l.bytes, err.msg);
	for (int i = 0; i < l.n && i < 64; i++)
		CHECK(strncmp(l.names[i], t, strlen(t)) == 0, "listed %s", l.names[i]);

	rc = floe_io_rename_noreplace(io, a, c, &err);
	CHECK(rc == FLOE_EUNSUPPORTED, "rename");
	CHECK(floe_io_remove(io, a, &err) == 0, "%s", err.msg);
	CHECK(!floe_io_exists(io, a), "removed");
	rc = floe_io_open_read(io, a, &in, &err);
	CHECK(rc == FLOE_ENOTFOUND, "open removed: %s", err.msg);
	CHECK(strstr(err.msg, "does not exist") != NULL, "%s", err.msg);
	floe_buf_reset(&buf);
}

static void stress(floe_fileio *io, const char *root, int files)
{
	char p[512];
	floe_error err = {0};
	for (int i = 0; i < files; i++) {
		size_t n = i % 4 == 3 ? (6u << 20) + (size_t)i * 1000 : (size_t)i * 7919 + 1;
		snprintf(p, sizeof(p), "%s/f%04d", root, i);
		int rc = write_pattern(io, p, n, (unsigned)i, false, &err);
		CHECK(rc == 0, "write %s: %s", p, err.msg);
		if (!rc) {
			rc = verify(io, p, n, (unsigned)i, &err);
			CHECK(rc == 0, "verify %s: %s", p, err.msg);
		}
	}
	listed l = {0};
	int rc = floe_io_list(io, root, on_file, &l, &err);
	CHECK(rc == 0 && l.n == files, "list: %d of %d: %s", l.n, files, err.msg);
	char **paths = floe_calloc((size_t)files + 1, sizeof(*paths));
	int *codes = floe_calloc((size_t)files + 1, sizeof(*codes));
	for (int i = 0; paths && i < files; i++) {
		snprintf(p, sizeof(p), "%s/f%04d", root, i);
		paths[i] = floe_strdup(p);
	}
	rc = paths && codes ? floe_io_remove_batch(io, (const char *const *)paths, (size_t)files,
						   codes, &err)
			    : FLOE_ENOMEM;
	CHECK(rc == 0, "remove batch: %s", err.msg);
	for (int i = 0; !rc && i < files; i++)
		CHECK(codes[i] == 0, "remove %s: %d", paths[i], codes[i]);
	l.n = 0;
	rc = floe_io_list(io, root, on_file, &l, &err);
	CHECK(rc == 0 && l.n == 0, "after the batch delete: %d left: %s", l.n, err.msg);
	for (int i = 0; paths && i < files; i++)
		floe_free(paths[i]);
	floe_free(paths);
	floe_free(codes);
}

static void batch(floe_fileio *io, const char *root, int files)
{
	static const char *const odd[] = {"a&b", "x<y>z", "q\"uote's", "with space", "denied-1",
					  "denied-2", "%percent+plus"};
	size_t n = (size_t)files + 2;
	char **paths = floe_calloc(n, sizeof(*paths));
	int *codes = floe_calloc(n, sizeof(*codes));
	floe_error err = {0};
	char p[512];
	if (!paths || !codes) {
		CHECK(0, "out of memory");
		return;
	}
	for (int i = 0; i < files; i++) {
		if ((size_t)i < sizeof(odd) / sizeof(odd[0]))
			snprintf(p, sizeof(p), "%s/%s", root, odd[i]);
		else
			snprintf(p, sizeof(p), "%s/f%05d", root, i);
		paths[i] = floe_strdup(p);
		int rc = floe_io_write_all(io, p, "x", 1, true, &err);
		CHECK(rc == 0, "write %s: %s", p, err.msg);
	}
	snprintf(p, sizeof(p), "%s/absent-1", root);
	paths[files] = floe_strdup(p);
	snprintf(p, sizeof(p), "%s/absent-2", root);
	paths[files + 1] = floe_strdup(p);
	int rc = floe_io_remove_batch(io, (const char *const *)paths, n, codes, &err);
	CHECK(rc == 0, "remove batch: %s", err.msg);
	int denied = 0;
	for (size_t i = 0; i < n; i++) {
		if (codes[i]) {
			denied++;
			CHECK(strstr(paths[i], "denied") != NULL, "%s: code %d", paths[i], codes[i]);
		} else {
			CHECK(!floe_io_exists(io, paths[i]), "%s still there", paths[i]);
		}
	}
	printf("denied %d\n", denied);
	for (size_t i = 0; i < n; i++)
		floe_free(paths[i]);
	floe_free(paths);
	floe_free(codes);
}

static void put(floe_fileio *io, const char *path, size_t mib)
{
	floe_error err = {0};
	floe_file_info fi;
	size_t n = mib << 20;
	int rc = write_pattern(io, path, n, 3, true, &err);
	CHECK(rc == 0, "put %s: %s", path, err.msg);
	rc = floe_io_stat(io, path, &fi, &err);
	CHECK(rc == 0 && fi.size == n, "size of %s: %s", path, err.msg);
}

static void to_stderr(floe_log_level level, const char *msg, void *payload)
{
	(void)level;
	(void)payload;
	fprintf(stderr, "%s\n", msg);
}

int main(int argc, char **argv)
{
	floe_set_logger(to_stderr, NULL, FLOE_LOG_WARN);
	if (argc < 3) {
		fprintf(stderr, "usage: s3_tool contract|stress|batch|put s3://bucket/prefix [FILES] [k=v...]\n");
		return 2;
	}
	floe_strmap props;
	floe_strmap_init(&props);
	int first = !strcmp(argv[1], "stress") || !strcmp(argv[1], "batch") || !strcmp(argv[1], "put")
			    ? 4
			    : 3;
	for (int i = first; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq)
			return 2;
		*eq = 0;
		if (floe_strmap_set(&props, argv[i], eq + 1))
			return 2;
	}
	floe_fileio *io;
	floe_error err = {0};
	if (floe_io_s3_new(&io, &props, &err)) {
		fprintf(stderr, "s3_tool: %s\n", err.msg);
		return 1;
	}
	if (!strcmp(argv[1], "contract"))
		contract(io, argv[2]);
	else if (!strcmp(argv[1], "stress") && argc > 3)
		stress(io, argv[2], atoi(argv[3]));
	else if (!strcmp(argv[1], "batch") && argc > 3)
		batch(io, argv[2], atoi(argv[3]));
	else if (!strcmp(argv[1], "put") && argc > 3)
		put(io, argv[2], (size_t)strtoul(argv[3], NULL, 10));
	else
		return 2;
	floe_io_free(io);
	floe_strmap_reset(&props);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
