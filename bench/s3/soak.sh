#!/bin/sh
# The 1M-record S3 fault soak (issue 14 acceptance), see soak.py.
# Needs the release build (cmake --preset release && cmake --build --preset release --target floe)
# and the test virtualenv (scripts/setup). Usage: bench/s3/soak.sh [records]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py="$root/.venv/bin/python"
[ -x "$py" ] || py=python3
echo "load: $(cat /proc/loadavg)" >&2
exec "$py" "$here/soak.py" "$@"
