"""Spark 3.5 with Iceberg 1.10's runtime reads the tables floe writes: every
format version, every type Spark has, every transform, edge values, schema
evolution; rows, metadata tables, and filtered reads with and without
pushdown, compared row for row with floe's own reads. Also the cases where
the two once disagreed (issue 20): IS NULL on nested columns, UUID bounds and
summaries (Java's signed order), a truncated decimal past its precision,
creation properties, and the edges documented in docs/interop.md."""
import base64
import json
import math
import struct

import pytest

from spark_session import canon, floe_rows, norm, spark_rows

SCHEMA = ("id long not null, b boolean, i int, l long, f float, d double, dec decimal(10, 2), "
          "dt date, ts timestamp, tz timestamptz, s string, u uuid, fx fixed[3], bin binary, "
          "st struct<x: int, z: string>, tags list<string>, m map<string, int>")
SPEC = "bucket(4, id), truncate(3, s), truncate(100, dec), year(dt), month(tz), day(ts), hour(tz), identity(b)"
MAPS = ("m",)

UUIDS = ["123e4567-e89b-12d3-a456-426614174000", "9e3e4567-e89b-12d3-a456-426614174000",
         "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
         "7fffffff-ffff-ffff-7fff-ffffffffffff", "80000000-0000-0000-8000-000000000000"]


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def make_rows(n, start=0):
    """Deterministic rows with the edge values: years 1 and 9999, NaN/±Inf/-0.0,
    min/max integers, emoji, empty binary, null and empty nested values."""
    floats = ["NaN", "Infinity", "-Infinity", -0.0, 0.0, 1.5, -2.25, 3.4028234663852886e38]
    rows = []
    for k in range(start, start + n):
        r = {"id": k, "b": [True, False, None][k % 3],
             "i": [-2147483648, 2147483647, 0, -7, 42][k % 5],
             "l": [-9223372036854775808, 9223372036854775807, 0, 123456789012][k % 4],
             "f": floats[k % len(floats)], "d": floats[(k + 3) % len(floats)],
             "dec": ["-99999998.99", "99999999.99", "0.00", "-0.01", "12.34"][k % 5],
             "dt": ["0001-01-01", "9999-12-31", "1969-12-31", "2024-02-29"][k % 4],
             "ts": ["0001-01-01T00:00:00", "9999-12-31T23:59:59.999999", "1969-12-31T23:59:59.999999",
                    "2024-01-01T10:00:00"][k % 4],
             "tz": ["1970-01-01T00:00:00Z", "2024-06-30T23:59:59.5Z", "1900-01-01T00:00:00Z"][k % 3],
             "s": ["", "a", "abc", "abcd", "😀 emoji", "日本語テキスト", None][k % 7],
             "u": UUIDS[k % len(UUIDS)], "fx": b64(bytes([k % 256, 0, 255])),
             "bin": b64(b"" if k % 4 == 0 else bytes(range(k % 7))),
             "st": None if k % 5 == 0 else {"x": None if k % 3 == 0 else k, "z": f"z{k}" if k % 2 else None},
             "tags": None if k % 6 == 0 else [] if k % 6 == 1 else [f"t{k}", None],
             "m": None if k % 4 == 0 else {"a": k, "b": None}}
        if k % 11 == 0:  # mostly nulls
            r = {"id": k}
        rows.append(r)
    return rows


def ingest(floe, tmp_path, table, rows, name="in.json"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = floe.run("ingest", table, p, "--dead-letter", tmp_path / f"{name}.dead.jsonl")
    return out


def assert_same(got, want, what):
    assert len(got) == len(want), f"{what}: {len(got)} rows vs {len(want)}"
    for g, w in zip(got, want):
        assert g == w, f"{what}:\n{json.dumps(g, default=str)[:1500]}\n!=\n{json.dumps(w, default=str)[:1500]}"


def spark_in_memory(spark, table, where):
    """Spark's own answer: every row read first, then filtered in memory (no pushdown)."""
    df = spark.table(table).localCheckpoint()
    return df.where(where)


# predicates as (floe, spark): each is compared floe vs Spark with and without pushdown
PREDICATES = [
    ("id >= 30", "id >= 30"),
    ("id IN (1, 7, 44)", "id IN (1, 7, 44)"),
    ("i = -2147483648", "i = -2147483648"),
    ("i < 0", "i < 0"),
    ("l > 0", "l > 0"),
    ("dec < -5", "dec < -5"),
    ("dec = 99999999.99", "dec = 99999999.99"),
    ("dt < DATE '1970-01-01'", "dt < DATE '1970-01-01'"),
    ("dt = DATE '9999-12-31'", "dt = DATE '9999-12-31'"),
    ("ts >= '9999-01-01T00:00:00'", "ts >= TIMESTAMP_NTZ '9999-01-01 00:00:00'"),
    ("tz < '1970-01-01T00:00:00Z'", "tz < TIMESTAMP '1970-01-01 00:00:00'"),
    ("s = 'abc'", "s = 'abc'"),
    ("s STARTS WITH 'ab'", "s LIKE 'ab%'"),
    ("s > 'a'", "s > 'a'"),
    ("s IS NULL", "s IS NULL"),
    ("b = true", "b = true"),
    ("b IS NULL", "b IS NULL"),
    ("u = '9e3e4567-e89b-12d3-a456-426614174000'", "u = '9e3e4567-e89b-12d3-a456-426614174000'"),
    ("u = '123e4567-e89b-12d3-a456-426614174000'", "u = '123e4567-e89b-12d3-a456-426614174000'"),
    ("st IS NULL", "st IS NULL"),
    ("st IS NOT NULL", "st IS NOT NULL"),
    ("st.x IS NULL", "st.x IS NULL"),
    ("st.x > 10", "st.x > 10"),
    ("tags IS NULL", "tags IS NULL"),
    ("m IS NOT NULL", "m IS NOT NULL"),
    ("d = 0.0", "d = 0.0"),
    ("id < 5 OR s = 'a'", "id < 5 OR s = 'a'"),
]


@pytest.fixture(scope="module")
def tables(spark_floe, tmp_path_factory):
    """One table per format version (every type Spark has, every transform),
    written by two of floe's appends."""
    floe, spark = spark_floe
    tmp = tmp_path_factory.mktemp("rows")
    names = []
    for fv in (1, 2, 3):
        t = f"fl.all_v{fv}"
        floe.run("table", "create", t, "--schema", SCHEMA, "--partition", SPEC, "--format-version", fv)
        ingest(floe, tmp, t, make_rows(40), f"a{fv}.json")
        ingest(floe, tmp, t, make_rows(20, 40), f"b{fv}.json")
        names.append(t)
    return names


@pytest.mark.parametrize("fv", [1, 2, 3])
def test_spark_reads_every_row(spark_floe, tables, fv):
    floe, spark = spark_floe
    t = f"fl.all_v{fv}"
    want = floe_rows(floe, t, maps=MAPS)
    assert len(want) == 60
    assert_same(spark_rows(spark.table(t), maps=MAPS), want, t)


@pytest.mark.parametrize("fv", [1, 3])
def test_filtered_reads_with_and_without_pushdown(spark_floe, tables, fv):
    floe, spark = spark_floe
    t = f"fl.all_v{fv}"
    mem = spark.table(t).localCheckpoint()
    # v1 manifests (no sequence numbers, every field optional) on a sample; v3 on all
    for fe, se in PREDICATES if fv == 3 else PREDICATES[::3]:
        want = floe_rows(floe, t, "--where", fe, maps=MAPS)
        assert_same(spark_rows(spark.sql(f"SELECT * FROM {t} WHERE {se}"), maps=MAPS), want,
                    f"{t} WHERE {se} (pushdown)")
        assert_same(spark_rows(mem.where(se), maps=MAPS), want, f"{t} WHERE {se} (in memory)")


def test_nested_is_null_counts(spark_floe, tables):
    """floe once counted every row for `st IS NULL` and none for IS NOT NULL."""
    floe, spark = spark_floe
    t = "fl.all_v2"
    for where in ["st IS NULL", "st IS NOT NULL", "tags IS NULL", "tags IS NOT NULL", "m IS NULL",
                  "st.z IS NULL"]:
        got = int(floe.run("scan", t, "--where", where, "--count").stdout.strip())
        want = spark.sql(f"SELECT count(*) AS n FROM {t} WHERE {where}").collect()[0].n
        assert got == want, where
    assert int(floe.run("scan", t, "--where", "st IS NULL", "--count").stdout) not in (0, 60)


def meta_norm(v):
    """Spark metadata-table values in the form of floe's JSON output."""
    import datetime as dt
    import decimal

    if v is None:
        return None
    if hasattr(v, "asDict"):
        return {k: meta_norm(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, dict):
        return sorted([meta_norm(k), meta_norm(x)] for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return [meta_norm(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return b64(bytes(v))
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dt.date) and not isinstance(v, dt.datetime):
        return v.isoformat()
    return v


def floe_meta(floe, t, name):
    rows = floe.json_rows("inspect", t, name)
    for r in rows:
        for k, v in r.items():
            if isinstance(v, list) and v and isinstance(v[0], list):
                r[k] = sorted(v)
    return rows


FILE_COLS = ["content", "file_path", "file_format", "spec_id", "record_count", "file_size_in_bytes",
             "column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
             "upper_bounds", "split_offsets", "equality_ids", "sort_order_id", "first_row_id",
             "referenced_data_file", "content_offset", "content_size_in_bytes"]


def compare_meta(floe, spark, t, name, cols, key):
    got = sorted(({c: r.get(c) for c in cols} for r in floe_meta(floe, t, name)), key=key)
    sdf = spark.sql(f"SELECT {', '.join(cols)} FROM {t}.{name}")
    want = sorted(({c: meta_norm(getattr(r, c)) for c in cols} for r in sdf.collect()), key=key)
    for w in want:
        for ps in w.get("partition_summaries") or []:
            for side in ("lower_bound", "upper_bound"):
                if ps[side] == "":
                    ps[side] = None
    assert len(got) == len(want), f"{t}.{name}: {len(got)} rows vs {len(want)}"
    for g, w in zip(got, want):
        assert g == w, f"{t}.{name}:\n{json.dumps(g, default=str)[:1500]}\n!=\n{json.dumps(w, default=str)[:1500]}"


@pytest.mark.parametrize("fv", [1, 2, 3])
def test_metadata_tables(spark_floe, tables, fv):
    floe, spark = spark_floe
    t = f"fl.all_v{fv}"
    by_path = lambda r: (r.get("file_path") or r.get("path"), json.dumps(r, sort_keys=True, default=str))
    compare_meta(floe, spark, t, "snapshots", ["snapshot_id", "parent_id", "operation", "manifest_list"],
                 key=lambda r: r["snapshot_id"])
    cols = FILE_COLS if fv == 3 else [c for c in FILE_COLS if c not in ("first_row_id",)]
    for name in ["files", "data_files", "all_files", "all_data_files"]:
        compare_meta(floe, spark, t, name, cols, key=by_path)
    compare_meta(floe, spark, t, "all_delete_files", cols, key=by_path)
    # floe shows an empty lower bound as null, as PyIceberg's inspect does; Java as ''
    mcols = ["content", "path", "length", "partition_spec_id", "added_snapshot_id", "added_data_files_count",
             "existing_data_files_count", "deleted_data_files_count", "partition_summaries"]
    compare_meta(floe, spark, t, "manifests", mcols, key=by_path)
    compare_meta(floe, spark, t, "all_manifests", mcols + ["reference_snapshot_id"], key=by_path)
    ecols = ["status", "snapshot_id", "sequence_number", "file_sequence_number"]
    got = sorted((r["status"], r["snapshot_id"], r["sequence_number"], r["file_sequence_number"],
                  r["data_file"]["file_path"]) for r in floe_meta(floe, t, "all_entries"))
    want = sorted((r.status, r.snapshot_id, r.sequence_number, r.file_sequence_number, r.data_file.file_path)
                  for r in spark.sql(f"SELECT {', '.join(ecols)}, data_file FROM {t}.all_entries").collect())
    assert got == want
    # partition values as Spark shows them
    got = sorted(json.dumps(r["partition"], sort_keys=True) for r in floe_meta(floe, t, "files"))
    want = sorted(json.dumps(meta_norm(r.partition), sort_keys=True)
                  for r in spark.sql(f"SELECT partition FROM {t}.files").collect())
    assert got == want


def test_evolved_table(spark_floe, tmp_path):
    """Schema evolution (PyIceberg: add, rename, widen int -> long and
    float -> double, drop) between floe's appends: Spark reads every
    version's files under the current schema, as floe does."""
    floe, spark = spark_floe
    t = "fl.evolve"
    floe.run("table", "create", t, "--schema", "id long not null, i int, f float, s string, gone string",
             "--partition", "bucket(2, id), truncate(2, s)", "--format-version", 2)
    ingest(floe, tmp_path, t, [{"id": k, "i": k * 3, "f": k / 4, "s": f"s{k}", "gone": "x"} for k in range(10)],
           "e1.json")
    tbl = floe.pyiceberg_catalog().load_table(t)
    from pyiceberg.types import DoubleType, LongType, StringType

    with tbl.update_schema() as u:
        u.add_column("extra", StringType())
        u.rename_column("s", "s2")
        u.update_column("i", LongType())
        u.update_column("f", DoubleType())
        u.delete_column("gone")
    ingest(floe, tmp_path, t, [{"id": 10 + k, "i": 2 ** 40 + k, "f": 1e300, "s2": f"n{k}", "extra": f"e{k}"}
                               for k in range(10)], "e2.json")
    want = floe_rows(floe, t)
    assert len(want) == 20
    assert_same(spark_rows(spark.table(t)), want, t)
    for fe in ["i > 20", "s2 = 's3'", "extra IS NULL", "f > 1.0"]:
        assert_same(spark_rows(spark.sql(f"SELECT * FROM {t} WHERE {fe}")), floe_rows(floe, t, "--where", fe), fe)


def test_uuid_bounds_safe_for_java(spark_floe, tmp_path):
    """Java compares UUIDs as signed longs (apache/iceberg#14216): floe writes
    no UUID bounds and no partition summaries where the orders disagree, so
    Spark's pruning keeps every file that holds the value (it once returned
    nothing for u = '123e4567-...' on an identity(uuid) table)."""
    floe, spark = spark_floe
    t = "fl.uuids"
    floe.run("table", "create", t, "--schema", "id long, u uuid, k int", "--partition", "identity(u)",
             "--format-version", 2)
    rows = [{"id": k, "u": UUIDS[k % len(UUIDS)], "k": k} for k in range(24)]
    ingest(floe, tmp_path, t, rows, "u1.json")
    t2 = "fl.uuids_unpart"  # one file straddling the sign bit, so its column bounds matter
    floe.run("table", "create", t2, "--schema", "id long, u uuid", "--format-version", 2)
    ingest(floe, tmp_path, t2, rows, "u2.json")
    for u in UUIDS:
        for table in (t, t2):
            want = sum(1 for r in rows if r["u"] == u)
            assert spark.sql(f"SELECT count(*) AS n FROM {table} WHERE u = '{u}'").collect()[0].n == want, (table, u)
            assert int(floe.run("scan", table, "--where", f"u = '{u}'", "--count").stdout) == want
    # the manifest of values on both sides of the top bit carries no summaries
    (m,) = floe.json_rows("inspect", t, "manifests")
    assert m["partition_summaries"] == []
    (f,) = floe.json_rows("inspect", t2, "files")
    assert 2 not in [k for k, _ in f["lower_bounds"]] and 2 not in [k for k, _ in f["upper_bounds"]]
    # UUIDs on one side of the top bit keep (widened) bounds valid in both orders
    t3 = "fl.uuids_low"
    floe.run("table", "create", t3, "--schema", "id long, u uuid", "--format-version", 2)
    low = ["123e4567-e89b-12d3-a456-426614174000", "323e4567-e89b-12d3-a456-426614174000"]
    ingest(floe, tmp_path, t3, [{"id": k, "u": low[k % 2]} for k in range(4)], "u3.json")
    (f,) = floe.json_rows("inspect", t3, "files")
    assert 2 in [k for k, _ in f["lower_bounds"]] and 2 in [k for k, _ in f["upper_bounds"]]
    for u in low:
        assert spark.sql(f"SELECT count(*) AS n FROM {t3} WHERE u = '{u}'").collect()[0].n == 2


def test_decimal_truncate_past_precision_is_refused(spark_floe, tmp_path):
    """truncate(100) of -99999999.99 in decimal(10, 2) is -100000000.00 (11
    digits): Java refuses to write it, and so does floe (a dead letter with
    the reason); the table stays readable by Spark and PyIceberg."""
    floe, spark = spark_floe
    t = "fl.dec_trunc"
    floe.run("table", "create", t, "--schema", "id long, dec decimal(10, 2)", "--partition", "truncate(100, dec)",
             "--format-version", 2)
    rows = [{"id": 1, "dec": "-99999999.99"}, {"id": 2, "dec": "-99999998.99"}, {"id": 3, "dec": "99999999.99"}]
    ingest(floe, tmp_path, t, rows, "d.json")
    dead = [json.loads(x) for x in (tmp_path / "d.json.dead.jsonl").read_text().splitlines()]
    assert [json.loads(d["record"])["id"] for d in dead] == [1]
    assert "truncate[100] of -99999999.99 is -100000000.00, which does not fit decimal(10, 2)" in dead[0]["reason"]
    got = sorted(r.id for r in spark.table(t).collect())
    assert got == [2, 3]
    parts = sorted(str(r.partition.dec_trunc) for r in spark.sql(f"SELECT partition FROM {t}.partitions").collect())
    assert parts == ["-99999999.00", "99999999.00"]
    tbl = floe.pyiceberg_catalog().load_table(t)
    assert tbl.inspect.partitions().num_rows == 2


def test_creation_properties_as_java(spark_floe):
    """A table floe creates carries the properties a Java-created one does
    (write.parquet.compression-codec=zstd), so Spark's writers use zstd on it."""
    floe, spark = spark_floe
    floe.run("table", "create", "fl.props_floe", "--schema", "id long")
    spark.sql("CREATE TABLE fl.props_spark (id bigint) USING iceberg")
    reserved = {"current-snapshot-id", "format", "format-version", "provider", "location", "owner"}

    def props(t):
        return {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect() if r.key not in reserved}

    assert props("fl.props_floe") == props("fl.props_spark")
    assert props("fl.props_floe")["write.parquet.compression-codec"] == "zstd"
    spark.sql("INSERT INTO fl.props_floe VALUES (1), (2)")
    (f,) = [r for r in spark.sql("SELECT file_path FROM fl.props_floe.files").collect()]
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(f.file_path.removeprefix("file:")).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"


# ---- edges where floe and Java agree and Spark's in-memory answer differs (docs/interop.md) ----


def test_edge_nan_comparisons(spark_floe, tmp_path):
    """Spark SQL orders NaN above every number, so its in-memory `f > 400`
    keeps NaN rows; Iceberg (Java's evaluators, floe) compares as IEEE does:
    NaN > 400 is false, and with pushdown Spark's answer depends on pruning."""
    floe, spark = spark_floe
    t = "fl.edge_nan"
    floe.run("table", "create", t, "--schema", "id long, f float", "--format-version", 2)
    ingest(floe, tmp_path, t, [{"id": 1, "f": "NaN"}, {"id": 2, "f": 500.0}, {"id": 3, "f": 1.0}], "n.json")
    assert [r["id"] for r in floe_rows(floe, t, "--where", "f > 400")] == [2]
    assert sorted(r.id for r in spark_in_memory(spark, t, "f > 400").collect()) == [1, 2]
    assert [r["id"] for r in floe_rows(floe, t, "--where", "f IS NAN")] == [1]
    assert [r.id for r in spark.sql(f"SELECT id FROM {t} WHERE isnan(f)").collect()] == [1]


def test_edge_negative_zero(spark_floe, tmp_path):
    """A lone -0.0 in a file: SQL says -0.0 = 0.0. Java writes the bounds
    -0.0/-0.0 and then prunes `d = 0.0`; floe widens a zero bound to cover
    both zeros (the spec allows a wider bound) and reads a zero bound the same
    way, so floe's and Spark's answers on floe's tables include the row."""
    floe, spark = spark_floe
    t = "fl.edge_zero"
    floe.run("table", "create", t, "--schema", "id long, d double", "--format-version", 2)
    ingest(floe, tmp_path, t, [{"id": 1, "d": -0.0}], "z.json")
    (f,) = floe.json_rows("inspect", t, "files")
    lo = dict(f["lower_bounds"])[2]
    hi = dict(f["upper_bounds"])[2]
    assert math.copysign(1, struct.unpack("<d", base64.b64decode(lo))[0]) < 0
    assert math.copysign(1, struct.unpack("<d", base64.b64decode(hi))[0]) > 0  # widened to +0.0
    assert [r["id"] for r in floe_rows(floe, t, "--where", "d = 0.0")] == [1]
    assert [r.id for r in spark.sql(f"SELECT id FROM {t} WHERE d = 0.0").collect()] == [1]
    assert [r.id for r in spark_in_memory(spark, t, "d = 0.0").collect()] == [1]


def test_edge_truncate_int_min_wraps(spark_floe, tmp_path):
    """Java's truncate(3) of Integer.MIN_VALUE wraps to 2147483647 (int
    arithmetic): floe writes the same partition value, so both prune the row
    from `i < 0` by its partition; Spark without pushdown finds it."""
    floe, spark = spark_floe
    t = "fl.edge_trunc"
    floe.run("table", "create", t, "--schema", "id long, i int", "--partition", "truncate(3, i)",
             "--format-version", 2)
    ingest(floe, tmp_path, t, [{"id": 1, "i": -2147483648}, {"id": 2, "i": -5}], "t.json")
    parts = sorted(r.partition.i_trunc for r in spark.sql(f"SELECT partition FROM {t}.files").collect())
    assert parts == [-6, 2147483647]
    assert [r["id"] for r in floe_rows(floe, t, "--where", "i < 0")] == [2]
    assert [r.id for r in spark.sql(f"SELECT id FROM {t} WHERE i < 0").collect()] == [2]
    assert sorted(r.id for r in spark_in_memory(spark, t, "i < 0").collect()) == [1, 2]
