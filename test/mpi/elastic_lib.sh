# test/mpi/elastic_lib.sh - shared by elastic.sh and elastic_add.sh (sourced).
# Runs in which a rank dies: mpirun may never return, so the scripts start
# it in the background, wait for the survivors' results, then end it by
# pid. Needs $tmp; sets $mpid.
: "${top_builddir:=$here/../..}"
: "${MPIRUN:=mpirun}"
mpid=
spid=
failed=
UCX_WARN_UNUSED_ENV_VARS=n
HCCL_EXEC_TIMEOUT=5
export UCX_WARN_UNUSED_ENV_VARS HCCL_EXEC_TIMEOUT
cleanup() {
    [ -n "$mpid" ] && kill -9 "$mpid" 2>/dev/null
    [ -n "$spid" ] && kill "$spid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

# mpirun in the background, for runs in which a rank dies; sets $mpid
launch() {
    np=$1
    shift
    xenv=
    for v in $(env | sed -n 's/^\(HCCL_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p' |
        sort -u); do
        xenv="$xenv -x $v"
    done
    # shellcheck disable=SC2086
    "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
        --mca orte_abort_on_non_zero_status 0 -np "$np" $xenv "$@" &
    mpid=$!
}

# end a launch: the stopped victim first (pid file), then mpirun
finish() {
    if [ -s "$1/victim.pid" ]; then # one pid per line (several victims)
        while read -r vpid; do
            kill -9 "$vpid" 2>/dev/null
        done <"$1/victim.pid"
    fi
    i=0
    while [ $i -lt 20 ] && kill -0 "$mpid" 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 "$mpid" 2>/dev/null; then
        echo "elastic: mpirun (pid $mpid) still running after the survivors finished:" \
            "ending it"
        kill "$mpid" 2>/dev/null
        sleep 1
        kill -9 "$mpid" 2>/dev/null
    fi
    wait "$mpid" 2>/dev/null
    mpid=
}

# wait for N files named PATTERN in DIR (at most SECONDS)
wait_files() {
    dir=$1 n=$2 secs=$3
    i=0
    while [ $i -lt $((secs * 10)) ]; do
        nfound=$(find "$dir" -name 'result.*' ! -name '*.tmp' 2>/dev/null | wc -l)
        [ "$nfound" -ge "$n" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

