#!/bin/sh
# Configure and build hcomm in ./_build (VPATH), reusing an existing build.
# Extra arguments go to configure (e.g. --with-cuda).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure "$@"
make -j"$(nproc)"
