/*
 * examples/registered.c - gradients in registered buffers: allocate them
 * with HcclMemAlloc, register them once with the communicator
 * (HcclCommRegister, collective), and every AllReduce on them lets the
 * ranks of one host read and write each other's buffers directly
 * (docs/DESIGN.md, "Registered buffers"). The same loop on malloc'd
 * buffers runs first, for comparison; both results are checked.
 *
 *   mpicc registered.c $(pkg-config --cflags --libs hcomm) -o registered
 *   mpirun -np 2 ./registered [MiB per buffer, default 64]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* iters in-place AllReduces of x (n floats); returns the seconds of the
 * slowest rank and counts wrong elements of the last result in *bad */
static double run(HcclComm comm, float *x, uint64_t n, int iters, int rank, int size, long *bad)
{
    double t = 0;
    for (int it = -1; it < iters; it++) { /* it -1: warm-up, untimed */
        for (uint64_t i = 0; i < n; i++)
            x[i] = (float)(rank + 1 + (int)(i % 7));
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        CHECK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL));
        if (it >= 0)
            t += MPI_Wtime() - t0;
    }
    *bad = 0;
    for (uint64_t i = 0; i < n; i++)
        *bad += x[i] != (float)size * (size + 1) / 2 + (float)size * (int)(i % 7);
    double tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax / iters;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        if (rank == 0)
            printf("usage: mpirun -np N registered [MiB per buffer > 0, default 64]\n"
                   "AllReduce on buffers from HcclMemAlloc registered with the communicator\n"
                   "(HcclCommRegister), checked, beside the same call on malloc'd buffers.\n");
        MPI_Finalize();
        return 0;
    }
    const long mib = argc > 1 ? atol(argv[1]) : 64;
    if (mib <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: registered [MiB per buffer > 0]\n");
        MPI_Finalize();
        return 2;
    }
    const uint64_t n = (uint64_t)mib << 18; /* floats */
    const int iters = 5;

    HcclComm comm;
    CHECK(HcclCommInitMpi(MPI_COMM_WORLD, &comm));

    long bad_plain, bad_reg;
    float *plain = malloc(n * sizeof(float));
    if (plain == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double t_plain = run(comm, plain, n, iters, rank, size, &bad_plain);
    free(plain);

    float *grad;
    void *handle;
    CHECK(HcclMemAlloc((void **)&grad, n * sizeof(float)));
    CHECK(HcclCommRegister(comm, grad, n * sizeof(float), &handle, 0));
    double t_reg = run(comm, grad, n, iters, rank, size, &bad_reg);
    CHECK(HcclCommDeregister(comm, handle));
    CHECK(HcclMemFree(grad));

    long bad[2] = {bad_plain, bad_reg}, all[2];
    MPI_Allreduce(bad, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("AllReduce of %ld MiB on %d ranks, mean of %d:\n", mib, size, iters);
        printf("  malloc'd buffer:   %8.2f ms  %s\n", t_plain * 1e3,
               all[0] ? "WRONG" : "correct");
        printf("  registered buffer: %8.2f ms  %s\n", t_reg * 1e3,
               all[1] ? "WRONG" : "correct");
    }
    CHECK(HcclCommDestroy(comm));
    MPI_Finalize();
    return all[0] || all[1];
}
