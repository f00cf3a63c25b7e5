/* src/comm/fastlane.c - tiny blocking repeats run inline (see fastlane.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "fastlane.h"

#include <hccl/hccl.h>

#include "src/exec/exec.h"
#include "src/base/log.h"
#include "src/base/reduce.h"
#include "shm.h"
#include "src/exec/trace.h"
#include "src/base/util.h"

HC_HOT int hc_fastlane_run(hc_comm_t *c, const hc_op_t *op, int *rc)
{
    const hc_coll_args_t *a = &op->args;
    hc_shm_comm_t *sh = c->shm;
    const hc_sched_entry_t *ent = c->memo.ent;
    if (sh == NULL || ent == NULL || !ent->sched.fast || c->streams != NULL || op->iov ||
        op->has_seq || c->aborted || hc_trace_on)
        return 0;
    /* the same operation as the previous one: hc_op_begin's memo would run
     * this schedule again (the same decision on every rank) */
    const uint8_t rop = (uint8_t)(a->op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : a->op);
    if (!hc_comm_memo_is(c, a, rop, c->wins != NULL))
        return 0;
    /* the previous operation ended here (always, for blocking calls): the
     * executor's gate */
    if (__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE) != sh->epoch)
        return 0;
    const uint32_t seq = hc_comm_next_seq(c);
    hc_exec_t e;
    void *bufs[HC_NBUFS] = {op->send, op->recv, NULL};
    hc_exec_inline_init(&e, &ent->sched, bufs, c->rank, a->dtype, a->op);
    hc_shm_bind(c, &e); /* the next epoch */
    const uint32_t at = hc_exec_inline_run(&e, hc_comm_spin_polls(c, 1));
    if (at != UINT32_MAX && at < ent->sched.nsteps) {
        /* a WAIT the spin did not see satisfied: the executor takes over
         * there, with the same epoch and sequence number */
        __atomic_store_n(&sh->epoch, e.epoch - 1, __ATOMIC_RELAXED);
        hc_op_t rest = *op;
        rest.has_seq = 1;
        rest.seq = seq;
        rest.ticket = HC_NO_TICKET;
        rest.resume_at = at;
        *rc = hc_comm_run_general(c, &rest);
        return 1;
    }
    hc_shm_op_end(c, &e);
    *rc = e.status;
    hc_op_end_inline(c, op, *rc);
    if (HC_LOG_ON(HC_LOG_INFO, HC_SUB_COLL))
        hc_log_write(HC_LOG_INFO, HC_SUB_COLL, __FILE__, __LINE__,
                     "%s comm %s: count %llu %s, algorithm %s, inline (src/comm/fastlane.h)",
                     op->api, c->name, (unsigned long long)a->count, hc_dtype_name(a->dtype),
                     ent->sched.algo ? ent->sched.algo : "?");
    return 1;
}
