#!/bin/sh
# test/mpi/shm.sh - the shared-memory algorithms (src/comm/shm.h, coll/*_direct.c)
# in real processes, and the path without them.
#
#  1. test_coll on 4 ranks with every DIRECT algorithm forced;
#  2. test_coll on 3 ranks, DIRECT forced, HCCL_BUFFSIZE=1: 512 KB staging
#     halves (the big sizes take many chunks) and one region per process,
#     so the split and dup communicators find none and must all agree to
#     use tagged messages instead;
#  3. test_coll on 2 ranks with UCX_TLS=tcp,self: UCX cannot map the peer's
#     staging, every communicator must agree to do without (the forced
#     DIRECT algorithms fall back to the defaults);
#  4. test_coll on 2 and 3 ranks with the single-copy algorithms (coll/cma.c)
#     forced for AllReduce, ReduceScatter, Broadcast, AllGather and AlltoAll
#     (AllReduce's and ReduceScatter's fall back at 3 ranks): the log must say that
#     the ranks can read each other's memory;
#  5. the same on 2 ranks with HCCL_SINGLE_COPY=0: the forced CMA algorithms
#     must fall back (and say so) and give the same results;
#  6. test_coll on 2 and 3 ranks with a tuning file that picks DIRECT with
#     option nt (RECV written with non-temporal stores) for every
#     collective that has it: the log must show the rule in use;
#  7. test_coll -A (buffers from HcclMemAlloc, registered with the world
#     and dup communicators): on 2 ranks with the single-copy AllReduce and
#     ReduceScatter forced (every size through HC_STEP_XREDUCE) and
#     with the built-in table, on 3 ranks with the single-copy algorithms
#     forced: the log must say that every peer's range was mapped, and no
#     range may fail to map (dup's second registration starts at no page
#     boundary: huge pages or not, the peers map it from the page below);
#  8. examples/registered on 2 ranks (8 MiB): malloc'd and registered
#     buffers, both results checked; HcclMemAlloc must say it used 2 MiB
#     huge pages where at least 64 are free (/proc/meminfo), and ordinary
#     pages, naming the reason, where none are (test_coll -A's 48 MiB pool
#     above takes either, as the reserve allows).
# Each run must also log that shared staging was (1, 2) or was not (3) set
# up, so a fast path that silently stopped being used fails here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
tmp=${TMPDIR:-/tmp}/hcomm-shm-test.$$
mkdir -p "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=
tc_args=

HCCL_ALLREDUCE_ALGO=DIRECT HCCL_BCAST_ALGO=DIRECT HCCL_ALLGATHER_ALGO=DIRECT
HCCL_REDUCESCATTER_ALGO=DIRECT HCCL_ALLTOALL_ALGO=DIRECT
export HCCL_ALLREDUCE_ALGO HCCL_BCAST_ALGO HCCL_ALLGATHER_ALGO HCCL_REDUCESCATTER_ALGO \
    HCCL_ALLTOALL_ALGO
HCCL_DEBUG=INFO HCCL_DEBUG_SUBSYS=TRANSPORT
export HCCL_DEBUG HCCL_DEBUG_SUBSYS

# run NAME NP EXPECT [VAR=VALUE ...] -- ARGS: test_coll, then grep its log
run() {
    name=$1 np=$2 expect=$3
    shift 3
    echo "=== $name: test_coll on $np ranks"
    env "$@" sh "$here/mpirun.sh" "$np" test_coll -q $tc_args >"$tmp/$name.log" 2>&1
    rc=$?
    grep -v ' hcomm INFO ' "$tmp/$name.log" | tail -n 5
    [ $rc -eq 99 ] && exit 99
    if [ $rc -ne 0 ]; then
        grep ' hcomm INFO .*staging' "$tmp/$name.log" | tail -n 5
        failed="$failed $name(rc=$rc)"
        return
    fi
    if ! grep -q "$expect" "$tmp/$name.log"; then
        echo "shm.sh: $name: no log line matching '$expect'"
        failed="$failed $name(log)"
    fi
    # a registered range that a peer could not map (src/features/window.c map_peer)
    if grep 'is not mapped here' "$tmp/$name.log"; then
        failed="$failed $name(unmapped)"
    fi
}

run direct-np4 4 'shared staging on, 4 ranks' HC_DUMMY=1
run direct-np3-small 3 'no shared staging (rank [0-9]*: no free region' HCCL_BUFFSIZE=1
run tcp-np2 2 'no shared staging (rank [0-9]*: a peer.s segment is unreachable' \
    UCX_TLS=tcp,self
for np in 2 3; do
    run cma-np$np $np 'single-copy reads on' HCCL_BCAST_ALGO=CMA HCCL_ALLGATHER_ALGO=CMA \
        HCCL_ALLTOALL_ALGO=CMA HCCL_ALLREDUCE_ALGO=CMA HCCL_REDUCESCATTER_ALGO=CMA
done
run cma-off-np2 2 'single-copy reads off' HCCL_BCAST_ALGO=CMA HCCL_ALLGATHER_ALGO=CMA \
    HCCL_ALLTOALL_ALGO=CMA HCCL_ALLREDUCE_ALGO=CMA HCCL_REDUCESCATTER_ALGO=CMA HCCL_SINGLE_COPY=0
printf '%s * * DIRECT nt\n' allreduce broadcast reducescatter allgather alltoall >"$tmp/nt.tune"
for np in 2 3; do
    run nt-np$np $np 'DIRECT nt  # ' -u HCCL_ALLREDUCE_ALGO -u HCCL_BCAST_ALGO \
        -u HCCL_ALLGATHER_ALGO -u HCCL_REDUCESCATTER_ALGO -u HCCL_ALLTOALL_ALGO \
        HCCL_TUNE_FILE="$tmp/nt.tune" HCCL_DEBUG_SUBSYS=TRANSPORT,TUNE
done
tc_args=-A
run reg-np2 2 'mapped here from 1 of 1 peers' HCCL_ALLREDUCE_ALGO=CMA \
    HCCL_REDUCESCATTER_ALGO=CMA
run reg-np2-table 2 'mapped here from 1 of 1 peers' -u HCCL_ALLREDUCE_ALGO -u HCCL_BCAST_ALGO \
    -u HCCL_ALLGATHER_ALGO -u HCCL_REDUCESCATTER_ALGO -u HCCL_ALLTOALL_ALGO
run reg-np3 3 'mapped here from 2 of 2 peers' HCCL_BCAST_ALGO=CMA HCCL_ALLGATHER_ALGO=CMA \
    HCCL_ALLTOALL_ALGO=CMA HCCL_ALLREDUCE_ALGO=CMA HCCL_REDUCESCATTER_ALGO=CMA
tc_args=

hp_free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo 2>/dev/null)
hp_free=${hp_free:-0}
echo "=== examples/registered on 2 ranks ($hp_free huge pages free)"
env -u HCCL_ALLREDUCE_ALGO -u HCCL_BCAST_ALGO -u HCCL_ALLGATHER_ALGO \
    -u HCCL_REDUCESCATTER_ALGO -u HCCL_ALLTOALL_ALGO HCCL_DEBUG_SUBSYS=TRANSPORT,INIT \
    sh "$here/mpirun.sh" 2 "$top_builddir/examples/registered" 8 >"$tmp/example.log" 2>&1
rc=$?
grep -v ' hcomm INFO ' "$tmp/example.log" | tail -n 4
grep 'HcclMemAlloc: ' "$tmp/example.log"
[ $rc -eq 99 ] && exit 99
[ $rc -eq 0 ] || failed="$failed example-registered(rc=$rc)"
grep -q 'mapped here from 1 of 1 peers' "$tmp/example.log" ||
    failed="$failed example-registered(not mapped)"
if [ "$hp_free" -eq 0 ]; then
    grep -q 'HcclMemAlloc: 8388608 B .* in ordinary pages (not enough huge pages reserved' \
        "$tmp/example.log" || failed="$failed example-registered(no ordinary-pages line)"
    grep -q 'in 2 MiB huge pages' "$tmp/example.log" &&
        failed="$failed example-registered(huge pages with none free)"
elif [ "$hp_free" -ge 64 ]; then
    grep -q 'HcclMemAlloc: 8388608 B .* in 2 MiB huge pages' "$tmp/example.log" ||
        failed="$failed example-registered(no huge pages with $hp_free free)"
fi

if [ -n "$failed" ]; then
    echo "shm.sh: FAILED:$failed"
    exit 1
fi
echo "shm.sh: all runs passed"
exit 0
