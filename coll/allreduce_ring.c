/*
 * coll/allreduce_ring.c - AllReduce RING: reduce-scatter then allgather
 * around a ring (args->topo->ring, else 0..n-1), 2(n-1) steps.
 *
 * Cost: 2(n-1)(alpha + (N/n) beta) + ((n-1)/n) N gamma for N bytes;
 * bandwidth-optimal, latency linear in n.
 *
 * The vector is cut into n blocks, block j belonging to ring position j;
 * every block is cut into C chunks (hc_ring_nchunks) that travel as
 * separate messages, so that chunk k is reduced while chunk k+1 is on the
 * wire and the next hop can forward chunk k meanwhile.
 *
 * Reduce-scatter, step s (0..n-2), position p: send block p-s, receive
 * block p-s-1 into a TMP slot, RECV[blk] = TMP op SEND[blk]. Block j's
 * partial result starts at position j and accumulates in ring order
 * (((x_j op x_j+1) op x_j+2) ...), so it is the same whatever the timing;
 * it is complete at position j-1 after n-1 steps and then copied around the
 * ring by the allgather (step s: send block p+1-s, receive block p-s into
 * RECV), so every rank ends with the same bits. Out of place, the first
 * reduce touching a block reads SEND directly: no initial copy. In place
 * (SEND == RECV) the same steps work; block p, sent raw at step 0, is only
 * overwritten by the allgather after that send completed.
 *
 * Layout (regular, so dependencies are index arithmetic): for j = s*C + k,
 * reduce-scatter emits SEND, RECV, REDUCE at b+3j.., then the allgather
 * emits SEND, RECV at b2+2j..; zero-length chunks (count < n*C) become
 * NOPs. TMP: HC_RING_SLOTS chunk slots; receive j reuses the slot of
 * receive j-HC_RING_SLOTS after the reduce that read it.
 * Tags: (phase * (n-1) + s) * C + k < 2(n-1)C <= 2^20 (hc_ring_nchunks).
 */
#include "algos.h"

int hc_allreduce_ring_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks;
    const uint64_t es = a->esize, count = a->count;

    s->algo = "allreduce:RING";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), count * es, HC_NODEPS);
        return s->err;
    }
    int64_t pos = hc_ring_pos(a);
    if (pos < 0)
        return HCCL_E_PARA;
    const uint32_t p = (uint32_t)pos;
    const uint32_t next = hc_ring_rank(a, (p + 1) % n);
    const uint32_t prev = hc_ring_rank(a, (p + n - 1) % n);
    const uint64_t maxblk = hc_block_len(count, n, 0);
    const uint32_t C = (uint32_t)hc_ring_nchunks(a, maxblk, 2 * (uint64_t)(n - 1));
    const uint64_t slot = (maxblk + C - 1) / C * es;
    const uint32_t nj = (n - 1) * C; /* (step, chunk) pairs per phase */
    const int32_t b = (int32_t)s->nsteps, b2 = b + 3 * (int32_t)nj;
#define RS_SEND(j) (b + 3 * (int32_t)(j))
#define RS_RECV(j) (b + 3 * (int32_t)(j) + 1)
#define RS_RED(j) (b + 3 * (int32_t)(j) + 2)
#define AG_RECV(j) (b2 + 2 * (int32_t)(j) + 1)

    hc_sched_need_tmp(s, HC_RING_SLOTS * slot);

    /* reduce-scatter */
    for (uint32_t st = 0; st < n - 1; st++) {
        const uint32_t sb = (p + n - st) % n, rb = (p + 2 * n - st - 1) % n;
        const uint64_t s0 = hc_block_start(count, n, sb), sl = hc_block_len(count, n, sb);
        const uint64_t r0 = hc_block_start(count, n, rb), rl = hc_block_len(count, n, rb);
        for (uint32_t k = 0; k < C; k++) {
            const uint32_t j = st * C + k;
            const uint64_t so = (s0 + hc_block_start(sl, C, k)) * es;
            const uint64_t sn = hc_block_len(sl, C, k) * es;
            const uint64_t ro = (r0 + hc_block_start(rl, C, k)) * es;
            const uint64_t rn = hc_block_len(rl, C, k) * es;
            const hc_loc_t tmp = HC_TMP((j % HC_RING_SLOTS) * slot);
            if (st == 0)
                hc_sched_send_or_nop(s, next, j, HC_SEND(so), sn, HC_NODEPS);
            else
                hc_sched_send_or_nop(s, next, j, HC_RECV(so), sn, HC_DEPS(RS_RED(j - C)));
            hc_sched_recv_or_nop(s, prev, j, tmp, rn,
                                 HC_DEPS(j >= HC_RING_SLOTS ? RS_RED(j - HC_RING_SLOTS) : -1));
            /* partial of the earlier ring positions first, then ours */
            hc_sched_reduce_or_nop(s, HC_RECV(ro), tmp, HC_SEND(ro), rn, HC_DEPS(RS_RECV(j)));
        }
    }

    /* allgather */
    for (uint32_t st = 0; st < n - 1; st++) {
        const uint32_t sb = (p + 1 + n - st) % n, rb = (p + n - st) % n;
        const uint64_t s0 = hc_block_start(count, n, sb), sl = hc_block_len(count, n, sb);
        const uint64_t r0 = hc_block_start(count, n, rb), rl = hc_block_len(count, n, rb);
        for (uint32_t k = 0; k < C; k++) {
            const uint32_t j = st * C + k;
            const uint64_t so = (s0 + hc_block_start(sl, C, k)) * es;
            const uint64_t sn = hc_block_len(sl, C, k) * es;
            const uint64_t ro = (r0 + hc_block_start(rl, C, k)) * es;
            const uint64_t rn = hc_block_len(rl, C, k) * es;
            /* block p+1 is final after the last reduce; the others once received */
            const int32_t ready = st == 0 ? RS_RED((n - 2) * C + k) : AG_RECV(j - C);
            hc_sched_send_or_nop(s, next, nj + j, HC_RECV(so), sn, HC_DEPS(ready));
            /* RECV[rb] (block p-st) was sent at reduce-scatter step st (raw
             * SEND[p] at step 0, which aliases it in place): overwrite it
             * only after that send completed */
            hc_sched_recv_or_nop(s, prev, nj + j, HC_RECV(ro), rn, HC_DEPS(RS_SEND(j)));
        }
    }
#undef RS_SEND
#undef RS_RECV
#undef RS_RED
#undef AG_RECV
    return s->err;
}
