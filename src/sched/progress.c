/*
 * src/sched/progress.c - the task kinds that streams and groups run, and the
 * blocking runner (see stream.h).
 *
 *  - coll: one collective; start = hc_op_begin with the sequence number
 *    reserved at creation, progress = the executor.
 *  - p2p: the Send/Recv of a group on one communicator as one schedule
 *    whose steps have no dependencies (everything is posted at once, so no
 *    ordering of the calls can deadlock). The k-th Send from a to b matches
 *    the k-th Recv at b from a (MPI's order rule) through per-peer counters
 *    in the tag's step field and the sequence value reserved for
 *    point-to-point; the counters advance when the task is created, i.e.
 *    in program order.
 *  - group: HcclGroupStart/End: the p2p tasks, one task per collective,
 *    and AllReduces of one communicator with the same type and op fused
 *    into one HcclAllReduceMulti task (src/sched/fusion.c); all progress together
 *    under one deadline and the first error cancels the rest.
 *
 * The blocking runner drives a task in the caller's thread with the one
 * wait (src/exec/wait.h), as comm.c's hc_comm_wait drives a single executor.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "src/base/log.h"
#include "fusion.h"
#include "progress.h"
#include "stream.h"
#include "src/transport/transport_ucx.h"
#include "src/base/util.h"
#include "src/exec/wait.h"

/* ---- executor helpers ------------------------------------------------- */

/* A receive posted from a dead peer never completes (UCX-FACTS.md): fail
 * the step when its peer's endpoint has failed. ctx->lock held. */
static int failed_peer(hc_exec_t *e)
{
    if (e->tp != &hc_ucx_tp)
        return HCCL_SUCCESS;
    const hc_comm_t *c = hc_comm_of_eps(e->tp_ctx);
    for (uint32_t k = 0; k < e->nposted; k++) {
        const uint32_t si = e->posted[k];
        const hc_step_t *t = &e->s->steps[si];
        hc_peer_t *p = c->ctx->peers[c->peer[e->x[si].peer]]; /* WAIT: where it is */
        if (e->x[si].status != HCCL_E_AGAIN || hc_peer_failed(p) == 0)
            continue;
        HC_ERROR(HC_SUB_STREAM, "comm %s rank %u, op seq %u, algorithm %s: step %u/%u %s %s "
                 "rank %u failed: process %s:%d %s (%s)", c->name, c->rank, e->seq,
                 e->s->algo ? e->s->algo : "?", si, e->s->nsteps,
                 t->kind == HC_STEP_SEND ? "SEND" : "RECV",
                 t->kind == HC_STEP_SEND ? "to" : "from", e->x[si].peer, p->card.host, p->card.pid,
                 p->departed ? "left before this step (it destroyed its communicators)"
                             : "is unreachable",
                 HcclGetErrorString(p->failed));
        return p->failed;
    }
    return HCCL_SUCCESS;
}

int hc_task_exec_progress(hc_comm_t *c, hc_exec_t *e)
{
    pthread_mutex_lock(&c->ctx->lock);
    int rc = hc_exec_progress(e);
    if (rc == HCCL_E_AGAIN && e->nposted) {
        int fp = failed_peer(e);
        if (fp != HCCL_SUCCESS) {
            hc_exec_cancel(e, fp);
            rc = fp;
        }
    }
    pthread_mutex_unlock(&c->ctx->lock);
    if (rc == HCCL_E_AGAIN && e->s->seg_bytes)
        hc_stream_note_shm_wait();
    return rc;
}

static void exec_cancel(hc_comm_t *c, hc_exec_t *e, int rc)
{
    pthread_mutex_lock(&c->ctx->lock);
    hc_exec_cancel(e, rc);
    pthread_mutex_unlock(&c->ctx->lock);
}

/* ---- one collective ---------------------------------------------------- */

typedef struct {
    hc_task_t t;
    hc_op_t op;
    hc_running_t r;
    int began;   /* hc_op_begin was called (its turn is used) */
    int begun;   /* ... and succeeded: r is live */
    uint64_t *v; /* ALLTOALLV: private copies of the four arrays */
} coll_task_t;

static int coll_progress(hc_task_t *t)
{
    coll_task_t *k = (coll_task_t *)t;
    if (!k->began) {
        if (!hc_stream_turn(t->c, k->op.ticket)) /* earlier operations begin first */
            return HCCL_E_AGAIN;
        k->began = 1;
        int rc = hc_op_begin(t->c, &k->op, &k->r);
        if (rc != HCCL_SUCCESS)
            return rc;
        k->begun = 1;
    }
    return hc_task_exec_progress(t->c, &k->r.e);
}

static int coll_start(hc_task_t *t)
{
    return coll_progress(t);
}

static void coll_cancel(hc_task_t *t, int rc)
{
    coll_task_t *k = (coll_task_t *)t;
    if (k->begun)
        exec_cancel(t->c, &k->r.e, rc);
}

static void coll_finish(hc_task_t *t, int rc)
{
    coll_task_t *k = (coll_task_t *)t;
    if (k->begun)
        hc_op_end(&k->r, rc);
    k->begun = 0;
}

static void coll_describe(hc_task_t *t, char *buf, size_t len)
{
    coll_task_t *k = (coll_task_t *)t;
    char w[160];
    if (k->begun)
        hc_exec_describe_wait(&k->r.e, w, sizeof(w), NULL);
    else
        snprintf(w, sizeof(w), "not begun: waiting for earlier operations of the "
                 "communicator to begin");
    snprintf(buf, len, "op seq %u, algorithm %s: %s", k->op.seq,
             k->begun && k->r.e.s && k->r.e.s->algo ? k->r.e.s->algo : "?", w);
}

static void coll_destroy(hc_task_t *t)
{
    coll_task_t *k = (coll_task_t *)t;
    if (!k->began) /* skipped or failed before its turn: the turns behind it go on */
        hc_stream_begun(t->c, k->op.ticket);
    hc_task_free_common(t);
    free(k->v);
    free(k);
}

static const hc_task_vt_t coll_vt = {
    .name = "coll",
    .start = coll_start,
    .progress = coll_progress,
    .cancel = coll_cancel,
    .finish = coll_finish,
    .describe = coll_describe,
    .destroy = coll_destroy,
};

/* Memory a collective reads and writes (coll.h's buffer conventions). */
static void coll_ranges(hc_task_t *t, const hc_op_t *op, uint32_t nranks)
{
    const hc_coll_args_t *a = &op->args;
    const uint64_t blk = a->count * a->esize, all = blk * nranks;
    switch (a->coll) {
    case HC_COLL_ALLREDUCE:
    case HC_COLL_REDUCE:
    case HC_COLL_BROADCAST:
        hc_task_add_range(t, op->send, blk, a->coll == HC_COLL_BROADCAST);
        hc_task_add_range(t, op->recv, blk, 1);
        break;
    case HC_COLL_REDUCESCATTER:
    case HC_COLL_SCATTER:
        hc_task_add_range(t, op->send,
                          a->scounts ? hc_v_end(a->scounts, a->sdispls, nranks) * a->esize : all,
                          0);
        hc_task_add_range(t, op->recv, blk, 1);
        break;
    case HC_COLL_ALLGATHER:
        hc_task_add_range(t, op->send, blk, 0);
        hc_task_add_range(t, op->recv, all, 1);
        break;
    case HC_COLL_ALLTOALL:
        hc_task_add_range(t, op->send, all, 0);
        hc_task_add_range(t, op->recv, all, 1);
        break;
    case HC_COLL_ALLTOALLV:
        hc_task_add_range(t, op->send, hc_v_end(a->scounts, a->sdispls, nranks) * a->esize, 0);
        hc_task_add_range(t, op->recv, hc_v_end(a->rcounts, a->rdispls, nranks) * a->esize, 1);
        break;
    default: /* BARRIER: orders everything around it */
        t->fence = 1;
        break;
    }
}

hc_task_t *hc_task_coll(hc_comm_t *c, const hc_op_t *op, void *stream, hc_task_t *owner,
                        int *rc)
{
    hc_task_prepare_coll(c, stream);
    coll_task_t *k = calloc(1, sizeof(*k));
    if (k == NULL) {
        HC_ERROR(HC_SUB_STREAM, "%s: out of memory", op->api);
        *rc = HCCL_E_MEMORY;
        return NULL;
    }
    hc_task_init(&k->t, &coll_vt, c, op->api, stream);
    k->t.owner = owner;
    k->op = *op;
    if (hc_args_v(&op->args) && stream) {
        /* the user's arrays may be gone when the task starts */
        const uint32_t n = c->nranks;
        const uint64_t **arr[4] = {&k->op.args.scounts, &k->op.args.sdispls,
                                   &k->op.args.rcounts, &k->op.args.rdispls};
        k->v = malloc(4 * (size_t)n * sizeof(uint64_t));
        if (k->v == NULL) {
            HC_ERROR(HC_SUB_STREAM, "%s: out of memory", op->api);
            free(k);
            *rc = HCCL_E_MEMORY;
            return NULL;
        }
        for (int i = 0; i < 4; i++) /* (ReduceScatter's V form has no receive arrays) */
            if (*arr[i]) {
                memcpy(k->v + i * n, *arr[i], n * sizeof(uint64_t));
                *arr[i] = k->v + i * n;
            }
    }
    coll_ranges(&k->t, &k->op, c->nranks);
    k->op.stream_id = k->t.stream_id;
    k->op.t_enq = k->t.t_enq;
    k->op.has_seq = 1;
    k->op.seq = hc_task_take_seq(&k->t, c, 1, &k->op.ticket);
    *rc = HCCL_SUCCESS;
    return &k->t;
}

/* ---- the point-to-point calls of a group, one communicator ------------- */

typedef struct {
    hc_task_t t;
    hc_sched_t s;
    hc_exec_t e;
    hc_trace_op_t tr;
    int begun;
} p2p_task_t;

static int p2p_start(hc_task_t *t)
{
    p2p_task_t *k = (p2p_task_t *)t;
    hc_comm_t *c = t->c;
    void *bufs[HC_NBUFS] = {NULL, NULL, NULL}; /* offsets are the user's pointers */
    int rc = hc_exec_start(&k->e, &k->s, bufs, c->ctx->tp, &c->eps, c->rank, c->id,
                           HC_TAG_P2P_SEQ, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, NULL);
    if (rc != HCCL_SUCCESS)
        return rc;
    k->begun = 1;
    if (hc_trace_on) {
        hc_trace_set_rank((int)c->rank);
        k->tr.name = "SendRecv";
        k->tr.algo = "p2p";
        k->tr.comm_id = c->id;
        k->tr.seq = HC_TAG_P2P_SEQ;
        k->tr.stream = t->stream_id;
        k->tr.t_enq = t->t_enq;
        for (uint32_t i = 0; i < k->s.nsteps; i++)
            k->tr.bytes += k->s.steps[i].bytes;
        hc_trace_op_begin(&k->tr);
        k->e.trace = &k->tr;
    }
    return hc_task_exec_progress(c, &k->e);
}

static int p2p_progress(hc_task_t *t)
{
    p2p_task_t *k = (p2p_task_t *)t;
    return hc_task_exec_progress(t->c, &k->e);
}

static void p2p_cancel(hc_task_t *t, int rc)
{
    p2p_task_t *k = (p2p_task_t *)t;
    if (k->begun)
        exec_cancel(t->c, &k->e, rc);
}

static void p2p_finish(hc_task_t *t, int rc)
{
    p2p_task_t *k = (p2p_task_t *)t;
    if (k->begun) {
        if (k->e.trace)
            hc_trace_op_end(k->e.trace, rc);
        hc_exec_fini(&k->e);
        t->c->ops++;
    }
    k->begun = 0;
}

static void p2p_describe(hc_task_t *t, char *buf, size_t len)
{
    p2p_task_t *k = (p2p_task_t *)t;
    if (k->begun)
        hc_exec_describe_wait(&k->e, buf, len, NULL);
    else
        snprintf(buf, len, "Send/Recv not started");
}

static void p2p_destroy(hc_task_t *t)
{
    p2p_task_t *k = (p2p_task_t *)t;
    hc_task_free_common(t);
    hc_sched_free(&k->s);
    free(k);
}

static const hc_task_vt_t p2p_vt = {
    .name = "p2p",
    .start = p2p_start,
    .progress = p2p_progress,
    .cancel = p2p_cancel,
    .finish = p2p_finish,
    .describe = p2p_describe,
    .destroy = p2p_destroy,
};

/* ---- groups ----------------------------------------------------------- */

typedef struct {
    hc_task_t t;
    hc_task_t **kids;
    uint32_t nkids;
} group_task_t;

/* A child that has finished releases what it holds at once: its scratch,
 * its schedule, and above all its shared-staging epoch, which the next
 * operation of the communicator waits for (src/comm/shm.h). */
static void kid_finish(hc_task_t *k, int rc)
{
    if (k->state != HC_TASK_DONE) {
        k->vt->finish(k, rc);
        k->state = HC_TASK_DONE;
    }
}

static int group_start(hc_task_t *t)
{
    group_task_t *g = (group_task_t *)t;
    int rc = HCCL_SUCCESS;
    for (uint32_t i = 0; i < g->nkids; i++) {
        hc_task_t *k = g->kids[i];
        k->t_start = t->t_start;
        k->status = k->vt->start(k);
        if (k->status != HCCL_E_AGAIN && k->status != HCCL_SUCCESS && rc == HCCL_SUCCESS)
            rc = k->status;
        else if (k->status == HCCL_SUCCESS)
            kid_finish(k, HCCL_SUCCESS);
    }
    if (rc != HCCL_SUCCESS) {
        t->vt->cancel(t, rc);
        return rc;
    }
    return t->vt->progress(t);
}

static int group_progress(hc_task_t *t)
{
    group_task_t *g = (group_task_t *)t;
    int pending = 0, rc = HCCL_SUCCESS;
    for (uint32_t i = 0; i < g->nkids; i++) {
        hc_task_t *k = g->kids[i];
        if (k->status != HCCL_E_AGAIN)
            continue;
        k->busy = 0;
        k->status = k->vt->progress(k);
        t->busy |= k->busy;
        if (k->status == HCCL_E_AGAIN)
            pending++;
        else if (k->status != HCCL_SUCCESS && rc == HCCL_SUCCESS)
            rc = k->status;
        else if (k->status == HCCL_SUCCESS)
            kid_finish(k, HCCL_SUCCESS);
    }
    if (rc != HCCL_SUCCESS) {
        t->vt->cancel(t, rc);
        return rc;
    }
    return pending ? HCCL_E_AGAIN : HCCL_SUCCESS;
}

static void group_cancel(hc_task_t *t, int rc)
{
    group_task_t *g = (group_task_t *)t;
    for (uint32_t i = 0; i < g->nkids; i++) {
        hc_task_t *k = g->kids[i];
        if (k->status == HCCL_E_AGAIN) {
            k->vt->cancel(k, rc);
            k->status = rc;
        }
    }
}

static void group_finish(hc_task_t *t, int rc)
{
    group_task_t *g = (group_task_t *)t;
    for (uint32_t i = 0; i < g->nkids; i++) {
        hc_task_t *k = g->kids[i];
        int krc = k->status == HCCL_E_AGAIN ? rc : k->status;
        kid_finish(k, krc);
        if (krc != HCCL_SUCCESS && k->c != t->c)
            hc_comm_set_error(k->c, krc);
    }
}

static void group_describe(hc_task_t *t, char *buf, size_t len)
{
    group_task_t *g = (group_task_t *)t;
    for (uint32_t i = 0; i < g->nkids; i++)
        if (g->kids[i]->status == HCCL_E_AGAIN) {
            char w[200];
            g->kids[i]->vt->describe(g->kids[i], w, sizeof(w));
            snprintf(buf, len, "%s on comm %s: %s", g->kids[i]->what, g->kids[i]->c->name, w);
            return;
        }
    snprintf(buf, len, "nothing");
}

static void group_destroy(hc_task_t *t)
{
    group_task_t *g = (group_task_t *)t;
    for (uint32_t i = 0; i < g->nkids; i++)
        g->kids[i]->vt->destroy(g->kids[i]);
    hc_task_free_common(t);
    free(g->kids);
    free(g);
}

static const hc_task_vt_t group_vt = {
    .name = "group",
    .start = group_start,
    .progress = group_progress,
    .cancel = group_cancel,
    .finish = group_finish,
    .describe = group_describe,
    .destroy = group_destroy,
};

static int fusable(const hc_gitem_t *a, const hc_gitem_t *b)
{
    return a->is_coll && b->is_coll && a->op.args.coll == HC_COLL_ALLREDUCE &&
           b->op.args.coll == HC_COLL_ALLREDUCE && a->c == b->c &&
           a->op.args.dtype == b->op.args.dtype && a->op.user_op == b->op.user_op;
}

/* The AllReduces of items[] fusable with items[i] (i included, in order),
 * as a HcclAllReduceMulti child. */
static hc_task_t *fused_child(group_task_t *g, const hc_gitem_t *items, uint32_t n, uint32_t i,
                              uint8_t *used, void *stream, int *rc)
{
    uint32_t m = 0;
    for (uint32_t j = i; j < n; j++)
        m += fusable(&items[i], &items[j]);
    const void **in = malloc(m * sizeof(*in));
    void **out = malloc(m * sizeof(*out));
    uint64_t *cnt = malloc(m * sizeof(*cnt));
    hc_task_t *k = NULL;
    if (in && out && cnt) {
        m = 0;
        for (uint32_t j = i; j < n; j++)
            if (fusable(&items[i], &items[j])) {
                in[m] = items[j].op.send;
                out[m] = items[j].op.recv;
                cnt[m] = items[j].op.args.count;
                used[j] = 1;
                m++;
            }
        const hc_op_t *o = &items[i].op;
        k = hc_task_multi(items[i].c, in, out, cnt, m, o->args.dtype, o->args.esize,
                          o->user_op, "HcclGroupEnd (fused AllReduce)", stream, &g->t, rc);
    } else {
        HC_ERROR(HC_SUB_STREAM, "HcclGroupEnd: out of memory");
        *rc = HCCL_E_MEMORY;
    }
    free(in);
    free(out);
    free(cnt);
    return k;
}

static hc_task_t *p2p_child(group_task_t *g, const hc_gitem_t *items, uint32_t n, uint32_t i,
                            uint8_t *used, void *stream, int *rc)
{
    p2p_task_t *k = calloc(1, sizeof(*k));
    if (k == NULL) {
        HC_ERROR(HC_SUB_STREAM, "HcclGroupEnd: out of memory");
        *rc = HCCL_E_MEMORY;
        return NULL;
    }
    hc_comm_t *c = items[i].c;
    hc_task_init(&k->t, &p2p_vt, c, "HcclSend/HcclRecv", stream);
    k->t.owner = &g->t;
    hc_sched_init(&k->s, 1);
    k->s.algo = "p2p";
    for (uint32_t j = i; j < n; j++) {
        const hc_gitem_t *it = &items[j];
        if (it->is_coll || it->c != c)
            continue;
        used[j] = 1;
        if (it->is_send) {
            uint32_t tag = c->p2p_sent[it->peer]++ & HC_TAG_MAX;
            hc_sched_send(&k->s, it->peer, tag, HC_SEND((uintptr_t)it->buf), it->bytes,
                          HC_NODEPS);
        } else {
            uint32_t tag = c->p2p_recvd[it->peer]++ & HC_TAG_MAX;
            hc_sched_recv(&k->s, it->peer, tag, HC_RECV((uintptr_t)it->buf), it->bytes,
                          HC_NODEPS);
        }
        hc_task_add_range(&g->t, it->buf, it->bytes, !it->is_send);
    }
    if (k->s.err) {
        HC_ERROR(HC_SUB_STREAM, "HcclGroupEnd: out of memory for the Send/Recv schedule");
        *rc = k->s.err;
        p2p_destroy(&k->t);
        return NULL;
    }
    *rc = HCCL_SUCCESS;
    return &k->t;
}

hc_task_t *hc_task_group(const hc_gitem_t *items, uint32_t n, void *stream, int *rc)
{
    group_task_t *g = calloc(1, sizeof(*g));
    if (g)
        g->kids = calloc(n ? n : 1, sizeof(*g->kids));
    uint8_t *used = calloc(n ? n : 1, 1);
    if (g == NULL || g->kids == NULL || used == NULL) {
        HC_ERROR(HC_SUB_STREAM, "HcclGroupEnd: out of memory");
        if (g)
            free(g->kids);
        free(g);
        free(used);
        *rc = HCCL_E_MEMORY;
        return NULL;
    }
    hc_task_init(&g->t, &group_vt, items[0].c, "HcclGroupEnd", stream);
    *rc = HCCL_SUCCESS;
    /* children in the order of the calls: sequence numbers follow it */
    for (uint32_t i = 0; i < n && *rc == HCCL_SUCCESS; i++) {
        if (used[i])
            continue;
        const hc_gitem_t *it = &items[i];
        hc_task_t *k = NULL;
        int nfuse = 0;
        for (uint32_t j = i; j < n && nfuse < 2; j++)
            nfuse += !used[j] && fusable(it, &items[j]);
        if (!it->is_coll) {
            k = p2p_child(g, items, n, i, used, stream, rc);
        } else if (nfuse >= 2) {
            k = fused_child(g, items, n, i, used, stream, rc);
        } else {
            used[i] = 1;
            k = hc_task_coll(it->c, &it->op, stream, &g->t, rc);
        }
        if (k == NULL)
            break;
        /* the group orders like one task: its children's ranges are its own */
        for (unsigned r = 0; r < k->nrng; r++)
            hc_task_add_range(&g->t, (const void *)k->rng[r].lo, k->rng[r].hi - k->rng[r].lo,
                              k->rng[r].write);
        g->t.fence |= k->fence;
        g->t.max_concurrent = k->max_concurrent < g->t.max_concurrent ? k->max_concurrent
                                                                      : g->t.max_concurrent;
        g->kids[g->nkids++] = k;
    }
    free(used);
    if (*rc != HCCL_SUCCESS) {
        group_destroy(&g->t);
        return NULL;
    }
    return &g->t;
}

/* ---- the blocking runner ---------------------------------------------- */

static void describe_task(void *p, char *buf, size_t len)
{
    hc_task_t *t = p;
    t->vt->describe(t, buf, len);
}

int hc_task_run(hc_task_t *t)
{
    hc_comm_t *c = t->c;
    hc_context_t *ctx = c->ctx;
    hc_wait_t w;
    hc_wait_begin(&w, c, t->what, hc_comm_spin_polls(c, 0));
    t->t_start = hc_now_s();
    int rc = t->vt->start(t);
    while (rc == HCCL_E_AGAIN) {
        t->busy = 0;
        rc = t->vt->progress(t);
        if (rc != HCCL_E_AGAIN)
            break;
        pthread_mutex_lock(&ctx->lock);
        unsigned events = hc_ctx_poll(ctx);
        pthread_mutex_unlock(&ctx->lock);
        if (events || t->busy) {
            hc_wait_moved(&w);
            continue;
        }
        rc = hc_wait_idle(&w, describe_task, t);
        if (rc != HCCL_SUCCESS) {
            t->vt->cancel(t, rc);
            break;
        }
        rc = HCCL_E_AGAIN;
    }
    hc_wait_end(&w);
    t->vt->finish(t, rc);
    if (rc != HCCL_SUCCESS)
        hc_comm_set_error(c, rc);
    t->vt->destroy(t);
    return rc;
}
