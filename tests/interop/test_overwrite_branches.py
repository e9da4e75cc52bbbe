"""Issue 16 items 1-2: overwrites and write-audit-publish.

- Dynamic (`floe ingest --overwrite`) and filtered (`--overwrite-where`)
  overwrites read back by PyIceberg, DuckDB and Java equal the model.
- A concurrent append into a partition an overwrite replaces is a conflict for
  floe as it is for Java's ReplacePartitions (validateNoConflictingData).
- A pipeline writes >= 10 checkpoints to branch `staging`, main stays as it
  was; a tag and a fast-forward publish them; PyIceberg and Java read the
  branch and the tag.
- Exactly-once with SIGKILLs on a branch.
"""
import json
import random
import signal
import subprocess
import time

import pyarrow as pa
import pyarrow.parquet as pq

from conftest import duckdb_connection

SCHEMA = "id long not null, region string, v long"


def write_rows(path, rows):
    with path.open("w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def rows_of(regions, start, n):
    return [{"id": start + i, "region": regions[i % len(regions)], "v": (start + i) * 10} for i in range(n)]


def key(r):
    return (r["id"], r["region"], r["v"])


def read_all(floe, java_peer, ref=None):
    """The table's rows as PyIceberg, DuckDB (main only) and Java (unless
    java_peer is None) read them."""
    tbl = floe.pyiceberg_catalog().load_table("db.t")
    scan = tbl.scan()
    if ref:
        scan = scan.use_ref(ref)
    py = sorted(key(r) for r in scan.to_arrow().to_pylist())
    jv = None
    if java_peer:
        out = java_peer("scan", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "db.t",
                        *([ref] if ref else []))
        jv = sorted(key(json.loads(line)) for line in out.splitlines())
    duck = None
    if ref is None:
        con = duckdb_connection()
        duck = sorted(tuple(r) for r in con.execute(
            f"SELECT id, region, v FROM iceberg_scan('{tbl.metadata_location}')").fetchall())
    return py, jv, duck


def test_dynamic_and_filtered_overwrite_read_back_by_every_reader(floe, tmp_path, java_peer):
    model = {}
    first = rows_of(["eu", "us", "ap"], 0, 30)
    write_rows(tmp_path / "a.jsonl", first)
    floe.run("ingest", "db.t", tmp_path / "a.jsonl", "--create-schema", SCHEMA,
             "--partition-by", "region", "--quiet")
    model = {r["id"]: r for r in first}
    # dynamic: the input touches eu and us; ap stays
    second = rows_of(["eu", "us"], 100, 8)
    write_rows(tmp_path / "b.jsonl", second)
    floe.run("ingest", "db.t", tmp_path / "b.jsonl", "--overwrite", "--quiet")
    model = {i: r for i, r in model.items() if r["region"] not in ("eu", "us")}
    model.update({r["id"]: r for r in second})
    snap = floe.json_rows("snapshots", "db.t")[-1]
    assert snap["operation"] == "overwrite"
    assert snap["summary"]["replace-partitions"] == "true"
    # filtered: replace the rows of region ap, with rows that all match
    third = rows_of(["ap"], 200, 5)
    write_rows(tmp_path / "c.jsonl", third)
    floe.run("ingest", "db.t", tmp_path / "c.jsonl", "--overwrite-where", "region = 'ap'", "--quiet")
    model = {i: r for i, r in model.items() if r["region"] != "ap"}
    model.update({r["id"]: r for r in third})
    # a row outside the filter: refused, nothing committed
    before = floe.json_rows("snapshots", "db.t")
    bad = floe.run("ingest", "db.t", tmp_path / "b.jsonl", "--overwrite-where", "region = 'ap'",
                   "--pipeline-id", "bad", "--quiet", check=False)
    assert bad.returncode != 0
    assert "Cannot append file with rows that do not match filter" in bad.stderr
    assert floe.json_rows("snapshots", "db.t") == before
    # overwrite and upsert together: refused before anything is created
    p = floe.run("ingest", "db.new", tmp_path / "b.jsonl", "--create-schema", SCHEMA,
                 "--overwrite", "--upsert", "--quiet", check=False)
    assert p.returncode != 0 and "refused" in p.stderr
    assert "db.new" not in floe.run("table", "list", "db").stdout

    want = sorted(key(r) for r in model.values())
    py, jv, duck = read_all(floe, java_peer)
    assert py == want
    assert jv == want
    assert duck == want


def _java_file(tmp_path, name, rows):
    p = tmp_path / name
    pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(
        [("id", pa.int64()), ("region", pa.string()), ("v", pa.int64())])), p)
    return p


def test_concurrent_append_into_overwritten_partition_conflicts_as_in_java(floe, tmp_path, java_peer):
    write_rows(tmp_path / "a.jsonl", rows_of(["eu", "us"], 0, 10))
    floe.run("ingest", "db.t", tmp_path / "a.jsonl", "--create-schema", SCHEMA,
             "--partition-by", "region", "--quiet")
    base = floe.json_rows("snapshots", "db.t")[-1]["snapshot_id"]
    # an overwrite load from stdin: its first checkpoint commits, then Java
    # appends into eu, then the load's next eu rows arrive
    proc = subprocess.Popen([floe.bin, "--dir", str(floe.root), "ingest", "db.t", "-", "--overwrite",
                             "--checkpoint-interval", "50ms", "--pipeline-id", "ow", "--quiet"],
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for r in rows_of(["eu"], 100, 3):
        proc.stdin.write(json.dumps(r) + "\n")
    proc.stdin.flush()
    deadline = time.time() + 30
    while time.time() < deadline:
        snaps = floe.json_rows("snapshots", "db.t")
        if any(s["summary"].get("floe.pipeline-id") == "ow" for s in snaps):
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the overwrite's first checkpoint did not commit")
    jf = _java_file(tmp_path, "java-eu.parquet", [{"id": 900, "region": "eu", "v": 1}])
    java_peer("append", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "db.t",
              f"{jf}:1:region=eu")
    for r in rows_of(["eu"], 110, 3):
        proc.stdin.write(json.dumps(r) + "\n")
    proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) != 0
    assert "Found conflicting files that can contain records matching partitions [region=eu]" in err, err
    assert str(jf) in err
    # Java's own dynamic overwrite from the same base finds the same conflict
    jf2 = _java_file(tmp_path, "java-eu2.parquet", [{"id": 901, "region": "eu", "v": 2}])
    out = java_peer("replace", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "db.t",
                    base, f"{jf2}:1:region=eu")
    assert out.startswith("conflict: Found conflicting files that can contain records matching "
                          "partitions [region=eu]"), out
    # an overwrite of another partition meanwhile is no conflict
    write_rows(tmp_path / "us.jsonl", rows_of(["us"], 300, 2))
    floe.run("ingest", "db.t", tmp_path / "us.jsonl", "--overwrite", "--quiet")


def test_pipeline_stages_on_a_branch_then_publishes(floe, tmp_path, java_peer):
    write_rows(tmp_path / "a.jsonl", rows_of(["eu", "us"], 0, 10))
    floe.run("ingest", "db.t", tmp_path / "a.jsonl", "--create-schema", SCHEMA,
             "--partition-by", "region", "--quiet")
    main_before = floe.json_rows("snapshots", "db.t")[-1]["snapshot_id"]
    (tmp_path / "p.yaml").write_text(
        "pipeline.name: wap\n"
        "execution.checkpointing.interval: 100ms\n"
        "sources:\n"
        "  - name: gen\n"
        "    type: generator\n"
        "    rows-per-second: 1000\n"
        "    number-of-rows: 1600\n"
        "    fields:\n"
        "      id: {kind: sequence, start: 1000}\n"
        "      region: {values: 'eu,us'}\n"
        "      v: {kind: sequence, start: 0}\n"
        "tables:\n"
        "  - name: db.t\n"
        "    branch: staging\n")
    floe.run("run", tmp_path / "p.yaml", "--quiet")
    snaps = floe.json_rows("snapshots", "db.t")
    refs = {r["name"]: r for r in floe.json_rows("inspect", "db.t", "refs")}
    assert refs["main"]["snapshot_id"] == main_before
    staged = [s for s in snaps if s["summary"].get("floe.pipeline-id") == "wap"]
    assert len(staged) >= 10, len(staged)
    assert refs["staging"]["snapshot_id"] == staged[-1]["snapshot_id"]
    py_main, _, _ = read_all(floe, None)
    assert len(py_main) == 10
    # compaction of the branch leaves main alone
    floe.run("maintain", "db.t", "--steps", "compact", "--branch", "staging", "--min-input-files", "2",
             "--quiet")
    snaps = floe.json_rows("snapshots", "db.t")
    refs = {r["name"]: r for r in floe.json_rows("inspect", "db.t", "refs")}
    assert refs["main"]["snapshot_id"] == main_before
    assert snaps[-1]["operation"] == "replace" and refs["staging"]["snapshot_id"] == snaps[-1]["snapshot_id"]
    # audit, tag, publish
    floe.run("tag", "create", "db.t", "audited", "--from", "staging", "--max-ref-age-ms", "604800000")
    floe.run("branch", "fast-forward", "db.t", "main", "staging")
    for ref in ("staging", "audited", None):
        py, jv, _ = read_all(floe, java_peer if ref else None, ref)
        assert len(py) == 1610 and len(set(py)) == 1610, ref
        assert jv is None or jv == py, ref
    # a resumed run adds nothing (its offsets follow the branch)
    floe.run("run", tmp_path / "p.yaml", "--quiet")
    assert len(floe.json_rows("snapshots", "db.t")) == len(snaps)
    # expiry keeps what the branch and the tag reach
    floe.run("maintain", "db.t", "--steps", "expire", "--older-than", "0s", "--retain-last", "1",
             "--quiet")
    py, _, _ = read_all(floe, None, "audited")
    assert len(py) == 1610


def test_sigkill_while_loading_into_a_branch_is_exactly_once(floe, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    n = 120_000
    for k in range(4):
        write_rows(src / f"p{k}.jsonl", rows_of(["eu", "us", "ap"], k * n // 4, n // 4))
    write_rows(tmp_path / "seed.jsonl", rows_of(["eu"], 10**7, 5))
    floe.run("ingest", "db.t", tmp_path / "seed.jsonl", "--create-schema", SCHEMA,
             "--partition-by", "region", "--quiet")
    main_before = floe.json_rows("snapshots", "db.t")[-1]["snapshot_id"]
    cmd = [floe.bin, "--dir", str(floe.root), "-v", "ingest", "db.t", str(src), "--branch", "staging",
           "--parallelism", "2", "--checkpoint-interval", "30ms", "--block-size", "16KiB", "--quiet"]
    rng = random.Random(16)
    kills = runs = 0
    finished = False
    while not finished and runs < 100:
        runs += 1
        log = tmp_path / f"run-{runs}.log"
        with log.open("w") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            try:
                if kills >= 8:
                    proc.wait(timeout=300)
                else:
                    after = rng.choice([1, 1, 2])
                    deadline = time.time() + 20
                    while time.time() < deadline and proc.poll() is None:
                        if log.read_text().count("committ") > after:
                            time.sleep(rng.uniform(0, 0.03))
                            break
                        time.sleep(0.002)
                    proc.wait(timeout=0.001)
                finished = proc.returncode == 0
                assert finished, log.read_text()[-2000:]
                if kills < 8:
                    # a fast machine loaded it all before enough kills: more input
                    # in the same folder (the same pipeline), and go on killing
                    k = n // 30_000
                    write_rows(src / f"p{k}.jsonl", rows_of(["eu", "us", "ap"], n, 30_000))
                    n += 30_000
                    finished = False
                continue
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
        kills += 1
    assert finished and kills >= 8, (kills, runs)
    tbl = floe.pyiceberg_catalog().load_table("db.t")
    assert tbl.metadata.current_snapshot_id == main_before
    ids = tbl.scan(selected_fields=("id",)).use_ref("staging").to_arrow().column("id").to_pylist()
    assert len(ids) == n + 5 and len(set(ids)) == n + 5
    con = duckdb_connection()
    assert con.execute(f"SELECT count(*) FROM iceberg_scan('{tbl.metadata_location}')").fetchone() == (5,)


def test_sql_insert_overwrite_into_a_branch(tmp_path):
    """INSERT OVERWRITE (Flink's dynamic overwrite) with the sink's 'branch'
    write option: the branch holds the replaced partition, main the old rows;
    PyIceberg reads both."""
    from conftest import floe_bin
    from pyiceberg.catalog.sql import SqlCatalog

    def sql(script):
        p = subprocess.run([floe_bin(), "sql", "-e", script], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0, p.stderr
        return p.stdout

    head = (f"CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='jdbc', "
            f"'uri'='jdbc:sqlite:{tmp_path}/catalog.db', 'warehouse'='file://{tmp_path}/wh'); USE CATALOG c;")
    (tmp_path / "a").mkdir()
    write_rows(tmp_path / "a" / "a.jsonl", rows_of(["eu", "us"], 0, 6))
    (tmp_path / "b").mkdir()
    write_rows(tmp_path / "b" / "b.jsonl", rows_of(["eu"], 50, 2))
    sql(head + "CREATE DATABASE db; USE db; CREATE TABLE t (id BIGINT NOT NULL, region STRING, v BIGINT) "
        "PARTITIONED BY (region);"
        "CREATE TEMPORARY TABLE a (id BIGINT, region STRING, v BIGINT) WITH ('connector'='filesystem', "
        "'path'='a', 'format'='json'); INSERT INTO t SELECT * FROM a;")
    sql(head + "USE db; CREATE TEMPORARY TABLE b (id BIGINT, region STRING, v BIGINT) WITH "
        "('connector'='filesystem', 'path'='b', 'format'='json');"
        "INSERT OVERWRITE t /*+ OPTIONS('branch'='staging') */ SELECT * FROM b;")
    tbl = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh").load_table("db.t")
    main = sorted(r["id"] for r in tbl.scan().to_arrow().to_pylist())
    staged = sorted((r["id"], r["region"]) for r in tbl.scan().use_ref("staging").to_arrow().to_pylist())
    assert main == list(range(6))
    assert staged == [(1, "us"), (3, "us"), (5, "us"), (50, "eu"), (51, "eu")]


def test_cherry_pick_of_overwrites_as_java_allows(floe, tmp_path):
    """Java's CherryPickOperation beyond appends: a dynamic (replace-partitions)
    overwrite staged on a branch is applied again on a main that moved on,
    when its parent is an ancestor of main and no partition it replaced
    changed since; other operations only fast-forward; each refusal has
    Java's reason. PyIceberg reads main back equal to the model."""
    def ingest(name, rows, *args):
        write_rows(tmp_path / name, rows)
        floe.run("ingest", "db.t", tmp_path / name, *args, "--quiet")

    def main_rows():
        t = floe.pyiceberg_catalog().load_table("db.t")
        return sorted(key(r) for r in t.scan().to_arrow().to_pylist())

    def staged():
        return floe.json_rows("snapshots", "db.t")[-1]["snapshot_id"]

    def pick(snap, check=True):
        return floe.run("cherry-pick", "db.t", str(snap), check=check)

    first = rows_of(["eu", "us", "ap"], 0, 30)
    write_rows(tmp_path / "a.jsonl", first)
    floe.run("ingest", "db.t", tmp_path / "a.jsonl", "--create-schema", SCHEMA,
             "--partition-by", "region", "--quiet")
    model = {r["id"]: r for r in first}
    floe.run("branch", "create", "db.t", "staging")
    # staged: a dynamic overwrite of eu; meanwhile main appends to us
    eu = rows_of(["eu"], 100, 4)
    ingest("b.jsonl", eu, "--overwrite", "--branch", "staging")
    s1 = staged()
    us = rows_of(["us"], 200, 3)
    ingest("c.jsonl", us)
    model.update({r["id"]: r for r in us})
    pick(s1)
    model = {i: r for i, r in model.items() if r["region"] != "eu"}
    model.update({r["id"]: r for r in eu})
    assert main_rows() == sorted(key(r) for r in model.values())
    head = floe.json_rows("snapshots", "db.t")[-1]
    assert head["operation"] == "overwrite" and head["snapshot_id"] != s1
    assert head["summary"]["source-snapshot-id"] == str(s1)
    assert head["summary"]["replace-partitions"] == "true"
    # picked once
    r = pick(s1, check=False)
    assert r.returncode != 0 and f"already picked into main as snapshot {head['snapshot_id']}" in r.stderr
    # a partition it replaced changed on main since its parent
    floe.run("branch", "replace", "db.t", "staging", "--snapshot", str(head["snapshot_id"]))
    ingest("d.jsonl", rows_of(["ap"], 300, 3), "--overwrite", "--branch", "staging")
    s2 = staged()
    ap = rows_of(["ap"], 400, 2)
    ingest("e.jsonl", ap)
    model.update({r["id"]: r for r in ap})
    r = pick(s2, check=False)
    assert r.returncode != 0
    assert "Cannot cherry-pick replace partitions with changed partition: region=ap" in r.stderr
    # an overwrite whose parent (s2) is not in main's history
    ingest("f.jsonl", rows_of(["us"], 500, 2), "--overwrite", "--branch", "staging")
    s3 = staged()
    r = pick(s3, check=False)
    assert r.returncode != 0
    assert "Cannot cherry-pick overwrite not based on an ancestor of the current state" in r.stderr
    # a filtered overwrite is not a dynamic one: it only fast-forwards
    main_head = floe.json_rows("snapshots", "db.t")[-1]["snapshot_id"]
    floe.run("branch", "replace", "db.t", "staging", "--snapshot", str(main_head))
    us2 = rows_of(["us"], 600, 2)
    ingest("g.jsonl", us2, "--overwrite-where", "region = 'us'", "--branch", "staging")
    s4 = staged()
    ingest("h.jsonl", rows_of(["eu"], 700, 1), "--branch", "staging")  # staging moves on
    floe.run("branch", "replace", "db.t", "staging", "--snapshot", str(s4))
    ingest("i.jsonl", rows_of(["eu"], 800, 1))  # main moves on: no fast-forward
    r = pick(s4, check=False)
    assert r.returncode != 0
    assert f"Cannot cherry-pick snapshot {s4}: not append, dynamic overwrite, or fast-forward" in r.stderr
    model[800] = rows_of(["eu"], 800, 1)[0]
    assert main_rows() == sorted(key(r) for r in model.values())  # refusals changed nothing
    # ... while a non-append whose parent is main's head is fast-forwarded to
    floe.run("branch", "replace", "db.t", "staging", "--snapshot",
             str(floe.json_rows("snapshots", "db.t")[-1]["snapshot_id"]))
    ingest("j.jsonl", us2, "--overwrite-where", "region = 'us'", "--branch", "staging")
    s5 = staged()
    pick(s5)
    assert floe.json_rows("snapshots", "db.t")[-1]["snapshot_id"] == s5
    model = {i: r for i, r in model.items() if r["region"] != "us"}
    model.update({r["id"]: r for r in us2})
    assert main_rows() == sorted(key(r) for r in model.values())
