#!/bin/sh
# test/mpi/elastic_add.sh - members join (test_elastic) and the elastic
# example:
#  1. add by MPI_Comm_spawn, 2 -> 3 ranks;
#  2. add by connect/accept between two mpiruns (ompi-server), 2 -> 3;
#  3. examples/elastic: 4 ranks lose one (SIGKILL), go on at 3, spawn a
#     replacement, go on at 4, results checked at every step; the members
#     end without MPI_Finalize (docs/ELASTIC.md, "Ending a job that
#     survived a failure"): mpirun must return by itself (mpirun.sh's
#     timeout fails a hang) with 137, and the log must hold the one
#     verdict line "elastic: done".
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
HC_TEST_TIMEOUT=120 HC_MPIRUN_ARGS="--mca orte_abort_on_non_zero_status 0" \
    sh "$here/mpirun.sh" 4 "$example" >"$d/log" 2>&1
rc=$?
cat "$d/log"
if [ $rc -eq 124 ] || grep -q 'timeout: sending signal' "$d/log"; then
    echo "elastic_add.sh: example: mpirun did not return after the members finished (hang)"
    failed="$failed example(hang)"
elif [ $rc -ne 137 ]; then
    # Open MPI 4.1 reports the killed rank's SIGKILL (docs/ELASTIC.md)
    echo "elastic_add.sh: example: mpirun returned $rc, not 137 (the killed rank's signal)"
    failed="$failed example(rc=$rc)"
fi
if [ "$(grep -c '^elastic: done' "$d/log")" -ne 1 ] || grep -q -E '^elastic: FAILED|FAIL' "$d/log"; then
    echo "elastic_add.sh: example: no single 'elastic: done' line, or a failure"
    failed="$failed example"
fi

if [ -n "$failed" ]; then
    echo "elastic_add.sh: FAILED:$failed"
    exit 1
fi
echo "elastic_add.sh: all runs passed"
exit 0
