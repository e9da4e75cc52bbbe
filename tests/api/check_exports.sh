#!/usr/bin/env bash
# The library exports exactly its public API: every global function symbol
# with default visibility in libfloe.a is declared in include/floe/, and
# every function declared there (FLOE_EXPORT) is defined with default
# visibility. Everything else is hidden (C_VISIBILITY_PRESET hidden).
#   check_exports.sh <libfloe.a> <include dir>
set -euo pipefail
lib=$1 inc=$2
exported=$(readelf -sW "$lib" | awk '$4 == "FUNC" && $5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" {print $8}' | sort -u)
declared=$(grep -hoE 'FLOE_EXPORT [^(]*\bfloe_[a-z0-9_]+\(' "$inc"/floe/*.h | grep -oE 'floe_[a-z0-9_]+\($' | tr -d '(' | sort -u)
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
fail=0
if [ -n "$extra" ]; then
  echo "exported but not in include/floe (mark them static or hidden, or declare them public):"
  echo "$extra" | sed 's/^/  /'
  fail=1
fi
if [ -n "$missing" ]; then
  echo "declared FLOE_EXPORT in include/floe but not exported by $lib:"
  echo "$missing" | sed 's/^/  /'
  fail=1
fi
[ $fail = 0 ] && echo "exports: $(echo "$exported" | wc -l) public functions, nothing else"
exit $fail
