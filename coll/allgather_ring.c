/*
 * coll/allgather_ring.c - AllGather RING: n-1 steps around a ring
 * (args->topo->ring, else 0..n-1); at step s, position p forwards the block
 * of rank ring[p-s] and receives that of rank ring[p-s-1] into RECV.
 * Blocks travel in C chunks (hc_ring_nchunks) so that a rank forwards
 * chunk k while chunk k+1 is still arriving.
 *
 * Cost: (n-1)(alpha + count beta) (count in bytes); bandwidth-optimal.
 *
 * Step 0 sends our block from SEND (in place it is already RECV's block);
 * out of place a local COPY puts it into RECV as well. Every receive lands
 * at its final place and is posted at once; the send of (s, k) waits for
 * the receive of (s-1, k). Layout: COPY (out of place), then SEND, RECV at
 * b+2j.. for j = s*C + k. Tags j < (n-1)C. No TMP.
 */
#include "algos.h"

int hc_allgather_ring_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks;
    const uint64_t es = a->esize, count = a->count, blk = count * es;

    s->algo = "allgather:RING";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (!a->in_place)
        hc_sched_copy(s, HC_RECV(a->rank * blk), HC_SEND(0), blk, HC_NODEPS);
    if (n == 1)
        return s->err;
    int64_t pos = hc_ring_pos(a);
    if (pos < 0)
        return HCCL_E_PARA;
    const uint32_t p = (uint32_t)pos;
    const uint32_t next = hc_ring_rank(a, (p + 1) % n);
    const uint32_t prev = hc_ring_rank(a, (p + n - 1) % n);
    const uint32_t C = (uint32_t)hc_ring_nchunks(a, count, n - 1);
    const int32_t b = (int32_t)s->nsteps;
#define RECV_AT(j) (b + 2 * (int32_t)(j) + 1)

    for (uint32_t st = 0; st < n - 1; st++) {
        const uint64_t sblk = hc_ring_rank(a, (p + n - st) % n) * blk;
        const uint64_t rblk = hc_ring_rank(a, (p + 2 * n - st - 1) % n) * blk;
        for (uint32_t k = 0; k < C; k++) {
            const uint32_t j = st * C + k;
            const uint64_t off = hc_block_start(count, C, k) * es;
            const uint64_t len = hc_block_len(count, C, k) * es;
            if (st == 0)
                hc_sched_send(s, next, j, HC_SEND(off), len, HC_NODEPS);
            else
                hc_sched_send(s, next, j, HC_RECV(sblk + off), len, HC_DEPS(RECV_AT(j - C)));
            hc_sched_recv(s, prev, j, HC_RECV(rblk + off), len, HC_NODEPS);
        }
    }
#undef RECV_AT
    return s->err;
}
