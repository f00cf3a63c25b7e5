/*
 * coll/algos.h - the schedule builders behind the algorithm tables
 * (coll/algos.c), and the small helpers they share. Internal to coll/ and
 * to whoever drives the tables (src/tune.c, the tests, the simulator).
 *
 * Every builder has the hc_build_fn signature: it appends to an empty
 * schedule (hc_sched_init / hc_sched_reset) the steps of args->rank and
 * returns HCCL_SUCCESS, s->err after an allocation failure, or HCCL_E_PARA
 * for arguments it cannot serve (a ring that does not contain the rank).
 * count == 0 (ALLTOALLV: all counts 0) gives an empty schedule.
 */
#ifndef HC_COLL_ALGOS_H_
#define HC_COLL_ALGOS_H_

#include "coll.h"

/* Table indices (hc_algo_t.id). The first entry of a table is its default
 * until src/tune.c selects by size and topology. */
enum { HC_ALLREDUCE_RING, HC_ALLREDUCE_RD, HC_ALLREDUCE_HIER, HC_ALLREDUCE_DIRECT,
       HC_ALLREDUCE_DBTREE, HC_ALLREDUCE_TORUS2D, HC_ALLREDUCE_HD, HC_ALLREDUCE_CMA,
       HC_ALLREDUCE_LAST };
enum { HC_BCAST_BINOMIAL, HC_BCAST_HIER, HC_BCAST_PIPELINE, HC_BCAST_SCATTER_ALLGATHER,
       HC_BCAST_DIRECT, HC_BCAST_CMA, HC_BCAST_LAST };
enum { HC_REDUCE_BINOMIAL, HC_REDUCE_RS_GATHER, HC_REDUCE_LAST };
enum { HC_REDUCESCATTER_RING, HC_REDUCESCATTER_HIER, HC_REDUCESCATTER_HD,
       HC_REDUCESCATTER_DIRECT, HC_REDUCESCATTER_CMA, HC_REDUCESCATTER_LAST };
enum { HC_ALLGATHER_RING, HC_ALLGATHER_HIER, HC_ALLGATHER_RD, HC_ALLGATHER_BRUCK,
       HC_ALLGATHER_DIRECT, HC_ALLGATHER_CMA, HC_ALLGATHER_LAST };
enum { HC_SCATTER_BINOMIAL, HC_SCATTER_LAST };
enum { HC_ALLTOALL_PAIRWISE, HC_ALLTOALL_BRUCK, HC_ALLTOALL_DIRECT, HC_ALLTOALL_CMA,
       HC_ALLTOALL_LAST };
enum { HC_ALLTOALLV_PAIRWISE, HC_ALLTOALLV_BRUCK, HC_ALLTOALLV_LAST };
enum { HC_BARRIER_DISSEMINATION, HC_BARRIER_LAST };

int hc_allreduce_ring_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_allreduce_rd_build(const hc_coll_args_t *args, hc_sched_t *s);
/* shared staging (coll/shm_util.h) */
int hc_allreduce_direct_build(const hc_coll_args_t *args, hc_sched_t *s);
const char *hc_allreduce_direct_usable(const hc_coll_args_t *args);
int hc_bcast_direct_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_allgather_direct_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_reducescatter_direct_build(const hc_coll_args_t *args, hc_sched_t *s);
const char *hc_reducescatter_direct_usable(const hc_coll_args_t *args);
int hc_alltoall_direct_build(const hc_coll_args_t *args, hc_sched_t *s);
const char *hc_alltoall_direct_usable(const hc_coll_args_t *args);
/* single-copy reads out of the peers' buffers (coll/cma.c) */
int hc_allreduce_cma_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_reducescatter_cma_build(const hc_coll_args_t *args, hc_sched_t *s);
const char *hc_allreduce_cma_usable(const hc_coll_args_t *args);
int hc_allgather_cma_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_alltoall_cma_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_bcast_cma_build(const hc_coll_args_t *args, hc_sched_t *s);
const char *hc_cma_usable(const hc_coll_args_t *args);
int hc_bcast_binomial_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_reduce_binomial_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_reducescatter_ring_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_allgather_ring_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_scatter_binomial_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_alltoall_pairwise_build(const hc_coll_args_t *args, hc_sched_t *s); /* and V */
int hc_barrier_dissemination_build(const hc_coll_args_t *args, hc_sched_t *s);
/* hierarchical (coll/hier.h); usable: hc_hier_usable */
int hc_allreduce_hier_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_reducescatter_hier_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_allgather_hier_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_bcast_hier_build(const hc_coll_args_t *args, hc_sched_t *s);
const char *hc_hier_usable(const hc_coll_args_t *args);
/* trees, halving-doubling, 2-D, Bruck, pipelines (coll/prims.h) */
int hc_allreduce_dbtree_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_allreduce_torus2d_build(const hc_coll_args_t *args, hc_sched_t *s);
const char *hc_allreduce_torus2d_usable(const hc_coll_args_t *args);
int hc_allreduce_hd_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_bcast_pipeline_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_bcast_scatter_allgather_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_reduce_rs_gather_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_reducescatter_hd_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_allgather_rd_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_allgather_bruck_build(const hc_coll_args_t *args, hc_sched_t *s);
int hc_alltoall_bruck_build(const hc_coll_args_t *args, hc_sched_t *s);
const char *hc_alltoall_bruck_usable(const hc_coll_args_t *args);

/* ---- rings ----------------------------------------------------------- */

/* Ring pipelining defaults, used when args->chunk_bytes is 0 (the tuner
 * passes HCCL_RING_CHUNK_SIZE otherwise): a block up to 1 MB travels whole,
 * a larger one in 512 KB chunks (NCCL's and HCCL's usual order of magnitude;
 * to be replaced by measured values in the tuning data). */
#define HC_RING_WHOLE_MAX (1u << 20)
#define HC_RING_CHUNK_DEFAULT (512u << 10)
/* At most this many chunks per block, so that a schedule stays a few
 * thousand steps per ring step; beyond it chunks grow instead. */
#define HC_RING_MAX_CHUNKS 1024u
/* TMP receive slots of a ring: double buffering, so that chunk k+1 lands
 * while chunk k is reduced. A slot is reused once the reduce reading it ran. */
#define HC_RING_SLOTS 2u

/* The ring of the ring algorithms: the topology's, or NULL (rank order:
 * none, or HCCL_TOPO_RING_ORDER=0). */
static inline const uint32_t *hc_ring_of(const hc_coll_args_t *a)
{
    if (a->topo == NULL || (a->topo->flags & HC_TOPO_F_RANK_RING))
        return NULL;
    return a->topo->ring;
}

/* Rank at ring position pos. */
static inline uint32_t hc_ring_rank(const hc_coll_args_t *a, uint32_t pos)
{
    const uint32_t *ring = hc_ring_of(a);
    return ring ? ring[pos] : pos;
}

/* Ring position of args->rank, or -1 if the ring lacks it. */
static inline int64_t hc_ring_pos(const hc_coll_args_t *a)
{
    const uint32_t *ring = hc_ring_of(a);
    if (ring == NULL)
        return a->rank < a->nranks ? (int64_t)a->rank : -1;
    for (uint32_t i = 0; i < a->nranks; i++)
        if (ring[i] == a->rank)
            return i;
    return -1;
}

/*
 * Chunks per block for a ring whose largest block has blk elements and
 * whose links each carry nsteps ring steps (tag = step * chunks + chunk):
 * enough that the nearly equal pieces (hc_block_start(len, chunks, k)) are
 * at most args->chunk_bytes. Every rank computes the same value. Capped so
 * that tags stay below 2^20 (nsteps * chunks <= 2^20: 512 chunks at 1024
 * ranks) and at HC_RING_MAX_CHUNKS; past the caps the chunks get larger
 * than requested.
 */
static inline uint64_t hc_ring_nchunks(const hc_coll_args_t *a, uint64_t blk, uint64_t nsteps)
{
    uint64_t cb = a->chunk_bytes;
    if (blk == 0 || a->esize == 0)
        return 1;
    if (cb == 0)
        cb = blk * a->esize <= HC_RING_WHOLE_MAX ? blk * a->esize : HC_RING_CHUNK_DEFAULT;
    uint64_t ce = cb / a->esize ? cb / a->esize : 1;
    uint64_t c = (blk + ce - 1) / ce;
    uint64_t cap = nsteps ? ((uint64_t)HC_TAG_MAX + 1) / nsteps : HC_RING_MAX_CHUNKS;
    if (cap > HC_RING_MAX_CHUNKS)
        cap = HC_RING_MAX_CHUNKS;
    if (c > cap)
        c = cap;
    return c ? c : 1;
}

/* ---- placeholders ------------------------------------------------------
 * Builders with a regular layout (a fixed number of steps per ring step and
 * chunk, so that dependencies are index arithmetic, with no bookkeeping
 * arrays) put a NOP where a zero-length transfer or reduce would be; the
 * NOP keeps the dependencies, and both sides of a link skip the same ones
 * because they compute the same lengths. */
static inline int32_t hc_sched_nop_list(hc_sched_t *s, const int32_t *deps)
{
    uint32_t n = 0;
    while (deps[n] != INT32_MIN)
        n++;
    return hc_sched_nop(s, deps, n);
}
static inline int32_t hc_sched_send_or_nop(hc_sched_t *s, uint32_t peer, uint32_t tag,
                                           hc_loc_t src, uint64_t bytes, const int32_t *deps)
{
    return bytes ? hc_sched_send(s, peer, tag, src, bytes, deps) : hc_sched_nop_list(s, deps);
}
static inline int32_t hc_sched_recv_or_nop(hc_sched_t *s, uint32_t peer, uint32_t tag,
                                           hc_loc_t dst, uint64_t bytes, const int32_t *deps)
{
    return bytes ? hc_sched_recv(s, peer, tag, dst, bytes, deps) : hc_sched_nop_list(s, deps);
}
static inline int32_t hc_sched_reduce_or_nop(hc_sched_t *s, hc_loc_t dst, hc_loc_t a,
                                             hc_loc_t b, uint64_t bytes, const int32_t *deps)
{
    return bytes ? hc_sched_reduce(s, dst, a, b, bytes, deps) : hc_sched_nop_list(s, deps);
}

/* ---- trees ----------------------------------------------------------- */

/* Lowest set bit of v (v > 0). */
static inline uint32_t hc_lowbit(uint32_t v)
{
    return v & (~v + 1u);
}

/* Smallest power of two >= n, and its log2. */
static inline uint32_t hc_ceil_log2(uint32_t n)
{
    uint32_t l = 0;
    while (l < 32 && (1ull << l) < n)
        l++;
    return l;
}

#endif /* HC_COLL_ALGOS_H_ */
