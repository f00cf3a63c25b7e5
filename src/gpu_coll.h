/*
 * src/gpu_coll.h - device buffers in collectives and Send/Recv, and the
 * ordering of operations on streams made from CUDA streams (docs/GPU.md).
 *
 * The public entry points call two hooks after their argument checks:
 * dispatch() in src/api_coll.c calls hc_gpu_claims / hc_gpu_run for every
 * collective, p2p() in src/group.c calls hc_gpu_p2p_claims / hc_gpu_p2p.
 * Without CUDA, or with CUDA and no device, the claims are 0 and nothing
 * changes. A claimed operation runs blocking: staged through pinned host
 * memory in chunks (src/gpu_pipe.h) with the host algorithms on each chunk,
 * and complete when the call returns.
 */
#ifndef HC_GPU_COLL_H_
#define HC_GPU_COLL_H_

#include <stdint.h>
#include <hccl/hccl.h>

#include "comm.h"

/* 1 if the operation must take the GPU path: a buffer in device memory, or
 * `stream` (from hc_stream_get) made from a CUDA stream. */
int hc_gpu_claims(const hc_op_t *op, void *stream);
/* Run a claimed collective (arguments checked, HCCL_CHECK_ARGS done);
 * handle is the caller's HcclStream. */
int hc_gpu_run(hc_comm_t *c, const hc_op_t *op, HcclStream handle, void *stream);

int hc_gpu_p2p_claims(const void *buf, void *stream);
/* HcclSend (is_send) / HcclRecv of bytes bytes, claimed. */
int hc_gpu_p2p(const char *fn, int is_send, void *buf, uint64_t count, HcclDataType dt,
               uint32_t peer, HcclComm comm, HcclStream handle, void *stream);

/* Mixed host/device arguments: send and recv (either may be NULL: absent
 * on this rank) must both be host or both device memory; HCCL_E_PARA and
 * an ERROR line naming fn otherwise. */
int hc_gpu_check_kinds(const char *fn, const void *send, int send_dev, const void *recv,
                       int recv_dev);

/* The staging plan (src/gpu_pipe.h) of a collective other than AlltoAllV
 * on rank c->rank of c->nranks: which sides this rank copies, their
 * blocks, and the chunk size, which is the same on every rank. */
struct hc_gpu_plan;
void hc_gpu_coll_plan(const hc_comm_t *c, const hc_op_t *op, struct hc_gpu_plan *p);

/* Send + receive blocks of one chunk as every rank counts them, so that all
 * ranks cut an operation into the same chunks (src/gpu_pipe.h). */
uint32_t hc_gpu_coll_blocks(int coll, uint32_t nranks);

/* 1 if the UCX context (a ucp_context_h) can move CUDA memory itself (UCX
 * built with CUDA: cuda_copy, cuda_ipc, GPUDirect RDMA); logged at context
 * creation. hcomm stages device buffers through host memory either way. */
int hc_gpu_ucx_has_cuda(void *ucp_context);

#endif /* HC_GPU_COLL_H_ */
