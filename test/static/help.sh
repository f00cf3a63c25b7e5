#!/bin/sh
# test/static/help.sh - every tool answers --help: exit status 0 and a
# usage on stdout that names the tool. The programs of the build tree
# (tools/hcomm-*, the examples that take arguments; each runs alone, as an
# MPI singleton, without mpirun) and the scripts of the source tree
# (tools/*.sh, tools/hcomm-cluster). Fails if one is missing, answers with
# another status, prints nothing or runs longer than 60 s.
set -u
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${top_builddir:-$src/_build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 5 60"
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT

bad=0
n=0
# check NAME COMMAND...: COMMAND --help exits 0 and its stdout names NAME
check() {
    name=$1
    shift
    n=$((n + 1))
    # shellcheck disable=SC2086 # $tmo: the timeout command and its options
    $tmo "$@" --help >"$out" 2>/dev/null </dev/null
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL: $* --help: exit status $rc"
        bad=$((bad + 1))
    elif ! grep -q -- "$name" "$out"; then
        echo "FAIL: $* --help: no usage naming $name on stdout"
        bad=$((bad + 1))
    else
        echo "ok: $* --help ($(wc -l <"$out") lines)"
    fi
}

for p in tools/hcomm-perf tools/hcomm-floor tools/hcomm-split-bench tools/hcomm-topo \
    tools/hcomm-tune tools/hcomm-mpibench examples/3d_parallel examples/elastic \
    examples/fusion examples/overlap examples/registered; do
    if [ -x "$bld/$p" ]; then
        check "$(basename "$p")" "$bld/$p"
    else
        echo "FAIL: $bld/$p is not built"
        bad=$((bad + 1))
    fi
done
for s in "$src"/tools/*.sh; do
    check "$(basename "$s")" sh "$s"
done
check hcomm-cluster sh "$src/tools/hcomm-cluster"
for s in "$src"/test/static/*.sh; do
    check "$(basename "$s")" sh "$s"
done

if [ $bad -gt 0 ]; then
    echo "help.sh: FAIL: $bad of $n tools"
    exit 1
fi
echo "help.sh: $n tools answer --help"
