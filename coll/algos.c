/*
 * coll/algos.c - the algorithm tables: one per collective, one row per
 * algorithm, mapping the names users type (HCCL_*_ALGO, the tuning file) to
 * a schedule builder. Adding an algorithm = one file in coll/, one row here
 * and one enum entry in algos.h. The first row of a table is the default
 * until src/comm/tune.c selects by size and topology.
 */
#include "algos.h"

#include <strings.h>

static const hc_algo_t allreduce_algos[HC_ALLREDUCE_LAST] = {
    {.id = HC_ALLREDUCE_RING, .name = "RING", .alias = NULL,
     .desc = "reduce-scatter + allgather around a ring, chunk-pipelined; large messages",
     .build = hc_allreduce_ring_build, .usable = NULL,
     .flags = HC_ALGO_F_RING_ORDER | HC_ALGO_F_RING_CHUNK},
    {.id = HC_ALLREDUCE_RD, .name = "RD", .alias = NULL,
     .desc = "recursive doubling on the whole vector (fix-up for non-powers of two); "
             "small messages",
     .build = hc_allreduce_rd_build, .usable = NULL, .flags = HC_ALGO_F_DET},
    {.id = HC_ALLREDUCE_HIER, .name = "HIER", .alias = NULL,
     .desc = "hierarchical: reduce-scatter inside each node (or fast group), per-slice "
             "rings across them, allgather back; chunk-pipelined across the stages",
     .build = hc_allreduce_hier_build, .usable = hc_hier_usable},
    {.id = HC_ALLREDUCE_DIRECT, .name = "DIRECT", .alias = NULL,
     .desc = "one host: reduce straight out of the peers' shared staging, chunk-pipelined "
             "(coll/allreduce_direct.c); needs shared memory",
     .build = hc_allreduce_direct_build, .usable = hc_allreduce_direct_usable},
    {.id = HC_ALLREDUCE_DBTREE, .name = "DBTREE", .alias = "DOUBLE_BINARY_TREE",
     .desc = "two complementary binary trees, each reducing and broadcasting half the "
             "vector, chunk-pipelined; small and medium messages",
     .build = hc_allreduce_dbtree_build, .usable = NULL},
    {.id = HC_ALLREDUCE_TORUS2D, .name = "TORUS2D", .alias = "2D-TORUS",
     .desc = "rows x cols grid (topology groups, else a factorisation of n): reduce-scatter "
             "along rows, allreduce along columns, allgather along rows",
     .build = hc_allreduce_torus2d_build, .usable = hc_allreduce_torus2d_usable,
     .flags = HC_ALGO_F_RING_CHUNK},
    {.id = HC_ALLREDUCE_HD, .name = "HD", .alias = "H-D_R",
     .desc = "Rabenseifner: recursive-halving reduce-scatter + recursive-doubling "
             "allgather (fix-up for non-powers of two)",
     .build = hc_allreduce_hd_build, .usable = NULL, .flags = HC_ALGO_F_DET},
    {.id = HC_ALLREDUCE_CMA, .name = "CMA", .alias = NULL,
     .desc = "one host, 2 ranks: each rank reduces half, reading the peer's half with "
             "process_vm_readv and writing the result into the peer (coll/cma.c)",
     .build = hc_allreduce_cma_build, .usable = hc_allreduce_cma_usable},
};

static const hc_algo_t bcast_algos[HC_BCAST_LAST] = {
    {.id = HC_BCAST_BINOMIAL, .name = "BINOMIAL", .alias = NULL,
     .desc = "binomial tree from the root", .build = hc_bcast_binomial_build,
     .usable = NULL},
    {.id = HC_BCAST_HIER, .name = "HIER", .alias = NULL,
     .desc = "tree along the levels: racks, nodes, fast groups, ranks; chunk-pipelined",
     .build = hc_bcast_hier_build, .usable = hc_hier_usable},
    {.id = HC_BCAST_PIPELINE, .name = "PIPELINE", .alias = NULL,
     .desc = "chunks down two complementary binary trees (HCCL_BCAST_CHUNK_SIZE, adapted); "
             "large messages",
     .build = hc_bcast_pipeline_build, .usable = NULL},
    {.id = HC_BCAST_SCATTER_ALLGATHER, .name = "SCATTER_ALLGATHER", .alias = NULL,
     .desc = "van de Geijn: binomial scatter of n blocks, then a ring allgather",
     .build = hc_bcast_scatter_allgather_build, .usable = NULL,
     .flags = HC_ALGO_F_RING_CHUNK},
    {.id = HC_BCAST_DIRECT, .name = "DIRECT", .alias = NULL,
     .desc = "one host: the root stages chunks in shared memory, the others copy them out "
             "(coll/bcast_direct.c); needs shared memory",
     .build = hc_bcast_direct_build, .usable = hc_allreduce_direct_usable},
    {.id = HC_BCAST_CMA, .name = "CMA", .alias = NULL,
     .desc = "one host: every rank reads the root's buffer straight out of its process "
             "(process_vm_readv, one copy; coll/cma.c); needs shared memory and CMA",
     .build = hc_bcast_cma_build, .usable = hc_cma_usable},
};

static const hc_algo_t reduce_algos[HC_REDUCE_LAST] = {
    {.id = HC_REDUCE_BINOMIAL, .name = "BINOMIAL", .alias = NULL,
     .desc = "binomial tree to the root in the canonical (deterministic) order",
     .build = hc_reduce_binomial_build, .usable = NULL, .flags = HC_ALGO_F_DET},
    {.id = HC_REDUCE_RS_GATHER, .name = "RS_GATHER", .alias = NULL,
     .desc = "recursive-halving reduce-scatter, then the blocks straight to the root; "
             "large messages",
     .build = hc_reduce_rs_gather_build, .usable = NULL, .flags = HC_ALGO_F_DET},
};

/* ReduceScatter's V form (blocks of different sizes, coll.h) runs on RING
 * only: the others refuse it, and the tuner falls back to RING (with a
 * warning when one of them is forced). */
static const char *rs_uneven(const hc_coll_args_t *a)
{
    return hc_args_v(a) ? "needs equal blocks (ReduceScatter, not ReduceScatterV)" : NULL;
}
static const char *rs_hier_usable(const hc_coll_args_t *a)
{
    const char *w = rs_uneven(a);
    return w ? w : hc_hier_usable(a);
}
static const char *rs_direct_usable(const hc_coll_args_t *a)
{
    const char *w = rs_uneven(a);
    return w ? w : hc_reducescatter_direct_usable(a);
}
static const char *rs_cma_usable(const hc_coll_args_t *a)
{
    const char *w = rs_uneven(a);
    return w ? w : hc_allreduce_cma_usable(a);
}

static const hc_algo_t reducescatter_algos[HC_REDUCESCATTER_LAST] = {
    {.id = HC_REDUCESCATTER_RING, .name = "RING", .alias = NULL,
     .desc = "ring reduce-scatter, chunk-pipelined; blocks of any sizes",
     .build = hc_reducescatter_ring_build, .usable = NULL, .flags = HC_ALGO_F_RING_ORDER | HC_ALGO_F_RING_CHUNK},
    {.id = HC_REDUCESCATTER_HIER, .name = "HIER", .alias = NULL,
     .desc = "reduce-scatter inside each node (or fast group), then per-slice rings across",
     .build = hc_reducescatter_hier_build, .usable = rs_hier_usable},
    {.id = HC_REDUCESCATTER_HD, .name = "HD", .alias = "H-D_R",
     .desc = "recursive halving (fix-up for non-powers of two); log2 steps",
     .build = hc_reducescatter_hd_build, .usable = rs_uneven, .flags = HC_ALGO_F_DET},
    {.id = HC_REDUCESCATTER_DIRECT, .name = "DIRECT", .alias = NULL,
     .desc = "one host: each rank folds its block out of every rank's shared staging "
             "(coll/reducescatter_direct.c); needs shared memory",
     .build = hc_reducescatter_direct_build, .usable = rs_direct_usable},
    {.id = HC_REDUCESCATTER_CMA, .name = "CMA", .alias = NULL,
     .desc = "one host, 2 ranks: each rank folds its block with the peer's, read with "
             "process_vm_readv or, registered, with loads (coll/cma.c)",
     .build = hc_reducescatter_cma_build, .usable = rs_cma_usable},
};

static const hc_algo_t allgather_algos[HC_ALLGATHER_LAST] = {
    {.id = HC_ALLGATHER_RING, .name = "RING", .alias = NULL,
     .desc = "ring allgather, chunk-pipelined", .build = hc_allgather_ring_build,
     .usable = NULL, .flags = HC_ALGO_F_RING_ORDER | HC_ALGO_F_RING_CHUNK},
    {.id = HC_ALLGATHER_HIER, .name = "HIER", .alias = NULL,
     .desc = "per-slice rings across nodes (or fast groups), then allgather inside each",
     .build = hc_allgather_hier_build, .usable = hc_hier_usable},
    {.id = HC_ALLGATHER_RD, .name = "RD", .alias = NULL,
     .desc = "recursive doubling (fix-up for non-powers of two); log2 steps",
     .build = hc_allgather_rd_build, .usable = NULL},
    {.id = HC_ALLGATHER_BRUCK, .name = "BRUCK", .alias = NULL,
     .desc = "Bruck's dissemination, ceil(log2 n) steps for any n; small messages",
     .build = hc_allgather_bruck_build, .usable = NULL},
    {.id = HC_ALLGATHER_DIRECT, .name = "DIRECT", .alias = NULL,
     .desc = "one host: each rank stages its block, the others copy it out of shared memory "
             "(coll/allgather_direct.c); needs shared memory",
     .build = hc_allgather_direct_build, .usable = hc_allreduce_direct_usable},
    {.id = HC_ALLGATHER_CMA, .name = "CMA", .alias = NULL,
     .desc = "one host: each rank reads the peers' blocks straight out of their buffers "
             "(process_vm_readv, one copy; coll/cma.c); needs shared memory and CMA",
     .build = hc_allgather_cma_build, .usable = hc_cma_usable},
};

static const hc_algo_t scatter_algos[HC_SCATTER_LAST] = {
    {.id = HC_SCATTER_BINOMIAL, .name = "BINOMIAL", .alias = NULL,
     .desc = "binomial tree from the root, subtrees staged at inner nodes",
     .build = hc_scatter_binomial_build, .usable = NULL},
};

static const hc_algo_t alltoall_algos[HC_ALLTOALL_LAST] = {
    {.id = HC_ALLTOALL_PAIRWISE, .name = "PAIRWISE", .alias = NULL,
     .desc = "n-1 rounds, one peer per round", .build = hc_alltoall_pairwise_build,
     .usable = NULL},
    {.id = HC_ALLTOALL_BRUCK, .name = "BRUCK", .alias = NULL,
     .desc = "Bruck's index algorithm, ceil(log2 n) rounds; small blocks",
     .build = hc_alltoall_bruck_build, .usable = hc_alltoall_bruck_usable},
    {.id = HC_ALLTOALL_DIRECT, .name = "DIRECT", .alias = NULL,
     .desc = "one host: each rank stages the blocks it sends, every peer copies its own out "
             "(coll/alltoall_direct.c); needs shared memory",
     .build = hc_alltoall_direct_build, .usable = hc_alltoall_direct_usable},
    {.id = HC_ALLTOALL_CMA, .name = "CMA", .alias = NULL,
     .desc = "one host: each rank reads its block straight out of every peer's SEND "
             "(process_vm_readv, one copy; coll/cma.c); needs shared memory and CMA",
     .build = hc_alltoall_cma_build, .usable = hc_cma_usable},
};

static const hc_algo_t alltoallv_algos[HC_ALLTOALLV_LAST] = {
    {.id = HC_ALLTOALLV_PAIRWISE, .name = "PAIRWISE", .alias = NULL,
     .desc = "n-1 rounds, one peer per round, empty blocks skipped",
     .build = hc_alltoall_pairwise_build, .usable = NULL},
    /* so that HCCL_ALLTOALL_ALGO=BRUCK falls back here with a reason */
    {.id = HC_ALLTOALLV_BRUCK, .name = "BRUCK", .alias = NULL,
     .desc = "not for AlltoAllV (unequal blocks): falls back to PAIRWISE",
     .build = hc_alltoall_bruck_build, .usable = hc_alltoall_bruck_usable},
};

static const hc_algo_t barrier_algos[HC_BARRIER_LAST] = {
    {.id = HC_BARRIER_DISSEMINATION, .name = "DISSEMINATION", .alias = NULL,
     .desc = "ceil(log2 n) rounds of 0-byte messages", .build = hc_barrier_dissemination_build,
     .usable = NULL},
};

static const struct {
    const char *name;
    const hc_algo_t *algos;
    int n;
} tables[HC_COLL_LAST] = {
    [HC_COLL_ALLREDUCE] = {"allreduce", allreduce_algos, HC_ALLREDUCE_LAST},
    [HC_COLL_BROADCAST] = {"broadcast", bcast_algos, HC_BCAST_LAST},
    [HC_COLL_REDUCE] = {"reduce", reduce_algos, HC_REDUCE_LAST},
    [HC_COLL_REDUCESCATTER] = {"reducescatter", reducescatter_algos, HC_REDUCESCATTER_LAST},
    [HC_COLL_ALLGATHER] = {"allgather", allgather_algos, HC_ALLGATHER_LAST},
    [HC_COLL_SCATTER] = {"scatter", scatter_algos, HC_SCATTER_LAST},
    [HC_COLL_ALLTOALL] = {"alltoall", alltoall_algos, HC_ALLTOALL_LAST},
    [HC_COLL_ALLTOALLV] = {"alltoallv", alltoallv_algos, HC_ALLTOALLV_LAST},
    [HC_COLL_BARRIER] = {"barrier", barrier_algos, HC_BARRIER_LAST},
};

const hc_algo_t *hc_coll_algos(hc_coll_t coll, int *nalgos)
{
    if ((unsigned)coll >= HC_COLL_LAST) {
        if (nalgos)
            *nalgos = 0;
        return NULL;
    }
    if (nalgos)
        *nalgos = tables[coll].n;
    return tables[coll].algos;
}

const hc_algo_t *hc_coll_find_algo(hc_coll_t coll, const char *name)
{
    int n;
    const hc_algo_t *t = hc_coll_algos(coll, &n);
    if (t == NULL || name == NULL)
        return NULL;
    for (int i = 0; i < n; i++)
        if (strcasecmp(t[i].name, name) == 0 ||
            (t[i].alias && strcasecmp(t[i].alias, name) == 0))
            return &t[i];
    return NULL;
}

const char *hc_coll_name(hc_coll_t coll)
{
    return (unsigned)coll < HC_COLL_LAST ? tables[coll].name : "unknown";
}
