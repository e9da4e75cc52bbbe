#!/usr/bin/env python3
"""`floe plan` against a real run (issue 17): one generator pipeline runs for
MINUTES (5 by default) into three tables that exercise the partition model
differently, then the table's snapshots are compared with what `floe plan`
predicted for the same pipeline file:

  hash_region   distribution hash, identity(region) over P region values
  none_region   distribution none, identity(region): every writer writes
                every partition it sees
  none_bucket   distribution none, bucket(16, id)

At the default rate (20 records/s, 10 s checkpoints, 200 regions) a
checkpoint holds 200 records, so most but not all partitions get a record:
the files per checkpoint test the model's partition arithmetic, not a
product. Measured: added-data-files per snapshot (the last, partial
checkpoint of the bounded source left out), snapshots and files per day
from the snapshot timestamps.

usage: bench/plan/run.py [--minutes 5] [--rate 20] [--interval 10]
                         [--partitions 200] [--writers 2] [--floe build/release/floe]
Prints one Markdown table (bench/RESULTS.md, "floe plan vs a real run") and
exits 1 if a files-per-checkpoint prediction is off by more than 10%.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PIPELINE = """
pipeline: {{name: plan-bench}}
execution.checkpointing.interval: {interval}s
parallelism.default: {writers}
sources:
  - name: gen
    type: generator
    rows-per-second: {rate}
    number-of-rows: {rows}
    fields.region.values: "{regions}"
tables:
  - name: db.hash_region
    source: gen
    schema: "id long not null, region string, v double"
    partition-by: "region"
    distribution-mode: hash
  - name: db.none_region
    source: gen
    schema: "id long not null, region string, v double"
    partition-by: "region"
    distribution-mode: none
  - name: db.none_bucket
    source: gen
    schema: "id long not null, region string, v double"
    partition-by: "bucket(16, id)"
    distribution-mode: none
"""


def floe_bin(arg):
    if arg:
        return arg
    for preset in ("release", "asan"):
        p = ROOT / "build" / preset / "floe"
        if p.exists():
            return str(p)
    sys.exit("bench/plan: build floe first (cmake --build --preset release --target floe)")


def plan(floe, path, *args):
    p = subprocess.run([floe, "plan", str(path), "--format", "json", *args], capture_output=True, text=True)
    if p.returncode not in (0, 1, 2):
        sys.exit(f"floe plan failed:\n{p.stderr}")
    return {t["table"]: t for t in json.loads(p.stdout)["tables"]}


def snapshots(floe, root, table):
    p = subprocess.run([floe, "--dir", str(root), "snapshots", table, "--format", "json"],
                       capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    return sorted(rows, key=lambda r: r["committed_at"] if "committed_at" in r else r["timestamp_ms"])


def ts_ms(row):
    v = row.get("committed_at", row.get("timestamp_ms"))
    if isinstance(v, (int, float)):
        return float(v)
    from datetime import datetime

    return datetime.fromisoformat(str(v).replace("Z", "+00:00")).timestamp() * 1000


def pct(measured, predicted):
    return 100.0 * (measured - predicted) / predicted if predicted else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=5)
    ap.add_argument("--rate", type=int, default=20)
    ap.add_argument("--interval", type=int, default=10)
    ap.add_argument("--partitions", type=int, default=200)
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--floe")
    ap.add_argument("--keep", help="run in this folder and keep it")
    a = ap.parse_args()
    floe = floe_bin(a.floe)
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="floe-plan-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = int(a.rate * a.minutes * 60)
    regions = ",".join(f"r{i}" for i in range(a.partitions))
    yaml = work / "pipeline.yaml"
    yaml.write_text(PIPELINE.format(interval=a.interval, writers=a.writers, rate=a.rate, rows=rows,
                                    regions=regions))

    # identity(region) needs --partitions; bucket(16, id) has its count in the spec
    pred = plan(floe, yaml, "--partitions", str(a.partitions))
    pred["db.none_bucket"] = plan(floe, yaml)["db.none_bucket"]

    t0 = time.time()
    run = subprocess.run([floe, "--dir", str(work / "d"), "run", str(yaml)], capture_output=True, text=True)
    wall = time.time() - t0
    if run.returncode:
        sys.exit(f"floe run failed ({run.returncode}):\n{run.stderr}")

    print(f"floe plan vs a real run: {a.minutes:g} min, {a.rate} records/s ({rows} records), "
          f"{a.interval} s checkpoints, {a.writers} writers, {a.partitions} regions; run wall {wall:.0f} s; "
          f"{floe}\n")
    print("| table | distribution, partitions | checkpoints (full) | records per checkpoint | "
          "files per checkpoint: predicted / measured (error) | files per day: predicted / measured | "
          "snapshots per day: predicted / measured |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    out = {}
    for name in ("db.hash_region", "db.none_region", "db.none_bucket"):
        snaps = snapshots(floe, work / "d", name)
        files = [int(s["summary"]["added-data-files"]) for s in snaps]
        recs = [int(s["summary"]["added-records"]) for s in snaps]
        full = files[:-1]  # the last checkpoint of a bounded source is a partial one
        times = [ts_ms(s) for s in snaps[:-1]]
        span_s = (times[-1] - times[0]) / 1000.0 if len(times) > 1 else float("nan")
        m_fpc = statistics.mean(full)
        m_snap_day = (len(times) - 1) / span_s * 86400 if span_s > 0 else float("nan")
        m_files_day = sum(full[1:]) / span_s * 86400 if span_s > 0 else float("nan")
        w = pred[name]["without_maintenance"]
        err = pct(m_fpc, w["files_per_commit"])
        worst = max(worst, abs(err))
        out[name] = dict(predicted=w, measured=dict(files_per_commit=m_fpc, files=files, records=recs,
                                                    files_per_day=m_files_day, snapshots_per_day=m_snap_day))
        t = pred[name]
        print(f"| {name} | {t['distribution']}, {t['partitions']} | {len(full)} | "
              f"{statistics.mean(recs[:-1]):.0f} | {w['files_per_commit']:.1f} / {m_fpc:.1f} ({err:+.1f}%) | "
              f"{w['files_per_day']:,.0f} / {m_files_day:,.0f} ({pct(m_files_day, w['files_per_day']):+.1f}%) | "
              f"{w['snapshots_per_day']:,.0f} / {m_snap_day:,.0f} "
              f"({pct(m_snap_day, w['snapshots_per_day']):+.1f}%) |")
    (work / "result.json").write_text(json.dumps(out, indent=1))
    print(f"\nworst files-per-checkpoint error {worst:.1f}% (goal: within 10%); details in {work}/result.json")
    return 0 if worst <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
