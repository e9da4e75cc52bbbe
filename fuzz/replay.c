/*
 * replay.c — runs a fuzz target over files without a fuzzing engine, so CI
 * replays the corpora (and the seed files named in the target's seed list) as
 * ordinary tests. Usage: replay_<name> <file-or-dir>...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional: a target may list extra seed paths relative to FLOE_TESTDATA. */
extern const char *const *floe_fuzz_seeds(void) __attribute__((weak));

static long n_run;

static void run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	uint8_t *buf;
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (n < 0 || n > (64L << 20)) {
		fclose(f);
		return;
	}
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		LLVMFuzzerTestOneInput(buf, (size_t)n);
		/* also every prefix-truncation class: half and minus one byte */
		if (n > 1) {
			LLVMFuzzerTestOneInput(buf, (size_t)n / 2);
			LLVMFuzzerTestOneInput(buf, (size_t)n - 1);
		}
		n_run++;
	}
	free(buf);
	fclose(f);
}

static void run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		run_file(path);
		return;
	}
	DIR *d = opendir(path);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char sub[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		run_path(sub);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		run_path(argv[i]);
	if (floe_fuzz_seeds) {
		const char *root = getenv("FLOE_TESTDATA");
		for (const char *const *s = floe_fuzz_seeds(); *s; s++) {
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s", root ? root : "../shared/testdata", *s);
			run_path(p);
		}
	}
	printf("replayed %ld inputs\n", n_run);
	return 0;
}
