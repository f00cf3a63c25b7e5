# test/sanitize.sh - the environment of the tests of a build configured with
# --enable-sanitizers (docs/DESIGN.md, "Sanitizer builds"). Sourced (POSIX
# sh) by `make check` before every test and by test/mpi/mpirun.sh; does
# nothing unless HC_SANITIZE=yes. Options already in ASAN_OPTIONS,
# UBSAN_OPTIONS or LSAN_OPTIONS come after ours, so they win.
#
#   ASAN_OPTIONS   fast_unwind_on_malloc=0: allocation stacks unwound
#                  through Open MPI, libevent and hwloc (built without frame
#                  pointers), so that the suppressions below can name them
#   UBSAN_OPTIONS  print_stacktrace=1 (the build stops at the first finding:
#                  -fno-sanitize-recover=undefined)
#   LSAN_OPTIONS   suppressions=test/lsan.supp: leaks of third-party
#                  libraries only (see that file)
#
# Needs top_srcdir (make check exports it; mpirun.sh sets it).
if [ "${HC_SANITIZE:-no}" = yes ] && [ -z "${HC_SANITIZE_ENV:-}" ]; then
    ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    LSAN_OPTIONS="suppressions=$top_srcdir/test/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    HC_SANITIZE_ENV=1 # set once (make check, then mpirun.sh)
    export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS HC_SANITIZE_ENV
fi
