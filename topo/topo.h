/*
 * topo/topo.h - the topology model that algorithms see through
 * hc_topo_view_t (coll/coll.h).
 *
 * At init every process describes itself (hc_topo_local_facts fills an
 * opaque blob that travels in the bootstrap record); hc_topo_create turns
 * all ranks' blobs and host names into the model: levels (fast group,
 * node, rack, cluster), the group of each rank, and the orders that rings
 * and trees follow. Split communicators derive theirs from the parent's
 * blobs without any new exchange.
 */
#ifndef HC_TOPO_H_
#define HC_TOPO_H_

#include <stddef.h>
#include <stdint.h>

#include "../coll/coll.h"

struct hc_config;

typedef struct hc_topo {
    uint32_t nranks;
    uint32_t nnodes;
    uint32_t *node_of;  /* host index of each rank */
    uint32_t ngroups;
    uint32_t *group_of; /* fast-group index of each rank */
    uint32_t *ring;     /* ring order */
} hc_topo_t;

/* Describe this process into blob (len bytes, zero-filled first). */
void hc_topo_local_facts(uint8_t *blob, size_t len);

/* Build the model for n ranks. hosts[i]: host name of rank i; blobs[i]:
 * its hc_topo_local_facts. cfg: overrides (HCCL_GROUP_<n>, topology file).
 * Returns HCCL_SUCCESS or an error (logged, naming what was wrong). */
int hc_topo_create(uint32_t n, const char *const *hosts, const uint8_t *const *blobs,
                   const struct hc_config *cfg, hc_topo_t **out);
void hc_topo_destroy(hc_topo_t *t);
/* Fill the view algorithms read (points into t). */
void hc_topo_view(const hc_topo_t *t, hc_topo_view_t *v);

#endif /* HC_TOPO_H_ */
