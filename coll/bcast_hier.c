/*
 * coll/bcast_hier.c - Broadcast HIER: a tree that follows the levels.
 *
 * From the top level down (racks, nodes, fast groups, ranks; a level with
 * one member inside the current segment is skipped): the current segment
 * (a ring range holding the current root) splits into its sub-segments;
 * the root leads its own, the first rank of each other leads that one;
 * the leaders form a binomial tree rooted at the root (sub-segments taken
 * in ring order starting from the root's). Then every leader is the root
 * of its sub-segment one level down. So the message crosses each rack,
 * node and group boundary exactly once per receiving unit (the minimum),
 * and the deep, slow levels are crossed first, while the fast levels
 * below fan out in parallel.
 *
 * Large messages travel in chunks (hc_ring_nchunks): a rank forwards chunk
 * k to its children as soon as it has arrived, so all levels of the tree
 * work at once. Children are served largest subtree first, higher levels
 * first. Tags: chunk index (one edge per pair of ranks).
 */
#include "hier.h"

#include <string.h>

#define MAX_CHILDREN 128

/* This rank's place in the tree: its parent (UINT32_MAX at the root) and
 * its children, in the order they are served. */
static int tree(const hc_coll_args_t *a, const hc_hier_t *h, uint32_t *parent,
                uint32_t children[MAX_CHILDREN], uint32_t *nch)
{
    const uint32_t n = a->nranks;
    const hc_topo_view_t *v = a->topo;
    /* the root's ring position */
    uint32_t rp = a->root;
    if (h->ring) {
        if (v->pos_of)
            rp = v->pos_of[a->root];
        else
            for (uint32_t i = 0; i < n; i++)
                if (h->ring[i] == a->root)
                    rp = i;
    }
    /* levels top-down; the last one is "every rank" (off = NULL) */
    const uint32_t *offs[4] = {NULL, NULL, NULL, NULL};
    uint32_t nl = 0;
    if (v && v->nracks > 1 && v->rack_off && v->rack_off[v->nracks] == n)
        offs[nl++] = v->rack_off;
    if (v && v->nnodes > 1 && v->node_off && v->node_off[v->nnodes] == n)
        offs[nl++] = v->node_off;
    if (v && v->ngroups > 1 && v->group_off && v->group_off[v->ngroups] == n)
        offs[nl++] = v->group_off;
    offs[nl++] = NULL;

    uint32_t lo = 0, hi = n;
    *parent = UINT32_MAX;
    *nch = 0;
    for (uint32_t L = 0; L < nl; L++) {
        const uint32_t *off = offs[L];
        /* sub-segments of [lo, hi) at this level */
        uint32_t first = 0, last = 0;
        if (off) {
            while (off[first + 1] <= lo)
                first++;
            last = first;
            while (off[last + 1] < hi)
                last++;
        } else {
            first = lo;
            last = hi - 1;
        }
        const uint32_t nseg = last - first + 1;
        if (nseg == 1)
            continue;
#define SEG_LO(i) (off ? off[first + (i)] : first + (i))
#define SEG_HI(i) (off ? off[first + (i) + 1] : first + (i) + 1)
        uint32_t ri = 0, mi = 0;
        for (uint32_t i = 0; i < nseg; i++) {
            if (rp >= SEG_LO(i) && rp < SEG_HI(i))
                ri = i;
            if (h->pos >= SEG_LO(i) && h->pos < SEG_HI(i))
                mi = i;
        }
        /* leader of the segment at tree index t (rotated to start at the root's) */
        const uint32_t mv = (mi + nseg - ri) % nseg;
        const uint32_t my_leader = mi == ri ? rp : SEG_LO(mi);
        if (h->pos == my_leader) {
            if (mv != 0) {
                const uint32_t pi = ((mv & (mv - 1)) + ri) % nseg;
                const uint32_t pp = pi == ri ? rp : SEG_LO(pi);
                *parent = h->ring ? h->ring[pp] : pp;
            }
            uint32_t mask = mv ? hc_lowbit(mv) >> 1 : 1u << (hc_ceil_log2(nseg) - 1);
            for (; mask > 0; mask >>= 1) {
                if (mv + mask >= nseg)
                    continue;
                const uint32_t ci = (mv + mask + ri) % nseg;
                const uint32_t cp = SEG_LO(ci); /* never the root's segment */
                if (*nch == MAX_CHILDREN)
                    return HCCL_E_INTERNAL;
                children[(*nch)++] = h->ring ? h->ring[cp] : cp;
            }
        }
        lo = SEG_LO(mi);
        hi = SEG_HI(mi);
        rp = my_leader;
#undef SEG_LO
#undef SEG_HI
    }
    return HCCL_SUCCESS;
}

int hc_bcast_hier_build(const hc_coll_args_t *a, hc_sched_t *s)
{
    const uint32_t n = a->nranks;
    const uint64_t es = a->esize, count = a->count;

    s->algo = "broadcast:HIER";
    s->esize = es;
    if (count == 0 || n == 1)
        return HCCL_SUCCESS;
    hc_hier_t h;
    int rc = hc_hier_init(a, &h); /* validates the ring and finds our position */
    if (rc != HCCL_SUCCESS)
        return rc;
    if (a->root >= n)
        return HCCL_E_PARA;
    uint32_t parent, nch, children[MAX_CHILDREN];
    rc = tree(a, &h, &parent, children, &nch);
    if (rc != HCCL_SUCCESS)
        return rc;
    const uint32_t C = (uint32_t)hc_ring_nchunks(a, count, 1);
    for (uint32_t k = 0; k < C; k++) {
        const uint64_t off = hc_block_start(count, C, k) * es, len = hc_block_len(count, C, k) * es;
        if (len == 0)
            continue; /* both ends skip the same chunks */
        int32_t r = -1;
        if (parent != UINT32_MAX)
            r = hc_sched_recv(s, parent, k, HC_RECV(off), len, HC_NODEPS);
        for (uint32_t c = 0; c < nch; c++)
            hc_sched_send(s, children[c], k, HC_RECV(off), len, HC_DEPS(r));
    }
    return s->err;
}
