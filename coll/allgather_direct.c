/*
 * coll/allgather_direct.c - AllGather DIRECT: every rank copies its block,
 * chunk by chunk, into its shared staging (coll.h top) and copies every
 * other rank's chunk straight out of theirs into RECV. One copy in, n-1
 * copies out per rank, pipelined through SLOTS slots; no message.
 *
 * Flags: IN counts the chunks a rank has staged, RD the chunks it has
 * copied out of every peer (its owner waits for RD before rewriting a
 * slot). Every rank waits for every peer's IN in every operation, which is
 * what lets the executor alternate halves between operations safely
 * (coll.h). A block of at most HC_SHM_TINY_MAX bytes travels with its flag
 * (the tiny region, shm_util.h). In place, our block is already in RECV;
 * otherwise each chunk of it goes from SEND to RECV right after that chunk's
 * flag is up, while the peers stage theirs (first, it delayed the flag: 2
 * ranks, 256 KiB 15-17.5 -> 12.8-14.1 us, docs/PERFORMANCE.md).
 *
 * At 2 ranks a chunk is staged only after our copy of the peer's previous
 * chunk out of its slot: otherwise a rank whose peer is late stages ahead
 * while it waits, and the copies run slower (alternating launches: 32 MiB
 * 2.00-2.09 ms against 2.27-2.42, 4 MiB 148-150 us against 152-160, no
 * size slower; at 4 ranks on 2 cores no change, so only there; "AllReduce:
 * the fold right after its copy" in docs/PERFORMANCE.md).
 */
#include <stdlib.h>

#include "shm_util.h"

#define AG_CHUNK (256u << 10)
#define SLOTS 2u

enum { F_IN = 0, F_RD = 1 };

int hc_allgather_direct_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, me = a->rank;
    const uint64_t es = a->esize, count = a->count, blk = count * es;

    s->algo = "allgather:DIRECT";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), blk, HC_NODEPS);
        return s->err;
    }
    if (a->shm_bytes < HC_SHM_MIN_HALF)
        return HCCL_E_PARA;
    const uint64_t room = hc_shm_slot_room(a, SLOTS);
    uint64_t ce = hc_shm_chunk_elems(a, room, AG_CHUNK);
    if (ce > count)
        ce = count;
    const uint64_t nch = (count + ce - 1) / ce, slot = hc_shm_align(ce * es);
    const int tiny = nch == 1 && blk <= HC_SHM_TINY_MAX;
    const uint64_t fin = tiny ? HC_SHM_TINY_FLAG : HC_SHM_FLAG(F_IN);
    int32_t *outs = malloc(((size_t)n + 2) * sizeof(int32_t)); /* a dependency list */
    if (outs == NULL)
        return HCCL_E_MEMORY;
    hc_sched_need_seg(s, HC_SHM_DATA + (tiny ? 0 : (nch < SLOTS ? nch : SLOTS) * slot));
    int32_t pin = -1, prd = -1, w[2], pubs[SLOTS] = {-1, -1}, lastout = -1;
    const int32_t g = hc_shm_guard(s);
    for (uint64_t k = 0; k < nch; k++) {
        const uint64_t so = tiny ? hc_shm_tiny_at(blk) : HC_SHM_DATA + (k % SLOTS) * slot;
        const uint64_t off = k * ce * es, len = (k + 1 < nch ? ce : count - k * ce) * es;
        const uint32_t v = (uint32_t)k + 1;
        w[0] = g; /* the first write of each slot: after the guard */
        if (k >= SLOTS) /* every peer has copied out what the slot held */
            hc_shm_wait_others(s, HC_SHM_FLAG(F_RD), v - SLOTS, 0, HC_NODEPS, w);
        /* (the slot's previous chunk is out by then: its publish says so locally) */
        /* at 2 ranks, after our copy out of the previous chunk (top) */
        const int32_t prevo = n == 2 && k >= 1 ? lastout : -1;
        int32_t cp = hc_sched_copy(s, HC_SEG(so), HC_SEND(off), len,
                                   HC_DEPS(w[0], pubs[k % SLOTS], prevo));
        pin = pubs[k % SLOTS] = hc_sched_publish(s, fin, v, HC_DEPS(cp, pin));
        if (!a->in_place) /* our own chunk: while the peers stage theirs */
            hc_sched_copy(s, HC_RECV(me * blk + off), HC_SEND(off), len, HC_DEPS(pin));
        hc_shm_wait_others(s, fin, v, 0, HC_DEPS(pin), w);
        hc_shm_wait_prefetch(s, w[0], so, len);
        uint32_t no = 0;
        for (uint32_t q = 0; q < n; q++)
            if (q != me)
                outs[no++] = hc_sched_copy(s, HC_RECV(q * blk + off), HC_PEER(q, so), len,
                                           HC_DEPS(w[0]));
        lastout = outs[0];
        outs[no++] = prd;
        outs[no] = INT32_MIN;
        if (k + SLOTS < nch)
            prd = hc_sched_publish(s, HC_SHM_FLAG(F_RD), v, outs);
    }
    free(outs);
    s->fast = (uint8_t)tiny; /* src/comm/fastlane.h */
    return s->err;
}
