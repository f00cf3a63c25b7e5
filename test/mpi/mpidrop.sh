#!/bin/sh
# test/mpi/mpidrop.sh - the MPI drop-in (docs/MPI-DROPIN.md).
#  1. test_mpidrop, a plain MPI program, with libhcomm_mpi.so preloaded on
#     1..5 ranks: results equal to MPI's (PMPI_) on every collective, and
#     HCOMM_MPI_STATS shows that every intercepted collective ran on hcomm
#     and that the unsupported cases fell through (op, datatype,
#     intercommunicator).
#  2. Communicators from MPI_Comm_dup/MPI_Comm_split are HcclCommSplit
#     children: one HcclCommInitMpi bootstrap in the whole run (HCCL_DEBUG=INFO).
#  3. The settings: HCOMM_MPI_COLLS, HCOMM_MPI_DISABLE, a bad name, and the
#     built-in sizes that go to MPI (runs 1 and 2 turn them off with
#     HCOMM_MPI_MIN_BYTES=all:0, so that every size runs on hcomm), also on
#     a communicator made where a freed one of another size was.
#  4. A wrong interposer (mpidrop_broken.c) preloaded: test_mpidrop fails.
#  5. tools/hcomm-mpibench --ab (the speed table's one-launch benchmark)
#     runs and prints a time for every collective and size.
# HC_MPIDROP_NPS="2 4" overrides the rank counts of 1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${HC_MPIDROP_NPS:=1 2 3 4 5}"
lib=$top_builddir/.libs/libhcomm_mpi.so
broken=$top_builddir/test/mpi/.libs/libmpidrop_broken.so
for f in "$lib" "$broken"; do
    [ -f "$f" ] || { echo "mpidrop.sh: $f: not built"; exit 99; }
done
out=${TMPDIR:-/tmp}/mpidrop.$$.out
trap 'rm -rf "$out" "$out.logs"' EXIT
failed=

# run NP PRELOAD [NAME=VALUE...]: test_mpidrop; its output in $out (and the log)
run() {
    np=$1 pre=$2
    shift 2
    xs="-x LD_PRELOAD=$pre -x LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for v in "$@"; do
        xs="$xs -x $v"
    done
    HC_MPIRUN_ARGS="$xs" sh "$here/mpirun.sh" "$np" test_mpidrop >"$out" 2>&1
    rc=$?
    cat "$out"
    return $rc
}

# hcomm COLL: the calls of COLL that ran on hcomm, from the stats in $out
hcomm() {
    awk -v c="$1" '$1 == "hcomm-mpi:" && $2 == c { n = $4 } END { print n + 0 }' "$out"
}

fail() {
    echo "mpidrop.sh: FAIL: $*"
    failed="$failed
  $*"
}

colls="allreduce bcast reduce allgather allgatherv reduce_scatter_block reduce_scatter alltoall
alltoallv scatter gather barrier iallreduce ibcast iallgather"

for np in $HC_MPIDROP_NPS; do
    echo "=== test_mpidrop on $np rank(s), preloaded"
    run "$np" "$lib" HCOMM_MPI_STATS=1 HCOMM_MPI_MIN_BYTES=all:0
    rc=$?
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || fail "np=$np: rc=$rc"
    for c in $colls; do
        [ "$(hcomm "$c")" -gt 0 ] || fail "np=$np: no $c ran on hcomm"
    done
    line=$(grep '^hcomm-mpi: allreduce ' "$out")
    for why in "op " "datatype " "intercommunicator "; do
        [ "$np" -eq 1 ] && [ "$why" = "intercommunicator " ] && continue
        case $line in
        *"$why"*) ;;
        *) fail "np=$np: no MPI_Allreduce fell through for '$why'" ;;
        esac
    done
done

echo "=== split and dup: HcclCommSplit of the parent, one bootstrap"
logs=$out.logs
mkdir -p "$logs"
run 3 "$lib" HCOMM_MPI_MIN_BYTES=all:0 HCCL_DEBUG=INFO HCCL_DEBUG_SUBSYS=INIT,ELASTIC "HCCL_DEBUG_FILE=$logs/%p.log" >/dev/null
[ $? -eq 0 ] || fail "HCCL_DEBUG=INFO run: rc != 0"
# per rank: MPI_COMM_WORLD bootstrapped; dup, split, dup of the split and
# the split without rank 0 made by HcclCommSplit (rank 0 is not in the last)
nsplit=$(cat "$logs"/*.log | grep -c 'HcclCommSplit: ')
nboot=$(cat "$logs"/*.log | grep -c 'communicator hcomm-[0-9]*-[0-9a-f]*: rank')
rm -rf "$logs"
echo "HcclCommSplit: $nsplit, bootstrapped: $nboot"
[ "$nsplit" -eq 11 ] || fail "$nsplit HcclCommSplit on 3 ranks, 11 expected"
[ "$nboot" -eq 3 ] || fail "$nboot bootstrapped communicators on 3 ranks, 3 expected"

echo "=== HCOMM_MPI_COLLS=bcast,iallgather"
run 2 "$lib" HCOMM_MPI_STATS=1 HCOMM_MPI_COLLS=bcast,iallgather HCOMM_MPI_MIN_BYTES=all:0
[ $? -eq 0 ] || fail "HCOMM_MPI_COLLS: rc != 0"
[ "$(hcomm bcast)" -gt 0 ] && [ "$(hcomm iallgather)" -gt 0 ] ||
    fail "HCOMM_MPI_COLLS: bcast/iallgather did not run on hcomm"
[ "$(hcomm allreduce)" -eq 0 ] && grep -q 'allreduce .*not in HCOMM_MPI_COLLS' "$out" ||
    fail "HCOMM_MPI_COLLS: allreduce was not left to MPI"

echo "=== the built-in sizes: small MPI_Bcast and MPI_Allreduce to MPI, large ones to hcomm"
run 2 "$lib" HCOMM_MPI_STATS=1
[ $? -eq 0 ] || fail "built-in sizes: rc != 0"
for c in allreduce bcast; do
    grep -q "^hcomm-mpi: $c .*built-in MPI size [0-9]" "$out" ||
        fail "built-in sizes: no $c went to MPI for its size"
    [ "$(hcomm "$c")" -gt 0 ] || fail "built-in sizes: no $c ran on hcomm"
done
# MPI_Reduce_scatter: equal blocks on hcomm; blocks of different sizes to
# MPI below 4 KiB (2 ranks), on hcomm from there: of test_mpidrop's 768
# such calls (8 per type x op pair) the 168 of 4 KiB and more (count 1031
# in types of 4 bytes and more) run on hcomm, the other 600 on MPI (all
# 768 went to MPI when every such call did)
grep -q "^hcomm-mpi: reduce_scatter .* mpi 600 (blocks of different sizes 600)" "$out" &&
    [ "$(hcomm reduce_scatter)" -gt 0 ] ||
    fail "built-in sizes: MPI_Reduce_scatter not split by its blocks"
echo "=== a communicator's size is not taken from a freed one (4 ranks, 2-rank splits and dups)"
run 4 "$lib" HCOMM_MPI_STATS=1 HC_MPIDROP_SHAPE=1
[ $? -eq 0 ] || fail "freed communicators: rc != 0"
grep -q '^hcomm-mpi: allreduce  *hcomm 1200  mpi 1200 (built-in MPI size 1200)' "$out" ||
    fail "freed communicators: 1200 calls on hcomm and 1200 to MPI expected"

echo "=== hcomm-mpibench --ab: both arms of the speed table in one launch (docs/MPI-DROPIN.md)"
HC_MPIRUN_ARGS="-x LD_PRELOAD=$lib -x LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    sh "$here/mpirun.sh" 2 "$top_builddir/tools/hcomm-mpibench" --ab 10 >"$out" 2>&1
rc=$?
lines=$(awk 'NF == 5 && $3 > 0 && $4 > 0 && $5 > 0' "$out" | wc -l)
echo "hcomm-mpibench --ab: rc $rc, $lines lines of 111"
[ $rc -eq 0 ] && [ "$lines" -eq 111 ] || { cat "$out"; fail "hcomm-mpibench --ab"; }

echo "=== HCOMM_MPI_MIN_BYTES=bcast:0,allreduce:5000: that floor instead of the built-in sizes"
run 2 "$lib" HCOMM_MPI_STATS=1 HCOMM_MPI_MIN_BYTES=bcast:0,allreduce:5000
[ $? -eq 0 ] || fail "HCOMM_MPI_MIN_BYTES: rc != 0"
grep -q '^hcomm-mpi: bcast .*mpi 0$' "$out" || fail "HCOMM_MPI_MIN_BYTES=bcast:0: a bcast went to MPI"
grep '^hcomm-mpi: allreduce ' "$out" | grep -q 'below HCOMM_MPI_MIN_BYTES [0-9]' ||
    fail "HCOMM_MPI_MIN_BYTES=allreduce:5000: no allreduce below the floor went to MPI"
grep '^hcomm-mpi: allreduce ' "$out" | grep -q 'built-in' &&
    fail "HCOMM_MPI_MIN_BYTES=allreduce:5000: the built-in sizes still applied"

echo "=== HCOMM_MPI_DISABLE=1"
run 2 "$lib" HCOMM_MPI_STATS=1 HCOMM_MPI_DISABLE=1
[ $? -eq 0 ] || fail "HCOMM_MPI_DISABLE: rc != 0"
[ "$(awk '$1 == "hcomm-mpi:" && $3 == "hcomm" { s += $4 } END { print s + 0 }' "$out")" -eq 0 ] ||
    fail "HCOMM_MPI_DISABLE=1: calls ran on hcomm"

echo "=== a bad setting: a log line, everything to MPI"
run 2 "$lib" HCOMM_MPI_STATS=1 HCOMM_MPI_COLLS=allreduce,bogus
[ $? -eq 0 ] || fail "HCOMM_MPI_COLLS=allreduce,bogus: rc != 0"
grep -q "unknown collective 'bogus'" "$out" || fail "HCOMM_MPI_COLLS=bogus: no log line"
[ "$(hcomm allreduce)" -eq 0 ] || fail "HCOMM_MPI_COLLS=bogus: calls ran on hcomm"

echo "=== a wrong drop-in must fail the test"
run 2 "$broken"
rc=$?
if [ $rc -eq 0 ] || ! grep -q 'FAIL: MPI_Allreduce' "$out"; then
    fail "test_mpidrop passed with a wrong MPI_Allreduce (rc=$rc)"
fi

if [ -n "$failed" ]; then
    echo "mpidrop.sh: FAILED:$failed"
    exit 1
fi
echo "mpidrop.sh: all runs passed"
exit 0
