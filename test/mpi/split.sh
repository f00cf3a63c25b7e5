#!/bin/sh
# test/mpi/split.sh - test_split (HcclCommSplit / HcclCommCreateGroup /
# HcclCreateSubCommConfig: semantics against MPI_Comm_split, concurrency of
# parent and children, no endpoint or buffer created, memory per
# communicator, errors) at 1, 2, 3, 4 and 8 ranks. HC_SPLIT_NPS overrides.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${HC_SPLIT_NPS:=1 2 3 4 8}"
: "${HC_TEST_TIMEOUT:=120}"
export HC_TEST_TIMEOUT
failed=
for np in $HC_SPLIT_NPS; do
    echo "=== test_split on $np rank(s)"
    sh "$here/mpirun.sh" "$np" test_split
    rc=$?
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || failed="$failed np=$np(rc=$rc)"
done
if [ -n "$failed" ]; then
    echo "split.sh: FAILED:$failed"
    exit 1
fi
echo "split.sh: all runs passed"
exit 0
