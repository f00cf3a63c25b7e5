/* src/comm/comm_id.c - bootstrap cards and communicator ids (see comm_id.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "comm_id.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hccl/hccl.h>

#include "src/exec/exec.h" /* HC_TAG_COMM_BITS */
#include "src/base/log.h"
#include "tune.h"

void hc_comm_fill_card(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank,
                       hc_card_t *card)
{
    *card = ctx->self;
    card->rank = rank;
    card->comm_id_proposal = hc_comm_propose_id(ctx);
    card->deterministic = (uint32_t)cfg->deterministic;
    card->check_args = (uint32_t)cfg->check_args;
    card->buffsize = cfg->buffsize;
    hc_tune_forced_text(cfg, card->algos, sizeof(card->algos));
    if (cfg->algo[0]) {
        size_t l = strlen(card->algos);
        snprintf(card->algos + l, sizeof(card->algos) - l, "HCCL_ALGO=%s", cfg->algo);
    }
}

/* Communicator ids. Every process proposes its counter (then bumps it), the
 * id is the max of the proposals and everyone moves its counter past it: a
 * process's live communicators then have increasing, so distinct, ids, and a
 * message of a destroyed communicator can never match a newer one (until the
 * 20 bits wrap after a million creations). Split, groups and membership
 * changes agree on ids the same way (src/features/split.c, src/features/elastic.c). */
uint32_t hc_comm_propose_id(hc_context_t *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    uint32_t p = ctx->next_comm_id++;
    pthread_mutex_unlock(&ctx->lock);
    return p;
}

uint32_t hc_comm_note_id(hc_context_t *ctx, uint32_t id)
{
    pthread_mutex_lock(&ctx->lock);
    if (id + 1 > ctx->next_comm_id)
        ctx->next_comm_id = id + 1;
    pthread_mutex_unlock(&ctx->lock);
    return id & ((1u << HC_TAG_COMM_BITS) - 1);
}

int hc_ctx_claim_id(hc_context_t *ctx, uint32_t id)
{
    int rc = HCCL_SUCCESS;
    pthread_mutex_lock(&ctx->lock);
    for (uint32_t i = 0; i < ctx->nids && rc == HCCL_SUCCESS; i++)
        if (ctx->ids[i] == id)
            rc = HCCL_E_INTERNAL;
    if (rc == HCCL_SUCCESS && ctx->nids == ctx->ids_cap) {
        uint32_t cap = ctx->ids_cap ? 2 * ctx->ids_cap : 16;
        uint32_t *ids = realloc(ctx->ids, cap * sizeof(uint32_t));
        if (ids == NULL)
            rc = HCCL_E_MEMORY;
        else {
            ctx->ids = ids;
            ctx->ids_cap = cap;
        }
    }
    if (rc == HCCL_SUCCESS)
        ctx->ids[ctx->nids++] = id;
    pthread_mutex_unlock(&ctx->lock);
    return rc;
}

void hc_ctx_release_id(hc_context_t *ctx, uint32_t id)
{
    pthread_mutex_lock(&ctx->lock);
    for (uint32_t i = 0; i < ctx->nids; i++)
        if (ctx->ids[i] == id) {
            ctx->ids[i] = ctx->ids[--ctx->nids];
            break;
        }
    pthread_mutex_unlock(&ctx->lock);
}

/* A communicator's id taken (src/comm/comm.c): a clash
 * means two creations in this process agreed on one id at once; the
 * communicator would receive the other one's messages, so fail it. */
int hc_comm_claim_id(hc_context_t *ctx, uint32_t id, const char *what)
{
    int rc = hc_ctx_claim_id(ctx, id);
    if (rc == HCCL_E_INTERNAL)
        HC_ERROR(HC_SUB_INIT | HC_SUB_ELASTIC, "%s: communicator id %u is in use by another "
                 "communicator of this process (two creations from several threads at once "
                 "agreed on it); create communicators from one thread at a time "
                 "(docs/ELASTIC.md, \"Limits\")", what, id);
    return rc;
}

uint32_t hc_comm_agree_id(hc_context_t *ctx, const hc_card_t *cards, uint32_t n)
{
    uint32_t id = 0;
    for (uint32_t i = 0; i < n; i++)
        if (cards[i].comm_id_proposal > id)
            id = cards[i].comm_id_proposal;
    return hc_comm_note_id(ctx, id);
}

/* Every rank checks every card against rank 0's, so all ranks reach the
 * same verdict and fail together instead of hanging later. */
int hc_comm_check_cards(const hc_card_t *cards, uint32_t n)
{
    const hc_card_t *r0 = &cards[0];
    for (uint32_t i = 0; i < n; i++) {
        const hc_card_t *c = &cards[i];
        if (c->magic != HC_CARD_MAGIC || c->abi != HC_ABI) {
            HC_ERROR(HC_SUB_INIT, "rank %u sent an incompatible bootstrap record (magic %#x, "
                     "ABI %u; this library uses ABI %u): mixed hcomm builds?", i, c->magic,
                     c->abi, HC_ABI);
            return HCCL_E_NOT_SUPPORT;
        }
        if (c->version != r0->version) {
            HC_ERROR(HC_SUB_INIT, "ranks run different hcomm versions: rank 0 has %u, rank %u "
                     "has %u", r0->version, i, c->version);
            return HCCL_E_NOT_SUPPORT;
        }
        if (c->rank != i) {
            HC_ERROR(HC_SUB_INIT, "bootstrap record %u claims rank %u", i, c->rank);
            return HCCL_E_INTERNAL;
        }
        if (c->deterministic != r0->deterministic) {
            HC_ERROR(HC_SUB_INIT, "ranks disagree on HCCL_DETERMINISTIC: rank 0 = %u, rank %u = %u",
                     r0->deterministic, i, c->deterministic);
            return HCCL_E_PARA;
        }
        if (c->check_args != r0->check_args) {
            HC_ERROR(HC_SUB_INIT, "ranks disagree on HCCL_CHECK_ARGS: rank 0 = %u, rank %u = %u",
                     r0->check_args, i, c->check_args);
            return HCCL_E_PARA;
        }
        if (c->buffsize != r0->buffsize) {
            HC_ERROR(HC_SUB_INIT, "ranks disagree on the buffer size (HCCL_BUFFSIZE): rank 0 = "
                     "%llu B, rank %u = %llu B", (unsigned long long)r0->buffsize, i,
                     (unsigned long long)c->buffsize);
            return HCCL_E_PARA;
        }
        if (strncmp(c->algos, r0->algos, sizeof(c->algos)) != 0) {
            HC_ERROR(HC_SUB_INIT, "ranks disagree on forced algorithms: rank 0 = '%.*s', rank "
                     "%u = '%.*s'", (int)sizeof(r0->algos), r0->algos, i,
                     (int)sizeof(c->algos), c->algos);
            return HCCL_E_PARA;
        }
    }
    return HCCL_SUCCESS;
}
