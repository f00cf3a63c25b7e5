#!/bin/sh
# tools/trace-merge.sh - merge the per-rank timelines that hcomm writes
# (HCCL_TRACE_FILE=/path/trace.%r.json) into one Chrome trace, viewable in
# https://ui.perfetto.dev or chrome://tracing: each rank is a process, its
# streams, transfers and threads are its tracks.
#
#   sh tools/trace-merge.sh [-o merged.json] trace.0.json trace.1.json ...
#
# Time stamps become microseconds since the earliest event of all files
# (they are CLOCK_REALTIME in the inputs, so ranks on one host line up
# exactly, across hosts as well as their clocks agree). Other files in the
# same format (one event object per line, e.g. the compute phases that
# examples/overlap writes) can be merged too. POSIX sh and awk only.
set -u
out=
usage() {
    echo "usage: sh trace-merge.sh [-o OUT.json] FILE..." >&2
    exit 2
}
case ${1:-} in
-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
while getopts o: opt; do
    case $opt in
    o) out=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
for f in "$@"; do
    [ -r "$f" ] || { echo "trace-merge.sh: cannot read $f" >&2; exit 1; }
done
if [ -n "$out" ]; then
    exec >"$out" || exit 1
fi
# pass 1 finds the earliest time stamp, pass 2 shifts and prints
awk '
function ev(line) { return line ~ /^\{"ph":/ }
pass == 1 {
    if (ev($0) && match($0, /"ts":[0-9.]+/)) {
        t = substr($0, RSTART + 5, RLENGTH - 5) + 0
        if (!have || t < tmin) { tmin = t; have = 1 }
    }
    next
}
pass == 2 {
    if (!ev($0))
        next
    line = $0
    sub(/,[ \t\r]*$/, "", line)
    if (match(line, /"ts":[0-9.]+/)) {
        t = substr(line, RSTART + 5, RLENGTH - 5) + 0
        line = substr(line, 1, RSTART - 1) sprintf("\"ts\":%.3f", t - tmin) \
               substr(line, RSTART + RLENGTH)
    }
    if (n++ == 0)
        printf "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"merged_files\":%d,\"t0_us\":%.3f},\n\"traceEvents\":[\n%s", nfiles, tmin, line
    else
        printf ",\n%s", line
}
END {
    if (n == 0)
        printf "{\"traceEvents\":[\n"
    printf "\n]}\n"
}' nfiles=$# pass=1 "$@" pass=2 "$@"
