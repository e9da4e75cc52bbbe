#!/usr/bin/env bash
# What a restart of an index-mode pipeline costs (issue 12, persisted key
# index): a table of N rows (one long key, v3, index mode), then
#   build:   one `floe ingest --upsert` of 1,000 changes with
#            write.upsert.index.persist=false (the index built from the table);
#   persist: the same with persistence on (built, then written with the commit);
#   load:    a second ingest of 1,000 changes after the persisting one (the
#            index loaded from the Puffin blob the last commit names).
# Release build. Prints CPU seconds (user + sys), RSS, the load average and
# the index's log lines; the persisted file's size.
#   bench/upsert/index_restart.sh [rows] [repeats]
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
REP=${2:-2}
OUT=${BENCH_OUT:-bench/out/upsert-index-restart}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
FLOE=${FLOE:-$PWD/build/release/floe}
PY=$PWD/.venv/bin/python
[ -f "$OUT/base-$N.jsonl" ] || $PY bench/upsert/gen_keys.py "$N" "$OUT/base-$N.jsonl" base
[ -f "$OUT/a-1000.jsonl" ] || $PY bench/upsert/gen_keys.py 1000 "$OUT/a-1000.jsonl" ch "$N"
[ -f "$OUT/b-1000.jsonl" ] || cp "$OUT/a-1000.jsonl" "$OUT/b-1000.jsonl"
D=$OUT/base-$N.pristine
if [ ! -d "$D" ]; then
  rm -rf "$OUT/base"; mkdir -p "$OUT/base"
  "$FLOE" --dir "$OUT/base" ingest bench.k "$OUT/base-$N.jsonl" --create-schema \
    "id long not null, name string, v long" --format-version 3 \
    --property write.upsert.mode=index --parallelism 2 --quiet
  mv "$OUT/base" "$D"
fi
UP=(--upsert --equality-fields id --rowkind-field op --parallelism 2 --distribution hash
    --pipeline-id bench)
run() { # name input extra...
  local name=$1 in=$2; shift 2
  local log=$OUT/run-$name-$rep.log
  /usr/bin/time -f "%e %U %S %M" -o "$log.time" "$FLOE" --dir "$OUT/base" -v ingest bench.k \
    "$in" "${UP[@]}" "$@" 2>"$log" >/dev/null
  read -r wall user sys rss <"$log.time"
  ix=$(grep -o 'key index \(of snapshot\|loaded from\|persisted to\).*' "$log" | tr '\n' ' ' | tr -d '"' || true)
  echo "{\"run\": \"$name\", \"rows\": $N, \"wall_s\": $wall, \"cpu_s\": $(echo "$user + $sys" | bc), \"rss_kb\": $rss, \"load\": $(cut -d' ' -f1 /proc/loadavg), \"index\": \"$ix\"}"
}
for rep in $(seq "$REP"); do
  # the catalog names the table's files by absolute path: the copy takes the original's place
  rm -rf "$OUT/base"; cp -a "$D" "$OUT/base"
  run build "$OUT/a-1000.jsonl" --property write.upsert.index.persist=false
  rm -rf "$OUT/base"; cp -a "$D" "$OUT/base"
  run persist "$OUT/a-1000.jsonl"
  run load "$OUT/b-1000.jsonl"
  ls -l "$OUT"/base/warehouse/bench/k/metadata/floe-key-index-*.puffin 2>/dev/null | awk '{print "index file bytes:", $5}'
done
