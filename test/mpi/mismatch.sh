#!/bin/sh
# test/mpi/mismatch.sh - ranks that disagree on a collective's arguments
# (test_mismatch): no rank's memory is written outside its buffers, every
# call returns; with the single-copy algorithms forced (where a count
# mismatch used to write past a peer's buffer) and with the built-in
# table; with HCCL_CHECK_ARGS=1 every rank must fail with HCCL_E_PARA and
# write nothing, and the log must name the rank that disagrees (and, for
# ReduceScatterV, the block sizes).
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-mismatch.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=
run() { # NAME NP ARGS...: env set by the caller
    name=$1
    np=$2
    shift 2
    echo "=== $name: test_mismatch $* on $np ranks"
    sh "$here/mpirun.sh" "$np" test_mismatch "$@" >"$tmp/log" 2>&1
    rc=$?
    grep -v 'hcomm ERROR' "$tmp/log"
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || failed="$failed $name(rc=$rc)"
}
# a disagreement between schedules whose flags never meet ends at the
# deadline: keep it short
export HCCL_EXEC_TIMEOUT=1
HCCL_ALLREDUCE_ALGO=CMA HCCL_BCAST_ALGO=CMA HCCL_REDUCESCATTER_ALGO=CMA \
    HCCL_ALLGATHER_ALGO=CMA HCCL_ALLTOALL_ALGO=CMA run cma 2
HCCL_ALLREDUCE_ALGO=CMA HCCL_BCAST_ALGO=CMA HCCL_REDUCESCATTER_ALGO=CMA \
    HCCL_ALLGATHER_ALGO=CMA HCCL_ALLTOALL_ALGO=CMA run cma 3
# the built-in table at the large count (single copy, pipelines)
run default 2 -k /65536
HCCL_CHECK_ARGS=1 run check-args 3 -c
if ! grep -q 'HCCL_CHECK_ARGS): ranks disagree on the count: rank 0 passes count 3, type float32, op sum, root 0; rank 2 passes count 4' "$tmp/log"; then
    echo "mismatch.sh: no log line names rank 2's count in the AllReduce/count+1/3 case"
    failed="$failed check-args(log)"
fi
if ! grep -q 'HCCL_CHECK_ARGS): ranks disagree on the block sizes (sendCounts)' "$tmp/log"; then
    echo "mismatch.sh: no log line names ReduceScatterV's block sizes"
    failed="$failed check-args(log-v)"
fi
if [ -n "$failed" ]; then
    echo "mismatch.sh: FAILED:$failed"
    exit 1
fi
echo "mismatch.sh: all runs passed"
exit 0
