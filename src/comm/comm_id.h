/*
 * src/comm/comm_id.h - what a rank brings to a new communicator (its bootstrap
 * card: versions, settings, an id proposal), the check that all cards
 * agree, and the communicator ids of a process (proposed, agreed as the
 * maximum, claimed while the communicator lives).
 */
#ifndef HC_COMM_ID_H_
#define HC_COMM_ID_H_

#include <stdint.h>

#include "src/transport/context.h"
#include "src/base/env.h"

/* Fill this process's card for communicator rank `rank` (proposal for the
 * comm id included). */
void hc_comm_fill_card(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank,
                       hc_card_t *card);
/* The agreed id: max of the proposals; remembers it in the context. */
uint32_t hc_comm_agree_id(hc_context_t *ctx, const hc_card_t *cards, uint32_t n);
/* Reserve an id proposal (every proposal of one process is different, so
 * two creations in flight in one process never agree on the same id from
 * its own proposals), and record an agreed one (max of the proposals). */
uint32_t hc_comm_propose_id(hc_context_t *ctx);
uint32_t hc_comm_note_id(hc_context_t *ctx, uint32_t max_proposal);
/* Take id (as hc_comm_note_id returns it) for a communicator of this
 * process: HCCL_E_INTERNAL if another live communicator of the process
 * has it, or an agreement in flight claimed it (two creations at once
 * from several threads agreed on the same id), else HCCL_SUCCESS.
 * hc_ctx_release_id gives it back. Both take ctx->lock. */
int hc_ctx_claim_id(hc_context_t *ctx, uint32_t id);
void hc_ctx_release_id(hc_context_t *ctx, uint32_t id);
/* hc_ctx_claim_id for communicator `what`, with the log line that names
 * the clash. */
int hc_comm_claim_id(hc_context_t *ctx, uint32_t id, const char *what);
/* Every card against rank 0's (magic, ABI, version, rank, settings that
 * must agree): the same verdict on every rank, logged. */
int hc_comm_check_cards(const hc_card_t *cards, uint32_t n);

#endif /* HC_COMM_ID_H_ */
