/*
 * test/mpi/mpidrop_broken.c - a deliberately wrong drop-in for
 * test/mpi/mpidrop.sh: its MPI_Allreduce gives MPI's result with one bit
 * flipped on the last rank. test_mpidrop must fail with it preloaded, which
 * shows that the test sees a drop-in's wrong results (and is not fooled by
 * its own use of MPI_Allreduce: it keeps its books with PMPI_Allreduce).
 */
#include <mpi.h>

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    int r = 0, n = 1;
    PMPI_Comm_rank(comm, &r);
    PMPI_Comm_size(comm, &n);
    if (rc == MPI_SUCCESS && count > 0 && r == n - 1)
        ((unsigned char *)recvbuf)[0] ^= 1;
    return rc;
}
