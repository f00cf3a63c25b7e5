/* src/comm/op.c - begin and end of an operation, and the blocking runner (see op.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "op.h"

#include <stdlib.h>
#include <string.h>

#include "fastlane.h"
#include "src/base/log.h"
#include "src/base/reduce.h"
#include "shm.h"
#include "src/sched/stream.h"
#include "src/transport/transport_ucx.h"
#include "tune.h"
#include "src/base/util.h"

static void scale_output(const hc_op_t *op, hc_comm_t *c)
{
    const hc_coll_args_t *a = &op->args;
    switch (a->coll) {
    case HC_COLL_ALLREDUCE:
    case HC_COLL_REDUCESCATTER:
        hc_reduce_scale(op->recv, a->count, a->dtype, c->nranks);
        break;
    case HC_COLL_REDUCE:
        if (a->rank == a->root)
            hc_reduce_scale(op->recv, a->count, a->dtype, c->nranks);
        break;
    default:
        break;
    }
}

/* What op_begin fills in before selecting. */
static int prepare_args(hc_comm_t *c, hc_coll_args_t *a)
{
    int trc = hc_comm_topo(c); /* a split's first operation builds it */
    if (trc != HCCL_SUCCESS)
        return trc;
    a->rank = c->rank;
    a->nranks = c->nranks;
    a->topo = &c->view;
    a->deterministic = c->cfg->deterministic;
    if (a->op == HCCL_REDUCE_AVG)
        a->op = HCCL_REDUCE_SUM;
    if (c->shm_state == 0) /* collective: every rank's first operation on c */
        hc_shm_comm_setup(c);
    a->shm_bytes = c->shm ? c->shm->half_bytes : 0;
    a->cma = c->shm ? c->shm->cma : 0;
    a->oversub = hc_comm_oversubscribed(c);
    a->registered = c->wins != NULL;
    return HCCL_SUCCESS;
}

const hc_algo_t *hc_comm_select(hc_comm_t *c, hc_coll_args_t *a)
{
    if (prepare_args(c, a) != HCCL_SUCCESS)
        return NULL;
    hc_comm_lock(c);
    const hc_algo_t *algo = hc_tune_select(c->tune, a);
    hc_comm_unlock(c);
    return algo;
}

/* The timeline's record of an operation that op_begin started. */
static void trace_begin(hc_running_t *r, const char *algo, uint32_t seq)
{
    hc_comm_t *c = r->c;
    const hc_op_t *op = &r->op;
    hc_trace_op_t *tr = &r->tr;
    const char *api = op->api ? op->api : "op";
    hc_trace_set_rank((int)c->rank);
    tr->name = strncmp(api, "Hccl", 4) == 0 ? api + 4 : api;
    tr->algo = algo;
    tr->bytes = op->args.count * op->args.esize;
    tr->comm_id = c->id;
    tr->seq = seq;
    tr->stream = op->stream_id;
    tr->t_enq = op->t_enq;
    hc_trace_op_begin(tr);
    r->e.trace = tr;
}

/* The algorithm and the cache entry for r's operation, under the
 * communicator's lock: the previous operation's when this one repeats it
 * (the memo), else the selection table's and the cache's; a private entry
 * (r->local) when the schedule is not cached. *k: its key. */
static const hc_algo_t *pick(hc_comm_t *c, hc_running_t *r, hc_sched_key_t *k)
{
    hc_coll_args_t *a = &r->op.args;
    const hc_algo_t *algo;
    hc_sched_entry_t *ent = NULL;
    if (hc_comm_memo_is(c, a, (uint8_t)a->op, (uint8_t)a->registered)) {
        algo = c->memo.algo;
        *k = c->memo.key;
        a->chunk_bytes = k->chunk;
        a->nt_recv = k->nt;
        ent = c->memo.ent;
        ent->last_use = ++c->use_clock;
    } else {
        algo = hc_tune_select(c->tune, a);
        hc_sched_key_set(k, a, algo->id);
        if (!hc_args_v(a)) /* (the key has no arrays) */
            ent = hc_cache_get(&c->cache, &c->use_clock, k);
    }
    if (ent == NULL) { /* uncacheable, or every entry busy: a private one */
        ent = &r->local;
        hc_zero(ent, sizeof(*ent));
        r->use_local = 1;
    }
    r->ent = ent;
    return algo;
}

/* Build the schedule of key k into r->ent (unless it holds it already),
 * with its executor workspace. Under the communicator's lock. */
static int build_entry(hc_comm_t *c, hc_running_t *r, const hc_algo_t *algo,
                       const hc_sched_key_t *k)
{
    hc_sched_entry_t *ent = r->ent;
    const hc_coll_args_t *a = &r->op.args;
    if (memcmp(&ent->key, k, sizeof(*k)) == 0)
        return HCCL_SUCCESS;
    if (ent->key.valid)
        hc_sched_reset(&ent->sched);
    else
        hc_sched_init(&ent->sched, a->esize);
    ent->key.valid = 0;
    ent->sched.esize = a->esize;
    int rc = algo->build(a, &ent->sched);
    if (rc == HCCL_SUCCESS)
        rc = ent->sched.err;
    if (rc != HCCL_SUCCESS) {
        HC_ERROR(HC_SUB_COLL, "%s: building the %s schedule failed: %d", r->op.api, algo->name,
                 rc);
        return rc;
    }
    ent->sched.algo = algo->name;
    ent->sched.nt_recv = (uint8_t)a->nt_recv;
    ent->xnode_bytes = hc_sched_xnode_bytes(&ent->sched, &c->view, c->rank, c->nranks);
    size_t need = hc_exec_ws_size(&ent->sched);
    if (need > ent->ws_size) {
        void *ws = realloc(ent->ws, need);
        if (ws == NULL)
            return HCCL_E_MEMORY;
        ent->ws = ws;
        ent->ws_size = need;
    }
    if (!r->use_local)
        ent->key = *k;
    ent->last_use = ++c->use_clock;
    return HCCL_SUCCESS;
}

/* Scratch, then the executor on r->ent's schedule: resumed where the fast
 * lane stopped, on a scatter/gather list, bound to the shared staging. */
static int start_exec(hc_comm_t *c, hc_running_t *r, const hc_algo_t *algo, uint32_t seq)
{
    const hc_op_t *op = &r->op;
    const hc_coll_args_t *a = &op->args;
    hc_sched_entry_t *ent = r->ent;
    int rc;
    r->tmp = hc_ctx_tmp_get(c->ctx, ent->sched.tmp_bytes, &rc);
    if (rc != HCCL_SUCCESS)
        return rc;
    void *bufs[HC_NBUFS] = {op->send, op->recv, r->tmp};
    rc = hc_exec_start(&r->e, &ent->sched, bufs, c->ctx->tp, &c->eps, c->rank, c->id, seq,
                       a->dtype, a->op, ent->ws);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_exec_set_args(&r->e, a);
    if (op->resume_at) { /* (the fast lane took the epoch: hc_shm_bind takes it again) */
        if (!ent->sched.fast || op->resume_at >= ent->sched.nsteps ||
            ent->sched.steps[op->resume_at].kind != HC_STEP_WAIT) {
            HC_ERROR(HC_SUB_COLL, "%s: the fast lane stopped at step %u, no WAIT of %s's schedule",
                     op->api, op->resume_at, algo->name);
            return HCCL_E_INTERNAL;
        }
        hc_exec_resume_at(&r->e, op->resume_at);
    }
    if (op->iov && hc_exec_set_iov(&r->e, op->iov, op->niov) != HCCL_SUCCESS) {
        HC_ERROR(HC_SUB_COLL, "%s: algorithm %s cannot run on a scatter/gather list", op->api,
                 algo->name);
        return HCCL_E_INTERNAL;
    }
    if (ent->sched.seg_bytes) {
        if (c->shm == NULL) {
            HC_ERROR(HC_SUB_COLL, "%s: algorithm %s needs shared staging, which comm %s lacks",
                     op->api, algo->name, c->name);
            return HCCL_E_INTERNAL;
        }
        hc_shm_bind(c, &r->e);
    }
    return HCCL_SUCCESS;
}

static int op_begin(hc_comm_t *c, const hc_op_t *op_in, hc_running_t *r, uint32_t seq)
{
    /* Only what hc_op_end reads before the executor exists: clearing the
     * whole ~1 KB (the private entry, the executor) cost as much as the
     * rest of a small operation's set-up. */
    r->c = c;
    r->op = *op_in;
    r->ent = NULL;
    r->use_local = 0;
    r->tmp = NULL;
    r->e.trace = NULL;
    r->e.half = NULL;
    const hc_op_t *op = &r->op;
    const hc_coll_args_t *a = &op->args;
    int rc = prepare_args(c, &r->op.args);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_comm_lock(c); /* the cache is shared with the progress thread (src/sched/stream.h) */
    hc_sched_key_t k;
    const hc_algo_t *algo = pick(c, r, &k);
    rc = build_entry(c, r, algo, &k);
    if (rc != HCCL_SUCCESS) {
        r->ent = NULL; /* not taken: hc_op_end leaves its busy flag alone */
        hc_comm_unlock(c);
        hc_op_end(r, rc);
        return rc;
    }
    if (!r->use_local) {
        c->memo.key = k;
        c->memo.ent = r->ent;
        c->memo.algo = algo;
    }
    r->ent->busy = 1;
    hc_comm_unlock(c);
    rc = start_exec(c, r, algo, seq);
    if (rc != HCCL_SUCCESS) {
        hc_op_end(r, rc);
        return rc;
    }
    if (hc_trace_on)
        trace_begin(r, algo->name, r->e.seq);
    if (HC_LOG_ON(HC_LOG_INFO, HC_SUB_COLL))
        hc_log_write(HC_LOG_INFO, HC_SUB_COLL, __FILE__, __LINE__,
                     "%s comm %s: count %llu %s, algorithm %s, %u steps, %llu B to other "
                     "nodes", op->api, c->name, (unsigned long long)a->count,
                     hc_dtype_name(a->dtype), algo->name, r->ent->sched.nsteps,
                     (unsigned long long)r->ent->xnode_bytes);
    return HCCL_SUCCESS;
}

/* Once a communicator has had stream operations, its operations begin in
 * program order (their turn, src/sched/stream.h): what begin decides (shared
 * staging epochs, src/comm/shm.h) is then the same on every rank. */
HC_HOT int hc_op_begin(hc_comm_t *c, const hc_op_t *op_in, hc_running_t *r)
{
    uint64_t ticket = op_in->has_seq ? op_in->ticket : HC_NO_TICKET;
    uint32_t seq = op_in->has_seq ? op_in->seq : hc_comm_next_seq(c);
    if (!op_in->has_seq)
        ticket = hc_stream_last_ticket(c);
    hc_stream_wait_turn(c, ticket);
    int rc = op_begin(c, op_in, r, seq);
    hc_stream_begun(c, ticket);
    return rc;
}

HC_HOT void hc_op_end(hc_running_t *r, int rc)
{
    hc_comm_t *c = r->c;
    const hc_trace_op_t *tr = r->e.trace;
    r->e.trace = NULL;
    if (r->e.half) /* the next operation may use the staging */
        hc_shm_op_end(c, &r->e);
    if (r->tmp)
        hc_ctx_tmp_put(c->ctx, r->tmp);
    r->tmp = NULL;
    hc_comm_lock(c);
    if (r->ent)
        r->ent->busy = 0;
    c->ops++;
    if (r->ent && rc == HCCL_SUCCESS) {
        c->xnode_last = r->ent->xnode_bytes;
        c->xnode_total += r->ent->xnode_bytes;
    }
    hc_comm_unlock(c);
    if (r->use_local) {
        hc_sched_free(&r->local.sched);
        free(r->local.ws);
        r->use_local = 0;
    }
    r->ent = NULL;
    if (rc == HCCL_SUCCESS && r->op.user_op == HCCL_REDUCE_AVG)
        scale_output(&r->op, c);
    if (tr)
        hc_trace_op_end(tr, rc);
}

HC_HOT void hc_op_end_inline(hc_comm_t *c, const hc_op_t *op, int rc)
{
    c->ops++;
    c->xnode_last = 0; /* (shared staging only) */
    if (rc == HCCL_SUCCESS && op->user_op == HCCL_REDUCE_AVG)
        scale_output(op, c);
}

HC_HOT void hc_op_init(hc_op_t *op, const char *api, hc_coll_t coll, uint64_t count,
                       HcclDataType dt, size_t esize, HcclReduceOp rop, void *send, void *recv)
{
    hc_zero(op, sizeof(*op)); /* not an inlined rep stos (src/base/util.h) */
    op->api = api;
    op->args.coll = coll;
    op->args.count = count;
    op->args.dtype = dt;
    op->args.esize = esize;
    op->args.op = rop;
    op->user_op = rop;
    op->send = send;
    op->recv = recv;
}

HC_HOT int hc_comm_run(hc_comm_t *c, const hc_op_t *op)
{
    int rc;
    if (hc_fastlane_run(c, op, &rc)) /* a tiny repeat, inline (src/comm/fastlane.h) */
        return rc;
    return hc_comm_run_general(c, op);
}

HC_HOT int hc_comm_run_general(hc_comm_t *c, const hc_op_t *op)
{
    hc_running_t r;
    int rc = hc_op_begin(c, op, &r);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_exec_t *ex = &r.e;
    rc = hc_comm_wait(c, &ex, 1, op->api);
    hc_op_end(&r, rc);
    return rc;
}
