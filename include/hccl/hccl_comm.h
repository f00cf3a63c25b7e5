/**
 * @file hccl_comm.h
 * @brief hcomm: communicator management, HCCL's hccl_comm.h. Included by
 *        hccl.h; a program may include either. The thread-safety contract
 *        is stated in hccl.h.
 */
#ifndef HCCL_COMM_H_
#define HCCL_COMM_H_

#include <hccl/hccl_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** hcomm version, as major * 10000 + minor * 100 + patch. */
#define HCOMM_VERSION_CODE 200
uint32_t HcommGetVersion(void); /**< extension: version of the loaded library */

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

/** Fill a configuration with HCCL's defaults: the header (size, magic word,
 *  version), every numeric field NOT_SET (the environment applies) or
 *  HCCL's default, every string empty. Inline, as in HCCL: the size written
 *  is that of the caller's HcclCommConfig. */
static inline void HcclCommConfigInit(HcclCommConfig *config)
{
    typedef struct {
        size_t size;
        uint32_t magicWord;
        uint32_t version;
        uint64_t reserved;
    } HcclCommConfigInfo;
    HcclCommConfigInfo *info = (HcclCommConfigInfo *)(void *)config;
    if (config == NULL)
        return;
    info->size = sizeof(HcclCommConfig);
    info->magicWord = HCCL_COMM_CONFIG_MAGIC_WORD;
    info->version = HCCL_COMM_CONFIG_VERSION;
    info->reserved = 0;
    config->hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
    config->hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
    config->hcclCommName[0] = '\0';
    config->hcclUdi[0] = '\0';
    config->hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
    config->hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
    config->hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
    config->hcclWorldRankID = 0;
    config->hcclJobID = 0;
    config->aclGraphZeroCopyEnable = 0;
    config->hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
    config->hcclAlgo[0] = '\0';
    config->hcclRetryEnable[0] = '\0';
    config->hcclRetryParams[0] = '\0';
    config->hcclBufferName[0] = '\0';
    config->hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
}

/** The first HcclCommConfigCapability value that this library does not
 *  take: every field before it may be set (HCCL_COMM_CONFIG_RESERVED). */
uint32_t HcclGetCommConfigCapability(void);
/** Process-wide settings. HCCL_DETERMINISTIC (0 or 1) applies to the
 *  communicators created afterwards whose configuration leaves
 *  hcclDeterministic NOT_SET; it wins over HCCL_DETERMINISTIC in the
 *  environment. */
HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue);
/** The value in effect: HcclSetConfig's, else the environment's. */
HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *configValue);

/* ------------------------------------------------------------------ */
/* Communicator lifecycle                                              */
/* ------------------------------------------------------------------ */

/** On the root rank: produce the bootstrap info that every rank passes to
 *  HcclCommInitRootInfo. Opens a TCP listening socket (HCCL_IF_IP,
 *  HCCL_SOCKET_IFNAME, HCCL_IF_BASE_PORT). */
HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo);
/** Collective over nRanks processes: build a communicator from root info. */
HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo,
                                uint32_t rank, HcclComm *comm);
/** As HcclCommInitRootInfo, with a configuration (see HcclCommConfigInit). */
HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo,
                                      uint32_t rank, const HcclCommConfig *config,
                                      HcclComm *comm);
/** Build a communicator from an HCCL rank-table JSON file. */
HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm);
/** As HcclCommInitClusterInfo, with a configuration. */
HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank,
                                         HcclCommConfig *config, HcclComm *comm);
/** HCCL: ndev ranks of one communicator in this process (comms[i] is rank
 *  i), as HCCL's one thread per device uses them: each rank has a context
 *  of its own (UCX worker, shared staging), so the ranks are what they
 *  would be in processes of their own. A blocking call on comms[i] waits
 *  for the other ranks, so call each from its own thread. devices[i] (no
 *  device in hcomm) must be distinct and not negative. The contexts are
 *  freed when every communicator made from them (comms[], their splits) is
 *  destroyed, from any thread and in any order. */
HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms);
/** Destroy a communicator (local; waits for its operations to finish). */
HcclResult HcclCommDestroy(HcclComm comm);
HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize);
HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank);
/** Copy the communicator's name (at most 128 bytes with the NUL). */
HcclResult HcclGetCommName(HcclComm comm, char *commName);
/** The first error of an asynchronous (stream) operation, or HCCL_SUCCESS. */
HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError);
/** Extension: cancel everything in flight on comm; later calls fail fast
 *  until the communicator is destroyed. */
HcclResult HcclCommAbort(HcclComm comm);
/** Local: new operations on comm fail with HCCL_E_SUSPENDING (those in
 *  flight finish) until HcclCommResume. */
HcclResult HcclCommSuspend(HcclComm comm);
/** Local: end a suspension; an aborted communicator stays refused. */
HcclResult HcclCommResume(HcclComm comm);
/** The status of this process's live communicator named commId:
 *  HCCL_COMM_STATUS_READY or _SUSPENDING (suspended or aborted);
 *  HCCL_E_NOT_FOUND when none has that name. */
HcclResult HcclCommGetStatus(const char *commId, HcclCommStatus *status);
/** A static, human-readable description of a result code. */
const char *HcclGetErrorString(HcclResult code);

#ifdef __cplusplus
}
#endif
#endif /* HCCL_COMM_H_ */
