/*
 * coll/allreduce_hd.c - AllReduce HD (H-D_R): Rabenseifner's algorithm,
 * recursive-halving reduce-scatter then recursive-doubling allgather, with
 * the pairing fix-up for non-powers of two.
 *
 * Cost for N bytes, p2 = largest power of two <= n:
 *   2 log2(p2) alpha + 2 ((p2-1)/p2) N beta + ((p2-1)/p2) N gamma,
 * plus 2 (alpha + N beta) + N gamma when n is not a power of two (the even
 * ranks 2k < 2rem hand their vector to 2k+1 and get the result back).
 * Bandwidth-optimal for powers of two with logarithmic latency.
 *
 * The vector is cut into p2 blocks (hc_block_start(count, p2, v)); virtual
 * rank v ends the halving (hc_rh_reduce_scatter: masks p2/2 .. 1, the half
 * holding block v kept) with block v reduced in the canonical order of
 * deterministic mode (coll/prims.h), the same expression as RD. The
 * doubling then runs the masks back up, 1 .. p2/2: v sends the blocks of
 * its group of `mask` virtual ranks and receives the partner group's, all
 * in RECV. The accumulator is RECV itself (out of place the first reduce
 * reads SEND: no initial copy); TMP receives the partner's half (the fix-up:
 * a whole vector).
 *
 * Hazards: a doubling receive lands on the blocks that this rank sent away
 * in the halving round of the same mask (and, in place, SEND is RECV), so it
 * waits for that send; a doubling send covers every block received so far,
 * so it waits for all earlier receives. The halving rounds go in pieces
 * (HC_RH_CHUNK, or args->chunk_bytes) so that reducing one piece overlaps
 * receiving the next. Tags: 0 fix-up, halving below HC_RH_TAGS, then
 * doubling rounds, then the result back to the even rank.
 */
#include "prims.h"

#include <stdlib.h>

enum { TAG_FIX = 0, TAG_AG = HC_RH_TAGS, TAG_BACK = HC_RH_TAGS + 40 };

int hc_allreduce_hd_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t es = a->esize, count = a->count, bytes = count * es;

    s->algo = "allreduce:HD";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), bytes, HC_NODEPS);
        return s->err;
    }
    const uint32_t p2 = hc_pow2_floor(n);
    uint64_t *voff = malloc((p2 + 1) * sizeof(uint64_t));
    if (voff == NULL)
        return HCCL_E_MEMORY;
    for (uint32_t v = 0; v <= p2; v++)
        voff[v] = hc_block_start(count, p2, v);
    hc_rh_t h = {.voff = voff, .acc = HC_BUF_RECV, .acc_off = 0, .rcv_off = 0, .tag0 = TAG_FIX};
    hc_sched_need_tmp(s, bytes);
    hc_rh_reduce_scatter(s, a, &h);

    if (h.v < 0) { /* sat out: the result comes back (in place: after our send) */
        hc_sched_recv(s, r + 1, TAG_BACK, HC_RECV(0), bytes, HC_DEPS(h.fix_send));
        free(voff);
        return s->err;
    }
    const uint32_t v = (uint32_t)h.v, rounds = hc_ceil_log2(p2);
    int32_t deps[40] = {INT32_MIN};
    hc_deps_add(deps, 40, h.last);
    for (uint32_t mask = 1, i = 0; mask < p2; mask <<= 1, i++) {
        const uint32_t g = v & ~(mask - 1), pg = g ^ mask;
        const uint32_t peer = hc_core_rank(v ^ mask, h.rem);
        const uint64_t so = voff[g], sn = voff[g + mask] - so;
        const uint64_t ro = voff[pg], rn = voff[pg + mask] - ro;
        /* halving round rounds-1-i used the same mask */
        if (sn)
            hc_sched_send(s, peer, TAG_AG + i, HC_RECV(so * es), sn * es, deps);
        if (rn) {
            int32_t rv = hc_sched_recv(s, peer, TAG_AG + i, HC_RECV(ro * es), rn * es,
                                       HC_DEPS(h.sent[rounds - 1 - i], h.last));
            hc_deps_add(deps, 40, rv);
        }
    }
    if (r < 2 * h.rem) { /* hand the result to the even neighbour */
        int32_t j = hc_sched_nop_list(s, deps);
        hc_sched_send(s, r - 1, TAG_BACK, HC_RECV(0), bytes, HC_DEPS(j));
    }
    free(voff);
    return s->err;
}
