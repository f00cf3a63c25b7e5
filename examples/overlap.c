/*
 * examples/overlap.c - overlapping gradient AllReduce with computation, as
 * a data-parallel training step does.
 *
 * A model of L layers, each with four gradient tensors (a weight of m x m,
 * and a bias and two layer-norm vectors of m elements). The backward pass
 * visits the layers from last to first; the weight gradient of a layer is
 * a real matrix multiply (m x k times k x m, single precision), and each
 * layer's gradients are summed across the ranks as soon as they exist.
 * Five ways to do that, each timed over the same steps:
 *
 *   mpi       MPI_Allreduce per tensor, blocking (reference)
 *   mpi-nb    MPI_Iallreduce per tensor, MPI_Waitall at the end of the step
 *   blocking  HcclAllReduce per tensor with stream = NULL
 *   stream    HcclAllReduce per tensor on an HcclStream: the call returns at
 *             once, the next layer computes while the progress thread
 *             reduces; HcclStreamSynchronize at the end of the step
 *   fusion    one HcclAllReduceMulti per layer on the stream (the four
 *             tensors in one network operation when they are small)
 *   compute   no communication at all: the lower bound of a step
 *
 * Inputs are small integers, so every sum is exact and all five must give
 * the same bits: checked. The variants alternate step by step (so the load
 * of a shared machine hits them alike). Printed: the median step time (the
 * slowest rank of each step), the median CPU time the process used in a
 * step (the busier rank: all threads, so it shows what the communication
 * costs the computation), and the ratio to the blocking HcclAllReduce loop.
 *
 *   mpirun -np 2 ./overlap [-l layers] [-m dim] [-k inner] [-s steps]
 *                          [-v mpi,mpi-nb,blocking,stream,fusion,compute] [-t trace-prefix]
 *
 * -t PREFIX writes PREFIX.<rank>.json with this program's compute phases in
 * the format of hcomm's timeline; with HCCL_TRACE_FILE=PREFIX-hcomm.%r.json
 * tools/trace-merge.sh merges both, and the communication shows up under
 * the computation (docs/STREAMS.md).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#define CHECK(call) \
    do { \
        HcclResult r_ = (call); \
        if (r_ != HCCL_SUCCESS) { \
            fprintf(stderr, "%s failed: %s\n", #call, HcclGetErrorString(r_)); \
            MPI_Abort(MPI_COMM_WORLD, 1); \
        } \
    } while (0)

enum { V_MPI, V_MPINB, V_BLOCK, V_STREAM, V_FUSION, V_NONE, NV };
static const char *vname[NV] = {"mpi", "mpi-nb", "blocking", "stream", "fusion", "compute"};
#define NT 4 /* tensors per layer */

static int rank, nranks;
static int L = 16, M = 512, K = 48, STEPS = 10;
static float *A, **Bw;    /* activations (m x k), per-layer weights (k x m) */
static float **grad;      /* per layer: m*m + 3*m contiguous */
static FILE *tr;          /* -t: compute phases */

static double cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
           ru.ru_stime.tv_usec;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* C (m x m) = A (m x k) * B (k x m): the i-k-j loop the compiler vectorizes */
static void matmul(float *restrict C, const float *restrict a, const float *restrict b)
{
    for (int i = 0; i < M; i++) {
        float *restrict c = C + (size_t)i * M;
        for (int j = 0; j < M; j++)
            c[j] = 0;
        for (int p = 0; p < K; p++) {
            const float x = a[(size_t)i * K + p];
            const float *restrict bp = b + (size_t)p * M;
            for (int j = 0; j < M; j++)
                c[j] += x * bp[j];
        }
    }
}

/* The backward computation of layer l at step s: all values small integers. */
static void compute(int l, int s, int variant)
{
    double t0 = tr ? now_us() : 0;
    float *g = grad[l];
    matmul(g, A, Bw[l]);
    for (int i = 0; i < 3 * M; i++)
        g[(size_t)M * M + i] = (float)((i * 7 + l * 3 + s + rank) % 9 - 4);
    if (tr)
        fprintf(tr, ",\n{\"ph\":\"X\",\"cat\":\"compute\",\"name\":\"backward layer %d\","
                "\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"variant\":\"%s\","
                "\"step\":%d}}", l, rank, t0, now_us() - t0, vname[variant], s);
}

static void tensors(int l, void **p, uint64_t *n)
{
    p[0] = grad[l];
    n[0] = (uint64_t)M * M;
    for (int t = 1; t < NT; t++) {
        p[t] = grad[l] + (size_t)M * M + (size_t)(t - 1) * M;
        n[t] = (uint64_t)M;
    }
}

static double step_cpu; /* CPU time of this process in the last step, us */

static double step(int variant, int s, HcclComm comm, HcclStream st)
{
    MPI_Request req[64 * NT];
    int nreq = 0;
    /* the same inputs for every variant */
    for (size_t i = 0; i < (size_t)M * K; i++)
        A[i] = (float)((int)((i * 5 + (size_t)s * 11 + (size_t)rank * 3) % 7) - 3);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us(), c0 = cpu_us();
    for (int l = L - 1; l >= 0; l--) {
        compute(l, s, variant);
        void *p[NT];
        uint64_t n[NT];
        tensors(l, p, n);
        switch (variant) {
        case V_MPI:
            for (int t = 0; t < NT; t++)
                MPI_Allreduce(MPI_IN_PLACE, p[t], (int)n[t], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            break;
        case V_MPINB:
            for (int t = 0; t < NT; t++)
                MPI_Iallreduce(MPI_IN_PLACE, p[t], (int)n[t], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                               &req[nreq++]);
            break;
        case V_BLOCK:
        case V_STREAM:
            for (int t = 0; t < NT; t++)
                CHECK(HcclAllReduce(p[t], p[t], n[t], HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm,
                                    variant == V_STREAM ? st : NULL));
            break;
        case V_FUSION:
            CHECK(HcclAllReduceMulti((const void **)p, p, n, NT, HCCL_DATA_TYPE_FP32,
                                     HCCL_REDUCE_SUM, comm, st));
            break;
        }
    }
    if (variant == V_MPINB)
        MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    if (variant == V_STREAM || variant == V_FUSION)
        CHECK(HcclStreamSynchronize(st));
    double dt = now_us() - t0, worst, cpu = cpu_us() - c0;
    MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&cpu, &step_cpu, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int use[NV] = {1, 1, 1, 1, 1, 1};
    const char *tprefix = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && !strcmp(a, "-l"))
            L = atoi(v), i++;
        else if (v && !strcmp(a, "-m"))
            M = atoi(v), i++;
        else if (v && !strcmp(a, "-k"))
            K = atoi(v), i++;
        else if (v && !strcmp(a, "-s"))
            STEPS = atoi(v), i++;
        else if (v && !strcmp(a, "-t"))
            tprefix = v, i++;
        else if (v && !strcmp(a, "-v")) {
            char buf[256]; /* whole words: "mpi" is a part of "mpi-nb" */
            snprintf(buf, sizeof(buf), ",%s,", v);
            for (int k = 0; k < NV; k++) {
                char w[32];
                snprintf(w, sizeof(w), ",%s,", vname[k]);
                use[k] = strstr(buf, w) != NULL;
            }
            i++;
        } else {
            int help = !strcmp(a, "-h") || !strcmp(a, "--help");
            if (rank == 0)
                fprintf(help ? stdout : stderr, "usage: overlap [-l layers] [-m dim] [-k inner] [-s steps] "
                        "[-v mpi,mpi-nb,blocking,stream,fusion,compute] [-t trace-prefix]\n");
            MPI_Finalize();
            return help ? 0 : 2;
        }
    }
    if (L < 1 || L > 64 || M < 1 || K < 1 || STEPS < 1) {
        if (rank == 0)
            fprintf(stderr, "overlap: need 1 <= layers <= 64 and positive sizes\n");
        MPI_Finalize();
        return 2;
    }
    if (tprefix) {
        char path[512];
        snprintf(path, sizeof(path), "%s.%d.json", tprefix, rank);
        tr = fopen(path, "w");
        if (tr)
            fprintf(tr, "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":"
                    "\"thread_name\",\"args\":{\"name\":\"compute (main thread)\"}}", rank);
    }
    A = malloc((size_t)M * K * sizeof(float));
    Bw = malloc(L * sizeof(*Bw));
    grad = malloc(L * sizeof(*grad));
    float **result = malloc(NV * sizeof(*result));
    const size_t per = (size_t)M * M + 3 * (size_t)M;
    for (int l = 0; l < L; l++) {
        Bw[l] = malloc((size_t)K * M * sizeof(float));
        for (size_t i = 0; i < (size_t)K * M; i++)
            Bw[l][i] = (float)((int)((i * 3 + (size_t)l * 5) % 5) - 2);
        grad[l] = malloc(per * sizeof(float));
        memset(grad[l], 0, per * sizeof(float)); /* touch the pages before timing */
    }
    HcclComm comm;
    CHECK(HcclCommInitMpi(MPI_COMM_WORLD, &comm));
    HcclStream st;
    CHECK(HcclStreamCreate(&st));
    double med[NV] = {0};
    if (rank == 0)
        printf("overlap: %d ranks, %d layers x (%dx%d weight + 3 x %d), matmul %dx%dx%d per "
               "layer (%.1f MFLOP), %d steps\n", nranks, L, M, M, M, M, K, M,
               2.0 * M * M * K / 1e6, STEPS);
    /* variants alternate step by step, so that the load of the machine
     * affects them alike; the last step's gradients are kept for the check */
    double *t = malloc((size_t)NV * STEPS * sizeof(double));
    double *cpu = malloc((size_t)NV * STEPS * sizeof(double)), cmed[NV] = {0};
    for (int s = -1; s < STEPS; s++) /* s = -1: warm-up */
        for (int v = 0; v < NV; v++) {
            if (!use[v])
                continue;
            double dt = step(v, s, comm, st);
            if (s >= 0) {
                t[v * STEPS + s] = dt;
                cpu[v * STEPS + s] = step_cpu;
            }
            if (s == STEPS - 1) {
                result[v] = malloc((size_t)L * per * sizeof(float));
                for (int l = 0; l < L; l++)
                    memcpy(result[v] + (size_t)l * per, grad[l], per * sizeof(float));
            }
        }
    for (int v = 0; v < NV; v++)
        if (use[v]) {
            qsort(t + v * STEPS, STEPS, sizeof(double), cmp_d);
            med[v] = t[v * STEPS + STEPS / 2];
            qsort(cpu + v * STEPS, STEPS, sizeof(double), cmp_d);
            cmed[v] = cpu[v * STEPS + STEPS / 2];
        }
    free(t);
    free(cpu);
    int ref = use[V_BLOCK] ? V_BLOCK : -1;
    for (int v = 0; v < V_NONE && ref < 0; v++)
        if (use[v])
            ref = v;
    int bad = 0;
    for (int v = 0; v < V_NONE; v++)
        if (use[v] && v != ref &&
            memcmp(result[v], result[ref], (size_t)L * per * sizeof(float)) != 0)
            bad |= 1 << v;
    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%-10s %14s %14s %12s\n", "variant", "step (ms)", "CPU/step (ms)",
               "vs blocking");
        for (int v = 0; v < NV; v++)
            if (use[v]) {
                printf("%-10s %14.2f %14.2f", vname[v], med[v] / 1000, cmed[v] / 1000);
                if (use[V_BLOCK])
                    printf(" %11.2fx", med[V_BLOCK] / med[v]);
                printf("%s\n", anybad & (1 << v) ? "  RESULTS DIFFER" : "");
            }
        if (use[V_BLOCK] && use[V_STREAM])
            printf("stream overlap: step time %.1f%% lower than blocking per-layer AllReduce\n",
                   100 * (1 - med[V_STREAM] / med[V_BLOCK]));
        if (ref >= 0)
            printf("results: %s\n", anybad ? "DIFFER between variants"
                                             : "identical in all variants");
    }
    if (tr) {
        fputs("\n]}\n", tr);
        fclose(tr);
    }
    CHECK(HcclStreamDestroy(st));
    CHECK(HcclCommDestroy(comm));
    for (int l = 0; l < L; l++) {
        free(Bw[l]);
        free(grad[l]);
    }
    for (int v = 0; v < NV; v++)
        if (use[v])
            free(result[v]);
    free(result);
    free(Bw);
    free(grad);
    free(A);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
