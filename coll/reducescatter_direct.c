/*
 * coll/reducescatter_direct.c - ReduceScatter DIRECT: every rank stages,
 * chunk by chunk, the blocks the others own (coll.h top); rank q folds its
 * block from every rank's staging in rank order, in one pass, straight
 * into RECV. No message; per rank one copy of (n-1)/n of the input and one
 * n-way fold of a block.
 *
 * A slot holds chunk k of all n blocks, packed (block q at q * chunk);
 * at two ranks not in place, only the peer's block, at 0. In
 * place, RECV is our block of SEND, so our own chunk is staged too and the
 * fold reads only staging (a fold must not write over one of its later
 * sources). Flags: IN counts the chunks staged, RED the chunks folded (the
 * owners wait for RED before rewriting a slot; our own fold by
 * dependency). Every rank waits for every peer's IN in every operation
 * (coll.h: halves alternate safely). Deterministic: the same rank-order
 * fold as allreduce DIRECT.
 */
#include <stdlib.h>

#include "shm_util.h"

#define RS_CHUNK (64u << 10) /* per block: a slot holds n of them (1 for a pair) */
#define SLOTS 2u

enum { F_IN = 0, F_RED = 1 };

const char *hc_reducescatter_direct_usable(const hc_coll_args_t *a)
{
    return hc_shm_blocks_usable(a, SLOTS);
}

int hc_reducescatter_direct_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, me = a->rank;
    const uint64_t es = a->esize, count = a->count, blk = count * es;

    s->algo = "reducescatter:DIRECT";
    s->esize = es;
    if (count == 0)
        return HCCL_SUCCESS;
    if (n == 1) {
        if (!a->in_place)
            hc_sched_copy(s, HC_RECV(0), HC_SEND(0), blk, HC_NODEPS);
        return s->err;
    }
    /* Blocks per slot: block q at q * chunk. Two ranks, not in place: a
     * rank stages only the peer's block, at 0, where the peer reads it (so
     * a tiny one ends at the flag, in the fewest lines). */
    const int pair = n == 2 && !a->in_place;
    const uint32_t nb = pair ? 1 : n;
    const uint64_t room = hc_shm_slot_room(a, SLOTS);
    if (room < nb * es)
        return HCCL_E_PARA;
    uint64_t ce = hc_shm_chunk_elems(a, room / nb, RS_CHUNK);
    if (ce > count)
        ce = count;
    const uint64_t nch = (count + ce - 1) / ce, slot = hc_shm_align(nb * ce * es);
    /* the staged blocks fit in the tiny region: they arrive with its flag */
    const int tiny = nch == 1 && nb * count * es <= HC_SHM_TINY_MAX;
    const uint64_t fin = tiny ? HC_SHM_TINY_FLAG : HC_SHM_FLAG(F_IN);
    int32_t *ins = malloc(((size_t)n + 3) * sizeof(int32_t)); /* a dependency list */
    if (ins == NULL)
        return HCCL_E_MEMORY;
    hc_sched_need_seg(s, HC_SHM_DATA + (nch < SLOTS ? nch : SLOTS) * slot);
    int32_t pin = -1, pred = -1, rds[SLOTS], w[2];
    const int32_t g = hc_shm_guard(s);
    for (uint64_t k = 0; k < nch; k++) {
        const uint64_t so = tiny ? hc_shm_tiny_at(nb * blk) : HC_SHM_DATA + (k % SLOTS) * slot;
        const uint64_t off = k * ce * es;
        const uint64_t len = (k + 1 < nch ? ce : count - k * ce) * es;
        const uint32_t v = (uint32_t)k + 1;
        w[0] = g; /* the first write of each slot: after the guard */
        if (k >= SLOTS) /* everyone has folded what the slot held */
            hc_shm_wait_others(s, HC_SHM_FLAG(F_RED), v - SLOTS, 0, HC_NODEPS, w);
        const int32_t prev = k >= SLOTS ? rds[k % SLOTS] : -1;
        uint32_t ni = 0;
        for (uint32_t q = 0; q < n; q++)
            if (q != me || a->in_place)
                ins[ni++] = hc_sched_copy(s, HC_SEG(so + (pair ? 0 : q) * ce * es),
                                          HC_SEND(q * blk + off), len, HC_DEPS(w[0], prev));
        ins[ni++] = pin;
        ins[ni] = INT32_MIN;
        pin = hc_sched_publish(s, fin, v, ins);
        hc_shm_wait_others(s, fin, v, 0, HC_DEPS(pin), w);
        /* our block of each peer's slot */
        const uint64_t mo = so + (pair ? 0 : me) * ce * es;
        hc_shm_wait_prefetch(s, w[0], mo, len);
        const hc_loc_t own = a->in_place ? HC_SEG(mo) : HC_SEND(me * blk + off);
        rds[k % SLOTS] = hc_sched_reduce_ranks(s, HC_RECV(off), mo, own, len, HC_DEPS(w[0]));
        if (k + SLOTS < nch)
            pred = hc_sched_publish(s, HC_SHM_FLAG(F_RED), v, HC_DEPS(rds[k % SLOTS], pred));
    }
    free(ins);
    s->fast = (uint8_t)tiny; /* src/comm/fastlane.h */
    return s->err;
}
