/*
 * src/group.c - HcclGroupStart/End and point-to-point Send/Recv.
 *
 * Between HcclGroupStart and HcclGroupEnd (nestable, per thread) calls are
 * queued. The outermost HcclGroupEnd turns them into one group task
 * (src/progress.c): the Send/Recv of each communicator become one schedule
 * whose steps have no dependencies (everything is posted at once, so no
 * ordering can deadlock), AllReduces of one communicator with the same
 * type and op are fused (src/fusion.c), every other collective gets its
 * own executor, and all progress together under one deadline. The group
 * runs blocking, or is enqueued as one unit on the stream its calls name
 * (all of them must name the same stream, or none).
 *
 * Matching: the k-th Send from a to b matches the k-th Recv at b from a
 * (MPI's order rule), through per-peer counters in the tag's step field
 * and the sequence value reserved for point-to-point.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "api.h"
#include "comm.h"
#include "gpu_coll.h"
#include "log.h"
#include "reduce.h"
#include "stream.h"
#include "util.h"

typedef hc_gitem_t gitem_t;

typedef struct {
    int depth;
    gitem_t *items;
    uint32_t n, cap;
    int error;            /* a call inside the group failed to queue */
    void *stream;         /* the stream of the queued calls */
    int mixed;            /* calls named different streams */
} gstate_t;

static __thread gstate_t g;
/* g.items is heap memory: a thread that used a group frees it when it
 * exits through this key (its value is g.items, kept current by push). */
static pthread_key_t g_items_key;
static pthread_once_t g_items_once = PTHREAD_ONCE_INIT;

static void items_key_make(void)
{
    (void)pthread_key_create(&g_items_key, free);
}
/* Threads of the process inside a group. Every collective asks whether
 * its thread is in one; while none is, the answer needs no thread-local
 * access, which in a shared library is a call into the dynamic linker
 * (__tls_get_addr) touching three more pages per call (docs/PERFORMANCE.md,
 * "Hot code in one place"). A thread's own increment is visible to it, so
 * the test below is exact for the calling thread. */
static int g_open;

HC_HOT int hc_group_active(void)
{
    return __atomic_load_n(&g_open, __ATOMIC_RELAXED) != 0 && g.depth > 0;
}

static gitem_t *push(void *stream)
{
    if (g.n == 0)
        g.stream = stream;
    else if (stream != g.stream)
        g.mixed = 1;
    if (g.n == g.cap) {
        uint32_t ncap = g.cap ? g.cap * 2 : 16;
        pthread_once(&g_items_once, items_key_make);
        gitem_t *ni = realloc(g.items, ncap * sizeof(*ni));
        if (ni == NULL)
            return NULL;
        /* fails only without memory for the key: the array then outlives the thread */
        (void)pthread_setspecific(g_items_key, ni);
        g.items = ni;
        g.cap = ncap;
    }
    gitem_t *it = &g.items[g.n++];
    memset(it, 0, sizeof(*it));
    return it;
}

int hc_group_add_coll(hc_comm_t *c, const hc_op_t *op, void *stream)
{
    gitem_t *it = push(stream);
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
    if (g.depth++ == 0)
        __atomic_fetch_add(&g_open, 1, __ATOMIC_RELAXED);
    return HCCL_SUCCESS;
}

/* Run the queued items blocking, or enqueue them as one task. */
static int run_group(gitem_t *items, uint32_t n, void *stream)
{
    int rc;
    hc_task_t *t = hc_task_group(items, n, stream, &rc);
    return t ? hc_task_dispatch(t) : rc;
}

HcclResult HcclGroupEnd(void)
{
    if (g.depth == 0) {
        HC_ERROR(HC_SUB_COLL, "HcclGroupEnd without HcclGroupStart");
        return HCCL_E_PARA;
    }
    if (--g.depth > 0)
        return HCCL_SUCCESS;
    __atomic_fetch_sub(&g_open, 1, __ATOMIC_RELAXED);
    int rc = g.error;
    if (rc == HCCL_SUCCESS && g.mixed) {
        HC_ERROR(HC_SUB_COLL, "HcclGroupEnd: the calls of the group name different streams; "
                 "a group runs on one stream (or blocking: all NULL)");
        rc = HCCL_E_PARA;
    }
    if (rc == HCCL_SUCCESS && g.n)
        rc = run_group(g.items, g.n, g.stream);
    g.n = 0;
    g.error = HCCL_SUCCESS;
    g.mixed = 0;
    g.stream = NULL;
    return (HcclResult)rc;
}

static int p2p(const char *fn, int is_send, void *buf, uint64_t count, HcclDataType dt,
               uint32_t peer, HcclComm comm, HcclStream handle)
{
    hc_comm_t *c;
    size_t es;
    int rc = hc_api_check_comm_type(comm, fn, dt, &es, &c);
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
    if (c->cfg->entry_log)
        HC_INFO(HC_SUB_COLL, "%s: comm %s rank %u %s rank %u count %llu type %s", fn, c->name,
                c->rank, is_send ? "to" : "from", peer, (unsigned long long)count,
                hc_dtype_name(dt));
    void *stream;
    rc = hc_stream_get(handle, fn, &stream);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (count == 0)
        return HCCL_SUCCESS;
    if (hc_gpu_p2p_claims(buf, stream)) /* device buffers, CUDA streams (src/gpu_coll.h) */
        return hc_gpu_p2p(fn, is_send, buf, count, dt, peer, comm, handle, stream);
    gitem_t one, *it;
    if (hc_group_active()) {
        it = push(stream);
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
        return run_group(&one, 1, stream);
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
