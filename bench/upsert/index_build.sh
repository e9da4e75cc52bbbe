#!/usr/bin/env bash
# The key index on a large table (issue 12): a table of N rows (one long key,
# 4 data files, v3) gets C upserts (80 % updates of existing keys) in index mode
# and in equality mode, each one `floe ingest` (release build); a run with
# 1,000 changes gives the index build alone. Prints the CPU seconds, RSS and
# the index's log line (keys, bytes in memory, build ms) of every run.
#   bench/upsert/index_build.sh [rows] [changes] [repeats]
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-10000000}
C=${2:-1000000}
REP=${3:-2}
OUT=${BENCH_OUT:-bench/out/upsert-index-build}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
FLOE=${FLOE:-$PWD/build/release/floe}
PY=$PWD/.venv/bin/python
[ -f "$OUT/base-$N.jsonl" ] || $PY bench/upsert/gen_keys.py "$N" "$OUT/base-$N.jsonl" base
[ -f "$OUT/ch-$C.jsonl" ] || $PY bench/upsert/gen_keys.py "$C" "$OUT/ch-$C.jsonl" ch "$N"
[ -f "$OUT/ch-1000.jsonl" ] || $PY bench/upsert/gen_keys.py 1000 "$OUT/ch-1000.jsonl" ch "$N"
for m in index equality; do
  D=$OUT/base-$m.pristine
  [ -d "$D" ] && continue
  mkdir -p "$OUT/base-$m"
  "$FLOE" --dir "$OUT/base-$m" ingest bench.k "$OUT/base-$N.jsonl" --create-schema \
    "id long not null, name string, v long" --format-version 3 \
    --property write.upsert.mode=$m --parallelism 2 --quiet
  mv "$OUT/base-$m" "$D"
done
# PERSIST=false: the index table without write.upsert.index.persist, so a run's
# CPU is the build and the changes (a one-shot ingest persists the index on
# its first and its last commit: ~0.37 CPU s each at 10M keys, a fixed cost
# per run that the per-change figure should not carry)
if [ "${PERSIST:-true}" = false ] && [ ! -f "$OUT/base-index.pristine/.no-persist" ]; then
  rm -rf "$OUT/base-index"; cp -a "$OUT/base-index.pristine" "$OUT/base-index"
  "$FLOE" --dir "$OUT/base-index" table set bench.k write.upsert.index.persist=false >/dev/null
  touch "$OUT/base-index/.no-persist"
  rm -rf "$OUT/base-index.pristine"; mv "$OUT/base-index" "$OUT/base-index.pristine"
fi
UP=(--upsert --equality-fields id --rowkind-field op --parallelism 2 --distribution hash)
for rep in $(seq "$REP"); do
  for job in "index 1000" "index $C" "equality 1000" "equality $C"; do
    read -r m c <<<"$job"
    # the catalog names the table's files by absolute path: the copy takes the original's place
    rm -rf "$OUT/base-$m"; cp -a "$OUT/base-$m.pristine" "$OUT/base-$m"
    log=$OUT/run-$m-$c-$rep.log
    /usr/bin/time -f "%e %U %S %M" -o "$log.time" "$FLOE" --dir "$OUT/base-$m" -v ingest bench.k \
      "$OUT/ch-$c.jsonl" "${UP[@]}" 2>"$log" >/dev/null
    read -r wall user sys rss <"$log.time"
    ix=$(grep -o 'key index of snapshot.*' "$log" || true)
    echo "{\"mode\": \"$m\", \"rows\": $N, \"changes\": $c, \"wall_s\": $wall, \"cpu_s\": $(printf "%.2f" "$(echo "$user + $sys" | bc)"), \"rss_kb\": $rss, \"load\": $(cut -d' ' -f1 /proc/loadavg), \"index\": \"$ix\"}"
  done
done
