#!/bin/sh
# test/mpi/cluster.sh - hcomm across hosts on an emulated cluster
# (tools/hcomm-cluster, docs/CLUSTER.md): hosts are network namespaces with
# host names of their own on one bridge; the bytes between hosts must cross
# their links, never shared memory or CMA.
#
#  1. the tool: up is idempotent, status lists the hosts, a program runs on
#     each host under its host name;
#  2. 2 hosts x 2 ranks: test_coll (quick, no big sizes); the bytes on the
#     links against the bytes the AllReduce sends across hosts (test_topo
#     wire: at least those, at most 1.5 times plus 64 KB);
#  3. 3 hosts x 1 rank: the same;
#  4. HcclCommInitRootInfo across the 3 hosts (HCCL_SOCKET_IFNAME=eth0;
#     test_topo rootinfo: AllReduce, ReduceScatter, AllGather, Broadcast);
#  5. link down / up, kill, down (its state deleted first, as after a
#     crash): the namespaces are gone.
#
# SKIP (77) where the cluster cannot be made (not root, no network
# namespaces, veth pairs or bridges).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${top_srcdir:=$here/../..}"
: "${HC_TEST_TIMEOUT:=600}"
tool=$top_srcdir/tools/hcomm-cluster
name=hct$$
export HCOMM_CLUSTER_NAME=$name
for p in test_coll test_topo; do
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
sh "$tool" up 2 --slots 2 >"$tmp/up.log" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
    echo "SKIP: $(cat "$tmp/up.log")"
    exit 77
fi
cat "$tmp/up.log"
[ $rc -eq 0 ] || { fail "up 2 (rc=$rc)"; exit 1; }
sh "$tool" up 2 --slots 2 >/dev/null || fail "up 2 again"
nns=$(ip netns list | awk '{print $1}' | grep -c "^$name-")
echo "namespaces after up 2 twice: $nns (want 4: the bridge's, the launcher's, 2 hosts)"
[ "$nns" -eq 4 ] || fail "namespaces after a second up: $nns"
sh "$tool" status | tee "$tmp/status.log"
[ "$(grep -c '^host[01] .* up ' "$tmp/status.log")" -eq 2 ] || fail "status: 2 hosts up"
names=$(crun 4 hostname 2>&1 | grep '^host' | sort | tr '\n' ' ')
echo "host names of 4 ranks: $names"
[ "$names" = "host0 host0 host1 host1 " ] || fail "host names of the ranks"

for shape in 2x2 3x1; do
    hosts=${shape%x*}
    np=$((hosts * ${shape#*x}))
    echo "=== $shape: test_coll and the bytes on the links, $hosts hosts, $np ranks"
    sh "$tool" up "$hosts" --slots 2 >/dev/null || fail "up $hosts"
    crun "$np" "$top_builddir/test/mpi/test_coll" -q -B >"$tmp/coll$shape.log" 2>&1
    rc=$?
    grep -E "checks|FAIL" "$tmp/coll$shape.log" | head -20
    [ $rc -eq 0 ] || fail "test_coll $shape (rc=$rc)"
    crun "$np" "$top_builddir/test/mpi/test_topo" wire 1048576 4 >"$tmp/wire$shape.log" 2>&1
    rc=$?
    grep -E "wire|FAIL" "$tmp/wire$shape.log"
    [ $rc -eq 0 ] || fail "bytes on the links $shape (rc=$rc)"
done

echo "=== 4. HcclCommInitRootInfo across 3 hosts (HCCL_SOCKET_IFNAME=eth0)"
(
    HCCL_SOCKET_IFNAME=eth0
    export HCCL_SOCKET_IFNAME
    crun 3 "$top_builddir/test/mpi/test_topo" rootinfo 100003
) >"$tmp/ri.log" 2>&1
rc=$?
grep -E "test_topo|FAIL" "$tmp/ri.log"
[ $rc -eq 0 ] || fail "root info across hosts (rc=$rc)"

echo "=== 5. link down / up, kill, down"
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
