#!/bin/sh
# test/fuzz/replay.sh - make check's regression run of the fuzz harnesses:
# every test/fuzz/fuzz_NAME.c, built with the normal compiler and
# test/fuzz/replay.c as test/fuzz/replay_NAME, reads each input of its seed
# corpus test/fuzz/corpus/NAME/ once (inputs that once crashed stay there).
# A harness without a corpus, or one that was not built, fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
failed=0 n=0
for src in "$here"/fuzz_*.c; do
    name=$(basename "$src" .c)
    name=${name#fuzz_}
    corpus=$here/corpus/$name
    bin=$top_builddir/test/fuzz/replay_$name
    n=$((n + 1))
    if [ ! -d "$corpus" ]; then
        echo "replay.sh: $src has no seed corpus $corpus"
        failed=1
    elif [ ! -x "$bin" ]; then
        echo "replay.sh: $bin was not built (make check builds it)"
        failed=1
    elif ! "$bin" "$corpus"; then
        echo "replay.sh: FAILED: $name"
        failed=1
    fi
done
[ "$n" -gt 0 ] || { echo "replay.sh: no harness in $here"; exit 1; }
exit $failed
