/*
 * src/base/reduce_cuda.cu - reduction kernels for device buffers (--with-cuda).
 *
 * One grid-stride kernel template, instantiated per (element traits, op),
 * with the host semantics of src/base/reduce.c bit for bit:
 * - integers: SUM/PROD in the unsigned type (wrap-around), MAX/MIN signed
 *   or unsigned; INT128 is stored as two 64-bit words (8-byte alignment is
 *   enough) with SUM/MAX/MIN;
 * - FP16/BF16 are widened to float exactly, reduced in float and rounded to
 *   nearest-even once per step (__float2half_rn; BF16 by the same integer
 *   RNE as the host, which keeps subnormals);
 * - every NaN result is the canonical quiet NaN (the GPU's own default NaN,
 *   0x7fffffff / 0x7fff, is replaced), MAX/MIN propagate NaN and order
 *   -0.0 below +0.0; there is no mul+add to contract.
 * dst may alias a or b exactly: each thread reads its elements before it
 * writes them. Entry points are extern "C" (declared in gpu.h) and return
 * cudaError_t values; src/cuda.c checks the type/op before calling.
 */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "gpu.h"

namespace {

/* ---- float op semantics (see src/base/reduce.c) */
__device__ __forceinline__ float hc_qnan(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double hc_qnan(double) { return __longlong_as_double(0x7ff8000000000000LL); }
__device__ __forceinline__ float hc_and(float a, float b) { return __int_as_float(__float_as_int(a) & __float_as_int(b)); }
__device__ __forceinline__ float hc_or(float a, float b) { return __int_as_float(__float_as_int(a) | __float_as_int(b)); }
__device__ __forceinline__ double hc_and(double a, double b)
{
    return __longlong_as_double(__double_as_longlong(a) & __double_as_longlong(b));
}
__device__ __forceinline__ double hc_or(double a, double b)
{
    return __longlong_as_double(__double_as_longlong(a) | __double_as_longlong(b));
}

template <typename F> __device__ __forceinline__ F hc_canon(F r) { return r != r ? hc_qnan(r) : r; }

/* INT128 as two words, little-endian like the host's __int128. */
struct hc_i128 {
    unsigned long long lo;
    long long hi;
};

/* Ops: integers by template, floats and INT128 by overload. */
struct hc_op_sum {
    template <typename T> __device__ static T f(T a, T b) { return a + b; }
    __device__ static float f(float a, float b) { return hc_canon(a + b); }
    __device__ static double f(double a, double b) { return hc_canon(a + b); }
    __device__ static hc_i128 f(hc_i128 a, hc_i128 b)
    {
        hc_i128 r;
        r.lo = a.lo + b.lo;
        r.hi = (long long)((unsigned long long)a.hi + (unsigned long long)b.hi + (r.lo < a.lo));
        return r;
    }
};
struct hc_op_prod {
    template <typename T> __device__ static T f(T a, T b) { return a * b; }
    __device__ static float f(float a, float b) { return hc_canon(a * b); }
    __device__ static double f(double a, double b) { return hc_canon(a * b); }
};
__device__ __forceinline__ bool hc_gt(hc_i128 a, hc_i128 b) { return a.hi != b.hi ? a.hi > b.hi : a.lo > b.lo; }
struct hc_op_max {
    template <typename T> __device__ static T f(T a, T b) { return a > b ? a : b; }
    template <typename F> __device__ static F ff(F a, F b)
    {
        if (a != a || b != b)
            return hc_qnan(a);
        if (a != b)
            return a > b ? a : b;
        return hc_and(a, b); /* +0 > -0 */
    }
    __device__ static float f(float a, float b) { return ff(a, b); }
    __device__ static double f(double a, double b) { return ff(a, b); }
    __device__ static hc_i128 f(hc_i128 a, hc_i128 b) { return hc_gt(a, b) ? a : b; }
};
struct hc_op_min {
    template <typename T> __device__ static T f(T a, T b) { return a < b ? a : b; }
    template <typename F> __device__ static F ff(F a, F b)
    {
        if (a != a || b != b)
            return hc_qnan(a);
        if (a != b)
            return a < b ? a : b;
        return hc_or(a, b); /* -0 < +0 */
    }
    __device__ static float f(float a, float b) { return ff(a, b); }
    __device__ static double f(double a, double b) { return ff(a, b); }
    __device__ static hc_i128 f(hc_i128 a, hc_i128 b) { return hc_gt(b, a) ? a : b; }
};

/* ---- element traits: storage type S, compute type C */
template <typename S, typename C> struct hc_plain {
    typedef S st;
    typedef C ct;
    __device__ static C ld(S v) { return (C)v; }
    __device__ static S put(C v) { return (S)v; }
};
struct hc_fp16 {
    typedef uint16_t st;
    typedef float ct;
    __device__ static float ld(uint16_t v) { return __half2float(__ushort_as_half(v)); }
    __device__ static uint16_t put(float f)
    {
        return f != f ? (uint16_t)0x7e00u : __half_as_ushort(__float2half_rn(f));
    }
};
struct hc_bf16 {
    typedef uint16_t st;
    typedef float ct;
    __device__ static float ld(uint16_t v) { return __uint_as_float((unsigned)v << 16); }
    __device__ static uint16_t put(float f)
    {
        unsigned u = __float_as_uint(f);
        if (f != f)
            return (uint16_t)((u >> 16) | 0x40u);
        return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
};

template <class E, class Op>
__global__ void hc_k_reduce(typename E::st *d, const typename E::st *a, const typename E::st *b,
                            size_t n)
{
    size_t step = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        d[i] = E::put(Op::f(E::ld(a[i]), E::ld(b[i])));
}

template <class E>
__global__ void hc_k_scale(typename E::st *p, size_t n, typename E::ct div)
{
    size_t step = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        p[i] = E::put(hc_canon(E::ld(p[i]) / div));
}

const unsigned hc_threads = 256;

unsigned hc_blocks(size_t n)
{
    size_t b = (n + hc_threads - 1) / hc_threads;
    return (unsigned)(b < 65535 ? b : 65535); /* the loop strides over the rest */
}

template <class E, class Op>
int hc_launch(void *d, const void *a, const void *b, size_t n, cudaStream_t s)
{
    typedef typename E::st T;
    hc_k_reduce<E, Op><<<hc_blocks(n), hc_threads, 0, s>>>((T *)d, (const T *)a, (const T *)b, n);
    return (int)cudaGetLastError();
}

/* SUM/PROD in the unsigned type U, MAX/MIN in S; AVG is SUM for floats. */
template <class U, class S>
int hc_launch_op(int op, void *d, const void *a, const void *b, size_t n, cudaStream_t s)
{
    switch (op) {
    case HCCL_REDUCE_SUM: case HCCL_REDUCE_AVG: return hc_launch<U, hc_op_sum>(d, a, b, n, s);
    case HCCL_REDUCE_PROD: return hc_launch<U, hc_op_prod>(d, a, b, n, s);
    case HCCL_REDUCE_MAX: return hc_launch<S, hc_op_max>(d, a, b, n, s);
    case HCCL_REDUCE_MIN: return hc_launch<S, hc_op_min>(d, a, b, n, s);
    default: return (int)cudaErrorInvalidValue;
    }
}

template <class E> int hc_launch_scale(void *p, size_t n, uint32_t div, cudaStream_t s)
{
    typedef typename E::st T;
    hc_k_scale<E><<<hc_blocks(n), hc_threads, 0, s>>>((T *)p, n, (typename E::ct)div);
    return (int)cudaGetLastError();
}

} /* namespace */

extern "C" int hc_cuda_reduce_launch(void *dst, const void *a, const void *b, size_t count,
                                     int type, int op, void *cuda_stream)
{
    cudaStream_t s = (cudaStream_t)cuda_stream;
#define HC_INT(U, UC, S, SC)                                                   \
    hc_launch_op<hc_plain<U, UC>, hc_plain<S, SC> >(op, dst, a, b, count, s)
    switch (type) {
    case HCCL_DATA_TYPE_INT8: return HC_INT(uint8_t, uint32_t, int8_t, int32_t);
    case HCCL_DATA_TYPE_UINT8: return HC_INT(uint8_t, uint32_t, uint8_t, uint32_t);
    case HCCL_DATA_TYPE_INT16: return HC_INT(uint16_t, uint32_t, int16_t, int32_t);
    case HCCL_DATA_TYPE_UINT16: return HC_INT(uint16_t, uint32_t, uint16_t, uint32_t);
    case HCCL_DATA_TYPE_INT32: return HC_INT(uint32_t, uint32_t, int32_t, int32_t);
    case HCCL_DATA_TYPE_UINT32: return HC_INT(uint32_t, uint32_t, uint32_t, uint32_t);
    case HCCL_DATA_TYPE_INT64: return HC_INT(uint64_t, uint64_t, int64_t, int64_t);
    case HCCL_DATA_TYPE_UINT64: return HC_INT(uint64_t, uint64_t, uint64_t, uint64_t);
    case HCCL_DATA_TYPE_FP16: return hc_launch_op<hc_fp16, hc_fp16>(op, dst, a, b, count, s);
    case HCCL_DATA_TYPE_BFP16: return hc_launch_op<hc_bf16, hc_bf16>(op, dst, a, b, count, s);
    case HCCL_DATA_TYPE_FP32:
        return hc_launch_op<hc_plain<float, float>, hc_plain<float, float> >(op, dst, a, b, count, s);
    case HCCL_DATA_TYPE_FP64:
        return hc_launch_op<hc_plain<double, double>, hc_plain<double, double> >(op, dst, a, b,
                                                                                 count, s);
    case HCCL_DATA_TYPE_INT128:
        typedef hc_plain<hc_i128, hc_i128> E128;
        switch (op) {
        case HCCL_REDUCE_SUM: return hc_launch<E128, hc_op_sum>(dst, a, b, count, s);
        case HCCL_REDUCE_MAX: return hc_launch<E128, hc_op_max>(dst, a, b, count, s);
        case HCCL_REDUCE_MIN: return hc_launch<E128, hc_op_min>(dst, a, b, count, s);
        default: return (int)cudaErrorInvalidValue;
        }
    default:
        return (int)cudaErrorInvalidValue;
    }
#undef HC_INT
}

extern "C" int hc_cuda_scale_launch(void *buf, size_t count, int type, uint32_t n,
                                    void *cuda_stream)
{
    cudaStream_t s = (cudaStream_t)cuda_stream;
    switch (type) {
    case HCCL_DATA_TYPE_FP16: return hc_launch_scale<hc_fp16>(buf, count, n, s);
    case HCCL_DATA_TYPE_BFP16: return hc_launch_scale<hc_bf16>(buf, count, n, s);
    case HCCL_DATA_TYPE_FP32: return hc_launch_scale<hc_plain<float, float> >(buf, count, n, s);
    case HCCL_DATA_TYPE_FP64: return hc_launch_scale<hc_plain<double, double> >(buf, count, n, s);
    default: return (int)cudaErrorInvalidValue;
    }
}
