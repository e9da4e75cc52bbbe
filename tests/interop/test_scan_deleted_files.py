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
