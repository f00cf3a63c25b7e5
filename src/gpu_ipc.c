/*
 * src/gpu_ipc.c - AllReduce and Broadcast of device buffers among the
 * processes of one host through CUDA IPC handles, without host memory on
 * the way (HCCL_GPU_IPC=1; docs/GPU.md, "CUDA IPC").
 *
 * 1. Every rank finds the allocation of its buffers (cuMemGetAddressRange,
 *    reached through cudaGetDriverEntryPoint: no link with libcuda) and
 *    gets its IPC handles; one AllGather shares them with the host name
 *    and the process id. Every rank then takes the same decision: all
 *    handles valid, one host, distinct processes - else the staged path.
 * 2. Every rank opens the others' handles (cached per handle and device,
 *    never closed: a handle names one allocation) and the ranks agree once
 *    more that every open worked.
 * 3. AllReduce: rank r folds slice r of every rank's send buffer in the
 *    canonical order of deterministic mode (docs/ALGORITHMS.md) with the
 *    CUDA kernels of src/reduce_cuda.cu, scales it for AVG, and writes it
 *    into slice r of every rank's receive buffer. Broadcast: every rank
 *    but the root copies the root's buffer. In place is safe: slice r of a
 *    buffer is read and written by rank r only.
 * 4. A last AllGather of the ranks' status ends the operation: nobody
 *    returns while another may still read or write its buffers, and an
 *    error anywhere fails the call everywhere.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gpu_ipc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "log.h"

#ifdef HAVE_CUDA
#include <cuda.h> /* CUresult, CUdeviceptr: types only */
#include <cuda_runtime_api.h>

typedef CUresult (*range_fn_t)(CUdeviceptr *base, size_t *size, CUdeviceptr p);
static pthread_once_t g_range_once = PTHREAD_ONCE_INIT;
static range_fn_t g_range;

static void find_range(void)
{
    void *fn = NULL;
#if CUDART_VERSION >= 12050
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        fn = NULL;
#elif CUDART_VERSION >= 12000
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPoint("cuMemGetAddressRange", &fn, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        fn = NULL;
#endif
    (void)cudaGetLastError();
    g_range = (range_fn_t)fn;
}

/* The IPC handle of p's allocation and p's offset in it. */
static int get_handle(const void *p, cudaIpcMemHandle_t *h, uint64_t *off)
{
    CUdeviceptr base = 0;
    size_t size = 0;
    pthread_once(&g_range_once, find_range);
    if (g_range == NULL || g_range(&base, &size, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return 0;
    if (cudaIpcGetMemHandle(h, (void *)(uintptr_t)base) != cudaSuccess) {
        (void)cudaGetLastError(); /* managed memory, for one, has no handle */
        return 0;
    }
    *off = (uint64_t)((uintptr_t)p - (uintptr_t)base);
    return 1;
}

typedef struct ipc_map {
    struct ipc_map *next;
    cudaIpcMemHandle_t h;
    int dev;
    char *base;
} ipc_map_t;
static pthread_mutex_t g_maps_lock = PTHREAD_MUTEX_INITIALIZER;
static ipc_map_t *g_maps;

static char *open_handle(const cudaIpcMemHandle_t *h)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess)
        (void)cudaGetLastError();
    pthread_mutex_lock(&g_maps_lock);
    for (ipc_map_t *m = g_maps; m; m = m->next)
        if (m->dev == dev && memcmp(&m->h, h, sizeof(*h)) == 0) {
            pthread_mutex_unlock(&g_maps_lock);
            return m->base;
        }
    pthread_mutex_unlock(&g_maps_lock);
    void *p = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&p, *h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
        HC_INFO(HC_SUB_COLL, "cudaIpcOpenMemHandle failed: %s (the staged path is used)",
                cudaGetErrorString(e));
        (void)cudaGetLastError();
        return NULL;
    }
    ipc_map_t *m = malloc(sizeof(*m));
    if (m == NULL) {
        (void)cudaIpcCloseMemHandle(p);
        return NULL;
    }
    m->h = *h;
    m->dev = dev;
    m->base = p;
    pthread_mutex_lock(&g_maps_lock);
    m->next = g_maps;
    g_maps = m;
    pthread_mutex_unlock(&g_maps_lock);
    return p;
}

typedef struct {
    char host[64];
    int32_t pid, ok;
    uint64_t soff, roff;
    cudaIpcMemHandle_t sh, rh;
} ipc_rec_t;

/* AllGather of n records of `bytes` on c (the blocking host path). */
static int gather(hc_comm_t *c, const char *api, const void *mine, void *all, size_t bytes)
{
    hc_op_t g;
    hc_op_init(&g, api, HC_COLL_ALLGATHER, bytes, HCCL_DATA_TYPE_UINT8, 1, HCCL_REDUCE_SUM,
               (void *)mine, all);
    return hc_comm_run(c, &g);
}

/* Every rank's status: the first error of any rank, on every rank. */
static int agree_status(hc_comm_t *c, const char *api, int rc)
{
    int32_t mine = rc, *all = calloc(c->nranks, sizeof(*all));
    if (all == NULL)
        return HCCL_E_MEMORY; /* the others then time out: no memory for 4 bytes a rank */
    int g = gather(c, api, &mine, all, sizeof(mine));
    for (uint32_t q = 0; g == HCCL_SUCCESS && q < c->nranks; q++)
        if (all[q] != HCCL_SUCCESS) {
            g = all[q];
            break;
        }
    free(all);
    return g;
}

/* dst = the canonical-order fold of x[0..n-1] (len elements each), on ks;
 * tmp holds p2 slots of len elements (p2: largest power of two <= n). */
static int canon_fold(const void *const *x, uint32_t n, char *tmp, size_t sb, uint64_t len,
                      HcclDataType dt, HcclReduceOp op, void *ks, const void **result)
{
    uint32_t p2 = 1;
    while (p2 * 2 <= n)
        p2 *= 2;
    const uint32_t rem = n - p2;
    const void **v = calloc(p2, sizeof(*v));
    int rc = v ? HCCL_SUCCESS : HCCL_E_MEMORY;
    for (uint32_t k = 0; rc == HCCL_SUCCESS && k < rem; k++) { /* pairs 2k, 2k+1 */
        rc = hc_cuda_reduce(tmp + k * sb, x[2 * k], x[2 * k + 1], len, dt, op, ks);
        v[k] = tmp + k * sb;
    }
    for (uint32_t q = 2 * rem; rc == HCCL_SUCCESS && q < n; q++)
        v[q - rem] = x[q];
    for (uint32_t m = p2 / 2; rc == HCCL_SUCCESS && m >= 1; m /= 2)
        for (uint32_t a = 0; rc == HCCL_SUCCESS && a < m; a++) {
            rc = hc_cuda_reduce(tmp + a * sb, v[a], v[a + m], len, dt, op, ks);
            v[a] = tmp + a * sb;
        }
    if (rc == HCCL_SUCCESS)
        *result = v[0];
    free(v);
    return rc;
}

static int allreduce(hc_comm_t *c, const hc_op_t *op, char *const *sp, char *const *rp,
                     void *ks)
{
    const uint32_t n = c->nranks, r = c->rank;
    const uint64_t cnt = op->args.count, base = cnt / n, extra = cnt % n;
    const uint64_t lo = r * base + (r < extra ? r : extra), len = base + (r < extra);
    const size_t es = op->args.esize, sb = (size_t)len * es, ob = (size_t)lo * es;
    const HcclReduceOp fop = op->user_op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : op->user_op;
    if (len == 0)
        return HCCL_SUCCESS;
    const void **x = calloc(n, sizeof(*x));
    uint32_t p2 = 1;
    while (p2 * 2 <= n)
        p2 *= 2;
    char *tmp = NULL;
    int rc = x ? HCCL_SUCCESS : HCCL_E_MEMORY;
    if (rc == HCCL_SUCCESS && cudaMalloc((void **)&tmp, (size_t)p2 * sb) != cudaSuccess) {
        (void)cudaGetLastError();
        HC_ERROR(HC_SUB_COLL, "%s: no device memory for %zu bytes of fold space", op->api,
                 (size_t)p2 * sb);
        rc = HCCL_E_MEMORY;
    }
    const void *res = NULL;
    if (rc == HCCL_SUCCESS) {
        for (uint32_t q = 0; q < n; q++)
            x[q] = sp[q] + ob;
        rc = canon_fold(x, n, tmp, sb, len, op->args.dtype, fop, ks, &res);
    }
    if (rc == HCCL_SUCCESS && op->user_op == HCCL_REDUCE_AVG && n > 1)
        rc = hc_cuda_scale((void *)res, len, op->args.dtype, n, ks);
    for (uint32_t q = 0; rc == HCCL_SUCCESS && q < n; q++)
        if (rp[q] + ob != (const char *)res && /* one rank, in place: already there */
            cudaMemcpyAsync(rp[q] + ob, res, sb, cudaMemcpyDefault, (cudaStream_t)ks) !=
                cudaSuccess) {
            (void)cudaGetLastError();
            rc = HCCL_E_RUNTIME;
        }
    if (cudaStreamSynchronize((cudaStream_t)ks) != cudaSuccess) {
        (void)cudaGetLastError();
        if (rc == HCCL_SUCCESS)
            rc = HCCL_E_RUNTIME;
    }
    if (tmp)
        (void)cudaFree(tmp);
    free(x);
    if (rc != HCCL_SUCCESS)
        HC_ERROR(HC_SUB_COLL, "%s: CUDA IPC AllReduce of slice %llu+%llu failed: %s", op->api,
                 (unsigned long long)lo, (unsigned long long)len, HcclGetErrorString(rc));
    return rc;
}

static int broadcast(hc_comm_t *c, const hc_op_t *op, char *const *sp, void *ks)
{
    const uint32_t root = op->args.root;
    if (c->rank == root)
        return HCCL_SUCCESS;
    const size_t bytes = (size_t)op->args.count * op->args.esize;
    int rc = HCCL_SUCCESS;
    if (cudaMemcpyAsync(op->recv, sp[root], bytes, cudaMemcpyDefault, (cudaStream_t)ks) !=
            cudaSuccess ||
        cudaStreamSynchronize((cudaStream_t)ks) != cudaSuccess) {
        (void)cudaGetLastError();
        HC_ERROR(HC_SUB_COLL, "%s: CUDA IPC copy of %zu bytes from rank %u failed", op->api,
                 bytes, root);
        rc = HCCL_E_RUNTIME;
    }
    return rc;
}
#endif /* HAVE_CUDA */

int hc_gpu_ipc_run(hc_comm_t *c, const hc_op_t *op, int *done)
{
    *done = 0;
#ifdef HAVE_CUDA
    const uint32_t n = c->nranks;
    const int bcast = op->args.coll == HC_COLL_BROADCAST;
    ipc_rec_t mine;
    memset(&mine, 0, sizeof(mine));
    if (gethostname(mine.host, sizeof(mine.host) - 1) != 0)
        mine.host[0] = '\0';
    mine.pid = (int32_t)getpid();
    mine.ok = get_handle(op->send, &mine.sh, &mine.soff) &&
              (bcast || get_handle(op->recv, &mine.rh, &mine.roff));
    ipc_rec_t *all = calloc(n, sizeof(*all));
    char **sp = calloc(n, sizeof(*sp)), **rp = calloc(n, sizeof(*rp));
    int rc = all && sp && rp ? HCCL_SUCCESS : HCCL_E_MEMORY;
    if (rc == HCCL_SUCCESS)
        rc = gather(c, op->api, &mine, all, sizeof(mine));
    int usable = rc == HCCL_SUCCESS;
    for (uint32_t q = 0; usable && q < n; q++) {
        usable = all[q].ok && strcmp(all[q].host, all[0].host) == 0;
        for (uint32_t p = 0; usable && p < q; p++)
            usable = all[p].pid != all[q].pid;
    }
    if (rc == HCCL_SUCCESS && usable) {
        /* open the others' buffers; then all must have succeeded */
        int opened = 1;
        for (uint32_t q = 0; q < n; q++) {
            if (q == c->rank) {
                sp[q] = op->send;
                rp[q] = op->recv;
                continue;
            }
            if (bcast && q != op->args.root)
                continue; /* a Broadcast reads the root's buffer only */
            char *b = open_handle(&all[q].sh);
            sp[q] = b ? b + all[q].soff : NULL;
            if (!bcast) {
                char *br = open_handle(&all[q].rh);
                rp[q] = br ? br + all[q].roff : NULL;
            }
            opened = opened && sp[q] && (bcast || rp[q]);
        }
        rc = agree_status(c, op->api, opened ? HCCL_SUCCESS : HCCL_E_NOT_SUPPORT);
        if (rc == HCCL_SUCCESS) {
            cudaStream_t ks;
            *done = 1;
            if (cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking) != cudaSuccess) {
                (void)cudaGetLastError();
                rc = HCCL_E_RUNTIME;
            } else {
                rc = bcast ? broadcast(c, op, sp, ks) : allreduce(c, op, sp, rp, ks);
                (void)cudaStreamDestroy(ks);
            }
            rc = agree_status(c, op->api, rc); /* the end: everyone is done */
        } else if (rc == HCCL_E_NOT_SUPPORT) {
            rc = HCCL_SUCCESS; /* a rank could not open a handle: the staged path */
        }
    }
    if (rc != HCCL_SUCCESS)
        *done = 1;
    if (*done)
        HC_INFO(HC_SUB_COLL, "%s: CUDA IPC path on %u ranks: %s", op->api, n,
                 HcclGetErrorString(rc));
    free(all), free(sp), free(rp);
    return rc;
#else
    (void)c, (void)op;
    return HCCL_SUCCESS;
#endif
}
