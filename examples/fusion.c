/*
 * examples/fusion.c - gradient fusion on real models' gradient lists.
 *
 * The gradients of one training step of BERT-Large (BertModel: 24 layers,
 * hidden 1024, 16 heads, intermediate 4096, vocabulary 30522, 512
 * positions, 2 token types: 391 tensors, 335,141,888 elements) and of
 * ResNet-50 (torchvision: conv and batch-norm weights, fc: 161 tensors,
 * 25,557,032 elements), generated from the architectures in backward order
 * (last layer first, as a framework produces them). Element counts are
 * divided by the scale factor (-s, rounded up, at least 1) so that the
 * lists fit this machine; -s 1 is the real model.
 *
 * Each list is all-reduced (float32 sum) three ways, in the same process,
 * alternating, each timed as the median of -n repetitions (slowest rank):
 *
 *   HcclAllReduce      one call per tensor, blocking
 *   HcclAllReduceMulti one call for the whole list (fused buckets)
 *   MPI_Allreduce      one call per tensor
 *
 * Printed per model and scale: calls issued, network operations (AllReduce
 * operations: one per tensor for the per-tensor loops; for
 * HcclAllReduceMulti, the library's own count from HcclGetFusionCounters),
 * wall time, and the speed-up of HcclAllReduceMulti. Results of the three
 * are compared bit for bit (inputs are small integers, so sums are exact in
 * any order).
 *
 *   mpirun -np 2 ./fusion [-s 256] [-s 1,4,16,64,256,1024] [-n reps] [-m bert|resnet50]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

typedef struct {
    uint64_t *count;
    size_t n, cap;
} list_t;

static void add(list_t *l, uint64_t c)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 512;
        l->count = realloc(l->count, l->cap * sizeof(uint64_t));
    }
    l->count[l->n++] = c;
}

/* Forward order (as the parameters are declared); reversed afterwards. */
static void bert_large(list_t *l)
{
    const uint64_t H = 1024, I = 4096, V = 30522, P = 512, T = 2;
    add(l, V * H); /* embeddings: word, position, token type, LayerNorm */
    add(l, P * H);
    add(l, T * H);
    add(l, H);
    add(l, H);
    for (int layer = 0; layer < 24; layer++) {
        for (int qkv = 0; qkv < 3; qkv++) { /* query, key, value: weight, bias */
            add(l, H * H);
            add(l, H);
        }
        add(l, H * H); /* attention output dense, LayerNorm */
        add(l, H);
        add(l, H);
        add(l, H);
        add(l, I * H); /* intermediate dense */
        add(l, I);
        add(l, H * I); /* output dense, LayerNorm */
        add(l, H);
        add(l, H);
        add(l, H);
    }
    add(l, H * H); /* pooler */
    add(l, H);
}

static void resnet50(list_t *l)
{
    add(l, 64 * 3 * 7 * 7); /* conv1, bn1 */
    add(l, 64);
    add(l, 64);
    const int blocks[4] = {3, 4, 6, 3}, width[4] = {64, 128, 256, 512};
    uint64_t in = 64;
    for (int s = 0; s < 4; s++) {
        const uint64_t w = (uint64_t)width[s], out = 4 * w;
        for (int b = 0; b < blocks[s]; b++) {
            add(l, w * in); /* 1x1 */
            add(l, w);
            add(l, w);
            add(l, w * w * 9); /* 3x3 */
            add(l, w);
            add(l, w);
            add(l, out * w); /* 1x1 */
            add(l, out);
            add(l, out);
            if (b == 0) { /* downsample */
                add(l, out * in);
                add(l, out);
                add(l, out);
            }
            in = out;
        }
    }
    add(l, 1000 * 2048); /* fc */
    add(l, 1000);
}

static int rank, nranks;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void fill(float *const *in, const uint64_t *cnt, size_t n)
{
    for (size_t t = 0; t < n; t++)
        for (uint64_t i = 0; i < cnt[t]; i++)
            in[t][i] = (float)((int)((i * 7 + t * 13 + (uint64_t)rank * 5) % 9) - 4);
}

static void run(const char *model, const list_t *full, uint64_t scale, int reps, HcclComm comm)
{
    const size_t n = full->n;
    uint64_t *cnt = malloc(n * sizeof(uint64_t)), total = 0;
    for (size_t t = 0; t < n; t++) {
        cnt[t] = (full->count[t] + scale - 1) / scale;
        total += cnt[t];
    }
    /* one allocation per tensor, as a framework has; out-of-place */
    float **in = malloc(n * sizeof(float *)), **out[3];
    for (int m = 0; m < 3; m++)
        out[m] = malloc(n * sizeof(float *));
    for (size_t t = 0; t < n; t++) {
        in[t] = malloc(cnt[t] * sizeof(float));
        for (int m = 0; m < 3; m++) {
            out[m][t] = malloc(cnt[t] * sizeof(float));
            memset(out[m][t], 0, cnt[t] * sizeof(float));
        }
    }
    fill(in, cnt, n);
    double *tm[3];
    for (int m = 0; m < 3; m++)
        tm[m] = malloc(reps * sizeof(double));
    uint64_t ops0 = 0, ops1 = 0, calls0 = 0, calls1 = 0;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        for (int m = 0; m < 3; m++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (m == 1 && r == 0)
                CHECK(HcclGetFusionCounters(&calls0, NULL, &ops0));
            double t0 = now_s();
            switch (m) {
            case 0:
                for (size_t t = 0; t < n; t++)
                    CHECK(HcclAllReduce(in[t], out[0][t], cnt[t], HCCL_DATA_TYPE_FP32,
                                        HCCL_REDUCE_SUM, comm, NULL));
                break;
            case 1:
                CHECK(HcclAllReduceMulti((const void **)in, (void **)out[1], cnt, n,
                                         HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL));
                break;
            default:
                for (size_t t = 0; t < n; t++)
                    MPI_Allreduce(in[t], out[2][t], (int)cnt[t], MPI_FLOAT, MPI_SUM,
                                  MPI_COMM_WORLD);
                break;
            }
            double dt = now_s() - t0, worst;
            if (m == 1 && r == 0)
                CHECK(HcclGetFusionCounters(&calls1, NULL, &ops1));
            MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r >= 0)
                tm[m][r] = worst;
        }
    }
    int bad = 0;
    for (size_t t = 0; t < n; t++)
        if (memcmp(out[0][t], out[1][t], cnt[t] * sizeof(float)) ||
            memcmp(out[0][t], out[2][t], cnt[t] * sizeof(float)))
            bad = 1;
    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    double med[3];
    for (int m = 0; m < 3; m++) {
        qsort(tm[m], reps, sizeof(double), cmp_d);
        med[m] = tm[m][reps / 2];
    }
    if (rank == 0) {
        uint64_t mops = ops1 - ops0;
        printf("%-9s /%-5llu %4zu tensors %11llu elements (%8.2f MB) | calls %4zu / %llu / %4zu"
               " | net ops %4zu / %3llu / %4zu (%.1f%% fewer) | ms %9.3f / %9.3f / %9.3f | "
               "Multi %.2fx vs Hccl loop, %.2fx vs MPI | %s\n",
               model, (unsigned long long)scale, n, (unsigned long long)total,
               total * 4.0 / (1 << 20), n, (unsigned long long)(calls1 - calls0), n, n,
               (unsigned long long)mops, n, 100.0 * (1 - (double)mops / (double)n),
               med[0] * 1e3, med[1] * 1e3, med[2] * 1e3, med[0] / med[1], med[2] / med[1],
               anybad ? "RESULTS DIFFER" : "bit-exact");
        fflush(stdout);
    }
    for (size_t t = 0; t < n; t++) {
        free(in[t]);
        for (int m = 0; m < 3; m++)
            free(out[m][t]);
    }
    free(in);
    for (int m = 0; m < 3; m++) {
        free(out[m]);
        free(tm[m]);
    }
    free(cnt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    uint64_t scales[32];
    int nscales = 0, reps = 5;
    const char *which = "bert,resnet50";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && !strcmp(argv[i], "-s")) {
            for (const char *p = v; *p && nscales < 32;) {
                scales[nscales++] = strtoull(p, (char **)&p, 10);
                if (*p == ',')
                    p++;
                else if (*p)
                    break;
            }
            i++;
        } else if (v && !strcmp(argv[i], "-n")) {
            reps = atoi(v);
            i++;
        } else if (v && !strcmp(argv[i], "-m")) {
            which = v;
            i++;
        } else {
            int help = !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help");
            if (rank == 0)
                fprintf(help ? stdout : stderr, "usage: fusion [-s scale[,scale...]] [-n reps] "
                        "[-m bert|resnet50|bert,resnet50]\n");
            MPI_Finalize();
            return help ? 0 : 2;
        }
    }
    if (nscales == 0)
        scales[nscales++] = 256;
    if (reps < 1)
        reps = 1;
    for (int i = 0; i < nscales; i++)
        if (scales[i] == 0) {
            if (rank == 0)
                fprintf(stderr, "fusion: scale factors are >= 1\n");
            MPI_Finalize();
            return 2;
        }
    HcclComm comm;
    CHECK(HcclCommInitMpi(MPI_COMM_WORLD, &comm));
    list_t bert = {0}, resnet = {0};
    bert_large(&bert);
    resnet50(&resnet);
    list_t *lists[2] = {&bert, &resnet};
    const char *names[2] = {"bert", "resnet50"};
    for (int k = 0; k < 2; k++) { /* backward order: last parameters first */
        list_t *l = lists[k];
        for (size_t i = 0; i < l->n / 2; i++) {
            uint64_t x = l->count[i];
            l->count[i] = l->count[l->n - 1 - i];
            l->count[l->n - 1 - i] = x;
        }
    }
    if (rank == 0)
        printf("fusion: %d ranks, float32 sum, median of %d; columns: HcclAllReduce loop / "
               "HcclAllReduceMulti / MPI_Allreduce loop\n", nranks, reps);
    for (int k = 0; k < 2; k++) {
        if (!strstr(which, names[k]))
            continue;
        for (int i = 0; i < nscales; i++)
            run(names[k], lists[k], scales[i], reps, comm);
    }
    free(bert.count);
    free(resnet.count);
    CHECK(HcclCommDestroy(comm));
    MPI_Finalize();
    return 0;
}
