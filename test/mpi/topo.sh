#!/bin/sh
# test/mpi/topo.sh - the topology features under mpirun (docs/TOPOLOGY.md):
#
#  1. every HIER algorithm (forced) under simulated topologies, through the
#     full test_coll matrix (quick, no big sizes): 8 ranks as 2 hosts x 2
#     NUMA x 2 (HCCL_TOPO_FILE; traffic between the declared hosts over UCX
#     TCP); and test_topo's collectives on 6 ranks on two hosts of unequal
#     size (2 and 4);
#  2. test_topo run: the HIER collectives on the world and on a split, with
#     groups from HCCL_GROUP_<n> only, at 4 ranks;
#  3. bytes across the declared host boundary, exactly: HIER 2 N, the
#     topology-ordered RING 3.5 N (8 ranks, 2 hosts: a blind ring would
#     send 14 N, see check_topo); with HCCL_TOPO_RING_ORDER=0 the ring
#     follows rank order (4 ranks alternating between 2 hosts: 6 N, not
#     3 N) and the ring collectives stay exact;
#  4. overrides change what is chosen: the INFO log shows the groups and the
#     ring order, and HIER is selected only with the groups declared;
#  5. a bad override fails HcclCommInitMpi with HCCL_E_PARA on every rank
#     (naming the file line), none hangs; ranks that disagree fail alike; a
#     FIFO as the topology file is refused, not read; a file whose ranks are
#     all beyond the job is an error; ranks that disagree on
#     HCCL_TOPO_RING_ORDER fail alike;
#  6. HcclCommInitClusterInfo from a rank table (2 servers on this machine);
#  7. HCCL_TOPO_DUMP_FILE writes a file that reads back into the same ring.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
tmp=$(mktemp -d /tmp/hcomm-topo-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=
run() { sh "$here/mpirun.sh" "$@"; }
fail() { echo "topo.sh: FAILED: $1"; failed="$failed [$1]"; }
export HCCL_EXEC_TIMEOUT=60 HC_TEST_TIMEOUT=240

cat > "$tmp/sim222.topo" <<'EOF'
# 8 ranks as 2 hosts x 2 NUMA x 2, interleaved as mpirun --map-by node places them
hcomm-topology 1
cluster sim
rack r0 switch=tor0
node hostA rack=r0 numa=2
node hostB rack=r0 numa=2
rank 0,2 node=hostA numa=0
rank 4,6 node=hostA numa=1
rank 1,3 node=hostB numa=0
rank 5,7 node=hostB numa=1
EOF
cat > "$tmp/unequal.topo" <<'EOF'
hcomm-topology 1
rank 0,5 node=small
rank 1-4 node=big
EOF

HIER="HCCL_ALLREDUCE_ALGO=HIER HCCL_REDUCESCATTER_ALGO=HIER HCCL_ALLGATHER_ALGO=HIER HCCL_BCAST_ALGO=HIER"

echo "=== 1. test_coll, every HIER algorithm, 8 ranks as 2 hosts x 2 NUMA x 2"
env $HIER HCCL_TOPO_FILE="$tmp/sim222.topo" sh "$here/mpirun.sh" 8 test_coll -q -B \
    >"$tmp/coll8.log" 2>&1
rc=$?
[ $rc -eq 99 ] && exit 99
grep -E "checks|FAIL" "$tmp/coll8.log" | head -20
[ $rc -eq 0 ] || fail "test_coll HIER on 2x2x2 (rc=$rc)"

echo "=== 1b. every HIER collective, world and split, 6 ranks on hosts of 2 and 4"
env $HIER HCCL_TOPO_FILE="$tmp/unequal.topo" sh "$here/mpirun.sh" 6 test_topo run 100003 \
    >"$tmp/coll6.log" 2>&1 || fail "HIER on unequal hosts"
grep -E "test_topo|FAIL" "$tmp/coll6.log" | head -20

echo "=== 2. HIER on groups from HCCL_GROUP_<n> only, world and split, 4 ranks"
env $HIER HCCL_GROUP_0=0,2 HCCL_GROUP_1=1,3 sh "$here/mpirun.sh" 4 test_topo run 70001 \
    >"$tmp/groups.log" 2>&1 || fail "test_topo run with HCCL_GROUP_n"
grep -E "test_topo|FAIL" "$tmp/groups.log"

echo "=== 3. bytes across the declared host boundary (1 MB AllReduce, 8 ranks, 2 hosts)"
HCCL_ALLREDUCE_ALGO=HIER HCCL_TOPO_FILE="$tmp/sim222.topo" \
    run 8 test_topo bytes 262144 2097152 >"$tmp/b1.log" 2>&1 || fail "HIER bytes"
grep -E "xnode|FAIL" "$tmp/b1.log"
HCCL_ALLREDUCE_ALGO=RING HCCL_TOPO_FILE="$tmp/sim222.topo" \
    run 8 test_topo bytes 262144 3670016 >"$tmp/b2.log" 2>&1 || fail "RING bytes"
grep -E "xnode|FAIL" "$tmp/b2.log"
# HCCL_TOPO_RING_ORDER=0: the ring in rank order, 4 ranks alternating
# between two declared hosts: every link of the ring crosses (6 N) where
# the topology's ring 0 2 1 3 crosses twice (3 N); the results stay exact
HCCL_ALLREDUCE_ALGO=RING HCCL_TOPO_FILE="$here/two-hosts.topo" \
    run 4 test_topo bytes 262144 3145728 >"$tmp/b4.log" 2>&1 || fail "RING bytes, topology order"
grep -E "xnode|FAIL" "$tmp/b4.log"
HCCL_TOPO_RING_ORDER=0 HCCL_ALLREDUCE_ALGO=RING HCCL_TOPO_FILE="$here/two-hosts.topo" \
    run 4 test_topo bytes 262144 6291456 >"$tmp/b5.log" 2>&1 || fail "RING bytes, rank order"
grep -E "xnode|FAIL" "$tmp/b5.log"
HCCL_TOPO_RING_ORDER=0 HCCL_ALLREDUCE_ALGO=RING HCCL_REDUCESCATTER_ALGO=RING \
    HCCL_ALLGATHER_ALGO=RING HCCL_TOPO_FILE="$here/two-hosts.topo" \
    run 4 test_topo run 70001 >"$tmp/b6.log" 2>&1 || fail "RING collectives, rank order"
grep -E "test_topo|FAIL" "$tmp/b6.log"
# the traffic between the declared hosts took the TCP-only worker
HCCL_ALLREDUCE_ALGO=HIER HCCL_TOPO_FILE="$tmp/sim222.topo" HCCL_DEBUG=TRACE \
    HCCL_DEBUG_SUBSYS=TRANSPORT,INIT run 8 test_topo bytes 65536 524288 >"$tmp/b3.log" 2>&1 ||
    fail "HIER bytes with TRACE"
# per process (lines "host:pid:rank ..."), the endpoints the AllReduce made:
# those created before its communicator was destroyed
ntcp=$(awk '{ split($1, f, ":"); p = f[2] }
    /destroyed after/ { done[p] = 1 }
    /created on the TCP-only worker/ && !done[p] { n++ }
    END { print n + 0 }' "$tmp/b3.log")
echo "endpoints on the TCP-only worker: $ntcp (want 8: one per rank to its slice peer)"
[ "$ntcp" -eq 8 ] || fail "TCP-only endpoints: $ntcp"

echo "=== 4. overrides change the choice (INFO: groups, ring order, algorithm)"
HCCL_DEBUG=INFO HCCL_DEBUG_SUBSYS=TOPO,COLL run 4 test_topo run 262144 >"$tmp/s1.log" 2>&1 ||
    fail "run without groups"
HCCL_GROUP_0=0,2 HCCL_GROUP_1=1,3 HCCL_DEBUG=INFO HCCL_DEBUG_SUBSYS=TOPO,COLL \
    run 4 test_topo run 262144 >"$tmp/s2.log" 2>&1 || fail "run with groups"
grep -h "ring order" "$tmp/s1.log" "$tmp/s2.log"
grep -h "group g[01]:" "$tmp/s2.log"
grep -q "ring order: 0 1 2 3$" "$tmp/s1.log" || fail "flat ring order"
grep -q "ring order: 0 2 | 1 3$" "$tmp/s2.log" || fail "grouped ring order"
grep -q "group g0: .*(HCCL_GROUP_0): ranks 0,2" "$tmp/s2.log" || fail "group g0 logged"
a1=$(grep -c "HcclAllReduce comm .*algorithm HIER" "$tmp/s1.log")
a2=$(grep -c "HcclAllReduce comm .*algorithm HIER" "$tmp/s2.log")
echo "AllReduce operations that ran HIER: $a1 without groups, $a2 with"
[ "$a1" -eq 0 ] || fail "HIER chosen on a flat topology"
[ "$a2" -gt 0 ] || fail "HIER not chosen with HCCL_GROUP_n"

echo "=== 5. bad overrides fail on every rank with HCCL_E_PARA (1)"
printf 'hcomm-topology 1\nrank 0-1 node=a\nrank 2-3 node=b numa=x\n' >"$tmp/bad.topo"
HCCL_TOPO_FILE="$tmp/bad.topo" run 4 test_topo fail 1 >"$tmp/f1.log" 2>&1 || fail "bad file"
n=$(grep -c "bad.topo: line 3: rank: numa='x' is not a number" "$tmp/f1.log")
echo "ranks that named the bad line: $n of 4"
[ "$n" -eq 4 ] || fail "bad file message on every rank"
HCCL_GROUP_0=0,9 run 4 test_topo fail 1 >"$tmp/f2.log" 2>&1 || fail "HCCL_GROUP_0=0,9"
HCCL_NVLINK_MAP=0-1 run 4 test_topo fail 1 >"$tmp/f3.log" 2>&1 || fail "HCCL_NVLINK_MAP=0-1"
HCCL_TOPO_FILE=/nonexistent/x.topo run 4 test_topo fail 1 >"$tmp/f4.log" 2>&1 ||
    fail "missing file"
run 4 test_topo mismatch >"$tmp/f5.log" 2>&1 || fail "ranks that disagree"
run 4 test_topo mismatch HCCL_TOPO_RING_ORDER 0 >"$tmp/f5b.log" 2>&1 ||
    fail "ranks that disagree on HCCL_TOPO_RING_ORDER"
grep -q "HCCL_TOPO_RING_ORDER=0" "$tmp/f5b.log" || fail "HCCL_TOPO_RING_ORDER named in the log"
# a FIFO is refused, not read (reading it would block init)
mkfifo "$tmp/fifo.topo"
HCCL_TOPO_FILE="$tmp/fifo.topo" run 4 test_topo fail 1 >"$tmp/f6.log" 2>&1 || fail "FIFO"
n=$(grep -c "fifo.topo: not a regular file" "$tmp/f6.log")
echo "ranks that refused the FIFO: $n of 4"
[ "$n" -eq 4 ] || fail "FIFO message on every rank"
# a file whose ranks are all beyond the job is not ignored
printf 'hcomm-topology 1\nrank 100-103 node=a\n' >"$tmp/far.topo"
HCCL_TOPO_FILE="$tmp/far.topo" run 4 test_topo fail 1 >"$tmp/f7.log" 2>&1 || fail "far ranks"
n=$(grep -c "far.topo line 2: rank 100, but the job has 4 ranks" "$tmp/f7.log")
echo "ranks that named the rank beyond the job: $n of 4"
[ "$n" -eq 4 ] || fail "far ranks message on every rank"
grep -h "test_topo" "$tmp"/f[1-7].log

echo "=== 6. HcclCommInitClusterInfo from a rank table (2 servers on this machine)"
port=$((20000 + $$ % 20000))
cat > "$tmp/ranktable.json" <<EOF
{
  "version": "1.0", "status": "completed", "server_count": "2", "hcomm_port": "$port",
  "server_list": [
    {"server_id": "127.0.0.1", "rack_id": "rackA",
     "device": [{"device_id": "0", "device_ip": "192.168.0.1", "rank_id": "0"},
                {"device_id": "1", "device_ip": "192.168.0.2", "rank_id": "1"}]},
    {"server_id": "127.0.0.2", "rack_id": "rackB",
     "device": [{"device_id": "0", "device_ip": "192.168.1.1", "rank_id": "2"},
                {"device_id": "1", "device_ip": "192.168.1.2", "rank_id": "3"}]}
  ]
}
EOF
HCCL_DEBUG=INFO HCCL_DEBUG_SUBSYS=TOPO run 4 test_topo cluster "$tmp/ranktable.json" \
    >"$tmp/c1.log" 2>&1 || fail "rank table"
grep -h "test_topo\|ring order" "$tmp/c1.log"
grep -q "ring order: 0 1 ||| 2 3$" "$tmp/c1.log" || fail "rank table topology (2 racks)"

echo "=== 7. HCCL_TOPO_DUMP_FILE reads back into the same model"
HCCL_TOPO_FILE="$tmp/sim222.topo" HCCL_TOPO_DUMP_FILE="$tmp/dump.topo" HCCL_DEBUG=INFO \
    HCCL_DEBUG_SUBSYS=TOPO run 8 test_topo run 64 >"$tmp/d1.log" 2>&1 || fail "dump run"
HCCL_TOPO_FILE="$tmp/dump.topo" HCCL_DEBUG=INFO HCCL_DEBUG_SUBSYS=TOPO \
    run 8 test_topo run 64 >"$tmp/d2.log" 2>&1 || fail "reading the dump"
# the world's ring and the split halves' rings, from the file and from the dump
r1=$(grep -ho "ring order: .*" "$tmp/d1.log" | sort)
r2=$(grep -ho "ring order: .*" "$tmp/d2.log" | sort)
echo "from the file: $(echo "$r1" | tr '\n' ';')"
echo "from the dump: $(echo "$r2" | tr '\n' ';')"
[ -n "$r1" ] && [ "$r1" = "$r2" ] || fail "dump ring order"

echo "=== hcomm-topo: the tool on the detected topology and on a declared one"
run 2 "$top_builddir/tools/hcomm-topo" >"$tmp/t1.log" 2>&1 || fail "hcomm-topo on 2 ranks"
grep -q "^algorithm selection" "$tmp/t1.log" || fail "hcomm-topo printed its selection"
HCCL_TOPO_FILE="$tmp/sim222.topo" run 8 "$top_builddir/tools/hcomm-topo" -b 64K -n 3 \
    >"$tmp/t2.log" 2>&1 || fail "hcomm-topo -b on the declared 2 hosts"
grep -q "bytes across nodes" "$tmp/t2.log" || fail "hcomm-topo -b printed its timings"
tail -n 3 "$tmp/t2.log"

if [ -n "$failed" ]; then
    echo "topo.sh: FAILED:$failed (logs were in $tmp)"
    exit 1
fi
echo "topo.sh: all passed"
exit 0
