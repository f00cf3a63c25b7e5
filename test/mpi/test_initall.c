/*
 * test/mpi/test_initall.c - HcclCommInitAll with several ranks in one
 * process, as HCCL programs use it: one communicator per device, each
 * driven by a thread of its own, all calling collectives at once.
 *
 * For each ndev given: HcclCommInitAll(ndev), then ndev threads, thread i
 * on comms[i]: rank and size, AllReduce, Broadcast, AllGather,
 * ReduceScatter, AlltoAll and Send/Recv at several sizes (small ones over
 * the shared staging, large ones pipelined), every result checked bit for
 * bit; a split of the communicator (the child lives in its parent's
 * context); then HcclCommDestroy, from each thread or, for every other
 * ndev, of all communicators one after another from the main thread (a
 * rank whose communicator is gone must not take its siblings' messages
 * with it). Bad arguments are refused first.
 *
 * No MPI: a single process. Usage: test_initall NDEV...
 * Exit 0 when every check passed; prints "test_initall: N checks, M failures".
 */
#include <hccl/hccl.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long g_checks, g_fails;

static void check(int rank, int ok, const char *fmt, ...)
{
    __atomic_add_fetch(&g_checks, 1, __ATOMIC_RELAXED);
    if (ok)
        return;
    __atomic_add_fetch(&g_fails, 1, __ATOMIC_RELAXED);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "[rank %d] FAIL %s\n", rank, msg);
}

#define RC(rank, call)                                                                     \
    do {                                                                                   \
        HcclResult r_ = (call);                                                            \
        check(rank, r_ == HCCL_SUCCESS, "%s = %d (%s)", #call, (int)r_,                  \
              HcclGetErrorString(r_));                                                     \
    } while (0)

typedef struct {
    HcclComm comm;
    uint32_t rank, n;
    int destroy; /* the thread destroys its communicator */
} rank_arg_t;

/* The value rank r holds at position k before an operation (exact in
 * float: at most 2^24). */
static int32_t val(uint32_t r, uint64_t k)
{
    return (int32_t)((r + 1) * 1000 + k % 997);
}

/* Every collective at `count` elements a rank (a block for the rooted
 * and all-to-all ones). */
static void collectives(const rank_arg_t *a, uint64_t count)
{
    const uint32_t me = a->rank, n = a->n;
    const int R = (int)me;
    HcclComm c = a->comm;
    int32_t *s = malloc(count * n * sizeof(int32_t));
    int32_t *r = malloc(count * n * sizeof(int32_t));
    float *f = malloc(count * sizeof(float));
    if (s == NULL || r == NULL || f == NULL) {
        check(R, 0, "out of memory for %llu elements", (unsigned long long)count);
        goto out;
    }
    uint64_t bad;

    /* AllReduce: int32 sum, then float sum in place (exact values) */
    for (uint64_t k = 0; k < count; k++) {
        s[k] = val(me, k);
        f[k] = (float)val(me, k);
    }
    RC(R, HcclAllReduce(s, r, count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, c, NULL));
    RC(R, HcclAllReduce(f, f, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, NULL));
    bad = 0;
    for (uint64_t k = 0; k < count; k++) {
        int64_t want = 0;
        for (uint32_t q = 0; q < n; q++)
            want += val(q, k);
        bad += r[k] != (int32_t)want || f[k] != (float)want;
    }
    check(R, bad == 0, "AllReduce %llu: %llu wrong elements", (unsigned long long)count,
          (unsigned long long)bad);

    /* Broadcast from the last rank */
    for (uint64_t k = 0; k < count; k++)
        s[k] = me == n - 1 ? val(me, k) : -1;
    RC(R, HcclBroadcast(s, count, HCCL_DATA_TYPE_INT32, n - 1, c, NULL));
    bad = 0;
    for (uint64_t k = 0; k < count; k++)
        bad += s[k] != val(n - 1, k);
    check(R, bad == 0, "Broadcast %llu: %llu wrong elements", (unsigned long long)count,
          (unsigned long long)bad);

    /* AllGather */
    for (uint64_t k = 0; k < count; k++)
        s[k] = val(me, k);
    memset(r, 0xff, count * n * sizeof(int32_t));
    RC(R, HcclAllGather(s, r, count, HCCL_DATA_TYPE_INT32, c, NULL));
    bad = 0;
    for (uint32_t q = 0; q < n; q++)
        for (uint64_t k = 0; k < count; k++)
            bad += r[q * count + k] != val(q, k);
    check(R, bad == 0, "AllGather %llu: %llu wrong elements", (unsigned long long)count,
          (unsigned long long)bad);

    /* ReduceScatter: block q of rank p holds val(p, q * count + k) */
    for (uint64_t k = 0; k < count * n; k++)
        s[k] = val(me, k);
    memset(r, 0xff, count * sizeof(int32_t));
    RC(R, HcclReduceScatter(s, r, count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, c, NULL));
    bad = 0;
    for (uint64_t k = 0; k < count; k++) {
        int64_t want = 0;
        for (uint32_t q = 0; q < n; q++)
            want += val(q, me * count + k);
        bad += r[k] != (int32_t)want;
    }
    check(R, bad == 0, "ReduceScatter %llu: %llu wrong elements", (unsigned long long)count,
          (unsigned long long)bad);

    /* AlltoAll: block q of rank p is p * 100000 + q * 1000 + k % 1000 */
    for (uint32_t q = 0; q < n; q++)
        for (uint64_t k = 0; k < count; k++)
            s[q * count + k] = (int32_t)(me * 100000 + q * 1000 + k % 1000);
    memset(r, 0xff, count * n * sizeof(int32_t));
    RC(R, HcclAlltoAll(s, count, HCCL_DATA_TYPE_INT32, r, count, HCCL_DATA_TYPE_INT32, c, NULL));
    bad = 0;
    for (uint32_t q = 0; q < n; q++)
        for (uint64_t k = 0; k < count; k++)
            bad += r[q * count + k] != (int32_t)(q * 100000 + me * 1000 + k % 1000);
    check(R, bad == 0, "AlltoAll %llu: %llu wrong elements", (unsigned long long)count,
          (unsigned long long)bad);

    /* Send/Recv around the ring: even ranks send first, odd ones receive
     * first (blocking calls, one thread a rank) */
    if (n > 1) {
        uint32_t right = (me + 1) % n, left = (me + n - 1) % n;
        for (uint64_t k = 0; k < count; k++)
            s[k] = val(me, k);
        memset(r, 0xff, count * sizeof(int32_t));
        for (int step = 0; step < 2; step++) {
            if ((step == 0) == (me % 2 == 0))
                RC(R, HcclSend(s, count, HCCL_DATA_TYPE_INT32, right, c, NULL));
            else
                RC(R, HcclRecv(r, count, HCCL_DATA_TYPE_INT32, left, c, NULL));
        }
        bad = 0;
        for (uint64_t k = 0; k < count; k++)
            bad += r[k] != val(left, k);
        check(R, bad == 0, "Send/Recv %llu from rank %u: %llu wrong elements",
              (unsigned long long)count, left, (unsigned long long)bad);
    }
out:
    free(s);
    free(r);
    free(f);
}

static void *rank_main(void *p)
{
    const rank_arg_t *a = p;
    const int R = (int)a->rank;
    uint32_t size = 0, id = UINT32_MAX;
    RC(R, HcclGetRankSize(a->comm, &size));
    RC(R, HcclGetRankId(a->comm, &id));
    check(R, size == a->n && id == a->rank, "rank %u of %u, expected %u of %u", id, size,
          a->rank, a->n);
    static const uint64_t counts[] = {1, 1000, 300000};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        collectives(a, counts[i]);
    /* a split: even and odd ranks */
    HcclComm sub = NULL;
    RC(R, HcclCommSplit(a->comm, (int)(a->rank % 2), (int)a->rank, &sub));
    if (sub != NULL) {
        uint32_t sn = (a->n - a->rank % 2 + 1) / 2, sr = a->rank / 2;
        int32_t x = (int32_t)a->rank, sum = 0;
        RC(R, HcclAllReduce(&x, &sum, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, sub, NULL));
        int32_t want = 0;
        for (uint32_t q = a->rank % 2; q < a->n; q += 2)
            want += (int32_t)q;
        check(R, sum == want, "split AllReduce (rank %u of %u) = %d, expected %d", sr, sn, sum,
              want);
        RC(R, HcclCommDestroy(sub));
    }
    if (a->destroy)
        RC(R, HcclCommDestroy(a->comm));
    return NULL;
}

static void run(uint32_t n, int destroy_in_threads)
{
    printf("=== HcclCommInitAll(%u), destroyed %s\n", n,
           destroy_in_threads ? "by each thread" : "one after another by the main thread");
    fflush(stdout);
    int32_t *dev = calloc(n, sizeof(int32_t));
    HcclComm *comms = calloc(n, sizeof(HcclComm));
    rank_arg_t *args = calloc(n, sizeof(rank_arg_t));
    pthread_t *th = calloc(n, sizeof(pthread_t));
    if (dev == NULL || comms == NULL || args == NULL || th == NULL) {
        check(-1, 0, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < n; i++)
        dev[i] = (int32_t)(n - 1 - i); /* any distinct devices */
    RC(-1, HcclCommInitAll(n, dev, comms));
    for (uint32_t i = 0; i < n; i++)
        check(-1, comms[i] != NULL, "comms[%u] is NULL", i);
    if (g_fails)
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        args[i] = (rank_arg_t){comms[i], i, n, destroy_in_threads};
        if (pthread_create(&th[i], NULL, rank_main, &args[i]) != 0) {
            check(-1, 0, "pthread_create");
            exit(1); /* the started ranks would wait for this one forever */
        }
    }
    for (uint32_t i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    if (!destroy_in_threads)
        for (uint32_t i = 0; i < n; i++)
            RC((int)i, HcclCommDestroy(comms[i]));
    /* every handle is gone */
    uint32_t size;
    for (uint32_t i = 0; i < n; i++)
        check((int)i, HcclGetRankSize(comms[i], &size) == HCCL_E_PARA,
              "comms[%u] still live after HcclCommDestroy", i);
out:
    free(dev);
    free(comms);
    free(args);
    free(th);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_initall NDEV...\n");
        return 2;
    }
    /* refused: duplicate or negative devices, no devices, NULL arrays */
    int32_t dup[2] = {3, 3}, neg[2] = {0, -1};
    HcclComm cs[2] = {NULL, NULL};
    check(-1, HcclCommInitAll(2, dup, cs) == HCCL_E_PARA, "duplicate devices accepted");
    check(-1, HcclCommInitAll(2, neg, cs) == HCCL_E_PARA, "a negative device accepted");
    check(-1, HcclCommInitAll(0, dup, cs) == HCCL_E_PARA, "ndev 0 accepted");
    check(-1, HcclCommInitAll(2, NULL, cs) == HCCL_E_PTR, "devices NULL accepted");
    check(-1, HcclCommInitAll(2, neg, NULL) == HCCL_E_PTR, "comms NULL accepted");
    check(-1, cs[0] == NULL && cs[1] == NULL, "a refused call wrote comms");
    for (int i = 1; i < argc; i++) {
        int n = atoi(argv[i]);
        if (n < 1 || n > 64) {
            fprintf(stderr, "test_initall: ndev %s: expected 1-64\n", argv[i]);
            return 2;
        }
        run((uint32_t)n, i % 2 == 1);
    }
    printf("test_initall: %ld checks, %ld failures\n", g_checks, g_fails);
    return g_fails ? 1 : 0;
}
