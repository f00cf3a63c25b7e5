#!/bin/sh
# test/mpi/rootinfo.sh - root-info bootstrap WITHOUT mpirun: test_rootinfo
# forks N processes (N = 1, 3, 4) that meet through HcclGetRootInfo /
# HcclCommInitRootInfo; then the error cases (bad arguments, bogus root
# info, absent peers) with HCCL_CONNECT_TIMEOUT=3, which must fail fast.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${HC_TEST_TIMEOUT:=120}"
prog=$top_builddir/test/mpi/test_rootinfo
if [ ! -x "$prog" ]; then
    echo "rootinfo.sh: $prog: no such program (not built?)" >&2
    exit 99
fi
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 10 $HC_TEST_TIMEOUT"
UCX_WARN_UNUSED_ENV_VARS=n
export UCX_WARN_UNUSED_ENV_VARS
failed=
for n in 1 3 4; do
    echo "+ $tmo $prog $n"
    $tmo "$prog" "$n"
    rc=$?
    [ $rc -eq 0 ] || failed="$failed n=$n(rc=$rc)"
done
echo "+ HCCL_CONNECT_TIMEOUT=3 $tmo $prog --errors"
HCCL_CONNECT_TIMEOUT=3 $tmo "$prog" --errors
rc=$?
[ $rc -eq 0 ] || failed="$failed errors(rc=$rc)"
if [ -n "$failed" ]; then
    echo "rootinfo.sh: FAILED:$failed"
    exit 1
fi
echo "rootinfo.sh: all runs passed"
exit 0
