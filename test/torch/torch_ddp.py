"""DistributedDataParallel on hcomm against DDP on Gloo: the same small
model (a convolution and two linear layers), the same initial parameters
and the same per-rank batches, N steps of SGD with momentum, then every
parameter compared. test/torch/torch.sh runs it on 2-4 ranks.

At 2 ranks a bucket's sum is a + b on both backends (one addition,
commutative), so the parameters must be equal bit for bit. With more ranks
Gloo and hcomm add the ranks' gradients in different orders; fp32
reassociation of <= 4 summands changes a sum by a few units in the last
place, so after N steps the parameters may differ by about
N * lr * 4 ulp(|grad|): the check is torch.allclose(rtol=1e-5, atol=1e-6),
far above that and far below any real error (a missed or doubled bucket
moves parameters by ~lr * |grad|, about 1e-3 here). At every rank count
the hcomm parameters must also be bit-identical on every rank.

DDP runs on three groups: the default hcomm group (blocking), an hcomm
group in async mode (every bucket on the stream, futures completed by the
backend), and Gloo. Prints "rank R of N: C checks, F failures".
"""
import copy
import datetime
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import hcomm_torch

RANK = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("RANK", "0")))
SIZE = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))
PORT = os.environ.get("HC_TORCH_PORT", "29551")
STEPS = 6

checks = 0
failures = 0


def check(ok, what):
    global checks, failures
    checks += 1
    if not ok:
        failures += 1
        print(f"rank {RANK}: FAIL: {what}", flush=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc1 = nn.Linear(8 * 8 * 8, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


def train(model, group):
    # small buckets: several allreduces per step, issued while backward runs
    ddp = DDP(model, process_group=group, bucket_cap_mb=0.25)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(100 + RANK)
    for _ in range(STEPS):
        x = torch.randn(16, 3, 8, 8, generator=g)
        y = torch.randint(0, 10, (16,), generator=g)
        opt.zero_grad()
        nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


def main():
    dist.init_process_group("hcomm", init_method=f"tcp://127.0.0.1:{PORT}", rank=RANK,
                            world_size=SIZE, timeout=datetime.timedelta(seconds=60))
    gloo = dist.new_group(backend="gloo")
    opts = hcomm_torch.Options()
    opts.async_collectives = True
    hca = dist.new_group(backend="hcomm", pg_options=opts)
    # a different start on every rank: DDP's broadcast from rank 0 must fix it
    torch.manual_seed(RANK)
    base = Net()
    runs = {"hcomm": (copy.deepcopy(base), None), "hcomm-async": (copy.deepcopy(base), hca),
            "gloo": (copy.deepcopy(base), gloo)}
    res = {k: train(m, grp) for k, (m, grp) in runs.items()}
    for name in ["hcomm", "hcomm-async"]:
        for i, (a, b) in enumerate(zip(res[name], res["gloo"])):
            if SIZE <= 2:
                check(torch.equal(a, b), f"{name} parameter {i} equals Gloo's bit for bit")
            else:
                check(torch.allclose(a, b, rtol=1e-5, atol=1e-6),
                      f"{name} parameter {i} close to Gloo's (max diff {(a - b).abs().max()})")
            check(not torch.equal(a, [p for p in base.parameters()][i].detach()),
                  f"{name} parameter {i} was trained")
            every = [torch.empty_like(a) for _ in range(SIZE)]
            dist.all_gather(every, a, group=gloo)
            check(all(torch.equal(e, every[0]) for e in every),
                  f"{name} parameter {i}: the same bits on every rank")
    print(f"rank {RANK} of {SIZE}: {checks} checks, {failures} failures", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
