/*
 * coll/allgather_hier.c - AllGather HIER: the allgather half of AllReduce
 * HIER (coll/hier.h) on the callers' blocks of count elements: an
 * inter-unit ring allgather per slice (each rank's block crosses into each
 * other unit once), then an intra-unit ring allgather of the lists, every
 * block forwarded inside its unit as soon as its chunk arrived.
 *
 * Across units: n (G-1) count in all, the minimum; a topology-blind ring
 * can cross on every hop. No scratch: blocks land in RECV at their place
 * and are forwarded from there; our own block is read from SEND (in place
 * it is already there) and copied into RECV once.
 */
#include "hier.h"

int hc_allgather_hier_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks;
    const uint64_t es = a->esize, count = a->count;

    s->algo = "allgather:HIER";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    /* our block into its place (skipped in place: same address) */
    hc_sched_copy(s, HC_RECV((uint64_t)a->rank * count * es), HC_SEND(0), count * es, HC_NODEPS);
    if (n == 1)
        return s->err;
    const hc_hblocks_t map = {.split = 0, .count = count, .n = n};
    hc_hplan_t p;
    int rc = hc_hplan_init(&p, a, &map, 1);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_hier_ag(&p, s, 0, HC_SEND(0), NULL, NULL);
    hc_hplan_free(&p);
    return s->err;
}
