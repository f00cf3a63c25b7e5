/*
 * src/bootstrap.h - building a communicator from everybody's cards.
 *
 * Both bootstraps (MPI: one MPI_Allgather; root info: a TCP rendezvous at
 * the root) gather one hc_card_t per rank, then call hc_bootstrap_finish,
 * which every rank runs on the same cards and so reaches the same verdict.
 * A rank whose local setup failed still takes part, with its error in its
 * card, so nobody waits for it.
 */
#ifndef HC_BOOTSTRAP_H_
#define HC_BOOTSTRAP_H_

#include <hccl/hccl.h>
#include "comm.h"

/* Local part: environment, context, merged config, this rank's card.
 * On failure *ctx is NULL and card->status holds the error (card is still
 * valid to send). */
int hc_bootstrap_prepare(const HcclCommConfig *config, uint32_t rank, hc_context_t **ctx,
                         hc_config_t *cfg, hc_card_t *card);
/* Collective part, after the exchange: statuses, agreement, the comm.
 * Releases ctx on failure. */
int hc_bootstrap_finish(hc_context_t *ctx, hc_config_t *cfg, uint32_t rank, uint32_t nranks,
                        const hc_card_t *cards, const HcclCommConfig *config, HcclComm *out);

#endif /* HC_BOOTSTRAP_H_ */
