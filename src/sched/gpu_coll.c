/*
 * src/sched/gpu_coll.c - device buffers in collectives and Send/Recv (see
 * gpu_coll.h and docs/GPU.md).
 *
 * Design: a device buffer is staged through pinned host memory in chunks
 * (src/sched/gpu_pipe.h) and each chunk runs the host collective of the same
 * kind, so the reduction happens on the host, by the same kernels as for
 * host buffers: one code path for the arithmetic, and results that match
 * the host path by construction. The copies run on two CUDA streams of
 * hcomm's (device to host, host to device), so chunk k + 1 travels to the
 * host and chunk k - 1 back to the device while chunk k is reduced.
 *
 * Every rank cuts an operation into the same chunks: the chunk size
 * depends on the collective, the rank count and the element size only
 * (hc_gpu_coll_blocks), never on which buffers this rank has.
 *
 * Ordering: a claimed operation is blocking. Before it starts, the work it
 * must follow is waited for: the hcomm stream's earlier operations and its
 * CUDA stream (HcclStreamSynchronize), and, for device buffers without a
 * CUDA stream, the whole device (cudaDeviceSynchronize: the legacy default
 * stream's ordering, as NCCL gives stream 0). It is complete when the call
 * returns, so everything queued afterwards on any stream follows it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gpu_coll.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "src/base/gpu.h"
#include "src/comm/gpu_ipc.h"
#include "gpu_pipe.h"
#include "src/base/log.h"
#include "src/base/reduce.h"
#include "stream.h"

#include <ucp/api/ucp.h>

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int hc_gpu_ucx_has_cuda(void *ucp_context)
{
    ucp_context_attr_t attr;
    memset(&attr, 0, sizeof(attr));
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    if (ucp_context == NULL || ucp_context_query((ucp_context_h)ucp_context, &attr) != UCS_OK)
        return 0;
    return (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
}

int hc_gpu_check_kinds(const char *fn, const void *send, int send_dev, const void *recv,
                       int recv_dev)
{
    if (send == NULL || recv == NULL || send_dev == recv_dev)
        return HCCL_SUCCESS;
    HC_ERROR(HC_SUB_COLL, "%s: sendBuf %p is %s memory and recvBuf %p is %s memory; hcomm "
             "needs both in host memory or both in device memory", fn, send,
             send_dev ? "device" : "host", recv, recv_dev ? "device" : "host");
    return HCCL_E_PARA;
}

uint32_t hc_gpu_coll_blocks(int coll, uint32_t nranks)
{
    switch ((hc_coll_t)coll) {
    case HC_COLL_BROADCAST:
        return 1; /* one area, in place */
    case HC_COLL_ALLGATHER:
    case HC_COLL_REDUCESCATTER:
    case HC_COLL_SCATTER:
        return 1 + nranks;
    case HC_COLL_ALLTOALL:
        return 2 * nranks;
    default:
        return 2;
    }
}

/* ---- staging sets: pinned host memory and the copy streams ------------- */

typedef struct stage_set {
    struct stage_set *next;
    int dev;
    size_t slot_bytes;
    char *host; /* HC_GPU_SLOTS slots of slot_bytes */
#ifdef HAVE_CUDA
    cudaStream_t sd2h, sh2d;
    cudaEvent_t ed2h[HC_GPU_SLOTS], eh2d[HC_GPU_SLOTS];
#endif
} stage_set_t;

#ifdef HAVE_CUDA
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static stage_set_t *g_pool; /* free sets of HC_GPU_SLOT_BYTES per slot */

static void set_free(stage_set_t *st)
{
    for (int s = 0; s < HC_GPU_SLOTS; s++) {
        if (st->ed2h[s])
            (void)cudaEventDestroy(st->ed2h[s]);
        if (st->eh2d[s])
            (void)cudaEventDestroy(st->eh2d[s]);
    }
    if (st->sd2h)
        (void)cudaStreamDestroy(st->sd2h);
    if (st->sh2d)
        (void)cudaStreamDestroy(st->sh2d);
    if (st->host)
        (void)cudaFreeHost(st->host);
    (void)cudaGetLastError();
    free(st);
}

static stage_set_t *set_new(int dev, size_t slot_bytes, int nslots, const char *fn)
{
    stage_set_t *st = calloc(1, sizeof(*st));
    if (st == NULL) {
        HC_ERROR(HC_SUB_COLL, "%s: out of memory for a staging set", fn);
        return NULL;
    }
    st->dev = dev;
    st->slot_bytes = slot_bytes;
    cudaError_t e = cudaMallocHost((void **)&st->host, (size_t)nslots * slot_bytes);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&st->sd2h, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&st->sh2d, cudaStreamNonBlocking);
    for (int s = 0; s < HC_GPU_SLOTS && e == cudaSuccess; s++) {
        e = cudaEventCreateWithFlags(&st->ed2h[s], cudaEventDisableTiming);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&st->eh2d[s], cudaEventDisableTiming);
    }
    if (e != cudaSuccess) {
        HC_ERROR(HC_SUB_COLL, "%s: cannot set up %zu bytes of pinned staging with its CUDA "
                 "streams on device %d: %s", fn, (size_t)nslots * slot_bytes, dev,
                 cudaGetErrorString(e));
        set_free(st);
        return NULL;
    }
    return st;
}

/* A set whose slots hold need bytes: from the pool when the standard size
 * will do, else a new one of nslots slots (freed by set_give). */
static stage_set_t *set_take(size_t need, int nslots, const char *fn)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        dev = 0;
    }
    if (need <= HC_GPU_SLOT_BYTES) {
        pthread_mutex_lock(&g_pool_lock);
        for (stage_set_t **pp = &g_pool; *pp; pp = &(*pp)->next) {
            if ((*pp)->dev == dev) {
                stage_set_t *st = *pp;
                *pp = st->next;
                pthread_mutex_unlock(&g_pool_lock);
                st->next = NULL;
                return st;
            }
        }
        pthread_mutex_unlock(&g_pool_lock);
        need = HC_GPU_SLOT_BYTES;
        nslots = HC_GPU_SLOTS;
    }
    return set_new(dev, need, nslots, fn);
}

/* Sets of the standard size are kept for the next operation; a larger one
 * (an AlltoAllV staged whole, a large Send/Recv) is freed. */
static void set_give(stage_set_t *st)
{
    if (st->slot_bytes != HC_GPU_SLOT_BYTES) {
        set_free(st);
        return;
    }
    pthread_mutex_lock(&g_pool_lock);
    st->next = g_pool;
    g_pool = st;
    pthread_mutex_unlock(&g_pool_lock);
}

/* ---- the CUDA copy engine (hc_gpu_copy_ops_t) ------------------------- */

static int rows(cudaStream_t cs, cudaEvent_t ev, void *dst, size_t dpitch, const void *src,
                size_t spitch, size_t width, size_t height)
{
    cudaError_t e = cudaSuccess;
    /* row by row: cudaMemcpy2DAsync limits the pitch, blocks may be GiBs apart */
    for (size_t r = 0; r < height && e == cudaSuccess; r++)
        e = cudaMemcpyAsync((char *)dst + r * dpitch, (const char *)src + r * spitch, width,
                            cudaMemcpyDefault, cs);
    if (e == cudaSuccess)
        e = cudaEventRecord(ev, cs);
    if (e != cudaSuccess) {
        HC_ERROR(HC_SUB_COLL, "staging copy of %zu x %zu bytes failed: %s", height, width,
                 cudaGetErrorString(e));
        (void)cudaGetLastError();
        return HCCL_E_RUNTIME;
    }
    return HCCL_SUCCESS;
}

static int cu_d2h(void *ctx, int slot, void *dst, size_t dpitch, const void *src, size_t spitch,
                  size_t width, size_t height)
{
    stage_set_t *st = ctx;
    return rows(st->sd2h, st->ed2h[slot], dst, dpitch, src, spitch, width, height);
}

static int cu_h2d(void *ctx, int slot, void *dst, size_t dpitch, const void *src, size_t spitch,
                  size_t width, size_t height)
{
    stage_set_t *st = ctx;
    return rows(st->sh2d, st->eh2d[slot], dst, dpitch, src, spitch, width, height);
}

static int ev_wait(cudaEvent_t ev)
{
    cudaError_t e = cudaEventSynchronize(ev);
    if (e != cudaSuccess) {
        HC_ERROR(HC_SUB_COLL, "waiting for a staging copy failed: %s", cudaGetErrorString(e));
        (void)cudaGetLastError();
        return HCCL_E_RUNTIME;
    }
    return HCCL_SUCCESS;
}

static int cu_wait_d2h(void *ctx, int slot)
{
    return ev_wait(((stage_set_t *)ctx)->ed2h[slot]);
}

static int cu_wait_h2d(void *ctx, int slot)
{
    return ev_wait(((stage_set_t *)ctx)->eh2d[slot]);
}

static const hc_gpu_copy_ops_t cu_ops = {cu_d2h, cu_h2d, cu_wait_d2h, cu_wait_h2d};

static int device_sync(const char *fn)
{
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        HC_ERROR(HC_SUB_COLL, "%s: waiting for the device's earlier work failed: %s", fn,
                 cudaGetErrorString(e));
        (void)cudaGetLastError();
        return HCCL_E_RUNTIME;
    }
    return HCCL_SUCCESS;
}

/* Stage and run: plan p, the chunk runner run/arg. */
static int staged(const char *fn, const hc_gpu_plan_t *p, hc_gpu_run_fn run, void *arg)
{
    /* slots beyond the number of chunks are never used (a whole message
     * staged in one piece needs one) */
    const uint64_t nchunks = p->chunk ? (p->block + p->chunk - 1) / p->chunk : 0;
    const int nslots = nchunks < HC_GPU_SLOTS ? (int)(nchunks ? nchunks : 1) : HC_GPU_SLOTS;
    stage_set_t *st = set_take(hc_gpu_slot_need(p), nslots, fn);
    if (st == NULL)
        return HCCL_E_MEMORY;
    char *stage[HC_GPU_SLOTS] = {NULL, NULL, NULL};
    for (int s = 0; s < HC_GPU_SLOTS && (s < nslots || st->slot_bytes == HC_GPU_SLOT_BYTES); s++)
        stage[s] = st->host + (size_t)s * st->slot_bytes;
    int rc = hc_gpu_pipeline(p, &cu_ops, st, stage, run, arg);
    set_give(st);
    return rc;
}
#endif /* HAVE_CUDA */

/* Wait for what a claimed operation must follow (see the top). */
static int order_before(const char *fn, HcclStream handle, void *stream, int device)
{
    if (handle != NULL) {
        int rc = HcclStreamSynchronize(handle);
        if (rc != HCCL_SUCCESS)
            return rc;
    }
#ifdef HAVE_CUDA
    if (device && (stream == NULL || hc_stream_cuda(stream) == NULL))
        return device_sync(fn);
#else
    (void)fn, (void)stream, (void)device;
#endif
    return HCCL_SUCCESS;
}

/* ---- collectives ------------------------------------------------------- */

/* The plan of a collective on this rank (see gpu_pipe.h). */
void hc_gpu_coll_plan(const hc_comm_t *c, const hc_op_t *op, hc_gpu_plan_t *p)
{
    const hc_coll_args_t *a = &op->args;
    const uint32_t n = c->nranks;
    const size_t es = a->esize, blk = (size_t)a->count * es;
    uint32_t sb = 1, rb = 1;

    memset(p, 0, sizeof(*p));
    p->block = blk;
    switch (a->coll) {
    case HC_COLL_BROADCAST:
        p->same_area = 1;
        /* the root copies its buffer out, the others copy the result in */
        if (c->rank == a->root)
            rb = 0;
        else
            sb = 0;
        break;
    case HC_COLL_ALLGATHER:
        rb = n;
        break;
    case HC_COLL_REDUCESCATTER:
    case HC_COLL_SCATTER:
        sb = n;
        break;
    case HC_COLL_ALLTOALL:
        sb = rb = n;
        break;
    default:
        break;
    }
    p->send.buf = sb ? op->send : NULL;
    p->send.blocks = op->send ? sb : 0;
    p->send.stride = blk;
    p->recv.buf = rb ? op->recv : NULL;
    p->recv.blocks = op->recv ? rb : 0;
    p->recv.stride = blk;
    p->chunk = hc_gpu_chunk_bytes(blk, es, hc_gpu_coll_blocks(a->coll, n), HC_GPU_SLOT_BYTES);
}

int hc_gpu_claims(const hc_op_t *op, void *stream)
{
    if (!hc_cuda_available())
        return 0;
    if (hc_cuda_is_device_ptr(op->send) || hc_cuda_is_device_ptr(op->recv))
        return 1;
    /* host buffers in a group on a CUDA stream: the group's stream orders them */
    return stream != NULL && hc_stream_cuda(stream) != NULL && !hc_group_active();
}

#ifdef HAVE_CUDA
typedef struct {
    hc_comm_t *c;
    const hc_op_t *op;
} chunk_arg_t;

/* The host collective on one packed chunk: the user's operation with the
 * staging areas as buffers and the chunk's element count. */
static int run_chunk(void *argp, void *hs, void *hr, size_t off, size_t len)
{
    const chunk_arg_t *a = argp;
    hc_op_t o = *a->op;
    (void)off;
    o.send = hs;
    o.recv = hr;
    o.args.count = len / o.args.esize;
    o.args.in_place = o.args.coll == HC_COLL_BROADCAST;
    return hc_comm_run(a->c, &o);
}

/* AlltoAllV, ReduceScatterV: irregular blocks, staged whole in one go (no
 * pipeline). The receive side is copied to the host first, so that bytes
 * between its blocks come back as they were. */
static int staged_v(hc_comm_t *c, const hc_op_t *op)
{
    const hc_coll_args_t *a = &op->args;
    const size_t se = (size_t)hc_v_end(a->scounts, a->sdispls, c->nranks) * a->esize;
    const size_t re = a->rcounts ? (size_t)hc_v_end(a->rcounts, a->rdispls, c->nranks) * a->esize
                                 : (size_t)a->count * a->esize; /* ReduceScatterV: own block */
    stage_set_t *st = set_take(se + re, 1, op->api);
    if (st == NULL)
        return HCCL_E_MEMORY;
    char *hs = st->host, *hr = st->host + se;
    int rc = HCCL_SUCCESS;
    if (se)
        rc = cu_d2h(st, 0, hs, se, op->send, se, se, 1);
    if (rc == HCCL_SUCCESS && re)
        rc = cu_d2h(st, 0, hr, re, op->recv, re, re, 1);
    if (rc == HCCL_SUCCESS && (se || re))
        rc = cu_wait_d2h(st, 0);
    if (rc == HCCL_SUCCESS) {
        hc_op_t o = *op;
        o.send = hs;
        o.recv = hr;
        o.args.in_place = 0;
        rc = hc_comm_run(c, &o);
    }
    if (rc == HCCL_SUCCESS && re) {
        rc = cu_h2d(st, 0, op->recv, re, hr, re, re, 1);
        if (rc == HCCL_SUCCESS)
            rc = cu_wait_h2d(st, 0);
    }
    set_give(st);
    return rc;
}
#endif

int hc_gpu_run(hc_comm_t *c, const hc_op_t *op, HcclStream handle, void *stream)
{
    const char *fn = op->api;
    const int sdev = hc_cuda_is_device_ptr(op->send), rdev = hc_cuda_is_device_ptr(op->recv);
    int rc;

    if (hc_group_active()) { /* claimed in a group: device buffers */
        HC_ERROR(HC_SUB_COLL, "%s: device buffers are not supported between HcclGroupStart "
                 "and HcclGroupEnd", fn);
        return HCCL_E_NOT_SUPPORT;
    }
    if ((rc = hc_gpu_check_kinds(fn, op->send, sdev, op->recv, rdev)) != HCCL_SUCCESS)
        return rc;
    if ((rc = order_before(fn, handle, stream, sdev || rdev)) != HCCL_SUCCESS)
        return rc;
    if (!sdev && !rdev)
        return hc_comm_run(c, op);
#ifdef HAVE_CUDA
    if (c->cfg->gpu_ipc && (op->args.coll == HC_COLL_ALLREDUCE ||
                            op->args.coll == HC_COLL_BROADCAST)) {
        int done;
        rc = hc_gpu_ipc_run(c, op, &done);
        if (done)
            return rc;
    }
    if (hc_args_v(&op->args))
        return staged_v(c, op);
    hc_gpu_plan_t p;
    hc_gpu_coll_plan(c, op, &p);
    chunk_arg_t arg = {c, op};
    return staged(fn, &p, run_chunk, &arg);
#else
    return HCCL_E_NOT_SUPPORT; /* not reached: nothing is claimed without CUDA */
#endif
}

/* ---- Send / Recv ------------------------------------------------------- */

int hc_gpu_p2p_claims(const void *buf, void *stream)
{
    if (!hc_cuda_available())
        return 0;
    if (hc_cuda_is_device_ptr(buf))
        return 1;
    return stream != NULL && hc_stream_cuda(stream) != NULL && !hc_group_active();
}

#ifdef HAVE_CUDA
typedef struct {
    int is_send;
    uint64_t count;
    HcclDataType dt;
    uint32_t peer;
    HcclComm comm;
} p2p_arg_t;

static int run_p2p(void *argp, void *hs, void *hr, size_t off, size_t len)
{
    const p2p_arg_t *a = argp;
    (void)off, (void)len;
    return a->is_send ? HcclSend(hs, a->count, a->dt, a->peer, a->comm, NULL)
                      : HcclRecv(hr, a->count, a->dt, a->peer, a->comm, NULL);
}
#endif

int hc_gpu_p2p(const char *fn, int is_send, void *buf, uint64_t count, HcclDataType dt,
               uint32_t peer, HcclComm comm, HcclStream handle, void *stream)
{
    const int dev = hc_cuda_is_device_ptr(buf);
    int rc;

    if (hc_group_active()) { /* claimed in a group: a device buffer */
        HC_ERROR(HC_SUB_COLL, "%s: device buffers are not supported between HcclGroupStart "
                 "and HcclGroupEnd", fn);
        return HCCL_E_NOT_SUPPORT;
    }
    if ((rc = order_before(fn, handle, stream, dev)) != HCCL_SUCCESS)
        return rc;
    if (!dev)
        return is_send ? HcclSend(buf, count, dt, peer, comm, NULL)
                       : HcclRecv(buf, count, dt, peer, comm, NULL);
#ifdef HAVE_CUDA
    /* one chunk, the whole message: the peer may pass a host buffer, and
     * its message must be the same one */
    const size_t bytes = (size_t)count * hc_dtype_size(dt);
    hc_gpu_plan_t p;
    memset(&p, 0, sizeof(p));
    p.block = p.chunk = bytes;
    if (is_send)
        p.send = (hc_gpu_side_t){(char *)buf, 1, bytes};
    else
        p.recv = (hc_gpu_side_t){(char *)buf, 1, bytes};
    p2p_arg_t arg = {is_send, count, dt, peer, comm};
    return staged(fn, &p, run_p2p, &arg);
#else
    return HCCL_E_NOT_SUPPORT;
#endif
}
