#!/bin/sh
# test/mpi/bootstrap.sh - the TCP bootstrap against strangers and bad input
# (test_bootstrap, no mpirun):
#  1. 3 ranks meet through the root info while 300 idle connections and
#     malformed or foreign hellos sit on the root's port; with
#     HCCL_CONNECT_TIMEOUT=20 (a root that served the strangers first would
#     miss it) they must form their communicator, the root must close every
#     stranger and log the drops, and its stdin must stay open;
#  2. a rank table whose rank-0 server is a host name fails with
#     HCCL_E_PARA, under valgrind where installed (that error path read
#     freed memory).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${HC_TEST_TIMEOUT:=300}"
prog=$top_builddir/test/mpi/test_bootstrap
if [ ! -x "$prog" ]; then
    echo "bootstrap.sh: $prog: no such program (not built?)" >&2
    exit 99
fi
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 10 $HC_TEST_TIMEOUT"
UCX_WARN_UNUSED_ENV_VARS=n
export UCX_WARN_UNUSED_ENV_VARS
log=$(mktemp /tmp/hcomm-bootstrap.XXXXXX)
trap 'rm -f "$log"' EXIT
failed=

echo "+ HCCL_CONNECT_TIMEOUT=20 HCCL_DEBUG=WARN $tmo $prog strangers 3"
HCCL_CONNECT_TIMEOUT=20 HCCL_DEBUG=WARN $tmo "$prog" strangers 3 >"$log" 2>&1
rc=$?
grep -v "dropped a connection" "$log"
grep -m 12 "dropped a connection" "$log"
[ $rc -eq 0 ] || failed="$failed strangers(rc=$rc)"
grep -q "dropped a connection .*nRanks 4294967295" "$log" ||
    failed="$failed strangers(no log line for the nRanks UINT32_MAX hello)"
grep -q "closed 30[0-9] connections that had not sent a whole message" "$log" ||
    failed="$failed strangers(no log line for the idle connections)"

# valgrind's exit status 97 for an error it found in the program
vg=
command -v valgrind >/dev/null 2>&1 && vg="valgrind -q --error-exitcode=97"
echo "+ $vg $prog hostname-table"
$tmo $vg "$prog" hostname-table
rc=$?
[ $rc -eq 0 ] || failed="$failed hostname-table(rc=$rc)"

if [ -n "$failed" ]; then
    echo "bootstrap.sh: FAILED:$failed"
    exit 1
fi
echo "bootstrap.sh: all runs passed"
exit 0
