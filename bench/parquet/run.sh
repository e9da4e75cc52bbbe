#!/usr/bin/env bash
# Parquet benchmark: floe vs pyarrow, write and read, one thread each.
#   bench/parquet/run.sh [rows] [runs]  (default 10000000 rows, 1 run)
# Compiles bench_parquet.c with floe's util/codec/arrow/parquet (-O3), generates
# the 10-column event table, runs both sides for zstd and snappy, checks
# that each reads the other's files to the same rows, and prints a table
# (medians over the runs; each run does floe then pyarrow, per codec).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${1:-10000000}
RUNS=${2:-1}
OUT=${BENCH_OUT:-bench/out/parquet}
mkdir -p "$OUT"
PY=.venv/bin/python

# Only the layers the benchmark needs, with the release preset's flags
# (-O3 -DNDEBUG), so the other components' state does not matter here.
cc -O3 -DNDEBUG -std=c17 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DFLOE_VERSION=\"bench\" \
  -Iinclude -Isrc bench/parquet/bench_parquet.c src/util/*.c src/codec/*.c src/arrow/*.c src/parquet/*.c \
  $(pkg-config --libs libzstd snappy libdeflate liblz4 libbrotlienc libbrotlidec zlib) -lm -lpthread \
  -o "$OUT/bench_parquet"

"$OUT/bench_parquet" "$ROWS" source "$OUT/source.parquet"
: > "$OUT/results.jsonl"
for run in $(seq "$RUNS"); do
  echo "run $run/$RUNS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for codec in zstd snappy; do
    "$OUT/bench_parquet" "$ROWS" "$codec" "$OUT/floe-$codec.parquet" | tee -a "$OUT/results.jsonl"
    $PY bench/parquet/bench_pyarrow.py "$OUT/source.parquet" "$codec" "$OUT/pyarrow-$codec.parquet" | tee -a "$OUT/results.jsonl"
  done
done
$PY bench/parquet/report.py "$OUT"
