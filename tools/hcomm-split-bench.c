/*
 * tools/hcomm-split-bench.c - how long it takes to make a sub-communicator,
 * three ways, in the same run, alternating (docs/PERFORMANCE.md, "Method"):
 *
 *   hcomm   HcclCommSplit(world)                 (one small hcomm allgather)
 *   mpi     MPI_Comm_split(MPI_COMM_WORLD)
 *   init    MPI_Comm_split + HcclCommInitMpi     (the same communicator "from
 *           scratch": an MPI split, then hcomm's bootstrap over it, while
 *           another communicator keeps the process context alive)
 *   cold    the same with no hcomm communicator alive, so that the UCX
 *           context and worker are created too, as for a process's first
 *           communicator (measured after the others, -k iterations)
 *
 * Usage: mpirun -np N hcomm-split-bench [-n ITERS] [-w WARMUP] [-c COLORS] [-k COLD]
 *                                     [-b BATCH]
 * Each iteration starts with an MPI_Barrier (not timed), then makes BATCH
 * communicators back to back (default 1) and takes the time per creation:
 * with more ranks than cores the ranks leave the barrier up to a scheduler
 * time slice apart, a skew that a single creation's time includes and a
 * batch spreads (as when a job sets up its data, tensor and pipeline
 * groups one after the other). A time is the slowest rank's; the report is the median (and the 10th / 90th
 * percentiles) over iterations, and the ratios of the medians. Destroying
 * and freeing are not timed. Also prints the endpoints and buffers that
 * the HcclCommSplit iterations created (HcclGetDebugCounters): expected 0.
 */
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"

/* The options; main sets their defaults */
typedef struct {
    int iters, warm, colors, cold, batch; /* -n, -w, -c, -k, -b */
} opts_t;

/* Parse argv (every rank does, identically). 0: run; 1: exit 0; 2: error. */
static int parse_args(opts_t *o, int argc, char **argv, int rank)
{
    int opt;
    /* --help is -h */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0)
            argv[i][2] = '\0', argv[i][1] = 'h';
    while ((opt = getopt(argc, argv, "n:w:c:k:b:h")) != -1) {
        switch (opt) {
        case 'n':
            o->iters = atoi(optarg);
            break;
        case 'w':
            o->warm = atoi(optarg);
            break;
        case 'c':
            o->colors = atoi(optarg);
            break;
        case 'k':
            o->cold = atoi(optarg);
            break;
        case 'b':
            o->batch = atoi(optarg);
            break;
        default:
            if (rank == 0)
                fprintf(opt == 'h' ? stdout : stderr,
                        "usage: mpirun -np N hcomm-split-bench [-n ITERS] "
                        "[-w WARMUP] [-c COLORS] [-k COLD] [-b BATCH]\n"
                        "Times making a sub-communicator of MPI_COMM_WORLD three ways,\n"
                        "alternating: HcclCommSplit, MPI_Comm_split, and MPI_Comm_split +\n"
                        "HcclCommInitMpi (also with no hcomm communicator alive: cold).\n"
                        "Prints the median (10th, 90th percentile) time per creation of\n"
                        "the slowest rank, and the ratios of the medians.\n"
                        "  -n ITERS   timed iterations [200]     -w WARMUP  untimed ones [20]\n"
                        "  -c COLORS  colors of the split [2]    -k COLD    cold iterations [20]\n"
                        "  -b BATCH   communicators made back to back per iteration, 1..64 [1]\n");
            return opt == 'h' ? 1 : 2;
        }
    }
    if (o->iters < 1 || o->warm < 0 || o->colors < 1 || o->cold < 1 || o->batch < 1 ||
        o->batch > 64) {
        if (rank == 0)
            fprintf(stderr, "hcomm-split-bench: bad -n, -w, -c, -k or -b (1..64)\n");
        return 2;
    }
    return 0;
}

/* The three ways while world keeps the process context alive: -w untimed
 * and -n timed iterations, the order alternating; t[way][it]: seconds per
 * creation on this rank. Returns the failures, an HcclCommSplit iteration
 * that created endpoints or buffers counted as one. */
static int time_alive(const opts_t *o, HcclComm world, int color, int key, double *t[3])
{
    const int batch = o->batch;
    uint64_t ep0 = 0, b0 = 0, ep1 = 0, b1 = 0;
    int fails = 0;
    for (int it = -o->warm; it < o->iters; it++) {
        for (int k = 0; k < 3; k++) {
            int way = (k + (it & 1)) % 3; /* alternate the order */
            HcclComm hc[64] = {NULL};
            MPI_Comm mc[64];
            for (int b = 0; b < batch; b++)
                mc[b] = MPI_COMM_NULL;
            MPI_Barrier(MPI_COMM_WORLD);
            if (way == 0)
                HcclGetDebugCounters(&ep0, &b0, NULL);
            double t0 = MPI_Wtime();
            for (int b = 0; b < batch; b++) {
                if (way == 0) {
                    fails += HcclCommSplit(world, color, key, &hc[b]) != HCCL_SUCCESS;
                } else {
                    MPI_Comm_split(MPI_COMM_WORLD, color, key, &mc[b]);
                    if (way == 2)
                        fails += HcclCommInitMpi(mc[b], &hc[b]) != HCCL_SUCCESS;
                }
            }
            double dt = (MPI_Wtime() - t0) / batch;
            if (way == 0) {
                HcclGetDebugCounters(&ep1, &b1, NULL);
                fails += ep1 != ep0 || b1 != b0;
            }
            if (it >= 0)
                t[way][it] = dt;
            for (int b = 0; b < batch; b++) {
                if (hc[b])
                    HcclCommDestroy(hc[b]);
                if (mc[b] != MPI_COMM_NULL)
                    MPI_Comm_free(&mc[b]);
            }
        }
    }
    return fails;
}

/* "cold": MPI_Comm_split + HcclCommInitMpi with no hcomm communicator
 * alive, -k iterations; tc[it]: seconds on this rank. Returns the
 * failures. */
static int time_cold(const opts_t *o, int color, int key, double *tc)
{
    int fails = 0;
    for (int it = 0; it < o->cold; it++) {
        HcclComm hc = NULL;
        MPI_Comm mc = MPI_COMM_NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Comm_split(MPI_COMM_WORLD, color, key, &mc);
        fails += HcclCommInitMpi(mc, &hc) != HCCL_SUCCESS;
        tc[it] = MPI_Wtime() - t0;
        if (hc)
            HcclCommDestroy(hc);
        MPI_Comm_free(&mc);
    }
    return fails;
}

/* The slowest rank's times (t: time_alive's, tc: time_cold's) and the
 * failures go to rank 0, which prints the report. Returns the failures of
 * all ranks on rank 0, 0 on the others. */
static int report(const opts_t *o, int rank, int n, double *t[3], double *tc, int fails)
{
    const int iters = o->iters, cold = o->cold;
    double *mx = calloc(iters > cold ? iters : cold, sizeof(double));
    double med[4], p10[4], p90[4];
    for (int k = 0; k < 4; k++) {
        int cnt = k < 3 ? iters : cold;
        MPI_Reduce(k < 3 ? t[k] : tc, mx, cnt, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            med[k] = hc_pct(mx, cnt, 0.5) * 1e6;
            p10[k] = hc_pct(mx, cnt, 0.1) * 1e6;
            p90[k] = hc_pct(mx, cnt, 0.9) * 1e6;
        }
    }
    int tf = 0;
    MPI_Reduce(&fails, &tf, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        static const char *name[4] = {"HcclCommSplit", "MPI_Comm_split",
                                      "MPI_Comm_split+HcclCommInitMpi",
                                      "same, cold (no context alive)"};
        printf("# hcomm-split-bench: %d ranks, %d colors, %d iterations (+%d warm-up); "
               "slowest rank per iteration, us per creation (batches of %d)\n", n, o->colors,
               iters, o->warm, o->batch);
        printf("# %-32s %10s %10s %10s\n", "way", "median", "p10", "p90");
        for (int k = 0; k < 4; k++)
            printf("  %-32s %10.2f %10.2f %10.2f\n", name[k], med[k], p10[k], p90[k]);
        printf("# MPI_Comm_split / HcclCommSplit = %.1fx; from scratch / HcclCommSplit = %.1fx "
               "(context alive), %.0fx (cold, %d iterations)\n", med[1] / med[0],
               med[2] / med[0], med[3] / med[0], cold);
        printf("# endpoints / buffers created by the HcclCommSplit iterations: %s; "
               "failures: %d\n", tf ? "SOME (or a failure)" : "none", tf);
    }
    free(mx);
    return tf;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    opts_t o = {.iters = 200, .warm = 20, .colors = 2, .cold = 20, .batch = 1};
    int prc = parse_args(&o, argc, argv, rank);
    if (prc) {
        MPI_Finalize();
        return prc == 1 ? 0 : 2;
    }
    HcclComm world;
    if (HcclCommInitMpi(MPI_COMM_WORLD, &world) != HCCL_SUCCESS) {
        fprintf(stderr, "hcomm-split-bench: HcclCommInitMpi failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* connect every pair once (AlltoAll), as any real job would have */
    int32_t *s = calloc(n, sizeof *s), *r = calloc(n, sizeof *r);
    HcclAlltoAll(s, 1, HCCL_DATA_TYPE_INT32, r, 1, HCCL_DATA_TYPE_INT32, world, NULL);
    const int color = rank % o.colors, key = rank;
    double *t[3];
    for (int k = 0; k < 3; k++)
        t[k] = calloc(o.iters, sizeof(double));
    int fails = time_alive(&o, world, color, key, t);
    HcclCommDestroy(world); /* the last communicator: the context goes */
    double *tc = calloc(o.cold, sizeof(double));
    fails += time_cold(&o, color, key, tc);
    const int tf = report(&o, rank, n, t, tc, fails);
    for (int k = 0; k < 3; k++)
        free(t[k]);
    free(tc);
    free(s);
    free(r);
    MPI_Finalize();
    return tf ? 1 : 0;
}
