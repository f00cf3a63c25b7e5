#!/bin/sh
# usage: tools/build.sh [CONFIGURE-ARGUMENTS]   (HC_BUILD_DIR=DIR: build there)
# Configure and build hcomm in ./_build (VPATH), reusing an existing build.
# Extra arguments go to configure (e.g. --with-cuda).
# HC_BUILD_DIR names another build directory (e.g. _build_asan for
# --enable-sanitizers): an existing one keeps its configuration.
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -x configure ] || autoreconf -fi
: "${HC_BUILD_DIR:=_build}"
mkdir -p "$HC_BUILD_DIR"
cd "$HC_BUILD_DIR"
[ -f Makefile ] || "$top/configure" "$@"
make -j"$(nproc)"
