/**
 * @file hccl_types.h
 * @brief hcomm public types. Names and values follow Huawei HCCL's
 *        hccl_types.h so that HCCL programs port by recompiling.
 */
#ifndef HCCL_TYPES_H_
#define HCCL_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque communicator handle. */
typedef void *HcclComm;
/** Opaque hcomm stream handle (see HcclStreamCreate). */
typedef void *HcclStream;

/** Result codes (values as in HCCL). */
typedef enum {
    HCCL_SUCCESS = 0,              /**< success */
    HCCL_E_PARA = 1,               /**< parameter error */
    HCCL_E_PTR = 2,                /**< empty pointer */
    HCCL_E_MEMORY = 3,             /**< memory error */
    HCCL_E_INTERNAL = 4,           /**< internal error */
    HCCL_E_NOT_SUPPORT = 5,        /**< not supported feature */
    HCCL_E_NOT_FOUND = 6,          /**< not found specific resource */
    HCCL_E_UNAVAIL = 7,            /**< resource unavailable */
    HCCL_E_SYSCALL = 8,            /**< call system interface error */
    HCCL_E_TIMEOUT = 9,            /**< timeout */
    HCCL_E_OPEN_FILE_FAILURE = 10, /**< open file fail */
    HCCL_E_TCP_CONNECT = 11,       /**< tcp connect fail */
    HCCL_E_ROCE_CONNECT = 12,      /**< roce connect fail */
    HCCL_E_TCP_TRANSFER = 13,      /**< tcp transfer fail */
    HCCL_E_ROCE_TRANSFER = 14,     /**< roce transfer fail */
    HCCL_E_RUNTIME = 15,           /**< call runtime api fail */
    HCCL_E_DRV = 16,               /**< call driver api fail */
    HCCL_E_PROFILING = 17,         /**< call profiling api fail */
    HCCL_E_CCE = 18,               /**< call cce api fail */
    HCCL_E_NETWORK = 19,           /**< call network api fail */
    HCCL_E_AGAIN = 20,             /**< try again (operation pending) */
    HCCL_E_REMOTE = 21,            /**< error cqe / remote peer failed */
    HCCL_E_SUSPENDING = 22,        /**< error communicator suspending */
    HCCL_E_OPRETRY_FAIL = 23,      /**< retry constraint */
    HCCL_E_OOM = 24,               /**< out of memory */
    HCCL_E_RESERVED                /**< reserved */
} HcclResult;

/** Data types (values as in HCCL). */
typedef enum {
    HCCL_DATA_TYPE_INT8 = 0,
    HCCL_DATA_TYPE_INT16 = 1,
    HCCL_DATA_TYPE_INT32 = 2,
    HCCL_DATA_TYPE_FP16 = 3,
    HCCL_DATA_TYPE_FP32 = 4,
    HCCL_DATA_TYPE_INT64 = 5,
    HCCL_DATA_TYPE_UINT64 = 6,
    HCCL_DATA_TYPE_UINT8 = 7,
    HCCL_DATA_TYPE_UINT16 = 8,
    HCCL_DATA_TYPE_UINT32 = 9,
    HCCL_DATA_TYPE_FP64 = 10,
    HCCL_DATA_TYPE_BFP16 = 11,
    HCCL_DATA_TYPE_INT128 = 12,
    HCCL_DATA_TYPE_FP8E4M3 = 15,   /**< data-moving collectives only */
    HCCL_DATA_TYPE_FP8E5M2 = 16,   /**< data-moving collectives only */
    HCCL_DATA_TYPE_RESERVED = 255
} HcclDataType;

/** Reduction operations. */
typedef enum {
    HCCL_REDUCE_SUM = 0,
    HCCL_REDUCE_PROD = 1,
    HCCL_REDUCE_MAX = 2,
    HCCL_REDUCE_MIN = 3,
    HCCL_REDUCE_AVG = 4,           /**< extension: sum / nranks, float types only */
    HCCL_REDUCE_RESERVED = 255
} HcclReduceOp;

#define HCCL_ROOT_INFO_BYTES 4108
/** Opaque bootstrap information produced by HcclGetRootInfo on the root. */
typedef struct HcclRootInfoDef {
    char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

#define HCCL_COMM_CONFIG_INFO_BYTES 24
#define COMM_NAME_MAX_LENGTH 128
#define UDI_MAX_LENGTH 128
#define HCCL_COMM_ALGO_MAX_LENGTH 1600
/** Value of a numeric HcclCommConfig field that the caller did not set:
 *  the environment (or the built-in default) applies. */
#define HCCL_COMM_CONFIG_UNSET 0xFFFFFFFFu
#define HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET HCCL_COMM_CONFIG_UNSET
#define HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET HCCL_COMM_CONFIG_UNSET

/**
 * Per-communicator configuration. Initialise with HcclCommConfigInit, then
 * set the fields you want; a field that is set wins over the environment.
 */
typedef struct HcclCommConfigDef {
    char reserved[HCCL_COMM_CONFIG_INFO_BYTES]; /**< size, magic, version */
    uint32_t hcclBufferSize;                    /**< staging buffer, MB */
    uint32_t hcclDeterministic;                 /**< 0 or 1 */
    char hcclCommName[COMM_NAME_MAX_LENGTH];    /**< "" = generated */
    char hcclUdi[UDI_MAX_LENGTH];               /**< user-defined info (kept, unused) */
    uint32_t hcclOpExpansionMode;               /**< accepted for HCCL compatibility */
    uint32_t hcclRdmaTrafficClass;              /**< accepted for HCCL compatibility */
    uint32_t hcclRdmaServiceLevel;              /**< accepted for HCCL compatibility */
    uint32_t hcclWorldRankID;                   /**< accepted for HCCL compatibility */
    uint64_t hcclJobID;                         /**< accepted for HCCL compatibility */
    int32_t hcclExecTimeOut;                    /**< seconds; -1 = unset, 0 = forever */
    char hcclAlgo[HCCL_COMM_ALGO_MAX_LENGTH];   /**< HCCL_ALGO syntax; "" = unset */
} HcclCommConfig;

#define HCCL_SPLIT_NOCOLOR (-1)

#ifdef __cplusplus
}
#endif
#endif /* HCCL_TYPES_H_ */
