/*
 * src/sched/fusion.h - HcclAllReduceMulti and fused AllReduce sets: the task
 * that packs many tensors into few operations (src/sched/fusion.c).
 */
#ifndef HC_FUSION_H_
#define HC_FUSION_H_

#include "stream.h"

/* HcclAllReduceMulti over n tensors (arguments checked; arrays copied). */
hc_task_t *hc_task_multi(hc_comm_t *c, const void *const *inputs, void *const *outputs,
                         const uint64_t *counts, size_t n, HcclDataType dt, size_t es,
                         HcclReduceOp op, const char *api, void *stream, hc_task_t *owner,
                         int *rc);

/* Per-process counters of the fusion path (tests, examples via the log). */
typedef struct {
    uint64_t calls;       /* HcclAllReduceMulti calls and fused group sets */
    uint64_t tensors;     /* tensors they carried */
    uint64_t net_ops;     /* AllReduce operations they issued */
    uint64_t buckets;     /* of which packed buckets */
    uint64_t gathered;    /* of which gathered in place (DIRECT on a list) */
} hc_fusion_counters_t;
void hc_fusion_counters(hc_fusion_counters_t *out);

#endif /* HC_FUSION_H_ */
