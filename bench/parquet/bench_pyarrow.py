#!/usr/bin/env python3
"""pyarrow's side of the Parquet benchmark (see README.md).

    bench_pyarrow.py <source.parquet> <codec> <out.parquet>

Loads the benchmark table (written by bench_parquet ... source), then times
pq.write_table (one thread, zstd level 1 = pyarrow's default, or snappy)
and pq.read_table of the result (one thread). Prints one JSON line.
"""
import json
import os
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq


def main():
    src, codec, out = sys.argv[1], sys.argv[2], sys.argv[3]
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    table = pq.read_table(src, use_threads=False)
    table = table.combine_chunks()
    kw = {"compression": codec}
    if codec == "zstd":
        kw["compression_level"] = 1
    # wall time, and CPU seconds (user + sys, all threads of the process)
    t0, c0 = time.perf_counter(), os.times()
    pq.write_table(table, out, **kw)
    t_write, c1 = time.perf_counter() - t0, os.times()
    t0 = time.perf_counter()
    back = pq.read_table(out, use_threads=False)
    t_read, c2 = time.perf_counter() - t0, os.times()
    c_write = (c1.user - c0.user) + (c1.system - c0.system)
    c_read = (c2.user - c1.user) + (c2.system - c1.system)
    assert back.num_rows == table.num_rows
    print(json.dumps({"impl": "pyarrow", "version": pa.__version__, "codec": codec,
                      "rows": table.num_rows, "data_bytes": table.nbytes,
                      "file_bytes": os.path.getsize(out), "write_s": round(t_write, 3),
                      "read_s": round(t_read, 3), "write_cpu_s": round(c_write, 3),
                      "read_cpu_s": round(c_read, 3),
                      "write_sys_s": round(c1.system - c0.system, 3),
                      "read_sys_s": round(c2.system - c1.system, 3), "rows_read": back.num_rows}))


if __name__ == "__main__":
    main()
