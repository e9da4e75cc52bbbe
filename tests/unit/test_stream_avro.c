/*
 * test_stream_avro.c — the avro-confluent decoder (stream_decode_avro.h) on
 * recorded bytes: values in Confluent's wire format built here with the
 * Avro encoders, the registry's answers given with stream_avro_dec_put.
 * Good values become rows (read back through Arrow); each kind of bad
 * value is a dead letter with its reason and leaves the columns as they
 * were; a registry answer floe cannot use makes its id's records dead
 * letters; a registry that cannot be reached is FLOE_EIO (not the
 * record's fault), after the retries.
 */
#include <string.h>

#include "avro/avro_datum.h"
#include "harness.h"
#include "iceberg/types.h"
#include "stream/stream_decode_avro.h"

#define SCHEMA_ANSWER                                                                          \
	"{\"schema\": \"{\\\"type\\\": \\\"record\\\", \\\"name\\\": \\\"T\\\", \\\"fields\\\": ["   \
	"{\\\"name\\\": \\\"id\\\", \\\"type\\\": \\\"long\\\"},"                                   \
	"{\\\"name\\\": \\\"name\\\", \\\"type\\\": \\\"string\\\"},"                               \
	"{\\\"name\\\": \\\"amount\\\", \\\"type\\\": {\\\"type\\\": \\\"bytes\\\", "               \
	"\\\"logicalType\\\": \\\"decimal\\\", \\\"precision\\\": 10, \\\"scale\\\": 2}},"         \
	"{\\\"name\\\": \\\"tags\\\", \\\"type\\\": {\\\"type\\\": \\\"array\\\", \\\"items\\\": "  \
	"\\\"string\\\"}},"                                                                         \
	"{\\\"name\\\": \\\"at\\\", \\\"type\\\": [\\\"null\\\", {\\\"type\\\": \\\"long\\\", "     \
	"\\\"logicalType\\\": \\\"timestamp-micros\\\"}]},"                                         \
	"{\\\"name\\\": \\\"attrs\\\", \\\"type\\\": {\\\"type\\\": \\\"map\\\", \\\"values\\\": "  \
	"\\\"long\\\"}},"                                                                           \
	"{\\\"name\\\": \\\"kind\\\", \\\"type\\\": {\\\"type\\\": \\\"enum\\\", \\\"name\\\": "    \
	"\\\"K\\\", \\\"symbols\\\": [\\\"A\\\", \\\"B\\\"]}}]}\"}"

#define TABLE                                                                                  \
	"id long not null, name string, amount decimal(10, 2), tags list<string>, at timestamptz, " \
	"attrs map<string, long>, kind string"

/* One value of the schema above, framed with id. */
static void encode(floe_buf *b, uint32_t id, int64_t i)
{
	uint8_t head[5] = {0, (uint8_t)(id >> 24), (uint8_t)(id >> 16), (uint8_t)(id >> 8),
			   (uint8_t)id};
	char name[32];
	int n = snprintf(name, sizeof(name), "name %lld", (long long)i);
	uint8_t amount[2] = {(uint8_t)(i & 1 ? 0xff : 0x01), 0x2c}; /* -212 or 300: -2.12, 3.00 */
	floe_buf_clear(b);
	T_CHECK(floe_buf_append(b, head, 5) == 0);
	T_CHECK(floe_avro_enc_long(b, i) == 0);
	T_CHECK(floe_avro_enc_string(b, name, (size_t)n) == 0);
	T_CHECK(floe_avro_enc_bytes(b, amount, 2) == 0);
	T_CHECK(floe_avro_enc_block_count(b, 2) == 0);
	T_CHECK(floe_avro_enc_string(b, "x", 1) == 0);
	T_CHECK(floe_avro_enc_string(b, "y", 1) == 0);
	T_CHECK(floe_avro_enc_block_count(b, 0) == 0);
	if (i % 2) {
		T_CHECK(floe_avro_enc_union(b, 0) == 0);
	} else {
		T_CHECK(floe_avro_enc_union(b, 1) == 0);
		T_CHECK(floe_avro_enc_long(b, 1700000000000000 + i) == 0);
	}
	T_CHECK(floe_avro_enc_block_count(b, 1) == 0);
	T_CHECK(floe_avro_enc_string(b, "k", 1) == 0);
	T_CHECK(floe_avro_enc_long(b, -i) == 0);
	T_CHECK(floe_avro_enc_block_count(b, 0) == 0);
	T_CHECK(floe_avro_enc_enum(b, (size_t)(i % 2)) == 0);
}

typedef struct fixture {
	floe_arena arena;
	floe_schema *schema;
	stream_col root;
	stream_avro_dec *d;
	floe_buf v;
} fixture;

static void fx_init(fixture *f, const stream_avro_opts *o)
{
	floe_error err = {0};
	memset(f, 0, sizeof(*f));
	floe_arena_init(&f->arena, 4096);
	floe_buf_init(&f->v, 0);
	T_OK(floe_schema_parse_compact(&f->schema, &f->arena, TABLE, &err), &err);
	T_OK(stream_col_init(&f->root, f->schema->root, NULL, 0, false, &err), &err);
	stream_coerce_opts co = {STREAM_EPOCH_MS};
	T_OK(stream_avro_dec_new(&f->d, o, f->schema->root, &co, &err), &err);
}

static void fx_reset(fixture *f)
{
	stream_avro_dec_free(f->d);
	stream_col_reset(&f->root);
	floe_buf_reset(&f->v);
	floe_arena_reset(&f->arena);
}

/* Decode f->v: rc, and the columns grew by one row exactly when rc is 0. */
static int decode(fixture *f, stream_reason *why)
{
	int64_t before = f->root.len;
	why->msg[0] = 0;
	int rc = stream_avro_decode(f->d, &f->root, f->v.data, f->v.len, why);
	T_EQ_INT(f->root.len, before + (rc == 0 ? 1 : 0));
	if (rc)
		T_CHECK(why->msg[0] != 0);
	return rc;
}

static void expect_dead(fixture *f, const char *reason_part)
{
	stream_reason why;
	T_EQ_INT(decode(f, &why), FLOE_EINVAL);
	if (!strstr(why.msg, reason_part))
		t_fail(__FILE__, __LINE__, "reason '%s' lacks '%s'", why.msg, reason_part);
}

static void test_good_values(void)
{
	fixture f;
	stream_reason why;
	fx_init(&f, NULL);
	const char *ans = SCHEMA_ANSWER;
	T_EQ_INT(stream_avro_dec_put(f.d, 7, ans, strlen(ans), &why), FLOE_OK);
	for (int64_t i = 0; i < 20; i++) {
		encode(&f.v, 7, i);
		T_EQ_INT(decode(&f, &why), FLOE_OK);
	}
	T_EQ_INT(f.root.len, 20);
	struct ArrowArray out;
	T_EQ_INT(stream_col_finish(&f.root, &out), FLOE_OK);
	T_EQ_INT(out.length, 20);
	T_EQ_INT(out.n_children, 7);
	/* id (not null), kind from the enum symbol */
	const int64_t *ids = out.children[0]->buffers[1];
	T_EQ_INT(ids[13], 13);
	T_EQ_INT(out.children[4]->null_count, 10); /* at: null for odd ids */
	const int32_t *koff = out.children[6]->buffers[1];
	const char *kdata = out.children[6]->buffers[2];
	T_CHECK(koff[4] - koff[3] == 1 && kdata[koff[3]] == 'B');
	T_CHECK(kdata[koff[2]] == 'A');
	out.release(&out);
	T_EQ_INT(stream_avro_dec_fetches(f.d), 0);
	fx_reset(&f);
}

static void test_bad_values(void)
{
	fixture f;
	stream_reason why;
	fx_init(&f, NULL);
	const char *ans = SCHEMA_ANSWER;
	T_EQ_INT(stream_avro_dec_put(f.d, 7, ans, strlen(ans), &why), FLOE_OK);
	T_EQ_INT(stream_avro_dec_put(f.d, 7, ans, strlen(ans), &why), FLOE_EINVAL); /* known */

	encode(&f.v, 7, 3);
	f.v.data[0] = 1;
	expect_dead(&f, "the first byte is 0x01, not the magic byte 0");
	f.v.len = 4;
	f.v.data[0] = 0;
	expect_dead(&f, "4 bytes, shorter than the magic byte");
	f.v.len = 0;
	expect_dead(&f, "0 bytes");

	encode(&f.v, 7, 3);
	size_t full = f.v.len;
	for (size_t cut = 5; cut < full; cut++) { /* every truncation */
		f.v.len = cut;
		expect_dead(&f, "Avro datum (schema 7)");
	}
	encode(&f.v, 7, 3);
	T_CHECK(floe_buf_append(&f.v, "\x02", 1) == 0);
	expect_dead(&f, "1 bytes after the record");

	/* a datum that does not match its schema: the union branch (after id 4,
	 * "name 4", the decimal, the tags) out of range; an enum index out of
	 * range; a negative string length */
	encode(&f.v, 7, 4);
	size_t at = 5 + 1 + 7 + 3 + 1 + 2 + 2 + 1;
	T_EQ_INT(f.v.data[at], 2); /* branch 1 */
	f.v.data[at] = 0x0e;      /* branch 7 */
	expect_dead(&f, "Avro datum (schema 7)");
	encode(&f.v, 7, 4);
	f.v.data[f.v.len - 1] = 0x08; /* enum index 4 of 2 */
	expect_dead(&f, "Avro datum (schema 7)");
	encode(&f.v, 7, 4);
	f.v.data[6] = 0x01; /* the name's length: -1 */
	expect_dead(&f, "Avro datum (schema 7)");
	T_EQ_INT(f.root.len, 0);

	/* answers floe cannot use: their ids' records are dead letters, with the
	 * answer's fault as the reason, every time */
	static const struct {
		uint32_t id;
		const char *answer, *reason;
	} BAD[] = {
	    {20, "{\"schemaType\": \"AVRO\"}", "no \"schema\" string"},
	    {21, "{\"schema\": \"syntax = 'proto3';\", \"schemaType\": \"PROTOBUF\"}",
	     "schemaType PROTOBUF is not AVRO"},
	    {22, "{\"schema\": \"{\\\"type\\\": \\\"record\\\", \\\"name\\\": \\\"R\\\", "
		 "\\\"fields\\\": [{\\\"name\\\": \\\"x\\\", \\\"type\\\": \\\"o.T\\\"}]}\", "
		 "\"references\": [{\"name\": \"o.T\", \"subject\": \"t\", \"version\": 1}]}",
	     "references to other subjects"},
	    {23, "{\"schema\": \"{\\\"type\\\": \\\"nope\\\"}\"}", "schema 23"},
	    {24, "not json", "schema 24"},
	};
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		T_EQ_INT(stream_avro_dec_put(f.d, BAD[i].id, BAD[i].answer, strlen(BAD[i].answer),
					     &why),
			 FLOE_EINVAL);
		if (!strstr(why.msg, BAD[i].reason))
			t_fail(__FILE__, __LINE__, "put: '%s' lacks '%s'", why.msg, BAD[i].reason);
		for (int k = 0; k < 2; k++) {
			encode(&f.v, BAD[i].id, 1);
			expect_dead(&f, BAD[i].reason);
		}
	}
	/* no registry for an id never given: the registry's fault, not the record's */
	encode(&f.v, 99, 1);
	T_EQ_INT(decode(&f, &why), FLOE_EIO);
	T_CHECK(strstr(why.msg, "no schema registry") != NULL);
	/* a good value after all that */
	encode(&f.v, 7, 1);
	T_EQ_INT(decode(&f, &why), FLOE_OK);
	fx_reset(&f);
}

static void test_registry_unreachable(void)
{
	/* a port nothing listens on: every try fails to connect, then FLOE_EIO
	 * naming the registry and the tries */
	stream_avro_opts o = {"http://127.0.0.1:9/", NULL, NULL, 3, 1};
	fixture f;
	stream_reason why;
	fx_init(&f, &o);
	encode(&f.v, 5, 1);
	T_EQ_INT(decode(&f, &why), FLOE_EIO);
	T_CHECK(strstr(why.msg, "schema registry http://127.0.0.1:9/schemas/ids/5") != NULL);
	T_CHECK(strstr(why.msg, "(3 tries)") != NULL);
	T_EQ_INT(stream_avro_dec_fetches(f.d), 3);
	/* not remembered: asked again for the next record */
	T_EQ_INT(decode(&f, &why), FLOE_EIO);
	T_EQ_INT(stream_avro_dec_fetches(f.d), 6);
	fx_reset(&f);
}

int main(void)
{
	T_RUN(test_good_values);
	T_RUN(test_bad_values);
	T_RUN(test_registry_unreachable);
	return t_finish();
}
