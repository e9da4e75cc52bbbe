#!/usr/bin/env bash
# cmake --install into a temporary prefix gives a working floe command, the
# headers and libfloe.a with a pkg-config file, the shell completions and
# the man page;
# the installed floe runs the demo's pipeline (smaller) from the PATH; a
# program using only floe/floe.h builds against the installed prefix and runs.
#   check_install.sh <build dir> <source dir>
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d /tmp/floe-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
test -x "$prefix/bin/floe"
"$prefix/bin/floe" --version
test -f "$prefix/include/floe/floe.h"
test -s "$prefix/share/bash-completion/completions/floe"
test -s "$prefix/share/zsh/site-functions/_floe"
# the man page: roff made from the command table, every command in it
man1=$(find "$prefix" -path '*/man1/floe.1')
head -2 "$man1" | grep -q '^\.TH FLOE 1'
for c in ingest run scan maintain doctor sql; do grep -q "^\.SS \"floe $c\"" "$man1"; done
if command -v groff > /dev/null; then groff -man -Tutf8 -ww -z "$man1"; fi
# the demo's pipeline (scripts/demo's own file, 5,000 rows), run by the
# installed floe found on the PATH; then the next commands the demo prints,
# from another folder
run="$prefix/demo"
mkdir -p "$run"
sed -n "/^cat > pipeline.yaml <<'YAML'$/,/^YAML$/p" "$src/scripts/demo" | sed '1d;$d' |
  sed 's/number-of-rows: 100000/number-of-rows: 5000/; s/rows-per-second: 25000/rows-per-second: 100000/' \
  > "$run/pipeline.yaml"
grep -q 'number-of-rows: 5000' "$run/pipeline.yaml"
export PATH="$prefix/bin:$PATH"
(cd "$run" && floe run pipeline.yaml --quiet && test "$(floe scan demo.events --count)" = 5000)
root=$src
sed -n '/^== next:/,/^NEXT$/p' "$src/scripts/demo" | grep '^  floe ' | sed 's/ *#.*$//' |
  while IFS= read -r line; do
    (cd / && eval "$line" > /dev/null) || { echo "demo's next command failed: $line" >&2; exit 1; }
  done
pc=$(find "$prefix" -name floe.pc)
test -n "$pc"
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs floe)
# the same sanitizer flags as the build, if any (the library needs their runtime)
extra=()
syms=$(nm "$prefix"/lib*/libfloe.a 2>/dev/null || true)
case $syms in *__asan_init*) extra+=(-fsanitize=address,undefined) ;; esac
case $syms in *__tsan_init*) extra+=(-fsanitize=thread) ;; esac
cc -std=c17 -Wall -Werror "${extra[@]}" -o "$prefix/api" "$src/tests/api/test_public_api.c" $flags
"$prefix/api"
echo "install: ok ($prefix)"
