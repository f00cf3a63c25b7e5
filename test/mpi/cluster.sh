#!/bin/sh
# test/mpi/cluster.sh - hcomm across hosts on an emulated cluster
# (tools/hcomm-cluster, docs/CLUSTER.md): hosts are network namespaces with
# host names of their own on one bridge; the bytes between hosts must cross
# their links, never shared memory or CMA.
#
#  1. the tool: up is idempotent, status lists the hosts, a program runs on
#     each host under its host name;
#  2. on 2 hosts x 2 ranks, 3 x 2 and 4 x 1 (--map-by node): test_coll
#     (quick, no big sizes, references computed locally: -q -B -L),
#     test_soak (150 operations), test_algos -c allreduce (every AllReduce
#     algorithm forced, HIER and TORUS2D with one row per host where hosts
#     hold 2 ranks, and deterministic mode), test_split (HcclCommSplit,
#     HcclCommCreateGroup, HcclCreateSubCommConfig); and, but on 4 x 1, the
#     bytes on the links against the bytes the AllReduce sends across hosts
#     (test_topo wire: at least those, at most 1.5 times plus 64 KB);
#     hcomm-perf -M across 2 hosts x 2 ranks: exit 0, every result right,
#     and its untimed barrier is HcclBarrier ("sync": "hcomm"); the MPI
#     drop-in on 2 hosts x 1 rank: test_mpidrop passes, and its built-in
#     sizes are the cross-host ones (MPI_Allreduce and MPI_Barrier on
#     hcomm, MPI_Bcast of 4-256 KiB to MPI);
#  3. HCCL_TOPO_RING_ORDER: a RING AllReduce on 2 x 2 round robin sends
#     3 MiB across the hosts per MiB in topology order, 6 MiB in rank
#     order; the ring collectives in rank order are exact;
#  4. HcclCommInitRootInfo across 3 hosts x 2 ranks (HCCL_SOCKET_IFNAME=eth0;
#     test_topo rootinfo: AllReduce, ReduceScatter, AllGather, Broadcast);
#  5. faults under a loop of AllReduces (test_hostfail, HCCL_EXEC_TIMEOUT=5):
#     host3's link down on 4 x 1, then up again and a newcomer spawned on
#     host3 (HCCL_SPAWN_HOST) joins; host2 killed on 3 x 2. Survivors get
#     HCCL_E_TIMEOUT or HCCL_E_REMOTE, remove the lost ranks, and go on
#     with every result right;
#  6. a call that fails at its deadline while a large message is still
#     arriving (test_abandon, 3 x 1 at 100 Mbit/s; 32 MiB, where the
#     cancel waits for the receive, and 64 MiB, where it closes the
#     connection by force): the buffer is not written after the return;
#  7. link down / up, kill, down (its state deleted first, as after a
#     crash): the namespaces are gone.
#
# HCOMM_CLUSTER_FULL=1: test_coll's whole matrix with MPI's references,
# test_soak of 800 operations and test_algos for every collective, at each
# shape (much slower: MPI takes about 4 ms a message across these hosts).
# HC_CLUSTER_SHAPES="2x2 4x1" chooses the shapes of part 2 (default: also
# 3 x 2).
# HC_CLUSTER_NAME names the cluster (default hct<pid>, so that runs never
# meet another's cluster), HC_CLUSTER_NET its /24 (the tool's default).
#
# SKIP (77) where the cluster cannot be made (not root, no network
# namespaces, veth pairs or bridges).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${top_srcdir:=$here/../..}"
: "${HC_TEST_TIMEOUT:=600}"
tool=$top_srcdir/tools/hcomm-cluster
name=${HC_CLUSTER_NAME:-hct$$}
HCOMM_CLUSTER_NAME=$name
netarg=${HC_CLUSTER_NET:+--net $HC_CLUSTER_NET}
export HCOMM_CLUSTER_NAME
full=${HCOMM_CLUSTER_FULL:-}
shapes=${HC_CLUSTER_SHAPES:-2x2 3x2 4x1}
[ "$full" = 0 ] && full=
for p in test_coll test_topo test_soak test_algos test_split test_hostfail test_abandon test_mpidrop; do
    if [ ! -x "$top_builddir/test/mpi/$p" ]; then
        echo "cluster.sh: $top_builddir/test/mpi/$p: no such program (not built?)" >&2
        exit 99
    fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-cluster.XXXXXX") || exit 99
cleanup() {
    sh "$tool" down >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
failed=
fail() { echo "cluster.sh: FAILED: $1"; failed="$failed [$1]"; }
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCX_WARN_UNUSED_ENV_VARS=n
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM UCX_WARN_UNUSED_ENV_VARS
export HCCL_EXEC_TIMEOUT=60
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 10 $HC_TEST_TIMEOUT"
crun() { # NP PROGRAM [ARGS]: on the cluster, ranks by host (-map-by node)
    np=$1
    shift
    echo "+ hcomm-cluster run -np $np --map-by node -- $*"
    $tmo sh "$tool" run -np "$np" --map-by node -- "$@"
}

echo "=== 1. the tool"
sh "$tool" up 2 --slots 2 $netarg >"$tmp/up.log" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
    echo "SKIP: $(cat "$tmp/up.log")"
    exit 77
fi
cat "$tmp/up.log"
[ $rc -eq 0 ] || { fail "up 2 (rc=$rc)"; exit 1; }
sh "$tool" up 2 --slots 2 $netarg >/dev/null || fail "up 2 again"
nns=$(ip netns list | awk '{print $1}' | grep -c "^$name-")
echo "namespaces after up 2 twice: $nns (want 4: the bridge's, the launcher's, 2 hosts)"
[ "$nns" -eq 4 ] || fail "namespaces after a second up: $nns"
sh "$tool" status | tee "$tmp/status.log"
[ "$(grep -c '^host[01] .* up ' "$tmp/status.log")" -eq 2 ] || fail "status: 2 hosts up"
names=$(crun 4 hostname 2>&1 | grep '^host' | sort | tr '\n' ' ')
echo "host names of 4 ranks: $names"
[ "$names" = "host0 host0 host1 host1 " ] || fail "host names of the ranks"

B=$top_builddir/test/mpi
# on SHAPE (HOSTSxRANKS, --map-by node: ranks round robin over the hosts)
on_shape() {
    shape=$1
    hosts=${shape%x*}
    np=$((hosts * ${shape#*x}))
    sh "$tool" up "$hosts" --slots 2 $netarg >/dev/null || fail "up $hosts"
}
# run LABEL PROGRAM ARGS on the current shape; its log in $tmp, summary lines shown
check_run() {
    label=$1
    shift
    log=$tmp/$(echo "$label" | tr -c 'A-Za-z0-9\n' _).log
    crun "$np" "$@" >"$log" 2>&1
    rc=$?
    grep -E "checks|failures|^wire|xnode|: passed|FAIL|had arrived|written after" "$log" | head -20
    if [ $rc -ne 0 ]; then
        echo "--- the last lines of $label's log:"
        grep -v "^--\|^ *$" "$log" | tail -25
        fail "$label (rc=$rc)"
    fi
}

for shape in $shapes; do
    on_shape "$shape"
    echo "=== $shape: $hosts hosts, $np ranks"
    if [ -n "$full" ]; then
        # the whole matrix with MPI's references (slow: ~4 ms per MPI message)
        check_run "test_coll $shape" "$B/test_coll"
        check_run "test_soak $shape" "$B/test_soak" -n 800 -s $((20261203 + np))
        check_run "test_algos $shape" "$B/test_algos"
    else
        check_run "test_coll $shape" "$B/test_coll" -q -B -L
        check_run "test_soak $shape" "$B/test_soak" -n 150 -s $((20261203 + np))
        check_run "test_algos $shape" "$B/test_algos" -c allreduce
    fi
    check_run "test_split $shape" "$B/test_split"
    [ "$shape" = 4x1 ] ||
        check_run "wire $shape" "$B/test_topo" wire 1048576 4
done

# The MPI drop-in across hosts, 2 hosts x 1 rank (every communicator of 2
# or more ranks spans both): test_mpidrop passes, and the built-in sizes
# are the cross-host ones (src/api/mpidrop.c): MPI_Allreduce and
# MPI_Barrier, which one host leaves to MPI at small sizes, run on hcomm;
# MPI_Bcast of 4-256 KiB goes to MPI
echo "=== the MPI drop-in, 2 hosts x 1 rank"
on_shape 2x1
$tmo sh "$tool" run -np 2 --map-by node -x "LD_PRELOAD=$top_builddir/.libs/libhcomm_mpi.so" \
    -x HCOMM_MPI_STATS=1 -- "$B/test_mpidrop" >"$tmp/drop.log" 2>&1
rc=$?
grep -E "passed|hcomm-mpi: (allreduce|bcast|barrier) " "$tmp/drop.log" | sort -u
[ $rc -eq 0 ] && grep -q "test_mpidrop: 2 rank(s): passed" "$tmp/drop.log" ||
    { tail -20 "$tmp/drop.log"; fail "drop-in across hosts (rc=$rc)"; }
grep "^hcomm-mpi: allreduce " "$tmp/drop.log" | grep -q "built-in" &&
    fail "drop-in across hosts: an MPI_Allreduce went to MPI for its size"
grep -q "^hcomm-mpi: barrier  *hcomm [1-9]" "$tmp/drop.log" ||
    fail "drop-in across hosts: no MPI_Barrier ran on hcomm"
grep -q "^hcomm-mpi: bcast .*built-in MPI size [1-9]" "$tmp/drop.log" ||
    fail "drop-in across hosts: no MPI_Bcast of 4-256 KiB went to MPI"

# hcomm-perf across hosts: its barrier before each call is hcomm's (MPI's
# leaves the ranks milliseconds apart there: docs/CLUSTER.md)
echo "=== hcomm-perf -M, 2 hosts x 2 ranks"
on_shape 2x2
crun 4 "$top_builddir/tools/hcomm-perf" -C allreduce -b 8 -e 64K -f 64 -n 3 -w 1 -T 0.1 -M \
    -J "$tmp/perf.json" >"$tmp/perf.log" 2>&1 || { cat "$tmp/perf.log"; fail "hcomm-perf across hosts"; }
grep -q '"sync": "hcomm"' "$tmp/perf.json" || fail "hcomm-perf across hosts: JSON has no \"sync\": \"hcomm\""
grep -q '"nodes": 2,' "$tmp/perf.json" || fail "hcomm-perf across hosts: JSON has no \"nodes\": 2"
grep -q '^# Errors: 0 wrong elements' "$tmp/perf.log" || fail "hcomm-perf across hosts: wrong results"

# HCCL_TOPO_RING_ORDER: on 2 hosts x 2 ranks placed round robin (ranks 0, 2
# on host0, 1, 3 on host1) the topology's ring 0 2 1 3 crosses the links
# twice, rank order four times: a 1 MiB RING AllReduce sends 3 MiB or 6 MiB
# across the hosts; the ring collectives stay exact
echo "=== ring order: topology against rank order, 2 hosts x 2 ranks round robin"
on_shape 2x2
before=$failed
(
    HCCL_ALLREDUCE_ALGO=RING
    export HCCL_ALLREDUCE_ALGO
    check_run "RING topology order" "$B/test_topo" bytes 262144 3145728
    HCCL_TOPO_RING_ORDER=0
    HCCL_REDUCESCATTER_ALGO=RING
    HCCL_ALLGATHER_ALGO=RING
    export HCCL_TOPO_RING_ORDER HCCL_REDUCESCATTER_ALGO HCCL_ALLGATHER_ALGO
    check_run "RING rank order" "$B/test_topo" bytes 262144 6291456
    check_run "RING collectives in rank order" "$B/test_topo" run 100003
    [ "$failed" = "$before" ]
) || fail "ring order"

echo "=== HcclCommInitRootInfo across 3 hosts x 2 ranks (HCCL_SOCKET_IFNAME=eth0)"
on_shape 3x2
before=$failed
(
    HCCL_SOCKET_IFNAME=eth0
    export HCCL_SOCKET_IFNAME
    # three times: a member that finished early leaves (HcclCommDestroy
    # is local) while the others still run the Broadcast; its closed
    # connection must not read as a failure (its goodbye, src/transport/
    # transport_ucx.c, "leaving")
    for i in 1 2 3; do
        check_run "root info across hosts ($i)" "$B/test_topo" rootinfo 100003
    done
    [ "$failed" = "$before" ]
) || fail "root info across hosts"

# Faults (test_hostfail): a host cut off or killed under a loop of
# AllReduces. HCCL_EXEC_TIMEOUT=5. mpirun needs --mca
# orte_abort_on_non_zero_status 0 (a victim dies) and --enable-recovery
# (without it mpirun ends the whole job when a host's daemon is lost).
count() { find "$1" -name "$2" ! -name '*.tmp' 2>/dev/null | wc -l; }
wait_count() { # DIR PATTERN N SECONDS
    i=0
    while [ "$(count "$1" "$2")" -lt "$3" ]; do
        i=$((i + 1))
        [ $i -gt $(($4 * 10)) ] && return 1
        sleep 0.1
    done
    return 0
}
# SHAPE HOST link|kill [add]
# pids of test_hostfail processes still on the cluster's hosts
members_left() {
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$name-h[0-9]*\$"); do
        for p in $(ip netns pids "$ns" 2>/dev/null); do
            case $(cat "/proc/$p/comm" 2>/dev/null) in
            *test_hostfai*) echo "$p" ;;
            esac
        done
    done
}
fault_run() {
    on_shape "$1"
    vhost=$2 how=$3 add=${4:-}
    per=${1#*x}
    d=$tmp/fault-$how
    mkdir -p "$d"
    echo "=== fault: $how $vhost on $1 ($np ranks)${add:+, then a newcomer on $vhost}"
    addr=$(sh "$tool" status | awk -v h="$vhost" '$1 == h { print $2 }')
    echo "+ hcomm-cluster run -np $np --map-by node --mca orte_abort_on_non_zero_status 0" \
        "--enable-recovery -- test_hostfail $d $vhost $add"
    HCCL_EXEC_TIMEOUT=5 HCCL_SPAWN_HOST=$addr sh "$tool" run -np "$np" --map-by node \
        --mca orte_abort_on_non_zero_status 0 --enable-recovery -- \
        "$B/test_hostfail" "$d" "$vhost" $add >"$d/log" 2>&1 &
    fpid=$!
    if ! wait_count "$d" 'ready.*' "$np" 120; then
        fail "$how $vhost: the ranks did not start their loop"
    else
        date +%s.%N >"$d/fault.time"
        if [ "$how" = link ]; then
            sh "$tool" link "$vhost" down
        else
            sh "$tool" kill "$vhost"
        fi
        nsurv=$((np - per))
        if [ -n "$add" ]; then
            wait_count "$d" 'recovered.*' "$nsurv" 120 || fail "$how $vhost: no recovery"
            sh "$tool" link "$vhost" up
            : >"$d/linkup"
            nsurv=$((nsurv + 1))
        fi
        wait_count "$d" 'result.*' "$nsurv" 150 ||
            fail "$how $vhost: $(count "$d" 'result.*') of $nsurv results"
    fi
    # mpirun returns by itself after a link fault; after a killed host
    # (its orted gone) Open MPI 4.1 with --enable-recovery never completes
    # the job (the lost host's processes are never counted as terminated,
    # docs/CLUSTER.md, "Faults"): once no member is left on the hosts it
    # is ended here, 5 s later (after 60 s if members are still there)
    i=0 gone=0
    while kill -0 $fpid 2>/dev/null && [ $i -lt 300 ]; do
        sleep 0.2
        i=$((i + 1))
        if [ "$how" = kill ] && [ -z "$(members_left)" ]; then
            gone=$((gone + 1))
            [ $gone -ge 25 ] && break
        fi
    done
    if ! kill -0 $fpid 2>/dev/null; then
        echo "mpirun returned by itself $((i / 5)) s after the survivors finished"
    else
        echo "mpirun still running $((i / 5)) s after the survivors finished" \
            "($((gone / 5)) s after the last member exited): ending it"
        [ "$how" = link ] && fail "$how $vhost: mpirun did not return"
        kill $fpid 2>/dev/null
        sleep 2
        kill -9 $fpid 2>/dev/null
    fi
    wait $fpid 2>/dev/null
    echo "mpirun: status $?"
    grep -E "test_hostfail|FAIL" "$d/log" | grep -v "WARN" | head -30
    cat "$d"/result.* 2>/dev/null
    # every survivor: no failed check, HCCL_E_TIMEOUT (9) or HCCL_E_REMOTE (21)
    for f in "$d"/result.*; do
        [ -f "$f" ] || continue
        grep -q ' fails=0 ' "$f" || fail "$how $vhost: $(cat "$f")"
        case $f in
        *.100) grep -q "host=$vhost " "$f" || fail "the newcomer is not on $vhost: $(cat "$f")" ;;
        *) grep -q -E ' err=(9|21) ' "$f" || fail "$how $vhost: error: $(cat "$f")" ;;
        esac
    done
    sh "$tool" link "$vhost" up >/dev/null
}
fault_run 4x1 host3 link add
fault_run 3x2 host2 kill

# A call that fails while a large message is arriving: when it returns, its
# receive no longer writes into the buffer (test_abandon; src/transport/
# transport_ucx.c, drain_recv). At 100 Mbit/s a 32 MiB message ends within
# the 2 s the cancel waits for it; 64 MiB does not, so the connection is
# closed by force (the log says so)
echo "=== abandoned receives: 3 hosts x 1 rank at 100 Mbit/s"
sh "$tool" up 3 --slots 1 --rate 100mbit $netarg >/dev/null || fail "up 3 --rate 100mbit"
np=3
sh "$tool" status | grep -c '^host[0-2] .* 100Mbit ' | grep -qx 3 || fail "3 hosts at 100 Mbit/s"
check_run "abandoned receive 32 MiB" "$B/test_abandon" 33554432
check_run "abandoned receive 64 MiB" "$B/test_abandon" 67108864
grep -q 'closing the connection so that it cannot write' "$tmp/abandoned_receive_64_MiB.log" ||
    fail "abandoned receive 64 MiB: the connection was not closed by force"

echo "=== link down / up, kill, down"
sh "$tool" link host1 down && sh "$tool" status | grep -q '^host1 .* down ' ||
    fail "link host1 down"
sh "$tool" link 1 up && sh "$tool" status | grep -q '^host1 .* up ' || fail "link 1 up"
ip netns exec "$name-h2" sleep 600 &
sleep 1
sh "$tool" kill host2 || fail "kill host2"
wait
[ -z "$(ip netns pids "$name-h2")" ] || fail "processes left on host2"
# down finds the namespaces by name, also when its state is lost (a crash)
rm -rf "${HCOMM_CLUSTER_STATE:-/run/hcomm-cluster}/$name"
sh "$tool" down || fail "down"
left=$(ip netns list | awk '{print $1}' | grep -c "^$name-")
echo "namespaces after down: $left"
[ "$left" -eq 0 ] || fail "namespaces left after down: $left"

if [ -n "$failed" ]; then
    echo "cluster.sh: FAILED:$failed"
    exit 1
fi
echo "cluster.sh: all passed"
exit 0
