"""Scan time of one table by DuckDB's iceberg extension (count and sum of
every row, deletes applied; one thread; best of `repeats` in one connection,
wall and CPU seconds of the process) — one JSON line.

    readers.py <metadata.json> <label> [repeats]
"""
import json
import sys
import time

import duckdb
from duckdb_extensions import import_extension

meta, label = sys.argv[1], sys.argv[2]
con = duckdb.connect()
import_extension("iceberg", con=con)
con.execute("LOAD iceberg")
con.execute("SET threads = 1")
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
best, cpu, rows = None, None, None
for _ in range(repeats):
    t0, c0 = time.perf_counter(), time.process_time()
    rows = con.execute(f"SELECT count(*), sum(v) FROM iceberg_scan('{meta}')").fetchone()
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    best = dt if best is None else min(best, dt)
    cpu = dc if cpu is None else min(cpu, dc)
print(json.dumps({"reader": "duckdb", "table": label, "rows": rows[0], "seconds": round(best, 3),
                  "cpu_seconds": round(cpu, 3)}))
