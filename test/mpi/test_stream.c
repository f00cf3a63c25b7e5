/*
 * test/mpi/test_stream.c - streams under mpirun (public API only).
 *
 *  1. 100 operations on 3 streams of priorities 5, 0 and -3, enqueued
 *     round-robin on one communicator, then checked after one synchronize:
 *     - stream "hi": a chain of 34 out-of-place AllReduces, each reading
 *       the previous one's output (started early, one would read a poison
 *       value: this checks the stream's order and its hazard rule);
 *     - stream "mid": 33 in-place Broadcasts (rotating roots) and
 *       AllReduces on one buffer, whose result depends on their order;
 *     - stream "lo": 33 independent operations on separate buffers
 *       (AllReduce up to 256 KB, ReduceScatter, AllGather, AlltoAll,
 *       Barrier), which may run concurrently.
 *     Results are compared with a model of every rank computed locally.
 *  2. blocking calls between stream calls on the same communicator;
 *  3. 600 operations outstanding on one stream (more than the 254
 *     sequence values of the tag: the enqueue must wait, not collide);
 *  4. a group (Send/Recv ring + AllReduces, fused) enqueued on a stream;
 *     HcclAllReduceMulti on a stream;
 *  5. HcclStreamQuery: HCCL_SUCCESS on an empty stream and after
 *     synchronize;
 *  6. CPU use (getrusage, a resource check, not a timing threshold):
 *     a) one second with streams created and the progress thread idle:
 *        less than 50 ms of CPU in the whole process;
 *     b) one second during which a stream operation waits for a peer that
 *        sleeps: less than 300 ms (the progress thread sleeps on the UCX
 *        worker's event fd instead of spinning).
 * Prints "test_stream: N checks, M failures" on rank 0; exit 1 on failure.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int g_rank, g_n;
static long g_checks, g_fails;

static void failf(const char *fmt, ...)
{
    g_fails++;
    if (g_fails > 30)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] FAIL ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

#define CHECK(call) \
    do { \
        HcclResult r_ = (call); \
        g_checks++; \
        if (r_ != HCCL_SUCCESS) \
            failf("%s:%d %s -> %s", __FILE__, __LINE__, #call, HcclGetErrorString(r_)); \
    } while (0)

static void expect_u32(const char *what, const uint32_t *got, const uint32_t *want, size_t n)
{
    g_checks++;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            failf("%s: element %zu is %u, expected %u", what, i, got[i], want[i]);
            return;
        }
}

static uint32_t f0(int r, size_t i)
{
    return (uint32_t)(r * 1000003u + i * 7u + 1u);
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* ---- 1. 100 operations on 3 streams --------------------------------- */

#define CHAIN 34
#define CN 1000
#define MIDOPS 33
#define MN 777
#define LOOPS 33

typedef struct {
    int kind;      /* 0 AllReduce, 1 ReduceScatter, 2 AllGather, 3 AlltoAll, 4 Barrier */
    size_t count;
    uint32_t *in, *out;
} lo_op_t;

static void section_streams(HcclComm comm)
{
    HcclStream hi, mid, lo;
    CHECK(HcclStreamCreateWithPriority(&hi, 5));
    CHECK(HcclStreamCreateWithPriority(&mid, 0));
    CHECK(HcclStreamCreateWithPriority(&lo, -3));
    g_checks++;
    if (HcclStreamQuery(lo) != HCCL_SUCCESS)
        failf("HcclStreamQuery on an empty stream is not HCCL_SUCCESS");

    /* hi: chain */
    uint32_t *chain = malloc((CHAIN + 1) * CN * sizeof(uint32_t));
    for (size_t i = 0; i < CN; i++)
        chain[i] = f0(g_rank, i);
    for (size_t i = CN; i < (CHAIN + 1) * CN; i++)
        chain[i] = 0xdeadbeefu;
    /* mid: one buffer, broadcasts and sums in an order that matters */
    uint32_t *y = malloc(MN * sizeof(uint32_t));
    uint32_t (*model)[MN] = malloc((size_t)g_n * sizeof(*model));
    for (int r = 0; r < g_n; r++)
        for (size_t i = 0; i < MN; i++)
            model[r][i] = f0(r, i) ^ 0x5555u;
    memcpy(y, model[g_rank], sizeof(uint32_t) * MN);
    /* lo: independent operations */
    lo_op_t lops[LOOPS];
    for (int k = 0; k < LOOPS; k++) {
        lo_op_t *o = &lops[k];
        o->kind = k % 5;
        o->count = (size_t)1 << (k % 17); /* 1 .. 64 K elements (256 KB) */
        size_t nin = o->count, nout = o->count;
        if (o->kind == 1)
            nin = o->count * g_n;
        if (o->kind == 2)
            nout = o->count * g_n;
        if (o->kind == 3)
            nin = nout = o->count * g_n;
        o->in = malloc(nin * sizeof(uint32_t));
        o->out = malloc(nout * sizeof(uint32_t));
        for (size_t i = 0; i < nin; i++)
            o->in[i] = f0(g_rank, i + k);
        for (size_t i = 0; i < nout; i++)
            o->out[i] = 0xdeadbeefu;
    }

    int kh = 0, km = 0, kl = 0;
    for (int op = 0; op < CHAIN + MIDOPS + LOOPS; op++) {
        int which = op % 3;
        if ((which == 0 && kh == CHAIN) || (which == 1 && km == MIDOPS) ||
            (which == 2 && kl == LOOPS))
            which = kh < CHAIN ? 0 : km < MIDOPS ? 1 : 2;
        if (which == 0) {
            CHECK(HcclAllReduce(chain + kh * CN, chain + (kh + 1) * CN, CN,
                                HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM, comm, hi));
            kh++;
        } else if (which == 1) {
            if (km % 2 == 0)
                CHECK(HcclBroadcast(y, MN, HCCL_DATA_TYPE_UINT32, (uint32_t)((km / 2) % g_n),
                                    comm, mid));
            else
                CHECK(HcclAllReduce(y, y, MN, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM, comm,
                                    mid));
            km++;
        } else {
            lo_op_t *o = &lops[kl];
            switch (o->kind) {
            case 0:
                CHECK(HcclAllReduce(o->in, o->out, o->count, HCCL_DATA_TYPE_UINT32,
                                    HCCL_REDUCE_SUM, comm, lo));
                break;
            case 1:
                CHECK(HcclReduceScatter(o->in, o->out, o->count, HCCL_DATA_TYPE_UINT32,
                                        HCCL_REDUCE_SUM, comm, lo));
                break;
            case 2:
                CHECK(HcclAllGather(o->in, o->out, o->count, HCCL_DATA_TYPE_UINT32, comm, lo));
                break;
            case 3:
                CHECK(HcclAlltoAll(o->in, o->count, HCCL_DATA_TYPE_UINT32, o->out, o->count,
                                   HCCL_DATA_TYPE_UINT32, comm, lo));
                break;
            default:
                CHECK(HcclBarrier(comm, lo));
                break;
            }
            kl++;
        }
    }
    CHECK(HcclStreamSynchronize(lo));
    CHECK(HcclStreamSynchronize(mid));
    CHECK(HcclStreamSynchronize(hi));
    g_checks++;
    if (HcclStreamQuery(hi) != HCCL_SUCCESS || HcclStreamQuery(mid) != HCCL_SUCCESS ||
        HcclStreamQuery(lo) != HCCL_SUCCESS)
        failf("HcclStreamQuery after synchronize is not HCCL_SUCCESS");

    /* hi */
    uint32_t *want = malloc(CN * sizeof(uint32_t));
    for (size_t i = 0; i < CN; i++) {
        uint32_t s = 0;
        for (int r = 0; r < g_n; r++)
            s += f0(r, i);
        want[i] = s;
    }
    for (int k = 1; k <= CHAIN; k++) {
        char what[64];
        snprintf(what, sizeof(what), "stream hi, chained AllReduce %d", k);
        expect_u32(what, chain + k * CN, want, CN);
        for (size_t i = 0; i < CN; i++)
            want[i] *= (uint32_t)g_n;
    }
    /* mid */
    for (int k = 0; k < MIDOPS; k++) {
        if (k % 2 == 0) {
            int root = (k / 2) % g_n;
            for (int r = 0; r < g_n; r++)
                if (r != root)
                    memcpy(model[r], model[root], sizeof(model[r]));
        } else {
            for (size_t i = 0; i < MN; i++) {
                uint32_t s = 0;
                for (int r = 0; r < g_n; r++)
                    s += model[r][i];
                for (int r = 0; r < g_n; r++)
                    model[r][i] = s;
            }
        }
    }
    expect_u32("stream mid, Broadcast/AllReduce sequence", y, model[g_rank], MN);
    /* lo */
    for (int k = 0; k < LOOPS; k++) {
        lo_op_t *o = &lops[k];
        size_t cnt = o->count, nout = cnt * (o->kind == 2 || o->kind == 3 ? g_n : 1);
        uint32_t *w = malloc(nout * sizeof(uint32_t));
        for (size_t i = 0; i < nout; i++) {
            switch (o->kind) {
            case 0:
            case 1: {
                size_t src = o->kind == 0 ? i : g_rank * cnt + i;
                uint32_t s = 0;
                for (int r = 0; r < g_n; r++)
                    s += f0(r, src + k);
                w[i] = s;
                break;
            }
            case 2:
                w[i] = f0((int)(i / cnt), i % cnt + k);
                break;
            case 3: /* block b of my output = block `me` of rank b's input */
                w[i] = f0((int)(i / cnt), g_rank * cnt + i % cnt + k);
                break;
            default:
                w[i] = 0xdeadbeefu;
            }
        }
        char what[64];
        snprintf(what, sizeof(what), "stream lo, operation %d (kind %d, count %zu)", k, o->kind,
                 cnt);
        expect_u32(what, o->out, w, nout);
        free(w);
        free(o->in);
        free(o->out);
    }
    free(want);
    free(chain);
    free(y);
    free(model);
    CHECK(HcclStreamDestroy(hi));
    CHECK(HcclStreamDestroy(mid));
    CHECK(HcclStreamDestroy(lo));
}

/* ---- 2. blocking calls between stream calls -------------------------- */

static void section_mixed(HcclComm comm)
{
    HcclStream s;
    CHECK(HcclStreamCreate(&s));
    enum { K = 12, N = 5000 };
    uint32_t *a = malloc(K * N * sizeof(uint32_t)), *b = malloc(N * sizeof(uint32_t));
    for (size_t i = 0; i < (size_t)K * N; i++)
        a[i] = f0(g_rank, i);
    for (size_t i = 0; i < N; i++)
        b[i] = f0(g_rank, i + 99);
    for (int k = 0; k < K; k++) {
        CHECK(HcclAllReduce(a + k * N, a + k * N, N, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM,
                            comm, s));
        if (k == K / 2) /* blocking, while the stream's operations are in flight */
            CHECK(HcclAllReduce(b, b, N, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM, comm, NULL));
    }
    CHECK(HcclStreamSynchronize(s));
    uint32_t *w = malloc(K * N * sizeof(uint32_t));
    for (size_t i = 0; i < (size_t)K * N; i++) {
        uint32_t x = 0;
        for (int r = 0; r < g_n; r++)
            x += f0(r, i);
        w[i] = x;
    }
    expect_u32("mixed: stream AllReduces", a, w, (size_t)K * N);
    for (size_t i = 0; i < N; i++) {
        uint32_t x = 0;
        for (int r = 0; r < g_n; r++)
            x += f0(r, i + 99);
        w[i] = x;
    }
    expect_u32("mixed: the blocking AllReduce", b, w, N);
    free(a);
    free(b);
    free(w);
    CHECK(HcclStreamDestroy(s));
}

/* ---- 3. more operations outstanding than sequence values -------------- */

static void section_many(HcclComm comm)
{
    HcclStream s;
    CHECK(HcclStreamCreate(&s));
    enum { M = 600 };
    uint32_t *v = malloc(M * sizeof(uint32_t));
    for (int i = 0; i < M; i++)
        v[i] = f0(g_rank, i);
    for (int i = 0; i < M; i++)
        CHECK(HcclAllReduce(v + i, v + i, 1, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM, comm, s));
    CHECK(HcclStreamSynchronize(s));
    uint32_t *w = malloc(M * sizeof(uint32_t));
    for (int i = 0; i < M; i++) {
        uint32_t x = 0;
        for (int r = 0; r < g_n; r++)
            x += f0(r, i);
        w[i] = x;
    }
    expect_u32("600 outstanding AllReduces", v, w, M);
    free(v);
    free(w);
    CHECK(HcclStreamDestroy(s));
}

/* ---- 4. a group and AllReduceMulti on a stream ------------------------ */

static void section_group_multi(HcclComm comm)
{
    HcclStream s;
    CHECK(HcclStreamCreateWithPriority(&s, 1));
    enum { P = 3000, T = 7, TN = 513 };
    uint32_t *sb = malloc(P * sizeof(uint32_t)), *rb = malloc(P * sizeof(uint32_t));
    uint32_t *t = malloc(T * TN * sizeof(uint32_t));
    for (size_t i = 0; i < P; i++) {
        sb[i] = f0(g_rank, i);
        rb[i] = 0;
    }
    for (size_t i = 0; i < (size_t)T * TN; i++)
        t[i] = f0(g_rank, i + 5);
    int to = (g_rank + 1) % g_n, from = (g_rank + g_n - 1) % g_n;
    CHECK(HcclGroupStart());
    CHECK(HcclSend(sb, P, HCCL_DATA_TYPE_UINT32, (uint32_t)to, comm, s));
    CHECK(HcclRecv(rb, P, HCCL_DATA_TYPE_UINT32, (uint32_t)from, comm, s));
    for (int k = 0; k < T; k++) /* same type and op: fused */
        CHECK(HcclAllReduce(t + k * TN, t + k * TN, TN - k * 50, HCCL_DATA_TYPE_UINT32,
                            HCCL_REDUCE_SUM, comm, s));
    CHECK(HcclGroupEnd());

    /* AllReduceMulti: 40 tensors of mixed sizes, some in place */
    enum { MT = 40 };
    const void *in[MT];
    void *out[MT];
    uint64_t cnt[MT];
    uint32_t *mi[MT], *mo[MT];
    for (int k = 0; k < MT; k++) {
        cnt[k] = (uint64_t)1 << (k % 15);
        mi[k] = malloc(cnt[k] * sizeof(uint32_t));
        mo[k] = k % 3 == 0 ? mi[k] : malloc(cnt[k] * sizeof(uint32_t));
        for (uint64_t i = 0; i < cnt[k]; i++)
            mi[k][i] = f0(g_rank, i + 1000 * k);
        in[k] = mi[k];
        out[k] = mo[k];
    }
    CHECK(HcclAllReduceMulti(in, out, cnt, MT, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM, comm, s));
    CHECK(HcclStreamSynchronize(s));

    size_t wn = P > T * TN ? P : T * TN;
    for (int k = 0; k < MT; k++)
        wn = cnt[k] > wn ? cnt[k] : wn;
    uint32_t *w = malloc(wn * sizeof(uint32_t));
    for (size_t i = 0; i < P; i++)
        w[i] = f0(from, i);
    expect_u32("group on a stream: Recv", rb, w, P);
    for (int k = 0; k < T; k++) {
        for (size_t i = 0; i < TN; i++) {
            uint32_t x = 0;
            for (int r = 0; r < g_n; r++)
                x += f0(r, k * TN + i + 5);
            w[i] = i < (size_t)(TN - k * 50) ? x : f0(g_rank, k * TN + i + 5);
        }
        expect_u32("group on a stream: fused AllReduce", t + k * TN, w, TN);
    }
    for (int k = 0; k < MT; k++) {
        for (uint64_t i = 0; i < cnt[k]; i++) {
            uint32_t x = 0;
            for (int r = 0; r < g_n; r++)
                x += f0(r, i + 1000 * k);
            w[i] = x;
        }
        expect_u32("AllReduceMulti on a stream", mo[k], w, cnt[k]);
        if (mo[k] != mi[k])
            free(mo[k]);
        free(mi[k]);
    }
    free(w);
    free(sb);
    free(rb);
    free(t);
    CHECK(HcclStreamDestroy(s));
}

/* ---- 6. CPU use ------------------------------------------------------ */

static void section_cpu(HcclComm comm)
{
    HcclStream s1, s2;
    CHECK(HcclStreamCreate(&s1));
    CHECK(HcclStreamCreateWithPriority(&s2, 2));
    uint32_t x = 1;
    CHECK(HcclAllReduce(&x, &x, 1, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM, comm, s1));
    CHECK(HcclStreamSynchronize(s1));
    MPI_Barrier(MPI_COMM_WORLD);
    /* a) idle: streams exist, the progress thread has started, nothing queued */
    double c0 = cpu_s();
    sleep_s(1.0);
    double idle = cpu_s() - c0;
    g_checks++;
    if (idle > 0.05)
        failf("idle second with streams created: %.3f s of CPU (expected < 0.05)", idle);
    /* b) in flight, waiting for a peer that sleeps (rank 0 waits for the others) */
    MPI_Barrier(MPI_COMM_WORLD);
    uint32_t y = (uint32_t)g_rank + 1;
    double busy = 0;
    if (g_rank == 0) {
        c0 = cpu_s();
        CHECK(HcclAllReduce(&y, &y, 1, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM, comm, s2));
        sleep_s(1.0);
        busy = cpu_s() - c0;
        CHECK(HcclStreamSynchronize(s2));
    } else {
        sleep_s(1.0);
        CHECK(HcclAllReduce(&y, &y, 1, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM, comm, s2));
        CHECK(HcclStreamSynchronize(s2));
    }
    g_checks++;
    if (y != (uint32_t)(g_n * (g_n + 1) / 2))
        failf("AllReduce waited for a sleeping peer: %u, expected %d", y, g_n * (g_n + 1) / 2);
    g_checks++;
    /* a progress thread that spins through the second uses about 1 s; one
     * that sleeps 0.08-0.11 s on a quiet machine, up to 0.31 s on a loaded
     * one (its spins before each sleep take longer) */
    if (g_rank == 0 && busy > 0.6)
        failf("one second waiting for a sleeping peer: %.3f s of CPU (expected < 0.6: the "
              "progress thread should sleep)", busy);
    if (g_rank == 0)
        printf("test_stream: CPU over an idle second %.4f s; over a second in flight %.4f s\n",
               idle, busy);
    CHECK(HcclStreamDestroy(s1));
    CHECK(HcclStreamDestroy(s2));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    HcclComm comm;
    HcclResult r = HcclCommInitMpi(MPI_COMM_WORLD, &comm);
    if (r != HCCL_SUCCESS) {
        fprintf(stderr, "[rank %d] HcclCommInitMpi: %s\n", g_rank, HcclGetErrorString(r));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    section_streams(comm);
    section_mixed(comm);
    section_many(comm);
    section_group_multi(comm);
    section_cpu(comm);
    CHECK(HcclCommDestroy(comm));

    long tot[2] = {g_checks, g_fails}, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_stream: %ld checks, %ld failures on %d ranks\n", sum[0], sum[1], g_n);
    MPI_Bcast(sum, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return sum[1] ? 1 : 0;
}
