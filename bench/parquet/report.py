#!/usr/bin/env python3
"""Summarise bench/out/parquet/results.jsonl and cross-check the files:
pyarrow reads floe's files to the source rows, floe's reader reads
pyarrow's (checked by bench_parquet's row count).

Speeds are given twice: per wall second, and per CPU second (user + sys of
the process while writing or reading, "per core"), which the other jobs of a
shared machine disturb much less. With several runs in results.jsonl (run.sh
[rows] [runs]) each figure is the median over the runs."""
import json
import pathlib
import statistics
import sys

import pyarrow.parquet as pq

out = pathlib.Path(sys.argv[1])
rows = [json.loads(l) for l in open(out / "results.jsonl")]
src = pq.read_table(out / "source.parquet")
for codec in ("zstd", "snappy"):
    f = pq.read_table(out / ("floe-%s.parquet" % codec))
    assert f.equals(src), "pyarrow reads floe's %s file to different rows" % codec
print("pyarrow reads floe's files to the source rows: ok")

by = {}
for r in rows:
    by.setdefault((r["codec"], r["impl"]), []).append(r)
med = statistics.median
print("| codec | impl | runs | write MB/s | write CPU s | write MB/s per CPU s | read MB/s "
      "| read CPU s | read MB/s per CPU s | file MB |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for (codec, impl), rs in by.items():
    mb = rs[0]["data_bytes"] / 1e6
    wc, rc = med(r["write_cpu_s"] for r in rs), med(r["read_cpu_s"] for r in rs)
    print("| %s | %s | %d | %.0f | %.2f | %.0f | %.0f | %.2f | %.0f | %.1f |" % (
        codec, impl, len(rs), mb / med(r["write_s"] for r in rs), wc, mb / wc,
        mb / med(r["read_s"] for r in rs), rc, mb / rc, rs[0]["file_bytes"] / 1e6))
for codec in ("zstd", "snappy"):
    f, p = by[(codec, "floe")], by[(codec, "pyarrow")]
    # per run (floe's run i against pyarrow's run i, run back to back)
    pairs = list(zip(f, p))
    wr = [b["write_cpu_s"] / a["write_cpu_s"] for a, b in pairs]
    rr = [b["read_cpu_s"] / a["read_cpu_s"] for a, b in pairs]
    print("%s: floe/pyarrow speed per CPU second: write %.2fx, read %.2fx (median of %d runs; "
          "write per run %s); per wall second: write %.2fx, read %.2fx" % (
              codec, med(wr), med(rr), len(pairs), "/".join("%.2f" % x for x in wr),
              med(b["write_s"] / a["write_s"] for a, b in pairs),
              med(b["read_s"] / a["read_s"] for a, b in pairs)))
