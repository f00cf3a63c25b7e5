dnl m4/hc_deps.m4 - configure checks for hcomm's dependencies. Each missing
dnl dependency stops configure and names the Debian package that provides it.

dnl HC_CHECK_MPI: Open MPI's mpicc; MPI_CFLAGS / MPI_LIBS from --showme.
AC_DEFUN([HC_CHECK_MPI], [
  AC_ARG_VAR([MPICC], [MPI C compiler wrapper (default: mpicc)])
  AC_CHECK_PROGS([MPICC], [mpicc], [no])
  AS_IF([test "x$MPICC" = xno],
    [AC_MSG_ERROR([mpicc not found: install Open MPI (Debian: apt-get install libopenmpi-dev openmpi-bin)])])
  AC_MSG_CHECKING([MPI compile flags])
  MPI_CFLAGS=`$MPICC --showme:compile 2>/dev/null`
  AS_IF([test $? -ne 0],
    [AC_MSG_ERROR([$MPICC --showme:compile failed: hcomm needs Open MPI's wrapper (apt-get install libopenmpi-dev)])])
  AC_MSG_RESULT([$MPI_CFLAGS])
  AC_MSG_CHECKING([MPI link flags])
  MPI_LIBS=`$MPICC --showme:link 2>/dev/null`
  AC_MSG_RESULT([$MPI_LIBS])
  hc_save_CFLAGS=$CFLAGS; hc_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $MPI_CFLAGS"; LIBS="$MPI_LIBS $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[MPI_Init(0, 0); MPI_Finalize();]])],
    [], [AC_MSG_ERROR([cannot link an MPI program: apt-get install libopenmpi-dev])])
  AC_CHECK_FUNCS([MPI_Comm_spawn MPI_Open_port])
  AC_CHECK_DECLS([MPIX_ERR_PROC_FAILED], [], [], [[#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif]])
  CFLAGS=$hc_save_CFLAGS; LIBS=$hc_save_LIBS
  AC_PATH_PROGS([MPIRUN], [mpirun mpiexec], [no])
  AS_IF([test "x$MPIRUN" = xno],
    [AC_MSG_ERROR([mpirun not found: apt-get install openmpi-bin])])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
  AC_SUBST([MPIRUN])
])

dnl HC_CHECK_UCX: UCX's ucp, through pkg-config.
AC_DEFUN([HC_CHECK_UCX], [
  PKG_CHECK_MODULES([UCX], [ucx >= 1.10], [],
    [AC_MSG_ERROR([UCX not found (pkg-config ucx): apt-get install libucx-dev])])
  UCX_VERSION=`$PKG_CONFIG --modversion ucx`
  hc_save_CFLAGS=$CFLAGS; hc_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $UCX_CFLAGS"; LIBS="$UCX_LIBS $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <ucp/api/ucp.h>]], [[ucp_get_version_string();]])],
    [], [AC_MSG_ERROR([cannot link with UCX's libucp: apt-get install libucx-dev])])
  CFLAGS=$hc_save_CFLAGS; LIBS=$hc_save_LIBS
])

dnl HC_CHECK_HWLOC: hwloc for topology detection.
AC_DEFUN([HC_CHECK_HWLOC], [
  PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [],
    [AC_MSG_ERROR([hwloc 2.x not found (pkg-config hwloc): apt-get install libhwloc-dev])])
  HWLOC_VERSION=`$PKG_CONFIG --modversion hwloc`
])

dnl HC_CHECK_JSONC: json-c reads HCCL rank tables (HcclCommInitClusterInfo).
AC_DEFUN([HC_CHECK_JSONC], [
  PKG_CHECK_MODULES([JSONC], [json-c], [],
    [AC_MSG_ERROR([json-c not found (pkg-config json-c): apt-get install libjson-c-dev])])
])

dnl HC_CHECK_CHECK: the Check unit-test framework (make check).
AC_DEFUN([HC_CHECK_CHECK], [
  PKG_CHECK_MODULES([CHECK], [check >= 0.11], [],
    [AC_MSG_ERROR([Check not found (pkg-config check), needed by make check: apt-get install check])])
])

dnl HC_CHECK_CUDA: --with-cuda[=DIR]; off by default.
AC_DEFUN([HC_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [build the CUDA path (device-buffer reductions) with the toolkit in DIR (default /usr/local/cuda); off unless given])],
    [], [with_cuda=no])
  hc_cuda_summary=no
  AS_IF([test "x$with_cuda" != xno], [
    AS_IF([test "x$with_cuda" = xyes], [CUDA_HOME=/usr/local/cuda], [CUDA_HOME=$with_cuda])
    AC_ARG_VAR([NVCC], [CUDA compiler (default: DIR/bin/nvcc)])
    AS_IF([test -z "$NVCC"], [NVCC="$CUDA_HOME/bin/nvcc"])
    AS_IF([test -x "$NVCC"], [],
      [AC_MSG_ERROR([--with-cuda: $NVCC not found; install the CUDA Toolkit or give --with-cuda=DIR])])
    AS_IF([test -f "$CUDA_HOME/include/cuda_runtime.h"], [],
      [AC_MSG_ERROR([--with-cuda: $CUDA_HOME/include/cuda_runtime.h not found])])
    CUDA_CFLAGS="-I$CUDA_HOME/include"
    hc_cuda_libdir="$CUDA_HOME/lib64"
    AS_IF([test -d "$hc_cuda_libdir"], [], [hc_cuda_libdir="$CUDA_HOME/lib"])
    CUDA_LIBS="-L$hc_cuda_libdir -Wl,-rpath,$hc_cuda_libdir -lcudart -lstdc++"
    hc_save_CFLAGS=$CFLAGS; hc_save_LIBS=$LIBS
    CFLAGS="$CFLAGS $CUDA_CFLAGS"; LIBS="$CUDA_LIBS $LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime.h>]], [[int n; cudaGetDeviceCount(&n);]])],
      [], [AC_MSG_ERROR([--with-cuda: cannot link with libcudart in $hc_cuda_libdir])])
    CFLAGS=$hc_save_CFLAGS; LIBS=$hc_save_LIBS
    AC_DEFINE([HAVE_CUDA], [1], [Build the CUDA path])
    NVCCFLAGS="${NVCCFLAGS:--O3}"
    hc_cuda_summary="yes ($CUDA_HOME)"
  ])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$with_cuda" != xno])
  AC_SUBST([CUDA_CFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([NVCC])
  AC_SUBST([NVCCFLAGS])
])
