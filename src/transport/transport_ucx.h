/*
 * src/transport/transport_ucx.h - UCX: context/worker setup, endpoints, and the
 * hc_transport_ops_t that the executor drives (tagged sends/receives).
 */
#ifndef HC_TRANSPORT_UCX_H_
#define HC_TRANSPORT_UCX_H_

#include <ucp/api/ucp.h>
#include "context.h"
#include "transport.h"

int hc_ucx_init(hc_context_t *ctx);     /* context, worker, own address */
void hc_ucx_fini(hc_context_t *ctx);
int hc_ucx_ep_create(hc_context_t *ctx, uint32_t peer, ucp_ep_h *ep);
void hc_ucx_ep_close(hc_context_t *ctx, ucp_ep_h ep, int force);
int hc_ucx_status_to_hccl(ucs_status_t st);
/* Tell address-book entry `to` that entry `failed` was removed as failed
 * (HcclCommRemoveMember; ctx->lock held). Best effort: nothing waits. */
void hc_ucx_notice_failed(hc_context_t *ctx, uint32_t to, uint32_t failed);
/* Before the context closes its endpoints: tell peer `to` this process
 * leaves (its operations are all done). */
void hc_ucx_say_bye(hc_context_t *ctx, uint32_t to);
/* At a deadline: log a transfer still in flight with peer `peer` of
 * `eps` (a send if `send`), prefixed by `what`: the worker that carries
 * it and what the workers hold unmatched with its tag and with any tag
 * under `peer_mask` (a probe, nothing removed), so that a message that
 * arrived where nobody receives it, or with another tag, is named; a send
 * also prints its endpoint's lanes. ctx->lock held. */
void hc_ucx_explain(const hc_eps_t *eps, int send, uint32_t peer, uint64_t tag,
                    uint64_t peer_mask, const char *what);

/* Tagged sends and receives for the executor; its transport context is an
 * hc_eps_t (the communicator's ranks in the address book). */
extern const hc_transport_ops_t hc_ucx_tp;

#endif /* HC_TRANSPORT_UCX_H_ */
