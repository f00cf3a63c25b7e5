/* src/api/api_comm.c - communicator lifecycle: the public calls and the shared
 * bootstrap steps (bootstrap.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "bootstrap.h"
#include "src/comm/comm.h"
#include "src/comm/comm_id.h"
#include "src/comm/op.h"
#include "src/base/log.h"

uint32_t HcommGetVersion(void)
{
    return HCOMM_VERSION_CODE;
}

static void card_init(hc_card_t *card, uint32_t rank)
{
    memset(card, 0, sizeof(*card));
    card->magic = HC_CARD_MAGIC;
    card->abi = HC_ABI;
    card->version = HCOMM_VERSION_CODE;
    card->rank = rank;
}

int hc_bootstrap_prepare_in(hc_context_t *ctx, const HcclCommConfig *config, uint32_t rank,
                            hc_config_t *cfg, hc_card_t *card)
{
    card_init(card, rank);
    memset(cfg, 0, sizeof(*cfg));
    const hc_config_t *env;
    int rc = hc_env_global(&env);
    if (rc == HCCL_SUCCESS)
        rc = hc_comm_config(env, config, cfg);
    if (rc == HCCL_SUCCESS)
        hc_comm_fill_card(ctx, cfg, rank, card);
    else
        hc_env_free(cfg);
    card->status = rc;
    return rc;
}

int hc_bootstrap_prepare(const HcclCommConfig *config, uint32_t rank, hc_context_t **ctx,
                         hc_config_t *cfg, hc_card_t *card)
{
    card_init(card, rank);
    memset(cfg, 0, sizeof(*cfg));
    int rc = hc_ctx_acquire(ctx);
    if (rc == HCCL_SUCCESS) {
        rc = hc_bootstrap_prepare_in(*ctx, config, rank, cfg, card);
        if (rc != HCCL_SUCCESS)
            hc_ctx_release(*ctx);
    }
    if (rc != HCCL_SUCCESS)
        *ctx = NULL;
    card->status = rc;
    return rc;
}

int hc_bootstrap_finish(hc_context_t *ctx, hc_config_t *cfg, uint32_t rank, uint32_t nranks,
                        const hc_card_t *cards, const HcclCommConfig *config, HcclComm *out)
{
    int rc = HCCL_SUCCESS;
    for (uint32_t i = 0; i < nranks; i++) {
        if (cards[i].status != HCCL_SUCCESS) {
            rc = cards[i].status;
            if (i != rank)
                HC_ERROR(HC_SUB_INIT, "rank %u failed to initialise (%s); giving up as well", i,
                         HcclGetErrorString(rc));
            break;
        }
    }
    hc_comm_t *c = NULL;
    if (rc == HCCL_SUCCESS) {
        uint32_t id = hc_comm_agree_id(ctx, cards, nranks);
        HcclCommConfig u; /* checked by hc_bootstrap_prepare: read for the name */
        rc = hc_config_read(config, &u);
        if (rc == HCCL_SUCCESS)
            rc = hc_comm_create(ctx, cfg, rank, nranks, cards, id, u.hcclCommName, &c);
    }
    if (ctx)
        hc_env_free(cfg);
    if (rc != HCCL_SUCCESS) {
        if (ctx)
            hc_ctx_release(ctx);
        return rc;
    }
    hc_log_set_rank((int)rank);
    *out = c->handle;
    return HCCL_SUCCESS;
}

/* Destroying is local: no agreement with the other members. The last
 * communicator's destruction closes the process's endpoints, after a
 * goodbye on each that lets the peers tell a finished process from a
 * failed one (src/transport/transport_ucx.c, "leaving"). */
HcclResult HcclCommDestroy(HcclComm comm)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, "HcclCommDestroy", &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_context_t *ctx = c->ctx;
    HC_INFO(HC_SUB_INIT, "communicator %s destroyed after %llu operations", c->name,
            (unsigned long long)c->ops);
    hc_comm_destroy(c);
    hc_ctx_release(ctx);
    return HCCL_SUCCESS;
}

HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, "HcclGetRankSize", &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (rankSize == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclGetRankSize: rankSize is NULL");
        return HCCL_E_PTR;
    }
    *rankSize = c->nranks;
    return HCCL_SUCCESS;
}

HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, "HcclGetRankId", &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (rank == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclGetRankId: rank is NULL");
        return HCCL_E_PTR;
    }
    *rank = c->rank;
    return HCCL_SUCCESS;
}

HcclResult HcclGetCommName(HcclComm comm, char *commName)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, "HcclGetCommName", &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (commName == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclGetCommName: commName is NULL");
        return HCCL_E_PTR;
    }
    snprintf(commName, COMM_NAME_MAX_LENGTH, "%s", c->name);
    return HCCL_SUCCESS;
}

HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, "HcclGetCommAsyncError", &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (asyncError == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclGetCommAsyncError: asyncError is NULL");
        return HCCL_E_PTR;
    }
    *asyncError = (HcclResult)c->async_error;
    return HCCL_SUCCESS;
}

HcclResult HcclCommAbort(HcclComm comm)
{
    hc_comm_t *c;
    int rc = hc_comm_get(comm, "HcclCommAbort", &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    c->aborted = 1;
    hc_comm_set_error(c, HCCL_E_SUSPENDING);
    HC_WARN(HC_SUB_INIT, "communicator %s aborted by the application", c->name);
    return HCCL_SUCCESS;
}
