#!/bin/sh
# tools/bench-cluster.sh - the network results of docs/CLUSTER.md, measured
# on the emulated cluster (tools/hcomm-cluster): each comparison runs its
# variants alternating, launch after launch, and reports per variant the
# median over the launches and the median of the per-launch ratios.
#
#   sh tools/bench-cluster.sh [--build DIR] [--runs N] [--out DIR] [KIND...]
#
# KIND (default: all four):
#   bcast    Broadcast of --bcast-size (32M) bytes, one rank per host, 4 and
#            8 hosts, links limited to --bcast-rate (200mbit): PIPELINE,
#            BINOMIAL and the built-in choice (which one it took, from
#            HCCL_DEBUG=INFO); ratio BINOMIAL / PIPELINE
#   fusion   examples/fusion on BERT-Large's gradient list / 256, one rank per
#            host, 2 and 4 hosts, links without a limit: HcclAllReduceMulti
#            against per-tensor HcclAllReduce and per-tensor MPI_Allreduce
#   overlap  examples/overlap -s 5 (-v blocking,stream), 2 and 4 hosts, links
#            limited to --net-rate (200mbit): the step time of stream overlap
#            against blocking per-layer AllReduce
#   topo     4 hosts x 2 ranks placed round-robin (--map-by node), links
#            limited to --net-rate, AllReduce of 16 MiB: RING in topology
#            order, RING in rank order (HCCL_TOPO_RING_ORDER=0) and HIER
#
# Options:
#   --build DIR   the build tree with tools/hcomm-perf and examples/ (_build)
#   --runs N      launches per variant (default 5)
#   --out DIR     output directory (default bench-cluster-YYYYmmdd-HHMMSS):
#                 every launch's output, commands.txt, report.md
#   --bcast-size S, --bcast-rate R   see bcast
#   --net-rate R  the links' rate for overlap and topo (tc units)
#   -h, --help    this text
# Needs root (network namespaces); makes and removes the cluster named by
# HCOMM_CLUSTER_NAME (default hcc). Exit status 0 when every launch ran and
# printed its result.
set -u

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

here=$(cd "$(dirname "$0")" && pwd)
build=$here/../_build
runs=5
out=
bsize=32M
brate=200mbit
nrate=200mbit
kinds=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift ;;
    --runs) runs=$2; shift ;;
    --out) out=$2; shift ;;
    --bcast-size) bsize=$2; shift ;;
    --bcast-rate) brate=$2; shift ;;
    --net-rate) nrate=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    bcast|fusion|overlap|topo) kinds="$kinds $1" ;;
    *) echo "bench-cluster.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$kinds" ] || kinds="bcast fusion overlap topo"
case $runs in ''|*[!0-9]*|0) echo "bench-cluster.sh: --runs needs a count >= 1" >&2; exit 2 ;; esac
build=$(cd "$build" 2>/dev/null && pwd) || { echo "bench-cluster.sh: no build tree $build" >&2; exit 2; }
perf=$build/tools/hcomm-perf
for p in "$perf" "$build/examples/fusion" "$build/examples/overlap"; do
    [ -x "$p" ] || { echo "bench-cluster.sh: $p is not built" >&2; exit 2; }
done
clus=$here/hcomm-cluster
[ -n "$out" ] || out=bench-cluster-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
: >"$out/commands.txt"
: >"$out/results.txt" # kind hosts variant run value
fail=0

up() { # hosts slots [rate]
    if [ -n "${3:-}" ]; then
        "$clus" up "$1" --slots "$2" --rate "$3" >>"$out/cluster.log" 2>&1
    else
        "$clus" up "$1" --slots "$2" >>"$out/cluster.log" 2>&1
    fi || { echo "bench-cluster.sh: cannot make a cluster of $1 hosts (see $out/cluster.log)" >&2; exit 2; }
}

# launch NAME ENV... -- RUN-ARGS -- PROGRAM ARGS: one launch, output in NAME.txt
launch() {
    name=$1
    shift
    envs=
    while [ "$1" != -- ]; do envs="$envs $1"; shift; done
    shift
    echo "env$envs $clus run $*" >>"$out/commands.txt"
    echo "bench-cluster.sh: $name" >&2
    # shellcheck disable=SC2086 # the assignments are words
    timeout -k 10 900 env $envs "$clus" run "$@" >"$out/$name.txt" 2>&1
}

# the time (us) of the one size hcomm-perf ran
perf_time() { awk '/^ +[0-9]/ { t = $6 } END { if (t == "") exit 1; print t }' "$1"; }

record() { # kind hosts variant run value
    if [ -z "$5" ]; then
        echo "bench-cluster.sh: no result for $1 $2 $3 run $4" >&2
        fail=1
        return
    fi
    echo "$1 $2 $3 $4 $5" >>"$out/results.txt"
}

run_bcast() {
    for h in 4 8; do
        up "$h" 1 "$brate"
        r=0
        while [ $r -lt "$runs" ]; do
            r=$((r + 1))
            for a in PIPELINE BINOMIAL auto; do
                n=bcast-h$h-$a-r$r
                if [ $a = auto ]; then
                    launch "$n" HCCL_DEBUG=INFO HCCL_DEBUG_SUBSYS=TUNE -- -np "$h" -- "$perf" \
                        -C broadcast -b "$bsize" -e "$bsize" -n 3 -w 1
                    choice=$(sed -n 's/.* broadcast [0-9]* B on [0-9]* ranks -> \([A-Z_0-9]*\).*/\1/p' \
                        "$out/$n.txt" | head -n 1)
                    record bcast "$h" choice "$r" "${choice:-?}"
                else
                    launch "$n" -- -np "$h" -- "$perf" -C broadcast -a $a -b "$bsize" -e "$bsize" \
                        -n 3 -w 1
                fi
                record bcast "$h" $a "$r" "$(perf_time "$out/$n.txt")"
            done
        done
    done
}

run_fusion() {
    for h in 2 4; do
        up "$h" 1
        r=0
        while [ $r -lt "$runs" ]; do
            r=$((r + 1))
            n=fusion-h$h-r$r
            launch "$n" -- -np "$h" -- "$build/examples/fusion" -s 256 -n 5 -m bert
            # "ms  loop / multi / mpi" and "bit-exact"
            line=$(grep '^bert' "$out/$n.txt")
            case $line in *bit-exact*) ;; *) echo "bench-cluster.sh: $n: results differ" >&2; fail=1 ;; esac
            set -- $(echo "$line" | sed -n 's/.*| ms *\([0-9.]*\) *\/ *\([0-9.]*\) *\/ *\([0-9.]*\).*/\1 \2 \3/p')
            record fusion "$h" hccl-loop "$r" "${1:-}"
            record fusion "$h" multi "$r" "${2:-}"
            record fusion "$h" mpi-loop "$r" "${3:-}"
        done
    done
}

run_overlap() {
    for h in 2 4; do
        up "$h" 1 "$nrate"
        r=0
        while [ $r -lt "$runs" ]; do
            r=$((r + 1))
            n=overlap-h$h-r$r
            launch "$n" -- -np "$h" -- "$build/examples/overlap" -s 5 -v blocking,stream
            grep -q 'results: identical' "$out/$n.txt" || { echo "bench-cluster.sh: $n: results differ" >&2; fail=1; }
            for v in blocking stream; do
                record overlap "$h" $v "$r" "$(awk -v v=$v '$1 == v && $2 ~ /^[0-9.]+$/ { print $2 }' "$out/$n.txt")"
            done
        done
    done
}

run_topo() {
    up 4 2 "$nrate"
    r=0
    while [ $r -lt "$runs" ]; do
        r=$((r + 1))
        for v in ring-topo ring-rank hier; do
            n=topo-$v-r$r
            case $v in
            ring-topo) launch "$n" -- -np 8 --map-by node -- "$perf" -a RING -b 16M -e 16M -n 3 -w 1 ;;
            ring-rank) launch "$n" HCCL_TOPO_RING_ORDER=0 -- -np 8 --map-by node -- "$perf" -a RING \
                -b 16M -e 16M -n 3 -w 1 ;;
            hier) launch "$n" -- -np 8 --map-by node -- "$perf" -a HIER -b 16M -e 16M -n 3 -w 1 ;;
            esac
            record topo 4x2 $v "$r" "$(perf_time "$out/$n.txt")"
        done
    done
}

for k in $kinds; do
    "run_$k"
done
"$clus" down >>"$out/cluster.log" 2>&1

# report: per kind, hosts and variant the median over the runs; ratios as
# the median of the per-run ratios
awk -v runs="$runs" '
function med(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function ratio(k, h, num, den,   r, n, a) {
    n = 0
    for (r = 1; r <= runs; r++)
        if (((k, h, num, r) in v) && ((k, h, den, r) in v) && v[k, h, den, r] > 0)
            a[++n] = v[k, h, num, r] / v[k, h, den, r]
    return n ? sprintf("%.2f (%d runs)", med(a, n), n) : "-"
}
function mv(k, h, x,   r, n, a) {
    n = 0
    for (r = 1; r <= runs; r++) if ((k, h, x, r) in v) a[++n] = v[k, h, x, r]
    return n ? med(a, n) : ""
}
{ v[$1, $2, $3, $4] = $5; if ($3 == "choice") ch[$1, $2] = ch[$1, $2] (ch[$1, $2] ~ $5 ? "" : " " $5); hosts[$1, $2] = 1 }
END {
    for (h = 2; h <= 8; h++) if (("bcast", h) in hosts)
        printf "| bcast | %d | PIPELINE %.0f ms | BINOMIAL %.0f ms | built-in (%s) %.0f ms | BINOMIAL/PIPELINE %s |\n", h,
            mv("bcast", h, "PIPELINE") / 1000, mv("bcast", h, "BINOMIAL") / 1000, substr(ch["bcast", h], 2),
            mv("bcast", h, "auto") / 1000, ratio("bcast", h, "BINOMIAL", "PIPELINE")
    for (h = 2; h <= 8; h++) if (("fusion", h) in hosts)
        printf "| fusion | %d | Multi %.2f ms | HcclAllReduce loop %.2f ms | MPI_Allreduce loop %.2f ms | loop/Multi %s, MPI/Multi %s |\n", h,
            mv("fusion", h, "multi"), mv("fusion", h, "hccl-loop"), mv("fusion", h, "mpi-loop"),
            ratio("fusion", h, "hccl-loop", "multi"), ratio("fusion", h, "mpi-loop", "multi")
    for (h = 2; h <= 8; h++) if (("overlap", h) in hosts)
        printf "| overlap | %d | stream %.1f ms | blocking %.1f ms | | stream/blocking %s |\n", h,
            mv("overlap", h, "stream"), mv("overlap", h, "blocking"), ratio("overlap", h, "stream", "blocking")
    if (("topo", "4x2") in hosts)
        printf "| topo | 4x2 | RING topology order %.0f ms | RING rank order %.0f ms | HIER %.0f ms | rank/topology %s, rank/HIER %s |\n",
            mv("topo", "4x2", "ring-topo") / 1000, mv("topo", "4x2", "ring-rank") / 1000, mv("topo", "4x2", "hier") / 1000,
            ratio("topo", "4x2", "ring-rank", "ring-topo"), ratio("topo", "4x2", "ring-rank", "hier")
}' "$out/results.txt" >"$out/table.md"
{
    echo "# hcomm on the emulated cluster"
    echo
    echo "- $(uname -srm), $(getconf _NPROCESSORS_ONLN) cores, load before the report: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- runs per variant: $runs; medians over the runs, ratios the median of per-run ratios"
    echo "- command: sh tools/bench-cluster.sh --runs $runs --bcast-size $bsize --bcast-rate $brate --net-rate $nrate$kinds"
    echo
    echo "| kind | hosts | | | | ratio |"
    echo "|---|---|---|---|---|---|"
    cat "$out/table.md"
    echo
    echo "Every launch: commands.txt; its output: KIND-...-rN.txt."
} >"$out/report.md"
cat "$out/report.md"
exit $fail
