#!/bin/sh
# test/mpi/fusion.sh - HcclAllReduceMulti and group fusion (test_fusion):
# 2 ranks with the defaults, 3 ranks with 64 KB buckets (tensors cross the
# bucket size, several buckets in flight), 2 ranks without copy overlap
# (HCCL_OVERLAP_MEMCPY=0: one unit at a time). These three run the gathered
# plan (DIRECT on the tensors in place); two runs with
# HCCL_ALLREDUCE_ALGO=RING run the packing plan, and 4 ranks declared on
# two hosts (two-hosts.topo) the plan for messages between hosts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${HC_TEST_TIMEOUT:=120}"
export HC_TEST_TIMEOUT
failed=
run() { # label np [env assignments...]
    label=$1 np=$2
    shift 2
    echo "=== $label"
    env "$@" sh "$here/mpirun.sh" "$np" test_fusion
    rc=$?
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || failed="$failed $label(rc=$rc)"
}
run "np=2" 2
run "np=3 HCCL_FUSION_THRESHOLD=64KB" 3 HCCL_FUSION_THRESHOLD=64KB
run "np=2 HCCL_OVERLAP_MEMCPY=0" 2 HCCL_OVERLAP_MEMCPY=0
# the packing plan (RING is not run on a scatter/gather list)
run "np=3 HCCL_ALLREDUCE_ALGO=RING HCCL_FUSION_THRESHOLD=64KB" 3 HCCL_ALLREDUCE_ALGO=RING \
    HCCL_FUSION_THRESHOLD=64KB
run "np=2 HCCL_ALLREDUCE_ALGO=RING" 2 HCCL_ALLREDUCE_ALGO=RING
# 4 ranks declared on two hosts: packing across hosts (bucket plan for
# messages between hosts), HIER on the large units
run "np=4 on two declared hosts" 4 HCCL_TOPO_FILE="$here/two-hosts.topo"
if [ -n "$failed" ]; then
    echo "fusion.sh: FAILED:$failed"
    exit 1
fi
echo "fusion.sh: all runs passed"
exit 0
