"""test/torch/torch_launch.py - run by torchrun (python3 -m torch.distributed.run):
the hcomm backend from env:// with torchrun's RANK/WORLD_SIZE/MASTER_*; an
all_reduce, a broadcast and a subgroup all_reduce checked against values
computed here. Exit 0 when every rank's results are right."""
import os
import sys

import torch
import torch.distributed as dist
import hcomm_torch  # noqa: F401  registers "hcomm"

if "TORCHELASTIC_RUN_ID" not in os.environ:
    sys.exit("torch_launch.py: not started by torchrun (no TORCHELASTIC_RUN_ID)")
dist.init_process_group("hcomm", init_method="env://")
rank, size = dist.get_rank(), dist.get_world_size()
assert rank == int(os.environ["RANK"]) and size == int(os.environ["WORLD_SIZE"])
bad = 0

t = torch.arange(7, dtype=torch.float64) + rank
dist.all_reduce(t)
want = torch.arange(7, dtype=torch.float64) * size + size * (size - 1) / 2
bad += int(not torch.equal(t, want))

b = torch.full((5,), float(rank), dtype=torch.float32)
dist.broadcast(b, src=size - 1)
bad += int(not torch.equal(b, torch.full((5,), float(size - 1))))

evens = list(range(0, size, 2))
g = dist.new_group(evens)
if rank in evens:
    s = torch.tensor([rank + 1], dtype=torch.int64)
    dist.all_reduce(s, group=g)
    bad += int(s.item() != sum(r + 1 for r in evens))

dist.barrier()
print(f"torch_launch.py: rank {rank} of {size}: {bad} wrong", flush=True)
dist.destroy_process_group()
sys.exit(1 if bad else 0)
