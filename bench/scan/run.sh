#!/usr/bin/env bash
# Scan-planning benchmark: a generated path-based table of N data files in M
# manifests (default 1,000,000 in 1,000) planned by floe (1 and 2 threads),
# PyIceberg's plan_files and DuckDB's iceberg extension, without and with
# filters, one after another on the same machine.
#   bench/scan/run.sh [files] [manifests]
# Compiles bench_scan.c with the layers the read path needs (-O3 -DNDEBUG), so
# unrelated components' state does not matter; prints one JSON line per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
FILES=${1:-1000000}
MANIFESTS=${2:-1000}
OUT=${BENCH_OUT:-bench/out/scan}
PY=${PYTHON:-.venv/bin/python}
mkdir -p "$OUT"
srcs=""
for c in util codec json arrow avro parquet puffin iceberg io catalog table scan; do
  srcs="$srcs $(ls src/$c/*.c)"
done
cc -O3 -DNDEBUG -g -std=c17 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DFLOE_VERSION=\"bench\" \
  -Iinclude -Isrc bench/scan/bench_scan.c $srcs \
  $(pkg-config --cflags --libs libzstd snappy libdeflate liblz4 libbrotlienc libbrotlidec zlib sqlite3 libpq libcurl libcrypto) \
  -lm -lpthread -o "$OUT/bench_scan"
TABLE="$PWD/$OUT/table-$FILES-$MANIFESTS"
if [ ! -f "$TABLE/.done" ]; then
  rm -rf "$TABLE"
  "$OUT/bench_scan" gen "$TABLE" "$FILES" "$MANIFESTS"
  touch "$TABLE/.done"
fi
META="$TABLE/metadata/v1.metadata.json"
: > "$OUT/results.jsonl"
for threads in 1 2; do
  for f in - "region = 'eu'" "region = 'zz'" "ts >= '2022-01-10' AND ts < '2022-01-11'" \
           "ts < '2000-01-01'" "id = 123456"; do
    "$OUT/bench_scan" plan "$TABLE" "$threads" "$f" 3 | tee -a "$OUT/results.jsonl"
  done
done
$PY bench/scan/others.py "$META" pyiceberg | tee -a "$OUT/results.jsonl"
for threads in 1 2; do
  $PY bench/scan/others.py "$META" duckdb "$threads" | tee -a "$OUT/results.jsonl"
done
