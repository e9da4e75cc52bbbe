/*
 * test_public_api.c — a program that includes only floe/floe.h and links
 * only the library: the public API is complete on its own (built without
 * src/ on the include path; also compiled against an installed prefix by
 * tests/api/check_install.sh).
 *
 * It creates a table, appends rows from JSON lines through a pipeline,
 * reads them back, and checks that an options struct without its
 * initialiser is refused by name.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floe/floe.h"

static int failures;

#define CHECK(cond)                                                                           \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #cond);      \
			failures++;                                                           \
		}                                                                             \
	} while (0)

static int sink(const char *data, size_t n, void *payload)
{
	(void)data;
	(void)n;
	(void)payload;
	return 0;
}

int main(void)
{
	char dir[] = "/tmp/floe-api-XXXXXX";
	floe_error err;
	floe_catalog *cat = NULL;
	floe_table *t = NULL;
	floe_error_clear(&err);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	CHECK(floe_catalog_open_default(&cat, dir, &err) == FLOE_OK);
	if (!cat) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	CHECK(floe_catalog_create_namespace(cat, "db", NULL, 0, &err) == FLOE_OK);

	/* an options struct not made with its initialiser is refused by name */
	floe_table_create_opts bad;
	memset(&bad, 0, sizeof(bad));
	bad.schema = "id long";
	CHECK(floe_table_create(&t, cat, "db", "t", &bad, &err) == FLOE_EINVAL);
	CHECK(strstr(err.msg, "floe_table_create_opts.version") != NULL);
	CHECK(t == NULL);

	floe_table_create_opts o = FLOE_TABLE_CREATE_OPTS_INIT;
	o.schema = "id long not null, kind string";
	CHECK(floe_table_create(&t, cat, "db", "t", &o, &err) == FLOE_OK);
	floe_table_free(t);
	t = NULL;

	/* three rows through a pipeline */
	char path[256], yaml[1024];
	snprintf(path, sizeof(path), "%s/in.jsonl", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("{\"id\": 1, \"kind\": \"a\"}\n{\"id\": 2}\n{\"id\": 3, \"kind\": \"c\"}\n", f);
		fclose(f);
	}
	snprintf(yaml, sizeof(yaml),
		 "pipeline.name: api\nsources:\n  - {name: s, type: files, path: '%s'}\n"
		 "tables:\n  - {name: db.t, source: s}\n",
		 path);
	floe_pipeline *p = NULL;
	floe_pipeline_opts po = FLOE_PIPELINE_OPTS_INIT;
	CHECK(floe_pipeline_open(&p, cat, yaml, strlen(yaml), &po, &err) == FLOE_OK);
	if (p) {
		CHECK(floe_pipeline_run(p, &err) == FLOE_OK);
		floe_pipeline_free(p);
	}

	CHECK(floe_table_load(&t, cat, "db", "t", &err) == FLOE_OK);
	if (t) {
		floe_scan *s = NULL;
		floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
		int64_t n = -1;
		so.where = "id >= 2";
		CHECK(floe_scan_open(&s, t, &so, &err) == FLOE_OK);
		if (s) {
			CHECK(floe_scan_count(s, &n, &err) == FLOE_OK);
			floe_scan_free(s);
		}
		CHECK(n == 2);
		CHECK(floe_table_describe(t, sink, NULL, &err) == FLOE_OK);
		floe_table_free(t);
	}
	floe_catalog_free(cat);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	if (failures)
		fprintf(stderr, "%d failures (last error: %s)\n", failures, err.msg);
	else
		printf("public API: ok\n");
	return failures ? 1 : 0;
}
