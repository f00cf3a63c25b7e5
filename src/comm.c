/* src/comm.c - communicators and the blocking operation runner (see comm.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "comm.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "reduce.h"
#include "tune.h"
#include "../topo/topo.h"

/* Idle polls before yielding the core: with more ranks than cores a
 * spinning waiter starves the peer it waits for. */
#define HC_SPIN_BEFORE_YIELD 64

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int hc_comm_check(const hc_comm_t *c, const char *fn)
{
    if (c == NULL) {
        HC_ERROR(HC_SUB_COLL, "%s: comm is NULL", fn);
        return HCCL_E_PTR;
    }
    if (c->magic != HC_COMM_MAGIC) {
        HC_ERROR(HC_SUB_COLL, "%s: comm %p is not a live hcomm communicator", fn, (void *)c);
        return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
}

int hc_comm_config(const hc_config_t *env, const HcclCommConfig *config, hc_config_t *out)
{
    int rc = hc_env_copy(out, env);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (config == NULL)
        return HCCL_SUCCESS;
    if (config->hcclBufferSize != HCCL_COMM_CONFIG_UNSET) {
        if (config->hcclBufferSize == 0) {
            HC_ERROR(HC_SUB_INIT, "HcclCommConfig.hcclBufferSize = 0: must be at least 1 (MB)");
            return HCCL_E_PARA;
        }
        out->buffsize = (uint64_t)config->hcclBufferSize << 20;
    }
    if (config->hcclDeterministic != HCCL_COMM_CONFIG_UNSET) {
        if (config->hcclDeterministic > 1) {
            HC_ERROR(HC_SUB_INIT, "HcclCommConfig.hcclDeterministic = %u: must be 0 or 1",
                     config->hcclDeterministic);
            return HCCL_E_PARA;
        }
        out->deterministic = (int)config->hcclDeterministic;
    }
    if (config->hcclExecTimeOut >= 0)
        out->exec_timeout = config->hcclExecTimeOut;
    if (memchr(config->hcclAlgo, '\0', sizeof(config->hcclAlgo)) == NULL) {
        HC_ERROR(HC_SUB_INIT, "HcclCommConfig.hcclAlgo is not NUL-terminated");
        return HCCL_E_PARA;
    }
    if (config->hcclAlgo[0])
        snprintf(out->algo, sizeof(out->algo), "%s", config->hcclAlgo);
    return HCCL_SUCCESS;
}

void hc_comm_fill_card(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank,
                       hc_card_t *card)
{
    *card = ctx->self;
    card->rank = rank;
    pthread_mutex_lock(&ctx->lock);
    card->comm_id_proposal = ctx->next_comm_id;
    pthread_mutex_unlock(&ctx->lock);
    card->deterministic = (uint32_t)cfg->deterministic;
    card->buffsize = cfg->buffsize;
    hc_tune_forced_text(cfg, card->algos, sizeof(card->algos));
    if (cfg->algo[0]) {
        size_t l = strlen(card->algos);
        snprintf(card->algos + l, sizeof(card->algos) - l, "HCCL_ALGO=%s", cfg->algo);
    }
}

uint32_t hc_comm_agree_id(hc_context_t *ctx, const hc_card_t *cards, uint32_t n)
{
    uint32_t id = 0;
    for (uint32_t i = 0; i < n; i++)
        if (cards[i].comm_id_proposal > id)
            id = cards[i].comm_id_proposal;
    pthread_mutex_lock(&ctx->lock);
    if (id + 1 > ctx->next_comm_id)
        ctx->next_comm_id = id + 1;
    pthread_mutex_unlock(&ctx->lock);
    return id & ((1u << HC_TAG_COMM_BITS) - 1);
}

/* Every rank checks every card against rank 0's, so all ranks reach the
 * same verdict and fail together instead of hanging later. */
static int check_cards(const hc_card_t *cards, uint32_t n)
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

int hc_comm_create(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank,
                   uint32_t nranks, const hc_card_t *cards, uint32_t id,
                   const char *name, hc_comm_t **out)
{
    int rc = check_cards(cards, nranks);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_comm_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return HCCL_E_MEMORY;
    c->ctx = ctx;
    c->rank = rank;
    c->nranks = nranks;
    c->id = id;
    c->peer = calloc(nranks, sizeof(uint32_t));
    c->p2p_sent = calloc(nranks, sizeof(uint32_t));
    c->p2p_recvd = calloc(nranks, sizeof(uint32_t));
    const char **hosts = calloc(nranks, sizeof(char *));
    const uint8_t **blobs = calloc(nranks, sizeof(uint8_t *));
    if (!c->peer || !c->p2p_sent || !c->p2p_recvd || !hosts || !blobs) {
        rc = HCCL_E_MEMORY;
        goto fail;
    }
    rc = hc_env_copy(&c->cfg, cfg);
    if (rc != HCCL_SUCCESS)
        goto fail;
    pthread_mutex_lock(&ctx->lock);
    for (uint32_t i = 0; i < nranks; i++) {
        c->peer[i] = hc_ctx_add_peer(ctx, &cards[i]);
        if (c->peer[i] == UINT32_MAX) {
            pthread_mutex_unlock(&ctx->lock);
            rc = HCCL_E_MEMORY;
            goto fail;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    for (uint32_t i = 0; i < nranks; i++) {
        hosts[i] = cards[i].host;
        blobs[i] = cards[i].topo;
    }
    rc = hc_topo_create(nranks, hosts, blobs, &c->cfg, &c->topo);
    if (rc != HCCL_SUCCESS)
        goto fail;
    hc_topo_view(c->topo, &c->view);
    rc = hc_tune_create(&c->cfg, nranks, &c->view, &c->tune);
    if (rc != HCCL_SUCCESS)
        goto fail;
    if (name && name[0])
        snprintf(c->name, sizeof(c->name), "%s", name);
    else
        snprintf(c->name, sizeof(c->name), "hcomm-%05x-%08llx", id,
                 (unsigned long long)(cards[0].uid & 0xffffffffu));
    c->magic = HC_COMM_MAGIC;
    free(hosts);
    free(blobs);
    HC_INFO(HC_SUB_INIT, "communicator %s: rank %u of %u, id %u, %u host(s)", c->name, rank,
            nranks, id, c->view.nnodes ? c->view.nnodes : 1);
    *out = c;
    return HCCL_SUCCESS;
fail:
    free(hosts);
    free(blobs);
    hc_comm_destroy(c);
    return rc;
}

void hc_comm_destroy(hc_comm_t *c)
{
    if (c == NULL)
        return;
    c->magic = 0;
    for (int i = 0; i < HC_SCHED_CACHE; i++) {
        if (c->cache[i].key.valid) {
            hc_sched_free(&c->cache[i].sched);
            free(c->cache[i].ws);
        }
    }
    if (c->tune)
        hc_tune_destroy(c->tune);
    if (c->topo)
        hc_topo_destroy(c->topo);
    hc_env_free(&c->cfg);
    free(c->peer);
    free(c->p2p_sent);
    free(c->p2p_recvd);
    free(c);
}

uint32_t hc_comm_next_seq(hc_comm_t *c)
{
    uint32_t s = c->seq;
    c->seq = (c->seq + 1) % HC_TAG_P2P_SEQ; /* never the Send/Recv value */
    return s;
}

void hc_comm_set_error(hc_comm_t *c, int rc)
{
    __sync_bool_compare_and_swap(&c->async_error, HCCL_SUCCESS, rc);
}

int hc_comm_wait(hc_comm_t *c, hc_exec_t *const *ex, uint32_t n, const char *what)
{
    hc_context_t *ctx = c->ctx;
    double timeout = c->cfg.exec_timeout, start = 0;
    unsigned idle = 0;
    int rc = HCCL_SUCCESS;
    for (;;) {
        uint32_t pending = 0;
        pthread_mutex_lock(&ctx->lock);
        for (uint32_t i = 0; i < n; i++) {
            int r = hc_exec_progress(ex[i]);
            if (r == HCCL_E_AGAIN)
                pending++;
            else if (r != HCCL_SUCCESS && rc == HCCL_SUCCESS)
                rc = r;
        }
        if (rc != HCCL_SUCCESS || pending == 0) {
            if (rc != HCCL_SUCCESS)
                for (uint32_t i = 0; i < n; i++)
                    hc_exec_cancel(ex[i], rc);
            pthread_mutex_unlock(&ctx->lock);
            break;
        }
        unsigned events = ucp_worker_progress(ctx->worker);
        pthread_mutex_unlock(&ctx->lock);
        if (events) {
            idle = 0;
            continue;
        }
        if (c->aborted) {
            rc = HCCL_E_SUSPENDING;
            HC_WARN(HC_SUB_COLL, "%s on %s rank %u: aborted by HcclCommAbort", what, c->name,
                    c->rank);
            continue; /* the next pass cancels */
        }
        if (++idle < HC_SPIN_BEFORE_YIELD)
            continue;
        sched_yield();
        if (timeout > 0 && (idle & 63) == 0) {
            double t = now_s();
            if (start == 0)
                start = t;
            else if (t - start >= timeout) {
                char where[200] = "nothing";
                uint32_t i;
                for (i = 0; i < n; i++)
                    if (ex[i]->status == HCCL_E_AGAIN) {
                        hc_exec_describe_wait(ex[i], where, sizeof(where), NULL);
                        break;
                    }
                HC_ERROR(HC_SUB_COLL,
                         "%s timed out after %.1f s (HCCL_EXEC_TIMEOUT) on comm %s rank %u, "
                         "op seq %u, algorithm %s: waiting at %s", what, t - start, c->name,
                         c->rank, i < n ? ex[i]->seq : 0,
                         i < n && ex[i]->s->algo ? ex[i]->s->algo : "?", where);
                rc = HCCL_E_TIMEOUT;
            }
        }
    }
    if (rc != HCCL_SUCCESS)
        hc_comm_set_error(c, rc);
    return rc;
}

/* ---- schedule cache ------------------------------------------------- */

static hc_sched_entry_t *cache_get(hc_comm_t *c, const hc_sched_key_t *k)
{
    hc_sched_entry_t *victim = NULL;
    for (int i = 0; i < HC_SCHED_CACHE; i++) {
        hc_sched_entry_t *e = &c->cache[i];
        if (e->key.valid && !e->busy && memcmp(&e->key, k, sizeof(*k)) == 0) {
            e->last_use = ++c->use_clock;
            return e;
        }
        if (e->busy)
            continue;
        if (victim == NULL || !e->key.valid ||
            (victim->key.valid && e->last_use < victim->last_use))
            victim = e;
    }
    return victim; /* caller rebuilds it (NULL: all busy) */
}

static void scale_output(const hc_op_t *op, hc_comm_t *c)
{
    const hc_coll_args_t *a = &op->args;
    switch (a->coll) {
    case HC_COLL_ALLREDUCE:
    case HC_COLL_REDUCESCATTER:
        hc_reduce_scale(op->recv, a->count, a->dtype, c->nranks);
        break;
    case HC_COLL_REDUCE:
        if (a->rank == a->root)
            hc_reduce_scale(op->recv, a->count, a->dtype, c->nranks);
        break;
    default:
        break;
    }
}

int hc_op_begin(hc_comm_t *c, const hc_op_t *op_in, hc_running_t *r)
{
    memset(r, 0, sizeof(*r));
    r->c = c;
    r->op = *op_in;
    hc_op_t *op = &r->op;
    hc_coll_args_t *a = &op->args;
    a->rank = c->rank;
    a->nranks = c->nranks;
    a->topo = &c->view;
    a->deterministic = c->cfg.deterministic;
    if (a->op == HCCL_REDUCE_AVG)
        a->op = HCCL_REDUCE_SUM;
    const hc_algo_t *algo = hc_tune_select(c->tune, a);
    hc_sched_key_t k;
    memset(&k, 0, sizeof(k));
    k.coll = (uint8_t)a->coll;
    k.algo = (uint8_t)algo->id;
    k.dtype = (uint8_t)a->dtype;
    k.op = (uint8_t)a->op;
    k.in_place = (uint8_t)a->in_place;
    k.valid = 1;
    k.root = a->root;
    k.count = a->count;
    k.chunk = a->chunk_bytes;
    int rc;
    hc_sched_entry_t *ent = NULL;
    if (a->coll != HC_COLL_ALLTOALLV)
        ent = cache_get(c, &k);
    if (ent == NULL) { /* uncacheable, or every entry busy: a private one */
        ent = &r->local;
        r->use_local = 1;
    }
    if (memcmp(&ent->key, &k, sizeof(k)) != 0) {
        if (ent->key.valid)
            hc_sched_reset(&ent->sched);
        else
            hc_sched_init(&ent->sched, a->esize);
        ent->key.valid = 0;
        ent->sched.esize = a->esize;
        rc = algo->build(a, &ent->sched);
        if (rc == HCCL_SUCCESS)
            rc = ent->sched.err;
        if (rc != HCCL_SUCCESS) {
            HC_ERROR(HC_SUB_COLL, "%s: building the %s schedule failed: %d", op->api,
                     algo->name, rc);
            goto fail;
        }
        ent->sched.algo = algo->name;
        size_t need = hc_exec_ws_size(&ent->sched);
        if (need > ent->ws_size) {
            void *ws = realloc(ent->ws, need);
            if (ws == NULL) {
                rc = HCCL_E_MEMORY;
                goto fail;
            }
            ent->ws = ws;
            ent->ws_size = need;
        }
        if (!r->use_local)
            ent->key = k;
        ent->last_use = ++c->use_clock;
    }
    ent->busy = 1;
    r->ent = ent;
    r->tmp = hc_ctx_tmp_get(c->ctx, ent->sched.tmp_bytes, &rc);
    if (rc != HCCL_SUCCESS)
        goto fail;
    void *bufs[HC_NBUFS] = {op->send, op->recv, r->tmp};
    rc = hc_exec_start(&r->e, &ent->sched, bufs, &hc_ucx_ops, c, c->rank, c->id,
                       hc_comm_next_seq(c), a->dtype, a->op, ent->ws);
    if (rc != HCCL_SUCCESS)
        goto fail;
    if (HC_LOG_ON(HC_LOG_INFO, HC_SUB_COLL))
        hc_log_write(HC_LOG_INFO, HC_SUB_COLL, __FILE__, __LINE__,
                     "%s comm %s: count %llu %s, algorithm %s, %u steps", op->api, c->name,
                     (unsigned long long)a->count, hc_dtype_name(a->dtype), algo->name,
                     ent->sched.nsteps);
    return HCCL_SUCCESS;
fail:
    hc_op_end(r, rc);
    return rc;
}

void hc_op_end(hc_running_t *r, int rc)
{
    hc_comm_t *c = r->c;
    if (r->tmp)
        hc_ctx_tmp_put(c->ctx, r->tmp);
    r->tmp = NULL;
    if (r->ent)
        r->ent->busy = 0;
    if (r->use_local) {
        hc_sched_free(&r->local.sched);
        free(r->local.ws);
        r->use_local = 0;
    }
    r->ent = NULL;
    if (rc == HCCL_SUCCESS && r->op.user_op == HCCL_REDUCE_AVG)
        scale_output(&r->op, c);
    c->ops++;
}

int hc_comm_run(hc_comm_t *c, const hc_op_t *op)
{
    hc_running_t r;
    int rc = hc_op_begin(c, op, &r);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_exec_t *ex = &r.e;
    rc = hc_comm_wait(c, &ex, 1, op->api);
    hc_op_end(&r, rc);
    return rc;
}
