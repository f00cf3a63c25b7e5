#!/bin/sh
# 2-rank AllReduce 32-128 MiB beside tuned Open MPI (-M -R), malloc'd
# buffers: the built-in choice (DIRECT one-shot, 256 KiB chunks) against
# tuning files (*.tune here) with other chunks and with the two-phase
# shape streamed into RECV (nt); three interleaved rounds.
# Usage: sh run.sh > run.txt   (hcomm-perf from /tmp/build; run.txt was
# made with a field off by one in the latency: "(ns ns)")
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=/tmp/build/tools/hcomm-perf
T="--mca btl_vader_single_copy_mechanism none -x GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"
for i in 1 2 3; do
  for v in none DIRECT_nt DIRECT_chunk_128KB DIRECT_chunk_1MB DIRECT_chunk_64KB DIRECT_chunk_512KB; do
    x=; [ $v != none ] && x="-x HCCL_TUNE_FILE=$here/$v.tune"
    printf '%s r%d: ' $v $i
    mpirun -np 2 --bind-to core $T $x $P -C allreduce -b 32M -e 128M -M -R 2>&1 | awk '/^ +[0-9]/ {printf " %dM %.2fms %s%% x%s;", $1/1048576, $6/1000, $14, $12} /core-to-core/ {printf "(%s ns)", $4}'
    echo
  done
done
