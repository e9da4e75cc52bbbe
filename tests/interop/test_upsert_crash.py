"""Exactly-once upserts under crashes: `floe ingest --upsert` of a change
stream (inserts, updates, deletes of a composite key in 3 partitions, keys
repeated within and across checkpoints, null non-key values) is SIGKILLed at
random moments — at least 20 times, several of them while a checkpoint is
being committed (the -v log says which phase a kill hit) — and restarted
each time until a run goes to the end. The stream arrives in waves of files
(a new wave when a run finished before enough kills), so the test needs no
assumption about the machine's speed. The table then equals the model of
the whole stream as floe, DuckDB and Java read it: no change lost, none
applied twice (an update applied twice leaves a duplicate row, a lost delete
a row too many); every checkpoint is committed once, in order, and the
snapshots' totals add up.
"""
import json
import random
import signal
import subprocess
import time

from conftest import duckdb_connection
from test_upsert_interop import Model, norm

WAVE = 20_000  # changes per wave (2 files)
MAX_WAVES = 8
KEYS = 3_000
MIN_KILLS = 20
MIN_COMMIT_KILLS = 4
REGIONS = ["eu", "us", "ap"]
COLS = ["id", "region", "name", "v"]


def write_wave(folder, w, rng, model):
    per = WAVE // 2
    for k in range(2):
        with (folder / f"w{w:02d}-{k}.jsonl").open("w") as f:
            for _ in range(per):
                i = rng.randrange(KEYS)
                reg = REGIONS[i % 3]
                x = rng.random()
                if x < 0.78:
                    row = {"id": i, "region": reg,
                           "name": None if x < 0.06 else f"n{rng.randrange(99)}",
                           "v": None if rng.random() < 0.05 else rng.randrange(10_000)}
                    op = rng.choice(["+U", "+U", "+I", "update"])
                elif x < 0.82:
                    row, op = {"id": i, "region": reg}, "-U"  # ignored in upsert mode
                else:
                    row, op = {"id": i, "region": reg}, rng.choice(["-D", "delete"])
                model.apply(op, row)
                f.write(json.dumps({"op": op, **row}) + "\n")


def num(summary, key):
    return int(summary.get(key) or 0)


def kill_point(proc, log, rng, at_commit):
    """Wait for a random moment of the run (or of one of its commits), then
    SIGKILL it. Returns False when the run ended by itself first."""
    after = rng.choice([0, 1, 1, 2, 3])
    pause = rng.uniform(0, 0.012) if at_commit else rng.uniform(0, 0.08)
    mark = "committing" if at_commit else "committed as"
    deadline = time.time() + 60
    while proc.poll() is None and time.time() < deadline:
        if log.read_text().count(mark) > after - (0 if at_commit else 1):
            time.sleep(pause)
            break
        time.sleep(0.002)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def test_sigkill_during_upsert_ingest_loses_and_repeats_nothing(floe, tmp_path, java_peer):
    src = tmp_path / "in"
    src.mkdir()
    rng = random.Random(20261202)
    model = Model(["id", "region"])
    waves = 1
    write_wave(src, 0, rng, model)
    cmd = [floe.bin, "--dir", str(floe.root), "-v", "ingest", "db.up", str(src),
           "--create-schema", "id long not null, region string not null, name string, v long",
           "--partition-by", "region", "--format-version", "2", "--upsert",
           "--equality-fields", "id,region", "--rowkind-field", "op", "--parallelism", "2",
           "--checkpoint-interval", "50ms", "--block-size", "8KiB", "--quiet"]
    kills = commit_kills = runs = 0
    while True:
        runs += 1
        assert runs < 200
        log = tmp_path / f"run-{runs}.log"
        enough = kills >= MIN_KILLS and commit_kills >= MIN_COMMIT_KILLS
        at_commit = commit_kills < MIN_COMMIT_KILLS and rng.random() < 0.4
        with log.open("w") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        if enough:
            assert proc.wait(timeout=600) == 0, log.read_text()[-3000:]
            break
        if kill_point(proc, log, rng, at_commit):
            kills += 1
            phases = [l for l in log.read_text().splitlines() if "checkpoint" in l]
            commit_kills += bool(phases) and "committing" in phases[-1]
            continue
        assert proc.returncode == 0, log.read_text()[-3000:]
        # the run got to the end first: more of the stream
        assert waves < MAX_WAVES, (kills, commit_kills)
        write_wave(src, waves, rng, model)
        waves += 1

    want = norm(model.values(), COLS)
    got = norm(floe.json_rows("scan", "db.up"), COLS)
    assert len(got) == len(want), f"{len(got)} rows, want {len(want)} after {kills} kills"
    assert got == want
    tbl = floe.pyiceberg_catalog().load_table("db.up")
    con = duckdb_connection()
    duck = norm((dict(zip(COLS, r)) for r in con.execute(
        f"SELECT id, region, name, v FROM iceberg_scan('{tbl.metadata_location}')").fetchall()), COLS)
    assert duck == want
    out = java_peer("scan", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "db.up")
    assert norm((json.loads(l) for l in out.splitlines() if l.strip()), COLS) == want

    # every checkpoint committed once and in order; the totals add up
    snaps = tbl.metadata.snapshots
    ckpts = [int(s.summary["floe.checkpoint-id"]) for s in snaps]
    assert ckpts == sorted(set(ckpts)), ckpts
    records = deletes = 0
    for s in snaps:
        summ = s.summary
        assert summ.operation.value in ("overwrite", "append", "delete")
        records += num(summ, "added-records") - num(summ, "deleted-records")
        deletes += num(summ, "added-delete-files") - num(summ, "removed-delete-files")
        assert int(summ["total-records"]) == records
        assert int(summ["total-delete-files"]) == deletes
    offsets = json.loads(tbl.current_snapshot().summary["floe.source-offsets"])
    assert {k.rsplit("/", 1)[-1]: v for k, v in offsets.items()} == {
        p.name: p.stat().st_size for p in src.iterdir()}
    print(f"{kills} kills ({commit_kills} during commits), {runs} runs, {waves} waves, "
          f"{len(snaps)} snapshots")
