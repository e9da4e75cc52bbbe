"""Changelog reads (`floe scan --changelog`) against Spark's create_changelog_view.

Spark's changelog view (Iceberg 1.10) refuses tables with delete files
("Delete files are currently not supported in changelog scans"), so for
upsert tables — floe-written (equality deletes + position deletes / DVs),
Flink-written (../shared/testdata) and Spark merge-on-read — the oracle is
Spark's procedure on a copy-on-write mirror: one INSERT OVERWRITE per
snapshot of the upsert table with exactly that snapshot's rows (as Spark
reads them; the Flink table's rows as floe reads them, since Spark cannot
open its recorded /test-warehouse paths), then create_changelog_view with
identifier columns and net changes off, compared row for row (data columns,
_change_type, _change_ordinal; _commit_snapshot_id mapped through the
ordinal). A Spark copy-on-write MERGE table is compared with the procedure
on the table itself (carry-overs of rewritten files). `--follow` with a
position file emits every commit once across a restart.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spark_session import canon, norm

TESTDATA = Path(os.environ.get("FLOE_TESTDATA", "/work/shared/testdata"))
IMPALA = TESTDATA / "impala" / "testdata" / "data" / "iceberg_test"
CL = ("_change_type", "_change_ordinal")


def floe_changelog(floe, table, *args):
    out = floe.root / f"cl-{time.monotonic_ns()}.parquet"
    floe.run("scan", table, "--changelog", *args, "--format", "parquet", "--output", out)
    rows = pq.read_table(out).to_pylist()
    out.unlink()
    return rows


def comparable(rows, cols):
    return canon([{c: norm(r[c]) for c in (*cols, *CL)} for r in rows])


def spark_mirror_changelog(spark, name, cols_ddl, snapshots, ids):
    """create_changelog_view of a copy-on-write table that holds, snapshot by
    snapshot, the rows given (each a SQL query or a list of tuples)."""
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} ({cols_ddl}) USING iceberg TBLPROPERTIES "
              "('format-version'='2', 'write.delete.mode'='copy-on-write', "
              "'write.update.mode'='copy-on-write', 'write.merge.mode'='copy-on-write')")
    for k, rows in enumerate(snapshots):
        if isinstance(rows, str):
            spark.sql(f"INSERT OVERWRITE {name} {rows}")
        else:
            df = spark.createDataFrame(rows, spark.table(name).schema)
            df.createOrReplaceTempView(f"mirror_src_{k}")
            spark.sql(f"INSERT OVERWRITE {name} SELECT * FROM mirror_src_{k}")
    view = name.replace(".", "_") + "_changes"
    id_list = ", ".join(f"'{c}'" for c in ids)
    spark.sql(f"CALL default.system.create_changelog_view(table => '{name}', "
              f"changelog_view => '{view}', identifier_columns => array({id_list}))")
    return view_rows(spark, view)


def view_rows(spark, view):
    # the view's table belongs to the catalog the CALL used: read it before
    # the wrapper's next statement closes that catalog
    return [r.asDict() for r in spark._spark.sql(f"SELECT * FROM {view}").collect()]


def snapshot_chain(floe, table, *args):
    snaps = floe.json_rows("inspect", table, "snapshots", *args)
    return [s for s in snaps if s["operation"] != "replace"]


def check_against(got, want, cols, snap_ids):
    assert comparable(got, cols) == comparable(want, cols)
    for r in got:
        assert r["_commit_snapshot_id"] == snap_ids[r["_change_ordinal"]], r
    assert {r["_change_type"] for r in got} >= {"INSERT", "UPDATE_BEFORE", "UPDATE_AFTER"}


def upsert_round(rng, n, n_keys):
    lines = []
    for _ in range(n):
        row = {"id": rng.randrange(n_keys), "region": rng.choice(["eu", "us"]),
               "v": None if rng.random() < 0.1 else rng.randrange(1000)}
        op = "-D" if rng.random() < 0.25 else rng.choice(["+I", "+U"])
        lines.append(json.dumps({"op": op, **row}))
    return lines


# v3: equality deletes + deletion vectors (position delete files: the Flink and
# Spark merge-on-read tables below)
@pytest.mark.parametrize("fv", [3])
def test_floe_upsert_table_changelog_equals_spark(spark_floe, fv):
    floe, spark = spark_floe
    name = f"cl.up{fv}"
    floe.run("namespace", "create", "cl", check=False)
    src = floe.root / f"in{fv}"
    src.mkdir()
    rng = random.Random(7 + fv)
    for rnd in range(3):
        f = src / f"r{rnd}.jsonl"
        f.write_text("\n".join(upsert_round(rng, 80, 30)) + "\n")
        args = ["ingest", name, f, "--upsert", "--equality-fields", "id, region",
                "--rowkind-field", "op", "--pipeline-id", f"cl{fv}-{rnd}", "--quiet"]
        if rnd == 0:
            args += ["--create-schema", "id long not null, region string not null, v long",
                     "--partition-by", "region", "--format-version", fv]
        floe.run(*args)
    snaps = snapshot_chain(floe, name)
    ids = [s["snapshot_id"] for s in snaps]
    got = floe_changelog(floe, name, "--identifier-columns", "id,region")
    want = spark_mirror_changelog(
        spark, f"cl.mirror{fv}", "id bigint not null, region string not null, v bigint",
        [f"SELECT id, region, v FROM {name} VERSION AS OF {i}" for i in ids], ["id", "region"])
    check_against(got, want, ["id", "region", "v"], ids)
    # a range: the changes of the last two commits only, ordinals from 0
    part = floe_changelog(floe, name, "--from", str(ids[0]), "--to", str(ids[2]),
                          "--identifier-columns", "id,region")
    shifted = [{**r, "_change_ordinal": r["_change_ordinal"] - 1} for r in got
               if r["_change_ordinal"] >= 1]
    assert comparable(part, ["id", "region", "v"]) == comparable(shifted, ["id", "region", "v"])


@pytest.mark.parametrize("table", ["iceberg_v2_delete_equality_partitioned"])
def test_flink_written_table_changelog_equals_spark(spark_floe, table):
    floe, spark = spark_floe
    path = IMPALA / "hadoop_catalog" / "ice" / table
    pm = ["--path-map", f"/test-warehouse/iceberg_test/={IMPALA}/"]
    snaps = snapshot_chain(floe, str(path), *pm)
    ids = [s["snapshot_id"] for s in snaps]
    contents = []
    for i in ids:
        rows = floe.json_rows("scan", str(path), *pm, "--snapshot-id", i)
        contents.append(rows)
    got = floe_changelog(floe, str(path), *pm)
    schema_cols = [c for c in got[0].keys() if not c.startswith("_")]
    ddl = ", ".join(f"{c} {spark_type(got, c)}" for c in schema_cols)
    # the schema's identifier fields (Flink's upsert key), else the first column
    id_cols = identifier_columns(path) or [schema_cols[0]]
    mirror_rows = [[tuple(spark_value(r[c], got, c) for c in schema_cols) for r in rows]
                   for rows in contents]
    want = spark_mirror_changelog(spark, f"cl.flink_{table[9:]}", ddl, mirror_rows, id_cols)
    got_id = floe_changelog(floe, str(path), *pm, "--identifier-columns", ",".join(id_cols))
    assert comparable(got_id, schema_cols) == comparable(want, schema_cols)
    for r in got_id:
        assert r["_commit_snapshot_id"] == ids[r["_change_ordinal"]]


def identifier_columns(path):
    metas = sorted((path / "metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    m = json.loads(metas[-1].read_text())
    sch = next(s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"])
    by_id = {f["id"]: f["name"] for f in sch["fields"]}
    return [by_id[i] for i in sch.get("identifier-field-ids", [])]


def spark_type(rows, c):
    import datetime as dt
    v = next((r[c] for r in rows if r[c] is not None), None)
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "bigint"
    if isinstance(v, float):
        return "double"
    if isinstance(v, dt.datetime):
        return "timestamp"
    if isinstance(v, dt.date):
        return "date"
    return "string"


def spark_value(v, rows, c):
    import datetime as dt
    if v is not None and spark_type(rows, c) == "date" and isinstance(v, str):
        return dt.date.fromisoformat(v)
    return v


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_spark_merge_table_changelog_equals_spark(spark_floe, mode):
    floe, spark = spark_floe
    tag = mode.split("-")[0]
    name = f"cl.sp_{tag}"
    floe.run("namespace", "create", "cl", check=False)
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (id bigint not null, v string) USING iceberg "
              f"TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='{mode}', "
              f"'write.update.mode'='{mode}', 'write.delete.mode'='{mode}')")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    spark.sql(f"INSERT INTO {name} VALUES (5, 'e'), (6, 'f')")
    spark.sql(f"MERGE INTO {name} t USING (SELECT * FROM VALUES (2, 'B'), (7, 'g'), (5, 'E') "
              f"AS s(id, v)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
              f"WHEN NOT MATCHED THEN INSERT *")
    spark.sql(f"DELETE FROM {name} WHERE id IN (3, 6)")
    spark.sql(f"UPDATE {name} SET v = 'AA' WHERE id = 1")
    ids = [s["snapshot_id"] for s in snapshot_chain(floe, name)]
    got = floe_changelog(floe, name, "--identifier-columns", "id")
    if mode == "copy-on-write":
        # Spark's own changelog of the table itself
        spark.sql(f"CALL default.system.create_changelog_view(table => '{name}', "
                  f"changelog_view => 'cl_sp_cow_changes', identifier_columns => array('id'))")
        want = view_rows(spark, "cl_sp_cow_changes")
        assert comparable(got, ["id", "v"]) == comparable(want, ["id", "v"])
        for r in got:
            assert r["_commit_snapshot_id"] == ids[r["_change_ordinal"]]
        return
    files = floe.json_rows("inspect", name, "delete_files")
    assert files, "merge-on-read wrote no delete files"
    want = spark_mirror_changelog(spark, "cl.sp_mirror", "id bigint not null, v string",
                                  [f"SELECT * FROM {name} VERSION AS OF {i}" for i in ids], ["id"])
    check_against(got, want, ["id", "v"], ids)


def test_follow_emits_each_commit_once_across_a_restart(floe, tmp_path):
    name = "db.fol"
    floe.run("namespace", "create", "db")
    floe.run("table", "create", name, "--schema", "id long not null, v string")
    out = tmp_path / "changes.jsonl"
    pos = tmp_path / "pos.json"

    def commit(rows, op="+I"):
        f = tmp_path / f"c{time.monotonic_ns()}.jsonl"
        f.write_text("".join(json.dumps({"op": op, **r}) + "\n" for r in rows))
        floe.run("ingest", name, f, "--upsert", "--equality-fields", "id", "--rowkind-field", "op",
                 "--quiet")

    def follow(polls):
        return floe.run("scan", name, "--changelog", "--follow", "--identifier-columns", "id",
                        "--interval", "100ms",
                        "--polls", polls, "--format", "json", "--position-file", pos,
                        "--output", out)

    commit([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}])
    follow(1)
    commit([{"id": 2, "v": "B"}, {"id": 3, "v": "c"}])
    commit([{"id": 1}], op="-D")
    # a restart picks up from the position: the two new commits, once
    follow(1)
    # a kill in the middle of following: the position is never ahead of the file
    commit([{"id": 4, "v": "d"}])
    p = subprocess.Popen([floe.bin, "--dir", str(floe.root), "scan", name, "--changelog",
                          "--follow", "--identifier-columns", "id", "--interval", "50ms", "--format", "json",
                          "--position-file", str(pos), "--output", str(out)])
    time.sleep(1.5)
    p.send_signal(signal.SIGKILL)
    p.wait()
    commit([{"id": 5, "v": "e"}])
    follow(1)
    rows = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    seen = [(r["_commit_snapshot_id"], r["id"], r["_change_type"]) for r in rows]
    assert len(seen) == len(set(seen)), seen
    snaps = [s["snapshot_id"] for s in floe.json_rows("inspect", name, "snapshots")]
    assert sorted({r["_commit_snapshot_id"] for r in rows}) == sorted(snaps)
    by = sorted((r["_change_ordinal"], r["id"], r["_change_type"], r.get("v")) for r in rows)
    assert by == [(0, 1, "INSERT", "a"), (0, 2, "INSERT", "b"),
                  (1, 2, "UPDATE_AFTER", "B"), (1, 2, "UPDATE_BEFORE", "b"), (1, 3, "INSERT", "c"),
                  (2, 1, "DELETE", "a"), (3, 4, "INSERT", "d"), (4, 5, "INSERT", "e")]
    # the plain read agrees with what was followed
    whole = floe.json_rows("scan", name, "--changelog", "--identifier-columns", "id")
    assert sorted(json.dumps(r, sort_keys=True) for r in whole) == \
        sorted(json.dumps(r, sort_keys=True) for r in rows)


# ---- an Iceberg table as a pipeline source ------------------------------------------------------


def append_snapshot(floe, name, lo, n, tmp_path):
    f = tmp_path / f"a{lo}.jsonl"
    f.write_text("".join(json.dumps({"id": i, "v": f"v{i}"}) + "\n" for i in range(lo, lo + n)))
    floe.run("ingest", name, f, "--quiet")


def ids_of(floe, name):
    return sorted(r["id"] for r in floe.json_rows("scan", name, "--columns", "id"))


def pipeline(path, name, source_keys, table_keys):
    path.write_text(f"""
pipeline.name: {name}
execution.checkpointing.interval: 20ms
sources:
  - name: src
    type: iceberg
    block-size: 4KiB
{source_keys}
tables:
{table_keys}
""")
    return path


def test_iceberg_source_each_row_once_across_a_kill(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.src", "--schema", "id long not null, v string")
    for k in range(4):
        append_snapshot(floe, "db.src", k * 400, 400, tmp_path)
    dst = "  - name: db.dst\n    schema: \"id long not null, v string\""
    streaming = pipeline(tmp_path / "s.yaml", "copy", "    source-table: db.src\n"
                         "    streaming: true\n    monitor-interval: 100ms", dst)
    p = subprocess.Popen([floe.bin, "--dir", str(floe.root), "run", streaming],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            r = floe.run("inspect", "db.dst", "snapshots", "--format", "json", check=False)
            if r.returncode == 0 and len(r.stdout.splitlines()) >= 2:
                break
            time.sleep(0.05)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    got_before = ids_of(floe, "db.dst")
    assert got_before and len(got_before) == len(set(got_before))
    # more snapshots land; a bounded run of the same pipeline reads to the end
    for k in range(4, 6):
        append_snapshot(floe, "db.src", k * 400, 400, tmp_path)
    bounded = pipeline(tmp_path / "b.yaml", "copy", "    source-table: db.src", dst)
    floe.run("run", bounded)
    assert ids_of(floe, "db.dst") == list(range(6 * 400))
    offs = [json.loads(s["summary"]["floe.source-offsets"])
            for s in floe.json_rows("inspect", "db.dst", "snapshots")]
    assert offs[-1]["iceberg"]["n"] == 6 * 400


def test_iceberg_changelog_source_feeds_an_upsert_table(floe, tmp_path):
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.u", "--schema", "id long not null, v string")
    rng = random.Random(5)
    model = {}

    def upsert_commit(k):
        lines = []
        for _ in range(120):
            i = rng.randrange(60)
            if rng.random() < 0.3:
                lines.append({"op": "-D", "id": i})
                model.pop(i, None)
            else:
                lines.append({"op": "+U", "id": i, "v": f"{k}-{rng.randrange(99)}"})
                model[i] = lines[-1]["v"]
        f = tmp_path / f"u{k}.jsonl"
        f.write_text("".join(json.dumps(x) + "\n" for x in lines))
        floe.run("ingest", "db.u", f, "--upsert", "--equality-fields", "id", "--rowkind-field",
                 "op", "--quiet")

    for k in range(3):
        upsert_commit(k)
    cfg = pipeline(tmp_path / "c.yaml", "cdc",
                   "    source-table: db.u\n    read-mode: changelog\n"
                   "    starting-strategy: INCREMENTAL_FROM_EARLIEST_SNAPSHOT",
                   "  - name: db.u2\n    schema: \"id long not null, v string\"\n"
                   "    upsert-enabled: true\n    equality-field-columns: id")
    floe.run("run", cfg)
    for k in range(3, 5):
        upsert_commit(k)
    floe.run("run", cfg)  # resumes after the snapshots it read
    got = {r["id"]: r["v"] for r in floe.json_rows("scan", "db.u2")}
    assert got == model
    assert {r["id"]: r["v"] for r in floe.json_rows("scan", "db.u")} == model


def snapshot_offsets(floe, name):
    r = floe.run("inspect", name, "snapshots", "--format", "json", check=False)
    if r.returncode != 0:
        return []
    return [json.loads(json.loads(x)["summary"].get("floe.source-offsets", "{}"))
            for x in r.stdout.splitlines() if x.strip()]


def kill_when(floe, cfg, name, cond, timeout=60):
    p = subprocess.Popen([floe.bin, "--dir", str(floe.root), "run", cfg],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and p.poll() is None:
            offs = snapshot_offsets(floe, name)
            if offs and cond(offs[-1]):
                break
            time.sleep(0.02)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    return snapshot_offsets(floe, name)


def test_hybrid_source_each_record_once_across_restarts(floe, tmp_path):
    """A files pipeline filled db.hist; a hybrid source bootstraps db.out
    from it and goes on with the files from the offsets db.hist recorded:
    killed inside the bootstrap and again after the switch, every record
    is in db.out once."""
    floe.run("namespace", "create", "db")
    src = tmp_path / "in"
    src.mkdir()

    def lines(lo, hi):
        return "".join(json.dumps({"id": i, "v": f"v{i}"}) + "\n" for i in range(lo, hi))

    (src / "a.jsonl").write_text(lines(0, 12000))
    (src / "b.jsonl").write_text(lines(12000, 20000))
    (tmp_path / "hist.yaml").write_text(f"""
pipeline.name: hist
sources:
  - name: raw
    type: files
    path: {src}
tables:
  - name: db.hist
    schema: "id long not null, v string"
""")
    floe.run("run", tmp_path / "hist.yaml")
    # after db.hist's last commit: more records in b and a new file
    with open(src / "b.jsonl", "a") as f:
        f.write(lines(20000, 21000))
    (src / "c.jsonl").write_text(lines(21000, 22000))

    def cfg(path, follow):
        path.write_text(f"""
pipeline.name: backfill
execution.checkpointing.interval: 20ms
sources:
  - name: all
    type: hybrid
    source-table: db.hist
    path: {src}
    follow: {str(follow).lower()}
    monitor-interval: 100ms
    block-size: 4KiB
tables:
  - name: db.out
    schema: "id long not null, v string"
""")
        return path

    following = cfg(tmp_path / "f.yaml", True)
    offs = kill_when(floe, following, "db.out", lambda o: True)
    # killed in the bootstrap (a run that got past it before its first commit
    # was seen is killed after the switch instead: the checks below still hold)
    assert offs and offs[-1]["@hybrid-phase"] in (0, 1), offs[-1:]
    offs = kill_when(floe, following, "db.out", lambda o: o["@hybrid-phase"] == 1)
    assert offs[-1]["@hybrid-phase"] == 1  # killed after the switch
    (src / "d.jsonl").write_text(lines(22000, 22500))
    floe.run("run", cfg(tmp_path / "b.yaml", False))
    assert ids_of(floe, "db.out") == list(range(22500))


def test_iceberg_source_watermarks_from_file_lower_bounds(floe, tmp_path):
    """watermark-column (Flink's IcebergSource): the files are read in the
    order of ts's lower bound, the watermark is the smallest lower bound not
    yet read, and every commit downstream records it as floe.watermark:
    stopped mid-read (a commit fails) and restarted, every row lands once, the watermarks
    only go up and are exactly the files' lower bounds, and a late snapshot
    (older rows, appended afterwards) does not take the watermark back."""
    floe.run("namespace", "create", "db")
    floe.run("table", "create", "db.ev", "--schema", "id long not null, ts timestamptz, v string")
    base = 1704067200000  # 2024-01-01T00:00:00Z
    order = [5, 2, 7, 0, 3, 6, 1, 4]  # file k holds the rows of hour order[k]
    per = 1000

    def write(k, hour, n=per):
        rows = []
        for j in range(n):
            i = k * per + j
            ms = base + hour * 3600000 + j * 1000
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + "+00:00"
            rows.append({"id": i, "ts": ts, "v": f"v{i}"})
        f = tmp_path / f"w{k}.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        floe.run("ingest", "db.ev", f, "--quiet")

    for k, hour in enumerate(order):
        write(k, hour)
    bounds = sorted(base + h * 3600000 for h in order)
    files = floe.json_rows("inspect", "db.ev", "files")
    assert len(files) == len(order), files

    def cfg(path, streaming):
        path.write_text(f"""
pipeline.name: wm
execution.checkpointing.interval: 20ms
sources:
  - name: src
    type: iceberg
    source-table: db.ev
    watermark-column: ts
    streaming: {str(streaming).lower()}
    monitor-interval: 100ms
    block-size: 4KiB
tables:
  - name: db.out
    schema: "id long not null, ts timestamptz, v string"
""")
        return path

    logs = []

    def run(path, fail_at=None):
        log = tmp_path / f"log{len(logs)}.txt"
        env = dict(os.environ)
        if fail_at:  # the catalog refuses this commit (the first is the table's creation)
            env["FLOE_TEST_CATALOG_FAULT"] = f"before-swap:{fail_at}"
        with open(log, "w") as err:
            rc = subprocess.run([floe.bin, "-v", "--dir", str(floe.root), "run", path],
                                stdout=subprocess.DEVNULL, stderr=err, env=env,
                                timeout=120).returncode
        assert (rc != 0) == bool(fail_at), log.read_text()[-2000:]
        logs.append([int(x.rsplit("watermark ", 1)[1]) for x in log.read_text().splitlines()
                     if "source 'src': watermark " in x])

    def snaps():
        r = floe.run("inspect", "db.out", "snapshots", "--format", "json", check=False)
        return [json.loads(x) for x in r.stdout.splitlines() if x.strip()] if r.returncode == 0 else []

    # the first run stops after its first checkpoint (its second commit fails),
    # inside the table scan unless it read the whole scan in one checkpoint
    run(cfg(tmp_path / "s.yaml", True), fail_at=3)
    got = ids_of(floe, "db.out")
    assert got and len(got) == len(set(got))
    # a late snapshot: rows older than every watermark so far
    write(len(order), -5, n=50)
    run(cfg(tmp_path / "b.yaml", False))
    assert ids_of(floe, "db.out") == list(range(len(order) * per + 50))
    wms = [int(s["summary"]["floe.watermark"]) for s in snaps()]
    for s in snaps():  # in the table scan: the bound of the file the next row is in
        pos = json.loads(s["summary"]["floe.source-offsets"])
        if pos["iceberg"]["seq"].startswith("t:"):
            assert pos["@watermark"] == bounds[pos["iceberg"]["n"] // per], pos
    assert wms == sorted(wms) and set(wms) <= set(bounds), (wms, bounds)
    assert wms[-1] == bounds[-1]  # the late rows leave it where it was
    for seq in logs:  # each run emits each lower bound once, in order
        assert seq == sorted(set(seq)) and set(seq) <= set(bounds), (seq, bounds)
    assert sorted(set(logs[0] + logs[1])) == bounds
    assert logs[0] and logs[0][0] == bounds[0]
    # what Flink refuses, floe refuses: a column that is not a long or a
    # timestamp, and (floe's own) a changelog read, whose deletes have no order
    bad = cfg(tmp_path / "bad.yaml", False)
    bad.write_text(bad.read_text().replace("watermark-column: ts", "watermark-column: v"))
    r = floe.run("run", bad, check=False)
    assert r.returncode != 0 and "not a long or timestamp column" in r.stderr, r.stderr
    bad.write_text(bad.read_text().replace("watermark-column: v",
                                           "watermark-column: ts\n    read-mode: changelog"))
    r = floe.run("run", bad, check=False)
    assert r.returncode != 0 and "watermark-column is for read-mode: append" in r.stderr, r.stderr
