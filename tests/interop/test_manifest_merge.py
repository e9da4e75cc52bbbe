"""Manifests merged on commit (commit.manifest-merge.enabled, as Java's
merging producers do): with commit.manifest.min-count-to-merge=3 every third
commit merges, so each case below reads merged manifests — this commit's
entries as they were, earlier ones EXISTING with their snapshot ids,
sequence numbers and row ids. Every snapshot reads the same in floe, Spark
(Iceberg 1.10's Java reader: time travel, incremental appends, the entries
table), PyIceberg and DuckDB; Spark's own merging append on top of floe's
merged manifests reads back in floe; an index-mode upsert stream (DVs, delete
manifests merged too) equals its model in Java, Spark, DuckDB and floe; with
merging off the list grows by one manifest a commit."""
import json
import random

import pytest

from conftest import duckdb_connection
from test_upsert_index import cheap_check, check_snapshots, eq_delete_files, ingest as ix_ingest
from test_upsert_interop import Model, random_round


def manifests(floe, name):
    return floe.json_rows("inspect", name, "manifests")


def ids_of(floe, name, *args):
    return sorted(r["id"] for r in floe.json_rows("scan", name, "--columns", "id", *args))


def append(floe, tmp_path, name, ids, tag):
    p = tmp_path / f"{tag}.jsonl"
    p.write_text("".join(json.dumps({"id": i, "g": f"g{i % 3}", "v": i * 10}) + "\n" for i in ids))
    floe.run("ingest", name, p, "--quiet")


@pytest.mark.parametrize("fv", [1, 2, 3])
def test_merged_manifests_read_the_same_everywhere(spark_floe, tmp_path, fv):
    floe, spark = spark_floe
    name = f"fl.merge_v{fv}"
    floe.run("table", "create", name, "--schema", "id long not null, g string, v long",
             "--partition", "bucket(4, id)", "--format-version", fv)
    floe.run("table", "set", name, "commit.manifest.min-count-to-merge=3")
    want, snaps, live = {}, [], set()
    counts = []
    for i in range(8):
        ids = range(i * 40, i * 40 + 40)
        append(floe, tmp_path, name, ids, f"a{fv}-{i}")
        live |= set(ids)
        if i == 5 and fv >= 2:
            # a row-level delete among the appends (position deletes / a DV)
            floe.run("delete", name, "--where", "id >= 100 AND id < 120")
            live -= set(range(100, 120))
        tbl = floe.pyiceberg_catalog().load_table(name)
        s = tbl.current_snapshot().snapshot_id
        snaps.append(s)
        want[s] = sorted(live)
        mf = manifests(floe, name)
        counts.append(len([m for m in mf if m["content"] == 0]))
        assert counts[-1] <= 2, (i, mf)
    assert 1 in counts[2:], counts  # a merge happened (and more than once)
    # the merged manifests: earlier entries EXISTING, this commit's ADDED (Java's entries table)
    spark.sql(f"REFRESH TABLE {name}")
    entries = spark.sql(f"SELECT status, snapshot_id, data_file.content AS c, "
                        f"data_file.file_path AS p FROM {name}.entries").collect()
    cur = snaps[-1]
    live_e = [e for e in entries if e["status"] != 2]
    assert {e["status"] for e in entries if e["snapshot_id"] == cur} == {1}, entries
    assert any(e["status"] == 0 for e in entries), entries  # a merged manifest's
    assert len({e["p"] for e in live_e}) == len(live_e)  # each live file listed once
    assert {e["p"] for e in live_e if e["c"] == 0} == \
        {f["file_path"] for f in floe.json_rows("inspect", name, "files") if f["content"] == 0}
    # every snapshot, in every reader
    for s in snaps:
        assert ids_of(floe, name, "--snapshot-id", s) == want[s], s
    q = " UNION ALL ".join(f"SELECT {s} AS snap, id FROM {name} VERSION AS OF {s}" for s in snaps)
    got = {}
    for r in spark.sql(q).collect():
        got.setdefault(r["snap"], []).append(r["id"])
    for s in snaps:
        assert sorted(got.get(s, [])) == want[s], f"spark at {s}"
    tbl = floe.pyiceberg_catalog().load_table(name)
    for s in snaps[-3:] if fv <= 2 else []:  # PyIceberg does not read v3 DVs
        assert sorted(tbl.scan(snapshot_id=s).to_arrow().column("id").to_pylist()) == want[s]
    if fv >= 2:  # DuckDB's iceberg reader: v2 and v3 tables
        con = duckdb_connection()
        duck = con.execute(f"SELECT id FROM iceberg_scan('{tbl.metadata_location}')").fetchall()
        assert sorted(r[0] for r in duck) == want[cur]
    # incremental appends across merges: exactly what was appended after the start
    a, b = snaps[1], snaps[4]
    inc = sorted(r["id"] for r in spark.read.format("iceberg").option("start-snapshot-id", a)
                 .option("end-snapshot-id", b).load(name).collect())
    assert inc == list(range(80, 200))
    # floe's --from snapshot:ID is inclusive (Flink's), Spark's start exclusive
    assert ids_of(floe, name, "--incremental", "--from", f"snapshot:{snaps[2]}", "--to", b) == inc
    if fv == 3:
        # row lineage: the live files' row id ranges never overlap
        files = sorted((f["first_row_id"], f["record_count"])
                       for f in floe.json_rows("inspect", name, "files") if f["content"] == 0)
        for (a0, n0), (a1, _) in zip(files, files[1:]):
            assert a0 is not None and a0 + n0 <= a1, files
        rid = [r["_row_id"] for r in floe.json_rows("scan", name, "--columns", "_row_id")]
        assert len(rid) == len(set(rid)) == len(want[cur])
    # Java's merging append on top of floe's merged manifests; floe reads it
    spark.sql(f"INSERT INTO {name} VALUES (100000, 'j', 1), (100001, 'j', 2), (100002, 'j', 3)")
    assert ids_of(floe, name) == want[cur] + [100000, 100001, 100002]
    append(floe, tmp_path, name, [200000], f"after-java-{fv}")
    spark.sql(f"REFRESH TABLE {name}")
    assert sorted(r["id"] for r in spark.table(name).collect()) == \
        want[cur] + [100000, 100001, 100002, 200000]


def test_merging_off_keeps_a_manifest_per_commit(floe, tmp_path):
    name = "db.nomerge"
    floe.run("namespace", "create", "db")
    floe.run("table", "create", name, "--schema", "id long not null, g string, v long",
             "--format-version", 2)
    floe.run("table", "set", name, "commit.manifest.min-count-to-merge=2",
             "commit.manifest-merge.enabled=false")
    for i in range(5):
        append(floe, tmp_path, name, range(i * 10, i * 10 + 10), f"n{i}")
    assert len(manifests(floe, name)) == 5
    floe.run("table", "set", name, "commit.manifest-merge.enabled=true")
    append(floe, tmp_path, name, [1000], "n5")
    mf = manifests(floe, name)
    assert len(mf) == 1 and mf[0]["existing_data_files_count"] == 5, mf
    assert ids_of(floe, name) == list(range(50)) + [1000]


def test_index_mode_upserts_with_merged_manifests(spark_floe, tmp_path, java_peer):
    """The change stream of test_upsert_index.py (v3, index mode: DVs, no
    equality deletes) with a merge every third commit: data and delete
    manifests merged, compaction between rounds, restarts (one ingest a
    round); Java, Spark, DuckDB and floe read the model after every round."""
    floe, spark = spark_floe
    con = duckdb_connection()
    name, src = "fl.ixmerge", tmp_path / "in"
    src.mkdir()
    rng, model = random.Random(4242), Model(["id", "region"])
    wants, spark_keys, most = {}, [], 0
    for rnd in range(6):
        (src / f"r{rnd:02d}.jsonl").write_text("\n".join(random_round(rng, model, 500, 120)) + "\n")
        ix_ingest(floe, name, src, rnd, 3)
        if rnd == 0:
            floe.run("table", "set", name, "commit.manifest.min-count-to-merge=3")
        what = f"round {rnd}"
        tbl, snap = cheap_check(floe, con, name, model.values(), what)
        wants[(name, snap)] = (model.values(), what)
        assert eq_delete_files(tbl) == [], what
        mf = manifests(floe, name)
        most = max(most, len(mf))
        assert len([m for m in mf if m["content"] == 0]) <= 2, (what, mf)
        assert len([m for m in mf if m["content"] == 1]) <= 2, (what, mf)
        if rnd == 2:
            floe.run("maintain", name, "--steps", "compact", "--quiet")
            _, snap = cheap_check(floe, con, name, model.values(), "after compaction")
            wants[(name, snap)] = (model.values(), "after compaction")
    spark_keys = [k for k in wants][-2:]
    check_snapshots(floe, java_peer, spark, wants, spark_keys)
    modes = {s.summary.get("floe.upsert-mode") for s in
             floe.pyiceberg_catalog().load_table(name).metadata.snapshots
             if s.summary.get("floe.pipeline-id") == "ix"}
    assert modes == {"index"}, modes


def stray_avro(floe, name):
    """Avro files in the table's metadata folder that no snapshot names
    (neither a manifest list nor a manifest of one)."""
    tbl = floe.pyiceberg_catalog().load_table(name)
    named = set()
    for s in tbl.metadata.snapshots:
        named.add(s.manifest_list)
        named |= {m.manifest_path for m in s.manifests(tbl.io)}
    meta = floe.warehouse.glob("**/metadata/*.avro")
    return sorted(str(p) for p in meta if f"file://{p}" not in named and str(p) not in named)


@pytest.mark.parametrize("fault", ["conflict:1", "after-swap:1", "before-swap:1"])
def test_merging_commits_leave_no_stray_manifests(floe, tmp_path, fault):
    """A merging commit that is retried (a lost race: the merge is reused),
    whose answer is lost but which landed (found by re-reading the catalog),
    or that fails for good: afterwards every Avro file of the metadata folder
    is named by a snapshot — the manifests a merge stands for, and merges no
    attempt used, are gone — and the rows are exactly the committed ones."""
    import os
    import subprocess

    name = "db.mstray"
    floe.run("namespace", "create", "db")
    floe.run("table", "create", name, "--schema", "id long not null, g string, v long",
             "--partition", "bucket(2, id)", "--format-version", 2)
    floe.run("table", "set", name, "commit.manifest.min-count-to-merge=2")
    for i in range(3):
        append(floe, tmp_path, name, range(i * 10, i * 10 + 10), f"s{i}")
    p = tmp_path / "faulted.jsonl"
    p.write_text("".join(json.dumps({"id": i, "g": "f", "v": 0}) + "\n" for i in range(100, 110)))
    env = dict(os.environ, FLOE_TEST_CATALOG_FAULT=fault)
    r = subprocess.run([floe.bin, "--dir", floe.root, "ingest", name, p, "--quiet"], env=env,
                       capture_output=True, text=True)
    landed = not fault.startswith("before-swap")
    assert (r.returncode == 0) == landed, r.stderr
    assert ids_of(floe, name) == list(range(30)) + (list(range(100, 110)) if landed else [])
    assert stray_avro(floe, name) == []
    mf = manifests(floe, name)
    assert len(mf) == 1 if landed else len(mf) <= 2, mf


@pytest.mark.parametrize("fv", [2, 3])
def test_merged_manifest_min_sequence_number_keeps_java_from_dropping_deletes(spark_floe, tmp_path, fv):
    """A manifest merged on commit holds EXISTING entries of older data
    sequence numbers: its min_sequence_number must be theirs, not the
    commit's. Java's merging producers drop delete files older than the least
    min_sequence_number of the data manifests, so too high a value makes the
    next Java commit drop a DV / position delete that still applies (the
    deleted rows come back)."""
    floe, spark = spark_floe
    name = f"fl.minseq_v{fv}"
    floe.run("table", "create", name, "--schema", "id long not null, g string, v long",
             "--format-version", fv, "--property", "write.delete.mode=merge-on-read")
    floe.run("table", "set", name, "commit.manifest.min-count-to-merge=2")
    append(floe, tmp_path, name, range(0, 40), f"m{fv}-0")
    append(floe, tmp_path, name, range(40, 80), f"m{fv}-1")
    floe.run("delete", name, "--where", "id < 10")
    append(floe, tmp_path, name, range(80, 90), f"m{fv}-2")  # merges every data manifest
    tbl = floe.pyiceberg_catalog().load_table(name)
    for m in tbl.current_snapshot().manifests(tbl.io):
        seqs = [e.sequence_number for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True)]
        assert seqs and m.min_sequence_number == min(seqs), (m.content, m.min_sequence_number, seqs)
    spark.sql(f"REFRESH TABLE {name}")
    spark.sql(f"INSERT INTO {name} VALUES (1000, 'j', 1)")
    want = list(range(10, 90)) + [1000]
    assert ids_of(floe, name) == want
    spark.sql(f"REFRESH TABLE {name}")
    assert sorted(r["id"] for r in spark.table(name).collect()) == want
