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
        assert mine_files[path]["partition"] == partition


def test_floe_reads_java_table(floe, tmp_path, java_peer):
    floe.run("namespace", "list")  # creates the embedded catalog
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
    assert sorted(f["partition"] for f in files) == ["kind=x", "kind=y"]
    assert sum(f["record_count"] for f in files) == 14
    # and floe appends to the Java-made table, which PyIceberg then reads whole
    p = tmp_path / "more.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": 999, "kind": "x"}], schema=schema), p)
    floe.run("add-files", "jv.t", p)
    tbl = floe.pyiceberg_catalog().load_table("jv.t")
    assert tbl.scan().to_arrow().num_rows == 15
    assert len(tbl.snapshots()) == 2
