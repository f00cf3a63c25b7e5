/*
 * src/group.c - HcclGroupStart/End and point-to-point Send/Recv.
 *
 * Between HcclGroupStart and HcclGroupEnd (nestable, per thread) calls are
 * queued. At the outermost HcclGroupEnd the Send/Recv of each communicator
 * become one schedule whose steps have no dependencies (everything is
 * posted at once, so no ordering can deadlock), each queued collective gets
 * its own executor, and all of them progress together under one deadline.
 *
 * Matching: the k-th Send from a to b matches the k-th Recv at b from a
 * (MPI's order rule), through per-peer counters in the tag's step field
 * and the sequence value reserved for point-to-point.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "api.h"
#include "comm.h"
#include "log.h"
#include "reduce.h"

typedef struct {
    int is_coll;
    hc_comm_t *c;
    hc_op_t op;           /* collectives */
    int is_send;          /* p2p */
    void *buf;
    uint64_t bytes;
    uint32_t peer;
} gitem_t;

typedef struct {
    int depth;
    gitem_t *items;
    uint32_t n, cap;
    int error;            /* a call inside the group failed to queue */
} gstate_t;

static __thread gstate_t g;

int hc_group_active(void)
{
    return g.depth > 0;
}

static gitem_t *push(void)
{
    if (g.n == g.cap) {
        uint32_t ncap = g.cap ? g.cap * 2 : 16;
        gitem_t *ni = realloc(g.items, ncap * sizeof(*ni));
        if (ni == NULL)
            return NULL;
        g.items = ni;
        g.cap = ncap;
    }
    gitem_t *it = &g.items[g.n++];
    memset(it, 0, sizeof(*it));
    return it;
}

int hc_group_add_coll(hc_comm_t *c, const hc_op_t *op)
{
    gitem_t *it = push();
    if (it == NULL) {
        g.error = HCCL_E_MEMORY;
        return HCCL_E_MEMORY;
    }
    it->is_coll = 1;
    it->c = c;
    it->op = *op;
    return HCCL_SUCCESS;
}

HcclResult HcclGroupStart(void)
{
    g.depth++;
    return HCCL_SUCCESS;
}

/* Run the queued items (g.items[0..n)). */
static int run_group(gitem_t *items, uint32_t n)
{
    int rc = HCCL_SUCCESS;
    /* one p2p schedule per distinct communicator */
    hc_comm_t **comms = calloc(n ? n : 1, sizeof(*comms));
    hc_sched_t *ps = calloc(n ? n : 1, sizeof(*ps));
    hc_running_t *runs = calloc(n ? n : 1, sizeof(*runs));
    hc_exec_t *pex = calloc(n ? n : 1, sizeof(*pex));
    hc_exec_t **all = calloc(2 * (size_t)(n ? n : 1), sizeof(*all));
    uint32_t ncomm = 0, nrun = 0, nall = 0, nstarted_p2p = 0;
    if (!comms || !ps || !runs || !pex || !all) {
        rc = HCCL_E_MEMORY;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (items[i].is_coll)
            continue;
        uint32_t k;
        for (k = 0; k < ncomm && comms[k] != items[i].c; k++)
            ;
        if (k == ncomm) {
            comms[ncomm] = items[i].c;
            hc_sched_init(&ps[ncomm], 1);
            ps[ncomm].algo = "p2p";
            ncomm++;
        }
        hc_comm_t *c = items[i].c;
        uint32_t tag;
        if (items[i].is_send) {
            tag = c->p2p_sent[items[i].peer]++ & HC_TAG_MAX;
            hc_sched_send(&ps[k], items[i].peer, tag, HC_SEND((uintptr_t)items[i].buf),
                          items[i].bytes, HC_NODEPS);
        } else {
            tag = c->p2p_recvd[items[i].peer]++ & HC_TAG_MAX;
            hc_sched_recv(&ps[k], items[i].peer, tag, HC_RECV((uintptr_t)items[i].buf),
                          items[i].bytes, HC_NODEPS);
        }
    }
    for (uint32_t k = 0; k < ncomm; k++) {
        if (ps[k].err) {
            rc = ps[k].err;
            goto out;
        }
    }
    /* start everything: p2p schedules address user memory directly (the
     * buffer bases are 0 and the offsets are the pointers) */
    for (uint32_t k = 0; k < ncomm; k++) {
        void *bufs[HC_NBUFS] = {NULL, NULL, NULL};
        pthread_mutex_lock(&comms[k]->ctx->lock);
        rc = hc_exec_start(&pex[k], &ps[k], bufs, &hc_ucx_ops, comms[k], comms[k]->rank,
                           comms[k]->id, HC_TAG_P2P_SEQ, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM,
                           NULL);
        pthread_mutex_unlock(&comms[k]->ctx->lock);
        if (rc != HCCL_SUCCESS)
            goto out;
        nstarted_p2p++;
        all[nall++] = &pex[k];
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!items[i].is_coll)
            continue;
        rc = hc_op_begin(items[i].c, &items[i].op, &runs[nrun]);
        if (rc != HCCL_SUCCESS)
            goto out;
        all[nall++] = &runs[nrun].e;
        nrun++;
    }
    if (nall)
        rc = hc_comm_wait(ncomm ? comms[0] : runs[0].c, all, nall, "HcclGroupEnd");
out:
    if (rc != HCCL_SUCCESS && nall) {
        hc_context_t *ctx = ncomm ? comms[0]->ctx : runs[0].c->ctx;
        pthread_mutex_lock(&ctx->lock);
        for (uint32_t i = 0; i < nall; i++)
            hc_exec_cancel(all[i], rc);
        pthread_mutex_unlock(&ctx->lock);
    }
    for (uint32_t i = 0; runs && i < nrun; i++)
        hc_op_end(&runs[i], rc);
    for (uint32_t k = 0; pex && k < nstarted_p2p; k++)
        hc_exec_fini(&pex[k]);
    for (uint32_t k = 0; ps && k < ncomm; k++)
        hc_sched_free(&ps[k]);
    free(comms);
    free(ps);
    free(runs);
    free(pex);
    free(all);
    return rc;
}

HcclResult HcclGroupEnd(void)
{
    if (g.depth == 0) {
        HC_ERROR(HC_SUB_COLL, "HcclGroupEnd without HcclGroupStart");
        return HCCL_E_PARA;
    }
    if (--g.depth > 0)
        return HCCL_SUCCESS;
    int rc = g.error;
    if (rc == HCCL_SUCCESS && g.n)
        rc = run_group(g.items, g.n);
    g.n = 0;
    g.error = HCCL_SUCCESS;
    return (HcclResult)rc;
}

static int p2p(const char *fn, int is_send, void *buf, uint64_t count, HcclDataType dt,
               uint32_t peer, HcclComm comm, void *stream)
{
    hc_comm_t *c = comm;
    size_t es;
    int rc = hc_api_check_comm_type(c, fn, dt, &es);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (peer >= c->nranks) {
        HC_ERROR(HC_SUB_COLL, "%s: %s %u is out of range (communicator %s has %u ranks)", fn,
                 is_send ? "destRank" : "srcRank", peer, c->name, c->nranks);
        return HCCL_E_PARA;
    }
    rc = hc_api_check_ptr(fn, is_send ? "sendBuf" : "recvBuf", buf, count);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (count > (UINT64_MAX >> 1) / es) {
        HC_ERROR(HC_SUB_COLL, "%s: count %llu is too large", fn, (unsigned long long)count);
        return HCCL_E_PARA;
    }
    if (c->cfg.entry_log)
        HC_INFO(HC_SUB_COLL, "%s: comm %s rank %u %s rank %u count %llu type %s", fn, c->name,
                c->rank, is_send ? "to" : "from", peer, (unsigned long long)count,
                hc_dtype_name(dt));
    if (count == 0)
        return HCCL_SUCCESS;
    if (stream != NULL && !hc_group_active()) {
        HC_ERROR(HC_SUB_COLL, "%s: stream must be NULL (blocking) in this version of hcomm", fn);
        return HCCL_E_NOT_SUPPORT;
    }
    gitem_t one, *it;
    if (hc_group_active()) {
        it = push();
        if (it == NULL) {
            g.error = HCCL_E_MEMORY;
            return HCCL_E_MEMORY;
        }
    } else {
        it = &one;
        memset(it, 0, sizeof(*it));
    }
    it->c = c;
    it->is_send = is_send;
    it->buf = buf;
    it->bytes = count * es;
    it->peer = peer;
    if (it == &one)
        return run_group(&one, 1);
    return HCCL_SUCCESS;
}

HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                    HcclComm comm, void *stream)
{
    return (HcclResult)p2p("HcclSend", 1, sendBuf, count, dataType, destRank, comm, stream);
}

HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                    HcclComm comm, void *stream)
{
    return (HcclResult)p2p("HcclRecv", 0, recvBuf, count, dataType, srcRank, comm, stream);
}
