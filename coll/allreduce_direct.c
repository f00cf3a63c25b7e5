/*
 * coll/allreduce_direct.c - AllReduce DIRECT: ranks of one host reduce
 * straight out of each other's shared staging (coll.h top); no messages,
 * no system calls, every byte read and written once per pass.
 *
 * Two shapes, both pipelined in chunks through SLOTS staging slots so that
 * staging stays small and in cache whatever the message size:
 *
 * One-shot (n = 2 unless nt_recv, or small messages): every rank copies
 * its chunk into its staging slot and raises flag IN; once every rank's IN
 * shows the chunk, every rank folds all n slots, in rank order, into RECV
 * (one REDUCE_MULTI: one pass, the same bits everywhere), then raises RED
 * ("done reading your slots"), which the owners wait for before they reuse
 * a slot (from ONESHOT_ORDERED_MIN bytes a rank stages a chunk only after
 * its fold of the previous one). One flag round per chunk; a message of at
 * most HC_SHM_TINY_MAX (568) bytes ends at its flag, and arrives with it
 * (shm_util.h).
 * Each rank reads n chunks and writes two (staging, RECV).
 *
 * Two-phase (n > 2 and larger messages, or 2 ranks with args->nt_recv): a
 * chunk is cut into n blocks.
 * Every rank copies the blocks that others reduce into its IN slot; rank
 * q folds block q from its own SEND and the others' slots into its OUT
 * slot (RED), and every rank copies every OUT block into RECV (then raises
 * OUT, "done reading your OUT slot"). Reads ~(3n-1)/n and writes ~2 chunk
 * sizes per rank instead of n + 1 and 2: better from three ranks on.
 *
 * Reuse: a slot is rewritten SLOTS chunks later only after every rank's
 * flag says it no longer reads it (RED for IN slots, OUT for OUT slots;
 * our own reads by dependency). Across operations the executor alternates
 * staging halves, and every rank waits for every peer's IN in every
 * operation, so no peer of operation e-2 still reads a half that operation
 * e writes (coll.h). A flag counts chunks, so its publishes are chained.
 * Deterministic: every block is folded once, in rank order. Waits and
 * folds use the per-rank step forms: O(chunks) steps per rank, plus n
 * copies per chunk in the two-phase shape.
 */
#include <stdlib.h>

#include "shm_util.h"

/* Pipeline chunk when args->chunk_bytes is 0: slots of this size stay in
 * L2 with room for the user data streaming through. */
#define DIRECT_CHUNK (256u << 10)
#define SLOTS 2u
/* One-shot up to this many bytes at more than two ranks. */
#define ONESHOT_MAX (16u << 10)
/* A one-shot message above this that fits one default chunk goes in two
 * halves: the copy of the second fills the wait for the peers' first (2
 * ranks, docs/PERFORMANCE.md: 256 KiB 24-26 us against 33, 128 KiB 14
 * against 16-18; 64 KiB and less no better). */
#define ONESHOT_SPLIT_MIN (64u << 10)

/* From this size a chunk is staged only after the previous chunk's fold.
 * Otherwise a rank whose peer is late stages the next chunk meanwhile, and
 * the fold then finds less of its own SEND chunk in cache (2 ranks,
 * alternating launches: 32 MiB 4.2-4.4 ms against 4.6-4.7, 64 MiB 9.0-9.1
 * against 9.4-9.8; 8 MiB and below no better, as the data stays in L3;
 * docs/PERFORMANCE.md, "AllReduce: the fold right after its copy"). */
#define ONESHOT_ORDERED_MIN (16u << 20)

enum { F_IN = 0, F_RED = 1, F_OUT = 2 };
#define DATA0 HC_SHM_DATA

static int oneshot(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint64_t es = a->esize, count = a->count;
    const uint64_t room = hc_shm_slot_room(a, SLOTS);
    uint64_t ce = hc_shm_chunk_elems(a, room, DIRECT_CHUNK);
    if (ce > count)
        ce = count;
    if (ce == count && a->chunk_bytes == 0 && count * es > ONESHOT_SPLIT_MIN)
        ce = (count + 1) / 2;
    const uint64_t nch = (count + ce - 1) / ce, slot = hc_shm_align(ce * es);
    /* a tiny message ends at its flag (shm_util.h) */
    const int tiny = nch == 1 && count * es <= HC_SHM_TINY_MAX;
    const uint64_t fin = tiny ? HC_SHM_TINY_FLAG : HC_SHM_FLAG(F_IN);
    int32_t pb = -1, pr = -1; /* a flag's publishes stay in order: it counts chunks */
    int32_t rms[SLOTS];       /* the fold that last read each slot (ours included) */
    int32_t w[2];
    const int ordered = count * es >= ONESHOT_ORDERED_MIN;
    hc_sched_need_seg(s, DATA0 + (nch < SLOTS ? nch : SLOTS) * slot);
    const int32_t g = hc_shm_guard(s);
    for (uint64_t k = 0; k < nch; k++) {
        const uint64_t so = tiny ? hc_shm_tiny_at(count * es) : DATA0 + (k % SLOTS) * slot;
        const uint64_t off = k * ce * es;
        const uint64_t len = (k + 1 < nch ? ce : count - k * ce) * es;
        const uint32_t v = (uint32_t)k + 1;
        int32_t cp;
        const int32_t prevf = ordered && k >= 1 ? rms[(k - 1) % SLOTS] : -1;
        if (k >= SLOTS) { /* everyone has folded what this slot held */
            hc_shm_wait_others(s, HC_SHM_FLAG(F_RED), v - SLOTS, 0, HC_NODEPS, w);
            cp = hc_sched_copy(s, HC_SEG(so), HC_SEND(off), len,
                               HC_DEPS(w[0], rms[k % SLOTS], prevf));
        } else {
            cp = hc_sched_copy(s, HC_SEG(so), HC_SEND(off), len, HC_DEPS(g, prevf));
        }
        pb = hc_sched_publish(s, fin, v, HC_DEPS(cp, pb));
        /* the wait follows the publish so that the flag is up before the
         * executor first polls */
        hc_shm_wait_others(s, fin, v, 0, HC_DEPS(pb), w);
        hc_shm_wait_prefetch(s, w[0], so, len);
        /* Our own part from SEND, not from our staging: a peer that polled
         * our slot may have taken its line (AMD hands a modified line that
         * another core reads over to it), and reading it back would cost
         * a transfer. In place, RECV is SEND: a fold may write its first
         * two sources only (hc_reduce_multi), so ranks >= 2 use staging. */
        const hc_loc_t own = a->in_place && a->rank >= 2 ? HC_SEG(so) : HC_SEND(off);
        rms[k % SLOTS] = hc_sched_reduce_ranks(s, HC_RECV(off), so, own, len, HC_DEPS(w[0], cp));
        s->fast = (uint8_t)tiny; /* guard, copy, publish, wait, fold: src/comm/fastlane.h */
        if (k + SLOTS < nch)
            pr = hc_sched_publish(s, HC_SHM_FLAG(F_RED), v, HC_DEPS(rms[k % SLOTS], pr));
    }
    return s->err;
}

static int twophase(const hc_coll_args_t *a, hc_sched_t *s, int32_t *outs)
{
    const uint32_t n = a->nranks, me = a->rank;
    const uint64_t es = a->esize, count = a->count;
    /* a slot: the chunk (IN) and one block of it (OUT, at most ce/n + 1) */
    const uint64_t room = (a->shm_bytes - DATA0) / SLOTS;
    uint64_t ce = hc_shm_chunk_elems(a, room * n / (n + 1), DIRECT_CHUNK);
    if (ce > count)
        ce = count;
    while (ce > 1 && hc_shm_align(ce * es) + hc_shm_align((ce / n + 1) * es) > room)
        ce -= ce / 64 + 1;
    const uint64_t nch = (count + ce - 1) / ce;
    const uint64_t in_sz = hc_shm_align(ce * es), out_sz = hc_shm_align((ce / n + 1) * es);
    const uint64_t slot = in_sz + out_sz;
    int32_t pin = -1, pred = -1, pout = -1; /* each flag's publishes in order */
    int32_t mine[SLOTS];                    /* our copy out of each OUT slot */
    int32_t w[2], w2[2];
    hc_sched_need_seg(s, DATA0 + (nch < SLOTS ? nch : SLOTS) * slot);
    const int32_t g = hc_shm_guard(s);
    for (uint64_t k = 0; k < nch; k++) {
        const uint64_t si = DATA0 + (k % SLOTS) * slot, so = si + in_sz, off = k * ce * es;
        const uint64_t L = k + 1 < nch ? ce : count - k * ce;
        const uint64_t b0 = hc_block_start(L, n, me), bl = hc_block_len(L, n, me);
        const uint32_t v = (uint32_t)k + 1;

        /* IN: the blocks the others fold, once they folded what it held */
        w[0] = g; /* the first writes of each slot: after the guard */
        if (k >= SLOTS)
            hc_shm_wait_others(s, HC_SHM_FLAG(F_RED), v - SLOTS, 0, HC_NODEPS, w);
        int32_t c1 = -1, c2 = -1;
        if (b0)
            c1 = hc_sched_copy(s, HC_SEG(si), HC_SEND(off), b0 * es, HC_DEPS(w[0]));
        if (b0 + bl < L)
            c2 = hc_sched_copy(s, HC_SEG(si + (b0 + bl) * es), HC_SEND(off + (b0 + bl) * es),
                               (L - b0 - bl) * es, HC_DEPS(w[0]));
        pin = hc_sched_publish(s, HC_SHM_FLAG(F_IN), v, HC_DEPS(c1, c2, w[0], pin));

        /* RED: fold block `me` into OUT, once OUT's last readers are done */
        hc_shm_wait_others(s, HC_SHM_FLAG(F_IN), v, 0, HC_DEPS(pin), w);
        w2[0] = g;
        if (k >= SLOTS)
            hc_shm_wait_others(s, HC_SHM_FLAG(F_OUT), v - SLOTS, 0, HC_NODEPS, w2);
        const int32_t prev_mine = k >= SLOTS ? mine[k % SLOTS] : -1;
        int32_t rd = bl ? hc_sched_reduce_ranks(s, HC_SEG(so), si + b0 * es,
                                                HC_SEND(off + b0 * es), bl * es,
                                                HC_DEPS(w[0], w2[0], prev_mine))
                        : hc_sched_nop_list(s, HC_DEPS(w[0], w2[0], prev_mine));
        pred = hc_sched_publish(s, HC_SHM_FLAG(F_RED), v, HC_DEPS(rd, pred));

        /* OUT: every block into RECV (in place, SEND's chunk was read by
         * the copies and the fold above, which this follows) */
        hc_shm_wait_others(s, HC_SHM_FLAG(F_RED), v, 0, HC_DEPS(pred), w);
        uint32_t no = 0;
        mine[k % SLOTS] = -1;
        for (uint32_t q = 0; q < n; q++) {
            const uint64_t qb0 = hc_block_start(L, n, q), qbl = hc_block_len(L, n, q);
            if (qbl == 0)
                continue;
            hc_loc_t from = q == me ? HC_SEG(so) : HC_PEER(q, so);
            int32_t c = hc_sched_copy(s, HC_RECV(off + qb0 * es), from, qbl * es,
                                      q == me ? HC_DEPS(pred) : HC_DEPS(w[0]));
            if (q == me)
                mine[k % SLOTS] = c;
            outs[no++] = c;
        }
        outs[no++] = pout;
        outs[no] = INT32_MIN;
        if (k + SLOTS < nch)
            pout = hc_sched_publish(s, HC_SHM_FLAG(F_OUT), v, outs);
    }
    return s->err;
}

int hc_allreduce_direct_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks;
    const uint64_t bytes = a->count * a->esize;

    s->algo = "allreduce:DIRECT";
    s->esize = a->esize;
    if (a->count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), bytes, HC_NODEPS);
        return s->err;
    }
    if (a->shm_bytes < HC_SHM_MIN_HALF)
        return HCCL_E_PARA; /* no (or too little) shared staging */
    /* 2 ranks: one-shot, but two-phase for the large messages that the
     * table streams into RECV (args->nt_recv, the when=intel rows): there
     * each rank folds half as much, with the same memory traffic (2 ranks,
     * 32-256 MiB, three alternating launches: 2.71-3.42x of default Open
     * MPI against 2.60-2.93x; docs/PERFORMANCE.md) */
    if ((n == 2 && !a->nt_recv) || bytes <= ONESHOT_MAX)
        return oneshot(a, s);
    int32_t *outs = malloc(((size_t)n + 2) * sizeof(int32_t)); /* a dependency list */
    if (outs == NULL)
        return HCCL_E_MEMORY;
    int rc = twophase(a, s, outs);
    free(outs);
    return rc;
}

const char *hc_allreduce_direct_usable(const hc_coll_args_t *a)
{
    return hc_shm_usable(a);
}
