/**
 * @file hccl_types.h
 * @brief hcomm public types. Names, values and the layout of every
 *        structure follow Huawei HCCL's hccl_types.h (HcclCommConfig:
 *        configuration version 10) so that HCCL programs port by
 *        recompiling, and a binary built against HCCL's header passes
 *        structures that hcomm reads right. HCCL declares its constants as
 *        `const uint32_t`; here they are macros, usable in C as array sizes.
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
/** The stream argument of HCCL's calls. CANN's acl_base.h declares the same
 *  type; C11 and C++ allow the repeated, identical typedef. */
typedef void *aclrtStream;

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
    HCCL_DATA_TYPE_HIF8 = 14,      /**< data-moving collectives only */
    HCCL_DATA_TYPE_FP8E4M3 = 15,   /**< data-moving collectives only */
    HCCL_DATA_TYPE_FP8E5M2 = 16,   /**< data-moving collectives only */
    HCCL_DATA_TYPE_FP8E8M0 = 17,   /**< data-moving collectives only */
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

/** Process-wide settings of HcclSetConfig / HcclGetConfig. */
typedef enum {
    HCCL_DETERMINISTIC = 0, /**< 0: off, 1: on (2, HCCL's strict order, is refused) */
    HCCL_CONFIG_RESERVED
} HcclConfig;

typedef union HcclConfigValue {
    int32_t value;
} HcclConfigValue;

#define HCCL_COMM_CONFIG_INFO_BYTES 24
#define HCCL_COMM_CONFIG_MAGIC_WORD 0xf0f0f0f0u
/** The HcclCommConfig layout below is HCCL's version 10. */
#define HCCL_COMM_CONFIG_VERSION 10u
#define COMM_NAME_MAX_LENGTH 128
#define UDI_MAX_LENGTH 128
#define BUFFER_NAME_MAX_LENGTH 128
#define HCCL_COMM_ALGO_MAX_LENGTH 1600
#define HCCL_COMM_RETRY_ENABLE_MAX_LENGTH 50
#define HCCL_COMM_RETRY_PARAMS_MAX_LENGTH 128
#define HCCL_COMM_DEFAULT_BUFFSIZE 200u
#define HCCL_COMM_DEFAULT_DETERMINISTIC 0u
#define HCCL_COMM_DEFAULT_OP_EXPANSION_MODE 0u
/** A numeric HcclCommConfig field left at its NOT_SET value: the
 *  environment (or the built-in default) applies. */
#define HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET 0xffffffffu
#define HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET 0xffffffffu
#define HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET 0xffffffffu
#define HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET 0xffffffffu
#define HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET (-1)
#define HCCL_COMM_QOS_CONFIG_NOT_SET 0xffffffffu
#define HCCL_COMM_HCCL_QOS_CONFIG_NOT_SET HCCL_COMM_QOS_CONFIG_NOT_SET

/**
 * Per-communicator configuration, HCCL's layout (version 10, 2232 bytes).
 * Initialise with HcclCommConfigInit, then set the fields you want; a field
 * that is set wins over the environment. The first 24 bytes carry the size,
 * magic word and version that HcclCommConfigInit writes: a configuration
 * from an older, shorter layout is read up to its size, the fields past it
 * taken as not set. docs/API.md lists what each field does in hcomm.
 */
typedef struct HcclCommConfigDef {
    char reserved[HCCL_COMM_CONFIG_INFO_BYTES];    /**< size, magic, version */
    uint32_t hcclBufferSize;                       /**< staging buffer, MB (HCCL_BUFFSIZE) */
    uint32_t hcclDeterministic;                    /**< 0 or 1 (HCCL_DETERMINISTIC) */
    char hcclCommName[COMM_NAME_MAX_LENGTH];       /**< "" = generated */
    char hcclUdi[UDI_MAX_LENGTH];                  /**< user-defined info (kept, unused) */
    uint32_t hcclOpExpansionMode;                  /**< 0-3; accepted, unused (no device) */
    uint32_t hcclRdmaTrafficClass;                 /**< 0-255; accepted, unused */
    uint32_t hcclRdmaServiceLevel;                 /**< 0-7; accepted, unused */
    uint32_t hcclWorldRankID;                      /**< accepted, unused */
    uint64_t hcclJobID;                            /**< accepted, unused */
    uint8_t aclGraphZeroCopyEnable;                /**< 0 or 1; accepted, unused */
    int32_t hcclExecTimeOut;                       /**< seconds (HCCL_EXEC_TIMEOUT); -1 = not set */
    char hcclAlgo[HCCL_COMM_ALGO_MAX_LENGTH];      /**< HCCL_ALGO syntax; "" = not set */
    char hcclRetryEnable[HCCL_COMM_RETRY_ENABLE_MAX_LENGTH]; /**< accepted, unused */
    char hcclRetryParams[HCCL_COMM_RETRY_PARAMS_MAX_LENGTH]; /**< accepted, unused */
    char hcclBufferName[BUFFER_NAME_MAX_LENGTH];   /**< accepted, unused */
    uint32_t hcclQos;                              /**< accepted, unused */
} HcclCommConfig;

/** HcclGetCommConfigCapability returns the first value not supported: the
 *  fields up to it may be set. */
typedef enum {
    HCCL_COMM_CONFIG_BUFFER_SIZE = 0,
    HCCL_COMM_CONFIG_DETERMINISTIC = 1,
    HCCL_COMM_CONFIG_COMM_NAME = 2,
    HCCL_COMM_CONFIG_OP_EXPANSION_MODE = 3,
    HCCL_COMM_CONFIG_SUPPORT_INIT_BY_ENV = 4,
    HCCL_COMM_CONFIG_WORLD_RANKID = 5,
    HCCL_COMM_CONFIG_JOBID = 6,
    HCCL_COMM_CONFIG_ACLGRAPH_ZEROCOPY_ENABLE = 7,
    HCCL_COMM_CONFIG_EXEC_TIMEOUT = 8,
    HCCL_COMM_CONFIG_ALGO = 9,
    HCCL_COMM_CONFIG_RETRY = 10,
    HCCL_COMM_CONFIG_BUFFER_NAME = 11,
    HCCL_COMM_CONFIG_RESERVED
} HcclCommConfigCapability;

/** HcclBatchSendRecv items. */
typedef enum {
    HCCL_SEND = 0,
    HCCL_RECV = 1,
    HCCL_SEND_RECV_RESERVED
} HcclSendRecvType;

typedef struct HcclSendRecvItemDef {
    HcclSendRecvType sendRecvType;
    void *buf;
    uint64_t count;
    HcclDataType dataType;
    uint32_t remoteRank;
} HcclSendRecvItem;

/** Operation kinds (HCCL's values; hcomm takes none as an argument). */
typedef enum {
    HCCL_CMD_INVALID = 0,
    HCCL_CMD_BROADCAST = 1,
    HCCL_CMD_ALLREDUCE,
    HCCL_CMD_REDUCE,
    HCCL_CMD_SEND,
    HCCL_CMD_RECEIVE,
    HCCL_CMD_ALLGATHER,
    HCCL_CMD_REDUCE_SCATTER,
    HCCL_CMD_ALLTOALLV,
    HCCL_CMD_ALLTOALLVC,
    HCCL_CMD_ALLTOALL,
    HCCL_CMD_GATHER,
    HCCL_CMD_SCATTER,
    HCCL_CMD_BATCH_SEND_RECV,
    HCCL_CMD_BATCH_PUT,
    HCCL_CMD_BATCH_GET,
    HCCL_CMD_ALLGATHER_V,
    HCCL_CMD_REDUCE_SCATTER_V,
    HCCL_CMD_BATCH_WRITE,
    HCCL_CMD_HALF_ALLTOALLV = 20,
    HCCL_CMD_ALL,
    HCCL_CMD_FINALIZE = 100,
    HCCL_CMD_INTER_GROUP_SYNC,
    HCCL_CMD_INIT,
    HCCL_CMD_BARRIER,
    HCCL_CMD_MAX
} HcclCMDType;

/** HcclCommGetStatus. */
typedef enum {
    HCCL_COMM_STATUS_READY = 0,
    HCCL_COMM_STATUS_SUSPENDING = 1,
    HCCL_COMM_STATUS_INVALID = 254,
    HCCL_COMM_STATUS_RESERVED = 255
} HcclCommStatus;

#define HCCL_SPLIT_NOCOLOR (-1)

#ifdef __cplusplus
}
#endif
#endif /* HCCL_TYPES_H_ */
