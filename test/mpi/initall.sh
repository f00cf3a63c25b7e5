#!/bin/sh
# test/mpi/initall.sh - HcclCommInitAll with 2, 3 and 4 ranks in one process,
# one thread a rank (test_initall.c); no MPI.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${HC_TEST_TIMEOUT:=300}"
prog=$top_builddir/test/mpi/test_initall
if [ ! -x "$prog" ]; then
    echo "initall.sh: $prog: no such program (not built?)" >&2
    exit 99
fi
exec timeout -k 10 "$HC_TEST_TIMEOUT" "$prog" 2 3 4
