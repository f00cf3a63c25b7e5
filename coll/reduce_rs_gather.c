/*
 * coll/reduce_rs_gather.c - Reduce RS_GATHER: a recursive-halving
 * reduce-scatter, then every block straight to the root (Rabenseifner's
 * Reduce, with a one-step gather); for large messages.
 *
 * Cost for N bytes: log2(p2) alpha + ((p2-1)/p2) N (beta + gamma) for the
 * halving, then the root receives p2-1 blocks, (p2-1)/p2 N beta (posted at
 * once, so about alpha + ((p2-1)/p2) N beta); plus alpha + N (beta + gamma)
 * for the fix-up when n is not a power of two. Against BINOMIAL's
 * log2(n) (alpha + N (beta + gamma)) it moves and reduces each byte about
 * twice instead of log2(n) times.
 *
 * The vector is cut into p2 blocks; hc_rh_reduce_scatter leaves block v
 * reduced at virtual rank v in the canonical order of deterministic mode
 * (coll/prims.h), so Reduce gives the same bits as BINOMIAL, RD and HD. The
 * accumulator is RECV at the root when the root takes part in the halving
 * (then its own block is already in place), else TMP (count elements,
 * followed by the receive area). The root's receives land where its own
 * halving steps read and wrote (in place, SEND is RECV), so they wait for
 * all of them. Halving rounds go in pieces (coll/prims.h). Tags: 0 fix-up,
 * halving below HC_RH_TAGS, then the gather.
 */
#include "prims.h"

#include <stdlib.h>

enum { TAG_FIX = 0, TAG_GATHER = HC_RH_TAGS };

int hc_reduce_rs_gather_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank, root = a->root;
    const uint64_t es = a->esize, count = a->count, bytes = count * es;

    s->algo = "reduce:RS_GATHER";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), bytes, HC_NODEPS);
        return s->err;
    }
    const uint32_t p2 = hc_pow2_floor(n), rem = n - p2;
    uint64_t *voff = malloc((p2 + 1) * sizeof(uint64_t));
    if (voff == NULL)
        return HCCL_E_MEMORY;
    for (uint32_t v = 0; v <= p2; v++)
        voff[v] = hc_block_start(count, p2, v);
    const int acc_recv = r == root && hc_core_vrank(root, rem) >= 0;
    hc_rh_t h = {.voff = voff, .acc = acc_recv ? HC_BUF_RECV : HC_BUF_TMP, .acc_off = 0,
                 .rcv_off = acc_recv ? 0 : bytes, .tag0 = TAG_FIX};
    hc_sched_need_tmp(s, acc_recv ? bytes : 2 * bytes);
    const uint32_t from = s->nsteps;
    hc_rh_reduce_scatter(s, a, &h);

    if (r == root) {
        int32_t j = hc_sched_join(s, from, -1);
        for (uint32_t v = 0; v < p2; v++) {
            const uint32_t q = hc_core_rank(v, rem);
            const uint64_t o = voff[v], l = voff[v + 1] - o;
            if (q != r && l)
                hc_sched_recv(s, q, TAG_GATHER, HC_RECV(o * es), l * es, HC_DEPS(j));
        }
    } else if (h.v >= 0) {
        const uint32_t v = (uint32_t)h.v;
        const uint64_t o = voff[v], l = voff[v + 1] - o;
        if (l)
            hc_sched_send(s, root, TAG_GATHER, HC_TMP(o * es), l * es, HC_DEPS(h.last));
    }
    free(voff);
    return s->err;
}
