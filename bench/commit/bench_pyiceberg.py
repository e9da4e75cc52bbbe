"""PyIceberg's append on the table bench_commit made: <dir> <commits>.
One JSON line: CPU seconds of this process per commit (time.process_time),
each commit a 1-row pyarrow table (PyIceberg writes it as a Parquet file,
then commits a fast append), the table loaded once and reloaded per commit."""
import json
import statistics
import sys
import time

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog

d, k = sys.argv[1], int(sys.argv[2])
cat = SqlCatalog("default", uri=f"sqlite:///{d}/catalog.db", warehouse=f"file://{d}/wh")
schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("kind", pa.string())])
row = pa.Table.from_pylist([{"id": 1, "ts": None, "kind": "x"}], schema=schema)
tbl = cat.load_table("db.t")
n = len(tbl.metadata.snapshots)
tbl.append(row)  # warm up
held, fresh = [], []
for _ in range(k):
    c0 = time.process_time()
    tbl.append(row)
    held.append((time.process_time() - c0) * 1000)
for _ in range(k):
    c0 = time.process_time()
    t2 = cat.load_table("db.t")
    t2.append(row)
    fresh.append((time.process_time() - c0) * 1000)
print(json.dumps({"impl": "pyiceberg", "snapshots": n, "commits": k,
                  "held_cpu_ms_median": round(statistics.median(held), 2), "held_cpu_ms_best": round(min(held), 2),
                  "load_and_commit_cpu_ms_median": round(statistics.median(fresh), 2),
                  "load_and_commit_cpu_ms_best": round(min(fresh), 2)}))
