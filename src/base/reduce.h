/*
 * src/base/reduce.h - element-wise reductions for every HcclDataType x HcclReduceOp
 * (one table-driven kernel family; SIMD variants chosen at run time by CPU
 * features, with a portable scalar path they are tested against).
 *
 * FP16 and BFP16 are reduced in float32 and rounded to nearest-even once per
 * reduction step. INT128 supports SUM/MAX/MIN. FP8 types are not reducible.
 * AVG is reduced as SUM; the caller scales once at the end (hc_reduce_scale).
 */
#ifndef HC_REDUCE_H_
#define HC_REDUCE_H_

#include <stddef.h>
#include <stdint.h>
#include <hccl/hccl_types.h>

/* Bytes per element; 0 for an unknown type. */
size_t hc_dtype_size(HcclDataType t);
const char *hc_dtype_name(HcclDataType t); /* "float32", ... or "unknown" */
const char *hc_op_name(HcclReduceOp op);   /* "sum", ... or "unknown" */
int hc_dtype_is_float(HcclDataType t);    /* fp16, bf16, fp32, fp64 (not fp8) */

/* HCCL_SUCCESS, HCCL_E_PARA (unknown type or op) or HCCL_E_NOT_SUPPORT
 * (a combination the type does not support). */
int hc_reduce_check(HcclDataType t, HcclReduceOp op);

/* dst[i] = a[i] op b[i]; dst may alias a or b (exactly, not partially). */
void hc_reduce(void *dst, const void *a, const void *b, size_t count, HcclDataType t,
               HcclReduceOp op);
/* dst[i] = ((src[0][i] op src[1][i]) op src[2][i]) ... in this order, with
 * the same rounding as successive hc_reduce calls; nsrc >= 1. dst may alias
 * src[0]. One pass over memory. */
void hc_reduce_multi(void *dst, const void *const *src, size_t nsrc, size_t count,
                     HcclDataType t, HcclReduceOp op);
/* The same fold, written to dst with non-temporal stores (cold.h) through
 * an L1 block; any source may alias dst. nsrc <= 64. */
void hc_reduce_multi_nt(void *dst, const void *const *src, size_t nsrc, size_t count,
                        HcclDataType t, HcclReduceOp op);
/* d1[i] = d2[i] = a[i] op b[i], written with non-temporal stores (cold.h:
 * the caller fences before it publishes); d1 and d2 may each alias a or b
 * (exactly: every element is read before it is written); d1 and d2 do not
 * overlap. Same bits as hc_reduce. */
void hc_reduce2_nt(void *d1, void *d2, const void *a, const void *b, size_t count,
                   HcclDataType t, HcclReduceOp op);
/* AVG finish: buf[i] = buf[i] / n (float types). */
void hc_reduce_scale(void *buf, size_t count, HcclDataType t, uint32_t n);

/* Conversions (round to nearest-even; NaN stays NaN). */
float hc_fp16_to_float(uint16_t h);
uint16_t hc_float_to_fp16(float f);
float hc_bf16_to_float(uint16_t h);
uint16_t hc_float_to_bf16(float f);

/* Which kernels run: "avx512", "avx2", "scalar". Tests force "scalar" to
 * compare. Returns 0, or -1 if the CPU lacks the requested set. */
int hc_reduce_set_isa(const char *isa);
const char *hc_reduce_isa(void);

#endif /* HC_REDUCE_H_ */
