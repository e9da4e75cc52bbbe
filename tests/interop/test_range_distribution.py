"""RANGE distribution (issue 16 item 4): on a stream where one partition has
80% of the records and 20 others share the rest, with 4 writer tasks, every
task gets 15-35% of the rows after the first checkpoint, files per checkpoint
stay within HASH's + (tasks - 1) (the heavy partition is split over the
tasks: see docs/configuration.md), and PyIceberg reads every row back."""

import json
import re
import signal
import subprocess
import time
import urllib.request
from collections import defaultdict

from test_ingest_interop import files, free_port, load


def write_skewed(path, n):
    with path.open("w") as f:
        for i in range(n):
            part = "hot" if i % 5 != 0 else f"p{(i // 5) % 20:02d}"
            f.write(json.dumps({"id": i, "part": part, "pad": "x" * 40}) + "\n")


ARGS = ["--create-schema", "id long not null, part string, pad string", "--partition-by", "part",
        "--parallelism", "4", "--checkpoint-interval", "15ms", "--block-size", "16KiB", "--quiet"]


def ingest(floe, ident, data, mode):
    floe.run("ingest", ident, data, "--distribution", mode, *ARGS)


def ingest_with_metrics(floe, ident, src, n):
    """--follow with a metrics port: the per-task load once every row is in"""
    port = free_port()
    cmd = [floe.bin, "--dir", str(floe.root), "ingest", ident, str(src), "--follow",
           "--distribution", "range", "--metrics-port", str(port), *ARGS]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    load_ = {}
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = r.read().decode()
                load_ = {int(t): int(v) for t, v in re.findall(
                    r'floe_writer_records_total\{[^}]*task="(\d+)"\} (\d+)\n', text)}
                done = re.search(r'floe_committed_data_files_records_total\{[^}]*\} (\d+)\n', text)
                if done and int(done.group(1)) == n:
                    break
            except OSError:
                pass
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return load_


def per_checkpoint(floe, ident):
    """snapshot id -> (files, rows per task), in commit order"""
    out = defaultdict(lambda: [0, defaultdict(int)])
    for f in files(floe, ident):
        s = out[f["snapshot_id"]]
        s[0] += 1
        # data files are named as Java names them: <subtask>-<attempt>-<op>-<n>
        name = f["file_path"].rsplit("/", 1)[-1]
        m = re.match(r"^(\d+)-\d+-", name)
        assert m, name
        s[1][int(m.group(1))] += f["record_count"]
    snaps = [s["snapshot_id"] for s in floe.json_rows("snapshots", ident)]
    return [out[s] for s in snaps if s in out]


def test_range_spreads_a_hot_partition(floe, tmp_path):
    (tmp_path / "in").mkdir()
    data = tmp_path / "in" / "skew.jsonl"
    n = 12000
    write_skewed(data, n)
    metric = ingest_with_metrics(floe, "db.rng", tmp_path / "in", n)
    # floe_writer_records_total{task}: every row counted once, every task loaded
    assert sorted(metric) == [0, 1, 2, 3] and sum(metric.values()) == n, metric
    assert min(metric.values()) > 0.1 * n, metric
    ingest(floe, "db.hsh", data, "hash")
    rng, hsh = per_checkpoint(floe, "db.rng"), per_checkpoint(floe, "db.hsh")
    assert len(rng) >= 3
    # after the first checkpoint: every task 15-35% of the rows
    later = defaultdict(int)
    for _, tasks in rng[1:]:
        for t, r in tasks.items():
            later[t] += r
    total = sum(later.values())
    assert total > 0
    shares = {t: later[t] / total for t in range(4)}
    assert all(0.15 <= s <= 0.35 for s in shares.values()), shares
    # files: HASH writes one per partition and checkpoint; RANGE at most
    # tasks - 1 more (the split boundaries)
    worst_hash = max(f for f, _ in hsh)
    assert max(f for f, _ in rng[1:]) <= worst_hash + 3
    # hash, for contrast, puts the hot partition on one task
    hl = defaultdict(int)
    for _, tasks in hsh[1:]:
        for t, r in tasks.items():
            hl[t] += r
    assert max(hl.values()) / sum(hl.values()) > 0.5
    for ident in ("db.rng", "db.hsh"):
        t = load(floe, ident).scan().to_arrow()
        assert t.num_rows == n
        assert sorted(t.column("id").to_pylist()) == list(range(n))
