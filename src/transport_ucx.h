/*
 * src/transport_ucx.h - UCX: context/worker setup, endpoints, and the
 * hc_transport_ops_t that the executor drives (tagged sends/receives).
 */
#ifndef HC_TRANSPORT_UCX_H_
#define HC_TRANSPORT_UCX_H_

#include <ucp/api/ucp.h>
#include "context.h"

int hc_ucx_init(hc_context_t *ctx);     /* context, worker, own address */
void hc_ucx_fini(hc_context_t *ctx);
int hc_ucx_ep_create(hc_context_t *ctx, uint32_t peer, ucp_ep_h *ep);
void hc_ucx_ep_close(hc_context_t *ctx, ucp_ep_h ep, int force);
int hc_ucx_status_to_hccl(ucs_status_t st);
/* Tell address-book entry `to` that entry `failed` was removed as failed
 * (HcclCommRemoveMember; ctx->lock held). Best effort: nothing waits. */
void hc_ucx_notice_failed(hc_context_t *ctx, uint32_t to, uint32_t failed);
struct hc_exec;
/* At a deadline: log, for each transfer of `e` (driven by hc_ucx_ops)
 * still in flight, the worker that carries it and what the workers hold
 * unmatched from that peer on that communicator (a tag probe, nothing
 * removed), so that a message that arrived where nobody receives it, or
 * with another tag, is named. ctx->lock held. */
void hc_ucx_explain_wait(const struct hc_exec *e);

#endif /* HC_TRANSPORT_UCX_H_ */
