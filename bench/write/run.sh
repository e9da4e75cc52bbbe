#!/usr/bin/env bash
# Task-writer benchmark: the 10-column event table into a zstd table, one
# thread, three partitionings (none, bucket(4, user_id), day(ts) + country).
#   bench/write/run.sh [rows]      (default 5000000)
# Compiles bench_write.c with the layers the write path needs (-O3 -DNDEBUG),
# so unrelated components' state does not matter; prints one JSON line per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${1:-5000000}
OUT=${BENCH_OUT:-bench/out/write}
mkdir -p "$OUT"
srcs=""
for c in util codec json arrow avro parquet puffin iceberg io write; do srcs="$srcs $(ls src/$c/*.c)"; done
cc -O3 -DNDEBUG -g -std=c17 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DFLOE_VERSION=\"bench\" \
  -Iinclude -Isrc bench/write/bench_write.c $srcs \
  $(pkg-config --libs libzstd snappy libdeflate liblz4 libbrotlienc libbrotlidec zlib) -lm -lpthread \
  -o "$OUT/bench_write"
: > "$OUT/results.jsonl"
for mode in none bucket4 day_country; do
  rm -rf "$OUT/table-$mode"
  mkdir -p "$OUT/table-$mode"
  "$OUT/bench_write" "$ROWS" "$mode" "$PWD/$OUT/table-$mode" | tee -a "$OUT/results.jsonl"
  rm -rf "$OUT/table-$mode"
done
