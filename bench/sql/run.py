#!/usr/bin/env python3
"""floe sql INSERT jobs against the same pipeline from YAML: CPU of each.

Usage: bench/sql/run.py [--floe build/release/floe] [--records 400000] [--runs 7]

One JSON-lines input (id, kind, amount, lts, note), a hadoop-catalog table,
checkpoint 10s, parallelism 2. Variants, run interleaved (each round runs
every variant once, each on a fresh warehouse):

  yaml      floe run of the YAML the plain INSERT compiles to (floe -v sql
            prints it): source columns by name, the WHERE as its filter
  sql       floe sql: INSERT INTO t SELECT id, kind, amount, lts FROM src
            WHERE kind = 'buy' OR amount > 500
  renamed   the same columns through the computed-projection path (a
            rename forces it): the projection machinery's own cost
  computed  the same WHERE, computed columns: UPPER(kind), amount * 2 - 1,
            CAST(lts AS DATE), FLOOR(lts TO HOUR), DATE_FORMAT(lts, ...),
            CASE over amount, COALESCE(JSON_VALUE(note, '$.tag'), 'none')

CPU = user + system of the process (getrusage of the children). Prints a Markdown table of
medians and bests. Figures are recorded in bench/RESULTS.md, never asserted.
"""
import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HEAD = ("CREATE CATALOG c WITH ('type'='iceberg', 'catalog-type'='hadoop', 'warehouse'='wh');\n"
        "USE CATALOG c;\nCREATE DATABASE IF NOT EXISTS db;\n"
        "SET 'execution.checkpointing.interval' = '10s';\nSET 'parallelism.default' = '2';\n"
        "CREATE TABLE src (id BIGINT, kind STRING, amount DECIMAL(10, 2), lts TIMESTAMP_LTZ(6), "
        "note STRING) WITH ('connector'='filesystem', 'path'='in', 'format'='json');\n")
WHERE = "kind = 'buy' OR amount > 500"
PLAIN = (HEAD + "CREATE TABLE IF NOT EXISTS db.t (id BIGINT, kind STRING, amount DECIMAL(10, 2), "
         "lts TIMESTAMP_LTZ(6));\n"
         f"INSERT INTO db.t SELECT id, kind, amount, lts FROM src WHERE {WHERE};\n")
RENAMED = (HEAD + "CREATE TABLE IF NOT EXISTS db.t (id BIGINT, k STRING, amount DECIMAL(10, 2), "
           "lts TIMESTAMP_LTZ(6));\n"
           f"INSERT INTO db.t SELECT id, kind AS k, amount, lts FROM src WHERE {WHERE};\n")
COMPUTED = (HEAD + "CREATE TABLE IF NOT EXISTS db.t (id BIGINT, kind STRING, a DECIMAL(12, 2), "
            "d DATE, hr TIMESTAMP_LTZ(6), hour_text STRING, band STRING, tag STRING);\n"
            "INSERT INTO db.t SELECT id, UPPER(kind), amount * 2 - 1, CAST(lts AS DATE), "
            "FLOOR(lts TO HOUR), DATE_FORMAT(lts, 'yyyy-MM-dd HH'), "
            "CASE WHEN amount > 1000 THEN 'large' WHEN amount > 0 THEN 'small' ELSE 'refund' END, "
            "COALESCE(JSON_VALUE(note, '$.tag'), 'none') "
            f"FROM src WHERE {WHERE};\n")


def gen(path, n):
    rnd = random.Random(15)
    kinds = ["click", "buy", "view", "refund", "cart"]
    with open(path, "w") as f:
        for i in range(n):
            cents = rnd.randrange(-20000, 200000)
            note = json.dumps({"tag": rnd.choice(["a", "b", "c"]), "n": i}) if i % 3 else None
            f.write(json.dumps({
                "id": i, "kind": rnd.choice(kinds),
                "amount": f"{cents // 100}.{cents % 100:02d}",
                "lts": f"2024-03-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}Z",
                "note": note}) + "\n")


def cpu_run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{cmd} failed:\n{p.stderr}")
    return p.stdout + p.stderr


def measured(cmd, cwd):
    """CPU seconds of one run (the child's rusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = cpu_run(cmd, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", default=str(ROOT / "build" / "release" / "floe"))
    ap.add_argument("--records", type=int, default=400000)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    floe = os.path.abspath(a.floe)
    work = Path(tempfile.mkdtemp(prefix="floe-bench-sql-"))
    (work / "in").mkdir()
    gen(work / "in" / "events.jsonl", a.records)
    for name, text in (("plain", PLAIN), ("renamed", RENAMED), ("computed", COMPUTED)):
        (work / f"{name}.sql").write_text(text)
    # the plain INSERT's pipeline, as floe sql compiles it
    out = cpu_run([floe, "-v", "-v", "sql", "-f", "plain.sql"], work)
    m = re.search(r"pipeline for line \d+:\n(.*?)\n\n", out, re.S)
    if not m:
        sys.exit("no pipeline YAML in floe -v sql's output:\n" + out[-2000:])
    (work / "job.yaml").write_text(m.group(1))
    variants = {
        "yaml": ([floe, "--catalog-type", "filesystem", "--warehouse", str(work / "wh"), "run", "job.yaml",
                  "--quiet"], None),
        "sql": ([floe, "sql", "-f", "plain.sql"], None),
        "renamed": ([floe, "sql", "-f", "renamed.sql"], None),
        "computed": ([floe, "sql", "-f", "computed.sql"], None),
    }
    cpu = {k: [] for k in variants}
    for r in range(a.runs):
        for k, (cmd, _) in variants.items():
            shutil.rmtree(work / "wh", ignore_errors=True)
            if k == "yaml":  # the table, as the script creates it
                cpu_run([floe, "sql", "-e", HEAD + PLAIN.split(HEAD)[1].split("INSERT")[0]],
                        work)
            s, _ = measured(cmd, work)
            cpu[k].append(s)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in cpu.items()),
              file=sys.stderr)
    base = statistics.median(cpu["yaml"])
    print("| variant | CPU median | best | vs yaml |\n|---|---:|---:|---:|")
    for k, v in cpu.items():
        med = statistics.median(v)
        print(f"| {k} | {med:.3f} s | {min(v):.3f} s | {100 * (med / base - 1):+.1f}% |")
    print(f"load average: {os.getloadavg()}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
