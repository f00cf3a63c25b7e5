/*
 * coll/algos.c - the algorithm tables: one per collective, one row per
 * algorithm, mapping the names users type (HCCL_*_ALGO, the tuning file) to
 * a schedule builder. Adding an algorithm = one file in coll/, one row here
 * and one enum entry in algos.h. The first row of a table is the default
 * until src/tune.c selects by size and topology.
 */
#include "algos.h"

#include <strings.h>

static const hc_algo_t allreduce_algos[HC_ALLREDUCE_LAST] = {
    {.id = HC_ALLREDUCE_RING, .name = "RING", .alias = NULL,
     .desc = "reduce-scatter + allgather around a ring, chunk-pipelined; large messages",
     .build = hc_allreduce_ring_build, .usable = NULL},
    {.id = HC_ALLREDUCE_RD, .name = "RD", .alias = NULL,
     .desc = "recursive doubling on the whole vector (fix-up for non-powers of two); "
             "small messages",
     .build = hc_allreduce_rd_build, .usable = NULL},
};

static const hc_algo_t bcast_algos[HC_BCAST_LAST] = {
    {.id = HC_BCAST_BINOMIAL, .name = "BINOMIAL", .alias = NULL,
     .desc = "binomial tree from the root", .build = hc_bcast_binomial_build,
     .usable = NULL},
};

static const hc_algo_t reduce_algos[HC_REDUCE_LAST] = {
    {.id = HC_REDUCE_BINOMIAL, .name = "BINOMIAL", .alias = NULL,
     .desc = "binomial tree to the root, fixed operand order",
     .build = hc_reduce_binomial_build, .usable = NULL},
};

static const hc_algo_t reducescatter_algos[HC_REDUCESCATTER_LAST] = {
    {.id = HC_REDUCESCATTER_RING, .name = "RING", .alias = NULL,
     .desc = "ring reduce-scatter, chunk-pipelined", .build = hc_reducescatter_ring_build,
     .usable = NULL},
};

static const hc_algo_t allgather_algos[HC_ALLGATHER_LAST] = {
    {.id = HC_ALLGATHER_RING, .name = "RING", .alias = NULL,
     .desc = "ring allgather, chunk-pipelined", .build = hc_allgather_ring_build,
     .usable = NULL},
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
};

static const hc_algo_t alltoallv_algos[HC_ALLTOALLV_LAST] = {
    {.id = HC_ALLTOALLV_PAIRWISE, .name = "PAIRWISE", .alias = NULL,
     .desc = "n-1 rounds, one peer per round, empty blocks skipped",
     .build = hc_alltoall_pairwise_build, .usable = NULL},
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
