#!/bin/sh
# test/static/man.sh - the man pages say what the code has: man/hcomm.3
# names every function of the public headers (include/hccl/*.h) and only
# those, and every option of a tool's page (man/TOOL.1: "\-X", "\-\-word")
# but -h and --help appears in that tool's --help (the build tree's
# program, or the script of tools/).
set -u
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${top_builddir:-$src/_build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bad=0

# the public functions: a declaration line "... HcclName(" or "... HcommName("
decl=$(grep -h -o -E '^[A-Za-z_ ]*\b(Hccl|Hcomm)[A-Za-z0-9]+[ ]*\(' "$src"/include/hccl/*.h |
    grep -o -E '(Hccl|Hcomm)[A-Za-z0-9]+' | sort -u)
named=$(grep -o -E '\b(Hccl|Hcomm)[A-Za-z0-9]+' "$src/man/hcomm.3" | sort -u)
for f in $decl; do
    echo "$named" | grep -qx "$f" || { echo "FAIL: man/hcomm.3 does not name $f"; bad=$((bad + 1)); }
done
for f in $named; do
    grep -q -w "$f" "$src"/include/hccl/*.h ||
        { echo "FAIL: man/hcomm.3 names $f, which the headers do not declare"; bad=$((bad + 1)); }
done
echo "hcomm.3: $(echo "$decl" | wc -w) functions of the headers"

for page in "$src"/man/*.1; do
    tool=$(basename "$page" .1)
    if [ -x "$bld/tools/$tool" ]; then
        help=$("$bld/tools/$tool" --help 2>/dev/null </dev/null)
    elif [ -f "$src/tools/$tool" ]; then
        help=$(sh "$src/tools/$tool" --help 2>/dev/null </dev/null)
    else
        echo "FAIL: man/$tool.1: no tool $tool in $bld/tools or $src/tools"
        bad=$((bad + 1))
        continue
    fi
    # "\-X" and "\-\-word" in the page, as "-X" and "--word"
    opts=$(grep -o -E '\\-(\\-[a-z][a-z-]*|[A-Za-z])\b' "$page" | sed 's/\\//g' | sort -u)
    n=0
    for o in $opts; do
        case $o in -h | --help) continue ;; esac # the help itself
        n=$((n + 1))
        printf '%s\n' "$help" | grep -q -- "$o\b" ||
            { echo "FAIL: man/$tool.1 has $o, $tool --help does not"; bad=$((bad + 1)); }
    done
    echo "$tool.1: $n options checked against --help"
done

if [ $bad -gt 0 ]; then
    echo "man.sh: FAIL: $bad"
    exit 1
fi
echo "man.sh: the pages match the headers and the tools"
