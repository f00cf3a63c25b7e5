#!/bin/sh
# test/mpi/mpi4py.sh - the MPI drop-in under mpi4py (docs/MPI-DROPIN.md).
# test/mpi/mpi4py_colls.py, an unmodified mpi4py program, on 2 and 4 ranks
# without and with libhcomm_mpi.so preloaded (HCOMM_MPI_MIN_BYTES=all:0:
# every size on hcomm, none left to MPI by the built-in sizes):
#  1. no failed check on any rank in either run (each rank checks every
#     result against its own numpy computation: no MPI call in the verdict);
#  2. every rank's digest of its results equal with and without the library;
#  3. HCOMM_MPI_STATS shows each intercepted collective on hcomm and the
#     complex sum and bitwise and falling through (datatype, op);
#  4. a wrong interposer (libmpidrop_broken.so) preloaded: the program fails.
# SKIP (77) where mpi4py or numpy is missing, or where mpi4py is built on
# another MPI library than libhcomm_mpi.so. HC_PYTHON: the interpreter
# (default: /usr/bin/python3, then python3).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
lib=$top_builddir/.libs/libhcomm_mpi.so
broken=$top_builddir/test/mpi/.libs/libmpidrop_broken.so
prog=$here/mpi4py_colls.py
for f in "$lib" "$broken"; do
    [ -f "$f" ] || { echo "mpi4py.sh: $f: not built"; exit 99; }
done

py=
for p in ${HC_PYTHON:-} /usr/bin/python3 python3; do
    if "$p" -c 'import numpy, mpi4py' >/dev/null 2>&1; then
        py=$(command -v "$p")
        break
    fi
done
[ -n "$py" ] || { echo "mpi4py.sh: SKIP: no python3 with mpi4py and numpy (Debian: python3-mpi4py)"; exit 77; }
# the MPI library mpi4py is built on (without initializing MPI)
mod=$("$py" -c 'import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; print(MPI.__file__)')
py_mpi=$(ldd "$mod" 2>/dev/null | awk '$1 ~ /^libmpi\.so/ { print $3 }')
hc_mpi=$(ldd "$lib" 2>/dev/null | awk '$1 ~ /^libmpi\.so/ { print $3 }')
if [ -z "$py_mpi" ] || [ "$(readlink -f "$py_mpi")" != "$(readlink -f "$hc_mpi")" ]; then
    echo "mpi4py.sh: SKIP: mpi4py uses '${py_mpi:-?}', libhcomm_mpi.so '${hc_mpi:-?}'"
    exit 77
fi

out=${TMPDIR:-/tmp}/mpi4py.$$
trap 'rm -f "$out".*' EXIT
failed=
fail() {
    echo "mpi4py.sh: FAIL: $*"
    failed="$failed
  $*"
}

# run NAME NP [PRELOAD NAME=VALUE...]: the program; its output in $out.NAME
run() {
    name=$1 np=$2
    shift 2
    xs=
    if [ $# -gt 0 ]; then
        xs="-x LD_PRELOAD=$1 -x LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        shift
        for v in "$@"; do
            xs="$xs -x $v"
        done
    fi
    HC_MPIRUN_ARGS="$xs" sh "$here/mpirun.sh" "$np" "$py" "$prog" >"$out.$name" 2>&1
    rc=$?
    cat "$out.$name"
    return $rc
}

# results FILE: "rank R: F failures, digest D" per rank, sorted (the lines
# of several ranks may be merged in mpirun's output: matched, not read)
results() {
    grep -o 'rank [0-9]* of [0-9]*: [0-9]* checks, [0-9]* failures, digest [0-9a-f]*' "$1" |
        sed 's/ of [0-9]*: [0-9]* checks,/:/' | sort
}

# hcomm COLL: the calls of COLL that ran on hcomm, from the stats in $out.hc
hcomm() {
    awk -v c="$1" '$1 == "hcomm-mpi:" && $2 == c { n = $4 } END { print n + 0 }' "$out.hc"
}

colls="allreduce bcast reduce allgather allgatherv reduce_scatter_block reduce_scatter alltoall
alltoallv scatter gather barrier iallreduce ibcast iallgather"

for np in 2 4; do
    echo "=== $np ranks, MPI alone"
    run mpi "$np" || fail "np=$np without the library: rc=$?"
    echo "=== $np ranks, libhcomm_mpi.so preloaded"
    run hc "$np" "$lib" HCOMM_MPI_STATS=1 HCOMM_MPI_MIN_BYTES=all:0 || fail "np=$np with the library: rc=$?"
    for f in mpi hc; do
        n=$(results "$out.$f" | grep -c ': 0 failures,')
        [ "$n" -eq "$np" ] || fail "np=$np ($f): $n of $np ranks report 0 failures"
    done
    if [ "$(results "$out.mpi")" != "$(results "$out.hc")" ]; then
        fail "np=$np: digests differ with the library"
    fi
    for c in $colls; do
        [ "$(hcomm "$c")" -gt 0 ] || fail "np=$np: no $c ran on hcomm"
    done
    grep -q '^hcomm-mpi: allreduce .*datatype [0-9].*op [0-9]' "$out.hc" ||
        fail "np=$np: the complex sum and the bitwise and did not fall through"
    echo "float-order digests (not checked): MPI $(grep -o 'float-order digest [0-9a-f]*' "$out.mpi" |
        sort -u | awk '{ print $3 }' | tr '\n' ' ')hcomm $(grep -o 'float-order digest [0-9a-f]*' "$out.hc" |
        sort -u | awk '{ print $3 }' | tr '\n' ' ')"
done

echo "=== a wrong drop-in must fail the program"
run broken 2 "$broken"
rc=$?
if [ $rc -eq 0 ] || ! grep -q 'FAIL: world allreduce' "$out.broken"; then
    fail "mpi4py_colls passed with a wrong MPI_Allreduce (rc=$rc)"
fi

if [ -n "$failed" ]; then
    echo "mpi4py.sh: FAILED:$failed"
    exit 1
fi
echo "mpi4py.sh: all runs passed"
exit 0
