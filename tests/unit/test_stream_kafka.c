/*
 * test_stream_kafka.c — the Kafka source's pieces that need no broker: its
 * configuration keys and checks, split names and specific offsets, and the
 * per-partition positions and fence shared by the processes of one pipeline
 * (stream_split_fence.c) on a real SQL catalog. The broker itself is in
 * tests/interop/test_kafka.py.
 */
#include <stdlib.h>

#include "harness.h"
#include "stream/stream_config.h"
#include "stream/stream_kafka.h"
#include "stream/stream_split_fence.h"
#include "stream/stream_value_format.h"
#include "table/commit.h"
#include "table/create.h"

static floe_catalog *open_cat(const char *dir)
{
	char uri[1024], wh[1024];
	floe_sql_catalog_opts o = FLOE_SQL_CATALOG_OPTS_INIT;
	floe_catalog *cat = NULL;
	floe_error err = {0};
	snprintf(uri, sizeof(uri), "%s/catalog.db", dir);
	snprintf(wh, sizeof(wh), "file://%s/wh", dir);
	o.uri = uri;
	o.warehouse = wh;
	if (floe_sql_catalog_open(&cat, &o, &err))
		t_fail(__FILE__, __LINE__, "open: %s", err.msg);
	return cat;
}

static const char *KAFKA_OK =
	"pipeline.name: p\n"
	"sources:\n"
	"  - name: k\n"
	"    type: kafka\n"
	"    topic: \"a; b.c\"\n"
	"    properties.bootstrap.servers: 127.0.0.1:9092\n"
	"    properties.group.id: g\n"
	"    scan.startup.mode: specific-offsets\n"
	"    scan.startup.specific-offsets: \"partition:0,offset:42;partition:1,offset:300\"\n"
	"    scan.bounded.mode: latest-offset\n"
	"    format: raw\n"
	"    metadata: {offset: o, key: k}\n"
	"tables: [{name: d.t}]\n";

static void test_kafka_config(void)
{
	stream_config *c = NULL;
	floe_error err = {0};
	T_OK(stream_config_parse_yaml(&c, KAFKA_OK, strlen(KAFKA_OK), NULL, &err), &err);
	const stream_source_cfg *s = &c->sources[0];
	T_EQ_INT(s->type, STREAM_SRC_KAFKA);
	T_EQ_INT((int64_t)s->n_topics, 2);
	T_EQ_STR(s->topics[0], "a");
	T_EQ_STR(s->topics[1], "b.c");
	T_EQ_INT(s->startup_mode, STREAM_KAFKA_SPECIFIC);
	T_EQ_INT(s->bounded_mode, STREAM_KAFKA_BOUNDED_LATEST);
	T_EQ_INT(s->format, STREAM_FMT_RAW);
	T_CHECK(s->value_format != NULL && !strcmp(s->value_format->name, "raw"));
	T_CHECK(s->commit_offsets);
	T_EQ_STR(floe_strmap_get(&s->metadata, "metadata.offset"), "o");
	T_EQ_STR(floe_strmap_get(&s->kafka_props, "properties.group.id"), "g");
	stream_config_free(c);

	static const struct {
		const char *src, *want;
	} bad[] = {
		{"{name: k, type: kafka, topic: a}", "needs properties.bootstrap.servers"},
		{"{name: k, type: kafka, properties.bootstrap.servers: h:1}", "needs topic or topic-pattern"},
		{"{name: k, type: kafka, topic: a, topic-pattern: \"a.*\", properties.bootstrap.servers: h:1}",
		 "needs topic or topic-pattern"},
		{"{name: k, type: kafka, topic: \"a b\", properties.bootstrap.servers: h:1}",
		 "is not a Kafka topic name"},
		{"{name: k, type: kafka, topic: a, properties.bootstrap.servers: h:1, metadata.offest: o}",
		 "'metadata.offest' is not one of"},
		{"{name: k, type: kafka, topic: a, properties.bootstrap.servers: h:1, format: xml}",
		 "is not one of json, jsonl, csv, raw"},
		{"{name: k, type: files, path: x, format: raw}", "is for kafka and kinesis sources"},
		{"{name: k, type: files, path: x, topic: a}", "are for kafka sources"},
		{"{name: k, type: kafka, topic: a, properties.bootstrap.servers: h:1, "
		 "scan.startup.mode: timestamp}",
		 "needs scan.startup.timestamp-millis"},
		{"{name: k, type: kafka, topic: a, properties.bootstrap.servers: h:1, "
		 "scan.startup.specific-offsets: \"partition:x,offset:1\"}",
		 "is not partition:<n>,offset:<n>"},
		{"{name: k, type: kafka, topic: a, properties.bootstrap.servers: h:1, "
		 "properties.sasl.password: hunter2}",
		 "holds a credential"},
		{"{name: k, type: kafka, topic: a, properties.bootstrap.servers: h:1, "
		 "scan.startup.mode: oldest}",
		 "is not one of group-offsets, earliest-offset"},
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

static void test_split_names_and_specific_offsets(void)
{
	char topic[64];
	int32_t part = -1;
	T_CHECK(stream_kafka_split_parse("kafka:a.b:c:12", topic, sizeof(topic), &part));
	T_EQ_STR(topic, "a.b:c");
	T_EQ_INT(part, 12);
	T_CHECK(!stream_kafka_split_parse("kafka::1", topic, sizeof(topic), &part));
	T_CHECK(!stream_kafka_split_parse("kafka:a:-1", topic, sizeof(topic), &part));
	T_CHECK(!stream_kafka_split_parse("/data/x.json", topic, sizeof(topic), &part));
	T_CHECK(!stream_kafka_split_parse("kafka:a:99999999999", topic, sizeof(topic), &part));

	int32_t ps[4];
	int64_t os[4];
	size_t n = 0;
	floe_error err = {0};
	T_OK(stream_kafka_parse_specific("partition:0,offset:42;partition:3,offset:7;", ps, os, 4, &n,
					 &err),
	     &err);
	T_EQ_INT((int64_t)n, 2);
	T_EQ_INT(ps[1], 3);
	T_EQ_INT(os[0], 42);
	T_CHECK(stream_kafka_parse_specific("partition:0", NULL, NULL, 0, NULL, NULL) == FLOE_EINVAL);
	T_CHECK(stream_kafka_parse_specific("partition:0,offset:-5", NULL, NULL, 0, NULL, NULL) ==
		FLOE_EINVAL);
}

/* ---- the per-partition fence on a real table ------------------------------------------ */

static floe_table *new_table(floe_catalog *cat, floe_arena *a)
{
	floe_error err = {0};
	floe_table *t = NULL;
	(void)a;
	T_OK(floe_catalog_create_namespace(cat, "d", NULL, 0, &err), &err);
	floe_table_create_opts co = FLOE_TABLE_CREATE_OPTS_INIT;
	co.schema = "id long";
	T_OK(floe_table_create(&t, cat, "d", "t", &co, &err), &err);
	return t;
}

/* One process's commit of `offs` (JSON) with its fence; returns the rc. */
static int commit_offsets(floe_table *t, floe_arena *a, stream_split_state *st, const char *group,
			  const char *offs, bool *conflict, floe_error *err)
{
	static int n;
	floe_snapshot_op *op = NULL;
	stream_offsets pos;
	stream_split_check_ctx ck;
	int64_t sid = -1;
	char name[64];
	stream_offsets_init(&pos);
	memset(&ck, 0, sizeof(ck));
	stream_offsets_init(&ck.seen);
	T_OK(stream_offsets_parse_json(&pos, offs, strlen(offs), err), err);
	ck.st = st;
	ck.pipeline_id = "p";
	ck.commit = &pos;
	floe_data_file f;
	floe_data_file_init(&f);
	snprintf(name, sizeof(name), "f%d", n++);
	f.file_path = floe_arena_sprintf(a, "%s/data/%s.parquet", floe_table_metadata(t)->location,
					 name);
	f.record_count = 1;
	f.file_size_in_bytes = 100;
	T_OK(floe_append_new(&op, t, NULL, err), err);
	T_OK(floe_append_add_file(op, &f, err), err);
	T_OK(floe_append_set_summary(op, "floe.pipeline-id", "p", err), err);
	T_OK(floe_append_set_summary(op, "floe.source-offsets", offs, err), err);
	T_OK(floe_append_set_summary(op, "floe.kafka.group-id", group, err), err);
	floe_op_set_check(op, stream_split_check, &ck);
	int rc = floe_append_commit(op, &sid, err);
	*conflict = ck.conflict;
	if (!rc)
		T_OK(stream_split_check_done(&ck, sid), err);
	floe_append_free(op);
	stream_split_check_reset(&ck);
	stream_offsets_reset(&pos);
	return rc;
}

static void test_split_fence(void)
{
	const char *dir = t_tmpdir();
	floe_catalog *cat = open_cat(dir);
	floe_arena a;
	floe_arena_init(&a, 4096);
	floe_table *ta = new_table(cat, &a), *tb = NULL;
	floe_error err = {0};
	stream_split_state *sa, *sb;
	bool conflict;
	T_OK(floe_table_load(&tb, cat, "d", "t", &err), &err);
	T_OK(stream_split_state_new(&sa, "g", &err), &err);
	T_OK(stream_split_state_new(&sb, "g", &err), &err);
	T_OK(stream_split_refresh(sa, floe_table_metadata(ta), "p", NULL, &err), &err);
	T_OK(stream_split_refresh(sb, floe_table_metadata(tb), "p", NULL, &err), &err);
	/* A owns partition 0, B partition 1: both commit, neither is fenced */
	T_OK(stream_split_expect(sa, "kafka:t:0", -1), &err);
	T_OK(stream_split_expect(sb, "kafka:t:1", -1), &err);
	T_OK(commit_offsets(ta, &a, sa, "g", "{\"kafka:t:0\":10}", &conflict, &err), &err);
	T_OK(commit_offsets(tb, &a, sb, "g", "{\"kafka:t:1\":5}", &conflict, &err), &err);
	T_OK(commit_offsets(ta, &a, sa, "g", "{\"kafka:t:0\":20}", &conflict, &err), &err);
	/* B merged A's commits through its own commit's walk */
	T_EQ_INT(stream_split_committed(sb, "kafka:t:0"), 10);
	/* B takes partition 0 believing it is at 10 (it missed A's last commit
	 * in a rebalance race): refused, named, and flagged as a conflict */
	T_OK(stream_split_expect(sb, "kafka:t:0", 10), &err);
	int rc = commit_offsets(tb, &a, sb, "g", "{\"kafka:t:0\":15,\"kafka:t:1\":6}", &conflict, &err);
	T_EQ_INT(rc, FLOE_ECONFLICT);
	T_CHECK(conflict);
	T_CHECK(strstr(err.msg, "split kafka:t:0 was committed at 20") != NULL);
	T_CHECK(strstr(err.msg, "from 10") != NULL);
	/* the rewind: B reads the table again and expects what it says */
	floe_error_clear(&err);
	T_OK(floe_table_refresh(tb, &err), &err);
	T_OK(stream_split_refresh(sb, floe_table_metadata(tb), "p", NULL, &err), &err);
	T_OK(stream_split_expect_all(sb), &err);
	T_EQ_INT(stream_split_committed(sb, "kafka:t:0"), 20);
	T_EQ_INT(stream_split_committed(sb, "kafka:t:1"), 5);
	T_OK(commit_offsets(tb, &a, sb, "g", "{\"kafka:t:0\":25,\"kafka:t:1\":6}", &conflict, &err),
	     &err);
	/* a fresh process merges every partition's newest offset over the ancestry */
	stream_split_state *sc;
	int64_t ck = 0;
	T_OK(stream_split_state_new(&sc, "g", &err), &err);
	T_OK(floe_table_refresh(ta, &err), &err);
	T_OK(stream_split_refresh(sc, floe_table_metadata(ta), "p", &ck, &err), &err);
	T_EQ_INT(stream_split_committed(sc, "kafka:t:0"), 25);
	T_EQ_INT(stream_split_committed(sc, "kafka:t:1"), 6);
	T_EQ_INT(stream_split_committed(sc, "kafka:t:2"), -1);
	/* the same pipeline under another consumer group is refused */
	stream_split_state *sd;
	T_OK(stream_split_state_new(&sd, "other", &err), &err);
	rc = stream_split_refresh(sd, floe_table_metadata(ta), "p", NULL, &err);
	T_EQ_INT(rc, FLOE_ECONFLICT);
	T_CHECK(strstr(err.msg, "consumer group 'g'") != NULL);
	stream_split_state_free(sa);
	stream_split_state_free(sb);
	stream_split_state_free(sc);
	stream_split_state_free(sd);
	floe_table_free(ta);
	floe_table_free(tb);
	floe_arena_reset(&a);
	floe_catalog_free(cat);
}

int main(void)
{
	T_RUN(test_kafka_config);
	T_RUN(test_split_names_and_specific_offsets);
	T_RUN(test_split_fence);
	return t_finish();
}
