/*
 * cmd_avro.c — floe avro meta|cat|write: Avro container files (manifests,
 * manifest lists) for operators and tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "floe/files.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (n + 65536 + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 131072;
			char *nb = floe_realloc(buf, ncap);
			if (!nb) {
				floe_free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap = ncap;
		}
		size_t got = fread(buf + n, 1, 65536, f);
		n += got;
		if (got < 65536)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static int cmd_write(int argc, char **argv)
{
	floe_avro_file_write_opts o = FLOE_AVRO_FILE_WRITE_OPTS_INIT;
	const char *metas[64];
	const char *pos[3];
	size_t n_pos = 0;
	floe_error err = {0};
	for (int i = 0; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		if (!strcmp(argv[i], "--codec") && v) {
			o.codec = v;
			i++;
		} else if (!strcmp(argv[i], "--level") && v) {
			o.level = (int)strtol(v, &end, 10);
			if (*end)
				return cli_usage_error("bad --level '%s'", v);
			i++;
		} else if (!strcmp(argv[i], "--block-bytes") && v) {
			long long b = strtoll(v, &end, 10);
			if (*end || b <= 0)
				return cli_usage_error("bad --block-bytes '%s'", v);
			o.block_bytes = (size_t)b;
			i++;
		} else if (!strcmp(argv[i], "--meta") && v && o.n_meta < 64 && strchr(v, '=')) {
			metas[o.n_meta++] = v;
			i++;
		} else if (argv[i][0] != '-' && n_pos < 3) {
			pos[n_pos++] = argv[i];
		} else {
			return cli_usage_error("avro write: bad argument '%s'", argv[i]);
		}
	}
	if (n_pos != 3)
		return cli_usage_error("usage: floe avro write [--codec C] [--level N] [--block-bytes "
				       "N] [--meta K=V]... <schema.json> <records.jsonl> <out.avro>");
	o.meta = metas;
	size_t slen, llen;
	char *schema = slurp(pos[0], &slen);
	char *lines = schema ? slurp(pos[1], &llen) : NULL;
	if (!schema || !lines) {
		fprintf(stderr, "floe: cannot read '%s'\n", schema ? pos[1] : pos[0]);
		floe_free(schema);
		return 1;
	}
	uint64_t size = 0;
	int rc = floe_avro_file_write(pos[2], schema, slen, lines, llen, &o, &size, &err);
	floe_free(schema);
	floe_free(lines);
	if (rc)
		return cli_fail(&err);
	printf("%s: %llu bytes\n", pos[2], (unsigned long long)size);
	return 0;
}

int floe_cli_avro(int argc, char **argv)
{
	floe_error err = {0};
	int rc;
	if (argc >= 3 && (!strcmp(argv[1], "meta") || !strcmp(argv[1], "cat"))) {
		/* several files: one after another, as cat does */
		for (int i = 2; i < argc; i++) {
			rc = !strcmp(argv[1], "meta")
				     ? floe_avro_file_meta(argv[i], cli_stdout_write, NULL, &err)
				     : floe_avro_file_cat(argv[i], cli_stdout_write, NULL, &err);
			if (rc)
				return cli_fail(&err);
		}
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "write"))
		return cmd_write(argc - 2, argv + 2);
	return cli_usage_error("usage: floe avro meta <file> | cat <file> | write [--codec C] "
			       "[--level N] [--block-bytes N] [--meta K=V]... <schema.json> "
			       "<records.jsonl> <out.avro>");
}
