/*
 * harness.c — support functions of the test harness. Tests may use the C
 * library directly; the allocation rules apply to src/ only.
 */
#include "harness.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int t_failures;
int t_checks;
const char *t_current = "";

void t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	t_failures++;
	fprintf(stderr, "%s:%d: [%s] ", file, line, t_current);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static char *tmp_dirs[64];
static int n_tmp;

static void rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		if (d) {
			while ((e = readdir(d))) {
				char sub[4096];
				if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
					continue;
				snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
				rm_rf(sub);
			}
			closedir(d);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

int t_finish(void)
{
	if (!getenv("FLOE_KEEP_TMP"))
		for (int i = 0; i < n_tmp; i++)
			rm_rf(tmp_dirs[i]);
	for (int i = 0; i < n_tmp; i++)
		free(tmp_dirs[i]);
	printf("%d checks, %d failures\n", t_checks, t_failures);
	return t_failures ? 1 : 0;
}

const char *t_testdata(const char *rel)
{
	static char ring[8][4096];
	static int slot;
	const char *root = getenv("FLOE_TESTDATA");
	char *out = ring[slot++ % 8];
	if (!root || !*root)
		root = "../shared/testdata";
	snprintf(out, 4096, "%s/%s", root, rel);
	return out;
}

const char *t_tmpdir(void)
{
	char tmpl[] = "/tmp/floe-test-XXXXXX";
	char *d = mkdtemp(tmpl);
	if (!d || n_tmp >= 64) {
		fprintf(stderr, "mkdtemp failed\n");
		exit(2);
	}
	tmp_dirs[n_tmp] = strdup(d);
	return tmp_dirs[n_tmp++];
}

unsigned char *t_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*len = (size_t)n;
	}
	return buf;
}
