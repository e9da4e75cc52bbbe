"""Table maintenance through `floe maintain`, checked by PyIceberg and DuckDB:
compaction keeps every row exactly once and leaves files near the target,
compact + expire + orphan cleanup shrink storage to what retained snapshots
need (every file of every retained snapshot still opens), files younger than
the minimum age survive, rewritten manifests read everywhere, and two
maintainers never run at once."""
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import duckdb_connection, floe_bin
from test_write_interop import write_tool


def make_table(floe, name, partition="bucket(4, id)", fv=2, props=()):
    floe.run("namespace", "create", "db", check=False)
    args = ["table", "create", f"db.{name}", "--schema", "id long not null, cat string, v double",
            "--format-version", fv]
    if partition:
        args += ["--partition", partition]
    for p in props:
        args += ["--property", p]
    floe.run(*args)


def load_small_files(floe, tmp_path, name, n_rows=20000, per_checkpoint=1000, start=0):
    path = tmp_path / f"{name}-{start}.jsonl"
    with open(path, "w") as f:
        for i in range(start, start + n_rows):
            f.write(json.dumps({"id": i, "cat": f"c{i % 7}", "v": i * 0.5}) + "\n")
    cmd = [write_tool(), "--dir", str(floe.root), "--table", f"db.{name}", "--input", str(path),
           "--checkpoint-rows", str(per_checkpoint)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def live_files(floe, name):
    return [r for r in floe.json_rows("files", f"db.{name}") if r["content"] == 0]


def maintain(floe, name, *args, check=True):
    p = floe.run("maintain", f"db.{name}", "--format", "json", *args, check=check)
    return json.loads(p.stdout) if p.returncode == 0 else p


def pyiceberg_ids(floe, name, snapshot_id=None):
    t = floe.pyiceberg_catalog().load_table(f"db.{name}")
    scan = t.scan(snapshot_id=snapshot_id) if snapshot_id else t.scan()
    return sorted(scan.to_arrow().column("id").to_pylist())


def local(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri[len("file:"):] if uri.startswith("file:") else uri


def test_compaction_keeps_rows_and_reaches_target(floe, tmp_path):
    make_table(floe, "ev")
    load_small_files(floe, tmp_path, "ev")
    assert len(live_files(floe, "ev")) == 80
    r = maintain(floe, "ev", "--steps", "compact", "--target-file-size", "1MB")
    assert r["compact"]["data_files_rewritten"] == 80
    assert r["compact"]["commits"] == 1
    files = live_files(floe, "ev")
    assert len(files) == 4  # one per bucket
    assert pyiceberg_ids(floe, "ev") == list(range(20000))
    con = duckdb_connection()
    meta = floe.pyiceberg_catalog().load_table("db.ev").metadata_location
    got = con.execute(f"SELECT count(*), count(DISTINCT id), sum(v) FROM iceberg_scan('{meta}')").fetchone()
    assert got == (20000, 20000, sum(i * 0.5 for i in range(20000)))
    # the replace snapshot keeps the data sequence number of its start
    t = floe.pyiceberg_catalog().load_table("db.ev")
    snap = t.current_snapshot()
    assert snap.summary.operation.value == "replace"
    parent = t.snapshot_by_id(snap.parent_snapshot_id)
    assert {f["sequence_number"] for f in files} == {parent.sequence_number}
    # nothing left to do: a second run changes nothing
    r = maintain(floe, "ev", "--steps", "compact", "--target-file-size", "1MB")
    assert r["compact"]["commits"] == 0


def test_compaction_rolls_at_target_and_partial_progress(floe, tmp_path):
    make_table(floe, "roll", partition=None)
    load_small_files(floe, tmp_path, "roll", n_rows=60000, per_checkpoint=2000)
    before = live_files(floe, "roll")
    assert len(before) == 30
    # a tiny target: several output files, committed group by group
    r = maintain(floe, "roll", "--steps", "compact", "--target-file-size", "64KB",
                 "--max-file-size", "1GB", "--max-commits", "1")
    assert r["compact"]["data_files_rewritten"] == 30
    files = live_files(floe, "roll")
    sizes = [f["file_size_in_bytes"] for f in files]
    assert len(files) >= 2 and all(s < 4 * 65536 for s in sizes)
    assert pyiceberg_ids(floe, "roll") == list(range(60000))


def test_compaction_cap_on_bytes(floe, tmp_path):
    make_table(floe, "cap", partition="identity(cat)")
    load_small_files(floe, tmp_path, "cap", n_rows=14000, per_checkpoint=1000)
    before = len(live_files(floe, "cap"))
    r = maintain(floe, "cap", "--steps", "compact", "--target-file-size", "1MB", "--max-bytes", "30KB")
    assert 0 < r["compact"]["groups"] < 7
    assert r["compact"]["bytes_rewritten"] <= 30 * 1024
    assert len(live_files(floe, "cap")) < before
    assert pyiceberg_ids(floe, "cap") == list(range(14000))


def all_files(root: Path):
    return {str(p) for p in root.rglob("*") if p.is_file()}


def reachable(floe, name):
    """Every file the table's metadata reaches, as PyIceberg sees it."""
    t = floe.pyiceberg_catalog().load_table(f"db.{name}")
    keep = {local(t.metadata_location)}
    keep |= {local(e.metadata_file) for e in t.metadata.metadata_log}
    for s in t.snapshots():
        keep.add(local(s.manifest_list))
        for m in s.manifests(t.io):
            keep.add(local(m.manifest_path))
            for e in m.fetch_manifest_entry(t.io, discard_deleted=True):
                keep.add(local(e.data_file.file_path))
    return keep


def test_maintain_shrinks_storage_to_what_is_needed(floe, tmp_path):
    make_table(floe, "full", props=["write.metadata.previous-versions-max=3",
                                    "write.metadata.delete-after-commit.enabled=true"])
    load_small_files(floe, tmp_path, "full")
    table_dir = floe.warehouse / "db" / "full"
    # a crashed writer's leftovers, old enough to judge, and a young one
    stray = table_dir / "data" / "id_bucket=0" / "00099-0-dead-00001.parquet"
    stray.write_bytes(b"PAR1 not really")
    old = time.time() - 5 * 86400
    os.utime(stray, (old, old))
    young = table_dir / "data" / "id_bucket=1" / "00099-0-young-00001.parquet"
    young.write_bytes(b"in progress")
    # everything the table wrote so far counts as old
    for p in table_dir.rglob("*"):
        if p.is_file() and p != young:
            os.utime(p, (old, old))
    size_before = sum(os.path.getsize(p) for p in all_files(table_dir))
    n_before = len(all_files(table_dir))

    r = maintain(floe, "full", "--target-file-size", "1MB", "--older-than", "0s",
                 "--retain-last", "1")
    assert r["compact"]["data_files_rewritten"] == 80
    assert r["expire"]["snapshots_expired"] == 20
    assert r["expire"]["data_files_deleted"] == 80
    assert r["orphans"]["files_deleted"] >= 1
    assert r["manifests"]["run"]

    assert pyiceberg_ids(floe, "full") == list(range(20000))
    on_disk = all_files(table_dir)
    keep = reachable(floe, "full")
    # storage = what the retained snapshots and metadata reach, plus the young file
    assert on_disk - keep == {str(young)}, sorted(on_disk - keep)[:10]
    assert keep <= on_disk, sorted(keep - on_disk)[:10]
    assert not stray.exists() and young.exists()
    data_on_disk = {p for p in on_disk if "/data/" in p and p != str(young)}
    assert len(data_on_disk) == 4 and n_before > 80
    assert sum(os.path.getsize(p) for p in on_disk) < size_before
    # every file of every retained snapshot opens
    t = floe.pyiceberg_catalog().load_table("db.full")
    for s in t.snapshots():
        assert len(pyiceberg_ids(floe, "full", s.snapshot_id)) == 20000
    con = duckdb_connection()
    assert con.execute(f"SELECT count(*) FROM iceberg_scan('{t.metadata_location}')").fetchone()[0] == 20000


def test_orphans_dry_run_lists_and_keeps(floe, tmp_path):
    make_table(floe, "dry")
    load_small_files(floe, tmp_path, "dry", n_rows=2000)
    table_dir = floe.warehouse / "db" / "dry"
    stray = table_dir / "data" / "leftover.parquet"
    stray.write_bytes(b"x")
    old = time.time() - 10 * 86400
    os.utime(stray, (old, old))
    p = floe.run("maintain", "db.dry", "--steps", "orphans", "--dry-run")
    assert f"orphan: {stray}" in p.stdout or f"orphan: file://{stray}" in p.stdout
    assert stray.exists()
    floe.run("maintain", "db.dry", "--steps", "orphans")
    assert not stray.exists()
    assert pyiceberg_ids(floe, "dry") == list(range(2000))


def test_rewrite_manifests_read_everywhere(floe, tmp_path):
    make_table(floe, "man", partition="identity(cat)")
    load_small_files(floe, tmp_path, "man", n_rows=10000, per_checkpoint=500)
    t = floe.pyiceberg_catalog().load_table("db.man")
    assert len(t.current_snapshot().manifests(t.io)) == 20
    r = maintain(floe, "man", "--steps", "manifests")
    assert r["manifests"]["before"] == 20 and r["manifests"]["after"] == 1
    t = floe.pyiceberg_catalog().load_table("db.man")
    assert len(t.current_snapshot().manifests(t.io)) == 1
    assert t.current_snapshot().summary.operation.value == "replace"
    assert pyiceberg_ids(floe, "man") == list(range(10000))
    assert len(t.scan(row_filter="cat == 'c3'").to_arrow()) == len([i for i in range(10000) if i % 7 == 3])
    con = duckdb_connection()
    assert con.execute(f"SELECT count(*) FROM iceberg_scan('{t.metadata_location}')").fetchone()[0] == 10000


def test_v1_and_v3_tables(floe, tmp_path):
    for fv in (1, 3):
        name = f"v{fv}"
        make_table(floe, name, fv=fv)
        load_small_files(floe, tmp_path, name, n_rows=5000, per_checkpoint=500)
        r = maintain(floe, name, "--target-file-size", "1MB", "--older-than", "0s", "--retain-last", "1")
        assert r["compact"]["data_files_rewritten"] == 40
        assert pyiceberg_ids(floe, name) == list(range(5000))


def test_two_maintainers_never_run_at_once(floe, tmp_path):
    make_table(floe, "lock")
    load_small_files(floe, tmp_path, "lock", n_rows=4000, per_checkpoint=100)
    # hold the table's lock as Iceberg Flink's JdbcLockFactory would
    import sqlite3

    db = sqlite3.connect(floe.warehouse / "catalog.db")
    db.execute("CREATE TABLE IF NOT EXISTS flink_maintenance_lock (LOCK_TYPE CHAR(1) NOT NULL, "
               "LOCK_ID VARCHAR(100) NOT NULL, INSTANCE_ID CHAR(36) NOT NULL, "
               "PRIMARY KEY (LOCK_TYPE, LOCK_ID))")
    db.execute("INSERT INTO flink_maintenance_lock VALUES ('m', 'default.db.lock', "
               "'0b7c9d2e-0000-4000-8000-000000000001')")
    db.commit()
    p = maintain(floe, "lock", check=False)
    assert p.returncode == 1 and "being maintained by" in p.stderr
    assert len(live_files(floe, "lock")) == 160
    floe.run("maintain", "db.lock", "--break-lock")

    # two floe maintainers started together: one runs, the other is refused
    results = []

    def run():
        results.append(floe.run("maintain", "db.lock", "--target-file-size", "1MB", check=False))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    codes = sorted(r.returncode for r in results)
    refused = [r for r in results if r.returncode != 0]
    assert codes in ([0, 0], [0, 1])
    for r in refused:
        assert "being maintained by" in r.stderr
    # whatever interleaving happened, the rows are all there once
    assert pyiceberg_ids(floe, "lock") == list(range(4000))
    assert db.execute("SELECT count(*) FROM flink_maintenance_lock").fetchone()[0] == 0


def test_sort_strategy_orders_rows_in_each_file(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.sorted", "--schema", "id long not null, cat string, v double",
             "--partition", "identity(cat)", "--sort", "v desc nulls last, id")
    load_small_files(floe, tmp_path, "sorted", n_rows=7000, per_checkpoint=700)
    r = maintain(floe, "sorted", "--steps", "compact", "--sort", "--target-file-size", "1MB")
    assert r["compact"]["data_files_rewritten"] == 70
    import pyarrow.parquet as pq

    files = live_files(floe, "sorted")
    assert len(files) == 7
    for f in files:
        v = pq.read_table(local(f["file_path"])).column("v").to_pylist()
        assert v == sorted(v, reverse=True)
    t = floe.pyiceberg_catalog().load_table("db.sorted")
    orders = t.inspect.files().column("sort_order_id").to_pylist()
    assert set(orders) == {t.sort_order().order_id}
    assert pyiceberg_ids(floe, "sorted") == list(range(7000))
    # a table without a sort order refuses --sort with a clear message
    make_table(floe, "unsorted")
    p = maintain(floe, "unsorted", "--steps", "compact", "--sort", check=False)
    assert p.returncode == 1 and "no sort order" in p.stderr


def floe_ids(floe, name, *args):
    out = floe.run("scan", f"db.{name}", "--columns", "id", "--format", "json", *args).stdout
    return sorted(json.loads(line)["id"] for line in out.splitlines() if line.strip())


def test_compaction_applies_and_drops_deletion_vectors(floe, tmp_path, java_peer):
    """Java writes deletion vectors (one Puffin file for several data files);
    compaction applies them and drops the ones whose targets were rewritten,
    keeping the one whose file stayed."""
    import pyarrow.parquet as pq

    make_table(floe, "dv", partition="identity(cat)", fv=3)
    load_small_files(floe, tmp_path, "dv", n_rows=7000, per_checkpoint=700)
    files = live_files(floe, "dv")
    by_part = {}
    for f in files:
        by_part.setdefault(json.dumps(f["partition"], sort_keys=True), []).append(f)
    part_a, part_b = sorted(by_part)[:2]
    deleted = set()
    specs = []
    # two files of partition a and one of partition b lose rows
    for f in by_part[part_a][:2] + by_part[part_b][:1]:
        ids = pq.read_table(local(f["file_path"])).column("id").to_pylist()
        pos = [0, 3, len(ids) - 1]
        deleted |= {ids[p] for p in pos}
        specs.append(f"{f['file_path']}=" + ",".join(map(str, pos)))
    java_peer("dv", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "db.dv", *specs)
    expected = sorted(set(range(7000)) - deleted)
    deletes = [r for r in floe.json_rows("files", "db.dv") if r["content"] != 0]
    assert len(deletes) == 3 and len({d["file_path"] for d in deletes}) == 1  # one Puffin file
    assert floe_ids(floe, "dv") == expected

    # compact partition a only (the byte cap stops after the first group)
    group_a = sum(f["file_size_in_bytes"] for f in by_part[part_a])
    r = maintain(floe, "dv", "--steps", "compact", "--target-file-size", "1MB",
                 "--max-bytes", str(group_a))
    assert r["compact"]["groups"] == 1
    assert r["compact"]["delete_files_removed"] == 2
    deletes = [r for r in floe.json_rows("files", "db.dv") if r["content"] != 0]
    assert len(deletes) == 1 and json.dumps(deletes[0]["partition"], sort_keys=True) == part_b
    assert floe_ids(floe, "dv") == expected

    # the rest: no deletion vector is left, every row is there once
    r = maintain(floe, "dv", "--steps", "compact", "--target-file-size", "1MB")
    assert r["compact"]["delete_files_removed"] == 1
    assert [r for r in floe.json_rows("files", "db.dv") if r["content"] != 0] == []
    assert floe_ids(floe, "dv") == expected
    assert pyiceberg_ids(floe, "dv") == expected
    # Java sees the same live files
    out = [json.loads(x) for x in java_peer("read", floe.warehouse / "catalog.db",
                                            f"file://{floe.warehouse}").splitlines()]
    t = next(x for x in out if x["table"] == "db.dv")
    assert t["rows"] == len(expected)


def test_v3_compaction_keeps_row_lineage(floe, tmp_path):
    make_table(floe, "lin", fv=3)
    load_small_files(floe, tmp_path, "lin", n_rows=3000, per_checkpoint=300)

    def lineage():
        out = floe.run("scan", "db.lin", "--columns", "id,_row_id,_last_updated_sequence_number",
                       "--format", "json").stdout
        rows = [json.loads(x) for x in out.splitlines() if x.strip()]
        return {r["id"]: (r["_row_id"], r["_last_updated_sequence_number"]) for r in rows}

    before = lineage()
    assert len(before) == 3000 and len({v[0] for v in before.values()}) == 3000
    maintain(floe, "lin", "--steps", "compact", "--target-file-size", "1MB")
    assert len(live_files(floe, "lin")) == 4
    assert lineage() == before
    import pyarrow.parquet as pq

    f = live_files(floe, "lin")[0]
    schema = pq.read_schema(local(f["file_path"]))
    ids = {schema.field(n).metadata[b"PARQUET:field_id"] for n in ("_row_id", "_last_updated_sequence_number")}
    assert ids == {b"2147483540", b"2147483539"}
    assert pyiceberg_ids(floe, "lin") == list(range(3000))


def test_compaction_beside_a_writer_loses_and_duplicates_nothing(floe, tmp_path):
    make_table(floe, "busy")
    load_small_files(floe, tmp_path, "busy", n_rows=8000, per_checkpoint=400)
    stop = threading.Event()
    errors = []
    appended = []

    def writer():
        # a streaming writer: one commit about every half second
        start = 100000
        try:
            while not stop.is_set() or len(appended) < 10:
                load_small_files(floe, tmp_path, "busy", n_rows=300, per_checkpoint=300, start=start)
                appended.append(start)
                start += 300
                time.sleep(0.5)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    th = threading.Thread(target=writer)
    th.start()
    runs = []
    try:
        for _ in range(4):
            p = floe.run("maintain", "db.busy", "--steps", "compact", "--format", "json",
                         "--target-file-size", "1MB", "--max-commits", "4", "--min-input-files", "2",
                         check=False)
            runs.append(p)
    finally:
        stop.set()
        th.join()
    assert not errors, errors
    for p in runs:
        assert p.returncode == 0, p.stderr
    assert sum(json.loads(p.stdout)["compact"]["commits"] for p in runs) >= 1
    expected = list(range(8000)) + [i for s in appended for i in range(s, s + 300)]
    assert pyiceberg_ids(floe, "busy") == sorted(expected)
    assert floe_ids(floe, "busy") == sorted(expected)
