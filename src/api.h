/*
 * src/api.h - shared by the public entry points (api_coll.c, group.c):
 * argument checks that log the argument by name, and dispatch of an
 * operation to a group, a stream or a blocking run.
 */
#ifndef HC_API_H_
#define HC_API_H_

#include <hccl/hccl.h>
#include "comm.h"

/* comm a live handle (*out its communicator, hc_comm_get), not aborted;
 * data type known (esize set). */
int hc_api_check_comm_type(HcclComm comm, const char *fn, HcclDataType dt, size_t *esize,
                           hc_comm_t **out);
/* NULL with a non-zero count: HCCL_E_PTR naming `what`. */
int hc_api_check_ptr(const char *fn, const char *what, const void *p, uint64_t count);

/* Inside HcclGroupStart/End on this thread? */
int hc_group_active(void);
/* Queue a collective until HcclGroupEnd (stream: the call's stream; a
 * group runs on the stream its calls name, NULL = blocking). */
int hc_group_add_coll(hc_comm_t *c, const hc_op_t *op, void *stream);

#endif /* HC_API_H_ */
