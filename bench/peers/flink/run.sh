#!/usr/bin/env bash
# Runs the Flink peer job (FlinkIngest; see its header for the arguments) in one
# JVM with the module flags of Flink's own env.java.opts.all (Flink 1.20 on
# Java 17). Build it first with build.sh. FLINK_JAVA_OPTS adds JVM options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
opens=()
for p in java.lang java.net java.io java.nio sun.nio.ch java.lang.reflect java.text java.time \
         java.util java.util.concurrent java.util.concurrent.atomic java.util.concurrent.locks; do
  opens+=("--add-opens=java.base/$p=ALL-UNNAMED")
done
# shellcheck disable=SC2086
exec java --add-exports=java.base/sun.net.util=ALL-UNNAMED \
  --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED \
  --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED "${opens[@]}" \
  ${FLINK_JAVA_OPTS:-} -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" \
  floe.peers.FlinkIngest "$@"
