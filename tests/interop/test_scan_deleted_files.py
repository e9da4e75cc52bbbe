"""A data file whose every row a DV (v3) or position delete file (v2)
removes is not opened by floe scan (--stats counts it "deleted whole"), and
the rows read are exactly the live ones — the same as DuckDB reads."""
import json

import pytest

from conftest import duckdb_connection


@pytest.mark.parametrize("fv", [2, 3])
def test_wholly_deleted_files_are_skipped(floe, tmp_path, fv):
    name = "db.whole"
    floe.run("namespace", "create", "db")
    floe.run("table", "create", name, "--schema", "id long not null, g string not null",
             "--partition", "identity(g)", "--format-version", fv,
             "--property", "write.delete.mode=merge-on-read")
    rows = [{"id": i, "g": "a" if i < 30 else "b"} for i in range(50)]
    p = tmp_path / "in.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    floe.run("ingest", name, p, "--quiet")
    # every row of partition a's file, and two of b's
    floe.run("delete", name, "--where", "id < 30 OR id IN (40, 41)")
    out = floe.run("scan", name, "--columns", "id", "--format", "json", "--stats")
    ids = sorted(json.loads(line)["id"] for line in out.stdout.splitlines() if line.strip())
    want = [i for i in range(30, 50) if i not in (40, 41)]
    assert ids == want
    assert "1 read, 1 deleted whole" in out.stderr, out.stderr
    deletes = [f for f in floe.json_rows("inspect", name, "files") if f["content"] == 1]
    assert len(deletes) == 2, deletes  # the delete kept both files (merge-on-read)
    tbl = floe.pyiceberg_catalog().load_table(name)
    con = duckdb_connection()
    duck = con.execute(f"SELECT id FROM iceberg_scan('{tbl.metadata_location}')").fetchall()
    assert sorted(r[0] for r in duck) == want


def test_dvs_spread_over_more_puffin_files_than_kept_open(floe, tmp_path):
    """floe scan keeps 16 Puffin files of DVs open: a table whose 24 data files
    take their DVs from 24 Puffin files (one delete commit each, in an order
    unlike the files') reads the same rows as DuckDB and the model."""
    name = "db.manydv"
    floe.run("namespace", "create", "db")
    floe.run("table", "create", name, "--schema", "id long not null, g string not null",
             "--format-version", 3, "--property", "write.delete.mode=merge-on-read",
             "--property", "commit.manifest-merge.enabled=false")
    live = set()
    for f in range(24):
        p = tmp_path / f"a{f}.jsonl"
        ids = range(f * 10, f * 10 + 10)
        p.write_text("".join(json.dumps({"id": i, "g": "x"}) + "\n" for i in ids))
        floe.run("ingest", name, p, "--quiet")
        live |= set(ids)
    for k, f in enumerate([(7 * j) % 24 for j in range(24)]):
        victim = f * 10 + k % 10
        floe.run("delete", name, "--where", f"id = {victim}")
        live.discard(victim)
    puffins = {d["file_path"] for d in floe.json_rows("inspect", name, "files") if d["content"] == 1}
    assert len(puffins) == 24, puffins
    got = sorted(r["id"] for r in floe.json_rows("scan", name, "--columns", "id"))
    assert got == sorted(live)
    tbl = floe.pyiceberg_catalog().load_table(name)
    con = duckdb_connection()
    duck = con.execute(f"SELECT id FROM iceberg_scan('{tbl.metadata_location}')").fetchall()
    assert sorted(r[0] for r in duck) == sorted(live)
