#!/bin/sh
# test/mpi/gpu.sh - test_gpu (device buffers, docs/GPU.md) at 2 ranks in
# deterministic mode (CUDA builds only). Without a usable GPU, test_gpu
# checks the host fallback and says so; tools/gpu-check.sh runs the full
# set (2, 3 and 4 ranks, stream order, busbw) on a GPU machine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
HCCL_DETERMINISTIC=1 sh "$here/mpirun.sh" 2 test_gpu matrix
