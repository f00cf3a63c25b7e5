#!/bin/sh
# Configure and build hcomm in ./_build (VPATH), reusing an existing build.
# Extra arguments go to configure (e.g. --with-cuda).
# HC_BUILD_DIR names another build directory (e.g. _build_asan for
# --enable-sanitizers): an existing one keeps its configuration.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -x configure ] || autoreconf -fi
: "${HC_BUILD_DIR:=_build}"
mkdir -p "$HC_BUILD_DIR"
cd "$HC_BUILD_DIR"
[ -f Makefile ] || "$top/configure" "$@"
make -j"$(nproc)"
