#!/bin/sh
# Alternating launches of hcomm-perf's AllReduce of 64 and 128 MiB beside
# default Open MPI (-M), the buffers malloc'd with 4 KiB pages or advised
# MADV_HUGEPAGE (-H). Usage: sh thp_ab.sh PERF LAUNCHES > thp_ab.txt
perf=$1; n=${2:-6}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
i=1
while [ $i -le $n ]; do
    for h in "" -H; do
        echo "== launch $i ${h:-4k}"
        mpirun -np 2 --bind-to core "$perf" -C allreduce -b 64M -e 128M -M $h 2>&1 |
            grep -E "^ +[0-9]|core-to-core|huge pages"
    done
    i=$((i + 1))
done
