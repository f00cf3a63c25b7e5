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
#include <unistd.h>

#include "elastic.h"
#include "fastlane.h"
#include "handle.h"
#include "log.h"
#include "reduce.h"
#include "shm.h"
#include "stream.h"
#include "transport_ucx.h"
#include "tune.h"
#include "util.h"
#include "window.h"
#include "../topo/topo.h"

/* Idle polls before yielding the core: with more ranks than cores a
 * spinning waiter starves the peer it waits for. */
#define HC_SPIN_BEFORE_YIELD 64
/* The same for shared-staging waits (hc_comm_spin_polls below; values
 * measured, docs/PERFORMANCE.md). */
#define HC_SPIN_LOCAL 512
#define HC_SPIN_OVERSUBSCRIBED 8
/* With more ranks than cores, idle polls in a row while every rank waited
 * on runs on another CPU (hc_exec_awaits_running) before yielding anyway:
 * a bound, should that rank stall (a poll here is ~0.1-0.3 us). */
#define HC_SPIN_RUNNING_MAX 4096u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

HC_HOT int hc_comm_get(HcclComm comm, const char *fn, hc_comm_t **out)
{
    if (comm == NULL) {
        HC_ERROR(HC_SUB_COLL, "%s: comm is NULL", fn);
        return HCCL_E_PTR;
    }
    *out = hc_handle_get(comm, HC_HANDLE_COMM);
    if (*out == NULL) {
        HC_ERROR(HC_SUB_COLL, "%s: comm %p is not a live communicator (destroyed, or not "
                 "an HcclComm)", fn, comm);
        return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
}

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
 * changes agree on ids the same way (src/split.c, src/elastic.c). */
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

/* A communicator's id taken (comm_finish, hc_comm_rebuild): a clash
 * means two creations in this process agreed on one id at once; the
 * communicator would receive the other one's messages, so fail it. */
static int claim_comm_id(hc_context_t *ctx, uint32_t id, const char *what)
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

/* The configuration, shared read-only by a communicator and its children. */
typedef struct hc_cfg_ref {
    int refs;
    hc_config_t cfg;
} hc_cfg_ref_t;

static hc_cfg_ref_t *cfg_ref_new(const hc_config_t *cfg)
{
    hc_cfg_ref_t *r = malloc(sizeof(*r));
    if (r == NULL)
        return NULL;
    if (hc_env_copy(&r->cfg, cfg) != HCCL_SUCCESS) {
        free(r);
        return NULL;
    }
    r->refs = 1;
    return r;
}

static void cfg_ref_put(hc_cfg_ref_t *r)
{
    if (r && __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        hc_env_free(&r->cfg);
        free(r);
    }
}

/* What a rank map costs: the map and the p2p counters (one block), the
 * topology model and the tuning table. Built aside, then installed, so
 * that a failed rebuild leaves the communicator as it was. */
typedef struct {
    uint32_t *peer; /* 3 x nranks: peer, p2p_sent, p2p_recvd */
    struct hc_topo *topo;
    struct hc_tune *tune;
    hc_topo_view_t view;
} comm_map_t;

static void map_free(comm_map_t *m)
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
static int map_build(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank, uint32_t nranks,
                     const uint32_t *peers, comm_map_t *m, int with_topo)
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
        map_free(m);
    return rc;
}

static void map_install(hc_comm_t *c, uint32_t nranks, comm_map_t *m)
{
    c->nranks = nranks;
    c->peer = m->peer;
    c->p2p_sent = m->peer + nranks;
    c->p2p_recvd = m->peer + 2 * (size_t)nranks;
    c->topo = m->topo;
    c->tune = m->tune;
    c->view = m->view;
}

/* Shared by every constructor: c->ctx and c->cfg are set. */
static int comm_finish(hc_comm_t *c, uint32_t rank, uint32_t nranks, const uint32_t *peers,
                       uint32_t id, const char *name, uint64_t uid0, int with_topo)
{
    comm_map_t m;
    int rc = claim_comm_id(c->ctx, id, name && name[0] ? name : "a new communicator");
    if (rc != HCCL_SUCCESS)
        return rc;
    rc = map_build(c->ctx, c->cfg, rank, nranks, peers, &m, with_topo);
    if (rc != HCCL_SUCCESS) {
        hc_ctx_release_id(c->ctx, id);
        return rc;
    }
    map_install(c, nranks, &m);
    c->rank = rank;
    c->id = id;
    c->id_claimed = 1;
    if (name && name[0])
        snprintf(c->name, sizeof(c->name), "%s", name);
    else
        snprintf(c->name, sizeof(c->name), "hcomm-%05x-%08llx", id,
                 (unsigned long long)(uid0 & 0xffffffffu));
    c->handle = hc_handle_new(HC_HANDLE_COMM, c);
    if (c->handle == NULL) {
        HC_ERROR(HC_SUB_INIT, "communicator %s: no handle for it (out of memory, or 2^24 "
                 "communicators and streams live)", c->name);
        return HCCL_E_MEMORY; /* the caller's hc_comm_destroy gives the id back */
    }
    HC_INFO(HC_SUB_INIT, "communicator %s: rank %u of %u, id %u%s", c->name, rank, nranks, id,
            with_topo ? "" : " (topology at its first operation)");
    hc_comm_registry_add(c); /* HcclCommGetStatus finds it by name */
    return HCCL_SUCCESS;
}

/* A split's topology model and tuning table cost more than the split
 * itself (the model is rebuilt from the cards: several us), so
 * hc_comm_create_map leaves them to the first operation; a communicator
 * that never runs needs neither. Same cards, same result on every rank. */
HC_HOT int hc_comm_topo(hc_comm_t *c)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    if (__atomic_load_n(&c->topo, __ATOMIC_ACQUIRE) != NULL)
        return HCCL_SUCCESS;
    pthread_mutex_lock(&lock); /* the caller and the progress thread may race here */
    int rc = HCCL_SUCCESS;
    if (c->topo == NULL) {
        comm_map_t m;
        rc = map_build(c->ctx, c->cfg, c->rank, c->nranks, c->peer, &m, 1);
        if (rc == HCCL_SUCCESS) {
            free(m.peer); /* c keeps its own map */
            c->tune = m.tune;
            c->view = m.view;
            __atomic_store_n(&c->topo, m.topo, __ATOMIC_RELEASE);
        } else {
            HC_ERROR(HC_SUB_TOPO, "communicator %s: building its topology failed: %s", c->name,
                     HcclGetErrorString(rc));
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int hc_comm_create(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank,
                   uint32_t nranks, const hc_card_t *cards, uint32_t id,
                   const char *name, hc_comm_t **out)
{
    int rc = check_cards(cards, nranks);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_comm_t *c = calloc(1, sizeof(*c));
    uint32_t *peers = calloc(nranks, sizeof(uint32_t));
    if (c == NULL || peers == NULL) {
        free(c);
        free(peers);
        return HCCL_E_MEMORY;
    }
    c->ctx = ctx;
    rc = HCCL_E_MEMORY;
    c->cfg_ref = cfg_ref_new(cfg);
    if (c->cfg_ref == NULL)
        goto fail;
    c->cfg = &c->cfg_ref->cfg;
    pthread_mutex_lock(&ctx->lock);
    for (uint32_t i = 0; i < nranks; i++) {
        peers[i] = hc_ctx_add_peer(ctx, &cards[i]);
        if (peers[i] == UINT32_MAX) {
            pthread_mutex_unlock(&ctx->lock);
            goto fail;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    rc = comm_finish(c, rank, nranks, peers, id, name, cards[0].uid, 1);
    if (rc != HCCL_SUCCESS)
        goto fail;
    free(peers);
    *out = c;
    return HCCL_SUCCESS;
fail:
    free(peers);
    hc_comm_destroy(c);
    return rc;
}

int hc_comm_create_map(hc_comm_t *parent, const hc_config_t *cfg, uint32_t rank,
                       uint32_t nranks, const uint32_t *peers, uint32_t id,
                       const char *name, hc_comm_t **out)
{
    hc_comm_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return HCCL_E_MEMORY;
    c->ctx = parent->ctx;
    if (cfg) {
        c->cfg_ref = cfg_ref_new(cfg);
        if (c->cfg_ref == NULL) {
            free(c);
            return HCCL_E_MEMORY;
        }
    } else {
        c->cfg_ref = parent->cfg_ref;
        __atomic_add_fetch(&c->cfg_ref->refs, 1, __ATOMIC_RELAXED);
    }
    c->cfg = &c->cfg_ref->cfg;
    int rc = comm_finish(c, rank, nranks, peers, id, name, parent->ctx->self.uid, 0);
    if (rc != HCCL_SUCCESS) {
        hc_comm_destroy(c);
        return rc;
    }
    *out = c;
    return HCCL_SUCCESS;
}

static void cache_drop(hc_comm_t *c)
{
    c->memo.ent = NULL;
    if (c->cache == NULL)
        return;
    for (int i = 0; i < HC_SCHED_CACHE; i++) {
        if (c->cache[i].key.valid || c->cache[i].ws) {
            hc_sched_free(&c->cache[i].sched);
            free(c->cache[i].ws);
        }
    }
    free(c->cache);
    c->cache = NULL;
}

int hc_comm_rebuild(hc_comm_t *c, uint32_t rank, uint32_t nranks, const uint32_t *peers,
                    uint32_t id, int claimed)
{
    /* stream operations of the old membership finish first (after a
     * failure they end with its error, at once after HcclCommAbort) */
    hc_stream_comm_fini(c);
    if (c->cache)
        for (int i = 0; i < HC_SCHED_CACHE; i++)
            if (c->cache[i].busy) {
                HC_ERROR(HC_SUB_ELASTIC, "communicator %s: membership change while an "
                         "operation is in flight (synchronize its streams first)", c->name);
                return HCCL_E_AGAIN;
            }
    comm_map_t m, old = {0};
    int rc = claimed ? HCCL_SUCCESS : claim_comm_id(c->ctx, id, c->name);
    if (rc != HCCL_SUCCESS)
        return rc;
    rc = map_build(c->ctx, c->cfg, rank, nranks, peers, &m, 1);
    if (rc != HCCL_SUCCESS) {
        if (!claimed) /* the caller's claim is the caller's to give back */
            hc_ctx_release_id(c->ctx, id);
        return rc;
    }
    if (c->id_claimed)
        hc_ctx_release_id(c->ctx, c->id);
    c->id_claimed = 1;
    old.peer = c->peer;
    old.topo = c->topo;
    old.tune = c->tune;
    map_install(c, nranks, &m);
    map_free(&old);
    cache_drop(c);
    hc_win_comm_fini(c); /* registrations name ranks of the old map */
    hc_shm_comm_release(c); /* the next operation sets up staging for the new map */
    c->rank = rank;
    c->id = id;
    c->seq = 0;
    c->epoch++;
    c->aborted = 0;
    c->async_error = HCCL_SUCCESS;
    return HCCL_SUCCESS;
}

void hc_comm_destroy(hc_comm_t *c)
{
    if (c == NULL)
        return;
    hc_handle_retire(c->handle); /* before the memory goes: a stale handle stays refused */
    hc_stream_comm_fini(c); /* its stream operations finish first */
    hc_comm_registry_remove(c);
    if (c->id_claimed)
        hc_ctx_release_id(c->ctx, c->id);
    hc_elastic_free(c);
    cache_drop(c);
    hc_win_comm_fini(c);
    hc_shm_comm_release(c);
    if (c->tune)
        hc_tune_destroy(c->tune);
    if (c->topo)
        hc_topo_destroy(c->topo);
    cfg_ref_put(c->cfg_ref);
    free(c->peer); /* p2p_sent and p2p_recvd live in the same block */
    free(c);
}

HC_HOT uint32_t hc_comm_next_seq(hc_comm_t *c)
{
    uint32_t s = c->seq;
    if (c->streams) { /* a queued stream operation may still hold this value */
        hc_stream_wait_seq(c, s);
        hc_stream_note_ticket(c);
    }
    c->seq = (c->seq + 1) % HC_TAG_CTRL_SEQ; /* never the p2p or control value */
    return s;
}

uint32_t hc_comm_next_seq_begun(hc_comm_t *c)
{
    uint32_t s = hc_comm_next_seq(c);
    uint64_t ticket = hc_stream_last_ticket(c);
    hc_stream_wait_turn(c, ticket); /* later operations wait for every earlier turn */
    hc_stream_begun(c, ticket);
    return s;
}

void hc_comm_set_error(hc_comm_t *c, int rc)
{
    __sync_bool_compare_and_swap(&c->async_error, HCCL_SUCCESS, rc);
}

/* A receive posted from a dead peer never completes by itself
 * (UCX-FACTS.md): when idle, look for a posted step whose peer's endpoint
 * has failed (src/transport_ucx.c marks it) and fail the operation. Only
 * an endpoint notices a death (keepalive), and a process that only ever
 * received from a peer has none: after a long wait (`watch`), create the
 * endpoint to the peer of a posted receive so that keepalive covers it. */
#define HC_IDLE_BEFORE_WATCH 4096 /* idle polls (with sched_yield: several ms) */
static int failed_peer(hc_comm_t *c, hc_exec_t *const *ex, uint32_t n, const char *what,
                       int watch)
{
    for (uint32_t i = 0; i < n; i++) {
        const hc_exec_t *e = ex[i];
        if (e->status != HCCL_E_AGAIN || e->tp != &hc_ucx_ops)
            continue;
        const hc_comm_t *tc = e->tctx;
        for (uint32_t k = 0; k < e->nposted; k++) {
            const uint32_t si = e->posted[k];
            const hc_step_t *t = &e->s->steps[si];
            /* the peer it waits on (a WAIT on every rank: the one it is at) */
            const uint32_t tp = e->x[si].peer;
            hc_peer_t *p = hc_comm_peer(tc, tp);
            if (e->x[si].status != HCCL_E_AGAIN)
                continue;
            if (watch)
                hc_ctx_watch(c->ctx, tc->peer[tp]);
            if (p->failed == 0)
                continue;
            HC_ERROR(HC_SUB_COLL | HC_SUB_ELASTIC,
                     "%s on comm %s rank %u, op seq %u, algorithm %s: step %u/%u %s %s rank %u "
                     "failed: process %s:%d is unreachable (%s)", what, tc->name, tc->rank,
                     e->seq, e->s->algo ? e->s->algo : "?", si, e->s->nsteps,
                     t->kind == HC_STEP_SEND ? "SEND" : t->kind == HC_STEP_WAIT ? "WAIT" : "RECV",
                     t->kind == HC_STEP_SEND ? "to" : "from", tp, p->card.host,
                     p->card.pid, HcclGetErrorString(p->failed));
            return p->failed;
        }
        /* HcclCommRemoveMember's agreement over the survivors it knows:
         * one more failure means the others may know a larger set (src/
         * elastic.c), so it stops and starts again over that set */
        if (e->seq == HC_TAG_CTRL_SEQ && tc->remove_known &&
            hc_elastic_failed_count(tc) > tc->remove_known) {
            HC_WARN(HC_SUB_ELASTIC, "%s on comm %s rank %u: another member failed meanwhile",
                    what, tc->name, tc->rank);
            return HCCL_E_REMOTE;
        }
        /* a collective cannot complete without every member: a member
         * known dead fails it now rather than at the deadline */
        if (e->seq == HC_TAG_P2P_SEQ || e->seq == HC_TAG_CTRL_SEQ)
            continue;
        for (uint32_t r = 0; r < tc->nranks; r++) {
            const hc_peer_t *p = hc_comm_peer(tc, r);
            if (p->failed == 0)
                continue;
            HC_ERROR(HC_SUB_COLL | HC_SUB_ELASTIC,
                     "%s on comm %s rank %u, op seq %u, algorithm %s: member rank %u (process "
                     "%s:%d) failed (%s); giving up", what, tc->name, tc->rank, e->seq,
                     e->s->algo ? e->s->algo : "?", r, p->card.host, p->card.pid,
                     HcclGetErrorString(p->failed));
            return p->failed;
        }
    }
    return HCCL_SUCCESS;
}

/* More ranks on a host than CPUs online there (the same answer on every
 * rank of the host: it depends on neither the rank nor its binding). */
int hc_comm_oversubscribed(const hc_comm_t *c)
{
    static long cores; /* the progress thread may ask too */
    long k = __atomic_load_n(&cores, __ATOMIC_RELAXED);
    if (k == 0) {
        k = sysconf(_SC_NPROCESSORS_ONLN);
        k = k > 0 ? k : 1;
        __atomic_store_n(&cores, k, __ATOMIC_RELAXED);
    }
    uint32_t per_host = c->view.nnodes > 1 ? c->nranks / c->view.nnodes : c->nranks;
    return per_host > (uint32_t)k;
}

/* Empty polls before the waiter starts yielding the core. Shared-staging
 * polls are ~20 ns, UCX progress calls ~10x that; with more ranks on a
 * host than cores a spinning waiter only delays the rank it waits for. */
HC_HOT unsigned hc_comm_spin_polls(const hc_comm_t *c, int local)
{
    if (hc_comm_oversubscribed(c))
        return HC_SPIN_OVERSUBSCRIBED;
    return local ? HC_SPIN_LOCAL : HC_SPIN_BEFORE_YIELD;
}

HC_HOT int hc_comm_wait(hc_comm_t *c, hc_exec_t *const *ex, uint32_t n, const char *what)
{
    hc_context_t *ctx = c->ctx;
    double timeout = c->cfg->exec_timeout, start = 0;
    if (c->wait_scale > 1)
        timeout *= c->wait_scale;
    if (c->wait_limit_s > 0 && (timeout <= 0 || c->wait_limit_s < timeout))
        timeout = c->wait_limit_s;
    unsigned idle = 0;
    int rc = HCCL_SUCCESS;
    /* Schedules without messages (shared staging only) need neither the
     * worker nor ctx->lock on the fast path; the worker is still driven
     * while idle (endpoint errors, keepalive). */
    int local = 1;
    for (uint32_t i = 0; i < n; i++)
        local &= ex[i]->s->nmsgs == 0;
    unsigned spin = 0; /* set at the first idle pass: most small operations have none */
    unsigned run_spin = 0; /* idle polls in a row on a rank running elsewhere */
    int yielding = 0;      /* said so (hc_exec_set_yielding) */
    for (;;) {
        uint32_t pending = 0, moved = 0;
        if (!local)
            pthread_mutex_lock(&ctx->lock);
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t before = ex[i]->ndone;
            int r = hc_exec_progress(ex[i]);
            moved += ex[i]->ndone != before;
            if (r == HCCL_E_AGAIN)
                pending++;
            else if (r != HCCL_SUCCESS && rc == HCCL_SUCCESS)
                rc = r;
        }
        if (rc != HCCL_SUCCESS || pending == 0) {
            if (rc != HCCL_SUCCESS) {
                if (local)
                    pthread_mutex_lock(&ctx->lock);
                for (uint32_t i = 0; i < n; i++)
                    hc_exec_cancel(ex[i], rc);
                if (local)
                    pthread_mutex_unlock(&ctx->lock);
            }
            if (!local)
                pthread_mutex_unlock(&ctx->lock);
            break;
        }
        unsigned events = local ? moved : hc_ctx_poll(ctx);
        if (!local)
            pthread_mutex_unlock(&ctx->lock);
        if (events) {
            idle = 0;
            run_spin = 0;
            if (yielding) {
                hc_exec_set_yielding(ex[0], 0);
                yielding = 0;
            }
            continue;
        }
        if (c->aborted) {
            rc = HCCL_E_SUSPENDING;
            HC_WARN(HC_SUB_COLL, "%s on %s rank %u: aborted by HcclCommAbort", what, c->name,
                    c->rank);
            continue; /* the next pass cancels */
        }
        if (spin == 0)
            spin = hc_comm_spin_polls(c, local);
        if (++idle < spin)
            continue;
        if ((idle & 15) == 0) {
            pthread_mutex_lock(&ctx->lock); /* ctx->peers may be reallocated meanwhile */
            if (local)
                hc_ctx_poll(ctx);
            rc = failed_peer(c, ex, n, what, idle >= HC_IDLE_BEFORE_WATCH);
            pthread_mutex_unlock(&ctx->lock);
            if (rc != HCCL_SUCCESS)
                continue; /* the next pass cancels */
        }
        /* more ranks than cores: the rank we wait on is running on another
         * CPU, so keep ours rather than hand it to a rank that can only
         * wait too (two process hand-overs, ~10 us here) */
        if (n == 1 && run_spin < HC_SPIN_RUNNING_MAX && hc_exec_awaits_running(ex[0]))
            run_spin++;
        else {
            if (n == 1 && !yielding) {
                hc_exec_set_yielding(ex[0], 1);
                yielding = 1;
            }
            run_spin = 0;
            sched_yield();
        }
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
                         "%s timed out after %.1f s (HCCL_EXEC_TIMEOUT%s) on comm %s rank %u, "
                         "op seq %u, algorithm %s: waiting at %s", what, t - start,
                         c->wait_scale > 1 ? ", scaled for this call" : "", c->name,
                         c->rank, i < n ? ex[i]->seq : 0,
                         i < n && ex[i]->s->algo ? ex[i]->s->algo : "?", where);
                pthread_mutex_lock(&ctx->lock);
                for (i = 0; i < n; i++)
                    if (ex[i]->status == HCCL_E_AGAIN)
                        hc_ucx_explain_wait(ex[i]);
                pthread_mutex_unlock(&ctx->lock);
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
    if (c->cache == NULL) { /* a communicator that never runs costs no cache */
        c->cache = calloc(HC_SCHED_CACHE, sizeof(*c->cache));
        if (c->cache == NULL)
            return NULL; /* the caller uses a private entry */
    }
    for (int i = 0; i < HC_SCHED_CACHE; i++) {
        hc_sched_entry_t *e = &c->cache[i];
        if (e->key.valid && !e->busy && memcmp(&e->key, k, sizeof(*k)) == 0) {
            e->last_use = ++c->use_clock;
            return e;
        }
        if (e->busy)
            continue;
        /* the first free entry, else the least recently used: new keys
         * fill the table from the front, so a lookup stops early */
        if (victim == NULL ||
            (victim->key.valid && (!e->key.valid || e->last_use < victim->last_use)))
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

/* What op_begin fills in before selecting. */
static int prepare_args(hc_comm_t *c, hc_coll_args_t *a)
{
    int trc = hc_comm_topo(c); /* a split's first operation builds it */
    if (trc != HCCL_SUCCESS)
        return trc;
    a->rank = c->rank;
    a->nranks = c->nranks;
    a->topo = &c->view;
    a->deterministic = c->cfg->deterministic;
    if (a->op == HCCL_REDUCE_AVG)
        a->op = HCCL_REDUCE_SUM;
    if (c->shm_state == 0) /* collective: every rank's first operation on c */
        hc_shm_comm_setup(c);
    a->shm_bytes = c->shm ? c->shm->half_bytes : 0;
    a->cma = c->shm ? c->shm->cma : 0;
    a->oversub = hc_comm_oversubscribed(c);
    a->registered = c->wins != NULL;
    return HCCL_SUCCESS;
}

const hc_algo_t *hc_comm_select(hc_comm_t *c, hc_coll_args_t *a)
{
    if (prepare_args(c, a) != HCCL_SUCCESS)
        return NULL;
    hc_comm_lock(c);
    const hc_algo_t *algo = hc_tune_select(c->tune, a);
    hc_comm_unlock(c);
    return algo;
}

static int op_begin(hc_comm_t *c, const hc_op_t *op_in, hc_running_t *r, uint32_t seq)
{
    /* Only what hc_op_end reads before the executor exists: clearing the
     * whole ~1 KB (the private entry, the executor) cost as much as the
     * rest of a small operation's set-up. */
    r->c = c;
    r->op = *op_in;
    r->ent = NULL;
    r->use_local = 0;
    r->tmp = NULL;
    r->e.trace = NULL;
    r->e.half = NULL;
    hc_op_t *op = &r->op;
    hc_coll_args_t *a = &op->args;
    int trc = prepare_args(c, a);
    if (trc != HCCL_SUCCESS)
        return trc;
    hc_comm_lock(c); /* the cache is shared with the progress thread (src/stream.h) */
    const hc_sched_key_t *mk = &c->memo.key;
    const hc_algo_t *algo;
    hc_sched_key_t k;
    int rc;
    hc_sched_entry_t *ent = NULL;
    if (hc_comm_memo_is(c, a, (uint8_t)a->op, (uint8_t)a->registered)) {
        /* the same operation as last time: the same algorithm and entry */
        algo = c->memo.algo;
        k = *mk;
        a->chunk_bytes = k.chunk;
        a->nt_recv = k.nt;
        ent = c->memo.ent;
        ent->last_use = ++c->use_clock;
    } else {
        algo = hc_tune_select(c->tune, a);
        memset(&k, 0, sizeof(k));
        k.coll = (uint8_t)a->coll;
        k.algo = (uint8_t)algo->id;
        k.dtype = (uint8_t)a->dtype;
        k.op = (uint8_t)a->op;
        k.in_place = (uint8_t)a->in_place;
        k.iov = (uint8_t)a->iov;
        k.nt = (uint8_t)a->nt_recv;
        k.reg = (uint8_t)a->registered;
        k.valid = 1;
        k.root = a->root;
        k.count = a->count;
        k.chunk = a->chunk_bytes;
        if (a->coll != HC_COLL_ALLTOALLV)
            ent = cache_get(c, &k);
    }
    if (ent == NULL) { /* uncacheable, or every entry busy: a private one */
        ent = &r->local;
        hc_zero(ent, sizeof(*ent));
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
            goto fail_locked;
        }
        ent->sched.algo = algo->name;
        ent->sched.nt_recv = (uint8_t)a->nt_recv;
        ent->xnode_bytes = hc_topo_xnode_bytes(c->topo, c->rank, &ent->sched);
        size_t need = hc_exec_ws_size(&ent->sched);
        if (need > ent->ws_size) {
            void *ws = realloc(ent->ws, need);
            if (ws == NULL) {
                rc = HCCL_E_MEMORY;
                goto fail_locked;
            }
            ent->ws = ws;
            ent->ws_size = need;
        }
        if (!r->use_local)
            ent->key = k;
        ent->last_use = ++c->use_clock;
    }
    if (!r->use_local) {
        c->memo.key = k;
        c->memo.ent = ent;
        c->memo.algo = algo;
    }
    ent->busy = 1;
    r->ent = ent;
    hc_comm_unlock(c);
    r->tmp = hc_ctx_tmp_get(c->ctx, ent->sched.tmp_bytes, &rc);
    if (rc != HCCL_SUCCESS)
        goto fail;
    void *bufs[HC_NBUFS] = {op->send, op->recv, r->tmp};
    rc = hc_exec_start(&r->e, &ent->sched, bufs, &hc_ucx_ops, c, c->rank, c->id, seq, a->dtype,
                       a->op, ent->ws);
    if (rc != HCCL_SUCCESS)
        goto fail;
    hc_exec_set_args(&r->e, a);
    if (op->resume_at) { /* (the fast lane took the epoch: hc_shm_bind takes it again) */
        if (!ent->sched.fast || op->resume_at >= ent->sched.nsteps ||
            ent->sched.steps[op->resume_at].kind != HC_STEP_WAIT) {
            HC_ERROR(HC_SUB_COLL, "%s: the fast lane stopped at step %u, no WAIT of %s's schedule",
                     op->api, op->resume_at, algo->name);
            rc = HCCL_E_INTERNAL;
            goto fail;
        }
        hc_exec_resume_at(&r->e, op->resume_at);
    }
    if (op->iov && (rc = hc_exec_set_iov(&r->e, op->iov, op->niov)) != HCCL_SUCCESS) {
        HC_ERROR(HC_SUB_COLL, "%s: algorithm %s cannot run on a scatter/gather list", op->api,
                 algo->name);
        rc = HCCL_E_INTERNAL;
        goto fail;
    }
    if (ent->sched.seg_bytes) {
        if (c->shm == NULL) {
            HC_ERROR(HC_SUB_COLL, "%s: algorithm %s needs shared staging, which comm %s lacks",
                     op->api, algo->name, c->name);
            rc = HCCL_E_INTERNAL;
            goto fail;
        }
        hc_shm_bind(c, &r->e);
    }
    if (hc_trace_on)
        hc_task_trace_begin(r, algo->name, r->e.seq);
    if (HC_LOG_ON(HC_LOG_INFO, HC_SUB_COLL))
        hc_log_write(HC_LOG_INFO, HC_SUB_COLL, __FILE__, __LINE__,
                     "%s comm %s: count %llu %s, algorithm %s, %u steps, %llu B to other "
                     "nodes", op->api, c->name, (unsigned long long)a->count,
                     hc_dtype_name(a->dtype), algo->name, ent->sched.nsteps,
                     (unsigned long long)ent->xnode_bytes);
    return HCCL_SUCCESS;
fail_locked:
    hc_comm_unlock(c);
fail:
    hc_op_end(r, rc);
    return rc;
}

/* Once a communicator has had stream operations, its operations begin in
 * program order (their turn, src/stream.h): what begin decides (shared
 * staging epochs, src/shm.h) is then the same on every rank. */
HC_HOT int hc_op_begin(hc_comm_t *c, const hc_op_t *op_in, hc_running_t *r)
{
    uint64_t ticket = op_in->has_seq ? op_in->ticket : HC_NO_TICKET;
    uint32_t seq = op_in->has_seq ? op_in->seq : hc_comm_next_seq(c);
    if (!op_in->has_seq)
        ticket = hc_stream_last_ticket(c);
    hc_stream_wait_turn(c, ticket);
    int rc = op_begin(c, op_in, r, seq);
    hc_stream_begun(c, ticket);
    return rc;
}

HC_HOT void hc_op_end(hc_running_t *r, int rc)
{
    hc_comm_t *c = r->c;
    const hc_trace_op_t *tr = r->e.trace;
    r->e.trace = NULL;
    if (r->e.half) /* the next operation may use the staging */
        hc_shm_op_end(c, &r->e);
    if (r->tmp)
        hc_ctx_tmp_put(c->ctx, r->tmp);
    r->tmp = NULL;
    hc_comm_lock(c);
    if (r->ent)
        r->ent->busy = 0;
    c->ops++;
    if (r->ent && rc == HCCL_SUCCESS) {
        c->xnode_last = r->ent->xnode_bytes;
        c->xnode_total += r->ent->xnode_bytes;
    }
    hc_comm_unlock(c);
    if (r->use_local) {
        hc_sched_free(&r->local.sched);
        free(r->local.ws);
        r->use_local = 0;
    }
    r->ent = NULL;
    if (rc == HCCL_SUCCESS && r->op.user_op == HCCL_REDUCE_AVG)
        scale_output(&r->op, c);
    if (tr)
        hc_trace_op_end(tr, rc);
}

HC_HOT void hc_op_end_inline(hc_comm_t *c, const hc_op_t *op, int rc)
{
    c->ops++;
    c->xnode_last = 0; /* (shared staging only) */
    if (rc == HCCL_SUCCESS && op->user_op == HCCL_REDUCE_AVG)
        scale_output(op, c);
}

HC_HOT void hc_op_init(hc_op_t *op, const char *api, hc_coll_t coll, uint64_t count,
                       HcclDataType dt, size_t esize, HcclReduceOp rop, void *send, void *recv)
{
    hc_zero(op, sizeof(*op)); /* not an inlined rep stos (src/util.h) */
    op->api = api;
    op->args.coll = coll;
    op->args.count = count;
    op->args.dtype = dt;
    op->args.esize = esize;
    op->args.op = rop;
    op->user_op = rop;
    op->send = send;
    op->recv = recv;
}

HC_HOT int hc_comm_run(hc_comm_t *c, const hc_op_t *op)
{
    int rc;
    if (hc_fastlane_run(c, op, &rc)) /* a tiny repeat, inline (src/fastlane.h) */
        return rc;
    return hc_comm_run_general(c, op);
}

HC_HOT int hc_comm_run_general(hc_comm_t *c, const hc_op_t *op)
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
