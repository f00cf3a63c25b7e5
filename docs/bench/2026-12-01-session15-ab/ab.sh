#!/bin/sh
# A/B of two builds of hcomm (fifteenth session): interleaved launches of
# hcomm-perf -M from each build directory, raw output kept per launch.
#   ab.sh BASE_BUILD NEW_BUILD NP COLL "hcomm-perf args" NAME [LAUNCHES]
# e.g. ab.sh /tmp/build-base /tmp/build 2 allreduce "-b 8 -e 512 -f 4 -n 20000" ar2
set -e
base=$1 new=$2 np=$3 coll=$4 args=$5 name=$6 k=${7:-3}
over=; [ "$np" -gt 2 ] && over=--oversubscribe
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
i=1
while [ $i -le "$k" ]; do
    for v in base new; do
        eval dir=\$$v
        mpirun -np "$np" $over "$dir/tools/hcomm-perf" -C "$coll" -M $args > "$name.$v.r$i.txt" 2>&1
    done
    i=$((i + 1))
done
# table: size, then hcomm time and ratio of each launch
for v in base new; do
    for f in "$name.$v".r*.txt; do
        lat=$(sed -n 's/^# core-to-core latency: \([0-9]*\) ns.*/\1/p' "$f")
        printf '%s %s (%s ns):' "$v" "$f" "${lat:-n/a}"
        awk '/^ +[0-9]/ {printf " %s B %s us %sx;", $1, $6, $12}' "$f"
        echo
    done
done
