#!/bin/sh
# test/fuzz/run.sh [RUNS [NAME...]] - build the libFuzzer harnesses with
# clang and run each test/fuzz/fuzz_NAME.c (or the NAMEs given) over its
# seed corpus test/fuzz/corpus/NAME/ for RUNS inputs (default 100000).
# docs/FUZZING.md.
#
# The build lives in $FUZZ_BUILD (default _fuzz at the top of the tree),
# configured once with CC=clang --enable-fuzz. New inputs that libFuzzer
# finds go to $FUZZ_BUILD/test/fuzz/work/NAME (the seed corpus is left as
# it is); a crash leaves $FUZZ_BUILD/test/fuzz/crash-NAME-* and fails the run.
set -eu
runs=${1:-100000}
[ $# -gt 0 ] && shift
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$top/_fuzz}
command -v clang >/dev/null ||
    { echo "run.sh: clang is missing (Debian: apt-get install clang)" >&2; exit 1; }
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi)
mkdir -p "$build"
[ -f "$build/Makefile" ] || (cd "$build" && "$top/configure" CC=clang CFLAGS="-g -O1" --enable-fuzz >/dev/null)
make -C "$build" -s -j"${JOBS:-2}" fuzz
failed=
if [ $# -eq 0 ]; then
    for src in "$top"/test/fuzz/fuzz_*.c; do
        name=$(basename "$src" .c)
        set -- "$@" "${name#fuzz_}"
    done
fi
for name in "$@"; do
    src=$top/test/fuzz/fuzz_$name.c
    [ -f "$src" ] || { echo "run.sh: no harness $src" >&2; exit 1; }
    corpus=$top/test/fuzz/corpus/$name
    [ -d "$corpus" ] || { echo "run.sh: $src has no seed corpus $corpus" >&2; exit 1; }
    work=$build/test/fuzz/work/$name
    mkdir -p "$work"
    log=$build/test/fuzz/$name.log
    printf '%-10s ' "$name"
    if "$build/test/fuzz/fuzz_$name" -runs="$runs" -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$build/test/fuzz/crash-$name-" "$work" "$corpus" >"$log" 2>&1; then
        done=$(grep -E "^Done [0-9]+ runs" "$log")
        echo "$done;" $(grep -E "^stat::(new_units_added|peak_rss_mb)" "$log" | tr -s ' ')
    else
        echo "FAILED (see $log)"
        grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5
        failed="$failed $name"
    fi
done
[ -z "$failed" ] || { echo "run.sh: failed:$failed"; exit 1; }
