"""floe inspect on tables that hold delete files, against PyIceberg's inspect.

test_scan_interop.py compares the metadata tables of tables PyIceberg writes,
which never hold delete files (its deletes and overwrites rewrite data files),
so the delete columns — content, equality_ids, the partitions table's
position/equality delete counts — are all zero there. The DuckDB tables of
../shared/testdata (Spark/PyIceberg-written, equality deletes, several
partitions) record relative paths (`data/persistent/...`), which PyIceberg's
StaticTable resolves from the duckdb-iceberg folder: both sides read the same
copied manifests, and floe's rows must equal PyIceberg's value for value.
Deletion vectors (v3 position deletes) come from Java 1.10 writing into a
table floe made.
"""
import base64
import datetime as dt
import decimal
import json
import math
import os
from pathlib import Path

import pytest

from conftest import ROOT, without_java_columns

TESTDATA = Path(os.environ.get("FLOE_TESTDATA") or (ROOT.parent / "shared" / "testdata"))
if not (TESTDATA / "INVENTORY.md").exists():
    TESTDATA = Path("/work/shared/testdata")
DUCKDB = TESTDATA / "duckdb-iceberg"

# (table folder under duckdb-iceberg, metadata file): every one holds equality deletes
TABLES = [
    ("data/persistent/equality_deletes/warehouse/mydb/mytable", "v7.metadata.json"),
    ("data/persistent/equality_deletes/warehouse/mydb/mytable_partitioned", "v6.metadata.json"),
    ("data/persistent/equality_delete_cross_partition/warehouse/ns/t", "vfinal.metadata.json"),
    ("data/persistent/equality_delete_extra_column/warehouse/ns/t", "vfinal.metadata.json"),
]

META_TABLES = ["files", "data_files", "delete_files", "entries", "partitions", "manifests", "all_files",
               "all_data_files", "all_delete_files"]


def norm_py(v):
    if isinstance(v, dict):
        return {k: norm_py(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [norm_py(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.timezone.utc)
        return v.astimezone(dt.timezone.utc).isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else round(v, 6)
    return v


def norm_floe(v):
    if isinstance(v, dict):
        return {k: norm_floe(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm_floe(x) for x in v]
    if isinstance(v, str) and len(v) >= 19 and v[4] == "-" and v[10] == "T":
        d = dt.datetime.fromisoformat(v)
        if d.tzinfo is None:
            d = d.replace(tzinfo=dt.timezone.utc)
        return d.astimezone(dt.timezone.utc).isoformat()
    if isinstance(v, float):
        return round(v, 6)
    if v == "NaN":
        return "nan"
    if isinstance(v, str) and v.startswith(f"{DUCKDB}/"):
        # floe prints the relocated location (--path-map); PyIceberg the recorded one
        return v[len(str(DUCKDB)) + 1:]
    return v


def canon(rows):
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def pyiceberg_table(folder, meta):
    from pyiceberg.table import StaticTable

    cwd = os.getcwd()
    os.chdir(DUCKDB)  # the recorded paths are relative to the duckdb-iceberg folder
    try:
        return StaticTable.from_metadata(f"{folder}/metadata/{meta}")
    finally:
        os.chdir(cwd)


def py_inspect(tbl, name):
    cwd = os.getcwd()
    os.chdir(DUCKDB)
    try:
        return [norm_py(r) for r in getattr(tbl.inspect, name)().to_pylist()]
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("folder,meta", TABLES, ids=[t[0].split("/")[2] + "/" + t[0].split("/")[-1] for t in TABLES])
def test_metadata_tables_with_equality_deletes_match_pyiceberg(floe, folder, meta):
    tbl = pyiceberg_table(folder, meta)
    path = DUCKDB / folder / "metadata" / meta
    remap = f"data/persistent/={DUCKDB}/data/persistent/"
    compared = []
    for name in META_TABLES:
        try:
            want = canon(py_inspect(tbl, name))
        except (TypeError, OverflowError, FileNotFoundError):
            # PyIceberg 0.12 cannot build some of these tables (entries of
            # manifests without metrics; the all_* tables of copies that lack
            # old snapshots' manifest lists); nothing to compare against
            continue
        out = floe.run("inspect", path, name, "--format", "json", "--path-map", remap).stdout
        got = canon([norm_floe(without_java_columns(json.loads(line))) for line in out.splitlines()
                     if line.strip()])
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert list(g) == list(w), f"{name}: columns"
            assert g == w, f"{name}: {json.dumps(g, default=str)[:800]}\n!=\n{json.dumps(w, default=str)[:800]}"
        compared.append(name)
    assert {"delete_files", "partitions"} <= set(compared)
    # the delete columns are not all zero: the tables hold equality deletes
    out = floe.run("inspect", path, "partitions", "--format", "json", "--path-map", remap).stdout
    parts = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert sum(p["equality_delete_file_count"] for p in parts) > 0
    assert sum(p["equality_delete_record_count"] for p in parts) > 0


def test_metadata_tables_with_deletion_vectors_match_pyiceberg(floe, tmp_path, java_peer):
    """Java 1.10 writes deletion vectors (one Puffin file, two data files) into a
    v3 table floe made; floe's metadata tables equal PyIceberg's, the
    partitions table's position delete counts included."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.dv", "--schema", "id long, kind string", "--partition", "kind",
             "--format-version", "3")
    schema = pa.schema([("id", pa.int64()), ("kind", pa.string())])
    files = []
    for k, kind in enumerate("xy"):
        p = tmp_path / f"d{k}.parquet"
        pq.write_table(pa.Table.from_pylist([{"id": k * 100 + j, "kind": kind} for j in range(10)], schema=schema), p)
        files.append(p)
    floe.run("add-files", "db.dv", *files)
    java_peer("dv", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "db.dv",
              f"file://{files[0]}=1,3", f"file://{files[1]}=0")
    tbl = floe.pyiceberg_catalog().load_table("db.dv")
    compared = []
    for name in META_TABLES + ["snapshots"]:
        try:
            want = canon([norm_py(r) for r in getattr(tbl.inspect, name)().to_pylist()])
        except TypeError:
            continue  # PyIceberg 0.12's entries table fails on v3 manifests
        got = canon([norm_floe(without_java_columns(r)) for r in floe.json_rows("inspect", "db.dv", name)])
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert list(g) == list(w), f"{name}: columns"
            assert g == w, f"{name}: {json.dumps(g, default=str)[:800]}\n!=\n{json.dumps(w, default=str)[:800]}"
        compared.append(name)
    assert {"delete_files", "partitions", "files"} <= set(compared)
    parts = floe.json_rows("inspect", "db.dv", "partitions")
    assert sorted((p["partition"]["kind"], p["position_delete_record_count"], p["position_delete_file_count"])
                  for p in parts) == [("x", 2, 1), ("y", 1, 1)]
    assert int(floe.run("scan", "db.dv", "--count").stdout) == 17
    # Java's v3 columns: where each DV is (referenced file, blob offset and size)
    dvs = sorted(floe.json_rows("inspect", "db.dv", "delete_files"), key=lambda r: r["referenced_data_file"])
    assert [d["referenced_data_file"] for d in dvs] == [f"file://{files[0]}", f"file://{files[1]}"]
    assert all(d["content_offset"] >= 4 and d["content_size_in_bytes"] > 0 for d in dvs)
    assert dvs[0]["file_path"] == dvs[1]["file_path"]  # one Puffin file
    assert [d["first_row_id"] for d in dvs] == [None, None]
    data = floe.json_rows("inspect", "db.dv", "data_files")
    assert sorted(d["first_row_id"] for d in data) == [0, 10]
    # position_deletes: every deleted position with its DV
    pd = floe.json_rows("inspect", "db.dv", "position_deletes")
    assert sorted((r["file_path"], r["pos"]) for r in pd) == [
        (f"file://{files[0]}", 1), (f"file://{files[0]}", 3), (f"file://{files[1]}", 0)]
    blobs = {d["referenced_data_file"]: (d["file_path"], d["content_offset"], d["content_size_in_bytes"])
             for d in dvs}
    for r in pd:
        assert (r["delete_file_path"], r["content_offset"], r["content_size_in_bytes"]) == blobs[r["file_path"]]
        assert r["row"] is None and r["spec_id"] == 0
        assert r["partition"] == {"kind": "x" if r["file_path"].endswith("d0.parquet") else "y"}
