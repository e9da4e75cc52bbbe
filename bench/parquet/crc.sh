#!/usr/bin/env bash
# Cost of Parquet page checksums in floe: write and read CPU with CRCs off
# ("nocrc"), written ("crc", the default) and written + verified on read
# ("verify"), interleaved so the machine's load hits every mode alike.
#   bench/parquet/crc.sh [rows] [runs]  (default 2000000 rows, 5 runs)
# Results in bench/out/parquet-crc/results.jsonl; prints medians.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${1:-2000000}
RUNS=${2:-5}
OUT=${BENCH_OUT:-bench/out/parquet-crc}
mkdir -p "$OUT"

cc -O3 -DNDEBUG -std=c17 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DFLOE_VERSION=\"bench\" \
  -Iinclude -Isrc bench/parquet/bench_parquet.c src/util/*.c src/codec/*.c src/arrow/*.c src/parquet/*.c \
  $(pkg-config --libs libzstd snappy libdeflate liblz4 libbrotlienc libbrotlidec zlib) -lm -lpthread \
  -o "$OUT/bench_parquet"

: > "$OUT/results.jsonl"
for run in $(seq "$RUNS"); do
  echo "run $run/$RUNS, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  for codec in uncompressed snappy zstd; do
    for mode in nocrc crc verify; do
      "$OUT/bench_parquet" "$ROWS" "$codec" "$OUT/floe-$codec-$mode.parquet" "$mode" >> "$OUT/results.jsonl"
    done
  done
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$OUT/results.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault((r["codec"], r["crc"]), []).append(r)
med = statistics.median
# writing is the same in "crc" and "verify"; reading is the same in "nocrc" and "crc"
print("| codec | MB (file) | write CPU s, no CRC | write CPU s, CRC | write cost | "
      "read CPU s, unverified | read CPU s, verified | verify cost |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for codec in ("uncompressed", "snappy", "zstd"):
    w0 = [r["write_cpu_s"] for r in by[(codec, "nocrc")]]
    w1 = [r["write_cpu_s"] for m in ("crc", "verify") for r in by[(codec, m)]]
    r0 = [r["read_cpu_s"] for m in ("nocrc", "crc") for r in by[(codec, m)]]
    r1 = [r["read_cpu_s"] for r in by[(codec, "verify")]]
    print("| %s | %.1f | %.3f (min %.3f) | %.3f (min %.3f) | %+.1f%% (min %+.1f%%) | "
          "%.3f (min %.3f) | %.3f (min %.3f) | %+.1f%% (min %+.1f%%) |" % (
        codec, by[(codec, "nocrc")][0]["file_bytes"] / 1e6,
        med(w0), min(w0), med(w1), min(w1), 100 * (med(w1) / med(w0) - 1), 100 * (min(w1) / min(w0) - 1),
        med(r0), min(r0), med(r1), min(r1), 100 * (med(r1) / med(r0) - 1), 100 * (min(r1) / min(r0) - 1)))
print("runs: %d" % len(by[("zstd", "nocrc")]))
PY
