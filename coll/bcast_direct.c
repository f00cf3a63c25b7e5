/*
 * coll/bcast_direct.c - Broadcast DIRECT: the root copies the vector, chunk
 * by chunk, into its shared staging (coll.h top); every other rank copies
 * each chunk out as soon as the root's flag shows it. One copy on each
 * side, pipelined through SLOTS slots; no message, no system call.
 *
 * Flags: the root's IN counts chunks written; each reader's RD counts the
 * chunks it has copied out, which the root waits for before it rewrites a
 * slot. Nobody waits for the readers at the end of the operation, so the
 * root may run ahead; before it writes this half again it waits until
 * every rank finished the operation two epochs back, the last one that
 * read this half (a WAIT with ago = 2 on the completion flags; immediate
 * in steady state). A message of at most HC_SHM_RING_MAX bytes travels
 * with its flag in the ring entry of its epoch (coll.h, HC_SEG_RING_SLOTS;
 * in the flag's cache line up to 56 bytes, the reader prefetches the
 * others while it polls): the root waits only for the readers of the epoch that last
 * used that entry, so in a loop of small broadcasts it runs up to 2 *
 * HC_SEG_RING_SLOTS operations ahead of a slow reader instead of two.
 */
#include "shm_util.h"

/* Chunk: a quarter of the message, within [BCAST_CHUNK_MIN, BCAST_CHUNK_MAX]
 * (measured at 2 ranks: docs/PERFORMANCE.md, "Broadcast DIRECT chunk and
 * table"):
 * enough chunks that the readers' copy-out overlaps the root's copy-in,
 * few enough that the flag handoffs stay small; HCCL_BCAST_CHUNK_SIZE (or
 * a tune-file chunk) caps it. With more ranks than cores (args->oversub)
 * a root that must wait for its readers to free a slot pays for process
 * hand-overs (the readers on its own core run only while it does not), so
 * there the message is cut into as few chunks as the slots allow: half of
 * it per chunk (both slots filled, no wait; the readers on the other core
 * copy the first half while the root writes the second) up to the room of
 * a slot, then chunks of a whole slot (4 ranks on 2 cores, alternating
 * launches: 256 KiB - 32 MiB 10-25% faster than 256 KiB chunks, 128 KiB
 * the same as one chunk; docs/PERFORMANCE.md, "Broadcast on more ranks
 * than cores"). */
#define BCAST_CHUNK_MIN (32u << 10)
#define BCAST_CHUNK_MAX (256u << 10)
#define SLOTS 2u

enum { F_IN = 0, F_RD = 1 };

int hc_bcast_direct_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, root = a->root;
    const uint64_t es = a->esize, count = a->count;

    s->algo = "broadcast:DIRECT";
    s->esize = es;
    if (count == 0 || n == 1)
        return HCCL_SUCCESS;
    if (a->shm_bytes < HC_SHM_MIN_HALF)
        return HCCL_E_PARA;
    uint64_t want = a->oversub ? (count + SLOTS - 1) / SLOTS * es : count * es / 4;
    if (want < BCAST_CHUNK_MIN)
        want = BCAST_CHUNK_MIN;
    else if (want > BCAST_CHUNK_MAX && !a->oversub)
        want = BCAST_CHUNK_MAX; /* (oversubscribed: the slot's room caps it below) */
    const uint64_t room = hc_shm_slot_room(a, SLOTS);
    /* args->chunk_bytes (always set for Broadcast) is a cap, not a size */
    uint64_t ce = hc_shm_chunk_elems(a, want < room ? want : room, want);
    if (ce > count)
        ce = count;
    const uint64_t nch = (count + ce - 1) / ce, slot = hc_shm_align(ce * es);
    if (count * es <= HC_SHM_RING_MAX) {
        const uint64_t len = count * es;
        hc_sched_need_seg(s, HC_SHM_DATA); /* every rank takes an epoch */
        s->fast = 1;                        /* src/comm/fastlane.h */
        if (a->rank == root) {
            int32_t cp = hc_sched_copy(s, HC_SEG(HC_SHM_RING_DATA), HC_RECV(0), len,
                                       HC_DEPS(hc_shm_ring_guard(s)));
            hc_sched_ring(s, cp);
            hc_sched_ring(s, hc_sched_publish(s, HC_SHM_RING_FLAG, 1, HC_DEPS(cp)));
        } else {
            int32_t wt = hc_sched_wait(s, root, HC_SHM_RING_FLAG, 1, 0, HC_NODEPS);
            if (len > HC_SHM_LINE - 8u) /* the lines after the flag's */
                hc_shm_wait_prefetch(s, wt, HC_SHM_RING_DATA, len);
            hc_sched_ring(s, wt);
            hc_sched_ring(s, hc_sched_copy(s, HC_RECV(0), HC_PEER(root, HC_SHM_RING_DATA), len,
                                           HC_DEPS(wt)));
        }
        return s->err;
    }
    const uint64_t fin = HC_SHM_FLAG(F_IN);
    /* every rank declares staging (all ranks take an epoch) */
    hc_sched_need_seg(s, HC_SHM_DATA + (nch < SLOTS ? nch : SLOTS) * slot);
    int32_t w[2], last = -1;
    if (a->rank == root) {
        const int32_t free_half = hc_shm_guard(s);
        int32_t pubs[SLOTS] = {-1, -1}; /* each slot's last publish */
        for (uint64_t k = 0; k < nch; k++) {
            const uint64_t so = HC_SHM_DATA + (k % SLOTS) * slot;
            const uint64_t off = k * ce * es, len = (k + 1 < nch ? ce : count - k * ce) * es;
            const uint32_t v = (uint32_t)k + 1;
            w[0] = -1;
            if (k >= SLOTS) /* every reader has copied out what the slot held */
                hc_shm_wait_others(s, HC_SHM_FLAG(F_RD), v - SLOTS, 0, HC_NODEPS, w);
            /* (the slot's previous chunk is out by then; the dependency on
             * its publish only says so locally) */
            int32_t cp = hc_sched_copy(s, HC_SEG(so), HC_RECV(off), len,
                                       HC_DEPS(free_half, w[0], pubs[k % SLOTS]));
            last = pubs[k % SLOTS] = hc_sched_publish(s, fin, v, HC_DEPS(cp, last));
        }
        return s->err;
    }
    /* the root never waits for a slot: keep the CPU while it writes
     * (more ranks than cores; coll.h) */
    s->spin_on_producer = nch <= SLOTS;
    for (uint64_t k = 0; k < nch; k++) {
        const uint64_t so = HC_SHM_DATA + (k % SLOTS) * slot;
        const uint64_t off = k * ce * es, len = (k + 1 < nch ? ce : count - k * ce) * es;
        const uint32_t v = (uint32_t)k + 1;
        int32_t wt = hc_sched_wait(s, root, fin, v, 0, HC_NODEPS);

        int32_t cp = hc_sched_copy(s, HC_RECV(off), HC_PEER(root, so), len, HC_DEPS(wt));
        if (k + SLOTS < nch)
            last = hc_sched_publish(s, HC_SHM_FLAG(F_RD), v, HC_DEPS(cp, last));
    }
    return s->err;
}
