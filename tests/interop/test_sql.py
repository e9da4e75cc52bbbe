"""floe sql: Flink SQL scripts run, and other engines read what they wrote.

* tests/sql/shop.sql (a JDBC catalog on SQLite, a table with every Flink
  type, primary key, transforms and properties, a statement set routing one
  JSON source to three tables): PyIceberg reads the schema, the partition
  spec, the properties and each table's rows (exactly the routed input);
  DuckDB reads the same rows; the SELECTs print aligned tables;
* running the script again reads nothing twice (the job resumes keyed by
  its statement); new input is picked up once;
* tests/sql/shop_alter.sql: ALTER TABLE SET/RESET/ADD/RENAME/DROP COLUMN and
  RENAME TO, as PyIceberg sees them;
* a job killed (SIGKILL) ten times and restarted with the same script holds
  every record exactly once;
* bad SQL: a message with line, column and caret, and nothing changes;
* the examples of docs/sql.md run as written.
"""
import decimal
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, duckdb_connection, floe_bin

SQL = ROOT / "tests" / "sql"


def run_sql(cwd, *args, check=True, timeout=120):
    p = subprocess.run([floe_bin(), "sql", *map(str, args)], cwd=cwd, capture_output=True,
                       text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"floe sql {args} failed ({p.returncode}):\n{p.stderr}{p.stdout}")
    return p


def events(n, start=0):
    kinds = ["click", "buy", "refund", "view"]
    rows = []
    for i in range(start, start + n):
        rows.append({"id": i, "kind": kinds[i % 4], "amount": f"{(i * 37) % 1200 - 100}.250",
                     "lts": f"2024-03-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"})
    return rows


def write_events(folder, name, rows):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / name, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def shop_catalog(cwd):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("shop", uri=f"sqlite:///{cwd}/catalog.db", warehouse=f"file://{cwd}/warehouse")


def expected(rows):
    clicks = [r for r in rows if r["kind"] == "click"]
    buys = [r for r in rows if r["kind"] in ("buy", "refund") and decimal.Decimal(r["amount"]) > 0]
    big = [r for r in rows if 50 <= decimal.Decimal(r["amount"]) <= 1000]
    return clicks, buys, big


def ids(table):
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def test_shop_script_read_by_pyiceberg_and_duckdb(tmp_path):
    shutil.copy(SQL / "shop.sql", tmp_path)
    rows = events(400)
    write_events(tmp_path / "input" / "events", "part-0.jsonl", rows)
    out = run_sql(tmp_path, "-f", "shop.sql").stdout
    cat = shop_catalog(tmp_path)
    clicks, buys, big = expected(rows)

    every = cat.load_table("sales.everything")
    schema = every.schema()
    types = {f.name: str(f.field_type) for f in schema.fields}
    nested = {k: types.pop(k) for k in ("tags", "attrs", "loc")}
    assert types == {
        "id": "long", "i": "int", "s": "int", "b": "boolean", "f": "float", "d": "double",
        "amount": "decimal(12, 3)", "name": "string", "code": "string", "day_": "date",
        "ts": "timestamp", "lts": "timestamptz", "raw": "binary",
    }
    assert nested["tags"].startswith("list<") and nested["attrs"].startswith("map<")
    assert nested["loc"].startswith("struct<")
    assert schema.find_field("id").required and schema.find_field("id").doc == "the key"
    assert list(schema.identifier_field_ids) == [schema.find_field("id").field_id]
    spec = [(f.name, str(f.transform)) for f in every.spec().fields]
    assert spec == [("lts_day", "day"), ("id_bucket", "bucket[4]"), ("name_trunc", "truncate[2]")]
    assert every.properties["write.parquet.compression-codec"] == "snappy"
    assert every.properties["comment"] == "every type"
    assert every.metadata.format_version == 2

    assert ids(cat.load_table("sales.clicks")) == sorted(r["id"] for r in clicks)
    assert ids(cat.load_table("sales.buys")) == sorted(r["id"] for r in buys)
    assert ids(cat.load_table("sales.big")) == sorted(r["id"] for r in big)
    got = cat.load_table("sales.big").scan().to_arrow().to_pylist()
    assert sorted(decimal.Decimal(r["amount"]) for r in got) == sorted(decimal.Decimal(r["amount"]) for r in big)

    con = duckdb_connection()
    loc = cat.load_table("sales.buys").metadata_location
    n = con.execute(f"SELECT count(*), count(DISTINCT id) FROM iceberg_scan('{loc}')").fetchone()
    assert n == (len(buys), len(buys))

    # the SELECTs: two clicks with id < 10, the snapshot, the files
    assert "| id | kind  | amount   |\n" in out
    assert "| 0  | click | -100.250 |\n" in out
    assert "2 rows in set" in out
    assert "| append    | <NULL>    |" in out
    assert "[INFO] job sql-" in out

    # again: nothing is read twice; new input is read once
    run_sql(tmp_path, "-f", "shop.sql")
    assert ids(shop_catalog(tmp_path).load_table("sales.clicks")) == sorted(r["id"] for r in clicks)
    more = events(100, start=400)
    write_events(tmp_path / "input" / "events", "part-1.jsonl", more)
    run_sql(tmp_path, "-f", "shop.sql")
    clicks2, buys2, _ = expected(rows + more)
    cat = shop_catalog(tmp_path)
    assert ids(cat.load_table("sales.clicks")) == sorted(r["id"] for r in clicks2)
    assert ids(cat.load_table("sales.buys")) == sorted(r["id"] for r in buys2)
    snap = cat.load_table("sales.clicks").current_snapshot()
    assert snap.summary["floe.pipeline-id"].startswith("sql-")

    # the ALTER statements
    shutil.copy(SQL / "shop_alter.sql", tmp_path)
    out = run_sql(tmp_path, "-f", "shop_alter.sql").stdout
    cat = shop_catalog(tmp_path)
    t = cat.load_table("sales.clicks")
    assert t.properties["write.target-file-size-bytes"] == "134217728"
    assert "commit.retry.num-retries" not in t.properties
    names = [f.name for f in t.schema().fields]
    assert names == ["id", "kind", "amount", "lts", "remark", "extra"]
    assert t.schema().find_field("remark").doc == "added later"
    assert len(t.scan().to_arrow()) == len(clicks2)  # old rows read with the new schema
    assert ("sales", "large") in cat.list_tables("sales")
    assert "| remark |" in out.replace("  ", " ") or "remark" in out


KILL_JOBS = {
    "columns": ("CREATE TABLE IF NOT EXISTS db.t (id BIGINT, kind STRING, amount DECIMAL(12, 3), "
                "lts TIMESTAMP_LTZ(6));\n", "INSERT INTO db.t SELECT * FROM gen;\n"),
    # a computed projection: evaluated in the writer tasks, between decode and write
    "computed": ("CREATE TABLE IF NOT EXISTS db.t (id BIGINT, kind STRING, amount DECIMAL(14, 3), "
                 "d DATE);\n",
                 "INSERT INTO db.t SELECT id, UPPER(kind), amount * 2 - 1, CAST(lts AS DATE) "
                 "FROM gen;\n"),
}


@pytest.mark.parametrize("job", sorted(KILL_JOBS))
def test_killed_job_restarts_exactly_once(tmp_path, job):
    """A datagen job (a sequence of ids at a fixed rate) killed with SIGKILL
    at random moments and restarted with the same script: every id once."""
    n = 60000 if job == "columns" else 30000
    table, insert = KILL_JOBS[job]
    (tmp_path / "job.sql").write_text(
        "CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='wh');\n"
        "USE CATALOG c;\nCREATE DATABASE IF NOT EXISTS db;\n"
        "SET 'execution.checkpointing.interval' = '100ms';\n"
        "SET 'parallelism.default' = '2';\n" + table +
        "CREATE TABLE gen (id BIGINT, kind STRING, amount DECIMAL(12, 3), lts TIMESTAMP_LTZ(6)) "
        f"WITH ('connector'='datagen', 'rows-per-second'='{n // 6}', "
        "'fields.id.kind'='sequence', "
        f"'fields.id.start'='1', 'fields.id.end'='{n}');\n" + insert)
    rnd = random.Random(15)
    kills = 0
    for _ in range(16):  # ten kills at random moments (a run that ended is not one)
        if kills == 10:
            break
        p = subprocess.Popen([floe_bin(), "sql", "-f", "job.sql"], cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rnd.uniform(0.2, 0.6))
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            kills += 1
        p.wait()
    assert kills == 10
    run_sql(tmp_path, "-f", "job.sql")
    con = duckdb_connection()
    meta = sorted((tmp_path / "wh" / "db" / "t" / "metadata").glob("v*.metadata.json"),
                  key=lambda p: int(p.name[1:].split(".")[0]))[-1]
    got = con.execute(f"SELECT count(*), count(DISTINCT id), min(id), max(id) "
                      f"FROM iceberg_scan('{meta}')").fetchone()
    assert got == (n, n, 1, n), f"after {kills} kills"
    if job == "computed":
        bad = con.execute(f"SELECT count(*) FROM iceberg_scan('{meta}') "
                          f"WHERE kind <> upper(kind) OR kind IS NULL OR d IS NULL").fetchone()
        assert bad == (0,)


BAD = [
    ("SELECT a,\n  b FROM t WHERE (a = 1",
     "line 2, column 24: expected ')', found the end of the input\n"
     "    b FROM t WHERE (a = 1\n"
     "                         ^"),
    ("CREATE TABLE db.t (id BIGINT, x FOO);",
     "line 1, column 33: unknown data type 'FOO'"),
    ("CREATE TABLE db.t (id BIGINT) WITH ('write.format.default' = 'orc');",
     "line 1, column 37: "),
    ("SELECT nope FROM db.base;", "line 1, column 8: unknown column 'nope'"),
    ("CREATE CATALOG r WITH ('type'='iceberg', 'catalog-type'='hive', 'uri'='thrift://x:9083');",
     "line 1, column 42: catalog-type 'hive' is not supported yet"),
    ("CREATE CATALOG r WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehous'='w');",
     "line 1, column 67: unknown catalog option 'warehous'"),
    ("CREATE TABLE s (id BIGINT, v STRING) WITH ('connector'='filesystem', 'path'='in', "
     "'format'='json');\nINSERT INTO db.base SELECT id, v FROM s;",
     "line 2, column 32: this is STRING and column 'v' is BIGINT: CAST it"),
    ("CREATE TABLE s (id BIGINT, v BIGINT) WITH ('connector'='filesystem', 'path'='in', "
     "'format'='json');\nINSERT INTO db.base SELECT id, FOO(v) + 1 FROM s;",
     "line 2, column 32: unknown function 'FOO'"),
    ("CREATE TABLE s (id BIGINT, v BIGINT) WITH ('connector'='filesystem', 'path'='in', "
     "'format'='json');\nINSERT INTO db.base SELECT id, v + DATE '2024-01-01' FROM s;",
     "line 2, column 32: BIGINT + DATE is not defined"),
    ("CREATE TABLE s (id BIGINT, v BIGINT) WITH ('connector'='filesystem', 'path'='in', "
     "'format'='json');\nINSERT INTO db.base SELECT id, v * nope FROM s;",
     "line 2, column 36: unknown column 'nope'"),
    ("CREATE TABLE s (id BIGINT, v BIGINT) WITH ('connector'='upsert-kafka', 'topic'='x');",
     "line 1, column 44: connector 'upsert-kafka' is not supported by floe sql yet"),
]


@pytest.mark.parametrize("stmt,msg", BAD)
def test_bad_sql_points_at_it_and_changes_nothing(tmp_path, stmt, msg):
    head = ("CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='wh');"
            "USE CATALOG c; CREATE DATABASE IF NOT EXISTS db;"
            "CREATE TABLE IF NOT EXISTS db.base (id BIGINT, v BIGINT);")
    run_sql(tmp_path, "-e", head)
    before = sorted(str(p) for p in (tmp_path / "wh").rglob("*"))
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text('{"id": 1, "v": 2}\n')
    p = run_sql(tmp_path, "-e", "CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', "
                "'warehouse'='wh');\nUSE CATALOG c;\nUSE db;\n" + stmt, check=False)
    assert p.returncode == 1
    # lines count from the statement's own line: three lines of setup come first
    m = re.search(r"line (\d+), column", p.stderr)
    assert m, p.stderr
    want = msg.replace("line 1,", "line 4,").replace("line 2,", "line 5,")
    assert want in p.stderr, p.stderr
    assert p.stderr.rstrip().endswith("^"), p.stderr
    assert sorted(str(p) for p in (tmp_path / "wh").rglob("*")) == before


def test_docs_sql_examples_run(tmp_path):
    """The ```sql blocks of docs/sql.md, in order, are one script that runs."""
    text = (ROOT / "docs" / "sql.md").read_text()
    blocks = re.findall(r"```sql\n(.*?)```", text, re.S)
    assert len(blocks) >= 3
    write_events(tmp_path / "input" / "events", "events.jsonl", events(50))
    (tmp_path / "docs.sql").write_text("\n".join(blocks))
    p = run_sql(tmp_path, "-f", "docs.sql", check=False)
    assert p.returncode == 0, p.stderr
    assert "rows in set" in p.stdout


def test_seed_shapes_parse_and_unsupported_parts_say_so(tmp_path):
    """Every script of tests/sql/seeds parses; running one stops at its first
    statement floe cannot run yet, with the reason and its position."""
    seeds = sorted((SQL / "seeds").glob("*.sql"))
    assert seeds
    for f in seeds:
        p = run_sql(tmp_path, "--check", "-f", f, check=False)
        assert p.returncode == 0, p.stderr
    p = run_sql(tmp_path, "-f", SQL / "seeds" / "flink_shapes.sql", check=False)
    assert p.returncode == 1
    assert "line 6, column 1: " not in p.stderr  # the position is the option's
    assert "line 8, column 3: catalog-type 'hive' is not supported yet" in p.stderr, p.stderr


def test_like_values_and_partition_clauses(tmp_path):
    run_sql(tmp_path, "-e",
            "CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='wh');"
            "USE CATALOG c; CREATE DATABASE db; USE db;"
            "CREATE TABLE t (id BIGINT NOT NULL, ts TIMESTAMP_LTZ(6), PRIMARY KEY (id) NOT ENFORCED)"
            " PARTITIONED BY (hour(ts)) WITH ('write.parquet.compression-codec'='gzip');"
            "CREATE TABLE u LIKE t WITH ('commit.retry.num-retries'='3');")
    out = run_sql(tmp_path, "-e",
                  "CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='wh');"
                  "SHOW CREATE TABLE c.db.u;").stdout
    assert "PARTITIONED BY (hour(`ts`))" in out
    assert "PRIMARY KEY (`id`) NOT ENFORCED" in out
    assert "'write.parquet.compression-codec' = 'gzip'" in out
    assert "'commit.retry.num-retries' = '3'" in out
    p = run_sql(tmp_path, "-e",
                "CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='wh');"
                "INSERT INTO c.db.t VALUES (1, TIMESTAMP '2024-01-01 00:00:00', 3);", check=False)
    assert "a VALUES row of 3 values for 2 columns" in p.stderr, p.stderr


def test_connector_iceberg_table_without_a_catalog(tmp_path):
    """The connector-style Iceberg table: no CREATE CATALOG, the table's
    options name the catalog; PyIceberg reads what the INSERT wrote."""
    write_events(tmp_path / "in", "a.jsonl", events(40))
    out = run_sql(tmp_path, "-e", """
        CREATE TABLE sink (id BIGINT, kind STRING) WITH (
          'connector' = 'iceberg', 'catalog-name' = 'lake', 'catalog-type' = 'jdbc',
          'uri' = 'jdbc:sqlite:lake.db', 'warehouse' = 'wh', 'catalog-database' = 'db',
          'catalog-table' = 'clicks', 'write.parquet.compression-codec' = 'gzip');
        CREATE TABLE src (id BIGINT, kind STRING, amount DECIMAL(12, 3))
          WITH ('connector' = 'filesystem', 'path' = 'in', 'format' = 'json');
        SHOW TABLES;
        INSERT INTO sink SELECT id, kind FROM src WHERE kind = 'click';
        DROP TABLE sink;
        SELECT COUNT(*) FROM lake.db.clicks;""", check=False)
    assert "| sink       |" in out.stdout and "| src        |" in out.stdout
    # the last statement: an aggregate over what the job wrote
    assert out.returncode == 0, out.stderr
    assert "| COUNT(*) |\n" in out.stdout and "| 10       |\n" in out.stdout
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("lake", uri=f"sqlite:///{tmp_path}/lake.db", warehouse=f"file://{tmp_path}/wh")
    t = cat.load_table("db.clicks")  # DROP TABLE of the session's name keeps the table
    assert t.properties["write.parquet.compression-codec"] == "gzip"
    assert ids(t) == [r["id"] for r in events(40) if r["kind"] == "click"]


def test_shell_line_editing_and_history(tmp_path):
    """On a terminal the shell edits lines with libedit: a statement over two
    lines runs at its ';', the up arrow brings the last statement back (and
    Ctrl-A / Ctrl-E move in it), the history file keeps it, \\q quits."""
    import pty
    import select

    hist = tmp_path / "hist"
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(tmp_path)
        os.environ["FLOE_SQL_HISTORY"] = str(hist)
        os.environ["TERM"] = "xterm"
        os.execv(floe_bin(), [floe_bin(), "sql"])
    out = b""

    def read_until(token, timeout=30):
        nonlocal out
        end = time.time() + timeout
        while token not in out and time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    break
        assert token in out, out.decode(errors="replace")

    read_until(b"Flink SQL> ")
    os.write(fd, b"SHOW\r")
    read_until(b"> ")
    os.write(fd, b"CATALOGS;\r")
    read_until(b"1 row in set")
    out = b""
    os.write(fd, b"\x1b[A")  # up: the last statement
    os.write(fd, b"\x01\x05\r")  # Ctrl-A, Ctrl-E, enter
    read_until(b"1 row in set")
    os.write(fd, b"\\q\r")
    os.waitpid(pid, 0)
    os.close(fd)
    assert "SHOW\\040CATALOGS;" in hist.read_text()  # libedit's history file escapes spaces


def test_alter_beyond_flink_partition_order_type_and_refs(tmp_path):
    """ALTER TABLE past Flink's DDL, in Spark's Iceberg spelling: MODIFY widens a
    type, partition fields are added, replaced and dropped, the write order is
    set, branches and tags are made and dropped; PyIceberg reads the result and
    a refused change says why at its position and changes nothing."""
    write_events(tmp_path / "in", "a.jsonl", events(30))
    head = ("CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='jdbc', "
            "'uri'='jdbc:sqlite:lake.db', 'warehouse'='wh'); USE CATALOG c; ")
    run_sql(tmp_path, "-e", head + """
        CREATE DATABASE db; USE db;
        CREATE TABLE t (id INT, kind STRING, amount FLOAT, lts TIMESTAMP_LTZ(6));
        CREATE TABLE src (id INT, kind STRING, lts TIMESTAMP_LTZ(6))
          WITH ('connector' = 'filesystem', 'path' = 'in', 'format' = 'json');
        INSERT INTO t SELECT id, kind, CAST(NULL AS FLOAT), lts FROM src;
        ALTER TABLE t MODIFY id BIGINT;
        ALTER TABLE t MODIFY (amount DOUBLE);
        ALTER TABLE t ADD PARTITION FIELD bucket(4, id);
        ALTER TABLE t ADD PARTITION FIELD day(`lts`);
        ALTER TABLE t REPLACE PARTITION FIELD id_bucket WITH bucket(8, id);
        ALTER TABLE t DROP PARTITION FIELD lts_day;
        ALTER TABLE t WRITE ORDERED BY id DESC NULLS LAST, kind;
        ALTER TABLE t CREATE BRANCH audit RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS 3 DAYS;
        ALTER TABLE t CREATE TAG v1 RETAIN 30 DAYS;
        ALTER TABLE t CREATE TAG gone;
        ALTER TABLE t DROP TAG gone;
        ALTER TABLE t CREATE BRANCH IF NOT EXISTS audit;""")
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/lake.db", warehouse=f"file://{tmp_path}/wh")
    t = cat.load_table("db.t")
    types = {f.name: str(f.field_type) for f in t.schema().fields}
    assert types["id"] == "long" and types["amount"] == "double"
    spec = t.spec()
    assert [(f.name, str(f.transform)) for f in spec.fields] == [("id_bucket", "bucket[8]")]
    order = t.sort_order()
    assert [(t.schema().find_column_name(f.source_id), f.direction.name, f.null_order.name)
            for f in order.fields] == [("id", "DESC", "NULLS_LAST"), ("kind", "ASC", "NULLS_FIRST")]
    refs = t.metadata.refs
    assert set(refs) == {"main", "audit", "v1"}
    assert refs["audit"].max_ref_age_ms == 7 * 86400000
    assert refs["audit"].min_snapshots_to_keep == 2
    assert refs["audit"].max_snapshot_age_ms == 3 * 86400000
    assert refs["v1"].snapshot_ref_type.value == "tag" and refs["v1"].max_ref_age_ms == 30 * 86400000
    assert len(t.scan().to_arrow()) == 30
    before = t.metadata_location
    for stmt, where, msg in [
            ("ALTER TABLE t MODIFY id INT;", "line 1, column", "long cannot become int"),
            ("ALTER TABLE t ADD PARTITION FIELD bucket(4, nope);", "line 1, column", "'nope' does not exist"),
            ("ALTER TABLE t CREATE TAG audit;", "line 1, column", "'audit' is a branch"),
            ("ALTER TABLE t ADD PARTITION FIELD bucket(4, id) AS b;", "line 1, column", "AS is not supported")]:
        p = run_sql(tmp_path, "-e", head + "USE db;\n" + stmt, check=False)
        assert p.returncode != 0 and msg in p.stderr and "^" in p.stderr, p.stderr
    assert cat.load_table("db.t").metadata_location == before


def test_streaming_select_prints_rows_as_commits_arrive(tmp_path):
    """SELECT ... /*+ OPTIONS('streaming'='true') */: the table as it is, then
    the rows of each commit another engine (PyIceberg) appends, as they come,
    until the LIMIT; INCREMENTAL_FROM_LATEST_SNAPSHOT skips what was there;
    a streaming aggregate is refused at its position."""
    import threading
    import time

    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    write_events(tmp_path / "in", "a.jsonl", events(10))
    head = ("CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='jdbc', "
            "'uri'='jdbc:sqlite:lake.db', 'warehouse'='wh'); USE CATALOG c; ")
    run_sql(tmp_path, "-e", head + """
        CREATE DATABASE db; USE db;
        CREATE TABLE t (id BIGINT, kind STRING);
        CREATE TABLE src (id BIGINT, kind STRING) WITH ('connector' = 'filesystem', 'path' = 'in', 'format' = 'json');
        INSERT INTO t SELECT id, kind FROM src;""")
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/lake.db", warehouse=f"file://{tmp_path}/wh")
    t = cat.load_table("db.t")

    def append_later(start):
        for k in range(3):
            time.sleep(1.5)
            rows = [{"id": start + k * 10 + i, "kind": "late"} for i in range(4)]
            t.append(pa.Table.from_pylist(rows, schema=t.schema().as_arrow()))
            t.refresh()

    th = threading.Thread(target=append_later, args=(100,))
    th.start()
    p = run_sql(tmp_path, "--format", "json", "-e", head + "USE db; SELECT id, kind FROM t "
                "/*+ OPTIONS('streaming'='true', 'monitor-interval'='500ms') */ WHERE id <> 3 LIMIT 21;",
                timeout=90)
    th.join()
    got = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    want = [r["id"] for r in events(10) if r["id"] != 3] + [100 + k * 10 + i for k in range(3) for i in range(4)]
    assert sorted(r["id"] for r in got) == sorted(want)
    assert [r["id"] for r in got[:9]] == sorted(r["id"] for r in got[:9])  # the table first
    assert all(r["kind"] == "late" for r in got[9:])

    # from the latest snapshot: only what is appended after the start
    th = threading.Thread(target=append_later, args=(200,))
    th.start()
    p = run_sql(tmp_path, "-e", head + "USE db; SELECT id FROM t /*+ OPTIONS('streaming'='true', "
                "'monitor-interval'='500ms', 'starting-strategy'='INCREMENTAL_FROM_LATEST_SNAPSHOT') */ LIMIT 8;",
                timeout=90)
    th.join()
    ids = sorted(int(x) for x in re.findall(r"\| \+I \|\s+(\d+) \|", p.stdout))
    assert ids == [200 + k * 10 + i for k in range(2) for i in range(4)], p.stdout
    assert "Received a total of 8 rows" in p.stdout

    p = run_sql(tmp_path, "-e", head + "USE db; SELECT kind, COUNT(*) FROM t "
                "/*+ OPTIONS('streaming'='true') */ GROUP BY kind;", check=False)
    assert p.returncode != 0 and "a streaming SELECT takes a projection" in p.stderr and "^" in p.stderr


def test_values_using_and_select_without_from(tmp_path):
    """VALUES as a derived table with its alias's column names, JOIN ... USING,
    and SELECT without FROM, each answering as DuckDB does."""
    import duckdb

    write_events(tmp_path / "in", "a.jsonl", events(12))
    head = ("CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='wh'); "
            "USE CATALOG c; ")
    run_sql(tmp_path, "-e", head + """CREATE DATABASE db; USE db;
        CREATE TABLE t (id BIGINT, kind STRING);
        CREATE TABLE src (id BIGINT, kind STRING) WITH ('connector' = 'filesystem', 'path' = 'in', 'format' = 'json');
        INSERT INTO t SELECT id, kind FROM src;""")
    rows = [(r["id"], r["kind"]) for r in events(12)]
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id BIGINT, kind VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    for q in ["SELECT t.id, t.kind, f.tag FROM t JOIN (VALUES (1, 'one'), (4, 'four'), (40, 'none')) f(id, tag) "
              "USING (id) ORDER BY ALL",
              "SELECT v.x, t.kind FROM (VALUES (1), (2)) v(x), t WHERE t.id = v.x + 5 ORDER BY ALL",
              "SELECT x * 2 AS y FROM (VALUES (1), (2), (3)) AS v(x) WHERE x > 1 ORDER BY y DESC",
              "SELECT 1 + 2 AS three, 'a' || 'b' AS ab",
              "SELECT COUNT(*) AS n WHERE 1 = 0"]:
        p = run_sql(tmp_path, "--format", "csv", "-e", head + "USE db; " + q + ";")
        got = [l.split(",") for l in p.stdout.strip().splitlines()[1:]]
        want = [[str(v) for v in r] for r in con.execute(q).fetchall()]
        assert got == want, (q, got, want)
    p = run_sql(tmp_path, "-e", "SELECT * FROM (VALUES (1), (2, 3)) v;", check=False)
    assert p.returncode != 0 and "a VALUES row of 2 values; the first has 1" in p.stderr


def test_insert_values_and_insert_from_an_iceberg_table(tmp_path):
    """INSERT ... VALUES (typed literals, NULLs, a column list) and INSERT
    [OVERWRITE] ... SELECT from an Iceberg table of the catalog (the pipeline's
    iceberg source; a computed projection over it too): PyIceberg reads what
    each wrote, and a re-run of the same script changes nothing."""
    from decimal import Decimal

    from pyiceberg.catalog.sql import SqlCatalog

    head = ("CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='jdbc', "
            "'uri'='jdbc:sqlite:lake.db', 'warehouse'='wh'); USE CATALOG c; ")
    script = head + """CREATE DATABASE IF NOT EXISTS db; USE db;
        CREATE TABLE IF NOT EXISTS a (id BIGINT, name STRING, amount DECIMAL(10, 2), d DATE);
        CREATE TABLE IF NOT EXISTS b (id BIGINT, name STRING, amount DECIMAL(10, 2), d DATE);
        CREATE TABLE IF NOT EXISTS c2 (id BIGINT, label STRING);
        INSERT INTO a VALUES (1, 'one', 1.50, DATE '2024-02-03'), (2, NULL, -3, NULL);
        INSERT INTO a (id, name) VALUES (3, 'three');
        INSERT INTO b SELECT * FROM a;
        INSERT OVERWRITE b SELECT * FROM a WHERE id >= 2;
        INSERT INTO c2 SELECT id * 10, UPPER(COALESCE(name, 'none')) FROM a;"""
    run_sql(tmp_path, "-e", script)
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/lake.db", warehouse=f"file://{tmp_path}/wh")

    def rows(name, key="id"):
        return sorted(cat.load_table(f"db.{name}").scan().to_arrow().to_pylist(), key=lambda r: r[key])

    import datetime
    want_a = [{"id": 1, "name": "one", "amount": Decimal("1.50"), "d": datetime.date(2024, 2, 3)},
              {"id": 2, "name": None, "amount": Decimal("-3.00"), "d": None},
              {"id": 3, "name": "three", "amount": None, "d": None}]
    assert rows("a") == want_a
    assert rows("b") == want_a[1:]
    assert rows("c2") == [{"id": 10, "label": "ONE"}, {"id": 20, "label": "NONE"}, {"id": 30, "label": "THREE"}]
    before = {n: cat.load_table(f"db.{n}").metadata.current_snapshot_id for n in ("a", "c2")}
    run_sql(tmp_path, "-e", script)  # the same script again: every job resumes at its end
    assert rows("a") == want_a and len(rows("c2")) == 3
    assert {n: cat.load_table(f"db.{n}").metadata.current_snapshot_id for n in ("a", "c2")} == before


def test_seed_snippets_run(tmp_path):
    """tests/sql/seeds/seed_snippets.sql: the seed guides' snippets with only a
    local catalog, a file source for the Kinesis one and the marked runnable
    changes. It runs whole (in two parts: the time-travel ids come from the
    first); PyIceberg reads the upserted orders, the statement set's three
    tables and the VALUES row; the time-travel, branch, tag and streaming
    SELECTs print the row; the as-written orders key is refused as Flink's
    sink refuses it."""
    import datetime
    from decimal import Decimal

    from pyiceberg.catalog.sql import SqlCatalog

    recs = []
    for i in range(200):
        recs.append({"event_type": "ORDER" if i % 4 else "REFUND", "order_id": i % 150,
                     "customer_id": i % 17, "amount": f"{(i * 37) % 500}.25",
                     "status": ["new", "paid", "shipped"][i % 3],
                     "order_ts": f"2024-03-{1 + i % 28:02d}T{i % 24:02d}:00:00.000"})
    write_events(tmp_path / "input" / "orders", "part-0.jsonl", recs)
    text = (SQL / "seeds" / "seed_snippets.sql").read_text()
    cut = text.index("-- runnable: the branch and the tag")
    head = text[:text.index("SET 'execution.checkpointing.interval'")]
    (tmp_path / "part1.sql").write_text(text[:cut])
    run_sql(tmp_path, "-f", "part1.sql", timeout=300)
    cat = SqlCatalog("hive_prod", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse")
    # orders holds equality deletes, which PyIceberg cannot read yet: DuckDB reads it
    from conftest import duckdb_connection

    con = duckdb_connection()
    orders = con.execute(f"SELECT order_id, status, amount FROM iceberg_scan("
                         f"'{cat.load_table('shop.orders').metadata_location}')").fetchall()
    model = {}
    for r in recs:
        if r["event_type"] == "ORDER":
            model[(r["order_id"], r["status"])] = Decimal(r["amount"])
    assert sorted(((o[0], o[1]), o[2]) for o in orders) == sorted(model.items())
    assert len(cat.load_table("shop.refunds").scan().to_arrow()) == 50
    assert len(cat.load_table("shop.audit").scan().to_arrow()) == 200
    t = cat.load_table("shop.my_table_v2")
    assert t.scan().to_arrow().to_pylist() == [
        {"id": 1, "data": "a", "category": "x",
         "ts": datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)}]
    snap = t.metadata.current_snapshot_id
    as_of = t.metadata.current_snapshot().timestamp_ms
    rest = text[cut:].replace("${SNAPSHOT_ID}", str(snap)).replace("${AS_OF_MS}", str(as_of))
    (tmp_path / "part2.sql").write_text(head + rest)
    p = run_sql(tmp_path, "-f", "part2.sql", timeout=300)
    out = p.stdout
    assert out.count("| 1  | a    | x        |") >= 4, out  # snapshot-id, as-of, branch, tag
    assert out.count("Received a total of 1 row") == 2, out  # the two streaming SELECTs
    assert "| files | avg_size" in out.replace("  ", " ") or "files" in out
    # the orders DDL as the seed writes it: the key without the partition column
    as_written = text.replace("PRIMARY KEY (order_id, status) NOT ENFORCED", "PRIMARY KEY (order_id) NOT ENFORCED")
    (tmp_path / "w").mkdir()
    write_events(tmp_path / "w" / "input" / "orders", "part-0.jsonl", recs[:8])
    (tmp_path / "w" / "as_written.sql").write_text(as_written[:cut + (len(as_written) - len(text))])
    p = run_sql(tmp_path / "w", "-f", "as_written.sql", check=False, timeout=300)
    assert p.returncode != 0 and "equality fields must include every partition source column" in p.stderr, p.stderr
