/*
 * tools/hcomm-mpibench.c - MPI_Allreduce and MPI_Bcast latency of a plain MPI
 * program, to compare MPI with and without libhcomm_mpi.so preloaded
 * (docs/MPI-DROPIN.md "Speed"). Prints one line per collective and
 * size: the mean time of a call, the slowest rank's, in microseconds.
 *
 *   mpirun -np 2 hcomm-mpibench [ITERS]
 *   mpirun -np 2 -x LD_PRELOAD=.../libhcomm_mpi.so hcomm-mpibench [ITERS]
 *
 * With --ab (and the library preloaded), both arms in one launch: the five
 * collectives of OSU's latency tests, each timed call after a barrier as
 * OSU does, in blocks that alternate between the MPI_ name (the library
 * decides: hcomm or MPI) and the PMPI_ name (MPI alone), on the same
 * buffers. A launch's speed mode (docs/MPI-DROPIN.md) is then the same for
 * both arms. Per size: each arm's median call (the slowest rank's) and the
 * ratio library / MPI.
 *
 * The timing itself uses PMPI_ calls only, so the drop-in times only the
 * measured collectives.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { AR, BC, AG, A2A, RS, NCOLL };
static const char *const ab_name[NCOLL] = {"allreduce", "bcast", "allgather", "alltoall",
                                           "reduce_scatter"};

/* One call of collective c moving `bytes` as OSU counts them (a rank's
 * message: the reductions' float vector, bcast's and allgather's block,
 * alltoall's block per peer), through the MPI_ name (lib) or PMPI_. */
static void ab_call(int c, int lib, int bytes, int np, char *a, char *b, int *counts)
{
    const int f = bytes / 4 > 0 ? bytes / 4 : 1; /* floats */
    switch (c) {
    case AR:
        (lib ? MPI_Allreduce : PMPI_Allreduce)(a, b, f, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case BC:
        (lib ? MPI_Bcast : PMPI_Bcast)(a, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
        break;
    case AG:
        (lib ? MPI_Allgather : PMPI_Allgather)(a, bytes, MPI_CHAR, b, bytes, MPI_CHAR,
                                               MPI_COMM_WORLD);
        break;
    case A2A:
        (lib ? MPI_Alltoall : PMPI_Alltoall)(a, bytes, MPI_CHAR, b, bytes, MPI_CHAR,
                                             MPI_COMM_WORLD);
        break;
    default: /* OSU's osu_reduce_scatter: the vector split as evenly as it goes */
        for (int r = 0; r < np; r++)
            counts[r] = f / np + (r < f % np);
        (lib ? MPI_Reduce_scatter : PMPI_Reduce_scatter)(a, b, counts, MPI_FLOAT, MPI_SUM,
                                                         MPI_COMM_WORLD);
        break;
    }
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* --ab: one line per collective and size: "coll bytes lib_us mpi_us ratio". */
static void ab_run(int rank, int np, int iters)
{
    const int maxb = 4 << 20;
    char *a = calloc((size_t)maxb * np, 1), *b = calloc((size_t)maxb * np, 1);
    int *counts = calloc((size_t)np, sizeof(int));
    double *t[2] = {malloc(sizeof(double) * (size_t)iters), malloc(sizeof(double) * (size_t)iters)};
    for (int c = 0; c < NCOLL; c++)
        for (int bytes = c == AR || c == RS ? 4 : 1; bytes <= maxb; bytes *= 2) {
            const int it = bytes >= 65536 ? iters / 20 + 2 : iters, block = it < 100 ? 1 : 50;
            int n[2] = {0, 0};
            for (int w = 0; w < it / 10 + 2; w++) /* warm-up: both arms */
                ab_call(c, w & 1, bytes, np, a, b, counts);
            for (int i = 0; i < 2 * it; i++) {
                const int lib = (i / block) & 1;
                PMPI_Barrier(MPI_COMM_WORLD);
                const double t0 = PMPI_Wtime();
                ab_call(c, lib, bytes, np, a, b, counts);
                t[lib][n[lib]++] = PMPI_Wtime() - t0;
            }
            double med[2], worst[2];
            for (int k = 0; k < 2; k++) {
                qsort(t[k], (size_t)n[k], sizeof(double), cmp_double);
                med[k] = t[k][n[k] / 2] * 1e6;
            }
            PMPI_Reduce(med, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0)
                printf("%s %d %.3f %.3f %.3f\n", ab_name[c], bytes, worst[1], worst[0],
                       worst[1] / worst[0]);
        }
    free(t[0]);
    free(t[1]);
    free(counts);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np, ab = argc > 1 && strcmp(argv[1], "--ab") == 0;
    int iters = argc > 1 + ab ? atoi(argv[1 + ab]) : ab ? 2000 : 200;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        if (rank == 0)
            printf("usage: mpirun -np N [-x LD_PRELOAD=.../libhcomm_mpi.so] hcomm-mpibench [ITERS]\n"
                   "       mpirun -np N -x LD_PRELOAD=.../libhcomm_mpi.so hcomm-mpibench --ab [ITERS]\n"
                   "MPI_Allreduce and MPI_Bcast of float, 8 B - 4 MiB: one line per collective\n"
                   "and size with the mean time of a call of the slowest rank, in us.\n"
                   "ITERS calls per size [200], a tenth from 1 MiB.\n"
                   "--ab: OSU's five latency collectives (allreduce and reduce_scatter of\n"
                   "float, bcast, allgather, alltoall of bytes), 1 B - 4 MiB, each call timed\n"
                   "after a barrier; blocks of calls alternate between the MPI_ name (the\n"
                   "preloaded library decides) and PMPI_ (MPI alone). One line per collective\n"
                   "and size: bytes, the median call with the library and with MPI alone (us,\n"
                   "the slowest rank's), and their ratio. ITERS calls per arm [2000], a\n"
                   "twentieth from 64 KiB.\n");
        MPI_Finalize();
        return 0;
    }
    if (iters < 1)
        iters = 1;
    if (ab) {
        ab_run(rank, np, iters);
        MPI_Finalize();
        return 0;
    }
    static const int bytes[] = {8, 64, 1024, 16384, 262144, 1048576, 4194304};
    const int nb = (int)(sizeof bytes / sizeof bytes[0]);
    float *a = calloc(bytes[nb - 1] / 4, sizeof(float));
    float *b = calloc(bytes[nb - 1] / 4, sizeof(float));
    for (int coll = 0; coll < 2; coll++)
        for (int i = 0; i < nb; i++) {
            int n = bytes[i] / 4, it = bytes[i] >= 1048576 ? iters / 10 + 1 : iters;
            double t0 = 0;
            for (int pass = 0; pass < 2; pass++) { /* warm-up, then timed */
                int reps = pass ? it : it / 10 + 2;
                PMPI_Barrier(MPI_COMM_WORLD);
                t0 = PMPI_Wtime();
                for (int w = 0; w < reps; w++) {
                    if (coll == 0)
                        MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                    else
                        MPI_Bcast(a, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
                }
            }
            double us = (PMPI_Wtime() - t0) / it * 1e6, worst = 0;
            PMPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0)
                printf("%s %d %.2f\n", coll == 0 ? "allreduce" : "bcast", bytes[i], worst);
        }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
