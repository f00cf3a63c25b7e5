#!/bin/sh
# test/mpi/errors.sh - argument checking (test_errors) at 2 and 3 ranks, then
# HcclCommInitMpi with a bad HCCL_* value in the environment must fail with
# HCCL_E_PARA on every rank, and the log must name the variable and value.
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
for bad in HCCL_BUFFSIZE=abc HCCL_DETERMINISTIC=maybe HCCL_EXEC_TIMEOUT=-3; do
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
if [ -n "$failed" ]; then
    echo "errors.sh: FAILED:$failed"
    exit 1
fi
echo "errors.sh: all runs passed"
exit 0
