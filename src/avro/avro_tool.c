/*
 * avro_tool.c — the public Avro file tools (floe/files.h): meta, cat, write.
 */
#include <stdio.h>
#include <string.h>

#include "avro/avro_reader.h"
#include "avro/avro_writer.h"
#include "floe/files.h"
#include "json/json.h"
#include "util/opts.h"
#include "util/localfile.h"

int floe_avro_file_meta(const char *path, floe_write_fn fn, void *payload, floe_error *err)
{
	floe_avro_reader *r = NULL;
	floe_input *in = NULL;
	floe_buf out;
	floe_jw w;
	uint64_t blocks = 0, records = 0;
	const char *k, *v;
	size_t len;
	char sync[33];
	int rc, read_rc = 0;
	floe_error rerr;
	floe_error_clear(&rerr);
	if ((rc = floe_input_file_open(&in, path, err)))
		return rc;
	if ((rc = floe_avro_reader_open(&r, in, NULL, err))) {
		floe_input_close(in);
		return rc;
	}
	for (;;) {
		floe_avro_block b;
		bool eof;
		if ((read_rc = floe_avro_reader_next_block(&b, &eof, r, &rerr)) || eof)
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
	if (read_rc)
		floe_jw_kv_str(&w, "error", rerr.msg);
	floe_jw_key(&w, "metadata");
	floe_jw_obj_begin(&w);
	for (size_t i = 0; floe_avro_reader_meta_at(r, i, &k, &v, &len); i++) {
		floe_json *j = NULL;
		floe_arena a;
		floe_jw_key(&w, k);
		floe_arena_init(&a, 0);
		/* JSON-valued keys (avro.schema, Iceberg's schema, partition-spec) are
		 * shown as JSON; other values as strings */
		if (len && (v[0] == '{' || v[0] == '[') &&
		    floe_json_parse(&j, &a, v, len, NULL, NULL) == 0)
			floe_jw_value(&w, j);
		else
			floe_jw_strn(&w, v, len);
		floe_arena_reset(&a);
	}
	floe_jw_obj_end(&w);
	floe_jw_obj_end(&w);
	rc = floe_jw_finish(&w);
	if (!rc)
		rc = floe_buf_putc(&out, '\n');
	if (!rc)
		rc = fn(floe_buf_cstr(&out), out.len, payload);
	floe_buf_reset(&out);
	floe_avro_reader_free(r);
	floe_input_close(in);
	if (!rc && read_rc) {
		if (err)
			*err = rerr;
		rc = read_rc;
	}
	return rc;
}

int floe_avro_file_cat(const char *path, floe_write_fn fn, void *payload, floe_error *err)
{
	floe_avro_reader *r = NULL;
	floe_input *in = NULL;
	floe_buf out;
	int rc;
	if ((rc = floe_input_file_open(&in, path, err)))
		return rc;
	if ((rc = floe_avro_reader_open(&r, in, NULL, err))) {
		floe_input_close(in);
		return rc;
	}
	floe_buf_init(&out, 0);
	for (;;) {
		floe_avro_value v;
		floe_jw w;
		bool eof;
		if ((rc = floe_avro_reader_next(&v, &eof, r, err)) || eof)
			break;
		floe_buf_clear(&out);
		floe_jw_init(&w, &out, 0);
		floe_avro_value_write_json(&w, floe_avro_reader_schema(r), &v);
		if ((rc = floe_jw_finish(&w)) || (rc = floe_buf_putc(&out, '\n'))) {
			floe_error_set(err, rc, "cannot render record %llu as JSON",
				       (unsigned long long)floe_avro_reader_records_read(r));
			break;
		}
		if ((rc = fn((const char *)out.data, out.len, payload)))
			break;
	}
	floe_buf_reset(&out);
	floe_avro_reader_free(r);
	floe_input_close(in);
	return rc;
}

int floe_avro_file_write(const char *out_path, const char *schema_json, size_t schema_len,
			 const char *jsonl, size_t jsonl_len, const floe_avro_file_write_opts *opts,
			 uint64_t *bytes, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_avro_file_write_opts", "FLOE_AVRO_FILE_WRITE_OPTS_INIT", err);
	floe_avro_writer_opts o = FLOE_AVRO_WRITER_OPTS_INIT;
	floe_arena a;
	floe_avro_schema *schema = NULL;
	floe_avro_writer *w = NULL;
	floe_output *out = NULL;
	int rc;
	if (opts) {
		o.codec = opts->codec;
		o.level = opts->level;
		o.block_bytes = opts->block_bytes;
	}
	floe_arena_init(&a, 0);
	if ((rc = floe_avro_schema_parse(&schema, &a, schema_json, schema_len, NULL, err)))
		goto done;
	if ((rc = floe_output_file_create(&out, out_path, err)))
		goto done;
	if ((rc = floe_avro_writer_open(&w, out, schema, &o, err))) {
		floe_output_abort(out);
		goto done;
	}
	for (size_t i = 0; opts && i < opts->n_meta; i++) {
		const char *eq = strchr(opts->meta[i], '=');
		char *key = eq ? floe_arena_strndup(&a, opts->meta[i], (size_t)(eq - opts->meta[i]))
			       : NULL;
		if (!eq) {
			rc = floe_error_set(err, FLOE_EINVAL, "metadata '%s' is not key=value",
					    opts->meta[i]);
			goto done;
		}
		if (!key || (rc = floe_avro_writer_meta_str(w, key, eq + 1, err)))
			goto done;
	}
	const char *p = jsonl, *end = jsonl + jsonl_len;
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
			if ((rc = floe_json_parse(&j, &ra, p, n, NULL, err)) ||
			    (rc = floe_avro_value_from_json(&v, &ra, schema, j, err)) ||
			    (rc = floe_avro_writer_append(w, &v, err)))
				floe_error_prefix(err, rc, "line %zu: ", line_no);
		}
		floe_arena_reset(&ra);
		if (rc)
			goto done;
		p += n + (nl ? 1 : 0);
	}
	rc = floe_avro_writer_close(w, bytes, err);
	w = NULL;
done:
	floe_avro_writer_abort(w);
	floe_arena_reset(&a);
	return rc;
}
