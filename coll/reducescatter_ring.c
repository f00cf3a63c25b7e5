/*
 * coll/reducescatter_ring.c - ReduceScatter RING: the first half of the ring
 * AllReduce over n blocks of count elements (args->topo->ring, else 0..n-1),
 * n-1 steps, each block in C chunks (hc_ring_nchunks) so that reducing
 * chunk k overlaps the transfer of chunk k+1.
 *
 * Cost: (n-1)(alpha + count beta + count gamma) (count in bytes);
 * bandwidth-optimal.
 *
 * Position p, step s (0..n-2): send the partial of rank ring[p-s-1]'s block,
 * receive the partial of rank ring[p-s-2]'s block into a TMP slot and fold
 * our own contribution in (partial op SEND[blk]): every block accumulates in
 * ring order starting after its owner and ends at its owner after n-1 steps,
 * one fixed expression whatever the timing. Step 0 sends raw SEND.
 *
 * The partial travelling through a rank waits in a staging block D (count
 * elements, chunk k at the same offset in every step): RECV out of place
 * (the last step writes the result there anyway), TMP in place (there RECV
 * aliases our own SEND block, which the last step still reads). The reduce
 * of (s, k) overwrites D[k] only after the send of (s, k), which reads it,
 * has completed. TMP: HC_RING_SLOTS chunk slots (+ D in place); receive j
 * reuses the slot of receive j-HC_RING_SLOTS after the reduce that read it.
 *
 * Layout: for j = s*C + k, SEND, RECV, REDUCE at b+3j... Tags j < (n-1)C.
 */
#include "algos.h"

int hc_reducescatter_ring_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks;
    const uint64_t es = a->esize, count = a->count, blk = count * es;

    s->algo = "reducescatter:RING";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), blk, HC_NODEPS);
        return s->err;
    }
    int64_t pos = hc_ring_pos(a);
    if (pos < 0)
        return HCCL_E_PARA;
    const uint32_t p = (uint32_t)pos;
    const uint32_t next = hc_ring_rank(a, (p + 1) % n);
    const uint32_t prev = hc_ring_rank(a, (p + n - 1) % n);
    const uint32_t C = (uint32_t)hc_ring_nchunks(a, count, n - 1);
    const uint64_t slot = (count + C - 1) / C * es;
    const uint64_t stage = a->in_place ? HC_RING_SLOTS * slot : 0; /* D in TMP */
    const int32_t b = (int32_t)s->nsteps;
#define SEND_AT(j) (b + 3 * (int32_t)(j))
#define RECV_AT(j) (b + 3 * (int32_t)(j) + 1)
#define RED_AT(j) (b + 3 * (int32_t)(j) + 2)

    hc_sched_need_tmp(s, HC_RING_SLOTS * slot + (a->in_place ? blk : 0));
    for (uint32_t st = 0; st < n - 1; st++) {
        const uint64_t sblk = hc_ring_rank(a, (p + 2 * n - st - 1) % n) * blk;
        const uint64_t rblk = hc_ring_rank(a, (p + 2 * n - st - 2) % n) * blk;
        for (uint32_t k = 0; k < C; k++) {
            const uint32_t j = st * C + k;
            const uint64_t off = hc_block_start(count, C, k) * es;
            const uint64_t len = hc_block_len(count, C, k) * es;
            const hc_loc_t tmp = HC_TMP((j % HC_RING_SLOTS) * slot);
            const hc_loc_t d = a->in_place ? HC_TMP(stage + off) : HC_RECV(off);
            if (st == 0)
                hc_sched_send(s, next, j, HC_SEND(sblk + off), len, HC_NODEPS);
            else
                hc_sched_send(s, next, j, d, len, HC_DEPS(RED_AT(j - C)));
            hc_sched_recv(s, prev, j, tmp, len,
                          HC_DEPS(j >= HC_RING_SLOTS ? RED_AT(j - HC_RING_SLOTS) : -1));
            const hc_loc_t dst = st == n - 2 ? HC_RECV(off) : d;
            hc_sched_reduce(s, dst, tmp, HC_SEND(rblk + off), len,
                            HC_DEPS(RECV_AT(j), st > 0 ? SEND_AT(j) : -1));
        }
    }
#undef SEND_AT
#undef RECV_AT
#undef RED_AT
    return s->err;
}
