/*
 * coll/hier.h - what the hierarchical algorithms share (HIER rows of the
 * AllReduce, ReduceScatter, AllGather and Broadcast tables).
 *
 * Units: the view's nodes when there are several, else its fast groups,
 * else one unit holding every rank (a flat view: the algorithms then
 * degenerate into plain rings / a binomial tree, and stay correct). Units
 * are ring segments (coll.h), numbered in ring order, so consecutive units
 * are topologically close (same rack first).
 *
 * The two engines move "rank blocks" (block b belongs to rank b; where it
 * lies is a block map) through two stages:
 *
 *   reduce-scatter:  intra-unit ring reduce-scatter, then an inter-unit
 *                    ring reduce-scatter per slice;
 *   allgather:       inter-unit ring allgather per slice, then an
 *                    intra-unit ring allgather.
 *
 * Slices: with units of sizes S_h (Smax the largest), slice j < Smax is
 * served in unit h by member j mod S_h, and holds the blocks of the ranks
 * with index j in their unit (unit h has one iff j < S_h). Member m of unit
 * g serves slices J = {j : j mod S_g = m} and, inside its unit, owns the
 * list L(m) of the blocks of those slices in every unit, unit by unit in
 * the order unit g's inter-unit rings need them (g-1, g-2, ...: the
 * network starts on the first block made, and every unit's schedule is
 * unit 0's with the units renumbered). Equal units give
 * one slice per member (the usual "per-slice peers"); unequal units give
 * the members of small units several slices. The inter-unit stage is one
 * ring per slice across units, each block crossing a unit boundary once per
 * ring step: every byte that leaves a unit leaves it once.
 *
 * Every block is cut into C chunks (hc_ring_nchunks) and every step
 * depends on the chunks it needs only, so the stages pipeline: the
 * inter-unit transfer of chunk k runs while the intra-unit stage works on
 * chunk k+1, and (AllReduce) the allgather of a chunk starts as soon as the
 * reduce-scatter finished it.
 *
 * Tags (< 2^20): each engine phase spans C * (Smax (G-1) + max_g (S_g - 1)
 * LMAX_g) tags from its base: inter-unit (slice j, step t, chunk k) at
 * (j (G-1) + t) C + k, then intra-unit (step s, list index i, chunk k) at
 * (s LMAX_g + i) C + k, LMAX_g being the longest list of unit g.
 */
#ifndef HC_COLL_HIER_H_
#define HC_COLL_HIER_H_

#include "algos.h"

typedef struct hc_hier {
    uint32_t n, G;          /* ranks, units */
    const uint32_t *ring;   /* NULL: identity */
    const uint32_t *off;    /* G+1 ring positions */
    uint32_t flat_off[2];
    uint32_t me, pos, g, m; /* rank, its ring position, its unit, index in the unit */
    uint32_t smax;
    const char *level;      /* "node", "group" or "flat" */
} hc_hier_t;

/* Units from the view. HCCL_E_PARA if the rank is not in the ring or the
 * view's offsets do not add up. */
int hc_hier_init(const hc_coll_args_t *a, hc_hier_t *h);
/* usable(): NULL, or why the topology gives hierarchy nothing to do. */
const char *hc_hier_usable(const hc_coll_args_t *a);

static inline uint32_t hc_hier_usize(const hc_hier_t *h, uint32_t u)
{
    return h->off[u + 1] - h->off[u];
}
static inline uint32_t hc_hier_member(const hc_hier_t *h, uint32_t u, uint32_t i)
{
    uint32_t p = h->off[u] + i;
    return h->ring ? h->ring[p] : p;
}

/* Where rank block b lies (elements): b*count, count (uniform) or
 * hc_block_start/len(count, n, b) (split). */
typedef struct {
    int split;
    uint64_t count;
    uint32_t n;
} hc_hblocks_t;

static inline uint64_t hc_hblk_off(const hc_hblocks_t *m, uint32_t b)
{
    return m->split ? hc_block_start(m->count, m->n, b) : (uint64_t)b * m->count;
}
static inline uint64_t hc_hblk_len(const hc_hblocks_t *m, uint32_t b)
{
    return m->split ? hc_block_len(m->count, m->n, b) : m->count;
}

/* The plan both engines follow (same on every rank for the shared parts). */
typedef struct hc_hplan {
    hc_hier_t h;
    hc_hblocks_t map;
    uint64_t es, maxblk;     /* element size, longest block (elements) */
    uint32_t C;              /* chunks per block */
    uint32_t S;              /* size of my unit */
    uint32_t *lst, *lst_off; /* lists L(0..S-1) of my unit: lst[lst_off[i] .. lst_off[i+1]) */
    uint32_t lmax;           /* longest list of my unit */
    uint32_t *slices;        /* J: the slices I serve */
    uint32_t nslices;
    uint32_t span;           /* tags of one phase */
} hc_hplan_t;

/* phases: engine runs in this operation (1, or 2 for AllReduce), so that
 * C keeps every tag below 2^20. */
int hc_hplan_init(hc_hplan_t *p, const hc_coll_args_t *a, const hc_hblocks_t *map,
                  uint32_t phases);
void hc_hplan_free(hc_hplan_t *p);

/*
 * Reduce-scatter of the blocks of SEND: my block's result goes to out
 * (chunk k at out + its offset within the block); out_step[k] receives the
 * step that writes chunk k. rd (n*C entries, -1 filled, or NULL) receives
 * for each (block, chunk) the step that reads SEND there (at most one).
 * Scratch: TMP from tmp_base; returns the bytes used there.
 */
uint64_t hc_hier_rs(const hc_hplan_t *p, hc_sched_t *s, uint32_t tagbase, uint64_t tmp_base,
                    hc_loc_t out, int32_t *out_step, int32_t *rd);
/*
 * Allgather into RECV at every block's place: my block is read from own
 * (chunk k ready after own_ready[k], or NULL: at once); a write into RECV
 * of (block b, chunk k) waits for war[b*C + k] when war is given.
 */
void hc_hier_ag(const hc_hplan_t *p, hc_sched_t *s, uint32_t tagbase, hc_loc_t own,
                const int32_t *own_ready, const int32_t *war);

#endif /* HC_COLL_HIER_H_ */
