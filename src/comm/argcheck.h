/*
 * src/comm/argcheck.h - argument checks shared by the entry points (the
 * collectives, groups, fusion, split, registration), each logging the
 * argument by name.
 */
#ifndef HC_ARGCHECK_H_
#define HC_ARGCHECK_H_

#include <stddef.h>
#include <stdint.h>
#include <hccl/hccl.h>

#include "comm.h"

/* comm a live handle (*out its communicator, hc_comm_get), not aborted;
 * data type known (esize set). */
int hc_api_check_comm_type(HcclComm comm, const char *fn, HcclDataType dt, size_t *esize,
                           hc_comm_t **out);
/* NULL with a non-zero count: HCCL_E_PTR naming `what`. */
int hc_api_check_ptr(const char *fn, const char *what, const void *p, uint64_t count);

#endif /* HC_ARGCHECK_H_ */
