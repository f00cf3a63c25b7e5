#!/bin/sh
# usage: tools/test-all.sh   (HC_SANITIZED_TESTS="...": the tests of the sanitizer pass)
# The whole test suite from a fresh machine: install dependencies, build,
# run `make check` (Check unit tests + MPI programs under mpirun), then a
# second build with --enable-sanitizers (_build_asan: ASan + UBSan) that runs
# the unit tests, the collective matrix and the error tests
# ($HC_SANITIZED_TESTS); ends with one line "N passed, N failed" over both.
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tools/install-deps.sh" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The emulated cluster: this suite runs the shapes 2 x 2 and 4 x 1 (for
# time; a test_soak stall seen once at 3 x 2 is not explained: docs/
# CLUSTER.md, "Tests") unless HC_CLUSTER_SHAPES says otherwise (make check
# alone runs all three).
: "${HC_CLUSTER_SHAPES:=2x2 4x1}"
export HC_CLUSTER_SHAPES
# (check_sched is left out there: its loopback case, ranks as threads that
# spin on flags, ran for more than 14 minutes under ASan on 2 cores)
: "${HC_SANITIZED_TESTS:=test/unit/check_reduce test/unit/check_env \
test/unit/check_shm test/unit/check_topo test/unit/check_tune test/unit/check_layout \
test/unit/check_rendezvous test/mpi/coll.sh test/mpi/errors.sh test/mpi/mismatch.sh}"
pass=0
fail=0
# check DIR [make check arguments]: build in DIR (configure arguments in
# $conf), run `make check` there and add its counts (every test's own .log
# ends with its counts when it has them; the harness counts tests)
check() {
    dir=$1
    shift
    # shellcheck disable=SC2086 # $conf: configure arguments, split
    if ! HC_BUILD_DIR=$dir "$top/tools/build.sh" $conf; then
        echo "test-all: the build in $dir failed"
        fail=$((fail + 1))
        return
    fi
    cd "$top/$dir" || exit 1
    rm -f test-suite.log
    make -j1 check "$@"
    rc=$?
    p=$(grep -h '^# PASS:' test-suite.log 2>/dev/null | awk '{s+=$3} END {print s+0}')
    f=$(grep -hE '^# (FAIL|ERROR|XPASS):' test-suite.log 2>/dev/null | awk '{s+=$3} END {print s+0}')
    [ -f test-suite.log ] || f=1
    [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
    [ "$rc" -ne 0 ] && tail -100 test-suite.log 2>/dev/null
    echo "test-all: $dir: $p passed, $f failed"
    pass=$((pass + p))
    fail=$((fail + f))
}
# the torch.distributed backend (docs/TORCH.md) where /usr/bin/python3 has torch
conf=
if /usr/bin/python3 -c 'import torch.distributed, torch.utils.cpp_extension' >/dev/null 2>&1; then
    conf=--with-torch
fi
check _build
conf=--enable-sanitizers
check _build_asan TESTS="$HC_SANITIZED_TESTS"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
