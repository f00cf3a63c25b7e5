/*
 * src/comm/comm.h - communicators and running operations on them.
 *
 * A communicator is a light object over the process context: a rank map
 * into the address book (peer[]), a 20-bit id used in tags, an operation
 * sequence number, its effective configuration, its topology view, its
 * algorithm selection table and a cache of built schedules. Split, groups
 * and membership changes make new rank maps over the same address book.
 */
#ifndef HC_COMM_H_
#define HC_COMM_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <hccl/hccl.h>

#include "coll/coll.h"
#include "src/transport/context.h"
#include "src/base/env.h"
#include "src/exec/exec.h"
#include "schedcache.h"
#include "src/exec/trace.h"

struct hc_topo;
struct hc_tune;


typedef struct hc_comm {
    void *handle;             /* what the API gave out (src/base/handle.h) */
    hc_context_t *ctx;
    uint32_t rank, nranks;
    uint32_t *peer;           /* comm rank -> address-book index */
    hc_eps_t eps;             /* ctx and peer, for the UCX transport */
    uint32_t id;              /* tag id (20 bits) */
    int id_claimed;           /* id is in ctx->ids (released at destroy) */
    uint32_t seq;             /* collective sequence (< HC_TAG_CTRL_SEQ) */
    uint32_t *p2p_sent, *p2p_recvd; /* Send/Recv counters per peer */
    char name[COMM_NAME_MAX_LENGTH];
    /* Effective configuration (environment + HcclCommConfig), read-only and
     * shared with the communicators split from this one: a split copies no
     * 18 KB config (src/features/split.c). */
    const hc_config_t *cfg;
    struct hc_cfg_ref *cfg_ref;
    struct hc_topo *topo;
    hc_topo_view_t view;
    struct hc_tune *tune;
    hc_sched_entry_t *cache;  /* HC_SCHED_CACHE entries, allocated at first use */
    uint64_t use_clock;
    volatile int async_error; /* first asynchronous error */
    volatile int aborted;
    volatile int suspended;   /* HcclCommSuspend until HcclCommResume */
    double wait_limit_s;      /* > 0: a shorter deadline than HCCL_EXEC_TIMEOUT */
    double wait_scale;        /* > 1: HCCL_EXEC_TIMEOUT times this (HcclCommRemoveMember) */
    uint32_t remove_known;    /* > 0: HcclCommRemoveMember agrees over the members not
                               * among this many failed ones (hc_comm_wait stops it when
                               * one more fails) */
    uint64_t ops;             /* operations run (for logs) */
    /* bytes this rank sent to other nodes (docs/TOPOLOGY.md): by the last
     * collective that succeeded, and by all of them */
    uint64_t xnode_last, xnode_total;
    uint32_t epoch;           /* membership changes so far (src/features/elastic.c) */
    struct hc_elastic *el;    /* join state (open MPI port), NULL if none */
    /* stream state (src/sched/stream.h): cache lock, held sequence numbers;
     * allocated by the first stream operation, NULL until then */
    struct hc_comm_streams *streams;
    /* shared staging (src/comm/shm.h): state 0 = not set up yet (the first
     * operation does it), 1 = in use (shm != NULL), -1 = not available */
    int shm_state;
    struct hc_shm_comm *shm;
    /* the previous operation's selection: a repeat of it (same collective,
     * count, type, op, root, in-place) skips the selection and the cache
     * lookup in hc_op_begin; ent == NULL: none */
    struct {
        hc_sched_key_t key;
        hc_sched_entry_t *ent;
        const hc_algo_t *algo;
    } memo;
    /* registered buffers (src/features/window.h; HcclCommRegister), newest first */
    struct hc_win *wins;
} hc_comm_t;

/* The communicator of an HcclComm handle (src/base/handle.h): HCCL_SUCCESS and
 * *out set, or HCCL_E_PTR (NULL) / HCCL_E_PARA (destroyed or not a
 * communicator), logged with `fn`. Every entry point that takes an
 * HcclComm starts here. */
int hc_comm_get(HcclComm comm, const char *fn, hc_comm_t **out);

/* Build a communicator from the cards of all its ranks (cards[i] is rank
 * i's). Checks versions and settings agree; adds peers to the address book;
 * creates no endpoint. */
int hc_comm_create(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank,
                   uint32_t nranks, const hc_card_t *cards, uint32_t id,
                   const char *name, hc_comm_t **out);
void hc_comm_destroy(hc_comm_t *c);

/* A communicator over ranks the context already knows (split, groups):
 * peers[i] is rank i's address-book index. Shares parent's configuration
 * unless cfg is given (then copied). No exchange, no endpoint, no buffer. */
int hc_comm_create_map(hc_comm_t *parent, const hc_config_t *cfg, uint32_t rank,
                       uint32_t nranks, const uint32_t *peers, uint32_t id,
                       const char *name, hc_comm_t **out);
/* Membership change in place (src/features/elastic.c): new rank map and id; p2p
 * counters and sequence reset, schedule cache dropped, topology and tuning
 * rebuilt, abort and async error cleared. Nothing may be in flight. On
 * failure the communicator is unchanged. */
int hc_comm_rebuild(hc_comm_t *c, uint32_t rank, uint32_t nranks, const uint32_t *peers,
                    uint32_t id, int claimed);
/* Build the topology model and tuning table if not yet (a split's are
 * built at its first operation; hc_op_begin calls this). Thread-safe. */
int hc_comm_topo(hc_comm_t *c);
/* The communicator whose eps is the transport context of an executor
 * started with hc_ucx_tp. */
static inline hc_comm_t *hc_comm_of_eps(void *tp_ctx)
{
    return (hc_comm_t *)(void *)((char *)tp_ctx - offsetof(hc_comm_t, eps));
}
/* The address-book entry of comm rank r. */
static inline hc_peer_t *hc_comm_peer(const hc_comm_t *c, uint32_t r)
{
    return c->ctx->peers[c->peer[r]];
}


/* Merge the environment with an HcclCommConfig (config wins; checked by
 * hc_config_read). src/api/commconfig.c. */
int hc_comm_config(const hc_config_t *env, const HcclCommConfig *config, hc_config_t *out);
/* Check an HcclCommConfig from the caller and copy it into *out, HCCL's
 * current layout: its header (size, magic word, version) must be right; a
 * shorter (older) configuration is read up to its size, the later fields
 * left NOT_SET; every field must be in the range of its environment
 * variable. HCCL_E_PARA with a log line naming the field otherwise.
 * config NULL: *out is HcclCommConfigInit's. src/api/commconfig.c. */
int hc_config_read(const HcclCommConfig *config, HcclCommConfig *out);
/* The live communicators of the process, by name (HcclCommGetStatus). */
void hc_comm_registry_add(hc_comm_t *c);
void hc_comm_registry_remove(hc_comm_t *c);


/* Wait for several executors at once, with the communicator's deadline.
 * Returns the first error, or HCCL_SUCCESS when all are done. */
int hc_comm_wait(hc_comm_t *c, hc_exec_t *const *ex, uint32_t n, const char *what);

/* Tag sequence value reserved for membership control messages (the
 * agreements of src/features/split.c and src/features/elastic.c), beside HC_TAG_P2P_SEQ:
 * collectives cycle through the values below both. */
#define HC_TAG_CTRL_SEQ (HC_TAG_P2P_SEQ - 1)

/* Empty polls a waiter makes before it starts yielding the core (fewer
 * with more ranks on the host than cores); local: shared-staging polls
 * only, no transport progress. */
unsigned hc_comm_spin_polls(const hc_comm_t *c, int local);
/* More ranks on the communicator's hosts than CPUs online (every rank of
 * a host gives the same answer). */
int hc_comm_oversubscribed(const hc_comm_t *c);

/* Next collective sequence number (never HC_TAG_P2P_SEQ or HC_TAG_CTRL_SEQ). */
uint32_t hc_comm_next_seq(hc_comm_t *c);
/* The same, for an exchange that is not an hc_op_begin operation and uses
 * no shared staging (HcclCommSplit's): its begin turn (src/sched/stream.h) is
 * taken and given up at once, so the operations behind it do not wait for
 * a turn that never comes. */
uint32_t hc_comm_next_seq_begun(hc_comm_t *c);

/* Record an asynchronous error (first one wins). */
void hc_comm_set_error(hc_comm_t *c, int rc);

#endif /* HC_COMM_H_ */
