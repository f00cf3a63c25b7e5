/*
 * src/comm/rankmap.h - a communicator's rank map over the address book (comm
 * rank -> address-book entry, the p2p counters), with the topology model
 * and the algorithm table built from the ranks' cards: no exchange.
 */
#ifndef HC_RANKMAP_H_
#define HC_RANKMAP_H_

#include <stdint.h>

#include "topo/view.h"
#include "src/transport/context.h"
#include "src/base/env.h"

/* What a rank map costs: the map and the p2p counters (one block), the
 * topology model and the tuning table. Built aside, then installed, so
 * that a failed rebuild leaves the communicator as it was. */
typedef struct {
    uint32_t *peer; /* 3 x nranks: peer, p2p_sent, p2p_recvd */
    struct hc_topo *topo;
    struct hc_tune *tune;
    hc_topo_view_t view;
} hc_rankmap_t;

/* Build the map of `nranks` ranks, peers[i] being rank i's address-book
 * entry; with_topo: the topology and tuning too (else left NULL). On
 * failure *m is empty. */
int hc_rankmap_build(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank, uint32_t nranks,
                     const uint32_t *peers, hc_rankmap_t *m, int with_topo);
void hc_rankmap_free(hc_rankmap_t *m);

#endif /* HC_RANKMAP_H_ */
