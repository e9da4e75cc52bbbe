/*
 * test_sql_parse.c — the SQL front end's parser: Flink's lexical rules
 * (backquotes, '' escapes, comments, hints), the statements floe runs, and
 * error messages that point at the line and column with a caret.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sql/sql_ast.h"

static sql_script *parse_ok(const char *text)
{
	sql_script *sc = NULL;
	floe_error err = {0};
	T_OK(floe_sql__parse(&sc, text, strlen(text), NULL, &err), &err);
	return sc;
}

/* The error message of parsing text (static buffer). */
static const char *parse_err(const char *text)
{
	static floe_error err;
	sql_script *sc = NULL;
	memset(&err, 0, sizeof(err));
	int rc = floe_sql__parse(&sc, text, strlen(text), "job.sql", &err);
	T_EQ_INT(rc, FLOE_EINVAL);
	T_CHECK(sc == NULL);
	return err.msg;
}

static void test_lexical(void)
{
	sql_script *sc = parse_ok("-- a comment\n"
				  "/* block\n comment */ CREATE TABLE `my table`.`it``s` (\n"
				  "  `select` STRING COMMENT 'it''s', n INT) WITH ('k' = 'a''b');");
	if (!sc)
		return;
	T_EQ_INT(sc->n_stmts, 1);
	sql_stmt *st = sc->stmts[0];
	T_EQ_INT(st->kind, SQL_S_CREATE_TABLE);
	T_EQ_INT(st->name.n, 2);
	T_EQ_STR(st->name.parts[0], "my table");
	T_EQ_STR(st->name.parts[1], "it`s");
	T_EQ_INT(st->n_cols, 2);
	T_EQ_STR(st->cols[0].name, "select");
	T_EQ_STR(st->cols[0].comment, "it's");
	T_EQ_STR(st->opts[0].value, "a'b");
	T_EQ_INT(st->off, 34); /* after the comments */
	floe_sql__script_free(sc);
}

static void test_create_table(void)
{
	sql_script *sc = parse_ok(
		"CREATE TABLE IF NOT EXISTS cat.db.orders (\n"
		"  id BIGINT, amount DECIMAL(10, 2) NOT NULL, ts TIMESTAMP_LTZ(3),\n"
		"  lt TIMESTAMP(6) WITH LOCAL TIME ZONE, tags ARRAY<STRING NOT NULL>,\n"
		"  m MAP<STRING, INT>, r ROW<a INT, b ROW(c DOUBLE)>,\n"
		"  PRIMARY KEY (id) NOT ENFORCED\n"
		") PARTITIONED BY (day(ts), bucket(16, id), truncate(4, s), region)\n"
		"WITH ('format-version' = '2', 'write.upsert.enabled' = 'true')");
	if (!sc)
		return;
	sql_stmt *st = sc->stmts[0];
	T_CHECK(st->if_not_exists);
	T_EQ_INT(st->name.n, 3);
	T_EQ_INT(st->n_cols, 7);
	T_EQ_STR(st->cols[1].type->name, "DECIMAL");
	T_EQ_INT(st->cols[1].type->p, 10);
	T_EQ_INT(st->cols[1].type->s, 2);
	T_CHECK(st->cols[1].type->not_null);
	T_EQ_STR(st->cols[2].type->name, "TIMESTAMP_LTZ");
	T_EQ_STR(st->cols[3].type->name, "TIMESTAMP_LTZ");
	T_CHECK(st->cols[4].type->elem->not_null);
	T_EQ_STR(st->cols[5].type->value->name, "INT");
	T_EQ_INT(st->cols[6].type->n_fields, 2);
	T_EQ_STR(st->cols[6].type->fields[1].type->fields[0].name, "c");
	T_EQ_INT(st->n_pk, 1);
	T_EQ_STR(st->pk[0], "id");
	T_EQ_INT(st->n_partition, 4);
	T_EQ_INT(st->partition[1]->kind, SQL_E_CALL);
	T_EQ_STR(st->partition[1]->text, "BUCKET");
	T_EQ_STR(st->partition[3]->name.parts[0], "region");
	T_EQ_INT(st->n_opts, 2);
	T_EQ_STR(st->opts[1].key, "write.upsert.enabled");
	floe_sql__script_free(sc);
}

static void test_dml(void)
{
	sql_script *sc = parse_ok(
		"SET 'execution.checkpointing.interval' = '10s';\n"
		"INSERT INTO orders /*+ OPTIONS('upsert-enabled'='true') */\n"
		"SELECT * FROM kinesis_source WHERE event_type = 'ORDER';\n"
		"EXECUTE STATEMENT SET BEGIN\n"
		"  INSERT INTO a SELECT id, ts FROM s WHERE k IN ('x', 'y') AND NOT v IS NULL;\n"
		"  INSERT INTO b SELECT * FROM s WHERE amount BETWEEN -1 AND 2.5e1;\n"
		"END;\n"
		"SELECT snapshot_id FROM db.t$snapshots /*+ OPTIONS('snapshot-id'='1') */ LIMIT 3");
	if (!sc)
		return;
	T_EQ_INT(sc->n_stmts, 4);
	T_EQ_INT(sc->stmts[0]->kind, SQL_S_SET);
	T_EQ_STR(sc->stmts[0]->key, "execution.checkpointing.interval");
	T_EQ_STR(sc->stmts[0]->value, "10s");
	sql_stmt *ins = sc->stmts[1];
	T_EQ_INT(ins->kind, SQL_S_INSERT);
	T_EQ_INT(ins->n_opts, 1);
	T_EQ_STR(ins->opts[0].key, "upsert-enabled");
	T_EQ_INT(ins->select->items[0]->kind, SQL_E_STAR);
	T_EQ_INT(ins->select->where->kind, SQL_E_BINARY);
	T_EQ_STR(ins->select->where->op, "=");
	sql_stmt *set = sc->stmts[2];
	T_EQ_INT(set->kind, SQL_S_STATEMENT_SET);
	T_EQ_INT(set->n_stmts, 2);
	T_EQ_STR(set->stmts[0]->select->where->op, "AND");
	T_EQ_INT(set->stmts[1]->select->where->kind, SQL_E_BETWEEN);
	sql_select *q = sc->stmts[3]->select;
	T_EQ_STR(q->from.parts[1], "t$snapshots");
	T_EQ_INT(q->n_hints, 1);
	T_EQ_INT(q->limit, 3);
	/* the INSERT's span is its text without the ';' */
	T_EQ_INT(ins->end - ins->off,
		 (int)strlen("INSERT INTO orders /*+ OPTIONS('upsert-enabled'='true') */\n"
			     "SELECT * FROM kinesis_source WHERE event_type = 'ORDER'"));
	floe_sql__script_free(sc);
}

static void test_expressions(void)
{
	sql_script *sc = parse_ok("SELECT a + b * 2 AS x, -c, CAST(d AS DECIMAL(10, 2)), "
				  "CASE WHEN a > 1 THEN 'x' ELSE 'y' END, COUNT(*), "
				  "COUNT(DISTINCT a), u || 'x', DATE '2024-01-01', "
				  "CURRENT_TIMESTAMP - INTERVAL '1' HOUR FROM t "
				  "WHERE NOT (a = 1 OR b <> 2) AND c LIKE 'x%' GROUP BY a ORDER BY x DESC");
	if (!sc)
		return;
	sql_select *q = sc->stmts[0]->select;
	T_EQ_INT(q->n_items, 9);
	T_EQ_STR(q->aliases[0], "x");
	T_EQ_STR(q->items[0]->op, "+");
	T_EQ_STR(q->items[0]->args[1]->op, "*");
	T_EQ_INT(q->items[2]->kind, SQL_E_CAST);
	T_EQ_INT(q->items[3]->kind, SQL_E_CASE);
	T_CHECK(q->items[4]->star);
	T_CHECK(q->items[5]->distinct);
	T_EQ_INT(q->items[7]->kind, SQL_E_TYPED);
	T_EQ_INT(q->items[8]->args[1]->kind, SQL_E_INTERVAL);
	T_EQ_STR(q->items[8]->args[1]->op, "HOUR");
	T_EQ_INT(q->n_group_by, 1);
	T_CHECK(q->order_by[0].desc);
	floe_sql__script_free(sc);
}

static void test_errors_with_caret(void)
{
	T_EQ_STR(parse_err("SELECT a,\n  b FROM t WHERE (a = 1"),
		 "job.sql: line 2, column 24: expected ')', found the end of the input\n"
		 "    b FROM t WHERE (a = 1\n"
		 "                         ^");
	T_EQ_STR(parse_err("CREATE TABLE t (id BIGINT, ts TIMESTAMP WITH TIME ZONE)"),
		 "job.sql: line 1, column 31: TIMESTAMP WITH TIME ZONE is not a Flink type: use "
		 "TIMESTAMP_LTZ (TIMESTAMP WITH LOCAL TIME ZONE)\n"
		 "  CREATE TABLE t (id BIGINT, ts TIMESTAMP WITH TIME ZONE)\n"
		 "                                ^");
	T_EQ_STR(parse_err("SELECT 'open"),
		 "job.sql: line 1, column 8: unterminated string literal\n"
		 "  SELECT 'open\n"
		 "         ^");
	T_EQ_STR(parse_err("SELECT * FROM t /* never closed"),
		 "job.sql: line 1, column 17: unterminated comment\n"
		 "  SELECT * FROM t /* never closed\n"
		 "                  ^");
	T_EQ_STR(parse_err("INSERT INTO t /*+ OPTION('a'='b') */ SELECT * FROM s"),
		 "job.sql: line 1, column 19: unknown hint 'OPTION' (floe knows "
		 "OPTIONS('key'='value', ...))\n"
		 "  INSERT INTO t /*+ OPTION('a'='b') */ SELECT * FROM s\n"
		 "                    ^");
	T_EQ_STR(parse_err("SELECT \"a\" FROM t"),
		 "job.sql: line 1, column 8: double quotes are not a string: use 'text' for strings "
		 "and `name` for identifiers\n"
		 "  SELECT \"a\" FROM t\n"
		 "         ^");
	/* columns count characters, not bytes; a tab stays a tab under the caret */
	T_EQ_STR(parse_err("SELECT 'é',\tFROM"),
		 "job.sql: line 1, column 13: expected an expression, found 'FROM'\n"
		 "  SELECT 'é',\tFROM\n"
		 "             \t^");
	T_EQ_STR(parse_err("CREATE TABLE t (a INT, a INT)"),
		 "job.sql: line 1, column 24: column 'a' appears twice\n"
		 "  CREATE TABLE t (a INT, a INT)\n"
		 "                         ^");
	T_EQ_STR(parse_err("CREATE TABLE t (a INT, PRIMARY KEY (a))"),
		 "job.sql: line 1, column 39: expected NOT ENFORCED: Flink does not enforce primary "
		 "keys, and neither does Iceberg\n"
		 "  CREATE TABLE t (a INT, PRIMARY KEY (a))\n"
		 "                                        ^");
	T_EQ_STR(parse_err("USE db; FOO"),
		 "job.sql: line 1, column 9: expected a statement (CREATE, DROP, ALTER, USE, SHOW, "
		 "DESCRIBE, SET, RESET, INSERT, EXECUTE, SELECT), found 'FOO'\n"
		 "  USE db; FOO\n"
		 "          ^");
	T_EQ_STR(parse_err("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM s;"),
		 "job.sql: line 1, column 1: the statement set has no END\n"
		 "  EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM s;\n"
		 "  ^");
}

static void test_limits(void)
{
	/* nesting is bounded: an error, not a stack overflow */
	size_t n = 20000;
	char *deep = malloc(n * 2 + 32);
	size_t k = 0;
	k += (size_t)snprintf(deep, 32, "SELECT ");
	for (size_t i = 0; i < n; i++)
		deep[k++] = '(';
	deep[k++] = '1';
	for (size_t i = 0; i < n; i++)
		deep[k++] = ')';
	deep[k] = 0;
	T_CHECK(strstr(parse_err(deep), "nests too deeply") != NULL);
	free(deep);
	/* the parser never reads past n: a statement cut inside a token */
	sql_script *sc = NULL;
	floe_error err = {0};
	const char *text = "SELECT 'abc' FROM t";
	T_EQ_INT(floe_sql__parse(&sc, text, 10, NULL, &err), FLOE_EINVAL);
	T_CHECK(strstr(err.msg, "unterminated string literal") != NULL);
	/* empty scripts and stray semicolons are fine */
	sc = parse_ok(" ;; -- nothing\n");
	if (sc)
		T_EQ_INT(sc->n_stmts, 0);
	floe_sql__script_free(sc);
}

int main(void)
{
	T_RUN(test_lexical);
	T_RUN(test_create_table);
	T_RUN(test_dml);
	T_RUN(test_expressions);
	T_RUN(test_errors_with_caret);
	T_RUN(test_limits);
	return t_finish();
}
