#!/usr/bin/env bash
# The key index's memory per key and lookups per second (bench/upsert/index_bench.c),
# in memory and spilled; needs the release build (cmake --preset release).
#   bench/upsert/index_bench.sh [keys]
set -euo pipefail
cd "$(dirname "$0")/../.."
cc -O2 -std=c17 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -DNDEBUG -Iinclude -Isrc \
  -Ibuild/release/gen bench/upsert/index_bench.c -o build/release/index_bench \
  build/release/libfloe.a -lz -lpthread -lm
build/release/index_bench "${1:-10000000}"
