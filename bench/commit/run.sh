#!/usr/bin/env bash
# Commit cost against history size: floe in-process (bench_commit.c), then
# PyIceberg's append and Java's AppendFiles on tables of the same history.
#   bench/commit/run.sh [commits per size]
# Compiles bench_commit.c with the library sources (-O3 -DNDEBUG); one JSON
# line per size.
set -euo pipefail
cd "$(dirname "$0")/../.."
K=${1:-15}
OUT=${BENCH_OUT:-bench/out/commit}
PY=${PYTHON:-.venv/bin/python}
mkdir -p "$OUT"
srcs=""
for c in util codec json arrow avro parquet puffin iceberg io catalog table; do
  srcs="$srcs $(ls src/$c/*.c)"
done
cc -O3 -DNDEBUG -g -std=c17 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DFLOE_VERSION=\"bench\" \
  -Iinclude -Isrc bench/commit/bench_commit.c $srcs \
  $(pkg-config --cflags --libs libzstd snappy libdeflate liblz4 libbrotlienc libbrotlidec zlib sqlite3 libpq) \
  -lm -lpthread -o "$OUT/bench_commit"
JAR=tests/java/target/floe-java-peer-1.jar
if [ "${BENCH_PEERS:-1}" = 1 ]; then
  (cd tests/java && mvn -q -B package -DskipTests)
fi
: > "$OUT/results.jsonl"
for n in 10 1000 10000; do
  d=$(mktemp -d "$PWD/$OUT/t-$n-XXXX")
  "$OUT/bench_commit" "$d" "$n" "$K" | sed "s/^{/{\"impl\": \"floe\", \"load\": \"$(cut -d' ' -f1 /proc/loadavg)\", /" | tee -a "$OUT/results.jsonl"
  if [ "${BENCH_PEERS:-1}" = 1 ]; then
    # the peers append to the same table after floe (a few dozen more
    # snapshots on top of n: the same size class)
    $PY bench/commit/bench_pyiceberg.py "$d" "$K" | tee -a "$OUT/results.jsonl"
    java -cp "$JAR:tests/java/target/lib/*" floe.BenchAppend "$d/catalog.db" "file://$d/wh" db.t "$K" \
      | tee -a "$OUT/results.jsonl"
  fi
  rm -rf "$d"
done
