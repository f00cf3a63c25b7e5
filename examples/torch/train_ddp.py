"""Data-parallel training on hcomm: a copy-and-adapt example (docs/TORCH.md).

The only hcomm-specific lines are `import hcomm_torch` and the backend name
"hcomm" in init_process_group; the rest is ordinary PyTorch DDP.

Launch with torch's launcher (env://):
    /usr/bin/python3 -m torch.distributed.run --nproc_per_node=2 examples/torch/train_ddp.py
or with Open MPI (rank and size from OMPI_COMM_WORLD_*):
    mpirun -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29500 \\
        /usr/bin/python3 examples/torch/train_ddp.py
"""
import argparse
import datetime
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import hcomm_torch  # noqa: F401  (registers the backend "hcomm")


def launch_env():
    """env:// needs RANK and WORLD_SIZE; under mpirun take them from Open MPI."""
    if "RANK" not in os.environ and "OMPI_COMM_WORLD_RANK" in os.environ:
        os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
        os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    launch_env()
    # the timeout also bounds every collective: a dead or hung rank makes
    # the others raise instead of waiting forever
    dist.init_process_group("hcomm", init_method="env://",
                            timeout=datetime.timedelta(minutes=5))
    rank, size = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(0)  # DDP broadcasts rank 0's parameters anyway
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    ddp = DDP(model)  # gradients are averaged with hcomm AllReduces
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)

    # a synthetic task: the label is the argmax of a fixed projection
    proj = torch.randn(64, 10, generator=torch.Generator().manual_seed(1))
    g = torch.Generator().manual_seed(100 + rank)  # each rank its own shard
    for step in range(args.steps):
        x = torch.randn(args.batch, 64, generator=g)
        y = (x @ proj).argmax(1)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            # the mean loss over ranks, for the log
            l = loss.detach().clone()
            dist.all_reduce(l, op=dist.ReduceOp.AVG)
            if rank == 0:
                print(f"step {step:4d}  loss {l.item():.4f}  ({size} ranks)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
