/*
 * src/gpu_pipe.c - the staging pipeline (see gpu_pipe.h). Pure: no CUDA,
 * no communicator; the copies and the collective are callbacks.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gpu_pipe.h"

#include <hccl/hccl_types.h>

size_t hc_gpu_chunk_bytes(size_t block, size_t esize, uint32_t nblocks, size_t slot_bytes)
{
    if (esize == 0)
        return 0;
    if (nblocks == 0)
        nblocks = 1;
    size_t c = slot_bytes / nblocks;
    c -= c % esize;
    if (c < esize)
        c = esize;
    return c < block ? c : block;
}

static size_t area_send(const hc_gpu_plan_t *p)
{
    return p->send.buf ? (size_t)p->send.blocks * p->chunk : 0;
}

static size_t area_recv(const hc_gpu_plan_t *p)
{
    return p->recv.buf ? (size_t)p->recv.blocks * p->chunk : 0;
}

size_t hc_gpu_slot_need(const hc_gpu_plan_t *p)
{
    size_t s = area_send(p), r = area_recv(p);
    if (p->same_area)
        return s > r ? s : r;
    return s + r;
}

/* Slot s's areas. */
static void areas(const hc_gpu_plan_t *p, char *stage, char **hs, char **hr)
{
    *hs = p->send.buf ? stage : NULL;
    *hr = p->recv.buf ? (p->same_area ? stage : stage + area_send(p)) : NULL;
    if (p->same_area)
        *hs = *hr = stage;
}

int hc_gpu_pipeline(const hc_gpu_plan_t *p, const hc_gpu_copy_ops_t *ops, void *ctx,
                    char *const stage[HC_GPU_SLOTS], hc_gpu_run_fn run, void *arg)
{
    if (p->block == 0)
        return HCCL_SUCCESS;
    if (p->chunk == 0)
        return HCCL_E_PARA;
    const uint64_t n = (p->block + p->chunk - 1) / p->chunk;
    int issued_d2h[HC_GPU_SLOTS] = {0}, issued_h2d[HC_GPU_SLOTS] = {0};
    int rc = HCCL_SUCCESS;

    for (uint64_t i = 0; i <= n && rc == HCCL_SUCCESS; i++) {
        if (i < n) { /* copy chunk i to the host */
            const int s = (int)(i % HC_GPU_SLOTS);
            const size_t off = (size_t)i * p->chunk;
            const size_t len = p->block - off < p->chunk ? p->block - off : p->chunk;
            char *hs, *hr;
            areas(p, stage[s], &hs, &hr);
            (void)hr;
            if (issued_h2d[s]) { /* chunk i - 3 must have left the slot */
                rc = ops->wait_h2d(ctx, s);
                issued_h2d[s] = 0;
            }
            if (rc == HCCL_SUCCESS && p->send.buf && p->send.blocks) {
                rc = ops->d2h(ctx, s, hs, len, p->send.buf + off, p->send.stride, len,
                              p->send.blocks);
                issued_d2h[s] = 1;
            }
        }
        if (rc == HCCL_SUCCESS && i >= 1) { /* chunk i - 1: collective, then back */
            const uint64_t k = i - 1;
            const int s = (int)(k % HC_GPU_SLOTS);
            const size_t off = (size_t)k * p->chunk;
            const size_t len = p->block - off < p->chunk ? p->block - off : p->chunk;
            char *hs, *hr;
            areas(p, stage[s], &hs, &hr);
            if (issued_d2h[s]) {
                rc = ops->wait_d2h(ctx, s);
                issued_d2h[s] = 0;
            }
            if (rc == HCCL_SUCCESS)
                rc = run(arg, hs, hr, off, len);
            if (rc == HCCL_SUCCESS && p->recv.buf && p->recv.blocks) {
                rc = ops->h2d(ctx, s, p->recv.buf + off, p->recv.stride, hr, len, len,
                              p->recv.blocks);
                issued_h2d[s] = 1;
            }
        }
    }
    /* whatever happened, nothing may still be copying when we return */
    for (int s = 0; s < HC_GPU_SLOTS; s++) {
        if (issued_d2h[s]) {
            int r = ops->wait_d2h(ctx, s);
            if (rc == HCCL_SUCCESS)
                rc = r;
        }
        if (issued_h2d[s]) {
            int r = ops->wait_h2d(ctx, s);
            if (rc == HCCL_SUCCESS)
                rc = r;
        }
    }
    return rc;
}
