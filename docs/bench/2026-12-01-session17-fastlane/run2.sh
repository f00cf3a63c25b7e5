#!/bin/sh
# The generic fast lane (58447b0, /tmp/build) against the build before the
# fast lane (c6d288d, /tmp/build_base): alternating launches of
# hcomm-perf -b 8 -e 512 -M (ab2.sh); pp = /tmp/exp/pp.c's one-way
# core-to-core latency before each set.
d=$(dirname "$0")
for set in "2 default 3 allgather 512" "2 default 3 reducescatter 512" \
           "2 default 3 alltoall 512" "2 default 2 allreduce 512" "4 tuned 3 broadcast 256"; do
    echo "## ab2.sh /tmp/build_base /tmp/build $set ($(/tmp/exp/pp 0))"
    sh "$d/ab2.sh" /tmp/build_base /tmp/build $set
done
