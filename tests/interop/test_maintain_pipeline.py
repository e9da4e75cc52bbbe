"""Maintenance beside a streaming pipeline, checked by PyIceberg.

- Embedded maintenance: the same two-minute pipeline (1 s checkpoints, four
  partitions, a small target file size) runs with `maintenance.mode: auto`
  and without it, side by side; afterwards PyIceberg reads exactly the rows
  each ingested, and only the maintained table has its live data files near
  the target (at most twice the ideal count per partition).
- `floe maintain` compacting while `floe ingest --follow` keeps appending to
  the same table loses no row and duplicates none.
"""
import collections
import json
import math
import re
import signal
import subprocess
import threading
import time
import urllib.request

from test_ingest_interop import free_port

ROWS_PER_SECOND = 4000
SECONDS = 120
TARGET = 256 * 1024
REGIONS = ["eu", "us", "ap", "sa"]


def pipeline_yaml(floe, table, maintained, port):
    maint = ""
    if maintained:
        # Flink TableMaintenance-like triggers: every 10 commits, at most one
        # run per 5 s; the final run happens when the input ends
        maint = """
    maintenance:
      mode: auto
      schedule.commit-count: 10
      rate-limit: 5s
      compact.min-input-files: 2
"""
    return f"""
pipeline.name: two-minutes-{table}
execution.checkpointing.interval: 1s
parallelism.default: 2
metrics.port: {port}
sources:
  - name: gen
    type: generator
    rows-per-second: {ROWS_PER_SECOND}
    number-of-rows: {ROWS_PER_SECOND * SECONDS}
    fields.id.kind: sequence
    fields.region.values: {",".join(REGIONS)}
    fields.payload.length: 24
tables:
  - name: db.{table}
    schema: "id long not null, ts timestamptz, region string, payload string, amount double"
    partition-by: region
    properties:
      write.target-file-size-bytes: "{TARGET}"
{maint}"""


def live_data_files(floe, table):
    return [r for r in floe.json_rows("files", f"db.{table}") if r["content"] == 0]


def per_partition(files):
    count, size = collections.Counter(), collections.Counter()
    for f in files:
        key = json.dumps(f["partition"], sort_keys=True)
        count[key] += 1
        size[key] += f["file_size_in_bytes"]
    return count, size


def test_embedded_maintenance_keeps_files_near_target(floe, tmp_path):
    floe.run("namespace", "create", "db")
    procs, ports = {}, {}
    for table, maintained in (("kept", True), ("raw", False)):
        ports[table] = free_port()
        cfg = tmp_path / f"{table}.yaml"
        cfg.write_text(pipeline_yaml(floe, table, maintained, ports[table]))
        procs[table] = subprocess.Popen([floe.bin, "--dir", str(floe.root), "run", str(cfg)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # while both run: maintenance metrics are served and the maintained
    # table's commits keep going while it is compacted
    runs_seen = 0
    deadline = time.time() + SECONDS + 300
    while procs["kept"].poll() is None and time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ports['kept']}/metrics", timeout=5) as r:
                m = re.search(r'floe_maintenance_runs_total\{[^}]*\} (\d+)', r.read().decode())
                if m:
                    runs_seen = max(runs_seen, int(m.group(1)))
        except OSError:
            pass
        time.sleep(2)
    outs = {}
    for table, p in procs.items():
        out, err = p.communicate(timeout=max(10, deadline - time.time()))
        assert p.returncode == 0, err
        outs[table] = err
    assert runs_seen >= 2, "maintenance did not run while the pipeline ran"
    assert re.search(r"maintenance runs? compacted", outs["kept"]), outs["kept"]

    total = ROWS_PER_SECOND * SECONDS
    cat = floe.pyiceberg_catalog()
    for table in ("kept", "raw"):
        ids = cat.load_table(f"db.{table}").scan(selected_fields=("id",)).to_arrow()
        ids = ids.column("id").to_pylist()
        assert len(ids) == total, table
        assert len(set(ids)) == total, f"{table}: duplicated rows"
        assert min(ids) == 0 and max(ids) == total - 1, table

    for table, maintained in (("kept", True), ("raw", False)):
        count, size = per_partition(live_data_files(floe, table))
        assert len(count) == len(REGIONS)
        for key in count:
            ideal = max(1, math.ceil(size[key] / TARGET))
            if maintained:
                assert count[key] <= 2 * ideal, (table, key, count[key], ideal)
            else:
                assert count[key] > 2 * ideal, (table, key, count[key], ideal)
    # the pipeline's offsets survived every compaction: a restart resumes
    # at the end and adds nothing
    cfg = tmp_path / "kept.yaml"
    p = floe.run("run", str(cfg))
    assert p.returncode == 0
    ids = cat.load_table("db.kept").scan(selected_fields=("id",)).to_arrow()
    assert ids.num_rows == total


def test_compaction_while_ingest_follow_appends(floe, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    cmd = [floe.bin, "--dir", str(floe.root), "ingest", "db.live", str(src), "--follow",
           "--create-schema", "id long not null, region string, v double",
           "--partition-by", "region", "--checkpoint-interval", "300ms", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    written = []
    stop = threading.Event()

    def feeder():
        start, n = 0, 0
        while not stop.is_set():
            path = src / f"part-{n:05d}.jsonl"
            tmp = src / f".part-{n:05d}.tmp"
            tmp.write_text("".join(json.dumps({"id": i, "region": REGIONS[i % 4], "v": i / 3})
                                   + "\n" for i in range(start, start + 500)))
            tmp.rename(path)  # hidden name while written: the source skips it
            written.append((start, 500))
            start, n = start + 500, n + 1
            time.sleep(0.2)

    th = threading.Thread(target=feeder)
    th.start()
    commits = 0
    try:
        time.sleep(3)
        for _ in range(6):
            p = floe.run("maintain", "db.live", "--steps", "compact", "--format", "json",
                         "--target-file-size", "1MB", "--min-input-files", "2", check=False)
            assert p.returncode == 0, p.stderr
            commits += json.loads(p.stdout)["compact"]["commits"]
            time.sleep(0.5)
    finally:
        stop.set()
        th.join()
    expected = sorted(i for s, n in written for i in range(s, s + n))
    # let the pipeline commit everything the feeder wrote, then stop it
    cat = floe.pyiceberg_catalog()
    deadline = time.time() + 60
    while time.time() < deadline:
        if cat.load_table("db.live").scan(selected_fields=("id",)).to_arrow().num_rows >= len(expected):
            break
        time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert commits >= 3, "compaction never overlapped the pipeline"
    ids = cat.load_table("db.live").scan(selected_fields=("id",)).to_arrow().column("id")
    assert sorted(ids.to_pylist()) == expected


def test_restarted_pipeline_still_compacts(floe, tmp_path):
    """Embedded maintenance counts the commits since the table was last
    maintained from the table's history, not per process: a pipeline that is
    restarted every 2 checkpoints with schedule.commit-count=3 compacts (it
    never did: each process saw 2 commits)."""
    floe.run("namespace", "create", "db")
    src = tmp_path / "in"
    src.mkdir()
    cmd = [floe.bin, "--dir", str(floe.root), "ingest", "db.r", str(src), "--follow",
           "--create-schema", "id long not null", "--pipeline-id", "restarted",
           "--checkpoint-interval", "300ms", "--parallelism", "1", "--quiet",
           "--maintenance", "auto",
           "--maintenance-option", "schedule.commit-count=3",
           "--maintenance-option", "schedule.interval=0s",
           "--maintenance-option", "rate-limit=0s",
           "--maintenance-option", "steps=compact",
           "--maintenance-option", "compact.min-input-files=2"]
    n_files = 0

    def snapshots():
        tbl = floe.pyiceberg_catalog().load_table("db.r")
        return tbl.metadata.snapshots

    def feed_and_wait(proc):
        nonlocal n_files
        before = len(snapshots())
        tmp = src / f".f{n_files}.tmp"
        tmp.write_text("".join(json.dumps({"id": n_files * 100 + i}) + "\n" for i in range(100)))
        tmp.rename(src / f"f{n_files:03d}.jsonl")
        n_files += 1
        deadline = time.time() + 60
        while time.time() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            if len([s for s in snapshots() if s.summary.operation.value == "append"]) >= n_files:
                return
            time.sleep(0.1)
        raise AssertionError(f"no commit for file {n_files} ({before} snapshots)")

    def compacted():
        return [s for s in snapshots() if s.summary.operation.value == "replace"]

    # the table exists before the first run: the test reads its history from
    # the start (it raced the first run's creation of the table)
    floe.run("table", "create", "db.r", "--schema", "id long not null")
    for run in range(4):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            feed_and_wait(proc)
            feed_and_wait(proc)
            # maintenance is a thread of its own: give a due run time to commit
            deadline = time.time() + (30 if run >= 1 else 2)
            while time.time() < deadline and not compacted():
                time.sleep(0.2)
        except BaseException:
            proc.kill()  # the test's own failure, not a stop's
            proc.wait(timeout=120)
            raise
        proc.send_signal(signal.SIGTERM)  # a stop: no final maintenance run
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
        if compacted():
            break
    done = compacted()
    assert done, "a pipeline restarted every 2 checkpoints never compacted"
    assert done[0].summary.additional_properties.get("floe.maintenance") == "compact"
    assert run <= 2  # the second run's first commit is the third since the start
    tbl = floe.pyiceberg_catalog().load_table("db.r")
    ids = tbl.scan().to_arrow().column("id").to_pylist()
    assert sorted(ids) == sorted(f * 100 + i for f in range(n_files) for i in range(100))
