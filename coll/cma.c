/*
 * coll/cma.c - single-copy algorithms for one host (CMA): a rank reads
 * what it needs straight out of the peers' own buffers with the kernel's
 * cross-memory attach (process_vm_readv; HC_STEP_READ), or writes into
 * theirs (process_vm_writev; HC_STEP_WRITE), so every byte that changes
 * rank is copied once, where the DIRECT algorithms copy it twice (into the
 * owner's staging, out of it). Shared staging only carries the flags: IN
 * ("my buffers' addresses are up", which the executor stores before any
 * flag, coll.h HC_SEG_ADDR) and OUT ("done with your buffers"); a rank
 * returns only once every peer's OUT is up, so its buffers stay valid
 * while peers read or write them.
 *
 * Where it pays: the reader's copy is a system call that pins the
 * source pages, about 1-2 us of fixed cost plus a copy at the kernel's
 * speed, against two copies through staging whose lines move between the
 * cores twice. On the Intel machine of docs/PERFORMANCE.md ("Single-copy
 * reads") it beat the staging path from 16-64 KiB; the built-in table
 * uses it there only (src/comm/tune.c, when=intel).
 *
 * Availability: args->cma, which src/comm/shm.c sets when every rank could read
 * every other's memory at setup (ptrace rules permitting).
 */
#include <stdlib.h>

#include "shm_util.h"

enum { F_IN = 0, F_OUT = 1 };

/* The start every CMA schedule shares: the guard (our flags' half is free
 * of operation e-2's readers), then IN. */
static int32_t begin(hc_sched_t *s)
{
    hc_sched_need_seg(s, HC_SHM_FLAG(F_OUT + 1)); /* every rank takes an epoch */
    s->exposes = 1;
    const int32_t g = hc_shm_guard(s);
    return hc_sched_publish(s, HC_SHM_FLAG(F_IN), 1, HC_DEPS(g));
}

/* ... and the end: OUT once our reads (or writes) are done, then every
 * peer's OUT (the step returned). */
static int32_t end(hc_sched_t *s, const int32_t *reads, uint32_t nreads)
{
    const int32_t j = hc_sched_nop(s, reads, nreads);
    const int32_t out = hc_sched_publish(s, HC_SHM_FLAG(F_OUT), 1, HC_DEPS(j));
    int32_t w[2];
    hc_shm_wait_others(s, HC_SHM_FLAG(F_OUT), 1, 0, HC_DEPS(out), w);
    return w[0];
}

const char *hc_cma_usable(const hc_coll_args_t *a)
{
    const char *why = hc_shm_usable(a);
    if (why == NULL && a->nranks > 1 && !a->cma)
        why = "no single-copy reads between the ranks (process_vm_readv refused at setup)";
    if (why == NULL && a->iov)
        why = "buffers given as a scatter/gather list";
    return why;
}

/* AllReduce at 2 ranks: each rank reduces half of the vector, chunk by
 * chunk: it reads the peer's SEND chunk (into RECV, or in place into a
 * scratch chunk), folds its own SEND chunk in while that is in cache, and
 * writes the result into the peer's RECV (pushing it from cache was
 * 1.1-1.5x faster than the peer pulling it out of ours at 32 KiB - 32 MiB,
 * docs/PERFORMANCE.md). In place, the chunk we write into the peer is the
 * one we read from it just before, which only we touch. Every element is
 * folded once, in rank order, so both ranks hold the same bits. OUT then
 * says "done with your buffers" both ways.
 *
 * On a communicator with registered buffers (HcclCommRegister) each chunk
 * is one HC_STEP_XREDUCE: where both of the peer's buffers are registered
 * and mapped here, the fold reads the two SENDs and writes the two RECVs
 * with loads and stores, each byte once (docs/PERFORMANCE.md, "Registered
 * buffers"); elsewhere the step does what the three steps above do. */
#define AR_CHUNK (256u << 10)

/* The chunk loop both 2-rank folds share: our RECV from recv0 and our
 * SEND from send0, bl bytes. steps 1: READ, REDUCE, WRITE per chunk (the
 * AllReduce without registrations); else one XREDUCE per chunk with these
 * flags (0: both RECVs, HC_XREDUCE_OWN: ours only). */
static int pair_fold(const hc_coll_args_t *a, hc_sched_t *s, uint64_t recv0, uint64_t send0,
                     uint64_t bl, int steps, uint32_t flags)
{
    const uint32_t peer = 1 - a->rank;
    const uint64_t es = a->esize;
    uint64_t ce = (a->chunk_bytes ? a->chunk_bytes : AR_CHUNK) / es * es;
    if (ce == 0)
        ce = es;
    if (a->in_place)
        hc_sched_need_tmp(s, ce < bl ? ce : bl);
    int32_t *done = malloc((bl / ce + 2) * sizeof(int32_t));
    if (done == NULL)
        return HCCL_E_MEMORY;
    const int32_t in = begin(s);
    const int32_t wi = hc_sched_wait(s, peer, HC_SHM_FLAG(F_IN), 1, 0, HC_NODEPS);
    int32_t last = -1;
    uint32_t k = 0;
    for (uint64_t o = 0; o < bl; o += ce) {
        const uint64_t len = bl - o > ce ? ce : bl - o;
        const hc_loc_t mine = HC_RECV(recv0 + o), own = HC_SEND(send0 + o);
        if (!steps) { /* one step: loads and stores where mapped (coll.h) */
            done[k++] = last = hc_sched_xreduce(s, mine, peer, own, own, len, flags,
                                                HC_DEPS(wi, in, last));
            continue;
        }
        const hc_loc_t theirs = a->in_place ? HC_TMP(0) : mine;
        const int32_t r = hc_sched_read(s, theirs, peer, own, len, HC_DEPS(wi, in, last));
        /* rank order: rank 0's operand first */
        const int32_t f = a->rank == 0 ? hc_sched_reduce(s, mine, own, theirs, len, HC_DEPS(r))
                                       : hc_sched_reduce(s, mine, theirs, own, len, HC_DEPS(r));
        done[k++] = last = hc_sched_write(s, peer, mine, mine, len, HC_DEPS(f));
    }
    end(s, done, k);
    free(done);
    return s->err;
}

int hc_allreduce_cma_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint64_t es = a->esize, count = a->count;
    s->algo = "allreduce:CMA";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (a->nranks == 1) {
        hc_sched_copy(s, HC_RECV(0), HC_SEND(0), count * es, HC_NODEPS);
        return s->err;
    }
    if (!a->cma || a->nranks != 2)
        return HCCL_E_PARA;
    const uint64_t b0 = hc_block_start(count, 2, a->rank) * es;
    return pair_fold(a, s, b0, b0, hc_block_len(count, 2, a->rank) * es, !a->registered, 0);
}

/* ReduceScatter at 2 ranks: each rank folds its own block, chunk by
 * chunk, with the peer's SEND block for it: one XREDUCE step per chunk
 * that stores into our RECV only (with registered buffers, loads from the
 * peer's SEND; else a READ into RECV, in place into a scratch chunk, and
 * the fold). In place RECV is our block of SEND, which the peer never
 * reads. OUT then says "done with your buffers". */
int hc_reducescatter_cma_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint64_t bl = a->count * a->esize;
    s->algo = "reducescatter:CMA";
    s->esize = a->esize;
    if (bl == 0)
        return HCCL_SUCCESS;
    if (a->nranks == 1) {
        hc_sched_copy(s, HC_RECV(0), HC_SEND(0), bl, HC_NODEPS);
        return s->err;
    }
    if (!a->cma || a->nranks != 2)
        return HCCL_E_PARA;
    return pair_fold(a, s, 0, a->rank * bl, bl, 0, HC_XREDUCE_OWN);
}

const char *hc_allreduce_cma_usable(const hc_coll_args_t *a)
{
    const char *why = hc_cma_usable(a);
    if (why == NULL && a->nranks > 2)
        why = "more than 2 ranks";
    return why;
}

/* AllGather and AlltoAll: our own block to RECV, and from every peer q its
 * SEND block for us (AllGather: its only block; AlltoAll: block `me`) into
 * RECV block q. An in-place AlltoAll's reads land in scratch and move to
 * RECV once every peer is done: a peer may still read the block we would
 * overwrite (an in-place AllGather reads and writes different blocks). */
static int blocks(const hc_coll_args_t *a, hc_sched_t *s, int a2a)
{
    const uint32_t n = a->nranks, me = a->rank;
    const uint64_t blk = a->count * a->esize;
    const uint64_t from = a2a ? me * blk : 0; /* where our block is in a SEND */
    const int scratch = a2a && a->in_place;
    s->esize = a->esize;
    if (blk == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        hc_sched_copy(s, HC_RECV(0), HC_SEND(0), blk, HC_NODEPS);
        return s->err;
    }
    if (!a->cma)
        return HCCL_E_PARA;
    int32_t *reads = malloc(n * sizeof(int32_t));
    if (reads == NULL)
        return HCCL_E_MEMORY;
    if (scratch)
        hc_sched_need_tmp(s, n * blk);
    const int32_t in = begin(s);
    uint32_t k = 0;
    for (uint32_t d = 1; d < n; d++) {
        const uint32_t q = (me + d) % n;
        int32_t w = hc_sched_wait(s, q, HC_SHM_FLAG(F_IN), 1, 0, HC_NODEPS);
        reads[k++] = hc_sched_read(s, scratch ? HC_TMP(q * blk) : HC_RECV(q * blk), q,
                                   HC_SEND(from), blk, HC_DEPS(w, in));
    }
    hc_sched_copy(s, HC_RECV(me * blk), HC_SEND(from), blk, HC_NODEPS);
    const int32_t all = end(s, reads, k);
    for (uint32_t q = 0; scratch && q < n; q++)
        if (q != me)
            hc_sched_copy(s, HC_RECV(q * blk), HC_TMP(q * blk), blk, HC_DEPS(all));
    free(reads);
    return s->err;
}

int hc_allgather_cma_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    s->algo = "allgather:CMA";
    return blocks(a, s, 0);
}

int hc_alltoall_cma_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    s->algo = "alltoall:CMA";
    return blocks(a, s, 1);
}

/* The root's share of a Broadcast: it writes the tail of the buffer into
 * every reader while the readers read the head out of its buffer, so that
 * both sides copy at once; 1/n of the buffer each balances the root's n-1
 * writes against a reader's read. Below SPLIT_MIN the extra wait costs
 * more than the halved copy. */
#define SPLIT_MIN (16u << 10)

/* Broadcast: every reader copies the root's buffer; the root writes a
 * share of it into each reader. */
int hc_bcast_cma_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, root = a->root;
    const uint64_t es = a->esize, bytes = a->count * es;
    s->algo = "broadcast:CMA";
    s->esize = es;
    if (bytes == 0 || n == 1)
        return HCCL_SUCCESS;
    if (!a->cma)
        return HCCL_E_PARA;
    const uint64_t tail = bytes >= SPLIT_MIN ? a->count / n * es : 0;
    const uint64_t head = bytes - tail;
    const int32_t in = begin(s);
    int32_t w[2];
    if (a->rank == root) {
        if (tail == 0) {
            hc_shm_wait_others(s, HC_SHM_FLAG(F_OUT), 1, 0, HC_DEPS(in), w);
            return s->err;
        }
        int32_t *writes = malloc(n * sizeof(int32_t));
        if (writes == NULL)
            return HCCL_E_MEMORY;
        uint32_t k = 0;
        for (uint32_t d = 1; d < n; d++) {
            const uint32_t q = (root + d) % n;
            int32_t wq = hc_sched_wait(s, q, HC_SHM_FLAG(F_IN), 1, 0, HC_NODEPS);
            writes[k++] = hc_sched_write(s, q, HC_RECV(head), HC_RECV(head), tail, HC_DEPS(wq, in));
        }
        end(s, writes, k);
        free(writes);
        return s->err;
    }
    int32_t wr = hc_sched_wait(s, root, HC_SHM_FLAG(F_IN), 1, 0, HC_NODEPS);
    int32_t r = hc_sched_read(s, HC_RECV(0), root, HC_RECV(0), head, HC_DEPS(wr));
    int32_t out = hc_sched_publish(s, HC_SHM_FLAG(F_OUT), 1, HC_DEPS(r, in));
    if (tail) /* the root is done writing into our buffer */
        hc_sched_wait(s, root, HC_SHM_FLAG(F_OUT), 1, 0, HC_DEPS(out));
    return s->err;
}
