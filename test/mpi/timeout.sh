#!/bin/sh
# test/mpi/timeout.sh - with HCCL_EXEC_TIMEOUT=2, an AllReduce that the last
# rank skips returns HCCL_E_TIMEOUT on the others (test_timeout, 2 and 3
# ranks), and the error log (HCCL_DEBUG=ERROR) has a line that names the
# operation, the step and the peer it waited for (the rank that skipped).
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-timeout.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
HCCL_EXEC_TIMEOUT=2
HCCL_DEBUG=ERROR
export HCCL_EXEC_TIMEOUT HCCL_DEBUG
: "${HC_TEST_TIMEOUT:=120}"
export HC_TEST_TIMEOUT
failed=
for np in 2 3; do
    echo "=== test_timeout on $np ranks"
    sh "$here/mpirun.sh" "$np" test_timeout >"$tmp/log" 2>&1
    rc=$?
    cat "$tmp/log"
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || failed="$failed np=$np(rc=$rc)"
    peer=$((np - 1))
    # e.g. "HcclAllReduce timed out after 2.0 s (HCCL_EXEC_TIMEOUT) on comm ...
    #       rank 0, ...: waiting at step 1/10 RECV from rank 2 (...)"
    if grep -i 'allreduce' "$tmp/log" | grep -i -E 'timed? ?out' | grep -i 'step' |
        grep -q -i -E "rank[ =:]*$peer([^0-9]|\$)"; then
        echo "timeout.sh: np=$np: the log names the operation, the step and peer rank $peer"
    else
        echo "timeout.sh: np=$np: no log line names the operation (AllReduce), 'timed out'," \
            "the step and the peer (rank $peer)"
        failed="$failed np=$np(log)"
    fi
    if grep -q 'was not returned to mpool' "$tmp/log"; then
        echo "timeout.sh: NOTE: UCX reports requests not returned to its pool after the timeout"
    fi
done
if [ -n "$failed" ]; then
    echo "timeout.sh: FAILED:$failed"
    exit 1
fi
echo "timeout.sh: all runs passed"
exit 0
