#!/usr/bin/env bash
# Index mode vs equality mode (issue 12). The stream of gen.py (N changes over
# K keys, 4 partitions) ingested as v3 upserts
#   - throughput: one `floe ingest --upsert` of the whole stream per mode
#     (records per CPU second, RSS);
#   - read amplification: the stream committed in C checkpoints (one ingest per
#     chunk) per mode, scanned by `floe scan` (best of 3) against a clean table
#     of the same final rows;
#   - convert-deletes on each equality-mode table: MB/s of data files read per
#     CPU second and the scan time after.
#   - each index-mode table again after the maintenance a pipeline embeds
#     (`floe maintain --steps compact,rewrite-manifests`);
#   - DuckDB (readers.py) and Java (tests/java peer, `count`) read the clean
#     table and each index-mode table before and after that maintenance
#     (READERS="floe duckdb java" by default; CPU seconds are the figures to
#     compare on a loaded machine).
#   bench/upsert/index.sh [changes] [keys] [checkpoint counts...]
# REPS=n repeats the throughput ingests n times, the modes interleaved (take
# medians on a loaded machine); THROUGHPUT_ONLY=1 stops after them.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-200000}
K=${2:-40000}
shift 2 || true
CKPTS=${*:-10 50 200}
OUT=${BENCH_OUT:-bench/out/upsert-index}
PY=$PWD/.venv/bin/python
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
FLOE=${FLOE:-$PWD/build/release/floe}
DATA=$OUT/changes-$N-$K.jsonl
[ -f "$DATA" ] || $PY bench/upsert/gen.py "$N" "$K" "$DATA" $CKPTS
SCHEMA="id long not null, region string not null, name string, v long, ts long"
UP=(--upsert --equality-fields id,region --rowkind-field op --parallelism 2 --distribution hash --quiet)
RES=$OUT/results.jsonl
: >"$RES"
FINAL=$(wc -l <"$DATA.final.jsonl")
READERS=${READERS:-floe duckdb java}
has() { case " $READERS " in *" $1 "*) return 0;; esac; return 1; }
JAVA_CP="$PWD/tests/java/target/floe-java-peer-1.jar:$PWD/tests/java/target/lib/*"
meta() { # dir -> metadata location of bench.up
  $PY -c "
from pyiceberg.catalog.sql import SqlCatalog
wh='$1/warehouse'
print(SqlCatalog('default', uri=f'sqlite:///{wh}/catalog.db', warehouse=f'file://{wh}').load_table('bench.up').metadata_location)"
}
readers() { # dir label: DuckDB and Java lines
  if has duckdb; then
    for r in 1 2 3; do $PY bench/upsert/readers.py "$(meta "$1")" "$2" 1; done | tee -a "$RES"
  fi
  if has java; then
    j=$(java -cp "$JAVA_CP" floe.Peer count "$1/warehouse/catalog.db" "file://$1/warehouse" bench.up 3)
    echo "{\"reader\": \"java\", \"table\": \"$2\", \"result\": $j}" | tee -a "$RES"
  fi
}
mode_props() { [ "$1" = index ] && echo "--property write.upsert.mode=index" || true; }

scan_best() { # dir -> "wall cpu"
  local best="" bcpu=""
  for r in 1 2 3; do
    tf=$(mktemp)
    n=$(/usr/bin/time -f "%e %U %S" -o "$tf" "$FLOE" --dir "$1" scan bench.up --columns id,v --format csv | wc -l)
    read -r wall user sys <"$tf"; rm -f "$tf"
    [ $((n - 1)) = "$FINAL" ] || { echo "$1: $((n - 1)) rows, want $FINAL" >&2; exit 1; }
    c=$(printf "%.2f" "$(echo "$user + $sys" | bc)")
    if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc)" = 1 ]; then best=$wall; fi
    if [ -z "$bcpu" ] || [ "$(echo "$c < $bcpu" | bc)" = 1 ]; then bcpu=$c; fi
  done
  echo "$best $bcpu"
}
files_of() {
  "$FLOE" --dir "$1" inspect bench.up files --format json | $PY -c "
import sys, json, collections
c = collections.Counter(json.loads(l)['content'] for l in sys.stdin)
print(json.dumps({'data_files': c[0], 'pos_delete_files': c[1], 'eq_delete_files': c[2]}))"
}

for rep in $(seq "${REPS:-1}"); do
  for mode in equality index; do
    D=$OUT/tp-$mode; rm -rf "$D"; mkdir -p "$D"
    t=$(mktemp)
    # shellcheck disable=SC2046
    /usr/bin/time -f "%e %U %S %M" -o "$t" "$FLOE" --dir "$D" ingest bench.up "$DATA" \
      --create-schema "$SCHEMA" --partition-by region --format-version 3 $(mode_props $mode) "${UP[@]}"
    read -r wall user sys rss <"$t"; rm -f "$t"
    echo "{\"ingest\": \"$mode\", \"changes\": $N, \"wall_s\": $wall, \"cpu_s\": $(printf "%.2f" "$(echo "$user + $sys" | bc)"), \"rss_kb\": $rss, \"load\": $(cut -d' ' -f1 /proc/loadavg)}" | tee -a "$RES"
  done
done
[ -z "${THROUGHPUT_ONLY:-}" ] || exit 0

D=$OUT/clean; rm -rf "$D"; mkdir -p "$D"
"$FLOE" --dir "$D" ingest bench.up "$DATA.final.jsonl" --create-schema "$SCHEMA" \
  --partition-by region --format-version 3 --parallelism 2 --quiet
read -r w c < <(scan_best "$D")
echo "{\"reader\": \"floe\", \"table\": \"clean\", \"seconds\": $w, \"cpu_seconds\": $c}" | tee -a "$RES"
readers "$D" clean
for c in $CKPTS; do
  # the final rows in c appends: the clean table with the same commits and small
  # files (c checkpoints x 4 partitions), so the ratio against it is what the
  # upserts cost a reader, apart from the small files compaction removes
  D=$OUT/ckpt-$c-clean; rm -rf "$D" "$D.chunks"; mkdir -p "$D" "$D.chunks"
  split -n "l/$c" -d -a 4 "$DATA.final.jsonl" "$D.chunks/part-"
  first=1
  for f in "$D.chunks"/part-*; do
    [ -s "$f" ] || continue
    if [ $first = 1 ]; then
      "$FLOE" --dir "$D" ingest bench.up "$f" --create-schema "$SCHEMA" --partition-by region \
        --format-version 3 --pipeline-id amp --parallelism 2 --distribution hash --quiet
      first=0
    else
      "$FLOE" --dir "$D" ingest bench.up "$f" --pipeline-id amp --parallelism 2 \
        --distribution hash --quiet
    fi
  done
  read -r w cpu < <(scan_best "$D")
  echo "{\"reader\": \"floe\", \"table\": \"ckpt-$c-clean\", \"seconds\": $w, \"cpu_seconds\": $cpu, \"files\": $(files_of "$D")}" | tee -a "$RES"
  readers "$D" "ckpt-$c-clean"
  for mode in equality index; do
    D=$OUT/ckpt-$c-$mode; rm -rf "$D"; mkdir -p "$D"
    first=1
    t0=$(date +%s.%N)
    for f in "$DATA.chunks/$c"/*.jsonl; do
      if [ $first = 1 ]; then
        # shellcheck disable=SC2046
        "$FLOE" --dir "$D" ingest bench.up "$f" --create-schema "$SCHEMA" --partition-by region \
          --format-version 3 --pipeline-id amp $(mode_props $mode) "${UP[@]}"
        first=0
      else
        "$FLOE" --dir "$D" ingest bench.up "$f" --pipeline-id amp "${UP[@]}"
      fi
    done
    t1=$(date +%s.%N)
    read -r w cpu < <(scan_best "$D")
    echo "{\"reader\": \"floe\", \"table\": \"ckpt-$c-$mode\", \"seconds\": $w, \"cpu_seconds\": $cpu, \"ingest_s\": $(echo "$t1 - $t0" | bc), \"files\": $(files_of "$D")}" | tee -a "$RES"
    if [ $mode = index ]; then
      readers "$D" "ckpt-$c-index"
      "$FLOE" --dir "$D" maintain bench.up --steps compact,rewrite-manifests --quiet
      read -r w cpu < <(scan_best "$D")
      echo "{\"reader\": \"floe\", \"table\": \"ckpt-$c-index-maintained\", \"seconds\": $w, \"cpu_seconds\": $cpu, \"files\": $(files_of "$D")}" | tee -a "$RES"
      readers "$D" "ckpt-$c-index-maintained"
    fi
    if [ $mode = equality ]; then
      t=$(mktemp)
      /usr/bin/time -f "%U %S" -o "$t" "$FLOE" --dir "$D" maintain bench.up --steps convert-deletes --format json >"$t.json"
      read -r user sys <"$t"
      cv=$($PY -c "import json; print(json.dumps(json.load(open('$t.json'))['convert_deletes']))")
      rm -f "$t" "$t.json"
      read -r w2 cpu2 < <(scan_best "$D")
      echo "{\"convert_deletes\": \"ckpt-$c\", \"cpu_s\": $(printf "%.2f" "$(echo "$user + $sys" | bc)"), \"result\": $cv, \"scan_after_s\": $w2, \"scan_after_cpu_s\": $cpu2, \"files_after\": $(files_of "$D")}" | tee -a "$RES"
    fi
  done
done
