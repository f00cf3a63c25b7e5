"""A rank that dies: the others' next operation raises (with HCCL's error
text) instead of hanging, blocking and on the stream (async) alike.
test/torch/torch.sh runs it on 2 and 3 ranks; the last rank exits
abruptly after one all_reduce (argument "exit": the survivors learn it
from the broken connection), or stops answering for longer than the
group's timeout (argument "hang": the survivors' deadline, HCCL_E_TIMEOUT,
set from init_process_group's timeout). test/torch/torch.sh's own time
limit catches a hang of the survivors.

Prints "rank R: raised ..." per surviving rank and exits 1 when an
operation did not raise; the survivors then destroy their groups and exit
normally (a hang there fails the run by torch.sh's time limit).
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

import hcomm_torch

RANK = int(os.environ["OMPI_COMM_WORLD_RANK"])
SIZE = int(os.environ["OMPI_COMM_WORLD_SIZE"])
PORT = os.environ.get("HC_TORCH_PORT", "29541")
TIMEOUT = 10
MODE = sys.argv[1] if len(sys.argv) > 1 else "exit"


def main():
    dist.init_process_group("hcomm", init_method=f"tcp://127.0.0.1:{PORT}", rank=RANK,
                            world_size=SIZE, timeout=datetime.timedelta(seconds=TIMEOUT))
    opts = hcomm_torch.Options()
    opts.async_collectives = True
    ag = dist.new_group(backend="hcomm", pg_options=opts)
    t = torch.ones(1000)
    dist.all_reduce(t)
    dist.all_reduce(t, group=ag)
    ok = torch.equal(t, torch.full((1000,), float(SIZE * SIZE)))
    if RANK == SIZE - 1:
        if MODE == "hang":
            time.sleep(TIMEOUT + 8)
        os._exit(0)  # dies: no clean-up, no goodbye
    time.sleep(1)
    failed = 0 if ok else 1
    for name, group in [("blocking", None), ("async", ag)]:
        start = time.monotonic()
        try:
            w = dist.all_reduce(torch.ones(1 << 16), group=group, async_op=True)
            w.wait()
            print(f"rank {RANK}: FAIL: {name} all_reduce with a dead rank returned", flush=True)
            failed += 1
        except RuntimeError as e:
            el = time.monotonic() - start
            good = "hcomm" in str(e) and "HcclResult" in str(e)
            print(f"rank {RANK}: raised ({name}) after {el:.1f} s (timeout {TIMEOUT} s): {e}",
                  flush=True)
            if not good:
                print(f"rank {RANK}: FAIL: the error does not carry HCCL's text", flush=True)
                failed += 1
    print(f"rank {RANK}: {failed} failures", flush=True)
    # the groups come down cleanly after the failure (no hang)
    dist.destroy_process_group()
    print(f"rank {RANK}: groups destroyed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
