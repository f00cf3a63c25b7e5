#!/bin/sh
# usage: tools/demo.sh   (NP=N: N ranks instead of 2)
# The demo: install dependencies, build, and benchmark hcomm against Open
# MPI's own collectives at 2 ranks on this machine (AllReduce, 8 B - 64 MB,
# results checked, MPI run in the same processes for a fair ratio), with
# malloc'd buffers and then with registered ones (HcclMemAlloc).
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tools/install-deps.sh"
"$top/tools/build.sh"
cd "$top/_build"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
NP=${NP:-2}
echo "== mpirun -np $NP ./examples/allreduce"
mpirun -np "$NP" --oversubscribe --bind-to none ./examples/allreduce
if [ -x tools/hcomm-perf ]; then
    echo "== mpirun -np $NP tools/hcomm-perf -C allreduce -b 8 -e 64M -f 4 -M"
    mpirun -np "$NP" --oversubscribe --bind-to none tools/hcomm-perf -C allreduce -b 8 -e 64M -f 4 -M
fi
if [ -x tools/hcomm-perf ]; then
    # the same with buffers from HcclMemAlloc, registered with the
    # communicator (docs/DESIGN.md, "Registered buffers")
    echo "== mpirun -np $NP tools/hcomm-perf -C allreduce -b 8 -e 64M -f 4 -M -A"
    mpirun -np "$NP" --oversubscribe --bind-to none tools/hcomm-perf -C allreduce -b 8 -e 64M -f 4 -M -A
fi
