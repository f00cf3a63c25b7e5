#!/bin/sh
# A/B of tuning rules, three interleaved launches (docs/PERFORMANCE.md).
# usage: [NP=n] [MPIARGS="..."] ab.sh COLL B E F "hcomm-perf args" name1 rulefile1 name2 rulefile2 ...
# rule file "none" = the built-in table. Output per size: variant, launch,
# size, hcomm us, MPI us, ratio, #wrong, core-to-core latency (ns).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
coll=$1 b=$2 e=$3 f=$4 extra=$5; shift 5
np=${NP:-2}
pairs="$*"
for run in 1 2 3; do
  set -- $pairs
  while [ $# -gt 0 ]; do
    name=$1 file=$2; shift 2
    if [ "$file" = none ]; then tf=""; else tf="-x HCCL_TUNE_FILE=$file"; fi
    over=""; [ "$np" -gt 2 ] && over=--oversubscribe
    # shellcheck disable=SC2086
    mpirun -np "$np" $over ${MPIARGS:-} $tf /tmp/build/tools/hcomm-perf $extra -C "$coll" -b "$b" -e "$e" -f "$f" 2>&1 | \
      awk -v n="$name" -v r="$run" '/core-to-core latency:/ {lat=$4}
        $1 ~ /^[0-9]+$/ {printf "%-10s r%d %10s hc %10s mpi %10s ratio %s wrong %s lat %s\n", n, r, $1, $6, $10, $12, $9, lat}'
  done
done
