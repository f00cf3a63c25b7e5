/*
 * test/mpi/test_gpu.c - device buffers in every collective (docs/GPU.md),
 * built with --with-cuda only, run by tools/gpu-check.sh.
 *
 *   test_gpu matrix   every collective x type x op, at a count under one
 *                     staging chunk and one of many chunks, in device
 *                     memory, against the same call on host buffers (the
 *                     host path, itself checked by test_coll against MPI):
 *                     return code and every byte of the receive buffer;
 *                     streams cycle through NULL, an hcomm stream and one
 *                     from a CUDA stream; mixed host/device arguments must
 *                     fail with HCCL_E_PARA
 *   test_gpu order    an AllReduce on a stream from HcclStreamCreateFromCuda
 *                     and one on stream NULL see the data the user's CUDA
 *                     work queued before them wrote, and are done before
 *                     the work queued after them runs; then the cost of the
 *                     ways to wait for a CUDA stream (rank 0 prints it)
 *   test_gpu ipc      the matrix for AllReduce (in place or not) and
 *                     Broadcast only (run with HCCL_GPU_IPC=1: the CUDA IPC
 *                     path; tools/gpu-check.sh checks in the log that it ran)
 *   test_gpu mismatch (run with HCCL_CHECK_ARGS=1) rank 0 passes host
 *                     buffers, the others device buffers: every rank must
 *                     fail with HCCL_E_PARA and leave its buffers alone
 *   test_gpu bench    busbw of AllReduce, Broadcast, AllGather on host and
 *                     on device buffers, 8 B - 1 GiB (rank 0 prints a table)
 *
 * Without a usable device every mode checks the fallback instead (the
 * CUDA-only entry point refuses with HCCL_E_NOT_SUPPORT, an AllReduce on
 * host buffers is right), says "no GPU" and exits 0.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>
#include <mpi.h>
#include <cuda_runtime_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, fails;
static HcclComm comm;

#define CU(x) \
    do { \
        cudaError_t e_ = (x); \
        if (e_ != cudaSuccess) { \
            fprintf(stderr, "rank %d: %s:%d: %s: %s\n", rank, __FILE__, __LINE__, #x, \
                    cudaGetErrorString(e_)); \
            MPI_Abort(MPI_COMM_WORLD, 2); \
        } \
    } while (0)

#define FAIL(...) \
    do { \
        fails++; \
        if (fails <= 20) { \
            fprintf(stderr, "rank %d: FAIL: ", rank); \
            fprintf(stderr, __VA_ARGS__); \
            fputc('\n', stderr); \
        } \
    } while (0)

static const HcclDataType types[] = {
    HCCL_DATA_TYPE_INT8,   HCCL_DATA_TYPE_INT16,  HCCL_DATA_TYPE_INT32,  HCCL_DATA_TYPE_FP16,
    HCCL_DATA_TYPE_FP32,   HCCL_DATA_TYPE_INT64,  HCCL_DATA_TYPE_UINT64, HCCL_DATA_TYPE_UINT8,
    HCCL_DATA_TYPE_UINT16, HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_FP64,   HCCL_DATA_TYPE_BFP16,
    HCCL_DATA_TYPE_INT128,
};
static const HcclReduceOp ops[] = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX,
                                   HCCL_REDUCE_MIN, HCCL_REDUCE_AVG};
#define NTYPES (sizeof(types) / sizeof(types[0]))
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static size_t esize(HcclDataType t)
{
    switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16:
    case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    case HCCL_DATA_TYPE_INT128: return 16;
    default: return 8;
    }
}

static uint64_t rs;
static void fill(void *p, size_t bytes, uint64_t seed)
{
    rs = seed * 0x9e3779b97f4a7c15ull + 1;
    unsigned char *b = p;
    for (size_t i = 0; i < bytes; i += 8) {
        rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
        size_t k = bytes - i < 8 ? bytes - i : 8;
        memcpy(b + i, &rs, k);
    }
}

enum { C_ALLREDUCE, C_ALLREDUCE_IP, C_BCAST, C_REDUCE, C_ALLGATHER, C_REDUCESCATTER,
       C_ALLTOALL, C_ALLTOALLV, C_SCATTER, C_SENDRECV, C_N };
static const char *const cname[C_N] = {"AllReduce", "AllReduce(in place)", "Broadcast", "Reduce",
                                       "AllGather", "ReduceScatter", "AlltoAll", "AlltoAllV",
                                       "Scatter", "Send/Recv"};
static int reduces(int k)
{
    return k == C_ALLREDUCE || k == C_ALLREDUCE_IP || k == C_REDUCE || k == C_REDUCESCATTER;
}

/* AlltoAllV layout: irregular counts, one element of gap after each block. */
static uint64_t vsc[64], vsd[64], vrc[64], vrd[64];
static void v_layout(uint64_t cnt, size_t *sb, size_t *rb)
{
    uint64_t so = 0, ro = 0;
    for (int j = 0; j < nranks; j++) {
        vsc[j] = cnt + (uint64_t)((rank * 3 + j) % 5);
        vrc[j] = cnt + (uint64_t)((j * 3 + rank) % 5);
        vsd[j] = so, so += vsc[j] + 1;
        vrd[j] = ro, ro += vrc[j] + 1;
    }
    *sb = so, *rb = ro;
}

/* Buffer sizes in elements. */
static void sizes(int k, uint64_t cnt, size_t *s, size_t *r)
{
    size_t n = (size_t)nranks;
    switch (k) {
    case C_ALLGATHER: *s = cnt, *r = n * cnt; break;
    case C_REDUCESCATTER: case C_SCATTER: *s = n * cnt, *r = cnt; break;
    case C_ALLTOALL: *s = *r = n * cnt; break;
    case C_ALLTOALLV: v_layout(cnt, s, r); break;
    default: *s = *r = cnt; break;
    }
}

static HcclResult run(int k, void *s, void *r, uint64_t cnt, HcclDataType t, HcclReduceOp op,
                      void *st)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    HcclResult a, b;
    switch (k) {
    case C_ALLREDUCE: return HcclAllReduce(s, r, cnt, t, op, comm, st);
    case C_ALLREDUCE_IP: return HcclAllReduce(r, r, cnt, t, op, comm, st);
    case C_BCAST: return HcclBroadcast(r, cnt, t, (uint32_t)nranks - 1, comm, st);
    case C_REDUCE: return HcclReduce(s, rank == 0 ? r : NULL, cnt, t, op, 0, comm, st);
    case C_ALLGATHER: return HcclAllGather(s, r, cnt, t, comm, st);
    case C_REDUCESCATTER: return HcclReduceScatter(s, r, cnt, t, op, comm, st);
    case C_ALLTOALL: return HcclAlltoAll(s, cnt, t, r, cnt, t, comm, st);
    case C_ALLTOALLV: return HcclAlltoAllV(s, vsc, vsd, t, r, vrc, vrd, t, comm, st);
    case C_SCATTER: return HcclScatter(rank == 0 ? s : NULL, r, cnt, t, 0, comm, st);
    case C_SENDRECV:
        if (nranks < 2)
            return HCCL_SUCCESS;
        if (rank % 2 == 0) {
            a = HcclSend(s, cnt, t, (uint32_t)next, comm, st);
            b = HcclRecv(r, cnt, t, (uint32_t)prev, comm, st);
        } else {
            b = HcclRecv(r, cnt, t, (uint32_t)prev, comm, st);
            a = HcclSend(s, cnt, t, (uint32_t)next, comm, st);
        }
        return a != HCCL_SUCCESS ? a : b;
    }
    return HCCL_E_PARA;
}

static int has_gpu(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n > 0;
}

/* ---- without a device ------------------------------------------------ */

static void fallback(void)
{
    HcclStream s = NULL;
    HcclResult r = HcclStreamCreateFromCuda(&s, (void *)&s);
    if (r != HCCL_E_NOT_SUPPORT)
        FAIL("HcclStreamCreateFromCuda without a device: %d, expected HCCL_E_NOT_SUPPORT", r);
    int32_t in[1000], out[1000];
    for (int i = 0; i < 1000; i++)
        in[i] = rank * 1000 + i;
    r = HcclAllReduce(in, out, 1000, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, NULL);
    if (r != HCCL_SUCCESS)
        FAIL("HcclAllReduce on host buffers: %d", r);
    for (int i = 0; i < 1000 && r == HCCL_SUCCESS; i++) {
        int32_t want = 1000 * nranks * (nranks - 1) / 2 + nranks * i;
        if (out[i] != want) {
            FAIL("HcclAllReduce on host buffers: element %d is %d, expected %d", i, out[i], want);
            break;
        }
    }
}

/* ---- matrix ------------------------------------------------------------- */

static HcclStream hs_plain, hs_cuda;
static cudaStream_t cs_user;

static void one_case(int k, HcclDataType t, HcclReduceOp op, uint64_t cnt, int kase)
{
    const size_t es = esize(t);
    size_t se, re;
    sizes(k, cnt, &se, &re);
    const size_t sb = se * es, rb = re * es;
    char *hs = malloc(sb), *hr = malloc(rb), *hr0 = malloc(rb), *out = malloc(rb);
    void *ds, *dr;
    if (!hs || !hr || !hr0 || !out) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CU(cudaMalloc(&ds, sb));
    CU(cudaMalloc(&dr, rb));
    fill(hs, sb, (uint64_t)kase * 131 + (uint64_t)rank);
    fill(hr0, rb, (uint64_t)kase * 131 + 64 + (uint64_t)rank);
    memcpy(hr, hr0, rb);
    if (k == C_ALLREDUCE_IP || k == C_BCAST) /* the input is the receive buffer */
        memcpy(hr, hs, sb < rb ? sb : rb), memcpy(hr0, hr, rb);
    CU(cudaMemcpy(ds, hs, sb, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(dr, hr0, rb, cudaMemcpyHostToDevice));

    HcclResult rh = run(k, hs, hr, cnt, t, op, NULL);
    void *st = kase % 3 == 0 ? NULL : kase % 3 == 1 ? hs_plain : hs_cuda;
    HcclResult rd = run(k, ds, dr, cnt, t, op, st);
    if (st != NULL && rd == HCCL_SUCCESS)
        rd = HcclStreamSynchronize(st);
    CU(cudaMemcpy(out, dr, rb, cudaMemcpyDeviceToHost));
    const char *sn = st == NULL ? "NULL" : st == hs_plain ? "hcomm" : "cuda";
    if (rh != rd)
        FAIL("%s type %d op %d count %llu stream %s: host path %d, device %d", cname[k], t, op,
             (unsigned long long)cnt, sn, rh, rd);
    else if (memcmp(out, hr, rb) != 0) {
        size_t i = 0;
        while (out[i] == hr[i])
            i++;
        FAIL("%s type %d op %d count %llu stream %s: byte %zu of %zu is %02x on the device, "
             "%02x on the host path", cname[k], t, op, (unsigned long long)cnt, sn, i, rb,
             (unsigned char)out[i], (unsigned char)hr[i]);
    }
    CU(cudaFree(ds));
    CU(cudaFree(dr));
    free(hs), free(hr), free(hr0), free(out);
}

static void matrix(int ipc_only)
{
    CU(cudaStreamCreateWithFlags(&cs_user, cudaStreamNonBlocking));
    if (HcclStreamCreate(&hs_plain) != HCCL_SUCCESS ||
        HcclStreamCreateFromCuda(&hs_cuda, (void *)cs_user) != HCCL_SUCCESS) {
        FAIL("stream creation");
        return;
    }
    /* 1000 elements: under one staging chunk; "big": about 10 MiB a block,
     * several chunks (the chunk is 8 MiB a slot over the collective's blocks) */
    int kase = 0, ncases = 0;
    for (int k = 0; k < C_N; k++)
        for (size_t ti = 0; ti < NTYPES && (!ipc_only || k <= C_BCAST); ti++)
            for (size_t oi = 0; oi < (reduces(k) ? NOPS : 1); oi++)
                for (int big = 0; big < 2; big++) {
                    uint64_t cnt = big ? ((10u << 20) + 24) / esize(types[ti]) : 1000;
                    one_case(k, types[ti], ops[oi], cnt, kase++);
                    ncases++;
                }
    /* mixed host/device arguments: refused on every rank */
    void *d;
    static float h[1000];
    CU(cudaMalloc(&d, sizeof(h)));
    HcclResult r = HcclAllReduce(h, d, 1000, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL);
    if (r != HCCL_E_PARA)
        FAIL("AllReduce host send, device recv: %d, expected HCCL_E_PARA", r);
    r = HcclAllGather(d, h, 1000 / (uint64_t)nranks, HCCL_DATA_TYPE_FP32, comm, NULL);
    if (r != HCCL_E_PARA)
        FAIL("AllGather device send, host recv: %d, expected HCCL_E_PARA", r);
    /* device buffers inside a group: refused */
    HcclGroupStart();
    r = HcclAllReduce(d, d, 10, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL);
    HcclGroupEnd();
    if (r != HCCL_E_NOT_SUPPORT)
        FAIL("AllReduce of device buffers in a group: %d, expected HCCL_E_NOT_SUPPORT", r);
    CU(cudaFree(d));
    HcclStreamDestroy(hs_plain);
    HcclStreamDestroy(hs_cuda);
    CU(cudaStreamDestroy(cs_user));
    if (rank == 0)
        printf("test_gpu %s: %d cases on %d ranks\n", ipc_only ? "ipc" : "matrix", ncases,
               nranks);
}

/* ---- stream ordering ------------------------------------------------------ */

static volatile int host_flag;
static void CUDART_CB host_fn(void *arg)
{
    (void)arg;
    host_flag = 1;
}

static void order(void)
{
    const uint64_t cnt = 16u << 20; /* 64 MiB of int32: copies take milliseconds */
    const size_t bytes = cnt * 4;
    int32_t *src, *dst;
    void *d;
    cudaStream_t cs;
    HcclStream hs;
    CU(cudaMallocHost((void **)&src, bytes));
    CU(cudaMallocHost((void **)&dst, bytes));
    CU(cudaMalloc(&d, bytes));
    CU(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    if (HcclStreamCreateFromCuda(&hs, (void *)cs) != HCCL_SUCCESS) {
        FAIL("HcclStreamCreateFromCuda");
        return;
    }
    for (int it = 0; it < 8; it++) {
        const int use_null = it % 2; /* odd: stream NULL with the legacy default stream */
        cudaStream_t q = use_null ? (cudaStream_t)0 : cs;
        int32_t v = it + 1 + rank;
        for (uint64_t i = 0; i < cnt; i++)
            src[i] = v;
        /* before: slow work, then the value the collective must see */
        for (int j = 0; j < 8; j++)
            CU(cudaMemsetAsync(d, 0x7f, bytes, q));
        CU(cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, q));
        HcclResult r = HcclAllReduce(d, d, cnt, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm,
                                     use_null ? NULL : hs);
        /* after: read the result, then overwrite it; a collective still
         * running would leave its own bytes instead */
        CU(cudaMemcpyAsync(dst, d, bytes, cudaMemcpyDeviceToHost, q));
        CU(cudaMemsetAsync(d, 0x11, bytes, q));
        if (r == HCCL_SUCCESS && !use_null)
            r = HcclStreamSynchronize(hs);
        CU(cudaStreamSynchronize(q));
        if (r != HCCL_SUCCESS) {
            FAIL("order: AllReduce on %s: %d", use_null ? "NULL" : "the CUDA stream", r);
            continue;
        }
        int32_t want = 0;
        for (int p = 0; p < nranks; p++)
            want += it + 1 + p;
        for (uint64_t i = 0; i < cnt; i++)
            if (dst[i] != want) {
                FAIL("order (%s): element %llu is %d, expected %d", use_null ? "NULL" : "cuda",
                     (unsigned long long)i, dst[i], want);
                break;
            }
        int32_t last = 0;
        CU(cudaMemcpy(&last, (char *)d + bytes - 4, 4, cudaMemcpyDeviceToHost));
        if (last != 0x11111111)
            FAIL("order (%s): the work queued after the collective was overwritten (%08x)",
                 use_null ? "NULL" : "cuda", last);
    }
    /* what waiting for a CUDA stream costs, three ways */
    const int N = 2000;
    cudaEvent_t ev;
    CU(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    double t0 = MPI_Wtime();
    for (int i = 0; i < N; i++)
        CU(cudaStreamSynchronize(cs));
    double t1 = MPI_Wtime();
    for (int i = 0; i < N; i++) {
        CU(cudaEventRecord(ev, cs));
        CU(cudaEventSynchronize(ev));
    }
    double t2 = MPI_Wtime();
    for (int i = 0; i < N; i++) {
        host_flag = 0;
        CU(cudaLaunchHostFunc(cs, host_fn, NULL));
        while (!host_flag)
            ;
    }
    double t3 = MPI_Wtime();
    if (rank == 0)
        printf("test_gpu order: waiting for an idle CUDA stream: cudaStreamSynchronize %.2f us, "
               "cudaEventRecord+cudaEventSynchronize %.2f us, cudaLaunchHostFunc round trip "
               "%.2f us\n", (t1 - t0) / N * 1e6, (t2 - t1) / N * 1e6, (t3 - t2) / N * 1e6);
    CU(cudaEventDestroy(ev));
    HcclStreamDestroy(hs);
    CU(cudaStreamDestroy(cs));
    CU(cudaFree(d));
    CU(cudaFreeHost(src));
    CU(cudaFreeHost(dst));
    if (rank == 0)
        printf("test_gpu order: 8 rounds on %d ranks\n", nranks);
}

/* ---- ranks that disagree on host or device buffers ------------------------- */

static void mismatch(void)
{
    enum { N = 3u << 20 }; /* several chunks: without the check the ranks would diverge */
    float *h = malloc(N * sizeof(float)), *back = malloc(N * sizeof(float));
    void *d;
    CU(cudaMalloc(&d, N * sizeof(float)));
    fill(h, N * sizeof(float), 7 + (uint64_t)rank);
    CU(cudaMemcpy(d, h, N * sizeof(float), cudaMemcpyHostToDevice));
    void *buf = rank == 0 ? (void *)h : d;
    HcclResult r = HcclAllReduce(buf, buf, N, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL);
    if (r != HCCL_E_PARA)
        FAIL("mismatch: AllReduce with rank 0 on host buffers: %d, expected HCCL_E_PARA", r);
    if (rank == 0) { /* back: what h held */
        fill(back, N * sizeof(float), 7 + (uint64_t)rank);
    } else {
        CU(cudaMemcpy(back, d, N * sizeof(float), cudaMemcpyDeviceToHost));
        fill(h, N * sizeof(float), 7 + (uint64_t)rank);
    }
    if (memcmp(back, h, N * sizeof(float)) != 0)
        FAIL("mismatch: the refused call wrote the buffer");
    CU(cudaFree(d));
    free(h), free(back);
    if (rank == 0)
        printf("test_gpu mismatch: refused on every rank\n");
}

/* ---- busbw ------------------------------------------------------------------ */

static double timed(int coll, void *s, void *r, size_t bytes, int iters)
{
    const uint64_t n = (uint64_t)nranks;
    uint64_t cnt = bytes / 4;
    if (coll == 2)
        cnt = cnt / n;
    if (cnt == 0)
        cnt = 1;
    double best = 0;
    for (int i = -1; i < iters; i++) { /* one warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        HcclResult rc = coll == 0 ? HcclAllReduce(s, r, cnt, HCCL_DATA_TYPE_FP32,
                                                  HCCL_REDUCE_SUM, comm, NULL)
                        : coll == 1 ? HcclBroadcast(r, cnt, HCCL_DATA_TYPE_FP32, 0, comm, NULL)
                                    : HcclAllGather(s, r, cnt, HCCL_DATA_TYPE_FP32, comm, NULL);
        double t = MPI_Wtime() - t0, tmax;
        if (rc != HCCL_SUCCESS)
            FAIL("bench: collective %d of %zu bytes: %d", coll, bytes, rc);
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (i >= 0)
            best += tmax;
    }
    return best / iters;
}

static void bench(void)
{
    static const char *const names[3] = {"AllReduce", "Broadcast", "AllGather"};
    const size_t maxb = (size_t)1 << 30;
    void *hs, *hr, *ds, *dr;
    const double n = nranks;
    hs = malloc(maxb), hr = malloc(maxb);
    if (!hs || !hr) {
        fprintf(stderr, "rank %d: no memory for the benchmark\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(hs, 0, maxb), memset(hr, 0, maxb);
    CU(cudaMalloc(&ds, maxb));
    CU(cudaMalloc(&dr, maxb));
    CU(cudaMemset(ds, 0, maxb));
    CU(cudaMemset(dr, 0, maxb));
    if (rank == 0) {
        printf("| collective | bytes | host us | host busbw GB/s | device us | device busbw "
               "GB/s |\n|---|---:|---:|---:|---:|---:|\n");
    }
    for (int c = 0; c < 3; c++)
        for (size_t b = 8; b <= maxb; b *= 8) {
            int iters = b >= ((size_t)64 << 20) ? 3 : b >= ((size_t)1 << 20) ? 10 : 50;
            double th = timed(c, hs, hr, b, iters), td = timed(c, ds, dr, b, iters);
            double f = c == 0 ? 2 * (n - 1) / n : c == 1 ? 1 : (n - 1) / n;
            if (rank == 0)
                printf("| %s | %zu | %.1f | %.2f | %.1f | %.2f |\n", names[c], b, th * 1e6,
                       b / th * f / 1e9, td * 1e6, b / td * f / 1e9);
            if (b == (size_t)1 << 30)
                break;
        }
    CU(cudaFree(ds));
    CU(cudaFree(dr));
    free(hs), free(hr);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *mode = argc > 1 ? argv[1] : "matrix";
    const int gpu = has_gpu();
    if (gpu) {
        int nd = 1;
        CU(cudaGetDeviceCount(&nd));
        CU(cudaSetDevice(rank % nd));
    }
    if (HcclCommInitMpi(MPI_COMM_WORLD, &comm) != HCCL_SUCCESS) {
        fprintf(stderr, "rank %d: HcclCommInitMpi failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!gpu) {
        fallback();
        if (rank == 0)
            printf("test_gpu %s: no GPU here: checked the host fallback only\n", mode);
    } else if (strcmp(mode, "order") == 0) {
        order();
    } else if (strcmp(mode, "ipc") == 0) {
        matrix(1);
    } else if (strcmp(mode, "mismatch") == 0) {
        mismatch();
    } else if (strcmp(mode, "bench") == 0) {
        bench();
    } else {
        matrix(0);
    }
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    HcclCommDestroy(comm);
    if (rank == 0)
        printf("test_gpu %s: %s\n", mode, all ? "FAILED" : "passed");
    MPI_Finalize();
    return all ? 1 : 0;
}
