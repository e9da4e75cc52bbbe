/*
 * test_sql_plan.c — floe_sql_pipelines: a Flink SQL script's DDL and SET are
 * interpreted in memory (no catalog opened, nothing created) and each INSERT
 * job comes out as pipeline YAML carrying the target table's partition spec,
 * key and properties, which floe_plan_run accepts.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floe/plan.h"
#include "floe/sql.h"
#include "harness.h"

typedef struct jobs {
	char yaml[4][4096];
	unsigned line[4];
	int n;
	int fail_at; /* return FLOE_ECANCELED at this job (-1: never) */
} jobs;

static int on_job(const char *job, unsigned line, const char *yaml, size_t n, void *payload)
{
	jobs *j = payload;
	T_CHECK(!strncmp(job, "sql-", 4));
	if (j->n == j->fail_at)
		return FLOE_ECANCELED;
	if (j->n < 4 && n < sizeof(j->yaml[0])) {
		memcpy(j->yaml[j->n], yaml, n);
		j->yaml[j->n][n] = 0;
		j->line[j->n] = line;
	}
	j->n++;
	return 0;
}

static char WH[256];

static char OUT[16384];

static int capture(const char *d, size_t n, void *p)
{
	(void)p;
	size_t have = strlen(OUT);
	if (have + n >= sizeof(OUT))
		return FLOE_ENOMEM;
	memcpy(OUT + have, d, n);
	OUT[have + n] = 0;
	return 0;
}

static const char *script(char *buf, size_t cap, const char *insert)
{
	snprintf(buf, cap,
		 "CREATE CATALOG lake WITH ('type'='iceberg', 'catalog-type'='hadoop', "
		 "'warehouse'='%s');\n"
		 "USE CATALOG lake;\n"
		 "CREATE DATABASE IF NOT EXISTS db;\n"
		 "CREATE TABLE IF NOT EXISTS db.users (id BIGINT, region STRING, ts TIMESTAMP(6),\n"
		 "  PRIMARY KEY (id, region) NOT ENFORCED) PARTITIONED BY (region, days(ts))\n"
		 "  WITH ('format-version'='2', 'write.upsert.enabled'='true');\n"
		 "CREATE TEMPORARY TABLE gen (id BIGINT NOT NULL, region STRING, ts TIMESTAMP(6))\n"
		 "  WITH ('connector'='datagen', 'rows-per-second'='500');\n"
		 "SET 'execution.checkpointing.interval' = '2min';\n"
		 "SET 'parallelism.default' = '3';\n"
		 "SHOW TABLES;\n"
		 "%s\n",
		 WH, insert);
	return buf;
}

static void test_yaml_of_a_job(void)
{
	char text[4096];
	jobs j = {.fail_at = -1};
	floe_error err = {0};
	script(text, sizeof(text),
	       "INSERT INTO db.users /*+ OPTIONS('distribution-mode'='hash') */ SELECT id, region, "
	       "ts FROM gen;\nINSERT INTO db.users SELECT * FROM gen;");
	T_OK(floe_sql_pipelines(text, strlen(text), "job.sql", on_job, &j, &err), &err);
	T_EQ_INT(j.n, 2);
	T_EQ_INT(j.line[0], 12);
	T_EQ_INT(j.line[1], 13);
	const char *y = j.yaml[0];
	T_CHECK(strstr(y, "execution.checkpointing.interval: \"2min\"") != NULL);
	T_CHECK(strstr(y, "parallelism.default: 3") != NULL);
	T_CHECK(strstr(y, "partition-by: \"region, DAYS(ts)\"") != NULL);
	T_CHECK(strstr(y, "equality-field-columns: \"id,region\"") != NULL);
	T_CHECK(strstr(y, "\"write.upsert.enabled\": \"true\"") != NULL);
	T_CHECK(strstr(y, "distribution-mode: \"hash\"") != NULL);
	T_CHECK(strstr(j.yaml[1], "distribution-mode") == NULL);
	/* the plan takes it: an upsert keyed on id and region, hash distributed,
	 * partitioned also by day(ts), which is not in the key */
	floe_plan *p = NULL;
	T_OK(floe_plan_run(&p, y, strlen(y), NULL, &err), &err);
	OUT[0] = 0;
	T_OK(floe_plan_write(p, true, capture, NULL, &err), &err);
	T_CHECK(strstr(OUT, "\"writers\":3") != NULL);
	T_CHECK(strstr(OUT, "\"distribution\":\"hash\"") != NULL);
	T_CHECK(strstr(OUT, "partition column 'ts' is not an equality field") != NULL);
	T_CHECK(strstr(OUT, "upsert-without-key") == NULL);
	T_CHECK(strstr(OUT, "upsert-distribution-none") == NULL);
	T_EQ_INT(floe_plan_severity(p), FLOE_HEALTH_CRITICAL);
	floe_plan_free(p);
	/* nothing was created */
	struct stat sb;
	T_CHECK(stat(WH, &sb) != 0);
}

static void test_errors(void)
{
	char text[4096];
	jobs j = {.fail_at = -1};
	floe_error err = {0};
	/* a target the script does not create: no catalog is opened to find it */
	script(text, sizeof(text), "INSERT INTO db.other SELECT id, region, ts FROM gen;");
	T_EQ_INT(floe_sql_pipelines(text, strlen(text), "job.sql", on_job, &j, &err),
		 FLOE_EUNSUPPORTED);
	T_CHECK(strstr(err.msg, "CREATE TABLE IF NOT EXISTS") != NULL);
	T_CHECK(strstr(err.msg, "line 12") != NULL);
	/* the function's error stops the script */
	j = (jobs){.fail_at = 0};
	script(text, sizeof(text),
	       "INSERT INTO db.users SELECT * FROM gen;\nINSERT INTO db.users SELECT * FROM gen;");
	T_EQ_INT(floe_sql_pipelines(text, strlen(text), NULL, on_job, &j, NULL), FLOE_ECANCELED);
	T_EQ_INT(j.n, 0);
	/* bad SQL: the parser's error */
	T_EQ_INT(floe_sql_pipelines("INSERT INTO", 11, NULL, on_job, &j, &err), FLOE_EINVAL);
	T_EQ_INT(floe_sql_pipelines("", 0, NULL, NULL, NULL, &err), FLOE_EINVAL);
	struct stat sb;
	T_CHECK(stat(WH, &sb) != 0);
}

int main(void)
{
	snprintf(WH, sizeof(WH), "/tmp/floe-test-sql-plan-%ld/wh", (long)getpid());
	T_RUN(test_yaml_of_a_job);
	T_RUN(test_errors);
	return t_finish();
}
