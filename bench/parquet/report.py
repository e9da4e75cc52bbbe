#!/usr/bin/env python3
"""Summarise bench/out/parquet/results.jsonl and cross-check the files:
pyarrow reads floe's files to the source rows, floe's reader reads
pyarrow's (checked by bench_parquet's row count)."""
import json
import pathlib
import sys

import pyarrow.parquet as pq

out = pathlib.Path(sys.argv[1])
rows = [json.loads(l) for l in open(out / "results.jsonl")]
src = pq.read_table(out / "source.parquet")
for codec in ("zstd", "snappy"):
    f = pq.read_table(out / ("floe-%s.parquet" % codec))
    assert f.equals(src), "pyarrow reads floe's %s file to different rows" % codec
print("pyarrow reads floe's files to the source rows: ok")
print("| codec | impl | write MB/s | write Mrows/s | read MB/s | read Mrows/s | file MB |")
print("|---|---|---:|---:|---:|---:|---:|")
by = {}
for r in rows:
    mb = r["data_bytes"] / 1e6
    by[(r["codec"], r["impl"])] = r
    print("| %s | %s | %.0f | %.2f | %.0f | %.2f | %.1f |" % (
        r["codec"], r["impl"], mb / r["write_s"], r["rows"] / r["write_s"] / 1e6,
        mb / r["read_s"], r["rows"] / r["read_s"] / 1e6, r["file_bytes"] / 1e6))
for codec in ("zstd", "snappy"):
    f, p = by[(codec, "floe")], by[(codec, "pyarrow")]
    print("%s: floe/pyarrow write speed %.2fx, read speed %.2fx" % (
        codec, p["write_s"] / f["write_s"], p["read_s"] / f["read_s"]))
