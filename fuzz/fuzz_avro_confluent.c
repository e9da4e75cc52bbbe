/*
 * fuzz_avro_confluent.c — the avro-confluent value decoder
 * (stream/stream_decode_avro.h) on arbitrary bytes, with the registry's
 * answers given up front: schema ids 1 (primitives and logical types), 2
 * (nested records, arrays, maps, unions with null), 3 (a registry answer
 * with references: its records are dead letters); any other id has no
 * registry (FLOE_EIO). The first byte picks the table's row type; the rest
 * are values, each preceded by its length (one byte), so one input is a
 * sequence of Kafka records. After every value the columns must be
 * consistent (a rejected value leaves them as they were), a dead letter
 * must say why, and the finished batch must be a well-formed Arrow array.
 * fuzz/gen_avro_confluent_seeds.py writes the seeds (fastavro).
 */
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "iceberg/arrow_schema.h"
#include "stream/stream_decode_avro.h"

static const char *const REGISTRY[] = {
	"{\"schema\": \"{\\\"type\\\": \\\"record\\\", \\\"name\\\": \\\"P\\\", \\\"fields\\\": ["
	"{\\\"name\\\": \\\"id\\\", \\\"type\\\": \\\"long\\\"},"
	"{\\\"name\\\": \\\"s\\\", \\\"type\\\": \\\"string\\\"},"
	"{\\\"name\\\": \\\"d\\\", \\\"type\\\": \\\"double\\\"},"
	"{\\\"name\\\": \\\"ok\\\", \\\"type\\\": \\\"boolean\\\"},"
	"{\\\"name\\\": \\\"b\\\", \\\"type\\\": \\\"bytes\\\"},"
	"{\\\"name\\\": \\\"amt\\\", \\\"type\\\": {\\\"type\\\": \\\"bytes\\\", \\\"logicalType\\\": "
	"\\\"decimal\\\", \\\"precision\\\": 10, \\\"scale\\\": 2}},"
	"{\\\"name\\\": \\\"day\\\", \\\"type\\\": {\\\"type\\\": \\\"int\\\", \\\"logicalType\\\": "
	"\\\"date\\\"}},"
	"{\\\"name\\\": \\\"ts\\\", \\\"type\\\": {\\\"type\\\": \\\"long\\\", \\\"logicalType\\\": "
	"\\\"timestamp-millis\\\"}},"
	"{\\\"name\\\": \\\"tu\\\", \\\"type\\\": {\\\"type\\\": \\\"long\\\", \\\"logicalType\\\": "
	"\\\"timestamp-micros\\\"}},"
	"{\\\"name\\\": \\\"u\\\", \\\"type\\\": {\\\"type\\\": \\\"string\\\", \\\"logicalType\\\": "
	"\\\"uuid\\\"}},"
	"{\\\"name\\\": \\\"fx\\\", \\\"type\\\": {\\\"type\\\": \\\"fixed\\\", \\\"name\\\": \\\"F3\\\", "
	"\\\"size\\\": 3}},"
	"{\\\"name\\\": \\\"k\\\", \\\"type\\\": {\\\"type\\\": \\\"enum\\\", \\\"name\\\": \\\"K\\\", "
	"\\\"symbols\\\": [\\\"A\\\", \\\"B\\\"]}}]}\"}",
	"{\"schema\": \"{\\\"type\\\": \\\"record\\\", \\\"name\\\": \\\"N\\\", \\\"fields\\\": ["
	"{\\\"name\\\": \\\"id\\\", \\\"type\\\": \\\"int\\\"},"
	"{\\\"name\\\": \\\"tags\\\", \\\"type\\\": [\\\"null\\\", {\\\"type\\\": \\\"array\\\", "
	"\\\"items\\\": \\\"string\\\"}]},"
	"{\\\"name\\\": \\\"attrs\\\", \\\"type\\\": {\\\"type\\\": \\\"map\\\", \\\"values\\\": "
	"\\\"long\\\"}},"
	"{\\\"name\\\": \\\"pt\\\", \\\"type\\\": [\\\"null\\\", {\\\"type\\\": \\\"record\\\", "
	"\\\"name\\\": \\\"Pt\\\", \\\"fields\\\": [{\\\"name\\\": \\\"x\\\", \\\"type\\\": "
	"\\\"double\\\"}, {\\\"name\\\": \\\"y\\\", \\\"type\\\": \\\"double\\\"}]}]},"
	"{\\\"name\\\": \\\"deep\\\", \\\"type\\\": {\\\"type\\\": \\\"array\\\", \\\"items\\\": "
	"{\\\"type\\\": \\\"record\\\", \\\"name\\\": \\\"Dp\\\", \\\"fields\\\": [{\\\"name\\\": "
	"\\\"a\\\", \\\"type\\\": {\\\"type\\\": \\\"map\\\", \\\"values\\\": {\\\"type\\\": "
	"\\\"array\\\", \\\"items\\\": \\\"string\\\"}}}, {\\\"name\\\": \\\"b\\\", \\\"type\\\": "
	"[\\\"null\\\", \\\"string\\\", \\\"long\\\"]}]}}}]}\"}",
	"{\"schema\": \"{\\\"type\\\": \\\"record\\\", \\\"name\\\": \\\"R\\\", \\\"fields\\\": ["
	"{\\\"name\\\": \\\"id\\\", \\\"type\\\": \\\"other.Thing\\\"}]}\", "
	"\"references\": [{\"name\": \"other.Thing\", \"subject\": \"thing\", \"version\": 1}]}",
};

static const char *const TABLES[] = {
	"id long not null, s string, d double, ok boolean, b binary, amt decimal(10, 2), day date, "
	"ts timestamptz, tu timestamp, u uuid, fx fixed[3], k string",
	"id int, tags list<string>, attrs map<string, long>, pt struct<x: double, y: double not null>, "
	"deep list<struct<a: map<string, list<string>>, b: string>>",
	"id long, s string not null, tu long, b string, attrs string",
};

static void check_col(const stream_col *c, int64_t len)
{
	if (c->len != len)
		abort();
	if (c->kind == SB_STRUCT)
		for (size_t i = 0; i < c->n_kids; i++)
			check_col(&c->kids[i], len);
	if ((c->kind == SB_LIST || c->kind == SB_MAP) && len > 0)
		for (size_t i = 0; i < c->n_kids; i++)
			check_col(&c->kids[i], c->offs[len]);
	if (c->kind == SB_BIN && len > 0 && (size_t)c->offs[len] != c->data_len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_arena a;
	floe_schema *s = NULL;
	stream_col root;
	stream_avro_dec *d = NULL;
	struct ArrowSchema as;
	if (size < 1 || size > (1 << 20))
		return 0;
	floe_arena_init(&a, 0);
	stream_coerce_opts o = {(stream_epoch_unit)(data[0] / 3 % 4)};
	if (floe_schema_parse_compact(&s, &a, TABLES[data[0] % 3], NULL) ||
	    stream_col_init(&root, s->root, NULL, 0, false, NULL) ||
	    floe_iceberg_arrow_schema(&as, s, NULL) || stream_avro_dec_new(&d, NULL, s->root, &o, NULL))
		abort();
	for (uint32_t id = 1; id <= 3; id++) {
		stream_reason why;
		const char *body = REGISTRY[id - 1];
		int rc = stream_avro_dec_put(d, id, body, strlen(body), &why);
		if (rc != (id == 3 ? FLOE_EINVAL : FLOE_OK))
			abort();
	}
	size_t i = 1;
	while (i < size) {
		size_t n = data[i++];
		if (n > size - i)
			n = size - i;
		int64_t before = root.len;
		stream_reason why;
		why.msg[0] = 0;
		int rc = stream_avro_decode(d, &root, data + i, n, &why);
		if (rc == FLOE_OK ? root.len != before + 1 : root.len != before)
			abort();
		if (rc != FLOE_OK && rc != FLOE_EINVAL && rc != FLOE_ENOMEM && rc != FLOE_EIO)
			abort();
		if ((rc == FLOE_EINVAL || rc == FLOE_EIO) && !why.msg[0])
			abort();
		check_col(&root, root.len);
		i += n;
	}
	struct ArrowArray out;
	if (stream_col_finish(&root, &out) || floe_arrow_check(&as, &out, NULL))
		abort();
	out.release(&out);
	floe_arrow_schema_release(&as);
	stream_col_reset(&root);
	stream_avro_dec_free(d);
	floe_arena_reset(&a);
	return 0;
}
