/* src/comm/argcheck.c - argument checks shared by the entry points (see argcheck.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "argcheck.h"

#include "src/base/log.h"
#include "src/base/reduce.h"
#include "src/base/util.h"

HC_HOT int hc_api_check_comm_type(HcclComm comm, const char *fn, HcclDataType dt, size_t *esize,
                                  hc_comm_t **out)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, fn, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    *out = c;
    if (c->aborted) {
        HC_ERROR(HC_SUB_COLL, "%s: communicator %s was aborted (HcclCommAbort)", fn, c->name);
        return HCCL_E_SUSPENDING;
    }
    if (c->suspended) {
        HC_ERROR(HC_SUB_COLL, "%s: communicator %s is suspended (HcclCommSuspend)", fn, c->name);
        return HCCL_E_SUSPENDING;
    }
    *esize = hc_dtype_size(dt);
    if (*esize == 0) {
        HC_ERROR(HC_SUB_COLL, "%s: dataType %d is not a known HcclDataType", fn, (int)dt);
        return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
}

HC_HOT int hc_api_check_ptr(const char *fn, const char *what, const void *p, uint64_t count)
{
    if (p == NULL && count > 0) {
        HC_ERROR(HC_SUB_COLL, "%s: %s is NULL with count %llu", fn, what,
                 (unsigned long long)count);
        return HCCL_E_PTR;
    }
    return HCCL_SUCCESS;
}
