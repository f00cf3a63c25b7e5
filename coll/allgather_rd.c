/*
 * coll/allgather_rd.c - AllGather RD: recursive doubling over the
 * power-of-two core, with the pairing fix-up for non-powers of two.
 *
 * Cost for blocks of B bytes (N = nB): log2(p2) alpha + ((n-1)/n) N beta
 * for powers of two; otherwise 2 more steps: alpha + B beta in (the even
 * rank's block to its odd neighbour) and alpha + N beta out (the result
 * back). Fewer steps than RING (log2 instead of n-1), same volume.
 *
 * Ranks 2k (k < rem) hand their block to 2k+1 and sit out; virtual rank v
 * then holds the blocks of the ranks folded into it, [hc_core_first(v),
 * hc_core_first(v+1)), and in the round of mask 2^i (ascending) exchanges
 * the blocks of its aligned group of 2^i virtual ranks with the partner
 * group's, a contiguous range of RECV both ways. Every message goes from
 * RECV to its final place in RECV; a send waits for every receive before
 * it (its range covers them all). The odd neighbour finally sends the even
 * rank everything but its own block (two messages). Out of place, our block
 * is first copied from SEND into RECV. Tags: 0 fix-up in, 1 + round,
 * 60 and 61 result out.
 */
#include "prims.h"

enum { TAG_IN = 0, TAG_OUT = 60 };

int hc_allgather_rd_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t es = a->esize, blk = a->count * es;

    s->algo = "allgather:RD";
    s->esize = es;
    if (a->count == 0)
        return HCCL_SUCCESS;
    int32_t cp = -1;
    if (!a->in_place)
        cp = hc_sched_copy(s, HC_RECV((uint64_t)r * blk), HC_SEND(0), blk, HC_NODEPS);
    if (n == 1)
        return s->err;
    const uint32_t p2 = hc_pow2_floor(n), rem = n - p2;
    const int64_t vv = hc_core_vrank(r, rem);
    if (vv < 0) { /* hand our block over, get the others' back */
        int32_t sd = hc_sched_send(s, r + 1, TAG_IN, HC_SEND(0), blk, HC_NODEPS);
        if (r > 0)
            hc_sched_recv(s, r + 1, TAG_OUT, HC_RECV(0), (uint64_t)r * blk, HC_DEPS(cp, sd));
        hc_sched_recv(s, r + 1, TAG_OUT + 1, HC_RECV((uint64_t)(r + 1) * blk),
                      (uint64_t)(n - r - 1) * blk, HC_DEPS(cp, sd));
        return s->err;
    }
    const uint32_t v = (uint32_t)vv;
    int32_t deps[40] = {INT32_MIN};
    hc_deps_add(deps, 40, cp);
    if (r < 2 * rem)
        hc_deps_add(deps, 40, hc_sched_recv(s, r - 1, TAG_IN, HC_RECV((uint64_t)(r - 1) * blk),
                                            blk, HC_NODEPS));
    for (uint32_t mask = 1, i = 0; mask < p2; mask <<= 1, i++) {
        const uint32_t g = v & ~(mask - 1), pg = g ^ mask;
        const uint32_t peer = hc_core_rank(v ^ mask, rem);
        const uint64_t so = hc_core_first(g, rem), sn = hc_core_first(g + mask, rem) - so;
        const uint64_t ro = hc_core_first(pg, rem), rn = hc_core_first(pg + mask, rem) - ro;
        hc_sched_send(s, peer, 1 + i, HC_RECV(so * blk), sn * blk, deps);
        hc_deps_add(deps, 40, hc_sched_recv(s, peer, 1 + i, HC_RECV(ro * blk), rn * blk,
                                            HC_NODEPS));
    }
    if (r < 2 * rem) {
        const int32_t j = hc_sched_nop_list(s, deps);
        if (r > 1)
            hc_sched_send(s, r - 1, TAG_OUT, HC_RECV(0), (uint64_t)(r - 1) * blk, HC_DEPS(j));
        hc_sched_send(s, r - 1, TAG_OUT + 1, HC_RECV((uint64_t)r * blk),
                      (uint64_t)(n - r) * blk, HC_DEPS(j));
    }
    return s->err;
}
