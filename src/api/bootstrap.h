/*
 * src/api/bootstrap.h - building a communicator from everybody's cards.
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
#include "src/comm/comm.h"

/* Local part: environment, context, merged config, this rank's card.
 * On failure *ctx is NULL and card->status holds the error (card is still
 * valid to send). */
int hc_bootstrap_prepare(const HcclCommConfig *config, uint32_t rank, hc_context_t **ctx,
                         hc_config_t *cfg, hc_card_t *card);
/* The same in a context the caller holds (HcclCommInitAll's own ones); on
 * failure the caller still holds it. */
int hc_bootstrap_prepare_in(hc_context_t *ctx, const HcclCommConfig *config, uint32_t rank,
                            hc_config_t *cfg, hc_card_t *card);
/* Collective part, after the exchange: statuses, agreement, the comm.
 * Releases ctx on failure. */
int hc_bootstrap_finish(hc_context_t *ctx, hc_config_t *cfg, uint32_t rank, uint32_t nranks,
                        const hc_card_t *cards, const HcclCommConfig *config, HcclComm *out);

/* The TCP rendezvous (src/api/bootstrap_tcp.c), shared by the root-info and
 * rank-table (src/api/bootstrap_cluster.c) paths. The root starts a thread that
 * listens on ip and the first free port of [base_port, base_port + tries)
 * (base_port 0: any; *port gets the one bound) and serves one rendezvous
 * identified by uid, of nranks ranks (0: hc_tcp_serve_expect will say;
 * messages are judged by src/api/rendezvous.h). Every rank, the root's own
 * process included, then joins: sends its card, receives all nranks cards.
 * Waits are bounded by timeout (s). */
int hc_tcp_serve_start(int family, const char *ip, uint32_t base_port, uint32_t tries,
                       uint64_t uid, uint32_t nranks, double timeout, uint32_t *port);
/* The rank count of the rendezvous uid, if this process serves it (the
 * root-info path: the root process's own HcclCommInitRootInfo says it;
 * until then the server judges no rank's message). */
void hc_tcp_serve_expect(uint64_t uid, uint32_t nranks);
int hc_tcp_rendezvous(int family, const char *ip, uint32_t port, uint64_t uid, uint32_t nranks,
                      const hc_card_t *mine, hc_card_t *cards, double timeout);

#endif /* HC_BOOTSTRAP_H_ */
