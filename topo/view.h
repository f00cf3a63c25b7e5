/*
 * topo/view.h - what an algorithm may know about the machine: the view of
 * the topology model (topo/topo.h) that coll/ reads. Plain data, so that
 * the algorithms sit above the model and never the reverse.
 */
#ifndef HC_TOPO_VIEW_H_
#define HC_TOPO_VIEW_H_

#include <stdint.h>

/* Built by hc_topo_view (topo/topo.h); the
 * defaults (all NULL / 0) mean "flat: every rank equally far".
 *
 * Levels (topo/topo.h): fast group < node (host) < rack < cluster. The
 * ring keeps every group, node and rack contiguous, and groups, nodes and
 * racks are numbered in ring order, so group g is ring positions
 * [group_off[g], group_off[g+1]) (likewise node_off, rack_off; a group
 * never straddles a node, nor a node a rack). Hierarchical algorithms
 * (coll/hier.h) use nodes as their units when there are several, else
 * fast groups. The *_off arrays may be NULL (hand-made views): flat. */
typedef struct hc_topo_view {
    const uint32_t *ring;     /* ring[i] = rank at ring position i; NULL = 0..n-1 */
    uint32_t ngroups;         /* fast groups (0 or 1 = flat) */
    const uint32_t *group_of; /* group index of each rank (ngroups > 1) */
    uint32_t nnodes;          /* hosts (0 or 1 = one host) */
    const uint32_t *node_of;  /* host index of each rank (nnodes > 1) */
    uint32_t nracks;          /* racks (0 or 1 = one) */
    const uint32_t *rack_of;  /* rack index of each rank */
    const uint32_t *pos_of;   /* ring position of each rank (NULL: search ring) */
    const uint32_t *group_off, *node_off, *rack_off; /* ngroups+1, nnodes+1, nracks+1 */
    /* TORUS2D: rows = nodes (several) or fast groups, all of grid_cols ranks;
     * grid[row * grid_cols + col] = rank; grid_rows = 0: no grid */
    uint32_t grid_rows, grid_cols;
    const uint32_t *grid;
    unsigned flags;           /* HC_TOPO_F_* */
    double level_bw[4], level_lat[4]; /* link class crossing group/node/rack/cluster:
                                         bytes/s, s (nominal; topo/topo.c says whence) */
} hc_topo_view_t;
#define HC_TOPO_F_HIER 0x1u      /* several groups or nodes: hierarchical variants are candidates */
#define HC_TOPO_F_MULTINODE 0x2u /* several nodes (declared or detected hosts) */
#define HC_TOPO_F_RANK_RING 0x4u /* the ring algorithms use rank order, not `ring`
                                    (HCCL_TOPO_RING_ORDER=0); hierarchical ones keep it */

#endif /* HC_TOPO_VIEW_H_ */
