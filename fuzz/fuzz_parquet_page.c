/*
 * fuzz_parquet_page.c — page headers and page decoding (levels, every value
 * encoding, every codec) on arbitrary column-chunk bytes.
 *
 * Input: byte 0 picks the column's physical type (and an annotation),
 * byte 1 its shape (bit 0 optional, bit 1 inside a list) and bits 2-4 the
 * codec, bytes 2-3 the row count; the rest is the column chunk (page
 * headers and pages). A one-column file is built around it with a footer
 * written by floe, then read completely.
 */
#include <stdint.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "parquet/meta.h"
#include "parquet/pjson.h"
#include "parquet/reader.h"
#include "parquet/schema.h"
#include "util/alloc.h"
#include "util/cursor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	int type, len, lt, precision, scale;
} types[] = {
	{FLOE_PARQUET_BOOLEAN, 0, 0, 0, 0},
	{FLOE_PARQUET_INT32, 0, 0, 0, 0},
	{FLOE_PARQUET_INT64, 0, 0, 0, 0},
	{FLOE_PARQUET_INT96, 0, 0, 0, 0},
	{FLOE_PARQUET_FLOAT, 0, 0, 0, 0},
	{FLOE_PARQUET_DOUBLE, 0, 0, 0, 0},
	{FLOE_PARQUET_BYTE_ARRAY, 0, FLOE_PARQUET_LT_STRING, 0, 0},
	{FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY, 4, 0, 0, 0},
	{FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY, 16, FLOE_PARQUET_LT_DECIMAL, 38, 4},
	{FLOE_PARQUET_BYTE_ARRAY, 0, FLOE_PARQUET_LT_DECIMAL, 20, 2},
	{FLOE_PARQUET_INT32, 0, FLOE_PARQUET_LT_DECIMAL, 9, 3},
	{FLOE_PARQUET_INT64, 0, FLOE_PARQUET_LT_TIMESTAMP, 0, 0},
};

static const int codecs[] = {FLOE_PARQUET_UNCOMPRESSED, FLOE_PARQUET_SNAPPY, FLOE_PARQUET_GZIP,
			     FLOE_PARQUET_ZSTD,		FLOE_PARQUET_LZ4,    FLOE_PARQUET_LZ4_RAW,
			     FLOE_PARQUET_BROTLI,	FLOE_PARQUET_UNCOMPRESSED};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sink = 0;
	floe_parquet_schema_elem el[4];
	floe_parquet_column_chunk cc;
	floe_parquet_row_group rg;
	floe_parquet_file_meta m;
	const char *path[3];
	int encs[2] = {FLOE_PARQUET_ENC_PLAIN, FLOE_PARQUET_ENC_RLE};
	floe_buf file;
	floe_error err = {0};
	size_t ti, n_el = 0;
	bool opt, list;
	int codec;
	uint16_t rows;

	if (size < 4)
		return 0;
	ti = data[0] % (sizeof(types) / sizeof(types[0]));
	opt = data[1] & 1;
	list = data[1] & 2;
	codec = codecs[(data[1] >> 2) & 7];
	rows = (uint16_t)(data[2] | data[3] << 8);
	data += 4;
	size -= 4;

	memset(el, 0, sizeof(el));
	for (int i = 0; i < 4; i++) {
		el[i].type = -1;
		el[i].repetition = -1;
		el[i].converted = FLOE_PARQUET_CT_NONE;
		el[i].logical.algorithm = -1;
	}
	el[n_el].name = "schema";
	el[n_el].has_num_children = true;
	el[n_el++].num_children = 1;
	if (list) {
		el[n_el].name = "l";
		el[n_el].repetition = FLOE_PARQUET_OPTIONAL;
		el[n_el].has_num_children = true;
		el[n_el].num_children = 1;
		el[n_el].converted = FLOE_PARQUET_CT_LIST;
		el[n_el++].logical.kind = FLOE_PARQUET_LT_LIST;
		el[n_el].name = "list";
		el[n_el].repetition = FLOE_PARQUET_REPEATED;
		el[n_el].has_num_children = true;
		el[n_el++].num_children = 1;
	}
	el[n_el].name = list ? "element" : "x";
	el[n_el].type = types[ti].type;
	el[n_el].repetition = opt ? FLOE_PARQUET_OPTIONAL : FLOE_PARQUET_REQUIRED;
	el[n_el].has_type_length = types[ti].len > 0;
	el[n_el].type_length = types[ti].len;
	el[n_el].logical.kind = types[ti].lt;
	el[n_el].logical.precision = types[ti].precision;
	el[n_el].logical.scale = types[ti].scale;
	el[n_el].logical.unit = FLOE_PARQUET_MICROS;
	n_el++;
	path[0] = list ? "l" : "x";
	path[1] = "list";
	path[2] = "element";

	memset(&cc, 0, sizeof(cc));
	cc.has_meta_data = true;
	cc.file_offset = 4;
	cc.meta_data.type = types[ti].type;
	cc.meta_data.encodings = encs;
	cc.meta_data.n_encodings = 2;
	cc.meta_data.path = path;
	cc.meta_data.path_len = list ? 3 : 1;
	cc.meta_data.codec = codec;
	cc.meta_data.num_values = rows;
	cc.meta_data.total_compressed_size = (int64_t)size;
	cc.meta_data.total_uncompressed_size = (int64_t)size;
	cc.meta_data.data_page_offset = 4;
	memset(&rg, 0, sizeof(rg));
	rg.columns = &cc;
	rg.n_columns = 1;
	rg.num_rows = rows;
	memset(&m, 0, sizeof(m));
	m.version = 1;
	m.schema = el;
	m.n_schema = n_el;
	m.num_rows = rows;
	m.row_groups = &rg;
	m.n_row_groups = 1;

	floe_buf_init(&file, 0);
	if (floe_buf_append(&file, "PAR1", 4) || floe_buf_append(&file, data, size)) {
		floe_buf_reset(&file);
		return 0;
	}
	size_t at = file.len;
	uint8_t tail[8];
	if (floe_parquet_meta_write(&file, &m, &err) == 0) {
		floe_store_u32le(tail, (uint32_t)(file.len - at));
		memcpy(tail + 4, "PAR1", 4);
		if (floe_buf_append(&file, tail, 8) == 0) {
			floe_input *in = floe_input_memory(file.data, file.len, "page.parquet");
			floe_parquet_reader *r = NULL;
			floe_parquet_reader_opts o = FLOE_PARQUET_READER_OPTS_INIT;
			struct ArrowSchema s = {0};
			struct ArrowArray a = {0};
			floe_buf json;
			int rc;
			o.batch_rows = 100;
			o.max_page_bytes = 16 << 20;
			o.max_page_values = 1 << 20;
			floe_buf_init(&json, 1 << 24);
			rc = in ? floe_parquet_reader_open(&r, in, &o, &err) : FLOE_ENOMEM;
			if (!rc)
				rc = floe_parquet_reader_arrow_schema(r, &s, &err);
			while (!rc) {
				bool eof;
				if ((rc = floe_parquet_reader_next(r, &a, &eof, &err)) || eof)
					break;
				floe_buf_clear(&json);
				sink |= floe_parquet__json_rows(&json, &s, &a, 0, a.length, &err);
				floe_arrow_array_release(&a);
			}
			floe_arrow_schema_release(&s);
			floe_parquet_reader_free(r);
			floe_input_close(in);
			floe_buf_reset(&json);
		}
	}
	floe_buf_reset(&file);
	return sink & 0;
}
