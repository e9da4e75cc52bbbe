"""Iceberg's Java JdbcCatalog (1.10) and floe share one SQLite catalog file:
Java loads and plans the tables floe created and appended to (every format
version, several partition transforms) and floe lists the table Java wrote."""
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


@pytest.mark.parametrize("fv", [1, 2, 3])
def test_java_reads_floe_tables(floe, tmp_path, java_peer, fv):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.t", "--schema", "id long, kind string, ts timestamp",
             "--partition", "kind, bucket(4, id), day(ts)", "--format-version", fv)
    schema = pa.schema([("id", pa.int64()), ("kind", pa.string()), ("ts", pa.timestamp("us"))])
    import datetime as dt

    files = []
    for k, (kind, day) in enumerate([("a", 1), ("b", 2), ("a", 3)]):
        p = tmp_path / f"f{k}.parquet"
        pq.write_table(pa.Table.from_pylist(
            [{"id": 10 * k, "kind": kind, "ts": dt.datetime(2024, 1, day, j)} for j in range(5)], schema=schema), p)
        files.append(p)
    floe.run("add-files", "db.t", files[0])
    floe.run("add-files", "db.t", *files[1:])

    out = java_peer("read", floe.warehouse / "catalog.db", f"file://{floe.warehouse}")
    (table,) = [json.loads(line) for line in out.splitlines()]
    assert table["table"] == "db.t"
    assert table["format_version"] == fv
    assert table["rows"] == 15
    mine_snaps = floe.json_rows("snapshots", "db.t")
    java_snaps = [s.split("|") for s in table["snapshots"]]
    assert [int(s[0]) for s in java_snaps] == [s["snapshot_id"] for s in mine_snaps]
    assert [s[3] for s in java_snaps] == ["append", "append"]
    assert java_snaps[-1][4] == "15"
    mine_files = {f["file_path"]: f for f in floe.json_rows("files", "db.t")}
    for f in table["files"]:
        path, records, size, partition = f.split("|")
        assert mine_files[path]["record_count"] == int(records)
        assert mine_files[path]["file_size_in_bytes"] == int(size)
        assert "/".join(f"{k}={v}" for k, v in mine_files[path]["partition"].items()) == partition


def test_floe_reads_java_table(floe, tmp_path, java_peer):
    (floe.root / "warehouse").mkdir(parents=True, exist_ok=True)  # the catalog file comes from the peer (a read-only floe command creates none)
    schema = pa.schema([("id", pa.int64()), ("kind", pa.string())])
    args = []
    for k, kind in enumerate(["x", "y"]):
        p = tmp_path / f"j{k}.parquet"
        pq.write_table(pa.Table.from_pylist([{"id": k * 100 + j, "kind": kind} for j in range(7)], schema=schema), p)
        args.append(f"{p}:7:{kind}")
    sid = int(java_peer("write", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "jv.t", *args))
    snaps = floe.json_rows("snapshots", "jv.t")
    assert [s["snapshot_id"] for s in snaps] == [sid]
    files = floe.json_rows("files", "jv.t")
    assert sorted(f["partition"]["kind"] for f in files) == ["x", "y"]
    assert sum(f["record_count"] for f in files) == 14
    # and floe appends to the Java-made table, which PyIceberg then reads whole
    p = tmp_path / "more.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": 999, "kind": "x"}], schema=schema), p)
    floe.run("add-files", "jv.t", p)
    tbl = floe.pyiceberg_catalog().load_table("jv.t")
    assert tbl.scan().to_arrow().num_rows == 15
    assert len(tbl.snapshots()) == 2


def test_manifests_written_as_java_writes_them(floe, tmp_path, java_peer):
    """floe appends to a table Java 1.10 made: floe's manifest list and manifest
    carry the same Avro schema as Java's (record names, field ids on every node,
    unions, defaults, the required partition struct) and the same header keys
    and values. Known differences, both ignored by every reader: Java adds "doc"
    attributes and an "iceberg.schema" header key; floe adds "schema-id"."""
    (floe.root / "warehouse").mkdir(parents=True, exist_ok=True)  # the catalog file comes from the peer (a read-only floe command creates none)
    schema = pa.schema([("id", pa.int64()), ("kind", pa.string())])
    pq.write_table(pa.Table.from_pylist([{"id": 1, "kind": "x"}], schema=schema), tmp_path / "j.parquet")
    pq.write_table(pa.Table.from_pylist([{"id": 2, "kind": "x"}], schema=schema), tmp_path / "f.parquet")
    java_peer("write", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "jv.m", f"{tmp_path / 'j.parquet'}:1:x")
    floe.run("add-files", "jv.m", tmp_path / "f.parquet")
    java_snap, floe_snap = floe.json_rows("snapshots", "jv.m")

    def meta(location):
        path = location[len("file://"):] if location.startswith("file://") else location
        return json.loads(floe.run("avro", "meta", path).stdout)["metadata"]

    def no_docs(x):
        if isinstance(x, dict):
            return {k: no_docs(v) for k, v in x.items() if k != "doc"}
        if isinstance(x, list):
            return [no_docs(v) for v in x]
        return x

    jl, fl = meta(java_snap["manifest_list"]), meta(floe_snap["manifest_list"])
    assert no_docs(fl["avro.schema"]) == no_docs(jl["avro.schema"])
    assert set(fl) == set(jl) - {"iceberg.schema"}
    assert fl["format-version"] == jl["format-version"] == "2"
    assert fl["parent-snapshot-id"] == str(java_snap["snapshot_id"])

    tbl = floe.pyiceberg_catalog().load_table("jv.m")
    by_snap = {}
    for m in tbl.current_snapshot().manifests(tbl.io):
        by_snap[m.added_snapshot_id] = m.manifest_path
    jm, fm = meta(by_snap[java_snap["snapshot_id"]]), meta(by_snap[floe_snap["snapshot_id"]])
    assert no_docs(fm["avro.schema"]) == no_docs(jm["avro.schema"])
    assert set(fm) - {"schema-id"} == set(jm) - {"iceberg.schema"}
    for k in ("schema", "partition-spec", "partition-spec-id", "format-version", "content"):
        assert fm[k] == jm[k], k
