#!/bin/sh
# test/mpi/soak.sh - test_soak (random sequences of collectives on three
# communicators, blocking and stream calls mixed, repeats on the same
# buffers) at 2, 3, 4, 5 and 8 ranks with its own seed each, then at 4 ranks
# with a 1 MB staging buffer so that messages cross it many times, then with
# registered buffers (-A: HcclMemAlloc'd, HcclCommRegister'ed) at 2 and 4,
# then with two threads driving different communicators at once (-T) at 3,
# then at 4 ranks declared on two hosts (HCCL_TOPO_FILE: hierarchical
# algorithms, traffic between the hosts over UCX TCP).
# HC_SOAK_NPS="2 4" overrides the rank counts, HC_SOAK_OPS the operations
# per run, HC_SOAK_SEED the base seed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${HC_SOAK_NPS:=2 3 4 5 8}"
: "${HC_SOAK_OPS:=800}"
: "${HC_SOAK_SEED:=20261201}"
failed=
for np in $HC_SOAK_NPS; do
    seed=$((HC_SOAK_SEED + np))
    echo "=== test_soak on $np ranks, seed $seed"
    sh "$here/mpirun.sh" "$np" test_soak -n "$HC_SOAK_OPS" -s "$seed"
    rc=$?
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || failed="$failed np=$np(rc=$rc)"
done
seed=$((HC_SOAK_SEED + 100))
echo "=== test_soak on 4 ranks, HCCL_BUFFSIZE=1, seed $seed"
HCCL_BUFFSIZE=1 sh "$here/mpirun.sh" 4 test_soak -n "$HC_SOAK_OPS" -s "$seed"
rc=$?
[ $rc -eq 0 ] || failed="$failed np=4-small-buffers(rc=$rc)"
for np in 2 4; do
    seed=$((HC_SOAK_SEED + 200 + np))
    echo "=== test_soak on $np ranks, registered buffers, seed $seed"
    sh "$here/mpirun.sh" "$np" test_soak -A -n "$HC_SOAK_OPS" -s "$seed"
    rc=$?
    [ $rc -eq 0 ] || failed="$failed np=$np-registered(rc=$rc)"
done
seed=$((HC_SOAK_SEED + 300))
echo "=== test_soak on 3 ranks, two threads, seed $seed"
sh "$here/mpirun.sh" 3 test_soak -T -n "$HC_SOAK_OPS" -s "$seed"
rc=$?
[ $rc -eq 0 ] || failed="$failed np=3-threads(rc=$rc)"
seed=$((HC_SOAK_SEED + 400))
echo "=== test_soak on 4 ranks declared on two hosts, seed $seed"
HCCL_TOPO_FILE=$here/two-hosts.topo sh "$here/mpirun.sh" 4 test_soak -n "$HC_SOAK_OPS" -s "$seed"
rc=$?
[ $rc -eq 0 ] || failed="$failed np=4-two-hosts(rc=$rc)"
if [ -n "$failed" ]; then
    echo "soak.sh: FAILED:$failed"
    exit 1
fi
echo "soak.sh: all runs passed"
exit 0
