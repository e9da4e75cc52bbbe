"""floe sql: computed projections in streaming INSERT ... SELECT.

* string, decimal, date/time, CASE, CAST, COALESCE and JSON functions in an
  INSERT's SELECT: every row the table holds equals DuckDB's answer to the
  same SELECT over the same input, column by column (exact decimals, typed
  timestamps);
* a record whose CAST fails is its dead letter (reason and record) and the
  job goes on; with --errors fail the job ends and commits nothing;
* a statement set with a different projection per table reads its source
  once;
* (the kill test of test_sql.py runs a computed projection too.)
"""
import datetime
import decimal
import json
import re

from conftest import duckdb_connection
from test_sql import run_sql

HEAD = ("CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='wh');\n"
        "USE CATALOG c;\nCREATE DATABASE IF NOT EXISTS db;\n")

SOURCE = ("CREATE TABLE src (id BIGINT, s STRING, amount DECIMAL(10, 2), ts TIMESTAMP(6), "
          "code STRING, payload STRING) WITH ('connector'='filesystem', 'path'='in', "
          "'format'='json');\n")

# floe's SELECT items, and DuckDB's spelling of the same (Flink's functions)
ITEMS = [
    ("id", "BIGINT", "id", "id"),
    ("us", "STRING", "UPPER(s)", "upper(s)"),
    ("a2", "DECIMAL(12, 2)", "amount * 2", "amount * 2"),
    ("d", "DATE", "CAST(ts AS DATE)", "CAST(ts AS DATE)"),
    ("band", "STRING",
     "CASE WHEN amount > 100 THEN 'big' WHEN amount > 0 THEN 'small' ELSE 'neg' END",
     "CASE WHEN amount > 100 THEN 'big' WHEN amount > 0 THEN 'small' ELSE 'neg' END"),
    ("city", "STRING", "COALESCE(JSON_VALUE(payload, '$.city'), 'none')",
     "COALESCE(json_extract_string(payload, '$.city'), 'none')"),
    ("hour_text", "STRING", "DATE_FORMAT(ts, 'yyyy-MM-dd HH')", "strftime(ts, '%Y-%m-%d %H')"),
    ("hr", "TIMESTAMP(6)", "FLOOR(ts TO HOUR)", "date_trunc('hour', ts)"),
    ("code_int", "INT", "CAST(code AS INT)", "CAST(code AS INTEGER)"),
    ("sub", "STRING", "SUBSTRING(LOWER(s), 2, 3)", "substring(lower(s), 2, 3)"),
    ("net", "DECIMAL(14, 3)", "amount * 1.5 - 0.125", "amount * 1.5 - 0.125"),
    ("h", "INT", "EXTRACT(HOUR FROM ts)", "CAST(extract(hour FROM ts) AS INTEGER)"),
    # the branch not taken is not evaluated (its CAST would fail for the x codes)
    ("code2", "INT", "CASE WHEN code LIKE 'x%' THEN -1 ELSE CAST(code AS INT) * 2 END",
     "CASE WHEN code LIKE 'x%' THEN -1 ELSE TRY_CAST(code AS INTEGER) * 2 END"),
    ("tag", "STRING", "CONCAT(TRIM(s), '-', CAST(id AS STRING))",
     "trim(s) || '-' || CAST(id AS VARCHAR)"),
]

BAD_CODES = {17, 101, 233}  # these records' code is not a number: CAST fails


def records(n):
    cities = ["Oslo", "Lima", None, "Kyiv"]
    lines = []
    for i in range(1, n + 1):
        cents = (i * 7919) % 40000 - 5000
        r = [f'"id": {i}']
        if i % 11:
            r.append(f'"s": {json.dumps(f"  Item{chr(97 + i % 26)}{i} ")}')
        if i % 13:
            sign = "-" if cents < 0 else ""
            r.append(f'"amount": {sign}{abs(cents) // 100}.{abs(cents) % 100:02d}')
        r.append(f'"ts": "2024-03-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}.{i:06d}"')
        r.append(f'"code": "{"x" if i in BAD_CODES else ""}{i * 3}"')
        city = cities[i % 4]
        if i % 5:
            r.append('"payload": ' + json.dumps(json.dumps({"city": city, "n": i}) if city
                                                else json.dumps({"n": i})))
        lines.append("{" + ", ".join(r) + "}\n")
    return "".join(lines)


def table_rows(cwd, name):
    con = duckdb_connection()
    meta = sorted((cwd / "wh" / "db" / name / "metadata").glob("v*.metadata.json"),
                  key=lambda p: int(p.name[1:].split(".")[0]))[-1]
    return con.execute(f"SELECT * FROM iceberg_scan('{meta}') ORDER BY id").fetchall()


def duck_rows(cwd, items, where="id > 0", drop_bad=True):
    con = duckdb_connection()
    cols = ("{'id': 'BIGINT', 's': 'VARCHAR', 'amount': 'DECIMAL(10,2)', 'ts': 'TIMESTAMP', "
            "'code': 'VARCHAR', 'payload': 'VARCHAR'}")
    sel = ", ".join(f"{d} AS {c}" for c, _, _, d in items)
    src = f"read_json('{cwd}/in/*.jsonl', columns={cols}, format='newline_delimited')"
    bad = "(TRY_CAST(code AS INTEGER) IS NOT NULL OR code IS NULL)" if drop_bad else "true"
    return con.execute(f"SELECT {sel} FROM {src} WHERE ({where}) AND {bad} "
                       f"ORDER BY id").fetchall()


def norm(v):
    if isinstance(v, decimal.Decimal):
        return ("dec", v.normalize())
    if isinstance(v, datetime.datetime):
        return v.replace(tzinfo=None)
    return v


def test_computed_projection_equals_duckdb(tmp_path):
    n = 300
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text(records(n))
    cols = ", ".join(f"{c} {t}" for c, t, _, _ in ITEMS)
    sel = ", ".join(f for _, _, f, _ in ITEMS)
    (tmp_path / "job.sql").write_text(
        HEAD + SOURCE + f"CREATE TABLE IF NOT EXISTS db.t ({cols});\n"
        f"INSERT INTO db.t SELECT {sel} FROM src WHERE id > 0;\n")
    p = run_sql(tmp_path, "-f", "job.sql")
    assert f"{n} records read, {n - len(BAD_CODES)} committed" in p.stdout, p.stdout
    assert f"{len(BAD_CODES)} dead-lettered" in p.stdout, p.stdout
    got = table_rows(tmp_path, "t")
    want = duck_rows(tmp_path, ITEMS)
    assert len(got) == len(want) == n - len(BAD_CODES)
    for g, w in zip(got, want):
        for (c, _, _, _), gv, wv in zip(ITEMS, g, w):
            assert norm(gv) == norm(wv), f"id {g[0]}, column {c}: floe {gv!r}, DuckDB {wv!r}"
    # the types are the table's (no text or float in between)
    assert isinstance(got[0][2], decimal.Decimal) and isinstance(got[0][7], datetime.datetime)
    # the records whose CAST failed are dead letters, with the reason
    dead = [json.loads(line) for line in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    assert sorted(json.loads(d["record"])["id"] for d in dead) == sorted(BAD_CODES)
    assert all("cannot CAST" in d["reason"] and d["table"] == "db.t" for d in dead), dead
    # a second run reads nothing again
    p = run_sql(tmp_path, "-f", "job.sql")
    assert "0 committed" in p.stdout, p.stdout
    assert len(table_rows(tmp_path, "t")) == n - len(BAD_CODES)


def test_errors_fail_ends_the_job(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text(records(40))
    (tmp_path / "job.sql").write_text(
        HEAD + SOURCE + "CREATE TABLE IF NOT EXISTS db.t (id BIGINT, code_int INT);\n"
        "INSERT INTO db.t SELECT id, CAST(code AS INT) FROM src;\n")
    p = run_sql(tmp_path, "--errors", "fail", "-f", "job.sql", check=False)
    assert p.returncode == 1
    assert "cannot CAST 'x51' to INT" in p.stderr, p.stderr
    assert not list((tmp_path / "wh" / "db" / "t" / "data").glob("*.parquet")) or \
        not table_rows(tmp_path, "t")


def test_statement_set_projections_read_the_source_once(tmp_path):
    n = 120
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text(records(n))
    (tmp_path / "job.sql").write_text(
        HEAD + SOURCE +
        "CREATE TABLE IF NOT EXISTS db.big (id BIGINT, us STRING, a2 DECIMAL(12, 2));\n"
        "CREATE TABLE IF NOT EXISTS db.hours (id BIGINT, hr TIMESTAMP(6), d DATE);\n"
        "CREATE TABLE IF NOT EXISTS db.raw (id BIGINT, s STRING, c2 INT);\n"
        "EXECUTE STATEMENT SET BEGIN\n"
        "INSERT INTO db.big SELECT id, UPPER(s), amount * 2 FROM src WHERE amount > 100;\n"
        "INSERT INTO db.hours SELECT id, FLOOR(ts TO HOUR), CAST(ts AS DATE) FROM src;\n"
        "INSERT INTO db.raw SELECT id, s, CASE WHEN code LIKE 'x%' THEN -1 ELSE "
        "CAST(code AS INT) END FROM src WHERE id <= 20;\n"
        "END;\n")
    p = run_sql(tmp_path, "-f", "job.sql")
    assert re.search(rf"\b{n} records read", p.stdout), p.stdout
    big = ITEMS[:3]
    assert table_rows(tmp_path, "big") == duck_rows(tmp_path, big, "amount > 100", False)
    hours = [ITEMS[0], ITEMS[7], ITEMS[3]]
    assert [tuple(map(norm, r)) for r in table_rows(tmp_path, "hours")] == \
        [tuple(map(norm, r)) for r in duck_rows(tmp_path, hours, "true", False)]
    # the CASE branch not taken is not evaluated: id 17's code 'x51' is no dead letter
    assert "0 dead-lettered" in p.stdout, p.stdout
    assert [(r[0], r[2]) for r in table_rows(tmp_path, "raw")] == \
        [(i, -1 if i in BAD_CODES else 3 * i) for i in range(1, 21)]


def test_source_columns_taken_whole_and_not_null_rows(tmp_path):
    """Source columns go into the table as they are (one column copied into two,
    a rename), and a NULL for a NOT NULL column makes its record a dead letter
    while the rest of its batch is written."""
    n = 200
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text(records(n))
    (tmp_path / "job.sql").write_text(
        HEAD + SOURCE + "CREATE TABLE IF NOT EXISTS db.t (id BIGINT NOT NULL, s STRING NOT NULL, "
        "s2 STRING, amt DECIMAL(10, 2), a DECIMAL(12, 2));\n"
        "INSERT INTO db.t SELECT id, s, s, amount, amount + 1 FROM src;\n")
    p = run_sql(tmp_path, "-f", "job.sql")
    nulls = [i for i in range(1, n + 1) if i % 11 == 0]  # records without s
    assert f"{len(nulls)} dead-lettered" in p.stdout, p.stdout
    items = [("id", "", "", "id"), ("s", "", "", "s"), ("s2", "", "", "s"),
             ("amt", "", "", "amount"), ("a", "", "", "amount + 1")]
    want = duck_rows(tmp_path, items, "s IS NOT NULL", False)
    assert table_rows(tmp_path, "t") == want
    dead = [json.loads(line) for line in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    assert sorted(json.loads(d["record"])["id"] for d in dead) == nulls
    assert all("column 's' is NOT NULL" in d["reason"] for d in dead), dead[0]


def test_computed_where_equals_duckdb(tmp_path):
    """A WHERE that floe's routing filter cannot say (functions, arithmetic,
    column against column) is evaluated with the projection: the rows equal
    DuckDB's, and a plain SELECT list goes through the projection for it."""
    n = 300
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text(records(n))
    # CAST(code AS INT) fails for ids 17, 101 and 233, where MOD(id, 7) = 0 is false: as
    # in Flink the AND stops there, so no dead letter
    where = ("MOD(id, 7) = 0 AND CAST(code AS INT) > 30 AND amount * 2 > id "
             "OR UPPER(TRIM(s)) LIKE 'ITEMZ%'")
    duck_where = ("id % 7 = 0 AND TRY_CAST(code AS INTEGER) > 30 AND amount * 2 > id "
                  "OR upper(trim(s)) LIKE 'ITEMZ%'")
    (tmp_path / "job.sql").write_text(
        HEAD + SOURCE +
        "CREATE TABLE IF NOT EXISTS db.w (id BIGINT, s STRING, amount DECIMAL(10, 2));\n"
        "CREATE TABLE IF NOT EXISTS db.u (id BIGINT, us STRING);\n"
        "EXECUTE STATEMENT SET BEGIN\n"
        f"INSERT INTO db.w SELECT id, s, amount FROM src WHERE {where};\n"
        "INSERT INTO db.u SELECT id, UPPER(s) FROM src WHERE id <= 20;\n"
        "END;\n")
    p = run_sql(tmp_path, "-f", "job.sql")
    assert "0 dead-lettered" in p.stdout, p.stdout
    items = [("id", "", "", "id"), ("s", "", "", "s"), ("amount", "", "", "amount")]
    want = duck_rows(tmp_path, items, duck_where, False)
    assert len(want) > 20
    assert table_rows(tmp_path, "w") == want
    assert [r[0] for r in table_rows(tmp_path, "u")] == list(range(1, 21))
