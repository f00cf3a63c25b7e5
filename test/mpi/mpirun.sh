#!/bin/sh
# test/mpi/mpirun.sh - the launcher of every MPI test script.
#
#   sh mpirun.sh NP PROGRAM [ARGS...]
#
# Runs PROGRAM (a name in $top_builddir/test/mpi, or a path) on NP ranks with
# $MPIRUN (default: mpirun), oversubscribed and unbound (the CI machine has
# 2 cores), forwarding every HCCL_*, UCX_* and *SAN_OPTIONS variable of the
# environment, under `timeout` so that a hang fails instead of blocking CI.
#
# Environment:
#   MPIRUN           the launcher (make check sets it from configure)
#   top_builddir     the build tree (make check exports it; default: ../..
#                    from this script)
#   HC_TEST_TIMEOUT  seconds before the job is killed (default 300)
#   HC_MPIRUN_ARGS   extra launcher arguments (e.g. "--mca pml ob1")
#   HC_SANITIZE      yes: the build is configured with --enable-sanitizers
#                    (make check sets it; default: what $top_builddir/Makefile
#                    says); the sanitizer options of test/sanitize.sh are
#                    set and forwarded to every rank
# Exit status: the program's; 124 on a timeout (hang), or 137 when the job
# also ignored the SIGTERM. mpirun itself returns 137 when one of its ranks
# was killed (SIGKILL), so scripts tell a hang by the line `timeout -v`
# prints when it signals the job: "timeout: sending signal".
set -u
if [ $# -lt 2 ]; then
    echo "usage: sh mpirun.sh NP PROGRAM [ARGS...]" >&2
    exit 2
fi
np=$1
prog=$2
shift 2

here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${top_srcdir:=$here/../..}"
: "${MPIRUN:=mpirun}"
: "${HC_TEST_TIMEOUT:=300}"
: "${HC_MPIRUN_ARGS:=}"

case $prog in
*/*) ;;
*) prog=$top_builddir/test/mpi/$prog ;;
esac
if [ ! -x "$prog" ]; then
    echo "mpirun.sh: $prog: no such program (not built?)" >&2
    exit 99
fi

if [ -z "${HC_SANITIZE:-}" ]; then
    HC_SANITIZE=$(sed -n 's/^HC_SANITIZE = //p' "$top_builddir/Makefile" 2>/dev/null)
fi
# shellcheck source=../sanitize.sh
. "$top_srcdir/test/sanitize.sh"

# PROGRAM may be a libtool wrapper script (uninstalled program linked with
# libhcomm.la): it sets LD_LIBRARY_PATH and execs .libs/PROGRAM, which works
# under mpirun as is (the build relinks nothing at run time).

UCX_WARN_UNUSED_ENV_VARS=n
export UCX_WARN_UNUSED_ENV_VARS
xargs_env=
for v in $(env | sed -n 's/^\(HCCL_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p;
                        s/^\([A-Z]*SAN_OPTIONS\)=.*/\1/p' | sort -u); do
    xargs_env="$xargs_env -x $v"
done

tmo=
if command -v timeout >/dev/null 2>&1; then
    tmo="timeout -v -k 10 $HC_TEST_TIMEOUT"
fi

# shellcheck disable=SC2086 # word splitting of the option lists is intended
set -- $tmo "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
    $xargs_env $HC_MPIRUN_ARGS "$prog" "$@"
echo "+ $*"
"$@"
rc=$?
if [ $rc -eq 124 ]; then
    echo "mpirun.sh: TIMEOUT: $prog on $np ranks did not finish in ${HC_TEST_TIMEOUT} s (hang?)" >&2
fi
exit $rc
