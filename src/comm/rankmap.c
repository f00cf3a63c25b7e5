/* src/comm/rankmap.c - rank maps, topology and tuning of a communicator (see rankmap.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "rankmap.h"

#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "src/base/log.h"
#include "tune.h"
#include "topo/topo.h"

void hc_rankmap_free(hc_rankmap_t *m)
{
    if (m->tune)
        hc_tune_destroy(m->tune);
    if (m->topo)
        hc_topo_destroy(m->topo);
    free(m->peer);
    memset(m, 0, sizeof(*m));
}

/* A simulated cluster: peers on other declared nodes of this machine talk
 * through the TCP-only worker (context.h), when both sides have one (so
 * both sides decide alike). Set before the first endpoint to the peer. */
static void mark_simulated_peers(hc_context_t *ctx, uint32_t rank, uint32_t nranks,
                                 const uint32_t *peers, const struct hc_topo *topo)
{
    if (ctx->worker_tcp == NULL)
        return;
    pthread_mutex_lock(&ctx->lock);
    for (uint32_t i = 0; i < nranks; i++) {
        hc_peer_t *p = ctx->peers[peers[i]];
        if (p->via_tcp || p->card.addr_tcp_len == 0 || !hc_topo_simulated_pair(topo, rank, i))
            continue;
        if (p->ep == NULL)
            p->via_tcp = 1;
        else
            HC_WARN(HC_SUB_TRANSPORT, "peer %s:%d is on another declared node but already has a "
                    "shared-memory endpoint; it keeps it", p->card.host, p->card.pid);
    }
    pthread_mutex_unlock(&ctx->lock);
}

/* Topology facts come from the address book (the cards every rank sent
 * when it was first seen; card.rank there is its world rank, the numbering
 * of topology overrides), so a new map needs no exchange. */
int hc_rankmap_build(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank, uint32_t nranks,
                     const uint32_t *peers, hc_rankmap_t *m, int with_topo)
{
    enum { STACK_RANKS = 64 };
    hc_topo_member_t mem_s[STACK_RANKS], *mem = mem_s;
    int rc = HCCL_E_MEMORY;
    memset(m, 0, sizeof(*m));
    m->peer = calloc(3 * (size_t)nranks, sizeof(uint32_t));
    if (nranks > STACK_RANKS)
        mem = malloc(nranks * sizeof(*mem));
    if (m->peer == NULL || mem == NULL)
        goto out;
    memcpy(m->peer, peers, nranks * sizeof(uint32_t));
    rc = HCCL_SUCCESS;
    if (!with_topo)
        goto out;
    pthread_mutex_lock(&ctx->lock); /* ctx->peers may be reallocated meanwhile */
    for (uint32_t i = 0; i < nranks; i++) {
        const hc_card_t *card = &ctx->peers[peers[i]]->card;
        mem[i].host = card->host;
        mem[i].blob = card->topo;
        mem[i].world = card->rank;
    }
    pthread_mutex_unlock(&ctx->lock);
    rc = hc_topo_create(nranks, rank, mem, cfg, &m->topo);
    if (rc != HCCL_SUCCESS)
        goto out;
    hc_topo_view(m->topo, &m->view);
    if (!cfg->topo_ring_order)
        m->view.flags |= HC_TOPO_F_RANK_RING;
    mark_simulated_peers(ctx, rank, nranks, peers, m->topo);
    rc = hc_tune_create(cfg, nranks, &m->view, &m->tune);
out:
    if (mem != mem_s)
        free(mem);
    if (rc != HCCL_SUCCESS)
        hc_rankmap_free(m);
    return rc;
}
