#!/usr/bin/env bash
# Compaction side by side with the JVM peer: floe maintain --steps compact and
# Spark 3.5 + Iceberg 1.10 rewrite_data_files on the same small files
# (bench/compact's event table), each on its own copy of the table.
#   bench/peers/run-spark-compact.sh [files] [rows per file]     (default 1000 x 5000)
set -euo pipefail
cd "$(dirname "$0")/../.."
FILES=${1:-1000}
ROWS=${2:-5000}
OUT=${BENCH_OUT:-bench/out/peers}
PY=.venv/bin/python
mkdir -p "$OUT"
cmake --preset release -DFLOE_WERROR=OFF >/dev/null
cmake --build build/release -j"$(nproc)" --target floe >/dev/null
if [ ! -f "$OUT/src/.done-$FILES-$ROWS" ]; then
  rm -rf "$OUT/src"
  $PY bench/compact/gen_files.py "$OUT/src" "$FILES" "$ROWS"
  touch "$OUT/src/.done-$FILES-$ROWS"
fi
$PY bench/peers/spark_compact.py build/release/floe "$OUT/src" "$OUT" ${SMOKE:+--smoke} | tee "$OUT/spark-compact.jsonl"
