#!/bin/sh
# test/mpi/pkgconfig.sh - the installed library is usable the documented way:
#   make install into a staging directory (DESTDIR), point pkg-config at the
#   staged hcomm.pc (prefix, libdir and includedir rewritten to the staging
#   directory), compile examples/allreduce.c and a small program with
#   `mpicc $(pkg-config --cflags --libs hcomm)`, run them on 2 ranks, and
#   compile a file that includes only <hccl/hccl.h> with plain cc (the
#   public header must not need mpi.h).
# Works in VPATH builds and under `make distcheck` (read-only source tree:
# everything is written under a temporary directory).
# Exit 77 (skip) only when pkg-config or mpicc is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${top_srcdir:=$here/../..}"
: "${MAKE:=make}"
: "${MPICC:=mpicc}"
: "${CC:=cc}"
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

for tool in "$PKG_CONFIG" "$MPICC" "$MAKE"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "pkgconfig.sh: SKIP: $tool not found"
        exit 77
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-pkgconfig.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/stage

# Install into the staging directory. A sub-make must not join the jobserver
# of the `make check` that runs us.
echo "+ $MAKE -C $top_builddir install DESTDIR=$stage"
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$MAKE" -C "$top_builddir" install \
    DESTDIR="$stage" >"$tmp/install.log" 2>&1; then
    tail -30 "$tmp/install.log"
    echo "pkgconfig.sh: FAIL: make install DESTDIR=... failed"
    exit 1
fi

pc=$(find "$stage" -name hcomm.pc -path '*pkgconfig*' | head -1)
if [ -z "$pc" ]; then
    echo "pkgconfig.sh: FAIL: no hcomm.pc installed under $stage"
    find "$stage" -type f | head -30
    exit 1
fi
echo "installed: $pc"

# Rewrite the directories of the .pc file to the staged ones.
mkdir -p "$tmp/pc"
prefix=$("$PKG_CONFIG" --variable=prefix "$pc")
libdir=$("$PKG_CONFIG" --variable=libdir "$pc")
includedir=$("$PKG_CONFIG" --variable=includedir "$pc")
{
    echo "prefix=$stage$prefix"
    echo "exec_prefix=\${prefix}"
    echo "libdir=$stage$libdir"
    echo "includedir=$stage$includedir"
    grep -v -E '^(prefix|exec_prefix|libdir|includedir)=' "$pc"
} >"$tmp/pc/hcomm.pc"
PKG_CONFIG_PATH=$tmp/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH

for f in hccl.h hccl_types.h hccl_mpi.h; do
    if [ ! -f "$stage$includedir/hccl/$f" ]; then
        echo "pkgconfig.sh: FAIL: $includedir/hccl/$f not installed"
        exit 1
    fi
done

cflags=$("$PKG_CONFIG" --cflags hcomm) || { echo "pkgconfig.sh: FAIL: pkg-config --cflags hcomm"; exit 1; }
libs=$("$PKG_CONFIG" --libs hcomm) || { echo "pkgconfig.sh: FAIL: pkg-config --libs hcomm"; exit 1; }
echo "pkg-config --cflags hcomm: $cflags"
echo "pkg-config --libs hcomm:   $libs"

cat >"$tmp/mini.c" <<'PROG'
#include <stdio.h>
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>
int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    HcclComm comm;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (HcclCommInitMpi(MPI_COMM_WORLD, &comm) != HCCL_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double x[3] = {rank + 1.0, 2.0 * rank, -1.0};
    if (HcclAllReduce(x, x, 3, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_SUM, comm, NULL) != HCCL_SUCCESS)
        bad = 1;
    bad |= x[0] != size * (size + 1) / 2.0 || x[1] != size * (size - 1.0) || x[2] != -size;
    if (rank == 0)
        printf("mini: hcomm %u, allreduce %s\n", HcommGetVersion(), bad ? "WRONG" : "ok");
    HcclCommDestroy(comm);
    MPI_Finalize();
    return bad;
}
PROG
cat >"$tmp/nompi.c" <<'PROG'
#include <hccl/hccl.h>
int main(void) { return HcclGetErrorString(HCCL_SUCCESS) == 0; }
PROG

failed=
# shellcheck disable=SC2086 # pkg-config output is a list of words
run() {
    echo "+ $*"
    "$@" || { failed="$failed [$*]"; return 1; }
}
# shellcheck disable=SC2086
run "$MPICC" $cflags "$tmp/mini.c" -o "$tmp/mini" $libs
ex=$top_srcdir/examples/allreduce.c
if [ -f "$ex" ]; then
    # shellcheck disable=SC2086
    run "$MPICC" $cflags "$ex" -o "$tmp/allreduce" $libs
fi
# shellcheck disable=SC2086
run "$CC" $cflags -c "$tmp/nompi.c" -o "$tmp/nompi.o"
# the header alone, without MPI's include path, must also link
# shellcheck disable=SC2086
run "$MPICC" "$tmp/nompi.o" -o "$tmp/nompi" $libs && run "$tmp/nompi"

# The staged library is found through the rpath that hcomm.pc adds; make
# sure it is the staged one, not another installation.
if [ -x "$tmp/mini" ] && command -v ldd >/dev/null 2>&1; then
    echo "+ ldd $tmp/mini | grep hcomm"
    ldd "$tmp/mini" | grep hcomm
    if ! ldd "$tmp/mini" | grep hcomm | grep -q "$stage"; then
        echo "pkgconfig.sh: the program does not load the staged libhcomm"
        failed="$failed [ldd]"
    fi
fi
[ -x "$tmp/mini" ] && run sh "$here/mpirun.sh" 2 "$tmp/mini"
[ -x "$tmp/allreduce" ] && run sh "$here/mpirun.sh" 2 "$tmp/allreduce"

if [ -n "$failed" ]; then
    echo "pkgconfig.sh: FAILED:$failed"
    exit 1
fi
echo "pkgconfig.sh: installed library, headers and hcomm.pc work"
exit 0
