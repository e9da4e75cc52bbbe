#!/usr/bin/env bash
# Kafka -> Iceberg side by side with the JVM peers floe replaces, on one local
# Apache Kafka broker (tests/kafka/broker.py, KRaft) and one 6-partition topic of
# bench/kafka's ~300-byte JSON records: floe `run` (parallelism 2, 10 s
# checkpoints, bounded at the latest offsets), Flink 1.20's KafkaSource +
# Iceberg's FlinkSink (bench/peers/flink, kafka mode: same schema, unpartitioned,
# zstd 3, distribution none, 10 s checkpoints, parallelism 2, bounded) and the
# Iceberg Kafka Connect sink in a standalone Connect worker
# (bench/peers/kafka_connect.py: 2 tasks, 10 s commits). Interleaved runs,
# medians; CPU seconds and peak RSS of each process; JVM start-up apart (each
# side on a 1,000-record topic); the load average at each run. The work is
# bench/kafka/run.py's `--only peers`; results in $BENCH_OUT/results.jsonl.
#   bench/peers/run-kafka.sh [records] [runs] [peers]   (default 1000000 3 flink,connect)
# Knobs: BENCH_OUT (bench/out/kafka-peers), FLOE (a release floe: skips the build).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
RUNS=${2:-3}
PEERS=${3:-flink,connect}
export BENCH_OUT=${BENCH_OUT:-bench/out/kafka-peers}
mkdir -p "$BENCH_OUT"
if [ -z "${FLOE:-}" ]; then
  cmake -S . -B "$BENCH_OUT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOE_TESTS=OFF -DFLOE_WERROR=OFF >/dev/null
  cmake --build "$BENCH_OUT/build" --target floe -j 2 >/dev/null
  FLOE=$BENCH_OUT/build/floe
fi
exec .venv/bin/python bench/kafka/run.py --only peers --records "$N" --runs "$RUNS" --peers "$PEERS" --floe "$FLOE"
