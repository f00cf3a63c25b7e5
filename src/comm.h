/*
 * src/comm.h - communicators and running operations on them.
 *
 * A communicator is a light object over the process context: a rank map
 * into the address book (peer[]), a 20-bit id used in tags, an operation
 * sequence number, its effective configuration, its topology view, its
 * algorithm selection table and a cache of built schedules. Split, groups
 * and membership changes make new rank maps over the same address book.
 */
#ifndef HC_COMM_H_
#define HC_COMM_H_

#include <stdint.h>
#include <hccl/hccl.h>

#include "../coll/coll.h"
#include "context.h"
#include "env.h"
#include "exec.h"

struct hc_topo;
struct hc_tune;

#define HC_COMM_MAGIC 0x636f6d6du
#define HC_SCHED_CACHE 64

typedef struct hc_sched_key {
    uint8_t coll, algo, dtype, op, in_place, valid;
    uint32_t root;
    uint64_t count, chunk;
} hc_sched_key_t;

typedef struct hc_sched_entry {
    hc_sched_key_t key;
    hc_sched_t sched;
    void *ws;           /* executor workspace for this schedule */
    size_t ws_size;
    int busy;           /* in use by a running operation */
    uint64_t last_use;
} hc_sched_entry_t;

typedef struct hc_comm {
    uint32_t magic;
    hc_context_t *ctx;
    uint32_t rank, nranks;
    uint32_t *peer;           /* comm rank -> address-book index */
    uint32_t id;              /* tag id (20 bits) */
    uint32_t seq;             /* collective sequence (never HC_TAG_P2P_SEQ) */
    uint32_t *p2p_sent, *p2p_recvd; /* Send/Recv counters per peer */
    char name[COMM_NAME_MAX_LENGTH];
    hc_config_t cfg;          /* effective: environment + HcclCommConfig */
    struct hc_topo *topo;
    hc_topo_view_t view;
    struct hc_tune *tune;
    hc_sched_entry_t cache[HC_SCHED_CACHE];
    uint64_t use_clock;
    volatile int async_error; /* first asynchronous error */
    volatile int aborted;
    uint64_t ops;             /* operations run (for logs) */
} hc_comm_t;

/* Validate a handle: HCCL_SUCCESS, or HCCL_E_PTR / HCCL_E_PARA (logged). */
int hc_comm_check(const hc_comm_t *c, const char *fn);

/* Build a communicator from the cards of all its ranks (cards[i] is rank
 * i's). Checks versions and settings agree; adds peers to the address book;
 * creates no endpoint. */
int hc_comm_create(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank,
                   uint32_t nranks, const hc_card_t *cards, uint32_t id,
                   const char *name, hc_comm_t **out);
void hc_comm_destroy(hc_comm_t *c);

/* Fill this process's card for communicator rank `rank` (proposal for the
 * comm id included). */
void hc_comm_fill_card(hc_context_t *ctx, const hc_config_t *cfg, uint32_t rank,
                       hc_card_t *card);
/* The agreed id: max of the proposals; remembers it in the context. */
uint32_t hc_comm_agree_id(hc_context_t *ctx, const hc_card_t *cards, uint32_t n);

/* Merge the environment with an HcclCommConfig (config wins). */
int hc_comm_config(const hc_config_t *env, const HcclCommConfig *config, hc_config_t *out);

/* One operation, described for the runner. */
typedef struct hc_op {
    hc_coll_args_t args;
    void *send, *recv;
    const char *api;          /* "HcclAllReduce", for logs */
    HcclReduceOp user_op;     /* AVG is run as SUM then scaled */
} hc_op_t;

/* An operation between begin and end. */
typedef struct hc_running {
    hc_comm_t *c;
    hc_op_t op;
    hc_sched_entry_t *ent;
    hc_sched_entry_t local;   /* when the schedule is not cached */
    int use_local;
    void *tmp;
    hc_exec_t e;
} hc_running_t;

/* Select, build (or reuse) the schedule, take scratch, start the executor.
 * On failure everything is released. */
int hc_op_begin(hc_comm_t *c, const hc_op_t *op, hc_running_t *r);
/* Release what begin took; on success finish AVG. */
void hc_op_end(hc_running_t *r, int rc);
/* begin + wait + end (blocking, with the deadline). */
int hc_comm_run(hc_comm_t *c, const hc_op_t *op);

/* Wait for several executors at once, with the communicator's deadline.
 * Returns the first error, or HCCL_SUCCESS when all are done. */
int hc_comm_wait(hc_comm_t *c, hc_exec_t *const *ex, uint32_t n, const char *what);

/* Next collective sequence number. */
uint32_t hc_comm_next_seq(hc_comm_t *c);

/* Record an asynchronous error (first one wins). */
void hc_comm_set_error(hc_comm_t *c, int rc);

extern const hc_transport_ops_t hc_ucx_ops;

#endif /* HC_COMM_H_ */
