dnl m4/hc_torch.m4 - HC_CHECK_TORCH: --with-torch[=PYTHON] builds the
dnl torch.distributed backend hcomm_torch (python/hcomm_torch, docs/TORCH.md)
dnl for PYTHON (default /usr/bin/python3), which must import torch with
dnl torch.distributed; off unless given, and nothing else needs torch.
dnl Sets TORCH_PYTHON, TORCH_CPPFLAGS, TORCH_LIBS, TORCH_PYTHONDIR (the
dnl interpreter's site directory under the prefix) and HAVE_TORCH.
AC_DEFUN([HC_CHECK_TORCH], [
  AC_ARG_WITH([torch],
    [AS_HELP_STRING([--with-torch@<:@=PYTHON@:>@],
      [build the torch.distributed backend "hcomm" (module hcomm_torch) for PYTHON (default /usr/bin/python3; Debian: apt-get install python3-torch libtorch-dev); off unless given])],
    [], [with_torch=no])
  AC_ARG_VAR([TORCH_PYTHONDIR], [where hcomm_torch is installed (default: the site directory of the --with-torch interpreter under the prefix)])
  hc_torch_summary=no
  AS_IF([test "x$with_torch" != xno], [
    AS_IF([test "x$with_torch" = xyes], [TORCH_PYTHON=/usr/bin/python3], [TORCH_PYTHON=$with_torch])
    AC_MSG_CHECKING([for torch.distributed in $TORCH_PYTHON])
    hc_torch_vars=`$TORCH_PYTHON - 2>/dev/null <<'HC_EOF'
import sysconfig
import torch
import torch.distributed as dist
from torch.utils.cpp_extension import include_paths, library_paths
assert dist.is_available()
inc = include_paths() + list((sysconfig.get_paths().get("include"),))
lib = library_paths().pop(0)
print("hc_torch_version='%s'" % torch.__version__)
print("hc_torch_cppflags='%s -D_GLIBCXX_USE_CXX11_ABI=%d'" % (
    " ".join("-I" + p for p in inc), int(torch._C._GLIBCXX_USE_CXX11_ABI)))
print("hc_torch_libs='-L%s -Wl,-rpath,%s -ltorch -ltorch_cpu -lc10 -ltorch_python'" % (lib, lib))
# the site directory under a prefix P; Debian's default scheme puts
# packages of /usr/local in P/lib/pythonX.Y/dist-packages
scheme = sysconfig.get_default_scheme() if hasattr(sysconfig, "get_default_scheme") else "posix_prefix"
d = sysconfig.get_path("platlib", scheme, vars={"base": "@P@", "platbase": "@P@"})
print("hc_torch_pydir='%s'" % d.replace("@P@/local/", "@P@/").replace("@P@", "${exec_prefix}"))
HC_EOF`
    AS_IF([test $? -ne 0 || test -z "$hc_torch_vars"],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--with-torch: $TORCH_PYTHON cannot import torch.distributed and torch.utils.cpp_extension (Debian: apt-get install python3-torch libtorch-dev), or give --with-torch=PYTHON])])
    eval "$hc_torch_vars"
    AC_MSG_RESULT([torch $hc_torch_version])
    TORCH_CPPFLAGS=$hc_torch_cppflags
    TORCH_LIBS=$hc_torch_libs
    AS_IF([test -z "$TORCH_PYTHONDIR"], [TORCH_PYTHONDIR=$hc_torch_pydir])
    AC_LANG_PUSH([C++])
    hc_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $TORCH_CPPFLAGS"
    AC_CHECK_HEADER([torch/csrc/distributed/c10d/ProcessGroup.hpp], [],
      [AC_MSG_ERROR([--with-torch: the c10d headers are missing (Debian: apt-get install libtorch-dev)])])
    CPPFLAGS=$hc_save_CPPFLAGS
    AC_LANG_POP([C++])
    hc_torch_summary="torch $hc_torch_version ($TORCH_PYTHON), installs into $TORCH_PYTHONDIR"
  ])
  AC_SUBST([TORCH_PYTHON])
  AC_SUBST([TORCH_CPPFLAGS])
  AC_SUBST([TORCH_LIBS])
  AM_CONDITIONAL([HAVE_TORCH], [test "x$with_torch" != xno])
])
