/*
 * cmd_parquet.c — `floe parquet`: look into and rewrite Parquet files.
 *
 *   floe parquet meta <file>          footer as JSON
 *   floe parquet schema <file>        schema in "message" form, with field ids
 *   floe parquet cat [opts] <file>    rows as JSON lines
 *   floe parquet rewrite [opts] <in> <out>
 *                                     read every row and write it again with
 *                                     floe's writer and the given settings
 *
 * Built on the public API in include/floe/parquet.h only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "floe/parquet.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: floe parquet meta <file>\n"
		"       floe parquet schema <file>\n"
		"       floe parquet cat [--columns a,b.c] [--limit N] [--row-groups 0,1]\n"
		"                        [--verify-crc] [--int96-us] [--batch-rows N] <file>\n"
		"       floe parquet rewrite [--codec zstd|snappy|gzip|brotli|lz4_raw|uncompressed]\n"
		"                        [--level N] [--page-version 1|2] [--no-dictionary]\n"
		"                        [--row-group-bytes N] [--row-group-rows N] [--page-bytes N]\n"
		"                        [--page-rows N] [--dict-bytes N] [--batch-rows N] <in> <out>\n");
	return 2;
}

static int to_stdout(const char *p, size_t n, void *payload)
{
	(void)payload;
	return fwrite(p, 1, n, stdout) == n ? 0 : -1;
}

static int fail(const char *what, int rc, const floe_error *err)
{
	fprintf(stderr, "floe parquet %s: %s\n", what, err->msg[0] ? err->msg : floe_strerror(rc));
	return 1;
}

static bool parse_num(const char *s, int64_t *out)
{
	char *end;
	long long v;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

/* Options with a value: returns the value or NULL when argv[i] is not opt. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt)
{
	if (strcmp(argv[*i], opt) != 0)
		return NULL;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static int cmd_cat(int argc, char **argv)
{
	floe_parquet_cat_opts o = FLOE_PARQUET_CAT_OPTS_INIT;
	floe_parquet_file *f = NULL;
	floe_error err = {0};
	const char *path = NULL, *v;
	int rgs[1024];
	size_t nrg = 0;
	int rc;
	for (int i = 1; i < argc; i++) {
		int64_t n;
		if ((v = opt_value(argc, argv, &i, "--columns"))) {
			o.columns = v;
		} else if ((v = opt_value(argc, argv, &i, "--limit"))) {
			if (!parse_num(v, &o.limit))
				return usage();
		} else if ((v = opt_value(argc, argv, &i, "--batch-rows"))) {
			if (!parse_num(v, &o.batch_rows))
				return usage();
		} else if ((v = opt_value(argc, argv, &i, "--row-groups"))) {
			char buf[8192];
			snprintf(buf, sizeof(buf), "%s", v);
			for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && nrg < 1024;
			     t = strtok_r(NULL, ",", &save)) {
				if (!parse_num(t, &n) || n < 0 || n > INT32_MAX)
					return usage();
				rgs[nrg++] = (int)n;
			}
			o.row_groups = rgs;
			o.n_row_groups = nrg;
		} else if (strcmp(argv[i], "--verify-crc") == 0) {
			o.verify_crc = true;
		} else if (strcmp(argv[i], "--int96-us") == 0) {
			o.int96_as_micros = true;
		} else if (argv[i][0] == '-' || path) {
			return usage();
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return usage();
	if ((rc = floe_parquet_file_open(&f, path, &err)))
		return fail("cat", rc, &err);
	rc = floe_parquet_file_cat(f, &o, to_stdout, NULL, &err);
	floe_parquet_file_close(f);
	if (fflush(stdout) != 0 && !rc)
		return fail("cat", FLOE_EIO, &(floe_error){FLOE_EIO, false, "write to stdout failed"});
	return rc ? fail("cat", rc, &err) : 0;
}

static int cmd_rewrite(int argc, char **argv)
{
	floe_parquet_rewrite_opts o = FLOE_PARQUET_REWRITE_OPTS_INIT;
	floe_parquet_file *f = NULL;
	floe_error err = {0};
	const char *in = NULL, *out = NULL, *v;
	int64_t n, rows = 0;
	int rc;
	for (int i = 1; i < argc; i++) {
		if ((v = opt_value(argc, argv, &i, "--codec"))) {
			if (floe_parquet_codec_from_name(v) < 0)
				return usage();
			o.codec = v;
		} else if ((v = opt_value(argc, argv, &i, "--level"))) {
			if (!parse_num(v, &n))
				return usage();
			o.level = (int)n;
		} else if ((v = opt_value(argc, argv, &i, "--page-version"))) {
			if (!parse_num(v, &n) || (n != 1 && n != 2))
				return usage();
			o.page_version = (int)n;
		} else if (strcmp(argv[i], "--no-dictionary") == 0) {
			o.dictionary = false;
		} else if ((v = opt_value(argc, argv, &i, "--row-group-bytes"))) {
			if (!parse_num(v, &o.row_group_bytes))
				return usage();
		} else if ((v = opt_value(argc, argv, &i, "--row-group-rows"))) {
			if (!parse_num(v, &o.row_group_rows))
				return usage();
		} else if ((v = opt_value(argc, argv, &i, "--page-bytes"))) {
			if (!parse_num(v, &o.page_bytes))
				return usage();
		} else if ((v = opt_value(argc, argv, &i, "--page-rows"))) {
			if (!parse_num(v, &o.page_rows))
				return usage();
		} else if ((v = opt_value(argc, argv, &i, "--dict-bytes"))) {
			if (!parse_num(v, &o.dict_bytes))
				return usage();
		} else if ((v = opt_value(argc, argv, &i, "--batch-rows"))) {
			if (!parse_num(v, &o.batch_rows))
				return usage();
		} else if (argv[i][0] == '-') {
			return usage();
		} else if (!in) {
			in = argv[i];
		} else if (!out) {
			out = argv[i];
		} else {
			return usage();
		}
	}
	if (!in || !out)
		return usage();
	if ((rc = floe_parquet_file_open(&f, in, &err)))
		return fail("rewrite", rc, &err);
	rc = floe_parquet_file_rewrite(f, out, &o, &rows, &err);
	floe_parquet_file_close(f);
	if (rc)
		return fail("rewrite", rc, &err);
	fprintf(stderr, "floe parquet rewrite: %lld rows written to %s\n", (long long)rows, out);
	return 0;
}

int floe_cli_parquet(int argc, char **argv)
{
	floe_parquet_file *f = NULL;
	floe_error err = {0};
	int rc;
	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "cat") == 0)
		return cmd_cat(argc - 1, argv + 1);
	if (strcmp(argv[1], "rewrite") == 0)
		return cmd_rewrite(argc - 1, argv + 1);
	if ((strcmp(argv[1], "meta") != 0 && strcmp(argv[1], "schema") != 0) || argc != 3)
		return usage();
	if ((rc = floe_parquet_file_open(&f, argv[2], &err)))
		return fail(argv[1], rc, &err);
	if (strcmp(argv[1], "meta") == 0)
		rc = floe_parquet_file_meta_json(f, to_stdout, NULL, &err);
	else
		rc = floe_parquet_file_schema_text(f, to_stdout, NULL, &err);
	floe_parquet_file_close(f);
	return rc ? fail(argv[1], rc, &err) : 0;
}
