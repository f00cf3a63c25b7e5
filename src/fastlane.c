/* src/fastlane.c - tiny blocking repeats run inline (see fastlane.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "fastlane.h"

#include <string.h>
#include <hccl/hccl.h>

#include "log.h"
#include "reduce.h"
#include "shm.h"
#include "stream.h"
#include "trace.h"
#include "util.h"
#include "../coll/shm_util.h"

/* Most ranks whose sources a tiny fold takes from the stack. */
#define FAST_MAX_RANKS 64u

/* The executor's WAIT on every other rank's completion flag (HC_SEG_DONE)
 * for the operation `ago` epochs back (src/exec.c, wait_done): nothing ran
 * there yet, our previous operation waited for every rank (ago 2 only), or
 * seen_done knows it; else read the flags and raise seen_done. */
static int peers_done(hc_shm_comm_t *sh, char *const *half, uint64_t ep, uint64_t ago)
{
    if (ep < sh->base + ago || (ago == 2 && sh->prev_all) || sh->seen_done >= ep - ago)
        return 1;
    const uint64_t want = (ep - ago) << 32;
    uint64_t least = UINT64_MAX;
    for (uint32_t q = 0; q < sh->nranks; q++) {
        if (q == sh->rank)
            continue;
        const uint64_t f =
            __atomic_load_n((const uint64_t *)(half[q] + HC_SEG_DONE), __ATOMIC_ACQUIRE);
        if (f < want)
            return 0;
        least = (f >> 32) < least ? f >> 32 : least;
    }
    sh->seen_done = least;
    return 1;
}

/* Poll flag `flag` of rank `from` (every other rank: HC_PEERS_ALL) for
 * `want`, at most `polls` rounds, prefetching the lines of [at, at + len)
 * of each awaited half as the executor's WAIT does (hc_shm_wait_prefetch):
 * a message longer than the flag's line then arrives with it. */
static int flags_up(const hc_shm_comm_t *sh, char *const *half, uint32_t from, uint64_t flag,
                    uint64_t want, uint64_t at, uint64_t len, unsigned polls)
{
    const uint64_t a0 = at & ~(uint64_t)(HC_SHM_LINE - 1);
    const unsigned lines =
        len > HC_SHM_LINE - 8u ? (unsigned)((at + len - a0 + HC_SHM_LINE - 1) / HC_SHM_LINE) : 0;
    uint32_t q = from == HC_PEERS_ALL ? 0 : from;
    const uint32_t end = from == HC_PEERS_ALL ? sh->nranks : from + 1;
    for (unsigned k = 0; k < polls; k++) {
        for (; q < end; q++) {
            if (q == sh->rank)
                continue;
            for (unsigned j = 0; j < lines; j++)
                __builtin_prefetch(half[q] + a0 + (uint64_t)HC_SHM_LINE * j);
            if (__atomic_load_n((const uint64_t *)(half[q] + flag), __ATOMIC_ACQUIRE) < want)
                break;
        }
        if (q == end)
            return 1;
    }
    return 0;
}

/* What the executor's finish and hc_shm_op_end store: the completion flag,
 * whether the schedule waited for every rank, the gate. */
static void finish(hc_comm_t *c, hc_shm_comm_t *sh, char *const *half, uint64_t ep, int all,
                   const hc_op_t *op)
{
    __atomic_store_n((uint64_t *)(half[sh->rank] + HC_SEG_DONE), ep << 32, __ATOMIC_RELEASE);
    sh->prev_all = (uint8_t)all;
    __atomic_store_n(&sh->done, ep, __ATOMIC_RELEASE);
    c->ops++;
    c->xnode_last = 0;
    if (HC_LOG_ON(HC_LOG_INFO, HC_SUB_COLL))
        hc_log_write(HC_LOG_INFO, HC_SUB_COLL, __FILE__, __LINE__,
                     "%s comm %s: count %llu %s, algorithm DIRECT, inline (src/fastlane.h)",
                     op->api, c->name, (unsigned long long)op->args.count,
                     hc_dtype_name(op->args.dtype));
}

/* Broadcast through the ring entry of epoch ep (coll/bcast_direct.c): the
 * root waits for the entry to be free (ago = 2 * HC_SEG_RING_SLOTS),
 * copies in and publishes; a reader waits for the flag and copies out. */
static int bcast_ring(hc_comm_t *c, hc_shm_comm_t *sh, const hc_op_t *op, uint64_t ep)
{
    char *const *half = sh->half[ep & 1];
    const uint32_t root = op->args.root;
    const uint64_t len = op->args.count * op->args.esize;
    char *entry = half[root] + ((ep >> 1) % HC_SEG_RING_SLOTS) * HC_SEG_RING_BYTES;
    if (sh->rank == root) {
        if (!peers_done(sh, half, ep, 2 * HC_SEG_RING_SLOTS))
            return 0;
        hc_comm_next_seq(c);
        sh->epoch = ep;
        hc_copy(entry + HC_SHM_RING_DATA, op->recv, len);
        __atomic_store_n((uint64_t *)(entry + HC_SHM_RING_FLAG), ep << 32 | 1u, __ATOMIC_RELEASE);
    } else {
        const uint64_t ring = (uint64_t)(entry - half[root]);
        if (!flags_up(sh, half, root, ring + HC_SHM_RING_FLAG, ep << 32 | 1u,
                      ring + HC_SHM_RING_DATA, len, hc_comm_spin_polls(c, 1)))
            return 0;
        hc_comm_next_seq(c);
        sh->epoch = ep;
        hc_copy(op->recv, entry + HC_SHM_RING_DATA, len);
    }
    finish(c, sh, half, ep, 0, op);
    return 1;
}

/* AllReduce of one tiny message (coll/allreduce_direct.c, one-shot): wait
 * until every rank finished the operation two back, copy SEND into our
 * slot before the tiny flag, publish, wait for every rank's flag, fold all
 * n slots in rank order into RECV (our own from SEND; in place, ranks >= 2
 * from the slot, as hc_reduce_multi may write only its first two
 * sources). Once published the operation cannot be given back: if the
 * peers' flags do not come within the spin, the executor takes over at the
 * wait (hc_op_t.resume_at), with its yielding, deadline and failure
 * detection. */
static int allreduce_tiny(hc_comm_t *c, hc_shm_comm_t *sh, const hc_op_t *op, uint64_t ep,
                          uint32_t wait_step, int *rc)
{
    char *const *half = sh->half[ep & 1];
    const hc_coll_args_t *a = &op->args;
    const uint64_t len = a->count * a->esize, so = hc_shm_tiny_at(len);
    const uint32_t n = sh->nranks, me = sh->rank;
    if (n > FAST_MAX_RANKS || !peers_done(sh, half, ep, 2))
        return 0;
    const uint32_t seq = hc_comm_next_seq(c);
    sh->epoch = ep;
    hc_copy_lines(half[me] + so, op->send, len);
    __atomic_store_n((uint64_t *)(half[me] + HC_SHM_TINY_FLAG), ep << 32 | 1u, __ATOMIC_RELEASE);
    if (!flags_up(sh, half, HC_PEERS_ALL, HC_SHM_TINY_FLAG, ep << 32 | 1u, so, len,
                  hc_comm_spin_polls(c, 1))) {
        hc_op_t rest = *op;
        rest.has_seq = 1;
        rest.seq = seq;
        rest.ticket = HC_NO_TICKET;
        rest.resume_at = wait_step;
        sh->epoch = ep - 1; /* hc_shm_bind takes it again */
        *rc = hc_comm_run_general(c, &rest);
        return 1;
    }
    const void *src[FAST_MAX_RANKS];
    for (uint32_t q = 0; q < n; q++)
        src[q] = q != me ? half[q] + so : a->in_place && me >= 2 ? half[me] + so : op->send;
    hc_reduce_multi(op->recv, src, n, a->count, a->dtype,
                    a->op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : a->op);
    finish(c, sh, half, ep, 1, op);
    if (op->user_op == HCCL_REDUCE_AVG)
        hc_reduce_scale(op->recv, a->count, a->dtype, n);
    *rc = HCCL_SUCCESS;
    return 1;
}

HC_HOT int hc_fastlane_run(hc_comm_t *c, const hc_op_t *op, int *rc)
{
    const hc_coll_args_t *a = &op->args;
    hc_shm_comm_t *sh = c->shm;
    const hc_sched_entry_t *ent = c->memo.ent;
    if (sh == NULL || ent == NULL || ent->sched.fast == HC_FAST_NONE || c->streams != NULL ||
        op->iov || op->has_seq || c->aborted || hc_trace_on)
        return 0;
    /* the same operation as the previous one, with the same schedule:
     * what hc_op_begin's memo would run again (the same on every rank) */
    const hc_sched_key_t *mk = &c->memo.key;
    const uint8_t rop = (uint8_t)(a->op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : a->op);
    if (ent->busy || mk->coll != a->coll || mk->count != a->count || mk->dtype != a->dtype ||
        mk->op != rop || mk->in_place != a->in_place || mk->root != a->root || mk->iov ||
        mk->reg != (c->wins != NULL) || memcmp(&ent->key, mk, sizeof(*mk)) != 0)
        return 0;
    const uint64_t ep = sh->epoch + 1;
    if (sh->nranks < 2 || __atomic_load_n(&sh->done, __ATOMIC_RELAXED) != ep - 1)
        return 0; /* (the previous operation always ended here: blocking calls) */
    *rc = HCCL_SUCCESS;
    switch (ent->sched.fast) {
    case HC_FAST_BCAST_RING:
        return a->coll == HC_COLL_BROADCAST && bcast_ring(c, sh, op, ep);
    case HC_FAST_AR_TINY:
        return a->coll == HC_COLL_ALLREDUCE &&
               allreduce_tiny(c, sh, op, ep, ent->sched.fast_wait, rc);
    default:
        return 0;
    }
}
