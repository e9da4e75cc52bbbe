#!/usr/bin/env bash
# S3 benchmark (issue 14): floe ingest and scan on the tests' S3 server (SigV4
# checked on every request) against the same on local disk, PyIceberg on the
# same server, S3 requests per committed file, memory of multipart uploads.
#   bench/s3/run.sh [records] [runs]          (default 1000000 records, 3 runs)
# FLOE_BIN / S3_TOOL: use these builds instead of building a release here.
# Results in bench/out/s3/results.jsonl, the medians on stdout (bench/RESULTS.md
# keeps them). The 1M-record fault soak is bench/s3/soak.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
RUNS=${2:-3}
OUT=${BENCH_OUT:-bench/out/s3}
PY=$PWD/.venv/bin/python
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [ -z "${FLOE_BIN:-}" ] || [ -z "${S3_TOOL:-}" ]; then
  cmake -S . -B "$OUT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOE_WERROR=OFF >/dev/null
  cmake --build "$OUT/build" --target floe s3_tool -j 2 >/dev/null
fi
FLOE=${FLOE_BIN:-$OUT/build/floe}
TOOL=${S3_TOOL:-$OUT/build/tests/s3_tool}
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), floe $("$FLOE" --version 2>&1 | head -1)" >&2
exec "$PY" bench/s3/bench_s3.py "$FLOE" "$TOOL" "$OUT" "$N" "$RUNS"
