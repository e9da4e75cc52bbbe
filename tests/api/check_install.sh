#!/usr/bin/env bash
# cmake --install into a temporary prefix gives a working floe command, the
# headers and libfloe.a with a pkg-config file; a program using only
# floe/floe.h builds against the installed prefix and runs.
#   check_install.sh <build dir> <source dir>
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d /tmp/floe-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
test -x "$prefix/bin/floe"
"$prefix/bin/floe" --version
test -f "$prefix/include/floe/floe.h"
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
