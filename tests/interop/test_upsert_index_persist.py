"""The persisted key index of index-mode upserts (write.upsert.index.persist):
one `floe ingest` per round, so every round restarts the pipeline. A restart
after the pipeline's own commits and floe's compaction loads the index the
last commit named (floe.key-index) and reads only the compaction's new files
(the log says so, and never "key index of snapshot", the full build's line);
a tampered index file, or another writer's append between runs, is noticed
and the index rebuilt. After every round floe and DuckDB read exactly the
model, and the table has no equality delete file.
"""
import json
import random
from pathlib import Path

from conftest import duckdb_connection
from test_upsert_index import COLS, cheap_check, colliding_append, eq_delete_files
from test_upsert_interop import Model, random_round

BUILT = "key index of snapshot"
LOADED = "key index loaded from"


def run_round(floe, name, src, rnd, lines, key, fv, extra=()):
    (src / f"r{rnd:02d}.jsonl").write_text("\n".join(lines) + "\n")
    args = ["-v", "ingest", name, src, "--upsert", "--equality-fields", key,
            "--rowkind-field", "op", "--pipeline-id", "ix", "--parallelism", "2",
            "--block-size", "4KiB", *extra]
    if rnd == 0:
        schema = "id long not null, region string not null, name string, v long"
        args += ["--create-schema", schema, "--format-version", fv,
                 "--property", "write.upsert.mode=index",
                 "--property", "write.upsert.index.persist-interval=2"]
        if "region" in key:
            args += ["--partition-by", "region"]
    return floe.run(*args).stderr


def index_files(tbl):
    return [s.summary.get("floe.key-index") for s in tbl.metadata.snapshots
            if s.summary.get("floe.key-index")]


def test_restart_loads_the_persisted_index(floe, tmp_path):
    """v3, one long key (exact mode) and a composite key: round 1 loads the
    index round 0 persisted; after `floe maintain` compaction round 2 loads it
    too and reads only the rewritten files' keys."""
    con = duckdb_connection()
    for key, model_key, tag in (("id", ["id"], "x"), ("id, region", ["id", "region"], "g")):
        name = f"db.p{tag}"
        src = tmp_path / f"in{tag}"
        src.mkdir()
        rng = random.Random(5150 + len(tag) + len(key))
        model = Model(model_key)
        for rnd in range(3):
            if rnd == 2:
                floe.run("maintain", name, "--steps", "compact", "--quiet")
            err = run_round(floe, name, src, rnd, random_round(rng, model, 600, 200), key, "3")
            tbl, _ = cheap_check(floe, con, name, model.values(), f"{name} round {rnd}")
            assert eq_delete_files(tbl) == []
            assert index_files(tbl), "no snapshot names a persisted key index"
            if rnd == 0:
                continue
            assert LOADED in err and BUILT not in err, err
            line = next(l for l in err.splitlines() if LOADED in l)
            if rnd == 2:  # the compaction's files were read, not the table
                assert " 0 new data file(s) read" not in line, line
            modes = {s.summary.get("floe.upsert-mode") for s in tbl.metadata.snapshots
                     if s.summary.get("floe.pipeline-id") == "ix"}
            assert modes == {"index"}, modes
        # the index files are metadata, never data or delete files
        listed = {d["file_path"] for d in tbl.inspect.files().to_pylist()}
        assert not any("floe-key-index" in p for p in listed)


def test_tampered_index_or_foreign_append_rebuilds(floe, tmp_path):
    """v2: a byte of the persisted index flipped makes the next run rebuild
    (the log names why); a PyIceberg append of colliding keys between runs
    makes the next one rebuild too, and both rows of each such key are
    deleted by its next change."""
    con = duckdb_connection()
    name, src = "db.ptamper", tmp_path / "in"
    src.mkdir()
    rng = random.Random(6262)
    model = Model(["id", "region"])
    pending = []
    for rnd in range(4):
        lines = [json.dumps({"op": "+U", "id": k[0], "region": k[1], "name": "fix", "v": 2})
                 for k in pending]
        for k in pending:
            model.apply("+U", {"id": k[0], "region": k[1], "name": "fix", "v": 2})
        pending = []
        lines += random_round(rng, model, 500, 150)
        err = run_round(floe, name, src, rnd, lines, "id, region", "2")
        tbl, _ = cheap_check(floe, con, name, model.values(), f"round {rnd}")
        assert eq_delete_files(tbl) == []
        if rnd in (1, 2):  # after the tamper (1) and the foreign append (2): rebuilt
            assert BUILT in err and LOADED not in err, err
        if rnd == 1:
            assert "is not used" in err, err
        if rnd == 3:
            assert LOADED in err, err
        if rnd == 0:
            p = Path(index_files(tbl)[-1].removeprefix("file://"))
            b = bytearray(p.read_bytes())
            b[len(b) // 3] ^= 0x40
            p.write_bytes(bytes(b))
        if rnd == 1:
            pending = colliding_append(floe, name, model, rng, 2, tmp_path)


def test_expiry_and_orphan_cleanup_keep_the_named_index(floe, tmp_path):
    """Snapshot expiry deletes the index files only expired snapshots named;
    orphan cleanup keeps the one a retained snapshot names (it is reachable,
    though no manifest lists it); the next run loads it."""
    import os
    import time
    con = duckdb_connection()
    name, src = "db.pexp", tmp_path / "in"
    src.mkdir()
    rng = random.Random(777)
    model = Model(["id"])
    for rnd in range(3):
        run_round(floe, name, src, rnd, random_round(rng, model, 300, 100), "id", "3",
                  extra=["--property", "write.upsert.index.persist-interval=1"] if rnd else ())
    tbl, _ = cheap_check(floe, con, name, model.values(), "before maintenance")
    named = [Path(p.removeprefix("file://")) for p in index_files(tbl)]
    assert len(named) >= 2 and all(p.exists() for p in named)
    current = tbl.current_snapshot().summary.get("floe.key-index")
    assert current, "the last commit names the index"
    old = time.time() - 5 * 86400
    for p in (floe.warehouse / "db" / "pexp").rglob("*"):
        if p.is_file():
            os.utime(p, (old, old))
    floe.run("maintain", name, "--steps", "expire,orphans", "--older-than", "0s",
             "--retain-last", "1", "--quiet")
    cur = Path(current.removeprefix("file://"))
    assert cur.exists()
    assert not [p for p in named if p != cur and p.exists()], "expired snapshots' index files stay"
    err = run_round(floe, name, src, 3, random_round(rng, model, 300, 100), "id", "3")
    assert LOADED in err and BUILT not in err, err
    cheap_check(floe, con, name, model.values(), "after maintenance")



def test_running_pipeline_refreshes_after_floe_compaction(floe, tmp_path):
    """A following index-mode ingest, idle between files while `floe maintain`
    compacts the table: the next checkpoint sees the compaction's commit and
    commits its equality deletes instead of DVs (floe.upsert-mode
    index-fallback); the index is then refreshed — only the compaction's
    files read — not rebuilt, and the checkpoint after commits DVs again. The
    table equals the model."""
    import signal
    import subprocess
    import time
    con = duckdb_connection()
    name, src = "db.prun", tmp_path / "in"
    src.mkdir()
    rng = random.Random(9191)
    model = Model(["id"])
    run_round(floe, name, src, 0, random_round(rng, model, 400, 150), "id", "3")

    def ours():
        t = floe.pyiceberg_catalog().load_table(name)
        return t, [s for s in t.metadata.snapshots if s.summary.get("floe.pipeline-id") == "ix"]

    def wait_commit(n_before):
        deadline = time.time() + 120
        while time.time() < deadline:
            t, snaps = ours()
            if len(snaps) > n_before:
                return t, snaps
            assert proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.2)
        raise AssertionError("no commit: " + log.read_text()[-3000:])

    log = tmp_path / "follow.log"
    cmd = [floe.bin, "--dir", str(floe.root), "-v", "ingest", name, str(src), "--follow",
           "--upsert", "--equality-fields", "id", "--rowkind-field", "op",
           "--pipeline-id", "ix", "--parallelism", "2", "--checkpoint-interval", "200ms"]
    with log.open("w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    try:
        _, snaps = ours()
        for rnd in (1, 2, 3):
            if rnd == 2:
                floe.run("maintain", name, "--steps", "compact", "--quiet")
                t, _ = ours()
                assert t.current_snapshot().summary.operation.value == "replace"
            lines = random_round(rng, model, 300, 150)
            (src / f"r{rnd:02d}.jsonl").write_text("\n".join(lines) + "\n")
            _, snaps = wait_commit(len(snaps))
            time.sleep(0.5)  # the checkpoint's last commit (one file may take two)
            _, snaps = ours()
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=120)
    err = log.read_text()
    assert rc == 0, err[-3000:]
    tbl, _ = cheap_check(floe, con, name, model.values(), "after the follow run")
    modes = [s.summary.get("floe.upsert-mode") for s in tbl.metadata.snapshots
             if s.summary.get("floe.pipeline-id") == "ix"]
    assert "index-fallback" in modes and modes[-1] == "index", modes
    refreshed = [l for l in err.splitlines() if "key index refreshed to snapshot" in l]
    assert refreshed and " 0 new data file(s) read" not in refreshed[0], err[-3000:]
    assert err.count(BUILT) == 0, err[-3000:]  # loaded at start, refreshed after


def test_atomic_commit_pipeline_index_mode(floe, tmp_path):
    """pipeline.atomic-commit with an index-mode upsert table and an append
    table from one followed folder: each checkpoint commits both tables in one
    transaction, the index table with DVs and no equality delete file; after
    `floe maintain` compacts the index table between checkpoints the next
    transaction carries its equality deletes instead (floe.upsert-mode
    index-fallback), the one after DVs again. Both tables equal the model."""
    import signal
    import subprocess
    import time
    con = duckdb_connection()
    name, src = "db.pat", tmp_path / "in"
    src.mkdir()
    rng = random.Random(4242)
    model = Model(["id"])
    run_round(floe, name, src, 0, random_round(rng, model, 300, 120), "id", "3")
    appended = sum(1 for l in (src / "r00.jsonl").read_text().splitlines() if l.strip())
    (src / "r00.jsonl").unlink()  # the pipeline reads only the rounds after it
    cfg = tmp_path / "p.yaml"
    cfg.write_text(f"""pipeline.name: atx
pipeline.atomic-commit: true
execution.checkpointing.interval: 200ms
parallelism.default: 2
sources:
  - name: ch
    type: files
    path: {src}
    pattern: "*.jsonl"
    follow: true
    format: json
    rowkind.field: op
tables:
  - name: {name}
    source: ch
    upsert-enabled: true
    equality-field-columns: id
    distribution-mode: hash
  - name: db.pat_eq
    source: ch
    schema: "id long not null, region string not null, name string, v long"
    upsert-enabled: true
    equality-field-columns: id
    distribution-mode: hash
""")

    def ours(t_name=name):
        from pyiceberg.exceptions import NoSuchTableError
        try:
            t = floe.pyiceberg_catalog().load_table(t_name)
        except NoSuchTableError:  # the pipeline creates it as it starts
            return None, []
        return t, [s for s in t.metadata.snapshots if s.summary.get("floe.pipeline-id") == "atx"]

    log = tmp_path / "atx.log"
    with log.open("w") as err:
        proc = subprocess.Popen([floe.bin, "--dir", str(floe.root), "-v", "run", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=err)
    eq_model = Model(["id"])
    try:
        n_snaps = n_eq = 0
        for rnd in (1, 2, 3):
            if rnd == 2:
                floe.run("maintain", name, "--steps", "compact", "--quiet")
            lines = random_round(rng, model, 200, 120)
            for l in lines:
                d = json.loads(l)
                eq_model.apply(d.pop("op"), d)
            (src / f"r{rnd:02d}.jsonl").write_text("\n".join(lines) + "\n")
            deadline = time.time() + 120
            while len(ours()[1]) <= n_snaps or len(ours("db.pat_eq")[1]) <= n_eq:
                assert proc.poll() is None, log.read_text()[-3000:]
                assert time.time() < deadline, "no commit: " + log.read_text()[-3000:]
                time.sleep(0.2)
            time.sleep(0.5)
            n_snaps, n_eq = len(ours()[1]), len(ours("db.pat_eq")[1])
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=120)
    err = log.read_text()
    assert rc == 0, err[-3000:]
    assert "in one transaction" in err, err[-3000:]
    tbl, _ = cheap_check(floe, con, name, model.values(), "after the atomic-commit run")
    snaps = ours()[1]
    modes = [s.summary.get("floe.upsert-mode") for s in snaps]
    assert "index-fallback" in modes and modes[-1] == "index", modes
    assert all(s.summary.get("floe.atomic-commit") == "true" for s in snaps)
    # no equality delete file in a DV commit; the fallback's are the only ones
    for s in snaps:
        if s.summary.get("floe.upsert-mode") == "index":
            assert int(s.summary.get("added-equality-delete-files") or 0) == 0, s.summary
    # the equality-mode table: the rounds' changes, in the same transactions
    cheap_check(floe, con, "db.pat_eq", eq_model.values(), "db.pat_eq")
    ck = {s.summary["floe.checkpoint-id"] for s in snaps}
    assert ck == {s.summary["floe.checkpoint-id"] for s in ours("db.pat_eq")[1]}
    assert appended > 0
