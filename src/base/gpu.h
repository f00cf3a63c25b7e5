/*
 * src/base/gpu.h - the library's only door to CUDA (device buffers).
 *
 * Always compiled. With HAVE_CUDA (configure --with-cuda) it calls the CUDA
 * runtime and the kernels of src/base/reduce_cuda.cu; without it every call is a
 * host-only fallback and nothing references libcudart. Functions return
 * HcclResult codes (as int) and log nothing.
 *
 * Device reductions have the host semantics of reduce.h bit for bit: FP16/
 * BF16 via float32 rounded to nearest-even once per step, every NaN result
 * the canonical quiet NaN, MAX/MIN propagating NaN with -0.0 < +0.0,
 * integer overflow wrapping.
 */
#ifndef HC_CUDA_H_
#define HC_CUDA_H_

#include <stddef.h>
#include <stdint.h>
#include <hccl/hccl_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if a CUDA device is usable (device count > 0); probed once, cached. */
int hc_cuda_available(void);

/* 1 if p is device (or managed) memory; 0 for host memory, NULL, or
 * without CUDA. */
int hc_cuda_is_device_ptr(const void *p);

/* dst[i] = a[i] op b[i] on device buffers, enqueued on cuda_stream (a
 * cudaStream_t; NULL is the default stream); asynchronous: call
 * hc_cuda_sync before reading dst. HCCL_E_PARA / HCCL_E_NOT_SUPPORT as
 * hc_reduce_check; HCCL_E_NOT_SUPPORT without CUDA or a device;
 * HCCL_E_RUNTIME if the launch fails. */
int hc_cuda_reduce(void *dst, const void *a, const void *b, size_t count, HcclDataType t,
                   HcclReduceOp op, void *cuda_stream);

/* AVG finish on a device buffer: buf[i] /= n (float types; others and n <= 1
 * are left alone), as hc_reduce_scale; asynchronous on cuda_stream. */
int hc_cuda_scale(void *buf, size_t count, HcclDataType t, uint32_t n, void *cuda_stream);

/* Synchronous copy of n bytes in any direction (host or device on either
 * side); a plain memcpy without CUDA. */
int hc_cuda_memcpy(void *dst, const void *src, size_t n);

/* Wait for everything enqueued on stream (NULL: the default stream);
 * HCCL_SUCCESS at once without CUDA. */
int hc_cuda_sync(void *cuda_stream);

/* Device memory (for staging and tests); NULL without CUDA or on failure. */
void *hc_cuda_malloc(size_t n);
void hc_cuda_free(void *p);

/* Implemented in src/base/reduce_cuda.cu (CUDA builds only); called by cuda.c
 * after the type/op check. Return cudaError_t values (0 = success). */
int hc_cuda_reduce_launch(void *dst, const void *a, const void *b, size_t count, int type,
                          int op, void *cuda_stream);
int hc_cuda_scale_launch(void *buf, size_t count, int type, uint32_t n, void *cuda_stream);

#ifdef __cplusplus
}
#endif

#endif /* HC_CUDA_H_ */
