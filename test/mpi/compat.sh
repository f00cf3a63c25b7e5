#!/bin/sh
# test/mpi/compat.sh - an HCCL program built unchanged against hcomm's
# headers (test_compat.c) runs right at 1-5 ranks: as C, as C++, and loading
# the library by HCCL's name (dlopen("libhccl.so"), the build tree's link).
# The C run at 3 ranks also builds a communicator from a rank table.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hc-compat.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=
run() { # NP PROGRAM [RANKTABLE]
    np=$1
    prog=$2
    shift 2
    d=$tmp/$prog.$np
    mkdir -p "$d" || exit 99
    echo "=== $prog on $np ranks"
    LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
        sh "$here/mpirun.sh" "$np" "$prog" "$d" "$@"
    rc=$?
    [ $rc -eq 99 ] && exit 99
    [ $rc -eq 0 ] || failed="$failed $prog@$np(rc=$rc)"
}
ranktable() { # NP: every rank on this machine
    port=$((20000 + $$ % 20000))
    devs=
    i=0
    while [ $i -lt "$1" ]; do
        devs="$devs${devs:+,}{\"device_id\": \"$i\", \"device_ip\": \"192.168.0.$((i + 1))\", \"rank_id\": \"$i\"}"
        i=$((i + 1))
    done
    cat > "$tmp/ranktable.json" <<EOT
{"version": "1.0", "status": "completed", "server_count": "1", "hcomm_port": "$port",
 "server_list": [{"server_id": "127.0.0.1", "device": [$devs]}]}
EOT
}
for np in 1 2 3 4 5; do
    if [ "$np" -eq 3 ]; then
        ranktable 3
        run 3 test_compat "$tmp/ranktable.json"
    else
        run "$np" test_compat
    fi
done
for np in 1 2 4; do
    run "$np" test_compat_cxx
    run "$np" test_compat_dl
done
if [ -n "$failed" ]; then
    echo "compat.sh: FAILED:$failed"
    exit 1
fi
echo "compat.sh: all runs passed"
exit 0
