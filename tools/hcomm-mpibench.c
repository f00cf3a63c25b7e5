/*
 * tools/hcomm-mpibench.c - MPI_Allreduce and MPI_Bcast latency of a plain MPI
 * program, to compare MPI with and without libhcomm_mpi.so preloaded
 * (docs/MPI-DROPIN.md "Speed"). Prints one line per collective and
 * size: the mean time of a call, the slowest rank's, in microseconds.
 *
 *   mpirun -np 2 hcomm-mpibench [ITERS]
 *   mpirun -np 2 -x LD_PRELOAD=.../libhcomm_mpi.so hcomm-mpibench [ITERS]
 *
 * The timing itself uses PMPI_ calls only, so the drop-in times only the
 * measured collectives.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, iters = argc > 1 ? atoi(argv[1]) : 200;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            printf("usage: mpirun -np N [-x LD_PRELOAD=.../libhcomm_mpi.so] hcomm-mpibench [ITERS]\n"
                   "MPI_Allreduce and MPI_Bcast of float, 8 B - 4 MiB: one line per collective\n"
                   "and size with the mean time of a call of the slowest rank, in us.\n"
                   "ITERS calls per size [200], a tenth from 1 MiB.\n");
        MPI_Finalize();
        return 0;
    }
    if (iters < 1)
        iters = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
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
