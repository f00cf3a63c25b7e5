/**
 * @file hccl_mpi.h
 * @brief hcomm extensions that take an MPI communicator.
 */
#ifndef HCCL_MPI_H_
#define HCCL_MPI_H_

#include <mpi.h>
#include <hccl/hccl.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Collective over mpiComm: the communicator spans exactly its ranks, with
 *  the same rank numbers. One MPI_Allgather; MPI must be initialised. */
HcclResult HcclCommInitMpi(MPI_Comm mpiComm, HcclComm *comm);
/** As HcclCommInitMpi, with a configuration (see HcclCommConfigInit). */
HcclResult HcclCommInitMpiConfig(MPI_Comm mpiComm, const HcclCommConfig *config,
                                 HcclComm *comm);

#ifdef __cplusplus
}
#endif
#endif /* HCCL_MPI_H_ */
