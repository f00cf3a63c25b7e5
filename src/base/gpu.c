/*
 * src/base/gpu.c - host side of the CUDA path (see gpu.h).
 *
 * Every CUDA call is under HAVE_CUDA; without it the functions are host
 * fallbacks and the library never references libcudart. The device probe
 * runs once (pthread_once): with no GPU or no driver, cudaGetDeviceCount
 * fails (cudaErrorNoDevice, 100, or cudaErrorInsufficientDriver, 35) and may
 * leave the count unwritten, so the count starts at 0 and any error means
 * "no device". Errors are cleared with cudaGetLastError so that they do not
 * surface in a later, unrelated call.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gpu.h"

#include <pthread.h>
#include <string.h>

#include "reduce.h"
#include "util.h"

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static pthread_once_t hc_cuda_once = PTHREAD_ONCE_INIT;
static int hc_cuda_ndev;

static void hc_cuda_probe(void)
{
#ifdef HAVE_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        n = 0;
        (void)cudaGetLastError();
    }
    hc_cuda_ndev = n > 0 ? n : 0;
#else
    hc_cuda_ndev = 0;
#endif
}

int hc_cuda_available(void)
{
    pthread_once(&hc_cuda_once, hc_cuda_probe);
    return hc_cuda_ndev > 0;
}

int hc_cuda_is_device_ptr(const void *p)
{
#ifdef HAVE_CUDA
    struct cudaPointerAttributes attr;

    if (p == NULL || !hc_cuda_available())
        return 0;
    memset(&attr, 0, sizeof(attr));
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        (void)cudaGetLastError(); /* older runtimes fail on plain host memory */
        return 0;
    }
    return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
#else
    (void)p;
    return 0;
#endif
}

int hc_cuda_reduce(void *dst, const void *a, const void *b, size_t count, HcclDataType t,
                   HcclReduceOp op, void *cuda_stream)
{
    int rc = hc_reduce_check(t, op);

    if (rc != HCCL_SUCCESS)
        return rc;
#ifdef HAVE_CUDA
    if (!hc_cuda_available())
        return HCCL_E_NOT_SUPPORT;
    if (count == 0)
        return HCCL_SUCCESS;
    if (hc_cuda_reduce_launch(dst, a, b, count, (int)t, (int)op, cuda_stream) != 0) {
        (void)cudaGetLastError();
        return HCCL_E_RUNTIME;
    }
    return HCCL_SUCCESS;
#else
    (void)dst, (void)a, (void)b, (void)count, (void)cuda_stream;
    return HCCL_E_NOT_SUPPORT;
#endif
}

int hc_cuda_scale(void *buf, size_t count, HcclDataType t, uint32_t n, void *cuda_stream)
{
    if (hc_dtype_size(t) == 0)
        return HCCL_E_PARA;
#ifdef HAVE_CUDA
    if (!hc_cuda_available())
        return HCCL_E_NOT_SUPPORT;
    if (count == 0 || n <= 1 || !hc_dtype_is_float(t))
        return HCCL_SUCCESS;
    if (hc_cuda_scale_launch(buf, count, (int)t, n, cuda_stream) != 0) {
        (void)cudaGetLastError();
        return HCCL_E_RUNTIME;
    }
    return HCCL_SUCCESS;
#else
    (void)buf, (void)count, (void)n, (void)cuda_stream;
    return HCCL_E_NOT_SUPPORT;
#endif
}

int hc_cuda_memcpy(void *dst, const void *src, size_t n)
{
    if (n == 0)
        return HCCL_SUCCESS;
    if (dst == NULL || src == NULL)
        return HCCL_E_PTR;
#ifdef HAVE_CUDA
    if (hc_cuda_available()) {
        if (cudaMemcpy(dst, src, n, cudaMemcpyDefault) != cudaSuccess) {
            (void)cudaGetLastError();
            return HCCL_E_RUNTIME;
        }
        return HCCL_SUCCESS;
    }
#endif
    hc_copy(dst, src, n);
    return HCCL_SUCCESS;
}

int hc_cuda_sync(void *cuda_stream)
{
#ifdef HAVE_CUDA
    if (!hc_cuda_available())
        return HCCL_SUCCESS;
    if (cudaStreamSynchronize((cudaStream_t)cuda_stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return HCCL_E_RUNTIME;
    }
#else
    (void)cuda_stream;
#endif
    return HCCL_SUCCESS;
}

void *hc_cuda_malloc(size_t n)
{
#ifdef HAVE_CUDA
    void *p = NULL;
    if (!hc_cuda_available() || n == 0)
        return NULL;
    if (cudaMalloc(&p, n) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
#else
    (void)n;
    return NULL;
#endif
}

void hc_cuda_free(void *p)
{
#ifdef HAVE_CUDA
    if (p != NULL && hc_cuda_available())
        (void)cudaFree(p);
#else
    (void)p;
#endif
}
