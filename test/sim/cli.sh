#!/bin/sh
# test/sim/cli.sh - tools/hcomm-sim and hcomm-tune --model as commands
# (docs/SCALE.md): a run prints a row per size with the table's choice, a
# tuning file written from the model is read back by the simulator and
# then chooses the fastest at every size, and bad input stops with exit
# status 2 and one line naming what was wrong.
set -u
b=${top_builddir:-.}
sim="$b/tools/hcomm-sim"
tune="$b/tools/hcomm-tune"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name, expected exit status, pattern in the output, command...
    name=$1 want=$2 pat=$3
    shift 3
    "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" != "$want" ] || ! grep -q -- "$pat" "$tmp/out"; then
        echo "FAIL $name: exit $rc (want $want), output:"
        cat "$tmp/out"
        fail=1
    else
        echo "ok   $name"
    fi
}
check "sweep" 0 "^ *4194304 " "$sim" --machine fattree --nodes 4 --racks 2 -b 64K -e 4M -f 4
check "long" 0 "^allreduce 32 1048576 table:" "$sim" --nodes 4 --racks 2 -b 1M -e 1M -l -a auto
check "presets" 0 "fattree" "$sim" --presets
check "help" 0 "usage: hcomm-sim" "$sim" --help
check "bad algorithm" 2 "unknown allreduce algorithm 'NOPE'" "$sim" -a NOPE
check "bad bandwidth" 2 "bad value 'fast' for --nic-bw" "$sim" --nic-bw fast
check "bad machine" 2 "unknown machine 'x'" "$sim" --machine x
check "bad shape" 1 "bad shape" "$sim" --nodes 2 --racks 3
check "topo and shape" 2 "one or the other" "$sim" --topo /dev/null --nodes 2
check "no rank lines" 1 "no rank lines" "$sim" --topo /dev/null
check "bad collective" 2 "bad value 'gather' for -C" "$sim" -C gather
check "step limit" 1 "max-steps" "$sim" --nodes 4 -b 64M -e 64M -a RING --max-steps 10
check "cpu link" 0 "^# CPU link (machine-wide" "$sim" --machine emu --nodes 2 -b 64K -e 64K
check "no cpu link" 0 "machine custom" "$sim" --machine emu --nodes 2 --cpu-bw 0 -b 64K -e 64K
if grep -q "CPU link" "$tmp/out"; then
    echo "FAIL no cpu link: --cpu-bw 0 still has one:"
    cat "$tmp/out"
    fail=1
fi
check "bad cpu-msg" 2 "bad value 'x' for --cpu-msg" "$sim" --machine emu --cpu-msg x
# the model's tuning file, read back: the table's choice is then the fastest
check "tune --model" 0 "  DBTREE$" "$tune" --model --machine fattree --nodes 4 --racks 2 \
    -b 4K -e 64M -f 16 -o "$tmp/m.tune"
grep -q "^allreduce .* 32 " "$tmp/m.tune" || { echo "FAIL tune file:"; cat "$tmp/m.tune"; fail=1; }
HCCL_TUNE_FILE="$tmp/m.tune" "$sim" --machine fattree --nodes 4 --racks 2 -b 4K -e 64M -f 16 \
    >"$tmp/back" 2>&1
if awk '/^ +[0-9]/ { if ($(NF - 3) != $(NF - 1)) bad = 1 } END { exit bad }' "$tmp/back" &&
   [ "$(grep -c "^ *[0-9]" "$tmp/back")" = 5 ]; then
    echo "ok   tuning file read back"
else
    echo "FAIL tuning file read back:"
    cat "$tmp/back"
    fail=1
fi
check "tune --model bad" 2 "unknown collective" "$tune" --model -C gather
exit $fail
