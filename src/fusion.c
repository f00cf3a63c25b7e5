/*
 * src/fusion.c - gradient fusion: HcclAllReduceMulti, and the fused
 * AllReduces of a group (src/progress.c).
 *
 * The plan (made when the call is made, identical on every rank since the
 * counts are): tensors are taken in order; one of at least
 * HC_FUSION_DIRECT_MIN bytes (or larger than a bucket) is reduced alone,
 * straight from its input to its output, without a copy; the others are
 * packed in order into buckets of at most B bytes, each one AllReduce on a
 * staging buffer. B is HCCL_FUSION_THRESHOLD (default 64 MB), at most half
 * of HCCL_BUFFSIZE (two buckets are in flight), and, with
 * HCCL_OVERLAP_MEMCPY=1, also about 1/HC_FUSION_PIPE_DEPTH of what is
 * packed (at least HC_FUSION_MIN_BUCKET), so that there are buckets to
 * pipeline.
 *
 * The pipeline (HCCL_OVERLAP_MEMCPY=1): up to HC_FUSION_WINDOW units (a
 * bucket or a lone tensor) in flight, two staging buffers (double
 * buffering): while bucket k is on the network, bucket k+1 is packed and
 * bucket k-1 unpacked. Copies are done in pieces of HC_FUSION_COPY_CHUNK
 * bytes between two advances of the executors and the UCX worker, so the
 * transfers keep moving while the CPU copies. In a blocking call the
 * caller's thread does all of it; on a stream, the progress thread does
 * (the caller has already returned). With HCCL_OVERLAP_MEMCPY=0 the units
 * run one after another: pack, AllReduce, unpack.
 *
 * Gathered units: when the communicator's selection table would run an
 * AllReduce of the unit's size with the shared-memory DIRECT algorithm, no
 * tensor is packed at all. Consecutive tensors (up to B bytes) form one
 * AllReduce whose SEND and RECV are a scatter/gather list of the tensors
 * (hc_iov_t, src/exec.h): its copy and fold steps read and write the
 * tensors in place. One operation's overhead for the whole list and no
 * extra pass over memory. Decided with hc_comm_select, which every rank
 * answers alike (same sizes, same table, same staging decision); otherwise
 * (messages between hosts, deterministic mode, a forced algorithm, AVG)
 * the packing plan above.
 *
 * Unit k uses sequence number first+k, all reserved when the call is made;
 * unit k+254 (same 8-bit value) cannot start before unit k has finished
 * because at most HC_FUSION_WINDOW units are in flight.
 *
 * Results are bit-identical to per-tensor AllReduce when each element is
 * reduced in the same order whatever its position in the buffer: always at
 * 2 ranks, for integer types, and for the algorithms whose order depends
 * only on the rank (see docs/STREAMS.md). Network operations are counted
 * (hc_fusion_counters, and an INFO line per call).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "api.h"
#include "comm.h"
#include "log.h"
#include "reduce.h"
#include "stream.h"
#include "util.h"
#include "../coll/algos.h"

#define HC_FUSION_DEFAULT (64ull << 20)
/* Tensors from this size go alone: packing costs two copies (~0.2 ns/B
 * here), which at 16 KB (~3 us) already exceeds what a separate operation
 * costs once the shared-memory DIRECT path serves it (1-3 us for a 2-rank
 * AllReduce of that size). Measured with examples/fusion (docs/STREAMS.md):
 * 16 KB beat 64 KB and 256 KB at every BERT-Large scale tried. */
#ifndef HC_FUSION_DIRECT_MIN
#define HC_FUSION_DIRECT_MIN (16ull << 10)
#endif
/* Between hosts an operation costs tens of microseconds of network latency
 * (TCP: ~30 us for a small AllReduce, docs/CLUSTER.md) while packing costs
 * ~0.4 ns/B: packing wins up to tens of megabytes, so on a communicator
 * that spans hosts only tensors of a whole bucket's size go alone.
 * Measured with examples/fusion on the emulated cluster (docs/CLUSTER.md). */
#define HC_FUSION_DIRECT_MIN_NET (64ull << 20)
#define HC_FUSION_PIPE_DEPTH 4          /* aim for this many buckets */
#define HC_FUSION_MIN_BUCKET (1ull << 20)
#define HC_FUSION_WINDOW 3              /* units in flight (overlap on) */
#define HC_FUSION_COPY_CHUNK (256u << 10)
/* Tensors per HcclAllReduceMulti call. num_ops says how long the caller's
 * three arrays are, which nothing here can check: a garbage count (a
 * negative int cast to size_t, an uninitialised variable) would have every
 * entry up to it read, far past the arrays. Far above any model's tensor
 * count; the plan's tensor indices (uint32_t) stay well in range. */
#define HC_FUSION_MAX_TENSORS (1u << 20)

/* A unit: waits for the window, is packed (buckets), is ready and waits
 * for its begin turn (stream.h), runs its AllReduce, is unpacked. */
enum { U_WAIT = 0, U_PACK, U_READY, U_RUN, U_UNPACK, U_DONE };

typedef struct {
    uint32_t off, n;      /* tensors: m->order[off .. off+n) */
    uint64_t bytes;
    uint8_t direct;
    uint8_t gather;       /* tensors read and written in place (iov) */
    uint8_t in_place;     /* gather: some tensor is in place */
    uint8_t state;
    int8_t stage;         /* staging buffer (packed units) */
    uint32_t cur;         /* copy cursor: tensor (in order[]) and bytes done in it */
    uint64_t cur_off, pos;
    int began;            /* hc_op_begin called: its turn is used */
    int begun;            /* ... and succeeded: r is live */
    hc_running_t r;
} unit_t;

typedef struct {
    hc_task_t t;
    const void **in;
    void **out;
    uint64_t *cnt;
    uint32_t *order;      /* tensor indices, unit by unit */
    hc_iov_t *iov;        /* gathered units: per position in order[] */
    uint32_t ngather;
    size_t n;
    HcclDataType dt;
    size_t es;
    HcclReduceOp op;
    const char *api;
    unit_t *u;
    uint32_t nu, nbuckets;
    uint32_t seq0;
    uint64_t ticket0;     /* unit k begins at turn ticket0 + k */
    uint64_t bucket;
    void *stage[2];
    int stage_user[2];    /* unit using it, -1 = free */
    uint64_t stage_held;  /* staging budget taken (streams) */
    uint32_t next, oldest;
    uint32_t window;
    int overlap;
    int started;
    hc_trace_op_t tr;
} multi_t;

static hc_fusion_counters_t g_count;

void hc_fusion_counters(hc_fusion_counters_t *out)
{
    out->calls = __atomic_load_n(&g_count.calls, __ATOMIC_RELAXED);
    out->tensors = __atomic_load_n(&g_count.tensors, __ATOMIC_RELAXED);
    out->net_ops = __atomic_load_n(&g_count.net_ops, __ATOMIC_RELAXED);
    out->buckets = __atomic_load_n(&g_count.buckets, __ATOMIC_RELAXED);
    out->gathered = __atomic_load_n(&g_count.gathered, __ATOMIC_RELAXED);
}

HcclResult HcclGetFusionCounters(uint64_t *fusedCalls, uint64_t *tensors, uint64_t *networkOps)
{
    hc_fusion_counters_t c;
    hc_fusion_counters(&c);
    if (fusedCalls)
        *fusedCalls = c.calls;
    if (tensors)
        *tensors = c.tensors;
    if (networkOps)
        *networkOps = c.net_ops;
    return HCCL_SUCCESS;
}

static uint64_t bucket_limit(const hc_comm_t *c, size_t es)
{
    uint64_t b = c->cfg->fusion_threshold ? c->cfg->fusion_threshold : HC_FUSION_DEFAULT;
    if (c->cfg->buffsize && b > c->cfg->buffsize / 2)
        b = c->cfg->buffsize / 2;
    b = b / es * es;
    return b < es ? es : b;
}

/* Start unit k's AllReduce (its data is in place: packed, or a lone tensor). */
static int unit_run(multi_t *m, uint32_t k)
{
    unit_t *u = &m->u[k];
    hc_op_t o;
    void *send, *recv;
    const char *api;
    if (u->gather) {
        send = recv = NULL;
        api = "HcclAllReduceMulti gathered";
    } else if (u->direct) {
        uint32_t i = m->order[u->off];
        send = (void *)m->in[i];
        recv = m->out[i];
        api = "HcclAllReduceMulti tensor";
    } else {
        send = recv = m->stage[u->stage];
        api = "HcclAllReduceMulti bucket";
    }
    hc_op_init(&o, api, HC_COLL_ALLREDUCE, u->bytes / m->es, m->dt, m->es, m->op, send, recv);
    if (u->gather) {
        o.iov = m->iov + u->off;
        o.niov = u->n;
    }
    o.args.in_place = u->gather ? u->in_place : send == recv;
    o.args.iov = u->gather;
    o.has_seq = 1;
    o.seq = hc_seq_nth(m->seq0, k);
    o.ticket = m->ticket0 == HC_NO_TICKET ? HC_NO_TICKET : m->ticket0 + k;
    o.stream_id = m->t.stream_id;
    o.t_enq = m->t.t_enq;
    u->began = 1;
    int rc = hc_op_begin(m->t.c, &o, &u->r);
    if (rc != HCCL_SUCCESS)
        return rc;
    u->begun = 1;
    u->state = U_RUN;
    return HCCL_SUCCESS;
}

/* Copy up to *budget bytes of unit u between its tensors and its staging
 * buffer (pack: in -> stage, unpack: stage -> out). Returns 1 when the
 * unit's copy is complete. */
static int unit_copy(multi_t *m, unit_t *u, int pack, uint64_t *budget)
{
    char *stage = m->stage[u->stage];
    uint64_t t0 = m->tr.id ? hc_trace_now() : 0, moved = 0;
    while (u->cur < u->n && *budget > 0) {
        uint32_t i = m->order[u->off + u->cur];
        uint64_t len = m->cnt[i] * m->es - u->cur_off;
        if (len > *budget)
            len = *budget;
        if (len) {
            if (pack)
                hc_copy(stage + u->pos, (const char *)m->in[i] + u->cur_off, len);
            else
                hc_copy((char *)m->out[i] + u->cur_off, stage + u->pos, len);
        }
        u->pos += len;
        u->cur_off += len;
        moved += len;
        *budget -= len;
        if (u->cur_off == m->cnt[i] * m->es) {
            u->cur++;
            u->cur_off = 0;
        }
    }
    if (t0 && moved)
        hc_trace_span(&m->tr, pack ? "pack" : "unpack", t0, moved);
    if (u->cur < u->n)
        return 0;
    u->cur = 0;
    u->cur_off = 0;
    u->pos = 0;
    return 1;
}

static int stage_take(multi_t *m, uint32_t k)
{
    for (int b = 0; b < 2; b++) {
        if (m->stage_user[b] >= 0)
            continue;
        if (m->stage[b] == NULL) {
            if (!hc_stream_stage_get(&m->t, m->bucket))
                return -1; /* the streams' staging budget is used up: later */
            m->stage_held += m->bucket;
            int rc;
            m->stage[b] = hc_ctx_tmp_get(m->t.c->ctx, m->bucket, &rc);
            if (m->stage[b] == NULL)
                return -2;
        }
        m->stage_user[b] = (int)k;
        return b;
    }
    return -1;
}

static void multi_cancel(hc_task_t *t, int rc)
{
    multi_t *m = (multi_t *)t;
    for (uint32_t k = m->oldest; k < m->next; k++)
        if (m->u[k].state == U_RUN && m->u[k].begun) {
            pthread_mutex_lock(&t->c->ctx->lock);
            hc_exec_cancel(&m->u[k].r.e, rc);
            pthread_mutex_unlock(&t->c->ctx->lock);
        }
}

static int multi_progress(hc_task_t *t)
{
    multi_t *m = (multi_t *)t;
    int rc;
    /* transfers */
    for (uint32_t k = m->oldest; k < m->next; k++) {
        unit_t *u = &m->u[k];
        if (u->state != U_RUN)
            continue;
        rc = hc_task_exec_progress(t->c, &u->r.e);
        if (rc == HCCL_E_AGAIN)
            continue;
        if (rc != HCCL_SUCCESS) {
            multi_cancel(t, rc);
            return rc;
        }
        hc_op_end(&u->r, HCCL_SUCCESS);
        u->begun = 0;
        u->state = u->direct || u->gather ? U_DONE : U_UNPACK;
        t->busy = 1;
    }
    /* copies: unpacking first frees a buffer */
    uint64_t budget = m->overlap ? HC_FUSION_COPY_CHUNK : UINT64_MAX;
    for (uint32_t k = m->oldest; k < m->next && budget; k++) {
        unit_t *u = &m->u[k];
        if (u->state != U_UNPACK)
            continue;
        t->busy = 1;
        if (unit_copy(m, u, 0, &budget)) {
            m->stage_user[u->stage] = -1;
            u->state = U_DONE;
        }
    }
    for (;;) {
        for (uint32_t k = m->oldest; k < m->next; k++) {
            unit_t *u = &m->u[k];
            if (u->state == U_PACK && budget) {
                t->busy = 1;
                if (unit_copy(m, u, 1, &budget))
                    u->state = U_READY;
            }
            if (u->state == U_READY) { /* in order: turns are in unit order */
                uint64_t tk = m->ticket0 == HC_NO_TICKET ? HC_NO_TICKET : m->ticket0 + k;
                if (!hc_stream_turn(t->c, tk))
                    break;
                if ((rc = unit_run(m, k)) != HCCL_SUCCESS) {
                    multi_cancel(t, rc);
                    return rc;
                }
                t->busy = 1;
            }
        }
        /* start the next units */
        int started = 0;
        while (m->next < m->nu && m->next - m->oldest < m->window) {
            unit_t *u = &m->u[m->next];
            if (u->direct || u->gather) {
                u->state = U_READY; /* no copy: begins at its turn */
            } else {
                int b = stage_take(m, m->next);
                if (b == -2) {
                    multi_cancel(t, HCCL_E_MEMORY);
                    return HCCL_E_MEMORY;
                }
                if (b < 0)
                    break;
                u->stage = (int8_t)b;
                u->state = U_PACK;
            }
            m->next++;
            started = 1;
            t->busy = 1;
        }
        if (!started)
            break;
    }
    while (m->oldest < m->nu && m->u[m->oldest].state == U_DONE)
        m->oldest++;
    return m->oldest == m->nu ? HCCL_SUCCESS : HCCL_E_AGAIN;
}

static int multi_start(hc_task_t *t)
{
    multi_t *m = (multi_t *)t;
    m->started = 1;
    if (hc_trace_on) {
        hc_trace_set_rank((int)t->c->rank);
        m->tr.name = "AllReduceMulti";
        m->tr.algo = "fused";
        m->tr.comm_id = t->c->id;
        m->tr.seq = m->seq0;
        m->tr.stream = t->stream_id;
        m->tr.t_enq = t->t_enq;
        for (size_t i = 0; i < m->n; i++)
            m->tr.bytes += m->cnt[i] * m->es;
        hc_trace_op_begin(&m->tr);
    }
    return multi_progress(t);
}

static void multi_finish(hc_task_t *t, int rc)
{
    multi_t *m = (multi_t *)t;
    for (uint32_t k = 0; k < m->nu; k++)
        if (m->u[k].begun) {
            hc_op_end(&m->u[k].r, rc);
            m->u[k].begun = 0;
        }
    for (int b = 0; b < 2; b++) {
        if (m->stage[b])
            hc_ctx_tmp_put(t->c->ctx, m->stage[b]);
        m->stage[b] = NULL;
    }
    if (m->stage_held)
        hc_stream_stage_put(t, m->stage_held);
    m->stage_held = 0;
    if (m->started && m->tr.id)
        hc_trace_op_end(&m->tr, rc);
    m->started = 0;
}

static void multi_describe(hc_task_t *t, char *buf, size_t len)
{
    multi_t *m = (multi_t *)t;
    for (uint32_t k = m->oldest; k < m->next; k++)
        if (m->u[k].state == U_RUN) {
            char w[160];
            hc_exec_describe_wait(&m->u[k].r.e, w, sizeof(w), NULL);
            snprintf(buf, len, "unit %u/%u (%s, %llu B, op seq %u): %s", k, m->nu,
                     m->u[k].gather ? "gathered" : m->u[k].direct ? "alone" : "bucket",
                     (unsigned long long)m->u[k].bytes,
                     m->u[k].r.e.seq, w);
            return;
        }
    snprintf(buf, len, "unit %u/%u (copying)", m->oldest, m->nu);
}

static void multi_destroy(hc_task_t *t)
{
    multi_t *m = (multi_t *)t;
    if (m->ticket0 != HC_NO_TICKET) /* units that never began: release their turns */
        for (uint32_t k = 0; k < m->nu; k++)
            if (!m->u[k].began)
                hc_stream_begun(t->c, m->ticket0 + k);
    hc_task_free_common(t);
    free(m->in);
    free(m->out);
    free(m->cnt);
    free(m->order);
    free(m->iov);
    free(m->u);
    free(m);
}

static const hc_task_vt_t multi_vt = {
    .name = "multi",
    .start = multi_start,
    .progress = multi_progress,
    .cancel = multi_cancel,
    .finish = multi_finish,
    .describe = multi_describe,
    .destroy = multi_destroy,
};

/* Would the communicator run an AllReduce of `count` elements with DIRECT? */
static int direct_for(multi_t *m, uint64_t count, int in_place)
{
    hc_coll_args_t a;
    memset(&a, 0, sizeof(a));
    a.coll = HC_COLL_ALLREDUCE;
    a.count = count;
    a.dtype = m->dt;
    a.esize = m->es;
    a.op = m->op;
    a.in_place = in_place;
    a.iov = 1; /* what a gathered unit would be */
    const hc_algo_t *algo = hc_comm_select(m->t.c, &a);
    return algo && algo->id == HC_ALLREDUCE_DIRECT;
}

/* Tensor i (b bytes) as a unit of its own, reduced in place of the user's
 * buffers as an ordinary AllReduce; *nord: next position in order[]. */
static void unit_alone(multi_t *m, uint32_t *nord, size_t i, uint64_t b)
{
    unit_t *u = &m->u[m->nu++];
    u->off = *nord;
    u->n = 1;
    u->bytes = b;
    u->direct = 1;
    m->order[(*nord)++] = (uint32_t)i;
}

/* The gathered plan: consecutive tensors up to `limit` bytes per unit, a
 * tensor of `limit` or more alone. 0: not possible here (the caller plans
 * with packing). */
static int plan_gather(multi_t *m, uint64_t limit)
{
    if (m->op == HCCL_REDUCE_AVG || m->t.c->nranks < 2)
        return 0;
    m->u = calloc(m->n ? m->n : 1, sizeof(unit_t));
    m->order = malloc((m->n ? m->n : 1) * sizeof(uint32_t));
    m->iov = malloc((m->n ? m->n : 1) * sizeof(hc_iov_t));
    if (m->u == NULL || m->order == NULL || m->iov == NULL)
        return -1;
    uint32_t nord = 0;
    unit_t *open = NULL;
    for (size_t i = 0; i < m->n; i++) {
        const uint64_t b = m->cnt[i] * m->es;
        if (b == 0)
            continue;
        if (b >= limit) { /* alone, as an ordinary AllReduce */
            unit_alone(m, &nord, i, b);
            open = NULL;
            continue;
        }
        if (open && open->bytes + b > limit)
            open = NULL;
        if (open == NULL) {
            open = &m->u[m->nu++];
            open->off = nord;
            open->gather = 1;
        }
        hc_iov_t *v = &m->iov[nord];
        v->send = m->in[i];
        v->recv = m->out[i];
        v->off = open->bytes;
        v->bytes = b;
        m->order[nord++] = (uint32_t)i;
        open->n++;
        open->bytes += b;
        open->in_place |= m->in[i] == m->out[i];
    }
    for (uint32_t k = 0; k < m->nu; k++)
        if (m->u[k].gather && !direct_for(m, m->u[k].bytes / m->es, m->u[k].in_place)) {
            free(m->u);
            free(m->order);
            free(m->iov);
            m->u = NULL;
            m->order = NULL;
            m->iov = NULL;
            m->nu = 0;
            return 0;
        }
    for (uint32_t k = 0; k < m->nu; k++)
        m->ngather += m->u[k].gather;
    m->bucket = limit;
    return 1;
}

/* Cut the tensors into units (see the header). */
static int plan(multi_t *m)
{
    int g = plan_gather(m, bucket_limit(m->t.c, m->es));
    if (g)
        return g > 0 ? HCCL_SUCCESS : HCCL_E_MEMORY;
    const uint64_t limit = bucket_limit(m->t.c, m->es);
    const uint64_t dmin = m->t.c->view.nnodes > 1 ? HC_FUSION_DIRECT_MIN_NET : HC_FUSION_DIRECT_MIN;
    const uint64_t direct_min = dmin < limit ? dmin : limit;
    uint64_t packed = 0;
    for (size_t i = 0; i < m->n; i++) {
        uint64_t b = m->cnt[i] * m->es;
        if (b && b < direct_min)
            packed += b;
    }
    uint64_t B = limit;
    if (m->overlap) {
        uint64_t want = (packed + HC_FUSION_PIPE_DEPTH - 1) / HC_FUSION_PIPE_DEPTH;
        if (want < HC_FUSION_MIN_BUCKET)
            want = HC_FUSION_MIN_BUCKET;
        want = (want + m->es - 1) / m->es * m->es;
        if (want < B)
            B = want;
    }
    m->bucket = B;
    m->u = calloc(m->n ? m->n : 1, sizeof(unit_t));
    m->order = malloc((m->n ? m->n : 1) * sizeof(uint32_t));
    if (m->u == NULL || m->order == NULL)
        return HCCL_E_MEMORY;
    /* the open bucket collects its tensors at the end of order[] (they are
     * moved into place when it closes), lone tensors go in front */
    uint32_t nord = 0, nb_open = 0;
    uint32_t *open = malloc((m->n ? m->n : 1) * sizeof(uint32_t));
    if (open == NULL)
        return HCCL_E_MEMORY;
    uint64_t fill = 0;
    for (size_t i = 0; i <= m->n; i++) {
        uint64_t b = i < m->n ? m->cnt[i] * m->es : 0;
        /* a tensor larger than a bucket goes alone too (a bucket is staged
         * in B bytes) */
        const int alone = b >= direct_min || b > B;
        int close = i == m->n ? nb_open > 0 : (alone ? 0 : fill + b > B);
        if (close && fill > 0) {
            unit_t *u = &m->u[m->nu++];
            u->off = nord;
            u->n = nb_open;
            u->bytes = fill;
            memcpy(m->order + nord, open, nb_open * sizeof(uint32_t));
            nord += nb_open;
            nb_open = 0;
            fill = 0;
            m->nbuckets++;
        }
        if (i == m->n || b == 0)
            continue;
        if (alone) {
            unit_alone(m, &nord, i, b);
        } else {
            open[nb_open++] = (uint32_t)i;
            fill += b;
        }
    }
    free(open);
    return HCCL_SUCCESS;
}

hc_task_t *hc_task_multi(hc_comm_t *c, const void *const *inputs, void *const *outputs,
                         const uint64_t *counts, size_t n, HcclDataType dt, size_t es,
                         HcclReduceOp op, const char *api, void *stream, hc_task_t *owner,
                         int *rc)
{
    hc_task_prepare_coll(c, stream);
    multi_t *m = calloc(1, sizeof(*m));
    if (m == NULL)
        goto nomem;
    hc_task_init(&m->t, &multi_vt, c, api, stream);
    m->t.owner = owner;
    m->n = n;
    m->dt = dt;
    m->es = es;
    m->op = op;
    m->api = api;
    m->overlap = c->cfg->overlap_memcpy;
    m->window = m->overlap ? HC_FUSION_WINDOW : 1;
    m->stage_user[0] = m->stage_user[1] = -1;
    m->in = malloc((n ? n : 1) * sizeof(*m->in));
    m->out = malloc((n ? n : 1) * sizeof(*m->out));
    m->cnt = malloc((n ? n : 1) * sizeof(*m->cnt));
    if (m->in == NULL || m->out == NULL || m->cnt == NULL)
        goto nomem;
    memcpy(m->in, inputs, n * sizeof(*m->in));
    memcpy(m->out, outputs, n * sizeof(*m->out));
    memcpy(m->cnt, counts, n * sizeof(*m->cnt));
    if (plan(m) != HCCL_SUCCESS)
        goto nomem;
    /* memory for the stream's ordering: the spans of the inputs and outputs */
    uintptr_t ilo = UINTPTR_MAX, ihi = 0, olo = UINTPTR_MAX, ohi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = counts[i] * es;
        if (b == 0)
            continue;
        uintptr_t a = (uintptr_t)inputs[i], o = (uintptr_t)outputs[i];
        ilo = a < ilo ? a : ilo;
        ihi = a + b > ihi ? a + b : ihi;
        olo = o < olo ? o : olo;
        ohi = o + b > ohi ? o + b : ohi;
    }
    if (ihi)
        hc_task_add_range(&m->t, (const void *)ilo, ihi - ilo, 0);
    if (ohi)
        hc_task_add_range(&m->t, (const void *)olo, ohi - olo, 1);
    m->seq0 = hc_task_take_seq(&m->t, c, m->nu, &m->ticket0);
    __atomic_add_fetch(&g_count.calls, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_count.tensors, n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_count.net_ops, m->nu, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_count.buckets, m->nbuckets, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_count.gathered, m->ngather, __ATOMIC_RELAXED);
    if (m->ngather)
        HC_INFO(HC_SUB_COLL, "%s: %zu tensors in %u AllReduce operations (gathered in place, "
                "DIRECT, at most %llu bytes each)", api, n, m->nu,
                (unsigned long long)m->bucket);
    else
        HC_INFO(HC_SUB_COLL, "%s: %zu tensors in %u AllReduce operations (%u packed buckets "
                "of at most %llu bytes, %u alone), overlap %s", api, n, m->nu, m->nbuckets,
                (unsigned long long)m->bucket, m->nu - m->nbuckets,
                m->overlap ? "on" : "off");
    *rc = HCCL_SUCCESS;
    return &m->t;
nomem:
    HC_ERROR(HC_SUB_COLL, "%s: out of memory for %zu tensors", api, n);
    if (m)
        multi_destroy(&m->t);
    *rc = HCCL_E_MEMORY;
    return NULL;
}

HcclResult HcclAllReduceMulti(const void **inputs, void **outputs, const uint64_t *counts,
                              size_t num_ops, HcclDataType dtype, HcclReduceOp op,
                              HcclComm comm, void *handle)
{
    static const char fn[] = "HcclAllReduceMulti";
    hc_comm_t *c;
    size_t es;
    int rc = hc_api_check_comm_type(comm, fn, dtype, &es, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    rc = hc_reduce_check(dtype, op);
    if (rc != HCCL_SUCCESS) {
        HC_ERROR(HC_SUB_COLL, "%s: op %d with dataType %d: %s", fn, (int)op, (int)dtype,
                 rc == HCCL_E_PARA ? "unknown op" : "not supported");
        return rc;
    }
    void *stream;
    rc = hc_stream_get(handle, fn, &stream);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (num_ops == 0)
        return HCCL_SUCCESS;
    if (inputs == NULL || outputs == NULL || counts == NULL) {
        HC_ERROR(HC_SUB_COLL, "%s: %s is NULL with num_ops %zu", fn,
                 inputs == NULL ? "inputs" : outputs == NULL ? "outputs" : "counts", num_ops);
        return HCCL_E_PTR;
    }
    if (num_ops > HC_FUSION_MAX_TENSORS) {
        HC_ERROR(HC_SUB_COLL, "%s: num_ops %zu is more than %u tensors in one call; the arrays "
                 "were not read", fn, num_ops, HC_FUSION_MAX_TENSORS);
        return HCCL_E_PARA;
    }
    for (size_t i = 0; i < num_ops; i++) {
        if (counts[i] && (inputs[i] == NULL || outputs[i] == NULL)) {
            HC_ERROR(HC_SUB_COLL, "%s: %s[%zu] is NULL with count %llu", fn,
                     inputs[i] == NULL ? "inputs" : "outputs", i,
                     (unsigned long long)counts[i]);
            return HCCL_E_PTR;
        }
        if (counts[i] > (UINT64_MAX >> 1) / es) {
            HC_ERROR(HC_SUB_COLL, "%s: counts[%zu] = %llu is too large", fn, i,
                     (unsigned long long)counts[i]);
            return HCCL_E_PARA;
        }
        uint64_t b = counts[i] * es;
        uintptr_t a = (uintptr_t)inputs[i], o = (uintptr_t)outputs[i];
        if (b && a != o && a < o + b && o < a + b) {
            HC_ERROR(HC_SUB_COLL, "%s: inputs[%zu] and outputs[%zu] overlap without being the "
                     "same buffer (in place)", fn, i, i);
            return HCCL_E_PARA;
        }
    }
    if (c->cfg->entry_log)
        HC_INFO(HC_SUB_COLL, "%s: comm %s rank %u, %zu tensors, type %s op %s", fn, c->name,
                c->rank, num_ops, hc_dtype_name(dtype), hc_op_name(op));
    if (hc_group_active()) { /* one AllReduce per tensor; the group fuses them */
        for (size_t i = 0; i < num_ops; i++) {
            if (counts[i] == 0)
                continue;
            hc_op_t o;
            hc_op_init(&o, "HcclAllReduce", HC_COLL_ALLREDUCE, counts[i], dtype, es, op,
                       (void *)inputs[i], outputs[i]);
            o.args.in_place = inputs[i] == outputs[i];
            rc = hc_group_add_coll(c, &o, stream);
            if (rc != HCCL_SUCCESS)
                return rc;
        }
        return HCCL_SUCCESS;
    }
    hc_task_t *t = hc_task_multi(c, (const void *const *)inputs, (void *const *)outputs, counts,
                                 num_ops, dtype, es, op, fn, stream, NULL, &rc);
    return t ? hc_task_dispatch(t) : rc;
}
