/**
 * @file hccl.h
 * @brief hcomm: collective communication with the HCCL API, over UCX.
 *
 * Signatures, names and enum values follow Huawei HCCL's public headers so
 * that code written for HCCL ports by recompiling. Calls marked
 * "extension" have no HCCL equivalent. Communicator management is in
 * hccl_comm.h (included here), as in HCCL; the calls that take an MPI_Comm
 * are in hccl_mpi.h. docs/API.md has one table of every call and type.
 *
 * Threads. Calls on different communicators may run at the same time from
 * different threads (each blocking call progresses them all). Calls that
 * communicate on one communicator (collectives, Send/Recv, split and
 * membership calls, HcclCommRegister/Deregister) must not overlap: the
 * caller serialises them, and every rank issues them in the same order. A
 * group (HcclGroupStart/End) belongs to the thread that opened it. The
 * queries HcclGetRankSize, HcclGetRankId, HcclGetCommName,
 * HcclGetCommAsyncError, HcclCommGetStatus, HcclCommAbort, HcclCommSuspend
 * and HcclCommResume may be called from any thread while the communicator
 * lives; HcclCommDestroy overlaps no other call on its communicator.
 *
 * HcclCommDestroy is local: ranks may destroy their communicators in any
 * order. A process that destroys its last communicator says goodbye on its
 * connections: its peers see it leave, not fail; what it sent still
 * arrives; an operation that still waits on it fails with HCCL_E_REMOTE.
 */
#ifndef HCCL_H_
#define HCCL_H_

#include <hccl/hccl_types.h>
#include <hccl/hccl_comm.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Dynamic communicators (extensions unless marked)                    */
/* ------------------------------------------------------------------ */

/** MPI_Comm_split semantics over comm; HCCL_SPLIT_NOCOLOR gives NULL. */
HcclResult HcclCommSplit(HcclComm comm, int color, int key, HcclComm *newComm);
/** Collective over the listed parent ranks only; new rank = index in list. */
HcclResult HcclCommCreateGroup(HcclComm *newComm, HcclComm parent,
                               uint32_t nRanks, const uint32_t *parentRankIds);
/** HCCL: sub-communicator over rankIds (world ranks of comm). */
HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds,
                                   uint64_t subCommId, uint32_t subCommRankId,
                                   HcclCommConfig *config, HcclComm *subComm);
/** Collective over current members: admit a newcomer at rank newRank. */
HcclResult HcclCommAddMember(HcclComm comm, uint32_t newRank);
/** Collective over survivors: drop failedRank (which may be dead or hung),
 *  and with it every other member known failed when the survivors agree
 *  (several processes can die at once); HcclGetRankSize/HcclGetRankId give
 *  the new size and rank. */
HcclResult HcclCommRemoveMember(HcclComm comm, uint32_t failedRank);
/** Extension (ULFM's MPIX_Comm_get_failed for hcomm): the ranks of comm
 *  that this process knows to have failed, in ascending order: their
 *  process ended (UCX saw its connection break, or its keepalive found the
 *  process gone), or another member removed it (HcclCommRemoveMember tells
 *  the others). A hung process is listed only once a member removed it.
 *  Local knowledge: members learn at different times; poll after an
 *  operation failed. Writes min(*nFailed, maxRanks) ranks and sets *nFailed
 *  to the full count; ranks may be NULL when maxRanks is 0. Not collective;
 *  it progresses UCX once and opens the connections to members that it
 *  lacks, so that a dead process is noticed. */
HcclResult HcclCommGetFailedRanks(HcclComm comm, uint32_t *ranks, uint32_t maxRanks,
                                  uint32_t *nFailed);
/** The newcomer's side of HcclCommAddMember. */
HcclResult HcclCommJoin(const char *joinInfo, HcclComm *comm);
/** A string that a newcomer passes to HcclCommJoin. */
HcclResult HcclCommGetJoinInfo(HcclComm comm, char *joinInfo, size_t len);

/** Extension, for tests and diagnostics: process-wide counts of UCX
 *  endpoints created, scratch buffers allocated and their bytes, since the
 *  process started (they survive HcclCommDestroy). Any pointer may be
 *  NULL. Creating a communicator by HcclCommSplit, HcclCommCreateGroup or
 *  HcclCreateSubCommConfig increases none of them. */
HcclResult HcclGetDebugCounters(uint64_t *endpointsCreated, uint64_t *buffersAllocated,
                                uint64_t *bufferBytes);
/** Extension, for benchmarks and diagnostics: process-wide counts of gradient
 *  fusion since the process started: HcclAllReduceMulti calls and fused
 *  HcclGroupStart/End sets, the tensors they carried, and the AllReduce
 *  operations (network operations) they issued. Any pointer may be NULL. */
HcclResult HcclGetFusionCounters(uint64_t *fusedCalls, uint64_t *tensors,
                                 uint64_t *networkOps);
/** Extension, for benchmarks and diagnostics: bytes this rank sent to ranks
 *  on other nodes (the hosts of the topology model, declared ones included:
 *  docs/TOPOLOGY.md) by the last collective on comm that succeeded, and by
 *  all its collectives since it was created. Any pointer may be NULL. */
HcclResult HcclCommGetInterNodeBytes(HcclComm comm, uint64_t *lastOp, uint64_t *total);

/* ------------------------------------------------------------------ */
/* Collectives and point-to-point (stream: NULL = blocking)            */
/* ------------------------------------------------------------------ */

HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count,
                         HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                         void *stream);
HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType,
                         uint32_t root, HcclComm comm, void *stream);
HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count,
                      HcclDataType dataType, HcclReduceOp op, uint32_t root,
                      HcclComm comm, void *stream);
HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                             HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                             void *stream);
HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount,
                         HcclDataType dataType, HcclComm comm, void *stream);
HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                       HcclDataType dataType, uint32_t root, HcclComm comm,
                       void *stream);
HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
                        const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
                        HcclComm comm, void *stream);
/** Counts and displacements are uint64_t arrays, in elements. */
HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls,
                         HcclDataType sendType, const void *recvBuf,
                         const void *recvCounts, const void *rdispls,
                         HcclDataType recvType, HcclComm comm, void *stream);
/** HCCL: AlltoAllV whose counts come as one n x n matrix of uint64_t
 *  (row i: what rank i sends to each rank), the same on every rank; blocks
 *  are packed in rank order on both sides. Not inside a group. */
HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix, HcclDataType sendType,
                          const void *recvBuf, HcclDataType recvType, HcclComm comm,
                          aclrtStream stream);
/** HCCL: every rank's sendCount elements to every rank; rank i's block lands
 *  at recvDispls[i] (uint64_t arrays, elements; recvCounts[me] == sendCount).
 *  Not inside a group. */
HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf,
                          const void *recvCounts, const void *recvDispls, HcclDataType dataType,
                          HcclComm comm, aclrtStream stream);
/** HCCL: block i (sendCounts[i] elements at sendDispls[i]) of every rank
 *  reduced onto rank i (recvCount == sendCounts[me]); one Reduce per rank.
 *  Not inside a group. */
HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts, const void *sendDispls,
                              void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                              HcclReduceOp op, HcclComm comm, aclrtStream stream);
/** HCCL: the items' Send and Recv posted together as one group. */
HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                             aclrtStream stream);
HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType,
                    uint32_t destRank, HcclComm comm, void *stream);
HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType,
                    uint32_t srcRank, HcclComm comm, void *stream);
HcclResult HcclBarrier(HcclComm comm, void *stream);
/** Calls between HcclGroupStart and HcclGroupEnd are posted together. */
HcclResult HcclGroupStart(void);
HcclResult HcclGroupEnd(void);

/* ------------------------------------------------------------------ */
/* Registered buffers                                                  */
/* ------------------------------------------------------------------ */

/** Extension: allocate size bytes (whole pages, zeroed, pre-faulted) that
 *  the ranks of a communicator on one host can map into each other's
 *  address space once registered (HcclCommRegister). From 2 MiB, in 2 MiB
 *  huge pages where enough are reserved (/proc/sys/vm/nr_hugepages), else
 *  in ordinary pages. Free with HcclMemFree, not free(). Any thread. */
HcclResult HcclMemAlloc(void **ptr, size_t size);
/** Extension: free memory from HcclMemAlloc (NULL: nothing). Fails with
 *  HCCL_E_PARA while a registration names it. */
HcclResult HcclMemFree(void *ptr);
/** HCCL's signature (flag reserved: 0). Collective over comm in hcomm
 *  (every rank, at the same point of its calls on comm, none in flight,
 *  not inside a group): register [addr, addr + size), which must lie in
 *  memory from HcclMemAlloc on every rank (else HCCL_E_PARA on all). Ranks
 *  on one host then map each other's range (what HCCL's
 *  HcclCommExchangeMem does apart), and collectives whose buffers lie in
 *  registered ranges on every rank copy and fold with loads and stores
 *  instead of system calls (at present: AllReduce on 2 ranks;
 *  docs/DESIGN.md "Registered buffers"). Buffers outside the ranges stay
 *  correct. */
HcclResult HcclCommRegister(HcclComm comm, void *addr, uint64_t size, void **handle,
                            uint32_t flag);
/** Collective like HcclCommRegister: drop a registration.
 *  HcclCommDestroy and membership changes drop all of comm's. */
HcclResult HcclCommDeregister(HcclComm comm, void *handle);

/** Extension: gradient fusion. Reduces num_ops tensors in few transfers. */
HcclResult HcclAllReduceMulti(const void **inputs, void **outputs,
                              const uint64_t *counts, size_t num_ops,
                              HcclDataType dtype, HcclReduceOp op, HcclComm comm,
                              void *stream);

/* ------------------------------------------------------------------ */
/* Streams (extension)                                                 */
/* ------------------------------------------------------------------ */

HcclResult HcclStreamCreate(HcclStream *stream);
/** Higher priority runs first. */
HcclResult HcclStreamCreateWithPriority(HcclStream *stream, int priority);
/** CUDA builds with a usable device only (cudaStream is a cudaStream_t);
 *  HCCL_E_NOT_SUPPORT otherwise. An operation on such a stream starts
 *  after the work queued on the CUDA stream before it and is complete when
 *  the call returns (docs/GPU.md). */
HcclResult HcclStreamCreateFromCuda(HcclStream *stream, void *cudaStream);
HcclResult HcclStreamSynchronize(HcclStream stream);
/** HCCL_SUCCESS when everything enqueued is done, HCCL_E_AGAIN if pending. */
HcclResult HcclStreamQuery(HcclStream stream);
HcclResult HcclStreamDestroy(HcclStream stream);

#ifdef __cplusplus
}
#endif
#endif /* HCCL_H_ */
