#!/bin/sh
# test/mpi/examples3d.sh - examples/3d_parallel at 8 ranks (data 2 x tensor 2
# x pipeline 2, groups by HcclCommSplit; every result checked, and the
# splits must create no endpoint or buffer), and at 12 ranks as 3 x 2 x 2.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${HC_TEST_TIMEOUT:=120}"
export HC_TEST_TIMEOUT
prog=$top_builddir/examples/3d_parallel
failed=
echo "=== examples/3d_parallel on 8 ranks (2 x 2 x 2)"
sh "$here/mpirun.sh" 8 "$prog" -d 2 -t 2 -p 2 -s 5
rc=$?
[ $rc -eq 99 ] && exit 99
[ $rc -eq 0 ] || failed="$failed np=8(rc=$rc)"
echo "=== examples/3d_parallel on 12 ranks (3 x 2 x 2)"
sh "$here/mpirun.sh" 12 "$prog" -d 3 -t 2 -p 2 -s 3
rc=$?
[ $rc -eq 0 ] || failed="$failed np=12(rc=$rc)"
if [ -n "$failed" ]; then
    echo "examples3d.sh: FAILED:$failed"
    exit 1
fi
echo "examples3d.sh: all runs passed"
exit 0
