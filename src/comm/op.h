/*
 * src/comm/op.h - one operation on a communicator: its description (hc_op_t),
 * and begin (select the algorithm, take the schedule from the cache or
 * build it, take scratch, start the executor) and end (release, AVG's
 * division); the blocking runner on top of them.
 */
#ifndef HC_OP_H_
#define HC_OP_H_

#include <stdint.h>
#include <string.h>
#include <hccl/hccl.h>

#include "comm.h"
#include "src/exec/trace.h"

/* A begin turn that orders nothing (the communicator has never had a
 * stream operation; src/sched/stream.h). */
#define HC_NO_TICKET UINT64_MAX

/* One operation, described for the runner. */
typedef struct hc_op {
    hc_coll_args_t args;
    void *send, *recv;
    const char *api;          /* "HcclAllReduce", for logs */
    HcclReduceOp user_op;     /* AVG is run as SUM then scaled */
    /* set by stream tasks (src/sched/stream.h): sequence number and begin turn
     * (ticket) reserved at enqueue (has_seq), stream and enqueue time for
     * the trace */
    int has_seq;
    uint32_t seq;
    uint64_t ticket;
    uint32_t stream_id;
    uint64_t t_enq;
    /* SEND/RECV as a scatter/gather list (send, recv unused): only for
     * algorithms hc_exec_set_iov accepts; HcclAllReduceMulti checks with
     * hc_comm_select first */
    const hc_iov_t *iov;
    uint32_t niov;
    /* > 0: the schedule's steps before this one already ran (the fast lane
     * began the operation, src/comm/fastlane.h); has_seq is then set too */
    uint32_t resume_at;
} hc_op_t;

/* An operation between begin and end. */
typedef struct hc_running {
    hc_comm_t *c;
    hc_op_t op;
    hc_sched_entry_t *ent;
    hc_sched_entry_t local;   /* when the schedule is not cached */
    int use_local;
    void *tmp;
    hc_exec_t e;
    hc_trace_op_t tr;         /* the timeline's view of it (HCCL_TRACE_FILE) */
} hc_running_t;

/* Select, build (or reuse) the schedule, take scratch, start the executor.
 * On failure everything is released. */
int hc_op_begin(hc_comm_t *c, const hc_op_t *op, hc_running_t *r);
/* Release what begin took; on success finish AVG. */
void hc_op_end(hc_running_t *r, int rc);
/* An operation of collective `coll` over `count` elements (the rest of the
 * fields zero: no sequence reserved, not in place, no list). */
void hc_op_init(hc_op_t *op, const char *api, hc_coll_t coll, uint64_t count, HcclDataType dt,
                size_t esize, HcclReduceOp rop, void *send, void *recv);
/* c's memo holds this operation (a's collective, count, type, in-place,
 * root, list; `op` and `reg` as hc_op_begin prepares them: AVG as SUM,
 * registered buffers or not) with a schedule not in use: hc_op_begin runs
 * that schedule again, and the fast lane may (src/comm/fastlane.h). Never
 * for blocks given by arrays (hc_args_v): the key does not hold them. */
static inline int hc_comm_memo_is(const hc_comm_t *c, const hc_coll_args_t *a, uint8_t op,
                                  uint8_t reg)
{
    const hc_sched_key_t *mk = &c->memo.key;
    return c->memo.ent && !hc_args_v(a) && mk->count == a->count && mk->coll == a->coll &&
           mk->dtype == a->dtype && mk->op == op && mk->in_place == a->in_place &&
           mk->root == a->root && mk->iov == a->iov && mk->reg == reg && !c->memo.ent->busy &&
           memcmp(&c->memo.ent->key, mk, sizeof(*mk)) == 0;
}
/* An operation the fast lane ran without hc_op_begin ended with rc: what
 * hc_op_end does after the executor (the count, AVG's division). */
void hc_op_end_inline(hc_comm_t *c, const hc_op_t *op, int rc);
/* begin + wait + end (blocking, with the deadline); a tiny repeat may run
 * inline instead (src/comm/fastlane.h). */
int hc_comm_run(hc_comm_t *c, const hc_op_t *op);
/* The same, always through hc_op_begin and the executor. */
int hc_comm_run_general(hc_comm_t *c, const hc_op_t *op);
/* The algorithm hc_op_begin would choose for these arguments (the same
 * preparation: topology, shared staging, selection table), nothing run;
 * NULL if the communicator's topology cannot be built. Collective the
 * first time (the shared-staging handshake). */
const hc_algo_t *hc_comm_select(hc_comm_t *c, hc_coll_args_t *a);

#endif /* HC_OP_H_ */
