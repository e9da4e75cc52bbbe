#!/usr/bin/env bash
# Ingest side by side with the JVM peer floe replaces: floe `run` (bench/ingest's
# pipeline.yaml, zstd 3) and Flink 1.20 + Iceberg's FlinkSink (bench/peers/flink,
# one JVM, local MiniCluster) on the same JSON lines: same schema, day(ts), zstd 3,
# HASH distribution, 10 s checkpoints, format v2, a HadoopCatalog table on the Flink side.
#   bench/peers/run-flink.sh [records] [runs] [flink parallelism]   (default 1000000 3 2)
# MODE=upsert runs bench/upsert's stream instead (gen.py: records changes over
# records/5 keys, 80 % updates, identity(region)): floe `ingest --upsert` (v2,
# equality fields id,region, 4 writers, one commit at the end of the input) and
# FlinkSink in upsert mode (equality fields id,region, row kind from "op",
# 10 s checkpoints); both tables are counted with `floe scan --count`
# (PyIceberg does not apply equality deletes) against the final rows.
# Runs are interleaved (floe, Flink, floe, ...); each whole process runs under
# /usr/bin/time (CPU = user + sys, peak RSS); the table shows the medians. JVM
# start-up is measured apart: a 1,000-record run of each side. The 1-minute load
# average is recorded with every run (the machine may be shared). Ingest: both
# tables are read back with PyIceberg and must hold every record.
# Knobs: BENCH_OUT (bench/out/peers-flink), FLINK_JAVA_OPTS (e.g. -Xmx512m), FLOE.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
MODE=${MODE:-ingest}
RUNS=${2:-3}
P=${3:-2}
OUT=${BENCH_OUT:-bench/out/peers-flink}
PY=$PWD/.venv/bin/python
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# floe: a release build of the command, in a folder of its own
# (FLOE=<a release floe> skips the build)
if [ -z "${FLOE:-}" ]; then
  cmake -S . -B "$OUT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOE_TESTS=OFF -DFLOE_WERROR=OFF >/dev/null
  cmake --build "$OUT/build" --target floe -j 2 >/dev/null
  FLOE=$OUT/build/floe
fi
# Flink: compile the job, run it from target/classes + Maven's classpath
bench/peers/flink/build.sh >/dev/null
FLINK=(bench/peers/flink/run.sh)

data() { # records -> the JSON lines file, and P pieces of it for Flink (one reader per file)
  local n=$1 f=$OUT/$MODE-$1.jsonl
  if [ ! -f "$f.split" ]; then
    if [ "$MODE" = upsert ]; then
      [ -f "$f" ] || $PY bench/upsert/gen.py "$n" $(( n / 5 > 0 ? n / 5 : 1 )) "$f" >/dev/null
    else
      [ -f "$f" ] || $PY bench/ingest/gen_events.py "$n" "$f"
    fi
    rm -rf "$f.parts" && mkdir -p "$f.parts"
    if [ "$MODE" = upsert ]; then # by key: a key's changes stay in order, in one reader
      awk -v P="$P" -v d="$f.parts" '{ match($0, /"id":[0-9]+/); id = substr($0, RSTART + 5, RLENGTH - 5)
        print > sprintf("%s/part-%02d", d, id % P) }' "$f"
    else
      split -n "l/$P" -d -a 2 "$f" "$f.parts/part-"
    fi
    touch "$f.split"
  fi
  echo "$f"
}

timed() { # side run records cmd... -> one JSON line
  local side=$1 run=$2 n=$3; shift 3
  local t; t=$(mktemp)
  /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" >"$t.out"
  read -r wall user sys rss <"$t"
  rm -f "$t" "$t.out"
  echo "{\"side\": \"$side\", \"run\": $run, \"records\": $n, \"wall_s\": $wall, \"user_s\": $user, \"sys_s\": $sys, \"rss_kb\": $rss, \"load\": $(cut -d' ' -f1 /proc/loadavg)}"
}

rows_floe() { $PY -c "
from pyiceberg.catalog.sql import SqlCatalog
wh='$1/warehouse'
print(SqlCatalog('default', uri=f'sqlite:///{wh}/catalog.db', warehouse=f'file://{wh}').load_table('bench.events').scan().to_arrow().num_rows)"; }
rows_flink() { $PY -c "
import glob
from pyiceberg.table import StaticTable
m = sorted(glob.glob('$1/bench/events/metadata/v*.metadata.json'), key=lambda p: int(p.rsplit('/v', 1)[1].split('.')[0]))[-1]
print(StaticTable.from_metadata(m).scan().to_arrow().num_rows)"; }

one() { # side run records -> runs one side once, checks its rows, prints its JSON line
  local side=$1 run=$2 n=$3 f; f=$(data "$n")
  local d=$OUT/work-$side; rm -rf "$d" && mkdir -p "$d"
  if [ "$MODE" = upsert ]; then
    local want rows; want=$(wc -l <"$f.final.jsonl")
    if [ "$side" = floe ]; then
      timed floe "$run" "$n" "$FLOE" --dir "$d" ingest bench.up "$f" \
        --create-schema "id long not null, region string not null, name string, v long, ts long" \
        --partition-by region --format-version 2 --upsert --equality-fields id,region \
        --rowkind-field op --parallelism 4 --distribution hash --quiet
      rows=$("$FLOE" --dir "$d" scan bench.up --count)
    else
      timed "flink-p$P" "$run" "$n" "${FLINK[@]}" upsert "$d/warehouse" "$P" 10000 3 "$f.parts"/part-*
      rows=$("$FLOE" scan "$d/warehouse/bench/up" --count)
    fi
    [ "$rows" = "$want" ] || { echo "$side: $rows rows, expected $want" >&2; exit 1; }
    return
  fi
  if [ "$side" = floe ]; then
    sed "s|INPUT|$f|; s|LEVEL|3|" bench/ingest/pipeline.yaml >"$d/pipeline.yaml"
    timed floe "$run" "$n" "$FLOE" --dir "$d" run "$d/pipeline.yaml" --quiet
    local rows; rows=$(rows_floe "$d")
  else
    timed "flink-p$P" "$run" "$n" "${FLINK[@]}" ingest "$d/warehouse" "$P" 10000 3 "$f.parts"/part-*
    local rows; rows=$(rows_flink "$d/warehouse")
  fi
  [ "$rows" = "$n" ] || { echo "$side wrote $rows rows, expected $n" >&2; exit 1; }
}

RES=$OUT/results-$MODE.jsonl
: >"$RES"
for run in $(seq 1 "$RUNS"); do
  for side in floe flink; do
    one "$side" "$run" 1000 | sed 's/"side": "\([^"]*\)"/"side": "\1-startup"/' | tee -a "$RES"
    one "$side" "$run" "$N" | tee -a "$RES"
  done
done
$PY - "$RES" "$MODE" <<'PYEOF'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
def med(side, key):
    return statistics.median(key(r) for r in rs if r["side"] == side)
cpu = lambda r: r["user_s"] + r["sys_s"]
sides = sorted({r["side"] for r in rs if not r["side"].endswith("-startup")}, key=lambda s: s != "floe")
n = next(r["records"] for r in rs if r["side"] == sides[0])
print(f"{n:,} {'changes (upsert)' if sys.argv[2] == 'upsert' else 'records'}, median of {len({r['run'] for r in rs})} interleaved runs; "
      f"1-min load during the runs {min(r['load'] for r in rs):.1f}-{max(r['load'] for r in rs):.1f} (2 cores)\n")
print("| side | records per CPU s | net of start-up | CPU s | wall s | peak RSS | start-up (1,000 records): CPU s, peak RSS |")
print("|---|---|---|---|---|---|---|")
rate = {}
for s in sides:
    c = med(s, cpu); rate[s] = n / c; su = med(s + '-startup', cpu)
    net = f"{n / (c - su) / 1000:,.1f}K" if c > su else "-"
    print(f"| {s} | {rate[s]/1000:,.1f}K | {net} | {c:.2f} | {med(s, lambda r: r['wall_s']):.2f} | "
          f"{med(s, lambda r: r['rss_kb'])/1024:,.0f} MiB | "
          f"{med(s + '-startup', cpu):.2f}, {med(s + '-startup', lambda r: r['rss_kb'])/1024:,.0f} MiB |")
for s in sides[1:]:
    print(f"\nfloe / {s}: {rate['floe']/rate[s]:.1f}x records per CPU s")
PYEOF
