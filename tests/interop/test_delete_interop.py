"""floe's delete writers read back by the reference implementations.

tests/tools/delete_tool (a test-only driver, not a product command) writes
equality delete files, position delete files (v2) or deletion vectors (v3) -
and optionally new data rows - through the write layer and commits them in
one row delta. After each commit the table is read, with the deletes applied,
by Java Iceberg 1.10 (IcebergGenerics, the java_peer's scan), Spark 3.5
with Iceberg 1.10's runtime (one session for the module, on the module's floe
directory), DuckDB's iceberg extension, PyIceberg (where it reads the delete kind: position
deletes and DVs; it refuses equality deletes) and `floe scan`, and each must
equal a Python model of the rows. The manifest entries, as PyIceberg decodes
them, carry what Java's writers record (content, equality_ids, sort order,
referenced_data_file, DV offsets, Java's metrics rule for file_path/pos),
and the snapshot summaries Java's counts.
"""
import json
import os
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import duckdb_connection, floe_bin
from test_write_interop import run_tool

SCHEMA = "id long not null, name string, region string not null, v double"


@pytest.fixture
def floe(spark_floe):
    """The module's floe directory, which its Spark session reads (tables of
    each test have names of their own)."""
    f, spark = spark_floe
    f.spark = spark
    f.run("namespace", "create", "db", check=False)
    return f


def delete_tool() -> str:
    env = os.environ.get("FLOE_DELETE_TOOL")
    if env:
        return env
    p = Path(floe_bin()).parent / "tests" / "delete_tool"
    if not p.exists():
        raise RuntimeError(f"{p} not found: build the delete_tool target or set FLOE_DELETE_TOOL")
    return str(p)


def run_delete(floe, table, req, tmp_path, name):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(req))
    cmd = [delete_tool(), "--dir", str(floe.root), "--table", table, "--input", str(path)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, f"{' '.join(cmd)} failed:\n{p.stderr}{p.stdout}"
    return json.loads(p.stdout)


def local(path):
    return path[len("file://"):] if path.startswith("file://") else path


def canon(rows):
    out = []
    for r in rows:
        v = r.get("v")
        out.append((r["id"], r.get("name"), r["region"], None if v is None else float(v)))
    return sorted(out)


class Model:
    """The table's rows, and each live data file's rows in file order."""

    def __init__(self):
        self.rows = {}  # id -> row

    def add(self, rows):
        for r in rows:
            self.rows[r["id"]] = dict(r)

    def eq_delete(self, keys, fields):
        # spec: equality deletes apply to rows of older data sequence numbers
        # only; rows added in the same commit stay (upsert semantics)
        gone = {tuple(k[f] for f in fields) for k in keys}
        for i, r in list(self.rows.items()):
            if tuple(r[f] for f in fields) in gone and not r.get("_new"):
                del self.rows[i]

    def seal(self):
        for r in self.rows.values():
            r.pop("_new", None)

    def expected(self):
        return canon(self.rows.values())


def data_files(tbl):
    return sorted((f["file_path"] for f in tbl.inspect.data_files().to_pylist()))


def file_ids(path):
    return pq.read_table(local(path), columns=["id"]).column("id").to_pylist()


def read_all(floe, tbl_name, java_peer, with_pyiceberg, fv):
    """Every reader's rows of the current snapshot."""
    got = {}
    got["floe"] = canon(floe.json_rows("scan", tbl_name))
    tbl = floe.pyiceberg_catalog().load_table(tbl_name)
    con = duckdb_connection()
    got["duckdb"] = canon(
        dict(zip(("id", "name", "region", "v"), r))
        for r in con.execute(f"SELECT id, name, region, v FROM iceberg_scan('{tbl.metadata_location}')").fetchall()
    )
    out = java_peer("scan", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", tbl_name)
    got["java"] = canon(json.loads(line) for line in out.splitlines() if line.strip())
    got["spark"] = canon(r.asDict() for r in floe.spark.table(tbl_name).select("id", "name", "region", "v").collect())
    if with_pyiceberg:
        got["pyiceberg"] = canon(tbl.scan().to_arrow().to_pylist())
    return got, tbl


@pytest.mark.parametrize("fv", [2, 3])
def test_row_deltas_read_by_java_duckdb_pyiceberg(floe, tmp_path, java_peer, fv):
    """Data in two snapshots, then three row deltas: positions (position delete
    files or DVs) with new rows; equality deletes with the new versions of the
    deleted keys (an upsert); more positions in a file that already has some
    (v3: the DV is merged and replaced in the same commit)."""
    name = f"db.rd{fv}"
    floe.run("table", "create", name, "--schema", SCHEMA, "--partition", "region",
             "--format-version", fv)
    model = Model()
    rows = [{"id": i, "name": f"n{i}" if i % 7 else None, "region": ["eu", "us", "ap"][i % 3],
             "v": i * 0.5} for i in range(300)]
    run_tool(floe, name, rows, tmp_path, "--checkpoint-rows", 150)
    model.add(rows)
    tbl = floe.pyiceberg_catalog().load_table(name)
    files = data_files(tbl)
    assert len(files) == 6

    # 1: positions 0, 2, 4 and the last row of every data file; two new rows
    positions, gone = [], set()
    for f in files:
        ids = file_ids(f)
        pos = [0, 2, 4, len(ids) - 1]
        positions.append({"file": f, "pos": pos})
        gone |= {ids[p] for p in pos}
    new = [{"id": 1000, "name": "new", "region": "eu", "v": 1.0},
           {"id": 1001, "name": None, "region": "us", "v": None}]
    out = run_delete(floe, name, {"positions": positions, "data_rows": new}, tmp_path, "d1")
    for i in gone:
        del model.rows[i]
    model.add(new)
    dels = [f for f in out["files"] if f["content"] == 1]
    if fv == 2:
        assert len(dels) == 3  # one position delete file per partition
        assert {f["format"] for f in dels} == {"PARQUET"}
        assert all(f["referenced_data_file"] is None for f in dels)  # two data files each
    else:
        assert len(dels) == 6  # one DV per data file, all in one Puffin file
        assert len({f["path"] for f in dels}) == 1
        assert {f["format"] for f in dels} == {"PUFFIN"}
        assert {f["referenced_data_file"] for f in dels} == set(files)
        assert all(f["records"] == 4 for f in dels)
    check(floe, name, java_peer, model, fv, with_pyiceberg=True)
    tbl = floe.pyiceberg_catalog().load_table(name)
    summ = tbl.current_snapshot().summary
    assert summ.operation.value == "overwrite"
    key = "added-position-delete-files" if fv == 2 else "added-dvs"
    assert summ[key] == str(len(dels))
    assert summ["added-position-deletes"] == str(len(gone))
    assert summ["total-position-deletes"] == str(len(gone))

    # 2: an upsert of keys 10..19: equality deletes on (id, region) and the new
    # versions of the rows in the same commit (they must stay)
    keys = [{"id": i, "region": model.rows[i]["region"]} for i in range(10, 20) if i in model.rows]
    upserted = [{"id": k["id"], "name": "upserted", "region": k["region"], "v": -1.0, "_new": True}
                for k in keys]
    out = run_delete(floe, name, {"equality_fields": ["id", "region"], "equality_rows": keys,
                                  "data_rows": [{k: v for k, v in r.items() if k != "_new"} for r in upserted]},
                     tmp_path, "d2")
    model.eq_delete(keys, ["id", "region"])
    model.add(upserted)
    model.seal()
    eq = [f for f in out["files"] if f["content"] == 2]
    assert len(eq) == 3
    check(floe, name, java_peer, model, fv, with_pyiceberg=False)
    tbl = floe.pyiceberg_catalog().load_table(name)
    summ = tbl.current_snapshot().summary
    assert summ["added-equality-delete-files"] == "3"
    assert summ["added-equality-deletes"] == str(len(keys))
    # PyIceberg 0.12 reads no equality deletes: it says so rather than misread
    with pytest.raises(ValueError, match="equality deletes"):
        tbl.scan().to_arrow()
    # the entries as PyIceberg decodes them
    by_path = {d["file_path"]: d for d in tbl.inspect.delete_files().to_pylist()}
    for f in eq:
        d = by_path[f["path"]]
        assert d["content"] == 2
        assert d["equality_ids"] == [1, 3]
        assert d["sort_order_id"] == 0
        assert d["file_format"] == "PARQUET"
        assert d["record_count"] == f["records"]
        rm = d["readable_metrics"]
        assert rm["id"]["value_count"] == f["records"] and rm["name"]["value_count"] is None
        schema = pq.read_schema(local(f["path"]))
        assert schema.names == ["id", "region"]
        assert [schema.field(n).metadata[b"PARQUET:field_id"] for n in schema.names] == [b"1", b"3"]
        meta = pq.read_metadata(local(f["path"])).metadata
        assert meta[b"delete-type"] == b"equality" and meta[b"delete-field-ids"] == b"1, 3"

    # 3: more positions in the first data file, which has deletes already
    first = files[0]
    ids = file_ids(first)
    # rows of this file still live (not an upserted key's new version)
    live_pos = [p for p, i in enumerate(ids) if i in model.rows and model.rows[i]["name"] != "upserted"]
    more = live_pos[:3]
    out = run_delete(floe, name, {"positions": [{"file": first, "pos": more}]}, tmp_path, "d3")
    for p in more:
        del model.rows[ids[p]]
    check(floe, name, java_peer, model, fv, with_pyiceberg=False)
    tbl = floe.pyiceberg_catalog().load_table(name)
    summ = tbl.current_snapshot().summary
    assert summ.operation.value == "delete"
    if fv == 3:
        # spec: one DV per data file — the old one was merged and replaced
        assert out["replaced"] == 1
        assert summ["added-dvs"] == "1" and summ["removed-dvs"] == "1"
        dvs = [e["data_file"] for e in manifest_records(floe, tbl)
               if e["status"] != 2 and e["data_file"]["file_format"] == "PUFFIN"]
        assert len(dvs) == 6
        mine = [d for d in dvs if d["referenced_data_file"] == first]
        assert len(mine) == 1
        assert mine[0]["record_count"] == 4 + 3
        assert mine[0]["content_offset"] == out["files"][0]["content_offset"]
        assert mine[0]["content_size_in_bytes"] == out["files"][0]["content_size"]
        assert mine[0]["file_size_in_bytes"] == Path(local(mine[0]["file_path"])).stat().st_size
        assert mine[0]["column_sizes"] is None and mine[0]["sort_order_id"] is None
    else:
        assert out["replaced"] == 0
        pd = [f for f in out["files"] if f["content"] == 1]
        assert len(pd) == 1 and pd[0]["referenced_data_file"] == first
        d = {x["file_path"]: x for x in tbl.inspect.delete_files().to_pylist()}[pd[0]["path"]]
        # Java's PositionDeleteWriter: full bounds when one data file, no counts
        rm = d["lower_bounds"]
        assert dict(rm)[2147483546] == first.encode()
        assert d["value_counts"] in (None, {}, [])
        # referenced_data_file in the manifest entry (PyIceberg 0.12 does not
        # decode it for v2; read the Avro records)
        entries = [e["data_file"] for e in manifest_records(floe, tbl)
                   if e["data_file"]["file_path"] == pd[0]["path"]]
        assert len(entries) == 1 and entries[0]["referenced_data_file"] == first
        assert entries[0]["value_counts"] is None and entries[0]["sort_order_id"] is None


def manifest_records(floe, tbl):
    out = []
    for m in tbl.current_snapshot().manifests(tbl.io):
        text = floe.run("avro", "cat", local(m.manifest_path)).stdout
        out += [json.loads(line) for line in text.splitlines() if line.strip()]
    return out


def check(floe, name, java_peer, model, fv, with_pyiceberg):
    got, _ = read_all(floe, name, java_peer, with_pyiceberg, fv)
    want = model.expected()
    for reader, rows in got.items():
        assert rows == want, f"{reader}: {len(rows)} rows, the model {len(want)}; " \
                             f"extra {sorted(set(rows) - set(want))[:5]} missing {sorted(set(want) - set(rows))[:5]}"


@pytest.mark.parametrize("fv", [2, 3])
def test_many_deletes_roll_and_read(floe, tmp_path, java_peer, fv):
    """Thousands of positions and keys at a small delete target size: the
    position delete files roll (v2), and every reader applies all of them."""
    name = f"db.many{fv}"
    floe.run("table", "create", name, "--schema", SCHEMA, "--partition", "region",
             "--format-version", fv, "--property", "write.delete.target-file-size-bytes=2048")
    rows = [{"id": i, "name": f"name-{i:06d}", "region": ["eu", "us"][i % 2], "v": float(i)} for i in range(20000)]
    run_tool(floe, name, rows, tmp_path)
    model = Model()
    model.add(rows)
    tbl = floe.pyiceberg_catalog().load_table(name)
    files = data_files(tbl)
    positions = []
    for f in files:
        ids = file_ids(f)
        pos = list(range(0, len(ids), 3))
        positions.append({"file": f, "pos": pos})
        for p in pos:
            del model.rows[ids[p]]
    out = run_delete(floe, name, {"positions": positions}, tmp_path, "p")
    dels = [f for f in out["files"] if f["content"] == 1]
    if fv == 2:
        assert len(dels) > 2  # rolled at 2 KiB
    check(floe, name, java_peer, model, fv, with_pyiceberg=True)
    keys = [{"id": i, "region": ["eu", "us"][i % 2]} for i in range(1, 20000, 5) if i in model.rows]
    out = run_delete(floe, name, {"equality_fields": ["id", "region"], "equality_rows": keys}, tmp_path, "e")
    assert sum(f["records"] for f in out["files"] if f["content"] == 2) == len(keys)
    model.eq_delete(keys, ["id", "region"])
    check(floe, name, java_peer, model, fv, with_pyiceberg=False)
