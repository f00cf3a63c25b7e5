/*
 * test/mpi/test_stream_err.c - errors of stream operations (public API
 * only; 2 or more ranks).
 *
 *  1. Bad input is refused at enqueue with the documented code and
 *     nothing is enqueued (the stream stays empty: HcclStreamQuery is
 *     HCCL_SUCCESS at once): a stream handle that is not a stream, NULL
 *     buffers, a bad root, a bad type, a group naming two streams;
 *     HcclStreamCreateFromCuda without CUDA; NULL arguments of the stream
 *     calls.
 *  2. A stream operation that fails (only rank 0 calls an AllReduce on a
 *     communicator with a 1 s deadline, so it times out) surfaces as
 *     HCCL_E_TIMEOUT from HcclStreamSynchronize and from
 *     HcclGetCommAsyncError; the 20 operations queued behind it on the
 *     same stream do not hang (they are skipped, the synchronize returns
 *     within a few seconds), and after the synchronize the stream runs
 *     new work normally (on another communicator).
 *  3. HcclCommAbort: a stream operation waiting for a peer that never
 *     comes ends with HCCL_E_SUSPENDING.
 * Prints "test_stream_err: N checks, M failures" on rank 0.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_rank, g_n;
static long g_checks, g_fails;

static void failf(const char *fmt, ...)
{
    g_fails++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] FAIL ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

#define EXPECT(want, call) \
    do { \
        HcclResult r_ = (call); \
        g_checks++; \
        if (r_ != (want)) \
            failf("%s:%d %s -> %s, expected %s", __FILE__, __LINE__, #call, \
                  HcclGetErrorString(r_), HcclGetErrorString(want)); \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Every rank's first collective on a communicator is collective in any case
 * (it may set up shared staging, src/comm/shm.h): done here by everyone, before
 * the one-sided calls below. */
static void warm_up(HcclComm c)
{
    int v = 1;
    EXPECT(HCCL_SUCCESS, HcclAllReduce(&v, &v, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, c,
                                       NULL));
}

static void section_bad_input(HcclComm comm)
{
    HcclStream s;
    EXPECT(HCCL_SUCCESS, HcclStreamCreate(&s));
    int buf[64] = {0};
    uint64_t fake[8] = {0}; /* not a stream */
    EXPECT(HCCL_E_PARA, HcclAllReduce(buf, buf, 8, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm,
                                      fake));
    EXPECT(HCCL_E_PTR, HcclAllReduce(NULL, buf, 8, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm,
                                     s));
    EXPECT(HCCL_E_PARA, HcclBroadcast(buf, 8, HCCL_DATA_TYPE_INT32, (uint32_t)g_n, comm, s));
    EXPECT(HCCL_E_PARA, HcclAllReduce(buf, buf, 8, (HcclDataType)99, HCCL_REDUCE_SUM, comm, s));
    EXPECT(HCCL_E_NOT_SUPPORT, HcclAllReduce(buf, buf, 8, HCCL_DATA_TYPE_FP8E4M3,
                                             HCCL_REDUCE_SUM, comm, s));
    EXPECT(HCCL_E_PARA, HcclSend(buf, 8, HCCL_DATA_TYPE_INT32, (uint32_t)g_n, comm, s));
    EXPECT(HCCL_E_PARA, HcclBarrier(comm, fake));
    const void *in[1] = {NULL};
    void *out[1] = {buf};
    uint64_t cnt[1] = {4};
    EXPECT(HCCL_E_PTR, HcclAllReduceMulti(in, out, cnt, 1, HCCL_DATA_TYPE_INT32,
                                          HCCL_REDUCE_SUM, comm, s));
    /* nothing was enqueued */
    EXPECT(HCCL_SUCCESS, HcclStreamQuery(s));
    EXPECT(HCCL_SUCCESS, HcclStreamSynchronize(s));
    /* a group whose calls name two streams */
    HcclStream s2;
    EXPECT(HCCL_SUCCESS, HcclStreamCreate(&s2));
    EXPECT(HCCL_SUCCESS, HcclGroupStart());
    EXPECT(HCCL_SUCCESS, HcclAllReduce(buf, buf, 8, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm,
                                       s));
    EXPECT(HCCL_SUCCESS, HcclAllReduce(buf + 8, buf + 8, 8, HCCL_DATA_TYPE_INT32,
                                       HCCL_REDUCE_SUM, comm, s2));
    EXPECT(HCCL_E_PARA, HcclGroupEnd());
    EXPECT(HCCL_SUCCESS, HcclStreamQuery(s));
    EXPECT(HCCL_SUCCESS, HcclStreamQuery(s2));
    /* the stream calls themselves */
    EXPECT(HCCL_E_PTR, HcclStreamCreate(NULL));
    EXPECT(HCCL_E_PTR, HcclStreamSynchronize(NULL));
    EXPECT(HCCL_E_PTR, HcclStreamQuery(NULL));
    EXPECT(HCCL_E_PARA, HcclStreamSynchronize(fake));
    HcclStream sc = NULL;
    HcclResult rc = HcclStreamCreateFromCuda(&sc, NULL);
    g_checks++;
    if (rc == HCCL_SUCCESS)
        HcclStreamDestroy(sc); /* a CUDA build */
    else if (rc != HCCL_E_NOT_SUPPORT)
        failf("HcclStreamCreateFromCuda -> %s", HcclGetErrorString(rc));
    EXPECT(HCCL_SUCCESS, HcclStreamDestroy(s));
    EXPECT(HCCL_SUCCESS, HcclStreamDestroy(s2));
    /* the communicator still works */
    int v = g_rank + 1;
    EXPECT(HCCL_SUCCESS, HcclAllReduce(&v, &v, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm,
                                       NULL));
    g_checks++;
    if (v != g_n * (g_n + 1) / 2)
        failf("AllReduce after the bad calls: %d", v);
}

static void section_async_error(HcclComm world)
{
    /* a communicator with a 1 s deadline for the failing operation */
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    cfg.hcclExecTimeOut = 1;
    HcclComm bad, good;
    EXPECT(HCCL_SUCCESS, HcclCommInitMpiConfig(MPI_COMM_WORLD, &cfg, &bad));
    EXPECT(HCCL_SUCCESS, HcclCommInitMpi(MPI_COMM_WORLD, &good));
    warm_up(bad);
    warm_up(good);
    HcclStream s;
    EXPECT(HCCL_SUCCESS, HcclStreamCreate(&s));
    enum { LATER = 20 };
    int x[LATER + 1];
    for (int i = 0; i <= LATER; i++)
        x[i] = i;
    if (g_rank == 0) {
        double t0 = now_s();
        /* nobody else calls it: it times out after 1 s */
        EXPECT(HCCL_SUCCESS, HcclAllReduce(x, x, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, bad,
                                           s));
        for (int i = 1; i <= LATER; i++)
            EXPECT(HCCL_SUCCESS, HcclAllReduce(x + i, x + i, 1, HCCL_DATA_TYPE_INT32,
                                               HCCL_REDUCE_SUM, bad, s));
        EXPECT(HCCL_E_TIMEOUT, HcclStreamSynchronize(s));
        double dt = now_s() - t0;
        g_checks++;
        if (dt > 20)
            failf("the failed stream took %.1f s to synchronize (later operations hung?)", dt);
        HcclResult ae = HCCL_SUCCESS;
        EXPECT(HCCL_SUCCESS, HcclGetCommAsyncError(bad, &ae));
        g_checks++;
        if (ae != HCCL_E_TIMEOUT)
            failf("HcclGetCommAsyncError after a stream timeout: %s", HcclGetErrorString(ae));
        /* reported once: the stream is clean again */
        EXPECT(HCCL_SUCCESS, HcclStreamQuery(s));
        printf("test_stream_err: failed stream synchronized after %.2f s (deadline 1 s, %d "
               "operations behind it)\n", dt, LATER);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* the same stream runs new work on another communicator */
    int v = g_rank + 1;
    EXPECT(HCCL_SUCCESS, HcclAllReduce(&v, &v, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, good,
                                       s));
    EXPECT(HCCL_SUCCESS, HcclStreamSynchronize(s));
    g_checks++;
    if (v != g_n * (g_n + 1) / 2)
        failf("AllReduce on the stream after its error: %d, expected %d", v, g_n * (g_n + 1) / 2);
    EXPECT(HCCL_SUCCESS, HcclStreamDestroy(s));
    EXPECT(HCCL_SUCCESS, HcclCommDestroy(bad));
    EXPECT(HCCL_SUCCESS, HcclCommDestroy(good));
    (void)world;
}

static void section_abort(void)
{
    HcclComm c;
    EXPECT(HCCL_SUCCESS, HcclCommInitMpi(MPI_COMM_WORLD, &c));
    warm_up(c);
    HcclStream s;
    EXPECT(HCCL_SUCCESS, HcclStreamCreate(&s));
    if (g_rank == 0) {
        int x = 1;
        EXPECT(HCCL_SUCCESS, HcclAllReduce(&x, &x, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, c,
                                           s));
        EXPECT(HCCL_E_AGAIN, HcclStreamQuery(s));
        EXPECT(HCCL_SUCCESS, HcclCommAbort(c));
        EXPECT(HCCL_E_SUSPENDING, HcclStreamSynchronize(s));
    }
    EXPECT(HCCL_SUCCESS, HcclStreamDestroy(s));
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT(HCCL_SUCCESS, HcclCommDestroy(c));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    if (g_n < 2) {
        if (g_rank == 0)
            printf("test_stream_err: needs 2 or more ranks\n");
        MPI_Finalize();
        return 77;
    }
    HcclComm comm;
    if (HcclCommInitMpi(MPI_COMM_WORLD, &comm) != HCCL_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    section_bad_input(comm);
    section_async_error(comm);
    section_abort();
    EXPECT(HCCL_SUCCESS, HcclCommDestroy(comm));
    long tot[2] = {g_checks, g_fails}, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_stream_err: %ld checks, %ld failures on %d ranks\n", sum[0], sum[1], g_n);
    MPI_Bcast(sum, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return sum[1] ? 1 : 0;
}
