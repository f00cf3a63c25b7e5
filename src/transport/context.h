/*
 * src/transport/context.h - the process context: one per process, created with the
 * first communicator and destroyed with the last. HcclCommInitAll, which
 * puts several ranks in one process, gives each of them a context of its
 * own (a family, destroyed together when the last of its communicators
 * is), so that each rank is exactly what it would be in a process of its
 * own: its worker, address book and staging segment.
 *
 * It owns the UCX context and worker, the address book of every peer ever
 * seen (worker address, host, topology facts; endpoint created on first
 * use), the pool of scratch buffers (allocated once, pre-faulted, reused
 * by every communicator), and counters that tests read to prove that a
 * split creates no endpoint and no buffer.
 *
 * Threads: the worker is created SERIALIZED and every use of it (posting,
 * progress, endpoint creation) happens under ctx->lock, taken for one
 * progress iteration at a time, never across a wait: two blocking calls on
 * different communicators in different threads both make progress.
 */
#ifndef HC_CONTEXT_H_
#define HC_CONTEXT_H_

#include <pthread.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "src/base/env.h"
#include "transport.h"

#define HC_HOST_MAX 64
#define HC_ADDR_MAX 1536
#define HC_TOPO_BLOB 512
#define HC_RKEY_MAX 256
#define HC_ADDR_TCP_MAX 256

/* What each process tells the others at init (one fixed-size record, so
 * the MPI bootstrap is a single MPI_Allgather). Also carries the settings
 * that must agree across ranks, so a mismatch fails init on every rank. */
typedef struct hc_card {
    uint32_t magic;          /* HC_CARD_MAGIC */
    uint32_t version;        /* HCOMM_VERSION_CODE */
    uint32_t abi;            /* HC_ABI: layout of this record and the wire protocol */
    uint32_t rank;           /* rank in the communicator being built */
    int32_t status;          /* this rank's local init status: all fail together */
    uint64_t uid;            /* unique id of the process (its context) */
    uint32_t comm_id_proposal;
    uint32_t deterministic;  /* must agree */
    uint32_t check_args;     /* must agree */
    uint64_t buffsize;       /* must agree */
    char algos[256];         /* forced algorithms, canonical text; must agree */
    char host[HC_HOST_MAX];
    int32_t pid;
    uint32_t addr_len;
    uint8_t topo[HC_TOPO_BLOB]; /* topo/'s facts about this process (opaque here) */
    uint8_t addr[HC_ADDR_MAX];  /* UCX worker address */
    /* the shared staging segment (src/comm/shm.h); shm_size 0: none */
    uint64_t shm_base;          /* its address in this process (ucp_rkey_ptr's raddr) */
    uint64_t shm_size;
    uint32_t shm_rkey_len;
    uint8_t shm_rkey[HC_RKEY_MAX]; /* packed UCX remote key */
    /* the TCP-only worker for simulated hosts (topo/topo.h); len 0: none */
    uint32_t addr_tcp_len;
    uint8_t addr_tcp[HC_ADDR_TCP_MAX];
} hc_card_t;

#define HC_CARD_MAGIC 0x68636f6du /* "hcom" */
#define HC_ABI 3

typedef struct hc_peer {
    hc_card_t card;
    ucp_ep_h ep;        /* NULL until first use */
    int failed;         /* an error was seen on the endpoint (HCCL_E_*) */
    int departed;       /* it said goodbye: all its operations were done */
    /* a message from it arrived here over UCX: it holds an endpoint to this
     * process, so it is told goodbye too (hc_ucx_say_bye) */
    int heard;
    /* its connection failed with no goodbye yet (hc_peer_failed): when, and
     * UCX's reason; lost_at 0 once settled */
    double lost_at;
    const char *lost_why;
    /* its staging segment mapped here (src/comm/shm.c): 0 not tried, 1 mapped,
     * -1 unreachable */
    int shm_state;
    ucp_rkey_h shm_rkey;
    char *shm_ptr;
    /* on another host of this machine (another host name: a network
     * namespace, a container) or on another declared node of it (a
     * simulated cluster): its endpoint and our receives live on
     * ctx->worker_tcp */
    int via_tcp;
} hc_peer_t;

/* Header of a pooled scratch buffer (it lives in the buffer's mapping). */
typedef struct hc_tmpbuf {
    struct hc_tmpbuf *next;
    size_t size; /* of the whole mapping */
} hc_tmpbuf_t;

typedef struct hc_context {
    pthread_mutex_t lock;
    int refs;                   /* live communicators */
    const hc_config_t *env;     /* process-wide environment */
    ucp_context_h ucp;
    ucp_worker_h worker;
    /* the transport every executor of this context posts through (the UCX
     * one, src/transport/transport_ucx.c): named once, here */
    const hc_transport_ops_t *tp;
    size_t request_size;        /* ucp's request size (for our private slot) */
    hc_card_t self;             /* this process's card (rank, proposal unset) */
    hc_peer_t **peers;          /* the address book; entries never move */
    uint32_t npeers, peers_cap;
    uint32_t next_comm_id;      /* proposal for the next communicator id */
    /* ids of this process's live communicators, and ids an agreement in
     * flight has claimed (hc_ctx_claim_id): never two at once */
    uint32_t *ids;
    uint32_t nids, ids_cap;
    hc_tmpbuf_t *free_tmp;      /* scratch buffers not in use */
    /* counters (read by tests through hc_ctx_counters) */
    uint64_t n_eps_created, n_bufs_allocated, bytes_allocated;
    /* requests abandoned by a cancel that UCX has not completed yet */
    volatile int64_t n_detached;
    /* the shared staging segment and its allocator (src/comm/shm.c); NULL: none */
    struct hc_shm_ctx *shm;
    /* the progress thread and its queues (src/sched/stream.c), started with the
     * first stream operation; NULL until then */
    struct hc_engine *engine;
    /* Hosts that share a machine (host names of their own on one kernel:
     * network namespaces, containers, hcomm-cluster) and simulated clusters
     * (HCCL_TOPO_FILE declares several nodes): a second UCX context
     * restricted to TCP, so that traffic between hosts crosses their
     * network, while traffic inside a host keeps shared memory. UCX picks
     * transports per worker, not per endpoint, hence the second worker.
     * NULL: none. */
    ucp_context_h ucp_tcp;
    ucp_worker_h worker_tcp;
    /* the workers' event fds (src/exec/wait.h); wfd -1: none, waits yield */
    int wfd, wfd_tcp;
    /* HcclCommInitAll's contexts (hc_ctx_create_family); NULL for the
     * process context */
    struct hc_ctx_family *family;
    /* being destroyed: endpoint errors are expected (peers exit too) and
     * the address book is being freed, so the error callback ignores them */
    volatile int closing;
} hc_context_t;

/* A communicator's ranks as entries of the address book: the context the
 * UCX transport's operations take (hc_ucx_tp, src/transport/transport_ucx.h). */
typedef struct hc_eps {
    hc_context_t *ctx;
    const uint32_t *peer; /* rank -> address-book index */
} hc_eps_t;

/* Progress every worker of the context once (ctx->lock held): use this,
 * not ucp_worker_progress(ctx->worker), wherever hcomm drives UCX. */
static inline unsigned hc_ctx_poll(hc_context_t *ctx)
{
    unsigned n = ucp_worker_progress(ctx->worker);
    if (ctx->worker_tcp)
        n += ucp_worker_progress(ctx->worker_tcp);
    return n;
}
/* The worker that carries traffic with a peer (address-book index). */
static inline ucp_worker_h hc_ctx_worker_of(hc_context_t *ctx, uint32_t peer)
{
    return ctx->peers[peer]->via_tcp ? ctx->worker_tcp : ctx->worker;
}

/* Take a reference on the process context, creating it if needed. */
int hc_ctx_acquire(hc_context_t **ctx);
/* n contexts of their own (not the process context), one reference each,
 * for the n ranks of one HcclCommInitAll. A context of the family whose
 * references are gone stays (its siblings' messages may still reach it)
 * until every context of the family has none; then all are destroyed. */
int hc_ctx_create_family(uint32_t n, hc_context_t **ctxs);
/* One more reference on a context already held (a split's child). */
void hc_ctx_retain(hc_context_t *ctx);
/* Drop a reference; the last one destroys the context (for a family, the
 * last reference of the family destroys all of its contexts). */
void hc_ctx_release(hc_context_t *ctx);

/* Find a peer by uid or add it (ctx->lock held). Returns its index, or
 * UINT32_MAX without memory. A known peer's card is refreshed. */
uint32_t hc_ctx_add_peer(hc_context_t *ctx, const hc_card_t *card);
/* The endpoint to a peer, created on first use (ctx->lock held). NULL after
 * a failure, with *rc set; a peer it cannot be created to (unreachable,
 * not out of memory) is marked failed. */
ucp_ep_h hc_ctx_ep(hc_context_t *ctx, uint32_t peer, int *rc);
/* A peer's failure as its waiters act on it: HCCL_E_* or 0. A connection
 * that closes may be a peer that left: its goodbye can be processed just
 * after the close (another socket), so a failure with no goodbye counts
 * only HC_BYE_GRACE_S after the close (logged then, once). Departed peers
 * are failed too: callers tell them apart by p->departed. */
#define HC_BYE_GRACE_S 0.1
int hc_peer_failed(hc_peer_t *p);
/* Only an endpoint notices that a peer died (keepalive): create it if this
 * process has none yet; a peer it cannot be created to is marked failed
 * (ctx->lock held). */
void hc_ctx_watch(hc_context_t *ctx, uint32_t peer);

/* A scratch buffer of at least `size` bytes, pre-faulted, from the pool;
 * never fails for size 0 (returns NULL). */
void *hc_ctx_tmp_get(hc_context_t *ctx, size_t size, int *rc);
void hc_ctx_tmp_put(hc_context_t *ctx, void *ptr);

/* Drive the worker once (takes ctx->lock). */
int hc_ctx_progress(hc_context_t *ctx);

/* Counters for tests: endpoints created, buffers allocated, their bytes. */
void hc_ctx_counters(uint64_t *eps, uint64_t *bufs, uint64_t *bytes);

#endif /* HC_CONTEXT_H_ */
