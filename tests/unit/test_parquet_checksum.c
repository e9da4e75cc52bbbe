/*
 * test_parquet_checksum.c — page checksums: the writer puts the standard
 * CRC-32 of each page's stored bytes in every page header (dictionary, v1
 * and v2 data pages, any codec), and a reader asked to verify refuses a
 * page whose bytes changed, naming the file, column, row group, page and
 * offset. Without verification a byte flipped inside PLAIN values reads
 * "fine" as a different value: that silent change is why the option exists
 * and why compaction turns it on.
 */
#include <stdlib.h>

#include "arrow/arrow_build.h"
#include "codec/codec.h"
#include "harness.h"
#include "parquet/pjson.h"
#include "parquet/reader.h"
#include "parquet/writer.h"
#include "util/alloc.h"
#include "util/cursor.h"

#define N 1000

/* CRC-32 bit by bit (reflected polynomial 0xEDB88320, as zlib and gzip):
 * independent of util/hash.c, so the test checks the standard, not itself. */
static uint32_t crc32_ref(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

/* required int64 id, optional int64 v (every 10th null) and optional string s */
static floe_parquet_schema *schema3(void)
{
	floe_parquet_schema *ps = NULL;
	floe_error err = {0};
	floe_parquet_field f = FLOE_PARQUET_FIELD_INIT;
	T_OK(floe_parquet_schema_new(&ps, "t", &err), &err);
	f.name = "id";
	f.repetition = FLOE_PARQUET_REQUIRED;
	f.physical = FLOE_PARQUET_INT64;
	T_OK(floe_parquet_schema_add(ps, NULL, &f, NULL, &err), &err);
	f.name = "v";
	f.repetition = FLOE_PARQUET_OPTIONAL;
	T_OK(floe_parquet_schema_add(ps, NULL, &f, NULL, &err), &err);
	f.name = "s";
	f.physical = FLOE_PARQUET_BYTE_ARRAY;
	f.logical.kind = FLOE_PARQUET_LT_STRING;
	T_OK(floe_parquet_schema_add(ps, NULL, &f, NULL, &err), &err);
	T_OK(floe_parquet_schema_finish(ps, &err), &err);
	return ps;
}

static void batch3(struct ArrowSchema *s, struct ArrowArray *a)
{
	static int64_t id[N], v[N];
	static int32_t off[N + 1];
	static char data[N * 8];
	uint8_t *valid = floe_calloc(1, N / 8 + 1);
	size_t at = 0;
	for (int i = 0; i < N; i++) {
		id[i] = i;
		v[i] = (int64_t)i * 1000003;
		if (i % 10 != 3)
			valid[i >> 3] |= (uint8_t)(1 << (i & 7));
		off[i] = (int32_t)at;
		at += (size_t)snprintf(data + at, sizeof(data) - at, "k%d", i % 5);
	}
	off[N] = (int32_t)at;
	T_CHECK(floe_arrow_schema_init(s, "+s", "", 0, 3) == 0);
	T_CHECK(floe_arrow_array_init(a, 1, 3) == 0);
	a->length = N;
	T_CHECK(floe_arrow_schema_init(s->children[0], "l", "id", 0, 0) == 0);
	T_CHECK(floe_arrow_array_init(a->children[0], 2, 0) == 0);
	a->children[0]->length = N;
	floe_arrow_array_set_buffer(a->children[0], 1, floe_memdup(id, sizeof(id)));
	T_CHECK(floe_arrow_schema_init(s->children[1], "l", "v", ARROW_FLAG_NULLABLE, 0) == 0);
	T_CHECK(floe_arrow_array_init(a->children[1], 2, 0) == 0);
	a->children[1]->length = N;
	a->children[1]->null_count = N / 10;
	floe_arrow_array_set_buffer(a->children[1], 0, valid);
	floe_arrow_array_set_buffer(a->children[1], 1, floe_memdup(v, sizeof(v)));
	T_CHECK(floe_arrow_schema_init(s->children[2], "u", "s", ARROW_FLAG_NULLABLE, 0) == 0);
	T_CHECK(floe_arrow_array_init(a->children[2], 3, 0) == 0);
	a->children[2]->length = N;
	floe_arrow_array_set_buffer(a->children[2], 1, floe_memdup(off, sizeof(off)));
	floe_arrow_array_set_buffer(a->children[2], 2, floe_memdup(data, at ? at : 1));
}

static int write_file(floe_buf *file, const floe_parquet_writer_opts *o)
{
	floe_parquet_schema *ps = schema3();
	struct ArrowSchema s;
	struct ArrowArray a;
	floe_error err = {0};
	floe_output *out = floe_output_buffer(file, "x.parquet");
	floe_parquet_writer *w = NULL;
	batch3(&s, &a);
	int rc = floe_parquet_writer_new(&w, out, ps, o, &err);
	if (!rc)
		rc = floe_parquet_writer_write(w, &a, &s, &err);
	if (!rc)
		rc = floe_parquet_writer_close(w, NULL, &err);
	if (rc)
		t_fail(__FILE__, __LINE__, "write: %s", err.msg);
	T_EQ_INT(floe_output_close(out, NULL), 0);
	floe_parquet_writer_free(w);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&s);
	floe_parquet_schema_free(ps);
	return rc;
}

static int read_json(const floe_buf *file, bool verify, floe_buf *json, floe_error *err)
{
	floe_input *in = floe_input_memory(file->data, file->len, "/tmp/t/x.parquet");
	floe_parquet_reader *r = NULL;
	floe_parquet_reader_opts o = FLOE_PARQUET_READER_OPTS_INIT;
	struct ArrowSchema s = {0};
	struct ArrowArray a = {0};
	int rc;
	o.verify_checksums = verify;
	rc = floe_parquet_reader_open(&r, in, &o, err);
	if (!rc)
		rc = floe_parquet_reader_arrow_schema(r, &s, err);
	while (!rc) {
		bool eof;
		if ((rc = floe_parquet_reader_next(r, &a, &eof, err)) || eof)
			break;
		rc = floe_parquet__json_rows(json, &s, &a, 0, a.length, err);
		floe_arrow_array_release(&a);
	}
	floe_arrow_schema_release(&s);
	floe_parquet_reader_free(r);
	floe_input_close(in);
	return rc;
}

/* One page of a column chunk as stored. */
typedef struct page {
	int type;
	bool has_crc;
	uint32_t crc;
	size_t at;             /* offset of the header in the file */
	size_t body, body_len; /* offset and length of what follows the header */
	size_t levels;         /* v2: bytes of levels at the start of the body */
} page;

/* The pages of leaf `col` in row group `rg`; returns how many (at most cap). */
static size_t pages_of(const floe_buf *file, size_t rg, size_t col, page *out, size_t cap)
{
	floe_arena a;
	floe_error err = {0};
	floe_parquet_file_meta *m = NULL;
	size_t n = 0;
	uint32_t flen = floe_load_u32le(file->data + file->len - 8);
	floe_arena_init(&a, 0);
	T_OK(floe_parquet_meta_parse(&m, &a, file->data + file->len - 8 - flen, flen, "x", &err), &err);
	if (m && rg < m->n_row_groups && col < m->row_groups[rg].n_columns) {
		const floe_parquet_column_meta *c = &m->row_groups[rg].columns[col].meta_data;
		size_t pos = (size_t)(c->has_dictionary_page_offset ? c->dictionary_page_offset
								     : c->data_page_offset);
		size_t end = pos + (size_t)c->total_compressed_size;
		while (pos < end && n < cap) {
			floe_parquet_page_header h;
			size_t hl = 0;
			T_OK(floe_parquet_page_header_parse(&h, file->data + pos, end - pos, &hl, "p", &err),
			     &err);
			if (err.code)
				break;
			out[n].type = h.type;
			out[n].has_crc = h.has_crc;
			out[n].crc = (uint32_t)h.crc;
			out[n].at = pos;
			out[n].body = pos + hl;
			out[n].body_len = (size_t)h.compressed_page_size;
			out[n].levels = h.type == FLOE_PARQUET_DATA_PAGE_V2
						? (size_t)h.data_page_header_v2.repetition_levels_byte_length +
							  (size_t)h.data_page_header_v2.definition_levels_byte_length
						: 0;
			n++;
			pos += hl + (size_t)h.compressed_page_size;
		}
	}
	floe_arena_reset(&a);
	return n;
}

/* spec: every page's crc is the standard CRC-32 of its stored bytes. */
static void test_every_page_has_its_crc(void)
{
	static const int codecs[] = {FLOE_PARQUET_UNCOMPRESSED, FLOE_PARQUET_SNAPPY, FLOE_PARQUET_ZSTD};
	int pages = 0, dict_pages = 0, v2_pages = 0;
	for (size_t ci = 0; ci < 3; ci++)
		for (int pv = 1; pv <= 2; pv++)
			for (int dict = 0; dict < 2; dict++) {
				floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
				floe_buf file;
				page pg[64];
				o.codec = codecs[ci];
				o.page_version = pv;
				o.dictionary = dict;
				o.page_rows = 128;
				o.row_group_rows = 600;
				floe_buf_init(&file, 0);
				if (write_file(&file, &o)) {
					floe_buf_reset(&file);
					continue;
				}
				for (size_t rg = 0; rg < 2; rg++)
					for (size_t col = 0; col < 3; col++) {
						size_t n = pages_of(&file, rg, col, pg, 64);
						T_CHECK(n >= 3);
						for (size_t i = 0; i < n; i++) {
							T_CHECK(pg[i].has_crc);
							T_EQ_INT(pg[i].crc,
								 crc32_ref(file.data + pg[i].body, pg[i].body_len));
							pages++;
							dict_pages += pg[i].type == FLOE_PARQUET_DICTIONARY_PAGE;
							v2_pages += pg[i].type == FLOE_PARQUET_DATA_PAGE_V2;
						}
					}
				floe_buf_reset(&file);
			}
	T_CHECK(pages > 100);
	T_CHECK(dict_pages > 0);
	T_CHECK(v2_pages > 0);

	/* turned off: no crc, and a verifying reader reads such pages as they are */
	floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
	floe_buf file, json;
	floe_error err = {0};
	page pg[64];
	o.page_crc = false;
	o.page_rows = 128;
	floe_buf_init(&file, 0);
	floe_buf_init(&json, 0);
	T_OK(write_file(&file, &o), &err);
	size_t n = pages_of(&file, 0, 1, pg, 64);
	T_CHECK(n >= 3);
	for (size_t i = 0; i < n; i++)
		T_CHECK(!pg[i].has_crc);
	T_OK(read_json(&file, true, &json, &err), &err);
	T_CHECK(json.len > 0);
	floe_buf_reset(&json);
	floe_buf_reset(&file);
}

/* The case: an uncompressed PLAIN file, one byte flipped inside a
 * data page's values. */
static void test_flipped_value_byte(void)
{
	floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
	floe_buf file, want, got;
	floe_error err = {0};
	page pg[64];
	char msg[512];
	o.codec = FLOE_PARQUET_UNCOMPRESSED;
	o.dictionary = false;
	o.page_rows = 100;
	floe_buf_init(&file, 0);
	floe_buf_init(&want, 0);
	floe_buf_init(&got, 0);
	T_OK(write_file(&file, &o), &err);
	T_OK(read_json(&file, true, &want, &err), &err);
	/* column 'v' (optional: def levels, then 8-byte PLAIN values); page 3 */
	size_t n = pages_of(&file, 0, 1, pg, 64);
	T_CHECK(n >= 5);
	if (n < 5)
		goto done;
	T_EQ_INT(pg[2].type, FLOE_PARQUET_DATA_PAGE);
	/* the next-to-last value's second byte: past the levels, inside the values */
	size_t at = pg[2].body + pg[2].body_len - 8 - 7;
	file.data[at] ^= 0x10;

	/* verified: refused, naming file, column, row group, page and offset */
	floe_buf_clear(&got);
	T_ERR(read_json(&file, true, &got, &err), FLOE_ECORRUPT);
	snprintf(msg, sizeof(msg),
		 "'/tmp/t/x.parquet' column 'v' row group 0 page 3 at offset %zu: checksum 0x%08x != "
		 "0x%08x in its header (the page is damaged; CRC-32 of %zu bytes)",
		 pg[2].at, crc32_ref(file.data + pg[2].body, pg[2].body_len), pg[2].crc,
		 pg[2].body_len);
	T_EQ_MSG(err.msg, msg);

	/* not verified: the read "succeeds" with one value silently changed —
	 * why verify_checksums exists and why compaction turns it on */
	floe_buf_clear(&got);
	T_OK(read_json(&file, false, &got, &err), &err);
	T_EQ_INT(got.len, want.len);
	T_CHECK(memcmp(got.data, want.data, want.len) != 0);
	size_t diff = 0;
	for (size_t i = 0; i < want.len && i < got.len; i++)
		diff += got.data[i] != want.data[i];
	T_CHECK(diff > 0 && diff < 8);
	file.data[at] ^= 0x10;

	/* the other columns and pages are untouched: only 'v' is refused */
	floe_buf_clear(&got);
	T_OK(read_json(&file, true, &got, &err), &err);
	T_CHECK(got.len == want.len && memcmp(got.data, want.data, want.len) == 0);
done:
	floe_buf_reset(&file);
	floe_buf_reset(&want);
	floe_buf_reset(&got);
}

/* A flipped byte in a dictionary page, in v2 levels and in compressed bytes. */
static void test_other_pages(void)
{
	static const struct {
		int codec, pv;
		bool dict;
		size_t col;
		int which; /* 0 dictionary page, 1 v2 levels, 2 last byte of a data page */
	} cases[] = {
		{FLOE_PARQUET_UNCOMPRESSED, 1, true, 2, 0},
		{FLOE_PARQUET_SNAPPY, 2, true, 2, 0},
		{FLOE_PARQUET_UNCOMPRESSED, 2, false, 1, 1},
		{FLOE_PARQUET_ZSTD, 2, false, 1, 1},
		{FLOE_PARQUET_ZSTD, 1, false, 0, 2},
		{FLOE_PARQUET_SNAPPY, 2, true, 2, 2},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
		floe_buf file, got;
		floe_error err = {0};
		page pg[64];
		o.codec = cases[k].codec;
		o.page_version = cases[k].pv;
		o.dictionary = cases[k].dict;
		o.page_rows = 100;
		floe_buf_init(&file, 0);
		floe_buf_init(&got, 0);
		T_OK(write_file(&file, &o), &err);
		size_t n = pages_of(&file, 0, cases[k].col, pg, 64);
		T_CHECK(n >= 3);
		size_t i = cases[k].which == 0 ? 0 : 1, at;
		if (cases[k].which == 0) {
			T_EQ_INT(pg[0].type, FLOE_PARQUET_DICTIONARY_PAGE);
			at = pg[0].body + pg[0].body_len / 2;
		} else if (cases[k].which == 1) {
			T_CHECK(pg[1].levels > 0);
			at = pg[1].body;
		} else {
			at = pg[1].body + pg[1].body_len - 1;
		}
		file.data[at] ^= 0x01;
		T_ERR(read_json(&file, true, &got, &err), FLOE_ECORRUPT);
		char want[64];
		snprintf(want, sizeof(want), "page %zu at offset %zu: checksum 0x", i + 1, pg[i].at);
		if (!strstr(err.msg, want) || !strstr(err.msg, "the page is damaged"))
			t_fail(__FILE__, __LINE__, "case %zu: %s", k, err.msg);
		floe_buf_reset(&file);
		floe_buf_reset(&got);
	}
}

int main(void)
{
	long live = floe_alloc__live();
	T_RUN(test_every_page_has_its_crc);
	T_RUN(test_flipped_value_byte);
	T_RUN(test_other_pages);
	floe_codec_thread_cleanup();
	T_EQ_INT(floe_alloc__live(), live);
	return t_finish();
}
