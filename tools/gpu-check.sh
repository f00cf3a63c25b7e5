#!/bin/sh
# tools/gpu-check.sh [OUTDIR] - the GPU checks of docs/GPU.md in one run.
#
# Builds hcomm with --with-cuda in ./_build_gpu (HC_GPU_BUILD_DIR names
# another; an existing one keeps its configuration, which must have CUDA),
# runs the unit test of the
# staging pipeline (check_gpu), then on a machine with a GPU:
#   - test_gpu matrix at 2, 3 and 4 processes sharing the GPU: every
#     collective x type x op on device buffers, bit for bit against the
#     host path (HCCL_DETERMINISTIC=1: every algorithm folds in the
#     canonical order, so chunked and unchunked runs agree on floats too);
#   - test_gpu ipc at 2 and 4 processes with HCCL_GPU_IPC=1: AllReduce and
#     Broadcast through CUDA IPC handles, bit for bit against the host path,
#     and the log must show that the IPC path ran;
#   - test_gpu mismatch at 3 processes with HCCL_CHECK_ARGS=1: one rank
#     on host buffers, the others on device buffers, refused on every rank;
#   - test_gpu order at 2 processes: ordering with a user's CUDA stream and
#     with stream NULL, and what each way of waiting for a stream costs;
#   - test_gpu bench at 2 processes: busbw of AllReduce, Broadcast and
#     AllGather on host against device buffers, 8 B - 1 GiB (a table in
#     Markdown, ready for docs/GPU.md), then again with HCCL_GPU_IPC=1
#     (busbw-ipc.md: its device columns are AllReduce and Broadcast through
#     CUDA IPC).
# Without a GPU it says so, runs test_gpu's host-fallback check, and exits 0.
# Results go to OUTDIR (default ./_gpu_results): build.log, one file per
# run, machine.txt (GPU, driver, CUDA, UCX and whether UCX has CUDA
# transports), busbw.md, summary.txt. Exit status: 0 when everything
# passed (or no GPU), 1 when a check failed, 2 when the build failed.
# Sized for one GPU and 16 cores in under 8 minutes; HC_GPU_NPS overrides
# the process counts of the matrix ("2 3 4").
set -u
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/_gpu_results}
mkdir -p "$out"
out=$(cd "$out" && pwd)
: "${HC_GPU_NPS:=2 3 4}"
: "${HC_GPU_BUILD_DIR:=_build_gpu}"
t0=$(date +%s)
summary=$out/summary.txt
: >"$summary"
say() { echo "gpu-check: $*"; echo "$*" >>"$summary"; }
elapsed() { echo $(($(date +%s) - t0)); }

# ---- the machine
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "host: $(uname -n), $(nproc) cores"
    nvidia-smi -L 2>&1 || echo "nvidia-smi: not available"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null
    ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc --version 2>&1 | tail -1
    ucx_info -v 2>&1 | head -2
    echo "UCX transports with CUDA (ucx_info -d):"
    ucx_info -d 2>/dev/null | grep -E 'Transport: *(cuda|gdr)' | sort -u || true
} >"$out/machine.txt" 2>&1
if ! command -v ucx_info >/dev/null 2>&1; then
    say "ucx_info not installed: cannot list UCX's transports"
elif ucx_info -d 2>/dev/null | grep -qE 'Transport: *cuda'; then
    say "UCX has CUDA transports (see machine.txt); hcomm stages through host memory regardless"
else
    say "UCX has no CUDA transport (cuda_copy / cuda_ipc / gdr_copy absent)"
fi

# ---- build
say "build: configure --with-cuda in $HC_GPU_BUILD_DIR"
if ! (cd "$top" && HC_BUILD_DIR=$HC_GPU_BUILD_DIR nice tools/build.sh --with-cuda &&
      cd "$HC_GPU_BUILD_DIR" && make -j"$(nproc)" test/unit/check_gpu test/mpi/test_gpu) \
      >"$out/build.log" 2>&1; then
    say "build FAILED (build.log)"
    tail -20 "$out/build.log"
    exit 2
fi
bd=$top/$HC_GPU_BUILD_DIR
say "build: done after $(elapsed) s"

failed=
run() { # name, command...: output to OUTDIR/name.txt
    name=$1
    shift
    if "$@" >"$out/$name.txt" 2>&1; then
        say "$name: passed ($(elapsed) s)"
    else
        say "$name: FAILED, rc $? ($name.txt)"
        failed="$failed $name"
    fi
}
mpi() { # np, args...
    np=$1
    shift
    top_builddir=$bd HC_TEST_TIMEOUT=${HC_GPU_TIMEOUT:-150} sh "$top/test/mpi/mpirun.sh" "$np" \
        test_gpu "$@"
}

run check_gpu "$bd/test/unit/check_gpu"
if ! nvidia-smi -L >/dev/null 2>&1; then
    run fallback mpi 2 matrix
    say "no GPU on this machine: built, checked the host fallback; nothing measured"
    [ -z "$failed" ] || exit 1
    exit 0
fi

export HCCL_DETERMINISTIC=1
for np in $HC_GPU_NPS; do
    run "matrix-np$np" mpi "$np" matrix
done
# the CUDA IPC path (HCCL_GPU_IPC=1): AllReduce and Broadcast only; the log
# must show that it ran
for np in 2 4; do
    HCCL_GPU_IPC=1 HCCL_DEBUG=INFO HCCL_DEBUG_SUBSYS=COLL
    export HCCL_GPU_IPC HCCL_DEBUG HCCL_DEBUG_SUBSYS
    run "ipc-np$np" mpi "$np" ipc
    unset HCCL_GPU_IPC HCCL_DEBUG HCCL_DEBUG_SUBSYS
    n_ipc=$(grep -c 'CUDA IPC path on .*: success' "$out/ipc-np$np.txt")
    if [ "$n_ipc" -gt 0 ]; then
        say "ipc-np$np: $n_ipc operations took the CUDA IPC path"
    else
        say "ipc-np$np: FAILED: no operation took the CUDA IPC path"
        failed="$failed ipc-np$np-path"
    fi
done
unset HCCL_DETERMINISTIC
export HCCL_CHECK_ARGS=1
run mismatch-np3 mpi 3 mismatch
unset HCCL_CHECK_ARGS
run order-np2 mpi 2 order
run bench-np2 mpi 2 bench
grep '^|' "$out/bench-np2.txt" >"$out/busbw.md" 2>/dev/null || true
export HCCL_GPU_IPC=1
run bench-ipc-np2 mpi 2 bench
unset HCCL_GPU_IPC
grep '^|' "$out/bench-ipc-np2.txt" >"$out/busbw-ipc.md" 2>/dev/null || true
grep 'waiting for an idle' "$out/order-np2.txt" >>"$summary" 2>/dev/null || true
say "total: $(elapsed) s"
if [ -n "$failed" ]; then
    say "FAILED:$failed"
    exit 1
fi
say "all passed"
exit 0
