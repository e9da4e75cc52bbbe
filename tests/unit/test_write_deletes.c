/*
 * test_write_deletes.c — the delete writers and the deletion-vector encoder:
 * DV bytes equal to Java's golden blobs and round trips through floe's
 * decoder; Puffin files read back by floe's footer parser; equality delete
 * files (projected schema with field ids, footer keys, metrics, partitions,
 * delete-schema rows, full rows), position delete files (sorted rows,
 * referenced_data_file, Java's metrics rule, file-scoped, spilling), DVs
 * (blob metadata, entries, merging a previous DV, corrupt previous DVs),
 * rolling at the delete target size, one memory budget shared with a data
 * task writer, one file namer for a task, abort and injected FileIO failures
 * leaving nothing; and a row delta of data + deletes read back by floe's
 * scan with the deletes applied, on v2 and v3 tables.
 */
#include "puffin/puffin_write.h"
#include "test_write_util.h"
#include "floe/scan.h"
#include "util/cursor.h"

#define DELETES "apache-iceberg/core/src/test/resources/org/apache/iceberg/deletes/"

/* ---- helpers -------------------------------------------------------------------- */

/* Rows of a Parquet file as "a|b|c\n" lines (long, int, string, double). */
typedef struct rows_acc {
	floe_buf text;
} rows_acc;

static void rows_cb(const struct ArrowArray *b, const struct ArrowSchema *s, void *payload)
{
	rows_acc *acc = payload;
	floe_arrow_view root, v[16];
	floe_error err = {0};
	T_OK(floe_arrow_view_init(&root, s, b, &err), &err);
	for (int64_t c = 0; c < s->n_children && c < 16; c++)
		T_OK(floe_arrow_view_child(&v[c], &root, s->children[c], b->children[c], &err), &err);
	for (int64_t i = 0; i < b->length; i++) {
		for (int64_t c = 0; c < s->n_children && c < 16; c++) {
			const char *f = s->children[c]->format;
			int rc = 0;
			if (c)
				rc = floe_buf_putc(&acc->text, '|');
			if (!floe_arrow_view_valid(&v[c], i))
				rc = floe_buf_puts(&acc->text, "null");
			else if (f[0] == 'u') {
				size_t n;
				const uint8_t *p = floe_arrow_view_bytes(&v[c], i, &n);
				rc = floe_buf_append(&acc->text, p, n);
			} else if (f[0] == 'g')
				rc = floe_buf_printf(&acc->text, "%g", floe_arrow_view_real(&v[c], i));
			else
				rc = floe_buf_printf(&acc->text, "%lld",
						     (long long)floe_arrow_view_int(&v[c], i));
			T_EQ_INT(rc, 0);
		}
		T_EQ_INT(floe_buf_putc(&acc->text, '\n'), 0);
	}
}

/* The rows of a file (the caller resets the buffer). */
static floe_buf read_rows(floe_fileio *io, const char *path)
{
	rows_acc acc;
	floe_buf_init(&acc.text, 0);
	scan_file(io, path, rows_cb, &acc);
	return acc.text;
}

/* A footer key/value of a Parquet file (copied into a). */
static const char *footer_kv(floe_fileio *io, const char *path, const char *key, floe_arena *a)
{
	floe_input *in = NULL;
	floe_parquet_reader *r = NULL;
	floe_error err = {0};
	const char *out = NULL;
	T_OK(floe_io_open_read(io, path, &in, &err), &err);
	T_OK(floe_parquet_reader_open(&r, in, NULL, &err), &err);
	if (r) {
		const floe_parquet_file_meta *fm = floe_parquet_reader_meta(r);
		for (size_t i = 0; i < fm->n_kv; i++)
			if (strcmp(fm->kv[i].key, key) == 0 && fm->kv[i].value)
				out = floe_arena_strndup(a, fm->kv[i].value, fm->kv[i].value_len);
	}
	floe_parquet_reader_free(r);
	floe_input_close(in);
	return out;
}

/* The top-level leaves of a file as "id:name,id:name". */
static void file_fields(floe_fileio *io, const char *path, floe_buf *out)
{
	floe_input *in = NULL;
	floe_parquet_reader *r = NULL;
	floe_error err = {0};
	T_OK(floe_io_open_read(io, path, &in, &err), &err);
	T_OK(floe_parquet_reader_open(&r, in, NULL, &err), &err);
	if (r) {
		const floe_parquet_schema *s = floe_parquet_reader_schema(r);
		for (int i = 0; i < s->n_leaves; i++)
			T_EQ_INT(floe_buf_printf(out, "%s%d:%s%s", i ? "," : "",
						 s->leaves[i]->field_id, s->leaves[i]->name,
						 s->leaves[i]->repetition == FLOE_PARQUET_REQUIRED
							 ? "!"
							 : ""),
				 0);
	}
	floe_parquet_reader_free(r);
	floe_input_close(in);
}

static void write_json(floe_eq_delete_writer *w, const floe_schema *s, const char *const *rows,
		       size_t n, int expect)
{
	struct ArrowArray b;
	struct ArrowSchema bs;
	floe_error err = {0};
	make_batch(s, rows, n, &b, &bs);
	if (expect == 0)
		T_OK(floe_eq_delete_writer_write(w, &b, &bs, &err), &err);
	else
		T_ERR(floe_eq_delete_writer_write(w, &b, &bs, &err), expect);
	floe_arrow_array_release(&b);
	floe_arrow_schema_release(&bs);
}

static floe_partition part1(floe_value *v, const char *s)
{
	v->type = FLOE_T_STRING;
	v->is_null = false;
	v->v.bin.p = (const uint8_t *)s;
	v->v.bin.n = strlen(s);
	return (floe_partition){v, 1};
}

static const floe_id_long *lookup_long(const floe_id_long *v, size_t n, int32_t id)
{
	return find_long(v, n, id);
}

static int64_t le64(const floe_id_bytes *b)
{
	int64_t x = 0;
	if (b && b->n == 8)
		memcpy(&x, b->p, 8);
	return x;
}

/* ---- the DV encoder ---------------------------------------------------------------- */

static void roundtrip(const uint64_t *pos, size_t n, size_t *bytes_out)
{
	floe_buf b;
	floe_error err = {0};
	uint64_t *got = NULL;
	size_t count = 0;
	floe_buf_init(&b, 0);
	T_OK(floe_dv_encode(&b, pos, n, &err), &err);
	T_OK(floe_dv_decode(&got, &count, b.data, b.len, (int64_t)n, n, &err), &err);
	T_EQ_INT(count, n);
	for (size_t i = 0; i < n && i < count; i++)
		if (got[i] != pos[i]) {
			t_fail(__FILE__, __LINE__, "position %zu: %llu != %llu", i,
			       (unsigned long long)got[i], (unsigned long long)pos[i]);
			break;
		}
	if (bytes_out)
		*bytes_out = b.len;
	floe_free(got);
	floe_buf_reset(&b);
}

/* Java's golden DV blobs decode and re-encode to the same bytes: the
 * container forms (array, bitset, run) are chosen as Java's runOptimize. */
static void test_dv_golden_bytes(void)
{
	static const char *const files[] = {
		"empty-position-index.bin",
		"small-alternating-values-position-index.bin",
		"small-and-large-values-position-index.bin",
		"all-container-types-position-index.bin",
	};
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char rel[256];
		size_t n, count = 0;
		uint64_t *pos = NULL;
		floe_error err = {0};
		floe_buf b;
		snprintf(rel, sizeof(rel), DELETES "%s", files[f]);
		unsigned char *p = t_read_file(t_testdata(rel), &n);
		T_CHECK(p != NULL);
		if (!p)
			continue;
		T_OK(floe_dv_decode(&pos, &count, p, n, -1, (size_t)1 << 24, &err), &err);
		floe_buf_init(&b, 0);
		T_OK(floe_dv_encode(&b, pos, count, &err), &err);
		T_EQ_INT(b.len, n);
		if (b.len == n)
			T_EQ_MEM(b.data, p, n);
		else
			printf("  %s: %zu bytes, Java %zu\n", files[f], b.len, n);
		floe_buf_reset(&b);
		floe_free(pos);
		free(p);
	}
	/* the 64-bit Roaring examples (CRoaring's, not run-optimised: other
	 * bytes than Java's runOptimize gives) decode to what they held */
	static const char *const maps[] = {"64map32bitvals.bin", "64mapempty.bin",
					   "64mapspreadvals.bin"};
	for (size_t f = 0; f < sizeof(maps) / sizeof(maps[0]); f++) {
		char rel[256];
		size_t n, count = 0, count2 = 0;
		uint64_t *pos = NULL, *pos2 = NULL;
		floe_error err = {0};
		floe_buf b;
		snprintf(rel, sizeof(rel), DELETES "%s", maps[f]);
		unsigned char *p = t_read_file(t_testdata(rel), &n);
		T_CHECK(p != NULL);
		if (!p)
			continue;
		T_OK(floe_roaring64_decode(&pos, &count, p, n, 1 << 20, &err), &err);
		floe_buf_init(&b, 0);
		T_OK(floe_roaring64_encode(&b, pos, count, &err), &err);
		T_CHECK(b.len <= n);
		T_OK(floe_roaring64_decode(&pos2, &count2, b.data, b.len, 1 << 20, &err), &err);
		T_EQ_INT(count2, count);
		if (count && count2 == count)
			T_EQ_MEM(pos, pos2, count * sizeof(uint64_t));
		floe_buf_reset(&b);
		floe_free(pos);
		floe_free(pos2);
		free(p);
	}
}

static void test_dv_roundtrip(void)
{
	uint64_t seed = 42;
	size_t cap = 200000, bytes;
	uint64_t *pos = floe_malloc(cap * sizeof(uint64_t));
	floe_error err = {0};
	floe_buf b;

	/* empty: 8-byte count, framing */
	roundtrip(NULL, 0, &bytes);
	T_EQ_INT(bytes, 4 + 4 + 8 + 4);
	/* one full container as one run: key, cookie 12347, one flag byte,
	 * descriptive header, no offsets (< 4 containers), 1 run */
	for (size_t i = 0; i < 65536; i++)
		pos[i] = i;
	roundtrip(pos, 65536, &bytes);
	T_EQ_INT(bytes, 4 + 4 + 8 + (4 + 4 + 1 + 4 + 2 + 4) + 4);
	/* alternating: an array container (2 bytes a value) */
	for (size_t i = 0; i < 1000; i++)
		pos[i] = 2 * i + 1;
	roundtrip(pos, 1000, &bytes);
	T_EQ_INT(bytes, 4 + 4 + 8 + (4 + 8 + 4 + 4 + 2000) + 4);
	/* 5000 alternating values: a bitset */
	for (size_t i = 0; i < 5000; i++)
		pos[i] = 2 * i;
	roundtrip(pos, 5000, &bytes);
	T_EQ_INT(bytes, 4 + 4 + 8 + (4 + 8 + 4 + 4 + 8192) + 4);
	/* buckets far apart (high 32 bits), the largest position Java allows */
	size_t n = 0;
	pos[n++] = 0;
	pos[n++] = 5;
	pos[n++] = ((uint64_t)1 << 32) + 7;
	pos[n++] = ((uint64_t)77 << 32) | 0xFFFFFFFFu;
	pos[n++] = FLOE_DV_MAX_POSITION;
	roundtrip(pos, n, NULL);
	/* random sets of every density, many containers (offset headers with
	 * and without runs) */
	for (int round = 0; round < 40; round++) {
		uint64_t x = t_rand(&seed) % 3 == 0 ? (t_rand(&seed) % 8) << 32 : 0;
		int mode = round % 4;
		n = 0;
		size_t want = (size_t)(t_rand(&seed) % cap);
		while (n < want) {
			switch (mode) {
			case 0: x += 1 + t_rand(&seed) % 3; break;       /* dense: bitsets, runs */
			case 1: x += 1 + t_rand(&seed) % 200; break;     /* sparse: arrays */
			case 2: x += t_rand(&seed) % 50 ? 1 : 70000; break; /* runs across containers */
			default: x += 1 + t_rand(&seed) % 100000; break; /* one value a container */
			}
			if (x > FLOE_DV_MAX_POSITION)
				break;
			pos[n++] = x;
		}
		roundtrip(pos, n, NULL);
	}
	/* refused: not ascending, repeats, too large */
	floe_buf_init(&b, 0);
	uint64_t bad1[] = {5, 3};
	T_ERR(floe_dv_encode(&b, bad1, 2, &err), FLOE_EINVAL);
	T_EQ_MSG(err.msg, "deletion vector: positions not strictly ascending at index 1 (3 after 5)");
	uint64_t bad2[] = {5, 5};
	T_ERR(floe_dv_encode(&b, bad2, 2, &err), FLOE_EINVAL);
	uint64_t bad3[] = {FLOE_DV_MAX_POSITION + 1};
	T_ERR(floe_dv_encode(&b, bad3, 1, &err), FLOE_EINVAL);
	T_EQ_INT(b.len, 0);
	/* a buffer cap is honoured and the buffer left as it was */
	floe_buf small;
	floe_buf_init(&small, 64);
	for (size_t i = 0; i < 1000; i++)
		pos[i] = 2 * i;
	T_ERR(floe_dv_encode(&small, pos, 1000, &err), FLOE_ENOMEM);
	T_EQ_INT(small.len, 0);
	floe_buf_reset(&small);
	floe_buf_reset(&b);
	floe_free(pos);
}

/* ---- Puffin files -------------------------------------------------------------------- */

static void test_puffin_writer(void)
{
	floe_buf file;
	floe_output *out;
	floe_puffin_writer *pw = NULL;
	floe_error err = {0};
	floe_arena a;
	int32_t fields[1] = {FLOE_DV_FIELD_ROW_POS};
	floe_puffin_prop props[2] = {{"referenced-data-file", "s3://b/data/a.parquet"},
				     {"cardinality", "3"}};
	floe_puffin_blob meta = {FLOE_DV_BLOB_TYPE, fields, 1, -1, -1, 0, 0, NULL, props, 2};
	uint64_t pos[3] = {1, 2, 9};
	floe_buf blob;
	int64_t off1, len1, off2, len2;
	uint64_t size;
	floe_buf_init(&file, 0);
	floe_buf_init(&blob, 0);
	floe_arena_init(&a, 0);
	out = floe_output_buffer(&file, "mem.puffin");
	T_OK(floe_puffin_writer_new(&pw, out, &err), &err);
	T_OK(floe_dv_encode(&blob, pos, 3, &err), &err);
	T_OK(floe_puffin_writer_add(pw, &meta, blob.data, blob.len, &off1, &len1, &err), &err);
	props[0].value = "s3://b/data/b.parquet";
	T_OK(floe_puffin_writer_add(pw, &meta, blob.data, blob.len, &off2, &len2, &err), &err);
	floe_puffin_prop fp[1] = {{"created-by", "floe test"}};
	T_OK(floe_puffin_writer_finish(pw, fp, 1, &size, &err), &err);
	T_ERR(floe_puffin_writer_add(pw, &meta, blob.data, blob.len, NULL, NULL, &err), FLOE_EINVAL);
	floe_puffin_writer_free(pw);
	T_OK(floe_output_close(out, &err), &err);
	T_EQ_INT(size, file.len);
	T_EQ_INT(off1, 4);
	T_EQ_INT(len1, (int64_t)blob.len);
	T_EQ_INT(off2, 4 + (int64_t)blob.len);
	T_EQ_MEM(file.data, "PFA1", 4);
	T_EQ_MEM(file.data + file.len - 4, "PFA1", 4);

	/* the footer as Java's FileMetadataParser writes it */
	char want[1024];
	snprintf(want, sizeof(want),
		 "{\"blobs\":[{\"type\":\"deletion-vector-v1\",\"fields\":[2147483645],"
		 "\"snapshot-id\":-1,\"sequence-number\":-1,\"offset\":4,\"length\":%zu,"
		 "\"properties\":{\"referenced-data-file\":\"s3://b/data/a.parquet\","
		 "\"cardinality\":\"3\"}},{\"type\":\"deletion-vector-v1\",\"fields\":[2147483645],"
		 "\"snapshot-id\":-1,\"sequence-number\":-1,\"offset\":%zu,\"length\":%zu,"
		 "\"properties\":{\"referenced-data-file\":\"s3://b/data/b.parquet\","
		 "\"cardinality\":\"3\"}}],\"properties\":{\"created-by\":\"floe test\"}}",
		 blob.len, 4 + blob.len, blob.len);
	uint32_t psize = floe_load_u32le(file.data + file.len - 12);
	T_EQ_INT(psize, strlen(want));
	T_EQ_INT(file.data[file.len - 8], 0); /* flags: uncompressed */
	if (psize == strlen(want))
		T_EQ_MEM(file.data + file.len - 12 - psize, want, psize);

	/* and floe's reader takes it */
	floe_puffin_footer ft;
	floe_input *in = floe_input_memory(file.data, file.len, "mem.puffin");
	T_OK(floe_puffin_read_footer(&ft, &a, in, &err), &err);
	T_EQ_INT(ft.n_blobs, 2);
	if (ft.n_blobs == 2) {
		T_EQ_STR(floe_puffin_blob_property(&ft.blobs[1], "referenced-data-file"),
			 "s3://b/data/b.parquet");
		floe_buf got;
		floe_buf_init(&got, 0);
		T_OK(floe_puffin_read_blob(&got, in, &ft.blobs[1], 1 << 20, &err), &err);
		uint64_t *dp = NULL;
		size_t dn = 0;
		T_OK(floe_dv_decode(&dp, &dn, got.data, got.len, 3, 10, &err), &err);
		T_EQ_INT(dn, 3);
		floe_free(dp);
		floe_buf_reset(&got);
	}
	floe_input_close(in);
	floe_buf_reset(&file);
	floe_buf_reset(&blob);
	floe_arena_reset(&a);
}

/* ---- settings -------------------------------------------------------------------------- */

/* write.delete.parquet.* default one by one to write.parquet.* (Java's deleteContext). */
static void test_delete_config(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_error err = {0};
	env_open(&e, false);
	floe_arena_init(&a, 0);
	static const char *const props[] = {"write.parquet.page-size-bytes", "4096",
					    "write.parquet.compression-codec", "snappy",
					    "write.delete.parquet.row-group-size-bytes", "1048576",
					    "write.delete.parquet.page-version", "v2", NULL};
	floe_table *t = make_table(&e, "cfg", "id long", NULL, props, 2);
	T_OK(floe_write_config_from(&cfg, &a, floe_table_metadata(t), &err), &err);
	T_EQ_INT(cfg.delete_parquet.page_bytes, 4096);
	T_EQ_INT(cfg.delete_parquet.codec, FLOE_PARQUET_SNAPPY);
	T_EQ_INT(cfg.delete_parquet.row_group_bytes, 1048576);
	T_EQ_INT(cfg.parquet.row_group_bytes, (int64_t)128 << 20);
	T_EQ_INT(cfg.delete_parquet.page_version, 2);
	T_EQ_INT(cfg.parquet.page_version, 1);
	T_EQ_INT(cfg.delete_target_file_size, (int64_t)64 << 20);
	floe_table_free(t);
	/* the registry knows them: a bad value is refused before the table exists */
	floe_table_create_opts co = FLOE_TABLE_CREATE_OPTS_INIT;
	floe_prop bad[1] = {{"write.delete.parquet.compression-codec", "zip"}};
	co.schema = "id long";
	co.properties = bad;
	co.n_properties = 1;
	t = NULL;
	T_ERR(floe_table_create(&t, e.cat, "db", "cfgbad", &co, &err), FLOE_EINVAL);
	T_EQ_MSG(err.msg, "create table db.cfgbad: table property "
			  "write.delete.parquet.compression-codec = 'zip': expected one of zstd, "
			  "snappy, gzip, brotli, lz4, lz4_raw, uncompressed, none");
	bad[0] = (floe_prop){"write.delete.parquet.page-size-bytes", "0"};
	T_ERR(floe_table_create(&t, e.cat, "db", "cfgbad", &co, &err), FLOE_EINVAL);
	floe_arena_reset(&a);
	env_close(&e);
}

/* ---- equality deletes ----------------------------------------------------------------- */

static const char *eq_cols = "id long not null, name string, region string not null, v double";

static void test_eq_deletes(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_eq_delete_writer *w = NULL;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_error err = {0};
	floe_data_file *files = NULL;
	size_t n = 0;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "eq", eq_cols, "region", NULL, 2);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	/* ids in the table: id 1, name 2, region 3, v 4; equality on region, id
	 * (the delete schema keeps schema order) */
	int32_t ids[2] = {3, 1};
	o.equality_ids = ids;
	o.n_equality_ids = 2;
	o.operation_id = "op";
	T_OK(floe_eq_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	const floe_schema *ds = floe_eq_delete_writer_schema(w);
	T_EQ_INT(ds->root->n_fields, 2);
	T_EQ_STR(ds->root->fields[0].name, "id");
	T_EQ_STR(ds->root->fields[1].name, "region");

	static const char *const rows[] = {
		"{\"id\": 3, \"name\": \"c\", \"region\": \"eu\", \"v\": 1.5}",
		"{\"id\": 1, \"name\": null, \"region\": \"us\", \"v\": 2.5}",
		"{\"id\": 2, \"name\": \"b\", \"region\": \"eu\"}",
	};
	write_json(w, s, rows, 3, 0);
	/* rows of the delete schema */
	static const char *const keys[] = {"{\"id\": 7, \"region\": \"us\"}",
					   "{\"id\": -4, \"region\": \"eu\"}"};
	write_json(w, ds, keys, 2, 0);
	/* rows of a known partition */
	{
		floe_value pv;
		floe_partition p = part1(&pv, "ap");
		struct ArrowArray b;
		struct ArrowSchema bs;
		static const char *const k2[] = {"{\"id\": 9, \"region\": \"ap\"}"};
		make_batch(ds, k2, 1, &b, &bs);
		T_OK(floe_eq_delete_writer_write_partition(w, &p, &b, &bs, &err), &err);
		floe_arrow_array_release(&b);
		floe_arrow_schema_release(&bs);
	}
	floe_delete_writer_stats st;
	floe_eq_delete_writer_get_stats(w, &st);
	T_EQ_INT(st.deletes, 6);
	T_EQ_INT(st.open_files, 3);
	T_OK(floe_eq_delete_writer_complete(w, &files, &n, &a, &err), &err);
	T_EQ_INT(n, 3);
	int seen = 0;
	for (size_t i = 0; i < n; i++) {
		floe_data_file *f = &files[i];
		T_EQ_INT(f->content, FLOE_CONTENT_EQUALITY_DELETES);
		T_EQ_STR(f->file_format, "PARQUET");
		T_EQ_INT(f->n_equality_ids, 2);
		T_EQ_INT(f->equality_ids[0], 3);
		T_EQ_INT(f->equality_ids[1], 1);
		T_CHECK(f->has_sort_order_id && f->sort_order_id == 0);
		T_CHECK(f->referenced_data_file == NULL);
		T_EQ_INT(f->partition.n, 1);
		T_CHECK(strstr(f->file_path, "mem://wh/db/eq/data/region=") == f->file_path);
		T_CHECK(strstr(f->file_path, "-op-0000") != NULL);
		/* the file holds id and region only, with their field ids */
		floe_buf fl;
		floe_buf_init(&fl, 0);
		file_fields(floe_table_io(t), f->file_path, &fl);
		T_EQ_STR(floe_buf_cstr(&fl), "1:id!,3:region!");
		floe_buf_reset(&fl);
		T_EQ_STR(footer_kv(floe_table_io(t), f->file_path, "delete-type", &a), "equality");
		T_EQ_STR(footer_kv(floe_table_io(t), f->file_path, "delete-field-ids", &a), "3, 1");
		const char *js = footer_kv(floe_table_io(t), f->file_path, "iceberg.schema", &a);
		T_CHECK(js && strstr(js, "\"name\":\"region\"") && !strstr(js, "\"name\":\"v\""));
		/* metrics of the key columns */
		T_CHECK(lookup_long(f->value_counts, f->n_value_counts, 1) != NULL);
		T_CHECK(find_bound(f->lower_bounds, f->n_lower_bounds, 3) != NULL);
		T_CHECK(lookup_long(f->value_counts, f->n_value_counts, 4) == NULL);
		floe_buf r = read_rows(floe_table_io(t), f->file_path);
		const floe_value *pv = &f->partition.values[0];
		if (pv->v.bin.n == 2 && memcmp(pv->v.bin.p, "eu", 2) == 0) {
			T_EQ_STR(floe_buf_cstr(&r), "3|eu\n2|eu\n-4|eu\n");
			T_EQ_INT(f->record_count, 3);
			const floe_id_bytes *lo = find_bound(f->lower_bounds, f->n_lower_bounds, 1);
			const floe_id_bytes *hi = find_bound(f->upper_bounds, f->n_upper_bounds, 1);
			T_EQ_INT(le64(lo), -4);
			T_EQ_INT(le64(hi), 3);
			seen |= 1;
		} else if (pv->v.bin.n == 2 && memcmp(pv->v.bin.p, "us", 2) == 0) {
			T_EQ_STR(floe_buf_cstr(&r), "1|us\n7|us\n");
			seen |= 2;
		} else {
			T_EQ_STR(floe_buf_cstr(&r), "9|ap\n");
			seen |= 4;
		}
		floe_buf_reset(&r);
	}
	T_EQ_INT(seen, 7);
	floe_free(files);
	files = NULL;
	n = 0;
	floe_eq_delete_writer_free(w);
	o.operation_id = NULL; /* a new writer: a new operation id */

	/* equality fields without the partition source: table rows are fine,
	 * delete-schema rows cannot be partitioned */
	int32_t only_id[1] = {1};
	o.equality_ids = only_id;
	o.n_equality_ids = 1;
	T_OK(floe_eq_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	write_json(w, s, rows, 3, 0);
	static const char *const idk[] = {"{\"id\": 7}"};
	{
		struct ArrowArray b;
		struct ArrowSchema bs;
		make_batch(floe_eq_delete_writer_schema(w), idk, 1, &b, &bs);
		T_ERR(floe_eq_delete_writer_write(w, &b, &bs, &err), FLOE_EINVAL);
		T_CHECK(strstr(err.msg, "every partition source column must be an equality field"));
		floe_arrow_array_release(&b);
		floe_arrow_schema_release(&bs);
	}
	floe_eq_delete_writer_abort(w);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/eq/data/region=us"), 1); /* the first round's */

	/* full rows (Flink without upsert): every column */
	o.full_rows = true;
	o.sort_order_id = 0;
	T_OK(floe_eq_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	write_json(w, s, rows, 1, 0);
	T_OK(floe_eq_delete_writer_complete(w, &files, &n, &a, &err), &err);
	T_EQ_INT(n, 1);
	if (n == 1) {
		floe_buf fl;
		floe_buf_init(&fl, 0);
		file_fields(floe_table_io(t), files[0].file_path, &fl);
		T_EQ_STR(floe_buf_cstr(&fl), "1:id!,2:name,3:region!,4:v");
		floe_buf_reset(&fl);
		T_EQ_INT(files[0].n_equality_ids, 1);
		floe_buf r = read_rows(floe_table_io(t), files[0].file_path);
		T_EQ_STR(floe_buf_cstr(&r), "3|c|eu|1.5\n");
		floe_buf_reset(&r);
	}
	floe_free(files);
	files = NULL;
	n = 0;
	floe_eq_delete_writer_free(w);
	o.full_rows = false;

	/* refused configurations */
	int32_t bad[1] = {99};
	o.equality_ids = bad;
	T_ERR(floe_eq_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), FLOE_EINVAL);
	T_EQ_MSG(err.msg,
		 "equality delete writer: equality field id 99 is not in the current schema");
	int32_t twice[2] = {1, 1};
	o.equality_ids = twice;
	o.n_equality_ids = 2;
	T_ERR(floe_eq_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), FLOE_EINVAL);
	o.n_equality_ids = 0;
	T_ERR(floe_eq_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), FLOE_EINVAL);
	floe_table *nested = make_table(&e, "eqn", "id long, st struct<x: int>", NULL, NULL, 2);
	int32_t nid[1] = {3};
	o.equality_ids = nid;
	o.n_equality_ids = 1;
	T_ERR(floe_eq_delete_writer_new(&w, floe_table_io(nested), floe_table_metadata(nested),
					&cfg, &o, &err),
	      FLOE_EINVAL);
	T_EQ_MSG(err.msg, "equality delete writer: equality field 'st.x' is nested: only top-level "
			  "columns are supported");
	floe_table_free(nested);
	floe_table *v1 = make_table(&e, "eqv1", "id long", NULL, NULL, 1);
	o.equality_ids = only_id;
	T_ERR(floe_eq_delete_writer_new(&w, floe_table_io(v1), floe_table_metadata(v1), &cfg, &o,
					&err),
	      FLOE_EINVAL);
	floe_table_free(v1);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* Rolling at write.delete.target-file-size-bytes (not the data target). */
static void test_eq_rolling(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_eq_delete_writer *w = NULL;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_error err = {0};
	floe_data_file *files = NULL;
	size_t n = 0;
	static const char *const props[] = {"write.delete.target-file-size-bytes", "65536",
					    "write.delete.parquet.compression-codec", "uncompressed",
					    NULL};
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "eqroll", "id long not null, k string not null, p string",
				   NULL, props, 2);
	const floe_metadata *m = floe_table_metadata(t);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	T_EQ_INT(cfg.delete_target_file_size, 65536);
	T_EQ_INT(cfg.delete_parquet.codec, FLOE_PARQUET_UNCOMPRESSED);
	T_EQ_INT(cfg.parquet.codec, FLOE_PARQUET_ZSTD);
	int32_t ids[2] = {1, 2};
	o.equality_ids = ids;
	o.n_equality_ids = 2;
	T_OK(floe_eq_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	const floe_schema *ds = floe_eq_delete_writer_schema(w);
	json_batch *jb = NULL;
	T_OK(json_batch_new(&jb, ds, &err), &err);
	uint64_t seed = 7;
	int64_t total = 60000;
	for (int64_t i = 0; i < total; i++) {
		char row[160];
		snprintf(row, sizeof(row), "{\"id\": %lld, \"k\": \"key-%016llx\"}",
			 (long long)(t_rand(&seed) % 1000000000), (unsigned long long)t_rand(&seed));
		T_OK(json_batch_append_text(jb, row, strlen(row), &err), &err);
		if (json_batch_rows(jb) == 5000) {
			struct ArrowArray b;
			struct ArrowSchema bs;
			T_OK(json_batch_finish(jb, &b, &bs, &err), &err);
			T_OK(floe_eq_delete_writer_write(w, &b, &bs, &err), &err);
			floe_arrow_array_release(&b);
			floe_arrow_schema_release(&bs);
		}
	}
	json_batch_free(jb);
	T_OK(floe_eq_delete_writer_complete(w, &files, &n, &a, &err), &err);
	int64_t rows = 0;
	printf("  equality deletes: %zu files for %lld rows at a 64 KiB target:", n,
	       (long long)total);
	for (size_t i = 0; i < n; i++) {
		rows += files[i].record_count;
		T_EQ_INT(scan_file(floe_table_io(t), files[i].file_path, NULL, NULL),
			 files[i].record_count);
		if (i + 1 < n) /* full files land near the target */
			T_CHECK(files[i].file_size_in_bytes > 65536 * 8 / 10 &&
				files[i].file_size_in_bytes < 65536 * 14 / 10);
		printf(" %lld", (long long)files[i].file_size_in_bytes);
	}
	printf("\n");
	T_EQ_INT(rows, total);
	T_CHECK(n >= 8);
	floe_free(files);
	floe_eq_delete_writer_free(w);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* ---- position deletes --------------------------------------------------------------- */

static void test_pos_deletes(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_pos_delete_writer *w = NULL;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_error err = {0};
	floe_data_file *files = NULL;
	size_t n = 0;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "pos", eq_cols, "region", NULL, 2);
	const floe_metadata *m = floe_table_metadata(t);
	int32_t spec = floe_metadata_default_spec(m)->spec_id;
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	T_OK(floe_pos_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	floe_value eu, us;
	floe_partition peu = part1(&eu, "eu"), pus = part1(&us, "us");
	const char *fa = "mem://wh/db/pos/data/region=eu/a.parquet";
	const char *fb = "mem://wh/db/pos/data/region=eu/b.parquet";
	const char *fc = "mem://wh/db/pos/data/region=us/c.parquet";
	int64_t pb1[] = {9, 3, 3, 100}, pa1[] = {5, 1}, pc1[] = {0, 7}, pb2[] = {3, 4, 2};
	T_OK(floe_pos_delete_writer_delete(w, fb, spec, &peu, pb1, 4, &err), &err);
	T_OK(floe_pos_delete_writer_delete(w, fc, spec, &pus, pc1, 2, &err), &err);
	T_OK(floe_pos_delete_writer_delete(w, fa, spec, &peu, pa1, 2, &err), &err);
	T_OK(floe_pos_delete_writer_delete(w, fb, spec, &peu, pb2, 3, &err), &err);
	/* misuse */
	int64_t neg[] = {-1};
	T_ERR(floe_pos_delete_writer_delete(w, fa, spec, &peu, neg, 1, &err), FLOE_EINVAL);
	T_ERR(floe_pos_delete_writer_delete(w, fa, spec, &pus, pa1, 1, &err), FLOE_EINVAL);
	T_EQ_MSG(err.msg, "position delete writer: data file "
			  "'mem://wh/db/pos/data/region=eu/a.parquet' was given another spec or "
			  "partition before");
	T_ERR(floe_pos_delete_writer_delete(w, fa, spec, NULL, pa1, 1, &err), FLOE_EINVAL);
	T_ERR(floe_pos_delete_writer_delete(w, fa, 42, &peu, pa1, 1, &err), FLOE_EINVAL);
	T_CHECK(floe_pos_delete_writer_buffered(w) > 0);
	T_OK(floe_pos_delete_writer_complete(w, &files, &n, &a, &err), &err);
	T_EQ_INT(n, 2);
	for (size_t i = 0; i < n; i++) {
		floe_data_file *f = &files[i];
		floe_buf r = read_rows(floe_table_io(t), f->file_path);
		floe_buf fl;
		floe_buf_init(&fl, 0);
		file_fields(floe_table_io(t), f->file_path, &fl);
		T_EQ_STR(floe_buf_cstr(&fl), "2147483546:file_path!,2147483545:pos!");
		floe_buf_reset(&fl);
		T_EQ_INT(f->content, FLOE_CONTENT_POSITION_DELETES);
		T_CHECK(!f->has_sort_order_id);
		T_EQ_INT(f->n_equality_ids, 0);
		T_EQ_STR(footer_kv(floe_table_io(t), f->file_path, "delete-type", &a), "position");
		/* Java's PositionDeleteWriter: no counts for file_path and pos */
		T_EQ_INT(f->n_value_counts, 0);
		T_EQ_INT(f->n_null_value_counts, 0);
		T_EQ_INT(f->n_column_sizes, 2);
		if (strstr(f->file_path, "region=eu")) {
			T_EQ_STR(floe_buf_cstr(&r),
				 "mem://wh/db/pos/data/region=eu/a.parquet|1\n"
				 "mem://wh/db/pos/data/region=eu/a.parquet|5\n"
				 "mem://wh/db/pos/data/region=eu/b.parquet|2\n"
				 "mem://wh/db/pos/data/region=eu/b.parquet|3\n"
				 "mem://wh/db/pos/data/region=eu/b.parquet|4\n"
				 "mem://wh/db/pos/data/region=eu/b.parquet|9\n"
				 "mem://wh/db/pos/data/region=eu/b.parquet|100\n");
			T_EQ_INT(f->record_count, 7);
			/* two data files: no bounds, no referenced data file */
			T_EQ_INT(f->n_lower_bounds, 0);
			T_EQ_INT(f->n_upper_bounds, 0);
			T_CHECK(f->referenced_data_file == NULL);
		} else {
			T_EQ_STR(floe_buf_cstr(&r), "mem://wh/db/pos/data/region=us/c.parquet|0\n"
						    "mem://wh/db/pos/data/region=us/c.parquet|7\n");
			T_EQ_STR(f->referenced_data_file, fc);
			/* one data file: full bounds (untruncated paths) */
			const floe_id_bytes *lo =
				find_bound(f->lower_bounds, f->n_lower_bounds, 2147483546);
			const floe_id_bytes *hi =
				find_bound(f->upper_bounds, f->n_upper_bounds, 2147483546);
			T_CHECK(lo && lo->n == strlen(fc) && memcmp(lo->p, fc, lo->n) == 0);
			T_CHECK(hi && hi->n == strlen(fc) && memcmp(hi->p, fc, hi->n) == 0);
			T_EQ_INT(le64(find_bound(f->lower_bounds, f->n_lower_bounds, 2147483545)), 0);
			T_EQ_INT(le64(find_bound(f->upper_bounds, f->n_upper_bounds, 2147483545)), 7);
		}
		floe_buf_reset(&r);
	}
	floe_free(files);
	files = NULL;
	n = 0;
	/* nothing given: nothing written */
	T_OK(floe_pos_delete_writer_complete(w, &files, &n, &a, &err), &err);
	T_EQ_INT(n, 0);
	floe_pos_delete_writer_free(w);

	/* file-scoped: one file per data file, each with its reference */
	o.file_scoped = true;
	T_OK(floe_pos_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	T_OK(floe_pos_delete_writer_delete(w, fb, spec, &peu, pb1, 4, &err), &err);
	T_OK(floe_pos_delete_writer_delete(w, fa, spec, &peu, pa1, 2, &err), &err);
	T_OK(floe_pos_delete_writer_complete(w, &files, &n, &a, &err), &err);
	T_EQ_INT(n, 2);
	for (size_t i = 0; i < n; i++) {
		T_CHECK(files[i].referenced_data_file != NULL);
		T_EQ_INT(files[i].record_count,
			 strcmp(files[i].referenced_data_file, fa) == 0 ? 2 : 3);
	}
	floe_free(files);
	files = NULL;
	n = 0;
	floe_pos_delete_writer_free(w);
	o.file_scoped = false;

	/* v3 takes DVs, v1 no deletes */
	floe_table *v3 = make_table(&e, "posv3", "id long", NULL, NULL, 3);
	T_ERR(floe_pos_delete_writer_new(&w, floe_table_io(v3), floe_table_metadata(v3), &cfg, &o,
					 &err),
	      FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "must not add position delete files") != NULL);
	floe_table_free(v3);
	floe_table *v1 = make_table(&e, "posv1", "id long", NULL, NULL, 1);
	T_ERR(floe_pos_delete_writer_new(&w, floe_table_io(v1), floe_table_metadata(v1), &cfg, &o,
					 &err),
	      FLOE_EINVAL);
	floe_table_free(v1);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* Data files of an older spec get delete files of that spec (a fan-out per
 * spec, created as the writer meets them). */
static void test_pos_deletes_two_specs(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_pos_delete_writer *w = NULL;
	floe_metadata_builder *mb = NULL;
	floe_partition_spec *spec1 = NULL;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_error err = {0};
	floe_data_file *files = NULL;
	size_t n = 0;
	int32_t last, sid = -1;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "specs", eq_cols, "region", NULL, 2);
	const floe_metadata *m0 = floe_table_metadata(t);
	last = m0->last_partition_id;
	T_OK(floe_metadata_builder_from(&mb, m0, &err), &err);
	T_OK(floe_spec_parse_expr(&spec1, &a, "bucket(4, id)", floe_metadata_current_schema(m0), 1,
				  &last, &err),
	     &err);
	T_OK(floe_mb_add_spec(mb, spec1, &sid, &err), &err);
	T_OK(floe_mb_set_default_spec(mb, sid, &err), &err);
	const floe_metadata *m = floe_metadata_builder_peek(mb);
	T_EQ_INT(m->n_specs, 2);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	T_OK(floe_pos_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	floe_value eu, us, b2 = {.type = FLOE_T_INT, .is_null = false, .v.i32 = 2};
	floe_partition peu = part1(&eu, "eu"), pus = part1(&us, "us"), pb = {&b2, 1};
	int64_t p[] = {1, 2};
	/* path order: a (spec 0, eu), b (spec 1), c (spec 0, us: a file opened
	 * after spec 1's fan-out was made) */
	T_OK(floe_pos_delete_writer_delete(w, "mem://wh/db/specs/data/c.parquet", 0, &pus, p, 2, &err),
	     &err);
	T_OK(floe_pos_delete_writer_delete(w, "mem://wh/db/specs/data/b.parquet", sid, &pb, p, 2, &err),
	     &err);
	T_OK(floe_pos_delete_writer_delete(w, "mem://wh/db/specs/data/a.parquet", 0, &peu, p, 1, &err),
	     &err);
	T_OK(floe_pos_delete_writer_complete(w, &files, &n, &a, &err), &err);
	T_EQ_INT(n, 3);
	for (size_t i = 0; i < n; i++) {
		if (files[i].spec_id == 0) {
			bool is_eu = strstr(files[i].file_path, "/data/region=eu/") != NULL;
			T_EQ_INT(files[i].record_count, is_eu ? 1 : 2);
			T_EQ_STR(files[i].referenced_data_file, is_eu ? "mem://wh/db/specs/data/a.parquet"
								      : "mem://wh/db/specs/data/c.parquet");
		} else {
			T_EQ_INT(files[i].spec_id, sid);
			T_EQ_INT(files[i].record_count, 2);
			T_CHECK(strstr(files[i].file_path, "/data/id_bucket=2/") != NULL);
			T_EQ_STR(files[i].referenced_data_file, "mem://wh/db/specs/data/b.parquet");
		}
	}
	floe_free(files);
	floe_pos_delete_writer_free(w);
	floe_metadata_builder_free(mb);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* Many positions: rolled at the target, spilled past max_buffered_bytes;
 * every file sorted, the union exact. */
static void check_sorted_union(floe_fileio *io, const floe_data_file *files, size_t n,
			       int64_t want_rows, int n_data_files)
{
	int64_t rows = 0;
	for (size_t i = 0; i < n; i++) {
		floe_buf r = read_rows(io, files[i].file_path);
		const char *p = floe_buf_cstr(&r);
		char prev[256] = "";
		long long prev_pos = -1;
		int64_t k = 0;
		while (*p) {
			const char *bar = strchr(p, '|'), *nl = strchr(p, '\n');
			if (!bar || !nl)
				break;
			char path[256];
			snprintf(path, sizeof(path), "%.*s", (int)(bar - p), p);
			long long pos = strtoll(bar + 1, NULL, 10);
			int c = strcmp(prev, path);
			if (c > 0 || (c == 0 && pos <= prev_pos)) {
				t_fail(__FILE__, __LINE__, "%s: row %lld out of order",
				       files[i].file_path, (long long)k);
				break;
			}
			snprintf(prev, sizeof(prev), "%s", path);
			prev_pos = pos;
			k++;
			p = nl + 1;
		}
		T_EQ_INT(k, files[i].record_count);
		rows += k;
		floe_buf_reset(&r);
	}
	T_EQ_INT(rows, want_rows);
	(void)n_data_files;
}

static void test_pos_rolling_and_spill(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_pos_delete_writer *w = NULL;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_error err = {0};
	floe_data_file *files = NULL;
	size_t n = 0;
	static const char *const props[] = {"write.delete.target-file-size-bytes", "32768", NULL};
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "posroll", "id long", NULL, props, 2);
	const floe_metadata *m = floe_table_metadata(t);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	T_OK(floe_pos_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	/* 4 data files x 50000 positions in random order (every other row) */
	uint64_t seed = 3;
	int64_t *pos = floe_malloc(50000 * sizeof(int64_t));
	for (int f = 0; f < 4; f++) {
		char path[128];
		snprintf(path, sizeof(path), "mem://wh/db/posroll/data/f%d.parquet", 3 - f);
		for (int64_t i = 0; i < 50000; i++)
			pos[i] = 2 * i;
		for (int64_t i = 49999; i > 0; i--) {
			int64_t j = (int64_t)(t_rand(&seed) % (uint64_t)(i + 1)), x = pos[i];
			pos[i] = pos[j];
			pos[j] = x;
		}
		T_OK(floe_pos_delete_writer_delete(w, path, 0, NULL, pos, 50000, &err), &err);
	}
	T_OK(floe_pos_delete_writer_complete(w, &files, &n, &a, &err), &err);
	printf("  position deletes: %zu files for 200000 positions at a 32 KiB target\n", n);
	T_CHECK(n >= 3);
	check_sorted_union(floe_table_io(t), files, n, 200000, 4);
	for (size_t i = 0; i + 1 < n; i++)
		T_CHECK(files[i].file_size_in_bytes > 32768 * 7 / 10);
	floe_free(files);
	files = NULL;
	n = 0;
	floe_pos_delete_writer_free(w);

	/* spill: at most 64 KiB of positions held */
	int before = count_files(e.mem, "mem://wh/db/posroll/data/");
	o.max_buffered_bytes = 65536;
	T_OK(floe_pos_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	for (int f = 0; f < 4; f++) {
		char path[128];
		snprintf(path, sizeof(path), "mem://wh/db/posroll/data/g%d.parquet", f);
		for (int64_t i = 0; i < 50000; i++)
			pos[i] = 3 * i;
		for (int64_t i = 0; i < 50000; i += 1000)
			T_OK(floe_pos_delete_writer_delete(w, path, 0, NULL, pos + i, 1000, &err),
			     &err);
		T_CHECK(floe_pos_delete_writer_buffered(w) < 65536 * 3);
	}
	floe_delete_writer_stats st;
	floe_pos_delete_writer_get_stats(w, &st);
	T_CHECK(st.spills > 0);
	T_EQ_INT(st.deletes, 200000);
	/* abort deletes the spilled files too */
	T_CHECK(count_files(e.mem, "mem://wh/db/posroll/data/") > before);
	floe_pos_delete_writer_abort(w);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/posroll/data/"), before);
	T_OK(floe_pos_delete_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	for (int f = 0; f < 4; f++) {
		char path[128];
		snprintf(path, sizeof(path), "mem://wh/db/posroll/data/g%d.parquet", f);
		for (int64_t i = 0; i < 50000; i += 1000)
			T_OK(floe_pos_delete_writer_delete(w, path, 0, NULL, pos + i, 1000, &err),
			     &err);
	}
	T_OK(floe_pos_delete_writer_complete(w, &files, &n, &a, &err), &err);
	printf("  spilled: %zu files (%lld spills)\n", n, (long long)st.spills);
	check_sorted_union(floe_table_io(t), files, n, 200000, 4);
	floe_free(files);
	floe_pos_delete_writer_free(w);
	floe_free(pos);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* ---- deletion vectors ------------------------------------------------------------------- */

static void check_dv_entry(floe_fileio *io, const floe_data_file *f, const uint64_t *want,
			   size_t n_want)
{
	floe_input *in = NULL;
	floe_puffin_footer ft;
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 0);
	T_EQ_INT(f->content, FLOE_CONTENT_POSITION_DELETES);
	T_EQ_STR(f->file_format, "PUFFIN");
	T_EQ_INT(f->record_count, (int64_t)n_want);
	T_EQ_INT(f->n_value_counts + f->n_lower_bounds + f->n_column_sizes, 0);
	T_CHECK(!f->has_sort_order_id);
	T_CHECK(f->content_offset >= 4 && f->content_size_in_bytes > 0);
	T_OK(floe_io_open_read(io, f->file_path, &in, &err), &err);
	if (!in)
		return;
	T_EQ_INT(in->size, (uint64_t)f->file_size_in_bytes);
	T_OK(floe_puffin_read_footer(&ft, &a, in, &err), &err);
	const floe_puffin_blob *blob = NULL;
	for (size_t i = 0; i < ft.n_blobs; i++)
		if (ft.blobs[i].offset == f->content_offset)
			blob = &ft.blobs[i];
	T_CHECK(blob != NULL);
	const char *created_by = NULL;
	for (size_t i = 0; i < ft.n_properties; i++)
		if (strcmp(ft.properties[i].key, "created-by") == 0)
			created_by = ft.properties[i].value;
	T_EQ_STR(created_by, "floe version " FLOE_VERSION);
	if (blob) {
		char card[32];
		snprintf(card, sizeof(card), "%zu", n_want);
		T_EQ_STR(blob->type, "deletion-vector-v1");
		T_EQ_INT(blob->length, f->content_size_in_bytes);
		T_EQ_INT(blob->n_fields, 1);
		T_EQ_INT(blob->fields[0], 2147483645);
		T_EQ_INT(blob->snapshot_id, -1);
		T_EQ_INT(blob->sequence_number, -1);
		T_CHECK(blob->compression_codec == NULL);
		T_EQ_STR(floe_puffin_blob_property(blob, "referenced-data-file"),
			 f->referenced_data_file);
		T_EQ_STR(floe_puffin_blob_property(blob, "cardinality"), card);
		floe_buf b;
		floe_buf_init(&b, 0);
		T_OK(floe_puffin_read_blob(&b, in, blob, 1 << 24, &err), &err);
		uint64_t *pos = NULL;
		size_t n = 0;
		T_OK(floe_dv_decode(&pos, &n, b.data, b.len, f->record_count, 1 << 24, &err), &err);
		T_EQ_INT(n, n_want);
		for (size_t i = 0; i < n && i < n_want; i++)
			T_EQ_INT(pos[i], want[i]);
		floe_free(pos);
		floe_buf_reset(&b);
	}
	floe_input_close(in);
	floe_arena_reset(&a);
}

static const floe_data_file *by_ref(const floe_data_file *f, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (f[i].referenced_data_file && strcmp(f[i].referenced_data_file, path) == 0)
			return &f[i];
	return NULL;
}

static void test_dvs(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_dv_writer *w = NULL;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_error err = {0};
	floe_data_file *dvs = NULL, *rep = NULL;
	size_t n = 0, n_rep = 0;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "dv", eq_cols, "region", NULL, 3);
	const floe_metadata *m = floe_table_metadata(t);
	int32_t spec = floe_metadata_default_spec(m)->spec_id;
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	o.operation_id = "dvop";
	T_OK(floe_dv_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	floe_value eu, us;
	floe_partition peu = part1(&eu, "eu"), pus = part1(&us, "us");
	const char *fa = "mem://wh/db/dv/data/region=eu/a.parquet";
	const char *fb = "mem://wh/db/dv/data/region=us/b.parquet";
	int64_t pa[] = {70000, 1, 2, 3, 1}, pb[] = {5};
	T_OK(floe_dv_writer_delete(w, fb, spec, &pus, pb, 1, &err), &err);
	T_OK(floe_dv_writer_delete(w, fa, spec, &peu, pa, 5, &err), &err);
	int64_t huge[] = {(int64_t)FLOE_DV_MAX_POSITION + 1}, neg[] = {-3};
	T_ERR(floe_dv_writer_delete(w, fa, spec, &peu, huge, 1, &err), FLOE_EINVAL);
	T_ERR(floe_dv_writer_delete(w, fa, spec, &peu, neg, 1, &err), FLOE_EINVAL);
	T_OK(floe_dv_writer_complete(w, &dvs, &n, &rep, &n_rep, &a, &err), &err);
	T_EQ_INT(n, 2);
	T_EQ_INT(n_rep, 0);
	/* one Puffin file for both, at the data path, no partition path */
	T_CHECK(n == 2 && strcmp(dvs[0].file_path, dvs[1].file_path) == 0);
	T_CHECK(strncmp(dvs[0].file_path, "mem://wh/db/dv/data/00000-0-dvop-00001.puffin", 60) ==
		0);
	static const uint64_t wa[] = {1, 2, 3, 70000}, wb[] = {5};
	const floe_data_file *da = by_ref(dvs, n, fa), *db = by_ref(dvs, n, fb);
	T_CHECK(da && db);
	if (da && db) {
		check_dv_entry(floe_table_io(t), da, wa, 4);
		check_dv_entry(floe_table_io(t), db, wb, 1);
		T_CHECK(da->content_offset < db->content_offset); /* path order */
		T_EQ_INT(da->partition.n, 1);
		T_CHECK(floe_partition_equal(&da->partition, &peu));
		T_CHECK(floe_partition_equal(&db->partition, &pus));
	}
	/* next checkpoint: more deletes in a, its DV merged and replaced; the same
	 * entry given twice is merged once; b's DV stays as it is */
	floe_data_file prev = *da;
	int64_t pa2[] = {4, 3, 200000};
	T_OK(floe_dv_writer_delete(w, fa, spec, &peu, pa2, 3, &err), &err);
	T_OK(floe_dv_writer_merge_previous(w, &prev, &err), &err);
	T_OK(floe_dv_writer_merge_previous(w, &prev, &err), &err);
	floe_data_file *dvs2 = NULL;
	size_t n2 = 0;
	T_OK(floe_dv_writer_complete(w, &dvs2, &n2, &rep, &n_rep, &a, &err), &err);
	T_EQ_INT(n2, 1);
	T_EQ_INT(n_rep, 1);
	if (n2 == 1 && n_rep == 1) {
		static const uint64_t wa2[] = {1, 2, 3, 4, 70000, 200000};
		check_dv_entry(floe_table_io(t), &dvs2[0], wa2, 6);
		T_CHECK(strstr(dvs2[0].file_path, "-dvop-00002.puffin") != NULL);
		T_EQ_STR(rep[0].file_path, prev.file_path);
		T_EQ_INT(rep[0].content_offset, prev.content_offset);
	}
	/* a merge through positions the caller read (a file-scoped position delete) */
	uint64_t old[] = {8, 9};
	floe_data_file posfile;
	floe_data_file_init(&posfile);
	posfile.content = FLOE_CONTENT_POSITION_DELETES;
	posfile.file_path = "mem://wh/db/dv/data/old-deletes.parquet";
	posfile.file_format = "PARQUET";
	T_OK(floe_dv_writer_merge(w, fb, spec, &pus, old, 2, &posfile, &err), &err);
	floe_data_file *dvs3 = NULL, *rep3 = NULL;
	size_t n3 = 0, n_rep3 = 0;
	T_OK(floe_dv_writer_complete(w, &dvs3, &n3, &rep3, &n_rep3, &a, &err), &err);
	T_EQ_INT(n3, 1);
	T_EQ_INT(n_rep3, 1);
	if (n3 == 1) {
		static const uint64_t wb3[] = {8, 9};
		check_dv_entry(floe_table_io(t), &dvs3[0], wb3, 2);
	}
	floe_free(dvs3);
	floe_free(rep3);

	/* a previous DV that does not decode (one byte of the blob changed):
	 * ECORRUPT naming the file */
	{
		floe_buf copy;
		floe_buf_init(&copy, 0);
		T_OK(floe_io_read_all(floe_table_io(t), dvs2[0].file_path, &copy, 1 << 20, &err),
		     &err);
		copy.data[dvs2[0].content_offset + 9] ^= 0x10;
		T_OK(floe_io_write_all(floe_table_io(t), "mem://wh/db/dv/data/bad.puffin", copy.data,
				       copy.len, false, &err),
		     &err);
		floe_data_file bad = dvs2[0];
		bad.file_path = "mem://wh/db/dv/data/bad.puffin";
		T_ERR(floe_dv_writer_merge_previous(w, &bad, &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "bad.puffin") != NULL);
		T_CHECK(strstr(err.msg, "CRC") != NULL);
		floe_buf_reset(&copy);
		/* a cardinality that disagrees */
		bad = dvs2[0];
		bad.record_count = 5;
		floe_dv_writer_abort(w);
		o.operation_id = NULL; /* a new writer: a new operation id */
		T_OK(floe_dv_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
		T_ERR(floe_dv_writer_merge_previous(w, &bad, &err), FLOE_ECORRUPT);
		/* not a DV entry */
		bad = dvs2[0];
		bad.file_format = "PARQUET";
		T_ERR(floe_dv_writer_merge_previous(w, &bad, &err), FLOE_EINVAL);
		floe_dv_writer_abort(w);
	}
	floe_free(dvs);
	floe_free(dvs2);
	floe_free(rep);

	/* nothing deleted: no file */
	T_OK(floe_dv_writer_new(&w, floe_table_io(t), m, &cfg, &o, &err), &err);
	int before = count_files(e.mem, "mem://wh/db/dv/data/");
	dvs = rep = NULL;
	n = n_rep = 0;
	T_OK(floe_dv_writer_complete(w, &dvs, &n, &rep, &n_rep, &a, &err), &err);
	T_EQ_INT(n, 0);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/dv/data/"), before);
	/* a failed publish leaves nothing; the writer then refuses work */
	T_OK(floe_dv_writer_delete(w, fa, spec, &peu, pa, 5, &err), &err);
	floe_io_memory_fail(e.mem, "close", 1, FLOE_EIO);
	T_ERR(floe_dv_writer_complete(w, &dvs, &n, &rep, &n_rep, &a, &err), FLOE_EIO);
	floe_io_memory_fail(e.mem, "close", 0, 0);
	T_EQ_INT(count_files(e.mem, "mem://wh/db/dv/data/"), before);
	T_ERR(floe_dv_writer_delete(w, fa, spec, &peu, pa, 5, &err), FLOE_EINVAL);
	floe_dv_writer_abort(w);
	floe_free(dvs);
	floe_free(rep);

	/* v2 tables take position delete files */
	floe_table *v2 = make_table(&e, "dvv2", "id long", NULL, NULL, 2);
	T_ERR(floe_dv_writer_new(&w, floe_table_io(v2), floe_table_metadata(v2), &cfg, &o, &err),
	      FLOE_EINVAL);
	floe_table_free(v2);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* ---- shared budget, shared names, abort -------------------------------------------------- */

static void test_budget_names_abort(void)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_error err = {0};
	floe_parquet_budget *budget = NULL;
	floe_file_namer *namer = NULL;
	floe_task_writer *tw = NULL;
	floe_eq_delete_writer *ew = NULL;
	floe_pos_delete_writer *pw = NULL;
	floe_task_writer_opts to = FLOE_TASK_WRITER_OPTS_INIT;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	env_open(&e, false);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, "shared", "id long not null, k int not null, pay string",
				   "k", NULL, 2);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);
	T_OK(floe_parquet_budget_new(&budget, (uint64_t)2 << 20, NULL, NULL), &err);
	T_OK(floe_file_namer_new(&namer, 3, 7, "op", &err), &err);
	to.budget = o.budget = budget;
	to.namer = o.namer = namer;
	int32_t ids[2] = {1, 2};
	o.equality_ids = ids;
	o.n_equality_ids = 2;
	T_OK(floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &to, &err), &err);
	T_OK(floe_eq_delete_writer_new(&ew, floe_table_io(t), m, &cfg, &o, &err), &err);
	T_OK(floe_pos_delete_writer_new(&pw, floe_table_io(t), m, &cfg, &o, &err), &err);
	uint64_t seed = 11, peak = 0;
	for (int round = 0; round < 12; round++) {
		json_batch *jb = NULL;
		T_OK(json_batch_new(&jb, s, &err), &err);
		for (int i = 0; i < 4000; i++) {
			char row[512], pay[200];
			for (int k = 0; k < 120; k++)
				pay[k] = (char)('a' + t_rand(&seed) % 26);
			pay[120] = 0;
			snprintf(row, sizeof(row), "{\"id\": %llu, \"k\": %d, \"pay\": \"%s\"}",
				 (unsigned long long)t_rand(&seed), (int)(t_rand(&seed) % 32), pay);
			T_OK(json_batch_append_text(jb, row, strlen(row), &err), &err);
		}
		struct ArrowArray b;
		struct ArrowSchema bs;
		T_OK(json_batch_finish(jb, &b, &bs, &err), &err);
		T_OK(floe_task_writer_write(tw, &b, &bs, &err), &err);
		T_OK(floe_eq_delete_writer_write(ew, &b, &bs, &err), &err);
		floe_arrow_array_release(&b);
		floe_arrow_schema_release(&bs);
		json_batch_free(jb);
		uint64_t used = floe_parquet_budget_used(budget);
		if (used > peak)
			peak = used;
	}
	floe_task_writer_stats ts;
	floe_delete_writer_stats ds;
	floe_task_writer_get_stats(tw, &ts);
	floe_eq_delete_writer_get_stats(ew, &ds);
	printf("  shared 2 MiB budget: peak %.2f MiB, flushes data %lld, deletes %lld\n",
	       (double)peak / 1048576.0, (long long)ts.budget_flushes, (long long)ds.budget_flushes);
	T_CHECK(ts.budget_flushes + ds.budget_flushes > 0);
	T_CHECK(ds.budget_flushes > 0);
	T_CHECK(peak < ((uint64_t)2 << 20) * 3 / 2);
	/* names from one counter: no two files share a name */
	int64_t p0[] = {1, 2};
	floe_value kv = {.type = FLOE_T_INT, .is_null = false, .v.i32 = 5};
	floe_partition pk = {&kv, 1};
	T_OK(floe_pos_delete_writer_delete(pw, "mem://wh/db/shared/data/k=5/x.parquet", 0, &pk, p0,
					   2, &err),
	     &err);
	floe_data_file *files = NULL;
	size_t n = 0;
	T_OK(floe_task_writer_complete(tw, &files, &n, &a, &err), &err);
	T_OK(floe_eq_delete_writer_complete(ew, &files, &n, &a, &err), &err);
	T_OK(floe_pos_delete_writer_complete(pw, &files, &n, &a, &err), &err);
	T_EQ_INT((int64_t)n, floe_file_namer_count(namer));
	for (size_t i = 0; i < n; i++) {
		T_CHECK(strstr(files[i].file_path, "/00003-7-op-") != NULL);
		for (size_t k = 0; k < i; k++) {
			const char *x = strrchr(files[i].file_path, '/'),
				   *y = strrchr(files[k].file_path, '/');
			if (strcmp(x, y) == 0)
				t_fail(__FILE__, __LINE__, "two files named %s", x);
		}
	}
	floe_free(files);
	files = NULL;
	n = 0;

	/* abort: rolled (finished, not handed out) and open files are deleted */
	static const char *const roll[] = {"write.delete.target-file-size-bytes", "16384", NULL};
	floe_table *t2 = make_table(&e, "eqabort", "id long not null, pay string", NULL, roll, 2);
	const floe_metadata *m2 = floe_table_metadata(t2);
	floe_write_config cfg2;
	T_OK(floe_write_config_from(&cfg2, &a, m2, &err), &err);
	floe_delete_writer_opts o2 = FLOE_DELETE_WRITER_OPTS_INIT;
	int32_t id1[1] = {1};
	o2.equality_ids = id1;
	o2.n_equality_ids = 1;
	o2.full_rows = true;
	for (int nth = 0; nth <= 3; nth++) {
		floe_eq_delete_writer *w2 = NULL;
		T_OK(floe_eq_delete_writer_new(&w2, floe_table_io(t2), m2, &cfg2, &o2, &err), &err);
		if (nth)
			floe_io_memory_fail(e.mem, "close", nth, FLOE_EIO);
		json_batch *jb = NULL;
		T_OK(json_batch_new(&jb, floe_metadata_current_schema(m2), &err), &err);
		for (int i = 0; i < 20000; i++) {
			char row[256];
			snprintf(row, sizeof(row), "{\"id\": %llu, \"pay\": \"%016llx%016llx\"}",
				 (unsigned long long)t_rand(&seed), (unsigned long long)t_rand(&seed),
				 (unsigned long long)t_rand(&seed));
			T_OK(json_batch_append_text(jb, row, strlen(row), &err), &err);
		}
		struct ArrowArray b;
		struct ArrowSchema bs;
		T_OK(json_batch_finish(jb, &b, &bs, &err), &err);
		int rc = floe_eq_delete_writer_write(w2, &b, &bs, &err);
		if (nth == 0) {
			T_OK(rc, &err);
			floe_delete_writer_stats st;
			floe_eq_delete_writer_get_stats(w2, &st);
			T_CHECK(st.files_finished > 0 && st.open_files == 1);
			T_CHECK(count_files(e.mem, "mem://wh/db/eqabort/data") > 1);
		} else {
			T_EQ_INT(rc, FLOE_EIO);
		}
		floe_arrow_array_release(&b);
		floe_arrow_schema_release(&bs);
		json_batch_free(jb);
		floe_eq_delete_writer_abort(w2);
		floe_io_memory_fail(e.mem, "close", 0, 0);
		T_EQ_INT(count_files(e.mem, "mem://wh/db/eqabort/data"), 0);
	}
	floe_table_free(t2);
	floe_task_writer_free(tw);
	floe_eq_delete_writer_free(ew);
	floe_pos_delete_writer_free(pw);
	floe_parquet_budget_free(budget);
	floe_file_namer_free(namer);
	floe_eq_delete_writer_abort(NULL);
	floe_pos_delete_writer_abort(NULL);
	floe_dv_writer_abort(NULL);
	floe_table_free(t);
	floe_arena_reset(&a);
	env_close(&e);
}

/* ---- a row delta read back by floe's scan -------------------------------------------------- */

typedef struct ids_acc {
	floe_buf text;
} ids_acc;

static int collect(const char *data, size_t n, void *payload)
{
	ids_acc *acc = payload;
	return floe_buf_append(&acc->text, data, n);
}

static void row_delta(int fv)
{
	wenv e;
	floe_arena a;
	floe_write_config cfg;
	floe_error err = {0};
	floe_task_writer *tw = NULL;
	floe_eq_delete_writer *ew = NULL;
	floe_task_writer_opts to = FLOE_TASK_WRITER_OPTS_INIT;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	floe_data_file *files = NULL;
	size_t n = 0;
	char name[32];
	snprintf(name, sizeof(name), "rd%d", fv);
	env_open(&e, true);
	floe_arena_init(&a, 0);
	floe_table *t = make_table(&e, name, eq_cols, "region", NULL, fv);
	floe_table *tc = NULL; /* commits go through this one */
	T_OK(floe_table_load(&tc, e.cat, "db", name, &err), &err);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	T_OK(floe_write_config_from(&cfg, &a, m, &err), &err);

	/* snapshot 1: ids 0..19 in eu (even) and us (odd), one append */
	T_OK(floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &to, &err), &err);
	{
		const char *rows[20];
		char buf[20][96];
		for (int i = 0; i < 20; i++) {
			snprintf(buf[i], sizeof(buf[i]),
				 "{\"id\": %d, \"name\": \"n%d\", \"region\": \"%s\", \"v\": %d}", i, i,
				 i % 2 ? "us" : "eu", i);
			rows[i] = buf[i];
		}
		struct ArrowArray b;
		struct ArrowSchema bs;
		make_batch(s, rows, 20, &b, &bs);
		T_OK(floe_task_writer_write(tw, &b, &bs, &err), &err);
		floe_arrow_array_release(&b);
		floe_arrow_schema_release(&bs);
	}
	T_OK(floe_task_writer_complete(tw, &files, &n, &a, &err), &err);
	floe_task_writer_free(tw);
	floe_append *ap = NULL;
	T_OK(floe_append_new(&ap, tc, NULL, &err), &err);
	for (size_t i = 0; i < n; i++)
		T_OK(floe_append_add_file(ap, &files[i], &err), &err);
	T_OK(floe_append_commit(ap, NULL, &err), &err);
	floe_append_free(ap);

	/* snapshot 2 (row delta): equality deletes of ids 6 and 7 (by id and
	 * region), and positions 0 and 1 of each data file (ids 0, 2 in eu;
	 * 1, 3 in us) */
	int32_t ids[2] = {1, 3};
	o.equality_ids = ids;
	o.n_equality_ids = 2;
	T_OK(floe_eq_delete_writer_new(&ew, floe_table_io(t), m, &cfg, &o, &err), &err);
	static const char *const keys[] = {"{\"id\": 6, \"region\": \"eu\"}",
					   "{\"id\": 7, \"region\": \"us\"}"};
	write_json(ew, floe_eq_delete_writer_schema(ew), keys, 2, 0);
	floe_data_file *dels = NULL;
	size_t nd = 0;
	T_OK(floe_eq_delete_writer_complete(ew, &dels, &nd, &a, &err), &err);
	floe_eq_delete_writer_free(ew);
	int64_t p01[] = {1, 0};
	if (fv == 2) {
		floe_pos_delete_writer *pw = NULL;
		T_OK(floe_pos_delete_writer_new(&pw, floe_table_io(t), m, &cfg, &o, &err), &err);
		for (size_t i = 0; i < n; i++)
			T_OK(floe_pos_delete_writer_delete(pw, files[i].file_path, files[i].spec_id,
							   &files[i].partition, p01, 2, &err),
			     &err);
		T_OK(floe_pos_delete_writer_complete(pw, &dels, &nd, &a, &err), &err);
		floe_pos_delete_writer_free(pw);
	} else {
		floe_dv_writer *dw = NULL;
		floe_data_file *rep = NULL;
		size_t nr = 0;
		T_OK(floe_dv_writer_new(&dw, floe_table_io(t), m, &cfg, &o, &err), &err);
		for (size_t i = 0; i < n; i++)
			T_OK(floe_dv_writer_delete(dw, files[i].file_path, files[i].spec_id,
						   &files[i].partition, p01, 2, &err),
			     &err);
		T_OK(floe_dv_writer_complete(dw, &dels, &nd, &rep, &nr, &a, &err), &err);
		T_EQ_INT(nr, 0);
		floe_free(rep);
		floe_dv_writer_free(dw);
	}
	T_EQ_INT(nd, 4);
	floe_snapshot_op *op = NULL;
	T_OK(floe_op_new(&op, tc, FLOE_OP_ROW_DELTA, NULL, &err), &err);
	for (size_t i = 0; i < nd; i++)
		T_OK(floe_op_add_file(op, &dels[i], &err), &err);
	T_OK(floe_op_commit(op, NULL, &err), &err);
	floe_op_free(op);

	/* floe's scan applies them */
	floe_table *tr = NULL;
	T_OK(floe_table_load(&tr, e.cat, "db", name, &err), &err);
	floe_scan *sc = NULL;
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	const char *cols[] = {"id"};
	so.columns = cols;
	so.n_columns = 1;
	so.where = "id < 100";
	T_OK(floe_scan_open(&sc, tr, &so, &err), &err);
	ids_acc acc;
	floe_buf_init(&acc.text, 0);
	T_OK(floe_scan_write(sc, FLOE_OUTPUT_CSV, collect, &acc, &err), &err);
	floe_scan_stats st;
	floe_scan_get_stats(sc, &st);
	T_EQ_INT(st.rows_deleted, 6);
	floe_scan_free(sc);
	/* left: 4, 5, 8..19 */
	int64_t left = 0;
	for (const char *p = floe_buf_cstr(&acc.text); *p;) {
		const char *nl = strchr(p, '\n');
		long long id = strtoll(p, NULL, 10);
		if (p[0] >= '0' && p[0] <= '9') {
			T_CHECK(id >= 4 && id < 20 && id != 6 && id != 7);
			left++;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	T_EQ_INT(left, 14);
	floe_buf_reset(&acc.text);
	floe_table_free(tr);
	floe_free(files);
	floe_free(dels);
	floe_table_free(t);
	floe_table_free(tc);
	floe_arena_reset(&a);
	env_close(&e);
}

static void test_row_delta_v2(void)
{
	row_delta(2);
}

static void test_row_delta_v3(void)
{
	row_delta(3);
}

int main(void)
{
	T_RUN(test_dv_golden_bytes);
	T_RUN(test_dv_roundtrip);
	T_RUN(test_puffin_writer);
	T_RUN(test_delete_config);
	T_RUN(test_eq_deletes);
	T_RUN(test_eq_rolling);
	T_RUN(test_pos_deletes);
	T_RUN(test_pos_deletes_two_specs);
	T_RUN(test_pos_rolling_and_spill);
	T_RUN(test_dvs);
	T_RUN(test_budget_names_abort);
	T_RUN(test_row_delta_v2);
	T_RUN(test_row_delta_v3);
	return t_finish();
}
