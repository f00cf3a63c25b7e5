"""torch.distributed on hcomm against Gloo, side by side in one launch
(docs/TORCH.md). Run under mpirun with /usr/bin/python3 and hcomm_torch on
PYTHONPATH:

  mpirun -np 2 /usr/bin/python3 tools/torch-bench.py allreduce [-b 8] [-e 64M] [-r 5]
  mpirun -np 2 /usr/bin/python3 tools/torch-bench.py ddp [-r 5] [--steps 2]

allreduce: dist.all_reduce of float32 tensors from -b to -e bytes (x8 per
row), on the default hcomm group and on a Gloo group over the same ranks.
Each run times `iters` back-to-back calls (fewer at large sizes) after a
barrier; the time of a run is the slowest rank's; the two backends take
turns run by run; a row shows the median of -r runs per backend, in
microseconds per call, and the ratio gloo/hcomm.

ddp: DDP training steps of two models (see MODELS below) on hcomm
(blocking groups), hcomm in async mode and Gloo, taking turns run by run,
and the same steps without DDP ("local": forward, backward and optimizer
on every rank at once, no communication). A row shows the median step time
of -r runs and the share of it spent in communication, 1 - local / step.
"""
import argparse
import datetime
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

RANK = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("RANK", "0")))
SIZE = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))


def size_arg(s):
    m = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * m[s[-1].upper()] if s[-1].upper() in m else int(s)


def slowest(seconds, gloo):
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=gloo)
    return t.item()


def human(n):
    for u, k in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= k:
            return f"{n // k}{u}"
    return f"{n}"


def bench_allreduce(args, gloo):
    groups = {"hcomm": None, "gloo": gloo}
    if RANK == 0:
        print(f"# all_reduce float32 SUM, {SIZE} ranks, median of {args.r} runs, slowest rank, us/call")
        print(f"# {'bytes':>6} {'iters':>6} {'hcomm':>10} {'gloo':>10} {'gloo/hcomm':>10}")
    sizes = []
    n = args.b
    while n < args.e:
        sizes.append(n)
        n *= 8
    sizes.append(args.e)
    for n in sizes:
        count = max(1, n // 4)
        iters = max(3, min(1000, (64 << 20) // max(n, 1) // 16))
        t = torch.ones(count)
        for g in groups.values():  # warm-up: first touch, connections
            for _ in range(min(iters, 20)):
                dist.all_reduce(t, group=g)
        times = {k: [] for k in groups}
        for _ in range(args.r):
            for name, g in groups.items():
                dist.barrier(group=gloo)
                t0 = time.perf_counter()
                for _ in range(iters):
                    dist.all_reduce(t, group=g)
                times[name].append(slowest(time.perf_counter() - t0, gloo) / iters * 1e6)
        if RANK == 0:
            h = statistics.median(times["hcomm"])
            gl = statistics.median(times["gloo"])
            print(f"  {human(n):>6} {iters:>6} {h:>10.1f} {gl:>10.1f} {gl / h:>10.1f}", flush=True)


# MODELS. The transformer encoder keeps BERT-Large's layer shapes (hidden
# 1024, 16 heads, feed-forward 4096: 12.6 M parameters per layer, 50 MB of
# fp32 gradients) but has 2 layers instead of 24, and one sequence of 16
# tokens per rank, so a step fits these CPUs; the ResNet-like CNN
# has four stages of two residual blocks (16-128 channels) on 32x32 images,
# 16 per rank.
class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b2(self.c2(y)) + self.skip(x))


class ResNetLike(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
        cin = 16
        for cout, stride in ((16, 1), (32, 2), (64, 2), (128, 2)):
            layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
            cin = cout
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(cin, 10)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(1024, 16, 4096, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(1024, 2)

    def forward(self, x):
        return self.head(self.enc(x)[:, 0])


MODELS = {
    "bert-large-2layer": (Encoder, lambda g: torch.randn(1, 16, 1024, generator=g), 2),
    "resnet-like": (ResNetLike, lambda g: torch.randn(16, 3, 32, 32, generator=g), 10),
}


def bench_ddp(args, gloo):
    import hcomm_torch
    opts = hcomm_torch.Options()
    opts.async_collectives = True
    hca = dist.new_group(backend="hcomm", pg_options=opts)
    if RANK == 0:
        print(f"# DDP step time, {SIZE} ranks, median of {args.r} runs of {args.steps} steps, "
              f"slowest rank; comm share = 1 - local/step")
    for mname in args.models.split(","):
        cls, batch, ncls = MODELS[mname]
        torch.manual_seed(0)
        base = cls()
        nparam = sum(p.numel() for p in base.parameters())
        runs = {}
        for name, grp in (("hcomm", None), ("hcomm-async", hca), ("gloo", gloo), ("local", "none")):
            m = cls()
            m.load_state_dict(base.state_dict())
            model = m if grp == "none" else DDP(m, process_group=grp)
            runs[name] = (model, torch.optim.SGD(model.parameters(), lr=0.01))
        g = torch.Generator().manual_seed(RANK)

        def steps(model, opt, k):
            for _ in range(k):
                x = batch(g)
                y = torch.randint(0, ncls, (x.shape[0],), generator=g)
                opt.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                opt.step()

        for model, opt in runs.values():
            steps(model, opt, 1)  # warm-up
        times = {k: [] for k in runs}
        for _ in range(args.r):
            for name, (model, opt) in runs.items():
                dist.barrier(group=gloo)
                t0 = time.perf_counter()
                steps(model, opt, args.steps)
                times[name].append(slowest(time.perf_counter() - t0, gloo) / args.steps * 1e3)
                if args.v and RANK == 0:
                    print(f"  {mname} {name}: {times[name][-1]:.1f} ms/step", flush=True)
        if RANK == 0:
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{mname}: {nparam / 1e6:.1f} M parameters, {nparam * 4 / 2**20:.0f} MB of gradients "
                  f"per step; local (no communication) {med['local']:.1f} ms")
            for k in ("hcomm", "hcomm-async", "gloo"):
                share = max(0.0, 1 - med["local"] / med[k])
                print(f"  {k:<12} step {med[k]:8.1f} ms  comm share {share * 100:5.1f} %  "
                      f"gloo/this {med['gloo'] / med[k]:5.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser(prog="torch-bench.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["allreduce", "ddp"])
    ap.add_argument("-b", type=size_arg, default=8)
    ap.add_argument("-e", type=size_arg, default=64 << 20)
    ap.add_argument("-r", type=int, default=5)
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("-v", action="store_true", help="ddp: print each run's times")
    ap.add_argument("--port", default=os.environ.get("HC_TORCH_PORT", "29561"))
    ap.add_argument("--addr", default=os.environ.get("MASTER_ADDR", "127.0.0.1"),
                    help="rank 0's address for the store (across hosts: rank 0's host)")
    args = ap.parse_args()
    import hcomm_torch  # noqa: F401  (registers "hcomm"; after --help)
    torch.set_num_threads(1)
    dist.init_process_group("hcomm", init_method=f"tcp://{args.addr}:{args.port}", rank=RANK,
                            world_size=SIZE, timeout=datetime.timedelta(seconds=600))
    gloo = dist.new_group(backend="gloo")
    if args.what == "allreduce":
        bench_allreduce(args, gloo)
    else:
        bench_ddp(args, gloo)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
