/*
 * coll/prims.h - building blocks shared by the tree, halving-doubling and
 * 2-D algorithm files: the power-of-two core with its fix-up, the canonical
 * reduction order of deterministic mode, NCCL's binary trees, pipeline chunk
 * sizing, recursive halving, rings over a subset of the ranks, and phase
 * joins. Internal to coll/.
 *
 * The canonical reduction order (deterministic mode, HC_ALGO_F_DET).
 * With p2 the largest power of two <= n and rem = n - p2, ranks 2k and 2k+1
 * (k < rem) fold into virtual rank k as (x_2k op x_2k+1), and rank r >= 2rem
 * is virtual rank r - rem. Over the p2 virtual ranks, E(v mod 2m) denotes the
 * result over the group {v' : v' = v (mod 2m)}; then
 *     E(a mod m) = E(a mod 2m) op E(a+m mod 2m)      (0 <= a < m)
 * for m = p2/2, p2/4, ..., 1, and the result is E(0 mod 1): recursive
 * doubling with the partner at distance p2/2 first, the lower virtual rank's
 * operand on the left. The expression depends on n only, not on the count,
 * the element's position, the chunking or the root, so RD, HD (recursive
 * halving keeps each element's expression), the ReduceScatter HD, and the
 * Reduce BINOMIAL and RS_GATHER trees all produce the same bits, and so do
 * fused and unfused calls.
 */
#ifndef HC_COLL_PRIMS_H_
#define HC_COLL_PRIMS_H_

#include "algos.h"

/* ---- the power-of-two core ------------------------------------------- */

static inline uint32_t hc_pow2_floor(uint32_t n)
{
    uint32_t p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}

/* Virtual rank of rank r (rem = n - p2), or -1 for the even ranks 2k, k < rem,
 * whose data the fix-up folds into their odd neighbour. */
static inline int64_t hc_core_vrank(uint32_t r, uint32_t rem)
{
    if (r < 2 * rem)
        return r % 2 ? (int64_t)(r / 2) : -1;
    return (int64_t)r - rem;
}
/* The rank that holds virtual rank v. */
static inline uint32_t hc_core_rank(uint32_t v, uint32_t rem)
{
    return v < rem ? 2 * v + 1 : v + rem;
}
/* The first rank folded into virtual rank v (v <= p2; v = p2 gives n). */
static inline uint32_t hc_core_first(uint32_t v, uint32_t rem)
{
    return v < rem ? 2 * v : v + rem;
}

/*
 * dst = the canonical-order reduction of n operands, src[q] being rank q's
 * (any locations, e.g. peers' shared staging), as a chain of REDUCE steps:
 * for an algorithm that reads every rank's data itself (DIRECT) and wants to
 * keep deterministic mode's order. The first steps depend on deps; scratch
 * holds hc_canon_fold_slots(n) slots of `bytes` (TMP or own staging).
 * n - 1 reduces (a COPY for n = 1); returns the last step.
 */
static inline uint32_t hc_canon_fold_slots(uint32_t n)
{
    return hc_ceil_log2(n) + 1;
}
int32_t hc_sched_canon_fold(hc_sched_t *s, hc_loc_t dst, const hc_loc_t *src, uint32_t n,
                            uint64_t bytes, hc_loc_t scratch, const int32_t *deps);

/* ---- NCCL's binary trees ----------------------------------------------- */

/* The in-order binary tree over 0..m-1 rooted at 0 (which has one child,
 * the largest power of two below m); node i != 0 with lowest set bit b has
 * children i - b/2 and i + b/2 (or the next smaller in range), so the odd
 * nodes are the leaves. -1 where there is none. */
void hc_btree(uint32_t m, uint32_t i, int64_t *parent, int64_t *c0, int64_t *c1);
/* Its complement: the mirror image (m even: i -> m-1-i) or the tree shifted
 * by one (m odd), so that every node but one is a leaf in one of the two. */
void hc_btree2(uint32_t m, uint32_t i, int64_t *parent, int64_t *c0, int64_t *c1);
/* Root of hc_btree2(m). */
static inline uint32_t hc_btree2_root(uint32_t m)
{
    return m % 2 ? 1 % m : m - 1;
}
/* Depth of hc_btree(m) (edges on the longest root-leaf path). */
uint32_t hc_btree_depth(uint32_t m);

/* ---- pipeline chunks ------------------------------------------------- */

/*
 * Chunks for pipelining `bytes` through a pipeline `depth` hops deep.
 * K chunks of c bytes cost about (K + depth - 1)(alpha + c beta), least at
 * c = sqrt(bytes * (alpha/beta) / depth). HC_PIPE_AB is alpha/beta in bytes:
 * about 3 us per message over 10 GB/s (PERF.md: UCX shared-memory latency
 * plus a rendezvous round trip; 11-14 GB/s tag bandwidth). cap: the largest
 * chunk (args->chunk_bytes, i.e. HCCL_BCAST_CHUNK_SIZE or a tuning-file
 * value; 0 = HC_PIPE_CHUNK_MAX); a cap below HC_PIPE_CHUNK_MIN is obeyed
 * exactly (tests use tiny chunks). At most maxchunks chunks; at least 1.
 */
#define HC_PIPE_AB (32u << 10)
#define HC_PIPE_CHUNK_MIN (16u << 10)
#define HC_PIPE_CHUNK_MAX (1u << 20)
uint64_t hc_pipe_nchunks(uint64_t bytes, size_t esize, uint32_t depth, uint64_t cap,
                         uint64_t maxchunks);

/* ---- phases ------------------------------------------------------------ */

/* A NOP that completes when every step from index `from` on has: the end of
 * a phase. Returns `prev` when there is no such step. */
int32_t hc_sched_join(hc_sched_t *s, uint32_t from, int32_t prev);
/* Append step index x to a dependency list being built (INT32_MIN-terminated,
 * capacity cap including the terminator); negatives are dropped. */
void hc_deps_add(int32_t *deps, uint32_t cap, int32_t x);

/* ---- recursive halving (HD, RS_GATHER, ReduceScatter HD) ---------------- */

typedef struct hc_rh {
    /* in */
    const uint64_t *voff; /* p2 + 1 element offsets: virtual v ends with
                           * the reduction of elements [voff[v], voff[v+1]) */
    hc_buf_t acc;         /* where the partial results accumulate (RECV or TMP) */
    uint64_t acc_off;     /* byte offset of element 0 in acc */
    uint64_t rcv_off;     /* TMP byte offset of the receive area (voff[p2] elements) */
    uint32_t tag0;        /* tags tag0 (fix-up), then below tag0 + HC_RH_TAGS */
    /* out */
    uint32_t p2, rem;
    int64_t v;            /* virtual rank, -1 for a rank that sat out */
    int in_acc;           /* my block is in acc (0: nothing reduced, still in SEND) */
    int32_t last;         /* completes after every step that wrote acc, or -1 */
    int32_t fix_send;     /* sat out: the send of SEND to the neighbour */
    int32_t sent[32];     /* round i (mask p2 >> (i+1)): completes after its sends, or -1 */
} hc_rh_t;

/* Chunking of the halving rounds: a round's exchange goes in pieces of at
 * most args->chunk_bytes (0: HC_RH_CHUNK), at most HC_RH_MAX_CHUNKS, so
 * that the reduce of one piece overlaps the transfer of the next; pieces
 * alternate between two receive slots. Tags: tag0 + 1 + round *
 * HC_RH_MAX_CHUNKS + piece, all below tag0 + HC_RH_TAGS. */
#define HC_RH_CHUNK (512u << 10)
#define HC_RH_MAX_CHUNKS 1024u
#define HC_RH_TAGS (1u + 32u * HC_RH_MAX_CHUNKS)

/*
 * The reduce-scatter half of Rabenseifner's algorithm, in the canonical
 * order: the fix-up (rank 2k sends all of SEND to 2k+1, which folds it in
 * as x_2k op x_2k+1), then rounds with masks p2/2 .. 1 in which virtual v
 * keeps the half of its range holding voff-block v, sends the other half to
 * v ^ mask and folds the partner's part into acc, the lower virtual rank's
 * operand on the left, piece by piece (HC_RH_CHUNK). A round starts once
 * the previous one has folded everything. Needs TMP up to
 * rcv_off + voff[p2] * esize (and the acc area when acc is TMP). n >= 2.
 */
int hc_rh_reduce_scatter(hc_sched_t *s, const hc_coll_args_t *a, hc_rh_t *h);

/* ---- rings over a subset of the ranks (TORUS2D) ----------------------- */

typedef struct hc_gring {
    const uint32_t *grid; /* ring position p is rank grid[first + stride * p] */
    uint32_t first, stride; /* (grid NULL: rank first + stride * p) */
    uint32_t m, pos;      /* members, my position */
    uint64_t base, count; /* the region (elements), cut into m blocks (hc_block_start) */
    hc_buf_t src;         /* reduce-scatter: where my own contribution lies (SEND, RECV) */
    uint32_t tag0, tags;  /* the tags it may use: [tag0, tag0 + tags) */
} hc_gring_t;

static inline uint32_t hc_gring_rank(const hc_gring_t *g, uint32_t pos)
{
    const uint32_t i = g->first + g->stride * pos;
    return g->grid ? g->grid[i] : i;
}

/*
 * Ring reduce-scatter of the region among the members: afterwards RECV holds
 * at block `pos` that block reduced over the members (in ring order starting
 * after its owner). Partial results travel through RECV at their block's
 * place (so src may be RECV or an in-place SEND). Every first step depends
 * on `entry`; returns a join of all its steps (or entry).
 */
int32_t hc_gring_reduce_scatter(hc_sched_t *s, const hc_coll_args_t *a, const hc_gring_t *g,
                                int32_t entry);
/* Ring allgather of the region's blocks in RECV (block pos is ours). */
int32_t hc_gring_allgather(hc_sched_t *s, const hc_coll_args_t *a, const hc_gring_t *g,
                           int32_t entry);

#endif /* HC_COLL_PRIMS_H_ */
