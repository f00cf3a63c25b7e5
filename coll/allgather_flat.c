/*
 * coll/allgather_flat.c - AllGather FLAT: every rank sends its block to
 * every other rank at once and receives theirs, one round of n - 1
 * messages each way. For the few bytes of control exchanges (src/
 * service.h) among ranks that may share cores: a round costs the most
 * there (each waits for every peer to be scheduled), so one round beats
 * Bruck's ceil(log2 n) up to a few dozen ranks. Not in the AllGather
 * table: n - 1 messages of every rank do not scale to large blocks.
 *
 * Blocks keep their absolute places in RECV; out of place, our block is
 * copied from SEND first. Tag 0 (the source rank is in the tag).
 */
#include "algos.h"

int hc_allgather_flat_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t blk = a->count * a->esize;

    s->algo = "allgather:FLAT";
    s->esize = a->esize;
    if (a->count == 0)
        return HCCL_SUCCESS;
    /* in place, our block is already at its place; the sends read it */
    const hc_loc_t mine = a->in_place ? HC_RECV((uint64_t)r * blk) : HC_SEND(0);
    if (!a->in_place)
        hc_sched_copy(s, HC_RECV((uint64_t)r * blk), HC_SEND(0), blk, HC_NODEPS);
    for (uint32_t d = 1; d < n; d++) {
        hc_sched_send(s, (r + d) % n, 0, mine, blk, HC_NODEPS);
        hc_sched_recv(s, (r + n - d) % n, 0, HC_RECV((uint64_t)((r + n - d) % n) * blk), blk,
                      HC_NODEPS);
    }
    return s->err;
}
