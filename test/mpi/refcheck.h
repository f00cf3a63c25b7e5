/*
 * test/mpi/refcheck.h - reference results and checking helpers for the MPI
 * tests. Public API only: nothing here includes or links hcomm internals.
 *
 * The reference for a reduction is computed independently of hcomm:
 *  - where MPI has the type and the op (int8..uint64, fp32, fp64 with
 *    SUM/PROD/MAX/MIN), by MPI_Allreduce on the same inputs, once MPI's
 *    result for that pair has been cross-checked against the local
 *    reduction below (Open MPI 4.1.4's op/avx saturates MPI_UINT8_T and
 *    MPI_UINT16_T sums; a pair that fails falls back to the local path,
 *    with a warning);
 *  - otherwise (FP16, BFP16, INT128, and AVG), by MPI_Allgather of the raw
 *    inputs and a local reduction with this file's own conversion code.
 *
 * Inputs are generated (rc_fill) so that every reduction is EXACT whatever
 * the order of evaluation, which makes bit-for-bit comparison meaningful:
 *  - float SUM: small integers or multiples of 1/4 or 1/8, with partial sums
 *    far inside the mantissa (fp16: |x| <= 16 step 1/4; bf16: integers in
 *    [-8, 8]; fp32: k/8 with |k| <= 2^15; fp64: k/8 with |k| <= 2^40);
 *  - float PROD: values in {1, 2, 0.5, -1} (every product is +-2^k);
 *  - float MAX/MIN: arbitrary finite values (no NaN, no -0; no subnormals
 *    for bf16, whose hardware conversions may flush them);
 *  - AVG: every input is nranks * (a small integer), so that sum / nranks is
 *    exact and equal whether an implementation divides at the end (sum
 *    rounded to the type, then / n in float32 for fp16/bf16/fp32, double for
 *    fp64) or pre-scales each input. The reference: exact sum, divided by n
 *    in float (fp16, bf16, fp32) or double (fp64), rounded to the type;
 *  - signed integer SUM/PROD: no overflow for up to 64 ranks (signed
 *    overflow is undefined in C, so no implementation can be held to it);
 *  - unsigned SUM/PROD: full range, wrapping modulo 2^bits as in C and MPI;
 *  - integer MAX/MIN and INT128 MAX/MIN: full range, random bits;
 *  - data-moving collectives: random bytes, for every type (NaN patterns
 *    included: moving data must not touch its bits).
 */
#ifndef HC_TEST_REFCHECK_H_
#define HC_TEST_REFCHECK_H_

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include <hccl/hccl.h>

/* ---- types and ops ---- */
size_t rc_esize(HcclDataType t);            /* 0 for an unknown type */
const char *rc_type_name(HcclDataType t);
const char *rc_op_name(HcclReduceOp op);
int rc_type_is_float(HcclDataType t);        /* fp16, bf16, fp32, fp64 */
int rc_type_is_fp8(HcclDataType t);
/* The result code the API promises for a reducing collective with (t, op):
 * HCCL_SUCCESS, HCCL_E_NOT_SUPPORT (FP8, AVG on integers, INT128 PROD) or
 * HCCL_E_PARA (unknown type or op). */
HcclResult rc_reduce_expected(HcclDataType t, HcclReduceOp op);
/* 1 and *mt set if MPI has this type, else 0. */
int rc_mpi_type(HcclDataType t, MPI_Datatype *mt);

/* ---- conversions (round to nearest-even; NaN stays NaN) ---- */
float rc_fp16_to_float(uint16_t h);
uint16_t rc_float_to_fp16(float f);
float rc_bf16_to_float(uint16_t h);
uint16_t rc_float_to_bf16(float f);

/* ---- input generation ---- */
/* Random 64-bit value from (seed, a, b): a pure function, so any rank can
 * regenerate any other rank's inputs. */
uint64_t rc_hash3(uint64_t seed, uint64_t a, uint64_t b);
/* Inputs for a reduction with op (see the file comment). */
void rc_fill_reduce(void *buf, size_t count, HcclDataType t, HcclReduceOp op, int rank,
                    int nranks, uint64_t seed);
/* Inexact mode (only meaningful on 2 ranks, where a reduction is a single
 * commutative step and so has one correctly rounded answer whatever the
 * algorithm): float SUM/PROD/AVG inputs become arbitrary values whose
 * results need rounding (fp16 products reach the subnormal range), which
 * tests the per-step round-to-nearest-even of FP16/BFP16 and plain IEEE
 * rounding of FP32/FP64. Off by default. */
void rc_set_inexact(int on);
/* Random bytes (data-moving collectives). */
void rc_fill_bytes(void *buf, size_t bytes, int rank, uint64_t seed);

/* ---- references ---- */
/* out[0..count) = reduction over every rank of comm of in[0..count). Collective
 * over comm. Returns 0, or -1 if (t, op) has no reference (unsupported). */
int rc_reference_reduce(const void *in, void *out, size_t count, HcclDataType t,
                        HcclReduceOp op, MPI_Comm comm);
/* The same reduction without communication: every rank's input regenerated
 * here (rc_fill_reduce(.., r, nranks, seed) for r = 0..nranks-1) and
 * reduced in rank order by rc_reduce_local. Returns 0, or -1 as above. */
int rc_reference_reduce_gen(void *out, size_t count, HcclDataType t, HcclReduceOp op,
                            int nranks, uint64_t seed);
/* acc[i] = acc[i] op in[i] (one step, local), for every supported pair. */
void rc_reduce_local(void *acc, const void *in, size_t count, HcclDataType t,
                     HcclReduceOp op);
/* AVG finish: buf[i] /= n, in the type's arithmetic as described above. */
void rc_scale_local(void *buf, size_t count, HcclDataType t, int n);

/* ---- guarded buffers ---- */
/* A payload with guard zones before and after it, each filled with a
 * pattern that the check functions verify. The payload starts at an offset
 * that is a multiple of the element size but not of 16 for small types, so
 * SIMD code paths see unaligned buffers too. */
typedef struct {
    unsigned char *base;  /* malloc'd block */
    unsigned char *p;     /* payload */
    size_t bytes;         /* payload size */
    size_t front, back;   /* guard sizes */
} rc_buf_t;
int rc_buf_alloc(rc_buf_t *b, size_t bytes, size_t esize);
void rc_buf_free(rc_buf_t *b);
/* rc_buf_alloc takes its blocks from [base, base + bytes) (e.g. registered
 * memory from HcclMemAlloc) while they fit, with a bump allocator that
 * starts over whenever every block is back, and from malloc beyond it;
 * base NULL: malloc only (the default). */
void rc_buf_pool(void *base, size_t bytes);
/* Bytes of the pool in use (0 once every block is back). */
size_t rc_buf_pool_used(void);
/* Fill the payload with a recognisable "not written" pattern. */
void rc_buf_poison(rc_buf_t *b, unsigned char salt);
/* 0 if both guards are intact; else the offset (1-based, negative before the
 * payload, positive after) of the first damaged byte. */
long rc_buf_guard_check(const rc_buf_t *b);

/* ---- comparison and reporting ---- */
/* Index of the first element of got that differs bitwise from exp, or -1. */
long rc_first_diff(const void *got, const void *exp, size_t count, size_t esize);
/* Human-readable value of element i of buf (hex bits and a decoded value). */
void rc_format_elem(char *out, size_t len, const void *buf, size_t i, HcclDataType t);
/* FNV-1a over bytes. */
uint64_t rc_hash_bytes(const void *p, size_t n, uint64_t h);
/* 1 if every rank of comm passed the same value. Collective. */
int rc_same_on_all(uint64_t v, MPI_Comm comm);

#endif /* HC_TEST_REFCHECK_H_ */
