#!/bin/sh
# A/B of the fast lane: the build before it (/tmp/build_base) and after (/tmp/build), alternating launches.
# usage: ab.sh NP SETTING(default|tuned) ROUNDS [COLLECTIVE [MAXBYTES]]
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np=$1 set=$2 rounds=$3 coll=${4:-broadcast} e=${5:-512}
T=""
[ "$set" = tuned ] && T="--mca btl_vader_single_copy_mechanism none -x GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"
for r in $(seq 1 $rounds); do
  for b in base new; do
    d=/tmp/build; [ $b = base ] && d=/tmp/build_base
    printf '%s r%d %s np%d: ' $set $r $b $np
    mpirun --oversubscribe -np $np $T $d/tools/hcomm-perf -C $coll -b 8 -e $e -f 2 -M 2>&1 |
      awk '!/^#/ && NF > 10 { printf "%s %s/%s=%s; ", $1, $6, $10, $12 }'
    echo
  done
done
