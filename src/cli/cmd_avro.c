/*
 * cmd_avro.c — `floe avro ...`: inspect and write Avro container files.
 *
 *   floe avro meta <file>          header as JSON: codec, sync, metadata,
 *                                  schema, block and record counts
 *   floe avro cat <file>           one JSON line per record
 *   floe avro write [--codec C] [--level N] [--block-bytes N] [--meta K=V]...
 *                   <schema.json> <records.jsonl> <out.avro>
 *                                  JSON lines (Avro JSON conventions, unions
 *                                  unwrapped, bytes as U+0000..U+00FF code
 *                                  points) to an Avro file
 *
 * NOTE: this command uses the internal avro/ headers (the rest of the CLI
 * uses include/floe/ only); it is a thin operator and interop-test hook.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "avro/reader.h"
#include "avro/writer.h"
#include "json/json.h"
#include "util/alloc.h"
#include "util/str.h"

int floe_cli_avro(int argc, char **argv);

/* ---- a file-backed input and output (pread / write) ------------------------------- */

typedef struct fd_input {
	floe_input base;
	int fd;
} fd_input;

static int fd_read_at(floe_input *in, uint64_t off, void *buf, size_t n, size_t *got,
		      floe_error *err)
{
	fd_input *f = (fd_input *)in;
	ssize_t r;
	do
		r = pread(f->fd, buf, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return floe_error_set(err, FLOE_EIO, "%s: read failed: %s", in->name, strerror(errno));
	*got = (size_t)r;
	return FLOE_OK;
}

static void fd_close(floe_input *in)
{
	fd_input *f = (fd_input *)in;
	close(f->fd);
	floe_free(f);
}

static const floe_input_ops fd_input_ops = {fd_read_at, fd_close};

static floe_input *open_input(const char *path)
{
	struct stat st;
	fd_input *f;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !(f = floe_calloc(1, sizeof(*f)))) {
		close(fd);
		return NULL;
	}
	f->base.ops = &fd_input_ops;
	f->base.size = (uint64_t)st.st_size;
	f->base.name = path;
	f->fd = fd;
	return &f->base;
}

typedef struct fd_output {
	floe_output base;
	int fd;
	char *tmp, *final;
} fd_output;

static int fd_write(floe_output *out, const void *p, size_t n, floe_error *err)
{
	fd_output *f = (fd_output *)out;
	const char *c = p;
	while (n > 0) {
		ssize_t r = write(f->fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return floe_error_set(err, FLOE_EIO, "%s: write failed: %s", out->name,
					      strerror(errno));
		c += r;
		n -= (size_t)r;
	}
	return FLOE_OK;
}

static void fd_out_free(fd_output *f)
{
	floe_free(f->tmp);
	floe_free(f->final);
	floe_free(f);
}

static int fd_out_close(floe_output *out, floe_error *err)
{
	fd_output *f = (fd_output *)out;
	int rc = FLOE_OK;
	if (fsync(f->fd) != 0 || close(f->fd) != 0 || rename(f->tmp, f->final) != 0) {
		rc = floe_error_set(err, FLOE_EIO, "%s: %s", f->final, strerror(errno));
		unlink(f->tmp);
	}
	fd_out_free(f);
	return rc;
}

static void fd_out_abort(floe_output *out)
{
	fd_output *f = (fd_output *)out;
	close(f->fd);
	unlink(f->tmp);
	fd_out_free(f);
}

static const floe_output_ops fd_output_ops = {fd_write, fd_out_close, fd_out_abort};

static floe_output *open_output(const char *path)
{
	fd_output *f = floe_calloc(1, sizeof(*f));
	floe_buf t;
	if (!f)
		return NULL;
	floe_buf_init(&t, 0);
	if (floe_buf_printf(&t, "%s.tmp%ld", path, (long)getpid())) {
		floe_free(f);
		return NULL;
	}
	f->tmp = floe_buf_detach(&t, NULL);
	f->final = floe_strdup(path);
	if (!f->tmp || !f->final) {
		fd_out_free(f);
		return NULL;
	}
	f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (f->fd < 0) {
		fd_out_free(f);
		return NULL;
	}
	f->base.ops = &fd_output_ops;
	f->base.name = f->final;
	return &f->base;
}

/* ---- commands --------------------------------------------------------------------- */

static int fail(const floe_error *err)
{
	fprintf(stderr, "floe avro: %s: %s\n", floe_strerror(err->code), err->msg);
	return 1;
}

static int cmd_meta(const char *path)
{
	floe_error err = {0};
	floe_avro_reader *r = NULL;
	floe_input *in = open_input(path);
	floe_buf out;
	floe_jw w;
	uint64_t blocks = 0, records = 0;
	const char *k, *v;
	size_t len;
	char sync[33];
	int rc;
	if (!in) {
		fprintf(stderr, "floe avro: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	if ((rc = floe_avro_reader_open(&r, in, NULL, &err))) {
		floe_input_close(in);
		return fail(&err);
	}
	for (;;) {
		floe_avro_block b;
		bool eof;
		if ((rc = floe_avro_reader_next_block(&b, &eof, r, &err)))
			break;
		if (eof)
			break;
		blocks++;
		records += (uint64_t)b.count;
	}
	floe_buf_init(&out, 0);
	floe_jw_init(&w, &out, 2);
	floe_jw_obj_begin(&w);
	floe_jw_kv_str(&w, "file", path);
	floe_jw_kv_i64(&w, "size", (int64_t)in->size);
	floe_jw_kv_str(&w, "codec", floe_avro_reader_codec(r));
	for (int i = 0; i < 16; i++)
		snprintf(sync + 2 * i, 3, "%02x", floe_avro_reader_sync(r)[i]);
	floe_jw_kv_str(&w, "sync", sync);
	floe_jw_kv_i64(&w, "blocks", (int64_t)blocks);
	floe_jw_kv_i64(&w, "records", (int64_t)records);
	if (rc)
		floe_jw_kv_str(&w, "error", err.msg);
	floe_jw_key(&w, "metadata");
	floe_jw_obj_begin(&w);
	for (size_t i = 0; floe_avro_reader_meta_at(r, i, &k, &v, &len); i++) {
		floe_json *j = NULL;
		floe_arena a;
		floe_jw_key(&w, k);
		floe_arena_init(&a, 0);
		/* JSON-valued keys (avro.schema, Iceberg's schema, partition-spec)
		 * are shown as JSON; other values as strings */
		if (len && (v[0] == '{' || v[0] == '[') &&
		    floe_json_parse(&j, &a, v, len, NULL, NULL) == 0)
			floe_jw_value(&w, j);
		else
			floe_jw_strn(&w, v, len);
		floe_arena_reset(&a);
	}
	floe_jw_obj_end(&w);
	floe_jw_obj_end(&w);
	if (floe_jw_finish(&w) == 0)
		printf("%s\n", floe_buf_cstr(&out));
	floe_buf_reset(&out);
	floe_avro_reader_free(r);
	floe_input_close(in);
	return rc ? fail(&err) : 0;
}

static int cmd_cat(const char *path)
{
	floe_error err = {0};
	floe_avro_reader *r = NULL;
	floe_input *in = open_input(path);
	floe_buf out;
	int rc;
	if (!in) {
		fprintf(stderr, "floe avro: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	if ((rc = floe_avro_reader_open(&r, in, NULL, &err))) {
		floe_input_close(in);
		return fail(&err);
	}
	floe_buf_init(&out, 0);
	for (;;) {
		floe_avro_value v;
		floe_jw w;
		bool eof;
		if ((rc = floe_avro_reader_next(&v, &eof, r, &err)) || eof)
			break;
		floe_buf_clear(&out);
		floe_jw_init(&w, &out, 0);
		floe_avro_value_write_json(&w, floe_avro_reader_schema(r), &v);
		if ((rc = floe_jw_finish(&w))) {
			floe_error_set(&err, rc, "cannot render record %llu as JSON",
				       (unsigned long long)floe_avro_reader_records_read(r));
			break;
		}
		fwrite(out.data, 1, out.len, stdout);
		fputc('\n', stdout);
	}
	floe_buf_reset(&out);
	floe_avro_reader_free(r);
	floe_input_close(in);
	return rc ? fail(&err) : 0;
}

static int read_file(const char *path, floe_buf *out, floe_error *err)
{
	floe_input *in = open_input(path);
	int rc;
	if (!in)
		return floe_error_set(err, FLOE_EIO, "cannot open %s: %s", path, strerror(errno));
	rc = floe_input_read_all(in, out, (size_t)1 << 30, err);
	floe_input_close(in);
	return rc;
}

static int cmd_write(int argc, char **argv)
{
	floe_avro_writer_opts o = FLOE_AVRO_WRITER_OPTS_INIT;
	floe_error err = {0};
	floe_arena a;
	floe_buf schema_text, lines;
	floe_avro_schema *schema = NULL;
	floe_avro_writer *w = NULL;
	floe_output *out = NULL;
	const char *pos[3];
	const char *metas[64];
	size_t n_pos = 0, n_meta = 0;
	uint64_t size = 0;
	int rc = 0;

	for (int i = 0; i < argc; i++) {
		int64_t n;
		if (strcmp(argv[i], "--codec") == 0 && i + 1 < argc) {
			o.codec = argv[++i];
		} else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc &&
			   floe_parse_i64(argv[i + 1], strlen(argv[i + 1]), &n)) {
			o.level = (int)n;
			i++;
		} else if (strcmp(argv[i], "--block-bytes") == 0 && i + 1 < argc &&
			   floe_parse_i64(argv[i + 1], strlen(argv[i + 1]), &n) && n > 0) {
			o.block_bytes = (size_t)n;
			i++;
		} else if (strcmp(argv[i], "--meta") == 0 && i + 1 < argc && n_meta < 64 &&
			   strchr(argv[i + 1], '=')) {
			metas[n_meta++] = argv[++i];
		} else if (argv[i][0] != '-' && n_pos < 3) {
			pos[n_pos++] = argv[i];
		} else {
			fprintf(stderr, "floe avro write: bad argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (n_pos != 3) {
		fprintf(stderr, "usage: floe avro write [--codec C] [--level N] [--block-bytes N] "
				"[--meta K=V]... <schema.json> <records.jsonl> <out.avro>\n");
		return 2;
	}
	floe_arena_init(&a, 0);
	floe_buf_init(&schema_text, 0);
	floe_buf_init(&lines, 0);
	if ((rc = read_file(pos[0], &schema_text, &err)) || (rc = read_file(pos[1], &lines, &err)))
		goto done;
	if ((rc = floe_avro_schema_parse(&schema, &a, (const char *)schema_text.data,
					 schema_text.len, NULL, &err)))
		goto done;
	if (!(out = open_output(pos[2]))) {
		rc = floe_error_set(&err, FLOE_EIO, "cannot create %s", pos[2]);
		goto done;
	}
	if ((rc = floe_avro_writer_open(&w, out, schema, &o, &err))) {
		floe_output_abort(out);
		goto done;
	}
	for (size_t i = 0; i < n_meta; i++) {
		const char *eq = strchr(metas[i], '=');
		char *key = floe_arena_strndup(&a, metas[i], (size_t)(eq - metas[i]));
		if (!key || (rc = floe_avro_writer_meta_str(w, key, eq + 1, &err)))
			goto done;
	}
	{
		const char *p = (const char *)floe_buf_cstr(&lines), *end = p + lines.len;
		size_t line_no = 0;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
			floe_arena ra;
			floe_json *j = NULL;
			floe_avro_value v;
			line_no++;
			floe_arena_init(&ra, 0);
			if (n > 0) {
				if ((rc = floe_json_parse(&j, &ra, p, n, NULL, &err)) ||
				    (rc = floe_avro_value_from_json(&v, &ra, schema, j, &err)) ||
				    (rc = floe_avro_writer_append(w, &v, &err)))
					floe_error_prefix(&err, "%s line %zu: ", pos[1], line_no);
			}
			floe_arena_reset(&ra);
			if (rc)
				goto done;
			p += n + (nl ? 1 : 0);
		}
	}
	rc = floe_avro_writer_close(w, &size, &err);
	w = NULL;
	if (!rc)
		printf("%s: %llu bytes\n", pos[2], (unsigned long long)size);
done:
	floe_avro_writer_abort(w);
	floe_buf_reset(&schema_text);
	floe_buf_reset(&lines);
	floe_arena_reset(&a);
	return rc ? fail(&err) : 0;
}

int floe_cli_avro(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "meta") == 0)
		return cmd_meta(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "cat") == 0)
		return cmd_cat(argv[2]);
	if (argc >= 2 && strcmp(argv[1], "write") == 0)
		return cmd_write(argc - 2, argv + 2);
	fprintf(stderr, "usage: floe avro meta <file>\n"
			"       floe avro cat <file>\n"
			"       floe avro write [--codec C] [--level N] [--block-bytes N] "
			"[--meta K=V]... <schema.json> <records.jsonl> <out.avro>\n");
	return 2;
}
