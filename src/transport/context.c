/* src/transport/context.c - the per-process context (see context.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "context.h"
#include "src/sched/gpu_coll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <hccl/hccl.h>

#include "src/base/gpu.h"
#include "src/base/log.h"
#include "src/comm/shm.h"
#include "src/sched/stream.h"
#include "src/exec/trace.h"
#include "transport_ucx.h"
#include "src/base/util.h"
#include "topo/topo.h"

static pthread_mutex_t g_ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static hc_context_t *g_ctx;
/* Counters outlive contexts so a test can read them after destroying. */
static uint64_t g_eps, g_bufs, g_bytes;

/* The contexts of one HcclCommInitAll (context.h). */
typedef struct hc_ctx_family {
    uint32_t n;    /* contexts */
    uint32_t live; /* contexts that still have references */
    hc_context_t *ctx[];
} hc_ctx_family_t;

static uint64_t make_uid(void)
{
    static uint64_t made; /* contexts of one process made in one clock tick */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char host[HC_HOST_MAX] = "";
    gethostname(host, sizeof(host) - 1);
    uint64_t h = 1469598103934665603ull; /* FNV-1a over host, pid, time */
    for (const char *p = host; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    uint64_t mix[4] = {(uint64_t)getpid(), (uint64_t)ts.tv_sec, (uint64_t)ts.tv_nsec,
                       __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED)};
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 8; b++)
            h = (h ^ ((mix[i] >> (8 * b)) & 0xff)) * 1099511628211ull;
    return h ? h : 1;
}

static void ctx_destroy(hc_context_t *ctx)
{
    hc_engine_destroy(ctx); /* the progress thread stops before the worker goes */
    hc_trace_flush();
    hc_shm_ctx_fini(ctx); /* remote keys and our segment, before the endpoints */
    ctx->closing = 1;
    /* Requests abandoned at a timeout (a send the peer never read) keep
     * their endpoint busy: close those endpoints by force, which completes
     * the requests, so the worker is destroyed with none outstanding. A
     * family's contexts go together, their communicators all destroyed:
     * nothing is in flight, and no sibling's worker would answer a
     * graceful close. */
    int force = ctx->n_detached > 0 || ctx->family != NULL;
    /* goodbyes first (transport_ucx.c, "leaving"), each flushed by its
     * endpoint's graceful close below */
    for (uint32_t i = 0; i < ctx->npeers && !force; i++)
        hc_ucx_say_bye(ctx, i);
    for (uint32_t i = 0; i < ctx->npeers; i++) {
        if (ctx->peers[i]->ep)
            hc_ucx_ep_close(ctx, ctx->peers[i]->ep, force || ctx->peers[i]->failed != 0);
        free(ctx->peers[i]);
    }
    for (int i = 0; i < 100000 && ctx->n_detached > 0; i++)
        hc_ctx_poll(ctx);
    free(ctx->peers);
    free(ctx->ids);
    while (ctx->free_tmp) { /* tmp_hdr_t chain (see below) */
        hc_tmpbuf_t *b = ctx->free_tmp;
        ctx->free_tmp = b->next;
        munmap(b, b->size);
    }
    hc_ucx_fini(ctx);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

/* A new context (g_ctx_lock held). */
static int ctx_new(const hc_config_t *env, hc_context_t **out)
{
    int rc;
    hc_context_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        HC_ERROR(HC_SUB_INIT, "cannot allocate a context");
        return HCCL_E_MEMORY;
    }
    pthread_mutex_init(&ctx->lock, NULL);
    ctx->env = env;
    ctx->next_comm_id = 1;
    ctx->wfd = ctx->wfd_tcp = -1;
    ctx->tp = &hc_ucx_tp;
    hc_trace_setup(env);
    rc = hc_ucx_init(ctx);
    if (rc != HCCL_SUCCESS) {
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return rc;
    }
    hc_card_t *me = &ctx->self;
    me->magic = HC_CARD_MAGIC;
    me->version = HCOMM_VERSION_CODE;
    me->abi = HC_ABI;
    me->uid = make_uid();
    me->pid = (int32_t)getpid();
#ifdef PR_SET_PTRACER
    /* Under Yama's ptrace_scope 1 only an ancestor may read this process's
     * memory; local peers' single-copy reads (process_vm_readv, src/comm/shm.c)
     * need it too, as Open MPI's vader arranges the same way. */
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    gethostname(me->host, sizeof(me->host) - 1);
    hc_topo_local_facts(env, me->topo, sizeof(me->topo));
    rc = hc_shm_ctx_init(ctx);
    if (rc != HCCL_SUCCESS) {
        hc_ucx_fini(ctx);
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return rc;
    }
    ctx->refs = 1;
    *out = ctx;
    HC_INFO(HC_SUB_INIT, "context created: host %s pid %d uid %016llx, UCX %s",
            me->host, me->pid, (unsigned long long)me->uid, ucp_get_version_string());
#ifdef HAVE_CUDA
    if (!hc_cuda_available())
        HC_INFO(HC_SUB_INIT, "built with CUDA but no usable GPU here: every buffer takes the "
                "host path");
    else
        HC_INFO(HC_SUB_INIT, "CUDA device found: device buffers are staged through pinned "
                "host memory (docs/GPU.md); this UCX %s CUDA memory",
                hc_gpu_ucx_has_cuda(ctx->ucp) ? "can move" : "cannot move");
#endif
    return HCCL_SUCCESS;
}

int hc_ctx_acquire(hc_context_t **out)
{
    const hc_config_t *env;
    int rc = hc_env_global(&env);
    if (rc != HCCL_SUCCESS)
        return rc;
    pthread_mutex_lock(&g_ctx_lock);
    if (g_ctx) {
        g_ctx->refs++;
        *out = g_ctx;
    } else {
        rc = ctx_new(env, &g_ctx);
        if (rc == HCCL_SUCCESS)
            *out = g_ctx;
    }
    pthread_mutex_unlock(&g_ctx_lock);
    return rc;
}

int hc_ctx_create_family(uint32_t n, hc_context_t **ctxs)
{
    const hc_config_t *env;
    int rc = hc_env_global(&env);
    if (rc != HCCL_SUCCESS)
        return rc;
    hc_ctx_family_t *f = calloc(1, sizeof(*f) + n * sizeof(f->ctx[0]));
    if (f == NULL) {
        HC_ERROR(HC_SUB_INIT, "cannot allocate %u contexts", n);
        return HCCL_E_MEMORY;
    }
    pthread_mutex_lock(&g_ctx_lock);
    for (f->n = 0; f->n < n && rc == HCCL_SUCCESS; f->n++) {
        rc = ctx_new(env, &f->ctx[f->n]);
        if (rc != HCCL_SUCCESS)
            break;
        f->ctx[f->n]->family = f;
    }
    if (rc != HCCL_SUCCESS) {
        for (uint32_t i = 0; i < f->n; i++)
            ctx_destroy(f->ctx[i]);
        free(f);
    } else {
        f->live = n;
        memcpy(ctxs, f->ctx, n * sizeof(f->ctx[0]));
    }
    pthread_mutex_unlock(&g_ctx_lock);
    return rc;
}

void hc_ctx_retain(hc_context_t *ctx)
{
    pthread_mutex_lock(&g_ctx_lock);
    ctx->refs++;
    pthread_mutex_unlock(&g_ctx_lock);
}

void hc_ctx_release(hc_context_t *ctx)
{
    pthread_mutex_lock(&g_ctx_lock);
    hc_ctx_family_t *f = ctx->family;
    if (--ctx->refs == 0 && f == NULL) {
        g_ctx = NULL;
        ctx_destroy(ctx);
        HC_INFO(HC_SUB_INIT, "process context destroyed");
    } else if (ctx->refs == 0 && --f->live == 0) {
        uint32_t n = f->n;
        for (uint32_t i = 0; i < n; i++)
            ctx_destroy(f->ctx[i]);
        free(f);
        HC_INFO(HC_SUB_INIT, "the %u contexts of HcclCommInitAll destroyed", n);
    }
    pthread_mutex_unlock(&g_ctx_lock);
}

uint32_t hc_ctx_add_peer(hc_context_t *ctx, const hc_card_t *card)
{
    for (uint32_t i = 0; i < ctx->npeers; i++) {
        hc_peer_t *p = ctx->peers[i];
        if (p->card.uid == card->uid) {
            uint32_t keep_rank = p->card.rank;
            p->card = *card;
            p->card.rank = keep_rank;
            return i;
        }
    }
    if (ctx->npeers == ctx->peers_cap) {
        uint32_t ncap = ctx->peers_cap ? ctx->peers_cap * 2 : 16;
        hc_peer_t **np = realloc(ctx->peers, ncap * sizeof(*np));
        if (np == NULL)
            return UINT32_MAX;
        ctx->peers = np;
        ctx->peers_cap = ncap;
    }
    hc_peer_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return UINT32_MAX;
    p->card = *card;
    /* Another host name on this kernel (a network namespace, a container):
     * UCX would reach it through shared memory or CMA, as it judges by the
     * machine; bytes between hosts must cross their network instead, and
     * both sides see the same names, so they decide alike. */
    if (strcmp(card->host, ctx->self.host) != 0 &&
        hc_topo_same_machine(card->topo, ctx->self.topo)) {
        if (ctx->worker_tcp != NULL && card->addr_tcp_len > 0)
            p->via_tcp = 1;
        else
            HC_WARN(HC_SUB_TRANSPORT, "process %s:%d is on another host of this machine but "
                    "%s has no TCP-only worker: their bytes may go through shared memory",
                    card->host, card->pid, ctx->worker_tcp ? "it" : "this process");
    }
    ctx->peers[ctx->npeers] = p;
    return ctx->npeers++;
}

ucp_ep_h hc_ctx_ep(hc_context_t *ctx, uint32_t peer, int *rc)
{
    hc_peer_t *p = ctx->peers[peer];
    if (p->failed) {
        *rc = p->failed;
        return NULL;
    }
    if (p->ep == NULL) {
        *rc = hc_ucx_ep_create(ctx, peer, &p->ep);
        if (*rc != HCCL_SUCCESS) {
            /* unreachable (its process gone: the connection refused, or
             * its host silent): failed from now on, as an endpoint error
             * would have marked it, so that every waiter and
             * HcclCommRemoveMember's agreement count it (src/features/
             * elastic.c); out of memory says nothing about the peer */
            if (*rc != HCCL_E_MEMORY)
                p->failed = *rc;
            return NULL;
        }
        ctx->n_eps_created++;
        __atomic_add_fetch(&g_eps, 1, __ATOMIC_RELAXED);
    }
    *rc = HCCL_SUCCESS;
    return p->ep;
}

int hc_peer_failed(hc_peer_t *p)
{
    if (p->failed == 0 || p->departed || p->lost_at == 0)
        return p->failed;
    if (hc_now_s() - p->lost_at < HC_BYE_GRACE_S)
        return 0;
    p->lost_at = 0;
    HC_ERROR(HC_SUB_TRANSPORT, "connection to process %s:%d failed: %s (no goodbye within "
             "%g s)", p->card.host, p->card.pid, p->lost_why ? p->lost_why : "?",
             HC_BYE_GRACE_S);
    return p->failed;
}

void hc_ctx_watch(hc_context_t *ctx, uint32_t peer)
{
    hc_peer_t *p = ctx->peers[peer];
    int rc;
    /* Only peers of this host: over shared memory keepalive is the only
     * thing that notices a death, so an endpoint is worth making. A peer on
     * another host is watched by the connections that exist (its death
     * resets them); a new one is not made just to watch it: UCX 1.13
     * connects over TCP with a blocking connect(), which to a host that
     * does not answer (its link down) returns only after the kernel's SYN
     * retries (127 s), and UCX_TCP_SYN_CNT, which would shorten that, makes
     * ucp_worker_create fail in UCX 1.13.1. */
    if (strncmp(p->card.host, ctx->self.host, sizeof(p->card.host)) != 0)
        return;
    if (p->failed == 0 && p->ep == NULL)
        (void)hc_ctx_ep(ctx, peer, &rc); /* marks it failed if it cannot be reached */
}

/* Scratch buffers carry their descriptor in a hidden 64-byte header (size
 * and free-list link), so taking and returning one never allocates. */
typedef hc_tmpbuf_t tmp_hdr_t;
#define TMP_HDR 64

HC_HOT void *hc_ctx_tmp_get(hc_context_t *ctx, size_t size, int *rc)
{
    *rc = HCCL_SUCCESS;
    if (size == 0)
        return NULL;
    pthread_mutex_lock(&ctx->lock);
    tmp_hdr_t **best = NULL;
    for (tmp_hdr_t **pp = &ctx->free_tmp; *pp; pp = &(*pp)->next)
        if ((*pp)->size - TMP_HDR >= size && (best == NULL || (*pp)->size < (*best)->size))
            best = pp;
    if (best) {
        tmp_hdr_t *h = *best;
        *best = h->next;
        pthread_mutex_unlock(&ctx->lock);
        return (char *)h + TMP_HDR;
    }
    pthread_mutex_unlock(&ctx->lock);
    /* Round up to 64 KiB; ask for huge pages from 2 MiB; pre-fault. */
    size_t total = ((size + TMP_HDR + 65535) / 65536) * 65536;
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        HC_ERROR(HC_SUB_INIT, "cannot map a %zu-byte scratch buffer: %m", total);
        *rc = HCCL_E_MEMORY;
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    if (total >= (2u << 20))
        madvise(m, total, MADV_HUGEPAGE);
#endif
    memset(m, 0, total); /* first touch now, not on the critical path */
    tmp_hdr_t *h = m;
    h->size = total;
    h->next = NULL;
    __atomic_add_fetch(&g_bufs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_bytes, total, __ATOMIC_RELAXED);
    pthread_mutex_lock(&ctx->lock);
    ctx->n_bufs_allocated++;
    ctx->bytes_allocated += total;
    pthread_mutex_unlock(&ctx->lock);
    HC_TRACE(HC_SUB_INIT, "scratch buffer of %zu bytes allocated", total);
    return (char *)m + TMP_HDR;
}

HC_HOT void hc_ctx_tmp_put(hc_context_t *ctx, void *ptr)
{
    if (ptr == NULL)
        return;
    tmp_hdr_t *h = (tmp_hdr_t *)((char *)ptr - TMP_HDR);
    pthread_mutex_lock(&ctx->lock);
    h->next = ctx->free_tmp;
    ctx->free_tmp = h;
    pthread_mutex_unlock(&ctx->lock);
}

int hc_ctx_progress(hc_context_t *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    int n = (int)hc_ctx_poll(ctx);
    pthread_mutex_unlock(&ctx->lock);
    return n;
}

void hc_ctx_counters(uint64_t *eps, uint64_t *bufs, uint64_t *bytes)
{
    if (eps)
        *eps = __atomic_load_n(&g_eps, __ATOMIC_RELAXED);
    if (bufs)
        *bufs = __atomic_load_n(&g_bufs, __ATOMIC_RELAXED);
    if (bytes)
        *bytes = __atomic_load_n(&g_bytes, __ATOMIC_RELAXED);
}
