#!/bin/sh
# test/mpi/coll.sh - test_coll (every collective x type x op x count x root x
# in-place, against MPI / local references) at 1, 2, 3, 4, 5 and 8 ranks,
# then once at 4 ranks with a 1 MB staging buffer and 4 KB ring chunks so
# that the big sizes cross buffer and chunk boundaries many times.
# HC_COLL_NPS="2 4" overrides the rank counts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${HC_COLL_NPS:=1 2 3 4 5 8}"
failed=
for np in $HC_COLL_NPS; do
    echo "=== test_coll on $np rank(s)"
    sh "$here/mpirun.sh" "$np" test_coll
    rc=$?
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || failed="$failed np=$np(rc=$rc)"
done
echo "=== test_coll on 4 ranks, HCCL_BUFFSIZE=1 HCCL_RING_CHUNK_SIZE=4KB"
HCCL_BUFFSIZE=1 HCCL_RING_CHUNK_SIZE=4KB sh "$here/mpirun.sh" 4 test_coll -q
rc=$?
[ $rc -eq 0 ] || failed="$failed np=4-small-buffers(rc=$rc)"
if [ -n "$failed" ]; then
    echo "coll.sh: FAILED:$failed"
    exit 1
fi
echo "coll.sh: all runs passed"
exit 0
