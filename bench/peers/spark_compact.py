#!/usr/bin/env python3
"""Compaction peer: Spark 3.5 with Iceberg 1.10's runtime (pyspark from PyPI,
the jar from Maven Central, as the interop tests use them) running
`CALL system.rewrite_data_files` on the same small files floe compacts with
`floe maintain --steps compact`. Each side gets its own copy of one table
(floe registers the files with add-files into its embedded SQLite catalog;
Spark opens that catalog through Iceberg's JdbcCatalog).

floe is one process measured with wait4. Spark's JVM is measured from
/proc: CPU seconds and wall time of its start-up (the session up and the
catalog loaded) apart from those of the rewrite itself, and its peak RSS
(VmHWM).

    spark_compact.py <floe binary> <source dir of parquet files> <work dir>

Prints one JSON line per side; --smoke also checks the rewritten table reads
back (PyIceberg) with every row.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "interop"))

SCHEMA = ("event_id long, user_id long, ts timestamptz, amount double, score double, qty int, "
          "country string, event_type string, session_id string, url string")
CLK = os.sysconf("SC_CLK_TCK")


def make_table(floe, files, d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    f = [floe, "--dir", d]
    subprocess.run(f + ["namespace", "create", "bench"], check=True, capture_output=True)
    subprocess.run(f + ["table", "create", "bench.events", "--schema", SCHEMA], check=True,
                   capture_output=True)
    subprocess.run(f + ["add-files", "bench.events", *files], check=True, capture_output=True)


def floe_side(floe, files, work):
    d = os.path.join(work, "floe")
    make_table(floe, files, d)
    t0 = time.perf_counter()
    p = subprocess.Popen([floe, "--dir", d, "maintain", "bench.events", "--steps", "compact",
                          "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    out = p.stdout.read().decode()
    assert os.waitstatus_to_exitcode(status) == 0, p.stderr.read().decode()
    res = json.loads(out)["compact"]
    return {"impl": "floe", "wall_s": round(wall, 3), "cpu_s": round(ru.ru_utime + ru.ru_stime, 3),
            "peak_rss_mb": round(ru.ru_maxrss / 1024, 1), "startup_cpu_s": 0.0,
            "files_out": res["data_files_added"], "warehouse": os.path.join(d, "warehouse")}


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime, stime, cutime, cstime (fields 14-17 of stat; here 0-based after the name)
    return sum(int(x) for x in fields[11:15]) / CLK


def proc_hwm_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def jvm_pid(spark):
    """The JVM behind the session (pyspark starts it through spark-submit)."""
    gw = spark.sparkContext._gateway
    pid = gw.proc.pid if getattr(gw, "proc", None) else None
    if pid is None:
        raise RuntimeError("cannot find the Spark JVM")
    # spark-submit may run java as a child: take the deepest java process
    while True:
        try:
            kids = open(f"/proc/{pid}/task/{pid}/children").read().split()
        except OSError:
            kids = []
        java = [k for k in kids if "java" in open(f"/proc/{k}/cmdline", "rb").read().decode(errors="replace")]
        if not java:
            return pid
        pid = int(java[0])


def spark_side(floe, files, work):
    import spark_session

    d = os.path.join(work, "spark")
    make_table(floe, files, d)
    wh = Path(d) / "warehouse"
    t0 = time.perf_counter()
    spark = spark_session.start(wh)
    pid = jvm_pid(spark._spark)
    spark.sql("SELECT count(*) FROM bench.events").collect()  # the catalog and table loaded
    startup_wall = time.perf_counter() - t0
    startup_cpu = proc_cpu(pid)
    t1 = time.perf_counter()
    r = spark.sql("CALL default.system.rewrite_data_files(table => 'bench.events')").collect()
    wall = time.perf_counter() - t1
    cpu = proc_cpu(pid) - startup_cpu
    hwm = proc_hwm_mb(pid)
    row = r[0].asDict()
    spark.stop()
    return {"impl": "spark-3.5-iceberg-1.10 rewrite_data_files", "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3), "peak_rss_mb": round(hwm, 1),
            "startup_wall_s": round(startup_wall, 3), "startup_cpu_s": round(startup_cpu, 3),
            "files_out": row.get("added_data_files_count"), "warehouse": str(wh)}


def rows_of(warehouse):
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("default", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
    t = cat.load_table("bench.events")
    return len(t.scan().to_arrow()), len([f for f in t.inspect.files().to_pylist() if f["content"] == 0])


def main():
    args = [a for a in sys.argv[1:] if a != "--smoke"]
    smoke = "--smoke" in sys.argv
    floe, src, work = args
    if os.path.exists(floe):  # else a command on PATH
        floe = os.path.abspath(floe)
    src, work = os.path.abspath(src), os.path.abspath(work)
    os.makedirs(work, exist_ok=True)
    os.chdir(work)  # Spark leaves a spark-warehouse folder in its working directory
    files = sorted(glob.glob(os.path.join(src, "*.parquet")))
    bytes_in = sum(os.path.getsize(p) for p in files)
    all_rows = set()
    for side in (lambda: floe_side(floe, files, work), lambda: spark_side(floe, files, work)):
        m = side()
        rows, live = rows_of(m.pop("warehouse"))
        all_rows.add(rows)
        m.update(files_in=len(files), bytes_in=bytes_in, rows=rows, live_files=live,
                 mb_per_cpu_s=round(bytes_in / 1e6 / m["cpu_s"], 1) if m["cpu_s"] else None)
        if smoke:
            assert live == m["files_out"] and rows > 0, m
        print(json.dumps(m), flush=True)
    assert len(all_rows) == 1, all_rows  # both rewrote the same rows


if __name__ == "__main__":
    main()
