#!/bin/sh
# test/mpi/soakfail.sh - test_soak -F: a member fails in the middle of a
# random sequence (SIGKILL, or SIGSTOP: a hung process), with operations
# of its batch in flight on streams and on three communicators; the
# survivors must get right results or HCCL_E_REMOTE / HCCL_E_TIMEOUT in
# that batch (never a hang, a crash or a write outside the receive
# buffer), recover every communicator (HcclCommAbort, HcclCommRemoveMember,
# or HcclCommDestroy and a new split), and then get every result right
# bit for bit; a second failure later in the same run (HOW kill,stop)
# hits the recovered communicators, kill2 kills two ranks at once (one
# HcclCommRemoveMember per communicator drops both), and "add" takes a newcomer in
# (HcclCommAddMember spawns it; it joins the sequence where the others
# are). HCCL_EXEC_TIMEOUT=5 (elastic_lib.sh).
# Each case is HOW:NP[:OPTIONS] (test_soak -F HOW on NP ranks, with
# OPTIONS, commas for spaces: -A registered buffers, made again after
# each removal); then stop,kill on 4 ranks declared on two hosts
# (HCCL_TOPO_FILE: notices and traffic between them over the TCP-only
# worker; HC_SOAKF_NO_HOSTS=1 skips it). HC_SOAKF_CASES overrides the
# cases, HC_SOAK_OPS the operations per run, HC_SOAK_SEED the base seed
# (the seed picks the failed rank and the operation too: test_soak prints
# both).
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-soakfail.XXXXXX") || exit 99
. "$here/elastic_lib.sh"
prog=$top_builddir/test/mpi/test_soak
if [ ! -x "$prog" ]; then
    echo "soakfail.sh: $prog: not built" >&2
    exit 99
fi
: "${HC_SOAKF_CASES:=kill,add:4 stop:3 stop,kill:5 stop,add:4:-A kill,kill:8 kill2,add:5}"
: "${HC_SOAK_OPS:=400}"
: "${HC_SOAK_SEED:=20261202}"
k=0
# one case: HOW:NP[:OPTIONS]; $1 is a label for the log
run_case() {
    c=$1
    how=${c%%:*}
    rest=${c#*:}
    np=${rest%%:*}
    args=
    [ "$rest" != "$np" ] && args=$(echo "${rest#*:}" | tr , ' ')
    # survivors: the ranks that started, less those that fail, plus newcomers
    nlost=$(printf '%s\n' "$how" | tr , '\n' | grep -c -E '^(kill|stop)$')
    nlost=$((nlost + 2 * $(printf '%s\n' "$how" | tr , '\n' | grep -c '^kill2$')))
    nadd=$(printf '%s\n' "$how" | tr , '\n' | grep -c '^add$')
    nsurv=$((np - nlost + nadd))
    k=$((k + 1))
    seed=$((HC_SOAK_SEED + 10 * k + np))
    d=$tmp/$k-$how-$np
    mkdir -p "$d"
    echo "=== test_soak -F $how on $np ranks${args:+ ($args)}${2:+, $2}, seed $seed"
    # shellcheck disable=SC2086
    launch "$np" "$prog" -n "$HC_SOAK_OPS" -s "$seed" -F "$how" -D "$d" $args >"$d/log" 2>&1
    ok=1
    wait_files "$d" "$nsurv" 150 || ok=0
    # the failed ranks (a stopped one lives on): all of them, then mpirun
    # shellcheck disable=SC2046
    [ -s "$d/victim.pid" ] && kill -9 $(cat "$d/victim.pid") 2>/dev/null
    finish "$d"
    if [ $ok -eq 0 ]; then
        cat "$d/log"
        echo "soakfail.sh: only $(find "$d" -name 'result.*' ! -name '*.tmp' | wc -l) of" \
            "$nsurv survivors finished within 150 s (hang?)"
        failed="$failed $c(hang)"
        return
    fi
    cat "$d/log"
    cat "$d"/result.*
    if grep -v -q 'fails=0 ' "$d"/result.*; then
        failed="$failed $c${2:+($2)}"
    fi
}
for c in $HC_SOAKF_CASES; do
    run_case "$c"
done
# 4 ranks declared on two hosts (HCCL_TOPO_FILE): the survivors' notices
# and traffic between the declared hosts go through the TCP-only worker
if [ -z "${HC_SOAKF_NO_HOSTS:-}" ]; then
    HCCL_TOPO_FILE=$here/two-hosts.topo
    export HCCL_TOPO_FILE
    run_case "stop,kill:4" "two declared hosts"
    unset HCCL_TOPO_FILE
fi
if [ -n "$failed" ]; then
    echo "soakfail.sh: FAILED:$failed"
    exit 1
fi
echo "soakfail.sh: all runs passed"
exit 0
