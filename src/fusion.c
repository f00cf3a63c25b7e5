/*
 * src/fusion.c - gradient fusion: HcclAllReduceMulti.
 *
 * Tensors are packed, in order, into buckets of at most
 * HCCL_FUSION_THRESHOLD bytes (default: 64 MB or the staging buffer size,
 * whichever is smaller); each bucket is one AllReduce on a pooled staging
 * buffer, then unpacked. A tensor larger than a bucket is reduced alone,
 * straight from its input to its output, without a copy. Results are
 * bit-identical to per-tensor AllReduce when the algorithm reduces each
 * element in the same order (always true in deterministic mode).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <string.h>
#include <hccl/hccl.h>

#include "api.h"
#include "comm.h"
#include "log.h"
#include "reduce.h"

#define HC_FUSION_DEFAULT (64ull << 20)

uint64_t hc_fusion_bucket_bytes(const hc_comm_t *c)
{
    uint64_t b = c->cfg.fusion_threshold ? c->cfg.fusion_threshold : HC_FUSION_DEFAULT;
    if (c->cfg.buffsize && b > c->cfg.buffsize)
        b = c->cfg.buffsize;
    return b;
}

static int allreduce(hc_comm_t *c, void *send, void *recv, uint64_t count, HcclDataType dt,
                     size_t es, HcclReduceOp op)
{
    hc_op_t o;
    memset(&o, 0, sizeof(o));
    o.api = "HcclAllReduceMulti";
    o.args.coll = HC_COLL_ALLREDUCE;
    o.args.count = count;
    o.args.dtype = dt;
    o.args.esize = es;
    o.args.op = op;
    o.args.in_place = send == recv;
    o.user_op = op;
    o.send = send;
    o.recv = recv;
    return hc_comm_run(c, &o);
}

HcclResult HcclAllReduceMulti(const void **inputs, void **outputs, const uint64_t *counts,
                              size_t num_ops, HcclDataType dtype, HcclReduceOp op,
                              HcclComm comm, void *stream)
{
    static const char fn[] = "HcclAllReduceMulti";
    hc_comm_t *c = comm;
    size_t es;
    int rc = hc_api_check_comm_type(c, fn, dtype, &es);
    if (rc != HCCL_SUCCESS)
        return rc;
    rc = hc_reduce_check(dtype, op);
    if (rc != HCCL_SUCCESS) {
        HC_ERROR(HC_SUB_COLL, "%s: op %d with dataType %d: %s", fn, (int)op, (int)dtype,
                 rc == HCCL_E_PARA ? "unknown op" : "not supported");
        return rc;
    }
    if (num_ops == 0)
        return HCCL_SUCCESS;
    if (inputs == NULL || outputs == NULL || counts == NULL) {
        HC_ERROR(HC_SUB_COLL, "%s: %s is NULL with num_ops %zu", fn,
                 inputs == NULL ? "inputs" : outputs == NULL ? "outputs" : "counts", num_ops);
        return HCCL_E_PTR;
    }
    for (size_t i = 0; i < num_ops; i++) {
        if (counts[i] && (inputs[i] == NULL || outputs[i] == NULL)) {
            HC_ERROR(HC_SUB_COLL, "%s: %s[%zu] is NULL with count %llu", fn,
                     inputs[i] == NULL ? "inputs" : "outputs", i,
                     (unsigned long long)counts[i]);
            return HCCL_E_PTR;
        }
        if (counts[i] > (UINT64_MAX >> 1) / es) {
            HC_ERROR(HC_SUB_COLL, "%s: counts[%zu] = %llu is too large", fn, i,
                     (unsigned long long)counts[i]);
            return HCCL_E_PARA;
        }
    }
    if (stream != NULL || hc_group_active()) {
        HC_ERROR(HC_SUB_COLL, "%s: stream must be NULL and no group may be open in this "
                 "version of hcomm", fn);
        return HCCL_E_NOT_SUPPORT;
    }
    uint64_t bucket = hc_fusion_bucket_bytes(c) / es * es;
    if (bucket < es)
        bucket = es;
    char *stage = NULL;
    size_t i = 0;
    uint64_t nbuckets = 0;
    while (i < num_ops && rc == HCCL_SUCCESS) {
        uint64_t bytes = counts[i] * es;
        if (bytes == 0) {
            i++;
            continue;
        }
        if (bytes > bucket) { /* alone, no copy */
            rc = allreduce(c, (void *)inputs[i], outputs[i], counts[i], dtype, es, op);
            nbuckets++;
            i++;
            continue;
        }
        if (stage == NULL) {
            stage = hc_ctx_tmp_get(c->ctx, bucket, &rc);
            if (rc != HCCL_SUCCESS)
                break;
        }
        size_t first = i;
        uint64_t fill = 0;
        while (i < num_ops && fill + counts[i] * es <= bucket) {
            if (counts[i])
                memcpy(stage + fill, inputs[i], counts[i] * es);
            fill += counts[i] * es;
            i++;
        }
        rc = allreduce(c, stage, stage, fill / es, dtype, es, op);
        nbuckets++;
        if (rc != HCCL_SUCCESS)
            break;
        fill = 0;
        for (size_t k = first; k < i; k++) {
            if (counts[k])
                memcpy(outputs[k], stage + fill, counts[k] * es);
            fill += counts[k] * es;
        }
    }
    if (stage)
        hc_ctx_tmp_put(c->ctx, stage);
    HC_INFO(HC_SUB_COLL, "%s: %zu tensors in %llu AllReduce operations", fn, num_ops,
            (unsigned long long)nbuckets);
    return (HcclResult)rc;
}
