#!/bin/sh
# The fast lane's A/B (docs/PERFORMANCE.md, "The tiny call inline"): the
# build before it (c6d288d, /tmp/build_base) and after it (/tmp/build),
# alternating launches; pp = the core-to-core ping-pong of /tmp/exp/pp.c
# (one way, ns) before each set.
d=$(dirname "$0")
for set in "2 default 3 allreduce 2048" "2 tuned 3 allreduce 2048" \
           "2 default 3 broadcast 512" "4 tuned 3 broadcast 512" "4 default 3 allreduce 512"; do
    echo "## ab.sh $set ($(/tmp/exp/pp 0))"
    sh "$d/ab.sh" $set
done
