#!/bin/sh
# test/mpi/elastic_add.sh - members join (test_elastic) and the elastic
# example:
#  1. add by MPI_Comm_spawn, 2 -> 3 ranks;
#  2. add by connect/accept between two mpiruns (ompi-server), 2 -> 3;
#  3. examples/elastic: 4 ranks lose one (SIGKILL), go on at 3, spawn a
#     replacement, go on at 4, results checked at every step (mpirun may
#     not return after the kill: the script waits for "elastic: done" and
#     ends it by pid).
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-elastic.XXXXXX") || exit 99
. "$here/elastic_lib.sh"
example=$top_builddir/examples/elastic
for p in "$top_builddir/test/mpi/test_elastic" "$example"; do
    if [ ! -x "$p" ]; then
        echo "elastic_add.sh: $p: not built" >&2
        exit 99
    fi
done

echo "=== add by MPI_Comm_spawn, 2 -> 3 ranks"
HC_TEST_TIMEOUT=60 sh "$here/mpirun.sh" 2 test_elastic add-spawn
rc=$?
[ $rc -eq 0 ] || failed="$failed add-spawn(rc=$rc)"

echo "=== add by connect/accept across two mpiruns (ompi-server), 2 -> 3 ranks"
if command -v ompi-server >/dev/null 2>&1; then
    ompi-server --no-daemonize --report-uri "$tmp/uri" >"$tmp/server.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 100 ] && [ ! -s "$tmp/uri" ]; do
        sleep 0.1
        i=$((i + 1))
    done
    HC_MPIRUN_ARGS="--ompi-server file:$tmp/uri" HC_TEST_TIMEOUT=60 \
        sh "$here/mpirun.sh" 2 test_elastic add-connect "$tmp/info" >"$tmp/members.log" 2>&1 &
    members=$!
    HC_MPIRUN_ARGS="--ompi-server file:$tmp/uri" HC_TEST_TIMEOUT=60 \
        sh "$here/mpirun.sh" 1 test_elastic join "$tmp/info"
    rc=$?
    wait $members
    mrc=$?
    cat "$tmp/members.log"
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    spid=
    [ $rc -eq 0 ] && [ $mrc -eq 0 ] || failed="$failed add-connect(rc=$mrc/$rc)"
else
    echo "elastic_add.sh: no ompi-server: connect/accept between two mpiruns not tested"
fi

echo "=== examples/elastic: 4 ranks, lose one, spawn a replacement"
d=$tmp/example
mkdir -p "$d"
launch 4 "$example" >"$d/log" 2>&1
i=0
while [ $i -lt 600 ] && ! grep -q -E '^elastic: (done|FAILED)' "$d/log"; do
    sleep 0.1
    i=$((i + 1))
done
finish "$d"
cat "$d/log"
if ! grep -q '^elastic: done' "$d/log" || grep -q -E '^elastic: FAILED|FAIL' "$d/log"; then
    failed="$failed example"
fi

if [ -n "$failed" ]; then
    echo "elastic_add.sh: FAILED:$failed"
    exit 1
fi
echo "elastic_add.sh: all runs passed"
exit 0
