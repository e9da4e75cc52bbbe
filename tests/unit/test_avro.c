/*
 * test_avro.c — Avro binary encodings, schemas (parse, JSON round trip,
 * builder, errors), container writer/reader round trips for every type and
 * codec, schema resolution rules and corruption handling.
 */
#include <math.h>
#include <stdlib.h>

#include "avro/avro_datum.h"
#include "avro/avro_reader.h"
#include "avro/avro_writer.h"
#include "harness.h"

/* ---- encodings ------------------------------------------------------------------ */

static void expect_bytes(const floe_buf *b, const char *hex)
{
	char got[512];
	size_t n = 0;
	for (size_t i = 0; i < b->len && n + 3 < sizeof(got); i++)
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%02x", b->data[i]);
	got[n] = 0;
	T_EQ_STR(got, hex);
}

static void test_encodings(void)
{
	floe_buf b;
	floe_buf_init(&b, 0);
#define ENC(call, hex)                                                                        \
	do {                                                                                  \
		floe_buf_clear(&b);                                                           \
		T_EQ_INT(call, 0);                                                            \
		expect_bytes(&b, hex);                                                        \
	} while (0)
	/* spec: zig-zag varints (the table in "Binary Encoding") */
	ENC(floe_avro_enc_long(&b, 0), "00");
	ENC(floe_avro_enc_long(&b, -1), "01");
	ENC(floe_avro_enc_long(&b, 1), "02");
	ENC(floe_avro_enc_long(&b, -2), "03");
	ENC(floe_avro_enc_long(&b, 2), "04");
	ENC(floe_avro_enc_long(&b, -64), "7f");
	ENC(floe_avro_enc_long(&b, 64), "8001");
	ENC(floe_avro_enc_long(&b, INT64_MAX), "feffffffffffffffff01");
	ENC(floe_avro_enc_long(&b, INT64_MIN), "ffffffffffffffffff01");
	ENC(floe_avro_enc_int(&b, INT32_MIN), "ffffffff0f");
	ENC(floe_avro_enc_bool(&b, true), "01");
	ENC(floe_avro_enc_float(&b, 1.0f), "0000803f");
	ENC(floe_avro_enc_double(&b, -2.0), "00000000000000c0");
	/* spec example: the string "foo" is 06 66 6f 6f */
	ENC(floe_avro_enc_string(&b, "foo", 3), "06666f6f");
	ENC(floe_avro_enc_bytes(&b, "", 0), "00");
	ENC(floe_avro_enc_union(&b, 1), "02");
	/* spec example: the array {3, 27} of longs is 04 06 36 00 */
	floe_buf_clear(&b);
	T_EQ_INT(floe_avro_enc_block_count(&b, 2) || floe_avro_enc_long(&b, 3) ||
			 floe_avro_enc_long(&b, 27) || floe_avro_enc_block_count(&b, 0),
		 0);
	expect_bytes(&b, "04063600");
	floe_buf_reset(&b);
#undef ENC
}

static void test_decodings(void)
{
	floe_cursor c;
	int64_t l, cnt, sz;
	int32_t i;
	bool bo;
	const uint8_t *p;
	size_t n, br;
	floe_cursor_init(&c, "\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
	T_CHECK(floe_avro_dec_long(&c, &l) && l == INT64_MAX && c.off == 10);
	/* bits past the 64th are dropped (Java and DuckDB read such files) */
	floe_cursor_init(&c, "\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10);
	T_CHECK(floe_avro_dec_long(&c, &l) && l == INT64_MAX && c.off == 10);
	floe_cursor_init(&c, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11);
	T_CHECK(!floe_avro_dec_long(&c, &l) && c.off == 0); /* over-long */
	floe_cursor_init(&c, "\xff\xff\xff\xff\x0f", 5);
	T_CHECK(floe_avro_dec_int(&c, &i) && i == INT32_MIN);
	floe_cursor_init(&c, "\x80\x80\x80\x80\x10", 5);
	T_CHECK(!floe_avro_dec_int(&c, &i) && c.off == 0); /* > 32 bits */
	floe_cursor_init(&c, "\x02", 1);
	T_CHECK(!floe_avro_dec_bool(&c, &bo));
	floe_cursor_init(&c, "\x06" "fo", 3);
	T_CHECK(!floe_avro_dec_bytes(&c, &p, &n) && c.off == 0); /* length past the end */
	floe_cursor_init(&c, "\x01", 1);
	T_CHECK(!floe_avro_dec_bytes(&c, &p, &n)); /* negative length */
	floe_cursor_init(&c, "\x04", 1);
	T_CHECK(!floe_avro_dec_union(&c, 2, &br) && c.off == 0);
	floe_cursor_init(&c, "\x02", 1);
	T_CHECK(floe_avro_dec_union(&c, 2, &br) && br == 1);
	/* a negative block count carries the byte size */
	floe_cursor_init(&c, "\x03\x04\x06\x36", 4);
	T_CHECK(floe_avro_dec_block(&c, &cnt, &sz) && cnt == 2 && sz == 2 && c.off == 2);
	floe_cursor_init(&c, "\x03\x10\x06\x36", 4);
	T_CHECK(!floe_avro_dec_block(&c, &cnt, &sz)); /* size past the end */
}

/* ---- schemas ----------------------------------------------------------------------- */

static floe_avro_schema *parse(floe_arena *a, const char *json, floe_error *err)
{
	floe_avro_schema *s = NULL;
	if (floe_avro_schema_parse(&s, a, json, strlen(json), NULL, err))
		return NULL;
	return s;
}

static const char *to_json(floe_buf *b, const floe_avro_schema *s)
{
	floe_error err = {0};
	floe_buf_clear(b);
	T_OK(floe_avro_schema_to_json(b, s, &err), &err);
	return floe_buf_cstr(b);
}

/* The Java-shaped v2 manifest fragment of iceberg-notes 2.4 (trimmed). */
static const char MANIFEST_SCHEMA[] =
	"{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
	"{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
	"{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
	"{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
	"{\"name\":\"file_path\",\"type\":\"string\",\"doc\":\"Location URI with FS scheme\","
	"\"field-id\":100},"
	"{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":["
	"{\"name\":\"ts_day\",\"type\":[\"null\",{\"type\":\"int\",\"logicalType\":\"date\"}],"
	"\"default\":null,\"field-id\":1000}]},\"field-id\":102},"
	"{\"name\":\"column_sizes\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"
	"{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":["
	"{\"name\":\"key\",\"type\":\"int\",\"field-id\":117},"
	"{\"name\":\"value\",\"type\":\"long\",\"field-id\":118}]},\"logicalType\":\"map\"}],"
	"\"doc\":\"Map of column id to total size on disk\",\"default\":null,\"field-id\":108},"
	"{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\","
	"\"element-id\":133}],\"doc\":\"Splittable offsets\",\"default\":null,\"field-id\":132},"
	"{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"bytes\",\"key-id\":7,\"value-id\":8},"
	"\"field-id\":6,\"iceberg-field-name\":\"m.x\"},"
	"{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
	"\"adjust-to-utc\":true},\"field-id\":9},"
	"{\"name\":\"dec\",\"type\":{\"type\":\"fixed\",\"name\":\"decimal_9_2\",\"size\":4,"
	"\"logicalType\":\"decimal\",\"precision\":9,\"scale\":2},\"field-id\":10},"
	"{\"name\":\"dec2\",\"type\":\"decimal_9_2\",\"field-id\":11}"
	"]},\"field-id\":2}]}";

static void test_schema_parse(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf b;
	floe_arena_init(&a, 0);
	floe_buf_init(&b, 0);
	floe_avro_schema *s = parse(&a, MANIFEST_SCHEMA, &err);
	T_CHECK(s != NULL);
	if (!s) {
		printf("%s\n", err.msg);
		return;
	}
	T_EQ_INT(s->type, FLOE_AVRO_RECORD);
	T_EQ_STR(s->fullname, "manifest_entry");
	T_EQ_INT(s->n_fields, 3);
	const floe_avro_field *df = floe_avro_field_by_id(s, 2);
	T_CHECK(df && strcmp(df->name, "data_file") == 0);
	T_CHECK(floe_avro_field_by_name(s, "snapshot_id") == &s->fields[1]);
	T_CHECK(floe_avro_field_by_id(s, 12345) == NULL);
	T_EQ_INT(s->fields[1].default_value->type, FLOE_JSON_NULL);
	T_EQ_INT(s->fields[0].default_value == NULL, 1);
	const floe_avro_schema *r2 = df->type;
	const floe_avro_field *cs = floe_avro_field_by_id(r2, 108);
	T_CHECK(cs != NULL);
	T_EQ_STR(cs->doc, "Map of column id to total size on disk");
	const floe_avro_schema *arr = floe_avro_union_nonnull(cs->type);
	T_CHECK(arr && arr->type == FLOE_AVRO_ARRAY);
	T_EQ_STR(arr->logical_type, "map");
	T_EQ_INT(arr->element_id, FLOE_AVRO_ID_NONE);
	T_EQ_INT(floe_avro_field_by_name(arr->items, "value")->field_id, 118);
	T_EQ_INT(floe_avro_union_nonnull(floe_avro_field_by_id(r2, 132)->type)->element_id, 133);
	const floe_avro_field *m = floe_avro_field_by_id(r2, 6);
	T_EQ_INT(m->type->key_id, 7);
	T_EQ_INT(m->type->value_id, 8);
	T_EQ_STR(floe_avro_field_attr(m, "iceberg-field-name")->s, "m.x");
	T_EQ_INT(floe_avro_field_by_id(r2, 9)->type->adjust_to_utc, 1);
	const floe_avro_schema *dec = floe_avro_field_by_id(r2, 10)->type;
	T_EQ_INT(dec->precision, 9);
	T_EQ_INT(dec->scale, 2);
	T_EQ_INT(dec->size, 4);
	T_CHECK(floe_avro_field_by_id(r2, 11)->type == dec); /* reference = same node */
	const floe_avro_schema *part = floe_avro_field_by_id(r2, 102)->type;
	T_EQ_STR(floe_avro_union_nonnull(part->fields[0].type)->logical_type, "date");

	/* serialize: named type once, then by name; attributes kept, in order */
	const char *j = to_json(&b, s);
	T_CHECK(strstr(j, "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,"
			  "\"field-id\":1}") != NULL);
	T_CHECK(strstr(j, "{\"name\":\"column_sizes\",\"type\":[\"null\",{\"type\":\"array\","
			  "\"items\":{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":[") != NULL);
	T_CHECK(strstr(j, "\"doc\":\"Map of column id to total size on disk\",\"default\":null,"
			  "\"field-id\":108}") != NULL);
	T_CHECK(strstr(j, "{\"type\":\"array\",\"items\":\"long\",\"element-id\":133}") != NULL);
	T_CHECK(strstr(j, "{\"type\":\"map\",\"values\":\"bytes\",\"key-id\":7,\"value-id\":8}") !=
		NULL);
	T_CHECK(strstr(j, "\"field-id\":6,\"iceberg-field-name\":\"m.x\"}") != NULL);
	T_CHECK(strstr(j, "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
			  "\"adjust-to-utc\":true}") != NULL);
	T_CHECK(strstr(j, "{\"type\":\"fixed\",\"name\":\"decimal_9_2\",\"size\":4,\"logicalType\":"
			  "\"decimal\",\"precision\":9,\"scale\":2}") != NULL);
	T_CHECK(strstr(j, "{\"name\":\"dec2\",\"type\":\"decimal_9_2\",\"field-id\":11}") != NULL);
	/* and parses back to an equal tree, and serializes identically */
	floe_avro_schema *s2 = parse(&a, j, &err);
	T_CHECK(s2 && floe_avro_schema_equal(s, s2));
	floe_buf b2;
	floe_buf_init(&b2, 0);
	T_EQ_STR(to_json(&b2, s2), j);
	floe_buf_reset(&b2);
	floe_buf_reset(&b);
	floe_arena_reset(&a);
}

static void test_schema_names(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf b;
	floe_arena_init(&a, 0);
	floe_buf_init(&b, 0);
	/* namespaces: inherited, dotted names, references relative and full */
	floe_avro_schema *s = parse(&a,
				    "{\"type\":\"record\",\"name\":\"a.R\",\"fields\":["
				    "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":2}},"
				    "{\"name\":\"y\",\"type\":\"F\"},"
				    "{\"name\":\"z\",\"type\":\"a.F\"},"
				    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\","
				    "\"namespace\":\"b\",\"symbols\":[\"P\",\"Q\"],\"default\":\"Q\"}},"
				    "{\"name\":\"e2\",\"type\":\"b.E\"}]}",
				    &err);
	T_CHECK(s != NULL);
	if (s) {
		T_EQ_STR(s->space, "a");
		T_EQ_STR(s->fields[0].type->fullname, "a.F");
		T_CHECK(s->fields[1].type == s->fields[0].type);
		T_CHECK(s->fields[2].type == s->fields[0].type);
		T_CHECK(s->fields[4].type == s->fields[3].type);
		T_EQ_STR(s->fields[3].type->enum_default, "Q");
		const char *j = to_json(&b, s);
		floe_avro_schema *s2 = parse(&a, j, &err);
		T_CHECK(s2 && floe_avro_schema_equal(s, s2));
		T_CHECK(strstr(j, "\"namespace\":\"b\"") != NULL);
		T_CHECK(strstr(j, "\"type\":\"b.E\"") != NULL);
	}
	floe_buf_reset(&b);
	floe_arena_reset(&a);
}

static void schema_err(const char *json, int code, const char *needle)
{
	floe_arena a;
	floe_error err = {0};
	floe_avro_schema *s = NULL;
	floe_arena_init(&a, 0);
	int rc = floe_avro_schema_parse(&s, &a, json, strlen(json), NULL, &err);
	T_EQ_INT(rc, code);
	if (needle && !strstr(err.msg, needle))
		t_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", err.msg, needle);
	floe_arena_reset(&a);
}

static void test_schema_errors(void)
{
	schema_err("\"nope\"", FLOE_ECORRUPT, "unknown type 'nope'");
	schema_err("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
		   "{\"name\":\"a\",\"type\":\"long\"}]}",
		   FLOE_ECORRUPT, "duplicate field name 'a'");
	schema_err("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":"
		   "{\"type\":\"fixed\",\"name\":\"R\",\"size\":1}}]}",
		   FLOE_ECORRUPT, "defined twice");
	schema_err("{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":\"next\",\"type\":"
		   "[\"null\",\"L\"]}]}",
		   FLOE_EUNSUPPORTED, "recursive");
	schema_err("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"int\","
		   "\"field-id\":\"7\"}]}",
		   FLOE_ECORRUPT, "field 'a': 'field-id' must be an integer");
	schema_err("[\"int\",[\"null\"]]", FLOE_ECORRUPT, "unions may not contain unions");
	schema_err("[\"int\",\"int\"]", FLOE_ECORRUPT, "two branches");
	schema_err("{\"type\":\"fixed\",\"name\":\"F\",\"size\":-1}", FLOE_ECORRUPT, "size");
	schema_err("{\"type\":\"record\",\"name\":\"int\",\"fields\":[]}", FLOE_ECORRUPT, NULL);
	schema_err("{\"type\":\"array\"}", FLOE_ECORRUPT, "items");
	schema_err("{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"A\"]}", FLOE_ECORRUPT,
		   "duplicate enum symbol");
	schema_err("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":"
		   "{\"type\":\"record\",\"name\":\"S\",\"fields\":[{\"name\":\"b\",\"type\":\"x\"}]}}]}",
		   FLOE_ECORRUPT, "record 'R': field 'a': record 'S': field 'b': unknown type 'x'");
	schema_err("42", FLOE_ECORRUPT, NULL);
	schema_err("{\"type\":", FLOE_ECORRUPT, NULL);
	/* depth: 100 nested arrays exceed the JSON depth limit */
	{
		char deep[4096];
		size_t n = 0;
		for (int i = 0; i < 100; i++)
			n += (size_t)snprintf(deep + n, sizeof(deep) - n, "{\"type\":\"array\",\"items\":");
		n += (size_t)snprintf(deep + n, sizeof(deep) - n, "\"int\"");
		for (int i = 0; i < 100; i++)
			deep[n++] = '}';
		deep[n] = 0;
		schema_err(deep, FLOE_ECORRUPT, NULL);
	}
	/* node limit */
	{
		floe_arena a;
		floe_error err = {0};
		floe_avro_schema *s;
		floe_avro_schema_limits lim = {0, 3, 0};
		const char *j = "[\"int\",\"long\",\"string\",\"bytes\"]";
		floe_arena_init(&a, 0);
		T_ERR(floe_avro_schema_parse(&s, &a, j, strlen(j), &lim, &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "nodes") != NULL);
		floe_arena_reset(&a);
	}
}

/* The builder makes the same JSON Java writes (iceberg-notes 2.4). */
static void test_schema_builder(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf b;
	floe_arena_init(&a, 0);
	floe_buf_init(&b, 0);
	floe_avro_schema *root = floe_avro_new_record(&a, "manifest_entry", NULL);
	floe_avro_field *f = floe_avro_record_add(&a, root, "status",
						  floe_avro_new_primitive(&a, FLOE_AVRO_INT));
	T_CHECK(f != NULL);
	f->field_id = 0;
	f = floe_avro_record_add(&a, root, "snapshot_id",
				 floe_avro_new_optional(&a, floe_avro_new_primitive(&a, FLOE_AVRO_LONG)));
	f->field_id = 1;
	T_EQ_INT(floe_avro_field_set_default_null(&a, f), 0);
	floe_avro_schema *r2 = floe_avro_new_record(&a, "r2", NULL);
	floe_avro_schema *r102 = floe_avro_new_record(&a, "r102", NULL);
	f = floe_avro_record_add(&a, r2, "partition", r102); /* zero fields: unpartitioned */
	f->field_id = 102;
	T_EQ_INT(floe_avro_field_set_doc(&a, f, "Partition data tuple"), 0);
	floe_avro_schema *kv = floe_avro_new_record(&a, "k117_v118", NULL);
	floe_avro_record_add(&a, kv, "key", floe_avro_new_primitive(&a, FLOE_AVRO_INT))->field_id = 117;
	floe_avro_record_add(&a, kv, "value", floe_avro_new_primitive(&a, FLOE_AVRO_LONG))->field_id =
		118;
	floe_avro_schema *arr = floe_avro_new_array(&a, kv);
	T_EQ_INT(floe_avro_schema_set_logical(&a, arr, "map"), 0);
	f = floe_avro_record_add(&a, r2, "column_sizes", floe_avro_new_optional(&a, arr));
	f->field_id = 108;
	T_EQ_INT(floe_avro_field_set_default_null(&a, f), 0);
	floe_avro_schema *d1 = floe_avro_new_decimal_fixed(&a, "decimal_9_2", 4, 9, 2);
	floe_avro_schema *d2 = floe_avro_new_decimal_fixed(&a, "decimal_9_2", 4, 9, 2);
	floe_avro_record_add(&a, r2, "d1", d1)->field_id = 3;
	floe_avro_record_add(&a, r2, "d2", d2)->field_id = 4;
	f = floe_avro_record_add(&a, root, "data_file", r2);
	f->field_id = 2;
	T_OK(floe_avro_schema_finish(root, &err), &err);
	T_EQ_STR(to_json(&b, root),
		 "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
		 "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
		 "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
		 "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
		 "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[]},"
		 "\"doc\":\"Partition data tuple\",\"field-id\":102},"
		 "{\"name\":\"column_sizes\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"
		 "{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":["
		 "{\"name\":\"key\",\"type\":\"int\",\"field-id\":117},"
		 "{\"name\":\"value\",\"type\":\"long\",\"field-id\":118}]},\"logicalType\":\"map\"}],"
		 "\"default\":null,\"field-id\":108},"
		 "{\"name\":\"d1\",\"type\":{\"type\":\"fixed\",\"name\":\"decimal_9_2\",\"size\":4,"
		 "\"logicalType\":\"decimal\",\"precision\":9,\"scale\":2},\"field-id\":3},"
		 "{\"name\":\"d2\",\"type\":\"decimal_9_2\",\"field-id\":4}]},\"field-id\":2}]}");

	/* finish rejects what a writer must not emit */
	floe_avro_schema *bad = floe_avro_new_record(&a, "bad-name", NULL);
	T_ERR(floe_avro_schema_finish(bad, &err), FLOE_EINVAL);
	floe_avro_schema *r = floe_avro_new_record(&a, "R", NULL);
	f = floe_avro_record_add(&a, r, "x", floe_avro_new_primitive(&a, FLOE_AVRO_INT));
	T_EQ_INT(floe_avro_field_set_default_json(&a, f, "\"str\""), 0);
	T_ERR(floe_avro_schema_finish(r, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "default") != NULL);
	floe_avro_schema *r3 = floe_avro_new_record(&a, "R3", NULL);
	floe_avro_record_add(&a, r3, "a", floe_avro_new_fixed(&a, "F", 2));
	floe_avro_record_add(&a, r3, "b", floe_avro_new_fixed(&a, "F", 3));
	T_ERR(floe_avro_schema_finish(r3, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "two different types are named 'F'") != NULL);
	/* a failed constructor surfaces at finish */
	floe_avro_schema *r4 = floe_avro_new_record(&a, "R4", NULL);
	T_CHECK(floe_avro_record_add(&a, r4, "a", NULL) == NULL);
	T_ERR(floe_avro_schema_finish(r4, &err), FLOE_ENOMEM);
	floe_buf_reset(&b);
	floe_arena_reset(&a);
}

/* ---- writer / reader round trips ---------------------------------------------------------- */

static const char ALL_TYPES[] =
	"{\"type\":\"record\",\"name\":\"all\",\"namespace\":\"t\",\"fields\":["
	"{\"name\":\"n\",\"type\":\"null\"},"
	"{\"name\":\"b\",\"type\":\"boolean\"},"
	"{\"name\":\"i\",\"type\":\"int\"},"
	"{\"name\":\"l\",\"type\":\"long\"},"
	"{\"name\":\"f\",\"type\":\"float\"},"
	"{\"name\":\"d\",\"type\":\"double\"},"
	"{\"name\":\"by\",\"type\":\"bytes\"},"
	"{\"name\":\"s\",\"type\":\"string\"},"
	"{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\",\"C\"]}},"
	"{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"F3\",\"size\":3}},"
	"{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":\"long\",\"element-id\":5}},"
	"{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":[\"null\",\"string\"]}},"
	"{\"name\":\"u\",\"type\":[\"null\",\"int\",\"string\",\"E\"]},"
	"{\"name\":\"rec\",\"type\":{\"type\":\"record\",\"name\":\"Inner\",\"fields\":["
	"{\"name\":\"x\",\"type\":\"int\"}]}},"
	"{\"name\":\"empty\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[]}}"
	"]}";

#define N_ALL 15

/* Build record k of the ALL_TYPES schema. */
static void make_all(floe_arena *a, floe_avro_value *v, int k)
{
	floe_avro_value *f = floe_arena_calloc(a, N_ALL, sizeof(*f));
	char *s = floe_arena_sprintf(a, "str-%d-\xc3\xa9", k);
	v->type = FLOE_AVRO_RECORD;
	v->branch = -1;
	v->u.list.items = f;
	v->u.list.n = N_ALL;
	for (int i = 0; i < N_ALL; i++)
		f[i].branch = -1;
	f[0].type = FLOE_AVRO_NULL;
	f[1].type = FLOE_AVRO_BOOLEAN;
	f[1].u.b = k % 2;
	f[2].type = FLOE_AVRO_INT;
	f[2].u.i = k % 3 == 0 ? INT32_MIN + k : -k * 1000;
	f[3].type = FLOE_AVRO_LONG;
	f[3].u.l = k % 5 == 0 ? INT64_MAX - k : (int64_t)k * -123456789012LL;
	f[4].type = FLOE_AVRO_FLOAT;
	f[4].u.f = k == 3 ? NAN : (float)k / 8.0f;
	f[5].type = FLOE_AVRO_DOUBLE;
	f[5].u.d = k == 4 ? -INFINITY : k * 1.0e300 / 7;
	f[6].type = FLOE_AVRO_BYTES;
	f[6].u.bytes.p = (const uint8_t *)"\x00\xff\x10";
	f[6].u.bytes.len = (size_t)(k % 4);
	f[7].type = FLOE_AVRO_STRING;
	f[7].u.bytes.p = (const uint8_t *)s;
	f[7].u.bytes.len = strlen(s);
	f[8].type = FLOE_AVRO_ENUM;
	f[8].u.i = k % 3;
	f[9].type = FLOE_AVRO_FIXED;
	f[9].u.bytes.p = (const uint8_t *)"xyz";
	f[9].u.bytes.len = 3;
	f[10].type = FLOE_AVRO_ARRAY;
	f[10].u.list.n = (size_t)(k % 4);
	f[10].u.list.items = floe_arena_calloc(a, 4, sizeof(floe_avro_value));
	for (size_t i = 0; i < 4; i++) {
		f[10].u.list.items[i].type = FLOE_AVRO_LONG;
		f[10].u.list.items[i].branch = -1;
		f[10].u.list.items[i].u.l = (int64_t)i * k;
	}
	f[11].type = FLOE_AVRO_MAP;
	f[11].u.map.n = (size_t)(k % 3);
	f[11].u.map.entries = floe_arena_calloc(a, 2, sizeof(floe_avro_map_entry));
	for (size_t i = 0; i < 2; i++) {
		floe_avro_map_entry *e = &f[11].u.map.entries[i];
		e->key = (const uint8_t *)(i ? "k2" : "k1");
		e->key_len = 2;
		e->value.type = i ? FLOE_AVRO_NULL : FLOE_AVRO_STRING;
		e->value.branch = i ? 0 : 1;
		e->value.u.bytes.p = (const uint8_t *)"v";
		e->value.u.bytes.len = 1;
	}
	switch (k % 4) {
	case 0: f[12].type = FLOE_AVRO_NULL; break;
	case 1:
		f[12].type = FLOE_AVRO_INT;
		f[12].u.i = k;
		break;
	case 2:
		f[12].type = FLOE_AVRO_STRING;
		f[12].u.bytes.p = (const uint8_t *)"u";
		f[12].u.bytes.len = 1;
		break;
	default:
		f[12].type = FLOE_AVRO_ENUM;
		f[12].u.i = 2;
		break;
	}
	f[13].type = FLOE_AVRO_RECORD;
	f[13].u.list.n = 1;
	f[13].u.list.items = floe_arena_calloc(a, 1, sizeof(floe_avro_value));
	f[13].u.list.items[0].type = FLOE_AVRO_INT;
	f[13].u.list.items[0].branch = -1;
	f[13].u.list.items[0].u.i = k;
	f[14].type = FLOE_AVRO_RECORD;
	f[14].u.list.n = 0;
}

static bool value_eq(const floe_avro_value *x, const floe_avro_value *y)
{
	if (x->type != y->type)
		return false;
	switch (x->type) {
	case FLOE_AVRO_NULL: return true;
	case FLOE_AVRO_BOOLEAN: return x->u.b == y->u.b;
	case FLOE_AVRO_INT:
	case FLOE_AVRO_ENUM: return x->u.i == y->u.i;
	case FLOE_AVRO_LONG: return x->u.l == y->u.l;
	case FLOE_AVRO_FLOAT: return memcmp(&x->u.f, &y->u.f, 4) == 0;
	case FLOE_AVRO_DOUBLE: return memcmp(&x->u.d, &y->u.d, 8) == 0;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_STRING:
	case FLOE_AVRO_FIXED:
		return x->u.bytes.len == y->u.bytes.len &&
		       (x->u.bytes.len == 0 || memcmp(x->u.bytes.p, y->u.bytes.p, x->u.bytes.len) == 0);
	case FLOE_AVRO_RECORD:
	case FLOE_AVRO_ARRAY:
		if (x->u.list.n != y->u.list.n)
			return false;
		for (size_t i = 0; i < x->u.list.n; i++)
			if (!value_eq(&x->u.list.items[i], &y->u.list.items[i]))
				return false;
		return true;
	case FLOE_AVRO_MAP:
		if (x->u.map.n != y->u.map.n)
			return false;
		for (size_t i = 0; i < x->u.map.n; i++)
			if (x->u.map.entries[i].key_len != y->u.map.entries[i].key_len ||
			    memcmp(x->u.map.entries[i].key, y->u.map.entries[i].key,
				   x->u.map.entries[i].key_len) != 0 ||
			    !value_eq(&x->u.map.entries[i].value, &y->u.map.entries[i].value))
				return false;
		return true;
	default: return false;
	}
}

static int write_file(floe_buf *file, const floe_avro_schema *s, const char *codec,
		      size_t block_bytes, int n, uint64_t *size, floe_error *err)
{
	floe_avro_writer_opts o = FLOE_AVRO_WRITER_OPTS_INIT;
	floe_avro_writer *w = NULL;
	floe_output *out = floe_output_buffer(file, "mem.avro");
	floe_arena a;
	int rc;
	o.codec = codec;
	o.block_bytes = block_bytes;
	if ((rc = floe_avro_writer_open(&w, out, s, &o, err))) {
		floe_output_abort(out);
		return rc;
	}
	if ((rc = floe_avro_writer_meta_str(w, "format-version", "2", err)) ||
	    (rc = floe_avro_writer_meta(w, "bin", "\x00\x01", 2, err))) {
		floe_avro_writer_abort(w);
		return rc;
	}
	floe_arena_init(&a, 0);
	for (int k = 0; k < n; k++) {
		floe_avro_value v;
		make_all(&a, &v, k);
		if ((rc = floe_avro_writer_append(w, &v, err))) {
			floe_avro_writer_abort(w);
			floe_arena_reset(&a);
			return rc;
		}
		if (k % 64 == 63)
			floe_arena_reset(&a);
	}
	floe_arena_reset(&a);
	return floe_avro_writer_close(w, size, err);
}

static void test_roundtrip_codecs(void)
{
	static const char *codecs[] = {"null", "deflate", "snappy", "zstandard"};
	floe_arena a;
	floe_error err = {0};
	floe_arena_init(&a, 0);
	floe_avro_schema *s = parse(&a, ALL_TYPES, &err);
	T_CHECK(s != NULL);
	for (size_t ci = 0; s && ci < 4; ci++) {
		for (int small = 0; small < 2; small++) {
			floe_buf file;
			uint64_t size = 0;
			int n = small ? 500 : 37;
			floe_buf_init(&file, 0);
			T_OK(write_file(&file, s, codecs[ci], small ? 200 : 0, n, &size, &err), &err);
			T_EQ_INT(size, file.len);
			floe_input *in = floe_input_memory(file.data, file.len, "mem.avro");
			floe_avro_reader *r = NULL;
			T_OK(floe_avro_reader_open(&r, in, NULL, &err), &err);
			if (r) {
				size_t len;
				T_EQ_STR(floe_avro_reader_codec(r), codecs[ci]);
				T_EQ_STR(floe_avro_reader_meta(r, "format-version", NULL), "2");
				T_CHECK(floe_avro_reader_meta(r, "bin", &len) && len == 2);
				T_CHECK(floe_avro_schema_equal(floe_avro_reader_schema(r), s));
				floe_arena va;
				floe_arena_init(&va, 0);
				int k = 0;
				for (;; k++) {
					floe_avro_value got, want;
					bool eof;
					int rc = floe_avro_reader_next(&got, &eof, r, &err);
					T_OK(rc, &err);
					if (rc || eof)
						break;
					make_all(&va, &want, k);
					if (!value_eq(&got, &want)) {
						t_fail(__FILE__, __LINE__, "%s record %d differs",
						       codecs[ci], k);
						break;
					}
				}
				T_EQ_INT(k, n);
				floe_arena_reset(&va);
			}
			floe_avro_reader_free(r);
			floe_input_close(in);
			floe_buf_reset(&file);
		}
	}
	floe_arena_reset(&a);
}

/* Zero records: a header-only file; zero-field records (Iceberg's
 * unpartitioned partition struct) round-trip too. */
static void test_empty(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf file;
	uint64_t size = 0;
	floe_arena_init(&a, 0);
	floe_buf_init(&file, 0);
	floe_avro_schema *s = parse(&a, "{\"type\":\"record\",\"name\":\"r102\",\"fields\":[]}", &err);
	floe_avro_writer *w = NULL;
	floe_output *out = floe_output_buffer(&file, "e.avro");
	T_OK(floe_avro_writer_open(&w, out, s, NULL, &err), &err);
	T_OK(floe_avro_writer_close(w, &size, &err), &err);
	T_EQ_INT(size, file.len);
	T_CHECK(file.len > 20 && memcmp(file.data, "Obj\x01", 4) == 0);
	floe_input *in = floe_input_memory(file.data, file.len, "e.avro");
	floe_avro_reader *r = NULL;
	floe_avro_value v;
	bool eof = false;
	T_OK(floe_avro_reader_open(&r, in, NULL, &err), &err);
	T_OK(floe_avro_reader_next(&v, &eof, r, &err), &err);
	T_CHECK(eof);
	floe_avro_reader_free(r);
	floe_input_close(in);

	/* 1000 zero-field records: blocks of 0 bytes with a count */
	floe_buf_clear(&file);
	out = floe_output_buffer(&file, "z.avro");
	floe_avro_writer_opts o = FLOE_AVRO_WRITER_OPTS_INIT;
	o.block_records = 300;
	o.codec = "snappy";
	T_OK(floe_avro_writer_open(&w, out, s, &o, &err), &err);
	floe_avro_value rec = {FLOE_AVRO_RECORD, -1, {0}};
	for (int i = 0; i < 1000; i++)
		T_OK(floe_avro_writer_append(w, &rec, &err), &err);
	T_EQ_INT(floe_avro_writer_records(w), 1000);
	T_OK(floe_avro_writer_close(w, &size, &err), &err);
	in = floe_input_memory(file.data, file.len, "z.avro");
	T_OK(floe_avro_reader_open(&r, in, NULL, &err), &err);
	int n = 0;
	for (;;) {
		int rc = floe_avro_reader_next(&v, &eof, r, &err);
		T_OK(rc, &err);
		if (rc || eof)
			break;
		T_EQ_INT(v.type, FLOE_AVRO_RECORD);
		T_EQ_INT(v.u.list.n, 0);
		n++;
	}
	T_EQ_INT(n, 1000);
	floe_avro_reader_free(r);
	floe_input_close(in);
	floe_buf_reset(&file);
	floe_arena_reset(&a);
}

/* The fast path: encode with the helpers between begin and commit. */
static void test_writer_fast_path(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf file;
	floe_arena_init(&a, 0);
	floe_buf_init(&file, 0);
	floe_avro_schema *s = parse(&a,
				    "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
				    "{\"name\":\"id\",\"type\":\"long\"},"
				    "{\"name\":\"p\",\"type\":[\"null\",\"string\"]}]}",
				    &err);
	floe_avro_writer *w = NULL;
	floe_avro_writer_opts o = FLOE_AVRO_WRITER_OPTS_INIT;
	uint8_t sync[16];
	memset(sync, 0xab, 16);
	o.sync = sync;
	o.codec = "null";
	T_OK(floe_avro_writer_open(&w, floe_output_buffer(&file, "f.avro"), s, &o, &err), &err);
	T_ERR(floe_avro_writer_meta_str(w, "avro.codec", "x", &err), FLOE_EINVAL);
	for (int i = 0; i < 3; i++) {
		floe_buf *b = floe_avro_writer_begin(w);
		T_EQ_INT(floe_avro_enc_long(b, i), 0);
		if (i == 1) {
			T_EQ_INT(floe_avro_enc_union(b, 0), 0);
		} else {
			T_EQ_INT(floe_avro_enc_union(b, 1) || floe_avro_enc_string(b, "ab", 2), 0);
		}
		if (i == 2) {
			floe_avro_writer_rollback(w);
			continue;
		}
		T_OK(floe_avro_writer_commit(w, &err), &err);
	}
	uint64_t size;
	T_OK(floe_avro_writer_close(w, &size, &err), &err);
	/* the single block: count 2, size 7, 00 02 04 61 62 | 02 00, then the sync */
	T_CHECK(file.len > 16 + 9);
	T_EQ_MEM(file.data + file.len - 16 - 9, "\x04\x0e\x00\x02\x04" "ab" "\x02\x00", 9);
	T_EQ_MEM(file.data + file.len - 16, sync, 16);
	floe_buf_reset(&file);
	floe_arena_reset(&a);
}

/* ---- resolution ------------------------------------------------------------------------------ */

/* Decoders of resolve_one live until free_decoders(): values filled from
 * defaults point into the decoder's memory. */
static floe_avro_decoder *decoders[64];
static int n_decoders;

static void free_decoders(void)
{
	while (n_decoders > 0)
		floe_avro_decoder_free(decoders[--n_decoders]);
}

/* Encode v with writer schema wj, decode with reader schema rj. */
static int resolve_one(const char *wj, const char *rj, const floe_avro_value *v,
		       floe_avro_value *out, floe_arena *a, floe_buf *enc, floe_error *err)
{
	floe_avro_schema *w = parse(a, wj, err), *r = parse(a, rj, err);
	floe_avro_decoder *d = NULL;
	floe_cursor c;
	int rc;
	if (!w || !r)
		return FLOE_EINVAL;
	floe_buf_clear(enc);
	if ((rc = floe_avro_encode_value(enc, w, v, err)))
		return rc;
	if ((rc = floe_avro_decoder_new(&d, r, w, NULL, err)))
		return rc;
	floe_cursor_init(&c, enc->data, enc->len);
	rc = floe_avro_decode(out, d, &c, a, err);
	if (!rc && floe_cursor_left(&c) != 0)
		rc = FLOE_ECORRUPT;
	if (n_decoders == 64)
		free_decoders();
	decoders[n_decoders++] = d;
	return rc;
}

static void test_resolution_promotion(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf enc;
	floe_avro_value v = {FLOE_AVRO_INT, -1, {0}}, out;
	floe_arena_init(&a, 0);
	floe_buf_init(&enc, 0);
	v.u.i = -7;
	T_OK(resolve_one("\"int\"", "\"long\"", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_LONG && out.u.l == -7);
	T_OK(resolve_one("\"int\"", "\"float\"", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_FLOAT && out.u.f == -7.0f);
	T_OK(resolve_one("\"int\"", "\"double\"", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_DOUBLE && out.u.d == -7.0);
	v.type = FLOE_AVRO_LONG;
	v.u.l = 1LL << 40;
	T_OK(resolve_one("\"long\"", "\"double\"", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_DOUBLE && out.u.d == (double)(1LL << 40));
	T_OK(resolve_one("\"long\"", "\"float\"", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_FLOAT);
	v.type = FLOE_AVRO_FLOAT;
	v.u.f = 0.5f;
	T_OK(resolve_one("\"float\"", "\"double\"", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_DOUBLE && out.u.d == 0.5);
	v.type = FLOE_AVRO_STRING;
	v.u.bytes.p = (const uint8_t *)"hi";
	v.u.bytes.len = 2;
	T_OK(resolve_one("\"string\"", "\"bytes\"", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_BYTES && out.u.bytes.len == 2);
	v.type = FLOE_AVRO_BYTES;
	T_OK(resolve_one("\"bytes\"", "\"string\"", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_STRING && out.u.bytes.len == 2);
	/* not promotable */
	v.type = FLOE_AVRO_LONG;
	T_ERR(resolve_one("\"long\"", "\"int\"", &v, &out, &a, &enc, &err), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "cannot read writer type long as int") != NULL);
	v.type = FLOE_AVRO_DOUBLE;
	T_ERR(resolve_one("\"double\"", "\"float\"", &v, &out, &a, &enc, &err), FLOE_ECORRUPT);
	/* invalid UTF-8 read as a string */
	v.type = FLOE_AVRO_BYTES;
	v.u.bytes.p = (const uint8_t *)"\xff";
	v.u.bytes.len = 1;
	T_ERR(resolve_one("\"bytes\"", "\"string\"", &v, &out, &a, &enc, &err), FLOE_ECORRUPT);
	/* arrays and maps resolve their items */
	floe_avro_value items[2] = {{FLOE_AVRO_INT, -1, {.i = 1}}, {FLOE_AVRO_INT, -1, {.i = 2}}};
	v.type = FLOE_AVRO_ARRAY;
	v.u.list.items = items;
	v.u.list.n = 2;
	T_OK(resolve_one("{\"type\":\"array\",\"items\":\"int\"}",
			 "{\"type\":\"array\",\"items\":\"long\"}", &v, &out, &a, &enc, &err),
	     &err);
	T_CHECK(out.u.list.n == 2 && out.u.list.items[1].type == FLOE_AVRO_LONG &&
		out.u.list.items[1].u.l == 2);
	floe_buf_reset(&enc);
	floe_arena_reset(&a);
}

static void test_resolution_unions(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf enc;
	floe_avro_value v = {FLOE_AVRO_INT, -1, {.i = 5}}, out;
	floe_arena_init(&a, 0);
	floe_buf_init(&enc, 0);
	/* writer non-union, reader ["null", T]: branch 1, with promotion */
	T_OK(resolve_one("\"int\"", "[\"null\",\"long\"]", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_LONG && out.u.l == 5 && out.branch == 1);
	/* writer ["null", T], reader T: works for values, fails for null */
	T_OK(resolve_one("[\"null\",\"int\"]", "\"int\"", &v, &out, &a, &enc, &err), &err);
	T_CHECK(out.type == FLOE_AVRO_INT && out.u.i == 5 && out.branch == -1);
	floe_avro_value nul = {FLOE_AVRO_NULL, -1, {0}};
	T_ERR(resolve_one("[\"null\",\"int\"]", "\"int\"", &nul, &out, &a, &enc, &err),
	      FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "cannot read writer type null as int") != NULL);
	/* both unions, different order */
	T_OK(resolve_one("[\"null\",\"int\"]", "[\"long\",\"null\"]", &v, &out, &a, &enc, &err),
	     &err);
	T_CHECK(out.type == FLOE_AVRO_LONG && out.branch == 0);
	T_OK(resolve_one("[\"null\",\"int\"]", "[\"long\",\"null\"]", &nul, &out, &a, &enc, &err),
	     &err);
	T_CHECK(out.type == FLOE_AVRO_NULL && out.branch == 1);
	/* no branch at all can be read */
	T_ERR(resolve_one("[\"null\",\"string\"]", "\"int\"", &nul, &out, &a, &enc, &err),
	      FLOE_ECORRUPT);
	/* enums by symbol; unknown symbols take the reader default */
	floe_avro_value e = {FLOE_AVRO_ENUM, -1, {.i = 2}};
	T_OK(resolve_one("{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\",\"C\"]}",
			 "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"C\",\"A\"]}", &e, &out, &a,
			 &enc, &err),
	     &err);
	T_CHECK(out.type == FLOE_AVRO_ENUM && out.u.i == 0);
	e.u.i = 1;
	T_ERR(resolve_one("{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\",\"C\"]}",
			  "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"C\",\"A\"]}", &e, &out, &a,
			  &enc, &err),
	      FLOE_ECORRUPT);
	T_OK(resolve_one("{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\",\"C\"]}",
			 "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"C\",\"A\",\"Z\"],"
			 "\"default\":\"Z\"}",
			 &e, &out, &a, &enc, &err),
	     &err);
	T_CHECK(out.u.i == 2);
	/* fixed sizes must agree */
	floe_avro_value fx = {FLOE_AVRO_FIXED, -1, {.bytes = {(const uint8_t *)"ab", 2}}};
	T_ERR(resolve_one("{\"type\":\"fixed\",\"name\":\"F\",\"size\":2}",
			  "{\"type\":\"fixed\",\"name\":\"F\",\"size\":3}", &fx, &out, &a, &enc, &err),
	      FLOE_ECORRUPT);
	floe_buf_reset(&enc);
	floe_arena_reset(&a);
}

static void test_resolution_records(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf enc;
	floe_arena_init(&a, 0);
	floe_buf_init(&enc, 0);
	/* writer: a(1) int, b(2) string, c(3) long; reader renames b, drops a, adds
	 * d with a default and optional e without one, and promotes c */
	const char *wj = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
			 "{\"name\":\"a\",\"type\":\"int\",\"field-id\":1},"
			 "{\"name\":\"b\",\"type\":\"string\",\"field-id\":2},"
			 "{\"name\":\"c\",\"type\":\"int\",\"field-id\":3}]}";
	const char *rj = "{\"type\":\"record\",\"name\":\"other\",\"fields\":["
			 "{\"name\":\"c\",\"type\":\"double\",\"field-id\":3},"
			 "{\"name\":\"renamed\",\"type\":\"string\",\"field-id\":2},"
			 "{\"name\":\"d\",\"type\":\"long\",\"default\":42,\"field-id\":4},"
			 "{\"name\":\"e\",\"type\":[\"null\",\"bytes\"],\"field-id\":5},"
			 "{\"name\":\"a\",\"type\":[\"null\",\"int\"],\"field-id\":99}]}";
	floe_avro_value f[3] = {{FLOE_AVRO_INT, -1, {.i = 1}},
				{FLOE_AVRO_STRING, -1, {.bytes = {(const uint8_t *)"bee", 3}}},
				{FLOE_AVRO_INT, -1, {.i = 3}}};
	floe_avro_value v = {FLOE_AVRO_RECORD, -1, {.list = {f, 3}}}, out;
	T_OK(resolve_one(wj, rj, &v, &out, &a, &enc, &err), &err);
	T_EQ_INT(out.u.list.n, 5);
	if (out.u.list.n == 5) {
		const floe_avro_value *o = out.u.list.items;
		T_CHECK(o[0].type == FLOE_AVRO_DOUBLE && o[0].u.d == 3.0);
		T_CHECK(o[1].type == FLOE_AVRO_STRING && o[1].u.bytes.len == 3);
		T_CHECK(o[2].type == FLOE_AVRO_LONG && o[2].u.l == 42);
		T_CHECK(o[3].type == FLOE_AVRO_NULL && o[3].branch == 0);
		/* same name "a" but a different field-id: not the same column */
		T_CHECK(o[4].type == FLOE_AVRO_NULL);
	}
	/* by name when the writer has no ids (and by alias) */
	const char *wn = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
			 "{\"name\":\"x\",\"type\":\"int\"},{\"name\":\"old\",\"type\":\"int\"}]}";
	const char *rn = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
			 "{\"name\":\"new\",\"type\":\"int\",\"aliases\":[\"old\"],\"field-id\":8},"
			 "{\"name\":\"x\",\"type\":\"long\",\"field-id\":7}]}";
	floe_avro_value g[2] = {{FLOE_AVRO_INT, -1, {.i = 10}}, {FLOE_AVRO_INT, -1, {.i = 20}}};
	floe_avro_value v2 = {FLOE_AVRO_RECORD, -1, {.list = {g, 2}}};
	T_OK(resolve_one(wn, rn, &v2, &out, &a, &enc, &err), &err);
	T_CHECK(out.u.list.n == 2 && out.u.list.items[0].u.i == 20 &&
		out.u.list.items[1].u.l == 10);
	/* a required reader field the writer lacks, without default */
	const char *rr = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
			 "{\"name\":\"zz\",\"type\":\"int\",\"field-id\":77}]}";
	T_ERR(resolve_one(wj, rr, &v, &out, &a, &enc, &err), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "required field 'zz' (field-id 77)") != NULL);
	/* defaults of every kind */
	const char *rd = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
			 "{\"name\":\"s\",\"type\":\"string\",\"default\":\"dflt\"},"
			 "{\"name\":\"by\",\"type\":\"bytes\",\"default\":\"\\u00ff\\u0001\"},"
			 "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"F2\",\"size\":2},"
			 "\"default\":\"ab\"},"
			 "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":\"int\"},"
			 "\"default\":[1,2,3]},"
			 "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"double\"},"
			 "\"default\":{\"k\":1.5}},"
			 "{\"name\":\"u\",\"type\":[\"null\",\"int\"],\"default\":null},"
			 "{\"name\":\"r\",\"type\":{\"type\":\"record\",\"name\":\"S\",\"fields\":["
			 "{\"name\":\"q\",\"type\":\"boolean\"}]},\"default\":{\"q\":true}},"
			 "{\"name\":\"nan\",\"type\":\"double\",\"default\":\"NaN\"}]}";
	T_OK(resolve_one(wj, rd, &v, &out, &a, &enc, &err), &err);
	if (out.u.list.n == 8) {
		const floe_avro_value *o = out.u.list.items;
		T_CHECK(o[0].u.bytes.len == 4 && memcmp(o[0].u.bytes.p, "dflt", 4) == 0);
		T_CHECK(o[1].u.bytes.len == 2 && o[1].u.bytes.p[0] == 0xff);
		T_CHECK(o[2].type == FLOE_AVRO_FIXED && o[2].u.bytes.len == 2);
		T_CHECK(o[3].u.list.n == 3 && o[3].u.list.items[2].u.i == 3);
		T_CHECK(o[4].u.map.n == 1 && o[4].u.map.entries[0].value.u.d == 1.5);
		T_CHECK(o[5].type == FLOE_AVRO_NULL && o[5].branch == 0);
		T_CHECK(o[6].type == FLOE_AVRO_RECORD && o[6].u.list.items[0].u.b);
		T_CHECK(isnan(o[7].u.d));
	}
	/* a default that does not match its type fails when it is needed */
	const char *rb = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
			 "{\"name\":\"zz\",\"type\":\"int\",\"default\":\"x\"}]}";
	T_ERR(resolve_one(wj, rb, &v, &out, &a, &enc, &err), FLOE_EINVAL);
	free_decoders();
	floe_buf_reset(&enc);
	floe_arena_reset(&a);
}

/* ---- corruption -------------------------------------------------------------------------------- */

static int read_all(const uint8_t *p, size_t n, int64_t *records, floe_error *err)
{
	floe_input *in = floe_input_memory(p, n, "c.avro");
	floe_avro_reader *r = NULL;
	int rc;
	*records = 0;
	if ((rc = floe_avro_reader_open(&r, in, NULL, err)) == 0) {
		for (;;) {
			floe_avro_value v;
			bool eof;
			if ((rc = floe_avro_reader_next(&v, &eof, r, err)) || eof)
				break;
			(*records)++;
		}
	}
	floe_avro_reader_free(r);
	floe_input_close(in);
	return rc;
}

static void test_corruption(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf file;
	uint64_t size;
	int64_t n;
	floe_arena_init(&a, 0);
	floe_buf_init(&file, 0);
	floe_avro_schema *s = parse(&a, ALL_TYPES, &err);
	T_OK(write_file(&file, s, "snappy", 300, 40, &size, &err), &err);
	T_OK(read_all(file.data, file.len, &n, &err), &err);
	T_EQ_INT(n, 40);
	/* every truncation: an error (never a crash), or fewer records when the
	 * cut falls on a block boundary */
	int ok_cuts = 0;
	for (size_t cut = 0; cut < file.len; cut++) {
		int rc = read_all(file.data, cut, &n, &err);
		if (rc == 0) {
			ok_cuts++;
			T_CHECK(n < 40);
		} else if (rc != FLOE_ECORRUPT) {
			t_fail(__FILE__, __LINE__, "cut %zu: %s %s", cut, floe_strerror(rc), err.msg);
		}
	}
	T_CHECK(ok_cuts >= 2);
	/* flip every byte in turn: errors are ECORRUPT (or the flip was harmless) */
	uint8_t *copy = malloc(file.len);
	for (size_t i = 0; i < file.len; i++) {
		memcpy(copy, file.data, file.len);
		copy[i] ^= 0x5a;
		int rc = read_all(copy, file.len, &n, &err);
		if (rc != 0 && rc != FLOE_ECORRUPT)
			t_fail(__FILE__, __LINE__, "flip %zu: %s %s", i, floe_strerror(rc), err.msg);
	}
	/* a bad sync marker at the end of the first block */
	memcpy(copy, file.data, file.len);
	copy[file.len - 1] ^= 1;
	T_ERR(read_all(copy, file.len, &n, &err), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "c.avro: block") && strstr(err.msg, "sync marker"));
	/* the snappy CRC */
	{
		floe_input *in = floe_input_memory(file.data, file.len, "c.avro");
		floe_avro_reader *r = NULL;
		floe_avro_block blk;
		bool eof;
		T_OK(floe_avro_reader_open(&r, in, NULL, &err), &err);
		T_OK(floe_avro_reader_next_block(&blk, &eof, r, &err), &err);
		floe_avro_reader_free(r);
		floe_input_close(in);
		/* the first block: header of 2-3 bytes then data; its CRC sits
		 * just before the sync marker that follows */
		memcpy(copy, file.data, file.len);
		size_t sync_at = 0;
		for (size_t i = 32; i + 16 <= file.len; i++)
			if (memcmp(file.data + i, file.data + (file.len - 16), 16) == 0) {
				sync_at = i;
				break;
			}
		/* find the first block's sync (the header sync is the first match) */
		size_t second = 0;
		for (size_t i = sync_at + 16; i + 16 <= file.len; i++)
			if (memcmp(file.data + i, file.data + (file.len - 16), 16) == 0) {
				second = i;
				break;
			}
		T_CHECK(second > 4);
		copy[second - 1] ^= 0xff;
		T_ERR(read_all(copy, file.len, &n, &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "CRC") != NULL);
	}
	free(copy);

	/* hand-made headers */
#define B(lit) lit, sizeof(lit) - 1
	static const struct {
		const char *bytes;
		size_t n;
		int rc;
		const char *needle;
	} cases[] = {
		{B("Obj\x02"), FLOE_ECORRUPT, "bad magic"},
		{B("Obj\x01\x02\x14" "avro.codec" "\x06" "lz4" "\x00" "0123456789abcdef"), FLOE_ECORRUPT,
		 "unknown Avro codec 'lz4'"},
		{B("Obj\x01\x02\x14" "avro.codec" "\x04" "xz" "\x00" "0123456789abcdef"), FLOE_EUNSUPPORTED,
		 "'xz'"},
		{B("Obj\x01\x00" "0123456789abcdef"), FLOE_ECORRUPT, "no avro.schema"},
		{B("Obj\x01\x02\x16" "avro.schema" "\x0a" "\"int\"" "\x00" "0123456789abcdef"
		 "\x02\xd0\x0f"), FLOE_ECORRUPT, "exceeds"},
		{B("Obj\x01\x02\x16" "avro.schema" "\x0a" "\"int\"" "\x00" "0123456789abcdef"
		 "\x01\x00"), FLOE_ECORRUPT, "bad record count"},
		{B("Obj\x01\x02\x16" "avro.schema" "\x10" "\"string\"" "\x00" "0123456789abcdef"
		 "\x02\x02\x7e" "0123456789abcdef"), FLOE_ECORRUPT, "bad length"},
		{B("Obj\x01\x02\x16" "avro.schema" "\x0a" "\"int\"" "\x00" "0123456789abcdef"
		 "\x02\x04\x02\x02" "0123456789abcdef"), FLOE_ECORRUPT, "bytes left after"},
		{B("Obj\x01\x02\x16" "avro.schema" "\x0a" "\"int\"" "\x00" "0123456789abcdef"
		 "\xfe\xff\xff\xff\x0f\x02\x02" "0123456789abcdef"), FLOE_ECORRUPT, "cannot fit"},
		{B("Obj\x01\x02\x16" "avro.schema" "\x3c"
		   "{\"type\":\"array\",\"items\":\"int\"}"
		   "\x00" "0123456789abcdef"
		   "\x02\x0a\xfe\xff\xff\x0f\x00" "0123456789abcdef"),
		 FLOE_ECORRUPT, "exceeds the remaining data"},
	};
#undef B
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = read_all((const uint8_t *)cases[i].bytes, cases[i].n, &n, &err);
		if (rc != cases[i].rc || !strstr(err.msg, cases[i].needle))
			t_fail(__FILE__, __LINE__, "case %zu: %s: %s", i, floe_strerror(rc), err.msg);
	}
	floe_buf_reset(&file);
	floe_arena_reset(&a);
}

/* A zstandard block whose data is exactly 64 KiB (the codec adapter's
 * stream buffer) once failed as a "truncated frame". */
/* The sync marker after every block is checked, not only the last one: a
 * byte flipped in the marker after a middle block stops the read at that
 * block, naming the file, the block and where it starts, and none of that
 * block's records is returned. */
static void test_sync_marker_every_block(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf file;
	uint64_t size;
	int64_t n;
	floe_arena_init(&a, 0);
	floe_buf_init(&file, 0);
	floe_avro_schema *s = parse(&a, ALL_TYPES, &err);
	T_OK(write_file(&file, s, "null", 300, 40, &size, &err), &err);
	/* the blocks, from the reader */
	floe_avro_block blk[64];
	int64_t before[64];
	size_t nb = 0;
	{
		floe_input *in = floe_input_memory(file.data, file.len, "c.avro");
		floe_avro_reader *r = NULL;
		int64_t total = 0;
		bool eof = false;
		T_OK(floe_avro_reader_open(&r, in, NULL, &err), &err);
		while (r && nb < 64) {
			T_OK(floe_avro_reader_next_block(&blk[nb], &eof, r, &err), &err);
			if (eof || err.code)
				break;
			before[nb] = total;
			total += blk[nb].count;
			nb++;
		}
		floe_avro_reader_free(r);
		floe_input_close(in);
	}
	T_CHECK(nb >= 4);
	if (nb >= 4) {
		/* the marker after block 2 ends where block 3 starts */
		size_t k = 2, at = (size_t)blk[k + 1].offset - 16 + 5;
		const uint8_t *sync = file.data + file.len - 16;
		T_CHECK(memcmp(file.data + blk[k + 1].offset - 16, sync, 16) == 0);
		file.data[at] ^= 0x20;
		T_ERR(read_all(file.data, file.len, &n, &err), FLOE_ECORRUPT);
		char want[160];
		snprintf(want, sizeof(want),
			 "c.avro: block %zu at offset %llu: sync marker at offset %llu does not match "
			 "the header's",
			 k, (unsigned long long)blk[k].offset, (unsigned long long)blk[k + 1].offset - 16);
		T_EQ_MSG(err.msg, want);
		T_EQ_INT(n, before[k]); /* the records of blocks 0 and 1 only */
		file.data[at] ^= 0x20;
		T_OK(read_all(file.data, file.len, &n, &err), &err);
		T_EQ_INT(n, 40);
		/* the header's marker itself: the first block fails */
		size_t hdr_sync = (size_t)blk[0].offset - 16;
		file.data[hdr_sync] ^= 0x01;
		T_ERR(read_all(file.data, file.len, &n, &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "c.avro: block 0 at offset") != NULL &&
			strstr(err.msg, "sync marker") != NULL);
		T_EQ_INT(n, 0);
	}
	floe_buf_reset(&file);
	floe_arena_reset(&a);
}

static void test_zstd_block_64k(void)
{
	floe_arena a;
	floe_error err = {0};
	floe_buf file;
	floe_avro_writer *w = NULL;
	floe_avro_writer_opts o = FLOE_AVRO_WRITER_OPTS_INIT;
	uint64_t size;
	int64_t n;
	static char blob[65533];
	floe_arena_init(&a, 0);
	floe_buf_init(&file, 0);
	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (char)('a' + (i * 7 + i / 13) % 26);
	floe_avro_schema *s = parse(&a, "\"bytes\"", &err);
	o.codec = "zstandard";
	T_OK(floe_avro_writer_open(&w, floe_output_buffer(&file, "z.avro"), s, &o, &err), &err);
	floe_buf *b = floe_avro_writer_begin(w);
	T_EQ_INT(floe_avro_enc_bytes(b, blob, sizeof(blob)), 0);
	T_EQ_INT(b->len, 65536); /* 3-byte length + 65533 bytes */
	T_OK(floe_avro_writer_commit(w, &err), &err);
	T_OK(floe_avro_writer_close(w, &size, &err), &err);
	T_OK(read_all(file.data, file.len, &n, &err), &err);
	T_EQ_INT(n, 1);
	floe_buf_reset(&file);
	floe_arena_reset(&a);
}

int main(void)
{
	T_RUN(test_encodings);
	T_RUN(test_decodings);
	T_RUN(test_schema_parse);
	T_RUN(test_schema_names);
	T_RUN(test_schema_errors);
	T_RUN(test_schema_builder);
	T_RUN(test_roundtrip_codecs);
	T_RUN(test_empty);
	T_RUN(test_writer_fast_path);
	T_RUN(test_resolution_promotion);
	T_RUN(test_resolution_unions);
	T_RUN(test_resolution_records);
	T_RUN(test_corruption);
	T_RUN(test_sync_marker_every_block);
	T_RUN(test_zstd_block_64k);
	free_decoders();
	return t_finish();
}
