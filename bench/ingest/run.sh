#!/usr/bin/env bash
# Ingest benchmark: JSON lines into a 4-way (day) partitioned zstd Iceberg table.
#   bench/ingest/run.sh [records] [runs]      (default 1000000 records, 2 runs each)
# floe: `floe run pipeline.yaml` (four writer tasks, HASH distribution, 10 s
# checkpoints) with a release build, at zstd level 1 (pyarrow's and PyIceberg's
# default, for a like-for-like comparison) and level 3 (floe's default, as
# Java's); pyarrow: read_json + write_table on one thread (no table, one file);
# PyIceberg: read_json + table.append into the same partitioned table. CPU time (user + sys) and peak RSS of each process come from
# /usr/bin/time; records/s per core = records / CPU seconds. Results in
# bench/out/ingest/results.jsonl, the table on stdout (bench/RESULTS.md keeps it).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
RUNS=${2:-2}
OUT=${BENCH_OUT:-bench/out/ingest}
PY=$PWD/.venv/bin/python
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# a release build of the whole command, in a folder of its own
cmake -S . -B "$OUT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOE_TESTS=OFF -DFLOE_WERROR=OFF >/dev/null
cmake --build "$OUT/build" --target floe -j 2 >/dev/null
FLOE=$OUT/build/floe

DATA=$OUT/events-$N.jsonl
[ -f "$DATA" ] || $PY bench/ingest/gen_events.py "$N" "$DATA"
BYTES=$(stat -c %s "$DATA")

timed() { # side run cmd... -> one JSON line
  local side=$1 run=$2; shift 2
  local t
  t=$(mktemp)
  /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" >/dev/null
  read -r wall user sys rss <"$t"
  rm -f "$t"
  echo "{\"side\": \"$side\", \"run\": $run, \"records\": $N, \"bytes\": $BYTES, \"wall_s\": $wall, \"user_s\": $user, \"sys_s\": $sys, \"rss_kb\": $rss, \"load\": \"$(cut -d' ' -f1 /proc/loadavg)\"}"
}

: >"$OUT/results.jsonl"
for run in $(seq 1 "$RUNS"); do
  for level in 1 3; do
    rm -rf "$OUT/floe" && mkdir -p "$OUT/floe"
    sed "s|INPUT|$DATA|; s|LEVEL|$level|" bench/ingest/pipeline.yaml >"$OUT/floe/pipeline.yaml"
    timed "floe-zstd$level" "$run" "$FLOE" --dir "$OUT/floe" run "$OUT/floe/pipeline.yaml" --quiet | tee -a "$OUT/results.jsonl"
    rows=$("$PY" -c "
from pyiceberg.catalog.sql import SqlCatalog
wh='$OUT/floe/warehouse'
print(SqlCatalog('default', uri=f'sqlite:///{wh}/catalog.db', warehouse=f'file://{wh}').load_table('bench.events').scan().to_arrow().num_rows)")
    [ "$rows" = "$N" ] || { echo "floe wrote $rows rows, expected $N" >&2; exit 1; }
  done
  (cd bench/ingest && timed pyarrow "$run" "$PY" bench_pyarrow.py "$DATA" "$OUT/pyarrow.parquet") | tee -a "$OUT/results.jsonl"
  rm -rf "$OUT/pyiceberg" && mkdir -p "$OUT/pyiceberg"
  (cd bench/ingest && timed pyiceberg "$run" "$PY" bench_pyiceberg.py "$DATA" "$OUT/pyiceberg") | tee -a "$OUT/results.jsonl"
done
"$PY" bench/ingest/report.py "$OUT/results.jsonl"
