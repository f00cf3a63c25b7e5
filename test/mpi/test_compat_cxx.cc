// test/mpi/test_compat_cxx.cc - test_compat.c, unchanged, compiled as C++.
#include "test_compat.c"
