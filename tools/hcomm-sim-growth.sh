#!/bin/sh
# tools/hcomm-sim-growth.sh - every algorithm of a collective from 8 to
# 4096 ranks on hcomm-sim's fat-tree preset (docs/SCALE.md, "Growth").
#
#   tools/hcomm-sim-growth.sh [--build DIR] [--out DIR] [-C COLL]
#       [--ranks "8 16 ... 4096"] [--sizes "4K 1M 256M"] [--max-steps N]
#       [--append] [--plot-ranks "8 16 ... 4096"]
#
# 8 ranks per node, 16 nodes per rack (the preset's shape, grown). Writes
# OUT/growth-COLL.txt (hcomm-sim -l lines, with the ranks), per size
# OUT/growth-COLL-SIZE.dat (ranks, then each algorithm's time in us, NaN
# where it cannot run or exceeds --max-steps, then the table's choice's
# time) and OUT/growth-COLL.png (gnuplot, tools/hcomm-sim-growth.gp), and
# prints per size and rank count the table's choice and the fastest.
# --append: add to OUT/growth-COLL.txt instead of starting it again (a
# second run for the largest rank counts, with a lower --max-steps);
# --plot-ranks: the rank counts of the tables and the plot (default: --ranks).
set -u
build=_build
out=docs/scale
coll=allreduce
ranks="8 16 32 64 128 256 512 1024 2048 4096"
sizes="4K 1M 256M"
maxsteps=100000000
append=0
plotranks=
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -C) coll=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --max-steps) maxsteps=$2; shift 2 ;;
    --append) append=1; shift ;;
    --plot-ranks) plotranks=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "hcomm-sim-growth: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
sim=$(cd "$build" && pwd)/tools/hcomm-sim
[ -x "$sim" ] || { echo "hcomm-sim-growth: build $build first" >&2; exit 2; }
mkdir -p "$out"
txt="$out/growth-$coll.txt"
[ $append = 1 ] || : >"$txt"
for p in $ranks; do
    nodes=$(( (p + 7) / 8 )); rpn=$(( p < 8 ? p : 8 )); racks=$(( (nodes + 15) / 16 ))
    for s in $sizes; do
        "$sim" --machine fattree --nodes $nodes --ranks-per-node $rpn --racks $racks \
            -C "$coll" -b "$s" -e "$s" -l --max-steps "$maxsteps" 2>>"$out/growth-$coll.err" |
            grep -v '^#' >>"$txt"
    done
done
# the algorithms that ran somewhere, in the table's order
[ -n "$plotranks" ] || plotranks=$ranks
algos=$("$sim" --machine fattree -C "$coll" -b 4K -e 4K -a all 2>/dev/null |
    awk '/^ +bytes/ { for (i = 2; i <= NF - 3; i++) printf "%s ", $i }')
algos=$(for a in $algos; do awk -v a="$a" '$4 == a { print a; exit }' "$txt"; done | tr '\n' ' ')
for s in $sizes; do
    b=$(echo "$s" | awk '{ v = $1 + 0; u = toupper(substr($1, length($1)));
        m = u == "K" ? 1024 : u == "M" ? 1048576 : u == "G" ? 1073741824 : 1; printf "%.0f", v * m }')
    awk -v b="$b" -v algos="$algos" -v ranks="$plotranks" '
        $3 == b { t[$2 " " $4] = $5; if ($4 ~ /^table:/) { tab[$2] = $5; name[$2] = substr($4, 7) } }
        END {
            na = split(algos, A, " "); nr = split(ranks, R, " ")
            printf "# ranks"; for (i = 1; i <= na; i++) printf " %s", A[i]; print " table table_algo best"
            for (j = 1; j <= nr; j++) {
                p = R[j]; printf "%s", p; best = ""; bt = 0
                for (i = 1; i <= na; i++) {
                    k = p " " A[i]
                    if (k in t) { printf " %s", t[k]; if (best == "" || t[k] + 0 < bt) { best = A[i]; bt = t[k] + 0 } }
                    else printf " NaN"
                }
                printf " %s %s %s\n", (p in tab) ? tab[p] : "NaN", (p in name) ? name[p] : "-", best == "" ? "-" : best
            }
        }' "$txt" >"$out/growth-$coll-$s.dat"
done
if command -v gnuplot >/dev/null; then
    gnuplot -e "datadir='$out'; coll='$coll'; sizes='$sizes'; algos='$algos'; outfile='$out/growth-$coll.png'" \
        "$here/hcomm-sim-growth.gp"
fi
for s in $sizes; do
    echo "# $coll $s: ranks, the table's choice and its time (us), the fastest and its time"
    awk 'NR > 1 { n = split($0, f, " "); min = ""; for (i = 2; i <= n - 3; i++) if (f[i] != "NaN" && (min == "" || f[i] + 0 < min + 0)) min = f[i]
                  printf "%6s %-10s %12s   %-10s %12s\n", f[1], f[n - 1], f[n - 2], f[n], min }' "$out/growth-$coll-$s.dat"
done
