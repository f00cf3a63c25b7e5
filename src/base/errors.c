/*
 * src/base/errors.c - HcclGetErrorString (public API).
 */
#include <stdint.h>

#include <hccl/hccl.h>

/* Indexed by HcclResult; a missing entry is caught by check_env. */
static const char *const error_strings[HCCL_E_RESERVED] = {
    [HCCL_SUCCESS] = "success",
    [HCCL_E_PARA] = "invalid parameter",
    [HCCL_E_PTR] = "null pointer",
    [HCCL_E_MEMORY] = "memory error",
    [HCCL_E_INTERNAL] = "internal error",
    [HCCL_E_NOT_SUPPORT] = "not supported",
    [HCCL_E_NOT_FOUND] = "resource not found",
    [HCCL_E_UNAVAIL] = "resource unavailable",
    [HCCL_E_SYSCALL] = "system call failed",
    [HCCL_E_TIMEOUT] = "timed out",
    [HCCL_E_OPEN_FILE_FAILURE] = "cannot open file",
    [HCCL_E_TCP_CONNECT] = "TCP connection failed",
    [HCCL_E_ROCE_CONNECT] = "RoCE connection failed",
    [HCCL_E_TCP_TRANSFER] = "TCP transfer failed",
    [HCCL_E_ROCE_TRANSFER] = "RoCE transfer failed",
    [HCCL_E_RUNTIME] = "runtime call failed",
    [HCCL_E_DRV] = "driver call failed",
    [HCCL_E_PROFILING] = "profiling call failed",
    [HCCL_E_CCE] = "CCE call failed",
    [HCCL_E_NETWORK] = "network error",
    [HCCL_E_AGAIN] = "operation pending, try again",
    [HCCL_E_REMOTE] = "remote peer failed",
    [HCCL_E_SUSPENDING] = "communicator suspending",
    [HCCL_E_OPRETRY_FAIL] = "operation retry failed",
    [HCCL_E_OOM] = "out of memory",
};

const char *HcclGetErrorString(HcclResult code)
{
    /* the cast catches negative values of a signed enum too */
    if ((unsigned)code >= (unsigned)HCCL_E_RESERVED || error_strings[code] == NULL)
        return "unknown error code";
    return error_strings[code];
}
