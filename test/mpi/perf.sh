#!/bin/sh
# test/mpi/perf.sh - the benchmark tools run and report what they measured:
#   - hcomm-perf -M -R -J on 2 ranks (AllReduce) and 3 ranks (Broadcast from
#     rank 1): exit 0, "#wrong" 0 on every row, a JSON result per size with
#     the MPI time, the ratio and (for -R) the memcpy reference; the
#     core-to-core latency (header and JSON) exactly when the ranks do not
#     outnumber the cores; the vCPU speed of both ranks (header and JSON);
#     the barrier before each call: MPI_Barrier by default on one node,
#     HcclBarrier with -S hcomm (header and JSON "sync"); a bad -S fails;
#   - hcomm-perf -C reducescatterv -M (blocks of (i+1)k elements) on 2 and
#     3 ranks, out of place and in place: exit 0, "#wrong" 0 on every row,
#     MPI_Reduce_scatter beside it with a time on every row and no warning
#     that its result is wrong, the 64 B size as 15 (2 ranks) or 12 (3
#     ranks) elements: whole k of N(N+1)/2;
#   - hcomm-perf -A (registered buffers) on 2 ranks, AllReduce and AlltoAll:
#     exit 0, "#wrong" 0, the header and the JSON say so;
#   - hcomm-perf -H (buffers advised MADV_HUGEPAGE) on 2 ranks: exit 0,
#     "#wrong" 0, the header and the JSON give the huge-page bytes (at most
#     both buffers: the kernel may give none); -H with -A fails;
#   - hcomm-perf with a bad collective name fails (exit != 0);
#   - tools/bench.sh --quick on 2 ranks (two collectives, one setting):
#     exit 0, a report with its summary and per-size tables, status 0;
#   - tools/bench.sh --report-only over two made-up runs at 60 and 300 ns
#     core-to-core latency: the medians and the table of the runs split by
#     latency, with the values worked out by hand, each run's vCPU speed
#     range, and the rows of the issue's targets those runs have data for;
#     over three made-up runs, the median and range of the ratio taken as
#     numbers (8.5, 21, 9: 9, not the text order's 8.5);
#   - hcomm-floor on 2 and 3 ranks: exit 0, a positive median between the
#     10th and 90th percentiles for "all",
#     "root" and MPI_Barrier, the sched_yield hand-over exactly when the
#     ranks outnumber the cores; a bad option fails; bench.sh --quick on 3
#     ranks quotes it in its report exactly when 3 ranks outnumber the cores;
#   - hcomm-tune on 2 ranks with candidates CMA, DIRECT and DIRECT+nt: exit
#     0, a time in every column (CMA runs: the tool asks with the
#     arguments an operation sees), a tuning file of rules naming them that
#     hcomm-perf then runs with; "+nt" on a pseudo-candidate fails;
#   - hcomm-tune -A (registered buffers): CMA+nt among the default
#     candidates, rules with when=registered that hcomm-perf -A runs with;
#   - hcomm-tune -H (buffers in huge pages): the header and the file say so,
#     rules hcomm-perf -H runs with; -A with -H fails.
# Timings are not checked (never a timing threshold in a test).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
: "${top_srcdir:=$here/../..}"
: "${MPIRUN:=mpirun}"
: "${HC_TEST_TIMEOUT:=300}"
export HC_TEST_TIMEOUT
perf=$top_builddir/tools/hcomm-perf
if [ ! -x "$perf" ]; then
    echo "perf.sh: $perf not built" >&2
    exit 99
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-perf.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=

fail() {
    echo "perf.sh: FAIL: $*"
    failed="$failed
  $*"
}

# every data row (no leading '#') has #wrong (column 9) = 0; prints the rows
rows_ok() {
    awk '!/^#/ && NF >= 9 && $1 ~ /^[0-9]+$/ { n++; if ($9 != 0) bad++ }
         END { exit !(n > 0 && bad == 0) }' "$1"
}

echo "=== hcomm-perf -C allreduce -M -R -J on 2 ranks"
sh "$here/mpirun.sh" 2 "$perf" -C allreduce -b 8 -e 1M -f 16 -n 5 -w 1 -T 0.2 -M -R \
    -J "$tmp/ar.json" >"$tmp/ar.txt" 2>&1
rc=$?
cat "$tmp/ar.txt"
[ $rc -eq 0 ] || fail "allreduce run exited with $rc"
rows_ok "$tmp/ar.txt" || fail "allreduce: a row with #wrong != 0, or no rows"
nres=$(grep -c '"size":' "$tmp/ar.json" 2>/dev/null)
nmcp=$(grep -c '"memcpy_GBps":' "$tmp/ar.json" 2>/dev/null)
nrat=$(grep -c '"ratio":' "$tmp/ar.json" 2>/dev/null)
# 8 B .. 1 MiB in x16 steps: 8, 128, 2K, 32K, 512K
[ "${nres:-0}" -eq 5 ] || fail "allreduce JSON: $nres results, want 5"
[ "${nmcp:-0}" -eq 5 ] || fail "allreduce JSON: $nmcp memcpy references, want 5 (-R)"
[ "${nrat:-0}" -eq 5 ] || fail "allreduce JSON: $nrat ratios, want 5 (-M)"
grep -q 'bus/mcp' "$tmp/ar.txt" || fail "allreduce: no memcpy columns in the header (-R)"
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)
# latency_ok FILE.txt FILE.json NP: measured (a positive number) iff NP <= cores
latency_ok() {
    lat=$(sed -n 's/.*"line_latency_ns": *\([0-9.]*\).*/\1/p' "$2")
    if [ "$3" -le "$cores" ]; then
        grep -q '^# core-to-core latency: [0-9]* ns' "$1" || echo "no latency line in the header"
        awk -v l="${lat:-0}" 'BEGIN { exit !(l > 0) }' || echo "JSON line_latency_ns '$lat', want > 0"
    else
        grep -q 'core-to-core latency' "$1" && echo "a latency line with $3 ranks on $cores cores"
        [ -z "$lat" ] || echo "JSON line_latency_ns with $3 ranks on $cores cores"
    fi
}
why=$(latency_ok "$tmp/ar.txt" "$tmp/ar.json" 2)
[ -z "$why" ] || fail "allreduce: $why"
# the vCPU speed: one positive step time and a CPU number per local rank
grep -q '^# vCPU speed: .*alone (cpu): [0-9.]* ([0-9]*) [0-9.]* ([0-9]*)$' "$tmp/ar.txt" ||
    fail "allreduce: no vCPU speed line with two ranks in the header"
awk '/"cpu_step_ns":/ { gsub(/[][,]/, " "); for (i = 2; i <= NF; i++) if ($i + 0 > 0) n++ }
     END { exit n != 2 }' "$tmp/ar.json" || fail "allreduce JSON: cpu_step_ns not two positive values"
awk '/"cpu_of_rank":/ { gsub(/[][,]/, " "); for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) n++ }
     END { exit n != 2 }' "$tmp/ar.json" || fail "allreduce JSON: cpu_of_rank not two CPU numbers"

grep -q '^# time: .*an untimed MPI_Barrier before each call' "$tmp/ar.txt" ||
    fail "allreduce: the header does not name MPI_Barrier (one node, no -S)"
grep -q '"sync": "mpi"' "$tmp/ar.json" || fail "allreduce JSON: no \"sync\": \"mpi\" (one node, no -S)"

echo "=== hcomm-perf -C broadcast -r 1 -M -S hcomm on 3 ranks"
sh "$here/mpirun.sh" 3 "$perf" -C broadcast -r 1 -b 8 -e 256K -f 8 -n 5 -w 1 -T 0.2 -M -S hcomm \
    -J "$tmp/bc.json" >"$tmp/bc.txt" 2>&1
rc=$?
cat "$tmp/bc.txt"
[ $rc -eq 0 ] || fail "broadcast run exited with $rc"
rows_ok "$tmp/bc.txt" || fail "broadcast: a row with #wrong != 0, or no rows"
if grep -q '"memcpy_GBps":' "$tmp/bc.json"; then
    fail "broadcast JSON has memcpy references without -R"
fi
why=$(latency_ok "$tmp/bc.txt" "$tmp/bc.json" 3)
[ -z "$why" ] || fail "broadcast: $why"
grep -q '^# time: .*an untimed HcclBarrier before each call' "$tmp/bc.txt" ||
    fail "broadcast -S hcomm: the header does not name HcclBarrier"
grep -q '"sync": "hcomm"' "$tmp/bc.json" || fail "broadcast -S hcomm: JSON has no \"sync\": \"hcomm\""
if sh "$here/mpirun.sh" 2 "$perf" -S nosuch >"$tmp/bad.txt" 2>&1; then
    cat "$tmp/bad.txt"
    fail "hcomm-perf -S nosuch exited with 0"
fi
grep -q -- 'bad -S nosuch' "$tmp/bad.txt" || fail "hcomm-perf -S nosuch: no message naming the option"

for np in 2 3; do
    # 64 B = 16 floats: k = 16 / (N(N+1)/2) rounded down, count N(N+1)/2 k
    want=$([ $np = 2 ] && echo 15 || echo 12)
    for ip in 0 1; do
        echo "=== hcomm-perf -C reducescatterv -M -i $ip on $np ranks"
        f=$tmp/rsv$np-$ip.txt
        sh "$here/mpirun.sh" $np "$perf" -C reducescatterv -i $ip -b 64 -e 64K -f 32 -n 3 -w 1 \
            -T 0.2 -M >"$f" 2>&1
        rc=$?
        cat "$f"
        [ $rc -eq 0 ] || fail "reducescatterv -i $ip on $np ranks exited with $rc"
        rows_ok "$f" ||
            fail "reducescatterv -i $ip on $np ranks: a row with #wrong != 0, or no rows"
        grep -q '^# -M: MPI_Reduce_scatter;' "$f" ||
            fail "reducescatterv -i $ip on $np ranks: MPI_Reduce_scatter not run"
        awk '!/^#/ && $1 ~ /^[0-9]+$/ { n++; if ($10 !~ /^[0-9.]+$/) bad++ }
             END { exit !(n == 3 && bad == 0) }' "$f" ||
            fail "reducescatterv -i $ip on $np ranks: not 3 rows with an MPI time"
        grep -q 'WARNING' "$f" && fail "reducescatterv -i $ip on $np ranks: MPI's result wrong too"
        awk -v w="$want" '!/^#/ && $1 == w * 4 && $2 == w { ok = 1 } END { exit !ok }' "$f" ||
            fail "reducescatterv on $np ranks: 64 B not $want elements"
    done
done

for c in allreduce alltoall; do
    echo "=== hcomm-perf -C $c -A -M on 2 ranks"
    sh "$here/mpirun.sh" 2 "$perf" -C $c -A -b 8 -e 8M -f 32 -n 5 -w 1 -T 0.2 -M \
        -J "$tmp/reg-$c.json" >"$tmp/reg-$c.txt" 2>&1
    rc=$?
    cat "$tmp/reg-$c.txt"
    [ $rc -eq 0 ] || fail "$c -A run exited with $rc"
    rows_ok "$tmp/reg-$c.txt" || fail "$c -A: a row with #wrong != 0, or no rows"
    grep -q '^# sizes .*registered (-A)' "$tmp/reg-$c.txt" || fail "$c -A: header says nothing"
    grep -q '"registered": true' "$tmp/reg-$c.json" || fail "$c -A: JSON has no \"registered\": true"
done
grep -q '"registered": false' "$tmp/ar.json" || fail "allreduce JSON: no \"registered\": false"
grep -q '"huge_pages"' "$tmp/ar.json" && fail "allreduce JSON: huge_pages without -H"

echo "=== hcomm-perf -H on 2 ranks"
sh "$here/mpirun.sh" 2 "$perf" -C allreduce -H -b 8 -e 4M -f 64 -n 5 -w 1 -T 0.2 -M \
    -J "$tmp/thp.json" >"$tmp/thp.txt" 2>&1
rc=$?
cat "$tmp/thp.txt"
[ $rc -eq 0 ] || fail "-H run exited with $rc"
rows_ok "$tmp/thp.txt" || fail "-H: a row with #wrong != 0, or no rows"
# 4 MiB of floats, rounded up to 2 MiB: two buffers of 4 MiB
grep -q '^# -H: buffers advised MADV_HUGEPAGE; [0-9.]* of 8.0 MiB in huge pages' "$tmp/thp.txt" ||
    fail "-H: no huge-page line for 2 x 4 MiB in the header"
awk '/"huge_pages"/ { n++; if (match($0, /"bytes": [0-9]+/)) b = substr($0, RSTART + 9, RLENGTH - 9) + 0;
                      else n = -9; if ($0 !~ /"of": 8388608}/ || b > 8388608) n = -9 }
     END { exit n != 1 }' "$tmp/thp.json" || fail "-H JSON: no huge_pages with bytes <= of = 8388608"
if sh "$here/mpirun.sh" 2 "$perf" -H -A >"$tmp/bad.txt" 2>&1; then
    cat "$tmp/bad.txt"
    fail "hcomm-perf -H -A exited with 0"
fi
grep -q -- '-H and -A' "$tmp/bad.txt" || fail "hcomm-perf -H -A: no message naming the options"

echo "=== hcomm-perf with a bad collective"
if sh "$here/mpirun.sh" 2 "$perf" -C nosuch >"$tmp/bad.txt" 2>&1; then
    cat "$tmp/bad.txt"
    fail "hcomm-perf -C nosuch exited with 0"
fi

echo "=== tools/bench.sh --quick"
MPIRUN="$MPIRUN" sh "$top_srcdir/tools/bench.sh" --quick --perf "$perf" --np 2 \
    --colls "allreduce alltoall" --settings default --out "$tmp/bench" >"$tmp/bench.log" 2>&1
rc=$?
cat "$tmp/bench.log"
[ $rc -eq 0 ] || fail "bench.sh --quick exited with $rc"
rep=$tmp/bench/report.md
if [ ! -s "$rep" ]; then
    fail "bench.sh wrote no report"
else
    grep -q '^## Summary' "$rep" || fail "report: no summary"
    grep -q '^### allreduce, 2 ranks' "$rep" || fail "report: no allreduce table"
    grep -q '^### alltoall, 2 ranks' "$rep" || fail "report: no alltoall table"
    if grep -q 'allreduce-large' "$rep"; then
        fail "report: --quick ran the large AllReduce"
    fi
    awk '$2 != 0 { bad = 1 } END { exit bad }' "$tmp/bench/status.txt" ||
        fail "bench.sh status: $(cat "$tmp/bench/status.txt")"
fi

echo "=== tools/bench.sh --report-only, runs at two latencies"
# fake_run FILE LATENCY RATIO8 RATIO16 STEP0 STEP1 [WRONG16]: an hcomm-perf
# JSON of two sizes, with the step times of two local ranks and WRONG16
# wrong results at 16 B (default 0)
fake_run() {
    cat >"$1" <<EOF
{
  "tool": "hcomm-perf",
  "command": ["hcomm-perf"],
  "nranks": 2,
  "line_latency_ns": $2,
  "cpu_step_ns": [$5, $6],
  "cpu_of_rank": [0, 1],
  "collective": "allreduce",
  "results": [
    {"size": 8, "count": 2, "iters": 10, "warmup": 1, "time_us": 1.000, "algbw": 0.0080, "busbw": 0.0080, "wrong": 0, "mpi_time_us": $3, "mpi_busbw": 0.0040, "ratio": $3, "mpi_wrong": 0},
    {"size": 16, "count": 4, "iters": 10, "warmup": 1, "time_us": 1.000, "algbw": 0.0160, "busbw": 0.0160, "wrong": ${7:-0}, "mpi_time_us": $4, "mpi_busbw": 0.0320, "ratio": $4, "mpi_wrong": 0}
  ],
  "avg_busbw": 0.0120
}
EOF
}
ro=$tmp/ro
mkdir -p "$ro"
fake_run "$ro/np2-default-allreduce.r1.json" 60.0 2.0 0.5 0.600 0.550
fake_run "$ro/np2-default-allreduce.r2.json" 300.0 1.5 1.5 0.560 1.400 1
printf 'np2-default-allreduce.r1 0\nnp2-default-allreduce.r2 0\n' >"$ro/status.txt"
echo "mpirun -np 2 hcomm-perf (made up)" >"$ro/commands.txt"
sh "$top_srcdir/tools/bench.sh" --report-only --runs 2 --np 2 --colls allreduce \
    --settings default --no-large --out "$ro" >"$tmp/ro.log" 2>&1
rc=$?
cat "$tmp/ro.log"
[ $rc -eq 0 ] || fail "bench.sh --report-only exited with $rc"
# low class: the run at 60 ns, ratios 2.0 and 0.5 (geomean 1); high: 1.5, 1.5
row='| np2-default-allreduce | 1 (60) | 1.000 | 0.500 (16 B) | 1 (300) | 1.500 | 1.500 (8 B) |'
grep -qF "$row" "$ro/report.md" || fail "report-only: no latency row '$row'"
grep -q '^- core-to-core latency .*run 1: 60-60, run 2: 300-300' "$ro/report.md" ||
    fail "report-only: no per-run latency line"
grep -q '^- vCPU speed .*: run 1: 0.55-0.60, run 2: 0.56-1.40$' "$ro/report.md" ||
    fail "report-only: no per-run vCPU speed line"
# the medians over the two runs: ratio (2.0 + 1.5) / 2 at 8 B
grep -q '^| 8 B | 1.00 | 1.75 | 1.750 |' "$ro/report.md" || fail "report-only: 8 B median row"
# the targets, on those medians (8 B 1.75, 16 B 1.0): both sizes reach
# "time <= 1.0x", only 8 B the stretch (ratio >= 1.25); no other row has data
row='| AllReduce 8 B - 2 KiB, time <= 1.0x | default | ratio >= 1 | 2 of 2 | 1.000 (16 B) | none |'
grep -qF "$row" "$ro/report.md" || fail "report-only: no target row '$row'"
row='| AllReduce 8 B - 2 KiB, stretch: time <= 0.8x | default | ratio >= 1.25 | 1 of 2 | 1.000 (16 B) | 16 B 1.000 |'
grep -qF "$row" "$ro/report.md" || fail "report-only: no target row '$row'"
n=$(sed -n '/^## Against the performance issue/,/^## /p' "$ro/report.md" | grep -c '^| [A-Z4]')
[ "$n" = 2 ] || fail "report-only: $n target rows, expected 2 (the sizes 8 and 16 B of one run)"
# and the results checked: run 2 had one wrong at 16 B
row='| #wrong = 0 in every table | default | no wrong result | 1 of 2 | - | 2 ranks allreduce 16 B |'
grep -qF "$row" "$ro/report.md" || fail "report-only: no #wrong row '$row'"
echo "=== tools/bench.sh --report-only, three runs: medians of numbers, not of text"
# ratios 8.5, 21, 9 at 8 B: median 9, range 8.5-21 (as text "21" < "8.5" < "9")
ro3=$tmp/ro3
mkdir -p "$ro3"
k=0
for r8 in 8.5 21.0 9.0; do
    k=$((k + 1))
    fake_run "$ro3/np2-default-allreduce.r$k.json" 60.0 $r8 1.0 0.600 0.550
    echo "np2-default-allreduce.r$k 0" >>"$ro3/status.txt"
done
echo "mpirun -np 2 hcomm-perf (made up)" >"$ro3/commands.txt"
sh "$top_srcdir/tools/bench.sh" --report-only --runs 3 --np 2 --colls allreduce \
    --settings default --no-large --out "$ro3" >"$tmp/ro3.log" 2>&1 ||
    fail "bench.sh --report-only --runs 3 exited with $?"
grep -q '"size": 8, .*"mpi_time_us": 9\.000, .*"ratio": 9\.0000, "ratio_min": 8\.5000, "ratio_max": 21\.0000' \
    "$ro3/np2-default-allreduce.json" ||
    fail "report-only --runs 3: 8 B not MPI 9 us, ratio 9 (8.5-21): $(grep '"size": 8,' "$ro3/np2-default-allreduce.json")"
echo "=== tools/bench.sh --table (the README's table) of that report"
row='| 2 | AllReduce | 1.00 / 1.75 us | 1.75 / - | - | - | - | - |'
sh "$top_srcdir/tools/bench.sh" --table "$ro" >"$tmp/table.md" 2>&1 ||
    fail "bench.sh --table exited with $?"
cat "$tmp/table.md"
grep -qxF -- "$row" "$tmp/table.md" || fail "--table: no row '$row'"
[ "$(wc -l <"$tmp/table.md")" = 3 ] || fail "--table: not a header, a rule and one row"
echo "=== tools/bench.sh --report-only --compact (what docs/bench/ keeps)"
# a run's stdout and stderr and the floor's stderr beside the two runs
: >"$ro/np2-default-allreduce.r1.txt"
: >"$ro/np2-default-allreduce.r1.err"
: >"$ro/np4-floor.r1.txt"
: >"$ro/np4-floor.r1.err"
sh "$top_srcdir/tools/bench.sh" --report-only --compact --runs 2 --np 2 --colls allreduce \
    --settings default --no-large --out "$ro" >"$tmp/ro.log" 2>&1 ||
    fail "bench.sh --report-only --compact exited with $?"
for f in report.md status.txt commands.txt np2-default-allreduce.json np4-floor.r1.txt; do
    [ -e "$ro/$f" ] || fail "--compact removed $f"
done
left=$(cd "$ro" && ls ./*.r[0-9]*.json ./*.err np2-default-allreduce.r1.txt 2>/dev/null)
[ -z "$left" ] || fail "--compact left $left"
floor=$top_builddir/tools/hcomm-floor
# floor_ok FILE NP: the three medians positive and between their 10th and
# 90th percentiles, the hand-over iff NP > cores
floor_ok() {
    for w in all root MPI_Barrier; do
        awk -v w="$w" '$1 == w { m = w == "MPI_Barrier" ? 2 : NF - 2
                                 ok = $m + 0 > 0 && $(m + 1) <= $m + 0 && $m <= $(m + 2) + 0 }
                       END { exit !ok }' "$1" || echo "no positive median within p10..p90 for $w"
    done
    if [ "$2" -gt "$cores" ]; then
        grep -q '^sched_yield hand-over *[0-9.]* ' "$1" || echo "no hand-over with $2 ranks"
    else
        grep -q '^sched_yield' "$1" && echo "a hand-over with $2 ranks on $cores cores"
    fi
}
for np in 2 3; do
    echo "=== hcomm-floor on $np ranks"
    sh "$here/mpirun.sh" $np "$floor" -n 200 >"$tmp/floor$np.txt" 2>&1
    rc=$?
    cat "$tmp/floor$np.txt"
    [ $rc -eq 0 ] || fail "hcomm-floor on $np ranks exited with $rc"
    why=$(floor_ok "$tmp/floor$np.txt" $np)
    [ -z "$why" ] || fail "hcomm-floor on $np ranks: $why"
done
if sh "$here/mpirun.sh" 2 "$floor" -s -1 >"$tmp/floorbad.txt" 2>&1; then
    cat "$tmp/floorbad.txt"
    fail "hcomm-floor -s -1 exited with 0"
fi

echo "=== tools/bench.sh --quick on 3 ranks (hcomm-floor in the report)"
MPIRUN="$MPIRUN" sh "$top_srcdir/tools/bench.sh" --quick --perf "$perf" --np 3 \
    --colls allreduce --settings default --out "$tmp/bench3" >"$tmp/bench3.log" 2>&1
rc=$?
cat "$tmp/bench3.log"
[ $rc -eq 0 ] || fail "bench.sh --quick --np 3 exited with $rc"
if [ 3 -gt "$cores" ]; then
    grep -q '^## Bare synchronization at 3 ranks' "$tmp/bench3/report.md" ||
        fail "report at 3 ranks on $cores cores: no hcomm-floor section"
    grep -q '^| np3-floor | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |' "$tmp/bench3/report.md" ||
        fail "report at 3 ranks: no hcomm-floor row"
elif grep -q 'Bare synchronization' "$tmp/bench3/report.md"; then
    fail "report: hcomm-floor ran with 3 ranks on $cores cores"
fi

# tune_check NAME COLL CANDIDATES RULE_RE [ARG...]: hcomm-tune ARG... on 2
# ranks over 64K, 256K and 1M with three candidates: exit 0, a time in
# every column, every rule written one of the candidates (RULE_RE: what
# follows "COLL LO-HI 2 "), and hcomm-perf ARG... right with the file
tune_check() {
    name=$1 coll=$2 cands=$3 rule_re=$4
    shift 4
    sh "$here/mpirun.sh" 2 "$tune" "$@" -C "$coll" -a "$cands" -b 64K -e 1M -f 4 -n 3 -w 1 \
        -o "$tmp/$name.txt" >"$tmp/$name.log" 2>&1
    rc=$?
    cat "$tmp/$name.log" "$tmp/$name.txt"
    [ $rc -eq 0 ] || fail "$name: hcomm-tune exited with $rc"
    awk '$1 ~ /^[0-9]+$/ { n++; for (i = 2; i <= 4; i++) if ($i !~ /^[0-9.]+$/) bad++ }
         END { exit !(n == 3 && bad == 0) }' "$tmp/$name.log" ||
        fail "$name: want 3 rows with a time for every candidate"
    grep -v '^#' "$tmp/$name.txt" | grep -qvE "^$coll +[0-9KMB]+-[0-9KMB*]+ 2 ($rule_re)\$" &&
        fail "$name -o: a rule that is not one of the candidates"
    grep -q "^$coll " "$tmp/$name.txt" || fail "$name -o: no rule"
    HCCL_TUNE_FILE="$tmp/$name.txt" sh "$here/mpirun.sh" 2 "$perf" "$@" -C "$coll" -b 64K \
        -e 1M -f 4 -n 3 -w 1 >"$tmp/$name.perf" 2>&1 || fail "$name: hcomm-perf with its file failed"
    rows_ok "$tmp/$name.perf" || fail "$name: hcomm-perf with its file: #wrong != 0, or no rows"
}

echo "=== hcomm-tune on 2 ranks (CMA, DIRECT, DIRECT+nt)"
tune=$top_builddir/tools/hcomm-tune
tune_check tune allgather CMA,DIRECT,DIRECT+nt 'CMA|DIRECT|DIRECT nt'
grep -q '^ *bytes  *CMA  *DIRECT  *DIRECT+nt  *best$' "$tmp/tune.log" ||
    fail "hcomm-tune: no header with the three candidates"
if sh "$here/mpirun.sh" 2 "$tune" -C allgather -a AUTO+nt -b 64K -e 64K -n 1 \
    >"$tmp/tunebad.txt" 2>&1; then
    cat "$tmp/tunebad.txt"
    fail "hcomm-tune -a AUTO+nt exited with 0"
fi

echo "=== hcomm-tune -A on 2 ranks (registered buffers)"
tune_check tunereg allreduce CMA,CMA+nt,DIRECT '(CMA|CMA nt|DIRECT) when=registered' -A
grep -q '^# allreduce on 2 ranks.*registered buffers' "$tmp/tunereg.log" ||
    fail "hcomm-tune -A: the header does not say registered buffers"
sh "$here/mpirun.sh" 2 "$tune" -A -C reducescatter -b 4K -e 4K -n 1 -w 0 \
    >"$tmp/tunereg2.log" 2>&1 || fail "hcomm-tune -A with the default candidates failed"
grep -q ' CMA+nt ' "$tmp/tunereg2.log" || fail "hcomm-tune -A: CMA+nt not among the default candidates"

echo "=== hcomm-tune -H on 2 ranks (buffers in transparent huge pages)"
tune_check tunethp allreduce CMA,DIRECT,DIRECT+nt 'CMA|DIRECT|DIRECT nt' -H
grep -q '^# allreduce on 2 ranks.*buffers advised huge ([0-9.]* of [0-9.]* MiB in huge pages)' \
    "$tmp/tunethp.log" || fail "hcomm-tune -H: the header does not say huge pages"
grep -q '^# written by hcomm-tune .*buffers in transparent huge pages' "$tmp/tunethp.txt" ||
    fail "hcomm-tune -H -o: the file does not say huge pages"
if sh "$here/mpirun.sh" 2 "$tune" -A -H -C allreduce -b 4K -e 4K -n 1 >"$tmp/tunebad.txt" 2>&1; then
    cat "$tmp/tunebad.txt"
    fail "hcomm-tune -A -H exited with 0"
fi

if [ -n "$failed" ]; then
    echo "perf.sh: FAILED:$failed"
    exit 1
fi
echo "perf.sh: all runs passed"
exit 0
