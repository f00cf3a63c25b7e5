/*
 * coll/allreduce_torus2d.c - AllReduce TORUS2D (2D-TORUS): the ranks as an
 * R x C grid; a ring reduce-scatter along each row, a ring allreduce along
 * each column on the row-block that rank owns, and a ring allgather along
 * each row.
 *
 * Grid: the topology's (view->grid: one row per node when there are several,
 * else per fast group, all of grid_cols ranks), so that the row stages stay
 * inside a node and only 1/C of the data crosses nodes, in R-1 + R-1 steps.
 * Without one, the most square factorisation R x C of n (R <= C, rows of
 * consecutive ranks); a prime n has none (usable() says so, and the tuner
 * falls back).
 *
 * Cost for N bytes: 2(C-1)(alpha + (N/C) beta) + 2(R-1)(alpha + (N/n) beta)
 * + ((n-1)/n) N gamma: the volume of RING, 2(n-1)/n N, in 2(R+C-2) steps
 * instead of 2(n-1).
 *
 * The stages are coll/prims.c rings over a subset (hc_gring_*), each one
 * chunk-pipelined (hc_ring_nchunks, HCCL_RING_CHUNK_SIZE) with its own
 * quarter of the tag space; a stage starts when the previous one is done
 * on this rank (a join: the stages touch the same RECV blocks and TMP
 * slots). The row reduce-scatter reads SEND (in place it is RECV) and leaves
 * the reduced row-block `col` in RECV; the column stages work on that block
 * in RECV; the row allgather fills the rest of RECV.
 *
 * Not in the canonical order of deterministic mode: src/comm/tune.c routes it
 * to RD or HD there.
 */
#include "prims.h"

#include <stdlib.h>

/* R x C: the topology's grid, else the factorisation with R <= C and R
 * largest. 0 if there is none (n prime or 1). */
static int grid_shape(const hc_coll_args_t *a, uint32_t *R, uint32_t *C, const uint32_t **grid)
{
    const hc_topo_view_t *v = a->topo;
    const uint32_t n = a->nranks;
    if (v && v->grid && v->grid_rows > 1 && v->grid_cols > 1 &&
        (uint64_t)v->grid_rows * v->grid_cols == n) {
        *R = v->grid_rows;
        *C = v->grid_cols;
        *grid = v->grid;
        return 1;
    }
    *grid = NULL;
    uint32_t best = 1;
    for (uint32_t d = 2; (uint64_t)d * d <= n; d++)
        if (n % d == 0)
            best = d;
    if (best == 1)
        return 0;
    *R = best;
    *C = n / best;
    return 1;
}

const char *hc_allreduce_torus2d_usable(const hc_coll_args_t *a)
{
    uint32_t R, C;
    const uint32_t *grid;
    if (a->nranks < 4)
        return "fewer than 4 ranks: no 2-D grid";
    if (!grid_shape(a, &R, &C, &grid))
        return "the rank count is prime and the topology gives no grid of equal groups";
    return NULL;
}

int hc_allreduce_torus2d_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks, r = a->rank;
    const uint64_t es = a->esize, count = a->count;
    enum { Q = 1u << 18 }; /* tags per stage */

    s->algo = "allreduce:TORUS2D";
    s->esize = es;
    uint32_t R, C;
    const uint32_t *grid;
    if (hc_allreduce_torus2d_usable(a) != NULL || !grid_shape(a, &R, &C, &grid))
        return HCCL_E_PARA;
    if (count == 0)
        return HCCL_SUCCESS;
    uint32_t at = n;
    for (uint32_t i = 0; i < n; i++)
        if ((grid ? grid[i] : i) == r) {
            at = i;
            break;
        }
    if (at == n)
        return HCCL_E_PARA;
    const uint32_t row = at / C, col = at % C;
    const hc_gring_t rows_rs = {.grid = grid, .first = row * C, .stride = 1, .m = C, .pos = col,
                                .base = 0, .count = count, .src = HC_BUF_SEND,
                                .tag0 = 0, .tags = Q};
    hc_gring_t cols = {.grid = grid, .first = col, .stride = C, .m = R, .pos = row,
                       .base = hc_block_start(count, C, col),
                       .count = hc_block_len(count, C, col), .src = HC_BUF_RECV,
                       .tag0 = Q, .tags = Q};
    hc_gring_t rows_ag = rows_rs;
    rows_ag.tag0 = 3 * Q;

    int32_t j = hc_gring_reduce_scatter(s, a, &rows_rs, -1);
    j = hc_gring_reduce_scatter(s, a, &cols, j);
    cols.tag0 = 2 * Q;
    j = hc_gring_allgather(s, a, &cols, j);
    hc_gring_allgather(s, a, &rows_ag, j);
    return s->err;
}
