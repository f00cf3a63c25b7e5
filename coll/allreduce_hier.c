/*
 * coll/allreduce_hier.c - AllReduce HIER: hierarchical reduce-scatter then
 * hierarchical allgather (coll/hier.h), over the vector cut into one block
 * per rank.
 *
 *   1. intra-unit ring reduce-scatter: member m of a unit (node, or fast
 *      group on one node) ends with the unit's partial of its list L(m),
 *      the blocks of the slices it serves;
 *   2. inter-unit ring reduce-scatter per slice: the peers that serve one
 *      slice in every unit (the per-slice peers; with unequal units a small
 *      unit's members serve several) finish the blocks, each at its owner;
 *   3. inter-unit ring allgather per slice;
 *   4. intra-unit ring allgather.
 *
 * Every block is chunked and every step waits only for its own chunk, so
 * for large messages the inter-unit stages (the network) run while the
 * intra-unit stages (shared memory) work on other chunks.
 *
 * Traffic: a rank sends (S-1)/S N inside its unit in each half and
 * 2 (G-1)/n N across units in all (G units of S ranks, n = G S ranks, N
 * bytes): n * 2 (G-1)/n N = 2 (G-1) N cross unit boundaries in total, the
 * minimum for a reduction over G units (each unit must export its partial
 * and import the result, G-1 units' worth each), against 2 (n-1)/n N per
 * rank for a ring whose every hop crosses. Latency: 2 (S-1) + 2 (G-1)
 * steps, as a ring of n ranks.
 *
 * Each block's result is computed at one rank (its owner) in a fixed
 * order and copied everywhere: every rank gets the same bits.
 * Scratch: the reduce-scatter's list buffers (hc_hier_rs). In place, an
 * allgather write into a block waits until the reduce-scatter has read
 * that block's input there.
 */
#include "hier.h"

#include <stdlib.h>

int hc_allreduce_hier_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks;
    const uint64_t es = a->esize, count = a->count;

    s->algo = "allreduce:HIER";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), count * es, HC_NODEPS);
        return s->err;
    }
    const hc_hblocks_t map = {.split = 1, .count = count, .n = n};
    hc_hplan_t p;
    int rc = hc_hplan_init(&p, a, &map, 2);
    if (rc != HCCL_SUCCESS)
        return rc;
    const uint32_t C = p.C;
    int32_t *out_step = malloc(C * sizeof(int32_t));
    int32_t *rd = a->in_place ? malloc((size_t)n * C * sizeof(int32_t)) : NULL;
    if (out_step == NULL || (a->in_place && rd == NULL)) {
        free(out_step);
        free(rd);
        hc_hplan_free(&p);
        return HCCL_E_MEMORY;
    }
    for (size_t i = 0; rd && i < (size_t)n * C; i++)
        rd[i] = -1;
    const hc_loc_t out = HC_RECV(hc_hblk_off(&map, a->rank) * es);
    hc_sched_need_tmp(s, hc_hier_rs(&p, s, 0, 0, out, out_step, rd));
    hc_hier_ag(&p, s, p.span, out, out_step, rd);
    free(out_step);
    free(rd);
    hc_hplan_free(&p);
    return s->err;
}
