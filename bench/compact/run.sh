#!/usr/bin/env bash
# Compaction benchmark: 1,000 small files of the event table rewritten by
# floe (maintain --steps compact), PyIceberg (scan + overwrite) and DuckDB
# (iceberg_scan -> COPY), one after another on the same machine.
#   bench/compact/run.sh [files] [rows per file]     (default 1000 x 5000)
set -euo pipefail
cd "$(dirname "$0")/../.."
FILES=${1:-1000}
ROWS=${2:-5000}
OUT=${BENCH_OUT:-bench/out/compact}
PY=.venv/bin/python
mkdir -p "$OUT"
cmake --preset release -DFLOE_WERROR=OFF >/dev/null
cmake --build build/release -j"$(nproc)" --target floe >/dev/null
if [ ! -f "$OUT/src/.done-$FILES-$ROWS" ]; then
  rm -rf "$OUT/src"
  $PY bench/compact/gen_files.py "$OUT/src" "$FILES" "$ROWS"
  touch "$OUT/src/.done-$FILES-$ROWS"
fi
$PY bench/compact/bench_compact.py build/release/floe "$OUT/src" "$OUT" | tee "$OUT/results.jsonl"
