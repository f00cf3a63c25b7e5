#!/bin/sh
# tools/hcomm-sim-validate.sh - hcomm-sim's predictions against measured
# times on the emulated cluster (tools/hcomm-cluster; docs/SCALE.md,
# "Validation").
#
#   tools/hcomm-sim-validate.sh [--build DIR] [--hosts "2 4 8"]
#       [--rates "300mbit 100mbit"] [--max SIZE] [--colls "allreduce broadcast"]
#       [--algos-allreduce LIST] [--algos-broadcast LIST] [--out DIR]
#       [--nic-lat TIME] [--eff F] [--sim-args "ARGS"] [--name C]
#       [--net A.B.C] [--sim-only]
#
# For every host count and rate: an emulated cluster of that many hosts
# (one rank each, --name C --net A.B.C, default hcs 10.213.52), first the
# start cost (hcomm-perf -C sendrecv of 8 B: what a call costs before any
# bytes move), then every algorithm of each collective forced (hcomm-perf
# -a, 64 KB to --max by 4, 3 timed calls after one warm-up, unchecked), and
# hcomm-sim with the emu preset at the same shape, NIC rate = rate x eff
# (default 0.95, the emu preset's), ARGS added (e.g. "--cpu-bw 0": no CPU
# link). Prints per (hosts, rate, collective, algorithm, size) the
# measured and predicted times and the error, then the prediction plus
# the start cost and its error; per (hosts, rate) the medians of both
# errors. The raw outputs stay in --out. Takes the cluster down at the
# end. Needs root and network namespaces (exit 77 otherwise). --sim-only:
# no cluster; compare with the hcomm-perf outputs already in --out
# (another model, the same measurements; start cost 0 where none was
# measured).
set -u
build=_build
hosts="2 4 8"
rates="300mbit 100mbit"
max=64M
colls="allreduce broadcast"
algos_allreduce="RING RD DBTREE TORUS2D HD"
algos_broadcast="BINOMIAL PIPELINE SCATTER_ALLGATHER"
out=sim-validate
nic_lat=
eff=
simargs=
name=hcs
net=10.213.52
simonly=0
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --colls) colls=$2; shift 2 ;;
    --algos-allreduce) algos_allreduce=$2; shift 2 ;;
    --algos-broadcast) algos_broadcast=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --nic-lat) nic_lat=$2; shift 2 ;;
    --eff) eff=$2; shift 2 ;;
    --sim-args) simargs=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --net) net=$2; shift 2 ;;
    --sim-only) simonly=1; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "hcomm-sim-validate: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
cluster="$here/hcomm-cluster --name $name"
perf=$(cd "$build" && pwd)/tools/hcomm-perf
sim=$(cd "$build" && pwd)/tools/hcomm-sim
[ -x "$perf" ] && [ -x "$sim" ] || { echo "hcomm-sim-validate: build $build first" >&2; exit 2; }
mkdir -p "$out"
[ $simonly = 1 ] || trap '$cluster down >/dev/null 2>&1' EXIT INT TERM

# rate "300mbit" -> bits/s
bits() {
    echo "$1" | awk '{ v = $1 + 0; u = tolower($1); sub(/^[0-9.]+/, "", u);
        m = (u ~ /^g/) ? 1e9 : (u ~ /^m/) ? 1e6 : (u ~ /^k/) ? 1e3 : 1; printf "%.0f", v * m }'
}

for h in $hosts; do
    for r in $rates; do
        [ $simonly = 1 ] || $cluster up "$h" --rate "$r" --slots 1 --net "$net" >/dev/null ||
            exit $?
        f="$out/perf-$h-$r-start.txt"
        [ $simonly = 1 ] || nice -n 5 $cluster run -np "$h" --map-by node -x HCCL_DEBUG=ERROR -- \
            "$perf" -C sendrecv -b 8 -e 8 -n 20 -w 3 -c 0 -T 1 >"$f" 2>&1 ||
            echo "hcomm-sim-validate: $h hosts $r start cost failed ($f)" >&2
        start=$(awk '$0 !~ /^#/ && NF >= 9 && $1 == 8 { print $6 }' "$f" 2>/dev/null)
        for c in $colls; do
            if [ "$c" = allreduce ]; then algos=$algos_allreduce; else algos=$algos_broadcast; fi
            for a in $algos; do
                f="$out/perf-$h-$r-$c-$a.txt"
                [ $simonly = 1 ] || nice -n 5 $cluster run -np "$h" --map-by node -x HCCL_DEBUG=ERROR -- \
                    "$perf" -C "$c" -a "$a" -b 64K -e "$max" -f 4 -n 3 -w 1 -c 0 -T 1 \
                    >"$f" 2>&1 || echo "hcomm-sim-validate: $h hosts $r $c $a failed ($f)" >&2
                bw=$(bits "$r")
                set -- --machine emu --nodes "$h" --ranks-per-node 1 --racks 1
                if [ -n "$eff" ]; then
                    set -- "$@" --nic-bw "$(awk -v b="$bw" -v e="$eff" 'BEGIN { printf "%.0f", b * e / 8 }')"
                else
                    set -- "$@" --nic-bw "$(awk -v b="$bw" 'BEGIN { printf "%.0f", b * 0.95 / 8 }')"
                fi
                [ -n "$nic_lat" ] && set -- "$@" --nic-lat "$nic_lat"
                # shellcheck disable=SC2086 # ARGS: several words
                "$sim" "$@" $simargs -C "$c" -a "$a" -b 64K -e "$max" -f 4 -l \
                    >"$out/sim-$h-$r-$c-$a.txt" 2>&1
                awk -v h="$h" -v r="$r" -v c="$c" -v a="$a" -v s="${start:-0}" '
                    FNR == NR { if ($0 !~ /^#/ && NF >= 9) meas[$1] = $6; next }
                    $0 !~ /^#/ && $4 == a && ($3 in meas) {
                        e = ($5 - meas[$3]) / meas[$3]
                        e2 = ($5 + s - meas[$3]) / meas[$3]
                        printf "%s %s %s %s %s %.1f %.1f %+.3f %.1f %+.3f\n", h, r, c, a, $3,
                            meas[$3], $5, e, $5 + s, e2
                    }' "$f" "$out/sim-$h-$r-$c-$a.txt"
            done
        done
    done
done | tee "$out/errors.txt"
echo "# hosts rate median|error| median|error with the start cost| (per-size errors of every algorithm)"
awk 'function med(s,   m, x, i, j, t) { m = split(substr(s, 2), x, " ")
         for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
         return (m % 2) ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2 }
     { k = $1 " " $2; v[k] = v[k] " " ($8 < 0 ? -$8 : $8); w[k] = w[k] " " ($10 < 0 ? -$10 : $10); n[k]++ }
     END { for (k in v) printf "%s %.3f %.3f (%d sizes)\n", k, med(v[k]), med(w[k]), n[k] }' \
    "$out/errors.txt" | sort -n
