#!/bin/sh
# tools/bench-load.sh - 2-rank AllReduce with and without competing load.
#
# usage: tools/bench-load.sh [-r RUNS] [-l LOADERS] BUILD_DIR [BUILD_DIR ...]
#
# For each build directory (e.g. the build of main and the build under
# test), runs tools/hcomm-perf at 2 ranks: AllReduce of 8 B, 64 KiB and
# 5 MiB (float sum) and a fused 5 MiB HcclAllReduceMulti, once on the
# machine as it is ("idle") and once beside LOADERS busy processes
# (default: one per online CPU, each an endless shell loop). Builds, cases
# and modes alternate within each round, so a change of the machine's
# load hits them alike; RUNS rounds (default 5). Prints the median time
# (us) of every build x case x mode, and loaded / idle.
# Extra mpirun options: MPIRUN_OPTS (default --allow-run-as-root).
set -e
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
case ${1:-} in
-h | --help) usage; exit 0 ;;
esac
runs=5
loaders=$(nproc)
while getopts r:l:h o; do
    case $o in
    r) runs=$OPTARG ;;
    l) loaders=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { usage >&2; exit 2; }
: "${MPIRUN_OPTS:=--allow-run-as-root}"
tmp=$(mktemp -d)
pids=""
stop_load() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    for p in $pids; do wait "$p" 2>/dev/null || true; done
    pids=""
}
trap 'stop_load; rm -rf "$tmp"' EXIT INT TERM

# case name, hcomm-perf arguments
cases="ar8:-b 8 -e 8 -n 2000
ar64k:-b 64K -e 64K -n 500
ar5m:-b 5M -e 5M -n 30
multi5m:-C allreduce_multi -b 5M -e 5M -n 30"

one() { # build case-args -> time in us (the last data line, column 6)
    # shellcheck disable=SC2086
    mpirun $MPIRUN_OPTS -np 2 "$1/tools/hcomm-perf" -w 5 -T 1 $2 2>&1 </dev/null |
        awk '/^ +[0-9]/ { t = $6 } END { if (t == "") exit 1; print t }'
}

for r in $(seq 1 "$runs"); do
    for mode in idle load; do
        if [ $mode = load ]; then
            i=0
            while [ $i -lt "$loaders" ]; do
                sh -c 'while :; do :; done' &
                pids="$pids $!"
                i=$((i + 1))
            done
        fi
        echo "$cases" | while IFS=: read -r name args; do
            b=0
            for build in "$@"; do
                b=$((b + 1))
                t=$(one "$build" "$args") || t=NaN
                echo "$t" >> "$tmp/$b.$name.$mode"
            done
        done
        stop_load
    done
    echo "round $r of $runs done" >&2
done

med() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '# %d rounds, %d loaders, medians in us\n' "$runs" "$loaders"
printf '%-44s %-8s %12s %12s %8s\n' build case idle loaded ratio
b=0
for build in "$@"; do
    b=$((b + 1))
    echo "$cases" | while IFS=: read -r name args; do
        i=$(med "$tmp/$b.$name.idle")
        l=$(med "$tmp/$b.$name.load")
        printf '%-44s %-8s %12s %12s %8.2f\n' "$build" "$name" "$i" "$l" \
            "$(echo "$l $i" | awk '{ print $1 / $2 }')"
    done
done
