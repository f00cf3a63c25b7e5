/*
 * coll/reducescatter_hd.c - ReduceScatter HD (H-D_R): recursive halving over
 * the power-of-two core with the pairing fix-up; the reduce-scatter half of
 * Rabenseifner's AllReduce.
 *
 * Cost for blocks of B bytes (N = nB): log2(p2) alpha + ((p2-1)/p2) N beta
 * + ((p2-1)/p2) N gamma, plus alpha + N beta + N gamma (fix-up) and
 * alpha + B beta (the even rank's block back) when n is not a power of two.
 * Fewer steps than RING (log2 p2 instead of n-1), same volume for powers of
 * two.
 *
 * Virtual rank v owns the blocks of the ranks folded into it,
 * [hc_core_first(v), hc_core_first(v+1)): its own, and the even neighbour's
 * for v < rem. The halving (hc_rh_reduce_scatter, canonical order of
 * deterministic mode, coll/prims.h) leaves exactly those reduced in the
 * accumulator, which lives in TMP (n blocks, then a receive area of n blocks
 * for the fix-up's whole vector). Then the even neighbour's block goes back
 * to it and ours is copied to RECV, after every step that still reads SEND
 * (in place, RECV is our block of SEND). Halving rounds go in pieces
 * (coll/prims.h). Tags: 0 fix-up, halving below HC_RH_TAGS, then back.
 */
#include "prims.h"

#include <stdlib.h>

enum { TAG_FIX = 0, TAG_BACK = HC_RH_TAGS };

int hc_reducescatter_hd_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t es = a->esize, count = a->count, blk = count * es;

    s->algo = "reducescatter:HD";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), blk, HC_NODEPS);
        return s->err;
    }
    const uint32_t p2 = hc_pow2_floor(n), rem = n - p2;
    uint64_t *voff = malloc((p2 + 1) * sizeof(uint64_t));
    if (voff == NULL)
        return HCCL_E_MEMORY;
    for (uint32_t v = 0; v <= p2; v++)
        voff[v] = (uint64_t)hc_core_first(v, rem) * count;
    const uint64_t total = (uint64_t)n * blk;
    hc_rh_t h = {.voff = voff, .acc = HC_BUF_TMP, .acc_off = 0, .rcv_off = total,
                 .tag0 = TAG_FIX};
    hc_sched_need_tmp(s, 2 * total);
    const uint32_t from = s->nsteps;
    hc_rh_reduce_scatter(s, a, &h);

    if (h.v < 0) {
        hc_sched_recv(s, r + 1, TAG_BACK, HC_RECV(0), blk, HC_DEPS(h.fix_send));
    } else {
        if (r < 2 * rem) /* the even neighbour's block */
            hc_sched_send(s, r - 1, TAG_BACK, HC_TMP((uint64_t)(r - 1) * blk), blk,
                          HC_DEPS(h.last));
        int32_t j = hc_sched_join(s, from, -1);
        hc_sched_copy(s, HC_RECV(0), HC_TMP((uint64_t)r * blk), blk, HC_DEPS(j));
    }
    free(voff);
    return s->err;
}
