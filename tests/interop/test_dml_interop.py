"""floe delete / update / merge in both of Iceberg's row-level modes, read back
by the reference implementations.

For each format version (2, 3) and mode (copy-on-write, merge-on-read, set
through write.delete.mode / write.update.mode / write.merge.mode) a table of
two snapshots gets a delete, an update (a partition column among the set
ones) and a merge (updates, a key moving partition, inserts), each one
snapshot. After each, Java Iceberg (IcebergGenerics, the java_peer's scan),
Spark 3.5 with Iceberg 1.10's runtime (one session for the module), DuckDB's
iceberg extension, PyIceberg (it reads position deletes and DVs,
the only delete kinds these commands write) and `floe scan` must equal a
Python model. Copy-on-write leaves no delete file; merge-on-read adds
position delete files (v2) or deletion vectors in Puffin files (v3), one DV
per data file.
"""
import json
import re

import pytest

from test_delete_interop import canon, read_all
from test_write_interop import run_tool

SCHEMA = "id long not null, name string, region string not null, v double"
REGIONS = ["eu", "us", "ap"]


@pytest.fixture
def floe(spark_floe):
    """The module's floe directory, which its Spark session reads (read_all
    asks Spark too; each test has tables of its own)."""
    f, spark = spark_floe
    f.spark = spark
    f.run("namespace", "create", "db", check=False)
    return f


def check(floe, name, java_peer, model, fv):
    got, tbl = read_all(floe, name, java_peer, True, fv)
    want = canon(model.values())
    for reader, rows in got.items():
        assert rows == want, f"{reader}: {len(rows)} rows, the model {len(want)}; " \
                             f"extra {sorted(set(rows) - set(want))[:5]} missing {sorted(set(want) - set(rows))[:5]}"
    return tbl


def outcome(out, verb, mode):
    m = re.fullmatch(rf"{verb} (\d+) rows (?:from|in) (\d+) files? \({mode}, snapshot (\d+)\)\n", out)
    assert m, out
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


@pytest.mark.parametrize("fv", [2, 3])
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_delete_update_merge(floe, tmp_path, java_peer, fv, mode):
    name = f"db.dml{fv}{mode[0]}"
    floe.run("table", "create", name, "--schema", SCHEMA, "--partition", "region",
             "--format-version", fv, "--property", f"write.delete.mode={mode}",
             "--property", f"write.update.mode={mode}", "--property", f"write.merge.mode={mode}")
    rows = [{"id": i, "name": f"n{i}" if i % 7 else None, "region": REGIONS[i % 3], "v": i * 0.5}
            for i in range(240)]
    run_tool(floe, name, rows, tmp_path, "--checkpoint-rows", 120)
    model = {r["id"]: dict(r) for r in rows}

    # delete: a dry run first changes nothing and lists the files
    dry = floe.run("delete", name, "--where", "id < 20 OR name IS NULL", "--dry-run").stdout
    assert dry.startswith("would delete ") and "dry run" in dry
    before = floe.pyiceberg_catalog().load_table(name).current_snapshot().snapshot_id
    out = floe.run("delete", name, "--where", "id < 20 OR name IS NULL").stdout
    gone = [i for i, r in model.items() if i < 20 or r["name"] is None]
    n, k, sid = outcome(out, "deleted", mode)
    assert n == len(gone) and k == 6  # 3 partitions x 2 snapshots
    for i in gone:
        del model[i]
    tbl = check(floe, name, java_peer, model, fv)
    assert tbl.current_snapshot().snapshot_id == sid
    assert tbl.current_snapshot().parent_snapshot_id == before
    summ = tbl.current_snapshot().summary
    assert summ["floe.operation"] == "delete"
    dels = tbl.inspect.delete_files().to_pylist()
    if mode == "copy-on-write":
        assert dels == []
        assert summ.operation.value == "overwrite"
        assert summ["deleted-data-files"] == "6" and summ["added-data-files"] == "3"  # one per partition
    else:
        assert summ.operation.value == "delete"
        assert {d["content"] for d in dels} == {1}
        assert {d["file_format"] for d in dels} == ({"PARQUET"} if fv == 2 else {"PUFFIN"})
        assert sum(d["record_count"] for d in dels) == len(gone)

    # deleting again matches nothing: no snapshot, and it says so
    out = floe.run("delete", name, "--where", "id < 20").stdout
    assert out.startswith("no rows match")
    assert floe.pyiceberg_catalog().load_table(name).current_snapshot().snapshot_id == sid

    # update: numeric expression, a literal, and the partition column
    out = floe.run("update", name, "--set", "v = v * 2", "--set", "name='upd'", "--set",
                   "region='ap'", "--where", "region = 'us' AND id >= 100 AND id < 160").stdout
    hit = [i for i, r in model.items() if r["region"] == "us" and 100 <= i < 160]
    n, k, _ = outcome(out, "updated", mode)
    assert n == len(hit)
    for i in hit:
        model[i].update(v=model[i]["v"] * 2, name="upd", region="ap")
    tbl = check(floe, name, java_peer, model, fv)
    if mode == "copy-on-write":
        assert tbl.inspect.delete_files().to_pylist() == []
    else:
        assert tbl.current_snapshot().summary.operation.value == "overwrite"
        if fv == 3:  # one DV per data file: the earlier ones were merged and replaced
            refs = [d["referenced_data_file"] for d in manifest_dvs(floe, tbl)]
            assert len(refs) == len(set(refs))

    # merge: existing keys (one moving partition), new keys
    src = [{"id": 200, "name": "m200", "region": "ap", "v": 1.0},
           {"id": 201, "name": "m201", "region": REGIONS[201 % 3], "v": None},
           {"id": 30, "name": None, "region": "eu", "v": -3.0},
           {"id": 1000, "name": "new", "region": "us", "v": 7.5},
           {"id": 1001, "name": "new2", "region": "eu", "v": None}]
    path = tmp_path / "changes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in src))
    out = floe.run("merge", name, str(path), "--on", "id").stdout
    m = re.fullmatch(rf"merged: updated (\d+) rows in (\d+) files?, inserted (\d+) rows \({mode}, snapshot \d+\)\n", out)
    assert m, out
    assert int(m.group(1)) == sum(1 for r in src if r["id"] in model)
    assert int(m.group(3)) == sum(1 for r in src if r["id"] not in model)
    for r in src:
        model[r["id"]] = dict(r)
    tbl = check(floe, name, java_peer, model, fv)
    if mode == "copy-on-write":
        assert tbl.inspect.delete_files().to_pylist() == []


def manifest_dvs(floe, tbl):
    out = []
    for mf in tbl.current_snapshot().manifests(tbl.io):
        path = mf.manifest_path[len("file://"):] if mf.manifest_path.startswith("file://") else mf.manifest_path
        text = floe.run("avro", "cat", path).stdout
        for line in text.splitlines():
            e = json.loads(line)
            if e["status"] != 2 and e["data_file"]["file_format"] == "PUFFIN":
                out.append(e["data_file"])
    return out


def test_refusals(floe, tmp_path):
    """An unbound column, a required column set to NULL, a v1 table in
    merge-on-read, duplicate merge keys: refused, nothing committed."""
    floe.run("table", "create", "db.r", "--schema", SCHEMA, "--format-version", 1)
    run_tool(floe, "db.r", [{"id": 1, "name": "a", "region": "eu", "v": 1.0}], tmp_path)
    snaps = len(floe.json_rows("snapshots", "db.r"))
    p = floe.run("delete", "db.r", "--where", "nmae = 'a'", check=False)
    assert p.returncode == 1 and "no column 'nmae'" in p.stderr
    p = floe.run("update", "db.r", "--set", "id=NULL", "--where", "id = 1", check=False)
    assert p.returncode == 1 and "required" in p.stderr
    p = floe.run("delete", "db.r", "--where", "id = 1", "--mode", "merge-on-read", check=False)
    assert p.returncode == 1 and "format version 2" in p.stderr
    src = tmp_path / "dup.jsonl"
    src.write_text('{"id": 5, "region": "eu"}\n{"id": 5, "region": "us"}\n')
    p = floe.run("merge", "db.r", str(src), "--on", "id", check=False)
    assert p.returncode == 1 and "same key" in p.stderr
    assert len(floe.json_rows("snapshots", "db.r")) == snaps
    # copy-on-write works on v1
    out = floe.run("delete", "db.r", "--where", "id = 1").stdout
    assert out.startswith("deleted 1 rows from 1 file (copy-on-write")
