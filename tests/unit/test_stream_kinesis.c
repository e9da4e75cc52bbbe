/*
 * test_stream_kinesis.c — the Kinesis source's pieces that need no
 * endpoint: configuration keys and checks, sequence-number order, positions
 * with tokens in floe.source-offsets, GetRecords answers, and the AWS
 * credential documents and files. The endpoint (moto) is in
 * tests/interop/test_kinesis.py.
 */
#include <stdlib.h>

#include "harness.h"
#include "stream/stream_aws.h"
#include "stream/stream_config.h"
#include "stream/stream_kinesis.h"

static const char *KINESIS_OK =
	"pipeline.name: p\n"
	"sources:\n"
	"  - name: k\n"
	"    type: kinesis\n"
	"    stream: orders\n"
	"    aws.region: eu-west-1\n"
	"    aws.credentials.provider: PROFILE\n"
	"    aws.credentials.profile.name: ingest\n"
	"    scan.stream.initpos: AT_TIMESTAMP\n"
	"    scan.stream.initpos-timestamp: \"2026-01-02T03:04:05Z\"\n"
	"    scan.shard.getrecords.maxrecordcount: 500\n"
	"    metadata: {shard-id: s, sequence-number: q}\n"
	"tables: [{name: d.t}]\n";

static void test_kinesis_config(void)
{
	stream_config *c = NULL;
	floe_error err = {0};
	T_OK(stream_config_parse_yaml(&c, KINESIS_OK, strlen(KINESIS_OK), NULL, &err), &err);
	const stream_source_cfg *s = &c->sources[0];
	T_EQ_INT(s->type, STREAM_SRC_KINESIS);
	T_EQ_STR(s->kinesis_stream, "orders");
	T_EQ_INT(s->kinesis_initpos, STREAM_KINESIS_AT_TIMESTAMP);
	T_EQ_INT(s->startup_ts_ms, 1767323045000LL);
	T_EQ_INT(s->kinesis_max_records, 500);
	T_EQ_INT(s->kinesis_interval_ms, 200);
	T_EQ_STR(floe_strmap_get(&s->aws_props, "aws.credentials.profile.name"), "ingest");
	T_EQ_STR(floe_strmap_get(&s->metadata, "metadata.sequence-number"), "q");
	stream_config_free(c);

	static const struct {
		const char *src, *want;
	} bad[] = {
		{"{name: k, type: kinesis}", "(kinesis) needs stream"},
		{"{name: k, type: kinesis, stream: s, aws.regon: x}", "'aws.regon' is not one of"},
		{"{name: k, type: kinesis, stream: s, aws.credentials.provider: MAGIC}",
		 "aws.credentials.provider 'MAGIC' is not one of"},
		{"{name: k, type: kinesis, stream: s, aws.credentials.provider: BASIC}",
		 "BASIC needs aws.credentials.basic.accesskeyid"},
		{"{name: k, type: kinesis, stream: s, scan.stream.initpos: AT_TIMESTAMP}",
		 "needs scan.stream.initpos-timestamp"},
		{"{name: k, type: kinesis, stream: s, scan.stream.initpos: AT_TIMESTAMP, "
		 "scan.stream.initpos-timestamp: yesterday}",
		 "is not epoch seconds or an ISO timestamp"},
		{"{name: k, type: kinesis, stream: s, scan.stream.initpos: EARLIEST}",
		 "is not one of LATEST, TRIM_HORIZON, AT_TIMESTAMP"},
		{"{name: k, type: kinesis, stream: s, scan.shard.getrecords.maxrecordcount: 20000}",
		 "must be 1..10000"},
		{"{name: k, type: kinesis, stream: s, metadata.offset: o}", "'metadata.offset' is not one of"},
		{"{name: k, type: files, path: x, stream: s}", "are for kinesis sources"},
		{"{name: k, type: kinesis, stream: s, aws.credentials.provider: BASIC, "
		 "aws.credentials.basic.accesskeyid: A, aws.credentials.basic.secretkey: B}",
		 "holds a credential"},
		{"{name: k, type: kafka, topic: a, properties.bootstrap.servers: h:1, aws.region: x}",
		 "are for kinesis sources"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char y[1024];
		snprintf(y, sizeof(y), "pipeline.name: p\nsources: [%s]\ntables: [{name: d.t}]\n",
			 bad[i].src);
		floe_error e = {0};
		c = NULL;
		int rc = stream_config_parse_yaml(&c, y, strlen(y), NULL, &e);
		T_CHECK(rc == FLOE_EINVAL);
		if (!strstr(e.msg, bad[i].want))
			t_fail(__FILE__, __LINE__, "case %zu: '%s' lacks '%s'", i, e.msg, bad[i].want);
		stream_config_free(c);
	}
}

static void test_seq_order(void)
{
	T_EQ_INT(stream_kinesis_seq_cmp("9", "10"), -1);
	T_EQ_INT(stream_kinesis_seq_cmp("49590338271490256608559692538361571095921575989136588898",
					 "49590338271490256608559692538361571095921575989136588898"),
		 0);
	T_EQ_INT(stream_kinesis_seq_cmp("49590338271490256608559692540925702759324208523137515618",
					 "49590338271490256608559692538361571095921575989136588898"),
		 1);
	T_EQ_INT(stream_kinesis_seq_cmp("007", "7"), 0);
	T_EQ_INT(stream_kinesis_seq_cmp("0", "1"), -1);
}

/* Positions with tokens go through floe.source-offsets and the min over
 * tables intact; plain ones stay plain numbers. */
static void test_offsets_with_tokens(void)
{
	stream_offsets a, b;
	floe_buf j;
	floe_error err = {0};
	stream_offsets_init(&a);
	stream_offsets_init(&b);
	floe_buf_init(&j, 0);
	const char *big = "49590338271490256608559692538361571095921575989136588898";
	T_OK(stream_offsets_set_tok(&a, "kinesis:s:shardId-000000000000", 12, big), NULL);
	T_OK(stream_offsets_set_tok(&a, "kinesis:s:shardId-000000000001", 7, "SHARD_END"), NULL);
	T_OK(stream_offsets_set(&a, "file:x", 99), NULL);
	T_OK(stream_offsets_write_json(&a, &j), NULL);
	T_EQ_STR(floe_buf_cstr(&j),
		 "{\"kinesis:s:shardId-000000000000\":{\"n\":12,\"seq\":\"49590338271490256608559692538361571095921575989136588898\"},"
		 "\"kinesis:s:shardId-000000000001\":{\"n\":7,\"seq\":\"SHARD_END\"},\"file:x\":99}");
	T_OK(stream_offsets_parse_json(&b, (const char *)j.data, j.len, &err), &err);
	T_EQ_INT(stream_offsets_get(&b, "kinesis:s:shardId-000000000000", -1), 12);
	T_EQ_STR(stream_offsets_tok(&b, "kinesis:s:shardId-000000000000"), big);
	T_CHECK(stream_offsets_tok(&b, "file:x") == NULL);
	/* the smaller position wins with its token; a split one side lacks starts over */
	stream_offsets c;
	stream_offsets_init(&c);
	T_OK(stream_offsets_set_tok(&c, "kinesis:s:shardId-000000000000", 5, "17"), NULL);
	T_OK(stream_offsets_set_tok(&c, "kinesis:s:shardId-000000000001", 9, "21"), NULL);
	T_OK(stream_offsets_min(&b, &c), NULL);
	T_EQ_INT(stream_offsets_get(&b, "kinesis:s:shardId-000000000000", -1), 5);
	T_EQ_STR(stream_offsets_tok(&b, "kinesis:s:shardId-000000000000"), "17");
	T_EQ_STR(stream_offsets_tok(&b, "kinesis:s:shardId-000000000001"), "SHARD_END");
	T_EQ_INT(stream_offsets_get(&b, "file:x", -1), 0);
	T_CHECK(stream_offsets_tok(&b, "file:x") == NULL);
	/* an object without its parts is corrupt */
	stream_offsets d;
	stream_offsets_init(&d);
	const char *broken = "{\"kinesis:s:x\":{\"n\":3}}";
	T_ERR(stream_offsets_parse_json(&d, broken, strlen(broken), &err), FLOE_ECORRUPT);
	stream_offsets_reset(&a);
	stream_offsets_reset(&b);
	stream_offsets_reset(&c);
	stream_offsets_reset(&d);
	floe_buf_reset(&j);
}

static void test_get_records_reply(void)
{
	stream_kinesis_reply r;
	floe_error err = {0};
	stream_kinesis_reply_init(&r);
	const char *ok = "{\"Records\":[{\"Data\":\"eyJpZCI6MX0=\",\"PartitionKey\":\"k1\","
			 "\"SequenceNumber\":\"4959\",\"ApproximateArrivalTimestamp\":1700000000.25},"
			 "{\"Data\":\"QUJDREVGR0g=\",\"PartitionKey\":\"k2\",\"SequenceNumber\":\"4960\"}],"
			 "\"NextShardIterator\":\"it2\",\"MillisBehindLatest\":1200}";
	T_OK(stream_kinesis_parse_records(&r, ok, strlen(ok), 4, &err), &err);
	T_EQ_INT((int64_t)r.n, 2);
	T_EQ_STR(r.next_iter, "it2");
	T_EQ_INT(r.millis_behind, 1200);
	const char *d = (const char *)r.data.data;
	T_CHECK(r.msgs[0].val_len == 8 && !memcmp(d + r.msgs[0].val_off, "{\"id\":1}", 8));
	T_CHECK(r.msgs[0].key_len == 2 && !memcmp(d + r.msgs[0].key_off, "k1", 2));
	T_CHECK(r.msgs[0].seq_len == 4 && !memcmp(d + r.msgs[0].seq_off, "4959", 4));
	T_EQ_INT(r.msgs[0].timestamp_ms, 1700000000250LL);
	T_EQ_INT(r.msgs[1].timestamp_ms, -1);
	/* over max-record-size (4 here): flagged, its start kept */
	T_CHECK(r.msgs[1].flags & STREAM_MSG_OVERSIZE);
	T_EQ_INT(r.msgs[1].size, 8);
	T_CHECK(!(r.msgs[0].flags & STREAM_MSG_OVERSIZE) || r.msgs[0].size == 8);
	/* a closed shard's end: no NextShardIterator */
	const char *end = "{\"Records\":[],\"MillisBehindLatest\":0}";
	T_OK(stream_kinesis_parse_records(&r, end, strlen(end), 1 << 20, &err), &err);
	T_EQ_INT((int64_t)r.n, 0);
	T_CHECK(r.next_iter == NULL);
	static const struct {
		const char *src, *want;
	} bad[] = {
		{"[]", "GetRecords: the answer is not a JSON object"},
		{"{\"NextShardIterator\":\"x\"}", "GetRecords: the answer has no Records list"},
		{"{\"Records\":[{\"Data\":\"!!\",\"SequenceNumber\":\"1\"}]}",
		 "GetRecords: record 0: Data is not base64"},
		{"{\"Records\":[{\"Data\":\"QQ==\",\"SequenceNumber\":\"1a\"}]}",
		 "GetRecords: record 0 has no Data or no SequenceNumber (digits)"},
		{"{\"Records\":[],\"NextShardIterator\":5}", "GetRecords: NextShardIterator is not a string"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		floe_error e = {0};
		T_ERR(stream_kinesis_parse_records(&r, bad[i].src, strlen(bad[i].src), 1 << 20, &e),
		      FLOE_ECORRUPT);
		T_EQ_MSG(e.msg, bad[i].want);
	}
	stream_kinesis_reply_reset(&r);
}

static void test_aws_documents(void)
{
	char type[64], msg[128];
	const char *eb = "{\"__type\":\"com.amazonaws.kinesis#ProvisionedThroughputExceededException\","
			 "\"message\":\"Rate exceeded for shard\"}";
	stream_aws_error_of((const uint8_t *)eb, strlen(eb), type, sizeof(type), msg, sizeof(msg));
	T_EQ_STR(type, "ProvisionedThroughputExceededException");
	T_EQ_STR(msg, "Rate exceeded for shard");
	stream_aws_error_of((const uint8_t *)"<html>", 6, type, sizeof(type), msg, sizeof(msg));
	T_EQ_STR(type, "");
}

int main(void)
{
	T_RUN(test_kinesis_config);
	T_RUN(test_seq_order);
	T_RUN(test_offsets_with_tokens);
	T_RUN(test_get_records_reply);
	T_RUN(test_aws_documents);
	return t_finish();
}
