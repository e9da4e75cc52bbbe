#!/usr/bin/env python3
"""Compaction benchmark: rewrite N small files of one table into files near
the target size — floe maintain --steps compact against PyIceberg (scan the
table and overwrite it: its nearest operation) and DuckDB (read the table
through iceberg_scan and COPY it to one zstd Parquet file: a rewrite without
a commit), side by side on the same files. Each side runs as its own process;
its CPU seconds and peak RSS come from wait4.

    bench_compact.py <floe binary> <source dir> <work dir>

Prints one JSON line per side.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import time

SCHEMA = ("event_id long, user_id long, ts timestamptz, amount double, score double, qty int, "
          "country string, event_type string, session_id string, url string")


def run_measured(cmd, env=None):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    out, err = p.stdout.read().decode(), p.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[0]} failed:\n{err}{out}")
    return {"wall_s": round(wall, 3), "cpu_s": round(ru.ru_utime + ru.ru_stime, 3),
            "peak_rss_mb": round(ru.ru_maxrss / 1024, 1)}, out


def floe_side(floe, files, work):
    d = os.path.join(work, "floe")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    f = [floe, "--dir", d]
    subprocess.run(f + ["namespace", "create", "bench"], check=True, capture_output=True)
    subprocess.run(f + ["table", "create", "bench.events", "--schema", SCHEMA], check=True,
                   capture_output=True)
    subprocess.run(f + ["add-files", "bench.events", *files], check=True, capture_output=True)
    m, out = run_measured(f + ["maintain", "bench.events", "--steps", "compact", "--format", "json"])
    res = json.loads(out)["compact"]
    assert res["data_files_rewritten"] == len(files), res
    count = subprocess.run(f + ["scan", "bench.events", "--count"], check=True, capture_output=True,
                           text=True).stdout.strip()
    m.update(impl="floe", files_out=res["data_files_added"], rows=int(count),
             bytes_out=res["bytes_added"])
    return m


PYICEBERG = r"""
import sys
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table("bench.events")
t.overwrite(t.scan().to_arrow())
t = cat.load_table("bench.events")
print(len(t.scan().to_arrow()), len(t.inspect.files()))
"""


def pyiceberg_side(files, work):
    import pyarrow.parquet as pq
    from pyiceberg.catalog.sql import SqlCatalog

    wh = os.path.join(work, "pyiceberg")
    shutil.rmtree(wh, ignore_errors=True)
    os.makedirs(wh)
    cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    cat.create_namespace("bench")
    t = cat.create_table("bench.events", schema=pq.read_schema(files[0]))
    t.add_files(files)
    m, out = run_measured([sys.executable, "-c", PYICEBERG, wh])
    rows, nfiles = map(int, out.split())
    m.update(impl="pyiceberg", files_out=nfiles, rows=rows)
    return m


DUCKDB = r"""
import sys, duckdb
from duckdb_extensions import import_extension
con = duckdb.connect()
import_extension("iceberg", con=con)
con.execute("LOAD iceberg")
con.execute(f"SET threads={sys.argv[3]}")
con.execute("SET enable_progress_bar=false")
con.execute(f"COPY (SELECT * FROM iceberg_scan('{sys.argv[1]}')) TO '{sys.argv[2]}' "
            "(FORMAT parquet, COMPRESSION zstd)")
print(con.execute(f"SELECT count(*) FROM '{sys.argv[2]}'").fetchone()[0])
"""


def duckdb_side(floe, files, work, threads):
    # the same table before compaction, registered by floe
    d = os.path.join(work, "duck")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    f = [floe, "--dir", d]
    subprocess.run(f + ["namespace", "create", "bench"], check=True, capture_output=True)
    subprocess.run(f + ["table", "create", "bench.events", "--schema", SCHEMA], check=True,
                   capture_output=True)
    subprocess.run(f + ["add-files", "bench.events", *files], check=True, capture_output=True)
    meta = sorted(glob.glob(os.path.join(d, "warehouse/bench/events/metadata/*.metadata.json")))[-1]
    out_file = os.path.join(d, "rewritten.parquet")
    m, out = run_measured([sys.executable, "-c", DUCKDB, meta, out_file, str(threads)])
    m.update(impl=f"duckdb-{threads}t", files_out=1, rows=int(out), bytes_out=os.path.getsize(out_file))
    return m


def main():
    floe, src, work = sys.argv[1], sys.argv[2], sys.argv[3]
    files = sorted(glob.glob(os.path.join(src, "*.parquet")))
    bytes_in = sum(os.path.getsize(p) for p in files)
    for side in (lambda: floe_side(floe, files, work), lambda: pyiceberg_side(files, work),
                 lambda: duckdb_side(floe, files, work, 1), lambda: duckdb_side(floe, files, work, 2)):
        m = side()
        m.update(files_in=len(files), bytes_in=bytes_in,
                 mb_s_per_core=round(bytes_in / 1e6 / m["cpu_s"], 1),
                 mb_s_wall=round(bytes_in / 1e6 / m["wall_s"], 1))
        print(json.dumps(m), flush=True)


if __name__ == "__main__":
    main()
