/*
 * test_avro_bench.c — decode speed on a synthetic manifest-like file.
 *
 * Builds a v2 manifest_entry schema with the builder (23 fields incl. a
 * 2-field partition and six metric maps of 8 columns each, as
 * array-of-record with logicalType map), writes FLOE_AVRO_BENCH_RECORDS
 * records (default 20000; use 1000000 for a real measurement with the
 * release preset; FLOE_AVRO_BENCH_CODEC picks the codec, default deflate)
 * with the fast-path encoders, then decodes it with the block API and a
 * caller arena reset per block:
 * generically with the writer schema, and through a reader schema resolved
 * by field id (renamed fields, an added field). Prints records/s.
 */
#include <stdlib.h>
#include <time.h>

#include "avro/avro_reader.h"
#include "avro/avro_writer.h"
#include "harness.h"

#define N_COLS 8

static floe_avro_schema *opt(floe_arena *a, floe_avro_type t)
{
	return floe_avro_new_optional(a, floe_avro_new_primitive(a, t));
}

static floe_avro_field *add(floe_arena *a, floe_avro_schema *rec, const char *name,
			    floe_avro_schema *t, int id, bool optional)
{
	floe_avro_field *f = floe_avro_record_add(a, rec, name, t);
	if (f) {
		f->field_id = id;
		if (optional && floe_avro_field_set_default_null(a, f))
			return NULL;
	}
	return f;
}

static floe_avro_schema *metric_map(floe_arena *a, int kid, int vid, floe_avro_type vt)
{
	char name[32];
	snprintf(name, sizeof(name), "k%d_v%d", kid, vid);
	floe_avro_schema *kv = floe_avro_new_record(a, name, NULL);
	add(a, kv, "key", floe_avro_new_primitive(a, FLOE_AVRO_INT), kid, false);
	add(a, kv, "value", floe_avro_new_primitive(a, vt), vid, false);
	floe_avro_schema *arr = floe_avro_new_array(a, kv);
	if (arr && floe_avro_schema_set_logical(a, arr, "map"))
		return NULL;
	return floe_avro_new_optional(a, arr);
}

/* rename: the reader's variant renames fields (ids stay). */
static floe_avro_schema *manifest_schema(floe_arena *a, bool reader)
{
	floe_avro_schema *root = floe_avro_new_record(a, "manifest_entry", NULL);
	floe_avro_schema *df = floe_avro_new_record(a, "r2", NULL);
	floe_avro_schema *part = floe_avro_new_record(a, "r102", NULL);
	add(a, part, "ts_day", floe_avro_new_optional(a, floe_avro_new_logical(a, FLOE_AVRO_INT, "date")),
	    1000, true);
	add(a, part, "category", opt(a, FLOE_AVRO_STRING), 1001, true);
	add(a, root, "status", floe_avro_new_primitive(a, FLOE_AVRO_INT), 0, false);
	add(a, root, "snapshot_id", opt(a, FLOE_AVRO_LONG), 1, true);
	add(a, root, "sequence_number", opt(a, FLOE_AVRO_LONG), 3, true);
	add(a, root, "file_sequence_number", opt(a, FLOE_AVRO_LONG), 4, true);
	add(a, df, "content", floe_avro_new_primitive(a, FLOE_AVRO_INT), 134, false);
	add(a, df, reader ? "path" : "file_path", floe_avro_new_primitive(a, FLOE_AVRO_STRING), 100,
	    false);
	add(a, df, "file_format", floe_avro_new_primitive(a, FLOE_AVRO_STRING), 101, false);
	add(a, df, "partition", part, 102, false);
	add(a, df, "record_count", floe_avro_new_primitive(a, FLOE_AVRO_LONG), 103, false);
	add(a, df, "file_size_in_bytes", floe_avro_new_primitive(a, FLOE_AVRO_LONG), 104, false);
	add(a, df, reader ? "sizes" : "column_sizes", metric_map(a, 117, 118, FLOE_AVRO_LONG), 108,
	    true);
	add(a, df, "value_counts", metric_map(a, 119, 120, FLOE_AVRO_LONG), 109, true);
	add(a, df, "null_value_counts", metric_map(a, 121, 122, FLOE_AVRO_LONG), 110, true);
	add(a, df, "nan_value_counts", metric_map(a, 138, 139, FLOE_AVRO_LONG), 137, true);
	add(a, df, "lower_bounds", metric_map(a, 126, 127, FLOE_AVRO_BYTES), 125, true);
	add(a, df, "upper_bounds", metric_map(a, 129, 130, FLOE_AVRO_BYTES), 128, true);
	add(a, df, "key_metadata", opt(a, FLOE_AVRO_BYTES), 131, true);
	floe_avro_schema *so = floe_avro_new_array(a, floe_avro_new_primitive(a, FLOE_AVRO_LONG));
	if (so)
		so->element_id = 133;
	add(a, df, "split_offsets", floe_avro_new_optional(a, so), 132, true);
	floe_avro_schema *eq = floe_avro_new_array(a, floe_avro_new_primitive(a, FLOE_AVRO_INT));
	if (eq)
		eq->element_id = 136;
	add(a, df, "equality_ids", floe_avro_new_optional(a, eq), 135, true);
	add(a, df, "sort_order_id", opt(a, FLOE_AVRO_INT), 140, true);
	add(a, df, "referenced_data_file", opt(a, FLOE_AVRO_STRING), 143, true);
	if (reader) /* a v3 field the file does not have: filled with null */
		add(a, df, "first_row_id", opt(a, FLOE_AVRO_LONG), 142, true);
	add(a, root, "data_file", df, 2, false);
	return root;
}

static int encode_entry(floe_buf *b, long k)
{
	char path[128];
	int n = snprintf(path, sizeof(path),
			 "s3://bucket/warehouse/db/events/data/ts_day=2024-01-%02ld/"
			 "00000-%ld-5b1c6f4e-9c1d-4f3e-8a7b-%012ld.parquet",
			 k % 28 + 1, k, k);
	int rc = floe_avro_enc_int(b, 1) || floe_avro_enc_union(b, 1) ||
		 floe_avro_enc_long(b, 7340012345678901234LL) || floe_avro_enc_union(b, 1) ||
		 floe_avro_enc_long(b, k / 100) || floe_avro_enc_union(b, 0) ||
		 floe_avro_enc_int(b, 0) || floe_avro_enc_string(b, path, (size_t)n) ||
		 floe_avro_enc_string(b, "PARQUET", 7) ||
		 /* partition */
		 floe_avro_enc_union(b, 1) || floe_avro_enc_int(b, 19723 + (int32_t)(k % 28)) ||
		 floe_avro_enc_union(b, 1) || floe_avro_enc_string(b, "click", 5) ||
		 floe_avro_enc_long(b, 1000 + k % 5000) || floe_avro_enc_long(b, 4000000 + k);
	for (int m = 0; !rc && m < 6; m++) {
		rc = floe_avro_enc_union(b, 1) || floe_avro_enc_block_count(b, N_COLS);
		for (int c = 1; !rc && c <= N_COLS; c++) {
			rc = floe_avro_enc_int(b, c);
			if (!rc && m < 4)
				rc = floe_avro_enc_long(b, (k * c) % 100000);
			else if (!rc)
				rc = floe_avro_enc_bytes(b, m == 4 ? "\x01\x00\x00\x00" : "\xff\x7f\x00\x00",
							 4);
		}
		rc = rc || floe_avro_enc_block_count(b, 0);
	}
	return rc || floe_avro_enc_union(b, 0) || /* key_metadata */
	       floe_avro_enc_union(b, 1) || floe_avro_enc_block_count(b, 1) ||
	       floe_avro_enc_long(b, 4) || floe_avro_enc_block_count(b, 0) ||
	       floe_avro_enc_union(b, 0) || /* equality_ids */
	       floe_avro_enc_union(b, 1) || floe_avro_enc_int(b, 0) || floe_avro_enc_union(b, 0);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Decode all records through the block API with an arena reset per block. */
static long decode_all(const floe_buf *file, const floe_avro_schema *rs, floe_error *err,
		       double *secs)
{
	floe_input *in = floe_input_memory(file->data, file->len, "bench.avro");
	floe_avro_reader *r = NULL;
	floe_arena a;
	long n = 0;
	double t0 = now();
	floe_arena_init(&a, (size_t)1 << 20); /* big chunks: few mallocs per block */
	if (floe_avro_reader_open(&r, in, NULL, err) || floe_avro_reader_set_schema(r, rs, err)) {
		n = -1;
		goto done;
	}
	const floe_avro_decoder *d = floe_avro_reader_decoder(r, err);
	for (;;) {
		floe_avro_block blk;
		bool eof;
		floe_cursor c;
		if (floe_avro_reader_next_block(&blk, &eof, r, err)) {
			n = -1;
			break;
		}
		if (eof)
			break;
		floe_cursor_init(&c, blk.data, blk.len);
		for (int64_t i = 0; i < blk.count; i++) {
			floe_avro_value v;
			if (floe_avro_decode(&v, d, &c, &a, err)) {
				n = -1;
				goto done;
			}
			n++;
		}
		floe_arena_reset(&a);
	}
done:
	*secs = now() - t0;
	floe_arena_reset(&a);
	floe_avro_reader_free(r);
	floe_input_close(in);
	return n;
}

static void test_bench(void)
{
	const char *env = getenv("FLOE_AVRO_BENCH_RECORDS");
	long n = env ? atol(env) : 20000;
	floe_arena a;
	floe_error err = {0};
	floe_buf file;
	floe_avro_writer *w = NULL;
	floe_avro_writer_opts o = FLOE_AVRO_WRITER_OPTS_INIT;
	uint64_t size = 0;
	double t0, secs;
	floe_arena_init(&a, 0);
	floe_buf_init(&file, (size_t)4 << 30);
	floe_avro_schema *ws = manifest_schema(&a, false), *rs = manifest_schema(&a, true);
	T_OK(floe_avro_schema_finish(ws, &err), &err);
	T_OK(floe_avro_schema_finish(rs, &err), &err);
	o.codec = getenv("FLOE_AVRO_BENCH_CODEC") ? getenv("FLOE_AVRO_BENCH_CODEC") : "deflate";
	t0 = now();
	T_OK(floe_avro_writer_open(&w, floe_output_buffer(&file, "bench.avro"), ws, &o, &err), &err);
	if (!w)
		return;
	for (long k = 0; k < n; k++) {
		floe_buf *b = floe_avro_writer_begin(w);
		if (encode_entry(b, k)) {
			t_fail(__FILE__, __LINE__, "encode failed");
			break;
		}
		if (floe_avro_writer_commit(w, &err)) {
			t_fail(__FILE__, __LINE__, "%s", err.msg);
			break;
		}
	}
	T_OK(floe_avro_writer_close(w, &size, &err), &err);
	secs = now() - t0;
	printf("    wrote %ld entries (%llu bytes, %s) in %.3f s: %.0f records/s\n", n,
	       (unsigned long long)size, o.codec, secs, (double)n / secs);

	long got = decode_all(&file, NULL, &err, &secs);
	T_EQ_INT(got, n);
	if (got < 0)
		printf("%s\n", err.msg);
	printf("    decoded (writer schema) %ld entries in %.3f s: %.0f records/s\n", got, secs,
	       (double)got / secs);
	got = decode_all(&file, rs, &err, &secs);
	T_EQ_INT(got, n);
	printf("    decoded (reader schema, by field id) %ld entries in %.3f s: %.0f records/s\n",
	       got, secs, (double)got / secs);
	floe_buf_reset(&file);
	floe_arena_reset(&a);
}

int main(void)
{
	T_RUN(test_bench);
	return t_finish();
}
