"""Avro container interop: files written by `floe avro write` are read back by
DuckDB's avro extension and by PyIceberg's own Avro reader with the same
values, for every codec; files written by PyIceberg's Avro writer are read by
`floe avro cat`.

Run from the repository root:
    .venv/bin/python -m pytest tests/interop/test_avro_interop.py
The floe binary is found by conftest.floe_bin() (FLOE_BIN overrides).
"""
import json
import math
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from conftest import floe_bin

FLOE = floe_bin()
CODECS = ["null", "deflate", "snappy", "zstandard"]


def need_codec(codec):
    """PyIceberg's snappy codec needs python-snappy (installed by scripts/setup)."""
    if codec == "snappy":
        import snappy  # noqa: F401  (a missing oracle is a failure, not a skip)


def floe(*args):
    return subprocess.run([FLOE, *args], check=True, capture_output=True, text=True).stdout


def latin1(b: bytes) -> str:
    """Avro JSON encoding of bytes: one code point per byte."""
    return b.decode("latin-1")


# ---- every Avro type, read by DuckDB ---------------------------------------------------

GENERIC_SCHEMA = {
    "type": "record",
    "name": "all_types",
    "namespace": "floe.test",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "by", "type": "bytes"},
        {"name": "s", "type": "string"},
        {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "fx", "type": {"type": "fixed", "name": "F4", "size": 4}},
        {"name": "arr", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": ["null", "string"]}},
        {"name": "opt", "type": ["null", "long"], "default": None},
        {"name": "rec", "type": {"type": "record", "name": "Inner",
                                 "fields": [{"name": "x", "type": "int"},
                                            {"name": "y", "type": ["null", "string"]}]}},
        {"name": "recs", "type": {"type": "array", "items": "Inner"}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    ],
}


def generic_rows(n):
    rows = []
    for k in range(n):
        rows.append({
            "b": k % 2 == 0,
            "i": -(2 ** 31) + k if k % 7 == 0 else k * 1000 - 5,
            "l": 2 ** 63 - 1 - k if k % 5 == 0 else -k * 123456789012,
            "f": k / 8.0,
            "d": k * 1.0e300 / 7 if k % 3 else -k / 3.0,
            "by": latin1(bytes([k % 256, 0, 255, 10])[: k % 5]),
            "s": f"row {k} \u00e9\u4e2d\U0001f600",
            "e": ["RED", "GREEN", "BLUE"][k % 3],
            "fx": latin1(bytes([k % 256, 1, 2, 255])),
            "arr": list(range(k % 6)),
            "m": {f"k{j}": (None if j % 2 else f"v{j}") for j in range(k % 4)},
            "opt": None if k % 2 else k,
            "rec": {"x": k, "y": None if k % 3 == 0 else "y"},
            "recs": [{"x": j, "y": "z"} for j in range(k % 3)],
            "ts": 1_700_000_000_000_000 + k,
            "day": 19_000 + k,
        })
    return rows


def write_floe(tmp_path, schema, rows, codec, name, block_bytes=None, meta=()):
    sp = tmp_path / f"{name}.schema.json"
    rp = tmp_path / f"{name}.jsonl"
    out = tmp_path / f"{name}.avro"
    sp.write_text(json.dumps(schema))
    rp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["avro", "write", "--codec", codec]
    if block_bytes:
        args += ["--block-bytes", str(block_bytes)]
    for kv in meta:
        args += ["--meta", kv]
    floe(*args, str(sp), str(rp), str(out))
    return out


def duckdb_con():
    duckdb = pytest.importorskip("duckdb")
    from duckdb_extensions import import_extension

    con = duckdb.connect()
    import_extension("avro", con=con)
    con.execute("LOAD avro")
    return con


def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-15)
    return a == b


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy"])
def test_duckdb_reads_floe_files(tmp_path, codec):
    # DuckDB 1.5's avro extension has no zstandard codec (PyIceberg checks it below).
    import datetime

    rows = generic_rows(300)
    path = write_floe(tmp_path, GENERIC_SCHEMA, rows, codec, f"g_{codec}", block_bytes=2048)
    con = duckdb_con()
    cur = con.execute(
        "select b, i, l, f, d, \"by\", s, e, fx, arr, m, opt, rec, recs, "
        "epoch_us(ts), day from read_avro(?)", [str(path)])
    got = cur.fetchall()
    assert len(got) == len(rows)
    for k, (row, g) in enumerate(zip(rows, got)):
        assert g[0] == row["b"]
        assert g[1] == row["i"]
        assert g[2] == row["l"]
        assert close(g[3], row["f"])
        assert close(g[4], row["d"])
        assert bytes(g[5]) == row["by"].encode("latin-1")
        assert g[6] == row["s"]
        assert g[7] == row["e"]
        assert bytes(g[8]) == row["fx"].encode("latin-1")
        assert g[9] == row["arr"]
        assert dict(g[10]) == row["m"]
        assert g[11] == row["opt"]
        assert g[12] == row["rec"]
        assert g[13] == row["recs"]
        assert g[14] == row["ts"]
        assert g[15] == datetime.date(1970, 1, 1) + datetime.timedelta(days=row["day"])


def test_duckdb_reads_empty_and_zero_field_files(tmp_path):
    con = duckdb_con()
    path = write_floe(tmp_path, GENERIC_SCHEMA, [], "deflate", "empty")
    assert con.execute("select count(*) from read_avro(?)", [str(path)]).fetchone()[0] == 0
    # a record with a zero-field record inside (Iceberg's unpartitioned partition)
    schema = {"type": "record", "name": "e", "fields": [
        {"name": "id", "type": "long"},
        {"name": "partition", "type": {"type": "record", "name": "r102", "fields": []}}]}
    path = write_floe(tmp_path, schema, [{"id": i, "partition": {}} for i in range(5)], "snappy", "zf")
    assert [r[0] for r in con.execute("select id from read_avro(?)", [str(path)]).fetchall()] == list(range(5))


# ---- Iceberg-shaped files, read by PyIceberg's Avro reader ---------------------------------

ICEBERG_SCHEMA = {
    "type": "record",
    "name": "manifest_entry",
    "fields": [
        {"name": "status", "type": "int", "field-id": 0},
        {"name": "snapshot_id", "type": ["null", "long"], "default": None, "field-id": 1},
        {"name": "data_file", "field-id": 2, "type": {
            "type": "record", "name": "r2", "fields": [
                {"name": "file_path", "type": "string", "field-id": 100},
                {"name": "file_format", "type": "string", "field-id": 101},
                {"name": "partition", "field-id": 102, "type": {
                    "type": "record", "name": "r102", "fields": [
                        {"name": "ts_day", "type": ["null", {"type": "int", "logicalType": "date"}],
                         "default": None, "field-id": 1000}]}},
                {"name": "record_count", "type": "long", "field-id": 103},
                {"name": "ok", "type": "boolean", "field-id": 90},
                {"name": "ratio", "type": "float", "field-id": 91},
                {"name": "score", "type": "double", "field-id": 92},
                {"name": "column_sizes", "default": None, "field-id": 108, "type": ["null", {
                    "type": "array", "logicalType": "map", "items": {
                        "type": "record", "name": "k117_v118", "fields": [
                            {"name": "key", "type": "int", "field-id": 117},
                            {"name": "value", "type": "long", "field-id": 118}]}}]},
                {"name": "props", "field-id": 93, "type": {
                    "type": "map", "values": "string", "key-id": 94, "value-id": 95}},
                {"name": "key_metadata", "type": ["null", "bytes"], "default": None, "field-id": 131},
                {"name": "split_offsets", "default": None, "field-id": 132, "type": [
                    "null", {"type": "array", "items": "long", "element-id": 133}]},
                {"name": "uuid", "field-id": 96, "type": {
                    "type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}},
                {"name": "dec", "field-id": 97, "type": {
                    "type": "fixed", "name": "decimal_9_2", "size": 4, "logicalType": "decimal",
                    "precision": 9, "scale": 2}},
            ]}},
    ],
}


def iceberg_rows(n):
    rows = []
    for k in range(n):
        rows.append({
            "status": k % 3,
            "snapshot_id": None if k % 4 == 0 else 7340012345678901234 + k,
            "data_file": {
                "file_path": f"s3://bucket/db/t/data/f{k}.parquet",
                "file_format": "PARQUET",
                "partition": {"ts_day": None if k % 5 == 0 else 19723 + k},
                "record_count": 1000 + k,
                "ok": k % 2 == 1,
                "ratio": 0.25 * k,
                "score": -1.5 * k,
                "column_sizes": None if k % 6 == 0 else [{"key": c, "value": c * k} for c in range(1, 4)],
                "props": {"a": str(k), "b": "x"},
                "key_metadata": None if k % 2 else latin1(bytes([k % 256, 0, 200])),
                "split_offsets": [4, 100 + k],
                "uuid": latin1(bytes(range(k % 200, k % 200 + 16))),
                "dec": latin1((k * 101 - 5000).to_bytes(4, "big", signed=True)),
            },
        })
    return rows


@pytest.mark.parametrize("codec", CODECS)
def test_pyiceberg_reads_floe_files(tmp_path, codec):
    import decimal
    import uuid

    from pyiceberg.avro.file import AvroFile
    from pyiceberg.io.pyarrow import PyArrowFileIO

    need_codec(codec)
    rows = iceberg_rows(500)
    path = write_floe(tmp_path, ICEBERG_SCHEMA, rows, codec, f"ice_{codec}", block_bytes=4096,
                      meta=["format-version=2", "content=data"])
    io = PyArrowFileIO()
    with AvroFile(io.new_input(str(path))) as f:
        assert f.header.meta["format-version"] == "2"
        assert f.header.meta["avro.codec"] == codec
        got = list(f)
    assert len(got) == len(rows)
    for row, rec in zip(rows, got):
        df, gdf = row["data_file"], rec[2]
        assert rec[0] == row["status"]
        assert rec[1] == row["snapshot_id"]
        assert gdf[0] == df["file_path"]
        assert gdf[1] == df["file_format"]
        day = df["partition"]["ts_day"]
        gday = gdf[2][0]
        if day is None:
            assert gday is None
        else:
            assert (gday if isinstance(gday, int) else (gday - __import__("datetime").date(1970, 1, 1)).days) == day
        assert gdf[3] == df["record_count"]
        assert gdf[4] == df["ok"]
        assert gdf[5] == df["ratio"]
        assert gdf[6] == df["score"]
        if df["column_sizes"] is None:
            assert gdf[7] is None
        else:
            assert dict(gdf[7]) == {e["key"]: e["value"] for e in df["column_sizes"]}
        assert dict(gdf[8]) == df["props"]
        km = df["key_metadata"]
        assert gdf[9] == (None if km is None else km.encode("latin-1"))
        assert list(gdf[10]) == df["split_offsets"]
        assert gdf[11] == uuid.UUID(bytes=df["uuid"].encode("latin-1"))
        unscaled = int.from_bytes(df["dec"].encode("latin-1"), "big", signed=True)
        assert gdf[12] == decimal.Decimal(unscaled).scaleb(-2)


# ---- PyIceberg writes, floe reads ------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_floe_reads_pyiceberg_files(tmp_path, codec):
    from pyiceberg.avro.file import AvroOutputFile
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.schema import Schema
    from pyiceberg.typedef import Record
    from pyiceberg.types import (BinaryType, BooleanType, DoubleType, IntegerType, ListType,
                                 LongType, MapType, NestedField, StringType, StructType)

    need_codec(codec)
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "flag", BooleanType(), required=True),
        NestedField(4, "score", DoubleType(), required=False),
        NestedField(5, "blob", BinaryType(), required=False),
        NestedField(6, "tags", ListType(7, StringType(), element_required=True), required=True),
        NestedField(8, "counts", MapType(9, IntegerType(), 10, LongType(), value_required=True),
                    required=False),
        NestedField(11, "point", StructType(NestedField(12, "x", IntegerType(), required=True)),
                    required=True),
    )
    records = []
    for k in range(200):
        records.append(Record(k, None if k % 3 == 0 else f"n{k}", k % 2 == 0, k * 0.5,
                              bytes([k % 256, 7]), [f"t{j}" for j in range(k % 3)],
                              {j: j * k for j in range(k % 4)}, Record(k * 10)))
    path = tmp_path / f"py_{codec}.avro"
    io = PyArrowFileIO()
    with AvroOutputFile(io.new_output(str(path)), schema, "test_schema",
                        metadata={"avro.codec": codec, "format-version": "2"}) as out:
        out.write_block(records)
    meta = json.loads(floe("avro", "meta", str(path)))
    assert meta["codec"] == codec
    assert meta["records"] == 200
    assert meta["metadata"]["format-version"] == "2"
    # split on "\n" only: str.splitlines() also splits at U+0085, a byte value here
    lines = [json.loads(x) for x in floe("avro", "cat", str(path)).split("\n") if x]
    assert len(lines) == 200
    for k, got in enumerate(lines):
        assert got["id"] == k
        assert got["name"] == (None if k % 3 == 0 else f"n{k}")
        assert got["flag"] == (k % 2 == 0)
        assert got["score"] == k * 0.5
        assert got["blob"].encode("latin-1") == bytes([k % 256, 7])
        assert got["tags"] == [f"t{j}" for j in range(k % 3)]
        # int-keyed maps are arrays of key/value records in Iceberg's Avro
        assert {e["key"]: e["value"] for e in got["counts"]} == {j: j * k for j in range(k % 4)}
        assert got["point"] == {"x": k * 10}


def test_floe_cat_and_meta_on_a_java_manifest_list():
    root = os.environ.get("FLOE_TESTDATA", os.path.join(ROOT, "../shared/testdata"))
    path = os.path.join(root, "iceberg-rust/crates/iceberg/testdata/manifests_lists/manifest-list-v2-2.avro")
    if not os.path.exists(path):
        pytest.skip("shared testdata not found")
    meta = json.loads(floe("avro", "meta", path))
    assert meta["codec"] == "deflate"
    assert meta["records"] == 1
    assert meta["metadata"]["avro.schema"]["name"] == "manifest_file"
    rec = json.loads(floe("avro", "cat", path).split("\n")[0])
    assert rec["manifest_path"].endswith("-m0.avro")
    assert rec["added_files_count"] == 1
