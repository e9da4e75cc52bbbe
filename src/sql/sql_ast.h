/*
 * sql_ast.h — the SQL front end's syntax tree and parser: Flink SQL's
 * dialect (Calcite's lexical rules: `backquoted` identifiers, 'strings'
 * with '' for a quote, -- and / * * / comments, / *+ OPTIONS(...) * / hints)
 * for the statements floe runs (catalogs, DDL, SET, INSERT ... SELECT,
 * statement sets, SELECT).
 *
 * Every node lives in the arena of its sql_script and records the byte
 * offset of its first token, so a later stage (binding, execution) can
 * point at it with floe_sql__error_at: "line 3, column 14: ..." followed by
 * the source line and a caret under the column.
 *
 * DESIGN: the parser is recursive descent with one token of lookahead,
 * lexing on demand. Nothing is reserved more than the grammar needs (a
 * column may be called `name`, `value` or `comment` without quotes); the
 * words that end an expression list (FROM, WHERE, ...) cannot be bare
 * aliases. Input is untrusted: nesting is limited (SQL_MAX_DEPTH), every
 * length comes from the text itself, and nothing reads past `n` (the text
 * need not end with a NUL).
 *
 * Thread-safety: a parsed script is immutable; parsing is reentrant.
 */
#ifndef FLOE_SQL_SQL_AST_H
#define FLOE_SQL_SQL_AST_H

#include "floe/common.h"
#include "util/alloc.h"

#define SQL_MAX_DEPTH 128
#define SQL_MAX_TEXT ((size_t)16 << 20)

/* A dotted name: cat.db.t (parts as written, quotes removed). */
typedef struct sql_name {
	const char **parts;
	size_t n;
	uint32_t off;
	bool path; /* FROM '/data/t' or a metadata file: parts[0] is the path (n == 1) */
	/* FROM iceberg_metadata('/data/t', version = '2'): DuckDB's metadata table
	 * functions over a table by path (path is set, parts[0] the path); func is
	 * the function's name in lower case, args its named arguments (keys in
	 * lower case, values as text) */
	const char *func;
	struct sql_opt *args;
	size_t n_args;
} sql_name;

typedef struct sql_opt {
	const char *key, *value;
	uint32_t off;
} sql_opt;

typedef struct sql_column sql_column;

/* A Flink data type. name is upper case, as written (INT, VARCHAR, ...).
 * TIMESTAMP WITH LOCAL TIME ZONE is named TIMESTAMP_LTZ. */
typedef struct sql_type {
	const char *name;
	int32_t p, s; /* -1 when not written */
	bool not_null;
	struct sql_type *elem;         /* ARRAY, MULTISET */
	struct sql_type *key, *value;  /* MAP */
	sql_column *fields;            /* ROW */
	size_t n_fields;
	uint32_t off;
} sql_type;

typedef enum sql_expr_kind {
	SQL_E_COL = 1, /* name */
	SQL_E_STAR,    /* * or t.* (name holds the qualifier) */
	SQL_E_STR,     /* text */
	SQL_E_NUM,     /* text as written */
	SQL_E_BOOL,    /* text "TRUE" / "FALSE" */
	SQL_E_NULL,
	SQL_E_TYPED,   /* DATE '...', TIME, TIMESTAMP, TIMESTAMP_LTZ: text = keyword, args[0] STR */
	SQL_E_INTERVAL, /* INTERVAL 'v' UNIT: text = value, op = unit */
	SQL_E_UNARY,   /* op "-", "+", "NOT" */
	SQL_E_BINARY,  /* op AND OR = <> < <= > >= + - * / % || */
	SQL_E_CALL,    /* text = function name (upper case), args; star: COUNT(*) */
	SQL_E_CAST,    /* args[0], type */
	SQL_E_CASE,    /* args: [operand or NULL], when, then, ..., [else or NULL] */
	SQL_E_IS,      /* args[0] IS [NOT] NULL|TRUE|FALSE: text "NULL", "TRUE", "FALSE" */
	SQL_E_IN,      /* args[0] [NOT] IN (args[1..]), or IN (SELECT ...): sub, n_args 1 */
	SQL_E_BETWEEN, /* args[0] [NOT] BETWEEN args[1] AND args[2] */
	SQL_E_LIKE,    /* args[0] [NOT] LIKE args[1] */
	SQL_E_SUBQUERY, /* (SELECT ...) as a value: sub */
	SQL_E_EXISTS,  /* [NOT] EXISTS (SELECT ...): sub */
} sql_expr_kind;

typedef struct sql_expr {
	sql_expr_kind kind;
	uint32_t off, end; /* source span [off, end) */
	const char *op;
	const char *text;
	sql_name name;
	struct sql_expr **args;
	size_t n_args;
	bool negated;  /* NOT IN, IS NOT, NOT BETWEEN, NOT LIKE */
	bool distinct; /* COUNT(DISTINCT x) */
	bool star;     /* COUNT(*) */
	sql_type *type;
	struct sql_select *sub; /* SQL_E_SUBQUERY, SQL_E_EXISTS, IN (SELECT ...) */
} sql_expr;

struct sql_column {
	const char *name;
	sql_type *type;    /* NULL for a computed column */
	sql_expr *expr;    /* computed column: name AS expr */
	const char *comment;
	const char *metadata; /* METADATA [FROM 'key'] ("" without FROM) */
	bool primary_key;  /* inline PRIMARY KEY NOT ENFORCED */
	uint32_t off;
};

typedef struct sql_order {
	sql_expr *expr;
	bool desc;
	int nulls; /* 0: as written nothing (NULLS LAST), 1: NULLS FIRST, 2: NULLS LAST */
	bool all;  /* ORDER BY ALL (DuckDB's): every output column, left to right; expr NULL */
} sql_order;

/* A joined table: [INNER] JOIN, LEFT [OUTER] JOIN, RIGHT, FULL, CROSS JOIN or ','. */
typedef struct sql_join {
	char kind; /* 'I' inner, 'L' left, 'R' right, 'F' full, 'C' cross (or a comma) */
	sql_name table;
	const char *alias; /* NULL when none */
	sql_opt *hints;
	size_t n_hints;
	sql_expr *on;      /* NULL for CROSS / ',' */
	uint32_t off;
	struct sql_select *sub; /* JOIN (SELECT ...) [AS] x: table unused */
	/* CROSS JOIN UNNEST(expr) [WITH ORDINALITY] [AS] x [(c1, ...)] (or ", UNNEST ..."):
	 * a row per element of the array (or entry of the map) expr of the row
	 * to the left; table unused */
	sql_expr *unnest;
	bool ordinality;
	const char **col_names; /* NULL: the defaults (also JOIN (...) x (c1, ...)) */
	size_t n_col_names;
} sql_join;

typedef struct sql_select {
	sql_expr **items;
	const char **aliases; /* NULL when none */
	size_t n_items;
	bool distinct;
	sql_name from;        /* n == 0: no FROM */
	sql_opt *hints;       /* OPTIONS hint on the table */
	size_t n_hints;
	const char *from_alias; /* FROM t [AS] x: NULL when none */
	const char **from_cols; /* FROM (...) [AS] x (c1, ...): the derived table's column names */
	size_t n_from_cols;
	bool has_join;        /* a JOIN or a second table (joins[0..n_joins)) */
	uint32_t join_off;
	sql_join *joins;
	size_t n_joins;
	sql_expr *where;
	sql_expr **group_by;
	size_t n_group_by;
	bool group_all; /* GROUP BY ALL (DuckDB's): every item without an aggregate */
	sql_expr *having;
	sql_order *order_by;
	size_t n_order_by;
	int64_t limit; /* -1: none */
	int64_t offset; /* OFFSET n [ROWS]: 0 when none */
	uint32_t off, limit_off;
	struct sql_select *from_sub; /* FROM (SELECT ...) [AS] x: from unused (n == 0) */
	/* UNION|EXCEPT|INTERSECT [ALL] union_next: this select is the first branch; the ORDER BY,
	 * LIMIT and OFFSET after the last branch apply to the whole union and are
	 * kept here (u_*), not in the last branch */
	struct sql_select *union_next;
	bool union_all; /* ALL: duplicates kept (counted, for EXCEPT and INTERSECT) */
	char set_op;    /* of union_next: 'U' UNION, 'E' EXCEPT (and MINUS), 'I' INTERSECT */
	sql_order *u_order_by;
	size_t n_u_order_by;
	int64_t u_limit, u_offset;
} sql_select;

typedef enum sql_stmt_kind {
	SQL_S_CREATE_CATALOG = 1,
	SQL_S_USE_CATALOG,
	SQL_S_USE,
	SQL_S_CREATE_DATABASE,
	SQL_S_DROP_DATABASE,
	SQL_S_DROP_CATALOG,
	SQL_S_SHOW,         /* what: CATALOGS DATABASES TABLES CURRENT_CATALOG CURRENT_DATABASE */
	SQL_S_SHOW_CREATE_TABLE,
	SQL_S_DESCRIBE,
	SQL_S_CREATE_TABLE,
	SQL_S_DROP_TABLE,
	SQL_S_ALTER_TABLE,
	SQL_S_SET,          /* key NULL: list */
	SQL_S_RESET,        /* key NULL: all */
	SQL_S_INSERT,
	SQL_S_STATEMENT_SET,
	SQL_S_SELECT,
} sql_stmt_kind;

typedef enum sql_alter_kind {
	SQL_A_SET = 1,      /* opts */
	SQL_A_RESET,        /* keys */
	SQL_A_RENAME,       /* to */
	SQL_A_ADD_COLUMN,   /* cols (one or a parenthesised list) */
	SQL_A_RENAME_COLUMN, /* col, new_col */
	SQL_A_DROP_COLUMN,  /* keys: column names */
	SQL_A_MODIFY,       /* cols: MODIFY col type [NOT NULL] (widen, or make optional) */
	SQL_A_ADD_PARTITION,     /* text: ADD PARTITION FIELD bucket(16, id) */
	SQL_A_DROP_PARTITION,    /* text: DROP PARTITION FIELD id_bucket | bucket(16, id) */
	SQL_A_REPLACE_PARTITION, /* text WITH text2 */
	SQL_A_WRITE_ORDER,       /* text: WRITE [LOCALLY] ORDERED BY ... | WRITE UNORDERED ("unsorted") */
	SQL_A_CREATE_BRANCH,     /* col: the name; snapshot, retain_ms, or_replace, if_not_exists */
	SQL_A_CREATE_TAG,
	SQL_A_DROP_BRANCH,       /* col: the name; ref_if_exists */
	SQL_A_DROP_TAG,
} sql_alter_kind;

typedef struct sql_stmt {
	sql_stmt_kind kind;
	uint32_t off, end; /* source span, without the ';' */
	sql_name name;     /* the object (catalog, database, table); INSERT target */
	bool if_not_exists, if_exists, temporary, cascade, overwrite;
	sql_opt *opts;     /* WITH (...), ALTER SET (...), INSERT hint OPTIONS */
	size_t n_opts;
	/* CREATE TABLE */
	sql_column *cols;
	size_t n_cols;
	const char **pk;
	size_t n_pk;
	uint32_t pk_off;
	sql_expr **partition;
	size_t n_partition;
	const char *comment;
	sql_name like;
	bool has_watermark;
	/* ALTER TABLE */
	sql_alter_kind alter;
	const char **keys;
	size_t n_keys;
	sql_name to;
	const char *col, *new_col;
	/* ALTER TABLE's Spark-style clauses: the expression text as written (backquotes dropped) */
	const char *text, *text2;
	int64_t ref_snapshot;   /* CREATE BRANCH|TAG ... AS OF VERSION n: -1 none */
	int64_t ref_retain_ms;  /* RETAIN n DAYS|HOURS|MINUTES: -1 none */
	int64_t ref_keep;       /* WITH SNAPSHOT RETENTION n SNAPSHOTS: -1 none */
	int64_t ref_keep_ms;    /* ... [n SNAPSHOTS] m DAYS: -1 none */
	bool ref_or_replace, ref_if_not_exists, ref_if_exists;
	/* SHOW */
	const char *what;
	/* SET / RESET */
	const char *key, *value;
	/* INSERT (partition: a static PARTITION (k = v) clause; values: VALUES rows) */
	uint32_t partition_off, values_off;
	sql_expr **values;
	size_t n_values;
	const char **insert_cols;
	size_t n_insert_cols;
	sql_select *select;
	/* statement set */
	struct sql_stmt **stmts;
	size_t n_stmts;
} sql_stmt;

typedef struct sql_script {
	floe_arena arena;
	const char *text; /* the source (borrowed: must outlive the script) */
	size_t n;
	const char *origin; /* file name for messages, or NULL */
	sql_stmt **stmts;
	size_t n_stmts;
} sql_script;

/*
 * Parse a script (statements separated by ';'). On error *out is NULL and
 * err says where, with the line and a caret (FLOE_EINVAL). text is
 * borrowed: it must outlive the script. origin (may be NULL) names the
 * source in messages. The caller frees *out with floe_sql__script_free.
 */
int floe_sql__parse(sql_script **out, const char *text, size_t n, const char *origin,
		    floe_error *err) FLOE_WUR;
void floe_sql__script_free(sql_script *s);

/*
 * Set err to code and "[origin, ]line L, column C: <message>" followed by
 * the source line and a caret under column C (columns count characters,
 * from 1). Returns code.
 */
int floe_sql__error_at(floe_error *err, int code, const char *text, size_t n, const char *origin,
		       uint32_t off, const char *fmt, ...) FLOE_PRINTF(7, 8);

/* "a.b.c" (arena). */
const char *floe_sql__name_str(floe_arena *a, const sql_name *nm);

#endif
