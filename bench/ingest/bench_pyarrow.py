"""pyarrow baseline: read_json (explicit schema, one thread) + write_table (zstd).
    bench_pyarrow.py <in.jsonl> <out.parquet>
Prints one JSON line; CPU and RSS are measured by run.sh around the process."""
import json
import sys
import time

import pyarrow as pa
import pyarrow.json as pj
import pyarrow.parquet as pq

from schema import ARROW_SCHEMA

pa.set_cpu_count(1)
pa.set_io_thread_count(1)
t0 = time.time()
t = pj.read_json(sys.argv[1], read_options=pj.ReadOptions(use_threads=False),
                 parse_options=pj.ParseOptions(explicit_schema=ARROW_SCHEMA))
t1 = time.time()
pq.write_table(t, sys.argv[2], compression="zstd")
t2 = time.time()
print(json.dumps({"side": "pyarrow", "rows": t.num_rows, "read_s": round(t1 - t0, 3),
                  "write_s": round(t2 - t1, 3)}))
