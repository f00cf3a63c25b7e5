#!/bin/sh
# tools/bench.sh - the standard hcomm sweep (docs/PERFORMANCE.md, "Method").
#
#   sh tools/bench.sh --perf BUILD/tools/hcomm-perf [--quick] [--out DIR]
#   make bench          (from the build tree: 5 runs, --compact, into
#                       docs/bench/CPU/; also bench-registered, bench-thp)
#
# Runs hcomm-perf -M (hcomm and MPI alternating in the same processes) for
# allreduce, broadcast, allgather, reducescatter and alltoall, 8 B to 64 MiB
# (x2 steps), at 2 and 4 ranks, and AllReduce 32-256 MiB at 2 ranks with
# a single-core memcpy timed in the same run ("allreduce-large", hcomm-perf
# -R: the issue's large-message row), under two Open MPI settings:
#   default  Open MPI as configured on this machine (Debian: ob1 + vader/CMA)
#   tuned    --mca btl_vader_single_copy_mechanism none
#            -x GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296
# (also known: "ucx" = --mca pml ucx ..., "ob1" = --mca pml ob1 --mca btl
# self,vader; pick with --settings). The tuned glibc tunables apply to the
# whole process, hcomm included, which is why each setting is its own run
# and each ratio compares hcomm and MPI within one run.
#
# Writes into the output directory: one NAME.json / NAME.txt / NAME.err per
# run (NAME = npN-SETTING-COLL), commands.txt, one bench-npN-COLL.dat per
# table, report.md (the tables checked against the performance issue's
# targets, the exact commands, the environment) and
# busbw-npN.png (busbw vs size, hcomm vs MPI; needs gnuplot, e.g. Debian's
# gnuplot-nox; skipped with a note when missing). Needs only sh and awk.
# With more ranks than cores, every round also runs hcomm-floor (found next
# to hcomm-perf, or in PATH) at that rank count: the bare synchronization of
# a collective there, flags only (npN-floor.txt; report.md quotes it).
#
# Options:
#   --perf PATH       the hcomm-perf program (default: hcomm-perf in PATH)
#   --out DIR         output directory (default: bench-YYYYmmdd-HHMMSS)
#   --quick           smoke run: 8 B, 256 B, 8 KiB, 256 KiB, 8 MiB, fewer iterations
#   --sizes "..."     hcomm-perf's size and iteration arguments instead of
#                     the full sweep's "-b 8 -e 64M -f 2 -n 200" (e.g.
#                     "-b 8 -e 64M -f 8 -n 20": a shorter sweep, as across
#                     hosts, where Open MPI takes milliseconds a message)
#   --np "2 4"        rank counts (more ranks than cores: --oversubscribe)
#   --colls "..."     collectives (default: the five above)
#   --settings "..."  Open MPI settings: default tuned ucx ob1
#   --mpirun CMD      the launcher (default: $MPIRUN or mpirun)
#   --args "..."      extra hcomm-perf arguments (e.g. "-d bfloat16"; "-A":
#                     registered buffers, docs/DESIGN.md; "-H": the buffers
#                     in transparent huge pages, docs/PERFORMANCE.md)
#   --timeout SEC     kill a run after SEC seconds (default 1800; 0 = none)
#   --no-large        leave out the AllReduce 32-256 MiB runs (the full
#                     sweep has them, --quick does not)
#   --runs N          run every setting N times, interleaved (all runs of
#                     round 1, then round 2, ...), and report per size the
#                     median over the runs: hcomm and MPI times, and the
#                     ratio (the median of the per-run ratios, each taken
#                     within one run), with the smallest and largest ratio
#                     seen (default 1; the performance issue asks for >= 5)
#   --compact         when done, delete what the report was made from but
#                     does not cite (each run's JSON, stdout and stderr):
#                     what docs/bench/ keeps (make bench)
#   --cluster RATE    run across hosts of the emulated cluster (tools/hcomm-
#                     cluster, docs/CLUSTER.md): for each --np N, `hcomm-
#                     cluster up N --slots 1 --rate RATE` (RATE `none`: links
#                     without a limit), one rank per host, MPI over the same
#                     links; the cluster is taken down at the end. No
#                     allreduce-large runs (a single-core memcpy means
#                     nothing across hosts). Needs root.
#   --table DIR       run nothing: print the compact table of DIR/report.md
#                     (per collective and rank count, the smallest size,
#                     64 KiB and 16 MiB: hcomm's and default Open MPI's time,
#                     the ratios against default and tuned), as README.md
#                     shows it
#   --report-only     run nothing: write report.md (medians, tables, plots)
#                     again from what an earlier sweep left in --out, with
#                     the options it ran with
# Exit status: 0 if every run finished with no wrong result, 1 otherwise.
set -u

usage() {
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

quick=0
usersizes=
out=
perf=
mpirun=${MPIRUN:-mpirun}
nps="2 4"
colls="allreduce broadcast allgather reducescatter alltoall"
settings="default tuned"
extra=
tmo=1800
runs=1
large=1
reportonly=0
compact=0
table=
cluster=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --sizes) usersizes=$2; shift ;;
    --no-large) large=0 ;;
    --out) out=$2; shift ;;
    --perf) perf=$2; shift ;;
    --np) nps=$2; shift ;;
    --colls) colls=$2; shift ;;
    --settings) settings=$2; shift ;;
    --mpirun) mpirun=$2; shift ;;
    --args) extra=$2; shift ;;
    --timeout) tmo=$2; shift ;;
    --runs) runs=$2; shift ;;
    --report-only) reportonly=1 ;;
    --table) table=$2; shift ;;
    --compact) compact=1 ;;
    --cluster) cluster=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    esac
    shift
done

# --table DIR: the README's table from the per-size tables of a report
if [ -n "$table" ]; then
    [ -s "$table/report.md" ] || { echo "bench.sh: no $table/report.md" >&2; exit 2; }
    awk -F'|' '
    function num(x) { gsub(/ /, "", x); return x + 0 }
    function sig(x) { return x >= 100 ? sprintf("%.0f", x) : x >= 10 ? sprintf("%.1f", x) : sprintf("%.2f", x) }
    function get(h) { return (h in col) ? num($col[h]) : "" }
    function fmt(x, d) { return x == "" ? "-" : sig(x / d) }
    function times(h, m) { return h + 0 >= 1000 || m + 0 >= 1000 ? fmt(h, 1000) " / " fmt(m, 1000) " ms" : fmt(h, 1) " / " fmt(m, 1) " us" }
    BEGIN {
        name["allreduce"] = "AllReduce"; name["broadcast"] = "Broadcast"; name["allgather"] = "AllGather"
        name["reducescatter"] = "ReduceScatter"; name["alltoall"] = "AlltoAll"
        print "| ranks | collective | smallest size: hcomm / Open MPI default | ratio default / tuned | 64 KiB: hcomm / default | ratio default / tuned | 16 MiB: hcomm / default | ratio default / tuned |"
        print "|---|---|---|---|---|---|---|---|"
    }
    /^### / { flush(); split($0, w, /[ ,]+/); coll = w[2]; np = w[3]; hd = 0; first = ""; c64 = c16 = "- | -"; next }
    /^\| size \|/ { split("", col); for (i = 2; i < NF; i++) { h = $i; gsub(/^ +| +$/, "", h); col[h] = i } hd = 1; next }
    hd && /^\| [0-9]/ && (coll in name) {
        s = $2; gsub(/^ +| +$/, "", s)
        cell = times(get("hcomm µs (default)"), get("MPI µs (default)")) " | " \
               fmt(get("ratio (default)"), 1) " / " fmt(get("ratio (tuned)"), 1)
        if (first == "") first = cell
        if (s == "64 KiB") c64 = cell
        if (s == "16 MiB") c16 = cell
    }
    function flush() { if (first != "") print "| " np " | " name[coll] " | " first " | " c64 " | " c16 " |"; first = "" }
    END { flush() }' "$table/report.md"
    exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
if [ $reportonly -eq 1 ]; then
    if [ -z "$out" ] || [ ! -s "$out/status.txt" ]; then
        echo "bench.sh: --report-only needs --out DIR of an earlier sweep (DIR/status.txt)" >&2
        exit 2
    fi
    perf="(report only; the commands are listed at the end)"
elif [ -z "$perf" ]; then
    perf=$(command -v hcomm-perf 2>/dev/null) || {
        echo "bench.sh: no hcomm-perf in PATH; pass --perf BUILD/tools/hcomm-perf" >&2
        exit 2
    }
fi
if [ $reportonly -eq 0 ] && [ ! -x "$perf" ]; then
    echo "bench.sh: $perf is not an executable" >&2
    exit 2
fi
case $perf in /* | "(report only"*) ;; *) perf=$(pwd)/$perf ;; esac
[ -n "$out" ] || out=bench-$(date +%Y%m%d-%H%M%S)
case $runs in ''|*[!0-9]*|0) echo "bench.sh: --runs needs a count >= 1" >&2; exit 2 ;; esac
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)

setting_args() {
    case $1 in
    default) echo "" ;;
    tuned) echo "--mca btl_vader_single_copy_mechanism none -x GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296" ;;
    ucx) echo "--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any" ;;
    ob1) echo "--mca pml ob1 --mca btl self,vader" ;;
    *) return 1 ;;
    esac
}
for s in $settings; do
    setting_args "$s" >/dev/null || { echo "bench.sh: unknown setting $s" >&2; exit 2; }
done

if [ $quick -eq 1 ]; then
    sizes="-b 8 -e 8M -f 32 -n 10 -w 2 -T 0.3"
    large=0
else
    # 200 iterations where they fit in the 1 s budget per size (hcomm-perf
    # cuts them at large sizes): with 20, the median at the first size
    # caught Open MPI's faster first iterations (8 B Broadcast 0.40-0.47 us
    # at -n 20, 0.53-0.55 us at -n 200; docs/PERFORMANCE.md)
    sizes="-b 8 -e 64M -f 2 -n 200"
fi
[ -n "$usersizes" ] && sizes=$usersizes
# across hosts: the cluster tool launches, one rank per host
clus=
sep=
if [ -n "$cluster" ]; then
    clus=$here/hcomm-cluster
    [ -x "$clus" ] || clus=$(command -v hcomm-cluster 2>/dev/null) || {
        echo "bench.sh: --cluster needs tools/hcomm-cluster" >&2
        exit 2
    }
    mpirun="$clus run --map-by node"
    sep=--
    large=0
fi
cluster_up() {
    if [ "$cluster" = none ]; then
        "$clus" up "$1" --slots 1 >&2
    else
        "$clus" up "$1" --slots 1 --rate "$cluster" >&2
    fi
}
# the runs of np ranks: the collectives, and at 2 ranks allreduce-large
colls_for() {
    if [ $large -eq 1 ] && [ "$1" = 2 ]; then echo "$colls allreduce-large"; else echo "$colls"; fi
}
# hcomm-perf's arguments for one of them
coll_args() {
    case $1 in
    allreduce-large) echo "-C allreduce -b 32M -e 256M -f 2 -R" ;;
    *) echo "-C $1 $sizes" ;;
    esac
}
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)
rootflag=
[ "$(id -u)" = 0 ] && rootflag=--allow-run-as-root
# hcomm's and UCX's variables travel to every rank
xenv=
for v in $(env | sed -n 's/^\(HCCL_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p' | sort -u); do
    xenv="$xenv -x $v"
done
tmocmd=
if [ "$tmo" != 0 ] && command -v timeout >/dev/null 2>&1; then
    tmocmd="timeout -k 10 $tmo"
fi

# hcomm-floor (tools/hcomm-floor.c): beside hcomm-perf, else in PATH
floor=
if [ $reportonly -eq 0 ]; then
    floor=$(dirname "$perf")/hcomm-floor
    [ -x "$floor" ] || floor=$(command -v hcomm-floor 2>/dev/null) || floor=
fi

fail=0
r=0
if [ $reportonly -eq 1 ]; then
    r=$runs # nothing to run; the runs' statuses only (the medians' come below)
    if [ "$runs" -gt 1 ]; then
        grep '\.r[0-9]* [0-9]*$' "$out/status.txt" >"$out/status.txt.runs"
        mv "$out/status.txt.runs" "$out/status.txt"
    fi
    awk '$2 != 0 { bad = 1 } END { exit !bad }' "$out/status.txt" && fail=1
else
    : >"$out/commands.txt"
    : >"$out/status.txt"
fi
while [ "$r" -lt "$runs" ]; do
r=$((r + 1))
for np in $nps; do
    over=
    [ "$np" -gt "$cores" ] && [ -z "$clus" ] && over=--oversubscribe
    if [ -n "$clus" ]; then
        cluster_up "$np" || { echo "bench.sh: cannot make a cluster of $np hosts" >&2; exit 2; }
    fi
    for s in $settings; do
        sargs=$(setting_args "$s")
        for c in $(colls_for "$np"); do
            name=np$np-$s-$c
            json=$out/$name.json
            if [ "$runs" -gt 1 ]; then
                name=$name.r$r
                json=$out/$name.json
            fi
            # word splitting of the option lists is intended (no spaces in paths)
            cmd="$mpirun $rootflag $over -np $np $sargs$xenv $sep $perf $(coll_args "$c") -M -J $json $extra"
            # shellcheck disable=SC2086,SC2116 # one space between words in the record
            cmd=$(echo $cmd)
            echo "$cmd" >>"$out/commands.txt"
            echo "bench.sh: $name" >&2
            # shellcheck disable=SC2086
            $tmocmd $cmd >"$out/$name.txt" 2>"$out/$name.err"
            rc=$?
            echo "$name $rc" >>"$out/status.txt"
            [ $rc -eq 0 ] || fail=1
            [ $rc -eq 0 ] || echo "bench.sh: $name exited with $rc (see $out/$name.err)" >&2
        done
    done
    if [ -n "$over" ] && [ -n "$floor" ] && [ -z "$clus" ]; then
        name=np$np-floor
        [ "$runs" -gt 1 ] && name=$name.r$r
        cmd="$mpirun $rootflag $over -np $np $floor"
        echo "$cmd" >>"$out/commands.txt"
        echo "bench.sh: $name" >&2
        # shellcheck disable=SC2086
        $tmocmd $cmd >"$out/$name.txt" 2>"$out/$name.err"
        rc=$?
        [ $rc -eq 0 ] || { fail=1; echo "bench.sh: $name exited with $rc (see $out/$name.err)" >&2; }
    fi
done
done
[ -n "$clus" ] && [ $reportonly -eq 0 ] && "$clus" down >&2

# awk functions the programs below share: field(line, key) reads a number
# of hcomm-perf's one-line JSON results as text ("" when absent), fnum the
# same as a number (awk compares text as text: "8.7" > "21.3"), med(a, n)
# the median of a[1..n] (sorts it), hs(bytes) a size as "8 B", "4 KiB", "2 MiB"
awk_lib='
function field(line, key,   v) {
    if (index(line, "\"" key "\":") == 0) return ""
    v = line; sub(".*\"" key "\": *", "", v); sub(/[,}].*/, "", v)
    return v
}
function fnum(line, key,   v) { v = field(line, key); return v == "" ? "" : v + 0 }
function med(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function hs(b) {
    if (b >= 1048576 && b % 1048576 == 0) return b / 1048576 " MiB"
    if (b >= 1024 && b % 1024 == 0) return b / 1024 " KiB"
    return b " B"
}
'

# per_round FIELD FMT: "run 1: lo-hi, run 2: ..." (no "run k: " with one
# round) over the JSON numbers, or arrays of numbers, named FIELD in each
# round's hcomm-perf files; empty when no file has it
per_round() {
    k=0
    acc=
    while [ $k -lt "$runs" ]; do
        k=$((k + 1))
        if [ "$runs" -gt 1 ]; then pat="*.r$k.json"; else pat="*.json"; fi
        # shellcheck disable=SC2086 # the glob is meant to expand
        l=$(cat $out/np$pat 2>/dev/null | awk -v f="\"$1\":" -v fmt="$2" '$1 == f {
                gsub(/[][,]/, " ")
                for (i = 2; i <= NF; i++) { v = $i + 0; if (n++ == 0 || v < lo) lo = v; if (v > hi) hi = v } }
            END { if (n) printf fmt "-" fmt, lo, hi }')
        [ -n "$l" ] && acc="$acc${acc:+, }$([ "$runs" -gt 1 ] && echo "run $k: ")$l"
    done
    echo "$acc"
}

# ------------------------------------------------------------ run medians
# NAME.json from NAME.r1.json .. NAME.rN.json: per size the median of the
# times and of the per-run ratios (busbw follows the median time), the
# ratio's range, the wrong results of all runs added up.
median_json() {
    # shellcheck disable=SC2086 # the run files, in order
    awk -v runs="$runs" "$awk_lib"'
        FNR == 1 { f++ }
        f == 1 && !/^ *\{"size":/ && !inres { if (/"results": \[/) inres = 1; head = head $0 "\n"; next }
        /^ *\{"size":/ {
            sz = field($0, "size") + 0
            if (!(sz in seen)) { seen[sz] = 1; order[++nsz] = sz; rest[sz] = $0 }
            k = ++cnt[sz]
            # numbers, not strings: med() and the range compare them
            T[sz, k] = field($0, "time_us") + 0; B[sz, k] = field($0, "busbw") + 0
            MT[sz, k] = fnum($0, "mpi_time_us"); MB[sz, k] = fnum($0, "mpi_busbw")
            R[sz, k] = fnum($0, "ratio"); W[sz] += field($0, "wrong"); MW[sz] += field($0, "mpi_wrong")
            MC[sz, k] = fnum($0, "memcpy_GBps")
        }
        END {
            sub(/"command"/, "\"runs\": " runs ",\n  \"command\"", head)
            printf "%s", head
            gs = 0; gn = 0; bs = 0
            for (i = 1; i <= nsz; i++) {
                sz = order[i]; n = cnt[sz]
                for (k = 1; k <= n; k++) { a[k] = T[sz, k] } t = med(a, n)
                bw = T[sz, 1] > 0 ? B[sz, 1] * T[sz, 1] / t : 0
                line = sprintf("    {\"size\": %d, \"runs\": %d, \"time_us\": %.3f, \"busbw\": %.4f, \"wrong\": %d", sz, n, t, bw, W[sz])
                if (MT[sz, 1] != "") {
                    for (k = 1; k <= n; k++) { a[k] = MT[sz, k] } mt = med(a, n)
                    mb = MT[sz, 1] > 0 ? MB[sz, 1] * MT[sz, 1] / mt : 0
                    lo = hi = R[sz, 1]
                    for (k = 1; k <= n; k++) { a[k] = R[sz, k]; if (R[sz, k] < lo) lo = R[sz, k]; if (R[sz, k] > hi) hi = R[sz, k] }
                    rt = med(a, n)
                    line = line sprintf(", \"mpi_time_us\": %.3f, \"mpi_busbw\": %.4f, \"ratio\": %.4f, \"ratio_min\": %.4f, \"ratio_max\": %.4f, \"mpi_wrong\": %d", mt, mb, rt, lo, hi, MW[sz])
                    if (rt > 0) { gs += log(rt); gn++ }
                }
                if (MC[sz, 1] != "") {
                    for (k = 1; k <= n; k++) { a[k] = MC[sz, k] }
                    line = line sprintf(", \"memcpy_GBps\": %.4f", med(a, n))
                }
                bs += bw
                printf "%s}%s\n", line, (i < nsz ? "," : "")
            }
            printf "  ],\n  \"avg_busbw\": %.4f,\n  \"geomean_ratio\": %.4f\n}\n", nsz ? bs / nsz : 0, gn ? exp(gs / gn) : 0
        }' "$@"
}
if [ "$runs" -gt 1 ]; then
    : >"$out/status.txt.tmp"
    for np in $nps; do
        for s in $settings; do
            for c in $(colls_for "$np"); do
                name=np$np-$s-$c
                files=
                k=0
                while [ $k -lt "$runs" ]; do
                    k=$((k + 1))
                    [ -s "$out/$name.r$k.json" ] && files="$files $out/$name.r$k.json"
                done
                if [ -n "$files" ]; then
                    # shellcheck disable=SC2086
                    median_json $files >"$out/$name.json"
                fi
                # its status: the last nonzero one of its runs, else 0
                awk -v n="$name" 'index($1, n ".r") == 1 && $2 != 0 { rc = $2 }
                    END { print n, rc + 0 }' "$out/status.txt" >>"$out/status.txt.tmp"
            done
        done
    done
    cat "$out/status.txt.tmp" >>"$out/status.txt"
    rm -f "$out/status.txt.tmp"
fi

# ------------------------------------------------------------------ report
# The JSON that hcomm-perf writes has one result per line:
#   {"size": 8, "count": 2, ..., "time_us": 1.0, "busbw": ..., "mpi_time_us": ...}
rep=$out/report.md
if [ -n "$clus" ]; then
    mpiver=$(${MPIRUN:-mpirun} --version 2>/dev/null | head -n 1)
else
    mpiver=$($mpirun --version 2>/dev/null | head -n 1)
fi
{
    echo "# hcomm benchmark sweep"
    echo
    cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
    echo "- host $(hostname), $(uname -srm)${cpu:+, CPU: $cpu}"
    echo "- $cores cores online; runs with more ranks than cores use --oversubscribe"
    echo "- MPI: $mpiver"
    [ -n "$clus" ] && echo "- across hosts: the emulated cluster (docs/CLUSTER.md), one rank per host, links $([ "$cluster" = none ] && echo "without a rate limit" || echo "limited to $cluster each way")"
    echo "- mode: $([ $quick -eq 1 ] && echo quick || echo full), hcomm-perf $perf"
    [ -n "$usersizes" ] && echo "- sizes: \`$usersizes\`"
    [ -n "$extra" ] && echo "- extra hcomm-perf arguments: \`$extra\`$(case " $extra " in *" -A "*) echo " (-A: buffers from HcclMemAlloc, registered with the communicator; MPI runs on the same buffers)" ;; *" -H "*) echo " (-H: the buffers in transparent huge pages; MPI runs on the same buffers)" ;; esac)"
    echo "- settings:"
    for s in $settings; do
        a=$(setting_args "$s")
        echo "  - $s: \`${a:-(Open MPI defaults)}\`"
    done
    echo "- environment forwarded:${xenv:- none}"
    # the machine's state, smallest-largest over each round's runs:
    # hcomm-perf's core-to-core latency (runs with no more ranks than
    # cores) and vCPU speed (every local rank)
    lat=$(per_round line_latency_ns %.0f)
    [ -n "$lat" ] && echo "- core-to-core latency (ns one way, hcomm-perf's cache-line ping-pong; on this VM it moves between runs, and every time with it): $lat"
    spd=$(per_round cpu_step_ns %.2f)
    [ -n "$spd" ] && echo "- vCPU speed (ns per step of a chain of additions through memory, each local rank alone, fastest-slowest; a wide spread means the host slowed a vCPU, and the slowest rank's times with it): $spd"
    echo
    echo "time: median over iterations of the slowest rank, µs. ratio = MPI time /"
    echo "hcomm time in the same run (> 1: hcomm faster).$([ "$runs" -gt 1 ] && echo " Every setting ran $runs times (interleaved): a time is the median over the runs, a ratio the median of the runs' ratios (each within one run; the range is in the JSON files).") \"vs best\" = the smallest"
    echo "of the ratios, i.e. hcomm against the fastest MPI setting, and which one."
    echo "busbw in GB/s (nccl-tests factors). The machine is shared: compare"
    echo "within a row, not across reports."
    echo
    echo "## Summary"
    echo
    printf '| nranks | collective |'
    for s in $settings; do printf ' geomean ratio (%s) | avg hcomm busbw (%s) | #wrong (%s) |' "$s" "$s" "$s"; done
    echo
    printf '|---|---|'
    for s in $settings; do printf -- '---|---|---|'; done
    echo
    for np in $nps; do
        for c in $(colls_for "$np"); do
            printf '| %s | %s |' "$np" "$c"
            for s in $settings; do
                f=$out/np$np-$s-$c.json
                rc=$(awk -v n="np$np-$s-$c" '$1 == n { print $2 }' "$out/status.txt")
                if [ -s "$f" ]; then
                    awk '/"geomean_ratio"/ { g = $2 } /"avg_busbw"/ { b = $2 }
                         /"wrong":/ { w = $0; sub(/.*"wrong": */, "", w); sub(/[,}].*/, "", w); if (w > 0) t += w }
                         END { gsub(/,/, "", g); gsub(/,/, "", b);
                               printf " %s | %.2f | %d |", (g == "" ? "n/a" : sprintf("%.3f", g)), b, t }' "$f"
                else
                    printf ' FAILED (rc %s) | | |' "$rc"
                fi
            done
            echo
        done
    done
    echo
} >"$rep"

# hcomm-floor's runs (more ranks than cores): one row per run
for np in $nps; do
    fl=$(ls "$out/np$np-floor.txt" "$out"/np$np-floor.r*.txt 2>/dev/null)
    [ -n "$fl" ] || continue
    {
        echo "## Bare synchronization at $np ranks (hcomm-floor)"
        echo
        echo "Cache-line flags in shared memory and nothing else, timed as hcomm-perf times"
        echo "a call (\`tools/hcomm-floor.c\`): \"all\" is the wait of AllReduce, AllGather,"
        echo "ReduceScatter and AlltoAll (every rank for every other), \"root\" the wait of"
        echo "Broadcast (every rank for the root). With more ranks than cores an \"all\""
        echo "needs two process hand-overs on a core; no library's small-message time is"
        echo "much below it. Median over iterations of the slowest rank, µs:"
        echo
        echo "| run | all | root | MPI_Barrier | sched_yield hand-over |"
        echo "|---|---|---|---|---|"
        # shellcheck disable=SC2086 # the run files
        awk 'FNR == 1 { if (f != "") printf "| %s | %s | %s | %s | %s |\n", f, a, r, b, h
                        f = FILENAME; sub(/.*\//, "", f); sub(/\.txt$/, "", f); a = r = b = h = "-" }
             /^all / { a = $(NF - 2) } /^root / { r = $(NF - 2) }
             /^MPI_Barrier / { b = $2 } /^sched_yield / { h = $3 }
             END { if (f != "") printf "| %s | %s | %s | %s | %s |\n", f, a, r, b, h }' $fl
        echo
    } >>"$rep"
done

# The runs split by hcomm-perf's core-to-core latency (only when it varies
# by 2x or more between the runs: on a VM it follows where the host runs
# the vCPUs, docs/PERFORMANCE.md)
runfiles=
[ "$runs" -gt 1 ] && runfiles=$(ls "$out"/np*-*.r*.json 2>/dev/null)
if [ -n "$runfiles" ]; then
    # shellcheck disable=SC2086 # the run files
    awk "$awk_lib"'
            FNR == 1 {
                f = FILENAME; sub(/.*\//, "", f); sub(/\.json$/, "", f)
                run = f; sub(/.*\.r/, "", run); sub(/\.r[0-9]+$/, "", f)
                key = f; lat = ""
                if (!(key in kseen)) { kseen[key] = 1; keys[++nk] = key }
            }
            /"line_latency_ns":/ { lat = $2 + 0; L[key, run] = lat; has[key] = 1; if (nl++ == 0 || lat < lo) lo = lat; if (lat > hi) hi = lat }
            /^ *\{"size":/ && lat != "" && field($0, "ratio") != "" {
                sz = field($0, "size") + 0
                if (!((key, sz) in sseen)) { sseen[key, sz] = 1; sizes[key, ++ns[key]] = sz }
                R[key, run, sz] = field($0, "ratio") + 0; runs[key, run] = 1
            }
            END {
                if (nl == 0 || hi < 2 * lo) exit
                cut = (lo + hi) / 2
                printf "## By core-to-core latency\n\n"
                printf "The runs split by the latency hcomm-perf measured at their start (below or above %.0f ns, the middle of %.0f-%.0f): geometric mean over the sizes of the median ratio of each class, and the lowest size median. Rows compare runs of one class only.\n\n", cut, lo, hi
                printf "| run | low: runs (ns) | geomean | lowest (size) | high: runs (ns) | geomean | lowest (size) |\n|---|---|---|---|---|---|---|\n"
                for (k = 1; k <= nk; k++) {
                    key = keys[k]
                    if (!(key in has)) continue # no latency (more ranks than cores)
                    printf "| %s |", key
                    for (c = 0; c < 2; c++) {
                        nr = 0; lst = ""
                        for (r = 1; r <= 99; r++) if ((key, r) in runs && ((L[key, r] >= cut) == c)) { nr++; lst = lst (lst == "" ? "" : ", ") sprintf("%.0f", L[key, r]) }
                        if (nr == 0) { printf " none | | |"; continue }
                        gs = 0; gn = 0; mn = ""; msz = 0
                        for (i = 1; i <= ns[key]; i++) {
                            sz = sizes[key, i]; m = 0
                            for (r = 1; r <= 99; r++) if ((key, r) in runs && ((L[key, r] >= cut) == c) && ((key, r, sz) in R)) a[++m] = R[key, r, sz]
                            if (m == 0) continue
                            v = med(a, m); gs += log(v); gn++
                            if (mn == "" || v < mn) { mn = v; msz = sz }
                        }
                        printf " %d (%s) | %.3f | %.3f (%s) |", nr, lst, exp(gs / gn), mn, hs(msz)
                    }
                    printf "\n"
                }
                printf "\n"
            }
            ' $runfiles >>"$rep" 2>/dev/null
fi

# ------------------------------------------------------------- the targets
# The performance issue's table of targets (the misses are quoted in
# docs/PERFORMANCE.md, "What is not reached"), checked on the ratios of the tables below (the medians over the runs):
# ratio = MPI time / hcomm time, so "time <= 0.5x" is ratio >= 2 and
# "busbw >= 1.5x" ratio >= 1.5. One line per target: the rank count, the
# collectives, the size range, the Open MPI setting, the ratio it needs
# ("m" before it: the percentage of the single-core memcpy instead, from
# hcomm-perf -R) and its words. "*" = any rank count more than the cores
# for the 4-rank row, any size for the ranges.
targets='2 allreduce 8 2048 default 1.0 AllReduce 8 B - 2 KiB, time <= 1.0x
2 allreduce 8 2048 default 1.25 AllReduce 8 B - 2 KiB, stretch: time <= 0.8x
2 allreduce 8 2048 tuned 1.0 AllReduce 8 B - 2 KiB, time <= 1.0x
2 allreduce 8192 8388608 default 1.5 AllReduce 8 KiB - 8 MiB, busbw >= 1.5x
2 allreduce 8192 8388608 tuned 1.0 AllReduce 8 KiB - 8 MiB, busbw >= 1.0x
2 allreduce,allreduce-large 33554432 268435456 default 5 AllReduce 32 - 256 MiB, busbw >= 5x
2 allreduce,allreduce-large 33554432 268435456 tuned 1.3 AllReduce 32 - 256 MiB, busbw >= 1.3x
2 allreduce-large 33554432 268435456 tuned m40 AllReduce 32 - 256 MiB, busbw >= 40% of memcpy
4 allreduce * * default 2 4 ranks on 2 cores AllReduce, time <= 0.5x
4 allreduce * * tuned 1.0 4 ranks on 2 cores AllReduce, time <= 1.0x
4 broadcast * * default 2 4 ranks on 2 cores Broadcast, time <= 0.5x
4 broadcast * * tuned 1.0 4 ranks on 2 cores Broadcast, time <= 1.0x
4 allgather * * default 2 4 ranks on 2 cores AllGather, time <= 0.5x
4 allgather * * tuned 1.0 4 ranks on 2 cores AllGather, time <= 1.0x
4 reducescatter * * default 2 4 ranks on 2 cores ReduceScatter, time <= 0.5x
4 reducescatter * * tuned 1.0 4 ranks on 2 cores ReduceScatter, time <= 1.0x
4 alltoall * * default 2 4 ranks on 2 cores AlltoAll, time <= 0.5x
4 alltoall * * tuned 1.0 4 ranks on 2 cores AlltoAll, time <= 1.0x
2 broadcast 8 67108864 default 1.0 Broadcast 8 B - 64 MiB, time <= 1.0x
2 broadcast 8 67108864 tuned 1.0 Broadcast 8 B - 64 MiB, time <= 1.0x
2 allgather 8 67108864 default 1.0 AllGather 8 B - 64 MiB, time <= 1.0x
2 allgather 8 67108864 tuned 1.0 AllGather 8 B - 64 MiB, time <= 1.0x
2 reducescatter 8 67108864 default 1.0 ReduceScatter 8 B - 64 MiB, time <= 1.0x
2 reducescatter 8 67108864 tuned 1.0 ReduceScatter 8 B - 64 MiB, time <= 1.0x
2 alltoall 8 67108864 default 1.0 AlltoAll 8 B - 64 MiB, time <= 1.0x
2 alltoall 8 67108864 tuned 1.0 AlltoAll 8 B - 64 MiB, time <= 1.0x'
# the table's files: every median (or single-run) JSON of this sweep
tfiles=
for np in $nps; do
    for s in $settings; do
        for c in $(colls_for "$np"); do
            [ -s "$out/np$np-$s-$c.json" ] && tfiles="$tfiles $out/np$np-$s-$c.json"
        done
    done
done
if [ -n "$tfiles" ]; then
    # shellcheck disable=SC2086 # the JSON files
    printf '%s\n' "$targets" | awk "$awk_lib"'
        FNR == 1 { fn++ }
        fn == 1 { tg[++nt] = $0; next } # the targets, from stdin
        FNR == 1 { # npN-SETTING-COLL.json
            f = FILENAME; sub(/.*\//, "", f); sub(/\.json$/, "", f)
            np = f; sub(/^np/, "", np); sub(/-.*/, "", np)
            st = f; sub(/^np[0-9]+-/, "", st); co = st; sub(/-.*/, "", st); sub(/^[^-]*-/, "", co)
        }
        /^ *\{"size":/ && field($0, "ratio") != "" {
            k = np SUBSEP st SUBSEP co
            n = ++cnt[k]; SZ[k, n] = field($0, "size") + 0; R[k, n] = field($0, "ratio") + 0
            mc = field($0, "memcpy_GBps") + 0
            P[k, n] = mc > 0 ? 100 * field($0, "busbw") / mc : -1
        }
        /^ *\{"size":/ { # results checked (hcomm-perf -c): wrong ones, hcomm or MPI
            if (!(st in wn)) wst[++nw] = st
            wn[st]++
            if (field($0, "wrong") + 0 > 0 || field($0, "mpi_wrong") + 0 > 0)
                wb[st] = wb[st] (wb[st] == "" ? "" : ", ") np " ranks " co " " hs(field($0, "size") + 0)
        }
        END {
            printf "## Against the performance issue'"'"'s targets\n\n"
            printf "The issue'"'"'s table checked on the ratios below (the medians over the runs;\n"
            printf "ratio = MPI time / hcomm time, so \"time <= 0.5x\" is a ratio >= 2 and\n"
            printf "\"busbw >= 1.5x\" one >= 1.5). \"met\": the sizes that reach it; \"lowest\":\n"
            printf "the smallest ratio (or share of the memcpy) and its size; \"misses\": every\n"
            printf "size below the target. Rows of collectives or settings this sweep did\n"
            printf "not run are left out. The last rows count the sizes whose results\n"
            printf "(hcomm'"'"'s and MPI'"'"'s, checked in every run) were all right.\n\n"
            printf "| target | Open MPI | needs | met | lowest | misses |\n|---|---|---|---|---|---|\n"
            for (t = 1; t <= nt; t++) {
                split(tg[t], a, " ")
                words = tg[t]; for (i = 1; i <= 6; i++) sub(/^[^ ]+ /, "", words)
                pct = substr(a[6], 1, 1) == "m"; need = (pct ? substr(a[6], 2) : a[6]) + 0
                nc = split(a[2], cs, ","); tot = 0; ok = 0; low = ""; lsz = 0; miss = ""; nm = 0
                for (j = 1; j <= nc; j++) {
                    k = a[1] SUBSEP a[5] SUBSEP cs[j]
                    for (n = 1; n <= cnt[k]; n++) {
                        sz = SZ[k, n]
                        if (a[3] != "*" && (sz < a[3] + 0 || sz > a[4] + 0)) continue
                        v = pct ? P[k, n] : R[k, n]
                        if (pct && v < 0) continue
                        tot++
                        lbl = hs(sz) (nc > 1 && cs[j] != "allreduce-large" ? " (" cs[j] " run)" : "")
                        if (low == "" || v < low) { low = v; lsz = lbl }
                        if (v >= need) { ok++; continue }
                        if (++nm <= 8)
                            miss = miss (miss == "" ? "" : ", ") lbl " " (pct ? sprintf("%.0f%%", v) : sprintf("%.3f", v))
                    }
                }
                if (tot == 0) continue
                if (nm > 8) miss = miss sprintf(" and %d more", nm - 8)
                printf "| %s | %s | %s | %d of %d | %s (%s) | %s |\n", words, a[5],
                    pct ? sprintf(">= %g%% of memcpy", need) : sprintf("ratio >= %g", need), ok, tot,
                    pct ? sprintf("%.0f%%", low) : sprintf("%.3f", low), lsz, miss == "" ? "none" : miss
            }
            # every size of every run checked, in the same runs ("#wrong" = 0)
            for (i = 1; i <= nw; i++) {
                st = wst[i]; nb = split(wb[st], junk, ", ")
                printf "| #wrong = 0 in every table | %s | no wrong result | %d of %d | - | %s |\n",
                    st, wn[st] - nb, wn[st], wb[st] == "" ? "none" : wb[st]
            }
            printf "\n"
        }' - $tfiles >>"$rep"
fi

for np in $nps; do
    echo "## $np ranks" >>"$rep"
    echo >>"$rep"
    for c in $(colls_for "$np"); do
        files=
        for s in $settings; do files="$files $out/np$np-$s-$c.json"; done
        # shellcheck disable=SC2086
        awk -v settings="$settings" -v coll="$c" -v np="$np" -v dat="$out/bench-np$np-$c.dat" "$awk_lib"'
            function fmt(v, d) { return v == "" ? "-" : sprintf("%." d "f", v) }
            BEGIN { ns = split(settings, S, " ") }
            FNR == 1 { fi = 0; for (i = 1; i <= ns; i++) if (FILENAME ~ ("-" S[i] "-" coll "\\.json$")) fi = i }
            /^ *\{"size":/ {
                sz = field($0, "size") + 0
                if (!(sz in seen)) { seen[sz] = 1; order[++nsz] = sz }
                T[sz, fi] = field($0, "time_us"); B[sz, fi] = field($0, "busbw")
                MT[sz, fi] = field($0, "mpi_time_us"); MB[sz, fi] = field($0, "mpi_busbw")
                R[sz, fi] = field($0, "ratio"); W[sz, fi] = field($0, "wrong")
                MC[sz, fi] = field($0, "memcpy_GBps"); if (MC[sz, fi] != "") hasmc = 1
            }
            END {
                printf "### %s, %s ranks\n\n| size |", coll, np
                for (i = 1; i <= ns; i++)
                    printf " hcomm µs (%s) | MPI µs (%s) | ratio (%s) |", S[i], S[i], S[i]
                printf " vs best | hcomm busbw (best) | MPI busbw (best) |"
                if (hasmc)
                    for (i = 1; i <= ns; i++)
                        printf " memcpy GB/s (%s) | hcomm busbw / memcpy (%s) |", S[i], S[i]
                printf "\n|---:|"
                for (i = 1; i <= ns; i++) printf "---:|---:|---:|"
                printf "---:|---:|---:|"
                if (hasmc) for (i = 1; i <= ns; i++) printf "---:|---:|"
                printf "\n"
                printf "# %s, %s ranks: size, then per setting (%s): hcomm_us hcomm_busbw mpi_us mpi_busbw\n", coll, np, settings > dat
                for (k = 1; k <= nsz; k++) {
                    sz = order[k]; best = ""; bs = ""; hb = ""; mb = ""
                    printf "| %s |", hs(sz)
                    line = sz
                    for (i = 1; i <= ns; i++) {
                        wr = (W[sz, i] != "" && W[sz, i] + 0 > 0) ? " (" W[sz, i] " wrong)" : ""
                        printf " %s%s | %s | %s |", fmt(T[sz, i], 2), wr, fmt(MT[sz, i], 2), fmt(R[sz, i], 3)
                        if (R[sz, i] != "" && (best == "" || R[sz, i] + 0 < best + 0)) { best = R[sz, i]; bs = S[i] }
                        if (B[sz, i] != "" && (hb == "" || B[sz, i] + 0 > hb + 0)) hb = B[sz, i]
                        if (MB[sz, i] != "" && (mb == "" || MB[sz, i] + 0 > mb + 0)) mb = MB[sz, i]
                        line = line " " (T[sz, i] == "" ? "NaN" : T[sz, i]) " " (B[sz, i] == "" ? "NaN" : B[sz, i]) \
                               " " (MT[sz, i] == "" ? "NaN" : MT[sz, i]) " " (MB[sz, i] == "" ? "NaN" : MB[sz, i])
                    }
                    printf " %s%s | %s | %s |", fmt(best, 3), (bs == "" ? "" : " (" bs ")"), fmt(hb, 2), fmt(mb, 2)
                    if (hasmc)
                        for (i = 1; i <= ns; i++)
                            printf " %s | %s |", fmt(MC[sz, i], 2),
                                (MC[sz, i] + 0 > 0 && B[sz, i] != "") ? sprintf("%.0f%%", 100 * B[sz, i] / MC[sz, i]) : "-"
                    printf "\n"
                    print line > dat
                }
                printf "\n"
            }' $files >>"$rep" 2>/dev/null
    done
done

{
    echo "## Plots"
    echo
    if command -v gnuplot >/dev/null 2>&1; then
        for np in $nps; do
            png=busbw-np$np.png
            if gnuplot -e "datadir='$out'; np='$np'; settings='$settings'; colls='$(colls_for "$np")'; outfile='$out/$png'" \
                "$here/plot.gp" 2>"$out/gnuplot-np$np.err"; then
                echo "![busbw vs size, $np ranks]($png)"
            else
                echo "gnuplot failed for $np ranks: $(tail -n 3 "$out/gnuplot-np$np.err")"
            fi
            echo
        done
    else
        echo "gnuplot is not installed (Debian: apt-get install gnuplot-nox): no plots."
        echo
    fi
    echo "## Runs"
    echo
    echo "Exit status per run (0 = ran, every result right):"
    echo
    echo '```'
    cat "$out/status.txt"
    echo '```'
    echo
    # shellcheck disable=SC2013 # run names have no spaces
    for n in $(awk '$2 != 0 { print $1 }' "$out/status.txt"); do
        [ -f "$out/$n.err" ] || continue # a median over runs: its runs are listed
        echo "$n failed; the end of its stderr:"
        echo
        echo '```'
        tail -n 15 "$out/$n.err"
        echo '```'
        echo
    done
    echo "Commands, exactly as run:"
    echo
    echo '```'
    cat "$out/commands.txt"
    echo '```'
} >>"$rep"

if [ $compact -eq 1 ]; then
    for s in $settings; do
        rm -f "$out"/np*-"$s"-*.r[0-9]*.json "$out"/np*-"$s"-*.txt "$out"/np*-"$s"-*.err
    done
    rm -f "$out"/np*-floor*.err "$out"/gnuplot-np*.err
fi
echo "bench.sh: report in $rep" >&2
exit $fail
