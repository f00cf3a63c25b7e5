#!/bin/sh
# A/B of two builds, alternating launches: ab2.sh DIR_A DIR_B NP SETTING ROUNDS COLL MAXBYTES
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
A=$1 B=$2 np=$3 set=$4 rounds=$5 coll=$6 e=$7
T=""
[ "$set" = tuned ] && T="--mca btl_vader_single_copy_mechanism none -x GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"
for r in $(seq 1 $rounds); do
  for d in $A $B; do
    printf '%s r%d %s np%d %s: ' $set $r $(basename $d) $np $coll
    mpirun --oversubscribe -np $np $T $d/tools/hcomm-perf -C $coll -b 8 -e $e -f 2 -M 2>&1 |
      awk '!/^#/ && NF > 10 { printf "%s %s/%s=%s; ", $1, $6, $10, $12 }'
    echo
  done
done
