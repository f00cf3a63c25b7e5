/* topo/topo.c - the topology model (see topo.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "topo.h"

#include <stdlib.h>
#include <string.h>
#include <hccl/hccl_types.h>

void hc_topo_local_facts(uint8_t *blob, size_t len)
{
    memset(blob, 0, len);
}

int hc_topo_create(uint32_t n, const char *const *hosts, const uint8_t *const *blobs,
                   const struct hc_config *cfg, hc_topo_t **out)
{
    hc_topo_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return HCCL_E_MEMORY;
    t->nranks = n;
    t->node_of = calloc(n ? n : 1, sizeof(uint32_t));
    t->group_of = calloc(n ? n : 1, sizeof(uint32_t));
    t->ring = calloc(n ? n : 1, sizeof(uint32_t));
    if (!t->node_of || !t->group_of || !t->ring) {
        hc_topo_destroy(t);
        return HCCL_E_MEMORY;
    }
    /* hosts: first-seen order */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j;
        for (j = 0; j < i; j++)
            if (strcmp(hosts[i], hosts[j]) == 0)
                break;
        t->node_of[i] = j < i ? t->node_of[j] : t->nnodes++;
    }
    /* ring: ranks of one host adjacent, hosts in first-seen order */
    uint32_t k = 0;
    for (uint32_t h = 0; h < t->nnodes; h++)
        for (uint32_t i = 0; i < n; i++)
            if (t->node_of[i] == h)
                t->ring[k++] = i;
    memcpy(t->group_of, t->node_of, n * sizeof(uint32_t));
    t->ngroups = t->nnodes;
    *out = t;
    return HCCL_SUCCESS;
}

void hc_topo_destroy(hc_topo_t *t)
{
    if (t == NULL)
        return;
    free(t->node_of);
    free(t->group_of);
    free(t->ring);
    free(t);
}

void hc_topo_view(const hc_topo_t *t, hc_topo_view_t *v)
{
    memset(v, 0, sizeof(*v));
    v->ring = t->nnodes > 1 ? t->ring : NULL;
    v->ngroups = t->ngroups;
    v->group_of = t->group_of;
    v->nnodes = t->nnodes;
    v->node_of = t->node_of;
}
