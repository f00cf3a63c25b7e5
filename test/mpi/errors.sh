#!/bin/sh
# test/mpi/errors.sh - argument checking (test_errors) at 2 and 3 ranks, then
# HcclCommInitMpi with a bad HCCL_* value in the environment must fail with
# HCCL_E_PARA on every rank, and the log must name the variable and value;
# with an HCCL_BUFFSIZE larger than /dev/shm's free space, HCCL_E_MEMORY.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-errors.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=
for np in 2 3; do
    echo "=== test_errors on $np ranks"
    sh "$here/mpirun.sh" "$np" test_errors
    rc=$?
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || failed="$failed np=$np(rc=$rc)"
done
for bad in HCCL_BUFFSIZE=abc HCCL_DETERMINISTIC=maybe HCCL_EXEC_TIMEOUT=-3 \
    HCCL_EXEC_TIMEOUT=0.0001 HCCL_IF_IP=10.0.0.256 HCCL_SOCKET_IFNAME==nosuchif0 \
    HCCL_SOCKET_IFNAME=eth0,,ib0; do
    var=${bad%%=*}
    val=${bad#*=}
    echo "=== test_errors --expect-init-fail on 2 ranks with $bad"
    env "$bad" sh "$here/mpirun.sh" 2 test_errors --expect-init-fail >"$tmp/log" 2>&1
    rc=$?
    cat "$tmp/log"
    [ $rc -eq 0 ] || failed="$failed $bad(rc=$rc)"
    if ! grep "$var" "$tmp/log" | grep -q -- "$val"; then
        echo "errors.sh: no log line names $var and its value '$val'"
        failed="$failed $bad(log)"
    fi
done
# HCCL_BUFFSIZE above what /dev/shm has free: every rank's init must fail
# with HCCL_E_MEMORY (3) before mapping anything, the log naming
# HCCL_BUFFSIZE and /dev/shm (src/comm/shm.h; no segment filled, nothing left)
free_mb=$(df -Pm /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
big=$(( ${free_mb:-65536} + 1024 ))
if [ "$big" -le 65536 ]; then
    echo "=== test_errors --expect-init-fail 3 on 2 ranks with HCCL_BUFFSIZE=$big (/dev/shm: $free_mb MB free)"
    HCCL_BUFFSIZE=$big sh "$here/mpirun.sh" 2 test_errors --expect-init-fail 3 >"$tmp/log" 2>&1
    rc=$?
    cat "$tmp/log"
    [ $rc -eq 0 ] || failed="$failed HCCL_BUFFSIZE=$big(rc=$rc)"
    if ! grep HCCL_BUFFSIZE "$tmp/log" | grep -q "/dev/shm: .* MB free"; then
        echo "errors.sh: no log line names HCCL_BUFFSIZE and the free space of /dev/shm"
        failed="$failed HCCL_BUFFSIZE=$big(log)"
    fi
else
    echo "=== skipped: /dev/shm has more free than the largest HCCL_BUFFSIZE (64 GB)"
fi
if [ -n "$failed" ]; then
    echo "errors.sh: FAILED:$failed"
    exit 1
fi
echo "errors.sh: all runs passed"
exit 0
