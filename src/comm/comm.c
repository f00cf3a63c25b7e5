/* src/comm/comm.c - communicators: create, rebuild, destroy, sequence numbers, the wait (see comm.h). */
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

#include "comm_id.h"
#include "src/features/elastic.h"
#include "src/base/handle.h"
#include "src/base/log.h"
#include "shm.h"
#include "rankmap.h"
#include "src/sched/stream.h"
#include "src/transport/transport_ucx.h"
#include "tune.h"
#include "src/base/util.h"
#include "src/exec/wait.h"
#include "src/features/window.h"
#include "topo/topo.h"

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

static void map_install(hc_comm_t *c, uint32_t nranks, hc_rankmap_t *m)
{
    c->nranks = nranks;
    c->peer = m->peer;
    c->eps.ctx = c->ctx;
    c->eps.peer = c->peer;
    c->p2p_sent = m->peer + nranks;
    c->p2p_recvd = m->peer + 2 * (size_t)nranks;
    c->topo = m->topo;
    c->tune = m->tune;
    c->view = m->view;
}

/* Forget every built schedule (membership change, destroy). */
static void drop_schedules(hc_comm_t *c)
{
    c->memo.ent = NULL;
    hc_cache_free(&c->cache);
}

/* Shared by every constructor: c->ctx and c->cfg are set. */
static int comm_finish(hc_comm_t *c, uint32_t rank, uint32_t nranks, const uint32_t *peers,
                       uint32_t id, const char *name, uint64_t uid0, int with_topo)
{
    hc_rankmap_t m;
    int rc = hc_comm_claim_id(c->ctx, id, name && name[0] ? name : "a new communicator");
    if (rc != HCCL_SUCCESS)
        return rc;
    rc = hc_rankmap_build(c->ctx, c->cfg, rank, nranks, peers, &m, with_topo);
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
        hc_rankmap_t m;
        rc = hc_rankmap_build(c->ctx, c->cfg, c->rank, c->nranks, c->peer, &m, 1);
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
    int rc = hc_comm_check_cards(cards, nranks);
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
    hc_rankmap_t m, old = {0};
    int rc = claimed ? HCCL_SUCCESS : hc_comm_claim_id(c->ctx, id, c->name);
    if (rc != HCCL_SUCCESS)
        return rc;
    rc = hc_rankmap_build(c->ctx, c->cfg, rank, nranks, peers, &m, 1);
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
    hc_rankmap_free(&old);
    drop_schedules(c);
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
    drop_schedules(c);
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
 * has failed (src/transport/transport_ucx.c marks it) and fail the operation. Only
 * an endpoint notices a death (keepalive), and a process that only ever
 * received from a peer has none: after a long wait (`watch`), create the
 * endpoint to the peer of a posted receive so that keepalive covers it. */
#define HC_IDLE_BEFORE_WATCH_S 0.005 /* idle seconds */
static int failed_peer(hc_comm_t *c, hc_exec_t *const *ex, uint32_t n, const char *what,
                       int watch)
{
    for (uint32_t i = 0; i < n; i++) {
        const hc_exec_t *e = ex[i];
        if (e->status != HCCL_E_AGAIN || e->tp != &hc_ucx_tp)
            continue;
        const hc_comm_t *tc = hc_comm_of_eps(e->tp_ctx);
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
            if (hc_peer_failed(p) == 0)
                continue;
            HC_ERROR(HC_SUB_COLL | HC_SUB_ELASTIC,
                     "%s on comm %s rank %u, op seq %u, algorithm %s: step %u/%u %s %s rank %u "
                     "failed: process %s:%d %s (%s)", what, tc->name, tc->rank,
                     e->seq, e->s->algo ? e->s->algo : "?", si, e->s->nsteps,
                     t->kind == HC_STEP_SEND ? "SEND" : t->kind == HC_STEP_WAIT ? "WAIT" : "RECV",
                     t->kind == HC_STEP_SEND ? "to" : "from", tp, p->card.host, p->card.pid,
                     p->departed ? "left before this step (it destroyed its communicators)"
                                 : "is unreachable",
                     HcclGetErrorString(p->failed));
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
         * known dead fails it now rather than at the deadline (one that
         * left had done its part: only the steps that wait on it fail) */
        if (e->seq == HC_TAG_P2P_SEQ || e->seq == HC_TAG_CTRL_SEQ)
            continue;
        for (uint32_t r = 0; r < tc->nranks; r++) {
            hc_peer_t *p = hc_comm_peer(tc, r);
            if (hc_peer_failed(p) == 0 || p->departed)
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

typedef struct {
    hc_exec_t *const *ex;
    uint32_t n;
} wait_arg_t;

static void describe_execs(void *p, char *buf, size_t len)
{
    const wait_arg_t *a = p;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->ex[i]->status == HCCL_E_AGAIN) {
            int at = snprintf(buf, len, "op seq %u, algorithm %s: ", a->ex[i]->seq,
                              a->ex[i]->s->algo ? a->ex[i]->s->algo : "?");
            if (at > 0 && (size_t)at < len)
                hc_exec_describe_wait(a->ex[i], buf + at, len - (size_t)at, NULL);
            return;
        }
}

/* At a deadline: for each UCX transfer still in flight, the worker that
 * carries it and what the workers hold unmatched from that peer on this
 * communicator (hc_ucx_explain; docs/DESIGN.md, "Failures and timeouts"). */
static void explain_stuck(hc_comm_t *c, hc_exec_t *const *ex, uint32_t n)
{
    /* the source rank and communicator fields of a tag (src/exec/exec.h) */
    const uint64_t peer_mask = ~((1ull << (64 - HC_TAG_SRC_BITS - HC_TAG_COMM_BITS)) - 1);
    pthread_mutex_lock(&c->ctx->lock);
    for (uint32_t i = 0; i < n; i++) {
        const hc_exec_t *e = ex[i];
        if (e->tp != &hc_ucx_tp || e->status != HCCL_E_AGAIN)
            continue;
        for (uint32_t k = 0; k < e->nposted; k++) {
            const uint32_t si = e->posted[k];
            const hc_step_t *t = &e->s->steps[si];
            const int send = t->kind == HC_STEP_SEND;
            if ((!send && t->kind != HC_STEP_RECV) || e->x[si].status != HCCL_E_AGAIN)
                continue;
            char what[256];
            snprintf(what, sizeof(what), "comm %s rank %u op seq %u: %s step %u %s rank %u, "
                     "%llu B", c->name, c->rank, e->seq, send ? "SEND" : "RECV", si,
                     send ? "to" : "from", t->peer, (unsigned long long)t->bytes);
            const uint64_t tag = hc_tag_make(send ? e->rank : t->peer, e->comm_id, e->seq, t->tag);
            hc_ucx_explain(e->tp_ctx, send, t->peer, tag, peer_mask, what);
        }
    }
    pthread_mutex_unlock(&c->ctx->lock);
}

HC_HOT int hc_comm_wait(hc_comm_t *c, hc_exec_t *const *ex, uint32_t n, const char *what)
{
    hc_context_t *ctx = c->ctx;
    int rc = HCCL_SUCCESS;
    /* Schedules without messages (shared staging only) need neither the
     * worker nor ctx->lock on the fast path; the worker is still driven
     * while idle (endpoint errors, keepalive). */
    int local = 1;
    for (uint32_t i = 0; i < n; i++)
        local &= ex[i]->s->nmsgs == 0;
    hc_wait_t w;
    hc_wait_begin(&w, c, what, 0); /* spin set at the first idle pass: most have none */
    wait_arg_t arg = {ex, n};
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
            hc_wait_moved(&w);
            run_spin = 0;
            if (yielding) {
                hc_exec_set_yielding(ex[0], 0);
                yielding = 0;
            }
            continue;
        }
        if (w.spin == 0)
            w.spin = hc_comm_spin_polls(c, local);
        if (w.idle + 1 >= w.spin) {
            if (((w.idle + 1) & 15) == 0) {
                pthread_mutex_lock(&ctx->lock); /* ctx->peers may be reallocated meanwhile */
                if (local)
                    hc_ctx_poll(ctx);
                rc = failed_peer(c, ex, n, what, hc_wait_idle_s(&w) >= HC_IDLE_BEFORE_WATCH_S);
                pthread_mutex_unlock(&ctx->lock);
                if (rc != HCCL_SUCCESS)
                    continue; /* the next pass cancels */
            }
            /* more ranks than cores: the rank we wait on is running on
             * another CPU, so keep ours rather than hand it to a rank that
             * can only wait too (two process hand-overs, ~10 us here) */
            if (n == 1 && run_spin < HC_SPIN_RUNNING_MAX && hc_exec_awaits_running(ex[0])) {
                run_spin++;
                w.idle++; /* an idle pass all the same (the failed-peer check above) */
                continue;
            }
            run_spin = 0;
            if (n == 1 && !yielding) {
                hc_exec_set_yielding(ex[0], 1);
                yielding = 1;
            }
        }
        rc = hc_wait_idle(&w, describe_execs, &arg);
        if (rc == HCCL_E_TIMEOUT)
            explain_stuck(c, ex, n);
        /* an error: the next pass cancels */
    }
    hc_wait_end(&w);
    if (rc != HCCL_SUCCESS)
        hc_comm_set_error(c, rc);
    return rc;
}
