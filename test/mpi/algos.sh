#!/bin/sh
# test/mpi/algos.sh - test_algos (every forced algorithm of every collective,
# bit for bit, and deterministic mode across algorithms) on 1..8 ranks,
# oversubscribed. Forced algorithms that cannot run here fall back with a
# warning; HCCL_DEBUG=ERROR keeps those out of the log.
# HC_ALGOS_NPS="2 4" overrides the rank counts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${HC_ALGOS_NPS:=1 2 3 4 5 6 7 8}"
: "${HCCL_DEBUG:=ERROR}"
export HCCL_DEBUG
failed=
for np in $HC_ALGOS_NPS; do
    echo "=== test_algos on $np rank(s)"
    sh "$here/mpirun.sh" "$np" test_algos
    rc=$?
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || failed="$failed np=$np(rc=$rc)"
done
if [ -n "$failed" ]; then
    echo "algos.sh: FAILED:$failed"
    exit 1
fi
echo "algos.sh: all runs passed"
exit 0
