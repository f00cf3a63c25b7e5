/*
 * coll/reducescatter_ring.c - ReduceScatter RING: the first half of the ring
 * AllReduce over n blocks (args->topo->ring, else 0..n-1), n-1 steps, each
 * block in up to C chunks (hc_ring_nchunks of the largest block) so that
 * reducing chunk k overlaps the transfer of chunk k+1.
 *
 * Blocks: count elements each at b*count, or, with args->scounts (the V
 * form, HcclReduceScatterV), scounts[b] elements at sdispls[b] (coll.h,
 * "Buffer conventions"); scounts is the same on every rank.
 *
 * Cost: (n-1)(alpha + count beta + count gamma) (count in bytes; with
 * uneven blocks each step costs its block's); bandwidth-optimal.
 *
 * Position p, step s (0..n-2): send the partial of rank ring[p-s-1]'s block,
 * receive the partial of rank ring[p-s-2]'s block into a TMP slot and fold
 * our own contribution in (partial op SEND[blk]): every block accumulates in
 * ring order starting after its owner and ends at its owner after n-1 steps,
 * one fixed expression whatever the timing. Step 0 sends raw SEND. The
 * block a rank receives in step s is the one it sends in step s+1.
 *
 * Chunks: the grid of the largest block (M elements): chunk k covers
 * elements [G(k), G(k+1)) with G(k) = hc_block_start(M, C, k), cut at the
 * block's end, so chunk k of every block lies in the same part of the
 * staging block D. A chunk that is empty (a block shorter than G(k) + 1)
 * is a placeholder NOP on both sides of the link (algos.h): the sender and
 * the receiver of a step handle the same block, whose length every rank
 * knows. With equal blocks nothing is empty.
 *
 * The partial travelling through a rank waits in D (M elements, chunk k at
 * G(k) in every step): RECV when it holds M elements and is not in place
 * (the last step writes the result there anyway), else TMP (in place RECV
 * aliases our own SEND block, which the last step still reads). The reduce
 * of (s, k) overwrites D[k] only after the send of (s, k), which reads it,
 * has completed. TMP: HC_RING_SLOTS chunk slots (+ D); receive j reuses the
 * slot of receive j-HC_RING_SLOTS after the reduce that read it.
 *
 * Layout: for j = s*C + k, SEND, RECV, REDUCE at b+3j... Tags j < (n-1)C.
 */
#include "algos.h"

/* Block q: elements and first element. */
static uint64_t blk_count(const hc_coll_args_t *a, uint32_t q)
{
    return a->scounts ? a->scounts[q] : a->count;
}
static uint64_t blk_start(const hc_coll_args_t *a, uint32_t q)
{
    return a->sdispls ? a->sdispls[q] : (uint64_t)q * a->count;
}

/* Chunk k of a block of len elements on the grid of M elements in C
 * chunks: its first element (*off) and length. */
static uint64_t grid_chunk(uint64_t len, uint64_t M, uint32_t C, uint32_t k, uint64_t *off)
{
    const uint64_t g0 = hc_block_start(M, C, k), g1 = g0 + hc_block_len(M, C, k);
    *off = g0;
    return len <= g0 ? 0 : (len < g1 ? len : g1) - g0;
}

int hc_reducescatter_ring_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks;
    const uint64_t es = a->esize;

    s->algo = "reducescatter:RING";
    s->esize = es;
    uint64_t M = 0; /* the largest block */
    for (uint32_t q = 0; q < n; q++)
        if (blk_count(a, q) > M)
            M = blk_count(a, q);
    if (M == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(blk_start(a, 0) * es), M * es, HC_NODEPS);
        return s->err;
    }
    int64_t pos = hc_ring_pos(a);
    if (pos < 0)
        return HCCL_E_PARA;
    const uint32_t p = (uint32_t)pos;
    const uint32_t next = hc_ring_rank(a, (p + 1) % n);
    const uint32_t prev = hc_ring_rank(a, (p + n - 1) % n);
    const uint32_t C = (uint32_t)hc_ring_nchunks(a, M, n - 1);
    const uint64_t slot = (M + C - 1) / C * es;
    const int d_tmp = a->in_place || blk_count(a, a->rank) < M; /* D in TMP */
    const uint64_t stage = HC_RING_SLOTS * slot;
    const int32_t b = (int32_t)s->nsteps;
#define SEND_AT(j) (b + 3 * (int32_t)(j))
#define RECV_AT(j) (b + 3 * (int32_t)(j) + 1)
#define RED_AT(j) (b + 3 * (int32_t)(j) + 2)

    hc_sched_need_tmp(s, stage + (d_tmp ? M * es : 0));
    for (uint32_t st = 0; st < n - 1; st++) {
        const uint32_t sq = hc_ring_rank(a, (p + 2 * n - st - 1) % n);
        const uint32_t rq = hc_ring_rank(a, (p + 2 * n - st - 2) % n);
        const uint64_t sblk = blk_start(a, sq) * es, rblk = blk_start(a, rq) * es;
        for (uint32_t k = 0; k < C; k++) {
            const uint32_t j = st * C + k;
            uint64_t off;
            const uint64_t slen = grid_chunk(blk_count(a, sq), M, C, k, &off) * es;
            const uint64_t rlen = grid_chunk(blk_count(a, rq), M, C, k, &off) * es;
            off *= es;
            const hc_loc_t tmp = HC_TMP((j % HC_RING_SLOTS) * slot);
            const hc_loc_t d = d_tmp ? HC_TMP(stage + off) : HC_RECV(off);
            if (st == 0)
                hc_sched_send_or_nop(s, next, j, HC_SEND(sblk + off), slen, HC_NODEPS);
            else
                hc_sched_send_or_nop(s, next, j, d, slen, HC_DEPS(RED_AT(j - C)));
            hc_sched_recv_or_nop(s, prev, j, tmp, rlen,
                                 HC_DEPS(j >= HC_RING_SLOTS ? RED_AT(j - HC_RING_SLOTS) : -1));
            const hc_loc_t dst = st == n - 2 ? HC_RECV(off) : d;
            hc_sched_reduce_or_nop(s, dst, tmp, HC_SEND(rblk + off), rlen,
                                   HC_DEPS(RECV_AT(j), st > 0 ? SEND_AT(j) : -1));
        }
    }
#undef SEND_AT
#undef RECV_AT
#undef RED_AT
    return s->err;
}
