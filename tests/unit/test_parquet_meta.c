/*
 * test_parquet_meta.c — Thrift compact protocol, footer model and schema
 * tree: hand-made Thrift bytes (unknown fields of every type skipped, limits
 * enforced), every footer of the parquet-testing corpus parsed, turned into
 * a schema tree, serialised and parsed again to the same model.
 */
#include <dirent.h>
#include <stdlib.h>

#include "harness.h"
#include "parquet/meta.h"
#include "parquet/schema.h"
#include "parquet/thrift.h"
#include "util/alloc.h"
#include "util/cursor.h"

static void test_thrift_roundtrip_and_skip(void)
{
	floe_buf b;
	floe_thrift_writer w;
	floe_thrift_reader r;
	floe_error err = {0};
	int16_t fid;
	int t;
	int32_t i32 = 0;
	int64_t i64 = 0;
	const uint8_t *p;
	size_t n;
	bool present;

	floe_buf_init(&b, 0);
	floe_thrift_writer_init(&w, &b);
	floe_thrift_struct_begin_w(&w);
	floe_thrift_put_i32(&w, 1, -5);
	/* unknown fields of every type, including nested ones, and a big delta */
	floe_thrift_put_bool(&w, 2, true);
	floe_thrift_put_i8(&w, 3, -1);
	floe_thrift_put_i16(&w, 4, 300);
	floe_thrift_put_double(&w, 5, 1.5);
	floe_thrift_put_string(&w, 6, "skip me");
	floe_thrift_put_list_begin(&w, 7, FLOE_THRIFT_STRUCT, 20);
	for (int i = 0; i < 20; i++) {
		floe_thrift_struct_begin_w(&w);
		floe_thrift_put_i64(&w, 1, i);
		floe_thrift_put_list_begin(&w, 2, FLOE_THRIFT_BOOL, 2);
		floe_thrift_elem_put_bool(&w, true);
		floe_thrift_elem_put_bool(&w, false);
		floe_thrift_struct_end(&w);
	}
	floe_thrift_put_struct_begin(&w, 8);
	floe_thrift_put_binary(&w, 100, "x", 1);
	floe_thrift_struct_end(&w);
	floe_thrift_put_i64(&w, 200, INT64_MIN);
	floe_thrift_put_string(&w, 201, "kept");
	floe_thrift_struct_end(&w);
	T_EQ_INT(w.rc, 0);
	/* a map field (type 11) appended by hand before the STOP byte is not
	 * needed: the writer has no map API; craft one below instead */

	floe_thrift_reader_init(&r, b.data, b.len, NULL, "test", &err);
	T_OK(floe_thrift_struct_begin(&r), &err);
	for (;;) {
		T_OK(floe_thrift_next_field(&r, &fid, &t), &err);
		if (t == FLOE_THRIFT_STOP)
			break;
		if (fid == 1)
			T_OK(floe_thrift_read_i32(&r, t, &i32, &present), &err);
		else if (fid == 200)
			T_OK(floe_thrift_read_i64(&r, t, &i64, &present), &err);
		else if (fid == 201)
			T_OK(floe_thrift_read_binary(&r, t, &p, &n, &present), &err);
		else
			T_OK(floe_thrift_skip(&r, t), &err);
	}
	T_EQ_INT(i32, -5);
	T_CHECK(i64 == INT64_MIN);
	T_CHECK(n == 4 && memcmp(p, "kept", 4) == 0);
	T_EQ_INT(r.off, b.len);
	T_EQ_INT(r.depth, 0);

	/* a type mismatch is skipped and reported absent */
	floe_thrift_reader_init(&r, b.data, b.len, NULL, "test", &err);
	T_OK(floe_thrift_struct_begin(&r), &err);
	T_OK(floe_thrift_next_field(&r, &fid, &t), &err);
	T_OK(floe_thrift_read_binary(&r, t, &p, &n, &present), &err);
	T_CHECK(!present);

	/* every truncation fails cleanly */
	for (size_t cut = 0; cut < b.len; cut++) {
		floe_thrift_reader_init(&r, b.data, cut, NULL, "test", &err);
		int rc = floe_thrift_skip(&r, FLOE_THRIFT_STRUCT);
		T_EQ_INT(rc, FLOE_ECORRUPT);
	}
	floe_buf_reset(&b);
}

static void test_thrift_limits(void)
{
	floe_thrift_reader r;
	floe_error err = {0};
	/* field 1: list of 2^31 i32 in 4 bytes */
	const uint8_t huge_list[] = {0x19, 0xf5, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00};
	/* field 1: binary of 1000 bytes, 2 present */
	const uint8_t huge_bin[] = {0x18, 0xe8, 0x07, 'a', 'b', 0x00};
	/* a map of 3 i32->i32 entries, then STOP */
	const uint8_t map_ok[] = {0x1b, 0x03, 0x55, 0x02, 0x04, 0x06, 0x08, 0x0a, 0x0c, 0x00};
	uint8_t deep[200];
	floe_thrift_limits lim = FLOE_THRIFT_LIMITS_INIT;

	floe_thrift_reader_init(&r, huge_list, sizeof(huge_list), NULL, "t", &err);
	T_ERR(floe_thrift_skip(&r, FLOE_THRIFT_STRUCT), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "exceeds") != NULL);
	floe_thrift_reader_init(&r, huge_bin, sizeof(huge_bin), NULL, "t", &err);
	T_ERR(floe_thrift_skip(&r, FLOE_THRIFT_STRUCT), FLOE_ECORRUPT);
	floe_thrift_reader_init(&r, map_ok, sizeof(map_ok), NULL, "t", &err);
	T_OK(floe_thrift_skip(&r, FLOE_THRIFT_STRUCT), &err);
	T_EQ_INT(r.off, sizeof(map_ok));
	/* structs nested 100 deep: field 1 of type struct, repeated */
	memset(deep, 0x1c, sizeof(deep));
	floe_thrift_reader_init(&r, deep, sizeof(deep), NULL, "t", &err);
	T_ERR(floe_thrift_skip(&r, FLOE_THRIFT_STRUCT), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "nesting") != NULL);
	lim.max_list = 2;
	const uint8_t list3[] = {0x19, 0x35, 0x02, 0x04, 0x06, 0x00};
	floe_thrift_reader_init(&r, list3, sizeof(list3), &lim, "t", &err);
	T_ERR(floe_thrift_skip(&r, FLOE_THRIFT_STRUCT), FLOE_ECORRUPT);
}

/* Read a file's footer bytes (malloc'd) from the tail. */
static uint8_t *footer_of(const char *path, size_t *n)
{
	size_t len;
	unsigned char *all = t_read_file(path, &len);
	uint8_t *f = NULL;
	if (!all)
		return NULL;
	if (len >= 12 && memcmp(all + len - 4, "PAR1", 4) == 0) {
		uint32_t flen = floe_load_u32le(all + len - 8);
		if (flen <= len - 12) {
			f = malloc(flen + 1);
			memcpy(f, all + len - 8 - flen, flen);
			*n = flen;
		}
	}
	free(all);
	return f;
}

static void check_same(const floe_parquet_file_meta *a, const floe_parquet_file_meta *b)
{
	T_EQ_INT(a->version, b->version);
	T_EQ_INT(a->num_rows, b->num_rows);
	T_EQ_INT(a->n_schema, b->n_schema);
	T_EQ_INT(a->n_row_groups, b->n_row_groups);
	T_EQ_INT(a->n_kv, b->n_kv);
	for (size_t i = 0; i < a->n_schema && i < b->n_schema; i++) {
		T_EQ_STR(a->schema[i].name, b->schema[i].name);
		T_EQ_INT(a->schema[i].type, b->schema[i].type);
		/* a logical type this version does not know is not written back */
		if (a->schema[i].logical.kind != FLOE_PARQUET_LT_OTHER)
			T_EQ_INT(a->schema[i].logical.kind, b->schema[i].logical.kind);
		T_EQ_INT(a->schema[i].field_id, b->schema[i].field_id);
	}
	for (size_t i = 0; i < a->n_row_groups && i < b->n_row_groups; i++) {
		const floe_parquet_row_group *x = &a->row_groups[i], *y = &b->row_groups[i];
		T_EQ_INT(x->n_columns, y->n_columns);
		for (size_t c = 0; c < x->n_columns && c < y->n_columns; c++) {
			const floe_parquet_column_meta *p = &x->columns[c].meta_data,
						       *q = &y->columns[c].meta_data;
			T_EQ_INT(p->num_values, q->num_values);
			T_EQ_INT(p->data_page_offset, q->data_page_offset);
			T_EQ_INT(p->has_statistics, q->has_statistics);
			T_EQ_INT(p->statistics.min_value.n, q->statistics.min_value.n);
			T_EQ_INT(p->n_encoding_stats, q->n_encoding_stats);
		}
	}
}

static int n_footers;

static void roundtrip_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d) {
		t_fail(__FILE__, __LINE__, "cannot open %s", dir);
		return;
	}
	while ((e = readdir(d))) {
		char path[4096];
		size_t n = 0;
		uint8_t *f;
		floe_arena a, a2;
		floe_parquet_file_meta *m = NULL, *m2 = NULL;
		floe_parquet_schema *s = NULL;
		floe_error err = {0};
		floe_buf out;
		if (!strstr(e->d_name, ".parquet") || strstr(e->d_name, ".encrypted"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = footer_of(path, &n);
		if (!f)
			continue;
		floe_arena_init(&a, 0);
		floe_arena_init(&a2, 0);
		floe_buf_init(&out, 0);
		int rc = floe_parquet_meta_parse(&m, &a, f, n, e->d_name, &err);
		if (rc) {
			/* only the bad_data corpus may fail here */
			if (!strstr(dir, "bad_data"))
				t_fail(__FILE__, __LINE__, "%s: %s", path, err.msg);
			goto next;
		}
		n_footers++;
		rc = floe_parquet_schema_from_meta(&s, m, e->d_name, &err);
		if (rc) {
			if (!strstr(dir, "bad_data"))
				t_fail(__FILE__, __LINE__, "%s: %s", path, err.msg);
			goto next;
		}
		T_EQ_INT(s->n_nodes, m->n_schema);
		T_OK(floe_parquet_meta_write(&out, m, &err), &err);
		T_OK(floe_parquet_meta_parse(&m2, &a2, out.data, out.len, e->d_name, &err), &err);
		if (m2)
			check_same(m, m2);
	next:
		floe_parquet_schema_free(s);
		floe_buf_reset(&out);
		floe_arena_reset(&a);
		floe_arena_reset(&a2);
		free(f);
	}
	closedir(d);
}

static void test_corpus_footers(void)
{
	roundtrip_dir(t_testdata("parquet-testing/data"));
	roundtrip_dir(t_testdata("parquet-testing/data/geospatial"));
	roundtrip_dir(t_testdata("parquet-testing/shredded_variant"));
	roundtrip_dir(t_testdata("parquet-testing/bad_data"));
	T_CHECK(n_footers > 200);
}

static void test_schema_builder(void)
{
	floe_parquet_schema *s = NULL;
	floe_error err = {0};
	floe_parquet_field f = FLOE_PARQUET_FIELD_INIT, el = FLOE_PARQUET_FIELD_INIT,
			   k = FLOE_PARQUET_FIELD_INIT, v = FLOE_PARQUET_FIELD_INIT;
	floe_parquet_node *elem, *st, *val;
	floe_buf out;
	floe_arena a;
	floe_parquet_schema_elem *elems;
	size_t n;

	T_OK(floe_parquet_schema_new(&s, "table", &err), &err);
	f.name = "id";
	f.repetition = FLOE_PARQUET_REQUIRED;
	f.physical = FLOE_PARQUET_INT64;
	f.has_field_id = true;
	f.field_id = 1;
	T_OK(floe_parquet_schema_add(s, NULL, &f, NULL, &err), &err);
	f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;
	f.name = "price";
	f.physical = FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY;
	f.type_length = floe_parquet_decimal_bytes(38);
	T_EQ_INT(f.type_length, 16);
	f.logical.kind = FLOE_PARQUET_LT_DECIMAL;
	f.logical.precision = 38;
	f.logical.scale = 2;
	f.has_field_id = true;
	f.field_id = 2;
	T_OK(floe_parquet_schema_add(s, NULL, &f, NULL, &err), &err);
	/* tags: list<struct<a: string>> */
	f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;
	f.name = "tags";
	f.has_field_id = true;
	f.field_id = 3;
	el.physical = -1;
	el.has_field_id = true;
	el.field_id = 4;
	T_OK(floe_parquet_schema_add_list(s, NULL, &f, &el, NULL, &elem, &err), &err);
	f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;
	f.name = "a";
	f.physical = FLOE_PARQUET_BYTE_ARRAY;
	f.logical.kind = FLOE_PARQUET_LT_STRING;
	f.has_field_id = true;
	f.field_id = 5;
	T_OK(floe_parquet_schema_add(s, elem, &f, &st, &err), &err);
	/* props: map<string, timestamptz> */
	f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;
	f.name = "props";
	k.physical = FLOE_PARQUET_BYTE_ARRAY;
	k.logical.kind = FLOE_PARQUET_LT_STRING;
	v.physical = FLOE_PARQUET_INT64;
	v.logical.kind = FLOE_PARQUET_LT_TIMESTAMP;
	v.logical.unit = FLOE_PARQUET_MICROS;
	v.logical.utc = true;
	T_OK(floe_parquet_schema_add_map(s, NULL, &f, &k, &v, NULL, NULL, &val, &err), &err);
	/* invalid ones */
	f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;
	f.name = "bad";
	f.physical = FLOE_PARQUET_INT96;
	T_ERR(floe_parquet_schema_add(s, NULL, &f, NULL, &err), FLOE_EINVAL);
	f.physical = FLOE_PARQUET_INT32;
	f.logical.kind = FLOE_PARQUET_LT_DECIMAL;
	f.logical.precision = 10;
	T_ERR(floe_parquet_schema_add(s, NULL, &f, NULL, &err), FLOE_EINVAL);
	T_ERR(floe_parquet_schema_add(s, st, &f, NULL, &err), FLOE_EINVAL);

	T_OK(floe_parquet_schema_finish(s, &err), &err);
	T_EQ_INT(s->n_leaves, 5);
	T_EQ_INT(s->leaves[2]->def_level, 4); /* tags, list, element, a */
	T_EQ_INT(s->leaves[2]->rep_level, 1);
	T_EQ_INT(s->leaves[3]->def_level, 2); /* props, key_value (key required) */
	T_EQ_INT(s->leaves[4]->def_level, 3);
	T_EQ_INT(val->converted, FLOE_PARQUET_CT_TIMESTAMP_MICROS);
	T_EQ_STR(s->leaves[2]->path[1], "list");
	T_CHECK(floe_parquet_schema_find_id(s, 5) == s->leaves[2]);

	floe_buf_init(&out, 0);
	T_OK(floe_parquet_schema_print(s, &out), &err);
	T_CHECK(strstr((char *)out.data, "optional fixed_len_byte_array(16) price (DECIMAL(38,2)) = 2;"));
	T_CHECK(strstr((char *)out.data, "optional group tags (LIST) = 3 {"));

	/* to elements and back */
	floe_arena_init(&a, 0);
	T_OK(floe_parquet_schema_to_elems(s, &a, &elems, &n), &err);
	T_EQ_INT(n, (size_t)s->n_nodes);
	floe_parquet_file_meta m = {0};
	m.schema = elems;
	m.n_schema = n;
	floe_parquet_schema *s2 = NULL;
	T_OK(floe_parquet_schema_from_meta(&s2, &m, "x", &err), &err);
	if (s2) {
		floe_buf out2;
		floe_buf_init(&out2, 0);
		T_OK(floe_parquet_schema_print(s2, &out2), &err);
		T_EQ_STR((char *)out.data, (char *)out2.data);
		floe_buf_reset(&out2);
	}
	/* a child count past the end is corrupt */
	elems[0].num_children = 9;
	floe_parquet_schema *s3 = NULL;
	T_ERR(floe_parquet_schema_from_meta(&s3, &m, "x", &err), FLOE_ECORRUPT);
	floe_parquet_schema_free(s2);
	floe_parquet_schema_free(s);
	floe_arena_reset(&a);
	floe_buf_reset(&out);
}

int main(void)
{
	T_RUN(test_thrift_roundtrip_and_skip);
	T_RUN(test_thrift_limits);
	T_RUN(test_corpus_footers);
	T_RUN(test_schema_builder);
	return t_finish();
}
