"""Exactly-once under crashes: `floe ingest` of a fixed set of 1M JSON records
from files is SIGKILLed at random moments, at least 20 times and until some
kills have landed during a commit (the -v log tells which phase a kill hit),
and restarted each time; the last run goes to the end. PyIceberg then reads
exactly the 1M records (none lost, none twice), DuckDB counts them, and every
snapshot of the table is readable: its files plan, their record counts add up
to the snapshot's total-records, and each file's Parquet footer reads.
"""
import json
import random
import signal
import subprocess
import time

import pyarrow.parquet as pq

from conftest import duckdb_connection

RECORDS = 1_000_000
FILES = 8
MIN_KILLS = 20
MIN_COMMIT_KILLS = 3


def write_input(folder):
    folder.mkdir()
    per = RECORDS // FILES
    kinds = ["view", "click", "buy", "refund"]
    for k in range(FILES):
        with (folder / f"events-{k:02d}.jsonl").open("w") as f:
            for i in range(k * per, (k + 1) * per):
                day = 27 + i % 4
                f.write('{"id":%d,"ts":"2026-11-%02dT%02d:%02d:00Z","kind":"%s","v":%d.5}\n'
                        % (i, day, i % 24, i % 60, kinds[i % 4], i % 1000))


def test_sigkill_at_random_moments_loses_and_duplicates_nothing(floe, tmp_path):
    src = tmp_path / "in"
    write_input(src)
    cmd = [floe.bin, "--dir", str(floe.root), "-v", "ingest", "db.events", str(src),
           "--create-schema", "id long not null, ts timestamptz, kind string, v double",
           "--partition-by", "day(ts)", "--parallelism", "2", "--checkpoint-interval", "30ms",
           "--block-size", "16KiB", "--quiet"]
    rng = random.Random(20261130)
    kills = commit_kills = runs = 0
    finished = False
    while not finished and runs < 300:
        runs += 1
        log = tmp_path / f"run-{runs}.log"
        want_more = kills < MIN_KILLS or commit_kills < MIN_COMMIT_KILLS
        # a kill at a random moment: while files are written (at most a
        # checkpoint or two into the run, so that even a fast build is killed
        # many times before the input ends), or shortly after a commit starts
        at_commit = want_more and rng.random() < 0.35
        after = rng.choice([0, 1, 1, 2])  # checkpoints to let commit first
        with log.open("w") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            try:
                if not want_more:
                    proc.wait(timeout=900)
                else:
                    deadline = time.time() + 20
                    start = time.time()
                    while time.time() < deadline and proc.poll() is None:
                        text = log.read_text()
                        if at_commit and text.count("committing") > after:
                            time.sleep(rng.uniform(0, 0.01))
                            break
                        if not at_commit and text.count("committed as") >= after and (
                                after > 0 or time.time() - start > 0.03):
                            time.sleep(rng.uniform(0, 0.06))
                            break
                        time.sleep(0.002)
                    proc.wait(timeout=0.001)
                finished = proc.returncode == 0
                assert finished, log.read_text()[-2000:]
                continue
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
        kills += 1
        lines = [l for l in log.read_text().splitlines() if "checkpoint" in l]
        if lines and "committing" in lines[-1]:
            commit_kills += 1
    assert finished
    assert kills >= MIN_KILLS and commit_kills >= MIN_COMMIT_KILLS, (kills, commit_kills)

    cat = floe.pyiceberg_catalog()
    tbl = cat.load_table("db.events")
    ids = tbl.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert len(ids) == RECORDS, f"{len(ids)} rows after {kills} kills ({commit_kills} in commits)"
    assert len(set(ids)) == RECORDS and min(ids) == 0 and max(ids) == RECORDS - 1
    con = duckdb_connection()
    assert con.execute(
        f"SELECT count(*), count(DISTINCT id) FROM iceberg_scan('{tbl.metadata_location}')"
    ).fetchone() == (RECORDS, RECORDS)

    # every snapshot is readable
    footers = {}
    snaps = tbl.metadata.snapshots
    assert len(snaps) >= 2
    for snap in snaps:
        tasks = list(tbl.scan(snapshot_id=snap.snapshot_id).plan_files())
        total = sum(t.file.record_count for t in tasks)
        assert total == int(snap.summary["total-records"])
        for t in tasks:
            path = t.file.file_path
            if path not in footers:
                footers[path] = pq.read_metadata(path.removeprefix("file://")).num_rows
            assert footers[path] == t.file.record_count
    # the pipeline's summary keys and the last checkpoint's offsets: every file read to its end
    last = tbl.current_snapshot().summary
    offsets = json.loads(last["floe.source-offsets"])
    assert {k.rsplit("/", 1)[-1]: v for k, v in offsets.items()} == {
        p.name: p.stat().st_size for p in src.iterdir()}
    assert last["flink.job-id"].startswith("ingest-db.events-")
    print(f"{kills} kills ({commit_kills} during commits), {runs} runs, {len(snaps)} snapshots")
