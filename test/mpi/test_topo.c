/*
 * test/mpi/test_topo.c - topology features under mpirun, public API only
 * (test/mpi/topo.sh runs it under simulated topologies and checks logs).
 *
 * Usage: test_topo MODE [ARGS]
 *   run COUNT           AllReduce, ReduceScatter, AllGather, Broadcast (root
 *                       n-1) of COUNT floats on MPI_COMM_WORLD and on a split
 *                       (odd / even ranks), checked exactly; prints on rank 0
 *                       the bytes the world's AllReduce sent across nodes
 *                       (HcclCommGetInterNodeBytes, summed over ranks) as
 *                       "xnode allreduce <bytes>"
 *   bytes COUNT WANT    AllReduce of COUNT floats; the bytes sent across
 *                       nodes, summed over ranks, must be WANT
 *   fail CODE           HcclCommInitMpi must fail with CODE on every rank
 *                       (a bad topology override: none may hang)
 *   mismatch [VAR VALUE] rank 1 sets VAR=VALUE (default HCCL_GROUP_0=0)
 *                       before init, the others do not: every rank must fail
 *                       with HCCL_E_PARA
 *   cluster FILE        HcclCommInitClusterInfo(FILE, MPI rank) (mpirun is
 *                       only the launcher), then an AllReduce, checked
 *   compare COUNT ITERS time the AllReduce with the algorithm set by
 *                       HCCL_ALLREDUCE_ALGO on the world communicator, and
 *                       MPI_Allreduce, alternating; rank 0 prints the median
 *                       times and the bytes across nodes per operation
 *   wire COUNT ITERS    ITERS AllReduces of COUNT floats, checked; the bytes
 *                       the hosts' network interfaces sent meanwhile
 *                       (/sys/class/net/<if>/statistics/tx_bytes, lo
 *                       excepted, read by one rank per host) against the
 *                       bytes the algorithm sent across nodes
 *                       (HcclCommGetInterNodeBytes): the links must carry at
 *                       least those (none may go through shared memory or
 *                       CMA) and at most 1.5 times as many plus 64 KB (the
 *                       headers, acknowledgements and MPI's barriers);
 *                       for hcomm-cluster (test/mpi/cluster.sh)
 *   rootinfo COUNT      HcclCommInitRootInfo (rank 0's HcclGetRootInfo sent
 *                       by MPI_Bcast), then the collectives of `run` on it
 * Exit status 0 on success.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_n, g_fail;

#define CHECK(cond, ...) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "[rank %d] FAIL %s:%d: ", g_rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__); \
            fputc('\n', stderr); \
            g_fail++; \
        } \
    } while (0)

/* small integers: every sum is exact in float */
static float val(int r, uint64_t i)
{
    return (float)((r * 7 + (int)(i % 13)) % 17);
}

static void run_colls(HcclComm comm, MPI_Comm mc, uint64_t count, const char *name)
{
    int rank, n;
    MPI_Comm_rank(mc, &rank);
    MPI_Comm_size(mc, &n);
    float *a = malloc((count * n + 1) * sizeof(float)), *b = malloc((count * n + 1) * sizeof(float));
    /* AllReduce */
    for (uint64_t i = 0; i < count; i++)
        a[i] = val(rank, i);
    CHECK(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL) ==
              HCCL_SUCCESS, "%s allreduce", name);
    for (uint64_t i = 0; i < count; i++) {
        float want = 0;
        for (int q = 0; q < n; q++)
            want += val(q, i);
        if (b[i] != want) {
            CHECK(0, "%s allreduce [%llu] = %g, want %g", name, (unsigned long long)i, b[i], want);
            break;
        }
    }
    /* ReduceScatter */
    for (uint64_t i = 0; i < count * n; i++)
        a[i] = val(rank, i);
    CHECK(HcclReduceScatter(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL) ==
              HCCL_SUCCESS, "%s reducescatter", name);
    for (uint64_t i = 0; i < count; i++) {
        float want = 0;
        for (int q = 0; q < n; q++)
            want += val(q, (uint64_t)rank * count + i);
        if (b[i] != want) {
            CHECK(0, "%s reducescatter [%llu] = %g, want %g", name, (unsigned long long)i, b[i],
                  want);
            break;
        }
    }
    /* AllGather */
    for (uint64_t i = 0; i < count; i++)
        a[i] = val(rank, i);
    CHECK(HcclAllGather(a, b, count, HCCL_DATA_TYPE_FP32, comm, NULL) == HCCL_SUCCESS,
          "%s allgather", name);
    for (int q = 0; q < n; q++)
        for (uint64_t i = 0; i < count; i++)
            if (b[(uint64_t)q * count + i] != val(q, i)) {
                CHECK(0, "%s allgather block %d [%llu]", name, q, (unsigned long long)i);
                q = n;
                break;
            }
    /* Broadcast from the last rank */
    for (uint64_t i = 0; i < count; i++)
        b[i] = rank == n - 1 ? val(n - 1, i) : -1.0f;
    HcclResult brc = HcclBroadcast(b, count, HCCL_DATA_TYPE_FP32, (uint32_t)(n - 1), comm, NULL);
    CHECK(brc == HCCL_SUCCESS, "%s broadcast returned %d", name, (int)brc);
    for (uint64_t i = 0; i < count; i++)
        if (b[i] != val(n - 1, i)) {
            CHECK(0, "%s broadcast [%llu] = %g", name, (unsigned long long)i, b[i]);
            break;
        }
    free(a);
    free(b);
}

static uint64_t xnode_sum(HcclComm comm)
{
    uint64_t last = 0, sum = 0;
    CHECK(HcclCommGetInterNodeBytes(comm, &last, NULL) == HCCL_SUCCESS, "counter");
    MPI_Allreduce(&last, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

static int mode_run(uint64_t count)
{
    HcclComm world, half;
    CHECK(HcclCommInitMpi(MPI_COMM_WORLD, &world) == HCCL_SUCCESS, "init");
    if (g_fail)
        return 1;
    run_colls(world, MPI_COMM_WORLD, count, "world");
    float *a = calloc(count + 1, sizeof(float)), *b = calloc(count + 1, sizeof(float));
    CHECK(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, world, NULL) ==
              HCCL_SUCCESS, "allreduce");
    uint64_t x = xnode_sum(world);
    if (g_rank == 0)
        printf("xnode allreduce %llu\n", (unsigned long long)x);
    free(a);
    free(b);
    MPI_Comm mhalf;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &mhalf);
    CHECK(HcclCommInitMpi(mhalf, &half) == HCCL_SUCCESS, "init half");
    if (!g_fail) {
        run_colls(half, mhalf, count, "half");
        HcclCommDestroy(half);
    }
    MPI_Comm_free(&mhalf);
    HcclCommDestroy(world);
    return 0;
}

static int mode_bytes(uint64_t count, uint64_t want)
{
    HcclComm world;
    CHECK(HcclCommInitMpi(MPI_COMM_WORLD, &world) == HCCL_SUCCESS, "init");
    if (g_fail)
        return 1;
    float *a = calloc(count + 1, sizeof(float)), *b = calloc(count + 1, sizeof(float));
    CHECK(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, world, NULL) ==
              HCCL_SUCCESS, "allreduce");
    uint64_t x = xnode_sum(world);
    if (g_rank == 0)
        printf("xnode allreduce of %llu B: %llu B across nodes (want %llu)\n",
               (unsigned long long)(count * 4), (unsigned long long)x, (unsigned long long)want);
    CHECK(x == want, "bytes across nodes %llu, want %llu", (unsigned long long)x,
          (unsigned long long)want);
    free(a);
    free(b);
    HcclCommDestroy(world);
    return 0;
}

static int mode_fail(int code)
{
    HcclComm world = NULL;
    HcclResult rc = HcclCommInitMpi(MPI_COMM_WORLD, &world);
    CHECK((int)rc == code, "HcclCommInitMpi returned %d, want %d", (int)rc, code);
    CHECK(world == NULL, "output handle set on failure");
    return 0;
}

static int mode_mismatch(const char *var, const char *value)
{
    if (g_rank == 1)
        setenv(var, value, 1);
    HcclComm world = NULL;
    HcclResult rc = HcclCommInitMpi(MPI_COMM_WORLD, &world);
    CHECK(rc == HCCL_E_PARA, "HcclCommInitMpi returned %d, want HCCL_E_PARA", (int)rc);
    return 0;
}

static int mode_cluster(const char *file)
{
    HcclComm comm = NULL;
    HcclResult rc = HcclCommInitClusterInfo(file, (uint32_t)g_rank, &comm);
    CHECK(rc == HCCL_SUCCESS, "HcclCommInitClusterInfo returned %d", (int)rc);
    if (rc != HCCL_SUCCESS)
        return 1;
    uint32_t n = 0, r = 0;
    HcclGetRankSize(comm, &n);
    HcclGetRankId(comm, &r);
    CHECK(n == (uint32_t)g_n && r == (uint32_t)g_rank, "size %u rank %u", n, r);
    /* the data path, without MPI: */
    enum { COUNT = 100003 };
    float *a = malloc(COUNT * sizeof(float)), *b = malloc(COUNT * sizeof(float));
    for (int i = 0; i < COUNT; i++)
        a[i] = val(g_rank, (uint64_t)i);
    CHECK(HcclAllReduce(a, b, COUNT, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL) ==
              HCCL_SUCCESS, "allreduce");
    for (int i = 0; i < COUNT; i++) {
        float want = 0;
        for (int q = 0; q < g_n; q++)
            want += val(q, (uint64_t)i);
        if (b[i] != want) {
            CHECK(0, "cluster allreduce [%d] = %g, want %g", i, b[i], want);
            break;
        }
    }
    free(a);
    free(b);
    CHECK(HcclCommDestroy(comm) == HCCL_SUCCESS, "destroy");
    return 0;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static int mode_compare(uint64_t count, int iters)
{
    HcclComm world;
    CHECK(HcclCommInitMpi(MPI_COMM_WORLD, &world) == HCCL_SUCCESS, "init");
    if (g_fail)
        return 1;
    float *a = malloc(count * sizeof(float)), *b = malloc(count * sizeof(float));
    for (uint64_t i = 0; i < count; i++)
        a[i] = val(g_rank, i);
    double *th = malloc(iters * sizeof(double)), *tm = malloc(iters * sizeof(double));
    for (int it = -2; it < iters; it++) { /* two warm-ups */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, world, NULL);
        double t1 = MPI_Wtime() - t0, mx;
        MPI_Allreduce(&t1, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Allreduce(a, b, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t2 = MPI_Wtime() - t0, mx2;
        MPI_Allreduce(&t2, &mx2, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (it >= 0) {
            th[it] = mx;
            tm[it] = mx2;
        }
    }
    uint64_t x = xnode_sum(world);
    qsort(th, iters, sizeof(double), cmp_d);
    qsort(tm, iters, sizeof(double), cmp_d);
    const char *algo = getenv("HCCL_ALLREDUCE_ALGO");
    if (g_rank == 0)
        printf("compare %-22s %10llu B  hcomm %9.1f us  MPI %9.1f us  across nodes %llu B/op\n",
               algo ? algo : "auto", (unsigned long long)(count * 4), th[iters / 2] * 1e6,
               tm[iters / 2] * 1e6, (unsigned long long)x);
    free(th);
    free(tm);
    free(a);
    free(b);
    HcclCommDestroy(world);
    return 0;
}

static int mode_rootinfo(uint64_t count)
{
    HcclRootInfo ri;
    memset(&ri, 0, sizeof(ri));
    int ok = g_rank != 0 || HcclGetRootInfo(&ri) == HCCL_SUCCESS;
    CHECK(ok, "HcclGetRootInfo");
    MPI_Bcast(&ri, (int)sizeof(ri), MPI_BYTE, 0, MPI_COMM_WORLD);
    HcclComm comm = NULL;
    HcclResult rc = HcclCommInitRootInfo((uint32_t)g_n, &ri, (uint32_t)g_rank, &comm);
    CHECK(rc == HCCL_SUCCESS, "HcclCommInitRootInfo returned %d", (int)rc);
    if (rc != HCCL_SUCCESS)
        return 1;
    run_colls(comm, MPI_COMM_WORLD, count, "rootinfo");
    CHECK(HcclCommDestroy(comm) == HCCL_SUCCESS, "destroy");
    return 0;
}

/* bytes sent by this network namespace's interfaces, loopback excepted;
 * -1 when /sys/class/net cannot be read */
static int64_t tx_bytes(void)
{
    DIR *d = opendir("/sys/class/net");
    if (d == NULL)
        return -1;
    int64_t sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "lo") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_bytes", e->d_name);
        FILE *f = fopen(path, "r");
        long long v = 0;
        if (f == NULL || fscanf(f, "%lld", &v) != 1)
            sum = -1;
        if (f)
            fclose(f);
        if (sum >= 0)
            sum += v;
    }
    closedir(d);
    return sum;
}

static int mode_wire(uint64_t count, int iters)
{
    HcclComm world;
    CHECK(HcclCommInitMpi(MPI_COMM_WORLD, &world) == HCCL_SUCCESS, "init");
    if (g_fail)
        return 1;
    MPI_Comm local;
    int lrank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lrank);
    float *a = malloc(count * sizeof(float)), *b = malloc(count * sizeof(float));
    for (uint64_t i = 0; i < count; i++)
        a[i] = val(g_rank, i);
    /* a first operation outside the window: connections are set up */
    CHECK(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, world, NULL) ==
              HCCL_SUCCESS, "allreduce");
    uint64_t x0 = 0, x1 = 0;
    HcclCommGetInterNodeBytes(world, NULL, &x0);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t w0 = lrank == 0 ? tx_bytes() : 0;
    for (int it = 0; it < iters; it++)
        CHECK(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, world, NULL) ==
                  HCCL_SUCCESS, "allreduce %d", it);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t w1 = lrank == 0 ? tx_bytes() : 0;
    HcclCommGetInterNodeBytes(world, NULL, &x1);
    for (uint64_t i = 0; i < count; i++) {
        float want = 0;
        for (int q = 0; q < g_n; q++)
            want += val(q, i);
        if (b[i] != want) {
            CHECK(0, "allreduce [%llu] = %g, want %g", (unsigned long long)i, b[i], want);
            break;
        }
    }
    int64_t mine[3] = {w0 < 0 || w1 < 0, lrank == 0, w1 - w0}, all[3];
    uint64_t xmine = x1 - x0, x = 0;
    MPI_Reduce(mine, all, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&xmine, &x, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        printf("wire: %d AllReduce(s) of %llu B on %lld host(s): %lld B sent on the links, "
               "%llu B sent across hosts by the algorithm (links/algorithm %.3f)\n",
               iters, (unsigned long long)(count * 4), (long long)all[1], (long long)all[2],
               (unsigned long long)x, x ? (double)all[2] / (double)x : 0.0);
        CHECK(all[0] == 0, "the interfaces' counters (/sys/class/net) cannot be read");
        CHECK(all[1] > 1 && x > 0, "not several hosts (%lld, %llu B across)", (long long)all[1],
              (unsigned long long)x);
        CHECK(all[2] >= (int64_t)x, "the links carried fewer bytes than crossed hosts: the "
              "rest went through shared memory or CMA");
        CHECK(all[2] <= (int64_t)(x + x / 2) + 65536, "the links carried more than 1.5 times "
              "the bytes across hosts");
    }
    free(a);
    free(b);
    MPI_Comm_free(&local);
    HcclCommDestroy(world);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "run") == 0 && argc == 3)
        mode_run(strtoull(argv[2], NULL, 10));
    else if (strcmp(mode, "bytes") == 0 && argc == 4)
        mode_bytes(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
    else if (strcmp(mode, "fail") == 0 && argc == 3)
        mode_fail(atoi(argv[2]));
    else if (strcmp(mode, "mismatch") == 0 && argc == 2)
        mode_mismatch("HCCL_GROUP_0", "0");
    else if (strcmp(mode, "mismatch") == 0 && argc == 4)
        mode_mismatch(argv[2], argv[3]);
    else if (strcmp(mode, "cluster") == 0 && argc == 3)
        mode_cluster(argv[2]);
    else if (strcmp(mode, "compare") == 0 && argc == 4)
        mode_compare(strtoull(argv[2], NULL, 10), atoi(argv[3]));
    else if (strcmp(mode, "rootinfo") == 0 && argc == 3)
        mode_rootinfo(strtoull(argv[2], NULL, 10));
    else if (strcmp(mode, "wire") == 0 && argc == 4)
        mode_wire(strtoull(argv[2], NULL, 10), atoi(argv[3]));
    else {
        if (g_rank == 0)
            fprintf(stderr, "usage: test_topo run COUNT | bytes COUNT WANT | fail CODE | mismatch "
                    "[VAR VALUE] | cluster FILE | compare COUNT ITERS | wire COUNT ITERS | rootinfo COUNT\n");
        g_fail++;
    }
    int fails = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_topo %s: %s\n", mode, fails ? "FAILED" : "passed");
    MPI_Finalize();
    return fails ? 1 : 0;
}
