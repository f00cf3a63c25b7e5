/*
 * coll/reducescatter_hier.c - ReduceScatter HIER: the reduce-scatter half
 * of AllReduce HIER (coll/hier.h) on the caller's n blocks of count
 * elements: an intra-unit ring reduce-scatter of each member's list, then
 * an inter-unit ring reduce-scatter per slice that ends every block at its
 * owner, chunk-pipelined so that the inter-unit stage of chunk k overlaps
 * the intra-unit stage of chunk k+1.
 *
 * Across units: each rank sends (G-1) blocks, n (G-1) count in all, the
 * minimum (every unit exports its partial of the other units' blocks once).
 * Scratch: two list buffers and the unit partials of my list (TMP); the
 * result lands in RECV at the last reduce (in place: exactly over our own
 * SEND block, which that reduce reads last).
 */
#include "hier.h"

#include <stdlib.h>

int hc_reducescatter_hier_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks;
    const uint64_t es = a->esize, count = a->count;

    s->algo = "reducescatter:HIER";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), count * es, HC_NODEPS);
        return s->err;
    }
    const hc_hblocks_t map = {.split = 0, .count = count, .n = n};
    hc_hplan_t p;
    int rc = hc_hplan_init(&p, a, &map, 1);
    if (rc != HCCL_SUCCESS)
        return rc;
    int32_t *out_step = malloc(p.C * sizeof(int32_t));
    if (out_step == NULL) {
        hc_hplan_free(&p);
        return HCCL_E_MEMORY;
    }
    hc_sched_need_tmp(s, hc_hier_rs(&p, s, 0, 0, HC_RECV(0), out_step, NULL));
    free(out_step);
    hc_hplan_free(&p);
    return s->err;
}
