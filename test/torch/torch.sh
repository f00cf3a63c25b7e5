#!/bin/sh
# test/torch/torch.sh - the torch.distributed backend "hcomm" (docs/TORCH.md)
# under mpirun, with the package staged in $top_builddir/torch-stage:
#  1. torch_ops.py on 1-4 ranks: every operation x type x reduce op against
#     Gloo's result on the same inputs, subgroups, async work, refusals;
#  2. torch_ddp.py on 2 and 4 ranks: DDP on hcomm (blocking and async
#     groups) against DDP on Gloo;
#  3. torch_dead.py on 2 and 3 ranks: a rank that exits, and on 2 ranks a
#     rank that hangs past the group's timeout: the others raise;
#  4. torch_launch.py under torchrun (python3 -m torch.distributed.run,
#     env://, no MPI) on 2 and 3 processes.
# SKIP (77) when the build is not configured --with-torch.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../../_build}"
stage=$top_builddir/torch-stage
if [ ! -f "$stage/hcomm_torch/_C.so" ]; then
    echo "torch.sh: SKIP: $stage/hcomm_torch/_C.so not built (configure --with-torch)"
    exit 77
fi
py=$(sed -n 's/^TORCH_PYTHON = //p' "$top_builddir/Makefile" 2>/dev/null)
: "${py:=/usr/bin/python3}"
mpirun_sh=$here/../mpi/mpirun.sh
export HC_MPIRUN_ARGS="-x PYTHONPATH=$stage -x LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
: "${HC_TEST_TIMEOUT:=200}"
export HC_TEST_TIMEOUT
# a port of its own for each run's TCP store
port=$((20000 + $$ % 20000))
failed=
run() {
    name=$1 np=$2
    shift 2
    port=$((port + 1))
    echo "=== $name on $np ranks"
    HC_MPIRUN_ARGS="$HC_MPIRUN_ARGS -x HC_TORCH_PORT=$port" sh "$mpirun_sh" "$np" "$py" "$here/$name" "$@"
    rc=$?
    [ $rc -eq 0 ] || { echo "torch.sh: FAIL: $name $* on $np ranks: rc=$rc"; failed="$failed $name/$np$*"; }
}
for np in 1 2 3 4; do
    run torch_ops.py $np
done
for np in 2 4; do
    run torch_ddp.py $np
done
run torch_dead.py 2 exit
run torch_dead.py 3 exit
run torch_dead.py 2 hang
# torchrun: --redirects/--tee other than 0 because Debian's torch 1.13 on
# Python 3.11 cannot parse "0" (Std.from_str returns None; docs/TORCH.md)
for np in 2 3; do
    port=$((port + 1))
    echo "=== torch_launch.py under torchrun, $np processes"
    PYTHONPATH=$stage LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
        timeout "$HC_TEST_TIMEOUT" "$py" -m torch.distributed.run --nproc_per_node=$np \
        --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:$port --redirects 2 --tee 2 \
        "$here/torch_launch.py"
    rc=$?
    [ $rc -eq 0 ] || { echo "torch.sh: FAIL: torch_launch.py under torchrun on $np: rc=$rc"; failed="$failed torchrun/$np"; }
done
if [ -n "$failed" ]; then
    echo "torch.sh: FAILED:$failed"
    exit 1
fi
echo "torch.sh: all runs passed"
exit 0
