#!/usr/bin/python3
"""test/mpi/mpi4py_colls.py - a collective-heavy mpi4py program for the MPI
drop-in (docs/MPI-DROPIN.md), run by test/mpi/mpi4py.sh with and without
libhcomm_mpi.so preloaded.

Every collective of mpi4py that reaches an intercepted MPI call, on numpy
arrays of ten dtypes and several lengths, in place and not, on
COMM_WORLD and on split and duplicated communicators, plus the pickled
object collectives and a few calls that must fall through to MPI (complex
sum, bitwise and). Each result is compared with the value this rank
computes by itself with numpy (every rank can make every rank's input), so
the verdict uses no MPI call: a wrong collective cannot hide its error in
the program's bookkeeping.

Output, one line per rank:

  mpi4py_colls: rank R of N: C checks, F failures, digest D, float-order digest E

D is a SHA-256 of every checked result; inputs are chosen so that each
result is exact (small integers, floats that are multiples of 1/4), so D is
the same with any reduction order and must be equal with and without the
drop-in. E covers a sum of random doubles, whose last bits depend on the
order of the additions: it is printed, not checked. Exit status 1 if this
rank saw a failure.
"""
import hashlib
import sys

import numpy as np
from mpi4py import MPI

world = MPI.COMM_WORLD
RANK = world.Get_rank()
SIZE = world.Get_size()

DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
          np.int64, np.uint64, np.float32, np.float64]
LENGTHS = [1, 7, 1000, 70001]

digest = hashlib.sha256()
checks = 0
failures = []


def check(name, got, want):
    """Compare an array result with its expected value and hash it."""
    global checks
    checks += 1
    got = np.asarray(got)
    want = np.asarray(want)
    digest.update(name.encode())
    digest.update(got.tobytes())
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        failures.append(name)


def check_obj(name, got, want):
    """Compare a pickled-object result with its expected value and hash it."""
    global checks
    checks += 1
    digest.update(name.encode())
    digest.update(repr(got).encode())
    if got != want:
        failures.append(name)


def data(r, n, dt, salt=0):
    """Rank r's input: n exact values of dtype dt (sums of up to 8 fit int8)."""
    i = np.arange(n, dtype=np.int64)
    if np.issubdtype(dt, np.unsignedinteger):
        v = (i * 7 + r * 13 + salt) % 31
    else:
        v = (i * 7 + r * 13 + salt) % 31 - 15
    if np.issubdtype(dt, np.floating):
        return (v * 0.25).astype(dt)
    return v.astype(dt)


def reduced(op, arrays, dt):
    """The exact reduction of arrays (one per rank) by op, in dtype dt."""
    s = np.stack(arrays)
    if op == MPI.SUM:
        return s.sum(axis=0, dtype=dt)
    if op == MPI.PROD:
        return s.prod(axis=0, dtype=dt)
    if op == MPI.MAX:
        return s.max(axis=0)
    return s.min(axis=0)


def opname(op):
    for o, name in ((MPI.SUM, "sum"), (MPI.PROD, "prod"), (MPI.MAX, "max"), (MPI.MIN, "min")):
        if op == o:
            return name
    raise ValueError(op)


def reductions(comm, tag):
    rank, size = comm.Get_rank(), comm.Get_size()
    for dt in DTYPES:
        for n in LENGTHS:
            ops = [MPI.SUM, MPI.MAX, MPI.MIN]
            if dt in (np.int32, np.int64, np.float64):
                ops.append(MPI.PROD)
            for k, op in enumerate(ops):
                name = "%s allreduce %s %s n=%d" % (tag, dt.__name__, opname(op), n)
                if op == MPI.PROD:
                    # values 1 and 2: products of up to 8 ranks are exact
                    ins = [(np.arange(n) % 2 + 1 + (r % 2) * (np.arange(n) % 3 == 0)).astype(dt)
                           for r in range(size)]
                else:
                    ins = [data(r, n, dt, k) for r in range(size)]
                want = reduced(op, ins, dt)
                out = np.zeros(n, dt)
                comm.Allreduce(ins[rank], out, op=op)
                check(name, out, want)
            # in place, and MPI_Reduce to the last rank (in place there)
            ins = [data(r, n, dt, 5) for r in range(size)]
            want = reduced(MPI.SUM, ins, dt)
            buf = ins[rank].copy()
            comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
            check("%s allreduce in place %s n=%d" % (tag, dt.__name__, n), buf, want)
            root = size - 1
            out = np.zeros(n, dt)
            comm.Reduce(ins[rank], out, op=MPI.SUM, root=root)
            if rank == root:
                check("%s reduce %s n=%d" % (tag, dt.__name__, n), out, want)
            buf = ins[rank].copy()
            if rank == root:
                comm.Reduce(MPI.IN_PLACE, buf, op=MPI.MAX, root=root)
            else:
                comm.Reduce(buf, None, op=MPI.MAX, root=root)
            if rank == root:
                check("%s reduce in place max %s n=%d" % (tag, dt.__name__, n), buf,
                      reduced(MPI.MAX, ins, dt))
        # reduce-scatter, equal blocks and unequal counts
        for n in (1, 1000):
            ins = [data(r, size * n, dt, 3) for r in range(size)]
            want = reduced(MPI.SUM, ins, dt)
            out = np.zeros(n, dt)
            comm.Reduce_scatter_block(ins[rank], out, op=MPI.SUM)
            check("%s reduce_scatter_block %s n=%d" % (tag, dt.__name__, n), out,
                  want[rank * n:(rank + 1) * n])
            counts = [n + j for j in range(size)]
            ins = [data(r, sum(counts), dt, 4) for r in range(size)]
            want = reduced(MPI.SUM, ins, dt)
            out = np.zeros(counts[rank], dt)
            comm.Reduce_scatter(ins[rank], out, recvcounts=counts, op=MPI.SUM)
            first = sum(counts[:rank])
            check("%s reduce_scatter %s n=%d" % (tag, dt.__name__, n), out,
                  want[first:first + counts[rank]])


def moves(comm, tag):
    rank, size = comm.Get_rank(), comm.Get_size()
    for dt in (np.uint8, np.int32, np.float64):
        for n in (1, 7, 1000, 70001):
            for root in sorted({0, size - 1}):
                buf = data(root, n, dt, 1) if rank == root else np.zeros(n, dt)
                comm.Bcast(buf, root=root)
                check("%s bcast %s n=%d root=%d" % (tag, dt.__name__, n, root), buf,
                      data(root, n, dt, 1))
            out = np.zeros((size, n), dt)
            comm.Allgather(data(rank, n, dt, 2), out)
            check("%s allgather %s n=%d" % (tag, dt.__name__, n), out,
                  np.stack([data(r, n, dt, 2) for r in range(size)]))
            out = np.zeros((size, n), dt)
            out[rank] = data(rank, n, dt, 3)
            comm.Allgather(MPI.IN_PLACE, out)
            check("%s allgather in place %s n=%d" % (tag, dt.__name__, n), out,
                  np.stack([data(r, n, dt, 3) for r in range(size)]))
            counts = [n + r for r in range(size)]
            out = np.zeros(sum(counts), dt)
            comm.Allgatherv(data(rank, counts[rank], dt, 4), [out, counts])
            check("%s allgatherv %s n=%d" % (tag, dt.__name__, n), out,
                  np.concatenate([data(r, counts[r], dt, 4) for r in range(size)]))
            # block j of rank r's alltoall input is data(r * size + j)
            send = np.stack([data(rank * size + j, n, dt, 5) for j in range(size)])
            out = np.zeros((size, n), dt)
            comm.Alltoall(send, out)
            check("%s alltoall %s n=%d" % (tag, dt.__name__, n), out,
                  np.stack([data(j * size + rank, n, dt, 5) for j in range(size)]))
            # rank r sends (r + j) % 3 + n elements to rank j
            scounts = [(rank + j) % 3 + n for j in range(size)]
            rcounts = [(j + rank) % 3 + n for j in range(size)]
            send = np.concatenate([data(rank * size + j, scounts[j], dt, 6) for j in range(size)])
            out = np.zeros(sum(rcounts), dt)
            comm.Alltoallv([send, scounts], [out, rcounts])
            check("%s alltoallv %s n=%d" % (tag, dt.__name__, n), out,
                  np.concatenate([data(j * size + rank, rcounts[j], dt, 6) for j in range(size)]))
            root = size // 2
            send = np.stack([data(root * size + j, n, dt, 7) for j in range(size)]) \
                if rank == root else None
            out = np.zeros(n, dt)
            comm.Scatter(send, out, root=root)
            check("%s scatter %s n=%d" % (tag, dt.__name__, n), out,
                  data(root * size + rank, n, dt, 7))
            out = np.zeros((size, n), dt) if rank == root else None
            comm.Gather(data(rank, n, dt, 8), out, root=root)
            if rank == root:
                check("%s gather %s n=%d" % (tag, dt.__name__, n), out,
                      np.stack([data(r, n, dt, 8) for r in range(size)]))
    comm.Barrier()


def nonblocking(comm, tag):
    rank, size = comm.Get_rank(), comm.Get_size()
    for n in (7, 70001):
        ins = [data(r, n, np.float64, 9) for r in range(size)]
        red = np.zeros(n, np.float64)
        bc = data(0, n, np.int32, 10) if rank == 0 else np.zeros(n, np.int32)
        ag = np.zeros((size, n), np.int64)
        reqs = [comm.Iallreduce(ins[rank], red, op=MPI.SUM),
                comm.Ibcast(bc, root=0),
                comm.Iallgather(data(rank, n, np.int64, 11), ag)]
        if n > 7:
            while not MPI.Request.Testall(reqs):
                pass
        else:
            MPI.Request.Waitall(reqs)
        check("%s iallreduce n=%d" % (tag, n), red, reduced(MPI.SUM, ins, np.float64))
        check("%s ibcast n=%d" % (tag, n), bc, data(0, n, np.int32, 10))
        check("%s iallgather n=%d" % (tag, n), ag,
              np.stack([data(r, n, np.int64, 11) for r in range(size)]))
        out = np.zeros(n, np.float64)
        comm.Iallreduce(ins[rank], out, op=MPI.MAX).Wait()
        check("%s iallreduce max n=%d" % (tag, n), out, reduced(MPI.MAX, ins, np.float64))


def fallthrough(comm, tag):
    """Calls the drop-in must leave to MPI: a complex sum, a bitwise op."""
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 1000
    ins = [data(r, n, np.float64, 12) + 1j * data(r, n, np.float64, 13) for r in range(size)]
    out = np.zeros(n, np.complex128)
    comm.Allreduce(ins[rank], out, op=MPI.SUM)
    check("%s allreduce complex128" % tag, out, np.stack(ins).sum(axis=0))
    ins = [np.arange(n, dtype=np.int32) * (r + 3) for r in range(size)]
    out = np.zeros(n, np.int32)
    comm.Allreduce(ins[rank], out, op=MPI.BAND)
    want = ins[0].copy()
    for a in ins[1:]:
        want &= a
    check("%s allreduce int32 band" % tag, out, want)


def objects(comm, tag):
    rank, size = comm.Get_rank(), comm.Get_size()
    check_obj("%s obj allreduce" % tag, comm.allreduce(rank + 1, op=MPI.SUM),
              size * (size + 1) // 2)
    check_obj("%s obj allreduce max" % tag, comm.allreduce((rank * 7) % size, op=MPI.MAX),
              max((r * 7) % size for r in range(size)))
    obj = {"name": "hcomm", "ranks": list(range(size)), "x": 2.5} if rank == 0 else None
    check_obj("%s obj bcast" % tag, comm.bcast(obj, root=0),
              {"name": "hcomm", "ranks": list(range(size)), "x": 2.5})
    check_obj("%s obj allgather" % tag, comm.allgather(("r", rank, "x" * rank)),
              [("r", r, "x" * r) for r in range(size)])
    check_obj("%s obj alltoall" % tag, comm.alltoall([rank * 100 + j for j in range(size)]),
              [j * 100 + rank for j in range(size)])
    root = size - 1
    got = comm.gather({"rank": rank, "sq": rank * rank}, root=root)
    if rank == root:
        check_obj("%s obj gather" % tag, got, [{"rank": r, "sq": r * r} for r in range(size)])
    got = comm.scatter([[j] * (j + 1) for j in range(size)] if rank == root else None, root=root)
    check_obj("%s obj scatter" % tag, got, [rank] * (rank + 1))
    got = comm.reduce(rank * 3, op=MPI.SUM, root=0)
    if rank == 0:
        check_obj("%s obj reduce" % tag, got, 3 * size * (size - 1) // 2)


def random_sum():
    """A sum of random doubles: order-dependent in the last bits."""
    n = 100003
    ins = [np.random.default_rng(1000 + r).random(n) for r in range(SIZE)]
    out = np.zeros(n)
    world.Allreduce(ins[RANK], out, op=MPI.SUM)
    global checks
    checks += 1
    if not np.allclose(out, np.stack(ins).sum(axis=0), rtol=1e-12, atol=0):
        failures.append("world allreduce random float64")
    return hashlib.sha256(out.tobytes()).hexdigest()[:16]


def main():
    for comm, tag in ((world, "world"),):
        reductions(comm, tag)
        moves(comm, tag)
        nonblocking(comm, tag)
        fallthrough(comm, tag)
        objects(comm, tag)
    # a reordered split and a dup of it: HcclCommSplit children with the drop-in
    sub = world.Split(RANK % 2, SIZE - RANK)
    dup = sub.Dup()
    for comm, tag in ((sub, "split"), (dup, "dup")):
        reductions(comm, tag) if tag == "split" else moves(comm, tag)
        objects(comm, tag)
    dup.Free()
    sub.Free()
    float_order = random_sum()
    print("mpi4py_colls: rank %d of %d: %d checks, %d failures, digest %s, "
          "float-order digest %s" % (RANK, SIZE, checks, len(failures),
                                     digest.hexdigest()[:16], float_order), flush=True)
    for name in failures[:20]:
        print("mpi4py_colls: rank %d: FAIL: %s" % (RANK, name), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
