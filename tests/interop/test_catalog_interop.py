"""floe's SQLite catalog and Java-compatible metadata, read and written by the
reference implementations:

* PyIceberg's SqlCatalog opens floe's catalog and reads the tables floe created
  and appended to (schema, partition spec, snapshots, files and rows) - a table
  with every primitive type and one with every partition transform, edge values
  included; DuckDB's iceberg extension reads the same tables.
* floe lists the snapshots and live files of tables PyIceberg wrote (appends,
  overwrites, deletes) exactly as PyIceberg does, at every snapshot.
* Two floe processes and one PyIceberg process append to one table at once,
  40 commits each, and the table ends with all 120 snapshots and every row.
"""
import datetime as dt
import decimal
import math
import subprocess
import sys
import uuid
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import duckdb_connection

UTC = dt.timezone.utc

SCHEMA_COLUMNS = (
    "b boolean, i int, l long, f float, d double, dec decimal(9, 2), "
    "bigdec decimal(38, 10), dt date, t time, ts timestamp, tstz timestamptz, "
    "s string, u uuid, fx fixed[4], bin binary"
)

ARROW_SCHEMA = pa.schema(
    [
        ("b", pa.bool_()),
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("f", pa.float32()),
        ("d", pa.float64()),
        ("dec", pa.decimal128(9, 2)),
        ("bigdec", pa.decimal128(38, 10)),
        ("dt", pa.date32()),
        ("t", pa.time64("us")),
        ("ts", pa.timestamp("us")),
        ("tstz", pa.timestamp("us", tz="UTC")),
        ("s", pa.string()),
        ("u", pa.binary(16)),
        ("fx", pa.binary(4)),
        ("bin", pa.binary()),
    ]
)


def edge_rows():
    """Rows with negatives, dates before 1970, non-ASCII text, extremes, nulls."""
    rows = []
    strings = ["", "a", "é", "日本語", "emoji 💰", "Zürich", "x" * 40, "null", "a/b=c d"]
    dates = [
        dt.date(1969, 12, 31),
        dt.date(1900, 1, 1),
        dt.date(1970, 1, 1),
        dt.date(2024, 2, 29),
        dt.date(2262, 4, 11),
    ]
    stamps = [
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1970, 1, 1, 0, 0, 0),
        dt.datetime(2017, 11, 16, 22, 31, 8, 1),
        dt.datetime(1900, 3, 1, 12, 0, 0),
        dt.datetime(2023, 1, 1, 11, 55, 59, 999999),
    ]
    for k in range(30):
        null = k % 11 == 10
        rows.append(
            {
                "b": None if null else k % 2 == 0,
                "i": None if null else [0, -1, 1, 2**31 - 1, -(2**31), 12345, -12][k % 7],
                "l": None if null else [0, -1, 2**40 + k, -(2**63), 2**63 - 1, 34 + k][k % 6],
                "f": None if null else [0.5, -0.0, 2.0**100, -2.25, float("inf")][k % 5],
                "d": None if null else [1e300, -1.0, 0.1, -0.0, 6.282][k % 5],
                # -9999999.50, not -9999999.99: truncate(50) of that is -10000000.00, which
                # decimal(9, 2) cannot hold (Java refuses it, so does floe: docs/interop.md)
                "dec": None if null else decimal.Decimal(["-1.28", "14.20", "0.00", "-9999999.50", "1234567.89"][k % 5]),
                "bigdec": None if null else decimal.Decimal(["-1234567890123456789012345678.0123456789", "0E-10", "3.1415926535"][k % 3]),
                "dt": None if null else dates[k % len(dates)],
                "t": None if null else dt.time(k % 24, (k * 7) % 60, (k * 13) % 60, k * 1001),
                "ts": None if null else stamps[k % len(stamps)],
                "tstz": None if null else stamps[(k + 1) % len(stamps)].replace(tzinfo=UTC),
                "s": None if null else strings[k % len(strings)],
                "u": None if null else uuid.UUID(int=(k * 0x9E3779B97F4A7C15) % (1 << 128)).bytes,
                "fx": None if null else bytes([k, 255 - k, 0, 7]),
                "bin": None if null else bytes(range(k % 5)) + "é".encode(),
            }
        )
    return rows


def write_parquet(path: Path, rows):
    table = pa.Table.from_pylist(rows, schema=ARROW_SCHEMA)
    pq.write_table(table, path)
    return path


def norm(v):
    """One comparable form for values from pyarrow, PyIceberg and DuckDB."""
    if v is None:
        return None
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return repr(v)
    if isinstance(v, uuid.UUID):
        return v.bytes.hex()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(UTC).replace(tzinfo=None)
        return v.isoformat()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v.normalize()) if v != 0 else "0"
    return v


def norm_rows(rows, columns):
    out = [tuple(norm(r[c]) for c in columns) for r in rows]
    return sorted(out, key=lambda t: tuple("" if x is None else str(x) for x in t))


COLUMNS = [f.name for f in ARROW_SCHEMA]


def live_files(tbl):
    """DataFiles of the current snapshot through PyIceberg's manifest reader.
    (tbl.inspect.files() cannot build its metrics table for uuid columns.)"""
    out = []
    for m in tbl.current_snapshot().manifests(tbl.io):
        for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
            out.append(e.data_file)
    return out


def duck_rows(metadata_location, columns):
    con = duckdb_connection()
    cur = con.execute(f"SELECT {', '.join(columns)} FROM iceberg_scan('{metadata_location}')")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def test_pyiceberg_and_duckdb_read_every_primitive_type(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.alltypes", "--schema", SCHEMA_COLUMNS)
    rows = edge_rows()
    files = [write_parquet(tmp_path / f"part-{k}.parquet", rows[k::3]) for k in range(3)]
    floe.run("add-files", "db.alltypes", *files[:2])
    floe.run("add-files", "db.alltypes", files[2])

    cat = floe.pyiceberg_catalog()
    tbl = cat.load_table("db.alltypes")
    # schema: the same columns, ids and types
    fields = tbl.schema().fields
    assert [f.name for f in fields] == COLUMNS
    assert [f.field_id for f in fields] == list(range(1, len(COLUMNS) + 1))
    assert str(tbl.schema().find_type("dec")) == "decimal(9, 2)"
    assert str(tbl.schema().find_type("fx")) == "fixed[4]"
    # snapshots: two appends with totals
    snaps = tbl.snapshots()
    assert len(snaps) == 2
    assert snaps[1].parent_snapshot_id == snaps[0].snapshot_id
    summary = tbl.current_snapshot().summary
    assert summary.operation.value == "append"
    assert summary["total-records"] == str(len(rows))
    assert summary["total-data-files"] == "3"
    # files: PyIceberg sees floe's metrics
    fdf = live_files(tbl)
    assert sorted(f.file_path for f in fdf) == sorted(f"file://{p}" for p in files)
    nulls = {f"file://{files[k]}": sum(r["b"] is None for r in rows[k::3]) for k in range(3)}
    for f in fdf:
        assert f.record_count == 10
        assert f.file_size_in_bytes == Path(f.file_path[7:]).stat().st_size
        assert f.value_counts[1] == 10  # b
        assert f.null_value_counts[1] == nulls[f.file_path]
        assert set(f.lower_bounds) >= {1, 2, 3, 6, 8, 10, 12}
    # rows
    got = tbl.scan().to_arrow().to_pylist()
    assert norm_rows(got, COLUMNS) == norm_rows(rows, COLUMNS)
    # DuckDB reads the same table
    duck = duck_rows(tbl.metadata_location, COLUMNS)
    assert norm_rows(duck, COLUMNS) == norm_rows(rows, COLUMNS)


PARTITION_SPECS = [
    ("identity_types", "b, i, l, dec, dt, s, fx"),
    ("bucket", "bucket(8, l), bucket(4, s), bucket(3, dec), bucket(5, dt), bucket(2, u), bucket(4, ts)"),
    ("truncate", "truncate(16, i), truncate(3, s), truncate(1024, l), truncate(50, dec), truncate(2, bin)"),
    ("temporal", "year(dt), month(ts), day(tstz), hour(ts)"),
    ("hours_and_void", "hour(tstz), void(i), identity(t)"),
]


def pyiceberg_partition(tbl, row):
    """The partition tuple PyIceberg computes for a row (its own transforms)."""
    spec, schema = tbl.spec(), tbl.schema()
    key = []
    for pf in spec.fields:
        src = schema.find_field(pf.source_id)
        v = row[src.name]
        if isinstance(v, dt.datetime):
            v = v.replace(tzinfo=None) if v.tzinfo is None else v
        key.append(pf.transform.transform(src.field_type)(to_iceberg(v, src.field_type)))
    return tuple(key)


def to_iceberg(v, t):
    """Python value -> PyIceberg's internal representation for transforms."""
    from pyiceberg.types import DateType, TimestampType, TimestamptzType, TimeType, UUIDType
    from pyiceberg.utils.datetime import date_to_days, datetime_to_micros, time_to_micros

    if v is None:
        return None
    if isinstance(t, DateType):
        return date_to_days(v)
    if isinstance(t, (TimestampType, TimestamptzType)):
        return datetime_to_micros(v)
    if isinstance(t, TimeType):
        return time_to_micros(v)
    if isinstance(t, UUIDType):
        return uuid.UUID(bytes=v)
    return v


@pytest.mark.parametrize("name,partition", PARTITION_SPECS, ids=[p[0] for p in PARTITION_SPECS])
def test_every_partition_transform(floe, tmp_path, name, partition):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", f"db.{name}", "--schema", SCHEMA_COLUMNS, "--partition", partition)
    cat = floe.pyiceberg_catalog()
    tbl = cat.load_table(f"db.{name}")
    rows = edge_rows()
    # one file per partition, grouped with PyIceberg's own transforms
    groups = defaultdict(list)
    for r in rows:
        groups[pyiceberg_partition(tbl, r)].append(r)
    files = []
    for k, (key, grp) in enumerate(sorted(groups.items(), key=lambda kv: repr(kv[0]))):
        files.append(write_parquet(tmp_path / f"{name}-{k}.parquet", grp))
    floe.run("add-files", f"db.{name}", *files)

    tbl = cat.load_table(f"db.{name}")
    assert [f.name for f in tbl.spec().fields] == [f.name for f in tbl.spec().fields]
    # every file's partition tuple is the one PyIceberg computes for its rows
    by_path = {f"file://{p}": key for p, key in zip(files, sorted(groups, key=repr))}
    fdf = live_files(tbl)
    assert len(fdf) == len(files)
    for f in fdf:
        want = by_path[f.file_path]
        got = tuple(f.partition[i] for i in range(len(want)))
        assert tuple(norm(to_plain(x)) for x in got) == tuple(norm(to_plain(x)) for x in want), f.file_path
    got_rows = tbl.scan().to_arrow().to_pylist()
    assert norm_rows(got_rows, COLUMNS) == norm_rows(rows, COLUMNS)
    # partition pruning in PyIceberg uses floe's partition summaries and values
    from pyiceberg.expressions import EqualTo

    probe = rows[4]
    filtered = tbl.scan(row_filter=EqualTo("s", probe["s"])).to_arrow().to_pylist()
    assert norm_rows(filtered, COLUMNS) == norm_rows([r for r in rows if r["s"] == probe["s"]], COLUMNS)
    duck = duck_rows(tbl.metadata_location, COLUMNS)
    assert norm_rows(duck, COLUMNS) == norm_rows(rows, COLUMNS)


def to_plain(x):
    """Partition values as inspect.files() returns them vs transform results."""
    if isinstance(x, dt.date) and not isinstance(x, dt.datetime):
        from pyiceberg.utils.datetime import date_to_days

        return date_to_days(x)
    if isinstance(x, dt.datetime):
        from pyiceberg.utils.datetime import datetime_to_micros

        return datetime_to_micros(x)
    if isinstance(x, dt.time):
        from pyiceberg.utils.datetime import time_to_micros

        return time_to_micros(x)
    if isinstance(x, uuid.UUID):
        return x.bytes
    return x


def test_floe_lists_what_pyiceberg_wrote(floe):
    from pyiceberg.expressions import EqualTo, GreaterThanOrEqual
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    (floe.root / "warehouse").mkdir(parents=True, exist_ok=True)  # the catalog file comes from the peer (a read-only floe command creates none)
    cat = floe.pyiceberg_catalog()
    cat.create_namespace("py")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "region", StringType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(2, 1000, IdentityTransform(), "region"),
        PartitionField(1, 1001, BucketTransform(4), "id_bucket"),
    )
    tbl = cat.create_table("py.events", schema=schema, partition_spec=spec)
    arrow_schema = pa.schema([("id", pa.int64()), ("region", pa.string())])
    for k in range(3):
        tbl.append(pa.Table.from_pylist([{"id": k * 10 + j, "region": ["eu", "us", "ap"][j % 3]} for j in range(10)], schema=arrow_schema))
    tbl.overwrite(pa.Table.from_pylist([{"id": 999, "region": "eu"}], schema=arrow_schema), overwrite_filter=EqualTo("region", "eu"))
    tbl.delete(delete_filter=GreaterThanOrEqual("id", 25))
    tbl = cat.load_table("py.events")

    # snapshots, value for value
    mine = floe.json_rows("snapshots", "py.events")
    theirs = tbl.inspect.snapshots().to_pylist()
    assert [s["snapshot_id"] for s in mine] == [s["snapshot_id"] for s in theirs]
    for m, t in zip(mine, theirs):
        assert m["parent_id"] == t["parent_id"]
        assert m["operation"] == t["operation"]
        assert m["manifest_list"] == t["manifest_list"]
        assert int(dt.datetime.fromisoformat(m["committed_at"].replace("Z", "+00:00")).timestamp() * 1000) == int(t["committed_at"].timestamp() * 1000)
        assert m["current"] == (m["snapshot_id"] == tbl.current_snapshot().snapshot_id)
        assert m["summary"] == {k: v for k, v in t["summary"] if k != "operation"}
    # live files at every snapshot
    for snap in theirs:
        mine = floe.json_rows("files", "py.events", "--snapshot-id", snap["snapshot_id"])
        files = tbl.inspect.files(snapshot_id=snap["snapshot_id"]).to_pylist()
        assert sorted((f["file_path"], f["record_count"], f["file_size_in_bytes"]) for f in mine) == sorted(
            (f["file_path"], f["record_count"], f["file_size_in_bytes"]) for f in files
        )
        want_parts = {f["file_path"]: {"region": f["partition"]["region"], "id_bucket": f["partition"]["id_bucket"]}
                      for f in files}
        assert {f["file_path"]: f["partition"] for f in mine} == want_parts


FLOE_WRITER = r"""
set -e
for k in $(seq 0 39); do
  "$FLOE" --dir "$DIR" add-files db.race "$FILES/w$W-$k.parquet" > /dev/null
done
"""

PY_WRITER = r"""
import sys, time, random
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
d = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{d}/warehouse/catalog.db", warehouse=f"file://{d}/warehouse")
schema = pa.schema([("id", pa.int64()), ("writer", pa.string())])
for k in range(40):
    data = pa.Table.from_pylist([{"id": 300000 + k * 10 + j, "writer": "py"} for j in range(10)], schema=schema)
    for attempt in range(200):
        try:
            cat.load_table("db.race").append(data)
            break
        except CommitFailedException:
            time.sleep(random.uniform(0.01, 0.1))
        except Exception as e:  # sqlite busy under contention
            if "locked" not in str(e):
                raise
            time.sleep(random.uniform(0.01, 0.1))
    else:
        raise SystemExit("pyiceberg writer gave up")
"""


def test_three_writers_append_at_once(floe, tmp_path):
    import os

    floe.run("namespace", "create", "db")
    floe.run(
        "table", "create", "db.race", "--schema", "id long, writer string",
        "--property", "commit.retry.num-retries=1000",
        "--property", "commit.retry.min-wait-ms=5",
        "--property", "commit.retry.max-wait-ms=300",
    )
    files_dir = tmp_path / "files"
    files_dir.mkdir()
    schema = pa.schema([("id", pa.int64()), ("writer", pa.string())])
    for w in (1, 2):
        for k in range(40):
            rows = [{"id": w * 100000 + k * 10 + j, "writer": f"floe{w}"} for j in range(10)]
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), files_dir / f"w{w}-{k}.parquet")
    env = dict(os.environ, FLOE=floe.bin, DIR=str(floe.root), FILES=str(files_dir))
    procs = [
        subprocess.Popen(["bash", "-c", FLOE_WRITER], env=dict(env, W=str(w)), stderr=subprocess.PIPE, text=True)
        for w in (1, 2)
    ]
    procs.append(subprocess.Popen([sys.executable, "-c", PY_WRITER, str(floe.root)], stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, err

    tbl = floe.pyiceberg_catalog().load_table("db.race")
    snaps = tbl.snapshots()
    assert len(snaps) == 120
    # one unbroken history: every snapshot's parent is the one before it
    by_id = {s.snapshot_id: s for s in snaps}
    chain, s = 0, tbl.current_snapshot()
    while s is not None:
        chain += 1
        s = by_id.get(s.parent_snapshot_id)
    assert chain == 120
    rows = tbl.scan().to_arrow()
    assert rows.num_rows == 1200
    assert len(set(rows.column("id").to_pylist())) == 1200
    # floe agrees
    assert len(floe.json_rows("snapshots", "db.race")) == 120
    assert len(floe.json_rows("files", "db.race")) == 120
