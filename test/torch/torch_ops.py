"""Every operation of the hcomm backend against Gloo's result on the same
inputs, in the same processes (test/torch/torch.sh runs it on 1-4 ranks).

The default group is hcomm; a Gloo group over the same ranks is the
reference. Inputs depend on rank and index, and are small integers (also
in the floating-point types), so that every partial sum and product is
exact: any reduction order must then give the same bits, and a wrong
offset, a missed block or a wrong operation changes them. Where Gloo lacks
an operation (reduce_scatter, the tensor forms of all_gather and
reduce_scatter, the list form of all_to_all, AVG) the reference is built
from other Gloo operations, or computed from the inputs as stated.
Results are compared with torch.equal (bit for bit for these values).

Prints "rank R of N: C checks, F failures" and exits 1 on any failure.
"""
import datetime
import os
import sys

import torch
import torch.distributed as dist

import hcomm_torch

RANK = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("RANK", "0")))
SIZE = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))
PORT = os.environ.get("HC_TORCH_PORT", "29531")

checks = 0
failures = 0


def check(ok, what):
    global checks, failures
    checks += 1
    if not ok:
        failures += 1
        print(f"rank {RANK}: FAIL: {what}", flush=True)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def expect_error(fn, words, what):
    try:
        fn()
    except (RuntimeError, ValueError, TypeError) as e:
        check(all(w in str(e) for w in words), f"{what}: message {str(e)!r} lacks {words}")
        return
    check(False, f"{what}: no error")


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
DTYPES = FLOATS + INTS
OPS = {"SUM": dist.ReduceOp.SUM, "PRODUCT": dist.ReduceOp.PRODUCT,
       "MIN": dist.ReduceOp.MIN, "MAX": dist.ReduceOp.MAX}


def data(n, dtype, op="SUM", rank=RANK, salt=0):
    """Values of rank `rank`: exact under any order of reduction."""
    i = torch.arange(n, dtype=torch.int64)
    if op == "PRODUCT":
        v = (i * 5 + rank * 3 + salt) % 3  # 0, 1, 2 -> 1, 2, -1 (unsigned: 1, 2, 1)
        v = torch.where(v == 0, torch.ones_like(v), torch.where(v == 1, 2 * torch.ones_like(v),
                        -torch.ones_like(v) if dtype != torch.uint8 else torch.ones_like(v)))
    elif dtype == torch.uint8:
        v = (i * 7 + rank * 13 + salt) % 31
    else:
        v = (i * 7 + rank * 13 + salt) % 31 - 15
    return v.to(dtype)


# Types Gloo does not have: its reference runs in a wider type that holds
# these values exactly (small integers), and the result is narrowed back
WIDE = {torch.bfloat16: torch.float32, torch.int16: torch.int32, torch.bool: torch.uint8}


def wide(t):
    """A copy of t for Gloo (never t itself: Gloo works in place)."""
    return t.to(WIDE.get(t.dtype, t.dtype), copy=True)


def main():
    dist.init_process_group("hcomm", init_method=f"tcp://127.0.0.1:{PORT}", rank=RANK,
                            world_size=SIZE, timeout=datetime.timedelta(seconds=60))
    check(dist.get_backend() == "HCOMM" or dist.get_backend() == "hcomm",
          f"backend name {dist.get_backend()}")
    gloo = dist.new_group(backend="gloo")
    sizes = [1, 1000, 70001]

    # all_reduce: dtype x op x size, and AVG for the floating-point types
    for dt in DTYPES:
        for name, op in OPS.items():
            for n in sizes:
                a = data(n, dt, name)
                b = wide(a)
                dist.all_reduce(a, op=op)
                dist.all_reduce(b, op=op, group=gloo)
                b = b.to(dt)
                check(same(a, b), f"all_reduce {dt} {name} n={n}")
    for dt in FLOATS:
        for n in sizes:
            a = data(n, dt)
            dist.all_reduce(a, op=dist.ReduceOp.AVG)
            # Gloo has no AVG: its SUM, divided as torch divides
            b = wide(data(n, dt))
            dist.all_reduce(b, group=gloo)
            b = b.to(dt) / SIZE
            check(same(a, b), f"all_reduce {dt} AVG n={n}")
    # random values: at 2 ranks a + b is the same in any order, so equal bits
    if SIZE <= 2:
        g = torch.Generator().manual_seed(1234 + RANK)
        for dt in [torch.float32, torch.float64, torch.float16]:
            a = torch.randn(100003, generator=g).to(dt)
            b = a.clone()
            dist.all_reduce(a)
            dist.all_reduce(b, group=gloo)
            check(same(a, b), f"all_reduce random {dt}")
    # every rank holds the same bits: all ranks' results gathered over Gloo
    a = torch.randn(4099, generator=torch.Generator().manual_seed(7 + RANK))
    dist.all_reduce(a)
    got = [torch.empty_like(a) for _ in range(SIZE)]
    dist.all_gather(got, a, group=gloo)
    check(all(same(x, got[0]) for x in got), "all_reduce: the same bits on every rank")

    # non-contiguous tensors are reduced through a contiguous copy, in place
    base = data(3000, torch.float32).view(30, 100)
    a = base.t()
    check(not a.is_contiguous(), "test setup: a transposed view")
    ref = base.clone()
    dist.all_reduce(a)
    dist.all_reduce(ref, group=gloo)
    check(same(base, ref), "all_reduce of a non-contiguous view")
    base = data(64, torch.int32).view(8, 8)
    v = base[:, 1::2]
    ref = base.clone()
    dist.broadcast(v, src=0)
    dist.broadcast(ref, src=0, group=gloo)
    check(same(base[:, 1::2], ref[:, 1::2]) and same(base[:, ::2], data(64, torch.int32).view(8, 8)[:, ::2]),
          "broadcast into a strided view writes only the view")

    # all_reduce_coalesced (HcclAllReduceMulti)
    for dt in [torch.float32, torch.int64, torch.bfloat16]:
        for name, op in OPS.items():
            ts = [data(n, dt, name, salt=k) for k, n in enumerate([5, 1, 3000, 70000])]
            rs = [wide(t) for t in ts]
            dist.all_reduce_coalesced(ts, op=op)
            dist.all_reduce_coalesced(rs, op=op, group=gloo)
            rs = [r.to(dt) for r in rs]
            check(all(same(x, y) for x, y in zip(ts, rs)), f"all_reduce_coalesced {dt} {name}")

    # broadcast from every root, every type (bool too)
    for dt in DTYPES + [torch.bool]:
        for root in range(SIZE):
            for n in [1, 70001]:
                a = data(n, dt if dt != torch.bool else torch.int32).to(dt)
                b = wide(a)
                dist.broadcast(a, src=root)
                dist.broadcast(b, src=root, group=gloo)
                b = b.to(dt)
                check(same(a, b), f"broadcast {dt} root={root} n={n}")

    # reduce to every root (the root's tensor is the result)
    for dt in DTYPES:
        for name, op in OPS.items():
            for root in range(SIZE):
                a = data(4097, dt, name)
                b = wide(a)
                dist.reduce(a, dst=root, op=op)
                dist.reduce(b, dst=root, op=op, group=gloo)
                b = b.to(dt)
                if RANK == root:
                    check(same(a, b), f"reduce {dt} {name} root={root}")
                else:
                    check(same(a, data(4097, dt, name)), f"reduce {dt} {name}: non-root input unchanged")

    # all_gather: list and tensor forms
    for dt in DTYPES + [torch.bool]:
        for n in [1, 30001]:
            x = data(n, dt if dt != torch.bool else torch.int32).to(dt)
            outs = [torch.empty(n, dtype=dt) for _ in range(SIZE)]
            refs = [wide(torch.empty(n, dtype=dt)) for _ in range(SIZE)]
            dist.all_gather(outs, x)
            dist.all_gather(refs, wide(x), group=gloo)
            refs = [r.to(dt) for r in refs]
            check(all(same(o, r) for o, r in zip(outs, refs)), f"all_gather {dt} n={n}")
            flat = torch.empty(SIZE * n, dtype=dt)
            dist.all_gather_into_tensor(flat, x)
            check(same(flat, torch.cat(refs)), f"all_gather_into_tensor {dt} n={n}")

    # reduce_scatter: Gloo has none; the reference is Gloo's all_reduce of
    # the concatenated inputs, of which each rank keeps its block
    for dt in DTYPES:
        for name, op in OPS.items():
            n = 1001
            ins = [data(n, dt, name, salt=r) for r in range(SIZE)]
            whole = torch.cat(ins)
            ref = wide(whole)
            dist.all_reduce(ref, op=op, group=gloo)
            ref = ref.to(dt)
            mine = ref[RANK * n:(RANK + 1) * n]
            out = torch.empty(n, dtype=dt)
            dist.reduce_scatter(out, ins, op=op)
            check(same(out, mine), f"reduce_scatter {dt} {name}")
            out2 = torch.empty(n, dtype=dt)
            dist.reduce_scatter_tensor(out2, whole, op=op)
            check(same(out2, mine), f"reduce_scatter_tensor {dt} {name}")

    # all_to_all_single: even and with split sizes (rows of dim 0)
    for dt in [torch.float32, torch.int8, torch.float16, torch.int64]:
        x = data(SIZE * 6 * 5, dt).view(SIZE * 6, 5)
        y = torch.empty_like(x)
        r = torch.empty_like(x)
        dist.all_to_all_single(y, x)
        dist.all_to_all_single(r, x, group=gloo)
        check(same(y, r), f"all_to_all_single even {dt}")
        # rank i sends (i + j) % 3 + 1 rows to rank j
        ins = [(RANK + j) % 3 + 1 for j in range(SIZE)]
        outs = [(j + RANK) % 3 + 1 for j in range(SIZE)]
        x = data(sum(ins) * 3, dt).view(sum(ins), 3)
        y = torch.empty(sum(outs), 3, dtype=dt)
        r = torch.empty(sum(outs), 3, dtype=dt)
        dist.all_to_all_single(y, x, outs, ins)
        dist.all_to_all_single(r, x, outs, ins, group=gloo)
        check(same(y, r), f"all_to_all_single splits {dt}")
        # the list form; Gloo's reference: all_to_all_single with splits
        xs = [data(ins[j] * 3, dt, salt=j) for j in range(SIZE)]
        ys = [torch.empty(outs[j] * 3, dtype=dt) for j in range(SIZE)]
        dist.all_to_all(ys, xs)
        r = torch.empty(sum(outs) * 3, dtype=dt)
        dist.all_to_all_single(r, torch.cat(xs), [o * 3 for o in outs], [i * 3 for i in ins],
                               group=gloo)
        check(same(torch.cat(ys), r), f"all_to_all list {dt}")

    # gather and scatter from every root
    for dt in [torch.float32, torch.uint8, torch.bfloat16, torch.int64]:
        for root in range(SIZE):
            x = data(2049, dt)
            outs = [torch.empty(2049, dtype=dt) for _ in range(SIZE)] if RANK == root else None
            refs = [wide(torch.empty(2049, dtype=dt)) for _ in range(SIZE)] if RANK == root else None
            dist.gather(x, outs, dst=root)
            dist.gather(wide(x), refs, dst=root, group=gloo)
            if RANK == root:
                refs = [r.to(dt) for r in refs]
                check(all(same(o, r) for o, r in zip(outs, refs)), f"gather {dt} root={root}")
            ins = [data(2049, dt, salt=j) for j in range(SIZE)] if RANK == root else None
            y = torch.empty(2049, dtype=dt)
            r = wide(torch.empty(2049, dtype=dt))
            dist.scatter(y, ins, src=root)
            dist.scatter(r, [wide(i) for i in ins] if ins else None, src=root, group=gloo)
            r = r.to(dt)
            check(same(y, r), f"scatter {dt} root={root}")

    # send / recv around a ring, blocking and isend/irecv; the reference is
    # the sender's own data (its formula), and the same ring on Gloo
    if SIZE > 1:
        nxt, prv = (RANK + 1) % SIZE, (RANK - 1) % SIZE
        for dt in [torch.float32, torch.int16, torch.float64]:
            for n in [1, 100003]:
                x = data(n, dt)
                y = torch.empty(n, dtype=dt)
                reqs = [dist.isend(x, nxt), dist.irecv(y, prv)]
                for q in reqs:
                    q.wait()
                check(same(y, data(n, dt, rank=prv)), f"isend/irecv {dt} n={n}")
                z = torch.empty(n, dtype=dt)
                if RANK % 2 == 0:
                    dist.send(x, nxt)
                    dist.recv(z, prv)
                else:
                    dist.recv(z, prv)
                    dist.send(x, nxt)
                r = wide(torch.empty(n, dtype=dt))
                if RANK % 2 == 0:
                    dist.send(wide(x), nxt, group=gloo)
                    dist.recv(r, prv, group=gloo)
                else:
                    dist.recv(r, prv, group=gloo)
                    dist.send(wide(x), nxt, group=gloo)
                r = r.to(dt)
                check(same(z, r), f"send/recv {dt} n={n}")
        # batch_isend_irecv
        x = data(999, torch.float32)
        y = torch.empty(999)
        ops = [dist.P2POp(dist.isend, x, nxt), dist.P2POp(dist.irecv, y, prv)]
        for q in dist.batch_isend_irecv(ops):
            q.wait()
        check(same(y, data(999, torch.float32, rank=prv)), "batch_isend_irecv")
    dist.barrier()

    # async work: a group in async mode (every collective on the stream)
    opts = hcomm_torch.Options()
    opts.async_collectives = True
    ag = dist.new_group(backend="hcomm", pg_options=opts)
    ts = [data(50000, torch.float32, salt=k) for k in range(8)]
    rs = [t.clone() for t in ts]
    works = [dist.all_reduce(t, group=ag, async_op=True) for t in ts]
    for r in rs:
        dist.all_reduce(r, group=gloo)
    futs = [w.get_future() for w in works[:4]]
    for f in futs:
        f.wait()
    for w in works:
        w.wait()
        check(w.is_completed() and w.is_success(), "async work completed and successful")
    check(all(same(t, r) for t, r in zip(ts, rs)), "async all_reduce results")
    fut_vals = [f.value()[0] for f in futs]
    check(all(same(v, r) for v, r in zip(fut_vals, rs[:4])), "async future values")
    # async allgather (copy back when finished) then a dependent all_reduce
    x = data(777, torch.int32)
    outs = [torch.empty(777, dtype=torch.int32) for _ in range(SIZE)]
    w = dist.all_gather(outs, x, group=ag, async_op=True)
    w.wait()
    refs = [torch.empty(777, dtype=torch.int32) for _ in range(SIZE)]
    dist.all_gather(refs, x, group=gloo)
    check(all(same(o, r) for o, r in zip(outs, refs)), "async all_gather")
    # polling is_completed() until done
    t = data(4096, torch.float64)
    r = t.clone()
    w = dist.all_reduce(t, group=ag, async_op=True)
    while not w.is_completed():
        pass
    dist.all_reduce(r, group=gloo)
    check(same(t, r), "is_completed polling")

    # new_group subsets: the even ranks, and the ranks in reverse
    evens = list(range(0, SIZE, 2))
    sub = dist.new_group(ranks=evens)
    subg = dist.new_group(ranks=evens, backend="gloo")
    if RANK in evens:
        for dt in [torch.float32, torch.int32]:
            a = data(3001, dt)
            b = a.clone()
            dist.all_reduce(a, group=sub)
            dist.all_reduce(b, group=subg)
            check(same(a, b), f"subgroup {evens} all_reduce {dt}")
        x = data(10, torch.int64)
        outs = [torch.empty(10, dtype=torch.int64) for _ in evens]
        dist.all_gather(outs, x, group=sub)
        check(all(same(o, data(10, torch.int64, rank=evens[i])) for i, o in enumerate(outs)),
              "subgroup all_gather: block i from global rank evens[i]")
        a = data(100, torch.float32)
        dist.broadcast(a, src=evens[-1], group=sub)
        check(same(a, data(100, torch.float32, rank=evens[-1])), "subgroup broadcast from a global rank")
    if SIZE > 1:
        rest = list(range(1, SIZE))
        sub2 = dist.new_group(ranks=rest)
        if RANK in rest:
            a = data(500, torch.int64)
            dist.all_reduce(a, group=sub2)
            want = sum(data(500, torch.int64, rank=r) for r in rest)
            check(same(a, want), "subgroup of ranks 1.. all_reduce")

    # clear errors for what hcomm does not do; nothing crashes
    t = torch.ones(4, dtype=torch.int32)
    expect_error(lambda: dist.all_reduce(t, op=dist.ReduceOp.BAND), ["hcomm", "reduce op"],
                 "BAND is refused")
    # complex SUM: torch hands the backend the real view
    a = torch.complex(data(64, torch.float32), data(64, torch.float32, salt=5))
    b = a.clone()
    dist.all_reduce(a)
    dist.all_reduce(b, group=gloo)
    check(same(a, b), "all_reduce complex64 SUM")
    expect_error(lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32), op=dist.ReduceOp.AVG),
                 ["AVG", "floating-point"], "AVG of integers is refused")
    expect_error(lambda: dist.all_reduce(torch.ones(4, dtype=torch.bool)),
                 ["hcomm", "unsupported tensor type"], "bool reduction is refused")
    if SIZE > 1:
        expect_error(lambda: dist.send(torch.ones(2), (RANK + 1) % SIZE, tag=3), ["tags"],
                     "send with a tag is refused")
    expect_error(lambda: dist.all_reduce(torch.ones(2).to_sparse()), ["hcomm", "dense"],
                 "sparse is refused")
    # the group still works after the refusals
    a = data(10, torch.float32)
    b = a.clone()
    dist.all_reduce(a)
    dist.all_reduce(b, group=gloo)
    check(same(a, b), "all_reduce after refused calls")

    dist.barrier()
    print(f"rank {RANK} of {SIZE}: {checks} checks, {failures} failures", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
