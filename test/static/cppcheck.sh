#!/bin/sh
# test/static/cppcheck.sh - cppcheck's warnings (and errors) over every C
# file of the tree: none. Found, when it was added: a dereference of a
# failed calloc (HcclGroupEnd's task), unchecked allocations in hcomm-perf
# and a test, and three false positives now quieted by initializing. Skips
# (77) where cppcheck is not installed (tools/install-deps.sh installs it).
set -u
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${top_builddir:-$src}
command -v cppcheck >/dev/null 2>&1 || { echo "cppcheck not installed: skipped"; exit 77; }
cppcheck --version
out=$(cppcheck --enable=warning,portability --inline-suppr -q --std=c11 \
    -I "$src/include" -I "$src/src" -I "$bld" \
    "$src/src" "$src/coll" "$src/topo" "$src/tools" "$src/test" "$src/examples" 2>&1 |
    grep -E '(error|warning|portability):')
if [ -n "$out" ]; then
    echo "$out"
    echo "cppcheck.sh: FAIL: $(echo "$out" | wc -l) finding(s)"
    exit 1
fi
echo "cppcheck.sh: no findings"
