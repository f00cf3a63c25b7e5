/* src/fastlane.c - tiny blocking Broadcasts run inline (see fastlane.h). */
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

/* The run-ahead guard of the ring writer (coll/shm_util.h,
 * hc_shm_ring_guard): every other rank finished the epoch that last used
 * this ring entry. The same test as the executor's WAIT on HC_SEG_DONE with
 * ago = 2 * HC_SEG_RING_SLOTS, including the shortcut through seen_done and
 * raising it (src/exec.c, wait_done). */
static int ring_free(hc_shm_comm_t *sh, char *const *half, uint64_t ep)
{
    const uint64_t ago = 2 * HC_SEG_RING_SLOTS;
    if (ep < sh->base + ago || sh->seen_done >= ep - ago)
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

/* Poll the root's flag of epoch ep at most `polls` times, prefetching the
 * lines of the message after the flag's, as the executor's WAIT does
 * (coll/shm_util.h, hc_shm_wait_prefetch). */
static int ring_ready(const char *entry, uint64_t len, uint64_t want, unsigned polls)
{
    const uint64_t *f = (const uint64_t *)(entry + HC_SHM_RING_FLAG);
    const unsigned lines = len > HC_SHM_LINE - 8u ? (unsigned)((len + 8u + 63u) / 64u) : 0;
    for (unsigned k = 0; k < polls; k++) {
        for (unsigned j = 1; j < lines; j++)
            __builtin_prefetch(entry + HC_SHM_RING_FLAG + 64u * j);
        if (__atomic_load_n(f, __ATOMIC_ACQUIRE) >= want)
            return 1;
    }
    return 0;
}

HC_HOT int hc_fastlane_run(hc_comm_t *c, const hc_op_t *op)
{
    const hc_coll_args_t *a = &op->args;
    hc_shm_comm_t *sh = c->shm;
    if (a->coll != HC_COLL_BROADCAST || sh == NULL || c->streams != NULL || op->iov ||
        c->aborted || hc_trace_on)
        return 0;
    const uint64_t len = a->count * a->esize;
    const hc_sched_key_t *mk = &c->memo.key;
    /* the same Broadcast as the previous operation, which ran DIRECT: what
     * hc_op_begin would pick again (its memo) */
    if (len > HC_SHM_RING_MAX || c->memo.ent == NULL || c->memo.ent->busy ||
        mk->coll != HC_COLL_BROADCAST || mk->algo != HC_BCAST_DIRECT || mk->count != a->count ||
        mk->dtype != a->dtype || mk->root != a->root || mk->reg != (c->wins != NULL))
        return 0;
    const uint64_t ep = sh->epoch + 1;
    if (sh->nranks < 2 || __atomic_load_n(&sh->done, __ATOMIC_RELAXED) != ep - 1)
        return 0; /* (the previous operation always ended here: blocking calls) */
    char *const *half = sh->half[ep & 1];
    const uint64_t ring = ((ep >> 1) % HC_SEG_RING_SLOTS) * HC_SEG_RING_BYTES;
    const uint32_t root = a->root;
    if (sh->rank == root) {
        if (!ring_free(sh, half, ep))
            return 0;
        hc_comm_next_seq(c);
        sh->epoch = ep;
        char *entry = half[root] + ring;
        hc_copy(entry + HC_SHM_RING_DATA, op->recv, len);
        __atomic_store_n((uint64_t *)(entry + HC_SHM_RING_FLAG), ep << 32 | 1u, __ATOMIC_RELEASE);
    } else {
        const char *entry = half[root] + ring;
        if (!ring_ready(entry, len, ep << 32 | 1u, hc_comm_spin_polls(c, 1)))
            return 0;
        hc_comm_next_seq(c);
        sh->epoch = ep;
        hc_copy(op->recv, entry + HC_SHM_RING_DATA, len);
    }
    /* what the executor's finish and hc_shm_op_end store: the completion
     * flag, no wait for every rank, the gate */
    __atomic_store_n((uint64_t *)(half[sh->rank] + HC_SEG_DONE), ep << 32, __ATOMIC_RELEASE);
    sh->prev_all = 0;
    __atomic_store_n(&sh->done, ep, __ATOMIC_RELEASE);
    c->ops++;
    c->xnode_last = 0;
    if (HC_LOG_ON(HC_LOG_INFO, HC_SUB_COLL))
        hc_log_write(HC_LOG_INFO, HC_SUB_COLL, __FILE__, __LINE__,
                     "%s comm %s: count %llu %s, algorithm broadcast:DIRECT, inline "
                     "(src/fastlane.h)", op->api, c->name, (unsigned long long)a->count,
                     hc_dtype_name(a->dtype));
    return 1;
}
