"""floe sql's query executor against DuckDB: the same queries over the same
Iceberg tables (written by PyIceberg, read by `floe sql` and by DuckDB's
iceberg_scan) give the same rows — computed expressions, CAST, CASE,
three-valued logic, string / date / math functions, aggregates with GROUP BY,
HAVING, DISTINCT, ORDER BY, LIMIT / OFFSET, inner, left, right and full
joins, UNION / EXCEPT / INTERSECT [ALL], derived tables, IN / EXISTS /
scalar subqueries, and aggregates over a metadata table;
tables read by path and results as JSON lines and CSV. Bad queries point at
the expression.
"""
import datetime
import decimal
import math
import subprocess

import pyarrow as pa
import pytest

from conftest import duckdb_connection, floe_bin

PRELUDE = ("CREATE CATALOG lake WITH ('type'='iceberg', 'catalog-type'='jdbc', "
           "'uri'='jdbc:sqlite:catalog.db', 'warehouse'='warehouse');\n"
           "USE CATALOG lake;\nUSE db;\n")

KINDS = ["click", "buy", "refund", "view", None]


def make_tables(cwd):
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("lake", uri=f"sqlite:///{cwd}/catalog.db", warehouse=f"file://{cwd}/warehouse")
    cat.create_namespace("db")
    n = 300
    t = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "kind": pa.array([KINDS[i % 5] for i in range(n)], pa.string()),
        "qty": pa.array([None if i % 7 == 3 else (i * 13) % 50 - 10 for i in range(n)], pa.int32()),
        "amount": pa.array([None if i % 11 == 5 else decimal.Decimal((i * 37) % 1200 - 100) / 4
                            for i in range(n)], pa.decimal128(12, 3)),
        "score": pa.array([None if i % 13 == 0 else (i * 0.37) % 9.5 for i in range(n)], pa.float64()),
        "d": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=(i * 5) % 400)
                       for i in range(n)], pa.date32()),
        "ts": pa.array([datetime.datetime(2024, 3, 1) + datetime.timedelta(minutes=i * 97)
                        for i in range(n)], pa.timestamp("us")),
        "note": pa.array([None if i % 4 == 1 else f"  Note-{i % 17} x{i % 3} " for i in range(n)], pa.string()),
    })
    tbl = cat.create_table("db.t", schema=t.schema)
    tbl.append(t.slice(0, 150))
    tbl.append(t.slice(150))
    k = pa.table({
        "kind": pa.array(["click", "buy", "refund", "gift"], pa.string()),
        "label": pa.array(["C", "B", "R", "G"], pa.string()),
        "weight": pa.array([1, 5, -5, 0], pa.int32()),
    })
    ktbl = cat.create_table("db.k", schema=k.schema)
    ktbl.append(k)
    return {"t": tbl.metadata_location, "k": ktbl.metadata_location}


def floe_rows(cwd, query):
    p = subprocess.run([floe_bin(), "sql", "-e", PRELUDE + query + ";"], cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{query}\n{p.stderr}{p.stdout}"
    rows = []
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("|")]
    for ln in lines[1:]:  # the header first
        rows.append([c.strip() for c in ln.strip()[1:-1].split("|")])
    return rows


def norm(v):
    if v is None:
        return "<NULL>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime.datetime):
        return v.isoformat()
    if isinstance(v, datetime.date):
        return v.isoformat()
    return str(v)


def same(a, b):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9)


QUERIES = [
    # computed projections, CAST, CASE, arithmetic, string and date functions
    ("SELECT id, qty * 2 + 1, amount + 1.5, amount * qty, -qty, CAST(qty AS DOUBLE) / 4, "
     "CASE WHEN qty > 20 THEN 'hi' WHEN qty > 0 THEN 'mid' ELSE 'lo' END, "
     "CASE kind WHEN 'buy' THEN 1 WHEN 'refund' THEN -1 END, "
     "UPPER(kind), '[' || LOWER(note) || ']', TRIM(note), CHAR_LENGTH(note), SUBSTRING(note, 3, 4), "
     "kind || '/' || CAST(id AS STRING), COALESCE(kind, 'none'), NULLIF(qty, 0), "
     "'[' || REPLACE(note, 'x', 'y') || ']', ABS(qty), MOD(id, 7), ROUND(score, 2), FLOOR(amount), CEIL(amount), "
     "EXTRACT(YEAR FROM d), EXTRACT(MONTH FROM ts), EXTRACT(HOUR FROM ts), "
     "CAST(ts AS DATE), d + INTERVAL '3' DAY, ts - INTERVAL '2' HOUR "
     "FROM t WHERE id < 40 ORDER BY id",
     "SELECT id, qty * 2 + 1, amount + 1.5, amount * qty, -qty, CAST(qty AS DOUBLE) / 4, "
     "CASE WHEN qty > 20 THEN 'hi' WHEN qty > 0 THEN 'mid' ELSE 'lo' END, "
     "CASE kind WHEN 'buy' THEN 1 WHEN 'refund' THEN -1 END, "
     "UPPER(kind), '[' || LOWER(note) || ']', TRIM(note), length(note), substring(note, 3, 4), "
     "kind || '/' || CAST(id AS VARCHAR), COALESCE(kind, 'none'), NULLIF(qty, 0), "
     "'[' || REPLACE(note, 'x', 'y') || ']', ABS(qty), id % 7, ROUND(score, 2), FLOOR(amount), CEIL(amount), "
     "EXTRACT(YEAR FROM d), EXTRACT(MONTH FROM ts), EXTRACT(HOUR FROM ts), "
     "CAST(ts AS DATE), CAST(d + INTERVAL '3' DAY AS DATE), ts - INTERVAL '2' HOUR "
     "FROM t WHERE id < 40 ORDER BY id", True),
    # three-valued logic in WHERE: NULLs never pass, NOT of NULL is NULL
    ("SELECT id FROM t WHERE NOT (qty > 10 OR kind = 'buy') AND (score < 5 OR score IS NULL) ORDER BY id",
     None, True),
    ("SELECT id, qty > 10 AND kind = 'buy', qty > 10 OR kind = 'buy', kind IS NULL, qty IN (1, 2, 3), "
     "qty BETWEEN 5 AND 15, note LIKE '%x1%' FROM t WHERE id < 30 ORDER BY id", None, True),
    ("SELECT id FROM t WHERE amount * 2 > qty + 100 AND UPPER(kind) <> 'VIEW' ORDER BY id DESC LIMIT 7 OFFSET 3",
     None, True),
    # aggregates, GROUP BY, HAVING, ORDER BY an aggregate and an alias
    ("SELECT kind, COUNT(*) AS n, COUNT(qty), SUM(qty), SUM(amount), MIN(amount), MAX(TRIM(note)), "
     "AVG(qty), AVG(score), COUNT(DISTINCT qty), MIN(d), MAX(ts) FROM t GROUP BY kind ORDER BY n DESC, kind",
     None, True),
    ("SELECT kind, SUM(qty) AS s FROM t WHERE qty IS NOT NULL GROUP BY kind HAVING SUM(qty) > 500 "
     "ORDER BY s", None, True),
    ("SELECT EXTRACT(MONTH FROM d) AS m, COUNT(*), SUM(amount) FROM t GROUP BY EXTRACT(MONTH FROM d) ORDER BY m",
     None, True),
    ("SELECT COUNT(*), SUM(qty), MAX(score), COUNT(DISTINCT kind) FROM t", None, True),
    ("SELECT COUNT(*), SUM(qty), MIN(note) FROM t WHERE id < 0", None, True),
    ("SELECT DISTINCT kind FROM t ORDER BY kind NULLS FIRST", None, True),
    ("SELECT DISTINCT qty % 3 FROM t", "SELECT DISTINCT qty % 3 FROM t", False),
    # joins
    ("SELECT t.id, t.kind, k.label, t.qty * k.weight FROM t JOIN k ON t.kind = k.kind "
     "WHERE t.id < 60 ORDER BY t.id", None, True),
    ("SELECT t.id, k.label FROM t LEFT JOIN k ON t.kind = k.kind AND k.weight > 0 "
     "WHERE t.id < 25 ORDER BY t.id", None, True),
    ("SELECT k.label, COUNT(*), SUM(t.amount) FROM t INNER JOIN k ON k.kind = t.kind "
     "GROUP BY k.label ORDER BY 1", None, True),
    ("SELECT t.id, k.label, k.weight FROM t RIGHT JOIN k ON t.kind = k.kind AND t.id < 12 "
     "ORDER BY k.label, t.id", None, True),
    ("SELECT t.id, t.kind, k.kind, k.label FROM t FULL OUTER JOIN k ON t.kind = k.kind AND t.id < 9 "
     "WHERE t.id IS NULL OR t.id < 14 ORDER BY t.id NULLS FIRST, k.kind", None, True),
    # UNION, UNION ALL (the ORDER BY and LIMIT after the last branch apply to the union)
    ("SELECT id, kind FROM t WHERE id < 5 UNION ALL SELECT id * 100, label FROM k JOIN t ON t.kind = k.kind "
     "WHERE t.id < 4 ORDER BY 1 DESC, kind LIMIT 6", None, True),
    ("SELECT kind FROM t UNION SELECT kind FROM k", None, False),
    ("SELECT qty FROM t WHERE qty < 0 UNION SELECT weight FROM k UNION ALL SELECT 7 FROM k WHERE weight = 0",
     None, False),
    # derived tables
    ("SELECT s.kind, s.n * 2 FROM (SELECT kind, COUNT(*) AS n FROM t GROUP BY kind) s WHERE s.n > 50 "
     "ORDER BY s.kind NULLS FIRST", None, True),
    ("SELECT u.kind, COUNT(*) FROM (SELECT kind FROM t WHERE id < 20 UNION ALL SELECT kind FROM k) u "
     "GROUP BY u.kind ORDER BY u.kind NULLS FIRST", None, True),
    ("SELECT a.id, b.label FROM (SELECT id, kind FROM t WHERE id < 30) a "
     "JOIN (SELECT kind, label FROM k WHERE weight <> 0) b ON a.kind = b.kind ORDER BY a.id", None, True),
    # EXCEPT, INTERSECT (distinct and ALL)
    ("SELECT kind FROM t EXCEPT SELECT kind FROM k", None, False),
    ("SELECT qty % 4 FROM t WHERE id < 40 EXCEPT ALL SELECT weight FROM k", None, False),
    ("SELECT kind FROM k INTERSECT SELECT kind FROM t WHERE qty > 10", None, False),
    ("SELECT qty % 3 FROM t WHERE id < 30 INTERSECT ALL SELECT qty % 3 FROM t WHERE id >= 270", None, False),
    # subqueries in expressions (uncorrelated)
    ("SELECT id FROM t WHERE kind IN (SELECT kind FROM k WHERE weight > 0) AND id < 50 ORDER BY id", None, True),
    ("SELECT id FROM t WHERE kind NOT IN (SELECT kind FROM k) AND id < 40 ORDER BY id", None, True),
    ("SELECT id, qty - (SELECT MIN(weight) FROM k) FROM t WHERE qty > (SELECT AVG(qty) FROM t) ORDER BY id LIMIT 9",
     None, True),
    ("SELECT COUNT(*) FROM t WHERE EXISTS (SELECT 1 FROM k WHERE weight > 4) "
     "AND NOT EXISTS (SELECT 1 FROM k WHERE weight > 100)", None, True),
]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("sqlq")
    return cwd, make_tables(cwd)


@pytest.mark.parametrize("case", range(len(QUERIES)))
def test_query_equals_duckdb(lake, case):
    cwd, locs = lake
    fq, dq, ordered = QUERIES[case]
    dq = dq or fq
    con = duckdb_connection()
    con.execute("SET TimeZone = 'UTC'")
    for name, loc in locs.items():
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM iceberg_scan('{loc}')")
    want = [[norm(v) for v in r] for r in con.execute(dq).fetchall()]
    got = floe_rows(cwd, fq)
    if not ordered:
        want.sort()
        got.sort()
    assert len(got) == len(want), f"{fq}\nfloe {got[:5]}\nduckdb {want[:5]}"
    for g, w in zip(got, want):
        assert len(g) == len(w) and all(same(a, b) for a, b in zip(g, w)), \
            f"{fq}\nfloe   {g}\nduckdb {w}"


def test_unnest_arrays_maps_and_structs(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("lake", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse")
    cat.create_namespace("db")
    rows = [
        {"id": 1, "tags": ["a", "b"], "m": [("x", 1), ("y", 2)], "pts": [{"x": 1.5, "d": datetime.date(2024, 1, 2)}],
         "amounts": [decimal.Decimal("1.25"), None]},
        {"id": 2, "tags": [], "m": [], "pts": None, "amounts": [decimal.Decimal("-3.50")]},
        {"id": 3, "tags": None, "m": [("z", None)], "pts": [{"x": None, "d": None}, {"x": 2.0, "d": datetime.date(2025, 5, 6)}],
         "amounts": None},
    ]
    schema = pa.schema([
        ("id", pa.int64()), ("tags", pa.list_(pa.string())), ("m", pa.map_(pa.string(), pa.int32())),
        ("pts", pa.list_(pa.struct([("x", pa.float64()), ("d", pa.date32())]))),
        ("amounts", pa.list_(pa.decimal128(9, 2)))])
    t = pa.Table.from_pylist(rows, schema=schema)
    cat.create_table("db.c", schema=t.schema).append(t)
    prelude = PRELUDE

    def q(sql):
        p = subprocess.run([floe_bin(), "sql", "--format", "json", "-e", prelude + sql + ";"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        import json
        return [json.loads(line, parse_float=decimal.Decimal) for line in p.stdout.splitlines()]

    got = q("SELECT c.id, t.tag, t.n FROM c CROSS JOIN UNNEST(c.tags) WITH ORDINALITY AS t (tag, n) ORDER BY 1, 3")
    assert [(r["id"], r["tag"], r["n"]) for r in got] == [(1, "a", 1), (1, "b", 2)]
    got = q("SELECT id, e.key, e.value FROM c, UNNEST(m) AS e ORDER BY id, e.key")
    assert [(r["id"], r["key"], r["value"]) for r in got] == [(1, "x", 1), (1, "y", 2), (3, "z", None)]
    got = q("SELECT id, p.x * 2 AS x2, p.d + INTERVAL '1' DAY AS d1 FROM c, UNNEST(pts) AS p ORDER BY id, x2 NULLS FIRST")
    assert [(r["id"], r["x2"], r["d1"]) for r in got] == [
        (1, 3, "2024-01-03"), (3, None, None), (3, 4, "2025-05-07")]
    got = q("SELECT id, SUM(a.item) AS s, COUNT(*) AS n FROM c, UNNEST(amounts) AS a GROUP BY id ORDER BY id")
    assert [(r["id"], r["s"], r["n"]) for r in got] == [(1, decimal.Decimal("1.25"), 2), (2, decimal.Decimal("-3.50"), 1)]
    p = subprocess.run([floe_bin(), "sql", "-e", prelude + "SELECT * FROM c, UNNEST(id) AS u;"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "UNNEST takes an array or map column" in p.stderr and "^" in p.stderr


def test_tables_by_path_and_json_and_csv_output(lake):
    cwd, locs = lake
    con = duckdb_connection()
    want = con.execute(f"SELECT kind, count(*), sum(amount) FROM iceberg_scan('{locs['t']}') "
                       "GROUP BY kind ORDER BY kind NULLS FIRST").fetchall()
    # the table directory (relative to the working directory) and the metadata file
    for ref in ("warehouse/db/t", locs["t"].replace("file://", "")):
        q = f"SELECT kind, count(*) AS n, sum(amount) AS s FROM '{ref}' GROUP BY kind ORDER BY kind NULLS FIRST"
        p = subprocess.run([floe_bin(), "sql", "--format", "json", "-e", q], cwd=cwd,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        import json
        got = [json.loads(line, parse_float=decimal.Decimal) for line in p.stdout.splitlines()]
        assert [(r["kind"], r["n"], r["s"]) for r in got] == [tuple(w) for w in want]
    p = subprocess.run([floe_bin(), "sql", "--format", "csv", "-e",
                        "SELECT label, weight FROM 'warehouse/db/k' ORDER BY weight"], cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["label,weight", "R,-5", "G,0", "C,1", "B,5"]
    # a missing path: the error points at it and names no catalog
    p = subprocess.run([floe_bin(), "sql", "-e", "SELECT * FROM 'warehouse/db/nope'"], cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "line 1, column 15" in p.stderr and "catalog" not in p.stderr, p.stderr


def test_metadata_table_aggregates_equal_duckdb(lake):
    cwd, locs = lake
    got = floe_rows(cwd, "SELECT COUNT(*), SUM(record_count) FROM t$files")
    con = duckdb_connection()
    want = con.execute(
        "SELECT count(*), sum(record_count) FROM "
        f"iceberg_metadata('{locs['t']}') WHERE manifest_content = 'DATA' AND status <> 'DELETED'"
    ).fetchall()
    assert [[norm(v) for v in r] for r in want] == got


@pytest.mark.parametrize("query,msg", [
    ("SELECT nosuch + 1 FROM t", "unknown column 'nosuch'"),
    ("SELECT kind, COUNT(*) FROM t", "column 'kind' must be in GROUP BY"),
    ("SELECT UPPER(id, 2) FROM t", "UPPER takes 1 argument"),
    ("SELECT NO_SUCH_FN(id) FROM t", "unknown function 'NO_SUCH_FN'"),
    ("SELECT id FROM t WHERE kind + 1 > 2", "cannot CAST 'click' to INT"),
    ("SELECT id FROM t WHERE SUM(qty) > 1", "aggregates are not allowed in WHERE"),
    ("SELECT t.id FROM t JOIN k ON t.kind = k.kind WHERE kind = 'buy'", "ambiguous"),
    ("SELECT id FROM t LIMIT 1 UNION SELECT id FROM t", "ORDER BY, LIMIT or OFFSET before UNION"),
    ("SELECT id, kind FROM t UNION ALL SELECT id FROM t", "the branches of a UNION have 2 and 1 columns"),
    ("SELECT id FROM t UNION SELECT id FROM t INTERSECT SELECT id FROM t", "INTERSECT mixed with UNION"),
    ("SELECT id FROM t WHERE id = (SELECT id FROM t)", "a subquery used as a value gave 300 rows"),
    ("INSERT INTO t SELECT * FROM 'warehouse/db/k'", "can only be read"),
])
def test_bad_queries_point_at_the_expression(lake, query, msg):
    cwd, _ = lake
    p = subprocess.run([floe_bin(), "sql", "-e", PRELUDE + query + ";"], cwd=cwd,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert msg in p.stderr and "^" in p.stderr and "line 4, column" in p.stderr, p.stderr


def test_seed_monitoring_queries(lake):
    """The seed guide's three monitoring queries (over $files, $partitions and
    $snapshots with a map subscript and CURRENT_TIMESTAMP - INTERVAL) against
    PyIceberg's inspect tables of the same table."""
    cwd, locs = lake
    from pyiceberg.catalog.sql import SqlCatalog

    tbl = SqlCatalog("lake", uri=f"sqlite:///{cwd}/catalog.db",
                     warehouse=f"file://{cwd}/warehouse").load_table("db.t")
    files = tbl.inspect.files().to_pylist()
    got = floe_rows(cwd, "SELECT file_path, file_size_in_bytes, record_count FROM db.t$files "
                         "WHERE file_size_in_bytes < 10485760")
    assert sorted(got) == sorted([f["file_path"], str(f["file_size_in_bytes"]), str(f["record_count"])]
                                 for f in files if f["file_size_in_bytes"] < 10485760)
    # (t is unpartitioned: its $partitions has no `partition` column, as PyIceberg's)
    got = floe_rows(cwd, "SELECT record_count, file_count FROM db.t$partitions "
                         "ORDER BY record_count DESC")
    parts = tbl.inspect.partitions().to_pylist()
    assert [int(r[0]) for r in got] == sorted((p["record_count"] for p in parts), reverse=True)
    assert sum(int(r[1]) for r in got) == len(files)
    got = floe_rows(cwd, "SELECT committed_at, snapshot_id, operation, summary['added-records'] AS added "
                         "FROM db.t$snapshots WHERE committed_at > CURRENT_TIMESTAMP - INTERVAL '1' HOUR "
                         "ORDER BY committed_at DESC LIMIT 10")
    snaps = sorted(tbl.inspect.snapshots().to_pylist(), key=lambda s: s["committed_at"], reverse=True)
    assert [(r[1], r[2], r[3]) for r in got] == \
        [(str(s["snapshot_id"]), s["operation"], dict(s["summary"])["added-records"]) for s in snaps]


@pytest.mark.parametrize("query", [
    "SELECT note, id, COUNT(*) FROM t GROUP BY note, id",       # groups
    "SELECT * FROM t ORDER BY ts DESC",                          # sorted rows
    "SELECT DISTINCT id, note FROM t",                           # distinct rows
    "SELECT t.id, k.label FROM t JOIN k ON t.kind = k.kind",     # joined rows
    "SELECT * FROM t",                                           # the result
])
def test_query_over_its_memory_budget_stops_with_an_error(lake, query):
    """A query holding more than --memory-budget / SET 'sql.memory-budget'
    stops with an error at the query (no OOM, no partial result); with room
    it runs."""
    cwd, _ = lake
    p = subprocess.run([floe_bin(), "sql", "--memory-budget", "24KiB", "-e",
                        PRELUDE + query + ";"], cwd=cwd, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "the query needs more memory than its budget (24 KiB)" in p.stderr, p.stderr
    assert "line 4, column 1:" in p.stderr and p.stderr.rstrip().endswith("^")
    assert "rows in set" not in p.stdout
    rows = floe_rows(cwd, "SET 'sql.memory-budget' = '64MiB';\n" + query)
    assert rows


def floe_json(cwd, query):
    import json

    p = subprocess.run([floe_bin(), "sql", "--format", "json", "-e", PRELUDE + query + ";"],
                       cwd=cwd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{query}\n{p.stderr}"
    return [json.loads(line) for line in p.stdout.splitlines()]


def test_files_columns_projected_and_struct_fields(tmp_path):
    """A query over $files / $entries builds only the columns it names (the
    metric maps are decoded only for the columns that show them): every
    column read alone equals that column of SELECT *; struct fields
    (partition.region, readable_metrics.id.lower_bound, data_file.content)
    are columns, and GROUP BY partition.region equals PyIceberg's
    inspect.files() grouped by pyarrow."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform, IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType, TimestampType

    cat = SqlCatalog("lake", uri=f"sqlite:///{tmp_path}/catalog.db",
                     warehouse=f"file://{tmp_path}/warehouse")
    cat.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()),
                    NestedField(3, "ts", TimestampType()))
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"),
                         PartitionField(3, 1001, DayTransform(), "ts_day"))
    tbl = cat.create_table("db.p", schema=schema, partition_spec=spec)
    for k in range(3):
        n = 40 + k * 10
        tbl.append(pa.table({
            "id": pa.array([k * 1000 + i for i in range(n)], pa.int64()),
            "region": pa.array([["eu", "us", "ap"][(i + k) % 3] for i in range(n)], pa.string()),
            "ts": pa.array([datetime.datetime(2024, 5, 1 + (i % 2), 3) for i in range(n)],
                           pa.timestamp("us")),
        }))
    tbl = cat.load_table("db.p")
    star = sorted(floe_json(tmp_path, "SELECT * FROM p$files"), key=lambda r: r["file_path"])
    assert len(star) == len(tbl.inspect.files())
    for col in star[0]:
        alone = floe_json(tmp_path, f"SELECT file_path, `{col}` FROM p$files ORDER BY file_path")
        assert [r[col] for r in alone] == [r[col] for r in star], col
    assert floe_json(tmp_path, "SELECT COUNT(*) AS n FROM p$files") == [{"n": len(star)}]
    # struct fields as columns, with and without the executor's other paths
    got = floe_json(tmp_path, "SELECT partition.region AS r, COUNT(*) AS n, SUM(record_count) AS rc, "
                              "SUM(file_size_in_bytes) AS sz FROM p$files GROUP BY partition.region ORDER BY r")
    files = tbl.inspect.files()
    flat = pa.table({"r": files["partition"].combine_chunks().field("region"),
                     "rc": files["record_count"], "sz": files["file_size_in_bytes"]})
    want = flat.group_by("r").aggregate([("rc", "count"), ("rc", "sum"), ("sz", "sum")]).sort_by("r")
    assert [(g["r"], g["n"], g["rc"], g["sz"]) for g in got] == \
        list(zip(*(want[c].to_pylist() for c in ("r", "rc_count", "rc_sum", "sz_sum"))))
    plain = floe_json(tmp_path, "SELECT f.partition.region FROM p$files f")
    assert sorted(r["region"] for r in plain) == sorted(g["r"] for g in got for _ in range(g["n"]))
    metrics = floe_json(tmp_path, "SELECT file_path, readable_metrics.id.lower_bound AS lo, "
                                  "readable_metrics.id.upper_bound AS hi FROM p$files "
                                  "WHERE partition.region = 'eu' ORDER BY file_path")
    want = sorted(((f["file_path"], f["readable_metrics"]["id"]["lower_bound"],
                    f["readable_metrics"]["id"]["upper_bound"]) for f in files.to_pylist()
                   if f["partition"]["region"] == "eu"))
    assert [(r["file_path"], r["lo"], r["hi"]) for r in metrics] == want
    entries = floe_json(tmp_path, "SELECT data_file.content AS c, data_file.partition.ts_day AS d, "
                                  "COUNT(*) AS n FROM p$entries GROUP BY 1, 2 ORDER BY 2")
    assert [(e["c"], e["d"], e["n"]) for e in entries] == \
        [(0, "2024-05-01", len(star) // 2), (0, "2024-05-02", len(star) // 2)]
