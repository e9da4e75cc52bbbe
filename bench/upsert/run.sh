#!/usr/bin/env bash
# Upsert benchmark (issue 11): a change stream of N changes (default 1,000,000:
# 80 % updates over 200,000 keys, 4 partitions; gen.py) ingested in upsert mode
#   - by floe (`floe ingest --upsert`, 4 writer tasks, one checkpoint at the end
#     of the input; v2: equality + position deletes, v3: equality deletes + DVs),
#   - by PyIceberg's Table.upsert (batches of 100,000 changes, copy-on-write);
# records per CPU second and peak RSS from /usr/bin/time. Then read
# amplification: the same stream committed in 10, 50 and 200 checkpoints
# (one `floe ingest --upsert` per chunk), each table scanned by floe (`floe
# scan --count`), DuckDB (count + sum, best of 3) and Java (IcebergGenerics in
# one JVM, best of 3), against a clean table holding the same final rows.
#   bench/upsert/run.sh [changes] [keys] [checkpoint counts...]
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
K=${2:-200000}
shift 2 || true
CKPTS=${*:-10 50 200}
OUT=${BENCH_OUT:-bench/out/upsert}
PY=$PWD/.venv/bin/python
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cmake -S . -B "$OUT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOE_TESTS=OFF -DFLOE_WERROR=OFF >/dev/null
cmake --build "$OUT/build" --target floe -j 2 >/dev/null
FLOE=$OUT/build/floe
DATA=$OUT/changes-$N-$K.jsonl
[ -f "$DATA" ] || $PY bench/upsert/gen.py "$N" "$K" "$DATA" $CKPTS
SCHEMA="id long not null, region string not null, name string, v long, ts long"
UP=(--upsert --equality-fields id,region --rowkind-field op --parallelism 4 --distribution hash --quiet)
JAVA_CP="$PWD/tests/java/target/floe-java-peer-1.jar:$PWD/tests/java/target/lib/*"
REUSE=${REUSE:-0} # 1: keep the tables of an earlier run, only read them again
RES=$OUT/results.jsonl
[ "$REUSE" = 1 ] && RES=$OUT/results-reads-$(date +%s).jsonl
: >"$RES"

timed() { # label cmd... -> one JSON line
  local label=$1; shift
  local t; t=$(mktemp)
  /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" >/dev/null
  read -r wall user sys rss <"$t"; rm -f "$t"
  echo "{\"side\": \"$label\", \"changes\": $N, \"wall_s\": $wall, \"user_s\": $user, \"sys_s\": $sys, \"rss_kb\": $rss, \"load\": \"$(cut -d' ' -f1 /proc/loadavg)\"}" | tee -a "$RES"
}
meta() { # dir table -> metadata location
  $PY -c "
from pyiceberg.catalog.sql import SqlCatalog
wh='$1/warehouse'
print(SqlCatalog('default', uri=f'sqlite:///{wh}/catalog.db', warehouse=f'file://{wh}').load_table('$2').metadata_location)"
}

# ---- ingest -------------------------------------------------------------------------------
FINAL=$(wc -l <"$DATA.final.jsonl")
for fv in 2 3; do
  [ "$REUSE" = 1 ] && break
  D=$OUT/floe-v$fv; rm -rf "$D"; mkdir -p "$D"
  timed "floe-v$fv" "$FLOE" --dir "$D" ingest bench.up "$DATA" --create-schema "$SCHEMA" \
    --partition-by region --format-version $fv "${UP[@]}"
  rows=$("$FLOE" --dir "$D" scan bench.up --count)
  [ "$rows" = "$FINAL" ] || { echo "floe v$fv: $rows rows, want $FINAL" >&2; exit 1; }
done
if [ "${PYICEBERG:-1}" = 1 ] && [ "$REUSE" != 1 ]; then
  D=$OUT/pyiceberg; rm -rf "$D"; mkdir -p "$D"
  timed pyiceberg "$PY" bench/upsert/bench_pyiceberg.py "$DATA" "$D"
fi

# ---- read amplification ---------------------------------------------------------------------
D=$OUT/clean
[ "$REUSE" = 1 ] || { rm -rf "$D"; mkdir -p "$D"; "$FLOE" --dir "$D" ingest bench.up "$DATA.final.jsonl" --create-schema "$SCHEMA" \
  --partition-by region --format-version 2 --parallelism 4 --quiet; }
tables="clean"
for c in $CKPTS; do
  tables="$tables ckpt-$c"
  [ "$REUSE" = 1 ] && continue
  D=$OUT/ckpt-$c; rm -rf "$D"; mkdir -p "$D"
  first=1
  for f in "$DATA.chunks/$c"/*.jsonl; do
    if [ $first = 1 ]; then
      "$FLOE" --dir "$D" ingest bench.up "$f" --create-schema "$SCHEMA" --partition-by region \
        --format-version 2 --pipeline-id amp "${UP[@]}"
      first=0
    else
      "$FLOE" --dir "$D" ingest bench.up "$f" --pipeline-id amp "${UP[@]}"
    fi
  done
done
READERS=${READERS:-floe duckdb java}
has() { case " $READERS " in *" $1 "*) return 0;; esac; return 1; }
for tb in $tables; do
  D=$OUT/$tb
  files=$("$FLOE" --dir "$D" inspect bench.up files --format json | $PY -c "
import sys, json, collections
c = collections.Counter(json.loads(l)['content'] for l in sys.stdin)
print(json.dumps({'data_files': c[0], 'pos_delete_files': c[1], 'eq_delete_files': c[2]}))")
  best=""; bcpu=""
  for r in $(has floe && echo 1 2 3); do
    tf=$(mktemp)
    # every row read (a --count of a table without deletes comes from the manifests)
    n=$(/usr/bin/time -f "%e %U %S" -o "$tf" "$FLOE" --dir "$D" scan bench.up --columns id,v --format csv | wc -l)
    n=$((n - 1))
    read -r wall user sys <"$tf"; rm -f "$tf"
    c=$(echo "$user + $sys" | bc)
    if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc)" = 1 ]; then best=$wall; fi
    if [ -z "$bcpu" ] || [ "$(echo "$c < $bcpu" | bc)" = 1 ]; then bcpu=$c; fi
  done
  if has floe; then
  [ "$n" = "$FINAL" ] || { echo "$tb: floe reads $n rows, want $FINAL" >&2; exit 1; }
  echo "{\"reader\": \"floe\", \"table\": \"$tb\", \"rows\": $n, \"seconds\": $best, \"cpu_seconds\": $(printf '%.2f' "$bcpu"), \"files\": $files}" | tee -a "$RES"
  fi
  if has duckdb; then
    timeout "${READ_TIMEOUT:-900}" $PY bench/upsert/readers.py "$(meta "$D" bench.up)" "$tb" "${DUCK_REPEATS:-1}" | tee -a "$RES" ||
      echo "{\"reader\": \"duckdb\", \"table\": \"$tb\", \"timeout_s\": ${READ_TIMEOUT:-900}}" | tee -a "$RES"
  fi
  has java || continue
  if j=$(timeout "${READ_TIMEOUT:-900}" java -cp "$JAVA_CP" floe.Peer count "$D/warehouse/catalog.db" "file://$D/warehouse" bench.up "${JAVA_REPEATS:-2}"); then
    echo "{\"reader\": \"java\", \"table\": \"$tb\", \"result\": $j}" | tee -a "$RES"
  else
    echo "{\"reader\": \"java\", \"table\": \"$tb\", \"timeout_s\": ${READ_TIMEOUT:-900}}" | tee -a "$RES"
  fi
done
