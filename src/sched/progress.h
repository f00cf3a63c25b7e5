/*
 * src/sched/progress.h - running tasks (src/sched/stream.h) without a stream, and the
 * task kinds for a collective and a group (src/sched/progress.c).
 */
#ifndef HC_PROGRESS_H_
#define HC_PROGRESS_H_

#include "stream.h"

/* Blocking: start, drive in this thread until done (HCCL_EXEC_TIMEOUT,
 * HcclCommAbort, failed peers), finish, destroy. Returns the result. */
int hc_task_run(hc_task_t *t);

/* Drive one executor: hc_exec_progress under ctx->lock, plus the check for
 * a posted step whose peer failed (its receive would never complete). */
int hc_task_exec_progress(hc_comm_t *c, hc_exec_t *e);

/* One collective (op->args described and checked by the API layer). */
hc_task_t *hc_task_coll(hc_comm_t *c, const hc_op_t *op, void *stream, hc_task_t *owner,
                        int *rc);

/* A group (src/sched/group.c's queued calls). */
typedef struct hc_gitem {
    int is_coll;
    hc_comm_t *c;
    hc_op_t op;               /* collectives */
    int is_send;              /* p2p */
    void *buf;
    uint64_t bytes;
    uint32_t peer;
} hc_gitem_t;
hc_task_t *hc_task_group(const hc_gitem_t *items, uint32_t n, void *stream, int *rc);

#endif /* HC_PROGRESS_H_ */
