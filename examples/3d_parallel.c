/*
 * examples/3d_parallel.c - 3D parallelism with split communicators:
 * data x tensor x pipeline groups, each made by HcclCommSplit of the world
 * communicator (no new connection, no new buffer, microseconds each).
 *
 *   mpirun --oversubscribe -np 8 ./3d_parallel [-d DP] [-t TP] [-p PP] [-s STEPS]
 *
 * World rank r sits at tensor index t = r % TP, pipeline stage
 * p = (r / TP) % PP and data-parallel replica d = r / (TP * PP) (Megatron's
 * order: tensor-parallel ranks adjacent). One training-like step:
 *   1. tensor group: AllGather of the activation shards;
 *   2. pipeline group: stage p sends its activations to p + 1 and its
 *      gradients back to p - 1 (Send/Recv in one group, so no ordering can
 *      deadlock);
 *   3. tensor group: ReduceScatter of the gradient back into shards;
 *   4. data group: AllReduce of the weight-gradient shard.
 * Every result is checked against what it must be; the last line says
 * whether all were right (exit status 1 if not).
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define H 8192 /* activation width (elements) */

static long g_bad;

/* Small integers, exact in float: a value owned by (d, p, t) at step s. */
static float val(int d, int p, int t, int s, int i)
{
    return (float)(d * 1000 + p * 100 + t * 10 + s % 7 + i % 13);
}

static void expect(float got, float want, const char *what, int step, int i)
{
    if (got != want && g_bad++ < 5)
        fprintf(stderr, "3d_parallel: step %d: %s [%d] = %g, expected %g\n", step, what, i,
                got, want);
}

static void check_rc(HcclResult r, const char *what)
{
    if (r != HCCL_SUCCESS) {
        fprintf(stderr, "3d_parallel: %s failed: %s\n", what, HcclGetErrorString(r));
        g_bad++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, DP = 2, TP = 2, PP = 2, steps = 5, opt;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0) /* --help is -h */
            argv[i][2] = '\0', argv[i][1] = 'h';
    while ((opt = getopt(argc, argv, "d:t:p:s:h")) != -1) {
        if (opt == 'h' || opt == '?') {
            if (rank == 0)
                fprintf(opt == 'h' ? stdout : stderr,
                        "usage: mpirun -np N 3d_parallel [-d DP] [-t TP] [-p PP] [-s STEPS]\n"
                        "Data x tensor x pipeline groups made by HcclCommSplit (DP x TP x PP =\n"
                        "N, each 2 by default), STEPS [5] training-like steps, every result\n"
                        "checked; exit status 1 if one was wrong.\n");
            MPI_Finalize();
            return opt == 'h' ? 0 : 2;
        } else if (opt == 'd')
            DP = atoi(optarg);
        else if (opt == 't')
            TP = atoi(optarg);
        else if (opt == 'p')
            PP = atoi(optarg);
        else if (opt == 's')
            steps = atoi(optarg);
    }
    if (DP < 1 || TP < 1 || PP < 1 || DP * TP * PP != n || H % TP != 0) {
        if (rank == 0)
            fprintf(stderr, "3d_parallel: needs DP x TP x PP = %d ranks (and TP | %d)\n", n, H);
        MPI_Finalize();
        return 2;
    }
    const int t = rank % TP, p = (rank / TP) % PP, d = rank / (TP * PP);
    HcclComm world, tp, pp, dp;
    check_rc(HcclCommInitMpi(MPI_COMM_WORLD, &world), "HcclCommInitMpi");
    /* Endpoints are made once per pair of processes, on first use, whatever
     * the communicator; a first AlltoAll on the world (as a job would do
     * anyway) makes them all, so the counters below show that the splits
     * add none. */
    float *a2a = calloc(2 * (size_t)n, sizeof(float));
    check_rc(HcclAlltoAll(a2a, 1, HCCL_DATA_TYPE_FP32, a2a + n, 1, HCCL_DATA_TYPE_FP32, world,
                          NULL), "AlltoAll (warm-up)");
    free(a2a);
    uint64_t ep0, b0, ep1, b1;
    HcclGetDebugCounters(&ep0, &b0, NULL);
    MPI_Barrier(MPI_COMM_WORLD); /* time the splits, not the stragglers */
    double t0 = MPI_Wtime();
    check_rc(HcclCommSplit(world, d * PP + p, t, &tp), "HcclCommSplit (tensor)");
    check_rc(HcclCommSplit(world, d * TP + t, p, &pp), "HcclCommSplit (pipeline)");
    check_rc(HcclCommSplit(world, p * TP + t, d, &dp), "HcclCommSplit (data)");
    double split_us = (MPI_Wtime() - t0) * 1e6;
    HcclGetDebugCounters(&ep1, &b1, NULL);
    if (ep1 != ep0 || b1 != b0) {
        fprintf(stderr, "3d_parallel: the splits created %llu endpoints and %llu buffers\n",
                (unsigned long long)(ep1 - ep0), (unsigned long long)(b1 - b0));
        g_bad++;
    }
    if (g_bad) /* no communicator to run on */
        MPI_Abort(MPI_COMM_WORLD, 1);
    uint32_t r;
    HcclGetRankId(tp, &r);
    if ((int)r != t)
        g_bad++;
    HcclGetRankId(pp, &r);
    if ((int)r != p)
        g_bad++;
    HcclGetRankId(dp, &r);
    if ((int)r != d)
        g_bad++;

    const int S = H / TP; /* shard */
    float *shard = malloc(S * sizeof(float)), *act = malloc(H * sizeof(float));
    float *fwd_in = malloc(H * sizeof(float)), *bwd_in = malloc(H * sizeof(float));
    float *gradfull = malloc(H * sizeof(float)), *gshard = malloc(S * sizeof(float));
    float *wgrad = malloc(S * sizeof(float));
    for (int s = 0; s < steps; s++) {
        /* 1. tensor group: gather the activation shards */
        for (int i = 0; i < S; i++)
            shard[i] = val(d, p, t, s, t * S + i);
        check_rc(HcclAllGather(shard, act, S, HCCL_DATA_TYPE_FP32, tp, NULL), "AllGather");
        for (int i = 0; i < H; i++)
            expect(act[i], val(d, p, i / S, s, i), "AllGather (tensor group)", s, i);

        /* 2. pipeline group: activations forward, gradients backward */
        for (int i = 0; i < H; i++)
            gradfull[i] = val(d, p, 9, s, i); /* this stage's "gradient" */
        HcclGroupStart();
        if (p + 1 < PP) {
            HcclSend(act, H, HCCL_DATA_TYPE_FP32, p + 1, pp, NULL);
            HcclRecv(bwd_in, H, HCCL_DATA_TYPE_FP32, p + 1, pp, NULL);
        }
        if (p > 0) {
            HcclRecv(fwd_in, H, HCCL_DATA_TYPE_FP32, p - 1, pp, NULL);
            HcclSend(gradfull, H, HCCL_DATA_TYPE_FP32, p - 1, pp, NULL);
        }
        check_rc(HcclGroupEnd(), "Send/Recv (pipeline group)");
        for (int i = 0; i < H; i++) {
            if (p > 0) /* stage p - 1's gathered activation */
                expect(fwd_in[i], val(d, p - 1, i / S, s, i), "forward Recv", s, i);
            if (p + 1 < PP)
                expect(bwd_in[i], val(d, p + 1, 9, s, i), "backward Recv", s, i);
        }

        /* 3. tensor group: reduce-scatter the gradient into shards */
        for (int i = 0; i < H; i++)
            gradfull[i] = val(d, p, t, s, i);
        check_rc(HcclReduceScatter(gradfull, gshard, S, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM,
                                   tp, NULL), "ReduceScatter");
        for (int i = 0; i < S; i++) {
            float e = 0;
            for (int k = 0; k < TP; k++)
                e += val(d, p, k, s, t * S + i);
            expect(gshard[i], e, "ReduceScatter (tensor group)", s, i);
        }

        /* 4. data group: all-reduce the weight gradients */
        for (int i = 0; i < S; i++)
            wgrad[i] = gshard[i];
        check_rc(HcclAllReduce(wgrad, wgrad, S, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, dp, NULL),
                 "AllReduce");
        for (int i = 0; i < S; i++) {
            float e = 0;
            for (int dd = 0; dd < DP; dd++)
                for (int k = 0; k < TP; k++)
                    e += val(dd, p, k, s, t * S + i);
            expect(wgrad[i], e, "AllReduce (data group)", s, i);
        }
    }
    long bad = 0;
    MPI_Allreduce(&g_bad, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double worst = 0;
    MPI_Reduce(&split_us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("3d_parallel: %d steps on %d ranks (data %d x tensor %d x pipeline %d), 3 splits "
               "in %.0f us, no endpoint or buffer created: %s\n", steps, n, DP, TP, PP, worst,
               bad ? "SOME RESULTS WRONG" : "all results correct");
    HcclCommDestroy(dp);
    HcclCommDestroy(pp);
    HcclCommDestroy(tp);
    HcclCommDestroy(world);
    free(shard);
    free(act);
    free(fwd_in);
    free(bwd_in);
    free(gradfull);
    free(gshard);
    free(wgrad);
    MPI_Finalize();
    return bad ? 1 : 0;
}
