"""Exactly-once upserts in index mode under crashes: the change stream of
test_upsert_crash.py (smaller waves) goes through `floe ingest --upsert` into a
v3 table with write.upsert.mode=index, SIGKILLed at random moments at least
20 times (some during commits) and restarted until a run ends; a restart
loads the key index persisted every other commit (a kill while it was being
written leaves a file no snapshot names) or rebuilds it from the table. The table then equals the
model as floe, DuckDB and Java read it, and holds no equality delete file
(every checkpoint committed the index's deletion vectors).
"""
import json
import random
import subprocess

from conftest import duckdb_connection
from test_upsert_crash import kill_point, COLS
from test_upsert_interop import Model, norm

KEYS = 800
WAVE = 2_000
MIN_KILLS = 20
MIN_COMMIT_KILLS = 3
REGIONS = ["eu", "us", "ap"]


def write_wave(folder, w, rng, model):
    with (folder / f"w{w:02d}.jsonl").open("w") as f:
        for _ in range(WAVE):
            i = rng.randrange(KEYS)
            reg = REGIONS[i % 3]
            if rng.random() < 0.8:
                row = {"id": i, "region": reg, "name": f"n{rng.randrange(99)}",
                       "v": rng.randrange(10_000)}
                op = rng.choice(["+U", "+I"])
            else:
                row, op = {"id": i, "region": reg}, "-D"
            model.apply(op, row)
            f.write(json.dumps({"op": op, **row}) + "\n")


def test_sigkill_during_index_mode_ingest(floe, tmp_path, java_peer):
    src = tmp_path / "in"
    src.mkdir()
    rng = random.Random(1212)
    model = Model(["id", "region"])
    waves = 1
    write_wave(src, 0, rng, model)
    cmd = [floe.bin, "--dir", str(floe.root), "-v", "ingest", "db.ixc", str(src),
           "--create-schema", "id long not null, region string not null, name string, v long",
           "--partition-by", "region", "--format-version", "3", "--upsert",
           "--equality-fields", "id,region", "--rowkind-field", "op", "--parallelism", "2",
           "--property", "write.upsert.mode=index",
           "--property", "write.upsert.index.persist-interval=2",
           "--checkpoint-interval", "20ms", "--block-size", "4KiB", "--quiet"]
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
        assert waves < 60, (kills, commit_kills)
        write_wave(src, waves, rng, model)
        waves += 1
    loads = sum("key index loaded from" in (tmp_path / f"run-{r}.log").read_text()
                for r in range(1, runs + 1))
    assert loads >= 1, "no restart loaded the persisted key index"
    want = norm(model.values(), COLS)
    got = norm(floe.json_rows("scan", "db.ixc"), COLS)
    assert got == want, f"{len(got)} rows, want {len(want)} after {kills} kills"
    tbl = floe.pyiceberg_catalog().load_table("db.ixc")
    con = duckdb_connection()
    duck = norm((dict(zip(COLS, r)) for r in con.execute(
        f"SELECT id, region, name, v FROM iceberg_scan('{tbl.metadata_location}')").fetchall()),
        COLS)
    assert duck == want
    out = java_peer("scan", floe.warehouse / "catalog.db", f"file://{floe.warehouse}", "db.ixc")
    assert norm((json.loads(l) for l in out.splitlines() if l.strip()), COLS) == want
    deletes = tbl.inspect.delete_files().to_pylist()
    assert not [d for d in deletes if d["content"] == 2]
    modes = {s.summary.get("floe.upsert-mode") for s in tbl.metadata.snapshots}
    assert modes == {"index"}, modes
    print(f"{kills} kills ({commit_kills} during commits), {runs} runs, {waves} waves")
