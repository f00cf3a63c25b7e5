/*
 * examples/allreduce.c - the smallest complete hcomm program: an MPI job
 * that builds an hcomm communicator over MPI_COMM_WORLD and sums a vector
 * across all ranks.
 *
 *   mpicc allreduce.c $(pkg-config --cflags --libs hcomm) -o allreduce
 *   mpirun -np 4 ./allreduce
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    HcclComm comm;
    CHECK(HcclCommInitMpi(MPI_COMM_WORLD, &comm));

    const uint64_t n = 1 << 20;
    float *x = malloc(n * sizeof(float));
    for (uint64_t i = 0; i < n; i++)
        x[i] = (float)(rank + 1);
    /* in place: every element becomes 1 + 2 + ... + size */
    CHECK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL));

    float want = (float)size * (size + 1) / 2;
    int bad = 0;
    for (uint64_t i = 0; i < n; i++)
        bad += x[i] != want;
    if (rank == 0)
        printf("allreduce of %llu floats on %d ranks: %s (x[0] = %g, expected %g)\n",
               (unsigned long long)n, size, bad ? "WRONG" : "correct", x[0], want);

    free(x);
    CHECK(HcclCommDestroy(comm));
    MPI_Finalize();
    return bad != 0;
}
