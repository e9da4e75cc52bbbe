#!/usr/bin/env bash
# Compiles the Flink peer job (target/classes) and writes its classpath
# (target/classpath.txt); Maven fetches the jars from Maven Central once.
set -euo pipefail
cd "$(dirname "$0")"
mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
