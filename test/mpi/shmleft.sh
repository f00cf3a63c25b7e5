#!/bin/sh
# test/mpi/shmleft.sh - nothing stays in /dev/shm when a rank is killed
# (test_shmleft, 3 ranks, --mca orte_abort_on_non_zero_status 0,
# UCX_ALLOC_PRIO=md:posix so that the staging segment is a POSIX file):
#  1. init: the victim dies (SIGKILL) while UCX writes one of its
#     ucx_shm_posix_* files, before UCX removes its name;
#  2. after: the victim dies after init and a collective.
# Each run: mpirun must return (mpirun.sh's timeout fails a hang), both
# survivors must report "ok", the file the victim died on must be gone, and
# no ucx_shm_posix_* file that was not there before the job may remain
# unless a live process (another job) still has it open or mapped.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-shmleft.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=

# whether a live process has /dev/shm/$1 open or mapped
held() {
    for p in /proc/[0-9]*; do
        if ls -l "$p/fd" 2>/dev/null | grep -q "/dev/shm/$1\$" ||
            grep -q "/dev/shm/$1\$" "$p/maps" 2>/dev/null; then
            return 0
        fi
    done
    return 1
}

posix_files() {
    ls /dev/shm 2>/dev/null | grep '^ucx_shm_posix_' | sort
}

for mode in init after; do
    d=$tmp/$mode
    mkdir -p "$d"
    echo "=== $mode: 3 ranks, the last one killed ($mode), UCX_ALLOC_PRIO=md:posix"
    posix_files >"$d/before"
    UCX_ALLOC_PRIO=md:posix HCCL_BUFFSIZE=256 HC_TEST_TIMEOUT=120 \
        HC_MPIRUN_ARGS="--mca orte_abort_on_non_zero_status 0" \
        sh "$here/mpirun.sh" 3 test_shmleft "$mode" "$d" >"$d/log" 2>&1
    rc=$?
    grep -E 'test_shmleft|TIMEOUT|timeout: ' "$d/log"
    posix_files >"$d/after"
    [ $rc -eq 99 ] && exit 99
    if [ $rc -eq 124 ] || grep -q 'timeout: sending signal' "$d/log"; then
        failed="$failed $mode(hang)"
        continue
    fi
    for r in 0 1; do
        if [ "$(cat "$d/result.$r" 2>/dev/null)" != ok ]; then
            echo "shmleft.sh: $mode: rank $r: $(cat "$d/result.$r" 2>/dev/null || echo 'no result')"
            failed="$failed $mode(rank$r)"
        fi
    done
    if [ "$mode" = init ]; then
        if [ -e "$d/missed" ] || [ ! -s "$d/victim.file" ]; then
            echo "shmleft.sh: init: the victim was not killed while it wrote a POSIX file"
            failed="$failed init(missed)"
        else
            f=$(cat "$d/victim.file")
            echo "shmleft.sh: init: the victim died writing /dev/shm/$f"
            if [ -e "/dev/shm/$f" ]; then
                echo "shmleft.sh: init: /dev/shm/$f is still there"
                failed="$failed init(left)"
            fi
        fi
    fi
    for f in $(comm -13 "$d/before" "$d/after"); do
        if ! held "$f"; then
            ls -l "/dev/shm/$f"
            echo "shmleft.sh: $mode: /dev/shm/$f remains and no process holds it"
            failed="$failed $mode(orphan)"
        fi
    done
done

if [ -n "$failed" ]; then
    echo "shmleft.sh: FAILED:$failed"
    exit 1
fi
echo "shmleft.sh: all runs passed"
exit 0
