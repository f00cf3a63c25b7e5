/*
 * src/gpu_ipc.h - AllReduce and Broadcast of device buffers through CUDA
 * IPC among the processes of one host (HCCL_GPU_IPC=1; see gpu_ipc.c).
 */
#ifndef HC_GPU_IPC_H_
#define HC_GPU_IPC_H_

#include "comm.h"

/* Try op (AllReduce or Broadcast, device buffers, arguments checked,
 * ordering done) through CUDA IPC. Collective: every rank decides the
 * same. *done = 0 (and HCCL_SUCCESS): not possible here, take the staged
 * path; *done = 1: the result of the operation is the return value. */
int hc_gpu_ipc_run(hc_comm_t *c, const hc_op_t *op, int *done);

#endif /* HC_GPU_IPC_H_ */
