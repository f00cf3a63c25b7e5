/*
 * src/gpu_pipe.h - the chunk pipeline that stages device buffers through
 * host memory for a host collective (src/gpu_coll.c drives it with CUDA
 * copies; the unit tests drive it with memcpy).
 *
 * A collective's buffer on one side (send or receive) is `blocks` blocks of
 * `block` bytes, `stride` bytes apart (AllReduce: one block; AllGather's
 * receive side: nranks blocks of sendCount elements; AlltoAll: nranks on
 * both sides). A chunk is the same byte range [off, off + len) of every
 * block; in staging it is packed: block b of the chunk at b * len. Chunk k
 * uses staging slot k % HC_GPU_SLOTS, so that while the host collective
 * runs on chunk k, chunk k + 1 is being copied to the host and chunk k - 1
 * back to the device:
 *
 *   step i:  issue D2H(chunk i)           (slot i % 3, after its previous
 *                                          H2D, chunk i - 3, has finished)
 *            wait D2H(chunk i - 1); run the host collective on it;
 *            issue H2D(chunk i - 1)
 *   end:     wait every H2D
 *
 * The copy engine is a table of functions so that the ordering can be
 * tested without a GPU: copies are asynchronous, per slot, and a copy is
 * only known to be done after the matching wait.
 */
#ifndef HC_GPU_PIPE_H_
#define HC_GPU_PIPE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HC_GPU_SLOTS 3

/* Staging bytes per slot (send and receive areas together). 8 MiB: large
 * enough that a chunk's host collective is bandwidth-bound, small enough
 * that a 1 GiB AllReduce is about 256 chunks deep and the pipeline fills
 * within a few percent of the total. A first guess, to be measured on a
 * GPU (tools/gpu-check.sh). */
#define HC_GPU_SLOT_BYTES ((size_t)8 << 20)

/* Asynchronous copies of `height` rows of `width` bytes (row r from
 * src + r * spitch to dst + r * dpitch), attached to a slot. */
typedef struct hc_gpu_copy_ops {
    int (*d2h)(void *ctx, int slot, void *dst, size_t dpitch, const void *src, size_t spitch,
               size_t width, size_t height);
    int (*h2d)(void *ctx, int slot, void *dst, size_t dpitch, const void *src, size_t spitch,
               size_t width, size_t height);
    /* wait until every d2h (h2d) issued on slot so far is done */
    int (*wait_d2h)(void *ctx, int slot);
    int (*wait_h2d)(void *ctx, int slot);
} hc_gpu_copy_ops_t;

/* One side of a collective as the user passed it. blocks == 0 or buf ==
 * NULL: this rank has nothing on that side (Reduce's receive side off the
 * root). */
typedef struct hc_gpu_side {
    char *buf;
    uint32_t blocks;
    size_t stride; /* bytes from one block to the next */
} hc_gpu_side_t;

typedef struct hc_gpu_plan {
    size_t block;        /* bytes per block */
    size_t chunk;        /* bytes per block per chunk (a multiple of the element size) */
    hc_gpu_side_t send, recv;
    int same_area;       /* the host collective works in place on one area (Broadcast) */
} hc_gpu_plan_t;

/* The host collective on one chunk: hsend / hrecv are the packed staging
 * areas (NULL where the side is absent), off / len the chunk's byte range
 * in each block. Returns an HcclResult. */
typedef int (*hc_gpu_run_fn)(void *arg, void *hsend, void *hrecv, size_t off, size_t len);

/* Chunk size in bytes per block: the largest multiple of esize such that a
 * slot holds `nblocks` blocks of it within slot_bytes, at least esize, at
 * most `block`. nblocks is the collective's send + receive blocks as every
 * rank counts them (not this rank's: the chunking must be the same on
 * every rank). */
size_t hc_gpu_chunk_bytes(size_t block, size_t esize, uint32_t nblocks, size_t slot_bytes);

/* Staging bytes one slot needs for the plan. */
size_t hc_gpu_slot_need(const hc_gpu_plan_t *p);

/* Run the pipeline. stage[s] is slot s's staging (hc_gpu_slot_need bytes:
 * the send area, then the receive area). On an error the remaining chunks
 * are not run, copies already issued are waited for, and the first error
 * is returned. */
int hc_gpu_pipeline(const hc_gpu_plan_t *p, const hc_gpu_copy_ops_t *ops, void *ctx,
                    char *const stage[HC_GPU_SLOTS], hc_gpu_run_fn run, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* HC_GPU_PIPE_H_ */
