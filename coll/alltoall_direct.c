/*
 * coll/alltoall_direct.c - AlltoAll DIRECT: every rank stages, chunk by
 * chunk, the blocks it sends to the others (coll.h top); rank q copies its
 * block straight out of every peer's staging into RECV. One copy in and
 * one copy out per byte that changes rank; no message.
 *
 * A slot holds chunk k of the n - 1 blocks for the others, packed: the
 * block for rank q at position (q - owner - 1) mod n (pos() below); blocks
 * of at most HC_SHM_TINY_MAX bytes in all travel with their flag (the tiny
 * region, shm_util.h). Flags: IN counts the chunks staged, RD the chunks copied out of
 * every peer (owners wait for RD before rewriting a slot). Every rank waits
 * for every peer's IN in every operation (coll.h: halves alternate
 * safely). In place, a block of RECV is overwritten only after our chunk
 * of it was staged (the copies out follow our IN). Our own block goes from
 * SEND to RECV chunk by chunk right after each chunk's flag is up, while the
 * peers stage theirs (first, it delayed the flag: 2 ranks, 256 KiB
 * 16.5-17.4 -> 13.9-15.3 us, docs/PERFORMANCE.md).
 */
#include <stdlib.h>

#include "shm_util.h"

/* Chunk per block (a slot holds n - 1 of them), at most A2A_SLOT_MAX per
 * slot. 256 KB: measured with the executor's publish-first ordering, HCCL_TUNE_FILE chunk= 32K-256K, 3 interleaved runs: 2 ranks
 * 2 MiB 90.5 vs 105.7 us (64 KB), 8 MiB 397 vs 439; 4 ranks 4 MiB 669 vs
 * 838, 16 MiB 3.27 vs 4.77 ms. */
#define A2A_CHUNK (256u << 10)
#define A2A_SLOT_MAX (2u << 20)
#define SLOTS 2u

enum { F_IN = 0, F_RD = 1 };

/* Where owner's slot holds the block for rank dest (dest != owner). */
static inline uint64_t pos(uint32_t owner, uint32_t dest, uint32_t n)
{
    return (dest + n - owner - 1) % n;
}

const char *hc_alltoall_direct_usable(const hc_coll_args_t *a)
{
    return hc_shm_blocks_usable(a, SLOTS);
}

int hc_alltoall_direct_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, me = a->rank;
    const uint64_t es = a->esize, count = a->count, blk = count * es;

    s->algo = "alltoall:DIRECT";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), blk, HC_NODEPS);
        return s->err;
    }
    const uint64_t room = hc_shm_slot_room(a, SLOTS);
    if (room < (n - 1) * es)
        return HCCL_E_PARA;
    const uint64_t def = A2A_SLOT_MAX / (n - 1) < A2A_CHUNK ? A2A_SLOT_MAX / (n - 1) : A2A_CHUNK;
    uint64_t ce = hc_shm_chunk_elems(a, room / (n - 1), def);
    if (ce > count)
        ce = count;
    const uint64_t nch = (count + ce - 1) / ce, slot = hc_shm_align((n - 1) * ce * es);
    /* all blocks fit in the tiny region: they arrive with the flag */
    const int tiny = nch == 1 && (n - 1) * count * es <= HC_SHM_TINY_MAX;
    const uint64_t fin = tiny ? HC_SHM_TINY_FLAG : HC_SHM_FLAG(F_IN);
    int32_t *l = malloc(((size_t)n + 3) * sizeof(int32_t)); /* a dependency list */
    if (l == NULL)
        return HCCL_E_MEMORY;
    hc_sched_need_seg(s, HC_SHM_DATA + (nch < SLOTS ? nch : SLOTS) * slot);
    int32_t pin = -1, prd = -1, w[2], pubs[SLOTS] = {-1, -1};
    const int32_t g = hc_shm_guard(s);
    for (uint64_t k = 0; k < nch; k++) {
        const uint64_t so = tiny ? hc_shm_tiny_at((n - 1) * blk) : HC_SHM_DATA + (k % SLOTS) * slot;
        const uint64_t off = k * ce * es;
        const uint64_t len = (k + 1 < nch ? ce : count - k * ce) * es;
        const uint32_t v = (uint32_t)k + 1;
        w[0] = g; /* the first write of each slot: after the guard */
        if (k >= SLOTS) /* every peer has copied out what the slot held */
            hc_shm_wait_others(s, HC_SHM_FLAG(F_RD), v - SLOTS, 0, HC_NODEPS, w);
        uint32_t nl = 0;
        for (uint32_t q = 0; q < n; q++)
            if (q != me)
                l[nl++] = hc_sched_copy(s, HC_SEG(so + pos(me, q, n) * ce * es),
                                        HC_SEND(q * blk + off), len, HC_DEPS(w[0], pubs[k % SLOTS]));
        l[nl++] = pin;
        l[nl] = INT32_MIN;
        /* (a slot is rewritten after its previous publish: locally ordered) */
        pin = pubs[k % SLOTS] = hc_sched_publish(s, fin, v, l);
        if (!a->in_place) /* our own chunk: while the peers stage theirs */
            hc_sched_copy(s, HC_RECV(me * blk + off), HC_SEND(me * blk + off), len,
                          HC_DEPS(pin));
        hc_shm_wait_others(s, fin, v, 0, HC_DEPS(pin), w);
        if (tiny) /* every block: a few lines */
            hc_shm_wait_prefetch(s, w[0], so, (n - 1) * len);
        else if (n == 2) /* the peer's block for us: its whole chunk */
            hc_shm_wait_prefetch(s, w[0], so, len);
        nl = 0;
        for (uint32_t q = 0; q < n; q++)
            if (q != me)
                l[nl++] = hc_sched_copy(s, HC_RECV(q * blk + off),
                                        HC_PEER(q, so + pos(q, me, n) * ce * es), len,
                                        HC_DEPS(w[0]));
        l[nl++] = prd;
        l[nl] = INT32_MIN;
        if (k + SLOTS < nch)
            prd = hc_sched_publish(s, HC_SHM_FLAG(F_RD), v, l);
    }
    free(l);
    s->fast = (uint8_t)tiny; /* src/fastlane.h */
    return s->err;
}
